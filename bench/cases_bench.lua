-- The user cases issue 10 was filed with, each as a new user writes it,
-- against its NumPy idiom in the same run, 1 thread each side (NumPy's
-- ufuncs are single-threaded). Target: each <= 1.0x NumPy; `a:t() + b` <=
-- 1.5x nd's own contiguous add.
local lib = require "lib"
local nd = require "nd"

local threads = nd.get_num_threads()
nd.set_num_threads(1)
local g = nd.generator(1)

local x62 = g:rand({ 6200000 }, "float32")
local x100k = g:rand({ 100000 })
local x1m = g:rand({ 1000000 })
local x1mf = g:rand({ 1000000 }, "float32")
local u8 = g:randint(0, 3, { 1000000 }):to("uint8")
local img = g:randint(0, 256, { 1080, 1920, 3 }):to("uint8")
local chw = nd.empty(3, 1080, 1920, "float32")
local m = g:rand({ 1000, 1000 }, "float32")
local A, B = g:rand({ 4096, 4096 }, "float32"), g:rand({ 4096, 4096 }, "float32")
local C = nd.empty(4096, 4096, "float32")
local At = A:t()

-- Game of Life on a 256x256 board padded by one dead cell each side.
local S = 256
local board = nd.zeros(S + 2, S + 2, "uint8")
board:narrow(1, 2, S):narrow(2, 2, S):copy_(g:randint(0, 2, { S, S }):to("uint8"))
local function life()
  local n = nd.zeros(S, S, "uint8")
  for di = 0, 2 do
    for dj = 0, 2 do
      if di ~= 1 or dj ~= 1 then n:add_(board:narrow(1, 1 + di, S):narrow(2, 1 + dj, S)) end
    end
  end
  local inner = board:narrow(1, 2, S):narrow(2, 2, S)
  local alive = n:eq(3):logical_or(inner:bool():logical_and(n:eq(2)))
  inner:copy_(alive)
end

-- Softmax regression, one gradient step: 512 samples of 784 features, 10
-- classes, float32.
local NS, D, K = 512, 784, 10
local X = g:rand({ NS, D }, "float32")
local labels = g:randint(1, K + 1, { NS })
local Y = nd.zeros(NS, K, "float32"):scatter_(2, labels:view(NS, 1), 1)
local W = nd.zeros(D, K, "float32")
local function train()
  local p = X:matmul(W):softmax(2)
  local grad = X:t():matmul(p:sub_(Y)):div_(NS)
  W:sub_(grad:mul_(0.1))
end

-- Each case is timed on its own, as NumPy's side is (one statement per
-- process) and as the sort and index benches do; only a:t() + b and the
-- contiguous add, compared with each other, are interleaved. Interleaved
-- with the 64 MB passes of the 4096^2 cases, the small ones found their
-- data and their recycled results out of the cache.
local cases = {
  sq62 = function() return x62 ^ 2 end,
  sq100k = function() return x100k ^ 2 end,
  exp1m = function() return x1m:exp() end,
  fill = function() u8:fill_(1) end,
  zero = function() u8:zero_() end,
  tobool = function() return u8:to("bool") end,
  tof32 = function() return x1m:to("float32") end,
  hwc = function() chw:copy_(img:permute(3, 1, 2)); chw:div_(255) end,
  tcont = function() return m:t():contiguous() end,
  life = life,
  train = train,
  expout = function() nd.exp(A, C) end,
  sum1 = function() return A:sum(1) end,
  tanh = function() return x1mf:tanh() end,
}
local t = lib.interleave({
  addt = function() nd.add(At, B, C) end,
  add = function() nd.add(A, B, C) end,
})
for name, f in pairs(cases) do t[name] = lib.time(f) end
nd.set_num_threads(threads)

local setup = [[
rng = np.random.default_rng(1)
x62 = rng.random(6200000, dtype=np.float32)
x100k = rng.random(100000)
x1m = rng.random(1000000)
x1mf = rng.random(1000000, dtype=np.float32)
u8 = rng.integers(0, 3, 1000000).astype(np.uint8)
img = rng.integers(0, 256, (1080, 1920, 3)).astype(np.uint8)
chw = np.empty((3, 1080, 1920), np.float32)
m = rng.random((1000, 1000), dtype=np.float32)
A = rng.random((4096, 4096), dtype=np.float32)
B = rng.random((4096, 4096), dtype=np.float32)
C = np.empty((4096, 4096), np.float32)
S = 256
board = np.zeros((S + 2, S + 2), np.uint8)
board[1:-1, 1:-1] = rng.integers(0, 2, (S, S))
def life():
    n = np.zeros((S, S), np.uint8)
    for di in range(3):
        for dj in range(3):
            if di != 1 or dj != 1:
                n += board[di:di + S, dj:dj + S]
    inner = board[1:-1, 1:-1]
    inner[...] = (n == 3) | (inner.astype(bool) & (n == 2))
NS, D, K = 512, 784, 10
X = rng.random((NS, D), dtype=np.float32)
Y = np.zeros((NS, K), np.float32)
Y[np.arange(NS), rng.integers(0, K, NS)] = 1
W = np.zeros((D, K), np.float32)
def train():
    global W
    z = X @ W
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    p -= Y
    grad = X.T @ p
    grad /= NS
    grad *= np.float32(0.1)
    W -= grad
]]
local function np(stmt) return lib.numpy(setup, stmt, 7, 1) end

lib.row("x^2, 6.2M float32, new result", t.sq62, "x62 ** 2", np("x62 ** 2"), 1.0)
lib.row("x^2, 100k float64, new result", t.sq100k, "x100k ** 2", np("x100k ** 2"), 1.0)
lib.row("exp, 1M float64, new result", t.exp1m, "np.exp(x1m)", np("np.exp(x1m)"), 1.0)
lib.row("fill_(1), 1M uint8", t.fill, "u8.fill(1)", np("u8.fill(1)"), 1.0)
lib.row("zero_(), 1M uint8", t.zero, "u8.fill(0)", np("u8.fill(0)"), 1.0)
lib.row("uint8 -> bool, 1M", t.tobool, "u8.astype(bool)", np("u8.astype(bool)"), 1.0)
lib.row("float64 -> float32, 1M", t.tof32, "x1m.astype(np.float32)", np("x1m.astype(np.float32)"), 1.0)
lib.row("HWC uint8 -> CHW float32 / 255, 1080x1920x3", t.hwc, "copyto(chw, img.T...); /= 255",
  np("np.copyto(chw, img.transpose(2, 0, 1)); np.divide(chw, 255, out=chw)"), 1.0)
lib.row("t():contiguous() 1000x1000 float32", t.tcont, "np.ascontiguousarray(m.T)",
  np("np.ascontiguousarray(m.T)"), 1.0)
lib.row("Game of Life step 256x256", t.life, "the same with slices", np("life()"), 1.0)
lib.row("softmax regression step 512x784 -> 10", t.train, "the same in NumPy", np("train()"), 1.0)
lib.row("a:t() + b (out) 4096^2 float32", t.addt, "np.add(A.T, B, out=C)", np("np.add(A.T, B, out=C)"), 1.0)
lib.row("a:t() + b vs nd contiguous add", t.addt, "nd a + b (out)", t.add, 1.5)
lib.row("exp (out) 4096^2 float32", t.expout, "np.exp(A, out=C)", np("np.exp(A, out=C)"), 1.0)
lib.row("sum(1) 4096^2 float32", t.sum1, "A.sum(axis=0)", np("A.sum(axis=0)"), 1.0)
lib.row("tanh, 1M float32, new result", t.tanh, "np.tanh(x1mf)", np("np.tanh(x1mf)"), 1.0)
