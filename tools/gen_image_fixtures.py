"""Small PNG and JPEG files for spec/image_spec.lua, written by PIL, and
what PIL decodes them to (spec/fixtures/images.lua): the pixels as nd
should load them, and converted to 1..4 channels with PIL's convert.

    /usr/bin/python3 tools/gen_image_fixtures.py

Also a few files PIL cannot write: an Adam7-interlaced PNG, a PNG whose
header claims 100000x100000 pixels (no data), a 16-bit PNG, truncated
files. The suite reads only the outputs; it never needs Python."""
import io
import os
import struct
import zlib

import PIL
from PIL import Image

OUT = "spec/fixtures/images"
W, H = 7, 5
MODES = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}


def pattern(mode):
    """Pixel values that exercise every channel: gradients and noise."""
    n = len(mode)
    data = []
    for y in range(H):
        for x in range(W):
            px = tuple((x * 37 + y * 53 + c * 91 + (x * y * c) % 17) % 256
                       for c in range(n))
            data.append(px[0] if n == 1 else px)
    im = Image.new(mode, (W, H))
    im.putdata(data)
    return im


def chunk(kind, body):
    return (struct.pack(">I", len(body)) + kind + body +
            struct.pack(">I", zlib.crc32(kind + body) & 0xffffffff))


def png_bytes(w, h, depth, ctype, idat, interlace=0):
    return (b"\x89PNG\r\n\x1a\n" +
            chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, ctype, 0, 0,
                                       interlace)) +
            chunk(b"IDAT", idat) + chunk(b"IEND", b""))


def adam7(im):
    """im (RGB) as an interlaced PNG: the seven passes, filter 0."""
    px = im.load()
    raw = b""
    passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4),
              (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
    for x0, y0, dx, dy in passes:
        xs = range(x0, im.width, dx)
        for y in range(y0, im.height, dy):
            if len(xs):
                raw += b"\x00" + b"".join(bytes(px[x, y]) for x in xs)
    return png_bytes(im.width, im.height, 8, 2, zlib.compress(raw), 1)


cases = {}


def expect(name, im, native):
    """What nd loads from name: im converted to its native mode, and to
    each channel count."""
    base = im if im.mode == MODES[native] else im.convert(MODES[native])
    case = {"size": [im.height, im.width, native]}
    for c, mode in MODES.items():
        case[c] = base.convert(mode).tobytes()
    cases[name] = case


def save(name, im, native=None, **kw):
    im.save(os.path.join(OUT, name), **kw)
    if native:
        back = Image.open(os.path.join(OUT, name))
        back.load()
        expect(name, back, native)


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def main():
    os.makedirs(OUT, exist_ok=True)
    for c, mode in MODES.items():
        save("%s.png" % mode.lower(), pattern(mode), c)
    save("gray1.png", pattern("L").point(lambda v: 255 * (v > 127)).convert("1"), 1)
    pal = pattern("RGB").quantize(colors=12)
    save("palette.png", pal, 3)
    save("palette_trns.png", pal, 4, transparency=bytes(range(0, 240, 20)))
    gt = pattern("L")
    save("gray_trns.png", gt, 2, transparency=gt.getpixel((3, 2)))
    rt = pattern("RGB")
    save("rgb_trns.png", rt, 4, transparency=rt.getpixel((1, 1)))
    write("interlaced.png", adam7(pattern("RGB")))
    back = Image.open(os.path.join(OUT, "interlaced.png"))
    assert back.info.get("interlace") == 1
    assert back.convert("RGB").tobytes() == pattern("RGB").tobytes()
    expect("interlaced.png", back, 3)
    vals = [[(x + 3 * y) % 16 for x in range(W)] for y in range(H)]
    rows = b""
    for r in vals:  # 4-bit gray, two pixels a byte, high nibble first
        packed = bytearray((W + 1) // 2)
        for x, v in enumerate(r):
            packed[x // 2] |= v << (4 if x % 2 == 0 else 0)
        rows += b"\0" + bytes(packed)
    write("gray4.png", png_bytes(W, H, 4, 0, zlib.compress(rows)))
    back = Image.open(os.path.join(OUT, "gray4.png"))
    back.load()
    assert back.mode == "L" and back.getpixel((1, 0)) == 17 * vals[0][1]
    expect("gray4.png", back, 1)
    rows = b"".join(b"\0" + bytes(W * 2) for _ in range(H))
    write("gray16.png", png_bytes(W, H, 16, 0, zlib.compress(rows)))
    # a header of 100000x100000 RGBA pixels and a few bytes of data
    write("bomb.png", png_bytes(100000, 100000, 8, 6, zlib.compress(b"\0" * 64)))
    write("wide.png", png_bytes(1 << 29, 1, 8, 0, zlib.compress(b"\0" * 64)))

    save("rgb.jpg", pattern("RGB"), 3, quality=90)
    save("gray.jpg", pattern("L"), 1, quality=90)
    save("progressive.jpg", pattern("RGB"), 3, quality=75, progressive=True)
    save("cmyk.jpg", pattern("CMYK"), quality=90)
    # rgb.jpg with its frame header claiming 60000x60000 pixels
    data = bytearray(open(os.path.join(OUT, "rgb.jpg"), "rb").read())
    sof = data.index(b"\xff\xc0")
    data[sof + 5:sof + 9] = struct.pack(">HH", 60000, 60000)
    write("bomb.jpg", bytes(data))
    for name in ("rgb.png", "rgb.jpg"):
        data = open(os.path.join(OUT, name), "rb").read()
        write("truncated_" + name, data[:len(data) // 2])
    write("not_an_image.png", b"GIF89a this is not a PNG or a JPEG\n")

    # nd's luma is PIL's: check the formula here, once.
    rgb = pattern("RGB")
    for (r, g, b), l in zip(rgb.getdata(), rgb.convert("L").getdata()):
        assert (r * 19595 + g * 38470 + b * 7471 + 32768) >> 16 == l

    with open("spec/fixtures/images.lua", "w") as f:
        f.write("-- Generated by tools/gen_image_fixtures.py (PIL %s); do not "
                "edit.\n-- name = { size = {H, W, C}, [c] = the pixels converted "
                "to c channels, hex }\nreturn {\n" % PIL.__version__)
        for name in sorted(cases):
            case = cases[name]
            f.write('  ["%s"] = {\n    size = {%s},\n' %
                    (name, ", ".join(map(str, case["size"]))))
            for c in MODES:
                f.write('    [%d] = "%s",\n' % (c, case[c].hex()))
            f.write("  },\n")
        f.write("}\n")


main()
