/* test_index64.c — kernels whose indices pass INT32_MAX index in int64 (issue 16), on every device
 * that can hold the data: plain broadcasting to 2^31 + 65536 elements (no dim past 2^31), a sum
 * over 2^31 + 64 expanded elements, and a view that starts 2^31 elements into a buffer. WGSL has no
 * 64-bit integers: such kernels are refused there with a clear error, never run. Small kernels keep
 * int32 indices; sizes are overflow-checked up to 2^63 - 1 bytes. (2-4 GB of host memory per case.) */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tkc.h"
#include "tkc/runtime.h"

static const char *const HOSTS[] = {"CPU", "LLVM", "INTERP"};

/* (65536, 1) + (1, 32769) uint8: 2^31 + 65536 outputs, each checked at a stride and at the end */
static void broadcast_add(const char *dev) {
  tkc_ctx *ctx = tkc_ctx_new(dev);
  assert_non_null(ctx);
  uint8_t *a = malloc(65536), b[32769];
  for (int i = 0; i < 65536; i++) a[i] = (uint8_t)(i * 7 + 1);
  for (int i = 0; i < 32769; i++) b[i] = (uint8_t)(i * 3);
  tkc_tensor *A = tkc_tensor_new(ctx, TKC_UINT8, 2, (const int64_t[]){65536, 1}, a);
  tkc_tensor *B = tkc_tensor_new(ctx, TKC_UINT8, 2, (const int64_t[]){1, 32769}, b);
  size_t n = (size_t)65536 * 32769;
  uint8_t *out = malloc(n);
  assert_non_null(out);
  tkc_status st = tkc_copy_out(tkc_add(A, B), out, n);
  if (st) fail_msg("%s: %s", dev, tkc_last_error());
  for (size_t i = 0; i < n; i += 65521)
    assert_int_equal(out[i], (uint8_t)(a[i / 32769] + b[i % 32769]));
  for (size_t i = n - 40000; i < n; i++) assert_int_equal(out[i], (uint8_t)(a[i / 32769] + b[i % 32769]));
  free(out);
  free(a);
  tkc_ctx_free(ctx);
}

static void test_broadcast_past_int32(void **state) {
  (void)state;
  for (int d = 0; d < 2; d++) /* INTERP: 2^31 interpreted iterations would take minutes */
    if (tkc_device_available(HOSTS[d])) broadcast_add(HOSTS[d]);
}

static void test_sum_past_int32(void **state) {
  (void)state;
  for (int d = 0; d < 2; d++) {
    if (!tkc_device_available(HOSTS[d])) continue;
    tkc_ctx *ctx = tkc_ctx_new(HOSTS[d]);
    tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT64, 1, (const int64_t[]){1}, (const double[]){1.0});
    tkc_tensor *s = tkc_sum(tkc_expand(x, 1, (const int64_t[]){(INT64_C(1) << 31) + 64}), 0, NULL, 0);
    double got = 0;
    tkc_status st = tkc_copy_out(s, &got, sizeof got);
    if (st) fail_msg("%s: %s", HOSTS[d], tkc_last_error());
    assert_true(got == 2147483712.0); /* once 0: a loop of -2147483584 iterations */
    tkc_ctx_free(ctx);
  }
}

/* a 64-element view 2^31 + 30000 elements into a realized buffer: 64 iterations whose offsets pass
 * INT32_MAX (the buffer: the broadcast above, realized) */
static void test_offset_past_int32(void **state) {
  (void)state;
  for (int d = 0; d < 2; d++) {
    if (!tkc_device_available(HOSTS[d])) continue;
    tkc_ctx *ctx = tkc_ctx_new(HOSTS[d]);
    uint8_t a[65536], b[32769];
    for (int i = 0; i < 65536; i++) a[i] = (uint8_t)(i * 5 + 2);
    for (int i = 0; i < 32769; i++) b[i] = (uint8_t)(i * 11);
    tkc_tensor *A = tkc_tensor_new(ctx, TKC_UINT8, 2, (const int64_t[]){65536, 1}, a);
    tkc_tensor *B = tkc_tensor_new(ctx, TKC_UINT8, 2, (const int64_t[]){1, 32769}, b);
    tkc_tensor *big = tkc_add(A, B);
    assert_int_equal(tkc_realize(big), TKC_OK);
    int64_t start = (INT64_C(1) << 31) + 30000;
    tkc_tensor *flat = tkc_reshape(big, 1, (const int64_t[]){-1});
    tkc_tensor *tail = tkc_add(tkc_shrink(flat, (const int64_t[]){start, start + 64}), tkc_scalar(ctx, TKC_UINT8, 1));
    assert_int_equal(tkc_kernel_count(tail), 1);
    uint8_t out[64];
    tkc_status st = tkc_copy_out(tail, out, sizeof out);
    if (st) fail_msg("%s: %s", HOSTS[d], tkc_last_error());
    for (int i = 0; i < 64; i++) {
      int64_t k = start + i;
      assert_int_equal(out[i], (uint8_t)(a[k / 32769] + b[k % 32769] + 1));
    }
    tkc_ctx_free(ctx);
  }
}

/* the same through a tensor of 2^31 + 64 elements made with tkc_tensor_new, on every host device */
static void test_big_tensor_new(void **state) {
  (void)state;
  size_t n = ((size_t)1 << 31) + 64;
  uint8_t *h = malloc(n);
  assert_non_null(h);
  memset(h, 7, n - 64);
  for (int i = 0; i < 64; i++) h[n - 64 + (size_t)i] = (uint8_t)(i * 3);
  for (int d = 0; d < 3; d++) {
    if (!tkc_device_available(HOSTS[d])) continue;
    tkc_ctx *ctx = tkc_ctx_new(HOSTS[d]);
    tkc_tensor *big = tkc_tensor_new(ctx, TKC_UINT8, 1, (const int64_t[]){(int64_t)n}, h);
    if (!big) fail_msg("%s: %s", HOSTS[d], tkc_last_error());
    tkc_tensor *tail = tkc_add(tkc_shrink(big, (const int64_t[]){(int64_t)n - 64, (int64_t)n}), tkc_scalar(ctx, TKC_UINT8, 1));
    uint8_t out[64];
    tkc_status st = tkc_copy_out(tail, out, sizeof out);
    if (st) fail_msg("%s: %s", HOSTS[d], tkc_last_error());
    for (int i = 0; i < 64; i++) assert_int_equal(out[i], (uint8_t)(i * 3 + 1));
    tkc_ctx_free(ctx);
  }
  free(h);
}

/* sizes at the limits: element counts and byte sizes up to 2^63 - 1 are accepted (lazily), one more is
 * TKC_ESHAPE naming the op; products that once wrapped (to 4, to 0) are caught */
static void test_size_boundaries(void **state) {
  (void)state;
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  tkc_tensor *u8 = tkc_full(ctx, TKC_UINT8, 1, (const int64_t[]){1}, 1), *f32 = tkc_full(ctx, TKC_FLOAT32, 1, (const int64_t[]){1}, 1);
  static const int64_t ok_counts[] = {INT32_MAX, INT64_C(1) << 31, INT64_C(1) << 32, INT64_MAX};
  for (int i = 0; i < 4; i++) {
    tkc_tensor *e = tkc_expand(u8, 1, &ok_counts[i]);
    if (!e) fail_msg("expand to %lld: %s", (long long)ok_counts[i], tkc_last_error());
    assert_int_equal(tkc_numel(e), ok_counts[i]);
  }
  assert_non_null(tkc_expand(f32, 1, (const int64_t[]){INT64_MAX / 4}));
  assert_null(tkc_expand(f32, 1, (const int64_t[]){INT64_MAX / 4 + 1})); /* bytes past 2^63 - 1 */
  assert_int_equal(tkc_last_status(), TKC_ESHAPE);
  assert_non_null(strstr(tkc_last_error(), "expand"));
  tkc_tensor *one3 = tkc_full(ctx, TKC_FLOAT32, 3, (const int64_t[]){1, 1, 1}, 1);
  assert_null(tkc_expand(one3, 3, (const int64_t[]){769546, 494770, 48448661})); /* once wrapped to 4 */
  assert_non_null(strstr(tkc_last_error(), "overflows 64 bits"));
  tkc_tensor *empty = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){0}, NULL);
  assert_null(tkc_reshape(empty, 2, (const int64_t[]){INT64_C(1) << 32, INT64_C(1) << 32})); /* once wrapped to 0 */
  assert_non_null(strstr(tkc_last_error(), "reshape"));
  assert_non_null(tkc_reshape(empty, 3, (const int64_t[]){INT64_C(1) << 32, INT64_C(1) << 32, 0})); /* really empty */
  assert_null(tkc_pad(one3, (const int64_t[]){0, INT64_MAX, 0, 0, 0, 0}, 0));
  assert_non_null(strstr(tkc_last_error(), "pad"));
  assert_null(tkc_pad(one3, (const int64_t[]){INT64_MAX, INT64_MAX, 0, 0, 0, 0}, 2.5));
  assert_null(tkc_tensor_new(ctx, TKC_FLOAT64, 2, (const int64_t[]){INT64_C(1) << 31, INT64_C(1) << 31}, NULL));
  assert_int_equal(tkc_last_status(), TKC_ESHAPE);
  assert_null(tkc_full(ctx, TKC_INT16, 1, (const int64_t[]){INT64_MAX}, 0));
  assert_null(tkc_rand(ctx, TKC_FLOAT32, 1, (const int64_t[]){INT64_C(1) << 31}, 1)); /* 32-bit counters */
  tkc_ctx_free(ctx);
}

/* WGSL: refused when built, with the reason; small kernels still run */
static void test_wgsl_refuses(void **state) {
  (void)state;
  if (!tkc_device_available("WEBGPU")) {
    printf("skipped: no WEBGPU device here\n");
    skip();
  }
  tkc_ctx *ctx = tkc_ctx_new("WEBGPU");
  tkc_tensor *x = tkc_full(ctx, TKC_UINT8, 1, (const int64_t[]){1}, 2);
  tkc_tensor *big = tkc_add(tkc_expand(x, 1, (const int64_t[]){(INT64_C(1) << 31) + 64}), x);
  assert_int_equal(tkc_realize(big), TKC_EUNSUPPORTED);
  assert_non_null(strstr(tkc_last_error(), "64-bit indices"));
  uint8_t out[4];
  assert_int_equal(tkc_copy_out(tkc_add(tkc_expand(x, 1, (const int64_t[]){4}), x), out, sizeof out), TKC_OK);
  assert_int_equal(out[3], 4);
  tkc_ctx_free(ctx);
}

/* the rendered index dtype: int64 past INT32_MAX (C, LLVM, PTX), int32 below */
static void test_rendered_index_width(void **state) {
  (void)state;
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){1}, (const float[]){1});
  /* a buffer of 2^31 + 64 elements written (a sum of that many would be split into two reduces that
   * each index below 2^31) */
  tkc_tensor *big = tkc_contiguous(tkc_expand(x, 1, (const int64_t[]){(INT64_C(1) << 31) + 64}));
  tkc_tensor *small = tkc_sum(tkc_expand(x, 1, (const int64_t[]){INT32_MAX}), 0, NULL, 0);
  static const char *const want64[][2] = {{"C", "long long ridx"}, {"LLVM", "i64"}, {"PTX", ".s64"}};
  for (int r = 0; r < 3; r++) {
    char *s = tkc_kernels_source(big, want64[r][0]);
    if (!s) fail_msg("%s: %s", want64[r][0], tkc_last_error());
    if (!strstr(s, want64[r][1])) fail_msg("%s source has no %s:\n%s", want64[r][0], want64[r][1], s);
    tkc_free(s);
  }
  char *s = tkc_kernels_source(small, "C");
  assert_non_null(s);
  assert_null(strstr(s, "long long ridx"));
  tkc_free(s);
  tkc_ctx_free(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_broadcast_past_int32), cmocka_unit_test(test_sum_past_int32), cmocka_unit_test(test_offset_past_int32),
      cmocka_unit_test(test_big_tensor_new),       cmocka_unit_test(test_size_boundaries),
      cmocka_unit_test(test_wgsl_refuses),         cmocka_unit_test(test_rendered_index_width),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
