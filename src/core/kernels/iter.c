/* The one way to walk tensors: sort dims so the first operand's innermost
 * dim has its smallest stride, merge dims that are contiguous with each
 * other in every operand, then call an inner loop over the rest. */
#include "kernels.h"
#include <stdlib.h>

static int64_t mag(int64_t s) { return s < 0 ? -s : s; }

/* Is dim a "more inner" than dim b? Decided by the first operand whose
 * strides differ there (a stride-0 broadcast operand defers). */
static int inner_than(const nd_tensor *const *ops, int nops, int a, int b) {
  for (int k = 0; k < nops; k++) {
    int64_t sa = mag(ops[k]->stride[a]), sb = mag(ops[k]->stride[b]);
    if (sa == 0 || sb == 0 || sa == sb) continue;
    return sa < sb;
  }
  return a > b; /* default: row-major */
}

void nd_iter_init(nd_iter *it, int nops, const nd_tensor *const *ops) {
  const nd_tensor *t = ops[0];
  int dims[ND_MAX_DIMS], n = 0;
  it->nops = nops;
  for (int k = 0; k < nops; k++) it->data[k] = nd_ptr(ops[k]);
  for (int d = 0; d < t->ndim; d++) {
    if (t->size[d] == 0) { /* nothing to visit */
      it->ndim = 1;
      it->size[0] = 0;
      for (int k = 0; k < nops; k++) it->stride[k][0] = 0;
      return;
    }
    if (t->size[d] != 1) dims[n++] = d;
  }
  /* Insertion sort, innermost first. */
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && inner_than(ops, nops, dims[j], dims[j - 1]); j--) {
      int x = dims[j]; dims[j] = dims[j - 1]; dims[j - 1] = x;
    }
  int m = 0;
  for (int i = 0; i < n; i++) {
    int d = dims[i];
    int merge = m > 0;
    for (int k = 0; k < nops && merge; k++)
      merge = ops[k]->stride[d] == it->stride[k][m - 1] * it->size[m - 1];
    if (merge) {
      it->size[m - 1] *= t->size[d];
      continue;
    }
    it->size[m] = t->size[d];
    for (int k = 0; k < nops; k++) it->stride[k][m] = ops[k]->stride[d];
    m++;
  }
  if (m == 0) {
    it->size[0] = 1;
    for (int k = 0; k < nops; k++) it->stride[k][0] = 0;
    m = 1;
  }
  it->ndim = m;
  for (int k = 0; k < nops; k++) {
    int64_t es = nd_dtype_size(ops[k]->dtype);
    for (int i = 0; i < m; i++) it->stride[k][i] *= es;
  }
}

int64_t nd_iter_outer(const nd_iter *it) {
  int64_t n = 1;
  for (int i = 1; i < it->ndim; i++) n *= it->size[i];
  return it->size[0] ? n : 0;
}

void nd_iter_run(const nd_iter *it, nd_loop_fn fn, void *ctx, int64_t from,
                 int64_t to) {
  int64_t idx[ND_MAX_DIMS] = {0}, rem = from;
  char *p[ND_ITER_MAXOPS];
  int64_t st[ND_ITER_MAXOPS];
  if (it->size[0] == 0 || from >= to) return;
  for (int k = 0; k < it->nops; k++) {
    p[k] = it->data[k];
    st[k] = it->stride[k][0];
  }
  for (int i = 1; i < it->ndim; i++) { /* position of `from` */
    idx[i] = rem % it->size[i];
    rem /= it->size[i];
    for (int k = 0; k < it->nops; k++) p[k] += idx[i] * it->stride[k][i];
  }
  for (int64_t o = from; o < to; o++) {
    fn(p, st, it->size[0], ctx);
    for (int i = 1; i < it->ndim; i++) { /* odometer step */
      for (int k = 0; k < it->nops; k++) p[k] += it->stride[k][i];
      if (++idx[i] < it->size[i]) break;
      for (int k = 0; k < it->nops; k++) p[k] -= it->stride[k][i] * it->size[i];
      idx[i] = 0;
    }
  }
}

/* As nd_iter_run, over the flat element range [from, to) of the iteration
 * (dim 0 fastest): the first and last inner runs may be partial, so work
 * splits evenly across threads even when everything merged into one dim. */
void nd_iter_run_elems(const nd_iter *it, nd_loop_fn fn, void *ctx,
                       int64_t from, int64_t to) {
  int64_t idx[ND_MAX_DIMS] = {0}, rem, n0 = it->size[0];
  char *p[ND_ITER_MAXOPS];
  int64_t st[ND_ITER_MAXOPS];
  if (n0 == 0 || from >= to) return;
  rem = from / n0;
  idx[0] = from % n0;
  for (int k = 0; k < it->nops; k++) {
    st[k] = it->stride[k][0];
    p[k] = it->data[k] + idx[0] * st[k];
  }
  for (int i = 1; i < it->ndim; i++) {
    idx[i] = rem % it->size[i];
    rem /= it->size[i];
    for (int k = 0; k < it->nops; k++) p[k] += idx[i] * it->stride[k][i];
  }
  int64_t left = to - from;
  while (left > 0) {
    int64_t run = n0 - idx[0] < left ? n0 - idx[0] : left;
    fn(p, st, run, ctx);
    left -= run;
    if (left == 0) break;
    for (int k = 0; k < it->nops; k++) p[k] -= idx[0] * st[k];
    idx[0] = 0;
    for (int i = 1; i < it->ndim; i++) { /* odometer step */
      for (int k = 0; k < it->nops; k++) p[k] += it->stride[k][i];
      if (++idx[i] < it->size[i]) break;
      for (int k = 0; k < it->nops; k++) p[k] -= it->stride[k][i] * it->size[i];
      idx[i] = 0;
    }
  }
}

/* Takes dim d out of the walk, for a kernel that loops over it itself:
 * its size to *size and each operand's byte stride to stride[k]. A walk
 * left with no dim has one of size 1. */
void nd_iter_take(nd_iter *it, int d, int64_t *size, int64_t *stride) {
  *size = it->size[d];
  for (int k = 0; k < it->nops; k++) stride[k] = it->stride[k][d];
  for (int i = d; i + 1 < it->ndim; i++) {
    it->size[i] = it->size[i + 1];
    for (int k = 0; k < it->nops; k++) it->stride[k][i] = it->stride[k][i + 1];
  }
  if (--it->ndim == 0) {
    it->ndim = 1;
    it->size[0] = 1;
    for (int k = 0; k < it->nops; k++) it->stride[k][0] = 0;
  }
}

/* Makes dim d the innermost, the others keeping their order. */
void nd_iter_inner(nd_iter *it, int d) {
  for (; d > 0; d--) {
    int64_t t = it->size[d];
    it->size[d] = it->size[d - 1];
    it->size[d - 1] = t;
    for (int k = 0; k < it->nops; k++) {
      t = it->stride[k][d];
      it->stride[k][d] = it->stride[k][d - 1];
      it->stride[k][d - 1] = t;
    }
  }
}
