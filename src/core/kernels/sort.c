/* Ordering: sort, argsort, topk, kthvalue, median, unique, searchsorted.
 *
 * Every element becomes an unsigned "order key" whose unsigned order is
 * the sort order (NaN largest, -0 equal to +0); a descending order flips
 * the key's bits, so one ascending algorithm serves both and stays stable.
 * Keys of dtypes up to 32 bits travel with their position in one uint64
 * (key << 32 | position): an LSD radix sort over the key bytes keeps equal
 * keys in position order, and as plain integers the items are distinct,
 * which selection relies on. 64-bit keys travel as (key, position) pairs.
 * Each lane (the elements along `dim` for one position of the other dims)
 * is sorted or selected on its own; lanes are split over threads. */
#ifndef __clang__ /* clang vectorises these loops at -O2 already */
#pragma GCC optimize("O3")
#endif
#include "kernels.h"
#include "sort_merge.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct { uint64_t k, i; } pair;

/* ---- order keys ---- */
static inline uint64_t okey_f32(float x) {
  uint32_t u;
  if (x != x) return UINT32_MAX;
  if (x == 0) return 0x80000000u;
  memcpy(&u, &x, 4);
  return u >> 31 ? ~u : u | 0x80000000u;
}
static inline uint64_t okey_f64(double x) {
  uint64_t u;
  if (x != x) return UINT64_MAX;
  if (x == 0) return 1ull << 63;
  memcpy(&u, &x, 8);
  return u >> 63 ? ~u : u | 1ull << 63;
}
static inline uint64_t okey_i32(int32_t x) { return (uint32_t)x ^ 0x80000000u; }
static inline uint64_t okey_i64(int64_t x) { return (uint64_t)x ^ 1ull << 63; }
static inline uint64_t okey_i8(int8_t x) { return (uint8_t)x ^ 0x80u; }
static inline uint64_t okey_i16(int16_t x) { return (uint16_t)x ^ 0x8000u; }
static inline uint64_t okey_u(uint64_t x) { return x; }
#define OKEY(x)                                                             \
  _Generic((x), float: okey_f32, double: okey_f64, int32_t: okey_i32,        \
           int64_t: okey_i64, int8_t: okey_i8, int16_t: okey_i16,           \
           default: okey_u)(x)

/* The value back from its key. */
static inline float oval_f32(uint64_t k) {
  uint32_t u = (uint32_t)k;
  float x;
  u = u >> 31 ? u & 0x7fffffffu : ~u;
  memcpy(&x, &u, 4);
  return x;
}
static inline double oval_f64(uint64_t k) {
  double x;
  k = k >> 63 ? k & ~(1ull << 63) : ~k;
  memcpy(&x, &k, 8);
  return x;
}
static inline int32_t oval_i32(uint64_t k) { return (int32_t)((uint32_t)k ^ 0x80000000u); }
static inline int64_t oval_i64(uint64_t k) { return (int64_t)(k ^ 1ull << 63); }
static inline int8_t oval_i8(uint64_t k) { return (int8_t)((uint8_t)k ^ 0x80u); }
static inline int16_t oval_i16(uint64_t k) { return (int16_t)((uint16_t)k ^ 0x8000u); }
#define OVAL(T, k)                                                          \
  ((T)_Generic((T)0, float: oval_f32, double: oval_f64, int32_t: oval_i32,   \
               int64_t: oval_i64, int8_t: oval_i8, int16_t: oval_i16,       \
               default: okey_u)(k))
/* Keys whose value is read back from the element itself: NaN (payload)
 * and zero (sign). */
#define OSPECIAL(T, k)                                                      \
  _Generic((T)0, float: (k) == 0x80000000u || (k) == UINT32_MAX,             \
           double: (k) == 1ull << 63 || (k) == UINT64_MAX, default: 0)

static int key_bits(int dt) { return (int)(8 * nd_dtype_size(dt)); }
static uint64_t key_mask(int dt) {
  int b = key_bits(dt);
  return b == 64 ? UINT64_MAX : (1ull << b) - 1;
}
static uint64_t nan_key(int dt) {
  return dt == ND_FLOAT32 ? UINT32_MAX : dt == ND_FLOAT64 ? UINT64_MAX : 0;
}

/* ---- AVX-512 build and emit for float32 ----
 * Compact float32 lanes, the common case, turn into items and back 16
 * elements at a time: the same keys, items and values as the scalar
 * loops below, which remain the portable path. Picked at run time when
 * the CPU has AVX-512F, unless the environment has ND_SORT_SIMD=0 (read
 * at every call, so that the specs can exercise both paths). */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define AVX512 __attribute__((target("avx512f")))

static int use_simd(void) {
  if (!__builtin_cpu_supports("avx512f")) return 0;
  const char *env = getenv("ND_SORT_SIMD");
  return !env || env[0] != '0';
}

/* The order keys of 16 float32 (bits u), flipped by fl. */
AVX512 static inline __m512i okey16_f32(__m512i u, __m512i fl) {
  const __m512i sign = _mm512_set1_epi32(INT32_MIN);
  __m512i k = _mm512_xor_si512(u, _mm512_or_si512(_mm512_srai_epi32(u, 31), sign));
  __m512i a = _mm512_andnot_si512(sign, u); /* |x| */
  k = _mm512_mask_mov_epi32(k, _mm512_cmpeq_epi32_mask(a, _mm512_setzero_si512()), sign);
  k = _mm512_mask_mov_epi32(k, _mm512_cmpgt_epu32_mask(a, _mm512_set1_epi32(0x7f800000)),
                            _mm512_set1_epi32(-1));
  return _mm512_xor_si512(k, fl);
}

AVX512 static void build_f32_avx512(uint64_t *it, const float *x, int64_t n,
                                    uint64_t flip, int64_t first) {
  const __m512i fl = _mm512_set1_epi32((int32_t)(uint32_t)flip);
  __m512i pos = _mm512_add_epi64(_mm512_set1_epi64(first),
                                 _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0));
  const __m512i eight = _mm512_set1_epi64(8);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i k = okey16_f32(_mm512_loadu_si512(x + i), fl);
    __m512i lo = _mm512_cvtepu32_epi64(_mm512_castsi512_si256(k));
    __m512i hi = _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(k, 1));
    _mm512_storeu_si512(it + i, _mm512_or_si512(_mm512_slli_epi64(lo, 32), pos));
    pos = _mm512_add_epi64(pos, eight);
    _mm512_storeu_si512(it + i + 8, _mm512_or_si512(_mm512_slli_epi64(hi, 32), pos));
    pos = _mm512_add_epi64(pos, eight);
  }
  for (; i < n; i++)
    it[i] = (okey_f32(x[i]) ^ flip) << 32 | (uint64_t)(first + i);
}

/* Keys alone (no positions), for the 32-bit items. */
AVX512 static void keys_f32_avx512(uint32_t *k, const float *x, int64_t n,
                                   uint32_t flip) {
  const __m512i fl = _mm512_set1_epi32((int32_t)flip);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_si512(k + i, okey16_f32(_mm512_loadu_si512(x + i), fl));
  for (; i < n; i++) k[i] = (uint32_t)okey_f32(x[i]) ^ flip;
}

/* The first j >= i (i >= 1) where r[j] and r[j - 1] agree above bit P,
 * or n. */
AVX512 static int64_t next_tie(const uint32_t *r, int64_t i, int64_t n, int P) {
  const __m128i c = _mm_cvtsi32_si128(P);
  for (; i + 16 <= n; i += 16) {
    __m512i d = _mm512_xor_si512(_mm512_loadu_si512(r + i), _mm512_loadu_si512(r + i - 1));
    __mmask16 m = _mm512_testn_epi32_mask(_mm512_srl_epi32(d, c), _mm512_set1_epi32(-1));
    if (m) return i + __builtin_ctz(m);
  }
  for (; i < n && (r[i] ^ r[i - 1]) >> P; i++) {}
  return i;
}

/* v[i] = src[r[i] & pm], 4-byte elements, by 16-lane gathers. */
AVX512 static void take4_avx512(uint32_t *v, const char *src, const uint32_t *r,
                                uint32_t pm, int64_t n) {
  const __m512i m = _mm512_set1_epi32((int32_t)pm);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i p = _mm512_and_si512(_mm512_loadu_si512(r + i), m);
    _mm512_storeu_si512(v + i, _mm512_i32gather_epi32(p, src, 4));
  }
  for (; i < n; i++) memcpy(v + i, src + (int64_t)(r[i] & pm) * 4, 4);
}

/* Values (contiguous; NULL: not wanted) and indices (contiguous; NULL:
 * not wanted) of n items; src/ss as in the scalar emit. */
AVX512 static void emit_f32_avx512(const uint64_t *it, int64_t n, uint64_t flip,
                                   const char *src, int64_t ss, float *v,
                                   int64_t *ix, int64_t base) {
  const __m512i sign = _mm512_set1_epi32(INT32_MIN);
  const __m512i fl = _mm512_set1_epi32((int32_t)(uint32_t)flip);
  const __m512i low = _mm512_set1_epi64(0xffffffff), b = _mm512_set1_epi64(base);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i p0 = _mm512_loadu_si512(it + i), p1 = _mm512_loadu_si512(it + i + 8);
    if (v) {
      __m512i k = _mm512_inserti64x4(
          _mm512_castsi256_si512(_mm512_cvtepi64_epi32(_mm512_srli_epi64(p0, 32))),
          _mm512_cvtepi64_epi32(_mm512_srli_epi64(p1, 32)), 1);
      k = _mm512_xor_si512(k, fl);
      __mmask16 top = _mm512_cmpge_epu32_mask(k, sign);
      __m512i u = _mm512_mask_mov_epi32(_mm512_xor_si512(k, _mm512_set1_epi32(-1)),
                                        top, _mm512_andnot_si512(sign, k));
      _mm512_storeu_si512(v + i, u);
      __mmask16 sp = _mm512_cmpeq_epi32_mask(k, sign) |
                     _mm512_cmpeq_epi32_mask(k, _mm512_set1_epi32(-1));
      for (; sp; sp &= sp - 1) { /* NaN payloads, zero signs: the element */
        int l = __builtin_ctz(sp);
        v[i + l] = *(const float *)(src + (int64_t)(it[i + l] & 0xffffffffu) * ss);
      }
    }
    if (ix) {
      _mm512_storeu_si512(ix + i, _mm512_add_epi64(_mm512_and_si512(p0, low), b));
      _mm512_storeu_si512(ix + i + 8, _mm512_add_epi64(_mm512_and_si512(p1, low), b));
    }
  }
  for (; i < n; i++) {
    uint64_t k = (it[i] >> 32) ^ flip;
    int64_t at = (int64_t)(it[i] & 0xffffffffu);
    if (v) v[i] = k == 0x80000000u || k == UINT32_MAX
                      ? *(const float *)(src + at * ss) : oval_f32(k);
    if (ix) ix[i] = at + base;
  }
}
#define SIMD_F32 1
#else
#define SIMD_F32 0
#define AVX512 /* the callers check the CPU; elsewhere, plain code */
static int use_simd(void) { return 0; }
static void build_f32_avx512(uint64_t *it, const float *x, int64_t n,
                             uint64_t flip, int64_t first) {
  (void)it, (void)x, (void)n, (void)flip, (void)first;
}
static void emit_f32_avx512(const uint64_t *it, int64_t n, uint64_t flip,
                            const char *src, int64_t ss, float *v,
                            int64_t *ix, int64_t base) {
  (void)it, (void)n, (void)flip, (void)src, (void)ss, (void)v, (void)ix, (void)base;
}
static void keys_f32_avx512(uint32_t *k, const float *x, int64_t n,
                            uint32_t flip) {
  (void)k, (void)x, (void)n, (void)flip;
}
static void take4_avx512(uint32_t *v, const char *src, const uint32_t *r,
                         uint32_t pm, int64_t n) {
  (void)v, (void)src, (void)r, (void)pm, (void)n;
}
static int64_t next_tie(const uint32_t *r, int64_t i, int64_t n, int P) {
  for (; i < n && (r[i] ^ r[i - 1]) >> P; i++) {}
  return i;
}
#endif

/* Items from n elements at p (byte stride s), positions from `first`;
 * flip (0 or the key mask) turns the order around. */
#define BUILD(E, name, T, kind)                                             \
  static void cbuild_##E(uint64_t *it, const char *p, int64_t s, int64_t n, \
                         uint64_t flip, int64_t first) {                    \
    if (ND_##E == ND_FLOAT32 && s == 4 && use_simd()) {                     \
      build_f32_avx512(it, (const float *)(const void *)p, n, flip, first); \
      return;                                                               \
    }                                                                       \
    if (s == sizeof(T)) {                                                   \
      const T *x = (const T *)p;                                            \
      for (int64_t i = 0; i < n; i++)                                       \
        it[i] = (OKEY(x[i]) ^ flip) << 32 | (uint64_t)(first + i);          \
    } else {                                                                \
      for (int64_t i = 0; i < n; i++)                                       \
        it[i] = (OKEY(*(const T *)(p + i * s)) ^ flip) << 32 |              \
                (uint64_t)(first + i);                                      \
    }                                                                       \
  }                                                                         \
  static void pbuild_##E(pair *it, const char *p, int64_t s, int64_t n,     \
                         uint64_t flip, int64_t first) {                    \
    for (int64_t i = 0; i < n; i++) {                                       \
      it[i].k = OKEY(*(const T *)(p + i * s)) ^ flip;                       \
      it[i].i = (uint64_t)(first + i);                                      \
    }                                                                       \
  }
ND_NATIVE_DTYPES(BUILD)

/* Values (v, byte stride vs; NULL: not wanted) and indices (ix, element
 * stride xs, counted from base; NULL: not wanted) of n items; src/ss is
 * the lane the positions refer to. */
#define CKEY(x) ((x) >> 32)
#define CIDX(x) ((x) & 0xffffffffu)
#define PKEY(x) ((x).k)
#define PIDX(x) ((x).i)
#define EMIT(E, name, T, kind)                                              \
  EMIT1(c, E, T, uint64_t, CKEY, CIDX) EMIT1(p, E, T, pair, PKEY, PIDX)
#define EMIT1(P, E, T, ITEM, KEY, IDX)                                      \
  static void P##emit_##E(const ITEM *it, int64_t n, uint64_t flip,         \
                          const char *src, int64_t ss, char *v, int64_t vs, \
                          int64_t *ix, int64_t xs, int64_t base) {          \
    if (ND_##E == ND_FLOAT32 && sizeof(ITEM) == 8 && (!v || vs == 4) &&     \
        (!ix || xs == 1) && use_simd()) {                                   \
      emit_f32_avx512((const uint64_t *)(const void *)it, n, flip, src, ss, \
                      (float *)(void *)v, ix, base);                        \
      return;                                                               \
    }                                                                       \
    if (v)                                                                  \
      for (int64_t i = 0; i < n; i++) {                                     \
        uint64_t k = KEY(it[i]) ^ flip;                                     \
        *(T *)(v + i * vs) = OSPECIAL(T, k)                                 \
                                 ? *(const T *)(src + (int64_t)IDX(it[i]) * ss) \
                                 : OVAL(T, k);                              \
      }                                                                     \
    if (ix)                                                                 \
      for (int64_t i = 0; i < n; i++) ix[i * xs] = (int64_t)IDX(it[i]) + base; \
  }
ND_NATIVE_DTYPES(EMIT)

/* Per dtype: build and emit for each item kind. */
static const struct {
  void (*cbuild)(uint64_t *, const char *, int64_t, int64_t, uint64_t, int64_t);
  void (*pbuild)(pair *, const char *, int64_t, int64_t, uint64_t, int64_t);
  void (*cemit)(const uint64_t *, int64_t, uint64_t, const char *, int64_t,
                char *, int64_t, int64_t *, int64_t, int64_t);
  void (*pemit)(const pair *, int64_t, uint64_t, const char *, int64_t,
                char *, int64_t, int64_t *, int64_t, int64_t);
} kinds[ND_NDTYPES] = {
#define FNS(E, name, T, kind) \
  [ND_##E] = {cbuild_##E, pbuild_##E, cemit_##E, pemit_##E},
    ND_NATIVE_DTYPES(FNS)
#undef FNS
};

/* ---- 32-bit items, for short runs of keys of <= 32 bits ----
 * n keys (at most BUCKET_MAX: P bits of position) are ordered by items of
 * 32 - P key bits above the position: twice as many to a register as
 * key << 32 | position. The key bits taken start at the highest bit
 * where the keys differ. When keys have more bits than that, items whose
 * truncated keys tie come out in position order, and each such run is
 * then ordered by the full keys: by insertion, since on real data the
 * runs are few and short (1000 normal floats keep 22 bits and have ~10
 * runs of two); a run of over RUN_MAX distinct keys sends the keys back
 * to 64-bit items. */
enum { SHORT_MAX = 4096, RUN_MAX = 32 };
static int use_merge(void) { return use_simd() && nd_merge_sort_ok(); }

/* The stable order of the n (33..BUCKET_MAX) keys y: positions in the low
 * *P bits of the result, which is x or z (each room for n rounded up to
 * ND_MERGE_BLOCK32); NULL if the keys need 64-bit items after all. */
AVX512 static uint32_t *order32(const uint32_t *y, int64_t n, uint32_t *x,
                                uint32_t *z, int *P) {
  int64_t np = (n + ND_MERGE_BLOCK32 - 1) / ND_MERGE_BLOCK32 * ND_MERGE_BLOCK32;
  int p = *P = 64 - __builtin_clzll((uint64_t)n - 1);
  uint32_t pm = ((uint32_t)1 << p) - 1, any = 0, all = UINT32_MAX, *r;
  for (int64_t i = 0; i < n; i++) {
    any |= y[i];
    all &= y[i];
  }
  if (any == all) { /* one key: position order */
    for (int64_t i = 0; i < n; i++) x[i] = (uint32_t)i;
    return x;
  }
  int hb = 32 - __builtin_clz(any ^ all), kb = 32 - p;
  int sh = hb > kb ? hb - kb : 0;
  uint32_t km = ((uint32_t)1 << kb) - 1;
  for (int64_t i = 0; i < n; i++) x[i] = (y[i] >> sh & km) << p | (uint32_t)i;
  memset(x + n, 0xff, (size_t)(np - n) * 4);
  r = nd_merge_sort_u32(x, z, np);
  for (int64_t i = 1; sh && (i = next_tie(r, i, n, p)) < n; i++) {
    int64_t s = i - 1, e = i + 1; /* a run of tied items */
    for (; e < n && !((r[e] ^ r[s]) >> p); e++) {}
    i = e;
    int sorted = 1;
    for (int64_t k = s + 1; k < e && sorted; k++)
      sorted = y[r[k] & pm] >= y[r[k - 1] & pm];
    if (sorted) continue;
    if (e - s > RUN_MAX) return NULL;
    for (int64_t k = s + 1; k < e; k++) { /* by full key, then position */
      uint32_t it = r[k], key = y[it & pm];
      int64_t j = k;
      for (; j > s && (key < y[r[j - 1] & pm] ||
                       (key == y[r[j - 1] & pm] && it < r[j - 1])); j--)
        r[j] = r[j - 1];
      r[j] = it;
    }
  }
  return r;
}

/* The m (33..BUCKET_MAX) items key << 32 | position at b, in position
 * order, sorted in place by the low kbits (< 32) of their keys, with
 * scratch y (m keys), x and z (m rounded up to ND_MERGE_BLOCK32) and c
 * (m items); 0 if they need 64-bit items after all. */
static int bucket32(uint64_t *b, int64_t m, int kbits, uint32_t *y,
                    uint32_t *x, uint32_t *z, uint64_t *c) {
  uint32_t km = ((uint32_t)1 << kbits) - 1, *r;
  int P;
  for (int64_t i = 0; i < m; i++) y[i] = (uint32_t)(b[i] >> 32) & km;
  if (!(r = order32(y, m, x, z, &P))) return 0;
  uint32_t pm = ((uint32_t)1 << P) - 1;
  for (int64_t i = 0; i < m; i++) c[i] = b[r[i] & pm];
  memcpy(b, c, (size_t)m * 8);
  return 1;
}
/* The same, m <= SHORT_MAX, with scratch on the stack: about as much as
 * the radix sort's counts, in a frame of its own. */
__attribute__((noinline)) static int bucket32_stack(uint64_t *b, int64_t m,
                                                    int kbits) {
  uint32_t y[SHORT_MAX], x[SHORT_MAX + ND_MERGE_BLOCK32],
      z[SHORT_MAX + ND_MERGE_BLOCK32];
  uint64_t c[SHORT_MAX];
  return bucket32(b, m, kbits, y, x, z, c);
}
/* Scratch for bucket32 up to BUCKET_MAX, in 32-bit words: a sort lane's
 * MSD buckets take 32-bit items up to there, not the radix sort (half of
 * 1 M uniform float32 lands in buckets of 4097..8192: 7.5 -> 7.1 ms). */
enum { BUCKET_MAX = 8192,
       BUCKET_SCRATCH = BUCKET_MAX + 2 * (BUCKET_MAX + ND_MERGE_BLOCK32) + 2 * BUCKET_MAX };

/* Long lanes (MSD_MIN and more) take an MSD pass (see msd below) on
 * MSD_BITS, counted on the stack; a sort lane's pass takes LANE_MSD_BITS,
 * counted on the heap: more, smaller buckets, which suit skewed keys
 * (1 M normal float32 has 82 of 1024 10-bit buckets filled, the largest
 * 91 k items) and more of which fit the 32-bit items (1 M randn float32:
 * 7.3-9.7 -> 6.5-7.9 ms; uniform int32 7.0-7.6 -> 6.4-6.8 ms). */
enum { MSD_MIN = 1 << 18, MSD_BITS = 10, LANE_MSD_BITS = 12 };

/* Where a lane's results go (as the emit functions take them), for the
 * algorithms that emit as they go. */
typedef struct {
  int dt;
  uint64_t flip;
  const char *src;
  int64_t ss, vs, xs, base;
  char *v;
  int64_t *ix;
} lane_out;
/* What an MSD pass needs to know of its items before it scatters them. */
typedef struct {
  uint64_t any, all; /* the bits set in any key, in all keys */
  int bits, tl;      /* of the digit; the lowest bit counted */
  int slack;         /* how many of the digit's top bits may be common */
  int64_t *cnt, *at; /* (1 << bits) + 1 counts, 1 << bits places */
  uint32_t *scratch; /* BUCKET_SCRATCH words for bucket32, or NULL */
} msd_stats;
#define EMIT_RANGE(P, ITEM)                                                 \
  /* Items it[s .. s + m) to the same places of the results. */            \
  static void P##emit_range(const lane_out *o, const ITEM *it, int64_t s,   \
                            int64_t m) {                                    \
    kinds[o->dt].P##emit(it + s, m, o->flip, o->src, o->ss,                 \
                         o->v ? o->v + s * o->vs : NULL, o->vs,             \
                         o->ix ? o->ix + s * o->xs : NULL, o->xs, o->base); \
  }
EMIT_RANGE(c, uint64_t)
EMIT_RANGE(p, pair)

/* ---- algorithms, for both item kinds ---- */
#define CLESS(a, b) ((a) < (b))
#define PLESS(a, b) ((a).k < (b).k || ((a).k == (b).k && (a).i < (b).i))
#define SWAP(ITEM, x, y) do { ITEM t_ = (x); (x) = (y); (y) = t_; } while (0)

#define ALGOS(P, ITEM, KEY, LESS, KEY0)                                     \
  /* Stable insertion sort by key. */                                       \
  static void P##insertion(ITEM *a, int64_t n) {                            \
    for (int64_t i = 1; i < n; i++) {                                       \
      ITEM x = a[i];                                                        \
      int64_t j = i;                                                        \
      for (; j > 0 && KEY(x) < KEY(a[j - 1]); j--) a[j] = a[j - 1];         \
      a[j] = x;                                                             \
    }                                                                       \
  }                                                                         \
  /* Stable LSD radix sort on the low kbits of the keys: 8-bit digits,   \
   * 11-bit ones for long lanes (fewer passes; the counts still fit L1).  \
   * Lanes of 8-byte items past L2 (2^18 and more) take 9-bit digits:     \
   * scattering to 2048 buckets out of cache costs more than a fourth     \
   * pass to 512 (1 M float32: 3 passes 20% faster, randn's 4 too).       \
   * Passes where every key has the same digit are skipped. Returns a or  \
   * t, where the result is. */                                             \
  static ITEM *P##msd(ITEM *a, ITEM *t, int64_t n, int kbits,             \
                      const lane_out *o, msd_stats *st);                    \
  static ITEM *P##radix(ITEM *a, ITEM *t, int64_t n, int kbits) {           \
    int64_t cnt[6 * 2048];                                                  \
    if (n <= 32) {                                                          \
      P##insertion(a, n);                                                   \
      return a;                                                             \
    }                                                                       \
    if (n >= MSD_MIN && kbits > 16) return P##msd(a, t, n, kbits, NULL, NULL);    \
    int w = kbits <= 8                            ? 8                       \
            : kbits <= 22 && n >= 1024           ? (kbits + 1) / 2         \
            : n < 1 << 16                         ? 8                       \
            : n >= 1 << 18 && sizeof(ITEM) == 8  ? 9 : 11;                  \
    int nd = (kbits + w - 1) / w;                                           \
    int64_t R = (int64_t)1 << w;                                            \
    uint64_t mask = (uint64_t)R - 1;                                        \
    memset(cnt, 0, sizeof cnt[0] * (size_t)(nd * R));                       \
    for (int64_t i = 0; i < n; i++) {                                       \
      uint64_t k = KEY0(a[i]);                                              \
      for (int d = 0; d < nd; d++) cnt[d * R + (k >> w * d & mask)]++;      \
    }                                                                       \
    for (int d = 0; d < nd; d++) {                                          \
      int64_t *c = cnt + d * R, sum = 0;                                    \
      if (c[KEY0(a[0]) >> w * d & mask] == n) continue;                     \
      for (int64_t b = 0; b < R; b++) {                                     \
        int64_t x = c[b];                                                   \
        c[b] = sum;                                                         \
        sum += x;                                                           \
      }                                                                     \
      for (int64_t i = 0; i < n; i++) t[c[KEY0(a[i]) >> w * d & mask]++] = a[i]; \
      ITEM *s = a;                                                          \
      a = t;                                                                \
      t = s;                                                                \
    }                                                                       \
    return a;                                                               \
  }                                                                         \
  /* A bucket by 32-bit items, if it is short enough for the scratch. */ \
  static int P##bucket32(const msd_stats *st, ITEM *b, int64_t m, int lo) { \
    uint64_t *u = (uint64_t *)(void *)b;                                    \
    uint32_t *y = st->scratch, *x = y + BUCKET_MAX;                         \
    uint32_t *z = x + BUCKET_MAX + ND_MERGE_BLOCK32;                        \
    if (y && m <= BUCKET_MAX)                                               \
      return bucket32(u, m, lo, y, x, z,                                    \
                      (uint64_t *)(void *)(z + BUCKET_MAX + ND_MERGE_BLOCK32)); \
    return m <= SHORT_MAX && bucket32_stack(u, m, lo);                      \
  }                                                                         \
  /* The lowest bit of a digit of `bits` for an MSD pass over a lane,     \
   * guessed from its first n items at a: from 2 bits above the highest  \
   * where these differ (a whole lane of uniform floats reaches 1 or 2    \
   * binades lower than its first 4096; slack allows for it). */          \
  static int P##guess(const ITEM *a, int64_t n, int kbits, int bits) {      \
    uint64_t any = 0, all = ~(uint64_t)0;                                   \
    for (int64_t i = 0; i < n; i++) {                                       \
      any |= KEY0(a[i]);                                                    \
      all &= KEY0(a[i]);                                                    \
    }                                                                       \
    uint64_t diff = any ^ all;                                              \
    if (kbits < 64) diff &= ((uint64_t)1 << kbits) - 1;                     \
    int hb = diff ? 64 - __builtin_clzll(diff) + 2 : kbits;                 \
    hb = hb < kbits ? hb : kbits;                                           \
    return hb > bits ? hb - bits : 0;                                       \
  }                                                                         \
  /* The bits where keys differ, and the counts of the digit from bit tl  \
   * (right when the lane's keys differ at the bits the guess saw), of n  \
   * more items. */                                                       \
  static void P##scan(msd_stats *st, const ITEM *a, int64_t n) {           \
    uint64_t any = st->any, all = st->all, m = ((uint64_t)1 << st->bits) - 1; \
    int tl = st->tl;                                                        \
    for (int64_t i = 0; i < n; i++) {                                       \
      uint64_t k = KEY0(a[i]);                                              \
      any |= k;                                                             \
      all &= k;                                                             \
      st->cnt[(k >> tl & m) + 1]++;                                         \
    }                                                                       \
    st->any = any;                                                          \
    st->all = all;                                                          \
  }                                                                         \
  /* Long lanes: one stable MSD pass on the bits below the highest bit  \
   * where keys differ scatters them into buckets that fit in cache, each \
   * then sorted on the bits below (32-bit items, split, or LSD radix):   \
   * two passes over memory instead of three or four. Returns a or t, as  \
   * radix. With st, the items are scanned already; with o, each bucket   \
   * is emitted as soon as it is sorted, while in cache. */               \
  static ITEM *P##msd_run(ITEM *a, ITEM *t, int64_t n, int kbits,          \
                          const lane_out *o, msd_stats *st);                \
  static ITEM *P##msd(ITEM *a, ITEM *t, int64_t n, int kbits,              \
                      const lane_out *o, msd_stats *st) {                   \
    int64_t oc[(1 << MSD_BITS) + 1] = {0}, oat[1 << MSD_BITS];              \
    msd_stats own = {0, ~(uint64_t)0, MSD_BITS, kbits - MSD_BITS, 0, oc, oat, \
                     NULL};                                                 \
    if (!st) P##scan(st = &own, a, n);                                      \
    return P##msd_run(a, t, n, kbits, o, st);                               \
  }                                                                         \
  /* A bucket of m items at b (scratch at x), too long for the 32-bit     \
   * items, whose keys are equal above bit lo: one more MSD pass, in      \
   * cache, on the few bits that cut it into pieces of ~2048, which then   \
   * take the 32-bit items. Emitted to o, from item s of the lane on.     \
   * (1 M normal float32 leaves ~40 buckets of 10-30 k items; the two LSD  \
   * passes each of them took cost more.) */                              \
  static void P##split(ITEM *b, ITEM *x, int64_t m, int lo,                 \
                       const lane_out *o, int64_t s, uint32_t *scratch) {   \
    int b2 = 1;                                                             \
    while (b2 < 8 && m >> b2 > 2048) b2++;                                  \
    if (b2 > lo) b2 = lo;                                                   \
    int64_t c2[(1 << 8) + 1] = {0}, a2[1 << 8];                             \
    msd_stats sub = {0, ~(uint64_t)0, b2, lo - b2, 1, c2, a2, scratch};     \
    lane_out o2 = *o;                                                       \
    if (o2.v) o2.v += s * o2.vs;                                            \
    if (o2.ix) o2.ix += s * o2.xs;                                          \
    P##scan(&sub, b, m);                                                    \
    P##msd_run(b, x, m, lo, &o2, &sub);                                     \
  }                                                                         \
  static ITEM *P##msd_run(ITEM *a, ITEM *t, int64_t n, int kbits,          \
                          const lane_out *o, msd_stats *st) {               \
    uint64_t any = st->any, all = st->all;                                  \
    int64_t *cnt = st->cnt, *at = st->at;                                   \
    int bits = st->bits, tl = st->tl;                                       \
    uint64_t diff = any ^ all;                                              \
    if (kbits < 64) diff &= ((uint64_t)1 << kbits) - 1;                     \
    if (!diff) { /* one key: already in position order */                 \
      if (o) P##emit_range(o, a, 0, n);                                     \
      return a;                                                             \
    }                                                                       \
    int hb = 64 - __builtin_clzll(diff), w = bits, lo = tl;                 \
    /* The digit counted serves if it holds the highest differing bit and \
     * at most `slack` common bits above it; else count the right one. */  \
    if (hb > tl + bits || hb < tl + bits - st->slack) {                     \
      w = hb < bits ? hb : bits;                                            \
      lo = hb - w;                                                          \
    }                                                                       \
    uint64_t mask = ((uint64_t)1 << w) - 1;                                 \
    if (lo != tl || w != bits) { /* the counts were of another digit */    \
      memset(cnt, 0, (sizeof *cnt << bits) + sizeof *cnt);                  \
      for (int64_t i = 0; i < n; i++) cnt[(KEY0(a[i]) >> lo & mask) + 1]++; \
    }                                                                       \
    for (int64_t b = 1; b <= (int64_t)mask + 1; b++) cnt[b] += cnt[b - 1];  \
    memcpy(at, cnt, (size_t)(mask + 1) * sizeof *at);                       \
    for (int64_t i = 0; i < n; i++) t[at[KEY0(a[i]) >> lo & mask]++] = a[i]; \
    int merge = sizeof(ITEM) == 8 && use_merge(); /* read once, not per bucket */ \
    for (int64_t b = 0; b <= (int64_t)mask; b++) {                          \
      int64_t s = cnt[b], m = cnt[b + 1] - s;                               \
      if (merge && o && st->scratch && m > BUCKET_MAX && lo > 8) {          \
        P##split(t + s, a + s, m, lo, o, s, st->scratch);                   \
        continue;                                                           \
      }                                                                     \
      if (m >= 2 && !(merge && lo < 32 && m > 32 &&                         \
                      P##bucket32(st, t + s, m, lo))) {                     \
        ITEM *r = P##radix(t + s, a + s, m, lo);                            \
        if (r != t + s) memcpy(t + s, r, (size_t)m * sizeof(ITEM));         \
      }                                                                     \
      if (o && m) P##emit_range(o, t, s, m);                                \
    }                                                                       \
    return t;                                                               \
  }                                                                         \
  /* Reorder distinct items so that a[k] is the k-th least (0-based), the  \
   * lesser before it and the greater after. */                             \
  static void P##pick(ITEM *a, int64_t n, int64_t k) {                    \
    int64_t lo = 0, hi = n - 1;                                             \
    while (hi - lo >= 16) {                                                 \
      int64_t mid = lo + (hi - lo) / 2;                                     \
      if (LESS(a[mid], a[lo])) SWAP(ITEM, a[mid], a[lo]);                   \
      if (LESS(a[hi], a[lo])) SWAP(ITEM, a[hi], a[lo]);                     \
      if (LESS(a[hi], a[mid])) SWAP(ITEM, a[hi], a[mid]);                   \
      ITEM p = a[mid];                                                      \
      int64_t i = lo, j = hi;                                               \
      while (i <= j) {                                                      \
        while (LESS(a[i], p)) i++;                                          \
        while (LESS(p, a[j])) j--;                                          \
        if (i <= j) {                                                       \
          SWAP(ITEM, a[i], a[j]);                                           \
          i++;                                                              \
          j--;                                                              \
        }                                                                   \
      }                                                                     \
      if (k <= j) hi = j;                                                   \
      else if (k >= i) lo = i;                                              \
      else return;                                                          \
    }                                                                       \
    for (int64_t i = lo + 1; i <= hi; i++) {                                \
      ITEM x = a[i];                                                        \
      int64_t j = i;                                                        \
      for (; j > lo && LESS(x, a[j - 1]); j--) a[j] = a[j - 1];             \
      a[j] = x;                                                             \
    }                                                                       \
  }                                                                         \
  /* h[0..*len) is a max-heap of the least items seen (at most k): feed    \
   * it x[0..n). */                                                         \
  static void P##down(ITEM *h, int64_t len, int64_t i) {                    \
    ITEM x = h[i];                                                          \
    for (;;) {                                                              \
      int64_t c = 2 * i + 1;                                                \
      if (c >= len) break;                                                  \
      if (c + 1 < len && LESS(h[c], h[c + 1])) c++;                         \
      if (!LESS(x, h[c])) break;                                            \
      h[i] = h[c];                                                          \
      i = c;                                                                \
    }                                                                       \
    h[i] = x;                                                               \
  }                                                                         \
  static void P##feed(ITEM *h, int64_t *len, int64_t k, const ITEM *x,      \
                      int64_t n) {                                          \
    for (int64_t i = 0; i < n; i++) {                                       \
      if (*len < k) {                                                       \
        int64_t j = (*len)++;                                               \
        for (; j > 0 && LESS(h[(j - 1) / 2], x[i]); j = (j - 1) / 2)        \
          h[j] = h[(j - 1) / 2];                                            \
        h[j] = x[i];                                                        \
      } else if (LESS(x[i], h[0])) {                                        \
        h[0] = x[i];                                                        \
        P##down(h, *len, 0);                                                \
      }                                                                     \
    }                                                                       \
  }                                                                         \
  /* The heap, sorted ascending in place. */                                \
  static void P##heapsort(ITEM *h, int64_t len) {                           \
    for (int64_t n = len - 1; n > 0; n--) {                                 \
      SWAP(ITEM, h[0], h[n]);                                               \
      P##down(h, n, 0);                                                     \
    }                                                                       \
  }
#define CKEY0(x) ((x) >> 32)
#define PKEY0(x) ((x).k)
ALGOS(c, uint64_t, CKEY, CLESS, CKEY0)
ALGOS(p, pair, PKEY, PLESS, PKEY0)


/* Plain keys (no positions), and a value back from a key. */
#define KEYS(E, name, T, kind)                                              \
  static void keys_##E(uint64_t *k, const char *p, int64_t n) {             \
    const T *x = (const T *)p;                                              \
    for (int64_t i = 0; i < n; i++) k[i] = OKEY(x[i]);                      \
  }                                                                         \
  /* dtypes of <= 32 bits: n elements at p (byte stride s), flipped */    \
  static void keys32_##E(uint32_t *k, const char *p, int64_t s, int64_t n,  \
                         uint32_t flip) {                                   \
    if (ND_##E == ND_FLOAT32 && s == 4 && use_simd()) {                     \
      keys_f32_avx512(k, (const float *)(const void *)p, n, flip);          \
      return;                                                               \
    }                                                                       \
    for (int64_t i = 0; i < n; i++)                                         \
      k[i] = (uint32_t)OKEY(*(const T *)(p + i * s)) ^ flip;                \
  }                                                                         \
  /* the elements at positions r & pm of the lane at src (stride ss) */    \
  static void take_##E(char *v, int64_t vs, const char *src, int64_t ss,    \
                       const uint32_t *r, uint32_t pm, int64_t n) {         \
    if (sizeof(T) == 4 && vs == 4 && ss == 4 && use_simd()) {               \
      take4_avx512((uint32_t *)(void *)v, src, r, pm, n);                   \
      return;                                                               \
    }                                                                       \
    for (int64_t i = 0; i < n; i++)                                         \
      *(T *)(v + i * vs) = *(const T *)(src + (int64_t)(r[i] & pm) * ss);   \
  }                                                                         \
  static void val_##E(void *dst, uint64_t k) {                              \
    T x = OVAL(T, k);                                                       \
    memcpy(dst, &x, sizeof x);                                              \
  }
ND_NATIVE_DTYPES(KEYS)
static const struct {
  void (*keys)(uint64_t *, const char *, int64_t);
  void (*keys32)(uint32_t *, const char *, int64_t, int64_t, uint32_t);
  void (*take)(char *, int64_t, const char *, int64_t, const uint32_t *,
               uint32_t, int64_t);
  void (*val)(void *, uint64_t);
} plain[ND_NDTYPES] = {
#define FNS(E, name, T, kind) [ND_##E] = {keys_##E, keys32_##E, take_##E, val_##E},
    ND_NATIVE_DTYPES(FNS)
#undef FNS
};

/* A short lane of keys of <= 32 bits by 32-bit items (order32): the
 * n (33..SHORT_MAX) elements at src (byte stride ss) into v/ix as the
 * other paths do; a and tmp hold (n + ND_MERGE_BLOCK) items each.
 * Returns 0, or 1 if the lane must take the 64-bit items after all. */
AVX512 static int short_lane(int dt, uint64_t *a, uint64_t *tmp, const char *src,
                             int64_t ss, int64_t n, uint32_t flip, char *v,
                             int64_t vs, int64_t *ix, int64_t xs, int64_t base) {
  uint32_t *y = (uint32_t *)(void *)tmp, *r;
  int P;
  plain[dt].keys32(y, src, ss, n, flip);
  if (!(r = order32(y, n, (uint32_t *)(void *)a, y + n, &P))) return 1;
  uint32_t pm = ((uint32_t)1 << P) - 1;
  if (v) plain[dt].take(v, vs, src, ss, r, pm, n);
  if (ix)
    for (int64_t i = 0; i < n; i++) ix[i * xs] = (int64_t)(r[i] & pm) + base;
  return 0;
}

/* ---- lanes ---- */
/* Element offset of lane r (row-major over the dims other than dim). */
static int64_t lane_offset(const nd_tensor *t, int dim, int64_t r) {
  int64_t off = t->offset;
  for (int i = t->ndim - 1; i >= 0; i--) {
    if (i == dim) continue;
    off += r % t->size[i] * t->stride[i];
    r /= t->size[i];
  }
  return off;
}
static int64_t lane_count(const nd_tensor *t, int dim) {
  int64_t r = 1;
  if (nd_numel(t) == 0) return 0; /* its other dims' product may overflow */
  for (int i = 0; i < t->ndim; i++)
    if (i != dim) r *= t->size[i];
  return r;
}

enum { J_SORT, J_TOPK, J_KTH, J_MEDIAN };
typedef struct {
  int what;
  const nd_tensor *t, *v, *ix; /* v, ix: outputs (NULL: not wanted) */
  int dim;
  int64_t n, k, base;
  int flip, sorted, nomem;
} lane_job;

static char *at(const nd_tensor *t, int64_t off) {
  return (char *)t->storage->data + off * nd_dtype_size(t->dtype);
}
static int64_t dstride(const nd_tensor *t, int dim) {
  return t->ndim ? t->stride[dim] : 0;
}

/* Lanes of 33 to MERGE_MAX items sort by merging in AVX-512 registers
 * when use_simd() allows: below 2^16 items the radix sort takes four
 * 8-bit passes (11-bit digits would not repay their counts), and the
 * merge costs less up to there (a row of 1000 float32: 6.7 -> 3.4 ms CPU
 * per 1000 rows). */
enum { MERGE_MAX = (1 << 16) - 1 };

/* A heap of the k best suits a k small against the lane. */
static int topk_heap(const lane_job *j) { return j->k * 16 <= j->n; }
enum { CHUNK = 4096 }; /* items built at a time for the heap */

/* One lane with items of kind P (c or p): build, order, emit. */
#define LANE(P, ITEM, KEY)                                                  \
  static void P##lane(const lane_job *j, ITEM *a, ITEM *tmp, int64_t *aux,  \
                      int64_t r) {                                          \
    const nd_tensor *t = j->t;                                              \
    int dt = t->dtype;                                                      \
    int64_t es = nd_dtype_size(dt), n = j->n, k = j->k;                     \
    /* a lane of one is never stepped: its stride may be anything */        \
    int64_t ss = n > 1 ? dstride(t, j->dim) * es : 0;                       \
    const char *src = at(t, lane_offset(t, j->dim, r));                     \
    uint64_t flip = j->flip ? key_mask(dt) : 0;                             \
    char *v = NULL;                                                         \
    int64_t *ix = NULL, vs = 0, xs = 0, m = n;                              \
    const ITEM *res = a;                                                    \
    if (j->what == J_SORT || j->what == J_TOPK) {                           \
      const nd_tensor *o = j->v ? j->v : j->ix;                             \
      int64_t off = lane_offset(o, j->dim, r), st = dstride(o, j->dim);     \
      if (j->v) { v = at(j->v, off); vs = st * es; }                        \
      if (j->ix) { ix = (int64_t *)at(j->ix, off); xs = st; }               \
    } else {                                                                \
      if (j->v) v = at(j->v, j->v->offset + r);                             \
      if (j->ix) ix = (int64_t *)at(j->ix, j->ix->offset + r);              \
    }                                                                       \
    if (j->what == J_TOPK && topk_heap(j)) { /* a heap of the k best */     \
      int64_t len = 0;                                                      \
      for (int64_t i = 0; i < n; i += CHUNK) {                              \
        int64_t c = n - i < CHUNK ? n - i : CHUNK;                          \
        kinds[dt].P##build(tmp, src + i * ss, ss, c, flip, i);              \
        P##feed(a, &len, k, tmp, c);                                        \
      }                                                                     \
      if (j->sorted) P##heapsort(a, len);                                   \
      m = k;                                                                \
    } else {                                                                \
      if (j->what == J_SORT && sizeof(ITEM) == 8 && n > 32 &&               \
          n <= SHORT_MAX && key_bits(dt) <= 32 && use_merge() &&            \
          !short_lane(dt, (uint64_t *)(void *)a, (uint64_t *)(void *)tmp,   \
                      src, ss, n, (uint32_t)flip, v, vs, ix, xs, j->base))  \
        return;                                                             \
      /* A sort's index lane, when compact, holds the items: the results   \
       * are then written in place, into memory already in cache. */       \
      int merge = j->what == J_SORT && sizeof(ITEM) == 8 && n > 32 &&       \
                  n <= MERGE_MAX && use_merge();                            \
      if (j->what == J_SORT && ix && xs == 1 && sizeof(ITEM) == 8 && !merge) \
        a = (ITEM *)(void *)ix;                                             \
      if (j->what == J_SORT && n >= MSD_MIN && key_bits(dt) > 16) {         \
        msd_stats st = {0, ~(uint64_t)0, LANE_MSD_BITS, 0, 2, aux,          \
                        aux + (1 << LANE_MSD_BITS) + 1,                     \
                        (uint32_t *)(void *)(aux + (2 << LANE_MSD_BITS) + 1)}; \
        lane_out o = {dt, flip, src, ss, vs, xs, j->base, v, ix};           \
        memset(aux, 0, ((1 << LANE_MSD_BITS) + 1) * sizeof *aux);           \
        for (int64_t i = 0; i < n; i += CHUNK) { /* scanned while in cache */ \
          int64_t c = n - i < CHUNK ? n - i : CHUNK;                        \
          kinds[dt].P##build(a + i, src + i * ss, ss, c, flip, i);          \
          if (i == 0) /* the digit the first chunk's keys would take */     \
            st.tl = P##guess(a, c, key_bits(dt), LANE_MSD_BITS);            \
          P##scan(&st, a + i, c);                                           \
        }                                                                   \
        P##msd(a, tmp, n, key_bits(dt), &o, &st); /* emits as it goes */    \
        return;                                                             \
      }                                                                     \
      kinds[dt].P##build(a, src, ss, n, flip, 0);                           \
      if (merge) { /* padded to whole blocks with greatest items */         \
        int64_t np = (n + ND_MERGE_BLOCK - 1) / ND_MERGE_BLOCK * ND_MERGE_BLOCK; \
        memset(a + n, 0xff, (size_t)(np - n) * sizeof(ITEM));               \
        res = (ITEM *)(void *)nd_merge_sort_u64((uint64_t *)(void *)a,      \
                                                (uint64_t *)(void *)tmp, np); \
      } else if (j->what == J_SORT) {                                       \
        res = P##radix(a, tmp, n, key_bits(dt));                            \
      } else if (j->what == J_TOPK) {                                       \
        if (k < n) P##pick(a, n, k - 1);                                    \
        if (j->sorted) res = P##radix(a, tmp, k, key_bits(dt));             \
        m = k;                                                              \
      } else {                                                              \
        P##pick(a, n, k - 1);                                               \
        res = a + k - 1;                                                    \
        m = 1;                                                              \
        if (j->what == J_MEDIAN && nan_key(dt)) { /* NaN wins */            \
          for (int64_t i = k; i < n; i++)                                   \
            if (KEY(a[i]) == nan_key(dt)) { res = a + i; break; }           \
        }                                                                   \
      }                                                                     \
    }                                                                       \
    kinds[dt].P##emit(res, m, flip, src, ss, v, vs, ix, xs, j->base);       \
  }
LANE(c, uint64_t, CKEY)
LANE(p, pair, PKEY)

static void lane_task(void *ctx, int64_t lo, int64_t hi) {
  lane_job *j = ctx;
  int comp = key_bits(j->t->dtype) <= 32 && j->n <= (int64_t)UINT32_MAX;
  int64_t isz = comp ? 8 : 16, n = j->n, m = 0; /* items: a, tmp */
  int64_t naux = j->what == J_SORT && n >= MSD_MIN /* counts, scratch */
                     ? (2 << LANE_MSD_BITS) + 1 + BUCKET_SCRATCH / 2 : 0;
  if (j->what == J_TOPK && topk_heap(j)) n = j->k, m = CHUNK;
  else if (j->what == J_SORT) n = m = n + ND_MERGE_BLOCK; /* merge padding */
  else if (j->what == J_TOPK) m = j->k;
  nd_err e = {0};
  nd_storage *s;
  if (nd_storage_new(&e, &s, (n + m) * isz + naux * 8, false)) {
    __atomic_store_n(&j->nomem, 1, __ATOMIC_RELAXED);
    return;
  }
  char *a = s->data, *tmp = a + n * isz;
  int64_t *aux = (int64_t *)(void *)(tmp + m * isz); /* MSD counts, scratch */
  for (int64_t r = lo; r < hi; r++) {
    if (comp) clane(j, (uint64_t *)a, (uint64_t *)tmp, aux, r);
    else plane(j, (pair *)a, (pair *)tmp, aux, r);
  }
  nd_storage_release(s);
}

/* Shape of t with dim resized to m (m < 0: dropped). */
static int lane_shape(const nd_tensor *t, int dim, int64_t m, int64_t *sz) {
  int nd = 0;
  for (int i = 0; i < t->ndim; i++) {
    if (i != dim) sz[nd++] = t->size[i];
    else if (m >= 0) sz[nd++] = m;
  }
  return nd;
}

static nd_status run_lanes(nd_err *e, const char *fn, lane_job *j,
                           nd_tensor *values, nd_tensor *indices, int64_t m) {
  const nd_tensor *t = j->t;
  int64_t sz[ND_MAX_DIMS];
  int nd = lane_shape(t, j->dim, m, sz);
  if (t->ndim == 0) nd = 0;
  if (t->ndim == 0 && m == 0) { /* topk(0) of a 0-d t: nothing, not t's one */
    nd = 1;                      /* element unset */
    sz[0] = 0;
  }
  if ((values && nd_alloc_tensor(e, values, t->dtype, nd, sz, false)) ||
      (indices && nd_alloc_tensor(e, indices, ND_INT64, nd, sz, false))) {
    if (values) nd_release(values);
    return nd_err_name(e, fn);
  }
  j->v = values;
  j->ix = indices;
  int64_t rows = lane_count(t, j->dim);
  if (j->n > 0 && rows > 0) {
    int64_t work = j->what == J_SORT ? j->n * 8 : j->n;
    nd_parallel_for(rows, (1 << 16) / work + 1, lane_task, j);
  }
  if (j->nomem) {
    if (values) nd_release(values);
    if (indices) nd_release(indices);
    return nd_fail(e, ND_ENOMEM, "%s: not enough memory for a lane of %lld "
                   "elements", fn, (long long)j->n);
  }
  return ND_OK;
}

static nd_status lane_dim(nd_err *e, const char *fn, const nd_tensor *t,
                          int *dim) {
  if (t->ndim == 0 && (*dim == 0 || *dim == -1)) {
    *dim = 0;
    return ND_OK;
  }
  if (*dim < 0) *dim += t->ndim;
  return nd_check_dim(e, fn, *dim, t->ndim);
}

static void job_init(lane_job *j, int what, const nd_tensor *t, int dim,
                     const nd_err *e) {
  memset(j, 0, sizeof *j);
  j->what = what;
  j->t = t;
  j->dim = dim;
  j->n = t->ndim ? t->size[dim] : 1;
  j->base = e->base;
}

nd_status nd_sort(nd_err *e, nd_tensor *values, nd_tensor *indices,
                  const nd_tensor *t, int dim, int descending) {
  if (nd_is_half(t->dtype)) { /* in float32 (half_adapt.c) */
    nd_tensor w_ = ND_UNSET, r_ = ND_UNSET;
    if (nd_half_widen(e, values ? "sort" : "argsort", &w_, t)) return e->code;
    nd_status s_ = nd_sort(e, values ? &r_ : NULL, indices, &w_, dim, descending);
    nd_release(&w_);
    return s_ ? s_ : nd_half_narrow(e, values ? "sort" : "argsort", values, &r_, t->dtype);
  }
  const char *fn = values ? "sort" : "argsort";
  lane_job j;
  if (lane_dim(e, fn, t, &dim)) return e->code;
  job_init(&j, J_SORT, t, dim, e);
  j.flip = descending;
  return run_lanes(e, fn, &j, values, indices, j.n);
}

static nd_status check_k(nd_err *e, const char *fn, int64_t k, int64_t n,
                         int64_t lo) {
  if (k < lo || k > n)
    return nd_fail(e, ND_EINVAL, "%s: k %lld out of range [%lld, %lld] for "
                   "a dim of size %lld", fn, (long long)k, (long long)lo,
                   (long long)n, (long long)n);
  return ND_OK;
}

nd_status nd_topk(nd_err *e, nd_tensor *values, nd_tensor *indices,
                  const nd_tensor *t, int64_t k, int dim, int largest,
                  int sorted) {
  if (nd_is_half(t->dtype)) { /* in float32 (half_adapt.c) */
    nd_tensor w_ = ND_UNSET, r_ = ND_UNSET;
    if (nd_half_widen(e, "topk", &w_, t)) return e->code;
    nd_status s_ = nd_topk(e, values ? &r_ : NULL, indices, &w_, k, dim, largest, sorted);
    nd_release(&w_);
    return s_ ? s_ : nd_half_narrow(e, "topk", values, &r_, t->dtype);
  }
  lane_job j;
  if (lane_dim(e, "topk", t, &dim)) return e->code;
  job_init(&j, J_TOPK, t, dim, e);
  if (check_k(e, "topk", k, j.n, 0)) return e->code;
  j.k = k;
  j.flip = largest;
  j.sorted = sorted;
  if (k == 0) j.n = 0; /* nothing to do in any lane */
  return run_lanes(e, "topk", &j, values, indices, k);
}

nd_status nd_kthvalue(nd_err *e, nd_tensor *values, nd_tensor *indices,
                      const nd_tensor *t, int64_t k, int dim, int keepdim) {
  if (nd_is_half(t->dtype)) { /* in float32 (half_adapt.c) */
    nd_tensor w_ = ND_UNSET, r_ = ND_UNSET;
    if (nd_half_widen(e, "kthvalue", &w_, t)) return e->code;
    nd_status s_ = nd_kthvalue(e, values ? &r_ : NULL, indices, &w_, k, dim, keepdim);
    nd_release(&w_);
    return s_ ? s_ : nd_half_narrow(e, "kthvalue", values, &r_, t->dtype);
  }
  lane_job j;
  if (lane_dim(e, "kthvalue", t, &dim)) return e->code;
  job_init(&j, J_KTH, t, dim, e);
  if (check_k(e, "kthvalue", k, j.n, 1)) return e->code;
  j.k = k;
  return run_lanes(e, "kthvalue", &j, values, indices, keepdim ? 1 : -1);
}

/* The k-th least (0-based) of n keys, reordering them. */
static uint32_t pick32(uint32_t *a, int64_t n, int64_t k) {
  int64_t lo = 0, hi = n - 1;
  while (hi > lo) {
    uint32_t x = a[lo], y = a[lo + (hi - lo) / 2], z = a[hi];
    uint32_t p = x < y ? (y < z ? y : x < z ? z : x) : (x < z ? x : y < z ? z : y);
    int64_t i = lo, j = hi;
    while (i <= j) {
      while (a[i] < p) i++;
      while (a[j] > p) j--;
      if (i <= j) {
        uint32_t t = a[i];
        a[i++] = a[j];
        a[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k]; /* between j and i: equal to the pivot */
  }
  return a[k];
}

/* The median of all of a compact lane of a dtype of <= 32 bits, when no
 * index is wanted: 4-byte keys instead of 8-byte items. */
static nd_status median_keys(nd_err *e, nd_tensor *values, const nd_tensor *flat) {
  int dt = flat->dtype;
  int64_t n = flat->size[0], k = (n - 1) / 2;
  nd_storage *s;
  if (nd_storage_new(e, &s, n * 4, false)) return nd_err_name(e, "median");
  if (nd_alloc_tensor(e, values, dt, 0, NULL, false)) {
    nd_storage_release(s);
    return nd_err_name(e, "median");
  }
  uint32_t *a = s->data;
  plain[dt].keys32(a, nd_ptr(flat), nd_dtype_size(dt), n, 0);
  uint64_t m = pick32(a, n, k), nk = nan_key(dt);
  for (int64_t i = k + 1; nk && m != nk && i < n; i++)
    if (a[i] == nk) m = nk; /* NaN wins */
  plain[dt].val(nd_data(values), m);
  nd_storage_release(s);
  return ND_OK;
}

nd_status nd_median(nd_err *e, nd_tensor *values, nd_tensor *indices,
                    const nd_tensor *t, int dim, int keepdim) {
  if (nd_is_half(t->dtype)) { /* in float32 (half_adapt.c) */
    nd_tensor w_ = ND_UNSET, r_ = ND_UNSET;
    if (nd_half_widen(e, "median", &w_, t)) return e->code;
    nd_status s_ = nd_median(e, values ? &r_ : NULL, indices, &w_, dim, keepdim);
    nd_release(&w_);
    return s_ ? s_ : nd_half_narrow(e, "median", values, &r_, t->dtype);
  }
  lane_job j;
  nd_tensor flat = ND_UNSET;
  if (dim == ND_ALL_DIMS) { /* the flattened tensor: one lane */
    int64_t n = nd_numel(t);
    if (nd_contiguous(e, &flat, t)) return e->code;
    flat.ndim = 1;
    flat.size[0] = n;
    flat.stride[0] = 1;
    t = &flat;
    dim = 0;
    keepdim = 0;
  }
  nd_status st = lane_dim(e, "median", t, &dim);
  if (!st) {
    job_init(&j, J_MEDIAN, t, dim, e);
    if (j.n == 0 && flat.storage) { /* median of nothing: NaN, as PyTorch */
      st = nd_alloc_tensor(e, values, t->dtype, 0, NULL, false);
      if (!st) st = nd_fill(e, values, NAN);
      if (!st && indices) st = nd_alloc_tensor(e, indices, ND_INT64, 0, NULL, false);
      if (!st && indices) st = nd_fill_i64(e, indices, -1 + e->base);
      if (st && values) nd_release(values);
    } else if (j.n == 0) {
      st = nd_fail(e, ND_EINVAL, "median: cannot reduce over a size-0 dim "
                   "(dim %d)", dim + e->base);
    } else if (flat.storage && !indices && key_bits(t->dtype) <= 32) {
      st = median_keys(e, values, t);
    } else {
      j.k = (j.n + 1) / 2;
      st = run_lanes(e, "median", &j, values, indices, keepdim ? 1 : -1);
    }
  }
  nd_release(&flat);
  return st;
}

/* ---- unique ---- */
/* Sort the n elements at src, fold equal keys (their counts into c),
 * write the distinct values into a fresh 1-D *values. */
#define UNIQ(P, ITEM, KEY)                                                  \
  static nd_status P##unique(nd_err *e, nd_tensor *values, int dt,          \
                             const char *src, int64_t n, ITEM *a, ITEM *tmp, \
                             int64_t *c, int64_t *m) {                      \
    int64_t es = nd_dtype_size(dt);                                         \
    kinds[dt].P##build(a, src, es, n, 0, 0);                                \
    ITEM *r = P##radix(a, tmp, n, key_bits(dt));                            \
    *m = 0;                                                                 \
    for (int64_t i = 0; i < n; i++) {                                       \
      if (*m > 0 && KEY(r[i]) == KEY(r[*m - 1])) {                          \
        c[*m - 1]++;                                                        \
        continue;                                                           \
      }                                                                     \
      r[*m] = r[i];                                                         \
      c[(*m)++] = 1;                                                        \
    }                                                                       \
    if (nd_alloc_tensor(e, values, dt, 1, m, false)) return e->code;        \
    kinds[dt].P##emit(r, *m, 0, src, es, nd_data(values), es, NULL, 0, 0);  \
    return ND_OK;                                                           \
  }
UNIQ(c, uint64_t, CKEY)
UNIQ(p, pair, PKEY)

nd_status nd_unique(nd_err *e, nd_tensor *values, nd_tensor *counts,
                    const nd_tensor *t) {
  if (nd_is_half(t->dtype)) { /* in float32 (half_adapt.c) */
    nd_tensor w_ = ND_UNSET, r_ = ND_UNSET;
    if (nd_half_widen(e, "unique", &w_, t)) return e->code;
    nd_status s_ = nd_unique(e, &r_, counts, &w_);
    nd_release(&w_);
    return s_ ? s_ : nd_half_narrow(e, "unique", values, &r_, t->dtype);
  }
  nd_tensor flat = ND_UNSET, cnt = ND_UNSET;
  nd_storage *s = NULL;
  int dt = t->dtype;
  int64_t n = nd_numel(t), isz = key_bits(dt) <= 32 && n <= (int64_t)UINT32_MAX ? 8 : 16;
  int64_t sz;
  if (nd_contiguous(e, &flat, t) ||
      nd_storage_new(e, &s, 2 * (n ? n : 1) * isz, false) ||
      nd_alloc_tensor(e, &cnt, ND_INT64, 1, &n, false))
    goto fail;
  const char *src = nd_ptr(&flat);
  int64_t *c = nd_data(&cnt);
  char *a = s->data, *tmp = a + n * isz;
  if (isz == 8 ? cunique(e, values, dt, src, n, (uint64_t *)a, (uint64_t *)tmp, c, &sz)
               : punique(e, values, dt, src, n, (pair *)a, (pair *)tmp, c, &sz))
    goto fail;
  nd_storage_release(s);
  nd_release(&flat);
  if (counts) { /* the first m counts, as a fresh tensor */
    if (nd_alloc_tensor(e, counts, ND_INT64, 1, &sz, false)) {
      nd_release(&cnt);
      nd_release(values);
      return nd_err_name(e, "unique");
    }
    memcpy(nd_data(counts), c, (size_t)sz * 8);
  }
  nd_release(&cnt);
  return ND_OK;
fail:
  if (s) nd_storage_release(s);
  nd_release(&flat);
  nd_release(&cnt);
  return nd_err_name(e, "unique");
}

/* ---- searchsorted ---- */

nd_status nd_searchsorted(nd_err *e, nd_tensor *out, const nd_tensor *sorted,
                          const nd_tensor *values, int right) {
  if (nd_is_half(sorted->dtype) || nd_is_half(values->dtype)) {
    nd_tensor a = ND_UNSET, b = ND_UNSET; /* in float32 (half_adapt.c) */
    nd_status st = ND_OK;
    if ((nd_is_half(sorted->dtype) &&
         nd_half_widen(e, "searchsorted", &a, sorted)) ||
        (nd_is_half(values->dtype) &&
         nd_half_widen(e, "searchsorted", &b, values)))
      st = e->code;
    else
      st = nd_searchsorted(e, out, a.storage ? &a : sorted,
                           b.storage ? &b : values, right);
    nd_release(&a);
    nd_release(&b);
    return st;
  }
  char b[ND_SIZES_BUF];
  if (sorted->ndim != 1)
    return nd_fail(e, ND_EINVAL, "searchsorted: the sorted sequence must be "
                   "1-D, got size %s", nd_fmt_sizes(b, sizeof b, sorted->ndim,
                                                    sorted->size));
  int dt = nd_promote_types(sorted->dtype, values->dtype);
  nd_tensor s = ND_UNSET, v = ND_UNSET;
  nd_storage *ks = NULL;
  int64_t n = sorted->size[0], m = nd_numel(values);
  if (nd_to_dtype(e, &s, sorted, dt) || nd_to_dtype(e, &v, values, dt) ||
      nd_storage_new(e, &ks, (n + m + 1) * 8, false) ||
      nd_alloc_tensor(e, out, ND_INT64, values->ndim, values->size, false)) {
    nd_release(&s);
    nd_release(&v);
    if (ks) nd_storage_release(ks);
    return nd_err_name(e, "searchsorted");
  }
  uint64_t *sk = ks->data, *vk = sk + n;
  int64_t *o = nd_data(out);
  plain[dt].keys(sk, nd_data(&s), n);
  plain[dt].keys(vk, nd_data(&v), m);
  for (int64_t i = 0; i < m; i++) {
    int64_t lo = 0, hi = n; /* the first position whose key is >= (>) */
    uint64_t x = vk[i];
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if (right ? sk[mid] <= x : sk[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    o[i] = lo + e->base;
  }
  nd_storage_release(ks);
  nd_release(&s);
  nd_release(&v);
  return ND_OK;
}
