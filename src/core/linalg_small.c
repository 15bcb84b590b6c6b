/* Unrolled determinants and inverses of 1x1..4x4 matrices, in double
 * whatever the dtype (engines call these per entity per frame, where
 * LAPACK's call overhead would dominate). Cofactor expansion; the callers
 * hand a zero or non-finite determinant back to LAPACK, so "singular" and
 * NaN handling stay exactly LAPACK's. */
#include "linalg.h"

void lin_small_load(double *dst, const lin_mat *m) {
  const int64_t R = m->rows, C = m->cols, rs = m->rs, cs = m->cs;
#define SMALL_LOAD(E, name, T, kind)                                        \
  case ND_##E: {                                                            \
    const T *p = (const T *)m->p;                                           \
    for (int64_t i = 0; i < R; i++)                                         \
      for (int64_t j = 0; j < C; j++)                                       \
        dst[i * C + j] = (double)p[i * rs + j * cs];                        \
    return;                                                                 \
  }
  switch (m->dt) { ND_DTYPES(SMALL_LOAD) }
#undef SMALL_LOAD
}

void lin_small_store(void *dst, int dt, int64_t ld, const double *r,
                     int64_t rows, int64_t cols) {
  if (dt == ND_FLOAT32) {
    float *d = dst;
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < cols; j++) d[i * ld + j] = (float)r[i * cols + j];
  } else {
    double *d = dst;
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < cols; j++) d[i * ld + j] = r[i * cols + j];
  }
}

/* The 2x2 minors of rows 0-1 (s) and rows 2-3 (c) of a 4x4 matrix; the
 * determinant is their Laplace expansion. */
typedef struct minors4 { double s[6], c[6]; } minors4;
static double minors(const double *a, minors4 *k) {
  double *s = k->s, *c = k->c;
  s[0] = a[0] * a[5] - a[4] * a[1];
  s[1] = a[0] * a[6] - a[4] * a[2];
  s[2] = a[0] * a[7] - a[4] * a[3];
  s[3] = a[1] * a[6] - a[5] * a[2];
  s[4] = a[1] * a[7] - a[5] * a[3];
  s[5] = a[2] * a[7] - a[6] * a[3];
  c[0] = a[8] * a[13] - a[12] * a[9];
  c[1] = a[8] * a[14] - a[12] * a[10];
  c[2] = a[8] * a[15] - a[12] * a[11];
  c[3] = a[9] * a[14] - a[13] * a[10];
  c[4] = a[9] * a[15] - a[13] * a[11];
  c[5] = a[10] * a[15] - a[14] * a[11];
  return s[0] * c[5] - s[1] * c[4] + s[2] * c[3] + s[3] * c[2] -
         s[4] * c[1] + s[5] * c[0];
}

double lin_small_det(int n, const double *a) {
  switch (n) {
  case 0: return 1;
  case 1: return a[0];
  case 2: return a[0] * a[3] - a[1] * a[2];
  case 3:
    return a[0] * (a[4] * a[8] - a[5] * a[7]) -
           a[1] * (a[3] * a[8] - a[5] * a[6]) +
           a[2] * (a[3] * a[7] - a[4] * a[6]);
  default: {
    minors4 k;
    return minors(a, &k);
  }
  }
}

static int usable(double det) { return det != 0 && det - det == 0; }

double lin_small_inv(int n, const double *a, double *r) {
  double det, x[16];
  switch (n) {
  case 0: return 1;
  case 1:
    det = a[0];
    x[0] = 1;
    break;
  case 2:
    det = a[0] * a[3] - a[1] * a[2];
    x[0] = a[3], x[1] = -a[1], x[2] = -a[2], x[3] = a[0];
    break;
  case 3:
    x[0] = a[4] * a[8] - a[5] * a[7];
    x[1] = a[2] * a[7] - a[1] * a[8];
    x[2] = a[1] * a[5] - a[2] * a[4];
    x[3] = a[5] * a[6] - a[3] * a[8];
    x[4] = a[0] * a[8] - a[2] * a[6];
    x[5] = a[2] * a[3] - a[0] * a[5];
    x[6] = a[3] * a[7] - a[4] * a[6];
    x[7] = a[1] * a[6] - a[0] * a[7];
    x[8] = a[0] * a[4] - a[1] * a[3];
    det = a[0] * x[0] + a[1] * x[3] + a[2] * x[6];
    break;
  default: {
    minors4 k;
    det = minors(a, &k);
    const double *s = k.s, *c = k.c;
    x[0] = a[5] * c[5] - a[6] * c[4] + a[7] * c[3];
    x[1] = -a[1] * c[5] + a[2] * c[4] - a[3] * c[3];
    x[2] = a[13] * s[5] - a[14] * s[4] + a[15] * s[3];
    x[3] = -a[9] * s[5] + a[10] * s[4] - a[11] * s[3];
    x[4] = -a[4] * c[5] + a[6] * c[2] - a[7] * c[1];
    x[5] = a[0] * c[5] - a[2] * c[2] + a[3] * c[1];
    x[6] = -a[12] * s[5] + a[14] * s[2] - a[15] * s[1];
    x[7] = a[8] * s[5] - a[10] * s[2] + a[11] * s[1];
    x[8] = a[4] * c[4] - a[5] * c[2] + a[7] * c[0];
    x[9] = -a[0] * c[4] + a[1] * c[2] - a[3] * c[0];
    x[10] = a[12] * s[4] - a[13] * s[2] + a[15] * s[0];
    x[11] = -a[8] * s[4] + a[9] * s[2] - a[11] * s[0];
    x[12] = -a[4] * c[3] + a[5] * c[1] - a[6] * c[0];
    x[13] = a[0] * c[3] - a[1] * c[1] + a[2] * c[0];
    x[14] = -a[12] * s[3] + a[13] * s[1] - a[14] * s[0];
    x[15] = a[8] * s[3] - a[9] * s[1] + a[10] * s[0];
  }
  }
  if (!usable(det)) return 0;
  const double inv = 1 / det;
  if (!usable(inv)) return 0; /* det so small that 1/det overflows */
  for (int i = 0; i < n * n; i++) r[i] = x[i] * inv;
  return det;
}
