/* The FFI's calls of the core with new results (C.fcalls): rows of
 * functions of a tensor and up to four Lua values, whose results the core
 * makes into Lua's scratches (nd_result_into), copied by lua/ops.lua into
 * new small tensors, or, past a scratch, into storages of their own that
 * lua/ops.lua adopts into new owners (ext.adopt). Lua hands each value
 * over as it is, with its kind (3 bits each, from bit 0: nil, number,
 * boolean, a dtype (by id, from its name), a tensor (its header in ts), a
 * table of dims (x[i] numbers at dv + i * ND_MAX_DIMS), a list of tensors
 * (x[i] headers in tl)). A row names the kinds it takes (pattern below),
 * checked before it runs; the row applies the classic function's other
 * rules and refuses (0) whatever the classic function would not take as
 * given -- which then runs, and raises. A row added to the table is on
 * the fast path and in `make bench BENCH=calls` by itself. */
#include "lnd.h"
#include <float.h>
#include <math.h>
#include <string.h>

void ndL_into_begin(ndL_into *in, nd_tensor *const *r, int n) {
  for (int k = 0; k < 3; k++) {
    in->r[k] = k < n ? r[k] : NULL;
    in->s[k] = in->r[k] ? in->r[k]->storage : NULL;
    nd_result_into(k, in->r[k], in->s[k]);
    if (in->r[k]) in->r[k]->storage = NULL; /* unset, as the core takes one */
  }
}

/* A storage of its own for the result r in the scratch s that no small
 * tensor can hold (empty, or not dense): 0 when out of memory. */
static int move_out(nd_tensor *r, nd_storage *s) {
  nd_err e = {ND_OK, 1, NULL, ""};
  nd_tensor own = ND_UNSET;
  int64_t nb = nd_numel(r) ? s->nbytes : 0;
  if (nd_empty(&e, &own, ND_UINT8, 1, &nb)) return 0;
  if (nb) memcpy(own.storage->data, s->data, (size_t)nb);
  r->storage = own.storage; /* its one reference */
  return 1;
}

int ndL_into_end(ndL_into *in, nd_status st) {
  int ok = !st;
  for (int k = 0; k < 3; k++) {
    nd_tensor *r = in->r[k];
    nd_result_into(k, NULL, NULL);
    if (!r) continue;
    nd_storage *s = in->s[k], *got = r->storage;
    r->storage = s;
    if (st) { /* what the core dropped is unset; a row may have made a
               * result before a later step failed (rand_like of ints) */
      if (got) nd_storage_release(got);
    } else if (!got) { /* not made (unique without counts) */
      r->ndim = -1;
    } else if (got == s) { /* the reference the core took */
      nd_storage_release(s);
      if (!ndL_small_of(NULL, r) && !move_out(r, s)) ok = 0;
    } else { /* elsewhere: too big, built in a temporary and moved, or a
              * view (reshape): only a storage of its own is copied */
      int64_t bytes = nd_numel(r) * nd_dtype_size(r->dtype);
      if (nd_is_contiguous(r) && bytes && bytes <= NDL_SMALL &&
          bytes <= s->nbytes &&
          __atomic_load_n(&got->refs, __ATOMIC_ACQUIRE) == 1) {
        r->storage = got;
        memcpy(s->data, nd_data(r), (size_t)bytes);
        r->storage = s;
        r->offset = 0;
        nd_storage_release(got);
      } else {
        r->storage = got; /* its reference, for Lua to adopt */
      }
    }
  }
  for (int k = 0; k < 3 && !ok && !st; k++) /* out of memory: none adopted */
    if (in->r[k] && in->r[k]->storage != in->s[k]) {
      nd_storage_release(in->r[k]->storage);
      in->r[k]->storage = in->s[k];
    }
  return ok;
}

nd_status ndL_value0(nd_err *e, nd_tensor *v, int dtype, int isbool,
                     double x) {
  nd_operand s; /* checked first: a refused value leaves v unset */
  nd_operand_number(&s, isbool ? x != 0 : x);
  if (nd_scalar_fits(e, "fill_", dtype, &s) || nd_empty(e, v, dtype, 0, NULL))
    return e->code;
  return nd_fill_scalar(e, v, &s);
}

enum { K_NIL, K_NUM, K_BOOL, K_DTYPE, K_TENSOR, K_DIMS, K_LIST };
/* One call: its results' headers, t, the values' tensors, numbers and
 * kinds. */
typedef struct {
  nd_err *e;
  nd_tensor *r[3];
  const nd_tensor *t, *const *ts, *const *tl; /* tl: a list's (x[i]) */
  const double *x, *dv; /* dv: value i's table of dims at i * ND_MAX_DIMS */
  int kinds, op;        /* op: a reduction row's */
  nd_generator *g;      /* the state's default generator, or g of g:rand */
} call;
static int kind(const call *c, int i) { return (c->kinds >> (3 * i)) & 7; }
static const double *dv(const call *c, int i) {
  return c->dv + i * ND_MAX_DIMS;
}
static int given(const call *c, int i) { return kind(c, i) != K_NIL; }

/* What a row gives: */
enum { REFUSED, MADE, SELF, VALUES };
/* MADE, or VALUES when `numbers` and the results are 0-d (det, ...). */
static int made(nd_status st, const call *c, int numbers) {
  if (st) return REFUSED;
  return numbers && c->r[0]->ndim == 0 ? VALUES : MADE;
}
static int self(nd_status st) { return st ? REFUSED : SELF; }

/* Dims as the classic binding reads them: ndL_dim_of's (a 0-d tensor
 * takes 1 and -1) and ndL_dim's (it takes none); -1 when not one. */
static int dim_of(const call *c, int i) {
  return kind(c, i) == K_NUM ? ndL_dim_num(c->x[i], c->t) : -1;
}
static int dim_plain(const call *c, int i) {
  int64_t p;
  if (kind(c, i) != K_NUM || !nd_whole(c->x[i], &p)) return -1;
  return (int)ndL_pos(p, c->t->ndim);
}
/* lsort.c's optional dim: def when nil (-1 the last). */
static int opt_dim(const call *c, int i, int def) {
  if (!given(c, i)) return def < 0 ? (c->t->ndim ? c->t->ndim + def : 0) : def;
  return dim_of(c, i);
}
static int flag(const call *c, int i, int def) {
  return given(c, i) ? c->x[i] != 0 : def;
}
static double num(const call *c, int i, double def) {
  return given(c, i) ? c->x[i] : def;
}
/* A whole number (k, bins, exponents) into *v; 0 when not one. */
static int whole(const call *c, int i, int64_t *v) {
  return kind(c, i) == K_NUM && nd_whole(c->x[i], v);
}

/* Dims: a number or a table of numbers (ndL_dimlist's rule) into dims;
 * their count, or -1. */
static int dims_at(const call *c, int i, int *dims) {
  if (kind(c, i) == K_NUM) return (dims[0] = dim_of(c, i)) < 0 ? -1 : 1;
  if (kind(c, i) != K_DIMS || c->x[i] > ND_MAX_DIMS) return -1;
  int n = (int)c->x[i];
  for (int k = 0; k < n; k++)
    if ((dims[k] = ndL_dim_num(dv(c, i)[k], c->t)) < 0) return -1;
  return n;
}
/* A flag read as Lua reads a condition: nil and false are false. */
static int truthy(const call *c, int i) {
  return given(c, i) && !(kind(c, i) == K_BOOL && c->x[i] == 0);
}

/* ---- reductions: a row per op of the core's table (ND_REDUCE_OPS, op
 * the row's), and argmin/argmax; lops.c's rules. No dims: a value. ---- */
static int f_reduce(call *c) {
  int op = c->op, at = op == ND_R_NORM, dims[ND_MAX_DIMS], n;
  double p = 2;
  if (op == ND_R_NORM && (kind(c, 1) == K_BOOL || (given(c, 0) &&
                                                     kind(c, 0) != K_NUM)))
    return REFUSED; /* ("fro" is the classic function's) */
  if (op == ND_R_NORM && given(c, 0)) p = c->x[0];
  n = given(c, at) ? dims_at(c, at, dims) : 0;
  if (n < 0 || (n != 1 && given(c, at) && (op == ND_R_MIN || op == ND_R_MAX)))
    return REFUSED; /* min/max take one dim (a number or a table of one) */
  if (n == 0)
    return made(op == ND_R_NORM ? nd_norm(c->e, c->r[0], c->t, p, 0, NULL, 0)
                : nd_reduce(c->e, c->r[0], op, c->t, 0, NULL, 0), c, 1);
  int keep = truthy(c, at + 1);
  if (op == ND_R_MIN || op == ND_R_MAX) { /* values, 1-based indices */
    nd_status st = nd_reduce_arg(c->e, c->r[0], c->r[1], op, c->t, dims[0],
                                 keep);
    if (!st) ndL_one_based(c->r[1]);
    return made(st, c, 0);
  }
  return made(op == ND_R_NORM ? nd_norm(c->e, c->r[0], c->t, p, n, dims, keep)
              : nd_reduce(c->e, c->r[0], op, c->t, n, dims, keep), c, 0);
}
static int f_argext(call *c) { /* ([dim [, keepdim]]): no dim, a position */
  int dims[ND_MAX_DIMS], d = -1, keep = truthy(c, 1);
  if (given(c, 0) && dims_at(c, 0, dims) != 1) return REFUSED;
  if (given(c, 0)) d = dims[0];
  nd_status st = nd_reduce_arg(c->e, NULL, c->r[0], c->op, c->t, d,
                               d < 0 ? 0 : keep);
  if (!st) ndL_one_based(c->r[0]);
  return made(st, c, d < 0);
}

/* ---- copies and conversions ---- */
static int to_dtype(call *c, int dt) {
  if (dt == c->t->dtype) return SELF; /* PyTorch returns self */
  return made(nd_to_dtype(c->e, c->r[0], c->t, dt), c, 0);
}
static int f_to(call *c) { return to_dtype(c, (int)c->x[0]); }
static int f_float(call *c) { return to_dtype(c, ND_FLOAT32); }
static int f_double(call *c) { return to_dtype(c, ND_FLOAT64); }
static int f_int(call *c) { return to_dtype(c, ND_INT32); }
static int f_long(call *c) { return to_dtype(c, ND_INT64); }
static int f_byte(call *c) { return to_dtype(c, ND_UINT8); }
static int f_char(call *c) { return to_dtype(c, ND_INT8); }
static int f_short(call *c) { return to_dtype(c, ND_INT16); }
static int f_half(call *c) { return to_dtype(c, ND_FLOAT16); }
static int f_bfloat16(call *c) { return to_dtype(c, ND_BFLOAT16); }
static int f_bool(call *c) { return to_dtype(c, ND_BOOL); }
static int f_contiguous(call *c) {
  if (nd_is_contiguous(c->t)) return SELF; /* the very same object */
  return made(nd_contiguous(c->e, c->r[0], c->t), c, 0);
}
static int f_copy_(call *c) { return self(nd_copy(c->e, c->t, c->ts[0])); }
/* Sizes from value i as ndL_sizes reads them -- a table of them, or the
 * numbers there -- each whole and at least min, into size: their count,
 * and *next the value after them; -1 when refused. */
static int sizes_at(const call *c, int i, int64_t min, int64_t *size,
                    int *next) {
  int n = 0;
  if (kind(c, i) == K_DIMS) {
    const double *v = dv(c, i);
    n = (int)c->x[i++];
    for (int k = 0; k < n; k++)
      if (!nd_whole(v[k], &size[k]) || size[k] < min) return -1;
  } else {
    while (i < 4 && whole(c, i, &size[n]) && size[n] >= min) n++, i++;
  }
  *next = i;
  return n;
}
static int none_from(const call *c, int i) { /* nothing given from i on */
  for (; i < 4; i++)
    if (given(c, i)) return 0;
  return 1;
}
/* reshape and flatten give a view when they can (of a small tensor too:
 * ndL_fcall's view objects hold no reference). */
static int f_reshape(call *c) { /* (sizes): a table or numbers, -1 once */
  int64_t size[ND_MAX_DIMS];
  int i, n = sizes_at(c, 0, -1, size, &i);
  if (n < 0 || !none_from(c, i)) return REFUSED;
  return made(nd_reshape(c->e, c->r[0], c->t, n, size), c, 0);
}
static int f_flatten(call *c) { /* ([start [, end]]) */
  int n = c->t->ndim;
  if (n == 0 && (given(c, 0) || given(c, 1))) return REFUSED;
  int a = given(c, 0) ? dim_plain(c, 0) : 0,
      b = given(c, 1) ? dim_plain(c, 1) : n - 1;
  if (n && (a < 0 || b < 0)) return REFUSED;
  return made(nd_flatten(c->e, c->r[0], c->t, n ? a : 0, n ? b : 0), c, 0);
}

/* storage(): the whole storage, 1-D from its first element (ltensor.c's
 * rule), a view of t as reshape's. (as_strided stays classic: as a row
 * its two tables' side trace failed to compile in some loops, 8 us a
 * call; see docs/ref-embedding.md.) */
static int f_storage(call *c) {
  int64_t n = c->t->storage->nbytes / nd_dtype_size(c->t->dtype), one = 1;
  return made(nd_as_strided(c->e, c->r[0], c->t, 1, &n, &one, 0), c, 0);
}

/* ---- scans, softmax, sorting, statistics (lsort.c's rules) ---- */
static int f_cumsum(call *c) {
  int d = dim_of(c, 0);
  return d < 0 ? REFUSED : made(nd_cumsum(c->e, c->r[0], c->t, d), c, 0);
}
static int f_cumprod(call *c) {
  int d = dim_of(c, 0);
  return d < 0 ? REFUSED : made(nd_cumprod(c->e, c->r[0], c->t, d), c, 0);
}
static int softmax(call *c, int log) {
  int d = dim_of(c, 0);
  return d < 0 ? REFUSED : made(nd_softmax(c->e, c->r[0], c->t, d, log), c, 0);
}
static int f_softmax(call *c) { return softmax(c, 0); }
static int f_log_softmax(call *c) { return softmax(c, 1); }
/* sort/argsort(t [, dim [, descending]]): positions from the error's base
 * (1: Lua's), as every position the core gives. */
static int sort(call *c, nd_tensor *v, nd_tensor *ix) {
  int d = opt_dim(c, 0, -1);
  if (d < 0) return REFUSED;
  return made(nd_sort(c->e, v, ix, c->t, d, flag(c, 1, 0)), c, 0);
}
static int f_sort(call *c) { return sort(c, c->r[0], c->r[1]); }
static int f_argsort(call *c) { return sort(c, NULL, c->r[0]); }
static int f_topk(call *c) { /* (k [, dim [, largest [, sorted]]]) */
  int64_t k;
  int d = opt_dim(c, 1, -1);
  if (!whole(c, 0, &k) || d < 0) return REFUSED;
  return made(nd_topk(c->e, c->r[0], c->r[1], c->t, k, d, flag(c, 2, 1),
                      flag(c, 3, 1)), c, 0);
}
static int f_kthvalue(call *c) { /* (k [, dim [, keepdim]]) */
  int64_t k;
  int d = opt_dim(c, 1, -1);
  if (!whole(c, 0, &k) || d < 0) return REFUSED;
  return made(nd_kthvalue(c->e, c->r[0], c->r[1], c->t, k, d, flag(c, 2, 0)),
              c, 0);
}
static int f_median(call *c) { /* no dim: a value (no indices) */
  if (!given(c, 0)) {
    if (given(c, 1)) return REFUSED;
    return made(nd_median(c->e, c->r[0], NULL, c->t, ND_ALL_DIMS, 0), c, 1);
  }
  int d = opt_dim(c, 0, -1);
  if (d < 0) return REFUSED;
  return made(nd_median(c->e, c->r[0], c->r[1], c->t, d, flag(c, 1, 0)), c, 0);
}
static int var(call *c, int std) { /* ([dim [, keepdim [, correction]]]) */
  int d = 0;
  double corr = num(c, 2, 1);
  if (!given(c, 0))
    return made(nd_var(c->e, c->r[0], c->t, 0, NULL, 0, corr, std), c, 1);
  if ((d = dim_of(c, 0)) < 0) return REFUSED;
  return made(nd_var(c->e, c->r[0], c->t, 1, &d, flag(c, 1, 0), corr, std),
              c, 0);
}
static int f_var(call *c) { return var(c, 0); }
static int f_std(call *c) { return var(c, 1); }
static int f_logsumexp(call *c) { /* (dim [, keepdim]); a 0-d t: all */
  int d = dim_of(c, 0), n = c->t->ndim ? 1 : 0;
  if (d < 0) return REFUSED;
  return made(nd_logsumexp(c->e, c->r[0], c->t, n, n ? &d : NULL,
                           flag(c, 1, 0)), c, 0);
}
static int f_count_nonzero(call *c) { /* no dim: a value */
  int d;
  if (!given(c, 0))
    return made(nd_count_nonzero(c->e, c->r[0], c->t, 0, NULL), c, 1);
  if ((d = dim_of(c, 0)) < 0) return REFUSED;
  return made(nd_count_nonzero(c->e, c->r[0], c->t, 1, &d), c, 0);
}
static int f_histc(call *c) { /* ([bins [, min [, max]]]) */
  int64_t bins = 100;
  if (given(c, 0) && !whole(c, 0, &bins)) return REFUSED;
  return made(nd_histc(c->e, c->r[0], c->t, bins, num(c, 1, 0), num(c, 2, 0)),
              c, 0);
}
static int f_unique(call *c) { /* counts: a second result */
  return made(nd_unique(c->e, c->r[0], flag(c, 0, 0) ? c->r[1] : NULL, c->t),
              c, 0);
}
static int f_searchsorted(call *c) { /* (values [, right]) */
  return made(nd_searchsorted(c->e, c->r[0], c->t, c->ts[0], flag(c, 1, 0)),
              c, 0);
}

/* ---- products ---- */
#define PRODUCT(name, numbers)                                              \
  static int f_##name(call *c) {                                            \
    return made(nd_##name(c->e, c->r[0], c->t, c->ts[0]), c, numbers);     \
  }
PRODUCT(dot, 1) /* a value */
PRODUCT(mm, 0)
PRODUCT(mv, 0)
PRODUCT(bmm, 0)
PRODUCT(outer, 0)
/* The fused updates (a, b [, beta, alpha]): a new result, or in place
 * (f_name_: t the result). */
#define FUSED(name)                                                         \
  static int f_##name(call *c) {                                            \
    return made(nd_##name(c->e, c->r[0], c->t, c->ts[0], c->ts[1],          \
                          num(c, 2, 1), num(c, 3, 1)), c, 0);               \
  }                                                                         \
  static int f_##name##_(call *c) {                                         \
    return self(nd_##name(c->e, (nd_tensor *)c->t, c->t, c->ts[0], c->ts[1], \
                          num(c, 2, 1), num(c, 3, 1)));                     \
  }
ND_FUSED_UPDATES(FUSED)
#undef FUSED

/* ---- contractions (lcontract.c's rules) ---- */
static int f_tensordot(call *c) { /* (b, n): a count; lists are classic's */
  const nd_tensor *a = c->t, *b = c->ts[0];
  int64_t k;
  int da[ND_MAX_DIMS], db[ND_MAX_DIMS];
  if (!whole(c, 1, &k) || k < 0 || k > a->ndim || k > b->ndim) return REFUSED;
  for (int i = 0; i < k; i++) da[i] = a->ndim - (int)k + i, db[i] = i;
  return made(nd_tensordot(c->e, c->r[0], a, b, (int)k, da, db), c, 0);
}
static int f_inner(call *c) { /* two vectors: a number */
  return made(nd_inner(c->e, c->r[0], c->t, c->ts[0]), c,
              c->t->ndim == 1 && c->ts[0]->ndim == 1);
}
static int f_kron(call *c) {
  return made(nd_kron(c->e, c->r[0], c->t, c->ts[0]), c, 0);
}
static int f_cross(call *c) { /* (b [, dim]): among the broadcast dims */
  int n = c->t->ndim > c->ts[0]->ndim ? c->t->ndim : c->ts[0]->ndim, d = n - 1;
  int64_t p;
  if (given(c, 1) && (!whole(c, 1, &p) || n == 0 || (d = (int)ndL_pos(p, n)) < 0))
    return REFUSED;
  return made(nd_cross(c->e, c->r[0], c->t, c->ts[0], d), c, 0);
}
static int f_dist(call *c) {
  return made(nd_dist(c->e, c->r[0], c->t, c->ts[0], num(c, 1, 2)), c, 1);
}
static int f_normalize(call *c) { /* ([p [, dim [, eps]]]) */
  int d = given(c, 1) ? dim_plain(c, 1) : 1;
  if (d < 0 || c->t->ndim == 0) return REFUSED;
  return made(nd_normalize(c->e, c->r[0], c->t, num(c, 0, 2), d,
                           num(c, 2, 1e-12)), c, 0);
}

/* ---- counting and encoding (lcount.c's rules) ---- */
static int f_bincount(call *c) { /* ([weights [, minlength]]) */
  int64_t m = 0;
  if (given(c, 1) && !whole(c, 1, &m)) return REFUSED;
  return made(nd_bincount(c->e, c->r[0], c->t, given(c, 0) ? c->ts[0] : NULL,
                          m), c, 0);
}
static int f_one_hot(call *c) { /* ([num_classes]): -1 the largest */
  int64_t k = -1;
  if (given(c, 0) && !whole(c, 0, &k)) return REFUSED;
  return made(nd_one_hot(c->e, c->r[0], c->t, k), c, 0);
}

/* ---- indexing with tensors (lindex.c's rules; positions from base 1) - */
static int f_index_select(call *c) {
  int d = dim_plain(c, 0);
  if (d < 0) return REFUSED;
  return made(nd_index_select(c->e, c->r[0], c->t, d, c->ts[1]), c, 0);
}
static int f_gather(call *c) {
  int d = dim_plain(c, 0);
  if (d < 0) return REFUSED;
  return made(nd_gather(c->e, c->r[0], c->t, d, c->ts[1]), c, 0);
}
static int f_take(call *c) {
  return made(nd_take(c->e, c->r[0], c->t, c->ts[0]), c, 0);
}
static int f_masked_select(call *c) {
  return made(nd_masked_select(c->e, c->r[0], c->t, c->ts[0]), c, 0);
}
static int f_nonzero(call *c) {
  return made(nd_nonzero(c->e, c->r[0], c->t), c, 0);
}
/* value i: a tensor, or a number or boolean as a 0-d tensor of t's dtype
 * (ndL_value0: lindex.c's rule) in *tmp, released by the caller. */
static const nd_tensor *value(call *c, int i, nd_tensor *tmp) {
  if (kind(c, i) == K_TENSOR) return c->ts[i];
  if (ndL_value0(c->e, tmp, c->t->dtype, kind(c, i) == K_BOOL, c->x[i]))
    return NULL;
  return tmp;
}
typedef nd_status (*scatter_fn)(nd_err *, const nd_tensor *, int,
                                const nd_tensor *, const nd_tensor *);
static int scatter(call *c, scatter_fn f) { /* (dim, index, src or value) */
  int d = dim_plain(c, 0);
  nd_tensor tmp = ND_UNSET;
  const nd_tensor *v;
  if (d < 0 || !(v = value(c, 2, &tmp))) return REFUSED;
  nd_status st = f(c->e, c->t, d, c->ts[1], v);
  nd_release(&tmp);
  return self(st);
}
static int f_scatter_(call *c) { return scatter(c, nd_scatter); }
static int f_scatter_add_(call *c) { return scatter(c, nd_scatter_add); }
static int f_index_fill_(call *c) { return scatter(c, nd_index_fill); }
static int f_index_copy_(call *c) { return scatter(c, nd_index_copy); }
static int f_index_add_(call *c) { /* (dim, index, src [, alpha]) */
  int d = dim_plain(c, 0);
  if (d < 0) return REFUSED;
  return self(nd_index_add(c->e, c->t, d, c->ts[1], c->ts[2], num(c, 3, 1)));
}
static int f_masked_fill_(call *c) {
  nd_tensor tmp = ND_UNSET;
  const nd_tensor *v = value(c, 1, &tmp);
  if (!v) return REFUSED;
  nd_status st = nd_masked_fill(c->e, c->t, c->ts[0], v);
  nd_release(&tmp);
  return self(st);
}
static int f_masked_scatter_(call *c) {
  return self(nd_masked_scatter(c->e, c->t, c->ts[0], c->ts[1]));
}

/* ---- fills, nan_to_num, isclose ---- */
static int f_fill_(call *c) { /* a number, boolean or 0-d tensor */
  switch (kind(c, 0)) {
  case K_BOOL: return self(nd_fill_i64(c->e, c->t, c->x[0] != 0));
  case K_NUM: return self(nd_fill_number(c->e, c->t, c->x[0]));
  default:
    if (c->ts[0]->ndim != 0 || nd_check_writable(c->e, "fill_", c->t))
      return REFUSED;
    return self(nd_copy(c->e, c->t, c->ts[0]));
  }
}
static int f_zero_(call *c) { return self(nd_fill_i64(c->e, c->t, 0)); }
/* ([nan [, posinf [, neginf]]]) */
static int nan_to_num(call *c, int inplace) {
  double big = c->t->dtype == ND_FLOAT32 ? FLT_MAX : DBL_MAX;
  double vn = num(c, 0, 0), vp = num(c, 1, big), vm = num(c, 2, -big);
  if (inplace)
    return self(nd_nan_to_num(c->e, (nd_tensor *)c->t, ND_INPLACE, c->t, vn,
                              vp, vm));
  return made(nd_nan_to_num(c->e, c->r[0], ND_NEW, c->t, vn, vp, vm), c, 0);
}
static int f_nan_to_num(call *c) { return nan_to_num(c, 0); }
static int f_nan_to_num_(call *c) { return nan_to_num(c, 1); }
/* addcmul/addcdiv (a, b [, value]): a new result, or in place (an out
 * goes to the classic function). */
#define ADDC(name)                                                          \
  static int f_##name(call *c) {                                            \
    return made(nd_##name(c->e, c->r[0], ND_NEW, c->t, c->ts[0], c->ts[1],  \
                          num(c, 2, 1)), c, 0);                             \
  }                                                                         \
  static int f_##name##_(call *c) {                                         \
    return self(nd_##name(c->e, (nd_tensor *)c->t, ND_INPLACE, c->t,        \
                          c->ts[0], c->ts[1], num(c, 2, 1)));               \
  }
ADDC(addcmul)
ADDC(addcdiv)
#undef ADDC
/* set_num_threads(n): lops.c's bounds (get_num_threads, same_storage and
 * may_overlap stay classic: a value through a row costs ~100 ns, the
 * classic call 25-45). */
static int f_set_num_threads(call *c) {
  int64_t n;
  if (!whole(c, 0, &n) || n < 1 || n > 1024) return REFUSED;
  nd_set_num_threads((int)n);
  return SELF;
}
static int f_isclose(call *c) { /* (b [, rtol [, atol [, equal_nan]]]) */
  nd_operand a = {c->t, c->t->dtype, 0, 0}, b;
  if (kind(c, 0) == K_TENSOR) {
    b.t = c->ts[0];
    b.dtype = b.t->dtype;
  } else if (kind(c, 0) == K_NUM) {
    nd_operand_number(&b, c->x[0]);
  } else {
    return REFUSED;
  }
  int equal_nan = kind(c, 3) == K_BOOL ? c->x[3] != 0 : given(c, 3);
  return made(nd_isclose(c->e, c->r[0], &a, &b, num(c, 1, 1e-5),
                         num(c, 2, 1e-8), equal_nan), c, 0);
}

/* ---- cat and stack (lcopies.c's rules): a list, then a dim ---- */
static int join(call *c, int stack) {
  int64_t p;
  if (kind(c, 0) != K_LIST) return REFUSED;
  int n = (int)c->x[0], d = 0, nd = c->tl[0]->ndim + stack;
  if (given(c, 1) && (kind(c, 1) != K_NUM || !nd_whole(c->x[1], &p) ||
                      (d = (int)ndL_pos(p, nd)) < 0))
    return REFUSED;
  return made(stack ? nd_stack(c->e, c->r[0], n, c->tl, d)
                    : nd_cat(c->e, c->r[0], n, c->tl, d), c, 0);
}
static int f_cat(call *c) { return join(c, 0); }
static int f_stack(call *c) { return join(c, 1); }

/* ---- constructors (no tensor first: lconstruct.c's rules) ---- */
static int dtype_at(const call *c, int i, int def) { /* nil: def; -1 else */
  return !given(c, i) ? def : kind(c, i) == K_DTYPE ? (int)c->x[i] : -1;
}
/* ---- random, from the default generator (lrandom.c's rules) ---- */
/* A new result of the sizes from value i -- a table of them, or numbers
 * -- then an optional dtype (def) and nothing after, as the classic
 * samplers read them (sizes: a table or numbers, none for some); 0 when
 * refused. */
static int fresh(call *c, int i, int def) {
  int64_t size[ND_MAX_DIMS];
  int n = sizes_at(c, i, INT64_MIN, size, &i); /* the core checks signs */
  if (n < 0) return 0;
  if (i < 4 && kind(c, i) == K_DTYPE) def = (int)c->x[i++];
  return none_from(c, i) && c->g && !nd_empty(c->e, c->r[0], def, n, size);
}
static int sizes_given(const call *c, int i) { /* fresh_after's */
  return kind(c, i) == K_NUM || kind(c, i) == K_DIMS;
}
static int f_rand(call *c) {
  if (!fresh(c, 0, ND_FLOAT64)) return REFUSED;
  return made(nd_rand(c->e, c->r[0], c->g), c, 0);
}
static int f_randn(call *c) {
  if (!fresh(c, 0, ND_FLOAT64)) return REFUSED;
  return made(nd_randn(c->e, c->r[0], c->g), c, 0);
}
static int f_randint(call *c) { /* (low, high, sizes [, dtype]) */
  int64_t lo, hi;
  if (!whole(c, 0, &lo) || !whole(c, 1, &hi) || lo >= hi ||
      !sizes_given(c, 2) || !fresh(c, 2, ND_INT64))
    return REFUSED;
  return made(nd_randint(c->e, c->r[0], c->g, lo, hi), c, 0);
}
static int f_uniform(call *c) { /* (lo, hi, sizes [, dtype]) */
  if (!sizes_given(c, 2) || !fresh(c, 2, ND_FLOAT64)) return REFUSED;
  return made(nd_uniform(c->e, c->r[0], c->g, c->x[0], c->x[1]), c, 0);
}
static int f_normal(call *c) { /* (mean, std, sizes [, dtype]) */
  if (!sizes_given(c, 2) || !fresh(c, 2, ND_FLOAT64)) return REFUSED;
  return made(nd_normal(c->e, c->r[0], c->g, c->x[0], c->x[1]), c, 0);
}
static int f_bernoulli(call *c) { /* (p [, sizes [, dtype]]) or (probs) */
  if (!c->g || kind(c, 0) == K_BOOL) return REFUSED;
  if (kind(c, 0) == K_TENSOR)
    return given(c, 1) ? REFUSED
                       : made(nd_bernoulli_tensor(c->e, c->r[0], c->g,
                                                  c->ts[0]), c, 0);
  if (!(c->x[0] >= 0 && c->x[0] <= 1) || !fresh(c, 1, ND_FLOAT64))
    return REFUSED;
  return made(nd_bernoulli(c->e, c->r[0], c->g, c->x[0]), c, 0);
}
/* Positions from the core are 0-based: 1-based for Lua. */
static int one_based(call *c, int code) {
  if (code == MADE) {
    int64_t *p = nd_data(c->r[0]), n = nd_numel(c->r[0]);
    for (int64_t i = 0; i < n; i++) p[i]++;
  }
  return code;
}
static int f_randperm(call *c) { /* (n) */
  int64_t n;
  if (!c->g || !whole(c, 0, &n)) return REFUSED;
  return one_based(c, made(nd_randperm(c->e, c->r[0], c->g, n), c, 0));
}
static int f_multinomial(call *c) { /* (probs, n [, replacement]) */
  int64_t n;
  if (!c->g || !whole(c, 1, &n)) return REFUSED;
  return one_based(c, made(nd_multinomial(c->e, c->r[0], c->g, c->ts[0], n,
                                          flag(c, 2, 0)), c, 0));
}
static int f_uniform_(call *c) { /* (lo, hi [, g]): g handed over as c->g */
  if (!c->g) return REFUSED;
  return self(nd_uniform(c->e, c->t, c->g, c->x[0], c->x[1]));
}
static int f_normal_(call *c) { /* (mean, std) */
  if (!c->g) return REFUSED;
  return self(nd_normal(c->e, c->t, c->g, c->x[0], c->x[1]));
}
static int like(call *c, int normal) { /* ([dtype]): t's sizes */
  int dt = given(c, 0) ? (int)c->x[0] : c->t->dtype;
  if (!c->g || nd_empty(c->e, c->r[0], dt, c->t->ndim, c->t->size))
    return REFUSED;
  return made(normal ? nd_randn(c->e, c->r[0], c->g)
                     : nd_rand(c->e, c->r[0], c->g), c, 0);
}
static int f_rand_like(call *c) { return like(c, 0); }
static int f_randn_like(call *c) { return like(c, 1); }

/* tensor(data [, dtype]): a tensor's copy, a number or boolean (0-d),
 * or a flat table of at most ND_MAX_DIMS numbers (1-D: Lua's dims kind),
 * each written as set writes it; nested tables take the classic function
 * (lconstruct.c's rules). */
static int f_tensor(call *c) {
  int k = kind(c, 0);
  if (k == K_TENSOR) {
    int dt = dtype_at(c, 1, c->ts[0]->dtype);
    return dt < 0 ? REFUSED
                  : made(nd_to_dtype(c->e, c->r[0], c->ts[0], dt), c, 0);
  }
  if (k != K_NUM && k != K_BOOL && k != K_DIMS) return REFUSED;
  int dt = dtype_at(c, 1, k == K_BOOL ? ND_BOOL : ND_FLOAT64);
  int64_t n = k == K_DIMS ? (int64_t)c->x[0] : 1;
  const double *x = k == K_DIMS ? dv(c, 0) : c->x;
  if (dt < 0) return REFUSED;
  nd_operand s;
  for (int64_t i = 0; i < n; i++) { /* every value first: nothing allocated */
    nd_operand_number(&s, k == K_BOOL ? x[i] != 0 : x[i]);
    if (nd_scalar_fits(c->e, "tensor", dt, &s)) return REFUSED;
  }
  if (nd_empty(c->e, c->r[0], dt, k == K_DIMS, &n)) return REFUSED;
  for (int64_t i = 0; i < n; i++) /* row-major from offset 0 */
    nd_store_number(c->e, c->r[0], i, k == K_BOOL ? x[i] != 0 : x[i]);
  return MADE;
}
static int f_arange(call *c) { /* ([start,] stop [, step]) [, dtype] */
  int n = 0, ints = 1;
  while (n < 3 && kind(c, n) == K_NUM) n++;
  for (int i = 0; i < n; i++) ints &= c->x[i] == floor(c->x[i]);
  int dt = dtype_at(c, n, ints ? ND_INT64 : ND_FLOAT64);
  if (n == 0 || dt < 0 || (n < 3 && given(c, n + 1))) return REFUSED;
  double start = n >= 2 ? c->x[0] : 0, stop = c->x[n >= 2 ? 1 : 0];
  return made(nd_arange(c->e, c->r[0], dt, start, stop, n == 3 ? c->x[2] : 1),
              c, 0);
}
static int f_linspace(call *c) { /* (start, end, count [, dtype]) */
  int64_t n;
  if (!whole(c, 2, &n)) return REFUSED;
  return made(nd_linspace(c->e, c->r[0], dtype_at(c, 3, ND_FLOAT64), c->x[0],
                          c->x[1], n), c, 0);
}
static int f_eye(call *c) { /* (n [, m] [, dtype]) */
  int64_t n, m;
  int has_m = kind(c, 1) == K_NUM, dt = dtype_at(c, has_m ? 2 : 1, ND_FLOAT64);
  if (!whole(c, 0, &n) || (has_m && !whole(c, 1, &m)) || dt < 0 ||
      given(c, has_m ? 3 : 2))
    return REFUSED;
  return made(nd_eye(c->e, c->r[0], dt, n, has_m ? m : n), c, 0);
}

/* ---- nd.linalg (llinalg.c's rules: one matrix's det, cond, matrix_rank,
 * norm and slogdet are numbers) ---- */
#define LA1(name, numbers)                                                  \
  static int f_##name(call *c) {                                            \
    return made(nd_linalg_##name(c->e, c->r[0], c->t), c, numbers);         \
  }
LA1(inv, 0)
LA1(cholesky, 0)
LA1(svdvals, 0)
LA1(eigvalsh, 0)
LA1(pinv, 0)
LA1(det, 1)
LA1(cond, 1)
LA1(matrix_rank, 1)
static int f_solve(call *c) {
  return made(nd_linalg_solve(c->e, c->r[0], c->t, c->ts[0]), c, 0);
}
static int f_lstsq(call *c) {
  return made(nd_linalg_lstsq(c->e, c->r[0], c->t, c->ts[0]), c, 0);
}
static int f_slogdet(call *c) {
  return made(nd_linalg_slogdet(c->e, c->r[0], c->r[1], c->t), c, 1);
}
static int f_qr(call *c) {
  return made(nd_linalg_qr(c->e, c->r[0], c->r[1], c->t), c, 0);
}
static int f_eigh(call *c) {
  return made(nd_linalg_eigh(c->e, c->r[0], c->r[1], c->t), c, 0);
}
static int f_svd(call *c) {
  return made(nd_linalg_svd(c->e, c->r[0], c->r[1], c->r[2], c->t), c, 0);
}
static int f_matrix_power(call *c) {
  int64_t n;
  if (!whole(c, 0, &n)) return REFUSED;
  return made(nd_linalg_matrix_power(c->e, c->r[0], c->t, n), c, 0);
}

static int f_norm(call *c) { /* nd.linalg.norm(A [, ord]): a number ord */
  int ord = c->t->ndim == 1 ? ND_NORM_P : ND_NORM_FRO;
  double p = 2;
  if (given(c, 0)) {
    if (c->x[0] != c->x[0]) return REFUSED; /* NaN: raised by the classic */
    ord = ND_NORM_P;
    p = c->x[0];
  }
  return made(nd_linalg_norm(c->e, c->r[0], c->t, ord, p), c, 1);
}

/* The rows: name, module ("" nd's; "linalg"), results, the kinds of the
 * values after t (T a tensor, N a number, B a boolean, D a dtype, V a
 * number, boolean or tensor, * anything; lower case: or nil; nothing past
 * the end; a table of dims is taken where * is; g an optional generator,
 * which Lua hands over as the call's generator, nil here), the row,
 * whether there is no t (the constructors: every argument a value), and
 * a reduction's op. unique makes 1 or 2 results (return_counts). */
static const struct {
  const char *name, *module;
  int results;
  const char *kinds;
  int (*f)(call *);
  int values_only; /* no tensor first (constructors) */
  int op;          /* the reductions' */
} rows[] = {
#define REDUCE_ROW(E, name, arity, cls, unused)                             \
  {#name, "", ND_R_##E == ND_R_MIN || ND_R_##E == ND_R_MAX ? 2 : 1, "***",  \
   f_reduce, 0, ND_R_##E},
    ND_REDUCE_OPS(REDUCE_ROW, 0)
#undef REDUCE_ROW
    {"argmin", "", 1, "**", f_argext, 0, ND_R_MIN},
    {"argmax", "", 1, "**", f_argext, 0, ND_R_MAX},
    {"contiguous", "", 1, "", f_contiguous, 0, 0},
    {"reshape", "", 1, "****", f_reshape, 0, 0},
    {"storage", "", 1, "", f_storage, 0, 0},
    {"flatten", "", 1, "nn", f_flatten, 0, 0},
    {"to", "", 1, "D", f_to, 0, 0},
    {"float", "", 1, "", f_float, 0, 0},
    {"double", "", 1, "", f_double, 0, 0},
    {"int", "", 1, "", f_int, 0, 0},
    {"long", "", 1, "", f_long, 0, 0},
    {"byte", "", 1, "", f_byte, 0, 0},
    {"char", "", 1, "", f_char, 0, 0},
    {"short", "", 1, "", f_short, 0, 0},
    {"half", "", 1, "", f_half, 0, 0},
    {"bfloat16", "", 1, "", f_bfloat16, 0, 0},
    {"bool", "", 1, "", f_bool, 0, 0},
    {"copy_", "", 0, "T", f_copy_, 0, 0},
    {"cumsum", "", 1, "N", f_cumsum, 0, 0},
    {"cumprod", "", 1, "N", f_cumprod, 0, 0},
    {"softmax", "", 1, "N", f_softmax, 0, 0},
    {"log_softmax", "", 1, "N", f_log_softmax, 0, 0},
    {"sort", "", 2, "nb", f_sort, 0, 0},
    {"argsort", "", 1, "nb", f_argsort, 0, 0},
    {"topk", "", 2, "Nnbb", f_topk, 0, 0},
    {"kthvalue", "", 2, "Nnb", f_kthvalue, 0, 0},
    {"median", "", 2, "nb", f_median, 0, 0},
    {"var", "", 1, "nbn", f_var, 0, 0},
    {"std", "", 1, "nbn", f_std, 0, 0},
    {"logsumexp", "", 1, "Nb", f_logsumexp, 0, 0},
    {"count_nonzero", "", 1, "n", f_count_nonzero, 0, 0},
    {"histc", "", 1, "nnn", f_histc, 0, 0},
    {"unique", "", 2, "b", f_unique, 0, 0},
    {"searchsorted", "", 1, "Tb", f_searchsorted, 0, 0},
    {"dot", "", 1, "T", f_dot, 0, 0},
    {"mm", "", 1, "T", f_mm, 0, 0},
    {"mv", "", 1, "T", f_mv, 0, 0},
    {"bmm", "", 1, "T", f_bmm, 0, 0},
    {"outer", "", 1, "T", f_outer, 0, 0},
#define FUSED_ROWS(name)                                                    \
  {#name, "", 1, "TTnn", f_##name, 0, 0}, {#name "_", "", 0, "TTnn", f_##name##_, 0, 0},
    ND_FUSED_UPDATES(FUSED_ROWS)
#undef FUSED_ROWS
    {"tensordot", "", 1, "TN", f_tensordot, 0, 0},
    {"inner", "", 1, "T", f_inner, 0, 0},
    {"kron", "", 1, "T", f_kron, 0, 0},
    {"cross", "", 1, "Tn", f_cross, 0, 0},
    {"dist", "", 1, "Tn", f_dist, 0, 0},
    {"normalize", "", 1, "nnn", f_normalize, 0, 0},
    {"bincount", "", 1, "tn", f_bincount, 0, 0},
    {"one_hot", "", 1, "n", f_one_hot, 0, 0},
    {"index_select", "", 1, "NT", f_index_select, 0, 0},
    {"gather", "", 1, "NT", f_gather, 0, 0},
    {"take", "", 1, "T", f_take, 0, 0},
    {"masked_select", "", 1, "T", f_masked_select, 0, 0},
    {"nonzero", "", 1, "", f_nonzero, 0, 0},
    {"scatter_", "", 0, "NTV", f_scatter_, 0, 0},
    {"scatter_add_", "", 0, "NTT", f_scatter_add_, 0, 0},
    {"index_fill_", "", 0, "NTV", f_index_fill_, 0, 0},
    {"index_copy_", "", 0, "NTT", f_index_copy_, 0, 0},
    {"index_add_", "", 0, "NTTn", f_index_add_, 0, 0},
    {"masked_fill_", "", 0, "TV", f_masked_fill_, 0, 0},
    {"masked_scatter_", "", 0, "TT", f_masked_scatter_, 0, 0},
    {"inv", "linalg", 1, "", f_inv, 0, 0},
    {"cholesky", "linalg", 1, "", f_cholesky, 0, 0},
    {"svdvals", "linalg", 1, "", f_svdvals, 0, 0},
    {"eigvalsh", "linalg", 1, "", f_eigvalsh, 0, 0},
    {"pinv", "linalg", 1, "", f_pinv, 0, 0},
    {"det", "linalg", 1, "", f_det, 0, 0},
    {"cond", "linalg", 1, "", f_cond, 0, 0},
    {"matrix_rank", "linalg", 1, "", f_matrix_rank, 0, 0},
    {"solve", "linalg", 1, "T", f_solve, 0, 0},
    {"lstsq", "linalg", 1, "T", f_lstsq, 0, 0},
    {"slogdet", "linalg", 2, "", f_slogdet, 0, 0},
    {"qr", "linalg", 2, "", f_qr, 0, 0},
    {"eigh", "linalg", 2, "", f_eigh, 0, 0},
    {"svd", "linalg", 3, "", f_svd, 0, 0},
    {"matrix_power", "linalg", 1, "N", f_matrix_power, 0, 0},
    {"norm", "linalg", 1, "n", f_norm, 0, 0},
    {"fill_", "", 0, "V", f_fill_, 0, 0},
    {"zero_", "", 0, "", f_zero_, 0, 0},
    {"nan_to_num", "", 1, "nnn", f_nan_to_num, 0, 0},
    {"nan_to_num_", "", 0, "nnn", f_nan_to_num_, 0, 0},
    {"isclose", "", 1, "Vnn*", f_isclose, 0, 0},
    {"addcmul", "", 1, "TTn", f_addcmul, 0, 0},
    {"addcmul_", "", 0, "TTn", f_addcmul_, 0, 0},
    {"addcdiv", "", 1, "TTn", f_addcdiv, 0, 0},
    {"addcdiv_", "", 0, "TTn", f_addcdiv_, 0, 0},
    {"set_num_threads", "", 0, "N", f_set_num_threads, 1, 0},
    {"rand", "", 1, "****", f_rand, 1, 0},
    {"randn", "", 1, "****", f_randn, 1, 0},
    {"randint", "", 1, "NN**", f_randint, 1, 0},
    {"uniform", "", 1, "NN**", f_uniform, 1, 0},
    {"normal", "", 1, "NN**", f_normal, 1, 0},
    {"bernoulli", "", 1, "V***", f_bernoulli, 1, 0},
    {"randperm", "", 1, "N", f_randperm, 1, 0},
    {"multinomial", "", 1, "TNb", f_multinomial, 1, 0},
    {"uniform_", "", 0, "NNg", f_uniform_, 0, 0},
    {"normal_", "", 0, "NNg", f_normal_, 0, 0},
    {"rand_like", "", 1, "d", f_rand_like, 0, 0},
    {"randn_like", "", 1, "d", f_randn_like, 0, 0},
    {"tensor", "", 1, "*d", f_tensor, 1, 0},
    {"arange", "", 1, "N***", f_arange, 1, 0},
    {"linspace", "", 1, "NNNd", f_linspace, 1, 0},
    {"eye", "", 1, "N**", f_eye, 1, 0},
    {"cat", "", 1, "*n", f_cat, 1, 0},
    {"stack", "", 1, "*n", f_stack, 1, 0},
};
enum { NROWS = sizeof rows / sizeof *rows };

/* Whether the values' kinds are what the row's pattern takes. */
static int kinds_fit(const char *p, const call *c) {
  static const char up[] = "-NBDT"; /* the kinds' letters */
  for (int i = 0; i < 4; i++, p += *p != 0) {
    int k = kind(c, i);
    char w = *p;
    if (k == K_TENSOR && !c->ts[i]) return 0;
    if (k == K_NIL) {
      if (w >= 'A' && w <= 'Z') return 0;
      continue;
    }
    if (!w) return 0;
    if (w == '*') continue;
    if (k >= K_DIMS) return 0;
    if (w == 'V' || w == 'v') {
      if (k != K_NUM && k != K_BOOL && k != K_TENSOR) return 0;
    } else if (up[k] != (w & ~0x20)) {
      return 0;
    }
  }
  return 1;
}

int ndL_fcall(nd_err *e, nd_tensor *const *r, int id, const nd_tensor *t,
              const nd_tensor *const *ts, const nd_tensor *const *tl,
              const double *x, const double *dv, int kinds, void *gen) {
  if (id < 0 || id >= NROWS || (!t) != rows[id].values_only) return REFUSED;
  int n = rows[id].results;
  for (int k = 0; k < n; k++)
    if (!r[k] || !r[k]->storage) return REFUSED;
  call c = {e, {NULL, NULL, NULL}, t, ts, tl, x, dv, kinds, rows[id].op,
            ndL_generator_at(gen)};
  if (!kinds_fit(rows[id].kinds, &c)) return REFUSED;
  for (int k = 0; k < n; k++) c.r[k] = r[k];
  ndL_into in;
  ndL_into_begin(&in, c.r, n);
  e->code = ND_OK;
  int code = rows[id].f(&c);
  int fresh = code == MADE || code == VALUES;
  if (!ndL_into_end(&in, fresh ? ND_OK : ND_EINVAL) && fresh) return REFUSED;
  /* A result on t's storage is a view of t: lua/ops.lua makes it a view
   * object, which keeps t alive (as lua/views.lua's views do) and holds
   * no reference, so the core's goes -- t holds one meanwhile (for a small
   * tensor, whose elements are in its object, refs never drops to 0). */
  for (int k = 0; code == MADE && t && k < n; k++)
    if (c.r[k]->storage == t->storage) nd_storage_release(t->storage);
  return code;
}

/* C.fcalls(): { name, module, id, results, values_only [, generator] }
 * per row; a function, as C.optable() (lconsts.c) is. */
static int l_fcalls(lua_State *L) {
  lua_newtable(L);
  for (int i = 0; i < NROWS; i++) {
    lua_newtable(L);
    lua_pushstring(L, rows[i].name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, rows[i].module);
    lua_setfield(L, -2, "module");
    lua_pushinteger(L, i);
    lua_setfield(L, -2, "id");
    lua_pushinteger(L, rows[i].results);
    lua_setfield(L, -2, "results");
    lua_pushboolean(L, rows[i].values_only);
    lua_setfield(L, -2, "values_only");
    const char *g = strchr(rows[i].kinds, 'g');
    if (g) { /* which value may be a generator, for Lua to hand over */
      lua_pushinteger(L, g - rows[i].kinds + 1);
      lua_setfield(L, -2, "generator");
    }
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

void ndL_open_fcalls(lua_State *L) {
  lua_pushcfunction(L, l_fcalls);
  lua_setfield(L, -2, "fcalls");
}
