/* Internal to the random family (random.c, random_normal.c): the generator
 * step, inlined into the sampling loops, and the exact-arithmetic helpers. */
#ifndef ND_RANDOM_H
#define ND_RANDOM_H

#include "core.h"

/* Sampling uses IEEE binary64 + - * / only, each rounded once: no excess
 * precision, no fused multiply-add, no fast-math reassociation. Where the
 * compiler says otherwise, refuse to build rather than change the streams. */
#include <float.h>
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "nd's random streams need FLT_EVAL_METHOD 0 (on x86: -msse2 -mfpmath=sse)"
#endif
#ifdef __FAST_MATH__
#error "nd's random streams need IEEE arithmetic: do not build with -ffast-math"
#endif
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

/* xoshiro256** (Blackman and Vigna). */
static inline uint64_t nd_rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}
static inline uint64_t nd_next(nd_generator *g) {
  uint64_t *s = g->s, res = nd_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = nd_rotl(s[3], 45);
  return res;
}
/* 53 random bits: [0, 1), and (0, 1] for logarithms. */
static inline double nd_u53(nd_generator *g) {
  return (double)(nd_next(g) >> 11) * 0x1.0p-53;
}
static inline double nd_u53_open0(nd_generator *g) {
  return (double)((nd_next(g) >> 11) + 1) * 0x1.0p-53;
}
/* hi and lo words of x * y (the same result with or without __int128). */
static inline uint64_t nd_mul128(uint64_t x, uint64_t y, uint64_t *lo) {
#ifdef __SIZEOF_INT128__
  unsigned __int128 m = (unsigned __int128)x * y;
  *lo = (uint64_t)m;
  return (uint64_t)(m >> 64);
#else
  uint64_t xl = x & 0xffffffffu, xh = x >> 32, yl = y & 0xffffffffu,
           yh = y >> 32, ll = xl * yl, lh = xl * yh, hl = xh * yl,
           mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
  *lo = (mid << 32) | (ll & 0xffffffffu);
  return xh * yh + (lh >> 32) + (hl >> 32) + (mid >> 32);
#endif
}
/* An integer in [0, span), span > 0, every value equally likely: the high
 * word of draw * span, rejecting the few low words that would bias it
 * (Lemire's method: a division only in rare cases). */
static inline uint64_t nd_below(nd_generator *g, uint64_t span) {
  uint64_t lo, hi = nd_mul128(nd_next(g), span, &lo);
  if (lo < span) {
    uint64_t floor = (0 - span) % span;
    while (lo < floor) hi = nd_mul128(nd_next(g), span, &lo);
  }
  return hi;
}

/* n standard normals (random_normal.c: a ziggurat). */
void nd_normal_fill(nd_generator *g, double *out, int64_t n);
/* log(u) for 0 < u <= 1 from + - * / alone: the same bits everywhere. */
double nd_exact_log(double u);

#endif
