/* Internal to the C core, its bottom layer (base/): errors, overflow
 * checks, headers, storage and the checks that make a header; every layer
 * above includes it. Never seen by the binding. */
#ifndef ND_CORE_H
#define ND_CORE_H

#include "nd.h"
#include "nd_internal.h"
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
/* A kernel built once per ISA listed (GCC/clang target_clones), the CPU's
 * best picked at load time; a single plain build where ND_IFUNC is off.
 * Each file lists the ISAs its loops gain from. */
#if ND_IFUNC
#define ND_CLONES(...) __attribute__((target_clones(__VA_ARGS__)))
#else
#define ND_CLONES(...)
#endif

/* float16 / bfloat16 (half.c): the compute dtype of a dtype (float32 for
 * the two stored as bits, itself otherwise); correctly rounded conversions
 * from double and 64-bit integers (bf nonzero: to bfloat16); contiguous
 * bulk conversions. */
static inline int nd_is_half(int dt) {
  return dt == ND_FLOAT16 || dt == ND_BFLOAT16;
}
static inline int nd_compute_dtype(int dt) {
  return nd_is_half(dt) ? ND_FLOAT32 : dt;
}
/* The largest finite float16 / bfloat16. */
static inline double nd_half_max(int dt) {
  return dt == ND_FLOAT16 ? 65504.0 : 0x1.fep127;
}
uint16_t nd_double_to_half(double d);
uint16_t nd_double_to_bf16(double d);
uint16_t nd_i64_to_half(int64_t v, int bf);
uint16_t nd_u64_to_half(uint64_t v, int bf);
void nd_half_to_float_n(float *restrict d, const uint16_t *restrict s,
                        int64_t n);
void nd_float_to_half_n(uint16_t *restrict d, const float *restrict s,
                        int64_t n);
void nd_bf16_to_float_n(float *restrict d, const uint16_t *restrict s,
                        int64_t n);
void nd_float_to_bf16_n(uint16_t *restrict d, const float *restrict s,
                        int64_t n);

/* Fill e and return its code; every failure goes through here. The
 * message is named after e->fn when the caller set it. */
nd_status nd_fail(nd_err *e, nd_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A composite's failure inside a function it called, under the
 * composite's name fn -- unless the caller set e->fn, which nd_fail has
 * used already. Returns e->code. */
nd_status nd_err_name(nd_err *e, const char *fn);

/* Overflow-checked int64 arithmetic: nonzero on overflow. */
static inline int nd_mul_ovf(int64_t a, int64_t b, int64_t *r) {
  return __builtin_mul_overflow(a, b, r);
}
static inline int nd_add_ovf(int64_t a, int64_t b, int64_t *r) {
  return __builtin_add_overflow(a, b, r);
}


/* nd_is_readonly's rule, inlined: the per-call paths of tiny ops check
 * their result with it, and the call cost a tenth of a 3-element op. */
static inline int nd_readonly(const nd_tensor *t) {
  return t && t->storage && t->storage->readonly;
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
/* Scratch memory from the allocator hook, as every block nd allocates:
 * count * esize bytes (at least 1; the product is overflow-checked),
 * ND_ALIGN-aligned, zeroed when zero. NULL on failure, with ND_ENOMEM or
 * ND_EOVERFLOW in e (which may be NULL) naming fn. nd_scratch_free takes
 * the pointer alone (NULL is a no-op) and gives the block back to the
 * free function it came from. */
void *nd_scratch_alloc(nd_err *e, const char *fn, int64_t count,
                       int64_t esize, bool zero);
void nd_scratch_free(void *p);
/* Unset out, ndim/size set, row-major strides, fresh storage. */
nd_status nd_alloc_tensor(nd_err *e, nd_tensor *out, int dtype, int ndim,
                          const int64_t *size, bool zero);
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

#endif
