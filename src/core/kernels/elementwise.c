/* The elementwise driver: every op goes through run(). It promotes,
 * broadcasts (NumPy rules; broadcast dims get stride 0), allocates or
 * checks the output, reads through a temporary when the output partly
 * overlaps an input, then walks the operands with nd_iter (dims ordered by
 * stride, contiguous dims merged) and calls one kernel per inner run:
 *   - all dtypes match the kernel's: the kernel directly, or tile by tile
 *     when an operand's inner stride crosses the others' (a:t() + b);
 *   - otherwise through small buffers converted on the fly (O(dtypes)
 *     conversion loops instead of O(dtypes^2) kernels).
 * Work above a grain is split across nd's thread pool by element ranges. */
#include "elementwise.h"
#include <math.h>
#include <stdio.h>

enum { CHUNK = 256, T0 = 256, T1 = 64 };

static const int8_t esizes[ND_NDTYPES] = {
#define ES(E, name, T, kind) [ND_##E] = sizeof(T),
    ND_DTYPES(ES)
#undef ES
};
static inline int64_t esize(int dt) { return esizes[dt]; }
static inline char *data_of(const nd_tensor *t, int64_t es) {
  return (char *)t->storage->data + t->offset * es;
}

/* ---- broadcasting ---- */
nd_status nd_broadcast_shape(nd_err *e, const char *fn, int n,
                             const nd_tensor *const *ts, int *ndim,
                             int64_t *size) {
  int nd = 0;
  for (int k = 0; k < n; k++)
    if (ts[k]->ndim > nd) nd = ts[k]->ndim;
  for (int i = 0; i < nd; i++) {
    int64_t s = 1;
    int from = -1;
    for (int k = 0; k < n; k++) {
      int d = i - (nd - ts[k]->ndim);
      if (d < 0 || ts[k]->size[d] == 1) continue;
      if (s == 1) {
        s = ts[k]->size[d];
        from = k;
      } else if (s != ts[k]->size[d]) {
        char b1[ND_SIZES_BUF], b2[ND_SIZES_BUF];
        return nd_fail(e, ND_EINVAL,
                       "%s: shapes %s and %s do not broadcast (dim %d: %lld "
                       "vs %lld)", fn,
                       nd_fmt_sizes(b1, sizeof b1, ts[from]->ndim, ts[from]->size),
                       nd_fmt_sizes(b2, sizeof b2, ts[k]->ndim, ts[k]->size),
                       i + e->base, (long long)s, (long long)ts[k]->size[d]);
      }
    }
    size[i] = s;
  }
  *ndim = nd;
  return ND_OK;
}

/* A borrowed header of src seen with shape (nd, size): stride 0 on the
 * broadcast dims. */
static void expand_to(nd_tensor *dst, const nd_tensor *src, int nd,
                      const int64_t *size) {
  *dst = *src;
  dst->ndim = nd;
  for (int i = 0; i < nd; i++) {
    int d = i - (nd - src->ndim);
    dst->size[i] = size[i];
    dst->stride[i] = d < 0 || src->size[d] == 1 ? 0 : src->stride[d];
  }
}

/* Same shape assumed: do a and b reach the same elements in the same
 * order (so reading b[i] before writing a[i] is safe)? */
static int same_elements(const nd_tensor *a, const nd_tensor *b) {
  if (nd_ptr(a) != nd_ptr(b) || a->dtype != b->dtype) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->size[i] > 1 && a->stride[i] != b->stride[i]) return 0;
  return 1;
}

/* A weak scalar as a 0-d tensor of dtype dt on a local cell. */
typedef struct {
  nd_storage st;
  union { double f; int64_t i; char b[8]; } v;
  nd_tensor t;
} cell;
static void make_scalar(cell *c, const nd_operand *o, int dt) {
  int64_t iv = o->i;
  double fv = o->f;
  int isf = o->dtype == ND_FLOAT64;
  nd_convert(dt, c->v.b, 0, isf ? ND_FLOAT64 : ND_INT64,
             isf ? (const char *)&fv : (const char *)&iv, 0, 1);
  c->st = (nd_storage){&c->v, sizeof c->v, 1, NULL, NULL};
  memset(&c->t, 0, sizeof c->t);
  c->t.storage = &c->st;
  c->t.dtype = dt;
}

/* ---- execution ---- */
typedef struct {
  nd_loop_fn kernel;
  void *kctx;              /* the kernel's own parameters */
  int nops;                /* output, then inputs */
  int dt[ND_ITER_MAXOPS];  /* the tensors' dtypes */
  int kdt[ND_ITER_MAXOPS]; /* the kernel's */
  int needbuf[ND_ITER_MAXOPS];
  int64_t nb1;             /* tiles along iteration dim 1 */
  char *tiles;             /* nslots buffers of `slot` bytes, or NULL */
  int64_t slot;
  int nslots, next;        /* next: the slot the next task claims */
  nd_iter it;
} job;

/* Operands whose dtype differs from the kernel's go through buffers. */
static void buffered(char **p, const int64_t *st, int64_t n, void *ctx) {
  const job *j = ctx;
  _Alignas(64) char buf[ND_ITER_MAXOPS][CHUNK * 8];
  char *q[ND_ITER_MAXOPS];
  int64_t qs[ND_ITER_MAXOPS];
  for (int k = 1; k < j->nops; k++)
    if (j->dt[k] != j->kdt[k] && st[k] == 0) /* a broadcast value: once */
      nd_convert(j->kdt[k], buf[k], 0, j->dt[k], p[k], 0, 1);
  for (int64_t done = 0; done < n; done += CHUNK) {
    int64_t m = n - done < CHUNK ? n - done : CHUNK;
    for (int k = 0; k < j->nops; k++) {
      char *at = p[k] + done * st[k];
      if (j->dt[k] == j->kdt[k]) {
        q[k] = at;
        qs[k] = st[k];
        continue;
      }
      q[k] = buf[k];
      qs[k] = st[k] ? nd_dtype_size(j->kdt[k]) : 0;
      if (k > 0 && st[k])
        nd_convert(j->kdt[k], buf[k], qs[k], j->dt[k], at, st[k], m);
    }
    j->kernel(q, qs, m, j->kctx);
    if (j->dt[0] != j->kdt[0])
      nd_convert(j->dt[0], p[0] + done * st[0], st[0], j->kdt[0], buf[0],
                 nd_dtype_size(j->kdt[0]), m);
  }
}

static void run_direct(void *ctx, int64_t lo, int64_t hi) {
  const job *j = ctx;
  nd_iter_run_elems(&j->it, j->kernel, j->kctx, lo, hi);
}
static void run_buffered(void *ctx, int64_t lo, int64_t hi) {
  job *j = ctx;
  nd_iter_run_elems(&j->it, buffered, j, lo, hi);
}

/* Mixed strides: an operand whose inner stride is not its element size but
 * whose next dim is unit-stride. Such operands are moved through T0 x T1
 * tiles (a blocked transpose), so every kernel call runs contiguously. */
static int tileable(job *j) {
  const nd_iter *it = &j->it;
  int any = 0;
  if (it->ndim < 2 || it->size[0] < 16 || it->size[1] < 16) return 0;
  for (int k = 0; k < j->nops; k++) {
    int64_t es = nd_dtype_size(j->dt[k]), s0 = it->stride[k][0];
    j->needbuf[k] = s0 != 0 && s0 != es;
    any |= j->needbuf[k] && it->stride[k][1] == es;
  }
  return any;
}

/* buf[jj*T0 + ii] <-> p[ii*s0 + jj*s1] for ii < ti, jj < tj. */
static void gather(char *buf, const char *p, int64_t ti, int64_t tj,
                   int64_t s0, int64_t s1, int64_t es) {
  if (s1 == es) {
    nd_transpose_copy(buf, p, tj, ti, T0, s0 / es, (int)es);
    return;
  }
  for (int64_t jj = 0; jj < tj; jj++)
    for (int64_t ii = 0; ii < ti; ii++)
      memcpy(buf + (jj * T0 + ii) * es, p + ii * s0 + jj * s1, (size_t)es);
}
static void scatter(char *p, const char *buf, int64_t ti, int64_t tj,
                    int64_t s0, int64_t s1, int64_t es) {
  if (s1 == es) {
    nd_transpose_copy(p, buf, ti, tj, s0 / es, T0, (int)es);
    return;
  }
  for (int64_t jj = 0; jj < tj; jj++)
    for (int64_t ii = 0; ii < ti; ii++)
      memcpy(p + ii * s0 + jj * s1, buf + (jj * T0 + ii) * es, (size_t)es);
}

/* Units: one block of T1 along dim 1 at one position of the outer dims. */
static void run_tiles(void *ctx, int64_t lo, int64_t hi) {
  job *j = ctx;
  const nd_iter *it = &j->it;
  /* Each task takes a slot of the call's buffers; without one (no memory
   * for them), operands are read in place (slower). */
  int k0 = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
  char *mem = j->tiles && k0 < j->nslots ? j->tiles + k0 * j->slot : NULL;
  char *buf[ND_ITER_MAXOPS];
  int needbuf[ND_ITER_MAXOPS];
  for (int k = 0; k < j->nops; k++) {
    buf[k] = mem ? mem + (size_t)k * T0 * T1 * 8 : NULL;
    needbuf[k] = mem && j->needbuf[k];
  }
  for (int64_t u = lo; u < hi; u++) {
    char *base[ND_ITER_MAXOPS], *q[ND_ITER_MAXOPS];
    int64_t qs[ND_ITER_MAXOPS], rem = u / j->nb1;
    int64_t j0 = u % j->nb1 * T1;
    int64_t tj = it->size[1] - j0 < T1 ? it->size[1] - j0 : T1;
    for (int k = 0; k < j->nops; k++)
      base[k] = it->data[k] + j0 * it->stride[k][1];
    for (int i = 2; i < it->ndim; i++) {
      int64_t idx = rem % it->size[i];
      rem /= it->size[i];
      for (int k = 0; k < j->nops; k++) base[k] += idx * it->stride[k][i];
    }
    for (int64_t i0 = 0; i0 < it->size[0]; i0 += T0) {
      int64_t ti = it->size[0] - i0 < T0 ? it->size[0] - i0 : T0;
      for (int k = 1; k < j->nops; k++)
        if (needbuf[k])
          gather(buf[k], base[k] + i0 * it->stride[k][0], ti, tj,
                 it->stride[k][0], it->stride[k][1], nd_dtype_size(j->dt[k]));
      for (int64_t jj = 0; jj < tj; jj++) {
        for (int k = 0; k < j->nops; k++) {
          int64_t es = esize(j->dt[k]);
          if (needbuf[k]) {
            q[k] = buf[k] + jj * T0 * es;
            qs[k] = es;
          } else {
            q[k] = base[k] + i0 * it->stride[k][0] + jj * it->stride[k][1];
            qs[k] = it->stride[k][0];
          }
        }
        j->kernel(q, qs, ti, j->kctx);
      }
      if (needbuf[0])
        scatter(base[0] + i0 * it->stride[0][0], buf[0], ti, tj,
                it->stride[0][0], it->stride[0][1], nd_dtype_size(j->dt[0]));
    }
  }
}

static void execute(const nd_tensor *dst, const nd_tensor *ex, int nin,
                    const int *kin, int kout, nd_loop_fn kernel,
                    void *kctx, int64_t grain) {
  int64_t n = nd_numel(dst);
  if (n == 0) return;
  job j;
  const nd_tensor *ops[ND_ITER_MAXOPS] = {dst};
  j.kernel = kernel;
  j.kctx = kctx;
  j.nops = nin + 1;
  j.dt[0] = dst->dtype;
  j.kdt[0] = kout;
  int direct = dst->dtype == kout;
  for (int k = 0; k < nin; k++) {
    ops[k + 1] = &ex[k];
    j.dt[k + 1] = ex[k].dtype;
    j.kdt[k + 1] = kin[k];
    direct &= ex[k].dtype == kin[k];
  }
  nd_iter_init(&j.it, j.nops, ops);
  if (direct && tileable(&j)) {
    int64_t outer = 1;
    for (int i = 2; i < j.it.ndim; i++) outer *= j.it.size[i];
    j.nb1 = (j.it.size[1] + T1 - 1) / T1;
    int64_t per_unit = T1 * j.it.size[0];
    int64_t units = outer * j.nb1, g = (grain + per_unit - 1) / per_unit;
    /* Tile buffers for as many tasks as nd_parallel_for makes, allocated
     * here (the hook is called from the caller's thread only). */
    int64_t tasks = units / (g > 1 ? g : 1);
    int nt = nd_get_num_threads();
    j.nslots = tasks < 1 ? 1 : tasks > nt ? nt : (int)tasks;
    j.slot = (int64_t)j.nops * T0 * T1 * 8;
    j.next = 0;
    j.tiles = nd_scratch_alloc(NULL, "tiles", j.nslots, j.slot, false);
    nd_parallel_for(units, g, run_tiles, &j);
    nd_scratch_free(j.tiles);
    return;
  }
  nd_parallel_for(n, grain, direct ? run_direct : run_buffered, &j);
}

/* Elements per thread below which threading costs more than it saves. */
static int64_t grain_of(int op) {
  switch (op) {
  case ND_POW: case ND_EXP: case ND_LOG: case ND_SIN: case ND_COS:
  case ND_TANH: case ND_SIGMOID:
    return 1 << 12;
  default:
    return 1 << 15;
  }
}

nd_status nd_ew_run(nd_err *e, const char *fn, nd_tensor *out, int mode,
                    int nin, const nd_operand *in, int rdt, const int *kin,
                    int kout, nd_loop_fn kernel, void *kctx, int64_t grain) {
  cell cells[ND_ITER_MAXOPS - 1];
  const nd_tensor *ts[ND_ITER_MAXOPS - 1];
  nd_tensor ex[ND_ITER_MAXOPS - 1];
  char b1[ND_SIZES_BUF], b2[ND_SIZES_BUF];
  int nd;
  int64_t size[ND_MAX_DIMS];
  for (int k = 0; k < nin; k++) {
    if (in[k].t) {
      ts[k] = in[k].t;
      if (!ts[k]->storage)
        return nd_fail(e, ND_EINVAL, "%s: operand %d is an unset tensor", fn,
                       k + e->base);
    } else {
      make_scalar(&cells[k], &in[k], kin[k]);
      ts[k] = &cells[k].t;
    }
  }
  if (nd_broadcast_shape(e, fn, nin, ts, &nd, size)) return e->code;
  if (mode == ND_NEW) {
    const nd_tensor *exs[ND_ITER_MAXOPS - 1];
    for (int k = 0; k < nin; k++) {
      expand_to(&ex[k], ts[k], nd, size);
      exs[k] = &ex[k];
    }
    if (nd_alloc_layout(e, out, rdt, nd, size, nin, exs))
      return nd_err_name(e, fn);
  } else {
    if (!out || !out->storage)
      return nd_fail(e, ND_EINVAL, "%s: out must be a tensor", fn);
    if (out->ndim != nd ||
        memcmp(out->size, size, sizeof(int64_t) * (size_t)nd)) {
      nd_fmt_sizes(b1, sizeof b1, out->ndim, out->size);
      nd_fmt_sizes(b2, sizeof b2, nd, size);
      if (mode == ND_OUT)
        return nd_fail(e, ND_EINVAL, "%s: out has size %s but the result "
                       "has size %s", fn, b1, b2);
      return nd_fail(e, ND_EINVAL, "%s: the written tensor of size %s cannot "
                     "take a result of size %s (in-place ops do not grow "
                     "their tensor)", fn, b1, b2);
    }
    if (mode == ND_OUT && out->dtype != rdt)
      return nd_fail(e, ND_EINVAL, "%s: out has dtype %s but the result has "
                     "dtype %s", fn, nd_dtype_name(out->dtype),
                     nd_dtype_name(rdt));
    if (mode == ND_INPLACE && !nd_can_cast(rdt, out->dtype))
      return nd_fail(e, ND_EINVAL, "%s: result type %s can't be cast to the "
                     "written tensor's dtype %s", fn, nd_dtype_name(rdt),
                     nd_dtype_name(out->dtype));
    if (nd_check_writable(e, fn, out)) return e->code;
  }
  for (int k = 0; k < nin; k++) expand_to(&ex[k], ts[k], nd, size);
  if (mode != ND_NEW) {
    int overlap = 0;
    for (int k = 0; k < nin; k++)
      overlap |= in[k].t && nd_may_overlap(out, &ex[k]) &&
                 !same_elements(out, &ex[k]);
    if (overlap) { /* compute aside, then copy in */
      nd_tensor tmp = ND_UNSET;
      if (nd_empty_like(e, &tmp, out, out->dtype)) return nd_err_name(e, fn);
      execute(&tmp, ex, nin, kin, kout, kernel, kctx, grain);
      nd_status s = nd_copy(e, out, &tmp);
      nd_release(&tmp);
      return s ? nd_err_name(e, fn) : ND_OK;
    }
  }
  execute(out, ex, nin, kin, kout, kernel, kctx, grain);
  return ND_OK;
}

static nd_status run(nd_err *e, const char *fn, nd_tensor *out, int mode,
                     int nin, const nd_operand *in, int rdt, const int *kin,
                     int kout, nd_loop_fn kernel, int64_t grain) {
  return nd_ew_run(e, fn, out, mode, nin, in, rdt, kin, kout, kernel, NULL,
                   grain);
}

nd_status nd_ew_check_mode(nd_err *e, const char *fn, int mode) {
  if (mode == ND_NEW || mode == ND_OUT || mode == ND_INPLACE) return ND_OK;
  return nd_fail(e, ND_EINVAL, "%s: unknown mode %d", fn, mode);
}

/* Small contiguous operands of one dtype (tensors of one shape, or a
 * tensor and a weak scalar) whose result keeps that dtype: straight to the
 * kernel, the scalar as a stride-0 operand; ND_NEW allocates the result
 * first. Per-call cost is what matters at this size (a:mul(0.016, out) and
 * pos + vel per frame). Returns 0, touching nothing, when the case is not
 * this one, else 1 with *st set. */
static int small_fast(nd_err *e, nd_tensor *out, int mode, int op,
                      const nd_operand *a, const nd_operand *b,
                      nd_status *st) {
  if ((mode != ND_OUT && mode != ND_NEW) || !(a->t || b->t) ||
      op < ND_ADD || op > ND_GE || op == ND_POW)
    return 0;
  const nd_tensor *x = a->t ? a->t : b->t, *y = a->t && b->t ? b->t : NULL;
  const nd_operand *s = y ? NULL : a->t ? b : a;
  int dt = x->dtype, odt = op >= ND_EQ ? ND_BOOL : dt;
  char kind = nd_dtype_kind(dt);
  if (!x->storage || (op == ND_DIV && kind != 'f') ||
      (op == ND_SUB && kind == 'b') || !nd_is_contiguous(x))
    return 0;
  if (y && (!y->storage || y->dtype != dt || y->ndim != x->ndim ||
            memcmp(y->size, x->size, sizeof(int64_t) * (size_t)x->ndim) ||
            !nd_is_contiguous(y)))
    return 0;
  if (s && (kind == 'b' || op >= ND_EQ ||
            !(s->dtype == ND_FLOAT64 ? kind == 'f' : s->dtype == ND_INT64)))
    return 0;
  int64_t n = nd_numel(x), es = esize(dt), eo = esize(odt);
  if (n >= grain_of(op)) return 0;
  if (mode == ND_OUT &&
      (!out->storage || out->dtype != odt || out->ndim != x->ndim ||
       memcmp(out->size, x->size, sizeof(int64_t) * (size_t)x->ndim) ||
       !nd_is_contiguous(out)))
    return 0;
  union { float f32; double f64; int32_t i32; int64_t i64; uint8_t u8; } v;
  if (s) {
    switch (dt) {
    case ND_FLOAT32: v.f32 = s->dtype == ND_FLOAT64 ? (float)s->f : (float)s->i; break;
    case ND_FLOAT64: v.f64 = s->dtype == ND_FLOAT64 ? s->f : (double)s->i; break;
    case ND_INT32: v.i32 = (int32_t)(uint32_t)s->i; break;
    case ND_INT64: v.i64 = s->i; break;
    case ND_UINT8: v.u8 = (uint8_t)s->i; break;
    default: return 0;
    }
  }
  char *px = data_of(x, es), *py = y ? data_of(y, es) : (char *)&v;
  if (mode == ND_OUT) {
    /* Contiguous: each spans [p, p + n*size); an input may be out itself. */
    char *po = data_of(out, eo);
    if ((!(po == px && es == eo) && po < px + n * es && px < po + n * eo) ||
        (y && !(po == py && es == eo) && po < py + n * es && py < po + n * eo))
      return 0;
  } else if (nd_alloc_tensor(e, out, odt, x->ndim, x->size, 0)) {
    *st = nd_err_name(e, nd_op_name_mode(op, mode)); /* mul:, not empty: */
    return 1;
  }
  *st = ND_OK;
  if (n == 0) return 1;
  char *p[3] = {data_of(out, eo), a->t ? px : py, a->t ? py : px};
  int64_t str[3] = {eo, a->t ? es : 0, b->t ? es : 0};
  nd_binary_kernels[dt][op](p, str, n, NULL);
  return 1;
}

nd_status nd_binary(nd_err *e, nd_tensor *out, int mode, int op,
                    const nd_operand *a, const nd_operand *b) {
  nd_status st;
  if (small_fast(e, out, mode, op, a, b, &st)) return st;
  if (op < ND_ADD || op > ND_GE)
    return nd_fail(e, ND_EINVAL, "binary: %d is not a binary op", op);
  const char *fn = nd_op_name_mode(op, mode);
  if (nd_ew_check_mode(e, fn, mode)) return e->code;
  nd_operand ops[2] = {*a, *b};
  int rdt = nd_result_type(e, op, 2, ops);
  if (rdt < 0) return nd_err_name(e, fn); /* sub_, not sub */
  if (op == ND_POW) {
    int done;
    nd_status st2 = nd_pow_scalar(e, out, mode, fn, a, b, rdt, &done);
    if (done) return st2;
  }
  int cmp = op >= ND_EQ;
  int ct = cmp ? nd_common_type(2, ops) : rdt;
  int kin[2] = {ct, ct};
  nd_loop_fn k = nd_binary_kernels[ct][op];
  void *kctx = NULL;
  if (op == ND_POW) nd_vmath(ND_VM_POW, ct, &k, &kctx);
  return nd_ew_run(e, fn, out, mode, 2, ops, rdt, kin, cmp ? ND_BOOL : ct, k,
                   kctx, grain_of(op));
}

/* The kernel of unary op on compute dtype ct: SLEEF's or nd's own vector
 * code when it has one (vmath.c), else the elementwise loop. */
static nd_loop_fn unary_kernel(int op, int ct, void **kctx) {
  static const int8_t vm[ND_NOPS] = {[ND_EXP] = ND_VM_EXP + 1,
      [ND_LOG] = ND_VM_LOG + 1, [ND_SIN] = ND_VM_SIN + 1,
      [ND_COS] = ND_VM_COS + 1, [ND_TANH] = ND_VM_TANH + 1,
      [ND_SIGMOID] = ND_VM_SIGMOID + 1};
  nd_loop_fn k = nd_unary_kernels[ct][op - ND_NEG];
  *kctx = NULL;
  if (vm[op]) nd_vmath(vm[op] - 1, ct, &k, kctx);
  return k;
}

/* Small and contiguous in the input's own dtype (-a, a:exp() per frame):
 * straight to the kernel, allocating a new result first. Returns 0,
 * touching nothing, when the case is not this one, else 1 with *st set. */
static int small_unary(nd_err *e, nd_tensor *out, int mode, int op,
                       const nd_tensor *a, int rdt, nd_status *st) {
  int64_t n = nd_numel(a), es = esize(a->dtype), eo = esize(rdt);
  if ((mode != ND_NEW && mode != ND_OUT) || !a->storage ||
      n >= grain_of(op) || !nd_is_contiguous(a))
    return 0;
  char *pa = data_of(a, es);
  if (mode == ND_OUT) {
    if (!out->storage || out->dtype != rdt || out->ndim != a->ndim ||
        memcmp(out->size, a->size, sizeof(int64_t) * (size_t)a->ndim) ||
        !nd_is_contiguous(out))
      return 0;
    char *po = data_of(out, eo);
    if (!((po == pa && es == eo) || po + n * eo <= pa || pa + n * es <= po))
      return 0;
  } else if (nd_alloc_tensor(e, out, rdt, a->ndim, a->size, 0)) {
    *st = nd_err_name(e, nd_op_name_mode(op, mode));
    return 1;
  }
  *st = ND_OK;
  if (n) {
    void *kctx;
    nd_loop_fn k = unary_kernel(op, a->dtype, &kctx);
    char *p[2] = {data_of(out, eo), pa};
    int64_t str[2] = {eo, es};
    k(p, str, n, kctx);
  }
  return 1;
}

nd_status nd_unary(nd_err *e, nd_tensor *out, int mode, int op,
                   const nd_tensor *a) {
  nd_status st;
  if (op < ND_NEG || op > ND_ISFINITE)
    return nd_fail(e, ND_EINVAL, "unary: %d is not a unary op", op);
  /* Float in, its own dtype out (bool for the tests): known without the
   * promotion rules, so the small case comes first. */
  if ((a->dtype == ND_FLOAT32 || a->dtype == ND_FLOAT64) &&
      small_unary(e, out, mode, op, a,
                  op == ND_ISNAN || op == ND_ISFINITE ? ND_BOOL : a->dtype, &st))
    return st;
  const char *fn = nd_op_name_mode(op, mode);
  if (nd_ew_check_mode(e, fn, mode)) return e->code;
  nd_operand oa = {a, 0, 0, 0};
  int rdt = nd_result_type(e, op, 1, &oa);
  if (rdt < 0) return nd_err_name(e, fn);
  int ct = op == ND_ISNAN || op == ND_ISFINITE ? a->dtype : rdt;
  if (ct == a->dtype && small_unary(e, out, mode, op, a, rdt, &st)) return st;
  void *kctx;
  nd_loop_fn k = unary_kernel(op, ct, &kctx);
  return nd_ew_run(e, fn, out, mode, 1, &oa, rdt, &ct, rdt, k, kctx,
                   grain_of(op));
}

/* The widest bound of dtype dt, as a weak scalar (lo: lowest). */
static nd_operand no_bound(int dt, int lo) {
  nd_operand o = {NULL, ND_INT64, 0, 0};
  switch (dt) {
  case ND_FLOAT32: case ND_FLOAT64:
    o.dtype = ND_FLOAT64;
    o.f = lo ? -INFINITY : INFINITY;
    break;
  case ND_INT32: o.i = lo ? INT32_MIN : INT32_MAX; break;
  case ND_INT64: o.i = lo ? INT64_MIN : INT64_MAX; break;
  case ND_UINT8: o.i = lo ? 0 : 255; break;
  default: o.i = lo ? 0 : 1; break;
  }
  return o;
}

nd_status nd_clamp(nd_err *e, nd_tensor *out, int mode, const nd_tensor *a,
                   const nd_operand *lo, const nd_operand *hi) {
  const char *fn = mode == ND_INPLACE ? "clamp_" : "clamp";
  if (nd_ew_check_mode(e, fn, mode)) return e->code;
  nd_operand ops[3] = {{a, 0, 0, 0}}, given[3];
  int n = 0;
  given[n++] = ops[0];
  if (lo) given[n++] = *lo;
  if (hi) given[n++] = *hi;
  int rdt = nd_common_type(n, given);
  ops[1] = lo ? *lo : no_bound(rdt, 1);
  ops[2] = hi ? *hi : no_bound(rdt, 0);
  int kin[3] = {rdt, rdt, rdt};
  return run(e, fn, out, mode, 3, ops, rdt, kin, rdt, nd_clamp_kernels[rdt],
             1 << 15);
}

nd_status nd_where(nd_err *e, nd_tensor *out, int mode, const nd_tensor *cond,
                   const nd_operand *a, const nd_operand *b) {
  const char *fn = "where";
  if (nd_ew_check_mode(e, fn, mode)) return e->code;
  if (cond->dtype != ND_BOOL)
    return nd_fail(e, ND_EINVAL, "where: the condition must be a bool "
                   "tensor, got %s", nd_dtype_name(cond->dtype));
  nd_operand ab[2] = {*a, *b};
  int rdt = nd_common_type(2, ab);
  nd_operand ops[3] = {{cond, 0, 0, 0}, *a, *b};
  int kin[3] = {ND_BOOL, rdt, rdt};
  return run(e, fn, out, mode, 3, ops, rdt, kin, rdt, nd_where_kernels[rdt],
             1 << 15);
}
