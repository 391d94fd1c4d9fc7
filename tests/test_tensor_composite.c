/* The tensor API's composites (matmul, softmax, log_softmax, conv2d) on every available device
 * against plain-C reference loops, the scheduler's fusion as kernel counts, tkc_kernels_source, and
 * realize / copy_out behaviour (tkc.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include "tensor_ref.h"

/* ---------------------------------------------------------------- matmul */

static void test_matmul(void **state) {
  (void)state;
  tr_begin();
  static const struct { int na; int64_t a[4]; int nb; int64_t b[4]; } cases[] = {
      {2, {2, 3}, 2, {3, 4}},
      {1, {3}, 2, {3, 4}},          /* 1-D on the left: (4,) */
      {2, {2, 3}, 1, {3}},          /* 1-D on the right: (2,) */
      {1, {5}, 1, {5}},             /* dot: 0-d */
      {3, {2, 3, 4}, 2, {4, 2}},    /* batched left */
      {2, {3, 4}, 3, {2, 4, 5}},    /* batched right */
      {4, {2, 1, 3, 4}, 3, {5, 4, 2}}, /* batch dims broadcast: (2,5,3,2) */
      {2, {1, 1}, 2, {1, 1}},
      {2, {2, 0}, 2, {0, 3}},       /* empty inner dim: zeros */
      {2, {0, 3}, 2, {3, 2}},       /* empty result */
      {1, {4}, 3, {2, 4, 3}},       /* 1-D with a batch: (2,3) */
  };
  FOR_EACH_DEVICE(dev, ctx) {
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
      tkc_dtype dt = c % 3 == 2 ? TKC_INT32 : TKC_FLOAT32;
      href a, b;
      tkc_tensor *ta = tr_make(ctx, dt, cases[c].na, cases[c].a, TR_DOM_ANY, NULL, &a);
      tkc_tensor *tb = tr_make(ctx, dt, cases[c].nb, cases[c].b, TR_DOM_ANY, NULL, &b);
      char what[96];
      snprintf(what, sizeof what, "%s: matmul case %zu (%s)", dev, c, tr_dn(dt));
      href w = tr_matmul(&a, &b);
      tr_checkk(tkc_matmul(ta, tb), &w, 1, what);
      tr_free(&w), tr_free(&a), tr_free(&b);
    }
    /* non-contiguous operands: a^T @ flip(b), a shrunk @ b expanded */
    href a, b;
    tkc_tensor *ta = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(5, 3), TR_DOM_ANY, TR_STEPS(TR_PERMUTE(1, 0)), &a);
    tkc_tensor *tb = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(5, 4), TR_DOM_ANY, TR_STEPS(TR_FLIP(0, 1)), &b);
    href w = tr_matmul(&a, &b);
    tr_checkk(tkc_matmul(ta, tb), &w, 1, "matmul(transposed, flipped)");
    tr_free(&w), tr_free(&a), tr_free(&b);
    ta = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(4, 6), TR_DOM_ANY, TR_STEPS(TR_SHRINK(1, 3, 1, 5)), &a);
    tb = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(4, 1), TR_DOM_ANY, TR_STEPS(TR_EXPAND(4, 3)), &b);
    w = tr_matmul(&a, &b);
    tr_checkk(tkc_matmul(ta, tb), &w, 1, "matmul(shrunk, expanded)");
    tr_free(&w), tr_free(&a), tr_free(&b);
    ta = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(2, 2), TR_DOM_ANY, TR_STEPS(TR_PAD(0.5, 1, 0, 0, 1)), &a);
    tb = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(3, 2), TR_DOM_ANY, NULL, &b);
    w = tr_matmul(&a, &b);
    tr_checkk(tkc_matmul(ta, tb), &w, 1, "matmul(padded with 0.5, b)");
    tr_free(&w), tr_free(&a), tr_free(&b);
    /* mixed dtypes promote; half accumulates in float32 */
    ta = tr_make(ctx, TKC_INT32, TR_SHAPE(3, 4), TR_DOM_ANY, NULL, &a);
    tb = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(4, 2), TR_DOM_ANY, NULL, &b);
    w = tr_matmul(&a, &b);
    tr_checkk(tkc_matmul(ta, tb), &w, 1, "matmul(int32, float32) -> float32");
    tr_free(&w), tr_free(&a), tr_free(&b);
    for (int h = 0; h < 3; h++) {
      tkc_dtype dt = (tkc_dtype[]){TKC_FLOAT16, TKC_BFLOAT16, TKC_FLOAT64}[h];
      if (!tr_dev_supports(dev, dt)) continue;
      ta = tr_make(ctx, dt, TR_SHAPE(4, 16), TR_DOM_ANY, NULL, &a);
      tb = tr_make(ctx, dt, TR_SHAPE(16, 3), TR_DOM_ANY, NULL, &b);
      w = tr_matmul(&a, &b);
      char what[64];
      snprintf(what, sizeof what, "%s: matmul %s", dev, tr_dn(dt));
      tr_checkk(tkc_matmul(ta, tb), &w, 1, what);
      tr_free(&w), tr_free(&a), tr_free(&b);
    }
    /* a bigger one (several tiles/threads on the CPU): 33x65 @ 65x17 */
    ta = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(33, 65), TR_DOM_ANY, NULL, &a);
    tb = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(65, 17), TR_DOM_ANY, NULL, &b);
    w = tr_matmul(&a, &b);
    tr_checkk(tkc_matmul(ta, tb), &w, 1, "matmul 33x65 @ 65x17");
    tr_free(&w), tr_free(&a), tr_free(&b);
    /* large enough that host devices read b in (N/W, K, W) panels (composite.c): 2-D, a batched a
     * (M = 2 x 256 rows), and b a transposed view; then b (K, N<64) that they read as its transpose */
    if (!strcmp(dev, "INTERP")) continue; /* 33M multiply-adds each: the C reference covers them */
    static const struct { int na; int64_t a[3]; int64_t b[2]; bool bt; } big[] = {
        {2, {512, 256}, {256, 1024}, false}, {3, {2, 256, 320}, {320, 1024}, false}, {2, {512, 288}, {1024, 288}, true},
        {2, {64, 128}, {128, 10}, false}, {3, {2, 9, 96}, {96, 3}, false}}; /* and few columns: b's transpose copied */
    for (size_t c = 0; c < sizeof big / sizeof big[0]; c++) {
      ta = tr_make(ctx, TKC_FLOAT32, big[c].na, big[c].a, TR_DOM_ANY, NULL, &a);
      tb = tr_make(ctx, TKC_FLOAT32, 2, big[c].b, TR_DOM_ANY, big[c].bt ? TR_STEPS(TR_PERMUTE(1, 0)) : NULL, &b);
      w = tr_matmul(&a, &b);
      char what[64];
      snprintf(what, sizeof what, "%s: packed matmul case %zu", dev, c);
      tr_checkk(tkc_matmul(ta, tb), &w, 1, what);
      tr_free(&w), tr_free(&a), tr_free(&b);
    }
    /* b the transpose of an expression (N, K), K >= 512: copied in its own layout (a prefill's
     * W^T of a dequantized weight), then read along k; the same at K < 512 copied transposed */
    for (int c = 0; c < 2; c++) {
      int64_t k = c ? 640 : 96;
      href x, y;
      ta = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(32, k), TR_DOM_ANY, NULL, &a);
      tkc_tensor *tx = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(48, k), TR_DOM_ANY, NULL, &x);
      tkc_tensor *ty = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(48, k), TR_DOM_ANY, NULL, &y);
      href s = tr_binary(TR_ADD, &x, &y), st = tr_transpose(&s, 0, 1);
      w = tr_matmul(&a, &st);
      char what[80];
      snprintf(what, sizeof what, "%s: matmul(a, transpose(x + y)), k %lld", dev, (long long)k);
      tr_checkk(tkc_matmul(ta, tkc_transpose(tkc_add(tx, ty), 0, 1)), &w, 1, what);
      tr_free(&w), tr_free(&a), tr_free(&x), tr_free(&y), tr_free(&s), tr_free(&st);
    }
    /* b in tkc_matmul_weight_layout's layout (panels of 32 columns on AVX-512 hosts; 96 and 1024
     * columns are panels, 10 columns (a classifier's) (N, K) rows, 40 at k = 24 and a float16 b stay
     * as they are): the same values, the same product at 8, 16 and 512 rows, and no copy of b per call
     * (at 512 rows tkc_matmul packs a plain b itself, at 16 it copies 10 columns transposed) */
    static const struct { int64_t m, k, n; tkc_dtype dt; } lay[] = {
        {8, 64, 96, TKC_FLOAT32}, {512, 256, 1024, TKC_FLOAT32}, {16, 128, 10, TKC_FLOAT32}, {8, 24, 40, TKC_FLOAT32}, {8, 32, 64, TKC_FLOAT16}};
    for (size_t c = 0; c < sizeof lay / sizeof *lay; c++) {
      if (!tr_dev_supports(dev, lay[c].dt)) continue;
      href x, y;
      tkc_tensor *tx = tr_make(ctx, lay[c].dt, TR_SHAPE(lay[c].m, lay[c].k), TR_DOM_ANY, NULL, &x);
      tkc_tensor *ty = tr_make(ctx, lay[c].dt, TR_SHAPE(lay[c].k, lay[c].n), TR_DOM_ANY, NULL, &y);
      tkc_tensor *laid = tkc_matmul_weight_layout(ty);
      TR_EXPECT(laid && !tkc_realize(laid) && tkc_ndim(laid) == 2 && tkc_dim(laid, 0) == lay[c].k && tkc_dim(laid, 1) == lay[c].n, "%s: matmul_weight_layout", dev);
      char what[96];
      snprintf(what, sizeof what, "%s: matmul_weight_layout %lldx%lld values", dev, (long long)lay[c].k, (long long)lay[c].n);
      tr_checkk(tkc_tensor_ref(laid), &y, 0, what);
      tkc_tensor *plain = tkc_matmul(tx, ty), *fast = tkc_matmul(tx, laid);
      TR_EXPECT(tkc_kernel_count(fast) == 1 && tkc_kernel_count(plain) >= 1, "%s: matmul with a laid-out b: %d kernels, plain %d", dev, tkc_kernel_count(fast),
                tkc_kernel_count(plain));
      w = tr_matmul(&x, &y);
      snprintf(what, sizeof what, "%s: matmul(%lldx%lld, laid-out %lldx%lld)", dev, (long long)lay[c].m, (long long)lay[c].k, (long long)lay[c].k, (long long)lay[c].n);
      tr_checkk(fast, &w, 1, what);
      tkc_tensor_free(plain), tkc_tensor_free(laid);
      tr_free(&w), tr_free(&x), tr_free(&y);
    }
  }
  TR_END();
}

/* ---------------------------------------------------------------- softmax */

static void test_softmax(void **state) {
  (void)state;
  tr_begin();
  static const struct { int ndim; int64_t shape[3]; int axis; } cases[] = {
      {2, {3, 5}, -1}, {2, {3, 5}, 0}, {1, {7}, 0}, {3, {2, 3, 4}, 1}, {3, {2, 3, 4}, -1}, {2, {4, 1}, 1}, {2, {1, 6}, -2},
  };
  FOR_EACH_DEVICE(dev, ctx) {
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
      for (int lg = 0; lg < 2; lg++) {
        href a;
        tkc_tensor *ta = tr_make(ctx, TKC_FLOAT32, cases[c].ndim, cases[c].shape, TR_DOM_ANY, NULL, &a);
        href w = tr_softmax(&a, cases[c].axis, lg);
        char what[96];
        snprintf(what, sizeof what, "%s: %s case %zu axis %d", dev, lg ? "log_softmax" : "softmax", c, cases[c].axis);
        tr_checkk(lg ? tkc_log_softmax(ta, cases[c].axis) : tkc_softmax(ta, cases[c].axis), &w, 1, what);
        tr_free(&w), tr_free(&a);
      }
    /* large values: max-subtracted, so no overflow */
    href a = tr_from_doubles(TKC_FLOAT32, TR_SHAPE(2, 3), (const double[]){1000, 1001, 1002, -1000, -1001, -1000.5});
    for (int lg = 0; lg < 2; lg++) {
      href w = tr_softmax(&a, -1, lg);
      tr_checkk(lg ? tkc_log_softmax(tr_upload(ctx, &a), -1) : tkc_softmax(tr_upload(ctx, &a), -1), &w, 1,
                lg ? "log_softmax of +-1000" : "softmax of +-1000");
      tr_free(&w);
    }
    tr_free(&a);
    /* views and half */
    tkc_tensor *ta = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(4, 3), TR_DOM_ANY, TR_STEPS(TR_PERMUTE(1, 0), TR_FLIP(1)), &a);
    href w = tr_softmax(&a, -1, false);
    tr_checkk(tkc_softmax(ta, -1), &w, 1, "softmax of a permuted, flipped view");
    tr_free(&w), tr_free(&a);
    for (int h = 0; h < 2; h++) {
      tkc_dtype dt = h ? TKC_FLOAT64 : TKC_FLOAT16;
      if (!tr_dev_supports(dev, dt)) continue;
      ta = tr_make(ctx, dt, TR_SHAPE(3, 8), TR_DOM_ANY, NULL, &a);
      w = tr_softmax(&a, 1, false);
      char what[64];
      snprintf(what, sizeof what, "%s: softmax %s", dev, tr_dn(dt));
      tr_checkk(tkc_softmax(ta, 1), &w, 1, what);
      tr_free(&w), tr_free(&a);
    }
    /* softmax(matmul) as the quickstart does */
    href x, y;
    tkc_tensor *tx = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(3, 4), TR_DOM_ANY, NULL, &x), *ty = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(4, 5), TR_DOM_ANY, NULL, &y);
    href m = tr_matmul(&x, &y);
    w = tr_softmax(&m, -1, false);
    tr_checkk(tkc_softmax(tkc_matmul(tx, ty), -1), &w, 1, "softmax(matmul)");
    tr_free(&x), tr_free(&y), tr_free(&m), tr_free(&w);
  }
  TR_END();
}

/* ---------------------------------------------------------------- conv2d */

static void test_conv2d(void **state) {
  (void)state;
  tr_begin();
  static const struct { int64_t x[4], w[4]; bool bias; int stride, pad; } cases[] = {
      {{1, 1, 4, 4}, {1, 1, 3, 3}, false, 1, 0}, {{2, 3, 5, 5}, {4, 3, 3, 3}, true, 1, 1}, {{2, 3, 6, 5}, {4, 3, 3, 3}, false, 2, 0},
      {{1, 2, 7, 7}, {3, 2, 3, 3}, true, 2, 1},  {{2, 4, 3, 3}, {5, 4, 1, 1}, true, 1, 0},  {{1, 2, 4, 5}, {2, 2, 2, 3}, false, 1, 2},
      {{1, 1, 2, 2}, {1, 1, 3, 3}, false, 1, 1}, /* kernel bigger than the input */
      /* on host devices: rows of 7 or more read as flat rows of the padded input (flat_windows) */
      {{2, 3, 9, 11}, {5, 3, 3, 3}, true, 1, 1}, {{1, 2, 8, 10}, {4, 2, 3, 2}, false, 1, 0}, {{1, 16, 7, 7}, {32, 16, 3, 3}, false, 1, 1},
      /* and strided large kernels as stride 1 over the input's phases (phase_conv2d) */
      {{1, 3, 33, 31}, {4, 3, 7, 7}, true, 2, 3}, {{1, 2, 50, 47}, {3, 2, 7, 7}, false, 3, 1}, {{2, 2, 20, 30}, {3, 2, 5, 5}, true, 2, 0},
      /* and with 128 or more output channels, the windows of the padded input copied once (stride 1 and
       * 2, a 1x1 of stride 2, a kernel wider than tall) */
      {{1, 3, 9, 8}, {128, 3, 3, 3}, true, 1, 1}, {{2, 2, 15, 16}, {128, 2, 3, 3}, false, 2, 1}, {{1, 4, 16, 15}, {160, 4, 1, 1}, true, 2, 0},
      {{1, 2, 7, 9}, {256, 2, 2, 3}, false, 1, 0},
  };
  FOR_EACH_DEVICE(dev, ctx) {
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
      href x, w, b;
      tkc_tensor *tx = tr_make(ctx, TKC_FLOAT32, 4, cases[c].x, TR_DOM_ANY, NULL, &x);
      tkc_tensor *tw = tr_make(ctx, TKC_FLOAT32, 4, cases[c].w, TR_DOM_ANY, NULL, &w);
      tkc_tensor *tb = cases[c].bias ? tr_make(ctx, TKC_FLOAT32, 1, cases[c].w, TR_DOM_ANY, NULL, &b) : NULL;
      href want = tr_conv2d(&x, &w, cases[c].bias ? &b : NULL, cases[c].stride, cases[c].pad);
      char what[96];
      snprintf(what, sizeof what, "%s: conv2d case %zu (stride %d pad %d%s)", dev, c, cases[c].stride, cases[c].pad, cases[c].bias ? " bias" : "");
      tr_checkk(tkc_conv2d(tx, tw, tb, cases[c].stride, cases[c].pad), &want, 1, what);
      tr_free(&want), tr_free(&x), tr_free(&w);
      if (cases[c].bias) tr_free(&b);
    }
    /* weights in tkc_conv2d_weight_layout's layout (channel-last at 16 output channels, panels at 256
     * on host devices): the same result, and no weight copy per call once realized */
    static const int64_t lay[][4] = {{2, 8, 6, 6}, {16, 8, 3, 3}, {1, 16, 5, 5}, {256, 16, 3, 3}, {2, 3, 10, 10}, {8, 3, 3, 3}}; /* 64 positions: column panels */
    for (int c = 0; c < 3; c++) {
      href lx, lw;
      tkc_tensor *tx = tr_make(ctx, TKC_FLOAT32, 4, lay[2 * c], TR_DOM_ANY, NULL, &lx);
      tkc_tensor *tw = tr_make(ctx, TKC_FLOAT32, 4, lay[2 * c + 1], TR_DOM_ANY, NULL, &lw);
      tkc_tensor *laid = tkc_conv2d_weight_layout(tw);
      TR_EXPECT(laid && !tkc_realize(laid) && tkc_ndim(laid) == 4 && tkc_dim(laid, 0) == lay[2 * c + 1][0], "%s: conv2d_weight_layout", dev);
      tkc_tensor *plain = tkc_conv2d(tx, tw, NULL, 1, 1), *fast = tkc_conv2d(tx, laid, NULL, 1, 1);
      TR_EXPECT(tkc_kernel_count(fast) == tkc_kernel_count(plain) - 1, "%s: conv2d with laid-out weights: %d kernels, plain %d", dev, tkc_kernel_count(fast),
                tkc_kernel_count(plain));
      href want = tr_conv2d(&lx, &lw, NULL, 1, 1);
      char what[96];
      snprintf(what, sizeof what, "%s: conv2d, weights laid out (%lld channels)", dev, (long long)lay[2 * c + 1][0]);
      tr_checkk(fast, &want, 1, what);
      tkc_tensor_free(plain), tkc_tensor_free(laid);
      tr_free(&want), tr_free(&lx), tr_free(&lw);
    }
    /* a non-contiguous input (NHWC stored, permuted to NCHW) and a flipped weight */
    href x, w;
    tkc_tensor *tx = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(2, 5, 5, 3), TR_DOM_ANY, TR_STEPS(TR_PERMUTE(0, 3, 1, 2)), &x);
    tkc_tensor *tw = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(2, 3, 3, 3), TR_DOM_ANY, TR_STEPS(TR_FLIP(2, 3)), &w);
    href want = tr_conv2d(&x, &w, NULL, 1, 1);
    tr_checkk(tkc_conv2d(tx, tw, NULL, 1, 1), &want, 1, "conv2d(permuted x, flipped w)");
    tr_free(&want), tr_free(&x), tr_free(&w);
    /* relu(conv2d) + bias, float16 */
    if (tr_dev_supports(dev, TKC_FLOAT16)) {
      href b;
      tx = tr_make(ctx, TKC_FLOAT16, TR_SHAPE(1, 2, 4, 4), TR_DOM_ANY, NULL, &x);
      tw = tr_make(ctx, TKC_FLOAT16, TR_SHAPE(3, 2, 3, 3), TR_DOM_ANY, NULL, &w);
      tkc_tensor *tb = tr_make(ctx, TKC_FLOAT16, TR_SHAPE(3), TR_DOM_ANY, NULL, &b);
      href cv = tr_conv2d(&x, &w, &b, 1, 1);
      want = tr_unary(TR_RELU, &cv);
      tr_checkk(tkc_relu(tkc_conv2d(tx, tw, tb, 1, 1)), &want, 1, "relu(conv2d) float16");
      tr_free(&cv), tr_free(&want), tr_free(&x), tr_free(&w), tr_free(&b);
    }
  }
  TR_END();
}

/* ---------------------------------------------------------------- fusion: kernel counts */

static int count_c_kernels(tkc_tensor *t) {
  char *src = tkc_kernels_source(t, "C");
  int n = src ? tr_count_c_kernels(src) : -1;
  tkc_free(src);
  return n;
}

static void test_kernel_counts(void **state) {
  (void)state;
  tr_begin();
  FOR_EACH_DEVICE(dev, ctx) {
    const int64_t s34[2] = {3, 4};
    href ha, hb, hc;
    tkc_tensor *a = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(3, 4), TR_DOM_ANY, NULL, &ha), *b = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(3, 4), TR_DOM_ANY, NULL, &hb);
    tkc_tensor *c = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(4), TR_DOM_ANY, NULL, &hc);
    TR_EXPECT(tkc_kernel_count(a) == 0, "%s: a tensor_new'ed input needs %d kernels, want 0", dev, tkc_kernel_count(a));
    tkc_tensor *n = tkc_tensor_new(ctx, TKC_FLOAT32, 2, s34, NULL);
    TR_EXPECT(tkc_kernel_count(n) == 0, "%s: a tensor_new'ed NULL-data input needs %d kernels, want 0", dev, tkc_kernel_count(n));
    tkc_tensor *r = tkc_rand(ctx, TKC_FLOAT32, 2, s34, 1);
    TR_EXPECT(tkc_realize(r) == TKC_OK && tkc_kernel_count(r) == 0, "%s: a realized rand needs %d kernels, want 0", dev, tkc_kernel_count(r));
    struct { const char *name; tkc_tensor *t; int lo, hi; } cases[] = {
        {"(a+b)*c", tkc_mul(tkc_add(a, b), c), 1, 1},
        {"sum(a*b)", tkc_sum(tkc_mul(a, b), 0, NULL, 0), 1, 1},
        {"sum(a*b, 1) + 1", tkc_add(tkc_sum(tkc_mul(a, b), 1, (const int[]){1}, 0), tkc_scalar(ctx, TKC_FLOAT32, 1)), 1, 1},
        {"exp(a)-b, permuted/flipped", tkc_sub(tkc_exp(tkc_flip(a, 1, (const int[]){0})), tkc_permute(tkc_permute(b, (const int[]){1, 0}), (const int[]){1, 0})), 1, 1},
        {"softmax 2-D", tkc_softmax(a, -1), 1, 3},
        {"log_softmax 2-D", tkc_log_softmax(a, 0), 1, 3},
        {"matmul", tkc_matmul(a, tkc_permute(b, (const int[]){1, 0})), 1, 1},
        {"matmul (a+b) @ c", tkc_matmul(tkc_add(a, b), c), 1, 1},
        /* a transcendental broadcast into a reduce is computed once, not once per use */
        {"matmul (a*sigmoid(a)) @ b^T", tkc_matmul(tkc_mul(a, tkc_sigmoid(a)), tkc_permute(b, (const int[]){1, 0})), 2, 2},
        {"sum(exp(a) * b) keeps exp fused", tkc_sum(tkc_mul(tkc_exp(a), b), 0, NULL, 0), 1, 1},
        {"contiguous(a+b)*2", tkc_mul(tkc_contiguous(tkc_add(a, b)), tkc_scalar(ctx, TKC_FLOAT32, 2)), 2, 2},
        {"sum(sum(a, 1))", tkc_sum(tkc_contiguous(tkc_sum(a, 1, (const int[]){1}, 0)), 0, NULL, 0), 2, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      int k = tkc_kernel_count(cases[i].t);
      TR_EXPECT(k >= cases[i].lo && k <= cases[i].hi, "%s: %s needs %d kernels, want %d..%d", dev, cases[i].name, k, cases[i].lo, cases[i].hi);
      int ck = count_c_kernels(cases[i].t);
      TR_EXPECT(ck == k, "%s: %s: kernels_source(\"C\") has %d kernel functions, kernel_count %d", dev, cases[i].name, ck, k);
      TR_EXPECT(tkc_realize(cases[i].t) == TKC_OK, "%s: realize %s", dev, cases[i].name);
      TR_EXPECT(tkc_kernel_count(cases[i].t) == 0, "%s: %s after realize needs %d kernels", dev, cases[i].name, tkc_kernel_count(cases[i].t));
    }
    /* a reduce read twice is computed once: in softmax(a @ b^T) one kernel runs the dot products
     * (over k = 4: kernels named r_3_3_4...), the others read its result */
    {
      tkc_tensor *sm = tkc_softmax(tkc_matmul(a, tkc_permute(b, (const int[]){1, 0})), -1);
      char *src = tkc_kernels_source(sm, "C");
      int dots = 0;
      for (const char *p = src; p && (p = strstr(p, "void r_3_3_4")); p++) dots++;
      TR_EXPECT(src && dots == 1, "%s: softmax(matmul): %d kernels run the dot products, want 1", dev, dots);
      tkc_free(src);
      float got[9];
      TR_EXPECT(tkc_copy_out(sm, got, sizeof got) == TKC_OK, "%s: softmax(matmul)", dev);
      for (int i = 0; i < 3; i++) {
        double row[3], mx = -INFINITY, sum = 0;
        for (int j = 0; j < 3; j++) {
          row[j] = 0;
          for (int k = 0; k < 4; k++) row[j] += ha.v[i * 4 + k].f * hb.v[j * 4 + k].f;
          mx = row[j] > mx ? row[j] : mx;
        }
        for (int j = 0; j < 3; j++) sum += row[j] = exp(row[j] - mx);
        for (int j = 0; j < 3; j++) TR_EXPECT(fabs(got[i * 3 + j] - row[j] / sum) < 1e-5, "%s: softmax(matmul)[%d][%d] = %g, want %g", dev, i, j, got[i * 3 + j], row[j] / sum);
      }
    }
    /* a shared subexpression is computed once: y = a*b; z = y + y is one kernel */
    tkc_tensor *y = tkc_mul(a, b), *z = tkc_add(y, y);
    TR_EXPECT(tkc_kernel_count(z) == 1, "%s: y=a*b, z=y+y needs %d kernels, want 1", dev, tkc_kernel_count(z));
    char *src = tkc_kernels_source(z, "C");
    TR_EXPECT(src && tr_count_c_kernels(src) == 1, "%s: z=y+y source: %d kernels", dev, src ? tr_count_c_kernels(src) : -1);
    tkc_free(src);
    /* a contiguous buffer read by several kernels is computed once: y = contiguous(a+b);
     * z = y*2 + sum(y) -> y, sum(y), z = 3 kernels (not 4) */
    tkc_tensor *yc = tkc_contiguous(tkc_add(a, b));
    tkc_tensor *z2 = tkc_add(tkc_mul(yc, tkc_scalar(ctx, TKC_FLOAT32, 2)), tkc_sum(yc, 0, NULL, 0));
    int k2 = tkc_kernel_count(z2);
    TR_EXPECT(k2 >= 2 && k2 <= 3, "%s: y=contiguous(a+b), y*2+sum(y) needs %d kernels, want <= 3", dev, k2);
    /* values of the counted graphs are right too */
    href ys = tr_binary(TR_ADD, &ha, &hb), two = tr_from_doubles(TKC_FLOAT32, 0, NULL, (const double[]){2});
    href y2 = tr_binary(TR_MUL, &ys, &two), sy = tr_reduce(TR_SUM, &ys, 0, NULL, 0), w = tr_binary(TR_ADD, &y2, &sy);
    tr_checkk(z2, &w, 1, "y*2 + sum(y)");
    href yy = tr_binary(TR_MUL, &ha, &hb), w2 = tr_binary(TR_ADD, &yy, &yy);
    tr_checkk(z, &w2, 0, "y + y");
    tr_free(&ha), tr_free(&hb), tr_free(&hc), tr_free(&ys), tr_free(&two), tr_free(&y2), tr_free(&sy), tr_free(&w), tr_free(&yy), tr_free(&w2);
    /* the realized contiguous tensor is not recomputed by a later graph */
    tkc_tensor *later = tkc_mul(yc, yc);
    TR_EXPECT(tkc_kernel_count(later) == 1, "%s: after realizing z2, y*y needs %d kernels, want 1 (y computed once)", dev, tkc_kernel_count(later));
  }
  TR_END();
}

/* kernels_source: every renderer that exists renders; C has one function per kernel; nothing runs */
static void test_kernels_source(void **state) {
  (void)state;
  tr_begin();
  FOR_EACH_DEVICE(dev, ctx) {
    const int64_t s[2] = {4, 8};
    tkc_tensor *a = tkc_tensor_new(ctx, TKC_FLOAT32, 2, s, NULL);
    tkc_tensor *sm = tkc_softmax(tkc_add(a, tkc_scalar(ctx, TKC_FLOAT32, 1)), -1);
    int k = tkc_kernel_count(sm);
    char *src = tkc_kernels_source(sm, "C");
    TR_EXPECT(src && tr_count_c_kernels(src) == k && k >= 1, "%s: softmax C source has %d functions, kernel_count %d", dev,
              src ? tr_count_c_kernels(src) : -1, k);
    tkc_free(src);
    TR_EXPECT(tkc_kernel_count(sm) == k, "%s: kernels_source ran something (count %d -> %d)", dev, k, tkc_kernel_count(sm));
    static const char *const others[] = {"LLVM", "PTX", "WGSL"};
    for (int i = 0; i < 3; i++) {
      tkc_clear_error();
      if (!tkc_renderer_get(others[i])) {
        printf("  %s renderer not built: kernels_source(\"%s\") not checked\n", others[i], others[i]);
        continue;
      }
      src = tkc_kernels_source(sm, others[i]);
      TR_EXPECT(src && strlen(src) > 0, "%s: kernels_source(\"%s\")", dev, others[i]);
      tkc_free(src);
    }
    /* a realized tensor has no kernels left: the source is empty (but not an error) */
    TR_EXPECT(tkc_realize(sm) == TKC_OK, "%s: realize softmax", dev);
    src = tkc_kernels_source(sm, "C");
    if (!src) printf("  note: kernels_source of a realized tensor is NULL (%s)\n", tkc_last_error());
    TR_EXPECT(!src || tr_count_c_kernels(src) == 0, "%s: source of a realized tensor: %s", dev, src);
    tkc_free(src);
    tkc_clear_error();
    TR_EXPECT(tkc_kernels_source(a, "NOPE") == NULL, "%s: unknown renderer gives NULL", dev);
    TR_EXPECT(tkc_last_status() != TKC_OK, "%s: unknown renderer sets an error", dev);
  }
  TR_END();
}

/* ---------------------------------------------------------------- realize / copy_out */

static void test_realize_and_copy_out(void **state) {
  (void)state;
  tr_begin();
  FOR_EACH_DEVICE(dev, ctx) {
    href a;
    tkc_tensor *ta = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(2, 3), TR_DOM_ANY, NULL, &a);
    tkc_tensor *e = tkc_exp(ta);
    href w = tr_unary(TR_EXP, &a);
    TR_EXPECT(tkc_realize(e) == TKC_OK, "%s: realize", dev);
    TR_EXPECT(tkc_realize(e) == TKC_OK, "%s: realize twice", dev);
    tr_checkk(e, &w, 1, "exp after realize");
    tr_checkk(e, &w, 1, "exp copied out again");
    /* realized tensors feed new graphs; realizing a result does not change its inputs */
    href w2 = tr_binary(TR_ADD, &w, &w);
    tkc_tensor *e2 = tkc_add(e, e);
    tr_checkk(e2, &w2, 1, "exp + exp from a realized exp");
    tr_checkk(ta, &a, 0, "input unchanged");
    tr_free(&w2);
    /* realize of a tensor_new'ed tensor and of a view of it */
    TR_EXPECT(tkc_realize(ta) == TKC_OK, "%s: realize an input", dev);
    tkc_tensor *v = tkc_transpose(ta, 0, 1);
    TR_EXPECT(tkc_realize(v) == TKC_OK, "%s: realize a view", dev);
    href vt = tr_transpose(&a, 0, 1);
    tr_checkk(v, &vt, 0, "realized transpose");
    tr_free(&vt);
    /* an empty tensor copies out 0 bytes */
    tkc_tensor *emp = tkc_exp(tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){0, 5}, NULL));
    char dummy;
    TR_EXPECT(tkc_copy_out(emp, &dummy, 0) == TKC_OK, "%s: copy_out of an empty tensor", dev);
    /* several outputs sharing inputs, realized in turn */
    tkc_tensor *outs[4];
    for (int i = 0; i < 4; i++) outs[i] = tkc_mul(e, tkc_scalar(ctx, TKC_FLOAT32, i));
    for (int i = 3; i >= 0; i--) {
      href s = tr_from_doubles(TKC_FLOAT32, 0, NULL, (const double[]){(double)i}), wi = tr_binary(TR_MUL, &w, &s);
      char what[64];
      snprintf(what, sizeof what, "%s: exp(x)*%d", dev, i);
      tr_checkk(outs[i], &wi, 1, what);
      tr_free(&s), tr_free(&wi);
    }
    tr_free(&w), tr_free(&a);
  }
  TR_END();
}

/* ---------------------------------------------------------------- larger shapes, threads */

/* shapes big enough for the CPU to split the work across cores (INTERP, an interpreter, gets a
 * smaller version); values in the exact domain, so float sums are exact whatever the order */
static void test_larger_shapes(void **state) {
  (void)state;
  tr_begin();
  FOR_EACH_DEVICE(dev, ctx) {
    bool big = tkc_device_renderer(tkc_device_get(dev)) != NULL;
    const int64_t R = big ? 1000 : 67, C = big ? 1001 : 129;
    href a, b;
    tkc_tensor *ta = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(R, C), TR_DOM_ANY, NULL, &a);
    tkc_tensor *tb = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(C), TR_DOM_ANY, NULL, &b);
    char what[96];
    href w = tr_binary(TR_MUL, &a, &b);
    snprintf(what, sizeof what, "%s: (%lld,%lld) * (%lld,)", dev, (long long)R, (long long)C, (long long)C);
    tr_checkk(tkc_mul(ta, tb), &w, 0, what);
    tr_free(&w);
    for (int ax = -1; ax < 2; ax++) {
      int axes[1] = {ax};
      int kind = ax == 1 ? TR_RMAX : TR_SUM;
      w = tr_reduce(kind, &a, ax < 0 ? 0 : 1, axes, 0);
      snprintf(what, sizeof what, "%s: %s of (%lld,%lld) %s", dev, kind == TR_SUM ? "sum" : "max", (long long)R, (long long)C,
               ax < 0 ? "all" : ax ? "axis 1" : "axis 0");
      tr_checkk(kind == TR_SUM ? tkc_sum(ta, ax < 0 ? 0 : 1, axes, 0) : tkc_max(ta, 1, axes, 0), &w, 0, what);
      tr_free(&w);
    }
    href t = tr_transpose(&a, 0, 1);
    w = tr_binary(TR_SUB, &t, &t);
    snprintf(what, sizeof what, "%s: transpose(x) - transpose(x), %lld elements", dev, (long long)a.n);
    tr_checkk(tkc_sub(tkc_transpose(ta, 0, 1), tkc_transpose(ta, 1, 0)), &w, 0, what);
    tr_free(&t), tr_free(&w), tr_free(&a), tr_free(&b);
  }
  TR_END();
}

/* one ctx per thread, several threads at once (the compiled-program cache is shared) */
typedef struct thread_job {
  const char *dev;
  int id, errors;
} thread_job;

static void *thread_main(void *arg) {
  thread_job *job = arg;
  tkc_ctx *ctx = tkc_ctx_new(job->dev);
  if (!ctx) {
    job->errors++;
    return NULL;
  }
  for (int i = 0; i < 40; i++) {
    float in[6] = {1, 2, 3, 4, 5, 6}, out[2] = {0};
    int64_t s[2] = {2, 3};
    tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 2, s, in);
    /* shared kernels (same source in every thread) and thread-specific ones (a constant per thread) */
    float k = (float)(i % 4 == 0 ? job->id + 2 : 2);
    tkc_tensor *y = tkc_sum(tkc_mul(x, tkc_scalar(ctx, TKC_FLOAT32, k)), 1, (const int[]){1}, 0);
    if (!y || tkc_copy_out(y, out, sizeof out) != TKC_OK || out[0] != 6 * k || out[1] != 15 * k) job->errors++;
    tkc_tensor_free(y), tkc_tensor_free(x);
  }
  tkc_ctx_free(ctx);
  return NULL;
}

static void test_threads(void **state) {
  (void)state;
  tr_begin();
  for (const char *const *dn = tkc_device_names(); *dn; dn++) {
    if (!tkc_device_available(*dn)) continue;
    enum { NT = 4 };
    pthread_t th[NT];
    thread_job jobs[NT];
    for (int t = 0; t < NT; t++) {
      jobs[t] = (thread_job){*dn, t, 0};
      if (pthread_create(&th[t], NULL, thread_main, &jobs[t])) jobs[t].errors = -1000;
    }
    for (int t = 0; t < NT; t++)
      if (jobs[t].errors != -1000) pthread_join(th[t], NULL);
    for (int t = 0; t < NT; t++) TR_EXPECT(jobs[t].errors == 0, "%s: thread %d: %d wrong results", *dn, t, jobs[t].errors);
  }
  TR_END();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_matmul),        cmocka_unit_test(test_softmax),        cmocka_unit_test(test_conv2d),
      cmocka_unit_test(test_kernel_counts), cmocka_unit_test(test_kernels_source), cmocka_unit_test(test_realize_and_copy_out),
      cmocka_unit_test(test_larger_shapes), cmocka_unit_test(test_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
