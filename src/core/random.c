/* xoshiro256** (Blackman and Vigna), seeded through splitmix64: the same
 * seed gives the same numbers on every platform. Normals use the Box-Muller
 * transform on two uniforms (one normal per pair, so a seed's sequence
 * does not depend on how the tensor is split). */
#include "core.h"
#include <math.h>

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void nd_rng_seed(nd_rng *r, uint64_t seed) {
  for (int i = 0; i < 4; i++) { /* splitmix64 */
    uint64_t z = (seed += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    r->s[i] = z ^ (z >> 31);
  }
}

uint64_t nd_rng_next(nd_rng *r) {
  uint64_t *s = r->s, res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return res;
}

static nd_rng default_rng = {{0x180ec6d33cfd0abaULL, 0xd5a61266f0c9392cULL,
                              0xa9582618e03fc9aaULL, 0x39abdc4529b1661cULL}};
nd_rng *nd_default_rng(void) { return &default_rng; }

static double uniform(nd_rng *r) { /* 53 random bits in [0, 1) */
  return (double)(nd_rng_next(r) >> 11) * 0x1.0p-53;
}
/* 24 bits for float32, so rounding to float never gives 1.0. */
static double uniform24(nd_rng *r) {
  return (double)(nd_rng_next(r) >> 40) * 0x1.0p-24;
}

/* Values are generated in row-major order into a float64 or int64 buffer
 * tensor, then copied (converting) into t, whatever t's layout. */
typedef enum { UNIFORM, NORMAL, INTEGER } dist;

static nd_status generate(nd_err *e, const char *fn, const nd_tensor *t,
                          nd_rng *r, dist d, int64_t lo, int64_t hi) {
  nd_tensor buf;
  if (nd_check_writable(e, fn, t)) return e->code;
  int btype = d == INTEGER ? ND_INT64 : ND_FLOAT64;
  /* A compact tensor of the buffer's dtype is written directly. */
  int direct = t->dtype == btype && nd_is_contiguous(t);
  if (direct)
    nd_share(&buf, t);
  else if (nd_alloc_tensor(e, &buf, btype, t->ndim, t->size, false))
    return e->code;
  int64_t n = nd_numel(t);
  double (*unif)(nd_rng *) = t->dtype == ND_FLOAT32 ? uniform24 : uniform;
  if (d == INTEGER) {
    int64_t *p = nd_data(&buf);
    uint64_t span = (uint64_t)hi - (uint64_t)lo;
    /* Rejection keeps every value equally likely. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % span;
    for (int64_t i = 0; i < n; i++) {
      uint64_t x;
      do x = nd_rng_next(r); while (x >= limit);
      p[i] = (int64_t)((uint64_t)lo + x % span);
    }
  } else {
    double *p = nd_data(&buf);
    for (int64_t i = 0; i < n; i++) {
      if (d == UNIFORM) {
        p[i] = unif(r);
      } else {
        double u1 = 1.0 - uniform(r), u2 = uniform(r); /* u1 in (0, 1] */
        p[i] = sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
      }
    }
  }
  nd_status st = direct ? ND_OK : nd_copy(e, t, &buf);
  nd_release(&buf);
  return st;
}

static nd_status floating(nd_err *e, const char *fn, const nd_tensor *t) {
  if (nd_dtype_kind(t->dtype) == 'f') return ND_OK;
  return nd_fail(e, ND_EINVAL, "%s: dtype %s is not a floating dtype "
                 "(float32 or float64)", fn, nd_dtype_name(t->dtype));
}

nd_status nd_rand(nd_err *e, const nd_tensor *t, nd_rng *r) {
  if (floating(e, "rand", t)) return e->code;
  return generate(e, "rand", t, r, UNIFORM, 0, 0);
}
nd_status nd_randn(nd_err *e, const nd_tensor *t, nd_rng *r) {
  if (floating(e, "randn", t)) return e->code;
  return generate(e, "randn", t, r, NORMAL, 0, 0);
}

/* Whether every integer in [lo, hi) is a value of dtype. */
static int representable(int dtype, int64_t lo, int64_t hi) {
  switch (dtype) {
  case ND_INT32: return lo >= INT32_MIN && hi - 1 <= INT32_MAX;
  case ND_UINT8: return lo >= 0 && hi - 1 <= 255;
  case ND_BOOL: return lo >= 0 && hi - 1 <= 1;
  case ND_FLOAT32: return lo >= -(1LL << 24) && hi - 1 <= 1LL << 24;
  case ND_FLOAT64: return lo >= -(1LL << 53) && hi - 1 <= 1LL << 53;
  default: return 1;
  }
}

nd_status nd_randint(nd_err *e, const nd_tensor *t, nd_rng *r, int64_t lo,
                     int64_t hi) {
  if (lo >= hi)
    return nd_fail(e, ND_EINVAL, "randint: low %lld must be below high %lld",
                   (long long)lo, (long long)hi);
  if (!representable(t->dtype, lo, hi))
    return nd_fail(e, ND_EINVAL, "randint: range [%lld, %lld) does not fit "
                   "dtype %s", (long long)lo, (long long)hi,
                   nd_dtype_name(t->dtype));
  return generate(e, "randint", t, r, INTEGER, lo, hi);
}
