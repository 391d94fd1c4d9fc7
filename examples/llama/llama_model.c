/* llama_model.c — the llama decoder of llama_model.h: GGUF hyperparameters and weights, the
 * forward pass as lazy tkc ops, the KV cache, and the captured decode step. */
#include "llama_model.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct llama_layer {
  tkc_tensor *attn_norm, *ffn_norm;            /* (n_embd) */
  tkc_tensor *wq, *wk, *wv, *wo;               /* transposed views: (in, out), ready for x @ w */
  tkc_tensor *w_gate, *w_up, *w_down;
  tkc_tensor *k_cache, *v_cache;               /* (n_ctx, n_head_kv * head_dim), updated in place */
} llama_layer;

struct llama_model {
  tkc_ctx *ctx;
  tkc_state *st;
  llama_hparams hp;
  int weight_type;
  tkc_tensor *tok_embd;                        /* (n_vocab, n_embd) */
  tkc_tensor *out_norm, *w_out;                /* (n_embd), (n_embd, n_vocab) */
  const char *out_name;                        /* w_out's name in the file (the embedding when tied) */
  int matmul_flags;                            /* tkc_state_matmul's: TKC_MATMUL_INT8 or 0 */
  llama_layer *layers;
  tkc_tensor *rope_cos, *rope_sin;             /* (n_ctx, head_dim): see rope_tables */
  /* the decode step */
  int64_t pos_var;                             /* the position variable of the captured step */
  tkc_tensor *token_in;                        /* (1) int32: the step's input, refilled per call */
  tkc_jit *jit;
};

/* ---------------------------------------------------------------- errors */

static _Thread_local char last_error[512];

const char *llama_last_error(void) { return last_error; }

static void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
}

/* the failure of a tkc call, with tkc's reason; returns tkc's status */
static tkc_status fail_tkc(const char *what) {
  tkc_status st = tkc_last_status();
  fail("%s: %s", what, tkc_last_error());
  return st ? st : TKC_EINTERNAL;
}

/* ---------------------------------------------------------------- loading */

/* key "<arch>.<suffix>" as an int: def when absent and def >= 0, else an error */
static int meta_int(const llama_model *m, const char *arch, const char *suffix, int64_t def, int64_t *out) {
  char key[128];
  snprintf(key, sizeof key, "%s.%s", arch, suffix);
  if (tkc_gguf_meta_type(m->st, key) < 0) {
    if (def >= 0) return *out = def, 0;
    return fail("llama: no %s in the file", key), -1;
  }
  if (tkc_gguf_meta_int(m->st, key, out)) return fail_tkc(key), -1;
  return 0;
}

static int meta_float(const llama_model *m, const char *arch, const char *suffix, double def, double *out) {
  char key[128];
  snprintf(key, sizeof key, "%s.%s", arch, suffix);
  if (tkc_gguf_meta_type(m->st, key) < 0) return *out = def, 0;
  if (tkc_gguf_meta_float(m->st, key, out)) return fail_tkc(key), -1;
  return 0;
}

/* A float32 tensor `name` of shape (d0) or (d0, d1) (d1 < 0: 1-D), transposed when transpose (a
 * view: x @ w then reads a stored (out, in) matrix). Another dtype is cast (lazily: the cast fuses
 * into the reader as the dequantization of a packed type does). */
static tkc_tensor *weight(llama_model *m, const char *name, int64_t d0, int64_t d1, int transpose) {
  int ndim = 0;
  int64_t shape[8];
  if (tkc_state_shape(m->st, name, NULL, &ndim, shape)) return fail("llama: no tensor %s in the file", name), NULL;
  int want_ndim = d1 < 0 ? 1 : 2;
  if (ndim != want_ndim || shape[0] != d0 || (d1 >= 0 && shape[1] != d1)) {
    char got[64], want[64];
    if (ndim == 1) snprintf(got, sizeof got, "(%lld)", (long long)shape[0]);
    else if (ndim == 2) snprintf(got, sizeof got, "(%lld, %lld)", (long long)shape[0], (long long)shape[1]);
    else snprintf(got, sizeof got, "of %d dims", ndim);
    if (d1 < 0) snprintf(want, sizeof want, "(%lld)", (long long)d0);
    else snprintf(want, sizeof want, "(%lld, %lld)", (long long)d0, (long long)d1);
    fail("llama: %s is %s, the hyperparameters say %s", name, got, want);
    return NULL;
  }
  tkc_tensor *w = tkc_state_get(m->st, name);
  if (w && tkc_dtype_of(w) != TKC_FLOAT32) {
    tkc_tensor *c = tkc_cast(w, TKC_FLOAT32);
    tkc_tensor_free(w);
    w = c;
  }
  if (w && transpose) {
    tkc_tensor *t = tkc_transpose(w, 0, 1);
    tkc_tensor_free(w);
    w = t;
  }
  if (!w) fail_tkc(name);
  return w;
}

/* ggml's RoPE mode 0 as two tables of (n_ctx, head_dim): rope(x) = x * cos + swap(x) * sin with
 * swap exchanging x[2i] and x[2i+1], cos = (c_i, c_i), sin = (-s_i, s_i) per pair, c_i, s_i of the
 * angle pos * base^(-2i / n_rot); the dims past n_rot are kept (cos 1, sin 0). */
static int rope_tables(llama_model *m) {
  const llama_hparams *hp = &m->hp;
  size_t n = (size_t)hp->n_ctx * (size_t)hp->head_dim;
  float *c = malloc(n * sizeof *c), *s = malloc(n * sizeof *s);
  if (!c || !s) return free(c), free(s), fail("llama: out of memory for the RoPE tables"), -1;
  for (int64_t p = 0; p < hp->n_ctx; p++)
    for (int64_t i = 0; i < hp->head_dim / 2; i++) {
      double a = (double)p * pow(hp->rope_base, -2.0 * (double)i / (double)hp->n_rot);
      int rotated = 2 * i < hp->n_rot;
      float ci = rotated ? (float)cos(a) : 1.0f, si = rotated ? (float)sin(a) : 0.0f;
      size_t at = (size_t)(p * hp->head_dim + 2 * i);
      c[at] = c[at + 1] = ci;
      s[at] = -si, s[at + 1] = si;
    }
  const int64_t shape[2] = {hp->n_ctx, hp->head_dim};
  m->rope_cos = tkc_tensor_new(m->ctx, TKC_FLOAT32, 2, shape, c);
  m->rope_sin = tkc_tensor_new(m->ctx, TKC_FLOAT32, 2, shape, s);
  free(c), free(s);
  if (!m->rope_cos || !m->rope_sin) return fail_tkc("llama: RoPE tables"), -1;
  return 0;
}

static int read_hparams(llama_model *m, int64_t max_ctx) {
  llama_hparams *hp = &m->hp;
  const char *arch = tkc_gguf_meta_type(m->st, "general.architecture") == TKC_GGUF_STRING ? tkc_gguf_meta_str(m->st, "general.architecture") : "llama";
  if (strcmp(arch, "llama") != 0) return fail("llama: the file's architecture is %s, not llama", arch), -1;
  if (meta_int(m, arch, "embedding_length", -1, &hp->n_embd) || meta_int(m, arch, "block_count", -1, &hp->n_layer) ||
      meta_int(m, arch, "attention.head_count", -1, &hp->n_head) || meta_int(m, arch, "attention.head_count_kv", hp->n_head, &hp->n_head_kv) ||
      meta_int(m, arch, "feed_forward_length", -1, &hp->n_ff) || meta_int(m, arch, "context_length", -1, &hp->n_ctx) ||
      meta_float(m, arch, "rope.freq_base", 10000.0, &hp->rope_base) ||
      meta_float(m, arch, "attention.layer_norm_rms_epsilon", 1e-5, &hp->rms_eps))
    return -1;
  if (hp->n_embd < 1 || hp->n_layer < 1 || hp->n_head < 1 || hp->n_head_kv < 1 || hp->n_ff < 1 || hp->n_ctx < 1 || hp->n_head % hp->n_head_kv)
    return fail("llama: bad hyperparameters (embedding %lld, layers %lld, heads %lld / %lld kv, ffn %lld, context %lld)", (long long)hp->n_embd,
                (long long)hp->n_layer, (long long)hp->n_head, (long long)hp->n_head_kv, (long long)hp->n_ff, (long long)hp->n_ctx),
           -1;
  if (meta_int(m, arch, "attention.key_length", hp->n_embd / hp->n_head, &hp->head_dim) || meta_int(m, arch, "rope.dimension_count", hp->head_dim, &hp->n_rot))
    return -1;
  if (hp->head_dim < 2 || hp->head_dim % 2 || hp->n_rot < 0 || hp->n_rot > hp->head_dim || hp->n_rot % 2)
    return fail("llama: bad head size %lld (rotated dims %lld)", (long long)hp->head_dim, (long long)hp->n_rot), -1;
  if (max_ctx > 0 && max_ctx < hp->n_ctx) hp->n_ctx = max_ctx;
  if (hp->n_ctx > (1 << 30)) return fail("llama: context of %lld positions is too long", (long long)hp->n_ctx), -1;
  int nd = 0;
  int64_t shape[8];
  if (tkc_state_shape(m->st, "token_embd.weight", NULL, &nd, shape) || nd != 2) return fail("llama: no 2-D token_embd.weight in the file"), -1;
  hp->n_vocab = shape[0];
  m->weight_type = tkc_gguf_tensor_type(m->st, "blk.0.attn_q.weight");
  return 0;
}

static int read_weights(llama_model *m) {
  const llama_hparams *hp = &m->hp;
  const int64_t e = hp->n_embd, qd = hp->n_head * hp->head_dim, kvd = hp->n_head_kv * hp->head_dim, f = hp->n_ff;
  m->tok_embd = weight(m, "token_embd.weight", hp->n_vocab, e, 0);
  m->out_norm = weight(m, "output_norm.weight", e, -1, 0);
  m->out_name = tkc_state_shape(m->st, "output.weight", NULL, NULL, NULL) == TKC_OK ? "output.weight" : "token_embd.weight"; /* tied */
  m->w_out = weight(m, m->out_name, hp->n_vocab, e, 1);
  if (!m->tok_embd || !m->out_norm || !m->w_out) return -1;
  m->layers = calloc((size_t)hp->n_layer, sizeof *m->layers);
  if (!m->layers) return fail("llama: out of memory"), -1;
  const int64_t cache_shape[2] = {hp->n_ctx, kvd};
  for (int64_t l = 0; l < hp->n_layer; l++) {
    llama_layer *L = &m->layers[l];
    char name[96];
#define W_(field, suffix, d0, d1, tr)                                \
  snprintf(name, sizeof name, "blk.%lld." suffix, (long long)l);     \
  if (!(L->field = weight(m, name, d0, d1, tr))) return -1;
    W_(attn_norm, "attn_norm.weight", e, -1, 0)
    W_(wq, "attn_q.weight", qd, e, 1)
    W_(wk, "attn_k.weight", kvd, e, 1)
    W_(wv, "attn_v.weight", kvd, e, 1)
    W_(wo, "attn_output.weight", e, qd, 1)
    W_(ffn_norm, "ffn_norm.weight", e, -1, 0)
    W_(w_gate, "ffn_gate.weight", f, e, 1)
    W_(w_up, "ffn_up.weight", f, e, 1)
    W_(w_down, "ffn_down.weight", e, f, 1)
#undef W_
    /* plain buffers (a tkc_full would be a broadcast view of one zero; tkc_assign needs a buffer) */
    L->k_cache = tkc_tensor_new(m->ctx, TKC_FLOAT32, 2, cache_shape, NULL);
    L->v_cache = tkc_tensor_new(m->ctx, TKC_FLOAT32, 2, cache_shape, NULL);
    if (!L->k_cache || !L->v_cache) return fail_tkc("llama: KV cache"), -1;
  }
  return 0;
}

llama_model *llama_model_load(tkc_ctx *ctx, const char *path, int64_t max_ctx) {
  if (!ctx || !path) return fail("llama_model_load: NULL ctx or path"), NULL;
  llama_model *m = calloc(1, sizeof *m);
  if (!m) return fail("llama: out of memory"), NULL;
  m->ctx = ctx;
  m->st = tkc_gguf_load(ctx, path);
  if (!m->st) {
    fail_tkc("llama: loading the model");
    return llama_model_free(m), NULL;
  }
  if (read_hparams(m, max_ctx) || read_weights(m) || rope_tables(m)) return llama_model_free(m), NULL;
  /* the variable's name is unique per model: several models may share a ctx */
  static int models;
  char var[32];
  snprintf(var, sizeof var, "llama_pos%d", models++);
  m->pos_var = tkc_dim_var(ctx, var, 0, m->hp.n_ctx - 1);
  m->token_in = tkc_tensor_new(ctx, TKC_INT32, 1, (const int64_t[]){1}, NULL);
  if (!m->pos_var || !m->token_in) {
    fail_tkc("llama: decode step");
    return llama_model_free(m), NULL;
  }
  return m;
}

void llama_model_free(llama_model *m) {
  if (!m) return;
  tkc_jit_free(m->jit);
  if (m->layers) {
    for (int64_t l = 0; l < m->hp.n_layer; l++) {
      llama_layer *L = &m->layers[l];
      tkc_tensor *all[] = {L->attn_norm, L->ffn_norm, L->wq, L->wk, L->wv, L->wo, L->w_gate, L->w_up, L->w_down, L->k_cache, L->v_cache};
      for (size_t i = 0; i < sizeof all / sizeof *all; i++) tkc_tensor_free(all[i]);
    }
    free(m->layers);
  }
  tkc_tensor *all[] = {m->tok_embd, m->out_norm, m->w_out, m->rope_cos, m->rope_sin, m->token_in};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) tkc_tensor_free(all[i]);
  tkc_state_free(m->st);
  free(m);
}

const llama_hparams *llama_model_hparams(const llama_model *m) { return m ? &m->hp : NULL; }
tkc_state *llama_model_state(llama_model *m) { return m ? m->st : NULL; }
int llama_model_weight_type(const llama_model *m) { return m ? m->weight_type : -1; }
int llama_decode_kernels(const llama_model *m) { return m && m->jit ? tkc_jit_kernels(m->jit) : 0; }

/* ---------------------------------------------------------------- the forward pass
 * Every op below makes a handle; the forward runs inside a scope (tkc_scope_begin) that frees them
 * all but the logits at the end. pos is a position or the variable's token, len = pos + n likewise
 * (a token plus a constant is the variable plus it). */

/* x (n, heads * head_dim) rotated at the positions whose table rows are cos, sin (n, 1, head_dim) */
static tkc_tensor *rope(const llama_model *m, tkc_tensor *x, int64_t n, int64_t heads, tkc_tensor *cos_rows, tkc_tensor *sin_rows) {
  const int64_t hd = m->hp.head_dim;
  tkc_tensor *xh = tkc_reshape(x, 3, (const int64_t[]){n, heads, hd});
  tkc_tensor *pairs = tkc_reshape(xh, 4, (const int64_t[]){n, heads, hd / 2, 2});
  tkc_tensor *swapped = tkc_reshape(tkc_flip(pairs, 1, (const int[]){3}), 3, (const int64_t[]){n, heads, hd});
  tkc_tensor *y = tkc_add(tkc_mul(xh, cos_rows), tkc_mul(swapped, sin_rows));
  return tkc_reshape(y, 2, (const int64_t[]){n, heads * hd});
}

/* softmax(q k^T / sqrt(head_dim) + mask) v for q (n, n_head * hd) against the cache's first len rows:
 * query head h reads KV head h / group, as (kv head, group) batches that broadcast k and v */
static tkc_tensor *attention(const llama_model *m, tkc_tensor *q, const llama_layer *L, int64_t n, int64_t len, tkc_tensor *mask) {
  const llama_hparams *hp = &m->hp;
  const int64_t hd = hp->head_dim, hkv = hp->n_head_kv, group = hp->n_head / hp->n_head_kv, kvd = hkv * hd;
  const int kv_order[3] = {1, 0, 2}, q_order[4] = {1, 2, 0, 3}, back_order[4] = {2, 0, 1, 3};
  tkc_tensor *kv[2] = {L->k_cache, L->v_cache};
  for (int i = 0; i < 2; i++) {
    tkc_tensor *rows = tkc_shrink(kv[i], (const int64_t[]){0, len, 0, kvd});                 /* (len, kvd) */
    tkc_tensor *heads = tkc_permute(tkc_reshape(rows, 3, (const int64_t[]){len, hkv, hd}), kv_order); /* (hkv, len, hd) */
    kv[i] = tkc_reshape(heads, 4, (const int64_t[]){hkv, 1, len, hd});
  }
  tkc_tensor *qh = tkc_permute(tkc_reshape(q, 4, (const int64_t[]){n, hkv, group, hd}), q_order); /* (hkv, group, n, hd) */
  tkc_tensor *o = tkc_scaled_dot_product_attention(qh, kv[0], kv[1], mask, 0, 0);                 /* (hkv, group, n, hd) */
  return tkc_reshape(tkc_permute(o, back_order), 2, (const int64_t[]){n, hp->n_head * hd});
}

/* the cache rows [pos, pos + n) of dst replaced by src (n, kvd), in place: an assign into that view
 * writes those rows only (pos may be the position variable: each replay's rows) */
static tkc_status cache_write(const llama_model *m, tkc_tensor *dst, tkc_tensor *src, int64_t pos, int64_t n) {
  tkc_tensor *rows = tkc_shrink(dst, (const int64_t[]){pos, pos + n, 0, m->hp.n_head_kv * m->hp.head_dim});
  return tkc_assign(rows, src);
}

void llama_model_set_int8(llama_model *m, int on) {
  if (!m || (m->matmul_flags != 0) == (on != 0)) return;
  m->matmul_flags = on ? TKC_MATMUL_INT8 : 0;
  tkc_jit_free(m->jit); /* the captured step has the other products */
  m->jit = NULL;
}

/* out[i] = x @ w[i] for the n weights w[i], suffix[i] of layer l (l < 0: the output layer): through
 * the state with the int8 flag when asked (the file's matrices by name, x quantized once), else the
 * float products with the transposed views. 0, or -1 with out[] NULL. */
static int linears(const llama_model *m, tkc_tensor *x, int64_t l, int n, tkc_tensor *const *w, const char *const *suffix, tkc_tensor **out) {
  /* int8 for one token only: with more rows (a prefill) the float products were as fast or faster
   * here (128 rows: the same time; 2 to 32 rows: 1.4-1.8x faster), the weights being read once for
   * all of them */
  if (!m->matmul_flags || !x || tkc_dim(x, 0) != 1) {
    int ok = 1;
    for (int i = 0; i < n; i++) ok &= (out[i] = tkc_matmul(x, w[i])) != NULL;
    return ok ? 0 : -1;
  }
  char names[3][96]; /* the callers' q, k, v at most */
  const char *np[3];
  if (n > 3) return fail("llama: %d products of one input (3 at most)", n), -1;
  for (int i = 0; i < n; i++) {
    if (l < 0) snprintf(names[i], sizeof names[i], "%s", m->out_name);
    else snprintf(names[i], sizeof names[i], "blk.%lld.%s", (long long)l, suffix[i]);
    np[i] = names[i];
  }
  return tkc_state_matmuls(m->st, n, np, x, m->matmul_flags, out) ? -1 : 0;
}

static tkc_tensor *linear(const llama_model *m, tkc_tensor *x, tkc_tensor *w, int64_t l, const char *suffix) {
  tkc_tensor *y = NULL;
  return linears(m, x, l, 1, &w, &suffix, &y) ? NULL : y;
}

static tkc_tensor *forward(llama_model *m, tkc_tensor *tokens, int64_t pos, int all_logits) {
  tkc_ctx *ctx = m->ctx;
  const llama_hparams *hp = &m->hp;
  const int64_t n = tkc_dim(tokens, 0), e = hp->n_embd, hd = hp->head_dim, len = pos + n;
  /* the RoPE rows of these positions, (n, 1, head_dim) */
  tkc_tensor *cos_rows = tkc_reshape(tkc_shrink(m->rope_cos, (const int64_t[]){pos, len, 0, hd}), 3, (const int64_t[]){n, 1, hd});
  tkc_tensor *sin_rows = tkc_reshape(tkc_shrink(m->rope_sin, (const int64_t[]){pos, len, 0, hd}), 3, (const int64_t[]){n, 1, hd});
  /* causal: query i (position pos + i) sees the cache rows r <= pos + i; one token sees all len rows */
  tkc_tensor *mask = NULL;
  if (n > 1) {
    tkc_tensor *qpos = tkc_reshape(tkc_arange(ctx, TKC_INT32, (double)pos, (double)len, 1), 2, (const int64_t[]){n, 1});
    mask = tkc_le(tkc_reshape(tkc_arange(ctx, TKC_INT32, 0, (double)len, 1), 2, (const int64_t[]){1, len}), qpos);
  }
  tkc_tensor *x = tkc_index_select(m->tok_embd, 0, tokens); /* (n, e) */
  for (int64_t l = 0; l < hp->n_layer; l++) {
    const llama_layer *L = &m->layers[l];
    tkc_tensor *h = tkc_rms_norm(x, 1, L->attn_norm, hp->rms_eps);
    tkc_tensor *qkv[3];
    if (linears(m, h, l, 3, (tkc_tensor *const[]){L->wq, L->wk, L->wv}, (const char *const[]){"attn_q.weight", "attn_k.weight", "attn_v.weight"}, qkv))
      return NULL;
    tkc_tensor *q = rope(m, qkv[0], n, hp->n_head, cos_rows, sin_rows);
    tkc_tensor *k = rope(m, qkv[1], n, hp->n_head_kv, cos_rows, sin_rows);
    tkc_tensor *v = qkv[2];
    if (!q || !k || !v || cache_write(m, L->k_cache, k, pos, n) || cache_write(m, L->v_cache, v, pos, n)) return NULL;
    /* the caches and the layer's input are computed now: the attention reads the written caches, and
     * the rest of the layer reads x from its buffer instead of computing it again */
    tkc_tensor *now[3] = {x, L->k_cache, L->v_cache};
    if (tkc_realize_all(3, now)) return NULL;
    tkc_tensor *o = linear(m, attention(m, q, L, n, len, mask), L->wo, l, "attn_output.weight");
    x = tkc_add(x, o);
    h = tkc_rms_norm(x, 1, L->ffn_norm, hp->rms_eps);
    tkc_tensor *gu[2];
    if (linears(m, h, l, 2, (tkc_tensor *const[]){L->w_gate, L->w_up}, (const char *const[]){"ffn_gate.weight", "ffn_up.weight"}, gu)) return NULL;
    tkc_tensor *gated = tkc_mul(tkc_silu(gu[0]), gu[1]);
    x = tkc_add(x, linear(m, gated, L->w_down, l, "ffn_down.weight"));
  }
  if (!all_logits && n > 1) x = tkc_shrink(x, (const int64_t[]){n - 1, n, 0, e});
  return linear(m, tkc_rms_norm(x, 1, m->out_norm, hp->rms_eps), m->w_out, -1, NULL);
}

tkc_tensor *llama_forward(llama_model *m, tkc_tensor *tokens, int64_t pos, int all_logits) {
  if (!m || !tokens) return fail("llama_forward: NULL model or tokens"), NULL;
  const int var = tkc_dim_is_var(pos);
  const int64_t n = tkc_ndim(tokens) == 1 ? tkc_dim(tokens, 0) : -1;
  if (n < 1 || tkc_dtype_of(tokens) != TKC_INT32) return fail("llama_forward: tokens must be an (n) int32 tensor, n >= 1"), NULL;
  if (var ? n != 1 : (pos < 0 || pos + n > m->hp.n_ctx))
    return fail("llama_forward: %lld tokens at position %lld do not fit the context of %lld (a variable position takes one token)", (long long)n,
                var ? -1LL : (long long)pos, (long long)m->hp.n_ctx),
           NULL;
  if (tkc_scope_begin(m->ctx)) return fail_tkc("llama_forward"), NULL;
  tkc_tensor *logits = forward(m, tokens, pos, all_logits);
  if (logits) tkc_keep(logits);
  else fail_tkc("llama_forward");
  tkc_scope_end(m->ctx);
  return logits;
}

/* ---------------------------------------------------------------- running */

tkc_status llama_prefill(llama_model *m, const int32_t *tokens, int n, int64_t pos, int all_logits, float *logits) {
  if (!m || !tokens || n < 1 || !logits) return fail("llama_prefill: NULL model, tokens or logits, or n < 1"), TKC_EINVAL;
  for (int i = 0; i < n; i++)
    if (tokens[i] < 0 || tokens[i] >= m->hp.n_vocab) return fail("llama_prefill: token %d is %d, outside the vocabulary of %lld", i, tokens[i], (long long)m->hp.n_vocab), TKC_EINVAL;
  tkc_tensor *t = tkc_tensor_new(m->ctx, TKC_INT32, 1, (const int64_t[]){n}, tokens);
  if (!t) return fail_tkc("llama_prefill");
  tkc_tensor *y = llama_forward(m, t, pos, all_logits);
  size_t rows = all_logits ? (size_t)n : 1;
  tkc_status st = y ? tkc_copy_out(y, logits, rows * (size_t)m->hp.n_vocab * sizeof *logits) : tkc_last_status();
  if (y && st) fail_tkc("llama_prefill");
  tkc_tensor_free(y), tkc_tensor_free(t);
  return st ? st : TKC_OK;
}

/* the captured step: in[0] the token (1), out[0] its logits (1, n_vocab), at the position variable */
static tkc_status decode_step(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)ctx, (void)nin, (void)nout;
  llama_model *m = user;
  out[0] = llama_forward(m, in[0], m->pos_var, 0);
  return out[0] ? TKC_OK : (tkc_last_status() ? tkc_last_status() : TKC_EINTERNAL);
}

tkc_status llama_decode(llama_model *m, int32_t token, int64_t pos, float *logits) {
  if (!m || !logits) return fail("llama_decode: NULL model or logits"), TKC_EINVAL;
  if (token < 0 || token >= m->hp.n_vocab) return fail("llama_decode: token %d outside the vocabulary of %lld", token, (long long)m->hp.n_vocab), TKC_EINVAL;
  if (pos < 0 || pos >= m->hp.n_ctx) return fail("llama_decode: position %lld outside the context of %lld", (long long)pos, (long long)m->hp.n_ctx), TKC_EINVAL;
  if (!m->jit && !(m->jit = tkc_jit_new(m->ctx, decode_step, m))) return fail_tkc("llama_decode");
  tkc_tensor *out = NULL;
  tkc_status st = tkc_copy_in(m->token_in, &token, sizeof token);
  if (!st) st = tkc_dim_bind(m->ctx, m->pos_var, pos);
  if (!st) st = tkc_jit_run(m->jit, &m->token_in, 1, &out, 1);
  if (!st) st = tkc_copy_out(out, logits, (size_t)m->hp.n_vocab * sizeof *logits);
  if (st) fail_tkc("llama_decode");
  tkc_tensor_free(out);
  return st;
}
