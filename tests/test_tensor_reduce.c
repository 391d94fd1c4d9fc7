/* The tensor API's reductions, movement ops, creation functions and properties (tkc.h) on every
 * available device, against plain-C reference loops (tensor_ref.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "tensor_ref.h"

typedef tkc_tensor *(*redfn)(tkc_tensor *, int, const int *, int);
static const struct {
  redfn fn;
  const char *name;
} RED[] = {[TR_SUM] = {tkc_sum, "sum"}, [TR_RMAX] = {tkc_max, "max"}, [TR_RMIN] = {tkc_min, "min"}, [TR_MEAN] = {tkc_mean, "mean"}};

static const char *axes_str(int n, const int *axes, int keepdim, char *buf, size_t len) {
  int k = snprintf(buf, len, "axes {");
  for (int i = 0; i < n && k < (int)len; i++) k += snprintf(buf + k, len - (size_t)k, "%s%d", i ? "," : "", axes[i]);
  if (k < (int)len) snprintf(buf + k, len - (size_t)k, "}%s", keepdim ? " keepdim" : "");
  return buf;
}

/* ---------------------------------------------------------------- reductions */

/* every reduction on every dtype: (2,3,4) over the last axis and over all axes; result dtypes as
 * tinygrad: sum of small ints in int32/uint32, half in float32 cast back, mean of ints -> float32 */
static void test_reduce_every_dtype(void **state) {
  (void)state;
  tr_begin();
  FOR_EACH_DEVICE(dev, ctx) {
    for (int d = 0; d < TR_NDT; d++) {
      tkc_dtype dt = tr_all_dtypes[d];
      if (!tr_dev_supports(dev, dt)) {
        printf("  skipped %s on %s: the renderer cannot hold it\n", tr_dn(dt), dev);
        continue;
      }
      href a;
      tkc_tensor *ta = tr_make(ctx, dt, TR_SHAPE(2, 3, 4), TR_DOM_ANY, NULL, &a);
      for (int kind = TR_SUM; kind <= TR_MEAN; kind++) {
        if (!tr_dev_supports(dev, tr_reduce_out_dt(kind, dt))) continue;
        for (int variant = 0; variant < (kind == TR_SUM ? 2 : 1); variant++) { /* all axes: sum only (compile time) */
          int axes[1] = {-1}, naxes = variant ? 0 : 1, keep = 0;
          char what[160], ab[64];
          snprintf(what, sizeof what, "%s: %s(%s (2,3,4), %s)", dev, RED[kind].name, tr_dn(dt), axes_str(naxes, axes, keep, ab, sizeof ab));
          href w = tr_reduce(kind, &a, naxes, axes, keep);
          tr_checkk(RED[kind].fn(ta, naxes, naxes ? axes : NULL, keep), &w, kind == TR_MEAN || kind == TR_SUM ? 1 : 0, what);
          tr_free(&w);
        }
      }
      tr_free(&a);
    }
  }
  TR_END();
}

/* axis sets, negative axes, keepdim, on float32 and int32 */
static void test_reduce_axes(void **state) {
  (void)state;
  tr_begin();
  static const struct { int n; int axes[3]; int keep; } sets[] = {
      {1, {0}, 0}, {1, {1}, 1}, {1, {-2}, 0}, {2, {0, 2}, 0}, {2, {-1, 0}, 1}, {2, {2, 1}, 0}, {3, {0, 1, 2}, 0}, {3, {2, 0, 1}, 1}, {0, {0}, 1},
  };
  FOR_EACH_DEVICE(dev, ctx) {
    for (int d = 0; d < 2; d++) {
      tkc_dtype dt = d ? TKC_INT32 : TKC_FLOAT32;
      href a;
      tkc_tensor *ta = tr_make(ctx, dt, TR_SHAPE(2, 3, 4), TR_DOM_ANY, NULL, &a);
      for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        int kind = (int)(s + (size_t)d) % 4;
        char what[160], ab[64];
        snprintf(what, sizeof what, "%s: %s(%s (2,3,4), %s)", dev, RED[kind].name, tr_dn(dt), axes_str(sets[s].n, sets[s].axes, sets[s].keep, ab, sizeof ab));
        href w = tr_reduce(kind, &a, sets[s].n, sets[s].axes, sets[s].keep);
        tr_checkk(RED[kind].fn(ta, sets[s].n, sets[s].n ? sets[s].axes : NULL, sets[s].keep), &w, 1, what);
        tr_free(&w);
      }
      tr_free(&a);
    }
  }
  TR_END();
}

/* 0-d, size-1, empty and non-contiguous inputs; fused elementwise before and after a reduce */
static void test_reduce_shapes_and_views(void **state) {
  (void)state;
  tr_begin();
  FOR_EACH_DEVICE(dev, ctx) {
    /* 0-d: the reduction of a scalar is itself */
    href s = tr_from_doubles(TKC_FLOAT32, 0, NULL, (const double[]){2.5});
    for (int kind = TR_SUM; kind <= TR_MEAN; kind++) {
      href w = tr_reduce(kind, &s, 0, NULL, 0);
      char what[96];
      snprintf(what, sizeof what, "%s: %s of a 0-d", dev, RED[kind].name);
      tr_checkk(RED[kind].fn(tr_upload(ctx, &s), 0, NULL, 0), &w, 0, what);
      tr_free(&w);
    }
    tr_free(&s);
    /* size-1 dims */
    href a;
    tkc_tensor *ta = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(1, 5, 1), TR_DOM_ANY, NULL, &a);
    int ax0[1] = {0}, ax2[2] = {0, 2};
    href w = tr_reduce(TR_SUM, &a, 1, ax0, 0);
    tr_checkk(tkc_sum(ta, 1, ax0, 0), &w, 1, "sum (1,5,1) axis 0");
    tr_free(&w);
    w = tr_reduce(TR_RMAX, &a, 2, ax2, 1);
    tr_checkk(tkc_max(ta, 2, ax2, 1), &w, 0, "max (1,5,1) axes 0,2 keepdim");
    tr_free(&w), tr_free(&a);
    /* empty: a sum over a 0-size axis is 0; the sum of nothing is 0 */
    for (int d = 0; d < 2; d++) {
      tkc_dtype dt = d ? TKC_INT32 : TKC_FLOAT32;
      href e = tr_new(dt, TR_SHAPE(2, 0, 3));
      int ax1[1] = {1};
      w = tr_reduce(TR_SUM, &e, 1, ax1, 0);
      tr_checkk(tkc_sum(tr_upload(ctx, &e), 1, ax1, 0), &w, 0, d ? "sum int32 (2,0,3) axis 1" : "sum float32 (2,0,3) axis 1");
      tr_free(&w);
      w = tr_reduce(TR_SUM, &e, 0, NULL, 0);
      tr_checkk(tkc_sum(tr_upload(ctx, &e), 0, NULL, 0), &w, 0, "sum of an empty tensor");
      tr_free(&w);
      int ax0b[1] = {0};
      w = tr_reduce(TR_SUM, &e, 1, ax0b, 1); /* (1,0,3): nothing to compute */
      tr_checkk(tkc_sum(tr_upload(ctx, &e), 1, ax0b, 1), &w, 0, "sum (2,0,3) axis 0 keepdim -> (1,0,3)");
      tr_free(&w), tr_free(&e);
    }
    /* reductions of views */
    static const struct { const char *name; int ndim; int64_t shape[3]; tr_step steps[4]; } views[] = {
        {"permuted", 3, {4, 2, 3}, {TR_PERMUTE(1, 2, 0), {TS_END, 0, {0}, 0}}},
        {"flipped", 3, {2, 3, 4}, {TR_FLIP(0, 2), {TS_END, 0, {0}, 0}}},
        {"padded", 3, {2, 1, 2}, {TR_PAD(-1, 0, 0, 1, 1, 1, 1), {TS_END, 0, {0}, 0}}},
        {"shrunk", 3, {3, 5, 6}, {TR_SHRINK(1, 3, 1, 4, 2, 6), {TS_END, 0, {0}, 0}}},
        {"expanded", 3, {2, 1, 4}, {TR_EXPAND(2, 3, 4), {TS_END, 0, {0}, 0}}},
        {"expand-reshape", 2, {1, 4}, {TR_EXPAND(6, 4), TR_RESHAPE(2, 3, 4), {TS_END, 0, {0}, 0}}},
    };
    for (size_t v = 0; v < sizeof views / sizeof views[0]; v++)
      for (int kind = TR_SUM; kind <= TR_MEAN; kind++) {
        int axes[2] = {(int)v % 2, -1}; /* distinct axes of a 3-d */
        int n = kind == TR_SUM ? 2 : 1;
        href x;
        tkc_tensor *tx = tr_make(ctx, TKC_FLOAT32, views[v].ndim, views[v].shape, TR_DOM_ANY, views[v].steps, &x);
        char what[128];
        snprintf(what, sizeof what, "%s: %s of a %s view", dev, RED[kind].name, views[v].name);
        w = tr_reduce(kind, &x, n, axes, kind == TR_RMAX);
        tr_checkk(RED[kind].fn(tx, n, axes, kind == TR_RMAX), &w, 1, what);
        tr_free(&w), tr_free(&x);
      }
    /* fusion shapes: sum(exp(x) * y) over an axis, then / 2 + sum: elementwise before and after */
    href x, y;
    tkc_tensor *tx = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(3, 5), TR_DOM_ANY, NULL, &x), *ty = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(5), TR_DOM_ANY, NULL, &y);
    href ex = tr_unary(TR_EXP, &x), m = tr_binary(TR_MUL, &ex, &y);
    int ax1[1] = {1};
    href r = tr_reduce(TR_SUM, &m, 1, ax1, 0), two = tr_from_doubles(TKC_FLOAT32, 0, NULL, (const double[]){2});
    w = tr_binary(TR_DIV, &r, &two);
    tr_checkk(tkc_div(tkc_sum(tkc_mul(tkc_exp(tx), ty), 1, ax1, 0), tkc_scalar(ctx, TKC_FLOAT32, 2)), &w, 1, "sum(exp(x)*y, 1)/2");
    /* x - max(x) with keepdim (elementwise after a reduce, broadcast back) */
    href mx = tr_reduce(TR_RMAX, &x, 1, ax1, 1), d2 = tr_binary(TR_SUB, &x, &mx);
    tr_checkk(tkc_sub(tx, tkc_max(tx, 1, ax1, 1)), &d2, 0, "x - max(x, 1, keepdim)");
    /* sum of a pad of exp: the pad's fill is not exp(0) */
    href pd = tr_pad(&ex, (const int64_t[]){1, 1, 0, 2}, 0);
    href ps = tr_reduce(TR_SUM, &pd, 0, NULL, 0);
    tr_checkk(tkc_sum(tkc_pad(tkc_exp(tx), (const int64_t[]){1, 1, 0, 2}, 0), 0, NULL, 0), &ps, 1, "sum(pad(exp(x)))");
    tr_free(&x), tr_free(&y), tr_free(&ex), tr_free(&m), tr_free(&r), tr_free(&two), tr_free(&w), tr_free(&mx), tr_free(&d2), tr_free(&pd), tr_free(&ps);
  }
  TR_END();
}

/* accumulator dtypes: int8/uint8 sums past their range, float16 sums past 2048 (a float16
 * accumulator would stop at 2048 + 1 = 2048) */
static void test_reduce_accumulators(void **state) {
  (void)state;
  tr_begin();
  FOR_EACH_DEVICE(dev, ctx) {
    tkc_tensor *i8 = tkc_full(ctx, TKC_INT8, 1, (const int64_t[]){300}, 100);
    tkc_tensor *s = tkc_sum(i8, 0, NULL, 0);
    int32_t si = 0;
    TR_EXPECT(s && tkc_dtype_of(s) == TKC_INT32, "%s: sum(int8) dtype %s", dev, tr_dn(tkc_dtype_of(s)));
    TR_EXPECT(s && tkc_copy_out(s, &si, 4) == TKC_OK && si == 30000, "%s: sum of 300 int8 100s = %d, want 30000", dev, si);
    tkc_tensor *u8 = tkc_full(ctx, TKC_UINT8, 2, (const int64_t[]){10, 30}, 255);
    s = tkc_sum(u8, 0, NULL, 0);
    uint32_t su = 0;
    TR_EXPECT(s && tkc_dtype_of(s) == TKC_UINT32, "%s: sum(uint8) dtype %s", dev, tr_dn(tkc_dtype_of(s)));
    TR_EXPECT(s && tkc_copy_out(s, &su, 4) == TKC_OK && su == 76500, "%s: sum of 300 uint8 255s = %u, want 76500", dev, su);
    tkc_tensor *b = tkc_full(ctx, TKC_BOOL, 1, (const int64_t[]){1000}, 1);
    s = tkc_sum(b, 0, NULL, 0);
    TR_EXPECT(s && tkc_dtype_of(s) == TKC_INT32, "%s: sum(bool) dtype %s", dev, tr_dn(tkc_dtype_of(s)));
    TR_EXPECT(s && tkc_copy_out(s, &si, 4) == TKC_OK && si == 1000, "%s: sum of 1000 trues = %d", dev, si);
    if (tr_dev_supports(dev, TKC_FLOAT16)) {
      href h = tr_new(TKC_FLOAT16, TR_SHAPE(3000));
      for (int k = 0; k < 3000; k++) h.v[k].f = 1;
      s = tkc_sum(tr_upload(ctx, &h), 0, NULL, 0);
      uint16_t bits = 0;
      TR_EXPECT(s && tkc_dtype_of(s) == TKC_FLOAT16, "%s: sum(float16) dtype %s", dev, tr_dn(tkc_dtype_of(s)));
      TR_EXPECT(s && tkc_copy_out(s, &bits, 2) == TKC_OK && ref_half_value(bits) == 3000, "%s: sum of 3000 float16 ones = %g, want 3000",
                dev, ref_half_value(bits));
      tr_free(&h);
    }
    if (tr_dev_supports(dev, TKC_INT64)) {
      tkc_tensor *big = tkc_full(ctx, TKC_INT64, 1, (const int64_t[]){4}, 3e9);
      int64_t s64 = 0;
      s = tkc_sum(big, 0, NULL, 0);
      TR_EXPECT(s && tkc_dtype_of(s) == TKC_INT64 && tkc_copy_out(s, &s64, 8) == TKC_OK && s64 == 12000000000LL, "%s: int64 sum = %lld", dev, (long long)s64);
    }
    /* mean of ints is float32, of float16 stays float16 */
    tkc_tensor *m = tkc_mean(tkc_arange(ctx, TKC_INT32, 0, 10, 1), 0, NULL, 0);
    float mf = 0;
    TR_EXPECT(m && tkc_dtype_of(m) == TKC_FLOAT32 && tkc_copy_out(m, &mf, 4) == TKC_OK && mf == 4.5f, "%s: mean(arange int32 10) = %g", dev, mf);
  }
  TR_END();
}

/* long reductions (GPUs split them across a workgroup: shared memory + barrier, PADTO for a prime
 * size; lavapipe would refuse 1,000,003 loop iterations in one invocation): sum, max and mean of
 * 1,000,003 small integers, and a matmul with a 70,000-long inner dim. Every partial sum is an
 * integer below 2^24, so float32 sums are exact in any order. */
static void test_long_reductions(void **state) {
  (void)state;
  tr_begin();
  const int64_t n = 1000003, K = 70000, M = 3, N = 5;
  float *h = malloc((size_t)n * sizeof *h), *a = malloc((size_t)(M * K) * sizeof *a), *b = malloc((size_t)(K * N) * sizeof *b);
  assert_true(h && a && b);
  double want_sum = 0, want_mm[3 * 5] = {0};
  float want_max = -INFINITY;
  for (int64_t i = 0; i < n; i++) {
    h[i] = (float)((i * 7919) % 13) - 6.0f + (i == 777777 ? 20.0f : 0.0f);
    want_sum += h[i];
    want_max = h[i] > want_max ? h[i] : want_max;
  }
  for (int64_t i = 0; i < M * K; i++) a[i] = (float)((i * 31) % 5) - 2.0f;
  for (int64_t i = 0; i < K * N; i++) b[i] = (float)((i * 17) % 5) - 2.0f;
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++)
      for (int64_t k = 0; k < K; k++) want_mm[i * N + j] += (double)a[i * K + k] * b[k * N + j];
  FOR_EACH_DEVICE(dev, ctx) {
    tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 1, &n, h);
    float sum = 0, mx = 0, mean = 0, mm[3 * 5];
    tkc_status s1 = tkc_copy_out(tkc_sum(x, 0, NULL, 0), &sum, 4);
    const char *noopt = getenv("TKC_NOOPT");
    if (s1 == TKC_EUNSUPPORTED && noopt && !strcmp(noopt, "1") && strstr(tkc_last_error(), "loop iterations")) {
      printf("  %s refuses a 1,000,003-long loop without opts (TKC_NOOPT=1): %s\n", dev, tkc_last_error());
    } else {
      TR_EXPECT(s1 == TKC_OK && sum == (float)want_sum, "%s: sum of 1,000,003 = %g, want %g: %s", dev, sum, want_sum, tkc_last_error());
      TR_EXPECT(tkc_copy_out(tkc_max(x, 0, NULL, 0), &mx, 4) == TKC_OK && mx == want_max, "%s: max of 1,000,003 = %g, want %g: %s", dev, mx, want_max, tkc_last_error());
      TR_EXPECT(tkc_copy_out(tkc_mean(x, 0, NULL, 0), &mean, 4) == TKC_OK && fabs(mean - want_sum / n) <= 1e-6 * fabs(want_sum / n) + 1e-9,
                "%s: mean of 1,000,003 = %.9g, want %.9g: %s", dev, mean, want_sum / n, tkc_last_error());
    }
    tkc_tensor *ta = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){M, K}, a), *tb = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){K, N}, b);
    tkc_status st = tkc_copy_out(tkc_matmul(ta, tb), mm, sizeof mm);
    TR_EXPECT(st == TKC_OK, "%s: matmul (3,70000)@(70000,5): %s", dev, tkc_last_error());
    for (int i = 0; !st && i < M * N; i++) TR_EXPECT(mm[i] == (float)want_mm[i], "%s: matmul K=70000 [%d] = %g, want %g", dev, i, mm[i], want_mm[i]);
  }
  free(h);
  free(a);
  free(b);
  TR_END();
}

/* ---------------------------------------------------------------- movement */

static void test_movement(void **state) {
  (void)state;
  tr_begin();
  static const struct { const char *name; int ndim; int64_t shape[4]; tr_step steps[5]; } cases[] = {
      {"reshape (2,3,4)->(6,4)", 3, {2, 3, 4}, {TR_RESHAPE(6, 4), {TS_END, 0, {0}, 0}}},
      {"reshape -1", 3, {2, 3, 4}, {TR_RESHAPE(4, -1, 2), {TS_END, 0, {0}, 0}}},
      {"reshape 0-d->(1,1)", 0, {0}, {TR_RESHAPE(1, 1), {TS_END, 0, {0}, 0}}},
      {"reshape (1,)->0-d", 1, {1}, {{TS_RESHAPE, 0, {0}, 0}, {TS_END, 0, {0}, 0}}},
      {"reshape empty", 2, {0, 4}, {TR_RESHAPE(-1, 2, 2), {TS_END, 0, {0}, 0}}},
      {"reshape of a permute", 2, {3, 4}, {TR_PERMUTE(1, 0), TR_RESHAPE(2, 6), {TS_END, 0, {0}, 0}}},
      {"reshape of a shrink", 2, {4, 6}, {TR_SHRINK(1, 3, 0, 6), TR_RESHAPE(3, 4), {TS_END, 0, {0}, 0}}},
      {"reshape of a pad", 1, {4}, {TR_PAD(9, 1, 1), TR_RESHAPE(2, 3), {TS_END, 0, {0}, 0}}},
      {"reshape of a flip", 2, {2, 6}, {TR_FLIP(1), TR_RESHAPE(3, 2, 2), {TS_END, 0, {0}, 0}}},
      {"permute 4-d", 4, {2, 3, 1, 4}, {TR_PERMUTE(3, 0, 2, 1), {TS_END, 0, {0}, 0}}},
      {"transpose negative axes", 3, {2, 3, 4}, {TR_TRANSPOSE(-1, 0), {TS_END, 0, {0}, 0}}},
      {"expand -1 keeps", 2, {3, 1}, {TR_EXPAND(-1, 5), {TS_END, 0, {0}, 0}}},
      {"expand adds dims", 2, {1, 3}, {TR_EXPAND(2, 4, 3), {TS_END, 0, {0}, 0}}},
      {"expand 0-d", 0, {0}, {TR_EXPAND(2, 3), {TS_END, 0, {0}, 0}}},
      {"pad every side", 2, {2, 3}, {TR_PAD(7, 1, 2, 0, 3), {TS_END, 0, {0}, 0}}},
      {"pad of empty", 1, {0}, {TR_PAD(3, 1, 1), {TS_END, 0, {0}, 0}}},
      {"pad nothing", 2, {2, 2}, {TR_PAD(5, 0, 0, 0, 0), {TS_END, 0, {0}, 0}}},
      {"shrink to empty", 2, {3, 4}, {TR_SHRINK(1, 1, 0, 4), {TS_END, 0, {0}, 0}}},
      {"shrink everything", 3, {3, 4, 5}, {TR_SHRINK(2, 3, 1, 4, 0, 5), {TS_END, 0, {0}, 0}}},
      {"flip all, negative axes", 3, {2, 3, 4}, {TR_FLIP(-1, -2, -3), {TS_END, 0, {0}, 0}}},
      {"pad of pad", 1, {3}, {TR_PAD(1, 1, 0), TR_PAD(2, 0, 2), {TS_END, 0, {0}, 0}}},
      {"shrink into a pad", 2, {3, 3}, {TR_PAD(4, 2, 2, 2, 2), TR_SHRINK(1, 6, 3, 4), {TS_END, 0, {0}, 0}}},
      {"contiguous then views", 2, {3, 4}, {TR_FLIP(0), TR_CONTIG(), TR_PERMUTE(1, 0), TR_SHRINK(1, 3, 0, 3), {TS_END, 0, {0}, 0}}},
      {"everything", 3, {2, 3, 4}, {TR_PERMUTE(2, 0, 1), TR_PAD(0.5, 0, 1, 1, 0, 0, 0), TR_SHRINK(1, 5, 0, 3, 1, 3), TR_FLIP(1), {TS_END, 0, {0}, 0}}},
  };
  static const tkc_dtype dts[] = {TKC_FLOAT32, TKC_INT32, TKC_FLOAT16, TKC_UINT8, TKC_INT64, TKC_BOOL};
  FOR_EACH_DEVICE(dev, ctx) {
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
      tkc_dtype dt = dts[c % (sizeof dts / sizeof dts[0])];
      if (!tr_dev_supports(dev, dt)) dt = TKC_FLOAT32;
      href a;
      tkc_tensor *t = tr_make(ctx, dt, cases[c].ndim, cases[c].shape, TR_DOM_SMALL, cases[c].steps, &a);
      char what[160];
      snprintf(what, sizeof what, "%s: %s (%s)", dev, cases[c].name, tr_dn(dt));
      tr_checkk(t, &a, 0, what);
      /* and the view feeding a computation: view * 2 */
      href two = tr_from_doubles(dt == TKC_BOOL ? TKC_INT32 : dt, 0, NULL, (const double[]){2}), w = tr_binary(TR_MUL, &a, &two);
      snprintf(what, sizeof what, "%s: (%s) * 2 (%s)", dev, cases[c].name, tr_dn(dt));
      tr_checkk(tkc_mul(t, tkc_scalar(ctx, two.dt, 2)), &w, 0, what);
      tr_free(&two), tr_free(&w), tr_free(&a);
    }
  }
  TR_END();
}

/* intermediate handles freed early: the result still computes (tensors keep what they use) */
static void test_free_intermediates(void **state) {
  (void)state;
  tr_begin();
  FOR_EACH_DEVICE(dev, ctx) {
    href a = tr_rand(TKC_FLOAT32, TR_SHAPE(3, 4), TR_DOM_ANY);
    tkc_tensor *ta = tr_upload(ctx, &a);
    tkc_tensor *p = tkc_permute(ta, (const int[]){1, 0});
    tkc_tensor *e = tkc_exp(p);
    tkc_tensor *s = tkc_sum(e, 1, (const int[]){0}, 0);
    tkc_tensor_free(ta), tkc_tensor_free(p), tkc_tensor_free(e);
    href pa = tr_permute(&a, (const int[]){1, 0}), ea = tr_unary(TR_EXP, &pa), w = tr_reduce(TR_SUM, &ea, 1, (const int[]){0}, 0);
    tr_checkk(s, &w, 1, "sum(exp(permute(x))) after freeing x, permute, exp");
    /* a realized tensor whose input handle is gone, used again */
    tkc_tensor *s2 = tkc_mul(s, s);
    href w2 = tr_binary(TR_MUL, &w, &w);
    tr_checkk(s2, &w2, 1, "s*s after realizing s");
    tkc_tensor_free(s);
    href w3 = tr_binary(TR_ADD, &w2, &w2);
    tr_checkk(tkc_add(s2, s2), &w3, 1, "(s*s)+(s*s) after freeing s");
    tr_free(&a), tr_free(&pa), tr_free(&ea), tr_free(&w), tr_free(&w2), tr_free(&w3);
  }
  TR_END();
}

/* ---------------------------------------------------------------- creation and properties */

static void test_creation(void **state) {
  (void)state;
  tr_begin();
  FOR_EACH_DEVICE(dev, ctx) {
    /* tensor_new copies its data; NULL data is zeros; 0-d; empty */
    float data[6] = {1, 2, 3, 4, 5, 6};
    tkc_tensor *t = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){2, 3}, data);
    data[0] = 100;
    href w = tr_from_doubles(TKC_FLOAT32, TR_SHAPE(2, 3), (const double[]){1, 2, 3, 4, 5, 6});
    tr_checkk(t, &w, 0, "tensor_new copies");
    tr_free(&w);
    tr_batch B;
    tr_batch_init(&B, ctx, dev);
    for (int d = 0; d < TR_NDT; d++) {
      tkc_dtype dt = tr_all_dtypes[d];
      if (!tr_dev_supports(dev, dt)) continue;
      w = tr_new(dt, TR_SHAPE(2, 2));
      char what[96];
      snprintf(what, sizeof what, "%s: tensor_new(%s, NULL data) is zeros", dev, tr_dn(dt));
      tr_batch_addk(&B, tkc_tensor_new(ctx, dt, 2, (const int64_t[]){2, 2}, NULL), &w, 0, what);
      /* full: the value converted as a C cast; 0-d and empty */
      double v = tr_isf(dt) ? -1.75 : dt == TKC_BOOL ? 1 : tr_isu(dt) ? 7.9 : -7.9;
      w = tr_new(dt, TR_SHAPE(3, 1, 2));
      for (int k = 0; k < 6; k++) w.v[k] = tr_from_double(dt, v);
      snprintf(what, sizeof what, "%s: full(%s, %g)", dev, tr_dn(dt), v);
      tr_batch_addk(&B, tkc_full(ctx, dt, 3, (const int64_t[]){3, 1, 2}, v), &w, 0, what);
      w = tr_new(dt, 0, NULL);
      w.v[0] = tr_from_double(dt, v);
      snprintf(what, sizeof what, "%s: scalar(%s, %g)", dev, tr_dn(dt), v);
      tr_batch_addk(&B, tkc_scalar(ctx, dt, v), &w, 0, what);
    }
    tr_batch_flush(&B);
    w = tr_new(TKC_INT32, TR_SHAPE(4, 0));
    tr_checkk(tkc_full(ctx, TKC_INT32, 2, (const int64_t[]){4, 0}, 3), &w, 0, "full (4,0)");
    tr_free(&w);
    if (tr_dev_supports(dev, TKC_FLOAT64)) {
      w = tr_from_doubles(TKC_FLOAT64, 0, NULL, (const double[]){0.1});
      tr_checkk(tkc_full(ctx, TKC_FLOAT64, 0, NULL, 0.1), &w, 0, "full 0-d float64");
      tr_free(&w);
    }
    int32_t one = 42;
    w = tr_from_doubles(TKC_INT32, 0, NULL, (const double[]){42});
    tr_checkk(tkc_tensor_new(ctx, TKC_INT32, 0, NULL, &one), &w, 0, "tensor_new 0-d");
    tr_free(&w);
    w = tr_new(TKC_FLOAT32, TR_SHAPE(0));
    tr_checkk(tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){0}, NULL), &w, 0, "tensor_new (0,)");
    tr_free(&w);
    /* arange like numpy: length ceil((stop - start) / step) */
    static const struct { tkc_dtype dt; double start, stop, step; } ar[] = {
        {TKC_INT32, 0, 5, 1}, {TKC_FLOAT32, 5, 0, -1.5}, {TKC_FLOAT32, 0, 1, 0.25}, {TKC_INT32, 0, 10, 3}, {TKC_INT64, -3, 3, 2},
        {TKC_FLOAT32, 5, 0, 1}, {TKC_FLOAT64, 1, 2, 0.3}, {TKC_UINT8, 250, 256, 1}, {TKC_FLOAT16, -2, 2, 0.5}, {TKC_INT32, 3, 3, 1},
    };
    for (size_t i = 0; i < sizeof ar / sizeof ar[0]; i++) {
      if (!tr_dev_supports(dev, ar[i].dt)) continue;
      double len = ceil((ar[i].stop - ar[i].start) / ar[i].step);
      int64_t n = len > 0 ? (int64_t)len : 0;
      w = tr_new(ar[i].dt, 1, &n);
      for (int64_t k = 0; k < n; k++) w.v[k] = tr_from_double(ar[i].dt, ar[i].start + (double)k * ar[i].step);
      char what[96];
      snprintf(what, sizeof what, "%s: arange(%s, %g, %g, %g)", dev, tr_dn(ar[i].dt), ar[i].start, ar[i].stop, ar[i].step);
      tr_batch_addk(&B, tkc_arange(ctx, ar[i].dt, ar[i].start, ar[i].stop, ar[i].step), &w, 1, what);
    }
    tr_batch_flush(&B);
    /* rand: float dtypes, [0, 1), reproducible per seed, seeds differ, roughly uniform */
    static const tkc_dtype rdt[] = {TKC_FLOAT32, TKC_FLOAT16, TKC_BFLOAT16, TKC_FLOAT64};
    for (size_t i = 0; i < 4; i++) {
      tkc_dtype dt = rdt[i];
      if (!tr_dev_supports(dev, dt)) continue;
      const int64_t shape[2] = {40, 50};
      tkc_tensor *r1 = tkc_rand(ctx, dt, 2, shape, 1234), *r2 = tkc_rand(ctx, dt, 2, shape, 1234), *r3 = tkc_rand(ctx, dt, 2, shape, 99);
      TR_EXPECT(r1 && tkc_dtype_of(r1) == dt && tkc_ndim(r1) == 2 && tkc_dim(r1, 0) == 40 && tkc_dim(r1, 1) == 50, "%s: rand(%s) shape/dtype", dev, tr_dn(dt));
      size_t nb = 2000 * tr_size(dt);
      unsigned char *b1 = malloc(nb), *b2 = malloc(nb), *b3 = malloc(nb);
      bool ok = r1 && r2 && r3 && tkc_copy_out(r1, b1, nb) == TKC_OK && tkc_copy_out(r2, b2, nb) == TKC_OK && tkc_copy_out(r3, b3, nb) == TKC_OK;
      TR_EXPECT(ok, "%s: rand(%s) copy_out", dev, tr_dn(dt));
      if (ok) {
        double sum = 0, lo = 1, hi = 0;
        int same3 = 0;
        for (size_t k = 0; k < 2000; k++) {
          double x = tr_load(dt, b1, k).f;
          sum += x, lo = fmin(lo, x), hi = fmax(hi, x);
          same3 += tr_load(dt, b3, k).f == x;
        }
        TR_EXPECT(lo >= 0 && hi < 1, "%s: rand(%s) in [%g, %g], want [0, 1)", dev, tr_dn(dt), lo, hi);
        TR_EXPECT(fabs(sum / 2000 - 0.5) < 0.05, "%s: rand(%s) mean %g", dev, tr_dn(dt), sum / 2000);
        TR_EXPECT(hi - lo > 0.9, "%s: rand(%s) spread [%g, %g]", dev, tr_dn(dt), lo, hi);
        TR_EXPECT(memcmp(b1, b2, nb) == 0, "%s: rand(%s) same seed, different values", dev, tr_dn(dt));
        TR_EXPECT(same3 < 200, "%s: rand(%s) seeds 1234 and 99 agree on %d of 2000 values", dev, tr_dn(dt), same3);
      }
      free(b1), free(b2), free(b3);
    }
    /* rand is lazy and usable in a computation: rand * 0 + 1 */
    tkc_tensor *r = tkc_add(tkc_mul(tkc_rand(ctx, TKC_FLOAT32, 1, (const int64_t[]){5}, 7), tkc_scalar(ctx, TKC_FLOAT32, 0)), tkc_scalar(ctx, TKC_FLOAT32, 1));
    w = tr_from_doubles(TKC_FLOAT32, TR_SHAPE(5), (const double[]){1, 1, 1, 1, 1});
    tr_checkk(r, &w, 0, "rand*0+1");
    tr_free(&w);
    /* a 0-d rand */
    tkc_tensor *r0 = tkc_rand(ctx, TKC_FLOAT32, 0, NULL, 5);
    float f0 = -1;
    TR_EXPECT(r0 && tkc_ndim(r0) == 0 && tkc_copy_out(r0, &f0, 4) == TKC_OK && f0 >= 0 && f0 < 1, "%s: 0-d rand = %g", dev, f0);
  }
  TR_END();
}

static void test_properties(void **state) {
  (void)state;
  tr_begin();
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  assert_non_null(ctx);
  TR_EXPECT(strcmp(tkc_ctx_device(ctx), "INTERP") == 0, "ctx_device = %s", tkc_ctx_device(ctx));
  tkc_tensor *t = tkc_tensor_new(ctx, TKC_INT16, 3, (const int64_t[]){2, 0, 5}, NULL);
  TR_EXPECT(tkc_ndim(t) == 3, "ndim %d", tkc_ndim(t));
  TR_EXPECT(tkc_dim(t, 0) == 2 && tkc_dim(t, 1) == 0 && tkc_dim(t, 2) == 5, "dims");
  TR_EXPECT(tkc_dim(t, -1) == 5 && tkc_dim(t, -3) == 2, "negative axes: %lld %lld", (long long)tkc_dim(t, -1), (long long)tkc_dim(t, -3));
  TR_EXPECT(tkc_dim(t, 3) == -1 && tkc_dim(t, -4) == -1, "out of range dims: %lld %lld", (long long)tkc_dim(t, 3), (long long)tkc_dim(t, -4));
  TR_EXPECT(tkc_numel(t) == 0, "numel %lld", (long long)tkc_numel(t));
  TR_EXPECT(tkc_dtype_of(t) == TKC_INT16, "dtype %s", tr_dn(tkc_dtype_of(t)));
  tkc_tensor *s = tkc_scalar(ctx, TKC_FLOAT64, 1);
  TR_EXPECT(tkc_ndim(s) == 0 && tkc_numel(s) == 1 && tkc_dim(s, 0) == -1, "0-d: ndim %d numel %lld", tkc_ndim(s), (long long)tkc_numel(s));
  /* properties of lazy results without realizing */
  tkc_tensor *m = tkc_matmul(tkc_full(ctx, TKC_FLOAT32, 3, (const int64_t[]){4, 2, 3}, 1), tkc_full(ctx, TKC_FLOAT32, 2, (const int64_t[]){3, 5}, 1));
  TR_EXPECT(tkc_ndim(m) == 3 && tkc_dim(m, 0) == 4 && tkc_dim(m, 1) == 2 && tkc_dim(m, 2) == 5 && tkc_numel(m) == 40, "matmul shape");
  TR_EXPECT(tkc_kernel_count(m) == 1, "matmul kernel count %d", tkc_kernel_count(m));
  /* TKC_DEVICE picks the default device */
  const char *old = getenv("TKC_DEVICE");
  char *saved = old ? strdup(old) : NULL;
  setenv("TKC_DEVICE", "INTERP", 1);
  tkc_ctx *c2 = tkc_ctx_new(NULL);
  TR_EXPECT(c2 && strcmp(tkc_ctx_device(c2), "INTERP") == 0, "TKC_DEVICE=INTERP: ctx_new(NULL) on %s", c2 ? tkc_ctx_device(c2) : "(null)");
  tkc_ctx_free(c2);
  if (saved) setenv("TKC_DEVICE", saved, 1);
  else unsetenv("TKC_DEVICE");
  free(saved);
  c2 = tkc_ctx_new(NULL);
  TR_EXPECT(c2 != NULL, "ctx_new(NULL): %s", tkc_last_error());
  if (c2) TR_EXPECT(tkc_device_available(tkc_ctx_device(c2)), "default device %s available", tkc_ctx_device(c2));
  tkc_ctx_free(c2);
  TR_EXPECT(tkc_device_available("INTERP") == 1, "INTERP available");
  tkc_ctx_free(ctx);
  TR_END();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reduce_every_dtype), cmocka_unit_test(test_reduce_axes),
      cmocka_unit_test(test_reduce_shapes_and_views), cmocka_unit_test(test_reduce_accumulators),
      cmocka_unit_test(test_long_reductions),
      cmocka_unit_test(test_movement),           cmocka_unit_test(test_free_intermediates),
      cmocka_unit_test(test_creation),           cmocka_unit_test(test_properties),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
