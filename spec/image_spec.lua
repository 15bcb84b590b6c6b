-- nd.image: PNG and JPEG files. The fixtures in spec/fixtures/images and
-- the pixels PIL decodes them to (spec/fixtures/images.lua) come from
-- tools/gen_image_fixtures.py.
local nd = require "nd"
local testing = require "nd.testing"
local dir = "spec/fixtures/images/"
local cases = dofile("spec/fixtures/images.lua")

local function unhex(s)
  return (s:gsub("..", function(h) return string.char(tonumber(h, 16)) end))
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

-- uint8 fixtures are hex strings; uint16 ones lists of samples (no byte order).
local function expected(name, c)
  local case = cases[name]
  local h, w = case.size[1], case.size[2]
  c = c or case.size[3]
  if case.dtype == "uint16" then return nd.tensor(case[c], "uint16"):view(h, w, c) end
  return nd.from_string(unhex(case[c]), "uint8", { h, w, c })
end

local function names()
  local list = {}
  for name in pairs(cases) do list[#list + 1] = name end
  table.sort(list)
  return list
end

local function tmp(ext)
  local base = os.tmpname()
  os.remove(base)
  return base .. ext
end

-- A smooth test image (JPEG is lossy; smooth content stays close).
local function smooth(h, w, c)
  local y = nd.arange(h):view(h, 1, 1):double()
  local x = nd.arange(w):view(1, w, 1):double()
  local k = nd.arange(c):view(1, 1, c):double()
  return ((y * 3 + x * 2 + k * 40) % 256):to("uint8")
end

describe("nd.image.load", function()
  it("decodes every fixture as PIL does, in its own channels", function()
    for _, name in ipairs(names()) do
      local t = nd.image.load(dir .. name)
      assert.equals(cases[name].dtype or "uint8", t:dtype(), name)
      assert.same(cases[name].size, t:size(), name)
      assert.is_true(t:is_contiguous())
      assert.tensor_equal(expected(name), t)
    end
  end)

  it("converts to 1..4 channels as PIL's convert", function()
    for _, name in ipairs(names()) do
      for c = 1, 4 do
        local t = nd.image.load(dir .. name, { channels = c })
        assert.same({ cases[name].size[1], cases[name].size[2], c }, t:size(), name .. " " .. c)
        assert.tensor_equal(expected(name, c), t)
      end
    end
  end)

  it("gives gray as (H, W, 1), palettes as RGB or RGBA, tRNS as alpha", function()
    assert.same({ 5, 7, 1 }, nd.image.load(dir .. "l.png"):size())
    assert.same({ 5, 7, 1 }, nd.image.load(dir .. "gray1.png"):size())
    assert.same({ 5, 7, 3 }, nd.image.load(dir .. "palette.png"):size())
    assert.same({ 5, 7, 4 }, nd.image.load(dir .. "palette_trns.png"):size())
    assert.same({ 5, 7, 2 }, nd.image.load(dir .. "gray_trns.png"):size())
    assert.same({ 5, 7, 4 }, nd.image.load(dir .. "rgb_trns.png"):size())
    local g = nd.image.load(dir .. "gray1.png")
    assert.is_true(nd.equal(g:eq(0):logical_or(g:eq(255)), nd.ones(5, 7, 1, "bool")))
  end)

  it("reads interlaced PNGs and progressive JPEGs", function()
    assert.tensor_equal(expected("rgb.png"), nd.image.load(dir .. "interlaced.png"))
    assert.same({ 5, 7, 3 }, nd.image.load(dir .. "progressive.jpg"):size())
  end)

  it("tells the format by its first bytes, not the extension", function()
    local path = tmp(".jpg")
    local f = assert(io.open(path, "wb"))
    f:write(read(dir .. "rgb.png"))
    f:close()
    assert.tensor_equal(expected("rgb.png"), nd.image.load(path))
    os.remove(path)
  end)

  it("refuses bad files, naming the function and the file", function()
    local p = dir
    assert_error_matches(function() nd.image.load(p .. "not_an_image.png") end,
      "image.load: " .. p .. "not_an_image.png: not a PNG or JPEG file")
    assert_error_matches(function() nd.image.load(p .. "truncated_rgb.png") end,
      "image.load: " .. p .. "truncated_rgb.png: corrupt PNG (")
    assert_error_matches(function() nd.image.load(p .. "truncated_rgb.jpg") end,
      "image.load: " .. p .. "truncated_rgb.jpg: corrupt JPEG (")
    assert_error_matches(function() nd.image.load(p .. "cmyk.jpg") end,
      "image.load: " .. p .. "cmyk.jpg: CMYK JPEGs are not supported")
    assert_error_matches(function() nd.image.load("/nonexistent/a.png") end,
      "image.load: cannot open /nonexistent/a.png: No such file or directory")
    assert_error_matches(function() nd.image.load(p) end, "image.load: " .. p .. ": not a regular file")
    assert_error_matches(function() nd.image.load(nil) end, "image.load: path must be a string, got nil")
  end)

  it("refuses an image above 2^28 pixels from its header, before allocating", function()
    local n, bytes
    n, bytes = testing.allocations(function()
      assert_error_matches(function() nd.image.load(dir .. "bomb.png") end,
        "image.load: " .. dir .. "bomb.png: image of 100000x100000 pixels is above nd's limit of 268435456 pixels")
    end)
    assert.same({ 0, 0 }, { n, bytes })
    n, bytes = testing.allocations(function()
      assert_error_matches(function() nd.image.load(dir .. "bomb.jpg") end,
        "image.load: " .. dir .. "bomb.jpg: image of 60000x60000 pixels is above nd's limit of 268435456 pixels")
    end)
    assert.same({ 0, 0 }, { n, bytes })
    assert_error_matches(function() nd.image.load(dir .. "wide.png") end,
      "image of 536870912x1 pixels is above nd's limit of 268435456")
  end)

  it("checks its options and arguments", function()
    local p = dir .. "rgb.png"
    assert_error_matches(function() nd.image.load(p, { channels = 5 }) end,
      "image.load: channels must be an integer in 1..4, got 5")
    assert_error_matches(function() nd.image.load(p, { channels = 1.5 }) end,
      "image.load: channels must be an integer in 1..4, got 1.5")
    assert_error_matches(function() nd.image.load(p, { chanels = 3 }) end,
      "image.load: unknown option chanels (it takes channels)")
    assert_error_matches(function() nd.image.load(p, 3) end,
      "image.load: options must be a table, got number")
    assert_error_matches(function() nd.image.load(p, {}, 1) end,
      "image.load: takes (path [, options]), got 3 arguments")
  end)
end)

describe("nd.image.decode", function()
  it("decodes bytes in memory as load decodes the file", function()
    for _, name in ipairs({ "rgb.png", "la.png", "rgb.jpg", "gray.jpg", "palette_trns.png" }) do
      assert.tensor_equal(expected(name), nd.image.decode(read(dir .. name)))
      assert.tensor_equal(expected(name, 1), nd.image.decode(read(dir .. name), { channels = 1 }))
    end
  end)

  it("errors name no file", function()
    assert_error_matches(function() nd.image.decode("") end, "image.decode: not a PNG or JPEG file")
    assert_error_matches(function() nd.image.decode("\137PNG\r\n\26\n") end,
      "image.decode: corrupt PNG (truncated in its header)")
    assert_error_matches(function() nd.image.decode(read(dir .. "truncated_rgb.png")) end,
      "image.decode: corrupt PNG (")
    assert_error_matches(function() nd.image.decode(nd.zeros(3)) end,
      "image.decode: bytes must be a string")
  end)
end)

describe("nd.image.save", function()
  it("round-trips PNG gray, gray+alpha, RGB and RGBA, and (H, W) as gray", function()
    for c = 1, 4 do
      local t = smooth(9, 11, c)
      local path = tmp(".png")
      nd.image.save(path, t)
      assert.tensor_equal(t, nd.image.load(path))
      os.remove(path)
    end
    local path = tmp(".PNG")
    local g = smooth(4, 6, 1):select(3, 1)
    nd.image.save(path, g)
    assert.tensor_equal(g:unsqueeze(3), nd.image.load(path))
    os.remove(path)
  end)

  it("writes what PIL wrote, pixel for pixel, for every PNG fixture", function()
    for _, name in ipairs(names()) do
      if name:match("%.png$") then
        local t = expected(name)
        local back = nd.image.decode(nd.image.encode(t, "png"))
        assert.tensor_equal(t, back)
      end
    end
  end)

  it("takes any view; rows whose pixels are compact go without a copy", function()
    local base = smooth(12, 16, 4)
    local views = {
      narrowed = base:narrow(2, 3, 9),              -- row stride 64, not 36
      flipped = base:flip(1),                       -- negative row stride
      stepped_rows = base[{ { 1, 12, 2 }, {}, {} }],
      rgb_of_rgba = base:narrow(3, 1, 3),           -- pixel stride 4: a copy
      chw = base:permute(3, 1, 2):contiguous():permute(2, 3, 1), -- a copy
      gray_column = base:select(3, 2),              -- (H, W) with stride 4: a copy
    }
    local nocopy = { narrowed = true, flipped = true, stepped_rows = true }
    for what, v in pairs(views) do
      local want = v:contiguous()
      assert.equals(nd.image.encode(want, "png"), nd.image.encode(v, "png"), what)
      if v:dim() == 2 or v:size(3) == 1 or v:size(3) == 3 then
        assert.equals(nd.image.encode(want, "jpeg"), nd.image.encode(v, "jpeg"), what)
      end
      local path = tmp(".png")
      local n = testing.allocations(nd.image.save, path, v)
      assert.equals(nocopy[what] and 0 or 1, n, what)
      local back = nd.image.load(path)
      assert.tensor_equal(v:dim() == 2 and want:unsqueeze(3) or want, back)
      os.remove(path)
    end
    local rgb = base:narrow(3, 1, 3):contiguous():flip(1)
    assert.equals(nd.image.encode(rgb:contiguous(), "jpg"), nd.image.encode(rgb, "jpg"))
    assert.equals(0, (testing.allocations(nd.image.encode, rgb, "jpg")))
  end)

  it("writes JPEG gray and RGB at a quality (default 90)", function()
    for _, c in ipairs({ 1, 3 }) do
      local t = smooth(16, 24, c)
      local path = tmp(".jpg")
      nd.image.save(path, t)
      local back = nd.image.load(path)
      assert.same(t:size(), back:size())
      local err = (back:double() - t:double()):abs():mean()
      assert.is_true(err < 3, "mean error " .. err)
      assert.equals(read(path), nd.image.encode(t, "jpeg", { quality = 90 }))
      os.remove(path)
    end
    local t = smooth(16, 24, 3)
    assert.is_true(#nd.image.encode(t, "jpg", { quality = 20 }) < #nd.image.encode(t, "jpg", { quality = 100 }))
    local path = tmp(".jpeg")
    nd.image.save(path, t, { quality = 100 })
    assert.equals(nd.image.encode(t, "jpeg", { quality = 100 }), read(path))
    os.remove(path)
  end)

  it("PNG compression levels change the size, never the pixels", function()
    local t = smooth(32, 32, 3)
    local fast, best = nd.image.encode(t, "png", { compression = 0 }), nd.image.encode(t, "png", { compression = 9 })
    assert.is_true(#best < #fast)
    assert.tensor_equal(t, nd.image.decode(fast))
    assert.tensor_equal(t, nd.image.decode(best))
  end)

  it("a CHW float image goes to uint8 HWC as its error message says", function()
    local chw = nd.rand(3, 8, 10, "float32")
    local path = tmp(".png")
    local err = assert_error_matches(function() nd.image.save(path, chw) end,
      "image.save: t has shape {3,8,10} and dtype float32; save takes uint8 (H, W[, C]) with C = 1..4, or uint16 for a 16-bit PNG")
    local expr = err:match("in 0%.%.1: t(:.*)%)$")
    assert.is_truthy(expr)
    local hwc = assert(loadstring or load)("local t = ...; return t" .. expr)(chw)
    nd.image.save(path, hwc)
    local back = nd.image.load(path)
    assert.same({ 8, 10, 3 }, back:size())
    assert.tensor_equal((chw:permute(2, 3, 1) * 255):round():to("uint8"), back)
    os.remove(path)
  end)

  it("refuses what it cannot write, naming the function and the values", function()
    local t = smooth(4, 5, 4)
    assert_error_matches(function() nd.image.save("/tmp/x.bmp", t) end,
      "image.save: /tmp/x.bmp: unknown image format '.bmp' (save writes .png, .jpg and .jpeg)")
    assert_error_matches(function() nd.image.save("/tmp/x", t) end,
      "image.save: /tmp/x has no extension; save writes .png, .jpg and .jpeg")
    assert_error_matches(function() nd.image.save("/tmp/x.jpg", t) end,
      "image.save: /tmp/x.jpg: JPEG has no alpha channel: t has 4 channels")
    assert_error_matches(function() nd.image.save("/tmp/x.jpg", smooth(4, 5, 3), { quality = 0 }) end,
      "image.save: quality must be an integer in 1..100, got 0")
    assert_error_matches(function() nd.image.save("/tmp/x.png", t, { quality = 50 }) end,
      "image.save: /tmp/x.png: quality is for JPEG files")
    assert_error_matches(function() nd.image.save("/tmp/x.jpg", smooth(4, 5, 3), { compression = 5 }) end,
      "image.save: /tmp/x.jpg: compression is for PNG files")
    assert_error_matches(function() nd.image.save("/tmp/x.png", nd.zeros(0, 5, 3, "uint8")) end,
      "image.save: t has shape {0,5,3}: an image needs at least one pixel")
    assert_error_matches(function() nd.image.save("/tmp/x.png", nd.zeros(4, 5, 5, "uint8")) end,
      "image.save: t has shape {4,5,5} and dtype uint8; save takes")
    assert_error_matches(function() nd.image.save("/tmp/x.png", nd.zeros(4, "uint8")) end,
      "image.save: t has shape {4} and dtype uint8")
    assert_error_matches(function() nd.image.save("/nonexistent/x.png", t) end,
      "image.save: cannot open /nonexistent/x.png: No such file or directory")
    assert_error_matches(function() nd.image.save("/tmp/x.png", 5) end,
      "image.save: argument 2 must be a tensor, got number")
    assert_error_matches(function() nd.image.save("/tmp/x.png", t, {}, 1) end,
      "image.save: takes (path, t [, options]), got 4 arguments")
  end)
end)

describe("nd.image.encode", function()
  it("gives the bytes save writes", function()
    local t = smooth(6, 7, 3)
    local path = tmp(".png")
    nd.image.save(path, t)
    assert.equals(read(path), nd.image.encode(t, "png"))
    os.remove(path)
    assert.equals("\137PNG", nd.image.encode(t, "png"):sub(1, 4))
    assert.equals("\255\216\255", nd.image.encode(t, "jpeg"):sub(1, 3))
  end)

  it("checks the format and its options", function()
    local t = smooth(6, 7, 3)
    assert_error_matches(function() nd.image.encode(t, "gif") end,
      "image.encode: unknown format 'gif'")
    assert_error_matches(function() nd.image.encode(t, "png", { quality = 3 }) end,
      "image.encode: quality is for JPEG")
    assert_error_matches(function() nd.image.encode(t, "jpeg", { compression = 3 }) end,
      "image.encode: compression is for PNG")
    assert_error_matches(function() nd.image.encode(t:float(), "png") end,
      "image.encode: t has shape {6,7,3} and dtype float32; encode takes uint8")
  end)
end)

describe("16-bit PNGs", function()
  local sixteen = {}
  for _, name in ipairs(names()) do
    if cases[name].dtype == "uint16" then sixteen[#sixteen + 1] = name end
  end

  it("load as uint16 with the file's values; 8-bit files stay uint8", function()
    assert.is_true(#sixteen >= 9)
    for _, name in ipairs(sixteen) do
      local t = nd.image.load(dir .. name)
      assert.equals("uint16", t:dtype(), name)
      assert.tensor_equal(expected(name), t)
      assert.tensor_equal(expected(name, 3), nd.image.decode(read(dir .. name), { channels = 3 }))
    end
    -- the first pixels are 65535, 0, and 0x00ff / 0xff00: a byte order slip shows
    local t = nd.image.load(dir .. "rgba16.png")
    assert.same({ 65535, 65535, 65535, 65535 }, { t[{ 1, 1, 1 }], t[{ 1, 1, 2 }], t[{ 1, 1, 3 }], t[{ 1, 1, 4 }] })
    assert.same({ 0, 0, 0, 0 }, { t[{ 1, 2, 1 }], t[{ 1, 2, 2 }], t[{ 1, 2, 3 }], t[{ 1, 2, 4 }] })
    assert.same({ 255, 65280 }, { t[{ 1, 3, 1 }], t[{ 1, 3, 2 }] })
    assert.equals("uint8", nd.image.load(dir .. "rgba.png"):dtype())
  end)

  it("converts channels by the 8-bit rules at 16 bits: luma, replication, alpha 65535", function()
    local rgb = nd.image.load(dir .. "rgb16.png"):to("int64")
    local r, g, b = rgb:select(3, 1), rgb:select(3, 2), rgb:select(3, 3)
    local luma = (r * 19595 + g * 38470 + b * 7471 + 32768):floor_divide(65536)
    local gray = nd.image.load(dir .. "rgb16.png", { channels = 1 })
    assert.tensor_equal(luma:to("uint16"), gray:select(3, 1))
    local ga = nd.image.load(dir .. "gray16.png", { channels = 4 })
    assert.tensor_equal(nd.full({ 5, 7 }, 65535, "uint16"), ga:select(3, 4))
    assert.tensor_equal(ga:select(3, 1), ga:select(3, 3))
    -- gray stays gray: a replicated 16-bit gray goes back to itself
    local g1 = nd.image.load(dir .. "gray16.png")
    assert.tensor_equal(g1, nd.image.decode(nd.image.encode(ga:narrow(3, 1, 3), "png"), { channels = 1 }))
  end)

  it("turn tRNS into alpha matching all 16 bits of the key", function()
    local t = nd.image.load(dir .. "gray16_trns.png")
    assert.same({ 5, 7, 2 }, t:size())
    assert.equals(0, t[{ 4, 3, 2 }])
    assert.equals(65535, t[{ 5, 6, 2 }])          -- its low byte differs from the key's
    assert.equals(1, t:select(3, 2):eq(0):sum())
    local c = nd.image.load(dir .. "rgb16_trns.png")
    assert.same({ 5, 7, 4 }, c:size())
    assert.equals(0, c[{ 2, 5, 4 }])
    assert.equals(65535, c[{ 3, 3, 4 }])
  end)

  it("reads the PNG nd wrote as the Python decoder did, and round-trips", function()
    assert.tensor_equal(expected("nd_rgba16.png"), nd.image.load(dir .. "nd_rgba16.png"))
    for _, name in ipairs(sixteen) do
      for c = 1, 4 do
        local t = expected(name, c)
        assert.tensor_equal(t, nd.image.decode(nd.image.encode(t, "png")), name .. " " .. c)
      end
    end
    local path = tmp(".png")
    local hw = expected("gray16.png"):select(3, 1)
    nd.image.save(path, hw, { compression = 9 })
    assert.tensor_equal(hw:unsqueeze(3), nd.image.load(path))
    os.remove(path)
  end)

  it("saves views: compact rows without a copy, whatever the row stride in bytes", function()
    local base = expected("rgba16.png")
    local views = {
      narrowed = base:narrow(2, 2, 4), flipped = base:flip(1),
      stepped_rows = base[{ { 1, 5, 2 }, {}, {} }], rgb_of_rgba = base:narrow(3, 1, 3),
    }
    local nocopy = { narrowed = true, flipped = true, stepped_rows = true }
    for what, v in pairs(views) do
      local want = v:contiguous()
      assert.equals(nd.image.encode(want, "png"), nd.image.encode(v, "png"), what)
      local path = tmp(".png")
      assert.equals(nocopy[what] and 0 or 1, (testing.allocations(nd.image.save, path, v)), what)
      assert.tensor_equal(want, nd.image.load(path))
      os.remove(path)
    end
  end)

  it("goes to 8 bits by the rounded rule the JPEG error shows; to() alone is no rescale", function()
    local t = expected("rgb16.png")
    local err = assert_error_matches(function() nd.image.encode(t, "jpeg") end,
      "image.encode: JPEG is 8-bit: t has dtype uint16 (16-bit images go to PNG; to 8 bits, rounded: t:to(")
    local path = tmp(".jpg")
    assert_error_matches(function() nd.image.save(path, t) end,
      "image.save: " .. path .. ": JPEG is 8-bit: t has dtype uint16")
    local expr = err:match("rounded: t(:.*)%)$")
    local t8 = assert(loadstring or load)("local t = ...; return t" .. expr)(t)
    assert.equals("uint8", t8:dtype())
    local want = (t:double() * 255 / 65535):round():to("uint8")
    assert.tensor_equal(want, t8)
    assert.equals(255, t8[{ 1, 1, 1 }])
    nd.image.save(path, t8)
    assert.same({ 5, 7, 3 }, nd.image.load(path):size())
    os.remove(path)
  end)

  it("refuses truncated and corrupt 16-bit files, naming the function and the file", function()
    for _, name in ipairs({ "truncated_rgb16.png", "bad_filter16.png" }) do
      assert_error_matches(function() nd.image.load(dir .. name) end,
        "image.load: " .. dir .. name .. ": corrupt PNG (")
      assert_error_matches(function() nd.image.decode(read(dir .. name), { channels = 1 }) end,
        "image.decode: corrupt PNG (")
    end
  end)
end)
