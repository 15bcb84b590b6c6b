/* The shape layer (shape/): rules on sizes, strides and dtypes that touch
 * no element -- views, broadcasting, reduced dims, result layouts, type
 * promotion, the matmul plan (matmul_plan.h). Sees base/ only. */
#ifndef ND_SHAPE_H
#define ND_SHAPE_H
#include "core.h"

/* Broadcast shape of n tensors into size/ndim, or an error naming fn and
 * the shapes (shape/dims.c). skip[k]: how many trailing dims of ts[k]
 * stay out (its matrix dims: the rest are batch dims); NULL: none. */
nd_status nd_broadcast_shape(nd_err *e, const char *fn, int n,
                             const nd_tensor *const *ts, const int *skip,
                             int *ndim, int64_t *size);
/* Which of t's dims a reduction over dims[0..ndims) takes (red[i] = 1;
 * all when dims is NULL), or an error naming fn (shape/dims.c). */
nd_status nd_reduced_mask(nd_err *e, const char *fn, const nd_tensor *t,
                          int ndims, const int *dims, int *red);
/* reshape's view half (shape/view.c): h gets t's header with size (one -1
 * inferred); 1 when it is a view of t, 0 when a copy is needed, -1 on an
 * error. */
int nd_reshape_view(nd_err *e, nd_tensor *h, const nd_tensor *t, int ndim,
                    const int64_t *size);
/* A fresh tensor laid out as PyTorch lays out an elementwise result over
 * the n operands (already broadcast to size; result_layout.c). */
nd_status nd_alloc_layout(nd_err *e, nd_tensor *out, int dtype, int ndim,
                          const int64_t *size, int n,
                          const nd_tensor *const *ops);
/* The same layout as a header only: dtype, dims and strides, no storage
 * (ND_SHAPE). */
nd_status nd_layout_of(nd_err *e, nd_tensor *out, int dtype, int ndim,
                       const int64_t *size, int n,
                       const nd_tensor *const *ops);
/* Promotion (promote.c): the common dtype of the operands (PyTorch's
 * categories: dimensioned tensors, then 0-d tensors, then weak scalars). */
int nd_common_type(int n, const nd_operand *ops);
int nd_can_cast(int from, int to); /* PyTorch's canCast */
const char *nd_op_name_mode(int op, int mode); /* "add_" when in place */

#endif
