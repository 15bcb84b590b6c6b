#!/usr/bin/python3
"""Writes spec/fixtures/sort_cases.lua: inputs and the results NumPy and
PyTorch give for nd's sorting, scan and statistics functions. Positions
are shifted to nd's 1-based convention. Run from the repository root:
    /usr/bin/python3 tools/gen_sort_fixtures.py
The suite reads the committed file; it never needs Python."""
import math
import numpy as np
import torch

rng = np.random.default_rng(11)


def lua(v):
    if isinstance(v, (list, tuple)):
        return "{" + ", ".join(lua(x) for x in v) + "}"
    if isinstance(v, dict):
        return "{" + ", ".join("%s = %s" % (k, lua(x)) for k, x in v.items()) + "}"
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"%s"' % v
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    v = float(v)
    if math.isnan(v):
        return "0/0"
    if math.isinf(v):
        return "math.huge" if v > 0 else "-math.huge"
    if v == int(v) and abs(v) < 2 ** 53:
        return "%d.0" % int(v) if v != 0 or math.copysign(1, v) > 0 else "-0.0"
    return repr(v)


def tl(t):
    return t.tolist()


TD = {"float32": torch.float32, "float64": torch.float64, "int32": torch.int32,
      "int64": torch.int64, "uint8": torch.uint8, "bool": torch.bool}

inputs = {
    "f64": ("float64", [[3, 1, 2, 1, -math.inf], [0.5, math.nan, -2, 7, 7],
                        [4, 4, 4, -0.0, 0.0]]),
    "f32": ("float32", rng.standard_normal((4, 6)).astype(np.float32).tolist()),
    "i32": ("int32", rng.integers(-5, 5, (3, 7)).tolist()),
    "i64": ("int64", (rng.integers(-3, 4, (5, 4)) * 1000000007).tolist()),
    "u8": ("uint8", rng.integers(0, 6, (4, 5)).tolist()),
    "b": ("bool", (rng.random((3, 4)) < 0.5).tolist()),
    "fin": ("float64", rng.standard_normal((4, 5)).tolist()),
}

cases = []
for name, (dt, data) in inputs.items():
    t = torch.tensor(data, dtype=TD[dt])
    c = {"name": name, "dtype": dt, "data": data}
    nd = t.dim()
    for d in range(nd):
        for desc in (False, True):
            v, i = torch.sort(t, dim=d, descending=desc, stable=True)
            c["sort_%d_%s" % (d + 1, "desc" if desc else "asc")] = [tl(v), tl(i + 1)]
        k = min(3, t.shape[d])
        if dt != "bool":
            v, _ = torch.topk(t, k, dim=d)
            c["topk_%d" % (d + 1)] = tl(v)
            v, _ = torch.topk(t, k, dim=d, largest=False)
            c["topk_small_%d" % (d + 1)] = tl(v)
            v, _ = torch.kthvalue(t, k, dim=d)
            c["kth_%d" % (d + 1)] = [k, tl(v)]
            v, _ = torch.median(t, dim=d)
            c["median_%d" % (d + 1)] = tl(v)
        c["cumsum_%d" % (d + 1)] = tl(torch.cumsum(t, dim=d))
        cp = torch.cumprod(t, dim=d)
        if cp.double().abs().max() < 2 ** 53:  # Lua numbers hold it exactly
            c["cumprod_%d" % (d + 1)] = tl(cp)
        c["count_nonzero_%d" % (d + 1)] = tl(torch.count_nonzero(t, dim=d))
    if dt != "bool":
        c["median"] = t.median().item()
    c["count_nonzero"] = int(torch.count_nonzero(t))
    f = t.double() if dt not in ("float32", "float64") else t
    for corr in (0, 1, 2):
        c["var_%d" % corr] = f.var(dim=tuple(range(nd)), correction=corr).item()
        c["std_1_%d" % corr] = tl(f.std(dim=0, correction=corr))
        c["var_2_%d" % corr] = tl(f.var(dim=1, correction=corr))
    c["var_12"] = tl(f.var(dim=(0, 1), keepdim=True))
    c["logsumexp_1"] = tl(torch.logsumexp(f, 0))
    c["logsumexp_2"] = tl(torch.logsumexp(f, 1))
    c["logsumexp_12"] = torch.logsumexp(f, (0, 1)).item()
    for d in range(nd):
        c["softmax_%d" % (d + 1)] = tl(torch.softmax(f, d))
        c["log_softmax_%d" % (d + 1)] = tl(torch.log_softmax(f, d))
    v, n = torch.unique(t, sorted=True, return_counts=True)
    if dt in ("float32", "float64") and torch.isnan(t).any():
        pass  # NaN handling of unique is free
    else:
        c["unique"] = [tl(v), tl(n)]
    if dt != "bool":
        c["histc"] = tl(torch.histc(f.double(), bins=5)) \
            if not torch.isnan(f).any() and not torch.isinf(f).any() else None
        if not torch.isnan(f).any():  # NaN handling of histc is free
            c["histc_range"] = tl(torch.histc(f, bins=4, min=-1, max=3))
    for p in (1, 2, 3, 0.5, 0, math.inf, -math.inf):
        if dt == "bool":
            continue
        key = ("%g" % p).replace(".", "_").replace("-", "neg")
        c["norm_" + key] = [p, torch.linalg.vector_norm(f, ord=p).item(),
                            tl(torch.linalg.vector_norm(f, ord=p, dim=1))]
    cases.append(c)

# searchsorted: NumPy's side left / right, plus 1
srt = [-3.0, -1.0, -1.0, 0.0, 2.5, 2.5, 2.5, 9.0]
vals = [[-5.0, -1.0, 0.0], [2.5, 3.0, 9.0], [10.0, -3.0, 1.0]]
search = {"sorted": srt, "values": vals,
          "left": (np.searchsorted(srt, vals, "left") + 1).tolist(),
          "right": (np.searchsorted(srt, vals, "right") + 1).tolist()}
isrt = [1, 3, 3, 7]
search_int = {"sorted": isrt, "values": [0, 3, 4, 8],
              "left": (np.searchsorted(isrt, [0, 3, 4, 8], "left") + 1).tolist(),
              "right": (np.searchsorted(isrt, [0, 3, 4, 8], "right") + 1).tolist()}

# a larger float32 input: sorts of a long lane go through the radix sort
big = rng.standard_normal(3000).astype(np.float32)
big[::7] = big[3]  # ties
bt = torch.tensor(big)
bv, bi = torch.sort(bt, stable=True)
big_case = {"data": big.tolist(), "argsort": tl(bi + 1),
            "argsort_desc": tl(torch.sort(bt, descending=True, stable=True)[1] + 1),
            "median": bt.median().item(), "kth_100": torch.kthvalue(bt, 100)[0].item(),
            "topk_5": tl(torch.topk(bt, 5)[0]), "cumsum_last": float(np.cumsum(big)[-1]),
            "histc": tl(torch.histc(bt, bins=7))}

with open("spec/fixtures/sort_cases.lua", "w") as out:
    out.write("-- Generated by tools/gen_sort_fixtures.py (NumPy %s, PyTorch %s); "
              "do not edit.\n" % (np.__version__, torch.__version__))
    out.write("return {\n  cases = {\n")
    for c in cases:
        out.write("    {\n")
        for k, v in c.items():
            if v is not None:
                out.write("      %s = %s,\n" % (k, lua(v)))
        out.write("    },\n")
    out.write("  },\n  search = %s,\n  search_int = %s,\n  big = %s,\n}\n"
              % (lua(search), lua(search_int), lua(big_case)))
