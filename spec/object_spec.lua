-- One tensor object per Lua runtime (docs/ref-embedding.md, "The tensor
-- object"): whatever made it -- a constructor, a view, a small or a big
-- result, the C binding or a LuaJIT fast path, JIT on or off -- every
-- tensor has the same type(), the same metatable and the same methods.
local nd = require "nd"
require "nd.testing"

local function kinds()
  local m = nd.arange(12, "float64"):view(3, 4)
  local big = nd.zeros(100, 100)
  local ffi_ok, ffi = pcall(require, "ffi")
  local buf = ffi_ok and ffi.new("float[4]") or nil
  local list = {
    { "small float64 vec3", nd.zeros(3) },
    { "float64 vec3 sum", nd.ones(3) + nd.ones(3) },
    { "int32 vec3 sum", nd.ones(3, "int32") + nd.ones(3, "int32") },
    { "5x5", nd.zeros(5, 5) },
    { "big", big },
    { "t() of a big tensor", big:t() },
    { "narrow", m:narrow(2, 2, 2) },
    { "row", m[2] },
    { "permute (C)", m:permute(2, 1) },
    { "as_strided (C)", m:as_strided({ 2, 2 }, { 1, 4 }) },
    { "view of a small tensor", nd.zeros(2, 2):t() },
    { "view of a view", m:t():narrow(1, 1, 2):select(2, 1) },
    { "matmul", nd.matmul(m, m:t()) },
    { "clone", m:clone() },
    { "sum over a dim", m:sum(1) },
    { "0-d", nd.tensor(3) },
    { "linalg", nd.linalg.inv(nd.eye(3)) },
    { "rand", nd.rand(2) },
  }
  if buf then list[#list + 1] = { "wrap", nd.wrap(buf, 16, "float32", { 4 }) } end
  return list
end

describe("the tensor object", function()
  it("is one type, one metatable and one method table, whatever made it", function()
    local modes = { true }
    if jit and nd.use_ffi() then modes[2] = false end -- the C binding alone too
    for _, fast in ipairs(modes) do
      nd.use_ffi(fast)
      local one = nd.zeros(1)
      for _, k in ipairs(kinds()) do
        local name, t = k[1], k[2]
        assert.equals(type(one), type(t), name)
        assert.equals(getmetatable(one), getmetatable(t), name)
        assert.is_true(nd.is_tensor(t), name)
        assert.equals(one.sum, t.sum, name)
        assert.equals(one.numel, t.numel, name)
      end
      nd.use_ffi(true)
    end
  end)

  it("is userdata without LuaJIT's FFI and cdata with it", function()
    local ok = jit and pcall(require, "ffi")
    assert.equals(ok and "cdata" or "userdata", type(nd.zeros(2, 2)))
  end)

  it("a released tensor is still a tensor, and says so", function()
    for _, k in ipairs(kinds()) do
      local name, t = k[1], k[2]
      t:release()
      assert.is_true(nd.is_tensor(t), name)
      assert_error_matches(function() return t:sum() end, "sum", "released")
    end
  end)

  it("refuses copies and empty objects of its type made through the FFI", function()
    if not (jit and pcall(require, "ffi")) then return end
    local ffi = require "ffi"
    local t = nd.arange(6):view(2, 3)
    local T = ffi.typeof(t)
    assert.is_false(pcall(ffi.new, T, t)) -- a struct copy: refused by the FFI
    assert.is_false(pcall(ffi.new, T, 0, t))
    local empty = ffi.new(T, 0) -- an empty one is harmless: not a tensor
    assert.is_false(nd.is_tensor(empty))
    assert_error_matches(function() return nd.sum(empty) end, "sum", "must be a tensor", "cdata")
    assert_error_matches(function() return nd.add(empty, 1) end, "add", "must be a tensor")
    assert_error_matches(function() return nd.clone(empty) end, "clone", "must be a tensor")
    -- a forged copy (fields copied by hand) points at another header: not a tensor
    local forged = ffi.new(T, 0)
    ffi.copy(forged, t, ffi.sizeof(forged))
    assert.is_false(nd.is_tensor(forged))
    assert_error_matches(function() return forged:numel() end, "numel", "must be a tensor")
    assert.same({ { 0, 1, 2 }, { 3, 4, 5 } }, t:totable())
    collectgarbage(); collectgarbage()
    assert.same({ { 0, 1, 2 }, { 3, 4, 5 } }, t:totable())
  end)

  it("keeps its elements alive through every view, collected in any order", function()
    local views = {}
    do
      local owners = { nd.arange(300):view(30, 10), nd.arange(6):view(2, 3) }
      for i, o in ipairs(owners) do
        views[#views + 1] = o:t()
        views[#views + 1] = o:permute(2, 1)[1]
        views[#views + 1] = o[{ {}, 2 }]
        owners[i] = nil
      end
    end
    for _ = 1, 3 do collectgarbage() end
    assert.equals(300 * 299 / 2, views[1]:sum())
    assert.same({ 0, 10, 20 }, { views[2][1], views[2][2], views[2][3] })
    assert.same({ 1, 4 }, views[6]:totable())
  end)

  it("remembers a tensor is writable per object: an expanded view still refuses writes", function()
    local t = nd.zeros(3)
    for _ = 1, 3 do t:set(2, 5); t[3] = 6 end -- marked writable
    local e = t:expand(2, 3)
    for _ = 1, 3 do
      assert_error_matches(function() e:set(1, 1, 5) end, "set", "single memory location")
    end
    local row = t:view(1, 3)
    row[{ 1, 1 }] = 4
    assert.same({ 4, 5, 6 }, t:totable())
  end)
end)
