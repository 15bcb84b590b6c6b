/* Tensor lifecycle: creating, wrapping, sharing and releasing headers. */
#include "core.h"
#include <stdatomic.h>
#include <stdlib.h>

/* initial-exec: read at every allocation, without __tls_get_addr (the
 * library's few bytes of static TLS are what glibc keeps for dlopen) */
static _Thread_local __attribute__((tls_model("initial-exec"))) struct {
  const nd_tensor *out;
  nd_storage *s;
} into[3];

void nd_result_into(int k, const nd_tensor *out, nd_storage *s) {
  if (k < 0 || k > 2) return;
  into[k].out = out;
  into[k].s = out ? s : NULL;
}

/* nd_count_allocations: a relaxed load per allocation while off. */
static atomic_int counting;
static atomic_llong counted, counted_bytes;

void nd_count_allocations(int on) {
  if (on) {
    atomic_store_explicit(&counted, 0, memory_order_relaxed);
    atomic_store_explicit(&counted_bytes, 0, memory_order_relaxed);
  }
  atomic_store_explicit(&counting, on != 0, memory_order_relaxed);
}

void nd_allocations(int64_t *count, int64_t *bytes) {
  if (count) *count = atomic_load_explicit(&counted, memory_order_relaxed);
  if (bytes) *bytes = atomic_load_explicit(&counted_bytes, memory_order_relaxed);
}

/* The scratch of a slot of nd_result_into that names out, or NULL. */
static nd_storage *scratch_for(const nd_tensor *out) {
  for (int k = 0; k < 3; k++)
    if (into[k].out == out && into[k].s) return into[k].s;
  return NULL;
}

nd_status nd_alloc_tensor(nd_err *e, nd_tensor *out, int dtype, int ndim,
                          const int64_t *size, bool zero) {
  int64_t numel = 1, nbytes = 0;
  char b[ND_SIZES_BUF];
  nd_head_unset(out);
  if (nd_check_dtype(e, "empty", dtype) || nd_check_ndim(e, "empty", ndim))
    return e->code;
  /* Checked here, not only in nd_contiguous_strides, so that messages
   * name "empty" (the binding renames it to the calling constructor). */
  for (int i = 0; i < ndim; i++)
    if (size[i] < 0)
      return nd_fail(e, ND_EINVAL, "empty: negative size %lld in %s",
                     (long long)size[i], nd_fmt_sizes(b, sizeof b, ndim, size));
  for (int i = 0; i < ndim; i++)
    if (size[i] == 0) numel = 0; /* empty: no bytes, however big the rest */
  for (int i = 0; i < ndim && numel; i++)
    if (nd_mul_ovf(numel, size[i], &numel) ||
        nd_mul_ovf(numel, nd_dtype_size(dtype), &nbytes))
      return nd_fail(e, ND_EOVERFLOW, "empty: size %s of %s has more bytes "
                     "than an int64 can count",
                     nd_fmt_sizes(b, sizeof b, ndim, size),
                     nd_dtype_name(dtype));
  if (nd_contiguous_strides(e, ndim, size, out->stride, &numel))
    return e->code;
  nbytes = numel * nd_dtype_size(dtype); /* bounded by the check above */
  nd_storage *s = scratch_for(out);
  if (s && nbytes <= s->nbytes) {
    nd_storage_retain(s);
    if (zero && nbytes) memset(s->data, 0, (size_t)nbytes);
  } else if (nd_storage_new(e, &s, nbytes, zero)) {
    return e->code;
  } else if (atomic_load_explicit(&counting, memory_order_relaxed)) {
    atomic_fetch_add_explicit(&counted, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&counted_bytes, nbytes, memory_order_relaxed);
  }
  out->storage = s;
  out->dtype = dtype;
  out->ndim = ndim;
  if (ndim) memcpy(out->size, size, sizeof(int64_t) * (size_t)ndim);
  return ND_OK;
}

nd_status nd_empty(nd_err *e, nd_tensor *out, int dtype, int ndim,
                   const int64_t *size) {
  if (ndim > 0 && !size) {
    memset(out, 0, sizeof *out);
    return nd_fail(e, ND_EINVAL, "empty: size is NULL for %d dims", ndim);
  }
  return nd_alloc_tensor(e, out, dtype, ndim, size, false);
}

nd_status nd_zeros(nd_err *e, nd_tensor *out, int dtype, int ndim,
                   const int64_t *size) {
  return nd_alloc_tensor(e, out, dtype, ndim, size, true);
}

nd_status nd_empty_like(nd_err *e, nd_tensor *out, const nd_tensor *a,
                        int dtype) {
  /* Rank the dims of a by |stride| (stable, outermost first), allocate
   * compactly in that order, then map the strides back. */
  int n = a->ndim, perm[ND_MAX_DIMS];
  int64_t psize[ND_MAX_DIMS], pstride[ND_MAX_DIMS];
  for (int i = 0; i < n; i++) perm[i] = i;
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0; j--) {
      int64_t sa = llabs(a->stride[perm[j - 1]]), sb = llabs(a->stride[perm[j]]);
      if (a->size[perm[j - 1]] == 1 || a->size[perm[j]] == 1 || sa >= sb) break;
      int t = perm[j]; perm[j] = perm[j - 1]; perm[j - 1] = t;
    }
  for (int i = 0; i < n; i++) psize[i] = a->size[perm[i]];
  if (nd_alloc_tensor(e, out, dtype, n, a->size, false)) return e->code;
  nd_contiguous_strides(e, n, psize, pstride, NULL);
  for (int i = 0; i < n; i++) out->stride[perm[i]] = pstride[i];
  return ND_OK;
}

static void keep(void *data, void *ctx) { (void)data; (void)ctx; }

nd_status nd_wrap(nd_err *e, nd_tensor *out, void *data, int64_t nbytes,
                  int dtype, int ndim, const int64_t *size,
                  const int64_t *stride,
                  void (*release)(void *data, void *ctx), void *ctx) {
  memset(out, 0, sizeof *out);
  if (nd_check_dtype(e, "wrap", dtype) || nd_check_ndim(e, "wrap", ndim))
    return e->code;
  if (nbytes < 0)
    return nd_fail(e, ND_EINVAL, "wrap: negative byte count %lld",
                   (long long)nbytes);
  if (!data && nbytes > 0)
    return nd_fail(e, ND_EINVAL, "wrap: data is NULL but nbytes is %lld",
                   (long long)nbytes);
  if (ndim > 0 && !size)
    return nd_fail(e, ND_EINVAL, "wrap: size is NULL for %d dims", ndim);
  nd_tensor t = {NULL, 0, dtype, ndim, {0}, {0}};
  if (ndim) memcpy(t.size, size, sizeof(int64_t) * (size_t)ndim);
  if (stride) {
    if (ndim) memcpy(t.stride, stride, sizeof(int64_t) * (size_t)ndim);
  } else if (nd_contiguous_strides(e, ndim, t.size, t.stride, NULL)) {
    return e->code;
  }
  if (nd_check_extent(e, "wrap", nbytes / nd_dtype_size(dtype), ndim, t.size,
                      t.stride, 0))
    return e->code;
  nd_storage *h = nd_storage_header();
  if (!h) return nd_fail(e, ND_ENOMEM, "wrap: not enough memory");
  /* release == NULL marks allocator-owned storage (storage.c). */
  h->data = data;
  h->nbytes = nbytes;
  h->refs = 1;
  h->release = release ? release : keep;
  h->ctx = ctx;
  t.storage = h;
  *out = t;
  return ND_OK;
}

int nd_is_readonly(const nd_tensor *t) { return nd_readonly(t); }
int nd_set_readonly(nd_tensor *t, int on) {
  if (!t || !t->storage || (!on && t->storage->readonly == 2)) return -1;
  if (t->storage->readonly != 2) t->storage->readonly = on != 0;
  return 0;
}

void nd_share(nd_tensor *out, const nd_tensor *src) {
  nd_storage_retain(src->storage);
  nd_head_copy(out, src);
}

void nd_release(nd_tensor *t) {
  nd_storage *s = t->storage;
  nd_head_unset(t);
  nd_storage_release(s);
}
