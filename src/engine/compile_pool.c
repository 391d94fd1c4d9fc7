/* Compiling several programs at once (see compile_pool.h). Workers take the next program by an
 * atomic counter; the caller's thread waits and reports each finished one, so progress callbacks
 * and errors stay on the thread that realizes. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "engine/compile_pool.h"
#include "runtime/device.h"
#include "runtime/ffi_call.h"

typedef struct job {
  tkc_status st;
  char msg[1024];
  double seconds;
} job;

typedef struct pool {
  tkc_program *const *progs;
  job *jobs;
  int n;
  atomic_int next;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int *order, nfinished; /* finish order, under lock */
} pool;

static void compile_one(pool *pl, int i) {
  double t0 = tkc_now_s();
  job *j = &pl->jobs[i];
  j->st = tkc_program_compile(pl->progs[i]);
  if (j->st) snprintf(j->msg, sizeof j->msg, "%s", tkc_last_error()); /* the error is this thread's */
  j->seconds = tkc_now_s() - t0;
}

static void *worker(void *arg) {
  pool *pl = arg;
  for (int i; (i = atomic_fetch_add(&pl->next, 1)) < pl->n;) {
    compile_one(pl, i);
    pthread_mutex_lock(&pl->lock);
    pl->order[pl->nfinished++] = i;
    pthread_cond_signal(&pl->cond);
    pthread_mutex_unlock(&pl->lock);
  }
  return NULL;
}

int tkc_compile_threads(const tkc_device *d) { return d->impl->compile_threadsafe ? tkc_ffi_threads() : 1; }

tkc_status tkc_compile_all(tkc_program *const *progs, int n, int threads, tkc_compiled_fn done, void *user) {
  if (n <= 0) return TKC_OK;
  job *jobs = tkc_calloc((size_t)n, sizeof *jobs);
  int *order = tkc_calloc((size_t)n, sizeof *order);
  if (!jobs || !order) {
    tkc_free(jobs), tkc_free(order);
    return tkc_err(TKC_ENOMEM, "out of memory compiling %d kernels", n);
  }
  pool pl = {.progs = progs, .jobs = jobs, .n = n, .order = order};
  atomic_init(&pl.next, 0);
  pthread_t th[64];
  int nt = 0;
  if (threads > n) threads = n;
  if (threads > 64) threads = 64;
  if (threads > 1 && !pthread_mutex_init(&pl.lock, NULL)) {
    if (!pthread_cond_init(&pl.cond, NULL)) {
      while (nt < threads && !pthread_create(&th[nt], NULL, worker, &pl)) nt++;
      int reported = 0;
      pthread_mutex_lock(&pl.lock);
      while (reported < n && nt > 0) {
        while (reported == pl.nfinished) pthread_cond_wait(&pl.cond, &pl.lock);
        int i = pl.order[reported++];
        pthread_mutex_unlock(&pl.lock);
        if (done && !jobs[i].st) done(user, i, jobs[i].seconds);
        pthread_mutex_lock(&pl.lock);
      }
      pthread_mutex_unlock(&pl.lock);
      for (int t = 0; t < nt; t++) pthread_join(th[t], NULL);
      pthread_cond_destroy(&pl.cond);
    }
    pthread_mutex_destroy(&pl.lock);
  }
  if (!nt) /* one thread, or no thread could be started: here, in order */
    for (int i = 0; i < n; i++) {
      compile_one(&pl, i);
      if (done && !jobs[i].st) done(user, i, jobs[i].seconds);
    }
  tkc_status st = TKC_OK;
  for (int i = 0; i < n && !st; i++)
    if (jobs[i].st) st = tkc_err(jobs[i].st, "%s", jobs[i].msg);
  tkc_free(jobs), tkc_free(order);
  return st;
}
