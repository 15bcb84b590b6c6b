/* The C half of LuaJIT's fast paths: the functions lua/ffi.lua reaches
 * through the FFI, handed over as one table of pointers (ffi_api). Lua
 * passes its own arguments (numbers, 1-based positions, negatives from
 * the end) and C applies the rules the classic binding applies -- the
 * positions of lnd.h, the core's views, nd_is_contiguous, the element
 * conversion -- so no geometry and no bound lives in Lua. Each returns
 * whether it did the work; when it did not, Lua calls the classic
 * function, which does it or raises the error naming the function. */
#include "lnd.h"
#include <math.h>
#include <string.h>

/* A dim of n dims (ndL_dim), or a position in a dim of n (ndL_index). */
static int64_t pos(double d, int64_t n) {
  int64_t p;
  return nd_whole(d, &p) ? ndL_pos(p, n) : -1;
}

/* The views lua/views.lua makes through view(): its rows (C.fviews) name
 * the methods it installs; "index" is t[i] of a tensor of 2 or more dims. */
enum { V_T, V_TRANSPOSE, V_NARROW, V_SELECT, V_INDEX, V_UNSQUEEZE, V_SQUEEZE,
       V_VIEW, V_EXPAND, V_PERMUTE, V_MOVEDIM, V_UNFOLD, V_DIAGONAL, V_FLIP };
static const char *const view_names[] = {
    "t", "transpose", "narrow", "select", "index", "unsqueeze", "squeeze",
    "view", "expand", "permute", "movedim", "unfold", "diagonal", "flip", NULL};

/* r (an unset header) becomes view op of t with the n (0..3) numbers a,
 * b, c. 0 when done; nonzero leaves it to the classic function. The view
 * borrows t's storage (its object's anchor keeps it, as lviews.c's views
 * do): the core is handed t's header without its storage, so it takes no
 * reference for the view to drop at once (two atomic operations, a
 * tenth of the view's cost). */
static int view(nd_tensor *r, const nd_tensor *base, int op, int n, double a,
                double b, double c) {
  const double x[3] = {a, b, c};
  int64_t v[3], s;
  int d[3], k = base->ndim;
  nd_tensor h, *t = &h;
  nd_head_copy(&h, base); /* the core's copy: no memcpy calls */
  h.storage = NULL;
  nd_err e;
  e.code = ND_OK;
  e.base = 1;
  e.fn = NULL;
  nd_status st;
  switch (op) {
  case V_T:
    if (n != 0 || k > 2) return 1;
    if (k < 2) {
      nd_head_copy(r, t);
      st = ND_OK;
    } else {
      st = nd_transpose(&e, r, t, 0, 1);
    }
    break;
  case V_TRANSPOSE:
  case V_MOVEDIM:
    if (n != 2 || (d[0] = ndL_dim_num(a, t)) < 0 ||
        (d[1] = ndL_dim_num(b, t)) < 0)
      return 1;
    st = op == V_TRANSPOSE ? nd_transpose(&e, r, t, d[0], d[1])
                           : nd_movedim(&e, r, t, d[0], d[1]);
    break;
  case V_NARROW: /* start: 1..n+1, or from the end (-1 the last) */
    if (n != 3 || (d[0] = (int)pos(a, k)) < 0 || !nd_whole(b, &s) ||
        !nd_whole(c, &v[0]) || s == 0)
      return 1;
    if (s < 0) s += t->size[d[0]] + 1;
    if (s < 1) return 1;
    st = nd_narrow(&e, r, t, d[0], s - 1, v[0]);
    break;
  case V_SELECT:
  case V_INDEX:
    if (op == V_INDEX) b = a, a = 1, n++;
    if (n != 2 || (d[0] = (int)pos(a, k)) < 0 ||
        (v[0] = pos(b, t->size[d[0]])) < 0)
      return 1;
    st = nd_select(&e, r, t, d[0], v[0]);
    break;
  case V_UNSQUEEZE:
    if (n != 1 || (d[0] = (int)pos(a, k + 1)) < 0) return 1;
    st = nd_unsqueeze(&e, r, t, d[0]);
    break;
  case V_SQUEEZE:
    if (n == 0 || (k == 0 && n == 1 && (a == 1 || a == -1))) {
      st = nd_squeeze_all(&e, r, t);
    } else {
      if (n != 1 || (d[0] = (int)pos(a, k)) < 0) return 1;
      st = nd_squeeze(&e, r, t, d[0]);
    }
    break;
  case V_VIEW:
  case V_EXPAND: /* sizes; -1 infers (view) or keeps (expand) one */
    if (n < 1 || n > 3) return 1;
    for (int i = 0; i < n; i++)
      if (!nd_whole(x[i], &v[i]) || v[i] < -1) return 1;
    st = op == V_VIEW ? nd_view(&e, r, t, n, v) : nd_expand(&e, r, t, n, v);
    break;
  case V_PERMUTE:
    if (n != k || n > 3) return 1;
    for (int i = 0; i < n; i++)
      if ((d[i] = (int)pos(x[i], k)) < 0) return 1;
    st = nd_permute(&e, r, t, d);
    break;
  case V_UNFOLD:
    if (n != 3 || (d[0] = (int)pos(a, k ? k : 1)) < 0 ||
        !nd_whole(b, &v[0]) || !nd_whole(c, &v[1]))
      return 1;
    st = nd_unfold(&e, r, t, d[0], v[0], v[1]);
    break;
  case V_DIAGONAL: /* (offset = 0, dim1 = 1, dim2 = 2) */
    v[0] = 0, d[0] = 0, d[1] = 1;
    if (k < 2 || (n > 0 && !nd_whole(a, &v[0])) ||
        (n > 1 && (d[0] = (int)pos(b, k)) < 0) ||
        (n > 2 && (d[1] = (int)pos(c, k)) < 0))
      return 1;
    st = nd_diagonal(&e, r, t, v[0], d[0], d[1]);
    break;
  case V_FLIP: /* no dims: all of them */
    if (n == 0) {
      if (k > 3) return 1;
      for (n = 0; n < k; n++) d[n] = n;
    } else {
      for (int i = 0; i < n; i++)
        if ((d[i] = ndL_dim_num(x[i], t)) < 0) return 1;
    }
    st = nd_flip(&e, r, t, n, d);
    break;
  default:
    return 1;
  }
  if (st) return 1;
  r->storage = base->storage;
  return 0;
}

/* r = t[{...}] of the n (1..4) entries at x, four numbers each as
 * lua/views.lua reads them: m (-1: a number, else a range of m entries),
 * then the entry's numbers (ndL_entry). 0 when done; nonzero when an
 * entry is not whole, the rule refuses, or every dim was selected (an
 * element: the classic function reads it or raises). */
static int index_view(nd_tensor *r, const nd_tensor *t, int n,
                      const double *x) {
  ndL_entry en[4];
  int numbers;
  if (n < 1 || n > 4 || n > t->ndim) return 1;
  for (int k = 0; k < n; k++, x += 4) {
    en[k].m = (int)x[0];
    if (en[k].m < -1 || en[k].m > 3) return 1;
    for (int j = 0; j < (en[k].m < 0 ? 1 : en[k].m); j++)
      if (!nd_whole(x[j + 1], &en[k].v[j])) return 1;
  }
  nd_err e;
  e.code = ND_OK;
  e.base = 1;
  e.fn = NULL;
  if (ndL_index_entries(&e, r, t, n, en, "index", &numbers) ||
      numbers == t->ndim)
    return 1;
  return 0;
}

/* Every elementwise op through one entry: fam (C.ffamily: the op table's
 * families "op" and "math", then "clamp", "where" and "lerp"), op (its id
 * in C.optable), n its operands. Each operand is a tensor (ta...) or else
 * the number xa... (the scalar rule), and absent when bit k of `absent`
 * is set (clamp's nil bound). Into out, or in place, or (mode ND_OUT on
 * a small tensor's header) a new result. A call the classic function
 * would refuse fails here too, and the classic function raises it. */
enum { F_OP, F_MATH, F_CLAMP, F_WHERE, F_LERP };
static const char *const family_names[] = {"op", "math", "clamp", "where",
                                           "lerp", NULL};
static void operand(nd_operand *o, const nd_tensor *t, double x) {
  if (t) {
    o->t = t;
    o->dtype = t->dtype;
  } else {
    nd_operand_number(o, x);
  }
}
static nd_status ew(nd_err *e, nd_tensor *out, int mode, int fam, int op,
                    int n, const nd_tensor *ta, double xa,
                    const nd_tensor *tb, double xb, const nd_tensor *tc,
                    double xc, int absent) {
  /* The one-operand ops first (-a, a:exp(out) per frame): nothing to
   * read but the tensor, which the core checks */
  if (n == 1 && (fam == F_OP || fam == F_MATH)) {
    if (!ta || (absent & 1)) return e->code = ND_EINVAL;
    return fam == F_OP ? nd_unary(e, out, mode, op, ta)
                       : nd_math_unary(e, out, mode, op, ta);
  }
  nd_operand o[3];
  operand(&o[0], ta, xa);
  if (n > 1) operand(&o[1], tb, xb);
  if (n > 2) operand(&o[2], tc, xc);
  const nd_operand *b = absent & 2 ? NULL : &o[1],
                   *c = absent & 4 ? NULL : &o[2];
  e->code = ND_EINVAL; /* for the refusals below: the classic call explains */
  if ((absent & 1) || (!ta && !tb && !tc) || (n > 1 && fam != F_CLAMP && !b) ||
      (n > 2 && fam != F_CLAMP && !c))
    return e->code;
  switch (fam) {
  case F_OP:
  case F_MATH:
    if (n != 2) return e->code; /* n == 1: above */
    return fam == F_OP ? nd_binary(e, out, mode, op, &o[0], b)
                       : nd_math_binary(e, out, mode, op, &o[0], b);
  case F_CLAMP:
    if (n != 3 || !ta || (!b && !c)) return e->code;
    return nd_clamp(e, out, mode, ta, b, c);
  case F_WHERE:
    if (n != 3 || !ta || mode == ND_INPLACE) return e->code;
    return nd_where(e, out, mode, ta, b, c);
  case F_LERP:
    if (n != 3) return e->code;
    return nd_lerp(e, out, mode, &o[0], b, c);
  }
  return e->code;
}

/* ew's new result (mode ND_SHAPE) as the core would make it, computed
 * into plan's storage (the caller's scratch) when it fits: the bytes for
 * lua/ops.lua to copy into a new small tensor of plan's layout
 * (ndL_small_of). When it does not, the core makes it (ND_NEW) with a
 * storage of its own, which lua/ops.lua adopts (ext.adopt): -1. 0 when
 * the core refuses the call (plan keeps its scratch then). */
static int ew_plan(nd_err *e, nd_tensor *plan, int mode, int fam, int op,
                   int n, const nd_tensor *ta, double xa,
                   const nd_tensor *tb, double xb, const nd_tensor *tc,
                   double xc, int absent) {
  nd_storage *sc = plan->storage;
  const nd_tensor *t[3] = {ta, tb, tc};
  int big = 0; /* a result at least this big cannot fit */
  for (int k = 0; k < 3; k++) big |= t[k] && nd_numel(t[k]) > NDL_SMALL;
  if (mode != ND_SHAPE) return 0;
  if (!big) {
    if (ew(e, plan, mode, fam, op, n, ta, xa, tb, xb, tc, xc, absent))
      return plan->storage = sc, 0;
    int bytes = plan->storage ? ndL_small_of(NULL, plan) : 0;
    plan->storage = sc;
    if (bytes) return bytes;
  }
  if (ew(e, plan, ND_NEW, fam, op, n, ta, xa, tb, xb, tc, xc, absent))
    return plan->storage = sc, 0;
  return -1;
}

/* The element of t at the n (0..4) positions a, b, c, d, as an offset in
 * elements from the storage's start; n = -1: item's (t of one element).
 * -1 when they do not name one. */
static int64_t offset(const nd_tensor *t, int n, double a, double b, double c,
                      double d) {
  if (n < 0) return nd_numel(t) == 1 ? t->offset : -1;
  if (n != t->ndim || n > 4) return -1;
  const double x[4] = {a, b, c, d};
  int64_t off = t->offset;
  for (int i = 0; i < n; i++) {
    int64_t q = pos(x[i], t->size[i]);
    if (q < 0) return -1;
    off += q * t->stride[i];
  }
  return off;
}

/* Writes under nd_scalar_fits's rule: a number, or a 64-bit integer
 * cdata (uns: a uint64_t, v its bits). */
static nd_status store(nd_err *e, const nd_tensor *t, int64_t off, double d) {
  return nd_store_number(e, t, off, d);
}
static nd_status store_i64(nd_err *e, const nd_tensor *t, int64_t off,
                           int64_t v, int uns) {
  nd_operand s = {NULL, uns ? ND_UINT64 : ND_INT64, 0, v};
  return nd_store_scalar(e, t, off, &s);
}

/* The queries of a header (C.fqueries): t:dim(), numel, size(d),
 * stride(d), storage_offset, element_size, nbytes, is_contiguous (1 or
 * 0), dtype (its id), as the classic functions answer them (a number as lua_pushnumber
 * makes it); d (size and stride, n = 1) as Lua gave it: ndL_dim's rule.
 * NaN when refused (no d, or not a dim: the classic function answers or
 * raises). */
enum { Q_DIM, Q_NUMEL, Q_SIZE, Q_STRIDE, Q_OFFSET, Q_ESIZE, Q_NBYTES,
       Q_CONTIG, Q_DTYPE };
static const char *const query_names[] = {
    "dim", "numel", "size", "stride", "storage_offset", "element_size",
    "nbytes", "is_contiguous", "dtype", NULL};
static double query(const nd_tensor *t, int q, int n, double d) {
  int64_t k;
  if ((q == Q_SIZE || q == Q_STRIDE) != (n == 1)) return NAN;
  switch (q) {
  case Q_DIM: return t->ndim;
  case Q_NUMEL: return (double)nd_numel(t);
  case Q_SIZE:
  case Q_STRIDE:
    if (!nd_whole(d, &k) || (k = ndL_pos(k, t->ndim)) < 0) return NAN;
    return (double)(q == Q_SIZE ? t->size[k] : t->stride[k]);
  case Q_OFFSET: return (double)t->offset;
  case Q_ESIZE: return nd_dtype_size(t->dtype);
  case Q_NBYTES: return (double)(nd_numel(t) * nd_dtype_size(t->dtype));
  case Q_CONTIG: return nd_is_contiguous(t);
  case Q_DTYPE: return t->dtype; /* its id: Lua names it from C.consts */
  }
  return NAN;
}

/* The table of what Lua calls, written once: the C struct below and its
 * declaration for the FFI (C.ffi_api_decl, with S, E, T, P spelled there
 * as the FFI's names: lua/ffi.lua). A new name whenever it changes, so an
 * older nd loaded in the same process keeps its own. */
#define S nd_status
#define E nd_err
#define T nd_tensor
#define P nd_blas_plan
#define FFI_API(X)                                                          \
  X(void *, data, (const T *), nd_data)                                     \
  X(int, has_internal_overlap, (const T *), nd_has_internal_overlap)        \
  X(S, matmul_plan, (E *, P *, const T *, const T *, const T *),            \
    nd_matmul_plan)                                                         \
  X(S, matmul_run, (E *, const P *, const T *, const T *, const T *),       \
    nd_matmul_run)                                                          \
  X(S, fill_i64, (E *, const T *, int64_t), nd_fill_i64)                    \
  X(S, fill_number, (E *, const T *, double), nd_fill_number)               \
  X(S, copy, (E *, const T *, const T *), nd_copy)                          \
  X(void, obj_gc, (void *), ndL_obj_gc)                                     \
  X(int, charge_add, (int64_t *, const T *), ndL_charge_add)                \
  X(int, view, (T *, const T *, int, int, double, double, double), view)    \
  X(int, index, (T *, const T *, int, const double *), index_view)          \
  X(int64_t, offset, (const T *, int, double, double, double, double),      \
    offset)                                                                 \
  X(S, store, (E *, const T *, int64_t, double), store)                     \
  X(S, store_i64, (E *, const T *, int64_t, int64_t, int), store_i64)       \
  X(int, small_sized, (T *, int, int, const int64_t *), ndL_small_sized)    \
  X(int, small_of, (T *, const T *), ndL_small_of)                          \
  X(S, ew, (E *, T *, int, int, int, int, const T *, double, const T *,     \
            double, const T *, double, int), ew)                            \
  X(int, ew_plan, (E *, T *, int, int, int, int, const T *, double,         \
                   const T *, double, const T *, double, int), ew_plan)     \
  X(int, fcall, (E *, T *const *, int, const T *, const T *const *,        \
                 const T *const *, const double *, const double *, int,    \
                 void *), ndL_fcall)                                        \
  X(double, query, (const T *, int, int, double), query)                    \
  X(float, half_to_float, (uint16_t), nd_half_to_float)                     \
  X(float, bf16_to_float, (uint16_t), nd_bf16_to_float)
#define FIELD(R, name, params, f) R(*name) params;
static const struct { FFI_API(FIELD) } ffi_api = {
#define INIT(R, name, params, f) f,
    FFI_API(INIT)};
#define DECL(R, name, params, f) #R " (*" #name ")" #params "; "
static const char ffi_api_decl[] =
    "typedef struct ndffi23_api { " FFI_API(DECL) "} ndffi23_api;";
#undef FIELD
#undef INIT
#undef DECL
#undef S
#undef E
#undef T
#undef P

static int l_ffi_api(lua_State *L) {
  lua_pushlightuserdata(L, (void *)&ffi_api);
  return 1;
}

/* C.fviews: { name = id } of view(); C.ffamily: the families of ew();
 * C.fqueries: { name = { id =, kind = } } of query(). */
void ndL_open_ffi(lua_State *L) {
  lua_pushcfunction(L, l_ffi_api);
  lua_setfield(L, -2, "ffi_api");
  lua_pushstring(L, ffi_api_decl);
  lua_setfield(L, -2, "ffi_api_decl");
  lua_newtable(L);
  for (int i = 0; view_names[i]; i++) {
    lua_pushinteger(L, i);
    lua_setfield(L, -2, view_names[i]);
  }
  lua_setfield(L, -2, "fviews");
  lua_newtable(L);
  for (int i = 0; family_names[i]; i++) {
    lua_pushinteger(L, i);
    lua_setfield(L, -2, family_names[i]);
  }
  lua_setfield(L, -2, "ffamily");
  lua_newtable(L);
  for (int i = 0; query_names[i]; i++) {
    lua_newtable(L);
    lua_pushinteger(L, i);
    lua_setfield(L, -2, "id");
    lua_pushstring(L, i == Q_CONTIG ? "boolean" : i == Q_DTYPE ? "dtype"
                                                          : "number");
    lua_setfield(L, -2, "kind");
    lua_setfield(L, -2, query_names[i]);
  }
  lua_setfield(L, -2, "fqueries");
}
