/* Constructors that compute their values: arange, linspace, eye. */
#include "core.h"
#include <math.h>
#include <stdio.h>

static int is_int64(double v) {
  return v == floor(v) && v >= -0x1p63 && v < 0x1p63;
}

nd_status nd_arange(nd_err *e, nd_tensor *out, int dtype, double start,
                    double stop, double step) {
  memset(out, 0, sizeof *out);
  if (nd_check_dtype(e, "arange", dtype)) return e->code;
  if (step == 0 || !isfinite(start) || !isfinite(stop) || !isfinite(step))
    return nd_fail(e, ND_EINVAL,
                   "arange: start %g, stop %g and step %g must be finite "
                   "with a nonzero step", start, stop, step);
  double nf = ceil((stop - start) / step);
  if (nf < 0) nf = 0;
  if (nf > 0x1p62)
    return nd_fail(e, ND_EOVERFLOW, "arange: %g elements are too many", nf);
  int64_t n = (int64_t)nf;
  if (nd_alloc_tensor(e, out, dtype, 1, &n, false)) return nd_err_name(e, "arange");
  /* Integral start and step into an integer dtype: exact int64 arithmetic
   * (beyond 2^53 too); otherwise doubles, converted as PyTorch does
   * (arange(0, 2.5, 0.5, int64) is {0, 0, 1, 1, 2}). */
  nd_tensor buf;
  int integral = nd_dtype_kind(dtype) != 'f' && is_int64(start) &&
                 is_int64(step);
  if (nd_alloc_tensor(e, &buf, integral ? ND_INT64 : ND_FLOAT64, 1, &n,
                      false)) {
    nd_release(out);
    return nd_err_name(e, "arange");
  }
  if (integral) { /* unsigned: wraps instead of UB; values lie before stop */
    int64_t *p = nd_data(&buf);
    uint64_t s0 = (uint64_t)(int64_t)start, st = (uint64_t)(int64_t)step;
    for (int64_t i = 0; i < n; i++) p[i] = (int64_t)(s0 + (uint64_t)i * st);
  } else {
    double *p = nd_data(&buf);
    for (int64_t i = 0; i < n; i++) p[i] = start + (double)i * step;
  }
  nd_copy(e, out, &buf);
  nd_release(&buf);
  return ND_OK;
}

nd_status nd_linspace(nd_err *e, nd_tensor *out, int dtype, double a,
                      double b, int64_t n) {
  if (n < 0)
    return nd_fail(e, ND_EINVAL, "linspace: negative count %lld",
                   (long long)n);
  memset(out, 0, sizeof *out);
  if (nd_check_dtype(e, "linspace", dtype)) return e->code;
  if (!isfinite(a) || !isfinite(b))
    return nd_fail(e, ND_EINVAL, "linspace: start %g and end %g must be "
                   "finite", a, b);
  nd_tensor buf;
  if (nd_alloc_tensor(e, &buf, ND_FLOAT64, 1, &n, false))
    return nd_err_name(e, "linspace");
  double *p = nd_data(&buf), step = n > 1 ? (b - a) / (double)(n - 1) : 0;
  /* Symmetric from both ends, as PyTorch does, so the last value is b
   * (and a single value is a). */
  for (int64_t i = 0; i < n; i++)
    p[i] = i < n / 2 || n == 1 ? a + step * (double)i
                               : b - step * (double)(n - 1 - i);
  nd_status st = nd_to_dtype(e, out, &buf, dtype);
  nd_release(&buf);
  return st ? nd_err_name(e, "linspace") : ND_OK;
}

nd_status nd_eye(nd_err *e, nd_tensor *out, int dtype, int64_t n, int64_t m) {
  int64_t size[2] = {n, m};
  if (n < 0 || m < 0)
    return nd_fail(e, ND_EINVAL, "eye: negative size %lld x %lld",
                   (long long)n, (long long)m);
  memset(out, 0, sizeof *out);
  if (nd_zeros(e, out, dtype, 2, size)) return nd_err_name(e, "eye");
  nd_tensor d;
  nd_diagonal(e, &d, out, 0, 0, 1);
  nd_fill(e, &d, 1);
  nd_release(&d);
  return ND_OK;
}
