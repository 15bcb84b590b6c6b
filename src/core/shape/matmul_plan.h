/* Internal to the matmul files: the one function that decides a plan. */
#ifndef ND_MATMUL_PLAN_H
#define ND_MATMUL_PLAN_H

#include "shape.h"

/* Fills p for out = a @ b, or fails naming fn. out may be NULL (a fresh
 * row-major result) or a set header (checked: shape, dtype, writable).
 * dtype < 0 computes in the promotion of a and b (addmm passes its own). */
nd_status nd_plan_matmul(nd_err *e, const char *fn, nd_blas_plan *p,
                         const nd_tensor *a, const nd_tensor *b,
                         const nd_tensor *out, int dtype);

#endif
