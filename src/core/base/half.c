/* float16 and bfloat16, the one home of their conversions. nd stores both
 * as uint16_t bits (clang 14 has no _Float16 on x86 without AVX512-FP16,
 * and GCC 12's __bf16 has no arithmetic): everything computes in float32
 * and rounds to nearest-even on store, overflow giving inf, NaN staying a
 * quiet NaN. The bulk converters (below) pick AVX-512F or F16C code at
 * run time, plain code otherwise. */
#ifndef __clang__
#pragma GCC optimize("O3")
#endif
#include "core.h"
#include "half.h"
#include <math.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

float nd_half_to_float(uint16_t h) { return nd_h2f(h); }
uint16_t nd_float_to_half(float f) { return nd_f2h(f); }
float nd_bf16_to_float(uint16_t b) { return nd_bf2f(b); }
uint16_t nd_float_to_bf16(float f) { return nd_f2bf(f); }

/* d rounded to float with round-to-odd: rounding that to nearest-even at
 * 11 or 8 bits is then d rounded once (float keeps 13 or more bits more,
 * also where float16's and bfloat16's subnormals are). */
static float odd_float(double d) {
  float f = (float)d;
  if ((double)f != d && f == f && !isinf(f)) {
    uint32_t u = nd_fbits(f);
    if (!(u & 1u)) u += fabs((double)f) > fabs(d) ? (uint32_t)-1 : 1u;
    f = nd_bitsf(u);
  }
  return f;
}
uint16_t nd_double_to_half(double d) { return nd_f2h(odd_float(d)); }
uint16_t nd_double_to_bf16(double d) { return nd_f2bf(odd_float(d)); }

/* An int64/uint64 magnitude m as a double rounded to odd (53 bits: the
 * dropped bits stick to the last kept one), signed. */
static double odd_u64(uint64_t m, int neg) {
  int bits = 64 - __builtin_clzll(m | 1);
  if (bits > 53) {
    int s = bits - 53;
    m = (m >> s) | ((m & (((uint64_t)1 << s) - 1)) != 0);
    return ldexp(neg ? -(double)m : (double)m, s);
  }
  return neg ? -(double)m : (double)m;
}
uint16_t nd_i64_to_half(int64_t v, int bf) {
  uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  float f = odd_float(odd_u64(m, v < 0));
  return bf ? nd_f2bf(f) : nd_f2h(f);
}
uint16_t nd_u64_to_half(uint64_t v, int bf) {
  float f = odd_float(odd_u64(v, 0));
  return bf ? nd_f2bf(f) : nd_f2h(f);
}

/* ---- bulk, contiguous ---- */
/* Each converter has a plain loop (any CPU) and, picked at run time from
 * CPUID, an x86 one: F16C's vcvtph2ps/vcvtps2ph 8 lanes wide, or with
 * AVX-512F 16 lanes wide for all four (bfloat16's rounding as 16-lane
 * integer code narrowed by vpmovdw: GCC's own vectorisation of the plain
 * loop ran 256 bits wide with packs and blends, compute-bound at ~170 us
 * per 1 M). The last n % W elements take the plain rule. */
#if defined(__x86_64__)
#define AVX512 __attribute__((target("avx512f")))
#define F16C __attribute__((target("avx,f16c")))
/* s + i as the loads' vector pointer types (C converts void * freely) */
static inline const void *cv(const void *p) { return p; }

/* float16 both ways, one body per width: W lanes, the vector type V of W
 * floats and HV of W halves. A NaN takes the plain rule (quiet, the
 * payload's top bits kept): its vector goes element by element. */
#define HALF_PAIR(TAG, TGT, W, V, HV, LOADH, TOF, STOREF, LOADF, NANS, TOH,  \
                  STOREH)                                                   \
  TGT static void h2f_##TAG(float *restrict d, const uint16_t *restrict s,  \
                            int64_t n) {                                    \
    int64_t i = 0;                                                          \
    for (; i + W <= n; i += W) STOREF(d + i, TOF(LOADH(cv(s + i))));        \
    for (; i < n; i++) d[i] = nd_h2f(s[i]);                                 \
  }                                                                         \
  TGT static void f2h_##TAG(uint16_t *restrict d, const float *restrict s,  \
                            int64_t n) {                                    \
    int64_t i = 0;                                                          \
    for (; i + W <= n; i += W) {                                            \
      V v = LOADF(s + i);                                                   \
      if (NANS(v)) {                                                        \
        for (int64_t k = i; k < i + W; k++) d[k] = nd_f2h(s[k]);            \
        continue;                                                           \
      }                                                                     \
      STOREH((HV *)(void *)(d + i), TOH(v, _MM_FROUND_TO_NEAREST_INT));     \
    }                                                                       \
    for (; i < n; i++) d[i] = nd_f2h(s[i]);                                 \
  }
#define NANS_256(v) _mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q))
#define NANS_512(v) _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q)
HALF_PAIR(f16c, F16C, 8, __m256, __m128i, _mm_loadu_si128, _mm256_cvtph_ps,
          _mm256_storeu_ps, _mm256_loadu_ps, NANS_256, _mm256_cvtps_ph,
          _mm_storeu_si128)
HALF_PAIR(512, AVX512, 16, __m512, __m256i, _mm256_loadu_si256,
          _mm512_cvtph_ps, _mm512_storeu_ps, _mm512_loadu_ps, NANS_512,
          _mm512_cvtps_ph, _mm256_storeu_si256)
/* bfloat16: nd_bf16_to_float's and nd_float_to_bf16's rules on 16 lanes. */
AVX512 static void bf2f_512(float *restrict d, const uint16_t *restrict s,
                            int64_t n) {
  const __m512i abs = _mm512_set1_epi32(0x7fffffff),
                inf = _mm512_set1_epi32(0x7f800000),
                quiet = _mm512_set1_epi32(0x400000);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i r = _mm512_slli_epi32(
        _mm512_cvtepu16_epi32(_mm256_loadu_si256(cv(s + i))), 16);
    __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(r, abs), inf);
    _mm512_storeu_si512(d + i, _mm512_mask_or_epi32(r, nan, r, quiet));
  }
  for (; i < n; i++) d[i] = nd_bf2f(s[i]);
}
AVX512 static void f2bf_512(uint16_t *restrict d, const float *restrict s,
                            int64_t n) {
  const __m512i abs = _mm512_set1_epi32(0x7fffffff),
                inf = _mm512_set1_epi32(0x7f800000),
                half = _mm512_set1_epi32(0x7fff), one = _mm512_set1_epi32(1),
                quiet = _mm512_set1_epi32(0x40);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i x = _mm512_loadu_si512(s + i), hi = _mm512_srli_epi32(x, 16);
    __m512i r = _mm512_srli_epi32(
        _mm512_add_epi32(_mm512_add_epi32(x, half), _mm512_and_si512(hi, one)),
        16);
    __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(x, abs), inf);
    r = _mm512_mask_or_epi32(r, nan, hi, quiet);
    _mm256_storeu_si256((__m256i *)(void *)(d + i), _mm512_cvtepi32_epi16(r));
  }
  for (; i < n; i++) d[i] = nd_f2bf(s[i]);
}

/* 2: AVX-512F, 1: F16C, 0: neither. CPUID's feature bits, and XGETBV's
 * word of the register state the OS saves (YMM: 6; opmask and ZMM: 0xe0
 * too). clang 14's __builtin_cpu_supports has no "f16c". */
static int half_isa(void) {
  static int isa = -1; /* a benign race: every thread writes the same */
  if (isa < 0) {
    unsigned a, b, c, d, lo = 0, hi = 0;
    int ok = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) &&
             (c & bit_AVX) && (c & bit_OSXSAVE);
    if (ok) __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    ok = ok && (lo & 6) == 6;
    int wide = ok && (lo & 0xe6) == 0xe6 &&
               __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX512F);
    isa = wide ? 2 : ok;
  }
  return isa;
}
#endif

void nd_half_to_float_n(float *restrict d, const uint16_t *restrict s,
                        int64_t n) {
#if defined(__x86_64__)
  switch (half_isa()) {
  case 2: h2f_512(d, s, n); return;
  case 1: h2f_f16c(d, s, n); return;
  }
#endif
  for (int64_t i = 0; i < n; i++) d[i] = nd_h2f(s[i]);
}
void nd_float_to_half_n(uint16_t *restrict d, const float *restrict s,
                        int64_t n) {
#if defined(__x86_64__)
  switch (half_isa()) {
  case 2: f2h_512(d, s, n); return;
  case 1: f2h_f16c(d, s, n); return;
  }
#endif
  for (int64_t i = 0; i < n; i++) d[i] = nd_f2h(s[i]);
}
/* bfloat16 without AVX-512: integer code the compiler vectorises (float
 * bits read through a may_alias type), in an AVX2 clone. */
#define HALF_CLONES ND_CLONES("avx2", "default")
typedef uint32_t u32_alias __attribute__((may_alias));
/* (static: a target_clones function is an exported IFUNC otherwise) */
HALF_CLONES static void bf16_to_f32(float *restrict d,
                                    const uint16_t *restrict s, int64_t n) {
  u32_alias *q = (u32_alias *)(void *)d;
  for (int64_t i = 0; i < n; i++) {
    uint32_t r = (uint32_t)s[i] << 16;
    q[i] = r | ((r & 0x7fffffffu) > 0x7f800000u ? 0x400000u : 0);
  }
}
HALF_CLONES static void f32_to_bf16(uint16_t *restrict d,
                                    const float *restrict s, int64_t n) {
  const u32_alias *p = (const u32_alias *)(const void *)s;
  for (int64_t i = 0; i < n; i++) {
    uint32_t x = p[i];
    uint32_t r = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    uint32_t q = (x >> 16) | 0x40u; /* NaN: quiet */
    d[i] = (uint16_t)((x & 0x7fffffffu) > 0x7f800000u ? q : r);
  }
}
void nd_bf16_to_float_n(float *restrict d, const uint16_t *restrict s,
                        int64_t n) {
#if defined(__x86_64__)
  if (half_isa() == 2) { bf2f_512(d, s, n); return; }
#endif
  bf16_to_f32(d, s, n);
}
void nd_float_to_bf16_n(uint16_t *restrict d, const float *restrict s,
                        int64_t n) {
#if defined(__x86_64__)
  if (half_isa() == 2) { f2bf_512(d, s, n); return; }
#endif
  f32_to_bf16(d, s, n);
}
