/* Vectorised transcendental math through SLEEF (libsleef, Debian's shared
 * build). Debian's sleef.h only declares the vector functions when the
 * including file is compiled for that ISA, so the few used here are
 * declared below, inside target regions. The vector width is picked once
 * at run time (__builtin_cpu_supports): AVX-512 (16 floats / 8 doubles),
 * AVX2+FMA (8 / 4), else SSE2 (4 / 2, x86-64's baseline). Strided operands
 * are gathered into a small buffer, computed and scattered, so every
 * layout gives the same bits. Accuracy: see the table (u10: 1.0 ulp, u35:
 * 3.5 ulp, u05: 0.5 ulp, u15: 1.5 ulp, SLEEF's documented bounds). */
#ifndef __clang__ /* clang vectorises these loops at -O2 already */
#pragma GCC optimize("O3")
#endif
#include "elementwise.h"
#include <math.h>
#include <pthread.h>

#if defined(__x86_64__) && !defined(ND_NO_SLEEF)
#include <immintrin.h>

/* X(id, sleef name, accuracy, ...) with ... passed through. */
#define VM_UNARY(X, ...)                                                    \
  X(EXP, exp, u10, __VA_ARGS__) X(LOG, log, u35, __VA_ARGS__)               \
  X(SIN, sin, u35, __VA_ARGS__) X(COS, cos, u35, __VA_ARGS__)               \
  X(TANH, tanh, u10, __VA_ARGS__) X(SIGMOID, exp, u10, __VA_ARGS__)         \
  X(LOG1P, log1p, u10, __VA_ARGS__) X(EXPM1, expm1, u10, __VA_ARGS__)       \
  X(LOG2, log2, u10, __VA_ARGS__) X(LOG10, log10, u10, __VA_ARGS__)         \
  X(EXP2, exp2, u10, __VA_ARGS__) X(TAN, tan, u35, __VA_ARGS__)             \
  X(ASIN, asin, u35, __VA_ARGS__) X(ACOS, acos, u35, __VA_ARGS__)           \
  X(ATAN, atan, u35, __VA_ARGS__) X(SINH, sinh, u10, __VA_ARGS__)           \
  X(COSH, cosh, u10, __VA_ARGS__) X(ASINH, asinh, u10, __VA_ARGS__)         \
  X(ACOSH, acosh, u10, __VA_ARGS__) X(ATANH, atanh, u10, __VA_ARGS__)       \
  X(ERF, erf, u10, __VA_ARGS__) X(ERFC, erfc, u15, __VA_ARGS__)             \
  X(LGAMMA, lgamma, u10, __VA_ARGS__)
#define VM_BINARY(X, ...)                                                   \
  X(POW, pow, u10, __VA_ARGS__) X(ATAN2, atan2, u35, __VA_ARGS__)           \
  X(HYPOT, hypot, u05, __VA_ARGS__)

/* Declarations and the table of one ISA: F/D the float/double suffixes
 * (f16, d8), I the ISA's (avx512f), VF/VD the vector types. */
#define DECL1(id, nm, acc, F, D, I, VF, VD)                                 \
  VF Sleef_##nm##F##_##acc##I(VF);                                          \
  VD Sleef_##nm##D##_##acc##I(VD);
#define DECL2(id, nm, acc, F, D, I, VF, VD)                                 \
  VF Sleef_##nm##F##_##acc##I(VF, VF);                                      \
  VD Sleef_##nm##D##_##acc##I(VD, VD);
#define PTRS(id, nm, acc, F, D, I, VF, VD)                                  \
  [ND_VM_##id] = {(const void *)Sleef_##nm##F##_##acc##I,                   \
                  (const void *)Sleef_##nm##D##_##acc##I},
#define ISA_TABLE(name, F, D, I, VF, VD)                                    \
  VM_UNARY(DECL1, F, D, I, VF, VD)                                          \
  VM_BINARY(DECL2, F, D, I, VF, VD)                                         \
  static const void *const name[ND_VM_N][2] = {                             \
      VM_UNARY(PTRS, F, D, I, VF, VD) VM_BINARY(PTRS, F, D, I, VF, VD)};      \
  VD Sleef_log2##D##_u35##I(VD); /* float32 pow's log2 (see pow_float) */  \
  static const void *const name##_powf = (const void *)Sleef_log2##D##_u35##I;

/* One ISA's table and loops: run(fn, o, a, b, n) over n contiguous
 * elements, the last k < W read by MLOAD(p, k): a masked load where the
 * ISA has one (the other lanes read as 0: the same bits as a zero-padded
 * vector, SLEEF's lanes being independent), and written from a buffer one
 * element at a time (a masked store stalls the NaN pass over o that
 * follows). Both memcpy calls of a padded buffer cost a fifth of a
 * 3-element call. */
#define ISA_LOOPS(T, V, W, LOAD, STORE, MLOAD, TAG)                         \
  static void run1_##TAG(const void *f, T *o, const T *a, const T *b,       \
                         int64_t n) {                                       \
    V (*fn)(V) = (V(*)(V))f;                                                \
    (void)b;                                                                \
    int64_t i = 0;                                                          \
    for (; i + W <= n; i += W) STORE(o + i, fn(LOAD(a + i)));               \
    if (i < n) {                                                            \
      T r[W];                                                               \
      STORE(r, fn(MLOAD(a + i, n - i)));                                    \
      for (int64_t j = 0; j < n - i; j++) o[i + j] = r[j];                  \
    }                                                                       \
  }                                                                         \
  static void run2_##TAG(const void *f, T *o, const T *a, const T *b,       \
                         int64_t n) {                                       \
    V (*fn)(V, V) = (V(*)(V, V))f;                                          \
    int64_t i = 0;                                                          \
    for (; i + W <= n; i += W) STORE(o + i, fn(LOAD(a + i), LOAD(b + i)));  \
    if (i < n) {                                                            \
      T r[W];                                                               \
      STORE(r, fn(MLOAD(a + i, n - i), MLOAD(b + i, n - i)));               \
      for (int64_t j = 0; j < n - i; j++) o[i + j] = r[j];                  \
    }                                                                       \
  }

/* The masked loads of the last k lanes. */
#define ML_F512(p, k) _mm512_maskz_loadu_ps((__mmask16)((1u << (k)) - 1), p)
#define ML_D512(p, k) _mm512_maskz_loadu_pd((__mmask8)((1u << (k)) - 1), p)
#define ML_F256(p, k)                                                       \
  _mm256_maskload_ps(p, _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(k)),     \
                                           _mm256_setr_epi32(0, 1, 2, 3, 4, \
                                                             5, 6, 7)))
#define ML_D256(p, k)                                                       \
  _mm256_maskload_pd(p, _mm256_cmpgt_epi64(_mm256_set1_epi64x(k),           \
                                           _mm256_setr_epi64x(0, 1, 2, 3)))
/* SSE2 has no masked loads: a zero-padded buffer. */
static inline __m128 ml_f128(const float *p, int64_t k) {
  float buf[4] = {0};
  for (int64_t j = 0; j < k; j++) buf[j] = p[j];
  return _mm_loadu_ps(buf);
}
static inline __m128d ml_d128(const double *p, int64_t k) {
  double buf[2] = {0};
  for (int64_t j = 0; j < k; j++) buf[j] = p[j];
  return _mm_loadu_pd(buf);
}

typedef void (*vm_run)(const void *f, void *o, const void *a, const void *b,
                       int64_t n);

/* Own kernels where SLEEF is slower than NumPy: plain loops GCC vectorises,
 * one macro per function over both float types (per-type coefficients),
 * instantiated in each ISA region below (suffix I). fp-contract fuses
 * where the region has FMA, the same way in the vector loop and its
 * epilogues, so every length and layout gives the same bits. */
#ifndef __clang__ /* clang fuses within an expression by default */
#pragma GCC optimize("fp-contract=fast")
#endif
typedef union { float f; uint32_t u; } bits_f;
typedef union { double f; uint64_t u; } bits_d;
/* (e^r - 1) / r on |r| <= ln2/2: minimax (mpmath chebyfit), absolute
 * error 1.8e-17 (float64 exp; float32's is SLEEF's). */
static const double em1c_d[] = {1, 0.50000000000000056, 0.16666666666666671,
    0.041666666666573142, 0.0083333333333261411, 0.0013888888932488599,
    0.00019841269874800493, 2.4801504346997686e-05, 2.7557255425746435e-06,
    2.7626357241447223e-07, 2.5105206373957011e-08};
/* e^r - 1 as s Q'(s) for r = -2s (tanh's argument, the -2 folded into
 * the coefficients: c_i (-2)^(i+1), exact); float32's c_i: absolute error
 * 1.1e-8. */
static const float em1t_f[] = {-2 * 1.00000001f, 4 * 0.500000001f,
    -8 * 0.166665053f, 16 * 0.041666465f, -32 * 0.00836914849f,
    64 * 0.0013933641f};
static const double em1t_d[] = {-2 * 1.0, 4 * 0.50000000000000056,
    -8 * 0.16666666666666671, 16 * 0.041666666666573142,
    -32 * 0.0083333333333261411, 64 * 0.0013888888932488599,
    -128 * 0.00019841269874800493, 256 * 2.4801504346997686e-05,
    -512 * 2.7557255425746435e-06, 1024 * 2.7626357241447223e-07,
    -2048 * 2.5105206373957011e-08};
#define NC(c) ((int)(sizeof(c) / sizeof(c[0])))

/* Per type T (bits U, suffix S, mantissa bits M, exponent bias B, the
 * round-to-integer shifter SH): Horner, and e^-2z - 1 for z in [0, 20] as
 * (2^k - 1) + 2^k r Q(r), r = -2z - k ln2 (Cody-Waite): no cancellation
 * near 0 (k = 0). 2^k is built in the exponent bits of -2z log2(e) + SH,
 * whose low bits hold k. */
#define OWN_CORE(T, U, S, I, M, B, SH)                                      \
  static inline T horner_##S##I(const T *c, int n, T x) {                   \
    T p = c[n - 1];                                                         \
    for (int k = n - 2; k >= 0; k--) p = p * x + c[k];                      \
    return p;                                                               \
  }                                                                         \
  static inline T expm1neg_##S##I(T z) { /* e^-2z - 1, r = -2s */           \
    bits_##S t = {z * (T)-2.88539008177792681472 + SH};                     \
    T k = t.f - SH;                                                         \
    T s = z + k * (T)0.3465728759765625 + k * (T)7.1430341015470861606e-7;  \
    bits_##S sc = {.u = (U)((t.u + B) << M)};                               \
    return (sc.f - 1) + sc.f * (s * horner_##S##I(em1t_##S, NC(em1t_##S), s)); \
  }                                                                         \
  /* tanh |x| = -m / (2 + m), m = e^-2|x| - 1 (1 past |x| = 20). */         \
  static void tanh_##S##I(void *po, const void *pa, int64_t n) {            \
    T *o = po;                                                              \
    const T *a = pa;                                                        \
    const U sign = (U)1 << (sizeof(T) * 8 - 1);                             \
    for (int64_t i = 0; i < n; i++) {                                       \
      bits_##S bx = {a[i]}, ba = {.u = bx.u & ~sign};                       \
      T m = expm1neg_##S##I(ba.f > 20 ? 20 : ba.f);                         \
      bits_##S r = {m / (-2 - m)}; /* x's sign on |r| (-0 stays -0) */      \
      r.u = (r.u & ~sign) | (bx.u & sign);                                  \
      o[i] = ba.f != ba.f ? (T)NAN : r.f;                                   \
    }                                                                       \
  }

/* exp: 2^k (1 + r Q(r)) with 2^k in the exponent bits when every x of
 * the chunk has a normal result (in [NLO, NHI]); else all clamped to
 * [LO, HI] (0 and inf beyond), 2^k applied as 2^floor(k/2) 2^ceil(k/2) so
 * subnormal results round once, and NaN checked. */
#define OWN_EXP(T, U, S, I, M, B, SH, NLO, NHI, LO, HI)                     \
  static inline T expcore_##S##I(T x, U *kb) { /* *kb = k + 4B */           \
    const bits_##S sh = {SH};                                               \
    bits_##S t = {x * (T)1.44269504088896340736 + SH};                      \
    T k = t.f - SH;                                                         \
    T r = x - k * (T)0.693145751953125 - k * (T)1.42860682030941723212e-6;  \
    *kb = t.u - sh.u + 4 * B;                                               \
    return 1 + r * horner_##S##I(em1c_##S, NC(em1c_##S), r);                \
  }                                                                         \
  static void exp_##S##I(void *po, const void *pa, int64_t n) {             \
    T *o = po;                                                              \
    const T *a = pa;                                                        \
    int odd = 0;                                                            \
    U kb;                                                                   \
    for (int64_t i = 0; i < n; i++) odd |= !((a[i] >= NLO) & (a[i] <= NHI)); \
    if (!odd)                                                               \
      for (int64_t i = 0; i < n; i++) {                                     \
        T p = expcore_##S##I(a[i], &kb);                                    \
        bits_##S sc = {.u = (kb - 3 * B) << M};                             \
        o[i] = p * sc.f;                                                    \
      }                                                                     \
    else                                                                    \
      for (int64_t i = 0; i < n; i++) {                                     \
        T x = a[i], p = expcore_##S##I(x < LO ? LO : x > HI ? HI : x, &kb); \
        U k1 = kb >> 1;                                                     \
        bits_##S s1 = {.u = (k1 - B) << M}, s2 = {.u = (kb - k1 - B) << M}; \
        o[i] = x != x ? (T)NAN : p * s1.f * s2.f;                           \
      }                                                                     \
  }

#define OWN_ALL(I)                                                          \
  OWN_CORE(float, uint32_t, f, I, 23, 127, 0x1.8p23f)                       \
  OWN_CORE(double, uint64_t, d, I, 52, 1023, 0x1.8p52)                      \
  OWN_EXP(double, uint64_t, d, I, 52, 1023, 0x1.8p52, -708.0, 709.0, -746.0, \
          710.0)                                                            \
  static void (*const own##I[])(void *, const void *, int64_t) = {          \
      tanh_f##I, tanh_d##I, exp_d##I};

#ifdef __clang__ /* clang ignores GCC target pragmas */
#pragma clang attribute push(__attribute__((target("avx512f,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,fma") /* fma: for the ymm epilogues */
#endif
ISA_TABLE(fns_512, f16, d8, avx512f, __m512, __m512d)
ISA_LOOPS(float, __m512, 16, _mm512_loadu_ps, _mm512_storeu_ps, ML_F512, f_512)
ISA_LOOPS(double, __m512d, 8, _mm512_loadu_pd, _mm512_storeu_pd, ML_D512, d_512)
OWN_ALL(_512)
#ifdef __clang__
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#ifdef __clang__ /* clang ignores GCC target pragmas */
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif
ISA_TABLE(fns_256, f8, d4, avx2, __m256, __m256d)
ISA_LOOPS(float, __m256, 8, _mm256_loadu_ps, _mm256_storeu_ps, ML_F256, f_256)
ISA_LOOPS(double, __m256d, 4, _mm256_loadu_pd, _mm256_storeu_pd, ML_D256, d_256)
OWN_ALL(_256)
#ifdef __clang__
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

ISA_TABLE(fns_128, f4, d2, sse2, __m128, __m128d)
ISA_LOOPS(float, __m128, 4, _mm_loadu_ps, _mm_storeu_ps, ml_f128, f_128)
ISA_LOOPS(double, __m128d, 2, _mm_loadu_pd, _mm_storeu_pd, ml_d128, d_128)
OWN_ALL(_128)

/* The glue loops around SLEEF, multiversioned where core.h allows IFUNC. */
#define VM_CLONES ND_CLONES("avx512f", "avx2", "default")

/* The chosen ISA's functions and loops, set once. */
typedef struct {
  const void *fn;
  vm_run run;
  int esize, sigmoid, binary, powf32;
  void (*own)(void *o, const void *a, int64_t n); /* own kernel, if any */
} vm_op;
static vm_op ops[ND_VM_N][2], powf_log2;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void pick(void) {
  const void *const (*fns)[2] = fns_128, *lg = fns_128_powf;
  void (*const *own)(void *, const void *, int64_t) = own_128;
  vm_run r1[2] = {(vm_run)run1_f_128, (vm_run)run1_d_128};
  vm_run r2[2] = {(vm_run)run2_f_128, (vm_run)run2_d_128};
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    fns = fns_512, lg = fns_512_powf, own = own_512;
    r1[0] = (vm_run)run1_f_512, r1[1] = (vm_run)run1_d_512;
    r2[0] = (vm_run)run2_f_512, r2[1] = (vm_run)run2_d_512;
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    fns = fns_256, lg = fns_256_powf, own = own_256;
    r1[0] = (vm_run)run1_f_256, r1[1] = (vm_run)run1_d_256;
    r2[0] = (vm_run)run2_f_256, r2[1] = (vm_run)run2_d_256;
  }
  for (int id = 0; id < ND_VM_N; id++)
    for (int d = 0; d < 2; d++) {
      int bin = id >= ND_VM_POW;
      ops[id][d] = (vm_op){fns[id][d], bin ? r2[d] : r1[d], d ? 8 : 4,
                           id == ND_VM_SIGMOID, bin, id == ND_VM_POW && !d, NULL};
    }
  powf_log2 = (vm_op){lg, r1[1], 8, 0, 0, 0, NULL};
  ops[ND_VM_TANH][0].own = own[0], ops[ND_VM_TANH][1].own = own[1];
  ops[ND_VM_EXP][1].own = own[2]; /* float32: SLEEF's exp beats NumPy's */
}

enum { CH = 256 };

/* sigmoid(x) = 1 / (1 + exp(-x)) around the vector exp. */
#define SIGMOID_CHUNK(T)                                                    \
  static void sigmoid_##T(const vm_op *v, T *o, const T *a, int64_t n) {    \
    _Alignas(64) T t[CH];                                                   \
    for (int64_t i = 0; i < n; i += CH) {                                   \
      int64_t m = n - i < CH ? n - i : CH;                                  \
      for (int64_t j = 0; j < m; j++) t[j] = -a[i + j];                     \
      v->run(v->fn, t, t, NULL, m);                                         \
      for (int64_t j = 0; j < m; j++) o[i + j] = (T)1 / ((T)1 + t[j]);      \
    }                                                                       \
  }
SIGMOID_CHUNK(float)
SIGMOID_CHUNK(double)

/* float32 pow as exp2(y * log2(x)) in float64 lanes: SLEEF's powf works
 * in double-float pairs and costs ~8 exps, while float64 carries ~2^-40
 * relative error here (log2 at 3.5 ulp, exp2 at 1 ulp), so the float32
 * result stays within 0.5 ulp plus a hair (<1 ulp). x <= 0, x = inf, NaN and infinite y take libm's powf
 * for IEEE's special cases (signs of negative bases, 0^0, 1^nan ...). */
VM_CLONES static void pow_float(float *o, const float *a, const float *b,
                                int64_t n) {
  const vm_op *lg = &powf_log2, *ex = &ops[ND_VM_EXP2][1];
  _Alignas(64) double t[CH];
  int odd = 0;
  if (n <= 0 || n > CH) return; /* never: callers pass 1..CH */
  for (int64_t j = 0; j < n; j++) { /* & not &&: the loop vectorises */
    t[j] = a[j];
    odd |= !((a[j] > 0) & (a[j] < INFINITY) & (fabsf(b[j]) < INFINITY));
  }
  lg->run(lg->fn, t, t, NULL, n);
  for (int64_t j = 0; j < n; j++) t[j] *= b[j];
  ex->run(ex->fn, t, t, NULL, n);
  if (!odd)
    for (int64_t j = 0; j < n; j++) o[j] = (float)t[j];
  else
    for (int64_t j = 0; j < n; j++)
      o[j] = a[j] > 0 && a[j] < INFINITY && fabsf(b[j]) < INFINITY
                 ? (float)t[j] : powf(a[j], b[j]);
}

/* SLEEF's NaNs carry all-ones payloads; LuaJIT reads such a double as a
 * tagged object, so every NaN leaves as the default quiet NaN. */
#define CANON(T)                                                            \
  VM_CLONES static void canon_##T(T *o, int64_t n) {                      \
    for (int64_t i = 0; i < n; i++) o[i] = o[i] != o[i] ? (T)NAN : o[i];    \
  }
CANON(float)
CANON(double)

static void contiguous(const vm_op *v, char *o, const char *a, const char *b,
                       int64_t n) {
  for (int64_t i = 0; i < n; i += CH) { /* fixed while still in L1 */
    int64_t m = n - i < CH ? n - i : CH, at = i * v->esize;
    if (v->own) { /* its NaNs are the default NaN already */
      v->own(o + at, a + at, m);
      continue;
    }
    if (v->sigmoid && v->esize == 4)
      sigmoid_float(v, (float *)(o + at), (const float *)(a + at), m);
    else if (v->sigmoid)
      sigmoid_double(v, (double *)(o + at), (const double *)(a + at), m);
    else if (v->powf32)
      pow_float((float *)(o + at), (const float *)(a + at),
                (const float *)(b + at), m);
    else
      v->run(v->fn, o + at, a + at, b ? b + at : NULL, m);
    if (v->esize == 4) canon_float((float *)(o + at), m);
    else canon_double((double *)(o + at), m);
  }
}

/* Strided operands through CH-element buffers; every other element (a
 * step of 2) as a constant stride, which vectorises. */
#define GATHER(T)                                                           \
  VM_CLONES static void gather_##T(char *d, const char *s, int64_t st,      \
                                   int64_t m) {                             \
    T v = *(const T *)s; /* a broadcast scalar (pow's exponent) fills */    \
    if (st == 0)                                                            \
      for (int64_t j = 0; j < m; j++) ((T *)d)[j] = v;                      \
    else if (st == 2 * (int64_t)sizeof(T))                                  \
      for (int64_t j = 0; j < m; j++) ((T *)d)[j] = ((const T *)s)[2 * j];  \
    else                                                                    \
      for (int64_t j = 0; j < m; j++) ((T *)d)[j] = *(const T *)(s + j * st); \
  }                                                                         \
  static void scatter_##T(char *d, int64_t st, const char *s, int64_t m) {  \
    for (int64_t j = 0; j < m; j++) *(T *)(d + j * st) = ((const T *)s)[j]; \
  }
GATHER(float)
GATHER(double)

/* The kernel: operands 0 (out), 1 (and 2) of the op's float dtype. */
static void vm_kernel(char **p, const int64_t *st, int64_t n, void *ctx) {
  const vm_op *v = ctx;
  const int64_t es = v->esize;
  if (st[0] == es && st[1] == es && (!v->binary || st[2] == es)) {
    contiguous(v, p[0], p[1], v->binary ? p[2] : NULL, n);
    return;
  }
  _Alignas(64) char x[CH * 8], y[CH * 8], r[CH * 8];
  void (*gather)(char *, const char *, int64_t, int64_t) =
      es == 4 ? gather_float : gather_double;
  for (int64_t i = 0; i < n; i += CH) {
    int64_t m = n - i < CH ? n - i : CH;
    const char *a = p[1] + i * st[1], *b = v->binary ? p[2] + i * st[2] : NULL;
    if (st[1] != es) gather(x, a, st[1], m), a = x;
    if (b && st[2] != es) gather(y, b, st[2], m), b = y;
    char *o = st[0] == es ? p[0] + i * st[0] : r;
    contiguous(v, o, a, b, m);
    if (o == r) (es == 4 ? scatter_float : scatter_double)(p[0] + i * st[0], st[0], r, m);
  }
}

int nd_vmath(int id, int dt, nd_loop_fn *kernel, void **ctx) {
  if (id < 0 || id >= ND_VM_N || (dt != ND_FLOAT32 && dt != ND_FLOAT64))
    return 0;
  pthread_once(&once, pick);
  *kernel = vm_kernel;
  *ctx = &ops[id][dt == ND_FLOAT64];
  return 1;
}
#else
int nd_vmath(int id, int dt, nd_loop_fn *kernel, void **ctx) {
  (void)id, (void)dt, (void)kernel, (void)ctx;
  return 0; /* elsewhere: libm through the generic kernels */
}
#endif
