/* Memory stays bounded in a long-running program: 100,000 small realize + free cycles on one ctx
 * (tensor_new, add a scalar, realize, copy_out, free) and a chain of dependent realizations
 * (x = x + 1, the old x freed) keep the resident set size within a fixed bound. Leaks are caught by
 * LeakSanitizer in the ASan build (`make asan`). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include "tensor_ref.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TKC_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TKC_TEST_ASAN 1
#endif
#endif

/* Under ASan freed memory sits in ASan's quarantine (up to 256 MB by default; TSan keeps its own
 * history), so RSS says nothing
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

/* the kernel cache: a graph seen before on the same device with the same opts builds nothing
 * (tkc_ctx_stats counts builds); other opts, other sizes and TKC_NOOPT build anew; values agree */
static void test_kernel_cache(void **state) {
  (void)state;
  tr_begin();
  tkc_stats st;
  TR_EXPECT(tkc_ctx_stats(NULL, &st) == TKC_EINVAL, "NULL ctx");
  FOR_EACH_DEVICE(dev, ctx) {
    TR_EXPECT(tkc_ctx_stats(ctx, NULL) == TKC_EINVAL, "%s: NULL out", dev);
    tkc_tensor *a = tkc_rand(ctx, TKC_FLOAT32, 2, (const int64_t[]){16, 24}, 1), *b = tkc_rand(ctx, TKC_FLOAT32, 2, (const int64_t[]){24, 8}, 2);
    tkc_tensor *b9 = tkc_rand(ctx, TKC_FLOAT32, 2, (const int64_t[]){24, 9}, 3);
    TR_EXPECT(!tkc_realize(a) && !tkc_realize(b) && !tkc_realize(b9), "%s: inputs", dev);
    float first[128], again[128];
    tkc_stats s0, s1, s2;
    tkc_ctx_stats(ctx, &s0);
    TR_EXPECT(tkc_copy_out(tkc_matmul(a, b), first, sizeof first) == TKC_OK, "%s: matmul", dev);
    tkc_ctx_stats(ctx, &s1);
    TR_EXPECT(s1.kernels == s0.kernels + 1 && s1.kernels_built <= s0.kernels_built + 1, "%s: one kernel run, at most one built", dev);
    TR_EXPECT(tkc_copy_out(tkc_matmul(a, b), again, sizeof again) == TKC_OK, "%s: matmul again", dev);
    tkc_ctx_stats(ctx, &s2);
    TR_EXPECT(s2.kernels == s1.kernels + 1 && s2.kernels_built == s1.kernels_built, "%s: the same graph again built %lld kernels", dev,
              (long long)(s2.kernels_built - s1.kernels_built));
    TR_EXPECT(!memcmp(first, again, sizeof first), "%s: the cached kernel gives other values", dev);
    TR_EXPECT(s2.kernel_s >= s0.kernel_s && s2.build_s >= s0.build_s, "%s: times only grow", dev);
    /* given opts are part of the key: the first time builds, the second does not */
    tkc_opt up = {TKC_OPT_UPCAST, 0, 2};
    for (int rep = 0; rep < 2; rep++) {
      tkc_stats t0, t1;
      tkc_ctx_stats(ctx, &t0);
      tkc_tensor *m = tkc_matmul(a, b);
      TR_EXPECT(tkc_realize_opts(m, &up, 1) == TKC_OK && tkc_copy_out(m, again, sizeof again) == TKC_OK, "%s: matmul with UPCAST", dev);
      tkc_ctx_stats(ctx, &t1);
      if (rep) TR_EXPECT(t1.kernels_built == t0.kernels_built, "%s: UPCAST again built a kernel", dev);
      for (int i = 0; i < 128; i++) TR_EXPECT(fabsf(again[i] - first[i]) <= 1e-5f * (1 + fabsf(first[i])), "%s: UPCAST matmul [%d]", dev, i);
      tkc_tensor_free(m);
    }
    /* another size, and the heuristics turned off or on: new kernels */
    float nine[144];
    tkc_ctx_stats(ctx, &s0);
    TR_EXPECT(tkc_copy_out(tkc_matmul(a, b9), nine, sizeof nine) == TKC_OK, "%s: matmul (16,24)@(24,9)", dev);
    const char *was = getenv("TKC_NOOPT");
    bool noopt = was && !strcmp(was, "1");
    setenv("TKC_NOOPT", noopt ? "0" : "1", 1);
    TR_EXPECT(tkc_copy_out(tkc_matmul(a, b), again, sizeof again) == TKC_OK, "%s: matmul, TKC_NOOPT toggled", dev);
    if (noopt) setenv("TKC_NOOPT", "1", 1);
    else unsetenv("TKC_NOOPT");
    tkc_ctx_stats(ctx, &s1);
    TR_EXPECT(s1.kernels == s0.kernels + 2 && s1.kernels_built == s0.kernels_built + 2, "%s: two kernels run and built (%lld)", dev,
              (long long)(s1.kernels_built - s0.kernels_built));
    for (int i = 0; i < 128; i++) TR_EXPECT(fabsf(again[i] - first[i]) <= 1e-5f * (1 + fabsf(first[i])), "%s: TKC_NOOPT toggled: [%d]", dev, i);
  }
  TR_END();
}

/* the buffer pool: a freed buffer's memory is reused by the next buffer of its size (counted), the
 * bound holds, a reused buffer never shows its old data (a zero-filled tensor is zero, a padded view
 * still shows its pad value), and releasing empties it */
static void test_buffer_pool(void **state) {
  (void)state;
  tr_begin();
  tkc_pool_stats ps;
  TR_EXPECT(tkc_device_pool_stats(NULL, &ps) == TKC_EINVAL, "NULL device");
  FOR_EACH_DEVICE(dev, ctx) {
    tkc_device *d = tkc_device_get(dev);
    TR_EXPECT(tkc_device_pool_stats(d, NULL) == TKC_EINVAL, "%s: NULL out", dev);
    enum { N = 1000 };
    float sevens[N], got[N];
    for (int i = 0; i < N; i++) sevens[i] = 7.0f;
    tkc_pool_stats s0, s1, s2;
    tkc_device_pool_stats(d, &s0);
    for (int rep = 0; rep < 3; rep++) { /* the same shapes again: served from the pool */
      tkc_tensor *a = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){N}, sevens), *b = tkc_add(a, a);
      TR_EXPECT(tkc_copy_out(b, got, sizeof got) == TKC_OK && got[0] == 14.0f && got[N - 1] == 14.0f, "%s: a + a", dev);
      tkc_tensor_free(b);
      tkc_tensor_free(a);
    }
    tkc_device_pool_stats(d, &s1);
    TR_EXPECT(s1.reuses >= s0.reuses + 4, "%s: 3 rounds of 2 buffers reused only %lld", dev, (long long)(s1.reuses - s0.reuses));
    TR_EXPECT(s1.pooled_bytes <= s1.bound_bytes, "%s: %zu bytes pooled past the bound %zu", dev, s1.pooled_bytes, s1.bound_bytes);
    /* a zero-filled tensor on reused memory is zero */
    tkc_tensor *z = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){N}, NULL);
    TR_EXPECT(tkc_copy_out(z, got, sizeof got) == TKC_OK, "%s: zeros", dev);
    for (int i = 0; i < N; i++) TR_EXPECT(got[i] == 0.0f, "%s: a zero-filled tensor on pooled memory holds %g at %d", dev, got[i], i);
    tkc_tensor_free(z);
    /* a padded view computed into a buffer that held sevens shows its pad value */
    tkc_tensor *old = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){N}, sevens);
    tkc_tensor_free(old);
    float small[N - 10];
    for (int i = 0; i < N - 10; i++) small[i] = (float)i;
    tkc_tensor *c = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){N - 10}, small), *p = tkc_pad(c, (const int64_t[]){4, 6}, -1.5);
    TR_EXPECT(tkc_copy_out(p, got, sizeof got) == TKC_OK, "%s: pad", dev);
    for (int i = 0; i < N; i++) {
      float want = i < 4 || i >= N - 6 ? -1.5f : (float)(i - 4);
      TR_EXPECT(got[i] == want, "%s: padded view on reused memory: [%d] = %g, want %g", dev, i, got[i], want);
    }
    /* the bound (TKC_POOL_MB=8 in this suite): 3 MiB buffers, 4 of them freed, never more than 8 MiB kept */
    tkc_tensor *big[4];
    for (int i = 0; i < 4; i++) big[i] = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){(3 << 20) / 4 + i}, NULL);
    for (int i = 0; i < 4; i++) tkc_tensor_free(big[i]);
    tkc_device_pool_stats(d, &s2);
    TR_EXPECT(s2.bound_bytes == (size_t)8 << 20 && s2.pooled_bytes <= s2.bound_bytes, "%s: %zu bytes pooled, bound %zu", dev, s2.pooled_bytes, s2.bound_bytes);
    TR_EXPECT(s2.pooled_bytes >= (size_t)(3 << 20), "%s: the pool kept nothing of the big buffers (%zu bytes)", dev, s2.pooled_bytes);
    tkc_device_release_pool(d);
    tkc_device_pool_stats(d, &s2);
    TR_EXPECT(s2.pooled_bytes == 0, "%s: %zu bytes still pooled after release", dev, s2.pooled_bytes);
    tkc_device_release_pool(NULL); /* a no-op */
  }
  TR_END();
}

/* bad uses of scopes and copy_in: a status and a message, never a crash; nesting and keep */
static void test_scope_rules(void **state) {
  (void)state;
  tr_begin();
  TR_EXPECT(tkc_scope_begin(NULL) == TKC_EINVAL && tkc_scope_end(NULL) == TKC_EINVAL, "NULL ctx");
  TR_EXPECT(tkc_keep(NULL) == NULL, "keep(NULL)");
  FOR_EACH_DEVICE(dev, ctx) {
    TR_EXPECT(tkc_scope_end(ctx) == TKC_EINVAL && strstr(tkc_last_error(), "without a matching"), "%s: end without begin: %s", dev, tkc_last_error());
    tkc_tensor *outer = tkc_full(ctx, TKC_FLOAT32, 1, (const int64_t[]){4}, 1);
    TR_EXPECT(tkc_keep(outer) == NULL && strstr(tkc_last_error(), "no scope"), "%s: keep outside a scope: %s", dev, tkc_last_error());
    TR_EXPECT(tkc_scope_begin(ctx) == TKC_OK, "%s: begin", dev);
    tkc_tensor *a = tkc_add(outer, outer);
    TR_EXPECT(tkc_scope_begin(ctx) == TKC_OK, "%s: nested begin", dev);
    tkc_tensor *b = tkc_mul(a, tkc_scalar(ctx, TKC_FLOAT32, 3)), *k = tkc_keep(tkc_add(b, outer));
    TR_EXPECT(k != NULL, "%s: keep", dev);
    TR_EXPECT(tkc_scope_end(ctx) == TKC_OK, "%s: inner end", dev);
    TR_EXPECT(tkc_ndim(b) == 0 && strstr(tkc_last_error(), "freed"), "%s: b after its scope: %s", dev, tkc_last_error());
    float v[4] = {0};
    TR_EXPECT(tkc_copy_out(k, v, sizeof v) == TKC_OK && v[0] == 7.0f && v[3] == 7.0f, "%s: kept (a+a)*3+1 = %g", dev, v[0]);
    TR_EXPECT(tkc_copy_out(a, v, sizeof v) == TKC_OK && v[0] == 2.0f, "%s: a of the outer scope lives on", dev);
    TR_EXPECT(tkc_scope_end(ctx) == TKC_OK, "%s: outer end", dev);
    TR_EXPECT(tkc_copy_out(k, v, sizeof v) == TKC_EINVAL && strstr(tkc_last_error(), "freed"), "%s: k after the outer scope: %s", dev, tkc_last_error());
    TR_EXPECT(tkc_copy_out(outer, v, sizeof v) == TKC_OK && v[0] == 1.0f, "%s: a handle outside every scope lives on", dev);
    /* kept out of the outermost scope: freed by hand */
    TR_EXPECT(tkc_scope_begin(ctx) == TKC_OK, "%s: begin", dev);
    tkc_tensor *x = tkc_keep(tkc_neg(outer));
    TR_EXPECT(tkc_scope_end(ctx) == TKC_OK && tkc_copy_out(x, v, sizeof v) == TKC_OK && v[0] == -1.0f, "%s: kept out of every scope", dev);
    tkc_tensor_free(x);
    /* unscope: out of two nested scopes at once (a cache made inside a caller's scopes) */
    TR_EXPECT(tkc_scope_begin(ctx) == TKC_OK && tkc_scope_begin(ctx) == TKC_OK, "%s: begin twice", dev);
    tkc_tensor *u = tkc_unscope(tkc_mul(outer, tkc_scalar(ctx, TKC_FLOAT32, 5)));
    TR_EXPECT(u != NULL, "%s: unscope", dev);
    TR_EXPECT(tkc_scope_end(ctx) == TKC_OK && tkc_scope_end(ctx) == TKC_OK && tkc_copy_out(u, v, sizeof v) == TKC_OK && v[1] == 5.0f,
              "%s: unscoped out of both scopes: %s", dev, tkc_last_error());
    TR_EXPECT(tkc_unscope(u) == u, "%s: unscope of a tensor in no scope", dev);
    tkc_tensor_free(u);
    tkc_clear_error();
    TR_EXPECT(tkc_unscope(NULL) == NULL && tkc_last_status() == TKC_EINVAL, "%s: unscope(NULL)", dev);
    TR_EXPECT(tkc_unscope(u) == NULL && strstr(tkc_last_error(), "freed"), "%s: unscope of a freed tensor: %s", dev, tkc_last_error());
    /* copy_in: bad inputs */
    float four[4] = {1, 2, 3, 4};
    tkc_tensor *t = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){4}, NULL);
    TR_EXPECT(tkc_copy_in(NULL, four, sizeof four) == TKC_EINVAL, "%s: copy_in NULL tensor", dev);
    TR_EXPECT(tkc_copy_in(t, NULL, sizeof four) == TKC_EINVAL, "%s: copy_in NULL source", dev);
    TR_EXPECT(tkc_copy_in(t, four, 12) == TKC_EINVAL && strstr(tkc_last_error(), "12 bytes"), "%s: copy_in wrong size", dev);
    TR_EXPECT(tkc_copy_in(tkc_add(t, t), four, sizeof four) == TKC_EINVAL && strstr(tkc_last_error(), "not realized"), "%s: copy_in lazy: %s", dev, tkc_last_error());
    TR_EXPECT(tkc_copy_in(outer, four, sizeof four) == TKC_EINVAL && strstr(tkc_last_error(), "view"), "%s: copy_in a realized broadcast: %s", dev, tkc_last_error());
    tkc_tensor *wide = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){8}, NULL), *part = tkc_shrink(wide, (const int64_t[]){2, 6});
    TR_EXPECT(tkc_realize(part) == TKC_OK, "%s: realize a view", dev);
    TR_EXPECT(tkc_copy_in(part, four, sizeof four) == TKC_EINVAL && strstr(tkc_last_error(), "view"), "%s: copy_in a view: %s", dev, tkc_last_error());
    TR_EXPECT(tkc_copy_in(t, four, sizeof four) == TKC_OK && tkc_copy_out(t, v, sizeof v) == TKC_OK && v[2] == 3.0f, "%s: copy_in", dev);
    tkc_tensor *dead = tkc_add(t, t);
    tkc_tensor_free(dead);
    TR_EXPECT(tkc_copy_in(dead, four, sizeof four) == TKC_EINVAL, "%s: copy_in a freed tensor", dev);
  }
  /* a ctx freed inside a scope frees everything (LeakSanitizer checks) */
  tkc_ctx *c2 = tkc_ctx_new("INTERP");
  TR_EXPECT(c2 && tkc_scope_begin(c2) == TKC_OK, "ctx in a scope");
  (void)tkc_add(tkc_full(c2, TKC_FLOAT32, 1, (const int64_t[]){4}, 1), tkc_scalar(c2, TKC_FLOAT32, 1));
  tkc_ctx_free(c2);
  TR_END();
}

/* The README's loop: a scope per iteration, tkc_copy_in of new inputs, an unnamed matmul inside
 * relu: RSS stays bounded over 100,000 iterations and every kernel is built once. */
static void test_scope_loop(void **state) {
  (void)state;
  tr_begin();
  static const char *const devs[] = {"CPU", "LLVM"};
  for (int di = 0; di < 2; di++) {
    if (!tkc_device_available(devs[di])) {
      printf("  skipped %s: unavailable\n", devs[di]);
      continue;
    }
    tkc_ctx *ctx = tkc_ctx_new(devs[di]);
    enum { IN = 16, OUT = 8 };
    float w[IN * OUT], x[IN], y[OUT];
    for (int i = 0; i < IN * OUT; i++) w[i] = (float)((i * 7) % 5) - 2.0f;
    tkc_tensor *W = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){IN, OUT}, w);
    tkc_tensor *X = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){1, IN}, NULL);
    tkc_stats s0, s1;
    long rss0 = 0;
    int iters = CYCLES, bad = 0;
    for (int it = 0; it < iters && !bad; it++) {
      if (it == 1) tkc_ctx_stats(ctx, &s0);
      if (it == WARMUP) rss0 = rss_kb();
      for (int i = 0; i < IN; i++) x[i] = (float)((it + i) % 9) - 4.0f;
      tkc_scope_begin(ctx);
      tkc_copy_in(X, x, sizeof x);
      tkc_tensor *Y = tkc_keep(tkc_relu(tkc_matmul(X, W)));
      tkc_status st = tkc_copy_out(Y, y, sizeof y);
      tkc_scope_end(ctx);
      tkc_tensor_free(Y);
      if (st) {
        tr_problem("%s: iteration %d: %s", devs[di], it, tkc_last_error());
        bad = 1;
      }
      if (it % 9973 == 0)
        for (int j = 0; j < OUT; j++) {
          float want = 0;
          for (int i = 0; i < IN; i++) want += x[i] * w[i * OUT + j];
          want = want > 0 ? want : 0;
          if (y[j] != want) bad = 1, tr_problem("%s: iteration %d: y[%d] = %g, want %g", devs[di], it, j, y[j], want);
        }
    }
    tkc_ctx_stats(ctx, &s1);
    long rss1 = rss_kb();
    printf("  %s: %d scoped iterations, RSS %+ld kB after %d, %lld kernels built after the first\n", devs[di], iters, rss1 - rss0, WARMUP,
           (long long)(s1.kernels_built - s0.kernels_built));
    TR_EXPECT(s1.kernels_built == s0.kernels_built, "%s: %lld kernels built after the first iteration", devs[di], (long long)(s1.kernels_built - s0.kernels_built));
    TR_EXPECT(s1.kernels - s0.kernels == iters - 1, "%s: %lld kernels run for %d iterations", devs[di], (long long)(s1.kernels - s0.kernels), iters - 1);
    if (CHECK_RSS) TR_EXPECT(rss1 - rss0 < RSS_GROWTH_MAX_KB, "%s: RSS grew by %ld kB", devs[di], rss1 - rss0);
    tkc_ctx_free(ctx);
  }
  TR_END();
}

/* ---------------------------------------------------------------- progress callback */

typedef struct seen { /* what on_progress was told */
  char names[16][160];
  int done[16], n, total, wrong_thread;
  pthread_t self;
} seen;

static void on_progress(const tkc_progress *p, void *user) {
  seen *s = user;
  if (!pthread_equal(pthread_self(), s->self)) s->wrong_thread++;
  if (s->n < 16) {
    snprintf(s->names[s->n], sizeof s->names[0], "%s", p->kernel);
    s->done[s->n] = p->done;
  }
  s->n++;
  s->total = p->total;
  if (strcmp(p->stage, "compile") || p->seconds < 0) s->wrong_thread += 100;
}

/* every kernel a realize builds is reported once, on the realizing thread, counted 1..total; a
 * realize whose kernels are all cached reports nothing */
/* tkc_tensor_ref: a second handle to the same tensor, freed on its own */
static void test_tensor_ref(void **state) {
  (void)state;
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  const float d[3] = {1, 2, 3};
  tkc_tensor *a = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){3}, d);
  tkc_tensor *y = tkc_mul(a, a), *r = tkc_tensor_ref(y);
  assert_non_null(r);
  assert_ptr_not_equal(r, y);
  tkc_tensor_free(y); /* r lives on, and sees the same (lazy) values */
  float out[3];
  assert_int_equal(tkc_copy_out(r, out, sizeof out), TKC_OK);
  for (int i = 0; i < 3; i++) assert_true(out[i] == d[i] * d[i]);
  tkc_tensor_free(r);
  assert_null(tkc_tensor_ref(NULL));
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  tkc_ctx_free(ctx);
}

static void test_progress(void **state) {
  (void)state;
  tr_begin();
  TR_EXPECT(tkc_ctx_set_progress(NULL, on_progress, NULL) == TKC_EINVAL, "set_progress(NULL ctx)");
  FOR_EACH_DEVICE(dev, ctx) {
    static int salt;
    int64_t n = 37 + salt++; /* shapes no other test made: kernels this process has not built */
    seen s;
    memset(&s, 0, sizeof s);
    s.self = pthread_self();
    TR_EXPECT(tkc_ctx_set_progress(ctx, on_progress, &s) == TKC_OK, "%s: set_progress", dev);
    tkc_tensor *x = tkc_full(ctx, TKC_FLOAT32, 2, (const int64_t[]){n, 5}, 0.5);
    tkc_tensor *y = tkc_sum(tkc_exp(x), 1, (const int[]){1}, 1); /* a reduce */
    tkc_tensor *z = tkc_add(tkc_mul(x, y), tkc_max(tkc_sqrt(x), 0, NULL, 0));
    tkc_stats a, b;
    tkc_ctx_stats(ctx, &a);
    TR_EXPECT(tkc_realize(z) == TKC_OK, "%s: realize", dev);
    tkc_ctx_stats(ctx, &b);
    int built = (int)(b.kernels_built - a.kernels_built);
    TR_EXPECT(built >= 2 && s.n == built && s.total == built && !s.wrong_thread, "%s: %d reports of %d built (total %d, %d wrong)", dev, s.n,
              built, s.total, s.wrong_thread);
    for (int i = 0; i < s.n && i < 16; i++)
      TR_EXPECT(s.done[i] == i + 1 && s.names[i][0], "%s: report %d says done %d (kernel \"%s\")", dev, i, s.done[i], s.names[i]);
    float v[64 * 5];
    TR_EXPECT(tkc_copy_out(z, v, (size_t)n * 5 * sizeof *v) == TKC_OK && fabsf(v[0] - (0.5f * 5 * expf(0.5f) + sqrtf(0.5f))) < 1e-4f, "%s: value %g",
              dev, v[0]);
    int before = s.n; /* the same kernels again: from the cache, not reported */
    tkc_tensor *z2 = tkc_add(tkc_mul(x, tkc_sum(tkc_exp(x), 1, (const int[]){1}, 1)), tkc_max(tkc_sqrt(x), 0, NULL, 0));
    TR_EXPECT(tkc_realize(z2) == TKC_OK && s.n == before, "%s: %d reports for cached kernels", dev, s.n - before);
    TR_EXPECT(tkc_ctx_set_progress(ctx, NULL, NULL) == TKC_OK, "%s: progress off", dev);
    tkc_tensor *w = tkc_add(z2, tkc_scalar(ctx, TKC_FLOAT32, 1.25)); /* a new kernel, unreported */
    TR_EXPECT(tkc_realize(w) == TKC_OK && s.n == before, "%s: reported after turning progress off", dev);
  }
  TR_END();
}

int main(void) {
  setenv("TKC_POOL_MB", "8", 1); /* before the pool is first used: test_buffer_pool checks the bound */
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_realize_free_cycles),
      cmocka_unit_test(test_dependent_chain),
      cmocka_unit_test(test_ctx_cycles),
      cmocka_unit_test(test_kernel_cache),
      cmocka_unit_test(test_buffer_pool),
      cmocka_unit_test(test_scope_rules),
      cmocka_unit_test(test_scope_loop),
      cmocka_unit_test(test_progress),
      cmocka_unit_test(test_tensor_ref),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
