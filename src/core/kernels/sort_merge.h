/* Internal to the C core: the AVX-512 merge sort of 64-bit items that
 * sort.c uses for short lanes. */
#ifndef ND_SORT_MERGE_H
#define ND_SORT_MERGE_H
#include <stdint.h>

/* Sorts the n unsigned 64-bit items at a ascending, n a positive multiple
 * of ND_MERGE_BLOCK, with t (n items) as scratch; returns a or t, where
 * the result is. Only on CPUs with AVX-512F (nd_merge_sort_ok); elsewhere
 * it returns NULL without touching the items. */
enum { ND_MERGE_BLOCK = 64 };
int nd_merge_sort_ok(void);
uint64_t *nd_merge_sort_u64(uint64_t *a, uint64_t *t, int64_t n);
#endif
