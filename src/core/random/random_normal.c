/* Standard normals by a 256-layer ziggurat (Marsaglia and Tsang), built so
 * that a seed gives the same bits on every platform and instruction set:
 * the tables are exact constants (tools/ziggurat_tables.py), the common
 * path is one integer compare and one product, and the rare paths (the
 * wedges and the tail beyond r: 1.5% of draws) use exp and log written
 * here from + - * / alone (random.h forbids contraction and excess
 * precision), never the C library's. */
#include "random.h"
#include <math.h>
#include "ziggurat_tables.h"

/* ln 2 in two parts: k * LN2_HI is exact for |k| < 2^11. */
static const double LN2_HI = 0x1.62e42fee00000p-1, LN2_LO = 0x1.a39ef35793c76p-33;

/* 2^k for -1022 <= k <= 1023, from its bits. */
static double pow2(int64_t k) {
  uint64_t b = (uint64_t)(k + 1023) << 52;
  double d;
  memcpy(&d, &b, sizeof d);
  return d;
}

/* exp(x) for -708 < x <= 0: x = k ln2 + r, |r| <= ln2/2, and Taylor to
 * degree 13 for exp(r) (truncation below 1e-17). */
static double exact_exp(double x) {
  double k = floor(x * 0x1.71547652b82fep0 + 0.5); /* round(x / ln2) */
  double r = (x - k * LN2_HI) - k * LN2_LO, p = 1.0 / 6227020800.0;
  static const double c[13] = {
      1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0,
      1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0,
      1.0 / 6.0, 0.5, 1.0, 1.0};
  for (int i = 0; i < 13; i++) p = p * r + c[i];
  return p * pow2((int64_t)k);
}

/* log(u) for 0 < u <= 1 (normal numbers): u = m 2^e with m in
 * [sqrt(1/2), sqrt(2)), log m = 2 atanh(s), s = (m-1)/(m+1), |s| < 0.172. */
double nd_exact_log(double u) {
  uint64_t b;
  memcpy(&b, &u, sizeof b);
  int64_t e = (int64_t)(b >> 52) - 1023;
  b = (b & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
  double m;
  memcpy(&m, &b, sizeof m);
  if (m > 0x1.6a09e667f3bcdp0) { m *= 0.5; e++; }
  double s = (m - 1.0) / (m + 1.0), z = s * s, p = 1.0 / 23.0;
  for (int j = 21; j >= 1; j -= 2) p = p * z + 1.0 / j;
  return (double)e * LN2_HI + ((double)e * LN2_LO + 2.0 * s * p);
}

/* The rare paths: a value beyond r (layer 0), or the wedge test of layer
 * i for x; -1 when x is refused (the caller draws again). */
static double zig_slow(nd_generator *g, int i, double x) {
  if (i == 0) { /* Marsaglia's tail: r + a, a ~ exponential conditioned */
    double a, b;
    do {
      a = -nd_exact_log(nd_u53_open0(g)) / ND_ZIG_R;
      b = -nd_exact_log(nd_u53_open0(g));
    } while (b + b < a * a);
    return ND_ZIG_R + a;
  }
  double y = zig_f[i] + nd_u53(g) * (zig_f[i - 1] - zig_f[i]);
  return y < exact_exp(-0.5 * x * x) ? x : -1.0;
}

/* One 64-bit draw: bits 0-7 the layer, bit 8 the sign, bits 11-63 the
 * position in the layer. The state is copied into s, which never has its
 * address taken outside inlined code, so it stays in registers; the rare
 * path works on a copy. */
static inline double zig(nd_generator *s) {
  for (;;) {
    uint64_t u = nd_next(s), a = u >> 11;
    int i = (int)(u & 0xff);
    double x = (double)(int64_t)a * zig_w[i];
    if (a >= zig_k[i]) {
      nd_generator t = *s;
      x = zig_slow(&t, i, x);
      *s = t;
      if (x < 0) continue;
    }
    uint64_t b; /* the sign from bit 8, without a branch to mispredict */
    memcpy(&b, &x, sizeof b);
    b ^= (u & 0x100) << 55;
    memcpy(&x, &b, sizeof x);
    return x;
  }
}

void nd_normal_fill(nd_generator *g, double *out, int64_t n) {
  nd_generator s = *g;
  for (int64_t i = 0; i < n; i++) out[i] = zig(&s);
  *g = s;
}
