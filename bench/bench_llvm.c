/* bench_llvm: the LLVM JIT device against the CPU device (C compiler + dlopen) on three hand-built
 * kernels — elementwise add of 16M floats, a row sum of a 4096x4096 matrix, a 256^3 matmul (written
 * as UOps like tests/test_kernels.c's matmul: three loops, one accumulator):
 *   compile_ms        time of tkc_program_new (rewrite + linearize + render + compile), median of 5
 *                     compiles of the same kernel under distinct names (the program cache never hits)
 *   compile_ms_first  the first of those (includes the device's one-time start-up)
 *   run_ms            median launch time over several launches after one warm-up; min_ms the fastest
 *   gflops, gbps      from the program's op / memory estimates and run_ms
 *   match             the output equals the other device's (max relative difference <= 1e-5)
 * One JSON object per line. A device that is unavailable gets one line saying so. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tkc/runtime.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static tkc_dt f32(void) { return tkc_dt_of(TKC_FLOAT32); }
static tkc_uop *i32c(tkc_graph *g, int64_t v) { return tkc_uop_const_int(g, tkc_dt_of(TKC_INT32), v); }
static tkc_uop *buf(tkc_graph *g, int n) {
  return tkc_uop_new(g, TKC_OP_DEFINE_GLOBAL, tkc_dt_ptr(f32(), TKC_SPACE_GLOBAL, -1), 0, NULL, tkc_arg_int(n));
}
static tkc_uop *range(tkc_graph *g, int64_t n, int axis) { return tkc_uop_range(g, i32c(g, 0), i32c(g, n), axis); }
static tkc_uop *index_(tkc_graph *g, tkc_uop *b, tkc_uop *i) {
  tkc_uop *s[2] = {b, i};
  return tkc_uop_new(g, TKC_OP_INDEX, b->dtype, 2, s, tkc_arg_none());
}
static tkc_uop *load(tkc_graph *g, tkc_uop *b, tkc_uop *i) {
  tkc_uop *x = index_(g, b, i);
  return tkc_uop_new(g, TKC_OP_LOAD, f32(), 1, &x, tkc_arg_none());
}
static tkc_uop *store(tkc_graph *g, tkc_uop *b, tkc_uop *i, tkc_uop *v) {
  tkc_uop *s[2] = {index_(g, b, i), v};
  tkc_uop *st = tkc_uop_new(g, TKC_OP_STORE, tkc_dt_of(TKC_VOID), 2, s, tkc_arg_none());
  return tkc_uop_sink(g, 1, &st);
}
static tkc_uop *add(tkc_graph *g, tkc_uop *a, tkc_uop *b) { return tkc_uop_alu2(g, TKC_OP_ADD, a, b); }
static tkc_uop *mul(tkc_graph *g, tkc_uop *a, tkc_uop *b) { return tkc_uop_alu2(g, TKC_OP_MUL, a, b); }
static tkc_uop *acc_of(tkc_graph *g, tkc_uop *r) {
  tkc_uop *s[2] = {tkc_uop_const_float(g, f32(), 0.0), r};
  return tkc_uop_new(g, TKC_OP_DEFINE_ACC, f32(), 2, s, tkc_arg_none());
}
static tkc_uop *assign(tkc_graph *g, tkc_uop *acc, tkc_uop *v) {
  tkc_uop *s[2] = {acc, v};
  return tkc_uop_new(g, TKC_OP_ASSIGN, f32(), 2, s, tkc_arg_none());
}

enum { ADD_N = 16 << 20, ROWS = 4096, MM = 256 };

/* out[i] = a[i] + b[i] */
static tkc_uop *k_add(tkc_graph *g) {
  tkc_uop *r = range(g, ADD_N, 0);
  return store(g, buf(g, 0), r, add(g, load(g, buf(g, 1), r), load(g, buf(g, 2), r)));
}
/* out[i] = sum_k a[i*ROWS + k] */
static tkc_uop *k_rowsum(tkc_graph *g) {
  tkc_uop *ri = range(g, ROWS, 0), *rk = range(g, ROWS, 1), *acc = acc_of(g, rk);
  tkc_uop *x = load(g, buf(g, 1), add(g, mul(g, ri, i32c(g, ROWS)), rk));
  return store(g, buf(g, 0), ri, assign(g, acc, add(g, acc, x)));
}
/* out[i*MM + j] = sum_k a[i*MM + k] * b[k*MM + j] */
static tkc_uop *k_matmul(tkc_graph *g) {
  tkc_uop *ri = range(g, MM, 0), *rj = range(g, MM, 1), *rk = range(g, MM, 2), *acc = acc_of(g, rk);
  tkc_uop *prod = mul(g, load(g, buf(g, 1), add(g, mul(g, ri, i32c(g, MM)), rk)), load(g, buf(g, 2), add(g, mul(g, rk, i32c(g, MM)), rj)));
  return store(g, buf(g, 0), add(g, mul(g, ri, i32c(g, MM)), rj), assign(g, acc, add(g, acc, prod)));
}

typedef struct kernel {
  const char *name;
  tkc_uop *(*build)(tkc_graph *);
  int nbufs;
  size_t n[3];
} kernel;

static const kernel kernels[] = {
    {"add_16M", k_add, 3, {ADD_N, ADD_N, ADD_N}},
    {"rowsum_4096x4096", k_rowsum, 2, {ROWS, (size_t)ROWS * ROWS, 0}},
    {"matmul_256", k_matmul, 3, {(size_t)MM * MM, (size_t)MM * MM, (size_t)MM * MM}},
};

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* benchmarks kernel k on device dev; out (k.n[0] floats) receives the result. 0 on success. */
static int bench(const kernel *k, const char *dev, float *const *host, float *out, const float *other) {
  tkc_device *d = tkc_device_get(dev);
  if (!d) {
    printf("{\"bench\":\"llvm\",\"kernel\":\"%s\",\"device\":\"%s\",\"unavailable\":true}\n", k->name, dev);
    return 0;
  }
  enum { NCOMPILE = 5 };
  double ct[NCOMPILE], first = 0;
  tkc_program *p = NULL;
  for (int i = 0; i < NCOMPILE; i++) {
    tkc_graph *g = tkc_graph_new();
    char name[64];
    snprintf(name, sizeof name, "%s_%s_%d", k->name, dev, i);
    double t0 = now_s();
    tkc_program *q = tkc_program_new(d, g, k->build(g), name);
    ct[i] = (now_s() - t0) * 1e3;
    tkc_graph_free(g);
    if (!q) {
      fprintf(stderr, "bench_llvm: %s on %s: %s\n", k->name, dev, tkc_last_error());
      tkc_program_free(p);
      return 1;
    }
    if (i == 0) first = ct[0];
    if (p) tkc_program_free(p);
    p = q;
  }
  qsort(ct, NCOMPILE, sizeof *ct, cmp_d);
  tkc_buffer *b[3] = {NULL, NULL, NULL};
  int rc = 0;
  for (int i = 0; i < k->nbufs && !rc; i++) {
    b[i] = tkc_buffer_new(d, TKC_FLOAT32, k->n[i]);
    if (!b[i] || tkc_buffer_copyin(b[i], host[i], k->n[i] * sizeof(float))) rc = 1;
  }
  enum { MAXRUN = 50 };
  double rt[MAXRUN];
  int nrun = 0;
  if (!rc) rc = tkc_program_launch(p, b, k->nbufs, NULL, 0) != TKC_OK; /* warm-up */
  double t_start = now_s();
  while (!rc && nrun < MAXRUN && (nrun < 5 || now_s() - t_start < 1.0)) {
    double t0 = now_s();
    rc = tkc_program_launch(p, b, k->nbufs, NULL, 0) != TKC_OK;
    rt[nrun++] = (now_s() - t0) * 1e3;
  }
  if (!rc) rc = tkc_buffer_copyout(b[0], out, k->n[0] * sizeof(float)) != TKC_OK;
  if (rc) fprintf(stderr, "bench_llvm: %s on %s: %s\n", k->name, dev, tkc_last_error());
  else {
    qsort(rt, (size_t)nrun, sizeof *rt, cmp_d);
    double med = rt[nrun / 2], s = med * 1e-3;
    int64_t ops = tkc_program_ops(p, NULL), mem = tkc_program_mem(p, NULL);
    printf("{\"bench\":\"llvm\",\"kernel\":\"%s\",\"device\":\"%s\",\"compile_ms\":%.2f,\"compile_ms_first\":%.2f,"
           "\"run_ms\":%.3f,\"min_ms\":%.3f,\"runs\":%d,\"gflops\":%.2f,\"gbps\":%.2f",
           k->name, dev, ct[NCOMPILE / 2], first, med, rt[0], nrun, (double)ops / s * 1e-9, (double)mem / s * 1e-9);
    if (other) {
      double worst = 0;
      for (size_t i = 0; i < k->n[0]; i++) {
        double e = fabs((double)out[i] - other[i]) / fmax(1.0, fabs((double)other[i]));
        if (!(e <= worst)) worst = e; /* NaN counts */
      }
      printf(",\"match\":%s", worst <= 1e-5 ? "true" : "false");
    }
    printf("}\n");
    fflush(stdout);
  }
  for (int i = 0; i < 3; i++) tkc_buffer_free(b[i]);
  tkc_program_free(p);
  return rc;
}

int main(void) {
  int rc = 0;
  unsigned seed = 12345;
  for (size_t ki = 0; ki < sizeof kernels / sizeof *kernels; ki++) {
    const kernel *k = &kernels[ki];
    float *host[3] = {NULL, NULL, NULL}, *res[2];
    for (int i = 0; i < k->nbufs; i++) {
      host[i] = calloc(k->n[i], sizeof(float));
      if (!host[i]) return 1;
      for (size_t j = 0; i > 0 && j < k->n[i]; j++) {
        seed = seed * 1103515245u + 12345u;
        host[i][j] = (float)((seed >> 8) & 0xffff) / 65536.0f - 0.5f;
      }
    }
    res[0] = calloc(k->n[0], sizeof(float));
    res[1] = calloc(k->n[0], sizeof(float));
    if (!res[0] || !res[1]) return 1;
    rc |= bench(k, "LLVM", host, res[0], NULL);
    rc |= bench(k, "CPU", host, res[1], tkc_device_available("LLVM") ? res[0] : NULL);
    for (int i = 0; i < 3; i++) free(host[i]);
    free(res[0]);
    free(res[1]);
  }
  return rc;
}
