/* bench_launch: the host cost of launching many small kernels, as a replayed tkc_jit step pays it.
 * The step is KERNELS elementwise kernels (x = x * 0.999 + 0.001, each realized on its own) on a
 * vector of n floats; n = 524288 (32768 iterations of 16-wide vectors) is at TKC_CPU_PARALLEL_MIN_WORK, so every kernel is split
 * across the host threads, and n = 4096 runs each on one thread (the control: no thread is used).
 *   step_ms    the best replay of the captured step (warm-up replays first)
 *   median_ms  the median replay
 *   kernel_us  step_ms / kernels: what one small launch costs, kernel included
 * One JSON object per line:
 *   build/bench_launch [device ...] [-n replays]   (default devices: CPU LLVM; default 200 replays) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tkc.h"

enum { KERNELS = 50 };

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static tkc_status step(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)nin, (void)nout, (void)user;
  tkc_scope_begin(ctx);
  tkc_tensor *x = in[0];
  tkc_status st = TKC_OK;
  for (int k = 0; k < KERNELS && !st; k++) {
    x = tkc_add(tkc_mul(x, tkc_scalar(ctx, TKC_FLOAT32, 0.999)), tkc_scalar(ctx, TKC_FLOAT32, 0.001));
    st = x ? tkc_realize(x) : tkc_last_status(); /* one kernel each */
  }
  if (!st) tkc_keep(x);
  tkc_scope_end(ctx);
  out[0] = st ? NULL : x;
  return st;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int run(const char *dev, int64_t n, int replays) {
  tkc_ctx *ctx = tkc_ctx_new(dev);
  if (!ctx) return printf("{\"impl\": \"tkc\", \"device\": \"%s\", \"error\": \"unavailable\"}\n", dev), 0;
  tkc_jit *j = tkc_jit_new(ctx, step, NULL);
  float *host = malloc((size_t)n * sizeof *host), *res = malloc((size_t)n * sizeof *res);
  double *times = malloc((size_t)replays * sizeof *times);
  if (!j || !host || !res || !times) return fprintf(stderr, "bench_launch: %s\n", tkc_last_error()), 1;
  for (int64_t i = 0; i < n; i++) host[i] = (float)(i % 97) * 0.01f;
  tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 1, &n, host);
  int warm = 10;
  for (int r = -warm - 1; r < replays; r++) { /* r == -warm-1: the capture */
    tkc_tensor *y = NULL;
    double t0 = now_ms();
    tkc_status st = tkc_jit_run(j, &x, 1, &y, 1);
    if (!st) st = tkc_copy_out(y, res, (size_t)n * sizeof *res); /* waits for the step */
    double t = now_ms() - t0;
    if (st) return fprintf(stderr, "bench_launch: %s\n", tkc_last_error()), 1;
    if (r >= 0) times[r] = t;
    tkc_tensor_free(y);
  }
  qsort(times, (size_t)replays, sizeof *times, cmp_double);
  printf("{\"impl\": \"tkc\", \"device\": \"%s\", \"workload\": \"launch_%dx_axpb_%lld\", \"step_ms\": %.4f, "
         "\"median_ms\": %.4f, \"kernel_us\": %.2f, \"kernels\": %d, \"replays\": %d, \"x1\": %.5f}\n",
         tkc_ctx_device(ctx), KERNELS, (long long)n, times[0], times[replays / 2], times[0] * 1e3 / KERNELS,
         tkc_jit_kernels(j), replays, res[1]);
  fflush(stdout);
  free(host), free(res), free(times);
  tkc_jit_free(j);
  tkc_ctx_free(ctx);
  return 0;
}

int main(int argc, char **argv) {
  const char *devs[8];
  int ndev = 0, replays = 200;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-n") && i + 1 < argc) replays = atoi(argv[++i]);
    else if (ndev < 8) devs[ndev++] = argv[i];
  }
  if (replays < 1) replays = 1;
  if (!ndev) devs[ndev++] = "CPU", devs[ndev++] = "LLVM";
  int rc = 0;
  for (int d = 0; d < ndev; d++) rc |= run(devs[d], 524288, replays) | run(devs[d], 4096, replays);
  return rc;
}
