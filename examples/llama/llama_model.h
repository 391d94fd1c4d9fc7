/* llama_model.h — a llama-architecture decoder (RMSNorm, RoPE, grouped-query attention over a KV
 * cache, SwiGLU) read from a GGUF file, on tkc's public API only. Shared by examples/llama.c and the
 * test driver tests/llama_driver.c.
 *
 *   llama_model *m = llama_model_load(ctx, "model.gguf", 0);  // 0: the file's context_length
 *   llama_prefill(m, tokens, n, logits_of_last);               // positions 0..n-1
 *   llama_decode(m, next, n, logits);                          // position n: one captured step
 *   llama_model_free(m);                                       // before tkc_ctx_free(ctx)
 *
 * The file's meaning is llama.cpp's: hyperparameters from the llama.* metadata, tensors by its
 * names (token_embd.weight, blk.N.attn_q.weight, ..., output.weight or the embedding tied), weights
 * in numpy's (out, in) shape as tkc_state_get gives them (quantized ones dequantize inside the
 * matmuls that read them). RoPE is ggml's mode 0 ("normal", LLAMA): each head rotates the pairs
 * (x[2i], x[2i+1]) by pos * base^(-2i/n_rot), on the q and k weights as stored (llama.cpp's converter
 * permutes HF's q/k rows so that this is HF's rotate-half). Head h reads KV head h / (n_head /
 * n_head_kv). Everything is float32 math.
 *
 * The KV cache is two (n_ctx, n_head_kv * head_dim) float32 buffers per layer, written in place with
 * tkc_assign into the view of rows [pos, pos + n) (a kernel writes those rows only; a decode step's
 * pos is the position variable, so each replay writes its own row), and attention reads the first
 * pos + n rows with a causal mask.
 *
 * Errors: NULL / a non-zero tkc_status, and the reason in llama_last_error() (which includes
 * tkc_last_error() when tkc failed). A model belongs to its ctx and is used by one thread. */
#ifndef TKC_EXAMPLE_LLAMA_MODEL_H
#define TKC_EXAMPLE_LLAMA_MODEL_H
#include <stdint.h>
#include "tkc.h"
#include "tkc/io.h"

typedef struct llama_hparams {
  int64_t n_embd;    /* llama.embedding_length */
  int64_t n_layer;   /* llama.block_count */
  int64_t n_head;    /* llama.attention.head_count */
  int64_t n_head_kv; /* llama.attention.head_count_kv (default n_head) */
  int64_t head_dim;  /* llama.attention.key_length (default n_embd / n_head) */
  int64_t n_rot;     /* llama.rope.dimension_count (default head_dim): the rotated dims of a head */
  int64_t n_ff;      /* llama.feed_forward_length */
  int64_t n_ctx;     /* the KV cache's rows: llama.context_length, or less when the load asked */
  int64_t n_vocab;   /* token_embd.weight's rows */
  double rope_base;  /* llama.rope.freq_base (default 10000) */
  double rms_eps;    /* llama.attention.layer_norm_rms_epsilon (default 1e-5) */
} llama_hparams;

typedef struct llama_model llama_model;

/* Loads path into ctx. max_ctx > 0 caps the KV cache at that many positions (a file may say 128k);
 * 0 takes the file's context_length. NULL + llama_last_error() on failure (a missing tensor or
 * metadata key, shapes that do not agree, or what tkc_gguf_load refuses). */
llama_model *llama_model_load(tkc_ctx *ctx, const char *path, int64_t max_ctx);
/* Frees the model, its weights, caches and jit; NULL is a no-op. Before tkc_ctx_free. */
void llama_model_free(llama_model *m);
const llama_hparams *llama_model_hparams(const llama_model *m);
/* The loaded file's state (metadata: the tokenizer's vocabulary, ...), owned by the model. */
tkc_state *llama_model_state(llama_model *m);
/* The ggml type id of the file's weights: blk.0.attn_q.weight's (0 F32, 1 F16, 8 Q8_0, ...). */
int llama_model_weight_type(const llama_model *m);

/* The lazy forward of n tokens (tokens: an (n) int32 tensor) at positions [pos, pos + n): the
 * layers' caches are updated (and realized) on the way, then the logits are returned lazy: (n,
 * n_vocab), or (1, n_vocab) of the last token when !all_logits. pos is a position or a variable
 * token (tkc_dim_var) bound by the caller; with a variable, n must be 1. pos + n <= n_ctx. A new
 * handle (tkc_tensor_free), NULL on failure (the cache rows [pos, pos + n) are then undefined; rows
 * beyond pos + n are never read by a forward at pos, so stale ones from a longer run do no harm). */
tkc_tensor *llama_forward(llama_model *m, tkc_tensor *tokens, int64_t pos, int all_logits);

/* Runs tokens[0..n) at positions [pos, pos + n) (a fresh graph: kernels are built once per n and
 * pos, then taken from the kernel cache) and copies the logits out: all n rows (n * n_vocab floats)
 * when all_logits, else the last one's (n_vocab). */
tkc_status llama_prefill(llama_model *m, const int32_t *tokens, int n, int64_t pos, int all_logits, float *logits);
/* One token at position pos through one captured step: the first call captures it (tkc_jit), every
 * later one replays its kernels with the token copied in and the position bound to the step's
 * variable. logits: n_vocab floats. */
tkc_status llama_decode(llama_model *m, int32_t token, int64_t pos, float *logits);
/* on nonzero: one token's products with quantized weights (the decode step's, a prefill of one)
 * quantize their input to int8 per 32 values and multiply in integers, as llama.cpp does
 * (tkc_state_matmul's TKC_MATMUL_INT8: faster, logits within about 1% of the float products); a
 * prefill of more tokens stays in float (as fast there). 0 (the default): float products. Drops a
 * captured decode step. */
void llama_model_set_int8(llama_model *m, int on);
/* Kernels of the captured decode step (0 before the first llama_decode). */
int llama_decode_kernels(const llama_model *m);

/* The reason of the last failure of a llama_* call on this thread. */
const char *llama_last_error(void);

#endif
