/* mlp_loop: an inference loop the way a long-running program writes one. A 784 -> 256 -> 10 MLP on
 * batches of 64: the weights are uploaded once, each iteration copies a new batch into the input
 * (tkc_copy_in), runs relu(x @ W1 + b1) @ W2 + b2 inside a scope (the unnamed intermediate handles
 * are freed at tkc_scope_end), and reads the logits. Kernels are built on the first iteration only
 * and buffers come from the device's pool, so later iterations cost the kernels and little else.
 *
 *   build/mlp_loop [iterations] [device]        (defaults: 200, $TKC_DEVICE or the best device) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "tkc.h"

enum { BATCH = 64, IN = 784, HIDDEN = 256, OUT = 10 };

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static float *filled(size_t n, unsigned seed, float scale) {
  float *p = malloc(n * sizeof *p);
  for (size_t i = 0; p && i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    p[i] = ((float)(seed >> 8) / 16777216.0f - 0.5f) * scale;
  }
  return p;
}

int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 200;
  tkc_ctx *ctx = tkc_ctx_new(argc > 2 ? argv[2] : NULL);
  if (!ctx) {
    fprintf(stderr, "mlp_loop: %s\n", tkc_last_error());
    return 1;
  }
  float *w1 = filled(IN * HIDDEN, 1, 0.1f), *b1 = filled(HIDDEN, 2, 0.1f), *w2 = filled(HIDDEN * OUT, 3, 0.1f), *b2 = filled(OUT, 4, 0.1f);
  float *x = filled(BATCH * IN, 5, 1.0f), logits[BATCH * OUT];
  if (!w1 || !b1 || !w2 || !b2 || !x) return 1;
  tkc_tensor *W1 = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){IN, HIDDEN}, w1);
  tkc_tensor *B1 = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){HIDDEN}, b1);
  tkc_tensor *W2 = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){HIDDEN, OUT}, w2);
  tkc_tensor *B2 = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){OUT}, b2);
  tkc_tensor *X = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){BATCH, IN}, NULL);
  double t0 = now_s(), first = 0;
  tkc_status st = TKC_OK;
  for (int it = 0; it < iters && !st; it++) {
    for (int i = 0; i < BATCH * IN; i += 97) x[i] = (float)((it + i) % 7) * 0.1f; /* a new batch */
    tkc_scope_begin(ctx);
    st = tkc_copy_in(X, x, sizeof(float) * BATCH * IN);
    tkc_tensor *h = tkc_relu(tkc_add(tkc_matmul(X, W1), B1));
    tkc_tensor *y = tkc_keep(tkc_add(tkc_matmul(h, W2), B2));
    if (!st) st = tkc_copy_out(y, logits, sizeof logits);
    tkc_scope_end(ctx);
    tkc_tensor_free(y);
    if (it == 0) first = now_s() - t0;
  }
  double total = now_s() - t0;
  tkc_stats s;
  tkc_ctx_stats(ctx, &s);
  if (st) fprintf(stderr, "mlp_loop: %s\n", tkc_last_error());
  else {
    /* the last batch's first row in plain C */
    double h[HIDDEN], want[OUT], err = 0;
    for (int j = 0; j < HIDDEN; j++) {
      h[j] = b1[j];
      for (int i = 0; i < IN; i++) h[j] += (double)x[i] * w1[i * HIDDEN + j];
      h[j] = h[j] > 0 ? h[j] : 0;
    }
    for (int k = 0; k < OUT; k++) {
      want[k] = b2[k];
      for (int j = 0; j < HIDDEN; j++) want[k] += h[j] * w2[j * OUT + k];
      err = fmax(err, fabs(want[k] - logits[k]));
    }
    printf("mlp_loop on %s: %d iterations, first %.1f ms, then %.3f ms each; %lld kernels run, %lld built; max error %.2g\n",
           tkc_ctx_device(ctx), iters, first * 1e3, iters > 1 ? (total - first) / (iters - 1) * 1e3 : 0.0, (long long)s.kernels,
           (long long)s.kernels_built, err);
    if (err > 1e-3) st = TKC_EINTERNAL;
  }
  tkc_ctx_free(ctx);
  free(w1), free(b1), free(w2), free(b2), free(x);
  return st ? 1 : 0;
}
