-- nd's own vector kernels (tanh, float64 exp, pow by k + 1/2) and SLEEF's
-- 3.5-ulp log at the edges: signed zeros, tiny and huge values, infinities,
-- NaN, negative bases, against spec/fixtures/vmath_cases.lua (NumPy's
-- long double results rounded to the dtype, tools/gen_vmath_fixtures.py).
-- Within each function's documented bound (docs/ref-math.md), and every
-- layout gives the contiguous layout's bits.
local nd = require "nd"
local cases = dofile("spec/fixtures/vmath_cases.lua")

local LAYOUTS = { "contiguous", "transposed", "stepped", "flipped", "row" }
-- documented bounds in ulp
local BOUND = {
  tanh = { float32 = 3, float64 = 3 }, exp = { float32 = 1, float64 = 1.2 },
  log = { float32 = 3.5, float64 = 3.5 }, pow = { float32 = 1.5, float64 = 3 },
}
local PREC = { float32 = { 24, -126 }, float64 = { 53, -1022 } }

local function ulp(w, dt)
  local p, emin = PREC[dt][1], PREC[dt][2]
  local e = w == 0 and emin or math.max(math.floor(math.log(math.abs(w)) / math.log(2)), emin)
  return 2 ^ (e - p + 1)
end
local function same(a, b) -- bits, as far as Lua sees them
  if a ~= a then return b ~= b end
  return a == b and 1 / a == 1 / b
end

local function run(c, t)
  if c.op == "pow" then return t:pow(c.e) end
  return t[c.op](t)
end

describe("own vector kernels and SLEEF's log at the edges", function()
  for _, c in ipairs(cases) do
    local name = c.op .. (c.e and ("(x, " .. c.e .. ")") or "") .. " " .. c.dtype
    it(name .. " within " .. BOUND[c.op][c.dtype] .. " ulp, every layout the same bits", function()
      local ref
      for _, layout in ipairs(LAYOUTS) do
        local i = 0
        local x = make_layout(layout, c.dtype, function() i = i + 1; return c.x[(i - 1) % #c.x + 1] end)
        local r = run(c, x)
        local got = {}
        local rows = layout == "row" and 1 or 4 -- a row holds x[1..5], broadcast
        for a = 1, rows do for b = 1, 5 do got[#got + 1] = r:get(a, b) end end
        for k, g in ipairs(got) do
          local w = c.want[k]
          local where = ("%s %s: x = %.17g got %.17g want %.17g"):format(name, layout, c.x[k], g, w)
          if w ~= w or w == math.huge or w == -math.huge or w == 0 then
            assert(same(g, w), where) -- NaN, infinities and signed zeros exactly
          else
            assert(math.abs(g - w) <= BOUND[c.op][c.dtype] * ulp(w, c.dtype), where)
          end
        end
        if not ref then ref = got end
        for k, g in ipairs(got) do assert(same(g, ref[k]), name .. " " .. layout .. ": bits differ at " .. k) end
      end
    end)
  end

  it("pow by k + 1/2 through a 0-d tensor exponent and in place", function()
    local x = nd.tensor({ 4, 9, -1, 0 })
    local want = { 32, 243, 0 / 0, 0 }
    local r = x:pow(nd.tensor(2.5))
    x:pow_(2.5)
    for k = 1, 4 do assert(same(r:get(k), want[k])); assert(same(x:get(k), want[k])) end
  end)
end)
