-- The LuaJIT FFI fast paths: nd.use_ffi, JIT off (-joff, jit.off()), hot
-- reload and a host's own FFI declarations. Results are identical either
-- way. Skipped outside LuaJIT (nd.use_ffi() is then always false).
local nd = require "nd"

local function run_child(flags, src)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(src)
  f:close()
  local p = assert(io.popen("luajit " .. flags .. " " .. path .. " 2>&1; echo rc=$?"))
  local out = p:read("*a")
  p:close()
  os.remove(path)
  return out
end

describe("FFI fast paths", function()
  if not jit then
    it("are off outside LuaJIT", function() assert.is_false(nd.use_ffi()) end)
    return
  end

  after_each(function() nd.use_ffi(true) end)
  local jit_on = jit.status() -- `make check-joff` runs this suite with -joff

  it("nd.use_ffi switches them; every result is identical", function()
    assert.equals(jit_on, nd.use_ffi())
    local function work()
      local r = {}
      local m = nd.arange(12, "float64"):reshape(3, 4)
      local big = nd.tensor({ 1, 2 }, "int64")
      big[1] = 2 ^ 60 + 0 -- exact in a double
      r[#r + 1] = tostring(big:get(1)); r[#r + 1] = tostring(big[1]); r[#r + 1] = tostring(big:narrow(1, 1, 1):item())
      local I = require("ffi").typeof("int64_t")
      local v = nd.zeros(2, "int64"); v:set(1, I(2 ^ 62) + 1); v[2] = I(7)
      r[#r + 1] = tostring(v:get(1)); r[#r + 1] = tostring(v[2])
      r[#r + 1] = m:get(2, 3); r[#r + 1] = m[{ 3, 4 }]; m:set(1, 1, 9); r[#r + 1] = m[1][1]
      m[{ 2, 4 }] = -3; r[#r + 1] = m:get(2, 4) -- a table selecting every dim: one element
      local w = nd.zeros(2, 3, "int32")
      w[{ 2, 3 }] = 7; r[#r + 1] = w:get(2, 3)
      for _, v in ipairs({ 2.5, 2 ^ 40, true, "x" }) do -- C's conversion rules, or its error
        local ok, err = pcall(function() w[{ 1, 1 }] = v end)
        r[#r + 1] = ok and w:get(1, 1) or tostring(err):match("newindex:.*")
      end
      local flags = nd.zeros(2, 2, "bool")
      flags[{ 1, 2 }] = true; r[#r + 1] = flags:get(1, 2)
      local wide = nd.zeros(1, 3):expand(2, 3) -- one element, shared by both rows
      wide[{ 1, 1 }] = 5; r[#r + 1] = wide:get(2, 1)
      local a, b, o = nd.rand(4, 4), nd.rand(4, 4), nd.zeros(4, 4)
      nd.matmul(a, b, o)
      r[#r + 1] = nd.equal(o, nd.matmul(a, b))
      local x, y, z = nd.ones(3), nd.arange(3, "float64"), nd.zeros(3)
      nd.add(x, y, z); r[#r + 1] = z:sum()
      nd.mul(x, 2, z); r[#r + 1] = z:sum()
      nd.sub(10, y, z); r[#r + 1] = z:sum()
      local f32 = nd.zeros(3, "float32")
      nd.mul(nd.ones(3, "float32"), 0.016, f32); r[#r + 1] = f32:get(1)
      local i32 = nd.zeros(3, "int32")
      nd.add(nd.ones(3, "int32"), 2 ^ 40, i32); r[#r + 1] = i32:get(1) -- wraps as C does
      r[#r + 1] = select(2, pcall(nd.mul, i32, 2.5, i32)):match("mul:.*")
      local ok, err = pcall(nd.add, x, y, nd.zeros(4))
      r[#r + 1] = ok; r[#r + 1] = err:match("add:.*")
      return r
    end
    local on = work()
    assert.is_false(nd.use_ffi(false))
    local off = work()
    assert.equals(jit_on, nd.use_ffi(true))
    assert.same(on, off)
    assert.equals("1152921504606846976LL", on[1])
    assert.equals("4611686018427387905LL", on[4])
  end)

  it("are off under luajit -joff, and with jit.off() after loading nd", function()
    local out = run_child("-joff", [[
      local nd = require "nd"
      assert(nd.use_ffi() == false, "FFI paths on with -joff")
      assert(nd.use_ffi(true) == false, "use_ffi(true) cannot turn them on without the JIT")
      local a, b, o = nd.rand(4, 4), nd.rand(4, 4), nd.zeros(4, 4)
      nd.matmul(a, b, o)
      assert(nd.equal(o, nd.matmul(a, b)))
      assert(o:get(1, 1) == o[1][1])
      jit.on()
      assert(nd.use_ffi() == true, "jit.on() turns them back on")
      jit.off()
      assert(nd.use_ffi() == false, "jit.off() turns them off")
      print("ok")
    ]])
    assert.is_truthy(out:find("ok\nrc=0", 1, true), out)
    out = run_child("", [[
      local nd = require "nd"
      assert(nd.use_ffi() == true)
      jit.off()
      assert(nd.use_ffi() == false)
      local f = function() return 1 end
      jit.off(f) -- per-function forms pass through
      jit.on(f)
      assert(nd.use_ffi() == false)
      print("ok")
    ]])
    assert.is_truthy(out:find("ok\nrc=0", 1, true), out)
  end)

  it("survive hot reload and a host's own nd_err declaration", function()
    local ffi = require "ffi"
    pcall(ffi.cdef, "typedef struct nd_err { int mine; } nd_err;")
    local old = nd.ones(2, 2)
    package.loaded.nd = nil
    local nd2 = require "nd"
    assert.are_not.equal(nd, nd2)
    assert.equals(jit_on, nd2.use_ffi())
    local o = nd2.zeros(2, 2)
    nd2.matmul(old, old, o)
    assert.same({ { 2, 2 }, { 2, 2 } }, o:totable())
    assert.equals(1, old:get(1, 1))
    package.loaded.nd = nd -- the rest of the suite keeps the first module
  end)

  it("bind through the module's function table (no -rdynamic needed)", function()
    -- require loads nd.so RTLD_LOCAL: its symbols are not global (as in a
    -- static host without -rdynamic), yet the fast paths are on.
    local out = run_child("", [[
      local ffi = require "ffi"
      local nd = require "nd"
      assert(not pcall(function() return ffi.C.nd_data end), "nd's symbols are global")
      assert(nd.use_ffi(), "the FFI paths are off")
      local a, o = nd.ones(2, 2), nd.zeros(2, 2)
      assert(nd.matmul(a, a, o) == o and o:get(1, 1) == 2)
      print("ok")
    ]])
    assert.is_truthy(out:find("ok", 1, true), out)
  end)
end)
