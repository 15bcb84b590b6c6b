/* Internal to the C core: the AVX-512 merge sorts of 64-bit and 32-bit
 * items that sort.c uses for short lanes. */
#ifndef ND_SORT_MERGE_H
#define ND_SORT_MERGE_H
#include <stdint.h>

/* Sort the n unsigned items at a ascending, n a positive multiple of
 * ND_MERGE_BLOCK (64-bit items) or ND_MERGE_BLOCK32 (32-bit items), with
 * t (n items) as scratch; return a or t, where the result is. Only on
 * CPUs with AVX-512F (nd_merge_sort_ok); elsewhere they return NULL
 * without touching the items. */
enum { ND_MERGE_BLOCK = 64, ND_MERGE_BLOCK32 = 128 };
int nd_merge_sort_ok(void);
uint64_t *nd_merge_sort_u64(uint64_t *a, uint64_t *t, int64_t n);
uint32_t *nd_merge_sort_u32(uint32_t *a, uint32_t *t, int64_t n);
#endif
