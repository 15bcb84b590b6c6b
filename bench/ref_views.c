/* References for the views bench, timed in the same run as nd:
 * ref_views.memcpy_fresh(nbytes, reps): memcpy into a destination freshly
 *   allocated for each copy (2 MiB aligned, MADV_HUGEPAGE, as nd's storage
 *   does), so its page faults count as they do for contiguous();
 * ref_views.naive_transpose(n, reps): the plain strided loop
 *   dst[i][j] = src[j][i] over an n x n float32 matrix into a fresh buffer.
 * Each returns seconds per copy (median of reps). */
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "ref_time.h"



static void *fresh(size_t n) {
  void *p = NULL;
  if (posix_memalign(&p, (size_t)2 << 20, n)) return NULL;
#ifdef MADV_HUGEPAGE
  madvise(p, n, MADV_HUGEPAGE);
#endif
  return p;
}

enum { MAXREPS = 64 };

static int l_memcpy_fresh(lua_State *L) {
  size_t n = (size_t)luaL_checknumber(L, 1);
  int reps = (int)luaL_optinteger(L, 2, 7);
  double t[MAXREPS];
  if (reps < 1 || reps > MAXREPS) return luaL_error(L, "reps out of range");
  char *a = fresh(n);
  if (!a) return luaL_error(L, "memcpy_fresh: out of memory");
  memset(a, 1, n);
  for (int r = 0; r < reps; r++) {
    double t0 = ref_now();
    char *b = fresh(n);
    if (!b) return luaL_error(L, "memcpy_fresh: out of memory");
    memcpy(b, a, n);
    t[r] = ref_now() - t0;
    volatile char sink = b[n / 2];
    (void)sink;
    free(b);
  }
  free(a);
  lua_pushnumber(L, ref_median(t, reps));
  return 1;
}

static int l_naive_transpose(lua_State *L) {
  size_t n = (size_t)luaL_checkinteger(L, 1);
  int reps = (int)luaL_optinteger(L, 2, 3);
  double t[MAXREPS];
  if (reps < 1 || reps > MAXREPS) return luaL_error(L, "reps out of range");
  float *a = fresh(n * n * sizeof(float));
  if (!a) return luaL_error(L, "naive_transpose: out of memory");
  for (size_t k = 0; k < n * n; k++) a[k] = (float)k;
  for (int r = 0; r < reps; r++) {
    double t0 = ref_now();
    float *b = fresh(n * n * sizeof(float));
    if (!b) return luaL_error(L, "naive_transpose: out of memory");
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j < n; j++) b[i * n + j] = a[j * n + i];
    t[r] = ref_now() - t0;
    volatile float sink = b[n];
    (void)sink;
    free(b);
  }
  free(a);
  lua_pushnumber(L, ref_median(t, reps));
  return 1;
}

int luaopen_ref_views(lua_State *L) {
  lua_newtable(L);
  lua_pushcfunction(L, l_memcpy_fresh);
  lua_setfield(L, -2, "memcpy_fresh");
  lua_pushcfunction(L, l_naive_transpose);
  lua_setfield(L, -2, "naive_transpose");
  return 1;
}
