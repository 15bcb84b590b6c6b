/* nd's own thread pool and the thread-count setting it shares with
 * OpenBLAS. Debian's OpenBLAS is the pthread build whose workers spin after
 * each call, so nd does not use OpenMP and never calls BLAS from a worker.
 *
 * The pool is created at the first parallel call and lives in static
 * storage (no heap); a destructor joins the workers when the library is
 * unloaded or the process exits. One dispatch runs at a time: a call made
 * while the pool is busy (another host thread, or a nested call) runs
 * inline instead of waiting. */
#include "kernels.h"
#include <pthread.h>
#include <string.h>
#include <unistd.h>

void openblas_set_num_threads(int); /* Debian's libopenblas */

enum { MAX_THREADS = 64 };

static int num_threads; /* 0 until first asked: the online CPU count */

static struct {
  pthread_mutex_t dispatch; /* held by the one caller using the pool */
  pthread_mutex_t lock;     /* guards the fields below */
  pthread_cond_t wake, done;
  pthread_t tid[MAX_THREADS];
  int started;              /* workers running */
  int stop;
  unsigned long generation; /* bumped per dispatch */
  unsigned long born[MAX_THREADS + 1]; /* generation when worker i began */
  int ntasks, pending;      /* tasks of this dispatch; run by workers, unfinished */
  char claimed[MAX_THREADS]; /* task k taken by its worker or the caller */
  nd_task_fn fn;
  void *ctx;
  int64_t n;
} pool = {.dispatch = PTHREAD_MUTEX_INITIALIZER,
          .lock = PTHREAD_MUTEX_INITIALIZER,
          .wake = PTHREAD_COND_INITIALIZER,
          .done = PTHREAD_COND_INITIALIZER};

static int clamp_threads(long n) {
  return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
}

void nd_set_num_threads(int n) {
  n = clamp_threads(n);
  __atomic_store_n(&num_threads, n, __ATOMIC_RELAXED);
  openblas_set_num_threads(n);
}

int nd_get_num_threads(void) {
  int n = __atomic_load_n(&num_threads, __ATOMIC_RELAXED);
  if (n == 0) {
    n = clamp_threads(sysconf(_SC_NPROCESSORS_ONLN));
    __atomic_store_n(&num_threads, n, __ATOMIC_RELAXED);
  }
  return n;
}

/* Task k of ntasks covers [n*k/ntasks, n*(k+1)/ntasks). */
static void run_task(int k) {
  int64_t lo = pool.n / pool.ntasks * k + pool.n % pool.ntasks * k / pool.ntasks;
  int64_t hi = pool.n / pool.ntasks * (k + 1) +
               pool.n % pool.ntasks * (k + 1) / pool.ntasks;
  pool.fn(pool.ctx, lo, hi);
}

static void *worker(void *arg) {
  int id = (int)(intptr_t)arg; /* 1 .. started; the caller is task 0 */
  pthread_mutex_lock(&pool.lock);
  unsigned long seen = pool.born[id];
  for (;;) {
    while (!pool.stop && pool.generation == seen)
      pthread_cond_wait(&pool.wake, &pool.lock);
    if (pool.stop) break;
    seen = pool.generation;
    if (id >= pool.ntasks || pool.claimed[id]) continue;
    pool.claimed[id] = 1;
    pool.pending++;
    pthread_mutex_unlock(&pool.lock);
    run_task(id);
    pthread_mutex_lock(&pool.lock);
    if (--pool.pending == 0) pthread_cond_signal(&pool.done);
  }
  pthread_mutex_unlock(&pool.lock);
  return NULL;
}

__attribute__((destructor)) static void pool_shutdown(void) {
  pthread_mutex_lock(&pool.dispatch);
  pthread_mutex_lock(&pool.lock);
  pool.stop = 1;
  pthread_cond_broadcast(&pool.wake);
  pthread_mutex_unlock(&pool.lock);
  for (int i = 0; i < pool.started; i++) pthread_join(pool.tid[i], NULL);
  pool.started = 0;
  pthread_mutex_unlock(&pool.dispatch);
}

/* Workers 1 .. want-1 exist; fewer when the system refuses threads. */
static int ensure_workers(int want) {
  while (pool.started < want - 1) {
    pool.born[pool.started + 1] = pool.generation; /* before this dispatch */
    if (pthread_create(&pool.tid[pool.started], NULL, worker,
                       (void *)(intptr_t)(pool.started + 1)))
      break;
    pool.started++;
  }
  return pool.started + 1;
}

void nd_parallel_for(int64_t n, int64_t grain, nd_task_fn fn, void *ctx) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  int64_t tasks = n / grain;
  int nt = nd_get_num_threads();
  if (tasks > nt) tasks = nt;
  if (tasks <= 1 || pthread_mutex_trylock(&pool.dispatch)) {
    fn(ctx, 0, n);
    return;
  }
  int avail = ensure_workers((int)tasks);
  if (avail < tasks) tasks = avail;
  pthread_mutex_lock(&pool.lock);
  pool.fn = fn;
  pool.ctx = ctx;
  pool.n = n;
  pool.ntasks = (int)tasks;
  pool.pending = 0;
  memset(pool.claimed, 0, sizeof pool.claimed);
  pool.claimed[0] = 1;
  pool.generation++;
  pthread_cond_broadcast(&pool.wake);
  pthread_mutex_unlock(&pool.lock);
  run_task(0);
  /* Tasks whose worker has not started yet (its CPU busy with another
   * process, or still waking) are run here rather than waited for. */
  pthread_mutex_lock(&pool.lock);
  for (int k = 1; k < tasks; k++) {
    if (pool.claimed[k]) continue;
    pool.claimed[k] = 1;
    pthread_mutex_unlock(&pool.lock);
    run_task(k);
    pthread_mutex_lock(&pool.lock);
  }
  while (pool.pending > 0) pthread_cond_wait(&pool.done, &pool.lock);
  pthread_mutex_unlock(&pool.lock);
  pthread_mutex_unlock(&pool.dispatch);
}
