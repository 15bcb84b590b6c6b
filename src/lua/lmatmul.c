/* Matmul: matmul, mm, mv, dot, bmm, outer, the fused updates (addmm,
 * addmv, addr, baddbmm, addbmm and their in-place forms) and matmul_plan. (Under
 * LuaJIT, lua/matmul.lua puts an FFI fast path in front of matmul.) */
#include "lnd.h"
#include <stdio.h>

typedef nd_status (*product_fn)(nd_err *e, nd_tensor *out,
                                 const nd_tensor *a, const nd_tensor *b);

/* fn(a, b [, out]): a given out is written and returned. */
static int product(lua_State *L, const char *fn, product_fn f) {
  nd_tensor *a = ndL_check(L, 1, fn), *b = ndL_check(L, 2, fn);
  nd_err e = ndL_err();
  if (!lua_isnoneornil(L, 3)) {
    nd_tensor *o = ndL_check(L, 3, fn);
    NDL_CALL(L, e, f(&e, o, a, b));
    lua_settop(L, 3);
    return 1;
  }
  nd_tensor *r = ndL_new(L);
  NDL_CALL(L, e, f(&e, r, a, b));
  ndL_charge(L, r);
  return 1;
}

static int l_matmul(lua_State *L) { return product(L, "matmul", nd_matmul); }
static int l_mm(lua_State *L) { return product(L, "mm", nd_mm); }
static int l_mv(lua_State *L) { return product(L, "mv", nd_mv); }
static int l_bmm(lua_State *L) { return product(L, "bmm", nd_bmm); }
static int l_outer(lua_State *L) { return product(L, "outer", nd_outer); }

/* dot returns a Lua number (a boolean for bool, as elements read). */
static int l_dot(lua_State *L) {
  nd_tensor *a = ndL_check(L, 1, "dot"), *b = ndL_check(L, 2, "dot");
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_dot(&e, r, a, b));
  int64_t none[1] = {0};
  ndL_push_elem(L, r, none);
  return 1;
}

/* The fused updates: fn(c, a, b [, beta, alpha] [, out]) = beta * c +
 * alpha * (a @ b), a given out written and returned; in place (fn_,
 * c:fn_(a, b [, beta, alpha])) c is the result. */
typedef nd_status (*fused_fn)(nd_err *e, nd_tensor *out, const nd_tensor *c,
                              const nd_tensor *a, const nd_tensor *b,
                              double beta, double alpha);
static int fused(lua_State *L, const char *fn, fused_fn f, int inplace) {
  nd_tensor *c = ndL_check(L, 1, fn), *a = ndL_check(L, 2, fn),
            *b = ndL_check(L, 3, fn);
  double beta = 1, alpha = 1;
  int oi = inplace ? 1 : 0;
  if (!inplace && ndL_test(L, 4)) {
    oi = 4;
    for (int i = 5; i <= 6; i++) /* (c, a, b, out, beta): no */
      if (!lua_isnoneornil(L, i))
        return ndL_error(L, "%s: nothing may follow out (argument 4), got "
                         "%s", fn, ndL_typename(L, i));
  } else {
    beta = ndL_optnum(L, 4, fn, "beta", 1);
    alpha = ndL_optnum(L, 5, fn, "alpha", 1);
    if (!inplace && !lua_isnoneornil(L, 6)) {
      ndL_check(L, 6, fn);
      oi = 6;
    }
  }
  nd_err e = ndL_err();
  if (oi) {
    NDL_CALL_AS(L, fn, e, f(&e, ndL_test(L, oi), c, a, b, beta, alpha));
    lua_pushvalue(L, oi);
    return 1;
  }
  nd_tensor *r = ndL_new(L);
  NDL_CALL_AS(L, fn, e, f(&e, r, c, a, b, beta, alpha));
  ndL_charge(L, r);
  return 1;
}
#define FUSED(name)                                                         \
  static int l_##name(lua_State *L) { return fused(L, #name, nd_##name, 0); } \
  static int l_##name##_(lua_State *L) {                                    \
    return fused(L, #name "_", nd_##name, 1);                               \
  }
ND_FUSED_UPDATES(FUSED)
#undef FUSED


/* A matmul plan as matmul_plan's table; fields that do not apply are nil.
 * (einsum_plan's steps carry one each.) */
void ndL_push_blas_plan(lua_State *L, const nd_blas_plan *p) {
  static const char *const names[] = {"gemm", "gemv", "dot"};
  char routine[8];
  const int blas_call = p->routine != ND_BLAS_LOOP && p->batch > 0;
  if (p->routine == ND_BLAS_LOOP)
    snprintf(routine, sizeof routine, "loop");
  else
    snprintf(routine, sizeof routine, "%s%s",
             p->dtype == ND_FLOAT32 || p->copies & ND_COPY_F32 ? "s" : "d",
             names[p->routine]);
  lua_newtable(L);
  ndL_setstr(L, "routine", routine);
  ndL_setstr(L, "dtype", nd_dtype_name(p->dtype));
  /* float16, bfloat16: what the product is computed in (ND_COPY_F32) */
  if (p->copies & ND_COPY_F32) ndL_setstr(L, "compute_dtype", "float32");
  if (blas_call && p->routine != ND_BLAS_DOT)
    ndL_setstr(L, "order", p->col_major ? "col" : "row");
  if (blas_call && p->transa) ndL_setstr(L, "transa", p->transa == 'T' ? "T" : "N");
  if (blas_call && p->transb) ndL_setstr(L, "transb", p->transb == 'T' ? "T" : "N");
  if (!blas_call || p->routine != ND_BLAS_DOT) ndL_setint(L, "m", p->m);
  ndL_setint(L, "n", p->n);
  if (!blas_call || p->routine == ND_BLAS_GEMM) ndL_setint(L, "k", p->k);
  if (p->lda) ndL_setint(L, "lda", p->lda);
  if (p->ldb) ndL_setint(L, "ldb", p->ldb);
  if (p->ldc) ndL_setint(L, "ldc", p->ldc);
  if (p->incx) ndL_setint(L, "incx", p->incx);
  if (p->incy) ndL_setint(L, "incy", p->incy);
  ndL_setint(L, "batch", p->batch);
  lua_newtable(L);
  static const char *const ops[] = {"a", "b", "out"};
  for (int k = 0, n = 0; k < 3; k++)
    if (p->copies & (1 << k)) {
      lua_pushstring(L, ops[k]);
      lua_rawseti(L, -2, ++n);
    }
  lua_setfield(L, -2, "copies");
}

/* matmul_plan(a, b [, out]) */
static int l_matmul_plan(lua_State *L) {
  nd_tensor *a = ndL_check(L, 1, "matmul_plan");
  nd_tensor *b = ndL_check(L, 2, "matmul_plan");
  nd_tensor *o = lua_isnoneornil(L, 3) ? NULL : ndL_check(L, 3, "matmul_plan");
  nd_blas_plan p;
  nd_err e = ndL_err();
  if (nd_matmul_plan(&e, &p, a, b, o)) return ndL_raise(L, &e);
  ndL_push_blas_plan(L, &p);
  return 1;
}

void ndL_open_matmul(lua_State *L) {
  static const luaL_Reg fns[] = {
      {"matmul", l_matmul}, {"mm", l_mm}, {"mv", l_mv}, {"dot", l_dot},
      {"bmm", l_bmm}, {"outer", l_outer},
#define FUSED_REG(name) {#name, l_##name}, {#name "_", l_##name##_},
      ND_FUSED_UPDATES(FUSED_REG)
#undef FUSED_REG
      {"matmul_plan", l_matmul_plan}, {NULL, NULL}};
  ndL_register(L, fns);
}
