/* Reference: cblas_?gemm called directly from C on fresh, touched n x n
 * row-major buffers -- what nd's matmul is measured against.
 * ref_blas.gemm(n, "float32"|"float64", calls [, "NN"|"TN"|"NT"]) ->
 * seconds per call (the mean over `calls` back-to-back calls, after one
 * warm-up call); the flags give OpenBLAS's own cost of a transposed
 * operand, next to which nd's transposed views are judged. */
#include <cblas.h>
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ref_time.h"


static int l_gemm(lua_State *L) {
  int n = (int)luaL_checkinteger(L, 1);
  const char *dt = luaL_checkstring(L, 2);
  long calls = (long)luaL_optinteger(L, 3, 1);
  const char *flags = luaL_optstring(L, 4, "NN");
  const enum CBLAS_TRANSPOSE ta = flags[0] == 'T' ? CblasTrans : CblasNoTrans;
  const enum CBLAS_TRANSPOSE tb = flags[0] && flags[1] == 'T' ? CblasTrans : CblasNoTrans;
  int dbl = strcmp(dt, "float64") == 0;
  size_t es = dbl ? sizeof(double) : sizeof(float), bytes = (size_t)n * n * es;
  char *a = NULL, *b = NULL, *c = NULL;
  if (n < 1 || calls < 1) return luaL_error(L, "gemm: n and calls must be >= 1");
  if (posix_memalign((void **)&a, 64, bytes) || posix_memalign((void **)&b, 64, bytes) ||
      posix_memalign((void **)&c, 64, bytes)) {
    free(a); free(b);
    return luaL_error(L, "gemm: out of memory");
  }
  for (size_t i = 0; i < (size_t)n * n; i++) {
    if (dbl) { ((double *)a)[i] = (double)(i % 7) / 7; ((double *)b)[i] = (double)(i % 5) / 5; }
    else { ((float *)a)[i] = (float)(i % 7) / 7; ((float *)b)[i] = (float)(i % 5) / 5; }
  }
  double t0 = 0;
  for (long r = -1; r < calls; r++) {
    if (r == 0) t0 = ref_now();
    if (dbl)
      cblas_dgemm(CblasRowMajor, ta, tb, n, n, n, 1.0,
                  (double *)a, n, (double *)b, n, 0.0, (double *)c, n);
    else
      cblas_sgemm(CblasRowMajor, ta, tb, n, n, n, 1.0f,
                  (float *)a, n, (float *)b, n, 0.0f, (float *)c, n);
  }
  double t = (ref_now() - t0) / (double)calls;
  free(a); free(b); free(c);
  lua_pushnumber(L, t);
  return 1;
}

int luaopen_ref_blas(lua_State *L) {
  lua_newtable(L);
  lua_pushcfunction(L, l_gemm);
  lua_setfield(L, -2, "gemm");
  return 1;
}
