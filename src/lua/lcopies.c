/* Copies: contiguous, clone, copy_, dtype conversions, cat, stack, pad. */
#include "lnd.h"
#include <stdio.h>
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
static int l_char(lua_State *L) { return convert(L, "char", ND_INT8); }
static int l_short(lua_State *L) { return convert(L, "short", ND_INT16); }
static int l_half(lua_State *L) { return convert(L, "half", ND_FLOAT16); }
static int l_bfloat16(lua_State *L) {
  return convert(L, "bfloat16", ND_BFLOAT16);
}
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

/* The padding modes' names, nd.h's list. */
static const char *const pad_modes[ND_NPAD_MODES] = {
#define NAME(E, name) #name,
    ND_PAD_MODES(NAME)
#undef NAME
};

/* Raises that the argument at idx is no mode: the names in the message. */
static int bad_mode(lua_State *L, int idx) {
  char names[128], got[64];
  size_t k = 0;
  for (int m = 0; m < ND_NPAD_MODES && k < sizeof names; m++)
    k += (size_t)snprintf(names + k, sizeof names - k, "%s\"%s\"",
                          !m ? "" : m + 1 < ND_NPAD_MODES ? ", " : " or ",
                          pad_modes[m]);
  if (lua_type(L, idx) == LUA_TSTRING)
    snprintf(got, sizeof got, "\"%.40s\"", lua_tostring(L, idx));
  else
    snprintf(got, sizeof got, "%s", luaL_typename(L, idx));
  return ndL_error(L, "pad: mode must be %s, got %s", names, got);
}

/* pad(t, pads [, mode [, value]]): mode a name; a number or boolean in its
 * place is the constant value (nd.pad(t, {1, 1}, 5)). */
static int l_pad(lua_State *L) {
  const char *fn = "pad";
  nd_tensor *t = ndL_check(L, 1, fn);
  if (!lua_istable(L, 2))
    return ndL_error(L, "%s: pads must be a table, got %s", fn,
                     luaL_typename(L, 2));
  int64_t pads[2 * ND_MAX_DIMS];
  int n = (int)lua_objlen(L, 2); /* more than fit: the core refuses them */
  for (int i = 0; i < n && i < 2 * ND_MAX_DIMS; i++) {
    lua_rawgeti(L, 2, i + 1);
    pads[i] = ndL_int(L, -1, fn, "pad");
    lua_pop(L, 1);
  }
  int mode = ND_PAD_CONSTANT, at = 4; /* the value's argument */
  int k3 = lua_type(L, 3);
  if (k3 == LUA_TSTRING) {
    const char *s = lua_tostring(L, 3);
    for (mode = 0; mode < ND_NPAD_MODES && strcmp(s, pad_modes[mode]); mode++)
      ;
    if (mode == ND_NPAD_MODES) return bad_mode(L, 3);
  } else if (k3 == LUA_TNUMBER || k3 == LUA_TBOOLEAN) {
    at = 3;
    if (!lua_isnoneornil(L, 4))
      return ndL_error(L, "%s: the third argument is the value; a fourth "
                       "(%s) is one too many", fn, luaL_typename(L, 4));
  } else if (k3 != LUA_TNIL && k3 != LUA_TNONE) {
    return bad_mode(L, 3);
  }
  double v = 0;
  int has = !lua_isnoneornil(L, at);
  if (lua_type(L, at) == LUA_TBOOLEAN)
    v = lua_toboolean(L, at);
  else if (has && lua_type(L, at) == LUA_TNUMBER)
    v = lua_tonumber(L, at);
  else if (has)
    return ndL_error(L, "%s: value must be a number or boolean, got %s", fn,
                     luaL_typename(L, at));
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_pad(&e, r, t, n, pads, mode, has ? &v : NULL));
  ndL_charge(L, r);
  return 1;
}

void ndL_open_copies(lua_State *L) {
  static const luaL_Reg fns[] = {
      {"contiguous", l_contiguous}, {"clone", l_clone}, {"copy_", l_copy_},
      {"to", l_to}, {"float", l_float}, {"double", l_double}, {"int", l_int},
      {"long", l_long}, {"byte", l_byte}, {"char", l_char},
      {"short", l_short}, {"half", l_half}, {"bfloat16", l_bfloat16},
      {"bool", l_bool}, {"cat", l_cat},
      {"stack", l_stack}, {"pad", l_pad}, {NULL, NULL}};
  ndL_register(L, fns);
}
