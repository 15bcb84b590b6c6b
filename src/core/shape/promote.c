/* PyTorch's type promotion for elementwise ops, with float64 as the
 * default float. Operands fall in three priority categories: tensors with
 * dims, 0-d tensors, and weak scalars (Lua numbers). A lower category only
 * matters when it is of a higher kind (bool < integer < float): int32 * 2
 * stays int32, int32 * 2.5 is float64, float32 + float64 0-d stays
 * float32, bool + 3 is int64. */
#include "shape.h"

#define NAME(E, name, arity, cls, unused) #name,
static const char *const op_names[ND_NOPS] = {ND_OPS(NAME, 0)};
#undef NAME
/* In-place forms, spelled out so that naming an op costs nothing. */
#define NAME(E, name, arity, cls, unused) #name "_",
static const char *const inplace_names[ND_NOPS] = {ND_OPS(NAME, 0)};
#undef NAME
#define CLASS(E, name, arity, cls, unused) #cls[0],
static const char classes[ND_NOPS] = {ND_OPS(CLASS, 0)};
#undef CLASS

const char *nd_op_name(int op) {
  return op >= 0 && op < ND_NOPS ? op_names[op] : "?";
}
const char *nd_op_name_mode(int op, int mode) {
  return op >= 0 && op < ND_NOPS
             ? (mode == ND_INPLACE ? inplace_names : op_names)[op] : "?";
}

static int kind_rank(int dt) {
  char k = nd_dtype_kind(dt);
  return k == 'f' ? 2 : k == 'b' ? 0 : 1;
}

static int promote(int a, int b) {
  return a < 0 ? b : b < 0 ? a : nd_promote_types(a, b);
}

/* c10's combine_categories: the higher category wins unless the lower one
 * is of a higher kind (or the higher one is bool). */
static int combine(int higher, int lower) {
  if (higher < 0) return lower;
  if (lower < 0 || nd_dtype_kind(higher) == 'f') return higher;
  if (higher == ND_BOOL || kind_rank(lower) > kind_rank(higher))
    return promote(higher, lower);
  return higher;
}

int nd_common_type(int n, const nd_operand *ops) {
  int dimmed = -1, zero = -1, weak = -1;
  for (int k = 0; k < n; k++) {
    const nd_operand *o = &ops[k];
    if (!o->t) weak = promote(weak, o->dtype);
    else if (o->t->ndim == 0) zero = promote(zero, o->t->dtype);
    else dimmed = promote(dimmed, o->t->dtype);
  }
  return combine(dimmed, combine(zero, weak));
}

int nd_can_cast(int from, int to) {
  int kf = kind_rank(from), kt = kind_rank(to);
  return kf <= kt || (kt == 1 && kf == 1); /* no float->int, no ->bool */
}

static int floating(int dt) {
  return nd_dtype_kind(dt) == 'f' ? dt : ND_FLOAT64;
}

int nd_result_type(nd_err *e, int op, int n, const nd_operand *ops) {
  if (op < 0 || op >= ND_NOPS)
    return nd_fail(e, ND_EINVAL, "result_type: %d is not an op", op), -1;
  int c = nd_common_type(n, ops);
  if (c < 0)
    return nd_fail(e, ND_EINVAL, "%s: expected at least one tensor operand",
                   nd_op_name(op)), -1;
  switch (op) {
  case ND_SUB: /* PyTorch refuses a bool on either side, not just both */
    for (int k = 0; k < n; k++)
      if ((ops[k].t ? ops[k].t->dtype : ops[k].dtype) == ND_BOOL)
        return nd_fail(e, ND_EINVAL, "sub: subtraction with a bool operand "
                       "is not supported (use ne for a logical xor, or "
                       "convert the bool first)"), -1;
    return c;
  case ND_NEG:
    if (c == ND_BOOL)
      return nd_fail(e, ND_EINVAL, "neg: negation of a bool tensor is not "
                     "supported (use eq(t, false), the logical not)"), -1;
    return c;
  default: /* the op's class (ND_OPS) */
    return classes[op] == 'F' ? floating(c) : classes[op] == 'B' ? ND_BOOL : c;
  }
}
