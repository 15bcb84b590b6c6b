/* The scalar float16/bfloat16 <-> float rules, inline: the one home of
 * each rule, for the per-element loops (index.c's scatter adds: an out-of-
 * line call per element made float16 index_add_ 8x slower than float32)
 * and for half.c, whose exported nd_half_to_float etc. are these and
 * whose bulk converters take them for their tails and NaNs. Round to
 * nearest-even, overflow giving inf, NaN staying a quiet NaN. */
#ifndef ND_HALF_H
#define ND_HALF_H
#include <stdint.h>
#include <string.h>

static inline uint32_t nd_fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float nd_bitsf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static inline float nd_h2f(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, em = h & 0x7fffu, r;
  if (em >= 0x7c00) /* inf, or NaN made quiet */
    r = 0x7f800000u | ((em & 0x3ffu) << 13) | (em > 0x7c00 ? 0x400000u : 0);
  else if (em >= 0x400) /* normal */
    r = (em << 13) + ((uint32_t)(127 - 15) << 23);
  else /* subnormal or zero: em * 2^-24, exact */
    r = nd_fbits((float)em * 0x1p-24f);
  return nd_bitsf(r | sign);
}

/* Round to nearest-even (F. Giesen's float_to_half_fast3_rtne). */
static inline uint16_t nd_f2h(float f) {
  uint32_t x = nd_fbits(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) /* NaN: quiet, the payload's top bits kept */
    return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) /* >= 65520 (and inf): inf */
    return (uint16_t)(sign | 0x7c00u);
  if (ax < 0x38800000u) { /* below 2^-14: a subnormal, rounded by the add */
    float v = nd_bitsf(ax) + 0.5f;
    return (uint16_t)(sign | (nd_fbits(v) - 0x3f000000u));
  }
  ax += 0xc8000fffu + ((ax >> 13) & 1u); /* rebias, round half to even */
  return (uint16_t)(sign | (ax >> 13));
}

static inline float nd_bf2f(uint16_t b) {
  uint32_t r = (uint32_t)b << 16;
  if ((r & 0x7fffffffu) > 0x7f800000u) r |= 0x400000u; /* a quiet NaN */
  return nd_bitsf(r);
}

static inline uint16_t nd_f2bf(float f) {
  uint32_t x = nd_fbits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u); /* half to even; FLT_MAX's top -> inf */
  return (uint16_t)(x >> 16);
}
#endif
