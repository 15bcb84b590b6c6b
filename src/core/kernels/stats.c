/* Statistics built from the reductions and elementwise ops: var, std,
 * logsumexp, softmax, log_softmax, count_nonzero, the histogram (histc)
 * and norm (p = 2 is reduce.c's kernel). Integer inputs are computed in
 * float64. The max-shift of logsumexp and softmax ignores infinite maxima
 * (as PyTorch's), so a lane of -inf gives -inf (logsumexp) and one holding
 * +inf stays finite where it can. */
#ifndef __clang__ /* clang vectorises these loops at -O2 already */
#pragma GCC optimize("O3")
#endif
#include "kernels.h"
#include <math.h>

/* x becomes t (shared) when t is floating, else a float64 copy. */
static nd_status floated(nd_err *e, nd_tensor *x, const nd_tensor *t) {
  if (nd_dtype_kind(t->dtype) == 'f') {
    nd_share(x, t);
    return ND_OK;
  }
  return nd_to_dtype(e, x, t, ND_FLOAT64);
}

static nd_operand num(double v) {
  nd_operand o = {NULL, ND_FLOAT64, v, 0};
  return o;
}
static nd_operand ten(const nd_tensor *t) {
  nd_operand o = {t, t->dtype, 0, 0};
  return o;
}

/* The number of elements each reduction over dims sees. */
static int64_t reduced_count(const nd_tensor *t, int ndims, const int *dims) {
  int64_t n = 1;
  if (!dims) return nd_numel(t);
  for (int i = 0; i < ndims; i++)
    if (dims[i] >= 0 && dims[i] < t->ndim) n *= t->size[dims[i]];
  return n;
}

nd_status nd_var(nd_err *e, nd_tensor *out, const nd_tensor *t, int ndims,
                 const int *dims, int keepdim, double correction, int std) {
  const char *fn = std ? "std" : "var";
  nd_tensor x = ND_UNSET, m = ND_UNSET, d = ND_UNSET;
  if (floated(e, &x, t) ||
      nd_reduce(e, &m, ND_R_MEAN, &x, ndims, dims, 1))
    goto fail;
  nd_operand ox = ten(&x), om = ten(&m), od;
  if (nd_binary(e, &d, ND_NEW, ND_SUB, &ox, &om)) goto fail;
  od = ten(&d);
  if (nd_binary(e, &d, ND_INPLACE, ND_MUL, &od, &od) ||
      nd_reduce(e, out, ND_R_SUM, &d, ndims, dims, keepdim))
    goto fail;
  double div = (double)reduced_count(t, ndims, dims) - correction;
  nd_operand oo = ten(out), dv = num(div);
  if (div <= 0 ? nd_fill(e, out, NAN)
               : nd_binary(e, out, ND_INPLACE, ND_DIV, &oo, &dv))
    goto fail;
  if (std && nd_unary(e, out, ND_INPLACE, ND_SQRT, out)) goto fail;
  nd_release(&x);
  nd_release(&m);
  nd_release(&d);
  return ND_OK;
fail:
  nd_release(&x);
  nd_release(&m);
  nd_release(&d);
  nd_release(out);
  return nd_err_name(e, fn);
}

/* The max over dims (kept as size 1), infinities replaced by 0. */
static nd_status shift(nd_err *e, nd_tensor *m, const nd_tensor *x,
                       int ndims, const int *dims) {
  nd_tensor mx = ND_UNSET, fin = ND_UNSET;
  nd_operand a, z = num(0);
  nd_status s = nd_reduce(e, &mx, ND_R_MAX, x, ndims, dims, 1);
  if (!s) s = nd_unary(e, &fin, ND_NEW, ND_ISFINITE, &mx);
  a = ten(&mx);
  if (!s) s = nd_where(e, m, ND_NEW, &fin, &a, &z);
  nd_release(&mx);
  nd_release(&fin);
  return s;
}

nd_status nd_logsumexp(nd_err *e, nd_tensor *out, const nd_tensor *t,
                       int ndims, const int *dims, int keepdim) {
  nd_tensor x = ND_UNSET, m = ND_UNSET, d = ND_UNSET, s = ND_UNSET;
  if (floated(e, &x, t)) goto fail;
  if (reduced_count(t, ndims, dims) == 0) { /* log(0) = -inf, any shape */
    if (nd_reduce(e, out, ND_R_SUM, &x, ndims, dims, keepdim) ||
        nd_fill(e, out, -INFINITY))
      goto fail;
    nd_release(&x);
    return ND_OK;
  }
  if (shift(e, &m, &x, ndims, dims)) goto fail;
  nd_operand ox = ten(&x), om = ten(&m), os;
  if (nd_binary(e, &d, ND_NEW, ND_SUB, &ox, &om) ||
      nd_unary(e, &d, ND_INPLACE, ND_EXP, &d) ||
      nd_reduce(e, &s, ND_R_SUM, &d, ndims, dims, 1) ||
      nd_unary(e, &s, ND_INPLACE, ND_LOG, &s))
    goto fail;
  os = ten(&s);
  if (nd_binary(e, &s, ND_INPLACE, ND_ADD, &os, &om)) goto fail;
  if (keepdim) {
    *out = s;
    s.storage = NULL;
  } else {
    int64_t sz[ND_MAX_DIMS];
    int n = 0, red[ND_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) red[i] = dims == NULL;
    for (int i = 0; dims && i < ndims; i++) red[dims[i]] = 1;
    for (int i = 0; i < t->ndim; i++)
      if (!red[i]) sz[n++] = t->size[i];
    if (nd_view(e, out, &s, n, sz)) goto fail;
  }
  nd_release(&x);
  nd_release(&m);
  nd_release(&d);
  nd_release(&s);
  return ND_OK;
fail:
  nd_release(&x);
  nd_release(&m);
  nd_release(&d);
  nd_release(&s);
  nd_release(out);
  return nd_err_name(e, "logsumexp");
}

nd_status nd_softmax(nd_err *e, nd_tensor *out, const nd_tensor *t, int dim,
                     int log) {
  const char *fn = log ? "log_softmax" : "softmax";
  nd_tensor x = ND_UNSET, m = ND_UNSET, s = ND_UNSET, ex = ND_UNSET;
  if (t->ndim == 0 && (dim == 0 || dim == -1)) dim = 0;
  else {
    if (dim < 0) dim += t->ndim;
    if (nd_check_dim(e, fn, dim, t->ndim)) return e->code;
  }
  if (floated(e, &x, t)) return nd_err_name(e, fn);
  if (t->ndim == 0) { /* one element: view it as 1-D */
    x.ndim = 1;
    x.size[0] = 1;
    x.stride[0] = 1;
  }
  if (nd_alloc_tensor(e, out, x.dtype, t->ndim, t->size, false)) goto fail;
  if (nd_numel(t) == 0) {
    nd_release(&x);
    return ND_OK;
  }
  nd_tensor o = *out; /* out seen with x's shape */
  o.ndim = x.ndim;
  o.size[0] = x.size[0];
  if (t->ndim == 0) o.stride[0] = 1;
  if (shift(e, &m, &x, 1, &dim)) goto fail;
  nd_operand ox = ten(&x), om = ten(&m), oo = ten(&o), os;
  if (nd_binary(e, &o, ND_OUT, ND_SUB, &ox, &om)) goto fail;
  if (!log) {
    if (nd_unary(e, &o, ND_INPLACE, ND_EXP, &o) ||
        nd_reduce(e, &s, ND_R_SUM, &o, 1, &dim, 1))
      goto fail;
    os = ten(&s);
    if (nd_binary(e, &o, ND_INPLACE, ND_DIV, &oo, &os)) goto fail;
  } else {
    if (nd_unary(e, &ex, ND_NEW, ND_EXP, &o) ||
        nd_reduce(e, &s, ND_R_SUM, &ex, 1, &dim, 1) ||
        nd_unary(e, &s, ND_INPLACE, ND_LOG, &s))
      goto fail;
    os = ten(&s);
    if (nd_binary(e, &o, ND_INPLACE, ND_SUB, &oo, &os)) goto fail;
  }
  nd_release(&x);
  nd_release(&m);
  nd_release(&s);
  nd_release(&ex);
  return ND_OK;
fail:
  nd_release(&x);
  nd_release(&m);
  nd_release(&s);
  nd_release(&ex);
  nd_release(out);
  return nd_err_name(e, fn);
}

nd_status nd_count_nonzero(nd_err *e, nd_tensor *out, const nd_tensor *t,
                           int ndims, const int *dims) {
  nd_tensor b = ND_UNSET;
  nd_operand a = ten(t), z = {NULL, ND_INT64, 0, 0};
  nd_status s = nd_binary(e, &b, ND_NEW, ND_NE, &a, &z);
  if (!s) s = nd_reduce(e, out, ND_R_SUM, &b, ndims, dims, 0);
  nd_release(&b);
  return s ? nd_err_name(e, "count_nonzero") : ND_OK;
}

/* ---- histc ---- */
typedef struct {
  double lo, hi;
  int64_t bins, *c; /* 4 interleaved partial histograms: c[4 * bin + lane] */
} hist_ctx;

#define HIST(E, name, T, kind)                                              \
  static void hist_##E(char **p, const int64_t *st, int64_t n, void *ctx) { \
    const hist_ctx *h = ctx;                                                \
    const double lo = h->lo, hi = h->hi, scale = h->bins / (hi - lo);     \
    const int64_t bins = h->bins;                                           \
    int64_t *c = h->c;                                                      \
    const char *x = p[0];                                                   \
    for (int64_t i = 0; i < n; i++) {                                       \
      double v = (double)*(const T *)(x + i * st[0]);                       \
      if (v >= lo && v <= hi) {                                             \
        int64_t b = (int64_t)((v - lo) * scale);                            \
        if (b >= bins) b = bins - 1;                                        \
        c[4 * b + (i & 3)]++;                                               \
      }                                                                     \
    }                                                                       \
  }
ND_NATIVE_DTYPES(HIST)
#define FNS(E, name, T, kind) [ND_##E] = hist_##E,
static const nd_loop_fn hists[ND_NDTYPES] = {ND_NATIVE_DTYPES(FNS)};

static nd_status data_range(nd_err *e, const nd_tensor *t, double *lo,
                            double *hi) {
  nd_tensor a = ND_UNSET, b = ND_UNSET;
  nd_status s = nd_reduce(e, &a, ND_R_MIN, t, 0, NULL, 0);
  if (!s) s = nd_reduce(e, &b, ND_R_MAX, t, 0, NULL, 0);
  if (!s) s = nd_get(e, &a, NULL, lo);
  if (!s) s = nd_get(e, &b, NULL, hi);
  nd_release(&a);
  nd_release(&b);
  return s;
}

nd_status nd_histc(nd_err *e, nd_tensor *out, const nd_tensor *t,
                   int64_t bins, double lo, double hi) {
  if (nd_is_half(t->dtype)) { /* in float32 (half_adapt.c) */
    nd_tensor w_ = ND_UNSET, r_ = ND_UNSET;
    if (nd_half_widen(e, "histc", &w_, t)) return e->code;
    nd_status s_ = nd_histc(e, &r_, &w_, bins, lo, hi);
    nd_release(&w_);
    return s_ ? s_ : nd_half_narrow(e, "histc", out, &r_, t->dtype);
  }
  if (bins <= 0)
    return nd_fail(e, ND_EINVAL, "histc: bins must be positive, got %lld",
                   (long long)bins);
  if (!(lo <= hi))
    return nd_fail(e, ND_EINVAL, "histc: min %.17g must not exceed max %.17g",
                   lo, hi);
  int64_t cb;
  if (nd_mul_ovf(bins, 32, &cb))
    return nd_fail(e, ND_EOVERFLOW, "histc: %lld bins are too many",
                   (long long)bins);
  if (lo == hi && nd_numel(t) > 0) {
    if (data_range(e, t, &lo, &hi)) return nd_err_name(e, "histc");
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  if (!isfinite(lo) || !isfinite(hi))
    return nd_fail(e, ND_EINVAL, "histc: range [%g, %g] is not finite", lo,
                   hi);
  nd_storage *cs;
  if (nd_storage_new(e, &cs, cb, true)) return nd_err_name(e, "histc");
  if (nd_alloc_tensor(e, out, ND_FLOAT64, 1, &bins, false)) {
    nd_storage_release(cs);
    return nd_err_name(e, "histc");
  }
  hist_ctx h = {lo, hi, bins, cs->data};
  if (nd_numel(t) > 0) {
    nd_iter it;
    const nd_tensor *ops[1] = {t};
    nd_iter_init(&it, 1, ops);
    nd_iter_run(&it, hists[t->dtype], &h, 0, nd_iter_outer(&it));
  }
  double *o = nd_data(out);
  for (int64_t b = 0; b < bins; b++)
    o[b] = (double)(h.c[4 * b] + h.c[4 * b + 1] + h.c[4 * b + 2] + h.c[4 * b + 3]);
  nd_storage_release(cs);
  return ND_OK;
}

/* ---- p-norms ---- */
/* 2: the sqsum kernel above; otherwise built from |t|: 1 a sum, inf a
 * max, -inf a min, 0 a count of nonzeros, any other p (sum |t|^p)^(1/p).
 * An empty reduction gives 0 (the -inf norm has no identity: an error). */
nd_status nd_norm(nd_err *e, nd_tensor *out, const nd_tensor *t, double p,
                  int ndims, const int *dims, int keepdim) {
  if (p == 2) return nd_reduce(e, out, ND_R_NORM, t, ndims, dims, keepdim);
  if (p != p)
    return nd_fail(e, ND_EINVAL, "norm: p must be a number, got nan");
  nd_tensor x = ND_UNSET, a = ND_UNSET, r = ND_UNSET;
  int od = nd_dtype_kind(t->dtype) == 'f' ? t->dtype : ND_FLOAT64;
  int red[ND_MAX_DIMS];
  nd_status s = nd_reduced_mask(e, "norm", t, ndims, dims, red);
  int64_t N = 1;
  for (int i = 0; i < t->ndim; i++)
    if (red[i]) N *= t->size[i];
  if (!s) s = nd_to_dtype(e, &x, t, od);
  if (!s) s = nd_unary(e, &a, ND_NEW, ND_ABS, &x);
  if (s) goto done;
  if (N == 0 && p == -INFINITY) {
    s = nd_fail(e, ND_EINVAL, "norm: the -inf norm of an empty reduction "
                "is undefined");
  } else if (N == 0 || p == 1) {
    s = nd_reduce(e, out, ND_R_SUM, &a, ndims, dims, keepdim);
  } else if (isinf(p)) {
    s = nd_reduce(e, out, p > 0 ? ND_R_MAX : ND_R_MIN, &a, ndims, dims, keepdim);
  } else if (p == 0) {
    nd_operand oa = {&a, od, 0, 0}, z = {NULL, ND_INT64, 0, 0};
    s = nd_binary(e, &r, ND_NEW, ND_NE, &oa, &z);
    nd_tensor c = ND_UNSET;
    if (!s) s = nd_reduce(e, &c, ND_R_SUM, &r, ndims, dims, keepdim);
    if (!s) s = nd_to_dtype(e, out, &c, od);
    nd_release(&c);
  } else {
    nd_operand oa = {&a, od, 0, 0}, op = {NULL, ND_FLOAT64, p, 0};
    nd_operand ip = {NULL, ND_FLOAT64, 1 / p, 0}, orr;
    s = nd_binary(e, &a, ND_INPLACE, ND_POW, &oa, &op);
    if (!s) s = nd_reduce(e, &r, ND_R_SUM, &a, ndims, dims, keepdim);
    orr = (nd_operand){&r, od, 0, 0};
    if (!s) s = nd_binary(e, out, ND_NEW, ND_POW, &orr, &ip);
  }
done:
  nd_release(&x);
  nd_release(&a);
  nd_release(&r);
  return s ? nd_err_name(e, "norm") : ND_OK;
}
