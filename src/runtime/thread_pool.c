/* Persistent host worker threads (see thread_pool.h).
 *
 * One launch at a time owns the pool: a flag taken without waiting (another thread's launch runs
 * inline meanwhile, so no launch ever waits for another). The owner publishes its launch in one
 * 64-bit word, gen:32 | n:16 | next:16, and every thread (workers and owner) claims the next chunk
 * by a compare-and-swap on that word. The generation makes a claim fail when the word moved on to a
 * later launch between reading the task and claiming, so a chunk never runs with another launch's
 * task. Finished chunks count down g_left; the owner returns at zero, after every chunk's writes.
 *
 * Idle workers first poll the word for a bounded while (a replayed step launches its next kernel
 * within microseconds, sooner than a sleeping thread wakes) and then sleep on a condition variable;
 * an idle pool uses no CPU. A fork()ed child has none of the parent's workers: the child handler
 * forgets them (and any launch another parent thread was running), and the child starts its own. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include "runtime/thread_pool.h"

/* Checks of the launch word before an idle worker or a waiting owner sleeps, a sched_yield between
 * two: some tens of microseconds on an idle host. Yielding rather than pausing measured better on a
 * busy 2-vCPU host (bench_launch: the spinning thread hands its core to the one with the work);
 * 0 sleeps at once. */
#ifndef TKC_THREAD_POOL_SPIN
#define TKC_THREAD_POOL_SPIN 100
#endif

enum { MAX_WORKERS = TKC_THREAD_POOL_MAX - 1, MAX_CHUNKS = 0xffff };

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* sleeping, waking, starting, stopping */
static pthread_cond_t g_wake = PTHREAD_COND_INITIALIZER;  /* a launch was published, or quit */
static pthread_cond_t g_done = PTHREAD_COND_INITIALIZER;  /* g_left reached 0 */
static pthread_t g_threads[MAX_WORKERS];
static int g_nthreads; /* workers started, under g_lock */
static int g_sleeping; /* workers in cond_wait on g_wake, under g_lock */
static atomic_int g_owned; /* a launch holds the pool */
static atomic_int g_quit;  /* the library is being unloaded: workers exit, launches run inline */
static _Atomic uint64_t g_word; /* the launch: gen:32 | n:16 | next chunk to claim:16 */
static _Atomic(tkc_thread_pool_task) g_task;
static _Atomic(void *) g_arg;
static atomic_int g_left; /* chunks 1..n-1 not finished yet */
static _Thread_local int t_is_worker;
static pthread_once_t g_fork_once = PTHREAD_ONCE_INIT;

static uint64_t word_of(uint32_t gen, int n, int next) { return (uint64_t)gen << 32 | (uint64_t)n << 16 | (uint64_t)next; }
static uint32_t word_gen(uint64_t w) { return (uint32_t)(w >> 32); }
static int word_n(uint64_t w) { return (int)(w >> 16 & 0xffff); }
static int word_next(uint64_t w) { return (int)(w & 0xffff); }
static int has_work(void) {
  uint64_t w = atomic_load_explicit(&g_word, memory_order_acquire);
  return word_next(w) < word_n(w);
}

static void run_inline(int n, tkc_thread_pool_task task, void *arg) {
  for (int i = 0; i < n; i++) task(arg, i);
}

/* Claims and runs chunks of the published launch until none is left; returns how many ran here. */
static int run_claimed(void) {
  int ran = 0;
  uint64_t w = atomic_load_explicit(&g_word, memory_order_acquire);
  while (word_next(w) < word_n(w)) {
    /* read before the claim: a claim that succeeds proves the launch was still this one */
    tkc_thread_pool_task task = atomic_load_explicit(&g_task, memory_order_relaxed);
    void *arg = atomic_load_explicit(&g_arg, memory_order_relaxed);
    if (!atomic_compare_exchange_weak_explicit(&g_word, &w, w + 1, memory_order_acq_rel, memory_order_acquire)) continue;
    task(arg, word_next(w));
    ran++;
    if (atomic_fetch_sub_explicit(&g_left, 1, memory_order_acq_rel) == 1) {
      pthread_mutex_lock(&g_lock);
      pthread_cond_signal(&g_done);
      pthread_mutex_unlock(&g_lock);
    }
    w = atomic_load_explicit(&g_word, memory_order_acquire);
  }
  return ran;
}

static void *worker_main(void *unused) {
  (void)unused;
  t_is_worker = 1; /* a task that launches from a worker runs its launch inline */
  while (!atomic_load_explicit(&g_quit, memory_order_acquire)) {
    if (run_claimed()) continue;
    for (int i = 0; i < TKC_THREAD_POOL_SPIN && !has_work() && !atomic_load_explicit(&g_quit, memory_order_relaxed); i++)
      sched_yield();
    if (has_work()) continue;
    pthread_mutex_lock(&g_lock);
    while (!has_work() && !atomic_load_explicit(&g_quit, memory_order_acquire)) {
      g_sleeping++;
      pthread_cond_wait(&g_wake, &g_lock);
      g_sleeping--;
    }
    pthread_mutex_unlock(&g_lock);
  }
  return NULL;
}

/* Starts workers until there are want (under g_lock). They block every signal: the application's
 * handlers keep running on its own threads. A failed start leaves the chunks to the running threads. */
static void start_workers(int want) {
  if (g_nthreads >= want) return;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  while (g_nthreads < want && pthread_create(&g_threads[g_nthreads], NULL, worker_main, NULL) == 0) g_nthreads++;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void fork_prepare(void) { pthread_mutex_lock(&g_lock); }
static void fork_parent(void) { pthread_mutex_unlock(&g_lock); }
/* In the child only the forking thread exists: no worker, and no launch of another thread. */
static void fork_child(void) {
  g_nthreads = 0;
  g_sleeping = 0;
  atomic_store_explicit(&g_owned, 0, memory_order_relaxed);
  atomic_store_explicit(&g_left, 0, memory_order_relaxed);
  uint64_t w = atomic_load_explicit(&g_word, memory_order_relaxed);
  atomic_store_explicit(&g_word, word_of(word_gen(w) + 1, 0, 0), memory_order_relaxed);
  pthread_cond_init(&g_wake, NULL); /* the parent's sleeping workers are not waiters here */
  pthread_cond_init(&g_done, NULL);
  pthread_mutex_unlock(&g_lock); /* locked by fork_prepare on this thread */
}
static void register_fork_handlers(void) { pthread_atfork(fork_prepare, fork_parent, fork_child); }

/* At exit or dlclose: no worker may outlive the library's code. */
__attribute__((destructor)) static void thread_pool_stop(void) {
  pthread_mutex_lock(&g_lock);
  atomic_store_explicit(&g_quit, 1, memory_order_release);
  pthread_cond_broadcast(&g_wake);
  int n = g_nthreads;
  pthread_mutex_unlock(&g_lock);
  for (int i = 0; i < n; i++) pthread_join(g_threads[i], NULL);
  pthread_mutex_lock(&g_lock);
  g_nthreads = 0;
  pthread_mutex_unlock(&g_lock);
}

void tkc_thread_pool_run(int n, tkc_thread_pool_task task, void *arg) {
  if (n <= 1 || n > MAX_CHUNKS || t_is_worker || atomic_load_explicit(&g_quit, memory_order_acquire)) {
    run_inline(n, task, arg);
    return;
  }
  pthread_once(&g_fork_once, register_fork_handlers);
  int was_owned = 0;
  if (!atomic_compare_exchange_strong_explicit(&g_owned, &was_owned, 1, memory_order_acquire, memory_order_relaxed)) {
    run_inline(n, task, arg); /* another thread's launch holds the pool */
    return;
  }
  pthread_mutex_lock(&g_lock);
  if (!atomic_load_explicit(&g_quit, memory_order_relaxed)) start_workers(n - 1 < MAX_WORKERS ? n - 1 : MAX_WORKERS);
  atomic_store_explicit(&g_task, task, memory_order_relaxed);
  atomic_store_explicit(&g_arg, arg, memory_order_relaxed);
  atomic_store_explicit(&g_left, n - 1, memory_order_relaxed);
  uint64_t w = atomic_load_explicit(&g_word, memory_order_relaxed);
  atomic_store_explicit(&g_word, word_of(word_gen(w) + 1, n, 1), memory_order_release); /* publishes the above */
  if (g_sleeping) pthread_cond_broadcast(&g_wake);
  pthread_mutex_unlock(&g_lock);

  task(arg, 0);
  run_claimed(); /* chunks no worker took yet */
  for (int i = 0; i < TKC_THREAD_POOL_SPIN && atomic_load_explicit(&g_left, memory_order_acquire); i++) sched_yield();
  if (atomic_load_explicit(&g_left, memory_order_acquire)) {
    pthread_mutex_lock(&g_lock);
    while (atomic_load_explicit(&g_left, memory_order_acquire)) pthread_cond_wait(&g_done, &g_lock);
    pthread_mutex_unlock(&g_lock);
  }
  atomic_store_explicit(&g_owned, 0, memory_order_release);
}

int tkc_thread_pool_workers(void) {
  pthread_mutex_lock(&g_lock);
  int n = g_nthreads;
  pthread_mutex_unlock(&g_lock);
  return n;
}
