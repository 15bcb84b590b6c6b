/* Allocation-failure injection (make check-alloc). Run N fails the Nth
 * allocation from nd's allocator hook (nd_set_allocator), for N = 1, 2,
 * ... until a run makes no more allocations than N (or N reaches the cap).
 * Each run must fail cleanly (ND_ENOMEM from the C API, a Lua error saying
 * "not enough memory" from Lua), leak nothing (every block allocated is
 * freed once the run's tensors are released or its lua_State closed), and
 * nd must work afterwards (one more clean run). The C allocator's entry
 * points are wrapped at link time (-Wl,--wrap=malloc,...: calls from nd's
 * objects, not from Lua's, libc's or OpenBLAS's): any such call while the
 * hook is installed bypassed it, and is a problem.
 *
 *   alloc_fail c          the C API script below
 *   alloc_fail lua FILE   a Lua script, in a fresh lua_State per run
 * Prints "alloc sweep <mode>: N runs, N injected failures, 0 raw allocator
 * calls in the clean run, 0 problems". */
#include "nd.h"
#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int luaopen_nd(lua_State *L);

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
int __real_posix_memalign(void **p, size_t align, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
char *__real_strdup(const char *s);
void __real_free(void *p);

static long count, fail_at, live, injected, raw, raw_clean;
/* Calls to the C allocator (atomic: nd's worker threads too). */
#define RAW() __atomic_add_fetch(&raw, 1, __ATOMIC_RELAXED)

static int should_fail(void) {
  if (++count != fail_at) return 0;
  injected++;
  return 1;
}
void *__wrap_malloc(size_t n) { RAW(); return __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t m) { RAW(); return __real_calloc(n, m); }
void *__wrap_realloc(void *q, size_t n) { RAW(); return __real_realloc(q, n); }
int __wrap_posix_memalign(void **p, size_t align, size_t n) {
  RAW();
  return __real_posix_memalign(p, align, n);
}
void *__wrap_aligned_alloc(size_t align, size_t n) {
  RAW();
  return __real_aligned_alloc(align, n);
}
char *__wrap_strdup(const char *s) { RAW(); return __real_strdup(s); }
void __wrap_free(void *p) { if (p) RAW(); __real_free(p); }
static void *hook_alloc(size_t n, size_t align, void *ud) {
  (void)ud;
  if (should_fail()) return NULL;
  void *p = NULL;
  if (__real_posix_memalign(&p, align, n ? n : 1)) return NULL;
  live++;
  return p;
}
static void hook_free(void *p, size_t n, void *ud) {
  (void)n; (void)ud;
  live--;
  __real_free(p);
}

static int problems;
#define PROBLEM(...) (problems++, fprintf(stderr, __VA_ARGS__))

/* ---- the C API script: every call returns ND_OK or ND_ENOMEM ---------- */
#define STEP(call)                                                          \
  do {                                                                      \
    nd_status s_ = (call);                                                  \
    if (s_ == ND_ENOMEM && !strncmp(e.msg, "empty:", 6) &&                 \
        strncmp(#call, "nd_empty", 8) && strncmp(#call, "nd_zeros", 8))     \
      PROBLEM("run %ld: %s names the wrong function: %s\n", fail_at,      \
              #call, e.msg);                                                \
    if (s_ == ND_ENOMEM) goto out;                                          \
    if (s_) { PROBLEM("run %ld: %s -> %d: %s\n", fail_at, #call, s_, e.msg); goto out; } \
  } while (0)

static int c_script(const char *npy) {
  nd_err e = {0};
  nd_tensor a = ND_UNSET, b = ND_UNSET, v = ND_UNSET, c = ND_UNSET,
            m = ND_UNSET, r = ND_UNSET, s = ND_UNSET, l = ND_UNSET,
            k = ND_UNSET, w = ND_UNSET, c3 = ND_UNSET;
  int64_t sz[2] = {30, 40}, sz2[2] = {40, 20}, big[1] = {300000};
  int ok = 0;
  STEP(nd_zeros(&e, &a, ND_FLOAT64, 2, sz));
  STEP(nd_arange(&e, &b, ND_FLOAT32, 0, 800, 1));
  STEP(nd_reshape(&e, &v, &b, 2, sz2));
  STEP(nd_transpose(&e, &k, &v, 0, 1));
  STEP(nd_contiguous(&e, &c, &k));                  /* a compact copy */
  STEP(nd_matmul(&e, &m, &a, &v));                  /* promotes: copies */
  nd_operand oa = {&a, ND_FLOAT64, 0, 0}, ob = {NULL, ND_INT64, 0, 2};
  STEP(nd_binary(&e, &r, ND_NEW, ND_MUL, &oa, &ob));
  STEP(nd_unary(&e, &w, ND_NEW, ND_EXP, &k));
  STEP(nd_reduce(&e, &s, ND_R_SUM, &m, 1, (int[]){0}, 0));
  {
    nd_tensor f = ND_UNSET;
    STEP(nd_flip(&e, &f, &k, 1, (int[]){0}));
    nd_status q = nd_copy(&e, &k, &f);              /* overlapping: a temporary */
    nd_release(&f);
    STEP(q);
  }
  STEP(nd_empty(&e, &l, ND_FLOAT64, 1, big));       /* a huge-page sized one */
  STEP(nd_fill(&e, &l, 1));
  STEP(nd_save_npy(&e, npy, &k));                   /* transposed: a copy */
  nd_release(&l);
  STEP(nd_load_npy(&e, &l, npy));
  {
    nd_tensor mp = ND_UNSET; /* a mapping: its context and header */
    STEP(nd_load_npy_mapped(&e, &mp, npy, "r"));
    nd_release(&mp);
  }
  {
    /* safetensors: the header's scratch, the tensors, a mapping */
    const char *names[2] = {"k", "l"}, *meta[2] = {"format", "pt"};
    const nd_tensor *ts[2] = {&k, &l};
    nd_safetensors f;
    STEP(nd_safetensors_save(&e, npy, 2, names, ts, 1, meta));
    STEP(nd_safetensors_load(&e, npy, NULL, &f));
    nd_safetensors_free(&f);
    STEP(nd_safetensors_load(&e, npy, "c", &f));
    nd_safetensors_free(&f);
  }
  {
    nd_tensor t = ND_UNSET, st = ND_UNSET;
    int64_t ss[2] = {3, 2}, tt[2] = {3, 4};
    STEP(nd_arange(&e, &t, ND_INT64, 0, 11, 1));
    nd_status q = nd_as_strided(&e, &st, &t, 2, ss, tt, 0);
    if (!q) q = nd_fill(&e, &st, -1);               /* the overlap search */
    nd_release(&st);
    nd_release(&t);
    STEP(q);
  }
  {
    /* contractions and fused updates: their temporaries on every path */
    nd_tensor x = ND_UNSET, y = ND_UNSET, yt = ND_UNSET, z = ND_UNSET;
    int64_t s3[3] = {2, 3, 3}, sq[2] = {3, 3};
    STEP(nd_zeros(&e, &c3, ND_FLOAT64, 2, sq));
    nd_status q = nd_arange(&e, &x, ND_FLOAT64, 0, 18, 1);
    if (!q) q = nd_reshape(&e, &y, &x, 3, s3);
    if (!q) q = nd_transpose(&e, &yt, &y, 1, 2);        /* no view flattens it */
    if (!q) q = nd_tensordot(&e, &z, &yt, &y, 2, (int[]){1, 2}, (int[]){1, 2});
    nd_release(&z);
    if (!q) q = nd_kron(&e, &z, &y, &yt);
    nd_release(&z);
    if (!q) q = nd_cross(&e, &z, &y, &yt, 1);
    nd_release(&z);
    if (!q) q = nd_normalize(&e, &z, &yt, 2, 1, 1e-12);
    nd_release(&z);
    if (!q) q = nd_dist(&e, &z, &y, &yt, 2);
    nd_release(&z);
    if (!q) q = nd_addbmm(&e, &z, &c3, &y, &yt, 0.5, 2);
    nd_release(&z);
    if (!q) q = nd_addcmul(&e, &z, ND_NEW, &y, &yt, &y, 0.5);
    if (!q) q = nd_baddbmm(&e, &y, &y, &yt, &y, 1, 1); /* in place, overlapping */
    nd_release(&z);
    /* einsum: its plan (scratch), a sum, a merge copy, an intermediate */
    const nd_tensor *ops3[3] = {&y, &yt, &y};
    if (!q) q = nd_einsum(&e, &z, "ijk,ikj,ilm->jl", 3, ops3);
    nd_release(&z);
    if (!q) q = nd_einsum(&e, &z, "ijj->i", 1, ops3 + 1);
    nd_release(&z);
    nd_release(&yt), nd_release(&y), nd_release(&x);
    STEP(q);
  }
  {
    /* padding (a crop and a pad of one dim: through a temporary),
     * counting and encoding */
    nd_tensor x = ND_UNSET, y = ND_UNSET, z = ND_UNSET, wt = ND_UNSET;
    int64_t s2[2] = {3, 6}, pads[4] = {2, -1, 1, 1};
    double seven = 7;
    nd_status q = nd_arange(&e, &x, ND_INT64, 0, 18, 1);
    if (!q) q = nd_reshape(&e, &y, &x, 2, s2);
    if (!q) q = nd_pad(&e, &z, &y, 4, pads, ND_PAD_REFLECT, NULL);
    nd_release(&z);
    if (!q) q = nd_pad(&e, &z, &y, 4, pads, ND_PAD_CONSTANT, &seven);
    nd_release(&z);
    if (!q) q = nd_one_hot(&e, &z, &y, 20);
    nd_release(&z);
    if (!q) q = nd_arange(&e, &wt, ND_FLOAT32, 0, 18, 1); /* converted */
    if (!q) q = nd_bincount(&e, &z, &x, &wt, 30);
    nd_release(&z);
    if (!q) q = nd_bincount(&e, &z, &x, NULL, 0);
    nd_release(&z), nd_release(&wt), nd_release(&y), nd_release(&x);
    STEP(q);
  }
  {
    /* convolution: a dtype conversion, a weight copy, the tile, each
     * strategy */
    nd_tensor x = ND_UNSET, xr = ND_UNSET, w = ND_UNSET, wr = ND_UNSET,
              wt = ND_UNSET, b = ND_UNSET, z = ND_UNSET;
    int64_t xs[4] = {1, 4, 5, 5}, ws[4] = {6, 4, 3, 3}, w1[4] = {6, 4, 1, 1},
            wd[4] = {4, 1, 3, 3};
    nd_conv_options o = ND_CONV_OPTIONS_INIT, plain = ND_CONV_OPTIONS_INIT;
    o.padding[0] = o.padding[1] = 1;
    nd_status q = nd_arange(&e, &x, ND_FLOAT32, 0, 100, 1);
    if (!q) q = nd_reshape(&e, &xr, &x, 4, xs);
    if (!q) q = nd_arange(&e, &w, ND_FLOAT64, 0, 216, 1);
    if (!q) q = nd_reshape(&e, &wr, &w, 4, ws);
    if (!q) q = nd_transpose(&e, &wt, &wr, 2, 3);
    if (!q) q = nd_conv(&e, &z, 2, &xr, &wt, NULL, &o); /* im2col */
    nd_release(&z), nd_release(&wr), nd_release(&wt), nd_release(&w);
    if (!q) q = nd_arange(&e, &w, ND_FLOAT32, 0, 24, 1);
    if (!q) q = nd_reshape(&e, &wr, &w, 4, w1);
    if (!q) q = nd_arange(&e, &b, ND_FLOAT64, 0, 6, 1);
    if (!q) q = nd_conv(&e, &z, 2, &xr, &wr, &b, &plain); /* gemm */
    nd_release(&z), nd_release(&wr), nd_release(&w);
    o.groups = 4;
    if (!q) q = nd_arange(&e, &w, ND_FLOAT32, 0, 36, 1);
    if (!q) q = nd_reshape(&e, &wr, &w, 4, wd);
    if (!q) q = nd_conv(&e, &z, 2, &xr, &wr, NULL, &o); /* direct */
    nd_release(&z), nd_release(&wr), nd_release(&w), nd_release(&b),
        nd_release(&xr), nd_release(&x);
    STEP(q);
  }
  {
    /* pooling: max with indices (two results: the first goes when the
     * second fails), avg, adaptive, over a transposed input */
    nd_tensor x = ND_UNSET, y = ND_UNSET, yt = ND_UNSET, z = ND_UNSET,
              zi = ND_UNSET;
    int64_t s4[4] = {2, 3, 5, 6}, k2[2] = {3, 2}, st2[2] = {2, 1},
            p2[2] = {1, 1}, div = 3, osz[2] = {2, -1};
    nd_status q = nd_arange(&e, &x, ND_FLOAT32, 0, 180, 1);
    if (!q) q = nd_reshape(&e, &y, &x, 4, s4);
    if (!q) q = nd_transpose(&e, &yt, &y, 2, 3);
    if (!q) q = nd_max_pool(&e, &z, &zi, &yt, 2, k2, st2, p2, NULL, 1);
    nd_release(&z), nd_release(&zi);
    if (!q) q = nd_avg_pool(&e, &z, &yt, 2, k2, NULL, p2, 0, 0, &div);
    nd_release(&z);
    if (!q) q = nd_adaptive_avg_pool(&e, &z, &yt, 2, osz);
    nd_release(&z), nd_release(&yt), nd_release(&y), nd_release(&x);
    STEP(q);
  }
  {
    /* filtering (a result, a padded scratch and the taps) and resampling
     * (a result, the taps and row caches in one block) */
    nd_tensor x = ND_UNSET, y = ND_UNSET, k = ND_UNSET, z = ND_UNSET;
    int64_t s2[2] = {4, 5}, s4[4] = {1, 2, 3, 5}, sz[2] = {7, 4};
    double two[2] = {2, 1.5}, fill = 1;
    nd_status q = nd_arange(&e, &x, ND_FLOAT32, 0, 30, 1);
    if (!q) q = nd_arange(&e, &k, ND_INT32, 0, 4, 1);
    if (!q) q = nd_convolve(&e, &z, &x, &k, ND_FILTER_SAME);
    nd_release(&z);
    if (!q) q = nd_correlate(&e, &z, &k, &x, ND_FILTER_FULL);
    nd_release(&z), nd_release(&k);
    nd_tensor x2 = ND_UNSET;
    if (!q) q = nd_arange(&e, &x2, ND_FLOAT32, 0, 20, 1);
    if (!q) q = nd_reshape(&e, &y, &x2, 2, s2);
    nd_release(&x2);
    int64_t ks[2] = {3, 2};
    nd_tensor k6 = ND_UNSET;
    if (!q) q = nd_linspace(&e, &k6, ND_FLOAT64, -1, 1, 6);
    if (!q) q = nd_reshape(&e, &k, &k6, 2, ks);
    nd_release(&k6);
    if (!q) q = nd_convolve2d(&e, &z, &y, &k, ND_FILTER_FULL, ND_BOUNDARY_FILL, &fill);
    nd_release(&z);
    if (!q) q = nd_correlate2d(&e, &z, &y, &k, ND_FILTER_SAME, ND_BOUNDARY_SYMM, NULL);
    nd_release(&z), nd_release(&y);
    if (!q) q = nd_reshape(&e, &y, &x, 4, s4);
    if (!q) q = nd_interpolate(&e, &z, &y, sz, NULL, ND_INTERP_BICUBIC, 1);
    nd_release(&z);
    if (!q) q = nd_interpolate(&e, &z, &y, NULL, two, ND_INTERP_AREA, -1);
    nd_release(&z), nd_release(&k), nd_release(&y), nd_release(&x);
    STEP(q);
  }
  {
    /* float16 through float32: the widened copies, the float32 results
     * and their rounding (pooling with indices, an average, interpolate, a
     * convolution, a filter), and index_add_'s per-add rounding */
    nd_tensor x = ND_UNSET, y = ND_UNSET, k = ND_UNSET, w = ND_UNSET,
              ix = ND_UNSET, z = ND_UNSET, zi = ND_UNSET;
    int64_t s4[4] = {1, 2, 4, 5}, k2[2] = {2, 2}, sz[2] = {5, 3},
            ws[4] = {3, 2, 2, 2};
    nd_conv_options o = ND_CONV_OPTIONS_INIT;
    nd_status q = nd_arange(&e, &x, ND_FLOAT16, 0, 40, 1);
    if (!q) q = nd_reshape(&e, &y, &x, 4, s4);
    if (!q) q = nd_max_pool(&e, &z, &zi, &y, 2, k2, NULL, NULL, NULL, 0);
    nd_release(&z), nd_release(&zi);
    if (!q) q = nd_avg_pool(&e, &z, &y, 2, k2, NULL, NULL, 0, 1, NULL);
    nd_release(&z);
    if (!q) q = nd_interpolate(&e, &z, &y, sz, NULL, ND_INTERP_BILINEAR, -1);
    nd_release(&z);
    if (!q) q = nd_arange(&e, &k, ND_FLOAT16, 0, 24, 1);
    if (!q) q = nd_reshape(&e, &w, &k, 4, ws);
    if (!q) q = nd_conv(&e, &z, 2, &y, &w, NULL, &o);
    nd_release(&z);
    if (!q) q = nd_convolve(&e, &z, &x, &k, ND_FILTER_SAME);
    nd_release(&z);
    if (!q) q = nd_arange(&e, &ix, ND_INT64, 0, 24, 1);
    if (!q) q = nd_index_add(&e, &x, 0, &ix, &k, 1);
    nd_release(&ix), nd_release(&w), nd_release(&k), nd_release(&y),
        nd_release(&x);
    STEP(q);
  }
  {
    /* image files: libspng allocates through the hook too; a channel
     * conversion decodes into scratch; the file's bytes are scratch */
    nd_tensor im = ND_UNSET, back = ND_UNSET, fl = ND_UNSET;
    int64_t s3[3] = {6, 5, 3};
    void *bytes = NULL;
    int64_t nb = 0;
    char png[80];
    snprintf(png, sizeof png, "%s.png", npy);
    nd_status q = nd_arange(&e, &im, ND_UINT8, 0, 90, 1);
    if (!q) q = nd_reshape(&e, &back, &im, 3, s3);
    if (!q) q = nd_flip(&e, &fl, &back, 1, (int[]){0});
    nd_release(&back);
    if (!q) q = nd_image_encode(&e, &bytes, &nb, &fl, ND_IMAGE_PNG, 0, -1);
    if (!q) q = nd_image_decode(&e, &back, bytes, nb, 1);
    nd_image_free(bytes);
    bytes = NULL;
    nd_release(&back);
    if (!q) q = nd_image_encode(&e, &bytes, &nb, &fl, ND_IMAGE_JPEG, 80, -1);
    if (!q) q = nd_image_decode(&e, &back, bytes, nb, 0);
    nd_image_free(bytes);
    nd_release(&back);
    if (!q) q = nd_image_save(&e, png, &fl, 0, -1);
    if (!q) q = nd_image_load(&e, &back, png, 4);
    nd_release(&back), nd_release(&fl), nd_release(&im);
    remove(png);
    STEP(q);
  }
  {
    /* a 16-bit PNG: uint16 through spng, converted in scratch */
    nd_tensor im = ND_UNSET, back = ND_UNSET, fl = ND_UNSET;
    int64_t s3[3] = {6, 5, 3};
    void *bytes = NULL;
    int64_t nb = 0;
    nd_status q = nd_arange(&e, &im, ND_UINT16, 0, 90 * 701, 701);
    if (!q) q = nd_reshape(&e, &back, &im, 3, s3);
    if (!q) q = nd_flip(&e, &fl, &back, 1, (int[]){0});
    nd_release(&back);
    if (!q) q = nd_image_encode(&e, &bytes, &nb, &fl, ND_IMAGE_PNG, 0, -1);
    if (!q) q = nd_image_decode(&e, &back, bytes, nb, 4);
    nd_image_free(bytes);
    nd_release(&back), nd_release(&fl), nd_release(&im);
    STEP(q);
  }
  ok = 1;
out:
  nd_release(&a); nd_release(&b); nd_release(&v); nd_release(&c);
  nd_release(&m); nd_release(&r); nd_release(&s); nd_release(&l);
  nd_release(&k); nd_release(&w); nd_release(&c3);
  return ok;
}

/* ---- a Lua script in a fresh state ---------------------------------- */
static int lua_script(const char *file, int want_ok) {
  lua_State *L = luaL_newstate();
  if (!L) return 0;
  luaL_openlibs(L);
  lua_pushcfunction(L, luaopen_nd);
  int ok = lua_pcall(L, 0, 1, 0) == 0;
  if (ok) {
    lua_setglobal(L, "nd");
    ok = luaL_loadfile(L, file) == 0 && lua_pcall(L, 0, 0, 0) == 0;
  }
  if (!ok) {
    const char *msg = lua_tostring(L, -1);
    if (!msg || (!strstr(msg, "not enough memory") && !want_ok))
      PROBLEM("run %ld: not an out-of-memory error: %s\n", fail_at, msg ? msg : "?");
    if (want_ok) PROBLEM("clean run failed: %s\n", msg ? msg : "?");
  }
  lua_close(L);
  return ok;
}

int main(int argc, char **argv) {
  int lua = argc > 2 && !strcmp(argv[1], "lua");
  long cap = 2000, runs = 0;
  char npy[64];
  snprintf(npy, sizeof npy, "/tmp/nd-alloc-%d.npy", (int)getpid());
  nd_set_allocator(hook_alloc, hook_free, NULL);
  raw = 0; /* the default allocator's cache, flushed */
  for (fail_at = 1; fail_at <= cap; fail_at++) {
    long before = live;
    count = 0;
    long inj = injected;
    if (lua) lua_script(argv[2], 0);
    else c_script(npy);
    runs++;
    if (live != before)
      PROBLEM("run %ld: %ld blocks leaked\n", fail_at, live - before);
    if (raw)
      PROBLEM("run %ld: %ld calls to the C allocator bypassed the hook\n",
              fail_at, raw);
    raw = 0;
    if (injected == inj) break; /* the run needed fewer allocations */
  }
  fail_at = 0; /* nd works afterwards */
  long before = live;
  if (!(lua ? lua_script(argv[2], 1) : c_script(npy)))
    PROBLEM("the clean run after the sweep failed\n");
  if (live != before) PROBLEM("clean run: %ld blocks leaked\n", live - before);
  raw_clean = raw;
  if (raw)
    PROBLEM("clean run: %ld calls to the C allocator bypassed the hook\n", raw);
  remove(npy);
  printf("alloc sweep %s: %ld runs, %ld injected failures, %ld raw allocator "
         "calls in the clean run, %d problems\n",
         lua ? "lua" : "c", runs, injected, raw_clean, problems);
  return problems != 0;
}
