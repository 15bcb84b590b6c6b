/* The elementwise driver: every op goes through nd_ew_run(). It promotes,
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

/* CHUNK: elements per conversion buffer. 2048 (8 KB of float32 per
 * operand, still in L1) rather than 256: float16 exp and add of 1 M spent
 * ~20% of their time in the per-block calls (nd_convert's dispatch, the
 * kernel's set-up) at 256; the 4 x 16 KB of stack is the cost. */
enum { CHUNK = 2048, T0 = 256, T1 = 64 };

/* A borrowed header of src seen with shape (nd, size): stride 0 on the
 * broadcast dims. */
static void expand_to(nd_tensor *dst, const nd_tensor *src, int nd,
                      const int64_t *size) {
  dst->storage = src->storage; /* not *dst = *src: the unused dims too */
  dst->offset = src->offset;
  dst->dtype = src->dtype;
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
  c->st = (nd_storage){&c->v, sizeof c->v, 1, NULL, NULL, 0};
  c->t.storage = &c->st; /* 0-d: nothing reads its dims */
  c->t.offset = 0;
  c->t.dtype = dt;
  c->t.ndim = 0;
}

/* A call into out (or in place) of fewer elements than a task's, where
 * out and every tensor operand are contiguous, of out's shape, in the
 * kernel's dtypes, and each either out itself or apart from it: the
 * kernel at once, scalars converted on the stack. At this size the
 * per-call work of nd_ew_run (broadcasting, overlap checks, iteration)
 * is the whole cost. 0 when the call is not one: the general path. A
 * contiguous out has no element twice, so it is writable. */
static int small_run(nd_tensor *out, int mode, int nin, const nd_operand *in,
                     int rdt, const int *kin, int kout, nd_loop_fn kernel,
                     void *kctx, int64_t grain) {
  if ((mode != ND_OUT && mode != ND_INPLACE) || !out || !out->storage ||
      out->dtype != kout || rdt != kout || !nd_is_contiguous(out) ||
      nd_readonly(out)) /* the general path refuses it */
    return 0;
  int64_t n = nd_numel(out), eo = esize(kout);
  if (n == 0 || n >= grain) return 0;
  union { double f; int64_t i; char b[8]; } v[ND_ITER_MAXOPS - 1];
  char *p[ND_ITER_MAXOPS], *po = nd_data(out);
  int64_t st[ND_ITER_MAXOPS];
  p[0] = po;
  st[0] = eo;
  for (int k = 0; k < nin; k++) {
    const nd_tensor *x = in[k].t;
    if (!x) {
      int isf = in[k].dtype == ND_FLOAT64;
      nd_convert(kin[k], v[k].b, 0, isf ? ND_FLOAT64 : ND_INT64,
                 isf ? (const char *)&in[k].f : (const char *)&in[k].i, 0, 1);
      p[k + 1] = v[k].b;
      st[k + 1] = 0;
      continue;
    }
    if (!x->storage || x->dtype != kin[k] || x->ndim != out->ndim)
      return 0;
    for (int i = 0; i < x->ndim; i++) /* a few dims: no memcmp call */
      if (x->size[i] != out->size[i]) return 0;
    if (!nd_is_contiguous(x)) return 0;
    char *px = nd_data(x);
    int64_t ex = esize(x->dtype);
    if (!(px == po && ex == eo) && px < po + n * eo && po < px + n * ex)
      return 0; /* a partial overlap: computed aside by the general path */
    p[k + 1] = px;
    st[k + 1] = ex;
  }
  kernel(p, st, n, kctx);
  return 1;
}

/* ND_SHAPE of a call whose tensor operands are contiguous, of one shape,
 * in the kernel's dtypes (scalars aside), fewer elements than a task's:
 * the result is row-major of that shape, known without broadcasting or
 * ordering dims, and computed at once into the scratch that holds it
 * (small_run). 0 when the call is not one (out's storage as it came). */
static int small_shape(nd_tensor *out, int nin, const nd_operand *in,
                       int rdt, const int *kin, int kout, nd_loop_fn kernel,
                       void *kctx, int64_t grain) {
  const nd_tensor *s = NULL;
  if (rdt != kout) return 0;
  for (int k = 0; k < nin; k++) {
    const nd_tensor *x = in[k].t;
    if (!x) continue;
    if (!s) s = x;
    if (!x->storage || x->dtype != kin[k] || x->ndim != s->ndim) return 0;
    for (int i = 0; i < x->ndim; i++)
      if (x->size[i] != s->size[i]) return 0;
    if (!nd_is_contiguous(x)) return 0;
  }
  int64_t n = s ? nd_numel(s) : 0;
  if (!s || n == 0 || n >= grain) return 0;
  if (!nd_shape_into(out, kout, s, n * esize(kout))) return 1;
  return small_run(out, ND_OUT, nin, in, rdt, kin, kout, kernel, kctx, grain);
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
  /* Fewer elements than a task's and every operand contiguous (or one
   * value broadcast) in the kernel's dtypes: the kernel at once, as
   * nd_binary's small case does for its ops -- at this size the per-call
   * cost is all there is. */
  if (n < grain && dst->dtype == kout && nd_is_contiguous(dst)) {
    char *p[ND_ITER_MAXOPS];
    int64_t st[ND_ITER_MAXOPS];
    int ok = 1;
    p[0] = nd_data(dst);
    st[0] = esize(kout);
    for (int k = 0; k < nin && ok; k++) {
      const nd_tensor *x = &ex[k];
      int zero = 1;
      for (int i = 0; i < x->ndim; i++) zero &= x->stride[i] == 0 || x->size[i] == 1;
      ok = x->dtype == kin[k] && (zero || nd_is_contiguous(x));
      p[k + 1] = nd_data(x);
      st[k + 1] = zero && n > 1 ? 0 : esize(x->dtype);
    }
    if (ok) {
      kernel(p, st, n, kctx);
      return;
    }
  }
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

/* float16 / bfloat16 in kin[] or kout: the kernel is float32's. Tensor
 * operands (with dims) of another dtype are first rounded into that dtype
 * (PyTorch's cast to the common dtype: int32 100000 * a float16 tensor is
 * inf); scalars and 0-d tensors are not (PyTorch's CPU scalars: float16 3
 * * (1/3) is 1). Then the driver converts blocks to and from float32. */
static nd_status half_run(nd_err *e, const char *fn, nd_tensor *out,
                          int mode, int nin, const nd_operand *in, int rdt,
                          const int *kin, int kout, nd_loop_fn kernel,
                          void *kctx, int64_t grain) {
  nd_operand ops[ND_ITER_MAXOPS - 1];
  nd_tensor tmp[ND_ITER_MAXOPS - 1];
  int ak[ND_ITER_MAXOPS - 1];
  nd_status st = ND_OK;
  for (int k = 0; k < nin; k++) {
    const nd_tensor *x = in[k].t;
    ops[k] = in[k];
    ak[k] = nd_compute_dtype(kin[k]);
    tmp[k].storage = NULL;
    if (x && x->storage && x->ndim > 0 && nd_is_half(kin[k]) &&
        x->dtype != kin[k] && x->dtype != ND_BOOL) {
      if ((st = nd_to_dtype(e, &tmp[k], x, kin[k]))) break;
      ops[k].t = &tmp[k];
      ops[k].dtype = kin[k];
    }
  }
  if (!st)
    st = nd_ew_run(e, fn, out, mode, nin, ops, rdt, ak,
                   nd_compute_dtype(kout), kernel, kctx, grain);
  for (int k = 0; k < nin; k++)
    if (tmp[k].storage) nd_release(&tmp[k]);
  return st ? nd_err_name(e, fn) : ND_OK;
}

nd_status nd_ew_run(nd_err *e, const char *fn, nd_tensor *out, int mode,
                    int nin, const nd_operand *in, int rdt, const int *kin,
                    int kout, nd_loop_fn kernel, void *kctx, int64_t grain) {
  for (int k = 0; k < nin; k++)
    if (nd_is_half(kin[k]) || (k == 0 && nd_is_half(kout)))
      return half_run(e, fn, out, mode, nin, in, rdt, kin, kout, kernel,
                      kctx, grain);
  cell cells[ND_ITER_MAXOPS - 1];
  const nd_tensor *ts[ND_ITER_MAXOPS - 1];
  nd_tensor ex[ND_ITER_MAXOPS - 1];
  char b1[ND_SIZES_BUF], b2[ND_SIZES_BUF];
  int nd;
  int64_t size[ND_MAX_DIMS];
  if (small_run(out, mode, nin, in, rdt, kin, kout, kernel, kctx, grain) ||
      (mode == ND_SHAPE &&
       small_shape(out, nin, in, rdt, kin, kout, kernel, kctx, grain)))
    return ND_OK;
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
  if (nd_broadcast_shape(e, fn, nin, ts, NULL, &nd, size)) return e->code;
  if (mode == ND_NEW || mode == ND_SHAPE) {
    const nd_tensor *exs[ND_ITER_MAXOPS - 1];
    for (int k = 0; k < nin; k++) {
      expand_to(&ex[k], ts[k], nd, size);
      exs[k] = &ex[k];
    }
    if (mode == ND_SHAPE) { /* the layout, and into the scratch if any */
      nd_storage *sc = out->storage;
      if (nd_layout_of(e, out, rdt, nd, size, nin, exs))
        return nd_err_name(e, fn);
      int64_t n = nd_numel(out);
      if (!sc || n == 0 || n > sc->nbytes / esize(rdt)) return ND_OK;
      out->storage = sc;
      mode = ND_OUT;
      if (small_run(out, mode, nin, in, rdt, kin, kout, kernel, kctx, grain))
        return ND_OK;
    } else if (nd_alloc_layout(e, out, rdt, nd, size, nin, exs)) {
      return nd_err_name(e, fn);
    }
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

nd_status nd_ew_check_mode(nd_err *e, const char *fn, int mode) {
  if (mode >= ND_NEW && mode <= ND_SHAPE) return ND_OK;
  return nd_fail(e, ND_EINVAL, "%s: unknown mode %d", fn, mode);
}
