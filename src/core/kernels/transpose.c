/* Transposing copy: dst[i*dld + j] = src[j*sld + i] (strides in elements).
 *
 * The matrix is walked in BLOCK x BLOCK blocks (both sides' lines stay in
 * cache while a block is done) made of square tiles transposed in
 * registers: 16x16 (4-byte) or 8x8 (8-byte) with AVX-512, 8x8 or 4x4 with
 * AVX2, 16x16 bytes with SSE2 (baseline on x86-64). Edges that do not fill
 * a tile go through the scalar loop, which is also the portable fallback.
 * A large, aligned destination is written with streaming stores: it would
 * only evict the source from the cache. The SIMD path is picked at run time
 * (__builtin_cpu_supports); nothing is compiled for the build machine. */
#include "kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ND_X86 1
#else
#define ND_X86 0
#endif

enum { BLOCK = 64 };                       /* elements per block side */
#ifndef STREAM_MIN
#define STREAM_MIN ((int64_t)4 << 20) /* bytes of destination */
#endif

/* A T x T tile: d rows are dld bytes apart, s rows sld bytes apart. */
typedef void (*tile_fn)(char *d, int64_t dld, const char *s, int64_t sld,
                        int stream);

/* Scalar transposing copy of a rows x cols part (byte strides). */
#define SCALAR(T)                                                           \
  static void scalar_##T(char *d, int64_t dld, const char *s, int64_t sld,  \
                         int64_t rows, int64_t cols) {                      \
    for (int64_t i = 0; i < rows; i++) {                                    \
      T *dr = (T *)(d + i * dld);                                           \
      const char *sc = s + i * (int64_t)sizeof(T);                          \
      for (int64_t j = 0; j < cols; j++) dr[j] = *(const T *)(sc + j * sld); \
    }                                                                       \
  }
SCALAR(uint8_t)
SCALAR(uint16_t)
SCALAR(uint32_t)
SCALAR(uint64_t)

static void scalar_part(char *d, int64_t dld, const char *s, int64_t sld,
                        int64_t rows, int64_t cols, int es) {
  if (rows <= 0 || cols <= 0) return;
  switch (es) {
  case 1: scalar_uint8_t(d, dld, s, sld, rows, cols); break;
  case 2: scalar_uint16_t(d, dld, s, sld, rows, cols); break;
  case 4: scalar_uint32_t(d, dld, s, sld, rows, cols); break;
  default: scalar_uint64_t(d, dld, s, sld, rows, cols); break;
  }
}

/* The L-shaped rest of a rows x cols transpose whose first ti rows x tj
 * columns are done: tiles again, placed flush with the last row or column
 * so that they overlap work already done (rewriting the same values),
 * ordinary stores; only a side shorter than one tile is left to
 * scalar_part. */
static void edges(char *dst, const char *src, int64_t rows, int64_t cols,
                  int64_t dld, int64_t sld, int es, int th, int tw,
                  tile_fn fn, int64_t ti, int64_t tj) {
  if (tj < cols) { /* columns tj.. of rows 0..ti */
    if (cols >= tw) {
      int64_t j = cols - tw;
      for (int64_t i = 0; i < ti; i += th)
        fn(dst + i * dld + j * es, dld, src + j * sld + i * es, sld, 0);
    } else {
      scalar_part(dst + tj * es, dld, src + tj * sld, sld, ti, cols - tj, es);
    }
  }
  if (ti < rows) { /* rows ti.. of every column */
    if (rows >= th && cols >= tw) {
      int64_t i = rows - th;
      for (int64_t j = 0; j < tj; j += tw)
        fn(dst + i * dld + j * es, dld, src + j * sld + i * es, sld, 0);
      if (tj < cols)
        fn(dst + i * dld + (cols - tw) * es, dld,
           src + (cols - tw) * sld + i * es, sld, 0);
    } else {
      scalar_part(dst + ti * dld, dld, src + ti * es, sld, rows - ti, cols, es);
    }
  }
}

/* Tiles of th dst rows x tw dst columns (tw * es is 64 bytes for the SIMD
 * tiles, so each store row fills a cache line). Streaming: panels of tw
 * source rows, each walked along its whole length, so the panel's source
 * rows are sequential streams the hardware prefetcher follows while the
 * stores bypass the cache. Otherwise BLOCK x BLOCK blocks (BLOCK is a
 * multiple of every tile side), whose lines on both sides stay in cache
 * while the block is done. Both cover the whole tiles; edges() the rest.
 * th 0 is the scalar path. */
static void blocked(char *dst, const char *src, int64_t rows, int64_t cols,
                    int64_t dld, int64_t sld, int es, int th, int tw,
                    tile_fn fn, int stream) {
  int64_t ti = th ? rows - rows % th : 0, tj = th ? cols - cols % tw : 0;
  if (stream) {
    for (int64_t j = 0; j < tj; j += tw)
      for (int64_t i = 0; i < ti; i += th)
        fn(dst + i * dld + j * es, dld, src + j * sld + i * es, sld, 1);
  } else if (th) {
    for (int64_t i0 = 0; i0 < ti; i0 += BLOCK)
      for (int64_t j0 = 0; j0 < tj; j0 += BLOCK) {
        int64_t ni = ti - i0 < BLOCK ? ti - i0 : BLOCK;
        int64_t nj = tj - j0 < BLOCK ? tj - j0 : BLOCK;
        for (int64_t i = i0; i < i0 + ni; i += th)
          for (int64_t j = j0; j < j0 + nj; j += tw)
            fn(dst + i * dld + j * es, dld, src + j * sld + i * es, sld, 0);
      }
  } else {
    for (int64_t i0 = 0; i0 < rows; i0 += BLOCK)
      for (int64_t j0 = 0; j0 < cols; j0 += BLOCK) {
        int64_t ni = rows - i0 < BLOCK ? rows - i0 : BLOCK;
        int64_t nj = cols - j0 < BLOCK ? cols - j0 : BLOCK;
        scalar_part(dst + i0 * dld + j0 * es, dld, src + j0 * sld + i0 * es,
                    sld, ni, nj, es);
      }
    return;
  }
  edges(dst, src, rows, cols, dld, sld, es, th, tw, fn, ti, tj);
}

#if ND_X86
/* ---- AVX-512 ---- */
__attribute__((target("avx512f"))) static void
tile16_avx512(char *d, int64_t dld, const char *s, int64_t sld, int stream) {
  __m512 r[16], t[16];
#pragma GCC unroll 16
  for (int k = 0; k < 16; k++) r[k] = _mm512_loadu_ps((const float *)(s + k * sld));
#pragma GCC unroll 8
  for (int k = 0; k < 16; k += 2) {
    t[k] = _mm512_unpacklo_ps(r[k], r[k + 1]);
    t[k + 1] = _mm512_unpackhi_ps(r[k], r[k + 1]);
  }
  /* r[4g + c]: rows 4g..4g+3 of columns c, c+4, c+8, c+12 (one per lane) */
#pragma GCC unroll 4
  for (int g = 0; g < 4; g++) {
    r[4 * g + 0] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
    r[4 * g + 1] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0xEE);
    r[4 * g + 2] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
    r[4 * g + 3] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xEE);
  }
#pragma GCC unroll 4
  for (int c = 0; c < 4; c++) {
    t[c] = _mm512_shuffle_f32x4(r[c], r[4 + c], 0x88);      /* lanes 0,2 */
    t[4 + c] = _mm512_shuffle_f32x4(r[c], r[4 + c], 0xDD);  /* lanes 1,3 */
    t[8 + c] = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0x88);
    t[12 + c] = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0xDD);
  }
#pragma GCC unroll 4
  for (int c = 0; c < 4; c++) {
    r[c] = _mm512_shuffle_f32x4(t[c], t[8 + c], 0x88);           /* col c */
    r[8 + c] = _mm512_shuffle_f32x4(t[c], t[8 + c], 0xDD);       /* c+8 */
    r[4 + c] = _mm512_shuffle_f32x4(t[4 + c], t[12 + c], 0x88);  /* c+4 */
    r[12 + c] = _mm512_shuffle_f32x4(t[4 + c], t[12 + c], 0xDD); /* c+12 */
  }
  if (stream) {
#pragma GCC unroll 16
    for (int k = 0; k < 16; k++) _mm512_stream_ps((float *)(d + k * dld), r[k]);
  } else {
#pragma GCC unroll 16
    for (int k = 0; k < 16; k++) _mm512_storeu_ps((float *)(d + k * dld), r[k]);
  }
}

__attribute__((target("avx512f"))) static void
tile8_avx512(char *d, int64_t dld, const char *s, int64_t sld, int stream) {
  __m512d r[8], t[8];
#pragma GCC unroll 8
  for (int k = 0; k < 8; k++) r[k] = _mm512_loadu_pd((const double *)(s + k * sld));
#pragma GCC unroll 4
  for (int k = 0; k < 8; k += 2) {
    t[k] = _mm512_unpacklo_pd(r[k], r[k + 1]);
    t[k + 1] = _mm512_unpackhi_pd(r[k], r[k + 1]);
  }
#pragma GCC unroll 2
  for (int g = 0; g < 8; g += 4) {
    r[g + 0] = _mm512_shuffle_f64x2(t[g], t[g + 2], 0x88);
    r[g + 1] = _mm512_shuffle_f64x2(t[g + 1], t[g + 3], 0x88);
    r[g + 2] = _mm512_shuffle_f64x2(t[g], t[g + 2], 0xDD);
    r[g + 3] = _mm512_shuffle_f64x2(t[g + 1], t[g + 3], 0xDD);
  }
#pragma GCC unroll 4
  for (int c = 0; c < 4; c++) {
    t[c] = _mm512_shuffle_f64x2(r[c], r[4 + c], 0x88);
    t[4 + c] = _mm512_shuffle_f64x2(r[c], r[4 + c], 0xDD);
  }
  if (stream) {
#pragma GCC unroll 8
    for (int k = 0; k < 8; k++) _mm512_stream_pd((double *)(d + k * dld), t[k]);
  } else {
#pragma GCC unroll 8
    for (int k = 0; k < 8; k++) _mm512_storeu_pd((double *)(d + k * dld), t[k]);
  }
}

/* ---- AVX2: 8x8 floats or 4x4 doubles per register transpose; a tile is
 * two of them side by side, so each dst row gets one whole 64-byte line. */
#define AVX2 __attribute__((target("avx2"), always_inline)) static inline
AVX2 void t8x8_avx2(const char *s, int64_t sld, __m256 *o) {
  __m256 r[8], t[8];
#pragma GCC unroll 8
  for (int k = 0; k < 8; k++) r[k] = _mm256_loadu_ps((const float *)(s + k * sld));
#pragma GCC unroll 4
  for (int k = 0; k < 8; k += 2) {
    t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
    t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
  }
#pragma GCC unroll 2
  for (int g = 0; g < 8; g += 4) {
    r[g + 0] = _mm256_shuffle_ps(t[g], t[g + 2], 0x44);
    r[g + 1] = _mm256_shuffle_ps(t[g], t[g + 2], 0xEE);
    r[g + 2] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0x44);
    r[g + 3] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0xEE);
  }
#pragma GCC unroll 4
  for (int c = 0; c < 4; c++) {
    o[c] = _mm256_permute2f128_ps(r[c], r[4 + c], 0x20);
    o[4 + c] = _mm256_permute2f128_ps(r[c], r[4 + c], 0x31);
  }
}

AVX2 void t4x4_avx2(const char *s, int64_t sld, __m256d *o) {
  __m256d r[4], t[4];
#pragma GCC unroll 4
  for (int k = 0; k < 4; k++) r[k] = _mm256_loadu_pd((const double *)(s + k * sld));
  t[0] = _mm256_unpacklo_pd(r[0], r[1]);
  t[1] = _mm256_unpackhi_pd(r[0], r[1]);
  t[2] = _mm256_unpacklo_pd(r[2], r[3]);
  t[3] = _mm256_unpackhi_pd(r[2], r[3]);
  o[0] = _mm256_permute2f128_pd(t[0], t[2], 0x20);
  o[1] = _mm256_permute2f128_pd(t[1], t[3], 0x20);
  o[2] = _mm256_permute2f128_pd(t[0], t[2], 0x31);
  o[3] = _mm256_permute2f128_pd(t[1], t[3], 0x31);
}

/* 8 dst rows x 16 floats. */
__attribute__((target("avx2"))) static void
tile8x16_avx2(char *d, int64_t dld, const char *s, int64_t sld, int stream) {
  __m256 a[8], b[8];
  t8x8_avx2(s, sld, a);
  t8x8_avx2(s + 8 * sld, sld, b);
  for (int k = 0; k < 8; k++) {
    float *p = (float *)(d + k * dld);
    if (stream) { _mm256_stream_ps(p, a[k]); _mm256_stream_ps(p + 8, b[k]); }
    else { _mm256_storeu_ps(p, a[k]); _mm256_storeu_ps(p + 8, b[k]); }
  }
}

/* 4 dst rows x 8 doubles. */
__attribute__((target("avx2"))) static void
tile4x8_avx2(char *d, int64_t dld, const char *s, int64_t sld, int stream) {
  __m256d a[4], b[4];
  t4x4_avx2(s, sld, a);
  t4x4_avx2(s + 4 * sld, sld, b);
  for (int k = 0; k < 4; k++) {
    double *p = (double *)(d + k * dld);
    if (stream) { _mm256_stream_pd(p, a[k]); _mm256_stream_pd(p + 4, b[k]); }
    else { _mm256_storeu_pd(p, a[k]); _mm256_storeu_pd(p + 4, b[k]); }
  }
}

/* ---- SSE2, bytes: four rounds of interleaving rows i and i+8 rotate the
 * 8 index bits (row, col) by one each; after four the 16x16 is transposed.
 * A tile is four of them side by side: 16 dst rows x 64 bytes. */
static inline void t16x16_sse2(const char *s, int64_t sld, __m128i *a) {
  __m128i b[16];
  for (int k = 0; k < 16; k++)
    a[k] = _mm_loadu_si128((const __m128i *)(s + k * sld));
  for (int round = 0; round < 4; round++) {
    for (int k = 0; k < 8; k++) {
      b[2 * k] = _mm_unpacklo_epi8(a[k], a[k + 8]);
      b[2 * k + 1] = _mm_unpackhi_epi8(a[k], a[k + 8]);
    }
    memcpy(a, b, sizeof b);
  }
}

static void tile16x64_sse2(char *d, int64_t dld, const char *s, int64_t sld,
                           int stream) {
  __m128i a[4][16];
  for (int q = 0; q < 4; q++) t16x16_sse2(s + 16 * q * sld, sld, a[q]);
  for (int k = 0; k < 16; k++) {
    __m128i *p = (__m128i *)(d + k * dld);
    for (int q = 0; q < 4; q++)
      if (stream) _mm_stream_si128(p + q, a[q][k]);
      else _mm_storeu_si128(p + q, a[q][k]);
  }
}
#endif

/* isa: 0 scalar, 1 the best this CPU has (2 AVX2 at most, for tests). */
void nd_transpose_copy_isa(void *dst, const void *src, int64_t rows,
                           int64_t cols, int64_t dld, int64_t sld, int esize,
                           int isa);
void nd_transpose_copy_isa(void *dst, const void *src, int64_t rows,
                           int64_t cols, int64_t dld, int64_t sld, int esize,
                           int isa) {
  int th = 0, tw = 0; /* tile: dst rows x dst columns */
  tile_fn fn = NULL;
#if ND_X86
  __builtin_cpu_init();
  int avx2 = isa >= 1 && __builtin_cpu_supports("avx2");
  /* AVX-512's tiles are twice as tall: a matrix of fewer rows (a block of
   * short rows in reduce.c) takes AVX2's. */
  int avx512 = isa == 1 && __builtin_cpu_supports("avx512f") &&
               rows >= (esize == 4 ? 16 : 8);
  if (esize == 4 && avx512) { th = 16; tw = 16; fn = tile16_avx512; }
  else if (esize == 8 && avx512) { th = 8; tw = 8; fn = tile8_avx512; }
  else if (esize == 4 && avx2) { th = 8; tw = 16; fn = tile8x16_avx2; }
  else if (esize == 8 && avx2) { th = 4; tw = 8; fn = tile4x8_avx2; }
  else if (esize == 1 && isa) { th = 16; tw = 64; fn = tile16x64_sse2; }
#else
  (void)isa;
#endif
  /* Stores of whole aligned lines: every tile row starts on a line. */
  int64_t bytes = rows * cols * esize, dldb = dld * esize;
  int stream = fn && bytes >= STREAM_MIN && dldb % 64 == 0 &&
               (uintptr_t)dst % 64 == 0;
  blocked(dst, src, rows, cols, dldb, sld * esize, esize, th, tw, fn, stream);
#if ND_X86
  if (stream) _mm_sfence(); /* streaming stores are weakly ordered */
#endif
}

void nd_transpose_copy(void *dst, const void *src, int64_t rows,
                       int64_t cols, int64_t dld, int64_t sld, int esize) {
  nd_transpose_copy_isa(dst, src, rows, cols, dld, sld, esize, 1);
}
