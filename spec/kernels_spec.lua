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

describe("min/max/argmin/argmax down the columns", function()
  -- Reference: the plain per-output scan over dim d of a 3-D tensor.
  local function ref(t, d, ismax)
    local s = t:size()
    local vals, idx = {}, {}
    local o = {}
    for i = 1, 3 do o[i] = i == d and 1 or s[i] end
    for a = 1, o[1] do for b = 1, o[2] do for c = 1, o[3] do
      local best, bi
      for k = 1, s[d] do
        local ix = { a, b, c }
        ix[d] = k
        local x = t[ix]
        if bi == nil or (best == best and (x ~= x or (ismax and x > best) or (not ismax and x < best))) then
          best, bi = x, k
        end
      end
      vals[#vals + 1], idx[#idx + 1] = best, bi
    end end end
    return vals, idx
  end

  for _, dt in ipairs({ "float32", "float64", "int32", "int64", "uint8" }) do
    it("matches a per-output scan along each dim, " .. dt, function()
      -- few distinct values (ties), NaNs in floats, odd sizes, >CW columns
      local t = nd.rand(5, 3, 601):mul(4):floor():to(dt)
      if dt:sub(1, 5) == "float" then
        t[{ 2, 1, 7 }] = 0 / 0
        t[{ 4, 1, 7 }] = 0 / 0
        t[{ 3, 2, 600 }] = 0 / 0
        t[{ 1, 3, 1 }] = 0 / 0
      end
      for _, view in ipairs({ t, t:flip(1), t:narrow(3, 2, 599) }) do
        for d = 1, 3 do
          for _, ismax in ipairs({ true, false }) do
            local vals, idx = ref(view, d, ismax)
            local v, i
            if ismax then v, i = view:max(d) else v, i = view:min(d) end
            local ai = ismax and view:argmax(d) or view:argmin(d)
            local fv, fi, fa = v:contiguous():view(-1), i:contiguous():view(-1),
              ai:contiguous():view(-1)
            for k = 1, #vals do
              if not (same(fv[k], vals[k]) and fi[k] == idx[k] and fa[k] == idx[k]) then
                error(("%s dim %d %s at %d: got %s@%s, want %s@%s"):format(dt, d,
                  ismax and "max" or "min", k, fv[k], fi[k], vals[k], idx[k]))
              end
            end
          end
        end
      end
    end)
  end
  it("agree with the scan along rows past 2048 columns, on 1 and 2 threads", function()
    -- one thread takes 2048 columns per task, more threads 512
    local n = nd.get_num_threads()
    for _, dt in ipairs({ "float32", "float64", "int32" }) do
      local t = nd.rand(7, 4100):mul(4):floor():to(dt) -- ties
      if dt ~= "int32" then
        t[{ 3, 2049 }] = 0 / 0
        t[{ 5, 2049 }] = 0 / 0
        t[{ 6, 4100 }] = 0 / 0
      end
      local tt = t:t():contiguous()
      for _, th in ipairs({ 1, 2 }) do
        for _, op in ipairs({ "max", "min" }) do
          nd.set_num_threads(th)
          local v, i = t[op](t, 1)
          nd.set_num_threads(n)
          local w, j = tt[op](tt, 2)
          assert.is_true(nd.equal(i, j))
          for k = 1, 4100 do
            if not same(v[k], w[k]) then error(("%s %s col %d: %s, want %s"):format(dt, op, k, v[k], w[k])) end
          end
        end
      end
    end
  end)
end)

describe("mixed-stride elementwise (tiled traversal)", function()
  it("gives the same result as contiguous operands at sizes off the tile grid", function()
    for _, sz in ipairs({ { 300, 130 }, { 257, 65 }, { 16, 1025 }, { 1031, 17 } }) do
      for _, dt in ipairs({ "float32", "float64", "int32", "uint8" }) do
        local a = nd.rand(sz[2], sz[1]):mul(100):to(dt)
        local b = nd.rand(sz[1], sz[2]):mul(100):to(dt)
        local want = nd.add(a:t():contiguous(), b)
        assert.is_true(nd.equal(nd.add(a:t(), b), want))
        assert.is_true(nd.equal(nd.add(b, a:t()), want))
        local o = nd.empty(sz[2], sz[1], dt):t() -- a transposed out
        nd.add(a:t(), b, o)
        assert.is_true(nd.equal(o, want))
      end
    end
    -- a batch dim outside the tiles
    local a, b = nd.rand(3, 70, 300, "float32"), nd.rand(3, 300, 70, "float32")
    assert.is_true(nd.equal(a:transpose(2, 3) + b, a:transpose(2, 3):contiguous() + b))
  end)
end)

describe("where on every dtype, contiguous", function()
  it("picks a where the mask is true, b elsewhere (also into a as out)", function()
    local n = 1037
    local m = nd.rand(n):gt(0.5)
    for _, dt in ipairs({ "uint8", "bool", "int32", "int64", "float32", "float64" }) do
      local a = nd.rand(n):mul(200):to(dt)
      local b = nd.rand(n):mul(200):to(dt)
      if dt == "bool" then a, b = nd.rand(n):gt(0.5), nd.rand(n):gt(0.5) end
      local r = nd.where(m, a, b)
      for i = 1, n do
        local want
        if m[i] then want = a[i] else want = b[i] end
        assert.equals(want, r[i])
      end
      local a2 = a:clone()
      nd.where(m, a2, b, a2)
      assert.is_true(nd.equal(a2, r))
    end
  end)
end)

describe("reductions down the columns (row blocks)", function()
  it("sum and mean add the rows in order: float32 8, 4, 2, 1 rows at a time in float32", function()
    local function f32(x) return nd.tensor({ x }, "float32")[1] end
    -- 15 rows (passes of 8, 4, 2, 1) of 2 x 2050 (past a 2048-column block),
    -- too few elements to be cut into parts; float64 adds the rows one by one
    for _, dt in ipairs({ "float32", "float64" }) do
      local t = nd.rand(15, 2, 2050, dt)
      t[{ 3, 2, 2049 }] = 0 / 0
      for _, view in ipairs({ t, t:flip(1) }) do
        local s, m = view:sum(1), view:mean(1)
        for _, ix in ipairs({ { 1, 1 }, { 2, 2050 }, { 2, 2049 }, { 1, 2049 }, { 1, 512 } }) do
          local acc, r = 0, 1
          for _, k in ipairs({ 8, 4, 2, 1 }) do
            local v = 0
            for _ = 1, k do
              if dt == "float32" then v = f32(v + view[{ r, ix[1], ix[2] }]) -- a float32 add, exactly
              else acc = acc + view[{ r, ix[1], ix[2] }] end
              r = r + 1
            end
            acc = acc + v
          end
          assert.is_true(same(s[ix], dt == "float32" and f32(acc) or acc))
          assert.is_true(same(m[ix], dt == "float32" and f32(acc / 15) or acc / 15))
        end
      end
    end
    local i = nd.tensor({ { 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 9 }, { 10, 11, 12 }, { 13, 14, 15 } }, "int64")
    assert.same({ 35, 40, 45 }, i:sum(1):totable())
    assert.same({ 1 * 4 * 7 * 10 * 13, 2 * 5 * 8 * 11 * 14, 3 * 6 * 9 * 12 * 15 }, i:prod(1):totable())
  end)
end)

describe("min/max/argmin/argmax along contiguous rows (vector blocks)", function()
  -- Reference: the scalar scan, NaN wins and the first of equals stays.
  local function ref(xs, ismax)
    local best, bi = xs[1], 1
    for k = 2, #xs do
      if best ~= best then break end
      local x = xs[k]
      if x ~= x or (ismax and x > best) or (not ismax and x < best) then best, bi = x, k end
    end
    return best, bi
  end
  local function num(x) -- bool elements as 0/1
    if type(x) == "boolean" then return x and 1 or 0 end
    return x
  end
  local function check(t, what) -- t: 2-D, rows reduced along dim 2 and whole
    local r, c = t:size(1), t:size(2)
    for _, ismax in ipairs({ true, false }) do
      local v, i
      if ismax then v, i = t:max(2) else v, i = t:min(2) end
      local ai = ismax and t:argmax(2) or t:argmin(2)
      local all = {}
      for row = 1, r do
        local xs = {}
        for k = 1, c do xs[k] = num(t:get(row, k)); all[#all + 1] = xs[k] end
        local wv, wi = ref(xs, ismax)
        if not (same(num(v:get(row)), wv) and i:get(row) == wi and ai:get(row) == wi) then
          error(("%s %s row %d of %d: got %s@%s (arg %s), want %s@%s"):format(what,
            ismax and "max" or "min", row, c, v:get(row), i:get(row), ai:get(row), wv, wi))
        end
      end
      local wv, wi = ref(all, ismax)
      local gi = ismax and t:argmax() or t:argmin()
      local gv = num(ismax and t:max() or t:min())
      if not (gi == wi and same(gv, wv)) then
        error(("%s whole %s: got %s@%s, want %s@%s"):format(what, ismax and "max" or "min",
          gv, gi, wv, wi))
      end
    end
  end

  for _, dt in ipairs({ "float32", "float64", "int32", "int64", "uint8", "bool" }) do
    it("matches the scalar scan at every length and placement, " .. dt, function()
      local isf = dt:sub(1, 5) == "float"
      -- lengths around the vector widths (4..32 lanes, 4 chains) and 512-blocks
      for _, n in ipairs({ 1, 2, 7, 8, 15, 16, 31, 33, 63, 64, 65, 127, 129, 511, 512, 513, 1025, 1600 }) do
        -- few distinct values: ties within and across blocks
        local t = nd.rand(6, n):mul(5):floor():sub(dt == "uint8" and 0 or 2)
        if dt == "bool" then t = t:gt(0) end
        t = t:to(dt)
        if isf then
          t[{ 2, n }] = 0 / 0                     -- NaN last
          t[{ 3, math.max(1, n - 3) }] = 0 / 0    -- NaN late
          if n > 600 then t[{ 3, 520 }] = 0 / 0 end -- in the second block, first
          t[{ 4, 1 }] = 0 / 0                     -- NaN first
          t[{ 5, math.ceil(n / 2) }] = math.huge  -- an extreme in the middle
          t[{ 5, n }] = -math.huge
          t[6]:fill_(-0.0)                         -- signed zeros: the first stays
          for k = 1, n, 3 do t[{ 6, k }] = 0.0 end
        end
        check(t, dt .. " n=" .. n)
        if n > 1 then
          check(t:narrow(2, 2, n - 1), dt .. " offset n=" .. n)
          check(t:flip(2), dt .. " reversed n=" .. n)       -- negative stride
        end
        if n > 2 then check(t[{ {}, { 1, n, 2 } }], dt .. " stepped n=" .. n) end
      end
      if isf then -- all -inf rows, all +inf rows and one extreme per block
        local t = nd.full({ 2, 1100 }, -math.huge, dt)
        t[2]:fill_(math.huge)
        check(t, dt .. " infinities")
        local u = nd.zeros(2, 1100, dt)
        u[{ 1, 700 }] = 5; u[{ 1, 1099 }] = 5; u[{ 2, 3 }] = -5; u[{ 2, 900 }] = -5
        check(u, dt .. " ties across blocks")
      else
        local lo, hi = ({ int32 = { -2 ^ 31, 2 ^ 31 - 1 }, int64 = { -2 ^ 53, 2 ^ 53 },
          uint8 = { 0, 255 }, bool = { 0, 1 } })[dt][1], ({ int32 = { -2 ^ 31, 2 ^ 31 - 1 },
          int64 = { -2 ^ 53, 2 ^ 53 }, uint8 = { 0, 255 }, bool = { 0, 1 } })[dt][2]
        local t = nd.full({ 2, 700 }, lo, dt)
        t[2]:fill_(hi)
        check(t, dt .. " extreme values")
      end
    end)
  end
end)

describe("transposing copies at sizes off the tile grid", function()
  -- Tiles are 16x16 / 8x8 (AVX-512), 8x16 / 4x8 (AVX2), 16x64 bytes; edges
  -- use tiles flush with the last row or column, overlapping done work.
  local sizes = { 1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 100, 130 }
  it("t():contiguous() equals the element-by-element transpose, every dtype", function()
    for _, dt in ipairs({ "float32", "float64", "int32", "int64", "uint8", "bool" }) do
      for _, r in ipairs(sizes) do
        for _, c in ipairs({ 1, 9, 16, 17, 64, 65, 71, 130 }) do
          local a = nd.rand(r, c):mul(200):sub(100)
          if dt == "bool" then a = a:gt(0) end
          a = a:to(dt)
          local t = a:t():contiguous()
          assert.same({ c, r }, t:size())
          for i = 1, c do
            for j = 1, r do
              if t:get(i, j) ~= a:get(j, i) then
                error(("%s %dx%d: t[%d][%d] = %s, want %s"):format(dt, r, c, i, j,
                  tostring(t:get(i, j)), tostring(a:get(j, i))))
              end
            end
          end
        end
      end
    end
  end)
  it("large transposes (streaming stores) and views of them agree", function()
    for _, sz in ipairs({ { 1000, 1000 }, { 1031, 1017 }, { 1024, 1030 } }) do
      for _, dt in ipairs({ "float32", "float64", "uint8" }) do
        local a = nd.arange(sz[1] * sz[2]):view(sz[1], sz[2]):to(dt)
        local t = a:t():contiguous()
        -- every element: t[i][j] == a[j][i] through a second transpose back
        assert.is_true(nd.equal(t:t():contiguous(), a))
        assert.equals(a:get(sz[1], 1), t:get(1, sz[1]))
        assert.equals(a:get(1, sz[2]), t:get(sz[2], 1))
        assert.equals(a:get(sz[1], sz[2]), t:get(sz[2], sz[1]))
        -- a transposed stepped and a negative-stride source
        local s = a[{ { 1, sz[1], 2 }, {} }]
        assert.is_true(nd.equal(s:t():contiguous():t(), s))
        local f = a:flip(2)
        assert.is_true(nd.equal(f:t():contiguous():t(), f))
      end
    end
  end)
end)
