/* The allocator hook sees every block nd allocates (headers included), a
 * failing allocation comes back as ND_ENOMEM with nothing leaked, and nd
 * works afterwards. A counting allocator, then one that fails the Nth
 * allocation for every N over a small program. Prints "N passed, N failed". */
#define _POSIX_C_SOURCE 200112L
#include "nd.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

typedef struct { long allocs, frees, live_blocks; int64_t live; long fail_at; } counter;
static void *count_alloc(size_t n, size_t align, void *ud) {
  counter *c = ud;
  if (c->fail_at && c->allocs + 1 == c->fail_at) { c->fail_at = 0; return NULL; }
  void *p = NULL;
  if (posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, n ? n : 1))
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
  free(p);
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
  if ((s = nd_binary_tensors(e, &c, ND_NEW, ND_ADD, &a, &w))) goto out;
  if ((s = nd_matmul(e, &r, &c, &b))) goto out;
  if ((s = nd_reduce(e, &m, ND_R_SUM, &r, 0, NULL, 0))) goto out;
out:
  nd_release(&a); nd_release(&b); nd_release(&c); nd_release(&w);
  nd_release(&v); nd_release(&m); nd_release(&r);
  return s;
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

  nd_set_allocator(NULL, NULL, NULL);
  printf("%ld allocations swept; %d passed, %d failed\n", total, passed, failed);
  return failed != 0;
}
