-- Reductions along a short dim (2..17 elements) in every layout, against
-- Lua loops that model the documented accumulation to the bit: a float sum
-- (or product, or sum of squares) of a run is taken in double over 8 lanes
-- (element i in lane i % 8; when the run is unit-stride, the elements past
-- its last whole 8 in lane 1), the lanes combined pairwise ((1+2)+(3+4)) +
-- ((5+6)+(7+8)), then converted to the result dtype. min/max and
-- argmin/argmax: a NaN is the extreme (the first NaN wins), otherwise the
-- first of equal elements.
local nd = require "nd"

local DTYPES = { "float32", "float64", "int32", "int64", "uint8", "bool" }
local FLOAT = { float32 = true, float64 = true }
local KS = { 1, 2, 3, 4, 5, 8, 16, 17 }
local R = 259 -- rows: two blocks of 128 and a part

local seed = 4242
local function rnd()
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 2147483648
end
local NEG0 = tonumber("-0.0") -- a -0.0 literal is +0 in Lua 5.1
local TIES = { -1, 0, NEG0, 0.5, 1 }
local function value(dt)
  if dt == "bool" then return rnd() < 0.6 end
  if FLOAT[dt] then
    if rnd() < 0.4 then return TIES[1 + math.floor(rnd() * #TIES)] end
    return -2 + 4 * rnd()
  end
  if dt == "uint8" then return math.floor(4 * rnd()) end
  return math.floor(-3 + 7 * rnd())
end
local function num(v) if type(v) == "boolean" then return v and 1 or 0 end return v end

-- Rows of k values; float rows get NaNs and infinities in a few rows (first,
-- last, middle, two, all) while the others stay finite.
-- (The references read the elements back from the tensor: a float32 holds
-- a rounded double.)
local function make_rows(dt, k, nrows)
  local rows = {}
  for i = 1, nrows do
    rows[i] = {}
    for j = 1, k do rows[i][j] = value(dt) end
  end
  if FLOAT[dt] then
    local nan, inf = 0 / 0, 1 / 0
    rows[3][1] = nan
    rows[5][k] = nan
    rows[7][math.floor((k + 1) / 2)] = nan
    rows[9][k] = nan; rows[9][1] = nan
    for j = 1, k do rows[11][j] = nan end
    rows[13][k] = inf; rows[13][1] = -inf
    for j = 1, k do rows[15][j] = (j % 2 == 0) and NEG0 or 0 end -- equal zeros
    if nrows >= 130 then rows[130][math.floor((k + 1) / 2)] = nan end -- in the second block
  end
  return rows
end

local function transpose(rows)
  local t = {}
  for j = 1, #rows[1] do
    t[j] = {}
    for i = 1, #rows do t[j][i] = rows[i][j] end
  end
  return t
end
local function reversed(rows)
  local t = {}
  for i = 1, #rows do
    t[i] = {}
    for j = 1, #rows[1] do t[i][j] = rows[#rows + 1 - i][#rows[1] + 1 - j] end
  end
  return t
end

-- Layouts of an {R, k} tensor whose element (i, j) is rows[i][j]; unit:
-- whether its dim 2 is unit-stride (the lanes rule above). The transposed
-- one reduces down rows in memory instead, another order of rounding
-- ("columns", checked to a tolerance).
local LAYOUTS = {
  contiguous = function(rows, dt) return nd.tensor(rows, dt), true end,
  transposed = function(rows, dt) return nd.tensor(transpose(rows), dt):t(), "columns" end,
  stepped = function(rows, dt)
    local r, k = #rows, #rows[1]
    local z = nd.zeros(2 * r, 2 * k + 1, dt)
    local v = z[{ { 1, 2 * r, 2 }, { 2, 2 * k + 1, 2 } }]
    for i = 1, r do for j = 1, k do v:set(i, j, rows[i][j]) end end
    return v, k == 1
  end,
  flipped = function(rows, dt) return nd.tensor(reversed(rows), dt):flip({ 1, 2 }), #rows[1] == 1 end,
  narrowed = function(rows, dt)
    local r, k = #rows, #rows[1]
    local z = nd.zeros(r, k + 3, dt)
    local v = z:narrow(2, 2, k)
    for i = 1, r do for j = 1, k do v:set(i, j, rows[i][j]) end end
    return v, true
  end,
  expanded = function(rows, dt) -- every row is rows[1]
    local r = #rows
    for i = 2, r do rows[i] = rows[1] end
    return nd.tensor({ rows[1] }, dt):expand(r, #rows[1]), true
  end,
}
local LAYOUT_NAMES = { "contiguous", "transposed", "stepped", "flipped", "narrowed", "expanded" }

-- run_'s lanes and tree over xs (Lua numbers, doubles).
local function lanes(xs, unit, id, step, comb)
  local n, l = #xs, { id, id, id, id, id, id, id, id }
  local n8 = unit and n - n % 8 or n
  for i = 0, n - 1 do
    local j = i < n8 and i % 8 or 0
    l[j + 1] = step(l[j + 1], xs[i + 1])
  end
  return comb(comb(comb(l[1], l[2]), comb(l[3], l[4])), comb(comb(l[5], l[6]), comb(l[7], l[8])))
end
local function add(a, b) return a + b end
local function mul(a, b) return a * b end
local function sq(a, x) return a + x * x end

local function isnan(x) return x ~= x end
local function argref(xs, ismax)
  local bi = 1
  for i = 2, #xs do
    local b, x = xs[bi], xs[i]
    if not isnan(b) and (isnan(x) or (ismax and x > b) or (not ismax and x < b)) then bi = i end
  end
  return bi
end
local function extreme(xs, ismax) -- a NaN anywhere gives NaN
  local m = xs[1]
  for i = 2, #xs do
    local x = xs[i]
    if isnan(x) or isnan(m) then m = 0 / 0
    elseif (ismax and x > m) or (not ismax and x < m) then m = x end
  end
  return m
end

local function result_dtype(op, dt)
  if op == "all" or op == "any" then return "bool" end
  if (op == "sum" or op == "prod") and not FLOAT[dt] then return "int64" end
  if (op == "mean" or op == "norm" or op == "norminf" or op == "normninf") and not FLOAT[dt] then
    return "float64"
  end
  return dt
end

-- The expected value of op over one row xs (numbers).
local function expect(op, xs, dt, unit)
  local f = FLOAT[dt]
  if op == "sum" then return f and lanes(xs, unit, 0, add, add) or lanes(xs, false, 0, add, add) end
  if op == "mean" then return lanes(xs, unit or not f, 0, add, add) / #xs end
  if op == "prod" then return lanes(xs, unit, 1, mul, mul) end
  if op == "norm" then return math.sqrt(lanes(xs, unit, 0, sq, add)) end
  if op == "all" then for _, x in ipairs(xs) do if x == 0 then return false end end return true end
  if op == "any" then for _, x in ipairs(xs) do if x ~= 0 then return true end end return false end
  local a = {}
  for i, x in ipairs(xs) do a[i] = math.abs(x) end
  if op == "norminf" then return extreme(a, true) end
  return extreme(a, false) -- normninf
end

local function reduce(t, op, keep)
  if op == "norm" then return t:norm(2, 2, keep) end
  if op == "norminf" then return t:norm(math.huge, 2, keep) end
  if op == "normninf" then return t:norm(-math.huge, 2, keep) end
  return t[op](t, 2, keep)
end

-- got (R results) equals want (a Lua list) element for element: same
-- value, NaN where NaN, as the result dtype rounds it (or within tol, a
-- relative and an absolute tolerance, when given).
local function check(got, want, rdt, what, tol)
  assert.equals(rdt, got:dtype(), what)
  local w = rdt == "bool" and nd.tensor(want, "bool") or nd.tensor(want, "float64"):to(rdt)
  got = got:reshape(#want)
  if rdt == "bool" or rdt == "int64" then
    if nd.equal(got, w) then return end
  elseif nd.isclose(got, w, tol and tol[1] or 0, tol and tol[2] or 0, true):all() then
    return
  end
  for i = 1, #want do
    local g, e = got:get(i), w:get(i)
    if not (g == e or (g ~= g and e ~= e)) then
      error(("%s: row %d: expected %.17g, got %.17g"):format(what, i, num(e), num(g)), 2)
    end
  end
  error(what .. ": results differ", 2)
end

local OPS = { "sum", "mean", "prod", "norm", "norminf", "normninf", "all", "any" }

describe("reductions along a short dim", function()
  for _, dt in ipairs(DTYPES) do
    for _, k in ipairs(KS) do
      it(("%s, %d elements, every layout"):format(dt, k), function()
        for _, lname in ipairs(LAYOUT_NAMES) do
          local rows = make_rows(dt, k, R)
          local t, unit = LAYOUTS[lname](rows, dt)
          local nums = {}
          for i = 1, R do
            nums[i] = {}
            for j = 1, k do nums[i][j] = num(t:get(i, j)) end
          end
          for _, op in ipairs(OPS) do
            local rdt = result_dtype(op, dt)
            local want = {}
            for i = 1, R do want[i] = expect(op, nums[i], dt, unit == true) end
            local what = ("%s %s k=%d %s"):format(op, dt, k, lname)
            -- float32 columns are summed 8 rows at a time in float32
            local tol = unit == "columns" and (dt == "float32" and { 1e-6, 4e-5 } or { 1e-14, 1e-13 })
              or nil
            check(reduce(t, op), want, rdt, what, tol)
            local kd = reduce(t, op, true)
            assert.same({ R, 1 }, { kd:size(1), kd:size(2) }, what .. " keepdim")
            check(kd, want, rdt, what .. " keepdim", tol)
          end
        end
      end)
    end
  end
end)

describe("min/max/argmin/argmax along a short dim", function()
  for _, dt in ipairs(DTYPES) do
    for _, k in ipairs(KS) do
      it(("%s, %d elements, every layout"):format(dt, k), function()
        for _, lname in ipairs(LAYOUT_NAMES) do
          local rows = make_rows(dt, k, R)
          local t = LAYOUTS[lname](rows, dt)
          local vals = {}
          for i = 1, R do
            vals[i] = {}
            for j = 1, k do vals[i][j] = t:get(i, j) end
          end
          for _, op in ipairs({ "min", "max" }) do
            local ismax = op == "max"
            local what = ("%s %s k=%d %s"):format(op, dt, k, lname)
            local v, ix = t[op](t, 2)
            local vk, ixk = t[op](t, 2, true)
            local ai = t[ismax and "argmax" or "argmin"](t, 2)
            local aik = t[ismax and "argmax" or "argmin"](t, 2, true)
            assert.same({ R }, { ix:size(1) }, what)
            assert.same({ R, 1 }, { ixk:size(1), ixk:size(2) }, what .. " keepdim")
            assert.same({ R, 1 }, { aik:size(1), aik:size(2) }, what .. " keepdim")
            assert.equals(dt, v:dtype())
            assert.equals("int64", ix:dtype())
            for i = 1, R do
              local xs = {}
              for j = 1, k do xs[j] = num(vals[i][j]) end
              local bi = argref(xs, ismax)
              local want = vals[i][bi]
              local got = v:get(i)
              assert(ix:get(i) == bi and ixk:get(i, 1) == bi and ai:get(i) == bi and aik:get(i, 1) == bi,
                ("%s: row %d: expected index %d, got %s %s %s %s"):format(what, i, bi,
                  tostring(ix:get(i)), tostring(ixk:get(i, 1)), tostring(ai:get(i)), tostring(aik:get(i, 1))))
              assert(got == want or (isnan(num(got)) and isnan(num(want))),
                ("%s: row %d: expected %s, got %s"):format(what, i, tostring(want), tostring(got)))
              if want == 0 and dt ~= "bool" then -- the very element: -0 or +0
                assert.equals(1 / want, 1 / got, what .. " sign of zero, row " .. i)
              end
              assert.is_true(vk:get(i, 1) == got or isnan(num(got)))
            end
          end
        end
      end)
    end
  end
end)

describe("short-dim reductions of 3-D tensors", function()
  it("reduce the last and a middle dim of a batch, every dtype", function()
    for _, dt in ipairs(DTYPES) do
      for _, k in ipairs({ 3, 8 }) do
        local B = 3
        local data = {}
        for b = 1, B do data[b] = make_rows(dt, k, 40) end
        local t = nd.tensor(data, dt)
        local s, a = t:sum(3), t:argmax(3)
        local s2, a2 = t:permute(1, 3, 2):sum(2), t:permute(1, 3, 2):argmax(2)
        for b = 1, B do
          for i = 1, 40 do
            local xs = {}
            for j = 1, k do xs[j] = num(t:get(b, i, j)) end
            local e = FLOAT[dt] and lanes(xs, true, 0, add, add) or lanes(xs, false, 0, add, add)
            local g = s:get(b, i)
            if FLOAT[dt] then e = nd.tensor({ e }, "float64"):to(dt):get(1) end
            assert(g == e or (isnan(g) and isnan(e)), ("%s sum(3) [%d][%d]: %s vs %s"):format(dt, b, i, g, e))
            assert.equals(argref(xs, true), a:get(b, i))
            assert.equals(argref(xs, true), a2:get(b, i))
            local g2 = s2:get(b, i) -- the permuted view: dim 2 of stride 1 is the rows
            assert(math.abs(g2 - e) <= 1e-5 * math.max(1, math.abs(e)) or (isnan(g2) and isnan(e)),
              ("%s permuted sum(2) [%d][%d]: %s vs %s"):format(dt, b, i, g2, e))
          end
        end
      end
    end
  end)
  it("two short reduced dims add into each result in order", function()
    local g = nd.generator(5)
    for _, dt in ipairs({ "float64", "int32" }) do
      local t = g:randint(-5, 6, { 30, 3, 5 }):to(dt)
      local v = t[{ {}, {}, { 1, 5, 2 } }] -- {30, 3, 3}: dims 2 and 3 do not merge
      local s = v:sum({ 2, 3 })
      for i = 1, 30 do
        local e = 0
        for a = 1, 3 do for b = 1, 3 do e = e + v:get(i, a, b) end end
        assert.equals(e, s:get(i))
      end
    end
  end)
end)

describe("short-dim reductions with threads", function()
  it("give the same results for every thread count, split along the rows", function()
    local n = nd.get_num_threads()
    local g = nd.generator(9)
    for _, dt in ipairs({ "float32", "float64", "int32" }) do
      for _, k in ipairs({ 2, 3, 8, 16 }) do
        local t = g:rand({ 20000, k }):mul(100):to(dt)
        if FLOAT[dt] then t:set(777, 1, 0 / 0); t:set(19999, k, 0 / 0) end
        local res = {}
        for _, th in ipairs({ 1, 2, 3 }) do
          nd.set_num_threads(th)
          local v, i = t:min(2)
          res[th] = { t:sum(2), t:mean(2), t:argmax(2), v, i, t:norm(2, 2) }
        end
        nd.set_num_threads(n)
        for th = 2, 3 do
          for j, r in ipairs(res[1]) do
            assert.is_true(nd.isclose(r, res[th][j], 0, 0, true):all(),
              ("%s k=%d result %d at %d threads"):format(dt, k, j, th))
          end
        end
        -- and the lanes rule, on a few rows
        for _, i in ipairs({ 1, 777, 12345, 20000 }) do
          local xs = {}
          for j = 1, k do xs[j] = t:get(i, j) end
          local e = FLOAT[dt] and lanes(xs, true, 0, add, add) or lanes(xs, false, 0, add, add)
          e = nd.tensor({ e }, "float64"):to(FLOAT[dt] and dt or "int64"):get(1)
          local got = res[1][1]:get(i)
          assert(got == e or (isnan(got) and isnan(e)), ("%s k=%d row %d"):format(dt, k, i))
          assert.equals(argref(xs, true), res[1][3]:get(i))
        end
      end
    end
  end)
end)

describe("short-dim reductions of empty and one-element shapes", function()
  it("give empty results, identities, or the element", function()
    local e = nd.empty(0, 3)
    assert.equals(0, e:sum()); assert.equals(0, e:sum(2):numel())
    assert.same({ 0, 0, 0 }, e:sum(1):totable())
    assert.equals(0, e:mean(2):numel()); assert.equals(0, e:argmax(2):numel())
    local v, i = e:min(2)
    assert.equals(0, v:numel()); assert.equals(0, i:numel())
    local z = nd.empty(4, 0)
    assert.same({ 0, 0, 0, 0 }, z:sum(2):totable())
    assert.same({ 1, 1, 1, 1 }, z:prod(2):totable())
    assert_error_matches(function() z:argmin(2) end, "argmin", "size-0")
    local one = nd.tensor({ { 2.5 }, { -1 }, { 0 / 0 } })
    assert.same({ 2.5, -1 }, { one:sum(2):get(1), one:sum(2):get(2) })
    assert.is_true(one:mean(2):get(3) ~= one:mean(2):get(3))
    assert.same({ 1, 1, 1 }, one:argmax(2):totable())
    local row = nd.tensor({ { 3, 1, 2 } })
    assert.same({ 6 }, row:sum(2):totable())
    assert.same({ 2 }, row:argmin(2):totable())
  end)
end)
