/* Constructors: tensor, empty, zeros, ones, full, arange, linspace, eye,
 * from_string (the random ones are in lrandom.c). */
#include "lnd.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Sizes (numbers or a table) then an optional dtype; a fresh tensor. */
static nd_status nd_alloc(nd_err *e, nd_tensor *t, int dtype, int n,
                          const int64_t *size, int zero) {
  return zero ? nd_zeros(e, t, dtype, n, size) : nd_empty(e, t, dtype, n, size);
}

static nd_tensor *make(lua_State *L, const char *fn, int zero, int *dtype) {
  int64_t size[ND_MAX_DIMS];
  int next, n = ndL_sizes(L, 1, fn, size, &next);
  int ty = lua_type(L, next);
  if (ty != LUA_TNONE && ty != LUA_TNIL && ty != LUA_TSTRING)
    ndL_error(L, "%s: argument %d must be a size or a dtype name, got %s", fn,
               next, luaL_typename(L, next));
  if (!lua_isnoneornil(L, next + 1))
    ndL_error(L, "%s: unexpected argument %d (%s) after the dtype", fn,
               next + 1, luaL_typename(L, next + 1));
  *dtype = ndL_dtype(L, next, fn, *dtype);
  nd_tensor *t = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL_AS(L, fn, e, nd_alloc(&e, t, *dtype, n, size, zero));
  ndL_charge(L, t);
  return t;
}

static int l_empty(lua_State *L) {
  int d = ND_FLOAT64;
  make(L, "empty", 0, &d);
  return 1;
}
static int l_zeros(lua_State *L) {
  int d = ND_FLOAT64;
  make(L, "zeros", 1, &d);
  return 1;
}
static int l_ones(lua_State *L) {
  int d = ND_FLOAT64;
  nd_tensor *t = make(L, "ones", 0, &d);
  nd_err e = ndL_err();
  nd_fill(&e, t, 1);
  return 1;
}

static int l_full(lua_State *L) {
  int64_t size[ND_MAX_DIMS];
  int next;
  if (!lua_istable(L, 1))
    return ndL_error(L, "full: sizes must be a table, got %s",
                      luaL_typename(L, 1));
  int n = ndL_sizes(L, 1, "full", size, &next);
  int vt = lua_type(L, 2);
  if (vt != LUA_TNUMBER && vt != LUA_TBOOLEAN)
    return ndL_error(L, "full: value must be a number or boolean, got %s",
                      luaL_typename(L, 2));
  int dtype = ndL_dtype(L, 3, "full", vt == LUA_TBOOLEAN ? ND_BOOL : ND_FLOAT64);
  ndL_check_value(L, 2, dtype, "full");
  nd_tensor *t = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL_AS(L, "full", e, nd_empty(&e, t, dtype, n, size));
  ndL_charge(L, t);
  nd_status st = ND_OK;
  ndL_fill_value(L, 2, t, &e, &st); /* checked: cannot fail */
  return 1;
}

/* ---- nd.tensor(nested table) ---- */
typedef struct {
  int ndim, kinds; /* kinds: bit 1 numbers seen, bit 2 booleans seen */
  int64_t size[ND_MAX_DIMS];
  int dtype; /* the dtype asked for, whose values the first pass checks */
} nest;

static void shape_of(lua_State *L, int idx, nest *s) {
  lua_pushvalue(L, idx);
  while (lua_istable(L, -1)) {
    if (s->ndim == ND_MAX_DIMS)
      ndL_error(L, "tensor: nesting deeper than %d dims", ND_MAX_DIMS);
    int64_t n = (int64_t)lua_objlen(L, -1);
    s->size[s->ndim++] = n;
    if (n == 0) break;
    lua_rawgeti(L, -1, 1);
    lua_remove(L, -2);
  }
  lua_pop(L, 1);
}

static void fill_nested(lua_State *L, int idx, nest *s, int d, int64_t *ix,
                        const nd_tensor *t) {
  int ty = lua_type(L, idx);
  if (d == s->ndim) {
    if (ty == LUA_TTABLE)
      ndL_error(L, "tensor: ragged nesting: a table where a value was "
                 "expected at depth %d", d + 1);
    if (ty != LUA_TNUMBER && ty != LUA_TBOOLEAN)
      ndL_error(L, "tensor: elements must be numbers or booleans, got %s%s%s",
                 luaL_typename(L, idx), ty == LUA_TSTRING ? " " : "",
                 ty == LUA_TSTRING ? lua_tostring(L, idx) : "");
    s->kinds |= ty == LUA_TNUMBER ? 1 : 2;
    if (!t && s->dtype >= 0) ndL_check_value(L, idx, s->dtype, "tensor");
    if (t) ndL_set_elem(L, idx, t, ix, "tensor");
    return;
  }
  if (ty != LUA_TTABLE)
    ndL_error(L, "tensor: ragged nesting: a %s where a table of %lld was "
               "expected at depth %d", luaL_typename(L, idx),
               (long long)s->size[d], d + 1);
  if ((int64_t)lua_objlen(L, idx) != s->size[d])
    ndL_error(L, "tensor: ragged nesting: %lld elements where %lld were "
               "expected at depth %d", (long long)lua_objlen(L, idx),
               (long long)s->size[d], d + 1);
  for (ix[d] = 0; ix[d] < s->size[d]; ix[d]++) {
    lua_rawgeti(L, idx, (int)ix[d] + 1);
    fill_nested(L, lua_gettop(L), s, d + 1, ix, t);
    lua_pop(L, 1);
  }
}

static int l_tensor(lua_State *L) {
  nest s = {0, 0, {0}, -1};
  int64_t ix[ND_MAX_DIMS];
  nd_err e = ndL_err();
  nd_tensor *src = ndL_test(L, 1);
  if (src) { /* a copy of a tensor, optionally converted */
    int dtype = ndL_dtype(L, 2, "tensor", src->dtype);
    nd_tensor *t = ndL_new(L);
    NDL_CALL(L, e, nd_to_dtype(&e, t, src, dtype));
    ndL_charge(L, t);
    return 1;
  }
  int ty = lua_type(L, 1);
  if (ty != LUA_TTABLE && ty != LUA_TNUMBER && ty != LUA_TBOOLEAN)
    return ndL_error(L, "tensor: expected a nested table, number or boolean, "
                      "got %s", luaL_typename(L, 1));
  shape_of(L, 1, &s);
  s.dtype = ndL_dtype(L, 2, "tensor", -1);
  fill_nested(L, 1, &s, 0, ix, NULL); /* validate and learn the kinds */
  if (s.kinds == 3)
    return ndL_error(L, "tensor: mixes numbers and booleans");
  int dtype = ndL_dtype(L, 2, "tensor", s.kinds == 2 ? ND_BOOL : ND_FLOAT64);
  nd_tensor *t = ndL_new(L);
  NDL_CALL_AS(L, "tensor", e, nd_empty(&e, t, dtype, s.ndim, s.size));
  ndL_charge(L, t);
  fill_nested(L, 1, &s, 0, ix, t);
  return 1;
}

/* ---- ranges ---- */
static int integral(lua_State *L, int idx) {
  if (lua_isnoneornil(L, idx)) return 1;
  double v = lua_tonumber(L, idx);
  return v == floor(v);
}

static double num(lua_State *L, int idx, const char *fn, const char *what) {
  if (lua_type(L, idx) != LUA_TNUMBER)
    ndL_error(L, "%s: %s must be a number, got %s", fn, what,
               luaL_typename(L, idx));
  return lua_tonumber(L, idx);
}

static int l_arange(lua_State *L) {
  int nnum = 0;
  while (nnum < 3 && lua_type(L, nnum + 1) == LUA_TNUMBER) nnum++;
  if (nnum == 0)
    return ndL_error(L, "arange: stop must be a number, got %s",
                      luaL_typename(L, 1));
  double start = nnum >= 2 ? lua_tonumber(L, 1) : 0;
  double stop = lua_tonumber(L, nnum >= 2 ? 2 : 1);
  double step = nnum == 3 ? lua_tonumber(L, 3) : 1;
  int ints = integral(L, 1) && integral(L, 2) && integral(L, 3);
  if (nnum < 3 && lua_type(L, nnum + 1) == LUA_TNUMBER) ints = 0;
  int dtype = ndL_dtype(L, nnum + 1, "arange", ints ? ND_INT64 : ND_FLOAT64);
  nd_tensor *t = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_arange(&e, t, dtype, start, stop, step));
  ndL_charge(L, t);
  return 1;
}

static int l_linspace(lua_State *L) {
  double a = num(L, 1, "linspace", "start"), b = num(L, 2, "linspace", "end");
  int64_t n = ndL_int(L, 3, "linspace", "count");
  int dtype = ndL_dtype(L, 4, "linspace", ND_FLOAT64);
  nd_tensor *t = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_linspace(&e, t, dtype, a, b, n));
  ndL_charge(L, t);
  return 1;
}

static int l_eye(lua_State *L) {
  int64_t n = ndL_int(L, 1, "eye", "n");
  int has_m = lua_type(L, 2) == LUA_TNUMBER;
  int64_t m = has_m ? ndL_int(L, 2, "eye", "m") : n;
  int dtype = ndL_dtype(L, has_m ? 3 : 2, "eye", ND_FLOAT64);
  nd_tensor *t = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_eye(&e, t, dtype, n, m));
  ndL_charge(L, t);
  return 1;
}

static int l_from_string(lua_State *L) {
  size_t len;
  if (lua_type(L, 1) != LUA_TSTRING)
    return ndL_error(L, "from_string: bytes must be a string, got %s",
                      luaL_typename(L, 1));
  const char *s = lua_tolstring(L, 1, &len);
  int dtype = ndL_dtype(L, 2, "from_string", -1);
  if (dtype < 0) return ndL_error(L, "from_string: a dtype is required");
  int64_t es = nd_dtype_size(dtype), size[ND_MAX_DIMS], numel = 1;
  int next, n = 1;
  size[0] = (int64_t)len / es;
  int64_t want = (int64_t)len;
  if (!lua_isnoneornil(L, 3)) {
    if (!lua_istable(L, 3))
      return ndL_error(L, "from_string: sizes must be a table, got %s",
                        luaL_typename(L, 3));
    n = ndL_sizes(L, 3, "from_string", size, &next);
    for (int i = 0; i < n; i++)
      if (numel >= 0 && __builtin_mul_overflow(numel, size[i], &numel))
        numel = -1; /* overflow: matches no string length */
  } else {
    numel = size[0];
  }
  if (numel < 0 || __builtin_mul_overflow(numel, es, &want) ||
      want != (int64_t)len) {
    char count[32] = "that many";
    if (numel >= 0) snprintf(count, sizeof count, "%lld", (long long)numel);
    return ndL_error(L, "from_string: %lld bytes do not make %s elements "
                     "of %s (%lld bytes each)", (long long)len, count,
                     nd_dtype_name(dtype), (long long)es);
  }
  nd_tensor *t = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL_AS(L, "from_string", e, nd_empty(&e, t, dtype, n, size));
  ndL_charge(L, t);
  memcpy(nd_data(t), s, len);
  if (dtype == ND_BOOL) /* only 0 and 1 are valid bools */
    for (size_t i = 0; i < len; i++) ((uint8_t *)nd_data(t))[i] = s[i] != 0;
  return 1;
}

void ndL_open_construct(lua_State *L) {
  static const luaL_Reg fns[] = {
      {"tensor", l_tensor}, {"empty", l_empty}, {"zeros", l_zeros},
      {"ones", l_ones}, {"full", l_full}, {"arange", l_arange},
      {"linspace", l_linspace}, {"eye", l_eye},
      {"from_string", l_from_string},
      {NULL, NULL}};
  ndL_register(L, fns);
}
