/* Rules on the dims an op takes, shared by the ops that take them. */
#include "shape.h"

/* Which dims are reduced; an error for repeats and bad dims. */
nd_status nd_reduced_mask(nd_err *e, const char *fn, const nd_tensor *t,
                          int ndims, const int *dims, int *red) {
  for (int i = 0; i < t->ndim; i++) red[i] = dims == NULL;
  if (!dims) return ND_OK;
  for (int i = 0; i < ndims; i++) {
    if (t->ndim == 0 && dims[i] == 0) continue; /* PyTorch's 0-d rule */
    if (nd_check_dim(e, fn, dims[i], t->ndim)) return e->code;
    if (red[dims[i]])
      return nd_fail(e, ND_EINVAL, "%s: dim %d appears more than once", fn,
                     dims[i] + e->base);
    red[dims[i]] = 1;
  }
  return ND_OK;
}

/* NumPy's broadcasting, right-aligned: the one rule of the elementwise
 * ops, matmul's batch dims (shape/matmul_plan.c) and linalg's (lin_*). */
nd_status nd_broadcast_shape(nd_err *e, const char *fn, int n,
                             const nd_tensor *const *ts, const int *skip,
                             int *ndim, int64_t *size) {
  int nd = 0;
  for (int k = 0; k < n; k++) /* the dims that broadcast */
    if (ts[k]->ndim - (skip ? skip[k] : 0) > nd)
      nd = ts[k]->ndim - (skip ? skip[k] : 0);
  for (int i = 0; i < nd; i++) {
    int64_t s = 1;
    int from = -1;
    for (int k = 0; k < n; k++) {
      int d = i - (nd - (ts[k]->ndim - (skip ? skip[k] : 0)));
      if (d < 0 || ts[k]->size[d] == 1) continue;
      if (s == 1) {
        s = ts[k]->size[d];
        from = k;
      } else if (s != ts[k]->size[d]) {
        char b1[ND_SIZES_BUF], b2[ND_SIZES_BUF];
        return nd_fail(e, ND_EINVAL,
                       "%s: %sshapes %s and %s do not broadcast (dim %d: "
                       "%lld vs %lld)", fn, skip ? "batch dims of " : "",
                       nd_fmt_sizes(b1, sizeof b1, ts[from]->ndim, ts[from]->size),
                       nd_fmt_sizes(b2, sizeof b2, ts[k]->ndim, ts[k]->size),
                       i + e->base, (long long)s, (long long)ts[k]->size[d]);
      }
    }
    size[i] = s;
  }
  *ndim = nd;
  return ND_OK;
}
