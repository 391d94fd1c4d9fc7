/* schedule_dot: look at what a model compiles to before running it.
 *
 * Builds softmax(x @ w + b) and writes, into the folder given as argv[1] (default "."):
 *   schedule.dot  the kernels realizing it would run and the buffers they read and write
 *   kernel0.dot   the first kernel's UOp graph (what the renderer turns into source)
 * and, when Graphviz's `dot` is on PATH, schedule.png and kernel0.png. Nothing runs on the device.
 * Run with TKC_DEBUG=2 and compare the kernel names with the launch lines of a realize. */
#include <stdio.h>
#include <stdlib.h>
#include "tkc.h"

static int render_png(const char *dir, const char *name) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "dot -Tpng '%s/%s.dot' -o '%s/%s.png'", dir, name, dir, name);
  if (system(cmd) != 0) {
    fprintf(stderr, "dot failed on %s/%s.dot\n", dir, name);
    return 1;
  }
  printf("wrote %s/%s.png\n", dir, name);
  return 0;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  tkc_ctx *ctx = tkc_ctx_new(NULL);
  if (!ctx) {
    fprintf(stderr, "no device: %s\n", tkc_last_error());
    return 1;
  }
  const int64_t sx[2] = {4, 8}, sw[2] = {8, 16}, sb[1] = {16};
  tkc_tensor *x = tkc_rand(ctx, TKC_FLOAT32, 2, sx, 1);
  tkc_tensor *w = tkc_rand(ctx, TKC_FLOAT32, 2, sw, 2);
  tkc_tensor *b = tkc_rand(ctx, TKC_FLOAT32, 1, sb, 3);
  tkc_tensor *probs = tkc_softmax(tkc_add(tkc_matmul(x, w), b), -1); /* (4, 16); one check for the chain */
  if (!probs) {
    fprintf(stderr, "error: %s\n", tkc_last_error());
    tkc_ctx_free(ctx);
    return 1;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/schedule.dot", dir);
  if (tkc_schedule_dot(probs, path) != TKC_OK) {
    fprintf(stderr, "error: %s\n", tkc_last_error());
    tkc_ctx_free(ctx);
    return 1;
  }
  printf("device %s: %d kernels\nwrote %s\n", tkc_ctx_device(ctx), tkc_kernel_count(probs), path);
  snprintf(path, sizeof path, "%s/kernel0.dot", dir);
  if (tkc_kernel_uops_dot(probs, 0, path) != TKC_OK) {
    fprintf(stderr, "error: %s\n", tkc_last_error());
    tkc_ctx_free(ctx);
    return 1;
  }
  printf("wrote %s\n", path);
  int failed = 0;
  if (system("command -v dot >/dev/null 2>&1") == 0) failed = render_png(dir, "schedule") | render_png(dir, "kernel0");
  else printf("Graphviz `dot` is not on PATH: render with  dot -Tpng schedule.dot -o schedule.png\n");
  tkc_ctx_free(ctx);
  return failed;
}
