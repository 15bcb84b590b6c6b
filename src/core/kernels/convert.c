/* dtype conversion, the one place values change type: n elements are
 * staged through a small buffer of double (or int64 when both sides are
 * integers, so no precision is lost), giving O(dtypes) loops instead of
 * O(dtypes^2). Floats to integers truncate and saturate, NaN gives 0;
 * integers to narrower integers wrap; anything nonzero is true. */
#ifndef __clang__ /* clang vectorises these loops at -O2 already */
#pragma GCC optimize("O3")
#endif
#include "core.h"

enum { CHUNK = 256 };

/* BODY once with the stride a compile-time constant (so the contiguous
 * case vectorises) and once with it variable. */
#define STRIDED(st, ES, BODY)                                               \
  do {                                                                      \
    if ((st) == (ES)) {                                                     \
      const int64_t st_ = (ES);                                             \
      for (int64_t i = 0; i < n; i++) BODY;                                 \
    } else {                                                                \
      const int64_t st_ = (st);                                             \
      for (int64_t i = 0; i < n; i++) BODY;                                 \
    }                                                                       \
  } while (0)
#define AT(T, p) (*(T *)((p) + i * st_))

#define CV_LOAD(E, name, T, kind)                                           \
  case ND_##E:                                                              \
    if (kind == 'f' && via_int) /* never: via_int means no float side */    \
      break;                                                                \
    if (via_int)                                                            \
      STRIDED(st, (int64_t)sizeof(T), bi[i] = (int64_t)AT(const T, s));     \
    else                                                                    \
      STRIDED(st, (int64_t)sizeof(T), bd[i] = (double)AT(const T, s));      \
    break;
#if ND_IFUNC
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void load(int dt, const char *restrict s, int64_t st, int64_t n, int via_int,
                 double *restrict bd, int64_t *restrict bi) {
  switch (dt) { ND_DTYPES(CV_LOAD) }
}

#define CV_STORE(E, name, T, kind)                                          \
  case ND_##E:                                                              \
    if (kind == 'b' && via_int)                                             \
      STRIDED(st, (int64_t)sizeof(T), AT(T, d) = bi[i] != 0);               \
    else if (kind == 'b')                                                   \
      STRIDED(st, (int64_t)sizeof(T), AT(T, d) = bd[i] != 0);               \
    else if (kind == 'f' && via_int)                                        \
      STRIDED(st, (int64_t)sizeof(T), AT(T, d) = (T)bi[i]);                 \
    else if (kind == 'f')                                                   \
      STRIDED(st, (int64_t)sizeof(T), AT(T, d) = (T)bd[i]);                 \
    else if (via_int)                                                       \
      STRIDED(st, (int64_t)sizeof(T), AT(T, d) = (T)(uint64_t)bi[i]);       \
    else if (sizeof(T) < 8) /* clamped first: an exact, vectorisable cast */ \
      STRIDED(st, (int64_t)sizeof(T), AT(T, d) = (T)(int32_t)clamp_d(bd[i], lo, hi)); \
    else                                                                    \
      STRIDED(st, (int64_t)sizeof(T), AT(T, d) = (T)nd_f2i(bd[i], lo, hi)); \
    break;
/* NaN to 0, then into [lo, hi] (int32 and uint8 bounds are exact doubles). */
static inline double clamp_d(double v, double lo, double hi) {
  v = v == v ? v : 0;
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}
#if ND_IFUNC
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void store(int dt, char *restrict d, int64_t st, int64_t n, int via_int,
                  const double *restrict bd, const int64_t *restrict bi) {
  int64_t lo = dt == ND_INT32 ? INT32_MIN : dt == ND_INT64 ? INT64_MIN : 0;
  int64_t hi = dt == ND_INT32 ? INT32_MAX : dt == ND_INT64 ? INT64_MAX : 255;
  switch (dt) { ND_DTYPES(CV_STORE) }
}

/* Byte to bool (uint8 or bool sources), the common mask case: direct. */
#if ND_IFUNC
__attribute__((target_clones("avx2", "default")))
#endif
static void bytes_to_bool(uint8_t *restrict d, const uint8_t *restrict s,
                          int64_t n) {
  for (int64_t i = 0; i < n; i++) d[i] = s[i] != 0;
}

/* n copies of one es-byte value into a contiguous run: memset when its
 * bytes are all equal (zeros, uint8, bool), else one vectorised store. */
static void fill_run(char *d, const char *v, int64_t es, int64_t n) {
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

void nd_convert(int ddt, char *d, int64_t dst, int sdt, const char *s,
                int64_t sst, int64_t n) {
  if (sst == 0 && n > 1 && dst == nd_dtype_size(ddt)) { /* fill_, broadcasts */
    char v[8];
    nd_convert(ddt, v, 0, sdt, s, 0, 1);
    fill_run(d, v, dst, n);
    return;
  }
  if (dst == 1 && sst == 1 && ddt == ND_BOOL &&
      (sdt == ND_UINT8 || sdt == ND_BOOL) && (d + n <= s || s + n <= d)) {
    bytes_to_bool((uint8_t *)d, (const uint8_t *)s, n);
    return;
  }
  double bd[CHUNK];
  int64_t bi[CHUNK];
  int via_int = nd_dtype_kind(sdt) != 'f' && nd_dtype_kind(ddt) != 'f';
  for (int64_t done = 0; done < n; done += CHUNK) {
    int64_t m = n - done < CHUNK ? n - done : CHUNK;
    load(sdt, s, sst, m, via_int, bd, bi);
    store(ddt, d, dst, m, via_int, bd, bi);
    s += m * sst;
    d += m * dst;
  }
}

