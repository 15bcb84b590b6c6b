/* Reading or writing one element, converted by nd_convert as every copy
 * converts: element access, so a kernel, not part of base/tensor.c. */
#include "kernels.h"

static nd_status locate(nd_err *e, const char *fn, const nd_tensor *t,
                        const int64_t *idx, char **p) {
  int64_t off = t->offset;
  for (int i = 0; i < t->ndim; i++) {
    if (idx[i] < 0 || idx[i] >= t->size[i])
      return nd_fail(e, ND_EINVAL,
                     "%s: index %lld out of range for dim %d of size %lld",
                     fn, (long long)(idx[i] + e->base), i + e->base,
                     (long long)t->size[i]);
    off += idx[i] * t->stride[i];
  }
  *p = (char *)t->storage->data + off * nd_dtype_size(t->dtype);
  return ND_OK;
}

/* One element through nd_convert, with the same rules as every copy. */
nd_status nd_get(nd_err *e, const nd_tensor *t, const int64_t *idx,
                 double *v) {
  char *p;
  if (locate(e, "get", t, idx, &p)) return e->code;
  nd_convert(ND_FLOAT64, (char *)v, 0, t->dtype, p, 0, 1);
  return ND_OK;
}

nd_status nd_get_i64(nd_err *e, const nd_tensor *t, const int64_t *idx,
                     int64_t *v) {
  char *p;
  if (locate(e, "get", t, idx, &p)) return e->code;
  nd_convert(ND_INT64, (char *)v, 0, t->dtype, p, 0, 1);
  return ND_OK;
}

nd_status nd_set(nd_err *e, const nd_tensor *t, const int64_t *idx,
                 double v) {
  char *p;
  if (locate(e, "set", t, idx, &p)) return e->code;
  nd_convert(t->dtype, p, 0, ND_FLOAT64, (const char *)&v, 0, 1);
  return ND_OK;
}

nd_status nd_set_i64(nd_err *e, const nd_tensor *t, const int64_t *idx,
                     int64_t v) {
  char *p;
  if (locate(e, "set", t, idx, &p)) return e->code;
  nd_convert(t->dtype, p, 0, ND_INT64, (const char *)&v, 0, 1);
  return ND_OK;
}
