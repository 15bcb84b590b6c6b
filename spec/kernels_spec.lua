-- Fast paths of the kernel-speed work (issue 10): float32 pow through
-- float64 lanes, reductions down the columns, tiled mixed-stride traversal.
-- Each is checked against a slow, obviously right reference.
local nd = require "nd"

-- IEEE equality that also matches NaN with NaN and tells -0 from +0.
local function same(u, v)
  if u ~= u then return v ~= v end
  return u == v and (u ~= 0 or 1 / u == 1 / v)
end

describe("float32 pow", function()
  it("matches float64 pow rounded to float32 over a wide range", function()
    local n = 4099 -- not a multiple of any vector width or chunk
    local x = nd.rand(n):mul(40):sub(20):exp():to("float32")
    local y = nd.rand(n):mul(20):sub(10):to("float32")
    local want = nd.pow(x:to("float64"), y:to("float64")):to("float32")
    local got = nd.pow(x, y)
    local worst = 0
    for i = 1, n do
      local g, w = got[i], want[i]
      if w ~= 0 and w ~= math.huge then
        local ulp = math.abs(g - w) / (math.abs(w) * 2 ^ -23)
        if ulp > worst then worst = ulp end
      else
        assert.is_true(same(g, w))
      end
    end
    assert.is_true(worst <= 1)
    -- a scalar exponent, a strided base and the in-place form agree
    local s = nd.pow(x, 2.75)
    local ws = nd.pow(x:to("float64"), 2.75):to("float32")
    assert.is_true(nd.allclose(s, ws, 3e-7, 0))
    local m = nd.stack({ x, x }, 2) -- x in column 1: stride 2
    assert.is_true(nd.equal(nd.pow(m[{ {}, 1 }], 2.75), s))
    local c = x:clone()
    c:pow_(2.75)
    assert.is_true(nd.equal(c, s))
  end)

  it("keeps IEEE pow's special cases", function()
    local inf, nan = math.huge, 0 / 0
    local xs = { 0, -0.0, 1, -1, 2, -2, 0.5, -0.5, inf, -inf, nan, 3, -3, 1e-30 }
    local ys = { 0, -0.0, 1, 2, 3, -1, -2, -3, 0.5, 2.5, -2.5, inf, -inf, nan, 1e30, -1e30 }
    local bx, by, want = {}, {}, {}
    for _, a in ipairs(xs) do
      for _, b in ipairs(ys) do
        bx[#bx + 1], by[#by + 1] = a, b
      end
    end
    local X, Y = nd.tensor(bx, "float32"), nd.tensor(by, "float32")
    local ref = nd.pow(X:to("float64"), Y:to("float64")):to("float32")
    local got = nd.pow(X, Y)
    for i = 1, #bx do
      if not same(got[i], ref[i]) then
        error(("pow(%s, %s) = %s, want %s"):format(bx[i], by[i], got[i], ref[i]))
      end
    end
    assert.is_true(same(nd.pow(nd.tensor({ -2 }, "float32"), 3.0)[1], -8))
    assert.is_true(same(nd.pow(nd.tensor({ -0.0 }, "float32"), 2.5)[1], 0))
    assert.is_true(nd.pow(nd.tensor({ -2 }, "float32"), 2.5)[1] ~= nd.pow(nd.tensor({ -2 }, "float32"), 2.5)[1])
  end)
end)
