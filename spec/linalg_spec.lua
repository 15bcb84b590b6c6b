-- nd.linalg: every function on contiguous, transposed, narrowed, flipped
-- and batched inputs in float32 and float64, by reconstruction and against
-- NumPy's results (spec/fixtures/linalg_cases.lua, made by
-- tools/linalg_fixtures.py); the bad inputs; inputs never modified.
local nd = require "nd"
local L = nd.linalg

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "spec"
local F = dofile(here .. "/fixtures/linalg_cases.lua")

local TOL = { float64 = 1e-9, float32 = 2e-3 }

-- Largest |x - y| over tensors / nested tables / numbers, scaled by
-- max(1, largest |y|).
local function values(x)
  if type(x) == "number" then return { x } end
  if type(x) ~= "table" then x = x:totable() end
  local out = {}
  local function walk(v)
    if type(v) == "table" then for _, w in ipairs(v) do walk(w) end
    else out[#out + 1] = v end
  end
  walk(x)
  return out
end
local function assert_near(got, want, tol, what)
  local g, w = values(got), values(want)
  assert(#g == #w, ("%s: %d values, expected %d"):format(what or "", #g, #w))
  local scale, worst = 1, 0
  for i = 1, #w do scale = math.max(scale, math.abs(w[i])) end
  for i = 1, #w do
    if w[i] ~= w[i] then
      assert(g[i] ~= g[i], ("%s[%d]: expected nan, got %s"):format(what or "", i, g[i]))
    elseif w[i] == math.huge or w[i] == -math.huge then
      assert(g[i] == w[i], ("%s[%d]: expected %s, got %s"):format(what or "", i, w[i], g[i]))
    else
      worst = math.max(worst, math.abs(g[i] - w[i]))
    end
  end
  assert(worst <= tol * scale,
    ("%s: off by %g (tolerance %g x %g)"):format(what or "", worst, tol, scale))
end

local function T(x) return x:transpose(-2, -1) end
local function eye_like(n, dt) return nd.eye(n, n, dt) end
local function assert_eye(M, tol, what)
  assert_near(M, nd.eye(M:size(-1), M:size(-1), M:dtype()):expand(M:size()), tol, what)
end

-- The same values in several layouts: {name, tensor}.
local function layouts(a, dt)
  local c = nd.tensor(a, dt)
  local out = { { "contiguous", c } }
  if c:dim() >= 2 then
    out[#out + 1] = { "transposed", T(T(c):contiguous()) }
    local size = c:size()
    local big = {}
    for i = 1, #size do big[i] = size[i] end
    big[#big - 1], big[#big] = big[#big - 1] + 3, big[#big] + 2
    local n = nd.zeros(big, dt):narrow(-2, 2, size[#size - 1]):narrow(-1, 3, size[#size])
    n:copy_(c)
    out[#out + 1] = { "narrowed", n }
    out[#out + 1] = { "flipped", c:flip({ -1 }):contiguous():flip({ -1 }) }
  end
  return out
end

-- Calls f(x, ...) and checks x is unchanged afterwards.
local function unchanged(x, f, ...)
  local before = x:clone()
  local r = table.pack and table.pack(f(x, ...)) or { n = select("#", f(x, ...)), f(x, ...) }
  assert_near(x, before, 0, "input modified")
  return (table.unpack or unpack)(r, 1, r.n)
end

local function diag(s) -- batched diag of the last dim
  local n = s:size(-1)
  local e = nd.eye(n, n, s:dtype())
  return e * s:unsqueeze(-2)
end

describe("nd.linalg against NumPy and by reconstruction", function()
  for _, dt in ipairs({ "float64", "float32" }) do
    local tol = TOL[dt]
    for name, case in pairs(F) do
      if name ~= "vector" then
        for _, lay in ipairs(layouts(case.a, dt)) do
          local what, A = name .. " " .. dt .. " " .. lay[1], lay[2]
          local square = A:size(-1) == A:size(-2)
          local m, n = A:size(-2), A:size(-1)

          it("svd, svdvals: " .. what, function()
            local U, S, Vh = unchanged(A, L.svd)
            assert_near(S, case.svdvals, tol, "S")
            assert_near(unchanged(A, L.svdvals), case.svdvals, tol, "svdvals")
            assert_near(U:matmul(diag(S)):matmul(Vh), A, tol, "U S Vh")
            assert_eye(T(U):matmul(U), tol, "U^T U = I")
            assert_eye(Vh:matmul(T(Vh)), tol, "Vh Vh^T = I")
            assert.is_true(U:is_contiguous() and Vh:is_contiguous())
            assert.equal(dt, U:dtype())
          end)

          it("qr: " .. what, function()
            local Q, R = unchanged(A, L.qr)
            assert_near(Q:matmul(R), A, tol, "Q R")
            assert_near(R:abs(), case.absr, tol, "|R|")
            assert_eye(T(Q):matmul(Q), tol, "Q^T Q")
            local r = R:totable()
            local function check(mat)
              for i = 1, #mat do for j = 1, math.min(i - 1, #mat[i]) do
                assert.equal(0, mat[i][j])
              end end
            end
            if R:dim() == 2 then check(r) end
          end)

          it("norm, cond, matrix_rank, pinv: " .. what, function()
            local batched = A:dim() > 2
            assert_near(L.norm(A), case.norm_fro, tol, "fro")
            assert_near(L.norm(A, "fro"), case.norm_fro, tol, "fro")
            assert_near(L.norm(A, "nuc"), case.norm_nuc, tol, "nuc")
            assert_near(L.norm(A, 1), case.norm_1, tol, "1")
            assert_near(L.norm(A, -1), case.norm_m1, tol, "-1")
            assert_near(L.norm(A, math.huge), case.norm_inf, tol, "inf")
            assert_near(L.norm(A, -math.huge), case.norm_minf, tol, "-inf")
            assert_near(L.norm(A, 2), case.norm_2, tol, "2")
            assert_near(L.norm(A, -2), case.norm_m2, tol, "-2")
            if not batched then assert.equal("number", type(L.norm(A))) end
            if case.cond then
              assert_near(unchanged(A, L.cond), case.cond, tol * 10, "cond")
            end
            if name ~= "singular" or dt == "float64" then
              local r = unchanged(A, L.matrix_rank)
              if batched then
                assert.equal("int64", r:dtype())
              else
                assert.equal("number", type(r))
              end
              assert_near(r, case.rank, 0, "rank")
            end
            if name ~= "singular" and name ~= "rankdef" or dt == "float64" then
              assert_near(unchanged(A, L.pinv), case.pinv, tol * 10, "pinv")
            end
          end)

          if square then
            it("det, slogdet: " .. what, function()
              local d = unchanged(A, L.det)
              assert_near(d, case.det, tol, "det")
              local s, l = unchanged(A, L.slogdet)
              if name ~= "singular" then
                assert_near(s, case.sign, 0, "sign")
                assert_near(l, case.logdet, tol, "logdet")
              end
              if A:dim() == 2 then
                assert.equal("number", type(d))
                assert.equal("number", type(s))
              end
            end)

            it("eigh, eigvalsh: " .. what, function()
              -- symmetric from the lower triangle, as eigh reads it
              local S = A:matmul(T(A))
              local w, V = unchanged(S, L.eigh)
              local w2 = unchanged(S, L.eigvalsh)
              assert_near(w2, w, tol, "eigvalsh = eigh's w")
              assert_near(S:matmul(V), V:matmul(diag(w)), tol, "A V = V diag(w)")
              assert_eye(T(V):matmul(V), tol, "V^T V")
              local wt = w:totable()
              if A:dim() == 2 then
                for i = 2, #wt do assert.is_true(wt[i - 1] <= wt[i]) end
                assert_near(case.eigvalsh, L.eigvalsh(nd.tensor(case.a, dt)), tol, "vs NumPy")
              end
            end)
          end

          if case.inv then
            it("inv, solve, matrix_power: " .. what, function()
              local X = unchanged(A, L.inv)
              assert_near(X, case.inv, tol * 10, "inv")
              assert.is_true(X:is_contiguous())
              assert_eye(A:matmul(X), tol * 10, "A inv(A) = I")
              for _, bl in ipairs(layouts(case.b, dt)) do
                local B = bl[2]
                local Y = unchanged(B, function(b) return unchanged(A, L.solve, b) end)
                assert_near(Y, case.solve, tol * 10, "solve " .. bl[1])
                assert_near(A:matmul(Y), B, tol * 10, "A X = B")
              end
              local v = nd.tensor(case.bv, dt)
              assert_near(L.solve(A, v), case.solve_v, tol * 10, "solve vector")
              assert_near(L.matrix_power(A, 3), case.power3, tol * 10, "A^3")
              assert_near(L.matrix_power(A, -2), case.powerm2, tol * 100, "A^-2")
              assert_near(L.matrix_power(A, 1), A, 0, "A^1")
              assert_near(L.matrix_power(A, 0), eye_like(n, dt):expand(A:size()), 0, "A^0")
            end)
          end

          if case.cholesky then
            it("cholesky: " .. what, function()
              local C = unchanged(A, L.cholesky)
              assert_near(C, case.cholesky, tol, "cholesky")
              assert_near(C:matmul(T(C)), A, tol, "L L^T")
            end)
          end

          if case.lstsq then
            it("lstsq: " .. what, function()
              for _, bl in ipairs(layouts(case.lb, dt)) do
                local X = unchanged(A, L.lstsq, bl[2])
                assert_near(X, case.lstsq, tol * 10, "lstsq " .. bl[1])
              end
              local x1 = L.lstsq(A, nd.tensor(case.lb, dt):select(2, 1))
              assert_near(x1, nd.tensor(case.lstsq):select(2, 1), tol * 10, "lstsq vector")
            end)
          end
        end
      end
    end

    it("vector norms " .. dt, function()
      local v = nd.tensor(F.vector.v, dt)
      local c = F.vector
      assert_near(L.norm(v), c.n2, tol)
      assert_near(L.norm(v, 1), c.n1, tol)
      assert_near(L.norm(v, 3), c.n3, tol)
      assert_near(L.norm(v, 0), c.n0, 0)
      assert_near(L.norm(v, -1), c.nm1, tol)
      assert_near(L.norm(v, math.huge), c.ninf, tol)
      assert_near(L.norm(v, -math.huge), c.nminf, 0)
      assert_near(L.norm(nd.tensor(F.vector.v, dt):flip({ 1 })), c.n2, tol)
    end)
  end
end)

describe("nd.linalg batching", function()
  it("broadcasts solve's batch dims as NumPy does", function()
    local A = nd.tensor(F.batch.a) -- (2,3,4,4)
    local B = nd.tensor(F.batch.b)[1][1] -- (4,2), broadcast over (2,3)
    local X = L.solve(A, B)
    assert.same({ 2, 3, 4, 2 }, { X:size(1), X:size(2), X:size(3), X:size(4) })
    assert_near(A:matmul(X), B:expand(2, 3, 4, 2), 1e-9)
    local A1 = A[1][2] -- one matrix against a batch of right-hand sides
    local B2 = nd.tensor(F.batch.b) -- (2,3,4,2)
    assert_near(A1:matmul(L.solve(A1, B2)), B2, 1e-9)
    local v = nd.tensor(F.batch.bv) -- (4,): a vector for every matrix
    assert.same({ 2, 3, 4 }, plain(L.solve(A, v):size()))
  end)

  it("batches lstsq, broadcasting B, by the normal equations", function()
    nd.manual_seed(3)
    for _, dt in ipairs({ "float64", "float32" }) do
      local A = nd.randn({ 3, 6, 4 }, dt)
      local B = nd.randn({ 6, 2 }, dt)
      local X = L.lstsq(A, B)
      assert.same({ 3, 4, 2 }, plain(X:size()))
      for i = 1, 3 do
        assert_near(X[i], L.lstsq(A[i], B), TOL[dt], "per matrix")
        -- the residual is orthogonal to A's columns
        local r = A[i]:matmul(X[i]) - B
        assert_near(A[i]:t():matmul(r), nd.zeros(4, 2, dt), TOL[dt] * 10, "A^T r = 0")
      end
      local xv = L.lstsq(A:transpose(2, 3):contiguous():transpose(2, 3), B:select(2, 1))
      assert_near(xv, X:select(3, 1), TOL[dt], "vector B")
    end
  end)

  it("takes stride-0 (expanded) batches", function()
    local a = nd.tensor(F.g6.a)
    local E = a:unsqueeze(1):expand(3, 6, 6)
    assert_near(L.inv(E), nd.tensor(F.g6.inv):unsqueeze(1):expand(3, 6, 6), 1e-9)
    assert_near(L.det(E), { F.g6.det, F.g6.det, F.g6.det }, 1e-9)
  end)

  it("small kernels agree with LAPACK's LU within rounding", function()
    nd.manual_seed(7)
    for _, n in ipairs({ 1, 2, 3, 4 }) do
      for _, dt in ipairs({ "float64", "float32" }) do
        local A = nd.randn({ 203, n, n }, dt) + nd.eye(n, n, dt) * 3
        local d = L.det(A)
        local s, l = L.slogdet(A) -- always LAPACK
        assert_near(d, s * l:exp(), TOL[dt], "det vs slogdet")
        local X = L.inv(A)
        assert_near(A:matmul(X), nd.eye(n, n, dt):expand(203, n, n), TOL[dt] * 10, "inv")
        local B = nd.randn({ 203, n, 3 }, dt)
        assert_near(A:matmul(L.solve(A, B)), B, TOL[dt] * 10, "solve")
        -- one n x n through LAPACK (a 5x5 block-diagonal embedding)
        local big = nd.eye(n + 5, n + 5, dt)
        big[{ { 1, n }, { 1, n } }] = A[1]
        local Xb = L.inv(big)[{ { 1, n }, { 1, n } }]
        assert_near(Xb, X[1], TOL[dt] * 10, "small vs general")
      end
    end
  end)

  it("gives empty and 0x0 results", function()
    assert.equal(1, L.det(nd.zeros(0, 0)))
    local s, l = L.slogdet(nd.zeros(0, 0))
    assert.equal(1, s); assert.equal(0, l)
    assert.same({ 0, 0 }, plain(L.inv(nd.zeros(0, 0)):size()))
    assert.same({ 0, 0 }, plain(L.cholesky(nd.zeros(0, 0)):size()))
    assert.same({ 0 }, plain(L.solve(nd.zeros(0, 0), nd.zeros(0)):size()))
    local U, S, Vh = L.svd(nd.zeros(0, 3))
    assert.same({ 0, 0 }, plain(U:size())); assert.same({ 0 }, plain(S:size()))
    assert.same({ 0, 3 }, plain(Vh:size()))
    local Q, R = L.qr(nd.zeros(3, 0))
    assert.same({ 3, 0 }, plain(Q:size())); assert.same({ 0, 0 }, plain(R:size()))
    local w, V = L.eigh(nd.zeros(0, 0))
    assert.same({ 0 }, plain(w:size())); assert.same({ 0, 0 }, plain(V:size()))
    assert.equal(0, L.norm(nd.zeros(0, 0)))
    assert.equal(0, L.matrix_rank(nd.zeros(0, 3)))
    assert.same({ 3, 0 }, plain(L.pinv(nd.zeros(0, 3)):size()))
    assert.same({ 0, 2, 2 }, plain(L.inv(nd.zeros(0, 2, 2)):size()))
    assert_near(L.lstsq(nd.zeros(0, 2), nd.zeros(0)), { 0, 0 }, 0)
  end)

  it("gives float64 for integer input, keeps float32", function()
    local I = nd.tensor({ { 2, 0 }, { 0, 4 } }, "int64")
    assert.equal("float64", L.inv(I):dtype())
    assert.equal("float64", L.matrix_power(I, 2):dtype())
    assert.equal("float64", L.matrix_power(I, 0):dtype())
    assert.equal(8, L.det(I))
    assert.equal("float32", L.inv(nd.eye(3, 3, "float32")):dtype())
    assert.equal("float64", L.solve(nd.eye(2, 2, "float32"), nd.ones(2)):dtype())
    assert_near(L.matrix_power(I, 3), { { 8, 0 }, { 0, 64 } }, 0)
  end)

  it("rank-deficient input has defined results", function()
    local A = nd.tensor(F.rankdef.a)
    assert.equal(2, L.matrix_rank(A))
    assert_near(L.pinv(A), F.rankdef.pinv, 1e-9)
    assert_near(L.lstsq(A, nd.tensor(F.rankdef.lb)), F.rankdef.lstsq, 1e-9)
    assert.equal(0, L.det(nd.tensor({ { 1, 2 }, { 2, 4 } })))
    local s, l = L.slogdet(nd.tensor(F.singular.a))
    assert.equal(0, s); assert.equal(-math.huge, l)
    assert.equal(math.huge, L.cond(nd.zeros(3, 3)))
  end)

  it("is a table of module functions, not methods", function()
    local A = nd.eye(2)
    assert.is_nil(A.inv); assert.is_nil(A.linalg); assert.is_nil(A.solve)
    assert.is_function(L.inv)
  end)
end)

describe("nd.linalg bad input", function()
  it("refuses non-square input where square is needed", function()
    for _, f in ipairs({ "inv", "det", "slogdet", "cholesky", "eigh", "eigvalsh" }) do
      assert_error_matches(function() L[f](nd.zeros(2, 3)) end, f .. ":", "square", "{2,3}")
    end
    assert_error_matches(function() L.solve(nd.zeros(2, 3), nd.zeros(2)) end, "solve:", "square")
    assert_error_matches(function() L.matrix_power(nd.zeros(2, 3), 2) end, "matrix_power:", "square")
    assert_error_matches(function() L.inv(nd.zeros(3)) end, "inv:", "at least 2-D")
    assert_error_matches(function() L.qr(nd.tensor(2)) end, "qr:", "at least 2-D")
  end)

  it("refuses mismatched solve and lstsq shapes", function()
    assert_error_matches(function() L.solve(nd.eye(3), nd.zeros(4)) end, "solve:", "{3,3}", "{4}")
    assert_error_matches(function() L.solve(nd.eye(3), nd.zeros(2, 3)) end, "solve:", "do not match")
    assert_error_matches(function() L.solve(nd.zeros(2, 3, 3), nd.zeros(4, 3, 1)) end,
      "solve:", "broadcast")
    assert_error_matches(function() L.lstsq(nd.zeros(4, 3), nd.zeros(3)) end, "lstsq:", "do not match")
    assert_error_matches(function() L.solve(nd.eye(3), nd.tensor(1)) end, "solve:")
  end)

  it("raises on singular input naming the function and the batch index", function()
    local S = nd.tensor(F.singular.a)
    assert_error_matches(function() L.inv(S) end, "inv: matrix is singular")
    assert_error_matches(function() L.solve(S, nd.ones(3)) end, "solve: matrix is singular")
    assert_error_matches(function() L.inv(nd.zeros(2, 2)) end, "inv: matrix is singular")
    assert_error_matches(function() L.inv(nd.zeros(6, 6)) end, "inv: matrix is singular")
    local B = nd.stack({ nd.eye(3), nd.eye(3), S }, 1):view(1, 3, 3, 3)
    assert_error_matches(function() L.inv(B) end, "inv: matrix is singular at batch index {1,3}")
    assert_error_matches(function() L.matrix_power(S, -1) end, "matrix_power: matrix is singular")
    local P = nd.stack({ nd.eye(2), nd.tensor({ { 1, 2 }, { 2, 1 } }) }, 1)
    assert_error_matches(function() L.cholesky(P) end,
      "cholesky: matrix is not positive definite at batch index {2}")
  end)

  it("NaN and inf: NaN results where NumPy gives them, errors where LAPACK may not converge", function()
    local N = nd.tensor({ { 1, 0 / 0 }, { 0, 1 } })
    local big = nd.eye(6); big[{ 2, 3 }] = 0 / 0
    assert.is_true(L.det(N) ~= L.det(N))
    for _, x in ipairs(L.inv(N):totable()) do for _, y in ipairs(x) do assert.is_true(y ~= y) end end
    assert.is_true(L.det(big) ~= L.det(big))
    local v = L.solve(N, nd.ones(2)):totable()
    assert.is_true(v[1] ~= v[1])
    for _, f in ipairs({ "svd", "svdvals", "pinv", "matrix_rank", "cond" }) do
      assert_error_matches(function() L[f](N) end, f .. ":", "NaN or inf")
    end
    assert_error_matches(function() L.norm(N, 2) end, "norm:", "NaN or inf")
    assert.is_true(L.norm(N) ~= L.norm(N))
    local I = nd.tensor({ { 1, 0 }, { math.huge, 1 } })
    assert_error_matches(function() L.eigh(I) end, "eigh:", "NaN or inf")
    assert_error_matches(function() L.eigvalsh(I) end, "eigvalsh:", "NaN or inf")
    assert_error_matches(function() L.lstsq(I, nd.ones(2)) end, "lstsq:", "NaN or inf")
    -- OpenBLAS's potrf lets NaN through, as NumPy (same library) shows
    local C = L.cholesky(nd.tensor({ { 1, 0 }, { 0 / 0, 1 } })):totable()
    assert.equal(1, C[1][1]); assert.is_true(C[2][2] ~= C[2][2])
    -- eigh reads the lower triangle only (NumPy's): NaN above is ignored
    local w = L.eigvalsh(nd.tensor({ { 2, 0 / 0 }, { 0, 3 } }))
    assert_near(w, { 2, 3 }, 1e-12)
  end)

  it("refuses dims beyond LAPACK's 32-bit int", function()
    local huge = nd.zeros(1, 1):expand(2 ^ 31, 2 ^ 31)
    for _, f in ipairs({ "inv", "det", "cholesky", "eigh", "svdvals", "qr" }) do
      assert_error_matches(function() L[f](huge) end, f .. ":", "2147483648", "32-bit")
    end
    assert_error_matches(function() L.svd(nd.zeros(1, 1):expand(1, 2 ^ 31)) end, "svd:", "32-bit")
    assert_error_matches(function() L.solve(nd.eye(2), nd.zeros(2, 1):expand(2, 2 ^ 31)) end,
      "solve:", "32-bit")
  end)

  it("refuses non-integer matrix_power exponents and bad norm orders", function()
    assert_error_matches(function() L.matrix_power(nd.eye(2), 2.5) end, "matrix_power:", "integer", "2.5")
    assert_error_matches(function() L.matrix_power(nd.eye(2), "2") end, "matrix_power:", "integer")
    assert_error_matches(function() L.matrix_power(nd.eye(2)) end, "matrix_power:", "integer")
    assert_error_matches(function() L.norm(nd.eye(2), 3) end, "norm:", "invalid order 3")
    assert_error_matches(function() L.norm(nd.ones(3), "fro") end, "norm:", "not a vector norm")
    assert_error_matches(function() L.norm(nd.ones(3), "max") end, "norm:", "'max'")
    assert_error_matches(function() L.norm(nd.tensor(1)) end, "norm:", "0-d")
    assert_error_matches(function() L.cond(nd.zeros(0, 0)) end, "cond:", "empty")
    assert_error_matches(function() L.inv("x") end, "inv")
  end)
end)

describe("nd.linalg.plan", function()
  it("reports the routines and what is copied, without running them", function()
    local A = nd.randn(8, 8)
    local p = L.plan("inv", A)
    assert.equal("dgetrf+dgetri", p.routine)
    assert.equal(1, p.batch)
    assert.equal("copy", p.copies.A)
    assert.equal("transposing copy", L.plan("inv", A:t()).copies.A)
    assert.equal("strided gather", L.plan("det", nd.randn(8, 16):narrow(2, 1, 8):as_strided({ 8, 8 }, { 16, 2 })).copies.A)
    assert.equal("unrolled4x4", L.plan("inv", nd.randn(10, 4, 4, "float32")).routine)
    assert.equal(10, L.plan("inv", nd.randn(10, 4, 4, "float32")).batch)
    assert.same({}, L.plan("det", nd.randn(3, 3)).copies)
    local s = L.plan("solve", A, nd.randn(8, 3))
    assert.equal("dgetrf+dtrsm+dtrsm", s.routine)
    assert.equal("copy", s.copies.B)
    assert.equal("sgesdd", L.plan("svd", nd.randn(5, 3, "float32")).routine)
    assert.equal("dsyevd", L.plan("eigh", A).routine)
    assert.equal("dpotrf", L.plan("cholesky", A).routine)
    assert.equal("dgelqf+dorglq", L.plan("qr", nd.randn(6, 4)).routine)
    local l = L.plan("lstsq", A, nd.ones(8))
    assert.equal("dgelsd", l.routine)
    assert.equal("transposing copy", l.copies.A)
    assert.equal("dtype conversion", L.plan("qr", nd.ones(3, 3, "int32")).copies.A)
    assert_error_matches(function() L.plan("foo", A) end, "plan:", "foo")
    assert_error_matches(function() L.plan("solve", A) end, "plan:", "two operands")
    assert_error_matches(function() L.plan("inv", nd.zeros(2, 3)) end, "inv:", "square")
  end)
end)

-- The C entry points without Lua: tests/linalg_c_test.c against libnd.a.
describe("nd_linalg_* from C (tests/linalg_c_test.c)", function()
  local root = here:match("^(.*)/spec$") or "."
  local build = os.getenv("ND_BUILD") or "build"
  if not build:match("^/") then build = root .. "/" .. build end
  local san = (os.getenv("LD_PRELOAD") or ""):find("libasan", 1, true)
    and " -fsanitize=address,undefined" or ""
  local function run(cmd)
    local p = assert(io.popen("env -u LD_PRELOAD " .. cmd .. " 2>&1; echo \"rc=$?\""))
    local out = p:read("*a")
    p:close()
    return tonumber(out:match("rc=(%d+)%s*$")), out
  end
  it("compiles and passes", function()
    local exe = os.tmpname()
    local rc, out = run(("cc -std=c11 -Wall -Wextra -Werror -O1" .. san .. " -I%s/include "
      .. "%s/tests/linalg_c_test.c %s/libnd.a "
      .. C_LIBS .. " -o %s")
      :format(root, root, build, exe))
    assert.equals(0, rc, out)
    rc, out = run(exe)
    os.remove(exe)
    assert.equals(0, rc, out)
    assert.truthy(out:match("%d+ passed, 0 failed"), out)
  end)
end)
