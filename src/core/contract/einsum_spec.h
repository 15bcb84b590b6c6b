/* Internal to einsum: a spec read against its operands (einsum_spec.c),
 * the input of the planner (einsum_plan.c). */
#ifndef ND_EINSUM_SPEC_H
#define ND_EINSUM_SPEC_H

#include "kernels.h"

/* Labels: 'A'..'Z' are 0..25, 'a'..'z' 26..51 (ASCII order, the implicit
 * output's), the dims under "..." 52.. (right-aligned across operands). */
#define ND_ELL 52
#define ND_LABELS (ND_ELL + ND_MAX_DIMS)

typedef struct nd_einsum_expr {
  int nops, nout, nell;                         /* nell: the ... dims */
  int nlab[ND_EINSUM_MAX_OPERANDS];             /* = the operand's ndim */
  signed char lab[ND_EINSUM_MAX_OPERANDS][ND_MAX_DIMS];
  signed char out[ND_MAX_DIMS];
  int64_t size[ND_LABELS]; /* the label's size (1 only if 1 everywhere) */
  char name[ND_LABELS];    /* the letter a plan prints for it */
} nd_einsum_expr;

/* Reads spec against the n operands: every label of every dim, the output,
 * each label's size; an error quotes the spec and points at the part. */
nd_status nd_einsum_parse(nd_err *e, nd_einsum_expr *x, const char *spec,
                          int n, const nd_tensor *const *ops);

#endif
