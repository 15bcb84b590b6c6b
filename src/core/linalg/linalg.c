/* Linear algebra, the shared part: argument checks, batch walking, moving
 * matrices between strided views and LAPACK's buffers, workspace and
 * LAPACK's info codes. The families live in linalg_lu.c (solve inv det
 * slogdet matrix_power), linalg_factor.c (cholesky qr eigh eigvalsh),
 * linalg_svd.c (svd svdvals lstsq pinv matrix_rank cond norm) and
 * linalg_small.c (unrolled 2x2..4x4 kernels). */
#include "linalg.h"
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>

#define LAPACK_ENTRY(p)                                                      \
  {#p[0],     p##getrf_, p##getri_, p##potrf_, p##gelqf_, p##orglq_,         \
   p##gesdd_, p##syevd_, p##gelsd_}
static const nd_lin_lapack lapack_s = LAPACK_ENTRY(s);
static const nd_lin_lapack lapack_d = LAPACK_ENTRY(d);

const nd_lin_lapack *nd_lin_lapack_for(int dtype) {
  return dtype == ND_FLOAT32 ? &lapack_s : &lapack_d;
}

double nd_lin_eps(int dtype) {
  return dtype == ND_FLOAT32 ? (double)FLT_EPSILON : DBL_EPSILON;
}

static const char *shape(char *buf, const nd_tensor *t) {
  return nd_fmt_sizes(buf, ND_SIZES_BUF, t->ndim, t->size);
}

nd_status nd_lin_int(nd_err *e, const char *fn, int64_t v, int *out) {
  if (v > INT_MAX)
    return nd_fail(e, ND_EOVERFLOW, "%s: size %lld exceeds LAPACK's 32-bit "
                   "int", fn, (long long)v);
  *out = (int)v;
  return ND_OK;
}

nd_status nd_lin_check(nd_err *e, const char *fn, const nd_tensor *a,
                       int square, nd_lin_batch *b) {
  char s[ND_SIZES_BUF];
  if (a->ndim < 2)
    return nd_fail(e, ND_EINVAL, "%s: expected a matrix (at least 2-D), got "
                   "shape %s", fn, shape(s, a));
  const int64_t m = a->size[a->ndim - 2], n = a->size[a->ndim - 1];
  if (square && m != n)
    return nd_fail(e, ND_EINVAL, "%s: expected square matrices, got shape "
                   "%s (%lld x %lld)", fn, shape(s, a), (long long)m,
                   (long long)n);
  int i;
  if (nd_lin_int(e, fn, m, &i) || nd_lin_int(e, fn, n, &i)) return e->code;
  const int mdims = 2;
  return nd_lin_broadcast(e, fn, 1, &a, &mdims, b);
}

nd_status nd_lin_broadcast(nd_err *e, const char *fn, int n,
                           const nd_tensor *const *ts, const int *mdims,
                           nd_lin_batch *b) {
  if (nd_broadcast_shape(e, fn, n, ts, mdims, &b->nbd, b->size))
    return e->code;
  b->count = 1;
  for (int j = 0; j < b->nbd; j++)
    if (nd_mul_ovf(b->count, b->size[j], &b->count))
      return nd_fail(e, ND_EOVERFLOW, "%s: batch too large", fn);
  return ND_OK;
}

nd_status nd_lin_rhs(nd_err *e, const char *fn, const nd_tensor *a,
                     const nd_tensor *bt, int64_t rows, const char *name,
                     nd_lin_batch *b, int mdims[2], int *nrhs) {
  const int vec = bt->ndim == 1;
  if (bt->ndim == 0 || bt->size[bt->ndim - 1 - !vec] != rows) {
    char s1[ND_SIZES_BUF], s2[ND_SIZES_BUF];
    return nd_fail(e, ND_EINVAL, "%s: A of shape %s and B of shape %s do not "
                   "match (B must be (%s,) or (..., %s, k) with %s = %lld)",
                   fn, shape(s1, a), shape(s2, bt), name, name, name,
                   (long long)rows);
  }
  const nd_tensor *ops[2] = {a, bt};
  mdims[0] = 2;
  mdims[1] = vec ? 1 : 2;
  if (nd_lin_broadcast(e, fn, 2, ops, mdims, b)) return e->code;
  *nrhs = 1;
  return vec ? ND_OK : nd_lin_int(e, fn, bt->size[bt->ndim - 1], nrhs);
}

nd_lin_mat nd_lin_at(const nd_lin_batch *b, const nd_tensor *t, int mdims,
                     int64_t k) {
  nd_lin_mat m;
  const int nd = t->ndim, tb = nd - mdims;
  m.dt = t->dtype;
  if (mdims == 2) {
    m.rows = t->size[nd - 2];
    m.rs = t->stride[nd - 2];
    m.cols = t->size[nd - 1];
    m.cs = t->stride[nd - 1];
  } else {
    m.rows = t->size[nd - 1];
    m.rs = t->stride[nd - 1];
    m.cols = 1;
    m.cs = 0;
  }
  int64_t off = t->offset;
  if (tb == 1 && b->nbd == 1) { /* one batch dim: no division */
    off += t->size[0] != 1 ? k * t->stride[0] : 0;
    k = 0;
  }
  for (int j = b->nbd - 1; j >= 0 && k; j--) {
    const int64_t idx = k % b->size[j];
    k /= b->size[j];
    const int i = j - (b->nbd - tb);
    if (i >= 0 && t->size[i] != 1) off += idx * t->stride[i];
  }
  m.p = (const char *)t->storage->data + off * nd_dtype_size(t->dtype);
  return m;
}

nd_status nd_lin_new(nd_err *e, nd_tensor *out, int dt, const nd_lin_batch *b,
                     int ntail, int64_t t0, int64_t t1) {
  int64_t size[ND_MAX_DIMS + 2];
  for (int j = 0; j < b->nbd; j++) size[j] = b->size[j];
  if (ntail > 0) size[b->nbd] = t0;
  if (ntail > 1) size[b->nbd + 1] = t1;
  if (b->nbd + ntail > ND_MAX_DIMS)
    return nd_fail(e, ND_EINVAL, "result has more than %d dims", ND_MAX_DIMS);
  return nd_alloc_tensor(e, out, dt, b->nbd + ntail, size, false);
}

void nd_lin_load(void *dst, int dt, int64_t drs, int64_t dcs,
                 const nd_lin_mat *m) {
  const int64_t es = nd_dtype_size(dt), ses = nd_dtype_size(m->dt);
  char *d = dst;
  if (m->rows == 0 || m->cols == 0) return;
  if (dt == m->dt) {
    const int64_t rs = m->rows == 1 ? 0 : m->rs, cs = m->cols == 1 ? 1 : m->cs;
    if (dcs == 1 && cs == 1) { /* rows of both are contiguous */
      for (int64_t i = 0; i < m->rows; i++)
        memcpy(d + i * drs * es, m->p + i * rs * ses, (size_t)(m->cols * es));
      return;
    }
    if (dcs == 1 && (m->rows == 1 || m->rs == 1) && m->cs > 0) {
      nd_transpose_copy(d, m->p, m->rows, m->cols, drs, m->cs, (int)es);
      return;
    }
    if (drs == 1 && (m->rows == 1 || m->rs == 1)) { /* columns contiguous */
      for (int64_t j = 0; j < m->cols; j++)
        memcpy(d + j * dcs * es, m->p + j * m->cs * ses,
               (size_t)(m->rows * es));
      return;
    }
    if (drs == 1 && cs == 1 && m->rs > 0) {
      nd_transpose_copy(d, m->p, m->cols, m->rows, dcs, m->rs, (int)es);
      return;
    }
  }
  if (dcs == 1 || drs != 1)
    for (int64_t i = 0; i < m->rows; i++)
      nd_convert(dt, d + i * drs * es, dcs * es, m->dt,
                 m->p + i * m->rs * ses, m->cs * ses, m->cols);
  else
    for (int64_t j = 0; j < m->cols; j++)
      nd_convert(dt, d + j * dcs * es, drs * es, m->dt,
                 m->p + j * m->cs * ses, m->rs * ses, m->rows);
}

int nd_lin_finite(const void *p, int dt, int64_t rows, int64_t cols, int64_t ld,
                  int tri) {
  for (int64_t i = 0; i < rows; i++) {
    const int64_t lo = tri < 0 ? i : 0, hi = tri > 0 ? i + 1 : cols;
    if (dt == ND_FLOAT32) {
      const float *r = (const float *)p + i * ld;
      float acc = 0;
      for (int64_t j = lo; j < hi; j++) acc += r[j] * 0.0f;
      if (acc != 0) return 0; /* inf * 0 and NaN * 0 are NaN */
    } else {
      const double *r = (const double *)p + i * ld;
      double acc = 0;
      for (int64_t j = lo; j < hi; j++) acc += r[j] * 0.0;
      if (acc != 0) return 0;
    }
  }
  return 1;
}

double nd_lin_get(const void *p, int dt, int64_t i) {
  return dt == ND_FLOAT32 ? (double)((const float *)p)[i]
                          : ((const double *)p)[i];
}
void nd_lin_set(void *p, int dt, int64_t i, double v) {
  if (dt == ND_FLOAT32)
    ((float *)p)[i] = (float)v;
  else
    ((double *)p)[i] = v;
}

nd_status nd_lin_lwork(nd_err *e, const char *fn, const void *work, int dt,
                       int *lwork) {
  const double v = ceil(nd_lin_get(work, dt, 0));
  if (!(v >= 1)) { *lwork = 1; return ND_OK; }
  if (v > INT_MAX)
    return nd_fail(e, ND_EOVERFLOW, "%s: LAPACK workspace of %.0f elements "
                   "exceeds its 32-bit int", fn, v);
  *lwork = (int)v;
  return ND_OK;
}

nd_status nd_lin_bug(nd_err *e, const char *fn, const nd_lin_lapack *L,
                     const char *routine, int info) {
  return nd_fail(e, ND_EINVAL, "%s: internal error (a bug in nd, please "
                 "report): LAPACK %c%s rejected argument %d", fn, L->p,
                 routine, -info);
}

nd_status nd_lin_fail_at(nd_err *e, const char *fn, const nd_lin_batch *b,
                         int64_t k, const char *what) {
  if (b->nbd == 0) return nd_fail(e, ND_EINVAL, "%s: %s", fn, what);
  int64_t idx[ND_MAX_DIMS];
  for (int j = b->nbd - 1; j >= 0; j--) {
    idx[j] = k % b->size[j] + e->base;
    k /= b->size[j];
  }
  char s[ND_SIZES_BUF];
  return nd_fail(e, ND_EINVAL, "%s: %s at batch index %s", fn, what,
                 nd_fmt_sizes(s, sizeof s, b->nbd, idx));
}
