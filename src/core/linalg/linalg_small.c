/* Unrolled determinants and inverses of 1x1..4x4 matrices, in double
 * whatever the dtype (engines call these per entity per frame, where
 * LAPACK's call overhead would dominate). Cofactor expansion; the callers
 * hand a zero or non-finite determinant back to LAPACK, so "singular" and
 * NaN handling stay exactly LAPACK's. */
#include "linalg.h"

/* Square N x N moves with N a constant, so that the compiler unrolls
 * them: the batched 4x4 case is dominated by these and the kernel. */
#define MOVE_SQUARE(T, N)                                                   \
  for (int i = 0; i < N; i++)                                               \
    for (int j = 0; j < N; j++) dst[i * N + j] = (double)p[i * rs + j * cs];
#define LOAD_SQUARE(T)                                                      \
  do {                                                                      \
    const T *p = (const T *)m->p;                                           \
    switch (R) {                                                            \
    case 2: MOVE_SQUARE(T, 2) return;                                       \
    case 3: MOVE_SQUARE(T, 3) return;                                       \
    case 4: MOVE_SQUARE(T, 4) return;                                       \
    }                                                                       \
  } while (0)

void nd_lin_small_load(double *dst, const nd_lin_mat *m) {
  const int64_t R = m->rows, C = m->cols, rs = m->rs, cs = m->cs;
  if (R == C && m->dt == ND_FLOAT32) LOAD_SQUARE(float);
  if (R == C && m->dt == ND_FLOAT64) LOAD_SQUARE(double);
#define SMALL_LOAD(E, name, T, kind)                                        \
  case ND_##E: {                                                            \
    const T *p = (const T *)m->p;                                           \
    for (int64_t i = 0; i < R; i++)                                         \
      for (int64_t j = 0; j < C; j++)                                       \
        dst[i * C + j] = (double)p[i * rs + j * cs];                        \
    return;                                                                 \
  }
  switch (m->dt) { ND_NATIVE_DTYPES(SMALL_LOAD) }
#undef SMALL_LOAD
  /* float16, bfloat16: row by row through the one conversion */
  const int64_t es = nd_dtype_size(m->dt);
  for (int64_t i = 0; i < R; i++)
    nd_convert(ND_FLOAT64, (char *)(dst + i * C), (int64_t)sizeof(double),
               m->dt, m->p + i * rs * es, cs * es, C);
}

#define STORE_SQUARE(T, N)                                                  \
  for (int i = 0; i < N * N; i++) ((T *)dst)[i] = (T)r[i];
void nd_lin_small_store(void *dst, int dt, int64_t ld, const double *r,
                        int64_t rows, int64_t cols) {
  if (rows == cols && ld == cols && (rows == 4 || rows == 3)) {
    if (dt == ND_FLOAT32 && rows == 4) { STORE_SQUARE(float, 4) return; }
    if (dt == ND_FLOAT32) { STORE_SQUARE(float, 3) return; }
    if (rows == 4) { STORE_SQUARE(double, 4) return; }
    STORE_SQUARE(double, 3) return;
  }
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

static inline double det_n(int n, const double *a) {
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

double nd_lin_small_det(int n, const double *a) { return det_n(n, a); }

static int usable(double det) { return det != 0 && det - det == 0; }

double nd_lin_small_inv(int n, const double *a, double *r) {
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

/* det of `count` N x N matrices at a->p + k*bs elements (a batch with
 * one dim), into the contiguous out of dtype odt: the batched 4x4 det,
 * where a call per matrix would cost more than the arithmetic. */
enum { LANES = 8 };
/* minors()'s expansion, 8 matrices at a time, one per lane, so that the
 * compiler vectorizes it across matrices. */
static void det4_lanes(const double (*a)[LANES], double *d) {
  for (int l = 0; l < LANES; l++) {
    const double s0 = a[0][l] * a[5][l] - a[4][l] * a[1][l];
    const double s1 = a[0][l] * a[6][l] - a[4][l] * a[2][l];
    const double s2 = a[0][l] * a[7][l] - a[4][l] * a[3][l];
    const double s3 = a[1][l] * a[6][l] - a[5][l] * a[2][l];
    const double s4 = a[1][l] * a[7][l] - a[5][l] * a[3][l];
    const double s5 = a[2][l] * a[7][l] - a[6][l] * a[3][l];
    const double c0 = a[8][l] * a[13][l] - a[12][l] * a[9][l];
    const double c1 = a[8][l] * a[14][l] - a[12][l] * a[10][l];
    const double c2 = a[8][l] * a[15][l] - a[12][l] * a[11][l];
    const double c3 = a[9][l] * a[14][l] - a[13][l] * a[10][l];
    const double c4 = a[9][l] * a[15][l] - a[13][l] * a[11][l];
    const double c5 = a[10][l] * a[15][l] - a[14][l] * a[11][l];
    d[l] = s0 * c5 - s1 * c4 + s2 * c3 + s3 * c2 - s4 * c1 + s5 * c0;
  }
}

static void put(void *out, int odt, int64_t k, double d) {
  if (odt == ND_FLOAT32)
    ((float *)out)[k] = (float)d;
  else
    ((double *)out)[k] = d;
}

#define DET_LOOP(T, N)                                                      \
  for (; k < count; k++) {                                                  \
    const T *p = (const T *)a->p + k * bs;                                  \
    double m[N * N];                                                        \
    for (int i = 0; i < N; i++)                                             \
      for (int j = 0; j < N; j++) m[i * N + j] = (double)p[i * rs + j * cs];\
    put(out, odt, k, det_n(N, m));                                          \
  }
#define DET_TYPED(T)                                                        \
  if (a->rows == 4 && rs == 4 && cs == 1 && bs == 16)                       \
    for (; k + LANES <= count; k += LANES) {                                \
      const T *p = (const T *)a->p + k * 16;                                \
      double m[16][LANES], d[LANES];                                        \
      for (int l = 0; l < LANES; l++)                                       \
        for (int e = 0; e < 16; e++) m[e][l] = (double)p[l * 16 + e];       \
      det4_lanes(m, d);                                                     \
      for (int l = 0; l < LANES; l++) put(out, odt, k + l, d[l]);          \
    }                                                                       \
  switch (a->rows) {                                                        \
  case 2: DET_LOOP(T, 2) return 1;                                          \
  case 3: DET_LOOP(T, 3) return 1;                                          \
  case 4: DET_LOOP(T, 4) return 1;                                          \
  }

int nd_lin_small_det_batch(const nd_lin_mat *a, int64_t bs, int64_t count,
                           void *out, int odt) {
  const int64_t rs = a->rs, cs = a->cs;
  int64_t k = 0;
  if (a->dt == ND_FLOAT32) { DET_TYPED(float) }
  if (a->dt == ND_FLOAT64) { DET_TYPED(double) }
  return 0;
}
