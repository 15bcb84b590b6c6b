/* Lua's positions in an index table, t[{...}]: numbers select (1-based,
 * negatives from the end), ranges {first, last, step} slice. The rule,
 * once, for the classic binding (lviews.c reads the table from the Lua
 * stack) and for LuaJIT's fast path (lffi.c, handed the same entries by
 * lua/views.lua). */
#include "lnd.h"
#include <stdarg.h>
#include <stdio.h>

static nd_status fail(nd_err *e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
  return e->code = ND_EINVAL;
}

/* A range bound (1-based, negative from the end) as a 0-based position
 * into *q; positions -1 .. n are let through for empty ranges. Only the
 * last bound of {1, 0} (the empty range {k, k-1} with k = 1) may be 0. */
static int bound(int64_t v, int64_t n, const int64_t *r, int64_t *q) {
  if (v == 0 && v == r[1] && r[0] == 1 && r[2] > 0) return *q = -1, 1;
  if (v == 0 || v > n + 1 || v < -n - 1) return 0;
  *q = v < 0 ? n + v : v - 1;
  return 1;
}

nd_status ndL_index_entries(nd_err *e, nd_tensor *r, const nd_tensor *t,
                            int n, const ndL_entry *x, const char *fn,
                            int *numbers) {
  nd_storage *s = t->storage;
  int d = 0;
  nd_status st = ND_OK;
  *r = *t;
  r->storage = NULL; /* the view borrows: the core takes no reference */
  *numbers = 0;
  for (int k = 0; k < n && !st; k++) {
    int64_t size = r->size[d];
    const int64_t *v = x[k].v;
    if (x[k].m < 0) {
      int64_t q = ndL_pos(v[0], size);
      if (q < 0) {
        st = fail(e, "%s: index %lld out of range for dim %d of size %lld",
                  fn, (long long)v[0], k + 1, (long long)size);
        break;
      }
      st = nd_select(e, r, r, d, q);
      ++*numbers;
      continue;
    }
    int64_t rv[3] = {1, -1, 1}, first = 0, last, count = size;
    for (int j = 0; j < x[k].m; j++) rv[j] = v[j];
    if (x[k].m == 1) rv[1] = rv[0];
    if (rv[2] == 0) {
      st = fail(e, "%s: range step must not be 0 (entry %d)", fn, k + 1);
      break;
    }
    if (x[k].m > 0) {
      int ok = bound(rv[0], size, rv, &first) && bound(rv[1], size, rv, &last);
      if (ok) {
        int64_t span = rv[2] > 0 ? last - first : first - last;
        /* |step| >= 1 and span <= n + 1: no overflow here; a negative
         * step divides as is (-INT64_MIN is undefined). */
        count = span < 0 ? 0 : (rv[2] > 0 ? span / rv[2] : -(span / rv[2])) + 1;
        ok = count > 0 ? first >= 0 && first < size && last >= 0 && last < size
                       : first >= 0 && first <= size && last >= -1 && last < size;
      }
      if (!ok) {
        st = fail(e, "%s: range {%lld,%lld,%lld} out of bounds for dim %d of "
                  "size %lld", fn, (long long)rv[0], (long long)rv[1],
                  (long long)rv[2], k + 1, (long long)size);
        break;
      }
    }
    st = nd_slice(e, r, r, d, count ? first : 0, rv[2], count);
    d++;
  }
  r->storage = s;
  return st;
}

/* Lua's positions are 1-based: the core's 0-based indices of a fresh
 * int64 tensor (argmin/argmax, min/max's indices, ...) made Lua's. */
void ndL_one_based(const nd_tensor *ix) {
  int64_t *d = nd_data(ix), n = nd_numel(ix);
  for (int64_t i = 0; i < n; i++) d[i]++;
}
