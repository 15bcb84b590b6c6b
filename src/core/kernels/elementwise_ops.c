/* The basic elementwise ops (binary ops and comparisons, unary ops,
 * clamp, where): promotion, the small contiguous fast paths, then the
 * driver (elementwise.c). pow by a scalar tries elementwise_math.c's
 * kernels first. */
#include "elementwise.h"
#include <math.h>

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

static nd_status run(nd_err *e, const char *fn, nd_tensor *out, int mode,
                     int nin, const nd_operand *in, int rdt, const int *kin,
                     int kout, nd_loop_fn kernel, int64_t grain) {
  return nd_ew_run(e, fn, out, mode, nin, in, rdt, kin, kout, kernel, NULL,
                   grain);
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
  if (mode < ND_NEW || mode > ND_SHAPE || !(a->t || b->t) ||
      op < ND_ADD || op > ND_GE || op == ND_POW)
    return 0;
  const nd_tensor *x = a->t ? a->t : b->t, *y = a->t && b->t ? b->t : NULL;
  const nd_operand *s = y ? NULL : a->t ? b : a;
  int dt = x->dtype, odt = op >= ND_EQ ? ND_BOOL : dt;
  char kind = nd_dtype_kind(dt);
  if (!x->storage || nd_is_half(dt) || (op == ND_DIV && kind != 'f') ||
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
  if (mode == ND_SHAPE) {
    *st = ND_OK;
    if (!nd_shape_into(out, odt, x, n * eo)) return 1;
  } else if (mode != ND_NEW && /* in place: the written dtype's result only */
      (!out->storage || out->dtype != odt || out->ndim != x->ndim ||
       memcmp(out->size, x->size, sizeof(int64_t) * (size_t)x->ndim) ||
       !nd_is_contiguous(out) || nd_readonly(out))) /* general path refuses */
    return 0;
  union { float f32; double f64; int64_t i64; } v;
  if (s) {
    switch (dt) {
    case ND_FLOAT32: v.f32 = s->dtype == ND_FLOAT64 ? (float)s->f : (float)s->i; break;
    case ND_FLOAT64: v.f64 = s->dtype == ND_FLOAT64 ? s->f : (double)s->i; break;
    default: /* an integer: wraps into the dtype, as integer ops do */
      nd_convert(dt, (char *)&v, 0, ND_INT64, (const char *)&s->i, 0, 1);
    }
  }
  char *px = data_of(x, es), *py = y ? data_of(y, es) : (char *)&v;
  if (mode != ND_NEW) {
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
  nd_operand ops[2] = {nd_opnd(a), nd_opnd(b)};
  int rdt = nd_result_type(e, op, 2, ops);
  if (rdt < 0) return nd_err_name(e, fn); /* sub_, not sub */
  if (op == ND_POW) {
    int done;
    nd_status st2 = nd_pow_scalar(e, out, mode, fn, a, b, rdt, &done);
    if (done) return st2;
  }
  int cmp = op >= ND_EQ;
  int ct = cmp ? nd_common_type(2, ops) : rdt, kt = nd_compute_dtype(ct);
  int kin[2] = {ct, ct}; /* float16, bfloat16: float32's kernel */
  nd_loop_fn k = nd_binary_kernels[kt][op];
  void *kctx = NULL;
  if (op == ND_POW) nd_vmath(ND_VM_POW, kt, &k, &kctx);
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
  if (mode < ND_NEW || mode > ND_SHAPE || !a->storage ||
      n >= grain_of(op) || !nd_is_contiguous(a))
    return 0;
  if (mode == ND_SHAPE) {
    *st = ND_OK;
    if (!nd_shape_into(out, rdt, a, n * eo)) return 1;
  }
  char *pa = data_of(a, es);
  if (mode != ND_NEW) { /* in place: a result of the written dtype only */
    if (mode != ND_SHAPE &&
        (!out->storage || out->dtype != rdt || out->ndim != a->ndim ||
         memcmp(out->size, a->size, sizeof(int64_t) * (size_t)a->ndim) ||
         !nd_is_contiguous(out) || nd_readonly(out)))
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
  if (ct == a->dtype && !nd_is_half(ct) &&
      small_unary(e, out, mode, op, a, rdt, &st))
    return st;
  void *kctx;
  nd_loop_fn k = unary_kernel(op, nd_compute_dtype(ct), &kctx);
  return nd_ew_run(e, fn, out, mode, 1, &oa, rdt, &ct, rdt, k, kctx,
                   grain_of(op));
}

/* The widest bound of dtype dt, as a weak scalar (lo: lowest). */
static nd_operand no_bound(int dt, int lo) {
  nd_operand o = {NULL, ND_INT64, 0, 0};
  switch (dt) {
  case ND_FLOAT32: case ND_FLOAT64: case ND_FLOAT16: case ND_BFLOAT16:
    o.dtype = ND_FLOAT64;
    o.f = lo ? -INFINITY : INFINITY;
    break;
  default: { /* uint64's top travels as -1, its bits */
    int64_t min;
    uint64_t max;
    nd_dtype_bounds(dt, &min, &max);
    o.i = lo ? min : (int64_t)max;
  }
  }
  return o;
}

nd_status nd_clamp(nd_err *e, nd_tensor *out, int mode, const nd_tensor *a,
                   const nd_operand *lo, const nd_operand *hi) {
  const char *fn = mode == ND_INPLACE ? "clamp_" : "clamp";
  if (nd_ew_check_mode(e, fn, mode)) return e->code;
  /* Built in place (struct copies of fresh operands stall: nd_opnd). */
  nd_operand ops[3] = {{a, 0, 0, 0}};
  int n = 1;
  if (lo) ops[n++] = nd_opnd(lo);
  if (hi) ops[n++] = nd_opnd(hi);
  int rdt = nd_common_type(n, ops);
  if (!lo) ops[2] = nd_opnd(hi), ops[1] = no_bound(rdt, 1);
  else if (!hi) ops[2] = no_bound(rdt, 0);
  int kt = nd_compute_dtype(rdt), kin[3] = {rdt, rdt, rdt};
  return run(e, fn, out, mode, 3, ops, rdt, kin, rdt, nd_clamp_kernels[kt],
             1 << 15);
}

nd_status nd_where(nd_err *e, nd_tensor *out, int mode, const nd_tensor *cond,
                   const nd_operand *a, const nd_operand *b) {
  const char *fn = "where";
  if (nd_ew_check_mode(e, fn, mode)) return e->code;
  if (cond->dtype != ND_BOOL)
    return nd_fail(e, ND_EINVAL, "where: the condition must be a bool "
                   "tensor, got %s", nd_dtype_name(cond->dtype));
  nd_operand ops[3] = {{cond, 0, 0, 0}, nd_opnd(a), nd_opnd(b)};
  int rdt = nd_common_type(2, ops + 1);
  int kt = nd_compute_dtype(rdt), kin[3] = {ND_BOOL, rdt, rdt};
  return run(e, fn, out, mode, 3, ops, rdt, kin, rdt, nd_where_kernels[kt],
             1 << 15);
}
