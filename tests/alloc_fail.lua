-- The Lua script of the allocation-failure sweep (tests/alloc_fail.c):
-- a bit of everything that allocates. Any error must be "not enough memory".
local a = nd.arange(24):reshape(2, 3, 4):double()
local b = a:transpose(1, 3):contiguous()
local c = (a + 1) * a:flip(2) - a:exp()
local m = nd.matmul(nd.rand(5, 7):t(), nd.ones(5, 3, "int32"))
local s = c:sum(2) + m:max() + a:mean()
local v, i = c:max(3)
local t = nd.cat({ a, a }, 2)
t[{ {}, 1, {} }] = 5
local w = nd.arange(11):as_strided({ 3, 2 }, { 3, 4 }, 0)
w:fill_(-1)
local p = tostring(t) .. tostring(nd.zeros(1):expand(2 ^ 40))
local path = os.tmpname()
nd.save(path, b)
local l = nd.load(path)
os.remove(path)
assert(nd.equal(l, b))
local x = nd.tensor({ { 1, 2 }, { 3, 4 } }, "float32"):to("int64"):clone()
x:add_(m:sum() > 0 and 1 or 2)
-- Scratch: LAPACK workspaces, the sort's lanes, tiles for a transposed
-- operand, the overlap search, wrap's owner anchor.
local A = nd.randn(6, 6)
local X = nd.linalg.solve(A, nd.rand(6, 40))
local U, S, Vh = nd.linalg.svd(nd.rand(7, 5))
local W, V = nd.linalg.eigh(A + A:t())
local sv, si = nd.rand(30, 40):sort(2)
local ix = nd.tensor({ 1, 3 }, "int64")
local g = sv:gather(2, si) + sv:index_select(1, ix):sum()
local ms = sv:masked_select(sv:gt(0.5))
local q = nd.rand(64, 48) * nd.rand(48, 64):t()
local o = nd.arange(13):as_strided({ 2, 2, 2 }, { 3, 4, 5 }, 0)
o:fill_(-1)
local pd = a:pad({ 2, -1, 1, 1 }, "reflect") + a:pad({ 1, 1 }, "circular")[{ {}, {}, { 2, 5 } }]:sum()
local bc = nd.bincount(nd.tensor({ 1, 5, 5 }, "uint8"), nd.ones(3, "int32"), 8)
local oh = nd.tensor({ { 1, 3 } }, "int64"):one_hot() + bc:sum()
local lanes = nd.tensor({ 0, 1, 2, 2, 1, 0, 0, 0, 2, 2, 2, 2, 1, 1, 0, 2, 2 }, "uint8"):bincount()
assert(lanes[1] == 5 and lanes[2] == 4 and lanes[3] == 8) -- without its scratch too
local mp, mi = nd.max_pool2d(a:transpose(2, 3), { kernel_size = 2, padding = 1, return_indices = true })
local ap = nd.avg_pool1d(a, { kernel_size = 3, ceil_mode = true }) + nd.adaptive_avg_pool2d(a, { 2, nil }):sum()
local cv = nd.convolve(nd.rand(40), nd.rand(5), "same") + nd.correlate2d(nd.rand(6, 7), nd.ones(3, 3), "same", "wrap"):sum()
local ip = nd.interpolate(nd.rand(1, 2, 5, 6), { scale_factor = 1.5 }, "bilinear") + 1
local ok, ffi = pcall(require, "ffi")
if ok then
  local buf = ffi.new("double[12]")
  local wr = nd.wrap(buf, ffi.sizeof(buf), "float64", { 3, 4 }, nil, buf)
  wr:add_(1)
end
