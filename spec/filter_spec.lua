-- nd.convolve, nd.correlate (NumPy 1.24), nd.convolve2d, nd.correlate2d
-- (SciPy 1.10): values against the oracles (spec/fixtures/filter_cases.lua,
-- from tools/gen_filter_fixtures.py) with every tensor argument
-- contiguous, transposed, flipped and stepped; integer results exact,
-- float results within a tolerance (the sums are ordered differently);
-- every error naming the function and the values.
local nd = require "nd"
local fx = dofile("spec/support/fixture_cases.lua")
local cases = dofile("spec/fixtures/filter_cases.lua")
local unpack = table.unpack or unpack
local sizes = fx.sizes

-- Case c with its tensors in layout.
local function run(c, layout)
  local args = {}
  for i = 1, c.n do
    local a = c.args[i]
    args[i] = type(a) == "table" and a.dtype and fx.build(a, layout) or a
  end
  local what = c.name .. " (" .. layout .. ")"
  local r = nd[c.fn](unpack(args, 1, c.n))
  fx.check_close(c.expected, r, c.tol, what)
  assert.is_true(r:is_contiguous(), what .. ": row-major")
  assert.is_false(nd.same_storage(r, args[1]), what .. ": fresh")
end
_G.filter_run = run -- interpolate_spec.lua's too

for _, fn in ipairs({ "convolve", "correlate", "convolve2d", "correlate2d" }) do
  describe(fn .. " matches " .. (fn:find("2d") and "SciPy" or "NumPy"), function()
    for _, c in ipairs(cases) do
      if c.fn == fn then
        it(c.name, function()
          for _, layout in ipairs(fx.layouts) do run(c, layout) end
        end)
      end
    end
  end)
end

describe("convolve and correlate", function()
  it("swap a shorter signal, and correlate then reverses, as NumPy", function()
    local a, v = nd.tensor({ 1, 2, 3 }), nd.tensor({ 0, 1, 0.5 })
    assert.same({ 0, 1, 2.5, 4, 1.5 }, nd.convolve(a, v):totable())
    assert.same({ 1, 2.5, 4 }, nd.convolve(a, v, "same"):totable())
    assert.same({ 3.5 }, nd.correlate(a, v):totable()) -- "valid" by default
    local s, l = nd.tensor({ 1, 2, 3 }, "int64"), nd.tensor({ 1, 2, 3, 4, 5 }, "int64")
    assert.same({ 14, 26, 20, 14, 8 }, nd.correlate(s, l, "same"):totable())
    assert.same({ 8, 14, 20, 26, 14 }, nd.correlate(l, s, "same"):totable())
    assert.same(nd.convolve(s, l):totable(), nd.convolve(l, s):totable())
  end)

  it("takes a 0-d tensor as one element, and views of any strides", function()
    assert.same({ 2, 4, 6 }, nd.convolve(nd.tensor({ 1, 2, 3 }), nd.tensor(2)):totable())
    local x = nd.arange(20):double()
    local v = x[{ { 20, 1, -3 } }] -- 19, 16, ..., 1: flipped and stepped
    assert.same(nd.convolve(v:clone(), x:narrow(1, 3, 4):clone()):totable(),
      nd.convolve(v, x:narrow(1, 3, 4)):totable())
    local e = nd.tensor({ 2 }):expand(5) -- stride 0
    assert.same({ 2, 6, 12, 20, 20, 18, 14, 8 },
      nd.convolve(e, nd.tensor({ 1, 2, 3, 4 }, "int64")):totable())
  end)

  it("sums a long signal as the short loop does", function()
    nd.manual_seed(7)
    local a, v = nd.rand(5000), nd.rand(31)
    local full = nd.convolve(a, v)
    assert.same({ 5030 }, sizes(full))
    local at = 2500 -- one output by hand: sum of a[k - j] v[j]
    local want = 0
    for j = 1, 31 do want = want + a[at - j + 1] * v[j] end
    assert.is_true(math.abs(full[at] - want) < 1e-12)
    local f32 = nd.convolve(a:float(), v:float(), "valid")
    assert.is_true(nd.allclose(f32:double(), nd.convolve(a, v, "valid"), 1e-5, 1e-5))
  end)

  local a = nd.tensor({ 1, 2, 3 })
  local errors = {
    { function() nd.convolve(a, nd.tensor({})) end, "convolve", "v cannot be empty" },
    { function() nd.correlate(nd.tensor({}), a) end, "correlate", "a cannot be empty" },
    { function() nd.convolve(nd.zeros(2, 2), a) end, "convolve", "1-D", "got 2 dims for a" },
    { function() nd.correlate(a, nd.zeros(2, 2)) end, "correlate", "got 2 dims for v" },
    { function() nd.convolve(a, a, "middle") end, "convolve", 'mode must be "full", "same" or "valid"',
      'got "middle"' },
    { function() nd.correlate(a, a, 2) end, "correlate", "mode must be", "got number" },
    { function() nd.convolve(nd.tensor({ true }), nd.tensor({ false })) end, "convolve",
      "numeric", "bool" },
    { function() nd.convolve(a, 3) end, "convolve", "argument 2", "number" },
    { function() nd.convolve(a, a, "full", 1) end, "convolve", "takes (a, v [, mode])" },
  }
  fx.raises_all(it, "convolve", errors, "filter_spec.lua")
end)

describe("convolve2d and correlate2d", function()
  local img = nd.arange(1, 21):view(4, 5):double()

  it("centre an even kernel as SciPy: correlate2d and convolve2d differ", function()
    local k = nd.tensor({ { 1, 2 }, { 3, 4 } })
    local c = nd.correlate2d(img, k, "same")
    local v = nd.convolve2d(img, k:flip({ 1, 2 }), "same")
    assert.same({ 4, 5 }, sizes(c))
    assert.is_false(nd.equal(c, v))
    assert.same(nd.correlate2d(img, k):totable(), nd.convolve2d(img, k:flip({ 1, 2 })):totable())
  end)

  it("swap in valid mode when the kernel is the larger, correlate2d reversing", function()
    local k = nd.tensor({ { 1, 2 } })
    local small = nd.correlate2d(k, img, "valid")
    assert.same(sizes(nd.correlate2d(img, k, "valid")), sizes(small))
    assert.same(nd.correlate2d(img, k, "valid"):flip({ 1, 2 }):totable(), small:totable())
    assert.same(nd.convolve2d(img, k, "valid"):totable(), nd.convolve2d(k, img, "valid"):totable())
  end)

  it("filter an image view in place of a copy, with a fill value", function()
    local big = nd.arange(200):view(10, 20):float()
    local view = big[{ { 2, 9, 2 }, { 19, 3, -2 } }]:t()
    local box = nd.ones(3, 3, "float32") / 9
    for _, b in ipairs({ "fill", "wrap", "symm", "circular", "symmetric" }) do
      assert.same(nd.convolve2d(view:clone(), box, "same", b):totable(),
        nd.convolve2d(view, box, "same", b):totable())
    end
    local f = nd.correlate2d(nd.zeros(2, 2), nd.ones(3, 3), "same", "fill", 1)
    assert.same({ { 5, 5 }, { 5, 5 } }, f:totable())
  end)

  it("gives the same on one thread as on several", function()
    nd.manual_seed(3)
    local big, k7 = nd.rand(300, 2500, "float32"), nd.rand(7, 7, "float32")
    local sig, taps = nd.rand(300000), nd.rand(40)
    local n = nd.get_num_threads()
    nd.set_num_threads(1)
    local one, one1 = nd.correlate2d(big, k7, "same", "symm"), nd.convolve(sig, taps)
    nd.set_num_threads(4)
    local many, many1 = nd.correlate2d(big, k7, "same", "symm"), nd.convolve(sig, taps)
    nd.set_num_threads(n)
    assert.is_true(nd.equal(one, many))
    assert.is_true(nd.equal(one1, many1))
  end)

  local k = nd.ones(3, 3)
  local errors = {
    { function() nd.convolve2d(nd.zeros(3), k) end, "convolve2d", "2-D", "got 1 and 2 dims" },
    { function() nd.correlate2d(img, nd.zeros(2, 2, 2)) end, "correlate2d", "got 2 and 3 dims" },
    { function() nd.convolve2d(nd.zeros(3, 6), nd.zeros(5, 2), "valid") end, "convolve2d",
      'mode "valid" needs one input at least as large', "{3,6}", "{5,2}" },
    { function() nd.correlate2d(nd.zeros(0, 3), k) end, "correlate2d", "input is empty", "{0,3}" },
    { function() nd.convolve2d(img, nd.zeros(3, 0)) end, "convolve2d", "kernel is empty" },
    { function() nd.convolve2d(img, k, "same", "reflect") end, "convolve2d",
      'boundary must be "fill", "wrap" or "symm"', 'got "reflect"' },
    { function() nd.correlate2d(img, k, "all") end, "correlate2d", 'got "all"' },
    { function() nd.convolve2d(img, k, "same", "wrap", 0) end, "convolve2d",
      'boundary "wrap" takes no fill value', "got 0" },
    { function() nd.convolve2d(img:int(), k:int(), "same", "fill", 1.5) end, "convolve2d",
      "fill 1.5 is not an integer", "int32" },
    { function() nd.convolve2d(img, k, "same", "fill", "x") end, "convolve2d", "fill" },
    { function() nd.correlate2d(img:bool(), k:bool()) end, "correlate2d", "bool" },
    { function() nd.correlate2d(img, k, "same", "fill", 0, 1) end, "correlate2d", "takes (a, k" },
  }
  fx.raises_all(it, "convolve2d", errors, "filter_spec.lua")
end)

describe("filters of float16 and bfloat16", function()
  -- issue 23: filtered in float32, the result rounded once to the 16-bit
  -- dtype (assert_half_rounded: the same call on the values as float32)
  local g = nd.generator(23)
  for _, dt in ipairs({ "float16", "bfloat16" }) do
    it("convolve and correlate (" .. dt .. "): float32's result rounded once, any layout", function()
      local a = g:randn({ 40 }):to(dt)
      local v = g:randn({ 5 }):to(dt)
      local stepped = nd.zeros(80, dt)[{ { 80, 1, -2 } }]:copy_(a) -- stride -2
      for _, mode in ipairs({ "full", "same", "valid" }) do
        for _, x in ipairs({ a, stepped }) do
          assert_half_rounded("convolve " .. mode, nd.convolve, x, v, mode)
          assert_half_rounded("correlate " .. mode, nd.correlate, x, v, mode)
          assert_half_rounded("correlate swapped " .. mode, nd.correlate, v, x, mode)
        end
      end
      -- an integer kernel keeps the 16-bit dtype (promotion), computed alike
      local r = assert_half_rounded("int64 taps", nd.convolve, a, nd.tensor({ 1, -2, 1 }, "int64"))
      assert.equals(dt, r:dtype())
      -- float16 with bfloat16 promotes to float32: nothing rounded
      local other = dt == "float16" and "bfloat16" or "float16"
      assert.equals("float32", assert_half_rounded("mixed", nd.convolve, a, v:to(other)):dtype())
    end)

    it("convolve2d and correlate2d (" .. dt .. "): every boundary, transposed inputs", function()
      local A = g:randn({ 9, 12 }):to(dt)
      local K = g:randn({ 3, 4 }):to(dt)
      local At = nd.empty({ 12, 9 }, dt):t():copy_(A) -- column-major
      for _, f in ipairs({ "convolve2d", "correlate2d" }) do
        for _, x in ipairs({ A, At, A:t() }) do
          for _, mode in ipairs({ "full", "same", "valid" }) do
            assert_half_rounded(f .. " " .. mode, nd[f], x, K, mode)
            assert_half_rounded(f .. " symm", nd[f], x, K, mode, "symm")
            assert_half_rounded(f .. " wrap", nd[f], x, K:t(), mode, "wrap")
          end
          assert_half_rounded(f .. " fill", nd[f], x, K, "same", "fill", 0.3)
        end
      end
    end)
  end
end)
