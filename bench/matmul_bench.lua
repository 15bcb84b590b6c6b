-- matmul: transposed and narrowed views against contiguous operands (same
-- plan, no copies), Lua's matmul(a, b, out) against cblas_?gemm called
-- from C (bench/ref_blas.c, same OpenBLAS, same threads), and small
-- products per call against NumPy's np.matmul(a, b, out=c).
local lib = require "lib"
local nd = require "nd"
local ref = require "ref_blas"

local function zero_copy(a, b)
  local p = nd.matmul_plan(a, b)
  assert(#p.copies == 0, "expected a zero-copy plan")
  return p
end

-- 1. Views vs contiguous, n = 1024.
local n = 1024
for _, dt in ipairs({ "float32", "float64" }) do
  local a, b = nd.rand(n, n, dt), nd.rand(n, n, dt)
  local at, bt = a:t(), b:t()
  local big = nd.rand(n + 76, n + 76, dt)
  local an = big:narrow(1, 5, n):narrow(2, 9, n)
  zero_copy(at, b); zero_copy(a, bt); zero_copy(an, b)
  local t = lib.interleave({
    contiguous = function() return a:matmul(b) end,
    ta = function() return at:matmul(b) end,
    tb = function() return a:matmul(bt) end,
    narrowed = function() return an:matmul(b) end,
  }, 9)
  -- OpenBLAS's own cost of a transposed operand, from C, interleaved.
  local c = { NN = {}, TN = {}, NT = {} }
  for _ = 1, 9 do
    for f, xs in pairs(c) do xs[#xs + 1] = ref.gemm(n, dt, 1, f) end
  end
  for f, xs in pairs(c) do c[f] = lib.median(xs) end
  lib.row(("%d %s C cblas [T,N] (OpenBLAS itself)"):format(n, dt), c.TN, "C cblas [N,N]", c.NN)
  lib.row(("%d %s C cblas [N,T] (OpenBLAS itself)"):format(n, dt), c.NT, "C cblas [N,N]", c.NN)
  local base = ("a:matmul(b) %s"):format(dt)
  lib.row(("%d %s a:t():matmul(b)  [T,N]"):format(n, dt), t.ta, base, t.contiguous, 1.05)
  lib.row(("%d %s a:matmul(b:t())  [N,T]"):format(n, dt), t.tb, base, t.contiguous, 1.05)
  lib.row(("%d %s narrowed(1100^2):matmul(b)"):format(n, dt), t.narrowed, base, t.contiguous, 1.05)
end

-- 2. Lua matmul(a, b, out) against cblas from C: interleaved rounds.
for _, dt in ipairs({ "float32", "float64" }) do
  for _, m in ipairs({ 256, 1024 }) do
    local a, b, out = nd.rand(m, m, dt), nd.rand(m, m, dt), nd.empty(m, m, dt)
    local calls = m == 256 and 50 or 3
    nd.matmul(a, b, out)
    local tn, tc = {}, {}
    for _ = 1, 9 do
      local t0 = lib.now()
      for _ = 1, calls do nd.matmul(a, b, out) end
      tn[#tn + 1] = (lib.now() - t0) / calls
      tc[#tc + 1] = ref.gemm(m, dt, calls)
    end
    local t1, t2 = lib.median(tn), lib.median(tc)
    local flops = 2 * m ^ 3
    lib.row(("%d %s matmul(a,b,out) %.1f GFLOP/s"):format(m, dt, flops / t1 / 1e9), t1,
      ("C cblas_%sgemm %.1f GFLOP/s"):format(dt == "float32" and "s" or "d", flops / t2 / 1e9),
      t2, 1 / 0.95)
  end
end

-- 3. Small float32 products per call: the FFI fast path, the C binding
-- (no out: allocates), cblas_sgemm from C, NumPy -- all on one thread
-- (lib.numpy pins NumPy's to 1), as a game loop would run them.
local threads = nd.get_num_threads()
nd.set_num_threads(1)
for _, m in ipairs({ 4, 8, 16 }) do
  local a, b, out = nd.rand(m, m, "float32"), nd.rand(m, m, "float32"), nd.empty(m, m, "float32")
  local matmul = nd.matmul
  local t = lib.interleave({
    fast = function() matmul(a, b, out) end,
    alloc = function() return matmul(a, b) end,
  }, 9)
  local tc = lib.median({ ref.gemm(m, "float32", 200000), ref.gemm(m, "float32", 200000),
                          ref.gemm(m, "float32", 200000) })
  local tnp = lib.numpy(([[
a = np.random.rand(%d, %d).astype(np.float32)
b = np.random.rand(%d, %d).astype(np.float32)
c = np.empty((%d, %d), dtype=np.float32)]]):format(m, m, m, m, m, m), "np.matmul(a, b, out=c)", 7)
  lib.row(("%dx%d float32 matmul(a, b, out)"):format(m, m), t.fast, "NumPy np.matmul(a,b,out=c)", tnp, 0.2)
  lib.row(("%dx%d float32 matmul(a, b) (allocates)"):format(m, m), t.alloc, "NumPy np.matmul(a,b,out=c)", tnp)
  lib.row(("%dx%d float32 matmul(a, b, out)"):format(m, m), t.fast, "C cblas_sgemm direct", tc)
end
nd.set_num_threads(threads)
