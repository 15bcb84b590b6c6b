/* Pooling, PyTorch 1.13's F.max_pool{1,2,3}d, F.avg_pool{1,2,3}d and
 * F.adaptive_avg_pool2d. One kernel for the three ranks: 1-D and 2-D are
 * 3-D with size-1 leading spatial dims (kernel 1, stride 1, no padding).
 * The input is read through its own strides, never copied.
 *
 * Work is one output row (plane, od, oh) at a time, written straight into
 * the result, which is its accumulator: the window's dims are the outer
 * loops and the row's columns the inner one, so that the inner loop is a
 * load at a fixed step and a compare or add over consecutive outputs,
 * which vectorises (specialised for the common steps). Per output the
 * window is still visited in PyTorch's order (depth, row, column, valid
 * positions only), so sums round as PyTorch's and the max's position is
 * PyTorch's: the first largest, or the last NaN, which propagates. */
#ifndef __clang__ /* the strided inner loops vectorise at O3 */
#pragma GCC optimize("O3")
#endif
#include "kernels.h"
#include <math.h>

#define KERNEL ND_CLONES("avx2", "default")

enum { MAXP, AVGP, ADAPT };
static const char *const fn_of[3][3] = {
    {"max_pool1d", "max_pool2d", "max_pool3d"},
    {"avg_pool1d", "avg_pool2d", "avg_pool3d"},
    {"adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d"}};

/* The call's geometry, spatial dims as (D, H, W), and its operands. */
typedef struct geom {
  int op, include_pad, has_div;
  int64_t div;               /* divisor_override */
  int64_t C;                 /* channels */
  int64_t sn, sc;            /* input strides of n and c (elements) */
  int64_t in[3], out[3], k[3], s[3], p[3], d[3], is[3];
  const char *x;             /* the input's first element */
  char *o;                   /* the result's, row-major */
  int64_t *ix;               /* the positions' (max with indices) or NULL */
  int64_t base;              /* added to every position */
} geom;

static int64_t floor_div(int64_t a, int64_t b) { /* b > 0 */
  int64_t q = a / b;
  return q * b > a ? q - 1 : q;
}

static int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

/* The kernel offsets j in [*lo, *hi) (of k) whose position st + j * d lies
 * in [0, n): only those are visited, however large the kernel. */
static void taps(int64_t st, int64_t n, int64_t k, int64_t d, int64_t *lo,
                 int64_t *hi) {
  int64_t a = st < 0 ? ceil_div(-st, d) : 0, b = floor_div(n - 1 - st, d) + 1;
  *lo = a;
  *hi = b < k ? b : k;
}

/* Valid outputs [*lo, *hi) along a dim for kernel offset off (the input
 * position is o * s - p + off): those landing in [0, n). */
static void valid_range(int64_t n, int64_t s, int64_t p, int64_t off,
                        int64_t out, int64_t *lo, int64_t *hi) {
  int64_t a = -floor_div(off - p, s), b = floor_div(n - 1 + p - off, s) + 1;
  *lo = a < 0 ? 0 : a;
  *hi = b > out ? out : b;
}

/* ---- max ---- */
/* v replaces a when larger or NaN (PyTorch's rule): the first largest, the
 * last NaN. */
#define MAX_LOOP(T, SW, S)                                                  \
  do {                                                                      \
    const T *r = (const T *)x + (lo * (S) - p + off) * (SW);                \
    if (ix) {                                                               \
      int64_t at = pos + lo * (S) - p + off;                                \
      for (int64_t j = 0; j < hi - lo; j++) {                               \
        T v = r[j * (S) * (SW)], a = o[lo + j];                             \
        int u = (v > a) | (v != v);                                         \
        o[lo + j] = u ? v : a;                                              \
        ix[lo + j] = u ? at + j * (S) : ix[lo + j];                         \
      }                                                                     \
    } else                                                                  \
      for (int64_t j = 0; j < hi - lo; j++) {                               \
        T v = r[j * (S) * (SW)], a = o[lo + j];                             \
        o[lo + j] = ((v > a) | (v != v)) ? v : a;                           \
      }                                                                     \
  } while (0)

/* ---- sums: integers wrap, as PyTorch's (no C overflow) ---- */
#define ADD_f(T, a, b) ((a) + (b))
#define ADD_i(T, a, b) ((T)((uint64_t)(a) + (uint64_t)(b)))
#define SUM_LOOP(T, K, SW, S)                                               \
  do {                                                                      \
    const T *r = (const T *)x + (lo * (S) - p + off) * (SW);                \
    for (int64_t j = 0; j < hi - lo; j++)                                   \
      o[lo + j] = ADD_##K(T, o[lo + j], r[j * (S) * (SW)]);                 \
  } while (0)
/* a / n as PyTorch: a float divided by the count as that float type, an
 * integer truncated (INT64_MIN / -1 wraps). */
#define DIV_f(T, a, n) ((a) / (T)(n))
#define DIV_i(T, a, n) ((n) == -1 ? ADD_i(T, 0, -(uint64_t)(a)) : (a) / (T)(n))

/* The inner loop over one kernel column: the row's outputs [lo, hi) read x
 * (the input row) at (o * s - p + off) * sw; pos is the row's flat position
 * in the unpadded plane. Steps 1 and 2 along a contiguous row are compiled
 * apart, so that their loads vectorise. */
#define STEPS(LOOP, ...)                                                    \
  do {                                                                      \
    if (sw == 1 && s == 1) LOOP(__VA_ARGS__, 1, 1);                         \
    else if (sw == 1 && s == 2) LOOP(__VA_ARGS__, 1, 2);                    \
    else LOOP(__VA_ARGS__, sw, s);                                          \
  } while (0)

#define LOWEST_f(T) ((T)-INFINITY)
#define LOWEST_i(T) ((T)INT64_MIN)

/* Rows [lo, hi) of the flat (plane, od, oh) space. */
#define POOL_ROWS(T, K, name)                                               \
  KERNEL static void max_rows_##name(const geom *g, int64_t r0, int64_t r1) { \
    int64_t OD = g->out[0], OH = g->out[1], OW = g->out[2];                 \
    int64_t W = g->in[2], s = g->s[2], p = g->p[2], sw = g->is[2];          \
    for (int64_t r = r0; r < r1; r++) {                                     \
      int64_t oh = r % OH, od = r / OH % OD, pl = r / OH / OD;              \
      T *o = (T *)g->o + r * OW;                                            \
      int64_t *ix = g->ix ? g->ix + r * OW : NULL;                          \
      const char *xp = g->x + ((pl / g->C) * g->sn + (pl % g->C) * g->sc) * \
                                  (int64_t)sizeof(T);                       \
      /* each window's first valid position (PyTorch's start, moved on by  \
       * the dilation) seeds its position; -inf (lowest) its value */       \
      int64_t st[2], t0[2], t1[2];                                          \
      for (int k = 0; k < 2; k++) {                                         \
        st[k] = (k ? oh : od) * g->s[k] - g->p[k];                          \
        taps(st[k], g->in[k], g->k[k], g->d[k], t0 + k, t1 + k);            \
      }                                                                     \
      for (int64_t j = 0; j < OW; j++) {                                    \
        o[j] = LOWEST_##K(T);                                               \
        if (ix) {                                                           \
          int64_t a = j * s - p;                                            \
          if (a < 0) a += ceil_div(-a, g->d[2]) * g->d[2];                  \
          ix[j] = ((st[0] + t0[0] * g->d[0]) * g->in[1] + st[1] +           \
                   t0[1] * g->d[1]) * W + a + g->base;                      \
        }                                                                   \
      }                                                                     \
      int64_t w0 = ceil_div(p - (OW - 1) * s, g->d[2]),                     \
              w1 = floor_div(W + p - 1, g->d[2]) + 1;                       \
      w0 = w0 > 0 ? w0 : 0;                                                 \
      w1 = w1 < g->k[2] ? w1 : g->k[2];                                     \
      for (int64_t kd = t0[0]; kd < t1[0]; kd++) {                          \
        int64_t id = st[0] + kd * g->d[0];                                  \
        for (int64_t kh = t0[1]; kh < t1[1]; kh++) {                        \
          int64_t ih = st[1] + kh * g->d[1];                                \
          const char *x = xp + (id * g->is[0] + ih * g->is[1]) *            \
                                   (int64_t)sizeof(T);                      \
          int64_t pos = (id * g->in[1] + ih) * W + g->base;                 \
          for (int64_t kw = w0; kw < w1; kw++) {                            \
            int64_t off = kw * g->d[2], lo, hi;                             \
            valid_range(W, s, p, off, OW, &lo, &hi);                        \
            if (lo < hi) STEPS(MAX_LOOP, T);                                \
          }                                                                 \
        }                                                                   \
      }                                                                     \
    }                                                                       \
  }                                                                         \
  KERNEL static void avg_rows_##name(const geom *g, int64_t r0, int64_t r1) { \
    int64_t OD = g->out[0], OH = g->out[1], OW = g->out[2];                 \
    int64_t W = g->in[2], s = g->s[2], p = g->p[2], sw = g->is[2];          \
    for (int64_t r = r0; r < r1; r++) {                                     \
      int64_t oh = r % OH, od = r / OH % OD, pl = r / OH / OD;              \
      T *o = (T *)g->o + r * OW;                                            \
      const char *xp = g->x + ((pl / g->C) * g->sn + (pl % g->C) * g->sc) * \
                                  (int64_t)sizeof(T);                       \
      int64_t st[2], cnt[2] = {1, 1}, full[2] = {1, 1};                     \
      for (int k = 0; k < 2; k++) { /* PyTorch's pool sizes */             \
        int64_t a = (k ? oh : od) * g->s[k] - g->p[k], n = g->in[k];        \
        int64_t b = a + g->k[k] < n + g->p[k] ? a + g->k[k] : n + g->p[k];  \
        st[k] = a;                                                          \
        full[k] = b - a;                                                    \
        cnt[k] = (b < n ? b : n) - (a > 0 ? a : 0);                         \
      }                                                                     \
      for (int64_t j = 0; j < OW; j++) o[j] = 0;                            \
      int64_t t0[2], t1[2];                                                 \
      for (int k = 0; k < 2; k++)                                           \
        taps(st[k], g->in[k], g->k[k], 1, t0 + k, t1 + k);                  \
      int64_t w0 = p - (OW - 1) * s, w1 = W + p;                            \
      w0 = w0 > 0 ? w0 : 0;                                                 \
      w1 = w1 < g->k[2] ? w1 : g->k[2];                                     \
      for (int64_t kd = t0[0]; kd < t1[0]; kd++) {                          \
        int64_t id = st[0] + kd;                                            \
        for (int64_t kh = t0[1]; kh < t1[1]; kh++) {                        \
          int64_t ih = st[1] + kh;                                          \
          const char *x = xp + (id * g->is[0] + ih * g->is[1]) *            \
                                   (int64_t)sizeof(T);                      \
          for (int64_t off = w0; off < w1; off++) {                         \
            int64_t lo, hi;                                                 \
            valid_range(W, s, p, off, OW, &lo, &hi);                        \
            if (lo < hi) STEPS(SUM_LOOP, T, K);                             \
          }                                                                 \
        }                                                                   \
      }                                                                     \
      /* the divisors: a window's count, PyTorch's; one for the columns    \
       * whose windows lie inside the row, so that their loop vectorises */ \
      int64_t kw = g->k[2], j0 = ceil_div(p, s), j1 = floor_div(W - kw + p, s) + 1; \
      j0 = j0 < OW ? j0 : OW;                                               \
      j1 = j1 < j0 ? j0 : j1 < OW ? j1 : OW;                                \
      if (cnt[0] <= 0 || cnt[1] <= 0) j0 = j1 = OW; /* no input: all 0 */  \
      for (int e = 0; e < 2; e++)                                           \
      for (int64_t j = e ? j1 : 0; j < (e ? OW : j0); j++) {                \
        int64_t a = j * s - p, b = a + kw < W + p ? a + kw : W + p;         \
        int64_t c = (b < W ? b : W) - (a > 0 ? a : 0);                      \
        if (cnt[0] <= 0 || cnt[1] <= 0 || c <= 0) { o[j] = 0; continue; }   \
        int64_t n = g->has_div ? g->div                                     \
                    : g->include_pad ? full[0] * full[1] * (b - a)          \
                                     : cnt[0] * cnt[1] * c;                 \
        o[j] = DIV_##K(T, o[j], n);                                         \
      }                                                                     \
      int64_t n = g->has_div ? g->div                                       \
                  : g->include_pad ? full[0] * full[1] * kw                 \
                                   : cnt[0] * cnt[1] * kw;                  \
      for (int64_t j = j0; j < j1; j++) o[j] = DIV_##K(T, o[j], n);         \
    }                                                                       \
  }                                                                         \
  /* PyTorch's adaptive windows: [floor(i*n/m), ceil((i+1)*n/m)) */         \
  static void adapt_rows_##name(const geom *g, int64_t r0, int64_t r1) {    \
    int64_t OD = g->out[0], OH = g->out[1], OW = g->out[2];                 \
    for (int64_t r = r0; r < r1; r++) {                                     \
      int64_t oh = r % OH, od = r / OH % OD, pl = r / OH / OD;              \
      T *o = (T *)g->o + r * OW;                                            \
      const T *xp = (const T *)(g->x + ((pl / g->C) * g->sn +               \
                                        (pl % g->C) * g->sc) *              \
                                           (int64_t)sizeof(T));             \
      int64_t a[3], b[3];                                                   \
      for (int k = 0; k < 2; k++) {                                         \
        int64_t i = k ? oh : od, n = g->in[k], m = g->out[k];               \
        a[k] = i * n / m;                                                   \
        b[k] = ((i + 1) * n + m - 1) / m;                                   \
      }                                                                     \
      for (int64_t j = 0; j < OW; j++) {                                    \
        int64_t n = g->in[2], m = OW;                                       \
        a[2] = j * n / m;                                                   \
        b[2] = ((j + 1) * n + m - 1) / m;                                   \
        T sum = 0;                                                          \
        for (int64_t id = a[0]; id < b[0]; id++)                            \
          for (int64_t ih = a[1]; ih < b[1]; ih++) {                        \
            const T *x = xp + id * g->is[0] + ih * g->is[1];                \
            for (int64_t iw = a[2]; iw < b[2]; iw++)                        \
              sum = ADD_##K(T, sum, x[iw * g->is[2]]);                      \
          }                                                                 \
        for (int k = 0; k < 3; k++) sum = DIV_##K(T, sum, b[k] - a[k]);     \
        o[j] = sum;                                                         \
      }                                                                     \
    }                                                                       \
  }                                                                         \
  static void rows_##name(void *ctx, int64_t r0, int64_t r1) {              \
    const geom *g = ctx;                                                    \
    if (g->op == MAXP) max_rows_##name(g, r0, r1);                          \
    else if (g->op == AVGP) avg_rows_##name(g, r0, r1);                     \
    else adapt_rows_##name(g, r0, r1);                                      \
  }

/* The dtypes pooled: max and adaptive take floats, avg int64 too (as
 * PyTorch 1.13's CPU kernels); float16 and bfloat16 through float32 (run).
 * X(ENUM, C type, kind). */
#define POOL_DTYPES(X)                                                      \
  X(FLOAT32, float, f) X(FLOAT64, double, f) X(INT64, int64_t, i)
#define X_ROWS(E, T, K) POOL_ROWS(T, K, E)
POOL_DTYPES(X_ROWS)
#undef X_ROWS

static nd_task_fn rows_of(int dtype) {
  switch (dtype) {
#define X_CASE(E, T, K)                                                     \
  case ND_##E:                                                              \
    return rows_##E;
    POOL_DTYPES(X_CASE)
#undef X_CASE
  }
  return NULL;
}

/* "{a, b, c}" of n values, for messages. */
static const char *fmt3(char *buf, int n, const int64_t *v) {
  return nd_fmt_sizes(buf, ND_SIZES_BUF, n, v);
}

/* g reads the input t (l leading dims) through its strides. */
static void read_strides(geom *g, const nd_tensor *t, int l) {
  g->sc = t->stride[l - 1];
  g->sn = l == 2 ? t->stride[0] : 0;
  for (int k = 0; k < 3; k++) {
    int d = t->ndim - 3 + k;
    g->is[k] = d >= l ? t->stride[d] : 0;
  }
}

/* The checks every pooling shares: dims, rank, dtype and the non-batch
 * sizes; fills g's plane layout and input sizes. Returns the result's rank
 * offset (1 unbatched, 2 batched). */
static nd_status prepare(nd_err *e, geom *g, const nd_tensor *t, int op,
                         int dims, const char *fn, int *lead) {
  if (t->ndim != dims + 1 && t->ndim != dims + 2)
    return nd_fail(e, ND_EINVAL, "%s: expected a %dD (unbatched) or %dD "
                   "(batched) input, got %dD", fn, dims + 1, dims + 2,
                   t->ndim);
  int dt = t->dtype;
  if (nd_dtype_kind(dt) != 'f' && !(op == AVGP && dt == ND_INT64))
    return nd_fail(e, ND_EINVAL, "%s: input must be float16, bfloat16, "
                   "float32 or float64%s, got %s", fn,
                   op == AVGP ? " (or int64)" : "", nd_dtype_name(dt));
  int l = t->ndim - dims;
  /* PyTorch's: the batch may be empty, the channels (but for adaptive
   * pooling) and the spatial dims may not */
  for (int d = op == ADAPT ? l : l - 1; d < t->ndim; d++)
    if (t->size[d] == 0) {
      char b[ND_SIZES_BUF];
      return nd_fail(e, ND_EINVAL, "%s: input of size %s: only the %s may "
                     "be empty", fn, fmt3(b, t->ndim, t->size),
                     op == ADAPT ? "batch and channel dims" : "batch dim");
    }
  memset(g, 0, sizeof *g);
  g->op = op;
  g->C = t->size[l - 1];
  for (int k = 0; k < 3; k++) {
    int d = t->ndim - 3 + k; /* the spatial dim, or a missing leading one */
    g->in[k] = d >= l ? t->size[d] : 1;
    g->k[k] = g->s[k] = g->d[k] = g->out[k] = 1;
  }
  read_strides(g, t, l);
  *lead = l;
  return ND_OK;
}

/* Allocate the result(s) of t's leading sizes and g->out, then run.
 * float16 and bfloat16 pool a float32 copy into a float32 result rounded
 * once (half_adapt.c): exact for max, sums in float32 for the averages. */
static nd_status run(nd_err *e, geom *g, nd_tensor *out, nd_tensor *indices,
                     const nd_tensor *t, int dims, int lead, const char *fn) {
  if (nd_is_half(t->dtype)) {
    nd_tensor w = ND_UNSET, r = ND_UNSET;
    if (nd_half_widen(e, fn, &w, t)) return e->code;
    read_strides(g, &w, lead);
    nd_status st = run(e, g, &r, indices, &w, dims, lead, fn);
    nd_release(&w);
    if (st) return st;
    if (nd_half_narrow(e, fn, out, &r, t->dtype)) {
      if (indices) nd_release(indices);
      return e->code;
    }
    return ND_OK;
  }
  int64_t size[5];
  for (int d = 0; d < lead; d++) size[d] = t->size[d];
  for (int k = 0; k < dims; k++) size[lead + k] = g->out[3 - dims + k];
  int ndim = lead + dims;
  if (nd_alloc_tensor(e, out, t->dtype, ndim, size, false))
    return nd_err_name(e, fn);
  if (indices && nd_alloc_tensor(e, indices, ND_INT64, ndim, size, false)) {
    nd_release(out);
    return nd_err_name(e, fn);
  }
  int64_t rows = nd_numel(out) / (g->out[2] ? g->out[2] : 1);
  if (!nd_numel(out)) return ND_OK;
  g->x = nd_ptr(t);
  g->o = nd_ptr(out);
  g->ix = indices ? (int64_t *)nd_ptr(indices) : NULL;
  g->base = e->base;
  /* a task of at least ~32K window elements read (doubles: a kernel may
   * be far larger than the input) */
  double per = (double)g->out[2];
  for (int k = 0; k < 3; k++)
    per *= g->op == ADAPT ? (double)(g->in[k] / g->out[k] + 1)
                          : (double)(g->k[k] < g->in[k] ? g->k[k] : g->in[k]);
  int64_t grain = per >= 32768 ? 1 : (int64_t)(32768 / per) + 1;
  nd_parallel_for(rows, grain, rows_of(t->dtype), g);
  return ND_OK;
}

/* The output sizes of a max or avg pooling, PyTorch's rules. */
static nd_status pool_sizes(nd_err *e, geom *g, const nd_tensor *t, int dims,
                            const int64_t *kernel, const int64_t *stride,
                            const int64_t *padding, const int64_t *dilation,
                            int ceil_mode, const char *fn) {
  char b1[ND_SIZES_BUF], b2[ND_SIZES_BUF], b3[ND_SIZES_BUF], b4[ND_SIZES_BUF];
  int f = 3 - dims; /* g's first given spatial dim */
  for (int k = 0; k < dims; k++) {
    g->k[f + k] = kernel[k];
    g->s[f + k] = stride ? stride[k] : kernel[k];
    g->p[f + k] = padding ? padding[k] : 0;
    g->d[f + k] = dilation ? dilation[k] : 1;
  }
  static const char *const names[4] = {"kernel_size", "stride", "dilation",
                                       "padding"};
  for (int k = f; k < 3; k++) {
    int64_t *v[4] = {g->k, g->s, g->d, g->p};
    for (int i = 0; i < 4; i++)
      if (v[i][k] < (i == 3 ? 0 : 1))
        return nd_fail(e, ND_EINVAL, "%s: %s must be %s, got %s", fn,
                       names[i], i == 3 ? "0 or more" : "positive",
                       fmt3(b1, dims, v[i] + f));
  }
  for (int k = f; k < 3; k++)
    if (g->p[k] > g->k[k] / 2)
      return nd_fail(e, ND_EINVAL, "%s: padding must be at most half the "
                     "kernel size: padding %s, kernel_size %s", fn,
                     fmt3(b1, dims, g->p + f), fmt3(b2, dims, g->k + f));
  int bad_out = 0;
  for (int k = f; k < 3; k++) {
    /* in + 2p - d(k-1) - 1 (+ s - 1 in ceil mode), floor-divided by s;
     * every position the kernels form is within in + 2p + s + d(k-1) */
    int64_t n = g->in[k], span, num;
    if (nd_mul_ovf(g->d[k], g->k[k] - 1, &span) ||
        nd_add_ovf(n, g->p[k], &num) || nd_add_ovf(num, g->p[k], &num) ||
        nd_add_ovf(num, g->s[k], &num) || nd_add_ovf(num, span, &num))
      return nd_fail(e, ND_EOVERFLOW, "%s: kernel_size %s, stride %s, "
                     "padding %s and dilation %s are too large", fn,
                     fmt3(b1, dims, g->k + f), fmt3(b2, dims, g->s + f),
                     fmt3(b3, dims, g->p + f), fmt3(b4, dims, g->d + f));
    num = n + 2 * g->p[k] - span - 1 + (ceil_mode ? g->s[k] - 1 : 0);
    int64_t o = floor_div(num, g->s[k]) + 1;
    if (ceil_mode && (o - 1) * g->s[k] >= n + g->p[k]) o--;
    g->out[k] = o;
    bad_out |= o < 1;
  }
  if (bad_out) {
    char b5[ND_SIZES_BUF], b6[ND_SIZES_BUF];
    return nd_fail(e, ND_EINVAL, "%s: input of size %s gives output size %s, "
                   "too small (kernel_size %s, stride %s, padding %s, "
                   "dilation %s)", fn, fmt3(b1, t->ndim, t->size),
                   fmt3(b2, dims, g->out + f), fmt3(b3, dims, g->k + f),
                   fmt3(b4, dims, g->s + f), fmt3(b5, dims, g->p + f),
                   fmt3(b6, dims, g->d + f));
  }
  return ND_OK;
}

nd_status nd_max_pool(nd_err *e, nd_tensor *out, nd_tensor *indices,
                      const nd_tensor *t, int dims, const int64_t *kernel,
                      const int64_t *stride, const int64_t *padding,
                      const int64_t *dilation, int ceil_mode) {
  if (dims < 1 || dims > 3)
    return nd_fail(e, ND_EINVAL, "max_pool: 1 to 3 spatial dims, got %d",
                   dims);
  const char *fn = fn_of[MAXP][dims - 1];
  geom g;
  int lead = 0;
  if (prepare(e, &g, t, MAXP, dims, fn, &lead) ||
      pool_sizes(e, &g, t, dims, kernel, stride, padding, dilation,
                 ceil_mode, fn))
    return e->code;
  return run(e, &g, out, indices, t, dims, lead, fn);
}

nd_status nd_avg_pool(nd_err *e, nd_tensor *out, const nd_tensor *t, int dims,
                      const int64_t *kernel, const int64_t *stride,
                      const int64_t *padding, int ceil_mode,
                      int count_include_pad, const int64_t *divisor) {
  if (dims < 1 || dims > 3)
    return nd_fail(e, ND_EINVAL, "avg_pool: 1 to 3 spatial dims, got %d",
                   dims);
  const char *fn = fn_of[AVGP][dims - 1];
  geom g;
  int lead = 0;
  if (prepare(e, &g, t, AVGP, dims, fn, &lead) ||
      pool_sizes(e, &g, t, dims, kernel, stride, padding, NULL, ceil_mode,
                 fn))
    return e->code;
  if (divisor && *divisor == 0)
    return nd_fail(e, ND_EINVAL, "%s: divisor_override must not be 0", fn);
  /* the largest count a window can have: the kernels multiply it out */
  int64_t most = 1;
  for (int k = 0; k < 3; k++) {
    int64_t w = g.in[k] + 2 * g.p[k]; /* in range: pool_sizes checked it */
    if (nd_mul_ovf(most, g.k[k] < w ? g.k[k] : w, &most)) {
      char b[ND_SIZES_BUF];
      return nd_fail(e, ND_EOVERFLOW, "%s: kernel_size %s is too large", fn,
                     fmt3(b, dims, g.k + 3 - dims));
    }
  }
  g.include_pad = count_include_pad;
  g.has_div = divisor != NULL;
  g.div = divisor ? *divisor : 0;
  return run(e, &g, out, NULL, t, dims, lead, fn);
}

nd_status nd_adaptive_avg_pool(nd_err *e, nd_tensor *out, const nd_tensor *t,
                               int dims, const int64_t *size) {
  if (dims < 1 || dims > 3)
    return nd_fail(e, ND_EINVAL, "adaptive_avg_pool: 1 to 3 spatial dims, "
                   "got %d", dims);
  const char *fn = fn_of[ADAPT][dims - 1];
  geom g;
  int lead = 0;
  if (prepare(e, &g, t, ADAPT, dims, fn, &lead)) return e->code;
  for (int k = 0; k < dims; k++) {
    int64_t m = size[k] < 0 ? -1 : size[k], n = g.in[3 - dims + k];
    if (size[k] < -1) {
      char b[ND_SIZES_BUF];
      return nd_fail(e, ND_EINVAL, "%s: output size must be at least 0 "
                     "(-1: the input's), got %s", fn, fmt3(b, dims, size));
    }
    /* (i + 1) * n stays in range: outputs and inputs each fit memory */
    if (m > INT32_MAX || n > INT32_MAX)
      return nd_fail(e, ND_EOVERFLOW, "%s: output size %lld for input size "
                     "%lld is too large", fn, (long long)m, (long long)n);
    g.out[3 - dims + k] = m < 0 ? n : m;
  }
  return run(e, &g, out, NULL, t, dims, lead, fn);
}
