/* quickstart: the tensor API in a few lines — a matmul followed by a softmax.
 *
 * Nothing runs until tkc_copy_out: the ops build a lazy graph, the scheduler fuses it into
 * kernels, and the kernels are compiled for the ctx's device ($TKC_DEVICE, else the best one here).
 * Run with TKC_DEBUG=1 to see each kernel launch, TKC_DEBUG=4 to see the generated source. */
#include <stdio.h>
#include "tkc.h"

int main(void) {
  tkc_ctx *ctx = tkc_ctx_new(NULL);
  if (!ctx) {
    fprintf(stderr, "no device: %s\n", tkc_last_error());
    return 1;
  }
  const int64_t sa[2] = {2, 3}, sb[2] = {3, 4};
  const float a[6] = {1, 2, 3, 4, 5, 6};
  const float b[12] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f, 1.1f, 1.2f};

  tkc_tensor *ta = tkc_tensor_new(ctx, TKC_FLOAT32, 2, sa, a);
  tkc_tensor *tb = tkc_tensor_new(ctx, TKC_FLOAT32, 2, sb, b);
  tkc_tensor *logits = tkc_matmul(ta, tb);      /* (2, 4) */
  tkc_tensor *probs = tkc_softmax(logits, -1);  /* one NULL check covers the whole chain */
  if (!probs) {
    fprintf(stderr, "error: %s\n", tkc_last_error());
    tkc_ctx_free(ctx);
    return 1;
  }
  printf("device: %s\n", tkc_ctx_device(ctx));
  printf("kernels: matmul %d, matmul+softmax %d\n", tkc_kernel_count(logits), tkc_kernel_count(probs));

  float out[8];
  if (tkc_copy_out(probs, out, sizeof out) != TKC_OK) {
    fprintf(stderr, "error: %s\n", tkc_last_error());
    tkc_ctx_free(ctx);
    return 1;
  }
  printf("softmax(a @ b) =\n");
  for (int i = 0; i < 2; i++) printf("  [%.6f %.6f %.6f %.6f]\n", out[4 * i], out[4 * i + 1], out[4 * i + 2], out[4 * i + 3]);
  tkc_ctx_free(ctx); /* frees every tensor of the ctx */
  return 0;
}
