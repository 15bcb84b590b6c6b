/* Status plus message: how every failure reaches a caller. */
#include "core.h"
#include <stdio.h>

/* The length of msg's leading name ("narrow" in "narrow: ..."), or 0 when
 * it does not start with one. */
static size_t lead_name(const char *msg) {
  size_t n = 0;
  while (n < 40 && (msg[n] == '_' || msg[n] == '.' ||
                    (msg[n] >= 'a' && msg[n] <= 'z') ||
                    (msg[n] >= 'A' && msg[n] <= 'Z') ||
                    (n > 0 && msg[n] >= '0' && msg[n] <= '9')))
    n++;
  return n > 0 && msg[n] == ':' ? n : 0;
}

/* e->msg (just written) under the name fn: the one place a message gets
 * the name of the function the user called. */
static void name_message(nd_err *e, const char *fn) {
  char m[sizeof e->msg + 64];
  size_t n = lead_name(e->msg);
  snprintf(m, sizeof m, "%.40s%s%s", fn, n ? "" : ": ", e->msg + n);
  memcpy(e->msg, m, sizeof e->msg - 1);
  e->msg[sizeof e->msg - 1] = 0;
}

nd_status nd_fail(nd_err *e, nd_status code, const char *fmt, ...) {
  if (!e) return code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
  e->code = code;
  if (e->fn) name_message(e, e->fn);
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

nd_status nd_err_name(nd_err *e, const char *fn) {
  if (!e->fn) name_message(e, fn); /* else nd_fail named it already */
  return e->code;
}
