/* The C tests' one assertion: CHECK counts a pass or prints the failing
 * condition with its place and counts a failure; check_report prints
 * "N passed, N failed" (the line spec/c_api_spec.lua and friends read)
 * and gives main's exit status. Include after nd.h (OK compares with
 * ND_OK). Valid C and C++ (tests/pkgconfig_host.c is built as both). */
#ifndef ND_TESTS_CHECK_H
#define ND_TESTS_CHECK_H

#include <stdio.h>

static int passed, failed;
#define CHECK(cond)                                                         \
  do {                                                                      \
    if (cond) {                                                             \
      passed++;                                                             \
    } else {                                                                \
      failed++;                                                             \
      fprintf(stderr, "FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond);     \
    }                                                                       \
  } while (0)
#define OK(call) CHECK((call) == ND_OK)

static inline int check_report(void) {
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}

#endif
