/* test_alloc_failure.c — running out of memory anywhere is a clean TKC_ENOMEM (issue 16).
 *
 * Through tkc_set_allocator (Lua's lua_Alloc shape) the test fails the k-th allocation of a
 * representative program (a matmul, a bias add, relu, a softmax over the rows and a sum: several
 * kernels, a reduce, movement ops), for every k over the whole program, from ctx_new to copy_out,
 * on every device that runs here, with the caches flushed before each run so that every run builds
 * everything again. Each run must end in the right answer or in TKC_ENOMEM with a message; the ctx
 * must then still work (the same program again gives the right answer); and once the ctx is freed
 * and the caches flushed, tkc holds exactly the blocks it held before the run (no leak; ASan's leak
 * check says the same of the whole process). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tkc.h"

/* ---------------------------------------------------------------- the failing allocator */

static _Atomic long allocs;    /* allocations and growths seen since the count was reset */
static long program_allocs;    /* of them, the ones of the last run's program (not its second run) */
static _Atomic long fail_at;   /* fail the allocation with this number (1-based); 0: none */
static _Atomic long failures;  /* allocations refused */
static _Atomic long osize_bad; /* frees/resizes whose osize was not the size tkc was given */

/* Blocks carry their size in front, so the test can check the osize tkc passes in. */
static void *failing_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  size_t *h = ptr ? (size_t *)ptr - 2 : NULL;
  if (h && h[0] != osize) atomic_fetch_add(&osize_bad, 1);
  if (nsize == 0) {
    free(h);
    return NULL;
  }
  if (!ptr || nsize > osize) {
    long n = atomic_fetch_add(&allocs, 1) + 1;
    if (n == atomic_load(&fail_at)) {
      atomic_fetch_add(&failures, 1);
      return NULL;
    }
  }
  size_t *nh = realloc(h, nsize + 2 * sizeof(size_t));
  if (!nh) return NULL;
  nh[0] = nsize;
  return nh + 2;
}

/* ---------------------------------------------------------------- the program */

enum { M = 6, K = 10, N = 12 };
static float xs[M * K], ws[K * N], bs[N];

/* sum over each row of softmax(relu(x @ w + b)) * (1 + col/8), a row of M floats */
static tkc_status run_program(tkc_ctx *ctx, float out[M]) {
  tkc_status st = TKC_OK;
  tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){M, K}, xs);
  tkc_tensor *w = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){K, N}, ws);
  tkc_tensor *b = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){N}, bs);
  tkc_tensor *h = tkc_relu(tkc_add(tkc_matmul(x, w), b));
  tkc_tensor *sm = tkc_softmax(h, 1);
  tkc_tensor *scale = tkc_add(tkc_scalar(ctx, TKC_FLOAT32, 1), tkc_div(tkc_arange(ctx, TKC_FLOAT32, 0, N, 1), tkc_scalar(ctx, TKC_FLOAT32, 8)));
  tkc_tensor *y = tkc_sum(tkc_mul(sm, scale), 1, (const int[]){1}, 0);
  if (!y) st = tkc_last_status();
  else st = tkc_copy_out(y, out, M * sizeof(float));
  tkc_tensor_free(x), tkc_tensor_free(w), tkc_tensor_free(b), tkc_tensor_free(h), tkc_tensor_free(sm);
  tkc_tensor_free(scale), tkc_tensor_free(y);
  return st;
}

static void reference(float out[M]) {
  for (int i = 0; i < M; i++) {
    double h[N], mx = -INFINITY, den = 0, s = 0;
    for (int j = 0; j < N; j++) {
      double a = bs[j];
      for (int k = 0; k < K; k++) a += (double)xs[i * K + k] * ws[k * N + j];
      h[j] = a > 0 ? a : 0;
      if (h[j] > mx) mx = h[j];
    }
    for (int j = 0; j < N; j++) den += exp(h[j] - mx);
    for (int j = 0; j < N; j++) s += exp(h[j] - mx) / den * (1 + j / 8.0);
    out[i] = (float)s;
  }
}

static void check_close(const float *got, const float *want, const char *what) {
  for (int i = 0; i < M; i++)
    if (!(fabsf(got[i] - want[i]) <= 1e-4f * (1 + fabsf(want[i])))) fail_msg("%s: out[%d] = %g, want %g", what, i, got[i], want[i]);
}

static size_t live_blocks(void) {
  size_t n;
  tkc_memory_stats(&n, NULL);
  return n;
}

/* One run with allocation k failing (0: none): the program's result and the ctx afterwards. */
static int run_failing(const char *dev, long k, const float *want) {
  atomic_store(&allocs, 0);
  atomic_store(&fail_at, k);
  long failed_before = atomic_load(&failures);
  float got[M];
  tkc_clear_error();
  tkc_ctx *ctx = tkc_ctx_new(dev);
  tkc_status st = ctx ? run_program(ctx, got) : tkc_last_status();
  int hit = atomic_load(&failures) > failed_before;
  atomic_store(&fail_at, 0);
  program_allocs = atomic_load(&allocs);
  char what[128];
  snprintf(what, sizeof what, "%s, allocation %ld failing", dev, k);
  if (st == TKC_OK) check_close(got, want, what); /* the failure was absorbed (a cache that stays cold) */
  else {
    if (st != TKC_ENOMEM) fail_msg("%s: status %s (%s), want TKC_ENOMEM", what, tkc_status_str(st), tkc_last_error());
    if (!hit) fail_msg("%s: TKC_ENOMEM without a failed allocation", what);
    if (!*tkc_last_error()) fail_msg("%s: TKC_ENOMEM with no message", what);
  }
  if (ctx) { /* still usable */
    float again[M];
    tkc_status st2 = run_program(ctx, again);
    if (st2) fail_msg("%s: the ctx failed afterwards: %s", what, tkc_last_error());
    snprintf(what, sizeof what, "%s, allocation %ld failed, the next run", dev, k);
    check_close(again, want, what);
    tkc_ctx_free(ctx);
  }
  tkc_cache_flush();
  return hit;
}

static void sweep(const char *dev, long stride) {
  if (!tkc_device_available(dev)) {
    printf("# skip %s: not available here\n", dev);
    return;
  }
  float want[M];
  reference(want);
  run_failing(dev, 0, want); /* warms what is built once per process (device init, compiler probe) */
  size_t base = live_blocks();
  run_failing(dev, 0, want);
  long total = program_allocs;
  if (live_blocks() != base) fail_msg("%s: %zu blocks live after a clean run, %zu before", dev, live_blocks(), base);
  assert_true(total > 50);
  long runs = 0, enomem = 0;
  for (long k = 1; k <= total; k += stride, runs++) {
    enomem += run_failing(dev, k, want);
    if (live_blocks() != base) fail_msg("%s, allocation %ld failing: %zu blocks live afterwards, %zu before (a leak)", dev, k, live_blocks(), base);
  }
  assert_int_equal(atomic_load(&osize_bad), 0);
  printf("# %s: %ld allocations per run, %ld runs with one failing, %ld hit one\n", dev, total, runs, enomem);
}

static void test_interp(void **state) { (void)state, sweep("INTERP", 1); }
static void test_llvm(void **state) { (void)state, sweep("LLVM", 1); }
static void test_cpu(void **state) { (void)state, sweep("CPU", 1); } /* compiled code from the disk cache after the first run */
static void test_webgpu(void **state) { (void)state, sweep("WEBGPU", 3); }

/* the allocator API itself */
static void test_allocator_api(void **state) {
  (void)state;
  void *ud = &ud;
  assert_int_equal(tkc_set_allocator(failing_alloc, ud), TKC_OK);
  void *got_ud = NULL;
  assert_ptr_equal(tkc_get_allocator(&got_ud), failing_alloc);
  assert_ptr_equal(got_ud, ud);
  assert_int_equal(tkc_set_allocator(failing_alloc, NULL), TKC_OK); /* back to the test's pair */
  /* a block made under one allocator is freed by it after a switch */
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  assert_non_null(ctx);
  assert_int_equal(tkc_set_allocator(NULL, NULL), TKC_OK);
  assert_non_null(tkc_get_allocator(NULL));
  assert_true(tkc_get_allocator(NULL) != failing_alloc);
  float got[M], want[M];
  reference(want);
  assert_int_equal(run_program(ctx, got), TKC_OK);
  check_close(got, want, "after switching allocators");
  tkc_ctx_free(ctx);
  tkc_cache_flush();
  assert_int_equal(atomic_load(&osize_bad), 0);
  assert_int_equal(tkc_set_allocator(failing_alloc, NULL), TKC_OK);
  tkc_memory_stats(NULL, NULL); /* NULL outputs */
  size_t blocks = 0, bytes = 0;
  tkc_memory_stats(&blocks, &bytes);
  assert_true(bytes >= blocks); /* every live block is at least a byte... or empty: weak, but counts are sane */
  /* too many distinct allocators */
  static char uds[80];
  tkc_status st = TKC_OK;
  for (int i = 0; i < 80 && st == TKC_OK; i++) st = tkc_set_allocator(failing_alloc, &uds[i]);
  assert_int_equal(st, TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "allocators"));
  assert_int_equal(tkc_set_allocator(failing_alloc, NULL), TKC_OK); /* an installed pair still works */
}

int main(void) {
  for (int i = 0; i < M * K; i++) xs[i] = (float)((i * 37) % 23 - 11) / 8;
  for (int i = 0; i < K * N; i++) ws[i] = (float)((i * 53) % 19 - 9) / 10;
  for (int i = 0; i < N; i++) bs[i] = (float)(i % 5 - 2) / 4;
  if (tkc_set_allocator(failing_alloc, NULL)) return 1; /* before tkc's first block */
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_interp), cmocka_unit_test(test_llvm), cmocka_unit_test(test_cpu),
                                     cmocka_unit_test(test_webgpu), cmocka_unit_test(test_allocator_api)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
