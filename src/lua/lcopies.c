/* Copies: contiguous, clone, copy_, dtype conversions, cat, stack. */
#include "lnd.h"
#include <string.h>

static int l_contiguous(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "contiguous");
  if (nd_is_contiguous(t)) { /* the very same object, as the contract says */
    lua_settop(L, 1);
    return 1;
  }
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_contiguous(&e, r, t));
  ndL_charge(L, r);
  return 1;
}

static int l_clone(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "clone");
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_clone(&e, r, t));
  ndL_charge(L, r);
  return 1;
}

static int l_copy_(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "copy_");
  nd_tensor *s = ndL_check(L, 2, "copy_");
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_copy(&e, t, s));
  lua_settop(L, 1);
  return 1;
}

static int convert(lua_State *L, const char *fn, int dtype) {
  nd_tensor *t = ndL_check(L, 1, fn);
  if (dtype < 0) dtype = ndL_dtype(L, 2, fn, -1);
  if (dtype < 0) return ndL_error(L, "%s: a dtype is required", fn);
  if (t->dtype == dtype) { /* PyTorch returns self when nothing changes */
    lua_settop(L, 1);
    return 1;
  }
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_to_dtype(&e, r, t, dtype));
  ndL_charge(L, r);
  return 1;
}
static int l_to(lua_State *L) { return convert(L, "to", -1); }
static int l_float(lua_State *L) { return convert(L, "float", ND_FLOAT32); }
static int l_double(lua_State *L) { return convert(L, "double", ND_FLOAT64); }
static int l_int(lua_State *L) { return convert(L, "int", ND_INT32); }
static int l_long(lua_State *L) { return convert(L, "long", ND_INT64); }
static int l_byte(lua_State *L) { return convert(L, "byte", ND_UINT8); }
static int l_bool(lua_State *L) { return convert(L, "bool", ND_BOOL); }

/* The tensors of a list at idx (kept alive by the list itself). */
static int tensor_list(lua_State *L, int idx, const char *fn,
                       const nd_tensor **ts, int max) {
  if (!lua_istable(L, idx))
    return ndL_error(L, "%s: expected a list of tensors, got %s", fn,
                      luaL_typename(L, idx));
  int n = (int)lua_objlen(L, idx);
  if (n == 0) return ndL_error(L, "%s: expected a non-empty list", fn);
  if (n > max) return ndL_error(L, "%s: at most %d tensors", fn, max);
  for (int i = 0; i < n; i++) {
    lua_rawgeti(L, idx, i + 1);
    ts[i] = ndL_test(L, -1);
    if (!ts[i])
      return ndL_error(L, "%s: list entry %d must be a tensor, got %s", fn,
                        i + 1, luaL_typename(L, -1));
    lua_pop(L, 1);
  }
  return n;
}

enum { MAX_LIST = 4096 };

static int l_cat(lua_State *L) {
  const nd_tensor *ts[MAX_LIST];
  int n = tensor_list(L, 1, "cat", ts, MAX_LIST);
  int d = lua_isnoneornil(L, 2) ? 0 : ndL_dim(L, 2, ts[0]->ndim, "cat");
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_cat(&e, r, n, ts, d));
  ndL_charge(L, r);
  return 1;
}

static int l_stack(lua_State *L) {
  const nd_tensor *ts[MAX_LIST];
  int n = tensor_list(L, 1, "stack", ts, MAX_LIST);
  int d = lua_isnoneornil(L, 2) ? 0 : ndL_dim(L, 2, ts[0]->ndim + 1, "stack");
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_stack(&e, r, n, ts, d));
  ndL_charge(L, r);
  return 1;
}

void ndL_open_copies(lua_State *L) {
  static const luaL_Reg fns[] = {
      {"contiguous", l_contiguous}, {"clone", l_clone}, {"copy_", l_copy_},
      {"to", l_to}, {"float", l_float}, {"double", l_double}, {"int", l_int},
      {"long", l_long}, {"byte", l_byte}, {"bool", l_bool}, {"cat", l_cat},
      {"stack", l_stack}, {NULL, NULL}};
  ndL_register(L, fns);
}
