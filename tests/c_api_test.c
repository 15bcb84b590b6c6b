/* The embedding C API without Lua: lifecycle, nd_wrap's release callback,
 * views, copies, the allocator hook, elements, constructors, the random
 * generator, and error statuses. Links libnd.a (or -lnd via pkg-config).
 * Prints "N passed, N failed" and exits nonzero on failure. */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */
#include "nd.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

#define HAS(e, frag) CHECK(strstr((e).msg, (frag)) != NULL)

static nd_err fresh(void) {
  nd_err e;
  memset(&e, 0, sizeof e);
  return e;
}

static int is_unset(const nd_tensor *t) { return t->storage == NULL; }

/* ---- lifecycle and introspection ---- */
static void test_create(void) {
  nd_err e = fresh();
  nd_tensor a = ND_UNSET;
  int64_t sz[4] = {1, 2, 3, 4};
  OK(nd_zeros(&e, &a, ND_FLOAT32, 4, sz));
  CHECK(nd_numel(&a) == 24);
  CHECK(a.stride[0] == 24 && a.stride[1] == 12 && a.stride[2] == 4 &&
        a.stride[3] == 1);
  CHECK(a.offset == 0 && a.ndim == 4 && a.dtype == ND_FLOAT32);
  CHECK(nd_is_contiguous(&a));
  CHECK(((uintptr_t)nd_data(&a) & 63) == 0); /* 64-byte aligned */
  float *p = nd_data(&a);
  int zero = 1;
  for (int i = 0; i < 24; i++) zero &= p[i] == 0.0f;
  CHECK(zero);
  CHECK(a.storage->refs == 1);
  nd_release(&a);
  CHECK(is_unset(&a));
  nd_release(&a); /* releasing an unset header is harmless */

  nd_tensor s = ND_UNSET; /* 0-d: one element */
  OK(nd_empty(&e, &s, ND_INT64, 0, NULL));
  CHECK(nd_numel(&s) == 1 && s.ndim == 0);
  nd_release(&s);

  nd_tensor z = ND_UNSET; /* size-0 dim */
  int64_t zs[2] = {0, 3};
  OK(nd_zeros(&e, &z, ND_FLOAT64, 2, zs));
  CHECK(nd_numel(&z) == 0 && z.stride[0] == 3 && z.stride[1] == 1);
  CHECK(nd_is_contiguous(&z));
  nd_release(&z);

  CHECK(strcmp(nd_dtype_name(ND_UINT8), "uint8") == 0);
  CHECK(nd_dtype_from_name("bool") == ND_BOOL);
  CHECK(nd_dtype_from_name("complex64") == -1);
  CHECK(nd_dtype_size(ND_INT32) == 4 && nd_dtype_size(ND_FLOAT64) == 8);
}

/* ---- nd_wrap: zero-copy host memory, release once after the last view ---- */
static int released;
static void *released_data;
static void on_release(void *data, void *ctx) {
  released++;
  released_data = data;
  *(int *)ctx += 1;
}

static void test_wrap(void) {
  nd_err e = fresh();
  double host[6] = {1, 2, 3, 4, 5, 6};
  int ctx = 0;
  int64_t sz[2] = {2, 3};
  nd_tensor a = ND_UNSET, at = ND_UNSET, row = ND_UNSET, col = ND_UNSET;
  released = 0;
  OK(nd_wrap(&e, &a, host, sizeof host, ND_FLOAT64, 2, sz, NULL, on_release,
             &ctx));
  CHECK(nd_data(&a) == (void *)host); /* zero-copy */
  OK(nd_transpose(&e, &at, &a, 0, 1));
  OK(nd_select(&e, &row, &a, 0, 1));
  OK(nd_narrow(&e, &col, &at, 0, 2, 1));
  CHECK(a.storage->refs == 4);
  int64_t ix[2] = {2, 1};
  double v = 0;
  OK(nd_get(&e, &at, ix, &v));
  CHECK(v == 6); /* at[2][1] = a[1][2] */
  int64_t r1 = 0;
  OK(nd_get(&e, &row, &r1, &v));
  CHECK(v == 4);
  int64_t c0[2] = {0, 1};
  OK(nd_set(&e, &col, c0, 60)); /* col is at[2:3, :] = a[:, 2] */
  CHECK(host[5] == 60);          /* writes reach the host memory */
  nd_release(&a);
  CHECK(released == 0);
  nd_release(&at);
  nd_release(&row);
  CHECK(released == 0);
  nd_release(&col); /* the last one */
  CHECK(released == 1 && released_data == (void *)host && ctx == 1);

  /* Explicit strides (column-major) and a NULL release: nothing is freed. */
  int64_t st[2] = {1, 2};
  nd_tensor f = ND_UNSET;
  OK(nd_wrap(&e, &f, host, sizeof host, ND_FLOAT64, 2, sz, st, NULL, NULL));
  CHECK(!nd_is_contiguous(&f));
  int64_t i01[2] = {0, 1};
  OK(nd_get(&e, &f, i01, &v));
  CHECK(v == 3);
  nd_release(&f);
  CHECK(released == 1);

  /* Refused: elements beyond nbytes, negative sizes, NULL data. */
  nd_tensor bad = ND_UNSET;
  e = fresh();
  CHECK(nd_wrap(&e, &bad, host, 5 * sizeof(double), ND_FLOAT64, 2, sz, NULL,
                on_release, &ctx) == ND_EINVAL);
  HAS(e, "wrap:");
  HAS(e, "outside the storage");
  CHECK(is_unset(&bad) && released == 1); /* no callback for a refusal */
  int64_t neg[1] = {-2};
  e = fresh();
  CHECK(nd_wrap(&e, &bad, host, sizeof host, ND_FLOAT64, 1, neg, NULL, NULL,
                NULL) == ND_EINVAL);
  HAS(e, "negative");
  e = fresh();
  CHECK(nd_wrap(&e, &bad, NULL, 8, ND_FLOAT64, 1, sz, NULL, NULL, NULL) ==
        ND_EINVAL);
  HAS(e, "NULL");
  e = fresh();
  CHECK(nd_wrap(&e, &bad, host, -1, ND_FLOAT64, 1, sz, NULL, NULL, NULL) ==
        ND_EINVAL);
  HAS(e, "negative byte count");
  int64_t big_stride[1] = {INT64_MAX};
  e = fresh();
  int64_t two[1] = {2};
  CHECK(nd_wrap(&e, &bad, host, sizeof host, ND_FLOAT64, 1, two, big_stride,
                NULL, NULL) != ND_OK);
  CHECK(is_unset(&bad));
}

/* ---- retain/release through nd_share ---- */
static void test_share(void) {
  nd_err e = fresh();
  nd_tensor a = ND_UNSET, b = ND_UNSET;
  int64_t n = 4;
  OK(nd_zeros(&e, &a, ND_INT32, 1, &n));
  nd_share(&b, &a);
  CHECK(nd_same_storage(&a, &b) && a.storage->refs == 2);
  nd_storage_retain(a.storage);
  CHECK(a.storage->refs == 3);
  nd_storage_release(a.storage);
  nd_release(&a);
  CHECK(b.storage->refs == 1);
  int32_t *p = nd_data(&b);
  p[3] = 7; /* still valid memory */
  nd_release(&b);
}

/* ---- views, contiguous, copy ---- */
static void test_views_copies(void) {
  nd_err e = fresh();
  nd_tensor a = ND_UNSET, at = ND_UNSET, c = ND_UNSET, same = ND_UNSET;
  int64_t sz[2] = {2, 3};
  OK(nd_empty(&e, &a, ND_FLOAT64, 2, sz));
  double *p = nd_data(&a);
  for (int i = 0; i < 6; i++) p[i] = i;
  OK(nd_transpose(&e, &at, &a, 0, 1));
  CHECK(at.size[0] == 3 && at.stride[0] == 1 && at.stride[1] == 3);
  CHECK(!nd_is_contiguous(&at));
  OK(nd_contiguous(&e, &c, &at)); /* a compact copy */
  CHECK(!nd_same_storage(&c, &a) && nd_is_contiguous(&c));
  double *q = nd_data(&c);
  CHECK(q[0] == 0 && q[1] == 3 && q[2] == 1 && q[5] == 5);
  OK(nd_contiguous(&e, &same, &a)); /* already contiguous: shared */
  CHECK(nd_same_storage(&same, &a));

  /* copy converts dtype and broadcasts */
  nd_tensor d = ND_UNSET, row = ND_UNSET;
  OK(nd_zeros(&e, &d, ND_INT32, 2, sz));
  OK(nd_select(&e, &row, &a, 0, 1)); /* {3, 4, 5} */
  OK(nd_copy(&e, &d, &row));
  int32_t *r = nd_data(&d);
  CHECK(r[0] == 3 && r[2] == 5 && r[3] == 3 && r[5] == 5);

  /* copy into an expanded view is refused */
  nd_tensor one = ND_UNSET, ex = ND_UNSET;
  int64_t n1 = 1, n3 = 3;
  OK(nd_zeros(&e, &one, ND_FLOAT64, 1, &n1));
  OK(nd_expand(&e, &ex, &one, 1, &n3));
  e = fresh();
  CHECK(nd_copy(&e, &ex, &row) == ND_EINVAL);
  CHECK(strlen(e.msg) > 0);

  /* clone and to_dtype */
  nd_tensor cl = ND_UNSET, f32 = ND_UNSET;
  OK(nd_clone(&e, &cl, &at));
  OK(nd_to_dtype(&e, &f32, &at, ND_FLOAT32));
  CHECK(f32.dtype == ND_FLOAT32 && ((float *)nd_data(&f32))[1] == 3.0f);

  nd_tensor *all[] = {&a, &at, &c, &same, &d, &row, &one, &ex, &cl, &f32};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) nd_release(all[i]);
}

/* ---- the allocator hook ---- */
typedef struct { int allocs, frees; int64_t live; int fail; } counter;
static void *count_alloc(size_t n, size_t align, void *ud) {
  counter *c = ud;
  if (c->fail) return NULL;
  void *p = NULL;
  if (posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align,
                     n ? n : 1))
    return NULL;
  c->allocs++;
  c->live += (int64_t)n;
  return p;
}
static void count_free(void *p, size_t n, void *ud) {
  counter *c = ud;
  c->frees++;
  c->live -= (int64_t)n;
  free(p);
}

static void test_allocator(void) {
  nd_err e = fresh();
  counter c = {0, 0, 0, 0};
  nd_tensor before = ND_UNSET; /* from the default allocator */
  int64_t n = 10;
  OK(nd_zeros(&e, &before, ND_FLOAT64, 1, &n));
  nd_set_allocator(count_alloc, count_free, &c);
  nd_tensor a = ND_UNSET, b = ND_UNSET, v = ND_UNSET;
  int64_t sz[2] = {3, 5};
  OK(nd_zeros(&e, &a, ND_FLOAT64, 2, sz));
  OK(nd_transpose(&e, &v, &a, 0, 1)); /* views allocate nothing */
  OK(nd_clone(&e, &b, &v));
  /* two headers and two element buffers: every block comes from the hook */
  CHECK(c.allocs == 4 && c.frees == 0 && c.live > 2 * 15 * 8);
  CHECK(((uintptr_t)nd_data(&a) & 63) == 0);
  nd_release(&a);
  CHECK(c.frees == 0); /* v keeps it */
  nd_release(&v);
  CHECK(c.frees == 2);
  /* Failing allocations come back as ND_ENOMEM, output unset. */
  c.fail = 1;
  nd_tensor x = ND_UNSET;
  e = fresh();
  CHECK(nd_empty(&e, &x, ND_FLOAT32, 2, sz) == ND_ENOMEM);
  HAS(e, "not enough memory");
  CHECK(is_unset(&x));
  c.fail = 0;
  /* Restoring the default while b is alive: b still goes to count_free. */
  nd_set_allocator(NULL, NULL, NULL);
  nd_release(&b);
  CHECK(c.allocs == 4 && c.frees == 4 && c.live == 0);
  nd_release(&before); /* default allocator's storage, default free */
  nd_tensor y = ND_UNSET;
  OK(nd_empty(&e, &y, ND_FLOAT32, 2, sz));
  CHECK(c.allocs == 4);
  nd_release(&y);
}

/* ---- elements ---- */
static void test_elements(void) {
  nd_err e = fresh();
  nd_tensor a = ND_UNSET;
  int64_t sz[2] = {2, 2};
  OK(nd_zeros(&e, &a, ND_INT64, 2, sz));
  int64_t ix[2] = {1, 0};
  int64_t big = ((int64_t)1 << 60) + 1, got = 0;
  OK(nd_set_i64(&e, &a, ix, big));
  OK(nd_get_i64(&e, &a, ix, &got));
  CHECK(got == big); /* exact beyond 2^53 */
  int64_t bad[2] = {2, 0};
  double v;
  e = fresh();
  CHECK(nd_get(&e, &a, bad, &v) == ND_EINVAL);
  HAS(e, "get: index 2 out of range for dim 0 of size 2");
  int64_t negi[2] = {0, -1};
  e = fresh();
  CHECK(nd_set(&e, &a, negi, 1) == ND_EINVAL);
  HAS(e, "set:");
  nd_release(&a);

  nd_tensor u = ND_UNSET, f = ND_UNSET;
  int64_t one = 1, zero = 0;
  OK(nd_empty(&e, &u, ND_UINT8, 1, &one));
  e = fresh(); /* a value the dtype cannot hold is refused, nothing written */
  CHECK(nd_set(&e, &u, &zero, 300.7) == ND_EINVAL);
  HAS(e, "value 300.69999999999999 cannot be converted to dtype uint8");
  e = fresh();
  CHECK(nd_set(&e, &u, &zero, NAN) == ND_EINVAL);
  OK(nd_set(&e, &u, &zero, 255.7)); /* truncates toward zero */
  OK(nd_get(&e, &u, &zero, &v));
  CHECK(v == 255);
  nd_operand top = {NULL, ND_UINT64, 0, -1}; /* 2^64 - 1 */
  e = fresh();
  CHECK(nd_set_scalar(&e, &u, &zero, &top) == ND_EINVAL);
  OK(nd_fill(&e, &u, NAN)); /* a copy's conversion: NaN becomes 0, no UB */
  OK(nd_get(&e, &u, &zero, &v));
  CHECK(v == 0);
  OK(nd_empty(&e, &f, ND_FLOAT32, 1, &one));
  OK(nd_fill(&e, &f, 2.5));
  OK(nd_get(&e, &f, &zero, &v));
  CHECK(v == 2.5);
  nd_release(&u);
  nd_release(&f);
}

/* ---- float16 / bfloat16: uint16_t bits, the conversions public ---- */
static void test_half(void) {
  nd_err e = fresh();
  CHECK(nd_float_to_half(1.0f) == 0x3C00 && nd_half_to_float(0x3C00) == 1.0f);
  CHECK(nd_float_to_half(65520.0f) == 0x7C00);        /* overflow: inf */
  CHECK(nd_float_to_half(1.0f + 0x1p-11f) == 0x3C00); /* a tie: even */
  CHECK(nd_float_to_bf16(1.0f) == 0x3F80 && nd_bf16_to_float(0x4000) == 2.0f);
  uint16_t q = nd_float_to_half(NAN);
  CHECK((q & 0x7C00) == 0x7C00 && (q & 0x200)); /* a quiet NaN */
  uint16_t host[4] = {0x3C00, 0x4000, 0xC200, 0}; /* 1, 2, -3, 0 */
  nd_tensor h = ND_UNSET, s = ND_UNSET;
  int64_t n = 4, zero = 0, two = 2;
  OK(nd_wrap(&e, &h, host, sizeof host, ND_FLOAT16, 1, &n, NULL, NULL, NULL));
  double v;
  OK(nd_get(&e, &h, &two, &v));
  CHECK(v == -3);
  OK(nd_set(&e, &h, &zero, 0.5));
  CHECK(host[0] == 0x3800);
  e = fresh();
  CHECK(nd_set(&e, &h, &zero, 1e6) == ND_EINVAL); /* beyond 65504 */
  HAS(e, "cannot be converted to dtype float16");
  OK(nd_reduce(&e, &s, ND_R_SUM, &h, 0, NULL, 0));
  CHECK(s.dtype == ND_FLOAT16);
  OK(nd_get(&e, &s, NULL, &v));
  CHECK(v == -0.5);
  nd_release(&s);
  nd_release(&h);
}

/* ---- constructors ---- */
static void test_construct(void) {
  nd_err e = fresh();
  nd_tensor r = ND_UNSET, l = ND_UNSET, i = ND_UNSET, h = ND_UNSET;
  OK(nd_arange(&e, &r, ND_INT64, 2, 11, 3)); /* 2 5 8 */
  CHECK(r.size[0] == 3 && ((int64_t *)nd_data(&r))[2] == 8);
  OK(nd_arange(&e, &h, ND_INT64, 0, 2.5, 0.5)); /* 0 0 1 1 2, as PyTorch */
  int64_t *hp = nd_data(&h);
  CHECK(h.size[0] == 5 && hp[1] == 0 && hp[2] == 1 && hp[4] == 2);
  OK(nd_linspace(&e, &l, ND_FLOAT64, 0, 1, 5));
  double *lp = nd_data(&l);
  CHECK(lp[0] == 0 && lp[1] == 0.25 && lp[4] == 1);
  OK(nd_eye(&e, &i, ND_FLOAT32, 2, 3));
  float *ip = nd_data(&i);
  CHECK(ip[0] == 1 && ip[1] == 0 && ip[4] == 1 && ip[5] == 0);
  nd_release(&r);
  nd_release(&h);
  nd_release(&l);
  nd_release(&i);
  nd_tensor x = ND_UNSET;
  e = fresh();
  CHECK(nd_arange(&e, &x, ND_FLOAT64, 0, 1, 0) == ND_EINVAL);
  HAS(e, "arange:");
  e = fresh();
  CHECK(nd_linspace(&e, &x, ND_FLOAT64, 0, 1, -1) == ND_EINVAL);
  HAS(e, "linspace:");
  e = fresh();
  CHECK(nd_eye(&e, &x, ND_FLOAT64, -1, 2) == ND_EINVAL);
  HAS(e, "eye:");
  CHECK(is_unset(&x));
}

/* ---- random: the documented sequence, from a generator the host owns ---- */
static void test_random(void) {
  nd_generator g;
  nd_generator_seed(&g, 42);
  /* xoshiro256** seeded by splitmix64(42), checked against an independent
   * Python implementation. */
  CHECK(nd_generator_next(&g) == 0x15780b2e0c2ec716ULL);
  CHECK(nd_generator_next(&g) == 0x6104d9866d113a7eULL);
  CHECK(nd_generator_next(&g) == 0xae17533239e499a1ULL);
  nd_err e = fresh();
  nd_tensor u = ND_UNSET, k = ND_UNSET, perm = ND_UNSET;
  int64_t n = 3;
  nd_generator_seed(&g, 42);
  OK(nd_empty(&e, &u, ND_FLOAT64, 1, &n));
  OK(nd_rand(&e, &u, &g));
  double *p = nd_data(&u);
  CHECK(p[0] == 0.08386297105988216 && p[1] == 0.3789802506626686 &&
        p[2] == 0.6800434110281394);
  OK(nd_empty(&e, &k, ND_INT32, 1, &n));
  e = fresh();
  CHECK(nd_rand(&e, &k, &g) == ND_EINVAL);
  HAS(e, "rand: dtype int32");
  e = fresh();
  CHECK(nd_randint(&e, &k, &g, 5, 5) == ND_EINVAL);
  HAS(e, "randint: low 5");
  OK(nd_randint(&e, &k, &g, -3, 4));
  int32_t *kp = nd_data(&k);
  int inrange = 1;
  for (int j = 0; j < 3; j++) inrange &= kp[j] >= -3 && kp[j] < 4;
  CHECK(inrange);
  e = fresh();
  CHECK(nd_rand(&e, &u, NULL) == ND_EINVAL);
  HAS(e, "rand: generator is NULL");
  e = fresh();
  CHECK(nd_normal(&e, &u, &g, 0, -1) == ND_EINVAL);
  HAS(e, "normal:");
  e = fresh();
  CHECK(nd_randperm(&e, &perm, &g, -1) == ND_EINVAL);
  HAS(e, "randperm: n must be >= 0, got -1");
  CHECK(is_unset(&perm));
  OK(nd_randperm(&e, &perm, &g, 5));
  int64_t *pp = nd_data(&perm), seen = 0;
  for (int j = 0; j < 5; j++) seen |= 1 << pp[j];
  CHECK(seen == 31);
  nd_release(&u);
  nd_release(&k);
  nd_release(&perm);
}

/* ---- errors: status, message, nothing leaked, output unset ---- */
static void test_errors(void) {
  nd_err e = fresh();
  nd_tensor x = ND_UNSET;
  int64_t neg[2] = {2, -3};
  CHECK(nd_empty(&e, &x, ND_FLOAT64, 2, neg) == ND_EINVAL);
  HAS(e, "empty: negative size -3 in {2,-3}");
  CHECK(is_unset(&x));
  int64_t huge[2] = {(int64_t)1 << 40, (int64_t)1 << 40};
  e = fresh();
  CHECK(nd_empty(&e, &x, ND_FLOAT64, 2, huge) == ND_EOVERFLOW);
  HAS(e, "empty:");
  int64_t big[1] = {(int64_t)1 << 50}; /* 8 PiB: beyond physical memory */
  e = fresh();
  CHECK(nd_empty(&e, &x, ND_FLOAT64, 1, big) == ND_ENOMEM);
  HAS(e, "not enough memory");
  e = fresh();
  CHECK(nd_empty(&e, &x, 42, 1, big) == ND_EINVAL);
  HAS(e, "unknown dtype 42");
  int64_t sz[1] = {1};
  e = fresh();
  CHECK(nd_empty(&e, &x, ND_FLOAT64, ND_MAX_DIMS + 1, sz) == ND_EINVAL);
  HAS(e, "dims");
  CHECK(is_unset(&x));
  nd_tensor a = ND_UNSET, v = ND_UNSET;
  int64_t s2[2] = {2, 3};
  OK(nd_zeros(&e, &a, ND_FLOAT64, 2, s2));
  e = fresh();
  CHECK(nd_select(&e, &v, &a, 0, 2) == ND_EINVAL);
  CHECK(strlen(e.msg) > 0 && is_unset(&v));
  e = fresh();
  CHECK(nd_transpose(&e, &v, &a, 0, 5) == ND_EINVAL);
  CHECK(is_unset(&v));
  int64_t s32[2] = {3, 2};
  e = fresh();
  OK(nd_view(&e, &v, &a, 2, s32));
  nd_release(&v);
  nd_tensor at = ND_UNSET;
  OK(nd_transpose(&e, &at, &a, 0, 1));
  e = fresh();
  int64_t flat[1] = {6};
  CHECK(nd_view(&e, &v, &at, 1, flat) == ND_EINVAL); /* needs reshape */
  CHECK(is_unset(&v));
  e = fresh();
  e.base = 1; /* messages as the Lua binding shows them: 1-based */
  CHECK(nd_select(&e, &v, &a, 1, 3) == ND_EINVAL);
  HAS(e, "4");
  nd_release(&at);
  nd_release(&a);
}

int main(void) {
  test_create();
  test_wrap();
  test_share();
  test_views_copies();
  test_allocator();
  test_elements();
  test_half();
  test_construct();
  test_random();
  test_errors();
  return check_report();
}
