/*
 * DLPack exchange for nd: hand a tensor to another framework, or take one
 * from it, without copying elements.
 *
 * DLPack (https://dmlc.github.io/dlpack) describes a strided tensor as
 * (data, device, ndim, dtype, shape, strides, byte_offset), strides in
 * elements, as nd does. A DLManagedTensor adds a deleter that its consumer
 * calls exactly once when done. The types below follow the published
 * specification (ABI of version 0.8); when the host already included
 * DLPack's own dlpack.h they are taken from there instead, and when this
 * header comes first, a later dlpack.h is skipped through its guard.
 *
 *     DLManagedTensor *m;
 *     if (nd_to_dlpack(&e, &t, &m)) ...;   // m shares t's storage
 *     other_framework_take(m);             // it calls m->deleter(m) later
 *
 *     nd_tensor u = ND_UNSET;
 *     if (nd_from_dlpack(&e, &u, m)) ...;  // on failure the caller still
 *     ...                                  // owns m; on success nd does,
 *     nd_release(&u);                      // and calls m->deleter once the
 *                                          // last view of u is released
 */
#ifndef ND_DLPACK_H
#define ND_DLPACK_H

#include "nd.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_ /* a later #include <dlpack/dlpack.h> is skipped */
#define DLPACK_VERSION 80

typedef enum {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16
} DLDeviceType;

typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;

typedef enum {
  kDLInt = 0U,
  kDLUInt = 1U,
  kDLFloat = 2U,
  kDLOpaqueHandle = 3U,
  kDLBfloat = 4U,
  kDLComplex = 5U,
  kDLBool = 6U
} DLDataTypeCode;

typedef struct {
  uint8_t code;   /* a DLDataTypeCode */
  uint8_t bits;   /* of one lane */
  uint16_t lanes; /* 1 for scalars */
} DLDataType;

typedef struct {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides; /* in elements; NULL means compact row-major */
  uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;
#endif /* DLPACK_DLPACK_H_ */

#if defined(__GNUC__)
#pragma GCC visibility push(default) /* exported, as nd.h's */
#endif
/* A DLManagedTensor viewing t's elements (it holds a reference to t's
 * storage until its deleter runs; the shape and strides it points to live
 * as long as it does). Bool exports as kDLBool, 8 bits. */
nd_status nd_to_dlpack(nd_err *e, const nd_tensor *t, DLManagedTensor **out);
/* out (unset) views m's elements without copying. CPU memory only (kDLCPU
 * or kDLCUDAHost), one lane, dtypes float32/64, int32/64, uint8 and bool
 * (kDLBool, 8 bits). On success nd owns m and calls m->deleter(m)
 * once, when the last header on the storage is released; on failure m is
 * left to the caller. */
nd_status nd_from_dlpack(nd_err *e, nd_tensor *out, DLManagedTensor *m);
#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
