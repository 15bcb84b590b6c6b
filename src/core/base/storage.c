/* Reference-counted storage and the allocator hook. Large buffers get
 * 2 MiB alignment and MADV_HUGEPAGE, as NumPy's do; requests beyond the
 * machine's physical memory fail at once instead of being overcommitted. */
#include "core.h"
#include <sched.h>
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

/* A size-class cache of recently freed small-storage blocks (header and
 * elements together, default allocator only, 4 KiB < block < HUGE_MIN), so
 * temporaries reuse warm memory instead of faulting fresh pages (and
 * malloc's mmap/munmap past its threshold). A block enters the cache only
 * when its last reference goes, so no view can reach a cached block. Off
 * when ND_NO_CACHE is set in the environment (valgrind runs), under ASan
 * (no together blocks there) and with a custom allocator (the failure sweep
 * sees every allocation); nd_set_allocator flushes it. Four classes per
 * power of two (at most 25% slack); at most CACHE_PER blocks per class and
 * CACHE_BYTES in all. */
#define CACHE_MIN ((size_t)4096)
#define CACHE_CLASSES 44
#define CACHE_PER 8
#define CACHE_BYTES ((size_t)64 << 20)
/* Small blocks (headers, tensors of a few elements) too: 64-byte classes
 * up to CACHE_MIN, many per class. LuaJIT's collector frees a few hundred
 * dead temporaries at once; given back to malloc, they made it trim and
 * regrow its heap (brk) on every cycle, a third of nd.empty(3)'s cost. */
#define SMALL_STEP ((size_t)64)
#define SMALL_CLASSES ((int)(CACHE_MIN / SMALL_STEP))
#define SMALL_PER 512
#define SMALL_CLASS_BYTES ((size_t)1 << 20)
static struct {
  int mu; /* a spin lock: held for a few instructions */
  void *head[SMALL_CLASSES + CACHE_CLASSES];
  void *tail[SMALL_CLASSES + CACHE_CLASSES];
  void *last[SMALL_CLASSES + CACHE_CLASSES]; /* the newest block handed out */
  int count[SMALL_CLASSES + CACHE_CLASSES];
  size_t bytes;
  int on; /* 0 unknown, 1 on, -1 off */
} cache = {0, {0}, {0}, {0}, {0}, 0, 0};

/* pthread_mutex_lock + unlock was a fifth of nd.empty(3) here. */
static void cache_lock(void) {
  for (int spins = 0; __atomic_exchange_n(&cache.mu, 1, __ATOMIC_ACQUIRE);)
    while (__atomic_load_n(&cache.mu, __ATOMIC_RELAXED))
      if (++spins > 100) sched_yield();
}
static void cache_unlock(void) {
  __atomic_store_n(&cache.mu, 0, __ATOMIC_RELEASE);
}

/* The class of a block of n bytes and its rounded size, -1 for none. */
static int size_class(size_t n, size_t *cap) {
  if (n <= CACHE_MIN) {
    size_t k = (n + SMALL_STEP - 1) / SMALL_STEP;
    *cap = k * SMALL_STEP;
    return k ? (int)k - 1 : -1;
  }
  int lg = 63 - __builtin_clzll((unsigned long long)(n - 1));
  size_t base = (size_t)1 << lg, q = base / 4, k = (n - base + q - 1) / q;
  *cap = base + k * q;
  int c = (lg - 12) * 4 + (int)k - 1;
  return c >= 0 && c < CACHE_CLASSES ? SMALL_CLASSES + c : -1;
}

/* How many blocks a class keeps: SMALL_PER small ones; of the others,
 * CACHE_CLASS_BYTES' worth, at least CACHE_PER. The collector frees a
 * batch of temporaries at once (one cycle per 2 MiB of tensor bytes, see
 * lnd.c): 14 results of 144 KiB that came back to a cache of 8 sent 6 to
 * malloc, whose heap trim and fresh page faults made s + s on 18,000
 * doubles 15x slower than its out= form in a loop. */
#define CACHE_CLASS_BYTES ((size_t)8 << 20)
static int per_class(int c, size_t cap) {
  if (c < SMALL_CLASSES) /* a collection frees thousands of these at once */
    return SMALL_PER > (int)(SMALL_CLASS_BYTES / cap) ? SMALL_PER
                                                      : (int)(SMALL_CLASS_BYTES / cap);
  size_t n = CACHE_CLASS_BYTES / cap;
  return n > CACHE_PER ? (int)n : CACHE_PER;
}

static int cache_on(void) {
  int on = __atomic_load_n(&cache.on, __ATOMIC_RELAXED);
  if (!on) {
    on = getenv("ND_NO_CACHE") ? -1 : 1;
    __atomic_store_n(&cache.on, on, __ATOMIC_RELAXED);
  }
  return on > 0;
}

/* A block of at least n bytes for a together storage. */
static void *block_alloc(size_t n) {
  size_t cap;
  int c = cache_on() ? size_class(n, &cap) : -1;
  if (c < 0) return default_alloc(n, 16, NULL);
  cache_lock();
  void *p = cache.head[c];
  if (p) {
    cache.head[c] = *(void **)p;
    cache.count[c]--;
    cache.bytes -= cap;
  }
  cache_unlock();
  if (!p) p = default_alloc(cap, 16, NULL);
  __atomic_store_n(&cache.last[c], p, __ATOMIC_RELAXED); /* a hint for free */
  return p;
}

static void block_free(void *p, size_t n) {
  size_t cap;
  int c = cache_on() ? size_class(n, &cap) : -1;
  if (c >= 0) {
    cache_lock();
    int kept = cache.count[c] < per_class(c, cap) &&
               cache.bytes + cap <= CACHE_BYTES;
    if (kept && c >= SMALL_CLASSES &&
        p != __atomic_load_n(&cache.last[c], __ATOMIC_RELAXED)) {
      /* Newest (warmest) first: the collector frees a batch newest first,
       * so the rest of a batch queues behind its first. */
      *(void **)p = NULL;
      if (cache.head[c]) *(void **)cache.tail[c] = p; else cache.head[c] = p;
      cache.tail[c] = p;
      cache.count[c]++;
      cache.bytes += cap;
    } else if (kept) { /* the newest block (a release() at once): reused next */
      *(void **)p = cache.head[c];
      if (!cache.head[c]) cache.tail[c] = p;
      cache.head[c] = p;
      cache.count[c]++;
      cache.bytes += cap;
    }
    cache_unlock();
    if (kept) return;
  }
  free(p);
}

/* Large buffers (>= HUGE_MIN, default allocator) are kept too, a few of
 * them: a fresh multi-megabyte result otherwise faults in every page again
 * on each call (a sort or a gather of 1 M elements spent most of its time
 * there; malloc reuses such memory for NumPy). Sizes are rounded to 2 MiB;
 * a cached buffer is reused for a request it exceeds by at most 25%.
 * Same switches as the small cache, under the same lock. */
#define BIG_PER 4
#define BIG_BYTES ((size_t)128 << 20)
static struct {
  void *p[BIG_PER];
  size_t cap[BIG_PER];
  uint64_t when[BIG_PER]; /* when kept, by tick: the oldest goes first */
  uint64_t tick;
  size_t bytes;
} big;

static size_t big_round(size_t n) {
  return (n + HUGE_ALIGN - 1) & ~(HUGE_ALIGN - 1);
}

static void *big_alloc(size_t n) {
  size_t want = big_round(n), best = 0;
  int at = -1;
  cache_lock();
  for (int i = 0; i < BIG_PER; i++)
    if (big.p[i] && big.cap[i] >= want && big.cap[i] - want <= want / 4 &&
        (at < 0 || big.cap[i] < best))
      at = i, best = big.cap[i];
  void *p = NULL;
  if (at >= 0) {
    p = big.p[at];
    big.p[at] = NULL;
    big.bytes -= best;
  }
  cache_unlock();
  return p ? p : default_alloc(want, HUGE_ALIGN, NULL);
}

/* An nd_free_fn: n is the storage's nbytes (the block holds at least its
 * rounded size). */
/* The newest block is kept, the oldest ones making room: blocks of sizes
 * no later request takes (a sort's 8 MB indices) had filled every slot
 * for good, so each 4 MB temporary after them (a float16 matmul's float32
 * operands) was fresh memory again: MADV_HUGEPAGE's compaction stalls and
 * page faults made that matmul 1.4-1.8x float32's in make bench
 * BENCH=dtypes, 1.02x alone. */
static void big_free(void *p, size_t n, void *ud) {
  (void)ud;
  size_t cap = big_round(n);
  void *out[BIG_PER + 1];
  int nout = 0;
  cache_lock();
  if (cache.on > 0 && cap <= BIG_BYTES / 2) {
    for (;;) {
      int empty = -1, oldest = -1;
      for (int i = 0; i < BIG_PER; i++) {
        if (!big.p[i]) empty = i;
        else if (oldest < 0 || big.when[i] < big.when[oldest]) oldest = i;
      }
      if (empty >= 0 && big.bytes + cap <= BIG_BYTES) {
        big.p[empty] = p;
        big.cap[empty] = cap;
        big.when[empty] = ++big.tick;
        big.bytes += cap;
        p = NULL;
        break;
      }
      out[nout++] = big.p[oldest]; /* some slot is full: oldest >= 0 */
      big.bytes -= big.cap[oldest];
      big.p[oldest] = NULL;
    }
  }
  cache_unlock();
  for (int i = 0; i < nout; i++) free(out[i]);
  free(p);
}

static void cache_flush(void) {
  cache_lock();
  for (int i = 0; i < BIG_PER; i++) {
    free(big.p[i]);
    big.p[i] = NULL;
  }
  big.bytes = 0;
  for (int c = 0; c < SMALL_CLASSES + CACHE_CLASSES; c++) {
    while (cache.head[c]) {
      void *p = cache.head[c];
      cache.head[c] = *(void **)p;
      free(p);
    }
    cache.count[c] = 0;
  }
  cache.bytes = 0;
  cache_unlock();
}

void nd_set_allocator(nd_alloc_fn alloc, nd_free_fn fr, void *ud) {
  cache_flush();
  if (alloc && fr) {
    A.alloc = alloc; A.free = fr; A.ud = ud;
  } else {
    A.alloc = default_alloc; A.free = default_free; A.ud = NULL;
  }
}

#if !defined(__SANITIZE_ADDRESS__) /* ASan builds hand out the hook's own */
static void hook_block_free(void *p, size_t n, void *ud) {
  (void)ud;
  block_free(p, n);
}
#endif

/* With the default allocator, the binding's tensor headers come from the
 * block cache as well (freed by hook_block_free). */
void *nd_hook_alloc(size_t nbytes, nd_free_fn *free_fn, void **ud) {
  *ud = A.ud;
#if !defined(__SANITIZE_ADDRESS__)
  if (A.alloc == default_alloc) {
    *free_fn = hook_block_free;
    return block_alloc(nbytes);
  }
#endif
  *free_fn = A.free;
  return A.alloc(nbytes, 16, A.ud);
}

/* Storage from the allocator remembers which free() it needs, so the hook
 * may change while tensors from the previous one are alive. Wrapped
 * storage (nd_wrap) has a release callback instead. Headers come from the
 * hook too (hfree frees them). With the default allocator, buffers below
 * HUGE_MIN share one block with their header (free == NULL): half the
 * allocator calls of a small tensor. */
typedef struct owned {
  nd_storage s; /* first: an nd_storage* is an owned* */
  nd_free_fn free, hfree;
  void *ud;
} owned;

/* A header block of sizeof(owned) + extra bytes from the current hook. */
static owned *header_new(size_t extra) {
  owned *o = extra ? block_alloc(sizeof *o + extra)
                   : A.alloc(sizeof *o, 16, A.ud);
  if (!o) return NULL;
  memset(o, 0, sizeof *o);
  o->hfree = A.free;
  o->ud = A.ud;
  return o;
}
static void header_free(owned *o, size_t extra) {
  if (extra)
    block_free(o, sizeof *o + extra);
  else
    o->hfree(o, sizeof *o + extra, o->ud);
}

nd_storage *nd_storage_header(void) {
  owned *o = header_new(0);
  return o ? &o->s : NULL;
}

/* The machine's physical memory, asked once: sysconf(_SC_PHYS_PAGES) is a
 * sysinfo() system call, which cost more than the rest of a small
 * allocation. A race only computes the same value twice. */
static int64_t physical_bytes(void) {
  static int64_t cached;
  int64_t r = __atomic_load_n(&cached, __ATOMIC_RELAXED);
  if (r) return r;
  long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || psize <= 0 || nd_mul_ovf(pages, psize, &r))
    r = INT64_MAX;
  __atomic_store_n(&cached, r, __ATOMIC_RELAXED);
  return r;
}

nd_status nd_storage_new(nd_err *e, nd_storage **out, int64_t nbytes,
                         bool zero) {
  *out = NULL;
  /* Messages start with "empty:", which the binding renames to the
   * calling function (ndL_raise_as). */
  if (nbytes < 0)
    return nd_fail(e, ND_EINVAL, "empty: negative byte count %lld",
                   (long long)nbytes);
  if ((uint64_t)nbytes > SIZE_MAX / 2 || nbytes > physical_bytes())
    return nd_fail(e, ND_ENOMEM,
                   "empty: not enough memory: %lld bytes requested, the "
                   "machine has %lld bytes of physical memory",
                   (long long)nbytes, (long long)physical_bytes());
#if defined(__SANITIZE_ADDRESS__)
  bool together = false; /* own blocks, so ASan sees overruns at the end */
#else
  bool together = A.alloc == default_alloc && nbytes < HUGE_MIN;
#endif
  size_t extra = together ? ND_ALIGN - 1 + (size_t)nbytes : 0;
  owned *o = header_new(extra);
  if (!o)
    return nd_fail(e, ND_ENOMEM,
                   "empty: not enough memory: %lld bytes requested",
                   (long long)nbytes);
  nd_storage *s = &o->s;
  size_t align = nbytes >= HUGE_MIN ? HUGE_ALIGN : ND_ALIGN;
  o->free = together ? NULL : A.free;
#if defined(__SANITIZE_ADDRESS__)
  bool reuse = false; /* ASan sees every buffer */
#else
  bool reuse = !together && A.alloc == default_alloc && cache_on();
#endif
  if (together) {
    uintptr_t p = (uintptr_t)(o + 1);
    s->data = (void *)((p + ND_ALIGN - 1) & ~(uintptr_t)(ND_ALIGN - 1));
  } else if (reuse) {
    s->data = big_alloc((size_t)nbytes);
    o->free = big_free;
  } else {
    s->data = A.alloc((size_t)nbytes, align, A.ud);
  }
  if (!s->data) {
    header_free(o, extra);
    return nd_fail(e, ND_ENOMEM,
                   "empty: not enough memory: %lld bytes requested",
                   (long long)nbytes);
  }
  if (zero) memset(s->data, 0, (size_t)nbytes);
  s->nbytes = nbytes;
  s->refs = 1;
  s->release = NULL;
  s->ctx = NULL;
  s->readonly = 0;
  *out = s;
  return ND_OK;
}

/* A storage whose first ND_ALIGN bytes hold its own address: the block
 * then remembers its size and its free function (the hook may change
 * while scratch is out), and the default allocator's block cache serves
 * it as it serves tensors. */
void *nd_scratch_alloc(nd_err *e, const char *fn, int64_t count,
                       int64_t esize, bool zero) {
  int64_t bytes, total;
  if (count < 1) count = 1;
  if (esize < 1) esize = 1;
  if (nd_mul_ovf(count, esize, &bytes) ||
      nd_add_ovf(bytes, ND_ALIGN, &total)) {
    nd_fail(e, ND_EOVERFLOW, "%s: scratch of %lld elements of %lld bytes "
            "has more bytes than an int64 can count", fn, (long long)count,
            (long long)esize);
    return NULL;
  }
  nd_err why = {0};
  nd_storage *s;
  if (nd_storage_new(&why, &s, total, zero)) {
    if (e) {
      nd_err_name(&why, fn); /* "empty: not enough memory ..." */
      nd_fail(e, why.code, "%s", why.msg);
    }
    return NULL;
  }
  *(nd_storage **)s->data = s;
  return (char *)s->data + ND_ALIGN;
}

void nd_scratch_free(void *p) {
  if (p) nd_storage_release(*(nd_storage **)(void *)((char *)p - ND_ALIGN));
}

void nd_storage_retain(nd_storage *s) {
  if (s) __atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
}

void nd_storage_release(nd_storage *s) {
  if (!s || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
  owned *o = (owned *)s;
  size_t extra = 0;
  if (s->release) {
    s->release(s->data, s->ctx); /* wrapped host memory */
  } else if (o->free) {
    o->free(s->data, (size_t)s->nbytes, o->ud);
  } else {
    extra = ND_ALIGN - 1 + (size_t)s->nbytes; /* elements in the block */
  }
  header_free(o, extra);
}
