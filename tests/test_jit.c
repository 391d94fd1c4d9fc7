/* test_jit.c — capture and replay (tkc_jit, issue 15): replays equal fresh realizes on every device,
 * for new input data and new variable values, with no kernel built after the capture; the
 * intermediate buffers are planned and shared; changed inputs and bad calls are clear errors. */
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
enum { BMAX = 32, IN = 8, HID = 16, OUT = 4 };
static float W1[IN * HID], B1[HID], W2[HID * OUT];

typedef struct mlp {
  tkc_tensor *w1, *b1, *w2;
} mlp;

/* out[0] = relu(x @ w1 + b1) @ w2, out[1] = its softmax over the rows' entries, out[2] = mean over the batch */
static tkc_status mlp_fn(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)ctx, (void)nin, (void)nout;
  mlp *m = user;
  tkc_tensor *h = tkc_relu(tkc_add(tkc_matmul(in[0], m->w1), m->b1));
  out[0] = tkc_matmul(h, m->w2);
  out[1] = tkc_softmax(out[0], 1);
  out[2] = tkc_mean(out[0], 1, (const int[]){0}, 0);
  tkc_tensor_free(h);
  return out[0] && out[1] && out[2] ? TKC_OK : tkc_last_status();
}

static void reference(const float *x, int b, float *y, float *sm, float *mean) {
  for (int j = 0; j < OUT; j++) mean[j] = 0;
  for (int r = 0; r < b; r++) {
    float h[HID], mx = -INFINITY, den = 0;
    for (int k = 0; k < HID; k++) {
      float a = B1[k];
      for (int i = 0; i < IN; i++) a += x[r * IN + i] * W1[i * HID + k];
      h[k] = a > 0 ? a : 0;
    }
    for (int j = 0; j < OUT; j++) {
      float a = 0;
      for (int k = 0; k < HID; k++) a += h[k] * W2[k * OUT + j];
      y[r * OUT + j] = a;
      mx = a > mx ? a : mx;
      mean[j] += a / (float)b;
    }
    for (int j = 0; j < OUT; j++) den += expf(y[r * OUT + j] - mx);
    for (int j = 0; j < OUT; j++) sm[r * OUT + j] = expf(y[r * OUT + j] - mx) / den;
  }
}

static void close_all(const char *what, const float *got, const float *want, int n) {
  for (int i = 0; i < n; i++)
    if (!(fabsf(got[i] - want[i]) <= 1e-4f * (1 + fabsf(want[i])))) fail_msg("%s: [%d] = %g, want %g", what, i, got[i], want[i]);
}

static int64_t built(tkc_ctx *ctx) {
  tkc_stats s;
  tkc_ctx_stats(ctx, &s);
  return s.kernels_built;
}

static void test_replay_matches(void **state) {
  (void)state;
  for (int i = 0; i < IN * HID; i++) W1[i] = (float)((i * 7) % 13) / 6 - 1;
  for (int i = 0; i < HID; i++) B1[i] = (float)(i % 5) / 10 - 0.2f;
  for (int i = 0; i < HID * OUT; i++) W2[i] = (float)((i * 5) % 11) / 5 - 1;
  for (size_t d = 0; d < sizeof devs / sizeof devs[0]; d++) {
    if (!tkc_device_available(devs[d])) {
      printf("# skip %s: not available here\n", devs[d]);
      continue;
    }
    tkc_ctx *ctx = tkc_ctx_new(devs[d]);
    mlp m = {tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){IN, HID}, W1), tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){HID}, B1),
             tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){HID, OUT}, W2)};
    int64_t bv = tkc_dim_var(ctx, "batch", 1, BMAX);
    tkc_jit *j = tkc_jit_new(ctx, mlp_fn, &m);
    assert_non_null(j);
    assert_int_equal(tkc_jit_kernels(j), 0);
    const int batches[] = {4, 7, 1, 32, 4, 19};
    int64_t after_capture = 0;
    for (size_t k = 0; k < sizeof batches / sizeof batches[0]; k++) {
      int b = batches[k];
      float x[BMAX * IN], y[BMAX * OUT], sm[BMAX * OUT], mean[OUT], got[BMAX * OUT];
      for (int i = 0; i < b * IN; i++) x[i] = (float)(((i + 3 * (int)k) * 11) % 17) / 8 - 1;
      reference(x, b, y, sm, mean);
      assert_int_equal(tkc_dim_bind(ctx, bv, b), TKC_OK);
      tkc_tensor *xt = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){bv, IN}, x), *out[3];
      if (tkc_jit_run(j, &xt, 1, out, 3)) fail_msg("%s: batch %d: %s", devs[d], b, tkc_last_error());
      char what[64];
      snprintf(what, sizeof what, "%s batch %d %s", devs[d], b, k ? "replay" : "capture");
      assert_int_equal(tkc_copy_out(out[0], got, (size_t)b * OUT * sizeof(float)), TKC_OK);
      close_all(what, got, y, b * OUT);
      assert_int_equal(tkc_copy_out(out[1], got, (size_t)b * OUT * sizeof(float)), TKC_OK);
      close_all(what, got, sm, b * OUT);
      assert_int_equal(tkc_copy_out(out[2], got, OUT * sizeof(float)), TKC_OK);
      close_all(what, got, mean, OUT);
      if (k == 0) {
        after_capture = built(ctx);
        printf("# %s: %d kernels captured, %d planned intermediate buffers\n", devs[d], tkc_jit_kernels(j), tkc_jit_buffers(j));
        assert_true(tkc_jit_kernels(j) >= 3);
      } else if (built(ctx) != after_capture) fail_msg("%s: a replay built kernels", devs[d]);
      for (int i = 0; i < 3; i++) tkc_tensor_free(out[i]);
      tkc_tensor_free(xt);
    }
    tkc_jit_free(j);
    tkc_tensor_free(m.w1), tkc_tensor_free(m.b1), tkc_tensor_free(m.w2);
    tkc_ctx_free(ctx);
  }
}

/* intermediates with disjoint lifetimes share a planned buffer: a chain of 6 kernels needs 2 */
static tkc_status chain_fn(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)nin, (void)nout, (void)user;
  tkc_tensor *x = in[0];
  for (int i = 0; i < 6; i++) {
    tkc_tensor *y = tkc_contiguous(tkc_add(x, tkc_scalar(ctx, TKC_FLOAT32, 1)));
    if (i) tkc_tensor_free(x);
    x = y;
  }
  out[0] = tkc_sum(x, 0, NULL, 0);
  if (x != in[0]) tkc_tensor_free(x);
  return out[0] ? TKC_OK : tkc_last_status();
}

static void test_planned_buffers_and_errors(void **state) {
  (void)state;
  tkc_ctx *ctx = tkc_ctx_new("INTERP"), *other = tkc_ctx_new("INTERP");
  tkc_jit *j = tkc_jit_new(ctx, chain_fn, NULL);
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, s;
  tkc_tensor *xt = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){8}, x), *out;
  assert_int_equal(tkc_jit_run(j, &xt, 1, &out, 1), TKC_OK);
  assert_int_equal(tkc_copy_out(out, &s, sizeof s), TKC_OK);
  assert_true(s == 36 + 48);
  tkc_tensor_free(out);
  printf("# chain: %d kernels, %d planned buffers\n", tkc_jit_kernels(j), tkc_jit_buffers(j));
  assert_true(tkc_jit_kernels(j) >= 6);
  assert_true(tkc_jit_buffers(j) <= 3);
  for (int i = 0; i < 8; i++) x[i] = (float)(i * i);
  tkc_tensor *x2 = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){8}, x);
  assert_int_equal(tkc_jit_run(j, &x2, 1, &out, 1), TKC_OK);
  assert_int_equal(tkc_copy_out(out, &s, sizeof s), TKC_OK);
  assert_true(s == 140 + 48);
  tkc_tensor_free(out);
  /* changed inputs: another shape, another dtype, a view, a freed tensor, another ctx */
  tkc_tensor *bad = tkc_full(ctx, TKC_FLOAT32, 1, (const int64_t[]){9}, 1);
  assert_int_equal(tkc_jit_run(j, &bad, 1, &out, 1), TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "input 0"));
  tkc_tensor *bad2 = tkc_full(ctx, TKC_INT32, 1, (const int64_t[]){8}, 1);
  assert_int_equal(tkc_jit_run(j, &bad2, 1, &out, 1), TKC_EINVAL);
  tkc_tensor *big = tkc_full(ctx, TKC_FLOAT32, 1, (const int64_t[]){16}, 1), *view = tkc_shrink(big, (const int64_t[]){4, 12});
  assert_int_equal(tkc_jit_run(j, &view, 1, &out, 1), TKC_EINVAL);
  tkc_tensor_free(x2);
  assert_int_equal(tkc_jit_run(j, &x2, 1, &out, 1), TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "freed"));
  tkc_tensor *o = tkc_full(other, TKC_FLOAT32, 1, (const int64_t[]){8}, 1);
  assert_int_equal(tkc_jit_run(j, &o, 1, &out, 1), TKC_EINVAL);
  tkc_tensor *two[2] = {xt, xt};
  assert_int_equal(tkc_jit_run(j, two, 2, &out, 1), TKC_EINVAL);
  assert_int_equal(tkc_jit_run(NULL, &xt, 1, &out, 1), TKC_EINVAL);
  assert_null(tkc_jit_new(NULL, chain_fn, NULL));
  assert_null(tkc_jit_new(ctx, NULL, NULL));
  /* the jit still replays after the errors */
  assert_int_equal(tkc_jit_run(j, &xt, 1, &out, 1), TKC_OK);
  assert_int_equal(tkc_copy_out(out, &s, sizeof s), TKC_OK);
  assert_true(s == 36 + 48);
  tkc_tensor_free(out);
  tkc_jit_free(j);
  tkc_jit_free(NULL);
  assert_int_equal(tkc_jit_kernels(NULL), 0);
  assert_int_equal(tkc_jit_buffers(NULL), 0);
  tkc_ctx_free(ctx);
  tkc_ctx_free(other);
}

/* a function that fails: the error comes back, nothing is captured, the next run captures */
static int fail_first;
static tkc_status flaky_fn(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)ctx, (void)nin, (void)nout, (void)user;
  if (fail_first-- > 0) return TKC_ERUNTIME;
  out[0] = tkc_mul(in[0], in[0]);
  return out[0] ? TKC_OK : tkc_last_status();
}

static void test_failed_capture(void **state) {
  (void)state;
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  tkc_jit *j = tkc_jit_new(ctx, flaky_fn, NULL);
  float x[3] = {1, 2, 3}, y[3];
  tkc_tensor *xt = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){3}, x), *out = NULL;
  fail_first = 1;
  assert_int_equal(tkc_jit_run(j, &xt, 1, &out, 1), TKC_ERUNTIME);
  assert_null(out);
  assert_int_equal(tkc_jit_kernels(j), 0);
  assert_int_equal(tkc_jit_run(j, &xt, 1, &out, 1), TKC_OK);
  assert_int_equal(tkc_copy_out(out, y, sizeof y), TKC_OK);
  assert_true(y[0] == 1 && y[1] == 4 && y[2] == 9);
  tkc_tensor_free(out);
  tkc_jit_free(j);
  tkc_ctx_free(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_replay_matches), cmocka_unit_test(test_planned_buffers_and_errors),
                                     cmocka_unit_test(test_failed_capture)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
