/* test_cuda_fake_driver.c — the CUDA runtime's own logic against a fake driver
 * (tests/fake_cuda/fake_libcuda.c, loaded through TKC_LIBCUDA), so that it is tested where no GPU
 * is: device memory, copies, errors of each driver call with the right status and message, and
 * cleanup that keeps the first error (issue 16: a failing cuCtxSetCurrent was reported as "cannot
 * allocate 16 bytes"). What kernels compute is checked on a real GPU (test_cuda, gpu-check.sh). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel_util.h"
#include "tkc.h"

static void (*fake_fail)(const char *name);

static int setup(void **state) {
  (void)state;
  if (!tkc_device_available("CUDA")) {
    printf("# skip: the CUDA device is not built into this tkc or the fake driver did not load\n");
    return 0;
  }
  void *lib = dlopen(FAKE_LIBCUDA_PATH, RTLD_NOW | RTLD_NOLOAD);
  fake_fail = lib ? (void (*)(const char *))dlsym(lib, "fake_cuda_fail") : NULL;
  return 0;
}

#define NEED_FAKE()                                   \
  do {                                                \
    if (!fake_fail) {                                 \
      printf("# skip: no fake CUDA driver loaded\n"); \
      skip();                                         \
    }                                                 \
    fake_fail(NULL);                                  \
  } while (0)

static void test_memory_round_trip(void **state) {
  (void)state;
  NEED_FAKE();
  tkc_device *d = tkc_device_get("CUDA");
  assert_non_null(d);
  float in[5] = {1, 2, 3, 4, 5}, out[5] = {0};
  tkc_buffer *b = tkc_buffer_new(d, TKC_FLOAT32, 5);
  assert_non_null(b);
  assert_int_equal(tkc_buffer_copyin(b, in, sizeof in), TKC_OK);
  assert_int_equal(tkc_buffer_copyout(b, out, sizeof out), TKC_OK);
  assert_memory_equal(in, out, sizeof in);
  tkc_buffer *z = tkc_buffer_new(d, TKC_FLOAT32, 3); /* tkc_buffer_new zeroes */
  assert_non_null(z);
  assert_int_equal(tkc_buffer_copyout(z, out, 3 * sizeof(float)), TKC_OK);
  assert_true(out[0] == 0 && out[1] == 0 && out[2] == 0);
  tkc_buffer_free(b);
  tkc_buffer_free(z);
}

/* a lost context is reported as such (TKC_ERUNTIME naming cuCtxSetCurrent), not as out of memory */
static void test_context_failure_is_not_enomem(void **state) {
  (void)state;
  NEED_FAKE();
  tkc_device *d = tkc_device_get("CUDA");
  fake_fail("cuCtxSetCurrent");
  tkc_clear_error();
  assert_null(tkc_buffer_new(d, TKC_FLOAT32, 4));
  assert_int_equal(tkc_last_status(), TKC_ERUNTIME);
  assert_non_null(strstr(tkc_last_error(), "cuCtxSetCurrent"));
  fake_fail("cuMemAlloc_v2"); /* a refused allocation is ENOMEM, naming the call */
  assert_null(tkc_buffer_new_uninit(d, TKC_FLOAT32, 1 << 20));
  assert_int_equal(tkc_last_status(), TKC_ENOMEM);
  assert_non_null(strstr(tkc_last_error(), "cuMemAlloc"));
  fake_fail("cuMemcpyHtoD_v2");
  fake_fail(NULL);
  tkc_buffer *b = tkc_buffer_new_uninit(d, TKC_FLOAT32, 4);
  assert_non_null(b);
  fake_fail("cuMemcpyHtoD_v2");
  float x[4] = {0};
  assert_int_equal(tkc_buffer_copyin(b, x, sizeof x), TKC_ERUNTIME);
  assert_non_null(strstr(tkc_last_error(), "cuMemcpyHtoD"));
  fake_fail("cuMemcpyDtoH_v2");
  assert_int_equal(tkc_buffer_copyout(b, x, sizeof x), TKC_ERUNTIME);
  assert_non_null(strstr(tkc_last_error(), "cuMemcpyDtoH"));
  fake_fail(NULL);
  tkc_buffer_free(b);
}

static tkc_uop *copy_kernel(tkc_graph *g) {
  tkc_uop *out = k_buf(g, 0, TKC_FLOAT32), *in = k_buf(g, 1, TKC_FLOAT32), *r = k_range(g, 4, 0);
  return k_sink1(g, k_store(g, out, r, k_load(g, in, r)));
}

/* a failing launch keeps its error through the cleanup after it, even when the cleanup's own
 * driver calls fail too */
static void test_cleanup_keeps_the_first_error(void **state) {
  (void)state;
  NEED_FAKE();
  tkc_device *d = tkc_device_get("CUDA");
  tkc_graph *g = tkc_graph_new();
  tkc_program *p = tkc_program_new(d, g, copy_kernel(g), "copy");
  assert_non_null(p);
  tkc_buffer *bufs[2] = {tkc_buffer_new(d, TKC_FLOAT32, 4), tkc_buffer_new(d, TKC_FLOAT32, 4)};
  assert_non_null(bufs[0]);
  assert_non_null(bufs[1]);
  assert_int_equal(tkc_program_launch(p, bufs, 2, NULL, 0), TKC_OK);
  fake_fail("cuLaunchKernel");
  assert_int_equal(tkc_program_launch(p, bufs, 2, NULL, 0), TKC_ERUNTIME);
  assert_non_null(strstr(tkc_last_error(), "cuLaunchKernel"));
  fake_fail("cuCtxSetCurrent"); /* the cleanup cannot even enter the context */
  tkc_buffer_free(bufs[0]);
  tkc_buffer_free(bufs[1]);
  tkc_program_free(p);
  assert_int_equal(tkc_last_status(), TKC_ERUNTIME);
  assert_non_null(strstr(tkc_last_error(), "cuLaunchKernel"));
  fake_fail("cuCtxSynchronize"); /* a kernel that faults */
  fake_fail(NULL);
  p = tkc_program_new(d, g, copy_kernel(g), "copy");
  bufs[0] = tkc_buffer_new(d, TKC_FLOAT32, 4), bufs[1] = tkc_buffer_new(d, TKC_FLOAT32, 4);
  fake_fail("cuCtxSynchronize");
  assert_int_equal(tkc_program_launch(p, bufs, 2, NULL, 0), TKC_ERUNTIME);
  assert_non_null(strstr(tkc_last_error(), "failed"));
  fake_fail("cuModuleLoadDataEx"); /* a program rejected by the driver: a compile error */
  tkc_program *q = tkc_program_new(d, g, copy_kernel(g), "copy_again");
  assert_null(q);
  assert_int_equal(tkc_last_status(), TKC_ECOMPILE);
  assert_non_null(strstr(tkc_last_error(), "cuModuleLoadDataEx"));
  fake_fail(NULL);
  tkc_buffer_free(bufs[0]);
  tkc_buffer_free(bufs[1]);
  tkc_program_free(p);
  tkc_graph_free(g);
}

/* the tensor API runs on the fake device end to end (the values are not computed: not checked) */
static void test_tensor_api_runs(void **state) {
  (void)state;
  NEED_FAKE();
  tkc_ctx *ctx = tkc_ctx_new("CUDA");
  assert_non_null(ctx);
  float out[6];
  tkc_tensor *t = tkc_add(tkc_arange(ctx, TKC_FLOAT32, 0, 6, 1), tkc_scalar(ctx, TKC_FLOAT32, 1));
  assert_int_equal(tkc_copy_out(t, out, sizeof out), TKC_OK);
  fake_fail("cuCtxSetCurrent");
  tkc_tensor *u = tkc_mul(t, t);
  assert_int_not_equal(tkc_copy_out(u, out, sizeof out), TKC_OK);
  assert_non_null(strstr(tkc_last_error(), "cuCtxSetCurrent"));
  fake_fail(NULL);
  assert_int_equal(tkc_copy_out(u, out, sizeof out), TKC_OK); /* the ctx still works */
  tkc_ctx_free(ctx);
}

static int teardown(void **state) { /* freed buffers wait in the device's pool: give them back */
  (void)state;
  if (fake_fail) fake_fail(NULL), tkc_device_release_pool(tkc_device_get("CUDA"));
  return 0;
}

int main(void) {
  setenv("TKC_LIBCUDA", FAKE_LIBCUDA_PATH, 1); /* before tkc's first look at CUDA */
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_memory_round_trip), cmocka_unit_test(test_context_failure_is_not_enomem),
                                     cmocka_unit_test(test_cleanup_keeps_the_first_error), cmocka_unit_test(test_tensor_api_runs)};
  return cmocka_run_group_tests(tests, setup, teardown);
}
