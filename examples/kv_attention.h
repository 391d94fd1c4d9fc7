/* kv_attention.h — one attention layer over a growing context, written once for every length: the
 * position is a variable (tkc_dim_var), the keys and values of the steps so far live in a KV cache
 * of the largest length, and a step's kernels are captured once (tkc_jit) and replayed for every
 * position. Shared by examples/kv_attention.c and bench/bench_symbolic.c.
 *
 *   q, k, v = x Wq, x Wk, x Wv                            x: (1, E), the new token
 *   K[pos] = k, V[pos] = v                                the cache rows (where(row == pos, k, K))
 *   y = softmax(q K[0:pos+1]^T / sqrt(E)) V[0:pos+1] Wo  (1, E)
 */
#ifndef TKC_EXAMPLE_KV_ATTENTION_H
#define TKC_EXAMPLE_KV_ATTENTION_H
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tkc.h"

enum { KV_E = 64, KV_TMAX = 256 };

typedef struct kv_model {
  float wq[KV_E * KV_E], wk[KV_E * KV_E], wv[KV_E * KV_E], wo[KV_E * KV_E];
  tkc_tensor *q, *k, *v, *o;   /* the weights as tensors */
  tkc_tensor *rows;            /* (TMAX, 1): row numbers, for the cache update */
  int64_t pos;                 /* the variable (0: fixed lengths, fixed_pos then) */
  int64_t fixed_pos;
} kv_model;

static inline void kv_weights(kv_model *m, unsigned seed) {
  float *all[4] = {m->wq, m->wk, m->wv, m->wo};
  for (int w = 0; w < 4; w++)
    for (int i = 0; i < KV_E * KV_E; i++) {
      seed = seed * 1103515245u + 12345u;
      all[w][i] = ((float)((seed >> 8) & 0xffff) / 65536.0f - 0.5f) * 0.25f;
    }
}

static inline void kv_bind_tensors(kv_model *m, tkc_ctx *ctx) {
  const int64_t ee[2] = {KV_E, KV_E};
  m->q = tkc_tensor_new(ctx, TKC_FLOAT32, 2, ee, m->wq), m->k = tkc_tensor_new(ctx, TKC_FLOAT32, 2, ee, m->wk);
  m->v = tkc_tensor_new(ctx, TKC_FLOAT32, 2, ee, m->wv), m->o = tkc_tensor_new(ctx, TKC_FLOAT32, 2, ee, m->wo);
  m->rows = tkc_reshape(tkc_arange(ctx, TKC_INT32, 0, KV_TMAX, 1), 2, (const int64_t[]){KV_TMAX, 1});
}

static inline void kv_free_tensors(kv_model *m) {
  tkc_tensor_free(m->q), tkc_tensor_free(m->k), tkc_tensor_free(m->v), tkc_tensor_free(m->o), tkc_tensor_free(m->rows);
}

/* One step (a tkc_jit_fn): in = {x (1,E), K (TMAX,E), V (TMAX,E)}, out = {y (1,E), K', V'}. */
static inline tkc_status kv_step(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)nin, (void)nout;
  kv_model *m = user;
  tkc_tensor *t[20];
  int n = 0;
#define T_(x) (t[n++] = (x))
  tkc_tensor *pos = m->pos ? T_(tkc_dim_scalar(ctx, m->pos)) : T_(tkc_scalar(ctx, TKC_INT32, (double)m->fixed_pos));
  int64_t len = m->pos ? m->pos + 1 : m->fixed_pos + 1; /* a token + 1 is the variable + 1 */
  tkc_tensor *x = in[0];
  tkc_tensor *q = T_(tkc_matmul(x, m->q)), *k = T_(tkc_matmul(x, m->k)), *v = T_(tkc_matmul(x, m->v));
  tkc_tensor *here = T_(tkc_eq(m->rows, pos)); /* (TMAX, 1) */
  out[1] = tkc_where(here, k, in[1]);
  out[2] = tkc_where(here, v, in[2]);
  tkc_tensor *kl = T_(tkc_shrink(out[1], (const int64_t[]){0, len, 0, KV_E})), *vl = T_(tkc_shrink(out[2], (const int64_t[]){0, len, 0, KV_E}));
  tkc_tensor *kt = T_(tkc_transpose(kl, 0, 1));
  tkc_tensor *qk = T_(tkc_matmul(q, kt));
  tkc_tensor *scale = T_(tkc_scalar(ctx, TKC_FLOAT32, 1.0 / sqrt((double)KV_E)));
  tkc_tensor *s = T_(tkc_mul(qk, scale));
  tkc_tensor *p = T_(tkc_softmax(s, 1));
  tkc_tensor *pv = T_(tkc_matmul(p, vl));
  out[0] = tkc_matmul(pv, m->o);
#undef T_
  for (int i = 0; i < n; i++) tkc_tensor_free(t[i]);
  return out[0] && out[1] && out[2] ? TKC_OK : tkc_last_status();
}

/* The same step in plain C (double), on a cache of rows 0..pos: y for input x */
static inline void kv_reference(const kv_model *m, double *kc, double *vc, int pos, const float *x, float *y) {
  double q[KV_E], s[KV_TMAX], o[KV_E], mx = -INFINITY, den = 0;
  for (int j = 0; j < KV_E; j++) {
    double a = 0, b = 0, c = 0;
    for (int i = 0; i < KV_E; i++) a += (double)x[i] * m->wq[i * KV_E + j], b += (double)x[i] * m->wk[i * KV_E + j], c += (double)x[i] * m->wv[i * KV_E + j];
    q[j] = a, kc[pos * KV_E + j] = b, vc[pos * KV_E + j] = c;
  }
  for (int r = 0; r <= pos; r++) {
    double a = 0;
    for (int j = 0; j < KV_E; j++) a += q[j] * kc[r * KV_E + j];
    s[r] = a / sqrt((double)KV_E);
    mx = s[r] > mx ? s[r] : mx;
  }
  for (int r = 0; r <= pos; r++) den += exp(s[r] - mx);
  for (int j = 0; j < KV_E; j++) {
    double a = 0;
    for (int r = 0; r <= pos; r++) a += exp(s[r] - mx) / den * vc[r * KV_E + j];
    o[j] = a;
  }
  for (int j = 0; j < KV_E; j++) {
    double a = 0;
    for (int i = 0; i < KV_E; i++) a += o[i] * m->wo[i * KV_E + j];
    y[j] = (float)a;
  }
}

/* the input of step t */
static inline void kv_input(int t, float *x) {
  for (int i = 0; i < KV_E; i++) x[i] = (float)sin(0.37 * (t + 1) + 0.11 * i);
}
#endif
