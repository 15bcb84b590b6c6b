/* Counting and encoding integer values: bincount (NumPy's) and one_hot
 * (PyTorch's). A first pass finds the values' range, so a bad value is
 * refused, and the result's size checked, before anything is allocated or
 * written; a second pass counts or marks. One loop per dtype for each
 * pass (the float instances are never called: floats are refused first). */
#ifndef __clang__ /* the range pass vectorises at O3 */
#pragma GCC optimize("O3")
#endif
#include "kernels.h"
#include <stdio.h>

/* An element as an integer; 0 in the float instances. */
#define IVAL(T, kind, p) (kind == 'f' ? 0 : (int64_t)*(const T *)(p))

/* above: the largest uint64 value past INT64_MAX (0: none), whose hi is
 * INT64_MAX, so a message can quote it whole. */
typedef struct { int64_t lo, hi; uint64_t above; } range;
static inline int past_int64(uint64_t v) { return v > (uint64_t)INT64_MAX; }
/* In T (vectorised over a contiguous run), widened at the end. */
#define RANGE(E, name, T, kind)                                             \
  static void range_##E(char **p, const int64_t *st, int64_t n, void *c) {  \
    range *r = c;                                                           \
    const char *x = p[0];                                                   \
    if (kind == 'f' || n <= 0) return;                                      \
    T lo = *(const T *)x, hi = lo;                                          \
    if (st[0] == (int64_t)sizeof(T)) {                                      \
      const T *v = (const T *)x;                                            \
      for (int64_t i = 0; i < n; i++) {                                     \
        lo = v[i] < lo ? v[i] : lo;                                         \
        hi = v[i] > hi ? v[i] : hi;                                         \
      }                                                                     \
    } else {                                                                \
      for (int64_t i = 0; i < n; i++, x += st[0]) {                         \
        T v = *(const T *)x;                                                \
        lo = v < lo ? v : lo;                                               \
        hi = v > hi ? v : hi;                                               \
      }                                                                     \
    }                                                                       \
    if (kind == 'u' && sizeof(T) == 8 && past_int64((uint64_t)hi)) {        \
      if ((uint64_t)hi > r->above) r->above = (uint64_t)hi;                 \
      r->hi = INT64_MAX;                                                    \
      if (past_int64((uint64_t)lo)) return;                                 \
    }                                                                       \
    if (IVAL(T, kind, &lo) < r->lo) r->lo = IVAL(T, kind, &lo);             \
    if (r->hi < INT64_MAX && IVAL(T, kind, &hi) > r->hi)                    \
      r->hi = IVAL(T, kind, &hi);                                           \
  }
ND_NATIVE_DTYPES(RANGE)
#define RANGE_FN(E, name, T, kind) [ND_##E] = range_##E,
static const nd_loop_fn ranges[ND_NDTYPES] = {ND_NATIVE_DTYPES(RANGE_FN)};

/* The smallest and largest of t's elements (t not empty). */
static range range_of(const nd_tensor *t) {
  range r = {INT64_MAX, INT64_MIN, 0};
  nd_iter it;
  const nd_tensor *ops[1] = {t};
  nd_iter_init(&it, 1, ops);
  nd_iter_run(&it, ranges[t->dtype], &r, 0, nd_iter_outer(&it));
  return r;
}

static nd_status integers_only(nd_err *e, const char *fn, const nd_tensor *t,
                               int bool_too) {
  char k = nd_dtype_kind(t->dtype);
  if (k == 'i' || k == 'u' || (bool_too && k == 'b')) return ND_OK;
  return nd_fail(e, ND_EINVAL, "%s: takes an integer tensor%s, got %s", fn,
                 bool_too ? " (or bool)" : "", nd_dtype_name(t->dtype));
}

/* ---- bincount: out[v] += 1 (or w[i]), in t's order (NumPy's sums) ---- */
/* Counts go to `lanes` (1 or 4) interleaved tables, c[lanes * v + lane]:
 * a run of one value (a flat image region) then increments four counters
 * in turn instead of waiting on one counter's last store each time --
 * 10-15% on a 6 MB uint8 image; with 1000 values (32 KB of lanes) it was
 * 10% slower, so only short tables take it. */
#define COUNT(E, name, T, kind)                                             \
  static void count_##E(const char *x, int64_t xs, int64_t n, int64_t *c,   \
                        int64_t lanes) {                                    \
    int64_t i = 0;                                                          \
    if (lanes == 4)                                                         \
      for (; i + 4 <= n; i += 4, x += 4 * xs) {                             \
        c[4 * IVAL(T, kind, x)]++;                                          \
        c[4 * IVAL(T, kind, x + xs) + 1]++;                                 \
        c[4 * IVAL(T, kind, x + 2 * xs) + 2]++;                             \
        c[4 * IVAL(T, kind, x + 3 * xs) + 3]++;                             \
      }                                                                     \
    for (; i < n; i++, x += xs) c[lanes * IVAL(T, kind, x)]++;              \
  }                                                                         \
  static void wcount_##E(const char *x, int64_t xs, int64_t n,              \
                         const double *w, int64_t ws, double *c) {          \
    for (int64_t i = 0; i < n; i++, x += xs, w += ws)                       \
      c[IVAL(T, kind, x)] += *w;                                            \
  }
ND_NATIVE_DTYPES(COUNT)
typedef void (*count_fn)(const char *, int64_t, int64_t, int64_t *, int64_t);
typedef void (*wcount_fn)(const char *, int64_t, int64_t, const double *,
                          int64_t, double *);
#define COUNT_FN(E, name, T, kind) [ND_##E] = count_##E,
#define WCOUNT_FN(E, name, T, kind) [ND_##E] = wcount_##E,
static const count_fn counts[ND_NDTYPES] = {ND_NATIVE_DTYPES(COUNT_FN)};
static const wcount_fn wcounts[ND_NDTYPES] = {ND_NATIVE_DTYPES(WCOUNT_FN)};

nd_status nd_bincount(nd_err *e, nd_tensor *out, const nd_tensor *t,
                      const nd_tensor *weights, int64_t minlength) {
  const char *fn = "bincount";
  char b1[ND_SIZES_BUF], b2[ND_SIZES_BUF];
  if (integers_only(e, fn, t, 1)) return e->code;
  if (t->ndim != 1)
    return nd_fail(e, ND_EINVAL, "%s: takes a 1-D tensor, got %d dims", fn,
                   t->ndim);
  if (weights && (weights->ndim != 1 || weights->size[0] != t->size[0]))
    return nd_fail(e, ND_EINVAL, "%s: weights of size %s for a tensor of "
                   "size %s (they need the same length, 1-D)", fn,
                   nd_fmt_sizes(b1, sizeof b1, weights->ndim, weights->size),
                   nd_fmt_sizes(b2, sizeof b2, 1, t->size));
  if (minlength < 0)
    return nd_fail(e, ND_EINVAL, "%s: minlength must not be negative, got "
                   "%lld", fn, (long long)minlength);
  int64_t n = t->size[0], len = 0;
  if (n) {
    range r = range_of(t);
    if (r.lo < 0)
      return nd_fail(e, ND_EINVAL, "%s: values must not be negative, got "
                     "%lld", fn, (long long)r.lo);
    if (r.above)
      return nd_fail(e, ND_EOVERFLOW, "%s: counts of the values 0..%llu "
                     "are more than int64 can number", fn,
                     (unsigned long long)r.above);
    if (r.hi == INT64_MAX)
      return nd_fail(e, ND_EOVERFLOW, "%s: counts of the values 0..%lld "
                     "are more than int64 can number", fn, (long long)r.hi);
    len = r.hi + 1;
  }
  if (len < minlength) len = minlength;
  if (nd_alloc_tensor(e, out, weights ? ND_FLOAT64 : ND_INT64, 1, &len,
                      true)) {
    char m[sizeof e->msg];
    const char *why = strchr(e->msg, ':'); /* the allocation's reason */
    snprintf(m, sizeof m, "%s", why ? why + 2 : e->msg);
    return nd_fail(e, e->code, "%s: a table of %lld counts (values 0..%lld) "
                   "does not fit: %s", fn, (long long)len,
                   (long long)(len - 1), m);
  }
  nd_tensor w = ND_UNSET; /* weights as float64 (NumPy's cast) */
  if (weights && weights->dtype == ND_FLOAT64)
    nd_share(&w, weights);
  else if (weights && nd_to_dtype(e, &w, weights, ND_FLOAT64)) {
    nd_release(out);
    return nd_err_name(e, fn);
  }
  const char *x = nd_ptr(t);
  int64_t xs = t->stride[0] * nd_dtype_size(t->dtype);
  int64_t *c = nd_data(out), *four = NULL;
  if (weights) {
    wcounts[t->dtype](x, xs, n, nd_data(&w), w.stride[0], nd_data(out));
  } else if (n >= 4 * len && len <= 256 && /* 8 KB of lanes: uint8 data */
             (four = nd_scratch_alloc(NULL, fn, 4 * len, 8, true))) {
    counts[t->dtype](x, xs, n, four, 4); /* (without the scratch: 1 lane) */
    for (int64_t v = 0; v < len; v++)
      c[v] = four[4 * v] + four[4 * v + 1] + four[4 * v + 2] + four[4 * v + 3];
    nd_scratch_free(four);
  } else {
    counts[t->dtype](x, xs, n, c, 1);
  }
  nd_release(&w);
  return ND_OK;
}

/* ---- one_hot: out[i..., v - base] = 1 over index's elements ---- */
typedef struct { int64_t base; } hot_ctx;
#define HOT(E, name, T, kind)                                               \
  static void hot_##E(char **p, const int64_t *st, int64_t n, void *c) {    \
    int64_t base = ((const hot_ctx *)c)->base;                              \
    char *o = p[0];                                                         \
    const char *x = p[1];                                                   \
    for (int64_t i = 0; i < n; i++, o += st[0], x += st[1])                 \
      ((int64_t *)o)[IVAL(T, kind, x) - base] = 1;                          \
  }
ND_NATIVE_DTYPES(HOT)
#define HOT_FN(E, name, T, kind) [ND_##E] = hot_##E,
static const nd_loop_fn hots[ND_NDTYPES] = {ND_NATIVE_DTYPES(HOT_FN)};

nd_status nd_one_hot(nd_err *e, nd_tensor *out, const nd_tensor *index,
                     int64_t num_classes) {
  const char *fn = "one_hot";
  int64_t base = e->base;
  if (integers_only(e, fn, index, 0)) return e->code;
  if (num_classes < 1 && num_classes != -1) /* PyTorch refuses 0 too */
    return nd_fail(e, ND_EINVAL, "%s: num_classes must be at least 1 (or -1: "
                   "the largest position), got %lld", fn,
                   (long long)num_classes);
  if (index->ndim >= ND_MAX_DIMS)
    return nd_fail(e, ND_EINVAL, "%s: an index of %d dims gives %d, at most "
                   "%d supported", fn, index->ndim, index->ndim + 1,
                   ND_MAX_DIMS);
  if (!nd_numel(index) && num_classes < 0)
    return nd_fail(e, ND_EINVAL, "%s: an empty index needs num_classes "
                   "given (there is no largest position)", fn);
  if (nd_numel(index)) {
    range r = range_of(index);
    if (r.above && num_classes < 0)
      return nd_fail(e, ND_EOVERFLOW, "%s: position %llu gives too many "
                     "classes", fn, (unsigned long long)r.above);
    if (r.above)
      return nd_fail(e, ND_EINVAL, "%s: position %llu is out of range [%lld, "
                     "%lld] of num_classes %lld", fn,
                     (unsigned long long)r.above, (long long)base,
                     (long long)(num_classes - 1 + base),
                     (long long)num_classes);
    if (num_classes < 0 && r.hi >= base &&
        nd_add_ovf(r.hi - base, 1, &num_classes))
      return nd_fail(e, ND_EOVERFLOW, "%s: position %lld gives too many "
                     "classes", fn, (long long)r.hi);
    if (r.lo < base)
      return nd_fail(e, ND_EINVAL, "%s: position %lld is out of range: "
                     "positions start at %lld", fn, (long long)r.lo,
                     (long long)base);
    if (r.hi - base >= num_classes)
      return nd_fail(e, ND_EINVAL, "%s: position %lld is out of range [%lld, "
                     "%lld] of num_classes %lld", fn, (long long)r.hi,
                     (long long)base, (long long)(num_classes - 1 + base),
                     (long long)num_classes);
  }
  int64_t size[ND_MAX_DIMS];
  int nd = index->ndim;
  for (int d = 0; d < nd; d++) size[d] = index->size[d];
  size[nd] = num_classes;
  if (nd_alloc_tensor(e, out, ND_INT64, nd + 1, size, true))
    return nd_err_name(e, fn);
  if (!nd_numel(out)) return ND_OK;
  nd_tensor rows = *out; /* out without its last dim: one row per position */
  rows.ndim = nd;
  nd_iter it;
  const nd_tensor *ops[2] = {&rows, index};
  hot_ctx h = {base};
  nd_iter_init(&it, 2, ops);
  nd_iter_run(&it, hots[index->dtype], &h, 0, nd_iter_outer(&it));
  return ND_OK;
}
