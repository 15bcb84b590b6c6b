/* The public Lua glue for host programs (include/nd_lua.h). */
#include "nd_lua.h"
#include "lnd.h"

void nd_lua_push(lua_State *L, const nd_tensor *t) {
  if (!t || !t->storage)
    luaL_error(L, "nd_lua_push: the tensor is unset");
  luaL_getmetatable(L, NDL_TENSOR);
  int opened = lua_istable(L, -1);
  lua_pop(L, 1);
  if (!opened)
    luaL_error(L, "nd_lua_push: nd is not loaded in this Lua state "
               "(call luaopen_nd or require \"nd\" first)");
  nd_share(ndL_new(L), t);
}

nd_tensor *nd_lua_check(lua_State *L, int idx) {
  if (idx < 0 && idx > LUA_REGISTRYINDEX) idx = lua_gettop(L) + idx + 1;
  nd_tensor *t = ndL_check(L, idx, "nd_lua_check");
  ndL_arm(L, idx); /* the host may nd_share it */
  return t;
}
