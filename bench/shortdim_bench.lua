-- Issue 26, items 1 and 2: reductions along a short last dim, and copies
-- and reductions of overlapping window views, against NumPy's same call,
-- 1 thread each side. Target: each <= 1.0x NumPy.
--   make bench BENCH=shortdim
-- NumPy's side runs every cell in one process first (its medians of 5
-- samples of about 20 ms each); nd's side then times each cell on its own
-- (lib.interleave: medians of 3, 5 for the window cases), on data made
-- the same way.
local lib = require "lib"
local nd = require "nd"

local ROWS = { 20000, 1000000 }
local KS = { 2, 3, 4, 8, 16 }
local DT = { "float32", "float64", "int32" }
local OPS = { "min", "max", "argmin", "argmax", "sum", "mean" }
local H, W = 480, 640

local cells = {}
for _, r in ipairs(ROWS) do
  for _, dt in ipairs(DT) do
    for _, k in ipairs(KS) do
      for _, op in ipairs(OPS) do
        cells[#cells + 1] = { r = r, dt = dt, k = k, op = op,
          name = ("%s(2) %dx%d %s"):format(op, r, k, dt), np = ("a.%s(1)"):format(op) }
      end
    end
  end
end
local im2col = { name = ("im2col copy %dx%d float32, 3x3"):format(H + 2, W + 2),
  np = "swv(p, (3, 3)).reshape(-1, 9)" }
local blur = { name = ("5x5 box blur mean({3,4}) %dx%d float32"):format(H + 4, W + 4),
  np = "swv(p5, (5, 5)).mean((2, 3))" }

-- NumPy: every cell in one process, arrays made per (rows, dtype, k).
local np_times = {}
if lib.has_numpy() then
  local script = os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write([[
import timeit, statistics
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view as swv
rng = np.random.default_rng(1)
def mk(r, k, dt):
    if dt == 'int32':
        return rng.integers(0, 1000, (r, k)).astype(np.int32)
    return (rng.random((r, k)) * 100).astype(dt)
def cell(i, stmt):
    t = timeit.Timer(stmt, globals=globals())
    n = max(1, int(0.02 / max(t.timeit(1), 1e-7)))
    print(i, statistics.median([t.timeit(n) / n for _ in range(5)]), flush=True)
]])
  f:write(("p = rng.random((%d, %d), dtype=np.float32)\n"):format(H + 2, W + 2))
  f:write(("p5 = rng.random((%d, %d), dtype=np.float32)\n"):format(H + 4, W + 4))
  f:write(("cell(0, %q)\ncell(-1, %q)\n"):format(im2col.np, blur.np))
  local made
  for i, c in ipairs(cells) do
    local key = c.r .. c.dt .. c.k
    if key ~= made then
      f:write(("a = mk(%d, %d, %q)\n"):format(c.r, c.k, c.dt))
      made = key
    end
    f:write(("cell(%d, %q)\n"):format(i, c.np))
  end
  f:close()
  local p = io.popen("OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 /usr/bin/python3 " .. script .. " 2>&1")
  for line in p:lines() do
    local i, t = line:match("^(%-?%d+) (%S+)$")
    if i then np_times[tonumber(i)] = tonumber(t) else io.stderr:write(line .. "\n") end
  end
  p:close()
  os.remove(script)
end

local threads = nd.get_num_threads()
nd.set_num_threads(1)
local g = nd.generator(1)
local function mk(r, k, dt)
  if dt == "int32" then return g:randint(0, 1000, { r, k }):to("int32") end
  return g:rand({ r, k }):mul(100):to(dt)
end

local p = g:rand({ H + 2, W + 2 }, "float32")
local p5 = g:rand({ H + 4, W + 4 }, "float32")
local t_im2col = lib.interleave({ f = function()
  return p:unfold(1, 3, 1):unfold(2, 3, 1):reshape(H * W, 9)
end }, 5).f
local t_blur = lib.interleave({ f = function()
  return p5:unfold(1, 5, 1):unfold(2, 5, 1):mean({ 3, 4 })
end }, 5).f

local t = {}
local a, made
for i, c in ipairs(cells) do
  local key = c.r .. c.dt .. c.k
  if key ~= made then
    a = nil
    collectgarbage()
    a = mk(c.r, c.k, c.dt)
    made = key
  end
  local x, op = a, c.op
  t[i] = lib.interleave({ f = function() return x[op](x, 2) end }, 3).f
end
nd.set_num_threads(threads)

lib.row(im2col.name, t_im2col, im2col.np, np_times[0], 1.0)
lib.row(blur.name, t_blur, blur.np, np_times[-1], 1.0)
for i, c in ipairs(cells) do lib.row(c.name, t[i], c.np, np_times[i], 1.0) end
