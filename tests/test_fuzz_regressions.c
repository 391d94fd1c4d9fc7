/* test_fuzz_regressions.c — what tests/fuzz/fuzz_tensor found, on every device, so it stays fixed:
 *   - cumsum of a division: the window padding was pushed into FDIV (0/0 = NaN at index 0); FDIV now
 *     counts as unsafe to pad, as IDIV and RECIP do;
 *   - matmul broadcasting a batch dim of 0 against 1 as 1 (it is 0, as numpy);
 *   - inf * 0.0 folded to 0 by the symbolic rules (it is NaN; tests/test_symbolic.c has the rule). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include "tkc.h"

static const char *const DEVS[] = {"CPU", "LLVM", "INTERP", "WEBGPU"};

static void test_cumsum_of_division(void **state) {
  (void)state;
  for (int d = 0; d < 4; d++) {
    if (!tkc_device_available(DEVS[d])) continue;
    tkc_ctx *ctx = tkc_ctx_new(DEVS[d]);
    float x[2] = {1, 2}, s = 4, out[2];
    tkc_tensor *a = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){2}, x), *sc = tkc_tensor_new(ctx, TKC_FLOAT32, 0, NULL, &s);
    assert_int_equal(tkc_copy_out(tkc_cumsum(tkc_div(a, sc), 0), out, sizeof out), TKC_OK);
    assert_true(out[0] == 0.25f && out[1] == 0.75f);
    tkc_ctx_free(ctx);
  }
}

static void test_matmul_empty_batch(void **state) {
  (void)state;
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  tkc_tensor *a = tkc_tensor_new(ctx, TKC_FLOAT32, 3, (const int64_t[]){0, 2, 3}, NULL);
  tkc_tensor *b = tkc_tensor_new(ctx, TKC_FLOAT32, 3, (const int64_t[]){1, 3, 4}, NULL);
  tkc_tensor *c = tkc_matmul(a, b);
  assert_non_null(c);
  assert_int_equal(tkc_ndim(c), 3);
  assert_int_equal(tkc_dim(c, 0), 0);
  assert_int_equal(tkc_dim(c, 1), 2);
  assert_int_equal(tkc_dim(c, 2), 4);
  tkc_tensor *a4 = tkc_tensor_new(ctx, TKC_FLOAT32, 4, (const int64_t[]){1, 3, 0, 2}, NULL);
  tkc_tensor *b4 = tkc_tensor_new(ctx, TKC_FLOAT32, 4, (const int64_t[]){2, 1, 2, 1}, NULL);
  tkc_tensor *c4 = tkc_matmul(a4, b4); /* (1,3) with (2,1): (2,3) */
  assert_non_null(c4);
  assert_int_equal(tkc_dim(c4, 0), 2);
  assert_int_equal(tkc_dim(c4, 1), 3);
  assert_int_equal(tkc_dim(c4, 2), 0);
  tkc_ctx_free(ctx);
}

static void test_inf_times_zero(void **state) {
  (void)state;
  for (int d = 0; d < 3; d++) { /* (WGSL may assume there are no infinities) */
    if (!tkc_device_available(DEVS[d])) continue;
    tkc_ctx *ctx = tkc_ctx_new(DEVS[d]);
    const float v[2] = {INFINITY, 2};
    float out[2];
    tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){2, 1}, v);
    tkc_tensor *m = tkc_matmul(x, tkc_full(ctx, TKC_FLOAT32, 2, (const int64_t[]){1, 1}, 0));
    assert_int_equal(tkc_copy_out(m, out, sizeof out), TKC_OK);
    assert_true(isnan(out[0]) && out[1] == 0);
    tkc_ctx_free(ctx);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_cumsum_of_division), cmocka_unit_test(test_matmul_empty_batch),
                                     cmocka_unit_test(test_inf_times_zero)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
