/* llama: text generation with a llama-architecture model from a GGUF file (llama.cpp's format:
 * F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K weights, dequantized inside the
 * matmuls that read them). The prompt is prefilled in one pass; then each new token runs through one
 * decode step captured once (tkc_jit) and replayed with the position bound to a variable, sampled on
 * the host: greedy (--temp 0), or with temperature, top-k and top-p.
 *
 *   build/llama model.gguf [--prompt TEXT | --tokens 1,2,3] [--n 32] [--temp 0] [--top-k 40] [--top-p 0.95]
 *                          [--seed 1] [--device CPU] [--ctx 512] [--int8]
 *
 * --prompt: the prompt as text, encoded with the file's vocabulary (tokenizer.ggml.*: SentencePiece or
 * BPE; the generated text is printed too); --tokens: the prompt as token ids (default: the file's BOS
 * token, else 1); --n: tokens to generate
 * (it stops early at the file's EOS token); --ctx: at most this many positions in the KV cache
 * (default: the file's context_length, capped at 2048); --int8: the decode step's products with
 * quantized weights in int8, the input quantized per 32 values as llama.cpp does (tkc_state_matmuls;
 * faster, logits within about 1% of the float products). Prints the generated ids, then the tokens/s
 * of the prefill (run twice: the second, with its kernels built, is timed) and of the decode (the first
 * decode step, which captures and compiles, apart). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "llama/llama_model.h"

enum { MAX_PROMPT = 4096 };

typedef struct options {
  const char *model, *device, *tokens, *prompt;
  int n;
  double temp, top_p;
  int top_k;
  uint64_t seed;
  int64_t ctx;
  int int8; /* --int8: the decode step's quantized products in int8 */
} options;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int usage(void) {
  fprintf(stderr, "usage: llama model.gguf [--tokens 1,2,3] [--n 32] [--temp 0] [--top-k K] [--top-p P] [--seed S] [--device D] [--ctx N] [--int8]\n");
  return 2;
}

static int parse(int argc, char **argv, options *o) {
  *o = (options){.n = 32, .top_p = 1.0, .seed = 1, .ctx = 2048};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (a[0] != '-') {
      if (o->model) return -1;
      o->model = a;
      continue;
    }
    if (!strcmp(a, "--int8")) { /* a flag: no value */
      o->int8 = 1;
      continue;
    }
    if (!v) return -1;
    i++;
    if (!strcmp(a, "--tokens")) o->tokens = v;
    else if (!strcmp(a, "--prompt")) o->prompt = v;
    else if (!strcmp(a, "--n")) o->n = atoi(v);
    else if (!strcmp(a, "--temp")) o->temp = atof(v);
    else if (!strcmp(a, "--top-k")) o->top_k = atoi(v);
    else if (!strcmp(a, "--top-p")) o->top_p = atof(v);
    else if (!strcmp(a, "--seed")) o->seed = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--device")) o->device = v;
    else if (!strcmp(a, "--ctx")) o->ctx = atoll(v);
    else return -1;
  }
  return o->model && o->n >= 0 && o->top_k >= 0 && o->top_p > 0 && o->top_p <= 1 && o->temp >= 0 && o->ctx > 0 ? 0 : -1;
}

/* the file's special token id under key, or def */
static int32_t special_token(tkc_state *st, const char *key, int32_t def) {
  int64_t v;
  return tkc_gguf_meta_type(st, key) >= 0 && !tkc_gguf_meta_int(st, key, &v) ? (int32_t)v : def;
}

/* ---------------------------------------------------------------- sampling (on the host) */

static uint64_t rng_state;
static double uniform(void) { /* splitmix64 -> [0, 1) */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

static const float *sort_keys;
static int by_logit_desc(const void *a, const void *b) {
  float x = sort_keys[*(const int32_t *)a], y = sort_keys[*(const int32_t *)b];
  return x < y ? 1 : x > y ? -1 : 0;
}

/* greedy (temp 0): the first largest logit; else softmax(logits / temp) over the top_k largest (0:
 * all), cut to the smallest prefix whose probability reaches top_p, sampled */
static int32_t sample(const float *logits, int64_t nv, const options *o, int32_t *order, double *prob) {
  if (o->temp <= 0) {
    int64_t best = 0;
    for (int64_t i = 1; i < nv; i++)
      if (logits[i] > logits[best]) best = i;
    return (int32_t)best;
  }
  for (int64_t i = 0; i < nv; i++) order[i] = (int32_t)i;
  sort_keys = logits;
  qsort(order, (size_t)nv, sizeof *order, by_logit_desc);
  int64_t k = o->top_k > 0 && o->top_k < nv ? o->top_k : nv;
  double total = 0;
  for (int64_t i = 0; i < k; i++) total += prob[i] = exp(((double)logits[order[i]] - logits[order[0]]) / o->temp);
  double kept = 0;
  int64_t cut = 0;
  while (cut < k && (cut == 0 || kept < o->top_p * total)) kept += prob[cut++];
  double r = uniform() * kept;
  for (int64_t i = 0; i < cut; i++)
    if ((r -= prob[i]) < 0) return order[i];
  return order[cut - 1];
}

int main(int argc, char **argv) {
  options o;
  if (parse(argc, argv, &o)) return usage();
  rng_state = o.seed;
  tkc_ctx *ctx = tkc_ctx_new(o.device);
  if (!ctx) return fprintf(stderr, "llama: %s\n", tkc_last_error()), 1;
  double t_load = now();
  llama_model *m = llama_model_load(ctx, o.model, o.ctx);
  if (!m) return fprintf(stderr, "llama: %s\n", llama_last_error()), tkc_ctx_free(ctx), 1;
  t_load = now() - t_load;
  llama_model_set_int8(m, o.int8);
  const llama_hparams *hp = llama_model_hparams(m);
  tkc_state *st = llama_model_state(m);

  /* ---- the prompt: --prompt text encoded with the file's vocabulary (tokenizer.ggml.*), or --tokens
   * ids, or the BOS token alone */
  static int32_t ids[MAX_PROMPT];
  int n = 0;
  tkc_tokenizer *tok = tkc_tokenizer_from_gguf(st); /* NULL: the file has no (usable) vocabulary */
  if (!tok && o.prompt) return fprintf(stderr, "llama: --prompt: %s\n", tkc_last_error()), 2;
  if (o.prompt) {
    n = tkc_tokenizer_encode(tok, o.prompt, strlen(o.prompt), -1, ids, MAX_PROMPT);
    if (n < 0 || n > MAX_PROMPT) return fprintf(stderr, "llama: --prompt: %s\n", n < 0 ? tkc_last_error() : "more than 4096 tokens"), tkc_tokenizer_free(tok), 2;
  } else if (o.tokens)
    for (const char *s = o.tokens; *s && n < MAX_PROMPT;) {
      char *end;
      long v = strtol(s, &end, 10);
      if (end == s) return fprintf(stderr, "llama: --tokens: not a list of ids: %s\n", o.tokens), 2;
      ids[n++] = (int32_t)v;
      s = *end == ',' ? end + 1 : end;
    }
  else ids[n++] = special_token(st, "tokenizer.ggml.bos_token_id", 1);
  const int32_t eos = special_token(st, "tokenizer.ggml.eos_token_id", -1);
  if (n + o.n > hp->n_ctx) return fprintf(stderr, "llama: %d prompt + %d new tokens exceed the context of %lld (--ctx)\n", n, o.n, (long long)hp->n_ctx), 2;

  printf("llama on %s: %lld layers, embedding %lld, %lld heads (%lld kv), ffn %lld, vocabulary %lld, context %lld, weights of ggml type %d (loaded in %.2f s)\n",
         tkc_ctx_device(ctx), (long long)hp->n_layer, (long long)hp->n_embd, (long long)hp->n_head, (long long)hp->n_head_kv, (long long)hp->n_ff,
         (long long)hp->n_vocab, (long long)hp->n_ctx, llama_model_weight_type(m), t_load);
  float *logits = malloc((size_t)hp->n_vocab * sizeof *logits);
  int32_t *order = malloc((size_t)hp->n_vocab * sizeof *order), *out = malloc(((size_t)o.n + 1) * sizeof *out);
  double *prob = malloc((size_t)hp->n_vocab * sizeof *prob);
  if (!logits || !order || !out || !prob) return fprintf(stderr, "llama: out of memory\n"), 1;

  /* ---- prefill: the whole prompt in one forward, the last position's logits. It runs twice: the
   * first run builds its kernels, the second (the same rows of the cache written again) is timed */
  double t_cold = now(), t_prefill = 0;
  int status = 0;
  for (int run = 0; run < 2 && !status; run++) {
    if (run) t_cold = now() - t_cold, t_prefill = now();
    if (llama_prefill(m, ids, n, 0, 0, logits)) {
      fprintf(stderr, "llama: prefill: %s\n", llama_last_error());
      status = 1;
    }
  }
  t_prefill = now() - t_prefill;

  /* ---- decode: one captured step per token */
  int made = 0;
  double t_first = 0, t_rest = 0;
  for (int32_t token = status ? 0 : sample(logits, hp->n_vocab, &o, order, prob); !status && made < o.n;) {
    out[made++] = token;
    if (token == eos || made == o.n) break;
    double t = now();
    if (llama_decode(m, token, n + made - 1, logits)) {
      fprintf(stderr, "llama: decode at %d: %s\n", n + made - 1, llama_last_error());
      status = 1;
      break;
    }
    t = now() - t;
    if (made == 1) t_first = t;
    else t_rest += t;
    token = sample(logits, hp->n_vocab, &o, order, prob);
  }

  printf("prompt:");
  for (int i = 0; i < n; i++) printf(" %d", ids[i]);
  printf("\ngenerated:");
  for (int i = 0; i < made; i++) printf(" %d", out[i]);
  printf("%s\n", made && out[made - 1] == eos ? " (end of text)" : "");
  if (tok) { /* the text too, when the file has a vocabulary */
    int len = tkc_tokenizer_decode(tok, out, made, NULL, 0);
    char *text = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (text && tkc_tokenizer_decode(tok, out, made, text, (size_t)len + 1) == len) printf("text: %s\n", text);
    free(text);
  }
  tkc_tokenizer_free(tok);
  int steps = made > 0 ? made - 1 : 0; /* the last token is sampled, not run */
  if (!status || made) /* the prefill ran (a failed one has no time to report) */
    printf("prefill: %d tokens in %.2f ms: %.1f tokens/s (the first run, building its kernels: %.1f ms)\n", n, t_prefill * 1e3, n / t_prefill, t_cold * 1e3);
  if (steps > 0)
    printf("decode: %d steps of %d kernels: the first (capture) %.1f ms, then %.2f tokens/s (%.2f ms per token)\n", steps, llama_decode_kernels(m), t_first * 1e3,
           steps > 1 ? (steps - 1) / t_rest : 0.0, steps > 1 ? t_rest / (steps - 1) * 1e3 : 0.0);
  free(logits), free(order), free(out), free(prob);
  llama_model_free(m);
  tkc_ctx_free(ctx);
  return status;
}
