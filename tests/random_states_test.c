/* Two lua_States, each with nd loaded: each has its own default generator.
 * Seeding or drawing in one never changes the other's numbers, also when
 * both draw at the same time on two threads. Prints "N passed, N failed". */
#include "nd_lua.h"
#include <lauxlib.h>
#include <lualib.h>
#include <pthread.h>
#include <stdio.h>
#include "check.h"

static lua_State *open_state(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  luaopen_nd(L);
  lua_setglobal(L, "nd");
  return L;
}

/* Runs a chunk that returns a number; NaN on error (reported). */
static double run(lua_State *L, const char *code) {
  if (luaL_loadstring(L, code) || lua_pcall(L, 0, 1, 0)) {
    fprintf(stderr, "lua error: %s\n", lua_tostring(L, -1));
    lua_pop(L, 1);
    return 0.0 / 0.0;
  }
  double v = lua_tonumber(L, -1);
  lua_pop(L, 1);
  return v;
}

static const char *draws =
    "local s = 0\n"
    "for i = 1, 200 do s = s + nd.randn(1000):sum() + nd.rand(10):sum() end\n"
    "return s";

static void *thread_main(void *arg) {
  lua_State *L = arg;
  *(double *)lua_touserdata(L, 1) = run(L, draws);
  return NULL;
}

int main(void) {
  lua_State *a = open_state(), *b = open_state(), *c = open_state();
  /* Fresh states start alike: as after nd.manual_seed(0). */
  CHECK(run(a, "return nd.rand(1)[1]") == run(b, "return nd.rand(1)[1]"));
  CHECK(run(c, "return nd.rand(1)[1]") ==
        run(c, "nd.manual_seed(0); return nd.rand(1)[1]"));
  /* Interleaved on one thread: b's seeding and drawing leave a's stream
   * where it was. */
  run(a, "nd.manual_seed(5)");
  double a1 = run(a, "return nd.randn(3):sum()");
  run(b, "nd.manual_seed(5); nd.rand(100)");
  double a2 = run(a, "return nd.randn(3):sum()");
  run(c, "nd.manual_seed(5)");
  CHECK(a1 == run(c, "return nd.randn(3):sum()"));
  CHECK(a2 == run(c, "return nd.randn(3):sum()"));
  /* Two threads drawing at once, each from its own state, get exactly
   * what one state gets alone. */
  run(c, "nd.manual_seed(7)");
  double want = run(c, draws), got[2];
  lua_State *s[2] = {a, b};
  pthread_t th[2];
  for (int i = 0; i < 2; i++) {
    run(s[i], "nd.manual_seed(7)");
    lua_settop(s[i], 0);
    lua_pushlightuserdata(s[i], &got[i]);
    CHECK(pthread_create(&th[i], NULL, thread_main, s[i]) == 0);
  }
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  CHECK(got[0] == want && got[1] == want);
  lua_close(a);
  lua_close(b);
  lua_close(c);
  return check_report();
}
