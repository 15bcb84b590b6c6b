#!/usr/bin/python3
"""Writes spec/fixtures/convert_cases.lua: every (source, destination)
dtype pair over edge values (signed zeros, NaN, infinities, values just
inside and outside each integer range, wrapping integers), for
spec/convert_spec.lua. Run from the repository root:
    /usr/bin/python3 tools/gen_convert_fixtures.py
NumPy's astype gives the values wherever C defines the cast (and for the
integer wraps, which NumPy and PyTorch share). Where C leaves it undefined
(float to integer out of range or NaN; NumPy returns the hardware's
INT_MIN there) nd's documented rule is applied instead: truncate toward
zero, saturate, NaN gives 0. int64 to float32 rounds once, as NumPy and
PyTorch do (2^53 + 2^29 + 1 gives 2^53 + 2^30). int64 values travel as {hi, lo} (hi * 2^32 + lo), exact in
any Lua. The suite itself does not need Python."""
import math
import os
import sys
import warnings
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from half_round import half_round  # noqa: E402

warnings.simplefilter("ignore")
DT = ["float32", "float64", "int32", "int64", "uint8", "bool", "int8",
      "int16", "uint16", "uint32", "uint64", "float16", "bfloat16"]
HALF = ("float16", "bfloat16")
FLOATS = ("float32", "float64") + HALF
# float16 / bfloat16 values travel as float64 (exact); conversions into
# them round once (tools/half_round.py)
NP = {d: np.dtype(d).type for d in DT if d not in ("bool",) + HALF}
NP["bool"] = np.bool_
NP["float16"] = NP["bfloat16"] = np.float64
RANGE = {d: (int(np.iinfo(d).min), int(np.iinfo(d).max)) for d in DT
         if d not in FLOATS + ("bool",)}
inf, nan = math.inf, math.nan
SRC = {
    "float64": [0.0, -0.0, 0.5, -0.5, 1.9, -1.9, 2.5, -2.5, 127.5, 255.0,
                255.9, 256.0, 300.5, -1.0, -255.5, 2147483647.5,
                2147483648.0, -2147483648.9, -2147483649.0, 1e10,
                9223372036854774784.0, 2.0**63, -2.0**63, -9.3e18, 1e300,
                -1e300, 3.5e38, 1e-320, inf, -inf, nan, 16777217.0],
    "float32": [0.0, -0.0, 0.5, -0.5, 1.9, -1.9, 2.5, -2.5, 127.5, 255.0,
                255.9, 256.0, 300.5, -1.0, -255.5, 2147483520.0,
                2147483648.0, -2147483648.0, -2147483904.0, 1e10,
                9223371487098961920.0, 2.0**63, -2.0**63, -1e20, 3.4e38,
                -3.4e38, 1e-40, inf, -inf, nan, 16777216.0, 0.1],
    "int32": [0, 1, -1, 127, 128, 255, 256, 257, -255, -256, 65535,
              16777217, 2147483647, -2147483648, 1000000007, -7],
    "int64": [0, 1, -1, 255, 256, -256, 2**31 - 1, 2**31, -2**31 - 1,
              2**32 + 5, 2**53 + 1, 2**62 + 7, -2**40 - 3, 4294967295,
              2**63 - 1, -2**63, 9007199254740993, -9007199254740993,
              2**53 + 2**29 + 1, -(2**40 + 2**16 + 1)],
    "uint8": [0, 1, 127, 128, 200, 255],
    "int8": [0, 1, -1, 127, -128, 100, -100],
    "int16": [0, 1, -1, 127, 128, 255, 256, -129, 32767, -32768, 1000],
    "uint16": [0, 1, 127, 128, 255, 256, 32767, 32768, 65535, 40000],
    "uint32": [0, 1, 255, 256, 65535, 65536, 2**31 - 1, 2**31, 2**32 - 1,
               3000000000],
    "uint64": [0, 1, 255, 65536, 2**32 - 1, 2**32, 2**53 + 1, 2**63 - 1,
               2**63, 2**64 - 1, 12345678901234567890],
    "bool": [True, False],
    "float16": [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 127.5, 255.0, 256.0,
                300.5, -1.0, 65504.0, -65504.0, 2.0**-24, 2.0**-14, inf,
                -inf, nan, 0.0999755859375, 2048.0, -129.0],
    "bfloat16": [0.0, -0.0, 0.5, 1.5, -2.5, 255.0, 256.0, 300.0, -1.0,
                 3.3895313892515355e38, -3.3895313892515355e38, 2.0**-133,
                 2.0**31, 2.0**63, 2.0**64, inf, -inf, nan, 0.10009765625,
                 65536.0, -129.0],
}


def convert(vals, s, d):
    a = np.array(vals, dtype=NP[s])
    if d in HALF:
        src = vals if s in ("int64", "uint64") else a.tolist()
        return np.array([half_round(v, d) for v in src], dtype=np.float64)
    if s in FLOATS and d in RANGE:
        lo, hi = RANGE[d]
        out = []
        for v in a.tolist():
            if v != v:
                out.append(0)
            elif v == inf or v == -inf:
                out.append(hi if v > 0 else lo)
            else:
                out.append(min(max(math.trunc(v), lo), hi))
        want = np.array(out, dtype=NP[d])
        inside = [x == x and lo <= x < hi + 1 for x in a.tolist()]
        # NumPy agrees wherever the cast is defined.
        assert (a.astype(NP[d])[inside] == want[inside]).all()
        return want
    return a.astype(NP[d])


def lua_num(v):
    if v != v:
        return "0/0"
    if v == inf:
        return "math.huge"
    if v == -inf:
        return "-math.huge"
    if v == 0 and math.copysign(1, v) < 0:
        return "-1/math.huge"
    if float(v).is_integer() and abs(v) < 2**53:
        return str(int(v))
    return repr(float(v))


def lua_vals(arr, d):
    items = []
    for v in arr.tolist():
        if d == "bool":
            items.append("true" if v else "false")
        elif d in ("int64", "uint64"):  # uint64: the bits as an int64's
            v = v - 2**64 if v >= 2**63 else v
            items.append("{%d, %d}" % (v >> 32, v & 0xFFFFFFFF))
        else:
            items.append(lua_num(v))
    return "{" + ", ".join(items) + "}"


def main():
    lines = ["-- Generated by tools/gen_convert_fixtures.py (NumPy %s, nd's rule "
             "for float to integer\n-- out of range and NaN); do not edit." % np.__version__,
             "return {"]
    for s in DT:
        src = np.array(SRC[s], dtype=NP[s])
        for d in DT:
            want = convert(SRC[s], s, d)
            lines.append('{from = "%s", to = "%s", values = %s, want = %s},' %
                         (s, d, lua_vals(src, s), lua_vals(want, d)))
    lines.append("}")
    with open("spec/fixtures/convert_cases.lua", "w") as f:
        f.write("\n".join(lines) + "\n")


main()
