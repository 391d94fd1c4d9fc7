/* bench_train: one train step (forward, cross-entropy, backward, Adam) captured with tkc_jit and
 * replayed, one JSON object per line:
 *   mlp_784_512_512_10_b256   an MLP 784-512-512-10 (ReLU) at batch 256
 *   cnn_b64                   conv 3x3 1->32, ReLU, conv 3x3 32->64, ReLU, max-pool 2, fc 9216->10 at
 *                             batch 64 of 28x28 images
 * step_ms is the best of the replays (new batches each), first_step_ms the capturing step (builds
 * included, kernel cache as it is), kernels the launches per step. The peers (JAX jax.jit, tinygrad
 * TinyJit) are bench/train_peers.py, to run in the same session:
 *   build/bench_train [device] [steps]; python3 bench/train_peers.py */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tkc.h"
#include "tkc/ops_nn.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static unsigned rng = 7u;
static float urand(void) { return (rng = rng * 1664525u + 1013904223u, (float)(rng >> 8) / 16777216.0f); }

/* uniform in +-1/sqrt(fan_in) (torch's default Linear/Conv init), from the ctx's generator */
static tkc_tensor *param(tkc_ctx *ctx, int ndim, const int64_t *shape, int fan_in) {
  double bound = 1.0 / sqrt((double)fan_in);
  tkc_tensor *t = tkc_rand_uniform(ctx, TKC_FLOAT32, ndim, shape, -bound, bound);
  if (t && tkc_requires_grad(t, 1)) t = NULL;
  return t;
}

typedef struct net {
  int cnn, np;
  tkc_tensor *p[8];
  tkc_optim *opt;
} net;

static tkc_tensor *forward(net *m, tkc_tensor *x) {
  if (!m->cnn) {
    tkc_tensor *h = tkc_relu(tkc_add(tkc_matmul(x, m->p[0]), m->p[1]));
    h = tkc_relu(tkc_add(tkc_matmul(h, m->p[2]), m->p[3]));
    return tkc_add(tkc_matmul(h, m->p[4]), m->p[5]);
  }
  tkc_tensor *h = tkc_relu(tkc_conv2d(x, m->p[0], m->p[1], 1, 0));                       /* (B, 32, 26, 26) */
  h = tkc_relu(tkc_conv2d(h, m->p[2], m->p[3], 1, 0));                                    /* (B, 64, 24, 24) */
  h = tkc_max_pool2d(h, (const int[]){2, 2}, NULL, NULL, NULL, 0);                       /* (B, 64, 12, 12) */
  h = tkc_reshape(h, 2, (const int64_t[]){tkc_dim(x, 0), 64 * 12 * 12});
  return tkc_add(tkc_matmul(h, m->p[4]), m->p[5]);
}

static tkc_status step(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)nin, (void)nout;
  net *m = user;
  tkc_scope_begin(ctx);
  tkc_tensor *loss = tkc_cross_entropy(forward(m, in[0]), in[1], TKC_REDUCTION_MEAN);
  tkc_status st = loss ? tkc_backward(loss) : tkc_last_status();
  if (!st) st = tkc_optim_step_realize(m->opt, 1, &loss); /* the loss with the step: before the update */
  if (!st) st = tkc_optim_zero_grad(m->opt);
  if (loss) tkc_keep(loss);
  tkc_scope_end(ctx);
  out[0] = loss;
  return st;
}

static int run(const char *dev, int cnn, int steps) {
  tkc_ctx *ctx = tkc_ctx_new(dev);
  if (!ctx) return fprintf(stderr, "bench_train: %s\n", tkc_last_error()), 1;
  net m = {.cnn = cnn, .np = 6};
  int64_t batch = cnn ? 64 : 256;
  if (!cnn) {
    m.p[0] = param(ctx, 2, (const int64_t[]){784, 512}, 784), m.p[1] = param(ctx, 1, (const int64_t[]){512}, 784);
    m.p[2] = param(ctx, 2, (const int64_t[]){512, 512}, 512), m.p[3] = param(ctx, 1, (const int64_t[]){512}, 512);
    m.p[4] = param(ctx, 2, (const int64_t[]){512, 10}, 512), m.p[5] = param(ctx, 1, (const int64_t[]){10}, 512);
  } else {
    m.p[0] = param(ctx, 4, (const int64_t[]){32, 1, 3, 3}, 9), m.p[1] = param(ctx, 1, (const int64_t[]){32}, 9);
    m.p[2] = param(ctx, 4, (const int64_t[]){64, 32, 3, 3}, 288), m.p[3] = param(ctx, 1, (const int64_t[]){64}, 288);
    m.p[4] = param(ctx, 2, (const int64_t[]){9216, 10}, 9216), m.p[5] = param(ctx, 1, (const int64_t[]){10}, 9216);
  }
  m.opt = tkc_adam_new(ctx, m.np, m.p, 1e-3, 0.9, 0.999, 1e-8, 0, 0);
  tkc_jit *j = m.opt ? tkc_jit_new(ctx, step, &m) : NULL;
  if (!j) return fprintf(stderr, "bench_train: %s\n", tkc_last_error()), 1;
  int64_t xshape[4] = {batch, 784, 0, 0};
  int xnd = 2;
  if (cnn) xshape[1] = 1, xshape[2] = 28, xshape[3] = 28, xnd = 4;
  size_t nx = (size_t)batch * 784;
  float *x = malloc(nx * sizeof *x);
  int32_t *y = malloc((size_t)batch * sizeof *y);
  double first = 0, best = 1e30, last_loss = 0;
  for (int s = 0; s <= steps; s++) {
    for (size_t i = 0; i < nx; i++) x[i] = urand();
    for (int64_t i = 0; i < batch; i++) y[i] = (int32_t)(urand() * 10) % 10;
    tkc_tensor *in[2] = {tkc_tensor_new(ctx, TKC_FLOAT32, xnd, xshape, x), tkc_tensor_new(ctx, TKC_INT32, 1, &batch, y)}, *loss = NULL;
    double t0 = now_ms();
    tkc_status st = tkc_jit_run(j, in, 2, &loss, 1);
    float l = 0;
    if (!st) st = tkc_copy_out(loss, &l, sizeof l); /* waits for the step */
    double t = now_ms() - t0;
    if (st) return fprintf(stderr, "bench_train: %s\n", tkc_last_error()), 1;
    if (s == 0) first = t;
    else if (t < best) best = t;
    last_loss = l;
    tkc_tensor_free(loss), tkc_tensor_free(in[0]), tkc_tensor_free(in[1]);
  }
  printf("{\"impl\": \"tkc\", \"device\": \"%s\", \"workload\": \"%s\", \"step_ms\": %.3f, \"first_step_ms\": %.1f, \"kernels\": %d, "
         "\"steps\": %d, \"loss\": %.4f}\n",
         tkc_ctx_device(ctx), cnn ? "cnn_b64" : "mlp_784_512_512_10_b256", best, first, tkc_jit_kernels(j), steps, last_loss);
  fflush(stdout);
  free(x), free(y);
  tkc_jit_free(j);
  tkc_optim_free(m.opt);
  tkc_ctx_free(ctx);
  return 0;
}

int main(int argc, char **argv) {
  const char *dev = argc > 1 ? argv[1] : NULL;
  int steps = argc > 2 ? atoi(argv[2]) : 10;
  if (steps < 1) steps = 1;
  int rc = run(dev, 0, steps);
  if (getenv("BENCH_TRAIN_ONLY_MLP")) return rc;
  return rc | run(dev, 1, steps);
}
