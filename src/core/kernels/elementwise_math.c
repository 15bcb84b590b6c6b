/* More math: the functions of the contract's "More math" section, on the
 * elementwise driver (nd_ew_run) and the loop shapes of elementwise_loops.h.
 * Kernels are instantiated for every dtype from the one dtype list; the
 * float-only ones compute 0 for other dtypes and are never reached there
 * (the drivers below promote to a float first).
 *
 * No C undefined behaviour and no signal: integer division and remainder
 * never see a zero divisor (the driver refuses one before any element is
 * written; the kernels still guard) nor INT_MIN / -1. */
#ifndef __clang__ /* clang vectorises these loops at -O2 already */
#pragma GCC optimize("O3")
#endif
#include "elementwise_loops.h"
#include <float.h>

/* ---- scalar helpers, one per float type where the math differs ---- */
static inline int lt0_f(float x) { return x < 0; }
static inline int lt0_d(double x) { return x < 0; }
static inline int lt0_i(int64_t x) { return x < 0; }
static inline int lt0_u(uint64_t x) { (void)x; return 0; }
#define LT0(x)                                                              \
  _Generic((x), float: lt0_f, double: lt0_d, uint64_t: lt0_u,              \
           default: lt0_i)(x)
static inline int inf_f(float x) { return x == INFINITY || x == -INFINITY; }
static inline int inf_d(double x) { return x == INFINITY || x == -INFINITY; }
static inline int inf_i(int64_t x) { (void)x; return 0; }
#define INFQ(x) _Generic((x), float: inf_f, double: inf_d, default: inf_i)(x)
/* The bits of an integer (bool included) as unsigned; 0 for floats, whose
 * bitwise kernels are never reached. */
#define IBITS(T, x)                                                         \
  _Generic((T)0, float: (uint64_t)0, double: (uint64_t)0,                   \
           int64_t: (uint64_t)(x), uint64_t: (x), default: (uint32_t)(x))

static inline float lgamma_f(float x) { int s; return lgammaf_r(x, &s); }
static inline double lgamma_d(double x) { int s; return lgamma_r(x, &s); }
static inline float recip_f(float x) { return 1.0f / x; }
static inline double recip_d(double x) { return 1.0 / x; }
static inline float rsqrt_f(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt_d(double x) { return 1.0 / sqrt(x); }
static inline float frac_f(float x) { return x - truncf(x); }
static inline double frac_d(double x) { return x - trunc(x); }

/* PyTorch's float remainder (sign of the divisor; b == 0 gives NaN) and
 * floor division (b == 0 gives a / b; the quotient rounded as Python). */
#define FLOAT_DIVISION(S, T, FMOD, FLOOR, COPYSIGN)                         \
  static inline T rem_##S(T a, T b) {                                       \
    T m = FMOD(a, b);                                                       \
    return m != 0 && (b < 0) != (m < 0) ? m + b : m;                        \
  }                                                                         \
  static inline T fdiv_##S(T a, T b) {                                      \
    if (b == 0) return a / b;                                               \
    T m = FMOD(a, b), d = (a - m) / b;                                      \
    if (m != 0 && (b < 0) != (m < 0)) d -= 1;                               \
    if (d == 0) return COPYSIGN(0, a / b);                                  \
    T f = FLOOR(d);                                                         \
    return d - f > (T)0.5 ? f + 1 : f;                                      \
  }
FLOAT_DIVISION(f, float, fmodf, floorf, copysignf)
FLOAT_DIVISION(d, double, fmod, floor, copysign)

/* Integers, any width as int64 (results cast back wrap). Zero divisors
 * are refused by the driver; -1 is handled apart (INT64_MIN / -1 traps). */
static inline int64_t fmod_i(int64_t a, int64_t b) {
  return b == 0 || b == -1 ? 0 : a % b;
}
static inline int64_t rem_i(int64_t a, int64_t b) {
  int64_t r = fmod_i(a, b);
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}
static inline int64_t fdiv_i(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return (int64_t)(0u - (uint64_t)a);
  int64_t q = a / b;
  return a % b != 0 && (a < 0) != (b < 0) ? q - 1 : q;
}
/* uint64 beyond int64: its own, with no sign to fix. */
static inline uint64_t fmod_u(uint64_t a, uint64_t b) { return b ? a % b : 0; }
static inline uint64_t fdiv_u(uint64_t a, uint64_t b) { return b ? a / b : 0; }
#define BYTYPE(T, F32, F64, INT, U64)                                       \
  _Generic((T)0, float: F32, double: F64, uint64_t: U64, default: INT)

/* ---- unary expressions (T, kind, a) ---- */
#define FONLY(T, k, f32, f64, a) (k == 'f' ? FMATH(T, f32, f64, a) : (T)0)
#define M_LOG1P(T, k, a) FONLY(T, k, log1pf, log1p, a)
#define M_EXPM1(T, k, a) FONLY(T, k, expm1f, expm1, a)
#define M_LOG2(T, k, a) FONLY(T, k, log2f, log2, a)
#define M_LOG10(T, k, a) FONLY(T, k, log10f, log10, a)
#define M_EXP2(T, k, a) FONLY(T, k, exp2f, exp2, a)
#define M_TAN(T, k, a) FONLY(T, k, tanf, tan, a)
#define M_ASIN(T, k, a) FONLY(T, k, asinf, asin, a)
#define M_ACOS(T, k, a) FONLY(T, k, acosf, acos, a)
#define M_ATAN(T, k, a) FONLY(T, k, atanf, atan, a)
#define M_SINH(T, k, a) FONLY(T, k, sinhf, sinh, a)
#define M_COSH(T, k, a) FONLY(T, k, coshf, cosh, a)
#define M_ASINH(T, k, a) FONLY(T, k, asinhf, asinh, a)
#define M_ACOSH(T, k, a) FONLY(T, k, acoshf, acosh, a)
#define M_ATANH(T, k, a) FONLY(T, k, atanhf, atanh, a)
#define M_ERF(T, k, a) FONLY(T, k, erff, erf, a)
#define M_ERFC(T, k, a) FONLY(T, k, erfcf, erfc, a)
#define M_LGAMMA(T, k, a) FONLY(T, k, lgamma_f, lgamma_d, a)
#define M_RECIPROCAL(T, k, a) FONLY(T, k, recip_f, recip_d, a)
#define M_RSQRT(T, k, a) FONLY(T, k, rsqrt_f, rsqrt_d, a)
#define M_SIGN(T, k, a) (k == 'b' ? a : (T)((a > 0) - LT0(a))) /* NaN: 0 */
#define M_TRUNC(T, k, a) (k == 'f' ? FMATH(T, truncf, trunc, a) : a)
#define M_FRAC(T, k, a) FONLY(T, k, frac_f, frac_d, a)
#define M_SQUARE(T, k, a) (k == 'f' ? a * a : (T)(UNS(T, a) * UNS(T, a)))
#define M_ISINF(T, k, a) INFQ(a)
#define M_LOGICAL_NOT(T, k, a) (a == 0)
#define M_BITWISE_NOT(T, k, a) (k == 'b' ? (T)(a == 0) : (T)~IBITS(T, a))

/* ---- binary expressions (T, kind, a, b) ---- */
#define FONLY2(T, k, f32, f64, a, b)                                        \
  (k == 'f' ? (IS_F32(T) ? (T)f32((float)a, (float)b)                      \
                         : (T)f64((double)a, (double)b)) : (T)0)
#define M_ATAN2(T, k, a, b) FONLY2(T, k, atan2f, atan2, a, b)
#define M_HYPOT(T, k, a, b) FONLY2(T, k, hypotf, hypot, a, b)
#define M_FMOD(T, k, a, b) ((T)BYTYPE(T, fmodf, fmod, fmod_i, fmod_u)(a, b))
#define M_REMAINDER(T, k, a, b) \
  ((T)BYTYPE(T, rem_f, rem_d, rem_i, fmod_u)(a, b))
#define M_FLOOR_DIVIDE(T, k, a, b) \
  ((T)BYTYPE(T, fdiv_f, fdiv_d, fdiv_i, fdiv_u)(a, b))
#define M_LOGICAL_AND(T, k, a, b) ((a != 0) & (b != 0))
#define M_LOGICAL_OR(T, k, a, b) ((a != 0) | (b != 0))
#define M_LOGICAL_XOR(T, k, a, b) ((a != 0) ^ (b != 0))
#define M_BITWISE_AND(T, k, a, b) ((T)(IBITS(T, a) & IBITS(T, b)))
#define M_BITWISE_OR(T, k, a, b) ((T)(IBITS(T, a) | IBITS(T, b)))
#define M_BITWISE_XOR(T, k, a, b) ((T)(IBITS(T, a) ^ IBITS(T, b)))

/* The ops are nd.h's ND_MATH_OPS; an X given an arity as `1` or `2`
 * pastes it to its own name to pick the unary or the binary form. */
#define NAME(OP, name, ar, cls, unused) [ND_##OP] = #name,
static const char *const names[ND_NMATH] = {ND_MATH_OPS(NAME, 0)};
#undef NAME
#define NAME(OP, name, ar, cls, unused) [ND_##OP] = #name "_",
static const char *const inplace_names[ND_NMATH] = {ND_MATH_OPS(NAME, 0)};
#undef NAME
#define CLASS(OP, name, ar, cls, unused) [ND_##OP] = #cls[0],
static const char classes[ND_NMATH] = {ND_MATH_OPS(CLASS, 0)};
#undef CLASS
/* The unary ops are 0 .. NUNARY - 1, the binary ones the rest (the kernel
 * tables and the drivers' checks rely on it). */
#define COUNT(OP, name, ar, cls, unused) +(ar == 1)
enum { NUNARY = 0 ND_MATH_OPS(COUNT, 0), NBINARY = ND_NMATH - NUNARY };
#undef COUNT
#define ORDER(OP, name, ar, cls, unused)                                    \
  _Static_assert(((int)ND_##OP < NUNARY) == (ar == 1),                     \
                 "nd.h: " #name " is out of its arity's block");
ND_MATH_OPS(ORDER, 0)
#undef ORDER

const char *nd_math_name(int op) {
  return op >= 0 && op < ND_NMATH ? names[op] : "?";
}

/* ---- kernels: every op for every dtype; bool-class ops write bytes ---- */
#define OUT_F(T) T
#define OUT_S(T) T
#define OUT_I(T) T
#define OUT_D(T) T
#define OUT_B(T) uint8_t
#define INST(OP, name, ar, cls, E, T, kind) INST_##ar(OP, name, cls, E, T, kind)
#define INST_1(OP, name, cls, E, T, kind)                                   \
  UNARY_LOOP(name, M_##OP, E, T, kind, OUT_##cls(T))
#define INST_2(OP, name, cls, E, T, kind)                                   \
  BINARY_LOOP(name, M_##OP, E, T, kind, OUT_##cls(T))
#define INSTANCES(E, name, T, kind) ND_MATH_OPS(INST, E, T, kind)
ND_NATIVE_DTYPES(INSTANCES)

#define U_PTR(OP, name, ar, cls, E) U_PTR_##ar(OP, name, E)
#define U_PTR_1(OP, name, E) [ND_##OP] = u_##name##_##E,
#define U_PTR_2(OP, name, E)
#define B_PTR(OP, name, ar, cls, E) B_PTR_##ar(OP, name, E)
#define B_PTR_1(OP, name, E)
#define B_PTR_2(OP, name, E) [ND_##OP - NUNARY] = b_##name##_##E,
#define U_ROW(E, name, T, kind) [ND_##E] = {ND_MATH_OPS(U_PTR, E)},
#define B_ROW(E, name, T, kind) [ND_##E] = {ND_MATH_OPS(B_PTR, E)},
static const nd_loop_fn unary_kernels[ND_NDTYPES][NUNARY] = {ND_NATIVE_DTYPES(U_ROW)};
static const nd_loop_fn binary_kernels[ND_NDTYPES][NBINARY] = {ND_NATIVE_DTYPES(B_ROW)};

/* ---- lerp, isclose, nan_to_num ---- */
/* out, a, b, w: PyTorch's two-sided formula (exact at w = 0 and w = 1). */
#define LERP_EXPR(T, k, a, b, w)                                            \
  (k == 'f' ? ((double)w < 0.5 ? a + w * (b - a)                           \
                                         : b - (b - a) * ((T)1 - w))        \
            : (T)0)
#define LERP_LOOP(E, name, T, kind)                                         \
  KERNEL static void lerp_##E(char **p, const int64_t *st, int64_t n,    \
                                 void *ctx) {                               \
    (void)ctx;                                                              \
    const int64_t es = sizeof(T);                                           \
    if (st[0] == es && st[1] == es && st[2] == es && st[3] == 0) {          \
      T *o = (T *)p[0];                                                     \
      const T *a = (const T *)p[1], *b = (const T *)p[2], w = *(T *)p[3];   \
      for (int64_t i = 0; i < n; i++) o[i] = LERP_EXPR(T, kind, a[i], b[i], w); \
      return;                                                               \
    }                                                                       \
    char *po = p[0];                                                        \
    const char *pa = p[1], *pb = p[2], *pw = p[3];                          \
    for (int64_t i = 0; i < n;                                              \
         i++, po += st[0], pa += st[1], pb += st[2], pw += st[3]) {         \
      const T a = *(const T *)pa, b = *(const T *)pb, w = *(const T *)pw;   \
      *(T *)po = LERP_EXPR(T, kind, a, b, w);                               \
    }                                                                       \
  }
ND_NATIVE_DTYPES(LERP_LOOP)

typedef struct { double rtol, atol; int equal_nan; } close_args;
/* PyTorch's: equal, or a finite |a - b| within atol + |rtol * b|. */
#define CLOSE_EXPR(T, k, a, b)                                              \
  (a == b || (cx->equal_nan && NANQ(a) && NANQ(b)) ||                       \
   (k == 'f' && !INFQ((T)(a - b)) &&                                        \
    (LT0((T)(a - b)) ? (b - a) : (a - b)) <=                                \
        (T)cx->atol + (LT0((T)((T)cx->rtol * b)) ? -((T)cx->rtol * b)       \
                                                 : (T)cx->rtol * b)))
#define CLOSE_LOOP(E, name, T, kind)                                        \
  KERNEL static void close_##E(char **p, const int64_t *st, int64_t n,   \
                                  void *ctx) {                              \
    const close_args *cx = ctx;                                             \
    if (st[0] == 1 && st[1] == sizeof(T) && st[2] == sizeof(T)) {           \
      uint8_t *o = (uint8_t *)p[0];                                         \
      const T *a = (const T *)p[1], *b = (const T *)p[2];                   \
      for (int64_t i = 0; i < n; i++) o[i] = CLOSE_EXPR(T, kind, a[i], b[i]); \
      return;                                                               \
    }                                                                       \
    char *po = p[0];                                                        \
    const char *pa = p[1], *pb = p[2];                                      \
    for (int64_t i = 0; i < n; i++, po += st[0], pa += st[1], pb += st[2]) { \
      const T a = *(const T *)pa, b = *(const T *)pb;                       \
      *(uint8_t *)po = CLOSE_EXPR(T, kind, a, b);                           \
    }                                                                       \
  }
ND_NATIVE_DTYPES(CLOSE_LOOP)

typedef struct { double nan, posinf, neginf; } num_args;
#define NUM_EXPR(T, a, vn, vp, vm)                                          \
  (NANQ(a) ? vn : INFQ(a) ? (a > 0 ? vp : vm) : a)
#define NUM_LOOP(E, name, T, kind)                                          \
  KERNEL static void num_##E(char **p, const int64_t *st, int64_t n,     \
                                void *ctx) {                                \
    const num_args *nx = ctx;                                               \
    if (kind != 'f') return; /* integers are copied by the driver */        \
    const T vn = (T)nx->nan, vp = (T)nx->posinf, vm = (T)nx->neginf;        \
    if (st[0] == sizeof(T) && st[1] == sizeof(T)) {                         \
      T *o = (T *)p[0];                                                     \
      const T *a = (const T *)p[1];                                         \
      for (int64_t i = 0; i < n; i++) o[i] = NUM_EXPR(T, a[i], vn, vp, vm); \
      return;                                                               \
    }                                                                       \
    char *po = p[0];                                                        \
    const char *pa = p[1];                                                  \
    for (int64_t i = 0; i < n; i++, po += st[0], pa += st[1]) {             \
      const T a = *(const T *)pa;                                           \
      *(T *)po = NUM_EXPR(T, a, vn, vp, vm);                                \
    }                                                                       \
  }
ND_NATIVE_DTYPES(NUM_LOOP)

/* out, t, a, b: t + value * a * b and t + value * a / b (PyTorch's order:
 * (value * a) then * or / b). Integers wrap (uint64_t arithmetic: no
 * signed overflow); addcdiv has no integer kernel (refused before). */
typedef struct { double v; int64_t i; } addc_args;
#define ADDC_EXPR(T, k, t, a, b, div)                                       \
  (k == 'f' ? (T)(t + (div ? ((T)cx->v * a) / b : ((T)cx->v * a) * b))      \
            : (T)((uint64_t)t + (uint64_t)cx->i * (uint64_t)a * (uint64_t)b))
#define ADDC_LOOP(E, name, T, kind, op, div)                                \
  KERNEL static void op##_##E(char **p, const int64_t *st, int64_t n,       \
                              void *ctx) {                                  \
    const addc_args *cx = ctx;                                              \
    const int64_t es = sizeof(T);                                           \
    if (st[0] == es && st[1] == es && st[2] == es && st[3] == es) {         \
      T *o = (T *)p[0];                                                     \
      const T *t = (const T *)p[1], *a = (const T *)p[2],                   \
              *b = (const T *)p[3];                                         \
      for (int64_t i = 0; i < n; i++)                                       \
        o[i] = ADDC_EXPR(T, kind, t[i], a[i], b[i], div);                   \
      return;                                                               \
    }                                                                       \
    char *po = p[0];                                                        \
    const char *pt = p[1], *pa = p[2], *pb = p[3];                          \
    for (int64_t i = 0; i < n;                                              \
         i++, po += st[0], pt += st[1], pa += st[2], pb += st[3]) {         \
      const T t = *(const T *)pt, a = *(const T *)pa, b = *(const T *)pb;   \
      *(T *)po = ADDC_EXPR(T, kind, t, a, b, div);                          \
    }                                                                       \
  }
#define ADDCMUL_LOOP(E, name, T, kind) ADDC_LOOP(E, name, T, kind, addcmul, 0)
#define ADDCDIV_LOOP(E, name, T, kind) ADDC_LOOP(E, name, T, kind, addcdiv, 1)
ND_NATIVE_DTYPES(ADDCMUL_LOOP)
ND_NATIVE_DTYPES(ADDCDIV_LOOP)

#define PTRS(E, name, T, kind)                                              \
  [ND_##E] = {lerp_##E, close_##E, num_##E, addcmul_##E, addcdiv_##E},
static const nd_loop_fn misc_kernels[ND_NDTYPES][5] = {ND_NATIVE_DTYPES(PTRS)};
#undef PTRS

/* ---- drivers ---- */
static int floating(int dt) {
  return nd_dtype_kind(dt) == 'f' ? dt : ND_FLOAT64;
}
static int64_t grain_of(int cls) { return cls == 'F' ? 1 << 12 : 1 << 15; }
static const char *name_of(int op, int mode) {
  return (mode == ND_INPLACE ? inplace_names : names)[op];
}

nd_status nd_math_unary(nd_err *e, nd_tensor *out, int mode, int op,
                        const nd_tensor *a) {
  if (op < 0 || op >= NUNARY)
    return nd_fail(e, ND_EINVAL, "math_unary: %d is not a unary op", op);
  const char *fn = name_of(op, mode);
  if (nd_ew_check_mode(e, fn, mode)) return e->code;
  if (!a || !a->storage)
    return nd_fail(e, ND_EINVAL, "%s: expected a tensor", fn);
  int c = a->dtype, cls = classes[op], k = nd_dtype_kind(c), ct = c, rdt = c;
  if (cls == 'F') ct = rdt = floating(c);
  else if (cls == 'B') rdt = ND_BOOL;
  else if (cls == 'I' && k == 'f')
    return nd_fail(e, ND_EINVAL, "%s: takes integer or bool tensors, got %s",
                   fn, nd_dtype_name(c));
  else if (op == ND_FRAC && k != 'f')
    return nd_fail(e, ND_EINVAL, "frac: takes float tensors, got %s (its "
                   "fractional part is 0)", nd_dtype_name(c));
  else if (op == ND_TRUNC && k == 'b')
    return nd_fail(e, ND_EINVAL, "trunc: not defined for bool tensors");
  else if (op == ND_SQUARE && k == 'b') ct = rdt = ND_INT64;
  int kt = nd_compute_dtype(ct); /* float16, bfloat16: float32's kernel */
  nd_operand oa = {a, c, 0, 0};
  nd_loop_fn kn = unary_kernels[kt][op];
  void *kctx = NULL;
  if (op <= ND_LGAMMA) nd_vmath(ND_VM_LOG1P + op - ND_LOG1P, kt, &kn, &kctx);
  return nd_ew_run(e, fn, out, mode, 1, &oa, rdt, &ct, rdt, kn, kctx,
                   grain_of(cls));
}

/* Does the divisor hold a zero once converted to dtype dt? Tensors with
 * dims are never narrowed by promotion; scalars and 0-d tensors may be
 * (uint8 % 256 divides by 0). */
static int has_zero(nd_err *e, const nd_operand *b, int dt, int *zero) {
  char v[8];
  *zero = 0;
  if (!b->t || b->t->ndim == 0) {
    int64_t i = b->i;
    if (b->t) nd_convert(dt, v, 0, b->t->dtype, (const char *)nd_data(b->t), 0, 1);
    else nd_convert(dt, v, 0, ND_INT64, (const char *)&i, 0, 1);
    for (int k = 0; k < nd_dtype_size(dt); k++) *zero |= v[k] != 0;
    *zero = !*zero;
    return ND_OK;
  }
  nd_tensor r = ND_UNSET;
  if (nd_reduce(e, &r, ND_R_ALL, b->t, 0, NULL, 0)) return e->code;
  *zero = !*(const uint8_t *)nd_data(&r);
  nd_release(&r);
  return ND_OK;
}

nd_status nd_math_binary(nd_err *e, nd_tensor *out, int mode, int op,
                         const nd_operand *a, const nd_operand *b) {
  if (op < NUNARY || op >= ND_NMATH)
    return nd_fail(e, ND_EINVAL, "math_binary: %d is not a binary op", op);
  const char *fn = name_of(op, mode);
  if (nd_ew_check_mode(e, fn, mode)) return e->code;
  nd_operand ops[2] = {nd_opnd(a), nd_opnd(b)};
  int c = nd_common_type(2, ops), cls = classes[op];
  if (c < 0) return nd_fail(e, ND_EINVAL, "%s: expected a tensor operand", fn);
  int k = nd_dtype_kind(c), ct = c, rdt = c;
  if (cls == 'F') ct = rdt = floating(c);
  else if (cls == 'B') rdt = ND_BOOL;
  else if (cls == 'I' && k == 'f')
    return nd_fail(e, ND_EINVAL, "%s: takes integer or bool tensors, got %s",
                   fn, nd_dtype_name(c));
  else if (cls == 'D' && k == 'b')
    return nd_fail(e, ND_EINVAL, "%s: not defined for bool operands", fn);
  if (cls == 'D' && k != 'f') {
    int zero;
    if (has_zero(e, b, ct, &zero)) return e->code;
    if (zero)
      return nd_fail(e, ND_EINVAL, "%s: integer division by zero (the %s "
                     "divisor has a zero)", fn, nd_dtype_name(ct));
  }
  int kt = nd_compute_dtype(ct), kin[2] = {ct, ct};
  nd_loop_fn kn = binary_kernels[kt][op - NUNARY];
  void *kctx = NULL;
  if (op == ND_ATAN2 || op == ND_HYPOT)
    nd_vmath(op == ND_ATAN2 ? ND_VM_ATAN2 : ND_VM_HYPOT, kt, &kn, &kctx);
  return nd_ew_run(e, fn, out, mode, 2, ops, rdt, kin, cls == 'B' ? ND_BOOL : ct,
                   kn, kctx, grain_of(cls));
}

nd_status nd_lerp(nd_err *e, nd_tensor *out, int mode, const nd_operand *a,
                  const nd_operand *b, const nd_operand *w) {
  const char *fn = mode == ND_INPLACE ? "lerp_" : "lerp";
  if (nd_ew_check_mode(e, fn, mode)) return e->code;
  nd_operand ops[3] = {nd_opnd(a), nd_opnd(b), nd_opnd(w)};
  int c = nd_common_type(3, ops);
  if (c < 0) return nd_fail(e, ND_EINVAL, "%s: expected a tensor operand", fn);
  if (nd_dtype_kind(c) != 'f')
    return nd_fail(e, ND_EINVAL, "%s: takes float operands, got %s (convert "
                   "with :to(\"float64\") first)", fn, nd_dtype_name(c));
  int kc = nd_compute_dtype(c), kin[3] = {c, c, c};
  return nd_ew_run(e, fn, out, mode, 3, ops, c, kin, c, misc_kernels[kc][0],
                   NULL, 1 << 15);
}

/* addcmul and addcdiv: t, a, b tensors broadcast together, promoted left
 * to right; value whole for an integer result (addmm's rule); addcdiv
 * takes a float result only, as PyTorch's (its integer division was
 * removed there), and neither takes bool. */
static nd_status addc(nd_err *e, nd_tensor *out, int mode, int div,
                      const nd_tensor *t, const nd_tensor *a,
                      const nd_tensor *b, double value) {
  const char *fn = div ? (mode == ND_INPLACE ? "addcdiv_" : "addcdiv")
                       : (mode == ND_INPLACE ? "addcmul_" : "addcmul");
  if (nd_ew_check_mode(e, fn, mode)) return e->code;
  nd_operand ops[3] = {{t, t->dtype, 0, 0}, {a, a->dtype, 0, 0},
                       {b, b->dtype, 0, 0}};
  int c = nd_common_type(3, ops), k = nd_dtype_kind(c);
  if (k == 'b' || (div && k != 'f'))
    return nd_fail(e, ND_EINVAL, "%s: takes %s tensors, got %s (convert "
                   "with :to(\"float64\") first)", fn,
                   div ? "float" : "numeric", nd_dtype_name(c));
  if (k != 'f' && (value != floor(value) || !(fabs(value) < 0x1p63)))
    return nd_fail(e, ND_EINVAL, "%s: value must be an integer for a %s "
                   "result, got %g", fn, nd_dtype_name(c), value);
  addc_args cx = {value, k == 'f' ? 0 : (int64_t)value};
  int kc = nd_compute_dtype(c), kin[3] = {c, c, c};
  return nd_ew_run(e, fn, out, mode, 3, ops, c, kin, c,
                   misc_kernels[kc][div ? 4 : 3], &cx, 1 << 15);
}
nd_status nd_addcmul(nd_err *e, nd_tensor *out, int mode, const nd_tensor *t,
                     const nd_tensor *a, const nd_tensor *b, double value) {
  return addc(e, out, mode, 0, t, a, b, value);
}
nd_status nd_addcdiv(nd_err *e, nd_tensor *out, int mode, const nd_tensor *t,
                     const nd_tensor *a, const nd_tensor *b, double value) {
  return addc(e, out, mode, 1, t, a, b, value);
}

nd_status nd_isclose(nd_err *e, nd_tensor *out, const nd_operand *a,
                     const nd_operand *b, double rtol, double atol,
                     int equal_nan) {
  if (!(rtol >= 0) || !(atol >= 0))
    return nd_fail(e, ND_EINVAL, "isclose: rtol %g and atol %g must be "
                   "non-negative", rtol, atol);
  nd_operand ops[2] = {nd_opnd(a), nd_opnd(b)};
  int c = nd_common_type(2, ops);
  if (c < 0) return nd_fail(e, ND_EINVAL, "isclose: expected a tensor operand");
  int ct = nd_dtype_kind(c) == 'f' ? c : ND_FLOAT64, kin[2] = {ct, ct};
  close_args cx = {rtol, atol, equal_nan};
  return nd_ew_run(e, "isclose", out, out->storage ? ND_OUT : ND_NEW, 2, ops,
                   ND_BOOL, kin, ND_BOOL,
                   misc_kernels[nd_compute_dtype(ct)][1], &cx, 1 << 15);
}

nd_status nd_nan_to_num(nd_err *e, nd_tensor *out, int mode,
                        const nd_tensor *t, double nan, double posinf,
                        double neginf) {
  const char *fn = mode == ND_INPLACE ? "nan_to_num_" : "nan_to_num";
  if (nd_ew_check_mode(e, fn, mode)) return e->code;
  if (!t || !t->storage) return nd_fail(e, ND_EINVAL, "%s: expected a tensor", fn);
  int dt = t->dtype;
  nd_operand o = {t, dt, 0, 0};
  if (nd_dtype_kind(dt) != 'f') { /* nothing to replace: a copy */
    if (mode == ND_INPLACE) return ND_OK;
    if (mode == ND_NEW) return nd_clone(e, out, t);
    if (out->dtype != dt)
      return nd_fail(e, ND_EINVAL, "%s: out has dtype %s but the result has "
                     "dtype %s", fn, nd_dtype_name(out->dtype), nd_dtype_name(dt));
    if (nd_check_writable(e, fn, out)) return e->code;
    return nd_copy(e, out, t);
  }
  if (nd_is_half(dt)) { /* the bindings' default, DBL_MAX: the largest */
    const double top = nd_half_max(dt);
    posinf = posinf > top ? top : posinf;
    neginf = neginf < -top ? -top : neginf;
  }
  num_args nx = {nan, posinf, neginf};
  return nd_ew_run(e, fn, out, mode, 1, &o, dt, &dt, dt,
                   misc_kernels[nd_compute_dtype(dt)][2],
                   &nx, 1 << 15);
}

/* ---- pow with a scalar exponent (a Lua number or a 0-d tensor) ---- */
/* x^n by repeated squaring, n small (|n| <= 64): a handful of products
 * instead of pow's exp/log, within a few ulp. */
#define POWI_EXPR(T, k, a, n)                                               \
  (k == 'f' ? powi_##T(a, n) : (T)0)
#define POWI_FN(T)                                                          \
  static inline T powi_##T(T x, int n) {                                    \
    unsigned m = (unsigned)(n < 0 ? -n : n);                                \
    T r = 1;                                                                \
    for (; m; m >>= 1, x *= x)                                              \
      if (m & 1) r *= x;                                                    \
    return n < 0 ? 1 / r : r;                                               \
  }
POWI_FN(float)
POWI_FN(double)
#define powi_int32_t(x, n) (x)
#define powi_int64_t(x, n) (x)
#define powi_uint8_t(x, n) (x)
#define powi_int8_t(x, n) (x)
#define powi_int16_t(x, n) (x)
#define powi_uint16_t(x, n) (x)
#define powi_uint32_t(x, n) (x)
#define powi_uint64_t(x, n) (x)
#define M_CUBE(T, k, a)                                                     \
  (k == 'f' ? a * a * a : (T)(UNS(T, a) * UNS(T, a) * UNS(T, a)))
/* x^0.5 and x^-0.5 as IEEE pow: +0 for -0 and +inf for -inf (sqrt gives
 * -0 and NaN). */
#define M_PSQRT(T, k, a)                                                    \
  (k == 'f' ? (INFQ(a) && LT0(a) ? (T)INFINITY : FMATH(T, sqrtf, sqrt, a) + (T)0) \
            : (T)0)
#define M_PRSQRT(T, k, a) (k == 'f' ? (T)1 / M_PSQRT(T, k, a) : (T)0)
#define M_RCUBE(T, k, a) (k == 'f' ? (T)1 / (a * a) : (T)0) /* x^-2 */
#define POWI_LOOP(E, name, T, kind)                                         \
  KERNEL static void powi_##E(char **p, const int64_t *st, int64_t n,    \
                                 void *ctx) {                               \
    const int e = *(const int *)ctx;                                        \
    (void)e;                                                                \
    if (kind != 'f') return;                                                \
    char *po = p[0];                                                        \
    const char *pa = p[1];                                                  \
    for (int64_t i = 0; i < n; i++, po += st[0], pa += st[1])               \
      *(T *)po = POWI_EXPR(T, kind, *(const T *)pa, e);                     \
  }
ND_NATIVE_DTYPES(POWI_LOOP)
/* x^(k + 1/2), k >= 1: sqrt(x) in T (float64's sqrt costs twice all the
 * rest) times x^k by repeated squaring in float64 (float32: sqrt's 0.5 ulp
 * and the final rounding, < 1.5 ulp), over PH-element chunks so each step
 * vectorises whatever the strides. IEEE pow's values: NaN for x < 0, +0
 * at -0, +inf at -inf. float64's squarings add error: up to k = 3 only. */
enum { PH = 256, POWH_MAX64 = 3 };
#define POWH_LOOP(E, name, T, kind)                                         \
  KERNEL static void powh_##E(char **p, const int64_t *st, int64_t n,       \
                              void *ctx) {                                  \
    const unsigned k = (unsigned)*(const int *)ctx;                         \
    double v[PH], x[PH], r[PH];                                             \
    for (int64_t i = 0; i < n; i += PH) {                                   \
      int64_t m = n - i < PH ? n - i : PH;                                  \
      const char *pa = p[1] + i * st[1];                                    \
      char *po = p[0] + i * st[0];                                          \
      if (st[1] == sizeof(T))                                               \
        for (int64_t j = 0; j < m; j++) v[j] = ((const T *)pa)[j];          \
      else                                                                  \
        for (int64_t j = 0; j < m; j++) v[j] = *(const T *)(pa + j * st[1]); \
      for (int64_t j = 0; j < m; j++)                                       \
        x[j] = fabs(v[j]), r[j] = FMATH(T, sqrtf, sqrt, (T)x[j]);           \
      for (unsigned b = k; b; b >>= 1) {                                    \
        if (b & 1) for (int64_t j = 0; j < m; j++) r[j] *= x[j];            \
        if (b > 1) for (int64_t j = 0; j < m; j++) x[j] *= x[j];            \
      }                                                                     \
      for (int64_t j = 0; j < m; j++) /* x < 0 (not -inf): NaN */           \
        r[j] = v[j] < 0 && v[j] > -INFINITY ? NAN : r[j];                   \
      if (st[0] == sizeof(T))                                               \
        for (int64_t j = 0; j < m; j++) ((T *)po)[j] = (T)r[j];             \
      else                                                                  \
        for (int64_t j = 0; j < m; j++) *(T *)(po + j * st[0]) = (T)r[j];   \
    }                                                                       \
  }
POWH_LOOP(FLOAT32, float32, float, 'f')
POWH_LOOP(FLOAT64, float64, double, 'f')
#define PW_INST(E, name, T, kind)                                           \
  UNARY_LOOP(cube, M_CUBE, E, T, kind, T)                                   \
  UNARY_LOOP(rsquare, M_RCUBE, E, T, kind, T)                               \
  UNARY_LOOP(psqrt, M_PSQRT, E, T, kind, T)                                 \
  UNARY_LOOP(prsqrt, M_PRSQRT, E, T, kind, T)
ND_NATIVE_DTYPES(PW_INST)
#define PW_PTRS(E, name, T, kind) [ND_##E] = {u_cube_##E, u_rsquare_##E, powi_##E, \
                             u_psqrt_##E, u_prsqrt_##E},
static const nd_loop_fn pow_kernels[ND_NDTYPES][5] = {ND_NATIVE_DTYPES(PW_PTRS)};
#undef PW_PTRS

nd_status nd_pow_scalar(nd_err *e, nd_tensor *out, int mode, const char *fn,
                        const nd_operand *a, const nd_operand *b, int rdt,
                        int *done) {
  *done = 0;
  if (!a->t || (b->t && b->t->ndim != 0)) return ND_OK;
  int bdt = b->t ? b->t->dtype : b->dtype, rk = nd_dtype_kind(rdt),
      kt = nd_compute_dtype(rdt);
  double v;
  if (b->t) nd_convert(ND_FLOAT64, (char *)&v, 0, bdt, nd_data(b->t), 0, 1);
  else v = bdt == ND_FLOAT64 ? b->f : (double)b->i;
  if (!b->t && rk != 'f' && nd_dtype_kind(bdt) != 'f' && v < 0) {
    *done = 1;
    return nd_fail(e, ND_EINVAL, "%s: integers to negative integer powers "
                   "are not allowed (exponent %g; convert to a float first)",
                   fn, v);
  }
  nd_loop_fn k = NULL;
  void *ctx = NULL;
  if (rk == 'b' || !(v >= -64 && v <= 64)) return ND_OK;
  int ni = (int)v; /* in range now: a huge or NaN v would be C UB */
  if (v == 2) k = unary_kernels[kt][ND_SQUARE];
  else if (v == 3) k = pow_kernels[kt][0];
  else if (rk != 'f') return ND_OK; /* integers: repeated squaring already */
  else if (v == 0.5) k = pow_kernels[kt][3];
  else if (v == -0.5) k = pow_kernels[kt][4];
  else if (v == -1) k = unary_kernels[kt][ND_RECIPROCAL];
  else if (v == -2) k = pow_kernels[kt][1];
  else if (v == ni) k = pow_kernels[kt][2], ctx = &ni;
  else if (v - 0.5 == (ni = (int)(v - 0.5)) && ni >= 1 &&
           ni <= (kt == ND_FLOAT32 ? 64 : POWH_MAX64))
    k = kt == ND_FLOAT32 ? powh_FLOAT32 : powh_FLOAT64, ctx = &ni;
  else return ND_OK;
  *done = 1;
  int kin = rdt;
  return nd_ew_run(e, fn, out, mode, 1, a, rdt, &kin, rdt, k, ctx,
                   rk == 'f' && ctx ? 1 << 12 : 1 << 15);
}
