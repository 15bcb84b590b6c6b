/* Reference-counted storage and the allocator hook. Large buffers get
 * 2 MiB alignment and MADV_HUGEPAGE, as NumPy's do; requests beyond the
 * machine's physical memory fail at once instead of being overcommitted. */
#include "core.h"
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define HUGE_MIN ((int64_t)4 << 20)
#define HUGE_ALIGN ((size_t)2 << 20)

static void *default_alloc(size_t n, size_t align, void *ud) {
  (void)ud;
  void *p = NULL;
  if (posix_memalign(&p, align, n ? n : 1)) return NULL;
#ifdef MADV_HUGEPAGE
  if (align >= HUGE_ALIGN) madvise(p, n, MADV_HUGEPAGE);
#endif
  return p;
}
static void default_free(void *p, size_t n, void *ud) {
  (void)n; (void)ud;
  free(p);
}

static struct {
  nd_alloc_fn alloc;
  nd_free_fn free;
  void *ud;
} A = {default_alloc, default_free, NULL};

void nd_set_allocator(nd_alloc_fn alloc, nd_free_fn fr, void *ud) {
  if (alloc && fr) {
    A.alloc = alloc; A.free = fr; A.ud = ud;
  } else {
    A.alloc = default_alloc; A.free = default_free; A.ud = NULL;
  }
}

static int64_t physical_bytes(void) {
  long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || psize <= 0) return INT64_MAX;
  int64_t r;
  return nd_mul_ovf(pages, psize, &r) ? INT64_MAX : r;
}

nd_status nd_storage_new(nd_err *e, nd_storage **out, int64_t nbytes,
                         bool zero) {
  *out = NULL;
  if (nbytes < 0 || (uint64_t)nbytes > SIZE_MAX / 2 ||
      nbytes > physical_bytes())
    return nd_fail(e, ND_ENOMEM,
                   "not enough memory: %lld bytes requested, the machine "
                   "has %lld", (long long)nbytes, (long long)physical_bytes());
  nd_storage *s = malloc(sizeof *s);
  if (!s) return nd_fail(e, ND_ENOMEM, "not enough memory");
  size_t align = nbytes >= HUGE_MIN ? HUGE_ALIGN : ND_ALIGN;
  s->data = A.alloc((size_t)nbytes, align, A.ud);
  if (!s->data) {
    free(s);
    return nd_fail(e, ND_ENOMEM, "not enough memory: %lld bytes requested",
                   (long long)nbytes);
  }
  if (zero) memset(s->data, 0, (size_t)nbytes);
  s->nbytes = nbytes;
  s->refs = 1;
  s->release = NULL;
  s->ctx = NULL;
  *out = s;
  return ND_OK;
}

void nd_storage_retain(nd_storage *s) {
  if (s) __atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
}

void nd_storage_release(nd_storage *s) {
  if (!s || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
  if (s->release)
    s->release(s->data, s->ctx); /* wrapped host memory */
  else
    A.free(s->data, (size_t)s->nbytes, A.ud);
  free(s);
}
