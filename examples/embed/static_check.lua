-- Run (after edit.lua) by host.c linked statically (nd's archives + libluajit-5.1.a, no
-- -rdynamic): nd's symbols are not exported, yet the FFI fast paths must be
-- on (nd hands the FFI a table of its function pointers) and agree with the
-- classic C API path.
local nd = require "nd"
assert(jit and jit.status(), "the JIT is on")
assert(nd.use_ffi(), "the FFI fast paths are off in a static host")
assert(not pcall(function() return require("ffi").C.nd_data end),
  "nd's symbols are exported: this host was not linked as intended")
local a, o = nd.arange(16):float():view(4, 4), nd.zeros(4, 4, "float32")
for _ = 1, 200 do nd.matmul(a, a, o) end -- hot enough to be compiled
local fast = o:clone()
nd.use_ffi(false)
nd.matmul(a, a, o)
assert(nd.equal(fast, o), "fast and classic paths disagree")
