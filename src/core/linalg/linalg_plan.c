/* nd_linalg_plan: what a linalg call does, without doing it -- the LAPACK
 * (and BLAS) routines, their flags, which operands are copied into
 * workspace and whether that copy transposes. It states the decisions the
 * drivers in linalg_lu.c, linalg_factor.c and linalg_svd.c take. */
#include "linalg.h"
#include <stdio.h>

/* How a matrix's copy into a row-major (col_major 0) or column-major
 * buffer reads it: a straight copy, a transposing one, or a gather. */
static int copy_kind(const nd_tensor *t, int col_major) {
  const int64_t rs = t->stride[t->ndim - 2], cs = t->stride[t->ndim - 1];
  const int64_t rows = t->size[t->ndim - 2], cols = t->size[t->ndim - 1];
  const int row = cols <= 1 || cs == 1, col = rows <= 1 || rs == 1;
  if (nd_lin_dtype(t->dtype) != t->dtype) return ND_LINALG_CONVERT;
  if (col_major ? col : row) return ND_LINALG_STRAIGHT;
  if (col_major ? row : col) return ND_LINALG_TRANSPOSE;
  return ND_LINALG_GATHER;
}

static int vec_kind(const nd_tensor *v) {
  if (nd_lin_dtype(v->dtype) != v->dtype) return ND_LINALG_CONVERT;
  return v->size[0] <= 1 || v->stride[0] == 1 ? ND_LINALG_STRAIGHT
                                              : ND_LINALG_GATHER;
}

nd_status nd_linalg_plan(nd_err *e, nd_lapack_plan *p, const char *name,
                         const nd_tensor *a, const nd_tensor *b) {
  static const char *const sq[] = {"solve", "inv", "det", "slogdet",
                                   "cholesky", "eigh", "eigvalsh",
                                   "matrix_power"};
  static const char *const known[] = {"qr", "svd", "svdvals", "pinv",
                                      "matrix_rank", "cond", "lstsq", "norm"};
  nd_lin_batch bt;
  int square = -1;
  for (size_t i = 0; i < sizeof sq / sizeof *sq; i++)
    if (!strcmp(name, sq[i])) square = 1;
  for (size_t i = 0; i < sizeof known / sizeof *known; i++)
    if (!strcmp(name, known[i])) square = 0;
  if (square < 0)
    return nd_fail(e, ND_EINVAL, "plan: unknown function '%s'", name);
  const int two = !strcmp(name, "solve") || !strcmp(name, "lstsq");
  if (two && !b)
    return nd_fail(e, ND_EINVAL, "plan: %s needs two operands", name);
  if (nd_lin_check(e, name, a, square, &bt)) return e->code;
  memset(p, 0, sizeof *p);
  const int dt =
      nd_lin_dtype(two ? nd_promote_types(a->dtype, b->dtype) : a->dtype);
  const char c = dt == ND_FLOAT32 ? 's' : 'd';
  const int64_t m = a->size[a->ndim - 2], n = a->size[a->ndim - 1];
  p->batch = bt.count;
  p->dtype = dt;
  p->copy_a = copy_kind(a, 0);
  p->copy_b = ND_LINALG_NONE;
#define ROUTINE(...) snprintf(p->routine, sizeof p->routine, __VA_ARGS__)
#define FLAGS(...) snprintf(p->flags, sizeof p->flags, __VA_ARGS__)
  if (!strcmp(name, "solve")) {
    const int vec = b->ndim == 1;
    const int64_t k = vec ? 1 : b->size[b->ndim - 1];
    if (n <= 4 && k <= 4) {
      ROUTINE("unrolled%lldx%lld", (long long)n, (long long)n);
      p->copy_a = ND_LINALG_NONE;
    } else {
      ROUTINE("%cgetrf+%ctrsm+%ctrsm", c, c, c);
      FLAGS("trsm side=R uplo=U,L transa=N diag=N,U order=col (X^T = B^T U^-1 L^-1 P^T)");
      p->copy_b = vec ? vec_kind(b) : copy_kind(b, 0); /* into the result */
    }
  } else if (!strcmp(name, "inv") || !strcmp(name, "det") ||
             !strcmp(name, "slogdet") || !strcmp(name, "matrix_power")) {
    const int inv = !strcmp(name, "inv");
    if (n <= 4 && strcmp(name, "slogdet") && strcmp(name, "matrix_power")) {
      ROUTINE("unrolled%lldx%lld", (long long)n, (long long)n);
      p->copy_a = ND_LINALG_NONE;
    } else if (!strcmp(name, "matrix_power")) {
      ROUTINE("%cgemm (repeated squaring; n < 0: inv first)", c);
    } else {
      ROUTINE(inv ? "%cgetrf+%cgetri" : "%cgetrf", c, c);
      FLAGS("A^T factored in place (row-major A read as column-major)");
    }
  } else if (!strcmp(name, "cholesky")) {
    ROUTINE("%cpotrf", c);
    FLAGS("uplo=U (A's lower triangle), in place in the result");
  } else if (!strcmp(name, "eigh") || !strcmp(name, "eigvalsh")) {
    ROUTINE("%csyevd", c);
    FLAGS("jobz=%s uplo=U (A's lower triangle)%s", name[3] == 'h' ? "V" : "N",
          name[3] == 'h' ? "; eigenvectors transposed out" : "");
  } else if (!strcmp(name, "qr")) {
    ROUTINE("%cgelqf+%corglq", c, c);
    FLAGS("LQ of A^T: Q and R written row-major without a transpose%s",
          m >= n ? ", in place in Q" : "");
  } else if (!strcmp(name, "lstsq")) {
    ROUTINE("%cgelsd", c);
    FLAGS("rcond=eps*max(m,n)");
    p->copy_a = copy_kind(a, 1);
    p->copy_b = b->ndim == 1 ? vec_kind(b) : copy_kind(b, 1);
  } else if (!strcmp(name, "norm")) {
    ROUTINE("loop (fro, 1, inf); %cgesdd jobz=N (2, -2, nuc)", c);
    p->copy_a = ND_LINALG_NONE;
  } else {
    const int uv = !strcmp(name, "svd") || !strcmp(name, "pinv");
    ROUTINE(!strcmp(name, "pinv") ? "%cgesdd+%cgemm" : "%cgesdd", c, c);
    FLAGS("jobz=%s on A^T%s", uv ? "S" : "N",
          uv ? ": its VT is U, its U is Vh, written in place" : "");
  }
#undef ROUTINE
#undef FLAGS
  return ND_OK;
}
