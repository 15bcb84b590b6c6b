-- Issue 24's image files (part of `make bench BENCH=conv`): nd.image.load and
-- nd.image.save of a 1920x1080 RGB image, PNG (zlib level 6, libspng's
-- default filters) and JPEG (quality 90, 4:2:0), against the same library
-- calls made from C (bench/ref_image.c: read the file, decode into a
-- fresh buffer; encode, write the file). Rounds interleave nd and C
-- (saves, then loads; who goes first alternates);
-- medians of the calls' times. Target: <= 1.1x.
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

-- calls per round: PNG's encode takes over a second at level 6
local ROUNDS, CALLS = 7, { png = 2, jpeg = 5 }
for _, fmt in ipairs({ "png", "jpeg" }) do
  local calls = CALLS[fmt]
  local path = paths[fmt]
  local save = function() nd.image.save(path, img) end
  -- The result is released at once, as the C side frees its buffer: the
  -- next load's 6 MB then come warm from nd's block cache, as glibc's
  -- malloc gives C its freed block back. Left to the collector, several
  -- results are alive at once and fresh pages cost page faults (the
  -- "collected" row).
  local load = function() nd.image.load(path):release() end
  local load_gc = function() return nd.image.load(path) end
  save()
  assert(nd.equal(load_gc(), img) or fmt == "jpeg")
  local ts, tl, tg, cs, cl = {}, {}, {}, {}, {}
  -- Saves first, then loads (a load right after a write of the file ran
  -- slower, whichever side it was); the side that goes first alternates.
  local function nd_save()
    for _ = 1, calls do -- per call, as ref_image times its calls
      local t0 = lib.now()
      save()
      ts[#ts + 1] = lib.now() - t0
    end
  end
  local function c_save() cs[#cs + 1] = ref.save(path, bytes, H, W, fmt, 90, calls) end
  for r = 1, ROUNDS do
    if r % 2 == 1 then nd_save(); c_save() else c_save(); nd_save() end
  end
  save()
  local function nd_load()
    for _ = 1, 2 * calls do
      local t0 = lib.now()
      load()
      tl[#tl + 1] = lib.now() - t0
    end
  end
  local function c_load() cl[#cl + 1] = ref.load(path, fmt, 2 * calls) end
  collectgarbage()
  for r = 1, ROUNDS do
    if r % 2 == 1 then nd_load(); c_load() else c_load(); nd_load() end
  end
  for _ = 1, ROUNDS * 2 * calls do -- results left to the collector
    local t0 = lib.now()
    load_gc()
    tg[#tg + 1] = lib.now() - t0
  end
  local size = io.open(path, "rb"):seek("end")
  local lib_name = fmt == "png" and "spng" or "TurboJPEG"
  lib.row(("nd.image.save %dx%d RGB .%s (%d KB)"):format(W, H, fmt == "png" and "png" or "jpg",
    math.floor(size / 1024)), lib.median(ts), "C " .. lib_name .. " encode+write", lib.median(cs), 1.1)
  lib.row(("nd.image.load %dx%d RGB .%s"):format(W, H, fmt == "png" and "png" or "jpg"),
    lib.median(tl), "C read+" .. lib_name .. " decode", lib.median(cl), 1.1)
  lib.row(("nd.image.load %dx%d RGB .%s, collected"):format(W, H, fmt == "png" and "png" or "jpg"),
    lib.median(tg), "C read+" .. lib_name .. " decode", lib.median(cl))
  os.remove(path)
end
