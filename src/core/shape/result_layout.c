/* The memory order of a fresh elementwise result: PyTorch's TensorIterator
 * rule, so that results of broadcast inputs are laid out as PyTorch lays
 * them out. Dims are ordered innermost first by an insertion sort that
 * asks each input in turn: the dim with the smaller |stride| goes inside;
 * a broadcast dim (stride 0) lets the next input decide; equal strides put
 * the smaller size inside; when no input decides, row-major order stays.
 * |stride|: a flipped input walks the same cells (NumPy's order "K"). */
#include "shape.h"
#include <stdlib.h>

/* >0: dim d1 should go inside d0; <0: it should not; 0: undecided. */
static int should_swap(int n, const nd_tensor *const *ops, int d0, int d1) {
  for (int k = 0; k < n; k++) {
    int64_t s0 = llabs(ops[k]->stride[d0]), s1 = llabs(ops[k]->stride[d1]);
    if (s0 == 0 || s1 == 0) continue;
    if (s0 < s1) return -1;
    if (s0 > s1) return 1;
    if (ops[k]->size[d0] > ops[k]->size[d1]) return 1;
  }
  return 0;
}

/* The order of out's dims, innermost first (the rule above). */
static void order(int *perm, int ndim, int n, const nd_tensor *const *ops) {
  for (int i = 0; i < ndim; i++) perm[i] = ndim - 1 - i;
  for (int i = 1; i < ndim; i++)
    for (int d1 = i, d0 = i - 1; d0 >= 0; d0--) {
      int c = should_swap(n, ops, perm[d0], perm[d1]);
      if (c > 0) {
        int t = perm[d0]; perm[d0] = perm[d1]; perm[d1] = t;
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
}

/* out's strides: dense in the order perm. */
static nd_status dense(nd_err *e, nd_tensor *out, const int *perm) {
  int64_t psize[ND_MAX_DIMS] = {0}, pstride[ND_MAX_DIMS]; /* gcc: ndim 0 */
  int ndim = out->ndim;
  for (int i = 0; i < ndim; i++) psize[i] = out->size[perm[ndim - 1 - i]];
  if (nd_contiguous_strides(e, ndim, psize, pstride, NULL)) return e->code;
  for (int i = 0; i < ndim; i++) out->stride[perm[ndim - 1 - i]] = pstride[i];
  return ND_OK;
}

nd_status nd_alloc_layout(nd_err *e, nd_tensor *out, int dtype, int ndim,
                          const int64_t *size, int n,
                          const nd_tensor *const *ops) {
  int perm[ND_MAX_DIMS]; /* perm[0] is the innermost dim */
  order(perm, ndim, n, ops);
  if (nd_alloc_tensor(e, out, dtype, ndim, size, false)) return e->code;
  return dense(e, out, perm); /* cannot fail: checked by the allocation */
}

nd_status nd_layout_of(nd_err *e, nd_tensor *out, int dtype, int ndim,
                       const int64_t *size, int n,
                       const nd_tensor *const *ops) {
  int perm[ND_MAX_DIMS];
  if (nd_check_ndim(e, "layout", ndim)) return e->code;
  order(perm, ndim, n, ops);
  out->storage = NULL;
  out->offset = 0;
  out->dtype = dtype;
  out->ndim = ndim;
  for (int i = 0; i < ndim; i++) out->size[i] = size[i];
  return dense(e, out, perm);
}
