-- Error messages a user can act on, and two correctness fixes found by
-- trying nd as a newcomer (issue 8, items 7 and 8).
local nd = require "nd"
local err = assert_error_matches
require "nd.testing" -- assert.tensor_equal, assert.allclose

describe("out-of-range positions", function()
  local a = nd.zeros(2, 2)
  it("say the valid positions, never a range that suggests 0", function()
    for _, c in ipairs {
      { function() return a:sum(3) end, "sum: dim 3 out of range (valid: 1..2 or -2..-1)" },
      { function() return a:transpose(1, -3) end, "transpose: dim -3 out of range (valid: 1..2 or -2..-1)" },
      { function() return a:select(3, 1) end, "select: dim 3 out of range (valid: 1..2 or -2..-1)" },
      { function() return a:select(1, 3) end, "select: index 3 out of range (valid: 1..2 or -2..-1)" },
      { function() return a[3] end, "index 3 out of range (valid: 1..2 or -2..-1)" },
      { function() return a:unsqueeze(4) end, "unsqueeze: dim 4 out of range (valid: 1..3 or -3..-1)" },
      { function() return nd.cat({ a, a }, 3) end, "cat: dim 3 out of range (valid: 1..2 or -2..-1)" },
      { function() return a:get(3, 1) end, "(valid: 1..2 or -2..-1)" },
    } do
      local msg = err(c[1], c[2])
      assert.is_nil(msg:find("[-2, 2]", 1, true), msg)
    end
  end)
end)

describe("comparison operators on tensors", function()
  local a, b = nd.tensor({ 1, 2 }), nd.tensor({ 2, 1 })
  it("< and <= raise an nd error pointing at lt / le", function()
    err(function() return a < b end, "<:", "a:lt(b)")
    err(function() return a <= b end, "<=:", "a:le(b)")
    err(function() return a > b end, "a:lt(b)") -- a > b is b < a
  end)
  -- Under LuaJIT and Lua 5.1 a comparison with a number never reaches a
  -- metamethod (Lua's own error); on 5.3/5.4 it does.
  local v = tonumber(_VERSION:match("%d+%.%d+"))
  if not jit and v >= 5.3 then
    it("t < 0 says the same on Lua 5.3+", function()
      err(function() return a < 0 end, "a:lt(b)")
    end)
  end
  it("the elementwise forms work", function()
    assert.tensor_equal(nd.tensor({ true, false }), a:lt(b))
    assert.tensor_equal(nd.tensor({ true, false }), a:le(1))
  end)
end)

describe("misuse hints", function()
  local a = nd.tensor({ 1, 5 })
  it("min/max with a tensor as the dim point at minimum/maximum", function()
    err(function() return nd.max(a, a) end, "max: dim must be an integer, got a tensor", "nd.maximum(a, b)")
    err(function() return a:min(a) end, "min:", "nd.minimum(a, b)")
  end)
  it("load and save name themselves for a missing path", function()
    err(function() return nd.load(nil) end, "load: path must be a string, got nil")
    err(function() return nd.save(nil, a) end, "save: path must be a string, got nil")
  end)
  it("clamp without bounds raises (as PyTorch)", function()
    err(function() return a:clamp() end, "clamp: at least one of min and max")
    err(function() return a:clamp_(nil, nil) end, "clamp_: at least one of min and max")
    assert.tensor_equal({ 1, 3 }, a:clamp(nil, 3))
  end)
  it("an .npy of an unsupported dtype names it and lists the supported ones", function()
    local path = npy_file("{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }",
      string.rep("\0", 24))
    local msg = err(function() return nd.load(path) end,
      "load: " .. path, "unsupported dtype '<c8' (complex64)", "float32 ('<f4')", "bool ('|b1')",
      "and float16 ('<f2')")
    assert.is_nil(msg:find("bfloat16", 1, true), msg)
    os.remove(path)
    assert.is_nil(msg:find("'f'", 1, true), msg)
  end)
end)

describe("is_contiguous of empty tensors", function()
  it("is true whatever the strides (PyTorch's rule)", function()
    assert.is_true(nd.zeros(0):as_strided({ 0, 3 }, { 1, 5 }):is_contiguous())
    assert.is_true(nd.zeros(3, 0, 2):permute(3, 1, 2):is_contiguous())
    assert.is_true(nd.zeros(2, 3, 0):transpose(1, 2):is_contiguous())
    assert.is_false(nd.zeros(2, 3):t():is_contiguous())
  end)
end)

describe("the sign of zero", function()
  local function negzero(x) return x == 0 and 1 / x < 0 end
  for _, dt in ipairs { "float64", "float32" } do
    it("is kept when a Lua -0.0 is written into a " .. dt .. " tensor", function()
      assert.is_true(negzero(nd.tensor({ -0.0 }, dt)[1]))
      assert.is_true(negzero(nd.tensor(-0.0, dt):item()))
      assert.is_true(negzero(nd.full({ 2 }, -0.0, dt)[2]))
      assert.is_true(negzero(nd.zeros(2, dt):fill_(-0.0)[1]))
      local t = nd.ones(3, dt)
      t[1] = -0.0
      t:set(2, -0.0)
      t[{ { 3, 3 } }] = -0.0
      assert.is_true(negzero(t[1]) and negzero(t[2]) and negzero(t[3]))
      assert.is_true(negzero(nd.where(nd.tensor({ true }), -0.0, 1):to(dt)[1]))
      assert.is_true(negzero(nd.mul(nd.ones(1, dt), -0.0)[1]))
    end)
  end
  it("survives an .npy round trip", function()
    local path = os.tmpname()
    -- (Lua 5.1 folds the constants -0.0 and 0 of one function into one)
    nd.save(path, nd.tensor({ tonumber("-0.0"), tonumber("0.0") }))
    local back = nd.load(path)
    os.remove(path)
    assert.is_true(negzero(back[1]))
    assert.is_false(negzero(back[2]))
  end)
  it("does not turn an integer tensor into a float one", function()
    local i = nd.tensor({ 1, 2 }, "int32")
    i:fill_(-0.0)
    assert.equals("int32", i:dtype())
    assert.tensor_equal(nd.zeros(2, "int32"), i)
  end)
end)
