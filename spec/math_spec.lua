-- "More math" against PyTorch: spec/fixtures/math_cases.lua holds every
-- function over 20 values of every dtype (NaN, infinities, signed zeros,
-- integer extremes) as computed by tools/gen_math_fixtures.py. Each case runs
-- on contiguous, transposed, stepped and flipped (negative-stride) inputs,
-- in its function, method, out and in-place forms.
local nd = require "nd"
local cases = dofile("spec/fixtures/math_cases.lua")
local unpack = table.unpack or unpack

local LAYOUTS_IN = { "contiguous", "transposed", "stepped", "flipped" }
local TOL = { float32 = 2e-6, float64 = 1e-12 }
local EXACT = { sign = true, trunc = true, frac = true, square = true,
  fmod = true, remainder = true, floor_divide = true, reciprocal = false }

-- A 4x5 tensor holding vals (row-major) in the given layout; 5 values
-- make a 1-D tensor (isclose's cases).
local function tensor_of(d, layout)
  local vals = d.values
  if #vals ~= 20 then return nd.tensor(vals, d.dtype) end
  local i = 0
  return make_layout(layout, d.dtype, function() i = i + 1; return vals[i] end)
end
local function operands(c, layout)
  local r = {}
  for k, d in ipairs(c.args) do
    if d.zerod ~= nil then r[k] = nd.tensor(d.zerod, d.dtype)
    else r[k] = d.scalar ~= nil and d.scalar or tensor_of(d, layout) end
  end
  return r
end

local function flat(t)
  local r = {}
  if t:dim() == 1 then
    for i = 1, t:size(1) do r[#r + 1] = t:get(i) end
    return r
  end
  for i = 1, t:size(1) do for j = 1, t:size(2) do r[#r + 1] = t:get(i, j) end end
  return r
end

local function check(c, got, what)
  assert(got:dtype() == c.dtype,
    ("%s: dtype %s, expected %s"):format(what, got:dtype(), c.dtype))
  local tol = TOL[c.dtype] or 0
  if EXACT[c.op] then tol = 0 end
  local g = flat(got)
  for i, w in ipairs(c.want) do
    local v = g[i]
    local ok
    if type(w) == "boolean" then ok = v == w
    elseif w ~= w then ok = v ~= v
    elseif math.abs(w) == math.huge or tol == 0 then ok = v == w
    else ok = math.abs(v - w) <= tol * math.max(1, math.abs(w)) end
    assert(ok, ("%s: element %d is %s, expected %.17g"):format(what, i,
      tostring(v), w == w and type(w) == "number" and w or 0 / 0))
  end
end

local function call(c, x)
  if c.op == "isclose" then return nd.isclose(x[1], x[2], c.rtol, c.atol, c.equal_nan) end
  if c.op == "nan_to_num" then
    local p = c.params
    return x[1]:nan_to_num(p[1], p[2], p[3])
  end
  return nd[c.op](unpack(x))
end

describe("more math against PyTorch", function()
  for _, c in ipairs(cases) do
    local desc = c.op
    for _, a in ipairs(c.args) do
      desc = desc .. " " .. (a.zerod and "0-d " .. a.dtype .. " " .. a.zerod or a.dtype or tostring(a.scalar))
    end
    if c.error then
      it(desc .. " raises naming the op", function()
        local x = operands(c, "contiguous")
        assert_error_matches(function() call(c, x) end, c.op)
      end)
    else
      it(desc, function()
        for _, layout in ipairs(LAYOUTS_IN) do
          local x = operands(c, layout)
          check(c, call(c, x), desc .. " (" .. layout .. ")")
        end
        local x = operands(c, "stepped")
        if c.op == "isclose" then return end
        local n = #x
        -- method form
        local r = x[1][c.op](x[1], select(2, unpack(x)))
        if c.op == "nan_to_num" then r = x[1]:nan_to_num(c.params[1], c.params[2], c.params[3]) end
        check(c, r, desc .. " (method)")
        -- out form into a transposed tensor
        local out = nd.empty(5, 4, c.dtype):t()
        local args = {}
        for k = 1, n do args[k] = x[k] end
        if c.op == "nan_to_num" then
          assert.equals(out, x[1]:nan_to_num(c.params[1], c.params[2], c.params[3], out))
        else
          args[n + 1] = out
          assert.equals(out, nd[c.op](unpack(args)))
        end
        check(c, out, desc .. " (out)")
        -- in place, where PyTorch's casting rule allows it
        if c.args[1].dtype == c.dtype and nd[c.op .. "_"] then
          local y = operands(c, "flipped")
          local t = y[1]
          local r2
          if c.op == "nan_to_num" then r2 = t:nan_to_num_(c.params[1], c.params[2], c.params[3])
          else r2 = t[c.op .. "_"](t, select(2, unpack(y))) end
          assert.equals(t, r2)
          check(c, t, desc .. " (in place)")
        end
      end)
    end
  end
end)

describe("integer division by zero", function()
  local INTS = { "int32", "int64", "uint8" }
  for _, op in ipairs({ "fmod", "remainder", "floor_divide" }) do
    for _, dt in ipairs(INTS) do
      it(op .. " " .. dt .. " raises in every form and leaves out untouched", function()
        local a = nd.tensor({ 7, 3, 5 }, dt)
        local z = nd.tensor({ 1, 0, 2 }, dt)
        assert_error_matches(function() nd[op](a, 0) end, op, "division by zero")
        assert_error_matches(function() nd[op](a, z) end, op, "division by zero")
        assert_error_matches(function() a[op](a, z:t()) end, op, "division by zero")
        assert_error_matches(function() nd[op](a, nd.tensor(0, dt)) end, op)
        local out = nd.full({ 3 }, 9, dt)
        assert_error_matches(function() nd[op](a, z, out) end, op)
        assert_error_matches(function() nd[op](a, 0, out) end, op)
        assert.same({ 9, 9, 9 }, out:totable())
        assert_error_matches(function() a[op .. "_"](a, z) end, op .. "_")
        assert_error_matches(function() a[op .. "_"](a, 0) end, op .. "_")
        assert.same({ 7, 3, 5 }, a:totable())
        -- an integer divisor into a float: floats divide (NaN / inf)
        local f = nd[op](nd.tensor({ 1.5 }), 0)
        assert.equals("float64", f:dtype())
      end)
    end
  end

  it("uint8 % 256 divides by the wrapped 0 and raises", function()
    assert_error_matches(function() return nd.tensor({ 5 }, "uint8") % 256 end, "remainder")
  end)

  it("INT_MIN / -1 wraps instead of trapping", function()
    local m = nd.tensor({ -2147483648 }, "int32")
    assert.same({ -2147483648 }, m:floor_divide(-1):totable())
    assert.same({ 0 }, m:remainder(-1):totable())
    assert.same({ 0 }, m:fmod(-1):totable())
  end)

  it("remainder with a float divisor 0 gives NaN", function()
    local r = nd.tensor({ 1, -2, 0 }):remainder(0)
    for i = 1, 3 do assert.is_true(r:get(i) ~= r:get(i)) end
    local q = nd.tensor({ 1, -1 }, "float32") % nd.tensor({ 0, 0 }, "float32")
    assert.is_true(q:get(1) ~= q:get(1))
  end)
end)

describe("math operators and errors", function()
  it("% is remainder with the sign of the divisor, as Lua's own %", function()
    local a = nd.tensor({ -7, 7, -7, 7 }, "int64")
    local b = nd.tensor({ 3, -3, -3, 3 }, "int64")
    local r = a % b
    for i = 1, 4 do assert.equals(a:get(i) % b:get(i), r:get(i)) end
    assert.same({ 2, 1, 2, 1 }, (a % 3):totable())
    local f = nd.tensor({ -7.5, 7.5 }) % 2
    assert.same({ -7.5 % 2, 7.5 % 2 }, f:totable())
    assert.same({ 1, 2 }, (7 % nd.tensor({ 3, 5 }, "int32")):totable())
  end)

  if _VERSION ~= "Lua 5.1" and _VERSION ~= "Lua 5.2" and not jit then
    it("// is floor_divide", function()
      local f = load("local a = ... return a // 2, 7 // a")
      local q, p = f(nd.tensor({ -7, 7 }, "int32"))
      assert.same({ -4, 3 }, q:totable())
      assert.same({ -1, 1 }, p:totable())
    end)
  end

  it("bitwise ops refuse floats naming the op", function()
    local f = nd.tensor({ 1.5 })
    for _, op in ipairs({ "bitwise_and", "bitwise_or", "bitwise_xor" }) do
      assert_error_matches(function() nd[op](f, 1) end, op, "float64")
      assert_error_matches(function() nd[op](nd.tensor({ 1 }, "int32"), 2.5) end, op)
    end
    assert_error_matches(function() f:bitwise_not() end, "bitwise_not", "float64")
    assert_error_matches(function() f:bitwise_not_() end, "bitwise_not_")
  end)

  it("in-place forms follow the casting rule", function()
    local i = nd.tensor({ 1, 2 }, "int32")
    assert_error_matches(function() i:log1p_() end, "log1p_", "int32")
    assert_error_matches(function() i:atan2_(i) end, "atan2_")
    local l = nd.tensor({ 1.5, 0 }, "float32")
    l:logical_not_()
    assert.same({ 0, 1 }, l:totable())
  end)

  it("lerp refuses integers and takes tensor weights that broadcast", function()
    assert_error_matches(function() nd.lerp(nd.tensor({ 1 }, "int32"), nd.tensor({ 2 }, "int32"), 1) end,
      "lerp", "int32")
    local r = nd.lerp(nd.zeros(2, 3), nd.ones(2, 3), nd.tensor({ 0, 0.5, 1 }))
    assert.same({ { 0, 0.5, 1 }, { 0, 0.5, 1 } }, r:totable())
    local a = nd.zeros(3, "float32")
    assert.equals(a, a:lerp_(nd.ones(3, "float32"), 0.25))
    assert.same({ 0.25, 0.25, 0.25 }, a:totable())
  end)

  it("isclose broadcasts and takes numbers; bad tolerances raise", function()
    assert.same({ true, false }, nd.isclose(nd.tensor({ 1, 2 }), 1):totable())
    assert_error_matches(function() nd.isclose(nd.ones(2), nd.ones(2), -1) end, "isclose", "rtol")
    assert_error_matches(function() nd.isclose(nd.ones(2), nd.ones(3)) end, "isclose")
  end)

  it("nan_to_num of an integer tensor is a copy", function()
    local a = nd.tensor({ 1, 2 }, "int32")
    local b = a:nan_to_num()
    assert.is_false(nd.same_storage(a, b))
    assert.same({ 1, 2 }, b:totable())
  end)

  it("refuses a wrong out and broadcasting that grows the written tensor", function()
    assert_error_matches(function() nd.atan2(nd.ones(2), nd.ones(2), nd.empty(2, "float32")) end,
      "atan2", "dtype")
    assert_error_matches(function() nd.ones(1):hypot_(nd.ones(3)) end, "hypot_")
  end)
end)

describe("SLEEF-backed functions", function()
  it("float32 and float64 exp, sigmoid, tanh, log of NaN and infinities, every layout", function()
    for _, dt in ipairs({ "float32", "float64" }) do
      for _, layout in ipairs(LAYOUTS_IN) do
        local vals = { 0 / 0, math.huge, -math.huge, 0, -0.0, 1, -1, 88, -104, 710 }
        local i = 0
        local x = make_layout(layout, dt, function() i = i + 1; return vals[(i - 1) % #vals + 1] end)
        local e, s = x:exp(), x:sigmoid()
        local e1, s1 = e:get(1, 1), s:get(1, 1)
        assert.is_true(e1 ~= e1 and s1 ~= s1, dt .. " " .. layout .. ": NaN stays NaN")
        assert.equals(math.huge, e:get(1, 2))
        assert.equals(0, e:get(1, 3))
        assert.equals(1, s:get(1, 2))
        assert.equals(0, s:get(1, 3))
        assert.equals(0.5, s:get(1, 4))
        local l = x:log()
        assert.equals(-math.huge, l:get(1, 4))
        assert.is_true(l:get(2, 2) ~= l:get(2, 2)) -- log(-1)
        assert.equals(1, x:tanh():get(1, 2))
      end
    end
  end)

  it("agrees with libm within the documented bounds on a dense grid", function()
    local x = nd.linspace(-20, 20, 4001)
    local got = x:exp():totable()
    local xs = x:totable()
    for k = 1, #xs do
      local w = math.exp(xs[k])
      assert(math.abs(got[k] - w) <= 4e-16 * math.abs(w), "exp " .. xs[k])
    end
    local s = x:sin():totable()
    for k = 1, #xs do assert(math.abs(s[k] - math.sin(xs[k])) <= 1e-15, "sin " .. xs[k]) end
  end)
end)

describe("addcmul and addcdiv", function()
  before_each(function() nd.manual_seed(5) end)
  -- t + (value * a) * b or / b, element by element in Lua (PyTorch's order)
  local function ref(t, a, b, v, div)
    local shape = t:size()
    local tv, av, bv = t:contiguous():view(-1):totable(), a:contiguous():view(-1):totable(),
      b:contiguous():view(-1):totable()
    local r = {}
    for i = 1, #tv do r[i] = tv[i] + (div and (v * av[i]) / bv[i] or (v * av[i]) * bv[i]) end
    return r, shape
  end
  local function check(got, want, tol)
    local g = got:contiguous():view(-1):totable()
    assert.equals(#want, #g)
    for i = 1, #want do
      assert(math.abs(g[i] - want[i]) <= tol * math.max(1, math.abs(want[i])),
        ("element %d: %s, want %s"):format(i, g[i], want[i]))
    end
  end
  local layouts = {
    function(x) return x end,
    function(x) return x:t():contiguous():t() end,
    function(x) return nd.cat({ x, x }, 2)[{ {}, { 1, -1, 2 } }] end,
    function(x) return x:flip(1):contiguous():flip(1) end,
  }
  for _, name in ipairs({ "addcmul", "addcdiv" }) do
    local div = name == "addcdiv"
    it(name .. ": every form and layout, broadcasting, float32 and float64", function()
      for _, dt in ipairs({ "float64", "float32" }) do
        local tol = dt == "float32" and 1e-6 or 0
        for li, lay in ipairs(layouts) do
          local t, a = lay(nd.randn(4, 5):to(dt)), lay(nd.randn(4, 5):to(dt))
          local b = lay(nd.rand(4, 5):to(dt) + 0.5)
          for _, v in ipairs({ 1, 0.5, -2 }) do
            local want = ref(t, a, b, v, div)
            check(nd[name](t, a, b, v), want, tol)
            check(t[name](t, a, b, v), want, tol)
            local out = nd.empty(4, 5, dt)
            if li > 1 then out = lay(out) end
            assert.equals(out, nd[name](t, a, b, v, out))
            check(out, want, tol)
            local x = t:clone()
            assert.equals(x, x[name .. "_"](x, a, b, v))
            check(x, want, tol)
          end
          local want = ref(t, a, b, 1, div)
          check(nd[name](t, a, b), want, tol)
          local out = nd.empty(4, 5, dt)
          assert.equals(out, nd[name](t, a, b, out))
          check(out, want, tol)
        end
      end
      -- t, a, b broadcast together
      local r = nd[name](nd.zeros(2, 1), nd.full({ 3 }, 2), nd.full({ 2, 1 }, 4), 0.5)
      assert.same({ 2, 3 }, { r:size(1), r:size(2) })
      assert.equals(div and 0.25 or 4, r[{ 2, 3 }])
    end)
  end
  it("addcmul on integers wraps and takes a whole value only; addcdiv takes floats only", function()
    local t = nd.tensor({ 2 ^ 31 - 1, 1 }, "int32")
    assert.same({ -2 ^ 31, 7 }, nd.addcmul(t, nd.tensor({ 1, 2 }, "int32"), nd.tensor({ 1, 3 }, "int32")):totable())
    assert.same({ 4, 10 }, nd.addcmul(nd.tensor({ 1, 1 }, "int64"), nd.tensor({ 1, 3 }, "uint8"),
      nd.tensor({ 1, 1 }, "int64"), 3):totable())
    assert_error_matches(function() nd.addcmul(t, t, t, 0.5) end, "addcmul: value must be an integer for a int32 result")
    assert_error_matches(function() nd.addcdiv(t, t, t) end, "addcdiv: takes float tensors, got int32")
    local bt = nd.tensor({ true }, "bool")
    assert_error_matches(function() nd.addcmul(bt, bt, bt) end, "addcmul: takes numeric tensors, got bool")
  end)
  it("promote, and check their arguments naming the function called", function()
    assert.equals("float64", nd.addcmul(nd.ones(2, "float32"), nd.ones(2), nd.ones(2, "int32")):dtype())
    assert_error_matches(function() nd.addcmul(nd.ones(3), nd.ones(3), nd.ones(2)) end, "addcmul: shapes")
    assert_error_matches(function() nd.ones(3, "int32"):addcmul_(nd.ones(3), nd.ones(3)) end, "addcmul_:")
    assert_error_matches(function() nd.ones(3):addcdiv_(nd.ones(3), nd.ones(3), 1, 2) end,
      "addcdiv_: takes (t, a, b [, value]), got 5 arguments")
    assert_error_matches(function() nd.addcmul(nd.ones(3), nd.ones(3), 2) end, "addcmul")
    assert_error_matches(function() nd.addcmul(nd.ones(3), nd.ones(3), nd.ones(3), "x") end,
      "addcmul: value must be a number, got string")
    assert_error_matches(function() nd.ones(3):expand(2, 3):addcmul_(nd.ones(3), nd.ones(3)) end, "addcmul_:")
    assert_error_matches(function() nd.addcmul(nd.ones(3), nd.ones(3), nd.ones(3), nd.empty(3), 0.5) end,
      "addcmul: nothing may follow out (argument 4), got number")
  end)
end)
