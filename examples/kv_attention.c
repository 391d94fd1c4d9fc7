/* kv_attention: an attention layer over a growing context (a KV cache of 256 rows, the position a
 * variable from 0 to 255), compiled once: the first step is captured (tkc_jit) and every later step
 * replays its kernels with the new token and the new position. Each step is checked against plain
 * C; it prints the kernels built (all on the first step) and the time per step.
 *
 *   build/kv_attention [steps] [device]      (defaults: 256, $TKC_DEVICE or the best device) */
#include <stdio.h>
#include <time.h>
#include "kv_attention.h"

int main(int argc, char **argv) {
  int steps = argc > 1 ? atoi(argv[1]) : KV_TMAX;
  if (steps < 1 || steps > KV_TMAX) steps = KV_TMAX;
  tkc_ctx *ctx = tkc_ctx_new(argc > 2 ? argv[2] : NULL);
  if (!ctx) return fprintf(stderr, "kv_attention: %s\n", tkc_last_error()), 1;
  static kv_model m;
  kv_weights(&m, 7);
  kv_bind_tensors(&m, ctx);
  m.pos = tkc_dim_var(ctx, "pos", 0, KV_TMAX - 1);
  tkc_jit *jit = tkc_jit_new(ctx, kv_step, &m);
  /* the caches: plain (TMAX, E) buffers, the layout the replays pass back in (a tkc_full alone
   * would be a broadcast view of one zero) */
  tkc_tensor *kc = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){KV_TMAX, KV_E}, NULL);
  tkc_tensor *vc = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){KV_TMAX, KV_E}, NULL);
  static double rk[KV_TMAX * KV_E], rv[KV_TMAX * KV_E];
  double worst = 0, t0 = 0, replay_s = 0;
  int status = 0;
  for (int t = 0; t < steps && !status; t++) {
    float x[KV_E], y[KV_E], want[KV_E];
    kv_input(t, x);
    tkc_tensor *xt = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){1, KV_E}, x), *in[3] = {xt, kc, vc}, *out[3];
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    if (tkc_dim_bind(ctx, m.pos, t) || tkc_jit_run(jit, in, 3, out, 3) || tkc_copy_out(out[0], y, sizeof y)) {
      fprintf(stderr, "kv_attention: step %d: %s\n", t, tkc_last_error());
      return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double dt = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
    if (t == 0) t0 = dt;
    else replay_s += dt;
    kv_reference(&m, rk, rv, t, x, want);
    for (int j = 0; j < KV_E; j++) {
      double e = fabs((double)y[j] - want[j]);
      worst = e > worst ? e : worst;
      if (e > 1e-4 * (1 + fabs(want[j]))) {
        fprintf(stderr, "kv_attention: step %d: y[%d] = %g, want %g\n", t, j, y[j], want[j]);
        status = 1;
      }
    }
    tkc_tensor_free(xt), tkc_tensor_free(kc), tkc_tensor_free(vc), tkc_tensor_free(out[0]);
    kc = out[1], vc = out[2]; /* the updated cache is the next step's input */
  }
  tkc_stats st;
  tkc_ctx_stats(ctx, &st);
  printf("kv_attention on %s: %d steps, %d kernels per step, %lld kernels built (all in the first step, %.1f ms), "
         "%.1f us per replayed step, largest error %.2g\n",
         tkc_ctx_device(ctx), steps, tkc_jit_kernels(jit), (long long)st.kernels_built, t0 * 1e3, steps > 1 ? replay_s / (steps - 1) * 1e6 : 0.0, worst);
  tkc_tensor_free(kc), tkc_tensor_free(vc);
  kv_free_tensors(&m);
  tkc_jit_free(jit);
  tkc_ctx_free(ctx);
  return status;
}
