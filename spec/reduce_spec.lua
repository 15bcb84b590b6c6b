-- Reductions checked against plain Lua loops over `get`, for every dtype
-- and for contiguous, transposed, stepped, flipped and expanded inputs.
local nd = require "nd"
local testing = require "nd.testing"

local DTYPES = { "float32", "float64", "int32", "int64", "uint8", "bool" }
local FLOAT = { float32 = true, float64 = true }

local seed = 777
local function rnd()
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 2147483648
end
local function value(dt)
  if dt == "bool" then return rnd() < 0.7 end
  if FLOAT[dt] then return -2 + 4 * rnd() end
  if dt == "uint8" then return math.floor(4 * rnd()) end
  return math.floor(-3 + 7 * rnd())
end
local function make(layout, dt) return make_layout(layout, dt, value) end
local function num(v) if type(v) == "boolean" then return v and 1 or 0 end return v end

-- Reference reductions over a list of numbers.
local REF = {
  sum = function(xs) local s = 0 for _, x in ipairs(xs) do s = s + x end return s end,
  prod = function(xs) local s = 1 for _, x in ipairs(xs) do s = s * x end return s end,
  min = function(xs) local m = xs[1] for _, x in ipairs(xs) do m = math.min(m, x) end return m end,
  max = function(xs) local m = xs[1] for _, x in ipairs(xs) do m = math.max(m, x) end return m end,
  all = function(xs) for _, x in ipairs(xs) do if x == 0 then return false end end return true end,
  any = function(xs) for _, x in ipairs(xs) do if x ~= 0 then return true end end return false end,
}
REF.mean = function(xs) return REF.sum(xs) / #xs end
REF.norm = function(xs) local s = 0 for _, x in ipairs(xs) do s = s + x * x end return math.sqrt(s) end
local function argref(xs, ismax) -- first occurrence
  local bi = 1
  for i = 2, #xs do
    if (ismax and xs[i] > xs[bi]) or (not ismax and xs[i] < xs[bi]) then bi = i end
  end
  return bi
end

local function result_dtype(op, dt)
  if op == "all" or op == "any" then return "bool" end
  if (op == "sum" or op == "prod") and not FLOAT[dt] then return "int64" end
  if (op == "mean" or op == "norm") and not FLOAT[dt] then return "float64" end
  return dt
end

local function close(got, want, dt, what)
  if type(want) == "boolean" then
    assert(got == want, what .. (": expected %s, got %s"):format(tostring(want), tostring(got)))
    return
  end
  local tol = dt == "float32" and 1e-5 or 1e-12
  assert(type(got) == "number" and math.abs(got - want) <= tol * math.max(1, math.abs(want)),
    what .. (": expected %.17g, got %s"):format(want, tostring(got)))
end

describe("reductions against Lua loops", function()
  for _, dt in ipairs(DTYPES) do
    for _, layout in ipairs(LAYOUTS) do
      it(dt .. " " .. layout, function()
        local a = make(layout, dt)
        local all, rows, cols = {}, { {}, {}, {}, {} }, { {}, {}, {}, {}, {} }
        for i = 1, 4 do for j = 1, 5 do
          local x = num(a:get(i, j))
          all[#all + 1] = x; rows[i][j] = x; cols[j][i] = x
        end end
        for op, f in pairs(REF) do
          local rdt = result_dtype(op, dt)
          -- norm takes p first (PyTorch's signature); the others dim first
          local function red(...)
            if op == "norm" then return a:norm(2, ...) end
            return a[op](a, ...)
          end
          close(num(red()), num(f(all)), rdt, op .. " all")
          local r1, r2 = red(1), red(2)
          assert.equals(rdt, r1:dtype())
          assert.same({ 5 }, { r1:size(1) })
          assert.same({ 4, 1 }, { red(2, true):size(1), red(2, true):size(2) })
          if op == "min" or op == "max" then
            local v, ix = a[op](a, 1)
            assert.equals("int64", ix:dtype())
            for j = 1, 5 do
              close(num(v:get(j)), f(cols[j]), rdt, op .. " dim 1 value")
              assert.equals(argref(cols[j], op == "max"), ix:get(j))
            end
            v, ix = a[op](a, 2, true)
            for i = 1, 4 do assert.equals(argref(rows[i], op == "max"), ix:get(i, 1)) end
          else
            for j = 1, 5 do close(num(r1:get(j)) , num(f(cols[j])), rdt, op .. " dim 1") end
            for i = 1, 4 do close(num(r2:get(i)), num(f(rows[i])), rdt, op .. " dim 2") end
            local r12 = red({ 1, 2 })
            assert.equals(0, r12:dim())
            close(num(r12:item()), num(f(all)), rdt, op .. " dims {1,2}")
          end
        end
        if dt ~= "bool" then
          assert.equals(argref(all, true), a:argmax())
          assert.equals(argref(all, false), a:argmin())
          local am = a:argmax(2)
          for i = 1, 4 do assert.equals(argref(rows[i], true), am:get(i)) end
          local an = a:argmin(1, true)
          assert.same({ 1, 5 }, { an:size(1), an:size(2) })
          for j = 1, 5 do assert.equals(argref(cols[j], false), an:get(1, j)) end
        end
      end)
    end
  end
end)

describe("reduction rules", function()
  it("result dtypes and Lua values", function()
    assert.equals("number", type(nd.ones(3, "int32"):sum()))
    assert.equals("boolean", type(nd.ones(3):all()))
    assert.equals("int64", nd.ones(2, 3, "uint8"):sum(1):dtype())
    assert.equals("int64", nd.ones(2, 3, "bool"):prod(2):dtype())
    assert.equals("float32", nd.ones(2, 3, "float32"):sum(1):dtype())
    assert.equals("float64", nd.ones(2, 3, "int32"):mean(1):dtype())
    assert.equals("float64", nd.ones(2, 3, "int64"):norm(2, 2):dtype())
    assert.equals(600, nd.full({ 3 }, 200, "uint8"):sum()) -- no uint8 wrap
  end)
  it("empty tensors", function()
    local e = nd.empty(0, 3)
    assert.equals(0, e:sum()); assert.equals(1, e:prod())
    assert.is_true(e:all()); assert.is_false(e:any()); assert.equals(0, e:norm())
    assert.same({ 0, 0, 0 }, e:sum(1):totable())
    assert.equals(0, e:sum(2):numel())
    assert_error_matches(function() e:max() end, "max", "empty")
    assert_error_matches(function() e:min(1) end, "min", "size-0")
    assert_error_matches(function() e:argmax() end, "argmax")
    assert.equals(0, e:max(2):numel()) -- over a non-empty dim of an empty tensor
  end)
  it("min/max of every element, long and strided, every dtype, NaN anywhere", function()
    local g = nd.generator(3)
    for _, dt in ipairs({ "float32", "float64", "int32", "int64", "uint8", "bool" }) do
      local base = g:randint(0, 200, { 3000 }):to(dt)
      for _, t in ipairs({ base, base:view(30, 100):t(), base:flip(1), base:view(60, 50):narrow(2, 3, 40) }) do
        local lo, hi = math.huge, -math.huge
        local flat = t:contiguous():view(-1)
        for k = 1, flat:numel() do
          local v = flat:get(k)
          if dt == "bool" then v = v and 1 or 0 end
          lo, hi = math.min(lo, v), math.max(hi, v)
        end
        local mn, mx = t:min(), t:max()
        if dt == "bool" then mn, mx = mn and 1 or 0, mx and 1 or 0 end
        assert.equals(lo, mn, dt); assert.equals(hi, mx, dt)
      end
      if dt == "float32" or dt == "float64" then
        for _, at in ipairs({ 1, 17, 1024, 2999, 3000 }) do
          local x = base:clone(); x[at] = 0 / 0
          assert.is_true(x:min() ~= x:min(), "NaN at " .. at)
          assert.is_true(x:max() ~= x:max(), "NaN at " .. at)
        end
        local z = nd.tensor({ 0.0, tonumber("-0.0") }, dt) -- a -0.0 literal is +0 in Lua 5.1
        assert.equals(1 / 0.0, 1 / z:min()) -- the first of equal zeros
        assert.equals(-1 / 0.0, 1 / z:flip(1):min())
      end
    end
  end)
  it("NaN propagates through min/max; argmax picks it", function()
    local x = nd.tensor({ 1, 0 / 0, 3 })
    assert.is_true(x:max() ~= x:max())
    assert.is_true(x:min() ~= x:min())
    assert.equals(2, x:argmax())
    assert.equals(2, x:argmin())
    local v, i = nd.tensor({ { 1, 0 / 0 }, { 2, 3 } }):max(2)
    assert.is_true(v:get(1) ~= v:get(1))
    assert.same({ 2, 2 }, i:totable())
  end)
  it("0-d tensors and values known from NumPy", function()
    assert.equals(3.5, nd.tensor(3.5):sum())
    assert.equals(1, nd.tensor(3.5):argmax())
    local x = nd.arange(1, 13, "float64"):view(3, 4)
    -- np.linalg.norm(x), np.linalg.norm(x, axis=0), x.mean(axis=1), x.prod(axis=0)
    assert_close(25.495097567963924, x:norm(), 1e-15)
    assert_close({ 10.344080432788601, 11.832159566199232, 13.379088160259652, 14.966629547095765 },
      x:norm(2, 1):totable(), 1e-15)
    assert_close({ 2.5, 6.5, 10.5 }, x:mean(2):totable(), 1e-15)
    assert_close({ 45, 120, 231, 384 }, x:prod(1):totable(), 0)
  end)
  it("integer sums wrap in int64, not in double", function()
    local big = nd.tensor({ 2 ^ 62, 2 ^ 62 }, "int64")
    local s = big:sum(1)
    assert.equals("int64", s:dtype())
    assert.is_true(nd.equal(s, nd.tensor(-2 ^ 63, "int64")))
  end)
  it("bad dims raise", function()
    local a = nd.ones(2, 3)
    assert_error_matches(function() a:sum(3) end, "sum", "dim 3")
    assert_error_matches(function() a:sum({ 1, 1 }) end, "sum", "more than once")
    assert_error_matches(function() a:max({ 1, 2 }) end, "max", "one dim")
    assert_error_matches(function() a:argmin(0) end, "argmin", "dim 0")
  end)
end)

describe("large reductions", function()
  it("float32 sums of 16M elements stay accurate", function()
    local a = nd.full({ 4096, 4096 }, 0.1, "float32")
    local want = 16777216 * nd.tensor({ 0.1 }, "float32"):get(1)
    assert.is_true(math.abs(a:sum() - want) / want < 1e-7)
    assert.is_true(math.abs(a:t():sum() - want) / want < 1e-7)
    local s1 = a:sum(1)
    assert.is_true(math.abs(s1:get(77) - want / 4096) / (want / 4096) < 1e-6)
    assert.is_true(math.abs(a:mean() - want / 16777216) < 1e-9)
  end)
  it("float32 column sums beat a float32 running sum (NumPy's a.sum(axis=0))", function()
    -- 100000 x float32(0.1) per column: exactly 10000.000149011612; NumPy's
    -- running sum down each column gives 9998.557, 1.44 off; nd's float32
    -- sums of 8 rows added in double are a few float32 ulps (1e-3) off
    local exact = 100000 * nd.tensor({ 0.1 }, "float32"):get(1)
    local a = nd.full({ 100000, 3 }, 0.1, "float32")
    for _, th in ipairs({ 1, 2 }) do
      local n = nd.get_num_threads()
      nd.set_num_threads(th)
      local s, m = a:sum(1), a:mean(1)
      nd.set_num_threads(n)
      for j = 1, 3 do
        assert.is_true(math.abs(s:get(j) - exact) < 5e-3)
        assert.is_true(math.abs(m:get(j) - exact / 100000) < 5e-8)
      end
    end
  end)
  it("results are identical for every thread count", function()
    local n = nd.get_num_threads()
    local a = nd.rand(700, 900, "float32")
    local results = {}
    for _, th in ipairs({ 1, 2, 3 }) do
      nd.set_num_threads(th)
      results[th] = { a:sum(), a:t():sum(), a:sum(1), a:sum(2), a:norm(), a:max(), a:argmax(),
        a:max(1) }
    end
    nd.set_num_threads(n)
    for th = 2, 3 do
      for k, v in ipairs(results[1]) do
        if type(v) == "number" then assert.equals(v, results[th][k])
        else assert.is_true(nd.equal(v, results[th][k])) end
      end
    end
  end)
  it("max/min/argmax/argmin down the columns keep the first of equals and NaNs at any thread count", function()
    local n = nd.get_num_threads()
    local cases = {}
    -- above 8 MB, so threads split the rows of these as well as the columns
    for _, dt in ipairs({ "float32", "float64", "int32" }) do
      local es = dt == "float64" and 1 or 2
      local a = nd.randint(0, 3, { 1100 * es, 1000 }):to(dt)
      local b = nd.randint(0, 3, { 2, 600 * es, 900 }):to(dt)
      if dt ~= "int32" then
        a:set(1050, 7, 0 / 0); a:set(20, 8, 0 / 0); a:set(900, 8, 0 / 0)
        b:set(2, 500, 9, 0 / 0)
      end
      cases[#cases + 1] = { a, 1 }
      cases[#cases + 1] = { b, 2 }
    end
    for _, c in ipairs(cases) do
      local t, d = c[1], c[2]
      local results = {}
      for _, th in ipairs({ 1, 2, 3 }) do
        nd.set_num_threads(th)
        local v1, i1 = t:max(d)
        local v2, i2 = t:min(d)
        results[th] = { v1, i1, v2, i2, t:argmax(d), t:argmin(d) }
      end
      nd.set_num_threads(n)
      for th = 2, 3 do
        for k, v in ipairs(results[1]) do
          assert.is_true(nd.isclose(v, results[th][k], 0, 0, true):all(), "thread count " .. th .. " result " .. k)
        end
      end
      if d == 1 then
        for _, col in ipairs({ 1, 7, 8, 1000 }) do
          local best, bi = t:get(1, col), 1
          for r = 2, t:size(1) do
            local x = t:get(r, col)
            if best == best and (x ~= x or x > best) then best, bi = x, r end
          end
          assert.equals(bi, results[2][2]:get(col))
          assert.equals(bi, results[2][5]:get(col))
        end
      end
    end
  end)
  it("large strided reductions agree with small loops", function()
    local a = nd.rand(300, 500)
    local s = a:t():sum(2) -- per column of a
    local want = 0
    for i = 1, 300 do want = want + a:get(i, 17) end
    assert_close(want, s:get(17), 1e-12)
    local v, i = a:max(1)
    local best, bi = -1, 0
    for r = 1, 300 do if a:get(r, 250) > best then best, bi = a:get(r, 250), r end end
    assert.same({ best, bi }, { v:get(250), i:get(250) })
  end)
end)

-- Full reductions of float16/bfloat16 tensors over 2 x 65536 elements go
-- through float64 blocks (reduce.c's half_blocks) instead of a float32
-- copy of the whole input: the same values as the float32 copy's
-- reduction rounded once, in every layout, NaN and overflow included.
describe("big 16-bit full reductions", function()
  local function round(v, dt) return nd.tensor({ v }, "float64"):to(dt)[1] end
  for _, dt in ipairs({ "float16", "bfloat16" }) do
    it(dt .. " in blocks equals the float32 reduction rounded once", function()
      local g = nd.generator(5)
      for _, shape in ipairs({ { 300000 }, { 3, 100000 }, { 700, 500 }, { 2, 3, 40000 } }) do
        local x = g:normal(0, 1, shape, "float32"):to(dt)
        local views = { x, x:flip(1), x:view(-1):narrow(1, 2, 140001) }
        if #shape > 1 then views[#views + 1] = x:transpose(1, #shape) end
        for _, v in ipairs(views) do
          local f = v:float()
          for _, op in ipairs({ "sum", "mean", "min", "max", "norm" }) do
            assert.equals(round(f[op](f), dt), v[op](v))
          end
          local p = nd.where(v:gt(2), 2, nd.where(v:lt(-2), 0.5, 1)):to(dt)
          assert.equals(round(p:float():prod(), dt), p:prod()) -- exact: powers of 2
          assert.is_true(v:gt(-100):all())
          assert.is_false(v:gt(100):any())
        end
      end
    end)
    it(dt .. ": NaN, overflow to inf and keepdim", function()
      local y = nd.zeros({ 200000 }, dt)
      y[7] = 0 / 0
      for _, op in ipairs({ "sum", "min", "max", "mean" }) do
        local r = y[op](y)
        assert.is_true(r ~= r, op)
      end
      local big = nd.full({ 400, 500 }, 60000, dt)
      assert.equals(dt == "float16" and math.huge or round(60000 * 200000, dt), big:sum())
      assert.equals(round(60000, dt), big:mean())
      local k = big:sum({ 1, 2 }, true)
      assert.same({ 1, 1 }, k:size())
      assert.equals(dt, k:dtype())
      assert.equals(nd.zeros({ 300000 }, dt):sum(), 0)
    end)
  end
  it("walks one float64 block, not a float32 copy of the input", function()
    local n = 1024 * 1024
    local x = nd.generator(9):normal(0, 1, { n }, "float32"):to("float16")
    local r
    local count, bytes = testing.allocations(function() r = x:sum() end)
    -- the block (64 Ki float64) and the result; the float32 route made
    -- 4 allocations of 4 MiB, the old walk (a block, a 0-d result and
    -- accumulators per 64 Ki elements) 64 of 8 MiB
    assert(bytes < 4 * n and count <= 2,
      ("sum of %d float16 made %d allocations of %d bytes"):format(n, count, bytes))
    assert.equals(round(x:float():sum(), "float16"), r)
  end)
end)
