-- Issue 24's bench (`make bench BENCH=conv`): convolution against PyTorch
-- 1.13's F.conv2d (Debian's build: oneDNN) and against nd's own matmul of
-- the very GEMM sizes the convolution multiplies (the limit of the im2col
-- route), one thread each side, nd's rounds interleaved, medians.
local lib = require "lib"
local nd = require "nd"

local threads = nd.get_num_threads()
nd.set_num_threads(1) -- OpenBLAS's too: both sides on one thread

local has_torch = os.execute("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1")
has_torch = has_torch == true or has_torch == 0
local function torch_time(setup, stmt)
  if not has_torch then return nil end
  return lib.numpy("import torch; import torch.nn.functional as F; torch.set_num_threads(1); " .. setup, stmt)
end

local function conv_row(label, x, w, opts, torch_setup, torch_stmt, target, gemm)
  local p = nd.conv_plan(x, w, opts)
  local fns = { conv = function() return nd.conv2d(x, w, opts) end }
  if gemm then fns.gemm = gemm.fn end
  local tt = lib.interleave(fns, 7)
  label = ("%s [%s, %d copies, tile %s]"):format(label, p.strategy, #p.copies,
    p.tile and p.tile.positions or "-")
  if gemm then lib.row(label, tt.conv, gemm.name, tt.gemm, gemm.target) end
  local pt = torch_time(torch_setup, torch_stmt)
  if pt then lib.row(label, tt.conv, "torch F.conv2d", pt, target) end
  return tt.conv
end

do -- 3x3, 64 -> 64 channels, 56x56, batch 8
  local x, w = nd.rand(8, 64, 56, 56, "float32"), nd.rand(64, 64, 3, 3, "float32")
  -- the same GEMMs: (64 x 576) by (576 x 3136), eight times
  local W, cols = nd.rand(64, 576, "float32"), nd.rand(8, 576, 3136, "float32")
  conv_row("nd.conv2d 8x64x56x56 f32, 64x64x3x3, padding 1", x, w, { padding = 1 },
    "x = torch.rand(8, 64, 56, 56); w = torch.rand(64, 64, 3, 3)",
    "F.conv2d(x, w, padding=1)", 1.15,
    { fn = function() return nd.matmul(W, cols) end, name = "nd.matmul same GEMMs (8 x 64x576x3136)", target = 1.05 })
end
do -- 1x1, 64 -> 64, 56x56, batch 8: the input's own strides
  local x, w = nd.rand(8, 64, 56, 56, "float32"), nd.rand(64, 64, 1, 1, "float32")
  local W, X = nd.rand(64, 64, "float32"), nd.rand(8, 64, 3136, "float32")
  conv_row("nd.conv2d 8x64x56x56 f32, 64x64x1x1", x, w, nil,
    "x = torch.rand(8, 64, 56, 56); w = torch.rand(64, 64, 1, 1)", "F.conv2d(x, w)", nil,
    { fn = function() return nd.matmul(W, X) end, name = "nd.matmul same sizes (8 x 64x64x3136)", target = 1.05 })
end
do -- depthwise 3x3, 64 channels, 112x112, batch 8
  local x, w = nd.rand(8, 64, 112, 112, "float32"), nd.rand(64, 1, 3, 3, "float32")
  conv_row("nd.conv2d 8x64x112x112 f32 depthwise 3x3, padding 1", x, w, { padding = 1, groups = 64 },
    "x = torch.rand(8, 64, 112, 112); w = torch.rand(64, 1, 3, 3)",
    "F.conv2d(x, w, padding=1, groups=64)", 1.0)
end
nd.set_num_threads(threads)

-- the rest of issue 24's rows: pooling, filters and resampling, image files
local here = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "bench"
for _, part in ipairs({ "pool", "filter", "image" }) do
  print(("-- %s (bench/conv_%s.lua)"):format(part, part))
  dofile(here .. "/conv_" .. part .. ".lua")
  nd.set_num_threads(threads)
end
