/* bench_symbolic: the attention layer over a growing context (examples/kv_attention.h) for context
 * lengths 1..256, one step per length, three ways on the same device in the same run:
 *
 *   vars+jit   the position a variable, the step captured once and replayed (what the example does)
 *   vars       the position a variable, the step's graph built and realized every step (kernels come
 *              from the kernel cache: scheduling, no compiling)
 *   concrete   plain lengths: every length is a new shape, so its kernels are built (compiled) anew;
 *              run for the first N lengths only (the rest would take minutes)
 *
 * and the same step as a plain C loop (double precision) as the peer. Prints one JSON object per
 * way: steps, ms per step (mean over the steps; the capture step apart), kernels built.
 *
 *   build/bench_symbolic [device] [concrete lengths, default 24] */
#include <stdio.h>
#include <time.h>
#include "../examples/kv_attention.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int64_t built(tkc_ctx *ctx) {
  tkc_stats s;
  tkc_ctx_stats(ctx, &s);
  return s.kernels_built;
}

/* steps 0..steps-1 one way; returns the seconds of steps 1.. (step 0 in *first_s) */
static int jit_kernels; /* launches per step of the vars+jit way */

static double run(const char *dev, const char *way, int steps, double *first_s, int64_t *kernels) {
  tkc_ctx *ctx = tkc_ctx_new(dev);
  if (!ctx) return -1;
  static kv_model m;
  kv_weights(&m, 7);
  kv_bind_tensors(&m, ctx);
  int jit_on = !strcmp(way, "vars+jit"), vars = strcmp(way, "concrete") != 0;
  m.pos = vars ? tkc_dim_var(ctx, "pos", 0, KV_TMAX - 1) : 0;
  tkc_jit *jit = jit_on ? tkc_jit_new(ctx, kv_step, &m) : NULL;
  tkc_tensor *kc = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){KV_TMAX, KV_E}, NULL);
  tkc_tensor *vc = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){KV_TMAX, KV_E}, NULL);
  double rest = 0;
  for (int t = 0; t < steps; t++) {
    float x[KV_E], y[KV_E];
    kv_input(t, x);
    tkc_tensor *xt = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){1, KV_E}, x), *in[3] = {xt, kc, vc}, *out[3] = {0};
    double t0 = now_s();
    tkc_status st = vars ? tkc_dim_bind(ctx, m.pos, t) : TKC_OK;
    m.fixed_pos = t;
    if (!st) st = jit ? tkc_jit_run(jit, in, 3, out, 3) : kv_step(ctx, in, 3, out, 3, &m);
    for (int i = 1; i < 3 && !st && !jit; i++) st = tkc_realize(out[i]);
    if (!st) st = tkc_copy_out(out[0], y, sizeof y);
    double dt = now_s() - t0;
    if (st) {
      fprintf(stderr, "bench_symbolic: %s, step %d: %s\n", way, t, tkc_last_error());
      return -1;
    }
    if (t == 0) *first_s = dt;
    else rest += dt;
    tkc_tensor_free(xt), tkc_tensor_free(kc), tkc_tensor_free(vc), tkc_tensor_free(out[0]);
    kc = out[1], vc = out[2];
  }
  *kernels = built(ctx);
  if (jit) jit_kernels = tkc_jit_kernels(jit);
  tkc_tensor_free(kc), tkc_tensor_free(vc);
  kv_free_tensors(&m);
  tkc_jit_free(jit);
  tkc_ctx_free(ctx);
  return rest;
}

int main(int argc, char **argv) {
  const char *dev = argc > 1 ? argv[1] : "CPU";
  int nconcrete = argc > 2 ? atoi(argv[2]) : 24;
  if (nconcrete < 2 || nconcrete > KV_TMAX) nconcrete = 24;
  const char *ways[3] = {"vars+jit", "vars", "concrete"};
  for (int w = 0; w < 3; w++) {
    int steps = w == 2 ? nconcrete : KV_TMAX;
    double first = 0;
    int64_t kernels = 0;
    double rest = run(dev, ways[w], steps, &first, &kernels);
    if (rest < 0) {
      printf("{\"impl\": \"tkc-%s\", \"device\": \"%s\", \"workload\": \"kv_attention\", \"way\": \"%s\", \"error\": \"%s\"}\n", tkc_version(), dev, ways[w],
             tkc_last_error());
      continue;
    }
    printf("{\"impl\": \"tkc-%s\", \"device\": \"%s\", \"workload\": \"kv_attention\", \"way\": \"%s\", \"steps\": %d, \"first_step_ms\": %.2f, "
           "\"ms_per_step\": %.4f, \"kernels_built\": %lld",
           tkc_version(), dev, ways[w], steps, first * 1e3, rest / (steps - 1) * 1e3, (long long)kernels);
    if (w == 0) printf(", \"kernels_per_step\": %d, \"us_per_kernel\": %.2f", jit_kernels, rest / (steps - 1) * 1e6 / (jit_kernels ? jit_kernels : 1));
    printf("}\n");
    fflush(stdout);
  }
  /* the peer: the same steps in plain C (best of 3 passes) */
  static kv_model m;
  kv_weights(&m, 7);
  static double rk[KV_TMAX * KV_E], rv[KV_TMAX * KV_E];
  double best = 1e30;
  for (int rep = 0; rep < 3; rep++) {
    double t0 = now_s();
    for (int t = 0; t < KV_TMAX; t++) {
      float x[KV_E], y[KV_E];
      kv_input(t, x);
      kv_reference(&m, rk, rv, t, x, y);
    }
    double dt = now_s() - t0;
    best = dt < best ? dt : best;
  }
  printf("{\"impl\": \"c-loop\", \"workload\": \"kv_attention\", \"steps\": %d, \"ms_per_step\": %.4f}\n", KV_TMAX, best / KV_TMAX * 1e3);
  return 0;
}
