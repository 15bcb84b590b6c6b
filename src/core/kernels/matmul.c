/* Matmul: executes the plan of matmul_plan.c -- the copies it names, then
 * one CBLAS call per batch element (or the plain loop for integer and bool
 * dtypes) -- and the forms built on it: mm, mv, dot, bmm, outer, and the
 * fused updates addmm, addmv, addr, baddbmm, addbmm.
 * Nothing here calls back into Lua: LuaJIT's FFI calls nd_matmul. */
#include "matmul_plan.h"
#include <cblas.h>
#include <math.h>

/* ---- the plain loop ---------------------------------------------------- */
/* Integers accumulate in uint64_t (two's complement wrap, as PyTorch's
 * integer matmul, without signed-overflow UB); bool is "any a[i,k] and
 * b[k,j]"; floats accumulate in double (they come here for k = 0 and for
 * batches of tiny products: matmul_plan.c's SMALL). */
typedef struct {
  int64_t M, N, K;
  int64_t sa[2], sb[2], sc[2]; /* bytes */
  double alpha, beta;
  int64_t ialpha, ibeta;
  int64_t nq, sq[3]; /* products along the innermost batch dim, bytes */
} loop_args;

/* The innermost batch dim is walked here, not per product through
 * each_product: a batch of tiny products spends its time in this loop.
 * Up to 4 terms per output are spelled out, the strides held in locals
 * (a 4x4 matrix by a 4-vector: 3x faster than the k loop). */
#define LOOP_KERNEL(E, name, T, kind)                                       \
  static void loop_##name(const loop_args *g, char *const p[3]) {           \
    typedef __typeof__(_Generic((T)0, float: 0.0, double: 0.0,             \
                                default: (uint64_t)0)) acc_t;               \
    const int64_t M = g->M, N = g->N, K = g->K;                             \
    const int64_t sa0 = g->sa[0], sa1 = g->sa[1], sb0 = g->sb[0],           \
                  sb1 = g->sb[1], sc0 = g->sc[0], sc1 = g->sc[1];           \
    for (int64_t q = 0; q < g->nq; q++) {                                   \
      const char *qa = p[0] + q * g->sq[0], *qb = p[1] + q * g->sq[1];      \
      char *qc = p[2] + q * g->sq[2];                                       \
      for (int64_t i = 0; i < M; i++)                                       \
        for (int64_t j = 0; j < N; j++) {                                   \
          const char *pa = qa + i * sa0, *pb = qb + j * sb1;                \
          acc_t acc = 0;                                                    \
          if (K <= 4) {                                                     \
            if (K > 0) acc = TERM(T, acc_t, pa, pb);                        \
            if (K > 1) acc += TERM(T, acc_t, pa + sa1, pb + sb0);           \
            if (K > 2) acc += TERM(T, acc_t, pa + 2 * sa1, pb + 2 * sb0);   \
            if (K > 3) acc += TERM(T, acc_t, pa + 3 * sa1, pb + 3 * sb0);   \
          } else {                                                          \
            for (int64_t k = 0; k < K; k++, pa += sa1, pb += sb0)           \
              acc += TERM(T, acc_t, pa, pb);                                \
          }                                                                 \
          STORE(T, kind, g, (T *)(qc + i * sc0 + j * sc1), acc);            \
        }                                                                   \
    }                                                                       \
  }
#define TERM(T, acc_t, pa, pb)                                              \
  ((acc_t) * (const T *)(pa) * (acc_t) * (const T *)(pb))
/* *pc = alpha * acc + beta * *pc (beta = 0 never reads *pc) */
#define STORE(T, kind, g, pc, acc)                                          \
  do {                                                                      \
    if (kind == 'f') {                                                      \
      double v_ = (g)->alpha * (double)(acc);                               \
      if ((g)->beta != 0) v_ += (g)->beta * (double)*(pc);                  \
      *(pc) = (T)v_;                                                        \
    } else {                                                                \
      uint64_t v_ = (uint64_t)(g)->ialpha * (uint64_t)(acc);                \
      if ((g)->ibeta) v_ += (uint64_t)(g)->ibeta * (uint64_t)*(pc);         \
      *(pc) = kind == 'b' ? (T)(v_ != 0) : (T)v_;                           \
    }                                                                       \
  } while (0)
ND_NATIVE_DTYPES(LOOP_KERNEL)
#undef LOOP_KERNEL
#undef STORE
#undef TERM

typedef void (*loop_fn)(const loop_args *g, char *const p[3]);
static const loop_fn loops[ND_NDTYPES] = {
#define LOOP_ENTRY(E, name, T, kind) [ND_##E] = loop_##name,
    ND_NATIVE_DTYPES(LOOP_ENTRY)
#undef LOOP_ENTRY
};

/* ---- BLAS calls, exactly as the plan spells them ------------------------- */
typedef struct {
  const nd_blas_plan *p;
  double alpha, beta;
} call_args;

#define BLAS_CALL(P, T)                                                     \
  static void blas_##P(const call_args *c, char *const ptr[3]) {           \
    const nd_blas_plan *p = c->p;                                           \
    const enum CBLAS_ORDER order = p->col_major ? CblasColMajor : CblasRowMajor; \
    const enum CBLAS_TRANSPOSE ta = p->transa == 'T' ? CblasTrans : CblasNoTrans; \
    const enum CBLAS_TRANSPOSE tb = p->transb == 'T' ? CblasTrans : CblasNoTrans; \
    T *y = (T *)ptr[2];                                                     \
    switch (p->routine) {                                                   \
    case ND_BLAS_GEMM:                                                      \
      cblas_##P##gemm(order, ta, tb, (blasint)p->m, (blasint)p->n,          \
                      (blasint)p->k, (T)c->alpha, (const T *)ptr[0],        \
                      (blasint)p->lda, (const T *)ptr[1], (blasint)p->ldb,  \
                      (T)c->beta, y, (blasint)p->ldc);                      \
      break;                                                                \
    case ND_BLAS_GEMV: { /* transa 'N': the matrix is a, else b */         \
      int am = p->transa == 'N';                                            \
      cblas_##P##gemv(order, ta, (blasint)p->m, (blasint)p->n, (T)c->alpha, \
                      (const T *)ptr[am ? 0 : 1], (blasint)p->lda,          \
                      (const T *)ptr[am ? 1 : 0], (blasint)p->incx,         \
                      (T)c->beta, y, (blasint)p->incy);                     \
      break;                                                                \
    }                                                                       \
    case ND_BLAS_DOT: {                                                     \
      T d = cblas_##P##dot((blasint)p->n, (const T *)ptr[0],                \
                           (blasint)p->incx, (const T *)ptr[1],             \
                           (blasint)p->incy);                               \
      *y = (T)(c->alpha * d + (c->beta != 0 ? c->beta * *y : 0));           \
      break;                                                                \
    }                                                                       \
    default:                                                                \
      break;                                                                \
    }                                                                       \
  }
BLAS_CALL(s, float)
BLAS_CALL(d, double)
#undef BLAS_CALL

/* ---- the batch walk ------------------------------------------------------ */
typedef void (*product_fn)(const void *ctx, char *const ptr[3]);

static void each_product(const nd_blas_plan *p, char *const base[3],
                         int64_t es, product_fn fn, const void *ctx) {
  int64_t idx[ND_MAX_DIMS] = {0}, off[3] = {0, 0, 0};
  for (;;) {
    char *ptr[3];
    for (int k = 0; k < 3; k++) ptr[k] = base[k] + (off[k] + p->origin[k]) * es;
    fn(ctx, ptr);
    int d = p->nbd - 1;
    for (; d >= 0; d--) {
      for (int k = 0; k < 3; k++) off[k] += p->bstride[k][d];
      if (++idx[d] < p->bsize[d]) break;
      for (int k = 0; k < 3; k++) off[k] -= p->bstride[k][d] * p->bsize[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

/* ---- execution ----------------------------------------------------------- */
typedef struct {
  loop_fn fn;
  loop_args g;
} loop_ctx;
static void run_loop(const void *ctx, char *const ptr[3]) {
  const loop_ctx *l = ctx;
  l->fn(&l->g, ptr);
}
static void run_s(const void *ctx, char *const ptr[3]) { blas_s(ctx, ptr); }
static void run_d(const void *ctx, char *const ptr[3]) { blas_d(ctx, ptr); }

static nd_status run(nd_err *e, const nd_blas_plan *p, const nd_tensor *a,
                     const nd_tensor *b, const nd_tensor *out, double alpha,
                     double beta) {
  for (int i = 0; i < p->ndim; i++)
    if (p->size[i] == 0) return ND_OK;
  nd_tensor ca, cb, co; /* only .storage is read until they are made */
  ca.storage = cb.storage = co.storage = NULL;
  const nd_tensor *ua = a, *ub = b, *uo = out;
  const int cdt = p->copies & ND_COPY_F32 ? ND_FLOAT32 : p->dtype;
  nd_status st = ND_OK;
  if (p->copies & ND_COPY_A) {
    if ((st = nd_to_dtype(e, &ca, a, cdt))) goto done;
    ua = &ca;
  }
  if (p->copies & ND_COPY_B) {
    if ((st = nd_to_dtype(e, &cb, b, cdt))) goto done;
    ub = &cb;
  }
  if (p->copies & ND_COPY_OUT) {
    if ((st = nd_alloc_tensor(e, &co, cdt, p->ndim, p->size, false)))
      goto done;
    if (beta != 0 && (st = nd_copy(e, &co, out))) goto done;
    uo = &co;
  }
  char *base[3] = {nd_ptr(ua), nd_ptr(ub), nd_ptr(uo)};
  const int64_t es = nd_dtype_size(cdt);
  if (p->batch == 0 || p->routine == ND_BLAS_LOOP) {
    loop_ctx l = {loops[cdt],
                  {p->M, p->N, p->K,
                   {p->mstride[0][0] * es, p->mstride[0][1] * es},
                   {p->mstride[1][0] * es, p->mstride[1][1] * es},
                   {p->mstride[2][0] * es, p->mstride[2][1] * es},
                   alpha, beta, (int64_t)alpha, (int64_t)beta, 1, {0, 0, 0}}};
    if (p->nbd == 0) {
      each_product(p, base, es, run_loop, &l);
    } else { /* the innermost batch dim to the kernel, the rest walked */
      nd_blas_plan outer = *p;
      int d = --outer.nbd;
      l.g.nq = p->bsize[d];
      for (int k = 0; k < 3; k++) l.g.sq[k] = p->bstride[k][d] * es;
      each_product(&outer, base, es, run_loop, &l);
    }
  } else {
    call_args c = {p, alpha, beta};
    each_product(p, base, es, cdt == ND_FLOAT32 ? run_s : run_d, &c);
  }
  if (uo == &co) st = nd_copy(e, out, &co);
done: /* (unset headers are skipped: this runs on every small product) */
  if (ca.storage) nd_release(&ca);
  if (cb.storage) nd_release(&cb);
  if (co.storage) nd_release(&co);
  return st;
}

/* out = alpha * (a @ b) + beta * out, out allocated when unset. */
static nd_status product(nd_err *e, const char *fn, nd_tensor *out,
                         const nd_tensor *a, const nd_tensor *b, double alpha,
                         double beta, int dtype) {
  nd_blas_plan p;
  const int fresh = !out->storage;
  if (nd_plan_matmul(e, fn, &p, a, b, fresh ? NULL : out, dtype))
    return e->code;
  if (fresh && nd_alloc_tensor(e, out, p.dtype, p.ndim, p.size, false))
    return nd_err_name(e, fn);
  nd_status st = run(e, &p, a, b, out, alpha, beta);
  if (st && fresh) nd_release(out);
  return st ? nd_err_name(e, fn) : ND_OK;
}

nd_status nd_matmul(nd_err *e, nd_tensor *out, const nd_tensor *a,
                    const nd_tensor *b) {
  return product(e, "matmul", out, a, b, 1, 0, -1);
}

nd_status nd_matmul_run(nd_err *e, const nd_blas_plan *plan,
                        const nd_tensor *a, const nd_tensor *b,
                        const nd_tensor *out) {
  return run(e, plan, a, b, out, 1, 0) ? nd_err_name(e, "matmul") : ND_OK;
}

/* ---- the restricted forms ---------------------------------------------- */
static nd_status want_dims(nd_err *e, const char *fn, const nd_tensor *a,
                           int da, const nd_tensor *b, int db) {
  if (a->ndim == da && b->ndim == db) return ND_OK;
  char s1[ND_SIZES_BUF], s2[ND_SIZES_BUF];
  return nd_fail(e, ND_EINVAL, "%s: expected %d-D and %d-D tensors, got "
                 "shapes %s and %s", fn, da, db,
                 nd_fmt_sizes(s1, sizeof s1, a->ndim, a->size),
                 nd_fmt_sizes(s2, sizeof s2, b->ndim, b->size));
}

nd_status nd_mm(nd_err *e, nd_tensor *out, const nd_tensor *a,
                const nd_tensor *b) {
  if (want_dims(e, "mm", a, 2, b, 2)) return e->code;
  return product(e, "mm", out, a, b, 1, 0, -1);
}

nd_status nd_mv(nd_err *e, nd_tensor *out, const nd_tensor *a,
                const nd_tensor *b) {
  if (want_dims(e, "mv", a, 2, b, 1)) return e->code;
  return product(e, "mv", out, a, b, 1, 0, -1);
}

nd_status nd_dot(nd_err *e, nd_tensor *out, const nd_tensor *a,
                 const nd_tensor *b) {
  if (want_dims(e, "dot", a, 1, b, 1)) return e->code;
  return product(e, "dot", out, a, b, 1, 0, -1);
}

nd_status nd_bmm(nd_err *e, nd_tensor *out, const nd_tensor *a,
                 const nd_tensor *b) {
  if (want_dims(e, "bmm", a, 3, b, 3)) return e->code;
  if (a->size[0] != b->size[0])
    return nd_fail(e, ND_EINVAL, "bmm: batch sizes %lld and %lld differ",
                   (long long)a->size[0], (long long)b->size[0]);
  return product(e, "bmm", out, a, b, 1, 0, -1);
}

/* outer(a, b) = a as a column times b as a row: a gemm with k = 1. The
 * views are borrowed headers, never released. */
nd_status nd_outer(nd_err *e, nd_tensor *out, const nd_tensor *a,
                   const nd_tensor *b) {
  if (want_dims(e, "outer", a, 1, b, 1)) return e->code;
  nd_tensor col = *a, row = *b;
  col.ndim = row.ndim = 2;
  col.size[1] = 1;
  col.stride[1] = 1;
  row.size[1] = row.size[0];
  row.stride[1] = row.stride[0];
  row.size[0] = 1;
  row.stride[0] = row.size[1] > 0 ? row.size[1] : 1;
  return product(e, "outer", out, &col, &row, 1, 0, -1);
}

/* ---- the fused updates: out = beta * c + alpha * (a @ b) ----------------- */
/* Which product of a and b: addmm's (2-D, 2-D), addmv's (2-D, 1-D),
 * addr's (1-D, 1-D: a column times a row), baddbmm's (3-D, 3-D, one
 * product per batch element) and addbmm's (the same, summed into one
 * matrix). c is broadcast to the product's shape. */
#define FU_ENUM(name) FU_##name,
enum { ND_FUSED_UPDATES(FU_ENUM) }; /* da[] and db[] below are in this order */
#undef FU_ENUM

static int same_view(const nd_tensor *x, const nd_tensor *y) {
  return x->storage == y->storage && x->offset == y->offset &&
         x->dtype == y->dtype && x->ndim == y->ndim &&
         !memcmp(x->size, y->size, sizeof(int64_t) * (size_t)x->ndim) &&
         !memcmp(x->stride, y->stride, sizeof(int64_t) * (size_t)x->ndim);
}

/* Matrix i of the 3-D t, or (i < 0) a matrix of its last two dims with k
 * elements along dim `kd` (addbmm's shape for the plan; k = 0 for an
 * empty batch). A borrowed header: no reference taken. */
static nd_tensor matrix(const nd_tensor *t, int64_t i, int kd, int64_t k) {
  nd_tensor m = *t;
  m.ndim = 2;
  m.size[0] = t->size[1], m.stride[0] = t->stride[1];
  m.size[1] = t->size[2], m.stride[1] = t->stride[2];
  if (i >= 0) m.offset += i * t->stride[0];
  else m.size[kd] = k;
  return m;
}

static nd_status fused(nd_err *e, const char *fn, int form, nd_tensor *out,
                       const nd_tensor *c, const nd_tensor *a,
                       const nd_tensor *b, double beta, double alpha) {
  static const int8_t da[] = {2, 2, 1, 3, 3}, db[] = {2, 1, 1, 3, 3};
  char s1[ND_SIZES_BUF], s2[ND_SIZES_BUF];
  if (want_dims(e, fn, a, da[form], b, db[form])) return e->code;
  if (form >= FU_baddbmm && a->size[0] != b->size[0])
    return nd_fail(e, ND_EINVAL, "%s: batch sizes %lld and %lld differ", fn,
                   (long long)a->size[0], (long long)b->size[0]);
  const int dtype = nd_promote_types(nd_promote_types(a->dtype, b->dtype),
                                     c->dtype);
  if (nd_dtype_kind(dtype) != 'f')
    for (int i = 0; i < 2; i++) {
      double v = i ? alpha : beta;
      if (v != floor(v) || !(fabs(v) < 0x1p63))
        return nd_fail(e, ND_EINVAL, "%s: %s must be an integer for a %s "
                       "result, got %g", fn, i ? "alpha" : "beta",
                       nd_dtype_name(dtype), v);
    }
  /* the product as the plan sees it (borrowed headers) */
  nd_tensor pa = *a, pb = *b;
  int64_t nb = form == FU_addbmm ? a->size[0] : 0;
  if (form == FU_addr) { /* a column times a row, as nd_outer */
    pa.ndim = pb.ndim = 2;
    pa.size[1] = 1, pa.stride[1] = 1;
    pb.size[1] = pb.size[0], pb.stride[1] = pb.stride[0];
    pb.size[0] = 1, pb.stride[0] = pb.size[1] > 0 ? pb.size[1] : 1;
  } else if (form == FU_addbmm) { /* no batch: out = beta * c (k = 0) */
    pa = matrix(a, -1, 1, nb ? a->size[2] : 0);
    pb = matrix(b, -1, 0, nb ? b->size[1] : 0);
  }
  const int fresh = !out->storage;
  nd_blas_plan p; /* validates shapes, dtypes and out before any write */
  if (out == c) { /* in place: c must be what the update makes */
    if (nd_plan_matmul(e, fn, &p, &pa, &pb, NULL, dtype)) return e->code;
    if (c->dtype != dtype || c->ndim != p.ndim ||
        memcmp(c->size, p.size, sizeof(int64_t) * (size_t)p.ndim))
      return nd_fail(e, ND_EINVAL, "%s: c has shape %s and dtype %s; the "
                     "update makes shape %s and dtype %s", fn,
                     nd_fmt_sizes(s1, sizeof s1, c->ndim, c->size),
                     nd_dtype_name(c->dtype),
                     nd_fmt_sizes(s2, sizeof s2, p.ndim, p.size),
                     nd_dtype_name(dtype));
  }
  if (nd_plan_matmul(e, fn, &p, &pa, &pb, fresh ? NULL : out, dtype))
    return e->code;
  nd_tensor cv = ND_UNSET, work = ND_UNSET;
  if (nd_expand(e, &cv, c, p.ndim, p.size))
    return nd_fail(e, ND_EINVAL, "%s: c of shape %s does not broadcast "
                   "to the product's shape %s", fn,
                   nd_fmt_sizes(s1, sizeof s1, c->ndim, c->size),
                   nd_fmt_sizes(s2, sizeof s2, p.ndim, p.size));
  nd_status st = ND_OK;
  if (fresh && (st = nd_alloc_tensor(e, out, dtype, p.ndim, p.size, false)))
    goto done;
  /* c goes into the result before the product reads a and b: through a
   * temporary when the result overlaps them; not at all when the result
   * is c (the in-place forms). */
  nd_tensor *target = out;
  if (!fresh && (nd_may_overlap(out, a) || nd_may_overlap(out, b))) {
    if ((st = nd_alloc_tensor(e, &work, dtype, p.ndim, p.size, false)))
      goto done;
    target = &work;
  }
  if (beta != 0 && !same_view(target, &cv) && (st = nd_copy(e, target, &cv)))
    goto done;
  if (form != FU_addbmm || nb == 0) {
    st = product(e, fn, target, &pa, &pb, alpha, beta, dtype);
  } else { /* the batch's products added into one matrix, BLAS's beta */
    for (int64_t i = 0; i < nb && !st; i++) {
      nd_tensor ai = matrix(a, i, 0, 0), bi = matrix(b, i, 0, 0);
      st = product(e, fn, target, &ai, &bi, alpha, i ? 1 : beta, dtype);
    }
  }
  if (!st && target == &work) st = nd_copy(e, out, &work);
done:
  if (st && fresh) nd_release(out);
  nd_release(&cv);
  nd_release(&work);
  return st ? nd_err_name(e, fn) : ND_OK;
}

#define FUSED_ENTRY(name)                                                   \
  nd_status nd_##name(nd_err *e, nd_tensor *out, const nd_tensor *c,        \
                      const nd_tensor *a, const nd_tensor *b, double beta,  \
                      double alpha) {                                       \
    return fused(e, #name, FU_##name, out, c, a, b, beta, alpha);           \
  }
ND_FUSED_UPDATES(FUSED_ENTRY)
#undef FUSED_ENTRY
