/* Pooling (src/core/conv/pool.c): max_pool1d/2d/3d, avg_pool1d/2d/3d,
 * adaptive_avg_pool2d. The options table is read here into the core's
 * arrays; the rules (defaults, limits, sizes) are the core's. */
#include "lnd.h"
#include <string.h>

enum { K_KERNEL, K_STRIDE, K_PADDING, K_DILATION, K_CEIL, K_INCLUDE,
       K_DIVISOR, K_INDICES, NKEYS };
static const char *const key_names[NKEYS] = {
    "kernel_size", "stride", "padding", "dilation", "ceil_mode",
    "count_include_pad", "divisor_override", "return_indices"};
/* The options each family takes, as bits of the keys above. */
#define BIT(k) (1u << (k))
#define MAX_KEYS                                                            \
  (BIT(K_KERNEL) | BIT(K_STRIDE) | BIT(K_PADDING) | BIT(K_DILATION) |      \
   BIT(K_CEIL) | BIT(K_INDICES))
#define AVG1_KEYS                                                           \
  (BIT(K_KERNEL) | BIT(K_STRIDE) | BIT(K_PADDING) | BIT(K_CEIL) |          \
   BIT(K_INCLUDE))
#define AVG_KEYS (AVG1_KEYS | BIT(K_DIVISOR))

typedef struct opts {
  unsigned given;                 /* bits of the keys present */
  int64_t v[K_DILATION + 1][3];   /* the per-dim values */
  int flag[NKEYS];                /* the booleans */
  int64_t divisor;
} opts;

/* The options table at idx; unknown keys and kernel_size missing raise. */
static void read_opts(lua_State *L, int idx, const char *fn, int dims,
                      unsigned allowed, opts *o) {
  memset(o, 0, sizeof *o);
  o->flag[K_INCLUDE] = 1;
  if (!lua_istable(L, idx))
    ndL_error(L, "%s: options must be a table (with kernel_size), got %s",
              fn, luaL_typename(L, idx));
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    int key = -1;
    if (lua_type(L, -2) == LUA_TSTRING) {
      const char *s = lua_tostring(L, -2);
      for (int k = 0; k < NKEYS; k++)
        if (allowed & BIT(k) && !strcmp(s, key_names[k])) key = k;
      if (key < 0) {
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        for (int k = 0, n = 0; k < NKEYS; k++)
          if (allowed & BIT(k)) {
            if (n++) luaL_addstring(&b, ", ");
            luaL_addstring(&b, key_names[k]);
          }
        luaL_pushresult(&b);
        ndL_error(L, "%s: unknown option '%s' (it takes %s)", fn, s,
                  lua_tostring(L, -1));
      }
    } else {
      ndL_error(L, "%s: options are named (kernel_size = ...), got a %s key",
                fn, luaL_typename(L, -2));
    }
    o->given |= BIT(key);
    if (key <= K_DILATION) {
      ndL_per_dim(L, lua_gettop(L), fn, key_names[key], dims, 1, o->v[key]);
    } else if (key == K_DIVISOR) {
      if (lua_type(L, -1) != LUA_TNUMBER || !ndL_integral(L, -1, &o->divisor))
        ndL_error(L, "%s: divisor_override must be an integer, got %s", fn,
                  luaL_typename(L, -1));
    } else {
      if (lua_type(L, -1) != LUA_TBOOLEAN)
        ndL_error(L, "%s: %s must be a boolean, got %s", fn, key_names[key],
                  luaL_typename(L, -1));
      o->flag[key] = lua_toboolean(L, -1);
    }
    lua_pop(L, 1);
  }
  if (!(o->given & BIT(K_KERNEL)))
    ndL_error(L, "%s: options.kernel_size is required", fn);
}

#define GIVEN(o, k) ((o).given & BIT(k) ? (o).v[k] : NULL)

static const char *const max_names[3] = {"max_pool1d", "max_pool2d",
                                         "max_pool3d"};
static const char *const avg_names[3] = {"avg_pool1d", "avg_pool2d",
                                         "avg_pool3d"};

static int max_pool(lua_State *L, int dims) {
  const char *fn = max_names[dims - 1];
  nd_tensor *t = ndL_check(L, 1, fn);
  opts o;
  read_opts(L, 2, fn, dims, MAX_KEYS, &o);
  int n = o.flag[K_INDICES] ? 2 : 1;
  nd_tensor *r[2] = {NULL, NULL};
  ndL_new_n(L, n, r);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_max_pool(&e, r[0], r[1], t, dims, o.v[K_KERNEL],
                             GIVEN(o, K_STRIDE), GIVEN(o, K_PADDING),
                             GIVEN(o, K_DILATION), o.flag[K_CEIL]));
  return ndL_return(L, n, r, 0);
}

static int avg_pool(lua_State *L, int dims) {
  const char *fn = avg_names[dims - 1];
  nd_tensor *t = ndL_check(L, 1, fn);
  opts o;
  read_opts(L, 2, fn, dims, dims == 1 ? AVG1_KEYS : AVG_KEYS, &o);
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_avg_pool(&e, r, t, dims, o.v[K_KERNEL],
                             GIVEN(o, K_STRIDE), GIVEN(o, K_PADDING),
                             o.flag[K_CEIL], o.flag[K_INCLUDE],
                             o.given & BIT(K_DIVISOR) ? &o.divisor : NULL));
  ndL_charge(L, r);
  return 1;
}

static int l_max_pool1d(lua_State *L) { return max_pool(L, 1); }
static int l_max_pool2d(lua_State *L) { return max_pool(L, 2); }
static int l_max_pool3d(lua_State *L) { return max_pool(L, 3); }
static int l_avg_pool1d(lua_State *L) { return avg_pool(L, 1); }
static int l_avg_pool2d(lua_State *L) { return avg_pool(L, 2); }
static int l_avg_pool3d(lua_State *L) { return avg_pool(L, 3); }

/* adaptive_avg_pool2d(t, size): size a number or {h, w}, a nil entry
 * keeping the input's size (PyTorch's None). */
static int l_adaptive_avg_pool2d(lua_State *L) {
  const char *fn = "adaptive_avg_pool2d";
  nd_tensor *t = ndL_check(L, 1, fn);
  int64_t size[2];
  if (lua_type(L, 2) == LUA_TNUMBER) {
    if (!ndL_integral(L, 2, size))
      return ndL_error(L, "%s: size must be an integer, got %.17g", fn,
                       lua_tonumber(L, 2));
    size[1] = size[0];
  } else if (lua_istable(L, 2) && lua_objlen(L, 2) <= 2) {
    for (int k = 0; k < 2; k++) {
      lua_rawgeti(L, 2, k + 1);
      if (lua_isnil(L, -1)) {
        size[k] = -1;
      } else if (lua_type(L, -1) != LUA_TNUMBER ||
                 !ndL_integral(L, -1, size + k) || size[k] < 0) {
        return ndL_error(L, "%s: size[%d] must be an integer of at least 0 "
                         "or nil (the input's), got %s", fn, k + 1,
                         lua_type(L, -1) == LUA_TNUMBER
                             ? lua_tostring(L, -1)
                             : luaL_typename(L, -1));
      }
      lua_pop(L, 1);
    }
  } else {
    return ndL_error(L, "%s: size must be a number or a table {h, w}, got %s",
                     fn, lua_istable(L, 2) ? "a longer table"
                                           : luaL_typename(L, 2));
  }
  if (size[0] < -1 || size[1] < -1 ||
      (lua_type(L, 2) == LUA_TNUMBER && size[0] < 0))
    return ndL_error(L, "%s: size must be at least 0, got %lld", fn,
                     (long long)(size[0] < 0 ? size[0] : size[1]));
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_adaptive_avg_pool(&e, r, t, 2, size));
  ndL_charge(L, r);
  return 1;
}

void ndL_open_pool(lua_State *L) {
  static const luaL_Reg fns[] = {
      {"max_pool1d", l_max_pool1d},
      {"max_pool2d", l_max_pool2d},
      {"max_pool3d", l_max_pool3d},
      {"avg_pool1d", l_avg_pool1d},
      {"avg_pool2d", l_avg_pool2d},
      {"avg_pool3d", l_avg_pool3d},
      {"adaptive_avg_pool2d", l_adaptive_avg_pool2d},
      {NULL, NULL}};
  ndL_register(L, fns);
}
