-- Hostile use of the tensor object (issue 14, items 1-4): finalizers called
-- by hand, released tensors used again, foreign userdata given nd's
-- metatable. Each must raise an error naming the function, never crash,
-- on the C API paths and on the LuaJIT FFI paths alike.
local nd = require "nd"

local both = on_both_paths

describe("hostile use of tensors", function()
  local mt = debug.getregistry()["nd.Tensor"] -- nd.zeros(1) may be a cdata (lua/small.lua)

  it("__gc on a foreign userdata does nothing (io.stdout keeps working)", function()
    mt.__gc(io.stdout)
    mt.__gc(io.stderr)
    assert.is_true(io.type(io.stdout) == "file")
    local f = io.tmpfile()
    mt.__gc(f)
    assert.is_true(f:write("still a file") ~= nil)
    f:close()
    mt.__gc(42); mt.__gc(nil); mt.__gc({})
  end)

  it("__gc is idempotent; a finalized tensor raises naming the function", function()
    both(function()
      local t = nd.tensor({ 1, 2, 3 })
      mt.__gc(t)
      mt.__gc(t)
      local calls = { item = false, get = true, size = true, numel = false, totable = false,
        contiguous = false }
      for name, arg in pairs(calls) do
        assert_error_matches(function() return t[name](t, arg and 1 or nil) end, name, "released")
      end
      assert_error_matches(function() return t:set(1, 5) end, "set", "released")
      assert_error_matches(function() return t[1] end, "released")
      assert_error_matches(function() t[1] = 2 end, "released")
      assert_error_matches(function() return t + 1 end, "add", "released")
      if nd.cdata then
        assert_error_matches(function() return t:cdata() end, "cdata", "released")
      end
    end)
  end)

  it("matmul's cached plan never runs on a released out (or operand)", function()
    both(function()
      local a, b, o = nd.rand(4, 4), nd.rand(4, 4), nd.zeros(4, 4)
      nd.matmul(a, b, o)
      nd.matmul(a, b, o) -- plan cached
      mt.__gc(o)
      assert_error_matches(function() nd.matmul(a, b, o) end, "matmul", "released")
      local o2 = nd.zeros(4, 4)
      nd.matmul(a, b, o2)
      a:release()
      assert_error_matches(function() nd.matmul(a, b, o2) end, "matmul", "released")
    end)
  end)

  it("binary ops with out refuse released tensors", function()
    both(function()
      local a, b, o = nd.ones(3), nd.ones(3), nd.zeros(3)
      nd.add(a, b, o)
      o:release()
      assert_error_matches(function() nd.add(a, b, o) end, "add", "released")
      assert_error_matches(function() nd.mul(o, 2) end, "mul", "released")
    end)
  end)

  it("a foreign userdata with nd's metatable is not a tensor", function()
    both(function()
      local f = io.tmpfile()
      local file_mt = debug.getmetatable(f)
      debug.setmetatable(f, mt)
      assert_error_matches(function() return f:size() end, "size", "must be a tensor", "userdata")
      assert_error_matches(function() return f:get(1) end, "get", "must be a tensor")
      assert_error_matches(function() return f:item() end, "item", "must be a tensor")
      assert_error_matches(function() return f[1] end, "must be a tensor")
      assert_error_matches(function() f[1] = 1 end, "must be a tensor")
      assert_error_matches(function() return nd.matmul(f, f, f) end, "matmul", "must be a tensor")
      assert_error_matches(function() return nd.add(f, f, f) end, "add", "tensor")
      assert_error_matches(function() return tostring(f) end, "must be a tensor")
      assert_error_matches(function() return nd.layout(f) end, "layout", "must be a tensor")
      assert_error_matches(function() return f:release() end, "release", "must be a tensor")
      if nd.cdata then
        assert_error_matches(function() return nd.cdata(f) end, "cdata", "must be a tensor")
      end
      mt.__gc(f) -- not ours: nothing happens
      debug.setmetatable(f, file_mt)
      assert.equals("file", io.type(f))
      f:close()
    end)
  end)

  it("a tiny userdata with nd's metatable is never read past its end", function()
    if not newproxy then return end -- LuaJIT / 5.1: a zero-byte userdata
    both(function()
      local u = newproxy(false)
      debug.setmetatable(u, mt)
      assert_error_matches(function() return u:dim() end, "dim", "must be a tensor")
      assert_error_matches(function() return u:get(1) end, "get", "must be a tensor")
      mt.__gc(u)
    end)
  end)

  it("light userdata given nd's metatable are not tensors", function()
    local shared = nd.zeros(1000) -- charges the collector: a light userdata key in the registry
    local lu
    for k in pairs(debug.getregistry()) do
      -- a light userdata: no metatable, and not a full one (io.type, not indexable)
      if type(k) == "userdata" and debug.getmetatable(k) == nil and io.type(k) == nil then
        lu = k
        break
      end
    end
    assert.is_not_nil(lu)
    local old = debug.getmetatable(lu)
    debug.setmetatable(lu, mt)
    local ok, err = pcall(function()
      both(function()
        assert_error_matches(function() return lu:dim() end, "must be a tensor")
        assert_error_matches(function() return lu:get(1) end, "must be a tensor")
        assert_error_matches(function() return nd.add(lu, lu, lu) end, "tensor")
        mt.__gc(lu)
      end)
    end)
    debug.setmetatable(lu, old)
    assert(ok, err)
    assert.equals(1000, shared:numel())
  end)

  it("a foreign userdata given the generator metatable is not a generator", function()
    local gmt = getmetatable(nd.generator(1))
    local f = io.tmpfile()
    local old = debug.getmetatable(f)
    debug.setmetatable(f, gmt)
    local ok, err = pcall(function()
      assert_error_matches(function() return f:rand(3) end, "rand", "must be a generator")
      assert_error_matches(function() return nd.zeros(3):uniform_(0, 1, f) end, "generator")
    end)
    debug.setmetatable(f, old)
    f:close()
    assert(ok, err)
    assert.equals(3, nd.generator(1):rand(3):numel())
  end)

  it("matmul of a size-1 dim whose stride is -2^63 (found by libFuzzer)", function()
    -- such a stride is never stepped; deriving a byte stride from it was
    -- signed overflow (UBSan) in the executor
    local a = nd.arange(4):float():as_strided({ 1, 4 }, { -2 ^ 63, 1 }, 0)
    local b = nd.ones(4, 1, "float32"):as_strided({ 4, 1 }, { 1, -2 ^ 63 }, 0)
    assert.same({ { 6 } }, nd.matmul(a, b):totable())
    local o = nd.zeros(1, 1, "float32"):as_strided({ 1, 1 }, { -2 ^ 63, -2 ^ 63 }, 0)
    nd.matmul(a, b, o)
    assert.equals(6, o:item())
    assert.same({ { 6 } }, nd.matmul(a:int(), b:int()):totable())
    -- an empty operand may carry any strides (nothing is reachable)
    local e = nd.zeros(4, "float32"):as_strided({ 0, 4 }, { 1, 2 ^ 61 }, 0)
    assert.same({ 0, 1 }, nd.matmul(e, nd.ones(4, 1, "float32")):size())
  end)

  it("unfold of an expanded tensor whose window count overflows (found by libFuzzer)", function()
    assert_error_matches(function() return nd.zeros(1):expand(2 ^ 40):unfold(1, 2 ^ 30, 1) end,
      "unfold:", "too many elements")
    local ok = nd.zeros(1):expand(2 ^ 20):unfold(1, 4, 1)
    assert.same({ 2 ^ 20 - 3, 4 }, ok:size())
  end)
end)

