-- Broadcasting in three small pipelines: normalising the rows of a matrix,
-- a masked update with where, and an image-like uint8 -> float32 conversion.
-- Run: bin/nd examples/broadcasting.lua
local nd = require "nd"
nd.manual_seed(1)

-- 1. Each row to zero mean and unit 2-norm: the (n, 1) statistics broadcast
--    against the (n, m) matrix; no loop, no copies of the statistics.
local m = nd.rand(4, 6)
local centred = m - m:mean(2, true)          -- (4, 6) - (4, 1)
local rows = centred / centred:norm(2, 2, true) -- (4, 6) / (4, 1): p = 2 over dim 2
print("row norms after normalising:", rows:norm(2, 2))
print("row means after normalising:", rows:mean(2))

-- 2. A masked update: replace outliers (|x| > 1.5) with 0.5 and keep
--    the rest; the mask is a bool tensor from a comparison.
local x = nd.randn(3, 5)
local mask = nd.abs(x):gt(1.5)
local cleaned = nd.where(mask, 0.5, x)
print("outliers replaced:", mask:sum(), "of", x:numel())
print(cleaned)

-- 3. An 8-bit RGB "image" (height, width, channel) to float32 in [0, 1],
--    normalised per channel with a (3,) mean and std broadcast along the
--    last dim, then laid out channel-first as a view.
local h, w = 4, 5
local img = nd.randint(0, 256, { h, w, 3 }):byte()
local mean = nd.tensor({ 0.485, 0.456, 0.406 }, "float32")
local std = nd.tensor({ 0.229, 0.224, 0.225 }, "float32")
local f = img:float() / 255                  -- uint8 -> float32, weak scalar keeps float32
local normed = ((f - mean) / std):permute(3, 1, 2)
print("dtype:", normed:dtype(), "size:", normed:size(), "strides:", normed:stride())
print("channel means:", normed:mean({ 2, 3 }))
print("clamped to [-2, 2]:", normed:clamp(-2, 2):min(), normed:clamp(-2, 2):max())
