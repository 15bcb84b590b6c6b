/* Transposing copy, cache-blocked: dst[i*dld + j] = src[j*sld + i]. */
#include "core.h"

enum { TILE = 32 };

#define TRANSPOSE_BLOCKED(T)                                                \
  static void transpose_##T(T *dst, const T *src, int64_t rows,             \
                            int64_t cols, int64_t dld, int64_t sld) {       \
    for (int64_t i0 = 0; i0 < rows; i0 += TILE)                             \
      for (int64_t j0 = 0; j0 < cols; j0 += TILE) {                         \
        int64_t i1 = i0 + TILE < rows ? i0 + TILE : rows;                   \
        int64_t j1 = j0 + TILE < cols ? j0 + TILE : cols;                   \
        for (int64_t i = i0; i < i1; i++)                                   \
          for (int64_t j = j0; j < j1; j++)                                 \
            dst[i * dld + j] = src[j * sld + i];                            \
      }                                                                     \
  }
TRANSPOSE_BLOCKED(uint8_t)
TRANSPOSE_BLOCKED(uint32_t)
TRANSPOSE_BLOCKED(uint64_t)

void nd_transpose_copy(void *dst, const void *src, int64_t rows,
                       int64_t cols, int64_t dld, int64_t sld, int esize) {
  switch (esize) {
  case 1: transpose_uint8_t(dst, src, rows, cols, dld, sld); break;
  case 4: transpose_uint32_t(dst, src, rows, cols, dld, sld); break;
  default: transpose_uint64_t(dst, src, rows, cols, dld, sld); break;
  }
}
