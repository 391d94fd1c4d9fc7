/* bench_codegen: time to linearize + render typical kernels (us) and the C compiler's time per
 * kernel on the CPU device (ms). One JSON object per line. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "tkc/runtime.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static tkc_uop *op(tkc_graph *g, tkc_op o, tkc_dt dt, int n, tkc_uop *a, tkc_uop *b) {
  tkc_uop *s[2] = {a, b};
  return tkc_uop_new(g, o, dt, n, s, tkc_arg_none());
}

/* out[i] = a[i]*b[i] + c[i] over a 4-D shape flattened into one index (elementwise) */
static tkc_uop *elementwise(tkc_graph *g) {
  tkc_dt f32 = tkc_dt_of(TKC_FLOAT32), i32 = tkc_dt_of(TKC_INT32), p = tkc_dt_ptr(f32, TKC_SPACE_GLOBAL, -1);
  tkc_uop *buf[4], *r[4], *idx = tkc_uop_const_int(g, i32, 0);
  for (int i = 0; i < 4; i++) buf[i] = tkc_uop_new(g, TKC_OP_DEFINE_GLOBAL, p, 0, NULL, tkc_arg_int(i));
  const int dims[4] = {8, 16, 32, 64};
  for (int i = 0; i < 4; i++) {
    r[i] = tkc_uop_range(g, tkc_uop_const_int(g, i32, 0), tkc_uop_const_int(g, i32, dims[i]), i);
    idx = tkc_uop_alu2(g, TKC_OP_ADD, tkc_uop_alu2(g, TKC_OP_MUL, idx, tkc_uop_const_int(g, i32, dims[i])), r[i]);
  }
  tkc_uop *ld[3];
  for (int i = 0; i < 3; i++) ld[i] = op(g, TKC_OP_LOAD, f32, 1, op(g, TKC_OP_INDEX, p, 2, buf[i + 1], idx), NULL);
  tkc_uop *v = tkc_uop_alu2(g, TKC_OP_ADD, tkc_uop_alu2(g, TKC_OP_MUL, ld[0], ld[1]), ld[2]);
  tkc_uop *st = op(g, TKC_OP_STORE, tkc_dt_of(TKC_VOID), 2, op(g, TKC_OP_INDEX, p, 2, buf[0], idx), v);
  return tkc_uop_sink(g, 1, &st);
}

/* out[i] = sum_k a[i*256+k] * b[k] (a matrix-vector reduce) */
static tkc_uop *reduce(tkc_graph *g) {
  tkc_dt f32 = tkc_dt_of(TKC_FLOAT32), i32 = tkc_dt_of(TKC_INT32), p = tkc_dt_ptr(f32, TKC_SPACE_GLOBAL, -1);
  tkc_uop *out = tkc_uop_new(g, TKC_OP_DEFINE_GLOBAL, p, 0, NULL, tkc_arg_int(0));
  tkc_uop *a = tkc_uop_new(g, TKC_OP_DEFINE_GLOBAL, p, 0, NULL, tkc_arg_int(1));
  tkc_uop *b = tkc_uop_new(g, TKC_OP_DEFINE_GLOBAL, p, 0, NULL, tkc_arg_int(2));
  tkc_uop *zero = tkc_uop_const_int(g, i32, 0), *n = tkc_uop_const_int(g, i32, 256);
  tkc_uop *ri = tkc_uop_range(g, zero, n, 0), *rk = tkc_uop_range(g, zero, n, 1);
  tkc_uop *acc = op(g, TKC_OP_DEFINE_ACC, f32, 2, tkc_uop_const_float(g, f32, 0.0), rk);
  tkc_uop *x = op(g, TKC_OP_LOAD, f32, 1, op(g, TKC_OP_INDEX, p, 2, a, tkc_uop_alu2(g, TKC_OP_ADD, tkc_uop_alu2(g, TKC_OP_MUL, ri, n), rk)), NULL);
  tkc_uop *y = op(g, TKC_OP_LOAD, f32, 1, op(g, TKC_OP_INDEX, p, 2, b, rk), NULL);
  tkc_uop *upd = op(g, TKC_OP_ASSIGN, f32, 2, acc, tkc_uop_alu2(g, TKC_OP_ADD, acc, tkc_uop_alu2(g, TKC_OP_MUL, x, y)));
  tkc_uop *st = op(g, TKC_OP_STORE, tkc_dt_of(TKC_VOID), 2, op(g, TKC_OP_INDEX, p, 2, out, ri), upd);
  return tkc_uop_sink(g, 1, &st);
}

static int bench_render(const char *name, tkc_uop *(*build)(tkc_graph *)) {
  const tkc_renderer *r = tkc_renderer_get("C");
  if (!r) return 1;
  int iters = 0;
  double t0 = now_s(), t = 0;
  size_t nuops = 0, srclen = 0;
  while ((t = now_s() - t0) < 0.5 || iters < 10) {
    tkc_graph *g = tkc_graph_new();
    tkc_uop *sink = build(g);
    size_t n;
    tkc_uop **l = tkc_linearize(g, sink, &n);
    char *src = l ? tkc_render(r, name, l, n) : NULL;
    if (!src) { fprintf(stderr, "%s\n", tkc_last_error()); return 1; }
    nuops = n;
    srclen = strlen(src);
    tkc_free(src);
    tkc_free(l);
    tkc_graph_free(g);
    iters++;
  }
  printf("{\"bench\":\"codegen\",\"case\":\"%s\",\"what\":\"build+linearize+render\",\"uops\":%zu,\"source_bytes\":%zu,\"us_per_kernel\":%.2f,\"iters\":%d}\n",
         name, nuops, srclen, t / iters * 1e6, iters);
  return 0;
}

static int bench_compile(const char *name, tkc_uop *(*build)(tkc_graph *)) {
  tkc_device *d = tkc_device_get("CPU");
  if (!d) {
    printf("{\"bench\":\"codegen\",\"case\":\"%s\",\"what\":\"cpu_compile\",\"skipped\":\"%s\"}\n", name, tkc_last_error());
    return 0;
  }
  const int iters = 5;
  double total = 0;
  for (int i = 0; i < iters; i++) {
    char kname[64];
    snprintf(kname, sizeof kname, "%s_%d", name, i); /* a new name each time: no cache hit */
    tkc_graph *g = tkc_graph_new();
    tkc_uop *sink = build(g);
    double t0 = now_s();
    tkc_program *p = tkc_program_new(d, g, sink, kname);
    total += now_s() - t0;
    if (!p) { fprintf(stderr, "%s\n", tkc_last_error()); return 1; }
    tkc_program_free(p);
    tkc_graph_free(g);
  }
  printf("{\"bench\":\"codegen\",\"case\":\"%s\",\"what\":\"cpu_program_new_incl_cc\",\"ms_per_kernel\":%.2f,\"iters\":%d}\n", name, total / iters * 1e3, iters);
  return 0;
}

int main(void) {
  int rc = bench_render("elementwise_4d", elementwise) | bench_render("reduce_256x256", reduce);
  rc |= bench_compile("elementwise_4d", elementwise) | bench_compile("reduce_256x256", reduce);
  return rc;
}
