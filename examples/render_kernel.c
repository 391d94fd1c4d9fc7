/* render_kernel: build one kernel by hand as UOps, print its C source, run it, print the result.
 *
 * The kernel computes out[i] = sum_k a[i*4+k] * 2 for a 3x4 matrix a: one loop over rows,
 * a reduce loop with an accumulator inside it. */
#include <stdio.h>
#include "tkc/runtime.h"

static tkc_uop *op2(tkc_graph *g, tkc_op op, tkc_dt dt, tkc_uop *a, tkc_uop *b) {
  tkc_uop *s[2] = {a, b};
  return tkc_uop_new(g, op, dt, 2, s, tkc_arg_none());
}

int main(void) {
  const char *device = tkc_device_available("CPU") ? "CPU" : "INTERP";
  tkc_dt f32 = tkc_dt_of(TKC_FLOAT32), i32 = tkc_dt_of(TKC_INT32), void_dt = tkc_dt_of(TKC_VOID);
  tkc_dt pf32 = tkc_dt_ptr(f32, TKC_SPACE_GLOBAL, -1);
  tkc_graph *g = tkc_graph_new();
  if (!g) return 1;

  tkc_uop *out = tkc_uop_new(g, TKC_OP_DEFINE_GLOBAL, pf32, 0, NULL, tkc_arg_int(0));
  tkc_uop *a = tkc_uop_new(g, TKC_OP_DEFINE_GLOBAL, pf32, 0, NULL, tkc_arg_int(1));
  tkc_uop *zero = tkc_uop_const_int(g, i32, 0), *four = tkc_uop_const_int(g, i32, 4);
  tkc_uop *row = tkc_uop_range(g, zero, tkc_uop_const_int(g, i32, 3), 0);
  tkc_uop *k = tkc_uop_range(g, zero, four, 1);
  tkc_uop *acc_src[2] = {tkc_uop_const_float(g, f32, 0.0), k};
  tkc_uop *acc = tkc_uop_new(g, TKC_OP_DEFINE_ACC, f32, 2, acc_src, tkc_arg_int(0));
  tkc_uop *idx = op2(g, TKC_OP_INDEX, pf32, a, tkc_uop_alu2(g, TKC_OP_ADD, tkc_uop_alu2(g, TKC_OP_MUL, row, four), k));
  tkc_uop *x = tkc_uop_new(g, TKC_OP_LOAD, f32, 1, &idx, tkc_arg_none());
  tkc_uop *sum = tkc_uop_alu2(g, TKC_OP_ADD, acc, tkc_uop_alu2(g, TKC_OP_MUL, x, tkc_uop_const_float(g, f32, 2.0)));
  tkc_uop *upd = op2(g, TKC_OP_ASSIGN, f32, acc, sum);
  tkc_uop *store = op2(g, TKC_OP_STORE, void_dt, op2(g, TKC_OP_INDEX, pf32, out, row), upd);
  tkc_uop *sink = tkc_uop_sink(g, 1, &store);

  tkc_device *dev = tkc_device_get(device);
  tkc_program *p = dev ? tkc_program_new(dev, g, sink, "rowsum2") : NULL;
  if (!p) {
    fprintf(stderr, "error: %s\n", tkc_last_error());
    tkc_graph_free(g);
    return 1;
  }
  if (*tkc_program_source(p)) printf("--- C source for %s ---\n%s\n", device, tkc_program_source(p));

  float host_a[12], host_out[3];
  for (int i = 0; i < 12; i++) host_a[i] = (float)i;
  tkc_buffer *bufs[2] = {tkc_buffer_new(dev, TKC_FLOAT32, 3), tkc_buffer_new(dev, TKC_FLOAT32, 12)};
  int rc = 1;
  if (bufs[0] && bufs[1] && !tkc_buffer_copyin(bufs[1], host_a, sizeof host_a) && !tkc_program_launch(p, bufs, 2, NULL, 0) &&
      !tkc_buffer_copyout(bufs[0], host_out, sizeof host_out)) {
    printf("--- result on %s ---\n", device);
    for (int i = 0; i < 3; i++) printf("out[%d] = %g   (expected %g)\n", i, host_out[i], 2.0 * (4 * i * 4 + 6));
    rc = 0;
  } else {
    fprintf(stderr, "error: %s\n", tkc_last_error());
  }
  tkc_buffer_free(bufs[0]);
  tkc_buffer_free(bufs[1]);
  tkc_program_free(p);
  tkc_graph_free(g);
  return rc;
}
