/* Counting and encoding (src/core/kernels/count.c): bincount and one_hot.
 * Positions are 1-based, as everywhere: bincount counts the value v at
 * position v + 1; one_hot takes positions 1 .. num_classes. */
#include "lnd.h"

/* bincount(t [, weights [, minlength]]): NumPy's. */
static int l_bincount(lua_State *L) {
  const char *fn = "bincount";
  nd_tensor *t = ndL_check(L, 1, fn), *w = NULL;
  if (!lua_isnoneornil(L, 2) && !(w = ndL_test(L, 2)))
    return ndL_error(L, "%s: weights must be a tensor (minlength is the "
                     "third argument), got %s", fn, luaL_typename(L, 2));
  int64_t minlength = ndL_optint(L, 3, fn, "minlength", 0);
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_bincount(&e, r, t, w, minlength));
  ndL_charge(L, r);
  return 1;
}

/* one_hot(index [, num_classes]): PyTorch's; num_classes defaults to the
 * largest position. */
static int l_one_hot(lua_State *L) {
  const char *fn = "one_hot";
  nd_tensor *t = ndL_check(L, 1, fn);
  int64_t classes = ndL_optint(L, 2, fn, "num_classes", -1);
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_one_hot(&e, r, t, classes));
  ndL_charge(L, r);
  return 1;
}

void ndL_open_count(lua_State *L) {
  static const luaL_Reg fns[] = {
      {"bincount", l_bincount}, {"one_hot", l_one_hot}, {NULL, NULL}};
  ndL_register(L, fns);
}
