/* Image files: PNG through libspng, JPEG through libjpeg-turbo's TurboJPEG
 * API. Decoded images are HWC uint8 tensors, uint16 for 16-bit PNGs (gray
 * (H, W, 1), gray+alpha 2, RGB 3, RGBA 4). Hostile input: the header is
 * read first and an image of more than ND_IMAGE_MAX_PIXELS is refused
 * before anything is allocated; libspng gets chunk limits; TurboJPEG
 * stops on warnings and limits progressive scans. libspng allocates
 * through nd's hook; TurboJPEG cannot be given an allocator, but its
 * output buffers are nd's (NOREALLOC). */
#include "core.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/stat.h>
#include <spng.h>
#include <turbojpeg.h>

/* ---- messages: "<fn>: <path>: ..." (the path left out for bytes) ---- */
static nd_status failf(nd_err *e, nd_status code, const char *fn,
                       const char *path, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static nd_status failf(nd_err *e, nd_status code, const char *fn,
                       const char *path, const char *fmt, ...) {
  char m[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(m, sizeof m, fmt, ap);
  va_end(ap);
  if (path) return nd_fail(e, code, "%s: %s: %s", fn, path, m);
  return nd_fail(e, code, "%s: %s", fn, m);
}

static nd_status no_memory(nd_err *e, const char *fn, const char *path) {
  return failf(e, ND_ENOMEM, fn, path, "not enough memory");
}

/* A failure of nd_empty or the scratch allocator, under fn and path
 * ("empty: not enough memory ..." loses its own name). */
static nd_status renamed(nd_err *e, const char *fn, const char *path) {
  char m[sizeof e->msg];
  const char *colon = strchr(e->msg, ':');
  snprintf(m, sizeof m, "%s", colon ? colon + 2 : e->msg);
  return failf(e, e->code ? e->code : ND_ENOMEM, fn, path, "%s", m);
}

/* ---- the allocator libspng is given: nd's hook, through scratch ----
 * libspng's free and realloc do not pass the size, so each block starts
 * with it (16 bytes keep malloc's alignment). */
#define HDR 16
/* Set when an allocation of libspng's failed: zlib's window, allocated
 * mid-stream, comes back from spng as a stream error. Per thread, reset
 * by each call. */
static _Thread_local int im_oom;
static void *im_malloc(size_t n) {
  char *p = n > (size_t)INT64_MAX - HDR
                ? NULL
                : nd_scratch_alloc(NULL, "image", (int64_t)n + HDR, 1, false);
  if (!p) {
    im_oom = 1;
    return NULL;
  }
  *(size_t *)(void *)p = n;
  return p + HDR;
}
static void im_free(void *p) {
  if (p) nd_scratch_free((char *)p - HDR);
}
static void *im_calloc(size_t c, size_t s) {
  size_t n;
  if (__builtin_mul_overflow(c, s, &n)) return NULL;
  void *p = im_malloc(n);
  if (p) memset(p, 0, n);
  return p;
}
static void *im_realloc(void *p, size_t n) {
  if (!p) return im_malloc(n);
  size_t old = *(size_t *)(void *)((char *)p - HDR);
  void *q = im_malloc(n);
  if (!q) return NULL;
  memcpy(q, p, old < n ? old : n);
  im_free(p);
  return q;
}
static struct spng_alloc im_alloc = {im_malloc, im_realloc, im_calloc,
                                     im_free};

void nd_image_free(void *bytes) { im_free(bytes); }

/* ---- channel conversion (PIL's convert) ----
 * Gray from color is ITU-R 601-2 luma, L = R 299/1000 + G 587/1000 +
 * B 114/1000, in 16-bit fixed point rounded (the weights are those
 * fractions of 65536, summing to 65536, so gray stays gray). 16-bit
 * samples take the same expression: 65535 * 65536 + 32768 < 2^32. Gray
 * to color replicates; an added alpha is opaque (the sample's maximum); a
 * dropped alpha is dropped (no compositing). */
#define IMAGE_SAMPLES(X) X(uint8_t, 255) X(uint16_t, 65535)
#define CONVERT(T, OPAQUE)                                                   \
  static void convert_##T(T *dst, int dc, const T *src, int sc,             \
                          int64_t npix) {                                    \
    for (int64_t i = 0; i < npix; i++, src += sc, dst += dc) {               \
      T g = sc >= 3 ? (T)((src[0] * 19595u + src[1] * 38470u +               \
                           src[2] * 7471u + 32768u) >> 16)                   \
                    : src[0];                                                \
      T a = sc == 2 ? src[1] : sc == 4 ? src[3] : OPAQUE;                    \
      switch (dc) {                                                          \
      case 1: dst[0] = g; break;                                             \
      case 2: dst[0] = g; dst[1] = a; break;                                 \
      default:                                                               \
        if (sc >= 3) memcpy(dst, src, 3 * sizeof(T));                        \
        else dst[0] = dst[1] = dst[2] = src[0];                              \
        if (dc == 4) dst[3] = a;                                             \
      }                                                                      \
    }                                                                        \
  }
IMAGE_SAMPLES(CONVERT)
#undef CONVERT

/* bytes: of a sample, 1 or 2 */
static void convert(void *dst, int dc, const void *src, int sc, int64_t npix,
                    int bytes) {
  if (bytes == 2) convert_uint16_t(dst, dc, src, sc, npix);
  else convert_uint8_t(dst, dc, src, sc, npix);
}

/* ---- decoding ---- */
/* The fuzzer builds with a lower cap (its inputs must decode fast). */
#ifndef ND_IMAGE_PIXEL_CAP
#define ND_IMAGE_PIXEL_CAP ND_IMAGE_MAX_PIXELS
#endif

static nd_status check_pixels(nd_err *e, const char *fn, const char *path,
                              int64_t w, int64_t h) {
  if (w < 1 || h < 1)
    return failf(e, ND_EIO, fn, path, "image of %lldx%lld pixels is empty",
                 (long long)w, (long long)h);
  if (w * h > ND_IMAGE_PIXEL_CAP) /* both below 2^32: no overflow */
    return failf(e, ND_EIO, fn, path,
                 "image of %lldx%lld pixels is above nd's limit of %lld "
                 "pixels", (long long)w, (long long)h,
                 (long long)ND_IMAGE_PIXEL_CAP);
  return ND_OK;
}

/* out (h, w, want), uint8 or (bytes 2) uint16, from a decoder that
 * writes dc channels at dst: into out itself when the channels agree,
 * else through scratch converted. */
typedef struct target {
  nd_tensor *out;
  void *buf; /* where the decoder writes */
  void *scratch;
  int64_t w, h;
  int dc, want, bytes;
} target;

static nd_status target_open(nd_err *e, target *t, const char *fn,
                             const char *path) {
  int64_t size[3] = {t->h, t->w, t->want};
  t->scratch = NULL;
  if (nd_empty(e, t->out, t->bytes == 2 ? ND_UINT16 : ND_UINT8, 3, size))
    return renamed(e, fn, path);
  if (t->dc == t->want) {
    t->buf = nd_data(t->out);
    return ND_OK;
  }
  t->scratch = nd_scratch_alloc(e, fn, t->w * t->h, t->dc * t->bytes, false);
  if (!t->scratch) {
    nd_release(t->out);
    return renamed(e, fn, path);
  }
  t->buf = t->scratch;
  return ND_OK;
}

/* After the decoder: convert, or undo on failure. */
static nd_status target_close(target *t, nd_status st) {
  if (!st && t->scratch)
    convert(nd_data(t->out), t->want, t->scratch, t->dc, t->w * t->h,
            t->bytes);
  nd_scratch_free(t->scratch);
  if (st) nd_release(t->out);
  return st;
}

static nd_status spng_failed(nd_err *e, const char *fn, const char *path,
                             int r) {
  if (r == SPNG_EMEM || im_oom) return no_memory(e, fn, path);
  return failf(e, ND_EIO, fn, path, "corrupt PNG (%s)", spng_strerror(r));
}

/* The fuzzer's mutations break checksums: its build (ND_IMAGE_FUZZ) has
 * spng use the data anyway, so inputs reach the decoder proper. */
#ifdef ND_IMAGE_FUZZ
#define ND_IMAGE_FUZZ_FLAGS SPNG_CTX_IGNORE_ADLER32
#define ND_IMAGE_FUZZ_CRC(ctx) spng_set_crc_action(ctx, SPNG_CRC_USE, SPNG_CRC_USE)
#else
#define ND_IMAGE_FUZZ_FLAGS 0
#define ND_IMAGE_FUZZ_CRC(ctx) 0
#endif

/* Chunks other than IDAT of at most 16 MiB, 64 MiB of them in all: the
 * text and ICC profiles real files carry fit many times over. */
#define CHUNK_LIMIT ((size_t)1 << 24)
#define CACHE_LIMIT ((size_t)1 << 26)

static nd_status png_decode(nd_err *e, nd_tensor *out, const uint8_t *p,
                            size_t n, int want, const char *fn,
                            const char *path) {
  im_oom = 0;
  spng_ctx *ctx = spng_ctx_new2(&im_alloc, ND_IMAGE_FUZZ_FLAGS);
  if (!ctx) return no_memory(e, fn, path);
  nd_status st = ND_OK;
  struct spng_ihdr ih;
  struct spng_trns trns;
  int r;
  if ((r = ND_IMAGE_FUZZ_CRC(ctx)) ||
      (r = spng_set_chunk_limits(ctx, CHUNK_LIMIT, CACHE_LIMIT)) ||
      (r = spng_set_image_limits(ctx, (uint32_t)ND_IMAGE_PIXEL_CAP,
                                 (uint32_t)ND_IMAGE_PIXEL_CAP)) ||
      (r = spng_set_png_buffer(ctx, p, n)) || (r = spng_get_ihdr(ctx, &ih))) {
    /* spng refuses a side above the limit: say it as a pixel count */
    int64_t w = (int64_t)p[16] << 24 | p[17] << 16 | p[18] << 8 | p[19];
    int64_t h = (int64_t)p[20] << 24 | p[21] << 16 | p[22] << 8 | p[23];
    if ((r == SPNG_EUSER_WIDTH || r == SPNG_EUSER_HEIGHT) && w && h)
      st = check_pixels(e, fn, path, w, h);
    if (!st) st = spng_failed(e, fn, path, r);
    goto done;
  }
  if ((st = check_pixels(e, fn, path, ih.width, ih.height))) goto done;
  /* tRNS becomes alpha: spng reports it only once the chunks before IDAT
   * are read (get_trns reads them). */
  r = spng_get_trns(ctx, &trns);
  if (r && r != SPNG_ECHUNKAVAIL) {
    st = spng_failed(e, fn, path, r);
    goto done;
  }
  int has_trns = r == 0, bytes = ih.bit_depth == 16 ? 2 : 1, fmt, native,
      dc, flags = 0;
  switch (ih.color_type) {
  case SPNG_COLOR_TYPE_GRAYSCALE: native = has_trns ? 2 : 1; break;
  case SPNG_COLOR_TYPE_GRAYSCALE_ALPHA: native = 2; break;
  case SPNG_COLOR_TYPE_TRUECOLOR_ALPHA: native = 4; break;
  default: native = has_trns ? 4 : 3; /* truecolor, indexed */
  }
  if (has_trns) {
    fmt = bytes == 2 ? SPNG_FMT_RGBA16 : SPNG_FMT_RGBA8, dc = 4,
    flags = SPNG_DECODE_TRNS;
  } else if (ih.color_type == SPNG_COLOR_TYPE_INDEXED) {
    fmt = SPNG_FMT_RGB8, dc = 3;
  } else if (ih.bit_depth >= 8) {
    /* the file's own samples; spng gives 16-bit ones in host order */
    fmt = SPNG_FMT_PNG, dc = native;
  } else {
    fmt = SPNG_FMT_G8, dc = 1; /* gray of 1, 2 or 4 bits, scaled */
  }
  target t = {out, NULL, NULL, ih.width, ih.height, dc, want ? want : native,
              bytes};
  size_t len;
  if ((r = spng_decoded_image_size(ctx, fmt, &len))) {
    st = spng_failed(e, fn, path, r);
    goto done;
  }
  if ((int64_t)len != t.w * t.h * dc * bytes) {
    st = failf(e, ND_EIO, fn, path, "corrupt PNG (decoded size %zu is not "
               "%lldx%lldx%d samples of %d bytes)", len, (long long)t.w,
               (long long)t.h, dc, bytes);
    goto done;
  }
  if ((st = target_open(e, &t, fn, path))) goto done;
  r = spng_decode_image(ctx, t.buf, len, fmt, flags);
  st = target_close(&t, r ? spng_failed(e, fn, path, r) : ND_OK);
done:
  spng_ctx_free(ctx);
  return st;
}

static nd_status tj_failed(nd_err *e, const char *fn, const char *path,
                           tjhandle h) {
  const char *why = tjGetErrorStr2(h);
  if (why && strstr(why, "emory")) return no_memory(e, fn, path);
  return failf(e, ND_EIO, fn, path, "corrupt JPEG (%s)", why ? why : "?");
}

static nd_status jpeg_decode(nd_err *e, nd_tensor *out, const uint8_t *p,
                             size_t n, int want, const char *fn,
                             const char *path) {
  if (n > ULONG_MAX)
    return failf(e, ND_EIO, fn, path, "JPEG of %zu bytes is too large", n);
  tjhandle h = tjInitDecompress();
  if (!h) return no_memory(e, fn, path);
  nd_status st = ND_OK;
  int w, ht, sub, cs;
  if (tjDecompressHeader3(h, p, (unsigned long)n, &w, &ht, &sub, &cs)) {
    st = tj_failed(e, fn, path, h);
    goto done;
  }
  if (cs == TJCS_CMYK || cs == TJCS_YCCK) {
    st = failf(e, ND_EIO, fn, path, "CMYK JPEGs are not supported (nd "
               "reads gray and color JPEGs; convert the file to RGB)");
    goto done;
  }
  if ((st = check_pixels(e, fn, path, w, ht))) goto done;
  int dc = cs == TJCS_GRAY ? 1 : 3;
  target t = {out, NULL, NULL, w, ht, dc, want ? want : dc, 1};
  if ((st = target_open(e, &t, fn, path))) goto done;
  /* Warnings (a truncated file, stray bytes) are errors: half an image
   * is not returned as if it were whole. */
  int r = tjDecompress2(h, p, (unsigned long)n, t.buf, w, w * dc, ht,
                        dc == 1 ? TJPF_GRAY : TJPF_RGB,
                        TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS);
  st = target_close(&t, r ? tj_failed(e, fn, path, h) : ND_OK);
done:
  tjDestroy(h);
  return st;
}

static nd_status decode(nd_err *e, nd_tensor *out, const uint8_t *p,
                        size_t n, int channels, const char *fn,
                        const char *path) {
  memset(out, 0, sizeof *out);
  if (channels < 0 || channels > 4)
    return nd_fail(e, ND_EINVAL, "%s: channels must be 1..4 (or 0: as "
                   "stored), got %d", fn, channels);
  if (n >= 8 && !memcmp(p, "\x89PNG\r\n\x1a\n", 8)) {
    if (n < 33) /* the signature and IHDR */
      return failf(e, ND_EIO, fn, path, "corrupt PNG (truncated in its "
                   "header)");
    return png_decode(e, out, p, n, channels, fn, path);
  }
  if (n >= 3 && p[0] == 0xff && p[1] == 0xd8 && p[2] == 0xff)
    return jpeg_decode(e, out, p, n, channels, fn, path);
  return failf(e, ND_EIO, fn, path, "not a PNG or JPEG file");
}

nd_status nd_image_decode(nd_err *e, nd_tensor *out, const void *bytes,
                          int64_t n, int channels) {
  if (n < 0 || (uint64_t)n > SIZE_MAX)
    return nd_fail(e, ND_EINVAL, "image.decode: byte count %lld is invalid",
                   (long long)n);
  return decode(e, out, bytes, (size_t)n, channels, "image.decode", NULL);
}

nd_status nd_image_load(nd_err *e, nd_tensor *out, const char *path,
                        int channels) {
  const char *fn = "image.load";
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f)
    return nd_fail(e, ND_EIO, "%s: cannot open %s: %s", fn, path,
                   strerror(errno));
  nd_status st = ND_OK;
  uint8_t *buf = NULL;
  struct stat sb;
  int64_t n = 0;
  if (fstat(fileno(f), &sb) || !S_ISREG(sb.st_mode)) {
    st = failf(e, ND_EIO, fn, path, "not a regular file");
    goto done;
  }
  n = (int64_t)sb.st_size;
  if (!(buf = nd_scratch_alloc(e, fn, n, 1, false))) {
    st = renamed(e, fn, path);
    goto done;
  }
  if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
    st = failf(e, ND_EIO, fn, path, "reading it failed");
    goto done;
  }
  st = decode(e, out, buf, (size_t)n, channels, fn, path);
done:
  nd_scratch_free(buf);
  fclose(f);
  return st;
}

/* ---- encoding ---- */
static const char LAYOUT[] =
    "takes uint8 (H, W[, C]) with C = 1..4, or uint16 for a 16-bit PNG (to "
    "convert a CHW float in 0..1: "
    "t:permute(2, 3, 1):mul(255):round():clamp(0, 255):to(\"uint8\"))";

/* 16-bit samples to 8, rounded: round(v * 255 / 65535) = (v + 128) // 257
 * (in int32: v + 128 overflows uint16). */
#define TO_8BIT "t:to(\"int32\"):add(128):floor_divide(257):to(\"uint8\")"

/* The image t is, or why not. Rows whose pixels are compact (any row
 * stride, even negative) go to the encoders as they are. */
typedef struct image {
  int64_t h, w, rowstride; /* in bytes */
  int c, bytes;            /* bytes of a sample: 1 (uint8) or 2 (uint16) */
  const uint8_t *first;    /* row 0 */
} image;

static int rows_compact(const nd_tensor *t, int c) {
  int64_t ws = t->stride[1], cs = t->ndim == 3 ? t->stride[2] : 1;
  return (c == 1 || cs == 1) && (t->size[1] == 1 || ws == c);
}

static nd_status check_image(nd_err *e, const char *fn, const nd_tensor *t) {
  char b[ND_SIZES_BUF];
  if ((t->dtype != ND_UINT8 && t->dtype != ND_UINT16) ||
      (t->ndim != 2 && t->ndim != 3) ||
      (t->ndim == 3 && (t->size[2] < 1 || t->size[2] > 4)))
    return nd_fail(e, ND_EINVAL, "%s: t has shape %s and dtype %s; %s %s", fn,
                   nd_fmt_sizes(b, sizeof b, t->ndim, t->size),
                   nd_dtype_name(t->dtype), strchr(fn, '.') + 1, LAYOUT);
  if (t->size[0] < 1 || t->size[1] < 1)
    return nd_fail(e, ND_EINVAL, "%s: t has shape %s: an image needs at "
                   "least one pixel", fn,
                   nd_fmt_sizes(b, sizeof b, t->ndim, t->size));
  return ND_OK;
}

static void image_of(image *im, const nd_tensor *t) {
  im->h = t->size[0];
  im->w = t->size[1];
  im->c = t->ndim == 3 ? (int)t->size[2] : 1;
  im->bytes = (int)nd_dtype_size(t->dtype);
  im->rowstride = t->stride[0] * im->bytes;
  im->first = (const uint8_t *)nd_ptr(t);
}

static nd_status png_encode(nd_err *e, const image *im, int level,
                            void **bytes, int64_t *nbytes, const char *fn,
                            const char *path) {
  static const uint8_t types[5] = {
      0, SPNG_COLOR_TYPE_GRAYSCALE, SPNG_COLOR_TYPE_GRAYSCALE_ALPHA,
      SPNG_COLOR_TYPE_TRUECOLOR, SPNG_COLOR_TYPE_TRUECOLOR_ALPHA};
  if (im->w > INT32_MAX || im->h > INT32_MAX)
    return failf(e, ND_EINVAL, fn, path, "PNG images are at most 2^31 - 1 "
                 "pixels wide and high, t is %lldx%lld", (long long)im->w,
                 (long long)im->h);
  im_oom = 0;
  spng_ctx *ctx = spng_ctx_new2(&im_alloc, SPNG_CTX_ENCODER);
  if (!ctx) return no_memory(e, fn, path);
  struct spng_ihdr ih = {(uint32_t)im->w, (uint32_t)im->h,
                         (uint8_t)(8 * im->bytes), types[im->c], 0, 0, 0};
  nd_status st = ND_OK;
  size_t row = (size_t)(im->w * im->c * im->bytes), len = 0;
  int r;
  if ((r = spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1)) ||
      (r = spng_set_option(ctx, SPNG_IMG_COMPRESSION_LEVEL, level)) ||
      (r = spng_set_ihdr(ctx, &ih)) ||
      (r = spng_encode_image(ctx, NULL, 0, SPNG_FMT_PNG,
                             SPNG_ENCODE_PROGRESSIVE | SPNG_ENCODE_FINALIZE)))
    goto failed;
  /* Row by row from the view: no copy, whatever the row stride (spng
   * swaps 16-bit samples to PNG's big-endian order itself). */
  for (int64_t y = 0; y < im->h; y++) {
    r = spng_encode_row(ctx, im->first + y * im->rowstride, row);
    if (r == SPNG_EOI && y == im->h - 1) r = 0;
    if (r) goto failed;
  }
  *bytes = spng_get_png_buffer(ctx, &len, &r);
  if (!*bytes) goto failed;
  *nbytes = (int64_t)len;
  goto done;
failed:
  st = r == SPNG_EMEM || im_oom ? no_memory(e, fn, path)
                      : failf(e, ND_EIO, fn, path, "PNG encoding failed (%s)",
                              spng_strerror(r));
done:
  spng_ctx_free(ctx);
  return st;
}

static nd_status jpeg_encode(nd_err *e, const image *im, int quality,
                             void **bytes, int64_t *nbytes, const char *fn,
                             const char *path) {
  if (im->c == 2 || im->c == 4)
    return failf(e, ND_EINVAL, fn, path, "JPEG has no alpha channel: t has "
                 "%d channels; JPEG takes 1 (gray) or 3 (RGB) (to drop "
                 "alpha: t:narrow(3, 1, %d))", im->c, im->c - 1);
  if (im->w > 65500 || im->h > 65500)
    return failf(e, ND_EINVAL, fn, path, "JPEG images are at most 65500 "
                 "pixels wide and high, t is %lldx%lld", (long long)im->w,
                 (long long)im->h);
  int w = (int)im->w, h = (int)im->h, sub = im->c == 1 ? TJSAMP_GRAY
                                                        : TJSAMP_420;
  int flags = TJFLAG_NOREALLOC;
  /* A negative row stride is a bottom-up image from the lowest row. */
  const uint8_t *src = im->first;
  int64_t pitch = im->rowstride;
  if (pitch < 0 && h > 1) {
    src += (int64_t)(h - 1) * pitch;
    pitch = -pitch;
    flags |= TJFLAG_BOTTOMUP;
  }
  if (h == 1) pitch = (int64_t)w * im->c;
  unsigned long cap = tjBufSize(w, h, sub), len = cap;
  if (cap == (unsigned long)-1 || cap > (unsigned long)INT64_MAX)
    return failf(e, ND_EINVAL, fn, path, "JPEG of %dx%d pixels is too "
                 "large", w, h);
  unsigned char *out = im_malloc(cap);
  if (!out) return no_memory(e, fn, path);
  tjhandle hd = tjInitCompress();
  if (!hd) {
    im_free(out);
    return no_memory(e, fn, path);
  }
  nd_status st = ND_OK;
  if (tjCompress2(hd, src, w, (int)pitch, h, im->c == 1 ? TJPF_GRAY
                                                         : TJPF_RGB,
                  &out, &len, sub, quality, flags)) {
    const char *why = tjGetErrorStr2(hd);
    st = why && strstr(why, "emory")
             ? no_memory(e, fn, path)
             : failf(e, ND_EIO, fn, path, "JPEG encoding failed (%s)",
                     why ? why : "?");
    im_free(out);
  } else {
    *bytes = out;
    *nbytes = (int64_t)len;
  }
  tjDestroy(hd);
  return st;
}

/* t as an image, copied only when its rows are not compact (or, for
 * JPEG, their stride is beyond TurboJPEG's int pitch or 0). */
static nd_status encode(nd_err *e, void **bytes, int64_t *nbytes,
                        const nd_tensor *t, int format, int quality,
                        int compression, const char *fn, const char *path) {
  *bytes = NULL;
  *nbytes = 0;
  nd_status st;
  if ((st = check_image(e, fn, t))) return st;
  if (format == ND_IMAGE_JPEG && t->dtype != ND_UINT8)
    return failf(e, ND_EINVAL, fn, path, "JPEG is 8-bit: t has dtype %s "
                 "(16-bit images go to PNG; to 8 bits, rounded: %s)",
                 nd_dtype_name(t->dtype), TO_8BIT);
  if (format == ND_IMAGE_JPEG && !(quality >= 1 && quality <= 100) &&
      quality != 0)
    return nd_fail(e, ND_EINVAL, "%s: quality must be 1..100, got %d", fn,
                   quality);
  if (format == ND_IMAGE_PNG && !(compression >= -1 && compression <= 9))
    return nd_fail(e, ND_EINVAL, "%s: compression must be 0..9 (or -1: "
                   "zlib's default, 6), got %d", fn, compression);
  image im;
  image_of(&im, t);
  nd_tensor c = ND_UNSET;
  int64_t as = im.rowstride < 0 ? -im.rowstride : im.rowstride;
  if (!rows_compact(t, im.c) ||
      (format == ND_IMAGE_JPEG && im.h > 1 && (as == 0 || as > INT_MAX))) {
    if (nd_contiguous(e, &c, t)) return renamed(e, fn, path);
    image_of(&im, &c);
  }
  if (format == ND_IMAGE_PNG)
    st = png_encode(e, &im, compression, bytes, nbytes, fn, path);
  else
    st = jpeg_encode(e, &im, quality ? quality : ND_IMAGE_QUALITY, bytes,
                     nbytes, fn, path);
  nd_release(&c);
  return st;
}

nd_status nd_image_encode(nd_err *e, void **bytes, int64_t *nbytes,
                          const nd_tensor *t, int format, int quality,
                          int compression) {
  if (format != ND_IMAGE_PNG && format != ND_IMAGE_JPEG) {
    *bytes = NULL;
    *nbytes = 0;
    return nd_fail(e, ND_EINVAL, "image.encode: unknown format %d", format);
  }
  return encode(e, bytes, nbytes, t, format, quality, compression,
                "image.encode", NULL);
}

int nd_image_format(const char *path) {
  const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
  if (!dot || (slash && slash > dot)) return 0;
  if (!strcasecmp(dot, ".png")) return ND_IMAGE_PNG;
  if (!strcasecmp(dot, ".jpg") || !strcasecmp(dot, ".jpeg"))
    return ND_IMAGE_JPEG;
  return 0;
}

nd_status nd_image_save(nd_err *e, const char *path, const nd_tensor *t,
                        int quality, int compression) {
  const char *fn = "image.save";
  int format = nd_image_format(path);
  if (!format) {
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    if (!dot || (slash && slash > dot))
      return nd_fail(e, ND_EINVAL, "%s: %s has no extension; save writes "
                     ".png, .jpg and .jpeg", fn, path);
    return nd_fail(e, ND_EINVAL, "%s: %s: unknown image format '%s' (save "
                   "writes .png, .jpg and .jpeg)", fn, path, dot);
  }
  if (format == ND_IMAGE_PNG && quality)
    return nd_fail(e, ND_EINVAL, "%s: %s: quality is for JPEG files (PNG "
                   "is lossless; its option is compression)", fn, path);
  if (format == ND_IMAGE_JPEG && compression != -1)
    return nd_fail(e, ND_EINVAL, "%s: %s: compression is for PNG files "
                   "(JPEG's option is quality)", fn, path);
  void *bytes;
  int64_t n;
  nd_status st = encode(e, &bytes, &n, t, format, quality, compression, fn,
                        path);
  if (st) return st;
  FILE *f = fopen(path, "wb");
  if (!f) {
    im_free(bytes);
    return nd_fail(e, ND_EIO, "%s: cannot open %s: %s", fn, path,
                   strerror(errno));
  }
  int ok = fwrite(bytes, 1, (size_t)n, f) == (size_t)n;
  ok = fclose(f) == 0 && ok;
  im_free(bytes);
  if (!ok) return nd_fail(e, ND_EIO, "%s: writing %s failed", fn, path);
  return ND_OK;
}
