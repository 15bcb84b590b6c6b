/* The dtype table, generated from the one X-macro list in nd.h. */
#include "core.h"

static const struct {
  const char *name;
  int64_t size;
  char kind;
} dtypes[] = {
#define X(E, name, T, kind) {#name, (int64_t)sizeof(T), kind},
    ND_DTYPES(X)
#undef X
};

static int valid(int d) { return d >= 0 && d < ND_NDTYPES; }

const char *nd_dtype_name(int d) { return valid(d) ? dtypes[d].name : "?"; }
int64_t nd_dtype_size(int d) { return valid(d) ? dtypes[d].size : 0; }
char nd_dtype_kind(int d) { return valid(d) ? dtypes[d].kind : '?'; }

int nd_dtype_from_name(const char *name) {
  for (int d = 0; d < ND_NDTYPES; d++)
    if (strcmp(name, dtypes[d].name) == 0) return d;
  return -1;
}

nd_status nd_check_dtype(nd_err *e, const char *fn, int d) {
  if (valid(d)) return ND_OK;
  return nd_fail(e, ND_EINVAL, "%s: unknown dtype %d", fn, d);
}

/* For these six dtypes PyTorch's promotion of two tensors is a total order:
 * bool < uint8 < int32 < int64 < float32 < float64. */
static int rank(int d) {
  static const int r[ND_NDTYPES] = {
      [ND_BOOL] = 0, [ND_UINT8] = 1, [ND_INT32] = 2,
      [ND_INT64] = 3, [ND_FLOAT32] = 4, [ND_FLOAT64] = 5};
  return r[d];
}
int nd_promote_types(int a, int b) { return rank(a) >= rank(b) ? a : b; }
