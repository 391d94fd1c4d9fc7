/* A persistent pool of host worker threads that runs the chunks of one kernel launch (the CPU and
 * LLVM devices split a big kernel into (core, ncores) chunks). Starting threads for every launch
 * costs tens of microseconds a launch; the pool starts its workers on first use and keeps them
 * asleep between launches. Internal. */
#ifndef TKC_RUNTIME_THREAD_POOL_H
#define TKC_RUNTIME_THREAD_POOL_H

#include "base/common.h"

/* The most chunks one launch can spread over threads (the caller plus 255 workers). */
#define TKC_THREAD_POOL_MAX 256

typedef void (*tkc_thread_pool_task)(void *arg, int chunk);

/* Runs task(arg, i) once for each i in 0..n-1 and returns when all have returned. Chunk 0 runs on
 * this thread, the others on pool workers (started here the first time they are needed, at most
 * n-1, n capped at TKC_THREAD_POOL_MAX) and on this thread once it is free. Every chunk runs here,
 * in order, instead when n <= 1, when another thread's launch holds the pool (launches from several
 * threads never wait for each other), when called from a pool worker, or when no worker could be
 * started. Never fails; safe to use in a fork()ed child (it starts workers of its own). */
TKC_HIDDEN void tkc_thread_pool_run(int n, tkc_thread_pool_task task, void *arg);

/* The workers started so far in this process (0 before the first threaded launch and in a fresh
 * fork child); for tests. */
TKC_HIDDEN int tkc_thread_pool_workers(void);

#endif
