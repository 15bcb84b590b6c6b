/* Private to the elementwise kernel files: the loop shapes. Each loop has
 * a contiguous case (and for binary ops broadcast-scalar cases) that GCC
 * vectorises, and a strided fallback; ctx reaches EXPR as `ctx`. Clones
 * for AVX2 and AVX-512 are picked at load time (target_clones dispatches on
 * __builtin_cpu_supports). Files including this compile at O3. */
#ifndef ND_ELEMENTWISE_LOOPS_H
#define ND_ELEMENTWISE_LOOPS_H
#include "elementwise.h"
#include <math.h>

#define KERNEL ND_CLONES("avx512f", "avx2", "default")

/* Unsigned arithmetic for integers (no int promotion either: uint16 *
 * uint16 overflows int), plain for floats. */
#define UNS(T, x)                                                           \
  _Generic((T)0, float: (x), double: (x), int64_t: (uint64_t)(x),          \
           uint64_t: (uint64_t)(x), default: (uint32_t)(x))

#define IS_F32(T) _Generic((T)0, float: 1, default: 0)
#define FMATH(T, f32, f64, x) (IS_F32(T) ? (T)f32((float)(x)) : (T)f64((double)(x)))
/* out[i] = EXPR(a[i], b[i]); out has type TO (T, or uint8_t for bool).
 * A dense out with stepped inputs indexes them by element (GCC builds
 * vectors from strided loads and still stores whole vectors). */
#define BINARY_LOOP(OPN, EXPR, E, T, kind, TO)                             \
  KERNEL static void b_##OPN##_##E(char **p, const int64_t *st,          \
                                      int64_t n, void *ctx) {               \
    (void)ctx;                                                              \
    TO *o = (TO *)p[0];                                                     \
    const T *a = (const T *)p[1], *b = (const T *)p[2];                     \
    const int64_t es = sizeof(T), eo = sizeof(TO);                          \
    if (st[0] == eo && st[1] == es && st[2] == es) {                        \
      for (int64_t i = 0; i < n; i++) o[i] = (TO)EXPR(T, kind, a[i], b[i]); \
    } else if (st[0] == eo && st[1] == es && st[2] == 0) {                  \
      const T y = *b;                                                       \
      for (int64_t i = 0; i < n; i++) o[i] = (TO)EXPR(T, kind, a[i], y);    \
    } else if (st[0] == eo && st[1] == 0 && st[2] == es) {                  \
      const T x = *a;                                                       \
      for (int64_t i = 0; i < n; i++) o[i] = (TO)EXPR(T, kind, x, b[i]);    \
    } else if (st[0] == eo && st[1] % es == 0 && st[2] % es == 0) {         \
      const int64_t sa = st[1] / es, sb = st[2] / es; /* stepped inputs */  \
      for (int64_t i = 0; i < n; i++)                                       \
        o[i] = (TO)EXPR(T, kind, a[i * sa], b[i * sb]);                     \
    } else {                                                                \
      char *po = p[0];                                                      \
      const char *pa = p[1], *pb = p[2];                                    \
      for (int64_t i = 0; i < n; i++, po += st[0], pa += st[1], pb += st[2]) { \
        const T x = *(const T *)pa, y = *(const T *)pb;                     \
        *(TO *)po = (TO)EXPR(T, kind, x, y);                                \
      }                                                                     \
    }                                                                       \
  }

#define UNARY_LOOP(OPN, EXPR, E, T, kind, TO)                              \
  KERNEL static void u_##OPN##_##E(char **p, const int64_t *st,          \
                                      int64_t n, void *ctx) {               \
    (void)ctx;                                                              \
    TO *o = (TO *)p[0];                                                     \
    const T *a = (const T *)p[1];                                           \
    if (st[0] == sizeof(TO) && st[1] == sizeof(T)) {                        \
      for (int64_t i = 0; i < n; i++) o[i] = (TO)EXPR(T, kind, a[i]);       \
    } else if (st[0] == sizeof(TO) && st[1] % (int64_t)sizeof(T) == 0) {    \
      const int64_t sa = st[1] / (int64_t)sizeof(T); /* a stepped input */  \
      for (int64_t i = 0; i < n; i++) o[i] = (TO)EXPR(T, kind, a[i * sa]);  \
    } else {                                                                \
      char *po = p[0];                                                      \
      const char *pa = p[1];                                                \
      for (int64_t i = 0; i < n; i++, po += st[0], pa += st[1]) {           \
        const T x = *(const T *)pa;                                         \
        *(TO *)po = (TO)EXPR(T, kind, x);                                   \
      }                                                                     \
    }                                                                       \
  }

#endif
