-- Shared bench helpers: a monotonic clock, medians of interleaved runs,
-- NumPy timings through /usr/bin/python3, and the result table.
local ffi = require "ffi"
ffi.cdef [[
  typedef struct { long tv_sec; long tv_nsec; } nd_bench_timespec;
  int clock_gettime(int clk, nd_bench_timespec *ts);
]]
local ts = ffi.new("nd_bench_timespec")
-- sample_s: the least duration of one sample; warm_s: each function's
-- warm-up (a bench timing many tiny calls may lower both, then restore).
-- clock: CLOCK_MONOTONIC (1), or for a bench whose calls run on one
-- thread CLOCK_THREAD_CPUTIME_ID (3), which leaves out the time other
-- processes hold the CPU (NumPy's side then times with time.thread_time);
-- ND_BENCH_CLOCK=thread picks it for every bench, for a shared machine
-- (wrong for multi-threaded calls: their other threads are not counted).
-- settle: a full collection before each interleaved sample, so that a
-- function does not pay for the garbage the one before it left (views
-- and new results after clones: 2x either way between two runs).
local lib = { rows = {}, sample_s = 0.02, warm_s = 0.2, settle = false,
  clock = os.getenv("ND_BENCH_CLOCK") == "thread" and 3 or 1 }

function lib.now()
  ffi.C.clock_gettime(lib.clock, ts)
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9
end

local function median(xs)
  table.sort(xs)
  local n = #xs
  return n % 2 == 1 and xs[(n + 1) / 2] or (xs[n / 2] + xs[n / 2 + 1]) / 2
end
lib.median = median

-- Each timed function gets its own copy of the timing loop (load()ed per
-- function). One shared loop is one polymorphic call site: LuaJIT then runs
-- every later case through the traces and side exits compiled for the
-- earlier ones (after eight FFI-view cases, nd.empty(3) took 270 ns where
-- it takes 180 alone, or after jit.flush()). NumPy's side times each
-- statement in a process of its own.
local LOOP = "local fn, now = ... return function(batch) "
  .. "local t0 = now() for _ = 1, batch do fn() end return now() - t0 end"
local loops = setmetatable({}, { __mode = "k" })
local function loop_of(fn)
  local l = loops[fn]
  if not l then
    l = assert((loadstring or load)(LOOP))(fn, lib.now)
    loops[fn] = l
  end
  return l
end

-- Seconds per call of fn: calls are batched so one sample lasts at least
-- lib.sample_s (20 ms).
local function sample(fn, batch)
  return loop_of(fn)(batch) / batch
end
local function calibrate(fn)
  local batch = 1
  while true do
    local dt = loop_of(fn)(batch)
    if dt >= lib.sample_s or batch >= 2^24 then return batch end
    batch = batch * (dt < 0.002 and 10 or 2)
  end
end

-- Each function first runs for lib.warm_s (0.2 s), as NumPy's side does (timeit's
-- autorange, before its samples): on these VMs memory fresh from the
-- kernel stays slow for its first uses (a 1 M sort's results: 10 ms on
-- the 3rd call, 6.8 ms on the 30th), and that is not a per-call cost.
local function warm(fn, batch)
  local t0 = lib.now()
  repeat sample(fn, batch) until lib.now() - t0 >= lib.warm_s
end

-- Interleaves the named functions round by round; returns the median
-- seconds per call of each: { name = seconds }.
function lib.interleave(fns, rounds)
  rounds = rounds or 7
  local names, batch, samples = {}, {}, {}
  for name, fn in pairs(fns) do
    names[#names + 1] = name
    batch[name] = calibrate(fn)
    warm(fn, batch[name])
    samples[name] = {}
  end
  table.sort(names)
  for _ = 1, rounds do
    for _, name in ipairs(names) do
      if lib.settle then collectgarbage() end
      table.insert(samples[name], sample(fns[name], batch[name]))
    end
  end
  local out = {}
  for _, name in ipairs(names) do out[name] = median(samples[name]) end
  return out
end

function lib.time(fn, rounds)
  return lib.interleave({ f = fn }, rounds).f
end

-- NumPy: median seconds per call of `stmt` after `setup`, or nil when
-- NumPy is not installed. Threads are pinned to `threads` (default 1).
local numpy_ok
function lib.has_numpy()
  if numpy_ok == nil then
    numpy_ok = os.execute("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1")
    numpy_ok = numpy_ok == true or numpy_ok == 0
  end
  return numpy_ok
end

function lib.numpy(setup, stmt, rounds, threads)
  if not lib.has_numpy() then return nil end
  threads = threads or 1
  local script = os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write(([[
import time, timeit, statistics
import numpy as np
%s
t = timeit.Timer(%q, timer=%s, globals=globals())
n, _ = t.autorange()
n = max(1, n // 10)
print(statistics.median([t.timeit(n) / n for _ in range(%d)]))
]]):format(setup, stmt, lib.clock == 3 and "time.thread_time" or "time.perf_counter", rounds or 7))
  f:close()
  local env = ("OMP_NUM_THREADS=%d OPENBLAS_NUM_THREADS=%d "):format(threads, threads)
  local p = io.popen(env .. "/usr/bin/python3 " .. script .. " 2>&1")
  local out = p:read("*a")
  p:close()
  os.remove(script)
  local v = tonumber(out:match("^%s*(%S+)"))
  if not v then io.stderr:write("numpy bench failed: " .. out .. "\n") end
  return v
end

-- NumPy, many statements in one process: { [i] = median seconds per call
-- of stmts[i] } (nil where NumPy lacks it or it fails), timed as
-- lib.interleave times nd's (batches of at least lib.sample_s, a warm-up
-- of lib.warm_s, medians of `rounds`). Each entry is a statement or
-- { stmt, setup } whose setup runs, untimed, before every sample (a fresh
-- copy for an in-place statement). Empty when NumPy is not installed.
function lib.numpy_batch(setup, stmts, rounds, threads)
  if not lib.has_numpy() then return {} end
  threads = threads or 1
  local list = {}
  for i, s in ipairs(stmts) do
    if type(s) == "string" then s = { s, "pass" } end
    list[i] = ("(%q, %q)"):format(s[1], s[2] or "pass")
  end
  local script = os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write(([[
import time, timeit, statistics, warnings
import numpy as np
warnings.simplefilter("ignore")
np.seterr(all="ignore")
%s
def bench(stmt, setup): # locals here: the statements see setup's globals only
    try:
        t = timeit.Timer(stmt, setup, timer=%s, globals=globals())
        n = 1
        while True:
            dt = t.timeit(n)
            if dt >= %.17g or n >= 1 << 24: break
            n *= 10 if dt < %.17g / 10 else 2
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < %.17g: t.timeit(n)
        print(statistics.median([t.timeit(n) / n for _ in range(%d)]), flush=True)
    except Exception as e:
        print("-", type(e).__name__, flush=True)
for args in [%s]:
    bench(*args)
]]):format(setup, lib.clock == 3 and "time.thread_time" or "time.perf_counter",
    lib.sample_s, lib.sample_s, lib.warm_s, rounds or 7, table.concat(list, ",\n  ")))
  f:close()
  local env = ("OMP_NUM_THREADS=%d OPENBLAS_NUM_THREADS=%d "):format(threads, threads)
  local p = io.popen(env .. "/usr/bin/python3 " .. script .. " 2>&1")
  local out, lines = {}, {}
  for line in p:lines() do
    lines[#lines + 1] = line
    out[#lines] = tonumber(line:match("^(%S+)"))
  end
  p:close()
  os.remove(script)
  if #lines ~= #stmts then
    io.stderr:write(("numpy batch failed (%d answers for %d statements):\n%s\n")
      :format(#lines, #stmts, table.concat(lines, "\n")))
    return {}
  end
  return out
end

-- One result row: what was measured, its time, the reference and its time,
-- and the target ratio (nd / reference) when the issue names one.
function lib.row(case, t, ref_name, ref_t, target)
  lib.rows[#lib.rows + 1] = { case = case, t = t, ref = ref_name, ref_t = ref_t, target = target }
end

local function fmt_time(t)
  if not t then return "-" end
  if t < 1e-6 then return ("%.1f ns"):format(t * 1e9) end
  if t < 1e-3 then return ("%.2f us"):format(t * 1e6) end
  return ("%.3f ms"):format(t * 1e3)
end
lib.fmt_time = fmt_time

function lib.print_rows(title)
  if #lib.rows == 0 then return end -- a bench that printed its own table
  print(("\n== %s"):format(title))
  print(("%-48s %12s  %-26s %12s %8s %8s"):format("case", "nd", "reference", "ref time", "ratio", "target"))
  for _, r in ipairs(lib.rows) do
    local ratio = r.ref_t and r.t / r.ref_t
    print(("%-48s %12s  %-26s %12s %8s %8s"):format(r.case, fmt_time(r.t), r.ref or "-",
      fmt_time(r.ref_t), ratio and ("%.2fx"):format(ratio) or "-",
      r.target and ("%s%.2fx"):format(r.target < 0 and ">=" or "<=", math.abs(r.target)) or ""))
  end
  lib.rows = {}
end

return lib
