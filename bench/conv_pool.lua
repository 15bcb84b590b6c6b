-- Issue 24's pooling bench (part of `make bench BENCH=conv`): nd.max_pool2d and
-- nd.avg_pool2d (3x3, stride 2) and nd.adaptive_avg_pool2d (to 7x7) on a
-- float32 (8, 64, 112, 112) input against PyTorch's F.* on the same shape,
-- one thread each side. The two sides alternate by rounds (nd's samples,
-- then a PyTorch process's), and each row is the median over the rounds.
-- Target (the issue): max_pool2d and avg_pool2d at most 0.5x PyTorch's.
local lib = require "lib"
local nd = require "nd"

nd.set_num_threads(1)
local has_torch = os.execute("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1")
has_torch = has_torch == true or has_torch == 0

local x = nd.randn(8, 64, 112, 112):float()
local k3s2 = { kernel_size = 3, stride = 2 }
local k3s2i = { kernel_size = 3, stride = 2, return_indices = true }
local cases = {
  { "max_pool2d 3x3 s2", function() return nd.max_pool2d(x, k3s2) end,
    "F.max_pool2d(x, 3, 2)", 0.5 },
  { "max_pool2d 3x3 s2 return_indices", function() return nd.max_pool2d(x, k3s2i) end,
    "F.max_pool2d(x, 3, 2, return_indices=True)" },
  { "avg_pool2d 3x3 s2", function() return nd.avg_pool2d(x, k3s2) end,
    "F.avg_pool2d(x, 3, 2)", 0.5 },
  { "adaptive_avg_pool2d to 7x7", function() return nd.adaptive_avg_pool2d(x, 7) end,
    "F.adaptive_avg_pool2d(x, 7)" },
  -- what moving the bytes costs: one read of the input, one write
  { "clone (the input's bytes, read and written)", function() return x:clone() end,
    "x.clone()" },
}

local fns, stmts = {}, {}
for i, c in ipairs(cases) do
  fns[i] = c[2]
  stmts[i] = c[3]
end
local setup = "import torch; import torch.nn.functional as F; torch.set_num_threads(1); "
  .. "x = torch.randn(8, 64, 112, 112)"
local nd_t, torch_t = {}, {}
for i = 1, #cases do nd_t[i], torch_t[i] = {}, {} end
local ROUNDS = 5
for _ = 1, ROUNDS do
  local named = {}
  for i, f in ipairs(fns) do named[("%02d"):format(i)] = f end
  local r = lib.interleave(named, 3)
  for i = 1, #cases do table.insert(nd_t[i], r[("%02d"):format(i)]) end
  if has_torch then
    local t = lib.numpy_batch(setup, stmts, 3)
    for i = 1, #cases do
      if t[i] then table.insert(torch_t[i], t[i]) end
    end
  end
end
for i, c in ipairs(cases) do
  local tt = #torch_t[i] > 0 and lib.median(torch_t[i]) or nil
  lib.row(c[1] .. " f32 (8,64,112,112)", lib.median(nd_t[i]),
    tt and "torch 1.13 " .. c[3]:match("^[%w_.]+") or "PyTorch absent", tt, c[4])
end
