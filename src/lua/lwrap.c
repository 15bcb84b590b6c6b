/* nd.wrap(ptr, nbytes, dtype, sizes [, strides [, owner [, options]]]): a tensor over
 * foreign memory (lua/wrap.lua turns an FFI pointer into an address; this
 * takes a light userdata or that address). nd trusts nbytes; every view is
 * checked against it (nd_wrap, nd_as_strided).
 *
 * The owner must live as long as any view of the storage, and a storage
 * may outlive the Lua state (a host nd_share-s a header and releases it
 * after lua_close). So the storage never touches Lua: its release callback
 * only marks a small anchor, shared (two atomic references) with this
 * state's table of owners (registry "nd.Owners": anchor -> owner). Marked
 * anchors are swept -- their owners dropped -- at the next nd.wrap and
 * whenever ndL_charge steps the collector (a finalizer cannot do it: one
 * that re-arms itself may outlive the module at lua_close), and all of
 * them when the state closes; the last of the two sides frees the anchor. */
#include "lnd.h"
#include <string.h>

/* options (argument 7): nil or {readonly = boolean}. */
static int readonly_option(lua_State *L) {
  if (lua_isnoneornil(L, 7)) return 0;
  if (!lua_istable(L, 7))
    return ndL_error(L, "wrap: argument 7 must be a table of options (or "
                     "nil), got %s", luaL_typename(L, 7));
  int r = 0;
  lua_pushnil(L);
  while (lua_next(L, 7)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      return ndL_error(L, "wrap: option names are strings, got a %s",
                       luaL_typename(L, -2));
    if (strcmp(lua_tostring(L, -2), "readonly"))
      return ndL_error(L, "wrap: unknown option '%s' (options: readonly)",
                       lua_tostring(L, -2));
    if (!lua_isboolean(L, -1))
      return ndL_error(L, "wrap: option readonly must be a boolean, got %s",
                       luaL_typename(L, -1));
    r = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  return r;
}

/* wrap_raw(ptr_or_address, nbytes, dtype, sizes, strides|nil, owner|nil,
 * options|nil) */
static int l_wrap_raw(lua_State *L) {
  const char *fn = "wrap";
  void *p;
  if (lua_type(L, 1) == LUA_TLIGHTUSERDATA) {
    p = lua_touserdata(L, 1);
  } else if (lua_type(L, 1) == LUA_TNUMBER) {
    p = (void *)(uintptr_t)ndL_int(L, 1, fn, "address");
  } else {
    return ndL_error(L, "wrap: argument 1 must be a pointer (FFI cdata or "
                     "light userdata), got %s", luaL_typename(L, 1));
  }
  int64_t nbytes = ndL_int(L, 2, fn, "nbytes");
  int dtype = ndL_dtype(L, 3, fn, -1);
  if (dtype < 0) return ndL_error(L, "wrap: argument 3 must be a dtype name");
  int64_t size[ND_MAX_DIMS], stride[ND_MAX_DIMS];
  int next;
  if (!lua_istable(L, 4))
    return ndL_error(L, "wrap: argument 4 must be a table of sizes, got %s",
                     luaL_typename(L, 4));
  int n = ndL_sizes(L, 4, fn, size, &next);
  int strided = !lua_isnoneornil(L, 5);
  if (strided) {
    if (!lua_istable(L, 5) || (int)lua_objlen(L, 5) != n)
      return ndL_error(L, "wrap: argument 5 must be a table of %d strides "
                       "(or nil), got %s", n, luaL_typename(L, 5));
    for (int i = 0; i < n; i++) {
      lua_rawgeti(L, 5, i + 1);
      stride[i] = ndL_int(L, -1, fn, "stride");
      lua_pop(L, 1);
    }
  }
  int has_owner = !lua_isnoneornil(L, 6), readonly = readonly_option(L);
  ndL_owners(L);
  int otab = lua_gettop(L);
  ndL_owners_sweep(L, otab, 0);
  nd_tensor *t = ndL_new(L);
  nd_err e = ndL_err();
  ndL_anchor *a = NULL;
  nd_free_fn afree = NULL;
  void *aud = NULL;
  if (has_owner) {
    a = nd_hook_alloc(sizeof *a, &afree, &aud);
    if (!a) return ndL_error(L, "wrap: not enough memory");
    a->refs = 2;
    a->released = 0;
    a->free = afree;
    a->ud = aud;
  }
  if (nd_wrap(&e, t, p, nbytes, dtype, n, size, strided ? stride : NULL,
              a ? ndL_anchor_release : NULL, a)) {
    if (a) afree(a, sizeof *a, aud);
    return ndL_raise(L, &e);
  }
  nd_set_readonly(t, readonly);
  if (a) {
    lua_pushlightuserdata(L, a);
    lua_pushvalue(L, 6);
    lua_rawset(L, otab);
  }
  return 1;
}

void ndL_open_wrap(lua_State *L) {
  static const luaL_Reg fns[] = {{"wrap_raw", l_wrap_raw}, {NULL, NULL}};
  ndL_register(L, fns);
}
