-- An image pipeline: load a PNG, blur it, find its edges, count its gray
-- levels, shrink it, save the results -- each step one nd call, with the
-- plan the convolutions follow printed.
-- Run: bin/nd examples/image_filters.lua [input.png]
--   (without an input it uses build/demo.png, which `make demo` writes
--   first with `bin/nd examples/image_filters.lua --make-input PATH`, and
--   which this script writes itself when it is missing)
-- The results go beside the input: *-blur.png, *-edges.png, *-small.jpg.
local nd = require "nd"

-- A test picture: a vertical gradient, a bright disc and a dark square.
local function make_input(path)
  local H, W = 240, 320
  local y = nd.arange(H, "float32"):view(H, 1):expand(H, W)
  local x = nd.arange(W, "float32"):view(1, W):expand(H, W)
  local r = nd.sqrt((x - 200) ^ 2 + (y - 110) ^ 2)
  local disc = r:lt(60):float()
  local square = (x:ge(40) * x:lt(130) * y:ge(120) * y:lt(210)):float()
  local red = (y / H * 180 + disc * 70):clamp(0, 255)
  local green = (x / W * 120 + disc * 150 - square * 100):clamp(0, 255)
  local blue = (nd.full({ H, W }, 90, "float32") - square * 90 + disc * 40):clamp(0, 255)
  local img = nd.stack({ red, green, blue }, 3):round():to("uint8") -- (H, W, 3)
  nd.image.save(path, img)
  return img
end

if arg and arg[1] == "--make-input" then
  make_input(assert(arg[2], "--make-input needs a path"))
  return
end
local path = arg and arg[1] or ((os.getenv("ND_BUILD") or "build") .. "/demo.png")
local f = io.open(path, "rb")
if f then f:close() else make_input(path) end
local stem = path:gsub("%.%w+$", "")

local function show_plan(what, x, w, opts)
  local p = nd.conv_plan(x, w, opts)
  print(("%-28s conv2d: %s (%s), %d copies, %d BLAS calls"):format(what, p.strategy, p.why,
    #p.copies, p.blas_calls))
end

-- 1. load: (H, W, 3) uint8 -> (3, H, W) float32 in 0..1, as a layer takes it
local img = nd.image.load(path)
local H, W = img:size(1), img:size(2)
print(("loaded %s: %dx%d, %d channels, %s"):format(path, W, H, img:size(3), img:dtype()))
local x = img:permute(3, 1, 2):float():div(255)       -- a view, then one copy

-- 2. gray: a 1x1 convolution, the luma weights as a (1, 3, 1, 1) kernel
local luma = nd.tensor({ 0.299, 0.587, 0.114 }, "float32"):view(1, 3, 1, 1)
show_plan("gray (1x1)", x, luma)
local gray = nd.conv2d(x, luma)                      -- (1, H, W)

-- 3. blur: a 5x5 binomial kernel per channel (depthwise: groups = 3)
local g = nd.tensor({ 1, 4, 6, 4, 1 }, "float32")
local k5 = (nd.outer(g, g) / 256):view(1, 1, 5, 5):expand(3, 1, 5, 5)
local opts = { groups = 3, padding = "same" }
show_plan("blur (5x5 depthwise)", x, k5, opts)
local blur = nd.conv2d(x, k5, opts)

-- 4. edges: Sobel as SciPy-style correlations on the 2-D gray image,
--    mirrored at the border ("symm") so the frame does not light up
local kx = nd.tensor({ { -1, 0, 1 }, { -2, 0, 2 }, { -1, 0, 1 } }, "float32")
local g2 = gray[1]
local gx = nd.correlate2d(g2, kx, "same", "symm")
local gy = nd.correlate2d(g2, kx:t(), "same", "symm")
local edges = (gx * gx + gy * gy):sqrt()
print(("edges: strongest %.3f, mean %.4f"):format(edges:max(), edges:mean()))

-- 5. a histogram of the gray levels (value v is counted at position v + 1)
local levels = gray[1]:mul(255):round():clamp(0, 255):to("uint8")
local hist = nd.bincount(levels:view(-1), nil, 256)
local mode = hist:argmax() - 1
print(("gray levels: %d distinct, the commonest %d (%d pixels)"):format(
  hist:gt(0):sum(), mode, hist[mode + 1]))

-- 6. shrink: bilinear to half size, and a 2x2 max pool of the edges
local small = nd.interpolate(x:unsqueeze(1), { scale_factor = 0.5 }, "bilinear")[1]
local pooled = nd.max_pool2d(edges:unsqueeze(1), { kernel_size = 2 })[1]
print(("small: %dx%d; pooled edges: %dx%d"):format(small:size(3), small:size(2),
  pooled:size(2), pooled:size(1)))

-- 7. save: back to (H, W, C) uint8
local function to_image(t) -- (C, H, W) float in 0..1, or (H, W)
  if t:dim() == 2 then t = t:unsqueeze(1) end
  return t:permute(2, 3, 1):mul(255):round():clamp(0, 255):to("uint8")
end
local outs = {
  { stem .. "-blur.png", to_image(blur) },
  { stem .. "-edges.png", to_image(edges / edges:max()) },
  { stem .. "-small.jpg", to_image(small) },
}
for _, o in ipairs(outs) do
  nd.image.save(o[1], o[2])
  local back = nd.image.load(o[1])
  assert(back:size(1) == o[2]:size(1) and back:size(2) == o[2]:size(2))
  print(("saved %s (%dx%d)"):format(o[1], back:size(2), back:size(1)))
end
assert(blur:size(2) == H and blur:size(3) == W)
assert(small:size(2) == math.floor(H / 2) and small:size(3) == math.floor(W / 2))
