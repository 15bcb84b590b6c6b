/* Private to the elementwise and reduction files: the kernel tables. A
 * kernel is an nd_loop_fn whose operands (0: output, then the inputs) all
 * have the kernel's dtypes; the driver in elementwise.c converts around it
 * when the tensors' dtypes differ. */
#ifndef ND_ELEMENTWISE_H
#define ND_ELEMENTWISE_H
#include "kernels.h"

/* Element sizes by dtype, inline (the small fast paths count bytes). */
static const int8_t esizes[ND_NDTYPES] = {
#define ES(E, name, T, kind) [ND_##E] = sizeof(T),
    ND_DTYPES(ES)
#undef ES
};
static inline int64_t esize(int dt) { return esizes[dt]; }

/* A copy of the operand *s read field by field. The FFI fills operands
 * one field at a time, and the 16-byte loads a struct copy compiles to
 * wait for those narrower stores to retire (perf put a third of
 * nd_math_binary's time on one): the barrier keeps the loads apart. */
static inline nd_operand nd_opnd(const nd_operand *s) {
  const nd_tensor *t = s->t;
  int64_t dt = s->dtype, i = s->i;
  double f = s->f;
  __asm__("" : "+r"(t), "+r"(dt), "+r"(i), "+x"(f));
  return (nd_operand){t, (int)dt, f, i};
}
/* ND_SHAPE of a small case (of x's shape, n elements of bytes in all): a
 * new result is row-major, of x's dims (only the fields a header uses are
 * written: a whole one is 560 bytes). 1 when out's storage (the caller's
 * scratch) holds its bytes: computed there then; else out's storage is
 * set NULL (the shape only). */
static inline int nd_shape_into(nd_tensor *out, int dt, const nd_tensor *x,
                                int64_t bytes) {
  int64_t s = 1;
  out->offset = 0;
  out->dtype = dt;
  out->ndim = x->ndim;
  for (int i = x->ndim - 1; i >= 0; i--) {
    out->size[i] = x->size[i];
    out->stride[i] = s;
    s *= x->size[i];
  }
  if (out->storage && out->storage->nbytes >= bytes) return 1;
  out->storage = NULL;
  return 0;
}
static inline char *data_of(const nd_tensor *t, int64_t es) {
  return (char *)t->storage->data + t->offset * es;
}

/* Binary ops and comparisons: [compute dtype][op]; comparisons write bool. */
extern const nd_loop_fn nd_binary_kernels[ND_NDTYPES][ND_GE + 1];
/* Unary ops: [dtype][op - ND_NEG]; isnan/isfinite write bool. */
extern const nd_loop_fn nd_unary_kernels[ND_NDTYPES][ND_ISFINITE - ND_NEG + 1];
/* out, x, lo, hi: min(max(x, lo), hi). */
extern const nd_loop_fn nd_clamp_kernels[ND_NDTYPES];
/* out, cond (bool), a, b. */
extern const nd_loop_fn nd_where_kernels[ND_NDTYPES];

/* The driver (elementwise.c): promote-free part of every elementwise op.
 * in[0..nin) are broadcast into out (allocated when mode is ND_NEW, with
 * dtype rdt), converted to the kernel's dtypes kin[] / kout around
 * kernel(data, strides, n, kctx), split across threads above grain. */
nd_status nd_ew_run(nd_err *e, const char *fn, nd_tensor *out, int mode,
                    int nin, const nd_operand *in, int rdt, const int *kin,
                    int kout, nd_loop_fn kernel, void *kctx, int64_t grain);
nd_status nd_ew_check_mode(nd_err *e, const char *fn, int mode);
/* pow of tensor a by a scalar or 0-d b (elementwise_math.c): x*x, sqrt,
 * 1/x ... for the exponents that have one, with *done set; *done stays 0
 * when the generic kernel should run. An integer result with a negative
 * Lua-number exponent fails (PyTorch's and NumPy's rule). */
nd_status nd_pow_scalar(nd_err *e, nd_tensor *out, int mode, const char *fn,
                        const nd_operand *a, const nd_operand *b, int rdt,
                        int *done);

/* SLEEF's vector math (vmath.c): when a vector kernel exists for function
 * id on float dtype dt, sets *kernel and its *ctx and returns 1. */
enum {
  ND_VM_EXP, ND_VM_LOG, ND_VM_SIN, ND_VM_COS, ND_VM_TANH, ND_VM_SIGMOID,
  ND_VM_LOG1P, ND_VM_EXPM1, ND_VM_LOG2, ND_VM_LOG10, ND_VM_EXP2, ND_VM_TAN,
  ND_VM_ASIN, ND_VM_ACOS, ND_VM_ATAN, ND_VM_SINH, ND_VM_COSH, ND_VM_ASINH,
  ND_VM_ACOSH, ND_VM_ATANH, ND_VM_ERF, ND_VM_ERFC, ND_VM_LGAMMA,
  ND_VM_POW, ND_VM_ATAN2, ND_VM_HYPOT, ND_VM_N
};
int nd_vmath(int id, int dt, nd_loop_fn *kernel, void **ctx);

/* NaN test that compiles (to 0) for integer types, without tautology
 * warnings. */
static inline int nd_nan_f(float x) { return x != x; }
static inline int nd_nan_d(double x) { return x != x; }
static inline int nd_nan_i(int64_t x) { (void)x; return 0; }
#define NANQ(x)                                                             \
  _Generic((x), float: nd_nan_f, double: nd_nan_d, default: nd_nan_i)(x)
#endif
