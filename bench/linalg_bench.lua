-- nd.linalg against NumPy's numpy.linalg (same OpenBLAS, one thread each
-- side: nd.set_num_threads(1), OPENBLAS_NUM_THREADS=1 for NumPy), on the
-- very same matrices (saved with nd.save, loaded with np.load):
-- 1. n = 512 float64 solve, inv, cholesky, qr, svd, eigh (target <= 1.05x);
-- 2. 10,000 batched 4x4 float32 inv and det (target >= 10x faster);
-- 3. one 4x4 float32 inv per call with a new result (target <= 1 us).
local lib = require "lib"
local nd = require "nd"
local L = nd.linalg

local threads = nd.get_num_threads()
nd.set_num_threads(1)
nd.manual_seed(1)
local dir = os.tmpname()
os.remove(dir)
os.execute("mkdir -p " .. dir)
local function save(name, t)
  local path = dir .. "/" .. name .. ".npy"
  nd.save(path, t)
  return ("np.load(%q)"):format(path)
end

-- 1. n = 512, float64.
local n = 512
local A = nd.randn(n, n) + nd.eye(n) * 4
local S = A:matmul(A:t()) + nd.eye(n) * n
local B = nd.randn(n, n)
local v = nd.randn(n)
local setup = ("a = %s\ns = %s\nb = %s\nv = %s"):format(save("a", A), save("s", S),
  save("b", B), save("v", v))
local cases = {
  { "solve(A, b) b (512,)", function() return L.solve(A, v) end, "np.linalg.solve(a, v)" },
  { "solve(A, B) B (512,512)", function() return L.solve(A, B) end, "np.linalg.solve(a, b)" },
  { "inv(A)", function() return L.inv(A) end, "np.linalg.inv(a)" },
  { "cholesky(S)", function() return L.cholesky(S) end, "np.linalg.cholesky(s)" },
  { "qr(A)", function() return L.qr(A) end, "np.linalg.qr(a)" },
  { "svd(A)", function() return L.svd(A) end, "np.linalg.svd(a, full_matrices=False)" },
  { "eigh(S)", function() return L.eigh(S) end, "np.linalg.eigh(s)" },
}
local fns = {}
for i, c in ipairs(cases) do fns[i] = c[2] end
local t = lib.interleave(fns, 5)
for i, c in ipairs(cases) do
  local tnp = lib.numpy(setup, c[3], 5)
  lib.row(("%d float64 %s"):format(n, c[1]), t[i], "NumPy " .. c[3]:gsub("np%.linalg%.", ""), tnp, 1.05)
end

-- 2. 10,000 batched 4x4 float32.
local m = 10000
local X = nd.randn({ m, 4, 4 }, "float32") + nd.eye(4, 4, "float32") * 3
setup = "x = " .. save("x", X)
t = lib.interleave({ function() return L.inv(X) end, function() return L.det(X) end }, 7)
lib.row("10000 x 4x4 float32 inv (batched)", t[1], "NumPy np.linalg.inv(x)",
  lib.numpy(setup, "np.linalg.inv(x)", 7), -10)
lib.row("10000 x 4x4 float32 det (batched)", t[2], "NumPy np.linalg.det(x)",
  lib.numpy(setup, "np.linalg.det(x)", 7), -10)

-- 3. One 4x4 float32 inv per call, a new result each time.
local one = X[1]:clone()
local inv = L.inv
t = lib.interleave({ function() return inv(one) end, function() return L.det(one) end }, 9)
setup = "a = " .. save("one", one)
lib.row("one 4x4 float32 inv (new result)", t[1], "NumPy np.linalg.inv(a)",
  lib.numpy(setup, "np.linalg.inv(a)", 9))
lib.row("one 4x4 float32 det", t[2], "NumPy np.linalg.det(a)",
  lib.numpy(setup, "np.linalg.det(a)", 9))
print(("one 4x4 inv per call: %.0f ns (target <= 1000 ns)"):format(t[1] * 1e9))

os.execute("rm -rf " .. dir)
nd.set_num_threads(threads)
