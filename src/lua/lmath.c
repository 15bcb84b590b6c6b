/* More math (elementwise_math.c): the unary and binary functions in their
 * four forms, lerp, addcmul, addcdiv, isclose and nan_to_num. */
#include "lnd.h"
#include <float.h>

#define UNARY(name, OP)                                                     \
  static int m_##name(lua_State *L) {                                       \
    return ndL_unary(L, nd_math_unary, OP, #name, 0);                       \
  }                                                                         \
  static int m_##name##_(lua_State *L) {                                    \
    return ndL_unary(L, nd_math_unary, OP, #name, 1);                       \
  }
#define BINARY(name, OP)                                                    \
  static int m_##name(lua_State *L) {                                       \
    return ndL_binary(L, nd_math_binary, OP, #name, 0);                     \
  }                                                                         \
  static int m_##name##_(lua_State *L) {                                    \
    return ndL_binary(L, nd_math_binary, OP, #name, 1);                     \
  }
UNARY(log1p, ND_LOG1P)
UNARY(expm1, ND_EXPM1)
UNARY(log2, ND_LOG2)
UNARY(log10, ND_LOG10)
UNARY(exp2, ND_EXP2)
UNARY(tan, ND_TAN)
UNARY(asin, ND_ASIN)
UNARY(acos, ND_ACOS)
UNARY(atan, ND_ATAN)
UNARY(sinh, ND_SINH)
UNARY(cosh, ND_COSH)
UNARY(asinh, ND_ASINH)
UNARY(acosh, ND_ACOSH)
UNARY(atanh, ND_ATANH)
UNARY(erf, ND_ERF)
UNARY(erfc, ND_ERFC)
UNARY(lgamma, ND_LGAMMA)
UNARY(reciprocal, ND_RECIPROCAL)
UNARY(rsqrt, ND_RSQRT)
UNARY(sign, ND_SIGN)
UNARY(trunc, ND_TRUNC)
UNARY(frac, ND_FRAC)
UNARY(square, ND_SQUARE)
UNARY(logical_not, ND_LOGICAL_NOT)
UNARY(bitwise_not, ND_BITWISE_NOT)
BINARY(atan2, ND_ATAN2)
BINARY(hypot, ND_HYPOT)
BINARY(fmod, ND_FMOD)
BINARY(remainder, ND_REMAINDER)
BINARY(floor_divide, ND_FLOOR_DIVIDE)
BINARY(logical_and, ND_LOGICAL_AND)
BINARY(logical_or, ND_LOGICAL_OR)
BINARY(logical_xor, ND_LOGICAL_XOR)
BINARY(bitwise_and, ND_BITWISE_AND)
BINARY(bitwise_or, ND_BITWISE_OR)
BINARY(bitwise_xor, ND_BITWISE_XOR)
static int m_isinf(lua_State *L) {
  return ndL_unary(L, nd_math_unary, ND_ISINF, "isinf", 0);
}

/* lerp(a, b, w [, out]) and a:lerp_(b, w). */
static int lerp(lua_State *L, int inplace) {
  const char *fn = inplace ? "lerp_" : "lerp";
  nd_operand a, b, w;
  nd_err e = ndL_err();
  if (inplace) ndL_check(L, 1, fn);
  ndL_operand(L, 1, &a, "lerp", inplace);
  ndL_operand(L, 2, &b, "lerp", inplace);
  ndL_operand(L, 3, &w, "lerp", inplace);
  if (inplace) {
    NDL_CALL(L, e, nd_lerp(&e, (nd_tensor *)a.t, ND_INPLACE, &a, &b, &w));
    lua_settop(L, 1);
    return 1;
  }
  if (!lua_isnoneornil(L, 4)) {
    nd_tensor *o = ndL_check(L, 4, fn);
    NDL_CALL(L, e, nd_lerp(&e, o, ND_OUT, &a, &b, &w));
    lua_settop(L, 4);
    return 1;
  }
  nd_tensor *r = ndL_new(L);
  NDL_CALL(L, e, nd_lerp(&e, r, ND_NEW, &a, &b, &w));
  ndL_charge(L, r);
  return 1;
}
static int m_lerp(lua_State *L) { return lerp(L, 0); }
static int m_lerp_(lua_State *L) { return lerp(L, 1); }

/* addcmul(t, a, b [, value] [, out]) and t:addcmul_(a, b [, value]); out
 * may follow b directly. The same for addcdiv. */
typedef nd_status (*addc_fn)(nd_err *, nd_tensor *, int, const nd_tensor *,
                             const nd_tensor *, const nd_tensor *, double);
static int addc(lua_State *L, const char *fn, addc_fn f, int inplace) {
  nd_tensor *t = ndL_check(L, 1, fn), *a = ndL_check(L, 2, fn),
            *b = ndL_check(L, 3, fn);
  int oi = inplace ? 1 : ndL_test(L, 4) ? 4 : 0;
  if (oi == 4 && !lua_isnoneornil(L, 5)) /* (t, a, b, out, value): no */
    return ndL_error(L, "%s: nothing may follow out (argument 4), got %s",
                     fn, ndL_typename(L, 5));
  double v = oi == 4 ? 1 : ndL_optnum(L, 4, fn, "value", 1);
  if (!inplace && !oi && !lua_isnoneornil(L, 5)) {
    ndL_check(L, 5, fn);
    oi = 5;
  }
  nd_err e = ndL_err();
  if (oi) {
    NDL_CALL(L, e, f(&e, ndL_test(L, oi), inplace ? ND_INPLACE : ND_OUT, t,
                     a, b, v));
    lua_pushvalue(L, oi);
    return 1;
  }
  nd_tensor *r = ndL_new(L);
  NDL_CALL(L, e, f(&e, r, ND_NEW, t, a, b, v));
  ndL_charge(L, r);
  return 1;
}
static int m_addcmul(lua_State *L) { return addc(L, "addcmul", nd_addcmul, 0); }
static int m_addcmul_(lua_State *L) { return addc(L, "addcmul_", nd_addcmul, 1); }
static int m_addcdiv(lua_State *L) { return addc(L, "addcdiv", nd_addcdiv, 0); }
static int m_addcdiv_(lua_State *L) { return addc(L, "addcdiv_", nd_addcdiv, 1); }

/* isclose(a, b [, rtol [, atol [, equal_nan]]]) -> bool tensor. */
static int m_isclose(lua_State *L) {
  nd_operand a, b;
  ndL_operand(L, 1, &a, "isclose", 0);
  ndL_operand(L, 2, &b, "isclose", 0);
  double rtol = ndL_optnum(L, 3, "isclose", "rtol", 1e-5);
  double atol = ndL_optnum(L, 4, "isclose", "atol", 1e-8);
  int equal_nan = lua_toboolean(L, 5);
  nd_err e = ndL_err();
  nd_tensor *r = ndL_new(L);
  NDL_CALL(L, e, nd_isclose(&e, r, &a, &b, rtol, atol, equal_nan));
  ndL_charge(L, r);
  return 1;
}

/* t:nan_to_num([nan [, posinf [, neginf [, out]]]]) and nan_to_num_. */
static int nan_to_num(lua_State *L, int inplace) {
  const char *fn = inplace ? "nan_to_num_" : "nan_to_num";
  nd_tensor *t = ndL_check(L, 1, fn);
  double big = t->dtype == ND_FLOAT32 ? FLT_MAX : DBL_MAX;
  double vn = ndL_optnum(L, 2, fn, "nan", 0);
  double vp = ndL_optnum(L, 3, fn, "posinf", big);
  double vm = ndL_optnum(L, 4, fn, "neginf", -big);
  nd_err e = ndL_err();
  if (inplace) {
    NDL_CALL(L, e, nd_nan_to_num(&e, t, ND_INPLACE, t, vn, vp, vm));
    lua_settop(L, 1);
    return 1;
  }
  if (!lua_isnoneornil(L, 5)) {
    nd_tensor *o = ndL_check(L, 5, fn);
    NDL_CALL(L, e, nd_nan_to_num(&e, o, ND_OUT, t, vn, vp, vm));
    lua_settop(L, 5);
    return 1;
  }
  nd_tensor *r = ndL_new(L);
  NDL_CALL(L, e, nd_nan_to_num(&e, r, ND_NEW, t, vn, vp, vm));
  ndL_charge(L, r);
  return 1;
}
static int m_nan_to_num(lua_State *L) { return nan_to_num(L, 0); }
static int m_nan_to_num_(lua_State *L) { return nan_to_num(L, 1); }

#define REG(name) {#name, m_##name}, {#name "_", m_##name##_}
void ndL_open_math(lua_State *L) {
  static const luaL_Reg fns[] = {
      REG(log1p), REG(expm1), REG(log2), REG(log10), REG(exp2), REG(tan),
      REG(asin), REG(acos), REG(atan), REG(sinh), REG(cosh), REG(asinh),
      REG(acosh), REG(atanh), REG(erf), REG(erfc), REG(lgamma),
      REG(reciprocal), REG(rsqrt), REG(sign), REG(trunc), REG(frac),
      REG(square), REG(logical_not), REG(bitwise_not), REG(atan2),
      REG(hypot), REG(fmod), REG(remainder), REG(floor_divide),
      REG(logical_and), REG(logical_or), REG(logical_xor), REG(bitwise_and),
      REG(bitwise_or), REG(bitwise_xor), REG(lerp), REG(nan_to_num),
      REG(addcmul), REG(addcdiv),
      {"isinf", m_isinf}, {"isclose", m_isclose}, {NULL, NULL}};
  ndL_register(L, fns);
}
