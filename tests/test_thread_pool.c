/* The persistent host thread pool (runtime/thread_pool.c) and the CPU/LLVM kernel launches that use
 * it: every chunk runs once per launch, launches from several host threads at once, nested launches,
 * a fork()ed child that launches, TKC_CPU_THREADS=1 (no worker), and many threaded kernel launches
 * (a replayed jit step) with the right values. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tkc.h"
#include "runtime/ffi_call.h"
#include "runtime/thread_pool.h"

/* ThreadSanitizer by default ends a child of a multi-threaded fork that starts threads; the pool
 * is made to do exactly that, so this suite allows it (the hook is read only by TSan builds). */
__attribute__((visibility("default"))) const char *__tsan_default_options(void);
__attribute__((visibility("default"))) const char *__tsan_default_options(void) { return "die_after_fork=0"; }

/* ---------------------------------------------------------------- the pool itself */

enum { MAXN = 16 };
typedef struct count_job {
  atomic_int runs[MAXN];
  pthread_t caller;
  atomic_int chunk0_elsewhere; /* chunk 0 must run on the calling thread */
} count_job;

static void count_task(void *arg, int chunk) {
  count_job *j = arg;
  atomic_fetch_add(&j->runs[chunk], 1);
  if (chunk == 0 && !pthread_equal(pthread_self(), j->caller)) atomic_store(&j->chunk0_elsewhere, 1);
}

/* launches n chunks `times` times; returns 0 when every chunk ran exactly once each time */
static int launch_and_check(int n, int times) {
  for (int t = 0; t < times; t++) {
    count_job j = {.caller = pthread_self()};
    for (int i = 0; i < MAXN; i++) atomic_init(&j.runs[i], 0);
    atomic_init(&j.chunk0_elsewhere, 0);
    tkc_thread_pool_run(n, count_task, &j);
    for (int i = 0; i < MAXN; i++)
      if (atomic_load(&j.runs[i]) != (i < n ? 1 : 0)) return 1;
    if (atomic_load(&j.chunk0_elsewhere)) return 1;
  }
  return 0;
}

/* runs first in the suite: no worker before the first threaded launch, n-1 after it */
static void test_workers_start_lazily(void **state) {
  (void)state;
  assert_int_equal(tkc_thread_pool_workers(), 0);
  assert_int_equal(launch_and_check(1, 10), 0); /* one chunk: no thread */
  assert_int_equal(tkc_thread_pool_workers(), 0);
  assert_int_equal(launch_and_check(4, 1), 0);
  assert_int_equal(tkc_thread_pool_workers(), 3);
  assert_int_equal(launch_and_check(2, 1), 0); /* fewer chunks: the pool does not shrink or grow */
  assert_int_equal(tkc_thread_pool_workers(), 3);
}

/* many launches of 1..MAXN chunks, more chunks than workers among them */
static void test_every_chunk_runs_once(void **state) {
  (void)state;
  for (int n = 1; n <= MAXN; n++) assert_int_equal(launch_and_check(n, 300), 0);
  assert_int_equal(launch_and_check(3, 5000), 0);
  assert_true(tkc_thread_pool_workers() <= TKC_THREAD_POOL_MAX - 1);
}

/* a chunk that launches again: the inner launch runs inline on that chunk's thread */
typedef struct nested_job {
  atomic_int inner_runs, inner_elsewhere;
} nested_job;
typedef struct inner_job {
  nested_job *outer;
  pthread_t thread;
} inner_job;
static void inner_task(void *arg, int chunk) {
  (void)chunk;
  inner_job *ij = arg;
  atomic_fetch_add(&ij->outer->inner_runs, 1);
  if (!pthread_equal(pthread_self(), ij->thread)) atomic_store(&ij->outer->inner_elsewhere, 1);
}
static void outer_task(void *arg, int chunk) {
  (void)chunk;
  inner_job ij = {.outer = arg, .thread = pthread_self()};
  tkc_thread_pool_run(4, inner_task, &ij);
}

static void test_nested_launch_runs_inline(void **state) {
  (void)state;
  for (int t = 0; t < 200; t++) {
    nested_job j;
    atomic_init(&j.inner_runs, 0);
    atomic_init(&j.inner_elsewhere, 0);
    tkc_thread_pool_run(3, outer_task, &j);
    assert_int_equal(atomic_load(&j.inner_runs), 3 * 4);
    assert_int_equal(atomic_load(&j.inner_elsewhere), 0);
  }
}

/* four host threads launching at once: each launch still runs every chunk once */
typedef struct host_thread {
  int n, failed;
} host_thread;
static void *host_launches(void *arg) {
  host_thread *h = arg;
  h->failed = launch_and_check(h->n, 2000);
  return NULL;
}

static void test_concurrent_host_threads(void **state) {
  (void)state;
  pthread_t th[4];
  host_thread h[4];
  for (int i = 0; i < 4; i++) {
    h[i] = (host_thread){.n = 2 + i};
    assert_int_equal(pthread_create(&th[i], NULL, host_launches, &h[i]), 0);
  }
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 4; i++) assert_int_equal(h[i].failed, 0);
}

/* runs child() in a fork()ed child (with a watchdog: a hang fails instead of blocking the suite);
 * returns its exit status, -1 when it did not exit normally */
static int in_child(int (*child)(void)) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(60);
    _exit(child());
  }
  if (pid < 0) return -1;
  int st;
  if (waitpid(pid, &st, 0) != pid) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int pool_child(void) {
  if (tkc_thread_pool_workers() != 0) return 10; /* the parent's workers do not exist here */
  if (launch_and_check(4, 500)) return 11;
  if (tkc_thread_pool_workers() != 3) return 12;
  return 0;
}

/* the parent's pool is busy on other threads while this one forks: the child launches on its own */
static void test_fork_child_launches(void **state) {
  (void)state;
  assert_int_equal(launch_and_check(4, 10), 0);
  assert_true(tkc_thread_pool_workers() >= 3);
  pthread_t th[2];
  host_thread h[2] = {{.n = 3}, {.n = 5}};
  for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&th[i], NULL, host_launches, &h[i]), 0);
  int child_rc[5];
  for (int k = 0; k < 5; k++) child_rc[k] = in_child(pool_child);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  for (int k = 0; k < 5; k++) assert_int_equal(child_rc[k], 0);
  for (int i = 0; i < 2; i++) assert_int_equal(h[i].failed, 0);
  assert_int_equal(launch_and_check(4, 100), 0); /* and the parent's pool still works */
}

/* ---------------------------------------------------------------- kernels on the CPU and LLVM devices */

/* 1M floats: far above TKC_CPU_PARALLEL_MIN_WORK, so each kernel is split across the host threads */
enum { BIG = 1 << 20, STEP_KERNELS = 20 };

static const char *devices[] = {"CPU", "LLVM"};

static float *ramp(void) {
  float *x = malloc(BIG * sizeof *x);
  for (int i = 0; i < BIG; i++) x[i] = (float)(i % 1000) * 0.001f - 0.5f;
  return x;
}

/* what STEP_KERNELS rounds of x = x * 0.5 + 1 give, as the host computes them */
static float expected_after(float x, int rounds) {
  for (int r = 0; r < rounds; r++) x = x * 0.5f + 1.0f;
  return x;
}

static tkc_tensor *half_plus_one(tkc_ctx *ctx, tkc_tensor *x) {
  return tkc_add(tkc_mul(x, tkc_scalar(ctx, TKC_FLOAT32, 0.5)), tkc_scalar(ctx, TKC_FLOAT32, 1.0));
}

static tkc_status step(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)nin, (void)nout, (void)user;
  tkc_scope_begin(ctx);
  tkc_tensor *x = in[0];
  tkc_status st = TKC_OK;
  for (int k = 0; k < STEP_KERNELS && !st; k++) {
    x = half_plus_one(ctx, x);
    st = x ? tkc_realize(x) : tkc_last_status(); /* a kernel each */
  }
  if (!st) tkc_keep(x);
  tkc_scope_end(ctx);
  out[0] = st ? NULL : x;
  return st;
}

/* count elements of got that differ from rounds of x*0.5+1 applied to in */
static int64_t mismatches(const float *in, const float *got, int rounds) {
  int64_t bad = 0;
  for (int i = 0; i < BIG; i++)
    if (fabsf(got[i] - expected_after(in[i], rounds)) > 1e-5f) bad++;
  return bad;
}

/* replays of a step of 20 threaded kernels: 200 launches, every output right */
static void test_replayed_threaded_kernels(void **state) {
  (void)state;
  float *in = ramp(), *got = malloc(BIG * sizeof *got);
  int ran = 0;
  for (size_t d = 0; d < sizeof devices / sizeof *devices; d++) {
    if (!tkc_device_available(devices[d])) continue;
    ran++;
    tkc_ctx *ctx = tkc_ctx_new(devices[d]);
    assert_non_null(ctx);
    tkc_jit *j = tkc_jit_new(ctx, step, NULL);
    assert_non_null(j);
    int64_t n = BIG;
    tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 1, &n, in);
    for (int r = 0; r < 10; r++) {
      tkc_tensor *y = NULL;
      assert_int_equal(tkc_jit_run(j, &x, 1, &y, 1), TKC_OK);
      memset(got, 0, BIG * sizeof *got);
      assert_int_equal(tkc_copy_out(y, got, BIG * sizeof *got), TKC_OK);
      assert_int_equal(mismatches(in, got, STEP_KERNELS), 0);
      tkc_tensor_free(y);
    }
    assert_int_equal(tkc_jit_kernels(j), STEP_KERNELS);
    tkc_jit_free(j);
    tkc_ctx_free(ctx);
  }
  if (!ran) printf("skipped: neither the CPU nor the LLVM device is available here\n");
  free(in), free(got);
}

/* one ctx per host thread, four threads realizing threaded kernels at once */
typedef struct ctx_thread {
  const char *device;
  const float *in;
  int64_t bad;
  tkc_status st;
} ctx_thread;

static void *ctx_launches(void *arg) {
  ctx_thread *c = arg;
  float *got = malloc(BIG * sizeof *got);
  tkc_ctx *ctx = tkc_ctx_new(c->device);
  int64_t n = BIG;
  c->st = ctx && got ? TKC_OK : TKC_ENOMEM;
  for (int r = 0; r < 8 && !c->st; r++) {
    tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 1, &n, c->in);
    for (int k = 0; k < 3 && x; k++) {
      x = half_plus_one(ctx, x);
      if (x && tkc_realize(x)) x = NULL;
    }
    c->st = x ? tkc_copy_out(x, got, BIG * sizeof *got) : tkc_last_status();
    if (!c->st) c->bad += mismatches(c->in, got, 3);
  }
  tkc_ctx_free(ctx);
  free(got);
  return NULL;
}

static void test_concurrent_ctxs(void **state) {
  (void)state;
  float *in = ramp();
  for (size_t d = 0; d < sizeof devices / sizeof *devices; d++) {
    if (!tkc_device_available(devices[d])) continue;
    pthread_t th[4];
    ctx_thread c[4];
    for (int i = 0; i < 4; i++) {
      c[i] = (ctx_thread){.device = devices[d], .in = in};
      assert_int_equal(pthread_create(&th[i], NULL, ctx_launches, &c[i]), 0);
    }
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 4; i++) {
      assert_int_equal(c[i].st, TKC_OK);
      assert_int_equal(c[i].bad, 0);
    }
  }
  free(in);
}

/* a child realizes threaded kernels on each available device; returns 0 when the values are right */
static int kernel_child(void) {
  float *in = ramp(), *got = malloc(BIG * sizeof *got);
  int64_t n = BIG;
  int rc = 0;
  for (size_t d = 0; d < sizeof devices / sizeof *devices && !rc; d++) {
    if (!tkc_device_available(devices[d])) continue;
    tkc_ctx *ctx = tkc_ctx_new(devices[d]);
    tkc_tensor *x = ctx ? tkc_tensor_new(ctx, TKC_FLOAT32, 1, &n, in) : NULL;
    for (int k = 0; k < 4 && x; k++) {
      x = half_plus_one(ctx, x);
      if (x && tkc_realize(x)) x = NULL;
    }
    if (!x || tkc_copy_out(x, got, BIG * sizeof *got)) rc = 20;
    else if (mismatches(in, got, 4)) rc = 21;
    tkc_ctx_free(ctx);
  }
  free(in), free(got);
  return rc;
}

static int kernel_child_threads(void) {
  int rc = kernel_child();
  if (rc) return rc;
  /* the child's pool started empty: its kernels, split tkc_ffi_threads() ways, started the workers */
  int want = tkc_ffi_threads() - 1;
  if (tkc_thread_pool_workers() != (want < TKC_THREAD_POOL_MAX - 1 ? want : TKC_THREAD_POOL_MAX - 1)) return 22;
  return 0;
}

/* the parent's pool has workers; a fork()ed child launches threaded kernels with workers of its own
 * (and so shows that the devices' kernels go through the pool) */
static void test_fork_child_kernels(void **state) {
  (void)state;
  if (!tkc_device_available("CPU") && !tkc_device_available("LLVM")) skip();
  assert_int_equal(kernel_child(), 0); /* here first: the parent's pool is running */
  assert_int_equal(in_child(kernel_child_threads), 0);
}

static int one_thread_child(void) {
  setenv("TKC_CPU_THREADS", "1", 1);
  if (tkc_ffi_threads() != 1) return 30;
  int rc = kernel_child();
  if (rc) return rc;
  return tkc_thread_pool_workers() == 0 ? 0 : 31; /* every kernel ran on this thread */
}

/* TKC_CPU_THREADS=1: right values and no worker thread (in a child, whose pool starts empty) */
static void test_one_cpu_thread(void **state) {
  (void)state;
  if (!tkc_device_available("CPU") && !tkc_device_available("LLVM")) skip();
  assert_int_equal(in_child(one_thread_child), 0);
}

/* TKC_CPU_THREADS caps the online CPUs and never raises them; bad values are ignored */
static void test_cpu_threads_env(void **state) {
  (void)state;
  const char *old = getenv("TKC_CPU_THREADS");
  char *saved = old ? strdup(old) : NULL;
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  int all = online < 1 ? 1 : online > 256 ? 256 : (int)online;
  unsetenv("TKC_CPU_THREADS");
  assert_int_equal(tkc_ffi_threads(), all);
  setenv("TKC_CPU_THREADS", "1", 1);
  assert_int_equal(tkc_ffi_threads(), 1);
  setenv("TKC_CPU_THREADS", "100000", 1);
  assert_int_equal(tkc_ffi_threads(), all);
  setenv("TKC_CPU_THREADS", "two", 1);
  assert_int_equal(tkc_ffi_threads(), all);
  if (saved) setenv("TKC_CPU_THREADS", saved, 1);
  else unsetenv("TKC_CPU_THREADS");
  free(saved);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_workers_start_lazily), /* first: it sees the pool before any launch */
      cmocka_unit_test(test_every_chunk_runs_once),
      cmocka_unit_test(test_nested_launch_runs_inline),
      cmocka_unit_test(test_concurrent_host_threads),
      cmocka_unit_test(test_fork_child_launches),
      cmocka_unit_test(test_cpu_threads_env),
      cmocka_unit_test(test_replayed_threaded_kernels),
      cmocka_unit_test(test_concurrent_ctxs),
      cmocka_unit_test(test_fork_child_kernels),
      cmocka_unit_test(test_one_cpu_thread),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
