#!/usr/bin/python3
"""Writes spec/fixtures/conv_cases.lua: inputs, weights, biases and the
results of PyTorch 1.13's F.conv1d/conv2d/conv3d for nd.conv1d/2d/3d.
Run from the repository root: /usr/bin/python3 tools/gen_conv_fixtures.py
(needs torch and numpy; the spec suite reads only the generated file).
Values are small integers, so every sum is exact in float32 and float64
whatever the order of the additions, and the spec compares exactly. The
shapes reach each strategy (1x1 GEMM, im2col with several tiles and a
shorter last one, the direct loop), every option, unbatched inputs,
groups, depthwise layers with a channel multiplier and an empty batch."""
import numpy as np
import torch
import torch.nn.functional as F
from fixture_lua import write, T

rng = np.random.default_rng(2024)
FN = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def data(shape, dtype):
    return torch.tensor(rng.integers(-3, 4, size=shape)).to(
        torch.float32 if dtype == "float32" else torch.float64)


cases = []


def case(name, x, w, opts=None, bias=False, dt="float64", wdt=None):
    opts = dict(opts or {})
    nsp = len(w) - 2
    xt, wt = data(x, dt), data(w, wdt or dt)
    b = data((w[0],), dt) if bias else None
    common = torch.promote_types(xt.dtype, wt.dtype)
    r = FN[nsp](xt.to(common), wt.to(common), None if b is None else b.to(common), **opts)
    c = {"name": name, "nsp": nsp, "x": T(xt), "w": T(wt), "opts": opts,
         "expected": T(r)}
    if b is not None:
        c["bias"] = T(b)
    cases.append(c)


# conv1d
case("1d plain", (2, 3, 10), (4, 3, 3))
case("1d padding 2", (2, 3, 10), (4, 3, 3), {"padding": 2}, bias=True)
case("1d stride 2 dilation 2", (2, 3, 11), (4, 3, 3), {"stride": 2, "dilation": 2})
case("1d same, even kernel", (2, 3, 9), (5, 3, 4), {"padding": "same"})
case("1d same, dilation 3", (1, 2, 9), (2, 2, 3), {"padding": "same", "dilation": 3}, bias=True)
case("1d valid", (2, 3, 6), (4, 3, 6), {"padding": "valid"})
case("1d unbatched", (3, 10), (4, 3, 3), {"padding": 1}, bias=True)
case("1d depthwise", (2, 3, 10), (3, 1, 3), {"groups": 3, "padding": 1})
case("1d depthwise x2", (2, 3, 10), (6, 1, 3), {"groups": 3}, bias=True)
case("1d im2col", (2, 16, 12), (8, 16, 3), {"padding": 1}, bias=True)
case("1d 1x1", (2, 16, 12), (8, 16, 1), bias=True)
case("1d 1x1 groups", (2, 16, 12), (8, 4, 1), {"groups": 4})
case("1d 1x1 stride", (2, 16, 12), (8, 16, 1), {"stride": 3})
case("1d float32", (2, 16, 12), (8, 16, 3), {"padding": 1}, bias=True, dt="float32")
case("1d float32 input, float64 weight", (2, 16, 12), (8, 16, 3), {"padding": 1}, dt="float32", wdt="float64")
case("1d kernel as large as the input", (1, 2, 4), (3, 2, 4))
case("1d empty batch", (0, 3, 10), (4, 3, 3))
# conv2d
case("2d plain", (2, 3, 7, 8), (4, 3, 3, 3))
case("2d padding 1 bias", (2, 3, 7, 8), (4, 3, 3, 3), {"padding": 1}, bias=True)
case("2d per-dim options", (2, 3, 9, 8), (4, 3, 3, 2), {"stride": [2, 1], "padding": [1, 2], "dilation": [1, 2]}, bias=True)
case("2d same even kernels", (1, 3, 6, 7), (4, 3, 2, 4), {"padding": "same"})
case("2d groups 2", (2, 4, 6, 6), (6, 2, 3, 3), {"groups": 2, "padding": 1}, bias=True)
case("2d depthwise 3x3", (2, 8, 9, 9), (8, 1, 3, 3), {"groups": 8, "padding": 1}, bias=True)
case("2d depthwise stride 2", (2, 8, 9, 9), (8, 1, 3, 3), {"groups": 8, "padding": 1, "stride": 2})
case("2d depthwise x2 dilated", (1, 4, 9, 9), (8, 1, 3, 3), {"groups": 4, "dilation": 2, "padding": 2})
case("2d one filter 5x5", (1, 1, 12, 12), (1, 1, 5, 5), {"padding": 2})
case("2d im2col tiles", (1, 8, 30, 30), (16, 8, 3, 3), {"padding": 1}, bias=True)
case("2d im2col tiles float32", (2, 8, 30, 50), (16, 8, 3, 3), {"padding": 1, "stride": [1, 2]}, dt="float32")
case("2d 1x1", (2, 8, 5, 6), (16, 8, 1, 1), bias=True)
case("2d 1x1 groups", (2, 8, 5, 6), (16, 4, 1, 1), {"groups": 2}, bias=True)
case("2d 1x1 stride 2", (2, 8, 5, 6), (16, 8, 1, 1), {"stride": 2})
case("2d 1x1 padding 1", (2, 8, 5, 6), (16, 8, 1, 1), {"padding": 1})
case("2d unbatched", (8, 6, 7), (16, 8, 3, 3), {"padding": 1}, bias=True)
case("2d unbatched 1x1", (8, 6, 7), (16, 8, 1, 1))
case("2d empty batch", (0, 8, 6, 7), (16, 8, 3, 3))
case("2d valid", (1, 8, 6, 7), (16, 8, 6, 7), {"padding": "valid"}, bias=True)
# conv3d
case("3d plain", (1, 2, 5, 6, 7), (3, 2, 2, 3, 3))
case("3d per-dim", (2, 2, 5, 6, 7), (3, 2, 2, 3, 3), {"padding": [1, 0, 1], "stride": [1, 2, 1], "dilation": [2, 1, 1]}, bias=True)
case("3d same", (1, 4, 4, 5, 6), (8, 4, 3, 3, 3), {"padding": "same"}, bias=True)
case("3d groups", (1, 4, 4, 5, 6), (8, 2, 3, 3, 3), {"groups": 2, "padding": 1})
case("3d depthwise", (2, 4, 4, 5, 6), (4, 1, 3, 3, 3), {"groups": 4, "padding": 1}, bias=True)
case("3d 1x1", (2, 4, 3, 4, 5), (8, 4, 1, 1, 1), bias=True)
case("3d unbatched", (4, 4, 5, 6), (8, 4, 3, 3, 3), {"padding": 1})

write("spec/fixtures/conv_cases.lua", "tools/gen_conv_fixtures.py", cases)
