/* libFuzzer target over the C core's geometry, the .npy header parser and
 * the sort, indexing and mask families, einsum and convolution
 * (make fuzz-libfuzzer: clang -fsanitize=fuzzer,address,undefined).
 *
 * Input byte 0 picks the mode. Low bits 000: the rest is a .npy file for
 * nd_load_npy and nd_load_npy_mapped (what the mapping views, the copy
 * reads the same). Low bits 100: the rest is a safetensors file for
 * nd_safetensors_header and nd_safetensors_load, copied and mapped. Low bits 10: a program over sort/argsort/topk,
 * index_select/gather/scatter_add, masked_select and nonzero (families()
 * below). Odd: the rest is a program over one wrapped storage: an
 * as_strided view with fuzzed sizes, strides and offset, then a chain of
 * view operations with fuzzed arguments; after each step the invariants
 * are checked (every reachable element lies in the storage; the overlap
 * rule is exact below its bound, compared with a brute-force search;
 * broadcasting agrees with NumPy's rule; a planned matmul computes what a
 * naive loop computes). A broken invariant aborts: libFuzzer reports it. */
#include "shape.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CELLS 512 /* the wrapped storage: 512 float64 */
static double cells[CELLS];

typedef struct input {
  const uint8_t *p;
  size_t n;
} input;

static uint8_t byte(input *in) {
  if (!in->n) return 0;
  in->n--;
  return *in->p++;
}

/* Mostly small numbers, sometimes huge or negative ones. */
static int64_t number(input *in) {
  uint8_t b = byte(in);
  switch (b >> 5) {
  case 0: case 1: case 2: case 3: return b & 7;
  case 4: return -(int64_t)(b & 7);
  case 5: return (int64_t)(b & 31) - 16;
  case 6: { uint64_t v = 0; for (int i = 0; i < 8; i++) v = v << 8 | byte(in); return (int64_t)v; }
  default: return (int64_t)((uint64_t)1 << (b & 63));
  }
}

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "invariant broken: %s (line %d)\n", #c, __LINE__); abort(); } } while (0)

static int cmp(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static void check_tensor(const nd_tensor *t) {
  int64_t n = nd_numel(t), lo, hi;
  if (n == 0) return;
  nd_span(t, &lo, &hi);
  int64_t avail = t->storage->nbytes / nd_dtype_size(t->dtype);
  CHECK(lo >= 0 && hi < avail);
  if (n > 4096) return;
  /* Brute force: do two index tuples reach one element? */
  int64_t *off = malloc(sizeof *off * (size_t)n), idx[ND_MAX_DIMS] = {0};
  if (!off) return;
  for (int64_t k = 0; k < n; k++) {
    int64_t o = t->offset;
    for (int d = 0; d < t->ndim; d++) o += idx[d] * t->stride[d];
    CHECK(o >= 0 && o < avail);
    off[k] = o;
    for (int d = t->ndim - 1; d >= 0; d--) {
      if (++idx[d] < t->size[d]) break;
      idx[d] = 0;
    }
  }
  qsort(off, (size_t)n, sizeof *off, cmp);
  int dup = 0;
  for (int64_t k = 1; k < n; k++) dup |= off[k] == off[k - 1];
  free(off);
  CHECK(dup == nd_has_internal_overlap(t)); /* exact below 2^20 */
}

/* a @ b through nd_matmul against a naive loop (2-D float64 only). */
static void check_matmul(const nd_tensor *a, const nd_tensor *b) {
  nd_err e = {0};
  nd_tensor r = ND_UNSET;
  if (a->ndim != 2 || b->ndim != 2 || a->dtype != ND_FLOAT64 ||
      b->dtype != ND_FLOAT64 || nd_numel(a) > 4096 || nd_numel(b) > 4096)
    return;
  /* {m,0} @ {0,n} has empty operands but m*n results: keep the naive
   * loop (and the allocation) small, or one input runs for minutes; the
   * loop's m*n*k terms too, so no input runs for more than a few ms. */
  if (a->size[0] > 4096 || b->size[1] > 4096 || a->size[0] * b->size[1] > 65536 ||
      a->size[0] * b->size[1] * (a->size[1] ? a->size[1] : 1) > 65536)
    return;
  if (nd_matmul(&e, &r, a, b)) {
    CHECK(a->size[1] != b->size[0] || e.code == ND_ENOMEM ||
          e.code == ND_EOVERFLOW); /* {n,0} @ {0,n}: n*n may not fit */
    return;
  }
  for (int64_t i = 0; i < a->size[0]; i++)
    for (int64_t j = 0; j < b->size[1]; j++) {
      double s = 0, got;
      for (int64_t k = 0; k < a->size[1]; k++) {
        int64_t ia[2] = {i, k}, ib[2] = {k, j};
        double x, y;
        nd_get(&e, a, ia, &x);
        nd_get(&e, b, ib, &y);
        s += x * y;
      }
      int64_t ir[2] = {i, j};
      nd_get(&e, &r, ir, &got);
      CHECK(got == s); /* small integers: exact */
    }
  nd_release(&r);
}

static void check_broadcast(const nd_tensor *a, const nd_tensor *b) {
  nd_err e = {0};
  const nd_tensor *ts[2] = {a, b};
  int nd, ok = 1;
  int64_t size[ND_MAX_DIMS];
  int n = a->ndim > b->ndim ? a->ndim : b->ndim;
  for (int i = 0; i < n; i++) {
    int64_t x = i - (n - a->ndim) >= 0 ? a->size[i - (n - a->ndim)] : 1;
    int64_t y = i - (n - b->ndim) >= 0 ? b->size[i - (n - b->ndim)] : 1;
    ok &= x == y || x == 1 || y == 1;
  }
  CHECK((nd_broadcast_shape(&e, "fuzz", 2, ts, NULL, &nd, size) == ND_OK) == ok);
}

static void geometry(input *in) {
  nd_err e = {0};
  nd_tensor base = ND_UNSET, t = ND_UNSET, nx = ND_UNSET;
  int64_t n = 1 + byte(in) % CELLS;
  int dtype = byte(in) % 2 ? ND_FLOAT64 : (int)(byte(in) % ND_NDTYPES);
  int64_t count = n * 8 / nd_dtype_size(dtype);
  if (nd_wrap(&e, &base, cells, n * 8, dtype, 1, &count, NULL, NULL, NULL))
    abort();
  int ndim = byte(in) % 5;
  int64_t size[ND_MAX_DIMS], stride[ND_MAX_DIMS];
  for (int i = 0; i < ndim; i++) { size[i] = number(in); stride[i] = number(in); }
  if (nd_as_strided(&e, &t, &base, ndim, size, stride, number(in))) {
    nd_release(&base);
    return;
  }
  check_tensor(&t);
  nd_tensor other = ND_UNSET;
  nd_share(&other, &t);
  for (int steps = 0; steps < 8 && in->n; steps++) {
    int d1 = (int)number(in), d2 = (int)number(in);
    int64_t x = number(in), y = number(in), z = number(in);
    int64_t sz[ND_MAX_DIMS];
    nd_status st;
    switch (byte(in) % 17) {
    case 0: st = nd_select(&e, &nx, &t, d1, x); break;
    case 1: st = nd_narrow(&e, &nx, &t, d1, x, y); break;
    case 2: st = nd_slice(&e, &nx, &t, d1, x, y, z); break;
    case 3: st = nd_transpose(&e, &nx, &t, d1, d2); break;
    case 4: { int m = t.ndim + abs(d1 % 3);
      if (m > ND_MAX_DIMS) m = ND_MAX_DIMS;
      for (int i = 0; i < m; i++) sz[i] = number(in);
      st = nd_expand(&e, &nx, &t, m, sz); break; }
    case 5: sz[0] = x; sz[1] = y; sz[2] = z; st = nd_view(&e, &nx, &t, d2 % 4 < 0 ? 0 : d2 % 4, sz); break;
    case 6: sz[0] = x; sz[1] = y; sz[2] = z; st = nd_reshape(&e, &nx, &t, d2 % 4 < 0 ? 0 : d2 % 4, sz); break;
    case 7: st = nd_squeeze(&e, &nx, &t, d1); break;
    case 8: st = nd_unsqueeze(&e, &nx, &t, d1); break;
    case 9: st = nd_flatten(&e, &nx, &t, d1, d2); break;
    case 10: st = nd_unfold(&e, &nx, &t, d1, x, y); break;
    case 11: st = nd_diagonal(&e, &nx, &t, x, d1, d2); break;
    case 12: st = nd_movedim(&e, &nx, &t, d1, d2); break;
    case 13: { int dims[2] = {d1, d2}; st = nd_flip(&e, &nx, &t, 1 + (x & 1), dims); break; }
    case 14: { int perm[ND_MAX_DIMS]; for (int i = 0; i < t.ndim; i++) perm[i] = (i + d1) % (t.ndim ? t.ndim : 1);
      if (d2 & 1 && t.ndim > 1) perm[0] = perm[1];
      st = nd_permute(&e, &nx, &t, perm); break; }
    case 15: check_broadcast(&t, &other); check_matmul(&t, &other); continue;
    default: { int64_t s2[4] = {x, y, z, number(in)}, t2[4] = {number(in), number(in), number(in), number(in)};
      st = nd_as_strided(&e, &nx, &t, d1 & 3, s2, t2, number(in)); break; }
    }
    if (st) { CHECK(nx.storage == NULL); continue; }
    check_tensor(&nx);
    nd_release(&other);
    other = t;
    t = nx;
    nx = (nd_tensor)ND_UNSET;
  }
  nd_release(&other);
  nd_release(&t);
  nd_release(&base);
}

/* ---- the tensor families: sort/argsort/topk, index_select/gather/
 * scatter_add, masked_select, nonzero ---------------------------------- *
 * Operands are fuzzed strided views (as_strided over four wrapped
 * storages: float64, int64, int32, bool) with fuzzed, possibly
 * out-of-range int64/int32 index tensors. Each call is compared with a naive loop: the status with
 * a model of the documented rules (dims, shapes, positions, overlap), a
 * result element by element, and the storages with snapshots (a failed
 * call writes nothing; a read-only call never writes; scatter_add writes
 * only what it should). Operands and results are bounded by FAM_LIM
 * elements and a result that would be larger is not asked for, so no
 * input runs long; one whose byte count overflows must fail at once. */
#define FAM_LIM 256
static double fcells[CELLS];
static int64_t icells[CELLS];
static int32_t jcells[CELLS];
static uint8_t bcells[CELLS];
static double fsnap[CELLS];
static int64_t isnap[CELLS];
static int32_t jsnap[CELLS];
static uint8_t bsnap[CELLS];

static void snap(void) {
  memcpy(fsnap, fcells, sizeof fcells);
  memcpy(isnap, icells, sizeof icells);
  memcpy(jsnap, jcells, sizeof jcells);
  memcpy(bsnap, bcells, sizeof bcells);
}
static int unchanged(void) {
  return !memcmp(fsnap, fcells, sizeof fcells) &&
         !memcmp(isnap, icells, sizeof icells) &&
         !memcmp(jsnap, jcells, sizeof jcells) &&
         !memcmp(bsnap, bcells, sizeof bcells);
}

static uint64_t rng(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

/* Cell values from a seed: small integers (sums stay exact in any
 * order), with -0, inf and NaN among the floats and, when `huge`, some
 * far-out int64s (positions far out of range; sums that wrap). */
static void fill_cells(input *in) {
  uint64_t s = (uint64_t)byte(in) << 8 | byte(in);
  const int range = 1 + byte(in) % 8, huge = byte(in) % 4 == 0;
  for (int i = 0; i < CELLS; i++) {
    uint64_t r = rng(&s);
    int64_t v = (int64_t)(r % (uint64_t)(2 * range + 1)) - range;
    switch ((r >> 32) % 16) {
    case 0: fcells[i] = -0.0; break;
    case 1: fcells[i] = (r >> 40) & 1 ? INFINITY : -INFINITY; break;
    case 2: fcells[i] = NAN; break;
    default: fcells[i] = (double)v;
    }
    icells[i] = huge && (r >> 36) % 8 == 0 ? (int64_t)rng(&s) : v;
    jcells[i] = huge && (r >> 52) % 8 == 0 ? (int32_t)rng(&s) : (int32_t)v;
    bcells[i] = (r >> 44) & 1;
  }
}

/* A view of one of the storages: up to 3 dims of mostly small sizes,
 * small strides (negative and 0 too), sometimes huge ones. */
static int fam_view(input *in, nd_tensor *out, const nd_tensor *base) {
  nd_err e = {0};
  int ndim = byte(in) % 4;
  int64_t size[3], stride[3];
  for (int i = 0; i < ndim; i++) {
    uint8_t b = byte(in);
    size[i] = b < 240 ? b % 6 : number(in);
    b = byte(in);
    stride[i] = b < 240 ? (int64_t)(b % 11) - 5 : number(in);
  }
  return nd_as_strided(&e, out, base, ndim, size, stride, byte(in) % CELLS) == ND_OK;
}

/* The element count of size, or -1 when it overflows (a 0 anywhere: 0). */
static int64_t small_numel(int ndim, const int64_t *size) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++)
    if (size[i] == 0) return 0;
  for (int i = 0; i < ndim; i++)
    if (nd_mul_ovf(n, size[i], &n)) return -1;
  return n;
}

static char *elem(const nd_tensor *t, const int64_t *idx) {
  int64_t o = t->offset;
  for (int d = 0; d < t->ndim; d++) o += idx[d] * t->stride[d];
  return (char *)t->storage->data + o * nd_dtype_size(t->dtype);
}
static int64_t geti(const nd_tensor *t, const int64_t *idx) {
  const char *p = elem(t, idx);
  return t->dtype == ND_INT64 ? *(const int64_t *)p
         : t->dtype == ND_INT32 ? *(const int32_t *)p : *(const uint8_t *)p;
}
/* Next row-major index tuple of size (dim `skip` held at 0; -1: none);
 * 0 after the last. */
static int next(int ndim, const int64_t *size, int64_t *idx, int skip) {
  for (int d = ndim - 1; d >= 0; d--) {
    if (d == skip) continue;
    if (++idx[d] < size[d]) return 1;
    idx[d] = 0;
  }
  return 0;
}
/* The sort order: NaN largest, -0 equal to +0. */
static int order(const nd_tensor *t, const char *a, const char *b) {
  if (t->dtype == ND_FLOAT64) {
    double x = *(const double *)a, y = *(const double *)b;
    if (x != x || y != y) return (x != x) - (y != y);
    return (x > y) - (x < y);
  }
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}
/* A position among n (base 0, negatives from the end), or -1. */
static int64_t pos(int64_t w, int64_t n) {
  int64_t q = w < 0 ? w + n : w;
  return q >= 0 && q < n ? q : -1;
}
static int positions_ok(const nd_tensor *ix, int64_t n) {
  int64_t idx[ND_MAX_DIMS] = {0};
  if (nd_numel(ix) == 0) return 1;
  do {
    if (pos(geti(ix, idx), n) < 0) return 0;
  } while (next(ix->ndim, ix->size, idx, -1));
  return 1;
}
#define FAIL_UNSET(st, r) CHECK((st) != ND_OK && (r).storage == NULL)

/* sort (values), argsort (!values) or topk (k >= 0) of t along dim. */
static void fam_sort(input *in, const nd_tensor *t) {
  nd_err e = {0};
  nd_tensor v = ND_UNSET, ix = ND_UNSET;
  int dim = (int)(byte(in) % 9) - 4, flag = byte(in), want_v = flag & 1;
  int64_t k = -1;
  int d = dim < 0 && t->ndim ? dim + t->ndim : dim;
  int ok = t->ndim == 0 ? dim == 0 || dim == -1 : d >= 0 && d < t->ndim;
  if (t->ndim == 0) d = 0;
  const int64_t n = t->ndim ? (ok ? t->size[d] : 0) : 1;
  nd_status st;
  if (flag & 4) {
    k = (int64_t)(byte(in) % 8) - 1;
    ok = ok && k >= 0 && k <= n;
    st = nd_topk(&e, &v, &ix, t, k, dim, flag & 2, flag & 8);
  } else {
    st = nd_sort(&e, want_v ? &v : NULL, &ix, t, dim, flag & 2);
  }
  CHECK(unchanged());
  CHECK((st == ND_OK) == ok);
  if (st) { FAIL_UNSET(st, v); FAIL_UNSET(st, ix); return; }
  const int64_t m = k >= 0 ? k : n; /* lane length of the results */
  if (t->ndim == 0 && m == 0) { /* topk(0) of a 0-d t: empty, 1-D */
    CHECK(ix.dtype == ND_INT64 && ix.ndim == 1 && ix.size[0] == 0);
    goto done;
  }
  CHECK(ix.dtype == ND_INT64 && ix.ndim == t->ndim);
  for (int i = 0; i < t->ndim; i++)
    CHECK(ix.size[i] == (i == d ? m : t->size[i]));
  if (v.storage) CHECK(v.dtype == t->dtype && small_numel(v.ndim, v.size) == nd_numel(&ix));
  if (nd_numel(t) == 0 || t->ndim == 0) goto done;
  const int desc = (flag & 2) != 0; /* descending, or topk's largest */
  const int64_t es = nd_dtype_size(t->dtype);
  int64_t li[ND_MAX_DIMS] = {0}; /* lane start: li[d] = 0 */
  do {
    uint8_t seen[FAM_LIM] = {0};
    int64_t a[ND_MAX_DIMS], prevq = -1;
    memcpy(a, li, sizeof a);
    const char *prev = NULL;
    for (int64_t j = 0; j < m; j++) {
      a[d] = j;
      int64_t q = geti(&ix, a), b[ND_MAX_DIMS];
      CHECK(q >= 0 && q < n && !seen[q]);
      seen[q] = 1;
      memcpy(b, li, sizeof b);
      b[d] = q;
      const char *x = elem(t, b);
      if (v.storage) CHECK(!memcmp(elem(&v, a), x, (size_t)es));
      if (prev && (k < 0 || flag & 8)) { /* sorted: order, stable ties */
        int c = order(t, prev, x);
        CHECK(desc ? c >= 0 : c <= 0);
        if (k < 0 && c == 0) CHECK(prevq < q);
      }
      prev = x;
      prevq = q;
    }
    if (k > 0) { /* topk: nothing left out is better than what was taken */
      const char *worst = NULL;
      for (int64_t q = 0; q < n; q++) {
        int64_t b[ND_MAX_DIMS];
        memcpy(b, li, sizeof b);
        b[d] = q;
        const char *x = elem(t, b);
        if (seen[q] && (!worst || (desc ? order(t, x, worst) < 0 : order(t, x, worst) > 0)))
          worst = x;
      }
      for (int64_t q = 0; q < n; q++) {
        int64_t b[ND_MAX_DIMS];
        memcpy(b, li, sizeof b);
        b[d] = q;
        if (!seen[q]) CHECK(desc ? order(t, elem(t, b), worst) <= 0
                                 : order(t, elem(t, b), worst) >= 0);
      }
    }
  } while (next(t->ndim, t->size, li, d));
done:
  nd_release(&v);
  nd_release(&ix);
}

/* index_select (sel) or gather of t along dim by ix. */
static void fam_gather(input *in, const nd_tensor *t, const nd_tensor *ix,
                       int sel) {
  nd_err e = {0};
  nd_tensor r = ND_UNSET;
  int dim = (int)(byte(in) % 6) - 1, ok = dim >= 0 && dim < t->ndim;
  int64_t size[ND_MAX_DIMS];
  int rn = sel ? t->ndim : ix->ndim;
  if (sel) {
    ok = ok && ix->ndim == 1;
    memcpy(size, t->size, sizeof size);
    if (ok) size[dim] = ix->size[0];
  } else {
    ok = ok && ix->ndim == t->ndim;
    for (int i = 0; ok && i < t->ndim; i++)
      ok = i == dim || ix->size[i] <= t->size[i];
    memcpy(size, ix->size, sizeof size);
  }
  /* a result too large to check is not asked for (it would be allocated
   * before the positions are checked); one whose byte count overflows
   * must fail without an allocation */
  int64_t rnum = small_numel(rn, size), bytes;
  const int huge = rnum < 0 || nd_mul_ovf(rnum, 8, &bytes);
  if (ok && !huge && rnum > FAM_LIM) return;
  ok = ok && positions_ok(ix, t->size[dim]);
  nd_status st = sel ? nd_index_select(&e, &r, t, dim, ix)
                     : nd_gather(&e, &r, t, dim, ix);
  CHECK(unchanged());
  if (huge) { FAIL_UNSET(st, r); return; }
  CHECK((st == ND_OK) == ok);
  if (st) { FAIL_UNSET(st, r); return; }
  CHECK(r.dtype == t->dtype && r.ndim == rn);
  for (int i = 0; i < rn; i++) CHECK(r.size[i] == size[i]);
  if (rnum == 0) goto done;
  int64_t a[ND_MAX_DIMS] = {0};
  do {
    int64_t b[ND_MAX_DIMS], w;
    memcpy(b, a, sizeof b);
    if (sel) {
      int64_t one[1] = {a[dim]};
      w = geti(ix, one);
    } else {
      w = geti(ix, a);
    }
    b[dim] = pos(w, t->size[dim]);
    CHECK(!memcmp(elem(&r, a), elem(t, b), (size_t)nd_dtype_size(t->dtype)));
  } while (next(rn, size, a, -1));
done:
  nd_release(&r);
}

/* t:scatter_add_(dim, ix, src) against the same adds on a copy. */
static void fam_scatter_add(input *in, const nd_tensor *t,
                            const nd_tensor *ix, const nd_tensor *src) {
  nd_err e = {0};
  int dim = (int)(byte(in) % 6) - 1;
  int ok = dim >= 0 && dim < t->ndim && ix->ndim == t->ndim &&
           src->ndim == t->ndim && !(src->dtype == ND_FLOAT64 && t->dtype == ND_INT64);
  for (int i = 0; ok && i < t->ndim; i++)
    ok = (i == dim || ix->size[i] <= t->size[i]) && ix->size[i] <= src->size[i];
  ok = ok && positions_ok(ix, t->size[dim]) && !nd_has_internal_overlap(t);
  /* the expected storages: adds of what src and ix hold before any write */
  static double fexp[CELLS];
  static int64_t iexp[CELLS];
  memcpy(fexp, fcells, sizeof fexp);
  memcpy(iexp, icells, sizeof iexp);
  int exact = 1;
  if (ok && nd_numel(ix) > 0) {
    int64_t a[ND_MAX_DIMS] = {0};
    do {
      int64_t b[ND_MAX_DIMS];
      memcpy(b, a, sizeof b);
      b[dim] = pos(geti(ix, a), t->size[dim]);
      const char *s = elem(src, a);
      int64_t cell = (elem(t, b) - (char *)t->storage->data) / 8;
      if (t->dtype == ND_FLOAT64) {
        double x = src->dtype == ND_FLOAT64 ? *(const double *)s
                                            : (double)*(const int64_t *)s;
        if (src->dtype == ND_INT64 && (x > 0x1p40 || x < -0x1p40)) exact = 0;
        fexp[cell] += x;
      } else {
        iexp[cell] = (int64_t)((uint64_t)iexp[cell] + (uint64_t)*(const int64_t *)s);
      }
    } while (next(ix->ndim, ix->size, a, -1));
  }
  nd_status st = nd_scatter_add(&e, t, dim, ix, src);
  CHECK((st == ND_OK) == ok);
  if (st) { CHECK(unchanged()); return; }
  CHECK(!memcmp(bsnap, bcells, sizeof bcells));
  CHECK(!memcmp(iexp, icells, sizeof iexp));
  if (exact)
    for (int i = 0; i < CELLS; i++)
      CHECK(fexp[i] == fcells[i] ? signbit(fexp[i]) == signbit(fcells[i])
                                 : fexp[i] != fexp[i] && fcells[i] != fcells[i]);
}

static void fam_masked_select(const nd_tensor *t, const nd_tensor *mask) {
  nd_err e = {0};
  nd_tensor r = ND_UNSET;
  int lead = t->ndim - mask->ndim, ok = lead >= 0;
  for (int i = 0; ok && i < mask->ndim; i++)
    ok = mask->size[i] == 1 || mask->size[i] == t->size[i + lead];
  nd_status st = nd_masked_select(&e, &r, t, mask);
  CHECK(unchanged());
  CHECK((st == ND_OK) == ok);
  if (st) { FAIL_UNSET(st, r); return; }
  CHECK(r.ndim == 1 && r.dtype == t->dtype);
  int64_t a[ND_MAX_DIMS] = {0}, j = 0;
  const size_t es = (size_t)nd_dtype_size(t->dtype);
  if (nd_numel(t) > 0) do {
    int64_t m[ND_MAX_DIMS];
    for (int i = 0; i < mask->ndim; i++)
      m[i] = mask->size[i] == 1 ? 0 : a[i + lead];
    if (*elem(mask, m)) {
      CHECK(j < r.size[0]);
      int64_t o[1] = {j++};
      CHECK(!memcmp(elem(&r, o), elem(t, a), es));
    }
  } while (next(t->ndim, t->size, a, -1));
  CHECK(j == r.size[0]);
  nd_release(&r);
}

static void fam_nonzero(const nd_tensor *t) {
  nd_err e = {0};
  nd_tensor r = ND_UNSET;
  nd_status st = nd_nonzero(&e, &r, t);
  CHECK(unchanged());
  CHECK(st == ND_OK);
  CHECK(r.ndim == 2 && r.dtype == ND_INT64 && r.size[1] == t->ndim);
  int64_t a[ND_MAX_DIMS] = {0}, j = 0;
  if (nd_numel(t) > 0) do {
    const char *p = elem(t, a);
    int nz = t->dtype == ND_FLOAT64 ? *(const double *)p != 0
             : t->dtype == ND_INT64 ? *(const int64_t *)p != 0 : *p != 0;
    if (!nz) continue;
    CHECK(j < r.size[0]);
    for (int i = 0; i < t->ndim; i++) {
      int64_t o[2] = {j, i};
      CHECK(geti(&r, o) == a[i]);
    }
    j++;
  } while (next(t->ndim, t->size, a, -1));
  CHECK(j == r.size[0]);
  nd_release(&r);
}

/* einsum over up to three int64 views with labels from "ijk" (repeats:
 * diagonals; size 1 broadcasts), an explicit or implicit output, now and
 * then a broken spec: it succeeds exactly when its plan does, with the
 * plan's size, never writes an operand, and equals a brute-force sum over
 * every assignment of the labels (int64 wraps, so any order is exact). */
static void fam_einsum(input *in, const nd_tensor *base) {
  nd_err e = {0};
  nd_tensor op[3] = {ND_UNSET, ND_UNSET, ND_UNSET}, r = ND_UNSET;
  const nd_tensor *ops[3] = {&op[0], &op[1], &op[2]};
  char spec[64], *p = spec;
  int n = 1 + byte(in) % 3, lab[3][3], used[3] = {0, 0, 0};
  int64_t size[3] = {1, 1, 1};
  for (int k = 0; k < n; k++) {
    if (!fam_view(in, &op[k], base) || nd_numel(&op[k]) > FAM_LIM) goto out;
    if (k) *p++ = ',';
    for (int d = 0; d < op[k].ndim; d++) {
      int l = lab[k][d] = byte(in) % 3;
      *p++ = (char)('i' + l);
      used[l]++;
      if (op[k].size[d] > 8) goto out; /* keeps the brute force small */
      if (op[k].size[d] != 1) size[l] = op[k].size[d];
    }
  }
  int out[3], nout = 0;
  const uint8_t how = byte(in);
  if (how % 3) { /* explicit: a subset of the labels used, in some order */
    *p++ = '-', *p++ = '>';
    for (int j = 0; j < 3; j++) {
      int l = (how / 3 + j) % 3;
      if (used[l] && byte(in) % 2) *p++ = (char)('i' + l), out[nout++] = l;
    }
  } else { /* implicit: the labels seen once, in order */
    for (int l = 0; l < 3; l++)
      if (used[l] == 1) out[nout++] = l;
  }
  *p = '\0';
  if (how > 240) spec[how % (p - spec + 1)] = "#.-> "[how % 5]; /* broken */
  void *block = malloc(nd_einsum_path_bytes(n));
  CHECK(block);
  nd_einsum_path *path = nd_einsum_path_init(block, n);
  nd_err pe = {0};
  const int planned = nd_einsum_plan(&pe, path, spec, n, ops) == ND_OK;
  snap();
  const int ran = nd_einsum(&e, &r, spec, n, ops) == ND_OK;
  CHECK(unchanged());
  CHECK(planned == ran);
  if (ran) {
    CHECK(r.ndim == path->ndim && r.dtype == ND_INT64);
    for (int d = 0; d < r.ndim; d++) CHECK(r.size[d] == path->size[d]);
    if (how <= 240 && r.ndim == nout) { /* the brute force */
      int64_t idx[3];
      uint64_t want[512] = {0};
      int64_t total = 1;
      for (int l = 0; l < 3; l++) total *= used[l] ? size[l] : 1;
      for (int64_t a = 0; a < total; a++) {
        int64_t rest = a;
        for (int l = 2; l >= 0; l--) {
          int64_t m = used[l] ? size[l] : 1;
          idx[l] = rest % m, rest /= m;
        }
        uint64_t prod = 1;
        for (int k = 0; k < n; k++) {
          const int64_t *c = (const int64_t *)op[k].storage->data;
          int64_t off = op[k].offset;
          for (int d = 0; d < op[k].ndim; d++)
            off += (op[k].size[d] == 1 ? 0 : idx[lab[k][d]]) * op[k].stride[d];
          prod *= (uint64_t)c[off];
        }
        int64_t o = 0;
        for (int j = 0; j < nout; j++) o = o * size[out[j]] + idx[out[j]];
        want[o] += prod;
      }
      const int64_t *got = (const int64_t *)r.storage->data;
      for (int64_t o = 0; o < nd_numel(&r); o++) CHECK((uint64_t)got[o] == want[o]);
    }
  } else {
    CHECK(e.msg[0] && r.storage == NULL);
  }
  nd_release(&r);
  free(path);
out:
  for (int k = 0; k < 3; k++) nd_release(&op[k]);
}

/* conv1d/2d/3d over views of small whole numbers (every sum exact, in any
 * order) with fuzzed shapes, strides and options, huge ones too: the call
 * succeeds exactly when its plan does, with the plan's size, writes no
 * operand, and equals the definition summed term by term (rounded once to
 * the dtype: float16 and bfloat16 sum in float32, where these sums are
 * exact). The dtype comes after the views (no byte left: float64). */
static double ccells[CELLS];
static int conv_view(input *in, nd_tensor *out, const nd_tensor *base,
                     int ndim) {
  nd_err e = {0};
  int64_t size[5], stride[5];
  for (int i = 0; i < ndim; i++) {
    uint8_t b = byte(in);
    size[i] = b < 250 ? b % 5 + (b % 23 != 0) : number(in);
    b = byte(in);
    stride[i] = b < 245 ? (int64_t)(b % 13) - 6 : number(in);
  }
  return nd_as_strided(&e, out, base, ndim, size, stride, byte(in) % CELLS) == ND_OK;
}
/* Every base holds ccells' values at the same positions. */
static double conv_at(const nd_tensor *t, const int64_t *idx) {
  int64_t off = t->offset;
  for (int d = 0; d < t->ndim; d++) off += idx[d] * t->stride[d];
  return ccells[off];
}
static double round_to(int dt, double v) {
  return dt == ND_FLOAT32    ? (double)(float)v
         : dt == ND_FLOAT16  ? nd_half_to_float(nd_double_to_half(v))
         : dt == ND_BFLOAT16 ? nd_bf16_to_float(nd_double_to_bf16(v))
                             : v;
}
/* *t as the same view of base (a copy of its base in another dtype). */
static int rebase(nd_tensor *t, const nd_tensor *base) {
  nd_err e = {0};
  nd_tensor v = ND_UNSET;
  if (nd_as_strided(&e, &v, base, t->ndim, t->size, t->stride, t->offset)) return 0;
  nd_release(t);
  *t = v;
  return 1;
}
static void fam_conv(input *in) {
  nd_err e = {0}, pe = {0};
  nd_tensor C = ND_UNSET, x = ND_UNSET, w = ND_UNSET, b = ND_UNSET, r = ND_UNSET;
  nd_tensor Cd = ND_UNSET, r64 = ND_UNSET;
  static const int dts[4] = {ND_FLOAT64, ND_FLOAT32, ND_FLOAT16, ND_BFLOAT16};
  int64_t n = CELLS;
  for (int i = 0; i < CELLS; i++) ccells[i] = (double)(jcells[i] % 8);
  if (nd_wrap(&e, &C, ccells, sizeof ccells, ND_FLOAT64, 1, &n, NULL, NULL, NULL))
    abort();
  const int nsp = 1 + byte(in) % 3, batched = byte(in) % 4 != 0;
  nd_conv_options o = ND_CONV_OPTIONS_INIT;
  for (int d = 0; d < nsp; d++) {
    uint8_t v = byte(in);
    o.stride[d] = v < 250 ? 1 + v % 3 : number(in);
    v = byte(in);
    o.dilation[d] = v < 250 ? 1 + v % 2 : number(in);
    v = byte(in);
    o.padding[d] = v < 250 ? v % 3 : number(in);
  }
  o.groups = 1 + byte(in) % 3;
  o.padding_mode = byte(in) % 4 % 3;
  const int has_bias = byte(in) % 2;
  if (!conv_view(in, &x, &C, nsp + 1 + batched) ||
      !conv_view(in, &w, &C, nsp + 2) ||
      (has_bias && !conv_view(in, &b, &C, 1)))
    goto out;
  const int dt = dts[byte(in) % 4];
  if (dt != ND_FLOAT64 &&
      (nd_to_dtype(&e, &Cd, &C, dt) || !rebase(&x, &Cd) || !rebase(&w, &Cd) ||
       (has_bias && !rebase(&b, &Cd))))
    goto out;
  nd_conv_path p;
  const int planned = nd_conv_plan(&pe, &p, nsp, &x, &w, has_bias ? &b : NULL, &o) == ND_OK;
  if (planned && p.bytes > (1 << 22)) goto out; /* libFuzzer's malloc limit */
  double snapc[CELLS];
  memcpy(snapc, ccells, sizeof snapc);
  const int ran = nd_conv(&e, &r, nsp, &x, &w, has_bias ? &b : NULL, &o) == ND_OK;
  CHECK(!memcmp(snapc, ccells, sizeof snapc));
  CHECK(planned == ran);
  if (!ran) {
    CHECK(e.msg[0] && r.storage == NULL);
    goto out;
  }
  CHECK(r.ndim == p.ndim && r.dtype == dt);
  for (int d = 0; d < r.ndim; d++) CHECK(r.size[d] == p.size[d]);
  const int64_t N = p.n, O = p.o, cg = p.c / p.groups, og = p.o / p.groups;
  int64_t S = 1, K = 1;
  double terms = (double)N * (double)O * (double)cg; /* (no int64 wrap) */
  for (int d = 0; d < nsp; d++)
    terms *= (double)p.out[d] * (double)p.kernel[d];
  if (terms > 200000) goto out; /* keeps the brute force quick */
  for (int d = 0; d < nsp; d++) S *= p.out[d], K *= p.kernel[d];
  if (dt != ND_FLOAT64 && nd_to_dtype(&e, &r64, &r, ND_FLOAT64)) goto out;
  const nd_tensor *rd = dt != ND_FLOAT64 ? &r64 : &r;
  const double *got = (const double *)rd->storage->data + rd->offset;
  for (int64_t nn = 0; nn < N; nn++)
    for (int64_t oo = 0; oo < O; oo++)
      for (int64_t q = 0; q < S; q++) {
        double want = has_bias ? conv_at(&b, &oo) : 0;
        int64_t pos[3], rest = q;
        for (int d = nsp - 1; d >= 0; d--) pos[d] = rest % p.out[d], rest /= p.out[d];
        for (int64_t ci = 0; ci < cg; ci++)
          for (int64_t kk = 0; kk < K; kk++) {
            int64_t xi[5], wi[5], k[3], kr = kk, inside = 1;
            for (int d = nsp - 1; d >= 0; d--) k[d] = kr % p.kernel[d], kr /= p.kernel[d];
            int a = 0;
            if (batched) xi[a++] = nn;
            xi[a++] = oo / og * cg + ci;
            wi[0] = oo, wi[1] = ci;
            for (int d = 0; d < nsp; d++) {
              int64_t at = pos[d] * p.stride[d] + k[d] * p.dilation[d] - p.pad_lo[d];
              inside &= at >= 0 && at < p.in[d];
              xi[a++] = at;
              wi[2 + d] = k[d];
            }
            if (inside) want += conv_at(&x, xi) * conv_at(&w, wi);
          }
        CHECK(got[(nn * O + oo) * S + q] == round_to(dt, want));
      }
out:
  nd_release(&r), nd_release(&b), nd_release(&w), nd_release(&x), nd_release(&C);
  nd_release(&Cd), nd_release(&r64);
}

static void families(input *in) {
  nd_err e = {0};
  nd_tensor F = ND_UNSET, I = ND_UNSET, J = ND_UNSET, B = ND_UNSET;
  int64_t n = CELLS;
  fill_cells(in);
  if (nd_wrap(&e, &F, fcells, sizeof fcells, ND_FLOAT64, 1, &n, NULL, NULL, NULL) ||
      nd_wrap(&e, &I, icells, sizeof icells, ND_INT64, 1, &n, NULL, NULL, NULL) ||
      nd_wrap(&e, &J, jcells, sizeof jcells, ND_INT32, 1, &n, NULL, NULL, NULL) ||
      nd_wrap(&e, &B, bcells, sizeof bcells, ND_BOOL, 1, &n, NULL, NULL, NULL))
    abort();
  for (int steps = 0; steps < 4 && in->n; steps++) {
    const uint8_t op = byte(in);
    const nd_tensor *data = op & 8 ? &I : &F;
    nd_tensor t = ND_UNSET, x = ND_UNSET, s = ND_UNSET;
    /* index from I or J (int32), mask from B; src from F or I */
    const nd_tensor *index = op & 64 ? &J : &I;
    if (!fam_view(in, &t, op % 7 == 6 && op & 16 ? &B : data)) goto next;
    if (nd_numel(&t) > FAM_LIM) goto next;
    snap();
    if (op >= 224) { /* einsum's own operands */
      fam_einsum(in, &I);
      goto next;
    }
    if (op >= 208) { /* conv's own operands */
      fam_conv(in);
      goto next;
    }
    switch (op % 7) {
    case 0: case 1: fam_sort(in, &t); break;
    case 2: case 3:
      if (fam_view(in, &x, index) && nd_numel(&x) <= FAM_LIM)
        fam_gather(in, &t, &x, op % 7 == 2);
      break;
    case 4:
      if (fam_view(in, &x, index) && nd_numel(&x) <= FAM_LIM &&
          fam_view(in, &s, op & 32 ? &I : &F) && nd_numel(&s) <= FAM_LIM)
        fam_scatter_add(in, &t, &x, &s);
      break;
    case 5:
      if (fam_view(in, &x, &B) && nd_numel(&x) <= FAM_LIM)
        fam_masked_select(&t, &x);
      break;
    default: fam_nonzero(&t); break;
    }
  next:
    nd_release(&t);
    nd_release(&x);
    nd_release(&s);
  }
  nd_release(&F);
  nd_release(&I);
  nd_release(&J);
  nd_release(&B);
}

/* The input's bytes as a file of this process's. */
static const char *as_file(input *in, const char *ext) {
  static char path[64];
  snprintf(path, sizeof path, "/tmp/nd-fuzz-%d.%s", (int)getpid(), ext);
  FILE *f = fopen(path, "wb");
  if (!f) return NULL;
  fwrite(in->p, 1, in->n, f);
  fclose(f);
  return path;
}

/* The same dtype, sizes and row-major bytes. */
static int same_elements(const nd_tensor *a, const nd_tensor *b) {
  if (a->dtype != b->dtype || a->ndim != b->ndim ||
      memcmp(a->size, b->size, sizeof(int64_t) * (size_t)a->ndim))
    return 0;
  nd_err e = {0};
  nd_tensor x = ND_UNSET, y = ND_UNSET;
  int eq = 1; /* out of memory: nothing to compare */
  if (nd_contiguous(&e, &x, a) == ND_OK && nd_contiguous(&e, &y, b) == ND_OK)
    eq = !memcmp(nd_data(&x), nd_data(&y),
                 (size_t)(nd_numel(&x) * nd_dtype_size(x.dtype)));
  if (x.storage) nd_release(&x);
  if (y.storage) nd_release(&y);
  return eq;
}

static void npy(input *in) {
  const char *path = as_file(in, "npy");
  if (!path) return;
  nd_err e = {0};
  nd_tensor t = ND_UNSET, m = ND_UNSET;
  nd_status st = nd_load_npy(&e, &t, path);
  if (st == ND_OK) check_tensor(&t);
  else CHECK(t.storage == NULL && e.msg[0]);
  e = (nd_err){0};
  if (nd_load_npy_mapped(&e, &m, path, "c") == ND_OK) {
    check_tensor(&m);
    CHECK(st == ND_OK && same_elements(&t, &m));
    nd_release(&m);
  } else {
    CHECK(m.storage == NULL && e.msg[0]);
  }
  if (st == ND_OK) nd_release(&t);
}

static void safetensors(input *in) {
  const char *path = as_file(in, "safetensors");
  if (!path) return;
  nd_err e = {0};
  nd_safetensors h, f[3];
  nd_status hs = nd_safetensors_header(&e, "fuzz", path, &h);
  if (hs == ND_OK) {
    for (int i = 0; i < h.n; i++)
      CHECK(h.entries[i].begin <= h.entries[i].end &&
            h.entries[i].end <= h.file_size - 8 - h.header_len);
    nd_safetensors_free(&h);
  } else {
    CHECK(e.msg[0] && h.entries == NULL);
  }
  static const char *const modes[3] = {NULL, "r", "c"};
  nd_status st[3];
  for (int k = 0; k < 3; k++) {
    e = (nd_err){0};
    st[k] = nd_safetensors_load(&e, path, modes[k], &f[k]);
    CHECK(st[k] == ND_OK || (e.msg[0] && f[k].tensors == NULL));
    if (st[k] == ND_OK) {
      CHECK(hs == ND_OK && f[k].n == f[0].n);
      for (int i = 0; i < f[k].n; i++) {
        check_tensor(&f[k].tensors[i]);
        if (k) CHECK(same_elements(&f[0].tensors[i], &f[k].tensors[i]));
      }
    }
    CHECK((st[k] == ND_OK) == (st[0] == ND_OK));
  }
  for (int k = 0; k < 3; k++)
    if (st[k] == ND_OK) nd_safetensors_free(&f[k]);
}

/* ND_FUZZ_FILES=1 in the environment: the file parsers alone (make
 * fuzz-files), one binary for both runs. */
static int files_only;
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  const char *v = getenv("ND_FUZZ_FILES");
  files_only = v && strcmp(v, "1") == 0;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  input in = {data, size};
  for (int i = 0; i < CELLS; i++) cells[i] = i % 7 - 3;
  uint8_t mode = byte(&in);
  if (files_only) mode &= 4;
  if (mode & 1) geometry(&in);
  else if (mode & 2) families(&in);
  else if (mode & 4) safetensors(&in);
  else npy(&in);
  return 0;
}
