/* bench_llm: tkc's side of bench/bench_llm.py (a ~100M-parameter llama in F16, Q8_0, Q4_0, Q4_K_M,
 * by tkc and by llama.cpp on the same file). Three ways to run it:
 *
 *   bench_llm                         runs bench/bench_llm.py (found through the source directory this
 *                                     program was built from) with this program as its driver: the whole
 *                                     benchmark, as `make bench` does. Exit 0 and a note when python3 is
 *                                     not there.
 *   bench_llm MODEL.gguf DEVICE N_PREFILL N_DECODE RUNS [LOGITS.bin]
 *                                     examples/llama/llama_model on MODEL: a prefill of N_PREFILL tokens at
 *                                     position 0 in one forward (the first run builds its kernels and is reported apart;
 *                                     then RUNS timed runs), then N_DECODE tokens through the captured
 *                                     decode step at positions N_PREFILL.. (the first step captures; then
 *                                     RUNS timed passes of N_DECODE steps). One JSON object on stdout:
 *                                     the best run's tokens/s of each. LOGITS.bin: the prefill's last
 *                                     logits (float32), for a comparison with the peer. BENCH_LLM_INT8=1:
 *                                     quantized products in int8 (llama_model_set_int8).
 *   bench_llm --bandwidth MIB THREADS  the memory's read bandwidth: THREADS threads summing their part
 *                                     of a MIB MiB array (best of 5), and a copy's; one JSON object.
 *
 * The prompt and the fed tokens are fixed pseudo-random ids (the speed does not depend on them); the
 * KV cache holds N_PREFILL + N_DECODE positions. Exit 0, 77 when DEVICE does not run here, 1 with the
 * reason on stderr. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "../examples/llama/llama_model.h"

#ifndef TKC_SOURCE_DIR
#define TKC_SOURCE_DIR "."
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---------------------------------------------------------------- memory bandwidth */

typedef struct part {
  uint64_t *a, *b; /* b: the copy's destination (NULL: sum only) */
  size_t n;
  uint64_t sum;
} part;

/* four independent sums so that the loop vectorizes and is bound by the loads */
static void *sum_part(void *arg) {
  part *p = arg;
  uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (size_t i = 0; i + 4 <= p->n; i += 4) s0 += p->a[i], s1 += p->a[i + 1], s2 += p->a[i + 2], s3 += p->a[i + 3];
  p->sum = s0 + s1 + s2 + s3;
  return NULL;
}

static void *copy_part(void *arg) {
  part *p = arg;
  memcpy(p->b, p->a, p->n * sizeof *p->a);
  return NULL;
}

/* best seconds of 5 runs of fn over threads parts of a (and b) */
static double timed_threads(void *(*fn)(void *), uint64_t *a, uint64_t *b, size_t n, int threads, uint64_t *sink) {
  double best = 1e30;
  for (int run = 0; run < 5; run++) {
    part parts[64];
    pthread_t tid[64];
    size_t per = n / (size_t)threads;
    double t = now();
    for (int i = 0; i < threads; i++) {
      parts[i] = (part){a + per * (size_t)i, b ? b + per * (size_t)i : NULL, per, 0};
      pthread_create(&tid[i], NULL, fn, &parts[i]);
    }
    for (int i = 0; i < threads; i++) pthread_join(tid[i], NULL), *sink += parts[i].sum;
    t = now() - t;
    if (t < best) best = t;
  }
  return best;
}

static int bandwidth(long mib, int threads) {
  if (mib < 1 || threads < 1 || threads > 64) return fprintf(stderr, "bench_llm: --bandwidth MIB THREADS: MIB >= 1, 1 <= THREADS <= 64\n"), 2;
  size_t n = (size_t)mib * 1024 * 1024 / sizeof(uint64_t);
  uint64_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), sink = 0;
  if (!a || !b) return free(a), free(b), fprintf(stderr, "bench_llm: out of memory for %ld MiB\n", mib), 1;
  for (size_t i = 0; i < n; i++) a[i] = i * 2654435761u, b[i] = 0; /* touched: no page faults in the timed runs */
  double t_sum = timed_threads(sum_part, a, NULL, n, threads, &sink);
  double t_copy = timed_threads(copy_part, a, b, n, threads, &sink);
  double bytes = (double)(n / (size_t)threads * (size_t)threads) * sizeof *a;
  printf("{\"bench\": \"llm_bandwidth\", \"mib\": %ld, \"threads\": %d, \"read_gb_s\": %.2f, \"copy_gb_s\": %.2f, \"check\": %" PRIu64 "}\n", mib, threads,
         bytes / t_sum * 1e-9, 2 * bytes / t_copy * 1e-9, sink & 1);
  free(a), free(b);
  return 0;
}

/* ---------------------------------------------------------------- the model */

static int run_model(const char *path, const char *device, int n_prefill, int n_decode, int runs, const char *logits_out) {
  if (n_prefill < 1 || n_decode < 1 || runs < 1) return fprintf(stderr, "bench_llm: N_PREFILL, N_DECODE and RUNS must be >= 1\n"), 2;
  if (!tkc_device_available(device)) return printf("{\"bench\": \"llm\", \"device\": \"%s\", \"skipped\": \"the device does not run here\"}\n", device), 77;
  tkc_ctx *ctx = tkc_ctx_new(device);
  if (!ctx) return fprintf(stderr, "bench_llm: %s\n", tkc_last_error()), 1;
  double t_load = now();
  llama_model *m = llama_model_load(ctx, path, n_prefill + n_decode);
  if (!m) return fprintf(stderr, "bench_llm: %s\n", llama_last_error()), tkc_ctx_free(ctx), 1;
  t_load = now() - t_load;
  const int int8 = getenv("BENCH_LLM_INT8") && *getenv("BENCH_LLM_INT8") == '1'; /* quantized products in int8 */
  llama_model_set_int8(m, int8);
  const llama_hparams *hp = llama_model_hparams(m);
  int32_t *ids = malloc((size_t)(n_prefill + n_decode) * sizeof *ids);
  float *logits = malloc((size_t)hp->n_vocab * sizeof *logits);
  if (!ids || !logits) return fprintf(stderr, "bench_llm: out of memory\n"), 1;
  uint64_t r = 12345;
  for (int i = 0; i < n_prefill + n_decode; i++) r = r * 6364136223846793005ull + 1442695040888963407ull, ids[i] = (int32_t)((r >> 33) % (uint64_t)hp->n_vocab);

  /* $BENCH_LLM_MARK: stderr lines that tell the timed runs' kernel launches (TKC_DEBUG) from the rest */
  const int marks = getenv("BENCH_LLM_MARK") != NULL;
  int status = 0;
  double cold_prefill = 0, best_prefill = 1e30, capture = 0, best_decode = 1e30;
  for (int run = 0; run <= runs && !status; run++) { /* the whole prompt in one forward */
    if (marks) fprintf(stderr, "bench_llm: mark %s\n", run ? "prefill" : "cold");
    double t = now();
    if (llama_prefill(m, ids, n_prefill, 0, 0, logits)) fprintf(stderr, "bench_llm: prefill: %s\n", llama_last_error()), status = 1;
    t = now() - t;
    if (run == 0) cold_prefill = t;
    else if (t < best_prefill) best_prefill = t;
  }
  if (!status && logits_out) {
    FILE *f = fopen(logits_out, "wb");
    if (!f || fwrite(logits, sizeof *logits, (size_t)hp->n_vocab, f) != (size_t)hp->n_vocab) status = 1, fprintf(stderr, "bench_llm: cannot write %s\n", logits_out);
    if (f && fclose(f)) status = 1;
  }
  /* decode: the first step captures (and compiles); then passes of n_decode steps over the same
   * positions (each rewrites the cache rows the previous pass wrote) */
  if (!status) {
    if (marks) fprintf(stderr, "bench_llm: mark capture\n");
    double t = now();
    if (llama_decode(m, ids[n_prefill], n_prefill, logits)) fprintf(stderr, "bench_llm: decode: %s\n", llama_last_error()), status = 1;
    capture = now() - t;
  }
  if (marks) fprintf(stderr, "bench_llm: mark decode\n");
  for (int run = 0; run < runs && !status; run++) {
    double t = now();
    for (int i = 0; i < n_decode && !status; i++)
      if (llama_decode(m, ids[n_prefill + i], n_prefill + i, logits)) fprintf(stderr, "bench_llm: decode at %d: %s\n", n_prefill + i, llama_last_error()), status = 1;
    t = now() - t;
    if (t < best_decode) best_decode = t;
  }
  if (!status)
    printf("{\"bench\": \"llm_tkc\", \"device\": \"%s\", \"int8\": %d, \"weight_type\": %d, \"n_prefill\": %d, \"n_decode\": %d, \"runs\": %d, \"load_s\": %.3f, "
           "\"prefill_cold_s\": %.3f, \"prefill_s\": %.4f, \"prefill_tok_s\": %.2f, \"decode_capture_s\": %.3f, \"decode_s\": %.4f, \"decode_tok_s\": %.2f, "
           "\"decode_kernels\": %d}\n",
           tkc_ctx_device(ctx), int8, llama_model_weight_type(m), n_prefill, n_decode, runs, t_load, cold_prefill, best_prefill, n_prefill / best_prefill, capture,
           best_decode, n_decode / best_decode, llama_decode_kernels(m));
  fflush(stdout);
  free(ids), free(logits);
  llama_model_free(m);
  tkc_ctx_free(ctx);
  return status;
}

int main(int argc, char **argv) {
  if (argc == 1) { /* the whole benchmark: the python script, with this program as its driver */
    const char *script = TKC_SOURCE_DIR "/bench/bench_llm.py";
    if (access(script, R_OK)) return fprintf(stderr, "bench_llm: %s not found: run bench/bench_llm.py from the source tree\n", script), 0;
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1); /* argv[0] may be a name found on PATH */
    if (len > 0) self[len] = 0;
    execlp("python3", "python3", script, "--driver", len > 0 ? self : argv[0], (char *)NULL);
    fprintf(stderr, "bench_llm: no python3: skipped (the benchmark writes its models with the gguf package)\n");
    return 0;
  }
  if (!strcmp(argv[1], "--bandwidth")) return argc == 4 ? bandwidth(atol(argv[2]), atoi(argv[3])) : (fprintf(stderr, "usage: bench_llm --bandwidth MIB THREADS\n"), 2);
  if (argc != 6 && argc != 7) return fprintf(stderr, "usage: bench_llm [MODEL.gguf DEVICE N_PREFILL N_DECODE RUNS [LOGITS.bin] | --bandwidth MIB THREADS]\n"), 2;
  return run_model(argv[1], argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), argc == 7 ? argv[6] : NULL);
}
