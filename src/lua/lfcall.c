/* The FFI's calls of the core with new results: rows of functions of a
 * tensor (and maybe a second), and up to three Lua values, whose results
 * the core makes into Lua's scratches (nd_result_into), copied by
 * lua/ops.lua into new small tensors. Lua hands each value over as it is,
 * with its kind (2 bits each, from bit 0: 0 nil, 1 number, 2 boolean, 3
 * a dtype, by id, from its name); each row applies the classic function's
 * rules to them and refuses (0) whatever it would not take as given -- the
 * classic function then runs, and raises. A row added to the table is on
 * the fast path by itself (C.fcalls). */
#include "lnd.h"

void ndL_into_begin(ndL_into *in, nd_tensor *r, nd_tensor *r2) {
  in->r[0] = r, in->r[1] = r2;
  for (int k = 0; k < 2; k++) {
    in->s[k] = in->r[k] ? in->r[k]->storage : NULL;
    nd_result_into(k, in->r[k], in->s[k]);
    if (in->r[k]) in->r[k]->storage = NULL; /* unset, as the core takes one */
  }
}

int ndL_into_end(ndL_into *in, nd_status st) {
  int ok = !st;
  for (int k = 0; k < 2; k++) {
    nd_tensor *r = in->r[k];
    nd_result_into(k, NULL, NULL);
    if (!r) continue;
    if (!st) { /* the reference it took (a result elsewhere: its storage's) */
      ok &= r->storage == in->s[k];
      nd_storage_release(r->storage);
    }
    r->storage = in->s[k];
  }
  return ok;
}

enum { K_NIL, K_NUM, K_BOOL, K_DTYPE };
#define KIND(i) ((kinds >> (2 * (i))) & 3)

/* What a row does: 1 results made, 2 the result is t itself, 3 a value
 * (r is 0-d: Lua reads it as a number), 0 refused. */
typedef int (*row_fn)(nd_err *e, nd_tensor *r, nd_tensor *r2,
                      const nd_tensor *t, const nd_tensor *u,
                      const double *x, int kinds);

/* An optional dim (def when nil: -1 the last), as lsort.c's opt_dim. */
static int opt_dim(const nd_tensor *t, const double *x, int kinds, int i,
                   int def) {
  if (KIND(i) == K_NIL) return def < 0 ? (t->ndim ? t->ndim + def : 0) : def;
  return KIND(i) == K_NUM ? ndL_dim_num(x[i], t) : -1;
}
/* An optional boolean (def when nil); -1 when something else. */
static int flag(const double *x, int kinds, int i, int def) {
  if (KIND(i) == K_NIL) return def;
  return KIND(i) == K_BOOL ? x[i] != 0 : -1;
}
static int done(nd_status st) { return st ? 0 : 1; }

static int to_dtype(nd_err *e, nd_tensor *r, const nd_tensor *t, int dt) {
  if (dt == t->dtype) return 2; /* PyTorch returns self */
  return done(nd_to_dtype(e, r, t, dt));
}
#define TO(name, DT)                                                        \
  static int name(nd_err *e, nd_tensor *r, nd_tensor *r2,                   \
                  const nd_tensor *t, const nd_tensor *u, const double *x,  \
                  int kinds) {                                              \
    (void)r2, (void)u, (void)x;                                             \
    if (kinds) return 0;                                                    \
    return to_dtype(e, r, t, DT);                                           \
  }
TO(f_float, ND_FLOAT32)
TO(f_double, ND_FLOAT64)
TO(f_int, ND_INT32)
TO(f_long, ND_INT64)
TO(f_byte, ND_UINT8)
TO(f_bool, ND_BOOL)

static int f_to(nd_err *e, nd_tensor *r, nd_tensor *r2, const nd_tensor *t,
                const nd_tensor *u, const double *x, int kinds) {
  (void)r2, (void)u;
  if (kinds != K_DTYPE) return 0;
  return to_dtype(e, r, t, (int)x[0]);
}

static int f_contiguous(nd_err *e, nd_tensor *r, nd_tensor *r2,
                        const nd_tensor *t, const nd_tensor *u,
                        const double *x, int kinds) {
  (void)r2, (void)u, (void)x;
  if (kinds) return 0;
  if (nd_is_contiguous(t)) return 2; /* the very same object */
  return done(nd_contiguous(e, r, t));
}

#define SCAN(name, call)                                                    \
  static int name(nd_err *e, nd_tensor *r, nd_tensor *r2,                   \
                  const nd_tensor *t, const nd_tensor *u, const double *x,  \
                  int kinds) {                                              \
    (void)r2, (void)u;                                                      \
    int d = KIND(0) == K_NUM ? ndL_dim_num(x[0], t) : -1;                   \
    if (d < 0 || kinds >> 2) return 0;                                      \
    return done(call);                                                      \
  }
SCAN(f_cumsum, nd_cumsum(e, r, t, d))
SCAN(f_cumprod, nd_cumprod(e, r, t, d))
SCAN(f_softmax, nd_softmax(e, r, t, d, 0))
SCAN(f_log_softmax, nd_softmax(e, r, t, d, 1))

/* sort/argsort(t [, dim [, descending]]): positions from the error's base
 * (1: Lua's). */
static int sort(nd_err *e, nd_tensor *v, nd_tensor *ix, const nd_tensor *t,
                const double *x, int kinds) {
  int d = opt_dim(t, x, kinds, 0, -1), desc = flag(x, kinds, 1, 0);
  if (d < 0 || desc < 0 || kinds >> 4) return 0;
  return done(nd_sort(e, v, ix, t, d, desc));
}
static int f_sort(nd_err *e, nd_tensor *r, nd_tensor *r2, const nd_tensor *t,
                  const nd_tensor *u, const double *x, int kinds) {
  (void)u;
  return sort(e, r, r2, t, x, kinds);
}
static int f_argsort(nd_err *e, nd_tensor *r, nd_tensor *r2,
                     const nd_tensor *t, const nd_tensor *u, const double *x,
                     int kinds) {
  (void)r2, (void)u;
  return sort(e, NULL, r, t, x, kinds);
}

/* var/std(t [, dim [, keepdim [, correction]]]): no dim, a value. */
static int var(nd_err *e, nd_tensor *r, const nd_tensor *t, const double *x,
               int kinds, int std) {
  int keep = flag(x, kinds, 1, 0), d = 0;
  double corr = KIND(2) == K_NUM ? x[2] : 1;
  if (keep < 0 || (KIND(2) != K_NUM && KIND(2) != K_NIL) || kinds >> 6)
    return 0;
  if (KIND(0) == K_NIL)
    return nd_var(e, r, t, 0, NULL, 0, corr, std) ? 0 : 3;
  if (KIND(0) != K_NUM || (d = ndL_dim_num(x[0], t)) < 0) return 0;
  return done(nd_var(e, r, t, 1, &d, keep, corr, std));
}
static int f_var(nd_err *e, nd_tensor *r, nd_tensor *r2, const nd_tensor *t,
                 const nd_tensor *u, const double *x, int kinds) {
  (void)r2, (void)u;
  return var(e, r, t, x, kinds, 0);
}
static int f_std(nd_err *e, nd_tensor *r, nd_tensor *r2, const nd_tensor *t,
                 const nd_tensor *u, const double *x, int kinds) {
  (void)r2, (void)u;
  return var(e, r, t, x, kinds, 1);
}

/* dot(a, b): a value. */
static int f_dot(nd_err *e, nd_tensor *r, nd_tensor *r2, const nd_tensor *t,
                 const nd_tensor *u, const double *x, int kinds) {
  (void)r2, (void)x;
  if (!u || kinds) return 0;
  return nd_dot(e, r, t, u) ? 0 : 3;
}

/* name, the tensors it takes (1 or 2), its results (1 or 2). */
static const struct {
  const char *name;
  int tensors, results;
  row_fn f;
} rows[] = {
    {"contiguous", 1, 1, f_contiguous}, {"to", 1, 1, f_to},
    {"float", 1, 1, f_float}, {"double", 1, 1, f_double},
    {"int", 1, 1, f_int}, {"long", 1, 1, f_long}, {"byte", 1, 1, f_byte},
    {"bool", 1, 1, f_bool}, {"cumsum", 1, 1, f_cumsum},
    {"cumprod", 1, 1, f_cumprod}, {"softmax", 1, 1, f_softmax},
    {"log_softmax", 1, 1, f_log_softmax}, {"sort", 1, 2, f_sort},
    {"argsort", 1, 1, f_argsort}, {"var", 1, 1, f_var}, {"std", 1, 1, f_std},
    {"dot", 2, 1, f_dot},
};
enum { NROWS = sizeof rows / sizeof *rows };

int ndL_fcall(nd_err *e, nd_tensor *r, nd_tensor *r2, int id,
              const nd_tensor *t, const nd_tensor *u, const double *x,
              int kinds) {
  if (id < 0 || id >= NROWS || !t || !r || !r->storage ||
      (rows[id].results > 1 && (!r2 || !r2->storage)) ||
      (rows[id].tensors < 2 && u))
    return 0;
  if (rows[id].results < 2) r2 = NULL;
  ndL_into in;
  ndL_into_begin(&in, r, r2);
  e->code = ND_OK;
  int code = rows[id].f(e, r, r2, t, u, x, kinds);
  int made = code == 1 || code == 3; /* 2 (t itself) made nothing */
  if (!ndL_into_end(&in, made ? ND_OK : ND_EINVAL) && made) return 0;
  return code;
}

/* C.fcalls: { name, id, tensors, results } per row. */
void ndL_open_fcalls(lua_State *L) {
  lua_newtable(L);
  for (int i = 0; i < NROWS; i++) {
    lua_newtable(L);
    lua_pushstring(L, rows[i].name);
    lua_setfield(L, -2, "name");
    lua_pushinteger(L, i);
    lua_setfield(L, -2, "id");
    lua_pushinteger(L, rows[i].tensors);
    lua_setfield(L, -2, "tensors");
    lua_pushinteger(L, rows[i].results);
    lua_setfield(L, -2, "results");
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "fcalls");
}
