/* Convolution's plan: every check and every decision of nd_conv, touching
 * no element -- the operands' shapes and options, the result's size, the
 * strategy (GEMM, IM2COL or DIRECT, see nd.h) and why, the copies, the
 * tile, the BLAS calls (matmul's own plan, so they read the operands'
 * strides as matmul does) and what the call allocates. conv.c follows it. */
#include "conv.h"
#include "matmul_plan.h"
#include <stdio.h>

/* A tile of packed windows this big stays in L2 beside BLAS's own packing
 * and gives each GEMM enough columns (a 64-channel 3x3 layer, 1 thread:
 * 128 KB tiles 1.28x the bare GEMMs' time, 256 KB 1.15x, 512 KB 1.08x,
 * 1 MB 1.04-1.06x, 1.5 MB 1.06-1.08x, 2 MB 1.10x). */
#define TILE_BYTES (1 << 20)

static const char *fn_of(int nsp, int planning) {
  static const char *const fns[] = {"conv1d", "conv2d", "conv3d"};
  return planning ? "conv_plan" : fns[nsp - 1];
}

/* Byte totals saturate: each part fits an int64, their sum may not (a
 * plan of that size fails at the allocation it describes). */
static int64_t plus(int64_t a, int64_t b) {
  int64_t r;
  return nd_add_ovf(a, b, &r) ? INT64_MAX : r;
}

static void note_copy(nd_conv_path *p, int what, int64_t bytes,
                      const char *why) {
  int k = p->ncopies++;
  p->copy_what[k] = what;
  p->copy_bytes[k] = bytes;
  snprintf(p->copy_why[k], sizeof p->copy_why[k], "%s", why);
  p->bytes_copied = plus(p->bytes_copied, bytes);
}

/* A 2-D view of w as (O, C/groups * kernel) when its dims after the first
 * merge into one stride (1 when so, into h). */
int nd_conv_weight_view(nd_tensor *h, const nd_tensor *w) {
  int64_t sz[2] = {w->size[0], 1};
  for (int i = 1; i < w->ndim; i++) sz[1] *= w->size[i];
  return nd_reshape_view(NULL, h, w, 2, sz) == 1;
}

/* x (converted or not) as (N, C, S) or (C, S): its spatial dims merged. */
int nd_conv_input_view(nd_tensor *h, const nd_tensor *x, int nsp) {
  int lead = x->ndim - nsp, n = 0;
  int64_t sz[3], s = 1;
  for (int i = 0; i < lead; i++) sz[n++] = x->size[i];
  for (int i = lead; i < x->ndim; i++) s *= x->size[i];
  sz[n++] = s;
  return nd_reshape_view(NULL, h, x, n, sz) == 1;
}

/* A matrix (or batch of them) BLAS reads where it is: one of its last two
 * dims of stride 1, the other's stride positive (what matmul's plan would
 * otherwise copy on every call). */
static int readable(const nd_tensor *m) {
  const int64_t r = m->stride[m->ndim - 2], c = m->stride[m->ndim - 1];
  const int64_t R = m->size[m->ndim - 2], C = m->size[m->ndim - 1];
  return (c == 1 || C == 1) ? (r >= C || R == 1) && r > 0
         : (r == 1 || R == 1) ? c >= R && c > 0 : 0;
}

static nd_status check(nd_err *e, const char *fn, nd_conv_path *p, int nsp,
                       const nd_tensor *x, const nd_tensor *w,
                       const nd_tensor *bias, const nd_conv_options *o) {
  char s1[ND_SIZES_BUF], s2[ND_SIZES_BUF];
  static const char *const kdims[] = {"kL", "kH, kW", "kD, kH, kW"};
  if (w->ndim != nsp + 2)
    return nd_fail(e, ND_EINVAL, "%s: weight must be %d-D (out_channels, "
                   "in_channels / groups, %s), got shape %s", fn, nsp + 2,
                   kdims[nsp - 1], nd_fmt_sizes(s1, sizeof s1, w->ndim,
                                                w->size));
  if (x->ndim != nsp + 1 && x->ndim != nsp + 2)
    return nd_fail(e, ND_EINVAL, "%s: input must be %d-D (batch, channels, "
                   "...) or %d-D (channels, ...), got shape %s", fn, nsp + 2,
                   nsp + 1, nd_fmt_sizes(s1, sizeof s1, x->ndim, x->size));
  const nd_tensor *ops[3] = {x, w, bias};
  static const char *const names[3] = {"input", "weight", "bias"};
  for (int k = 0; k < 3; k++)
    if (ops[k] && nd_dtype_kind(ops[k]->dtype) != 'f')
      return nd_fail(e, ND_EINVAL, "%s: %s has dtype %s; convolution takes "
                     "float16, bfloat16, float32 or float64 (as PyTorch's "
                     "CPU convolution, no integer or bool kernels)", fn,
                     names[k],
                     nd_dtype_name(ops[k]->dtype));
  p->batched = x->ndim == nsp + 2;
  p->n = p->batched ? x->size[0] : 1;
  p->c = x->size[p->batched];
  p->o = w->size[0];
  p->groups = o->groups;
  if (o->groups < 1)
    return nd_fail(e, ND_EINVAL, "%s: groups must be at least 1, got %lld",
                   fn, (long long)o->groups);
  if (p->c % o->groups || p->o % o->groups)
    return nd_fail(e, ND_EINVAL, "%s: groups %lld must divide the input's "
                   "channels (%lld) and the weight's out_channels (%lld)", fn,
                   (long long)o->groups, (long long)p->c, (long long)p->o);
  if (w->size[1] != p->c / o->groups)
    return nd_fail(e, ND_EINVAL, "%s: input has %lld channels; with groups "
                   "= %lld the weight's second dim must be %lld, got weight "
                   "shape %s", fn, (long long)p->c, (long long)o->groups,
                   (long long)(p->c / o->groups),
                   nd_fmt_sizes(s1, sizeof s1, w->ndim, w->size));
  if (bias && (bias->ndim != 1 || bias->size[0] != p->o))
    return nd_fail(e, ND_EINVAL, "%s: bias must be 1-D of out_channels "
                   "(%lld) elements, got shape %s", fn, (long long)p->o,
                   nd_fmt_sizes(s1, sizeof s1, bias->ndim, bias->size));
  if (o->padding_mode < ND_CONV_PAD_GIVEN || o->padding_mode > ND_CONV_PAD_VALID)
    return nd_fail(e, ND_EINVAL, "%s: unknown padding mode %d", fn,
                   o->padding_mode);
  for (int d = 0; d < nsp; d++) {
    const char *what = o->stride[d] < 1 ? "stride" : o->dilation[d] < 1
                       ? "dilation" : NULL;
    if (what)
      return nd_fail(e, ND_EINVAL, "%s: %s must be at least 1 in every "
                     "dim, got %lld in dim %d", fn, what,
                     (long long)(what[0] == 's' ? o->stride[d]
                                                : o->dilation[d]), d + 1);
    if (o->padding_mode == ND_CONV_PAD_GIVEN && o->padding[d] < 0)
      return nd_fail(e, ND_EINVAL, "%s: padding must be at least 0, got "
                     "%lld in dim %d", fn, (long long)o->padding[d], d + 1);
    if (o->padding_mode == ND_CONV_PAD_SAME && o->stride[d] != 1)
      return nd_fail(e, ND_EINVAL, "%s: padding \"same\" needs stride 1 "
                     "(as PyTorch), got stride %lld in dim %d", fn,
                     (long long)o->stride[d], d + 1);
  }
  /* the output's extent, dim by dim */
  int64_t numel = 1;
  const int lead = x->ndim - nsp;
  for (int d = 0; d < nsp; d++) {
    int64_t in = x->size[lead + d], k = w->size[2 + d], eff, pad, padded;
    p->in[d] = in;
    p->kernel[d] = k;
    p->stride[d] = o->stride[d];
    p->dilation[d] = o->dilation[d];
    if (k < 1)
      return nd_fail(e, ND_EINVAL, "%s: the kernel has size 0 in dim %d "
                     "(weight shape %s)", fn, d + 1,
                     nd_fmt_sizes(s1, sizeof s1, w->ndim, w->size));
    if (nd_mul_ovf(o->dilation[d], k - 1, &eff) || nd_add_ovf(eff, 1, &eff))
      return nd_fail(e, ND_EOVERFLOW, "%s: dilation %lld by kernel size "
                     "%lld overflows", fn, (long long)o->dilation[d],
                     (long long)k);
    switch (o->padding_mode) {
    case ND_CONV_PAD_GIVEN: p->pad_lo[d] = p->pad_hi[d] = o->padding[d]; break;
    case ND_CONV_PAD_SAME: /* the odd one on the right, as PyTorch */
      p->pad_lo[d] = (eff - 1) / 2, p->pad_hi[d] = eff - 1 - p->pad_lo[d];
      break;
    default: p->pad_lo[d] = p->pad_hi[d] = 0;
    }
    if (nd_add_ovf(p->pad_lo[d], p->pad_hi[d], &pad) ||
        nd_add_ovf(in, pad, &padded))
      return nd_fail(e, ND_EOVERFLOW, "%s: padding %lld overflows the "
                     "input's size %lld in dim %d", fn,
                     (long long)p->pad_lo[d], (long long)in, d + 1);
    if (padded < eff)
      return nd_fail(e, ND_EINVAL, "%s: the kernel (size %lld%s) is larger "
                     "than the padded input (size %lld) in dim %d", fn,
                     (long long)eff, o->dilation[d] > 1 ? " dilated" : "",
                     (long long)padded, d + 1);
    p->out[d] = (padded - eff) / o->stride[d] + 1;
  }
  p->ndim = 0;
  if (p->batched) p->size[p->ndim++] = p->n;
  p->size[p->ndim++] = p->o;
  for (int d = 0; d < nsp; d++) p->size[p->ndim++] = p->out[d];
  for (int i = 0; i < p->ndim; i++)
    if (nd_mul_ovf(numel, p->size[i] ? p->size[i] : 1, &numel) ||
        nd_mul_ovf(numel, nd_dtype_size(nd_compute_dtype(p->dtype)),
                   &(int64_t){0}))
      return nd_fail(e, ND_EOVERFLOW, "%s: the result of shape %s has more "
                     "bytes than an int64 can count", fn,
                     nd_fmt_sizes(s2, sizeof s2, p->ndim, p->size));
  return ND_OK;
}

static int64_t numel_of(const int64_t *size, int n) {
  int64_t r = 1;
  for (int i = 0; i < n; i++) r *= size[i];
  return r;
}

static nd_status decide(nd_err *e, const char *fn, nd_conv_path *p, int nsp,
                      const nd_tensor *x, const nd_tensor *w,
                      const nd_tensor *bias, const nd_conv_options *o) {
  memset(p, 0, sizeof *p);
  if (nsp < 1 || nsp > 3)
    return nd_fail(e, ND_EINVAL, "conv: %d spatial dims; 1, 2 or 3 are "
                   "supported", nsp);
  p->nsp = nsp;
  p->dtype = nd_promote_types(x->dtype, w->dtype);
  if (bias) p->dtype = nd_promote_types(p->dtype, bias->dtype);
  if (check(e, fn, p, nsp, x, w, bias, o)) return e->code;
  /* float16, bfloat16: every step below in float32 (dt), the operands
   * converted as any other dtype change, the result rounded once */
  const int dt = p->compute_dtype = nd_compute_dtype(p->dtype);
  const int64_t es = nd_dtype_size(dt);
  p->bytes = numel_of(p->size, p->ndim) * nd_dtype_size(p->dtype);
  p->allocations = 1;
  char why[80];
  if (x->dtype != dt) {
    snprintf(why, sizeof why, "dtype %s to %s", nd_dtype_name(x->dtype),
             nd_dtype_name(dt));
    note_copy(p, ND_CONV_COPY_INPUT, nd_numel(x) * es, why);
  }
  if (bias && bias->dtype != dt) {
    snprintf(why, sizeof why, "dtype %s to %s", nd_dtype_name(bias->dtype),
             nd_dtype_name(dt));
    note_copy(p, ND_CONV_COPY_BIAS, nd_numel(bias) * es, why);
  }
  const int64_t g = p->groups, cg = p->c / g, og = p->o / g;
  const int64_t kprod = numel_of(p->kernel, nsp), ck = cg * kprod;
  const int64_t S = numel_of(p->out, nsp);
  int one = kprod == 1;
  for (int d = 0; d < nsp; d++)
    one &= p->stride[d] == 1 && p->pad_lo[d] == 0 && p->pad_hi[d] == 0;
  nd_tensor xv, wv;
  nd_tensor xd = *x; /* x as the kernels see it: converted, same layout */
  xd.dtype = dt;
  if (x->dtype != dt) {
    nd_contiguous_strides(NULL, x->ndim, x->size, xd.stride, &(int64_t){0});
    xd.offset = 0;
  }
  if (one && nd_conv_input_view(&xv, &xd, nsp)) {
    p->strategy = ND_CONV_GEMM;
    snprintf(p->why, sizeof p->why, "a 1x1 kernel, stride 1, no padding: "
             "one matrix product per group on the input's own strides");
  } else if (cg == 1 || og * ck <= 64) {
    p->strategy = ND_CONV_DIRECT;
    snprintf(p->why, sizeof p->why, cg == 1
             ? "one input channel per group (depthwise): too few "
               "multiply-adds per output for a GEMM"
             : "%lld multiply-adds per output position and group: too few "
               "for a GEMM", (long long)(og * ck));
  } else {
    p->strategy = ND_CONV_IM2COL;
    snprintf(p->why, sizeof p->why, "%lld x %lld kernel windows per group: "
             "packed into cache-sized tiles, one GEMM each",
             (long long)cg, (long long)kprod);
  }
  /* the weight as (O, C/groups * kernel); DIRECT reads any strides */
  nd_tensor wd = *w;
  wd.dtype = dt;
  if (w->dtype != dt) {
    snprintf(why, sizeof why, "dtype %s to %s", nd_dtype_name(w->dtype),
             nd_dtype_name(dt));
    note_copy(p, ND_CONV_COPY_WEIGHT, nd_numel(w) * es, why);
    nd_contiguous_strides(NULL, w->ndim, w->size, wd.stride, &(int64_t){0});
    wd.offset = 0;
  } else if (p->strategy != ND_CONV_DIRECT &&
             (!nd_conv_weight_view(&wv, w) || !readable(&wv))) {
    note_copy(p, ND_CONV_COPY_WEIGHT, nd_numel(w) * es,
              nd_conv_weight_view(&wv, w)
                  ? "BLAS cannot read its strides"
                  : "its (in_channels, kernel) dims are not one stride");
    nd_contiguous_strides(NULL, w->ndim, w->size, wd.stride, &(int64_t){0});
    wd.offset = 0;
  }
  if (p->strategy == ND_CONV_DIRECT) return ND_OK;
  nd_conv_weight_view(&wv, &wd);
  wv.storage = NULL;
  wv.size[0] = og; /* one group's rows */
  nd_tensor hb = ND_UNSET, ho = ND_UNSET;
  hb.dtype = ho.dtype = dt;
  if (p->strategy == ND_CONV_GEMM) {
    if (x->dtype == dt && !readable(&xv)) { /* once, not per call */
      note_copy(p, ND_CONV_COPY_INPUT, nd_numel(x) * es,
                "BLAS cannot read its strides");
      nd_contiguous_strides(NULL, x->ndim, x->size, xd.stride, &(int64_t){0});
      nd_conv_input_view(&xv, &xd, nsp);
    }
    hb = xv; /* (N, C/groups, S) or (C/groups, S) */
    hb.storage = NULL;
    hb.size[hb.ndim - 2] = cg;
    ho.ndim = hb.ndim; /* the result's (N, O/groups, S) */
    if (p->batched) ho.size[0] = p->n, ho.stride[0] = p->o * S;
    ho.size[ho.ndim - 2] = og, ho.stride[ho.ndim - 2] = S;
    ho.size[ho.ndim - 1] = S, ho.stride[ho.ndim - 1] = 1;
    if (nd_plan_matmul(e, fn, &p->call, &wv, &hb, &ho, dt)) return e->code;
    p->calls = g * (p->call.batch > 0 ? p->call.batch : 0);
    for (int i = 0; i < p->ndim; i++)
      if (p->size[i] == 0) p->calls = 0;
    return ND_OK;
  }
  /* IM2COL: tiles of T positions, the last one maybe shorter */
  int64_t row_bytes, T;
  if (nd_mul_ovf(ck, es, &row_bytes))
    row_bytes = INT64_MAX;
  T = row_bytes ? TILE_BYTES / row_bytes : S;
  T = T < 16 ? 16 : T & ~(int64_t)15;
  if (T > S) T = S;
  p->tile = T;
  p->tile_rows = ck;
  /* an empty input gives the bias alone: nothing packed or multiplied */
  const int empty_in = nd_numel(x) == 0;
  if (T > 0 && ck > 0 && !empty_in) {
    if (nd_mul_ovf(T, row_bytes, &p->tile_bytes))
      return nd_fail(e, ND_EOVERFLOW, "%s: a tile of %lld kernel windows of "
                     "%lld elements has more bytes than an int64 can count",
                     fn, (long long)T, (long long)ck);
    p->bytes = plus(p->bytes, p->tile_bytes);
    p->allocations++;
    int64_t packed = 0;
    if (nd_mul_ovf(p->n * g, ck, &packed) || nd_mul_ovf(packed, S, &packed) ||
        nd_mul_ovf(packed, es, &packed))
      packed = INT64_MAX;
    note_copy(p, ND_CONV_COPY_TILE, packed, "kernel windows packed as GEMM "
              "columns, a tile at a time");
  }
  hb.ndim = ho.ndim = 2;
  hb.size[0] = ck, hb.size[1] = T, hb.stride[0] = T, hb.stride[1] = 1;
  ho.size[0] = og, ho.size[1] = T, ho.stride[0] = S, ho.stride[1] = 1;
  if (nd_plan_matmul(e, fn, &p->call, &wv, &hb, &ho, dt)) return e->code;
  int64_t rest = T ? S % T : 0;
  p->last = p->call;
  if (rest) {
    hb.size[1] = rest, hb.stride[0] = rest, ho.size[1] = rest;
    if (nd_plan_matmul(e, fn, &p->last, &wv, &hb, &ho, dt)) return e->code;
  }
  p->calls = T ? p->n * g * ((S + T - 1) / T) : 0;
  if (ck == 0 || og == 0 || empty_in) p->calls = 0;
  return ND_OK;
}

/* Decided, then what it allocates: the result, each copy but the tile's
 * packing (its buffer counted once, above), the tile. */
static nd_status plan(nd_err *e, const char *fn, nd_conv_path *p, int nsp,
                      const nd_tensor *x, const nd_tensor *w,
                      const nd_tensor *bias, const nd_conv_options *o) {
  if (decide(e, fn, p, nsp, x, w, bias, o)) return e->code;
  if (numel_of(p->size, p->ndim) == 0) { /* an empty result: nothing else */
    p->ncopies = 0;
    p->bytes_copied = p->bytes = p->tile_bytes = p->calls = 0;
    p->allocations = 1;
    return ND_OK;
  }
  if (p->compute_dtype != p->dtype) {
    char why[80];
    snprintf(why, sizeof why, "computed in %s, rounded once to %s",
             nd_dtype_name(p->compute_dtype), nd_dtype_name(p->dtype));
    note_copy(p, ND_CONV_COPY_OUTPUT, numel_of(p->size, p->ndim) *
              nd_dtype_size(p->compute_dtype), why);
  }
  for (int k = 0; k < p->ncopies; k++)
    if (p->copy_what[k] != ND_CONV_COPY_TILE)
      p->bytes = plus(p->bytes, p->copy_bytes[k]), p->allocations++;
  return ND_OK;
}

nd_status nd_conv_plan_as(nd_err *e, const char *fn, nd_conv_path *p,
                          int nsp, const nd_tensor *x, const nd_tensor *w,
                          const nd_tensor *bias, const nd_conv_options *o) {
  return plan(e, fn, p, nsp, x, w, bias, o);
}

nd_status nd_conv_plan(nd_err *e, nd_conv_path *p, int nsp,
                       const nd_tensor *x, const nd_tensor *w,
                       const nd_tensor *bias, const nd_conv_options *o) {
  return plan(e, fn_of(nsp < 1 || nsp > 3 ? 1 : nsp, 1), p, nsp, x, w, bias,
              o);
}

const char *nd_conv_name(int nsp) { return fn_of(nsp, 0); }
