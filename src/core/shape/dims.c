/* Rules on the dims an op takes, shared by the ops that take them. */
#include "core.h"

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
