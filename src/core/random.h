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
/* An integer in [0, span), every value equally likely (rejection). */
static inline uint64_t nd_below(nd_generator *g, uint64_t span) {
  uint64_t limit = UINT64_MAX - UINT64_MAX % span, x;
  do x = nd_next(g); while (x >= limit);
  return x % span;
}

/* n standard normals (random_normal.c: a ziggurat). */
void nd_normal_fill(nd_generator *g, double *out, int64_t n);
double nd_normal_one(nd_generator *g);
/* log(u) for 0 < u <= 1 from + - * / alone: the same bits everywhere. */
double nd_exact_log(double u);

#endif
