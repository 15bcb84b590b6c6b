/* nd_linalg_* from C without Lua: results, statuses, messages, and results
 * left unset on failure. Prints "N passed, N failed"; exits nonzero on
 * failure. */
#include "nd.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "check.h"

static double at(const nd_tensor *t, int64_t i, int64_t j) {
  nd_err e = {0};
  double v = NAN;
  int64_t idx[2] = {i, j};
  nd_get(&e, t, idx, &v);
  return v;
}

int main(void) {
  nd_err e = {0};
  memset(&e, 0, sizeof e);
  double a[9] = {4, 1, 2, 1, 5, 3, 2, 3, 6}, s[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  int64_t sz[2] = {3, 3};
  nd_tensor A = ND_UNSET, S = ND_UNSET, X = ND_UNSET, P = ND_UNSET,
            D = ND_UNSET, U = ND_UNSET, W = ND_UNSET, V = ND_UNSET,
            N = ND_UNSET, At = ND_UNSET;
  OK(nd_wrap(&e, &A, a, sizeof a, ND_FLOAT64, 2, sz, NULL, NULL, NULL));
  OK(nd_wrap(&e, &S, s, sizeof s, ND_FLOAT64, 2, sz, NULL, NULL, NULL));
  OK(nd_transpose(&e, &At, &A, 0, 1));

  OK(nd_linalg_inv(&e, &X, &At)); /* A is symmetric: inv(A^T) = inv(A) */
  OK(nd_matmul(&e, &P, &A, &X));
  double worst = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      worst = fmax(worst, fabs(at(&P, i, j) - (i == j)));
  CHECK(worst < 1e-12);
  CHECK(nd_is_contiguous(&X));

  OK(nd_linalg_det(&e, &D, &A));
  CHECK(D.ndim == 0 && fabs(at(&D, 0, 0) - 70) < 1e-9);
  nd_release(&D);
  OK(nd_linalg_det(&e, &D, &S));
  CHECK(at(&D, 0, 0) == 0); /* singular: det 0, no error */

  CHECK(nd_linalg_inv(&e, &N, &S) == ND_EINVAL);
  CHECK(strstr(e.msg, "inv: matrix is singular") != NULL);
  CHECK(N.storage == NULL); /* left unset */
  CHECK(nd_linalg_solve(&e, &N, &S, &A) == ND_EINVAL);
  CHECK(strstr(e.msg, "solve: matrix is singular") != NULL && N.storage == NULL);
  nd_tensor R = ND_UNSET;
  int64_t sz23[2] = {2, 3};
  OK(nd_zeros(&e, &R, ND_FLOAT64, 2, sz23));
  CHECK(nd_linalg_cholesky(&e, &N, &R) == ND_EINVAL);
  CHECK(strstr(e.msg, "square") != NULL && N.storage == NULL);

  OK(nd_linalg_svd(&e, &U, &W, &V, &A));
  CHECK(U.ndim == 2 && W.ndim == 1 && W.size[0] == 3 && V.size[0] == 3);
  CHECK(at(&W, 0, 0) >= 0);
  nd_release(&U), nd_release(&W), nd_release(&V);
  OK(nd_linalg_eigh(&e, &W, &V, &A));
  CHECK(W.size[0] == 3 && V.size[1] == 3);
  nd_release(&W);
  OK(nd_linalg_norm(&e, &W, &A, ND_NORM_P, HUGE_VAL));
  CHECK(at(&W, 0, 0) == 11);
  nd_lapack_plan plan;
  OK(nd_linalg_plan(&e, &plan, "inv", &At, NULL));
  CHECK(plan.copy_a == ND_LINALG_NONE && strcmp(plan.routine, "unrolled3x3") == 0);
  OK(nd_linalg_plan(&e, &plan, "slogdet", &At, NULL));
  CHECK(plan.copy_a == ND_LINALG_TRANSPOSE && strcmp(plan.routine, "dgetrf") == 0);

  nd_release(&A), nd_release(&S), nd_release(&X), nd_release(&P);
  nd_release(&D), nd_release(&V), nd_release(&W), nd_release(&R);
  nd_release(&At);
  return check_report();
}
