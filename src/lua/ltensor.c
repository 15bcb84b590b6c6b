/* Introspection and element access: size, stride, get/set, totable ... */
#include "lnd.h"
#include <string.h>

static int push_dims(lua_State *L, const nd_tensor *t, const int64_t *v,
                     const char *fn) {
  if (!lua_isnoneornil(L, 2)) {
    ndL_pushint(L, v[ndL_dim(L, 2, t->ndim, fn)]);
    return 1;
  }
  lua_createtable(L, t->ndim, 0);
  for (int i = 0; i < t->ndim; i++) {
    ndL_pushint(L, v[i]);
    lua_rawseti(L, -2, i + 1);
  }
  /* Prints as {24, 12, 4, 1}: the Lua layer's size-table metatable. */
  lua_getfield(L, LUA_REGISTRYINDEX, "nd.SizeTable");
  lua_setmetatable(L, -2);
  return 1;
}

static int l_size(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "size");
  return push_dims(L, t, t->size, "size");
}
static int l_stride(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "stride");
  return push_dims(L, t, t->stride, "stride");
}
static int l_len(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "__len");
  if (t->ndim == 0) return ndL_error(L, "__len: a 0-d tensor has no length");
  ndL_pushint(L, t->size[0]);
  return 1;
}

#define GETTER(name, expr)                                                  \
  static int l_##name(lua_State *L) {                                       \
    nd_tensor *t = ndL_check(L, 1, #name);                                  \
    ndL_pushint(L, (int64_t)(expr));                                       \
    return 1;                                                               \
  }
GETTER(storage_offset, t->offset)
GETTER(dim, t->ndim)
GETTER(numel, nd_numel(t))
GETTER(element_size, nd_dtype_size(t->dtype))
GETTER(nbytes, nd_numel(t) * nd_dtype_size(t->dtype))
/* An address to keep: a small tensor's elements move first (lobject.c). */
static int l_data_ptr(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "data_ptr");
  ndL_arm(L, 1);
  ndL_pushint(L, (int64_t)(uintptr_t)nd_data(t));
  return 1;
}

static int l_dtype(lua_State *L) {
  lua_pushstring(L, nd_dtype_name(ndL_check(L, 1, "dtype")->dtype));
  return 1;
}
static int l_is_contiguous(lua_State *L) {
  lua_pushboolean(L, nd_is_contiguous(ndL_check(L, 1, "is_contiguous")));
  return 1;
}
static int l_is_readonly(lua_State *L) {
  lua_pushboolean(L, nd_is_readonly(ndL_check(L, 1, "is_readonly")));
  return 1;
}
static int l_same_storage(lua_State *L) {
  lua_pushboolean(L, nd_same_storage(ndL_check(L, 1, "same_storage"),
                                     ndL_check(L, 2, "same_storage")));
  return 1;
}
static int l_may_overlap(lua_State *L) {
  lua_pushboolean(L, nd_may_overlap(ndL_check(L, 1, "may_overlap"),
                                    ndL_check(L, 2, "may_overlap")));
  return 1;
}

/* The whole storage as a 1-D tensor from its first element. */
static int l_storage(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "storage");
  nd_tensor *r = ndL_new_view(L, 1); /* a view: borrows, as all views */
  nd_err e = ndL_err();
  int64_t n = t->storage->nbytes / nd_dtype_size(t->dtype), one = 1;
  NDL_CALL(L, e, nd_as_strided(&e, r, t, 1, &n, &one, 0));
  ndL_borrow(r);
  return 1;
}

/* Indices from idx on: exactly t->ndim integers, 1-based or negative.
 * `value` is 1 when a value follows them (set). */
static void indices(lua_State *L, const nd_tensor *t, int idx, int64_t *ix,
                    const char *fn, int value) {
  int given = lua_gettop(L) - idx + 1 - value;
  if (given != t->ndim) {
    char b[ND_SIZES_BUF];
    ndL_error(L, "%s: %d %s given for a tensor of size %s (%d dims)%s", fn,
               given < 0 ? 0 : given, given == 1 ? "index" : "indices",
               nd_fmt_sizes(b, sizeof b, t->ndim, t->size), t->ndim,
               value ? "; set takes the indices, then the value" : "");
  }
  for (int i = 0; i < t->ndim; i++) {
    int64_t p = ndL_int(L, idx + i, fn, "index"), n = t->size[i];
    if ((ix[i] = ndL_pos(p, n)) < 0)
      ndL_error(L, "%s: index %lld out of range for dim %d of size %lld "
                 "(valid: 1..%lld or -%lld..-1)", fn, (long long)p, i + 1,
                 (long long)n, (long long)n, (long long)n);
  }
}

static int l_get(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "get");
  int64_t ix[ND_MAX_DIMS];
  indices(L, t, 2, ix, "get", 0);
  ndL_push_elem(L, t, ix);
  return 1;
}

static int l_set(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "set");
  int64_t ix[ND_MAX_DIMS];
  nd_err e = ndL_err();
  indices(L, t, 2, ix, "set", 1);
  if (nd_check_writable(&e, "set", t)) ndL_raise(L, &e);
  ndL_set_elem(L, lua_gettop(L), t, ix, "set");
  lua_settop(L, 1);
  return 1;
}

static int l_item(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "item");
  int64_t ix[ND_MAX_DIMS] = {0};
  if (nd_numel(t) != 1)
    return ndL_error(L, "item: tensor has %lld elements, not 1",
                      (long long)nd_numel(t));
  ndL_push_elem(L, t, ix);
  return 1;
}

static void totable(lua_State *L, const nd_tensor *t, int d, int64_t *ix) {
  if (d == t->ndim) {
    ndL_push_elem(L, t, ix);
    return;
  }
  lua_createtable(L, (int)t->size[d], 0);
  for (ix[d] = 0; ix[d] < t->size[d]; ix[d]++) {
    totable(L, t, d + 1, ix);
    lua_rawseti(L, -2, (int)ix[d] + 1);
  }
}
static int l_totable(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "totable");
  int64_t ix[ND_MAX_DIMS] = {0};
  if (nd_numel(t) > 1 << 27)
    return ndL_error(L, "totable: %lld elements are too many for a table",
                      (long long)nd_numel(t));
  totable(L, t, 0, ix);
  return 1;
}

static int l_fill_(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "fill_");
  nd_err e = ndL_err();
  nd_status st;
  if (lua_isnoneornil(L, 2))
    return ndL_error(L, "fill_: value must be a number, boolean or 0-d "
                      "tensor, got %s", luaL_typename(L, 2));
  if (!ndL_fill_value(L, 2, t, &e, &st)) {
    nd_tensor *v = ndL_test(L, 2);
    if (v && v->ndim != 0)
      return ndL_error(L, "fill_: value must be a number, boolean or 0-d "
                        "tensor, got a %d-d tensor", v->ndim);
    if (!v)
      return ndL_error(L, "fill_: value must be a number, boolean or 0-d "
                        "tensor, got %s", luaL_typename(L, 2));
    st = nd_check_writable(&e, "fill_", t) ? e.code : nd_copy(&e, t, v);
  }
  if (st) ndL_raise(L, &e);
  lua_settop(L, 1);
  return 1;
}

static int l_zero_(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "zero_");
  nd_err e = ndL_err();
  if (nd_fill_i64(&e, t, 0)) ndL_raise(L, &e);
  lua_settop(L, 1);
  return 1;
}

/* Raw bytes of the elements in row-major order. */
static int l_to_string(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "to_string");
  const nd_tensor *c = t;
  if (!nd_is_contiguous(t)) { /* a copy; never a second owner of t's storage */
    nd_tensor *r = ndL_new(L);
    nd_err e = ndL_err();
    NDL_CALL_AS(L, "to_string", e, nd_contiguous(&e, r, t));
    c = r;
  }
  lua_pushlstring(L, nd_data(c), (size_t)(nd_numel(c) * nd_dtype_size(c->dtype)));
  return 1;
}

/* What nd.layout (lua/layout.lua) prints, from the core's rules: {lo =,
 * hi = (nd_span), rowmajor = {...} (nd_contiguous_strides), last = (the
 * last element's storage cell; nil when empty), cells = {...} (every
 * element's cell, row-major: only when the storage has at most max
 * elements and t has 1 to 2^16)}. */
static int l_layout_facts(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "layout");
  int64_t max = (int64_t)luaL_checknumber(L, 2), lo, hi, n, rm[ND_MAX_DIMS];
  nd_err e = ndL_err();
  NDL_CALL_AS(L, "layout", e, nd_contiguous_strides(&e, t->ndim, t->size, rm, &n));
  nd_span(t, &lo, &hi);
  lua_createtable(L, 0, 5);
  ndL_pushint(L, lo);
  lua_setfield(L, -2, "lo");
  ndL_pushint(L, hi);
  lua_setfield(L, -2, "hi");
  lua_createtable(L, t->ndim, 0);
  for (int i = 0; i < t->ndim; i++) {
    ndL_pushint(L, rm[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "rowmajor");
  if (n == 0) return 1;
  int64_t idx[ND_MAX_DIMS] = {0}, off = t->offset, last = t->offset;
  for (int i = 0; i < t->ndim; i++) last += (t->size[i] - 1) * t->stride[i];
  ndL_pushint(L, last);
  lua_setfield(L, -2, "last");
  if (t->storage->nbytes / nd_dtype_size(t->dtype) > max || n > 1 << 16)
    return 1;
  lua_createtable(L, (int)n, 0);
  for (int64_t k = 1; k <= n; k++) { /* an odometer over idx, off its cell */
    ndL_pushint(L, off);
    lua_rawseti(L, -2, (int)k);
    for (int d = t->ndim - 1; d >= 0; d--) {
      off += t->stride[d];
      if (++idx[d] < t->size[d]) break;
      off -= idx[d] * t->stride[d];
      idx[d] = 0;
    }
  }
  lua_setfield(L, -2, "cells");
  return 1;
}

/* Address of a header, for the LuaJIT FFI layer. */
static int l_header(lua_State *L) {
  lua_pushlightuserdata(L, ndL_check(L, 1, "header"));
  return 1;
}

void ndL_open_tensor(lua_State *L) {
  static const luaL_Reg fns[] = {
      {"size", l_size}, {"stride", l_stride}, {"__len", l_len},
      {"storage_offset", l_storage_offset}, {"dim", l_dim},
      {"numel", l_numel}, {"element_size", l_element_size},
      {"nbytes", l_nbytes}, {"data_ptr", l_data_ptr}, {"dtype", l_dtype},
      {"is_contiguous", l_is_contiguous}, {"is_readonly", l_is_readonly},
      {"same_storage", l_same_storage},
      {"may_overlap", l_may_overlap}, {"storage", l_storage}, {"get", l_get},
      {"set", l_set}, {"item", l_item}, {"totable", l_totable},
      {"fill_", l_fill_}, {"zero_", l_zero_}, {"to_string", l_to_string},
      {"header", l_header}, {"layout_facts", l_layout_facts}, {NULL, NULL}};
  ndL_register(L, fns);
}
