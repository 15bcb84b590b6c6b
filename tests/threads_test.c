/* Two lua_States on two threads, each with nd: distinct tensors, one
 * shared read-only wrapped buffer, and each state's own default random
 * generator. Each thread's results must equal those of the same script
 * run alone (so seeding in one state never moves the other's stream), the
 * shared buffer is released exactly once, after both states are closed.
 * Run under ThreadSanitizer by `make check-tsan`. Prints "N passed, N
 * failed". */
#include "nd_lua.h"
#include <lauxlib.h>
#include <lualib.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "check.h"

static const char *script =
    "local nd = require 'nd'\n"
    "local shared, seed = ...\n"
    "nd.manual_seed(seed)\n"
    "local acc = 0\n"
    "for i = 1, 60 do\n"
    "  local a = nd.rand(32, 32, 'float32')\n"
    "  local b = a:matmul(a:t()) + shared:view(32, 32)\n"
    "  acc = acc + b:sum() + shared:narrow(1, 1, 100):clone():sum()\n"
    "  local big = nd.rand(200000):mul(2):exp()\n" /* threaded kernels */
    "  acc = acc + big:max()\n"
    "end\n"
    "return acc, nd.rand(1):item()\n";

static float shared_buf[1024];
static int shared_releases;
static void on_release(void *data, void *ctx) {
  (void)data;
  (void)ctx;
  __atomic_add_fetch(&shared_releases, 1, __ATOMIC_SEQ_CST);
}

typedef struct job {
  lua_State *L;
  const nd_tensor *shared;
  int seed;
  double acc, last;
  int ok;
} job;

static void *run(void *arg) {
  job *j = arg;
  lua_State *L = j->L;
  j->ok = luaL_loadstring(L, script) == 0;
  if (!j->ok) return NULL;
  nd_lua_push(L, j->shared);
  lua_pushinteger(L, j->seed);
  j->ok = lua_pcall(L, 2, 2, 0) == 0;
  if (!j->ok) {
    fprintf(stderr, "%s\n", lua_tostring(L, -1));
    return NULL;
  }
  j->acc = lua_tonumber(L, -2);
  j->last = lua_tonumber(L, -1);
  lua_pop(L, 2);
  return NULL;
}

static lua_State *open_state(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "preload");
  lua_pushcfunction(L, luaopen_nd);
  lua_setfield(L, -2, "nd");
  lua_pop(L, 2);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "nd");
  lua_call(L, 1, 0);
  return L;
}

int main(void) {
  for (int i = 0; i < 1024; i++) shared_buf[i] = (float)i / 1024;
  nd_err e = {0};
  nd_tensor shared = ND_UNSET;
  int64_t n = 1024;
  CHECK(nd_wrap(&e, &shared, shared_buf, sizeof shared_buf, ND_FLOAT32, 1,
                &n, NULL, on_release, NULL) == ND_OK);
  job alone[2], both[2];
  for (int k = 0; k < 2; k++) { /* the reference: each script alone */
    alone[k] = (job){open_state(), &shared, k + 1, 0, 0, 0};
    run(&alone[k]);
    CHECK(alone[k].ok);
  }
  for (int k = 0; k < 2; k++)
    both[k] = (job){open_state(), &shared, k + 1, 0, 0, 0};
  pthread_t tid[2];
  for (int k = 0; k < 2; k++) pthread_create(&tid[k], NULL, run, &both[k]);
  for (int k = 0; k < 2; k++) pthread_join(tid[k], NULL);
  for (int k = 0; k < 2; k++) {
    CHECK(both[k].ok);
    CHECK(both[k].last == alone[k].last); /* per-state generators */
    CHECK(both[k].acc == alone[k].acc);
  }
  CHECK(alone[0].last != alone[1].last);
  nd_release(&shared);
  for (int k = 0; k < 2; k++) {
    lua_close(alone[k].L);
    CHECK(shared_releases == 0);
    lua_close(both[k].L);
  }
  CHECK(shared_releases == 1);
  for (int i = 0; i < 1024; i++)
    if (shared_buf[i] != (float)i / 1024) { CHECK(!"shared buffer changed"); break; }
  return check_report();
}
