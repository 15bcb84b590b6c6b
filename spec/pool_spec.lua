-- nd.max_pool1d/2d/3d, nd.avg_pool1d/2d/3d and nd.adaptive_avg_pool2d
-- against PyTorch 1.13 (spec/fixtures/pool_cases.lua, from
-- tools/gen_pool_fixtures.py), each input contiguous, transposed, flipped
-- and stepped (the same values); results fresh and row-major; every error
-- naming the function and the values.
local nd = require "nd"
local fx = dofile("spec/support/fixture_cases.lua")
local cases = dofile("spec/fixtures/pool_cases.lua")

local function plain(s)
  local r = {}
  for i = 1, #s do r[i] = s[i] end
  return r
end

-- got's values, flat, row-major (got is row-major: checked first).
local function flat(got)
  assert.is_true(got:is_contiguous(), "row-major")
  if got:numel() == 0 then return {} end
  return got:reshape(got:numel()):totable()
end

-- exp {t, dtype, size} against got: exactly (NaN equal to NaN), or within
-- a relative 1e-6 when tol (PyTorch's 1x1 adaptive pooling sums as mean()).
local function check(exp, got, what, tol)
  assert.equals(exp.dtype, got:dtype(), what .. ": dtype")
  assert.same(exp.size, plain(got:size()), what .. ": size")
  local g = flat(got)
  assert.equals(#exp.t, #g, what .. ": count")
  for i, e in ipairs(exp.t) do
    local v = g[i]
    local ok = (e ~= e and v ~= v) or e == v or
      (tol and math.abs(e - v) <= 1e-6 * math.max(1, math.abs(e)))
    if not ok then
      error(("%s: element %d: expected %.17g, got %.17g"):format(what, i, e, v), 2)
    end
  end
end

local function run(c, layout)
  local x = fx.build(c.x, layout)
  local what = c.fn .. " " .. c.name .. " (" .. layout .. ")"
  local r, ix = nd[c.fn](x, c.opts)
  check(c.expected.out, r, what, c.tol)
  assert.is_false(nd.same_storage(r, x), what .. ": fresh")
  if c.expected.indices then
    check(c.expected.indices, ix, what .. " indices")
  else
    assert.is_nil(ix, what .. ": no indices unless asked")
  end
end

describe("pooling matches PyTorch 1.13", function()
  for _, c in ipairs(cases) do
    it(c.fn .. ": " .. c.name, function()
      for _, layout in ipairs(fx.layouts) do run(c, layout) end
    end)
  end
end)

describe("pooling inputs", function()
  it("reads a channels-last (permuted) input without copying it", function()
    local x = nd.randn(2, 5, 6, 3):permute(1, 4, 2, 3) -- (N, C, H, W), C fastest
    local want = nd.max_pool2d(x:contiguous(), { kernel_size = 3, stride = 2, padding = 1 })
    local got = nd.max_pool2d(x, { kernel_size = 3, stride = 2, padding = 1 })
    assert.same(want:totable(), got:totable())
    local a = nd.avg_pool2d(x:contiguous(), { kernel_size = 2, ceil_mode = true })
    assert.same(a:totable(), nd.avg_pool2d(x, { kernel_size = 2, ceil_mode = true }):totable())
    local m = nd.adaptive_avg_pool2d(x:contiguous(), { 4, 2 })
    assert.same(m:totable(), nd.adaptive_avg_pool2d(x, { 4, 2 }):totable())
  end)

  it("takes an expanded (stride 0) input", function()
    local x = nd.tensor({ 1, 5, 2, 7, 3 }):view(1, 1, 5):expand(2, 3, 5)
    local v, i = nd.max_pool1d(x, { kernel_size = 2, return_indices = true })
    assert.same({ 5, 7 }, v[{ 2, 3 }]:totable())
    assert.same({ 2, 4 }, i[{ 2, 3 }]:totable())
  end)

  it("gives the same results on any number of threads", function()
    local x = nd.randn(4, 16, 40, 40):float()
    local threads = nd.get_num_threads()
    local res = {}
    for _, n in ipairs({ 1, 2, 3 }) do
      nd.set_num_threads(n)
      local v, i = nd.max_pool2d(x, { kernel_size = 3, stride = 2, padding = 1, return_indices = true })
      res[n] = { v, i, nd.avg_pool2d(x, { kernel_size = 3, stride = 2 }), nd.adaptive_avg_pool2d(x, 7) }
    end
    nd.set_num_threads(threads)
    for n = 2, 3 do
      for k = 1, 4 do assert.is_true(nd.equal(res[1][k], res[n][k])) end
    end
  end)

  -- issue 23: float16 / bfloat16 pooled in float32 (max exact, sums in
  -- float32), rounded once; the max's indices as float32's
  for _, dt in ipairs({ "float16", "bfloat16" }) do
    it("pools " .. dt .. " as float32 rounded once, any layout", function()
      local g = nd.generator(23)
      local x = g:randn({ 2, 3, 7, 8 }):to(dt)
      x[{ 1, 2, 3, 3 }] = x[{ 1, 2, 3, 4 }] -- a tie: the first largest wins
      local cl = nd.empty({ 2, 7, 8, 3 }, dt):permute(1, 4, 2, 3):copy_(x)
      local st = nd.zeros({ 2, 3, 14, 16 }, dt)[{ {}, {}, { 1, 14, 2 }, { 16, 1, -2 } }]:copy_(x)
      for _, t in ipairs({ x, cl, st }) do
        local o = { kernel_size = 3, stride = 2, padding = 1, return_indices = true }
        local v = assert_half_rounded("max_pool2d", nd.max_pool2d, t, o)
        assert.equals(dt, v:dtype())
        assert_half_rounded("max_pool2d dilated", nd.max_pool2d, t, { kernel_size = 2, dilation = 2, ceil_mode = true })
        assert_half_rounded("avg_pool2d", nd.avg_pool2d, t, { kernel_size = 3, stride = 2, padding = 1 })
        assert_half_rounded("avg_pool2d pad excluded", nd.avg_pool2d, t,
          { kernel_size = 3, padding = 1, count_include_pad = false, ceil_mode = true })
        assert_half_rounded("avg_pool2d divisor", nd.avg_pool2d, t, { kernel_size = 2, divisor_override = 3 })
        assert_half_rounded("adaptive_avg_pool2d", nd.adaptive_avg_pool2d, t, { 3, 5 })
        assert_half_rounded("max_pool1d", nd.max_pool1d, t[{ {}, {}, 2 }], { kernel_size = 3, return_indices = true })
        assert_half_rounded("avg_pool1d", nd.avg_pool1d, t[{ {}, {}, 2 }], { kernel_size = 3, stride = 1 })
      end
      local x3 = g:randn({ 1, 2, 4, 5, 6 }):to(dt)
      assert_half_rounded("max_pool3d", nd.max_pool3d, x3, { kernel_size = 2, return_indices = true })
      assert_half_rounded("avg_pool3d", nd.avg_pool3d, x3, { kernel_size = { 2, 3, 2 }, padding = 1 })
      assert_half_rounded("adaptive_avg_pool2d unbatched", nd.adaptive_avg_pool2d, x3[1]:transpose(2, 3), { 2, 3 })
      assert.same({ 0, 3, 2, 2 }, plain(nd.max_pool2d(nd.zeros(0, 3, 4, 4, dt), { kernel_size = 2 }):size()))
    end)
  end

  it("gives an empty batch an empty result", function()
    local x = nd.zeros(0, 3, 4, 4)
    assert.same({ 0, 3, 2, 2 }, plain(nd.max_pool2d(x, { kernel_size = 2 }):size()))
    assert.same({ 0, 3, 2, 2 }, plain(nd.avg_pool2d(x, { kernel_size = 2 }):size()))
    assert.same({ 0, 3, 1, 1 }, plain(nd.adaptive_avg_pool2d(x, 1):size()))
  end)

  it("indices point into the unpadded input (1-based, within each plane)", function()
    local x = nd.arange(1, 13):double():view(1, 3, 4) -- unbatched: C = 1
    local v, i = nd.max_pool2d(x, { kernel_size = 2, padding = 1, return_indices = true })
    assert.same({ { { 1, 3, 4 }, { 9, 11, 12 } } }, v:totable())
    assert.same({ { { 1, 3, 4 }, { 9, 11, 12 } } }, i:totable())
    assert.equals("int64", i:dtype())
    for k, pos in ipairs(i:reshape(6):totable()) do
      assert.equals(v:reshape(6)[k], x:reshape(12)[pos])
    end
  end)

  it("takes a kernel far larger than the input when the padding allows it", function()
    local x = nd.tensor({ { { 3, 1, 4 } } })
    local big = 2 ^ 40
    local v = nd.max_pool1d(x, { kernel_size = big, stride = 1, padding = big / 2 })
    assert.same({ { { 4, 4, 4, 4 } } }, v:totable())
  end)

  it("avg_pool3d takes an input smaller than the kernel when padding covers it", function()
    local x = nd.randn(1, 1, 2, 2, 2)
    local got = nd.avg_pool3d(x, { kernel_size = 3, padding = 1 })
    local want = nd.avg_pool3d(nd.pad(x, { 1, 1, 1, 1, 1, 1 }), { kernel_size = 3 })
    assert.same(want:totable(), got:totable())
  end)

  it("avg_pool of int64 truncates toward zero, as PyTorch", function()
    local x = nd.tensor({ { -7, -5, 3, 8, -1 } }, "int64")
    assert.same({ { -6, 5 } }, nd.avg_pool1d(x, { kernel_size = 2 }):totable())
    assert.same({ { -4, -3, 2, 3, 2 } },
      nd.avg_pool1d(x, { kernel_size = 3, stride = 1, padding = 1 }):totable())
  end)

  it("treats kernel_size {k} as k in every dim", function()
    local x = nd.randn(1, 6, 6)
    assert.same(nd.max_pool2d(x, { kernel_size = 2 }):totable(),
      nd.max_pool2d(x, { kernel_size = { 2 } }):totable())
  end)

  it("is a tensor method too, as every function that takes a tensor first", function()
    local x = nd.rand(1, 4, 4)
    assert.same(nd.max_pool2d(x, { kernel_size = 2 }):totable(), x:max_pool2d({ kernel_size = 2 }):totable())
    assert.same(nd.avg_pool1d(x, { kernel_size = 2 }):totable(), x:avg_pool1d({ kernel_size = 2 }):totable())
  end)
end)

describe("pooling errors", function()
  local x2 = nd.zeros(1, 2, 5, 5)
  local errors = {
    { function() nd.max_pool2d(x2) end, "max_pool2d", "options must be a table" },
    { function() nd.max_pool2d(x2, 3) end, "max_pool2d", "options must be a table", "number" },
    { function() nd.max_pool2d(x2, {}) end, "max_pool2d", "kernel_size is required" },
    { function() nd.max_pool2d(x2, { kernel_size = 2, foo = 1 }) end, "max_pool2d", "unknown option 'foo'" },
    { function() nd.avg_pool2d(x2, { kernel_size = 2, dilation = 2 }) end, "avg_pool2d", "unknown option 'dilation'" },
    { function() nd.avg_pool1d(nd.zeros(1, 5), { kernel_size = 2, divisor_override = 2 }) end,
      "avg_pool1d", "unknown option 'divisor_override'" },
    { function() nd.max_pool2d(x2, { kernel_size = 2, count_include_pad = true }) end,
      "max_pool2d", "unknown option 'count_include_pad'" },
    { function() nd.max_pool2d(x2, { 2 }) end, "max_pool2d", "options are named" },
    { function() nd.max_pool2d(x2, { kernel_size = 2.5 }) end, "max_pool2d", "kernel_size", "2.5" },
    { function() nd.max_pool2d(x2, { kernel_size = { 2, 2, 2 } }) end, "max_pool2d", "kernel_size", "table of 2 integers" },
    { function() nd.max_pool2d(x2, { kernel_size = "2" }) end, "max_pool2d", "kernel_size", "string" },
    { function() nd.max_pool2d(x2, { kernel_size = 2, ceil_mode = 1 }) end, "max_pool2d", "ceil_mode must be a boolean" },
    { function() nd.max_pool2d(x2, { kernel_size = 0 }) end, "max_pool2d", "kernel_size must be positive", "{0, 0}" },
    { function() nd.max_pool2d(x2, { kernel_size = 2, stride = 0 }) end, "max_pool2d", "stride must be positive", "{0, 0}" },
    { function() nd.max_pool2d(x2, { kernel_size = 2, stride = { 1, -1 } }) end, "max_pool2d", "stride must be positive", "{1, -1}" },
    { function() nd.max_pool2d(x2, { kernel_size = 2, dilation = 0 }) end, "max_pool2d", "dilation must be positive" },
    { function() nd.max_pool2d(x2, { kernel_size = 2, padding = -1 }) end, "max_pool2d", "padding must be 0 or more", "{-1, -1}" },
    { function() nd.max_pool2d(x2, { kernel_size = 3, padding = 2 }) end, "max_pool2d", "at most half", "{2, 2}", "{3, 3}" },
    { function() nd.avg_pool3d(nd.zeros(1, 4, 4, 4), { kernel_size = { 3, 3, 2 }, padding = { 1, 1, 2 } }) end,
      "avg_pool3d", "at most half", "{1, 1, 2}", "{3, 3, 2}" },
    { function() nd.max_pool2d(x2, { kernel_size = 7 }) end, "max_pool2d", "input of size {1, 2, 5, 5}", "output size {-1, -1}", "too small" },
    { function() nd.max_pool2d(x2, { kernel_size = 3, dilation = 3 }) end, "max_pool2d", "too small", "dilation {3, 3}" },
    { function() nd.max_pool2d(nd.zeros(5, 5), { kernel_size = 2 }) end, "max_pool2d", "3D", "4D", "got 2D" },
    { function() nd.max_pool1d(nd.zeros(1, 1, 1, 5), { kernel_size = 2 }) end, "max_pool1d", "2D", "3D", "got 4D" },
    { function() nd.max_pool2d(nd.zeros(1, 0, 4, 4), { kernel_size = 2 }) end, "max_pool2d", "{1, 0, 4, 4}", "only the batch dim" },
    { function() nd.max_pool2d(nd.zeros(1, 4, 4, "int64"), { kernel_size = 2 }) end, "max_pool2d", "float16, bfloat16, float32 or float64", "int64" },
    { function() nd.avg_pool2d(nd.zeros(1, 4, 4, "int32"), { kernel_size = 2 }) end, "avg_pool2d", "float16, bfloat16, float32 or float64 (or int64)", "int32" },
    { function() nd.avg_pool2d(nd.zeros(1, 4, 4, "uint8"), { kernel_size = 2 }) end, "avg_pool2d", "uint8" },
    { function() nd.adaptive_avg_pool2d(nd.zeros(1, 4, 4, "int64"), 2) end, "adaptive_avg_pool2d", "float16, bfloat16, float32 or float64", "int64" },
    { function() nd.avg_pool2d(x2, { kernel_size = 2, divisor_override = 0 }) end, "avg_pool2d", "divisor_override must not be 0" },
    { function() nd.avg_pool2d(x2, { kernel_size = 2, divisor_override = 1.5 }) end, "avg_pool2d", "divisor_override must be an integer" },
    { function() nd.max_pool2d(x2, { kernel_size = 2 ^ 62, padding = 2 ^ 61 }) end, "max_pool2d", "too large" },
    { function() nd.avg_pool3d(nd.zeros(1, 5, 5, 5), { kernel_size = 2 ^ 40, padding = 2 ^ 39, stride = 1 }) end,
      "avg_pool3d", "kernel_size", "1099511627776", "too large" },
    { function() nd.max_pool2d("x", { kernel_size = 2 }) end, "max_pool2d", "string" },
    { function() nd.max_pool2d(x2, { kernel_size = 2 }, 1) end, "max_pool2d" },
    { function() nd.adaptive_avg_pool2d(x2) end, "adaptive_avg_pool2d", "size must be a number or a table", "nil" },
    { function() nd.adaptive_avg_pool2d(x2, -1) end, "adaptive_avg_pool2d", "at least 0", "-1" },
    { function() nd.adaptive_avg_pool2d(x2, { 2, -3 }) end, "adaptive_avg_pool2d", "size[2]", "-3" },
    { function() nd.adaptive_avg_pool2d(x2, { 2, 2, 2 }) end, "adaptive_avg_pool2d", "longer table" },
    { function() nd.adaptive_avg_pool2d(x2, 1.5) end, "adaptive_avg_pool2d", "integer", "1.5" },
    { function() nd.adaptive_avg_pool2d(nd.zeros(4, 4), 2) end, "adaptive_avg_pool2d", "3D", "4D", "got 2D" },
    { function() nd.adaptive_avg_pool2d(nd.zeros(1, 2, 0, 4), 2) end, "adaptive_avg_pool2d", "{1, 2, 0, 4}", "only the batch and channel dims" },
    { function() nd.adaptive_avg_pool2d(x2, 2, 3) end, "adaptive_avg_pool2d" },
  }
  for i, c in ipairs(errors) do
    it("raises, naming the function and the values (" .. i .. ": " .. (c[3] or c[2]) .. ")", function()
      local err = assert_error_matches(table.unpack and table.unpack(c) or unpack(c))
      assert.truthy(err:find("pool_spec.lua:", 1, true), "points at the caller: " .. err)
    end)
  end
end)
