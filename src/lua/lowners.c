/* The owners of wrapped memory (nd.wrap's owner argument; the design is in
 * lwrap.c's comment): the anchors a storage shares with this state's table
 * of owners, and their sweep. Lua API only: lobject.c (ndL_charge, after it
 * steps the collector) sweeps through here without calling an area file. */
#include "lnd.h"

static void anchor_drop(ndL_anchor *a) {
  if (__atomic_sub_fetch(&a->refs, 1, __ATOMIC_ACQ_REL) == 0)
    a->free(a, sizeof *a, a->ud);
}

void ndL_anchor_release(void *data, void *ctx) {
  (void)data;
  ndL_anchor *a = ctx;
  __atomic_store_n(&a->released, 1, __ATOMIC_RELEASE);
  anchor_drop(a);
}

void ndL_owners_sweep(lua_State *L, int idx, int all) {
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    ndL_anchor *a = lua_touserdata(L, -1);
    if (all || __atomic_load_n(&a->released, __ATOMIC_ACQUIRE)) {
      lua_pushvalue(L, -1);
      lua_pushnil(L);
      lua_rawset(L, idx); /* clearing a present field during next is fine */
      anchor_drop(a);
    }
  }
}

/* The state closes: its side of every anchor goes. */
static int l_close_owners(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, "nd.Owners");
  if (lua_istable(L, -1)) ndL_owners_sweep(L, lua_gettop(L), 1);
  lua_pushnil(L);
  lua_setfield(L, LUA_REGISTRYINDEX, "nd.Owners");
  return 0;
}

void ndL_owners(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, "nd.Owners");
  if (lua_istable(L, -1)) return;
  lua_pop(L, 1);
  lua_newtable(L);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, "nd.Owners");
  /* A userdata kept in the registry: its __gc runs when the state closes. */
  lua_newuserdata(L, 1);
  lua_newtable(L);
  lua_pushcfunction(L, l_close_owners);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, "nd.OwnersSentinel");
}

void ndL_sweep_owners(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, "nd.Owners");
  if (lua_istable(L, -1)) ndL_owners_sweep(L, lua_gettop(L), 0);
  lua_pop(L, 1);
}
