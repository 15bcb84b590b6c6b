/* Pure rules on (sizes, strides, offset): element counts, contiguity,
 * spans, overlap and extents, which making a header needs (tensor.c).
 * Nothing here touches element memory. */
#include "core.h"
#include <stdlib.h>

int64_t nd_numel(const nd_tensor *t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++) /* empty first: {2^40, 2^40, 0} */
    if (t->size[i] == 0) return 0;
  for (int i = 0; i < t->ndim; i++) n *= t->size[i]; /* checked at creation */
  return n;
}

nd_status nd_check_ndim(nd_err *e, const char *fn, int ndim) {
  if (ndim >= 0 && ndim <= ND_MAX_DIMS) return ND_OK;
  return nd_fail(e, ND_EINVAL, "%s: %d dims requested, at most %d supported",
                 fn, ndim, ND_MAX_DIMS);
}

nd_status nd_check_dim(nd_err *e, const char *fn, int dim, int ndim) {
  if (dim >= 0 && dim < ndim) return ND_OK;
  if (ndim == 0)
    return nd_fail(e, ND_EINVAL, "%s: dim %d out of range for a 0-d tensor",
                   fn, dim + e->base);
  if (e->base == 1) /* the binding's 1-based dims: negatives count from the end */
    return nd_fail(e, ND_EINVAL,
                   "%s: dim %d out of range (valid: 1..%d or -%d..-1)", fn,
                   dim >= 0 ? dim + 1 : dim, ndim, ndim);
  return nd_fail(e, ND_EINVAL, "%s: dim %d out of range (valid: 0..%d)", fn,
                 dim, ndim - 1);
}

nd_status nd_contiguous_strides(nd_err *e, int ndim, const int64_t *size,
                                int64_t *stride, int64_t *numel) {
  char b[ND_SIZES_BUF];
  if (nd_check_ndim(e, "shape", ndim)) return e->code;
  int64_t n = 1;
  for (int i = 0; i < ndim; i++)
    if (size[i] < 0)
      return nd_fail(e, ND_EINVAL, "shape: negative size %lld in %s",
                     (long long)size[i], nd_fmt_sizes(b, sizeof b, ndim, size));
  int empty = 0;
  for (int i = 0; i < ndim; i++)
    if (size[i] == 0) empty = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    stride[i] = n;
    /* Strides keep growing past a size-0 dim, as PyTorch's do; when that
     * overflows (zeros({2^62, 0})) an empty tensor's strides are free:
     * all 1, so that no later stride arithmetic can overflow either. */
    if (nd_mul_ovf(n, size[i] ? size[i] : 1, &n)) {
      if (!empty)
        return nd_fail(e, ND_EOVERFLOW, "shape: %s has too many elements",
                       nd_fmt_sizes(b, sizeof b, ndim, size));
      for (int j = 0; j < ndim; j++) stride[j] = 1;
      break;
    }
  }
  if (empty) n = 0;
  if (numel) *numel = n;
  return ND_OK;
}

int nd_is_contiguous(const nd_tensor *t) {
  int64_t expect = 1;
  for (int i = 0; i < t->ndim; i++) /* empty: contiguous whatever the strides */
    if (t->size[i] == 0) return 1;
  for (int i = t->ndim - 1; i >= 0; i--) {
    if (t->size[i] == 1) continue;
    if (t->stride[i] != expect) return 0;
    expect *= t->size[i];
  }
  return 1;
}

void nd_span(const nd_tensor *t, int64_t *lo, int64_t *hi) {
  int64_t a = t->offset, b = t->offset;
  for (int i = 0; i < t->ndim; i++) {
    if (t->size[i] == 0) { *lo = 0; *hi = -1; return; }
    int64_t d = (t->size[i] - 1) * t->stride[i]; /* bounded at creation */
    if (d < 0) a += d; else b += d;
  }
  *lo = a;
  *hi = b;
}

void *nd_data(const nd_tensor *t) { return nd_ptr(t); }

int nd_same_storage(const nd_tensor *a, const nd_tensor *b) {
  /* Or the same first byte: two storages over one buffer (the binding
   * moves a small tensor's elements; a buffer may be wrapped twice). */
  return a->storage && b->storage &&
         (a->storage == b->storage || a->storage->data == b->storage->data);
}

int nd_may_overlap(const nd_tensor *a, const nd_tensor *b) {
  if (!a->storage || !b->storage) return 0;
  /* Distinct buffers (the common case, checked first: small products run
   * this on every call) cannot overlap. */
  const char *sa = a->storage->data, *sb = b->storage->data;
  if (a->storage != b->storage &&
      (sa + a->storage->nbytes <= sb || sb + b->storage->nbytes <= sa))
    return 0;
  int64_t alo, ahi, blo, bhi;
  nd_span(a, &alo, &ahi);
  nd_span(b, &blo, &bhi);
  if (ahi < alo || bhi < blo) return 0;
  /* Compare byte ranges: storages may be distinct wraps of one buffer. */
  const char *pa = a->storage->data, *pb = b->storage->data;
  int64_t ea = nd_dtype_size(a->dtype), eb = nd_dtype_size(b->dtype);
  const char *a0 = pa + alo * ea, *a1 = pa + (ahi + 1) * ea;
  const char *b0 = pb + blo * eb, *b1 = pb + (bhi + 1) * eb;
  return a0 < b1 && b0 < a1;
}

nd_status nd_check_extent(nd_err *e, const char *fn, int64_t avail, int ndim,
                          const int64_t *size, const int64_t *stride,
                          int64_t offset) {
  char b1[ND_SIZES_BUF], b2[ND_SIZES_BUF];
  int64_t lo = offset, hi = offset, numel = 1;
  if (nd_check_ndim(e, fn, ndim)) return e->code;
  if (offset < 0)
    return nd_fail(e, ND_EINVAL, "%s: negative offset %lld", fn,
                   (long long)offset);
  for (int i = 0; i < ndim; i++) /* empty: any other sizes */
    if (size[i] == 0) numel = 0;
  for (int i = 0; i < ndim; i++) {
    int64_t d;
    if (size[i] < 0)
      return nd_fail(e, ND_EINVAL, "%s: negative size %lld in %s", fn,
                     (long long)size[i], nd_fmt_sizes(b1, sizeof b1, ndim, size));
    if (numel && nd_mul_ovf(numel, size[i], &numel))
      return nd_fail(e, ND_EOVERFLOW, "%s: size %s has too many elements", fn,
                     nd_fmt_sizes(b1, sizeof b1, ndim, size));
    if (size[i] == 0 || size[i] == 1) continue;
    if (nd_mul_ovf(size[i] - 1, stride[i], &d) ||
        nd_add_ovf(d < 0 ? lo : hi, d, d < 0 ? &lo : &hi))
      return nd_fail(e, ND_EOVERFLOW, "%s: size %s with stride %s overflows",
                     fn, nd_fmt_sizes(b1, sizeof b1, ndim, size),
                     nd_fmt_sizes(b2, sizeof b2, ndim, stride));
  }
  /* An empty view reaches no element: any offset is valid (PyTorch's
   * rule), up to one whose byte address still fits in an int64. */
  if (numel > 0 ? (lo < 0 || hi >= avail) : offset > INT64_MAX / 16)
    return nd_fail(e, ND_EINVAL,
                   "%s: size %s, stride %s and offset %lld reach elements "
                   "[%lld, %lld] outside the storage of %lld elements", fn,
                   nd_fmt_sizes(b1, sizeof b1, ndim, size),
                   nd_fmt_sizes(b2, sizeof b2, ndim, stride), (long long)offset,
                   (long long)lo, (long long)hi, (long long)avail);
  return ND_OK;
}
