-- One element at a time from LuaJIT (the FFI path of lua/elements.lua)
-- against NumPy's scalar indexing, per call, in the same run.
local lib = require "lib"
local nd = require "nd"

local m = nd.rand(10, 10)
local sink = 0
local t = lib.interleave({
  get = function() sink = sink + m:get(3, 4) end,
  set = function() m:set(3, 4, 1.5) end,
  index = function() sink = sink + m[{ 3, 4 }] end,
  row = function() sink = sink + m[3][4] end,
})
local np_get = lib.numpy("a = np.random.rand(10, 10)", "a[2, 3]")
local np_set = lib.numpy("a = np.random.rand(10, 10)", "a[2, 3] = 1.5")
lib.row("m:get(3, 4) float64", t.get, "NumPy a[2, 3]", np_get)
lib.row("m:set(3, 4, 1.5)", t.set, "NumPy a[2, 3] = 1.5", np_set)
lib.row("m[{3, 4}] (builds a table)", t.index, "NumPy a[2, 3]", np_get)
lib.row("m[3][4] (a row view, then an element)", t.row, "NumPy a[2][3]",
  lib.numpy("a = np.random.rand(10, 10)", "a[2][3]"))
