-- Elementwise ops and reductions on float32 4096x4096 against NumPy (same
-- thread count; NumPy's ufuncs and sums are single-threaded whatever it is
-- given), a C STREAM add, and nd's own contiguous add; per-call overhead on
-- 3-element tensors from LuaJIT (the FFI fast path) against np.add(out=).
local lib = require "lib"
local nd = require "nd"
local ref = require "ref_stream"

local threads = nd.get_num_threads()
local N = 4096
local a, b = nd.rand(N, N, "float32"), nd.rand(N, N, "float32")
local row = nd.rand(N, "float32")
local c = nd.empty(N, N, "float32")
local at = a:t()

local t = lib.interleave({
  add = function() nd.add(a, b, c) end,
  add_new = function() return a + b end,
  add_t = function() nd.add(at, b, c) end,
  add_row = function() nd.add(a, row, c) end,
  sum = function() return a:sum() end,
  sum1 = function() return a:sum(1) end,
  sum2 = function() return a:sum(2) end,
  exp = function() nd.exp(a, c) end,
})

local setup = ([[
a = np.random.rand(%d, %d).astype(np.float32)
b = np.random.rand(%d, %d).astype(np.float32)
row = np.random.rand(%d).astype(np.float32)
c = np.empty((%d, %d), np.float32)
]]):format(N, N, N, N, N, N, N)
local function np(stmt) return lib.numpy(setup, stmt, 7, threads) end

local stream = ref.add(N * N, 7, threads)
lib.row("a + b (out) contiguous", t.add, "C STREAM add", stream, 1.3)
lib.row("a + b (out) contiguous", t.add, "np.add(a, b, out=c)", np("np.add(a, b, out=c)"), 1.0)
lib.row("a + b (new result)", t.add_new, "a + b", np("a + b"), 1.0)
lib.row("a:t() + b (out), mixed strides", t.add_t, "np.add(a.T, b, out=c)", np("np.add(a.T, b, out=c)"), 1.0)
lib.row("a:t() + b vs nd contiguous add", t.add_t, "nd a + b (out)", t.add, 2.5)
lib.row("a + row (out), broadcast row", t.add_row, "np.add(a, row, out=c)", np("np.add(a, row, out=c)"), 1.0)
lib.row("a:sum()", t.sum, "a.sum()", np("a.sum()"), 1.0)
lib.row("a:sum(1)", t.sum1, "a.sum(axis=0)", np("a.sum(axis=0)"), 1.0)
lib.row("a:sum(2)", t.sum2, "a.sum(axis=1)", np("a.sum(axis=1)"), 1.0)
lib.row("a:exp() (out)", t.exp, "np.exp(a, out=c)", np("np.exp(a, out=c)"), 1.0)

local s1, s2, s3 = nd.tensor({ 1, 2, 3 }, "float32"), nd.tensor({ 4, 5, 6 }, "float32"), nd.empty(3, "float32")
local add = nd.add
local tiny = lib.time(function() for _ = 1, 1000 do add(s1, s2, s3) end end) / 1000
local tiny_np = lib.numpy([[
a = np.array([1, 2, 3], np.float32); b = np.array([4, 5, 6], np.float32); c = np.empty(3, np.float32)
]], "np.add(a, b, out=c)", 7, threads)
lib.row("add(a, b, out) on 3 elements (LuaJIT FFI)", tiny, "np.add(a, b, out=c)", tiny_np, 1 / 3)
