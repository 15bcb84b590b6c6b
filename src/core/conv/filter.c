/* Signal-style filtering: NumPy's convolve/correlate (1-D) and SciPy's
 * convolve2d/correlate2d. Every case is one correlation of a padded copy
 * of the input with taps in correlation order (a convolution's flipped):
 * the input is converted once into a scratch image of the work type
 * (float32, float64, or int64 summed as uint64, so integer sums wrap as
 * NumPy's and SciPy's do in the result's dtype), its border made by the
 * boundary rule, so the inner loop has no bounds: per tap, an axpy of a
 * shifted input row into a block of output row that stays in L1. What
 * differs between the four functions is only which input is the image,
 * the taps' order, where tap 0 sits, and whether the result is written
 * reversed (the rules below, from NumPy 1.24 and SciPy 1.10). */
#ifndef __clang__ /* the axpy loops vectorise at O3 */
#pragma GCC optimize("O3")
#endif
#include "kernels.h"

#define KERNEL ND_CLONES("avx512f", "avx2", "default")

enum { BLOCK = 1024 }; /* output elements per accumulator block */

typedef struct plan {
  int64_t rows, cols;  /* the result's */
  const char *x;       /* padded input, work type, row-major */
  int64_t ld;          /* its row length */
  const char *h;       /* taps, P x Q, work type, correlation order */
  int64_t P, Q;
  int64_t r0, c0;      /* x's position under tap (0,0) for output (0,0) */
  char *o;             /* output (0,0) */
  int64_t os0, os1;    /* output strides, bytes */
  int64_t nblk;        /* column blocks per row */
} plan;

/* The work type of a result dtype. */
static int work_dtype(int dt) {
  return nd_dtype_kind(dt) == 'f' ? dt : ND_INT64;
}

#define WORK(T) __typeof__(_Generic((T)0, float: 0.0f, double: 0.0, default: (uint64_t)0))
#define STORE(T) __typeof__(_Generic((T)0, float: 0.0f, double: 0.0, default: (int64_t)0))
/* Items are (row, column block) pairs, row-major. */
#define ROWS(E, name, T, kind)                                              \
  KERNEL static void rows_##E(void *ctx, int64_t lo, int64_t hi) {          \
    typedef WORK(T) W;                                                      \
    const plan *p = ctx;                                                    \
    W acc[BLOCK];                                                           \
    for (int64_t it = lo; it < hi; it++) {                                  \
      int64_t m = it / p->nblk, c = it % p->nblk * BLOCK;                   \
      int64_t n = p->cols - c < BLOCK ? p->cols - c : BLOCK;                \
      for (int64_t i = 0; i < n; i++) acc[i] = 0;                           \
      for (int64_t j = 0; j < p->P; j++) {                                  \
        const W *xr = (const W *)(const void *)p->x +                       \
                      (m + p->r0 + j) * p->ld + p->c0 + c;                  \
        const W *hr = (const W *)(const void *)p->h + j * p->Q;             \
        for (int64_t k = 0; k < p->Q; k++) {                                \
          const W w = hr[k], *restrict xs = xr + k;                         \
          for (int64_t i = 0; i < n; i++) acc[i] += w * xs[i];              \
        }                                                                   \
      }                                                                     \
      char *o = p->o + m * p->os0 + c * p->os1;                             \
      if (p->os1 == (int64_t)sizeof(T))                                     \
        for (int64_t i = 0; i < n; i++)                                     \
          ((T *)(void *)o)[i] = (T)(STORE(T))acc[i];                        \
      else                                                                  \
        for (int64_t i = 0; i < n; i++, o += p->os1)                        \
          *(T *)(void *)o = (T)(STORE(T))acc[i];                            \
    }                                                                       \
  }
ND_NATIVE_DTYPES(ROWS)
#define ROWS_FN(E, name, T, kind) [ND_##E] = rows_##E,
static const nd_task_fn row_fns[ND_NDTYPES] = {ND_NATIVE_DTYPES(ROWS_FN)};

static const char *const boundary_names[ND_NBOUNDARIES] = {
#define NAME(E, name) #name,
    ND_BOUNDARIES(NAME)
#undef NAME
};

/* One dim of the filter: the image's length n, the taps' p; the result's
 * length and the image position under tap 0 for output 0 (its lag). */
typedef struct dim1 { int64_t n, p, len, lag; } dim1;
enum { RULE_NUMPY, RULE_SCIPY_CORR, RULE_SCIPY_CONV };
static void lay(dim1 *d, int mode, int rule) {
  int64_t n = d->n, p = d->p;
  switch (mode) {
  case ND_FILTER_FULL: d->len = n + p - 1, d->lag = -(p - 1); break;
  case ND_FILTER_VALID: d->len = n - p + 1, d->lag = 0; break;
  default: /* same: NumPy centres at p / 2, SciPy at (p - 1) / 2 from
            * the other end when it convolves */
    d->len = n;
    d->lag = rule == RULE_NUMPY ? -(p / 2)
             : rule == RULE_SCIPY_CORR ? -((p - 1) >> 1)
                                       : ((p - 1) >> 1) - (p - 1);
  }
}

/* Position i of an extended dim of length n under the boundary rule. */
static int64_t wrap_at(int64_t i, int64_t n) { return ((i % n) + n) % n; }
static int64_t symm_at(int64_t i, int64_t n) {
  int64_t k = wrap_at(i, 2 * n); /* period 2n: n positions, then mirrored */
  return k >= n ? 2 * n - 1 - k : k;
}

typedef struct image {
  const nd_tensor *t; /* 1-D or 2-D (as 1 x n) */
  int64_t M, N, s0, s1; /* sizes, element strides */
} image;
static image as_image(const nd_tensor *t) {
  image g = {t, 1, 1, 0, 0};
  if (t->ndim == 1) g.N = t->size[0], g.s1 = t->stride[0];
  if (t->ndim == 2)
    g.M = t->size[0], g.N = t->size[1], g.s0 = t->stride[0],
    g.s1 = t->stride[1];
  return g;
}

/* The filter itself: out (fresh, rows x cols) = correlation of x, padded
 * by P - 1 rows and Q - 1 columns under boundary (fill: *fill), with h's
 * taps (flipped in both dims when flip), tap 0 at (lag0, lag1); reversed:
 * the result written back to front in both dims. */
static nd_status run(nd_err *e, const char *fn, nd_tensor *out,
                     const image *x, const image *h, int flip,
                     const dim1 *d0, const dim1 *d1, int boundary,
                     double fill, int reversed, int rdt, int ndim) {
  /* float16, bfloat16: filtered in float32, rounded once (half_adapt.c) */
  int dt = nd_compute_dtype(rdt), wdt = work_dtype(dt);
  nd_tensor r32 = ND_UNSET, *res = dt == rdt ? out : &r32;
  int64_t ws = nd_dtype_size(wdt), es = nd_dtype_size(dt);
  int64_t P = h->M, Q = h->N, M = x->M, N = x->N;
  int64_t pr = P - 1, pc = Q - 1, R = 0, C = 0, cells;
  if (nd_add_ovf(M, 2 * pr, &R) || nd_add_ovf(N, 2 * pc, &C) ||
      nd_mul_ovf(R, C, &cells))
    return nd_fail(e, ND_EOVERFLOW, "%s: the padded input of %lld x %lld "
                   "elements is too large", fn, (long long)R, (long long)C);
  int64_t size[2] = {d0->len, d1->len};
  if (ndim == 1) size[0] = d1->len;
  if (nd_alloc_tensor(e, res, dt, ndim, size, false))
    return nd_err_name(e, fn);
  char *xs = NULL, *hs = NULL;
  if (!d0->len || !d1->len) goto done;
  xs = nd_scratch_alloc(e, fn, cells, ws, false);
  hs = xs ? nd_scratch_alloc(e, fn, P * Q, ws, false) : NULL;
  if (!hs) {
    nd_scratch_free(xs);
    nd_release(res);
    return e->code;
  }
  /* the taps, in correlation order */
  int64_t hes = nd_dtype_size(h->t->dtype);
  for (int64_t j = 0; j < P; j++) {
    const char *src = nd_ptr(h->t) +
                      (flip ? (P - 1 - j) * h->s0 + (Q - 1) * h->s1
                            : j * h->s0) * hes;
    nd_convert(wdt, hs + j * Q * ws, ws, h->t->dtype, src,
               (flip ? -h->s1 : h->s1) * hes, Q);
  }
  /* the input inside its border */
  int64_t xes = nd_dtype_size(x->t->dtype);
  for (int64_t i = 0; i < M; i++)
    nd_convert(wdt, xs + ((i + pr) * C + pc) * ws, ws, x->t->dtype,
               nd_ptr(x->t) + i * x->s0 * xes, x->s1 * xes, N);
  /* the border */
  if (boundary == ND_BOUNDARY_FILL) {
    union { float f; double d; int64_t i; } v;
    if (wdt == ND_FLOAT32) v.f = (float)fill;
    else if (wdt == ND_FLOAT64) v.d = fill;
    else v.i = (int64_t)fill;
    for (int64_t i = 0; i < R; i++) {
      int inside = i >= pr && i < pr + M;
      for (int64_t c = 0; c < C; c++) {
        if (inside && c == pc) c += N;
        if (c < C) memcpy(xs + (i * C + c) * ws, &v, (size_t)ws);
      }
    }
  } else {
    int64_t (*at)(int64_t, int64_t) =
        boundary == ND_BOUNDARY_WRAP ? wrap_at : symm_at;
    for (int64_t i = pr; i < pr + M; i++)
      for (int64_t c = 0; c < C; c++) {
        if (c == pc) c += N;
        if (c < C)
          memcpy(xs + (i * C + c) * ws, xs + (i * C + pc + at(c - pc, N)) * ws,
                 (size_t)ws);
      }
    for (int64_t i = 0; i < R; i++)
      if (i < pr || i >= pr + M)
        memcpy(xs + i * C * ws, xs + (pr + at(i - pr, M)) * C * ws,
               (size_t)(C * ws));
  }
  plan p = {d0->len, d1->len, xs, C, hs, P, Q, d0->lag + pr, d1->lag + pc,
            nd_ptr(res), d1->len * es, es, (d1->len + BLOCK - 1) / BLOCK};
  if (reversed) {
    p.o += ((p.rows - 1) * p.os0 + (p.cols - 1) * p.os1);
    p.os0 = -p.os0, p.os1 = -p.os1;
  }
  int64_t items = p.rows * p.nblk, per = P * Q * (p.cols < BLOCK ? p.cols : BLOCK);
  nd_parallel_for(items, per > 0 ? 1 + (1 << 18) / per : 1, row_fns[dt], &p);
done:
  nd_scratch_free(hs);
  nd_scratch_free(xs);
  return res == out ? ND_OK : nd_half_narrow(e, fn, out, res, rdt);
}

/* The result's dtype: the operands' promoted, not bool. */
static int result_dtype(nd_err *e, const char *fn, const nd_tensor *a,
                        const nd_tensor *b) {
  int dt = nd_promote_types(a->dtype, b->dtype);
  if (dt == ND_BOOL)
    return nd_fail(e, ND_EINVAL, "%s: takes numeric tensors, got bool and "
                   "bool (convert one first: t:int() or t:float())", fn), -1;
  return dt;
}

static nd_status check_mode(nd_err *e, const char *fn, int mode) {
  if (mode < 0 || mode >= ND_NFILTER_MODES)
    return nd_fail(e, ND_EINVAL, "%s: unknown mode %d", fn, mode);
  return ND_OK;
}

/* ---- NumPy's 1-D convolve and correlate ---- */
static nd_status filter1d(nd_err *e, nd_tensor *out, const nd_tensor *a,
                          const nd_tensor *v, int mode, int conv) {
  const char *fn = conv ? "convolve" : "correlate";
  if (check_mode(e, fn, mode)) return e->code;
  const nd_tensor *ts[2] = {a, v};
  for (int k = 0; k < 2; k++) {
    if (ts[k]->ndim > 1)
      return nd_fail(e, ND_EINVAL, "%s: takes 1-D tensors, got %d dims for "
                     "%s", fn, ts[k]->ndim, k ? "v" : "a");
    if (!nd_numel(ts[k]))
      return nd_fail(e, ND_EINVAL, "%s: %s cannot be empty", fn,
                     k ? "v" : "a");
  }
  int dt = result_dtype(e, fn, a, v);
  if (dt < 0) return e->code;
  image x = as_image(a), h = as_image(v);
  /* the longer one is the image: NumPy swaps them; correlate then
   * reverses its result */
  int swap = h.N > x.N;
  if (swap) {
    image t = x;
    x = h, h = t;
  }
  dim1 d0 = {1, 1, 1, 0}, d1 = {x.N, h.N, 0, 0};
  lay(&d1, mode, RULE_NUMPY);
  return run(e, fn, out, &x, &h, conv, &d0, &d1, ND_BOUNDARY_FILL, 0,
             swap && !conv, dt, 1);
}
nd_status nd_convolve(nd_err *e, nd_tensor *out, const nd_tensor *a,
                      const nd_tensor *v, int mode) {
  return filter1d(e, out, a, v, mode, 1);
}
nd_status nd_correlate(nd_err *e, nd_tensor *out, const nd_tensor *a,
                       const nd_tensor *v, int mode) {
  return filter1d(e, out, a, v, mode, 0);
}

/* ---- SciPy's convolve2d and correlate2d ---- */
static nd_status filter2d(nd_err *e, nd_tensor *out, const nd_tensor *a,
                          const nd_tensor *k, int mode, int boundary,
                          const double *fill, int conv) {
  const char *fn = conv ? "convolve2d" : "correlate2d";
  char b1[ND_SIZES_BUF], b2[ND_SIZES_BUF];
  if (check_mode(e, fn, mode)) return e->code;
  if (boundary < 0 || boundary >= ND_NBOUNDARIES)
    return nd_fail(e, ND_EINVAL, "%s: unknown boundary %d", fn, boundary);
  if (fill && boundary != ND_BOUNDARY_FILL)
    return nd_fail(e, ND_EINVAL, "%s: boundary \"%s\" takes no fill value, "
                   "got %.17g", fn, boundary_names[boundary], *fill);
  if (a->ndim != 2 || k->ndim != 2)
    return nd_fail(e, ND_EINVAL, "%s: takes 2-D tensors, got %d and %d dims",
                   fn, a->ndim, k->ndim);
  int dt = result_dtype(e, fn, a, k);
  if (dt < 0) return e->code;
  double f = fill ? *fill : 0;
  int64_t iv;
  if (nd_dtype_kind(dt) != 'f' && !nd_whole(f, &iv) && !(f == 0))
    return nd_fail(e, ND_EINVAL, "%s: fill %.17g is not an integer, and the "
                   "result is %s", fn, f, nd_dtype_name(dt));
  image x = as_image(a), h = as_image(k);
  int swap = 0;
  if (mode == ND_FILTER_VALID) { /* SciPy's rule: the bigger is the image */
    int ok1 = x.M >= h.M && x.N >= h.N, ok2 = h.M >= x.M && h.N >= x.N;
    if (!ok1 && !ok2)
      return nd_fail(e, ND_EINVAL, "%s: mode \"valid\" needs one input at "
                     "least as large as the other in every dim, got %s and "
                     "%s", fn, nd_fmt_sizes(b1, sizeof b1, 2, a->size),
                     nd_fmt_sizes(b2, sizeof b2, 2, k->size));
    if (!ok1) {
      image t = x;
      x = h, h = t, swap = 1;
    }
  }
  if (!nd_numel(a) || !nd_numel(k))
    return nd_fail(e, ND_EINVAL, "%s: %s is empty: sizes %s and %s", fn,
                   nd_numel(a) ? "the kernel" : "the input",
                   nd_fmt_sizes(b1, sizeof b1, 2, a->size),
                   nd_fmt_sizes(b2, sizeof b2, 2, k->size));
  int rule = conv ? RULE_SCIPY_CONV : RULE_SCIPY_CORR;
  dim1 d0 = {x.M, h.M, 0, 0}, d1 = {x.N, h.N, 0, 0};
  lay(&d0, mode, rule);
  lay(&d1, mode, rule);
  return run(e, fn, out, &x, &h, conv, &d0, &d1, boundary, f, swap && !conv,
             dt, 2);
}
nd_status nd_convolve2d(nd_err *e, nd_tensor *out, const nd_tensor *a,
                        const nd_tensor *k, int mode, int boundary,
                        const double *fill) {
  return filter2d(e, out, a, k, mode, boundary, fill, 1);
}
nd_status nd_correlate2d(nd_err *e, nd_tensor *out, const nd_tensor *a,
                         const nd_tensor *k, int mode, int boundary,
                         const double *fill) {
  return filter2d(e, out, a, k, mode, boundary, fill, 0);
}
