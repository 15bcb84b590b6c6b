#!/usr/bin/python3
"""Writes spec/fixtures/filter_cases.lua: inputs and the results NumPy
1.24 (np.convolve, np.correlate), SciPy 1.10 (scipy.signal.convolve2d,
correlate2d) and PyTorch 1.13 (F.interpolate) give, for nd.convolve,
nd.correlate, nd.convolve2d, nd.correlate2d and nd.interpolate. Run from
the repository root: /usr/bin/python3 tools/gen_filter_fixtures.py (the
spec suite reads only the generated file).

Each case: fn, args (tensor specs, then the other arguments, n of them),
expected (a tensor spec) and tol (0: exact, for integer results; else the
relative tolerance of float results, whose sums nd orders differently).
nd's dtype for mixed operands is its own promotion (PyTorch's table), so
the oracles get both operands converted to it first."""
import numpy as np
import torch
import torch.nn.functional as F
import scipy.signal as ss
from fixture_lua import write, DT, TDT
from fixture_lua import T as T_


def T(t):
    """A tensor spec, float values cut to the digits the tolerances need
    (the file stays small)."""
    spec = T_(t)
    if t.dtype.is_floating_point:
        fmt = "%.9g" if t.dtype == torch.float32 else "%.13g"
        spec["t"] = np.vectorize(lambda v: float(fmt % v))(t.numpy()).tolist() \
            if t.dim() else float(fmt % t.item())
    return spec

rng = np.random.default_rng(2024)
cases = []


def case(name, fn, args, expected, tol):
    cases.append({"name": name, "fn": fn, "n": len(args), "args": args,
                  "expected": expected, "tol": tol})


def data(shape, dtype="float64", lo=-9, hi=10):
    if dtype.startswith("float"):  # multiples of 1/64: exact, short
        return torch.tensor(rng.integers(-512, 512, size=shape) / 64).to(TDT[dtype])
    return torch.tensor(rng.integers(lo, hi, size=shape)).to(TDT[dtype])


def tol_of(dt):
    return {"float32": 2e-5, "float64": 1e-10}.get(dt, 0)


def promote(a, b):
    return DT[torch.promote_types(a.dtype, b.dtype)]


# ---- 1-D: NumPy ----
MODES = ["full", "same", "valid"]
for fn, npf, default in [("convolve", np.convolve, "full"),
                         ("correlate", np.correlate, "valid")]:
    for n1, n2 in [(10, 3), (10, 4), (7, 7), (3, 8), (4, 9), (1, 1), (1, 5),
                   (6, 1), (50, 31), (2, 2)]:
        for dt in ["float64", "float32", "int64"]:
            a, v = data((n1,), dt), data((n2,), dt)
            for mode in MODES + [None]:
                want = npf(a.numpy(), v.numpy(), mode or default)
                args = [T(a), T(v)] + ([mode] if mode else [])
                case("%s %s %d x %d %s" % (fn, dt, n1, n2, mode or "(default)"),
                     fn, args, T(torch.from_numpy(np.ascontiguousarray(want))), tol_of(dt))
    for da, dv in [("int32", "float32"), ("uint8", "int32"), ("int32", "int64"),
                   ("float32", "float64"), ("uint8", "uint8")]:
        a, v = data((9,), da, 0, 200), data((4,), dv, 0, 200)
        dt = promote(a, v)
        want = npf(a.to(TDT[dt]).numpy(), v.to(TDT[dt]).numpy(), "same")
        case("%s %s with %s (same)" % (fn, da, dv), fn, [T(a), T(v), "same"],
             T(torch.from_numpy(np.ascontiguousarray(want))), tol_of(dt))
    # a wrapping integer sum (NumPy's, in the result's dtype)
    a = torch.tensor([200, 250, 255, 7], dtype=torch.uint8)
    v = torch.tensor([3, 255], dtype=torch.uint8)
    case("%s uint8 wraps" % fn, fn, [T(a), T(v), "full"],
         T(torch.from_numpy(npf(a.numpy(), v.numpy(), "full"))), 0)
    a = torch.tensor([2**31 - 1, 5], dtype=torch.int32)
    case("%s int32 wraps" % fn, fn, [T(a), T(a), "full"],
         T(torch.from_numpy(npf(a.numpy(), a.numpy(), "full"))), 0)

# ---- 2-D: SciPy ----
BOUNDS = ["fill", "wrap", "symm"]
shapes = [((6, 7), (3, 3)), ((6, 7), (2, 4)), ((5, 5), (4, 3)), ((8, 3), (3, 5)),
          ((3, 4), (5, 6)), ((2, 3), (4, 5)), ((1, 1), (1, 1)), ((4, 4), (4, 4)),
          ((9, 10), (5, 5)), ((1, 6), (1, 3)), ((5, 1), (2, 1))]
for fn, spf in [("convolve2d", ss.convolve2d), ("correlate2d", ss.correlate2d)]:
    for sa, sk in shapes:
        for dt in ["float64", "float32", "int32"]:
            a, k = data(sa, dt), data(sk, dt)
            for mode in MODES:
                for bd in BOUNDS:
                    ok1 = all(x >= y for x, y in zip(sa, sk))
                    ok2 = all(y >= x for x, y in zip(sa, sk))
                    if mode == "valid" and not (ok1 or ok2):
                        continue
                    if bd != "fill" and dt != "float64":
                        continue
                    want = spf(a.numpy(), k.numpy(), mode, bd)
                    case("%s %s %s x %s %s %s" % (fn, dt, sa, sk, mode, bd), fn,
                         [T(a), T(k), mode, bd],
                         T(torch.from_numpy(np.ascontiguousarray(want))), tol_of(dt))
    a, k = data((5, 6)), data((3, 2))
    case("%s defaults" % fn, fn, [T(a), T(k)],
         T(torch.from_numpy(spf(a.numpy(), k.numpy()))), 1e-10)
    for fill in [2.5, -1]:
        for mode in MODES:
            want = spf(a.numpy(), k.numpy(), mode, "fill", fill)
            case("%s fill %s %s" % (fn, fill, mode), fn, [T(a), T(k), mode, "fill", fill],
                 T(torch.from_numpy(np.ascontiguousarray(want))), 1e-10)
    ai, ki = data((4, 5), "int32"), data((2, 3), "int32")
    case("%s int32 fill 7" % fn, fn, [T(ai), T(ki), "same", "fill", 7],
         T(torch.from_numpy(spf(ai.numpy(), ki.numpy(), "same", "fill", 7))), 0)
    for da, dk in [("uint8", "float32"), ("int32", "float64"), ("uint8", "int64")]:
        a, k = data((5, 6), da, 0, 200), data((3, 3), dk, 0, 200)
        dt = promote(a, k)
        want = spf(a.to(TDT[dt]).numpy(), k.to(TDT[dt]).numpy(), "same")
        case("%s %s with %s" % (fn, da, dk), fn, [T(a), T(k), "same"],
             T(torch.from_numpy(np.ascontiguousarray(want))), tol_of(dt))
    # kernels bigger than the input: boundaries repeat (wrap) and mirror (symm)
    a, k = data((2, 3)), data((7, 8))
    for bd in ["wrap", "symm"]:
        for mode in ["full", "same"]:
            want = spf(a.numpy(), k.numpy(), mode, bd)
            case("%s kernel much larger %s %s" % (fn, mode, bd), fn, [T(a), T(k), mode, bd],
                 T(torch.from_numpy(np.ascontiguousarray(want))), 1e-10)
    a = torch.tensor([[250, 3], [7, 255]], dtype=torch.uint8)
    case("%s uint8 wraps" % fn, fn, [T(a), T(a)],
         T(torch.from_numpy(spf(a.numpy(), a.numpy()))), 0)

# ---- interpolate: PyTorch ----
def interp(name, x, opts, mode=None, align=None):
    kw = dict(opts)
    if mode:
        kw["mode"] = mode
    if align is not None:
        kw["align_corners"] = align
    want = F.interpolate(x, **kw)
    args = [T(x), opts] + ([mode] if mode or align is not None else []) + \
        ([align] if align is not None else [])
    if mode is None and align is not None:
        args[2] = "nearest"
    case("interpolate " + name, "interpolate", args, T(want.contiguous()),
         tol_of(DT[x.dtype]) * 10)


for dt in ["float32", "float64"]:
    x3 = data((2, 2, 7), dt)
    x4 = data((1, 2, 5, 6), dt)
    for mode, x, aligns in [("nearest", x3, [None]), ("linear", x3, [None, False, True]),
                            ("area", x3, [None]), ("nearest", x4, [None]),
                            ("bilinear", x4, [None, False, True]),
                            ("bicubic", x4, [None, False, True]), ("area", x4, [None])]:
        sp = x.dim() - 2
        for opts in ([{"size": 7}, {"size": 3}, {"size": 1}, {"scale_factor": 2},
                      {"scale_factor": 1.7}, {"scale_factor": 0.5}, {"scale_factor": 0.3}] +
                     ([{"size": [8, 4]}, {"size": [3, 11]}, {"scale_factor": [1.5, 0.75]},
                       {"scale_factor": [2.5, 1]}] if sp == 2 else
                      [{"size": [9]}, {"scale_factor": 3}, {"size": 14}])):
            for al in aligns:
                interp("%s %s %s %s align %s" % (mode, dt, list(x.shape), opts, al),
                       x, opts, mode, al)
    interp("default mode %s" % dt, x4, {"size": [7, 9]})

write("spec/fixtures/filter_cases.lua", "tools/gen_filter_fixtures.py", cases)
