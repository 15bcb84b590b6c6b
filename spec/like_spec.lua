-- zeros_like, ones_like, empty_like, full_like: t's shape and (by default)
-- dtype, row-major, whatever t's layout; errors name the _like function.
local nd = require "nd"

describe("*_like constructors", function()
  local dtypes = { "float32", "float64", "int32", "int64", "uint8", "bool" }

  it("take the shape and dtype of t, row-major", function()
    for _, dt in ipairs(dtypes) do
      local t = nd.zeros(4, 3, 2, dt):permute(3, 1, 2) -- {2,4,3}, not contiguous
      for _, r in ipairs({ t:zeros_like(), t:ones_like(), t:empty_like(),
        t:full_like(dt == "bool" and true or 3) }) do
        assert.equals(dt, r:dtype())
        assert.same({ 2, 4, 3 }, plain(r:size()))
        assert.same({ 12, 3, 1 }, plain(r:stride()))
        assert.is_false(nd.same_storage(r, t))
      end
    end
  end)

  it("fill with the right values", function()
    local t = nd.zeros(2, 3, "int32")
    assert.same({ { 0, 0, 0 }, { 0, 0, 0 } }, nd.zeros_like(nd.ones(2, 3)):totable())
    assert.same({ { 1, 1, 1 }, { 1, 1, 1 } }, nd.ones_like(t):totable())
    assert.same({ { 7, 7, 7 }, { 7, 7, 7 } }, nd.full_like(t, 7):totable())
    assert.same({ true, true }, nd.ones_like(nd.zeros(2, "bool")):totable())
    assert.equals(2 ^ 53 + 2, nd.full_like(nd.zeros(1, "int64"), 2 ^ 53 + 2):totable()[1])
  end)

  it("take a dtype", function()
    local t = nd.zeros(2, 2, "int32")
    assert.equals("float32", t:zeros_like("float32"):dtype())
    assert.equals("bool", t:ones_like("bool"):dtype())
    assert.equals("uint8", t:empty_like("uint8"):dtype())
    local f = t:full_like(2.5, "float64")
    assert.equals("float64", f:dtype())
    assert.equals(2.5, f[{ 1, 1 }])
  end)

  it("handle 0-d, size-0 and expanded tensors", function()
    assert.equals(0, nd.tensor(3.5):zeros_like():dim())
    assert.same({ 0, 3 }, plain(nd.zeros(0, 3):ones_like():size()))
    local e = nd.ones(1, 3):expand(4, 3):full_like(2)
    assert.same({ 3, 1 }, plain(e:stride()))
    e[{ 1, 1 }] = 5
    assert.equals(2, e[{ 2, 1 }])
  end)

  it("raise errors naming themselves", function()
    assert_error_matches(function() nd.zeros_like(3) end, "zeros_like", "tensor")
    assert_error_matches(function() nd.ones_like(nd.zeros(2), "complex") end, "ones_like", "complex")
    assert_error_matches(function() nd.empty_like(nil) end, "empty_like", "nil")
    assert_error_matches(function() nd.full_like(nd.zeros(2), "x") end, "full_like", "value")
  end)
end)
