/* Reading or writing one element, converted by nd_convert as every copy
 * converts: element access, so a kernel, not part of base/tensor.c. */
#include "kernels.h"

static nd_status locate(nd_err *e, const char *fn, const nd_tensor *t,
                        const int64_t *idx, int64_t *off) {
  *off = t->offset;
  for (int i = 0; i < t->ndim; i++) {
    if (idx[i] < 0 || idx[i] >= t->size[i])
      return nd_fail(e, ND_EINVAL,
                     "%s: index %lld out of range for dim %d of size %lld",
                     fn, (long long)(idx[i] + e->base), i + e->base,
                     (long long)t->size[i]);
    *off += idx[i] * t->stride[i];
  }
  return ND_OK;
}
static char *at(const nd_tensor *t, int64_t off) {
  return (char *)t->storage->data + off * nd_dtype_size(t->dtype);
}

void nd_store(const nd_tensor *t, int64_t off, int sdt, const void *v) {
  nd_convert(t->dtype, at(t, off), 0, sdt, (const char *)v, 0, 1);
}

/* One element through nd_convert, with the same rules as every copy. */
nd_status nd_get(nd_err *e, const nd_tensor *t, const int64_t *idx,
                 double *v) {
  int64_t off;
  if (locate(e, "get", t, idx, &off)) return e->code;
  nd_convert(ND_FLOAT64, (char *)v, 0, t->dtype, at(t, off), 0, 1);
  return ND_OK;
}

nd_status nd_get_i64(nd_err *e, const nd_tensor *t, const int64_t *idx,
                     int64_t *v) {
  int64_t off;
  if (locate(e, "get", t, idx, &off)) return e->code;
  nd_convert(ND_INT64, (char *)v, 0, t->dtype, at(t, off), 0, 1);
  return ND_OK;
}

nd_status nd_set(nd_err *e, const nd_tensor *t, const int64_t *idx,
                 double v) {
  int64_t off;
  if (locate(e, "set", t, idx, &off)) return e->code;
  nd_store(t, off, ND_FLOAT64, &v);
  return ND_OK;
}

nd_status nd_set_i64(nd_err *e, const nd_tensor *t, const int64_t *idx,
                     int64_t v) {
  int64_t off;
  if (locate(e, "set", t, idx, &off)) return e->code;
  nd_store(t, off, ND_INT64, &v);
  return ND_OK;
}
