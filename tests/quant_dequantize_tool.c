/* quant_dequantize_tool DEVICE — for tests/test_quant_py.py: dequantizes packed GGML blocks with tkc's
 * tensor-op dequantizers (src/io/quant.c) on DEVICE. Reads one case per stdin line,
 *   GGML_TYPE NDIM DIM... PACKED_FILE OUT_FILE
 * (the packed file: the tensor's bytes as GGUF stores them), and writes the float32 values, row-major,
 * to OUT_FILE. Exit status: 0 when every case was written, 77 when DEVICE cannot run here, 1 with a
 * message on stderr otherwise. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tkc.h"
#include "io/quant.h"

static int run_case(tkc_ctx *ctx, const char *line) {
  int type, ndim, used;
  int64_t shape[8];
  char in[4096], out[4096];
  if (sscanf(line, "%d %d%n", &type, &ndim, &used) != 2 || ndim < 1 || ndim > 8) return fprintf(stderr, "bad case: %s", line), 1;
  const char *p = line + used;
  for (int i = 0; i < ndim; i++) {
    long long d;
    int n;
    if (sscanf(p, "%lld%n", &d, &n) != 1) return fprintf(stderr, "bad case: %s", line), 1;
    shape[i] = d, p += n;
  }
  if (sscanf(p, "%4095s %4095s", in, out) != 2) return fprintf(stderr, "bad case: %s", line), 1;
  FILE *f = fopen(in, "rb");
  if (!f) return fprintf(stderr, "cannot read %s\n", in), 1;
  fseek(f, 0, SEEK_END);
  int64_t nbytes = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *bytes = malloc((size_t)nbytes + 1);
  size_t got = fread(bytes, 1, (size_t)nbytes, f);
  fclose(f);
  int rc = 1;
  tkc_tensor *packed = got == (size_t)nbytes ? tkc_tensor_new(ctx, TKC_UINT8, 1, &nbytes, bytes) : NULL;
  tkc_tensor *w = packed ? tkc_quant_dequantize(packed, type, ndim, shape) : NULL;
  int64_t n = w ? tkc_numel(w) : 0;
  float *vals = malloc((size_t)n * sizeof(float) + 1);
  if (w && tkc_copy_out(w, vals, (size_t)n * sizeof(float)) == TKC_OK) {
    FILE *o = fopen(out, "wb");
    if (o && fwrite(vals, sizeof(float), (size_t)n, o) == (size_t)n) rc = 0;
    if (o) fclose(o);
    if (rc) fprintf(stderr, "cannot write %s\n", out);
  } else {
    fprintf(stderr, "%s: type %d: %s\n", in, type, tkc_last_error());
  }
  tkc_tensor_free(w), tkc_tensor_free(packed);
  free(bytes), free(vals);
  return rc;
}

int main(int argc, char **argv) {
  if (argc != 2) return fprintf(stderr, "usage: %s DEVICE < cases\n", argv[0]), 1;
  if (!tkc_device_available(argv[1])) return printf("%s: unavailable here\n", argv[1]), 77;
  tkc_ctx *ctx = tkc_ctx_new(argv[1]);
  if (!ctx) return fprintf(stderr, "%s: %s\n", argv[1], tkc_last_error()), 1;
  char line[16384];
  int rc = 0;
  while (fgets(line, sizeof line, stdin))
    if (line[0] != '\n' && run_case(ctx, line)) rc = 1;
  tkc_ctx_free(ctx);
  return rc;
}
