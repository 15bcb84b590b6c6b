/* What nd asks of the host: nd.save / nd.load (NumPy .npy files) and
 * nd.clock. */
#include "lnd.h"
#include <string.h>
#include <time.h>

static const char *path_arg(lua_State *L, const char *fn) {
  if (lua_type(L, 1) != LUA_TSTRING)
    ndL_error(L, "%s: path must be a string, got %s", fn, luaL_typename(L, 1));
  return lua_tostring(L, 1);
}

static int l_save(lua_State *L) {
  const char *path = path_arg(L, "save");
  nd_tensor *t = ndL_check(L, 2, "save");
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_save_npy(&e, path, t));
  return 0;
}

/* load's options: nil or {mmap = "r" | "r+" | "c"}; NULL: no mapping. */
static const char *mmap_option(lua_State *L) {
  if (lua_isnoneornil(L, 2)) return NULL;
  if (!lua_istable(L, 2))
    ndL_error(L, "load: argument 2 must be a table of options (or nil), "
              "got %s", luaL_typename(L, 2));
  const char *mode = NULL;
  lua_pushnil(L);
  while (lua_next(L, 2)) {
    if (lua_type(L, -2) != LUA_TSTRING || strcmp(lua_tostring(L, -2), "mmap"))
      ndL_error(L, "load: unknown option %s (options: mmap)",
                lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2)
                                               : luaL_typename(L, -2));
    if (lua_type(L, -1) != LUA_TSTRING)
      ndL_error(L, "load: option mmap must be \"r\", \"r+\" or \"c\", "
                "got %s", luaL_typename(L, -1));
    mode = lua_tostring(L, -1); /* the table keeps it */
    lua_pop(L, 1);
  }
  return mode;
}

static int l_load(lua_State *L) {
  const char *path = path_arg(L, "load");
  const char *mode = mmap_option(L);
  nd_tensor *t = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, mode ? nd_load_npy_mapped(&e, t, path, mode)
                      : nd_load_npy(&e, t, path));
  ndL_charge(L, t);
  return 1;
}

/* nd.clock() -> seconds of a monotonic wall clock (os.clock is CPU time,
 * which a sleeping or waiting program does not spend). */
static int l_clock(lua_State *L) {
  struct timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
    return ndL_error(L, "clock: the monotonic clock is not available");
  lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec * 1e-9);
  return 1;
}

void ndL_open_io(lua_State *L) {
  static const luaL_Reg fns[] = {{"save", l_save}, {"load", l_load},
                                 {"clock", l_clock}, {NULL, NULL}};
  ndL_register(L, fns);
}
