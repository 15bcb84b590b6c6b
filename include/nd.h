/*
 * nd — strided N-dimensional tensors in C, with a Lua binding.
 *
 * A tensor is a small header over a reference-counted storage:
 *
 *     element (i0, i1, ..., in-1) lives at
 *         storage->data + (offset + i0*stride[0] + ... + in-1*stride[n-1]) * element_size
 *
 * Sizes, strides and the offset are int64_t element counts (as PyTorch's).
 * A fresh 2x3 tensor has strides {3, 1}; its transpose is the same storage
 * with sizes {3, 2} and strides {1, 3}. Every view (transpose, narrow,
 * select, expand, ...) only writes a new header: O(1), no element copy.
 * nd_contiguous() is where a compact copy is made.
 *
 * Headers are plain values owned by the caller (on the stack, inside a Lua
 * userdata, in an engine's struct). A header that is in use holds one
 * reference to its storage; nd_release() drops it. A header with
 * storage == NULL is "unset": functions that produce a tensor write into
 * such a header, and on failure leave it unset, so nothing leaks.
 *
 *     nd_err e = {0};
 *     nd_tensor a = ND_UNSET, at = ND_UNSET;
 *     int64_t sz[2] = {2, 3};
 *     if (nd_zeros(&e, &a, ND_FLOAT32, 2, sz) ||
 *         nd_transpose(&e, &at, &a, 0, 1)) { puts(e.msg); ... }
 *     nd_release(&at); nd_release(&a);   // in any order: views share storage
 *
 * The C API counts dims and indices from 0 (the Lua binding from 1).
 * Every function that can fail returns an nd_status and writes a message
 * into the caller's nd_err; nothing aborts or exits on bad input.
 */
#ifndef ND_H
#define ND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
/* nd is built with hidden visibility: what is declared here, its public
 * API, is what libnd exports. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define ND_VERSION "0.1.0"
#define ND_MAX_DIMS 16 /* the largest rank; more is refused with an error */

/* The dtypes, once: X(ENUM, name, C type, kind). Kinds: 'f' float,
 * 'i' signed int, 'u' unsigned int, 'b' bool (one byte, 0 or 1).
 * ND_NATIVE_DTYPES are those C computes in, the ones typed kernels are
 * instantiated for; float16 and bfloat16 are stored as their uint16_t bits
 * and computed in float32 (rounded to nearest-even on store). */
#define ND_DTYPES(X)                     \
  ND_NATIVE_DTYPES(X)                    \
  X(FLOAT16, float16, uint16_t, 'f')     \
  X(BFLOAT16, bfloat16, uint16_t, 'f')
#define ND_NATIVE_DTYPES(X)              \
  X(FLOAT32, float32, float, 'f')        \
  X(FLOAT64, float64, double, 'f')       \
  X(INT32, int32, int32_t, 'i')          \
  X(INT64, int64, int64_t, 'i')          \
  X(UINT8, uint8, uint8_t, 'u')          \
  X(BOOL, bool, uint8_t, 'b')            \
  X(INT8, int8, int8_t, 'i')             \
  X(INT16, int16, int16_t, 'i')          \
  X(UINT16, uint16, uint16_t, 'u')       \
  X(UINT32, uint32, uint32_t, 'u')       \
  X(UINT64, uint64, uint64_t, 'u')

typedef enum nd_dtype {
#define ND_X_ENUM(E, name, T, kind) ND_##E,
  ND_DTYPES(ND_X_ENUM)
#undef ND_X_ENUM
  ND_NDTYPES
} nd_dtype;

typedef enum nd_status {
  ND_OK = 0,
  ND_EINVAL,   /* bad argument: shape, dim, index, dtype ... */
  ND_ENOMEM,   /* allocation failed or the request exceeds physical memory */
  ND_EOVERFLOW,/* a size, extent or byte count does not fit in int64_t */
  ND_EIO       /* file I/O */
} nd_status;

/* Where a failing call explains itself. Zero it before use
 * (`nd_err e = {0};`): `base` and `fn` are inputs. `base` is added to every
 * dim and index a message quotes (0 for C callers, 1 for Lua). `fn`, when
 * set, is the name every message starts with: the function the user
 * called (the Lua binding sets it, so `nd.save` says "save:" even when the
 * copy inside it fails); NULL names the nd function that failed. */
typedef struct nd_err {
  nd_status code;
  int base;
  const char *fn;
  char msg[512];
} nd_err;

typedef struct nd_storage {
  void *data;       /* first byte; read-only field */
  int64_t nbytes;   /* bytes reachable from data */
  long refs;        /* atomically updated reference count */
  void (*release)(void *data, void *ctx); /* NULL: freed with the allocator */
  void *ctx;
  int readonly; /* nonzero: every write is refused (nd_check_writable);
                 * 2: the memory itself cannot be written (a file mapped
                 * "r"), so the flag cannot be cleared */
} nd_storage;

typedef struct nd_tensor {
  nd_storage *storage; /* NULL when the header is unset */
  int64_t offset;      /* in elements, from storage->data */
  int32_t dtype;       /* an nd_dtype */
  int32_t ndim;        /* 0 .. ND_MAX_DIMS; 0 is a scalar of one element */
  int64_t size[ND_MAX_DIMS];
  int64_t stride[ND_MAX_DIMS];
} nd_tensor;

#ifdef __cplusplus
#define ND_UNSET {} /* C++: value-initialised, no missing-initializer warning */
#else
#define ND_UNSET {0}
#endif

/* ---- dtypes ------------------------------------------------------------ */
const char *nd_dtype_name(int dtype);          /* "float32", ... or "?" */
int nd_dtype_from_name(const char *name);      /* -1 when unknown */
int64_t nd_dtype_size(int dtype);              /* bytes per element */
int nd_promote_types(int a, int b); /* tensors': PyTorch's, NumPy's for u16-u64 */
char nd_dtype_kind(int dtype);                 /* 'f' 'i' 'u' 'b' */
/* float16 (IEEE binary16) and bfloat16 bits <-> float: to float exact, from
 * float rounded to nearest-even (overflow gives inf; NaN stays a quiet
 * NaN). Tensors of these dtypes hold uint16_t elements. */
float nd_half_to_float(uint16_t h);
uint16_t nd_float_to_half(float f);
float nd_bf16_to_float(uint16_t b);
uint16_t nd_float_to_bf16(float f);

/* "{2,3,4}" into buf, as error messages quote shapes; ND_SIZES_BUF always
 * suffices. */
#define ND_SIZES_BUF 400
const char *nd_fmt_sizes(char *buf, size_t n, int ndim, const int64_t *v);

/* ---- settings (the only global mutable state) --------------------------- */
/* Allocator hook for host engines. alloc must return memory aligned to
 * `align` (a power of two) or NULL. Pass NULLs to restore the default
 * (posix_memalign, huge pages for large buffers). Each storage remembers
 * the free function it was allocated with, so the hook may change while
 * tensors are alive; it is not synchronised, so change it while no other
 * thread is creating tensors. */
typedef void *(*nd_alloc_fn)(size_t nbytes, size_t align, void *ud);
typedef void (*nd_free_fn)(void *p, size_t nbytes, void *ud);
void nd_set_allocator(nd_alloc_fn alloc, nd_free_fn free, void *ud);
void nd_set_num_threads(int n);  /* OpenBLAS and nd's own kernels */
int nd_get_num_threads(void);
/* Tensor allocations counted, for tests of what a call allocates: while
 * counting is on, every new tensor storage (not wrapped memory, not
 * scratch) adds 1 and its bytes. nd_count_allocations(on) starts (and
 * zeroes) or stops counting; nd_allocations reads the counts. Process-wide,
 * relaxed atomics: count from one thread at a time. */
void nd_count_allocations(int on);
void nd_allocations(int64_t *count, int64_t *bytes);

/* ---- geometry: pure functions on sizes and strides ---------------------- */
int64_t nd_numel(const nd_tensor *t);
int nd_is_contiguous(const nd_tensor *t);     /* PyTorch's rule */
/* Row-major strides for sizes; the element count into *numel. */
nd_status nd_contiguous_strides(nd_err *e, int ndim, const int64_t *size,
                                int64_t *stride, int64_t *numel);
/* Lowest and highest element offset reachable (offset included); for an
 * empty tensor lo = 0, hi = -1. */
void nd_span(const nd_tensor *t, int64_t *lo, int64_t *hi);
/* Nonzero when two distinct index tuples provably reach one element (the
 * rule is in src/core/shape/overlap.c and the README's Guarantees). */
int nd_has_internal_overlap(const nd_tensor *t);
/* ND_OK, or an error from fn when t's elements overlap (no writes then). */
nd_status nd_check_writable(nd_err *e, const char *fn, const nd_tensor *t);
/* Read-only (NumPy's writeable = False): the flag is the storage's, so
 * every view of t shares it; clones and conversions get fresh storage. */
int nd_is_readonly(const nd_tensor *t);
/* 0, or -1 with nothing changed: t unset, or on == 0 for memory that
 * cannot be written (clearing the flag there would let a write fault). */
int nd_set_readonly(nd_tensor *t, int on);
/* Nonzero when the memory spans of a and b intersect. */
int nd_may_overlap(const nd_tensor *a, const nd_tensor *b);
int nd_same_storage(const nd_tensor *a, const nd_tensor *b);
/* Address of the first element (for an empty tensor, where it would be). */
void *nd_data(const nd_tensor *t);

/* ---- lifecycle ------------------------------------------------------------ */
nd_status nd_empty(nd_err *e, nd_tensor *out, int dtype, int ndim,
                   const int64_t *size);
nd_status nd_zeros(nd_err *e, nd_tensor *out, int dtype, int ndim,
                   const int64_t *size);
/* A fresh tensor with a's sizes and dtype, laid out in a's memory order
 * (PyTorch's rule for results of elementwise ops). */
nd_status nd_empty_like(nd_err *e, nd_tensor *out, const nd_tensor *a,
                        int dtype);
/* Wrap host memory without copying: `data` holds `nbytes` bytes; the
 * header gets `size`/`stride` (stride NULL: row-major) and offset 0.
 * release(data, ctx) runs when the last reference goes (it may be NULL).
 * Refused when a reachable element lies outside the nbytes. */
nd_status nd_wrap(nd_err *e, nd_tensor *out, void *data, int64_t nbytes,
                  int dtype, int ndim, const int64_t *size,
                  const int64_t *stride,
                  void (*release)(void *data, void *ctx), void *ctx);
/* out becomes another header on src's storage (retains it); out's sizes
 * and strides past src's ndim are left as they were. */
void nd_share(nd_tensor *out, const nd_tensor *src);
void nd_release(nd_tensor *t); /* drops the reference; leaves t unset */
void nd_storage_retain(nd_storage *s);
void nd_storage_release(nd_storage *s);

/* ---- elements --------------------------------------------------------- */
/* idx has t->ndim 0-based indices, each checked against its size. */
nd_status nd_get(nd_err *e, const nd_tensor *t, const int64_t *idx,
                 double *v);
nd_status nd_get_i64(nd_err *e, const nd_tensor *t, const int64_t *idx,
                     int64_t *v);
nd_status nd_set(nd_err *e, const nd_tensor *t, const int64_t *idx,
                 double v);
nd_status nd_set_i64(nd_err *e, const nd_tensor *t, const int64_t *idx,
                     int64_t v);

/* ---- views: each writes a new header on the same storage into out ------- */
nd_status nd_select(nd_err *e, nd_tensor *out, const nd_tensor *t, int dim,
                    int64_t index);
nd_status nd_narrow(nd_err *e, nd_tensor *out, const nd_tensor *t, int dim,
                    int64_t start, int64_t length);
nd_status nd_transpose(nd_err *e, nd_tensor *out, const nd_tensor *t,
                       int d1, int d2);
nd_status nd_permute(nd_err *e, nd_tensor *out, const nd_tensor *t,
                     const int *perm);
/* sizes may hold -1 (keep); ndim >= t->ndim, new dims lead. */
nd_status nd_expand(nd_err *e, nd_tensor *out, const nd_tensor *t, int ndim,
                    const int64_t *size);
/* sizes may hold one -1 (inferred). Fails when strides cannot express it. */
nd_status nd_view(nd_err *e, nd_tensor *out, const nd_tensor *t, int ndim,
                  const int64_t *size);
/* A view when nd_view succeeds, otherwise a compact row-major copy. */
nd_status nd_reshape(nd_err *e, nd_tensor *out, const nd_tensor *t, int ndim,
                     const int64_t *size);
nd_status nd_squeeze(nd_err *e, nd_tensor *out, const nd_tensor *t, int dim);
nd_status nd_squeeze_all(nd_err *e, nd_tensor *out, const nd_tensor *t);
nd_status nd_unsqueeze(nd_err *e, nd_tensor *out, const nd_tensor *t, int dim);
nd_status nd_flatten(nd_err *e, nd_tensor *out, const nd_tensor *t, int first,
                     int last);
nd_status nd_unfold(nd_err *e, nd_tensor *out, const nd_tensor *t, int dim,
                    int64_t size, int64_t step);
nd_status nd_diagonal(nd_err *e, nd_tensor *out, const nd_tensor *t,
                      int64_t offset, int d1, int d2);
nd_status nd_movedim(nd_err *e, nd_tensor *out, const nd_tensor *t, int src,
                     int dst);
nd_status nd_flip(nd_err *e, nd_tensor *out, const nd_tensor *t, int ndims,
                  const int *dims);
/* Refused when any reachable element lies outside the storage. */
nd_status nd_as_strided(nd_err *e, nd_tensor *out, const nd_tensor *t,
                        int ndim, const int64_t *size, const int64_t *stride,
                        int64_t offset);
/* Slice dim to first, first+step, ... (count elements); step may be < 0. */
nd_status nd_slice(nd_err *e, nd_tensor *out, const nd_tensor *t, int dim,
                   int64_t first, int64_t step, int64_t count);

/* ---- copies ------------------------------------------------------------ */
/* out (unset) becomes t itself when contiguous, else a compact copy. */
nd_status nd_contiguous(nd_err *e, nd_tensor *out, const nd_tensor *t);
nd_status nd_clone(nd_err *e, nd_tensor *out, const nd_tensor *t);
/* A compact row-major copy converted to dtype. */
nd_status nd_to_dtype(nd_err *e, nd_tensor *out, const nd_tensor *t,
                      int dtype);
/* dst[...] = src broadcast to dst's shape, converting dtype; correct when
 * they overlap; refused when dst's elements overlap each other. */
nd_status nd_copy(nd_err *e, const nd_tensor *dst, const nd_tensor *src);
nd_status nd_fill(nd_err *e, const nd_tensor *dst, double v);
nd_status nd_fill_i64(nd_err *e, const nd_tensor *dst, int64_t v);
/* Concatenate n tensors along dim (out unset: allocated). */
nd_status nd_cat(nd_err *e, nd_tensor *out, int n, const nd_tensor *const *ts,
                 int dim);
/* Stack n tensors of one size along a new dim (0..ndim). */
nd_status nd_stack(nd_err *e, nd_tensor *out, int n,
                   const nd_tensor *const *ts, int dim);

/* ---- construction helpers ---------------------------------------------- */
nd_status nd_arange(nd_err *e, nd_tensor *out, int dtype, double start,
                    double stop, double step);
nd_status nd_linspace(nd_err *e, nd_tensor *out, int dtype, double a,
                      double b, int64_t n);
nd_status nd_eye(nd_err *e, nd_tensor *out, int dtype, int64_t n, int64_t m);

/* ---- random (src/core/random/) ---------------------------------------- */
/* A generator is a plain value the caller owns (no global generator
 * exists): xoshiro256** seeded through splitmix64. Each function draws
 * from the generator it is given, in row-major order of the target's
 * indices; the same seed gives the same values on every platform and
 * instruction set (integer generator, exact tables, exact arithmetic).
 * Don't share one generator between threads without a lock. */
typedef struct nd_generator { uint64_t s[4]; } nd_generator;
void nd_generator_seed(nd_generator *g, uint64_t seed);
uint64_t nd_generator_next(nd_generator *g); /* 64 random bits */
/* Fill t (any writable view of a floating dtype): uniform [0, 1),
 * standard normal, uniform [lo, hi) (finite lo <= hi; lo == hi gives lo),
 * normal(mean, std) (std >= 0). */
nd_status nd_rand(nd_err *e, const nd_tensor *t, nd_generator *g);
nd_status nd_randn(nd_err *e, const nd_tensor *t, nd_generator *g);
nd_status nd_uniform(nd_err *e, const nd_tensor *t, nd_generator *g,
                     double lo, double hi);
nd_status nd_normal(nd_err *e, const nd_tensor *t, nd_generator *g,
                    double mean, double std);
/* Fill t (any dtype that holds the range) with integers in [lo, hi). */
nd_status nd_randint(nd_err *e, const nd_tensor *t, nd_generator *g,
                     int64_t lo, int64_t hi);
/* Fill t with 1 (probability p in [0, 1]) or 0. */
nd_status nd_bernoulli(nd_err *e, const nd_tensor *t, nd_generator *g,
                       double p);
/* out (unset) gets p's shape and floating dtype: 1 with probability p[i]. */
nd_status nd_bernoulli_tensor(nd_err *e, nd_tensor *out, nd_generator *g,
                              const nd_tensor *p);
/* out (unset) gets a permutation of 0 .. n-1 (int64). */
nd_status nd_randperm(nd_err *e, nd_tensor *out, nd_generator *g, int64_t n);
/* out (unset) gets n 0-based category indices (int64) per row of the 1-D
 * (k) or 2-D (rows, k) weights probs (finite, >= 0, any dtype; rows need
 * not sum to 1). Without replacement each row needs n non-zero weights. */
nd_status nd_multinomial(nd_err *e, nd_tensor *out, nd_generator *g,
                         const nd_tensor *probs, int64_t n, int replacement);

/* ---- .npy files (src/core/io/npy.c) ------------------------------------------ */
/* Load versions 1.0-3.0, either byte order, C or Fortran order (a Fortran
 * file loads as a column-major tensor, without a copy). Save writes 1.0
 * little-endian. Errors (ND_EIO) name the file. */
nd_status nd_load_npy(nd_err *e, nd_tensor *out, const char *path);
nd_status nd_save_npy(nd_err *e, const char *path, const nd_tensor *t);
/* A view over the file mapped in NumPy's mode "r" (read-only tensor), "r+"
 * (writes reach the file) or "c" (copy-on-write); the mapping lives, and
 * the file stays open, as long as any view. Big-endian, misaligned or
 * non-0/1 bool data is refused (nd_load_npy copies). */
nd_status nd_load_npy_mapped(nd_err *e, nd_tensor *out, const char *path,
                             const char *mode);

/* ---- safetensors files (src/core/io/safetensors.c) ------------------------- */
typedef struct nd_safetensors_entry {
  const char *name;     /* valid UTF-8 */
  const char *st_dtype; /* the file's dtype string: "F32", "BF16", ... */
  int kind;             /* internal: its row in the dtype table */
  int dtype;            /* nd's dtype, -1 when this build has none */
  int ndim;
  int64_t size[ND_MAX_DIMS];
  int64_t begin, end;   /* data_offsets, from the end of the header */
} nd_safetensors_entry;
typedef struct nd_safetensors {
  int n, nmeta;
  nd_safetensors_entry *entries; /* n, in file order */
  const char **meta;    /* __metadata__: nmeta key, value pairs */
  char *text;           /* where the strings live */
  nd_tensor *tensors;   /* nd_safetensors_load's: entries[i]'s tensor */
  int64_t header_len, file_size;
} nd_safetensors;
/* Reads and checks the header (names once each, known dtypes, offsets that
 * tile the data exactly, byte counts that match dtype x shape, UTF-8);
 * errors name fn and the file. Free with nd_safetensors_free. */
nd_status nd_safetensors_header(nd_err *e, const char *fn, const char *path,
                                nd_safetensors *f);
/* Every tensor: copies (mmap NULL), or views of one mapping (mmap "r":
 * read-only, "c": copy-on-write); a tensor misaligned for its elements (or
 * a bool one with bytes other than 0 and 1) is copied even then. */
nd_status nd_safetensors_load(nd_err *e, const char *path, const char *mmap,
                              nd_safetensors *f);
void nd_safetensors_free(nd_safetensors *f); /* releases its tensors too */
/* Writes n tensors (any views) row-major, ordered by element size then
 * name so each is aligned, the JSON header padded with spaces to a
 * multiple of 8; meta: nmeta key, value pairs, as __metadata__. */
nd_status nd_safetensors_save(nd_err *e, const char *path, int n,
                              const char *const *names,
                              const nd_tensor *const *ts, int nmeta,
                              const char *const *meta);
/* The file's name of a dtype ("F32"), NULL when it has none. */
const char *nd_safetensors_dtype_name(int dtype);

/* ---- image files (src/core/io/image.c) ------------------------------------ */
/* PNG (libspng) and JPEG (libjpeg-turbo), told apart by their first bytes.
 * Loads give a fresh HWC uint8 tensor (uint16 for a 16-bit PNG, with the
 * file's values): gray (H, W, 1), gray+alpha 2, RGB 3, RGBA 4; palette
 * PNGs expand to RGB, a tRNS chunk to an alpha channel. channels 1..4
 * converts as PIL's convert (gray = (19595 R + 38470 G + 7471 B + 32768)
 * >> 16, the ITU-R 601-2 luma, at 8 and 16 bits; gray to color
 * replicates; a new alpha is 255 or 65535, a dropped one is dropped); 0
 * keeps the file's. An image above ND_IMAGE_MAX_PIXELS is refused from
 * its header, before anything is allocated; CMYK JPEGs are refused; EXIF
 * orientation is not applied; truncated or corrupt files fail (ND_EIO,
 * the message names the file). Saves take uint8 (H, W) or (H, W, C),
 * C = 1..4 (JPEG: 1 or 3), or uint16 for a 16-bit PNG, any view: rows
 * whose pixels are compact go to the encoder without a copy. quality: JPEG's 1..100, 0 for
 * ND_IMAGE_QUALITY; compression: PNG's zlib level 0..9, -1 for zlib's
 * default (6). The format of a save is the path's extension (.png, .jpg,
 * .jpeg, any case). Encoded bytes are freed with nd_image_free. */
#define ND_IMAGE_MAX_PIXELS ((int64_t)1 << 28)
#define ND_IMAGE_QUALITY 90
enum { ND_IMAGE_PNG = 1, ND_IMAGE_JPEG = 2 };
nd_status nd_image_load(nd_err *e, nd_tensor *out, const char *path,
                        int channels);
nd_status nd_image_decode(nd_err *e, nd_tensor *out, const void *bytes,
                          int64_t nbytes, int channels);
nd_status nd_image_save(nd_err *e, const char *path, const nd_tensor *t,
                        int quality, int compression);
nd_status nd_image_encode(nd_err *e, void **bytes, int64_t *nbytes,
                          const nd_tensor *t, int format, int quality,
                          int compression);
void nd_image_free(void *bytes);
int nd_image_format(const char *path); /* by extension; 0 when unknown */

/* ---- matmul through OpenBLAS (src/core/kernels/matmul.c, shape/matmul_plan.c) ------------------------ */
/* NumPy/PyTorch matmul semantics. float32/float64 go to cblas_?gemm, ?gemv
 * or ?dot with the order, transpose flags and leading dims read off the
 * operands' strides (views are passed without copying when BLAS can
 * express them); integer and bool dtypes go through a plain loop. An
 * `out` that is unset is allocated; a set one must have exactly the
 * result's shape and dtype, and only its view's elements are written. */
typedef enum nd_blas_routine {
  ND_BLAS_GEMM, ND_BLAS_GEMV, ND_BLAS_DOT, ND_BLAS_LOOP
} nd_blas_routine;
/* plan.copies; ND_COPY_F32: a float16 or bfloat16 result, computed in
 * float32 (sgemm: Debian's OpenBLAS has no sbgemm): both operands are
 * converted to float32 copies, the product made in a float32 copy of out
 * and rounded into out (ND_COPY_A, _B and _OUT are set with it). */
enum { ND_COPY_A = 1, ND_COPY_B = 2, ND_COPY_OUT = 4, ND_COPY_F32 = 8 };
/* One decision, reported by nd_matmul_plan and followed by nd_matmul.
 * The first block is the literal CBLAS call (0 where it does not apply);
 * the rest is the geometry the executor walks (elements, 0 = a, 1 = b,
 * 2 = out, for the operands as used: copies are compact row-major). */
typedef struct nd_blas_plan {
  int routine;             /* nd_blas_routine */
  int dtype;               /* of the result, and of the computation
                              unless copies has ND_COPY_F32 */
  int col_major;           /* CBLAS order (gemm, gemv) */
  char transa, transb;     /* 'N' / 'T' (gemv: transa only) */
  int64_t m, n, k;         /* gemv: the matrix's rows, cols; dot: n */
  int64_t lda, ldb, ldc, incx, incy;
  int64_t batch;           /* BLAS calls (loop: 2-D products) */
  int copies;              /* ND_COPY_* bits: operands copied first */
  int ndim;                /* the result's shape */
  int64_t size[ND_MAX_DIMS];
  /* executor geometry */
  int64_t M, N, K;                   /* one product: (M,K) x (K,N) */
  int nbd;                           /* batch dims walked (size > 1) */
  int64_t bsize[ND_MAX_DIMS];
  int64_t bstride[3][ND_MAX_DIMS];
  int64_t mstride[3][2];             /* row, col stride of each matrix */
  int64_t origin[3];                 /* first element -> pointer passed */
} nd_blas_plan;

nd_status nd_matmul_plan(nd_err *e, nd_blas_plan *plan, const nd_tensor *a,
                         const nd_tensor *b, const nd_tensor *out);
nd_status nd_matmul(nd_err *e, nd_tensor *out, const nd_tensor *a,
                    const nd_tensor *b);
/* out = a @ b following a plan that nd_matmul_plan made for these very
 * headers (a, b, out unchanged since): nothing is checked again, which is
 * the point -- a host calling tiny products in a loop plans once. */
nd_status nd_matmul_run(nd_err *e, const nd_blas_plan *plan,
                        const nd_tensor *a, const nd_tensor *b,
                        const nd_tensor *out);
/* The restricted forms (PyTorch's): mm 2-D x 2-D, mv 2-D x 1-D, dot
 * 1-D x 1-D (a 0-d out), bmm 3-D x 3-D with equal batch, outer 1-D x 1-D. */
nd_status nd_mm(nd_err *e, nd_tensor *out, const nd_tensor *a,
                const nd_tensor *b);
nd_status nd_mv(nd_err *e, nd_tensor *out, const nd_tensor *a,
                const nd_tensor *b);
nd_status nd_dot(nd_err *e, nd_tensor *out, const nd_tensor *a,
                 const nd_tensor *b);
nd_status nd_bmm(nd_err *e, nd_tensor *out, const nd_tensor *a,
                 const nd_tensor *b);
nd_status nd_outer(nd_err *e, nd_tensor *out, const nd_tensor *a,
                   const nd_tensor *b);
/* The fused updates (PyTorch's): out = beta * c + alpha * (a @ b), c
 * broadcast to the product's shape; out may be c itself (the in-place
 * forms: then c must have the result's shape and dtype). With beta == 0,
 * c is not read (NaNs in it do not propagate). BLAS takes beta and alpha
 * (float dtypes); integer results need whole beta and alpha. addmm: a, b
 * 2-D; addmv: a 2-D, x 1-D; addr: x, y 1-D (c += x y^T); baddbmm: a, b
 * 3-D with equal batch, a product per batch element; addbmm: the same
 * products summed into one matrix. */
nd_status nd_addmm(nd_err *e, nd_tensor *out, const nd_tensor *c,
                   const nd_tensor *a, const nd_tensor *b, double beta,
                   double alpha);
nd_status nd_addmv(nd_err *e, nd_tensor *out, const nd_tensor *c,
                   const nd_tensor *a, const nd_tensor *x, double beta,
                   double alpha);
nd_status nd_addr(nd_err *e, nd_tensor *out, const nd_tensor *c,
                  const nd_tensor *x, const nd_tensor *y, double beta,
                  double alpha);
nd_status nd_baddbmm(nd_err *e, nd_tensor *out, const nd_tensor *c,
                     const nd_tensor *a, const nd_tensor *b, double beta,
                     double alpha);
nd_status nd_addbmm(nd_err *e, nd_tensor *out, const nd_tensor *c,
                    const nd_tensor *a, const nd_tensor *b, double beta,
                    double alpha);

/* ---- contractions (src/core/contract/) ------------------------------------- */
/* tensordot: a's dims da[0..n) against b's db[0..n) (0-based, distinct,
 * equal sizes), the result a's other dims then b's (an einsum: one
 * matrix product, an operand copied only when no order of its contracted
 * dims is one stride). inner: the last dims
 * (a 0-d operand multiplies). kron: the Kronecker product (ranks padded
 * with leading 1s; at most ND_MAX_DIMS / 2 dims). cross: 3-vectors along
 * dim of a and b broadcast together. dist: ||a - b||_p, 0-d. normalize:
 * t / max(||t||_p along dim, eps) (PyTorch's F.normalize), floats only.
 * Every result is new, never a view of an operand. */
nd_status nd_tensordot(nd_err *e, nd_tensor *out, const nd_tensor *a,
                       const nd_tensor *b, int n, const int *da,
                       const int *db);
nd_status nd_inner(nd_err *e, nd_tensor *out, const nd_tensor *a,
                   const nd_tensor *b);
nd_status nd_kron(nd_err *e, nd_tensor *out, const nd_tensor *a,
                  const nd_tensor *b);
nd_status nd_cross(nd_err *e, nd_tensor *out, const nd_tensor *a,
                   const nd_tensor *b, int dim);
nd_status nd_dist(nd_err *e, nd_tensor *out, const nd_tensor *a,
                  const nd_tensor *b, double p);
nd_status nd_normalize(nd_err *e, nd_tensor *out, const nd_tensor *t,
                       double p, int dim, double eps);

/* ---- einsum (src/core/contract/einsum*.c) -- */
/* NumPy's notation: "bij,bjk->bik", implicit output ("ij,jk": the labels
 * seen once, in ASCII order, after the ... dims), "..." broadcasting,
 * repeated labels in one operand (a diagonal view), labels summed where
 * they appear only once. The operands are prepared (diagonals and dropped
 * size-1 broadcast dims are views; labels no other operand and not the
 * output needs are summed into a new tensor) and contracted pairwise in
 * the order of least multiply-adds (exhaustive up to 8 operands, greedy
 * beyond), each pair as one batched matrix product on views of the
 * operands' own strides -- copied only where BLAS cannot read them -- or,
 * when nothing is contracted, one broadcast multiply. All operands
 * promote together (as matmul's: integers through the integer loop). The
 * result is new (0-d for a scalar), laid out row-major in the output's
 * order. */
#define ND_EINSUM_MAX_OPERANDS 32
enum { ND_EINSUM_MATMUL, ND_EINSUM_MUL, ND_EINSUM_COPY }; /* step kinds */
enum { ND_EINSUM_DTYPE = 1, ND_EINSUM_LAYOUT, ND_EINSUM_MERGE }; /* why copied */
/* A view as a kernel gets it: sizes, strides and its dims' labels
 * ("b,i,jk": comma-separated, a merged dim's labels together). */
typedef struct nd_einsum_view {
  int ndim;
  int64_t size[ND_MAX_DIMS], stride[ND_MAX_DIMS];
  char labels[128];
} nd_einsum_view;
/* One operand's preparation: its view (diagonals taken, broadcast size-1
 * dims dropped) and the labels summed out of it into a new tensor. */
typedef struct nd_einsum_prep {
  char spec[160];    /* "iij->ij" */
  int diagonal;      /* a label repeated */
  char summed[72];   /* labels summed ("" none) */
  int nsum, sum_dims[ND_MAX_DIMS]; /* their dims in view */
  nd_einsum_view view;
  int64_t bytes;     /* allocated (the sum, and its conversion) */
  int allocations;
} nd_einsum_prep;
/* One pairwise step: x and y are operands (0..n-1 the prepared inputs,
 * n + s the result of step s); a COPY step (one operand, y = -1) only
 * writes x into the result. */
typedef struct nd_einsum_step {
  int kind, x, y;
  char spec[240];                 /* "bij,bjk->bik" */
  int ndim;                       /* its result, row-major */
  int64_t size[ND_MAX_DIMS];
  nd_einsum_view a, b, out;       /* as the kernel gets them */
  int merge;                      /* bits 1 (x), 2 (y): copied so the
                                     contracted labels are one stride */
  nd_einsum_view merge_src[2];    /* the views those copies read */
  nd_blas_plan call;              /* ND_EINSUM_MATMUL */
  int ncopies;
  int copy_what[5], copy_why[5];  /* 0 a (x), 1 b (y), 2 out; ND_EINSUM_* */
  int64_t copy_bytes[5];
  int64_t bytes;                  /* allocated: copies, its result */
  int allocations;
} nd_einsum_step;
typedef struct nd_einsum_path {
  int nops, nsteps, dtype, ndim;
  int64_t size[ND_MAX_DIMS];     /* the result */
  char spec[240];                 /* explicit, ellipses named by letters */
  int64_t bytes;                  /* everything the call allocates */
  int allocations;
  nd_einsum_prep *prep;           /* nops of them */
  nd_einsum_step *step;           /* nsteps (at most nops) */
} nd_einsum_path;
/* A path for n operands is one block of nd_einsum_path_bytes(n) bytes
 * (aligned for any type), the arrays after the header:
 * nd_einsum_path_init(block, n) points them there. */
size_t nd_einsum_path_bytes(int n);
nd_einsum_path *nd_einsum_path_init(void *block, int n);
/* The plan into path (made for at least n operands), touching no element. */
nd_status nd_einsum_plan(nd_err *e, nd_einsum_path *path, const char *spec,
                         int n, const nd_tensor *const *ops);
/* out (unset) = the contraction (its plan in scratch memory). */
nd_status nd_einsum(nd_err *e, nd_tensor *out, const char *spec, int n,
                    const nd_tensor *const *ops);
/* out (unset) = the contraction a path describes, for operands of the
 * dtypes, sizes and strides it was planned for (storage and offsets may
 * differ): nothing is checked again -- a loop calling one einsum plans
 * once (the Lua binding keeps the last path). */
nd_status nd_einsum_run(nd_err *e, nd_tensor *out, const nd_einsum_path *p,
                        const nd_tensor *const *ops);

/* ---- convolution (src/core/conv/conv*.c) -- */
/* PyTorch's conv1d/2d/3d (cross-correlation): x (N, C, spatial...) or
 * unbatched (C, spatial...), w (O, C / groups, kernel...), bias (O) or
 * NULL; nsp spatial dims (1..3). Floats only (operands promote together,
 * as matmul's); integers and bool are refused, as PyTorch's CPU
 * convolution does. float16 and bfloat16 are computed in float32 (their
 * operands converted, float32 GEMMs) and the result rounded once. Options per spatial dim: stride, dilation (>= 1),
 * padding (>= 0, each side) or "same" (stride 1: the dim's size kept, the
 * odd pad on the right, as PyTorch) or "valid" (none); groups >= 1
 * dividing C and O. The result is new and row-major (N, O, out...). */
enum { ND_CONV_PAD_GIVEN, ND_CONV_PAD_SAME, ND_CONV_PAD_VALID };
typedef struct nd_conv_options {
  int64_t stride[3], padding[3], dilation[3]; /* the first nsp used */
  int64_t groups;
  int padding_mode;                           /* ND_CONV_PAD_* */
} nd_conv_options;
#define ND_CONV_OPTIONS_INIT {{1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 1, 0}
/* How it is computed, decided per shape by nd_conv_plan:
 * GEMM: a 1x1 kernel, stride 1, no padding, whose input's spatial dims
 *   merge: one matrix product per group over the input's own strides;
 * IM2COL: per image and group, tiles of output positions whose windows are
 *   packed into a (C/groups * kernel, tile) matrix, one GEMM per tile into
 *   the result (the tile sized to stay in cache);
 * DIRECT: one pass per output plane, each kernel tap a row update (for
 *   depthwise convolutions and kernels too small to feed a GEMM). */
enum { ND_CONV_GEMM, ND_CONV_IM2COL, ND_CONV_DIRECT };
enum { ND_CONV_COPY_INPUT, ND_CONV_COPY_WEIGHT, ND_CONV_COPY_BIAS,
       ND_CONV_COPY_TILE, ND_CONV_COPY_OUTPUT }; /* what a copy holds
                                  (OUTPUT: the compute dtype's result) */
typedef struct nd_conv_path {
  int strategy, dtype, nsp, batched;
  int compute_dtype;                /* dtype, or float32 for 16-bit floats */
  char why[160];                    /* the reason for the strategy */
  int64_t n, c, o, groups;          /* batch (1 unbatched), channels */
  int64_t in[3], kernel[3], stride[3], dilation[3], pad_lo[3], pad_hi[3],
      out[3];
  int ndim;                         /* the result's shape */
  int64_t size[ND_MAX_DIMS];
  int64_t tile, tile_rows;          /* IM2COL: positions per tile, rows
                                       (C/groups * kernel) */
  int64_t tile_bytes;               /* IM2COL: the tile's buffer */
  nd_blas_plan call, last;          /* GEMM: per group; IM2COL: per full
                                       tile and for the last, shorter one */
  int64_t calls;                    /* BLAS calls the convolution makes */
  int ncopies;
  int copy_what[5];                 /* ND_CONV_COPY_* */
  char copy_why[5][80];
  int64_t copy_bytes[5];
  int64_t bytes_copied;             /* the copies' bytes (a tile's: all
                                       the windows packed into it) */
  int64_t bytes;                    /* allocated: result, copies, tile */
  int allocations;
} nd_conv_path;
nd_status nd_conv_plan(nd_err *e, nd_conv_path *plan, int nsp,
                       const nd_tensor *x, const nd_tensor *w,
                       const nd_tensor *bias, const nd_conv_options *o);
nd_status nd_conv(nd_err *e, nd_tensor *out, int nsp, const nd_tensor *x,
                  const nd_tensor *w, const nd_tensor *bias,
                  const nd_conv_options *o);

/* ---- elementwise ops and reductions (src/core/kernels/elementwise*.c, reduce.c) -- */
/* Operands broadcast (NumPy rules) and promote as PyTorch's do. An operand
 * is a tensor, or (t == NULL) a "weak" scalar like a Lua number: dtype
 * ND_INT64 (integral, value in i), ND_FLOAT64 (value in f) or ND_BOOL (i),
 * which never widens a tensor within its kind (int32 * 2 stays int32). */
typedef struct nd_operand {
  const nd_tensor *t;
  int dtype;
  double f;
  int64_t i;
} nd_operand;
/* A value (t NULL; dtype ND_INT64 in i, ND_UINT64 with i's bits, or
 * ND_FLOAT64 in f) written into a tensor of dtype dt must be one of its
 * values: ND_EINVAL otherwise (integers out of range, NaN or infinities
 * into integers, finite numbers beyond float32's range into float32;
 * fractions truncate toward zero). nd_fill_scalar fills under that rule;
 * nd_set and nd_set_i64 follow it, nd_fill and nd_fill_i64 convert as
 * copies do. */
nd_status nd_scalar_fits(nd_err *e, const char *fn, int dt,
                         const nd_operand *s);
nd_status nd_fill_scalar(nd_err *e, const nd_tensor *dst,
                         const nd_operand *s);
nd_status nd_set_scalar(nd_err *e, const nd_tensor *t, const int64_t *idx,
                        const nd_operand *s);
/* Where a result goes: ND_NEW allocates it into the unset out, laid out in
 * the inputs' memory order; ND_OUT writes into out, which must have exactly
 * the result's shape and dtype; ND_INPLACE writes into out (the first
 * operand's tensor), which the result must be castable to and which
 * broadcasting may not grow. Written tensors must not overlap themselves;
 * a partial overlap with an input is read through a temporary. */
enum { ND_NEW, ND_OUT, ND_INPLACE };
/* The ops, each once, in enum order: X(ENUM, name, arity, class, ...).
 * Enum values are the C API's: a new op goes at the end of its group, and
 * each list keeps its binary and unary ops in the blocks they are in.
 * class is what the result is: S the operands' promoted dtype (nd_binary
 * and nd_unary refuse bool for sub and neg), F a float (integers and bool
 * give float64), B bool, I as S for integer and bool operands only, D as S
 * refusing bool and an integer divisor with a zero. The arguments after X
 * reach every X unchanged (for an X-macro inside another); pass 0 when
 * there are none: ND_OPS(X, 0). */
#define ND_OPS(X, ...)                                                      \
  X(ADD, add, 2, S, __VA_ARGS__) X(SUB, sub, 2, S, __VA_ARGS__)             \
  X(MUL, mul, 2, S, __VA_ARGS__) X(DIV, div, 2, F, __VA_ARGS__)             \
  X(POW, pow, 2, S, __VA_ARGS__) X(MAXIMUM, maximum, 2, S, __VA_ARGS__)     \
  X(MINIMUM, minimum, 2, S, __VA_ARGS__)                                    \
  X(EQ, eq, 2, B, __VA_ARGS__) X(NE, ne, 2, B, __VA_ARGS__)                 \
  X(LT, lt, 2, B, __VA_ARGS__) X(LE, le, 2, B, __VA_ARGS__)                 \
  X(GT, gt, 2, B, __VA_ARGS__) X(GE, ge, 2, B, __VA_ARGS__)                 \
  X(NEG, neg, 1, S, __VA_ARGS__) X(ABS, abs, 1, S, __VA_ARGS__)             \
  X(EXP, exp, 1, F, __VA_ARGS__) X(LOG, log, 1, F, __VA_ARGS__)             \
  X(SQRT, sqrt, 1, F, __VA_ARGS__) X(SIN, sin, 1, F, __VA_ARGS__)           \
  X(COS, cos, 1, F, __VA_ARGS__) X(TANH, tanh, 1, F, __VA_ARGS__)           \
  X(SIGMOID, sigmoid, 1, F, __VA_ARGS__) X(RELU, relu, 1, S, __VA_ARGS__)   \
  X(FLOOR, floor, 1, S, __VA_ARGS__) X(CEIL, ceil, 1, S, __VA_ARGS__)       \
  X(ROUND, round, 1, S, __VA_ARGS__)                                        \
  X(ISNAN, isnan, 1, B, __VA_ARGS__) X(ISFINITE, isfinite, 1, B, __VA_ARGS__)
typedef enum nd_op {
#define ND_X_ENUM(E, name, arity, cls, unused) ND_##E,
  ND_OPS(ND_X_ENUM, 0)
#undef ND_X_ENUM
  ND_NOPS
} nd_op;
const char *nd_op_name(int op); /* "add", ... */
/* The dtype of an op's result over these operands (PyTorch's rules), or
 * -1 with an error in e (e.g. bool - bool). */
int nd_result_type(nd_err *e, int op, int n, const nd_operand *ops);
nd_status nd_binary(nd_err *e, nd_tensor *out, int mode, int op,
                    const nd_operand *a, const nd_operand *b);
nd_status nd_unary(nd_err *e, nd_tensor *out, int mode, int op,
                   const nd_tensor *a);
/* min(max(a, lo), hi); lo or hi may be NULL (no bound); NaN propagates. */
nd_status nd_clamp(nd_err *e, nd_tensor *out, int mode, const nd_tensor *a,
                   const nd_operand *lo, const nd_operand *hi);
/* cond (bool) ? a : b, broadcast. */
nd_status nd_where(nd_err *e, nd_tensor *out, int mode, const nd_tensor *cond,
                   const nd_operand *a, const nd_operand *b);

/* The reductions, as ND_OPS (S: sum and prod of integers and bool give
 * int64). */
#define ND_REDUCE_OPS(X, ...)                                               \
  X(SUM, sum, 1, S, __VA_ARGS__) X(MEAN, mean, 1, F, __VA_ARGS__)           \
  X(PROD, prod, 1, S, __VA_ARGS__) X(MIN, min, 1, S, __VA_ARGS__)           \
  X(MAX, max, 1, S, __VA_ARGS__) X(ALL, all, 1, B, __VA_ARGS__)             \
  X(ANY, any, 1, B, __VA_ARGS__) X(NORM, norm, 1, F, __VA_ARGS__)
typedef enum nd_reduce_op {
#define ND_X_ENUM(E, name, arity, cls, unused) ND_R_##E,
  ND_REDUCE_OPS(ND_X_ENUM, 0)
#undef ND_X_ENUM
  ND_NREDUCE
} nd_reduce_op;
/* Reduce t over ndims distinct dims (all dims when dims is NULL) into the
 * unset out (0-d for a full reduction). sum/prod of int32, uint8 and bool
 * give int64; mean/norm of integers float64; all/any bool. min/max of an
 * empty reduction fail; floats accumulate in double, pairwise. */
nd_status nd_reduce(nd_err *e, nd_tensor *out, int op, const nd_tensor *t,
                    int ndims, const int *dims, int keepdim);
/* min/max (op ND_R_MIN/ND_R_MAX) along dim with 0-based int64 indices
 * (first occurrence; NaN counts as the extreme). dim < 0: over all
 * elements, the index being the row-major flat one. values may be NULL. */
nd_status nd_reduce_arg(nd_err *e, nd_tensor *values, nd_tensor *indices,
                        int op, const nd_tensor *t, int dim, int keepdim);

/* ---- more math (src/core/kernels/elementwise_math.c) ---- */
/* As ND_OPS; the unary ops come before the binary ones. Beyond the
 * classes: square of bool is int64; trunc of bool and frac of integers
 * are refused; FMOD has C's sign (the dividend's), REMAINDER the
 * divisor's, and a refused divisor leaves out untouched. Promotion as
 * nd_binary's. */
#define ND_MATH_OPS(X, ...)                                                 \
  X(LOG1P, log1p, 1, F, __VA_ARGS__) X(EXPM1, expm1, 1, F, __VA_ARGS__)     \
  X(LOG2, log2, 1, F, __VA_ARGS__) X(LOG10, log10, 1, F, __VA_ARGS__)       \
  X(EXP2, exp2, 1, F, __VA_ARGS__) X(TAN, tan, 1, F, __VA_ARGS__)           \
  X(ASIN, asin, 1, F, __VA_ARGS__) X(ACOS, acos, 1, F, __VA_ARGS__)         \
  X(ATAN, atan, 1, F, __VA_ARGS__) X(SINH, sinh, 1, F, __VA_ARGS__)         \
  X(COSH, cosh, 1, F, __VA_ARGS__) X(ASINH, asinh, 1, F, __VA_ARGS__)       \
  X(ACOSH, acosh, 1, F, __VA_ARGS__) X(ATANH, atanh, 1, F, __VA_ARGS__)     \
  X(ERF, erf, 1, F, __VA_ARGS__) X(ERFC, erfc, 1, F, __VA_ARGS__)           \
  X(LGAMMA, lgamma, 1, F, __VA_ARGS__)                                      \
  X(RECIPROCAL, reciprocal, 1, F, __VA_ARGS__)                              \
  X(RSQRT, rsqrt, 1, F, __VA_ARGS__) X(SIGN, sign, 1, S, __VA_ARGS__)       \
  X(TRUNC, trunc, 1, S, __VA_ARGS__) X(FRAC, frac, 1, S, __VA_ARGS__)       \
  X(SQUARE, square, 1, S, __VA_ARGS__) X(ISINF, isinf, 1, B, __VA_ARGS__)   \
  X(LOGICAL_NOT, logical_not, 1, B, __VA_ARGS__)                            \
  X(BITWISE_NOT, bitwise_not, 1, I, __VA_ARGS__)                            \
  X(ATAN2, atan2, 2, F, __VA_ARGS__) X(HYPOT, hypot, 2, F, __VA_ARGS__)     \
  X(FMOD, fmod, 2, D, __VA_ARGS__) X(REMAINDER, remainder, 2, D, __VA_ARGS__) \
  X(FLOOR_DIVIDE, floor_divide, 2, D, __VA_ARGS__)                          \
  X(LOGICAL_AND, logical_and, 2, B, __VA_ARGS__)                            \
  X(LOGICAL_OR, logical_or, 2, B, __VA_ARGS__)                              \
  X(LOGICAL_XOR, logical_xor, 2, B, __VA_ARGS__)                            \
  X(BITWISE_AND, bitwise_and, 2, I, __VA_ARGS__)                            \
  X(BITWISE_OR, bitwise_or, 2, I, __VA_ARGS__)                              \
  X(BITWISE_XOR, bitwise_xor, 2, I, __VA_ARGS__)
typedef enum nd_math_op {
#define ND_X_ENUM(E, name, arity, cls, unused) ND_##E,
  ND_MATH_OPS(ND_X_ENUM, 0)
#undef ND_X_ENUM
  ND_NMATH
} nd_math_op;
const char *nd_math_name(int op); /* "log1p", ... */
nd_status nd_math_unary(nd_err *e, nd_tensor *out, int mode, int op,
                        const nd_tensor *a);
nd_status nd_math_binary(nd_err *e, nd_tensor *out, int mode, int op,
                         const nd_operand *a, const nd_operand *b);
/* a + w * (b - a) (PyTorch's two-sided formula); the promoted dtype of a,
 * b, w must be a float. */
nd_status nd_lerp(nd_err *e, nd_tensor *out, int mode, const nd_operand *a,
                  const nd_operand *b, const nd_operand *w);
/* t + value * a * b (addcmul) and t + value * a / b (addcdiv), one pass:
 * t, a, b broadcast together and promote left to right; mode ND_NEW,
 * ND_OUT or ND_INPLACE (out is t). An integer result takes a whole value;
 * addcdiv takes float results only, and neither takes bool. */
nd_status nd_addcmul(nd_err *e, nd_tensor *out, int mode, const nd_tensor *t,
                     const nd_tensor *a, const nd_tensor *b, double value);
nd_status nd_addcdiv(nd_err *e, nd_tensor *out, int mode, const nd_tensor *t,
                     const nd_tensor *a, const nd_tensor *b, double value);
/* |a - b| <= atol + rtol * |b|, or a == b (equal infinities), or both NaN
 * when equal_nan: a bool tensor. */
nd_status nd_isclose(nd_err *e, nd_tensor *out, const nd_operand *a,
                     const nd_operand *b, double rtol, double atol,
                     int equal_nan);
/* NaN, +inf, -inf replaced by the given values (converted to t's dtype;
 * defaults in the binding: 0, the dtype's largest and lowest finite);
 * integer and bool tensors are copied unchanged. */
nd_status nd_nan_to_num(nd_err *e, nd_tensor *out, int mode,
                        const nd_tensor *t, double nan, double posinf,
                        double neginf);
/* ---- sorting, scans and statistics (src/core/kernels/sort.c, scan.c, stats.c) --- */
/* Dims may be negative (from the end); a 0-d tensor takes dim 0 or -1.
 * Positions written into index results count from e->base (0 for C
 * callers, 1 for the Lua binding), as the dims and indices quoted in
 * messages do. Results are fresh and row-major. */
#define ND_ALL_DIMS (-32768) /* median over all elements */
/* Stable sort along dim (NaN largest, -0 equal to +0): values (NULL for
 * argsort) and int64 positions (NULL: not wanted). Descending stays
 * stable: equal elements keep their order. */
nd_status nd_sort(nd_err *e, nd_tensor *values, nd_tensor *indices,
                  const nd_tensor *t, int dim, int descending);
/* The k largest (smallest) along dim; sorted: best first, else any order. */
nd_status nd_topk(nd_err *e, nd_tensor *values, nd_tensor *indices,
                  const nd_tensor *t, int64_t k, int dim, int largest,
                  int sorted);
/* The k-th smallest (k from 1) along dim. */
nd_status nd_kthvalue(nd_err *e, nd_tensor *values, nd_tensor *indices,
                      const nd_tensor *t, int64_t k, int dim, int keepdim);
/* The lower median along dim (ND_ALL_DIMS: of all elements, a 0-d result);
 * a lane holding NaN gives NaN. */
nd_status nd_median(nd_err *e, nd_tensor *values, nd_tensor *indices,
                    const nd_tensor *t, int dim, int keepdim);
/* Sorted distinct values (1-D) and, when counts is not NULL, their int64
 * counts. */
nd_status nd_unique(nd_err *e, nd_tensor *values, nd_tensor *counts,
                    const nd_tensor *t);
/* Insertion positions of values into the 1-D ascending `sorted` (NumPy's
 * side "left", or "right" when right), int64 in values' shape. */
nd_status nd_searchsorted(nd_err *e, nd_tensor *out, const nd_tensor *sorted,
                          const nd_tensor *values, int right);
/* Inclusive scans along dim; integer and bool inputs give int64 (wrapping). */
nd_status nd_cumsum(nd_err *e, nd_tensor *out, const nd_tensor *t, int dim);
nd_status nd_cumprod(nd_err *e, nd_tensor *out, const nd_tensor *t, int dim);
/* Variance (std: its square root) over ndims dims (dims NULL: all), divided
 * by N - correction (NaN when that is <= 0); integers give float64. */
nd_status nd_var(nd_err *e, nd_tensor *out, const nd_tensor *t, int ndims,
                 const int *dims, int keepdim, double correction, int std);
/* log(sum(exp(t))) over dims, stable; a size-0 reduction gives -inf. */
nd_status nd_logsumexp(nd_err *e, nd_tensor *out, const nd_tensor *t,
                       int ndims, const int *dims, int keepdim);
/* exp(t) / sum(exp(t)) along dim (log: its log), stable. */
nd_status nd_softmax(nd_err *e, nd_tensor *out, const nd_tensor *t, int dim,
                     int log);
/* Nonzero elements over dims (int64; dims NULL: all, a 0-d result). */
nd_status nd_count_nonzero(nd_err *e, nd_tensor *out, const nd_tensor *t,
                           int ndims, const int *dims);
/* Torch7's histc: float64 counts of bins equal-width bins over [lo, hi]
 * (lo == hi == 0: the data's range); elements outside are ignored. */
nd_status nd_histc(nd_err *e, nd_tensor *out, const nd_tensor *t,
                   int64_t bins, double lo, double hi);
/* The p-norm over dims (NULL: all): p any number, INFINITY, -INFINITY;
 * integers give float64. */
nd_status nd_norm(nd_err *e, nd_tensor *out, const nd_tensor *t, double p,
                  int ndims, const int *dims, int keepdim);
/* ---- padding, counting, encoding (src/core/kernels/pad.c, count.c) ---- */
/* The padding modes, once: X(ENUM, name). */
#define ND_PAD_MODES(X)                                                     \
  X(CONSTANT, constant) X(REFLECT, reflect) X(REPLICATE, replicate)         \
  X(CIRCULAR, circular)
typedef enum nd_pad_mode {
#define ND_X_ENUM(E, name) ND_PAD_##E,
  ND_PAD_MODES(ND_X_ENUM)
#undef ND_X_ENUM
  ND_NPAD_MODES
} nd_pad_mode;
/* PyTorch's F.pad: pads[2i] and pads[2i + 1] go before and after dim
 * ndim - 1 - i (the last dim first; npads even, at most 2 * ndim); a
 * negative pad crops, in every mode, and a dim may become empty but not
 * negative. value (NULL: 0) fills constant mode; the other modes take
 * none. reflect needs each positive pad below its dim's size, circular
 * at most that size, replicate a non-empty dim. Any dtype, rank and
 * number of padded dims; a new row-major result. */
nd_status nd_pad(nd_err *e, nd_tensor *out, const nd_tensor *t, int npads,
                 const int64_t *pads, int mode, const double *value);
/* NumPy's bincount of the 1-D integer or bool t: out[v] counts the
 * elements equal to v (0 .. max, at least minlength long), int64, or with
 * weights (1-D, t's length, any dtype, read as float64) their sums,
 * float64. Negative values are refused, and a table too big for memory
 * before anything is allocated. */
nd_status nd_bincount(nd_err *e, nd_tensor *out, const nd_tensor *t,
                      const nd_tensor *weights, int64_t minlength);
/* PyTorch's one_hot of the integer index (positions counted from
 * e->base): int64 of index's shape plus a last dim of num_classes, 1 at
 * each position, else 0. num_classes -1: the largest position (+ 1 - base,
 * so an empty index needs it given); a position outside it is refused. */
nd_status nd_one_hot(nd_err *e, nd_tensor *out, const nd_tensor *index,
                     int64_t num_classes);
/* ---- pooling (src/core/conv/pool.c) ----------------------------------- */
/* PyTorch 1.13's F.max_pool{1,2,3}d, F.avg_pool{1,2,3}d and
 * F.adaptive_avg_pool{1,2,3}d over the last `dims` (1..3) dims of t, which
 * is (C, spatial...) or batched (N, C, spatial...); any strides. The
 * arrays hold one value per spatial dim; stride NULL: the kernel's,
 * padding NULL: 0, dilation NULL: 1. Padding at most half the kernel;
 * ceil_mode rounds the output size up while the last window starts inside
 * the input or its left padding. Results are fresh and row-major, of t's
 * leading sizes. float16 and bfloat16 are pooled in float32 (the max
 * exact, sums in float32) and rounded once to t's dtype. */
/* Floats only. indices (NULL: not wanted): int64 flat positions of each
 * maximum within its (n, c) plane of the unpadded input, counted from
 * e->base; the first largest wins, NaN propagates (the last NaN's). */
nd_status nd_max_pool(nd_err *e, nd_tensor *out, nd_tensor *indices,
                      const nd_tensor *t, int dims, const int64_t *kernel,
                      const int64_t *stride, const int64_t *padding,
                      const int64_t *dilation, int ceil_mode);
/* Floats and int64 (sums wrap, quotients truncate). divisor (NULL: none)
 * replaces the count, which is the window's within the padded input
 * (count_include_pad) or within the input. */
nd_status nd_avg_pool(nd_err *e, nd_tensor *out, const nd_tensor *t, int dims,
                      const int64_t *kernel, const int64_t *stride,
                      const int64_t *padding, int ceil_mode,
                      int count_include_pad, const int64_t *divisor);
/* Floats only. size[k] >= 0 is the output's size along spatial dim k, -1
 * the input's; output i averages [floor(i*n/m), ceil((i+1)*n/m)). */
nd_status nd_adaptive_avg_pool(nd_err *e, nd_tensor *out, const nd_tensor *t,
                               int dims, const int64_t *size);
/* ---- indexing with tensors (src/core/kernels/index.c, mask.c) ------------------- */
/* Index tensors are int32 or int64 and hold positions counted from
 * e->base (0 for C callers, 1 from the Lua binding); negative positions
 * count from the end; any other value is refused before anything is
 * written. Shapes follow PyTorch. Results are fresh row-major tensors;
 * the in-place forms refuse a target whose elements overlap and read
 * sources that overlap the target through a copy. */
nd_status nd_index_select(nd_err *e, nd_tensor *out, const nd_tensor *t,
                          int dim, const nd_tensor *index); /* index 1-D */
nd_status nd_gather(nd_err *e, nd_tensor *out, const nd_tensor *t, int dim,
                    const nd_tensor *index);
/* index holds flat row-major positions into t; out has index's shape. */
nd_status nd_take(nd_err *e, nd_tensor *out, const nd_tensor *t,
                  const nd_tensor *index);
/* t[.., index[i..], ..] = src[i..] along dim; src of t's dims, or 0-d (a
 * value); converted to t's dtype. Duplicate positions: one write wins. */
nd_status nd_scatter(nd_err *e, const nd_tensor *t, int dim,
                     const nd_tensor *index, const nd_tensor *src);
/* As nd_scatter, adding (bool: or); src may not be of a higher kind.
 * float16 / bfloat16: each add in float32, rounded on store (PyTorch's). */
nd_status nd_scatter_add(nd_err *e, const nd_tensor *t, int dim,
                         const nd_tensor *index, const nd_tensor *src);
/* index 1-D (or 0-d); src has t's sizes with size[dim] = numel(index). */
nd_status nd_index_add(nd_err *e, const nd_tensor *t, int dim,
                       const nd_tensor *index, const nd_tensor *src,
                       double alpha);
nd_status nd_index_copy(nd_err *e, const nd_tensor *t, int dim,
                        const nd_tensor *index, const nd_tensor *src);
nd_status nd_index_fill(nd_err *e, const nd_tensor *t, int dim,
                        const nd_tensor *index, const nd_tensor *value);
/* Masks are bool and broadcast to t; value is 0-d. */
nd_status nd_masked_fill(nd_err *e, const nd_tensor *t, const nd_tensor *mask,
                         const nd_tensor *value);
/* The selected elements in row-major order, 1-D. */
nd_status nd_masked_select(nd_err *e, nd_tensor *out, const nd_tensor *t,
                           const nd_tensor *mask);
/* Selected positions, in row-major order, take src's elements in its
 * row-major order; src needs at least as many elements as are selected. */
nd_status nd_masked_scatter(nd_err *e, const nd_tensor *t,
                            const nd_tensor *mask, const nd_tensor *src);
/* int64 {n, t->ndim}: positions (from e->base) of nonzero elements. */
nd_status nd_nonzero(nd_err *e, nd_tensor *out, const nd_tensor *t);

/* ---- linear algebra through OpenBLAS's LAPACK (src/core/linalg/) ------ */
/* NumPy's numpy.linalg on the last two dims, batched over the leading ones
 * (solve and lstsq broadcast them). float32 computes in float32, every
 * other dtype in float64. Inputs may be any view and are never written;
 * results are fresh row-major tensors written into unset headers (left
 * unset on failure). Singular input to solve/inv (matrix_power n < 0), and
 * non-positive-definite input to cholesky fail naming the function and the
 * batch index; NaN/inf input to the SVD and eigen routines fails (LAPACK
 * may not converge on it). det/slogdet/cond/norm/matrix_rank give 0-d
 * results for one matrix. */
nd_status nd_linalg_solve(nd_err *e, nd_tensor *out, const nd_tensor *a,
                          const nd_tensor *b); /* b 1-D: a vector */
nd_status nd_linalg_inv(nd_err *e, nd_tensor *out, const nd_tensor *a);
nd_status nd_linalg_det(nd_err *e, nd_tensor *out, const nd_tensor *a);
nd_status nd_linalg_slogdet(nd_err *e, nd_tensor *sign, nd_tensor *logabsdet,
                            const nd_tensor *a);
nd_status nd_linalg_cholesky(nd_err *e, nd_tensor *out, const nd_tensor *a);
nd_status nd_linalg_qr(nd_err *e, nd_tensor *q, nd_tensor *r,
                       const nd_tensor *a);  /* reduced */
nd_status nd_linalg_svd(nd_err *e, nd_tensor *u, nd_tensor *s, nd_tensor *vh,
                        const nd_tensor *a); /* reduced */
nd_status nd_linalg_svdvals(nd_err *e, nd_tensor *s, const nd_tensor *a);
/* Ascending eigenvalues, eigenvectors as columns; reads the lower triangle. */
nd_status nd_linalg_eigh(nd_err *e, nd_tensor *w, nd_tensor *v,
                         const nd_tensor *a);
nd_status nd_linalg_eigvalsh(nd_err *e, nd_tensor *w, const nd_tensor *a);
nd_status nd_linalg_lstsq(nd_err *e, nd_tensor *out, const nd_tensor *a,
                          const nd_tensor *b);
nd_status nd_linalg_pinv(nd_err *e, nd_tensor *out, const nd_tensor *a);
nd_status nd_linalg_matrix_rank(nd_err *e, nd_tensor *out,
                                const nd_tensor *a); /* int64 */
nd_status nd_linalg_matrix_power(nd_err *e, nd_tensor *out,
                                 const nd_tensor *a, int64_t n);
/* ord ND_NORM_P takes p (a number, +-HUGE_VAL for +-inf). */
enum { ND_NORM_P, ND_NORM_FRO, ND_NORM_NUC };
nd_status nd_linalg_norm(nd_err *e, nd_tensor *out, const nd_tensor *a,
                         int ord, double p);
nd_status nd_linalg_cond(nd_err *e, nd_tensor *out, const nd_tensor *a);
/* What nd_linalg_<name>(a [, b]) would do, without doing it: the routines
 * ("dgetrf+dgetri", "unrolled4x4", ...), their flags in words, the number
 * of matrices, and how each operand is copied into LAPACK's workspace:
 * not at all, straight, transposing, gathered from strides, or converted
 * to the computation's dtype. */
enum { ND_LINALG_NONE, ND_LINALG_STRAIGHT, ND_LINALG_TRANSPOSE,
       ND_LINALG_GATHER, ND_LINALG_CONVERT };
typedef struct nd_lapack_plan {
  char routine[64], flags[128];
  int dtype;
  int64_t batch;
  int copy_a, copy_b;
} nd_lapack_plan;
nd_status nd_linalg_plan(nd_err *e, nd_lapack_plan *plan, const char *name,
                         const nd_tensor *a, const nd_tensor *b);

/* ---- filtering and resampling (src/core/conv/filter.c, interpolate.c) -- */
/* The output sizes of the filters, once: X(ENUM, name). */
#define ND_FILTER_MODES(X) X(FULL, full) X(SAME, same) X(VALID, valid)
typedef enum nd_filter_mode {
#define ND_X_ENUM(E, name) ND_FILTER_##E,
  ND_FILTER_MODES(ND_X_ENUM)
#undef ND_X_ENUM
  ND_NFILTER_MODES
} nd_filter_mode;
/* SciPy's boundaries of the 2-D filters: X(ENUM, name). */
#define ND_BOUNDARIES(X) X(FILL, fill) X(WRAP, wrap) X(SYMM, symm)
typedef enum nd_boundary {
#define ND_X_ENUM(E, name) ND_BOUNDARY_##E,
  ND_BOUNDARIES(ND_X_ENUM)
#undef ND_X_ENUM
  ND_NBOUNDARIES
} nd_boundary;
/* NumPy 1.24's convolve and correlate of 1-D (or 0-d) a and v, neither
 * empty: the longer one is the signal (correlate then reverses its
 * result, as NumPy); "same" centres at len / 2. The result's dtype is
 * the operands' promoted (integers stay integers and wrap, as NumPy's;
 * bool with bool is refused); any strides; a new 1-D result. */
nd_status nd_convolve(nd_err *e, nd_tensor *out, const nd_tensor *a,
                      const nd_tensor *v, int mode);
nd_status nd_correlate(nd_err *e, nd_tensor *out, const nd_tensor *a,
                       const nd_tensor *v, int mode);
/* SciPy 1.10's convolve2d and correlate2d of 2-D a and k, neither empty:
 * boundary fill (with *fill, NULL: 0; an integer result needs a whole
 * fill), wrap or symm (fill NULL); mode valid swaps them when k is the
 * larger in every dim (correlate2d then reverses its result) and refuses
 * a pair where neither is. dtypes as nd_convolve's. A float16 or bfloat16
 * result (of both filters) is computed in float32 and rounded once. */
nd_status nd_convolve2d(nd_err *e, nd_tensor *out, const nd_tensor *a,
                        const nd_tensor *k, int mode, int boundary,
                        const double *fill);
nd_status nd_correlate2d(nd_err *e, nd_tensor *out, const nd_tensor *a,
                         const nd_tensor *k, int mode, int boundary,
                         const double *fill);
/* PyTorch 1.13's F.interpolate modes: X(ENUM, name, input dims). */
#define ND_INTERP_MODES(X)                                                  \
  X(NEAREST, nearest, 0) X(LINEAR, linear, 3) X(BILINEAR, bilinear, 4)      \
  X(BICUBIC, bicubic, 4) X(AREA, area, 0)
typedef enum nd_interp_mode {
#define ND_X_ENUM(E, name, dims) ND_INTERP_##E,
  ND_INTERP_MODES(ND_X_ENUM)
#undef ND_X_ENUM
  ND_NINTERP_MODES
} nd_interp_mode;
/* F.interpolate of the float t, (N, C, L) or (N, C, H, W)
 * (nearest and area take either; linear 3-D; bilinear, bicubic 4-D): the
 * output's spatial sizes from size (one per spatial dim), or from scale
 * (floor(in * scale), the scale itself used for the coordinates:
 * recompute_scale_factor off) -- exactly one of the two non-NULL.
 * align_corners: -1 not given (false), 0, 1; given with nearest or area is
 * refused. Bicubic uses A = -0.75 and clamps its taps to the border;
 * area is adaptive average pooling. A new row-major result. float16 and
 * bfloat16 are computed in float32 and rounded once to t's dtype. */
nd_status nd_interpolate(nd_err *e, nd_tensor *out, const nd_tensor *t,
                         const int64_t *size, const double *scale, int mode,
                         int align_corners);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif
