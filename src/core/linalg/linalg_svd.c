/* The SVD family: svd, svdvals (gesdd), pinv, matrix_rank, cond and the
 * 2-norms built on them, norm, and lstsq (gelsd).
 *
 * gesdd runs on A's row-major copy, which it reads as A^T = U' S V'^T;
 * then A = V' S U'^T: U = V' is V'^T column-major, which gesdd writes as
 * its VT straight into our row-major U, and Vh = U'^T is its U written
 * straight into our row-major Vh. Only the input is copied (gesdd
 * overwrites it). NaN or inf input raises first: gesdd may not return on
 * it (NumPy raises "SVD did not converge" there). */
#include "linalg.h"
#include <cblas.h>
#include <math.h>

nd_status nd_lin_svd_init(nd_err *e, const char *fn, nd_lin_svd *w, int dt,
                          int64_t m, int64_t n, int vectors) {
  memset(w, 0, sizeof *w);
  w->L = nd_lin_lapack_for(dt);
  w->fn = fn;
  w->dt = dt;
  w->m = (int)m;
  w->n = (int)n;
  w->k = m < n ? (int)m : (int)n;
  w->jobz = vectors ? 'S' : 'N';
  if (w->k == 0) return ND_OK;
  const int64_t es = nd_dtype_size(dt);
  const int lda = w->n, ldu = vectors ? w->n : 1, ldvt = vectors ? w->k : 1;
  int info = 0, lwork = -1, iq[1];
  double wq[2];
  w->L->gesdd(&w->jobz, &w->n, &w->m, NULL, &lda, NULL, NULL, &ldu, NULL,
              &ldvt, wq, &lwork, iq, &info, 1);
  if (info < 0) return nd_lin_bug(e, fn, w->L, "gesdd", info);
  if (nd_lin_lwork(e, fn, wq, dt, &w->lwork)) return e->code;
  if (!(w->a = nd_scratch_alloc(e, fn, m * n, es, true)) ||
      !(w->work = nd_scratch_alloc(e, fn, w->lwork, es, true)) ||
      !(w->iwork =
            nd_scratch_alloc(e, fn, 8 * (int64_t)w->k, sizeof(int), true))) {
    nd_lin_svd_free(w);
    return e->code;
  }
  return ND_OK;
}

void nd_lin_svd_free(nd_lin_svd *w) {
  nd_scratch_free(w->a);
  nd_scratch_free(w->work);
  nd_scratch_free(w->iwork);
  w->a = w->work = NULL;
  w->iwork = NULL;
}

nd_status nd_lin_svd_run(nd_err *e, nd_lin_svd *w, const nd_lin_mat *a,
                         const nd_lin_batch *b, int64_t k, void *s, void *u,
                         void *vh) {
  if (w->k == 0) return ND_OK;
  nd_lin_load_dense(w->a, w->dt, 0, a);
  if (!nd_lin_finite(w->a, w->dt, w->m, w->n, w->n, 0))
    return nd_lin_fail_at(e, w->fn, b, k, "input contains NaN or inf");
  const int lda = w->n, ldu = u ? w->n : 1, ldvt = u ? w->k : 1;
  int info = 0;
  w->L->gesdd(&w->jobz, &w->n, &w->m, w->a, &lda, s, vh, &ldu, u, &ldvt,
              w->work, &w->lwork, w->iwork, &info, 1);
  if (info < 0) return nd_lin_bug(e, w->fn, w->L, "gesdd", info);
  if (info > 0) return nd_lin_fail_at(e, w->fn, b, k, "SVD did not converge");
  return ND_OK;
}

static nd_status svd_impl(nd_err *e, const char *fn, nd_tensor *u,
                          nd_tensor *s, nd_tensor *vh, const nd_tensor *a) {
  nd_lin_batch b;
  nd_lin_svd w;
  if (nd_lin_check(e, fn, a, 0, &b)) return e->code;
  const int dt = nd_lin_dtype(a->dtype);
  const int64_t m = a->size[a->ndim - 2], n = a->size[a->ndim - 1];
  const int64_t k = m < n ? m : n;
  nd_tensor tu = ND_UNSET, ts = ND_UNSET, tv = ND_UNSET;
  if (nd_lin_new(e, &ts, dt, &b, 1, k, 0) ||
      (u && (nd_lin_new(e, &tu, dt, &b, 2, m, k) ||
             nd_lin_new(e, &tv, dt, &b, 2, k, n))))
    goto fail;
  if (nd_lin_svd_init(e, fn, &w, dt, m, n, u != NULL)) goto fail;
  for (int64_t j = 0; j < b.count; j++) {
    const nd_lin_mat A = nd_lin_at(&b, a, 2, j);
    if (nd_lin_svd_run(e, &w, &A, &b, j, nd_lin_item(&ts, j, k),
                       u ? nd_lin_item(&tu, j, m * k) : NULL,
                       u ? nd_lin_item(&tv, j, k * n) : NULL)) {
      nd_lin_svd_free(&w);
      goto fail;
    }
  }
  nd_lin_svd_free(&w);
  *s = ts;
  if (u) *u = tu, *vh = tv;
  return ND_OK;
fail:
  nd_release(&tu);
  nd_release(&ts);
  nd_release(&tv);
  return e->code;
}

nd_status nd_linalg_svd(nd_err *e, nd_tensor *u, nd_tensor *s, nd_tensor *vh,
                        const nd_tensor *a) {
  return svd_impl(e, "svd", u, s, vh, a);
}
nd_status nd_linalg_svdvals(nd_err *e, nd_tensor *s, const nd_tensor *a) {
  return svd_impl(e, "svdvals", NULL, s, NULL, a);
}

/* What a per-matrix reduction of the singular values makes of s[0..k). */
typedef enum { SV_RANK, SV_COND, SV_MAX, SV_MIN, SV_SUM } sv_reduce;

/* One number per matrix from its singular values (matrix_rank, cond,
 * norm 2/-2/nuc), into out (dtype dt; int64 for the rank). */
static nd_status sv_reduce_impl(nd_err *e, const char *fn, nd_tensor *out,
                                const nd_tensor *a, sv_reduce op) {
  nd_lin_batch b;
  nd_lin_svd w;
  if (nd_lin_check(e, fn, a, 0, &b)) return e->code;
  const int dt = nd_lin_dtype(a->dtype);
  const int64_t m = a->size[a->ndim - 2], n = a->size[a->ndim - 1];
  const int64_t k = m < n ? m : n;
  if (k == 0 && (op == SV_COND || op == SV_MAX || op == SV_MIN))
    return nd_fail(e, ND_EINVAL, "%s: empty matrix (%lld x %lld)", fn,
                   (long long)m, (long long)n);
  nd_tensor r = ND_UNSET;
  void *s = NULL;
  if (nd_lin_new(e, &r, op == SV_RANK ? ND_INT64 : dt, &b, 0, 0, 0))
    return e->code;
  if (nd_lin_svd_init(e, fn, &w, dt, m, n, 0)) goto fail;
  if (!(s = nd_scratch_alloc(e, fn, k, nd_dtype_size(dt), true))) goto fail;
  const double tol = nd_lin_eps(dt) * (double)(m > n ? m : n);
  for (int64_t j = 0; j < b.count; j++) {
    const nd_lin_mat A = nd_lin_at(&b, a, 2, j);
    if (nd_lin_svd_run(e, &w, &A, &b, j, s, NULL, NULL)) goto fail;
    const double s0 = k ? nd_lin_get(s, dt, 0) : 0,
                 sk = k ? nd_lin_get(s, dt, k - 1) : 0;
    double v = 0;
    switch (op) {
    case SV_RANK:
      for (int64_t i = 0; i < k; i++) v += nd_lin_get(s, dt, i) > s0 * tol;
      ((int64_t *)nd_ptr(&r))[j] = (int64_t)v;
      continue;
    case SV_COND:
      v = s0 / sk;
      if (v != v) v = HUGE_VAL; /* 0 / 0: the zero matrix, as NumPy */
      break;
    case SV_MAX: v = s0; break;
    case SV_MIN: v = sk; break;
    case SV_SUM:
      for (int64_t i = 0; i < k; i++) v += nd_lin_get(s, dt, i);
      break;
    }
    nd_lin_set(nd_ptr(&r), dt, j, v);
  }
  nd_lin_svd_free(&w);
  nd_scratch_free(s);
  *out = r;
  return ND_OK;
fail:
  nd_lin_svd_free(&w);
  nd_scratch_free(s);
  nd_release(&r);
  return e->code;
}

nd_status nd_linalg_matrix_rank(nd_err *e, nd_tensor *out,
                                const nd_tensor *a) {
  return sv_reduce_impl(e, "matrix_rank", out, a, SV_RANK);
}
nd_status nd_linalg_cond(nd_err *e, nd_tensor *out, const nd_tensor *a) {
  return sv_reduce_impl(e, "cond", out, a, SV_COND);
}

/* pinv = V diag(1/s) U^T over the singular values above 1e-15 * s_max
 * (NumPy's rcond), one gemm per matrix. */
nd_status nd_linalg_pinv(nd_err *e, nd_tensor *out, const nd_tensor *a) {
  const char *fn = "pinv";
  nd_lin_batch b;
  nd_lin_svd w;
  if (nd_lin_check(e, fn, a, 0, &b)) return e->code;
  const int dt = nd_lin_dtype(a->dtype);
  const int64_t m = a->size[a->ndim - 2], n = a->size[a->ndim - 1];
  const int64_t k = m < n ? m : n, es = nd_dtype_size(dt);
  nd_tensor r = ND_UNSET;
  void *s = NULL, *u = NULL, *vh = NULL;
  if (nd_lin_new(e, &r, dt, &b, 2, n, m)) return e->code;
  if (k == 0) {
    memset(nd_ptr(&r), 0, (size_t)(nd_numel(&r) * es));
    *out = r;
    return ND_OK;
  }
  if (nd_lin_svd_init(e, fn, &w, dt, m, n, 1)) goto fail;
  if (!(s = nd_scratch_alloc(e, fn, k, es, true)) ||
      !(u = nd_scratch_alloc(e, fn, m * k, es, true)) ||
      !(vh = nd_scratch_alloc(e, fn, k * n, es, true)))
    goto fail;
  for (int64_t j = 0; j < b.count; j++) {
    const nd_lin_mat A = nd_lin_at(&b, a, 2, j);
    if (nd_lin_svd_run(e, &w, &A, &b, j, s, u, vh)) goto fail;
    const double cut = 1e-15 * nd_lin_get(s, dt, 0);
    for (int64_t i = 0; i < k; i++) {
      const double si = nd_lin_get(s, dt, i), f = si > cut ? 1 / si : 0;
      for (int64_t c = 0; c < n; c++)
        nd_lin_set(vh, dt, i * n + c, nd_lin_get(vh, dt, i * n + c) * f);
    }
    char *o = nd_lin_item(&r, j, n * m);
    if (dt == ND_FLOAT32)
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasTrans, (int)n, (int)m,
                  (int)k, 1.0f, vh, (int)n, u, (int)k, 0.0f, (float *)o, (int)m);
    else
      cblas_dgemm(CblasRowMajor, CblasTrans, CblasTrans, (int)n, (int)m,
                  (int)k, 1.0, vh, (int)n, u, (int)k, 0.0, (double *)o, (int)m);
  }
  nd_lin_svd_free(&w);
  nd_scratch_free(s);
  nd_scratch_free(u);
  nd_scratch_free(vh);
  *out = r;
  return ND_OK;
fail:
  nd_lin_svd_free(&w);
  nd_scratch_free(s);
  nd_scratch_free(u);
  nd_scratch_free(vh);
  nd_release(&r);
  return e->code;
}

/* lstsq: gelsd (NumPy's routine) with rcond = eps * max(m, n), NumPy's
 * default. A is copied column-major, B into an ldb = max(m, n) buffer
 * where gelsd leaves the solution. */
nd_status nd_linalg_lstsq(nd_err *e, nd_tensor *out, const nd_tensor *a,
                          const nd_tensor *bt) {
  const char *fn = "lstsq";
  nd_lin_batch b;
  if (nd_lin_check(e, fn, a, 0, &b)) return e->code;
  const int64_t m = a->size[a->ndim - 2], n = a->size[a->ndim - 1];
  int mdims[2], nrhs;
  if (nd_lin_rhs(e, fn, a, bt, m, "m", &b, mdims, &nrhs)) return e->code;
  const int vec = mdims[1] == 1;
  const int dt = nd_lin_dtype(nd_promote_types(a->dtype, bt->dtype));
  const int64_t es = nd_dtype_size(dt), k = m < n ? m : n;
  const nd_lin_lapack *L = nd_lin_lapack_for(dt);
  const int mi = (int)m, ni = (int)n, lda = mi > 1 ? mi : 1;
  const int ldb = mi > ni ? (mi > 1 ? mi : 1) : (ni > 1 ? ni : 1);
  nd_tensor r = ND_UNSET;
  void *abuf = NULL, *bbuf = NULL, *s = NULL, *work = NULL;
  int *iwork = NULL, lwork = -1, info = 0, rank, iq[1];
  double wq[2], rc[1];
  if (nd_lin_new(e, &r, dt, &b, vec ? 1 : 2, n, nrhs)) return e->code;
  if (k == 0 || nrhs == 0 || b.count == 0) {
    memset(nd_ptr(&r), 0, (size_t)(nd_numel(&r) * es));
    *out = r;
    return ND_OK;
  }
  nd_lin_set(rc, dt, 0, nd_lin_eps(dt) * (double)(m > n ? m : n));
  L->gelsd(&mi, &ni, &nrhs, NULL, &lda, NULL, &ldb, NULL, rc, &rank, wq,
           &lwork, iq, &info);
  if (info < 0) { nd_lin_bug(e, fn, L, "gelsd", info); goto fail; }
  if (nd_lin_lwork(e, fn, wq, dt, &lwork)) goto fail;
  if (!(abuf = nd_scratch_alloc(e, fn, m * n, es, true)) ||
      !(bbuf = nd_scratch_alloc(e, fn, (int64_t)ldb * nrhs, es, true)) ||
      !(s = nd_scratch_alloc(e, fn, k, es, true)) ||
      !(work = nd_scratch_alloc(e, fn, lwork, es, true)) ||
      !(iwork =
            nd_scratch_alloc(e, fn, iq[0] > 1 ? iq[0] : 1, sizeof(int), true)))
    goto fail;
  for (int64_t j = 0; j < b.count; j++) {
    const nd_lin_mat A = nd_lin_at(&b, a, 2, j),
                     B = nd_lin_at(&b, bt, mdims[1], j);
    nd_lin_load_dense(abuf, dt, 1, &A);
    nd_lin_load(bbuf, dt, 1, ldb, &B);
    if (!nd_lin_finite(abuf, dt, n, m, m, 0) ||
        !nd_lin_finite(bbuf, dt, nrhs, m, ldb, 0)) {
      nd_lin_fail_at(e, fn, &b, j, "input contains NaN or inf");
      goto fail;
    }
    L->gelsd(&mi, &ni, &nrhs, abuf, &lda, bbuf, &ldb, s, rc, &rank, work,
             &lwork, iwork, &info);
    if (info < 0) { nd_lin_bug(e, fn, L, "gelsd", info); goto fail; }
    if (info > 0) {
      nd_lin_fail_at(e, fn, &b, j, "SVD did not converge");
      goto fail;
    }
    const nd_lin_mat X = {bbuf, dt, n, nrhs, 1, ldb};
    nd_lin_load(nd_lin_item(&r, j, n * nrhs), dt, nrhs, 1, &X);
  }
  nd_scratch_free(abuf), nd_scratch_free(bbuf), nd_scratch_free(s),
      nd_scratch_free(work), nd_scratch_free(iwork);
  *out = r;
  return ND_OK;
fail:
  nd_scratch_free(abuf), nd_scratch_free(bbuf), nd_scratch_free(s),
      nd_scratch_free(work), nd_scratch_free(iwork);
  nd_release(&r);
  return e->code;
}

/* norm: NumPy's orders. A vector (1-D): p-norms, inf/-inf the largest /
 * smallest magnitude, 0 the count of nonzeros. A matrix (the last two
 * dims, batched): fro, nuc, 1/-1 (column sums), inf/-inf (row sums),
 * 2/-2 (singular values). */
static double vector_norm(const nd_lin_mat *v, double p) {
  double acc = p == -HUGE_VAL ? HUGE_VAL : 0;
  int nan = 0;
  for (int64_t i = 0; i < v->rows; i++) {
    double x = 0;
    nd_lin_small_load(&x, &(nd_lin_mat){v->p + i * v->rs * nd_dtype_size(v->dt),
                                        v->dt, 1, 1, 0, 0});
    x = fabs(x);
    if (x != x) nan = 1;
    if (p == HUGE_VAL) acc = x > acc ? x : acc;
    else if (p == -HUGE_VAL) acc = x < acc ? x : acc;
    else if (p == 0) acc += x != 0;
    else if (p == 1) acc += x;
    else if (p == 2) acc += x * x;
    else acc += pow(x, p);
  }
  if (nan) return NAN;
  if (p == 2) return sqrt(acc);
  if (p == 0 || p == 1 || isinf(p)) return acc;
  return pow(acc, 1 / p);
}

/* Largest (sign 1) or smallest (-1) sum of |a| along rows (by_row 1) or
 * columns; fro: sqrt of the sum of squares. */
static double matrix_sums(const nd_lin_mat *a, int by_row, int sign) {
  const int64_t outer = by_row ? a->rows : a->cols, inner = by_row ? a->cols : a->rows;
  const int64_t os = by_row ? a->rs : a->cs, is = by_row ? a->cs : a->rs;
  const int64_t es = nd_dtype_size(a->dt);
  double best = sign > 0 ? -HUGE_VAL : sign < 0 ? HUGE_VAL : 0;
  int nan = 0;
  for (int64_t o = 0; o < outer; o++) {
    nd_lin_mat line = {a->p + o * os * es, a->dt, inner, 1, is, 0};
    const double s = vector_norm(&line, sign ? 1 : 2);
    if (s != s) nan = 1;
    if (!sign) best += s * s;
    else if (sign > 0 ? s > best : s < best) best = s;
  }
  if (nan) return NAN;
  return sign ? best : sqrt(best);
}

nd_status nd_linalg_norm(nd_err *e, nd_tensor *out, const nd_tensor *a,
                         int ord, double p) {
  const char *fn = "norm";
  if (a->ndim == 0)
    return nd_fail(e, ND_EINVAL, "%s: expected a vector or a matrix, got a "
                   "0-d tensor", fn);
  const int dt = nd_lin_dtype(a->dtype);
  nd_lin_batch b;
  if (a->ndim == 1) {
    if (ord != ND_NORM_P)
      return nd_fail(e, ND_EINVAL, "%s: order '%s' is not a vector norm", fn,
                     ord == ND_NORM_FRO ? "fro" : "nuc");
    if (a->size[0] == 0 && isinf(p))
      return nd_fail(e, ND_EINVAL, "%s: order %s of an empty vector", fn,
                     p > 0 ? "inf" : "-inf");
    b.nbd = 0;
    b.count = 1;
    if (nd_lin_new(e, out, dt, &b, 0, 0, 0)) return e->code;
    const nd_lin_mat v = nd_lin_at(&b, a, 1, 0);
    nd_lin_set(nd_ptr(out), dt, 0, vector_norm(&v, p));
    return ND_OK;
  }
  if (ord == ND_NORM_NUC || (ord == ND_NORM_P && (p == 2 || p == -2)))
    return sv_reduce_impl(e, fn, out, a,
                          ord == ND_NORM_NUC ? SV_SUM : p > 0 ? SV_MAX : SV_MIN);
  if (ord == ND_NORM_P && p != 1 && p != -1 && !isinf(p))
    return nd_fail(e, ND_EINVAL, "%s: invalid order %g for a matrix (one of "
                   "'fro', 'nuc', 1, -1, 2, -2, inf, -inf)", fn, p);
  if (nd_lin_check(e, fn, a, 0, &b)) return e->code;
  const int64_t m = a->size[a->ndim - 2], n = a->size[a->ndim - 1];
  const int by_row = isinf(p);
  if (ord == ND_NORM_P && (by_row ? m == 0 || n == 0 : n == 0 || m == 0))
    return nd_fail(e, ND_EINVAL, "%s: order %g of an empty matrix", fn, p);
  nd_tensor r = ND_UNSET;
  if (nd_lin_new(e, &r, dt, &b, 0, 0, 0)) return e->code;
  for (int64_t j = 0; j < b.count; j++) {
    const nd_lin_mat A = nd_lin_at(&b, a, 2, j);
    const double v = ord == ND_NORM_FRO ? matrix_sums(&A, 1, 0)
                                        : matrix_sums(&A, by_row, p > 0 ? 1 : -1);
    nd_lin_set(nd_ptr(&r), dt, j, v);
  }
  *out = r;
  return ND_OK;
}
