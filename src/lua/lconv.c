/* Convolution (src/core/conv/conv*.c): conv1d, conv2d, conv3d and
 * conv_plan. The options table becomes an nd_conv_options here; every
 * rule about the values is the core's. */
#include "lnd.h"
#include <string.h>

/* options at idx (none, nil or a table) into o; the bias tensor or NULL. */
static const nd_tensor *options(lua_State *L, int idx, const char *fn,
                                int nsp, nd_conv_options *o) {
  static const char *const keys[] = {"bias", "stride", "padding",
                                     "dilation", "groups", NULL};
  *o = (nd_conv_options)ND_CONV_OPTIONS_INIT;
  if (lua_isnoneornil(L, idx)) return NULL;
  if (!lua_istable(L, idx))
    ndL_error(L, "%s: options must be a table {bias, stride, padding, "
              "dilation, groups}, got %s", fn, luaL_typename(L, idx));
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    int k = 0;
    if (lua_type(L, -2) == LUA_TSTRING)
      while (keys[k] && strcmp(keys[k], lua_tostring(L, -2))) k++;
    if (lua_type(L, -2) != LUA_TSTRING || !keys[k])
      ndL_error(L, "%s: unknown option %s%s%s (options are bias, stride, "
                "padding, dilation, groups)", fn,
                lua_type(L, -2) == LUA_TSTRING ? "\"" : "",
                lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2)
                                                : luaL_typename(L, -2),
                lua_type(L, -2) == LUA_TSTRING ? "\"" : "");
    lua_pop(L, 1);
  }
  const nd_tensor *bias = NULL;
  lua_getfield(L, idx, "bias");
  if (!lua_isnil(L, -1) && !(bias = ndL_test(L, -1)))
    ndL_error(L, "%s: bias must be a tensor, got %s", fn,
              luaL_typename(L, -1));
  lua_pop(L, 1); /* the options table keeps it alive */
  lua_getfield(L, idx, "stride");
  if (!lua_isnil(L, -1)) ndL_per_dim(L, lua_gettop(L), fn, "stride", nsp, 0, o->stride);
  lua_pop(L, 1);
  lua_getfield(L, idx, "dilation");
  if (!lua_isnil(L, -1))
    ndL_per_dim(L, lua_gettop(L), fn, "dilation", nsp, 0, o->dilation);
  lua_pop(L, 1);
  lua_getfield(L, idx, "groups");
  o->groups = ndL_optint(L, -1, fn, "groups", 1);
  lua_pop(L, 1);
  lua_getfield(L, idx, "padding");
  if (lua_type(L, -1) == LUA_TSTRING) {
    const char *m = lua_tostring(L, -1);
    if (!strcmp(m, "same")) o->padding_mode = ND_CONV_PAD_SAME;
    else if (!strcmp(m, "valid")) o->padding_mode = ND_CONV_PAD_VALID;
    else
      ndL_error(L, "%s: padding must be a number, a table of %d numbers, "
                "\"same\" or \"valid\", got \"%s\"", fn, nsp, m);
  } else if (!lua_isnil(L, -1)) {
    ndL_per_dim(L, lua_gettop(L), fn, "padding", nsp, 0, o->padding);
  }
  lua_pop(L, 1);
  return bias;
}

/* conv<n>d(input, weight [, options]) */
static int conv(lua_State *L, int nsp, const char *fn) {
  nd_tensor *x = ndL_check(L, 1, fn), *w = ndL_check(L, 2, fn);
  nd_conv_options o;
  const nd_tensor *bias = options(L, 3, fn, nsp, &o);
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_conv(&e, r, nsp, x, w, bias, &o));
  ndL_charge(L, r);
  return 1;
}
static int l_conv1d(lua_State *L) { return conv(L, 1, "conv1d"); }
static int l_conv2d(lua_State *L) { return conv(L, 2, "conv2d"); }
static int l_conv3d(lua_State *L) { return conv(L, 3, "conv3d"); }

static void push_ints(lua_State *L, int n, const int64_t *v) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    ndL_pushint(L, v[i]);
    lua_rawseti(L, -2, i + 1);
  }
}

/* conv_plan(input, weight [, options]) -> what conv<n>d (n from the
 * weight's rank) would do, nothing computed. */
static int l_conv_plan(lua_State *L) {
  const char *fn = "conv_plan";
  static const char *const strategies[] = {"gemm", "im2col", "direct"};
  static const char *const what[] = {"input", "weight", "bias", "tile",
                                     "output"};
  nd_tensor *x = ndL_check(L, 1, fn), *w = ndL_check(L, 2, fn);
  int nsp = w->ndim - 2;
  if (nsp < 1 || nsp > 3)
    return ndL_error(L, "%s: weight must be 3-D to 5-D (out_channels, "
                     "in_channels / groups, kernel...), got %d-D", fn,
                     w->ndim);
  nd_conv_options o;
  const nd_tensor *bias = options(L, 3, fn, nsp, &o);
  nd_conv_path p;
  nd_err e = ndL_err();
  if (nd_conv_plan(&e, &p, nsp, x, w, bias, &o)) return ndL_raise(L, &e);
  lua_createtable(L, 0, 16);
  ndL_setstr(L, "strategy", strategies[p.strategy]);
  ndL_setstr(L, "why", p.why);
  ndL_setstr(L, "dtype", nd_dtype_name(p.dtype));
  /* float16, bfloat16: what it is computed in (as matmul_plan's) */
  if (p.compute_dtype != p.dtype)
    ndL_setstr(L, "compute_dtype", nd_dtype_name(p.compute_dtype));
  push_ints(L, p.ndim, p.size);
  lua_setfield(L, -2, "size");
  push_ints(L, nsp, p.pad_lo);
  lua_setfield(L, -2, "padding");
  if (p.strategy != ND_CONV_GEMM) {
    int right = 0;
    for (int d = 0; d < nsp; d++) right |= p.pad_hi[d] != p.pad_lo[d];
    if (right) {
      push_ints(L, nsp, p.pad_hi);
      lua_setfield(L, -2, "padding_right");
    }
  }
  if (p.strategy == ND_CONV_IM2COL) {
    lua_createtable(L, 0, 3);
    ndL_setint(L, "positions", p.tile);
    ndL_setint(L, "rows", p.tile_rows);
    ndL_setint(L, "bytes", p.tile_bytes);
    lua_setfield(L, -2, "tile");
  }
  int ncalls = p.strategy == ND_CONV_DIRECT || p.calls == 0 ? 0
               : p.strategy == ND_CONV_IM2COL && p.last.n != p.call.n ? 2 : 1;
  lua_createtable(L, ncalls, 0);
  for (int i = 0; i < ncalls; i++) {
    ndL_push_blas_plan(L, i ? &p.last : &p.call);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "calls");
  ndL_setint(L, "blas_calls", p.calls);
  lua_createtable(L, p.ncopies, 0);
  for (int i = 0; i < p.ncopies; i++) {
    lua_createtable(L, 0, 3);
    ndL_setstr(L, "operand", what[p.copy_what[i]]);
    ndL_setstr(L, "why", p.copy_why[i]);
    ndL_setint(L, "bytes", p.copy_bytes[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "copies");
  ndL_setint(L, "bytes_copied", p.bytes_copied);
  ndL_setint(L, "bytes", p.bytes);
  ndL_setint(L, "allocations", p.allocations);
  return 1;
}

void ndL_open_conv(lua_State *L) {
  static const luaL_Reg fns[] = {
      {"conv1d", l_conv1d}, {"conv2d", l_conv2d}, {"conv3d", l_conv3d},
      {"conv_plan", l_conv_plan}, {NULL, NULL}};
  ndL_register(L, fns);
}
