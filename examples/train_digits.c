/* train_digits: training from C. An MLP (64 -> 128 -> 10) or a small CNN (conv 3x3 1->16, ReLU,
 * max-pool 2, fc 256 -> 10) learns scikit-learn's 8x8 digits (1797 images, the digits.csv.gz that
 * scikit-learn ships: 64 pixel values 0..16 and the label per line). The train step (forward,
 * cross-entropy, backward, Adam) is captured once with tkc_jit and replayed for every batch; 20% of
 * the images are held out and the accuracy on them is printed after each epoch.
 *
 *   build/train_digits PATH/digits.csv.gz [mlp|cnn] [device] [epochs] [min-accuracy]
 *
 * Exits 1 when the final held-out accuracy is below min-accuracy (default 0: never), 2 on errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef TKC_HAVE_ZLIB
#include <zlib.h>
#endif
#include "tkc.h"
#include "tkc/ops_nn.h"
#include "tkc/ops_shape.h"

enum { NPIX = 64, NCLASS = 10, MAXN = 4096, BATCH = 32, HIDDEN = 128, CH = 16 };

#define CHECK(x)                                                                                                                                     \
  do {                                                                                                                                               \
    if (!(x)) {                                                                                                                                      \
      fprintf(stderr, "train_digits: %s (%s:%d)\n", tkc_last_error(), __FILE__, __LINE__);                                                          \
      exit(2);                                                                                                                                       \
    }                                                                                                                                                \
  } while (0)

/* ---------------------------------------------------------------- the data */

static float pixels[MAXN][NPIX];
static int labels[MAXN];

/* reads "p0,...,p63,label" lines (gzip or plain text); returns the number of images */
static int read_digits(const char *path) {
#ifdef TKC_HAVE_ZLIB
  gzFile f = gzopen(path, "rb");
#define READ_LINE(buf, n) gzgets(f, buf, n)
#define CLOSE() gzclose(f)
#else
  FILE *f = fopen(path, "r");
#define READ_LINE(buf, n) fgets(buf, n, f)
#define CLOSE() fclose(f)
#endif
  if (!f) return -1;
  char line[1024];
  int n = 0;
  while (n < MAXN && READ_LINE(line, sizeof line)) {
    char *p = line, *end;
    float v[NPIX + 1];
    int k = 0;
    for (; k <= NPIX; k++) {
      v[k] = strtof(p, &end);
      if (end == p) break;
      p = *end == ',' ? end + 1 : end;
    }
    if (k != NPIX + 1 || v[NPIX] < 0 || v[NPIX] > 9) continue; /* a header or a bad line */
    for (int i = 0; i < NPIX; i++) pixels[n][i] = v[i] / 16.0f;
    labels[n++] = (int)v[NPIX];
  }
  CLOSE();
  return n;
}

/* ---------------------------------------------------------------- the models */

typedef struct model {
  int cnn;
  tkc_tensor *p[4]; /* MLP: w1 (64,128) b1 w2 (128,10) b2; CNN: conv w (16,1,3,3) conv b, fc w (256,10) fc b */
  tkc_optim *opt;
} model;

static unsigned rng = 12345u;
static float uniform(void) { return (rng = rng * 1664525u + 1013904223u, (float)(rng >> 8) / 16777216.0f); }

/* uniform in +-1/sqrt(fan_in), as torch's default Linear/Conv init */
/* uniform in +-1/sqrt(fan_in) (torch's default Linear/Conv init), from the ctx's generator */
static tkc_tensor *param(tkc_ctx *ctx, int ndim, const int64_t *shape, int fan_in) {
  double bound = 1.0 / sqrt((double)fan_in);
  tkc_tensor *t = tkc_rand_uniform(ctx, TKC_FLOAT32, ndim, shape, -bound, bound);
  if (t && tkc_requires_grad(t, 1)) t = NULL;
  return t;
}

/* logits (B, 10) of images x (B, 64) */
static tkc_tensor *forward(model *m, tkc_tensor *x) {
  if (!m->cnn) {
    tkc_tensor *h = tkc_relu(tkc_add(tkc_matmul(x, m->p[0]), m->p[1]));
    return tkc_add(tkc_matmul(h, m->p[2]), m->p[3]);
  }
  int64_t b = tkc_dim(x, 0);
  tkc_tensor *img = tkc_reshape(x, 4, (const int64_t[]){b, 1, 8, 8});
  tkc_tensor *c = tkc_relu(tkc_conv2d(img, m->p[0], m->p[1], 1, 1));                  /* (B, 16, 8, 8) */
  tkc_tensor *pooled = tkc_max_pool2d(c, (const int[]){2, 2}, NULL, NULL, NULL, 0); /* (B, 16, 4, 4) */
  tkc_tensor *flat = tkc_reshape(pooled, 2, (const int64_t[]){b, CH * 16});
  return tkc_add(tkc_matmul(flat, m->p[2]), m->p[3]);
}

/* the captured step: in = {images (B, 64), labels (B,) int32}; out = {loss} */
static tkc_status train_step(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)ctx, (void)nin, (void)nout;
  model *m = user;
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

/* the held-out accuracy: the argmax of the logits, on the host */
static double accuracy(tkc_ctx *ctx, model *m, const int *idx, int n) {
  float *x = malloc((size_t)n * NPIX * sizeof *x), *logits = malloc((size_t)n * NCLASS * sizeof *logits);
  for (int i = 0; i < n; i++) memcpy(x + i * NPIX, pixels[idx[i]], sizeof pixels[0]);
  tkc_scope_begin(ctx);
  tkc_tensor *xt = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){n, NPIX}, x);
  CHECK(xt && !tkc_copy_out(forward(m, tkc_detach(xt)), logits, (size_t)n * NCLASS * sizeof *logits));
  tkc_scope_end(ctx);
  int right = 0;
  for (int i = 0; i < n; i++) {
    int best = 0;
    for (int k = 1; k < NCLASS; k++)
      if (logits[i * NCLASS + k] > logits[i * NCLASS + best]) best = k;
    right += best == labels[idx[i]];
  }
  free(x), free(logits);
  return (double)right / n;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s PATH/digits.csv.gz [mlp|cnn] [device] [epochs] [min-accuracy]\n", argv[0]);
    return 2;
  }
  int n = read_digits(argv[1]);
  if (n < 100) {
    fprintf(stderr, "train_digits: %s: %s\n", argv[1], n < 0 ? "cannot open it" : "fewer than 100 digits in it");
    return 2;
  }
  model m = {.cnn = argc > 2 && !strcmp(argv[2], "cnn")};
  tkc_ctx *ctx = tkc_ctx_new(argc > 3 ? argv[3] : NULL);
  CHECK(ctx);
  int epochs = argc > 4 && atoi(argv[4]) > 0 ? atoi(argv[4]) : (m.cnn ? 16 : 20); /* 0: the default */
  double min_acc = argc > 5 ? atof(argv[5]) : 0;

  /* a fixed shuffle; the last 20% held out */
  int *order = malloc((size_t)n * sizeof *order);
  for (int i = 0; i < n; i++) order[i] = i;
  for (int i = n - 1; i > 0; i--) {
    int j = (int)(uniform() * (float)(i + 1)) % (i + 1), t = order[i];
    order[i] = order[j], order[j] = t;
  }
  int ntrain = n * 4 / 5, ntest = n - ntrain;

  if (!m.cnn) {
    m.p[0] = param(ctx, 2, (const int64_t[]){NPIX, HIDDEN}, NPIX), m.p[1] = param(ctx, 1, (const int64_t[]){HIDDEN}, NPIX);
    m.p[2] = param(ctx, 2, (const int64_t[]){HIDDEN, NCLASS}, HIDDEN), m.p[3] = param(ctx, 1, (const int64_t[]){NCLASS}, HIDDEN);
  } else {
    m.p[0] = param(ctx, 4, (const int64_t[]){CH, 1, 3, 3}, 9), m.p[1] = param(ctx, 1, (const int64_t[]){CH}, 9);
    m.p[2] = param(ctx, 2, (const int64_t[]){CH * 16, NCLASS}, CH * 16), m.p[3] = param(ctx, 1, (const int64_t[]){NCLASS}, CH * 16);
  }
  m.opt = tkc_adam_new(ctx, 4, m.p, 3e-3, 0.9, 0.999, 1e-8, 0, 0);
  CHECK(m.opt);
  tkc_jit *step = tkc_jit_new(ctx, train_step, &m);
  CHECK(step);
  printf("train_digits: %s on %s, %d training and %d held-out images, batch %d\n", m.cnn ? "CNN" : "MLP", tkc_ctx_device(ctx), ntrain, ntest, BATCH);

  float xb[BATCH * NPIX];
  int32_t yb[BATCH];
  double acc = 0, t0 = 0;
  struct timespec ts;
  for (int e = 0; e < epochs; e++) {
    for (int i = ntrain - 1; i > 0; i--) { /* a new order of the training images each epoch */
      int j = (int)(uniform() * (float)(i + 1)) % (i + 1), t = order[i];
      order[i] = order[j], order[j] = t;
    }
    clock_gettime(CLOCK_MONOTONIC, &ts);
    t0 = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
    double sum = 0;
    int nb = 0;
    for (int b = 0; b + BATCH <= ntrain; b += BATCH, nb++) {
      for (int i = 0; i < BATCH; i++) memcpy(xb + i * NPIX, pixels[order[b + i]], sizeof pixels[0]), yb[i] = labels[order[b + i]];
      tkc_tensor *in[2] = {tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){BATCH, NPIX}, xb), tkc_tensor_new(ctx, TKC_INT32, 1, (const int64_t[]){BATCH}, yb)};
      tkc_tensor *loss = NULL;
      CHECK(in[0] && in[1] && !tkc_jit_run(step, in, 2, &loss, 1));
      float l;
      CHECK(!tkc_copy_out(loss, &l, sizeof l));
      sum += l;
      tkc_tensor_free(loss), tkc_tensor_free(in[0]), tkc_tensor_free(in[1]);
    }
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double took = (double)ts.tv_sec + ts.tv_nsec * 1e-9 - t0;
    acc = accuracy(ctx, &m, order + ntrain, ntest);
    printf("epoch %2d  loss %.4f  held-out accuracy %.2f%%  (%d steps, %.1f ms/step)\n", e + 1, sum / nb, 100 * acc, nb, 1e3 * took / nb);
  }
  printf("kernels per step: %d\n", tkc_jit_kernels(step));
  tkc_jit_free(step);
  tkc_optim_free(m.opt);
  tkc_ctx_free(ctx);
  free(order);
  if (acc < min_acc) {
    printf("train_digits: held-out accuracy %.2f%% is below %.2f%%\n", 100 * acc, 100 * min_acc);
    return 1;
  }
  return 0;
}
