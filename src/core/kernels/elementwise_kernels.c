/* The elementwise inner loops: one macro per loop shape, instantiated for
 * every dtype through ND_DTYPES. Each loop has a contiguous case and a
 * broadcast-scalar case that GCC vectorises (O3 here: -O2's cost model
 * will not version loops for aliasing, and out may alias an input), and
 * a strided fallback. Clones for AVX2 and AVX-512 are picked at load time
 * (target_clones dispatches on __builtin_cpu_supports).
 *
 * No C undefined behaviour: integer arithmetic goes through unsigned types
 * (wraps), integer pow is repeated squaring in uint64_t, floats to ints are
 * never converted here (the driver's conversions saturate). */
#ifndef __clang__ /* clang vectorises these loops at -O2 already */
#pragma GCC optimize("O3")
#endif
#include "elementwise.h"
#include <math.h>

#include "elementwise_loops.h"

static inline uint64_t ipow(uint64_t base, int64_t ex) {
  if (ex < 0) /* as PyTorch: 1 and -1 keep their magnitude, others give 0 */
    return base == 1 ? 1 : base == (uint64_t)-1 ? (ex & 1 ? base : 1) : 0;
  uint64_t r = 1;
  for (; ex; ex >>= 1, base *= base)
    if (ex & 1) r *= base;
  return r;
}

/* exp for float32, branch-free so that it vectorises: Cephes' expf
 * polynomial after n = round(x / ln 2), scaled by 2^n in two halves so
 * results down to the subnormals stay exact in range. ~1 ulp. */
static inline float exp_f32(float x) {
  const float hi = 88.72283935546875f, lo = -103.97208404541015625f;
  float xc = x > hi ? hi : x;
  xc = xc < lo ? lo : xc;
  float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  int32_t ni = n == n ? (int32_t)n : 0, n1 = ni / 2, n2 = ni - n1; /* NaN: no UB */
  int32_t b1 = (n1 + 127) << 23, b2 = (n2 + 127) << 23;
  float s1, s2;
  memcpy(&s1, &b1, 4);
  memcpy(&s2, &b2, 4);
  float v = p * s1 * s2;
  v = x > hi ? INFINITY : v;
  v = x < lo ? 0.0f : v;
  return x != x ? x : v;
}


#define EXP_T(T, x) (IS_F32(T) ? (T)exp_f32((float)(x)) : (T)exp((double)(x)))

/* ---- binary expressions: (T, kind, a, b) ---- */
#define E_ADD(T, k, a, b)                                                   \
  (k == 'b' ? (T)((a != 0) | (b != 0)) : (T)(UNS(T, a) + UNS(T, b)))
#define E_SUB(T, k, a, b) ((T)(UNS(T, a) - UNS(T, b)))
#define E_MUL(T, k, a, b)                                                   \
  (k == 'b' ? (T)((a != 0) & (b != 0)) : (T)(UNS(T, a) * UNS(T, b)))
#define E_DIV(T, k, a, b) (k == 'f' ? (T)(a / b) : (T)0) /* floats only */
#define E_POW(T, k, a, b)                                                   \
  (k == 'f' ? (IS_F32(T) ? (T)powf((float)a, (float)b)                     \
                         : (T)pow((double)a, (double)b))                    \
   : k == 'b' ? (T)((b == 0) | (a != 0))                                    \
              : (T)ipow((uint64_t)(int64_t)a, (int64_t)b))
#define E_MAX(T, k, a, b) (NANQ(a) ? a : NANQ(b) ? b : a > b ? a : b)
#define E_MIN(T, k, a, b) (NANQ(a) ? a : NANQ(b) ? b : a < b ? a : b)
#define E_EQ(T, k, a, b) (a == b)
#define E_NE(T, k, a, b) (a != b)
#define E_LT(T, k, a, b) (a < b)
#define E_LE(T, k, a, b) (a <= b)
#define E_GT(T, k, a, b) (a > b)
#define E_GE(T, k, a, b) (a >= b)

#define BINARY_ALL(E, name, T, kind)                                        \
  BINARY_LOOP(add, E_ADD, E, T, kind, T)                                 \
  BINARY_LOOP(sub, E_SUB, E, T, kind, T)                                 \
  BINARY_LOOP(mul, E_MUL, E, T, kind, T)                                 \
  BINARY_LOOP(div, E_DIV, E, T, kind, T)                                 \
  BINARY_LOOP(pow, E_POW, E, T, kind, T)                                 \
  BINARY_LOOP(max, E_MAX, E, T, kind, T)                                 \
  BINARY_LOOP(min, E_MIN, E, T, kind, T)                                 \
  BINARY_LOOP(eq, E_EQ, E, T, kind, uint8_t)                             \
  BINARY_LOOP(ne, E_NE, E, T, kind, uint8_t)                             \
  BINARY_LOOP(lt, E_LT, E, T, kind, uint8_t)                             \
  BINARY_LOOP(le, E_LE, E, T, kind, uint8_t)                             \
  BINARY_LOOP(gt, E_GT, E, T, kind, uint8_t)                             \
  BINARY_LOOP(ge, E_GE, E, T, kind, uint8_t)
ND_NATIVE_DTYPES(BINARY_ALL)

/* Rows per dtype from the one dtype list; columns in nd_op order. */
#define BROW(E, name, T, kind)                                              \
  [ND_##E] = {b_add_##E, b_sub_##E, b_mul_##E, b_div_##E, b_pow_##E,        \
              b_max_##E, b_min_##E, b_eq_##E,  b_ne_##E,  b_lt_##E,         \
              b_le_##E,  b_gt_##E,  b_ge_##E},
const nd_loop_fn nd_binary_kernels[ND_NDTYPES][ND_GE + 1] = {ND_NATIVE_DTYPES(BROW)};
#undef BROW

/* ---- unary expressions: (T, kind, a); float ones only run on floats ---- */
#define U_NEG(T, k, a) (k == 'f' ? (T)-a : (T)(0u - UNS(T, a)))
/* Integer abs as a select on a >= 0 (spelt so that uint8 does not warn):
 * GCC makes it branch-free, where `a > 0 ? a : -a` stayed a branch that
 * mispredicts on zeros and mixed signs in strided loops. */
#define U_ABS(T, k, a)                                                      \
  (k == 'f' ? FMATH(T, fabsf, fabs, a)                                      \
            : a > 0 || a == 0 ? a : (T)(0u - UNS(T, a)))
#define U_EXP(T, k, a) EXP_T(T, a)
#define U_LOG(T, k, a) FMATH(T, logf, log, a)
#define U_SQRT(T, k, a) FMATH(T, sqrtf, sqrt, a)
#define U_SIN(T, k, a) FMATH(T, sinf, sin, a)
#define U_COS(T, k, a) FMATH(T, cosf, cos, a)
#define U_TANH(T, k, a) FMATH(T, tanhf, tanh, a)
#define U_SIGMOID(T, k, a) ((T)1 / ((T)1 + EXP_T(T, -a)))
#define U_RELU(T, k, a) (a > 0 || NANQ(a) ? a : (T)0)
#define U_FLOOR(T, k, a) (k == 'f' ? FMATH(T, floorf, floor, a) : a)
#define U_CEIL(T, k, a) (k == 'f' ? FMATH(T, ceilf, ceil, a) : a)
#define U_ROUND(T, k, a) (k == 'f' ? FMATH(T, rintf, rint, a) : a) /* half even */
#define U_ISNAN(T, k, a) NANQ(a)
#define U_ISFINITE(T, k, a) (k == 'f' ? a - a == 0 : 1)

#define UNARY_ALL(E, name, T, kind)                                         \
  UNARY_LOOP(neg, U_NEG, E, T, kind, T)                                  \
  UNARY_LOOP(abs, U_ABS, E, T, kind, T)                                  \
  UNARY_LOOP(exp, U_EXP, E, T, kind, T)                                  \
  UNARY_LOOP(log, U_LOG, E, T, kind, T)                                  \
  UNARY_LOOP(sqrt, U_SQRT, E, T, kind, T)                                \
  UNARY_LOOP(sin, U_SIN, E, T, kind, T)                                  \
  UNARY_LOOP(cos, U_COS, E, T, kind, T)                                  \
  UNARY_LOOP(tanh, U_TANH, E, T, kind, T)                                \
  UNARY_LOOP(sigmoid, U_SIGMOID, E, T, kind, T)                          \
  UNARY_LOOP(relu, U_RELU, E, T, kind, T)                                \
  UNARY_LOOP(floor, U_FLOOR, E, T, kind, T)                              \
  UNARY_LOOP(ceil, U_CEIL, E, T, kind, T)                                \
  UNARY_LOOP(round, U_ROUND, E, T, kind, T)                              \
  UNARY_LOOP(isnan, U_ISNAN, E, T, kind, uint8_t)                        \
  UNARY_LOOP(isfinite, U_ISFINITE, E, T, kind, uint8_t)
ND_NATIVE_DTYPES(UNARY_ALL)

#define UROW(E, name, T, kind)                                              \
  [ND_##E] = {u_neg_##E,  u_abs_##E,   u_exp_##E,   u_log_##E,   u_sqrt_##E, \
              u_sin_##E,  u_cos_##E,   u_tanh_##E,  u_sigmoid_##E,          \
              u_relu_##E, u_floor_##E, u_ceil_##E,  u_round_##E,            \
              u_isnan_##E, u_isfinite_##E},
const nd_loop_fn nd_unary_kernels[ND_NDTYPES][ND_ISFINITE - ND_NEG + 1] = {
    ND_NATIVE_DTYPES(UROW)};
#undef UROW

/* ---- clamp and where: four operands ---- */
#define CLAMP(T, x, lo, hi) ((x < lo ? lo : x) > hi ? hi : x < lo ? lo : x)
#define CLAMP_LOOP(E, name, T, kind)                                        \
  KERNEL static void clamp_##E(char **p, const int64_t *st, int64_t n,   \
                                  void *ctx) {                              \
    (void)ctx;                                                              \
    if (st[0] == sizeof(T) && st[1] == sizeof(T) && !st[2] && !st[3]) {     \
      T *o = (T *)p[0];                                                     \
      const T *a = (const T *)p[1], lo = *(const T *)p[2],                  \
              hi = *(const T *)p[3];                                        \
      for (int64_t i = 0; i < n; i++) o[i] = CLAMP(T, a[i], lo, hi);        \
      return;                                                               \
    }                                                                       \
    if (st[0] == sizeof(T) && st[1] % (int64_t)sizeof(T) == 0 && !st[2] &&  \
        !st[3]) { /* a stepped input: indexed by element, as BINARY_LOOP */ \
      T *o = (T *)p[0];                                                     \
      const T *a = (const T *)p[1], lo = *(const T *)p[2],                  \
              hi = *(const T *)p[3];                                        \
      const int64_t sa = st[1] / (int64_t)sizeof(T);                        \
      for (int64_t i = 0; i < n; i++) o[i] = CLAMP(T, a[i * sa], lo, hi);   \
      return;                                                               \
    }                                                                       \
    char *po = p[0];                                                        \
    const char *pa = p[1], *pl = p[2], *ph = p[3];                          \
    for (int64_t i = 0; i < n;                                              \
         i++, po += st[0], pa += st[1], pl += st[2], ph += st[3])           \
      *(T *)po = CLAMP(T, *(const T *)pa, *(const T *)pl, *(const T *)ph);  \
  }
ND_NATIVE_DTYPES(CLAMP_LOOP)

/* The unsigned integer of T's size. */
#define BITS_OF(T)                                                          \
  __typeof__(_Generic((T)0, float: (uint32_t)0, double: (uint64_t)0,       \
           int32_t: (uint32_t)0, int64_t: (uint64_t)0, int16_t: (uint16_t)0, \
           uint16_t: (uint16_t)0, uint32_t: (uint32_t)0,                    \
           uint64_t: (uint64_t)0, default: (uint8_t)0))
#define WHERE_LOOP(E, name, T, kind)                                        \
  KERNEL static void where_##E(char **p, const int64_t *st, int64_t n,   \
                                  void *ctx) {                              \
    (void)ctx;                                                              \
    if (st[0] == sizeof(T) && st[1] == 1 && st[2] == sizeof(T) &&           \
        st[3] == sizeof(T)) {                                               \
      T *o = (T *)p[0];                                                     \
      const uint8_t *c = (const uint8_t *)p[1];                             \
      const T *a = (const T *)p[2], *b = (const T *)p[3];                   \
      for (int64_t i = 0; i < n; i++) { /* both loaded: a select, so 1-byte \
                                           types vectorise too */          \
        T x = a[i], y = b[i];                                               \
        o[i] = c[i] ? x : y;                                                \
      }                                                                     \
      return;                                                               \
    }                                                                       \
    if (st[0] == sizeof(T) && st[2] % (int64_t)sizeof(T) == 0 &&            \
        st[3] % (int64_t)sizeof(T) == 0) { /* stepped: by element */        \
      T *o = (T *)p[0];                                                     \
      const uint8_t *c = (const uint8_t *)p[1];                             \
      const T *a = (const T *)p[2], *b = (const T *)p[3];                   \
      const int64_t sc = st[1], sa = st[2] / (int64_t)sizeof(T),            \
                    sb = st[3] / (int64_t)sizeof(T);                        \
      for (int64_t i = 0; i < n; i++) { /* a select on the bits: GCC      \
                                           branched on float conditions */ \
        T x = a[i * sa], y = b[i * sb];                                     \
        __typeof__(BITS_OF(T)) xb, yb, mb;                                  \
        memcpy(&xb, &x, sizeof x);                                          \
        memcpy(&yb, &y, sizeof y);                                          \
        mb = (__typeof__(xb))0 - (__typeof__(xb))(c[i * sc] != 0);          \
        xb = (__typeof__(xb))((xb & mb) | (yb & (__typeof__(xb))~mb));      \
        memcpy(o + i, &xb, sizeof xb);                                      \
      }                                                                     \
      return;                                                               \
    }                                                                       \
    char *po = p[0];                                                        \
    const char *pc = p[1], *pa = p[2], *pb = p[3];                          \
    for (int64_t i = 0; i < n;                                              \
         i++, po += st[0], pc += st[1], pa += st[2], pb += st[3])           \
      *(T *)po = *(const uint8_t *)pc ? *(const T *)pa : *(const T *)pb;    \
  }
ND_NATIVE_DTYPES(WHERE_LOOP)

#define CLAMP_NAME(E, name, T, kind) [ND_##E] = clamp_##E,
#define WHERE_NAME(E, name, T, kind) [ND_##E] = where_##E,
const nd_loop_fn nd_clamp_kernels[ND_NDTYPES] = {ND_NATIVE_DTYPES(CLAMP_NAME)};
const nd_loop_fn nd_where_kernels[ND_NDTYPES] = {ND_NATIVE_DTYPES(WHERE_NAME)};
