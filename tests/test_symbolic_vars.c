/* test_symbolic_vars.c — variables (tkc_dim_var, issue 15): kernels read them as parameters, so one
 * compiled kernel serves every bound value, on every device; bad bindings and tokens are clear
 * errors. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include "tkc.h"

static const char *const devs[] = {"CPU", "LLVM", "WEBGPU", "CUDA", "INTERP"};
#define NDEVS (sizeof devs / sizeof devs[0])

static int64_t built(tkc_ctx *ctx) {
  tkc_stats s;
  assert_int_equal(tkc_ctx_stats(ctx, &s), TKC_OK);
  return s.kernels_built;
}

/* y = x * pos + pos and sum(y) for several values of pos: right values, one build per kernel */
static void test_var_as_value(void **state) {
  (void)state;
  for (size_t d = 0; d < NDEVS; d++) {
    if (!tkc_device_available(devs[d])) {
      printf("# skip %s: not available here\n", devs[d]);
      continue;
    }
    tkc_ctx *ctx = tkc_ctx_new(devs[d]);
    assert_non_null(ctx);
    int64_t pos = tkc_dim_var(ctx, "pos", 0, 100);
    assert_true(tkc_dim_is_var(pos));
    enum { N = 10 };
    float x[N];
    for (int i = 0; i < N; i++) x[i] = (float)i / 2 - 1;
    tkc_tensor *xt = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){N}, x);
    int64_t after_first = -1;
    const int values[] = {3, 0, 7, 100, 3};
    for (size_t k = 0; k < sizeof values / sizeof values[0]; k++) {
      assert_int_equal(tkc_dim_bind(ctx, pos, values[k]), TKC_OK);
      assert_int_equal(tkc_dim_value(ctx, pos), values[k]);
      tkc_tensor *p = tkc_cast(tkc_dim_scalar(ctx, pos), TKC_FLOAT32);
      tkc_tensor *y = tkc_add(tkc_mul(xt, p), p);
      tkc_tensor *s = tkc_sum(y, 0, NULL, 0);
      float got[N], sum = 0, want_sum = 0;
      if (tkc_copy_out(y, got, sizeof got) || tkc_copy_out(s, &sum, sizeof sum)) fail_msg("%s: %s", devs[d], tkc_last_error());
      for (int i = 0; i < N; i++) {
        float want = x[i] * (float)values[k] + (float)values[k];
        want_sum += want;
        if (fabsf(got[i] - want) > 1e-5f * (1 + fabsf(want))) fail_msg("%s: pos=%d: y[%d] = %g, want %g", devs[d], values[k], i, got[i], want);
      }
      if (fabsf(sum - want_sum) > 1e-4f * (1 + fabsf(want_sum))) fail_msg("%s: pos=%d: sum %g, want %g", devs[d], values[k], sum, want_sum);
      if (k == 0) after_first = built(ctx);
      else if (built(ctx) != after_first) fail_msg("%s: pos=%d built %lld more kernels", devs[d], values[k], (long long)(built(ctx) - after_first));
      tkc_tensor_free(p), tkc_tensor_free(y), tkc_tensor_free(s);
    }
    tkc_ctx_free(ctx);
  }
}

static void test_var_errors(void **state) {
  (void)state;
  tkc_ctx *ctx = tkc_ctx_new("INTERP"), *other = tkc_ctx_new("INTERP");
  int64_t n = tkc_dim_var(ctx, "n", 1, 16);
  assert_true(tkc_dim_is_var(n));
  assert_false(tkc_dim_is_var(16));
  assert_false(tkc_dim_is_var(-1));
  /* names and bounds */
  assert_int_equal(tkc_dim_var(ctx, "n", 1, 4), 0);
  assert_non_null(strstr(tkc_last_error(), "already"));
  assert_int_equal(tkc_dim_var(ctx, "2x", 1, 4), 0);
  assert_int_equal(tkc_dim_var(ctx, NULL, 1, 4), 0);
  assert_int_equal(tkc_dim_var(ctx, "a very long name that does not fit in 31", 1, 4), 0);
  assert_int_equal(tkc_dim_var(ctx, "m", 5, 4), 0);
  assert_int_equal(tkc_dim_var(ctx, "m", -1, 4), 0);
  assert_int_equal(tkc_dim_var(ctx, "m", 0, INT64_C(1) << 31), 0);
  assert_int_equal(tkc_dim_var(NULL, "m", 0, 4), 0);
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  /* binding */
  assert_int_equal(tkc_dim_bind(ctx, n, 0), TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "outside its bounds [1, 16]"));
  assert_int_equal(tkc_dim_bind(ctx, n, 17), TKC_EINVAL);
  assert_int_equal(tkc_dim_bind(other, n, 2), TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "another ctx"));
  assert_int_equal(tkc_dim_bind(ctx, 12, 2), TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "not a variable"));
  assert_int_equal(tkc_dim_bind(ctx, n + 5, 2), TKC_EINVAL); /* a made-up token */
  assert_int_equal(tkc_dim_bind(NULL, n, 2), TKC_EINVAL);
  assert_null(tkc_dim_scalar(other, n));
  /* unbound at realize */
  assert_int_equal(tkc_dim_value(ctx, n), -1);
  assert_non_null(strstr(tkc_last_error(), "not bound"));
  assert_int_equal(tkc_dim_value(ctx, 7), 7);
  tkc_tensor *s = tkc_add(tkc_dim_scalar(ctx, n), tkc_scalar(ctx, TKC_INT32, 1));
  assert_non_null(s);
  int32_t v = 0;
  assert_int_equal(tkc_copy_out(s, &v, sizeof v), TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "variable n is not bound"));
  assert_int_equal(tkc_dim_bind(ctx, n, 9), TKC_OK);
  assert_int_equal(tkc_copy_out(s, &v, sizeof v), TKC_OK); /* the same tensor, now bound */
  assert_int_equal(v, 10);
  tkc_ctx_free(ctx);
  tkc_ctx_free(other);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_var_as_value), cmocka_unit_test(test_var_errors)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
