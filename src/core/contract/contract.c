/* Contractions and products built from views and the kernels: tensordot,
 * inner, kron, cross, dist, normalize. Each result is a new tensor (never
 * a view of an operand); temporaries are released on every path. */
#include "kernels.h"
#include "shape.h"

/* a's dims da[0..n) against b's db[0..n) (0-based, distinct, equal
 * sizes): a's other dims then b's. An einsum whose spec names the dims
 * (a's labels A.., b's contracted ones shared): its plan picks the order
 * of the contracted dims and the BLAS flags from the strides, so an
 * operand is copied only when no order of them is one stride. */
nd_status nd_tensordot(nd_err *e, nd_tensor *out, const nd_tensor *a,
                       const nd_tensor *b, int n, const int *da,
                       const int *db) {
  const char *fn = "tensordot";
  int used_a[ND_MAX_DIMS] = {0}, used_b[ND_MAX_DIMS] = {0};
  if (n < 0 || n > a->ndim || n > b->ndim)
    return nd_fail(e, ND_EINVAL, "%s: %d dims to contract, but the tensors "
                   "have %d and %d", fn, n, a->ndim, b->ndim);
  for (int i = 0; i < n; i++) {
    if (nd_check_dim(e, fn, da[i], a->ndim) ||
        nd_check_dim(e, fn, db[i], b->ndim))
      return e->code;
    if (used_a[da[i]]++ || used_b[db[i]]++)
      return nd_fail(e, ND_EINVAL, "%s: dim %d repeated", fn,
                     (used_a[da[i]] > 1 ? da[i] : db[i]) + e->base);
    if (a->size[da[i]] != b->size[db[i]])
      return nd_fail(e, ND_EINVAL, "%s: dim %d of a has size %lld, dim %d of "
                     "b size %lld", fn, da[i] + e->base,
                     (long long)a->size[da[i]], db[i] + e->base,
                     (long long)b->size[db[i]]);
  }
  if (a->ndim + b->ndim - 2 * n > ND_MAX_DIMS)
    return nd_fail(e, ND_EINVAL, "%s: the result would have %d dims, at most "
                   "%d supported", fn, a->ndim + b->ndim - 2 * n, ND_MAX_DIMS);
  /* a's dims are labels 0.., b's free dims 16..: letters A-Z then a-z */
  static const char L[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  char spec[3 * ND_MAX_DIMS + 8], *p = spec, lb[ND_MAX_DIMS];
  for (int i = 0; i < b->ndim; i++) lb[i] = L[ND_MAX_DIMS + i];
  for (int i = 0; i < n; i++) lb[db[i]] = L[da[i]];
  for (int i = 0; i < a->ndim; i++) *p++ = L[i];
  *p++ = ',';
  for (int i = 0; i < b->ndim; i++) *p++ = lb[i];
  *p++ = '-', *p++ = '>';
  for (int i = 0; i < a->ndim; i++)
    if (!used_a[i]) *p++ = L[i];
  for (int i = 0; i < b->ndim; i++)
    if (!used_b[i]) *p++ = lb[i];
  *p = '\0';
  const nd_tensor *ops[2] = {a, b};
  return nd_einsum(e, out, spec, 2, ops) ? nd_err_name(e, fn) : ND_OK;
}

/* The last dims of a and b contracted; a 0-d operand multiplies. */
nd_status nd_inner(nd_err *e, nd_tensor *out, const nd_tensor *a,
                   const nd_tensor *b) {
  if (a->ndim == 0 || b->ndim == 0) {
    nd_operand x = {a, a->dtype, 0, 0}, y = {b, b->dtype, 0, 0};
    return nd_binary(e, out, ND_NEW, ND_MUL, &x, &y) ? nd_err_name(e, "inner")
                                                      : ND_OK;
  }
  int da = a->ndim - 1, db = b->ndim - 1;
  if (a->size[da] != b->size[db])
    return nd_fail(e, ND_EINVAL, "inner: last dims of sizes %lld and %lld "
                   "differ", (long long)a->size[da], (long long)b->size[db]);
  nd_status st = nd_tensordot(e, out, a, b, 1, &da, &db);
  return st ? nd_err_name(e, "inner") : ND_OK;
}

/* Blocks of b scaled by a's elements: the result, viewed as (a0, b0, a1,
 * b1, ...) (the ranks padded with leading 1s), is a's view (a0, 1, a1, 1,
 * ...) times b's (1, b0, 1, b1, ...), broadcast: one elementwise pass. */
nd_status nd_kron(nd_err *e, nd_tensor *out, const nd_tensor *a,
                  const nd_tensor *b) {
  const char *fn = "kron";
  int n = a->ndim > b->ndim ? a->ndim : b->ndim;
  if (2 * n > ND_MAX_DIMS)
    return nd_fail(e, ND_EINVAL, "%s: tensors of %d dims, at most %d "
                   "supported", fn, n, ND_MAX_DIMS / 2);
  nd_tensor av = *a, bv = *b, rv = ND_UNSET; /* av, bv borrowed */
  int64_t rsize[ND_MAX_DIMS], split[ND_MAX_DIMS];
  av.ndim = bv.ndim = 2 * n;
  for (int i = 0; i < n; i++) {
    int ia = i - (n - a->ndim), ib = i - (n - b->ndim);
    int64_t x = ia >= 0 ? a->size[ia] : 1, y = ib >= 0 ? b->size[ib] : 1;
    if (nd_mul_ovf(x, y, &rsize[i]))
      return nd_fail(e, ND_EOVERFLOW, "%s: too many elements", fn);
    split[2 * i] = x, split[2 * i + 1] = y;
    av.size[2 * i] = x, av.stride[2 * i] = ia >= 0 ? a->stride[ia] : 0;
    av.size[2 * i + 1] = 1, av.stride[2 * i + 1] = 0;
    bv.size[2 * i] = 1, bv.stride[2 * i] = 0;
    bv.size[2 * i + 1] = y, bv.stride[2 * i + 1] = ib >= 0 ? b->stride[ib] : 0;
  }
  /* promoted as the views' product: a 0-d operand is not weaker here
   * (PyTorch's kron reshapes both first) */
  nd_operand x = {&av, a->dtype, 0, 0}, y = {&bv, b->dtype, 0, 0};
  int dt = nd_common_type(2, (nd_operand[]){x, y});
  nd_status st;
  if ((st = nd_alloc_tensor(e, out, dt, n, rsize, false))) goto done;
  if ((st = nd_view(e, &rv, out, 2 * n, split)) ||
      (st = nd_binary(e, &rv, ND_OUT, ND_MUL, &x, &y)))
    nd_release(out);
done:
  nd_release(&rv);
  return st ? nd_err_name(e, fn) : ND_OK;
}

/* The cross product of 3-vectors along dim of a and b broadcast
 * together: out_i = a_j b_k - a_k b_j over the cyclic (i, j, k). */
nd_status nd_cross(nd_err *e, nd_tensor *out, const nd_tensor *a,
                   const nd_tensor *b, int dim) {
  const char *fn = "cross";
  const nd_tensor *ts[2] = {a, b};
  int ndim;
  int64_t size[ND_MAX_DIMS];
  if (nd_broadcast_shape(e, fn, 2, ts, NULL, &ndim, size)) return e->code;
  if (nd_check_dim(e, fn, dim, ndim)) return e->code;
  if (size[dim] != 3)
    return nd_fail(e, ND_EINVAL, "%s: dim %d has size %lld, not 3", fn,
                   dim + e->base, (long long)size[dim]);
  nd_tensor ax = ND_UNSET, bx = ND_UNSET, p = ND_UNSET, q = ND_UNSET,
            o = ND_UNSET;
  nd_tensor av[3], bv[3]; /* borrowed selects of the expanded views */
  nd_operand x = {a, a->dtype, 0, 0}, y = {b, b->dtype, 0, 0};
  int dt = nd_common_type(2, (nd_operand[]){x, y});
  nd_status st;
  if ((st = nd_expand(e, &ax, a, ndim, size)) ||
      (st = nd_expand(e, &bx, b, ndim, size)) ||
      (st = nd_alloc_tensor(e, out, dt, ndim, size, false)))
    goto done;
  for (int i = 0; i < 3; i++) {
    av[i] = ax, bv[i] = bx;
    nd_tensor *s[2] = {&av[i], &bv[i]};
    for (int k = 0; k < 2; k++) {
      s[k]->offset += i * s[k]->stride[dim];
      for (int d = dim; d < ndim - 1; d++)
        s[k]->size[d] = s[k]->size[d + 1], s[k]->stride[d] = s[k]->stride[d + 1];
      s[k]->ndim--;
    }
  }
  for (int i = 0; i < 3 && !st; i++) {
    int j = (i + 1) % 3, k = (i + 2) % 3;
    nd_operand aj = {&av[j], av[j].dtype, 0, 0}, bk = {&bv[k], bv[k].dtype, 0, 0},
               ak = {&av[k], av[k].dtype, 0, 0}, bj = {&bv[j], bv[j].dtype, 0, 0};
    if ((st = nd_select(e, &o, out, dim, i)) ||
        (st = nd_binary(e, &p, ND_NEW, ND_MUL, &aj, &bk)) ||
        (st = nd_binary(e, &q, ND_NEW, ND_MUL, &ak, &bj)))
      break;
    nd_operand po = {&p, p.dtype, 0, 0}, qo = {&q, q.dtype, 0, 0};
    st = nd_binary(e, &o, ND_OUT, ND_SUB, &po, &qo);
    nd_release(&o), nd_release(&p), nd_release(&q);
  }
  if (st) nd_release(out);
done:
  nd_release(&o), nd_release(&p), nd_release(&q);
  nd_release(&ax), nd_release(&bx);
  return st ? nd_err_name(e, fn) : ND_OK;
}

/* ||a - b||_p, a 0-d result. */
nd_status nd_dist(nd_err *e, nd_tensor *out, const nd_tensor *a,
                  const nd_tensor *b, double p) {
  nd_operand x = {a, a->dtype, 0, 0}, y = {b, b->dtype, 0, 0};
  nd_tensor d = ND_UNSET;
  nd_status st = nd_binary(e, &d, ND_NEW, ND_SUB, &x, &y);
  if (!st) st = nd_norm(e, out, &d, p, 0, NULL, 0);
  nd_release(&d);
  return st ? nd_err_name(e, "dist") : ND_OK;
}

/* t / max(||t||_p along dim, eps), PyTorch's F.normalize. */
nd_status nd_normalize(nd_err *e, nd_tensor *out, const nd_tensor *t,
                       double p, int dim, double eps) {
  const char *fn = "normalize";
  if (nd_dtype_kind(t->dtype) != 'f')
    return nd_fail(e, ND_EINVAL, "%s: takes a float tensor, got %s (convert "
                   "with :to(\"float64\") first)", fn, nd_dtype_name(t->dtype));
  if (nd_check_dim(e, fn, dim, t->ndim)) return e->code;
  nd_tensor n = ND_UNSET;
  nd_operand lo = {NULL, ND_FLOAT64, eps, 0};
  nd_status st = nd_norm(e, &n, t, p, 1, &dim, 1);
  if (!st) st = nd_clamp(e, &n, ND_INPLACE, &n, &lo, NULL);
  if (!st) {
    nd_operand x = {t, t->dtype, 0, 0}, y = {&n, n.dtype, 0, 0};
    st = nd_binary(e, out, ND_NEW, ND_DIV, &x, &y);
  }
  nd_release(&n);
  return st ? nd_err_name(e, fn) : ND_OK;
}
