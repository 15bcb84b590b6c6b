-- require "nd.testing": assert.tensor_equal and assert.allclose for users'
-- own specs, and the messages they fail with.
local nd = require "nd"
local testing = require "nd.testing"
local unpack = unpack or table.unpack

local function failure(f)
  local ok, msg = pcall(f)
  assert.is_false(ok, "expected the assertion to fail")
  return tostring(msg)
end

describe("nd.testing", function()
  it("is the same module whether required before or after nd", function()
    assert.equals(testing, require "nd.testing")
    assert.is_function(testing.tensor_equal)
  end)

  describe("assert.tensor_equal", function()
    it("passes on equal shape, dtype and values, NaN equal to NaN", function()
      assert.tensor_equal(nd.tensor({ { 1, 0 / 0 }, { 3, 4 } }), nd.tensor({ { 1, 0 / 0 }, { 3, 4 } }))
      assert.tensor_equal(nd.arange(6):view(2, 3):t(), nd.arange(6):view(2, 3):t():contiguous())
      assert.tensor_equal({ 1, 2 }, nd.tensor({ 1, 2 }, "int32")) -- a table takes the other's dtype
      assert.tensor_equal(nd.zeros(0, 3), nd.zeros(0, 3))
      assert.is_not.tensor_equal(nd.ones(2), nd.zeros(2))
    end)
    it("fails on different values, naming the positions and both values", function()
      local msg = failure(function()
        assert.tensor_equal(nd.arange(12):view(3, 4), nd.arange(12):view(3, 4):mul(2))
      end)
      for _, frag in ipairs { "Expected tensors to be equal", "size {3, 4} (int64)",
        "11 of 12 elements differ, the first 5:", "at [1, 2]: expected 1, got 2",
        "at [2, 2]: expected 5, got 10" } do
        assert.truthy(msg:find(frag, 1, true), ("%q not in %s"):format(frag, msg))
      end
      assert.falsy(msg:find("at [2, 3]", 1, true), msg) -- only the first five
    end)
    it("fails on different shapes or dtypes, showing both", function()
      local msg = failure(function() assert.tensor_equal(nd.zeros(2, 3), nd.zeros(3, 2)) end)
      assert.truthy(msg:find("expected: float64 tensor of size {2, 3}", 1, true), msg)
      assert.truthy(msg:find("got:      float64 tensor of size {3, 2}", 1, true), msg)
      msg = failure(function() assert.tensor_equal(nd.zeros(2), nd.zeros(2, "float32")) end)
      assert.truthy(msg:find("float32 tensor of size {2}", 1, true), msg)
      failure(function() assert.tensor_equal(nd.tensor({ 0 / 0 }), nd.tensor({ 1 })) end)
      failure(function() assert.is_not.tensor_equal(nd.ones(2), nd.ones(2)) end)
    end)
  end)

  describe("assert.allclose", function()
    it("passes within rtol and atol (defaults 1e-5, 1e-8), any dtypes", function()
      assert.allclose(nd.ones(2, 3), nd.ones(2, 3):add(1e-7))
      assert.allclose(nd.tensor({ 1, 2 }), nd.tensor({ 1.05, 2 }), 0.1)
      assert.allclose(nd.tensor({ 0 }), nd.tensor({ 1e-3 }), 0, 1e-2)
      assert.allclose(nd.tensor({ 1, 2 }, "int32"), nd.tensor({ 1, 2 }, "float32"))
      assert.allclose(nd.tensor({ math.huge }), nd.tensor({ math.huge }))
    end)
    it("fails beyond them, naming the tolerances, positions and values", function()
      local msg = failure(function()
        assert.allclose(nd.tensor({ { 1, 2 }, { 3, 4 } }), nd.tensor({ { 1, 2.1 }, { 3, 4 } }))
      end)
      for _, frag in ipairs { "Expected tensors to be close", "1 of 4 elements differ beyond rtol 1e-05, atol 1e-08",
        "at [1, 2]: expected 2, got 2.1" } do
        assert.truthy(msg:find(frag, 1, true), ("%q not in %s"):format(frag, msg))
      end
      failure(function() assert.allclose(nd.ones(3), nd.ones(2)) end)
      failure(function() assert.allclose(nd.tensor({ 1 }), nd.tensor({ 1.05 }), 0.01) end)
    end)
    it("counts NaN in the same place as equal, as numpy.testing.assert_allclose", function()
      local a = nd.tensor({ { 1, 2 }, { 3, 0 / 0 } })
      assert.allclose(a:to("float32"), a)
      assert.allclose(a, a, 0, 0)
      assert.allclose(a, a, { equal_nan = true })
      assert.is_not.allclose(a, nd.tensor({ { 1, 2 }, { 0 / 0, 4 } }))
      local msg = failure(function() assert.allclose(a, nd.tensor({ { 1, 2 }, { 3, 4 } })) end)
      assert.truthy(msg:find("at [2, 2]: expected nan, got 4", 1, true), msg)
      msg = failure(function() assert.allclose(nd.tensor({ 1 }), nd.tensor({ 0 / 0 })) end)
      assert.truthy(msg:find("at [1]: expected 1, got nan", 1, true), msg)
    end)
    it("with equal_nan = false, fails on NaN and says why the two NaN differ", function()
      local a = nd.tensor({ { 1, 2 }, { 3, 0 / 0 } })
      for _, args in ipairs { { { equal_nan = false } }, { 1e-5, { equal_nan = false } },
        { 1e-5, 1e-8, { equal_nan = false } }, { nil, nil, { equal_nan = false } } } do
        local msg = failure(function() assert.allclose(a:to("float32"), a, unpack(args, 1, 3)) end)
        for _, frag in ipairs { "1 of 4 elements differ beyond rtol 1e-05, atol 1e-08, equal_nan = false",
          "at [2, 2]: expected nan, got nan: NaN is not equal to NaN (equal_nan = false)" } do
          assert.truthy(msg:find(frag, 1, true), ("%q not in %s"):format(frag, msg))
        end
      end
      assert.is_not.allclose(a, a, { equal_nan = false })
    end)
    it("takes rtol and atol in the options table too, and rejects unknown options", function()
      assert.allclose(nd.tensor({ 1, 0 / 0 }), nd.tensor({ 1.05, 0 / 0 }), { rtol = 0.1 })
      assert.allclose(nd.tensor({ 0 }), nd.tensor({ 1e-3 }), { atol = 1e-2 })
      assert.is_not.allclose(nd.tensor({ 0 }), nd.tensor({ 1e-3 }), { atol = 1e-4 })
      assert_error_matches(function() assert.allclose(nd.ones(2), nd.ones(2), { equalnan = false }) end,
        "assert.allclose: unknown option equalnan", "equal_nan")
      assert_error_matches(function() assert.allclose(nd.ones(2), nd.ones(2), { equal_nan = 0 }) end,
        "assert.allclose: option equal_nan must be a boolean, got number")
      assert_error_matches(function() assert.allclose(nd.ones(2), nd.ones(2), "x") end,
        "assert.allclose: argument 3 must be a number or the options table, got string")
      assert_error_matches(function() assert.allclose(nd.ones(2), nd.ones(2), -1) end,
        "assert.allclose: rtol -1", "non-negative")
    end)
    it("treats -0 and 0 as equal, and prints them apart", function()
      assert.allclose(nd.tensor({ -0.0 }), nd.tensor({ 0 }), 0, 0)
      assert.tensor_equal(nd.tensor({ -0.0 }), nd.tensor({ 0.0 }))
      local msg = failure(function() assert.allclose(nd.tensor({ -0.0, 1 }), nd.tensor({ 0, 2 }), 0, 0) end)
      assert.truthy(msg:find("1 of 2 elements differ", 1, true), msg)
    end)
  end)

  describe("a mismatch whose values print alike", function()
    it("is found in the tensors' own dtype and says why", function()
      -- 2^53 and 2^53 + 1 are one Lua number under LuaJIT's and Lua 5.1/5.2's
      -- doubles; the int64 elements differ
      local a = nd.tensor({ 2 ^ 53, 1 }, "int64")
      local b = a:add(nd.tensor({ 1, 0 }, "int64"))
      local msg = failure(function() assert.tensor_equal(a, b) end)
      local e, g, rest = msg:match("at %[1%]: expected (%S+), got (%S+)([^\n]*)")
      assert.truthy(e, msg)
      assert.truthy(e ~= g or rest == ": int64 values alike as Lua numbers; got - expected = 1", msg)
      assert.equals(e, "9007199254740992")
      assert.falsy(msg:find("at [2]", 1, true), msg)
    end)
  end)

  describe("nd.allclose and nd.isclose (NumPy's np.allclose, np.isclose)", function()
    it("never count NaN as close, unless isclose is given equal_nan", function()
      local a = nd.tensor({ 1, 0 / 0 })
      assert.is_false(nd.allclose(a, a))
      assert.tensor_equal({ true, false }, nd.isclose(a, a))
      assert.tensor_equal({ true, true }, nd.isclose(a, a, 1e-5, 1e-8, true))
    end)
  end)

  it("offers the checks as plain functions too", function()
    local ok, report = testing.tensor_equal(nd.tensor({ 1, 2 }), nd.tensor({ 1, 3 }))
    assert.is_false(ok)
    assert.truthy(report:find("at [2]: expected 2, got 3", 1, true))
    assert.is_true((testing.allclose(nd.tensor({ 1 }), nd.tensor({ 1 }))))
  end)
end)
