/* Contractions (src/core/contract/): tensordot, inner, kron, cross, dist,
 * normalize. Dims are 1-based (negative: from the end), as everywhere. */
#include "lnd.h"

/* A new result r, or its one element as a Lua value when scalar says so. */
static int result(lua_State *L, nd_tensor *r, int scalar) {
  if (!scalar) {
    ndL_charge(L, r);
    return 1;
  }
  int64_t none[1] = {0};
  ndL_push_elem(L, r, none);
  return 1;
}

/* tensordot(a, b, dims): dims a count n (a's last n against b's first n,
 * NumPy's) or {{a's dims}, {b's dims}}. */
static int l_tensordot(lua_State *L) {
  const char *fn = "tensordot";
  nd_tensor *a = ndL_check(L, 1, fn), *b = ndL_check(L, 2, fn);
  int da[ND_MAX_DIMS], db[ND_MAX_DIMS], n;
  if (lua_type(L, 3) == LUA_TNUMBER) {
    int64_t k = ndL_int(L, 3, fn, "dims");
    if (k < 0 || k > a->ndim || k > b->ndim)
      return ndL_error(L, "%s: cannot contract %lld dims of tensors of %d "
                       "and %d dims", fn, (long long)k, a->ndim, b->ndim);
    n = (int)k;
    for (int i = 0; i < n; i++) da[i] = a->ndim - n + i, db[i] = i;
  } else if (lua_istable(L, 3)) {
    lua_rawgeti(L, 3, 1);
    lua_rawgeti(L, 3, 2);
    if (!lua_istable(L, -2) || !lua_istable(L, -1))
      return ndL_error(L, "%s: dims must be a count or two tables of dims",
                       fn);
    n = ndL_dimlist(L, -2, a->ndim, fn, da);
    if (ndL_dimlist(L, -1, b->ndim, fn, db) != n)
      return ndL_error(L, "%s: %d dims of a against %d of b", fn, n,
                       (int)lua_objlen(L, -1));
    lua_pop(L, 2);
  } else {
    return ndL_error(L, "%s: dims must be a count or two tables of dims, "
                     "got %s", fn, ndL_typename(L, 3));
  }
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_tensordot(&e, r, a, b, n, da, db));
  return result(L, r, 0);
}

/* inner(a, b): a number for two 1-D tensors, as dot. */
static int l_inner(lua_State *L) {
  nd_tensor *a = ndL_check(L, 1, "inner"), *b = ndL_check(L, 2, "inner");
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_inner(&e, r, a, b));
  return result(L, r, a->ndim == 1 && b->ndim == 1);
}

static int l_kron(lua_State *L) {
  nd_tensor *a = ndL_check(L, 1, "kron"), *b = ndL_check(L, 2, "kron");
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_kron(&e, r, a, b));
  return result(L, r, 0);
}

/* cross(a, b [, dim = -1]): dim counts among the broadcast dims. */
static int l_cross(lua_State *L) {
  nd_tensor *a = ndL_check(L, 1, "cross"), *b = ndL_check(L, 2, "cross");
  int n = a->ndim > b->ndim ? a->ndim : b->ndim;
  int dim = lua_isnoneornil(L, 3) ? n - 1 : ndL_dim(L, 3, n, "cross");
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_cross(&e, r, a, b, dim));
  return result(L, r, 0);
}

/* dist(a, b [, p = 2]) -> a number. */
static int l_dist(lua_State *L) {
  nd_tensor *a = ndL_check(L, 1, "dist"), *b = ndL_check(L, 2, "dist");
  double p = ndL_optnum(L, 3, "dist", "p", 2);
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_dist(&e, r, a, b, p));
  return result(L, r, 1);
}

/* normalize(t [, p = 2 [, dim = 2 [, eps = 1e-12]]]): PyTorch's
 * F.normalize (its dim=1 is nd's 2). */
static int l_normalize(lua_State *L) {
  const char *fn = "normalize";
  nd_tensor *t = ndL_check(L, 1, fn);
  double p = ndL_optnum(L, 2, fn, "p", 2);
  int dim = 1;
  if (!lua_isnoneornil(L, 3)) dim = ndL_dim(L, 3, t->ndim, fn);
  double eps = ndL_optnum(L, 4, fn, "eps", 1e-12);
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_normalize(&e, r, t, p, dim, eps));
  return result(L, r, 0);
}

void ndL_open_contract(lua_State *L) {
  static const luaL_Reg fns[] = {
      {"tensordot", l_tensordot}, {"inner", l_inner}, {"kron", l_kron},
      {"cross", l_cross}, {"dist", l_dist}, {"normalize", l_normalize},
      {NULL, NULL}};
  ndL_register(L, fns);
}
