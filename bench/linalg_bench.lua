-- nd.linalg against NumPy's numpy.linalg (same OpenBLAS, one thread each
-- side: nd.set_num_threads(1), OPENBLAS_NUM_THREADS=1 for NumPy), on the
-- very same matrices (saved with nd.save, loaded with np.load):
-- 1. n = 512 float64 solve, inv, cholesky, qr, svd, eigh (target <= 1.05x);
-- 2. 10,000 batched 4x4 float32 inv and det (target >= 10x faster);
-- 3. one 4x4 float32 inv per call with a new result (target <= 1 us).
-- Wall and CPU time (os.clock, process_time) are both shown: on a loaded
-- machine the CPU time is the steadier of the two.
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

-- One NumPy process times every statement once (timeit, autoranged) and
-- prints wall and CPU (process_time) seconds per call, one line each.
local function numpy_round(setup, stmts)
  if not lib.has_numpy() then return nil end
  local script = os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write("import time, timeit\nimport numpy as np\n", setup, "\n")
  for _, st in ipairs(stmts) do
    f:write(([[
t = timeit.Timer(%q, globals=globals())
n, _ = t.autorange()
c0 = time.process_time(); w = t.timeit(n); c = time.process_time() - c0
print(w / n, c / n)
]]):format(st))
  end
  f:close()
  local p = io.popen("OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 /usr/bin/python3 " .. script .. " 2>&1")
  local out = p:read("*a")
  p:close()
  os.remove(script)
  local r = {}
  for w, c in out:gmatch("(%S+) (%S+)\n") do r[#r + 1] = { tonumber(w), tonumber(c) } end
  if #r ~= #stmts then io.stderr:write("numpy bench failed: " .. out .. "\n") return nil end
  return r
end

-- nd's wall and CPU (os.clock) seconds per call of fn, over >= 20 ms.
local function nd_sample(fn)
  local calls, w0, c0 = 0, lib.now(), os.clock()
  repeat
    fn()
    calls = calls + 1
  until lib.now() - w0 >= 0.02 and calls >= 1
  return { (lib.now() - w0) / calls, (os.clock() - c0) / calls }
end

-- Rounds alternate: every nd case, then one NumPy process for every case;
-- the medians of `rounds` samples each side (wall and CPU separately).
local function compare(cases, setup, rounds, target, title_fmt)
  local stmts = {}
  for i, c in ipairs(cases) do stmts[i] = c[3] end
  local nw, nc, pw, pc = {}, {}, {}, {}
  for i = 1, #cases do nw[i], nc[i], pw[i], pc[i] = {}, {}, {}, {} end
  for i, c in ipairs(cases) do c[2]() end -- warm up
  for _ = 1, rounds do
    for i, c in ipairs(cases) do
      local s = nd_sample(c[2])
      table.insert(nw[i], s[1]); table.insert(nc[i], s[2])
    end
    local r = numpy_round(setup, stmts)
    for i = 1, #cases do
      if r then table.insert(pw[i], r[i][1]); table.insert(pc[i], r[i][2]) end
    end
  end
  for i, c in ipairs(cases) do
    local ref = "NumPy " .. c[3]:gsub("np%.linalg%.", "")
    local tw = #pw[i] > 0 and lib.median(pw[i]) or nil
    local tc = #pc[i] > 0 and lib.median(pc[i]) or nil
    lib.row(title_fmt:format(c[1]) .. " wall", lib.median(nw[i]), ref, tw, target)
    lib.row(title_fmt:format(c[1]) .. " cpu", lib.median(nc[i]), ref, tc, target)
  end
end

-- 1. n = 512, float64.
local n = 512
local A = nd.randn(n, n) + nd.eye(n) * 4
local S = A:matmul(A:t()) + nd.eye(n) * n
local B = nd.randn(n, n)
local v = nd.randn(n)
local setup = ("a = %s\ns = %s\nb = %s\nv = %s"):format(save("a", A), save("s", S),
  save("b", B), save("v", v))
compare({
  { "solve(A, b) b (512,)", function() return L.solve(A, v) end, "np.linalg.solve(a, v)" },
  { "solve(A, B) B (512,512)", function() return L.solve(A, B) end, "np.linalg.solve(a, b)" },
  { "inv(A)", function() return L.inv(A) end, "np.linalg.inv(a)" },
  { "cholesky(S)", function() return L.cholesky(S) end, "np.linalg.cholesky(s)" },
  { "qr(A)", function() return L.qr(A) end, "np.linalg.qr(a)" },
  { "svd(A)", function() return L.svd(A) end, "np.linalg.svd(a, full_matrices=False)" },
  { "eigh(S)", function() return L.eigh(S) end, "np.linalg.eigh(s)" },
}, setup, 5, 1.05, "512 float64 %s")

-- 2. 10,000 batched 4x4 float32; 3. one 4x4 float32 per call (a new result).
local X = nd.randn({ 10000, 4, 4 }, "float32") + nd.eye(4, 4, "float32") * 3
local one = X[1]:clone()
compare({
  { "10000 x 4x4 inv (batched)", function() return L.inv(X) end, "np.linalg.inv(x)" },
  { "10000 x 4x4 det (batched)", function() return L.det(X) end, "np.linalg.det(x)" },
}, "x = " .. save("x", X), 7, -10, "float32 %s")
compare({
  { "one 4x4 inv (new result)", function() return L.inv(one) end, "np.linalg.inv(a)" },
  { "one 4x4 det", function() return L.det(one) end, "np.linalg.det(a)" },
  { "nd.empty(4,4) (allocation alone)", function() return nd.empty(4, 4, "float32") end, "np.empty((4, 4), np.float32)" },
}, "a = " .. save("one", one), 7, nil, "float32 %s")

os.execute("rm -rf " .. dir)
nd.set_num_threads(threads)
