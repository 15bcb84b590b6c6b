/* Padding, PyTorch's F.pad, as views and copies: the kept part of t is one
 * copy into the result; then, one padded dim at a time, each side is one
 * fill (constant) or one copy of a flipped (reflect), stride-0 (replicate)
 * or shifted (circular) view of what the result already holds along that
 * dim. A dim's sides span the dims padded before it whole (so corners come
 * out as PyTorch's) and the later ones over their kept part only. Every
 * dtype and layout takes the same strided copies: 2k + 1 of them for k
 * padded dims. */
#include "kernels.h"

static const char *const mode_names[ND_NPAD_MODES] = {
#define NAME(E, name) #name,
    ND_PAD_MODES(NAME)
#undef NAME
};

/* v's positions [start, start + len) along d: a borrowed header. */
static nd_tensor part(const nd_tensor *v, int d, int64_t start, int64_t len) {
  nd_tensor r = *v;
  r.offset += start * r.stride[d];
  r.size[d] = len;
  return r;
}

/* What fills positions [at, at + len) along d of a (whose positions [lo,
 * lo + n) along d are t's elements 0 .. n-1, and already written) under
 * mode: an empty header for constant mode. */
static nd_tensor source(const nd_tensor *a, int d, int mode, int64_t at,
                        int64_t len, int64_t lo, int64_t n) {
  nd_tensor s = ND_UNSET;
  int before = at < lo;
  switch (mode) {
  case ND_PAD_REFLECT: /* t's elements len .. 1, or n-2 .. n-1-len */
    s = part(a, d, before ? lo + 1 : lo + n - 1 - len, len);
    s.offset += (len - 1) * s.stride[d];
    s.stride[d] = -s.stride[d];
    break;
  case ND_PAD_REPLICATE: /* the first or the last one, len times */
    s = part(a, d, before ? lo : lo + n - 1, len);
    s.stride[d] = 0;
    break;
  case ND_PAD_CIRCULAR: /* the last len, or the first len */
    s = part(a, d, before ? lo + n - len : lo, len);
    break;
  }
  return s;
}

/* The rules, for messages: true when the pads (l, r) of a dim of size n
 * are refused under mode. */
static int refused(int mode, int64_t l, int64_t r, int64_t n) {
  switch (mode) {
  case ND_PAD_REFLECT: return (l > 0 && l >= n) || (r > 0 && r >= n);
  case ND_PAD_REPLICATE: return n == 0 && (l > 0 || r > 0);
  case ND_PAD_CIRCULAR: return l > n || r > n;
  }
  return 0;
}
static const char *const rule_of[ND_NPAD_MODES] = {
    [ND_PAD_REFLECT] = "pads smaller than the dim's size",
    [ND_PAD_REPLICATE] = "a non-empty dim to replicate",
    [ND_PAD_CIRCULAR] = "pads of at most the dim's size"};

nd_status nd_pad(nd_err *e, nd_tensor *out, const nd_tensor *t, int npads,
                 const int64_t *pads, int mode, const double *value) {
  const char *fn = "pad";
  if (mode < 0 || mode >= ND_NPAD_MODES)
    return nd_fail(e, ND_EINVAL, "%s: unknown mode %d", fn, mode);
  if (npads < 0 || npads % 2 || npads > 2 * t->ndim)
    return nd_fail(e, ND_EINVAL, "%s: pads must have an even length of at "
                   "most 2 * dims (%d), got %d", fn, 2 * t->ndim, npads);
  if (value && mode != ND_PAD_CONSTANT)
    return nd_fail(e, ND_EINVAL, "%s: mode \"%s\" takes no value, got %.17g",
                   fn, mode_names[mode], *value);
  int k = npads / 2, first = t->ndim - k; /* the padded dims: first .. */
  int64_t lo[ND_MAX_DIMS], size[ND_MAX_DIMS];
  nd_tensor kept = *t; /* t's part that the result holds (borrowed) */
  int cropped = 0;     /* a dim both cropped and padded (not constant) */
  for (int d = 0; d < t->ndim; d++) size[d] = t->size[d], lo[d] = 0;
  for (int d = first; d < t->ndim; d++) {
    int64_t l = pads[2 * (t->ndim - 1 - d)], r = pads[2 * (t->ndim - 1 - d) + 1];
    int64_t n = t->size[d], m;
    int ovf = nd_add_ovf(n, l, &m) || nd_add_ovf(m, r, &m);
    if (ovf || m < 0)
      return nd_fail(e, ovf ? ND_EOVERFLOW : ND_EINVAL, "%s: pads {%lld, "
                     "%lld} make dim %d of size %lld %s", fn, (long long)l,
                     (long long)r, d + e->base, (long long)n,
                     ovf ? "too large" : "negative");
    if (refused(mode, l, r, n))
      return nd_fail(e, ND_EINVAL, "%s: %s needs %s: pads {%lld, %lld} for "
                     "dim %d of size %lld", fn, mode_names[mode],
                     rule_of[mode], (long long)l, (long long)r,
                     d + e->base, (long long)n);
    size[d] = m;
    /* The result's positions [a, b) hold t's from a - l on (none when
     * the crop leaves nothing: then b <= a, and a - l may be far past t,
     * too far to multiply by a stride). */
    int64_t a = l < 0 ? 0 : l < m ? l : m, b = l + n < m ? l + n : m;
    kept = b > a ? part(&kept, d, a - l, b - a) : part(&kept, d, 0, 0);
    lo[d] = a;
    cropped |= mode != ND_PAD_CONSTANT && (l < 0 || r < 0) && (l > 0 || r > 0);
  }
  if (cropped) { /* the sides need elements the crop drops: pad without
                  * cropping, then keep the result's window of that */
    int64_t whole[2 * ND_MAX_DIMS];
    nd_tensor v = ND_UNSET, w;
    for (int i = 0; i < npads; i++) whole[i] = pads[i] > 0 ? pads[i] : 0;
    nd_status st = nd_pad(e, &v, t, npads, whole, mode, NULL);
    if (!st) st = nd_alloc_tensor(e, out, t->dtype, t->ndim, size, false);
    if (!st) {
      w = v;
      for (int d = first; d < t->ndim; d++) {
        int64_t l = pads[2 * (t->ndim - 1 - d)];
        w = part(&w, d, l < 0 ? -l : 0, size[d]);
      }
      nd_copy_apart(out, &w);
    }
    nd_release(&v);
    return st ? nd_err_name(e, fn) : ND_OK;
  }
  if (nd_alloc_tensor(e, out, t->dtype, t->ndim, size, false))
    return nd_err_name(e, fn);
  if (!nd_numel(out)) return ND_OK;
  nd_tensor a = *out; /* the written part: the kept positions, then each
                       * padded dim whole once its sides are done */
  for (int d = first; d < t->ndim; d++) a = part(&a, d, lo[d], kept.size[d]);
  nd_copy_apart(&a, &kept);
  for (int d = first; d < t->ndim; d++) {
    int64_t n = kept.size[d], m = size[d], at[2] = {0, lo[d] + n},
            len[2] = {lo[d], m - lo[d] - n};
    a = part(&a, d, -lo[d], m);
    for (int side = 0; side < 2; side++) {
      if (!len[side]) continue;
      nd_tensor dst = part(&a, d, at[side], len[side]);
      if (mode == ND_PAD_CONSTANT) {
        if (nd_fill_number(e, &dst, value ? *value : 0)) {
          nd_release(out);
          return nd_err_name(e, fn);
        }
      } else {
        nd_tensor src = source(&a, d, mode, at[side], len[side], lo[d], n);
        nd_copy_apart(&dst, &src);
      }
    }
  }
  return ND_OK;
}
