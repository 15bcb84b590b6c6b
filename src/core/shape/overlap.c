/* Internal overlap: may two distinct index tuples of a tensor reach one
 * element? Writes into such a tensor are refused (their result would
 * depend on the order of the loop). The rule, in the order applied:
 *   1. a size-0 tensor, or one whose dims of size > 1 all have distinct
 *      |strides| each beyond the extent of the smaller ones, is disjoint
 *      (the sufficient test: contiguous, transposed, stepped, flipped);
 *   2. a dim of size > 1 with stride 0 overlaps; so does a tensor whose
 *      span of reachable elements is smaller than numel (pigeonhole), or
 *      one where two dims alone collide (d1*s1 == d2*s2, |d1| < n1,
 *      |d2| < n2: exact for two dims, by their gcd);
 *   3. otherwise, when numel <= ND_OVERLAP_SEARCH, every reachable offset
 *      is listed and checked for a repeat: an exact answer;
 *   4. past that bound, with nothing proven, the write is allowed (as
 *      PyTorch allows what it cannot prove).
 * Signs of strides do not matter (a flip maps offsets one to one). */
#include "core.h"
#include <stdlib.h>

#define ND_OVERLAP_SEARCH ((int64_t)1 << 20)

typedef struct dims {
  int n;
  int64_t size[ND_MAX_DIMS], stride[ND_MAX_DIMS]; /* stride > 0, ascending */
} dims;

static int64_t gcd(int64_t a, int64_t b) {
  while (b) { int64_t r = a % b; a = b; b = r; }
  return a;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Lists the offsets of d from 0 (numel of them) and looks for a repeat:
 * a bitmap over the span when that is no bigger than the list, else the
 * sorted list. 1: repeat, 0: none, -1: out of memory. */
static int search(const dims *d, int64_t numel, int64_t span) {
  int64_t idx[ND_MAX_DIMS] = {0}, off = 0;
  uint64_t *bits = NULL;
  int64_t *list = NULL;
  if (span / 64 + 1 <= numel)
    bits = nd_scratch_alloc(NULL, "overlap", span / 64 + 1, sizeof *bits, true);
  else
    list = nd_scratch_alloc(NULL, "overlap", numel, sizeof *list, false);
  if (!bits && !list) return -1;
  int found = 0;
  for (int64_t k = 0; k < numel; k++) {
    if (bits) {
      uint64_t m = (uint64_t)1 << (off & 63);
      if (bits[off >> 6] & m) { found = 1; break; }
      bits[off >> 6] |= m;
    } else {
      list[k] = off;
    }
    for (int i = 0; i < d->n; i++) { /* odometer, dim 0 fastest */
      off += d->stride[i];
      if (++idx[i] < d->size[i]) break;
      off -= d->stride[i] * d->size[i];
      idx[i] = 0;
    }
  }
  if (list) {
    qsort(list, (size_t)numel, sizeof *list, cmp_i64);
    for (int64_t k = 1; k < numel && !found; k++)
      found = list[k] == list[k - 1];
  }
  nd_scratch_free(bits);
  nd_scratch_free(list);
  return found;
}

/* 1: overlap proven, 0: disjoint or not proven (past the bound),
 * -1: the search ran out of memory. */
static int overlap(const nd_tensor *t) {
  dims d = {0};
  int64_t numel = 1, span = 0, extent = 0;
  int sufficient = 1;
  for (int i = 0; i < t->ndim; i++) /* empty: nothing is written (PyTorch) */
    if (t->size[i] == 0) return 0;
  for (int i = 0; i < t->ndim; i++) {
    if (t->size[i] == 1) continue;
    if (t->stride[i] == 0) return 1;
    int j = d.n++; /* insertion by ascending |stride| */
    int64_t s = t->stride[i] < 0 ? -t->stride[i] : t->stride[i];
    for (; j > 0 && d.stride[j - 1] > s; j--) {
      d.stride[j] = d.stride[j - 1];
      d.size[j] = d.size[j - 1];
    }
    d.stride[j] = s;
    d.size[j] = t->size[i];
  }
  /* Spans and numel are bounded: every reachable element is in storage. */
  for (int i = 0; i < d.n; i++) {
    if (d.stride[i] <= extent) sufficient = 0;
    extent += d.stride[i] * (d.size[i] - 1);
    numel *= d.size[i];
  }
  span = extent + 1;
  if (sufficient) return 0;
  if (span < numel) return 1;
  for (int i = 0; i < d.n; i++)
    for (int j = i + 1; j < d.n; j++) {
      int64_t g = gcd(d.stride[i], d.stride[j]);
      if (d.stride[j] / g < d.size[i] && d.stride[i] / g < d.size[j])
        return 1;
    }
  if (d.n <= 2 || numel > ND_OVERLAP_SEARCH) return 0;
  return search(&d, numel, span);
}

int nd_has_internal_overlap(const nd_tensor *t) { return overlap(t) == 1; }

/* Every write path's gate: read-only storage first, then overlap. */
nd_status nd_check_writable(nd_err *e, const char *fn, const nd_tensor *t) {
  if (nd_readonly(t))
    return nd_fail(e, ND_EINVAL, "%s: the tensor is read-only", fn);
  int r = overlap(t);
  if (r == 0) return ND_OK;
  if (r < 0)
    return nd_fail(e, ND_ENOMEM, "%s: not enough memory to check whether "
                   "the written-to tensor's elements overlap", fn);
  return nd_fail(e, ND_EINVAL,
                 "%s: unsupported operation: more than one element of the "
                 "written-to tensor refers to a single memory location "
                 "(e.g. an expanded view); clone() it first", fn);
}
