/* A program outside tkc's tree: (a + b) * 2 summed on the default device, checked against C. Prints
 * tkc's version so tests/package/check.sh can compare it with the package's. */
#include <math.h>
#include <stdio.h>
#include <tkc.h>

int main(void) {
  tkc_ctx *ctx = tkc_ctx_new(NULL);
  if (!ctx) {
    fprintf(stderr, "consumer: %s\n", tkc_last_error());
    return 1;
  }
  float a[64], b[64], out = 0, want = 0;
  for (int i = 0; i < 64; i++) a[i] = (float)i * 0.5f, b[i] = 1.0f - (float)i, want += (a[i] + b[i]) * 2;
  const int64_t n[1] = {64};
  tkc_tensor *s = tkc_sum(tkc_mul(tkc_add(tkc_tensor_new(ctx, TKC_FLOAT32, 1, n, a), tkc_tensor_new(ctx, TKC_FLOAT32, 1, n, b)),
                                  tkc_scalar(ctx, TKC_FLOAT32, 2)),
                          0, NULL, 0);
  tkc_status st = tkc_copy_out(s, &out, sizeof out);
  if (st) fprintf(stderr, "consumer: %s\n", tkc_last_error());
  printf("tkc %s on %s: %g (want %g)\n", tkc_version(), tkc_ctx_device(ctx), out, want);
  tkc_ctx_free(ctx);
  return st || fabsf(out - want) > 1e-3f ? 1 : 0;
}
