-- Issue 24's filtering and resampling targets (part of `make bench BENCH=conv`),
-- one thread each side, medians of interleaved rounds:
--   convolve2d / correlate2d 5x5 on a 1024x1024 float32 image (mode
--   "same"): <= 0.5x scipy.signal.correlate2d / convolve2d;
--   convolve of 1 M float32 by 31 taps: <= 1.0x np.convolve;
--   interpolate bilinear 2x (align_corners false) of a float32
--   (8, 64, 112, 112): <= 1.0x PyTorch's CPU F.interpolate.
local lib = require "lib"
local nd = require "nd"

nd.set_num_threads(1)
nd.manual_seed(24)
local img, k5 = nd.rand(1024, 1024, "float32"), nd.rand(5, 5, "float32")
local sig, taps = nd.rand(1000000, "float32"), nd.rand(31, "float32")
local x = nd.rand({ 8, 64, 112, 112 }, "float32")
local t = lib.interleave({
  correlate2d = function() return nd.correlate2d(img, k5, "same") end,
  convolve2d = function() return nd.convolve2d(img, k5, "same") end,
  convolve = function() return nd.convolve(sig, taps) end,
  interpolate = function() return nd.interpolate(x, { scale_factor = 2 }, "bilinear", false) end,
}, 7)
local ref = lib.numpy_batch([[
import scipy.signal as ss
import torch, torch.nn.functional as F
torch.set_num_threads(1)
rng = np.random.default_rng(24)
img = rng.random((1024, 1024), dtype=np.float32)
k5 = rng.random((5, 5), dtype=np.float32)
sig = rng.random(1000000, dtype=np.float32)
taps = rng.random(31, dtype=np.float32)
x = torch.rand(8, 64, 112, 112)
]], {
  "ss.correlate2d(img, k5, 'same')",
  "ss.convolve2d(img, k5, 'same')",
  "np.convolve(sig, taps)",
  "F.interpolate(x, scale_factor=2, mode='bilinear', align_corners=False)",
}, 7)
lib.row("correlate2d 5x5 same, 1024x1024 float32", t.correlate2d,
  "scipy.signal.correlate2d", ref[1], 0.5)
lib.row("convolve2d 5x5 same, 1024x1024 float32", t.convolve2d,
  "scipy.signal.convolve2d", ref[2], 0.5)
lib.row("convolve 1M float32 by 31 taps (full)", t.convolve, "np.convolve", ref[3], 1.0)
lib.row("interpolate bilinear 2x (8,64,112,112) float32", t.interpolate,
  "torch F.interpolate", ref[4], 1.0)
