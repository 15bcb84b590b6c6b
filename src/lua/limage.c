/* nd.image: load, save, decode, encode (PNG and JPEG) over the core's
 * nd_image_* (src/core/io/image.c). A subtable of module functions, as
 * nd.linalg; registered under the names "image.load", ... so that errors,
 * argument counts included, say image.load. */
#include "lnd.h"
#include <string.h>

/* The options table at idx: each key must be one of names (a NULL-ended
 * list), each value an integer in [lo[i], hi[i]]; v[i] keeps its default
 * when the key is absent. */
static void options(lua_State *L, int idx, const char *fn,
                    const char *const *names, const int *lo, const int *hi,
                    int *v) {
  if (lua_isnoneornil(L, idx)) return;
  if (lua_type(L, idx) != LUA_TTABLE)
    ndL_error(L, "%s: options must be a table, got %s", fn,
              luaL_typename(L, idx));
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    int k = -1;
    if (lua_type(L, -2) == LUA_TSTRING)
      for (int i = 0; names[i]; i++)
        if (!strcmp(lua_tostring(L, -2), names[i])) k = i;
    if (k < 0) {
      char list[80] = "";
      for (int i = 0; names[i]; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                 i ? ", " : "", names[i]);
      lua_pushvalue(L, -2); /* tostring on a copy: lua_next needs the key */
      ndL_error(L, "%s: unknown option %s (it takes %s)", fn,
                lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                               : luaL_typename(L, -1),
                list);
    }
    int64_t x = 0;
    if (lua_type(L, -1) != LUA_TNUMBER || !ndL_integral(L, -1, &x) ||
        x < lo[k] || x > hi[k])
      ndL_error(L, "%s: %s must be an integer in %d..%d, got %s", fn,
                names[k], lo[k], hi[k],
                lua_type(L, -1) == LUA_TNUMBER ? lua_tostring(L, -1)
                                               : luaL_typename(L, -1));
    v[k] = (int)x;
    lua_pop(L, 1);
  }
}

static int channels_opt(lua_State *L, int idx, const char *fn) {
  static const char *const names[] = {"channels", NULL};
  static const int lo[] = {1}, hi[] = {4};
  int v[1] = {0};
  options(L, idx, fn, names, lo, hi, v);
  return v[0];
}

/* quality (JPEG) and compression (PNG); v = {0, -1} when absent. */
static void save_opts(lua_State *L, int idx, const char *fn, int *v) {
  static const char *const names[] = {"quality", "compression", NULL};
  static const int lo[] = {1, 0}, hi[] = {100, 9};
  v[0] = 0;
  v[1] = -1;
  options(L, idx, fn, names, lo, hi, v);
}

static const char *string_arg(lua_State *L, int idx, const char *fn,
                              const char *what) {
  if (lua_type(L, idx) != LUA_TSTRING)
    ndL_error(L, "%s: %s must be a string, got %s", fn, what,
              luaL_typename(L, idx));
  return lua_tostring(L, idx);
}

static int l_load(lua_State *L) {
  const char *path = string_arg(L, 1, "image.load", "path");
  int channels = channels_opt(L, 2, "image.load");
  nd_tensor *t = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_image_load(&e, t, path, channels));
  ndL_charge(L, t);
  return 1;
}

static int l_decode(lua_State *L) {
  string_arg(L, 1, "image.decode", "bytes");
  size_t n;
  const char *bytes = lua_tolstring(L, 1, &n);
  int channels = channels_opt(L, 2, "image.decode");
  nd_tensor *t = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_image_decode(&e, t, bytes, (int64_t)n, channels));
  ndL_charge(L, t);
  return 1;
}

static int l_save(lua_State *L) {
  const char *path = string_arg(L, 1, "image.save", "path");
  nd_tensor *t = ndL_check(L, 2, "image.save");
  int v[2];
  save_opts(L, 3, "image.save", v);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_image_save(&e, path, t, v[0], v[1]));
  return 0;
}

/* The encoded bytes as a Lua string, under a pcall so that a Lua memory
 * error does not leak them. */
static int push_bytes(lua_State *L) {
  size_t n = *(const size_t *)lua_touserdata(L, 2);
  lua_pushlstring(L, lua_touserdata(L, 1), n);
  return 1;
}

static int l_encode(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "image.encode");
  const char *f = string_arg(L, 2, "image.encode", "format");
  int format = !strcmp(f, "png")                         ? ND_IMAGE_PNG
               : !strcmp(f, "jpeg") || !strcmp(f, "jpg") ? ND_IMAGE_JPEG
                                                         : 0;
  if (!format)
    return ndL_error(L, "image.encode: unknown format '%s' (it writes "
                     "\"png\" and \"jpeg\" or \"jpg\")", f);
  int v[2];
  save_opts(L, 3, "image.encode", v);
  if (format == ND_IMAGE_PNG && v[0])
    return ndL_error(L, "image.encode: quality is for JPEG (PNG is "
                     "lossless; its option is compression)");
  if (format == ND_IMAGE_JPEG && v[1] != -1)
    return ndL_error(L, "image.encode: compression is for PNG (JPEG's "
                     "option is quality)");
  void *bytes;
  int64_t n;
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_image_encode(&e, &bytes, &n, t, format, v[0], v[1]));
  size_t len = (size_t)n;
  lua_settop(L, 0);
  lua_pushcfunction(L, push_bytes);
  lua_pushlightuserdata(L, bytes);
  lua_pushlightuserdata(L, &len);
  int st = lua_pcall(L, 2, 1, 0);
  nd_image_free(bytes);
  if (st) return lua_error(L);
  return 1;
}

void ndL_open_image(lua_State *L) {
  static const luaL_Reg fns[] = {{"image.load", l_load},
                                 {"image.save", l_save},
                                 {"image.decode", l_decode},
                                 {"image.encode", l_encode},
                                 {NULL, NULL}};
  ndL_register_module(L, fns, "image");
}
