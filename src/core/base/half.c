/* float16 and bfloat16, the one home of their conversions. nd stores both
 * as uint16_t bits (clang 14 has no _Float16 on x86 without AVX512-FP16,
 * and GCC 12's __bf16 has no arithmetic): everything computes in float32
 * and rounds to nearest-even on store, overflow giving inf, NaN staying a
 * quiet NaN. Bulk float16 conversion uses F16C when the CPU has it (picked
 * at run time), plain code otherwise; bfloat16's vectorises as integers. */
#ifndef __clang__
#pragma GCC optimize("O3")
#endif
#include "core.h"
#include <math.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

static inline uint32_t fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float bitsf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

float nd_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, em = h & 0x7fffu, r;
  if (em >= 0x7c00) /* inf, or NaN made quiet */
    r = 0x7f800000u | ((em & 0x3ffu) << 13) | (em > 0x7c00 ? 0x400000u : 0);
  else if (em >= 0x400) /* normal */
    r = (em << 13) + ((uint32_t)(127 - 15) << 23);
  else /* subnormal or zero: em * 2^-24, exact */
    r = fbits((float)em * 0x1p-24f);
  return bitsf(r | sign);
}

/* Round to nearest-even (F. Giesen's float_to_half_fast3_rtne). */
uint16_t nd_float_to_half(float f) {
  uint32_t x = fbits(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) /* NaN: quiet, the payload's top bits kept */
    return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) /* >= 65520 (and inf): inf */
    return (uint16_t)(sign | 0x7c00u);
  if (ax < 0x38800000u) { /* below 2^-14: a subnormal, rounded by the add */
    float v = bitsf(ax) + 0.5f;
    return (uint16_t)(sign | (fbits(v) - 0x3f000000u));
  }
  ax += 0xc8000fffu + ((ax >> 13) & 1u); /* rebias, round half to even */
  return (uint16_t)(sign | (ax >> 13));
}

float nd_bf16_to_float(uint16_t b) {
  uint32_t r = (uint32_t)b << 16;
  if ((r & 0x7fffffffu) > 0x7f800000u) r |= 0x400000u; /* a quiet NaN */
  return bitsf(r);
}

uint16_t nd_float_to_bf16(float f) {
  uint32_t x = fbits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u); /* half to even; FLT_MAX's top -> inf */
  return (uint16_t)(x >> 16);
}

/* d rounded to float with round-to-odd: rounding that to nearest-even at
 * 11 or 8 bits is then d rounded once (float keeps 13 or more bits more,
 * also where float16's and bfloat16's subnormals are). */
static float odd_float(double d) {
  float f = (float)d;
  if ((double)f != d && f == f && !isinf(f)) {
    uint32_t u = fbits(f);
    if (!(u & 1u)) u += fabs((double)f) > fabs(d) ? (uint32_t)-1 : 1u;
    f = bitsf(u);
  }
  return f;
}
uint16_t nd_double_to_half(double d) { return nd_float_to_half(odd_float(d)); }
uint16_t nd_double_to_bf16(double d) { return nd_float_to_bf16(odd_float(d)); }

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
  return bf ? nd_float_to_bf16(f) : nd_float_to_half(f);
}
uint16_t nd_u64_to_half(uint64_t v, int bf) {
  float f = odd_float(odd_u64(v, 0));
  return bf ? nd_float_to_bf16(f) : nd_float_to_half(f);
}

/* ---- bulk, contiguous ---- */
#if defined(__x86_64__)
__attribute__((target("avx,f16c"))) static void h2f_f16c(
    float *restrict d, const uint16_t *restrict s, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(d + i,
                     _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(s + i))));
  for (; i < n; i++) d[i] = nd_half_to_float(s[i]);
}
__attribute__((target("avx,f16c"))) static void f2h_f16c(
    uint16_t *restrict d, const float *restrict s, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_loadu_ps(s + i);
    /* NaN through the scalar rule (kept quiet, same payload rule) */
    if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q))) {
      for (int64_t k = i; k < i + 8; k++) d[k] = nd_float_to_half(s[k]);
      continue;
    }
    _mm_storeu_si128((__m128i *)(void *)(d + i),
                     _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
  }
  for (; i < n; i++) d[i] = nd_float_to_half(s[i]);
}
/* CPUID's F16C and AVX bits, and the OS saving YMM state (clang 14's
 * __builtin_cpu_supports has no "f16c"). */
static int have_f16c(void) {
  static int have = -1; /* a benign race: every thread writes the same */
  if (have < 0) {
    unsigned a, b, c, d, lo = 0, hi = 0;
    int ok = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) &&
             (c & bit_AVX) && (c & bit_OSXSAVE);
    if (ok) __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    have = ok && (lo & 6) == 6;
  }
  return have;
}
#endif

void nd_half_to_float_n(float *restrict d, const uint16_t *restrict s,
                        int64_t n) {
#if defined(__x86_64__)
  if (have_f16c()) { h2f_f16c(d, s, n); return; }
#endif
  for (int64_t i = 0; i < n; i++) d[i] = nd_half_to_float(s[i]);
}
void nd_float_to_half_n(uint16_t *restrict d, const float *restrict s,
                        int64_t n) {
#if defined(__x86_64__)
  if (have_f16c()) { f2h_f16c(d, s, n); return; }
#endif
  for (int64_t i = 0; i < n; i++) d[i] = nd_float_to_half(s[i]);
}
/* bfloat16 is float32's top half: integer code the compiler vectorises
 * (float bits read through a may_alias type), in AVX2 / AVX-512 clones. */
#if ND_IFUNC
#define HALF_CLONES \
  __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define HALF_CLONES
#endif
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
  bf16_to_f32(d, s, n);
}
void nd_float_to_bf16_n(uint16_t *restrict d, const float *restrict s,
                        int64_t n) {
  f32_to_bf16(d, s, n);
}
