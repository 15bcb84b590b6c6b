#!/usr/bin/python3
"""Writes spec/fixtures/pool_cases.lua: inputs and PyTorch 1.13's results
(CPU, one thread) for nd's max_pool1d/2d/3d, avg_pool1d/2d/3d and
adaptive_avg_pool2d over many option combinations, batched and unbatched,
float32 and float64 (and int64 for avg pooling, which PyTorch's CPU
kernels take). Run from the repository root:
/usr/bin/python3 tools/gen_pool_fixtures.py (needs torch and numpy; the
spec suite reads only the generated file).

Tensors are written flat (row-major values, dtype, size); NaN and the
infinities as Lua expressions. max pooling's indices are written as nd's:
PyTorch's plus one."""
import math
import numpy as np
import torch
import torch.nn.functional as F
from fixture_lua import DT

torch.set_num_threads(1)
rng = np.random.default_rng(24)
TDT = {"float32": torch.float32, "float64": torch.float64, "int64": torch.int64}


def num(v):
    if isinstance(v, float):
        if math.isnan(v):
            return "0/0"
        if math.isinf(v):
            return "1/0" if v > 0 else "-1/0"
        return repr(v)
    return str(int(v))


def lua(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return num(v)
    if isinstance(v, str):
        return '"%s"' % v
    if isinstance(v, dict):
        return "{" + ", ".join("%s = %s" % (k, lua(x)) for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "{" + ", ".join("nil" if x is None else lua(x) for x in v) + "}"
    raise TypeError(type(v))


def T(t):
    return {"t": [float(x) if t.is_floating_point() else int(x)
                  for x in t.reshape(-1).tolist()],
            "dtype": DT[t.dtype], "size": list(t.shape)}


def data(shape, dtype, kind="normal"):
    if kind == "ties":  # small integers: many equal maxima
        a = rng.integers(-4, 5, size=shape).astype(np.float64)
    elif dtype == "int64":
        a = rng.integers(-50, 51, size=shape)
    else:
        a = rng.standard_normal(shape)
    return torch.tensor(a).to(TDT[dtype])


cases = []


def case(fn, x, opts, name):
    f = getattr(F, fn)
    if fn.startswith("adaptive"):
        r = f(x, opts)
        exp = {"out": T(r)}
        o = list(opts) if isinstance(opts, tuple) else opts
    else:
        kw = dict(opts)
        r = f(x, **kw)
        if kw.get("return_indices"):
            exp = {"out": T(r[0]), "indices": T(r[1] + 1)}
        else:
            exp = {"out": T(r)}
        o = opts
    c = {"fn": fn, "name": name, "x": T(x), "opts": o, "expected": exp}
    if fn.startswith("adaptive") and r.shape[-1] == 1 and r.shape[-2] == 1:
        c["tol"] = True  # PyTorch takes a 1x1 output as mean(), summing in another order
    cases.append(c)


SHAPES = {1: (2, 3, 11), 2: (2, 2, 7, 8), 3: (2, 1, 5, 5, 6)}

# option sets per rank: (options, label); every one valid for every rank's shape
def pool_opts(dims, op):
    sets = [
        ({"kernel_size": 2}, "k2"),
        ({"kernel_size": 3, "stride": 2}, "k3 s2"),
        ({"kernel_size": 3, "stride": 2, "padding": 1}, "k3 s2 p1"),
        ({"kernel_size": 3, "stride": 2, "ceil_mode": True}, "k3 s2 ceil"),
        ({"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}, "k3 s2 p1 ceil"),
        ({"kernel_size": 2, "stride": 3, "padding": 1, "ceil_mode": True}, "k2 s3 p1 ceil"),
        ({"kernel_size": 3, "stride": 1, "padding": 1}, "k3 s1 p1"),
        ({"kernel_size": 4, "stride": 3, "padding": 2, "ceil_mode": True}, "k4 s3 p2 ceil"),
        ({"kernel_size": 1, "stride": 2}, "k1 s2"),
    ]
    per = {1: ([3], [2], [1]), 2: ([3, 2], [1, 2], [1, 0]), 3: ([3, 2, 3], [2, 1, 2], [1, 1, 0])}[dims]
    sets.append(({"kernel_size": per[0], "stride": per[1], "padding": per[2]}, "per-dim"))
    if op == "max":
        sets += [
            ({"kernel_size": 2, "dilation": 2}, "k2 d2"),
            ({"kernel_size": 3, "stride": 1, "padding": 1, "dilation": 2}, "k3 s1 p1 d2"),
            ({"kernel_size": 2, "stride": 2, "padding": 1, "dilation": 3, "ceil_mode": True}, "k2 s2 p1 d3 ceil"),
        ]
    else:
        sets += [
            ({"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False}, "k3 s2 p1 no-pad-count"),
            ({"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False}, "k3 s2 p1 ceil no-pad-count"),
            ({"kernel_size": 4, "stride": 3, "padding": 2, "ceil_mode": True, "count_include_pad": True}, "k4 s3 p2 ceil pad-count"),
        ]
        if dims > 1:
            sets += [
                ({"kernel_size": 3, "stride": 2, "padding": 1, "divisor_override": 4}, "k3 s2 p1 div4"),
                ({"kernel_size": 2, "ceil_mode": True, "divisor_override": -3}, "k2 ceil div-3"),
            ]
    return sets


for dims in (1, 2, 3):
    shape = SHAPES[dims]
    for op in ("max", "avg"):
        fn = "%s_pool%dd" % (op, dims)
        for i, (opts, label) in enumerate(pool_opts(dims, op)):
            dtype = "float32" if i % 2 == 0 else "float64"
            batched = i % 3 != 1
            shp = shape if batched else shape[1:]
            x = data(shp, dtype, "ties" if op == "max" and i % 2 else "normal")
            if op == "max":
                opts = dict(opts, return_indices=(i % 4 != 3))
            case(fn, x, opts, "%s %s %s" % (label, dtype, "batched" if batched else "unbatched"))
        if op == "avg":  # int64: sums, then truncating quotients
            for opts, label in pool_opts(dims, op)[:4] + pool_opts(dims, op)[-2:]:
                case(fn, data(shape, "int64"), opts, label + " int64")
    # NaN and -inf: propagate; the last NaN's position; all -inf keeps the first
    x = data(shape, "float64")
    flat = x.view(-1)
    flat[::7] = float("nan")
    flat[3::11] = float("-inf")
    flat[5::13] = float("inf")
    case("max_pool%dd" % dims, x, {"kernel_size": 3, "stride": 2, "padding": 1, "return_indices": True}, "NaN and infinities float64")
    case("avg_pool%dd" % dims, x, {"kernel_size": 2}, "NaN and infinities float64")
    x = torch.full(shape[1:], float("-inf"), dtype=torch.float32)
    case("max_pool%dd" % dims, x, {"kernel_size": 2, "stride": 1, "padding": 1, "return_indices": True}, "all -inf float32")
    x = data(shape, "float32")
    x.view(-1)[::5] = float("nan")
    case("max_pool%dd" % dims, x, {"kernel_size": 3, "stride": 1, "dilation": 2}, "NaN values only float32")

# windows with no valid position (padding and dilation skip the input)
case("max_pool1d", torch.tensor([[5.0]]), {"kernel_size": 2, "padding": 1, "dilation": 2, "return_indices": True}, "window all padding")

# adaptive_avg_pool2d
for i, (size, label) in enumerate([((3, 4), "3x4"), ((7, 8), "same"), ((4, 3), "4x3"), (5, "5"),
                                   ((None, 3), "nil x 3"), ((2, None), "2 x nil"), ((1, 1), "1x1"),
                                   ((10, 11), "upsample"), ((0, 3), "empty")]):
    dtype = "float32" if i % 2 == 0 else "float64"
    batched = i % 3 != 1
    shp = SHAPES[2] if batched else SHAPES[2][1:]
    case("adaptive_avg_pool2d", data(shp, dtype), size, "%s %s %s" % (label, dtype, "batched" if batched else "unbatched"))

with open("spec/fixtures/pool_cases.lua", "w") as f:
    f.write("-- Generated by tools/gen_pool_fixtures.py (torch %s, numpy %s); do not edit.\n"
            % (torch.__version__, np.__version__))
    f.write("return {\n")
    for c in cases:
        f.write("  " + lua(c) + ",\n")
    f.write("}\n")
print(len(cases), "cases")
