/* bench_beam: beam search against the heuristics, and first runs with and without the disk cache.
 * One JSON object per line:
 *   {"bench": "beam", "device", "workload", "heuristics_ms", "beam_ms", "beam": W, "search_s", "ok"}
 *     for matmul 512/1024/2048, conv2d 8x16x32x32 * 32x16x3x3, softmax 4096x4096 and the
 *     transformer block (bench/workloads.h): best realize of a fresh graph with the heuristics'
 *     opts, then with beam width W (TKC_BEAM, default 4; picks in a fresh private cache folder, so
 *     every kernel is searched; search_s sums the searches); ok: the two agree.
 *   {"bench": "first_run", "device", "workload", "cache": "off" | "cold" | "filled", "first_ms"}
 *     for the quickstart (matmul + softmax of 2x3 @ 3x4) and the transformer block: a new process
 *     (this program with --first) timing ctx creation to values out: without the disk cache, with an
 *     empty one it fills, and with the one the previous process filled.
 * Peers: bench/peers.py in the same session (onnxruntime kernel times and "first_run_ms": session
 * creation + first run). Usage: bench_beam [workload-substring ...]; TKC_BENCH_DEVICES=CPU,LLVM
 * (default: CPU and LLVM where available); TKC_BENCH_REPS (default 5). */
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tkc.h"
#include "tkc/runtime.h"
#include "workloads.h"

extern char **environ;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static tkc_tensor *rand_t(tkc_ctx *ctx, int ndim, const int64_t *shape, unsigned seed, float scale) {
  size_t n = 1;
  for (int i = 0; i < ndim; i++) n *= (size_t)shape[i];
  float *v = malloc(n * sizeof *v);
  if (!v) return NULL;
  for (size_t i = 0; i < n; i++) v[i] = ((float)((seed = seed * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f) * scale;
  tkc_tensor *t = tkc_tensor_new(ctx, TKC_FLOAT32, ndim, shape, v);
  free(v);
  if (t && tkc_realize(t)) t = NULL;
  return t;
}

typedef struct inputs {
  tkc_tensor *a[3], *b[3], *img, *w, *m, *tx, *tw[6];
} inputs;

static int make_inputs(tkc_ctx *ctx, inputs *in) {
  for (int i = 0; i < 3; i++) {
    const int64_t s[2] = {512 << i, 512 << i};
    in->a[i] = rand_t(ctx, 2, s, 4 + 2 * (unsigned)i, 1);
    in->b[i] = rand_t(ctx, 2, s, 5 + 2 * (unsigned)i, 1);
  }
  in->img = rand_t(ctx, 4, (const int64_t[]){8, 16, 32, 32}, 10, 1);
  in->w = rand_t(ctx, 4, (const int64_t[]){32, 16, 3, 3}, 11, 1);
  in->m = rand_t(ctx, 2, (const int64_t[]){4096, 4096}, 3, 1);
  in->tx = rand_t(ctx, 2, (const int64_t[]){T_S, T_D}, 12, 1);
  int ok = in->a[2] && in->b[2] && in->img && in->w && in->m && in->tx;
  for (int i = 0; i < 6; i++) ok &= (in->tw[i] = rand_t(ctx, 2, (const int64_t[]){i == 5 ? T_FF : T_D, i == 4 ? T_FF : T_D}, 13 + (unsigned)i, 0.1f)) != NULL;
  return ok;
}

typedef struct workload {
  const char *name;
  int which; /* 0-2 matmul, 3 conv, 4 softmax, 5 transformer */
} workload;

static const workload WORK[] = {{"matmul_512", 0},   {"matmul_1024", 1}, {"matmul_2048", 2},
                                {"conv2d_8x16x32x32_32x16x3x3", 3}, {"softmax_4096", 4}, {"transformer_128x768", 5}};

static tkc_tensor *make(tkc_ctx *ctx, const inputs *in, int which) {
  if (which < 3) return tkc_matmul(in->a[which], in->b[which]);
  if (which == 3) return tkc_conv2d(in->img, in->w, NULL, 1, 0);
  if (which == 4) return tkc_softmax(in->m, -1);
  return bench_transformer(ctx, in->tx, in->tw);
}

static double search_s;
static void on_progress(const tkc_progress *p, void *user) {
  (void)user;
  if (!strcmp(p->stage, "search")) search_s += p->seconds;
}

/* best realize of a fresh graph (the first realize builds, and is not counted); *out its values */
static double best_ms(tkc_ctx *ctx, const inputs *in, int which, int reps, float **out, size_t *n) {
  tkc_tensor *t = make(ctx, in, which);
  *n = t ? (size_t)tkc_numel(t) : 0;
  *out = malloc(*n * sizeof **out + 1);
  if (!t || !*out || tkc_copy_out(t, *out, *n * sizeof **out)) return INFINITY;
  tkc_tensor_free(t);
  double best = INFINITY;
  for (int r = 0; r < reps; r++) {
    t = make(ctx, in, which);
    double t0 = now_ms();
    tkc_status st = tkc_realize(t);
    double ms = now_ms() - t0;
    tkc_tensor_free(t);
    if (!st && ms < best) best = ms;
  }
  return best;
}

static int wanted(const char *name, int argc, char **argv) {
  int any = 0;
  for (int i = 1; i < argc; i++)
    if (argv[i][0] != '-') any = 1, i = argc;
  if (!any) return 1;
  for (int i = 1; i < argc; i++)
    if (strstr(name, argv[i])) return 1;
  return 0;
}

static void bench_search(const char *dev, int width, int reps, int argc, char **argv) {
  char dir[] = "/tmp/tkc-bench-beam-XXXXXX";
  if (!mkdtemp(dir)) return;
  setenv("TKC_CACHE_DIR", dir, 1);
  tkc_ctx *ctx = tkc_ctx_new(dev);
  inputs in;
  if (!ctx || !make_inputs(ctx, &in)) {
    fprintf(stderr, "bench_beam: %s: %s\n", dev, tkc_last_error());
    tkc_ctx_free(ctx);
    return;
  }
  tkc_ctx_set_progress(ctx, on_progress, NULL);
  for (size_t k = 0; k < sizeof WORK / sizeof *WORK; k++) {
    if (!wanted(WORK[k].name, argc, argv)) continue;
    float *h = NULL, *b = NULL;
    size_t nh = 0, nb = 0;
    tkc_ctx_set_beam(ctx, 0);
    double th = best_ms(ctx, &in, WORK[k].which, reps, &h, &nh);
    tkc_ctx_set_beam(ctx, width);
    search_s = 0;
    double tb = best_ms(ctx, &in, WORK[k].which, reps, &b, &nb);
    int ok = isfinite(th) && isfinite(tb) && nh == nb;
    double scale = 0;
    for (size_t i = 0; ok && i < nh; i++) scale = fmax(scale, fabs(h[i]));
    for (size_t i = 0; ok && i < nh; i++) ok = fabs(h[i] - b[i]) <= 1e-3 * (scale + 1);
    printf("{\"bench\": \"beam\", \"device\": \"%s\", \"workload\": \"%s\", \"heuristics_ms\": %.3f, \"beam_ms\": %.3f, \"beam\": %d, "
           "\"search_s\": %.1f, \"ok\": %s}\n",
           dev, WORK[k].name, th, tb, width, search_s, ok ? "true" : "false");
    fflush(stdout);
    free(h), free(b);
  }
  tkc_ctx_free(ctx);
  char cmd[100];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd)) fprintf(stderr, "bench_beam: could not remove %s\n", dir);
}

static float *host_rand(size_t n, unsigned seed, float scale) {
  float *v = malloc(n * sizeof *v);
  for (size_t i = 0; v && i < n; i++) v[i] = ((float)((seed = seed * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f) * scale;
  return v;
}

/* --first DEV WORKLOAD: this process's first realize, ctx creation to values out (the host data
 * made before: onnxruntime's first run gets its inputs ready-made too) */
static int first_main(const char *dev, const char *which) {
  const int64_t ws[6][2] = {{T_D, T_D}, {T_D, T_D}, {T_D, T_D}, {T_D, T_D}, {T_D, T_FF}, {T_FF, T_D}};
  float *hw[6], *hx = host_rand((size_t)T_S * T_D, 12, 1);
  for (int i = 0; i < 6; i++) hw[i] = host_rand((size_t)(ws[i][0] * ws[i][1]), 13 + (unsigned)i, 0.1f);
  double t0 = now_ms();
  tkc_ctx *ctx = tkc_ctx_new(dev);
  tkc_tensor *r = NULL;
  if (ctx && !strcmp(which, "quickstart")) {
    const float a[6] = {1, 2, 3, 4, 5, 6}, b[12] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1.0f, 1.1f, 1.2f};
    tkc_tensor *ta = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){2, 3}, a), *tb = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){3, 4}, b);
    r = tkc_softmax(tkc_matmul(ta, tb), -1);
  } else if (ctx) {
    tkc_tensor *w[6];
    for (int i = 0; i < 6; i++) w[i] = tkc_tensor_new(ctx, TKC_FLOAT32, 2, ws[i], hw[i]);
    r = bench_transformer(ctx, tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){T_S, T_D}, hx), w);
  }
  size_t n = r ? (size_t)tkc_numel(r) : 0;
  float *v = malloc(n * sizeof *v + 1);
  int ok = r && v && tkc_copy_out(r, v, n * sizeof *v) == TKC_OK;
  double ms = now_ms() - t0;
  free(v);
  tkc_ctx_free(ctx);
  for (int i = 0; i < 6; i++) free(hw[i]);
  free(hx);
  printf("%.2f\n", ok ? ms : -1.0);
  return ok ? 0 : 1;
}

static double run_first(const char *self, const char *dev, const char *which, const char *cache) {
  char out[] = "/tmp/tkc-bench-first-XXXXXX";
  int fd = mkstemp(out);
  if (fd < 0) return -1;
  close(fd);
  char env_cache[300];
  char *env[256];
  int ne = 0;
  for (char **e = environ; *e && ne < 250; e++)
    if (strncmp(*e, "TKC_CACHE_DIR=", 14) && strncmp(*e, "TKC_BEAM=", 9)) env[ne++] = *e;
  snprintf(env_cache, sizeof env_cache, "TKC_CACHE_DIR=%s", cache);
  env[ne++] = env_cache;
  env[ne] = NULL;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_TRUNC, 0600);
  char *argv[] = {(char *)self, (char *)"--first", (char *)dev, (char *)which, NULL};
  pid_t pid;
  double ms = -1;
  int st;
  if (!posix_spawn(&pid, self, &fa, NULL, argv, env) && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st)) {
    FILE *f = fopen(out, "r");
    if (f && fscanf(f, "%lf", &ms) != 1) ms = -1;
    if (f) fclose(f);
  }
  posix_spawn_file_actions_destroy(&fa);
  unlink(out);
  return ms;
}

static void bench_first(const char *self, const char *dev, int argc, char **argv) {
  static const char *const which[2] = {"quickstart", "transformer_128x768"};
  for (int w = 0; w < 2; w++) {
    if (!wanted(which[w], argc, argv)) continue;
    char dir[] = "/tmp/tkc-bench-first-cache-XXXXXX";
    if (!mkdtemp(dir)) return;
    const char *mode[3] = {"off", "cold", "filled"}, *cache[3] = {"", dir, dir};
    for (int m = 0; m < 3; m++) {
      double ms = run_first(self, dev, which[w], cache[m]);
      printf("{\"bench\": \"first_run\", \"device\": \"%s\", \"workload\": \"%s\", \"cache\": \"%s\", \"first_ms\": %.1f}\n", dev, which[w], mode[m], ms);
      fflush(stdout);
    }
    char cmd[100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) fprintf(stderr, "bench_beam: could not remove %s\n", dir);
  }
}

int main(int argc, char **argv) {
  if (argc == 4 && !strcmp(argv[1], "--first")) return first_main(argv[2], argv[3]);
  int reps = getenv("TKC_BENCH_REPS") ? atoi(getenv("TKC_BENCH_REPS")) : 5;
  int width = getenv("TKC_BEAM") && atoi(getenv("TKC_BEAM")) > 0 ? atoi(getenv("TKC_BEAM")) : 4;
  unsetenv("TKC_BEAM"); /* the ctx setting decides */
  const char *only = getenv("TKC_BENCH_DEVICES");
  static const char *const devs[2] = {"CPU", "LLVM"};
  for (int d = 0; d < 2; d++) {
    if ((only && *only && !strstr(only, devs[d])) || !tkc_device_available(devs[d])) continue;
    bench_first(argv[0], devs[d], argc, argv);
    bench_search(devs[d], width, reps < 1 ? 1 : reps, argc, argv);
  }
  return 0;
}
