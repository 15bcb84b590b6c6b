/* Merge sorts of unsigned 64-bit and 32-bit items in AVX-512 registers,
 * for the short lanes of a sort (a row of 1000 fits L1): blocks of eight
 * registers are sorted by bitonic networks, then runs are merged
 * pairwise, two registers at a time, by the same networks. Comparisons
 * only: no compress-stores (slow on some AVX-512 CPUs) and no
 * data-dependent branches. Not stable, but sort.c's items are distinct
 * (key bits above position bits), so the order of the keys comes out
 * stable. One template serves both widths; only the in-register
 * permutations differ. */
#ifndef __clang__
#pragma GCC optimize("O3")
#endif
#include "sort_merge.h"
#include <stddef.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define AVX512 __attribute__((target("avx512f")))
#define INLINE AVX512 static inline __attribute__((always_inline))

int nd_merge_sort_ok(void) { return __builtin_cpu_supports("avx512f"); }

/* Lane i of v compared with lane i ^ d (p: v so permuted): the lanes in
 * mask hi take the larger. */
#define STEP64(v, p, hi)                                                    \
  _mm512_mask_blend_epi64(hi, _mm512_min_epu64(v, p), _mm512_max_epu64(v, p))
#define STEP32(v, p, hi)                                                    \
  _mm512_mask_blend_epi32(hi, _mm512_min_epu32(v, p), _mm512_max_epu32(v, p))

/* 8 lanes of 64 bits. */
INLINE __m512i rev64(__m512i v) {
  return _mm512_permutexvar_epi64(_mm512_set_epi64(0, 1, 2, 3, 4, 5, 6, 7), v);
}
#define SWAP1_64(v) _mm512_shuffle_epi32(v, _MM_PERM_BADC)
#define SWAP2_64(v) _mm512_permutex_epi64(v, _MM_SHUFFLE(1, 0, 3, 2))
#define REV4_64(v) _mm512_permutex_epi64(v, _MM_SHUFFLE(0, 1, 2, 3))
#define SWAP4_64(v) _mm512_shuffle_i64x2(v, v, _MM_SHUFFLE(1, 0, 3, 2))
/* A bitonic register, sorted. */
INLINE __m512i clean1_64(__m512i v) {
  v = STEP64(v, SWAP4_64(v), 0xF0);
  v = STEP64(v, SWAP2_64(v), 0xCC);
  return STEP64(v, SWAP1_64(v), 0xAA);
}
/* Any register, sorted: pairs, then fours, then eight. */
INLINE __m512i sort1_64(__m512i v) {
  v = STEP64(v, SWAP1_64(v), 0xAA);
  v = STEP64(v, REV4_64(v), 0xCC);
  v = STEP64(v, SWAP1_64(v), 0xAA);
  v = STEP64(v, rev64(v), 0xF0);
  v = STEP64(v, SWAP2_64(v), 0xCC);
  return STEP64(v, SWAP1_64(v), 0xAA);
}

/* 16 lanes of 32 bits. */
INLINE __m512i rev32(__m512i v) {
  return _mm512_permutexvar_epi32(
      _mm512_set_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), v);
}
INLINE __m512i rev8_32(__m512i v) { /* each half reversed */
  return _mm512_permutexvar_epi32(
      _mm512_set_epi32(8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7), v);
}
#define SWAP1_32(v) _mm512_shuffle_epi32(v, _MM_PERM_CDAB)
#define SWAP2_32(v) _mm512_shuffle_epi32(v, _MM_PERM_BADC)
#define REV4_32(v) _mm512_shuffle_epi32(v, _MM_PERM_ABCD)
#define SWAP4_32(v) _mm512_shuffle_i32x4(v, v, _MM_SHUFFLE(2, 3, 0, 1))
#define SWAP8_32(v) _mm512_shuffle_i32x4(v, v, _MM_SHUFFLE(1, 0, 3, 2))
INLINE __m512i clean1_32(__m512i v) {
  v = STEP32(v, SWAP8_32(v), 0xFF00);
  v = STEP32(v, SWAP4_32(v), 0xF0F0);
  v = STEP32(v, SWAP2_32(v), 0xCCCC);
  return STEP32(v, SWAP1_32(v), 0xAAAA);
}
INLINE __m512i sort1_32(__m512i v) {
  v = STEP32(v, SWAP1_32(v), 0xAAAA);
  v = STEP32(v, REV4_32(v), 0xCCCC);
  v = STEP32(v, SWAP1_32(v), 0xAAAA);
  v = STEP32(v, rev8_32(v), 0xF0F0);
  v = STEP32(v, SWAP2_32(v), 0xCCCC);
  v = STEP32(v, SWAP1_32(v), 0xAAAA);
  v = STEP32(v, rev32(v), 0xFF00);
  v = STEP32(v, SWAP4_32(v), 0xF0F0);
  v = STEP32(v, SWAP2_32(v), 0xCCCC);
  return STEP32(v, SWAP1_32(v), 0xAAAA);
}

/* c ? x : y on pointers, by arithmetic: GCC turns the ternary into a
 * branch, which random keys mispredict every other step. */
#define SELECT(T, c, x, y)                                                  \
  ((const T *)((uintptr_t)(y) ^                                             \
               (((uintptr_t)(x) ^ (uintptr_t)(y)) & -(uintptr_t)(c))))

/* The rest, for items of W bits, L to a register. */
#define MERGE_SORT(W, L)                                                    \
  /* m bitonic registers (m a power of 2), sorted. */                       \
  INLINE void clean_##W(__m512i *v, int m) {                                \
    for (int d = m / 2; d > 0; d /= 2)                                      \
      for (int i = 0; i < m; i++)                                           \
        if (!(i & d)) {                                                     \
          __m512i x = v[i];                                                 \
          v[i] = _mm512_min_epu##W(x, v[i + d]);                            \
          v[i + d] = _mm512_max_epu##W(x, v[i + d]);                        \
        }                                                                   \
    for (int i = 0; i < m; i++) v[i] = clean1_##W(v[i]);                    \
  }                                                                         \
  /* Two sorted runs of m registers: a gets the m least, sorted; b the    \
   * rest. a against b reversed: the elementwise min and max are bitonic. */ \
  INLINE void merge_##W(__m512i *a, __m512i *b, int m) {                    \
    __m512i r[8];                                                           \
    for (int i = 0; i < m; i++) r[i] = rev##W(b[m - 1 - i]);                \
    for (int i = 0; i < m; i++) {                                           \
      b[i] = _mm512_max_epu##W(a[i], r[i]);                                 \
      a[i] = _mm512_min_epu##W(a[i], r[i]);                                 \
    }                                                                       \
    clean_##W(a, m);                                                        \
    clean_##W(b, m);                                                        \
  }                                                                         \
  /* 8 * L items at p, sorted in place. */                                  \
  AVX512 static void block_##W(uint##W##_t *p) {                           \
    __m512i v[8];                                                           \
    for (int i = 0; i < 8; i++) v[i] = sort1_##W(_mm512_loadu_si512(p + L * i)); \
    for (int i = 0; i < 8; i += 2) merge_##W(v + i, v + i + 1, 1);          \
    for (int i = 0; i < 8; i += 4) merge_##W(v + i, v + i + 2, 2);          \
    merge_##W(v, v + 4, 4);                                                 \
    for (int i = 0; i < 8; i++) _mm512_storeu_si512(p + L * i, v[i]);       \
  }                                                                         \
  /* Sorted runs a (na items) and b (nb), multiples of 2L, merged into o  \
   * from both ends at once (two independent chains of dependent steps).  \
   * The front keeps f, 2L items; takes the next 2L of the run whose next \
   * item is the lesser; the least 2L of the 4L go out, f keeps the rest. \
   * Whatever it has not yet written is >= all it has: of the items read, \
   * at most 2L - 1 exceed the other run's next item. The back mirrors it \
   * from the ends, keeping the least in g. Each writes half of o. Reads  \
   * from an exhausted run go to its first item instead. */                \
  AVX512 static void runs_##W(const uint##W##_t *a, int64_t na,            \
                              const uint##W##_t *b, int64_t nb,            \
                              uint##W##_t *o) {                            \
    typedef uint##W##_t T;                                                  \
    const T *ae = a + na, *be = b + nb;                                     \
    const T *af = a + 2 * L, *bf = b, *ab = ae - 2 * L, *bb = be;           \
    T *of = o, *ob = o + na + nb;                                           \
    __m512i f[2], g[2], x[2], y[2];                                         \
    f[0] = _mm512_loadu_si512(a);                                           \
    f[1] = _mm512_loadu_si512(a + L);                                       \
    g[0] = _mm512_loadu_si512(ab);                                          \
    g[1] = _mm512_loadu_si512(ab + L);                                      \
    for (int64_t s = (na + nb) / (4 * L); s > 0; s--) {                     \
      int ea = af == ae, eb = bf == be, sa = ab == a, sb = bb == b;         \
      T va = *(ea ? a : af), vb = *(eb ? b : bf);                           \
      T wa = (sa ? ae : ab)[-1], wb = (sb ? be : bb)[-1];                   \
      int ta = eb | (!ea & (va < vb)), tb = sb | (!sa & (wa > wb));         \
      const T *p = SELECT(T, ta, af, bf), *q = SELECT(T, tb, ab, bb) - 2 * L; \
      af += 2 * L * ta;                                                     \
      bf += 2 * L * (ta ^ 1);                                               \
      ab -= 2 * L * tb;                                                     \
      bb -= 2 * L * (tb ^ 1);                                               \
      x[0] = _mm512_loadu_si512(p);                                         \
      x[1] = _mm512_loadu_si512(p + L);                                     \
      y[0] = _mm512_loadu_si512(q);                                         \
      y[1] = _mm512_loadu_si512(q + L);                                     \
      merge_##W(f, x, 2); /* the chains go through x's max and g's min */  \
      merge_##W(g, y, 2);                                                   \
      _mm512_storeu_si512(of, f[0]);                                        \
      _mm512_storeu_si512(of + L, f[1]);                                    \
      of += 2 * L;                                                          \
      f[0] = x[0];                                                          \
      f[1] = x[1];                                                          \
      ob -= 2 * L;                                                          \
      _mm512_storeu_si512(ob, y[0]);                                        \
      _mm512_storeu_si512(ob + L, y[1]);                                    \
    }                                                                       \
  }                                                                         \
  uint##W##_t *nd_merge_sort_u##W(uint##W##_t *a, uint##W##_t *t, int64_t n) { \
    typedef uint##W##_t T;                                                  \
    for (int64_t i = 0; i < n; i += 8 * L) block_##W(a + i);                \
    for (int64_t w = 8 * L; w < n; w *= 2) {                                \
      for (int64_t s = 0; s < n; s += 2 * w) {                              \
        if (s + w >= n) memcpy(t + s, a + s, (size_t)(n - s) * sizeof(T));  \
        else runs_##W(a + s, w, a + s + w, (n - s - w < w ? n - s - w : w), t + s); \
      }                                                                     \
      T *x = a;                                                             \
      a = t;                                                                \
      t = x;                                                                \
    }                                                                       \
    return a;                                                               \
  }
MERGE_SORT(64, 8)
MERGE_SORT(32, 16)
#else
int nd_merge_sort_ok(void) { return 0; }
uint64_t *nd_merge_sort_u64(uint64_t *a, uint64_t *t, int64_t n) {
  (void)a, (void)t, (void)n;
  return NULL;
}
uint32_t *nd_merge_sort_u32(uint32_t *a, uint32_t *t, int64_t n) {
  (void)a, (void)t, (void)n;
  return NULL;
}
#endif
