/* nd.linalg: a subtable of module functions (never methods) over the core's
 * nd_linalg_* (src/core/linalg/). One matrix's det, norm, cond and
 * matrix_rank come back as Lua numbers, slogdet as two numbers. */
#include "lnd.h"
#include <math.h>
#include <string.h>

typedef nd_status (*unary_fn)(nd_err *, nd_tensor *, const nd_tensor *);
typedef nd_status (*binary_fn)(nd_err *, nd_tensor *, const nd_tensor *,
                               const nd_tensor *);

static int unary(lua_State *L, const char *fn, unary_fn f, int number) {
  nd_tensor *a = ndL_check(L, 1, fn);
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, f(&e, r, a));
  return ndL_return(L, 1, &r, number);
}

static int binary(lua_State *L, const char *fn, binary_fn f) {
  nd_tensor *a = ndL_check(L, 1, fn), *b = ndL_check(L, 2, fn);
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, f(&e, r, a, b));
  ndL_charge(L, r);
  return 1;
}

static int l_solve(lua_State *L) { return binary(L, "solve", nd_linalg_solve); }
static int l_lstsq(lua_State *L) { return binary(L, "lstsq", nd_linalg_lstsq); }
static int l_inv(lua_State *L) { return unary(L, "inv", nd_linalg_inv, 0); }
static int l_cholesky(lua_State *L) {
  return unary(L, "cholesky", nd_linalg_cholesky, 0);
}
static int l_svdvals(lua_State *L) {
  return unary(L, "svdvals", nd_linalg_svdvals, 0);
}
static int l_eigvalsh(lua_State *L) {
  return unary(L, "eigvalsh", nd_linalg_eigvalsh, 0);
}
static int l_pinv(lua_State *L) { return unary(L, "pinv", nd_linalg_pinv, 0); }
static int l_det(lua_State *L) { return unary(L, "det", nd_linalg_det, 1); }
static int l_cond(lua_State *L) { return unary(L, "cond", nd_linalg_cond, 1); }
static int l_matrix_rank(lua_State *L) {
  return unary(L, "matrix_rank", nd_linalg_matrix_rank, 1);
}

/* The functions of one matrix with several results: n fresh results r,
 * returned as numbers when `numbers` and they are 0-d. */
typedef nd_status (*multi_fn)(nd_err *, nd_tensor **r, const nd_tensor *);
static int multi(lua_State *L, const char *fn, int n, multi_fn f,
                 int numbers) {
  nd_tensor *a = ndL_check(L, 1, fn), *r[3];
  ndL_new_n(L, n, r);
  nd_err e = ndL_err();
  NDL_CALL(L, e, f(&e, r, a));
  return ndL_return(L, n, r, numbers);
}

static nd_status slogdet(nd_err *e, nd_tensor **r, const nd_tensor *a) {
  return nd_linalg_slogdet(e, r[0], r[1], a);
}
static nd_status qr(nd_err *e, nd_tensor **r, const nd_tensor *a) {
  return nd_linalg_qr(e, r[0], r[1], a);
}
static nd_status svd(nd_err *e, nd_tensor **r, const nd_tensor *a) {
  return nd_linalg_svd(e, r[0], r[1], r[2], a);
}
static nd_status eigh(nd_err *e, nd_tensor **r, const nd_tensor *a) {
  return nd_linalg_eigh(e, r[0], r[1], a);
}
static int l_slogdet(lua_State *L) { return multi(L, "slogdet", 2, slogdet, 1); }
static int l_qr(lua_State *L) { return multi(L, "qr", 2, qr, 0); }
static int l_svd(lua_State *L) { return multi(L, "svd", 3, svd, 0); }
static int l_eigh(lua_State *L) { return multi(L, "eigh", 2, eigh, 0); }

static int l_matrix_power(lua_State *L) {
  nd_tensor *a = ndL_check(L, 1, "matrix_power");
  int64_t n;
  if (lua_type(L, 2) != LUA_TNUMBER || !ndL_integral(L, 2, &n))
    return ndL_error(L, "matrix_power: exponent must be an integer, got %s",
                     lua_type(L, 2) == LUA_TNUMBER
                         ? lua_tostring(L, 2)
                         : luaL_typename(L, 2));
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_linalg_matrix_power(&e, r, a, n));
  ndL_charge(L, r);
  return 1;
}

/* norm(A [, ord]): nil is 2 for a vector, "fro" for a matrix. */
static int l_norm(lua_State *L) {
  nd_tensor *a = ndL_check(L, 1, "norm");
  int ord = a->ndim == 1 ? ND_NORM_P : ND_NORM_FRO;
  double p = 2;
  if (lua_type(L, 2) == LUA_TSTRING) {
    const char *s = lua_tostring(L, 2);
    if (!strcmp(s, "fro"))
      ord = ND_NORM_FRO;
    else if (!strcmp(s, "nuc"))
      ord = ND_NORM_NUC;
    else
      return ndL_error(L, "norm: ord must be a number, 'fro' or 'nuc', got "
                       "'%s'", s);
  } else if (lua_type(L, 2) == LUA_TNUMBER) {
    ord = ND_NORM_P;
    p = lua_tonumber(L, 2);
    if (p != p) return ndL_error(L, "norm: ord must not be NaN");
  } else if (!lua_isnoneornil(L, 2)) {
    return ndL_error(L, "norm: ord must be a number, 'fro' or 'nuc', got %s",
                     luaL_typename(L, 2));
  }
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_linalg_norm(&e, r, a, ord, p));
  return ndL_return(L, 1, &r, 1);
}

/* plan(name, A [, B]): the LAPACK calls name(A [, B]) would make. */
static int l_plan(lua_State *L) {
  static const char *const kinds[] = {NULL, "copy", "transposing copy",
                                      "strided gather", "dtype conversion"};
  if (lua_type(L, 1) != LUA_TSTRING)
    return ndL_error(L, "plan: argument 1 must be the name of a linalg "
                     "function, got %s", luaL_typename(L, 1));
  const char *name = lua_tostring(L, 1);
  nd_tensor *a = ndL_check(L, 2, "plan");
  nd_tensor *b = lua_isnoneornil(L, 3) ? NULL : ndL_check(L, 3, "plan");
  nd_lapack_plan p;
  nd_err e = ndL_err();
  e.fn = NULL; /* errors name the planned function (inv: ...) or plan */
  if (nd_linalg_plan(&e, &p, name, a, b)) return ndL_raise(L, &e);
  lua_newtable(L);
  lua_pushstring(L, p.routine);
  lua_setfield(L, -2, "routine");
  if (p.flags[0]) {
    lua_pushstring(L, p.flags);
    lua_setfield(L, -2, "flags");
  }
  lua_pushstring(L, nd_dtype_name(p.dtype));
  lua_setfield(L, -2, "dtype");
  ndL_pushint(L, p.batch);
  lua_setfield(L, -2, "batch");
  lua_newtable(L); /* copies: { A = "transposing copy", ... } */
  if (p.copy_a) {
    lua_pushstring(L, kinds[p.copy_a]);
    lua_setfield(L, -2, "A");
  }
  if (p.copy_b) {
    lua_pushstring(L, kinds[p.copy_b]);
    lua_setfield(L, -2, "B");
  }
  lua_setfield(L, -2, "copies");
  return 1;
}

void ndL_open_linalg(lua_State *L) {
  static const luaL_Reg fns[] = {
      {"solve", l_solve}, {"inv", l_inv}, {"det", l_det},
      {"slogdet", l_slogdet}, {"cholesky", l_cholesky}, {"qr", l_qr},
      {"svd", l_svd}, {"svdvals", l_svdvals}, {"eigh", l_eigh},
      {"eigvalsh", l_eigvalsh}, {"lstsq", l_lstsq}, {"pinv", l_pinv},
      {"matrix_rank", l_matrix_rank}, {"matrix_power", l_matrix_power},
      {"norm", l_norm}, {"cond", l_cond}, {"plan", l_plan}, {NULL, NULL}};
  lua_newtable(L);
  ndL_register_in(L, fns, "linalg");
  lua_setfield(L, -2, "linalg");
}
