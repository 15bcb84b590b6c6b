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
 * defines (bool, uint8, int8, int16, int32, int64, float16, bfloat16,
 * float32, float64), NumPy 1.24's for pairs with uint16, uint32 or uint64
 * (which PyTorch 1.13 lacks), bfloat16 taking float16's row there. Not an
 * order: uint8 + int8 is int16, uint64 + int64 float64, float16 +
 * bfloat16 float32. One named row per dtype, columns in ND_DTYPES order:
 * a dtype appended without its row (or a row without a column) fails to
 * compile. tools/gen_dtype_fixtures.py checks every pair against
 * torch.promote_types / numpy.result_type. */
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
#define F16 ND_FLOAT16
#define BF16 ND_BFLOAT16
#define ROW(E, ...)                                                         \
  static const signed char row_##E[] = {__VA_ARGS__};                       \
  _Static_assert(sizeof row_##E == ND_NDTYPES,                              \
                 "promotion row " #E ": one column per dtype");
/*        float32 ... (ND_DTYPES order) ..................... float16 bfloat16 */
ROW(FLOAT32, F32, F64, F32, F32, F32, F32, F32, F32, F32, F64, F64, F32, F32)
ROW(FLOAT64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64)
ROW(INT32, F32, F64, I32, I64, I32, I32, I32, I32, I32, I64, F64, F16, BF16)
ROW(INT64, F32, F64, I64, I64, I64, I64, I64, I64, I64, I64, F64, F16, BF16)
ROW(UINT8, F32, F64, I32, I64, U8, U8, I16, I16, U16, U32, U64, F16, BF16)
ROW(BOOL, F32, F64, I32, I64, U8, B, I8, I16, U16, U32, U64, F16, BF16)
ROW(INT8, F32, F64, I32, I64, I16, I8, I8, I16, I32, I64, F64, F16, BF16)
ROW(INT16, F32, F64, I32, I64, I16, I16, I16, I16, I32, I64, F64, F16, BF16)
ROW(UINT16, F32, F64, I32, I64, U16, U16, I32, I32, U16, U32, U64, F32, F32)
ROW(UINT32, F64, F64, I64, I64, U32, U32, I64, I64, U32, U32, U64, F64, F64)
ROW(UINT64, F64, F64, F64, F64, U64, U64, F64, F64, U64, U64, U64, F64, F64)
ROW(FLOAT16, F32, F64, F16, F16, F16, F16, F16, F16, F32, F64, F64, F16, F32)
ROW(BFLOAT16, F32, F64, BF16, BF16, BF16, BF16, BF16, BF16, F32, F64, F64, F32, BF16)
static const signed char *const promotion[ND_NDTYPES] = {
#define P(E, name, T, kind) [ND_##E] = row_##E,
    ND_DTYPES(P)
#undef P
};
#undef ROW
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
#undef F16
#undef BF16
int nd_promote_types(int a, int b) {
  return valid(a) && valid(b) ? promotion[a][b] : -1;
}
