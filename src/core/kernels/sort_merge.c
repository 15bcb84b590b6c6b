/* A merge sort of unsigned 64-bit items in AVX-512 registers, for the
 * short lanes of a sort (a row of 1000 fits L1): blocks of 64 items are
 * sorted in eight registers by bitonic networks, then runs are merged
 * pairwise, 16 items at a time, by the same networks. Comparisons only:
 * no compress-stores (slow on some AVX-512 CPUs), no data-dependent
 * branches but the one choosing the run to read next. Not stable, but
 * sort.c's items are distinct (key << 32 | position), so the order of
 * the keys comes out stable. */
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
#define STEP(v, p, hi)                                                      \
  _mm512_mask_blend_epi64(hi, _mm512_min_epu64(v, p), _mm512_max_epu64(v, p))
#define SWAP1(v) _mm512_shuffle_epi32(v, _MM_PERM_BADC)
#define SWAP2(v) _mm512_permutex_epi64(v, _MM_SHUFFLE(1, 0, 3, 2))
#define REV4(v) _mm512_permutex_epi64(v, _MM_SHUFFLE(0, 1, 2, 3))
#define SWAP4(v) _mm512_shuffle_i64x2(v, v, _MM_SHUFFLE(1, 0, 3, 2))

INLINE __m512i rev8(__m512i v) {
  return _mm512_permutexvar_epi64(_mm512_set_epi64(0, 1, 2, 3, 4, 5, 6, 7), v);
}
/* A bitonic register, sorted. */
INLINE __m512i clean8(__m512i v) {
  v = STEP(v, SWAP4(v), 0xF0);
  v = STEP(v, SWAP2(v), 0xCC);
  return STEP(v, SWAP1(v), 0xAA);
}
/* Any register, sorted: pairs, then fours, then eight. */
INLINE __m512i sort8(__m512i v) {
  v = STEP(v, SWAP1(v), 0xAA);
  v = STEP(v, REV4(v), 0xCC);
  v = STEP(v, SWAP1(v), 0xAA);
  v = STEP(v, rev8(v), 0xF0);
  v = STEP(v, SWAP2(v), 0xCC);
  return STEP(v, SWAP1(v), 0xAA);
}
/* m bitonic registers (m a power of 2), sorted. */
INLINE void clean(__m512i *v, int m) {
  for (int d = m / 2; d > 0; d /= 2)
    for (int i = 0; i < m; i++)
      if (!(i & d)) {
        __m512i x = v[i];
        v[i] = _mm512_min_epu64(x, v[i + d]);
        v[i + d] = _mm512_max_epu64(x, v[i + d]);
      }
  for (int i = 0; i < m; i++) v[i] = clean8(v[i]);
}
/* Two sorted runs of m registers: a gets the m least, sorted; b the rest.
 * a against b reversed: the elementwise min and max are bitonic. */
INLINE void merge(__m512i *a, __m512i *b, int m) {
  __m512i r[8];
  for (int i = 0; i < m; i++) r[i] = rev8(b[m - 1 - i]);
  for (int i = 0; i < m; i++) {
    b[i] = _mm512_max_epu64(a[i], r[i]);
    a[i] = _mm512_min_epu64(a[i], r[i]);
  }
  clean(a, m);
  clean(b, m);
}

/* 64 items at p, sorted in place. */
AVX512 static void sort64(uint64_t *p) {
  __m512i v[8];
  for (int i = 0; i < 8; i++) v[i] = sort8(_mm512_loadu_si512(p + 8 * i));
  for (int i = 0; i < 8; i += 2) merge(v + i, v + i + 1, 1);
  for (int i = 0; i < 8; i += 4) merge(v + i, v + i + 2, 2);
  merge(v, v + 4, 4);
  for (int i = 0; i < 8; i++) _mm512_storeu_si512(p + 8 * i, v[i]);
}

/* Sorted runs a (na items) and b (nb), multiples of 16, merged into o
 * from both ends at once (two independent chains of dependent steps).
 * The front keeps f, 16 items; takes the next 16 of the run whose next
 * item is the lesser; the least 16 of the 32 go out, f keeps the rest.
 * Whatever it has not yet written is >= all it has: of the items read,
 * at most 15 exceed the other run's next item. The back mirrors it from
 * the ends, keeping the least in g. Each writes half of o. */
AVX512 static void merge_runs(const uint64_t *a, int64_t na,
                              const uint64_t *b, int64_t nb, uint64_t *o) {
  const uint64_t *ae = a + na, *be = b + nb;
  const uint64_t *af = a + 16, *bf = b, *ab = ae - 16, *bb = be;
  uint64_t *of = o, *ob = o + na + nb;
  __m512i f[2], g[2], x[2], y[2];
  f[0] = _mm512_loadu_si512(a);
  f[1] = _mm512_loadu_si512(a + 8);
  g[0] = _mm512_loadu_si512(ab);
  g[1] = _mm512_loadu_si512(ab + 8);
  for (int64_t s = (na + nb) / 32; s > 0; s--) {
    int ta = bf == be || (af < ae && *af < *bf);
    int tb = bb == b || (ab > a && ab[-1] > bb[-1]);
    const uint64_t *p = ta ? af : bf, *q = (tb ? ab : bb) - 16;
    af += ta ? 16 : 0;
    bf += ta ? 0 : 16;
    ab -= tb ? 16 : 0;
    bb -= tb ? 0 : 16;
    x[0] = _mm512_loadu_si512(p);
    x[1] = _mm512_loadu_si512(p + 8);
    y[0] = _mm512_loadu_si512(q);
    y[1] = _mm512_loadu_si512(q + 8);
    merge(f, x, 2); /* the chains go through x's max and g's min */
    merge(g, y, 2);
    _mm512_storeu_si512(of, f[0]);
    _mm512_storeu_si512(of + 8, f[1]);
    of += 16;
    f[0] = x[0];
    f[1] = x[1];
    ob -= 16;
    _mm512_storeu_si512(ob, y[0]);
    _mm512_storeu_si512(ob + 8, y[1]);
  }
}

uint64_t *nd_merge_sort_u64(uint64_t *a, uint64_t *t, int64_t n) {
  for (int64_t i = 0; i < n; i += ND_MERGE_BLOCK) sort64(a + i);
  for (int64_t w = ND_MERGE_BLOCK; w < n; w *= 2) {
    for (int64_t s = 0; s < n; s += 2 * w) {
      if (s + w >= n) memcpy(t + s, a + s, (size_t)(n - s) * 8);
      else merge_runs(a + s, w, a + s + w, (n - s - w < w ? n - s - w : w), t + s);
    }
    uint64_t *x = a;
    a = t;
    t = x;
  }
  return a;
}
#else
int nd_merge_sort_ok(void) { return 0; }
uint64_t *nd_merge_sort_u64(uint64_t *a, uint64_t *t, int64_t n) {
  (void)a, (void)t, (void)n;
  return NULL;
}
#endif
