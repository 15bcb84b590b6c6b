/* Reading or writing one element, converted by nd_convert as every copy
 * converts: element access, so a kernel, not part of base/tensor.c. */
#include "kernels.h"
#include <float.h>
#include <math.h>
#include <stdio.h>

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

/* The rule for a value written into an element (set, fill_, full,
 * t[i] = v, masked_fill_ ...), PyTorch's: it must be a value of the dtype.
 * An integer must lie in an integer dtype's range (no wrapping: -1 into
 * uint8 raises); a fractional number truncates toward zero first (2.7
 * into int32 is 2); NaN and infinities go into floats only; a finite
 * number beyond float32's range does not go into float32; anything goes
 * into bool (nonzero is true). float16 and bfloat16 likewise: a finite
 * value beyond their largest (65504, 0x1.fep127) raises, as PyTorch's
 * fill_; others round to nearest-even. */
nd_status nd_scalar_fits(nd_err *e, const char *fn, int dt,
                         const nd_operand *s) {
  char k = nd_dtype_kind(dt), buf[48];
  int fits = 1;
  if (k == 'i' || k == 'u') {
    int64_t lo;
    uint64_t hi;
    nd_dtype_bounds(dt, &lo, &hi);
    if (s->dtype == ND_FLOAT64) {
      double t = trunc(s->f); /* NaN and infinities fail both tests */
      fits = t >= (double)lo && t < (double)hi + 1.0; /* hi + 1 rounds up */
    } else if (s->dtype == ND_UINT64) {
      fits = (uint64_t)s->i <= hi;
    } else {
      fits = s->i >= lo && (s->i < 0 || (uint64_t)s->i <= hi);
    }
  } else if (dt == ND_FLOAT32 && s->dtype == ND_FLOAT64) {
    fits = !isfinite(s->f) || fabs(s->f) <= FLT_MAX;
  } else if (nd_is_half(dt)) {
    double top = nd_half_max(dt),
           v = s->dtype == ND_FLOAT64 ? s->f
               : s->dtype == ND_UINT64 ? (double)(uint64_t)s->i
                                       : (double)s->i;
    fits = !isfinite(v) || fabs(v) <= top;
  }
  if (fits) return ND_OK;
  if (s->dtype == ND_FLOAT64)
    snprintf(buf, sizeof buf, "%.17g", s->f);
  else if (s->dtype == ND_UINT64)
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)s->i);
  else
    snprintf(buf, sizeof buf, "%lld", (long long)s->i);
  return nd_fail(e, ND_EINVAL,
                 "%s: value %s cannot be converted to dtype %s without "
                 "overflow", fn, buf, nd_dtype_name(dt));
}

nd_status nd_store_scalar(nd_err *e, const nd_tensor *t, int64_t off,
                          const nd_operand *s) {
  if (nd_scalar_fits(e, "set", t->dtype, s)) return e->code;
  nd_store(t, off, s->dtype, nd_scalar_bits(s));
  return ND_OK;
}

nd_status nd_set_scalar(nd_err *e, const nd_tensor *t, const int64_t *idx,
                        const nd_operand *s) {
  int64_t off;
  if (locate(e, "set", t, idx, &off)) return e->code;
  return nd_store_scalar(e, t, off, s);
}

nd_status nd_set(nd_err *e, const nd_tensor *t, const int64_t *idx,
                 double v) {
  nd_operand s;
  nd_operand_number(&s, v);
  return nd_set_scalar(e, t, idx, &s);
}

nd_status nd_set_i64(nd_err *e, const nd_tensor *t, const int64_t *idx,
                     int64_t v) {
  nd_operand s = {NULL, ND_INT64, 0, v};
  return nd_set_scalar(e, t, idx, &s);
}
