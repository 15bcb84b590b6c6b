/* Boolean masks: masked_fill, masked_select, masked_scatter, nonzero.
 * A mask is bool and broadcasts to the tensor (never the tensor to the
 * mask). Selections walk the tensor in row-major order: a row-major
 * "pacer" header leads the iteration so nd_iter keeps that order. */
#include "index.h"
#include <stdio.h>

/* A borrowed header of mask broadcast to t's sizes, or an error. */
static nd_status mask_view(nd_err *e, const char *fn, nd_tensor *mv,
                           const nd_tensor *mask, const nd_tensor *t) {
  char b1[ND_SIZES_BUF], b2[ND_SIZES_BUF];
  if (mask->dtype != ND_BOOL)
    return nd_fail(e, ND_EINVAL, "%s: mask must be a bool tensor, got %s",
                   fn, nd_dtype_name(mask->dtype));
  int lead = t->ndim - mask->ndim, ok = lead >= 0;
  for (int d = 0; ok && d < mask->ndim; d++)
    ok = mask->size[d] == 1 || mask->size[d] == t->size[d + lead];
  if (!ok)
    return nd_fail(e, ND_EINVAL, "%s: mask of size %s does not broadcast to "
                   "the tensor's size %s", fn,
                   nd_fmt_sizes(b1, sizeof b1, mask->ndim, mask->size),
                   nd_fmt_sizes(b2, sizeof b2, t->ndim, t->size));
  *mv = *mask;
  mv->ndim = t->ndim;
  for (int d = 0; d < t->ndim; d++) {
    mv->size[d] = t->size[d];
    mv->stride[d] = d < lead || mask->size[d - lead] != t->size[d]
                        ? 0 : mask->stride[d - lead];
  }
  return ND_OK;
}

/* A row-major header of t's shape (its pointers are never dereferenced). */
static nd_tensor pacer(const nd_tensor *t) {
  nd_tensor p = *t;
  int64_t s = 1;
  p.offset = 0;
  for (int d = t->ndim - 1; d >= 0; d--) {
    p.stride[d] = s;
    s *= t->size[d] ? t->size[d] : 1;
  }
  return p;
}

/* ---- counting ---- */
static void count_loop(char **p, const int64_t *st, int64_t n, void *c) {
  int64_t k = 0;
  const uint8_t *m = (const uint8_t *)p[0];
  if (st[0] == 1)
    for (int64_t i = 0; i < n; i++) k += m[i] != 0;
  else
    for (int64_t i = 0; i < n; i++) k += m[i * st[0]] != 0;
  *(int64_t *)c += k;
}

static int64_t count_true(const nd_tensor *mv) {
  int64_t k = 0;
  nd_iter it;
  const nd_tensor *ops[1] = {mv};
  nd_iter_init(&it, 1, ops);
  nd_iter_run(&it, count_loop, &k, 0, nd_iter_outer(&it));
  return k;
}

/* ---- masked_fill: ops (t, mask), ctx the value's bytes ---- */
#define FILL_LOOP(T)                                                        \
  static void mfill_##T(char **p, const int64_t *st, int64_t n, void *c) {  \
    T v;                                                                    \
    char *d = p[0];                                                         \
    const char *m = p[1];                                                   \
    memcpy(&v, c, sizeof v);                                                \
    for (int64_t i = 0; i < n; i++, d += st[0], m += st[1])                 \
      if (*m) memcpy(d, &v, sizeof v);                                      \
  }
FILL_LOOP(uint8_t)
FILL_LOOP(uint16_t)
FILL_LOOP(uint32_t)
FILL_LOOP(uint64_t)

static nd_loop_fn by_size(int dtype, nd_loop_fn f1, nd_loop_fn f2,
                          nd_loop_fn f4, nd_loop_fn f8) {
  int64_t es = nd_dtype_size(dtype);
  return es == 1 ? f1 : es == 2 ? f2 : es == 4 ? f4 : f8;
}

nd_status nd_masked_fill(nd_err *e, const nd_tensor *t, const nd_tensor *mask,
                         const nd_tensor *value) {
  nd_tensor mv;
  uint64_t v = 0;
  if (mask_view(e, "masked_fill_", &mv, mask, t) ||
      nd_check_writable(e, "masked_fill_", t))
    return e->code;
  if (value->ndim != 0)
    return nd_fail(e, ND_EINVAL, "masked_fill_: value must be a number or a "
                   "0-d tensor, got %d dims", value->ndim);
  nd_convert(t->dtype, (char *)&v, 0, value->dtype, nd_ptr(value), 0, 1);
  const nd_tensor *ops[2] = {t, &mv};
  nd_iter it;
  nd_iter_init(&it, 2, ops);
  nd_iter_run(&it, by_size(t->dtype, mfill_uint8_t, mfill_uint16_t, mfill_uint32_t,
                           mfill_uint64_t), &v, 0, nd_iter_outer(&it));
  return ND_OK;
}

/* ---- masked_select: ops (pacer, t, mask); ctx the output cursor ---- */
typedef struct {
  char *out;
  int64_t j, cap;
} sel_ctx;

/* Branch-free compaction: every element is written at the cursor, which
 * advances only for selected ones; writes past the end go to a scratch. */
#define SELECT_LOOP(T)                                                      \
  static void msel_##T(char **p, const int64_t *st, int64_t n, void *c) {   \
    sel_ctx *x = c;                                                         \
    T *o = (T *)x->out, scratch;                                            \
    int64_t j = x->j, cap = x->cap;                                         \
    const char *s = p[1];                                                   \
    const uint8_t *m = (const uint8_t *)p[2];                               \
    if (st[1] == sizeof(T) && st[2] == 1) {                                 \
      const T *sv = (const T *)s;                                           \
      for (int64_t i = 0; i < n; i++) {                                     \
        *(j < cap ? o + j : &scratch) = sv[i];                              \
        j += m[i] != 0;                                                     \
      }                                                                     \
    } else {                                                                \
      for (int64_t i = 0; i < n; i++, s += st[1], m += st[2]) {             \
        memcpy(j < cap ? o + j : &scratch, s, sizeof(T));                   \
        j += *m != 0;                                                       \
      }                                                                     \
    }                                                                       \
    x->j = j;                                                               \
  }
SELECT_LOOP(uint8_t)
SELECT_LOOP(uint16_t)
SELECT_LOOP(uint32_t)
SELECT_LOOP(uint64_t)

nd_status nd_masked_select(nd_err *e, nd_tensor *out, const nd_tensor *t,
                           const nd_tensor *mask) {
  nd_tensor mv;
  memset(out, 0, sizeof *out);
  if (mask_view(e, "masked_select", &mv, mask, t)) return e->code;
  int64_t n = count_true(&mv);
  if (nd_alloc_tensor(e, out, t->dtype, 1, &n, false)) return e->code;
  if (n == 0) return ND_OK;
  nd_tensor pc = pacer(t);
  sel_ctx x = {nd_ptr(out), 0, n};
  const nd_tensor *ops[3] = {&pc, t, &mv};
  nd_iter it;
  nd_iter_init(&it, 3, ops);
  nd_iter_run(&it, by_size(t->dtype, msel_uint8_t, msel_uint16_t, msel_uint32_t,
                           msel_uint64_t), &x, 0, nd_iter_outer(&it));
  return ND_OK;
}

/* ---- masked_scatter: ops (pacer, t, mask); ctx the source cursor ---- */
#define SCATTER_LOOP(T)                                                     \
  static void mscat_##T(char **p, const int64_t *st, int64_t n, void *c) {  \
    sel_ctx *x = c;                                                         \
    const T *s = (const T *)x->out;                                         \
    char *d = p[1];                                                         \
    const char *m = p[2];                                                   \
    for (int64_t i = 0; i < n; i++, d += st[1], m += st[2])                 \
      if (*m) memcpy(d, s + x->j++, sizeof(T));                             \
  }
SCATTER_LOOP(uint8_t)
SCATTER_LOOP(uint16_t)
SCATTER_LOOP(uint32_t)
SCATTER_LOOP(uint64_t)

nd_status nd_masked_scatter(nd_err *e, const nd_tensor *t,
                            const nd_tensor *mask, const nd_tensor *src) {
  nd_tensor mv, s = ND_UNSET, c = ND_UNSET;
  if (mask_view(e, "masked_scatter_", &mv, mask, t) ||
      nd_check_writable(e, "masked_scatter_", t))
    return e->code;
  int64_t n = count_true(&mv), have = nd_numel(src);
  if (have < n)
    return nd_fail(e, ND_EINVAL, "masked_scatter_: src has %lld elements but "
                   "the mask selects %lld", (long long)have, (long long)n);
  if (n == 0) return ND_OK;
  if (nd_prepare_source(e, &s, src, t->dtype, t)) return e->code;
  nd_status st = nd_contiguous(e, &c, &s);
  nd_release(&s);
  if (st) return st;
  nd_tensor pc = pacer(t);
  sel_ctx x = {nd_ptr(&c), 0, n};
  const nd_tensor *ops[3] = {&pc, t, &mv};
  nd_iter it;
  nd_iter_init(&it, 3, ops);
  nd_iter_run(&it, by_size(t->dtype, mscat_uint8_t, mscat_uint16_t, mscat_uint32_t,
                           mscat_uint64_t), &x, 0, nd_iter_outer(&it));
  nd_release(&c);
  return ND_OK;
}

/* ---- nonzero ---- */
/* flags[i] = (element i of the run is nonzero), typed once per run. */
#define NZ_ROW(E, name, T, kind)                                            \
  static void nz_##name(const char *p, int64_t st, int64_t n, uint8_t *f) { \
    for (int64_t i = 0; i < n; i++) f[i] = *(const T *)(p + i * st) != 0;  \
  }
ND_NATIVE_DTYPES(NZ_ROW)
/* Nonzero count of a run (any order: nd_iter merges what it can). */
#define NZ_COUNT(E, name, T, kind)                                          \
  static void nzc_##name(char **p, const int64_t *st, int64_t n, void *c) { \
    int64_t k = 0;                                                          \
    if (st[0] == sizeof(T))                                                 \
      for (int64_t i = 0; i < n; i++) k += ((const T *)p[0])[i] != 0;       \
    else                                                                    \
      for (int64_t i = 0; i < n; i++)                                       \
        k += *(const T *)(p[0] + i * st[0]) != 0;                           \
    *(int64_t *)c += k;                                                     \
  }
ND_NATIVE_DTYPES(NZ_COUNT)
static const nd_loop_fn nz_counts[ND_NDTYPES] = {
#define NZC_ENTRY(E, name, T, kind) nzc_##name,
    ND_NATIVE_DTYPES(NZC_ENTRY)
#undef NZC_ENTRY
};
typedef void (*nz_fn)(const char *, int64_t, int64_t, uint8_t *);
static const nz_fn nz_rows[ND_NDTYPES] = {
#define NZ_ENTRY(E, name, T, kind) nz_##name,
    ND_NATIVE_DTYPES(NZ_ENTRY)
#undef NZ_ENTRY
};

/* Visits every row (the last dim) of t in row-major order with its flags;
 * fn gets the row's leading positions. Returns ND_ENOMEM on no buffer. */
typedef void (*row_fn)(const int64_t *idx, const uint8_t *f, int64_t n,
                       void *ctx);
static nd_status each_row(nd_err *e, const nd_tensor *t, row_fn fn,
                          void *ctx) {
  int nd = t->ndim;
  /* a dim of one element is never stepped: its stride may be anything */
  int64_t n = nd ? t->size[nd - 1] : 1, st = n > 1 ? t->stride[nd - 1] : 0;
  int64_t es = nd_dtype_size(t->dtype), idx[ND_MAX_DIMS] = {0};
  enum { CHUNK = 4096 };
  uint8_t f[CHUNK];
  if (nd_numel(t) == 0) return ND_OK;
  (void)e;
  const char *row = nd_ptr(t);
  for (;;) {
    for (int64_t k = 0; k < n; k += CHUNK) {
      int64_t m = n - k < CHUNK ? n - k : CHUNK;
      nz_rows[t->dtype](row + k * st * es, st * es, m, f);
      if (nd) idx[nd - 1] = k;
      fn(idx, f, m, ctx);
    }
    int d = nd - 2;
    for (; d >= 0; d--) { /* odometer over the leading dims */
      const int64_t sd = t->size[d] > 1 ? t->stride[d] : 0;
      row += sd * es;
      if (++idx[d] < t->size[d]) break;
      row -= sd * t->size[d] * es;
      idx[d] = 0;
    }
    if (d < 0) return ND_OK;
  }
}

typedef struct {
  int64_t *out, j, cap; /* the cursor in rows of ndim, and the row count */
  int ndim;
  int64_t base;
} nz_ctx;

/* Branch-free: every element's position is written at the cursor, which
 * advances only for nonzero ones; writes past the end go to a scratch. */
static void write_row(const int64_t *idx, const uint8_t *f, int64_t n,
                      void *c) {
  nz_ctx *x = c;
  int nd = x->ndim;
  int64_t j = x->j, cap = x->cap, b = x->base, scratch[ND_MAX_DIMS];
  if (nd == 1) {
    int64_t *o = x->out, k0 = idx[0] + b;
    for (int64_t i = 0; i < n; i++) {
      *(j < cap ? o + j : scratch) = k0 + i;
      j += f[i];
    }
  } else if (nd > 1) {
    for (int64_t i = 0; i < n; i++) {
      int64_t *o = j < cap ? x->out + j * nd : scratch;
      for (int d = 0; d < nd - 1; d++) o[d] = idx[d] + b;
      o[nd - 1] = idx[nd - 1] + i + b;
      j += f[i];
    }
  } else {
    j += f[0]; /* 0-d: a row of no positions */
  }
  x->j = j;
}

nd_status nd_nonzero(nd_err *e, nd_tensor *out, const nd_tensor *t) {
  if (nd_is_half(t->dtype)) { /* in float32 (half_adapt.c) */
    nd_tensor w_ = ND_UNSET, r_ = ND_UNSET;
    if (nd_half_widen(e, "nonzero", &w_, t)) return e->code;
    nd_status s_ = nd_nonzero(e, out, &w_);
    nd_release(&w_);
    return s_ ? s_ : nd_half_narrow(e, "nonzero", NULL, &r_, t->dtype);
  }
  int64_t n = 0;
  memset(out, 0, sizeof *out);
  nd_iter it;
  const nd_tensor *ops[1] = {t};
  nd_iter_init(&it, 1, ops);
  nd_iter_run(&it, nz_counts[t->dtype], &n, 0, nd_iter_outer(&it));
  int64_t size[2] = {n, t->ndim};
  if (nd_alloc_tensor(e, out, ND_INT64, 2, size, false)) return e->code;
  nz_ctx x = {(int64_t *)nd_ptr(out), 0, n, t->ndim, e->base};
  each_row(e, t, write_row, &x);
  return ND_OK;
}
