/* What every reference module (ref_*.c) times with: a clock in seconds and
 * the median of samples (which it sorts). Header only: each module is a
 * Lua C module of its own. */
#ifndef ND_BENCH_REF_TIME_H
#define ND_BENCH_REF_TIME_H
#include <stdlib.h>
#include <time.h>

/* CLOCK_MONOTONIC for wall time, CLOCK_THREAD_CPUTIME_ID for one thread's */
static inline double ref_clock(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static inline double ref_now(void) { return ref_clock(CLOCK_MONOTONIC); }

static inline int ref_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static inline double ref_median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, ref_cmp);
  return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}
#endif
