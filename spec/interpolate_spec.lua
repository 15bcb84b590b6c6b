-- nd.interpolate against PyTorch 1.13's F.interpolate
-- (spec/fixtures/filter_cases.lua, from tools/gen_filter_fixtures.py): every
-- mode, sizes and scales (non-integer, downscaling, per dim), align_corners
-- both ways, inputs contiguous, transposed, flipped and stepped; errors
-- naming the function and the values.
local nd = require "nd"
local fx = dofile("spec/support/fixture_cases.lua")
local cases = dofile("spec/fixtures/filter_cases.lua")
local unpack = table.unpack or unpack
local sizes = fx.sizes

describe("interpolate matches PyTorch", function()
  for _, c in ipairs(cases) do
    if c.fn == "interpolate" then
      it(c.name, function()
        for _, layout in ipairs(fx.layouts) do
          local args = { fx.build(c.args[1], layout) }
          for i = 2, c.n do args[i] = c.args[i] end
          local r = nd.interpolate(unpack(args, 1, c.n))
          local what = c.name .. " (" .. layout .. ")"
          fx.check_close(c.expected, r, c.tol, what)
          assert.is_true(r:is_contiguous(), what .. ": row-major")
          -- the options-table form gives the same
          local opts = {}
          for k, v in pairs(c.args[2]) do opts[k] = v end
          opts.mode, opts.align_corners = args[3], args[4]
          assert.is_true(nd.equal(r, nd.interpolate(args[1], opts)), what .. ": options table")
        end
      end)
    end
  end
end)

describe("interpolate", function()
  local x = nd.arange(16):view(1, 1, 4, 4):float()

  it("doubles exactly with nearest and keeps a batch of planes apart", function()
    local r = nd.interpolate(x, { scale_factor = 2 })
    assert.same({ 1, 1, 8, 8 }, sizes(r))
    assert.equals(x[{ 1, 1, 3, 2 }], r[{ 1, 1, 5, 3 }])
    local b = nd.cat({ x, x * 2, x * 3 }, 2) -- (1, 3, 4, 4)
    local rb = nd.interpolate(b, { size = { 5, 7 } }, "bilinear")
    for c = 1, 3 do
      assert.is_true(nd.allclose(rb:narrow(2, c, 1),
        nd.interpolate(x * c, { size = { 5, 7 } }, "bilinear"), 1e-6, 1e-6))
    end
  end)

  it("keeps corners with align_corners = true", function()
    local r = nd.interpolate(x, { size = 7 }, "bilinear", true)
    assert.equals(0, r[{ 1, 1, 1, 1 }])
    assert.equals(15, r[{ 1, 1, 7, 7 }])
    assert.equals(3, r[{ 1, 1, 1, 7 }])
  end)

  it("averages windows with area, on an expanded (stride-0) input too", function()
    local e = nd.tensor({ 1, 3 }):view(1, 1, 1, 2):expand(2, 3, 5, 2)
    local r = nd.interpolate(e, { size = { 2, 1 } }, "area")
    assert.same({ 2, 3, 2, 1 }, sizes(r))
    assert.equals(2, r[{ 2, 3, 2, 1 }])
  end)

  it("gives the same on one thread as on several", function()
    nd.manual_seed(5)
    local big = nd.rand({ 3, 5, 60, 70 }, "float32")
    local n = nd.get_num_threads()
    for _, mode in ipairs({ "nearest", "bilinear", "bicubic", "area" }) do
      nd.set_num_threads(1)
      local one = nd.interpolate(big, { scale_factor = { 1.7, 0.6 } }, mode)
      nd.set_num_threads(4)
      local many = nd.interpolate(big, { scale_factor = { 1.7, 0.6 } }, mode)
      nd.set_num_threads(n)
      assert.is_true(nd.equal(one, many), mode)
    end
  end)

  -- issue 23: float16 / bfloat16 resampled in float32, rounded once
  for _, dt in ipairs({ "float16", "bfloat16" }) do
    it("resamples " .. dt .. " as float32 rounded once, any layout", function()
      local g = nd.generator(23)
      local x4 = g:randn({ 2, 3, 5, 6 }):to(dt)
      local cl = nd.empty({ 2, 5, 6, 3 }, dt):permute(1, 4, 2, 3):copy_(x4) -- channels last
      local x3 = g:randn({ 2, 3, 7 }):to(dt)
      local st = nd.zeros({ 2, 3, 14 }, dt)[{ {}, {}, { 1, 14, 2 } }]:copy_(x3) -- stepped
      for _, x in ipairs({ x4, cl }) do
        for _, mode in ipairs({ "nearest", "bilinear", "bicubic", "area" }) do
          assert_half_rounded(mode, nd.interpolate, x, { size = { 8, 4 } }, mode)
          assert_half_rounded(mode .. " scale", nd.interpolate, x, { scale_factor = { 1.5, 0.7 } }, mode)
        end
        assert_half_rounded("bicubic align", nd.interpolate, x, { size = { 9, 11 } }, "bicubic", true)
      end
      for _, x in ipairs({ x3, st }) do
        for _, mode in ipairs({ "nearest", "linear", "area" }) do
          assert_half_rounded(mode, nd.interpolate, x, { size = 10 }, mode)
        end
        assert_half_rounded("linear align", nd.interpolate, x, { size = 10 }, "linear", true)
      end
      assert.same({ 0, 2, 6 }, sizes(nd.interpolate(nd.zeros(0, 2, 3, dt), { scale_factor = 2 }, "linear")))
    end)
  end

  it("gives an empty batch for an empty batch", function()
    assert.same({ 0, 2, 6 }, sizes(nd.interpolate(nd.zeros(0, 2, 3), { scale_factor = 2 }, "linear")))
  end)

  local x3 = nd.zeros(1, 2, 5)
  local errors = {
    { function() nd.interpolate(x, {}) end, "interpolate", "either size or scale_factor" },
    { function() nd.interpolate(x, { size = 2, scale_factor = 2 }) end, "interpolate",
      "only one of size or scale_factor" },
    { function() nd.interpolate(x, { size = 2 }, "linear") end, "interpolate",
      'mode "linear" needs 3-D input, got 4-D' },
    { function() nd.interpolate(x3, { size = 2 }, "bilinear") end, "interpolate",
      'mode "bilinear" needs 4-D input, got 3-D' },
    { function() nd.interpolate(x3, { size = 2 }, "bicubic") end, "interpolate", "needs 4-D" },
    { function() nd.interpolate(nd.zeros(2, 5), { size = 2 }) end, "interpolate",
      "batched 3-D (N, C, L) or 4-D (N, C, H, W)", "got 2 dims" },
    { function() nd.interpolate(x, { size = 2 }, "nearest", false) end, "interpolate",
      "align_corners can only be set", '"nearest"' },
    { function() nd.interpolate(x, { size = 2 }, "area", true) end, "interpolate", '"area"' },
    { function() nd.interpolate(x, { size = 2 }, "trilinear") end, "interpolate",
      'mode must be "nearest", "linear", "bilinear", "bicubic" or "area"', 'got "trilinear"' },
    { function() nd.interpolate(x:int(), { size = 2 }) end, "interpolate",
      "float16, bfloat16, float32 or float64", "got int32" },
    { function() nd.interpolate(x, { size = 0 }) end, "interpolate",
      "greater than 0", "output size 0" },
    { function() nd.interpolate(x, { scale_factor = 0.2 }) end, "interpolate",
      "greater than 0", "output size 0" },
    { function() nd.interpolate(x, { scale_factor = -1 }) end, "interpolate",
      "scale_factor -1", "size 4" },
    { function() nd.interpolate(x, { size = { 2, 3, 4 } }) end, "interpolate",
      "size has 3 entries", "2 spatial dims" },
    { function() nd.interpolate(x, { size = 2.5 }) end, "interpolate", "size must be an integer", "2.5" },
    { function() nd.interpolate(x, { size = "2" }) end, "interpolate", "size must be a number" },
    { function() nd.interpolate(x, { scale_factor = { 2, "x" } }) end, "interpolate",
      "scale_factor entries must be numbers", "string" },
    { function() nd.interpolate(x, { sizes = 2 }) end, "interpolate", "unknown option sizes" },
    { function() nd.interpolate(x, 2) end, "interpolate", "argument 2 must be a table", "number" },
    { function() nd.interpolate(x, { size = 2, mode = "bilinear" }, "nearest") end,
      "interpolate", "mode given twice" },
    { function() nd.interpolate(x, { size = 2, align_corners = true }, "bilinear", false) end,
      "interpolate", "align_corners given twice" },
    { function() nd.interpolate(x, { size = 2 }, "bilinear", 1) end, "interpolate",
      "align_corners must be a boolean", "number" },
    { function() nd.interpolate(x, { size = 2 }, "bilinear", true, 1) end, "interpolate",
      "takes (t, options [, mode [, align_corners]])" },
  }
  for i, c in ipairs(errors) do
    it("raises, naming interpolate and the values (" .. i .. ")", function()
      local err = assert_error_matches(unpack(c))
      assert.truthy(err:find("interpolate_spec.lua:", 1, true), "points at the caller: " .. err)
    end)
  end
end)
