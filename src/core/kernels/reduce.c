/* Reductions. The input is walked by nd_iter together with an accumulator
 * seen through stride-0 reduced dims, so memory is read in its own order:
 * when the accumulator's inner stride is 0 the inner run is reduced
 * pairwise (8 lanes per 1024-element leaf, as NumPy's sum), otherwise the
 * run updates a vector of accumulators (a:sum(1) on row-major data).
 * Floats accumulate in double, integers in uint64 (wrapping); down
 * contiguous rows, float32 sums add 8 rows in float32 first (pass_).
 * Inner runs of at most SHORT elements (a:sum(2) of {R, 8}) are reduced a
 * block of rows at a time, across the rows (short_, sarg_), with the same
 * lanes per run; when such a run is the only reduction and has the
 * smallest stride, the results are written at once, without accumulator.
 *
 * Threads: the work is cut into parts that depend on the shape only, so
 * results do not depend on the thread count: along a kept dim (each part
 * owns its outputs), or along a reduced dim into partial accumulators
 * that are then combined in order. */
#ifndef __clang__ /* clang vectorises these loops at -O2 already */
#pragma GCC optimize("O3")
#endif
#include "elementwise.h"
#include <math.h>
#include <stdlib.h>

enum { LEAF = 1024, MAX_PARTS = 64, RB = 2048, PB = 1 << 14 };
/* Reduced runs of at most SHORT elements go to the short_ kernels, SB
 * rows at a time. */
enum { SHORT = 16, SB = 128 };
typedef struct {
  int64_t n, s;    /* the run: its length and byte stride */
  int nv, ismax;   /* sarg_: outputs before the input (2 with values) */
  int fin;         /* short_: write the results (op, od) instead of acc */
  int op, od, ad;  /* ND_R_*, the result and accumulator dtypes */
} short_ctx;

/* The results of b accumulators a (dtype c->ad) to out (c->od, os bytes
 * apart): nd_reduce's last steps (mean's division, norm's sqrt, the
 * conversion), for a block. */
static void short_finish(const short_ctx *c, char *out, int64_t os, void *a,
                         int64_t b) {
  double *d = a;
  if (c->op == ND_R_MEAN)
    for (int64_t r = 0; r < b; r++) d[r] = d[r] / (double)c->n;
  else if (c->op == ND_R_NORM)
    for (int64_t r = 0; r < b; r++) d[r] = sqrt(d[r]);
  nd_convert(c->od, out, os, c->ad, a, nd_dtype_size(c->ad), b);
}
/* Whether a block of short rows (n elements s bytes apart, rows rs bytes
 * apart) is first transposed into a buffer of SB-element rows, so that the
 * loops across rows read contiguous memory: when its runs are unit-stride
 * and the rows are not. */
static int tr_rows(int64_t n, int64_t s, int64_t rs, int64_t es) {
  return n > 1 && s == es && rs > es && rs % es == 0;
}
/* Unit-stride runs longer than a cache line (16 doubles) are reduced row
 * by row instead, 8 lanes in a vector as run_ does: read from memory, their
 * transposed blocks made 1M x 16 float64 sums 1.8x slower than that. */
static int by_row(int64_t n, int64_t s, int64_t es) {
  return s == es && n * es > 64;
}
enum { K_SUM, K_FSUM, K_SQSUM, K_PROD, K_MIN, K_MAX, K_ALL, K_ANY, K_N };

#define KERNEL ND_CLONES("avx512f", "avx2", "default")

#define SUMACC(T) __typeof__(_Generic((T)0, float: 0.0, double: 0.0, default: (uint64_t)0))
#define SUMBLK(T, A) __typeof__(_Generic((T)0, float: 0.0f, default: (A)0))
#define MAXID(T) _Generic((T)0, float: -INFINITY, double: -INFINITY, int32_t: INT32_MIN, \
                          int64_t: INT64_MIN, int8_t: INT8_MIN, int16_t: INT16_MIN, \
                          default: 0)
#define MINID(T) _Generic((T)0, float: INFINITY, double: INFINITY, int32_t: INT32_MAX, \
                          int64_t: INT64_MAX, int8_t: INT8_MAX, int16_t: INT16_MAX, \
                          uint16_t: UINT16_MAX, uint32_t: UINT32_MAX,       \
                          uint64_t: UINT64_MAX, default: 255)

#define S_ADD(A, a, x) (a + (A)x)
#define S_SQ(A, a, x) (a + (A)x * (A)x)
#define S_MUL(A, a, x) (a * (A)x)
#define S_MIN(A, a, x) (NANQ(a) ? a : NANQ(x) || x < a ? (A)x : a)
#define S_MAX(A, a, x) (NANQ(a) ? a : NANQ(x) || x > a ? (A)x : a)
#define S_ALL(A, a, x) ((A)(a & (x != 0)))
#define S_ANY(A, a, x) ((A)(a | (x != 0)))
#define C_ADD(A, a, b) (a + b)
#define C_MUL(A, a, b) (a * b)
#define C_ALL(A, a, b) ((A)(a & b))
#define C_ANY(A, a, b) ((A)(a | b))

/* run_K_E: pairwise reduction of n elements; loop_K_E: the nd_iter loop.
 * BT: what a pass of rows down the columns steps in (see pass_). */
#define REDUCER(KN, E, T, A, BT, ID, STEP, COMB)                            \
  KERNEL static A run_##KN##_##E(const char *p, int64_t s, int64_t n) {     \
    if (n > LEAF) {                                                         \
      int64_t m = n / 2;                                                    \
      m -= m % 8;                                                           \
      A x = run_##KN##_##E(p, s, m), y = run_##KN##_##E(p + m * s, s, n - m); \
      return COMB(A, x, y);                                                 \
    }                                                                       \
    A l[8];                                                                 \
    for (int j = 0; j < 8; j++) l[j] = (A)(ID);                             \
    int64_t i = 0;                                                          \
    if (s == sizeof(T)) {                                                   \
      const T *x = (const T *)p;                                            \
      for (; i + 8 <= n; i += 8)                                            \
        for (int j = 0; j < 8; j++) l[j] = STEP(A, l[j], x[i + j]);         \
      for (; i < n; i++) l[0] = STEP(A, l[0], x[i]);                        \
    } else {                                                                \
      for (; i < n; i++) {                                                  \
        const T x = *(const T *)(p + i * s);                                \
        l[i & 7] = STEP(A, l[i & 7], x);                                    \
      }                                                                     \
    }                                                                       \
    A a = COMB(A, COMB(A, l[0], l[1]), COMB(A, l[2], l[3]));                \
    A b = COMB(A, COMB(A, l[4], l[5]), COMB(A, l[6], l[7]));                \
    return COMB(A, a, b);                                                   \
  }                                                                         \
  /* acc[0..m) op= k rows from p, rs bytes apart; k is a constant once    \
   * inlined, so each column's k steps unroll in a register. With a step   \
   * type BT narrower than A (float32 sums), the k rows are summed in BT   \
   * from the identity, then added into acc: one float add per element     \
   * and one conversion per k, with the error of a float32 sum of k        \
   * values (NumPy's is of all rows). Otherwise the steps go on from acc,  \
   * in the row order (and so every rounding) of a row-at-a-time loop. */  \
  static inline __attribute__((always_inline)) void                         \
  pass_##KN##_##E(A *acc, const char *p, int64_t rs, int64_t m, int k) {    \
    enum { NARROW = sizeof(BT) < sizeof(A) };                               \
    _Static_assert(NARROW || _Generic((BT)0, A: 1, default: 0), "BT is A"); \
    const T *x[8];                                                          \
    for (int j = 0; j < k; j++) x[j] = (const T *)(p + j * rs);             \
    for (int64_t i = 0; i < m; i++) {                                       \
      BT v = NARROW ? (BT)(ID) : (BT)acc[i];                                \
      for (int j = 0; j < k; j++) v = STEP(BT, v, x[j][i]);                 \
      acc[i] = NARROW ? COMB(A, acc[i], (A)v) : (A)v;                       \
    }                                                                       \
  }                                                                         \
  /* nr rows of w contiguous elements, rs bytes apart, into acc[0..w):     \
   * RB columns at a time, eight rows per pass over them (then 4, 2, 1),   \
   * so acc stays in L1 and is loaded and stored once per pass. */          \
  KERNEL static void rows_##KN##_##E(char *pa, const char *p, int64_t rs,   \
                                     int64_t nr, int64_t w) {               \
    for (int64_t c = 0; c < w; c += RB) {                                   \
      int64_t m = w - c < RB ? w - c : RB, r = 0;                           \
      A *a = (A *)pa + c;                                                   \
      const char *pc = p + c * (int64_t)sizeof(T);                          \
      for (; r + 8 <= nr; r += 8) pass_##KN##_##E(a, pc + r * rs, rs, m, 8); \
      if (nr - r >= 4) pass_##KN##_##E(a, pc + r * rs, rs, m, 4), r += 4;   \
      if (nr - r >= 2) pass_##KN##_##E(a, pc + r * rs, rs, m, 2), r += 2;   \
      if (nr - r >= 1) pass_##KN##_##E(a, pc + r * rs, rs, m, 1);           \
    }                                                                       \
  }                                                                         \
  /* R rows of n <= SHORT elements s bytes apart (st[1] bytes from row to  \
   * row) into acc[r] (st[0] bytes apart), or with c->fin, their results  \
   * to out[r] (the accumulator held the identity: combining with it      \
   * changes nothing). Each row in run_'s lanes and tree, so each result   \
   * is run_'s to the bit, for SB rows at a time, so that the loops run    \
   * across rows (vectorised) instead of along n. A lane starts from its   \
   * first element; lanes past nl stay the identity, which the tree would  \
   * combine without effect (a lane's sum is never -0). */                 \
  KERNEL static void short_##KN##_##E(char **p, const int64_t *st,          \
                                      int64_t R, void *ctx) {               \
    const short_ctx *c = ctx;                                               \
    const int64_t n = c->n, s = c->s, rs = st[1], as = st[0];               \
    const int64_t n8 = s == sizeof(T) ? n - n % 8 : n;                      \
    const int nl = s == sizeof(T) && n < 8 ? 1 : n < 8 ? (int)n : 8;        \
    const int rw = by_row(n, s, sizeof(T));                                 \
    const int tr = !rw && tr_rows(n, s, rs, sizeof(T));                     \
    const int64_t ne = rw ? 0 : n; /* elements for the loops across rows */ \
    const int nt = rw ? 1 : nl;    /* lanes for them to combine */          \
    A l[8][SB];                                                             \
    _Alignas(64) T buf[SHORT * SB];                                         \
    for (int64_t r0 = 0; r0 < R; r0 += SB) {                                \
      const int64_t b = R - r0 < SB ? R - r0 : SB;                          \
      const char *q = p[1] + r0 * rs;                                       \
      int64_t qs = s, qr = rs;                                              \
      if (rw) {                                                             \
        for (int64_t r = 0; r < b; r++) {                                   \
          const T *x = (const T *)(q + r * rs);                             \
          A v[8];                                                           \
          for (int j = 0; j < 8; j++) v[j] = STEP(A, (A)(ID), x[j]);        \
          int64_t i = 8;                                                    \
          for (; i < n8; i += 8)                                            \
            for (int j = 0; j < 8; j++) v[j] = STEP(A, v[j], x[i + j]);     \
          for (; i < n; i++) v[0] = STEP(A, v[0], x[i]);                    \
          A u = COMB(A, COMB(A, v[0], v[1]), COMB(A, v[2], v[3]));          \
          A w = COMB(A, COMB(A, v[4], v[5]), COMB(A, v[6], v[7]));          \
          l[0][r] = COMB(A, u, w);                                          \
        }                                                                   \
      } else if (tr) {                                                      \
        nd_transpose_copy(buf, q, n, b, SB, rs / (int64_t)sizeof(T),        \
                          sizeof(T));                                       \
        q = (const char *)buf, qs = SB * sizeof(T), qr = sizeof(T);         \
      }                                                                     \
      for (int64_t i = 0; i < ne; i++, q += qs) {                           \
        A *v = l[i < n8 ? i & 7 : 0];                                       \
        if (i < nl && qr == sizeof(T))                                      \
          for (int64_t r = 0; r < b; r++)                                   \
            v[r] = STEP(A, (A)(ID), ((const T *)q)[r]);                     \
        else if (i < nl)                                                    \
          for (int64_t r = 0; r < b; r++)                                   \
            v[r] = STEP(A, (A)(ID), *(const T *)(q + r * qr));              \
        else if (qr == sizeof(T))                                           \
          for (int64_t r = 0; r < b; r++)                                   \
            v[r] = STEP(A, v[r], ((const T *)q)[r]);                        \
        else                                                                \
          for (int64_t r = 0; r < b; r++)                                   \
            v[r] = STEP(A, v[r], *(const T *)(q + r * qr));                 \
      }                                                                     \
      for (int w = 1; w < 8; w *= 2)                                        \
        for (int j = 0; j + w < nt; j += 2 * w)                             \
          for (int64_t r = 0; r < b; r++)                                   \
            l[j][r] = COMB(A, l[j][r], l[j + w][r]);                        \
      char *pa = p[0] + r0 * as;                                            \
      if (c->fin)                                                           \
        short_finish(c, pa, as, l[0], b);                                   \
      else if (as == sizeof(A))                                             \
        for (int64_t r = 0; r < b; r++)                                     \
          ((A *)pa)[r] = COMB(A, ((A *)pa)[r], l[0][r]);                    \
      else                                                                  \
        for (int64_t r = 0; r < b; r++, pa += as)                           \
          *(A *)pa = COMB(A, *(A *)pa, l[0][r]);                            \
    }                                                                       \
  }                                                                         \
  KERNEL static void loop_##KN##_##E(char **p, const int64_t *st,           \
                                     int64_t n, void *ctx) {                \
    (void)ctx;                                                              \
    A *acc = (A *)p[0];                                                     \
    if (st[0] == 0) {                                                       \
      A r = run_##KN##_##E(p[1], st[1], n);                                 \
      *acc = COMB(A, *acc, r);                                              \
    } else if (st[0] == sizeof(A) && st[1] == sizeof(T)) {                  \
      const T *x = (const T *)p[1];                                         \
      for (int64_t i = 0; i < n; i++) acc[i] = STEP(A, acc[i], x[i]);       \
    } else {                                                                \
      char *pa = p[0];                                                      \
      const char *px = p[1];                                                \
      for (int64_t i = 0; i < n; i++, pa += st[0], px += st[1]) {           \
        const T x = *(const T *)px;                                         \
        *(A *)pa = STEP(A, *(A *)pa, x);                                    \
      }                                                                     \
    }                                                                       \
  }

#define S_MIN_C(A, a, b) S_MIN(A, a, b)
#define S_MAX_C(A, a, b) S_MAX(A, a, b)
#define REDUCERS(E, name, T, kind)                                          \
  REDUCER(sum, E, T, SUMACC(T), SUMBLK(T, SUMACC(T)), 0, S_ADD, C_ADD)      \
  REDUCER(fsum, E, T, double, SUMBLK(T, double), 0, S_ADD, C_ADD)           \
  REDUCER(sqsum, E, T, double, double, 0, S_SQ, C_ADD)                      \
  REDUCER(prod, E, T, SUMACC(T), SUMACC(T), 1, S_MUL, C_MUL)                \
  REDUCER(min, E, T, T, T, MINID(T), S_MIN, S_MIN_C)                        \
  REDUCER(max, E, T, T, T, MAXID(T), S_MAX, S_MAX_C)                        \
  REDUCER(all, E, T, uint8_t, uint8_t, 1, S_ALL, C_ALL)                     \
  REDUCER(any, E, T, uint8_t, uint8_t, 0, S_ANY, C_ANY)
ND_NATIVE_DTYPES(REDUCERS)

#define LOOPS(E, name, T, kind)                                             \
  [ND_##E] = {loop_sum_##E, loop_fsum_##E, loop_sqsum_##E, loop_prod_##E,   \
              loop_min_##E, loop_max_##E, loop_all_##E, loop_any_##E},
static const nd_loop_fn loops[ND_NDTYPES][K_N] = {ND_NATIVE_DTYPES(LOOPS)};
typedef void (*rows_fn)(char *, const char *, int64_t, int64_t, int64_t);
#define ROWS(E, name, T, kind)                                              \
  [ND_##E] = {rows_sum_##E, rows_fsum_##E, rows_sqsum_##E, rows_prod_##E,   \
              rows_min_##E, rows_max_##E, rows_all_##E, rows_any_##E},
static const rows_fn rowsf[ND_NDTYPES][K_N] = {ND_NATIVE_DTYPES(ROWS)};
#define SHORTS(E, name, T, kind)                                            \
  [ND_##E] = {short_sum_##E, short_fsum_##E, short_sqsum_##E,               \
              short_prod_##E, short_min_##E, short_max_##E, short_all_##E,  \
              short_any_##E},
static const nd_loop_fn shortf[ND_NDTYPES][K_N] = {ND_NATIVE_DTYPES(SHORTS)};

static int acc_dtype(int k, int dt) {
  int f = nd_dtype_kind(dt) == 'f';
  switch (k) {
  case K_SUM: case K_PROD: return f ? ND_FLOAT64 : ND_INT64;
  case K_FSUM: case K_SQSUM: return ND_FLOAT64;
  case K_MIN: case K_MAX: return dt;
  default: return ND_BOOL;
  }
}

static nd_status fill_identity(nd_err *e, const nd_tensor *acc, int k) {
  int f = nd_dtype_kind(acc->dtype) == 'f';
  int64_t lo;
  uint64_t hi;
  nd_dtype_bounds(acc->dtype, &lo, &hi); /* floats: unused */
  switch (k) {
  case K_PROD: case K_ALL: return nd_fill_i64(e, acc, 1);
  case K_MIN: return f ? nd_fill(e, acc, INFINITY) : nd_fill_i64(e, acc, (int64_t)hi);
  case K_MAX: return f ? nd_fill(e, acc, -INFINITY) : nd_fill_i64(e, acc, lo);
  default: return nd_fill_i64(e, acc, 0);
  }
}

typedef struct {
  nd_iter it;
  short_ctx c;
  nd_loop_fn fn;
} short_job;

static void short_task(void *ctx, int64_t lo, int64_t hi) {
  short_job *j = ctx;
  nd_iter_run_elems(&j->it, j->fn, &j->c, lo, hi);
}

/* Reduces t along dim (c->n <= SHORT elements) by fn, a short_ or sarg_
 * kernel: outs[0..nout) are new row-major results, walked in their order
 * with t's other dims, one kernel row per result. Threads take ranges of
 * results, each computed whole: the same at any thread count. */
static void short_walk(const nd_tensor *t, int dim, int nout,
                       const nd_tensor *const *outs, nd_loop_fn fn,
                       const short_ctx *c) {
  short_job j;
  j.c = *c;
  j.c.s = t->stride[dim] * nd_dtype_size(t->dtype);
  j.fn = fn;
  if (nd_numel(t) == t->size[dim]) { /* one run (t:sum() of a short t): */
    char *p[3];                        /* no iterator, no threads */
    const int64_t st[3] = {0, 0, 0};
    for (int k = 0; k < nout; k++) p[k] = nd_data(outs[k]);
    p[nout] = nd_data(t);
    fn(p, st, 1, &j.c);
    return;
  }
  nd_tensor x = *t, o[2];
  const nd_tensor *ops[3];
  x.ndim = t->ndim - 1;
  for (int i = 0, k = 0; i < t->ndim; i++) {
    if (i == dim) continue;
    x.size[k] = t->size[i];
    x.stride[k++] = t->stride[i];
  }
  for (int k = 0; k < nout; k++) {
    o[k] = *outs[k];
    o[k].ndim = x.ndim;
    int64_t s = 1;
    for (int i = x.ndim - 1; i >= 0; i--) {
      o[k].size[i] = x.size[i];
      o[k].stride[i] = s;
      s *= x.size[i];
    }
    ops[k] = &o[k];
  }
  ops[nout] = &x;
  nd_iter_init(&j.it, nout + 1, ops);
  nd_parallel_for(nd_numel(&x), (1 << 15) / c->n + 1, short_task, &j);
}

/* The one reduced dim of a non-empty t of more than one element, when it
 * has at most SHORT and the smallest stride (strictly): reduce_serial would
 * take each result's run whole (nd_iter puts it innermost, and work is
 * never split along it), so short_walk gives the same results; else -1. */
static int short_dim(const nd_tensor *t, const int *red) {
  int d = -1;
  for (int i = 0; i < t->ndim; i++)
    if (t->size[i] == 0) {
      return -1;
    } else if (red[i] && t->size[i] > 1) {
      if (d >= 0) return -1;
      d = i;
    }
  if (d < 0 || t->size[d] > SHORT || t->stride[d] == 0) return -1;
  for (int i = 0; i < t->ndim; i++)
    if (i != d && t->size[i] > 1 && llabs(t->stride[i]) <= llabs(t->stride[d]))
      return -1;
  return d;
}

/* accv (the accumulator seen with in's shape) op= in, one thread. */
static void reduce_serial(int k, const nd_tensor *accv, const nd_tensor *in) {
  if (nd_numel(in) == 0) return;
  const nd_tensor *ops[2] = {accv, in};
  nd_loop_fn loop = loops[in->dtype][k];
  nd_iter it;
  nd_iter_init(&it, 2, ops);
  if (it.ndim == 2 && it.stride[0][1] == 0 && /* down the columns */
      it.stride[0][0] == nd_dtype_size(accv->dtype) &&
      it.stride[1][0] == nd_dtype_size(in->dtype)) {
    rowsf[in->dtype][k](it.data[0], it.data[1], it.stride[1][1], it.size[1],
                        it.size[0]);
    return;
  }
  /* A short reduced run inside: its rows go through the short_ kernel,
   * along the innermost kept dim of SHORT or more (else the innermost kept
   * one). Each accumulator still takes its runs in the odometer's order. */
  if (it.ndim >= 2 && it.stride[0][0] == 0 && it.size[0] <= SHORT) {
    int j = -1;
    for (int i = 1; i < it.ndim; i++)
      if (it.stride[0][i] != 0 &&
          (j < 0 || (it.size[j] < SHORT && it.size[i] >= SHORT)))
        j = i;
    if (j > 0) {
      int64_t st[2];
      short_ctx c = {0};
      nd_iter_take(&it, 0, &c.n, st);
      c.s = st[1];
      nd_iter_inner(&it, j - 1);
      nd_iter_run(&it, shortf[in->dtype][k], &c, 0, nd_iter_outer(&it));
      return;
    }
  }
  nd_iter_run(&it, loop, NULL, 0, nd_iter_outer(&it));
}

static void narrow_hdr(nd_tensor *t, int dim, int64_t start, int64_t len) {
  t->offset += start * t->stride[dim];
  t->size[dim] = len;
}

typedef struct {
  int k;               /* K_* */
  nd_tensor accv, in;
  int dim;             /* the split dim */
  int64_t len;         /* its length per part */
  int partials;        /* parts write their own accumulator slices */
  int64_t m;           /* accumulator elements per part */
} parts_job;

static void part_task(void *ctx, int64_t lo, int64_t hi) {
  const parts_job *j = ctx;
  for (int64_t p = lo; p < hi; p++) {
    nd_tensor a = j->accv, x = j->in;
    int64_t start = p * j->len, n = x.size[j->dim] - start;
    if (n > j->len) n = j->len;
    narrow_hdr(&x, j->dim, start, n);
    if (j->partials) a.offset += p * j->m;
    else narrow_hdr(&a, j->dim, start, n);
    a.size[j->dim] = n;
    reduce_serial(j->k, &a, &x);
  }
}

static const char *rname(int op) {
#define NAME(E, name, arity, cls, unused) #name,
  static const char *const n[ND_NREDUCE] = {ND_REDUCE_OPS(NAME, 0)};
#undef NAME
  return op >= 0 && op < ND_NREDUCE ? n[op] : "reduce";
}

/* min/max of every element: the arg scan, whose blocks are vectorised
 * (the reducer's NaN-sticky select is not), keeping only the value. */
static nd_status extreme_of_all(nd_err *e, nd_tensor *out, int op,
                                const nd_tensor *t, int od, int ond,
                                const int64_t *os) {
  nd_tensor v = ND_UNSET, ix = ND_UNSET;
  if (nd_reduce_arg(e, &v, &ix, op, t, -1, 0) ||
      nd_alloc_tensor(e, out, od, ond, os, false)) {
    nd_release(&v);
    nd_release(&ix);
    return e->code;
  }
  memcpy(nd_ptr(out), nd_ptr(&v), (size_t)nd_dtype_size(od));
  nd_release(&v);
  nd_release(&ix);
  return ND_OK;
}

static const int kof[] = {K_SUM, K_FSUM, K_PROD, K_MIN, K_MAX, K_ALL, K_ANY, K_SQSUM};

int64_t nd_reduce_acc_bytes(int op, const nd_tensor *t, int ndims,
                            const int *dims) {
  int red[ND_MAX_DIMS];
  nd_err e = {0};
  if (op < 0 || op > ND_R_NORM || nd_reduced_mask(&e, "", t, ndims, dims, red))
    return 0;
  if (short_dim(t, red) >= 0) return 0;
  int64_t m = 1;
  for (int i = 0; i < t->ndim; i++)
    if (!red[i]) m *= t->size[i];
  return m * nd_dtype_size(acc_dtype(kof[op], t->dtype));
}

/* A full reduction of a big float16/bfloat16 tensor goes through float64
 * blocks of at most HALF_BLOCK elements (in L2), their results combined in
 * double and rounded once: the temporary is a block, not a float32 copy
 * of the whole input (a 1 GB bfloat16 weight would need 2 GB more). One
 * block is allocated for the whole walk, and each block's result goes
 * straight into one accumulator through the float64 loop (run_'s pairwise
 * reduction, then COMB), so the walk allocates nothing else. */
#define HALF_BLOCK ((int64_t)1 << 16)
typedef struct {
  nd_loop_fn loop;           /* loops[ND_FLOAT64][k] */
  nd_tensor blk;             /* the float64 block, HALF_BLOCK elements */
  _Alignas(8) char acc[8];   /* the accumulator, in acc_dtype(k, ND_FLOAT64) */
} half_full;

static nd_status half_blocks(nd_err *e, half_full *h, const nd_tensor *v) {
  int64_t n = nd_numel(v);
  if (n <= HALF_BLOCK) {
    nd_tensor w = h->blk; /* v's shape, row-major over the block */
    w.ndim = v->ndim;
    memcpy(w.size, v->size, sizeof(int64_t) * (size_t)v->ndim);
    if (nd_contiguous_strides(e, w.ndim, w.size, w.stride, NULL) ||
        nd_copy(e, &w, v))
      return e->code;
    char *p[2] = {h->acc, nd_data(&w)};
    const int64_t st[2] = {0, sizeof(double)};
    h->loop(p, st, n, NULL);
    return ND_OK;
  }
  int d = 0; /* split the first dim longer than 1 into slabs */
  while (v->size[d] == 1) d++;
  int64_t rows = HALF_BLOCK / (n / v->size[d]);
  if (rows < 1) rows = 1; /* then each slab splits a later dim */
  for (int64_t i = 0; i < v->size[d]; i += rows) {
    nd_tensor s = *v;
    narrow_hdr(&s, d, i, v->size[d] - i < rows ? v->size[d] - i : rows);
    if (half_blocks(e, h, &s)) return e->code;
  }
  return ND_OK;
}

static nd_status half_full_reduce(nd_err *e, nd_tensor *out, int op,
                                  const nd_tensor *t, int keepdim) {
  int k = kof[op], ad = acc_dtype(k, ND_FLOAT64);
  double a = op == ND_R_PROD || op == ND_R_ALL ? 1
             : op == ND_R_MIN ? INFINITY
             : op == ND_R_MAX ? -INFINITY : 0;
  half_full h = {.loop = loops[ND_FLOAT64][k]};
  nd_convert(ad, h.acc, 0, ND_FLOAT64, (const char *)&a, 0, 1);
  const int64_t bn = HALF_BLOCK;
  nd_status st = nd_alloc_tensor(e, &h.blk, ND_FLOAT64, 1, &bn, false);
  if (!st) st = half_blocks(e, &h, t);
  nd_release(&h.blk);
  if (st) return nd_err_name(e, rname(op));
  nd_convert(ND_FLOAT64, (char *)&a, 0, ad, h.acc, 0, 1);
  if (op == ND_R_MEAN) a /= (double)nd_numel(t);
  if (op == ND_R_NORM) a = sqrt(a);
  int64_t ones[ND_MAX_DIMS];
  for (int i = 0; i < t->ndim; i++) ones[i] = 1;
  int od = op == ND_R_ALL || op == ND_R_ANY ? ND_BOOL : t->dtype;
  if (nd_alloc_tensor(e, out, od, keepdim ? t->ndim : 0, ones, false))
    return nd_err_name(e, rname(op));
  nd_store(out, out->offset, ND_FLOAT64, &a); /* rounded once */
  return ND_OK;
}

nd_status nd_reduce(nd_err *e, nd_tensor *out, int op, const nd_tensor *t,
                    int ndims, const int *dims, int keepdim) {
  if (nd_is_half(t->dtype) && op >= 0 && op <= ND_R_NORM &&
      nd_numel(t) > 2 * HALF_BLOCK) {
    int red[ND_MAX_DIMS], all = 1;
    if (nd_reduced_mask(e, rname(op), t, ndims, dims, red)) return e->code;
    for (int i = 0; i < t->ndim; i++) all &= red[i] != 0;
    if (all) return half_full_reduce(e, out, op, t, keepdim);
  }
  if (nd_is_half(t->dtype)) { /* in float32 (half_adapt.c) */
    nd_tensor w_ = ND_UNSET, r_ = ND_UNSET;
    if (nd_half_widen(e, rname(op), &w_, t)) return e->code;
    nd_status s_ = nd_reduce(e, &r_, op, &w_, ndims, dims, keepdim);
    nd_release(&w_);
    return s_ ? s_ : nd_half_narrow(e, rname(op), out, &r_, t->dtype);
  }
  const char *fn = rname(op);
  int red[ND_MAX_DIMS];
  if (op < 0 || op > ND_R_NORM)
    return nd_fail(e, ND_EINVAL, "reduce: unknown op %d", op);
  if (nd_reduced_mask(e, fn, t, ndims, dims, red)) return e->code;
  int k = kof[op], dt = t->dtype, ad = acc_dtype(k, dt);
  int fl = nd_dtype_kind(dt) == 'f';
  /* sum/prod of bool and integers up to 32 bits: int64 (PyTorch), of
   * uint64: uint64 (NumPy; the int64 accumulator holds its bits) */
  int od = op == ND_R_SUM || op == ND_R_PROD
               ? (fl || dt == ND_UINT64 ? dt : ND_INT64)
           : op == ND_R_MEAN || op == ND_R_NORM ? (fl ? dt : ND_FLOAT64)
           : op == ND_R_ALL || op == ND_R_ANY ? ND_BOOL : dt;
  int64_t ks[ND_MAX_DIMS], os[ND_MAX_DIMS], N = 1, M = 1;
  int ond = 0;
  for (int i = 0; i < t->ndim; i++) {
    ks[i] = red[i] ? 1 : t->size[i];
    /* Saturating: an empty t's dims may multiply past int64 before its 0
     * (which then still gives 0); a true overflow of M fails to allocate. */
    int64_t *c = red[i] ? &N : &M;
    if (nd_mul_ovf(*c, t->size[i], c)) *c = INT64_MAX;
    if (!red[i] || keepdim) os[ond++] = ks[i];
  }
  if (N == 0 && (op == ND_R_MIN || op == ND_R_MAX))
    return nd_fail(e, ND_EINVAL, "%s: cannot reduce %s (the reduction has no "
                   "elements and %s has no identity)", fn,
                   nd_numel(t) ? "over a size-0 dim" : "an empty tensor", fn);
  if ((op == ND_R_MIN || op == ND_R_MAX) && M == 1 && N > 1)
    return extreme_of_all(e, out, op, t, od, ond, os);
  int sd = short_dim(t, red);
  if (sd >= 0) { /* no accumulator tensor: results written at once */
    if (nd_alloc_tensor(e, out, od, ond, os, false)) return nd_err_name(e, fn);
    const nd_tensor *outs[1] = {out};
    short_ctx c = {.n = t->size[sd], .fin = 1, .op = op, .od = od, .ad = ad};
    short_walk(t, sd, 1, outs, shortf[dt][k], &c);
    return ND_OK;
  }
  nd_tensor acc = ND_UNSET, part = ND_UNSET;
  if (nd_alloc_tensor(e, out, od, ond, os, false) || /* first: a result */
      nd_alloc_tensor(e, &acc, ad, t->ndim, ks, false) || /* that cannot be */
      fill_identity(e, &acc, k))                    /* made costs nothing */
    goto fail;
  parts_job j;
  j.k = k;
  j.accv = acc;
  j.in = *t;
  for (int i = 0; i < t->ndim; i++) {
    j.accv.size[i] = t->size[i];
    if (red[i]) j.accv.stride[i] = 0;
  }
  /* Split along the outermost kept dim when it lies outside the reduced
   * ones in memory, else along the outermost reduced dim. */
  int kd = -1, rd = -1;
  for (int i = 0; i < t->ndim; i++) {
    int64_t s = llabs(t->stride[i]);
    if (t->size[i] < 2) continue;
    if (!red[i] && (kd < 0 || s > llabs(t->stride[kd]))) kd = i;
    if (red[i] && (rd < 0 || s > llabs(t->stride[rd]))) rd = i;
  }
  int64_t work = N * M, parts = 1, grain = 1;
  j.partials = 0;
  if (work >= 1 << 16) {
    if (kd >= 0 && (rd < 0 || llabs(t->stride[kd]) > llabs(t->stride[rd]))) {
      j.dim = kd;
      parts = t->size[kd] < MAX_PARTS ? t->size[kd] : MAX_PARTS;
    } else if (rd >= 0) {
      j.dim = rd;
      parts = t->size[rd] < MAX_PARTS ? t->size[rd] : MAX_PARTS;
      /* Partial sums within PB elements unless that leaves fewer than 8
       * parts: they are filled, written and combined (at 30 parts of 1000
       * or 64 of 4096 columns, a tenth of a:sum(1)'s time). */
      int64_t few = M > 0 && PB / M > 8 ? PB / M : 8;
      if (parts > work >> 15) parts = work >> 15;
      if (parts > few) parts = few;
      if (M > 0 && parts * M > 1 << 22) parts = (1 << 22) / M;
      j.partials = parts > 1;
      /* a thread per 1 << 18 elements: below 1000^2 a second thread was
       * up to 2x slower (256^2 float32: 6.8 against 3.0 us) */
      if (parts > 1) grain = (1 << 18) / (work / parts) + 1;
    }
  }
  if (parts <= 1) {
    reduce_serial(k, &j.accv, t);
  } else {
    j.len = (t->size[j.dim] + parts - 1) / parts;
    parts = (t->size[j.dim] + j.len - 1) / j.len;
    if (j.partials) { /* parts x acc, combined in order below */
      int64_t psz[ND_MAX_DIMS + 1];
      psz[0] = parts;
      memcpy(psz + 1, ks, sizeof(int64_t) * (size_t)t->ndim);
      if (nd_alloc_tensor(e, &part, ad, t->ndim + 1, psz, false) ||
          fill_identity(e, &part, k))
        goto fail;
      j.m = M;
      j.accv.storage = part.storage;
      j.accv.offset = 0;
      for (int i = 0; i < t->ndim; i++)
        if (!red[i]) j.accv.stride[i] = part.stride[i + 1];
    }
    nd_parallel_for(parts, grain, part_task, &j);
    if (j.partials) {
      int kc = k == K_SQSUM ? K_FSUM : k;
      nd_tensor av = part;
      av.storage = acc.storage;
      av.stride[0] = 0;
      reduce_serial(kc, &av, &part);
    }
  }
  if (op == ND_R_MEAN || op == ND_R_NORM) {
    double *a = nd_data(&acc);
    for (int64_t i = 0; i < M; i++)
      a[i] = op == ND_R_MEAN ? a[i] / (double)N : sqrt(a[i]);
  }
  nd_convert(od, nd_data(out), nd_dtype_size(od), ad, nd_data(&acc),
             nd_dtype_size(ad), M);
  nd_release(&acc);
  nd_release(&part);
  return ND_OK;
fail:
  nd_release(&acc);
  nd_release(&part);
  nd_release(out);
  return nd_err_name(e, fn);
}

/* ---- min/max with indices ---- */
/* A contiguous run is scanned in AB-element blocks: each block's extreme
 * through L vector lanes (a NaN sticks in its lane), then only the block
 * that last improved the best is searched for the first element equal to
 * it (or, in a block holding a NaN, for its first NaN; that ends the
 * scan). The scalar scan's answer: strict comparisons keep the first of
 * equals, and the value is read back from that element (-0 or +0). */
enum { AB = 512 };
#define BETTER(ismax, x, b) ((ismax) ? (x) > (b) : (x) < (b))
/* Vectors of 32 bytes (GCC/clang vector extensions; two SSE registers in
 * the default clone) and the signed integer type of their compare masks. */
#define VB 32
#define MASKT(T) __typeof__(_Generic((T)0, float: (int32_t)0, double: (int64_t)0, \
  int32_t: (int32_t)0, int64_t: (int64_t)0, int16_t: (int16_t)0,            \
  uint16_t: (int16_t)0, uint32_t: (int32_t)0, uint64_t: (int64_t)0,           \
  default: (signed char)0))
#define VSEL(VT, VM, m, a, b) ((VT)(((VM)(a) & (m)) | ((VM)(b) & ~(m))))
/* acc = v where v is better or NaN (a NaN in acc stays). */
#define ARGV_STEP(E, ismax, acc, v)                                         \
  do {                                                                      \
    vm_##E m_ = ((ismax) ? (v) > (acc) : (v) < (acc)) | ((v) != (v));       \
    acc = VSEL(vt_##E, vm_##E, m_, v, acc);                                 \
  } while (0)
#define ARGV_FN(E, name, T, kind)                                           \
  typedef T vt_##E __attribute__((vector_size(VB)));                        \
  typedef MASKT(T) vm_##E __attribute__((vector_size(VB)));                 \
  static inline __attribute__((always_inline)) int                          \
  blk1_##E(const T *x, int64_t n, int ismax, T *out) {                      \
    enum { L = VB / sizeof(T) };                                            \
    const vt_##E id = (vt_##E){0} + (T)(ismax ? MAXID(T) : MINID(T));      \
    vt_##E a[4] = {id, id, id, id};                                         \
    int64_t i = 0;                                                          \
    for (; i + 4 * L <= n; i += 4 * L)                                      \
      for (int k = 0; k < 4; k++) { /* four chains: the blends' latency */  \
        vt_##E v;                                                           \
        memcpy(&v, x + i + k * L, VB);                                      \
        ARGV_STEP(E, ismax, a[k], v);                                       \
      }                                                                     \
    for (; i + L <= n; i += L) {                                            \
      vt_##E v;                                                             \
      memcpy(&v, x + i, VB);                                                \
      ARGV_STEP(E, ismax, a[0], v);                                         \
    }                                                                       \
    for (int k = 1; k < 4; k++) ARGV_STEP(E, ismax, a[0], a[k]);            \
    T l[L];                                                                 \
    memcpy(l, a, VB);                                                       \
    for (; i < n; i++)                                                      \
      if (BETTER(ismax, x[i], l[0]) || NANQ(x[i])) l[0] = x[i];             \
    T b = l[0];                                                             \
    int nan = 0;                                                            \
    for (int j = 0; j < L; j++) {                                           \
      nan |= NANQ(l[j]);                                                    \
      if (BETTER(ismax, l[j], b)) b = l[j];                                 \
    }                                                                       \
    *out = b;                                                               \
    return nan;                                                             \
  }                                                                         \
  /* The first i < n with x[i] == v, or with x[i] a NaN when nan: four   \
   * vectors' masks or-ed, then tested as 64-bit words. */                  \
  static inline __attribute__((always_inline)) int64_t                      \
  find1_##E(const T *x, int64_t n, T v, int nan) {                          \
    enum { L = VB / sizeof(T) };                                            \
    vt_##E w = (vt_##E){0} + v;                                             \
    int64_t i = 0;                                                          \
    for (; i + 4 * L <= n; i += 4 * L) {                                    \
      vm_##E m = (vm_##E){0};                                               \
      for (int k = 0; k < 4; k++) {                                         \
        vt_##E y;                                                           \
        memcpy(&y, x + i + k * L, VB);                                      \
        m |= nan ? y != y : y == w;                                         \
      }                                                                     \
      uint64_t u[VB / 8];                                                   \
      memcpy(u, &m, VB);                                                    \
      if (u[0] | u[1] | u[2] | u[3]) break;                                 \
    }                                                                       \
    for (; i < n; i++)                                                      \
      if (nan ? NANQ(x[i]) : x[i] == v) return i;                           \
    return n;                                                               \
  }                                                                         \
  /* n contiguous elements against *best: the index of the new best, or   \
   * -1 when none beats it. */                                              \
  KERNEL static int64_t vrun_##E(const T *x, int64_t n, int ismax, T *best) { \
    int64_t win = -1;                                                       \
    int nan = 0;                                                            \
    for (int64_t i = 0; i < n && !nan; i += AB) {                           \
      int64_t m = n - i < AB ? n - i : AB;                                  \
      T b;                                                                  \
      nan = ismax ? blk1_##E(x + i, m, 1, &b) : blk1_##E(x + i, m, 0, &b);  \
      if (nan || BETTER(ismax, b, *best)) *best = b, win = i;               \
    }                                                                       \
    if (win < 0) return -1;                                                 \
    int64_t m = n - win < AB ? n - win : AB;                                \
    win += nan ? find1_##E(x + win, m, *best, 1) : find1_##E(x + win, m, *best, 0); \
    *best = x[win];                                                         \
    return win;                                                             \
  }
ND_NATIVE_DTYPES(ARGV_FN)

/* Scan n elements from p (stride s) for the extreme; (val, idx) hold the
 * best so far when have. NaN wins, and the first of equals stays. */
#define ARG_FN(E, name, T, kind)                                            \
  static void arg_##E(const char *p, int64_t s, int64_t n, int ismax,       \
                      void *val, int64_t *idx, int64_t base, int have) {    \
    T best;                                                                 \
    int64_t bi = *idx, i = 0;                                               \
    if (have) memcpy(&best, val, sizeof best);                              \
    else { best = *(const T *)p; bi = base; i = 1; }                        \
    if (s == sizeof(T) && n > 1 && !NANQ(best)) {                           \
      int64_t k = vrun_##E((const T *)p, n, ismax, &best);                  \
      if (k >= 0) bi = base + k;                                            \
      i = n;                                                                \
    }                                                                       \
    for (; i < n && !NANQ(best); i++) {                                     \
      const T x = *(const T *)(p + i * s);                                  \
      if (NANQ(x) || (ismax ? x > best : x < best)) { best = x; bi = base + i; } \
    }                                                                       \
    memcpy(val, &best, sizeof best);                                        \
    *idx = bi;                                                              \
  }
ND_NATIVE_DTYPES(ARG_FN)
typedef void (*arg_fn)(const char *, int64_t, int64_t, int, void *,
                       int64_t *, int64_t, int);
#define ARG_NAME(E, name, T, kind) [ND_##E] = arg_##E,
static const arg_fn args[ND_NDTYPES] = {ND_NATIVE_DTYPES(ARG_NAME)};

/* Down the columns: w outputs side by side in one contiguous row, n rows
 * s bytes apart; best and idx are updated a whole row at a time, so the
 * inner loop is contiguous and vectorises. Same rules as arg_: a NaN wins
 * and stays, the first of equals stays. */
#define COLS_FN(E, name, T, kind)                                           \
  KERNEL static void cols_##E(const char *p, int64_t s, int64_t n,          \
                              int64_t w, int ismax, void *val,              \
                              int64_t *idx) {                               \
    T *b = val;                                                             \
    memcpy(b, p, (size_t)w * sizeof(T));                                    \
    for (int64_t i = 0; i < w; i++) idx[i] = 0;                             \
    for (int64_t k = 1; k < n; k++) {                                       \
      const T *x = (const T *)(p + k * s);                                  \
      if (ismax)                                                            \
        for (int64_t i = 0; i < w; i++) {                                   \
          int take = (NANQ(b[i]) == 0) & (NANQ(x[i]) | (x[i] > b[i]));            \
          b[i] = take ? x[i] : b[i];                                        \
          idx[i] = take ? k : idx[i];                                       \
        }                                                                   \
      else                                                                  \
        for (int64_t i = 0; i < w; i++) {                                   \
          int take = (NANQ(b[i]) == 0) & (NANQ(x[i]) | (x[i] < b[i]));            \
          b[i] = take ? x[i] : b[i];                                        \
          idx[i] = take ? k : idx[i];                                       \
        }                                                                   \
    }                                                                       \
  }
ND_NATIVE_DTYPES(COLS_FN)
typedef void (*cols_fn)(const char *, int64_t, int64_t, int64_t, int, void *,
                        int64_t *);
#define COLS_NAME(E, name, T, kind) [ND_##E] = cols_##E,
static const cols_fn colsf[ND_NDTYPES] = {ND_NATIVE_DTYPES(COLS_NAME)};

/* One element of each of m rows (x, at row r) against the best so far. */
#define SARG_STEP(T, OP, X)                                                 \
  for (int64_t r = 0; r < m; r++) {                                         \
    const T x = X;                                                          \
    int take = (NANQ(b[r]) == 0) & (NANQ(x) | (x OP b[r]));                 \
    b[r] = take ? x : b[r];                                                 \
    bi[r] = take ? k : bi[r];                                               \
  }
/* Short rows: R rows of n <= SHORT elements s bytes apart; p[0] the
 * indices, p[1] the values when c->nv is 2, p[nv] the rows (strides st[]).
 * cols_'s loop, turned to run across SB rows for each of the n elements
 * (the block index in the compare's width, so it vectorises with it). */
#define SARG_FN(E, name, T, kind)                                           \
  KERNEL static void sarg_##E(char **p, const int64_t *st, int64_t R,       \
                              void *ctx) {                                  \
    const short_ctx *c = ctx;                                               \
    const int64_t n = c->n, s = c->s, rs = st[c->nv];                       \
    const int ismax = c->ismax;                                             \
    const int tr = tr_rows(n, s, rs, sizeof(T));                            \
    T b[SB];                                                                \
    MASKT(T) bi[SB];                                                        \
    _Alignas(64) T buf[SHORT * SB];                                         \
    for (int64_t r0 = 0; r0 < R; r0 += SB) {                                \
      const int64_t m = R - r0 < SB ? R - r0 : SB;                          \
      const char *q = p[c->nv] + r0 * rs;                                   \
      int64_t qs = s, qr = rs;                                              \
      if (tr) {                                                             \
        nd_transpose_copy(buf, q, n, m, SB, rs / (int64_t)sizeof(T),        \
                          sizeof(T));                                       \
        q = (const char *)buf, qs = SB * sizeof(T), qr = sizeof(T);         \
      }                                                                     \
      for (int64_t r = 0; r < m; r++) {                                     \
        b[r] = *(const T *)(q + r * qr);                                    \
        bi[r] = 0;                                                          \
      }                                                                     \
      for (int64_t i = 1; i < n; i++) {                                     \
        q += qs;                                                            \
        const MASKT(T) k = (MASKT(T))i;                                     \
        const T *y = (const T *)q;                                          \
        if (qr == sizeof(T)) {                                              \
          if (ismax) SARG_STEP(T, >, y[r]) else SARG_STEP(T, <, y[r])       \
        } else {                                                            \
          if (ismax) SARG_STEP(T, >, *(const T *)(q + r * qr))              \
          else SARG_STEP(T, <, *(const T *)(q + r * qr))                    \
        }                                                                   \
      }                                                                     \
      char *pi = p[0] + r0 * st[0];                                         \
      for (int64_t r = 0; r < m; r++, pi += st[0]) *(int64_t *)pi = bi[r];  \
      if (c->nv == 2) {                                                     \
        char *pv = p[1] + r0 * st[1];                                       \
        for (int64_t r = 0; r < m; r++, pv += st[1]) *(T *)pv = b[r];       \
      }                                                                     \
    }                                                                       \
  }
ND_NATIVE_DTYPES(SARG_FN)
#define SARG_NAME(E, name, T, kind) [ND_##E] = sarg_##E,
static const nd_loop_fn sargf[ND_NDTYPES] = {ND_NATIVE_DTYPES(SARG_NAME)};

/* Columns per task: best and idx stay in L1. One thread takes CW1, so
 * rows are read in runs of 8-16 KiB (at 512 columns, 2 KiB runs made
 * a:max(1) 1.25x slower); several take CW when that gives each thread two
 * tasks (1.6x faster at 2 threads on 4096^2). Below COLS_MT bytes one
 * thread does it all: 2 threads made 1000^2 float32 1.3x slower (4 MB)
 * and gained nothing at 8 MB. Parts of the rows have COLS_MIN_ROWS. */
enum { CW = 512, CW1 = 2048, COLS_MIN_ROWS = 64, COLS_MT = 1 << 23 };

typedef struct {
  const nd_tensor *t;
  int dim, ismax;
  char *vals;     /* NULL: values not wanted */
  int64_t *idx;
  int64_t cw;     /* cols_task: columns per task */
  int64_t rows;   /* cols_task: rows per row part */
  int64_t m;      /* cols_task: outputs per row part; part r at r * m */
} arg_job;

static void arg_task(void *ctx, int64_t lo, int64_t hi) {
  const arg_job *j = ctx;
  const nd_tensor *t = j->t;
  int64_t es = nd_dtype_size(t->dtype);
  char scratch[8];
  for (int64_t o = lo; o < hi; o++) {
    const char *p = nd_ptr(t);
    int64_t rem = o;
    for (int i = t->ndim - 1; i >= 0; i--) {
      if (i == j->dim) continue;
      p += rem % t->size[i] * t->stride[i] * es;
      rem /= t->size[i];
    }
    args[t->dtype](p, t->stride[j->dim] * es, t->size[j->dim], j->ismax,
                   j->vals ? j->vals + o * es : scratch, j->idx + o, 0, 0);
  }
}

/* Tasks of cols_job: (group, cw-column block); a group is one index of the
 * dims other than dim and the last, whose outputs are one row of width L. */
static void cols_task(void *ctx, int64_t lo, int64_t hi) {
  const arg_job *j = ctx;
  const nd_tensor *t = j->t;
  int64_t es = nd_dtype_size(t->dtype), L = t->size[t->ndim - 1];
  int64_t cw = j->cw, nb = (L + cw - 1) / cw, n = t->size[j->dim];
  int64_t gb = j->m / L * nb; /* tasks per row part */
  _Alignas(64) char scratch[CW1 * 8];
  for (int64_t q = lo; q < hi; q++) {
    int64_t r = q / gb, g = q % gb / nb, c0 = q % nb * cw;
    int64_t w = L - c0 < cw ? L - c0 : cw, r0 = r * j->rows;
    const char *p = (const char *)nd_ptr(t) + c0 * es + r0 * t->stride[j->dim] * es;
    int64_t rem = g;
    for (int i = t->ndim - 2; i >= 0; i--) {
      if (i == j->dim) continue;
      p += rem % t->size[i] * t->stride[i] * es;
      rem /= t->size[i];
    }
    int64_t o = r * j->m + g * L + c0;
    colsf[t->dtype](p, t->stride[j->dim] * es,
                    n - r0 < j->rows ? n - r0 : j->rows, w, j->ismax,
                    j->vals ? j->vals + o * es : scratch, j->idx + o);
  }
}

/* Fewer column tasks than threads: the rows are split too, each part
 * reduced into its own buffer, then the parts reduced in order by the
 * same kernel, so the first of equals (and of NaNs) is the one a single
 * pass finds, whatever the thread count. */
static void cols_reduce(arg_job *j, int want_vals) {
  const nd_tensor *t = j->t;
  int64_t es = nd_dtype_size(t->dtype), L = t->size[t->ndim - 1], m = j->m;
  int64_t n = j->rows;
  int nt = nd_get_num_threads();
  if (nt == 1 || n * m * es < COLS_MT) {
    cols_task(j, 0, m / L * ((L + CW1 - 1) / CW1));
    return;
  }
  if (L >= 2 * nt * CW) j->cw = CW;
  int64_t tasks = m / L * ((L + j->cw - 1) / j->cw), parts = 1;
  if (tasks < nt) parts = (nt + tasks - 1) / tasks;
  if (parts > n / COLS_MIN_ROWS) parts = n / COLS_MIN_ROWS;
  /* parts x m indices, m part numbers, parts x m values, m values; from
   * the allocator hook, as all of nd's scratch */
  nd_err e = {0};
  nd_storage *s = NULL;
  if (parts > 1 && nd_storage_new(&e, &s, m * (parts * (es + 8) + 8 + es), false))
    s = NULL;
  int64_t *pi = s ? s->data : NULL;
  if (!pi) { /* columns only */
    nd_parallel_for(tasks, 1, cols_task, j);
    return;
  }
  int64_t *idx = j->idx, *which = pi + parts * m;
  char *vals = j->vals, *pv = (char *)(which + m);
  j->rows = (n + parts - 1) / parts;
  parts = (n + j->rows - 1) / j->rows;
  j->vals = pv;
  j->idx = pi;
  nd_parallel_for(tasks * parts, 1, cols_task, j);
  colsf[t->dtype](pv, m * es, parts, m, j->ismax,
                  want_vals ? vals : pv + parts * m * es, which);
  for (int64_t i = 0; i < m; i++)
    idx[i] = pi[which[i] * m + i] + which[i] * j->rows;
  nd_storage_release(s);
}

nd_status nd_reduce_arg(nd_err *e, nd_tensor *values, nd_tensor *indices,
                        int op, const nd_tensor *t, int dim, int keepdim) {
  if (nd_is_half(t->dtype)) { /* in float32 (half_adapt.c) */
    nd_tensor w_ = ND_UNSET, r_ = ND_UNSET;
    if (nd_half_widen(e, "max", &w_, t)) return e->code;
    nd_status s_ = nd_reduce_arg(e, values ? &r_ : NULL, indices, op, &w_, dim, keepdim);
    nd_release(&w_);
    return s_ ? s_ : nd_half_narrow(e, "max", values, &r_, t->dtype);
  }
  int ismax = op == ND_R_MAX;
  const char *fn = values ? (ismax ? "max" : "min") : (ismax ? "argmax" : "argmin");
  if (op != ND_R_MIN && op != ND_R_MAX)
    return nd_fail(e, ND_EINVAL, "reduce_arg: op must be min or max");
  if (t->ndim == 0 && dim == 0) dim = -1; /* a 0-d tensor has one dim 0 */
  if (dim >= 0 && nd_check_dim(e, fn, dim, t->ndim)) return e->code;
  int64_t n = dim >= 0 ? t->size[dim] : nd_numel(t);
  if (n == 0)
    return nd_fail(e, ND_EINVAL, "%s: cannot reduce %s (it has no "
                   "elements)", fn, dim >= 0 ? "over a size-0 dim"
                   : "an empty tensor");
  int64_t os[ND_MAX_DIMS];
  int ond = 0;
  for (int i = 0; i < t->ndim && dim >= 0; i++)
    if (i != dim || keepdim) os[ond++] = i == dim ? 1 : t->size[i];
  if (nd_alloc_tensor(e, indices, ND_INT64, ond, os, false))
    return nd_err_name(e, fn);
  if (values && nd_alloc_tensor(e, values, t->dtype, ond, os, false)) {
    nd_release(indices);
    return nd_err_name(e, fn);
  }
  int64_t es = nd_dtype_size(t->dtype);
  if (dim >= 0) {
    int64_t m = nd_numel(indices), L = t->size[t->ndim - 1];
    arg_job j = {t, dim, ismax, values ? nd_data(values) : NULL,
                 nd_data(indices), CW1, n, m};
    if (dim != t->ndim - 1 && t->stride[t->ndim - 1] == 1 && L > 1 &&
        llabs(t->stride[dim]) >= L) { /* rows in memory: reduce by rows */
      cols_reduce(&j, values != NULL);
      return ND_OK;
    }
    if (n <= SHORT) {
      const nd_tensor *outs[2] = {indices, values};
      short_ctx c = {.n = n, .nv = values ? 2 : 1, .ismax = ismax};
      short_walk(t, dim, c.nv, outs, sargf[t->dtype], &c);
      return ND_OK;
    }
    nd_parallel_for(m, (1 << 15) / n + 1, arg_task, &j);
    return ND_OK;
  }
  /* All elements, row-major: the last dim as runs, the rest an odometer. */
  char best[8];
  int64_t bi = 0, idx[ND_MAX_DIMS] = {0}, run = 1, rows = 1, s = 0;
  if (t->ndim > 0) {
    run = t->size[t->ndim - 1];
    s = t->stride[t->ndim - 1] * es;
    rows = n / run;
  }
  const char *p = nd_ptr(t);
  for (int64_t r = 0; r < rows; r++) {
    args[t->dtype](p, s, run, ismax, best, &bi, r * run, r > 0);
    for (int i = t->ndim - 2; i >= 0; i--) {
      p += t->stride[i] * es;
      if (++idx[i] < t->size[i]) break;
      p -= t->stride[i] * es * t->size[i];
      idx[i] = 0;
    }
  }
  *(int64_t *)nd_data(indices) = bi;
  if (values) memcpy(nd_data(values), best, (size_t)es);
  return ND_OK;
}
