/* Status plus message: how every failure reaches a caller. */
#include "core.h"
#include <stdio.h>

nd_status nd_fail(nd_err *e, nd_status code, const char *fmt, ...) {
  if (!e) return code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
  e->code = code;
  return code;
}

const char *nd_fmt_sizes(char *buf, size_t n, int ndim, const int64_t *v) {
  size_t k = 0;
  k += (size_t)snprintf(buf, n, "{");
  for (int i = 0; i < ndim && k < n; i++)
    k += (size_t)snprintf(buf + k, n - k, i ? ",%lld" : "%lld",
                          (long long)v[i]);
  if (k < n) snprintf(buf + k, n - k, "}");
  return buf;
}
