#!/usr/bin/python3
"""Writes spec/fixtures/pad_count_cases.lua: inputs and the results PyTorch
and NumPy give for nd.pad's modes, nd.bincount and nd.one_hot. Run from
the repository root: /usr/bin/python3 tools/gen_pad_count_fixtures.py
(needs torch and numpy; the spec suite reads only the generated file).

pad: PyTorch's F.pad where it runs. Where nd goes further -- any rank,
any number of padded dims, integer and bool dtypes in every mode, a dim
both cropped and padded in circular mode (where PyTorch 1.13 fails) --
the oracle is NumPy's np.pad ("reflect", "edge", "wrap", "constant") of
the positive pads, then the negative ones cropped; wherever both run
they are checked to agree. Positions are nd's: one_hot takes 1-based
positions, and bincount counts the value v at Lua position v + 1."""
import numpy as np
import torch
import torch.nn.functional as F
from fixture_lua import write, TDT, T, lua

rng = np.random.default_rng(24)
NP = {"reflect": "reflect", "replicate": "edge", "circular": "wrap",
      "constant": "constant"}


def data(shape, dtype="float64", lo=-9, hi=10):
    if dtype == "bool":
        return torch.tensor(rng.integers(0, 2, size=shape)).bool()
    return torch.tensor(rng.integers(lo, hi, size=shape)).to(TDT[dtype])


cases = []


def case(name, fn, args, expected):
    # n: the argument count (a nil among them would end a Lua list)
    cases.append({"name": name, "fn": fn, "n": len(args), "args": args,
                  "expected": expected})


# ---- pad ----
def np_pad(x, pads, mode, value=0):
    """F.pad's pads (last dim first) by np.pad: the positive parts, then
    the negative ones cropped."""
    a = x.numpy()
    k = len(pads) // 2
    width = [(0, 0)] * (a.ndim - k)
    for i in range(k):
        width.append((max(pads[2 * (k - 1 - i)], 0), max(pads[2 * (k - 1 - i) + 1], 0)))
    kw = {"constant_values": value} if mode == "constant" else {}
    r = np.pad(a, width, mode=NP[mode], **kw) if width else a.copy()
    idx = [slice(None)] * (a.ndim - k)
    for i in range(k):
        l, rr = pads[2 * (k - 1 - i)], pads[2 * (k - 1 - i) + 1]
        n = r.shape[a.ndim - k + i]
        idx.append(slice(max(-l, 0), n - max(-rr, 0)))
    return torch.from_numpy(np.array(r[tuple(idx)], copy=True, order="C"))


def pad_case(name, x, pads, mode, value=None):
    args = [T(x), list(pads), mode] if mode != "constant" or value is None else [T(x), list(pads), mode, value]
    want = np_pad(x, pads, mode, 0 if value is None else value)
    mixed = any(pads[i] * pads[i + 1] < 0 for i in range(0, len(pads), 2))
    try:
        kw = {"value": value} if value is not None else {}
        got = F.pad(x, tuple(pads), mode=mode, **kw)
    except Exception:
        got = None  # beyond PyTorch 1.13: NumPy's alone
    if mode == "circular" and mixed:
        got = None  # PyTorch 1.13 fails, or returns uninitialised memory
    if got is not None:
        assert got.dtype == want.dtype and torch.equal(got, want), (name, got, want)
    case(name + ("" if got is not None else " (np.pad)"), "pad", args, T(want))


x3 = data((2, 3, 5))
x4 = data((2, 3, 4, 5))
x5 = data((1, 2, 3, 4, 3))
for mode in ["reflect", "replicate", "circular", "constant"]:
    for pads in [(2, 1), (0, 4), (4, 0), (3, -3), (-4, 3), (-2, -2), (2, -6), (-5, 0)]:
        if mode == "reflect" and max(pads) >= 5:
            continue
        if mode == "circular" and max(pads) > 5:
            continue
        pad_case("%s %s of (2,3,5)" % (mode, list(pads)), x3, pads, mode)
    pad_case("%s 2 dims" % mode, x4, (1, 2, 2, 1), mode)
    pad_case("%s 2 dims, cropping" % mode, x4, (-1, 2, 1, -2), mode)
    pad_case("%s 3 dims" % mode, x5, (1, 2, 2, 0, 1, 1), mode)
    pad_case("%s 4 dims of 4-D" % mode, x4, (1, 1, 2, 0, 1, 2, 1, 0), mode)
    pad_case("%s of 1-D" % mode, data((4,)), (3, 2), mode)
    pad_case("%s of a 0-d tensor" % mode, torch.tensor(3.5, dtype=torch.float64), (), mode)
    pad_case("%s no pads" % mode, x3, (), mode)
    pad_case("%s of an empty batch" % mode, data((0, 3)), (2, 1), mode)
    for dt in ["float32", "int32", "int64", "uint8", "bool"]:
        pad_case("%s %s" % (mode, dt), data((3, 4), dt, 0, 200), (1, 2, 2, 1), mode)
pad_case("constant value 7", x3, (1, 2), "constant", 7)
pad_case("constant value -1.5 on 2 dims", x4, (1, 0, 0, 2), "constant", -1.5)
pad_case("constant of an empty dim", data((2, 0)), (1, 2), "constant", 3)
pad_case("constant cropping past the input", x3, (-6, 1), "constant")
pad_case("replicate of 1 element", data((2, 1)), (3, 2), "replicate")
pad_case("circular by the whole size", data((2, 3)), (3, 3, 2, 2), "circular")
pad_case("reflect by size - 1", data((3, 4)), (3, 3, 2, 2), "reflect")

# ---- bincount (NumPy's) ----
for dt, hi in [("uint8", 256), ("int32", 12), ("int64", 30), ("bool", 2)]:
    x = data((40,), dt, 0, hi)
    nx = x.numpy()
    case("bincount %s" % dt, "bincount", [T(x)],
         T(torch.from_numpy(np.bincount(nx).astype(np.int64))))
    case("bincount %s minlength" % dt, "bincount", [T(x), None, hi + 3],
         T(torch.from_numpy(np.bincount(nx, minlength=hi + 3).astype(np.int64))))
    w = torch.tensor(rng.standard_normal(40))
    case("bincount %s float64 weights" % dt, "bincount", [T(x), T(w)],
         T(torch.from_numpy(np.bincount(nx, weights=w.numpy()))))
for wdt in ["float32", "int32", "bool"]:
    x = data((25,), "int64", 0, 7)
    w = (torch.tensor(rng.standard_normal(25)).float() if wdt == "float32"
         else data((25,), wdt))
    case("bincount %s weights, minlength" % wdt, "bincount", [T(x), T(w), 9],
         T(torch.from_numpy(np.bincount(x.numpy(), weights=w.numpy(), minlength=9))))
e = torch.tensor([], dtype=torch.int64)
case("bincount empty", "bincount", [T(e)], T(torch.from_numpy(np.bincount(e.numpy()).astype(np.int64))))
case("bincount empty, minlength", "bincount", [T(e), None, 4],
     T(torch.from_numpy(np.bincount(e.numpy(), minlength=4).astype(np.int64))))
# NumPy 1.24 gives int64 zeros here (its early exit skips the weights);
# nd's dtype follows from the arguments alone: float64 with weights
case("bincount empty, weights", "bincount", [T(e), T(torch.tensor([], dtype=torch.float64)), 2],
     T(torch.from_numpy(np.bincount(e.numpy(), weights=np.array([]), minlength=2).astype(np.float64))))
z = torch.zeros(5, dtype=torch.int32)
case("bincount of zeros", "bincount", [T(z)], T(torch.from_numpy(np.bincount(z.numpy()).astype(np.int64))))

# ---- one_hot (PyTorch's, 1-based positions) ----
for dt, shape, k in [("int64", (6,), 4), ("int32", (3, 4), 5), ("uint8", (2, 3, 2), 3),
                     ("int64", (), 3)]:
    i = data(shape, dt, 0, k)
    hot = F.one_hot(i.long(), k)
    case("one_hot %s %s" % (dt, list(shape)), "one_hot", [T(i + 1), k], T(hot))
    hot = F.one_hot(i.long())  # -1: the largest
    case("one_hot %s %s, classes from the largest" % (dt, list(shape)), "one_hot",
         [T(i + 1)], T(hot))
case("one_hot empty", "one_hot", [T(torch.zeros(0, 2, dtype=torch.int64)), 3],
     T(F.one_hot(torch.zeros(0, 2, dtype=torch.int64), 3)))

write("spec/fixtures/pad_count_cases.lua", "tools/gen_pad_count_fixtures.py", cases)
