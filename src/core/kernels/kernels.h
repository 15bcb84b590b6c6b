/* The kernel layer (kernels/): the iteration engine, threads, dtype
 * conversion and transposing copies every kernel shares. Sees shape/ and
 * base/. */
#ifndef ND_KERNELS_H
#define ND_KERNELS_H
#include "shape.h"

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

/* float16 / bfloat16 around float32 functions (half_adapt.c): *w becomes
 * a float32 copy of t; r's results go into out (NULL: dropped) as dtype dt
 * when r is float32, as they are otherwise, and r is released. Errors
 * under fn's name. */
nd_status nd_half_widen(nd_err *e, const char *fn, nd_tensor *w,
                        const nd_tensor *t);
nd_status nd_half_narrow(nd_err *e, const char *fn, nd_tensor *out,
                         nd_tensor *r, int dt);

/* Blocked transposing copy of a rows x cols matrix of esize-byte elements:
 * dst[i*dld + j] = src[j*sld + i] (strides in elements). */
void nd_transpose_copy(void *dst, const void *src, int64_t rows,
                       int64_t cols, int64_t dld, int64_t sld, int esize);

/* ---- threads (threads.c) ---- */
/* fn(ctx, lo, hi) over [0, n) split into up to nd_get_num_threads()
 * contiguous ranges of at least `grain` items; inline when one range. */
typedef void (*nd_task_fn)(void *ctx, int64_t lo, int64_t hi);
void nd_parallel_for(int64_t n, int64_t grain, nd_task_fn fn, void *ctx);
/* nd_iter_run over the flat element range [from, to) (dim 0 fastest). */
void nd_iter_run_elems(const nd_iter *it, nd_loop_fn fn, void *ctx,
                       int64_t from, int64_t to);
/* dst = src, of one shape (src's strides may be 0 or negative), for a
 * caller that knows they share no element -- regions of one result apart
 * (pad.c) -- so nd_copy's overlap test, which cannot tell interleaved
 * regions of one buffer apart and would copy src first, is skipped. */
void nd_copy_apart(const nd_tensor *dst, const nd_tensor *src);
/* Convert n elements between dtypes (convert.c): floats to integers
 * saturate, integers wrap, anything nonzero is true. Byte strides. */
void nd_convert(int ddt, char *d, int64_t dst, int sdt, const char *s,
                int64_t sst, int64_t n);

/* Bytes of the accumulator tensor nd_reduce(op, t, dims) allocates
 * besides its result (0: none; min/max of all elements excepted). For
 * plans that report what a call allocates (einsum's). */
int64_t nd_reduce_acc_bytes(int op, const nd_tensor *t, int ndims,
                            const int *dims);

#endif
