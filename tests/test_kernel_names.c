/* test_kernel_names.c — a kernel's name is only a name (issue 16): programs called after libc
 * functions (exit, sqrtf, malloc, memcpy, main), C keywords or the renderers' own identifiers (int,
 * data0) compile and compute the right values on every device, because the compiled symbol is
 * tkc's own ("tk_" + name). A kernel named exit used to return OK without its store happening. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include "kernel_util.h"

static const char *const names[] = {"exit", "sqrtf", "malloc", "memcpy", "main", "abort", "int", "float", "data0", "tkc_core_", "gidx0", "kernel"};

/* out[i] = sqrt(in[i]) * 2 + i: a sqrt, so the C kernel calls sqrtf (itself, were it so named) */
static tkc_uop *sqrt_kernel(tkc_graph *g, int n) {
  tkc_uop *out = k_buf(g, 0, TKC_FLOAT32), *in = k_buf(g, 1, TKC_FLOAT32), *r = k_range(g, n, 0);
  tkc_uop *v = k_mul(g, tkc_uop_alu1(g, TKC_OP_SQRT, k_load(g, in, r)), tkc_uop_const_float(g, dt_(TKC_FLOAT32), 2));
  v = k_add(g, v, tkc_uop_cast(g, r, dt_(TKC_FLOAT32)));
  return k_sink1(g, k_store(g, out, r, v));
}

static void test_libc_and_keyword_names(void **state) {
  (void)state;
  const char *devs[] = {"CPU", "LLVM", "WEBGPU", "CUDA", "INTERP"};
  enum { N = 37 };
  for (size_t d = 0; d < sizeof devs / sizeof devs[0]; d++) {
    if (!tkc_device_available(devs[d])) {
      printf("# skip %s: not available here\n", devs[d]);
      continue;
    }
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
      float in[N], out[N];
      for (int i = 0; i < N; i++) in[i] = (float)(i * i) / 4, out[i] = -1;
      tkc_graph *g = tkc_graph_new();
      tkc_dtype dts[2] = {TKC_FLOAT32, TKC_FLOAT32};
      size_t ns[2] = {N, N};
      void *host[2] = {out, in};
      tkc_status st = k_run_named(devs[d], names[k], g, sqrt_kernel(g, N), 2, dts, ns, host, NULL, 0);
      if (st) fail_msg("%s: a kernel named %s: %s", devs[d], names[k], tkc_last_error());
      for (int i = 0; i < N; i++)
        if (fabsf(out[i] - (sqrtf(in[i]) * 2 + (float)i)) > 1e-5f * (1 + (float)i))
          fail_msg("%s: kernel %s: out[%d] = %g, want %g", devs[d], names[k], i, out[i], sqrtf(in[i]) * 2 + (float)i);
      tkc_graph_free(g);
    }
  }
}

/* the name a program reports is the name it was given; names that are no identifier are refused */
static void test_names_reported_and_checked(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_device *d = tkc_device_get("INTERP");
  tkc_program *p = tkc_program_new(d, g, sqrt_kernel(g, 4), "exit");
  assert_non_null(p);
  assert_string_equal(tkc_program_name(p), "exit");
  tkc_program_free(p);
  if (tkc_device_available("CPU")) {
    tkc_device *c = tkc_device_get("CPU");
    p = tkc_program_new(c, g, sqrt_kernel(g, 4), "exit");
    assert_non_null(p);
    assert_string_equal(tkc_program_name(p), "exit");
    assert_non_null(strstr(tkc_program_source(p), "void tk_exit("));
    tkc_program_free(p);
    assert_null(tkc_program_new(c, g, sqrt_kernel(g, 4), "no spaces"));
    assert_int_equal(tkc_last_status(), TKC_EINVAL);
    assert_non_null(strstr(tkc_last_error(), "identifier"));
  }
  tkc_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_libc_and_keyword_names), cmocka_unit_test(test_names_reported_and_checked)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
