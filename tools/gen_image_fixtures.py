"""Small PNG and JPEG files for spec/image_spec.lua, written by PIL, and
what PIL decodes them to (spec/fixtures/images.lua): the pixels as nd
should load them, and converted to 1..4 channels with PIL's convert.

    /usr/bin/python3 tools/gen_image_fixtures.py

Also a few files PIL cannot write: an Adam7-interlaced PNG, a PNG whose
header claims 100000x100000 pixels (no data), truncated files, and the
16-bit PNGs (gray, gray+alpha, RGB, RGBA, with tRNS, interlaced) of a
small pure-Python writer below, whose bytes (filter types, tRNS) are ours;
a 16-bit gray one of PIL's ("I;16"); and one nd wrote (bin/nd: run `make`
first), read back here by the pure-Python decoder. PIL converts no 16-bit
colour mode, so the 16-bit channel conversions are nd's documented rule
computed here (the 8-bit rule is checked against PIL's below). The suite
reads only the outputs; it never needs Python."""
import os
import struct
import subprocess
import tempfile
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


# ---- 16-bit PNGs: a pure-Python writer and decoder ----
ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4),
         (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
CTYPE = {1: 0, 2: 4, 3: 2, 4: 6}  # channels -> PNG colour type


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def predict(kind, raw, prev, i, bpp):
    a = raw[i - bpp] if i >= bpp else 0
    b = prev[i] if prev else 0
    c = prev[i - bpp] if prev and i >= bpp else 0
    return (0, a, b, (a + b) // 2, paeth(a, b, c))[kind]


def filter_rows(rows, bpp, kinds):
    """rows (bytes each) filtered with kinds[y % len(kinds)]."""
    out, prev = b"", None
    for y, raw in enumerate(rows):
        kind = kinds[y % len(kinds)]
        out += bytes([kind]) + bytes((raw[i] - predict(kind, raw, prev, i, bpp))
                                     & 255 for i in range(len(raw)))
        prev = raw
    return out


def unfilter_rows(data, nrows, rowlen, bpp):
    rows, prev, at = [], None, 0
    for _ in range(nrows):
        kind, line = data[at], data[at + 1:at + 1 + rowlen]
        at += 1 + rowlen
        assert kind <= 4, "filter type %d" % kind
        raw = bytearray(rowlen)
        for i in range(rowlen):
            raw[i] = (line[i] + predict(kind, raw, prev, i, bpp)) & 255
        rows.append(bytes(raw))
        prev = raw
    assert at == len(data), "IDAT holds %d bytes, not %d" % (len(data), at)
    return rows


def png16(px, c, kinds=(0, 1, 2, 3, 4), trns=None, interlace=0):
    """px[y][x] a tuple of c samples (0..65535) as a 16-bit PNG, the rows
    filtered with kinds in turn."""
    h, w = len(px), len(px[0])
    bpp = 2 * c
    row = lambda y, xs: b"".join(struct.pack(">%dH" % c, *px[y][x]) for x in xs)
    if interlace:
        data = b""
        for x0, y0, dx, dy in ADAM7:
            xs = range(x0, w, dx)
            if len(xs):
                data += filter_rows([row(y, xs) for y in range(y0, h, dy)],
                                    bpp, kinds)
    else:
        data = filter_rows([row(y, range(w)) for y in range(h)], bpp, kinds)
    extra = chunk(b"tRNS", struct.pack(">%dH" % len(trns), *trns)) if trns else b""
    head = png_bytes(w, h, 16, CTYPE[c], zlib.compress(data), interlace)
    return head[:33] + extra + head[33:]  # tRNS after IHDR, before IDAT


def read_png16(data):
    """A non-interlaced 16-bit PNG's pixels, px[y][x] tuples, checking
    every chunk's CRC: an independent reader of what nd writes."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, idat, ihdr = 8, b"", None
    while at < len(data):
        n, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + n]
        crc, = struct.unpack(">I", data[at + 8 + n:at + 12 + n])
        assert crc == zlib.crc32(kind + body) & 0xffffffff, kind
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        at += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    assert depth == 16 and interlace == 0, ihdr
    c = {v: k for k, v in CTYPE.items()}[ctype]
    rows = unfilter_rows(zlib.decompress(idat), h, w * 2 * c, 2 * c)
    return [[struct.unpack(">%dH" % c, r[x * 2 * c:(x + 1) * 2 * c])
             for x in range(w)] for r in rows]


def pattern16(c):
    """Samples whose high and low bytes differ (a byte-order slip shows),
    with 0 and 65535 at the first pixels."""
    px = [[tuple((x * 4099 + y * 12289 + k * 20011 + x * y * k * 257) % 65536
                 for k in range(c)) for x in range(W)] for y in range(H)]
    px[0][0] = (65535,) * c
    px[0][1] = (0,) * c
    px[0][2] = tuple((0x00ff, 0xff00)[k % 2] for k in range(c))
    return px


def luma(p):  # nd's rule, the same expression at 8 and 16 bits
    return (p[0] * 19595 + p[1] * 38470 + p[2] * 7471 + 32768) >> 16


def convert16(p, dc):
    sc = len(p)
    g = luma(p) if sc >= 3 else p[0]
    a = p[1] if sc == 2 else p[3] if sc == 4 else 65535
    rgb = tuple(p[:3]) if sc >= 3 else (p[0],) * 3
    return ((g,), (g, a), rgb, rgb + (a,))[dc - 1]


def expect16(name, px):
    """What nd loads from name: px (native channels) and each conversion."""
    case = {"size": [len(px), len(px[0]), len(px[0][0])], "dtype": "uint16"}
    for dc in MODES:
        case[dc] = [v for r in px for p in r for v in convert16(p, dc)]
    cases[name] = case


def with_trns(px, key):
    """px with tRNS key (a full sample tuple) as alpha: 0 there, else 65535."""
    return [[p + ((0,) if p == key else (65535,)) for p in r] for r in px]


def main16():
    for c, mode in MODES.items():
        name = "%s16.png" % ("gray" if c == 1 else mode.lower())
        px = pattern16(c)
        write(name, png16(px, c))
        assert read_png16(open(os.path.join(OUT, name), "rb").read()) == px
        back = Image.open(os.path.join(OUT, name))
        back.load()
        if c == 1:  # PIL reads 16-bit gray whole; the rest as high bytes
            assert list(back.getdata()) == [p[0] for r in px for p in r]
        else:  # 16-bit gray+alpha PIL gives as RGBA
            hi = [tuple(v >> 8 for v in convert16(p, len(back.mode)))
                  for r in px for p in r]
            assert back.mode == (mode if c != 2 else "RGBA"), back.mode
            assert [tuple(p) for p in back.getdata()] == hi
        expect16(name, px)
    write("rgb16_interlaced.png", png16(pattern16(3), 3, interlace=1))
    back = Image.open(os.path.join(OUT, "rgb16_interlaced.png"))
    back.load()
    assert [tuple(v >> 8 for v in p) for r in pattern16(3) for p in r] == \
        list(back.getdata())
    expect16("rgb16_interlaced.png", pattern16(3))
    # tRNS: the key matches one pixel; another shares its high bytes only
    px = pattern16(1)
    px[4][5] = (px[3][2][0] ^ 1,)
    write("gray16_trns.png", png16(px, 1, trns=px[3][2]))
    expect16("gray16_trns.png", with_trns(px, px[3][2]))
    px = pattern16(3)
    px[2][2] = (px[1][4][0], px[1][4][1], px[1][4][2] ^ 1)
    write("rgb16_trns.png", png16(px, 3, kinds=(4, 3), trns=px[1][4]))
    expect16("rgb16_trns.png", with_trns(px, px[1][4]))
    # PIL's own 16-bit gray
    im = Image.new("I;16", (W, H))
    vals = [p[0] for r in pattern16(1) for p in r]
    im.putdata(vals)
    im.save(os.path.join(OUT, "gray16_pil.png"))
    px = read_png16(open(os.path.join(OUT, "gray16_pil.png"), "rb").read())
    assert [p[0] for r in px for p in r] == vals
    expect16("gray16_pil.png", px)
    # broken: cut in half, and a row filter type 5 under valid checksums
    data = open(os.path.join(OUT, "rgb16.png"), "rb").read()
    write("truncated_rgb16.png", data[:len(data) // 2])
    rows = b"".join(b"\5" + bytes(W * 8) for _ in range(H))
    write("bad_filter16.png", png16([[(0, 0, 0, 0)] * W] * H, 4)[:33] +
          chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
    # nd's own 16-bit PNG, read back by read_png16 above
    px = pattern16(4)
    flat = [v for r in px for p in r for v in p]
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write('local nd = require "nd"\nnd.image.save(arg[1], '
                'nd.tensor({%s}, "uint16"):view(%d, %d, 4))\n'
                % (",".join(map(str, flat)), H, W))
    subprocess.run(["bin/nd", f.name, os.path.join(OUT, "nd_rgba16.png")],
                   check=True)
    os.remove(f.name)
    assert read_png16(open(os.path.join(OUT, "nd_rgba16.png"), "rb").read()) == px
    expect16("nd_rgba16.png", px)


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
    main16()
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
        assert luma((r, g, b)) == l

    with open("spec/fixtures/images.lua", "w") as f:
        f.write("-- Generated by tools/gen_image_fixtures.py (PIL %s); do not "
                "edit.\n-- name = { size = {H, W, C}, [c] = the pixels converted "
                "to c channels, hex (uint8)\n-- or, with dtype = \"uint16\", "
                "a list of the samples }\nreturn {\n" % PIL.__version__)
        for name in sorted(cases):
            case = cases[name]
            f.write('  ["%s"] = {\n    size = {%s},\n' %
                    (name, ", ".join(map(str, case["size"]))))
            if "dtype" in case:
                f.write('    dtype = "%s",\n' % case["dtype"])
            for c in MODES:
                if "dtype" in case:
                    f.write('    [%d] = {%s},\n' % (c, ", ".join(map(str, case[c]))))
                else:
                    f.write('    [%d] = "%s",\n' % (c, case[c].hex()))
            f.write("  },\n")
        f.write("}\n")


main()
