-- Issue 25's bench (`make bench BENCH=einsum`): einsum against nd's own
-- matmul of the same products (interleaved) and against NumPy's einsum
-- (optimize=True) and PyTorch's, one thread each side; then the fused
-- updates: addcmul_/addcdiv_ against PyTorch's (below), and
-- nd's in-place addmv_ and baddbmm_ against the same BLAS calls made from
-- C (bench/ref_blas.c: cblas_?gemv, and one cblas_?gemm per batch element,
-- each updating C in place with the same beta and alpha), both on one
-- thread, rounds interleaved, medians. Also the new-result forms, which
-- copy c into the result first.
local lib = require "lib"
local nd = require "nd"
local ref = require "ref_blas"

local threads = nd.get_num_threads()
nd.set_num_threads(1) -- OpenBLAS's too: both sides on one thread
local beta, alpha = 0.5, 2
local function rounds(calls, nd_call, c_call)
  local tn, tc = {}, {}
  nd_call()
  for _ = 1, 9 do
    local t0 = lib.now()
    for _ = 1, calls do nd_call() end
    tn[#tn + 1] = (lib.now() - t0) / calls
    tc[#tc + 1] = c_call(calls)
  end
  return lib.median(tn), lib.median(tc)
end

-- einsum: the faster of NumPy's einsum(optimize=True) and torch.einsum,
-- one process each, one thread.
local has_torch = os.execute("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1")
has_torch = has_torch == true or has_torch == 0
local function python_best(np_setup, np_stmt, torch_setup, torch_stmt)
  local tn = lib.numpy(np_setup, np_stmt)
  local tt = has_torch and lib.numpy("import torch; torch.set_num_threads(1); " .. torch_setup, torch_stmt) or nil
  if tn and tt then
    return math.min(tn, tt), tn <= tt and "np.einsum(optimize=True)" or "torch.einsum",
      tn <= tt and tt or tn, tn <= tt and "torch.einsum" or "np.einsum(optimize=True)"
  end
  return tn or tt, tn and "np.einsum(optimize=True)" or tt and "torch.einsum" or "NumPy absent"
end
local function copies(p)
  local n = 0
  for _, s in ipairs(p.steps) do n = n + #s.copies end
  return n
end
do
  local cases = {
    { "bij,bjk->bik", { { 64, 256, 256 }, { 64, 256, 256 } }, "float32",
      function(a, b) return nd.matmul(a, b) end, "nd.matmul(a, b)" },
    { "ij,jk->ik", { { 1024, 1024 }, { 1024, 1024 } }, "float32",
      function(a, b) return nd.matmul(a, b) end, "nd.matmul(a, b)", true },
    { "bhqd,bhkd->bhqk", { { 2, 8, 512, 64 }, { 2, 8, 512, 64 } }, "float32",
      function(q, k) return nd.matmul(q, k:transpose(3, 4)) end, "nd.matmul(q, k:transpose(3, 4))" },
  }
  for _, c in ipairs(cases) do
    local spec, shapes, dt, mm, mm_name, transposed = c[1], c[2], c[3], c[4], c[5], c[6]
    local a, b = nd.rand(shapes[1], dt), nd.rand(shapes[2], dt)
    if transposed then a, b = a:t(), b:t() end
    local p = nd.einsum_plan(spec, a, b)
    local tt = lib.interleave({
      einsum = function() return nd.einsum(spec, a, b) end,
      matmul = function() return mm(a, b) end,
    }, 7)
    local label = ("nd.einsum(%q) %s %s%s, %d copies"):format(spec,
      table.concat(shapes[1], "x"), dt, transposed and " transposed" or "", copies(p))
    lib.row(label, tt.einsum, mm_name, tt.matmul, 1.05)
    local sa, sb = table.concat(shapes[1], ","), table.concat(shapes[2], ",")
    local tr = transposed and ".T" or ""
    local pt, pname, other_t, other_name = python_best(
      ("a = np.random.rand(%s).astype(np.%s)%s; b = np.random.rand(%s).astype(np.%s)%s")
        :format(sa, dt, tr, sb, dt, tr),
      ("np.einsum(%q, a, b, optimize=True)"):format(spec),
      ("a = torch.rand(%s)%s; b = torch.rand(%s)%s"):format(sa, transposed and ".t()" or "", sb,
        transposed and ".t()" or ""),
      ("torch.einsum(%q, a, b)"):format(spec))
    lib.row(label, tt.einsum, pname, pt, 0.5) -- the faster of the two
    if other_t then lib.row(label, tt.einsum, other_name, other_t) end
  end
  -- a chain, in the cost-based order
  local A, B, C = nd.rand(1000, 10), nd.rand(10, 1000), nd.rand(1000, 10)
  local tc = lib.interleave({ einsum = function() return nd.einsum("ij,jk,kl->il", A, B, C) end }, 7)
  local tn = lib.numpy("a = np.random.rand(1000, 10); b = np.random.rand(10, 1000); c = np.random.rand(1000, 10)",
    "np.einsum('ij,jk,kl->il', a, b, c, optimize=True)")
  lib.row('nd.einsum("ij,jk,kl->il") 1000x10x1000x10 float64', tc.einsum,
    "np.einsum(optimize=True)", tn, 1.0)
  -- 10,000 4x4 matrices times 10,000 4-vectors
  local M, v = nd.rand(10000, 4, 4), nd.rand(10000, 4)
  local tm = lib.interleave({ einsum = function() return nd.einsum("nij,nj->ni", M, v) end }, 7)
  local tnm = lib.numpy("m = np.random.rand(10000, 4, 4); v = np.random.rand(10000, 4)",
    "np.einsum('nij,nj->ni', m, v)")
  lib.row('nd.einsum("nij,nj->ni") 10000 x 4x4 float64', tm.einsum, "np.einsum", tnm, 0.25)
  -- one small product with a new result, per call
  local m4, v4 = nd.rand(4, 4), nd.rand(4)
  local ts = lib.interleave({
    einsum = function() return nd.einsum("ij,j->i", m4, v4) end,
    matmul = function() return nd.matmul(m4, v4) end,
  }, 9)
  local tns = lib.numpy("m = np.random.rand(4, 4); v = np.random.rand(4)", "np.einsum('ij,j->i', m, v)")
  lib.row('nd.einsum("ij,j->i") 4x4 by 4 float64 (new result)', ts.einsum, "np.einsum", tns, 0.5)
  lib.row('nd.einsum("ij,j->i") 4x4 by 4 float64 (new result)', ts.einsum, "nd.matmul(m, v)", ts.matmul)
end

for _, dt in ipairs({ "float32", "float64" }) do
  local n = 4096
  local A, x, y = nd.rand(n, n, dt), nd.rand(n, dt), nd.rand(n, dt)
  local t, c = rounds(5, function() y:addmv_(A, x, beta, alpha) end,
    function(calls) return ref.gemv(n, dt, calls, beta, alpha) end)
  lib.row(("y:addmv_(A, x, b, a) %d^2 %s"):format(n, dt), t, ("C cblas_%sgemv"):format(dt == "float32" and "s" or "d"), c, 1.05)
  local tn = rounds(5, function() return nd.addmv(y, A, x, beta, alpha) end, function() return 0 end)
  lib.row(("nd.addmv(y, A, x, b, a) %d^2 %s (new)"):format(n, dt), tn, "y:addmv_ (in place)", t)
end

for _, dt in ipairs({ "float32", "float64" }) do
  local b, n = 64, 256
  local A, B, C = nd.rand(b, n, n, dt), nd.rand(b, n, n, dt), nd.rand(b, n, n, dt)
  local t, c = rounds(2, function() C:baddbmm_(A, B, beta, alpha) end,
    function(calls) return ref.gemm_batch(b, n, dt, calls, beta, alpha) end)
  local flops = 2 * b * n ^ 3
  lib.row(("C:baddbmm_(A, B, b, a) %dx%d^3 %s %.1f GFLOP/s"):format(b, n, dt, flops / t / 1e9), t,
    ("C %d x cblas_%sgemm"):format(b, dt == "float32" and "s" or "d"), c, 1.05)
  local W = nd.rand(n, n, dt)
  local ts = rounds(2, function() W:addbmm_(A, B, beta, alpha) end,
    function(calls) return ref.gemm_batch(b, n, dt, calls, beta, alpha) end)
  lib.row(("W:addbmm_(A, B, b, a) %dx%d^3 %s"):format(b, n, dt), ts,
    ("C %d x cblas_%sgemm"):format(b, dt == "float32" and "s" or "d"), c)
end
-- addcmul_/addcdiv_ over 1 M float32 against PyTorch's (one thread each
-- side; lib.numpy runs the statement in /usr/bin/python3, torch imported
-- in its setup; not `t`, which lib.numpy's timer takes), and the
-- new-result forms.
local N = 1000000
local t, a, b = nd.rand(N, "float32"), nd.rand(N, "float32"), nd.rand(N, "float32") + 0.5
local TS = ("import torch; torch.set_num_threads(1); x = torch.rand(%d); a = torch.rand(%d); "
  .. "b = torch.rand(%d) + 0.5"):format(N, N, N)
for _, name in ipairs({ "addcmul", "addcdiv" }) do
  local tt = lib.interleave({
    inplace = function() t[name .. "_"](t, a, b, 1e-3) end,
    new = function() return nd[name](t, a, b, 1e-3) end,
  }, 9)
  local ti = has_torch and lib.numpy(TS, ("x.%s_(a, b, value=1e-3)"):format(name)) or nil
  local tn = has_torch and lib.numpy(TS, ("torch.%s(x, a, b, value=1e-3)"):format(name)) or nil
  lib.row(("t:%s_(a, b, v) 1M float32"):format(name), tt.inplace,
    has_torch and ("PyTorch t.%s_"):format(name) or "PyTorch absent", ti, 1.0)
  lib.row(("nd.%s(t, a, b, v) 1M float32"):format(name), tt.new,
    has_torch and ("PyTorch torch.%s"):format(name) or "PyTorch absent", tn)
end
nd.set_num_threads(threads)
