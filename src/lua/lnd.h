/* The Lua binding's shared helpers: with the src/lua files, the only
 * place that sees lua.h. Each area file exports one ndL_open_<area>() that
 * registers its functions into the table on top of the stack. */
#ifndef ND_LND_H
#define ND_LND_H

#include "nd.h"
#include "../core/base/nd_internal.h" /* the binding sits on the core */
#include "nd_lua.h" /* luaopen_nd, exported */
#include <lauxlib.h>
#include <lua.h>

#if LUA_VERSION_NUM >= 502
#define lua_objlen lua_rawlen
#endif

#define NDL_TENSOR "nd.Tensor" /* registry name of the metatable */

/* A tensor object: see lobject.c. Only lobject.c, lhost.c and lua/ffi.lua look
 * inside; bindings use ndL_new/ndL_check/ndL_test. */
typedef struct ndL_obj {
  uint64_t tag;   /* NDL_LIVE or NDL_DEAD (released) */
  nd_tensor *t;   /* owner: from the allocator hook, freed by __gc only;
                     view: inline, right after this struct */
  nd_free_fn free; /* a userdata owner's header's; a cdata's: lua/ffi.lua's
                      mark that its header has no internal overlap */
  void *ud;
  uint64_t kind;  /* NDL_VIEW, NDL_ANCHORED (see lobject.c) */
} ndL_obj;
#define NDL_VIEW 1     /* no finalizer; holds no reference of its own */
#define NDL_ANCHORED 2 /* an owner whose views exist (or existed) */
#define NDL_CDATA 4    /* a cdata (under LuaJIT's FFI every tensor is one):
                          its header inline, its anchor in the keep table */
#define NDL_INLINE 8   /* with NDL_CDATA: a small tensor made by the FFI
                          (lua/small.lua), its elements inside the cdata */
/* Holds a reference to its storage: an owner, userdata or cdata. */
#define NDL_OWNS(o) (!((o)->kind & (NDL_VIEW | NDL_INLINE)))
/* The object at idx (live or released), NULL when idx holds no nd tensor. */
ndL_obj *ndL_object(lua_State *L, int idx);

/* luaL_typename, except that a tensor is "tensor" (a userdata or a cdata
 * by the runtime), a released one "released tensor", so every "must be a
 * tensor, got ..." message says why (issue 14), and a
 * missing argument is "nil": LuaJIT's fast paths pass their fixed
 * parameters on, so the C function cannot tell none from nil there. */
const char *ndL_typename(lua_State *L, int idx);
#undef luaL_typename
#define luaL_typename(L, i) ndL_typename(L, (i))

/* A fresh unset header as a full userdata with the tensor metatable. */
nd_tensor *ndL_new(lua_State *L);
/* A fresh unset header for a view of the live tensor at bidx: a userdata
 * without a finalizer that keeps the base's owner alive through its
 * environment (uservalue). Once the core has filled it, ndL_borrow drops
 * the reference the core took: the owner's reference covers the view. On
 * an error before that, the unset header needs no cleanup. */
nd_tensor *ndL_new_view(lua_State *L, int bidx);
static inline void ndL_borrow(nd_tensor *r) {
  if (r->storage) __atomic_fetch_sub(&r->storage->refs, 1, __ATOMIC_ACQ_REL);
}
/* Before C keeps a reference to the storage of the tensor at idx past
 * the call: a small tensor made by the FFI (or a view of one) is armed so
 * that its elements stay while that reference does (see lobject.c). */
void ndL_arm(lua_State *L, int idx);
/* The tensor at idx, or a Lua error naming fn and what was found. */
nd_tensor *ndL_check(lua_State *L, int idx, const char *fn);
/* NULL when not a live tensor (foreign, released, or unset). */
nd_tensor *ndL_test(lua_State *L, int idx);

/* The name errors of the running binding function are reported under:
 * the one it was registered as (the function the user called), NULL in
 * an internal entry point. */
const char *ndL_fname(lua_State *L);
/* An error context counting dims from 1, naming messages after the
 * function the user called. */
static inline nd_err ndL_err_(lua_State *L) {
  nd_err e;
  e.code = ND_OK;
  e.base = 1;
  e.fn = ndL_fname(L);
  e.msg[0] = 0;
  return e;
}
#define ndL_err() ndL_err_(L)
int ndL_raise(lua_State *L, const nd_err *e); /* lua_error with e->msg */
/* luaL_error with printf's formats (lua_pushfstring has no %lld). */
int ndL_error(lua_State *L, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Run a core call; on ND_ENOMEM collect garbage once and retry (tensor
 * memory lives outside the Lua heap, so a collection may free some).
 * NDL_CALL_AS names errors after fn instead (a function reached through
 * another entry point: t[mask] is masked_select). */
#define NDL_CALL_AS(L, name, e, call)                                       \
  do {                                                                      \
    const char *fn_ = (name);                                               \
    if (fn_) (e).fn = fn_;                                                  \
    nd_status s_ = (call);                                                  \
    if (s_ == ND_ENOMEM) {                                                  \
      lua_gc((L), LUA_GCCOLLECT, 0);                                        \
      s_ = (call);                                                          \
    }                                                                       \
    if (s_) ndL_raise((L), &(e));                                           \
  } while (0)
#define NDL_CALL(L, e, call) NDL_CALL_AS(L, NULL, e, call)

/* Tell the collector about element memory it cannot see, when t owns a
 * storage nobody else shares yet. */
void ndL_charge(lua_State *L, const nd_tensor *t);
/* Its first half, without Lua (lua/ffi.lua's adopted results, through the
 * FFI): t's bytes added to *debt; 1 when a step may be due. */
int ndL_charge_add(int64_t *debt, const nd_tensor *t);

/* Argument parsing; errors name fn and the argument. */
int64_t ndL_int(lua_State *L, int idx, const char *fn, const char *what);
/* The spatial option at idx (conv, pool): a number for every one of dims,
 * or a table of dims integers (or of one, when one_ok), into v. */
void ndL_per_dim(lua_State *L, int idx, const char *fn, const char *key,
                 int dims, int one_ok, int64_t *v);
int64_t ndL_optint(lua_State *L, int idx, const char *fn, const char *what,
                   int64_t def);
double ndL_num(lua_State *L, int idx, const char *fn, const char *what);
double ndL_optnum(lua_State *L, int idx, const char *fn, const char *what,
                  double def);
/* A position p among n (1..n, or -n..-1 from the end) as a 0-based one,
 * or -1 when it is not one: the rule of every dim and index argument. */
static inline int64_t ndL_pos(int64_t p, int64_t n) {
  if (p > 0 && p <= n) return p - 1;
  if (p < 0 && p >= -n) return n + p;
  return -1;
}
/* A dim given as a Lua number d of t: 1..ndim or -ndim..-1, and 1 or -1
 * for a 0-d tensor (ndL_dim_of's rule); 0-based, or -1 when not one. */
static inline int ndL_dim_num(double d, const nd_tensor *t) {
  int64_t p;
  if (!nd_whole(d, &p)) return -1;
  if (t->ndim == 0) return p == 1 || p == -1 ? 0 : -1;
  return (int)ndL_pos(p, t->ndim);
}
/* The LuaJIT fast paths' new results (lfcall.c): the n (0..3) headers r,
 * whose storages are Lua's scratches, are named to the core
 * (nd_result_into) and unset for the call. After a call that succeeded
 * (st 0), ndL_into_end leaves each result either in its scratch, of a
 * layout a small tensor takes (ndL_small_of), or with a storage of its
 * own (one reference, for Lua to adopt); a result the call did not make
 * gets ndim -1. After a failure, or when it returns 0 (out of memory),
 * every result has its scratch back and holds nothing. */
typedef struct ndL_into {
  nd_tensor *r[3];
  nd_storage *s[3];
} ndL_into;
void ndL_into_begin(ndL_into *in, nd_tensor *const *r, int n);
int ndL_into_end(ndL_into *in, nd_status st);
int ndL_fcall(nd_err *e, nd_tensor *const *r, int id, const nd_tensor *t,
              const nd_tensor *const *ts, const nd_tensor *const *tl,
              const double *x, const double *dv, int kinds, void *gen);
/* The generator of the generator object whose payload is at p (the
 * state's default one, handed to the FFI by lua/ops.lua), or NULL when p
 * is not one (lrandom.c). */
nd_generator *ndL_generator_at(void *p);
/* A number or boolean as the 0-d tensor of dtype that value arguments
 * become (masked_fill_'s value, ...): the scalar rule (lfcall.c, for
 * lindex.c too). */
nd_status ndL_value0(nd_err *e, nd_tensor *v, int dtype, int isbool,
                     double x);
void ndL_open_fcalls(lua_State *L);
/* An index table's entry: a number (m = -1, v[0]) or a range {first,
 * last, step} of m (0..3) entries. */
typedef struct ndL_entry {
  int m;
  int64_t v[3];
} ndL_entry;
/* The core's 0-based indices of a fresh int64 tensor, made 1-based. */
void ndL_one_based(const nd_tensor *ix);
/* r = t indexed by the n entries x (n <= t->ndim), t[{...}]'s rule
 * (lpos.c): r borrows t's storage; *numbers counts the number entries.
 * Errors name fn. */
nd_status ndL_index_entries(nd_err *e, nd_tensor *r, const nd_tensor *t,
                            int n, const ndL_entry *x, const char *fn,
                            int *numbers);
/* A 1-based (or negative) position among n, as a 0-based one. */
int ndL_dim(lua_State *L, int idx, int ndim, const char *fn);
int64_t ndL_index(lua_State *L, int idx, int64_t n, const char *fn,
                  const char *what);
/* Sizes given as numbers from idx on, or as one table at idx; stops at a
 * string (a dtype) or nil. Returns the count; *next gets the index after.
 * ndL_shape also lets -1 through (view, reshape, expand). */
int ndL_sizes(lua_State *L, int idx, const char *fn, int64_t *size,
              int *next);
int ndL_shape(lua_State *L, int idx, const char *fn, int64_t *size,
              int *next);
/* Registers functions into the table on top of the stack, each called
 * through a dispatcher that refuses arguments past its last parameter
 * and names its errors (lcall.c); ns "linalg" or "generator" picks that
 * family's parameter lists (largs.c). */
void ndL_register(lua_State *L, const luaL_Reg *fns);
void ndL_register_in(lua_State *L, const luaL_Reg *fns, const char *ns);
void ndL_register_module(lua_State *L, const luaL_Reg *fns, const char *mod);
/* What function name takes (largs.c): its parameter list and a hint for
 * a misuse, and how many arguments (-1 any, -2 not a listed function). */
int ndL_params(const char *ns, const char *name, const char **params,
               const char **hint);
/* A dtype name at idx, or def when the slot is nil/none. */
int ndL_dtype(lua_State *L, int idx, const char *fn, int def);
/* A dim of t; a 0-d tensor takes 1 or -1 (PyTorch's 0 or -1) as 0, for
 * the functions whose core accepts dim 0 of a 0-d tensor. */
int ndL_dim_of(lua_State *L, int idx, const nd_tensor *t, const char *fn);
/* A table of dims (or one number) as 0-based dims; returns the count.
 * With ndim 0, 1 and -1 are taken as 0 (see ndL_dim_of). */
int ndL_dimlist(lua_State *L, int idx, int ndim, const char *fn, int *dims);

/* An integral count or position: an integer on Lua 5.3+, else a number. */
/* t[k] = v for the table on top (the plan tables' fields). */
void ndL_setint(lua_State *L, const char *k, int64_t v);
void ndL_setstr(lua_State *L, const char *k, const char *v);
static inline void ndL_pushint(lua_State *L, int64_t v) {
#if LUA_VERSION_NUM >= 503
  lua_pushinteger(L, (lua_Integer)v);
#else
  lua_pushnumber(L, (lua_Number)v);
#endif
}

/* Is the number at idx integral (a 5.3+ integer, or a double with no
 * fraction within int64)? Then *v holds it. Integral values are written as
 * integers (wrapping into narrower integer dtypes, like every integer
 * conversion), whatever Lua's number representation. */
int ndL_integral(lua_State *L, int idx, int64_t *v);

/* Push one element (number, boolean, or int64 as the Lua can hold it). */
void ndL_push_elem(lua_State *L, const nd_tensor *t, const int64_t *idx);
/* Write a Lua number or boolean into one element. */
/* The number or boolean at idx as a value to write into a tensor of
 * dtype (nd_scalar_fits's operand; integers exact on 5.3+); 0 when it is
 * neither. */
int ndL_scalar(lua_State *L, int idx, int dtype, nd_operand *s);
/* Raises, naming fn, when the number at idx is no value of dtype: for the
 * constructors, which check before they allocate (a raise must find no
 * storage in a fresh header). */
void ndL_check_value(lua_State *L, int idx, int dtype, const char *fn);
/* fill_ of t with the number or boolean at idx (*st its status); 0 when
 * the value is neither. */
int ndL_fill_value(lua_State *L, int idx, const nd_tensor *t, nd_err *e,
                   nd_status *st);
void ndL_set_elem(lua_State *L, int vidx, const nd_tensor *t,
                  const int64_t *idx, const char *fn);

void ndL_open_tensor(lua_State *L);
void ndL_open_construct(lua_State *L);
void ndL_open_views(lua_State *L);
void ndL_open_copies(lua_State *L);
void ndL_open_ops(lua_State *L);
void ndL_open_consts(lua_State *L); /* C.optable, C.consts (internal) */
void ndL_open_matmul(lua_State *L);
void ndL_push_blas_plan(lua_State *L, const nd_blas_plan *p); /* lmatmul.c */
void ndL_open_contract(lua_State *L);
void ndL_open_conv(lua_State *L);
void ndL_open_count(lua_State *L);
void ndL_open_pool(lua_State *L);
void ndL_open_io(lua_State *L);
void ndL_open_wrap(lua_State *L);
/* The owners of nd.wrap's memory (lowners.c; lwrap.c says why): an anchor
 * is shared by a storage, whose release callback ndL_anchor_release marks
 * it, and this state's owners table (registry "nd.Owners", anchor ->
 * owner), which ndL_owners pushes (made on first use). ndL_owners_sweep
 * drops the owners in table idx whose storage is gone (all when `all`);
 * ndL_sweep_owners does it for this state's table. */
typedef struct ndL_anchor {
  long refs;     /* the storage's and the state's */
  int released;  /* set by the storage's release callback */
  nd_free_fn free; /* from the allocator hook, as every block of nd's */
  void *ud;
} ndL_anchor;
void ndL_anchor_release(void *data, void *ctx);
void ndL_owners(lua_State *L);
void ndL_owners_sweep(lua_State *L, int idx, int all);
void ndL_sweep_owners(lua_State *L);
void ndL_open_math(lua_State *L);
/* Elementwise bindings (lops.c): a Lua value as an operand (tensor, number
 * or boolean), and the f(a, b [, out]) / a:f_(b) and f(a [, out]) / a:f_()
 * forms over any core function with nd_binary's / nd_unary's signature. */
void ndL_operand(lua_State *L, int idx, nd_operand *o, const char *fn,
                 int inplace);
typedef nd_status (*ndL_binary_fn)(nd_err *, nd_tensor *, int, int,
                                   const nd_operand *, const nd_operand *);
typedef nd_status (*ndL_unary_fn)(nd_err *, nd_tensor *, int, int,
                                  const nd_tensor *);
int ndL_binary(lua_State *L, ndL_binary_fn call, int op, const char *fn,
               int inplace);
int ndL_unary(lua_State *L, ndL_unary_fn call, int op, const char *fn,
              int inplace);
void ndL_open_sort(lua_State *L);
void ndL_open_index(lua_State *L);
/* t[k] / t[k] = v with a tensor key (lindex.c); assign: 0 read, 1 write. */
int ndL_tensor_key(lua_State *L, int assign);
void ndL_open_linalg(lua_State *L);
void ndL_open_random(lua_State *L);
void ndL_open_filter(lua_State *L); /* lfilter.c */
void ndL_open_image(lua_State *L); /* limage.c: nd.image */
void ndL_open_safetensors(lua_State *L); /* lsafetensors.c: nd.safetensors */
int luaopen_nd(lua_State *L);
/* The object and call functions, metatables and tables into the table on
 * top (lobject.c, lcall.c; ndL_open calls them first). */
void ndL_open_object(lua_State *L);
void ndL_open_ffi(lua_State *L);
/* A small tensor's elements fit in this many bytes inside its object. */
#define NDL_SMALL 128
/* The bytes of a new small tensor of dtype and n sizes, row-major, or of
 * the layout of plan (dense in some order); 0 when it would be empty, too
 * big or (plan) not dense. With r, r's dims and strides are set too. */
int ndL_small_sized(nd_tensor *r, int dtype, int n, const int64_t *size);
int ndL_small_of(nd_tensor *r, const nd_tensor *plan);
/* Whether s holds a small tensor's elements inside its object (which a
 * result keeping a reference needs armed first: ndL_arm). */
int ndL_inline(const nd_storage *s);
/* The finalizer lua/ffi.lua gives a cdata owner and an armed small tensor. */
void ndL_obj_gc(void *p);
void ndL_open_call(lua_State *L);
/* luaopen_nd's body (lnd.c): the C functions' table, which
 * areas(L) fills, and the Lua layer run over it. linit.c passes the list
 * of areas, so that lnd.c, whose helpers every area calls, calls none. */
int ndL_open(lua_State *L, void (*areas)(lua_State *L));
/* Shared argument and result helpers (lhelp.c). The tensor t at 1, a dim
 * of t at 2 (into *dim, 0-based) and an index tensor at 3 (*index). */
nd_tensor *ndL_dim_index(lua_State *L, const char *fn, int *dim,
                         nd_tensor **index);
/* n fresh results (ndL_new each, pushed in order) into r[0..n). */
void ndL_new_n(lua_State *L, int n, nd_tensor **r);
/* Return the n results r made by ndL_new_n (the top n slots): charged to
 * the collector, or with `numbers` and 0-d results pushed again as Lua
 * values. Returns n, the C function's result count. */
int ndL_return(lua_State *L, int n, nd_tensor *const *r, int numbers);

#endif
