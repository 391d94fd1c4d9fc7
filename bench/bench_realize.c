/* bench_realize: the host cost of realizing a graph whose kernels are all built already (the kernel
 * cache's hit path: schedule, kernel keys, cache look-ups, launches of tiny kernels). Each realize
 * builds the same lazy graph anew (as a training step or an inference loop does) and realizes its
 * KERNELS outputs at once: half elementwise (exp(x * c_k)), half reductions (sum(x * c_k, axis 1)),
 * each constant different so every kernel is a different AST. The first realize builds them (not
 * timed); the next ones must build none.
 *   us_per_realize  wall time of one realize, graph construction included
 *   us_per_kernel   us_per_realize / KERNELS
 * One JSON object per line:  build/bench_realize [device ...] [-n realizes]  (default CPU, 1000) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tkc.h"

enum { KERNELS = 20 };

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* one realize of the KERNELS-kernel graph over x (16x16) */
static tkc_status realize_once(tkc_ctx *ctx, tkc_tensor *x) {
  tkc_tensor *outs[KERNELS];
  tkc_status st = tkc_scope_begin(ctx);
  if (st) return st;
  int axis = 1;
  for (int k = 0; k < KERNELS; k++) {
    tkc_tensor *scaled = tkc_mul(x, tkc_scalar(ctx, TKC_FLOAT32, 1.0 + 0.125 * k));
    outs[k] = k % 2 ? tkc_sum(scaled, 1, &axis, 0) : tkc_exp(scaled);
    if (!outs[k]) st = tkc_last_status();
  }
  if (!st) st = tkc_realize_all(KERNELS, outs);
  tkc_scope_end(ctx);
  return st;
}

static int bench(const char *device, int n) {
  tkc_ctx *ctx = tkc_ctx_new(device);
  if (!ctx) {
    printf("{\"bench\":\"realize\",\"device\":\"%s\",\"skipped\":\"%s\"}\n", device, tkc_last_error());
    return 0;
  }
  const int64_t shape[2] = {16, 16};
  tkc_tensor *x = tkc_full(ctx, TKC_FLOAT32, 2, shape, 0.5);
  tkc_stats s0, s1;
  tkc_status st = x ? tkc_realize(x) : tkc_last_status();
  if (!st) st = realize_once(ctx, x); /* builds the kernels */
  if (!st) st = tkc_ctx_stats(ctx, &s0);
  double t0 = now_s();
  for (int i = 0; i < n && !st; i++) st = realize_once(ctx, x);
  double t = now_s() - t0;
  if (!st) st = tkc_ctx_stats(ctx, &s1);
  if (st) {
    fprintf(stderr, "bench_realize %s: %s\n", device, tkc_last_error());
    tkc_ctx_free(ctx);
    return 1;
  }
  long long rebuilt = (long long)(s1.kernels_built - s0.kernels_built);
  printf("{\"bench\":\"realize\",\"device\":\"%s\",\"kernels\":%d,\"realizes\":%d,\"kernels_rebuilt\":%lld,\"us_per_realize\":%.2f,"
         "\"us_per_kernel\":%.2f}\n",
         device, KERNELS, n, rebuilt, t / n * 1e6, t / n / KERNELS * 1e6);
  tkc_ctx_free(ctx);
  return rebuilt != 0;
}

int main(int argc, char **argv) {
  int n = 1000, rc = 0, ndev = 0;
  const char *devs[16];
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-n") && i + 1 < argc) n = atoi(argv[++i]);
    else if (ndev < 16) devs[ndev++] = argv[i];
  }
  if (!ndev) devs[ndev++] = "CPU";
  for (int i = 0; i < ndev; i++) rc |= bench(devs[i], n > 0 ? n : 1);
  return rc;
}
