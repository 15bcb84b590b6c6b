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

/* A failure from a shared path (allocation: "empty: not enough memory",
 * or any out-of-memory) under the name of the function the caller
 * called; other messages already name it and are kept. */
nd_status nd_err_as(nd_err *e, const char *fn) {
  if (!strncmp(e->msg, "empty:", 6) || e->code == ND_ENOMEM)
    nd_err_rename(e, fn);
  return e->code;
}

nd_status nd_err_rename(nd_err *e, const char *fn) {
  char m[sizeof e->msg + 64];
  const char *c = strchr(e->msg, ':');
  if (c && c - e->msg > 24) c = NULL;
  snprintf(m, sizeof m, "%.40s%s%s", fn, c ? "" : ": ", c ? c : e->msg);
  memcpy(e->msg, m, sizeof e->msg - 1);
  e->msg[sizeof e->msg - 1] = 0;
  return e->code;
}
