/* Merge sorts of unsigned 64-bit and 32-bit items in AVX-512 registers,
 * for the short lanes of a sort (a row of 1000 fits L1): blocks of eight
 * registers are sorted by bitonic networks, then runs are merged
 * pairwise, two registers at a time, by the same networks. Comparisons
 * only: no compress-stores (slow on some AVX-512 CPUs) and no
 * data-dependent branches. Not stable, but sort.c's items are distinct
 * (key bits above position bits), so the order of the keys comes out
 * stable. One template serves both widths: the permutations are derived
 * from the lane count. */
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

/* The lanes of a register reversed (8 of 64 bits, 16 of 32). */
INLINE __m512i rev64(__m512i v) {
  return _mm512_permutexvar_epi64(_mm512_set_epi64(0, 1, 2, 3, 4, 5, 6, 7), v);
}
INLINE __m512i rev32(__m512i v) {
  return _mm512_permutexvar_epi32(
      _mm512_set_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), v);
}

/* Two registers through the same network steps at once: each step
 * compares lanes of two registers P and Q (min to P, max to Q), so that a
 * step costs two two-source permutes, a min and a max for both registers,
 * against a shuffle, a min, a max and a blend for each. A step pairs lane
 * i of each register with lane i ^ m, the larger going to the one with
 * bit h (the top bit of m) set. With L lanes to a register, in a step's
 * layout lane k holds pair r = k % (L/2) of register k / (L/2) (A or B):
 * P the element at ins(r, h), Q the one at ins(r, h) ^ m, where ins puts
 * a 0 bit at bit h. */
#define INS(r, h) ((((r) >> (h)) << ((h) + 1)) | ((r) & ((1 << (h)) - 1)))
#define DEL(i, h) ((((i) >> ((h) + 1)) << (h)) | ((i) & ((1 << (h)) - 1)))
/* Where element i of register b is in the layout of step (m, h), as a
 * permutex2var index (L and up: Q). */
#define WHERE(L, b, i, m, h)                                                \
  ((((i) >> (h)) & 1) * (L) + (b) * ((L) / 2) +                             \
   DEL(((i) >> (h)) & 1 ? (i) ^ (m) : (i), h))
/* Element (b, i) of lane k of P (q = 0) or Q (q = 1) in the layout of
 * step (m2, h2); its place in the layout of step (m, h), or in A and B. */
#define PAIR(L, k, m2, h2, q)                                               \
  (k) / ((L) / 2), (INS((k) % ((L) / 2), h2) ^ ((q) ? (m2) : 0))
#define FROM(k, L, m, h, m2, h2, q) APPLY(WHERE, L, PAIR(L, k, m2, h2, q), m, h)
#define NAT(k, L, m2, h2, q) APPLY(NAT1, L, PAIR(L, k, m2, h2, q))
#define NAT1(L, b, i) ((b) * (L) + (i))
#define BACK(k, L, m, h, b) WHERE(L, b, k, m, h) /* lane k of A or B */
#define APPLY(F, ...) F(__VA_ARGS__)
#define LANES8(F, ...)                                                      \
  _mm512_setr_epi64(F(0, __VA_ARGS__), F(1, __VA_ARGS__), F(2, __VA_ARGS__), \
                    F(3, __VA_ARGS__), F(4, __VA_ARGS__), F(5, __VA_ARGS__), \
                    F(6, __VA_ARGS__), F(7, __VA_ARGS__))
#define LANES16(F, ...)                                                     \
  _mm512_setr_epi32(F(0, __VA_ARGS__), F(1, __VA_ARGS__), F(2, __VA_ARGS__), \
                    F(3, __VA_ARGS__), F(4, __VA_ARGS__), F(5, __VA_ARGS__), \
                    F(6, __VA_ARGS__), F(7, __VA_ARGS__), F(8, __VA_ARGS__), \
                    F(9, __VA_ARGS__), F(10, __VA_ARGS__), F(11, __VA_ARGS__), \
                    F(12, __VA_ARGS__), F(13, __VA_ARGS__), F(14, __VA_ARGS__), \
                    F(15, __VA_ARGS__))
/* Per width: lanes, index vector, permute, min, max. */
#define LANES_64 8
#define LANES_32 16
#define IDX_64 LANES8
#define IDX_32 LANES16
#define PERM_64 _mm512_permutex2var_epi64
#define PERM_32 _mm512_permutex2var_epi32
#define MINMAX(W, p, q)                                                     \
  do {                                                                      \
    __m512i t_ = _mm512_min_epu##W(p, q);                                   \
    q = _mm512_max_epu##W(p, q);                                            \
    p = t_;                                                                 \
  } while (0)
/* Into the layout of the first step (m, h), and its compare. */
#define FIRST(W, a, b, p, q, m, h)                                          \
  do {                                                                      \
    p = PERM_##W(a, IDX_##W(NAT, LANES_##W, m, h, 0), b);                   \
    q = PERM_##W(a, IDX_##W(NAT, LANES_##W, m, h, 1), b);                   \
    MINMAX(W, p, q);                                                        \
  } while (0)
/* From the layout of step (m, h) to that of (m2, h2), and its compare. */
#define THEN(W, p, q, m, h, m2, h2)                                         \
  do {                                                                      \
    __m512i x_ = PERM_##W(p, IDX_##W(FROM, LANES_##W, m, h, m2, h2, 0), q); \
    q = PERM_##W(p, IDX_##W(FROM, LANES_##W, m, h, m2, h2, 1), q);          \
    p = x_;                                                                 \
    MINMAX(W, p, q);                                                        \
  } while (0)
#define LAST(W, a, b, p, q, m, h)                                           \
  do {                                                                      \
    a = PERM_##W(p, IDX_##W(BACK, LANES_##W, m, h, 0), q);                  \
    b = PERM_##W(p, IDX_##W(BACK, LANES_##W, m, h, 1), q);                  \
  } while (0)
/* The steps of distance 2 and 1 after one of distance 4 (h = 2). */
#define TAIL(W, p, q)                                                       \
  do {                                                                      \
    THEN(W, p, q, 4, 2, 2, 1);                                              \
    THEN(W, p, q, 2, 1, 1, 0);                                              \
  } while (0)
/* Two bitonic registers, each sorted: distances L/2 down to 1. */
INLINE void clean2_64(__m512i *a, __m512i *b) {
  __m512i p, q;
  FIRST(64, *a, *b, p, q, 4, 2);
  TAIL(64, p, q);
  LAST(64, *a, *b, p, q, 1, 0);
}
INLINE void clean2_32(__m512i *a, __m512i *b) {
  __m512i p, q;
  FIRST(32, *a, *b, p, q, 8, 3);
  THEN(32, p, q, 8, 3, 4, 2);
  TAIL(32, p, q);
  LAST(32, *a, *b, p, q, 1, 0);
}
/* Two registers, each sorted in blocks of 8: pairs, fours, then eights;
 * the first step of each reverses the block against itself. */
#define SORT8(W, a, b, p, q)                                                \
  do {                                                                      \
    FIRST(W, a, b, p, q, 1, 0);                                             \
    THEN(W, p, q, 1, 0, 3, 1);                                              \
    THEN(W, p, q, 3, 1, 1, 0);                                              \
    THEN(W, p, q, 1, 0, 7, 2);                                              \
    THEN(W, p, q, 7, 2, 2, 1);                                              \
    THEN(W, p, q, 2, 1, 1, 0);                                              \
  } while (0)
/* Two registers, each sorted. */
INLINE void sort2_64(__m512i *a, __m512i *b) {
  __m512i p, q;
  SORT8(64, *a, *b, p, q);
  LAST(64, *a, *b, p, q, 1, 0);
}
INLINE void sort2_32(__m512i *a, __m512i *b) {
  __m512i p, q;
  SORT8(32, *a, *b, p, q);
  THEN(32, p, q, 1, 0, 15, 3); /* then sixteens */
  THEN(32, p, q, 15, 3, 4, 2);
  TAIL(32, p, q);
  LAST(32, *a, *b, p, q, 1, 0);
}

/* c ? x : y on pointers, by arithmetic: GCC turns the ternary into a
 * branch, which random keys mispredict every other step. */
#define SELECT(T, c, x, y)                                                  \
  ((const T *)((uintptr_t)(y) ^                                             \
               (((uintptr_t)(x) ^ (uintptr_t)(y)) & -(uintptr_t)(c))))

/* The rest, for items of W bits, L to a register. */
#define MERGE_SORT(W, L)                                                    \
  /* m bitonic registers (m a power of 2), each then bitonic on its own. */ \
  INLINE void across_##W(__m512i *v, int m) {                               \
    for (int d = m / 2; d > 0; d /= 2)                                      \
      for (int i = 0; i < m; i++)                                           \
        if (!(i & d)) {                                                     \
          __m512i x = v[i];                                                 \
          v[i] = _mm512_min_epu##W(x, v[i + d]);                            \
          v[i + d] = _mm512_max_epu##W(x, v[i + d]);                        \
        }                                                                   \
  }                                                                         \
  /* m bitonic registers (m a power of 2, >= 2), sorted. */                 \
  INLINE void clean_##W(__m512i *v, int m) {                                \
    across_##W(v, m);                                                       \
    for (int i = 0; i < m; i += 2) clean2_##W(v + i, v + i + 1);            \
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
    if (m == 1) {                                                           \
      clean2_##W(a, b);                                                     \
    } else {                                                                \
      clean_##W(a, m);                                                      \
      clean_##W(b, m);                                                      \
    }                                                                       \
  }                                                                         \
  /* 8 * L items at p, sorted in place. */                                  \
  AVX512 static void block_##W(uint##W##_t *p) {                           \
    __m512i v[8];                                                           \
    for (int i = 0; i < 8; i++) v[i] = _mm512_loadu_si512(p + L * i);       \
    for (int i = 0; i < 8; i += 2) sort2_##W(v + i, v + i + 1);             \
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
