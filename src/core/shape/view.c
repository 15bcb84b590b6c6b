/* Views: each function checks its arguments, then writes a new header on
 * the same storage into out (retaining it). O(1), no element access.
 * Position checks quote dims and indices with e->base added. */
#include "shape.h"

/* Header edits happen on a local copy; on success it is shared into out. */
static nd_status done(nd_tensor *out, const nd_tensor *h) {
  nd_share(out, h); /* the used part of h, retained */
  return ND_OK;
}

static void drop_dim(nd_tensor *h, int d) {
  for (int i = d; i < h->ndim - 1; i++) {
    h->size[i] = h->size[i + 1];
    h->stride[i] = h->stride[i + 1];
  }
  h->ndim--;
}

nd_status nd_select(nd_err *e, nd_tensor *out, const nd_tensor *t, int dim,
                    int64_t index) {
  if (nd_check_dim(e, "select", dim, t->ndim)) return e->code;
  if (index < 0 || index >= t->size[dim])
    return nd_fail(e, ND_EINVAL,
                   "select: index %lld out of range for dim %d of size %lld",
                   (long long)(index + e->base), dim + e->base,
                   (long long)t->size[dim]);
  nd_tensor h;
  nd_head_copy(&h, t);
  h.offset += index * t->stride[dim];
  drop_dim(&h, dim);
  return done(out, &h);
}

nd_status nd_narrow(nd_err *e, nd_tensor *out, const nd_tensor *t, int dim,
                    int64_t start, int64_t length) {
  if (nd_check_dim(e, "narrow", dim, t->ndim)) return e->code;
  int64_t n = t->size[dim];
  if (start < 0 || start > n)
    return nd_fail(e, ND_EINVAL,
                   "narrow: start %lld out of range for dim %d of size %lld",
                   (long long)(start + e->base), dim + e->base, (long long)n);
  if (length < 0)
    return nd_fail(e, ND_EINVAL, "narrow: negative length %lld",
                   (long long)length);
  if (length > n - start)
    return nd_fail(e, ND_EINVAL,
                   "narrow: start %lld + length %lld exceeds size %lld of "
                   "dim %d", (long long)(start + e->base), (long long)length,
                   (long long)n, dim + e->base);
  nd_tensor h;
  nd_head_copy(&h, t);
  if (length > 0) h.offset += start * t->stride[dim];
  h.size[dim] = length;
  return done(out, &h);
}

nd_status nd_slice(nd_err *e, nd_tensor *out, const nd_tensor *t, int dim,
                   int64_t first, int64_t step, int64_t count) {
  if (nd_check_dim(e, "slice", dim, t->ndim)) return e->code;
  int64_t n = t->size[dim], last;
  if (step == 0) return nd_fail(e, ND_EINVAL, "slice: step must not be 0");
  if (count < 0)
    return nd_fail(e, ND_EINVAL, "slice: negative count %lld",
                   (long long)count);
  if (count > 0 &&
      (first < 0 || first >= n || nd_mul_ovf(count - 1, step, &last) ||
       nd_add_ovf(first, last, &last) || last < 0 || last >= n))
    return nd_fail(e, ND_EINVAL,
                   "slice: %lld elements from %lld by step %lld do not fit "
                   "in dim %d of size %lld", (long long)count,
                   (long long)(first + e->base), (long long)step,
                   dim + e->base, (long long)n);
  nd_tensor h;
  nd_head_copy(&h, t);
  if (count > 0) h.offset += first * t->stride[dim];
  h.size[dim] = count;
  /* PyTorch's stride for any count; a size-1 dim's stride is free, so a
   * product too big for int64 (count 1, huge step) keeps the old one. */
  if (nd_mul_ovf(t->stride[dim], step, &h.stride[dim]))
    h.stride[dim] = t->stride[dim];
  return done(out, &h);
}

nd_status nd_transpose(nd_err *e, nd_tensor *out, const nd_tensor *t, int d1,
                       int d2) {
  if (t->ndim == 0 && d1 == 0 && d2 == 0) return done(out, t); /* PyTorch */
  if (nd_check_dim(e, "transpose", d1, t->ndim) ||
      nd_check_dim(e, "transpose", d2, t->ndim))
    return e->code;
  nd_tensor h;
  nd_head_copy(&h, t);
  h.size[d1] = t->size[d2]; h.stride[d1] = t->stride[d2];
  h.size[d2] = t->size[d1]; h.stride[d2] = t->stride[d1];
  return done(out, &h);
}

nd_status nd_permute(nd_err *e, nd_tensor *out, const nd_tensor *t,
                     const int *perm) {
  int seen[ND_MAX_DIMS] = {0};
  nd_tensor h;
  nd_head_copy(&h, t);
  for (int i = 0; i < t->ndim; i++) {
    if (nd_check_dim(e, "permute", perm[i], t->ndim)) return e->code;
    if (seen[perm[i]]++)
      return nd_fail(e, ND_EINVAL, "permute: dim %d repeated",
                     perm[i] + e->base);
    h.size[i] = t->size[perm[i]];
    h.stride[i] = t->stride[perm[i]];
  }
  return done(out, &h);
}

nd_status nd_movedim(nd_err *e, nd_tensor *out, const nd_tensor *t, int src,
                     int dst) {
  if (t->ndim == 0 && src == 0 && dst == 0) return done(out, t);
  if (nd_check_dim(e, "movedim", src, t->ndim) ||
      nd_check_dim(e, "movedim", dst, t->ndim))
    return e->code;
  int perm[ND_MAX_DIMS], k = 0;
  for (int i = 0; i < t->ndim; i++) {
    if (i == src) continue;
    if (k == dst) perm[k++] = src;
    perm[k++] = i;
  }
  if (k == dst) perm[k] = src;
  return nd_permute(e, out, t, perm);
}

nd_status nd_expand(nd_err *e, nd_tensor *out, const nd_tensor *t, int ndim,
                    const int64_t *size) {
  char b1[ND_SIZES_BUF], b2[ND_SIZES_BUF];
  if (nd_check_ndim(e, "expand", ndim)) return e->code;
  if (ndim < t->ndim)
    return nd_fail(e, ND_EINVAL,
                   "expand: %d sizes given for a tensor of %d dims (%s)", ndim,
                   t->ndim, nd_fmt_sizes(b1, sizeof b1, t->ndim, t->size));
  nd_tensor h;
  nd_head_copy(&h, t);
  int lead = ndim - t->ndim;
  int64_t numel = 1;
  for (int i = 0; i < ndim; i++) /* empty: any other sizes */
    if (size[i] == 0) numel = 0;
  h.ndim = ndim;
  for (int i = 0; i < ndim; i++) {
    int j = i - lead; /* the matching dim of t, when >= 0 */
    int64_t s = size[i];
    if (s < -1)
      return nd_fail(e, ND_EINVAL, "expand: invalid size %lld at dim %d of %s",
                     (long long)s, i + e->base,
                     nd_fmt_sizes(b1, sizeof b1, ndim, size));
    if (j < 0) {
      if (s < 0)
        return nd_fail(e, ND_EINVAL,
                       "expand: size %lld for new leading dim %d of %s",
                       (long long)s, i + e->base,
                       nd_fmt_sizes(b1, sizeof b1, ndim, size));
      h.size[i] = s;
      h.stride[i] = 0;
    } else if (s == -1 || s == t->size[j]) {
      h.size[i] = t->size[j];
      h.stride[i] = t->stride[j];
    } else if (t->size[j] == 1 && s >= 0) {
      h.size[i] = s;
      h.stride[i] = 0;
    } else {
      return nd_fail(e, ND_EINVAL,
                     "expand: cannot expand size %s to %s: dim %d has size "
                     "%lld, not 1", nd_fmt_sizes(b1, sizeof b1, t->ndim, t->size),
                     nd_fmt_sizes(b2, sizeof b2, ndim, size), i + e->base,
                     (long long)t->size[j]);
    }
    if (nd_mul_ovf(numel, h.size[i], &numel))
      return nd_fail(e, ND_EOVERFLOW, "expand: size %s has too many elements",
                     nd_fmt_sizes(b1, sizeof b1, ndim, size));
  }
  return done(out, &h);
}

/* Sizes with one -1 inferred from numel; fails on mismatch. */
static nd_status infer_size(nd_err *e, const char *fn, const nd_tensor *t,
                            int ndim, const int64_t *size, int64_t *res) {
  char b1[ND_SIZES_BUF], b2[ND_SIZES_BUF];
  int64_t numel = nd_numel(t), prod = 1;
  int infer = -1;
  if (nd_check_ndim(e, fn, ndim)) return e->code;
  for (int i = 0; i < ndim; i++) {
    res[i] = size[i];
    if (size[i] == -1) {
      if (infer >= 0)
        return nd_fail(e, ND_EINVAL, "%s: only one size may be -1 in %s", fn,
                       nd_fmt_sizes(b1, sizeof b1, ndim, size));
      infer = i;
    } else if (size[i] < 0) {
      return nd_fail(e, ND_EINVAL, "%s: invalid size %lld in %s", fn,
                     (long long)size[i], nd_fmt_sizes(b1, sizeof b1, ndim, size));
    } else if (prod >= 0 && nd_mul_ovf(prod, size[i], &prod)) {
      prod = -1; /* cannot match any real numel, unless a 0 follows */
    }
  }
  for (int i = 0; i < ndim; i++)
    if (size[i] == 0) prod = 0;
  if (infer >= 0 && prod > 0 && numel % prod == 0) {
    res[infer] = numel / prod;
    return ND_OK;
  }
  if (infer < 0 && prod == numel) return ND_OK;
  return nd_fail(e, ND_EINVAL, "%s: shape %s is invalid for %lld elements (%s)",
                 fn, nd_fmt_sizes(b1, sizeof b1, ndim, size), (long long)numel,
                 nd_fmt_sizes(b2, sizeof b2, t->ndim, t->size));
}

/* PyTorch's rule: walk t's dims from the innermost, grouping dims that are
 * contiguous with each other into chunks; each chunk must be matched
 * exactly by a run of new dims, which get strides inside the chunk. */
static int view_strides(const nd_tensor *t, int ndim, const int64_t *size,
                        int64_t *stride) {
  int64_t numel = nd_numel(t);
  if (numel == 0 || t->ndim == 0) /* free strides: PyTorch's choice */
    return nd_contiguous_strides(NULL, ndim, size, stride, NULL) == ND_OK;
  int vd = ndim - 1;
  int64_t base = t->stride[t->ndim - 1], tn = 1, vn = 1;
  for (int td = t->ndim - 1; td >= 0; td--) {
    tn *= t->size[td];
    if (td == 0 || (t->size[td - 1] != 1 && t->stride[td - 1] != tn * base)) {
      while (vd >= 0 && (vn < tn || size[vd] == 1)) {
        stride[vd] = vn * base;
        vn *= size[vd];
        vd--;
      }
      if (vn != tn) return 0;
      if (td > 0) {
        base = t->stride[td - 1];
        tn = vn = 1;
      }
    }
  }
  return vd == -1;
}

nd_status nd_view(nd_err *e, nd_tensor *out, const nd_tensor *t, int ndim,
                  const int64_t *size) {
  char b1[ND_SIZES_BUF], b2[ND_SIZES_BUF], b3[ND_SIZES_BUF];
  nd_tensor h;
  nd_head_copy(&h, t);
  if (infer_size(e, "view", t, ndim, size, h.size)) return e->code;
  if (!view_strides(t, ndim, h.size, h.stride))
    return nd_fail(e, ND_EINVAL,
                   "view: shape %s is not compatible with size %s and stride "
                   "%s; use reshape", nd_fmt_sizes(b1, sizeof b1, ndim, h.size),
                   nd_fmt_sizes(b2, sizeof b2, t->ndim, t->size),
                   nd_fmt_sizes(b3, sizeof b3, t->ndim, t->stride));
  h.ndim = ndim;
  return done(out, &h);
}

/* reshape's view half: h becomes t's header with the sizes (one -1
 * inferred). Returns 1 when strides exist that make h a view of t, 0 when
 * reshape must copy (kernels/reshape.c), -1 on bad sizes (e filled). */
int nd_reshape_view(nd_err *e, nd_tensor *h, const nd_tensor *t, int ndim,
                    const int64_t *size) {
  nd_head_copy(h, t);
  if (infer_size(e, "reshape", t, ndim, size, h->size)) return -1;
  h->ndim = ndim;
  return view_strides(t, ndim, h->size, h->stride);
}

nd_status nd_squeeze(nd_err *e, nd_tensor *out, const nd_tensor *t, int dim) {
  if (t->ndim == 0 && (dim == 0 || dim == -1)) return done(out, t);
  if (nd_check_dim(e, "squeeze", dim, t->ndim)) return e->code;
  nd_tensor h;
  nd_head_copy(&h, t);
  if (t->size[dim] == 1) drop_dim(&h, dim);
  return done(out, &h);
}

nd_status nd_squeeze_all(nd_err *e, nd_tensor *out, const nd_tensor *t) {
  (void)e;
  nd_tensor h;
  nd_head_copy(&h, t);
  for (int i = t->ndim - 1; i >= 0; i--)
    if (h.size[i] == 1) drop_dim(&h, i);
  return done(out, &h);
}

nd_status nd_unsqueeze(nd_err *e, nd_tensor *out, const nd_tensor *t,
                       int dim) {
  if (nd_check_dim(e, "unsqueeze", dim, t->ndim + 1) ||
      nd_check_ndim(e, "unsqueeze", t->ndim + 1))
    return e->code;
  nd_tensor h;
  nd_head_copy(&h, t);
  for (int i = t->ndim; i > dim; i--) {
    h.size[i] = t->size[i - 1];
    h.stride[i] = t->stride[i - 1];
  }
  h.size[dim] = 1;
  if (dim == t->ndim ||
      nd_mul_ovf(t->size[dim], t->stride[dim], &h.stride[dim]))
    h.stride[dim] = 1; /* free: size 1 */
  h.ndim++;
  return done(out, &h);
}

nd_status nd_unfold(nd_err *e, nd_tensor *out, const nd_tensor *t, int dim,
                    int64_t size, int64_t step) {
  int64_t n = t->ndim ? 0 : 1;
  if (t->ndim == 0 && dim == 0) {
    n = 1;
  } else if (nd_check_dim(e, "unfold", dim, t->ndim) ||
             nd_check_ndim(e, "unfold", t->ndim + 1)) {
    return e->code;
  } else {
    n = t->size[dim];
  }
  if (step <= 0)
    return nd_fail(e, ND_EINVAL, "unfold: step must be positive, got %lld",
                   (long long)step);
  if (size < 0)
    return nd_fail(e, ND_EINVAL, "unfold: negative size %lld",
                   (long long)size);
  if (size > n)
    return nd_fail(e, ND_EINVAL,
                   "unfold: size %lld exceeds size %lld of dim %d",
                   (long long)size, (long long)n, dim + e->base);
  nd_tensor h;
  nd_head_copy(&h, t);
  if (t->ndim == 0) {
    h.ndim = 1; h.size[0] = size; h.stride[0] = 1;
    return done(out, &h);
  }
  h.size[dim] = (n - size) / step + 1;
  /* A huge step leaves one window, whose stride is free. */
  if (nd_mul_ovf(t->stride[dim], step, &h.stride[dim]))
    h.stride[dim] = t->stride[dim];
  h.size[t->ndim] = size;
  h.stride[t->ndim] = t->stride[dim];
  h.ndim++;
  /* Windows overlap, so the count can outgrow the input's (an expanded
   * {2^40} unfolded by 2^30): the new count must still fit. */
  int64_t numel = 1;
  for (int i = 0; i < h.ndim && nd_numel(t) > 0; i++)
    if (nd_mul_ovf(numel, h.size[i], &numel))
      return nd_fail(e, ND_EOVERFLOW,
                     "unfold: %lld windows of %lld elements have too many "
                     "elements", (long long)h.size[dim], (long long)size);
  return done(out, &h);
}

nd_status nd_diagonal(nd_err *e, nd_tensor *out, const nd_tensor *t,
                      int64_t offset, int d1, int d2) {
  if (nd_check_dim(e, "diagonal", d1, t->ndim) ||
      nd_check_dim(e, "diagonal", d2, t->ndim))
    return e->code;
  if (d1 == d2)
    return nd_fail(e, ND_EINVAL, "diagonal: dims %d and %d are the same",
                   d1 + e->base, d2 + e->base);
  int64_t s1 = t->size[d1], s2 = t->size[d2], n;
  nd_tensor h;
  nd_head_copy(&h, t);
  if (offset >= 0) {
    n = offset >= s2 ? 0 : (s1 < s2 - offset ? s1 : s2 - offset);
    if (n > 0) h.offset += offset * t->stride[d2];
  } else {
    n = offset <= -s1 ? 0 : (s1 + offset < s2 ? s1 + offset : s2);
    if (n > 0) h.offset -= offset * t->stride[d1];
  }
  /* Only an empty tensor can carry strides whose sum overflows (a
   * non-empty one steps both within its storage); its strides are free. */
  int64_t st;
  if (nd_add_ovf(t->stride[d1], t->stride[d2], &st)) st = 0;
  drop_dim(&h, d1 > d2 ? d1 : d2);
  drop_dim(&h, d1 < d2 ? d1 : d2);
  h.size[h.ndim] = n;
  h.stride[h.ndim] = st;
  h.ndim++;
  return done(out, &h);
}

nd_status nd_flip(nd_err *e, nd_tensor *out, const nd_tensor *t, int ndims,
                  const int *dims) {
  int seen[ND_MAX_DIMS] = {0};
  nd_tensor h;
  nd_head_copy(&h, t);
  for (int i = 0; i < ndims; i++) {
    int d = dims[i];
    if (t->ndim == 0 && d == 0 && !seen[0]) { seen[0] = 1; continue; }
    if (nd_check_dim(e, "flip", d, t->ndim) && !(t->ndim == 0 && d == 0))
      return e->code;
    if (seen[d]++)
      return nd_fail(e, ND_EINVAL, "flip: dim %d repeated", d + e->base);
    if (t->size[d] > 1 && nd_numel(t) > 0) { /* empty: strides are free */
      h.offset += (t->size[d] - 1) * t->stride[d];
      h.stride[d] = -t->stride[d];
    }
  }
  return done(out, &h);
}

nd_status nd_as_strided(nd_err *e, nd_tensor *out, const nd_tensor *t,
                        int ndim, const int64_t *size, const int64_t *stride,
                        int64_t offset) {
  int64_t avail = t->storage->nbytes / nd_dtype_size(t->dtype);
  if (nd_check_extent(e, "as_strided", avail, ndim, size, stride, offset))
    return e->code;
  nd_tensor h;
  nd_head_copy(&h, t);
  h.ndim = ndim;
  h.offset = offset;
  memcpy(h.size, size, sizeof(int64_t) * (size_t)ndim);
  memcpy(h.stride, stride, sizeof(int64_t) * (size_t)ndim);
  return done(out, &h);
}
