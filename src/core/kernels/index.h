/* Internal to the C core: helpers shared by index.c and mask.c. */
#ifndef ND_INDEX_H
#define ND_INDEX_H
#include "kernels.h"

/* *tmp becomes src as `dtype`, in memory that does not overlap t: src's
 * own header (a new reference) when possible, else a fresh copy. */
nd_status nd_prepare_source(nd_err *e, nd_tensor *tmp, const nd_tensor *src,
                            int dtype, const nd_tensor *t);
#endif
