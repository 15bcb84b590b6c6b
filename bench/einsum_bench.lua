-- Issue 25's bench (`make bench BENCH=einsum`), so far its fused updates:
-- addcmul_/addcdiv_ against PyTorch's (below), and
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
local has_torch = os.execute("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1")
has_torch = has_torch == true or has_torch == 0
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
