/* bench_tensor: the tensor API end to end on the workloads of bench/tinygrad_tensor.py (the same
 * workloads on tinygrad 0.10.2, for comparison in the same run):
 *   add_16M (x + y, 16M float32)   sum_16M   softmax_4096 (4096x4096, last axis)
 *   matmul_512   matmul_1024   conv2d_8x16x32x32_32x16x3x3 (no padding, stride 1)
 * One JSON object per workload and device (every available device with a renderer: CPU, LLVM, ...):
 *   kernels           tkc_kernel_count of the graph
 *   schedule_ms       tkc_kernel_count on a fresh graph (schedules it)
 *   codegen_ms        tkc_kernels_source on a fresh graph, for the device's renderer (schedule + lower + render)
 *   first_realize_ms  the first realize: codegen + the C compiler / JIT + the run
 *   kernel_ms         best realize of a fresh identical graph (programs cached: scheduling + launch + run)
 *   gflops / gbps     from kernel_ms;  ok: a spot check of the values against plain C
 * Usage: bench_tensor [workload-substring ...]; TKC_BENCH_REPS (default 5, fewer past 3 s); TKC_BENCH_DEVICES=CPU,LLVM
 * (default: every available device with a renderer). Notes and errors go to stderr. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tkc.h"
#include "tkc/runtime.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

#define N16M (1 << 24)

typedef struct inputs {
  tkc_ctx *ctx;
  tkc_tensor *x, *y, *m, *img, *w, *a[2], *b[2];
  float *hx, *hy, *hm, *ha[2], *hb[2], *himg, *hw; /* host copies for the spot checks */
} inputs;

static float *host_rand(size_t n, unsigned seed) {
  float *p = malloc(n * sizeof *p);
  if (!p) return NULL;
  unsigned s = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    p[i] = (float)(s >> 8) / 16777216.0f;
  }
  return p;
}

static tkc_tensor *upload(tkc_ctx *ctx, float **host, int ndim, const int64_t *shape, unsigned seed) {
  size_t n = 1;
  for (int i = 0; i < ndim; i++) n *= (size_t)shape[i];
  *host = host_rand(n, seed);
  tkc_tensor *t = *host ? tkc_tensor_new(ctx, TKC_FLOAT32, ndim, shape, *host) : NULL;
  if (t && tkc_realize(t) != TKC_OK) t = NULL;
  return t;
}

/* the workloads: build a fresh graph over the (realized) inputs */
typedef struct workload {
  const char *name;
  tkc_tensor *(*make)(inputs *in);
  int (*check)(inputs *in, const float *out); /* 1 = values right */
  double flops, bytes;
  size_t out_elems;
} workload;

static tkc_tensor *mk_add(inputs *in) { return tkc_add(in->x, in->y); }
static tkc_tensor *mk_sum(inputs *in) { return tkc_sum(in->x, 0, NULL, 0); }
static tkc_tensor *mk_softmax(inputs *in) { return tkc_softmax(in->m, -1); }
static tkc_tensor *mk_mm512(inputs *in) { return tkc_matmul(in->a[0], in->b[0]); }
static tkc_tensor *mk_mm1024(inputs *in) { return tkc_matmul(in->a[1], in->b[1]); }
static tkc_tensor *mk_conv(inputs *in) { return tkc_conv2d(in->img, in->w, NULL, 1, 0); }

static int near(double got, double want, double tol) { return fabs(got - want) <= tol * (1 + fabs(want)); }

static int ck_add(inputs *in, const float *o) {
  for (size_t i = 0; i < N16M; i += 65537)
    if (o[i] != in->hx[i] + in->hy[i]) return 0;
  return 1;
}
static int ck_sum(inputs *in, const float *o) {
  double s = 0;
  for (size_t i = 0; i < N16M; i++) s += in->hx[i];
  return near(o[0], s, 1e-4);
}
static int ck_softmax(inputs *in, const float *o) {
  (void)in;
  for (int r = 0; r < 4096; r += 1021) { /* rows sum to 1 */
    double s = 0;
    for (int j = 0; j < 4096; j++) s += o[(size_t)r * 4096 + (size_t)j];
    if (!near(s, 1.0, 1e-4)) return 0;
  }
  return 1;
}
static int ck_mm(const float *a, const float *b, const float *o, int n) {
  for (int i = 0; i < n; i += 97)
    for (int j = 0; j < n; j += 89) {
      double s = 0;
      for (int k = 0; k < n; k++) s += (double)a[(size_t)i * (size_t)n + (size_t)k] * b[(size_t)k * (size_t)n + (size_t)j];
      if (!near(o[(size_t)i * (size_t)n + (size_t)j], s, 1e-4)) return 0;
    }
  return 1;
}
static int ck_mm512(inputs *in, const float *o) { return ck_mm(in->ha[0], in->hb[0], o, 512); }
static int ck_mm1024(inputs *in, const float *o) { return ck_mm(in->ha[1], in->hb[1], o, 1024); }
static int ck_conv(inputs *in, const float *o) {
  for (int n = 0; n < 8; n += 3)
    for (int f = 0; f < 32; f += 7)
      for (int y = 0; y < 30; y += 11)
        for (int x = 0; x < 30; x += 13) {
          double s = 0;
          for (int c = 0; c < 16; c++)
            for (int ky = 0; ky < 3; ky++)
              for (int kx = 0; kx < 3; kx++)
                s += (double)in->himg[((n * 16 + c) * 32 + y + ky) * 32 + x + kx] * in->hw[((f * 16 + c) * 3 + ky) * 3 + kx];
          if (!near(o[((n * 32 + f) * 30 + y) * 30 + x], s, 1e-4)) return 0;
        }
  return 1;
}

static const workload WORK[] = {
    {"add_16M", mk_add, ck_add, 0, 12.0 * N16M, N16M},
    {"sum_16M", mk_sum, ck_sum, 0, 4.0 * N16M, 1},
    {"softmax_4096", mk_softmax, ck_softmax, 0, 8.0 * 4096 * 4096, 4096 * 4096},
    {"matmul_512", mk_mm512, ck_mm512, 2.0 * 512 * 512 * 512, 0, 512 * 512},
    {"matmul_1024", mk_mm1024, ck_mm1024, 2.0 * 1024 * 1024 * 1024, 0, 1024 * 1024},
    {"conv2d_8x16x32x32_32x16x3x3", mk_conv, ck_conv, 2.0 * 8 * 32 * 30 * 30 * 16 * 9, 0, 8 * 32 * 30 * 30},
};
#define NWORK ((int)(sizeof WORK / sizeof WORK[0]))

static int wanted(const workload *w, int argc, char **argv) {
  if (argc < 2) return 1;
  for (int i = 1; i < argc; i++)
    if (strstr(w->name, argv[i])) return 1;
  return 0;
}

static int bench_device(const char *dev, int argc, char **argv, int reps) {
  inputs in;
  memset(&in, 0, sizeof in);
  in.ctx = tkc_ctx_new(dev);
  if (!in.ctx) {
    fprintf(stderr, "bench_tensor: %s: %s\n", dev, tkc_last_error());
    return 1;
  }
  const tkc_renderer *r = tkc_device_renderer(tkc_device_get(dev));
  const char *rname = r ? r->name : "C";
  const int64_t vec[1] = {N16M}, sq[2] = {4096, 4096}, img[4] = {8, 16, 32, 32}, wt[4] = {32, 16, 3, 3};
  in.x = upload(in.ctx, &in.hx, 1, vec, 1);
  in.y = upload(in.ctx, &in.hy, 1, vec, 2);
  in.m = upload(in.ctx, &in.hm, 2, sq, 3);
  for (int i = 0; i < 2; i++) {
    const int64_t s[2] = {512 << i, 512 << i};
    in.a[i] = upload(in.ctx, &in.ha[i], 2, s, 4 + (unsigned)i);
    in.b[i] = upload(in.ctx, &in.hb[i], 2, s, 6 + (unsigned)i);
  }
  in.img = upload(in.ctx, &in.himg, 4, img, 8);
  in.w = upload(in.ctx, &in.hw, 4, wt, 9);
  int status = 0;
  if (!in.x || !in.y || !in.m || !in.a[0] || !in.a[1] || !in.b[0] || !in.b[1] || !in.img || !in.w) {
    fprintf(stderr, "bench_tensor: %s: inputs: %s\n", dev, tkc_last_error());
    status = 1;
  }
  for (int k = 0; k < NWORK && !status; k++) {
    const workload *w = &WORK[k];
    if (!wanted(w, argc, argv)) continue;
    tkc_tensor *g = w->make(&in);
    double t0 = now_ms();
    int kernels = tkc_kernel_count(g);
    double sched = now_ms() - t0;
    tkc_tensor_free(g);
    g = w->make(&in);
    t0 = now_ms();
    char *src = tkc_kernels_source(g, rname);
    double codegen = now_ms() - t0;
    int have_src = src != NULL;
    tkc_free(src);
    t0 = now_ms();
    tkc_status st = tkc_realize(g);
    double first = now_ms() - t0;
    if (st != TKC_OK || kernels < 0 || !have_src) {
      fprintf(stderr, "bench_tensor: %s %s: %s\n", dev, w->name, tkc_last_error());
      printf("{\"impl\": \"tkc-%s\", \"device\": \"%s\", \"workload\": \"%s\", \"error\": \"%s\"}\n", tkc_version(), dev, w->name, tkc_status_str(tkc_last_status()));
      tkc_tensor_free(g);
      status = 1;
      continue;
    }
    float *out = malloc(w->out_elems * sizeof *out);
    int ok = out && tkc_copy_out(g, out, w->out_elems * sizeof *out) == TKC_OK && w->check(&in, out);
    free(out);
    tkc_tensor_free(g);
    double best = INFINITY, spent = 0;
    for (int rep = 0; rep < reps && (rep == 0 || spent < 3000); rep++) { /* slow workloads: fewer reps */
      g = w->make(&in);
      t0 = now_ms();
      st = tkc_realize(g);
      double t = now_ms() - t0;
      tkc_tensor_free(g);
      spent += t;
      if (st == TKC_OK && t < best) best = t;
    }
    printf("{\"impl\": \"tkc-%s\", \"device\": \"%s\", \"workload\": \"%s\", \"kernels\": %d, \"schedule_ms\": %.2f, \"codegen_ms\": %.2f, "
           "\"first_realize_ms\": %.1f, \"kernel_ms\": %.3f",
           tkc_version(), dev, w->name, kernels, sched, codegen, first, best);
    if (w->flops) printf(", \"gflops\": %.1f", w->flops / (best * 1e-3) / 1e9);
    if (w->bytes) printf(", \"gbps\": %.1f", w->bytes / (best * 1e-3) / 1e9);
    printf(", \"ok\": %s}\n", ok ? "true" : "false");
    fflush(stdout);
    if (!ok) status = 1;
  }
  tkc_ctx_free(in.ctx);
  free(in.hx), free(in.hy), free(in.hm), free(in.himg), free(in.hw);
  for (int i = 0; i < 2; i++) free(in.ha[i]), free(in.hb[i]);
  return status;
}

int main(int argc, char **argv) {
  int reps = getenv("TKC_BENCH_REPS") ? atoi(getenv("TKC_BENCH_REPS")) : 5;
  if (reps < 1) reps = 1;
  /* every available device that compiles kernels (INTERP, the reference interpreter, is far too slow
   * for these sizes); the default device when none does */
  const char *devs[16];
  int n = 0;
  const char *only = getenv("TKC_BENCH_DEVICES");
  for (const char *const *d = tkc_device_names(); *d && n < 16; d++) {
    if (only && *only) {
      size_t len = strlen(*d);
      const char *p = strstr(only, *d);
      while (p && !((p == only || p[-1] == ',') && (p[len] == ',' || !p[len]))) p = strstr(p + 1, *d);
      if (!p) continue;
    }
    tkc_device *dv = tkc_device_available(*d) ? tkc_device_get(*d) : NULL;
    if (dv && (tkc_device_renderer(dv) || (only && *only))) devs[n++] = *d;
  }
  tkc_ctx *def = NULL;
  if (!n && (def = tkc_ctx_new(NULL))) devs[n++] = tkc_ctx_device(def);
  int status = 0;
  for (int i = 0; i < n; i++) status |= bench_device(devs[i], argc, argv, reps);
  tkc_ctx_free(def);
  return status;
}
