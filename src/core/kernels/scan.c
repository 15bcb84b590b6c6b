/* Inclusive scans: cumsum and cumprod along one dim. The input is read
 * compact and row-major (a view is copied first), seen as (outer, n,
 * inner); the result, also row-major, is its own running accumulator, so
 * memory is walked in order whatever the dim. Floats keep their dtype and
 * accumulate in it (as NumPy and PyTorch do); integers and bool give int64
 * (uint64 stays uint64, as sum) and wrap. */
#ifndef __clang__ /* clang vectorises these loops at -O2 already */
#pragma GCC optimize("O3")
#endif
#include "kernels.h"

#define OUTT(T) __typeof__(_Generic((T)0, float: (float)0, double: (double)0, default: (uint64_t)0))

#define SCAN(E, name, T, kind)                                              \
  static void scan_##E(const char *src, char *dst, int64_t outer, int64_t n, \
                       int64_t inner, int prod) {                           \
    typedef OUTT(T) A;                                                      \
    const T *x = (const T *)src;                                            \
    A *o = (A *)dst;                                                        \
    for (int64_t b = 0; b < outer; b++, x += n * inner, o += n * inner) {   \
      if (inner == 1) {                                                     \
        A acc = prod ? (A)1 : (A)0;                                         \
        if (prod)                                                           \
          for (int64_t i = 0; i < n; i++) o[i] = acc = acc * (A)x[i];       \
        else                                                                \
          for (int64_t i = 0; i < n; i++) o[i] = acc = acc + (A)x[i];       \
        continue;                                                           \
      }                                                                     \
      for (int64_t j = 0; j < inner; j++) o[j] = (A)x[j];                   \
      for (int64_t i = 1; i < n; i++) {                                     \
        A *oi = o + i * inner, *op = oi - inner;                            \
        const T *xi = x + i * inner;                                        \
        if (prod)                                                           \
          for (int64_t j = 0; j < inner; j++) oi[j] = op[j] * (A)xi[j];     \
        else                                                                \
          for (int64_t j = 0; j < inner; j++) oi[j] = op[j] + (A)xi[j];     \
      }                                                                     \
    }                                                                       \
  }
ND_NATIVE_DTYPES(SCAN)
typedef void (*scan_fn)(const char *, char *, int64_t, int64_t, int64_t, int);
#define FNS(E, name, T, kind) [ND_##E] = scan_##E,
static const scan_fn scans[ND_NDTYPES] = {ND_NATIVE_DTYPES(FNS)};

static nd_status scan(nd_err *e, nd_tensor *out, const nd_tensor *t, int dim,
                      int prod) {
  if (nd_is_half(t->dtype)) { /* in float32 (half_adapt.c) */
    nd_tensor w_ = ND_UNSET, r_ = ND_UNSET;
    if (nd_half_widen(e, prod ? "cumprod" : "cumsum", &w_, t)) return e->code;
    nd_status s_ = scan(e, &r_, &w_, dim, prod);
    nd_release(&w_);
    return s_ ? s_ : nd_half_narrow(e, prod ? "cumprod" : "cumsum", out, &r_, t->dtype);
  }
  const char *fn = prod ? "cumprod" : "cumsum";
  if (t->ndim == 0 && (dim == 0 || dim == -1)) dim = 0;
  else {
    if (dim < 0) dim += t->ndim;
    if (nd_check_dim(e, fn, dim, t->ndim)) return e->code;
  }
  int od = nd_dtype_kind(t->dtype) == 'f' || t->dtype == ND_UINT64
               ? t->dtype : ND_INT64;
  nd_tensor c = ND_UNSET;
  if (nd_alloc_tensor(e, out, od, t->ndim, t->size, false))
    return nd_err_name(e, fn);
  if (nd_numel(t) == 0) return ND_OK;
  if (nd_contiguous(e, &c, t)) {
    nd_release(out);
    return e->code;
  }
  int64_t outer = 1, inner = 1, n = t->ndim ? t->size[dim] : 1;
  for (int i = 0; i < t->ndim; i++) {
    if (i < dim) outer *= t->size[i];
    if (i > dim) inner *= t->size[i];
  }
  scans[t->dtype](nd_ptr(&c), nd_data(out), outer, n, inner, prod);
  nd_release(&c);
  return ND_OK;
}

nd_status nd_cumsum(nd_err *e, nd_tensor *out, const nd_tensor *t, int dim) {
  return scan(e, out, t, dim, 0);
}
nd_status nd_cumprod(nd_err *e, nd_tensor *out, const nd_tensor *t, int dim) {
  return scan(e, out, t, dim, 1);
}
