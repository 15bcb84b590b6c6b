/* nd.safetensors: load, save, metadata (the core's safetensors.c). The
 * core's results are held in a userdata whose __gc frees them, so a Lua
 * error while the tables are built leaks nothing. */
#include "lnd.h"
#include <string.h>

static int guard_gc(lua_State *L) {
  nd_safetensors_free(lua_touserdata(L, 1));
  return 0;
}
static nd_safetensors *guard(lua_State *L) {
  nd_safetensors *f = lua_newuserdata(L, sizeof *f);
  memset(f, 0, sizeof *f);
  if (luaL_newmetatable(L, "nd.safetensors")) {
    lua_pushcfunction(L, guard_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  return f;
}

static const char *path_arg(lua_State *L, const char *fn) {
  if (lua_type(L, 1) != LUA_TSTRING)
    ndL_error(L, "%s: path must be a string, got %s", fn, luaL_typename(L, 1));
  return lua_tostring(L, 1);
}

/* {mmap = true | "c" | false | nil}: "r", "c" or NULL. */
static const char *mmap_option(lua_State *L, int idx) {
  const char *fn = "safetensors.load", *mode = NULL;
  if (lua_isnoneornil(L, idx)) return NULL;
  if (!lua_istable(L, idx))
    ndL_error(L, "%s: argument %d must be a table of options (or nil), got "
              "%s", fn, idx, luaL_typename(L, idx));
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING || strcmp(lua_tostring(L, -2), "mmap"))
      ndL_error(L, "%s: unknown option %s (options: mmap)", fn,
                lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2)
                                               : luaL_typename(L, -2));
    if (lua_type(L, -1) == LUA_TBOOLEAN)
      mode = lua_toboolean(L, -1) ? "r" : NULL;
    else if (lua_type(L, -1) == LUA_TSTRING && !strcmp(lua_tostring(L, -1), "c"))
      mode = "c";
    else
      ndL_error(L, "%s: option mmap must be true, false or \"c\", got %s", fn,
                lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                               : luaL_typename(L, -1));
    lua_pop(L, 1);
  }
  return mode;
}

static void push_meta(lua_State *L, const nd_safetensors *f) {
  lua_createtable(L, 0, f->nmeta);
  for (int k = 0; k < f->nmeta; k++) {
    lua_pushstring(L, f->meta[2 * k + 1]);
    lua_setfield(L, -2, f->meta[2 * k]);
  }
}

/* safetensors.load(path [, {mmap = true | "c"}]) -> {name = tensor} */
static int l_load(lua_State *L) {
  const char *path = path_arg(L, "safetensors.load");
  const char *mode = mmap_option(L, 2);
  lua_settop(L, 1);
  nd_safetensors *f = guard(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_safetensors_load(&e, path, mode, f));
  lua_createtable(L, 0, f->n);
  for (int i = 0; i < f->n; i++) {
    nd_tensor *t = ndL_new(L);
    nd_share(t, &f->tensors[i]);
    ndL_charge(L, t);
    lua_setfield(L, -2, f->entries[i].name);
  }
  nd_safetensors_free(f);
  return 1;
}

/* safetensors.metadata(path) -> __metadata__ table, {name = {dtype =,
 * safetensors_dtype =, shape =, data_offsets =}} (no data read) */
static int l_metadata(lua_State *L) {
  const char *path = path_arg(L, "safetensors.metadata");
  lua_settop(L, 1);
  nd_safetensors *f = guard(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_safetensors_header(&e, "safetensors.metadata", path, f));
  push_meta(L, f);
  lua_createtable(L, 0, f->n);
  for (int i = 0; i < f->n; i++) {
    const nd_safetensors_entry *t = &f->entries[i];
    lua_createtable(L, 0, 4);
    if (t->dtype >= 0) ndL_setstr(L, "dtype", nd_dtype_name(t->dtype));
    ndL_setstr(L, "safetensors_dtype", t->st_dtype);
    lua_createtable(L, t->ndim, 0);
    for (int k = 0; k < t->ndim; k++) {
      ndL_pushint(L, t->size[k]);
      lua_rawseti(L, -2, k + 1);
    }
    lua_setfield(L, -2, "shape");
    lua_createtable(L, 2, 0);
    ndL_pushint(L, t->begin);
    lua_rawseti(L, -2, 1);
    ndL_pushint(L, t->end);
    lua_rawseti(L, -2, 2);
    lua_setfield(L, -2, "data_offsets");
    lua_setfield(L, -2, t->name);
  }
  nd_safetensors_free(f);
  return 2;
}

/* safetensors.save(path, {name = tensor} [, {key = value}]) */
static int l_save(lua_State *L) {
  const char *fn = "safetensors.save";
  const char *path = path_arg(L, fn);
  if (!lua_istable(L, 2))
    return ndL_error(L, "%s: argument 2 must be a table of name = tensor, "
                     "got %s", fn, luaL_typename(L, 2));
  int meta = !lua_isnoneornil(L, 3);
  if (meta && !lua_istable(L, 3))
    return ndL_error(L, "%s: argument 3 must be a table of metadata "
                     "(string = string) or nil, got %s", fn,
                     luaL_typename(L, 3));
  int n = 0, nmeta = 0;
  lua_settop(L, 3);
  lua_pushnil(L);
  while (lua_next(L, 2)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      return ndL_error(L, "%s: tensor names must be strings, got a %s", fn,
                       luaL_typename(L, -2));
    ndL_check(L, -1, fn);
    lua_pop(L, 1);
    if (++n > 1 << 24) return ndL_error(L, "%s: too many tensors", fn);
  }
  if (meta) {
    lua_pushnil(L);
    while (lua_next(L, 3)) {
      if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
        return ndL_error(L, "%s: metadata must map strings to strings, got "
                         "%s = %s", fn, luaL_typename(L, -2),
                         luaL_typename(L, -1));
      lua_pop(L, 1);
      if (++nmeta > 1 << 24) return ndL_error(L, "%s: too much metadata", fn);
    }
  }
  /* Arrays in userdata (collected after an error); the strings and
   * tensors stay in the argument tables for the call. */
  const char **names = lua_newuserdata(L, sizeof *names * (size_t)(n + 1));
  const nd_tensor **ts = lua_newuserdata(L, sizeof *ts * (size_t)(n + 1));
  const char **kv = lua_newuserdata(L, sizeof *kv * (size_t)(2 * nmeta + 1));
  int i = 0;
  lua_pushnil(L);
  while (lua_next(L, 2) && i < n) {
    names[i] = lua_tostring(L, -2);
    ts[i++] = ndL_check(L, -1, fn);
    lua_pop(L, 1);
  }
  i = 0;
  if (meta) {
    lua_pushnil(L);
    while (lua_next(L, 3) && i < nmeta) {
      kv[2 * i] = lua_tostring(L, -2);
      kv[2 * i++ + 1] = lua_tostring(L, -1);
      lua_pop(L, 1);
    }
  }
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_safetensors_save(&e, path, n, names, ts, nmeta, kv));
  return 0;
}

void ndL_open_safetensors(lua_State *L) {
  static const luaL_Reg fns[] = {{"safetensors.load", l_load},
                                 {"safetensors.save", l_save},
                                 {"safetensors.metadata", l_metadata},
                                 {NULL, NULL}};
  ndL_register_module(L, fns, "safetensors");
}
