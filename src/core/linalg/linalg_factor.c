/* Factorizations of one matrix: cholesky (potrf), qr (gelqf + orglq),
 * eigh and eigvalsh (syevd).
 *
 * Each works on A's row-major copy, which LAPACK reads as A^T:
 *   cholesky: potrf on the upper triangle of A^T -- A's lower one -- gives
 *     U with A = U^T U; U column-major is L = U^T row-major, in place in
 *     the result.
 *   qr: the LQ factorization of A^T = L Q' is A = Q'^T L^T: L column-major
 *     is R row-major, Q' column-major is Q row-major (in place in Q when
 *     m >= n), so nothing is transposed.
 *   eigh: syevd on the upper triangle of A^T (A's lower one); only the
 *     column-major eigenvectors are transposed into the row-major result. */
#include "linalg.h"

/* Zero the strictly upper (upper 1) or lower (upper 0) part of the
 * rows x cols row-major matrix p (row stride ld). */
static void zero_triangle(void *p, int dt, int64_t rows, int64_t cols,
                          int64_t ld, int upper) {
  const int64_t es = nd_dtype_size(dt);
  for (int64_t i = 0; i < rows; i++) {
    const int64_t lo = upper ? i + 1 : 0, hi = upper ? cols : (i < cols ? i : cols);
    if (hi > lo) memset((char *)p + (i * ld + lo) * es, 0, (size_t)((hi - lo) * es));
  }
}

nd_status nd_linalg_cholesky(nd_err *e, nd_tensor *out, const nd_tensor *a) {
  const char *fn = "cholesky";
  nd_lin_batch b;
  if (nd_lin_check(e, fn, a, 1, &b)) return e->code;
  const int dt = nd_lin_dtype(a->dtype);
  const int n = (int)a->size[a->ndim - 1], lda = n > 1 ? n : 1;
  const nd_lin_lapack *L = nd_lin_lapack_for(dt);
  nd_tensor r = ND_UNSET;
  if (nd_lin_new(e, &r, dt, &b, 2, n, n)) return e->code;
  for (int64_t k = 0; k < b.count && n > 0; k++) {
    const nd_lin_mat A = nd_lin_at(&b, a, 2, k);
    char *o = nd_lin_item(&r, k, (int64_t)n * n);
    nd_lin_load_dense(o, dt, 0, &A);
    int info = 0;
    L->potrf("U", &n, o, &lda, &info, 1);
    if (info < 0) { nd_lin_bug(e, fn, L, "potrf", info); goto fail; }
    if (info > 0) {
      nd_lin_fail_at(e, fn, &b, k, "matrix is not positive definite");
      goto fail;
    }
    zero_triangle(o, dt, n, n, n, 1);
  }
  *out = r;
  return ND_OK;
fail:
  nd_release(&r);
  return e->code;
}

nd_status nd_linalg_qr(nd_err *e, nd_tensor *q, nd_tensor *r,
                       const nd_tensor *a) {
  const char *fn = "qr";
  nd_lin_batch b;
  if (nd_lin_check(e, fn, a, 0, &b)) return e->code;
  const int dt = nd_lin_dtype(a->dtype);
  const int m = (int)a->size[a->ndim - 2], n = (int)a->size[a->ndim - 1];
  const int k = m < n ? m : n, lda = n > 1 ? n : 1;
  const int64_t es = nd_dtype_size(dt);
  const nd_lin_lapack *L = nd_lin_lapack_for(dt);
  nd_tensor tq = ND_UNSET, tr = ND_UNSET;
  void *tau = NULL, *work = NULL, *buf = NULL;
  int lwork = -1, lw2 = -1, info = 0;
  double wq[2];
  if (nd_lin_new(e, &tq, dt, &b, 2, m, k) ||
      nd_lin_new(e, &tr, dt, &b, 2, k, n))
    goto fail;
  if (k > 0 && b.count > 0) {
    L->gelqf(&n, &m, NULL, &lda, NULL, wq, &lwork, &info);
    if (info < 0) { nd_lin_bug(e, fn, L, "gelqf", info); goto fail; }
    if (nd_lin_lwork(e, fn, wq, dt, &lwork)) goto fail;
    L->orglq(&k, &m, &k, NULL, &lda, NULL, wq, &lw2, &info);
    if (info < 0) { nd_lin_bug(e, fn, L, "orglq", info); goto fail; }
    if (nd_lin_lwork(e, fn, wq, dt, &lw2)) goto fail;
    if (lw2 > lwork) lwork = lw2;
    if (!(tau = nd_scratch_alloc(e, fn, k, es, true)) ||
        !(work = nd_scratch_alloc(e, fn, lwork, es, true)) ||
        (k < n && !(buf = nd_scratch_alloc(e, fn, (int64_t)m * n, es, true))))
      goto fail;
  }
  for (int64_t j = 0; j < b.count && k > 0; j++) {
    const nd_lin_mat A = nd_lin_at(&b, a, 2, j);
    char *oq = nd_lin_item(&tq, j, (int64_t)m * k), *w = buf ? buf : oq;
    nd_lin_load_dense(w, dt, 0, &A);
    L->gelqf(&n, &m, w, &lda, tau, work, &lwork, &info);
    if (info < 0) { nd_lin_bug(e, fn, L, "gelqf", info); goto fail; }
    char *orr = nd_lin_item(&tr, j, (int64_t)k * n);
    memcpy(orr, w, (size_t)((int64_t)k * n * es));
    zero_triangle(orr, dt, k, n, n, 0);
    L->orglq(&k, &m, &k, w, &lda, tau, work, &lwork, &info);
    if (info < 0) { nd_lin_bug(e, fn, L, "orglq", info); goto fail; }
    if (buf)
      for (int64_t i = 0; i < m; i++)
        memcpy(oq + i * k * es, w + i * n * es, (size_t)(k * es));
  }
  nd_scratch_free(tau);
  nd_scratch_free(work);
  nd_scratch_free(buf);
  *q = tq;
  *r = tr;
  return ND_OK;
fail:
  nd_scratch_free(tau);
  nd_scratch_free(work);
  nd_scratch_free(buf);
  nd_release(&tq);
  nd_release(&tr);
  return e->code;
}

static nd_status eigh_impl(nd_err *e, const char *fn, nd_tensor *w,
                           nd_tensor *v, const nd_tensor *a) {
  nd_lin_batch b;
  if (nd_lin_check(e, fn, a, 1, &b)) return e->code;
  const int dt = nd_lin_dtype(a->dtype);
  const int n = (int)a->size[a->ndim - 1], lda = n > 1 ? n : 1;
  const int64_t es = nd_dtype_size(dt);
  const nd_lin_lapack *L = nd_lin_lapack_for(dt);
  const char *jobz = v ? "V" : "N";
  nd_tensor tw = ND_UNSET, tv = ND_UNSET;
  void *buf = NULL, *work = NULL;
  int *iwork = NULL, lwork = -1, liwork = -1, info = 0, iq;
  double wq[2];
  if (nd_lin_new(e, &tw, dt, &b, 1, n, 0) ||
      (v && nd_lin_new(e, &tv, dt, &b, 2, n, n)))
    goto fail;
  if (n > 0 && b.count > 0) {
    L->syevd(jobz, "U", &n, NULL, &lda, NULL, wq, &lwork, &iq, &liwork, &info,
             1, 1);
    if (info < 0) { nd_lin_bug(e, fn, L, "syevd", info); goto fail; }
    if (nd_lin_lwork(e, fn, wq, dt, &lwork)) goto fail;
    liwork = iq > 1 ? iq : 1;
    if (!(buf = nd_scratch_alloc(e, fn, (int64_t)n * n, es, true)) ||
        !(work = nd_scratch_alloc(e, fn, lwork, es, true)) ||
        !(iwork = nd_scratch_alloc(e, fn, liwork, sizeof(int), true)))
      goto fail;
  }
  for (int64_t k = 0; k < b.count && n > 0; k++) {
    const nd_lin_mat A = nd_lin_at(&b, a, 2, k);
    nd_lin_load_dense(buf, dt, 0, &A);
    if (!nd_lin_finite(buf, dt, n, n, n, 1)) {
      nd_lin_fail_at(e, fn, &b, k, "input contains NaN or inf");
      goto fail;
    }
    L->syevd(jobz, "U", &n, buf, &lda, nd_lin_item(&tw, k, n), work, &lwork,
             iwork, &liwork, &info, 1, 1);
    if (info < 0) { nd_lin_bug(e, fn, L, "syevd", info); goto fail; }
    if (info > 0) {
      nd_lin_fail_at(e, fn, &b, k, "eigenvalues did not converge");
      goto fail;
    }
    if (v)
      nd_transpose_copy(nd_lin_item(&tv, k, (int64_t)n * n), buf, n, n, n, n,
                        (int)es);
  }
  nd_scratch_free(buf);
  nd_scratch_free(work);
  nd_scratch_free(iwork);
  *w = tw;
  if (v) *v = tv;
  return ND_OK;
fail:
  nd_scratch_free(buf);
  nd_scratch_free(work);
  nd_scratch_free(iwork);
  nd_release(&tw);
  nd_release(&tv);
  return e->code;
}

nd_status nd_linalg_eigh(nd_err *e, nd_tensor *w, nd_tensor *v,
                         const nd_tensor *a) {
  return eigh_impl(e, "eigh", w, v, a);
}
nd_status nd_linalg_eigvalsh(nd_err *e, nd_tensor *w, const nd_tensor *a) {
  return eigh_impl(e, "eigvalsh", w, NULL, a);
}
