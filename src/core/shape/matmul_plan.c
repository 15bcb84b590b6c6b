/* The matmul plan: from the operands' shapes, dtypes and strides, the one
 * decision of what a product does -- routine, CBLAS order, transpose flags,
 * leading dims, the batch walk, and which operands are copied first.
 * nd_matmul_plan reports it; matmul.c executes exactly it. */
#include "matmul_plan.h"
#include <limits.h>
#include <stdio.h>

enum { ROW = 1, COL = 2 };      /* layouts, also indices into ld[3] */
enum { OA = 0, OB = 1, OC = 2 }; /* operands: a, b, out */

static int64_t max1(int64_t v) { return v > 1 ? v : 1; }

/* Multiply-adds per product at or below which a batch of products runs in
 * the plain loop (see nd_plan_matmul). */
#define SMALL 32

/* A rows x cols matrix with strides rs, cs: the layouts in which BLAS can
 * read it (ROW: element (i,j) at i*ld + j with ld >= cols; COL: at
 * i + j*ld with ld >= rows) and their leading dims in ld[ROW], ld[COL].
 * The stride of a size-1 dim is meaningless and ignored; stride 0,
 * negative strides, two non-unit strides, rows that overlap (ld too small)
 * and ld > INT_MAX (OpenBLAS takes int) fit neither. */
static int layouts(int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                   int64_t ld[3]) {
  int r = 0;
  if (rows == 0 || cols == 0) { /* nothing is read or written */
    ld[ROW] = max1(cols);
    ld[COL] = max1(rows);
    return ROW | COL;
  }
  if ((cols == 1 || cs == 1) && (rows == 1 || rs >= max1(cols))) {
    ld[ROW] = rows == 1 ? cols : rs;
    if (ld[ROW] <= INT_MAX) r |= ROW;
  }
  if ((rows == 1 || rs == 1) && (cols == 1 || cs >= max1(rows))) {
    ld[COL] = cols == 1 ? rows : cs;
    if (ld[COL] <= INT_MAX) r |= COL;
  }
  return r;
}

/* A vector of n elements at stride s as a BLAS increment: never 0 (a
 * vector of one element takes 1), negative allowed, |inc| <= INT_MAX. */
static int vec_inc(int64_t n, int64_t s, int64_t *inc) {
  *inc = 1;
  if (n <= 1) return 1;
  if (s == 0 || s > INT_MAX || s < -INT_MAX) return 0;
  *inc = s;
  return 1;
}
/* BLAS wants the lowest address of a vector with a negative increment. */
static int64_t vec_origin(int64_t n, int64_t inc) {
  return inc < 0 && n > 0 ? (n - 1) * inc : 0;
}

/* One operand as the product sees it: the matrix of one product (a 1-D
 * operand is a 1 x K row or a K x 1 column) and a stride per batch dim of
 * the result (0 where the operand is broadcast). */
typedef struct {
  int64_t rows, cols, rs, cs;
  int64_t bst[ND_MAX_DIMS];
} operand;

static void view_operand(operand *o, int nd, const int64_t *size,
                         const int64_t *stride, int has_rows, int has_cols,
                         int nbd) {
  int bd = nd - has_rows - has_cols;
  /* Strides of size-1 dims, and every stride of an empty operand, are
   * never stepped and may be anything (as_strided): record 0, so no byte
   * stride derived from them overflows. */
  int empty = 0;
  for (int i = 0; i < nd; i++) empty |= size[i] == 0;
  o->rows = has_rows ? size[bd] : 1;
  o->rs = has_rows && size[bd] > 1 && !empty ? stride[bd] : 0;
  o->cols = has_cols ? size[nd - 1] : 1;
  o->cs = has_cols && size[nd - 1] > 1 && !empty ? stride[nd - 1] : 0;
  for (int j = 0; j < nbd; j++) {
    int i = j - (nbd - bd);
    o->bst[j] = i >= 0 && size[i] > 1 && !empty ? stride[i] : 0;
  }
}

/* Batch dims (sizes bsz, strides bst) and the rows dim merged into one
 * dim of *rows elements at stride *rs; 0 when the strides do not allow. */
static int merge_rows(int nbd, const int64_t *bsz, const int64_t *bst,
                      int64_t rows, int64_t rs, int64_t *mrows, int64_t *mrs) {
  int64_t n = rows, s = rs, want;
  for (int j = nbd - 1; j >= 0; j--) {
    if (bsz[j] == 1) continue;
    if (n == 1) {
      n = bsz[j];
      s = bst[j];
      continue;
    }
    if (nd_mul_ovf(n, s, &want) || bst[j] != want ||
        nd_mul_ovf(n, bsz[j], &n))
      return 0;
  }
  *mrows = n;
  *mrs = s;
  return 1;
}

static const char *shape(char *buf, size_t n, const nd_tensor *t) {
  return nd_fmt_sizes(buf, n, t->ndim, t->size);
}

nd_status nd_plan_matmul(nd_err *e, const char *fn, nd_blas_plan *p,
                         const nd_tensor *a, const nd_tensor *b,
                         const nd_tensor *out, int dtype) {
  char s1[ND_SIZES_BUF], s2[ND_SIZES_BUF], s3[ND_SIZES_BUF];
  /* Field by field: a memset here (rep stos) cost more than a 4x4 sgemm. */
  p->routine = p->dtype = p->col_major = p->copies = 0;
  p->transa = p->transb = 0;
  p->m = p->n = p->k = p->lda = p->ldb = p->ldc = p->incx = p->incy = 0;
  p->batch = 0;
  p->origin[0] = p->origin[1] = p->origin[2] = 0;
  if (a->ndim == 0 || b->ndim == 0)
    return nd_fail(e, ND_EINVAL, "%s: both arguments must be at least 1-D, "
                   "got shapes %s and %s", fn, shape(s1, sizeof s1, a),
                   shape(s2, sizeof s2, b));
  const int ha = a->ndim > 1, hb = b->ndim > 1; /* has M, has N */
  const int64_t K = a->size[a->ndim - 1];
  const int64_t M = ha ? a->size[a->ndim - 2] : 1;
  const int64_t N = hb ? b->size[b->ndim - 1] : 1;
  if (b->size[b->ndim - 1 - hb] != K)
    return nd_fail(e, ND_EINVAL, "%s: shapes %s and %s cannot be multiplied "
                   "(%lld columns against %lld rows)", fn,
                   shape(s1, sizeof s1, a), shape(s2, sizeof s2, b),
                   (long long)K, (long long)b->size[b->ndim - 1 - hb]);

  /* Batch dims: all but the matrix dims. */
  const nd_tensor *ab[2] = {a, b};
  const int mat[2] = {1 + ha, 1 + hb};
  int nbd;
  int64_t bsz[ND_MAX_DIMS];
  if (nd_broadcast_shape(e, fn, 2, ab, mat, &nbd, bsz)) return e->code;
  p->ndim = nbd + ha + hb;
  memcpy(p->size, bsz, sizeof(int64_t) * (size_t)nbd);
  if (ha) p->size[nbd] = M;
  if (hb) p->size[p->ndim - 1] = N;
  int64_t numel = 1, nb = 1, nz = 1; /* nz: numel with 0s read as 1s */
  for (int i = 0; i < p->ndim; i++) {
    if (nd_mul_ovf(nz, p->size[i] ? p->size[i] : 1, &nz))
      return nd_fail(e, ND_EOVERFLOW, "%s: the result of shapes %s and %s "
                     "has too many elements", fn, shape(s1, sizeof s1, a),
                     shape(s2, sizeof s2, b));
    if (i < nbd) nb *= bsz[i]; /* bounded by nz */
    if (p->size[i] == 0) numel = 0;
  }
  if (numel) numel = nz;

  if (dtype < 0) dtype = nd_promote_types(a->dtype, b->dtype);
  p->dtype = dtype;
  /* float16, bfloat16: in float32 (ND_COPY_F32) */
  const int cdt = nd_compute_dtype(dtype), f32 = cdt != dtype;
  if (out) {
    if (out->dtype != dtype || out->ndim != p->ndim ||
        memcmp(out->size, p->size, sizeof(int64_t) * (size_t)p->ndim)) {
      nd_tensor want = *out;
      want.ndim = p->ndim;
      memcpy(want.size, p->size, sizeof(int64_t) * (size_t)p->ndim);
      return nd_fail(e, ND_EINVAL, "%s: out has shape %s and dtype %s; the "
                     "result has shape %s and dtype %s", fn,
                     shape(s1, sizeof s1, out), nd_dtype_name(out->dtype),
                     shape(s3, sizeof s3, &want), nd_dtype_name(dtype));
    }
    if (nd_check_writable(e, fn, out)) return e->code;
  }
  /* Many tiny products (a 4x4 matrix by a 4-vector per point) go to the
   * plain loop: a BLAS call's setup costs more than its SMALL
   * multiply-adds, and the loop reads any strides without copies. Not
   * when b is one matrix for every batch element: then one call may do
   * them all. */
  int b_varies = 0; /* else one call may do them all (the fold below) */
  for (int j = 0, bb = b->ndim - 1 - hb; j < nbd; j++) {
    int i = j - (nbd - bb);
    b_varies |= i >= 0 && b->size[i] > 1;
  }
  const int tiny = nb > 1 && b_varies && M <= SMALL && N <= SMALL &&
                   K <= SMALL && M * N * K <= SMALL;
  const int blas = (cdt == ND_FLOAT32 || cdt == ND_FLOAT64) && !tiny;
  p->routine = !blas ? ND_BLAS_LOOP
               : !ha && !hb ? ND_BLAS_DOT
               : !ha || !hb ? ND_BLAS_GEMV
                            : ND_BLAS_GEMM;
  p->M = M;
  p->N = N;
  p->K = K;
  /* An empty result, or k = 0 (out = beta * out): no BLAS call, nothing
   * read from a or b, nothing copied. */
  const int degenerate = numel == 0 || K == 0;
  if (blas && !degenerate && (M > INT_MAX || N > INT_MAX || K > INT_MAX))
    return nd_fail(e, ND_EOVERFLOW, "%s: a size of the product %lld x %lld "
                   "x %lld exceeds the BLAS limit of %d", fn, (long long)M,
                   (long long)K, (long long)N, INT_MAX);

  /* Geometry of the operands as used: a copy is compact row-major. */
  int copies = 0;
  if (!degenerate && a->dtype != cdt) copies |= ND_COPY_A;
  if (!degenerate && b->dtype != cdt) copies |= ND_COPY_B;
  if (f32) copies |= ND_COPY_A | ND_COPY_B | ND_COPY_OUT | ND_COPY_F32;
  int64_t cst[3][ND_MAX_DIMS];
  const nd_tensor *ts[3] = {a, b, out};
  const int rowsdim[3] = {ha, 1, ha}, colsdim[3] = {1, hb, hb};
  operand o[3];
  for (int k = 0; k < 3; k++) {
    const int64_t *size = ts[k] ? ts[k]->size : p->size;
    int nd = ts[k] ? ts[k]->ndim : p->ndim;
    if (!ts[k] || copies & (1 << k))
      if (nd_contiguous_strides(e, nd, size, cst[k], NULL)) return e->code;
    view_operand(&o[k], nd, size, ts[k] && !(copies & (1 << k))
                 ? ts[k]->stride : cst[k], rowsdim[k], colsdim[k], nbd);
  }
  /* Each operand BLAS cannot read as it is gets copied. */
#define RECOPY(k)                                                           \
  do {                                                                      \
    copies |= 1 << (k);                                                     \
    const nd_tensor *t_ = ts[k];                                            \
    int nd_ = t_ ? t_->ndim : p->ndim;                                      \
    const int64_t *sz_ = t_ ? t_->size : p->size;                           \
    if (nd_contiguous_strides(e, nd_, sz_, cst[k], NULL)) return e->code;   \
    view_operand(&o[k], nd_, sz_, cst[k], rowsdim[k], colsdim[k], nbd);     \
    CLASSIFY(k);                                                            \
  } while (0)
  /* Layouts are classified once per operand geometry (small products
   * spend most of their time here). */
  int64_t ld[3][3], inc;
  int lay[3] = {0, 0, 0};
#define CLASSIFY(k)                                                         \
  (lay[k] = layouts(o[k].rows, o[k].cols, o[k].rs, o[k].cs, ld[k]))
  if (!out) CLASSIFY(OC); /* fresh: row-major */
  const int matrix = ha ? OA : OB; /* gemv's matrix; the other is x */
  const int vec = ha ? OB : OA;
  if (!degenerate && p->routine == ND_BLAS_GEMM) {
    for (int k = OA; k <= OB; k++)
      if (!CLASSIFY(k)) RECOPY(k);
  } else if (!degenerate && p->routine == ND_BLAS_GEMV) {
    if (!CLASSIFY(matrix)) RECOPY(matrix);
    if (!vec_inc(K, ha ? o[OB].rs : o[OA].cs, &inc)) RECOPY(vec);
  } else if (!degenerate && p->routine == ND_BLAS_DOT) {
    if (!vec_inc(K, o[OA].cs, &inc)) RECOPY(OA);
    if (!vec_inc(K, o[OB].rs, &inc)) RECOPY(OB);
  }
  /* out: a temporary when it overlaps an operand read in place, or when
   * BLAS cannot write it as it is. */
  if (out && !degenerate) {
    if ((!(copies & ND_COPY_A) && nd_may_overlap(out, a)) ||
        (!(copies & ND_COPY_B) && nd_may_overlap(out, b)))
      RECOPY(OC);
    else if (p->routine == ND_BLAS_GEMM && !CLASSIFY(OC))
      RECOPY(OC);
    else if (p->routine == ND_BLAS_GEMV &&
             !vec_inc(ha ? M : N, ha ? o[OC].rs : o[OC].cs, &inc))
      RECOPY(OC);
  }
#undef RECOPY
  p->copies = copies;

  /* Batch dims of size > 1; folded into M (one big call) when b is the
   * same matrix for every batch and a's and out's batch dims continue
   * their rows. */
  int fold = 0;
  int64_t mrows = M;
  if (!degenerate && ha && nbd > 0 &&
      (p->routine == ND_BLAS_GEMM || p->routine == ND_BLAS_GEMV)) {
    int bcast = 1;
    for (int j = 0; j < nbd; j++) bcast &= bsz[j] == 1 || o[OB].bst[j] == 0;
    int64_t ars, crs, crows, l2[3];
    if (bcast &&
        merge_rows(nbd, bsz, o[OA].bst, M, o[OA].rs, &mrows, &ars) &&
        merge_rows(nbd, bsz, o[OC].bst, M, o[OC].rs, &crows, &crs) &&
        mrows <= INT_MAX && layouts(mrows, K, ars, o[OA].cs, l2) &&
        (p->routine == ND_BLAS_GEMM ? layouts(mrows, N, crs, o[OC].cs, l2) != 0
                                    : vec_inc(mrows, crs, &inc))) {
      fold = 1;
      o[OA].rows = o[OC].rows = mrows;
      o[OA].rs = ars;
      o[OC].rs = crs;
      CLASSIFY(OA);
      CLASSIFY(OC);
    }
  }
  p->nbd = 0;
  int64_t calls = 1;
  for (int j = 0; j < nbd && !fold; j++) {
    if (bsz[j] == 1) continue;
    p->bsize[p->nbd] = bsz[j];
    for (int k = 0; k < 3; k++) p->bstride[k][p->nbd] = o[k].bst[j];
    p->nbd++;
    calls *= bsz[j];
  }
  for (int k = 0; k < 3; k++) {
    p->mstride[k][0] = o[k].rs;
    p->mstride[k][1] = o[k].cs;
  }
  if (degenerate) { /* no call: the sizes of the product, for the record */
    p->m = M;
    p->n = N;
    p->k = K;
    return ND_OK;
  }
  p->batch = p->routine == ND_BLAS_LOOP ? nb : calls;

  /* The literal CBLAS call. */
  switch (p->routine) {
  case ND_BLAS_GEMM: {
    const int order = lay[OC] & ROW ? ROW : COL, other = ROW + COL - order;
    const int ua = lay[OA] & order ? order : other;
    const int ub = lay[OB] & order ? order : other;
    p->col_major = order == COL;
    p->transa = ua == order ? 'N' : 'T';
    p->transb = ub == order ? 'N' : 'T';
    p->m = o[OC].rows;
    p->n = N;
    p->k = K;
    p->lda = ld[OA][ua];
    p->ldb = ld[OB][ub];
    p->ldc = ld[OC][order];
    break;
  }
  case ND_BLAS_GEMV: {
    const operand *x = &o[vec], *y = &o[OC], *mat = &o[matrix];
    const int order = lay[matrix] & ROW ? ROW : COL;
    p->col_major = order == COL;
    p->transa = matrix == OA ? 'N' : 'T';
    p->m = mat->rows;
    p->n = mat->cols;
    p->lda = ld[matrix][order];
    vec_inc(K, ha ? x->rs : x->cs, &p->incx);
    vec_inc(ha ? mat->rows : N, ha ? y->rs : y->cs, &p->incy);
    p->origin[vec] = vec_origin(K, p->incx);
    p->origin[OC] = vec_origin(ha ? mat->rows : N, p->incy);
    break;
  }
  case ND_BLAS_DOT:
    p->n = K;
    vec_inc(K, o[OA].cs, &p->incx);
    vec_inc(K, o[OB].rs, &p->incy);
    p->origin[OA] = vec_origin(K, p->incx);
    p->origin[OB] = vec_origin(K, p->incy);
    break;
  default:
    p->m = M;
    p->n = N;
    p->k = K;
  }
#undef CLASSIFY
  return ND_OK;
}

nd_status nd_matmul_plan(nd_err *e, nd_blas_plan *plan, const nd_tensor *a,
                         const nd_tensor *b, const nd_tensor *out) {
  return nd_plan_matmul(e, "matmul_plan", plan, a, b,
                        out && out->storage ? out : NULL, -1);
}
