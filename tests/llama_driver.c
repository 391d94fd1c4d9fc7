/* llama_driver: runs examples/llama/llama_model on a GGUF file for tests/test_llama_py.py and writes
 * what it computed, so the test can compare it with its numpy reference:
 *
 *   llama_driver MODEL.gguf DEVICE IDS CHUNK N_DECODE OUT.bin
 *
 * IDS (comma-separated token ids) are prefilled in pieces of CHUNK tokens (each at the position after
 * the previous piece), then N_DECODE tokens are generated greedily, each through the captured decode
 * step (llama_decode), the first from the prefill's last logits. OUT.bin, little-endian:
 *   int32 n_ids, int32 n_vocab, float32 logits[n_ids][n_vocab]          (every prefill position)
 *   N_DECODE times: int32 token fed, float32 logits[n_vocab]            (the step's output)
 * and int32 decode kernels at the end. LLAMA_DRIVER_INT8=1: one-token products with Q4_0 / Q8_0
 * weights in int8 (llama_model_set_int8). Exit 0, 77 when DEVICE does not run here, or 1 with the reason
 * on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../examples/llama/llama_model.h"

static int argmax(const float *v, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; i++)
    if (v[i] > v[best]) best = i;
  return (int)best;
}

int main(int argc, char **argv) {
  if (argc != 7) return fprintf(stderr, "usage: llama_driver MODEL.gguf DEVICE IDS CHUNK N_DECODE OUT.bin\n"), 2;
  int32_t ids[1024];
  int n = 0;
  for (char *s = argv[3]; *s && n < 1024; n++) {
    ids[n] = (int32_t)strtol(s, &s, 10);
    if (*s == ',') s++;
  }
  int chunk = atoi(argv[4]), n_decode = atoi(argv[5]);
  if (n < 1 || chunk < 1 || n_decode < 0) return fprintf(stderr, "llama_driver: bad IDS, CHUNK or N_DECODE\n"), 2;
  if (!tkc_device_available(argv[2])) return printf("skipped: %s does not run here\n", argv[2]), 77;
  tkc_ctx *ctx = tkc_ctx_new(argv[2]);
  if (!ctx) return fprintf(stderr, "llama_driver: %s\n", tkc_last_error()), 1;
  llama_model *m = llama_model_load(ctx, argv[1], 0);
  if (!m) return fprintf(stderr, "llama_driver: %s\n", llama_last_error()), tkc_ctx_free(ctx), 1;
  const char *int8 = getenv("LLAMA_DRIVER_INT8");
  llama_model_set_int8(m, int8 && *int8 == '1');
  const int64_t nv = llama_model_hparams(m)->n_vocab;
  float *logits = malloc((size_t)n * (size_t)nv * sizeof *logits);
  FILE *f = fopen(argv[6], "wb");
  int status = !logits || !f;
  if (status) fprintf(stderr, "llama_driver: cannot write %s\n", argv[6]);
  for (int at = 0; !status && at < n; at += chunk) {
    int k = n - at < chunk ? n - at : chunk;
    if (llama_prefill(m, ids + at, k, at, 1, logits + (size_t)at * (size_t)nv)) {
      fprintf(stderr, "llama_driver: prefill at %d: %s\n", at, llama_last_error());
      status = 1;
    }
  }
  int32_t header[2] = {n, (int32_t)nv};
  if (!status) fwrite(header, sizeof header, 1, f), fwrite(logits, sizeof *logits, (size_t)n * (size_t)nv, f);
  int32_t token = status ? 0 : argmax(logits + (size_t)(n - 1) * (size_t)nv, nv);
  for (int step = 0; !status && step < n_decode; step++) {
    if (llama_decode(m, token, n + step, logits)) {
      fprintf(stderr, "llama_driver: decode step %d: %s\n", step, llama_last_error());
      status = 1;
      break;
    }
    fwrite(&token, sizeof token, 1, f), fwrite(logits, sizeof *logits, (size_t)nv, f);
    token = argmax(logits, nv);
  }
  int32_t kernels = llama_decode_kernels(m);
  if (!status) fwrite(&kernels, sizeof kernels, 1, f);
  if (f && fclose(f)) status = 1;
  free(logits);
  llama_model_free(m);
  tkc_ctx_free(ctx);
  return status;
}
