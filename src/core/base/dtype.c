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

void nd_dtype_bounds(int d, int64_t *lo, uint64_t *hi) {
  int bits = (int)(8 * nd_dtype_size(d));
  char k = nd_dtype_kind(d);
  if (k == 'b' || bits == 0) {
    *lo = 0, *hi = 1;
  } else if (k == 'u') {
    *lo = 0, *hi = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
  } else {
    *hi = ((uint64_t)1 << (bits - 1)) - 1, *lo = -(int64_t)*hi - 1;
  }
}

nd_status nd_check_dtype(nd_err *e, const char *fn, int d) {
  if (valid(d)) return ND_OK;
  return nd_fail(e, ND_EINVAL, "%s: unknown dtype %d", fn, d);
}

/* The promotion of two tensors' dtypes: PyTorch's table for the pairs it
 * defines (bool, uint8, int8, int16, int32, int64, float32, float64),
 * NumPy 1.24's for pairs with uint16, uint32 or uint64 (which PyTorch 1.13
 * lacks). Not an order: uint8 + int8 is int16, uint64 + int64 float64.
 * Rows and columns in ND_DTYPES order; tools/gen_dtype_fixtures.py checks
 * every pair against torch.promote_types / numpy.result_type. */
#define F32 ND_FLOAT32
#define F64 ND_FLOAT64
#define I32 ND_INT32
#define I64 ND_INT64
#define U8 ND_UINT8
#define B ND_BOOL
#define I8 ND_INT8
#define I16 ND_INT16
#define U16 ND_UINT16
#define U32 ND_UINT32
#define U64 ND_UINT64
static const signed char promotion[ND_NDTYPES][ND_NDTYPES] = {
  {F32, F64, F32, F32, F32, F32, F32, F32, F32, F64, F64}, /* float32 */
  {F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64}, /* float64 */
  {F32, F64, I32, I64, I32, I32, I32, I32, I32, I64, F64}, /* int32 */
  {F32, F64, I64, I64, I64, I64, I64, I64, I64, I64, F64}, /* int64 */
  {F32, F64, I32, I64, U8, U8, I16, I16, U16, U32, U64},   /* uint8 */
  {F32, F64, I32, I64, U8, B, I8, I16, U16, U32, U64},     /* bool */
  {F32, F64, I32, I64, I16, I8, I8, I16, I32, I64, F64},   /* int8 */
  {F32, F64, I32, I64, I16, I16, I16, I16, I32, I64, F64}, /* int16 */
  {F32, F64, I32, I64, U16, U16, I32, I32, U16, U32, U64}, /* uint16 */
  {F64, F64, I64, I64, U32, U32, I64, I64, U32, U32, U64}, /* uint32 */
  {F64, F64, F64, F64, U64, U64, F64, F64, U64, U64, U64}, /* uint64 */
};
#undef F32
#undef F64
#undef I32
#undef I64
#undef U8
#undef B
#undef I8
#undef I16
#undef U16
#undef U32
#undef U64
int nd_promote_types(int a, int b) {
  return valid(a) && valid(b) ? promotion[a][b] : -1;
}
