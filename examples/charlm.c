/* charlm: a character-level language model's forward pass, the way a small inference program writes
 * one with tkc's model ops. One transformer block on random weights:
 *
 *   x      = tok_emb[ids] + pos_emb                 (tkc_index_select: an embedding lookup by index)
 *   x      = x + attn(layer_norm(x))                4 heads, causal (tkc_scaled_dot_product_attention)
 *   x      = x + W2 gelu(W1 layer_norm(x) + b1) + b2
 *   logits = layer_norm(x) @ W_out                  (T, V)
 *   loss   = cross_entropy(logits, next chars)      (tkc_cross_entropy, mean over the window)
 *   next   = argmax(logits[T-1])                    (tkc_argmax: greedy sampling)
 *
 * It scores a text window, then generates characters greedily, feeding each one back (the window
 * slides; the ids tensor is refilled with tkc_copy_in, so every step reuses the kernels built by the
 * first). Every step is checked against the same model in plain C (double precision): the logits,
 * the loss and the sampled character. Exits non-zero on a mismatch.
 *
 *   build/charlm [steps] [device]        (defaults: 24, $TKC_DEVICE or the best device) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tkc.h"

enum { T = 32, E = 64, H = 4, D = E / H, FF = 4 * E, VMAX = 128 };

static const char TEXT[] = "the quick brown fox jumps over the lazy dog. a tiny model reads one character at a time, "
                           "and guesses the next one from the window before it.";

/* ---------------------------------------------------------------- weights */
typedef struct weights {
  int v;                                     /* vocabulary size */
  float *tok, *pos;                          /* (V, E), (T, E) */
  float *ln1w, *ln1b, *ln2w, *ln2b, *lnfw, *lnfb; /* (E) each */
  float *wq, *wk, *wv, *wo;                  /* (E, E) */
  float *w1, *b1, *w2, *b2;                  /* (E, FF), (FF), (FF, E), (E) */
  float *wout;                               /* (E, V) */
} weights;

static unsigned rng_state = 12345;
static float *random_floats(size_t n, float center, float scale) {
  float *p = malloc(n * sizeof *p);
  for (size_t i = 0; p && i < n; i++) {
    rng_state = rng_state * 1664525u + 1013904223u;
    p[i] = center + ((float)(rng_state >> 8) / 16777216.0f - 0.5f) * scale;
  }
  return p;
}

static int weights_init(weights *w, int v) {
  memset(w, 0, sizeof *w);
  w->v = v;
  float s = 1.0f / sqrtf((float)E);
  w->tok = random_floats((size_t)v * E, 0, 2), w->pos = random_floats((size_t)T * E, 0, 0.5f);
  w->ln1w = random_floats(E, 1, 0.2f), w->ln1b = random_floats(E, 0, 0.2f);
  w->ln2w = random_floats(E, 1, 0.2f), w->ln2b = random_floats(E, 0, 0.2f);
  w->lnfw = random_floats(E, 1, 0.2f), w->lnfb = random_floats(E, 0, 0.2f);
  w->wq = random_floats(E * E, 0, 2 * s), w->wk = random_floats(E * E, 0, 2 * s);
  w->wv = random_floats(E * E, 0, 2 * s), w->wo = random_floats(E * E, 0, 2 * s);
  w->w1 = random_floats(E * FF, 0, 2 * s), w->b1 = random_floats(FF, 0, 0.2f);
  w->w2 = random_floats(FF * E, 0, 1.0f / 8), w->b2 = random_floats(E, 0, 0.2f);
  w->wout = random_floats((size_t)E * v, 0, 4 * s);
  float *all[] = {w->tok, w->pos, w->ln1w, w->ln1b, w->ln2w, w->ln2b, w->lnfw, w->lnfb, w->wq,
                  w->wk,  w->wv,  w->wo,   w->w1,   w->b1,   w->w2,   w->b2,   w->wout};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (!all[i]) return 0;
  return 1;
}

static void weights_free(weights *w) {
  float *all[] = {w->tok, w->pos, w->ln1w, w->ln1b, w->ln2w, w->ln2b, w->lnfw, w->lnfb, w->wq,
                  w->wk,  w->wv,  w->wo,   w->w1,   w->b1,   w->w2,   w->b2,   w->wout};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
}

/* ---------------------------------------------------------------- the model in tkc */
typedef struct model {
  tkc_ctx *ctx;
  tkc_tensor *tok, *pos, *ln1w, *ln1b, *ln2w, *ln2b, *lnfw, *lnfb, *wq, *wk, *wv, *wo, *w1, *b1, *w2, *b2, *wout;
  tkc_tensor *ids, *targets; /* (T) int32, refilled per step */
} model;

static tkc_tensor *upload(tkc_ctx *ctx, const float *data, int64_t d0, int64_t d1) {
  const int64_t shape[2] = {d0, d1};
  return tkc_tensor_new(ctx, TKC_FLOAT32, d1 ? 2 : 1, shape, data);
}

static int model_init(model *m, tkc_ctx *ctx, const weights *w) {
  m->ctx = ctx;
  m->tok = upload(ctx, w->tok, w->v, E), m->pos = upload(ctx, w->pos, T, E);
  m->ln1w = upload(ctx, w->ln1w, E, 0), m->ln1b = upload(ctx, w->ln1b, E, 0);
  m->ln2w = upload(ctx, w->ln2w, E, 0), m->ln2b = upload(ctx, w->ln2b, E, 0);
  m->lnfw = upload(ctx, w->lnfw, E, 0), m->lnfb = upload(ctx, w->lnfb, E, 0);
  m->wq = upload(ctx, w->wq, E, E), m->wk = upload(ctx, w->wk, E, E), m->wv = upload(ctx, w->wv, E, E), m->wo = upload(ctx, w->wo, E, E);
  m->w1 = upload(ctx, w->w1, E, FF), m->b1 = upload(ctx, w->b1, FF, 0), m->w2 = upload(ctx, w->w2, FF, E), m->b2 = upload(ctx, w->b2, E, 0);
  m->wout = upload(ctx, w->wout, E, w->v);
  const int32_t zeros[T] = {0};
  m->ids = tkc_tensor_new(ctx, TKC_INT32, 1, (const int64_t[]){T}, zeros);
  m->targets = tkc_tensor_new(ctx, TKC_INT32, 1, (const int64_t[]){T}, zeros);
  /* realized once: later steps only copy new ids in */
  return m->wout && m->ids && m->targets && !tkc_realize(m->ids) && !tkc_realize(m->targets);
}

/* (T, E) -> (H, T, D) */
static tkc_tensor *heads(tkc_tensor *x) {
  return tkc_permute(tkc_reshape(x, 3, (const int64_t[]){T, H, D}), (const int[]){1, 0, 2});
}

/* the logits (T, V) of the window in m->ids; call inside a scope */
static tkc_tensor *forward(const model *m) {
  tkc_tensor *x = tkc_add(tkc_index_select(m->tok, 0, m->ids), m->pos);
  tkc_tensor *h = tkc_layer_norm(x, 1, m->ln1w, m->ln1b, 1e-5);
  tkc_tensor *att = tkc_scaled_dot_product_attention(heads(tkc_matmul(h, m->wq)), heads(tkc_matmul(h, m->wk)),
                                                     heads(tkc_matmul(h, m->wv)), NULL, 1, 0);
  att = tkc_reshape(tkc_permute(att, (const int[]){1, 0, 2}), 2, (const int64_t[]){T, E});
  x = tkc_add(x, tkc_matmul(att, m->wo));
  h = tkc_layer_norm(x, 1, m->ln2w, m->ln2b, 1e-5);
  h = tkc_add(tkc_matmul(tkc_gelu(tkc_add(tkc_matmul(h, m->w1), m->b1), 0), m->w2), m->b2);
  x = tkc_add(x, h);
  return tkc_matmul(tkc_layer_norm(x, 1, m->lnfw, m->lnfb, 1e-5), m->wout);
}

/* ---------------------------------------------------------------- the same model in plain C */
static void ref_layer_norm(const double *x, const float *w, const float *b, double *out) {
  for (int t = 0; t < T; t++) {
    double mu = 0, var = 0;
    for (int e = 0; e < E; e++) mu += x[t * E + e];
    mu /= E;
    for (int e = 0; e < E; e++) var += (x[t * E + e] - mu) * (x[t * E + e] - mu);
    var /= E;
    for (int e = 0; e < E; e++) out[t * E + e] = (x[t * E + e] - mu) / sqrt(var + 1e-5) * w[e] + b[e];
  }
}

/* out (T, m) = a (T, k) @ w (k, m) (+ bias) */
static void ref_matmul(const double *a, const float *w, const float *bias, int k, int m, double *out) {
  for (int t = 0; t < T; t++)
    for (int j = 0; j < m; j++) {
      double s = bias ? bias[j] : 0;
      for (int p = 0; p < k; p++) s += a[t * k + p] * w[p * m + j];
      out[t * m + j] = s;
    }
}

static void ref_forward(const weights *w, const int *ids, double *logits) {
  static double x[T * E], h[T * E], q[T * E], k[T * E], v[T * E], att[T * E], o[T * E], f[T * FF];
  for (int t = 0; t < T; t++)
    for (int e = 0; e < E; e++) x[t * E + e] = (double)w->tok[ids[t] * E + e] + w->pos[t * E + e];
  ref_layer_norm(x, w->ln1w, w->ln1b, h);
  ref_matmul(h, w->wq, NULL, E, E, q), ref_matmul(h, w->wk, NULL, E, E, k), ref_matmul(h, w->wv, NULL, E, E, v);
  for (int hd = 0; hd < H; hd++)
    for (int i = 0; i < T; i++) {
      double sc[T], mx = -INFINITY, sum = 0;
      for (int j = 0; j <= i; j++) { /* causal: j <= i */
        double s = 0;
        for (int d = 0; d < D; d++) s += q[i * E + hd * D + d] * k[j * E + hd * D + d];
        sc[j] = s / sqrt((double)D);
        mx = fmax(mx, sc[j]);
      }
      for (int j = 0; j <= i; j++) sum += sc[j] = exp(sc[j] - mx);
      for (int d = 0; d < D; d++) {
        double s = 0;
        for (int j = 0; j <= i; j++) s += sc[j] / sum * v[j * E + hd * D + d];
        att[i * E + hd * D + d] = s;
      }
    }
  ref_matmul(att, w->wo, NULL, E, E, o);
  for (int i = 0; i < T * E; i++) x[i] += o[i];
  ref_layer_norm(x, w->ln2w, w->ln2b, h);
  ref_matmul(h, w->w1, w->b1, E, FF, f);
  for (int i = 0; i < T * FF; i++) f[i] = 0.5 * f[i] * (1 + erf(f[i] / sqrt(2.0)));
  ref_matmul(f, w->w2, w->b2, FF, E, o);
  for (int i = 0; i < T * E; i++) x[i] += o[i];
  ref_layer_norm(x, w->lnfw, w->lnfb, h);
  ref_matmul(h, w->wout, NULL, E, w->v, logits);
}

static double ref_cross_entropy(const double *logits, const int *targets, int v) {
  double loss = 0;
  for (int t = 0; t < T; t++) {
    double mx = -INFINITY, sum = 0;
    for (int c = 0; c < v; c++) mx = fmax(mx, logits[t * v + c]);
    for (int c = 0; c < v; c++) sum += exp(logits[t * v + c] - mx);
    loss += mx + log(sum) - logits[t * v + targets[t]];
  }
  return loss / T;
}

/* ---------------------------------------------------------------- driver */
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* one step on the window ids[0..T): tkc's logits, loss and argmax against plain C's. Returns the
 * sampled id (tkc's), or -1 on an error or a mismatch (reported). */
static int step(const model *m, const weights *w, const int *ids, const int *targets, double *loss_out, double *err_out) {
  int32_t id32[T], tg32[T];
  for (int t = 0; t < T; t++) id32[t] = ids[t], tg32[t] = targets[t];
  static float logits[T * VMAX];
  static double want[T * VMAX];
  double loss = 0, got_next = -1;
  tkc_status st = tkc_copy_in(m->ids, id32, sizeof id32);
  if (!st) st = tkc_copy_in(m->targets, tg32, sizeof tg32);
  tkc_scope_begin(m->ctx);
  tkc_tensor *lg = forward(m);
  tkc_tensor *ce = tkc_cross_entropy(lg, m->targets, TKC_REDUCTION_MEAN);
  tkc_tensor *last = tkc_shrink(lg, (const int64_t[]){T - 1, T, 0, w->v});
  tkc_tensor *next = tkc_argmax(last, -1, 0);
  if (!st) st = tkc_copy_out(lg, logits, sizeof(float) * T * (size_t)w->v);
  if (!st) st = tkc_item(ce, &loss);
  if (!st) st = tkc_item(next, &got_next);
  tkc_scope_end(m->ctx);
  if (st) {
    fprintf(stderr, "charlm: %s\n", tkc_last_error());
    return -1;
  }
  ref_forward(w, ids, want);
  double err = 0, want_loss = ref_cross_entropy(want, targets, w->v);
  for (int i = 0; i < T * w->v; i++) err = fmax(err, fabs(want[i] - logits[i]));
  /* the argmax must be C's, unless C's top two are closer than float32 can tell apart */
  const double *row = want + (T - 1) * w->v;
  int best = 0;
  for (int c = 1; c < w->v; c++) best = row[c] > row[best] ? c : best;
  int g = (int)got_next;
  int tie = g >= 0 && g < w->v && fabs(row[g] - row[best]) <= 1e-4 * (1 + fabs(row[best]));
  if (err > 2e-3 || fabs(loss - want_loss) > 1e-4 * (1 + want_loss) || (g != best && !tie)) {
    fprintf(stderr, "charlm: mismatch: logits max error %.3g, loss %.6f vs %.6f, argmax %d vs %d\n", err, loss, want_loss, g, best);
    return -1;
  }
  *loss_out = loss, *err_out = fmax(*err_out, err);
  return g;
}

int main(int argc, char **argv) {
  int steps = argc > 1 ? atoi(argv[1]) : 24;
  tkc_ctx *ctx = tkc_ctx_new(argc > 2 ? argv[2] : NULL);
  if (!ctx) {
    fprintf(stderr, "charlm: %s\n", tkc_last_error());
    return 1;
  }
  /* the vocabulary: the distinct characters of the text, in byte order */
  char vocab[VMAX];
  int v = 0, code[256];
  for (int c = 0; c < 256; c++) code[c] = -1;
  for (const char *p = TEXT; *p; p++) code[(unsigned char)*p] = 1;
  for (int c = 0; c < 256 && v < VMAX; c++)
    if (code[c] > 0) vocab[v] = (char)c, code[c] = v++;
  weights w;
  model m;
  memset(&m, 0, sizeof m);
  int rc = 1;
  if (!weights_init(&w, v) || !model_init(&m, ctx, &w)) {
    fprintf(stderr, "charlm: setup: %s\n", tkc_last_error());
    goto done;
  }
  /* the context: the text's first T characters; each step scores the window against the text's
   * next characters (the targets), then slides it by the character the model picked */
  int n = (int)strlen(TEXT), ctxt[T + 1024], len = T;
  for (int t = 0; t < T; t++) ctxt[t] = code[(unsigned char)TEXT[t]];
  char generated[1024] = {0};
  double t0 = now_s(), first = 0, loss = 0, first_loss = 0, max_err = 0;
  if (steps > 1000) steps = 1000;
  for (int s = 0; s < steps; s++) {
    int targets[T];
    for (int t = 0; t < T; t++) targets[t] = code[(unsigned char)TEXT[(len - T + t + 1) % n]];
    int next = step(&m, &w, ctxt + len - T, targets, &loss, &max_err);
    if (next < 0) goto done;
    if (s == 0) first = now_s() - t0, first_loss = loss;
    generated[s] = vocab[next];
    ctxt[len++] = next;
  }
  double total = now_s() - t0;
  tkc_stats st;
  tkc_ctx_stats(ctx, &st);
  printf("charlm on %s: vocab %d, window %d, %d heads of %d, MLP %d\n", tkc_ctx_device(ctx), v, T, H, D, FF);
  printf("  prompt    \"%.*s\"\n  generated \"%s\"\n", T, TEXT, generated);
  printf("  loss on the first window %.4f (uniform would be %.4f); logits within %.2g of plain C\n", first_loss, log((double)v), max_err);
  printf("  first step %.1f ms, then %.3f ms per step; %lld kernels run, %lld built\n", first * 1e3,
         steps > 1 ? (total - first) / (steps - 1) * 1e3 : 0.0, (long long)st.kernels, (long long)st.kernels_built);
  rc = 0;
done:
  tkc_ctx_free(ctx);
  weights_free(&w);
  return rc;
}
