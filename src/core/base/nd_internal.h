/* Internal to nd: what the C core and the Lua binding share beyond the
 * public headers (include/), which carry the public API only. Never
 * installed; core.h and the binding's lnd.h include it.
 *
 * Everything nd compiles is hidden (-fvisibility=hidden) but the
 * declarations of the public headers, which push default visibility, and
 * what ND_EXPORT marks: the internal functions the glue library calls in
 * libnd.so (libnd_<lua>.so is the binding linked against libnd.so: one
 * allocator hook, one block cache, one thread pool in a process) and the
 * Lua entry points looked up by name (luaopen_nd_testing). The check that
 * make test runs (tools/check-exports.sh) allows nothing else. What the
 * binding needs that holds no state is an inline function here instead,
 * compiled into the binding. */
#ifndef ND_INTERNAL_H
#define ND_INTERNAL_H

#include "nd.h"
#include <math.h>
#include <string.h> /* nd_head_copy */

#define ND_EXPORT __attribute__((visibility("default")))

/* A block of nbytes (16-aligned) from the current allocator hook, for the
 * binding's tensor headers and wrap's owner anchors (the block cache with
 * the default allocator); NULL when it fails. Give it back with
 * (*free_fn)(p, nbytes, *ud). */
ND_EXPORT void *nd_hook_alloc(size_t nbytes, nd_free_fn *free_fn, void **ud);

/* The fused updates of nd.h (nd_addmm ...: out = beta * c + alpha *
 * product): X(name) each, for the core's entries (kernels/matmul.c) and the
 * binding's functions and rows (src/lua/lmatmul.c, lfcall.c). */
#define ND_FUSED_UPDATES(X) X(addmm) X(addmv) X(addr) X(baddbmm) X(addbmm)

/* A fourth mode of the elementwise ops (nd.h's ND_NEW, ND_OUT,
 * ND_INPLACE): the new result's dtype, dims and strides into out, as
 * ND_NEW would make them, nothing allocated. When out comes with a
 * storage (the caller's scratch) that holds the result, it is computed
 * there too (at offset 0) and out keeps it; else out's storage is left
 * NULL. The LuaJIT fast paths make small results with it
 * (src/lua/lffi.c), so the promotion and layout rules stay C's. */
enum { ND_SHAPE = ND_INPLACE + 1 };

/* New results into a caller's scratch, for the LuaJIT fast paths' small
 * results of any core function (src/lua/lfcall.c): while slot k (0..2)
 * holds the header out and the storage s, a result the core allocates
 * into out takes s (a reference, and its bytes from the start) instead of
 * a new storage when it fits (else it gets its own, as always); every
 * other allocation is untouched. The slots are the calling
 * thread's; out NULL empties slot k. So the core keeps every rule of the
 * result (dtype, dims, strides) and the caller copies a small one's bytes
 * or adopts a bigger one's storage. */
ND_EXPORT void nd_result_into(int k, const nd_tensor *out, nd_storage *s);

/* The element at off (in elements from the storage's start) set to the
 * value at v, of dtype sdt, converted as every copy converts: nd_set's
 * write, and the LuaJIT fast paths' (src/lua/lffi.c). */
ND_EXPORT void nd_store(const nd_tensor *t, int64_t off, int sdt,
                        const void *v);

/* The scalar rule, in one place for the binding (ndL_integral) and the
 * LuaJIT fast paths (through the binding's ffi_api): a number that is
 * whole and within int64 is written as an integer -- exact in every
 * integer dtype, wrapping into narrower ones like every integer
 * conversion -- and any other as a double; -0.0 stays a double, since an
 * integer would lose its sign (bool * -0.0 is -0.0). */
static inline int nd_whole(double d, int64_t *v) {
  if (!(d >= -0x1p63 && d < 0x1p63)) return 0; /* NaN too */
  int64_t i = (int64_t)d; /* in range: truncates, no floor() call */
  if ((double)i != d || (i == 0 && signbit(d))) return 0;
  *v = i;
  return 1;
}
/* A number as an elementwise operand (a weak scalar: no tensor). */
static inline void nd_operand_number(nd_operand *o, double d) {
  o->t = NULL;
  if (nd_whole(d, &o->i)) {
    o->dtype = ND_INT64;
  } else {
    o->dtype = ND_FLOAT64;
    o->f = d;
  }
}
/* Where an nd_operand's scalar is, for nd_convert. */
static inline const void *nd_scalar_bits(const nd_operand *s) {
  return s->dtype == ND_FLOAT64 ? (const void *)&s->f : (const void *)&s->i;
}
/* The element at off (nd_store's) written with a number by that rule and
 * checked by nd_scalar_fits: set's write, tensor{...}'s and the fast
 * paths'. */
ND_EXPORT nd_status nd_store_scalar(nd_err *e, const nd_tensor *t,
                                    int64_t off, const nd_operand *s);
static inline nd_status nd_store_number(nd_err *e, const nd_tensor *t,
                                        int64_t off, double d) {
  nd_operand s;
  nd_operand_number(&s, d);
  return nd_store_scalar(e, t, off, &s);
}
/* fill_ with a number, by the same rules. */
static inline nd_status nd_fill_number(nd_err *e, const nd_tensor *t,
                                       double d) {
  nd_operand s;
  nd_operand_number(&s, d);
  return nd_fill_scalar(e, t, &s);
}
/* The least and greatest values of an integer or bool dtype (hi as a
 * uint64: 2^64 - 1 is no int64). */
ND_EXPORT void nd_dtype_bounds(int dtype, int64_t *lo, uint64_t *hi);

/* A header's fields and sizes/strides: the first four dims (fixed-size
 * copies, inlined) when that covers ndim, else all of them. A whole
 * nd_tensor is 280 bytes, mostly unused dims, and each view copies
 * headers twice (a loop over ndim became memcpy calls). */
static inline void nd_head_copy(nd_tensor *d, const nd_tensor *s) {
  if (d == s) return;
  d->storage = s->storage;
  d->offset = s->offset;
  /* dtype and ndim read apart: a view has just written ndim alone, and
   * one 8-byte load over both (what the compiler makes of the pair)
   * waits for that store to retire -- half of a view's time in C. */
  int32_t dtype = s->dtype, ndim = s->ndim;
  __asm__("" : "+r"(ndim));
  d->dtype = dtype;
  d->ndim = ndim;
  if (ndim <= 4) {
    memcpy(d->size, s->size, 4 * sizeof(int64_t));
    memcpy(d->stride, s->stride, 4 * sizeof(int64_t));
  } else {
    memcpy(d->size, s->size, sizeof d->size);
    memcpy(d->stride, s->stride, sizeof d->stride);
  }
}

#endif
