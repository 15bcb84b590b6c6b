/* dtype conversion, the one place values change type: n elements are
 * staged through a small buffer of double (or int64 when both sides are
 * integers, so no precision is lost), giving O(dtypes) loops instead of
 * O(dtypes^2). Floats to integers truncate and saturate, NaN gives 0;
 * integers to narrower integers wrap; anything nonzero is true. */
#include "core.h"

enum { CHUNK = 256 };

#define CV_LOAD(E, name, T, kind)                                           \
  case ND_##E:                                                              \
    for (int64_t i = 0; i < n; i++, s += st)                                \
      if (via_int) bi[i] = kind == 'f' ? nd_f2i(*(const T *)s, INT64_MIN, INT64_MAX) \
                                       : (int64_t) * (const T *)s;          \
      else bd[i] = (double)*(const T *)s;                                   \
    break;
static void load(int dt, const char *s, int64_t st, int64_t n, int via_int,
                 double *bd, int64_t *bi) {
  switch (dt) { ND_DTYPES(CV_LOAD) }
}

#define CV_STORE(E, name, T, kind)                                          \
  case ND_##E:                                                              \
    for (int64_t i = 0; i < n; i++, d += st)                                \
      if (kind == 'b') *(T *)d = via_int ? bi[i] != 0 : bd[i] != 0;         \
      else if (kind == 'f') *(T *)d = via_int ? (T)bi[i] : (T)bd[i];        \
      else if (via_int) *(T *)d = (T)(uint64_t)bi[i];                       \
      else *(T *)d = (T)nd_f2i(bd[i], lo, hi);                              \
    break;
static void store(int dt, char *d, int64_t st, int64_t n, int via_int,
                  const double *bd, const int64_t *bi) {
  int64_t lo = dt == ND_INT32 ? INT32_MIN : dt == ND_INT64 ? INT64_MIN : 0;
  int64_t hi = dt == ND_INT32 ? INT32_MAX : dt == ND_INT64 ? INT64_MAX : 255;
  switch (dt) { ND_DTYPES(CV_STORE) }
}

void nd_convert(int ddt, char *d, int64_t dst, int sdt, const char *s,
                int64_t sst, int64_t n) {
  double bd[CHUNK];
  int64_t bi[CHUNK];
  int via_int = nd_dtype_kind(sdt) != 'f' && nd_dtype_kind(ddt) != 'f';
  for (int64_t done = 0; done < n; done += CHUNK) {
    int64_t m = n - done < CHUNK ? n - done : CHUNK;
    load(sdt, s, sst, m, via_int, bd, bi);
    store(ddt, d, dst, m, via_int, bd, bi);
    s += m * sst;
    d += m * dst;
  }
}

