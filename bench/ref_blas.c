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

/* The fused updates' references, in place on C as BLAS defines them:
 * ref_blas.gemv(n, dt, calls, beta, alpha): y = beta y + alpha A x, A
 * n x n; ref_blas.gemm_batch(b, n, dt, calls, beta, alpha): C[i] = beta
 * C[i] + alpha A[i] B[i] for i < b, n x n each (baddbmm's loop of
 * gemms). Seconds per call, as gemm. */
static void fill(char *p, size_t n, int dbl, int mod) {
  for (size_t i = 0; i < n; i++) {
    if (dbl) ((double *)p)[i] = (double)(i % mod) / mod;
    else ((float *)p)[i] = (float)(i % mod) / mod;
  }
}
static int l_fused(lua_State *L, int batched) {
  int k = batched ? 2 : 1;
  int b = batched ? (int)luaL_checkinteger(L, 1) : 1;
  int n = (int)luaL_checkinteger(L, k);
  int dbl = strcmp(luaL_checkstring(L, k + 1), "float64") == 0;
  long calls = (long)luaL_optinteger(L, k + 2, 1);
  double beta = luaL_optnumber(L, k + 3, 1), alpha = luaL_optnumber(L, k + 4, 1);
  if (n < 1 || b < 1 || calls < 1) return luaL_error(L, "n, b and calls must be >= 1");
  size_t es = dbl ? sizeof(double) : sizeof(float), mat = (size_t)n * n;
  size_t na = b * mat, nb = batched ? b * mat : (size_t)n, nc = batched ? b * mat : (size_t)n;
  char *a = NULL, *x = NULL, *c = NULL;
  if (posix_memalign((void **)&a, 64, na * es) || posix_memalign((void **)&x, 64, nb * es) ||
      posix_memalign((void **)&c, 64, nc * es)) {
    free(a); free(x);
    return luaL_error(L, "out of memory");
  }
  fill(a, na, dbl, 7), fill(x, nb, dbl, 5), fill(c, nc, dbl, 3);
  double t0 = 0;
  for (long r = -1; r < calls; r++) {
    if (r == 0) t0 = ref_now();
    for (int i = 0; i < b; i++) {
      char *ai = a + i * mat * es, *bi = x + (batched ? i * mat * es : 0), *ci = c + (batched ? i * mat * es : 0);
      if (!batched && dbl)
        cblas_dgemv(CblasRowMajor, CblasNoTrans, n, n, alpha, (double *)ai, n, (double *)bi, 1, beta, (double *)ci, 1);
      else if (!batched)
        cblas_sgemv(CblasRowMajor, CblasNoTrans, n, n, (float)alpha, (float *)ai, n, (float *)bi, 1, (float)beta, (float *)ci, 1);
      else if (dbl)
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, alpha, (double *)ai, n,
                    (double *)bi, n, beta, (double *)ci, n);
      else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, (float)alpha, (float *)ai, n,
                    (float *)bi, n, (float)beta, (float *)ci, n);
    }
  }
  double t = (ref_now() - t0) / (double)calls;
  free(a); free(x); free(c);
  lua_pushnumber(L, t);
  return 1;
}
static int l_gemv(lua_State *L) { return l_fused(L, 0); }
static int l_gemm_batch(lua_State *L) { return l_fused(L, 1); }

int luaopen_ref_blas(lua_State *L) {
  lua_newtable(L);
  lua_pushcfunction(L, l_gemm);
  lua_setfield(L, -2, "gemm");
  lua_pushcfunction(L, l_gemv);
  lua_setfield(L, -2, "gemv");
  lua_pushcfunction(L, l_gemm_batch);
  lua_setfield(L, -2, "gemm_batch");
  return 1;
}
