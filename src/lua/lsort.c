/* Sorting, scans and statistics: sort argsort topk kthvalue median unique
 * searchsorted cumsum cumprod var std logsumexp softmax log_softmax
 * count_nonzero histc. Positions come back 1-based (the core counts them
 * from the error context's base, 1 here). */
#include "lnd.h"
#include <math.h>
#include <string.h>

/* A dim at idx (default def when nil, -1 = the last); a 0-d tensor takes 1
 * or -1. Returns a 0-based dim (or -1 for a 0-d tensor). */
static int opt_dim(lua_State *L, int idx, const nd_tensor *t, const char *fn,
                   int def) {
  if (lua_isnoneornil(L, idx)) return def < 0 ? (t->ndim ? t->ndim + def : 0) : def;
  if (t->ndim == 0) {
    int64_t d = ndL_int(L, idx, fn, "dim");
    if (d != 1 && d != -1)
      ndL_error(L, "%s: dim %lld out of range [-1, 1] for a 0-d tensor", fn,
                (long long)d);
    return 0;
  }
  return ndL_dim(L, idx, t->ndim, fn);
}
static int need_dim(lua_State *L, int idx, const nd_tensor *t, const char *fn) {
  if (lua_isnoneornil(L, idx))
    ndL_error(L, "%s: dim must be an integer, got %s", fn, luaL_typename(L, idx));
  return opt_dim(L, idx, t, fn, 0);
}
/* An optional boolean flag (def when nil). */
static int flag(lua_State *L, int idx, const char *fn, const char *what,
                int def) {
  if (lua_isnoneornil(L, idx)) return def;
  if (lua_type(L, idx) != LUA_TBOOLEAN)
    ndL_error(L, "%s: %s must be a boolean, got %s", fn, what,
              luaL_typename(L, idx));
  return lua_toboolean(L, idx);
}

/* A 0-d result as a Lua value; the header is released either way. */
static int push_scalar(lua_State *L, nd_tensor *r) {
  ndL_push_elem(L, r, NULL);
  nd_release(r);
  return 1;
}

static int l_sort(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "sort");
  int dim = opt_dim(L, 2, t, "sort", -1);
  int desc = flag(L, 3, "sort", "descending", 0);
  nd_err e = ndL_err();
  nd_tensor *v = ndL_new(L), *ix = ndL_new(L);
  NDL_CALL_AS(L, "sort", e, nd_sort(&e, v, ix, t, dim, desc));
  ndL_charge(L, v);
  ndL_charge(L, ix);
  return 2;
}

static int l_argsort(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "argsort");
  int dim = opt_dim(L, 2, t, "argsort", -1);
  int desc = flag(L, 3, "argsort", "descending", 0);
  nd_err e = ndL_err();
  nd_tensor *ix = ndL_new(L);
  NDL_CALL_AS(L, "argsort", e, nd_sort(&e, NULL, ix, t, dim, desc));
  ndL_charge(L, ix);
  return 1;
}

static int l_topk(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "topk");
  int64_t k = ndL_int(L, 2, "topk", "k");
  int dim = opt_dim(L, 3, t, "topk", -1);
  int largest = flag(L, 4, "topk", "largest", 1);
  int sorted = flag(L, 5, "topk", "sorted", 1);
  nd_err e = ndL_err();
  nd_tensor *v = ndL_new(L), *ix = ndL_new(L);
  NDL_CALL_AS(L, "topk", e, nd_topk(&e, v, ix, t, k, dim, largest, sorted));
  ndL_charge(L, v);
  return 2;
}

static int l_kthvalue(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "kthvalue");
  int64_t k = ndL_int(L, 2, "kthvalue", "k");
  int dim = opt_dim(L, 3, t, "kthvalue", -1);
  int keep = flag(L, 4, "kthvalue", "keepdim", 0);
  nd_err e = ndL_err();
  nd_tensor *v = ndL_new(L), *ix = ndL_new(L);
  NDL_CALL_AS(L, "kthvalue", e, nd_kthvalue(&e, v, ix, t, k, dim, keep));
  return 2;
}

static int l_median(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "median");
  nd_err e = ndL_err();
  if (lua_isnoneornil(L, 2)) {
    nd_tensor v = ND_UNSET;
    NDL_CALL_AS(L, "median", e, nd_median(&e, &v, NULL, t, ND_ALL_DIMS, 0));
    return push_scalar(L, &v);
  }
  int dim = opt_dim(L, 2, t, "median", -1);
  int keep = flag(L, 3, "median", "keepdim", 0);
  nd_tensor *v = ndL_new(L), *ix = ndL_new(L);
  NDL_CALL_AS(L, "median", e, nd_median(&e, v, ix, t, dim, keep));
  return 2;
}

static int l_unique(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "unique");
  int counts = flag(L, 2, "unique", "return_counts", 0);
  nd_err e = ndL_err();
  nd_tensor *v = ndL_new(L), *c = counts ? ndL_new(L) : NULL;
  NDL_CALL_AS(L, "unique", e, nd_unique(&e, v, c, t));
  ndL_charge(L, v);
  return counts ? 2 : 1;
}

static int l_searchsorted(lua_State *L) {
  nd_tensor *s = ndL_check(L, 1, "searchsorted");
  nd_err e = ndL_err();
  int right = 0;
  if (lua_type(L, 3) == LUA_TSTRING) {
    const char *side = lua_tostring(L, 3);
    if (strcmp(side, "left") && strcmp(side, "right"))
      return ndL_error(L, "searchsorted: side must be \"left\" or \"right\", "
                       "got \"%s\"", side);
    right = side[0] == 'r';
  } else {
    right = flag(L, 3, "searchsorted", "right", 0);
  }
  if (lua_type(L, 2) == LUA_TNUMBER) { /* one value: a Lua number back */
    int64_t i;
    int integral = ndL_integral(L, 2, &i);
    nd_tensor *v = ndL_new(L), r = ND_UNSET;
    NDL_CALL_AS(L, "searchsorted", e, nd_empty(&e, v, integral ? ND_INT64 : ND_FLOAT64, 0, NULL));
    if (integral) nd_set_i64(&e, v, NULL, i);
    else nd_set(&e, v, NULL, lua_tonumber(L, 2));
    NDL_CALL_AS(L, "searchsorted", e, nd_searchsorted(&e, &r, s, v, right));
    return push_scalar(L, &r);
  }
  nd_tensor *v = ndL_check(L, 2, "searchsorted");
  nd_tensor *r = ndL_new(L);
  NDL_CALL_AS(L, "searchsorted", e, nd_searchsorted(&e, r, s, v, right));
  ndL_charge(L, r);
  return 1;
}

static int scan(lua_State *L, const char *fn, int prod) {
  nd_tensor *t = ndL_check(L, 1, fn);
  int dim = need_dim(L, 2, t, fn);
  nd_err e = ndL_err();
  nd_tensor *r = ndL_new(L);
  NDL_CALL_AS(L, fn, e, prod ? nd_cumprod(&e, r, t, dim) : nd_cumsum(&e, r, t, dim));
  ndL_charge(L, r);
  return 1;
}
static int l_cumsum(lua_State *L) { return scan(L, "cumsum", 0); }
static int l_cumprod(lua_State *L) { return scan(L, "cumprod", 1); }

/* t:var([dim [, keepdim [, correction]]]); no dim: a Lua number. */
static int var(lua_State *L, const char *fn, int std) {
  nd_tensor *t = ndL_check(L, 1, fn);
  int dims[ND_MAX_DIMS], n = 0;
  if (!lua_isnoneornil(L, 2)) n = ndL_dimlist(L, 2, t->ndim, fn, dims);
  int keep = flag(L, 3, fn, "keepdim", 0);
  double corr = 1;
  if (!lua_isnoneornil(L, 4)) {
    if (lua_type(L, 4) != LUA_TNUMBER)
      return ndL_error(L, "%s: correction must be a number, got %s", fn,
                       luaL_typename(L, 4));
    corr = lua_tonumber(L, 4);
  }
  nd_err e = ndL_err();
  if (lua_isnoneornil(L, 2)) {
    nd_tensor r = ND_UNSET;
    NDL_CALL_AS(L, fn, e, nd_var(&e, &r, t, 0, NULL, 0, corr, std));
    return push_scalar(L, &r);
  }
  nd_tensor *r = ndL_new(L);
  NDL_CALL_AS(L, fn, e, nd_var(&e, r, t, n, dims, keep, corr, std));
  return 1;
}
static int l_var(lua_State *L) { return var(L, "var", 0); }
static int l_std(lua_State *L) { return var(L, "std", 1); }

static int l_logsumexp(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "logsumexp");
  int dims[ND_MAX_DIMS], n;
  if (lua_isnoneornil(L, 2))
    return ndL_error(L, "logsumexp: dim must be an integer or a table of "
                     "dims, got %s", luaL_typename(L, 2));
  if (t->ndim == 0) {
    dims[0] = opt_dim(L, 2, t, "logsumexp", 0);
    n = 0; /* all (the one element) */
  } else {
    n = ndL_dimlist(L, 2, t->ndim, "logsumexp", dims);
  }
  int keep = flag(L, 3, "logsumexp", "keepdim", 0);
  nd_err e = ndL_err();
  nd_tensor *r = ndL_new(L);
  NDL_CALL_AS(L, "logsumexp", e,
              nd_logsumexp(&e, r, t, n, t->ndim ? dims : NULL, keep));
  return 1;
}

static int softmax(lua_State *L, const char *fn, int log) {
  nd_tensor *t = ndL_check(L, 1, fn);
  int dim = need_dim(L, 2, t, fn);
  nd_err e = ndL_err();
  nd_tensor *r = ndL_new(L);
  NDL_CALL_AS(L, fn, e, nd_softmax(&e, r, t, dim, log));
  ndL_charge(L, r);
  return 1;
}
static int l_softmax(lua_State *L) { return softmax(L, "softmax", 0); }
static int l_log_softmax(lua_State *L) { return softmax(L, "log_softmax", 1); }

static int l_count_nonzero(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "count_nonzero");
  nd_err e = ndL_err();
  if (lua_isnoneornil(L, 2)) {
    nd_tensor r = ND_UNSET;
    NDL_CALL_AS(L, "count_nonzero", e, nd_count_nonzero(&e, &r, t, 0, NULL));
    return push_scalar(L, &r);
  }
  int dims[ND_MAX_DIMS];
  int n = ndL_dimlist(L, 2, t->ndim, "count_nonzero", dims);
  nd_tensor *r = ndL_new(L);
  NDL_CALL_AS(L, "count_nonzero", e, nd_count_nonzero(&e, r, t, n, dims));
  return 1;
}

static double opt_num(lua_State *L, int idx, const char *fn, const char *what) {
  if (lua_isnoneornil(L, idx)) return 0;
  if (lua_type(L, idx) != LUA_TNUMBER)
    ndL_error(L, "%s: %s must be a number, got %s", fn, what,
              luaL_typename(L, idx));
  return lua_tonumber(L, idx);
}

/* histc(t [, bins [, min [, max]]]): Torch7's defaults (100 bins, the
 * data's range when min == max). */
static int l_histc(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "histc");
  int64_t bins = ndL_optint(L, 2, "histc", "bins", 100);
  double lo = opt_num(L, 3, "histc", "min"), hi = opt_num(L, 4, "histc", "max");
  nd_err e = ndL_err();
  nd_tensor *r = ndL_new(L);
  NDL_CALL_AS(L, "histc", e, nd_histc(&e, r, t, bins, lo, hi));
  return 1;
}

void ndL_open_sort(lua_State *L) {
  static const luaL_Reg fns[] = {
      {"sort", l_sort}, {"argsort", l_argsort}, {"topk", l_topk},
      {"kthvalue", l_kthvalue}, {"median", l_median}, {"unique", l_unique},
      {"searchsorted", l_searchsorted}, {"cumsum", l_cumsum},
      {"cumprod", l_cumprod}, {"var", l_var}, {"std", l_std},
      {"logsumexp", l_logsumexp}, {"softmax", l_softmax},
      {"log_softmax", l_log_softmax}, {"count_nonzero", l_count_nonzero},
      {"histc", l_histc}, {NULL, NULL}};
  ndL_register(L, fns);
}
