-- Issue 23's float16 / bfloat16 rows (run at the end of
-- bench/dtypes_bench.lua, or alone: bin/nd bench/dtypes_half.lua): one
-- thread each side, medians, nd's rounds interleaved. Conversions
-- float32 <-> float16 / bfloat16 of 1 M elements against the faster of
-- NumPy's astype and PyTorch's .half() / .bfloat16() / .float() (bfloat16:
-- PyTorch only), target 0.7x; float16 add, mul, exp and sum of 1 M
-- against the faster of NumPy and PyTorch, target 0.5x; 1024^2 float16 and
-- bfloat16 matmul against nd's own float32 matmul, target 1.5x.
local alone = arg and arg[0] and arg[0]:match("dtypes_half%.lua$")
if alone then package.path = (arg[0]:match("^(.*)/") or ".") .. "/?.lua;" .. package.path end
local lib = require "lib"
local nd = require "nd"

local threads = nd.get_num_threads()
nd.set_num_threads(1)
local M, N = 1000000, 1024
local x = nd.randn({ M }, "float32")
local h, bf = x:half(), x:bfloat16()
local h2 = nd.randn({ M }, "float32"):half()
local A, B = nd.randn({ N, N }, "float32"), nd.randn({ N, N }, "float32")
local Ah, Bh, Ab, Bb = A:half(), B:half(), A:bfloat16(), B:bfloat16()
local tt = lib.interleave({
  f2h = function() return x:half() end,
  h2f = function() return h:float() end,
  f2b = function() return x:bfloat16() end,
  b2f = function() return bf:float() end,
  add = function() return h + h2 end,
  mul = function() return h * h2 end,
  exp = function() return h:exp() end,
  sum = function() return h:sum() end,
}, 7)
local mm = lib.interleave({
  f32 = function() return A:matmul(B) end,
  f16 = function() return Ah:matmul(Bh) end,
  bf16 = function() return Ab:matmul(Bb) end,
}, 5)

local setup = [[
import torch
torch.set_num_threads(1)
rng = np.random.default_rng(1)
x = rng.standard_normal(1000000, dtype=np.float32)
h = x.astype(np.float16); h2 = rng.standard_normal(1000000, dtype=np.float32).astype(np.float16)
xt = torch.from_numpy(x); ht = torch.from_numpy(h); ht2 = torch.from_numpy(h2); bt = xt.bfloat16()
]]
-- { label, nd time, { numpy stmt or false, torch stmt }, target }
local cases = {
  { "float32 -> float16 1M", tt.f2h, { "x.astype(np.float16)", "xt.half()" }, 0.7 },
  { "float16 -> float32 1M", tt.h2f, { "h.astype(np.float32)", "ht.float()" }, 0.7 },
  { "float32 -> bfloat16 1M", tt.f2b, { false, "xt.bfloat16()" }, 0.7 },
  { "bfloat16 -> float32 1M", tt.b2f, { false, "bt.float()" }, 0.7 },
  { "add 1M float16", tt.add, { "h + h2", "ht + ht2" }, 0.5 },
  { "mul 1M float16", tt.mul, { "h * h2", "ht * ht2" }, 0.5 },
  { "exp 1M float16", tt.exp, { "np.exp(h)", "ht.exp()" }, 0.5 },
  { "sum 1M float16", tt.sum, { "h.sum()", "ht.sum()" }, 0.5 },
}
local stmts = {}
for _, c in ipairs(cases) do
  stmts[#stmts + 1] = c[3][1] or "pass"
  stmts[#stmts + 1] = c[3][2]
end
local ref = lib.numpy_batch(setup, stmts, 7, 1)
for i, c in ipairs(cases) do
  local np_t, th_t = c[3][1] and ref[2 * i - 1], ref[2 * i]
  local best, name = np_t, "numpy " .. tostring(c[3][1])
  if th_t and (not best or th_t < best) then best, name = th_t, "torch " .. c[3][2] end
  lib.row(c[1], c[2], name, best, c[4])
end
lib.row("matmul 1024^2 float16 (float32 + sgemm)", mm.f16, "nd float32 matmul", mm.f32, 1.5)
lib.row("matmul 1024^2 bfloat16 (float32 + sgemm)", mm.bf16, "nd float32 matmul", mm.f32, 1.5)
nd.set_num_threads(threads)
if alone then lib.print_rows("dtypes: float16 / bfloat16") end
