-- Elementwise ops checked against plain Lua loops over `get`, for every
-- dtype and for contiguous, transposed, stepped, flipped and expanded
-- inputs; then promotion (PyTorch's table, pasted below), in-place and out
-- rules, edge cases and errors.
local nd = require "nd"

local DTYPES = { "float32", "float64", "int32", "int64", "uint8", "bool" }
local FLOAT = { float32 = true, float64 = true }

local seed = 12345
local function rnd() -- deterministic, independent of nd's generator
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 2147483648
end
local function value(dt, lo, hi)
  if dt == "bool" then return rnd() < 0.5 end
  if FLOAT[dt] then return lo + (hi - lo) * rnd() end
  return math.floor(lo + (hi - lo + 1) * rnd())
end

-- A 4x5 tensor of dtype dt in one of the layouts (spec/support/helper.lua).
local function make(layout, dt, lo, hi)
  if dt == "uint8" then lo = math.max(lo, 0) end
  return make_layout(layout, dt, function(d) return value(d, lo, hi) end)
end

local function num(v) if type(v) == "boolean" then return v and 1 or 0 end return v end

local function round_half_even(x)
  local f = math.floor(x)
  local d = x - f
  if d > 0.5 then return f + 1 elseif d < 0.5 then return f end
  return f % 2 == 0 and f or f + 1
end

local function check(got, want, tol, what)
  if type(want) == "boolean" then
    assert(got == want, ("%s: expected %s, got %s"):format(what, tostring(want), tostring(got)))
  elseif want ~= want then
    assert(got ~= got, ("%s: expected nan, got %s"):format(what, tostring(got)))
  elseif math.abs(want) == math.huge then
    assert(got == want, ("%s: expected %s, got %s"):format(what, tostring(want), tostring(got)))
  else
    assert(type(got) == "number" and math.abs(got - want) <= tol * math.max(1, math.abs(want)),
      ("%s: expected %.17g, got %s"):format(what, want, tostring(got)))
  end
end

-- Integer results wrap as two's complement (and uint8 modulo 256).
local function wrap(dt, v)
  if type(v) ~= "number" or v ~= v or math.abs(v) == math.huge then return v end
  if dt == "uint8" then return v % 256 end
  if dt == "int32" then return (v + 2147483648) % 4294967296 - 2147483648 end
  return v
end

local function f32(x) -- rounds a double to float32 through nd itself
  return nd.tensor({ x }, "float32"):get(1)
end

local BINARY = {
  add = function(x, y) return x + y end,
  sub = function(x, y) return x - y end,
  mul = function(x, y) return x * y end,
  div = function(x, y) return x / y end,
  pow = function(x, y) return x ^ y end,
  maximum = math.max, minimum = math.min,
  eq = function(x, y) return x == y end, ne = function(x, y) return x ~= y end,
  lt = function(x, y) return x < y end, le = function(x, y) return x <= y end,
  gt = function(x, y) return x > y end, ge = function(x, y) return x >= y end,
}
local COMPARE = { eq = true, ne = true, lt = true, le = true, gt = true, ge = true }

local function binary_dtype(op, dt)
  if COMPARE[op] then return "bool" end
  if op == "div" and not FLOAT[dt] then return "float64" end
  return dt
end

describe("binary ops against Lua loops", function()
  for _, dt in ipairs(DTYPES) do
    for _, layout in ipairs(LAYOUTS) do
      it(dt .. " " .. layout, function()
        for op, f in pairs(BINARY) do
          if not (dt == "bool" and op == "sub") then
            local a = make(layout, dt, -4, 4)
            local b = make(LAYOUTS[(#op % #LAYOUTS) + 1], dt, op == "pow" and 0 or -4, op == "pow" and 3 or 4)
            if op == "pow" and FLOAT[dt] then a = nd.abs(a) end
            local r = nd[op](a, b)
            local rdt = binary_dtype(op, dt)
            assert.equals(rdt, r:dtype())
            assert.same({ 4, 5 }, { r:size(1), r:size(2) })
            local tol = (rdt == "float32" or dt == "float32") and 2e-6 or 1e-14
            for i = 1, 4 do for j = 1, 5 do
              local x, y = num(a:get(i, j)), num(b:get(i, j))
              local want = f(x, y)
              if rdt == "bool" and type(want) == "number" then want = want ~= 0 end
              if dt == "float32" and type(want) == "number" then want = f32(want) end
              if not FLOAT[rdt] then want = wrap(rdt, want) end
              check(r:get(i, j), want, tol, ("%s %s %s [%d,%d] (%s, %s)"):format(op, dt, layout, i, j, x, y))
            end end
          end
        end
      end)
    end
  end
end)

local UNARY = {
  neg = function(x) return -x end, abs = math.abs, exp = math.exp,
  log = math.log, sqrt = math.sqrt, sin = math.sin, cos = math.cos,
  tanh = function(x) return (math.exp(2 * x) - 1) / (math.exp(2 * x) + 1) end,
  sigmoid = function(x) return 1 / (1 + math.exp(-x)) end,
  relu = function(x) return x > 0 and x or 0 end,
  floor = math.floor, ceil = math.ceil, round = round_half_even,
}
local FLOAT_UNARY = { exp = true, log = true, sqrt = true, sin = true, cos = true, tanh = true, sigmoid = true }

describe("unary ops against Lua loops", function()
  for _, dt in ipairs(DTYPES) do
    for _, layout in ipairs(LAYOUTS) do
      it(dt .. " " .. layout, function()
        for op, f in pairs(UNARY) do
          if not (dt == "bool" and op == "neg") then
            local a = make(layout, dt, -3, 3)
            if op == "round" and FLOAT[dt] and layout ~= "expanded" then -- halves too
              a:set(1, 1, 2.5); a:set(2, 2, -0.5)
            end
            local r = nd[op](a)
            local rdt = (FLOAT_UNARY[op] and not FLOAT[dt]) and "float64" or dt
            assert.equals(rdt, r:dtype())
            local tol = rdt == "float32" and 4e-6 or 1e-13
            for i = 1, 4 do for j = 1, 5 do
              local x = num(a:get(i, j))
              local want = f(x)
              if rdt == "bool" then want = want ~= 0 end
              if rdt == "float32" then want = f32(want) end
              if not FLOAT[rdt] then want = wrap(rdt, want) end
              check(r:get(i, j), want, tol, ("%s %s %s [%d,%d] (%s)"):format(op, dt, layout, i, j, x))
            end end
          end
        end
      end)
    end
  end
end)

describe("clamp, where, isnan, isfinite", function()
  it("clamp with either bound nil, every layout", function()
    for _, dt in ipairs({ "float32", "float64", "int32", "int64", "uint8" }) do
      for _, layout in ipairs(LAYOUTS) do
        local a = make(layout, dt, -5, 5)
        local lo = dt == "uint8" and 1 or -2 -- a bound must fit the dtype
        local r1, r2, r3 = a:clamp(lo, 3), nd.clamp(a, nil, 1), a:clamp(0)
        for i = 1, 4 do for j = 1, 5 do
          local x = a:get(i, j)
          assert.equals(math.min(math.max(x, lo), 3), r1:get(i, j))
          assert.equals(math.min(x, 1), r2:get(i, j))
          assert.equals(math.max(x, 0), r3:get(i, j))
        end end
      end
    end
    local x = nd.tensor({ 0 / 0, 5, -5 })
    local r = x:clamp(-1, 1)
    assert.is_true(r:get(1) ~= r:get(1))
    assert.same({ 1, -1 }, { r:get(2), r:get(3) })
    assert.equals("float64", nd.tensor({ 1, 2 }, "int32"):clamp(0.5):dtype())
  end)
  it("where broadcasts a condition against tensors and numbers", function()
    for _, layout in ipairs(LAYOUTS) do
      local c = make(layout, "bool")
      local a = make("transposed", "float32", -3, 3)
      local r = nd.where(c, a, 7)
      assert.equals("float32", r:dtype())
      for i = 1, 4 do for j = 1, 5 do
        assert.equals(c:get(i, j) and a:get(i, j) or 7, r:get(i, j))
      end end
    end
    for _, dt in ipairs(DTYPES) do -- every dtype, operands in every layout
      for k, layout in ipairs(LAYOUTS) do
        local c = make(LAYOUTS[(k % #LAYOUTS) + 1], "bool")
        local a, b = make(layout, dt, -3, 3), make(LAYOUTS[((k + 1) % #LAYOUTS) + 1], dt, -3, 3)
        if FLOAT[dt] and layout ~= "expanded" then a:set(1, 1, tonumber("-0.0")); a:set(2, 1, 0 / 0) end
        local r = nd.where(c, a, b)
        for i = 1, 4 do for j = 1, 5 do
          local want, got = c:get(i, j) and a:get(i, j) or b:get(i, j), r:get(i, j)
          if c:get(i, j) then want = a:get(i, j) end -- a's false, 0 or -0 too
          if want ~= want then assert.is_true(got ~= got, dt .. " " .. layout .. " NaN")
          else
            assert.equals(want, got, dt .. " " .. layout)
            if want == 0 and FLOAT[dt] then assert.equals(1 / want, 1 / got, "signed zero") end
          end
        end end
      end
    end
    assert.equals("int64", nd.where(nd.tensor({ true, false }), 1, 0):dtype())
    assert.same({ 1, 0 }, nd.where(nd.tensor({ true, false }), 1, 0):totable())
    assert_error_matches(function() nd.where(nd.tensor({ 1, 0 }), 1, 0) end, "where", "bool")
  end)
  it("isnan and isfinite", function()
    local x = nd.tensor({ 0 / 0, 1 / 0, -1 / 0, 1.5 }, "float32")
    assert.same({ true, false, false, false }, x:isnan():totable())
    assert.same({ false, false, false, true }, nd.isfinite(x):totable())
    assert.same({ false, false }, nd.tensor({ 1, 2 }, "int32"):isnan():totable())
    assert.same({ true, true }, nd.tensor({ 1, 2 }, "int64"):isfinite():totable())
  end)
end)

-- torch.result_type / torch.promote_types, PyTorch 2.x, with float64 as the
-- default float (what torch gives after torch.set_default_dtype(float64)).
local PROMOTE = { -- tensor (1-d) with tensor (1-d)
  float32 = { float32 = "float32", float64 = "float64", int32 = "float32", int64 = "float32", uint8 = "float32", bool = "float32" },
  float64 = { float32 = "float64", float64 = "float64", int32 = "float64", int64 = "float64", uint8 = "float64", bool = "float64" },
  int32 = { float32 = "float32", float64 = "float64", int32 = "int32", int64 = "int64", uint8 = "int32", bool = "int32" },
  int64 = { float32 = "float32", float64 = "float64", int32 = "int64", int64 = "int64", uint8 = "int64", bool = "int64" },
  uint8 = { float32 = "float32", float64 = "float64", int32 = "int32", int64 = "int64", uint8 = "uint8", bool = "uint8" },
  bool = { float32 = "float32", float64 = "float64", int32 = "int32", int64 = "int64", uint8 = "uint8", bool = "bool" },
}
-- tensor with a Lua number 2 (integral), 2.5 (fractional), true
local WEAK = {
  float32 = { "float32", "float32", "float32" }, float64 = { "float64", "float64", "float64" },
  int32 = { "int32", "float64", "int32" }, int64 = { "int64", "float64", "int64" },
  uint8 = { "uint8", "float64", "uint8" }, bool = { "int64", "float64", "bool" },
}
-- 1-d tensor (row) with a 0-d tensor (column)
local ZERO_D = {
  float32 = { float64 = "float32", int64 = "float32", bool = "float32" },
  int32 = { float64 = "float64", float32 = "float32", int64 = "int32", uint8 = "int32" },
  uint8 = { int64 = "uint8", float32 = "float32", bool = "uint8" },
  bool = { int64 = "int64", float32 = "float32", bool = "bool" },
}

describe("type promotion", function()
  local function t(dt) return nd.ones(2, dt) end
  it("tensor with tensor", function()
    for a, row in pairs(PROMOTE) do
      for b, want in pairs(row) do
        assert.equals(want, nd.add(t(a), t(b)):dtype(), a .. " + " .. b)
        assert.equals(want, nd.maximum(t(a), t(b)):dtype(), a .. " max " .. b)
      end
    end
  end)
  it("tensor with weak Lua scalars, on either side", function()
    for dt, want in pairs(WEAK) do
      assert.equals(want[1], nd.add(t(dt), 2):dtype(), dt .. " + 2")
      assert.equals(want[2], nd.mul(2.5, t(dt)):dtype(), "2.5 * " .. dt)
      assert.equals(want[3], nd.add(t(dt), true):dtype(), dt .. " + true")
    end
  end)
  it("0-d tensors rank below dimensioned ones", function()
    for a, row in pairs(ZERO_D) do
      for b, want in pairs(row) do
        assert.equals(want, nd.add(t(a), nd.ones({}, b)):dtype(), a .. " + 0-d " .. b)
      end
    end
    assert.equals("float64", nd.add(nd.ones({}, "int32"), nd.ones({}, "float64")):dtype())
  end)
  it("true division, float unary ops and comparisons", function()
    assert.equals("float64", nd.div(t("int32"), t("int32")):dtype())
    assert.equals("float32", nd.div(t("float32"), 2):dtype())
    assert.equals("float64", nd.exp(t("int64")):dtype())
    assert.equals("float32", nd.sqrt(t("float32")):dtype())
    assert.equals("bool", nd.lt(t("uint8"), 2.5):dtype())
    assert.same({ true, true }, nd.lt(t("uint8"), 1.5):totable())
  end)
  it("bool arithmetic follows PyTorch", function()
    local a, b = nd.tensor({ true, true, false, false }), nd.tensor({ true, false, true, false })
    assert.same({ true, true, true, false }, (a + b):totable())
    assert.same({ true, false, false, false }, (a * b):totable())
    assert.same({ true, true, true, false }, nd.maximum(a, b):totable())
    assert.same({ true, false, false, false }, nd.minimum(a, b):totable())
    assert.same({ 4, 4, 3, 3 }, (a + 3):totable())
    assert_error_matches(function() return a - b end, "sub", "bool")
    assert_error_matches(function() return -a end, "neg", "bool")
    -- as torch.sub: a bool on either side is refused, not just on both
    assert_error_matches(function() return nd.ones(4) - a end, "sub", "bool")
    assert_error_matches(function() return a - nd.ones(4, "int32") end, "sub", "bool")
    assert_error_matches(function() return nd.ones(4, "uint8") - true end, "sub", "bool")
    assert_error_matches(function() return 3 - a end, "sub", "bool")
    assert_error_matches(function() nd.ones(4):sub_(a) end, "sub", "bool")
  end)
end)

describe("edge cases", function()
  it("maximum/minimum propagate NaN; round is half to even", function()
    local x, y = nd.tensor({ 0 / 0, 1, 2 }), nd.tensor({ 1, 0 / 0, 3 })
    local mx, mn = nd.maximum(x, y), nd.minimum(x, y)
    assert.is_true(mx:get(1) ~= mx:get(1) and mx:get(2) ~= mx:get(2))
    assert.is_true(mn:get(1) ~= mn:get(1) and mn:get(2) ~= mn:get(2))
    assert.same({ 3, 2 }, { mx:get(3), mn:get(3) })
    -- numpy: np.round([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997])
    assert.same({ 0, 2, 2, -0, -2, -2, 0 },
      nd.tensor({ 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997 }):round():totable())
  end)
  it("integer overflow wraps; INT_MIN * -1 and neg do not trap", function()
    assert.same({ -2147483648 }, (nd.tensor({ 2147483647 }, "int32") + 1):totable())
    assert.same({ 44 }, (nd.tensor({ 200 }, "uint8") + 100):totable())
    assert.same({ -2147483648 }, (nd.tensor({ -2147483648 }, "int32") * -1):totable())
    assert.same({ -2147483648 }, (-nd.tensor({ -2147483648 }, "int32")):totable())
    assert.same({ 2147483647 }, nd.abs(nd.tensor({ -2147483647 }, "int32")):totable())
    assert.same({ 246 }, (-nd.tensor({ 10 }, "uint8")):totable())
  end)
  it("integer pow and division", function()
    assert.same({ 1024, -8, 1, 0, 1, -1 }, nd.pow(nd.tensor({ 2, -2, 5, 2, 1, -1 }, "int64"),
      nd.tensor({ 10, 3, 0, -1, -3, -3 }, "int64")):totable())
    local q = nd.div(nd.tensor({ 1, -1, 0, -2147483648 }, "int32"), nd.tensor({ 0, 0, 0, -1 }, "int32"))
    assert.equals(1 / 0, q:get(1)); assert.equals(-1 / 0, q:get(2))
    assert.is_true(q:get(3) ~= q:get(3)); assert.equals(2147483648, q:get(4))
  end)
  it("float to integer casts saturate in in-place ops", function()
    local x = nd.tensor({ 1, 2, 3 }, "int32")
    local y = nd.tensor({ 1e20, -1e20, 0 / 0 }, "float32")
    assert_error_matches(function() x:add_(y) end, "add_", "float32", "int32")
    local z = nd.tensor({ 0.5, 0.5 }, "float32")
    z:div_(nd.tensor({ 0.25, 3 }, "float64"))
    assert.equals("float32", z:dtype())
    assert_close({ 2, f32(0.5 / 3) }, z:totable(), 1e-7)
  end)
  it("empty and 0-d tensors", function()
    local e = nd.empty(0, 3)
    assert.same({ 0, 3 }, { (e + 1):size(1), (e + 1):size(2) })
    assert.same({ 0, 3 }, { nd.exp(e):size(1), nd.exp(e):size(2) })
    local s = nd.tensor(2.5) + nd.tensor(1)
    assert.equals(0, s:dim()); assert.equals(3.5, s:item())
    assert.same({ 2, 3 }, { (nd.tensor(1) + nd.zeros(2, 3)):size(1), (nd.tensor(1) + nd.zeros(2, 3)):size(2) })
  end)
end)

describe("metamethods", function()
  it("+ - * / ^ and unary minus, numbers on either side", function()
    local a = nd.tensor({ 1, 2, 4 })
    assert.same({ 3, 4, 6 }, (a + 2):totable())
    assert.same({ 1, 0, -2 }, (2 - a):totable())
    assert.same({ 2, 4, 8 }, (a * 2):totable())
    assert.same({ 4, 2, 1 }, (4 / a):totable())
    assert.same({ 1, 4, 16 }, (a ^ 2):totable())
    assert.same({ 2, 4, 16 }, (2 ^ a):totable())
    assert.same({ -1, -2, -4 }, (-a):totable())
    assert.same({ 1, 4, 16 }, (a * a):totable()) -- elementwise, not matmul
    assert.is_false(a == a:clone()) -- == stays identity
  end)
end)

describe("out and in-place", function()
  it("out must have exactly the result's shape and dtype", function()
    local a, b = nd.ones(2, 3, "float32"), nd.ones(3, "float32")
    local out = nd.empty(2, 3, "float32")
    assert.equals(out, nd.add(a, b, out))
    assert.same({ { 2, 2, 2 }, { 2, 2, 2 } }, out:totable())
    assert.equals(out, a:mul(3, out))
    assert_error_matches(function() nd.add(a, b, nd.empty(3, 2, "float32")) end, "add", "{3,2}", "{2,3}")
    assert_error_matches(function() nd.add(a, b, nd.empty(2, 3, "float64")) end, "add", "float64", "float32")
    assert_error_matches(function() nd.exp(a, nd.empty(6, "float32")) end, "exp", "{6}")
    local c = nd.empty(2, 3, "float32")
    nd.add(a:t():contiguous():t(), b, c:t():contiguous():t()) -- strided out
  end)
  it("an out view leaves the rest of its storage alone", function()
    local base = nd.zeros(4, 4)
    local out = base[{ { 1, 4, 2 }, {} }]
    nd.add(nd.ones(2, 4), 1, out)
    assert.same({ { 2, 2, 2, 2 }, { 0, 0, 0, 0 }, { 2, 2, 2, 2 }, { 0, 0, 0, 0 } }, base:totable())
  end)
  it("in-place forms cast back and refuse what PyTorch refuses", function()
    local a = nd.tensor({ 1, 2, 3 }, "int32")
    assert.equals(a, a:add_(2))
    assert.same({ 3, 4, 5 }, a:totable())
    a:mul_(nd.tensor({ 2 }, "int64"))
    assert.same({ 6, 8, 10 }, a:totable())
    assert.equals("int32", a:dtype())
    assert_error_matches(function() a:add_(2.5) end, "add_", "float64", "int32")
    assert_error_matches(function() a:div_(2) end, "div_", "int32")
    assert_error_matches(function() nd.ones(3):add_(nd.ones(2, 3)) end, "add_", "{3}", "{2,3}")
    assert_error_matches(function() nd.ones(3):expand(2, 3):add_(1) end, "add_", "memory location")
    assert_error_matches(function() nd.arange(7):unfold(1, 2, 1):mul_(2) end, "mul_", "memory location")
    local f = nd.tensor({ 1, 4, 9 })
    f:sqrt_(); f:neg_(); f:abs_(); f:clamp_(nil, 2)
    assert.same({ 1, 2, 2 }, f:totable())
    local x = nd.tensor({ 0.5, -1 })
    x:exp_():log_()
    assert_close({ 0.5, -1 }, x:totable(), 1e-15)
  end)
  it("reads through a temporary when out partly overlaps an input", function()
    local s = nd.arange(1, 11, "float64")
    local a, out = s:narrow(1, 1, 8), s:narrow(1, 3, 8)
    nd.add(a, 100, out)
    assert.same({ 1, 2, 101, 102, 103, 104, 105, 106, 107, 108 }, s:totable())
    local m = nd.arange(1, 10, "float64"):view(3, 3)
    nd.add(m:t(), 0, m) -- out is the transpose of the input
    assert.same({ { 1, 4, 7 }, { 2, 5, 8 }, { 3, 6, 9 } }, m:totable())
    local v = nd.arange(1, 6, "float64")
    v:add_(v:flip({ 1 }))
    assert.same({ 6, 6, 6, 6, 6 }, v:totable())
  end)
  it("large mixed-stride and broadcast operands agree with small ones", function()
    local a = nd.rand(300, 200)
    local b = nd.rand(200, 300)
    local r = a + b:t()
    for _, p in ipairs({ { 1, 1 }, { 300, 200 }, { 17, 123 }, { 256, 64 } }) do
      check(r:get(p[1], p[2]), a:get(p[1], p[2]) + b:get(p[2], p[1]), 1e-15, "a + b:t()")
    end
    local row = nd.rand(200)
    local r2 = nd.sub(a, row)
    check(r2:get(299, 7), a:get(299, 7) - row:get(7), 1e-15, "a - row")
    local big = nd.rand(1000, 1000, "float32")
    local c = big:t():exp()
    assert.same({ 1, 1000 }, c:stride()) -- follows the input's memory order
    check(c:get(999, 3), f32(math.exp(big:get(3, 999))), 2e-6, "exp of transposed")
  end)
  it("results do not depend on the thread count", function()
    local n = nd.get_num_threads()
    local a, b = nd.rand(513, 771, "float32"), nd.rand(771, "float32")
    nd.set_num_threads(1)
    local r1 = nd.add(a:t():t(), b):exp()
    nd.set_num_threads(3)
    assert.equals(3, nd.get_num_threads())
    local r3 = nd.add(a, b):exp()
    nd.set_num_threads(n)
    assert.is_true(nd.equal(r1, r3))
    assert_error_matches(function() nd.set_num_threads(0) end, "set_num_threads")
  end)
end)

describe("comparing tensors", function()
  it("equal and allclose", function()
    local a = nd.tensor({ 1, 2, 3 })
    assert.is_true(nd.equal(a, a:clone()))
    assert.is_true(a:equal(nd.tensor({ 1, 2, 3 }, "int32")))
    assert.is_false(nd.equal(a, nd.tensor({ 1, 2, 4 })))
    assert.is_false(nd.equal(a, nd.tensor({ { 1, 2, 3 } })))
    assert.is_false(nd.equal(nd.tensor({ 0 / 0 }), nd.tensor({ 0 / 0 })))
    assert.is_true(nd.allclose(a, a + 1e-9))
    assert.is_false(nd.allclose(a, a + 1e-3))
    assert.is_true(nd.allclose(a, a + 1e-3, 1e-2))
    assert.is_true(nd.allclose(nd.tensor({ 1 / 0 }), nd.tensor({ 1 / 0 })))
  end)
end)

describe("bad input", function()
  it("raises clear errors", function()
    assert_error_matches(function() return nd.ones(2, 3) + nd.ones(4) end, "add", "{2,3}", "{4}")
    assert_error_matches(function() nd.add(1, 2) end, "add", "tensor")
    assert_error_matches(function() nd.add(nd.ones(2), "x") end, "add", "string")
    assert_error_matches(function() nd.exp("x") end, "exp")
    assert_error_matches(function() nd.ones(2):clamp("a") end, "clamp")
  end)
end)
