/* Resampling: PyTorch 1.13's F.interpolate (recompute_scale_factor off).
 * nearest, linear, bilinear and bicubic are separable: per output
 * position of each spatial dim, K taps (1, 2 or 4) of input positions and
 * weights are computed once (in float for float32, as PyTorch's opmath);
 * then per plane, each input row that an output row needs is resampled
 * along the width once into a cached row, and each output row is the
 * weighted sum of K cached rows -- PyTorch's order of operations (width
 * inside, height outside), so the sums round as its do. area is
 * adaptive average pooling, summed window by window as PyTorch does. */
#ifndef __clang__ /* the row blends vectorise at O3 */
#pragma GCC optimize("O3")
#endif
#include "kernels.h"
#include <math.h>

#define KERNEL ND_CLONES("avx512f", "avx2", "default")

static const struct { const char *name; int dims; } modes[ND_NINTERP_MODES] = {
#define MODE(E, name, dims) {#name, dims},
    ND_INTERP_MODES(MODE)
#undef MODE
};

/* One spatial dim's taps: K per output position, as element offsets
 * (times the input's stride) and weights of the compute type. */
typedef struct taps {
  int K;
  int64_t in, out;
  int64_t *off;  /* out * K */
  void *w;       /* out * K, float or double */
} taps;

/* The dim's scale as PyTorch's area_pixel_compute_scale. */
#define SCALE(T)                                                            \
  static T scale_##T(int64_t in, int64_t out, int align, double s) {        \
    if (align) return out > 1 ? (T)(in - 1) / (T)(out - 1) : (T)0;          \
    return s > 0 ? (T)(1.0 / s) : (T)in / (T)out;                           \
  }                                                                         \
  static T source_##T(T scale, int64_t i, int align, int cubic) {           \
    if (align) return scale * (T)i;                                         \
    T x = scale * ((T)i + (T)0.5) - (T)0.5;                                 \
    return !cubic && x < 0 ? (T)0 : x;                                      \
  }                                                                         \
  static void fill_##T(taps *tp, int mode, int align, double s,             \
                       int64_t stride) {                                    \
    T *w = tp->w;                                                           \
    int64_t in = tp->in, out = tp->out;                                     \
    if (mode == ND_INTERP_NEAREST) {                                        \
      float sc = s > 0 ? (float)(1.0 / s) : (float)in / (float)out;         \
      for (int64_t i = 0; i < out; i++) {                                   \
        int64_t k = out == in ? i : out == 2 * in ? i >> 1                  \
                  : (int64_t)floorf((float)i * sc);                         \
        tp->off[i] = (k < in - 1 ? k : in - 1) * stride;                    \
        w[i] = 1;                                                           \
      }                                                                     \
      return;                                                               \
    }                                                                       \
    T scale = scale_##T(in, out, align, s);                                 \
    for (int64_t i = 0; i < out; i++) {                                     \
      if (mode == ND_INTERP_BICUBIC) {                                      \
        T x = source_##T(scale, i, align, 1);                               \
        int64_t k = (int64_t)floor(x);                                      \
        T t = x - (T)k, A = (T)-0.75, u = 1 - t;                            \
        T c[4] = {((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A, \
                  ((A + 2) * t - (A + 3)) * t * t + 1,                      \
                  ((A + 2) * u - (A + 3)) * u * u + 1,                      \
                  ((A * (u + 1) - 5 * A) * (u + 1) + 8 * A) * (u + 1) - 4 * A}; \
        for (int j = 0; j < 4; j++) {                                       \
          int64_t q = k - 1 + j;                                            \
          q = q < 0 ? 0 : q > in - 1 ? in - 1 : q;                          \
          tp->off[4 * i + j] = q * stride;                                  \
          w[4 * i + j] = c[j];                                              \
        }                                                                   \
      } else {                                                              \
        T x = source_##T(scale, i, align, 0);                               \
        int64_t k = (int64_t)x;                                             \
        T l1 = x - (T)k;                                                    \
        l1 = l1 < 0 ? 0 : l1 > 1 ? 1 : l1;                                  \
        tp->off[2 * i] = k * stride;                                        \
        tp->off[2 * i + 1] = (k + (k < in - 1)) * stride;                   \
        w[2 * i] = 1 - l1;                                                  \
        w[2 * i + 1] = l1;                                                  \
      }                                                                     \
    }                                                                       \
  }
SCALE(float)
SCALE(double)

typedef struct job {
  const nd_tensor *t, *o;
  int64_t C, planes, ntask;
  taps h, w;          /* h: height (1 position, weight 1, for 3-D input) */
  char *cache;        /* per task: K rows of w.out elements */
  int64_t row_bytes;
} job;

/* One task's share of the planes: rows resampled along the width into
 * the task's K cached rows (keyed by input row), then blended. */
#define RESAMPLE(T)                                                         \
  KERNEL static void planes_##T(void *ctx, int64_t lo, int64_t hi) {        \
    const job *J = ctx;                                                     \
    const taps *H = &J->h, *W = &J->w;                                      \
    const int KH = H->K, KW = W->K;                                         \
    const T *hw = H->w, *ww = W->w;                                         \
    const int64_t wo = W->out, ho = H->out;                                 \
    const nd_tensor *t = J->t;                                              \
    for (int64_t task = lo; task < hi; task++) {                            \
      T *rows = (T *)(void *)(J->cache + task * KH * J->row_bytes);         \
      int64_t from = J->planes * task / J->ntask,                           \
              to = J->planes * (task + 1) / J->ntask;                       \
      for (int64_t p = from; p < to; p++) {                                 \
        int64_t n = p / J->C, c = p % J->C, key[4] = {-1, -1, -1, -1};      \
        const T *src = (const T *)(const void *)nd_ptr(t) +                 \
                       n * t->stride[0] + c * t->stride[1];                 \
        T *dst = (T *)(void *)nd_ptr(J->o) + p * ho * wo;                   \
        for (int64_t i = 0; i < ho; i++, dst += wo) {                       \
          const T *r[4];                                                    \
          for (int k = 0; k < KH; k++) {                                    \
            int64_t q = H->off[KH * i + k];                                 \
            int s = -1, free_ = -1;                                         \
            for (int m = 0; m < KH; m++) {                                  \
              if (key[m] == q) s = m;                                       \
              int used = 0;                                                 \
              for (int j = 0; j < KH; j++) used |= key[m] == H->off[KH * i + j]; \
              if (!used && free_ < 0) free_ = m;                            \
            }                                                               \
            if (s < 0) { /* resample input row q along the width */         \
              s = free_;                                                    \
              key[s] = q;                                                   \
              T *d = rows + s * wo;                                         \
              const T *x = src + q;                                         \
              for (int64_t j = 0; j < wo; j++) {                            \
                T v = x[W->off[KW * j]] * ww[KW * j];                       \
                for (int m = 1; m < KW; m++)                                \
                  v += x[W->off[KW * j + m]] * ww[KW * j + m];              \
                d[j] = v;                                                   \
              }                                                             \
            }                                                               \
            r[k] = rows + s * wo;                                           \
          }                                                                 \
          const T h0 = hw[KH * i];                                          \
          if (KH == 1) {                                                    \
            for (int64_t j = 0; j < wo; j++) dst[j] = r[0][j] * h0;         \
          } else {                                                          \
            const T h1 = hw[KH * i + 1];                                    \
            if (KH == 2) {                                                  \
              for (int64_t j = 0; j < wo; j++)                              \
                dst[j] = r[0][j] * h0 + r[1][j] * h1;                       \
            } else {                                                        \
              const T h2 = hw[KH * i + 2], h3 = hw[KH * i + 3];             \
              for (int64_t j = 0; j < wo; j++)                              \
                dst[j] = r[0][j] * h0 + r[1][j] * h1 + r[2][j] * h2 +       \
                         r[3][j] * h3;                                      \
            }                                                               \
          }                                                                 \
        }                                                                   \
      }                                                                     \
    }                                                                       \
  }
RESAMPLE(float)
RESAMPLE(double)

/* area: PyTorch's adaptive average pooling, one window at a time. */
#define AREA(T)                                                             \
  static void area_##T(void *ctx, int64_t lo, int64_t hi) {                 \
    const job *J = ctx;                                                     \
    const nd_tensor *t = J->t;                                              \
    int sp = t->ndim - 2;                                                   \
    int64_t hi_ = sp == 2 ? t->size[2] : 1, wi = t->size[t->ndim - 1];      \
    int64_t sh = sp == 2 ? t->stride[2] : 0, sw = t->stride[t->ndim - 1];   \
    int64_t ho = J->h.out, wo = J->w.out;                                   \
    for (int64_t p = lo; p < hi; p++) {                                     \
      int64_t n = p / J->C, c = p % J->C;                                   \
      const T *src = (const T *)(const void *)nd_ptr(t) +                   \
                     n * t->stride[0] + c * t->stride[1];                   \
      T *dst = (T *)(void *)nd_ptr(J->o) + p * ho * wo;                     \
      for (int64_t i = 0; i < ho; i++) {                                    \
        int64_t y0 = (int64_t)floorf((float)(i * hi_) / (float)ho);         \
        int64_t y1 = (int64_t)ceilf((float)((i + 1) * hi_) / (float)ho);    \
        for (int64_t j = 0; j < wo; j++) {                                  \
          int64_t x0 = (int64_t)floorf((float)(j * wi) / (float)wo);        \
          int64_t x1 = (int64_t)ceilf((float)((j + 1) * wi) / (float)wo);   \
          T s = 0;                                                          \
          for (int64_t y = y0; y < y1; y++)                                 \
            for (int64_t x = x0; x < x1; x++) s += src[y * sh + x * sw];    \
          *dst++ = s / (T)(y1 - y0) / (T)(x1 - x0);                         \
        }                                                                   \
      }                                                                     \
    }                                                                       \
  }
AREA(float)
AREA(double)

nd_status nd_interpolate(nd_err *e, nd_tensor *out, const nd_tensor *t,
                         const int64_t *size, const double *scale, int mode,
                         int align_corners) {
  const char *fn = "interpolate";
  char b1[ND_SIZES_BUF];
  if (mode < 0 || mode >= ND_NINTERP_MODES)
    return nd_fail(e, ND_EINVAL, "%s: unknown mode %d", fn, mode);
  const char *mname = modes[mode].name;
  if (!size == !scale)
    return nd_fail(e, ND_EINVAL, "%s: %s", fn, size
                   ? "only one of size or scale_factor should be given"
                   : "either size or scale_factor should be given");
  if (t->ndim != 3 && t->ndim != 4)
    return nd_fail(e, ND_EINVAL, "%s: takes a batched 3-D (N, C, L) or 4-D "
                   "(N, C, H, W) tensor, got %d dims", fn, t->ndim);
  if (modes[mode].dims && modes[mode].dims != t->ndim)
    return nd_fail(e, ND_EINVAL, "%s: mode \"%s\" needs %d-D input, got "
                   "%d-D", fn, mname, modes[mode].dims, t->ndim);
  if (align_corners >= 0 &&
      (mode == ND_INTERP_NEAREST || mode == ND_INTERP_AREA))
    return nd_fail(e, ND_EINVAL, "%s: align_corners can only be set with "
                   "the interpolating modes linear, bilinear and bicubic, "
                   "not \"%s\"", fn, mname);
  if (nd_dtype_kind(t->dtype) != 'f')
    return nd_fail(e, ND_EINVAL, "%s: takes float16, bfloat16, float32 or "
                   "float64 input, got %s", fn, nd_dtype_name(t->dtype));
  if (nd_is_half(t->dtype)) { /* in float32, rounded once (half_adapt.c) */
    nd_tensor w = ND_UNSET, r = ND_UNSET;
    if (nd_half_widen(e, fn, &w, t)) return e->code;
    nd_status st = nd_interpolate(e, &r, &w, size, scale, mode, align_corners);
    nd_release(&w);
    return st ? st : nd_half_narrow(e, fn, out, &r, t->dtype);
  }
  int sp = t->ndim - 2, align = align_corners > 0;
  int64_t osz[ND_MAX_DIMS];
  double sc[2] = {0, 0};
  for (int d = 0; d < sp; d++) {
    int64_t in = t->size[2 + d];
    if (scale) {
      double s = scale[d], o = (double)in * s;
      if (!(s > 0) || !(o < 0x1p62))
        return nd_fail(e, ND_EINVAL, "%s: scale_factor %.17g for a dim of "
                       "size %lld gives no valid size", fn, s, (long long)in);
      osz[d] = (int64_t)o, sc[d] = s;
    } else {
      osz[d] = size[d];
    }
    if (in < 1 || osz[d] < 1)
      return nd_fail(e, ND_EINVAL, "%s: input and output sizes should be "
                     "greater than 0, got input %s and output size %lld "
                     "for dim %d", fn,
                     nd_fmt_sizes(b1, sizeof b1, t->ndim, t->size),
                     (long long)osz[d], 2 + d + e->base);
  }
  int64_t shape[4] = {t->size[0], t->size[1], osz[0], osz[1]};
  if (nd_alloc_tensor(e, out, t->dtype, t->ndim, shape, false))
    return nd_err_name(e, fn);
  job J = {t, out, t->size[1], t->size[0] * t->size[1], 1, {0}, {0}, 0, 0};
  if (!J.planes) return ND_OK;
  J.h.K = 1, J.h.in = 1, J.h.out = 1;
  J.w.in = t->size[t->ndim - 1], J.w.out = osz[sp - 1];
  if (sp == 2) J.h.in = t->size[2], J.h.out = osz[0];
  int f32 = t->dtype == ND_FLOAT32;
  if (mode == ND_INTERP_AREA) {
    nd_parallel_for(J.planes, 1 + (1 << 16) / (J.h.out * J.w.out),
                    f32 ? area_float : area_double, &J);
    return ND_OK;
  }
  int K = mode == ND_INTERP_NEAREST ? 1 : mode == ND_INTERP_BICUBIC ? 4 : 2;
  J.w.K = K;
  if (sp == 2) J.h.K = K;
  int64_t ws = f32 ? 4 : 8, nw = J.w.out * J.w.K, nh = J.h.out * J.h.K;
  int64_t nt = nd_get_num_threads();
  int64_t work = J.planes * J.h.out * J.w.out;
  nt = nt < J.planes ? nt : J.planes;
  if (work < (1 << 16)) nt = 1;
  J.ntask = nt < 1 ? 1 : nt;
  J.row_bytes = J.w.out * ws;
  int64_t cells;
  char *blk = NULL;
  if (!nd_mul_ovf(J.ntask * J.h.K, J.w.out, &cells) &&
      !nd_add_ovf(cells, nw + nh, &cells))
    blk = nd_scratch_alloc(e, fn, cells + (nw + nh), 8, false);
  else
    nd_fail(e, ND_EOVERFLOW, "%s: output rows too large", fn);
  if (!blk) {
    nd_release(out);
    return e->code;
  }
  /* the block: offsets (w, h), weights (w, h), then the row caches */
  J.w.off = (int64_t *)(void *)blk, J.h.off = J.w.off + nw;
  J.w.w = J.h.off + nh, J.h.w = (char *)J.w.w + nw * ws;
  J.cache = (char *)J.w.w + (nw + nh) * 8;
  int64_t sw = t->stride[t->ndim - 1], sh = sp == 2 ? t->stride[2] : 0;
  if (f32) {
    fill_float(&J.w, mode, align, sc[sp - 1], sw);
    if (sp == 2) fill_float(&J.h, mode, align, sc[0], sh);
    else ((float *)J.h.w)[0] = 1, J.h.off[0] = 0;
  } else {
    fill_double(&J.w, mode, align, sc[sp - 1], sw);
    if (sp == 2) fill_double(&J.h, mode, align, sc[0], sh);
    else ((double *)J.h.w)[0] = 1, J.h.off[0] = 0;
  }
  nd_parallel_for(J.ntask, 1, f32 ? planes_float : planes_double, &J);
  nd_scratch_free(blk);
  return ND_OK;
}
