/* The ctx's device-side random generator (src/graph/random.c) on every device: the Threefry-2x32-20
 * block against its known-answer vector and uniform values bit for bit against a host reference,
 * reproducibility (tkc_manual_seed) and fresh values per draw, statistics of randn / rand_uniform /
 * kaiming / glorot with fixed seeds, dropout (identities, the fraction dropped, the exact scale),
 * dropout masks and randn redrawn at every jit replay (and the same sequence after reseeding with a
 * new jit), and bad inputs. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "tkc.h"

static const char *const DEVICES[] = {"INTERP", "CPU", "LLVM", "WEBGPU"};
#define NDEV (sizeof DEVICES / sizeof *DEVICES)

/* ---------------------------------------------------------------- host reference */

static uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

/* Threefry-2x32, 20 rounds (Random123) */
static void threefry_ref(uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1, uint32_t out[2]) {
  static const int rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  uint32_t ks[3] = {k0, k1, 0x1BD11BDAu ^ k0 ^ k1}, x0 = c0 + k0, x1 = c1 + k1;
  for (int r = 0; r < 20; r++) {
    x0 += x1, x1 = rotl32(x1, rot[r % 8]), x1 ^= x0;
    if (r % 4 == 3) {
      uint32_t s = (uint32_t)(r / 4 + 1);
      x0 += ks[s % 3], x1 += ks[(s + 1) % 3] + s;
    }
  }
  out[0] = x0, out[1] = x1;
}

static uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* float32 uniform [0, 1) value i of draw number `draw` after tkc_manual_seed(seed) */
static float uniform_ref(uint64_t seed, uint32_t draw, uint32_t i) {
  uint64_t k = splitmix64(seed);
  uint32_t w[2];
  threefry_ref((uint32_t)k, (uint32_t)(k >> 32), i, draw, w);
  return (float)(w[0] >> 8) * 0x1p-24f;
}

static void test_threefry_known_answer(void **state) {
  (void)state;
  uint32_t w[2];
  threefry_ref(0, 0, 0, 0, w); /* Random123's kat_vectors: threefry2x32 20, all zero */
  assert_int_equal(w[0], 0x6b200159u);
  assert_int_equal(w[1], 0x99ba4efeu);
  threefry_ref(0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, w);
  assert_int_equal(w[0], 0x1cb996fcu);
  assert_int_equal(w[1], 0xbb002be7u);
}

/* ---------------------------------------------------------------- helpers */

static tkc_ctx *ctx_on(size_t d) { return tkc_device_available(DEVICES[d]) ? tkc_ctx_new(DEVICES[d]) : NULL; }

static void read_f32(tkc_tensor *t, float *out, size_t n) {
  assert_non_null(t);
  tkc_status st = tkc_copy_out(t, out, n * sizeof *out);
  if (st) printf("%s\n", tkc_last_error());
  assert_int_equal(st, TKC_OK);
}

static float *draw_uniform(tkc_ctx *ctx, int64_t n, double lo, double hi) {
  float *v = malloc((size_t)n * sizeof *v);
  tkc_tensor *t = tkc_rand_uniform(ctx, TKC_FLOAT32, 1, &n, lo, hi);
  if (!t) printf("%s: %s\n", tkc_ctx_device(ctx), tkc_last_error());
  read_f32(t, v, (size_t)n);
  tkc_tensor_free(t);
  return v;
}

static void mean_var(const float *v, int64_t n, double *mean, double *var) {
  double s = 0, q = 0;
  for (int64_t i = 0; i < n; i++) s += v[i];
  *mean = s / (double)n;
  for (int64_t i = 0; i < n; i++) q += (v[i] - *mean) * (v[i] - *mean);
  *var = q / (double)(n - 1);
}

/* |got - want| <= 5 standard errors */
static void within_5se(const char *what, const char *dev, double got, double want, double se) {
  if (!(fabs(got - want) <= 5 * se)) printf("%s on %s: %.6g, want %.6g +- 5 * %.3g\n", what, dev, got, want, se);
  assert_true(fabs(got - want) <= 5 * se);
}

/* ---------------------------------------------------------------- values and reproducibility */

/* the first draws after a seed are the host reference's, bit for bit, on every device */
static void test_uniform_matches_reference(void **state) {
  (void)state;
  enum { N = 1000 };
  for (size_t d = 0; d < NDEV; d++) {
    tkc_ctx *ctx = ctx_on(d);
    if (!ctx) continue;
    assert_int_equal(tkc_manual_seed(ctx, 1234), TKC_OK);
    for (uint32_t draw = 0; draw < 3; draw++) {
      float *v = draw_uniform(ctx, N, 0, 1);
      for (uint32_t i = 0; i < N; i++) {
        float want = uniform_ref(1234, draw, i);
        if (memcmp(&v[i], &want, 4)) printf("%s draw %u element %u: %.9g, want %.9g\n", DEVICES[d], draw, i, v[i], want);
        assert_memory_equal(&v[i], &want, 4);
      }
      free(v);
    }
    tkc_ctx_free(ctx);
  }
}

/* a fresh ctx has a fixed seed; draws differ; a reseed repeats them; other seeds differ */
static void test_reproducible(void **state) {
  (void)state;
  enum { N = 256 };
  for (size_t d = 0; d < NDEV; d++) {
    tkc_ctx *ctx = ctx_on(d);
    if (!ctx) continue;
    float *a = draw_uniform(ctx, N, 0, 1), *b = draw_uniform(ctx, N, 0, 1);
    assert_true(memcmp(a, b, sizeof(float) * N) != 0);
    for (int i = 0; i < N; i++) assert_true(a[i] == uniform_ref(0, 0, (uint32_t)i)); /* default seed 0 */
    tkc_ctx *fresh = tkc_ctx_new(DEVICES[d]);
    float *c = draw_uniform(fresh, N, 0, 1);
    assert_memory_equal(a, c, sizeof(float) * N);
    free(c);
    /* inside a scope: the generator outlives it */
    assert_int_equal(tkc_scope_begin(ctx), TKC_OK);
    assert_int_equal(tkc_manual_seed(ctx, 0), TKC_OK);
    c = draw_uniform(ctx, N, 0, 1);
    assert_int_equal(tkc_scope_end(ctx), TKC_OK);
    assert_memory_equal(a, c, sizeof(float) * N);
    free(c);
    c = draw_uniform(ctx, N, 0, 1); /* the second draw after seed 0 */
    assert_memory_equal(b, c, sizeof(float) * N);
    free(c);
    assert_int_equal(tkc_manual_seed(ctx, 1), TKC_OK);
    c = draw_uniform(ctx, N, 0, 1);
    assert_true(memcmp(a, c, sizeof(float) * N) != 0);
    free(a), free(b), free(c);
    tkc_ctx_free(fresh);
    tkc_ctx_free(ctx);
  }
}

/* randn: the same seed gives INTERP's values on every device (up to the devices' cos/log/sqrt) */
static void test_randn_across_devices(void **state) {
  (void)state;
  enum { N = 4096 };
  static float ref[N];
  int have_ref = 0;
  const int64_t shape[2] = {64, 64};
  for (size_t d = 0; d < NDEV; d++) {
    tkc_ctx *ctx = ctx_on(d);
    if (!ctx) continue;
    assert_int_equal(tkc_manual_seed(ctx, 99), TKC_OK);
    float v[N];
    tkc_tensor *t = tkc_randn(ctx, TKC_FLOAT32, 2, shape);
    read_f32(t, v, N);
    assert_int_equal(tkc_ndim(t), 2);
    assert_int_equal(tkc_dim(t, 0), 64);
    if (!have_ref) memcpy(ref, v, sizeof v), have_ref = 1;
    for (int i = 0; i < N; i++) {
      if (!(fabsf(v[i] - ref[i]) <= 1e-5f * fmaxf(1, fabsf(ref[i])))) printf("%s element %d: %.9g, INTERP %.9g\n", DEVICES[d], i, v[i], ref[i]);
      assert_true(fabsf(v[i] - ref[i]) <= 1e-5f * fmaxf(1, fabsf(ref[i])));
    }
    /* and Box-Muller of the reference uniforms (streams 0 and 1 of draw 0) */
    for (int i = 0; i < N; i += 97) {
      double u1 = uniform_ref(99, 0, (uint32_t)i), u2 = uniform_ref(99, 0, (uint32_t)(N + i));
      double want = cos(2 * 3.141592653589793 * u1) * sqrt(-2 * log(1 - u2));
      assert_true(fabs(v[i] - want) <= 1e-5 * fmax(1, fabs(want)));
    }
    tkc_tensor_free(t);
    tkc_ctx_free(ctx);
  }
}

/* ---------------------------------------------------------------- statistics (fixed seeds) */

static void test_normal_stats(void **state) {
  (void)state;
  const int64_t n = 100000;
  for (size_t d = 0; d < NDEV; d++) {
    tkc_ctx *ctx = ctx_on(d);
    if (!ctx) continue;
    assert_int_equal(tkc_manual_seed(ctx, 42), TKC_OK);
    float *v = malloc((size_t)n * sizeof *v);
    tkc_tensor *t = tkc_randn(ctx, TKC_FLOAT32, 1, &n);
    read_f32(t, v, (size_t)n);
    double mean, var;
    mean_var(v, n, &mean, &var);
    within_5se("randn mean", DEVICES[d], mean, 0, sqrt(1.0 / (double)n));
    within_5se("randn variance", DEVICES[d], var, 1, sqrt(2.0 / (double)n));
    int64_t beyond2 = 0; /* P(|z| > 2) = 0.0455 */
    for (int64_t i = 0; i < n; i++) beyond2 += fabsf(v[i]) > 2;
    within_5se("randn P(|z| > 2)", DEVICES[d], (double)beyond2 / (double)n, 0.0455003, sqrt(0.0455 * 0.9545 / (double)n));
    tkc_tensor_free(t);
    free(v);
    if (strcmp(DEVICES[d], "WEBGPU")) { /* float64 (53-bit uniforms) */
      double *w = malloc((size_t)n * sizeof *w), s = 0, q = 0;
      t = tkc_randn(ctx, TKC_FLOAT64, 1, &n);
      assert_non_null(t);
      assert_int_equal(tkc_copy_out(t, w, (size_t)n * sizeof *w), TKC_OK);
      for (int64_t i = 0; i < n; i++) s += w[i], q += w[i] * w[i];
      within_5se("randn float64 mean", DEVICES[d], s / (double)n, 0, sqrt(1.0 / (double)n));
      within_5se("randn float64 E[z^2]", DEVICES[d], q / (double)n, 1, sqrt(2.0 / (double)n));
      tkc_tensor_free(t);
      free(w);
    }
    tkc_ctx_free(ctx);
  }
}

static void test_uniform_stats(void **state) {
  (void)state;
  const int64_t n = 100000;
  const double lo = -2, hi = 3;
  for (size_t d = 0; d < NDEV; d++) {
    tkc_ctx *ctx = ctx_on(d);
    if (!ctx) continue;
    assert_int_equal(tkc_manual_seed(ctx, 7), TKC_OK);
    float *v = draw_uniform(ctx, n, lo, hi);
    float mn = v[0], mx = v[0];
    for (int64_t i = 0; i < n; i++) mn = fminf(mn, v[i]), mx = fmaxf(mx, v[i]);
    assert_true(mn >= lo && mx < hi);
    assert_true(mn < lo + 0.01 && mx > hi - 0.01); /* the whole range is used */
    double mean, var;
    mean_var(v, n, &mean, &var);
    within_5se("uniform mean", DEVICES[d], mean, (lo + hi) / 2, (hi - lo) / sqrt(12.0 * (double)n));
    within_5se("uniform variance", DEVICES[d], var, (hi - lo) * (hi - lo) / 12, (hi - lo) * (hi - lo) / 12 * sqrt(0.8 / (double)n));
    free(v);
    /* float64: 53-bit values in [0, 1) */
    if (strcmp(DEVICES[d], "WEBGPU")) {
      double w[4096];
      const int64_t m = 4096;
      tkc_tensor *t = tkc_rand_uniform(ctx, TKC_FLOAT64, 1, &m, 0, 1);
      assert_non_null(t);
      assert_int_equal(tkc_copy_out(t, w, sizeof w), TKC_OK);
      int fine_bits = 0; /* values using more than float32's 24 bits */
      for (int i = 0; i < m; i++) {
        assert_true(w[i] >= 0 && w[i] < 1);
        fine_bits += w[i] * 0x1p24 != floor(w[i] * 0x1p24);
      }
      assert_true(fine_bits > m * 9 / 10);
      tkc_tensor_free(t);
    }
    /* float16 (where the device has it): 11-bit values, never rounded up to 1 */
    const int64_t m = 4096;
    tkc_tensor *h = tkc_rand_uniform(ctx, TKC_FLOAT16, 1, &m, 0, 1);
    if (h) {
      uint16_t bits[4096];
      assert_int_equal(tkc_copy_out(h, bits, sizeof bits), TKC_OK);
      int zeros = 0;
      for (int i = 0; i < m; i++) assert_true(bits[i] < 0x3C00), zeros += bits[i] == 0; /* [0, 1) */
      assert_true(zeros < 20);
      tkc_tensor_free(h);
    }
    tkc_ctx_free(ctx);
  }
}

static void check_init(const char *what, const char *dev, tkc_tensor *t, int64_t n, double bound) {
  float *v = malloc((size_t)n * sizeof *v);
  read_f32(t, v, (size_t)n);
  double amax = 0, mean, var;
  for (int64_t i = 0; i < n; i++) amax = fmax(amax, fabs(v[i]));
  if (!(amax <= bound && amax > 0.99 * bound)) printf("%s on %s: max |v| %.9g, bound %.9g\n", what, dev, amax, bound);
  assert_true(amax <= bound && amax > 0.99 * bound);
  mean_var(v, n, &mean, &var);
  within_5se(what, dev, var, bound * bound / 3, bound * bound / 3 * sqrt(0.8 / (double)n));
  free(v);
}

static void test_init_bounds(void **state) {
  (void)state;
  for (size_t d = 0; d < NDEV; d++) {
    tkc_ctx *ctx = ctx_on(d);
    if (!ctx) continue;
    assert_int_equal(tkc_manual_seed(ctx, 3), TKC_OK);
    const int64_t lin[2] = {256, 128}, conv[4] = {64, 8, 3, 3}; /* Linear (out, in), conv OIHW */
    tkc_tensor *k = tkc_kaiming_uniform(ctx, TKC_FLOAT32, 2, lin, 0.01);
    check_init("kaiming (256, 128)", DEVICES[d], k, 256 * 128, sqrt(3.0) * sqrt(2.0 / (1 + 0.01 * 0.01)) / sqrt(128.0));
    tkc_tensor *k5 = tkc_kaiming_uniform(ctx, TKC_FLOAT32, 4, conv, sqrt(5.0)); /* torch's default for conv/linear */
    check_init("kaiming (64, 8, 3, 3)", DEVICES[d], k5, 64 * 72, sqrt(3.0) * sqrt(2.0 / 6.0) / sqrt(72.0));
    tkc_tensor *g = tkc_glorot_uniform(ctx, TKC_FLOAT32, 2, lin);
    check_init("glorot (256, 128)", DEVICES[d], g, 256 * 128, sqrt(6.0 / (256 + 128)));
    const int64_t vec = 5000;
    tkc_tensor *g1 = tkc_glorot_uniform(ctx, TKC_FLOAT32, 1, &vec); /* 1 dim: fan in 1 */
    check_init("glorot (5000,)", DEVICES[d], g1, 5000, sqrt(6.0 / 5001));
    tkc_tensor_free(k), tkc_tensor_free(k5), tkc_tensor_free(g), tkc_tensor_free(g1);
    tkc_ctx_free(ctx);
  }
}

/* ---------------------------------------------------------------- dropout */

static void test_dropout(void **state) {
  (void)state;
  const int64_t n = 100000;
  const double p = 0.3;
  float *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
  for (int64_t i = 0; i < n; i++) x[i] = (float)(i % 1000) * 0.37f + 0.5f;
  for (size_t d = 0; d < NDEV; d++) {
    tkc_ctx *ctx = ctx_on(d);
    if (!ctx) continue;
    tkc_tensor *xt = tkc_tensor_new(ctx, TKC_FLOAT32, 1, &n, x);
    /* identities: new handles with x's values */
    tkc_tensor *same[2] = {tkc_dropout(xt, p, 0), tkc_dropout(xt, 0, 1)};
    for (int k = 0; k < 2; k++) {
      assert_non_null(same[k]);
      assert_ptr_not_equal(same[k], xt);
      read_f32(same[k], y, (size_t)n);
      assert_memory_equal(x, y, (size_t)n * sizeof *x);
      tkc_tensor_free(same[k]);
    }
    assert_int_equal(tkc_manual_seed(ctx, 11), TKC_OK);
    tkc_tensor *dr = tkc_dropout(xt, p, 1);
    read_f32(dr, y, (size_t)n);
    const float scale = (float)(1.0 / (1.0 - p));
    int64_t zeros = 0;
    for (int64_t i = 0; i < n; i++) {
      if (y[i] == 0) {
        zeros++;
        assert_true(uniform_ref(11, 0, (uint32_t)i) < (float)p); /* dropped where the uniform draw < p */
        continue;
      }
      assert_true(uniform_ref(11, 0, (uint32_t)i) >= (float)p);
      if (y[i] != x[i] * scale) printf("%s element %lld: %.9g, want %.9g\n", DEVICES[d], (long long)i, y[i], x[i] * scale);
      assert_true(y[i] == x[i] * scale); /* exactly x * (1 / (1 - p)) */
    }
    within_5se("dropout zero fraction", DEVICES[d], (double)zeros / (double)n, p, sqrt(p * (1 - p) / (double)n));
    /* the next dropout draws another mask */
    tkc_tensor *dr2 = tkc_dropout(xt, p, 1);
    float *y2 = malloc((size_t)n * sizeof *y2);
    read_f32(dr2, y2, (size_t)n);
    assert_true(memcmp(y, y2, (size_t)n * sizeof *y) != 0);
    free(y2);
    /* a lazy x of another float dtype */
    if (strcmp(DEVICES[d], "WEBGPU")) {
      const int64_t m = 1000;
      tkc_tensor *x64 = tkc_add(tkc_full(ctx, TKC_FLOAT64, 1, &m, 1.0), tkc_scalar(ctx, TKC_FLOAT64, 1.0));
      tkc_tensor *d64 = tkc_dropout(x64, 0.5, 1);
      assert_int_equal(tkc_dtype_of(d64), TKC_FLOAT64);
      double w[1000];
      int z = 0;
      assert_int_equal(tkc_copy_out(d64, w, sizeof w), TKC_OK);
      for (int i = 0; i < m; i++) assert_true(w[i] == 0 || w[i] == 4.0), z += w[i] == 0;
      assert_true(z > 400 && z < 600);
    }
    tkc_tensor_free(dr), tkc_tensor_free(dr2);
    tkc_ctx_free(ctx);
  }
  free(x), free(y);
}

/* ---------------------------------------------------------------- under a jit */

enum { JN = 512, REPLAYS = 4 };

static tkc_status dropout_fn(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)ctx, (void)nin, (void)nout, (void)user;
  out[0] = tkc_dropout(in[0], 0.5, 1);
  return out[0] ? TKC_OK : tkc_last_status();
}

static tkc_status randn_fn(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)nin, (void)nout, (void)user;
  tkc_tensor *r = tkc_randn(ctx, TKC_FLOAT32, 1, (const int64_t[]){JN});
  out[0] = r ? tkc_add(r, in[0]) : NULL;
  tkc_tensor_free(r);
  return out[0] ? TKC_OK : tkc_last_status();
}

/* REPLAYS runs of a new jit of fn on x, after tkc_manual_seed(seed), into got */
static void jit_runs(tkc_ctx *ctx, tkc_jit_fn fn, tkc_tensor *x, uint64_t seed, float got[REPLAYS][JN]) {
  assert_int_equal(tkc_manual_seed(ctx, seed), TKC_OK);
  tkc_jit *j = tkc_jit_new(ctx, fn, NULL);
  for (int r = 0; r < REPLAYS; r++) {
    tkc_tensor *out = NULL;
    tkc_status st = tkc_jit_run(j, &x, 1, &out, 1);
    if (st) printf("%s run %d: %s\n", tkc_ctx_device(ctx), r, tkc_last_error());
    assert_int_equal(st, TKC_OK);
    read_f32(out, got[r], JN);
    tkc_tensor_free(out);
  }
  assert_true(tkc_jit_kernels(j) >= 2);
  tkc_jit_free(j);
}

static void test_jit_redraws(void **state) {
  (void)state;
  static float a[REPLAYS][JN], b[REPLAYS][JN], eager[REPLAYS][JN];
  float ones[JN];
  for (int i = 0; i < JN; i++) ones[i] = 1;
  const int64_t n = JN;
  for (size_t d = 0; d < NDEV; d++) {
    tkc_ctx *ctx = ctx_on(d);
    if (!ctx) continue;
    tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 1, &n, ones);
    /* the generator made during a capture (a fresh ctx's first draw is in fn): kept by the jit */
    tkc_ctx *fresh = tkc_ctx_new(DEVICES[d]);
    tkc_tensor *fx = tkc_tensor_new(fresh, TKC_FLOAT32, 1, &n, ones);
    tkc_jit *j = tkc_jit_new(fresh, dropout_fn, NULL);
    for (int r = 0; r < REPLAYS; r++) {
      tkc_tensor *out = NULL;
      assert_int_equal(tkc_jit_run(j, &fx, 1, &out, 1), TKC_OK);
      read_f32(out, a[r], JN);
      tkc_tensor_free(out);
      for (int q = 0; q < r; q++) assert_true(memcmp(a[r], a[q], sizeof a[r]) != 0);
    }
    assert_int_equal(tkc_manual_seed(fresh, 0), TKC_OK); /* a captured jit continues from a new seed */
    tkc_tensor *again = NULL;
    assert_int_equal(tkc_jit_run(j, &fx, 1, &again, 1), TKC_OK);
    float first[JN];
    read_f32(again, first, JN);
    assert_memory_equal(first, a[0], sizeof first);
    tkc_tensor_free(again);
    tkc_jit_free(j);
    tkc_ctx_free(fresh);
    jit_runs(ctx, dropout_fn, x, 0, b); /* the default seed is 0 */
    assert_memory_equal(a, b, sizeof a);
    for (int which = 0; which < 2; which++) {
      tkc_jit_fn fn = which ? randn_fn : dropout_fn;
      jit_runs(ctx, fn, x, 5, a);
      for (int r = 0; r < REPLAYS; r++)
        for (int q = 0; q < r; q++) assert_true(memcmp(a[r], a[q], sizeof a[r]) != 0); /* a new mask every replay */
      jit_runs(ctx, fn, x, 5, b); /* reseeded, a new jit: the same sequence */
      assert_memory_equal(a, b, sizeof a);
      /* and the same as drawing eagerly */
      assert_int_equal(tkc_manual_seed(ctx, 5), TKC_OK);
      for (int r = 0; r < REPLAYS; r++) {
        tkc_tensor *out = NULL;
        assert_int_equal(fn(ctx, &x, 1, &out, 1, NULL), TKC_OK);
        read_f32(out, eager[r], JN);
        tkc_tensor_free(out);
      }
      assert_memory_equal(a, eager, sizeof a);
      if (!which) {
        int zeros = 0;
        for (int i = 0; i < JN; i++) zeros += a[REPLAYS - 1][i] == 0, assert_true(a[REPLAYS - 1][i] == 0 || a[REPLAYS - 1][i] == 2);
        assert_true(zeros > JN / 4 && zeros < 3 * JN / 4);
      }
    }
    tkc_ctx_free(ctx);
  }
}

/* ---------------------------------------------------------------- bad inputs */

static void expect_err(const void *got, tkc_status want, const char *needle) {
  assert_null(got);
  if (tkc_last_status() != want || !strstr(tkc_last_error(), needle)) printf("got %d \"%s\", want %d with \"%s\"\n", tkc_last_status(), tkc_last_error(), want, needle);
  assert_int_equal(tkc_last_status(), want);
  assert_non_null(strstr(tkc_last_error(), needle));
}

static void test_bad_inputs(void **state) {
  (void)state;
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  const int64_t s2[2] = {4, 4}, neg[2] = {4, -1}, big[2] = {1 << 16, 1 << 15};
  assert_int_equal(tkc_manual_seed(NULL, 1), TKC_EINVAL);
  expect_err(tkc_randn(NULL, TKC_FLOAT32, 2, s2), TKC_EINVAL, "NULL ctx");
  expect_err(tkc_rand_uniform(NULL, TKC_FLOAT32, 2, s2, 0, 1), TKC_EINVAL, "NULL ctx");
  expect_err(tkc_kaiming_uniform(NULL, TKC_FLOAT32, 2, s2, 0.01), TKC_EINVAL, "NULL ctx");
  expect_err(tkc_glorot_uniform(NULL, TKC_FLOAT32, 2, s2), TKC_EINVAL, "NULL ctx");
  expect_err(tkc_randn(ctx, TKC_INT32, 2, s2), TKC_EDTYPE, "makes floats");
  expect_err(tkc_rand_uniform(ctx, TKC_BOOL, 2, s2, 0, 1), TKC_EDTYPE, "makes floats");
  expect_err(tkc_glorot_uniform(ctx, TKC_UINT8, 2, s2), TKC_EDTYPE, "makes floats");
  expect_err(tkc_randn(ctx, TKC_FLOAT32, 2, neg), TKC_ESHAPE, "negative");
  expect_err(tkc_randn(ctx, TKC_FLOAT32, 2, big), TKC_ESHAPE, "2^31");
  expect_err(tkc_randn(ctx, TKC_FLOAT32, 2, NULL), TKC_EINVAL, "NULL shape");
  expect_err(tkc_randn(ctx, TKC_FLOAT32, 9, s2), TKC_ESHAPE, "dims");
  expect_err(tkc_rand_uniform(ctx, TKC_FLOAT32, 2, s2, 1, 0), TKC_EINVAL, "lo <= hi");
  expect_err(tkc_rand_uniform(ctx, TKC_FLOAT32, 2, s2, 0, INFINITY), TKC_EINVAL, "finite");
  expect_err(tkc_kaiming_uniform(ctx, TKC_FLOAT32, 0, NULL, 0.01), TKC_ESHAPE, "at least 1 dim");
  expect_err(tkc_kaiming_uniform(ctx, TKC_FLOAT32, 2, (const int64_t[]){4, 0}, 0.01), TKC_EINVAL, "fan in is 0");
  expect_err(tkc_kaiming_uniform(ctx, TKC_FLOAT32, 2, s2, NAN), TKC_EINVAL, "a must be finite");
  int64_t L = tkc_dim_var(ctx, "L", 1, 8);
  expect_err(tkc_randn(ctx, TKC_FLOAT32, 1, &L), TKC_EUNSUPPORTED, "variable");
  tkc_tensor *x = tkc_full(ctx, TKC_FLOAT32, 2, s2, 1), *xi = tkc_full(ctx, TKC_INT32, 2, s2, 1);
  expect_err(tkc_dropout(x, -0.1, 1), TKC_EINVAL, "[0, 1)");
  expect_err(tkc_dropout(x, 1.0, 1), TKC_EINVAL, "[0, 1)");
  expect_err(tkc_dropout(x, NAN, 0), TKC_EINVAL, "[0, 1)");
  expect_err(tkc_dropout(xi, 0.5, 1), TKC_EDTYPE, "float");
  assert_null(tkc_dropout(NULL, 0.5, 1));
  /* empty shapes: empty results */
  const int64_t e[2] = {0, 3};
  tkc_tensor *r = tkc_randn(ctx, TKC_FLOAT32, 2, e);
  assert_non_null(r);
  assert_int_equal(tkc_numel(r), 0);
  /* a 0-d draw */
  tkc_tensor *s = tkc_rand_uniform(ctx, TKC_FLOAT32, 0, NULL, 5, 6);
  float v;
  read_f32(s, &v, 1);
  assert_true(v >= 5 && v < 6);
  if (tkc_device_available("WEBGPU")) {
    tkc_ctx *wg = tkc_ctx_new("WEBGPU");
    expect_err(tkc_randn(wg, TKC_FLOAT64, 2, s2), TKC_EUNSUPPORTED, "");
    tkc_ctx_free(wg);
  }
  tkc_ctx_free(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_threefry_known_answer), cmocka_unit_test(test_uniform_matches_reference), cmocka_unit_test(test_reproducible),
      cmocka_unit_test(test_randn_across_devices),  cmocka_unit_test(test_normal_stats),              cmocka_unit_test(test_uniform_stats),
      cmocka_unit_test(test_init_bounds),           cmocka_unit_test(test_dropout),                   cmocka_unit_test(test_jit_redraws),
      cmocka_unit_test(test_bad_inputs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
