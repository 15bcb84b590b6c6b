#!/usr/bin/python3
"""Writes spec/fixtures/index_cases.lua: inputs and PyTorch's results for
indexing with tensors, the shape helpers and the *_like constructors.
Run from the repository root: /usr/bin/python3 tools/gen_index_fixtures.py
(needs torch and numpy; the spec suite reads only the generated file).

Index tensors are written 1-based for nd, half of them as negative
positions (counted from the end), so both spellings are checked."""
import numpy as np
import torch
import torch.nn.functional as F
from fixture_lua import write, DT, TDT, T, lua

rng = np.random.default_rng(11)


def I(idx, n, dtype=torch.int64):
    """An index tensor (0-based torch values) as nd positions, alternating
    1-based and negative spellings along the flat order."""
    flat = idx.reshape(-1).tolist()
    out = [v + 1 if k % 2 == 0 else v - n for k, v in enumerate(flat)]
    t = torch.tensor(out, dtype=dtype).reshape(idx.shape)
    return T(t)


def data(shape, dtype="float64"):
    x = torch.tensor(rng.integers(-9, 10, size=shape)).to(TDT[dtype])
    if dtype == "bool":
        x = torch.tensor(rng.integers(0, 2, size=shape)).bool()
    return x


cases = []


def case(name, fn, args, expected, module=False):
    cases.append({"name": name, "fn": fn, "args": args, "expected": expected,
                  "module": module})


def out(r):
    if isinstance(r, (list, tuple)):
        return {"list": [T(x) for x in r]}
    if isinstance(r, torch.Tensor):
        return T(r)
    return {"number": r}


# ---- index_select ----
for dt in ["float64", "float32", "int64", "int32", "uint8", "bool"]:
    x = data((3, 4), dt)
    for dim in [0, 1]:
        n = x.shape[dim]
        idx = torch.tensor([2, 0, 0, n - 1])
        for idt in [torch.int64, torch.int32]:
            case("index_select %s dim %d %s" % (dt, dim + 1, DT[idt]), "index_select",
                 [T(x), dim + 1, I(idx, n, idt)], out(x.index_select(dim, idx)))
x = data((2, 3, 4))
case("index_select dim -1 of 3-D", "index_select", [T(x), -1, I(torch.tensor([3, 1]), 4)],
     out(x.index_select(2, torch.tensor([3, 1]))))
case("index_select empty index", "index_select", [T(x), 2, T(torch.zeros(0, dtype=torch.int64))],
     out(x.index_select(1, torch.zeros(0, dtype=torch.int64))))
xe = torch.zeros(0, 3)
case("index_select of a size-0 dim", "index_select", [T(xe), 2, I(torch.tensor([1]), 3)],
     out(xe.index_select(1, torch.tensor([1]))))

# ---- gather ----
for dt in ["float64", "int32", "bool"]:
    x = data((3, 4), dt)
    for dim in [0, 1]:
        n = x.shape[dim]
        idx = torch.tensor(rng.integers(0, n, size=(2, 3)))
        case("gather %s dim %d" % (dt, dim + 1), "gather", [T(x), dim + 1, I(idx, n)],
             out(x.gather(dim, idx)))
x = data((2, 3, 4))
idx = torch.tensor(rng.integers(0, 3, size=(2, 5, 4)))
case("gather 3-D dim 2 (index longer than the dim)", "gather", [T(x), 2, I(idx, 3)],
     out(x.gather(1, idx)))

# ---- take ----
x = data((3, 4))
idx = torch.tensor(rng.integers(0, 12, size=(2, 3)))
case("take 2-D index", "take", [T(x), I(idx, 12)], out(x.take(idx)))
case("take 0-d index", "take", [T(x), I(torch.tensor(5), 12)], out(x.take(torch.tensor(5))))

# ---- scatter_ / scatter_add_ ----
for dt in ["float64", "int64", "float32"]:
    self = data((3, 5), dt)
    idx = torch.stack([torch.tensor(rng.permutation(5)[:3]) for _ in range(2)])
    src = data((2, 4), dt)
    case("scatter_ %s dim 2" % dt, "scatter_", [T(self), 2, I(idx, 5), T(src)],
         out(self.clone().scatter_(1, idx, src)))
    case("scatter_ %s value" % dt, "scatter_", [T(self), 2, I(idx, 5), 7],
         out(self.clone().scatter_(1, idx, 7)))
    idx = torch.tensor(rng.integers(0, 3, size=(4, 5)))
    src = data((4, 5), dt)
    case("scatter_add_ %s dim 1" % dt, "scatter_add_", [T(self), 1, I(idx, 3), T(src)],
         out(self.clone().scatter_add_(0, idx, src)))
bins = torch.zeros(6)
idx = torch.tensor(rng.integers(0, 6, size=(50,)))
case("scatter_add_ as bincount", "scatter_add_", [T(bins), 1, I(idx, 6), T(torch.ones(50))],
     out(bins.clone().scatter_add_(0, idx, torch.ones(50))))

# ---- index_add_ / index_fill_ / index_copy_ ----
for dt in ["float64", "int32"]:
    self = data((5, 3), dt)
    idx = torch.tensor([0, 4, 0])
    src = data((3, 3), dt)
    case("index_add_ %s dim 1 (duplicates)" % dt, "index_add_", [T(self), 1, I(idx, 5), T(src)],
         out(self.clone().index_add_(0, idx, src)))
    case("index_add_ %s alpha 2" % dt, "index_add_", [T(self), 1, I(idx, 5), T(src), 2],
         out(self.clone().index_add_(0, idx, src, alpha=2)))
    src2 = data((5, 2), dt)
    idx2 = torch.tensor([2, 0])
    case("index_add_ %s dim 2" % dt, "index_add_", [T(self), 2, I(idx2, 3), T(src2)],
         out(self.clone().index_add_(1, idx2, src2)))
    case("index_fill_ %s dim 2" % dt, "index_fill_", [T(self), 2, I(idx2, 3), -1],
         out(self.clone().index_fill_(1, idx2, -1)))
    idx3 = torch.tensor([4, 0, 2])
    case("index_copy_ %s dim 1" % dt, "index_copy_", [T(self), 1, I(idx3, 5), T(src)],
         out(self.clone().index_copy_(0, idx3, src)))
    case("index_copy_ %s dim -1" % dt, "index_copy_", [T(self), -1, I(idx2, 3), T(src2)],
         out(self.clone().index_copy_(1, idx2, src2)))
b = data((3, 4), "bool")
case("index_fill_ bool", "index_fill_", [T(b), 1, I(torch.tensor([1]), 3), True],
     out(b.clone().index_fill_(0, torch.tensor([1]), True)))

# ---- masks ----
for dt in ["float64", "float32", "int64", "uint8", "bool"]:
    x = data((3, 4), dt)
    for mshape in [(3, 4), (4,), (3, 1), ()]:
        m = torch.tensor(rng.integers(0, 2, size=mshape)).bool()
        tag = "%s mask %s" % (dt, list(mshape))
        case("masked_select " + tag, "masked_select", [T(x), T(m)], out(x.masked_select(m)))
        v = True if dt == "bool" else 5
        case("masked_fill_ " + tag, "masked_fill_", [T(x), T(m), v],
             out(x.clone().masked_fill_(m, v)))
    m = torch.tensor(rng.integers(0, 2, size=(3, 4))).bool()
    src = data((4, 4), dt)
    case("masked_scatter_ " + dt, "masked_scatter_", [T(x), T(m), T(src)],
         out(x.clone().masked_scatter_(m, src)))
x = data((2, 3, 4))
m = x > 0
case("masked_select 3-D", "masked_select", [T(x), T(m)], out(x.masked_select(m)))

# ---- nonzero ----
for dt, shape in [("float64", (3, 4)), ("int32", (7,)), ("bool", (2, 3, 4)),
                  ("uint8", (4, 1)), ("float32", (0, 3))]:
    x = data(shape, dt)
    if dt != "bool":
        x[x.abs() < 4 if dt != "uint8" else x < 4] = 0
    r = x.nonzero() + 1
    case("nonzero %s %s" % (dt, list(shape)), "nonzero", [T(x)], out(r))
x = torch.tensor(3.0)
case("nonzero 0-d", "nonzero", [T(x)], out(x.nonzero()))

# ---- shape helpers ----
x = data((3, 4))
case("split 2 dim 2", "split", [T(x), 2, 2], out(x.split(2, 1)))
case("split sizes with a 0", "split", [T(x), [1, 0, 2]], out(x.split([1, 0, 2], 0)))
case("split 3 of 4 (last shorter)", "split", [T(x), 3, -1], out(x.split(3, 1)))
v6 = torch.arange(6)
case("chunk(4) of 6 gives 3", "chunk", [T(v6), 4], out(v6.chunk(4)))
case("chunk(3) dim 2", "chunk", [T(x), 3, 2], out(x.chunk(3, 1)))
case("unbind dim 2", "unbind", [T(x), 2], out(x.unbind(1)))
case("unbind", "unbind", [T(x)], out(x.unbind(0)))
y = data((2, 3), "int32")
for reps in [(2,), (2, 1, 2), (1, 3), (0, 2)]:
    case("tile %s" % list(reps), "tile", [T(y), list(reps)], out(y.tile(reps)))
case("tile as numbers", "tile", [T(y), 2, 2], out(y.tile((2, 2))))
case("tile 0-d", "tile", [T(torch.tensor(4.0)), 3], out(torch.tensor(4.0).tile((3,))))
case("roll 1 dim 2", "roll", [T(x), 1, 2], out(x.roll(1, 1)))
case("roll {1,-1} dims {1,2}", "roll", [T(x), [1, -1], [1, 2]], out(x.roll((1, -1), (0, 1))))
case("roll flat 5", "roll", [T(x), 5], out(x.roll(5)))
case("roll by more than the size", "roll", [T(x), -9, 1], out(x.roll(-9, 0)))
x3 = data((2, 3, 4))
for k in [-1, 0, 2]:
    case("tril k=%d" % k, "tril", [T(x), k], out(x.tril(k)))
    case("triu k=%d" % k, "triu", [T(x), k], out(x.triu(k)))
    case("tril 3-D k=%d" % k, "tril", [T(x3), k], out(x3.tril(k)))
    case("triu 3-D k=%d" % k, "triu", [T(x3), k], out(x3.triu(k)))
bb = data((3, 3), "bool")
case("tril bool", "tril", [T(bb)], out(bb.tril()))
v = data((3,), "int64")
for k in [0, 1, -2]:
    case("diag 1-D k=%d" % k, "diag", [T(v), k], out(v.diag(k)))
    case("diag 2-D k=%d" % k, "diag", [T(x), k], out(x.diag(k)))
case("trace", "trace", [T(x)], {"number": float(x.trace())})
xi = data((4, 3), "int32")
case("trace int32 (tall)", "trace", [T(xi)], {"number": int(xi.trace())})
p = data((2, 3))
for pads, val in [((1, 2), 0), ((1, -1, 0, 1), 7), ((-1, 0), 0), ((0, 0, 2, 0), -1.5)]:
    case("pad %s value %s" % (list(pads), val), "pad", [T(p), list(pads), val],
         out(F.pad(p, pads, value=val)), module=True)
pi = data((2, 2), "int64")
case("pad int64 3 dims of pads", "pad", [T(pi), [1, 0, 0, 1]], out(F.pad(pi, (1, 0, 0, 1))), module=True)
a, b = torch.arange(2), torch.arange(3) * 10
case("meshgrid ij", "meshgrid", [T(a), T(b)], out(torch.meshgrid(a, b, indexing="ij")), module=True)
c = torch.tensor(5)
case("meshgrid with a 0-d", "meshgrid", [T(a), T(c), T(b)],
     out(torch.meshgrid(a, c, b, indexing="ij")), module=True)
h1, h2 = data((2,)), data((3,))
case("hstack 1-D", "hstack", [[T(h1), T(h2)]], out(torch.hstack((h1, h2))), module=True)
m1, m2 = data((2, 1)), data((2, 3))
case("hstack 2-D", "hstack", [[T(m1), T(m2)]], out(torch.hstack((m1, m2))), module=True)
case("vstack 1-D", "vstack", [[T(h2), T(h2)]], out(torch.vstack((h2, h2))), module=True)
case("vstack mixed", "vstack", [[T(m2), T(h2)]], out(torch.vstack((m2, h2))), module=True)

write("spec/fixtures/index_cases.lua", "tools/gen_index_fixtures.py", cases)
