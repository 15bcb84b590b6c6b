/* Indexing with tensors: index_select, gather, scatter_, scatter_add_,
 * index_add_, index_fill_, index_copy_, masked_fill_, masked_select,
 * masked_scatter_, nonzero, take; and the t[tensor] sugar that lviews.c's
 * __index / __newindex hand over. Positions are 1-based (e.base = 1). */
#include "lnd.h"
#include <string.h>

/* A fresh result: the userdata first (nothing leaks on error). */
#define RESULT(L, fn, call)                                                 \
  do {                                                                      \
    nd_tensor *r = ndL_new(L);                                              \
    nd_err e = ndL_err();                                                   \
    NDL_CALL_AS(L, fn, e, call);                                            \
    ndL_charge(L, r);                                                       \
    return 1;                                                               \
  } while (0)

/* An in-place op returns its target. */
#define INPLACE(L, fn, call)                                                \
  do {                                                                      \
    nd_err e = ndL_err();                                                   \
    NDL_CALL_AS(L, fn, e, call);                                            \
    lua_settop(L, 1);                                                       \
    return 1;                                                               \
  } while (0)

/* The tensor at idx, or a number/boolean at idx as a 0-d tensor of dtype
 * (pushed on the stack, so the collector owns it). */
static const nd_tensor *value_arg(lua_State *L, int idx, int dtype,
                                  const char *fn, const char *what) {
  nd_tensor *v = ndL_test(L, idx);
  if (v) return v;
  int ty = lua_type(L, idx);
  if (ty != LUA_TNUMBER && ty != LUA_TBOOLEAN)
    ndL_error(L, "%s: %s must be a number, boolean or tensor, got %s", fn,
               what, luaL_typename(L, idx));
  ndL_check_value(L, idx, dtype, fn); /* nd_scalar_fits's rule */
  v = ndL_new(L);
  nd_err e = ndL_err();
  nd_status st;
  NDL_CALL_AS(L, fn, e, nd_empty(&e, v, dtype, 0, NULL));
  ndL_fill_value(L, idx, v, &e, &st); /* checked: cannot fail */
  return v;
}

/* f(t, dim, index) -> a fresh result: index_select, gather. */
typedef nd_status (*select_fn)(nd_err *, nd_tensor *, const nd_tensor *, int,
                               const nd_tensor *);
static int dim_select(lua_State *L, const char *fn, select_fn f) {
  int d;
  nd_tensor *ix, *t = ndL_dim_index(L, fn, &d, &ix);
  RESULT(L, fn, f(&e, r, t, d, ix));
}
static int l_index_select(lua_State *L) {
  return dim_select(L, "index_select", nd_index_select);
}
static int l_gather(lua_State *L) { return dim_select(L, "gather", nd_gather); }

static int l_take(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "take");
  nd_tensor *ix = ndL_check(L, 2, "take");
  RESULT(L, "take", nd_take(&e, r, t, ix));
}

/* t:f_(dim, index, src) in place: scatter_, scatter_add_, index_fill_,
 * index_copy_. A `value` name lets src be a number or boolean too. */
typedef nd_status (*scatter_fn)(nd_err *, const nd_tensor *, int,
                                const nd_tensor *, const nd_tensor *);
static int dim_scatter(lua_State *L, const char *fn, scatter_fn f,
                       const char *value) {
  int d;
  nd_tensor *ix, *t = ndL_dim_index(L, fn, &d, &ix);
  const nd_tensor *s =
      value ? value_arg(L, 4, t->dtype, fn, value) : ndL_check(L, 4, fn);
  INPLACE(L, fn, f(&e, t, d, ix, s));
}
static int l_scatter_(lua_State *L) {
  return dim_scatter(L, "scatter_", nd_scatter, "src");
}
static int l_scatter_add_(lua_State *L) {
  return dim_scatter(L, "scatter_add_", nd_scatter_add, NULL);
}
static int l_index_fill_(lua_State *L) {
  return dim_scatter(L, "index_fill_", nd_index_fill, "value");
}
static int l_index_copy_(lua_State *L) {
  return dim_scatter(L, "index_copy_", nd_index_copy, NULL);
}

static int l_index_add_(lua_State *L) {
  int d;
  nd_tensor *ix, *t = ndL_dim_index(L, "index_add_", &d, &ix);
  nd_tensor *s = ndL_check(L, 4, "index_add_");
  double alpha = 1;
  if (!lua_isnoneornil(L, 5)) {
    if (lua_type(L, 5) != LUA_TNUMBER)
      return ndL_error(L, "index_add_: alpha must be a number, got %s",
                        luaL_typename(L, 5));
    alpha = lua_tonumber(L, 5);
  }
  INPLACE(L, "index_add_", nd_index_add(&e, t, d, ix, s, alpha));
}

static int l_masked_fill_(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "masked_fill_");
  nd_tensor *m = ndL_check(L, 2, "masked_fill_");
  const nd_tensor *v = value_arg(L, 3, t->dtype, "masked_fill_", "value");
  INPLACE(L, "masked_fill_", nd_masked_fill(&e, t, m, v));
}

static int l_masked_select(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "masked_select");
  nd_tensor *m = ndL_check(L, 2, "masked_select");
  RESULT(L, "masked_select", nd_masked_select(&e, r, t, m));
}

static int l_masked_scatter_(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "masked_scatter_");
  nd_tensor *m = ndL_check(L, 2, "masked_scatter_");
  nd_tensor *s = ndL_check(L, 3, "masked_scatter_");
  INPLACE(L, "masked_scatter_", nd_masked_scatter(&e, t, m, s));
}

static int l_nonzero(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "nonzero");
  RESULT(L, "nonzero", nd_nonzero(&e, r, t));
}

/* t[k] (assign = 0) and t[k] = v (assign = 1) with a tensor key k at
 * index 2 (v at 3): a bool mask selects / fills / scatters; a 1-D integer
 * index selects / fills / copies along dim 1. Errors name "index" or
 * "newindex", as the other t[...] errors do. */
int ndL_tensor_key(lua_State *L, int assign) {
  const char *fn = assign ? "newindex" : "index";
  nd_tensor *t = ndL_check(L, 1, fn);
  nd_tensor *k = ndL_check(L, 2, fn);
  nd_tensor *v = assign ? ndL_test(L, 3) : NULL;
  nd_err e = ndL_err();
  char b[ND_SIZES_BUF];
  if (k->dtype == ND_BOOL) {
    if (!assign) RESULT(L, fn, nd_masked_select(&e, r, t, k));
    if (v) NDL_CALL_AS(L, fn, e, nd_masked_scatter(&e, t, k, v));
    else {
      const nd_tensor *x = value_arg(L, 3, t->dtype, fn, "value");
      NDL_CALL_AS(L, fn, e, nd_masked_fill(&e, t, k, x));
    }
    return 0;
  }
  if (k->dtype != ND_INT32 && k->dtype != ND_INT64)
    return ndL_error(L, "%s: a tensor key must be a bool mask or an int32/"
                      "int64 index, got %s", fn, nd_dtype_name(k->dtype));
  if (k->ndim != 1)
    return ndL_error(L, "%s: an index tensor key must be 1-D, got size %s "
                      "(use gather, take or index_select)", fn,
                      nd_fmt_sizes(b, sizeof b, k->ndim, k->size));
  if (t->ndim == 0)
    return ndL_error(L, "%s: a 0-d tensor cannot be indexed by a tensor", fn);
  if (!assign) RESULT(L, fn, nd_index_select(&e, r, t, 0, k));
  if (!v) {
    const nd_tensor *x = value_arg(L, 3, t->dtype, fn, "value");
    NDL_CALL_AS(L, fn, e, nd_index_fill(&e, t, 0, k, x));
    return 0;
  }
  /* src broadcasts to the selected rows' shape, as assignment does */
  int64_t size[ND_MAX_DIMS];
  memcpy(size, t->size, sizeof(int64_t) * (size_t)t->ndim);
  size[0] = k->size[0];
  nd_tensor *s = ndL_new_view(L, 3); /* a view of v: borrows, as all views */
  NDL_CALL_AS(L, fn, e, nd_expand(&e, s, v, t->ndim, size));
  ndL_borrow(s);
  NDL_CALL_AS(L, fn, e, nd_index_copy(&e, t, 0, k, s));
  return 0;
}

void ndL_open_index(lua_State *L) {
  static const luaL_Reg fns[] = {
      {"index_select", l_index_select}, {"gather", l_gather},
      {"take", l_take}, {"scatter_", l_scatter_},
      {"scatter_add_", l_scatter_add_}, {"index_add_", l_index_add_},
      {"index_fill_", l_index_fill_}, {"index_copy_", l_index_copy_},
      {"masked_fill_", l_masked_fill_}, {"masked_select", l_masked_select},
      {"masked_scatter_", l_masked_scatter_}, {"nonzero", l_nonzero},
      {NULL, NULL}};
  ndL_register(L, fns);
}
