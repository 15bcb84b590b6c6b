/* Internal to the linalg files: checking, batching, workspace, moving
 * matrices between strided views and LAPACK's buffers, LAPACK's info. */
#ifndef ND_LINALG_H
#define ND_LINALG_H

#include "kernels.h"
#include "lapack.h"

/* The computation's dtype: float32 stays, float16 and bfloat16 compute
 * in float32 (and give float32: LAPACK has no half routines), everything
 * else is float64. */
static inline int nd_lin_dtype(int dt) {
  return dt == ND_FLOAT32 || nd_is_half(dt) ? ND_FLOAT32 : ND_FLOAT64;
}
const nd_lin_lapack *nd_lin_lapack_for(int dtype);
double nd_lin_eps(int dtype); /* machine epsilon of float32 / float64 */

/* One matrix of a batch: element (i, j) at p + (i*rs + j*cs) elements. */
typedef struct nd_lin_mat {
  const char *p;
  int dt;
  int64_t rows, cols, rs, cs;
} nd_lin_mat;

/* The batch dims of a call (broadcast over its operands) and how many
 * matrices they hold. */
typedef struct nd_lin_batch {
  int nbd;
  int64_t size[ND_MAX_DIMS];
  int64_t count;
} nd_lin_batch;

/* a must be a float-able tensor of >= 2 dims (square when asked) whose
 * matrix dims fit LAPACK's int; b->... gets its batch dims. */
nd_status nd_lin_check(nd_err *e, const char *fn, const nd_tensor *a,
                       int square, nd_lin_batch *b);
/* Batch dims of several operands broadcast together (each with `mdims`
 * trailing matrix dims, 1 for a vector). */
nd_status nd_lin_broadcast(nd_err *e, const char *fn, int n,
                           const nd_tensor *const *ts, const int *mdims,
                           nd_lin_batch *b);
/* B (bt) as the right-hand side of A: (rows,) or (..., rows, k), rows
 * named `name` in the message. Broadcasts A's and B's batch dims into b;
 * mdims gets {2, 1} for a vector B, else {2, 2}; *nrhs gets k (1 for a
 * vector). */
nd_status nd_lin_rhs(nd_err *e, const char *fn, const nd_tensor *a,
                     const nd_tensor *bt, int64_t rows, const char *name,
                     nd_lin_batch *b, int mdims[2], int *nrhs);
/* The k-th matrix (row-major over the batch) of t, whose last `mdims`
 * dims are the matrix (mdims 1: a column vector). */
nd_lin_mat nd_lin_at(const nd_lin_batch *b, const nd_tensor *t, int mdims,
                     int64_t k);
/* A fresh row-major result: the batch dims then `ntail` sizes. */
nd_status nd_lin_new(nd_err *e, nd_tensor *out, int dt, const nd_lin_batch *b,
                     int ntail, int64_t t0, int64_t t1);
/* Pointer to matrix k of a fresh result whose matrices hold n elements. */
static inline char *nd_lin_item(const nd_tensor *t, int64_t k, int64_t n) {
  return nd_ptr(t) + k * n * nd_dtype_size(t->dtype);
}

/* dst (dtype dt) element (i, j) at dst + (i*drs + j*dcs) elements gets
 * m's (i, j), converted; block-transposes when the layouts differ. */
void nd_lin_load(void *dst, int dt, int64_t drs, int64_t dcs,
                 const nd_lin_mat *m);
/* As nd_lin_load into a compact row-major (col_major 0) or column-major
 * buffer. */
static inline void nd_lin_load_dense(void *dst, int dt, int col_major,
                                     const nd_lin_mat *m) {
  if (col_major)
    nd_lin_load(dst, dt, 1, m->rows, m);
  else
    nd_lin_load(dst, dt, m->cols, 1, m);
}
/* A compact row-major rows x cols matrix of dtype dt as a nd_lin_mat. */
static inline nd_lin_mat nd_lin_dense(const void *p, int dt, int64_t rows,
                                      int64_t cols) {
  nd_lin_mat m = {(const char *)p, dt, rows, cols, cols, 1};
  return m;
}
/* Nonzero when every element of the n x n buffer's lower triangle
 * (lower 1), upper (-1) or all of rows x cols (lower 0) is finite. */
int nd_lin_finite(const void *p, int dt, int64_t rows, int64_t cols, int64_t ld,
                  int tri);

/* Element access as double (O(n) work only). */
double nd_lin_get(const void *p, int dt, int64_t i);
void nd_lin_set(void *p, int dt, int64_t i, double v);

/* A LAPACK workspace query's answer (work[0], a real) as an int. */
nd_status nd_lin_lwork(nd_err *e, const char *fn, const void *work, int dt,
                       int *lwork);
/* A size LAPACK takes as int. */
nd_status nd_lin_int(nd_err *e, const char *fn, int64_t v, int *out);
/* info < 0 from LAPACK: an argument nd passed was wrong -- nd's bug. */
nd_status nd_lin_bug(nd_err *e, const char *fn, const nd_lin_lapack *L,
                     const char *routine, int info);
/* "fn: <what>" plus " at batch index {i, j}" when batched. */
nd_status nd_lin_fail_at(nd_err *e, const char *fn, const nd_lin_batch *b,
                         int64_t k, const char *what);

/* Singular value decomposition workspace (linalg_svd.c) shared by svd,
 * svdvals, pinv, matrix_rank, cond, norm. */
typedef struct nd_lin_svd {
  const nd_lin_lapack *L;
  const char *fn;
  int dt, m, n, k;
  char jobz;
  void *a, *work;
  int lwork, *iwork;
} nd_lin_svd;
nd_status nd_lin_svd_init(nd_err *e, const char *fn, nd_lin_svd *w, int dt,
                          int64_t m, int64_t n, int vectors);
/* One matrix: s (k values, descending) and, when vectors were asked, u
 * (m x k) and vh (k x n), compact row-major, all of dtype w->dt. */
nd_status nd_lin_svd_run(nd_err *e, nd_lin_svd *w, const nd_lin_mat *a,
                         const nd_lin_batch *b, int64_t k, void *s, void *u,
                         void *vh);
void nd_lin_svd_free(nd_lin_svd *w);

/* The unrolled 2x2, 3x3, 4x4 kernels (linalg_small.c), in double. det of
 * the n x n row-major m. inv writes the inverse into r and returns the
 * determinant (r untouched when it is 0: singular, or not finite). */
double nd_lin_small_det(int n, const double *m);
double nd_lin_small_inv(int n, const double *m, double *r);
/* det of count matrices like a at a->p + k*bs elements into the compact
 * out (dtype odt); 0 when the dtype or size has no unrolled loop. */
int nd_lin_small_det_batch(const nd_lin_mat *a, int64_t bs, int64_t count,
                           void *out, int odt);
/* m (rows x cols, any dtype/strides) into a compact row-major double
 * array; r (row-major doubles) out into dst of dtype dt, row stride ld. */
void nd_lin_small_load(double *dst, const nd_lin_mat *m);
void nd_lin_small_store(void *dst, int dt, int64_t ld, const double *r,
                        int64_t rows, int64_t cols);

#endif
