/* einsum: executes the plan of einsum_plan.c -- each operand's view and
 * sums, then each step's copies and its one kernel call (the batched
 * matrix product as the step's matmul plan spells it, a broadcast
 * multiply, or a copy) -- releasing each temporary once used. */
#include "einsum_spec.h"
#include "matmul_plan.h"

/* h: a plan view over the storage of src (offset kept: no view moves
 * it), borrowed. */
static void over(nd_tensor *h, const nd_einsum_view *v, const nd_tensor *src,
                 int dtype) {
  h->storage = src->storage;
  h->offset = src->offset;
  h->dtype = dtype;
  h->ndim = v->ndim;
  for (int i = 0; i < v->ndim; i++)
    h->size[i] = v->size[i], h->stride[i] = v->stride[i];
}

static nd_status prepare(nd_err *e, const nd_einsum_path *p, int k,
                         const nd_tensor *op, nd_tensor *t, int *owned) {
  const nd_einsum_prep *pr = &p->prep[k];
  *owned = 0;
  if (!pr->allocations) {
    over(t, &pr->view, op, op->dtype); /* borrowed */
    return ND_OK;
  }
  nd_tensor v;
  over(&v, &pr->view, op, op->dtype);
  nd_tensor r = ND_UNSET;
  if (nd_reduce(e, &r, ND_R_SUM, &v, pr->nsum, pr->sum_dims, 0)) return e->code;
  if (r.dtype != p->dtype) {
    nd_status st = nd_to_dtype(e, t, &r, p->dtype);
    nd_release(&r);
    if (st) return st;
  } else {
    *t = r;
  }
  *owned = 1;
  return ND_OK;
}

static nd_status step(nd_err *e, const nd_einsum_path *p,
                      const nd_einsum_step *s, const nd_tensor *x,
                      const nd_tensor *y, nd_tensor *r) {
  nd_tensor cp[2]; /* only .storage is read until they are made */
  cp[0].storage = cp[1].storage = NULL;
  const nd_tensor *src[2] = {x, y};
  nd_status st = ND_OK;
  for (int k = 0; k < 2 && !st; k++)
    if (s->merge & (1 << k)) {
      nd_tensor v;
      over(&v, &s->merge_src[k], src[k], src[k]->dtype);
      if (!(st = nd_to_dtype(e, &cp[k], &v, p->dtype))) src[k] = &cp[k];
    }
  if (st) goto done;
  /* the result, or an intermediate row-major in its labels' order (the
   * last step's size is the result's) */
  st = nd_alloc_tensor(e, r, p->dtype, s->ndim, s->size, false);
  if (st) goto done;
  nd_tensor a, b, o;
  over(&a, &s->a, src[0], src[0]->dtype);
  over(&o, &s->out, r, p->dtype);
  if (s->kind == ND_EINSUM_COPY) {
    st = nd_copy(e, &o, &a);
  } else {
    over(&b, &s->b, src[1], src[1]->dtype);
    if (s->kind == ND_EINSUM_MATMUL) {
      st = nd_matmul_run(e, &s->call, &a, &b, &o);
    } else {
      nd_operand oa = {&a, a.dtype, 0, 0}, ob = {&b, b.dtype, 0, 0};
      st = nd_binary(e, &o, ND_OUT, ND_MUL, &oa, &ob);
    }
  }
  if (st) nd_release(r);
done:
  if (cp[0].storage) nd_release(&cp[0]);
  if (cp[1].storage) nd_release(&cp[1]);
  return st;
}

nd_status nd_einsum_run(nd_err *e, nd_tensor *out, const nd_einsum_path *p,
                        const nd_tensor *const *ops) {
  const int n = p->nops;
  if (n < 1 || n > ND_EINSUM_MAX_OPERANDS)
    return nd_fail(e, ND_EINVAL, "einsum: a path of %d operands", n);
  nd_tensor t[2 * ND_EINSUM_MAX_OPERANDS];
  int owned[2 * ND_EINSUM_MAX_OPERANDS];
  nd_status st = ND_OK;
  for (int k = 0; k < 2 * n; k++) owned[k] = 0;
  for (int k = 0; k < n && !st; k++)
    st = prepare(e, p, k, ops[k], &t[k], &owned[k]);
  for (int s = 0; s < p->nsteps && !st; s++) {
    const nd_einsum_step *ps = &p->step[s];
    int last = s == p->nsteps - 1;
    nd_tensor *r = last ? out : &t[n + s];
    st = step(e, p, ps, &t[ps->x], ps->y >= 0 ? &t[ps->y] : NULL, r);
    if (st) break;
    if (!last) owned[n + s] = 1;
    for (int j = 0; j < 2; j++) {
      int u = j ? ps->y : ps->x;
      if (u >= 0 && owned[u]) nd_release(&t[u]), owned[u] = 0;
    }
  }
  if (!st && p->nsteps == 0) { /* one operand, summed into the result */
    *out = t[0];
    owned[0] = 0;
  }
  for (int j = 0; j < 2 * n; j++)
    if (owned[j]) nd_release(&t[j]);
  return st ? nd_err_name(e, "einsum") : ND_OK;
}

nd_status nd_einsum(nd_err *e, nd_tensor *out, const char *spec, int n,
                    const nd_tensor *const *ops) {
  void *block = nd_scratch_alloc(e, "einsum", 1,
                                 (int64_t)nd_einsum_path_bytes(n), false);
  if (!block) return e->code;
  nd_einsum_path *p = nd_einsum_path_init(block, n);
  nd_status st = nd_einsum_plan(e, p, spec, n, ops);
  if (!st) st = nd_einsum_run(e, out, p, ops);
  nd_scratch_free(block);
  return st;
}
