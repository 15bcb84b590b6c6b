/* Sampling from an explicit generator (nd_generator: xoshiro256**, seeded
 * through splitmix64). No state lives here: every function takes the
 * caller's generator. Values are drawn in row-major order of the target's
 * indices, whatever its layout, so a seed gives one sequence however the
 * tensor is viewed; and only exact IEEE operations are used (random.h), so
 * it gives the same bits on every platform and instruction set. */
#include "random.h"
#include "half.h" /* the per-sample rounding below, inline */
#include <math.h>
#include <stdlib.h>

void nd_generator_seed(nd_generator *g, uint64_t seed) {
  for (int i = 0; i < 4; i++) { /* splitmix64 */
    uint64_t z = (seed += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    g->s[i] = z ^ (z >> 31);
  }
}
uint64_t nd_generator_next(nd_generator *g) { return nd_next(g); }

/* 24 bits for float32 targets, so the value is exact and below 1. */
static inline double u24(nd_generator *g) {
  return (double)(nd_next(g) >> 40) * 0x1.0p-24;
}

/* What to draw: uniform a + w u (u in [0, 1), values >= hi become top,
 * the largest value of the dtype below hi); normal a + w z; integers
 * lo + [0, span); bernoulli u < a. */
enum { UNIFORM, NORMAL, INTEGER, BERNOULLI };
typedef struct law {
  int kind;
  double a, w, hi, top;
  int64_t lo;
  uint64_t span;
} law;

#define ND_X_SAMPLE(E, name, T, k)                                          \
  case ND_##E: {                                                            \
    T *p = out;                                                             \
    if (d->kind == UNIFORM) {                                               \
      int narrow = dtype == ND_FLOAT32;                                     \
      for (int64_t i = 0; i < n; i++) {                                     \
        T v = (T)(d->a + d->w * (narrow ? u24(g) : nd_u53(g)));             \
        p[i] = (double)v >= d->hi && d->hi > d->a ? (T)d->top : v;          \
      }                                                                     \
    } else if (d->kind == NORMAL) {                                         \
      double z[256];                                                        \
      for (int64_t i = 0; i < n; i += 256) {                                \
        int64_t m = n - i < 256 ? n - i : 256;                              \
        nd_normal_fill(g, z, m);                                            \
        for (int64_t j = 0; j < m; j++) p[i + j] = (T)(d->a + d->w * z[j]); \
      }                                                                     \
    } else if (d->kind == INTEGER) {                                        \
      for (int64_t i = 0; i < n; i++)                                       \
        p[i] = (T)(int64_t)((uint64_t)d->lo + nd_below(g, d->span));        \
    } else {                                                                \
      for (int64_t i = 0; i < n; i++) p[i] = (T)(nd_u53(g) < d->a);         \
    }                                                                       \
    break;                                                                  \
  }

/* n values of dtype into out (compact). The state is worked on in a local
 * copy: writes through out (int64_t) could alias g's words otherwise. */
static void sample(nd_generator *gen, const law *d, int dtype, void *out,
                   int64_t n) {
  if (d->kind == NORMAL && dtype == ND_FLOAT64 && d->a == 0 && d->w == 1) {
    nd_normal_fill(gen, out, n); /* randn: straight into the result */
    return;
  }
  nd_generator local = *gen, *g = &local;
  if (d->kind == UNIFORM && dtype == ND_FLOAT64 && d->a == 0 && d->w == 1) {
    double *p = out; /* rand: u < 1 needs no clamp */
    for (int64_t i = 0; i < n; i++) p[i] = nd_u53(g);
  } else {
    switch (dtype) { ND_NATIVE_DTYPES(ND_X_SAMPLE) }
  }
  *gen = local;
}

static nd_status nonnull(nd_err *e, const char *fn, const void *t,
                         const nd_generator *g) {
  if (!t) return nd_fail(e, ND_EINVAL, "%s: tensor is NULL", fn);
  if (!g) return nd_fail(e, ND_EINVAL, "%s: generator is NULL", fn);
  return ND_OK;
}

/* Draws into t in row-major order: directly when t is compact, else into
 * a compact temporary copied into t. */
static nd_status fill(nd_err *e, const char *fn, const nd_tensor *t,
                      nd_generator *g, const law *d) {
  if (nd_check_writable(e, fn, t)) return e->code;
  int64_t n = nd_numel(t);
  if (nd_is_half(t->dtype)) { /* float32 samples, rounded */
    nd_tensor f;
    if (nd_alloc_tensor(e, &f, ND_FLOAT32, t->ndim, t->size, false))
      return e->code;
    sample(g, d, ND_FLOAT32, nd_data(&f), n);
    if (d->kind == UNIFORM) { /* below the top, as rounded: [a, a + w) */
      float *p = nd_data(&f), top = (float)(d->a + d->w);
      for (int64_t i = 0; i < n; i++) {
        uint16_t h = t->dtype == ND_FLOAT16 ? nd_f2h(p[i])
                                            : nd_f2bf(p[i]);
        float r = t->dtype == ND_FLOAT16 ? nd_h2f(h)
                                         : nd_bf2f(h);
        if (r >= top && p[i] < top) { /* the half below it */
          h = (uint16_t)(h + (r > 0 ? -1 : 1));
          p[i] = t->dtype == ND_FLOAT16 ? nd_h2f(h)
                                        : nd_bf2f(h);
        }
      }
    }
    nd_status st = nd_copy(e, t, &f);
    nd_release(&f);
    return st;
  }
  if (nd_is_contiguous(t)) {
    sample(g, d, t->dtype, nd_data(t), n);
    return ND_OK;
  }
  nd_tensor buf;
  if (nd_alloc_tensor(e, &buf, t->dtype, t->ndim, t->size, false))
    return e->code;
  sample(g, d, t->dtype, nd_data(&buf), n);
  nd_status st = nd_copy(e, t, &buf);
  nd_release(&buf);
  return st;
}

static nd_status floating(nd_err *e, const char *fn, const nd_tensor *t,
                          const nd_generator *g) {
  if (nonnull(e, fn, t, g)) return e->code;
  if (nd_dtype_kind(t->dtype) == 'f') return ND_OK;
  return nd_fail(e, ND_EINVAL, "%s: dtype %s is not a floating dtype "
                 "(float16, bfloat16, float32 or float64)", fn,
                 nd_dtype_name(t->dtype));
}

nd_status nd_uniform(nd_err *e, const nd_tensor *t, nd_generator *g,
                     double lo, double hi) {
  if (floating(e, "uniform", t, g)) return e->code;
  if (!(lo <= hi) || !isfinite(hi - lo))
    return nd_fail(e, ND_EINVAL, "uniform: need finite lo <= hi, got lo %.17g "
                   "and hi %.17g", lo, hi);
  /* Bounds the dtype cannot hold raise, as a written number does (and as
   * PyTorch's uniform_ does): clamped samples would pile up at its max. */
  nd_operand b;
  nd_operand_number(&b, lo);
  if (nd_scalar_fits(e, "uniform", t->dtype, &b)) return e->code;
  nd_operand_number(&b, hi);
  if (nd_scalar_fits(e, "uniform", t->dtype, &b)) return e->code;
  law d = {UNIFORM, lo, hi - lo, hi, nextafter(hi, -INFINITY), 0, 0};
  if (t->dtype == ND_FLOAT32) { /* the largest float below hi */
    float f = (float)hi;
    if ((double)f >= hi) f = nextafterf(f, -INFINITY);
    d.top = f;
  }
  return fill(e, "uniform", t, g, &d);
}

nd_status nd_rand(nd_err *e, const nd_tensor *t, nd_generator *g) {
  if (floating(e, "rand", t, g)) return e->code;
  return nd_uniform(e, t, g, 0, 1);
}

nd_status nd_normal(nd_err *e, const nd_tensor *t, nd_generator *g,
                    double mean, double std) {
  if (floating(e, "normal", t, g)) return e->code;
  if (!isfinite(mean) || !(std >= 0) || !isfinite(std))
    return nd_fail(e, ND_EINVAL, "normal: need a finite mean and a finite "
                   "std >= 0, got mean %.17g and std %.17g", mean, std);
  law d = {NORMAL, mean, std, 0, 0, 0, 0};
  return fill(e, "normal", t, g, &d);
}

nd_status nd_randn(nd_err *e, const nd_tensor *t, nd_generator *g) {
  if (floating(e, "randn", t, g)) return e->code;
  return nd_normal(e, t, g, 0, 1);
}

/* Whether every integer in [lo, hi) is a value of dtype. */
static int representable(int dtype, int64_t lo, int64_t hi) {
  switch (dtype) {
  case ND_FLOAT32: return lo >= -(1LL << 24) && hi - 1 <= 1LL << 24;
  case ND_FLOAT64: return lo >= -(1LL << 53) && hi - 1 <= 1LL << 53;
  default: {
    int64_t min;
    uint64_t max;
    nd_dtype_bounds(dtype, &min, &max);
    return lo >= min && (hi - 1 < 0 || (uint64_t)(hi - 1) <= max);
  }
  }
}

nd_status nd_randint(nd_err *e, const nd_tensor *t, nd_generator *g,
                     int64_t lo, int64_t hi) {
  if (nonnull(e, "randint", t, g)) return e->code;
  if (lo >= hi)
    return nd_fail(e, ND_EINVAL, "randint: low %lld must be below high %lld",
                   (long long)lo, (long long)hi);
  if (!representable(t->dtype, lo, hi))
    return nd_fail(e, ND_EINVAL, "randint: range [%lld, %lld) does not fit "
                   "dtype %s", (long long)lo, (long long)hi,
                   nd_dtype_name(t->dtype));
  law d = {INTEGER, 0, 0, 0, 0, lo, (uint64_t)hi - (uint64_t)lo};
  return fill(e, "randint", t, g, &d);
}

nd_status nd_bernoulli(nd_err *e, const nd_tensor *t, nd_generator *g,
                       double p) {
  if (nonnull(e, "bernoulli", t, g)) return e->code;
  if (!(p >= 0 && p <= 1))
    return nd_fail(e, ND_EINVAL, "bernoulli: probability %.17g is outside "
                   "[0, 1]", p);
  law d = {BERNOULLI, p, 0, 0, 0, 0, 0};
  return fill(e, "bernoulli", t, g, &d);
}

/* A compact float64 copy of t (for reading probabilities). */
static nd_status as_f64(nd_err *e, nd_tensor *out, const nd_tensor *t) {
  if (t->dtype == ND_FLOAT64 && nd_is_contiguous(t)) {
    nd_share(out, t);
    return ND_OK;
  }
  return nd_to_dtype(e, out, t, ND_FLOAT64);
}

nd_status nd_bernoulli_tensor(nd_err *e, nd_tensor *out, nd_generator *g,
                              const nd_tensor *p) {
  if (floating(e, "bernoulli", p, g)) return e->code;
  if (!out) return nd_fail(e, ND_EINVAL, "bernoulli: out is NULL");
  nd_tensor pf;
  if (as_f64(e, &pf, p)) return e->code;
  const double *pp = nd_data(&pf);
  int64_t n = nd_numel(p);
  for (int64_t i = 0; i < n; i++)
    if (!(pp[i] >= 0 && pp[i] <= 1)) { /* the message reads pf: first */
      nd_fail(e, ND_EINVAL, "bernoulli: probability %.17g (element %lld in "
              "row-major order) is outside [0, 1]", pp[i],
              (long long)(i + e->base));
      nd_release(&pf);
      return e->code;
    }
  if (nd_alloc_tensor(e, out, p->dtype, p->ndim, p->size, false)) {
    nd_release(&pf);
    return e->code;
  }
  if (p->dtype == ND_FLOAT32) {
    float *o = nd_data(out);
    for (int64_t i = 0; i < n; i++) o[i] = nd_u53(g) < pp[i];
  } else if (p->dtype == ND_FLOAT64) {
    double *o = nd_data(out);
    for (int64_t i = 0; i < n; i++) o[i] = nd_u53(g) < pp[i];
  } else { /* float16, bfloat16: 0 and 1 */
    uint16_t *o = nd_data(out);
    const uint16_t one = p->dtype == ND_FLOAT16 ? nd_float_to_half(1)
                                                : nd_float_to_bf16(1);
    for (int64_t i = 0; i < n; i++) o[i] = nd_u53(g) < pp[i] ? one : 0;
  }
  nd_release(&pf);
  return ND_OK;
}

nd_status nd_randperm(nd_err *e, nd_tensor *out, nd_generator *g,
                      int64_t n) {
  if (nonnull(e, "randperm", out, g)) return e->code;
  if (n < 0)
    return nd_fail(e, ND_EINVAL, "randperm: n must be >= 0, got %lld",
                   (long long)n);
  if (nd_alloc_tensor(e, out, ND_INT64, 1, &n, false)) return e->code;
  int64_t *p = nd_data(out);
  for (int64_t i = 0; i < n; i++) p[i] = i;
  for (int64_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
    int64_t j = (int64_t)nd_below(g, (uint64_t)i + 1), v = p[i];
    p[i] = p[j];
    p[j] = v;
  }
  return ND_OK;
}

/* ---- multinomial ---- */
typedef struct keyed { double key; int64_t i; } keyed;
static int by_key(const void *a, const void *b) {
  const keyed *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return (x->i > y->i) - (x->i < y->i);
}

/* Checks every row: weights finite and >= 0, some positive, and enough
 * positive ones to draw n without replacement. */
static nd_status check_rows(nd_err *e, const double *w, int64_t rows,
                            int64_t k, int64_t n, int replacement) {
  for (int64_t r = 0; r < rows; r++) {
    int64_t pos = 0;
    for (int64_t c = 0; c < k; c++) {
      double v = w[r * k + c];
      if (!(v >= 0) || !isfinite(v))
        return nd_fail(e, ND_EINVAL, "multinomial: probability %.17g (row "
                       "%lld, category %lld) must be finite and >= 0", v,
                       (long long)(r + e->base), (long long)(c + e->base));
      pos += v > 0;
    }
    if (pos == 0)
      return nd_fail(e, ND_EINVAL, "multinomial: row %lld has no non-zero "
                     "probability", (long long)(r + e->base));
    if (!replacement && n > pos)
      return nd_fail(e, ND_EINVAL, "multinomial: cannot draw %lld samples "
                     "without replacement from %lld non-zero categories "
                     "(row %lld)", (long long)n, (long long)pos,
                     (long long)(r + e->base));
  }
  return ND_OK;
}

/* With replacement: inverse of the running sum, by bisection. */
static void draw_with(nd_generator *g, const double *w, double *cdf,
                      int64_t k, int64_t n, int64_t *out) {
  double s = 0;
  int64_t last = 0;
  for (int64_t c = 0; c < k; c++) {
    cdf[c] = s += w[c];
    if (w[c] > 0) last = c;
  }
  for (int64_t j = 0; j < n; j++) {
    double x = nd_u53(g) * s;
    int64_t lo = 0, hi = last; /* the first c with cdf[c] > x */
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if (cdf[mid] > x) hi = mid; else lo = mid + 1;
    }
    out[j] = lo;
  }
}

/* Without replacement: exponential clocks E_c / w_c, the n earliest in
 * order (Efraimidis and Spirakis), which is sequential drawing. */
static void draw_without(nd_generator *g, const double *w, keyed *kv,
                         int64_t k, int64_t n, int64_t *out) {
  int64_t m = 0;
  for (int64_t c = 0; c < k; c++) {
    double clock = -nd_exact_log(nd_u53_open0(g));
    if (w[c] > 0) kv[m++] = (keyed){clock / w[c], c};
  }
  qsort(kv, (size_t)m, sizeof *kv, by_key);
  for (int64_t j = 0; j < n; j++) out[j] = kv[j].i;
}

nd_status nd_multinomial(nd_err *e, nd_tensor *out, nd_generator *g,
                         const nd_tensor *probs, int64_t n, int replacement) {
  if (nonnull(e, "multinomial", probs, g)) return e->code;
  if (!out) return nd_fail(e, ND_EINVAL, "multinomial: out is NULL");
  if (probs->ndim != 1 && probs->ndim != 2)
    return nd_fail(e, ND_EINVAL, "multinomial: probs must be 1-D or 2-D, "
                   "got %d-D", probs->ndim);
  if (n < 0)
    return nd_fail(e, ND_EINVAL, "multinomial: number of samples must be "
                   ">= 0, got %lld", (long long)n);
  int64_t rows = probs->ndim == 2 ? probs->size[0] : 1;
  int64_t k = probs->size[probs->ndim - 1];
  if (k == 0 && rows > 0)
    return nd_fail(e, ND_EINVAL, "multinomial: probs has no categories");
  nd_tensor pf, scratch;
  if (as_f64(e, &pf, probs)) return e->code;
  const double *w = nd_data(&pf);
  int64_t sz[2] = {rows, n}, words = replacement ? k : 2 * k;
  if (check_rows(e, w, rows, k, n, replacement) ||
      nd_alloc_tensor(e, &scratch, ND_FLOAT64, 1, &words, false)) {
    nd_release(&pf);
    return e->code;
  }
  if (nd_alloc_tensor(e, out, ND_INT64, probs->ndim, sz + 2 - probs->ndim,
                      false)) {
    nd_release(&pf);
    nd_release(&scratch);
    return e->code;
  }
  int64_t *o = nd_data(out);
  for (int64_t r = 0; r < rows; r++) {
    if (replacement)
      draw_with(g, w + r * k, nd_data(&scratch), k, n, o + r * n);
    else
      draw_without(g, w + r * k, nd_data(&scratch), k, n, o + r * n);
  }
  nd_release(&pf);
  nd_release(&scratch);
  return ND_OK;
}
