/* An engine-style C host embedding LuaJIT and nd (examples/embed/).
 *
 * The host owns an RGBA image and a vertex array. It wraps both with
 * nd_wrap (zero-copy, a release callback that counts), hands them to
 * edit.lua, which edits them in place through views and matmul(..., out),
 * takes the script's result tensor back, and checks every value in C.
 *
 * Build against an installed nd (see Makefile here):
 *     cc host.c $(pkg-config --cflags --libs nd-luajit) -o host
 * Run: ./host path/to/edit.lua [more.lua] — prints "N passed, N failed";
 * a second script, if given, runs in the same state and must not raise. */
#include <lauxlib.h>
#include <lualib.h>
#include <math.h>
#include <nd_lua.h>
#include <stdio.h>
#include <string.h>

enum { H = 4, W = 6, NV = 5 };
static float image[H][W][4];
static float verts[NV][3];
static int released_image, released_verts;

static void release_count(void *data, void *ctx) {
  (void)data;
  ++*(int *)ctx;
}

static int passed, failed;
#define CHECK(c)                                                           \
  do {                                                                     \
    if (c) passed++;                                                       \
    else { failed++; fprintf(stderr, "FAILED line %d: %s\n", __LINE__, #c); } \
  } while (0)

/* Wraps host memory and pushes it to Lua; the C header is released at
 * once: Lua's tensor holds the storage from then on. */
static int push_wrapped(lua_State *L, void *data, size_t nbytes, int ndim,
                        const int64_t *size, int *counter) {
  nd_err e = {0};
  nd_tensor t = ND_UNSET;
  if (nd_wrap(&e, &t, data, (int64_t)nbytes, ND_FLOAT32, ndim, size, NULL,
              release_count, counter)) {
    fprintf(stderr, "%s\n", e.msg);
    return 0;
  }
  nd_lua_push(L, &t);
  nd_release(&t);
  return 1;
}

int main(int argc, char **argv) {
  const char *script = argc > 1 ? argv[1] : "edit.lua";
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      for (int c = 0; c < 4; c++) image[y][x][c] = 0.1f * (float)(c + 1);
  for (int i = 0; i < NV; i++)
    for (int k = 0; k < 3; k++) verts[i][k] = (float)(i * 3 + k);

  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  /* One copy of nd in the process: `require "nd"` finds this one. */
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "preload");
  lua_pushcfunction(L, luaopen_nd);
  lua_setfield(L, -2, "nd");
  lua_pop(L, 2);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "nd");
  CHECK(lua_pcall(L, 1, 0, 0) == 0);

  if (luaL_loadfile(L, script)) {
    fprintf(stderr, "%s\n", lua_tostring(L, -1));
    return 1;
  }
  int64_t isz[3] = {H, W, 4}, vsz[2] = {NV, 3};
  CHECK(push_wrapped(L, image, sizeof image, 3, isz, &released_image));
  CHECK(push_wrapped(L, verts, sizeof verts, 2, vsz, &released_verts));
  if (lua_pcall(L, 2, 1, 0)) {
    fprintf(stderr, "%s\n", lua_tostring(L, -1));
    return 1;
  }
  /* The result: keep it beyond the Lua value's life with nd_share. */
  nd_tensor mean = ND_UNSET;
  nd_share(&mean, nd_lua_check(L, -1));
  lua_pop(L, 1);

  /* The script's edits landed in host memory. */
  int ok = 1;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      for (int c = 0; c < 4; c++) {
        float want = c == 3 ? 1.0f : 0.1f * (float)(c + 1) * (x < W / 2 ? 2 : 1);
        ok &= fabsf(image[y][x][c] - want) < 1e-6f;
      }
  CHECK(ok);
  ok = 1;
  for (int i = 0; i < NV; i++) { /* (x, y, z) -> (-y, x, z) */
    float x = (float)(i * 3), y = (float)(i * 3 + 1), z = (float)(i * 3 + 2);
    ok &= verts[i][0] == -y && verts[i][1] == x && verts[i][2] == z;
  }
  CHECK(ok);
  CHECK(mean.ndim == 1 && mean.size[0] == 4 && mean.dtype == ND_FLOAT32);
  const float *m = nd_data(&mean);
  CHECK(fabsf(m[0] - 0.15f) < 1e-6f && fabsf(m[1] - 0.3f) < 1e-6f);
  CHECK(fabsf(m[2] - 0.45f) < 1e-6f && fabsf(m[3] - 1.0f) < 1e-6f);

  if (argc > 2) {
    int ok2 = luaL_dofile(L, argv[2]) == 0;
    if (!ok2) fprintf(stderr, "%s\n", lua_tostring(L, -1));
    CHECK(ok2);
  }

  /* The script's tensors and views are garbage now: full collections
   * hand each wrapped buffer back, exactly once. Two of them: a view made
   * by LuaJIT's FFI paths holds its buffer through a weak-keyed table,
   * whose entry LuaJIT lets go one cycle after the view itself. */
  lua_gc(L, LUA_GCCOLLECT, 0);
  lua_gc(L, LUA_GCCOLLECT, 0);
  CHECK(released_image == 1 && released_verts == 1);
  lua_close(L);
  CHECK(released_image == 1 && released_verts == 1);
  nd_release(&mean);
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
