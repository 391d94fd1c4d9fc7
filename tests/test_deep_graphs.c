/* test_deep_graphs.c — graphs deeper or wider than one kernel can hold (issue 16), on every device:
 * a chain of 100,000 adds (once a stack overflow at 1,200), a shared-node DAG 2,000 deep, a deep chain
 * under a reduce, 1,000 reshape/permute pairs, and sums of 40 and 100 tensors (once "a kernel reads
 * more than 32 buffers"). The scheduler cuts them into kernels; the values are checked against C. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include "tkc.h"

static const char *const DEVS[] = {"CPU", "LLVM", "INTERP", "WEBGPU"};
#define FOR_DEVICES(ctx)                                                    \
  for (int d_ = 0; d_ < 4; d_++)                                            \
    for (tkc_ctx *ctx = tkc_device_available(DEVS[d_]) ? tkc_ctx_new(DEVS[d_]) : NULL; ctx; tkc_ctx_free(ctx), ctx = NULL)

static void test_long_chain(void **state) {
  (void)state;
  FOR_DEVICES(ctx) {
    const float av[4] = {1, -2, 0.5f, 3};
    tkc_tensor *a = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){4}, av), *x = a;
    tkc_scope_begin(ctx);
    for (int i = 0; i < 100000; i++) x = tkc_add(x, a);
    float out[4];
    tkc_status st = tkc_copy_out(x, out, sizeof out);
    if (st) fail_msg("%s: %s", tkc_ctx_device(ctx), tkc_last_error());
    for (int i = 0; i < 4; i++) assert_true(out[i] == av[i] * 100001.0f);
    assert_true(tkc_kernel_count(x) == 0); /* realized */
    tkc_scope_end(ctx);
  }
}

/* x = (x + x) * 0.5 two thousand times: every node read twice (a DAG, not a tree) */
static void test_shared_dag(void **state) {
  (void)state;
  FOR_DEVICES(ctx) {
    const float av[3] = {0.25f, -7, 1024};
    tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){3}, av), *half = tkc_scalar(ctx, TKC_FLOAT32, 0.5);
    tkc_scope_begin(ctx);
    for (int i = 0; i < 2000; i++) x = tkc_mul(tkc_add(x, x), half);
    float out[3];
    if (tkc_copy_out(x, out, sizeof out)) fail_msg("%s: %s", tkc_ctx_device(ctx), tkc_last_error());
    for (int i = 0; i < 3; i++) assert_true(out[i] == av[i]);
    tkc_scope_end(ctx);
  }
}

/* sum over (64) of a 3,000-deep elementwise chain: cuts below the reduce */
static void test_deep_under_reduce(void **state) {
  (void)state;
  FOR_DEVICES(ctx) {
    float av[64];
    double want = 0;
    for (int i = 0; i < 64; i++) av[i] = (float)i / 8, want += (double)av[i] + 3000 * 0.25;
    tkc_tensor *a = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){64}, av), *q = tkc_scalar(ctx, TKC_FLOAT32, 0.25), *x = a;
    tkc_scope_begin(ctx);
    for (int i = 0; i < 3000; i++) x = tkc_add(x, q);
    float got;
    if (tkc_copy_out(tkc_sum(x, 0, NULL, 0), &got, sizeof got)) fail_msg("%s: %s", tkc_ctx_device(ctx), tkc_last_error());
    assert_true(fabs(got - want) < 1e-3 * want);
    tkc_scope_end(ctx);
  }
}

static void test_many_moves(void **state) {
  (void)state;
  FOR_DEVICES(ctx) {
    const float d[6] = {1, 2, 3, 4, 5, 6};
    float want[6];
    memcpy(want, d, sizeof want);
    int rows = 2, cols = 3;
    tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){2, 3}, d);
    tkc_scope_begin(ctx);
    for (int i = 0; i < 1000; i++) { /* transpose, then reinterpret as (cols, rows) again: row-major copy in C */
      float t[6];
      for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) t[c * rows + r] = want[r * cols + c];
      memcpy(want, t, sizeof t);
      int tmp = rows;
      rows = cols, cols = tmp;
      x = tkc_permute(x, (const int[]){1, 0});
      rows = i % 2 ? 2 : 3, cols = 6 / rows;
      x = tkc_reshape(x, 2, (const int64_t[]){rows, cols});
    }
    float out[6];
    if (tkc_copy_out(tkc_add(x, x), out, sizeof out)) fail_msg("%s: %s", tkc_ctx_device(ctx), tkc_last_error());
    for (int i = 0; i < 6; i++) assert_true(out[i] == 2 * want[i]);
    tkc_scope_end(ctx);
  }
}

static void test_many_inputs(void **state) {
  (void)state;
  FOR_DEVICES(ctx) {
    for (int n = 33; n <= 100; n += 67) { /* 33 (just past 32) and 100 */
      tkc_scope_begin(ctx);
      tkc_tensor *acc = NULL;
      float want[4] = {0};
      for (int i = 0; i < n; i++) {
        float v[4] = {(float)i, 1, (float)(i % 3), -2};
        for (int j = 0; j < 4; j++) want[j] += v[j];
        tkc_tensor *t = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){4}, v);
        acc = acc ? tkc_add(acc, t) : t;
      }
      float out[4];
      if (tkc_copy_out(acc, out, sizeof out)) fail_msg("%s, %d inputs: %s", tkc_ctx_device(ctx), n, tkc_last_error());
      for (int j = 0; j < 4; j++) assert_true(out[j] == want[j]);
      tkc_scope_end(ctx);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_long_chain), cmocka_unit_test(test_shared_dag), cmocka_unit_test(test_deep_under_reduce),
      cmocka_unit_test(test_many_moves), cmocka_unit_test(test_many_inputs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
