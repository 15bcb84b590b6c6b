/* The LU family: solve, inv, det, slogdet, matrix_power -- getrf (OpenBLAS's
 * own, blocked and threaded), then getri or two trsm.
 *
 * A row-major matrix is its transpose in column-major order, so getrf is
 * run on A's row-major copy and factors A^T = P L U: then A = U^T L^T P^T,
 *   inv(A) (row-major) = inv(A^T) (column-major): getri in place, and
 *   A X = B: X^T = B^T U^-1 L^-1 P^T, two trsm from the right on the
 *   row-major X (= X^T column-major) and row swaps of X -- so neither B
 *   nor X is ever transposed. 1x1..4x4 matrices go through the unrolled
 *   kernels (linalg_small.c) unless their determinant is 0 or not finite. */
#include "linalg.h"
#include <cblas.h>
#include <math.h>

/* One getrf on the n x n buffer a: 0, or 1 when U has an exact zero
 * pivot; info < 0 is reported as nd's bug. */
static nd_status getrf(nd_err *e, const char *fn, const nd_lin_lapack *L, int n,
                       void *a, int *ipiv, int *singular) {
  int info = 0, lda = n > 1 ? n : 1;
  L->getrf(&n, &n, a, &lda, ipiv, &info);
  if (info < 0) return nd_lin_bug(e, fn, L, "getrf", info);
  *singular = info > 0;
  return ND_OK;
}

/* X (n x k, row-major, holding B) := A^-1 B from getrf's lu, ipiv of A^T. */
static void lu_solve(int dt, int n, int k, const void *lu, const int *ipiv,
                     void *x) {
  if (n == 0 || k == 0) return;
  if (dt == ND_FLOAT32) {
    cblas_strsm(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans,
                CblasNonUnit, k, n, 1.0f, lu, n, x, k);
    cblas_strsm(CblasColMajor, CblasRight, CblasLower, CblasNoTrans,
                CblasUnit, k, n, 1.0f, lu, n, x, k);
  } else {
    cblas_dtrsm(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans,
                CblasNonUnit, k, n, 1.0, lu, n, x, k);
    cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasNoTrans,
                CblasUnit, k, n, 1.0, lu, n, x, k);
  }
  /* Row swaps through a stack buffer, a piece at a time. */
  const size_t row = (size_t)k * (size_t)nd_dtype_size(dt);
  char tmp[256], *r = (char *)x;
  for (int i = n - 1; i >= 0; i--) {
    const int p = ipiv[i] - 1;
    if (p == i) continue;
    char *ri = r + i * row, *rp = r + p * row;
    for (size_t b = 0; b < row; b += sizeof tmp) {
      const size_t c = row - b < sizeof tmp ? row - b : sizeof tmp;
      memcpy(tmp, ri + b, c);
      memcpy(ri + b, rp + b, c);
      memcpy(rp + b, tmp, c);
    }
  }
}

static nd_status inv_impl(nd_err *e, const char *fn, nd_tensor *out,
                          const nd_tensor *a) {
  nd_lin_batch b;
  if (nd_lin_check(e, fn, a, 1, &b)) return e->code;
  const int dt = nd_lin_dtype(a->dtype);
  const int n = (int)a->size[a->ndim - 1], lda = n > 1 ? n : 1;
  const nd_lin_lapack *L = nd_lin_lapack_for(dt);
  nd_tensor r = ND_UNSET;
  int *ipiv = NULL, lwork = -1, info = 0;
  void *work = NULL;
  double wq[1], m[16], x[16];
  if (nd_lin_new(e, &r, dt, &b, 2, n, n)) return e->code;
  for (int64_t k = 0; k < b.count; k++) {
    const nd_lin_mat A = nd_lin_at(&b, a, 2, k);
    char *o = nd_lin_item(&r, k, (int64_t)n * n);
    if (n <= 4) {
      nd_lin_small_load(m, &A);
      if (nd_lin_small_inv(n, m, x) != 0) {
        nd_lin_small_store(o, dt, n, x, n, n);
        continue;
      }
    }
    if (!ipiv) { /* the general path: workspace once for the batch */
      if (!(ipiv = nd_scratch_alloc(e, fn, n, sizeof(int), true))) goto fail;
      L->getri(&n, NULL, &lda, ipiv, wq, &lwork, &info);
      if (info < 0) { nd_lin_bug(e, fn, L, "getri", info); goto fail; }
      if (nd_lin_lwork(e, fn, wq, dt, &lwork) ||
          !(work = nd_scratch_alloc(e, fn, lwork, nd_dtype_size(dt), true)))
        goto fail;
    }
    nd_lin_load_dense(o, dt, 0, &A);
    int singular;
    if (getrf(e, fn, L, n, o, ipiv, &singular)) goto fail;
    if (singular) {
      nd_lin_fail_at(e, fn, &b, k, "matrix is singular");
      goto fail;
    }
    if (n == 0) continue;
    L->getri(&n, o, &lda, ipiv, work, &lwork, &info);
    if (info < 0) { nd_lin_bug(e, fn, L, "getri", info); goto fail; }
    if (info > 0) {
      nd_lin_fail_at(e, fn, &b, k, "matrix is singular");
      goto fail;
    }
  }
  nd_scratch_free(ipiv);
  nd_scratch_free(work);
  *out = r;
  return ND_OK;
fail:
  nd_scratch_free(ipiv);
  nd_scratch_free(work);
  nd_release(&r);
  return e->code;
}

nd_status nd_linalg_inv(nd_err *e, nd_tensor *out, const nd_tensor *a) {
  return inv_impl(e, "inv", out, a);
}

nd_status nd_linalg_solve(nd_err *e, nd_tensor *out, const nd_tensor *a,
                          const nd_tensor *bt) {
  const char *fn = "solve";
  nd_lin_batch b;
  if (nd_lin_check(e, fn, a, 1, &b)) return e->code;
  const int64_t n = a->size[a->ndim - 1];
  int mdims[2], nrhs;
  if (nd_lin_rhs(e, fn, a, bt, n, "n", &b, mdims, &nrhs)) return e->code;
  const int vec = mdims[1] == 1;
  const int dt = nd_lin_dtype(nd_promote_types(a->dtype, bt->dtype));
  const nd_lin_lapack *L = nd_lin_lapack_for(dt);
  const int ni = (int)n;
  nd_tensor r = ND_UNSET;
  int *ipiv = NULL;
  void *lu = NULL;
  double m[16], inv[16], bx[64];
  if (nd_lin_new(e, &r, dt, &b, vec ? 1 : 2, n, nrhs)) return e->code;
  const int64_t xn = n * nrhs;
  for (int64_t k = 0; k < b.count; k++) {
    const nd_lin_mat A = nd_lin_at(&b, a, 2, k),
                     B = nd_lin_at(&b, bt, mdims[1], k);
    char *o = nd_lin_item(&r, k, xn);
    if (n <= 4 && nrhs <= 4) {
      nd_lin_small_load(m, &A);
      if (nd_lin_small_inv(ni, m, inv) != 0) {
        double y[16];
        nd_lin_small_load(bx, &B);
        for (int i = 0; i < ni; i++)
          for (int j = 0; j < nrhs; j++) {
            double acc = 0;
            for (int l = 0; l < ni; l++) acc += inv[i * ni + l] * bx[l * nrhs + j];
            y[i * nrhs + j] = acc;
          }
        nd_lin_small_store(o, dt, nrhs, y, n, nrhs);
        continue;
      }
    }
    if (!ipiv &&
        (!(ipiv = nd_scratch_alloc(e, fn, n, sizeof(int), true)) ||
         !(lu = nd_scratch_alloc(e, fn, n * n, nd_dtype_size(dt), true))))
      goto fail;
    nd_lin_load_dense(lu, dt, 0, &A);
    int singular;
    if (getrf(e, fn, L, ni, lu, ipiv, &singular)) goto fail;
    if (singular) {
      nd_lin_fail_at(e, fn, &b, k, "matrix is singular");
      goto fail;
    }
    nd_lin_load(o, dt, nrhs, 1, &B);
    lu_solve(dt, ni, nrhs, lu, ipiv, o);
  }
  nd_scratch_free(ipiv);
  nd_scratch_free(lu);
  *out = r;
  return ND_OK;
fail:
  nd_scratch_free(ipiv);
  nd_scratch_free(lu);
  nd_release(&r);
  return e->code;
}

/* det and slogdet: the product of U's diagonal and the pivots' sign. */
static nd_status det_impl(nd_err *e, const char *fn, nd_tensor *sign,
                          nd_tensor *val, const nd_tensor *a) {
  nd_lin_batch b;
  if (nd_lin_check(e, fn, a, 1, &b)) return e->code;
  const int dt = nd_lin_dtype(a->dtype);
  const int n = (int)a->size[a->ndim - 1];
  const nd_lin_lapack *L = nd_lin_lapack_for(dt);
  nd_tensor s = ND_UNSET, v = ND_UNSET;
  int *ipiv = NULL;
  void *lu = NULL;
  double m[16];
  if (nd_lin_new(e, &v, dt, &b, 0, 0, 0) ||
      (sign && nd_lin_new(e, &s, dt, &b, 0, 0, 0)))
    goto fail;
  if (!sign && n <= 4 && b.count > 0 && a->ndim <= 3) { /* one batch dim */
    const nd_lin_mat A = nd_lin_at(&b, a, 2, 0);
    const int64_t bs = a->ndim == 3 && a->size[0] > 1 ? a->stride[0] : 0;
    if (nd_lin_small_det_batch(&A, bs, b.count, nd_ptr(&v), dt)) {
      *val = v;
      return ND_OK;
    }
  }
  for (int64_t k = 0; k < b.count; k++) {
    const nd_lin_mat A = nd_lin_at(&b, a, 2, k);
    if (!sign && n <= 4) {
      nd_lin_small_load(m, &A);
      nd_lin_set(nd_ptr(&v), dt, k, nd_lin_small_det(n, m));
      continue;
    }
    if (!ipiv && (!(ipiv = nd_scratch_alloc(e, fn, n, sizeof(int), true)) ||
                  !(lu = nd_scratch_alloc(e, fn, (int64_t)n * n,
                                          nd_dtype_size(dt), true))))
      goto fail;
    nd_lin_load_dense(lu, dt, 0, &A);
    int singular = 0;
    if (n > 0 && getrf(e, fn, L, n, lu, ipiv, &singular)) goto fail;
    double sg = singular ? 0 : 1, acc = sign ? 0 : 1;
    for (int i = 0; i < n && !singular; i++) {
      const double d = nd_lin_get(lu, dt, (int64_t)i * n + i);
      if (ipiv[i] != i + 1) sg = -sg;
      if (sign) {
        if (d < 0) sg = -sg;
        acc += log(fabs(d));
      } else {
        acc *= d;
      }
    }
    if (sign) {
      nd_lin_set(nd_ptr(&s), dt, k, sg);
      nd_lin_set(nd_ptr(&v), dt, k, singular ? -HUGE_VAL : acc);
    } else {
      nd_lin_set(nd_ptr(&v), dt, k, singular ? 0 : sg * acc);
    }
  }
  nd_scratch_free(ipiv);
  nd_scratch_free(lu);
  if (sign) *sign = s;
  *val = v;
  return ND_OK;
fail:
  nd_scratch_free(ipiv);
  nd_scratch_free(lu);
  nd_release(&s);
  nd_release(&v);
  return e->code;
}

nd_status nd_linalg_det(nd_err *e, nd_tensor *out, const nd_tensor *a) {
  return det_impl(e, "det", NULL, out, a);
}
nd_status nd_linalg_slogdet(nd_err *e, nd_tensor *sign, nd_tensor *logabsdet,
                            const nd_tensor *a) {
  return det_impl(e, "slogdet", sign, logabsdet, a);
}

/* A^p by repeated squaring (matmul); A^0 the identity, A^-p inv(A)^p. */
nd_status nd_linalg_matrix_power(nd_err *e, nd_tensor *out,
                                 const nd_tensor *a, int64_t p) {
  const char *fn = "matrix_power";
  nd_lin_batch b;
  if (nd_lin_check(e, fn, a, 1, &b)) return e->code;
  const int dt = nd_lin_dtype(a->dtype);
  const int64_t n = a->size[a->ndim - 1];
  nd_tensor base = ND_UNSET, acc = ND_UNSET, t = ND_UNSET;
  if (p == 0) {
    if (nd_lin_new(e, &acc, dt, &b, 2, n, n)) return e->code;
    for (int64_t k = 0; k < b.count; k++)
      for (int64_t i = 0; i < n * n; i++)
        nd_lin_set(nd_ptr(&acc), dt, k * n * n + i, i % (n + 1) == 0);
    *out = acc;
    return ND_OK;
  }
  if (p < 0 ? inv_impl(e, fn, &base, a) : nd_to_dtype(e, &base, a, dt))
    return e->code;
  uint64_t q = p < 0 ? -(uint64_t)p : (uint64_t)p;
  for (;;) {
    if (q & 1) {
      if (acc.storage) {
        if (nd_matmul(e, &t, &acc, &base)) goto fail;
        nd_release(&acc);
        acc = t;
        t = (nd_tensor)ND_UNSET;
      } else {
        nd_share(&acc, &base);
      }
    }
    q >>= 1;
    if (!q) break;
    if (nd_matmul(e, &t, &base, &base)) goto fail;
    nd_release(&base);
    base = t;
    t = (nd_tensor)ND_UNSET;
  }
  nd_release(&base);
  *out = acc;
  return ND_OK;
fail:
  nd_release(&base);
  nd_release(&acc);
  return e->code;
}
