-- matmul through OpenBLAS: every layout of a, b and out against a plain
-- triple loop, the plan's zero-copy claims against the stride rule, and
-- the forms mm mv dot bmm outer and the fused updates (addmm, addmv, addr,
-- baddbmm, addbmm).
local nd = require "nd"

-- ---- a reference in plain Lua -------------------------------------------
local function flat(t) -- row-major values and the shape
  local shape, vals = t:size(), {}
  local function walk(x)
    if type(x) == "table" then for _, y in ipairs(x) do walk(y) end
    else vals[#vals + 1] = x end
  end
  walk(t:totable())
  local s = {}
  for i = 1, #shape do s[i] = shape[i] end
  return vals, s
end

-- NumPy's matmul on flat row-major arrays: 1-D operands get a dim of 1
-- that the result drops; batch dims broadcast. `combine` accumulates.
local function ref_matmul(a, b, kind)
  local av, as = flat(a)
  local bv, bs = flat(b)
  local a1, b1 = #as == 1, #bs == 1
  if a1 then table.insert(as, 1, 1) end
  if b1 then bs[2] = 1 end
  local M, K, N = as[#as - 1], as[#as], bs[#bs]
  local abat, bbat = {}, {}
  for i = 1, #as - 2 do abat[i] = as[i] end
  for i = 1, #bs - 2 do bbat[i] = bs[i] end
  local nb = math.max(#abat, #bbat)
  local bat = {}
  for j = 1, nb do
    local x = abat[j - (nb - #abat)] or 1
    local y = bbat[j - (nb - #bbat)] or 1
    bat[j] = x == 1 and y or x
  end
  local function offset(shp, nbat, idx) -- batch offset of a broadcast operand
    local off, mul = 0, 1
    for j = #shp - 2, 1, -1 do
      local i = idx[j + (nb - nbat)]
      if shp[j] == 1 then i = 1 end
      off = off + (i - 1) * mul
      mul = mul * shp[j]
    end
    return off
  end
  local out = {}
  local idx = {}
  for j = 1, nb do idx[j] = 1 end
  local total = 1
  for j = 1, nb do total = total * bat[j] end
  for _ = 1, total do
    local ao = offset(as, #abat, idx) * M * K
    local bo = offset(bs, #bbat, idx) * K * N
    for i = 1, M do
      for j = 1, N do
        local acc = kind == "bool" and false or 0
        for k = 1, K do
          local x, y = av[ao + (i - 1) * K + k], bv[bo + (k - 1) * N + j]
          if kind == "bool" then acc = acc or (x and y)
          else acc = acc + x * y end
        end
        out[#out + 1] = acc
      end
    end
    for j = nb, 1, -1 do
      idx[j] = idx[j] + 1
      if idx[j] <= bat[j] then break end
      idx[j] = 1
    end
  end
  local shape = {}
  for j = 1, nb do shape[j] = bat[j] end
  if not a1 then shape[#shape + 1] = M end
  if not b1 then shape[#shape + 1] = N end
  return out, shape
end

local function assert_matches(expected, eshape, got, tol)
  local gv, gs = flat(got)
  assert.are.same(eshape, gs)
  assert.equals(#expected, #gv)
  for i = 1, #expected do
    local e, g = expected[i], gv[i]
    if type(e) == "number" and tol then
      assert(math.abs(e - g) <= tol * math.max(1, math.abs(e)),
        ("element %d: expected %s, got %s"):format(i, e, g))
    else
      assert(e == g, ("element %d: expected %s, got %s"):format(i, tostring(e), tostring(g)))
    end
  end
end

-- ---- layouts ----------------------------------------------------------------
-- A tensor of `shape` (1-D or 2-D) laid out as named, filled with values.
local function make(layout, shape, dtype)
  dtype = dtype or "float64"
  local r, c = shape[1], shape[2]
  local function rnd(...) return nd.randn(...):to(dtype) end
  if #shape == 1 then
    if layout == "contig" or layout == "t" then return rnd(r) end
    if layout == "narrow" then return rnd(r + 3):narrow(1, 2, r) end
    if layout == "step" then return rnd(2 * r + 1)[{ { 2, 2 * r, 2 } }] end
    if layout == "expand" then return rnd(1):expand(r) end
    if layout == "flip" then return rnd(r):flip({ 1 }) end
    if layout == "select3d" then return rnd(2, r, 3):select(3, 2):select(1, 2) end
    if layout == "inner" then return rnd(r, 2):select(2, 1) end
  end
  if layout == "contig" then return rnd(r, c) end
  if layout == "t" then return rnd(c, r):t() end
  if layout == "narrow" then return rnd(r + 2, c + 3):narrow(1, 2, r):narrow(2, 3, c) end
  if layout == "step" then return rnd(2 * r, 2 * c)[{ { 1, 2 * r - 1, 2 }, { 2, 2 * c, 2 } }] end
  if layout == "expand" then return rnd(1, c):expand(r, c) end
  if layout == "flip" then return rnd(r, c):flip({ 1 }) end
  if layout == "select3d" then return rnd(r, 3, c):select(2, 2) end
  if layout == "inner" then return rnd(r, c, 2):select(3, 1) end
  error("layout " .. layout)
end
local LAYOUTS = { "contig", "t", "narrow", "step", "expand", "flip", "select3d", "inner" }
local OUT_LAYOUTS = { "none", "contig", "t", "narrow", "step", "flip", "select3d", "inner" }

-- The classification rule, restated: BLAS reads a matrix as it is when
-- it is row-major (column stride 1, row stride >= cols) or column-major
-- (row stride 1, column stride >= rows), size-1 dims' strides ignored;
-- a vector when its stride is not 0.
local function matrix_ok(t)
  local rows, cols = t:size(1), t:size(2)
  local rs, cs = t:stride(1), t:stride(2)
  if rows == 0 or cols == 0 then return true end
  local row = (cols == 1 or cs == 1) and (rows == 1 or rs >= math.max(1, cols))
  local col = (rows == 1 or rs == 1) and (cols == 1 or cs >= math.max(1, rows))
  return row or col
end
local function vector_ok(t) return t:size(1) <= 1 or t:stride(1) ~= 0 end
local function ok_for(t) if t:dim() == 1 then return vector_ok(t) end return matrix_ok(t) end

-- The storage offsets a view reaches (0-based), as a set.
local function reached(t)
  local set, sz, st = {}, t:size(), t:stride()
  local function go(d, off)
    if d > #sz then set[off] = true return end
    for i = 0, sz[d] - 1 do go(d + 1, off + i * st[d]) end
  end
  go(1, t:storage_offset())
  return set
end

local SENTINEL = -777
local function fill_storage(t, v)
  local s = t:storage()
  s:fill_(v)
end
local function assert_outside_untouched(t)
  local inside, s = reached(t), t:storage()
  for i = 0, s:numel() - 1 do
    if not inside[i] then assert.equals(SENTINEL, s[i + 1]) end
  end
end

local function copies_set(plan)
  local s = {}
  for _, name in ipairs(plan.copies) do s[name] = true end
  return s
end

describe("matmul", function()
  before_each(function() nd.manual_seed(1234) end)

  for _, shapes in ipairs({ { { 3, 4 }, { 4, 5 } }, { { 5, 1 }, { 1, 3 } }, { { 3, 4 }, { 4 } },
                            { { 4 }, { 4, 3 } }, { { 6 }, { 6 } } }) do
    local sa, sb = shapes[1], shapes[2]
    local name = ("%s x %s"):format(table.concat(sa, "x"), table.concat(sb, "x"))
    it("matches the triple loop for every layout of a, b and out: " .. name, function()
      local count = 0
      for _, la in ipairs(LAYOUTS) do
        for _, lb in ipairs(LAYOUTS) do
          for _, lo in ipairs(OUT_LAYOUTS) do
            local a, b = make(la, sa), make(lb, sb)
            local ev, es = ref_matmul(a, b)
            local out, skip -- a 0-d out has one layout: only "contig"
            if lo ~= "none" and #es > 0 then
              out = make(lo, es)
              fill_storage(out, SENTINEL)
            elseif lo ~= "none" then
              skip = lo ~= "contig"
              out = nd.zeros({})
            end
            if not skip then
              local plan = nd.matmul_plan(a, b, out)
              local r = nd.matmul(a, b, out)
              if out then assert.equals(out, r) end
              assert_matches(ev, es, r, 1e-12)
              if out and #es > 0 then assert_outside_untouched(out) end
              -- zero-copy exactly when the rule says so
              local want = {}
              if not ok_for(a) then want.a = true end
              if not ok_for(b) then want.b = true end
              if out and #es > 0 and (nd.may_overlap(out, a) or nd.may_overlap(out, b) or not ok_for(out)) then
                want.out = true
              end
              assert.are.same(want, copies_set(plan),
                ("layouts a=%s b=%s out=%s"):format(la, lb, lo))
              assert.equals(#es == 0 and "ddot" or (#sa == 1 or #sb == 1) and "dgemv" or "dgemm",
                plan.routine)
              count = count + 1
            end
          end
        end
      end
      assert(count >= 64)
    end)
  end

  it("computes float32 through sgemm with views", function()
    local a, b = make("t", { 7, 5 }, "float32"), make("narrow", { 5, 6 }, "float32")
    local ev, es = ref_matmul(a, b)
    local plan = nd.matmul_plan(a, b)
    assert.equals("sgemm", plan.routine)
    assert.same({}, plan.copies)
    local r = nd.matmul(a, b)
    assert.equals("float32", r:dtype())
    assert_matches(ev, es, r, 1e-5)
  end)

  describe("plans", function()
    it("spell the literal CBLAS call", function()
      local a, b = nd.rand(3, 4), nd.rand(4, 5)
      local p = nd.matmul_plan(a, b)
      assert.same({ routine = "dgemm", dtype = "float64", order = "row", transa = "N",
        transb = "N", m = 3, n = 5, k = 4, lda = 4, ldb = 5, ldc = 5, batch = 1, copies = {} }, p)
      p = nd.matmul_plan(nd.rand(4, 3):t(), nd.rand(5, 4, "float32"):t():float())
      assert.equals("T", p.transa)
      assert.equals(3, p.lda)
      p = nd.matmul_plan(a, nd.rand(5, 4):t())
      assert.same({ "N", "T", 4, 4 }, { p.transa, p.transb, p.lda, p.ldb })
      -- a narrowed view keeps the big matrix's leading dimension
      p = nd.matmul_plan(nd.rand(10, 20):narrow(2, 3, 4):narrow(1, 2, 3), b)
      assert.same({ "N", 20 }, { p.transa, p.lda })
      assert.same({}, p.copies)
    end)

    it("use column-major order for a column-major out", function()
      local a, b = nd.rand(3, 4), nd.rand(4, 5)
      local out = nd.empty(5, 3):t()
      local p = nd.matmul_plan(a, b, out)
      assert.same({ "col", "T", "T", 3, 4 }, { p.order, p.transa, p.transb, p.ldc, p.lda })
      assert.same({}, p.copies)
      assert_matches(ref_matmul(a, b), { 3, 5 }, nd.matmul(a, b, out), 1e-12)
    end)

    it("copy what BLAS cannot express", function()
      local u = nd.arange(7):double():unfold(1, 2, 1) -- 6x2, strides {1,1}
      assert.same({ "a" }, nd.matmul_plan(u, nd.rand(2, 3)).copies)
      assert.same({ "b" }, nd.matmul_plan(nd.rand(3, 6), u).copies)
      assert.same({ "a" }, nd.matmul_plan(nd.rand(1, 3):expand(4, 3), nd.rand(3, 2)).copies)
      assert.same({ "b" }, nd.matmul_plan(nd.rand(4, 3), nd.rand(3, 2):flip({ 1 })).copies)
      local out = nd.empty(4, 2, 2):select(3, 1)
      assert.same({ "out" }, nd.matmul_plan(nd.rand(4, 3), nd.rand(3, 2), out).copies)
      -- promotion copies the narrower operand
      local p = nd.matmul_plan(nd.rand(4, 3, "float32"), nd.rand(3, 2))
      assert.same({ "dgemm", { "a" } }, { p.routine, p.copies })
    end)

    it("gemv and dot take negative increments without copying", function()
      local v = nd.rand(4):flip({ 1 })
      local p = nd.matmul_plan(v, nd.rand(4))
      assert.same({ "ddot", 4, -1, 1, {} }, { p.routine, p.n, p.incx, p.incy, p.copies })
      p = nd.matmul_plan(nd.rand(3, 4), v)
      assert.same({ "dgemv", "row", "N", 3, 4, 4, -1, 1, {} },
        { p.routine, p.order, p.transa, p.m, p.n, p.lda, p.incx, p.incy, p.copies })
      p = nd.matmul_plan(v, nd.rand(4, 3))
      assert.same({ "dgemv", "T", {} }, { p.routine, p.transa, p.copies })
      assert.is_nil(p.k)
      assert.is_nil(p.transb)
      assert.same({ "b" }, nd.matmul_plan(nd.rand(3, 4), nd.rand(1):expand(4)).copies)
    end)

    it("run batches of tiny products in the plain loop, in any layout", function()
      for _, dt in ipairs({ "float64", "float32" }) do
        local a = nd.rand(50, 4, 4):to(dt)
        local b = nd.rand(50, 4, 1):to(dt)
        local p = nd.matmul_plan(a, b)
        assert.same({ "loop", 50, {} }, { p.routine, p.batch, p.copies })
        local tol = dt == "float32" and 1e-6 or 1e-12
        assert_matches(ref_matmul(a, b), { 50, 4, 1 }, nd.matmul(a, b), tol)
        local at = a:transpose(2, 3):contiguous():transpose(2, 3) -- columns
        assert_matches(ref_matmul(at, b), { 50, 4, 1 }, nd.matmul(at, b), tol)
        local fl = a:flip({ 1, 3 }) -- negative strides, no copy in the loop
        assert.same({}, nd.matmul_plan(fl, b).copies)
        assert_matches(ref_matmul(fl, b), { 50, 4, 1 }, nd.matmul(fl, b), tol)
        local big = nd.rand(50, 4, 5):to(dt) -- k = 5: the k loop
        local bb = nd.rand(50, 5, 1):to(dt)
        assert_matches(ref_matmul(big, bb), { 50, 4, 1 }, nd.matmul(big, bb), tol)
        -- beta and alpha through the loop
        local c = nd.rand(50, 4, 1):to(dt)
        local want = c * 0.5 + nd.matmul(a, b) * 2
        assert.is_true(nd.allclose(want, nd.baddbmm(c, a, b, 0.5, 2), tol * 10, tol))
      end
      -- one b for all: one BLAS call still
      assert.equals("dgemm", nd.matmul_plan(nd.rand(50, 4, 4), nd.rand(4, 1)).routine)
    end)

    it("fold batch dims into M when the strides allow one call", function()
      local p = nd.matmul_plan(nd.rand(2, 3, 4), nd.rand(4, 5))
      assert.same({ 1, 6, {} }, { p.batch, p.m, p.copies })
      p = nd.matmul_plan(nd.rand(2, 3, 4), nd.rand(2, 4, 5))
      assert.same({ 2, 3 }, { p.batch, p.m })
      p = nd.matmul_plan(nd.rand(2, 3, 4), nd.rand(4))
      assert.same({ "dgemv", 1, 6 }, { p.routine, p.batch, p.m })
      p = nd.matmul_plan(nd.rand(3, 2, 4):transpose(1, 2), nd.rand(4, 5))
      assert.same({ 2, {} }, { p.batch, p.copies })
      p = nd.matmul_plan(nd.rand(2, 1, 3, 4), nd.rand(5, 4, 2))
      assert.same({ 10, {} }, { p.batch, p.copies })
    end)

    it("report the loop for integer dtypes", function()
      local p = nd.matmul_plan(nd.arange(6):view(2, 3), nd.arange(6):view(3, 2))
      assert.same({ routine = "loop", dtype = "int64", m = 2, n = 2, k = 3, batch = 1, copies = {} }, p)
    end)

    it("matmul_plan is also a method", function()
      assert.equals("dgemm", nd.rand(2, 2):matmul_plan(nd.rand(2, 2)).routine)
    end)
  end)

  it("broadcasts batch dims in every layout", function()
    local cases = {
      { { 2, 1, 3, 4 }, { 5, 4, 2 } }, { { 3, 4 }, { 2, 4, 5 } }, { { 2, 3, 4 }, { 4 } },
      { { 4 }, { 2, 4, 3 } }, { { 1, 3, 4 }, { 2, 4, 2 } }, { { 2, 3, 4 }, { 1, 4, 2 } },
    }
    for _, c in ipairs(cases) do
      local sa, sb = c[1], c[2]
      local variants = {
        function(s) return nd.randn(s) end,
        function(s) -- last two dims transposed
          if #s < 2 then return nd.randn(s) end
          local r = {}
          for i = 1, #s do r[i] = s[i] end
          r[#s], r[#s - 1] = s[#s - 1], s[#s]
          return nd.randn(r):transpose(-1, -2)
        end,
        function(s) -- batch dims moved inside: (.., M, B, K) permuted
          if #s < 3 then return nd.randn(s):flip({ 1 }) end
          return nd.randn(s):flip({ #s - 1 })
        end,
        function(s) -- a step in every dim
          local big, idx = {}, {}
          for i = 1, #s do big[i] = 2 * s[i]; idx[i] = { 1, 2 * s[i] - 1, 2 } end
          return nd.randn(big)[idx]
        end,
      }
      for ia, va in ipairs(variants) do
        for ib, vb in ipairs(variants) do
          local a, b = va(sa), vb(sb)
          local ev, es = ref_matmul(a, b)
          assert_matches(ev, es, nd.matmul(a, b), 1e-12)
          local out = nd.empty(es)
          if #es >= 2 then out = nd.empty(es):transpose(-1, -2):contiguous():transpose(-1, -2) end
          local r = a:matmul(b, out)
          assert.equals(out, r)
          assert_matches(ev, es, r, 1e-12)
          local _ = ia + ib
        end
      end
    end
  end)

  it("expands batch dims of size 1 and stride 0", function()
    local a = nd.randn(1, 3, 4):expand(5, 3, 4)
    local b = nd.randn(5, 4, 2)
    assert_matches(ref_matmul(a, b), { 5, 3, 2 }, nd.matmul(a, b), 1e-12)
    assert.same({}, nd.matmul_plan(a, b).copies)
  end)

  describe("integer and bool dtypes", function()
    for _, dt in ipairs({ "int32", "int64", "uint8" }) do
      it("multiplies " .. dt .. " exactly", function()
        local a = nd.randint(0, 7, { 3, 4 }):to(dt)
        local b = nd.randint(0, 7, { 2, 4, 5 }):to(dt):transpose(2, 3):contiguous():transpose(2, 3)
        local r = nd.matmul(a, b)
        assert.equals(dt, r:dtype())
        assert_matches(ref_matmul(a, b), { 2, 3, 5 }, r)
        assert.equals("loop", nd.matmul_plan(a, b).routine)
      end)
    end
    it("wraps around like the dtype", function()
      local a = nd.full({ 1, 2 }, 200, "uint8")
      local b = nd.full({ 2, 1 }, 2, "uint8")
      assert.equals((800) % 256, nd.matmul(a, b)[{ 1, 1 }])
      local big = nd.full({ 1, 2 }, 2 ^ 30, "int32")
      assert.equals(-2 ^ 31, nd.matmul(big, nd.full({ 2, 1 }, 1, "int32"))[{ 1, 1 }])
    end)
    it("multiplies bools as any(a and b)", function()
      local a = nd.tensor({ { true, false }, { false, false } })
      local b = nd.tensor({ { true, true }, { false, true } })
      local r = nd.matmul(a, b)
      assert.equals("bool", r:dtype())
      assert.same({ { true, true }, { false, false } }, r:totable())
    end)
    it("promotes mixed dtypes", function()
      local a = nd.arange(6):view(2, 3):int()
      local b = nd.arange(6):view(3, 2):double()
      local r = nd.matmul(a, b)
      assert.equals("float64", r:dtype())
      assert.same({ { 10, 13 }, { 28, 40 } }, r:totable())
      assert.same({ "a" }, nd.matmul_plan(a, b).copies)
      local p = nd.matmul_plan(nd.arange(6):view(2, 3):int(), nd.arange(6):view(3, 2))
      assert.same({ "loop", "int64", { "a" } }, { p.routine, p.dtype, p.copies })
      assert.equals("float32", nd.matmul(nd.ones(2, 2, "float32"), nd.ones(2, 2, "uint8")):dtype())
    end)
  end)

  describe("edge sizes", function()
    it("gives zeros for k = 0, whatever out held", function()
      local out = nd.full({ 3, 4 }, 0 / 0)
      local r = nd.matmul(nd.empty(3, 0), nd.empty(0, 4), out)
      assert.same(nd.zeros(3, 4):totable(), r:totable())
      assert.same({}, nd.matmul_plan(nd.empty(3, 0), nd.empty(0, 4)).copies)
      assert.equals(0, nd.matmul_plan(nd.empty(3, 0), nd.empty(0, 4)).batch)
      assert.equals(0, nd.matmul(nd.empty(0), nd.empty(0)):item())
      assert.same({ 0, 0 }, nd.matmul(nd.empty(3, 0, "int32"), nd.empty(0, 2, "int32")):totable()[3])
    end)
    it("handles zero-size results", function()
      assert.same({ 0, 4 }, nd.matmul(nd.empty(0, 3), nd.empty(3, 4)):size())
      assert.same({ 2, 0 }, nd.matmul(nd.empty(2, 3), nd.empty(3, 0)):size())
      assert.same({ 0, 2, 4 }, nd.matmul(nd.empty(0, 2, 3), nd.empty(3, 4)):size())
      assert.same({ 0 }, nd.matmul(nd.empty(0, 3), nd.empty(3)):size())
    end)
    it("writes through NaN garbage in a fresh out (beta = 0)", function()
      for _, dt in ipairs({ "float32", "float64" }) do
        local a, b = nd.ones(3, 2, dt), nd.ones(2, 4, dt)
        local out = nd.full({ 3, 4 }, 0 / 0, dt)
        assert.same(nd.full({ 3, 4 }, 2):totable(), nd.matmul(a, b, out):totable())
        local v = nd.full({ 3 }, 0 / 0, dt)
        assert.same({ 2, 2, 2 }, nd.matmul(a, nd.ones(2, dt), v):totable())
      end
    end)
    it("returns a 0-d tensor for 1-D x 1-D", function()
      local r = nd.matmul(nd.tensor({ 1, 2, 3 }), nd.tensor({ 4, 5, 6 }))
      assert.equals(0, r:dim())
      assert.equals(32, r:item())
    end)
  end)

  describe("out", function()
    it("may overlap an input", function()
      local a = nd.randn(4, 4)
      local b = nd.randn(4, 4)
      local ev = ref_matmul(a, b)
      assert.same({ "out" }, nd.matmul_plan(a, b, a).copies)
      nd.matmul(a, b, a)
      assert_matches(ev, { 4, 4 }, a, 1e-12)
      local c = nd.randn(4, 4)
      local ev2 = ref_matmul(b, c:t())
      nd.matmul(b, c:t(), c) -- out is b's transposed partner's storage
      assert_matches(ev2, { 4, 4 }, c, 1e-12)
      local v = nd.randn(4)
      local ev3 = ref_matmul(b, v)
      nd.matmul(b, v, v)
      assert_matches(ev3, { 4 }, v, 1e-12)
    end)
    it("must have the result's shape and dtype", function()
      local a, b = nd.rand(2, 3), nd.rand(3, 4)
      assert_error_matches(function() nd.matmul(a, b, nd.empty(4, 2)) end,
        "matmul: out has shape {4,2}", "{2,4}")
      assert_error_matches(function() nd.matmul(a, b, nd.empty(2, 4, "float32")) end,
        "matmul:", "float32", "float64")
      assert_error_matches(function() nd.matmul(a, b, nd.empty(8)) end, "matmul:")
      assert_error_matches(function() nd.matmul(a, b, nd.empty(1, 4):expand(2, 4)) end,
        "matmul:", "written-to tensor")
    end)
  end)

  describe("errors", function()
    it("names the shapes that cannot be multiplied", function()
      assert_error_matches(function() nd.matmul(nd.empty(2, 3), nd.empty(4, 5)) end,
        "matmul: shapes {2,3} and {4,5} cannot be multiplied")
      assert_error_matches(function() nd.matmul(nd.empty(3), nd.empty(4)) end,
        "matmul: shapes {3} and {4} cannot be multiplied")
    end)
    it("refuses 0-d operands", function()
      assert_error_matches(function() nd.matmul(nd.tensor(2), nd.empty(2)) end, "matmul:", "1-D")
      assert_error_matches(function() nd.matmul(nd.empty(2), nd.tensor(2)) end, "matmul:", "1-D")
    end)
    it("refuses batch dims that do not broadcast", function()
      assert_error_matches(function() nd.matmul(nd.empty(2, 3, 4), nd.empty(3, 4, 5)) end,
        "matmul: batch dims", "{2,3,4}", "{3,4,5}")
    end)
    it("refuses non-tensors", function()
      assert_error_matches(function() nd.matmul(1, nd.empty(2)) end, "matmul: argument 1", "number")
      assert_error_matches(function() nd.matmul(nd.empty(2), "x") end, "matmul: argument 2", "string")
      assert_error_matches(function() nd.matmul(nd.empty(2, 2), nd.empty(2, 2), {}) end,
        "matmul: argument 3", "table")
      assert_error_matches(function() nd.matmul_plan(nd.empty(2), 5) end, "matmul_plan: argument 2")
    end)
    it("raise from the fast path too", function()
      local ok, err = pcall(nd.matmul, nd.empty(2, 3), nd.empty(3, 4), nd.empty(3, 4))
      assert.is_false(ok)
      assert.matches("^matmul: out has shape", err)
    end)
  end)

  it("is a method, and the fast path returns out", function()
    local a, b = nd.rand(4, 4, "float32"), nd.rand(4, 4, "float32")
    local out = nd.empty(4, 4, "float32")
    assert.equals(out, a:matmul(b, out))
    assert_matches(ref_matmul(a, b), { 4, 4 }, out, 1e-6)
    local out2 = nd.empty(4, 4, "float32"):t()
    assert.equals(out2, nd.matmul(a:t(), b, out2))
    assert_matches(ref_matmul(a:t(), b), { 4, 4 }, out2, 1e-6)
  end)
end)

describe("mm mv dot bmm outer", function()
  before_each(function() nd.manual_seed(99) end)

  it("mm multiplies 2-D only", function()
    local a, b = nd.randn(3, 4):t(), nd.randn(3, 2)
    assert_matches(ref_matmul(a, b), { 4, 2 }, a:mm(b), 1e-12)
    assert_error_matches(function() nd.mm(nd.empty(3), nd.empty(3, 2)) end, "mm: expected 2-D")
  end)
  it("mv multiplies a matrix by a vector", function()
    local a, v = nd.randn(3, 4), nd.randn(4):flip({ 1 })
    assert_matches(ref_matmul(a, v), { 3 }, nd.mv(a, v), 1e-12)
    assert_error_matches(function() nd.mv(a, nd.empty(4, 1)) end, "mv: expected 2-D and 1-D")
  end)
  it("dot returns a Lua number", function()
    local x, y = nd.tensor({ 1, 2, 3 }), nd.tensor({ 4, 5, 6 })
    assert.equals(32, x:dot(y))
    assert.equals(32, nd.dot(x:float(), y:float()))
    assert.equals(32, nd.dot(x:long(), y:long()))
    assert.equals(true, nd.dot(nd.tensor({ true, false }), nd.tensor({ true, true })))
    assert.equals(28, nd.dot(x:flip({ 1 }), y)) -- 3*4 + 2*5 + 1*6
    assert_error_matches(function() nd.dot(x, nd.empty(2, 2)) end, "dot: expected 1-D")
    assert_error_matches(function() nd.dot(x, nd.empty(4)) end, "dot: shapes {3} and {4}")
  end)
  it("bmm needs equal batch sizes", function()
    local a, b = nd.randn(2, 3, 4), nd.randn(2, 4, 5):transpose(2, 3):contiguous():transpose(2, 3)
    assert_matches(ref_matmul(a, b), { 2, 3, 5 }, a:bmm(b), 1e-12)
    assert_error_matches(function() nd.bmm(a, nd.empty(1, 4, 5)) end, "bmm: batch sizes 2 and 1")
    assert_error_matches(function() nd.bmm(nd.empty(3, 4), nd.empty(4, 5)) end, "bmm: expected 3-D")
  end)
  it("outer gives every product", function()
    local x, y = nd.tensor({ 1, 2, 3 }), nd.tensor({ 4, 5 })
    assert.same({ { 4, 5 }, { 8, 10 }, { 12, 15 } }, x:outer(y):totable())
    assert.same({ { 12, 15 }, { 8, 10 }, { 4, 5 } }, nd.outer(x:flip({ 1 }), y):totable())
    assert.same({ { 4, 5 }, { 8, 10 }, { 12, 15 } }, nd.outer(x:int(), y:int()):totable())
    assert_error_matches(function() nd.outer(x, nd.empty(2, 2)) end, "outer: expected 1-D")
  end)
  it("each form writes into out", function()
    local out = nd.empty(3, 2)
    assert.equals(out, nd.mm(nd.ones(3, 4), nd.ones(4, 2), out))
    assert.same({ 4, 4 }, out:totable()[1])
    local o2 = nd.empty(3, 2)
    assert.equals(o2, nd.outer(nd.ones(3), nd.ones(2), o2))
    assert.same({ 1, 1 }, o2:totable()[3])
  end)
end)

describe("addmm", function()
  before_each(function() nd.manual_seed(7) end)

  local function ref_addmm(c, a, b, beta, alpha)
    local ev, es = ref_matmul(a, b)
    local cv = flat(c:expand(es):contiguous())
    for i = 1, #ev do ev[i] = beta * cv[i] + alpha * ev[i] end
    return ev, es
  end

  it("computes beta * c + alpha * a @ b", function()
    local c, a, b = nd.randn(3, 5), nd.randn(4, 3):t(), nd.randn(4, 5)
    assert_matches(ref_addmm(c, a, b, 1, 1), { 3, 5 }, nd.addmm(c, a, b), 1e-12)
    assert_matches(ref_addmm(c, a, b, 0.5, 2), { 3, 5 }, c:addmm(a, b, 0.5, 2), 1e-12)
  end)
  it("broadcasts c and writes into any out view", function()
    local c, a, b = nd.randn(5), nd.randn(3, 4), nd.randn(4, 5)
    local out = nd.empty(5, 3):t()
    assert.equals(out, nd.addmm(c, a, b, 2, -1, out))
    assert_matches(ref_addmm(c, a, b, 2, -1), { 3, 5 }, out, 1e-12)
    local o2 = nd.full({ 3, 10 }, SENTINEL)[{ {}, { 1, 9, 2 } }]
    nd.addmm(c, a, b, o2)
    assert_matches(ref_addmm(c, a, b, 1, 1), { 3, 5 }, o2, 1e-12)
    assert_outside_untouched(o2)
  end)
  it("ignores c when beta is 0", function()
    local c = nd.full({ 2, 2 }, 0 / 0)
    assert.same({ { 2, 2 }, { 2, 2 } }, nd.addmm(c, nd.ones(2, 2), nd.ones(2, 2), 0, 1):totable())
  end)
  it("gives beta * c for k = 0", function()
    local c = nd.tensor({ { 1, 2 }, { 3, 4 } })
    assert.same({ { 3, 6 }, { 9, 12 } }, nd.addmm(c, nd.empty(2, 0), nd.empty(0, 2), 3, 1):totable())
    local ci = c:int()
    assert.same({ { 3, 6 }, { 9, 12 } },
      nd.addmm(ci, nd.empty(2, 0, "int32"), nd.empty(0, 2, "int32"), 3, 1):totable())
  end)
  it("accumulates in place, out being c", function()
    local c = nd.ones(2, 2)
    nd.addmm(c, nd.ones(2, 3), nd.ones(3, 2), 1, 1, c)
    assert.same({ { 4, 4 }, { 4, 4 } }, c:totable())
  end)
  it("reads a and b before writing an out that overlaps them", function()
    local a = nd.tensor({ { 1, 2 }, { 3, 4 } })
    local b = nd.tensor({ { 1, 0 }, { 0, 1 } })
    nd.addmm(nd.ones(2, 2), a, b, 1, 1, a)
    assert.same({ { 2, 3 }, { 4, 5 } }, a:totable())
  end)
  it("works for integers and refuses fractional alpha there", function()
    local c = nd.ones(2, 2, "int64")
    local a = nd.arange(4):view(2, 2)
    assert.same({ { 7, 9 }, { 15, 25 } }, nd.addmm(c, a, a, 3, 2):totable())
    assert_error_matches(function() nd.addmm(c, a, a, 1, 0.5) end, "addmm: alpha must be an integer")
  end)
  it("checks its arguments", function()
    assert_error_matches(function() nd.addmm(nd.empty(3), nd.empty(2, 3), nd.empty(3, 2)) end,
      "addmm: c of shape {3} does not broadcast")
    assert_error_matches(function() nd.addmm(nd.empty(2), nd.empty(3), nd.empty(3, 2)) end,
      "addmm: expected 2-D")
    assert_error_matches(function() nd.addmm(nd.empty(2), nd.empty(2, 3), nd.empty(3, 2), "x") end,
      "addmm: beta must be a number")
    assert_error_matches(function() nd.addmm(nd.empty(2, 2), nd.empty(2, 3), nd.empty(3, 2), 1, 1, nd.empty(3, 3)) end,
      "addmm: out has shape {3,3}")
  end)
end)

describe("the fused updates addmv, addr, baddbmm, addbmm", function()
  before_each(function() nd.manual_seed(11) end)

  -- beta * c + alpha * P, P the product each one names, from ref_matmul
  local function product(name, a, b)
    if name == "addr" then return ref_matmul(a:view(-1, 1), b:view(1, -1)) end
    if name ~= "addbmm" then return ref_matmul(a, b) end
    local ev, es = ref_matmul(a, b) -- every batch's product, summed
    local n = es[2] * es[3]
    local sum = {}
    for i = 1, n do sum[i] = 0 end
    for i = 1, #ev do sum[(i - 1) % n + 1] = sum[(i - 1) % n + 1] + ev[i] end
    return sum, { es[2], es[3] }
  end
  local function ref(name, c, a, b, beta, alpha)
    local pv, ps = product(name, a, b)
    local cv = flat(c:expand(ps):contiguous())
    for i = 1, #pv do pv[i] = (beta ~= 0 and beta * cv[i] or 0) + alpha * pv[i] end
    return pv, ps
  end
  -- each: c, a, b of its shapes, in plain and odd layouts
  local cases = {
    addmv = function(dt) return nd.randn(3):to(dt), nd.randn(4, 3):t():to(dt), nd.randn(9)[{ { 1, 8, 2 } }]:to(dt) end,
    addr = function(dt) return nd.randn(4, 3):t():to(dt), nd.randn(3):to(dt):flip(1), nd.randn(4):to(dt) end,
    baddbmm = function(dt) return nd.randn(1, 3, 5):to(dt), nd.randn(2, 4, 3):transpose(2, 3):to(dt), nd.randn(2, 4, 5):to(dt) end,
    addbmm = function(dt) return nd.randn(5):to(dt), nd.randn(3, 4, 2):permute(1, 3, 2):to(dt), nd.randn(3, 5, 4):transpose(2, 3):to(dt) end,
  }
  for name, make_case in pairs(cases) do
    it(name .. ": new result, out= and in place, any layout, float and integer", function()
      for _, dt in ipairs({ "float64", "float32", "int64" }) do
        local tol = dt == "float32" and 1e-5 or dt == "float64" and 1e-12 or nil
        local c, a, b = make_case(dt)
        if dt == "int64" then c, a, b = (c * 4):long(), (a * 4):long(), (b * 4):long() end
        for _, ba in ipairs({ { 1, 1 }, { 0.5, 2 }, { 0, -1 }, { -2, 3 } }) do
          local beta, alpha = ba[1], ba[2]
          if dt == "int64" and beta == 0.5 then beta = 2 end
          local ev, es = ref(name, c, a, b, beta, alpha)
          assert_matches(ev, es, nd[name](c, a, b, beta, alpha), tol)
          assert_matches(ev, es, c[name](c, a, b, beta, alpha), tol)
          local out = nd.full(es, SENTINEL, dt)
          assert.equals(out, nd[name](c, a, b, beta, alpha, out))
          assert_matches(ev, es, out, tol)
          local full = c:expand(es):clone()
          assert.equals(full, full[name .. "_"](full, a, b, beta, alpha))
          assert_matches(ev, es, full, tol)
        end
        local ev, es = ref(name, c, a, b, 1, 1)
        assert_matches(ev, es, nd[name](c, a, b), tol)
        local out = nd.full(es, SENTINEL, dt)
        assert.equals(out, nd[name](c, a, b, out)) -- out straight after the tensors
        assert_matches(ev, es, out, tol)
      end
    end)
  end
  it("ignore c when beta is 0 (its NaNs do not spread)", function()
    local v = nd.ones(2)
    assert.same({ 2, 2 }, nd.addmv(nd.full({ 2 }, 0 / 0), nd.ones(2, 2), v, 0, 1):totable())
    assert.same({ { 1, 1 }, { 1, 1 } }, nd.addr(nd.full({ 2, 2 }, 0 / 0), v, v, 0):totable())
    local nan = nd.full({ 2, 2 }, 0 / 0)
    nan:addbmm_(nd.ones(3, 2, 1), nd.ones(3, 1, 2), 0, 1)
    assert.same({ { 3, 3 }, { 3, 3 } }, nan:totable())
  end)
  it("give beta * c for an empty batch or k = 0", function()
    local c = nd.tensor({ { 1, 2 }, { 3, 4 } })
    assert.same({ { 3, 6 }, { 9, 12 } }, nd.addbmm(c, nd.empty(0, 2, 3), nd.empty(0, 3, 2), 3):totable())
    assert.same({ 2, 4 }, nd.addmv(nd.tensor({ 1, 2 }), nd.empty(2, 0), nd.empty(0), 2):totable())
    local ci = c:int()
    ci:addbmm_(nd.empty(0, 2, 1, "int32"), nd.empty(0, 1, 2, "int32"), -1)
    assert.same({ { -1, -2 }, { -3, -4 } }, ci:totable())
  end)
  it("read a and b before writing a result that overlaps them", function()
    local a = nd.tensor({ { 1, 2 }, { 3, 4 } })
    local x = a:select(2, 1) -- {1, 3}, inside a
    a:select(2, 2):addmv_(a, x) -- {2, 4} + a @ {1, 3}
    assert.same({ { 1, 9 }, { 3, 19 } }, a:totable())
    local v = nd.tensor({ 1, 2 })
    local m = nd.zeros(2, 2)
    nd.addr(m, v, v, 1, 1, m)
    assert.same({ { 1, 2 }, { 2, 4 } }, m:totable())
  end)
  it("check their arguments, naming the function called", function()
    local c, A, x = nd.zeros(2), nd.zeros(2, 2), nd.zeros(2)
    assert_error_matches(function() nd.addmv(c, A, A) end, "addmv: expected 2-D and 1-D tensors")
    assert_error_matches(function() nd.addr(A, A, x) end, "addr: expected 1-D and 1-D tensors")
    assert_error_matches(function() nd.baddbmm(nd.zeros(2, 2, 2), nd.zeros(2, 2, 2), nd.zeros(3, 2, 2)) end,
      "baddbmm: batch sizes 2 and 3 differ")
    assert_error_matches(function() nd.addbmm(A, nd.zeros(2, 2, 3), nd.zeros(2, 2, 3)) end, "addbmm: shapes")
    assert_error_matches(function() nd.addmv(nd.zeros(3), A, x) end, "addmv: c of shape {3} does not broadcast")
    assert_error_matches(function() c:addmv_(A, x, 1, 1, 5) end, "addmv_: takes (c, a, x [, beta, alpha]), got 6")
    assert_error_matches(function() c:int():addmv_(A, x) end,
      "addmv_: c has shape {2} and dtype int32; the update makes shape {2} and dtype float64")
    assert_error_matches(function() nd.zeros(1):addmv_(A, x) end, "addmv_: c has shape {1}")
    assert_error_matches(function() nd.addmv(c, A, x, "x") end, "addmv: beta must be a number, got string")
    assert_error_matches(function() c:addr_(x, x) end, "addr_: c has shape {2}")
    assert_error_matches(function() nd.addmv(c:int(), A:int(), x:int(), 0.5) end,
      "addmv: beta must be an integer for a int32 result")
    assert_error_matches(function() x:expand(2, 2):addr_(x, x) end, "addr_:")
    local ok = pcall(nd.baddbmm, nd.zeros(2, 2, 2), nd.zeros(2, 2, 2), nd.zeros(2, 2, 2), 1, 1, nd.zeros(2, 2, 2), 1)
    assert.is_false(ok)
    -- out straight after the tensors ends the call: a beta after it is not ignored
    assert_error_matches(function() nd.addmv(c, A, x, nd.empty(2), 2) end,
      "addmv: nothing may follow out (argument 4), got number")
    assert_error_matches(function() nd.addmm(A, A, A, nd.empty(2, 2), nil, 3) end,
      "addmm: nothing may follow out (argument 4), got number")
  end)
end)

describe("matmul(a, b, out) called again and again", function()
  -- Under LuaJIT the plan for one (a, b, out) is kept and re-used; these
  -- check that nothing stale is ever re-used.
  local function ref(a, b)
    local m, k, n = a:size(1), a:size(2), b:size(2)
    local r = {}
    for i = 1, m do
      r[i] = {}
      for j = 1, n do
        local s = 0
        for q = 1, k do s = s + a:get(i, q) * b:get(q, j) end
        r[i][j] = s
      end
    end
    return r
  end

  it("sees new element values through the same tensors", function()
    local a, b, out = nd.rand(3, 4), nd.rand(4, 2), nd.empty(3, 2)
    for _ = 1, 3 do
      nd.matmul(a, b, out)
      assert_close(ref(a, b), out:totable(), 1e-12)
      a:mul_(2)
      b:add_(1)
    end
  end)

  it("re-plans for other operands into the same out, and for new tensors", function()
    local out = nd.empty(4, 4)
    for i = 1, 40 do
      -- a fresh a each time, alternating layouts; old ones get collected
      local a = i % 2 == 0 and nd.rand(4, 3) or nd.rand(3, 4):t()
      local b = i % 3 == 0 and nd.rand(3, 4) or nd.rand(4, 6):narrow(2, 2, 4):narrow(1, 1, 3)
      nd.matmul(a, b, out)
      assert_close(ref(a, b), out:totable(), 1e-12)
      if i % 10 == 0 then collectgarbage() end
    end
  end)

  it("stays correct when out is an operand, and raises matmul's errors", function()
    local a = nd.rand(3, 3, "float32")
    local b = nd.rand(3, 3, "float32")
    for _ = 1, 2 do
      local want = ref(a, b)
      nd.matmul(a, b, a)
      assert_close(want, a:totable(), 1e-5)
    end
    assert_error_matches(function() nd.matmul(a, b, nd.empty(2, 3, "float32")) end,
      "matmul:", "out has shape {2,3}")
    assert_error_matches(function() nd.matmul(a, nd.rand(4, 3, "float32"), nd.empty(3, 3, "float32")) end,
      "matmul:", "cannot be multiplied")
  end)
end)
