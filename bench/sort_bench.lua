-- Sorting, scans and statistics against NumPy, 1 thread each side (NumPy's
-- sorts are single-threaded; nd is pinned with set_num_threads(1)).
-- References: np.sort (AVX-512 sorting networks for float32 on this CPU),
-- np.argsort(kind="stable"), np.argpartition for topk, np.median,
-- np.cumsum, np.histogram.
local lib = require "lib"
local nd = require "nd"

local threads = nd.get_num_threads()
nd.set_num_threads(1)
local M = 1000000
local a = nd.rand(M, "float32")
local sq = nd.rand(1000, 1000, "float32")
local big = nd.rand(10 * M)
local big32 = nd.rand(10 * M, "float32")

-- Each case is timed on its own, as NumPy's side is (one statement per
-- process): interleaved with cumsum's and histc's 80 MB passes, a 1 M
-- sort found its data and its result blocks out of cache (wall 1.5-2x CPU).
local cases = {
  sort = function() return a:sort() end,
  sort_rows = function() return sq:sort(2) end,
  argsort = function() return a:argsort() end,
  topk = function() return a:topk(10) end,
  median = function() return a:median() end,
  cumsum = function() return big:cumsum(1) end,
  histc = function() return big32:histc(100) end,
}
local t = {}
for name, f in pairs(cases) do t[name] = lib.time(f, 5) end

local setup = ([[
rng = np.random.default_rng(1)
a = rng.random(%d, dtype=np.float32)
sq = rng.random((1000, 1000), dtype=np.float32)
big = rng.random(%d)
big32 = rng.random(%d, dtype=np.float32)
]]):format(M, 10 * M, 10 * M)
local function np(stmt) return lib.numpy(setup, stmt, 5, 1) end

lib.row("sort 1M float32 (values, indices)", t.sort, "np.sort(a)", np("np.sort(a)"), 1.0)
-- nd's sort also returns int64 indices (3x np.sort's output bytes): the
-- NumPy idiom giving both is an argsort and a gather (no target).
lib.row("sort 1M float32 (values, indices)", t.sort, "i=np.argsort(a); a[i]",
  np("i = np.argsort(a); a[i]"))
lib.row("sort 1000x1000 float32 along dim 2", t.sort_rows, "np.sort(sq, axis=1)", np("np.sort(sq, axis=1)"), 1.0)
lib.row("argsort 1M float32", t.argsort, "argsort(kind=stable)", np("np.argsort(a, kind='stable')"), 1.0)
lib.row("topk(10) of 1M float32", t.topk, "np.argpartition(a, -10)", np("np.argpartition(a, -10)"), 1.0)
lib.row("median of 1M float32", t.median, "np.median(a)", np("np.median(a)"), 1.0)
lib.row("cumsum of 10M float64", t.cumsum, "np.cumsum(big)", np("np.cumsum(big)"), 1.0)
lib.row("histc(100) of 10M float32", t.histc, "np.histogram(big32, 100)", np("np.histogram(big32, 100)"), 1.0)

-- The two sort targets again in process CPU time (os.clock; NumPy's
-- time.process_time), medians of 9 calls per round, nd and NumPy rounds
-- interleaved (3 each): on a shared machine wall-clock medians mostly
-- measure the other processes' load.
local function cpu_samples(fn, out)
  for _ = 1, 9 do
    collectgarbage()
    local t0 = os.clock()
    fn()
    out[#out + 1] = os.clock() - t0
  end
end
local cpu_cases = {
  { "sort 1M float32 (values, indices) [cpu]", function() return a:sort() end, "np.sort(a) [cpu]", "np.sort(a)" },
  { "sort 1000x1000 float32 along dim 2 [cpu]", function() return sq:sort(2) end,
    "np.sort(sq, axis=1) [cpu]", "np.sort(sq, axis=1)" },
}
local nd_s, np_s = {}, {}
for i = 1, #cpu_cases do nd_s[i], np_s[i] = {}, {} end
local script = os.tmpname()
if lib.has_numpy() then
  local f = assert(io.open(script, "w"))
  f:write("import time\nimport numpy as np\n", setup, "\n")
  for i, c in ipairs(cpu_cases) do
    f:write(("for _ in range(9):\n  t0 = time.process_time(); %s; print(%d, time.process_time() - t0)\n"):format(c[4], i))
  end
  f:close()
end
for _ = 1, 3 do
  for i, c in ipairs(cpu_cases) do cpu_samples(c[2], nd_s[i]) end
  if lib.has_numpy() then
    local p = io.popen("OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 /usr/bin/python3 " .. script .. " 2>&1")
    for line in p:lines() do
      local i, v = line:match("^(%d+)%s+(%S+)$")
      if i then table.insert(np_s[tonumber(i)], tonumber(v)) end
    end
    p:close()
  end
end
os.remove(script)
for i, c in ipairs(cpu_cases) do
  lib.row(c[1], lib.median(nd_s[i]), c[3], #np_s[i] > 0 and lib.median(np_s[i]) or nil, 1.0)
end
nd.set_num_threads(threads)
