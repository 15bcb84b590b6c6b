#!/usr/bin/python3
"""The fuzzer's independent reference: runs the programs of program.lua
(one JSON list per line on stdin, from `run.lua --emit json`) with NumPy
views (storage semantics, writes through views) and PyTorch's type
promotion and kernels, and prints spec/fuzz/corpus.lua: each program with
the outcome of every step. Made once and committed (make fuzz-corpus):
the suite and `make fuzz` never need Python.

Where nd's contract departs from PyTorch on purpose, nd's rule is applied
(each such place says so): floats into integers truncate and saturate;
exp of an integer gives float64; all/any give bool; integer and bool
matmul work; abs of bool is the identity; an empty tensor may be written
whatever its strides."""
import json
import math
import sys

import numpy as np
import torch

NP = {"bool": np.bool_, "uint8": np.uint8, "int8": np.int8,
      "int16": np.int16, "int32": np.int32, "int64": np.int64,
      "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
      "float32": np.float32, "float64": np.float64}
TORCH = {"bool": torch.bool, "uint8": torch.uint8, "int8": torch.int8,
         "int16": torch.int16, "int32": torch.int32, "int64": torch.int64,
         "float32": torch.float32, "float64": torch.float64}
NAME = {np.dtype(v): k for k, v in NP.items()}
TNAME = {v: k for k, v in TORCH.items()}
# PyTorch 1.13 has no uint16, uint32 or uint64: steps on them run in NumPy
# (wrapping as nd does), with nd's promotion: PyTorch's categories (dims,
# 0-d, Lua numbers), NumPy's table for the pairs with these dtypes.
WIDE_U = {np.dtype(np.uint16), np.dtype(np.uint32), np.dtype(np.uint64)}


def promote_types(x, y):
    x, y = np.dtype(x), np.dtype(y)
    if x in WIDE_U or y in WIDE_U:
        return np.promote_types(x, y)
    return np.dtype(NP[TNAME[torch.promote_types(TORCH[NAME[x]], TORCH[NAME[y]])]])


def kind_rank(dt):
    dt = np.dtype(dt)
    return 2 if dt.kind == "f" else 0 if dt == np.bool_ else 1


def result_type(a, b):
    """nd_common_type (src/core/shape/promote.c) of a and b (a Lua integer
    is an int64 weak scalar)."""
    cats = {}
    for c, dt in ((2 if a.ndim else 1, a.dtype),
                  (0, np.dtype(np.int64)) if isinstance(b, int) else (2 if b.ndim else 1, b.dtype)):
        cats[c] = dt if c not in cats else promote_types(cats[c], dt)

    def combine(h, l):
        if h is None:
            return l
        if l is None or h.kind == "f":
            return h
        if h == np.bool_ or kind_rank(l) > kind_rank(h):
            return promote_types(h, l)
        return h
    return combine(cats.get(2), combine(cats.get(1), cats.get(0)))


def wide(*arrays):
    return any(isinstance(x, np.ndarray) and x.dtype in WIDE_U for x in arrays)


class Invalid(Exception):
    pass


def pos(p, n):
    """nd's 1-based position (negative from the end) as 0-based."""
    if p == 0 or p > n or p < -n:
        raise Invalid("position %d of %d" % (p, n))
    return p - 1 if p > 0 else n + p


def dim0(p, n):
    """A dim; a 0-d tensor takes 1 and -1 (PyTorch's 0 and -1): None."""
    if n == 0 and p in (1, -1):
        return None
    return pos(p, n)


def cast(a, dt):
    """nd's conversion: floats into integers truncate and saturate."""
    a = np.asarray(a)
    t = np.dtype(NP[dt])
    if a.dtype.kind == "f" and t.kind in "iu":
        info = np.iinfo(t)
        a = np.nan_to_num(np.trunc(a), nan=0.0)
        a = np.clip(a, float(info.min), float(info.max))
        # clip to the float nearest the bounds, then exact in int64
        top = 2.0 ** 64 if t == np.uint64 else 2.0 ** 63
        return np.where(a >= top, info.max, a).astype(t)
    return a.astype(t)


def written(values, dt):
    """A Lua number written into a tensor (nd.tensor, fill_) must be a
    value of the dtype (nd_scalar_fits, PyTorch's rule): else nd raises."""
    a = np.asarray(values, dtype=np.int64)
    t = np.dtype(NP[dt])
    if t.kind in "iu" and a.size:
        info = np.iinfo(t)
        if a.min() < info.min or a.max() > info.max:
            raise Invalid("value out of range for " + dt)
    return a


def tt(a):
    return torch.from_numpy(np.array(a, copy=True, order="C"))


def back(t):
    return t.numpy()


def expand(a, size):
    lead = len(size) - a.ndim
    if lead < 0:
        raise Invalid("expand rank")
    strides = []
    for i, s in enumerate(size):
        j = i - lead
        if j < 0:
            strides.append(0)
        elif a.shape[j] == s:
            strides.append(a.strides[j])
        elif a.shape[j] == 1:
            strides.append(0)
        else:
            raise Invalid("expand")
    return np.lib.stride_tricks.as_strided(a, tuple(size), tuple(strides),
                                           writeable=True)


def check_writable(a):
    if a.size == 0:  # nd and PyTorch: nothing to write
        return
    for n, s in zip(a.shape, a.strides):
        if n > 1 and s == 0:
            raise Invalid("overlap")


def operand(b, vars_):
    if isinstance(b, dict):
        return b["num"]
    return vars_[b]


def binary(op, a, b):
    if wide(a, b):
        if op == "sub" and (a.dtype == np.bool_ or (not isinstance(b, int) and b.dtype == np.bool_)):
            raise Invalid("sub of bool")
        rdt = result_type(a, b)
        x, y = a.astype(rdt), np.asarray(b).astype(rdt)
        f = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum,
             "minimum": np.minimum, "eq": np.equal, "lt": np.less}[op]
        return f(x, y)
    ta = tt(a)
    tb = b if isinstance(b, int) else tt(b)
    if op in ("maximum", "minimum"):
        rdt = torch.result_type(ta, tb)
        if not isinstance(tb, torch.Tensor):
            tb = torch.tensor(tb, dtype=rdt)
        return back(getattr(torch, op)(ta.to(rdt), tb.to(rdt)))
    return back(getattr(torch, op)(ta, tb))


def unary(op, a):
    if op == "abs" and a.dtype == np.bool_:
        return a.copy()  # nd: identity
    if wide(a):
        if op == "exp":
            return np.exp(a.astype(np.float64))
        return a.copy() if op == "abs" else np.negative(a)
    ta = tt(a)
    if op == "exp" and not ta.is_floating_point():
        ta = ta.to(torch.float64)  # nd: float64 is the default float
    return back(getattr(torch, op)(ta))


def reduce(op, a, d, keep):
    if wide(a):
        if d is None:  # 0-d, over "its" dim
            a, d, keep = a.reshape(1), 0, False
        if op == "sum":  # nd: uint64 sums in uint64, the others in int64
            return np.sum(a, d, dtype=np.uint64 if a.dtype == np.uint64 else np.int64, keepdims=keep)
        if op == "maxv":
            return np.max(a, d, keepdims=keep)
        if op == "maxi":
            return np.expand_dims(np.argmax(a, d), d) + 1 if keep else np.argmax(a, d) + 1
        return getattr(np, op)(a, d, keepdims=keep)
    ta = tt(a)
    if d is None:  # 0-d, over "its" dim
        d = 0
    if op == "sum":
        return back(torch.sum(ta, d, keepdim=keep))
    if op in ("maxv", "maxi"):
        v, i = torch.max(ta, d, keepdim=keep)
        return back(v) if op == "maxv" else back(i) + 1
    r = getattr(torch, op)(ta, d, keepdim=keep)
    return back(r.to(torch.bool))  # nd: all/any give bool


def matmul(a, b):
    if a.ndim == 0 or b.ndim == 0:
        raise Invalid("matmul of 0-d")
    rdt = NAME[result_type(a, b)] if wide(a, b) else TNAME[torch.result_type(tt(a), tt(b))]
    x, y = cast(a, rdt), cast(b, rdt)
    if rdt == "bool":  # nd: or of ands
        return np.matmul(x.astype(np.int64), y.astype(np.int64)) != 0
    try:
        return np.matmul(x, y)
    except ValueError as e:
        raise Invalid(str(e))


def step(s, vars_):
    k = s["kind"]
    a = vars_.get(s.get("a"))
    if k == "tensor":
        return cast(written(s["values"], s["dtype"]), s["dtype"]).reshape(s["shape"])
    n = a.ndim
    if k == "transpose":
        d1, d2 = dim0(s["d1"], n), dim0(s["d2"], n)
        return a[...] if n == 0 else np.swapaxes(a, d1, d2)
    if k == "narrow":
        d = pos(s["d"], n)
        size = a.shape[d]
        st = s["start"] + size + 1 if s["start"] < 0 else s["start"]
        if s["start"] == 0 or st < 1 or st > size + 1 or s["len"] < 0 or st - 1 + s["len"] > size:
            raise Invalid("narrow")
        return a[(slice(None),) * d + (slice(st - 1, st - 1 + s["len"]), Ellipsis)]
    if k == "select":
        d = pos(s["d"], n)
        i = pos(s["i"], a.shape[d])
        return a[(slice(None),) * d + (i, Ellipsis)]
    if k == "slice":
        d, first, last, stp = s["d"], s["first"], s["last"], s["step"]
        if d > n or stp == 0:
            raise Invalid("slice")
        size = a.shape[d - 1]
        if first == 0 or first > size + 1 or first < -size - 1:
            raise Invalid("bound")
        if last > size + 1 or last < -size - 1 or (last == 0 and not (first == 1 and stp > 0)):
            raise Invalid("bound")
        f = first - 1 if first > 0 else size + first
        l = -1 if last == 0 else (last - 1 if last > 0 else size + last)
        span = l - f if stp > 0 else f - l
        count = 0 if span < 0 else span // abs(stp) + 1
        if count > 0 and (f < 0 or f >= size or l < 0 or l >= size):
            raise Invalid("bound")
        if count == 0 and (f < 0 or f > size or l < -1 or l >= size):
            raise Invalid("bound")
        if count == 0:
            sl = slice(0, 0)
        else:
            stop = f + stp * (count - 1) + (1 if stp > 0 else -1)
            sl = slice(f, None if stop < 0 else stop, stp)
        return a[(slice(None),) * (d - 1) + (sl, Ellipsis)]
    if k == "flip":
        d = dim0(s["d"], n)
        return a[...] if d is None else np.flip(a, d)
    if k == "expand":
        return expand(a, s["size"])
    if k == "unsqueeze":
        return np.expand_dims(a, pos(s["d"], n + 1))
    if k == "squeeze":
        d = dim0(s["d"], n)
        if d is None or a.shape[d] != 1:
            return a[...]
        return np.squeeze(a, d)
    if k == "permute":
        perm = s["perm"]
        if len(perm) != n:
            raise Invalid("permute")
        p = [pos(x, n) for x in perm]
        if len(set(p)) != n:
            raise Invalid("permute repeats")
        return np.transpose(a, p)
    if k == "clone":
        return a.copy()
    if k == "binary":
        return binary(s["op"], a, operand(s["b"], vars_))
    if k == "unary":
        return unary(s["op"], a)
    if k == "reduce":
        return reduce(s["op"], a, dim0(s["d"], n), s["keep"])
    if k == "matmul":
        return matmul(a, vars_[s["b"]])
    if k == "fill":
        check_writable(a)
        a[...] = cast(written(s["value"], NAME[a.dtype]), NAME[a.dtype])
        return True
    if k == "copy":
        check_writable(a)
        b = vars_[s["b"]]
        try:
            src = np.broadcast_to(b, a.shape)
        except ValueError as e:
            raise Invalid(str(e))
        a[...] = cast(src.copy(), NAME[a.dtype])
        return True
    if k == "add_":
        check_writable(a)
        b = operand(s["b"], vars_)
        r = binary("add", a, b)
        if r.shape != a.shape:
            raise Invalid("in-place op would grow")
        if wide(a, r):  # nd_can_cast: no float into an integer, nothing into bool
            kf, kt = kind_rank(r.dtype), kind_rank(a.dtype)
            if not (kf <= kt or kf == kt == 1):
                raise Invalid("cast")
        elif not torch.can_cast(TORCH[NAME[r.dtype]], TORCH[NAME[a.dtype]]):
            raise Invalid("cast")
        a[...] = cast(r, NAME[a.dtype])
        return True
    raise ValueError("unknown step kind " + k)


def num(v):
    v = float(v)
    if math.isnan(v):
        return "0/0"
    if math.isinf(v):
        return "math.huge" if v > 0 else "-math.huge"
    return repr(int(v)) if v == int(v) and abs(v) < 2 ** 53 else repr(v)


def lua(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return num(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "{" + ", ".join(lua(x) for x in v) + "}"
    if isinstance(v, dict):
        return "{" + ", ".join("%s = %s" % (k if k.isidentifier() else "[%s]" % k, lua(x))
                               for k, x in sorted(v.items(), key=lambda kv: str(kv[0]))) + "}"
    raise TypeError(type(v))


def values(a):
    return [float(x) for x in np.asarray(a).reshape(-1).tolist()]


def evaluate(prog):
    vars_, steps, final = {}, [], {}
    for i, s in enumerate(prog, 1):
        deps = [s.get("a")] + ([s["b"]] if isinstance(s.get("b"), int) else [])
        if any(d is not None and d not in vars_ for d in deps):
            steps.append({"skipped": True})
            continue
        try:
            with np.errstate(all="ignore"):
                r = step(s, vars_)
        except (Invalid, RuntimeError, ValueError, IndexError, TypeError) as e:
            steps.append({"err": True})
            continue
        if r is True:
            steps.append({"ok": True})
        else:
            r = np.asarray(r)
            vars_[i] = r
            steps.append({"dtype": NAME[r.dtype], "size": list(r.shape), "values": values(r)})
    for i, r in vars_.items():
        final[i] = values(r)
    return {"steps": steps, "final": final}


def main():
    print("-- Made by spec/fuzz/numpy_eval.py (NumPy %s, PyTorch %s) from "
          "`run.lua --emit json %s`; do not edit." % (np.__version__, torch.__version__,
                                                     " ".join(sys.argv[1:])))
    # One function per case: LuaJIT allows 65536 constants per function.
    print("local cases = {}")
    for line in sys.stdin:
        prog = json.loads(line)
        for s in prog:  # JSON objects for the step lists' empty tables
            for key in ("shape", "values", "size", "perm"):
                if key in s and s[key] == {}:
                    s[key] = []
        out = evaluate(prog)
        final = "{" + ", ".join("[%d] = %s" % (i, lua(v)) for i, v in sorted(out["final"].items())) + "}"
        print("cases[#cases + 1] = function() return { prog = %s,\n  expect = { steps = %s, final = %s } } end" % (
            lua(prog), lua(out["steps"]), final))
    print("return cases")


if __name__ == "__main__":
    main()
