/* dtype conversion, the one place values change type: one direct loop per
 * (destination, source) pair, all from one body, so each contiguous pair
 * vectorises (no staging buffer). Floats to integers truncate and
 * saturate, NaN gives 0; integers to narrower integers wrap; anything
 * nonzero is true; int64 to float32 rounds through double. */
#ifndef __clang__ /* clang vectorises these loops at -O2 already */
#pragma GCC optimize("O3")
#endif
#include "core.h"

/* x86-64-v4 (AVX-512 F/BW/DQ/VL) has the packed float <-> int64 and byte
 * conversions; AVX2 lacks the int64 ones. */
#if ND_IFUNC
#define CV_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define CV_CLONES
#endif

/* The float type x is, or double when x is an integer, so the
 * float-to-integer branch type-checks for every source. */
#define CV_REAL(x) __typeof__(_Generic((x), float: 0.0f, default: 0.0))
/* 2^bits, one past the largest integer D (kind DK) holds. */
#define CV_TOP(D, DK) ((DK) == 'u' ? 256.0 : sizeof(D) == 4 ? 0x1p31 : 0x1p63)
/* That integer (2^63 - 1 is no double). */
#define CV_MAX(D, DK) \
  ((DK) == 'u' ? 255 : sizeof(D) == 4 ? INT32_MAX : INT64_MAX)
/* The largest value of float type R that is below CV_TOP: casting any R in
 * [lo, this] to D is exact and defined (C gives no meaning to an
 * out-of-range cast), and R values above it are all >= CV_TOP. */
#define CV_HIF(D, DK, R)                                                    \
  (CV_TOP(D, DK) - (sizeof(R) == 4 && CV_TOP(D, DK) > 0x1p24                \
                        ? CV_TOP(D, DK) / 0x1p24                            \
                    : sizeof(R) == 8 && CV_TOP(D, DK) > 0x1p53              \
                        ? CV_TOP(D, DK) / 0x1p53                            \
                        : 1))

/* r = x (of S, kind SK) as D (kind DK). Kinds are constants: each pair
 * keeps one branch. Float to integer: clamp into [lo, hi] first (a NaN
 * fails `v > lo`), so the cast is in range, then select the top when hi
 * is below it and 0 for NaN: no branch, so the loop vectorises. */
#define CV_ONE(D, DK, S, SK, x, r)                                          \
  do {                                                                      \
    if ((DK) == 'b') {                                                      \
      r = (x) != 0;                                                         \
    } else if ((DK) == 'f' && (SK) != 'f' && sizeof(S) == 8) {              \
      r = (D)(double)(x);                                                   \
    } else if ((DK) == 'f' || (SK) != 'f') {                                \
      r = (D)(x);                                                           \
    } else {                                                                \
      CV_REAL(x) v_ = (CV_REAL(x))(x), c_;                                  \
      const CV_REAL(x) lo_ = (DK) == 'u' ? 0 : -CV_TOP(D, DK),              \
                       hi_ = CV_HIF(D, DK, v_);                             \
      c_ = v_ > lo_ ? v_ : lo_;                                             \
      c_ = c_ < hi_ ? c_ : hi_;                                             \
      D t_ = (D)c_;                                                         \
      if (CV_HIF(D, DK, v_) + 1 < CV_TOP(D, DK))                            \
        t_ = v_ > hi_ ? (D)CV_MAX(D, DK) : t_;                              \
      if ((DK) != 'u') t_ = v_ == v_ ? t_ : 0;                              \
      r = t_;                                                               \
    }                                                                       \
  } while (0)

/* One source case of a destination's function: the contiguous loop with
 * constant strides (the one that vectorises), then the strided one. */
#define CV_CASE(SE, sn, S, SK)                                              \
  case ND_##SE:                                                             \
    if (ds == (int64_t)sizeof(D) && ss == (int64_t)sizeof(S)) {             \
      D *restrict q = (D *)(void *)d;                                       \
      const S *restrict p = (const S *)(const void *)s;                     \
      for (int64_t i = 0; i < n; i++) CV_ONE(D, DK, S, SK, p[i], q[i]);     \
    } else {                                                                \
      for (int64_t i = 0; i < n; i++)                                       \
        CV_ONE(D, DK, S, SK, *(const S *)(const void *)(s + i * ss),        \
               *(D *)(void *)(d + i * ds));                                 \
    }                                                                       \
    return;

/* The dtype list crossed with itself: each destination's function
 * switches over ND_DTYPES(CV_CASE). A macro cannot expand inside its own
 * expansion, so that inner ND_DTYPES is named through CV_SOURCES, which
 * only becomes ND_DTYPES when CV_EXPAND rescans the whole. */
#define CV_NOTHING()
#define CV_SOURCES() ND_DTYPES
#define CV_EXPAND(...) __VA_ARGS__
#define CV_DEST(DE, dn, DT, DKIND)                                          \
  CV_CLONES static void to_##dn(char *restrict d, int64_t ds, int sdt,      \
                                const char *restrict s, int64_t ss,         \
                                int64_t n) {                                \
    typedef DT D;                                                           \
    enum { DK = DKIND };                                                    \
    switch (sdt) { CV_SOURCES CV_NOTHING() ()(CV_CASE) }                    \
  }
CV_EXPAND(ND_DTYPES(CV_DEST))

typedef void (*cv_fn)(char *restrict, int64_t, int, const char *restrict,
                      int64_t, int64_t);
static const cv_fn to_dtype[ND_NDTYPES] = {
#define CV_ENTRY(E, name, T, kind) [ND_##E] = to_##name,
    ND_DTYPES(CV_ENTRY)
#undef CV_ENTRY
};

/* n copies of one es-byte value into a contiguous run: memset when its
 * bytes are all equal (zeros, uint8, bool), else one vectorised store
 * loop (the widest stores measured fastest; non-temporal ones were slower
 * at 4-8 MB, the caches here being large). */
CV_CLONES static void fill_run(char *d, const char *v, int64_t es, int64_t n) {
  int same = 1;
  for (int64_t k = 1; k < es; k++) same &= v[k] == v[0];
  if (same) {
    memset(d, (unsigned char)v[0], (size_t)(n * es));
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

/* d and s never overlap: nd_copy reads an overlapping source through a
 * copy, and the other callers convert to or from their own buffers. */
void nd_convert(int ddt, char *d, int64_t dst, int sdt, const char *s,
                int64_t sst, int64_t n) {
  if (sst == 0 && n > 1 && dst == nd_dtype_size(ddt)) { /* fill_, broadcasts */
    char v[8];
    to_dtype[ddt](v, 0, sdt, s, 0, 1);
    fill_run(d, v, dst, n);
    return;
  }
  to_dtype[ddt](d, dst, sdt, s, sst, n);
}
