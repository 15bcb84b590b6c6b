/* dtype conversion, the one place values change type: one direct loop per
 * (destination, source) pair, all from one body, so each contiguous pair
 * vectorises (no staging buffer). Floats to integers truncate and
 * saturate, NaN gives 0; integers to narrower integers wrap; anything
 * nonzero is true; int64 to float32 rounds through double. */
#ifndef __clang__ /* clang vectorises these loops at -O2 already */
#pragma GCC optimize("O3")
#endif
#include "kernels.h"

/* x86-64-v4 (AVX-512 F/BW/DQ/VL) has the packed float <-> int64 and byte
 * conversions; AVX2 lacks the int64 ones. */
#define CV_CLONES ND_CLONES("arch=x86-64-v4", "avx2", "default")

/* The float type x is, or double when x is an integer, so the
 * float-to-integer branch type-checks for every source. */
#define CV_REAL(x) __typeof__(_Generic((x), float: 0.0f, default: 0.0))
/* One past the largest integer D (kind DK) holds: 2^bits, or 2^(bits-1)
 * when signed. */
#define CV_TOP(D, DK)                                                       \
  (((DK) == 'u' ? 2.0 : 1.0) *                                              \
   (sizeof(D) == 1 ? 0x1p7 : sizeof(D) == 2 ? 0x1p15                        \
    : sizeof(D) == 4 ? 0x1p31 : 0x1p63))
/* That integer as a uint64_t (2^63 - 1 and 2^64 - 1 are no doubles), and
 * the least. */
#define CV_MAX(D, DK)                                                       \
  ((DK) == 'u' ? (uint64_t)(D)-1                                            \
               : ((uint64_t)1 << (8 * sizeof(D) - 1)) - 1)
#define CV_MIN(D, DK) ((DK) == 'u' ? 0 : -(int64_t)(CV_MAX(D, DK)) - 1)
/* The largest value of float type R that is below CV_TOP: casting any R in
 * [lo, this] to D is exact and defined (C gives no meaning to an
 * out-of-range cast), and R values above it are all >= CV_TOP. */
#define CV_HIF(D, DK, R)                                                    \
  (CV_TOP(D, DK) - (sizeof(R) == 4 && CV_TOP(D, DK) > 0x1p24                \
                        ? CV_TOP(D, DK) / 0x1p24                            \
                    : sizeof(R) == 8 && CV_TOP(D, DK) > 0x1p53              \
                        ? CV_TOP(D, DK) / 0x1p53                            \
                        : 1))

/* c ? a : b by masking the bits: a plain ?: here lets GCC move the cast
 * that follows into both arms and apply the selects after narrowing, one
 * mask per byte lane (float64 -> uint8 ran 15% slower). */
#define CV_PICK_FN(R, U)                                                    \
  static inline R cv_pick_##R(int c, R a, R b) {                            \
    U x, y, m = -(U)c;                                                      \
    memcpy(&x, &a, sizeof x);                                               \
    memcpy(&y, &b, sizeof y);                                               \
    x = (x & m) | (y & ~m);                                                 \
    memcpy(&a, &x, sizeof a);                                               \
    return a;                                                               \
  }
CV_PICK_FN(float, uint32_t)
CV_PICK_FN(double, uint64_t)
#define CV_PICK(c, a, b) \
  _Generic((a), float: cv_pick_float, default: cv_pick_double)(c, a, b)

/* Float to integer has two forms, each defined for every value (no
 * out-of-range cast, which C leaves undefined): truncate, saturate, NaN
 * gives 0. The masked one clamps first (a NaN fails `v > lo`) and adds
 * what the cast of the clamped top lacks; it vectorises best where the
 * clone running has the packed conversions (AVX2 for 32-bit results,
 * AVX-512 DQ for int64). The branching one suits the rest: scalar loops
 * and SSE2, where it ran up to 2x faster. */
#define CV_F2I_MASKED(D, DK, v, r)                                          \
  do {                                                                      \
    const __typeof__(v) lo_ = (DK) == 'u' ? 0 : -CV_TOP(D, DK),             \
                        hi_ = CV_HIF(D, DK, v);                             \
    __typeof__(v) c_ = CV_PICK(v > lo_, v, lo_);                            \
    c_ = CV_PICK(c_ < hi_, c_, hi_);                                        \
    if ((DK) != 'u') c_ = CV_PICK(v == v, c_, 0);                           \
    r = (D)c_ +                                                             \
        (D)(v > hi_) * (D)(CV_MAX(D, DK) - (uint64_t)CV_HIF(D, DK, v));      \
  } while (0)
#define CV_F2I_BRANCHING(D, DK, v, r)                                       \
  r = v != v ? 0                                                            \
    : v <= ((DK) == 'u' ? 0 : -CV_TOP(D, DK)) ? (D)CV_MIN(D, DK)            \
    : v >= CV_TOP(D, DK) ? (D)CV_MAX(D, DK) : (D)v
static int cv_masked32, cv_masked64; /* which form: see cv_pick_forms */
#define CV_MASKED(D, DK, SK)                                                \
  ((SK) == 'f' && ((DK) == 'i' || (DK) == 'u') &&                           \
   (sizeof(D) == 8 ? cv_masked64 : cv_masked32))

/* r = x (of S, kind SK) as D (kind DK); MASKED picks the float-to-integer
 * form. Kinds are constants: each pair keeps one branch. */
#define CV_ONE(D, DK, S, SK, x, r, MASKED)                                  \
  do {                                                                      \
    if ((DK) == 'b') {                                                      \
      r = (x) != 0;                                                         \
    } else if ((DK) == 'f' || (SK) != 'f') {                                \
      r = (D)(x);                                                           \
    } else {                                                                \
      CV_REAL(x) v_ = (CV_REAL(x))(x);                                      \
      if (MASKED)                                                           \
        CV_F2I_MASKED(D, DK, v_, r);                                        \
      else                                                                  \
        CV_F2I_BRANCHING(D, DK, v_, r);                                     \
    }                                                                       \
  } while (0)

/* One source case of a destination's function: the contiguous loops with
 * constant strides (the ones that vectorise), then the strided one. */
#define CV_CASE(SE, sn, S, SK)                                              \
  case ND_##SE:                                                             \
    if (ds == (int64_t)sizeof(D) && ss == (int64_t)sizeof(S)) {             \
      D *restrict q = (D *)(void *)d;                                       \
      const S *restrict p = (const S *)(const void *)s;                     \
      if (CV_MASKED(D, DK, SK))                                             \
        for (int64_t i = 0; i < n; i++) CV_ONE(D, DK, S, SK, p[i], q[i], 1); \
      else                                                                  \
        for (int64_t i = 0; i < n; i++) CV_ONE(D, DK, S, SK, p[i], q[i], 0); \
    } else {                                                                \
      for (int64_t i = 0; i < n; i++)                                       \
        CV_ONE(D, DK, S, SK, *(const S *)(const void *)(s + i * ss),        \
               *(D *)(void *)(d + i * ds), 0);                              \
    }                                                                       \
    return;

/* The dtype list crossed with itself: each destination's function
 * switches over ND_NATIVE_DTYPES(CV_CASE). A macro cannot expand inside its own
 * expansion, so that inner ND_DTYPES is named through CV_SOURCES, which
 * only becomes ND_DTYPES when CV_EXPAND rescans the whole. */
#define CV_NOTHING()
#define CV_SOURCES() ND_NATIVE_DTYPES
#define CV_EXPAND(...) __VA_ARGS__
#define CV_DEST(DE, dn, DT, DKIND)                                          \
  CV_CLONES static void to_##dn(char *restrict d, int64_t ds, int sdt,      \
                                const char *restrict s, int64_t ss,         \
                                int64_t n) {                                \
    typedef DT D;                                                           \
    enum { DK = DKIND };                                                    \
    switch (sdt) { CV_SOURCES CV_NOTHING() ()(CV_CASE) }                    \
  }
CV_EXPAND(ND_NATIVE_DTYPES(CV_DEST))

typedef void (*cv_fn)(char *restrict, int64_t, int, const char *restrict,
                      int64_t, int64_t);
static const cv_fn to_dtype[ND_NDTYPES] = {
#define CV_ENTRY(E, name, T, kind) [ND_##E] = to_##name,
    ND_NATIVE_DTYPES(CV_ENTRY)
#undef CV_ENTRY
};

/* The clone target_clones runs follows the CPU, so the CPU tells which
 * float-to-integer form suits it (measured: the masked one is up to 2x
 * faster with AVX2 / AVX-512, 2x slower without). */
#if ND_IFUNC
__attribute__((constructor)) static void cv_pick_forms(void) {
  __builtin_cpu_init();
  cv_masked64 = __builtin_cpu_supports("avx512f") &&
                __builtin_cpu_supports("avx512dq") &&
                __builtin_cpu_supports("avx512bw") &&
                __builtin_cpu_supports("avx512vl");
  cv_masked32 = __builtin_cpu_supports("avx2");
}
#endif

/* n copies of one es-byte value into a contiguous run: memset when its
 * bytes are all equal (zeros, uint8, bool), else one vectorised store
 * loop (the widest stores measured fastest; non-temporal ones were slower
 * at 4-8 MB, the caches here being large). */
CV_CLONES static void fill_run(char *d, const char *v, int64_t es, int64_t n) {
  int same = 1;
  for (int64_t k = 1; k < es; k++) same &= v[k] == v[0];
  if (same) {
    memset(d, (unsigned char)v[0], (size_t)(n * es));
  } else if (es == 2) {
    uint16_t x, *q = (uint16_t *)(void *)d;
    memcpy(&x, v, 2);
    for (int64_t i = 0; i < n; i++) q[i] = x;
  } else if (es == 4) {
    uint32_t x, *q = (uint32_t *)(void *)d;
    memcpy(&x, v, 4);
    for (int64_t i = 0; i < n; i++) q[i] = x;
  } else {
    uint64_t x, *q = (uint64_t *)(void *)d;
    memcpy(&x, v, 8);
    for (int64_t i = 0; i < n; i++) q[i] = x;
  }
}

/* ---- float16 and bfloat16 (half.c converts) ---- */
enum { HB = 512 }; /* elements per block on the stack */
/* Sources whose values float32 holds exactly: through float32 blocks. */
static int exact_in_f32(int dt) {
  return dt == ND_FLOAT32 || nd_is_half(dt) || dt == ND_BOOL ||
         nd_dtype_size(dt) <= 2;
}
/* m elements of s (stride ss) as contiguous float32 into b. */
static void load_f32(float *b, int sdt, const char *s, int64_t ss,
                     int64_t m) {
  if (!nd_is_half(sdt)) {
    to_float32((char *)b, 4, sdt, s, ss, m);
    return;
  }
  uint16_t h[HB];
  const uint16_t *p = (const uint16_t *)(const void *)s;
  if (ss != 2) {
    for (int64_t i = 0; i < m; i++) memcpy(&h[i], s + i * ss, 2);
    p = h;
  }
  if (sdt == ND_FLOAT16) nd_half_to_float_n(b, p, m);
  else nd_bf16_to_float_n(b, p, m);
}
static void store_half(int ddt, uint16_t *q, const float *b, int64_t m) {
  if (ddt == ND_FLOAT16) nd_float_to_half_n(q, b, m);
  else nd_float_to_bf16_n(q, b, m);
}
/* A value float32 may not hold exactly, rounded once into a half. */
static uint16_t wide_to_half(int bf, int sdt, const char *p) {
  union { double d; int32_t i32; uint32_t u32; int64_t i64; uint64_t u64; } v;
  memcpy(&v, p, (size_t)nd_dtype_size(sdt));
  switch (sdt) {
  case ND_FLOAT64: return bf ? nd_double_to_bf16(v.d) : nd_double_to_half(v.d);
  case ND_INT32: return nd_i64_to_half(v.i32, bf);
  case ND_UINT32: return nd_u64_to_half(v.u32, bf);
  case ND_INT64: return nd_i64_to_half(v.i64, bf);
  default: return nd_u64_to_half(v.u64, bf);
  }
}
static void half_convert(int ddt, char *d, int64_t ds, int sdt, const char *s,
                         int64_t ss, int64_t n) {
  if (ddt == ND_FLOAT32 && ds == 4 && ss == 2) { /* the bulk forms at once */
    load_f32((float *)(void *)d, sdt, s, ss, n);
    return;
  }
  if (sdt == ND_FLOAT32 && ss == 4 && ds == 2) {
    store_half(ddt, (uint16_t *)(void *)d, (const float *)(const void *)s, n);
    return;
  }
  if (nd_is_half(ddt) && !exact_in_f32(sdt)) {
    for (int64_t i = 0; i < n; i++) {
      uint16_t h = wide_to_half(ddt == ND_BFLOAT16, sdt, s + i * ss);
      memcpy(d + i * ds, &h, 2);
    }
    return;
  }
  float b[HB];
  uint16_t h[HB];
  for (int64_t done = 0; done < n; done += HB) {
    int64_t m = n - done < HB ? n - done : HB;
    load_f32(b, sdt, s + done * ss, ss, m);
    char *q = d + done * ds;
    if (!nd_is_half(ddt)) {
      to_dtype[ddt](q, ds, ND_FLOAT32, (const char *)b, 4, m);
    } else if (ds == 2) {
      store_half(ddt, (uint16_t *)(void *)q, b, m);
    } else {
      store_half(ddt, h, b, m);
      for (int64_t i = 0; i < m; i++) memcpy(q + i * ds, &h[i], 2);
    }
  }
}

/* d and s never overlap: nd_copy reads an overlapping source through a
 * copy, and the other callers convert to or from their own buffers. */
void nd_convert(int ddt, char *d, int64_t dst, int sdt, const char *s,
                int64_t sst, int64_t n) {
  int half = nd_is_half(ddt) || nd_is_half(sdt);
  if (sst == 0 && n > 1 && dst == nd_dtype_size(ddt)) { /* fill_, broadcasts */
    char v[8];
    if (half) half_convert(ddt, v, 0, sdt, s, 0, 1);
    else to_dtype[ddt](v, 0, sdt, s, 0, 1);
    fill_run(d, v, dst, n);
    return;
  }
  if (half) half_convert(ddt, d, dst, sdt, s, sst, n);
  else to_dtype[ddt](d, dst, sdt, s, sst, n);
}
