/* The smallest Lua host against an installed nd, built only through
 * pkg-config (`cc pkgconfig_host.c $(pkg-config --cflags --libs nd-luajit)`);
 * also compiled as C++ with the headers in either order (ND_HOST_LUA_FIRST).
 * Opens nd with luaopen_nd, hands a C tensor to Lua, takes one back.
 * Prints "N passed, N failed". */
#ifdef ND_HOST_LUA_FIRST
#include "nd_lua.h"
#include "nd.h"
#else
#include "nd.h"
#include "nd_lua.h"
#endif
#ifdef __cplusplus
extern "C" { /* the host's own Lua headers, as lua.hpp does */
#endif
#include <lauxlib.h>
#include <lualib.h>
#ifdef __cplusplus
}
#endif
#include <stdio.h>
#include <string.h>
#include "check.h"

int main(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "preload");
  lua_pushcfunction(L, luaopen_nd);
  lua_setfield(L, -2, "nd");
  lua_pop(L, 2);

  CHECK(luaL_dostring(L, "require 'nd'") == 0); /* before nd_lua_push */
  nd_err e; /* zeroed: base and fn are inputs (C and C++ alike) */
  memset(&e, 0, sizeof e);
  nd_tensor t = ND_UNSET;
  int64_t sz[2] = {2, 3};
  CHECK(nd_zeros(&e, &t, ND_FLOAT64, 2, sz) == ND_OK);
  CHECK(luaL_dostring(L, "return function(t) local nd = require 'nd'\n"
                         "t:copy_(nd.arange(6):view(2, 3)) return t:sum(), t:t() end") == 0);
  nd_lua_push(L, &t);
  CHECK(lua_pcall(L, 1, 2, 0) == 0);
  CHECK(lua_tonumber(L, -2) == 15);
  nd_tensor *u = nd_lua_check(L, -1);
  CHECK(u->size[0] == 3 && u->size[1] == 2 && u->storage == t.storage);
  CHECK(((double *)nd_data(&t))[5] == 5);
  lua_close(L);
  nd_release(&t);
  return check_report();
}
