/* Reference: one elementwise op of the C core called from C, with no Lua
 * in between, on the float32 values given (out= form: mode ND_OUT into a
 * tensor of the result's dtype). What a call from Lua costs on top of
 * this is the binding's; what this costs beyond add's is the op's own
 * work (a SLEEF function evaluates a whole vector for 3 elements).
 * ref_core.time(family, id, arity, a, b, reps) -> seconds per call, the
 * median of reps samples of one thread's CPU time; family "op" (nd_unary,
 * nd_binary) or "math" (nd_math_unary, nd_math_binary); a and b tables of
 * numbers of one length (b unused by unary ops). Linked against the
 * build's libnd.so (bench/Makefile). */
#include "nd.h"
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ref_time.h"

static double cpu(void) { return ref_clock(CLOCK_THREAD_CPUTIME_ID); }

static int filled(lua_State *L, int idx, nd_tensor *t, int64_t n) {
  nd_err e = {0};
  if (nd_empty(&e, t, ND_FLOAT32, 1, &n) != ND_OK) return 0;
  float *p = nd_data(t);
  for (int64_t i = 0; i < n; i++) {
    lua_rawgeti(L, idx, (int)i + 1);
    p[i] = (float)lua_tonumber(L, -1);
    lua_pop(L, 1);
  }
  return 1;
}

/* one error slot for every call, as the binding's (zeroing one a call
 * would cost a tenth of an add) */
static nd_err err;
static int call(int math, int arity, nd_tensor *o, int op, const nd_tensor *a,
                const nd_tensor *b) {
  nd_operand x = {.t = a, .dtype = a->dtype}, y = {.t = b, .dtype = b->dtype};
  if (arity == 1)
    return (math ? nd_math_unary(&err, o, ND_OUT, op, a)
                 : nd_unary(&err, o, ND_OUT, op, a)) == ND_OK;
  return (math ? nd_math_binary(&err, o, ND_OUT, op, &x, &y)
               : nd_binary(&err, o, ND_OUT, op, &x, &y)) == ND_OK;
}

static int l_time(lua_State *L) {
  const char *fam = luaL_checkstring(L, 1);
  int op = (int)luaL_checkinteger(L, 2), arity = (int)luaL_checkinteger(L, 3);
  luaL_checktype(L, 4, LUA_TTABLE);
  luaL_checktype(L, 5, LUA_TTABLE);
  int reps = (int)luaL_optinteger(L, 6, 7);
  int math = strcmp(fam, "math") == 0;
  int64_t n = (int64_t)lua_objlen(L, 4);
  if ((!math && strcmp(fam, "op") != 0) || (arity != 1 && arity != 2) ||
      n < 1 || (int64_t)lua_objlen(L, 5) != n || reps < 1 || reps > 101)
    return luaL_error(L, "time: bad family, arity, operands or reps");
  nd_tensor a = {0}, b = {0}, o = {0};
  if (!filled(L, 4, &a, n) || !filled(L, 5, &b, n)) {
    nd_release(&a);
    nd_release(&b);
    return luaL_error(L, "time: out of memory");
  }
  /* the result's dtype: a new result's (ND_NEW), then out= into it */
  nd_err e = {0};
  nd_operand x = {.t = &a, .dtype = ND_FLOAT32}, y = {.t = &b, .dtype = ND_FLOAT32};
  nd_status s = arity == 1 ? (math ? nd_math_unary(&e, &o, ND_NEW, op, &a)
                                   : nd_unary(&e, &o, ND_NEW, op, &a))
                           : (math ? nd_math_binary(&e, &o, ND_NEW, op, &x, &y)
                                   : nd_binary(&e, &o, ND_NEW, op, &x, &y));
  if (s != ND_OK) {
    nd_release(&a);
    nd_release(&b);
    return luaL_error(L, "time: %s", e.msg);
  }
  /* calls per sample: about 2 ms of them */
  long k = 1;
  for (;;) {
    double t0 = cpu();
    for (long i = 0; i < k; i++) call(math, arity, &o, op, &a, &b);
    if (cpu() - t0 > 2e-3 || k > (1L << 26)) break;
    k *= 2;
  }
  double t[101];
  for (int r = 0; r < reps; r++) {
    double t0 = cpu();
    for (long i = 0; i < k; i++) call(math, arity, &o, op, &a, &b);
    t[r] = (cpu() - t0) / (double)k;
  }
  nd_release(&a);
  nd_release(&b);
  nd_release(&o);
  lua_pushnumber(L, ref_median(t, reps));
  return 1;
}

int luaopen_ref_core(lua_State *L) {
  lua_newtable(L);
  lua_pushcfunction(L, l_time);
  lua_setfield(L, -2, "time");
  return 1;
}
