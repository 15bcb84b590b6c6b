/* Internal to the C core: shared helpers, never seen by the binding. */
#ifndef ND_CORE_H
#define ND_CORE_H

#include "nd.h"
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

#define ND_ALIGN 64

/* Kernels may be multiversioned (target_clones: one IFUNC per kernel,
 * resolved at load time by __builtin_cpu_supports) on x86-64, except in
 * sanitizer builds: ASan's and TSan's runtimes are not up yet when the
 * dynamic loader runs the resolvers (a TSan build crashed at load). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ND_NO_IFUNC 1
#endif
#endif
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__) && !defined(ND_NO_IFUNC)
#define ND_IFUNC 1
#else
#define ND_IFUNC 0
#endif

/* Fill e and return its code; every failure goes through here. */
nd_status nd_fail(nd_err *e, nd_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* e's shared-path message ("empty: ..." or out of memory) renamed to fn;
 * returns e->code. */
nd_status nd_err_as(nd_err *e, const char *fn);
/* e's message with its leading "name:" replaced by fn (for a function
 * that failed inside another entry point); returns e->code. */
nd_status nd_err_rename(nd_err *e, const char *fn);

/* Overflow-checked int64 arithmetic: nonzero on overflow. */
static inline int nd_mul_ovf(int64_t a, int64_t b, int64_t *r) {
  return __builtin_mul_overflow(a, b, r);
}
static inline int nd_add_ovf(int64_t a, int64_t b, int64_t *r) {
  return __builtin_add_overflow(a, b, r);
}


/* A header's fields and sizes/strides: the first four dims (fixed-size
 * copies, inlined) when that covers ndim, else all of them. A whole
 * nd_tensor is 280 bytes, mostly unused dims, and each view copies
 * headers twice (a loop over ndim became memcpy calls). */
static inline void nd_head_copy(nd_tensor *d, const nd_tensor *s) {
  if (d == s) return;
  d->storage = s->storage;
  d->offset = s->offset;
  d->dtype = s->dtype;
  d->ndim = s->ndim;
  if (s->ndim <= 4) {
    memcpy(d->size, s->size, 4 * sizeof(int64_t));
    memcpy(d->stride, s->stride, 4 * sizeof(int64_t));
  } else {
    memcpy(d->size, s->size, sizeof d->size);
    memcpy(d->stride, s->stride, sizeof d->stride);
  }
}

/* Unset: no storage, 0-d. The dims are left as they were: nothing reads
 * past ndim, and clearing all 280 bytes was a tenth of nd.empty(3). */
static inline void nd_head_unset(nd_tensor *t) {
  t->storage = NULL;
  t->offset = 0;
  t->dtype = 0;
  t->ndim = 0;
}

/* Allocation through the hook; nd_storage_new keeps `nbytes` in s. */
nd_status nd_storage_new(nd_err *e, nd_storage **out, int64_t nbytes,
                         bool zero);
/* A zeroed header for wrapped storage, from the allocator hook (NULL when
 * it fails); nd_storage_release frees it. */
nd_storage *nd_storage_header(void);
/* Unset out, ndim/size set, row-major strides, fresh storage. */
nd_status nd_alloc_tensor(nd_err *e, nd_tensor *out, int dtype, int ndim,
                          const int64_t *size, bool zero);
/* A fresh tensor laid out as PyTorch lays out an elementwise result over
 * the n operands (already broadcast to size; result_layout.c). */
nd_status nd_alloc_layout(nd_err *e, nd_tensor *out, int dtype, int ndim,
                          const int64_t *size, int n,
                          const nd_tensor *const *ops);
/* Checks shared by the constructors. */
nd_status nd_check_dtype(nd_err *e, const char *fn, int dtype);
nd_status nd_check_ndim(nd_err *e, const char *fn, int ndim);
nd_status nd_check_dim(nd_err *e, const char *fn, int dim, int ndim);
/* All elements reachable from (size, stride, offset) lie in [0, avail). */
nd_status nd_check_extent(nd_err *e, const char *fn, int64_t avail, int ndim,
                          const int64_t *size, const int64_t *stride,
                          int64_t offset);

static inline char *nd_ptr(const nd_tensor *t) {
  return (char *)t->storage->data + t->offset * nd_dtype_size(t->dtype);
}

/* Element conversion used by copies and kernels. Floats to integers
 * truncate toward zero and saturate; NaN becomes 0 (no C UB). Integers to
 * narrower integers wrap (two's complement), as PyTorch's casts do. */
static inline int64_t nd_f2i(double v, int64_t lo, int64_t hi) {
  if (!(v == v)) return 0;
  if (v <= (double)lo) return lo;
  if (v >= (double)hi) return hi; /* (double)INT64_MAX rounds up to 2^63 */
  return (int64_t)v;
}

/* Strided iteration: operands share one shape; dims are sorted so the
 * first operand walks memory forward in its innermost dim, and dims that
 * are contiguous with each other in every operand are merged. */
#define ND_ITER_MAXOPS 4
typedef struct nd_iter {
  int nops, ndim;                            /* dims: 0 is innermost */
  int64_t size[ND_MAX_DIMS];
  int64_t stride[ND_ITER_MAXOPS][ND_MAX_DIMS]; /* bytes */
  char *data[ND_ITER_MAXOPS];
} nd_iter;
/* ops[0] decides the order (the output). All must have `ndim`/`size`. */
void nd_iter_init(nd_iter *it, int nops, const nd_tensor *const *ops);
/* The inner loop: n elements, data[k] advancing by stride[k] bytes. */
typedef void (*nd_loop_fn)(char **data, const int64_t *stride, int64_t n,
                           void *ctx);
/* Calls fn over the outer dims [from, to) of a flat outer index space;
 * nd_iter_outer() is that space's size. Used to split work by threads. */
int64_t nd_iter_outer(const nd_iter *it);
void nd_iter_run(const nd_iter *it, nd_loop_fn fn, void *ctx, int64_t from,
                 int64_t to);
/* Removes dim d from the walk; its size and byte strides (one per operand)
 * go to the caller's kernel, which loops over it itself. */
void nd_iter_take(nd_iter *it, int d, int64_t *size, int64_t *stride);
/* Makes dim d the innermost (the one nd_iter_run's fn loops over). */
void nd_iter_inner(nd_iter *it, int d);

/* Blocked transposing copy of a rows x cols matrix of esize-byte elements:
 * dst[i*dld + j] = src[j*sld + i] (strides in elements). */
void nd_transpose_copy(void *dst, const void *src, int64_t rows,
                       int64_t cols, int64_t dld, int64_t sld, int esize);

/* ---- threads (threads.c) and elementwise internals ---- */
/* fn(ctx, lo, hi) over [0, n) split into up to nd_get_num_threads()
 * contiguous ranges of at least `grain` items; inline when one range. */
typedef void (*nd_task_fn)(void *ctx, int64_t lo, int64_t hi);
void nd_parallel_for(int64_t n, int64_t grain, nd_task_fn fn, void *ctx);
/* nd_iter_run over the flat element range [from, to) (dim 0 fastest). */
void nd_iter_run_elems(const nd_iter *it, nd_loop_fn fn, void *ctx,
                       int64_t from, int64_t to);
/* Convert n elements between dtypes (convert.c): floats to integers
 * saturate, integers wrap, anything nonzero is true. Byte strides. */
void nd_convert(int ddt, char *d, int64_t dst, int sdt, const char *s,
                int64_t sst, int64_t n);
/* Broadcast shape of n tensors into size/ndim, or an error naming fn and
 * the shapes. */
nd_status nd_broadcast_shape(nd_err *e, const char *fn, int n,
                             const nd_tensor *const *ts, int *ndim,
                             int64_t *size);

#endif
