/* Convolution: follows conv_plan.c's decision -- the copies it names, then
 * one matrix product per group (GEMM), tiles of packed windows each
 * multiplied by the group's weights (IM2COL), or the direct loop; then
 * the bias. Spatial dims are seen as three (missing leading ones of size
 * 1), so one packing loop and one direct kernel serve conv1d to conv3d. */
#include "conv.h"
#include <string.h>

/* The geometry the loops walk, in elements; three spatial dims. */
typedef struct {
  int64_t in[3], k[3], s[3], d[3], pl[3], out[3];
  int64_t xs_n, xs_c, xs[3];      /* input strides */
  int64_t ws_o, ws_c, ws[3];      /* weight strides (DIRECT) */
  int64_t S, cg, og, o;
} geom;

static void geom_of(geom *g, const nd_conv_path *p, const nd_tensor *x,
                    const nd_tensor *w) {
  const int off = 3 - p->nsp, lead = x->ndim - p->nsp;
  for (int d = 0; d < 3; d++) {
    int sd = d - off;
    g->in[d] = sd < 0 ? 1 : p->in[sd];
    g->k[d] = sd < 0 ? 1 : p->kernel[sd];
    g->s[d] = sd < 0 ? 1 : p->stride[sd];
    g->d[d] = sd < 0 ? 1 : p->dilation[sd];
    g->pl[d] = sd < 0 ? 0 : p->pad_lo[sd];
    g->out[d] = sd < 0 ? 1 : p->out[sd];
    g->xs[d] = sd < 0 ? 0 : x->stride[lead + sd];
    g->ws[d] = sd < 0 ? 0 : w->stride[2 + sd];
  }
  g->xs_n = p->batched ? x->stride[0] : 0;
  g->xs_c = x->stride[lead - 1];
  g->ws_o = w->stride[0];
  g->ws_c = w->stride[1];
  g->S = g->out[0] * g->out[1] * g->out[2];
  g->cg = p->c / p->groups;
  g->og = p->o / p->groups;
  g->o = p->o;
}

/* Output positions [lo, hi) along the last dim whose window tap at
 * offset kx (already dilated, minus the left pad) lands inside 0 .. n-1:
 * ox * s + kx in [0, n). */
static void inside(int64_t kx, int64_t s, int64_t n, int64_t out,
                   int64_t *lo, int64_t *hi) {
  int64_t a = kx >= 0 ? 0 : (-kx + s - 1) / s;
  int64_t b = n - 1 - kx < 0 ? 0 : (n - 1 - kx) / s + 1;
  *lo = a > out ? out : a;
  *hi = b > out ? out : b < *lo ? *lo : b;
}

/* ---- IM2COL: one tile of columns ---------------------------------------- */
/* n elements of es bytes from src, `step` elements apart, to dst. */
static void gather(char *dst, const char *src, int64_t n, int64_t step,
                   int64_t es) {
  if (step == 1) {
    memcpy(dst, src, (size_t)(n * es));
  } else if (es == 4) {
    uint32_t *d = (uint32_t *)dst;
    const uint32_t *s = (const uint32_t *)src;
    for (int64_t i = 0; i < n; i++) d[i] = s[i * step];
  } else {
    uint64_t *d = (uint64_t *)dst;
    const uint64_t *s = (const uint64_t *)src;
    for (int64_t i = 0; i < n; i++) d[i] = s[i * step];
  }
}

/* cols (rows cg * kernel, T columns) gets, for each output position
 * p0 .. p0 + T - 1 of image n and group grp, the window's elements (0 in
 * the padding). The positions go by runs of one output row (or, where
 * consecutive rows read consecutive input rows -- stride 1, the width
 * kept, the input's rows compact -- by runs of whole rows: one copy per
 * kernel tap instead of one per row, the row ends fixed up after); each
 * run is written into every row of cols before the next. Elements move
 * as bytes of their size. */
static void pack(const geom *g, const char *x, int64_t es, int64_t n,
                 int64_t grp, int64_t p0, int64_t T, char *cols) {
  const char *xn = x + (n * g->xs_n + grp * g->cg * g->xs_c) * es;
  const int64_t W = g->out[2], H = g->out[1];
  const int64_t kd = g->k[0], kh = g->k[1], kw = g->k[2];
  const int rows_run = g->s[1] == 1 && g->s[2] == 1 && g->xs[2] == 1 &&
                       W == g->in[2] && g->xs[1] == W;
  int64_t q = p0, oz = p0 / (H * W), oy = p0 / W % H, ox = p0 % W;
  while (q < p0 + T) {
    int64_t len = W - ox < p0 + T - q ? W - ox : p0 + T - q, nr = 1;
    if (rows_run && ox == 0 && len == W) /* whole rows of one oz */
      while (oy + nr < H && q + (nr + 1) * W <= p0 + T) nr++;
    char *dst0 = cols + (q - p0) * es;
    for (int64_t kz = 0; kz < kd; kz++) {
      const int64_t iz = oz * g->s[0] + kz * g->d[0] - g->pl[0];
      for (int64_t ky = 0; ky < kh; ky++) {
        const int64_t iy = oy * g->s[1] + ky * g->d[1] - g->pl[1];
        for (int64_t kx = 0; kx < kw; kx++) {
          const int64_t tx = kx * g->d[2] - g->pl[2];
          int64_t a, b; /* the run's positions whose tap is inside */
          inside(tx, g->s[2], g->in[2], W, &a, &b);
          if (a < ox) a = ox;
          if (a > ox + len) a = ox + len; /* all of it past the run */
          if (b > ox + len) b = ox + len;
          if (b < a) b = a;
          /* rows [r0, r1) of the run read input rows inside */
          int64_t r0 = 0, r1 = nr;
          if (iz < 0 || iz >= g->in[0]) r1 = 0;
          if (iy < 0) r0 = -iy < nr ? -iy : nr;
          if (iy + r1 > g->in[1]) r1 = g->in[1] - iy > r0 ? g->in[1] - iy : r0;
          if (r1 < r0) r1 = r0;
          for (int64_t c = 0; c < g->cg; c++) {
            char *d = dst0 + (((c * kd + kz) * kh + ky) * kw + kx) * T * es;
            const char *row = xn + (c * g->xs_c + iz * g->xs[0]) * es;
            if (nr > 1) { /* whole rows: one copy, then the row ends */
              memset(d, 0, (size_t)(r0 * W * es));
              memset(d + r1 * W * es, 0, (size_t)((nr - r1) * W * es));
              if (r1 > r0 && b <= a) /* the tap misses every row (|tx| >= W) */
                memset(d + r0 * W * es, 0, (size_t)((r1 - r0) * W * es));
              else if (r1 > r0) {
                const int64_t lo = tx < 0 ? -tx : 0, hi = tx > 0 ? tx : 0;
                const char *s = row + ((iy + r0) * g->xs[1] + lo + tx) * es;
                char *o = d + (r0 * W + lo) * es;
                memcpy(o, s, (size_t)(((r1 - r0) * W - lo - hi) * es));
                for (int64_t r = r0; r < r1; r++) { /* outside the row */
                  memset(d + r * W * es, 0, (size_t)(a * es));
                  memset(d + (r * W + b) * es, 0, (size_t)((W - b) * es));
                }
              }
              continue;
            }
            if (r1 <= r0) { /* the row is padding */
              memset(d, 0, (size_t)(len * es));
              continue;
            }
            memset(d, 0, (size_t)((a - ox) * es));
            if (b > a) /* (else the address may overflow) */
              gather(d + (a - ox) * es,
                     row + (iy * g->xs[1] + (a * g->s[2] + tx) * g->xs[2]) * es,
                     b - a, b - a > 1 ? g->s[2] * g->xs[2] : 1, es);
            memset(d + (b - ox) * es, 0, (size_t)((ox + len - b) * es));
          }
        }
      }
    }
    q += nr * len;
    ox = (ox + len) % W;
    if (ox == 0 && (oy += nr) >= H) oy = 0, oz++;
  }
}

/* out[o, positions] += bias[o] for a group's rows of one image. */
#define BIAS(T_, name)                                                      \
  static void bias_##name(T_ *out, int64_t rows, int64_t ld, int64_t len,   \
                          const T_ *bias, int64_t bstride) {                \
    for (int64_t r = 0; r < rows; r++) {                                    \
      const T_ v = bias[r * bstride];                                       \
      T_ *o = out + r * ld;                                                 \
      for (int64_t i = 0; i < len; i++) o[i] += v;                          \
    }                                                                       \
  }
BIAS(float, f32)
BIAS(double, f64)
#undef BIAS

static void add_bias(int dt, char *out, int64_t rows, int64_t ld,
                     int64_t len, const nd_tensor *bias, int64_t row0) {
  if (!bias) return;
  const int64_t es = nd_dtype_size(dt);
  const char *b = nd_ptr(bias) + row0 * bias->stride[0] * es;
  if (dt == ND_FLOAT32)
    bias_f32((float *)out, rows, ld, len, (const float *)b, bias->stride[0]);
  else
    bias_f64((double *)out, rows, ld, len, (const double *)b,
             bias->stride[0]);
}

/* A header over storage st with 2-D geometry. */
static nd_tensor mat(const nd_tensor *st, int dt, int64_t offset, int64_t r,
                     int64_t c, int64_t rs, int64_t cs) {
  nd_tensor h = ND_UNSET;
  h.storage = st->storage;
  h.offset = offset;
  h.dtype = dt;
  h.ndim = 2;
  h.size[0] = r, h.size[1] = c, h.stride[0] = rs, h.stride[1] = cs;
  return h;
}

static nd_status im2col(nd_err *e, const nd_conv_path *p, const geom *g,
                        const nd_tensor *x, const nd_tensor *wv,
                        const nd_tensor *bias, const nd_tensor *r) {
  const int dt = p->compute_dtype;
  const int64_t T = p->tile, ck = p->tile_rows, S = g->S;
  if (!p->calls) return ND_OK;
  nd_tensor tile = ND_UNSET;
  const int64_t cells = T * ck; /* the plan's tile_bytes: no overflow */
  if (nd_alloc_tensor(e, &tile, dt, 1, &cells, false)) return e->code;
  const char *xp = nd_ptr(x);
  nd_status st = ND_OK;
  for (int64_t n = 0; n < p->n && !st; n++)
    for (int64_t grp = 0; grp < p->groups && !st; grp++)
      for (int64_t p0 = 0; p0 < S && !st; p0 += T) {
        const int64_t len = S - p0 < T ? S - p0 : T;
        pack(g, xp, nd_dtype_size(dt), n, grp, p0, len, nd_ptr(&tile));
        nd_tensor a = *wv, b = mat(&tile, dt, 0, ck, len, len, 1);
        a.size[0] = g->og;
        a.offset += grp * g->og * wv->stride[0];
        const int64_t o0 = r->offset + (n * g->o + grp * g->og) * S + p0;
        nd_tensor o = mat(r, dt, o0, g->og, len, S, 1);
        st = nd_matmul_run(e, len == T ? &p->call : &p->last, &a, &b, &o);
        if (!st)
          add_bias(dt, nd_ptr(&o), g->og, S, len, bias, grp * g->og);
      }
  nd_release(&tile);
  return st;
}

static nd_status gemm(nd_err *e, const nd_conv_path *p, const geom *g,
                      const nd_tensor *x, const nd_tensor *wv,
                      const nd_tensor *bias, const nd_tensor *r) {
  nd_tensor xv;
  nd_conv_input_view(&xv, x, p->nsp);
  const int64_t S = g->S;
  for (int64_t grp = 0; grp < p->groups; grp++) {
    nd_tensor a = *wv, b = xv, o = *r;
    a.size[0] = g->og;
    a.offset += grp * g->og * wv->stride[0];
    b.size[b.ndim - 2] = g->cg;
    b.offset += grp * g->cg * xv.stride[b.ndim - 2];
    o.ndim = b.ndim; /* the result as (N, O/groups, S) */
    if (p->batched) o.size[0] = p->n, o.stride[0] = g->o * S;
    o.size[o.ndim - 2] = g->og, o.stride[o.ndim - 2] = S;
    o.size[o.ndim - 1] = S, o.stride[o.ndim - 1] = 1;
    o.offset += grp * g->og * S;
    if (nd_matmul_run(e, &p->call, &a, &b, &o)) return e->code;
    if (bias)
      for (int64_t n = 0; n < p->n; n++)
        add_bias(p->compute_dtype, nd_ptr(r) + (n * g->o + grp * g->og) * S *
                 nd_dtype_size(p->compute_dtype), g->og, S, S, bias, grp * g->og);
  }
  return ND_OK;
}

/* ---- DIRECT: one output plane at a time ---------------------------------- */
typedef struct {
  const geom *g;
  const char *x, *w, *b; /* first elements */
  int64_t bstride;
  char *out;
} direct_ctx;

/* Planes [lo, hi) of the n * O: the bias, then each tap (c, kz, ky, kx)
 * added into every output row it reaches, the row loop unit-stride where
 * the input's is (so it vectorizes). */
#define DIRECT(T_, name)                                                    \
  static void direct_##name(void *ctx, int64_t lo, int64_t hi) {            \
    const direct_ctx *c = ctx;                                              \
    const geom *g = c->g;                                                   \
    const int64_t W = g->out[2], HW = g->out[1] * W;                        \
    /* an empty input (padding can still make outputs) has no taps: its \
     * strides may be anything, so no pointer is formed from them */     \
    const int64_t cg = g->in[0] && g->in[1] && g->in[2] ? g->cg : 0;      \
    for (int64_t pl = lo; pl < hi; pl++) {                                  \
      const int64_t n = pl / g->o, o = pl % g->o, grp = o / g->og;          \
      T_ *out = (T_ *)c->out + pl * g->S;                                   \
      const T_ bv = c->b ? ((const T_ *)c->b)[o * c->bstride] : 0;          \
      for (int64_t i = 0; i < g->S; i++) out[i] = bv;                       \
      for (int64_t ci = 0; ci < cg; ci++) {                                 \
        const T_ *xc = (const T_ *)c->x + n * g->xs_n +                     \
                       (grp * g->cg + ci) * g->xs_c;                        \
        const T_ *wc = (const T_ *)c->w + o * g->ws_o + ci * g->ws_c;       \
        for (int64_t kz = 0; kz < g->k[0]; kz++)                            \
          for (int64_t ky = 0; ky < g->k[1]; ky++)                          \
            for (int64_t kx = 0; kx < g->k[2]; kx++) {                      \
              const T_ wv = wc[kz * g->ws[0] + ky * g->ws[1] +              \
                               kx * g->ws[2]];                              \
              const int64_t tx = kx * g->d[2] - g->pl[2];                   \
              int64_t a, b;                                                 \
              inside(tx, g->s[2], g->in[2], W, &a, &b);                     \
              if (b <= a) continue; /* (the products below may overflow) */ \
              const int64_t step = b - a > 1 ? g->s[2] * g->xs[2] : 1;      \
              for (int64_t oz = 0; oz < g->out[0]; oz++) {                  \
                const int64_t iz = oz * g->s[0] + kz * g->d[0] - g->pl[0];  \
                if (iz < 0 || iz >= g->in[0]) continue;                     \
                for (int64_t oy = 0; oy < g->out[1]; oy++) {                \
                  const int64_t iy = oy * g->s[1] + ky * g->d[1] - g->pl[1];\
                  if (iy < 0 || iy >= g->in[1]) continue;                   \
                  T_ *restrict orow = out + oz * HW + oy * W;               \
                  const T_ *restrict src = xc + iz * g->xs[0] +             \
                      iy * g->xs[1] + (a * g->s[2] + tx) * g->xs[2];        \
                  if (step == 1)                                            \
                    for (int64_t i = 0; i < b - a; i++)                     \
                      orow[a + i] += wv * src[i];                           \
                  else                                                      \
                    for (int64_t i = 0; i < b - a; i++)                     \
                      orow[a + i] += wv * src[i * step];                    \
                }                                                           \
              }                                                             \
            }                                                               \
      }                                                                     \
    }                                                                       \
  }
DIRECT(float, f32)
DIRECT(double, f64)
#undef DIRECT

static void direct(const nd_conv_path *p, const geom *g, const nd_tensor *x,
                   const nd_tensor *w, const nd_tensor *bias,
                   const nd_tensor *r) {
  direct_ctx c = {g, nd_ptr(x), nd_ptr(w), bias ? nd_ptr(bias) : NULL,
                  bias ? bias->stride[0] : 0, nd_ptr(r)};
  const int64_t planes = p->n * p->o;
  /* a plane's multiply-adds decide how many a thread takes */
  int64_t work = g->S * g->cg * g->k[0] * g->k[1] * g->k[2];
  int64_t grain = work > 0 ? 1 + (1 << 16) / work : planes;
  nd_parallel_for(planes, grain, p->compute_dtype == ND_FLOAT32 ? direct_f32
                                                       : direct_f64, &c);
}

/* ---- the call -------------------------------------------------------------- */
static int copies(const nd_conv_path *p, int what) {
  for (int k = 0; k < p->ncopies; k++)
    if (p->copy_what[k] == what) return 1;
  return 0;
}

static nd_status conv(nd_err *e, const char *fn, nd_tensor *out, int nsp,
                      const nd_tensor *x, const nd_tensor *w,
                      const nd_tensor *bias, const nd_conv_options *o) {
  nd_conv_path p;
  if (nd_conv_plan_as(e, fn, &p, nsp, x, w, bias, o)) return e->code;
  const int dt = p.compute_dtype;
  nd_tensor xc = ND_UNSET, wc = ND_UNSET, bc = ND_UNSET, r32 = ND_UNSET;
  nd_status st = ND_OK;
  if (p.bytes == 0) /* empty */
    return nd_alloc_tensor(e, out, p.dtype, p.ndim, p.size, false)
               ? nd_err_name(e, fn) : ND_OK;
  /* the result in the compute dtype, rounded once at the end (ND_CONV_COPY_OUTPUT) */
  nd_tensor *res = copies(&p, ND_CONV_COPY_OUTPUT) ? &r32 : out;
  if (copies(&p, ND_CONV_COPY_INPUT) && (st = nd_to_dtype(e, &xc, x, dt)))
    goto done;
  if (copies(&p, ND_CONV_COPY_WEIGHT) && (st = nd_to_dtype(e, &wc, w, dt)))
    goto done;
  if (copies(&p, ND_CONV_COPY_BIAS) && (st = nd_to_dtype(e, &bc, bias, dt)))
    goto done;
  if (xc.storage) x = &xc;
  if (wc.storage) w = &wc;
  if (bc.storage) bias = &bc;
  if ((st = nd_alloc_tensor(e, res, dt, p.ndim, p.size, false))) goto done;
  geom g;
  geom_of(&g, &p, x, w);
  if (p.strategy == ND_CONV_DIRECT) {
    direct(&p, &g, x, w, bias, res);
  } else if (p.calls == 0) { /* nothing multiplied: the bias, or 0 */
    st = nd_fill(e, res, 0);
    for (int64_t n = 0; !st && n < p.n; n++)
      add_bias(dt, nd_ptr(res) + n * p.o * g.S * nd_dtype_size(dt), p.o,
               g.S, g.S, bias, 0);
  } else {
    nd_tensor wv;
    nd_conv_weight_view(&wv, w);
    st = p.strategy == ND_CONV_GEMM ? gemm(e, &p, &g, x, &wv, bias, res)
                                    : im2col(e, &p, &g, x, &wv, bias, res);
  }
  if (st) nd_release(res);
  else if (res != out) st = nd_half_narrow(e, fn, out, res, p.dtype);
done:
  if (xc.storage) nd_release(&xc);
  if (wc.storage) nd_release(&wc);
  if (bc.storage) nd_release(&bc);
  return st ? nd_err_name(e, fn) : ND_OK;
}

nd_status nd_conv(nd_err *e, nd_tensor *out, int nsp, const nd_tensor *x,
                  const nd_tensor *w, const nd_tensor *bias,
                  const nd_conv_options *o) {
  return conv(e, nsp >= 1 && nsp <= 3 ? nd_conv_name(nsp) : "conv", out,
              nsp, x, w, bias, o);
}
