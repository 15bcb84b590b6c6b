/* The allocator hook sees every block nd allocates (headers and scratch
 * included), a failing allocation comes back as ND_ENOMEM with nothing
 * leaked, and nd works afterwards. A counting allocator, then one that
 * fails the Nth allocation for every N over a small program and over a
 * sequence of ordinary calls. Built with -Wl,--wrap for the C allocator's
 * entry points (spec/c_api_spec.lua): the wrap reaches every call from
 * nd's objects (libnd.a) and none from libc's or OpenBLAS's own, so a raw
 * call counted while the hook is installed is one that bypassed it.
 * Prints "N passed, N failed". */
#define _POSIX_C_SOURCE 200112L
#define _ISOC11_SOURCE
#include "nd.h"
#include "nd_dlpack.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

/* ---- the C allocator, wrapped: counts calls from nd's objects ---------- */
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
int __real_posix_memalign(void **p, size_t align, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
char *__real_strdup(const char *s);
void __real_free(void *p);
static long raw, raw_frees; /* calls while counting is on (atomic: threads) */
static int counting;
static void raw_count(long *n) {
  if (__atomic_load_n(&counting, __ATOMIC_RELAXED))
    __atomic_add_fetch(n, 1, __ATOMIC_RELAXED);
}
#define raw_call() raw_count(&raw)
void *__wrap_malloc(size_t n) { raw_call(); return __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t m) {
  raw_call();
  return __real_calloc(n, m);
}
void *__wrap_realloc(void *p, size_t n) {
  raw_call();
  return __real_realloc(p, n);
}
int __wrap_posix_memalign(void **p, size_t align, size_t n) {
  raw_call();
  return __real_posix_memalign(p, align, n);
}
void *__wrap_aligned_alloc(size_t align, size_t n) {
  raw_call();
  return __real_aligned_alloc(align, n);
}
char *__wrap_strdup(const char *s) { raw_call(); return __real_strdup(s); }
void __wrap_free(void *p) { if (p) raw_count(&raw_frees); __real_free(p); }

typedef struct { long allocs, frees, live_blocks; int64_t live; long fail_at; } counter;
static void *count_alloc(size_t n, size_t align, void *ud) {
  counter *c = ud;
  if (c->fail_at && c->allocs + 1 == c->fail_at) { c->fail_at = 0; return NULL; }
  void *p = NULL;
  if (__real_posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align,
                            n ? n : 1))
    return NULL;
  c->allocs++;
  c->live_blocks++;
  c->live += (int64_t)n;
  return p;
}
static void count_free(void *p, size_t n, void *ud) {
  counter *c = ud;
  c->frees++;
  c->live_blocks--;
  c->live -= (int64_t)n;
  __real_free(p);
}

static int releases;
static void on_release(void *data, void *ctx) { (void)data; (void)ctx; releases++; }

/* A small program over the C API; returns the first failing status. */
static nd_status program(nd_err *e) {
  nd_tensor a = ND_UNSET, b = ND_UNSET, c = ND_UNSET, w = ND_UNSET,
            v = ND_UNSET, m = ND_UNSET, r = ND_UNSET;
  static float host[12];
  int64_t sz[2] = {3, 4};
  nd_status s;
  if ((s = nd_zeros(e, &a, ND_FLOAT32, 2, sz))) goto out;
  if ((s = nd_wrap(e, &w, host, sizeof host, ND_FLOAT32, 2, sz, NULL,
                   on_release, NULL))) goto out;
  if ((s = nd_transpose(e, &v, &w, 0, 1))) goto out;
  if ((s = nd_contiguous(e, &b, &v))) goto out;
  nd_operand oa = {&a, 0, 0, 0}, ow = {&w, 0, 0, 0};
  if ((s = nd_binary(e, &c, ND_NEW, ND_ADD, &oa, &ow))) goto out;
  if ((s = nd_matmul(e, &r, &c, &b))) goto out;
  if ((s = nd_reduce(e, &m, ND_R_SUM, &r, 0, NULL, 0))) goto out;
out:
  nd_release(&a); nd_release(&b); nd_release(&c); nd_release(&w);
  nd_release(&v); nd_release(&m); nd_release(&r);
  return s;
}

/* A sequence of ordinary calls, one of each family that allocates:
 * construction, views, elementwise (the dtype-converting and the tiled
 * paths, math), reductions, sort, indexing, matmul, linalg (LU, SVD,
 * eigh, QR, lstsq), the overlap search, .npy save and load, a DLPack round
 * trip. Returns the first failing status; releases everything. */
#define NT 64
static const char *npy_path;
static nd_status ordinary(nd_err *e) {
  nd_tensor T[NT];
  for (int i = 0; i < NT; i++) { nd_tensor u = ND_UNSET; T[i] = u; }
  int n = 0;
  nd_status s = ND_OK;
  DLManagedTensor *dl = NULL;
#define DO(call) do { if ((s = (call))) goto out; } while (0)
#define NEW (&T[n++])
  int64_t s2[2] = {64, 48}, s3[3] = {2, 3, 4}, sq[2] = {6, 6}, rhs[2] = {6, 40},
          st[3] = {2, 2, 2}, sd[3] = {3, 4, 5}, i2[2] = {1, 2};
  nd_generator g;
  nd_generator_seed(&g, 7);
  nd_tensor *a = NEW, *b = NEW, *x = NEW, *f = NEW;
  DO(nd_empty(e, a, ND_FLOAT64, 2, s2));
  DO(nd_rand(e, a, &g));
  DO(nd_arange(e, b, ND_FLOAT32, 0, 64 * 48, 1));
  DO(nd_view(e, x, b, 2, (int64_t[]){48, 64}));
  /* views */
  nd_tensor *xt = NEW, *nr = NEW, *sl = NEW, *pm = NEW, *ex = NEW;
  DO(nd_transpose(e, xt, x, 0, 1));               /* 64 x 48, strides {1, 64} */
  DO(nd_narrow(e, nr, a, 1, 2, 30));
  DO(nd_select(e, sl, a, 0, 5));
  DO(nd_reshape(e, f, b, 3, (int64_t[]){4, 12, 64}));
  DO(nd_permute(e, pm, f, (int[]){2, 0, 1}));
  DO(nd_expand(e, ex, sl, 2, (int64_t[]){3, 48}));
  /* elementwise: mixed dtypes (converted through buffers), a transposed
   * operand (tiles), math, in place */
  nd_tensor *c = NEW, *d = NEW, *t3 = NEW, *l1 = NEW;
  nd_operand oa = {a, 0, 0, 0}, ox = {xt, 0, 0, 0},
             o2 = {NULL, ND_FLOAT64, 2, 0};
  DO(nd_binary(e, c, ND_NEW, ND_ADD, &oa, &ox));
  nd_tensor xd = ND_UNSET, tt = ND_UNSET;
  DO(nd_to_dtype(e, &xd, x, ND_FLOAT64));
  s = nd_transpose(e, &tt, &xd, 0, 1);            /* 64 x 48, strides {1, 64} */
  nd_release(&xd);
  if (s) goto out;
  nd_operand ot = {&tt, 0, 0, 0};
  s = nd_binary(e, d, ND_NEW, ND_MUL, &oa, &ot); /* same dtype: tiles */
  nd_release(&tt);
  if (s) goto out;
  DO(nd_unary(e, t3, ND_NEW, ND_EXP, nr));
  DO(nd_math_unary(e, l1, ND_NEW, ND_LOG1P, c));
  DO(nd_binary(e, c, ND_INPLACE, ND_POW, &(nd_operand){c, 0, 0, 0}, &o2));
  /* reductions */
  nd_tensor *r1 = NEW, *r2 = NEW, *av = NEW, *ai = NEW, *vr = NEW;
  DO(nd_reduce(e, r1, ND_R_SUM, a, 1, (int[]){1}, 0));
  DO(nd_reduce(e, r2, ND_R_MEAN, pm, 0, NULL, 0));
  DO(nd_reduce_arg(e, av, ai, ND_R_MAX, a, 0, 1));
  DO(nd_var(e, vr, a, 1, (int[]){0}, 0, 1, 1));
  /* sort family */
  nd_tensor *sv = NEW, *si = NEW, *kv = NEW, *ki = NEW, *uq = NEW, *md = NEW;
  DO(nd_sort(e, sv, si, a, 1, 0));
  DO(nd_topk(e, kv, ki, a, 5, 1, 1, 1));
  DO(nd_unique(e, uq, NULL, x));
  DO(nd_median(e, md, NULL, a, ND_ALL_DIMS, 0));
  /* indexing */
  nd_tensor *ix = NEW, *is = NEW, *ga = NEW, *mk = NEW, *ms = NEW, *nz = NEW;
  DO(nd_arange(e, ix, ND_INT64, 0, 10, 3));
  DO(nd_index_select(e, is, a, 0, ix));
  DO(nd_gather(e, ga, a, 1, si));
  nd_operand half = {NULL, ND_FLOAT64, 0.5, 0};
  DO(nd_binary(e, mk, ND_NEW, ND_GT, &oa, &half));
  DO(nd_masked_select(e, ms, a, mk));
  DO(nd_nonzero(e, nz, mk));
  DO(nd_scatter(e, a, 1, si, sv));
  /* matmul: BLAS, and the integer loop */
  nd_tensor *mm = NEW, *ii = NEW, *im = NEW;
  DO(nd_matmul(e, mm, a, x));
  DO(nd_arange(e, ii, ND_INT32, 0, 24, 1));
  nd_tensor i3 = ND_UNSET, i3t = ND_UNSET;
  DO(nd_view(e, &i3, ii, 3, s3));
  s = nd_transpose(e, &i3t, &i3, 1, 2);
  if (!s) s = nd_matmul(e, im, &i3, &i3t);
  nd_release(&i3); nd_release(&i3t);
  if (s) goto out;
  /* linalg: LU (a wide right-hand side: rows swapped in pieces),
   * SVD, eigh, QR, lstsq, inv */
  nd_tensor *A = NEW, *B = NEW, *sol = NEW, *U = NEW, *S = NEW, *Vh = NEW,
            *W = NEW, *V = NEW, *Q = NEW, *R = NEW, *ls = NEW, *iv = NEW;
  DO(nd_empty(e, A, ND_FLOAT64, 2, sq));
  DO(nd_randn(e, A, &g));
  DO(nd_empty(e, B, ND_FLOAT64, 2, rhs));
  DO(nd_rand(e, B, &g));
  DO(nd_linalg_solve(e, sol, A, B));
  DO(nd_linalg_svd(e, U, S, Vh, nr));
  DO(nd_linalg_eigh(e, W, V, A));
  DO(nd_linalg_qr(e, Q, R, A));
  DO(nd_linalg_lstsq(e, ls, A, B));
  DO(nd_linalg_inv(e, iv, A));
  /* a write whose overlap only the search can rule out */
  nd_tensor *o13 = NEW, *ov = NEW;
  DO(nd_arange(e, o13, ND_INT64, 0, 13, 1));
  DO(nd_as_strided(e, ov, o13, 3, st, sd, 0));
  DO(nd_fill_i64(e, ov, -1));
  /* .npy: a transposed tensor (saved through a copy), loaded back */
  nd_tensor *ld = NEW;
  DO(nd_save_npy(e, npy_path, xt));
  DO(nd_load_npy(e, ld, npy_path));
  /* DLPack both ways */
  nd_tensor *dt = NEW;
  DO(nd_to_dlpack(e, nr, &dl));
  if ((s = nd_from_dlpack(e, dt, dl))) goto out;
  dl = NULL; /* nd owns it now */
  double v;
  DO(nd_get(e, dt, i2, &v));
out:
  if (dl) dl->deleter(dl);
  for (int i = 0; i < NT; i++) nd_release(&T[i]);
  return s;
#undef DO
#undef NEW
}

int main(void) {
  counter c;
  memset(&c, 0, sizeof c);
  nd_err e;
  memset(&e, 0, sizeof e);
  nd_set_allocator(count_alloc, count_free, &c);

  /* Every block through the hook: the wrapped storage's header too. */
  nd_tensor w = ND_UNSET;
  static double buf[4];
  int64_t n = 4;
  CHECK(nd_wrap(&e, &w, buf, sizeof buf, ND_FLOAT64, 1, &n, NULL, on_release, NULL) == ND_OK);
  CHECK(c.allocs == 1 && c.live_blocks == 1);
  nd_release(&w);
  CHECK(c.frees == 1 && c.live == 0 && releases == 1);

  /* The whole program: count its allocations. */
  releases = 0;
  long before = c.allocs;
  CHECK(program(&e) == ND_OK);
  long total = c.allocs - before;
  CHECK(total >= 8);
  CHECK(c.live_blocks == 0 && c.live == 0 && releases == 1);

  /* Fail the Nth allocation, for every N. */
  long enomem = 0;
  for (long k = 1; k <= total; k++) {
    memset(&e, 0, sizeof e);
    releases = 0;
    c.fail_at = c.allocs + k;
    nd_status s = program(&e);
    c.fail_at = 0;
    if (s == ND_ENOMEM && strstr(e.msg, "not enough memory")) enomem++;
    else fprintf(stderr, "N=%ld: status %d, message '%s'\n", k, (int)s, e.msg);
    if (c.live_blocks != 0 || c.live != 0)
      fprintf(stderr, "N=%ld: %ld blocks leaked\n", k, c.live_blocks);
    CHECK(c.live_blocks == 0 && c.live == 0);
    CHECK(releases <= 1);
  }
  CHECK(enomem == total);
  /* And nd works afterwards. */
  CHECK(program(&e) == ND_OK && c.live_blocks == 0);

  /* The ordinary sequence: every block from the hook, none from the C
   * allocator directly (raw counts calls from nd's objects only). */
  char path[64];
  snprintf(path, sizeof path, "/tmp/nd-alloc-test-%ld.npy", (long)getpid());
  npy_path = path;
  memset(&e, 0, sizeof e);
  before = c.allocs;
  __atomic_store_n(&counting, 1, __ATOMIC_RELAXED);
  nd_status os = ordinary(&e);
  __atomic_store_n(&counting, 0, __ATOMIC_RELAXED);
  long ototal = c.allocs - before;
  if (os) fprintf(stderr, "ordinary: %s\n", e.msg);
  CHECK(os == ND_OK);
  printf("ordinary calls: %ld hook allocations; raw: %ld allocations, "
         "%ld frees\n", ototal, raw, raw_frees);
  CHECK(raw == 0 && raw_frees == 0);
  CHECK(ototal >= 100);
  CHECK(c.live_blocks == 0 && c.live == 0);

  /* Fail each of its hook allocations in turn: ND_OK (scratch that only
   * speeds a kernel up) or ND_ENOMEM saying so, nothing leaked. */
  long ook = 0, oenomem = 0;
  for (long k = 1; k <= ototal; k++) {
    memset(&e, 0, sizeof e);
    c.fail_at = c.allocs + k;
    nd_status s = ordinary(&e);
    int hit = c.fail_at == 0; /* the Nth allocation was made and failed */
    c.fail_at = 0;
    if (s == ND_OK) ook++;
    else if (s == ND_ENOMEM && strstr(e.msg, "not enough memory")) oenomem++;
    else fprintf(stderr, "ordinary, N=%ld: status %d, message '%s'\n", k,
                 (int)s, e.msg);
    if (c.live_blocks != 0 || c.live != 0)
      fprintf(stderr, "ordinary, N=%ld: %ld blocks leaked\n", k, c.live_blocks);
    CHECK(hit);
    CHECK(c.live_blocks == 0 && c.live == 0);
  }
  printf("ordinary calls swept: %ld ND_ENOMEM, %ld ND_OK\n", oenomem, ook);
  CHECK(ook + oenomem == ototal);
  CHECK(oenomem > ototal / 2);
  CHECK(ordinary(&e) == ND_OK && c.live_blocks == 0);
  remove(path);

  nd_set_allocator(NULL, NULL, NULL);
  printf("%ld allocations swept; %d passed, %d failed\n", total, passed, failed);
  return failed != 0;
}
