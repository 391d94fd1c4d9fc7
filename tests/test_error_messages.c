/* Error messages in the user's terms: each names the op, the full shapes as (2,3) and dtypes by
 * name, and says what is wrong; the status is the documented one; the ctx stays usable.
 * A 64-bit dtype on WEBGPU fails where the op is built (tensor creation, cast, a promotion), not
 * when its kernel renders, saying what to do instead (skipped with the reason without WEBGPU). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include "tkc.h"
#include "tkc/runtime.h"

static tkc_ctx *ctx;

static int setup(void **state) {
  (void)state;
  ctx = tkc_ctx_new("INTERP");
  return ctx ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  tkc_ctx_free(ctx);
  return 0;
}

static tkc_tensor *zeros(tkc_ctx *c, tkc_dtype dt, int ndim, const int64_t *shape) { return tkc_full(c, dt, ndim, shape, 0); }
#define T2(a, b) zeros(ctx, TKC_FLOAT32, 2, (const int64_t[]){a, b})
#define T3(a, b, c) zeros(ctx, TKC_FLOAT32, 3, (const int64_t[]){a, b, c})

/* r failed with status st and a message containing want */
#define EXPECT_ERR(r, st, want)                                                                                    \
  do {                                                                                                             \
    tkc_clear_error();                                                                                             \
    const void *r_ = (const void *)(r);                                                                            \
    if (r_ || tkc_last_status() != (st) || !strstr(tkc_last_error(), want))                                        \
      fail_msg("%s: got %s, status %d, message \"%s\"; want status %d and \"%s\"", #r, r_ ? "a result" : "NULL",   \
               (int)tkc_last_status(), tkc_last_error(), (int)(st), want);                                         \
  } while (0)

/* a status-returning call failed with st and a message containing want */
#define EXPECT_STATUS(call, st, want)                                                                              \
  do {                                                                                                             \
    tkc_clear_error();                                                                                             \
    tkc_status s_ = (call);                                                                                        \
    if (s_ != (st) || !strstr(tkc_last_error(), want))                                                             \
      fail_msg("%s: got status %d, message \"%s\"; want status %d and \"%s\"", #call, (int)s_, tkc_last_error(), \
               (int)(st), want);                                                                                   \
  } while (0)

static void test_broadcast(void **state) {
  (void)state;
  EXPECT_ERR(tkc_add(T2(2, 3), T2(2, 5)), TKC_ESHAPE, "add: shapes (2,3) and (2,5) do not broadcast (dim 1: 3 vs 5)");
  EXPECT_ERR(tkc_mul(T3(4, 2, 3), T2(5, 3)), TKC_ESHAPE, "mul: shapes (4,2,3) and (5,3) do not broadcast (dim 1: 2 vs 5)");
  EXPECT_ERR(tkc_lt(zeros(ctx, TKC_INT32, 1, (const int64_t[]){4}), zeros(ctx, TKC_INT32, 1, (const int64_t[]){3})), TKC_ESHAPE,
             "lt: shapes (4,) and (3,) do not broadcast (dim 0: 4 vs 3)");
  EXPECT_ERR(tkc_where(T2(2, 4), T2(2, 3), T2(2, 3)), TKC_ESHAPE, "where: shapes (2,4) and (2,3) do not broadcast (dim 1: 4 vs 3)");
}

static void test_matmul(void **state) {
  (void)state;
  EXPECT_ERR(tkc_matmul(T2(2, 3), T2(4, 5)), TKC_ESHAPE, "matmul: (2,3) @ (4,5): inner dims 3 and 4 differ");
  EXPECT_ERR(tkc_matmul(T3(2, 3, 4), T3(5, 4, 6)), TKC_ESHAPE, "matmul: (2,3,4) @ (5,4,6): batch dims (2,) and (5,) do not broadcast (dim 0: 2 vs 5)");
  EXPECT_ERR(tkc_matmul(tkc_scalar(ctx, TKC_FLOAT32, 1), zeros(ctx, TKC_FLOAT32, 1, (const int64_t[]){3})), TKC_ESHAPE,
             "matmul: () @ (3,): matmul needs at least 1-d operands");
}

static void test_axes(void **state) {
  (void)state;
  EXPECT_ERR(tkc_sum(T2(2, 3), 1, (const int[]){5}, 0), TKC_EINVAL, "sum: axis 5 out of range for a 2-d tensor");
  EXPECT_ERR(tkc_sum(T2(2, 3), 1, (const int[]){5}, 0), TKC_EINVAL, "sum: axis 5 out of range for a 2-d tensor of shape (2,3)");
  EXPECT_ERR(tkc_max(T2(2, 3), 2, (const int[]){1, -1}, 0), TKC_EINVAL, "max: axis -1 given twice");
  EXPECT_ERR(tkc_mean(T2(2, 3), 1, (const int[]){-3}, 1), TKC_EINVAL, "mean: axis -3 out of range for a 2-d tensor");
  EXPECT_ERR(tkc_min(T2(2, 3), -1, NULL, 0), TKC_EINVAL, "min: naxes is -1");
  EXPECT_ERR(tkc_softmax(T2(2, 3), 2), TKC_EINVAL, "softmax: axis 2 out of range for a 2-d tensor of shape (2,3)");
  EXPECT_ERR(tkc_log_softmax(T3(2, 3, 4), -4), TKC_EINVAL, "log_softmax: axis -4 out of range for a 3-d tensor of shape (2,3,4)");
  EXPECT_ERR(tkc_cumsum(T2(2, 3), 3), TKC_EINVAL, "cumsum: axis 3 out of range for a 2-d tensor of shape (2,3)");
  EXPECT_ERR(tkc_logsumexp(T2(2, 3), 1, (const int[]){2}, 0), TKC_EINVAL, "logsumexp: axis 2 out of range for a 2-d tensor");
  EXPECT_ERR(tkc_flip(T2(2, 3), 1, (const int[]){7}), TKC_EINVAL, "flip: axis 7 out of range for a 2-d tensor");
  EXPECT_ERR(tkc_transpose(T2(2, 3), 0, 2), TKC_EINVAL, "transpose: axis 2 out of range for a 2-d tensor of shape (2,3)");
}

static void test_movement(void **state) {
  (void)state;
  EXPECT_ERR(tkc_permute(T2(2, 3), (const int[]){0, 0}), TKC_EINVAL, "permute: order (0,0) of a 2-d tensor of shape (2,3): axis 0 given twice");
  EXPECT_ERR(tkc_permute(T3(2, 3, 4), (const int[]){0, 5, 1}), TKC_EINVAL, "permute: order (0,5,1) of a 3-d tensor of shape (2,3,4): axis 5 out of range");
  EXPECT_ERR(tkc_reshape(T2(2, 3), 2, (const int64_t[]){4, 2}), TKC_ESHAPE, "reshape: (2,3) (6 elements) -> (4,2) (8 elements)");
  EXPECT_ERR(tkc_reshape(T2(2, 3), 2, (const int64_t[]){-1, 4}), TKC_ESHAPE, "reshape: (2,3) -> (-1,4): cannot infer the -1 dim");
  EXPECT_ERR(tkc_reshape(T2(2, 3), 3, (const int64_t[]){-1, -1, 6}), TKC_ESHAPE, "reshape: (2,3) -> (-1,-1,6): more than one -1");
  EXPECT_ERR(tkc_expand(T2(2, 3), 2, (const int64_t[]){4, 3}), TKC_ESHAPE, "expand: (2,3) -> (4,3): dim 0 of size 2 cannot become 4");
  EXPECT_ERR(tkc_shrink(T2(2, 3), (const int64_t[]){0, 2, 0, 4}), TKC_ESHAPE, "shrink: (2,3): [0, 4) is outside axis 1 of size 3");
  EXPECT_ERR(tkc_pad(T2(2, 3), (const int64_t[]){0, 0, -1, 0}, 0), TKC_EINVAL, "pad: (2,3): negative padding (-1, 0) on axis 1");
}

static void test_dtypes(void **state) {
  (void)state;
  EXPECT_ERR(tkc_cast(T2(2, 3), (tkc_dtype)99), TKC_EDTYPE, "cast: 99 is not a dtype (bool, int8, uint8");
  EXPECT_ERR(tkc_cast(T2(2, 3), TKC_VOID), TKC_EDTYPE, "cast: void is not a tensor dtype");
  EXPECT_ERR(tkc_bitcast(T2(2, 3), TKC_INT16), TKC_EDTYPE, "bitcast: float32 (4 bytes) -> int16 (2 bytes)");
  EXPECT_ERR(tkc_shl(T2(2, 3), T2(2, 3)), TKC_EDTYPE, "shl does not accept float32");
  EXPECT_ERR(tkc_tensor_new(ctx, (tkc_dtype)77, 1, (const int64_t[]){2}, NULL), TKC_EDTYPE, "tensor_new: 77 is not a dtype");
  EXPECT_ERR(tkc_rand(ctx, TKC_INT32, 1, (const int64_t[]){2}, 1), TKC_EDTYPE, "rand: makes floats, not int32");
}

static void test_creation_and_misc(void **state) {
  (void)state;
  EXPECT_ERR(tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){2, -1}, NULL), TKC_ESHAPE, "tensor_new: shape (2,-1): dim 1 is negative (-1)");
  EXPECT_ERR(tkc_full(NULL, TKC_FLOAT32, 1, (const int64_t[]){2}, 0), TKC_EINVAL, "full: NULL ctx");
  EXPECT_ERR(tkc_arange(ctx, TKC_FLOAT32, 0, 1, 0), TKC_EINVAL, "arange(0, 1, 0): needs finite start/stop and step != 0");
  EXPECT_ERR(tkc_conv2d(zeros(ctx, TKC_FLOAT32, 4, (const int64_t[]){1, 3, 8, 8}), zeros(ctx, TKC_FLOAT32, 4, (const int64_t[]){4, 2, 3, 3}), NULL, 1, 0),
             TKC_ESHAPE, "conv2d: x (1,3,8,8) has 3 channels, w (4,2,3,3) expects 2");
  tkc_ctx *other = tkc_ctx_new("INTERP");
  assert_non_null(other);
  EXPECT_ERR(tkc_add(T2(2, 3), zeros(other, TKC_FLOAT32, 2, (const int64_t[]){2, 3})), TKC_EINVAL, "add: the tensors belong to different ctxs");
  tkc_ctx_free(other);
  /* after all these failures the ctx still computes */
  float out[6];
  tkc_clear_error();
  assert_int_equal(tkc_copy_out(tkc_add(T2(2, 3), tkc_scalar(ctx, TKC_FLOAT32, 2)), out, sizeof out), TKC_OK);
  assert_true(out[0] == 2.0f && out[5] == 2.0f);
}

/* ---------------------------------------------------------------- 64-bit dtypes on WEBGPU */

static void test_webgpu_64bit(void **state) {
  (void)state;
  if (!tkc_device_available("WEBGPU")) {
    tkc_device_get("WEBGPU");
    print_message("  skipped: WEBGPU unavailable: %s\n", tkc_last_error());
    skip();
  }
  tkc_ctx *w = tkc_ctx_new("WEBGPU");
  assert_non_null(w);
  const int64_t s[1] = {3};
  EXPECT_ERR(tkc_tensor_new(w, TKC_FLOAT64, 1, s, NULL), TKC_EUNSUPPORTED,
             "float64 is not supported on WEBGPU (WGSL has no 64-bit types): cast to float32 or use the CPU device");
  EXPECT_ERR(tkc_full(w, TKC_INT64, 1, s, 1), TKC_EUNSUPPORTED, "full: int64 is not supported on WEBGPU (WGSL has no 64-bit types): cast to int32");
  EXPECT_ERR(tkc_arange(w, TKC_UINT64, 0, 3, 1), TKC_EUNSUPPORTED, "arange: uint64 is not supported on WEBGPU (WGSL has no 64-bit types): cast to uint32");
  tkc_tensor *i32 = tkc_full(w, TKC_INT32, 1, s, 1), *u32 = tkc_full(w, TKC_UINT32, 1, s, 1);
  assert_non_null(i32);
  assert_non_null(u32);
  EXPECT_ERR(tkc_cast(i32, TKC_FLOAT64), TKC_EUNSUPPORTED, "cast: float64 is not supported on WEBGPU (WGSL has no 64-bit types): cast to float32 or use the CPU device");
  EXPECT_ERR(tkc_cast(i32, TKC_INT64), TKC_EUNSUPPORTED, "cast: int64 is not supported on WEBGPU");
  EXPECT_ERR(tkc_add(i32, u32), TKC_EUNSUPPORTED, "add: int64 is not supported on WEBGPU"); /* they promote to int64 */
  /* a true division promotes int32 and uint32 straight to float32: no int64 on the way */
  float q[3];
  tkc_tensor *seven = tkc_full(w, TKC_UINT32, 1, s, 7);
  assert_int_equal(tkc_copy_out(tkc_div(seven, tkc_full(w, TKC_INT32, 1, s, -2)), q, sizeof q), TKC_OK);
  assert_true(q[0] == -3.5f && q[2] == -3.5f);
  /* the ctx still works */
  int32_t out[3];
  tkc_clear_error();
  assert_int_equal(tkc_copy_out(tkc_add(i32, i32), out, sizeof out), TKC_OK);
  assert_int_equal(out[2], 2);
  tkc_ctx_free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_broadcast),         cmocka_unit_test(test_matmul),      cmocka_unit_test(test_axes),
      cmocka_unit_test(test_movement),          cmocka_unit_test(test_dtypes),      cmocka_unit_test(test_creation_and_misc),
      cmocka_unit_test(test_webgpu_64bit),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
