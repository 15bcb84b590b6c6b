/* Indexing with tensors: index_select, gather, take, and the scatter
 * family (scatter, scatter_add, index_add, index_fill, index_copy).
 *
 * Every op is one walk with nd_iter over three operands of the index's
 * shape: the index, a "line" view of the target whose stride along `dim`
 * is 0 (so it points at the start of the line the index moves along), and
 * the other side (out or src). The inner loop adds q * stride[dim] to the
 * line pointer. index_select is gather with the index expanded; index_*_
 * are scatters with the index expanded. Index values count from e->base
 * (0 for C callers, 1 from Lua), negative ones from the end; all of them
 * are checked before anything is written. */
#include "index.h"
#include "half.h"
#include <math.h>
#include <stdio.h>

/* ---- index checks ---- */
static nd_status check_index_dtype(nd_err *e, const char *fn,
                               const nd_tensor *ix) {
  if (ix->dtype == ND_INT32 || ix->dtype == ND_INT64) return ND_OK;
  return nd_fail(e, ND_EINVAL, "%s: index must be an int32 or int64 tensor "
                 "(positions), got %s", fn, nd_dtype_name(ix->dtype));
}

typedef struct {
  int64_t n;    /* the size indexed into */
  int64_t base; /* the first position (0 or 1) */
  int bad;      /* an out-of-range value was seen: badv */
  int64_t badv;
} range_ctx;

/* One pass, no early exit, so the common case vectorises: with
 * u = w + n (unsigned), w is valid when u <= 2n - 1 + base and, for base
 * 1, u != n (w = 0). The rare bad case rescans for the first offender. */
#if !defined(__clang__)
/* 64-bit compares need AVX2 (not in baseline x86-64): a clone for it. */
#define VECTORISE                                                           \
  __attribute__((optimize("vect-cost-model=dynamic")))                     \
  ND_CLONES("avx2", "default")
#else
#define VECTORISE
#endif
#define RANGE_LOOP(IT)                                                      \
  VECTORISE static void range_##IT(char **p, const int64_t *st, int64_t n,  \
                                   void *c) {                               \
    range_ctx *x = c;                                                       \
    const char *s = p[0];                                                   \
    uint64_t bad = 0, N = (uint64_t)x->n, lim = 2 * N - 1 + (uint64_t)x->base; \
    uint64_t hole = x->base ? N : UINT64_MAX;                               \
    int64_t base = x->base, nn = x->n;                                      \
    if (x->bad) return;                                                     \
    if (N == 0) {                                                           \
      bad = n > 0; /* nothing is a position in an empty dim */              \
    } else if (st[0] == sizeof(IT)) {                                       \
      const IT *v = (const IT *)s;                                          \
      for (int64_t i = 0; i < n; i++) {                                     \
        uint64_t u = (uint64_t)(int64_t)v[i] + N;                           \
        bad |= (uint64_t)(u > lim) | (uint64_t)(u == hole);                 \
      }                                                                     \
    } else {                                                                \
      for (int64_t i = 0; i < n; i++) {                                     \
        uint64_t u = (uint64_t)(int64_t)*(const IT *)(s + i * st[0]) + N;   \
        bad |= (uint64_t)(u > lim) | (uint64_t)(u == hole);                 \
      }                                                                     \
    }                                                                       \
    if (!bad) return;                                                       \
    for (int64_t i = 0; i < n; i++) {                                       \
      int64_t w = *(const IT *)(s + i * st[0]);                             \
      if ((uint64_t)(w < 0 ? w + nn : w - base) >= N) {                     \
        x->bad = 1;                                                         \
        x->badv = w;                                                        \
        return;                                                             \
      }                                                                     \
    }                                                                       \
  }
RANGE_LOOP(int32_t)
RANGE_LOOP(int64_t)

/* Every value of ix is a valid position among n; else an error from fn
 * quoting the first bad value and what it indexes (`what`, e.g. "dim 2"). */
static nd_status check_positions(nd_err *e, const char *fn, const nd_tensor *ix,
                             int64_t n, const char *what) {
  range_ctx x = {n, e->base, 0, 0};
  nd_iter it;
  const nd_tensor *ops[1] = {ix};
  if (check_index_dtype(e, fn, ix)) return e->code;
  nd_iter_init(&it, 1, ops);
  nd_iter_run(&it, ix->dtype == ND_INT32 ? range_int32_t : range_int64_t, &x,
              0, nd_iter_outer(&it));
  if (!x.bad) return ND_OK;
  return nd_fail(e, ND_EINVAL, "%s: index %lld out of range for %s of size "
                 "%lld (valid: %lld..%lld, or -%lld..-1)", fn,
                 (long long)x.badv, what, (long long)n, (long long)e->base,
                 (long long)(n - 1 + e->base), (long long)n);
}

/* ---- the moving loops ---- */
typedef struct {
  int64_t n, base, ds; /* size and byte stride of the indexed dim */
  int op;              /* MOVE_GATHER, MOVE_SCATTER, MOVE_ADD */
  int dtype;
  double alpha;
  int bad; /* gathers check positions as they go: one was out of range */
} move_ctx;
enum { MOVE_GATHER, MOVE_SCATTER, MOVE_ADD };

/* The ctx fields as locals: stores through T* may alias them otherwise. */
#define POS(w) ((w) < 0 ? (w) + nn : (w) - base)
#define LOCALS(c)                                                           \
  move_ctx *x = c;                                                          \
  const int64_t nn = x->n, base = x->base, ds = x->ds
/* A fresh result may be abandoned half-written: gathers check as they go
 * (one predictable branch) instead of in a pass of their own. */
#define CHECKED_POS(q, w)                                                   \
  int64_t q = POS(w);                                                       \
  if ((uint64_t)q >= (uint64_t)nn) {                                        \
    x->bad = 1;                                                             \
    return;                                                                 \
  }

/* Random reads miss the cache: ask for the line PREFETCH_AHEAD entries
 * on while this one loads. The address is formed in unsigned arithmetic
 * (the entry is not checked yet) and a prefetch never faults. */
#define PREFETCH_AHEAD 32
#define PREFETCH(s, w)                                                      \
  __builtin_prefetch((const void *)((uintptr_t)(s) +                        \
                                    (uint64_t)POS((int64_t)(w)) * (uint64_t)ds))

/* Gather: ops (out, index, line): out = line[q]. Scatter: ops (index,
 * line, src): line[q] = src. Moves are bytes of T's size. */
#define MOVE_LOOPS(T, IT)                                                   \
  static void gather_##T##_##IT(char **p, const int64_t *st, int64_t n,     \
                                void *c) {                                  \
    LOCALS(c);                                                              \
    char *o = p[0];                                                         \
    const char *ix = p[1], *s = p[2];                                       \
    if (x->bad) return;                                                     \
    if (st[0] == sizeof(T) && st[1] == sizeof(IT) && st[2] == 0) {          \
      T *ot = (T *)o;                                                       \
      const IT *it = (const IT *)ix;                                        \
      int64_t i = 0;                                                        \
      for (; i + PREFETCH_AHEAD < n; i++) {                                 \
        int64_t w = it[i];                                                  \
        CHECKED_POS(q, w)                                                   \
        PREFETCH(s, it[i + PREFETCH_AHEAD]);                                \
        memcpy(ot + i, s + q * ds, sizeof(T));                              \
      }                                                                     \
      for (; i < n; i++) {                                                  \
        int64_t w = it[i];                                                  \
        CHECKED_POS(q, w)                                                   \
        memcpy(ot + i, s + q * ds, sizeof(T));                              \
      }                                                                     \
      return;                                                               \
    }                                                                       \
    for (int64_t i = 0; i < n; i++, o += st[0], ix += st[1], s += st[2]) {  \
      int64_t w = *(const IT *)ix;                                          \
      CHECKED_POS(q, w)                                                     \
      memcpy(o, s + q * ds, sizeof(T));                                     \
    }                                                                       \
  }                                                                         \
  static void scatter_##T##_##IT(char **p, const int64_t *st, int64_t n,    \
                                 void *c) {                                 \
    LOCALS(c);                                                              \
    const char *ix = p[0], *s = p[2];                                       \
    char *d = p[1];                                                         \
    for (int64_t i = 0; i < n; i++, ix += st[0], d += st[1], s += st[2]) {  \
      int64_t w = *(const IT *)ix;                                          \
      memcpy(d + POS(w) * ds, s, sizeof(T));                                \
    }                                                                       \
  }
MOVE_LOOPS(uint8_t, int32_t)
MOVE_LOOPS(uint8_t, int64_t)
MOVE_LOOPS(uint16_t, int32_t)
MOVE_LOOPS(uint16_t, int64_t)
MOVE_LOOPS(uint32_t, int32_t)
MOVE_LOOPS(uint32_t, int64_t)
MOVE_LOOPS(uint64_t, int32_t)
MOVE_LOOPS(uint64_t, int64_t)

/* Accumulating scatter, typed: line[q] += alpha * src (bool: or). The
 * index dtype and alpha == 1 are decided outside the element loop. Adds
 * check positions as they go, for the staged walk (see scatter_walk).
 * S is the stored type, V the one added in: the same but for float16 and
 * bfloat16, which LD widens to float and ST rounds back, once per add (as
 * PyTorch's per-element accumulation; issue 23's rule). */
#define ADD_ONE(V, kind, dp, sv, EXPR, WRAP, LD, ST)                        \
  do {                                                                      \
    V dv = LD(*dp);                                                         \
    *dp = ST(kind == 'b'   ? (V)(dv || sv)                                  \
             : kind == 'f' ? (V)(EXPR)                                      \
                           : (V)(uint64_t)(WRAP));                          \
  } while (0)
#define ADD_BODY(S, V, kind, LD, ST, IT, EXPR)                              \
  for (int64_t i = 0; i < n; i++, ix += st[0], d += st[1], s += st[2]) {    \
    int64_t w = *(const IT *)ix;                                            \
    CHECKED_POS(q, w)                                                       \
    S *dp = (S *)(d + q * ds);                                              \
    V sv = LD(*(const S *)s);                                               \
    ADD_ONE(V, kind, dp, sv, EXPR, EXPR##_WRAP, LD, ST);                    \
  }
/* The histogram shape (a dense index into dense bins, src dense or one
 * expanded value): indexed addressing, no byte strides to step. */
#define ADD_DENSE(S, V, kind, LD, ST, IT, SI)                               \
  {                                                                         \
    const IT *iv = (const IT *)ix;                                          \
    const S *sp = (const S *)s;                                             \
    S *db = (S *)d;                                                         \
    for (int64_t i = 0; i < n; i++) {                                       \
      int64_t w = iv[i];                                                    \
      CHECKED_POS(q, w)                                                     \
      S *dp = db + q;                                                       \
      V sv = LD(sp[SI]);                                                    \
      ADD_ONE(V, kind, dp, sv, SUM, SUM_WRAP, LD, ST);                      \
    }                                                                       \
    return;                                                                 \
  }
/* Integers wrap (two's complement) instead of overflowing. */
#define SUM_WRAP (uint64_t)(int64_t)dv + (uint64_t)(int64_t)sv
#define SCALED_WRAP                                                         \
  (uint64_t)(int64_t)dv + (uint64_t)(int64_t)al * (uint64_t)(int64_t)sv
#define SUM dv + sv
#define SCALED dv + al * sv
#define ADD_LOOP(E, S, V, kind, LD, ST)                                     \
  static void add_##E(char **p, const int64_t *st, int64_t n, void *c) { \
    LOCALS(c);                                                              \
    const char *ix = p[0], *s = p[2];                                       \
    char *d = p[1];                                                         \
    V al = (V)x->alpha;                                                     \
    int i32 = x->dtype, one = x->alpha == 1;                                \
    if (x->bad) return;                                                     \
    if (one && ds == sizeof(S) && st[1] == 0 &&                             \
        st[0] == (i32 ? 4 : 8)) {                                           \
      if (i32 && st[2] == sizeof(S))                                        \
        ADD_DENSE(S, V, kind, LD, ST, int32_t, i)                           \
      if (i32 && st[2] == 0) ADD_DENSE(S, V, kind, LD, ST, int32_t, 0)      \
      if (!i32 && st[2] == sizeof(S))                                       \
        ADD_DENSE(S, V, kind, LD, ST, int64_t, i)                           \
      if (!i32 && st[2] == 0) ADD_DENSE(S, V, kind, LD, ST, int64_t, 0)     \
    }                                                                       \
    if (i32 && one) {                                                       \
      ADD_BODY(S, V, kind, LD, ST, int32_t, SUM)                            \
    } else if (one) {                                                       \
      ADD_BODY(S, V, kind, LD, ST, int64_t, SUM)                            \
    } else if (i32) {                                                       \
      ADD_BODY(S, V, kind, LD, ST, int32_t, SCALED)                         \
    } else {                                                                \
      ADD_BODY(S, V, kind, LD, ST, int64_t, SCALED)                         \
    }                                                                       \
  }
#define AS_IS(v) (v)
#define NATIVE_ADD(E, name, T, kind) ADD_LOOP(E, T, T, kind, AS_IS, AS_IS)
ND_NATIVE_DTYPES(NATIVE_ADD)
ADD_LOOP(FLOAT16, uint16_t, float, 'f', nd_h2f, nd_f2h)
ADD_LOOP(BFLOAT16, uint16_t, float, 'f', nd_bf2f, nd_f2bf)
static const nd_loop_fn add_loops[ND_NDTYPES] = {
#define ADD_ENTRY(E, name, T, kind) [ND_##E] = add_##E,
    ND_DTYPES(ADD_ENTRY)
#undef ADD_ENTRY
};

static nd_loop_fn move_loop(int op, int dtype, int index_dtype) {
  int i32 = index_dtype == ND_INT32;
  switch (nd_dtype_size(dtype)) {
  case 1:
    return op == MOVE_GATHER ? (i32 ? gather_uint8_t_int32_t : gather_uint8_t_int64_t)
                             : (i32 ? scatter_uint8_t_int32_t : scatter_uint8_t_int64_t);
  case 2:
    return op == MOVE_GATHER ? (i32 ? gather_uint16_t_int32_t : gather_uint16_t_int64_t)
                             : (i32 ? scatter_uint16_t_int32_t : scatter_uint16_t_int64_t);
  case 4:
    return op == MOVE_GATHER ? (i32 ? gather_uint32_t_int32_t : gather_uint32_t_int64_t)
                             : (i32 ? scatter_uint32_t_int32_t : scatter_uint32_t_int64_t);
  default:
    return op == MOVE_GATHER ? (i32 ? gather_uint64_t_int32_t : gather_uint64_t_int64_t)
                             : (i32 ? scatter_uint64_t_int32_t : scatter_uint64_t_int64_t);
  }
}

/* The stride of dim d in steps taken: a dim of one element (or none), or
 * any dim of an empty t, is never stepped, and its stride may be anything
 * (even -2^63). */
static int64_t step(const nd_tensor *t, int d) {
  return t->size[d] > 1 && nd_numel(t) > 0 ? t->stride[d] : 0;
}

/* Runs op over ops (3 headers of one shape) along dim of the target t.
 * Returns nonzero when a gather met a position out of range. */
static int run_move(int op, const nd_tensor *const *ops, const nd_tensor *t,
                    int dim, const nd_tensor *ix, int base, double alpha) {
  move_ctx x = {t->size[dim], base, step(t, dim) * nd_dtype_size(t->dtype),
                op, 0, alpha, 0};
  nd_loop_fn fn;
  nd_iter it;
  if (op == MOVE_ADD) {
    fn = add_loops[t->dtype];
    x.dtype = ix->dtype == ND_INT32;
  } else {
    fn = move_loop(op, t->dtype, ix->dtype);
  }
  nd_iter_init(&it, 3, ops);
  nd_iter_run(&it, fn, &x, 0, nd_iter_outer(&it));
  return x.bad;
}

/* A borrowed header (no reference) of t with `size`, stride[dim] = 0.
 * With no position along dim t is empty and may carry any strides (even
 * -2^63): nothing is read through the line then, and its strides are 0. */
static nd_tensor line_view(const nd_tensor *t, int dim, int ndim,
                           const int64_t *size) {
  nd_tensor v = *t;
  v.ndim = ndim;
  for (int d = 0; d < ndim; d++) {
    v.size[d] = size[d];
    if (t->size[dim] == 0) v.stride[d] = 0;
  }
  v.stride[dim] = 0;
  return v;
}

/* A borrowed header of a 1-D index spread over `size`, moving along dim. */
static nd_tensor spread_index(const nd_tensor *ix, int dim, int ndim,
                              const int64_t *size) {
  nd_tensor v = *ix;
  v.ndim = ndim;
  for (int d = 0; d < ndim; d++) {
    v.size[d] = size[d];
    v.stride[d] = 0;
  }
  if (ix->ndim) v.stride[dim] = ix->stride[0];
  return v;
}

/* ---- reading ops: fresh results ---- */
static nd_status check_dim(nd_err *e, const char *fn, int dim, int ndim) {
  return nd_check_dim(e, fn, dim, ndim);
}

static const char *dim_name(char *buf, size_t n, const nd_err *e, int dim) {
  snprintf(buf, n, "dim %d", dim + e->base);
  return buf;
}

/* index_select when what follows dim is one contiguous block of at least
 * 16 elements (rows of a matrix, embedding lookups): a memcpy per index
 * entry. Returns 0 when the layout does not allow it, -1 on a position
 * out of range, 1 when done. */
static int select_blocks(const nd_tensor *out, const nd_tensor *t, int dim,
                         const nd_tensor *index, int64_t base) {
  int64_t inner = 1, es = nd_dtype_size(t->dtype);
  for (int d = t->ndim - 1; d > dim; d--) {
    if (t->size[d] != 1 && t->stride[d] != inner) return 0;
    inner *= t->size[d];
  }
  if (inner < 16) return 0;
  int64_t k = index->size[0], n = t->size[dim], ist = index->stride[0];
  int64_t ds = step(t, dim) * es, bytes = inner * es, idx[ND_MAX_DIMS] = {0};
  const char *ip = nd_ptr(index), *tb = nd_ptr(t);
  char *o = nd_ptr(out);
  int i32 = index->dtype == ND_INT32;
  for (;;) {
    for (int64_t j = 0; j < k; j++, o += bytes) {
      const char *q = ip + j * ist * (i32 ? 4 : 8);
      int64_t w = i32 ? *(const int32_t *)q : *(const int64_t *)q;
      int64_t p = w < 0 ? w + n : w - base;
      if ((uint64_t)p >= (uint64_t)n) return -1;
      memcpy(o, tb + p * ds, (size_t)bytes);
    }
    int d = dim - 1;
    for (; d >= 0; d--) { /* odometer over the dims before dim */
      tb += step(t, d) * es;
      if (++idx[d] < t->size[d]) break;
      tb -= step(t, d) * t->size[d] * es;
      idx[d] = 0;
    }
    if (d < 0) return 1;
  }
}

nd_status nd_index_select(nd_err *e, nd_tensor *out, const nd_tensor *t,
                          int dim, const nd_tensor *index) {
  char w[32];
  int64_t size[ND_MAX_DIMS];
  memset(out, 0, sizeof *out);
  if (check_dim(e, "index_select", dim, t->ndim) ||
      check_index_dtype(e, "index_select", index))
    return e->code;
  if (index->ndim != 1)
    return nd_fail(e, ND_EINVAL, "index_select: index must be 1-D, got %d "
                   "dims", index->ndim);
  memcpy(size, t->size, sizeof(int64_t) * (size_t)t->ndim);
  size[dim] = index->size[0];
  if (nd_alloc_tensor(e, out, t->dtype, t->ndim, size, false))
    return e->code;
  /* an empty result visits no index entry: check them on their own */
  int done = nd_numel(out) == 0 ? -1 : select_blocks(out, t, dim, index, e->base);
  if (!done) {
    nd_tensor ix = spread_index(index, dim, t->ndim, size);
    nd_tensor ln = line_view(t, dim, t->ndim, size);
    const nd_tensor *ops[3] = {out, &ix, &ln};
    done = run_move(MOVE_GATHER, ops, t, dim, index, e->base, 1) ? -1 : 1;
  }
  if (done > 0 || !check_positions(e, "index_select", index, t->size[dim],
                                   dim_name(w, sizeof w, e, dim)))
    return ND_OK;
  nd_release(out);
  return e->code;
}

/* Same dims; index.size[d] <= t.size[d] for d != dim (PyTorch's rule),
 * and <= src.size[d] for every d when src is given. */
static nd_status check_gather_shapes(nd_err *e, const char *fn,
                                     const nd_tensor *t, int dim,
                                     const nd_tensor *ix,
                                     const nd_tensor *src) {
  char b1[ND_SIZES_BUF], b2[ND_SIZES_BUF];
  if (ix->ndim != t->ndim || (src && src->ndim != t->ndim))
    return nd_fail(e, ND_EINVAL, "%s: index%s must have as many dims as the "
                   "tensor (%d), got %d%s", fn, src ? " and src" : "",
                   t->ndim, ix->ndim == t->ndim ? src->ndim : ix->ndim,
                   ix->ndim == t->ndim ? " (src)" : "");
  for (int d = 0; d < t->ndim; d++) {
    if (d != dim && ix->size[d] > t->size[d])
      return nd_fail(e, ND_EINVAL, "%s: index of size %s is larger than the "
                     "tensor's size %s in dim %d", fn,
                     nd_fmt_sizes(b1, sizeof b1, ix->ndim, ix->size),
                     nd_fmt_sizes(b2, sizeof b2, t->ndim, t->size),
                     d + e->base);
    if (src && ix->size[d] > src->size[d])
      return nd_fail(e, ND_EINVAL, "%s: index of size %s is larger than "
                     "src's size %s in dim %d", fn,
                     nd_fmt_sizes(b1, sizeof b1, ix->ndim, ix->size),
                     nd_fmt_sizes(b2, sizeof b2, src->ndim, src->size),
                     d + e->base);
  }
  return ND_OK;
}

nd_status nd_gather(nd_err *e, nd_tensor *out, const nd_tensor *t, int dim,
                    const nd_tensor *index) {
  char w[32];
  memset(out, 0, sizeof *out);
  if (check_dim(e, "gather", dim, t->ndim) ||
      check_index_dtype(e, "gather", index) ||
      check_gather_shapes(e, "gather", t, dim, index, NULL) ||
      nd_alloc_tensor(e, out, t->dtype, index->ndim, index->size, false))
    return e->code;
  nd_tensor ln = line_view(t, dim, index->ndim, index->size);
  const nd_tensor *ops[3] = {out, index, &ln};
  if (!run_move(MOVE_GATHER, ops, t, dim, index, e->base, 1)) return ND_OK;
  nd_release(out);
  return check_positions(e, "gather", index, t->size[dim],
                         dim_name(w, sizeof w, e, dim));
}

nd_status nd_take(nd_err *e, nd_tensor *out, const nd_tensor *t,
                  const nd_tensor *index) {
  nd_tensor flat = ND_UNSET;
  int64_t n = nd_numel(t);
  memset(out, 0, sizeof *out);
  if (check_index_dtype(e, "take", index) || nd_contiguous(e, &flat, t))
    return e->code;
  flat.ndim = 1;
  flat.size[0] = n;
  flat.stride[0] = 1;
  if (nd_alloc_tensor(e, out, t->dtype, index->ndim, index->size, false)) {
    nd_release(&flat);
    return e->code;
  }
  /* one line: the whole flat tensor, stride 1 */
  nd_tensor ln = flat;
  ln.ndim = index->ndim;
  for (int d = 0; d < ln.ndim; d++) { ln.size[d] = index->size[d]; ln.stride[d] = 0; }
  const nd_tensor *ops[3] = {out, index, &ln};
  move_ctx x = {n, e->base, nd_dtype_size(t->dtype), MOVE_GATHER, 0, 1, 0};
  nd_iter it;
  nd_iter_init(&it, 3, ops);
  nd_iter_run(&it, move_loop(MOVE_GATHER, t->dtype, index->dtype), &x, 0,
              nd_iter_outer(&it));
  nd_release(&flat);
  if (!x.bad) return ND_OK;
  nd_release(out);
  return check_positions(e, "take", index, n, "the flattened tensor");
}

/* ---- writing ops ---- */
/* Kinds in casting order: bool < integers < floats. */
static int kind_rank(int dtype) {
  char k = nd_dtype_kind(dtype);
  return k == 'b' ? 0 : k == 'f' ? 2 : 1;
}

nd_status nd_prepare_source(nd_err *e, nd_tensor *tmp, const nd_tensor *src,
                            int dtype, const nd_tensor *t) {
  if (src->dtype != dtype) return nd_to_dtype(e, tmp, src, dtype);
  if (nd_may_overlap(src, t)) return nd_clone(e, tmp, src);
  nd_share(tmp, src);
  return ND_OK;
}

/* The shared tail of the writing ops: t writable, index valid, sources
 * prepared (converted, not overlapping t), then one scatter walk over
 * `shape` with the index `ixv` (a header over index) and the source view
 * `srcv` (a header over src; its storage is swapped for the prepared
 * copy's when one was made). */
/* Adds into a small contiguous target from a much longer index (a
 * histogram) run on a copy of the target, checking positions as they go,
 * and copy it back when all were valid: one pass over the index instead
 * of a checking pass and an adding pass, and a refused op still leaves
 * the target untouched. */
#define STAGE_MAX_BYTES ((int64_t)256 << 10)
static int stage_adds(const nd_tensor *t, const nd_tensor *index) {
  int64_t bytes = nd_numel(t) * nd_dtype_size(t->dtype); /* t exists: fits */
  return nd_is_contiguous(t) && bytes > 0 && bytes <= STAGE_MAX_BYTES &&
         nd_numel(index) * nd_dtype_size(index->dtype) >= 4 * bytes;
}

static nd_status scatter_walk(nd_err *e, const char *fn, int op,
                              const nd_tensor *t, int dim,
                              const nd_tensor *index, nd_tensor ixv,
                              const nd_tensor *src, nd_tensor srcv,
                              int ndim, const int64_t *shape, double alpha) {
  char w[32];
  nd_tensor s = ND_UNSET, ix = ND_UNSET, stage = ND_UNSET;
  int staged = op == MOVE_ADD && stage_adds(t, index);
  if (nd_check_writable(e, fn, t) ||
      (!staged && check_positions(e, fn, index, t->size[dim],
                                  dim_name(w, sizeof w, e, dim))))
    return e->code;
  if (op == MOVE_ADD && kind_rank(src->dtype) > kind_rank(t->dtype)) {
    if (staged && check_positions(e, fn, index, t->size[dim],
                                  dim_name(w, sizeof w, e, dim)))
      return e->code; /* the same error first as unstaged */
    return nd_fail(e, ND_EINVAL, "%s: cannot add %s values into a %s tensor "
                   "in place", fn, nd_dtype_name(src->dtype),
                   nd_dtype_name(t->dtype));
  }
  if (nd_prepare_source(e, &s, src, t->dtype, t)) return e->code;
  if (nd_may_overlap(index, t) && nd_clone(e, &ix, index)) {
    nd_release(&s);
    return e->code;
  }
  if (s.storage != src->storage) {
    /* a compact copy of src's shape: the view's strides are its own
     * (broadcast dims stay 0, a 0-d value has none) */
    nd_tensor v = s;
    v.ndim = srcv.ndim;
    for (int d = 0; d < v.ndim; d++) {
      v.size[d] = srcv.size[d];
      v.stride[d] = srcv.stride[d] == 0 ? 0 : s.stride[d];
    }
    srcv = v;
  }
  if (ix.storage) {
    nd_tensor v = ixv;
    v.storage = ix.storage;
    v.offset = ix.offset;
    for (int d = 0; d < v.ndim; d++)
      if (v.stride[d])
        v.stride[d] = index->ndim == v.ndim ? ix.stride[d] : ix.stride[0];
    ixv = v;
  }
  const nd_tensor *tt = t;
  if (staged && nd_clone(e, &stage, t)) {
    nd_release(&s);
    nd_release(&ix);
    return e->code;
  }
  if (staged) tt = &stage;
  nd_tensor ln = line_view(tt, dim, ndim, shape);
  const nd_tensor *ops[3] = {&ixv, &ln, &srcv};
  int bad = run_move(op, ops, tt, dim, index, e->base, alpha);
  if (staged && !bad)
    memcpy(nd_ptr(t), nd_ptr(&stage), (size_t)nd_numel(t) * nd_dtype_size(t->dtype));
  nd_release(&stage);
  nd_release(&s);
  nd_release(&ix);
  if (!bad) return ND_OK;
  return check_positions(e, fn, index, t->size[dim],
                         dim_name(w, sizeof w, e, dim));
}

/* scatter / scatter_add: src of t's dims (or, for scatter, a 0-d value
 * spread over the index). */
static nd_status scatter_common(nd_err *e, const char *fn, int op,
                                const nd_tensor *t, int dim,
                                const nd_tensor *index,
                                const nd_tensor *src) {
  int value = src->ndim == 0 && op == MOVE_SCATTER;
  if (check_dim(e, fn, dim, t->ndim) ||
      check_index_dtype(e, fn, index) ||
      check_gather_shapes(e, fn, t, dim, index, value ? NULL : src))
    return e->code;
  nd_tensor sv = *src;
  sv.ndim = index->ndim;
  for (int d = 0; d < sv.ndim; d++) {
    sv.size[d] = index->size[d];
    if (value) sv.stride[d] = 0;
  }
  return scatter_walk(e, fn, op, t, dim, index, *index, src, sv, index->ndim,
                      index->size, 1);
}

nd_status nd_scatter(nd_err *e, const nd_tensor *t, int dim,
                     const nd_tensor *index, const nd_tensor *src) {
  return scatter_common(e, "scatter_", MOVE_SCATTER, t, dim, index, src);
}

nd_status nd_scatter_add(nd_err *e, const nd_tensor *t, int dim,
                         const nd_tensor *index, const nd_tensor *src) {
  return scatter_common(e, "scatter_add_", MOVE_ADD, t, dim, index, src);
}

/* index_add / index_copy / index_fill: src has t's shape with
 * size[dim] = numel(index) (index_fill: a 0-d value spread over it). */
static nd_status index_common(nd_err *e, const char *fn, int op,
                              const nd_tensor *t, int dim,
                              const nd_tensor *index, const nd_tensor *src,
                              int value, double alpha) {
  char b1[ND_SIZES_BUF], b2[ND_SIZES_BUF];
  int64_t shape[ND_MAX_DIMS];
  if (check_dim(e, fn, dim, t->ndim) || check_index_dtype(e, fn, index))
    return e->code;
  if (index->ndim > 1)
    return nd_fail(e, ND_EINVAL, "%s: index must be 1-D, got %d dims", fn,
                   index->ndim);
  int nd = t->ndim;
  memcpy(shape, t->size, sizeof(int64_t) * (size_t)nd);
  shape[dim] = nd_numel(index);
  nd_tensor sv = *src;
  if (value) {
    if (src->ndim != 0)
      return nd_fail(e, ND_EINVAL, "%s: value must be a number or a 0-d "
                     "tensor, got %d dims", fn, src->ndim);
    sv.ndim = nd;
    for (int d = 0; d < nd; d++) { sv.size[d] = shape[d]; sv.stride[d] = 0; }
  } else {
    int same = src->ndim == t->ndim;
    for (int d = 0; same && d < t->ndim; d++) same = src->size[d] == shape[d];
    if (!same)
      return nd_fail(e, ND_EINVAL, "%s: src must have size %s (the tensor's "
                     "with dim %d the index's length), got %s", fn,
                     nd_fmt_sizes(b1, sizeof b1, nd, shape), dim + e->base,
                     nd_fmt_sizes(b2, sizeof b2, src->ndim, src->size));
  }
  nd_tensor ixv = spread_index(index, dim, nd, shape);
  return scatter_walk(e, fn, op, t, dim, index, ixv, src, sv, nd, shape,
                      alpha);
}

nd_status nd_index_add(nd_err *e, const nd_tensor *t, int dim,
                       const nd_tensor *index, const nd_tensor *src,
                       double alpha) {
  if (nd_dtype_kind(t->dtype) != 'f' &&
      !(alpha == floor(alpha) && fabs(alpha) <= 0x1p53))
    return nd_fail(e, ND_EINVAL, "index_add_: alpha %g must be an integer "
                   "for a %s tensor", alpha, nd_dtype_name(t->dtype));
  return index_common(e, "index_add_", MOVE_ADD, t, dim, index, src, 0,
                      alpha);
}

nd_status nd_index_copy(nd_err *e, const nd_tensor *t, int dim,
                        const nd_tensor *index, const nd_tensor *src) {
  return index_common(e, "index_copy_", MOVE_SCATTER, t, dim, index, src, 0,
                      1);
}

nd_status nd_index_fill(nd_err *e, const nd_tensor *t, int dim,
                        const nd_tensor *index, const nd_tensor *value) {
  return index_common(e, "index_fill_", MOVE_SCATTER, t, dim, index, value,
                      1, 1);
}
