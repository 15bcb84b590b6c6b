/* float16 and bfloat16 through the float32 kernels, for the functions
 * whose kernels are typed per native dtype and that read their input
 * whole (reductions, sorts, scans, histograms; pooling, interpolate, the
 * filters and convolution in conv/): the input is converted to a float32
 * copy, the float32 function runs, and its float32 results are rounded
 * back to the input's dtype once (exact for values taken from the input:
 * min, max, sort, max pooling). Elementwise ops convert block by block in
 * their driver instead (elementwise.c); index_add_ / scatter_add_ round
 * per add in their loop (index.c). */
#include "kernels.h"

nd_status nd_half_widen(nd_err *e, const char *fn, nd_tensor *w,
                        const nd_tensor *t) {
  if (nd_to_dtype(e, w, t, ND_FLOAT32)) return nd_err_name(e, fn);
  return ND_OK;
}

nd_status nd_half_narrow(nd_err *e, const char *fn, nd_tensor *out,
                         nd_tensor *r, int dt) {
  nd_status st = ND_OK;
  if (out) {
    int od = r->dtype == ND_FLOAT32 ? dt : r->dtype;
    if (nd_alloc_tensor(e, out, od, r->ndim, r->size, false))
      st = nd_err_name(e, fn);
    else if (nd_copy(e, out, r))
      st = nd_err_name(e, fn), nd_release(out);
  }
  nd_release(r);
  return st;
}
