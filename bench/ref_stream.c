/* Reference: a STREAM-style add c[i] = a[i] + b[i] over n floats, in C,
 * on fresh touched buffers, split over `threads` pthreads like nd's pool.
 * ref_stream.add(n, reps [, threads]) -> seconds per add (median of reps). */
#include <lauxlib.h>
#include <lua.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include "ref_time.h"


typedef struct { float *a, *b, *c; size_t lo, hi; } part;

__attribute__((optimize("O3"))) static void *add_part(void *arg) {
  part *p = arg;
  float *restrict c = p->c;
  const float *restrict a = p->a, *restrict b = p->b;
  for (size_t i = p->lo; i < p->hi; i++) c[i] = a[i] + b[i];
  return NULL;
}


static int l_add(lua_State *L) {
  size_t n = (size_t)luaL_checknumber(L, 1);
  int reps = (int)luaL_optinteger(L, 2, 7), nt = (int)luaL_optinteger(L, 3, 1);
  if (reps < 1 || reps > 101 || nt < 1 || nt > 64) return luaL_error(L, "add: bad reps/threads");
  float *a = NULL, *b = NULL, *c = NULL;
  if (posix_memalign((void **)&a, 1 << 21, n * 4) || posix_memalign((void **)&b, 1 << 21, n * 4) ||
      posix_memalign((void **)&c, 1 << 21, n * 4)) {
    free(a); free(b); free(c);
    return luaL_error(L, "add: out of memory");
  }
  for (size_t i = 0; i < n; i++) { a[i] = (float)i; b[i] = 1; c[i] = 0; }
  double t[101];
  part ps[64];
  pthread_t tid[64];
  for (int r = 0; r < reps; r++) {
    double t0 = ref_now();
    for (int k = 0; k < nt; k++) {
      ps[k] = (part){a, b, c, n * (size_t)k / (size_t)nt, n * (size_t)(k + 1) / (size_t)nt};
      if (k > 0) pthread_create(&tid[k], NULL, add_part, &ps[k]);
    }
    add_part(&ps[0]);
    for (int k = 1; k < nt; k++) pthread_join(tid[k], NULL);
    t[r] = ref_now() - t0;
  }
  volatile float sink = c[n / 2];
  (void)sink;
  free(a); free(b); free(c);
  lua_pushnumber(L, ref_median(t, reps));
  return 1;
}

int luaopen_ref_stream(lua_State *L) {
  lua_newtable(L);
  lua_pushcfunction(L, l_add);
  lua_setfield(L, -2, "add");
  return 1;
}
