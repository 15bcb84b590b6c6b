// The C++ twin of host.c, embedding PUC Lua 5.4 instead of LuaJIT: the
// same image and vertex array, wrapped with nd_wrap, edited by the same
// edit.lua, checked the same way. RAII holds the nd header it keeps.
//
// Build against an installed nd (see Makefile here):
//     c++ host.cpp $(pkg-config --cflags --libs nd-lua5.4) -o host-cpp
#include <nd_lua.h>
#include <lua.hpp>
#include <cmath>
#include <cstdio>
#include <vector>

namespace {

struct Tensor { // owns one reference, as nd_share/nd_release pair them
  nd_tensor t = ND_UNSET;
  Tensor() = default;
  Tensor(const Tensor &) = delete;
  Tensor &operator=(const Tensor &) = delete;
  ~Tensor() { nd_release(&t); }
};

int passed, failed;
void check(bool ok, int line, const char *what) {
  if (ok) {
    passed++;
  } else {
    failed++;
    std::fprintf(stderr, "FAILED line %d: %s\n", line, what);
  }
}
#define CHECK(c) check((c), __LINE__, #c)

constexpr int H = 4, W = 6, NV = 5;

void push_wrapped(lua_State *L, std::vector<float> &buf, int ndim,
                  const int64_t *size, int *counter) {
  nd_err e = {};
  Tensor t;
  auto release = [](void *, void *ctx) { ++*static_cast<int *>(ctx); };
  if (nd_wrap(&e, &t.t, buf.data(), int64_t(buf.size() * sizeof(float)),
              ND_FLOAT32, ndim, size, nullptr, release, counter))
    luaL_error(L, "%s", e.msg);
  nd_lua_push(L, &t.t); // Lua's tensor shares the storage; t goes here
}

} // namespace

int main(int argc, char **argv) {
  const char *script = argc > 1 ? argv[1] : "edit.lua";
  std::vector<float> image(H * W * 4), verts(NV * 3);
  for (int p = 0; p < H * W; p++)
    for (int c = 0; c < 4; c++) image[p * 4 + c] = 0.1f * float(c + 1);
  for (int i = 0; i < NV * 3; i++) verts[i] = float(i);
  int released_image = 0, released_verts = 0;
  Tensor mean;
  {
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    luaL_requiref(L, "nd", luaopen_nd, 0); // require "nd" finds this copy
    lua_pop(L, 1);
    if (luaL_loadfile(L, script)) {
      std::fprintf(stderr, "%s\n", lua_tostring(L, -1));
      return 1;
    }
    const int64_t isz[3] = {H, W, 4}, vsz[2] = {NV, 3};
    push_wrapped(L, image, 3, isz, &released_image);
    push_wrapped(L, verts, 2, vsz, &released_verts);
    if (lua_pcall(L, 2, 1, 0)) {
      std::fprintf(stderr, "%s\n", lua_tostring(L, -1));
      return 1;
    }
    nd_share(&mean.t, nd_lua_check(L, -1));
    lua_pop(L, 1);
    // The script's tensors and views are garbage now: a full collection
    // hands each wrapped buffer back, exactly once.
    lua_gc(L, LUA_GCCOLLECT, 0);
    CHECK(released_image == 1 && released_verts == 1);
    lua_close(L);
  }
  CHECK(released_image == 1 && released_verts == 1);

  bool ok = true;
  for (int p = 0; p < H * W; p++)
    for (int c = 0; c < 4; c++) {
      float want = c == 3 ? 1.0f : 0.1f * float(c + 1) * (p % W < W / 2 ? 2 : 1);
      ok = ok && std::fabs(image[p * 4 + c] - want) < 1e-6f;
    }
  CHECK(ok);
  ok = true;
  for (int i = 0; i < NV; i++) // (x, y, z) -> (-y, x, z)
    ok = ok && verts[i * 3] == -float(i * 3 + 1) &&
         verts[i * 3 + 1] == float(i * 3) && verts[i * 3 + 2] == float(i * 3 + 2);
  CHECK(ok);
  const float *m = static_cast<const float *>(nd_data(&mean.t));
  CHECK(mean.t.ndim == 1 && mean.t.size[0] == 4);
  CHECK(std::fabs(m[0] - 0.15f) < 1e-6f && std::fabs(m[3] - 1.0f) < 1e-6f);
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
