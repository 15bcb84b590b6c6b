/* A host program embedding Lua and nd (include/nd_lua.h): opens the module,
 * hands a C tensor (wrapped host memory) to Lua, runs a script on it, and
 * takes a tensor back. Prints "N passed, N failed". */
#include "nd_lua.h"
#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <string.h>
#include "check.h"

static int releases;
static void on_release(void *data, void *ctx) { (void)data; (void)ctx; releases++; }

/* Protected calls: each glue function raises a Lua error on misuse. */
static int push_it(lua_State *L) {
  nd_lua_push(L, lua_touserdata(L, 1));
  return 1;
}
static int check_top(lua_State *L) {
  lua_pushnumber(L, 5);
  nd_lua_check(L, -1);
  return 0;
}
static const char *fails(lua_State *L, lua_CFunction f, void *ud) {
  static char msg[256];
  lua_pushcfunction(L, f);
  lua_pushlightuserdata(L, ud);
  if (lua_pcall(L, 1, 0, 0) == 0) return NULL;
  snprintf(msg, sizeof msg, "%s", lua_tostring(L, -1));
  lua_pop(L, 1);
  return msg;
}

int main(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  double host[6] = {1, 2, 3, 4, 5, 6};
  nd_err e;
  memset(&e, 0, sizeof e);
  nd_tensor t = ND_UNSET;
  int64_t sz[2] = {2, 3};
  CHECK(nd_wrap(&e, &t, host, sizeof host, ND_FLOAT64, 2, sz, NULL,
                on_release, NULL) == ND_OK);
  /* Before the module is opened, pushing is refused. */
  const char *m = fails(L, push_it, &t);
  CHECK(m && strstr(m, "nd_lua_push") && strstr(m, "luaopen_nd"));

  CHECK(luaopen_nd(L) == 1);
  lua_setglobal(L, "nd");
  nd_lua_push(L, &t);
  lua_setglobal(L, "x");
  nd_release(&t); /* Lua's tensor keeps the storage */
  CHECK(releases == 0);
  const char *script =
      "assert(x:dim() == 2 and x:get(2, 3) == 6)\n"
      "x:set(1, 1, 10)\n"          /* writes reach host memory */
      "y = x:t():contiguous()\n"
      "return y";
  CHECK(luaL_loadstring(L, script) == 0);
  CHECK(lua_pcall(L, 0, 1, 0) == 0);
  CHECK(host[0] == 10);
  nd_tensor *y = nd_lua_check(L, -1);
  CHECK(y && y->ndim == 2 && y->size[0] == 3);
  nd_tensor mine = ND_UNSET;
  nd_share(&mine, y);
  lua_pop(L, 1);
  m = fails(L, check_top, NULL);
  CHECK(m && strstr(m, "nd_lua_check") && strstr(m, "number"));
  nd_tensor unset = ND_UNSET;
  m = fails(L, push_it, &unset);
  CHECK(m && strstr(m, "unset"));

  /* A small result (under LuaJIT, a cdata holding its elements, which the
   * collector frees with no finalizer) kept by nd_share after nd_lua_check
   * must stay while shared: through collections, reuse of its memory, and
   * lua_close (read below). */
  CHECK(luaL_dostring(L, "return nd.ones(2, 2) * 3") == 0);
  nd_tensor *s = nd_lua_check(L, -1);
  nd_tensor kept = ND_UNSET;
  nd_share(&kept, s);
  lua_pop(L, 1);
  CHECK(luaL_dostring(L, "for i = 1, 3 do collectgarbage()\n"
                         "  for j = 1, 500 do nd.full({2, 2}, 9):sum() end end") == 0);
  int64_t ij[2] = {1, 1};
  double sv = 0;
  CHECK(nd_get(&e, &kept, ij, &sv) == ND_OK && sv == 3);
  lua_close(L); /* collects x: the wrapped storage is released */
  CHECK(releases == 1);
  double v = 0;
  int64_t ix[2] = {0, 0};
  CHECK(nd_get(&e, &mine, ix, &v) == ND_OK && v == 10);
  nd_release(&mine);
  sv = 0;
  CHECK(nd_get(&e, &kept, ij, &sv) == ND_OK && sv == 3);
  nd_release(&kept);
  return check_report();
}
