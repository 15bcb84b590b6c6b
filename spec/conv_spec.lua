-- nd.conv1d/2d/3d and nd.conv_plan: values against PyTorch 1.13's
-- F.conv1d/2d/3d (spec/fixtures/conv_cases.lua, from
-- tools/gen_conv_fixtures.py: small integers, so every sum is exact and
-- the comparison is exact), with the input and the weight contiguous,
-- transposed, flipped and stepped; each call allocating what its plan
-- says; every error naming the function and the values.
local nd = require "nd"
local testing = require "nd.testing"
local fx = dofile("spec/support/fixture_cases.lua")
local cases = dofile("spec/fixtures/conv_cases.lua")

local function opts_of(c, layout)
  local o = {}
  for k, v in pairs(c.opts) do o[k] = v end
  if c.bias then o.bias = fx.build(c.bias, layout) end
  return o
end

describe("conv1d/2d/3d match PyTorch", function()
  for _, c in ipairs(cases) do
    it(c.name, function()
      local fn = nd["conv" .. c.nsp .. "d"]
      for _, lx in ipairs(fx.layouts) do
        for _, lw in ipairs({ "contiguous", lx }) do
          local x, w = fx.build(c.x, lx), fx.build(c.w, lw)
          local o = opts_of(c, lw)
          local what = ("%s (input %s, weight %s)"):format(c.name, lx, lw)
          local xs, ws = x:clone(), w:clone()
          local r
          local count, bytes = testing.allocations(function() r = fn(x, w, o) end)
          fx.check_tensor(c.expected, r, what)
          assert.is_true(r:is_contiguous(), what .. ": row-major")
          assert.is_true(testing.tensor_equal(xs, x) and testing.tensor_equal(ws, w), what .. ": operands unchanged")
          local p = nd.conv_plan(x, w, o)
          assert(p.bytes == bytes and p.allocations == count,
            ("%s: the plan (%s) says %d allocations of %d bytes, the call made %d of %d")
              :format(what, p.strategy, p.allocations, p.bytes, count, bytes))
          assert.same(c.expected.size, p.size, what .. ": plan size")
          assert.equals(c.expected.dtype, p.dtype, what .. ": plan dtype")
        end
      end
    end)
  end
end)

describe("conv as methods", function()
  it("x:conv2d(w, options) is nd.conv2d(x, w, options), and x:conv_plan too", function()
    local x, w = nd.rand(1, 2, 5, 5), nd.rand(3, 2, 3, 3)
    assert.same(nd.conv2d(x, w, { padding = 1 }):totable(), x:conv2d(w, { padding = 1 }):totable())
    assert.equals(nd.conv_plan(x, w).strategy, x:conv_plan(w).strategy)
    local s, k = nd.rand(2, 7), nd.rand(3, 2, 3)
    assert.same(nd.conv1d(s, k):totable(), s:conv1d(k):totable())
  end)
end)

describe("conv_plan", function()
  local x = nd.rand(2, 64, 14, 14, "float32")
  it("does a 1x1 convolution as one GEMM per group over the input's own strides", function()
    local p = nd.conv_plan(x, nd.rand(32, 64, 1, 1, "float32"))
    assert.equals("gemm", p.strategy)
    assert.equals(0, #p.copies)
    assert.equals(0, p.bytes_copied)
    assert.equals(1, p.allocations) -- the result only
    assert.equals("sgemm", p.calls[1].routine)
    assert.equals(2, p.blas_calls) -- one per image
    local g = nd.conv_plan(x, nd.rand(32, 32, 1, 1, "float32"), { groups = 2 })
    assert.equals("gemm", g.strategy)
    assert.equals(4, g.blas_calls)
  end)
  it("packs windows into cache-sized tiles for a 3x3 layer", function()
    local p = nd.conv_plan(x, nd.rand(64, 64, 3, 3, "float32"), { padding = 1 })
    assert.equals("im2col", p.strategy)
    assert.equals(576, p.tile.rows)
    assert.is_true(p.tile.positions >= 16 and p.tile.positions <= 196)
    assert.equals(576 * p.tile.positions * 4, p.tile.bytes)
    assert.equals("tile", p.copies[1].operand)
    assert.equals(2 * 576 * 196 * 4, p.bytes_copied) -- every window once
    assert.equals(2 + 2 * 64 * 196 * 4 + p.tile.bytes - 2, p.bytes)
    assert.equals(576, p.calls[1].k)
    assert.equals(64, p.calls[1].m)
  end)
  it("takes the direct loop for depthwise layers and says why", function()
    local p = nd.conv_plan(x, nd.rand(64, 1, 3, 3, "float32"), { groups = 64, padding = 1 })
    assert.equals("direct", p.strategy)
    assert.truthy(p.why:find("depthwise"))
    assert.equals(0, #p.calls)
  end)
  it("gives the bias alone where padding alone makes outputs of an empty input", function()
    -- an empty tensor's strides may be anything: none may form a pointer
    local e = nd.zeros(1, 8, 0, 3):as_strided({ 1, 8, 0, 3 }, { 0, -2 ^ 60, 2, 2 })
    local b = nd.arange(16):double()
    for _, c in ipairs({ { nd.rand(16, 8, 3, 3), 1, "im2col", { 1, 16, 2, 5 } },
                         { nd.rand(16, 1, 1, 2), 8, "direct", { 1, 16, 4, 6 } } }) do
      local o = { padding = 2, bias = b, groups = c[2] }
      local p = nd.conv_plan(e, c[1], o)
      assert.equals(c[3], p.strategy)
      assert.same({ 0, 0, 1 }, { p.blas_calls, #p.calls, p.allocations })
      local r = nd.conv2d(e, c[1], o)
      assert.same(c[4], r:size())
      assert.is_true(r:equal(b:view(1, 16, 1, 1):expand(r:size())))
    end
  end)
  it("names each copy: a dtype conversion, a weight whose dims are not one stride", function()
    local p = nd.conv_plan(x, nd.rand(64, 64, 3, 3, "float64"), { padding = 1 })
    assert.equals("float64", p.dtype)
    assert.equals("input", p.copies[1].operand)
    assert.truthy(p.copies[1].why:find("float32 to float64"))
    local w = nd.rand(3, 3, 64, 64, "float32"):permute(4, 3, 1, 2)
    local q = nd.conv_plan(x, w, { padding = 1 })
    assert.equals("weight", q.copies[1].operand)
    assert.equals(64 * 64 * 9 * 4, q.copies[1].bytes)
  end)
  it("reports same padding's sides, the odd one on the right", function()
    local p = nd.conv_plan(nd.rand(1, 8, 10), nd.rand(8, 8, 4), { padding = "same" })
    assert.same({ 1 }, p.padding)
    assert.same({ 2 }, p.padding_right)
    assert.same({ 1, 8, 10 }, p.size)
  end)
end)

-- issue 23: float16 / bfloat16 operands converted to float32, float32
-- GEMMs (sgemm), the result rounded once; the plan says so
describe("conv of float16 and bfloat16", function()
  local g = nd.generator(23)
  -- x in three layouts: contiguous, channels last, stepped along the width
  local function layouts(x)
    local n, c, h, w = x:size(1), x:size(2), x:size(3), x:size(4)
    return { x, nd.empty({ n, h, w, c }, x:dtype()):permute(1, 4, 2, 3):copy_(x),
      nd.zeros({ n, c, h, 2 * w }, x:dtype())[{ {}, {}, {}, { 1, 2 * w, 2 } }]:copy_(x) }
  end
  for _, dt in ipairs({ "float16", "bfloat16" }) do
    it("computes " .. dt .. " in float32 and rounds once: every strategy, any layout", function()
      local x = g:randn({ 2, 8, 9, 10 }):to(dt)
      local cases = {
        { g:randn({ 6, 8, 1, 1 }), {}, "gemm" },
        { g:randn({ 12, 8, 3, 3 }), { padding = 1, stride = { 1, 2 } }, "im2col" },
        { g:randn({ 8, 1, 3, 3 }), { padding = 1, groups = 8 }, "direct" },
        { g:randn({ 16, 4, 2, 3 }), { groups = 2, dilation = 2 }, "im2col" },
      }
      for _, c in ipairs(cases) do
        local w = c[1]:to(dt)
        local o = c[2]
        for _, bias in ipairs({ false, true }) do
          if bias then o.bias = g:randn({ w:size(1) }):to(dt) end
          for _, xv in ipairs(layouts(x)) do
            local what = ("%s %s"):format(c[3], bias and "bias" or "")
            local p = nd.conv_plan(xv, w, o)
            assert.equals(dt, p.dtype, what)
            assert.equals("float32", p.compute_dtype, what)
            if p.strategy ~= "direct" then assert.equals("sgemm", p.calls[1].routine, what) end
            local last = p.copies[#p.copies]
            assert.equals("output", last.operand, what)
            assert.truthy(last.why:find("float32, rounded once to " .. dt, 1, true), what)
            local r = assert_half_rounded(what, function(a, b, bb)
              local o2 = {}
              for k, v in pairs(o) do o2[k] = v end
              o2.bias = bb
              return nd.conv2d(a, b, o2)
            end, xv, w, o.bias)
            assert.equals(dt, r:dtype())
          end
          -- what the call allocates is what its plan says
          local p = nd.conv_plan(x, w, o)
          local count, bytes = testing.allocations(function() nd.conv2d(x, w, o) end)
          assert(p.bytes == bytes and p.allocations == count,
            ("%s: the plan says %d allocations of %d bytes, the call made %d of %d")
              :format(c[3], p.allocations, p.bytes, count, bytes))
        end
        assert.equals(c[3], nd.conv_plan(x, w, o).strategy)
      end
      -- conv1d of a transposed input; a float32 weight promotes to float32
      local s = nd.empty({ 7, 4 }, dt):t():copy_(g:randn({ 4, 7 }):to(dt)):view(1, 4, 7)
      assert_half_rounded("conv1d", nd.conv1d, s, g:randn({ 3, 4, 2 }):to(dt), { padding = "same" })
      local f = nd.conv1d(s, g:randn({ 3, 4, 2 }))
      assert.equals("float64", f:dtype())
      assert.is_nil(nd.conv_plan(s, g:randn({ 3, 4, 2 })).compute_dtype)
    end)
  end
  it("gives an empty result of the 16-bit dtype", function()
    local r = nd.conv2d(nd.zeros(0, 2, 4, 4, "float16"), nd.zeros(3, 2, 3, 3, "float16"))
    assert.equals("float16", r:dtype())
    assert.same({ 0, 3, 2, 2 }, plain(r:size()))
  end)
end)

describe("conv errors", function()
  local x, w = nd.rand(2, 3, 8, 8), nd.rand(4, 3, 3, 3)
  local function raises(f, ...)
    local ok, err = pcall(f)
    assert.is_false(ok)
    for _, frag in ipairs({ ... }) do
      assert(tostring(err):find(frag, 1, true), ("%q not in: %s"):format(frag, tostring(err)))
    end
  end
  it("refuses integer and bool operands, as PyTorch's CPU convolution", function()
    raises(function() nd.conv2d(x:to("int32"), w) end, "conv2d:", "input has dtype int32",
      "float16, bfloat16, float32 or float64")
    raises(function() nd.conv2d(x, w:to("bool")) end, "conv2d:", "weight has dtype bool")
    raises(function() nd.conv2d(x, w, { bias = nd.zeros(4, "int64") }) end, "bias has dtype int64")
  end)
  it("checks ranks, channels, groups and bias", function()
    raises(function() nd.conv2d(x, nd.rand(4, 3, 3)) end, "conv2d: weight must be 4-D", "{4,3,3}")
    raises(function() nd.conv1d(x, nd.rand(4, 3, 3)) end, "conv1d: input must be 3-D", "{2,3,8,8}")
    raises(function() nd.conv2d(x, nd.rand(4, 2, 3, 3)) end, "input has 3 channels", "must be 3", "{4,2,3,3}")
    raises(function() nd.conv2d(x, nd.rand(4, 1, 3, 3), { groups = 2 }) end, "groups 2 must divide", "(3)", "(4)")
    raises(function() nd.conv2d(x, w, { groups = 0 }) end, "groups must be at least 1, got 0")
    raises(function() nd.conv2d(x, w, { bias = nd.zeros(3) }) end, "bias must be 1-D of out_channels (4)", "{3}")
    raises(function() nd.conv2d(x, w, { bias = 1 }) end, "bias must be a tensor, got number")
  end)
  it("checks strides, dilations, padding and sizes", function()
    raises(function() nd.conv2d(x, w, { stride = 0 }) end, "conv2d: stride must be at least 1", "got 0 in dim 1")
    raises(function() nd.conv2d(x, w, { dilation = { 1, -1 } }) end, "dilation must be at least 1", "got -1 in dim 2")
    raises(function() nd.conv2d(x, w, { padding = -1 }) end, "padding must be at least 0, got -1")
    raises(function() nd.conv2d(x, w, { padding = "full" }) end, "\"same\" or \"valid\", got \"full\"")
    raises(function() nd.conv2d(x, w, { padding = "same", stride = 2 }) end, "needs stride 1", "got stride 2")
    raises(function() nd.conv2d(x, w, { stride = { 1, 2, 3 } }) end, "stride must be a number or a table of 2 integers")
    raises(function() nd.conv2d(x, w, { stride = 1.5 }) end, "stride must be an integer, got 1.5")
    raises(function() nd.conv2d(x, nd.rand(4, 3, 9, 3)) end, "kernel (size 9) is larger than the padded input (size 8) in dim 1")
    raises(function() nd.conv2d(x, w, { dilation = 5 }) end, "kernel (size 11 dilated) is larger")
    raises(function() nd.conv2d(x, nd.rand(4, 3, 0, 3)) end, "kernel has size 0 in dim 1")
  end)
  it("refuses unknown options and extra arguments", function()
    raises(function() nd.conv2d(x, w, { strides = 2 }) end, "conv2d: unknown option \"strides\"")
    raises(function() nd.conv2d(x, w, { 2 }) end, "unknown option number")
    raises(function() nd.conv2d(x, w, 1) end, "options must be a table")
    raises(function() nd.conv2d(x, w, {}, 1) end, "conv2d")
    raises(function() nd.conv_plan(x, nd.rand(4, 3)) end, "conv_plan: weight must be 3-D to 5-D")
    raises(function() nd.conv_plan(x, w, { stride = 0 }) end, "conv_plan: stride")
  end)
end)
