/* Reference: memcpy of n bytes between two fresh, touched buffers.
 * ref_copy.memcpy(nbytes, reps) -> seconds per copy (minimum of reps). */
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ref_time.h"


static int l_memcpy(lua_State *L) {
  size_t n = (size_t)luaL_checknumber(L, 1);
  int reps = (int)luaL_optinteger(L, 2, 5);
  char *a = NULL, *b = NULL;
  if (posix_memalign((void **)&a, 1 << 21, n) || posix_memalign((void **)&b, 1 << 21, n))
    return luaL_error(L, "memcpy: out of memory");
  memset(a, 1, n);
  memset(b, 2, n);
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    double t0 = ref_now();
    memcpy(b, a, n);
    double t = ref_now() - t0;
    if (t < best) best = t;
  }
  volatile char sink = b[n / 2];
  (void)sink;
  free(a);
  free(b);
  lua_pushnumber(L, best);
  return 1;
}

int luaopen_ref_copy(lua_State *L) {
  lua_newtable(L);
  lua_pushcfunction(L, l_memcpy);
  lua_setfield(L, -2, "memcpy");
  return 1;
}
