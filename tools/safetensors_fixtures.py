#!/usr/bin/python3
"""safetensors fixtures for spec/safetensors_spec.lua, written from the
format's description (the `safetensors` package is not needed): an 8-byte
little-endian header length N, N bytes of JSON {name: {dtype, shape,
data_offsets: [begin, end]}, "__metadata__": {str: str}} padded with
spaces, then the data. NumPy makes the tensors' bytes.

  python3 tools/safetensors_fixtures.py write DIR   the fixture files
  python3 tools/safetensors_fixtures.py check FILE  prints what FILE holds
      (header bytes, each tensor's dtype, shape, offsets and values), or
      raises where it breaks the format: the spec's expectations for files
      nd writes are this output, committed."""
import json, struct, sys, os
import numpy as np

DT = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4",
      "I16": "<i2", "I8": "i1", "U64": "<u8", "U32": "<u4", "U16": "<u2",
      "U8": "u1", "BOOL": "?"}
SIZE = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2,
        "I8": 1, "U64": 8, "U32": 4, "U16": 2, "U8": 1, "BOOL": 1}


def pack(header, data, pad=True):
    h = json.dumps(header, separators=(",", ":")).encode()
    if pad:
        h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + data


def build(tensors, meta=None, order=None):
    """tensors: [(name, dtype string, ndarray or raw bytes, shape)]."""
    header, data = {}, b""
    if meta is not None:
        header["__metadata__"] = meta
    for name, dt, arr, shape in tensors:
        raw = arr if isinstance(arr, bytes) else arr.astype(DT[dt]).tobytes()
        header[name] = {"dtype": dt, "shape": list(shape),
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    return header, data


def write(d):
    os.makedirs(d, exist_ok=True)
    def put(name, blob):
        with open(os.path.join(d, name), "wb") as f:
            f.write(blob)
    a = np.arange(6, dtype=np.float64).reshape(2, 3) / 4
    # every dtype, aligned (element size descending), with metadata
    ts = []
    for i, dt in enumerate(["F64", "I64", "U64", "F32", "I32", "U32", "F16",
                            "I16", "U16", "I8", "U8", "BOOL"]):
        v = np.array([[0, 1, 2], [3, 4, 5]])
        if dt == "BOOL":
            v = v % 2
        if dt.startswith("I"):
            v = v - 2
        ts.append(("t_" + dt.lower(), dt, v, (2, 3)))
    ts.append(("bf16", "BF16", bytes([0x80, 0x3f, 0x00, 0x40]), (2,)))  # 1.0, 2.0
    put("all_dtypes.safetensors", pack(*build(ts, {"format": "pt", "note": "é"})))
    # nd's dtypes only, a 0-d and an empty tensor, no metadata
    put("basic.safetensors", pack(*build([
        ("weight", "F32", a, (2, 3)), ("bias", "F64", np.array([1.5, -2]), (2,)),
        ("step", "I64", np.array(7), ()), ("empty", "F32", np.zeros((0, 4)), (0, 4)),
        ("ids", "I32", np.array([3, -1]), (2,)), ("pix", "U8", np.array([0, 255]), (2,)),
        ("mask", "BOOL", np.array([1, 0, 1]), (3,))])))
    # misaligned: a 1-byte tensor first puts the F32 at an odd offset
    put("misaligned.safetensors", pack(*build([
        ("b", "U8", np.array([9]), (1,)), ("x", "F32", np.array([1, 2, 3]), (3,))])))
    # a bool tensor with bytes other than 0 and 1
    put("odd_bool.safetensors", pack(*build([("m", "BOOL", bytes([0, 1, 2, 255]), (4,))])))
    # hostile files, one rejection each
    good_h, good_d = build([("x", "F32", np.array([1, 2]), (2,)),
                            ("y", "F32", np.array([3]), (1,))])
    def variant(name, f):
        h = json.loads(json.dumps(good_h))
        blob = f(h)
        put("bad_" + name + ".safetensors", blob if isinstance(blob, bytes) else pack(h, good_d))
    variant("hole", lambda h: h["y"].update(data_offsets=[12, 16]))
    variant("overlap", lambda h: h["y"].update(data_offsets=[4, 8]) or pack(h, good_d[:8]))
    variant("past_end", lambda h: h["y"].update(data_offsets=[8, 16], shape=[2]))
    variant("negative", lambda h: h["x"].update(data_offsets=[-8, 8]))
    variant("fraction", lambda h: h["x"].update(data_offsets=[0, 7.5]))
    # whole numbers written as floats: the reference reader wants integers
    variant("whole_fraction", lambda h: h["x"].update(data_offsets=[0.0, 8.0]))
    exp = json.dumps(good_h, separators=(",", ":")).replace('"shape":[2]', '"shape":[2e0]').encode()
    put("bad_exponent.safetensors", struct.pack("<Q", len(exp)) + exp + good_d)
    variant("huge_offset", lambda h: h["x"].update(data_offsets=[0, 2 ** 60]))
    variant("range_mismatch", lambda h: h["x"].update(shape=[3]))
    variant("unknown_dtype", lambda h: h["x"].update(dtype="F128"))
    variant("overflow_shape", lambda h: h["x"].update(shape=[2 ** 40, 2 ** 40]))
    variant("not_object", lambda h: pack(["x"], good_d))
    variant("bad_meta", lambda h: h.update(__metadata__={"k": 1}))
    variant("extra_key", lambda h: h["x"].update(extra=1))
    variant("no_shape", lambda h: h["x"].pop("shape"))
    dup = json.dumps(good_h, separators=(",", ":"))
    dup = dup[:-1] + ',"x":' + json.dumps(good_h["x"], separators=(",", ":")) + "}"
    put("bad_duplicate.safetensors", struct.pack("<Q", len(dup)) + dup.encode() + good_d)
    bad_utf8 = json.dumps(good_h, separators=(",", ":")).encode().replace(b'"y"', b'"\xc0\xaf"')
    put("bad_utf8_name.safetensors", struct.pack("<Q", len(bad_utf8)) + bad_utf8 + good_d)
    raw = json.dumps(good_h, separators=(",", ":")).encode()
    put("bad_header_past_end.safetensors", struct.pack("<Q", len(raw) + 100) + raw)
    put("bad_header_too_big.safetensors", struct.pack("<Q", (100 << 20) + 1) + raw + good_d)
    put("bad_short.safetensors", b"\x05\x00\x00")
    put("bad_json.safetensors", struct.pack("<Q", 8) + b'{"x": [1' + good_d)
    put("bad_trailing.safetensors", struct.pack("<Q", len(raw) + 2) + raw + b" x" + good_d)


def check(path):
    blob = open(path, "rb").read()
    if len(blob) < 8:
        raise SystemExit("too short")
    n = struct.unpack("<Q", blob[:8])[0]
    if n % 8 or 8 + n > len(blob):
        raise SystemExit("header length %d: not a multiple of 8 or past the end" % n)
    text = blob[8:8 + n]
    header = json.loads(text)
    data = blob[8 + n:]
    print("header", len(text), text.decode())
    meta = header.pop("__metadata__", None)
    if meta is not None:
        print("metadata", json.dumps(meta, sort_keys=True, ensure_ascii=False))
    spans = sorted((v["data_offsets"][0], v["data_offsets"][1], k) for k, v in header.items())
    at = 0
    for b, e, k in spans:
        if b != at:
            raise SystemExit("hole or overlap at %s" % k)
        v = header[k]
        count = int(np.prod(v["shape"])) if v["shape"] else 1
        if e - b != count * SIZE[v["dtype"]]:
            raise SystemExit("byte range of %s" % k)
        if (8 + n + b) % SIZE[v["dtype"]]:
            raise SystemExit("%s is misaligned" % k)
        if v["dtype"] in DT:
            vals = json.dumps(np.frombuffer(data[b:e], dtype=DT[v["dtype"]]).reshape(v["shape"]).tolist())
        else:
            vals = data[b:e].hex()
        print("tensor", k, v["dtype"], v["shape"], b, e, vals)
        at = e
    if at != len(data):
        raise SystemExit("data past the last tensor")


if __name__ == "__main__":
    {"write": write, "check": check}[sys.argv[1]](sys.argv[2])
