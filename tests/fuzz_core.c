/* libFuzzer target over the C core's geometry and the .npy header parser
 * (make fuzz-libfuzzer: clang -fsanitize=fuzzer,address,undefined).
 *
 * Input byte 0 picks the mode. Even: the rest is a .npy file for
 * nd_load_npy. Odd: the rest is a program over one wrapped storage: an
 * as_strided view with fuzzed sizes, strides and offset, then a chain of
 * view operations with fuzzed arguments; after each step the invariants
 * are checked (every reachable element lies in the storage; the overlap
 * rule is exact below its bound, compared with a brute-force search;
 * broadcasting agrees with NumPy's rule; a planned matmul computes what a
 * naive loop computes). A broken invariant aborts: libFuzzer reports it. */
#include "core.h"
#include <stdio.h>
#include <stdlib.h>
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
   * loop (and the allocation) small, or one input runs for minutes. */
  if (a->size[0] > 4096 || b->size[1] > 4096 || a->size[0] * b->size[1] > 65536)
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
  CHECK((nd_broadcast_shape(&e, "fuzz", 2, ts, &nd, size) == ND_OK) == ok);
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

static void npy(input *in) {
  static char path[64];
  if (!path[0]) snprintf(path, sizeof path, "/tmp/nd-fuzz-%d.npy", (int)getpid());
  FILE *f = fopen(path, "wb");
  if (!f) return;
  fwrite(in->p, 1, in->n, f);
  fclose(f);
  nd_err e = {0};
  nd_tensor t = ND_UNSET;
  if (nd_load_npy(&e, &t, path) == ND_OK) {
    check_tensor(&t);
    nd_release(&t);
  } else {
    CHECK(t.storage == NULL && e.msg[0]);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  input in = {data, size};
  for (int i = 0; i < CELLS; i++) cells[i] = i % 7 - 3;
  if (byte(&in) & 1) geometry(&in);
  else npy(&in);
  return 0;
}
