/* Contractions (src/core/contract/): einsum and its plan, tensordot,
 * inner, kron, cross, dist, normalize. Dims are 1-based (negative: from the end), as everywhere. */
#include "lnd.h"
#include <string.h>

/* A new result r, or its one element as a Lua value when scalar says so. */
static int result(lua_State *L, nd_tensor *r, int scalar) {
  if (!scalar) {
    ndL_charge(L, r);
    return 1;
  }
  int64_t none[1] = {0};
  ndL_push_elem(L, r, none);
  return 1;
}

/* tensordot(a, b, dims): dims a count n (a's last n against b's first n,
 * NumPy's) or {{a's dims}, {b's dims}}. */
static int l_tensordot(lua_State *L) {
  const char *fn = "tensordot";
  nd_tensor *a = ndL_check(L, 1, fn), *b = ndL_check(L, 2, fn);
  int da[ND_MAX_DIMS], db[ND_MAX_DIMS], n;
  if (lua_type(L, 3) == LUA_TNUMBER) {
    int64_t k = ndL_int(L, 3, fn, "dims");
    if (k < 0 || k > a->ndim || k > b->ndim)
      return ndL_error(L, "%s: cannot contract %lld dims of tensors of %d "
                       "and %d dims", fn, (long long)k, a->ndim, b->ndim);
    n = (int)k;
    for (int i = 0; i < n; i++) da[i] = a->ndim - n + i, db[i] = i;
  } else if (lua_istable(L, 3)) {
    lua_rawgeti(L, 3, 1);
    lua_rawgeti(L, 3, 2);
    if (!lua_istable(L, -2) || !lua_istable(L, -1))
      return ndL_error(L, "%s: dims must be a count or two tables of dims",
                       fn);
    n = ndL_dimlist(L, -2, a->ndim, fn, da);
    if (ndL_dimlist(L, -1, b->ndim, fn, db) != n)
      return ndL_error(L, "%s: %d dims of a against %d of b", fn, n,
                       (int)lua_objlen(L, -1));
    lua_pop(L, 2);
  } else {
    return ndL_error(L, "%s: dims must be a count or two tables of dims, "
                     "got %s", fn, ndL_typename(L, 3));
  }
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_tensordot(&e, r, a, b, n, da, db));
  return result(L, r, 0);
}

/* inner(a, b): a number for two 1-D tensors, as dot. */
static int l_inner(lua_State *L) {
  nd_tensor *a = ndL_check(L, 1, "inner"), *b = ndL_check(L, 2, "inner");
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_inner(&e, r, a, b));
  return result(L, r, a->ndim == 1 && b->ndim == 1);
}

static int l_kron(lua_State *L) {
  nd_tensor *a = ndL_check(L, 1, "kron"), *b = ndL_check(L, 2, "kron");
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_kron(&e, r, a, b));
  return result(L, r, 0);
}

/* cross(a, b [, dim = -1]): dim counts among the broadcast dims. */
static int l_cross(lua_State *L) {
  nd_tensor *a = ndL_check(L, 1, "cross"), *b = ndL_check(L, 2, "cross");
  int n = a->ndim > b->ndim ? a->ndim : b->ndim;
  int dim = lua_isnoneornil(L, 3) ? n - 1 : ndL_dim(L, 3, n, "cross");
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_cross(&e, r, a, b, dim));
  return result(L, r, 0);
}

/* dist(a, b [, p = 2]) -> a number. */
static int l_dist(lua_State *L) {
  nd_tensor *a = ndL_check(L, 1, "dist"), *b = ndL_check(L, 2, "dist");
  double p = ndL_optnum(L, 3, "dist", "p", 2);
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_dist(&e, r, a, b, p));
  return result(L, r, 1);
}

/* normalize(t [, p = 2 [, dim = 2 [, eps = 1e-12]]]): PyTorch's
 * F.normalize (its dim=1 is nd's 2). */
static int l_normalize(lua_State *L) {
  const char *fn = "normalize";
  nd_tensor *t = ndL_check(L, 1, fn);
  double p = ndL_optnum(L, 2, fn, "p", 2);
  int dim = 1;
  if (!lua_isnoneornil(L, 3)) dim = ndL_dim(L, 3, t->ndim, fn);
  double eps = ndL_optnum(L, 4, fn, "eps", 1e-12);
  nd_tensor *r = ndL_new(L);
  nd_err e = ndL_err();
  NDL_CALL(L, e, nd_normalize(&e, r, t, p, dim, eps));
  return result(L, r, 0);
}

/* einsum(spec, a, b, ...) or einsum(spec, {a, b, ...}): the operands'
 * headers into ops, their count returned. */
static int operands(lua_State *L, const char *fn, const nd_tensor **ops) {
  int n;
  if (lua_gettop(L) == 2 && lua_istable(L, 2) && !ndL_test(L, 2)) {
    n = (int)lua_objlen(L, 2);
    if (n > ND_EINSUM_MAX_OPERANDS)
      return ndL_error(L, "%s: %d operands given, at most %d supported", fn,
                       n, ND_EINSUM_MAX_OPERANDS);
    for (int k = 0; k < n; k++) {
      lua_rawgeti(L, 2, k + 1);
      if (!(ops[k] = ndL_test(L, -1)))
        return ndL_error(L, "%s: operand %d of the table is a %s, not a "
                         "tensor", fn, k + 1, ndL_typename(L, -1));
      lua_pop(L, 1); /* the table keeps it */
    }
    return n;
  }
  n = lua_gettop(L) - 1;
  if (n > ND_EINSUM_MAX_OPERANDS)
    return ndL_error(L, "%s: %d operands given, at most %d supported", fn, n,
                     ND_EINSUM_MAX_OPERANDS);
  for (int k = 0; k < n; k++) ops[k] = ndL_check(L, k + 2, fn);
  return n;
}

static const char *spec_arg(lua_State *L, const char *fn) {
  if (lua_type(L, 1) != LUA_TSTRING)
    ndL_error(L, "%s: the spec (argument 1) must be a string like "
              "\"ij,jk->ik\", got %s", fn, ndL_typename(L, 1));
  return lua_tostring(L, 1);
}

/* The last einsum's path, one per lua_State (a userdata in the
 * registry): a loop calling one einsum on operands of the same dtypes,
 * sizes and strides plans once (planning costs several times a small
 * product). The path follows this header in the userdata. */
typedef struct {
  int n, cap; /* operands planned for (0: none); capacity */
  size_t len;
  char spec[256];
  int32_t dtype[ND_EINSUM_MAX_OPERANDS], ndim[ND_EINSUM_MAX_OPERANDS];
  int64_t size[ND_EINSUM_MAX_OPERANDS][ND_MAX_DIMS];
  int64_t stride[ND_EINSUM_MAX_OPERANDS][ND_MAX_DIMS];
} einsum_cache;
static char cache_key;

static einsum_cache *cache_for(lua_State *L, int n) {
  lua_pushlightuserdata(L, &cache_key);
  lua_rawget(L, LUA_REGISTRYINDEX);
  einsum_cache *c = lua_touserdata(L, -1);
  lua_pop(L, 1); /* the registry keeps it */
  if (c && c->cap >= n) return c;
  c = lua_newuserdata(L, sizeof *c + nd_einsum_path_bytes(n));
  c->n = 0;
  c->cap = n;
  lua_pushlightuserdata(L, &cache_key);
  lua_pushvalue(L, -2);
  lua_rawset(L, LUA_REGISTRYINDEX);
  lua_pop(L, 1);
  return c;
}
static nd_einsum_path *cache_path(einsum_cache *c) {
  return (nd_einsum_path *)(void *)(c + 1);
}
static int cache_hit(const einsum_cache *c, const char *spec, size_t len,
                     int n, const nd_tensor **ops) {
  if (c->n != n || c->len != len || memcmp(c->spec, spec, len)) return 0;
  for (int k = 0; k < n; k++) {
    const nd_tensor *t = ops[k];
    if (t->dtype != c->dtype[k] || t->ndim != c->ndim[k]) return 0;
    for (int i = 0; i < t->ndim; i++)
      if (t->size[i] != c->size[k][i] || t->stride[i] != c->stride[k][i])
        return 0;
  }
  return 1;
}
static void cache_keep(einsum_cache *c, const char *spec, size_t len, int n,
                       const nd_tensor **ops) {
  if (len > sizeof c->spec) return; /* c->n stays 0 */
  memcpy(c->spec, spec, len);
  c->len = len;
  for (int k = 0; k < n; k++) {
    const nd_tensor *t = ops[k];
    c->dtype[k] = t->dtype;
    c->ndim[k] = t->ndim;
    for (int i = 0; i < t->ndim; i++)
      c->size[k][i] = t->size[i], c->stride[k][i] = t->stride[i];
  }
  c->n = n;
}

/* einsum(spec, ...) -> a new tensor (0-d for a scalar result). */
static int l_einsum(lua_State *L) {
  const char *spec = spec_arg(L, "einsum");
  size_t len = lua_objlen(L, 1);
  const nd_tensor *ops[ND_EINSUM_MAX_OPERANDS];
  int n = operands(L, "einsum", ops);
  nd_tensor *r = ndL_new(L);
  einsum_cache *c = cache_for(L, n < 1 ? 1 : n);
  nd_err e = ndL_err();
  if (!cache_hit(c, spec, len, n, ops)) {
    c->n = 0;
    nd_einsum_path *p = nd_einsum_path_init(cache_path(c), n);
    if (nd_einsum_plan(&e, p, spec, n, ops)) return ndL_raise(L, &e);
    cache_keep(c, spec, len, n, ops);
  }
  NDL_CALL(L, e, nd_einsum_run(&e, r, cache_path(c), ops));
  return result(L, r, 0);
}

static void push_ints(lua_State *L, int n, const int64_t *v) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    ndL_pushint(L, v[i]);
    lua_rawseti(L, -2, i + 1);
  }
}
/* {size =, stride =, labels = "b,i,jk"} */
static void push_view(lua_State *L, const nd_einsum_view *v) {
  lua_createtable(L, 0, 3);
  push_ints(L, v->ndim, v->size);
  lua_setfield(L, -2, "size");
  push_ints(L, v->ndim, v->stride);
  lua_setfield(L, -2, "stride");
  ndL_setstr(L, "labels", v->labels);
}

static void push_step(lua_State *L, const nd_einsum_step *s) {
  static const char *const kinds[] = {"matmul", "mul", "copy"};
  static const char *const what[] = {"a", "b", "out"};
  lua_createtable(L, 0, 8);
  ndL_setstr(L, "spec", s->spec);
  ndL_setstr(L, "kind", kinds[s->kind]);
  lua_createtable(L, 2, 0);
  ndL_pushint(L, s->x + 1);
  lua_rawseti(L, -2, 1);
  if (s->y >= 0) {
    ndL_pushint(L, s->y + 1);
    lua_rawseti(L, -2, 2);
  }
  lua_setfield(L, -2, "operands");
  lua_createtable(L, 0, 3);
  push_view(L, &s->a);
  lua_setfield(L, -2, "a");
  if (s->kind != ND_EINSUM_COPY) {
    push_view(L, &s->b);
    lua_setfield(L, -2, "b");
  }
  push_view(L, &s->out);
  lua_setfield(L, -2, "out");
  for (int k = 0; k < 2; k++)
    if (s->merge & (1 << k)) {
      push_view(L, &s->merge_src[k]);
      lua_setfield(L, -2, k ? "b_copied" : "a_copied");
    }
  lua_setfield(L, -2, "views");
  if (s->kind == ND_EINSUM_MATMUL) {
    ndL_push_blas_plan(L, &s->call);
    lua_setfield(L, -2, "call");
  }
  lua_createtable(L, s->ncopies, 0);
  for (int i = 0; i < s->ncopies; i++) {
    char why[96];
    int w = s->copy_what[i];
    if (s->copy_why[i] == ND_EINSUM_MERGE)
      snprintf(why, sizeof why, "its contracted labels are not one stride");
    else if (s->copy_why[i] == ND_EINSUM_DTYPE)
      snprintf(why, sizeof why, "converted to %s", nd_dtype_name(s->call.dtype));
    else
      snprintf(why, sizeof why, "BLAS cannot %s its strides",
               w == 2 ? "write" : "read");
    lua_createtable(L, 0, 3);
    ndL_setstr(L, "operand", what[w]);
    ndL_setstr(L, "why", why);
    ndL_setint(L, "bytes", s->copy_bytes[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "copies");
  push_ints(L, s->ndim, s->size);
  lua_setfield(L, -2, "size");
  ndL_setint(L, "bytes", s->bytes);
  ndL_setint(L, "allocations", s->allocations);
}

/* einsum_plan(spec, ...) -> { spec, dtype, size, order, prepare, steps,
 * bytes, allocations }: what einsum would do, nothing computed. */
static int l_einsum_plan(lua_State *L) {
  const char *spec = spec_arg(L, "einsum_plan");
  const nd_tensor *ops[ND_EINSUM_MAX_OPERANDS];
  int n = operands(L, "einsum_plan", ops);
  nd_einsum_path *p = nd_einsum_path_init(
      lua_newuserdata(L, nd_einsum_path_bytes(n)), n);
  nd_err e = ndL_err();
  if (nd_einsum_plan(&e, p, spec, n, ops)) return ndL_raise(L, &e);
  lua_createtable(L, 0, 9);
  ndL_setstr(L, "spec", p->spec);
  ndL_setstr(L, "dtype", nd_dtype_name(p->dtype));
  push_ints(L, p->ndim, p->size);
  lua_setfield(L, -2, "size");
  lua_createtable(L, p->nsteps, 0);
  for (int s = 0; s < p->nsteps; s++) {
    lua_createtable(L, 2, 0);
    for (int j = 0; j < 2; j++) {
      int o = j ? p->step[s].y : p->step[s].x;
      if (o < 0) continue;
      ndL_pushint(L, o + 1);
      lua_rawseti(L, -2, j + 1);
    }
    lua_rawseti(L, -2, s + 1);
  }
  lua_setfield(L, -2, "order");
  lua_createtable(L, n, 0);
  for (int k = 0; k < n; k++) {
    const nd_einsum_prep *pr = &p->prep[k];
    lua_createtable(L, 0, 6);
    ndL_setstr(L, "spec", pr->spec);
    lua_pushboolean(L, pr->diagonal);
    lua_setfield(L, -2, "diagonal");
    ndL_setstr(L, "summed", pr->summed);
    push_view(L, &pr->view);
    lua_setfield(L, -2, "view");
    ndL_setint(L, "bytes", pr->bytes);
    ndL_setint(L, "allocations", pr->allocations);
    lua_rawseti(L, -2, k + 1);
  }
  lua_setfield(L, -2, "prepare");
  lua_createtable(L, p->nsteps, 0);
  for (int s = 0; s < p->nsteps; s++) {
    push_step(L, &p->step[s]);
    lua_rawseti(L, -2, s + 1);
  }
  lua_setfield(L, -2, "steps");
  ndL_setint(L, "bytes", p->bytes);
  ndL_setint(L, "allocations", p->allocations);
  return 1;
}

void ndL_open_contract(lua_State *L) {
  static const luaL_Reg fns[] = {
      {"einsum", l_einsum}, {"einsum_plan", l_einsum_plan},
      {"tensordot", l_tensordot}, {"inner", l_inner}, {"kron", l_kron},
      {"cross", l_cross}, {"dist", l_dist}, {"normalize", l_normalize},
      {NULL, NULL}};
  ndL_register(L, fns);
}
