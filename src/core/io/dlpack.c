/* DLPack exchange: nd headers to DLManagedTensor and back, zero-copy. */
#include "nd_dlpack.h"
#include "core.h"

/* nd dtype <-> DLPack (code, bits): from its kind and size. */
static DLDataType dl_type(int d) {
  char k = nd_dtype_kind(d);
  DLDataType t = {d == ND_BFLOAT16 ? kDLBfloat : k == 'f' ? kDLFloat
                  : k == 'i' ? kDLInt
                  : k == 'u' ? kDLUInt : kDLBool,
                  (uint8_t)(8 * nd_dtype_size(d)), 1};
  return t;
}

static int dtype_from_dl(DLDataType t) {
  if (t.lanes != 1) return -1;
  for (int d = 0; d < ND_NDTYPES; d++)
    if (dl_type(d).code == t.code && dl_type(d).bits == t.bits) return d;
  return -1;
}

/* What an exported DLManagedTensor points into: one block, freed by its
 * deleter together with the reference it holds. */
typedef struct export_block {
  DLManagedTensor m;
  nd_tensor t;
  int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS];
} export_block;

static void export_deleter(DLManagedTensor *m) {
  export_block *b = m->manager_ctx;
  nd_release(&b->t);
  nd_scratch_free(b);
}

nd_status nd_to_dlpack(nd_err *e, const nd_tensor *t, DLManagedTensor **out) {
  *out = NULL;
  if (!t || !t->storage)
    return nd_fail(e, ND_EINVAL, "to_dlpack: tensor is unset or released");
  if (nd_readonly(t)) /* the legacy DLManagedTensor cannot say so */
    return nd_fail(e, ND_EINVAL, "to_dlpack: the tensor is read-only (a "
                   "DLManagedTensor has no read-only flag); clone() it");
  export_block *b = nd_scratch_alloc(e, "to_dlpack", 1, sizeof *b, true);
  if (!b) return e->code;
  nd_share(&b->t, t);
  for (int i = 0; i < t->ndim; i++) {
    b->shape[i] = t->size[i];
    b->strides[i] = t->stride[i];
  }
  DLTensor *d = &b->m.dl_tensor;
  d->data = nd_data(t);
  d->device = (DLDevice){kDLCPU, 0};
  d->ndim = t->ndim;
  d->dtype = dl_type(t->dtype);
  d->shape = b->shape;
  d->strides = b->strides;
  d->byte_offset = 0;
  b->m.manager_ctx = b;
  b->m.deleter = export_deleter;
  *out = &b->m;
  return ND_OK;
}

static void no_release(void *data, void *ctx) {
  (void)data;
  (void)ctx;
}

static void import_release(void *data, void *ctx) {
  (void)data;
  DLManagedTensor *m = ctx;
  if (m->deleter) m->deleter(m);
}

nd_status nd_from_dlpack(nd_err *e, nd_tensor *out, DLManagedTensor *m) {
  memset(out, 0, sizeof *out);
  if (!m) return nd_fail(e, ND_EINVAL, "from_dlpack: tensor is NULL");
  const DLTensor *d = &m->dl_tensor;
  if (d->device.device_type != kDLCPU && d->device.device_type != kDLCUDAHost)
    return nd_fail(e, ND_EINVAL,
                   "from_dlpack: device type %d is not CPU memory",
                   (int)d->device.device_type);
  int dtype = dtype_from_dl(d->dtype);
  if (dtype < 0)
    return nd_fail(e, ND_EINVAL,
                   "from_dlpack: dtype (code %u, bits %u, lanes %u) is not "
                   "one of float32, float64, int32, int64, uint8, bool",
                   d->dtype.code, d->dtype.bits, d->dtype.lanes);
  if (nd_check_ndim(e, "from_dlpack", d->ndim)) return e->code;
  if (d->ndim > 0 && !d->shape)
    return nd_fail(e, ND_EINVAL, "from_dlpack: shape is NULL for %d dims",
                   d->ndim);
  int64_t size[ND_MAX_DIMS], stride[ND_MAX_DIMS], numel = 1;
  for (int i = 0; i < d->ndim; i++) {
    size[i] = d->shape[i];
    if (size[i] < 0)
      return nd_fail(e, ND_EINVAL, "from_dlpack: negative size %lld of dim %d",
                     (long long)size[i], i + e->base);
  }
  if (d->strides) {
    memcpy(stride, d->strides, sizeof(int64_t) * (size_t)d->ndim);
  } else if (nd_contiguous_strides(e, d->ndim, size, stride, &numel)) {
    return e->code;
  }
  /* The span of reachable elements, relative to the first one: lo <= 0
   * when strides are negative. Overflow-checked like every extent. */
  int64_t lo = 0, hi = 0, esize = nd_dtype_size(dtype);
  for (int i = 0; i < d->ndim; i++) {
    if (size[i] == 0) {
      lo = 0;
      hi = -1;
      break;
    }
    int64_t reach;
    if (nd_mul_ovf(size[i] - 1, stride[i], &reach) ||
        nd_add_ovf(reach < 0 ? lo : hi, reach, reach < 0 ? &lo : &hi))
      return nd_fail(e, ND_EOVERFLOW,
                     "from_dlpack: the extent of the strides overflows");
  }
  int64_t count = hi - lo + 1, nbytes;
  if (nd_mul_ovf(count, esize, &nbytes) ||
      d->byte_offset > (uint64_t)INT64_MAX)
    return nd_fail(e, ND_EOVERFLOW,
                   "from_dlpack: the byte extent does not fit in int64");
  char *first = (char *)d->data + d->byte_offset;
  if (!d->data && count > 0)
    return nd_fail(e, ND_EINVAL, "from_dlpack: data is NULL");
  char *base = count > 0 ? first + lo * esize : first;
  /* One flat storage over exactly the reachable bytes, then the strided
   * header on it: nothing outside the span is ever reachable. */
  nd_tensor flat = ND_UNSET;
  if (nd_wrap(e, &flat, base, nbytes, dtype, 1, &count, NULL, import_release,
              m))
    return e->code;
  nd_status s = nd_as_strided(e, out, &flat, d->ndim, size, stride,
                              count > 0 ? -lo : 0);
  if (s) {
    /* Cannot happen for the span computed above; give m back unowned. */
    flat.storage->release = no_release;
  }
  nd_release(&flat);
  return s;
}
