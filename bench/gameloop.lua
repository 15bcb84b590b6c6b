-- A game loop for 10 s (ND_GAMELOOP_SECONDS to change): each iteration
-- p = pos + vel; q = p * 0.016; m = A4:matmul(B4); r = m + I4 (pos, vel
-- 3-element float32; A4, B4, I4 4x4 float32), allocating (4 new tensors
-- per iteration) and with out= into preallocated tensors, alternating
-- 1-second slices (then a third slice each round: LuaJIT's own floor, see
-- below). Prints iterations/s, median, p99, p99.9, max per iteration and
-- RSS, and the issue 9 ratios. Run: bin/nd bench/gameloop.lua
local here = arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "bench"
package.path = here .. "/?.lua;" .. package.path
local lib = require "lib"
local nd = require "nd"

local SECONDS = tonumber(os.getenv("ND_GAMELOOP_SECONDS")) or 10
local pos, vel = nd.rand(3, "float32"), nd.rand(3, "float32")
local A4, B4, I4 = nd.rand(4, 4, "float32"), nd.rand(4, 4, "float32"), nd.eye(4, "float32")
local p_, q_, m_, r_ = nd.empty(3, "float32"), nd.empty(3, "float32"),
  nd.empty(4, 4, "float32"), nd.empty(4, 4, "float32")

-- LuaJIT's floor under the allocating variant: four bare cdata per
-- iteration of the size of nd's small tensors (FFI cdata, no finalizer),
-- kept as the variant keeps its results. Its p99.9 / median is the
-- collector's own.
local ffi = require "ffi"
local SMALL = pcall(ffi.typeof, "ndffi4_small") and ffi.typeof("ndffi4_small")
local sink = {}

local variants = {
  allocating = function()
    local p = pos + vel
    local q = p * 0.016
    local m = A4:matmul(B4)
    local r = m + I4
    return q, r
  end,
  out = function()
    nd.add(pos, vel, p_)
    nd.mul(p_, 0.016, q_)
    A4:matmul(B4, m_)
    nd.add(m_, I4, r_)
    return q_, r_
  end,
  floor = SMALL and function()
    local p, q, m, r = SMALL(), SMALL(), SMALL(), SMALL()
    sink[1], sink[2] = p, m
    return q, r
  end or nil,
}
local names = { "allocating", "out", variants.floor and "floor" or nil }

local function rss_kb()
  local f = io.open("/proc/self/status")
  if not f then return 0 end
  local s = f:read("*a"); f:close()
  return tonumber(s:match("VmRSS:%s*(%d+)")) or 0
end

-- Per-iteration times go into a preallocated histogram (10 ns buckets up
-- to 1 ms, then one overflow list), so measuring allocates nothing and RSS
-- shows nd's memory only.
local ffi = require "ffi"
local NB = 100000
local function hist() return { h = ffi.new("uint32_t[?]", NB), n = 0, sum = 0, max = 0, over = {} } end
local samples, rss = {}, {}
for _, name in ipairs(names) do samples[name], rss[name] = hist(), {} end
local now = lib.now
local slice = 1.0
for _ = 1, math.max(1, math.floor(SECONDS / (2 * slice))) do
  for _, name in ipairs(names) do
    local f, xs = variants[name], samples[name]
    local stop = now() + slice
    local t0 = now()
    while t0 < stop do
      f()
      local t1 = now()
      local dt = t1 - t0
      local b = math.floor(dt * 1e8)
      if b < NB then xs.h[b] = xs.h[b] + 1 else xs.over[#xs.over + 1] = dt end
      xs.n, xs.sum = xs.n + 1, xs.sum + dt
      if dt > xs.max then xs.max = dt end
      t0 = t1
    end
    rss[name][#rss[name] + 1] = rss_kb()
  end
end

local function pct(xs, p)
  local want, seen = math.max(1, math.ceil(xs.n * p)), 0
  for b = 0, NB - 1 do
    seen = seen + xs.h[b]
    if seen >= want then return (b + 0.5) * 1e-8 end
  end
  table.sort(xs.over)
  return xs.over[want - seen] or xs.max
end
local res = {}
print(("gameloop: %d s, alternating 1 s slices (noisy shared machine)"):format(SECONDS))
print(("%-11s %12s %10s %10s %10s %10s %16s"):format("variant", "iter/s", "median", "p99", "p99.9", "max", "RSS first..last"))
for _, name in ipairs(names) do
  local xs = samples[name]
  res[name] = { med = pct(xs, 0.5), p999 = pct(xs, 0.999) }
  print(("%-11s %12.0f %10s %10s %10s %10s %7d..%d kB"):format(name, xs.n / xs.sum,
    lib.fmt_time(pct(xs, 0.5)), lib.fmt_time(pct(xs, 0.99)), lib.fmt_time(pct(xs, 0.999)),
    lib.fmt_time(xs.max), rss[name][1], rss[name][#rss[name]]))
end
print(("allocating median / out median = %.2fx (target <= 2x); allocating p99.9 / its median = %.2fx (target <= 4x)")
  :format(res.allocating.med / res.out.med, res.allocating.p999 / res.allocating.med))
if res.floor then
  print(("floor (four bare %d-byte cdata per iteration): p99.9 / its median = %.2fx")
    :format(ffi.sizeof(SMALL), res.floor.p999 / res.floor.med))
end
