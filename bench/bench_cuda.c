/* bench_cuda: the CUDA device on the workloads that say what a GPU backend is worth, one JSON object
 * per workload (bench/cuda_peers.py prints the same shape for PyTorch, cuBLAS's matmul included):
 *   add_64M          x + y, 64M float32 (bytes: two reads and a write)
 *   sum_64M          sum of 64M float32 to one value (bytes: one read)
 *   matmul_f16_1024  (1024x1024 @ 1024x1024) in float16, tensor cores (mma.sync) when the heuristics pick them
 *   matmul_f16_2048  the same at 2048
 *   matmul_f16_4096  the same at 4096
 * Fields: impl, device, workload, first_realize_ms (codegen + ptx JIT + run), kernel_ms (best time
 * inside the launches over the reps: the device's run time, launches synchronize), realize_ms (best
 * whole realize of a fresh identical graph: scheduling, cached program, launch), gbps or tflops from
 * kernel_ms, mma (the PTX holds mma.sync), ok (a spot check against the host).
 * Without a CUDA device (no GPU or no driver) it prints {"impl", "device", "skipped": why} and exits
 * 0, or 1 when TKC_REQUIRE_CUDA=1 (scripts/gpu-check.sh). Usage: bench_cuda [workload-substring ...];
 * TKC_BENCH_REPS (default 10); TKC_BENCH_DEVICE=CPU runs the same on another device (to check this
 * program where no GPU is). Notes and errors go to stderr; exit 1 when a workload fails. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tkc.h"

#define N64M ((int64_t)1 << 26)

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* n floats in [lo, lo + 1), multiples of 1/64 (exact in float16 too), from a fixed seed */
static float *host_rand(size_t n, unsigned seed, float lo) {
  float *p = malloc(n * sizeof *p);
  if (!p) return NULL;
  unsigned s = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    p[i] = lo + (float)(s >> 26) / 64.0f;
  }
  return p;
}

static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023, bits;
  if (e == 0) return (sign ? -1.0f : 1.0f) * (float)m * 0x1p-24f;
  bits = e == 31 ? sign | 0x7f800000u | (m << 13) : sign | ((e + 112) << 23) | (m << 13);
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* msg as the text of a JSON string: quotes, backslashes and control characters become spaces */
static void json_text(char *out, size_t n, const char *msg) {
  snprintf(out, n, "%s", msg ? msg : "");
  for (char *c = out; *c; c++)
    if (*c == '"' || *c == '\\' || (unsigned char)*c < 32) *c = ' ';
}

typedef struct bench {
  const char *dev;
  tkc_ctx *ctx;
  tkc_tensor *x, *y;            /* 64M float32 */
  float *hx, *hy;
  tkc_tensor *a16[3], *b16[3]; /* 1024, 2048 and 4096 float16 */
  float *ha[3], *hb[3];
  int reps;
} bench;

typedef struct workload {
  const char *name;
  int mm;     /* index into a16/b16, or -1 */
  double bytes, flops;
} workload;

static tkc_tensor *make(bench *b, const workload *w) {
  if (w->mm >= 0) return tkc_matmul(b->a16[w->mm], b->b16[w->mm]);
  if (!strcmp(w->name, "add_64M")) return tkc_add(b->x, b->y);
  return tkc_sum(b->x, 0, NULL, 0);
}

/* the output against the host: a few elements of add and matmul, the whole sum */
static int check(bench *b, const workload *w, tkc_tensor *g) {
  if (w->mm >= 0) {
    int64_t n = 1024 << w->mm;
    uint16_t *out = malloc((size_t)(n * n) * sizeof *out);
    int ok = out && tkc_copy_out(g, out, (size_t)(n * n) * sizeof *out) == TKC_OK;
    for (int k = 0; ok && k < 16; k++) {
      int64_t i = (k * 7919) % n, j = (k * 104729 + 13) % n;
      double ref = 0;
      for (int64_t l = 0; l < n; l++) ref += (double)b->ha[w->mm][i * n + l] * b->hb[w->mm][l * n + j];
      double got = half_to_float(out[i * n + j]);
      if (fabs(got - ref) > 1e-2 * fabs(ref) + 0.1) {
        fprintf(stderr, "bench_cuda: %s [%lld,%lld] = %g, host %g\n", w->name, (long long)i, (long long)j, got, ref);
        ok = 0;
      }
    }
    free(out);
    return ok;
  }
  if (!strcmp(w->name, "add_64M")) {
    float *out = malloc((size_t)N64M * sizeof *out);
    int ok = out && tkc_copy_out(g, out, (size_t)N64M * sizeof *out) == TKC_OK;
    for (int64_t i = 0; ok && i < N64M; i += 4099) ok = out[i] == b->hx[i] + b->hy[i];
    free(out);
    return ok;
  }
  float got = 0;
  if (tkc_copy_out(g, &got, sizeof got) != TKC_OK) return 0;
  double ref = 0;
  for (int64_t i = 0; i < N64M; i++) ref += b->hx[i];
  if (fabs(got - ref) > 1e-4 * fabs(ref)) {
    fprintf(stderr, "bench_cuda: sum_64M = %g, host %g\n", (double)got, ref);
    return 0;
  }
  return 1;
}

static int run(bench *b, const workload *w) {
  tkc_tensor *g = make(b, w);
  char *ptx = tkc_kernels_source(g, "PTX");
  int mma = ptx && strstr(ptx, "mma.sync") != NULL;
  tkc_free(ptx);
  double t0 = now_ms();
  tkc_status st = tkc_realize(g);
  double first = now_ms() - t0;
  if (st != TKC_OK) {
    char why[512];
    json_text(why, sizeof why, tkc_last_error());
    fprintf(stderr, "bench_cuda: %s: %s\n", w->name, tkc_last_error());
    printf("{\"impl\": \"tkc-%s\", \"device\": \"%s\", \"workload\": \"%s\", \"error\": \"%s\", \"why\": \"%s\"}\n", tkc_version(),
           b->dev, w->name, tkc_status_str(st), why);
    fflush(stdout);
    tkc_tensor_free(g);
    return 1;
  }
  int ok = check(b, w, g);
  tkc_tensor_free(g);
  double best = INFINITY, best_realize = INFINITY;
  for (int rep = 0; rep < b->reps; rep++) {
    g = make(b, w);
    tkc_stats s0, s1;
    tkc_ctx_stats(b->ctx, &s0);
    t0 = now_ms();
    st = tkc_realize(g);
    double t = now_ms() - t0;
    tkc_ctx_stats(b->ctx, &s1);
    tkc_tensor_free(g);
    if (st != TKC_OK) break;
    if (t < best_realize) best_realize = t;
    if ((s1.kernel_s - s0.kernel_s) * 1e3 < best) best = (s1.kernel_s - s0.kernel_s) * 1e3;
  }
  printf("{\"impl\": \"tkc-%s\", \"device\": \"%s\", \"workload\": \"%s\", \"first_realize_ms\": %.1f, \"kernel_ms\": %.3f, "
         "\"realize_ms\": %.3f",
         tkc_version(), b->dev, w->name, first, isfinite(best) ? best : -1.0, isfinite(best_realize) ? best_realize : -1.0);
  int timed = best > 0 && isfinite(best); /* (JSON has no inf) */
  if (w->bytes && timed) printf(", \"gbps\": %.1f", w->bytes / (best * 1e-3) / 1e9);
  if (w->flops && timed) printf(", \"tflops\": %.2f", w->flops / (best * 1e-3) / 1e12);
  if (w->flops) printf(", \"mma\": %s", mma ? "true" : "false");
  printf(", \"ok\": %s}\n", ok && st == TKC_OK ? "true" : "false");
  fflush(stdout);
  return !(ok && st == TKC_OK);
}

static int wanted(const char *name, int argc, char **argv) {
  if (argc < 2) return 1;
  for (int i = 1; i < argc; i++)
    if (strstr(name, argv[i])) return 1;
  return 0;
}

/* a float16 (n, n) tensor on the device from host floats (exact in float16); the host copy in *h */
static tkc_tensor *upload_f16(bench *b, float **h, int64_t n, unsigned seed) {
  *h = host_rand((size_t)(n * n), seed, -0.5f);
  if (!*h) return NULL;
  tkc_tensor *f = tkc_tensor_new(b->ctx, TKC_FLOAT32, 2, (const int64_t[]){n, n}, *h);
  tkc_tensor *t = f ? tkc_cast(f, TKC_FLOAT16) : NULL;
  if (t && tkc_realize(t) != TKC_OK) t = NULL;
  return t;
}

int main(int argc, char **argv) {
  const char *req = getenv("TKC_REQUIRE_CUDA"), *dev = getenv("TKC_BENCH_DEVICE");
  if (!dev || !*dev) dev = "CUDA";
  int required = req && !strcmp(req, "1");
  if (!tkc_device_available(dev)) {
    tkc_ctx *probe = tkc_ctx_new(dev); /* NULL: sets the reason */
    char why[512];
    json_text(why, sizeof why, tkc_last_error());
    tkc_ctx_free(probe);
    printf("{\"impl\": \"tkc-%s\", \"device\": \"%s\", \"skipped\": \"%s\"}\n", tkc_version(), dev, why);
    if (required) fprintf(stderr, "bench_cuda: TKC_REQUIRE_CUDA=1 but no %s device: %s\n", dev, why);
    return required;
  }
  const workload work[] = {
      {"add_64M", -1, 3.0 * 4 * N64M, 0},
      {"sum_64M", -1, 4.0 * N64M, 0},
      {"matmul_f16_1024", 0, 0, 2.0 * 1024 * 1024 * 1024},
      {"matmul_f16_2048", 1, 0, 2.0 * 2048 * 2048 * 2048},
      {"matmul_f16_4096", 2, 0, 2.0 * 4096 * 4096 * 4096},
  };
  bench b;
  memset(&b, 0, sizeof b);
  b.dev = dev;
  const char *reps = getenv("TKC_BENCH_REPS");
  b.reps = reps && atoi(reps) > 0 ? atoi(reps) : 10;
  b.ctx = tkc_ctx_new(dev);
  if (!b.ctx) {
    fprintf(stderr, "bench_cuda: %s\n", tkc_last_error());
    return 1;
  }
  int status = 0, failed = 0;
  b.hx = host_rand((size_t)N64M, 1, 0.0f);
  b.hy = host_rand((size_t)N64M, 2, 0.0f);
  if (b.hx && b.hy) {
    b.x = tkc_tensor_new(b.ctx, TKC_FLOAT32, 1, (const int64_t[]){N64M}, b.hx);
    b.y = tkc_tensor_new(b.ctx, TKC_FLOAT32, 1, (const int64_t[]){N64M}, b.hy);
  }
  int inputs_ok = b.x && b.y;
  for (int i = 0; i < 3; i++) {
    b.a16[i] = upload_f16(&b, &b.ha[i], 1024 << i, 3 + 2 * (unsigned)i);
    b.b16[i] = upload_f16(&b, &b.hb[i], 1024 << i, 4 + 2 * (unsigned)i);
    inputs_ok = inputs_ok && b.a16[i] && b.b16[i];
  }
  if (!inputs_ok) {
    fprintf(stderr, "bench_cuda: inputs: %s\n", tkc_last_error());
    status = 1;
  }
  for (size_t k = 0; k < sizeof work / sizeof *work && !status; k++)
    if (wanted(work[k].name, argc, argv) && run(&b, &work[k])) failed = 1;
  tkc_ctx_free(b.ctx);
  free(b.hx), free(b.hy);
  for (int i = 0; i < 3; i++) free(b.ha[i]), free(b.hb[i]);
  return status || failed;
}
