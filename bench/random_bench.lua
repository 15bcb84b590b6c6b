-- Random sampling against NumPy's Generator (PCG64; standard_normal is a
-- ziggurat) in the same run, 1 thread each side (nd's sampling is
-- single-threaded; the stream must not depend on the thread count).
local lib = require "lib"
local nd = require "nd"

local N = 10000000
local threads = nd.get_num_threads()
nd.set_num_threads(1)
local g = nd.generator(1)
local out = nd.empty(N)
local t = lib.interleave({
  randn_out = function() out:normal_(0, 1, g) end,
  rand = function() return g:rand(N) end,
  randn32 = function() return g:randn(N, "float32") end,
  randint = function() return g:randint(0, 1000, { N }) end,
  randperm = function() return g:randperm(1000000) end,
}, 5)

nd.set_num_threads(threads)
local setup = ("g = np.random.default_rng(1)\nout = np.empty(%d)"):format(N)
local function np(stmt) return lib.numpy(setup, stmt, 5, 1) end
-- The target row: nd and NumPy alternate round by round (each round a
-- median of 3), so load changes on a shared machine hit both sides.
local nd_s, np_s = {}, {}
for r = 1, 5 do
  nd.set_num_threads(1)
  nd_s[r] = lib.interleave({ f = function() return g:randn(N) end }, 3).f
  nd.set_num_threads(threads)
  np_s[r] = lib.numpy(setup, ("g.standard_normal(%d)"):format(N), 3, 1)
end
lib.row("randn 10 M float64 (alternating rounds)", lib.median(nd_s), "g.standard_normal(10M)",
  np_s[1] and lib.median(np_s), 1.0)
lib.row("normal_ into 10 M float64", t.randn_out, "standard_normal(out=)", np("g.standard_normal(out=out)"))
lib.row("rand 10 M float64", t.rand, "g.random(10M)", np(("g.random(%d)"):format(N)))
lib.row("randn 10 M float32", t.randn32, "standard_normal(f32)", np(("g.standard_normal(%d, dtype=np.float32)"):format(N)))
lib.row("randint(0, 1000) 10 M int64", t.randint, "g.integers(0, 1000, 10M)", np(("g.integers(0, 1000, %d)"):format(N)))
lib.row("randperm 1 M", t.randperm, "g.permutation(1M)", np("g.permutation(1000000)"))
