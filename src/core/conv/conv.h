/* Internal to the convolution files (conv_plan.c decides, conv.c follows). */
#ifndef ND_CONV_H
#define ND_CONV_H
#include "kernels.h"

/* nd_conv_plan under the name of the function the user called. */
nd_status nd_conv_plan_as(nd_err *e, const char *fn, nd_conv_path *p,
                          int nsp, const nd_tensor *x, const nd_tensor *w,
                          const nd_tensor *bias, const nd_conv_options *o);
const char *nd_conv_name(int nsp); /* "conv1d" .. "conv3d" */
/* w as (O, C/groups * kernel), x as (N, C, S) or (C, S): 1 when a view. */
int nd_conv_weight_view(nd_tensor *h, const nd_tensor *w);
int nd_conv_input_view(nd_tensor *h, const nd_tensor *x, int nsp);

#endif
