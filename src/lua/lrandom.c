/* Random sampling: nd.generator objects and the module functions, which
 * draw from the calling lua_State's default generator (a userdata in the
 * registry under a static key: one per state, so two states never disturb
 * each other, and nothing global). Every sampler is written once, taking
 * its generator and the index of its first argument, and bound twice:
 * nd.rand(...) (default generator) and g:rand(...). */
#include "lnd.h"
#include <string.h>

#define NDL_GENERATOR "nd.Generator" /* registry name of the metatable */
#define DEFAULT_SEED 0 /* a fresh state starts as after nd.manual_seed(0) */
static const char default_key = 0;

/* A generator object carries a tag made from an address inside nd, as
 * tensors do: a metatable can be forged with debug.setmetatable, the tag
 * cannot, so a foreign userdata is never read or written as a generator. */
typedef struct gen_obj {
  uintptr_t tag;
  nd_generator g;
} gen_obj;
#define GEN_TAG ((uintptr_t)&default_key ^ (uintptr_t)0x47656e65726174ULL)

static nd_generator *new_generator(lua_State *L, uint64_t seed) {
  gen_obj *o = lua_newuserdata(L, sizeof *o);
  o->tag = GEN_TAG;
  nd_generator *g = &o->g;
  nd_generator_seed(g, seed);
  luaL_getmetatable(L, NDL_GENERATOR);
  lua_setmetatable(L, -2);
  return g;
}

/* The calling state's default generator, made on first use. */
static nd_generator *default_generator(lua_State *L) {
  lua_pushlightuserdata(L, (void *)&default_key);
  lua_rawget(L, LUA_REGISTRYINDEX);
  gen_obj *o = lua_touserdata(L, -1);
  lua_pop(L, 1);
  if (o) return &o->g;
  nd_generator *g;
  lua_pushlightuserdata(L, (void *)&default_key);
  g = new_generator(L, DEFAULT_SEED);
  lua_rawset(L, LUA_REGISTRYINDEX); /* the registry keeps it alive */
  return g;
}

nd_generator *ndL_generator_at(void *p) {
  gen_obj *o = p;
  return o && o->tag == GEN_TAG ? &o->g : NULL;
}

static nd_generator *test_generator(lua_State *L, int idx) {
  gen_obj *o = lua_touserdata(L, idx);
  if (!o || lua_type(L, idx) != LUA_TUSERDATA ||
      lua_objlen(L, idx) != sizeof *o || o->tag != GEN_TAG ||
      !lua_getmetatable(L, idx))
    return NULL;
  luaL_getmetatable(L, NDL_GENERATOR);
  int ok = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return ok ? &o->g : NULL;
}

/* The generator at idx; the hint is for g.f(...) written for g:f(...). */
static nd_generator *check_generator(lua_State *L, int idx, const char *fn) {
  nd_generator *g = test_generator(L, idx);
  if (!g && idx == 1)
    ndL_error(L, "%s: argument 1 must be a generator (nd.generator(seed); "
              "call it as g:%s(...)), got %s", fn, fn, luaL_typename(L, 1));
  if (!g)
    ndL_error(L, "%s: argument %d must be a generator (nd.generator(seed)), "
              "got %s", fn, idx, luaL_typename(L, idx));
  return g;
}

/* Sizes (numbers or one table) from idx, then an optional dtype, then
 * nothing: a fresh tensor of those sizes on the stack. */
static nd_tensor *fresh(lua_State *L, int idx, const char *fn, int dtype) {
  int64_t size[ND_MAX_DIMS];
  int next, n = ndL_sizes(L, idx, fn, size, &next);
  int ty = lua_type(L, next);
  if (ty != LUA_TNONE && ty != LUA_TNIL && ty != LUA_TSTRING)
    ndL_error(L, "%s: argument %d must be a size or a dtype name, got %s", fn,
              next, luaL_typename(L, next));
  if (!lua_isnoneornil(L, next + 1))
    ndL_error(L, "%s: unexpected argument %d (%s) after the dtype", fn,
              next + 1, luaL_typename(L, next + 1));
  dtype = ndL_dtype(L, next, fn, dtype);
  nd_tensor *t = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL_AS(L, fn, e, nd_empty(&e, t, dtype, n, size));
  ndL_charge(L, t);
  return t;
}

/* For sizes that must come as a table or numbers at idx (after leading
 * parameters): a clear error when they are missing. */
static nd_tensor *fresh_after(lua_State *L, int idx, const char *fn,
                              int dtype) {
  if (!lua_istable(L, idx) && lua_type(L, idx) != LUA_TNUMBER)
    ndL_error(L, "%s: sizes must be a table, got %s", fn,
              luaL_typename(L, idx));
  return fresh(L, idx, fn, dtype);
}

/* 0-based positions from the core, 1-based for Lua (fresh int64). */
static void one_based(nd_tensor *t) {
  int64_t *p = nd_data(t), n = nd_numel(t);
  for (int64_t i = 0; i < n; i++) p[i]++;
}

/* ---- the samplers: (L, generator, first argument) ---- */
static int s_rand(lua_State *L, nd_generator *g, int a) {
  nd_tensor *t = fresh(L, a, "rand", ND_FLOAT64);
  nd_err e = ndL_err();
  NDL_CALL_AS(L, "rand", e, nd_rand(&e, t, g));
  return 1;
}
static int s_randn(lua_State *L, nd_generator *g, int a) {
  nd_tensor *t = fresh(L, a, "randn", ND_FLOAT64);
  nd_err e = ndL_err();
  NDL_CALL_AS(L, "randn", e, nd_randn(&e, t, g));
  return 1;
}
static int s_randint(lua_State *L, nd_generator *g, int a) {
  int64_t lo = ndL_int(L, a, "randint", "low");
  int64_t hi = ndL_int(L, a + 1, "randint", "high");
  if (lo >= hi)
    return ndL_error(L, "randint: low %lld must be below high %lld",
                     (long long)lo, (long long)hi);
  nd_tensor *t = fresh_after(L, a + 2, "randint", ND_INT64);
  nd_err e = ndL_err();
  NDL_CALL_AS(L, "randint", e, nd_randint(&e, t, g, lo, hi));
  return 1;
}
static int s_uniform(lua_State *L, nd_generator *g, int a) {
  double lo = ndL_num(L, a, "uniform", "lo"), hi = ndL_num(L, a + 1, "uniform", "hi");
  nd_tensor *t = fresh_after(L, a + 2, "uniform", ND_FLOAT64);
  nd_err e = ndL_err();
  NDL_CALL_AS(L, "uniform", e, nd_uniform(&e, t, g, lo, hi));
  return 1;
}
static int s_normal(lua_State *L, nd_generator *g, int a) {
  double mean = ndL_num(L, a, "normal", "mean");
  double std = ndL_num(L, a + 1, "normal", "std");
  nd_tensor *t = fresh_after(L, a + 2, "normal", ND_FLOAT64);
  nd_err e = ndL_err();
  NDL_CALL_AS(L, "normal", e, nd_normal(&e, t, g, mean, std));
  return 1;
}
/* bernoulli(p [, sizes [, dtype]]) for a number p (float64 by default);
 * bernoulli(probs) for a floating tensor (results of its dtype). */
static int s_bernoulli(lua_State *L, nd_generator *g, int a) {
  nd_err e = ndL_err();
  nd_tensor *p = ndL_test(L, a);
  if (p) {
    if (!lua_isnoneornil(L, a + 1))
      return ndL_error(L, "bernoulli: no sizes with a tensor of "
                       "probabilities (got %s)", luaL_typename(L, a + 1));
    nd_tensor *t = ndL_new(L);
    NDL_CALL_AS(L, "bernoulli", e, nd_bernoulli_tensor(&e, t, g, p));
    ndL_charge(L, t);
    return 1;
  }
  if (lua_type(L, a) != LUA_TNUMBER)
    return ndL_error(L, "bernoulli: p must be a number or a tensor of "
                     "probabilities, got %s", luaL_typename(L, a));
  double pv = lua_tonumber(L, a);
  if (!(pv >= 0 && pv <= 1)) /* before allocating */
    return ndL_error(L, "bernoulli: probability %.17g is outside [0, 1]", pv);
  nd_tensor *t = fresh(L, a + 1, "bernoulli", ND_FLOAT64);
  NDL_CALL_AS(L, "bernoulli", e, nd_bernoulli(&e, t, g, pv));
  return 1;
}
static int s_randperm(lua_State *L, nd_generator *g, int a) {
  int64_t n = ndL_int(L, a, "randperm", "n");
  if (!lua_isnoneornil(L, a + 1))
    return ndL_error(L, "randperm: unexpected argument %d (%s) after n",
                     a + 1, luaL_typename(L, a + 1));
  nd_tensor *t = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_randperm(&e, t, g, n));
  ndL_charge(L, t);
  one_based(t);
  return 1;
}
static int s_multinomial(lua_State *L, nd_generator *g, int a) {
  nd_tensor *p = ndL_check(L, a, "multinomial");
  int64_t n = ndL_int(L, a + 1, "multinomial", "number of samples");
  int ty = lua_type(L, a + 2);
  if (ty != LUA_TNONE && ty != LUA_TNIL && ty != LUA_TBOOLEAN)
    return ndL_error(L, "multinomial: replacement must be a boolean, got %s",
                     luaL_typename(L, a + 2));
  int replacement = lua_toboolean(L, a + 2);
  nd_tensor *t = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_multinomial(&e, t, g, p, n, replacement));
  ndL_charge(L, t);
  one_based(t);
  return 1;
}

/* Each sampler as a module function (default generator) and a method. */
#define SAMPLERS(X) \
  X(rand) X(randn) X(randint) X(uniform) X(normal) X(bernoulli) \
  X(randperm) X(multinomial)
#define BIND(name)                                                        \
  static int l_##name(lua_State *L) {                                     \
    return s_##name(L, default_generator(L), 1);                          \
  }                                                                       \
  static int g_##name(lua_State *L) {                                     \
    return s_##name(L, check_generator(L, 1, #name), 2);                  \
  }
SAMPLERS(BIND)

/* ---- in place: t:uniform_(lo, hi [, g]), t:normal_(mean, std [, g]) ---- */
static nd_generator *opt_generator(lua_State *L, int idx, const char *fn) {
  return lua_isnoneornil(L, idx) ? default_generator(L)
                                 : check_generator(L, idx, fn);
}
static int l_uniform_(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "uniform_");
  double lo = ndL_num(L, 2, "uniform_", "lo"), hi = ndL_num(L, 3, "uniform_", "hi");
  nd_generator *g = opt_generator(L, 4, "uniform_");
  nd_err e = ndL_err();
  NDL_CALL_AS(L, "uniform_", e, nd_uniform(&e, t, g, lo, hi));
  lua_settop(L, 1);
  return 1;
}
static int l_normal_(lua_State *L) {
  nd_tensor *t = ndL_check(L, 1, "normal_");
  double mean = ndL_num(L, 2, "normal_", "mean");
  double std = ndL_num(L, 3, "normal_", "std");
  nd_generator *g = opt_generator(L, 4, "normal_");
  nd_err e = ndL_err();
  NDL_CALL_AS(L, "normal_", e, nd_normal(&e, t, g, mean, std));
  lua_settop(L, 1);
  return 1;
}

/* rand_like(t [, dtype]), randn_like: t's shape, by default its dtype. */
static int like(lua_State *L, const char *fn, int normal) {
  nd_tensor *src = ndL_check(L, 1, fn);
  int dtype = ndL_dtype(L, 2, fn, src->dtype);
  nd_tensor *t = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL_AS(L, fn, e, nd_empty(&e, t, dtype, src->ndim, src->size));
  ndL_charge(L, t);
  nd_generator *g = default_generator(L);
  NDL_CALL_AS(L, fn, e, normal ? nd_randn(&e, t, g) : nd_rand(&e, t, g));
  return 1;
}
static int l_rand_like(lua_State *L) { return like(L, "rand_like", 0); }
static int l_randn_like(lua_State *L) { return like(L, "randn_like", 1); }

/* ---- generators ---- */
static int l_manual_seed(lua_State *L) {
  nd_generator_seed(default_generator(L),
                    (uint64_t)ndL_int(L, 1, "manual_seed", "seed"));
  return 0;
}
static int l_generator(lua_State *L) {
  int64_t seed = ndL_optint(L, 1, "generator", "seed", DEFAULT_SEED);
  new_generator(L, (uint64_t)seed);
  return 1;
}
static int l_default_generator(lua_State *L) {
  default_generator(L);
  lua_pushlightuserdata(L, (void *)&default_key);
  lua_rawget(L, LUA_REGISTRYINDEX);
  return 1;
}
static int g_manual_seed(lua_State *L) {
  nd_generator *g = check_generator(L, 1, "manual_seed");
  nd_generator_seed(g, (uint64_t)ndL_int(L, 2, "manual_seed", "seed"));
  lua_settop(L, 1);
  return 1;
}
static int g_tostring(lua_State *L) {
  lua_pushfstring(L, "nd.Generator: %p", lua_touserdata(L, 1));
  return 1;
}

#define REG_MODULE(name) {#name, l_##name},
#define REG_METHOD(name) {#name, g_##name},
void ndL_open_random(lua_State *L) {
  static const luaL_Reg fns[] = {
      SAMPLERS(REG_MODULE)
      {"uniform_", l_uniform_}, {"normal_", l_normal_},
      {"rand_like", l_rand_like}, {"randn_like", l_randn_like},
      {"manual_seed", l_manual_seed}, {"generator", l_generator},
      {"default_generator", l_default_generator}, {NULL, NULL}};
  static const luaL_Reg methods[] = {
      SAMPLERS(REG_METHOD)
      {"manual_seed", g_manual_seed}, {NULL, NULL}};
  if (luaL_newmetatable(L, NDL_GENERATOR)) { /* once per state */
    lua_newtable(L);
    ndL_register_in(L, methods, "generator");
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, g_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushliteral(L, NDL_GENERATOR);
    lua_setfield(L, -2, "__name");
  }
  lua_pop(L, 1);
  ndL_register(L, fns);
}
