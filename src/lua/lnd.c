/* luaopen_nd's body, argument helpers, and the loader that runs the Lua
 * layer (lua/ *.lua, compiled in) over the C functions. The tensor
 * object is lobject.c's; calls and errors are lcall.c's. */
#include "lnd.h"
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

extern const struct nd_lua_source {
  const char *name;
  const char *src;
  size_t len;
} nd_lua_sources[];

#if LUA_VERSION_NUM >= 502
#define ndL_load luaL_loadbufferx
#else
#define ndL_load(L, b, n, name, mode) luaL_loadbuffer(L, b, n, name)
#endif

int64_t ndL_int(lua_State *L, int idx, const char *fn, const char *what) {
  if (lua_type(L, idx) != LUA_TNUMBER)
    ndL_error(L, "%s: %s must be an integer, got %s", fn, what,
               luaL_typename(L, idx));
#if LUA_VERSION_NUM >= 503
  if (lua_isinteger(L, idx)) return (int64_t)lua_tointeger(L, idx);
#endif
  double v = lua_tonumber(L, idx);
  if (v != floor(v) || !(v >= -0x1p63 && v < 0x1p63))
    ndL_error(L, "%s: %s must be an integer, got %s", fn, what,
               lua_tostring(L, idx));
  return (int64_t)v;
}

int64_t ndL_optint(lua_State *L, int idx, const char *fn, const char *what,
                   int64_t def) {
  return lua_isnoneornil(L, idx) ? def : ndL_int(L, idx, fn, what);
}

void ndL_per_dim(lua_State *L, int idx, const char *fn, const char *key,
                 int dims, int one_ok, int64_t *v) {
  int n = 1;
  if (lua_type(L, idx) == LUA_TNUMBER) {
    v[0] = ndL_int(L, idx, fn, key);
  } else {
    n = lua_istable(L, idx) ? (int)lua_objlen(L, idx) : -1;
    if (n != dims && !(one_ok && n == 1))
      ndL_error(L, "%s: %s must be a number or a table of %d integers, got %s",
                fn, key, dims,
                n < 0 ? luaL_typename(L, idx) : "a table of another length");
    for (int d = 0; d < n; d++) {
      char what[48];
      snprintf(what, sizeof what, "%s[%d]", key, d + 1);
      lua_rawgeti(L, idx, d + 1);
      v[d] = ndL_int(L, -1, fn, what);
      lua_pop(L, 1);
    }
  }
  for (int d = n; d < dims; d++) v[d] = v[0];
}

double ndL_num(lua_State *L, int idx, const char *fn, const char *what) {
  if (lua_type(L, idx) != LUA_TNUMBER)
    ndL_error(L, "%s: %s must be a number, got %s", fn, what,
              luaL_typename(L, idx));
  return lua_tonumber(L, idx);
}

double ndL_optnum(lua_State *L, int idx, const char *fn, const char *what,
                  double def) {
  return lua_isnoneornil(L, idx) ? def : ndL_num(L, idx, fn, what);
}

static int64_t position(lua_State *L, int64_t p, int64_t n, const char *fn,
                        const char *what) {
  if (p == 0)
    ndL_error(L, "%s: %s 0 is invalid (positions start at 1; -1 is the last)",
               fn, what);
  int64_t q = ndL_pos(p, n);
  if (q < 0)
    ndL_error(L, "%s: %s %lld out of range (valid: 1..%lld or -%lld..-1)", fn,
               what, (long long)p, (long long)n, (long long)n);
  return q;
}

int ndL_dim(lua_State *L, int idx, int ndim, const char *fn) {
  int64_t p = ndL_int(L, idx, fn, "dim");
  if (ndim == 0)
    ndL_error(L, "%s: dim %lld out of range for a 0-d tensor", fn,
               (long long)p);
  return (int)position(L, p, ndim, fn, "dim");
}

int64_t ndL_index(lua_State *L, int idx, int64_t n, const char *fn,
                  const char *what) {
  return position(L, ndL_int(L, idx, fn, what), n, fn, what);
}

static int sizes(lua_State *L, int idx, const char *fn, int64_t *size,
                 int *next, int64_t min) {
  int n = 0;
  if (lua_istable(L, idx)) {
    int len = (int)lua_objlen(L, idx);
    if (len > ND_MAX_DIMS)
      ndL_error(L, "%s: %d dims requested, at most %d supported", fn, len,
                 ND_MAX_DIMS);
    for (int i = 1; i <= len; i++) {
      lua_rawgeti(L, idx, i);
      size[n++] = ndL_int(L, -1, fn, "size");
      lua_pop(L, 1);
    }
    *next = idx + 1;
  } else {
    while (lua_type(L, idx + n) == LUA_TNUMBER) {
      if (n == ND_MAX_DIMS)
        ndL_error(L, "%s: more than %d dims requested", fn, ND_MAX_DIMS);
      size[n] = ndL_int(L, idx + n, fn, "size");
      n++;
    }
    *next = idx + n;
  }
  for (int i = 0; i < n; i++)
    if (size[i] < min)
      ndL_error(L, "%s: size %lld is negative", fn, (long long)size[i]);
  return n;
}

int ndL_sizes(lua_State *L, int idx, const char *fn, int64_t *size,
              int *next) {
  return sizes(L, idx, fn, size, next, 0);
}

int ndL_shape(lua_State *L, int idx, const char *fn, int64_t *size,
              int *next) {
  return sizes(L, idx, fn, size, next, -1);
}

int ndL_dtype(lua_State *L, int idx, const char *fn, int def) {
  if (lua_isnoneornil(L, idx)) return def;
  const char *s = lua_tostring(L, idx);
  int d = lua_type(L, idx) == LUA_TSTRING ? nd_dtype_from_name(s) : -1;
  if (d < 0) { /* the names from the dtype list: "a, b, ... or z" */
    char names[256] = "";
    size_t k = 0;
    for (int i = 0; i < ND_NDTYPES && k < sizeof names; i++)
      k += (size_t)snprintf(names + k, sizeof names - k, "%s%s",
                            i == 0 ? "" : i + 1 < ND_NDTYPES ? ", " : " or ",
                            nd_dtype_name(i));
    ndL_error(L, "%s: unknown dtype %s (expected %s)", fn,
               lua_type(L, idx) == LUA_TSTRING ? s : luaL_typename(L, idx),
               names);
  }
  return d;
}

/* A 0-d tensor takes dim 1 or -1 (as PyTorch's takes 0 or -1). */
static int dim_or_scalar(lua_State *L, int idx, int ndim, const char *fn) {
  if (ndim == 0 && lua_type(L, idx) == LUA_TNUMBER &&
      (lua_tonumber(L, idx) == 1 || lua_tonumber(L, idx) == -1))
    return 0;
  return ndL_dim(L, idx, ndim, fn);
}

int ndL_dim_of(lua_State *L, int idx, const nd_tensor *t, const char *fn) {
  return dim_or_scalar(L, idx, t->ndim, fn);
}

int ndL_dimlist(lua_State *L, int idx, int ndim, const char *fn, int *dims) {
  if (!lua_istable(L, idx)) {
    dims[0] = dim_or_scalar(L, idx, ndim, fn);
    return 1;
  }
  int n = (int)lua_objlen(L, idx);
  if (n > ND_MAX_DIMS) ndL_error(L, "%s: too many dims (%d)", fn, n);
  for (int i = 0; i < n; i++) {
    lua_rawgeti(L, idx, i + 1);
    dims[i] = dim_or_scalar(L, lua_gettop(L), ndim, fn);
    lua_pop(L, 1);
  }
  return n;
}

void ndL_push_elem(lua_State *L, const nd_tensor *t, const int64_t *idx) {
  nd_err e = ndL_err();
  double v;
  char kind = nd_dtype_kind(t->dtype);
#if LUA_VERSION_NUM < 503
  /* no 64-bit integers: a uint64 above 2^63 - 1 as its (rounded) number,
   * not as the negative int64 of its bits (LuaJIT reads it again exactly:
   * lua/elements.lua) */
  if (t->dtype == ND_UINT64) kind = 'f';
#endif
  if (kind == 'i' || kind == 'u') {
    int64_t i;
    if (nd_get_i64(&e, t, idx, &i)) ndL_raise(L, &e);
    ndL_pushint(L, i);
    return;
  }
  if (nd_get(&e, t, idx, &v)) ndL_raise(L, &e);
  if (t->dtype == ND_BOOL)
    lua_pushboolean(L, v != 0);
  else
    lua_pushnumber(L, v);
}

int ndL_integral(lua_State *L, int idx, int64_t *v) {
#if LUA_VERSION_NUM >= 503
  if (lua_isinteger(L, idx)) {
    *v = (int64_t)lua_tointeger(L, idx);
    return 1;
  }
#endif
  return nd_whole(lua_tonumber(L, idx), v);
}

int ndL_scalar(lua_State *L, int idx, int dtype, nd_operand *s) {
  int ty = lua_type(L, idx);
  s->t = NULL;
  s->dtype = ND_INT64;
  if (ty == LUA_TBOOLEAN) {
    s->i = lua_toboolean(L, idx);
    return 1;
  }
  if (ty != LUA_TNUMBER) return 0;
#if LUA_VERSION_NUM >= 503
  /* A uint64 element reads as the integer of its bits (math.ult's
   * convention), and is written back the same way. */
  if (dtype == ND_UINT64 && lua_isinteger(L, idx)) s->dtype = ND_UINT64;
#else
  (void)dtype;
#endif
  if (!ndL_integral(L, idx, &s->i)) {
    s->dtype = ND_FLOAT64;
    s->f = lua_tonumber(L, idx);
  }
  return 1;
}

void ndL_check_value(lua_State *L, int idx, int dtype, const char *fn) {
  nd_operand s;
  nd_err e = ndL_err();
  if (ndL_scalar(L, idx, dtype, &s) && nd_scalar_fits(&e, fn, dtype, &s))
    ndL_raise(L, &e);
}

int ndL_fill_value(lua_State *L, int idx, const nd_tensor *t, nd_err *e,
                   nd_status *st) {
  nd_operand s;
  if (!ndL_scalar(L, idx, t->dtype, &s)) return 0;
  *st = nd_fill_scalar(e, t, &s);
  return 1;
}

void ndL_set_elem(lua_State *L, int vidx, const nd_tensor *t,
                  const int64_t *idx, const char *fn) {
  nd_err e = ndL_err();
  nd_operand s;
  if (!ndL_scalar(L, vidx, t->dtype, &s))
    return (void)ndL_error(L, "%s: value must be a number or boolean, got %s",
                            fn, luaL_typename(L, vidx));
  if (nd_set_scalar(&e, t, idx, &s)) ndL_raise(L, &e);
}

/* Runs lua/NAME.lua with (C functions table, loader) and returns what it
 * returns; the loader lets one Lua file require another. */
static int l_import(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  for (const struct nd_lua_source *s = nd_lua_sources; s->name; s++) {
    if (strcmp(s->name, name)) continue;
    char chunk[64];
    snprintf(chunk, sizeof chunk, "@nd/%s.lua", name);
    if (ndL_load(L, s->src, s->len, chunk, "t")) return lua_error(L);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_call(L, 2, 1);
    return 1;
  }
  return ndL_error(L, "nd: no embedded Lua module '%s'", name);
}

/* The embedded Lua modules' names, for lua/nd.lua to load them all. */
static int l_modules(lua_State *L) {
  lua_newtable(L);
  int i = 0;
  for (const struct nd_lua_source *s = nd_lua_sources; s->name; s++) {
    lua_pushstring(L, s->name);
    lua_rawseti(L, -2, ++i);
  }
  return 1;
}

int ndL_open(lua_State *L, void (*areas)(lua_State *L)) {
  lua_newtable(L); /* C: the raw functions, which lua/nd.lua arranges */
  ndL_open_object(L);
  ndL_open_call(L);
  areas(L);
  lua_pushcfunction(L, l_modules);
  lua_setfield(L, -2, "modules");
  luaL_newmetatable(L, "nd.Shared"); /* survives reloads (lua/ffi.lua) */
  lua_setfield(L, -2, "shared");
  luaL_newmetatable(L, "nd.SizeTable"); /* size()/stride() tables */
  lua_setfield(L, -2, "size_metatable");
  lua_pushvalue(L, -1);
  lua_pushnil(L); /* the loader's own slot, filled below */
  lua_pushcclosure(L, l_import, 2);
  /* Put the loader into its own second upvalue. */
  lua_pushvalue(L, -1);
  lua_setupvalue(L, -2, 2);
  lua_pushliteral(L, "nd");
  lua_call(L, 1, 1);
  return 1;
}

void ndL_setint(lua_State *L, const char *k, int64_t v) {
  ndL_pushint(L, v);
  lua_setfield(L, -2, k);
}
void ndL_setstr(lua_State *L, const char *k, const char *v) {
  lua_pushstring(L, v);
  lua_setfield(L, -2, k);
}
