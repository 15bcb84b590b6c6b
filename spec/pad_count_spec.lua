-- nd.pad's modes, nd.bincount and nd.one_hot: values against PyTorch and
-- NumPy (spec/fixtures/pad_count_cases.lua, from
-- tools/gen_pad_count_fixtures.py) with every tensor argument contiguous,
-- transposed, flipped and stepped; results fresh; every error naming the
-- function and the values.
local nd = require "nd"
local fx = dofile("spec/support/fixture_cases.lua")
local cases = dofile("spec/fixtures/pad_count_cases.lua")
local unpack = table.unpack or unpack
local sizes = fx.sizes

-- Case c with its tensors in layout, as a function (nd.f) and a method.
local function run(c, layout)
  local args = {}
  for i = 1, c.n do
    local a = c.args[i]
    args[i] = type(a) == "table" and a.dtype and fx.build(a, layout) or a
  end
  local what = c.name .. " (" .. layout .. ")"
  local r = nd[c.fn](unpack(args, 1, c.n))
  fx.check_tensor(c.expected, r, what)
  assert.is_true(r:is_contiguous(), what .. ": row-major")
  assert.is_false(nd.same_storage(r, args[1]), what .. ": fresh")
  fx.check_tensor(c.expected, args[1][c.fn](unpack(args, 1, c.n)), what .. " as a method")
end

for _, fn in ipairs({ "pad", "bincount", "one_hot" }) do
  describe(fn .. " matches PyTorch and NumPy", function()
    for _, c in ipairs(cases) do
      if c.fn == fn then
        it(c.name, function()
          for _, layout in ipairs(fx.layouts) do run(c, layout) end
        end)
      end
    end
  end)
end

describe("pad", function()
  local x = nd.arange(10):view(2, 5)

  it("takes the value as the third argument, or after the mode", function()
    assert.same({ { 5, 0, 1, 2, 3, 4, 5 } }, nd.pad(x[{ { 1 } }], { 1, 1 }, 5):totable())
    assert.same(nd.pad(x, { 1, 2 }, 7):totable(), nd.pad(x, { 1, 2 }, "constant", 7):totable())
    assert.same(nd.pad(x, { 1, 2 }):totable(), nd.pad(x, { 1, 2 }, nil, 0):totable())
    assert.same({ true, true, false, true }, nd.tensor({ true, false }):pad({ 1, 1 }, true):totable())
    assert.same({ 1, 0, 1 }, nd.zeros(1):pad({ 1, 1 }, true):totable())
    assert.same({ 2, 0, 2 }, nd.zeros(1, "int32"):pad({ 1, 1 }, 2.7):totable()) -- truncated
  end)

  it("reflects, replicates and wraps any dtype over any number of trailing dims", function()
    local b = nd.tensor({ { true, false, false } })
    assert.same({ { false, true, false, false, false } }, b:pad({ 1, 1 }, "reflect"):totable())
    assert.same({ { true, true, false, false, false } }, b:pad({ 1, 1 }, "replicate"):totable())
    assert.same({ { false, true, false, false, true } }, b:pad({ 1, 1 }, "circular"):totable())
    local v = nd.arange(1, 5):view(2, 2)
    assert.same({ { 4, 3, 4, 3 }, { 2, 1, 2, 1 }, { 4, 3, 4, 3 } },
      v:pad({ 1, 1, 1, 0 }, "reflect"):totable())
  end)

  it("crops with negative pads, also where the other side of the dim pads", function()
    local r = nd.arange(5):pad({ 3, -3 }, "reflect")
    assert.same({ 3, 2, 1, 0, 1 }, r:totable())
    assert.same({ 2, 3, 4, 0, 1 }, nd.arange(5):pad({ 3, -3 }, "circular"):totable())
    assert.same({ 4, 4, 4, 4 }, nd.arange(5):pad({ -4, 3 }, "replicate"):totable())
    assert.same({ 0 }, sizes(nd.arange(5):pad({ -5, 0 }, "reflect"))) -- empty, not refused
    local far = nd.arange(10):view(2, 5):t() -- a crop far past t (stride 5): all new
    assert.same({ { 7, 7 }, { 7, 7 }, { 7, 7 }, { 7, 7 }, { 7, 7 } }, far:pad({ -2 ^ 62, 2 ^ 62 }, 7):totable())
  end)

  it("pads an expanded (stride-0) input and a view of a bigger storage", function()
    local e = nd.tensor({ 1, 2 }):view(1, 2):expand(3, 2)
    assert.same({ { 2, 1, 2, 1 }, { 2, 1, 2, 1 }, { 2, 1, 2, 1 } }, e:pad({ 1, 1 }, "reflect"):totable())
    local big = nd.arange(20):view(4, 5)
    local w = big:narrow(1, 2, 2):narrow(2, 2, 3)
    assert.same({ { 6, 7, 8, 7 }, { 11, 12, 13, 12 } }, w:pad({ 0, 1 }, "reflect"):totable())
  end)

  local m = nd.arange(12):view(3, 4)
  local errors = {
    { function() nd.pad(3, { 1, 1 }) end, "pad", "argument 1", "number" },
    { function() nd.pad(m, 1) end, "pad", "pads must be a table", "number" },
    { function() nd.pad(m, { 1, 1.5 }) end, "pad", "pad must be an integer", "1.5" },
    { function() nd.pad(m, { 1, "a" }) end, "pad", "pad must be an integer", "string" },
    { function() nd.pad(m, { 1 }) end, "pad", "even length", "(4)", "got 1" },
    { function() nd.pad(m, { 1, 1, 1, 1, 1, 1 }) end, "pad", "at most", "got 6" },
    { function() nd.pad(m, {}, "reflect", 1) end, "pad", '"reflect" takes no value', "got 1" },
    { function() nd.pad(m, { 1, 1 }, "circular", 0) end, "pad", '"circular" takes no value' },
    { function() nd.pad(m, { -3, -2 }) end, "pad", "{-3, -2}", "dim 2 of size 4", "negative" },
    { function() nd.pad(m, { -2, -3 }, "reflect") end, "pad", "{-2, -3}", "negative" },
    { function() nd.pad(m, { 2 ^ 62, 2 ^ 62 }) end, "pad", "too large" },
    { function() nd.pad(m, { 2 ^ 50, 0 }) end, "pad", "not enough memory" },
    { function() nd.pad(m, { 4, 0 }, "reflect") end, "pad", "reflect needs pads smaller",
      "{4, 0}", "dim 2 of size 4" },
    { function() nd.pad(m, { 0, 0, 0, 3 }, "reflect") end, "pad", "{0, 3}", "dim 1 of size 3" },
    { function() nd.pad(m, { 0, 5 }, "circular") end, "pad", "circular needs pads of at most",
      "{0, 5}", "size 4" },
    { function() nd.pad(nd.zeros(2, 0), { 1, 0 }, "replicate") end, "pad",
      "replicate needs a non-empty dim", "{1, 0}", "dim 2 of size 0" },
    { function() nd.pad(m, { 1, 1 }, "edge") end, "pad", "mode must be", '"reflect"', 'got "edge"' },
    { function() nd.pad(m, { 1, 1 }, {}) end, "pad", "mode must be", "got table" },
    { function() nd.pad(m, { 1, 1 }, 5, 6) end, "pad", "third argument is the value",
      "(number) is one too many" },
    { function() nd.pad(m, { 1, 1 }, "constant", "x") end, "pad", "value must be a number or boolean",
      "string" },
    { function() nd.pad(m, { 1, 1 }, "constant", 0, 1) end, "pad", "argument" },
  }
  fx.raises_all(it, "pad", errors, "pad_count_spec.lua")
end)

describe("bincount", function()
  it("counts value v at position v + 1", function()
    local c = nd.tensor({ 0, 2, 2, 5 }, "uint8"):bincount()
    assert.same({ 1, 0, 2, 0, 0, 1 }, c:totable())
    assert.equals(2, c[2 + 1])
    assert.equals("int64", c:dtype())
    -- argmax's labels are 1-based already: subtract 1 to count them as values
    local labels = nd.tensor({ { 0, 9 }, { 8, 1 }, { 7, 2 } }):argmax(2)
    assert.same({ 2, 1, 1 }, labels:totable())
    assert.same({ 2, 1 }, (labels - 1):bincount():totable())
  end)

  it("counts an image's values, over views of it too", function()
    nd.manual_seed(24)
    local flat = nd.randint(0, 256, { 37 * 41 * 3 }, "uint8")
    local c = flat:bincount(nil, 256)
    for v = 0, 255, 17 do assert.equals(flat:eq(v):sum(), c[v + 1]) end
    assert.equals(flat:numel(), c:sum())
    for _, view in ipairs({ flat[{ { 2, -1, 3 } }], flat:flip(1), flat[{ { -1, 1, -5 } }] }) do
      assert.same(view:clone():bincount():totable(), view:bincount():totable())
      assert.same(view:clone():int():bincount(nil, 300):totable(), view:int():bincount(nil, 300):totable())
    end
  end)

  it("sums weights in the input's order, as NumPy (float64)", function()
    local r = nd.bincount(nd.tensor({ 1, 1, 1 }, "int32"), nd.tensor({ 1e16, 1, -1e16 }))
    assert.same({ 0, 0 }, r:totable()) -- (1e16 + 1) - 1e16 in float64
    assert.equals("float64", r:dtype())
    local f = nd.tensor({ 1, 1, 1 }, "int32"):flip(1)
    assert.same({ 0, 0 }, nd.bincount(f, nd.tensor({ 1e16, 1, -1e16 }):flip(1):flip(1)):totable())
  end)

  it("gives minlength zeros for an empty input, never less than the values need", function()
    assert.same({ 0, 0, 0 }, nd.bincount(nd.tensor({}, "int64"), nil, 3):totable())
    assert.same({ 0 }, sizes(nd.bincount(nd.tensor({}, "uint8"))))
    assert.same({ 0, 0, 1 }, nd.bincount(nd.tensor({ 2 }, "int64"), nil, 1):totable())
  end)

  local t = nd.tensor({ 1, 2 }, "int64")
  local errors = {
    { function() nd.bincount(nd.tensor({ 1.0 })) end, "bincount", "integer tensor", "got float64" },
    { function() nd.bincount(nd.zeros(2, 2, "int32")) end, "bincount", "1-D", "got 2 dims" },
    { function() nd.bincount(nd.tensor(3, "int32")) end, "bincount", "1-D", "got 0 dims" },
    { function() nd.bincount(nd.tensor({ 1, -2, -5 }, "int32")) end, "bincount",
      "must not be negative", "got -5" },
    { function() nd.bincount(nd.tensor({ 1, 2 ^ 40 }, "int64")) end, "bincount",
      "values 0..1099511627776", "does not fit", "memory" },
    { function() nd.bincount(nd.tensor({ 2 ^ 62 }, "int64")) end, "bincount",
      "values 0..4611686018427387904", "does not fit" },
    { function() nd.bincount(nd.tensor({ 2 ^ 62 }, "int64"):mul(2):sub(1)) end, "bincount", "more than int64" },
    -- uint64 past int64 (-1 as uint64 is 2^64 - 1), beside small values
    { function() nd.bincount(nd.tensor({ 3, -1, 1 }, "int64"):to("uint64")) end, "bincount",
      "values 0..18446744073709551615", "more than int64" },
    { function() nd.bincount(t, nd.ones(3)) end, "bincount", "weights of size {3}", "size {2}" },
    { function() nd.bincount(t, nd.ones(1, 2)) end, "bincount", "weights of size {1,2}" },
    { function() nd.bincount(t, 5) end, "bincount", "weights must be a tensor",
      "minlength is the third argument", "got number" },
    { function() nd.bincount(t, nil, -1) end, "bincount", "minlength must not be negative", "got -1" },
    { function() nd.bincount(t, nil, 1.5) end, "bincount", "minlength must be an integer", "1.5" },
    { function() nd.bincount(t, nil, 1, 2) end, "bincount", "argument" },
  }
  fx.raises_all(it, "bincount", errors, "pad_count_spec.lua")
end)

describe("one_hot", function()
  it("takes 1-based positions and argmax's labels as they are", function()
    local labels = nd.tensor({ { 0, 9 }, { 8, 1 }, { 7, 2 } }):argmax(2)
    assert.same({ { 0, 1 }, { 1, 0 }, { 1, 0 } }, labels:one_hot():totable())
    assert.same({ 3, 4 }, sizes(labels:one_hot(4)))
    assert.equals("int64", labels:one_hot(4):dtype())
  end)

  local errors = {
    { function() nd.one_hot(nd.tensor({ 1.0 }), 2) end, "one_hot", "integer tensor", "got float64" },
    { function() nd.one_hot(nd.tensor({ true }), 2) end, "one_hot", "integer tensor", "got bool" },
    { function() nd.one_hot(nd.tensor({ 1, 0 }, "int64"), 3) end, "one_hot",
      "position 0 is out of range", "start at 1" },
    { function() nd.one_hot(nd.tensor({ -2, 1 }, "int32")) end, "one_hot", "position -2" },
    { function() nd.one_hot(nd.tensor({ 1, 4 }, "uint8"), 3) end, "one_hot",
      "position 4 is out of range [1, 3]", "num_classes 3" },
    { function() nd.one_hot(nd.tensor({ 1 }, "int64"), 0) end, "one_hot",
      "num_classes must be at least 1", "got 0" },
    { function() nd.one_hot(nd.tensor({ 1 }, "int64"), -2) end, "one_hot", "got -2" },
    { function() nd.one_hot(nd.tensor({ 1 }, "int64"), 2.5) end, "one_hot",
      "num_classes must be an integer", "2.5" },
    { function() nd.one_hot(nd.tensor({}, "int64")) end, "one_hot", "empty index",
      "num_classes" },
    { function() nd.one_hot(nd.ones(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, "int64"), 2) end,
      "one_hot", "16 dims", "at most 16" },
    { function() nd.one_hot(nd.tensor({ 1 }, "int64"), 2, 3) end, "one_hot", "argument" },
    { function() nd.one_hot(nd.tensor({ 2, -1 }, "int64"):to("uint64")) end, "one_hot",
      "position 18446744073709551615 gives too many classes" },
    { function() nd.one_hot(nd.tensor({ 2, -1 }, "int64"):to("uint64"), 3) end, "one_hot",
      "position 18446744073709551615 is out of range [1, 3]", "num_classes 3" },
  }
  fx.raises_all(it, "one_hot", errors, "pad_count_spec.lua")
end)
