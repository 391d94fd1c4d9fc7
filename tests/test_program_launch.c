/* test_program_launch.c — tkc_program_launch refuses buffers smaller than the kernel indexes
 * (issue 16: INTERP read past the heap block, the other devices silently), on every device, from
 * the range analysis of the kernel's ungated indices; gated indices and indices that depend on a
 * variable or on loaded data are not held against the buffers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include "kernel_util.h"

static const char *const devs[] = {"CPU", "LLVM", "WEBGPU", "CUDA", "INTERP"};

/* out[i] = in[2 i + 1] for i < 8: in needs 16 elements, out 8 */
static tkc_uop *strided_kernel(tkc_graph *g) {
  tkc_uop *out = k_buf(g, 0, TKC_FLOAT32), *in = k_buf(g, 1, TKC_FLOAT32), *r = k_range(g, 8, 0);
  tkc_uop *at = k_add(g, k_mul(g, r, k_int(g, 2)), k_int(g, 1));
  return k_sink1(g, k_store(g, out, r, k_load(g, in, at)));
}

static tkc_status launch_with(tkc_device *d, tkc_program *p, size_t nout, size_t nin, float *got) {
  tkc_buffer *b[2] = {tkc_buffer_new(d, TKC_FLOAT32, nout), tkc_buffer_new(d, TKC_FLOAT32, nin)};
  float in[32];
  for (int i = 0; i < 32; i++) in[i] = (float)i;
  tkc_status st = b[0] && b[1] ? tkc_buffer_copyin(b[1], in, nin * sizeof(float)) : tkc_last_status();
  if (!st) st = tkc_program_launch(p, b, 2, NULL, 0);
  if (!st && got) st = tkc_buffer_copyout(b[0], got, nout * sizeof(float));
  tkc_buffer_free(b[0]);
  tkc_buffer_free(b[1]);
  return st;
}

static void test_small_buffers_refused(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof devs / sizeof devs[0]; k++) {
    if (!tkc_device_available(devs[k])) {
      printf("# skip %s: not available here\n", devs[k]);
      continue;
    }
    tkc_device *d = tkc_device_get(devs[k]);
    tkc_graph *g = tkc_graph_new();
    tkc_program *p = tkc_program_new(d, g, strided_kernel(g), "strided");
    assert_non_null(p);
    float got[8];
    assert_int_equal(launch_with(d, p, 8, 16, got), TKC_OK); /* exactly enough */
    for (int i = 0; i < 8; i++) assert_true(got[i] == (float)(2 * i + 1));
    assert_int_equal(launch_with(d, p, 8, 15, NULL), TKC_EINVAL); /* the input one short */
    assert_non_null(strstr(tkc_last_error(), "buffer 1 holds 15 elements, the kernel indexes 16"));
    assert_int_equal(launch_with(d, p, 7, 16, NULL), TKC_EINVAL); /* the output one short */
    assert_non_null(strstr(tkc_last_error(), "buffer 0 holds 7 elements"));
    assert_int_equal(launch_with(d, p, 1, 1, NULL), TKC_EINVAL);
    assert_int_equal(launch_with(d, p, 20, 32, NULL), TKC_OK); /* larger is fine */
    tkc_program_free(p);
    tkc_graph_free(g);
  }
}

/* a gated read reaches past the buffer only where its gate is off: not held against it */
static void test_gated_reads_allowed(void **state) {
  (void)state;
  tkc_device *d = tkc_device_get("INTERP");
  tkc_graph *g = tkc_graph_new();
  tkc_uop *out = k_buf(g, 0, TKC_FLOAT32), *in = k_buf(g, 1, TKC_FLOAT32), *r = k_range(g, 8, 0);
  tkc_uop *gate = tkc_uop_alu2(g, TKC_OP_CMPLT, r, k_int(g, 4));
  tkc_uop *ld = k_op(g, TKC_OP_LOAD, dt_(TKC_FLOAT32), 1, k_index_gated(g, in, r, gate), NULL, NULL); /* 0 where off */
  tkc_program *p = tkc_program_new(d, g, k_sink1(g, k_store(g, out, r, ld)), "gated");
  assert_non_null(p);
  float got[8];
  assert_int_equal(launch_with(d, p, 8, 4, got), TKC_OK);
  for (int i = 0; i < 8; i++) assert_true(got[i] == (i < 4 ? (float)i : 0.0f));
  tkc_program_free(p);
  tkc_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_small_buffers_refused), cmocka_unit_test(test_gated_reads_allowed)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
