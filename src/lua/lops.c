/* Elementwise ops, reductions and the thread setting. Operands may be
 * tensors, Lua numbers (integral ones act as integers, others as floats;
 * both "weak", as Python scalars in PyTorch) or booleans. */
#include "lnd.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

void ndL_operand(lua_State *L, int idx, nd_operand *o, const char *fn,
                 int inplace) {
  o->t = NULL;
  o->f = 0;
  o->i = 0;
  switch (lua_type(L, idx)) {
  case LUA_TNUMBER: {
    if (ndL_integral(L, idx, &o->i)) { /* -0.0 stays a float */
      o->dtype = ND_INT64;
    } else {
      o->dtype = ND_FLOAT64;
      o->f = lua_tonumber(L, idx);
    }
    return;
  }
  case LUA_TBOOLEAN:
    o->dtype = ND_BOOL;
    o->i = lua_toboolean(L, idx);
    return;
  default:
    o->t = ndL_test(L, idx);
    if (!o->t)
      ndL_error(L, "%s%s: argument %d must be a tensor, number or boolean, "
                "got %s", fn, inplace ? "_" : "", idx, luaL_typename(L, idx));
    o->dtype = o->t->dtype;
  }
}

static nd_tensor *target(lua_State *L, const char *fn) {
  nd_tensor *t = ndL_test(L, 1);
  if (!t)
    ndL_error(L, "%s_: argument 1 must be a tensor (the one written), got %s",
              fn, luaL_typename(L, 1));
  return t;
}

/* f(a, b [, out]) and a:f_(b) through call (nd_binary's signature). */
int ndL_binary(lua_State *L, ndL_binary_fn call, int op, const char *fn,
               int inplace) {
  nd_operand a, b;
  nd_err e = ndL_err();
  if (inplace) target(L, fn);
  ndL_operand(L, 1, &a, fn, inplace);
  ndL_operand(L, 2, &b, fn, inplace);
  if (inplace) {
    NDL_CALL(L, e, call(&e, (nd_tensor *)a.t, ND_INPLACE, op, &a, &b));
    lua_settop(L, 1);
    return 1;
  }
  if (!a.t && !b.t)
    return ndL_error(L, "%s: expected a tensor operand, got %s and %s", fn,
                     luaL_typename(L, 1), luaL_typename(L, 2));
  if (!lua_isnoneornil(L, 3)) {
    nd_tensor *o = ndL_check(L, 3, fn);
    NDL_CALL(L, e, call(&e, o, ND_OUT, op, &a, &b));
    lua_settop(L, 3);
    return 1;
  }
  nd_tensor *r = ndL_new(L);
  NDL_CALL(L, e, call(&e, r, ND_NEW, op, &a, &b));
  ndL_charge(L, r);
  return 1;
}

/* f(a [, out]) and a:f_() through call (nd_unary's signature). */
int ndL_unary(lua_State *L, ndL_unary_fn call, int op, const char *fn,
              int inplace) {
  nd_tensor *a = inplace ? target(L, fn) : ndL_check(L, 1, fn);
  nd_err e = ndL_err();
  if (inplace) {
    NDL_CALL(L, e, call(&e, a, ND_INPLACE, op, a));
    lua_settop(L, 1);
    return 1;
  }
  if (!lua_isnoneornil(L, 2)) {
    nd_tensor *o = ndL_check(L, 2, fn);
    NDL_CALL(L, e, call(&e, o, ND_OUT, op, a));
    lua_settop(L, 2);
    return 1;
  }
  nd_tensor *r = ndL_new(L);
  NDL_CALL(L, e, call(&e, r, ND_NEW, op, a));
  ndL_charge(L, r);
  return 1;
}

/* f(...) and its in-place f_(...) for every op of nd.h's ND_OPS. */
#define FNS(E, name, ar, cls, unused) FNS_##ar(E, name)
#define FNS_1(E, name)                                                      \
  static int op_##name(lua_State *L) {                                      \
    return ndL_unary(L, nd_unary, ND_##E, #name, 0);                        \
  }                                                                         \
  static int op_##name##_(lua_State *L) {                                   \
    return ndL_unary(L, nd_unary, ND_##E, #name, 1);                        \
  }
#define FNS_2(E, name)                                                      \
  static int op_##name(lua_State *L) {                                      \
    return ndL_binary(L, nd_binary, ND_##E, #name, 0);                      \
  }                                                                         \
  static int op_##name##_(lua_State *L) {                                   \
    return ndL_binary(L, nd_binary, ND_##E, #name, 1);                      \
  }
ND_OPS(FNS, 0)
#undef FNS
/* The unary tests (one operand, a bool result: isnan, isfinite) have no
 * in-place form, as PyTorch's. */
static const struct {
  const char *name, *inplace;
  lua_CFunction f, f_;
  int test;
} elementwise[] = {
#define ROW(E, name, ar, cls, unused)                                       \
  {#name, #name "_", op_##name, op_##name##_, ar == 1 && #cls[0] == 'B'},
    ND_OPS(ROW, 0)
#undef ROW
};

/* clamp(x, lo, hi [, out]); either bound may be nil. */
static int clamp(lua_State *L, int inplace) {
  const char *fn = inplace ? "clamp_" : "clamp";
  nd_tensor *a = ndL_check(L, 1, fn);
  nd_operand lo, hi;
  if (!lua_isnoneornil(L, 2)) ndL_operand(L, 2, &lo, fn, 0);
  if (!lua_isnoneornil(L, 3)) ndL_operand(L, 3, &hi, fn, 0);
  const nd_operand *plo = lua_isnoneornil(L, 2) ? NULL : &lo;
  const nd_operand *phi = lua_isnoneornil(L, 3) ? NULL : &hi;
  if (!plo && !phi) /* as PyTorch: a clamp without bounds is a mistake */
    return ndL_error(L, "%s: at least one of min and max must be given", fn);
  nd_err e = ndL_err();
  if (inplace) {
    NDL_CALL(L, e, nd_clamp(&e, a, ND_INPLACE, a, plo, phi));
    lua_settop(L, 1);
    return 1;
  }
  if (!lua_isnoneornil(L, 4)) {
    nd_tensor *o = ndL_check(L, 4, fn);
    NDL_CALL(L, e, nd_clamp(&e, o, ND_OUT, a, plo, phi));
    lua_settop(L, 4);
    return 1;
  }
  nd_tensor *r = ndL_new(L);
  NDL_CALL(L, e, nd_clamp(&e, r, ND_NEW, a, plo, phi));
  ndL_charge(L, r);
  return 1;
}
static int op_clamp(lua_State *L) { return clamp(L, 0); }
static int op_clamp_(lua_State *L) { return clamp(L, 1); }

static int op_where(lua_State *L) {
  nd_tensor *c = ndL_check(L, 1, "where");
  nd_operand a, b;
  ndL_operand(L, 2, &a, "where", 0);
  ndL_operand(L, 3, &b, "where", 0);
  nd_err e = ndL_err();
  if (!lua_isnoneornil(L, 4)) {
    nd_tensor *o = ndL_check(L, 4, "where");
    NDL_CALL(L, e, nd_where(&e, o, ND_OUT, c, &a, &b));
    lua_settop(L, 4);
    return 1;
  }
  nd_tensor *r = ndL_new(L);
  NDL_CALL(L, e, nd_where(&e, r, ND_NEW, c, &a, &b));
  ndL_charge(L, r);
  return 1;
}

/* ---- reductions ---- */
/* A 0-d result as a Lua value; the header is released either way. */
static int push_scalar(lua_State *L, nd_tensor *r) {
  ndL_push_elem(L, r, NULL);
  nd_release(r);
  return 1;
}

/* t:f([dim [, keepdim]]), dim (a number or a table of dims) at `at`;
 * p is norm's. */
static int reduce_at(lua_State *L, int op, const char *fn, int at, double p) {
  nd_tensor *t = ndL_check(L, 1, fn);
  nd_err e = ndL_err();
  int dims[ND_MAX_DIMS], n = 0;
  if (!lua_isnoneornil(L, at)) n = ndL_dimlist(L, at, t->ndim, fn, dims);
  if (n == 0) {
    nd_tensor r = ND_UNSET;
    NDL_CALL(L, e, op == ND_R_NORM ? nd_norm(&e, &r, t, p, 0, NULL, 0)
                                   : nd_reduce(&e, &r, op, t, 0, NULL, 0));
    return push_scalar(L, &r);
  }
  int keep = lua_toboolean(L, at + 1);
  nd_tensor *r = ndL_new(L);
  NDL_CALL(L, e, op == ND_R_NORM ? nd_norm(&e, r, t, p, n, dims, keep)
                                 : nd_reduce(&e, r, op, t, n, dims, keep));
  ndL_charge(L, r);
  return 1;
}
static int reduce(lua_State *L, int op, const char *fn) {
  return reduce_at(L, op, fn, 2, 0);
}
static int op_sum(lua_State *L) { return reduce(L, ND_R_SUM, "sum"); }
static int op_mean(lua_State *L) { return reduce(L, ND_R_MEAN, "mean"); }
static int op_prod(lua_State *L) { return reduce(L, ND_R_PROD, "prod"); }
static int op_all(lua_State *L) { return reduce(L, ND_R_ALL, "all"); }
static int op_any(lua_State *L) { return reduce(L, ND_R_ANY, "any"); }

/* t:norm([p [, dim [, keepdim]]]): PyTorch's Tensor.norm, p first. */
static int op_norm(lua_State *L) {
  ndL_check(L, 1, "norm");
  double p = 2;
  if (lua_type(L, 2) == LUA_TSTRING && strcmp(lua_tostring(L, 2), "fro") == 0)
    p = 2;
  else if (lua_type(L, 2) == LUA_TNUMBER)
    p = lua_tonumber(L, 2);
  else if (!lua_isnoneornil(L, 2))
    return ndL_error(L, "norm: p must be a number, math.huge, -math.huge or "
                     "\"fro\", got %s", lua_type(L, 2) == LUA_TSTRING
                     ? lua_tostring(L, 2) : luaL_typename(L, 2));
  if (lua_type(L, 3) == LUA_TBOOLEAN)
    return ndL_error(L, "norm: dim must be a number or a table of dims, got "
                     "a boolean (the signature is norm([p [, dim [, keepdim]]]))");
  return reduce_at(L, ND_R_NORM, "norm", 3, p);
}

static int one_dim(lua_State *L, int idx, const nd_tensor *t, const char *fn) {
  if (lua_istable(L, idx)) {
    if (lua_objlen(L, idx) != 1)
      ndL_error(L, "%s: takes one dim, got a table of %d", fn,
                (int)lua_objlen(L, idx));
    lua_rawgeti(L, idx, 1);
    lua_replace(L, idx);
  }
  return ndL_dim_of(L, idx, t, fn);
}

/* min/max: a number, or with a dim (values, 1-based int64 indices). */
static int minmax(lua_State *L, int op, const char *fn) {
  nd_tensor *t = ndL_check(L, 1, fn);
  nd_err e = ndL_err();
  if (lua_isnoneornil(L, 2)) {
    nd_tensor r = ND_UNSET;
    NDL_CALL(L, e, nd_reduce(&e, &r, op, t, 0, NULL, 0));
    return push_scalar(L, &r);
  }
  if (ndL_test(L, 2))
    return ndL_error(L, "%s: dim must be an integer, got a tensor (the "
                     "elementwise %s of two tensors is nd.%s(a, b))", fn,
                     op == ND_R_MAX ? "maximum" : "minimum",
                     op == ND_R_MAX ? "maximum" : "minimum");
  int d = one_dim(L, 2, t, fn), keep = lua_toboolean(L, 3);
  nd_tensor *v = ndL_new(L), *ix = ndL_new(L);
  NDL_CALL_AS(L, fn, e, nd_reduce_arg(&e, v, ix, op, t, d, keep));
  ndL_one_based(ix);
  ndL_charge(L, v);
  ndL_charge(L, ix); /* the indices too: the collector must see both */
  return 2;
}
static int op_min(lua_State *L) { return minmax(L, ND_R_MIN, "min"); }
static int op_max(lua_State *L) { return minmax(L, ND_R_MAX, "max"); }

/* argmin/argmax: the 1-based flat row-major index, or indices along dim. */
static int argext(lua_State *L, int op, const char *fn) {
  nd_tensor *t = ndL_check(L, 1, fn);
  nd_err e = ndL_err();
  if (lua_isnoneornil(L, 2)) {
    nd_tensor ix = ND_UNSET;
    NDL_CALL_AS(L, fn, e, nd_reduce_arg(&e, NULL, &ix, op, t, -1, 0));
    int64_t i = *(int64_t *)nd_data(&ix);
    nd_release(&ix);
    ndL_pushint(L, i + 1);
    return 1;
  }
  int d = one_dim(L, 2, t, fn), keep = lua_toboolean(L, 3);
  nd_tensor *ix = ndL_new(L);
  NDL_CALL_AS(L, fn, e, nd_reduce_arg(&e, NULL, ix, op, t, d, keep));
  ndL_one_based(ix);
  ndL_charge(L, ix); /* unseen by the collector, they piled up past the cache */
  return 1;
}
static int op_argmin(lua_State *L) { return argext(L, ND_R_MIN, "argmin"); }
static int op_argmax(lua_State *L) { return argext(L, ND_R_MAX, "argmax"); }

/* ---- threads ---- */
static int op_set_num_threads(lua_State *L) {
  int64_t n = ndL_int(L, 1, "set_num_threads", "n");
  if (n < 1 || n > 1024)
    return ndL_error(L, "set_num_threads: n must be in [1, 1024], got %lld",
                     (long long)n);
  nd_set_num_threads((int)n);
  return 0;
}
static int op_get_num_threads(lua_State *L) {
  ndL_pushint(L, nd_get_num_threads());
  return 1;
}

#define REG(name) {#name, op_##name}, {#name "_", op_##name##_}
void ndL_open_ops(lua_State *L) {
  for (size_t i = 0; i < sizeof elementwise / sizeof *elementwise; i++) {
    luaL_Reg both[3] = {{elementwise[i].name, elementwise[i].f},
                        {elementwise[i].inplace, elementwise[i].f_},
                        {NULL, NULL}};
    if (elementwise[i].test) both[1] = both[2];
    ndL_register(L, both); /* through the dispatcher, as every function */
  }
  static const luaL_Reg fns[] = {
      REG(clamp), {"where", op_where}, {"sum", op_sum}, {"mean", op_mean}, {"prod", op_prod},
      {"min", op_min}, {"max", op_max}, {"argmin", op_argmin},
      {"argmax", op_argmax}, {"all", op_all}, {"any", op_any}, {"norm", op_norm},
      {"set_num_threads", op_set_num_threads},
      {"get_num_threads", op_get_num_threads}, {NULL, NULL}};
  ndL_register(L, fns);
}
