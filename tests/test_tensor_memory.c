/* Memory stays bounded in a long-running program: 100,000 small realize + free cycles on one ctx
 * (tensor_new, add a scalar, realize, copy_out, free) and a chain of dependent realizations
 * (x = x + 1, the old x freed) keep the resident set size within a fixed bound. Leaks are caught by
 * LeakSanitizer in the ASan build (`make asan`). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <time.h>
#include <unistd.h>
#include "tensor_ref.h"

#if defined(__SANITIZE_ADDRESS__)
#define TKC_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TKC_TEST_ASAN 1
#endif
#endif

/* Under ASan freed memory sits in ASan's quarantine (up to 256 MB by default), so RSS says nothing
 * about leaks there: the ASan build runs the same cycles (about 110 us each there, ~11 s in all: no
 * need to scale down) and leaves the leak check to LeakSanitizer at exit. */
#define CYCLES 100000
#ifdef TKC_TEST_ASAN
#define CHECK_RSS 0
#else
#define CHECK_RSS 1
#endif
#define WARMUP 1000
#define RSS_GROWTH_MAX_KB (4 * 1024)

static long rss_kb(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long size = 0, res = -1;
  if (f) {
    if (fscanf(f, "%ld %ld", &size, &res) != 2) res = -1;
    fclose(f);
  }
  return res < 0 ? -1 : res * (sysconf(_SC_PAGESIZE) / 1024);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* one cycle; returns false (after reporting) when anything fails or the values are wrong */
static bool cycle(tkc_ctx *ctx, int i) {
  static const int64_t shape[1] = {4};
  float in[4] = {(float)i, 1, 2, 3}, out[4] = {0};
  tkc_tensor *t = tkc_tensor_new(ctx, TKC_FLOAT32, 1, shape, in);
  tkc_tensor *s = tkc_scalar(ctx, TKC_FLOAT32, 0.5);
  tkc_tensor *r = tkc_add(t, s);
  bool ok = r && tkc_realize(r) == TKC_OK && tkc_copy_out(r, out, sizeof out) == TKC_OK;
  ok = ok && out[0] == (float)i + 0.5f && out[1] == 1.5f && out[3] == 3.5f;
  if (!ok) tr_problem("cycle %d: %s (out %g %g %g %g)", i, tkc_last_error(), out[0], out[1], out[2], out[3]);
  tkc_tensor_free(r), tkc_tensor_free(s), tkc_tensor_free(t);
  return ok;
}

/* the faster of INTERP and CPU for this loop (timed over 200 cycles each) */
static const char *pick_device(void) {
  const char *best = "INTERP";
  double best_t = 1e30;
  static const char *const devs[] = {"INTERP", "CPU"};
  for (int d = 0; d < 2; d++) {
    if (!tkc_device_available(devs[d])) continue;
    tkc_ctx *ctx = tkc_ctx_new(devs[d]);
    if (!ctx) continue;
    cycle(ctx, 0); /* compile once */
    double t0 = now_s();
    for (int i = 0; i < 200; i++) cycle(ctx, i);
    double t = now_s() - t0;
    printf("  %s: %.1f us per cycle\n", devs[d], t / 200 * 1e6);
    if (t < best_t) best_t = t, best = devs[d];
    tkc_ctx_free(ctx);
  }
  return best;
}

static void test_realize_free_cycles(void **state) {
  (void)state;
  tr_begin();
  const char *dev = pick_device();
  tkc_ctx *ctx = tkc_ctx_new(dev);
  assert_non_null(ctx);
  double t0 = now_s();
  int i = 0;
  for (; i < WARMUP && tr_nfail < 5; i++) cycle(ctx, i);
  long rss0 = rss_kb();
  for (; i < CYCLES && tr_nfail < 5; i++) cycle(ctx, i);
  long rss1 = rss_kb();
  double t = now_s() - t0;
  printf("  %s: %d cycles in %.1f s; RSS %ld kB after %d, %ld kB after %d (%+ld kB)\n", dev, i, t, rss0, WARMUP, rss1, i, rss1 - rss0);
  if (CHECK_RSS)
    TR_EXPECT(rss0 > 0 && rss1 - rss0 < RSS_GROWTH_MAX_KB, "RSS grew by %ld kB over %d cycles (bound %d kB)", rss1 - rss0, i - WARMUP, RSS_GROWTH_MAX_KB);
  else printf("  ASan build: RSS bound not checked (quarantine); LeakSanitizer checks leaks at exit\n");
  TR_EXPECT(tr_ctx_works(ctx), "ctx after the loop");
  tkc_ctx_free(ctx);
  TR_END();
}

/* x = x + 1 realized each step, the previous x freed: realized results must not keep their whole
 * history alive */
static void test_dependent_chain(void **state) {
  (void)state;
  tr_begin();
  const int steps = CYCLES / 5, warm = steps / 10;
  FOR_EACH_DEVICE(dev, ctx) {
    static const int64_t shape[1] = {8};
    tkc_tensor *x = tkc_tensor_new(ctx, TKC_INT32, 1, shape, NULL), *one = tkc_scalar(ctx, TKC_INT32, 1);
    long rss0 = 0;
    double t0 = now_s();
    for (int i = 0; i < steps && x; i++) {
      if (i == warm) rss0 = rss_kb();
      tkc_tensor *y = tkc_add(x, one);
      if (!y || tkc_realize(y) != TKC_OK) tr_problem("%s: step %d: %s", dev, i, tkc_last_error());
      tkc_tensor_free(x);
      x = y;
    }
    long rss1 = rss_kb();
    int32_t out[8] = {0};
    TR_EXPECT(x && tkc_copy_out(x, out, sizeof out) == TKC_OK && out[0] == steps && out[7] == steps, "%s: after %d steps x = %d", dev, steps, out[0]);
    printf("  %s: %d dependent steps in %.1f s; RSS %+ld kB after step %d\n", dev, steps, now_s() - t0, rss1 - rss0, warm);
    if (CHECK_RSS) TR_EXPECT(rss1 - rss0 < RSS_GROWTH_MAX_KB, "%s: RSS grew by %ld kB over %d dependent steps", dev, rss1 - rss0, steps - warm);
  }
  TR_END();
}

/* many ctxs created and freed: nothing stays behind */
static void test_ctx_cycles(void **state) {
  (void)state;
  tr_begin();
  long rss0 = 0;
  for (int i = 0; i < 2000; i++) {
    if (i == 200) rss0 = rss_kb();
    tkc_ctx *ctx = tkc_ctx_new("INTERP");
    if (!ctx) {
      tr_problem("ctx_new %d: %s", i, tkc_last_error());
      break;
    }
    if (i % 100 == 0) cycle(ctx, i);
    else (void)tkc_add(tkc_full(ctx, TKC_FLOAT32, 1, (const int64_t[]){4}, 1), tkc_scalar(ctx, TKC_FLOAT32, 1)); /* never realized */
    tkc_ctx_free(ctx);
  }
  long rss1 = rss_kb();
  printf("  2000 ctxs: RSS %+ld kB after 200\n", rss1 - rss0);
  if (CHECK_RSS) TR_EXPECT(rss1 - rss0 < RSS_GROWTH_MAX_KB, "RSS grew by %ld kB over 1800 ctxs", rss1 - rss0);
  TR_END();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_realize_free_cycles),
      cmocka_unit_test(test_dependent_chain),
      cmocka_unit_test(test_ctx_cycles),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
