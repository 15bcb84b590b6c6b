"""float16 / bfloat16 rounding for the fixture generators: a Python int or
float rounded to nearest-even into either, exactly (Fraction's round is
half to even), overflowing to inf. Checked on import against NumPy's
float16 and PyTorch's bfloat16 where their float32 needs no second
rounding."""
import math
from fractions import Fraction

# (significand bits after the point, least normal exponent, greatest
# exponent)
FMT = {"float16": (10, -14, 15), "bfloat16": (7, -126, 127)}


def half_round(v, d):
    if isinstance(v, bool):
        v = int(v)
    if not isinstance(v, int):
        v = float(v)
        if v != v or math.isinf(v) or v == 0:
            return v
    if v == 0:
        return 0.0
    frac, emin, emax = FMT[d]
    f = Fraction(v)
    neg, f = f < 0, abs(f)
    e = f.numerator.bit_length() - f.denominator.bit_length()
    if Fraction(2) ** e > f:
        e -= 1
    q = Fraction(2) ** (max(e, emin) - frac)
    r = round(f / q) * q
    r = math.inf if r >= Fraction(2) ** (emax + 1) else float(r)
    return -r if neg else r


def _check():
    import warnings
    warnings.simplefilter("ignore")
    import numpy as np
    import torch
    x = np.array([0.1, 1 / 3, 65519.0, 65520.0, 1e-8, 2.0**-25, 3e-5, 1e38,
                  -2.5, 1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11, 1e-40],
                 dtype=np.float32)
    want16 = x.astype(np.float16).astype(np.float32).tolist()
    wantbf = torch.from_numpy(x).to(torch.bfloat16).float().numpy().tolist()
    for v, a, b in zip(x.tolist(), want16, wantbf):
        assert half_round(v, "float16") == a, (v, a)
        assert half_round(v, "bfloat16") == b, (v, b)


_check()
