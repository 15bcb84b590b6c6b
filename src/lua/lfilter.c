/* Filtering and resampling (src/core/conv/filter.c, interpolate.c):
 * NumPy's convolve/correlate, SciPy's convolve2d/correlate2d, PyTorch's
 * F.interpolate. Names of modes come from nd.h's lists; the rules are the
 * core's. */
#include "lnd.h"
#include <stdio.h>
#include <string.h>

static const char *const filter_modes[ND_NFILTER_MODES + 1] = {
#define NAME(E, name) #name,
    ND_FILTER_MODES(NAME)
#undef NAME
    NULL};
/* SciPy's names, its aliases after them (same order as ND_BOUNDARIES). */
static const char *const boundaries[2 * ND_NBOUNDARIES + 1] = {
#define NAME(E, name) #name,
    ND_BOUNDARIES(NAME)
#undef NAME
    "fill", "circular", "symmetric", NULL};
static const char *const interp_modes[ND_NINTERP_MODES + 1] = {
#define NAME(E, name, dims) #name,
    ND_INTERP_MODES(NAME)
#undef NAME
    NULL};

/* The string at idx among names (n of them quoted in the message), or
 * def when nil; a Lua error naming fn, what and the names otherwise. */
static int pick(lua_State *L, int idx, const char *fn, const char *what,
                const char *const *names, int n, int def) {
  if (lua_isnoneornil(L, idx)) return def;
  if (lua_type(L, idx) == LUA_TSTRING) {
    const char *s = lua_tostring(L, idx);
    for (int i = 0; names[i]; i++)
      if (!strcmp(s, names[i])) return i % n;
  }
  char list[160], got[64];
  size_t k = 0;
  for (int i = 0; i < n && k < sizeof list; i++)
    k += (size_t)snprintf(list + k, sizeof list - k, "%s\"%s\"",
                          !i ? "" : i + 1 < n ? ", " : " or ", names[i]);
  if (lua_type(L, idx) == LUA_TSTRING)
    snprintf(got, sizeof got, "\"%.40s\"", lua_tostring(L, idx));
  else
    snprintf(got, sizeof got, "%s", luaL_typename(L, idx));
  return ndL_error(L, "%s: %s must be %s, got %s", fn, what, list, got);
}

/* convolve(a, v [, mode]) and correlate(a, v [, mode]): NumPy's. */
static int filter1d(lua_State *L, int conv) {
  const char *fn = conv ? "convolve" : "correlate";
  nd_tensor *a = ndL_check(L, 1, fn), *v = ndL_check(L, 2, fn);
  int mode = pick(L, 3, fn, "mode", filter_modes, ND_NFILTER_MODES,
                  conv ? ND_FILTER_FULL : ND_FILTER_VALID);
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, (conv ? nd_convolve : nd_correlate)(&e, r, a, v, mode));
  ndL_charge(L, r);
  return 1;
}
static int l_convolve(lua_State *L) { return filter1d(L, 1); }
static int l_correlate(lua_State *L) { return filter1d(L, 0); }

/* convolve2d(a, k [, mode [, boundary [, fill]]]): SciPy's. */
static int filter2d(lua_State *L, int conv) {
  const char *fn = conv ? "convolve2d" : "correlate2d";
  nd_tensor *a = ndL_check(L, 1, fn), *k = ndL_check(L, 2, fn);
  int mode = pick(L, 3, fn, "mode", filter_modes, ND_NFILTER_MODES,
                  ND_FILTER_FULL);
  int bd = pick(L, 4, fn, "boundary", boundaries, ND_NBOUNDARIES,
                ND_BOUNDARY_FILL);
  double fill = 0;
  int has = !lua_isnoneornil(L, 5);
  if (has) fill = ndL_num(L, 5, fn, "fill");
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, (conv ? nd_convolve2d : nd_correlate2d)(
                     &e, r, a, k, mode, bd, has ? &fill : NULL));
  ndL_charge(L, r);
  return 1;
}
static int l_convolve2d(lua_State *L) { return filter2d(L, 1); }
static int l_correlate2d(lua_State *L) { return filter2d(L, 0); }

/* The field `key` of the table at 2: a number, or one per spatial dim
 * (sp of them), into v; 0 when absent. */
static int per_dim(lua_State *L, const char *fn, const char *key, int sp,
                   double *v, int check) {
  lua_getfield(L, 2, key);
  int top = lua_gettop(L), got = 1;
  if (lua_isnil(L, top)) {
    got = 0;
  } else if (lua_type(L, top) == LUA_TNUMBER) {
    for (int d = 0; d < sp; d++) v[d] = lua_tonumber(L, top);
  } else if (lua_istable(L, top)) {
    int n = (int)lua_objlen(L, top);
    if (n != sp && !check) { /* the core refuses the input's dims */
      lua_pop(L, 1);
      for (int d = 0; d < sp; d++) v[d] = 1;
      return 1;
    }
    if (n != sp)
      return ndL_error(L, "%s: %s has %d entries, the input %d spatial "
                       "dims", fn, key, n, sp);
    for (int d = 0; d < sp; d++) {
      lua_rawgeti(L, top, d + 1);
      if (lua_type(L, -1) != LUA_TNUMBER)
        return ndL_error(L, "%s: %s entries must be numbers, got %s", fn,
                         key, luaL_typename(L, -1));
      v[d] = lua_tonumber(L, -1);
      lua_pop(L, 1);
    }
  } else {
    return ndL_error(L, "%s: %s must be a number or a table of numbers, "
                     "got %s", fn, key, luaL_typename(L, top));
  }
  lua_pop(L, 1);
  return got;
}

/* interpolate(t, {size = | scale_factor = [, mode =, align_corners =]}
 * [, mode [, align_corners]]): PyTorch's F.interpolate. */
static int l_interpolate(lua_State *L) {
  const char *fn = "interpolate";
  nd_tensor *t = ndL_check(L, 1, fn);
  if (!lua_istable(L, 2))
    return ndL_error(L, "%s: argument 2 must be a table {size = ...} or "
                     "{scale_factor = ...}, got %s", fn, luaL_typename(L, 2));
  lua_settop(L, 4); /* slots 3 and 4 are the positional ones */
  /* options in the table: mode and align_corners there or after it */
  lua_pushnil(L);
  while (lua_next(L, 2)) {
    const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
    if (!k || (strcmp(k, "size") && strcmp(k, "scale_factor") &&
               strcmp(k, "mode") && strcmp(k, "align_corners")))
      return ndL_error(L, "%s: unknown option %s (size, scale_factor, mode, "
                       "align_corners)", fn, k ? k : luaL_typename(L, -2));
    lua_pop(L, 1);
  }
  int midx = 3, aidx = 4;
  lua_getfield(L, 2, "mode");
  if (!lua_isnil(L, -1)) {
    if (!lua_isnoneornil(L, 3))
      return ndL_error(L, "%s: mode given twice (in the table and as "
                       "argument 3)", fn);
    midx = lua_gettop(L);
  }
  lua_getfield(L, 2, "align_corners");
  if (!lua_isnil(L, -1)) {
    if (!lua_isnoneornil(L, 4))
      return ndL_error(L, "%s: align_corners given twice (in the table and "
                       "as argument 4)", fn);
    aidx = lua_gettop(L);
  }
  int mode = pick(L, midx, fn, "mode", interp_modes, ND_NINTERP_MODES,
                  ND_INTERP_NEAREST);
  int align = -1;
  if (!lua_isnoneornil(L, aidx)) {
    if (lua_type(L, aidx) != LUA_TBOOLEAN)
      return ndL_error(L, "%s: align_corners must be a boolean, got %s", fn,
                       luaL_typename(L, aidx));
    align = lua_toboolean(L, aidx);
  }
  int ok = t->ndim == 3 || t->ndim == 4, sp = ok ? t->ndim - 2 : 2;
  double sz[2], sc[2];
  int has_size = per_dim(L, fn, "size", sp, sz, ok);
  int has_scale = per_dim(L, fn, "scale_factor", sp, sc, ok);
  int64_t isz[2] = {0, 0};
  if (has_size)
    for (int d = 0; d < sp; d++)
      if (!nd_whole(sz[d], &isz[d]))
        return ndL_error(L, "%s: size must be an integer, got %.17g", fn,
                         sz[d]);
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_interpolate(&e, r, t, has_size ? isz : NULL,
                                has_scale ? sc : NULL, mode, align));
  ndL_charge(L, r);
  return 1;
}

void ndL_open_filter(lua_State *L) {
  static const luaL_Reg fns[] = {{"convolve", l_convolve},
                                 {"correlate", l_correlate},
                                 {"convolve2d", l_convolve2d},
                                 {"correlate2d", l_correlate2d},
                                 {"interpolate", l_interpolate},
                                 {NULL, NULL}};
  ndL_register(L, fns);
}
