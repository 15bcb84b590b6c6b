/* require "nd.testing" before require "nd": Lua's all-in-one loader finds
 * luaopen_nd_testing in nd.so; it loads nd, whose Lua layer leaves the
 * testing module in package.preload (lua/nd.lua, lua/testing.lua). */
#include "lnd.h"

ND_EXPORT int luaopen_nd_testing(lua_State *L);
int luaopen_nd_testing(lua_State *L) {
  lua_getglobal(L, "require");
  lua_pushliteral(L, "nd");
  lua_call(L, 1, 0);
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "preload");
  lua_getfield(L, -1, "nd.testing");
  if (lua_isnil(L, -1))
    return ndL_error(L, "nd.testing: nd is loaded but did not register nd.testing");
  lua_pushliteral(L, "nd.testing");
  lua_call(L, 1, 1);
  return 1;
}
