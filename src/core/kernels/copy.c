/* Copies: same-dtype moves (memcpy when both sides are contiguous, a tiled
 * transpose when their inner dims cross, a tiny inner dim looped inside
 * the kernel), dtype conversion (convert.c), fill, clone, cat. */
#include "kernels.h"
#include <stdlib.h>

/* ---- same dtype ---- */
typedef struct { int sdt, ddt; } convert_ctx;

/* A broadcast source (fill_ of the tensor's own dtype) goes to convert.c,
 * whose fill stores one value with the widest stores. */
#define MOVE_LOOP(T)                                                        \
  static void move_##T(char **p, const int64_t *st, int64_t n, void *c) {   \
    const convert_ctx *cc = c;                                              \
    char *d = p[0], *s = p[1];                                              \
    if (st[1] == 0) {                                                       \
      nd_convert(cc->ddt, d, st[0], cc->sdt, s, 0, n);                      \
      return;                                                               \
    }                                                                       \
    if (st[0] == sizeof(T) && st[1] == sizeof(T)) {                         \
      memmove(d, s, (size_t)n * sizeof(T));                                 \
      return;                                                               \
    }                                                                       \
    for (int64_t i = 0; i < n; i++, d += st[0], s += st[1])                 \
      memcpy(d, s, sizeof(T));                                              \
  }
MOVE_LOOP(uint8_t)
MOVE_LOOP(uint16_t)
MOVE_LOOP(uint32_t)
MOVE_LOOP(uint64_t)

/* An inner dim of at most TINY elements (a window's few columns) would
 * cost a call per run of them: move2_ takes it inside, over the innermost
 * of the other dims that has TINY_ROW elements or more (else the next
 * one), as rows. */
enum { TINY = 8, TINY_ROW = 16 };
typedef struct { int64_t n, st[2]; } tiny_ctx;
#define MOVE2_LOOP(T)                                                       \
  static void move2_##T(char **p, const int64_t *st, int64_t n, void *c) {  \
    const tiny_ctx *t = c;                                                  \
    const int64_t m = t->n, dj = t->st[0], sj = t->st[1];                   \
    char *d = p[0];                                                         \
    const char *s = p[1];                                                   \
    for (int64_t i = 0; i < n; i++, d += st[0], s += st[1])                 \
      for (int64_t j = 0; j < m; j++)                                       \
        memcpy(d + j * dj, s + j * sj, sizeof(T));                          \
  }
MOVE2_LOOP(uint8_t)
MOVE2_LOOP(uint16_t)
MOVE2_LOOP(uint32_t)
MOVE2_LOOP(uint64_t)

static int try_tiny(nd_iter *it, int64_t es) {
  if (it->ndim < 2 || it->size[0] > TINY || it->stride[1][0] == 0) return 0;
  int j = 1;
  while (j < it->ndim && it->size[j] < TINY_ROW) j++;
  if (j == it->ndim) j = 1;
  tiny_ctx c;
  nd_iter_take(it, 0, &c.n, c.st);
  nd_iter_inner(it, j - 1);
  nd_iter_run(it, es == 1 ? move2_uint8_t : es == 2 ? move2_uint16_t
                  : es == 4 ? move2_uint32_t
                  : move2_uint64_t, &c, 0, nd_iter_outer(it));
  return 1;
}

/* ---- conversion (convert.c) ---- */
static void convert_loop(char **p, const int64_t *st, int64_t n, void *c) {
  const convert_ctx *cc = c;
  nd_convert(cc->ddt, p[0], st[0], cc->sdt, p[1], st[1], n);
}

/* The destination is compact in its inner dim and the source in another
 * dim k: each (dim 0, dim k) plane is a transpose, done in tiles, for every
 * index of the other dims (batched transposes, permuted copies). */
static int try_transpose(const nd_iter *it, int64_t es) {
  int k = 0, other[ND_MAX_DIMS], no = 0;
  if (it->ndim < 2 || it->stride[0][0] != es || it->stride[1][0] == es)
    return 0;
  for (int i = 1; i < it->ndim && !k; i++)
    if (it->stride[1][i] == es) k = i;
  if (!k || it->size[0] < 8 || it->size[k] < 8 || it->stride[1][0] % es ||
      it->stride[0][k] % es)
    return 0;
  for (int i = 1; i < it->ndim; i++)
    if (i != k) other[no++] = i;
  int64_t idx[ND_MAX_DIMS] = {0};
  char *d = it->data[0], *s = it->data[1];
  for (;;) {
    nd_transpose_copy(d, s, it->size[k], it->size[0], it->stride[0][k] / es,
                      it->stride[1][0] / es, (int)es);
    int j = 0;
    for (; j < no; j++) { /* odometer over the other dims */
      int o = other[j];
      d += it->stride[0][o];
      s += it->stride[1][o];
      if (++idx[j] < it->size[o]) break;
      d -= it->stride[0][o] * it->size[o];
      s -= it->stride[1][o] * it->size[o];
      idx[j] = 0;
    }
    if (j == no) return 1;
  }
}

/* dst and src have the same shape; dst does not overlap itself or src. */
static void copy_same_shape(const nd_tensor *dst, const nd_tensor *src) {
  const nd_tensor *ops[2] = {dst, src};
  nd_iter it;
  nd_iter_init(&it, 2, ops);
  int64_t es = nd_dtype_size(dst->dtype);
  nd_loop_fn fn = NULL;
  convert_ctx cc = {src->dtype, dst->dtype};
  if (dst->dtype == src->dtype) {
    if (try_transpose(&it, es) || try_tiny(&it, es)) return;
    fn = es == 1 ? move_uint8_t : es == 2 ? move_uint16_t
         : es == 4 ? move_uint32_t : move_uint64_t;
  } else {
    fn = convert_loop;
  }
  nd_iter_run(&it, fn, &cc, 0, nd_iter_outer(&it));
}

void nd_copy_apart(const nd_tensor *dst, const nd_tensor *src) {
  if (nd_numel(dst)) copy_same_shape(dst, src);
}

static int64_t gcd(int64_t a, int64_t b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b) { int64_t r = a % b; a = b; b = r; }
  return a;
}

/* Can a write to dst change an element that src reads? Spans that do not
 * intersect cannot; nor can two same-sized element grids on one buffer
 * whose start addresses differ by a non-multiple of the gcd of all their
 * (byte) strides, like the even and odd columns of one matrix. */
static int may_share_elements(const nd_tensor *dst, const nd_tensor *src) {
  if (!nd_may_overlap(dst, src)) return 0;
  int64_t es = nd_dtype_size(dst->dtype);
  if (nd_dtype_size(src->dtype) != es ||
      dst->storage->data != src->storage->data)
    return 1;
  int64_t g = 0, diff = (dst->offset - src->offset) * es;
  for (int i = 0; i < dst->ndim; i++)
    if (dst->size[i] > 1) g = gcd(g, dst->stride[i] * es);
  for (int i = 0; i < src->ndim; i++)
    if (src->size[i] > 1) g = gcd(g, src->stride[i] * es);
  return g == 0 ? diff == 0 : diff % g == 0;
}

/* dst and src contiguous, of one shape, fewer elements than one thread's
 * share (bigger copies go to the thread pool), and apart (or the same
 * elements): one memcpy or one conversion loop, without broadcasting,
 * overlap checks or iteration -- a small clone's whole cost was those. A
 * contiguous dst has no element twice: it is writable. */
static int copy_flat(const nd_tensor *dst, const nd_tensor *src) {
  if (!dst->storage || !src->storage || dst->ndim != src->ndim ||
      !nd_is_contiguous(dst) || !nd_is_contiguous(src))
    return 0;
  for (int i = 0; i < dst->ndim; i++)
    if (dst->size[i] != src->size[i]) return 0;
  int64_t n = nd_numel(dst), ed = nd_dtype_size(dst->dtype),
          es = nd_dtype_size(src->dtype);
  char *d = nd_ptr(dst), *s = nd_ptr(src);
  if (n >= 1 << 15) return 0;
  if (n == 0 || d == s) return n == 0 || dst->dtype == src->dtype;
  if (d < s + n * es && s < d + n * ed) return 0;
  if (dst->dtype == src->dtype)
    memcpy(d, s, (size_t)(n * ed));
  else
    nd_convert(dst->dtype, d, ed, src->dtype, s, es, n);
  return 1;
}

nd_status nd_copy(nd_err *e, const nd_tensor *dst, const nd_tensor *src) {
  char b1[ND_SIZES_BUF], b2[ND_SIZES_BUF];
  nd_tensor s, tmp = ND_UNSET;
  if (!nd_readonly(dst) && copy_flat(dst, src)) return ND_OK;
  nd_err scratch; /* nd_expand's own message is replaced below */
  scratch.code = ND_OK;
  scratch.base = e->base;
  scratch.fn = e->fn;
  if (nd_check_writable(e, "copy_", dst)) return e->code;
  if (nd_expand(&scratch, &s, src, dst->ndim, dst->size))
    return nd_fail(e, ND_EINVAL,
                   "copy_: source of size %s does not broadcast to %s",
                   nd_fmt_sizes(b1, sizeof b1, src->ndim, src->size),
                   nd_fmt_sizes(b2, sizeof b2, dst->ndim, dst->size));
  /* A source whose elements dst may write is read through a temporary
   * copy of src (before broadcasting: no bigger than src), unless it is
   * the very same elements in the same order (then each element is read
   * before it is written). */
  int same = s.storage->data == dst->storage->data &&
             s.dtype == dst->dtype && s.offset == dst->offset &&
             !memcmp(s.stride, dst->stride, sizeof(int64_t) * (size_t)s.ndim);
  if (!same && may_share_elements(dst, &s)) {
    nd_release(&s);
    if (nd_clone(e, &tmp, src)) return nd_err_name(e, "copy_");
    nd_expand(&scratch, &s, &tmp, dst->ndim, dst->size); /* cannot fail */
    nd_release(&tmp);
  }
  copy_same_shape(dst, &s);
  nd_release(&s);
  return ND_OK;
}

static nd_status copy_as(nd_err *e, const char *fn, nd_tensor *out,
                         const nd_tensor *t, int dtype) {
  if (nd_alloc_tensor(e, out, dtype, t->ndim, t->size, false))
    return nd_err_name(e, fn);
  copy_same_shape(out, t);
  return ND_OK;
}

nd_status nd_clone(nd_err *e, nd_tensor *out, const nd_tensor *t) {
  return copy_as(e, "clone", out, t, t->dtype);
}

nd_status nd_to_dtype(nd_err *e, nd_tensor *out, const nd_tensor *t,
                      int dtype) {
  return copy_as(e, "to", out, t, dtype);
}

nd_status nd_contiguous(nd_err *e, nd_tensor *out, const nd_tensor *t) {
  if (nd_is_contiguous(t)) {
    nd_share(out, t);
    return ND_OK;
  }
  return copy_as(e, "contiguous", out, t, t->dtype);
}

/* ---- fill: one element written, then a doubling broadcast copy ---- */
static nd_status fill_with(nd_err *e, const nd_tensor *dst, const char *fn,
                           int sdt, const void *v) {
  if (nd_check_writable(e, fn, dst)) return e->code;
  if (nd_numel(dst) == 0) return ND_OK;
  /* A 0-d source header on a local element, broadcast by nd_iter. */
  union { double d; int64_t i; } cell;
  memcpy(&cell, v, sizeof cell);
  nd_storage st = {&cell, sizeof cell, 1, NULL, NULL, 0};
  nd_tensor src = {&st, 0, sdt, 0, {0}, {0}};
  nd_tensor s = src;
  s.ndim = dst->ndim;
  for (int i = 0; i < dst->ndim; i++) { s.size[i] = dst->size[i]; s.stride[i] = 0; }
  copy_same_shape(dst, &s);
  return ND_OK;
}

nd_status nd_fill(nd_err *e, const nd_tensor *dst, double v) {
  return fill_with(e, dst, "fill_", ND_FLOAT64, &v);
}
nd_status nd_fill_i64(nd_err *e, const nd_tensor *dst, int64_t v) {
  return fill_with(e, dst, "fill_", ND_INT64, &v);
}
nd_status nd_fill_scalar(nd_err *e, const nd_tensor *dst,
                         const nd_operand *s) {
  if (nd_scalar_fits(e, "fill_", dst->dtype, s)) return e->code;
  return fill_with(e, dst, "fill_", s->dtype, nd_scalar_bits(s));
}

/* ---- cat ---- */
nd_status nd_cat(nd_err *e, nd_tensor *out, int n, const nd_tensor *const *ts,
                 int dim) {
  char b1[ND_SIZES_BUF], b2[ND_SIZES_BUF];
  if (n <= 0) return nd_fail(e, ND_EINVAL, "cat: expected a non-empty list");
  const nd_tensor *ref = ts[0];
  int dtype = ts[0]->dtype;
  if (ref->ndim == 0)
    return nd_fail(e, ND_EINVAL, "cat: zero-dimensional tensor %d cannot be "
                   "concatenated", e->base);
  if (nd_check_dim(e, "cat", dim, ref->ndim)) return e->code;
  int64_t total = 0;
  for (int k = 0; k < n; k++) {
    const nd_tensor *t = ts[k];
    if (t->ndim != ref->ndim)
      return nd_fail(e, ND_EINVAL, "cat: tensor %d has %d dims, tensor %d "
                     "has %d", k + e->base, t->ndim, e->base, ref->ndim);
    for (int d = 0; d < t->ndim; d++)
      if (d != dim && t->size[d] != ref->size[d])
        return nd_fail(e, ND_EINVAL,
                       "cat: sizes must match except in dim %d: tensor %d "
                       "has %s, tensor %d has %s", dim + e->base, k + e->base,
                       nd_fmt_sizes(b1, sizeof b1, t->ndim, t->size), e->base,
                       nd_fmt_sizes(b2, sizeof b2, ref->ndim, ref->size));
    if (nd_add_ovf(total, t->size[dim], &total))
      return nd_fail(e, ND_EOVERFLOW, "cat: total size overflows");
    dtype = nd_promote_types(dtype, t->dtype);
  }
  int64_t size[ND_MAX_DIMS];
  memcpy(size, ref->size, sizeof size);
  size[dim] = total;
  if (nd_alloc_tensor(e, out, dtype, ref->ndim, size, false)) return e->code;
  int64_t at = 0;
  for (int k = 0; k < n; k++) {
    nd_tensor part;
    nd_narrow(e, &part, out, dim, at, ts[k]->size[dim]);
    copy_same_shape(&part, ts[k]);
    nd_release(&part);
    at += ts[k]->size[dim];
  }
  return ND_OK;
}

/* ---- stack: cat of the tensors, each seen with a size-1 dim at dim ---- */
nd_status nd_stack(nd_err *e, nd_tensor *out, int n,
                   const nd_tensor *const *ts, int dim) {
  char b1[ND_SIZES_BUF], b2[ND_SIZES_BUF];
  if (n <= 0) return nd_fail(e, ND_EINVAL, "stack: expected a non-empty list");
  const nd_tensor *ref = ts[0];
  if (ref->ndim >= ND_MAX_DIMS)
    return nd_fail(e, ND_EINVAL, "stack: tensors of %d dims leave no room "
                   "for another (at most %d)", ref->ndim, ND_MAX_DIMS);
  if (nd_check_dim(e, "stack", dim, ref->ndim + 1)) return e->code;
  for (int i = 0; i < n; i++)
    if (ts[i]->ndim != ref->ndim ||
        memcmp(ts[i]->size, ref->size, sizeof(int64_t) * (size_t)ref->ndim))
      return nd_fail(e, ND_EINVAL, "stack: all tensors must have the same "
                     "size; entry %d has %s, entry %d has %s", i + e->base,
                     nd_fmt_sizes(b1, sizeof b1, ts[i]->ndim, ts[i]->size),
                     e->base, nd_fmt_sizes(b2, sizeof b2, ref->ndim, ref->size));
  nd_tensor *hs = nd_scratch_alloc(e, "stack", n, sizeof *hs, false);
  const nd_tensor **ps = hs ? nd_scratch_alloc(e, "stack", n, sizeof *ps, false)
                            : NULL;
  if (!ps) {
    nd_scratch_free(hs);
    return e->code;
  }
  for (int i = 0; i < n; i++) { /* borrowed headers: no reference taken */
    hs[i] = *ts[i];
    for (int k = hs[i].ndim; k > dim; k--) {
      hs[i].size[k] = hs[i].size[k - 1];
      hs[i].stride[k] = hs[i].stride[k - 1];
    }
    hs[i].size[dim] = 1;
    hs[i].stride[dim] = 1;
    hs[i].ndim++;
    ps[i] = &hs[i];
  }
  nd_status st = nd_cat(e, out, n, ps, dim);
  nd_scratch_free(ps);
  nd_scratch_free(hs);
  return st;
}
