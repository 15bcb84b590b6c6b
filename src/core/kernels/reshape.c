/* reshape and flatten: a view of t when strides exist for the new shape
 * (shape/view.c decides, nd_reshape_view), else a contiguous copy, as
 * PyTorch's. The copy makes them kernels. */
#include "kernels.h"

nd_status nd_reshape(nd_err *e, nd_tensor *out, const nd_tensor *t, int ndim,
                     const int64_t *size) {
  nd_tensor h, c;
  int view = nd_reshape_view(e, &h, t, ndim, size);
  if (view < 0) return e->code;
  if (view) {
    nd_share(out, &h);
    return ND_OK;
  }
  if (nd_clone(e, &c, t)) return e->code;
  nd_contiguous_strides(e, ndim, h.size, c.stride, NULL);
  c.ndim = ndim;
  memcpy(c.size, h.size, sizeof(int64_t) * (size_t)ndim);
  *out = c;
  return ND_OK;
}

nd_status nd_flatten(nd_err *e, nd_tensor *out, const nd_tensor *t, int first,
                     int last) {
  if (t->ndim == 0) {
    int64_t one = 1;
    return nd_reshape(e, out, t, 1, &one);
  }
  if (nd_check_dim(e, "flatten", first, t->ndim) ||
      nd_check_dim(e, "flatten", last, t->ndim))
    return e->code;
  if (first > last)
    return nd_fail(e, ND_EINVAL,
                   "flatten: first dim %d comes after last dim %d",
                   first + e->base, last + e->base);
  int64_t size[ND_MAX_DIMS];
  char b[ND_SIZES_BUF];
  int n = 0, empty = 0;
  for (int i = first; i <= last; i++) empty |= t->size[i] == 0;
  for (int i = 0; i < t->ndim; i++) {
    if (i <= first || i > last)
      size[n++] = t->size[i];
    else if (empty)
      size[n - 1] = 0;
    else if (nd_mul_ovf(size[n - 1], t->size[i], &size[n - 1]))
      return nd_fail(e, ND_EOVERFLOW, "flatten: dims %d..%d of %s hold more "
                     "than 2^63 elements", first + e->base, last + e->base,
                     nd_fmt_sizes(b, sizeof b, t->ndim, t->size));
  }
  return nd_reshape(e, out, t, n, size);
}
