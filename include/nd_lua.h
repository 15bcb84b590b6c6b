/*
 * nd_lua.h — Lua glue for hosts that embed nd: link the glue for your Lua,
 *     cc host.c $(pkg-config --cflags --libs nd-luajit)     (or nd-lua5.4, ...)
 * (libnd_<lua> on top of libnd), or the objects of src/core and src/lua.
 *
 *     luaL_requiref(L, "nd", luaopen_nd, 0);   // or package.preload
 *     nd_tensor t = ND_UNSET;
 *     nd_zeros(&e, &t, ND_FLOAT32, 2, sz);
 *     nd_lua_push(L, &t);        // Lua gets a tensor sharing t's storage
 *     nd_release(&t);            // the Lua tensor keeps the storage alive
 *     ...
 *     nd_tensor *u = nd_lua_check(L, -1);   // borrowed from the userdata
 *     nd_tensor mine = ND_UNSET;
 *     nd_share(&mine, u);        // keep it beyond the Lua value's life
 */
#ifndef ND_LUA_H
#define ND_LUA_H

#include "nd.h"

/* lua.h inside extern "C": LuaJIT's and PUC Lua's headers declare C
 * functions without it, so a C++ host would otherwise look for C++ names. */
#ifdef __cplusplus
extern "C" {
#endif
#include <lua.h>
#if defined(__GNUC__)
#pragma GCC visibility push(default) /* the glue's exports (nd.h) */
#endif

/* Opens the module: returns 1 with the nd table on the stack. */
int luaopen_nd(lua_State *L);

/* Pushes a Lua tensor that is another header on t's storage (retained;
 * the caller still owns t). luaopen_nd must have run in this state; a
 * Lua error is raised otherwise, or when t is unset. */
void nd_lua_push(lua_State *L, const nd_tensor *t);

/* The tensor at idx, or a Lua error naming what was found. The header is
 * owned by the Lua value: valid while that value is reachable; nd_share()
 * it to keep it longer (also past lua_close). A small tensor made by
 * LuaJIT's FFI paths has its elements moved to the allocator's memory
 * first, so take nd_data() after this call. */
nd_tensor *nd_lua_check(lua_State *L, int idx);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif
