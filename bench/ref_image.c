/* Reference: libspng and TurboJPEG called directly from C, as a C program
 * would load and save an image file -- what nd.image.load/save are
 * measured against (bench/image_bench.lua). Each call reads the whole
 * file into a fresh buffer and decodes into a fresh buffer (load), or
 * encodes into the library's buffer and writes it out (save), with the
 * libraries' defaults: zlib level 6 and adaptive filters for PNG, 4:2:0
 * at the given quality for JPEG.
 *   ref_image.load(path, "png"|"jpeg", calls)             -> median seconds
 *   ref_image.save(path, bytes, h, w, "png"|"jpeg", quality, calls) -> median seconds
 * bytes: the RGB pixels, row-major (t:to_string()). */
#include <lauxlib.h>
#include <lua.h>
#include <spng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>
#include "ref_time.h"

static unsigned char *read_file(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *p = len > 0 ? malloc((size_t)len) : NULL;
  if (p && fread(p, 1, (size_t)len, f) != (size_t)len) { free(p); p = NULL; }
  fclose(f);
  *n = (size_t)len;
  return p;
}

static int load_png(const char *path) {
  size_t n, len;
  unsigned char *buf = read_file(path, &n), *out = NULL;
  if (!buf) return 1;
  spng_ctx *ctx = spng_ctx_new(0);
  int r = spng_set_png_buffer(ctx, buf, n) ||
          spng_decoded_image_size(ctx, SPNG_FMT_PNG, &len) ||
          !(out = malloc(len)) ||
          spng_decode_image(ctx, out, len, SPNG_FMT_PNG, 0);
  spng_ctx_free(ctx);
  free(out);
  free(buf);
  return r;
}

static int load_jpeg(const char *path) {
  size_t n;
  unsigned char *buf = read_file(path, &n), *out = NULL;
  if (!buf) return 1;
  tjhandle h = tjInitDecompress();
  int w, ht, sub, cs;
  int r = tjDecompressHeader3(h, buf, n, &w, &ht, &sub, &cs) ||
          !(out = malloc((size_t)w * ht * 3)) ||
          tjDecompress2(h, buf, n, out, w, w * 3, ht, TJPF_RGB, 0);
  tjDestroy(h);
  free(out);
  free(buf);
  return r;
}

static int write_file(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return 1;
  int bad = fwrite(p, 1, n, f) != n;
  return fclose(f) != 0 || bad;
}

static int save_png(const char *path, const unsigned char *px, int h, int w) {
  spng_ctx *ctx = spng_ctx_new(SPNG_CTX_ENCODER);
  struct spng_ihdr ih = {(uint32_t)w, (uint32_t)h, 8,
                         SPNG_COLOR_TYPE_TRUECOLOR, 0, 0, 0};
  size_t len = 0;
  int err = 0;
  void *png = NULL;
  int r = spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1) ||
          spng_set_ihdr(ctx, &ih) ||
          spng_encode_image(ctx, px, (size_t)w * h * 3, SPNG_FMT_PNG,
                            SPNG_ENCODE_FINALIZE) ||
          !(png = spng_get_png_buffer(ctx, &len, &err)) ||
          write_file(path, png, len);
  free(png);
  spng_ctx_free(ctx);
  return r;
}

static int save_jpeg(const char *path, const unsigned char *px, int h, int w,
                     int quality) {
  tjhandle hd = tjInitCompress();
  unsigned char *jpg = NULL;
  unsigned long len = 0;
  int r = tjCompress2(hd, px, w, w * 3, h, TJPF_RGB, &jpg, &len, TJSAMP_420,
                      quality, 0) ||
          write_file(path, jpg, len);
  tjFree(jpg);
  tjDestroy(hd);
  return r;
}

#define MAXCALLS 256
static int l_load(lua_State *L) {
  const char *path = luaL_checkstring(L, 1), *fmt = luaL_checkstring(L, 2);
  int calls = (int)luaL_checkinteger(L, 3), jpeg = !strcmp(fmt, "jpeg");
  double t[MAXCALLS];
  if (calls < 1 || calls > MAXCALLS) return luaL_error(L, "load: calls");
  for (int i = 0; i < calls; i++) {
    double t0 = ref_now();
    if (jpeg ? load_jpeg(path) : load_png(path))
      return luaL_error(L, "load: %s failed", path);
    t[i] = ref_now() - t0;
  }
  lua_pushnumber(L, ref_median(t, calls));
  return 1;
}

static int l_save(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  size_t n;
  const unsigned char *px = (const unsigned char *)luaL_checklstring(L, 2, &n);
  int h = (int)luaL_checkinteger(L, 3), w = (int)luaL_checkinteger(L, 4);
  int jpeg = !strcmp(luaL_checkstring(L, 5), "jpeg");
  int quality = (int)luaL_checkinteger(L, 6);
  int calls = (int)luaL_checkinteger(L, 7);
  double t[MAXCALLS];
  if (n != (size_t)h * w * 3) return luaL_error(L, "save: bytes");
  if (calls < 1 || calls > MAXCALLS) return luaL_error(L, "save: calls");
  for (int i = 0; i < calls; i++) {
    double t0 = ref_now();
    if (jpeg ? save_jpeg(path, px, h, w, quality) : save_png(path, px, h, w))
      return luaL_error(L, "save: %s failed", path);
    t[i] = ref_now() - t0;
  }
  lua_pushnumber(L, ref_median(t, calls));
  return 1;
}

int luaopen_ref_image(lua_State *L) {
  static const luaL_Reg fns[] = {{"load", l_load}, {"save", l_save},
                                 {NULL, NULL}};
  lua_newtable(L);
  for (const luaL_Reg *f = fns; f->name; f++) {
    lua_pushcfunction(L, f->func);
    lua_setfield(L, -2, f->name);
  }
  return 1;
}
