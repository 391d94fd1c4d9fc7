/* bench_tensor: the tensor API end to end on the workloads of bench/tinygrad_tensor.py (the same
 * workloads on tinygrad 0.10.2, for comparison in the same run):
 *   add_16M (x + y, 16M float32)   sum_16M   sin_16M (sin(x * 64), 16M float32)   softmax_4096 (4096x4096, last axis)
 *   matmul_512   matmul_1024   matmul_2048   conv2d_8x16x32x32_32x16x3x3 (no padding, stride 1)
 *   embedding_2048x128_of_512 (index_select)  cumsum_1024x1024 (last axis)  cat_4x1024x1024 (axis 0)
 *   max_pool2d_8x64x112x112 (2x2)  layer_norm_4096x4096 (last axis)  gather_1024x1024_k64 (64 per row, axis 1)
 *   scatter_add_2048x128_into_512x128 (axis 0): the model ops of tkc/ops_*.h
 *   transformer_128x768: x[128,768]; q,k,v = x@W (768x768); 12 heads (reshape/permute);
 *     softmax(q@k^T/8)@v; @Wo; MLP 768->3072->768 with x*sigmoid(1.702x)
 * and, in the same run, a plain C loop (impl "c-loop", one thread per core) for add_16M and sum_16M
 * (what memory bandwidth allows) and for sin_16M (libm's sinf per element, as gcc -O2 compiles it).
 * One JSON object per workload and device (every available device with a renderer: CPU, LLVM, ...):
 *   kernels           tkc_kernel_count of the graph
 *   schedule_ms       tkc_kernel_count on a fresh graph (schedules it)
 *   codegen_ms        tkc_kernels_source on a fresh graph, for the device's renderer (schedule + lower + render)
 *   first_realize_ms  the first realize: codegen + the C compiler / JIT + the run
 *   kernel_ms         best realize of a fresh identical graph (programs cached: scheduling + launch + run)
 *   launch_ms         of that realize, the time inside kernel launches only (tkc_ctx_stats: no
 *                     scheduling, no buffer allocation)
 *   gflops / gbps     from kernel_ms;  ok: a spot check of the values against plain C
 * Usage: bench_tensor [workload-substring ...]; TKC_BENCH_REPS (default 5, fewer past 3 s); TKC_BENCH_DEVICES=CPU,LLVM
 * (default: every available device with a renderer). Notes and errors go to stderr. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tkc.h"
#include "tkc/runtime.h"
#include "workloads.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

#define N16M (1 << 24)

typedef struct inputs {
  tkc_ctx *ctx;
  tkc_tensor *x, *y, *m, *img, *w, *a[3], *b[3];
  tkc_tensor *tx, *tw[6]; /* transformer: x, Wq Wk Wv Wo W1 W2 */
  tkc_tensor *emb, *tok, *pimg; /* embedding table (512, 128), token ids (2048), pooling input (8, 64, 112, 112) */
  tkc_tensor *gidx, *sidx, *ssrc; /* gather ids (1024, 64) < 1024; scatter ids (2048, 128) < 512 and values (2048, 128) */
  float *hemb, *hpimg, *hssrc;
  int32_t htok[2048], hgidx[1024 * 64], hsidx[2048 * 128];
  float *hx, *hy, *hm, *ha[3], *hb[3], *himg, *hw, *htx, *htw[6]; /* host copies for the spot checks */
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
static tkc_tensor *mk_sin(inputs *in) { return tkc_sin(tkc_mul(in->x, tkc_scalar(in->ctx, TKC_FLOAT32, 64.0))); }
static tkc_tensor *mk_softmax(inputs *in) { return tkc_softmax(in->m, -1); }
static tkc_tensor *mk_mm512(inputs *in) { return tkc_matmul(in->a[0], in->b[0]); }
static tkc_tensor *mk_mm1024(inputs *in) { return tkc_matmul(in->a[1], in->b[1]); }
static tkc_tensor *mk_mm2048(inputs *in) { return tkc_matmul(in->a[2], in->b[2]); }
static tkc_tensor *mk_conv(inputs *in) { return tkc_conv2d(in->img, in->w, NULL, 1, 0); }

static tkc_tensor *mk_transformer(inputs *in) { return bench_transformer(in->ctx, in->tx, in->tw); }

static int near(double got, double want, double tol) { return fabs(got - want) <= tol * (1 + fabs(want)); }

/* the model ops (tkc/ops_*.h): compositions of the primitives */
static tkc_tensor *mk_embed(inputs *in) { return tkc_index_select(in->emb, 0, in->tok); }
static tkc_tensor *mk_cumsum(inputs *in) { return tkc_cumsum(in->a[1], 1); }
static tkc_tensor *mk_cat(inputs *in) { return tkc_cat(4, (tkc_tensor *const[]){in->a[1], in->b[1], in->a[1], in->b[1]}, 0); }
static tkc_tensor *mk_pool(inputs *in) { return tkc_max_pool2d(in->pimg, (const int[]){2, 2}, NULL, NULL, NULL, 0); }
static tkc_tensor *mk_lnorm(inputs *in) { return tkc_layer_norm(in->m, 1, NULL, NULL, 1e-5); }
static tkc_tensor *mk_gather(inputs *in) { return tkc_gather(in->a[1], 1, in->gidx); }
static tkc_tensor *mk_scatter(inputs *in) { return tkc_scatter_add(in->emb, 0, in->sidx, in->ssrc); }

static int ck_gather(inputs *in, const float *o) {
  for (int i = 0; i < 1024 * 64; i += 7)
    if (o[i] != in->ha[1][i / 64 * 1024 + in->hgidx[i]]) return 0;
  return 1;
}
static int ck_scatter(inputs *in, const float *o) {
  for (int c = 0; c < 128; c += 9) { /* whole columns: each row of it is hit by some of the 2048 ids */
    double col[512];
    for (int r = 0; r < 512; r++) col[r] = in->hemb[r * 128 + c];
    for (int i = 0; i < 2048; i++) col[in->hsidx[i * 128 + c]] += in->hssrc[i * 128 + c];
    for (int r = 0; r < 512; r++)
      if (!near(o[r * 128 + c], col[r], 1e-5)) return 0;
  }
  return 1;
}

static int ck_embed(inputs *in, const float *o) {
  for (int t = 0; t < 2048; t += 37)
    for (int e = 0; e < 128; e += 13)
      if (o[t * 128 + e] != in->hemb[in->htok[t] * 128 + e]) return 0;
  return 1;
}
static int ck_cumsum(inputs *in, const float *o) {
  for (int r = 0; r < 1024; r += 101) {
    double s = 0;
    for (int c = 0; c < 1024; c++) {
      s += in->ha[1][r * 1024 + c];
      if (c % 97 == 0 && !near(o[r * 1024 + c], s, 1e-4)) return 0;
    }
  }
  return 1;
}
static int ck_cat(inputs *in, const float *o) {
  for (size_t i = 0; i < 1024 * 1024; i += 4099)
    if (o[i] != in->ha[1][i] || o[i + 1024 * 1024] != in->hb[1][i] || o[i + 3 * 1024 * 1024] != in->hb[1][i]) return 0;
  return 1;
}
static int ck_pool(inputs *in, const float *o) {
  for (size_t i = 0; i < (size_t)8 * 64 * 56 * 56; i += 9973) {
    size_t x = i % 56, y = i / 56 % 56, nc = i / (56 * 56);
    const float *p = in->hpimg + nc * 112 * 112 + 2 * y * 112 + 2 * x;
    float m = fmaxf(fmaxf(p[0], p[1]), fmaxf(p[112], p[113]));
    if (o[i] != m) return 0;
  }
  return 1;
}
static int ck_lnorm(inputs *in, const float *o) {
  for (int r = 0; r < 4096; r += 511) {
    double mu = 0, var = 0;
    for (int c = 0; c < 4096; c++) mu += in->hm[r * 4096 + c];
    mu /= 4096;
    for (int c = 0; c < 4096; c++) var += (in->hm[r * 4096 + c] - mu) * (in->hm[r * 4096 + c] - mu);
    var /= 4096;
    for (int c = 0; c < 4096; c += 131)
      if (!near(o[r * 4096 + c], (in->hm[r * 4096 + c] - mu) / sqrt(var + 1e-5), 1e-3)) return 0;
  }
  return 1;
}

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
static int ck_sin(inputs *in, const float *o) {
  for (size_t i = 0; i < N16M; i += 65537)
    if (!near(o[i], sin((double)(in->hx[i] * 64.0f)), 1e-6)) return 0;
  return 1;
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
static int ck_mm2048(inputs *in, const float *o) { return ck_mm(in->ha[2], in->hb[2], o, 2048); }

/* c (n x m) = a (n x k) @ b (k x m), double accumulation */
static void ref_mm(const float *a, const float *b, float *c, int n, int k, int m) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      double s = 0;
      for (int p = 0; p < k; p++) s += (double)a[(size_t)i * (size_t)k + (size_t)p] * b[(size_t)p * (size_t)m + (size_t)j];
      c[(size_t)i * (size_t)m + (size_t)j] = (float)s;
    }
}

/* the whole block in plain C (rows of the output compared) */
static int ck_transformer(inputs *in, const float *o) {
  float *q = malloc(sizeof(float) * T_S * T_D * 4), *k = q + T_S * T_D, *v = k + T_S * T_D, *att = v + T_S * T_D;
  float *h = malloc(sizeof(float) * T_S * T_D), *f = malloc(sizeof(float) * T_S * T_FF), *ref = malloc(sizeof(float) * T_S * T_D);
  int ok = q && h && f && ref;
  if (ok) {
    ref_mm(in->htx, in->htw[0], q, T_S, T_D, T_D);
    ref_mm(in->htx, in->htw[1], k, T_S, T_D, T_D);
    ref_mm(in->htx, in->htw[2], v, T_S, T_D, T_D);
    for (int hd = 0; hd < T_H; hd++)
      for (int i = 0; i < T_S; i++) {
        double sc[T_S], mx = -INFINITY, sum = 0;
        for (int j = 0; j < T_S; j++) {
          double s = 0;
          for (int d = 0; d < T_HD; d++) s += (double)q[i * T_D + hd * T_HD + d] * k[j * T_D + hd * T_HD + d];
          sc[j] = s / 8;
          mx = sc[j] > mx ? sc[j] : mx;
        }
        for (int j = 0; j < T_S; j++) sum += sc[j] = exp(sc[j] - mx);
        for (int d = 0; d < T_HD; d++) {
          double s = 0;
          for (int j = 0; j < T_S; j++) s += sc[j] / sum * v[j * T_D + hd * T_HD + d];
          att[i * T_D + hd * T_HD + d] = (float)s;
        }
      }
    ref_mm(att, in->htw[3], h, T_S, T_D, T_D);
    ref_mm(h, in->htw[4], f, T_S, T_D, T_FF);
    for (int i = 0; i < T_S * T_FF; i++) f[i] = (float)(f[i] / (1 + exp(-1.702 * f[i])));
    ref_mm(f, in->htw[5], ref, T_S, T_FF, T_D);
    for (int i = 0; i < T_S * T_D && ok; i++) ok = near(o[i], ref[i], 1e-3);
  }
  free(q), free(h), free(f), free(ref);
  return ok;
}
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
    {"sin_16M", mk_sin, ck_sin, 0, 8.0 * N16M, N16M},
    {"softmax_4096", mk_softmax, ck_softmax, 0, 8.0 * 4096 * 4096, 4096 * 4096},
    {"matmul_512", mk_mm512, ck_mm512, 2.0 * 512 * 512 * 512, 0, 512 * 512},
    {"matmul_1024", mk_mm1024, ck_mm1024, 2.0 * 1024 * 1024 * 1024, 0, 1024 * 1024},
    {"matmul_2048", mk_mm2048, ck_mm2048, 2.0 * 2048 * 2048 * 2048, 0, 2048 * 2048},
    {"conv2d_8x16x32x32_32x16x3x3", mk_conv, ck_conv, 2.0 * 8 * 32 * 30 * 30 * 16 * 9, 0, 8 * 32 * 30 * 30},
    {"transformer_128x768", mk_transformer, ck_transformer,
     T_FLOPS, 0, T_S * T_D},
    {"embedding_2048x128_of_512", mk_embed, ck_embed, 0, 4.0 * 2048 * 128 + 4.0 * 512 * 128, 2048 * 128},
    {"cumsum_1024x1024", mk_cumsum, ck_cumsum, 0, 8.0 * 1024 * 1024, 1024 * 1024},
    {"cat_4x1024x1024", mk_cat, ck_cat, 0, 32.0 * 1024 * 1024, 4 * 1024 * 1024},
    {"max_pool2d_8x64x112x112", mk_pool, ck_pool, 0, 4.0 * 8 * 64 * 112 * 112 * 1.25, 8 * 64 * 56 * 56},
    {"layer_norm_4096x4096", mk_lnorm, ck_lnorm, 0, 8.0 * 4096 * 4096, 4096 * 4096},
    {"gather_1024x1024_k64", mk_gather, ck_gather, 0, 12.0 * 1024 * 64, 1024 * 64},
    {"scatter_add_2048x128_into_512x128", mk_scatter, ck_scatter, 0, 8.0 * 512 * 128 + 8.0 * 2048 * 128, 512 * 128},
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
  int status = 0;
  for (int i = 0; i < 3; i++) {
    const int64_t s[2] = {512 << i, 512 << i};
    in.a[i] = upload(in.ctx, &in.ha[i], 2, s, 4 + 2 * (unsigned)i);
    in.b[i] = upload(in.ctx, &in.hb[i], 2, s, 5 + 2 * (unsigned)i);
    if (!in.a[i] || !in.b[i]) status = 1;
  }
  in.img = upload(in.ctx, &in.himg, 4, img, 10);
  in.w = upload(in.ctx, &in.hw, 4, wt, 11);
  in.tx = upload(in.ctx, &in.htx, 2, (const int64_t[]){T_S, T_D}, 12);
  in.emb = upload(in.ctx, &in.hemb, 2, (const int64_t[]){512, 128}, 20);
  in.pimg = upload(in.ctx, &in.hpimg, 4, (const int64_t[]){8, 64, 112, 112}, 21);
  for (int i = 0; i < 2048; i++) in.htok[i] = (int32_t)((i * 2654435761u >> 7) % 512);
  in.tok = tkc_tensor_new(in.ctx, TKC_INT32, 1, (const int64_t[]){2048}, in.htok);
  for (int i = 0; i < 1024 * 64; i++) in.hgidx[i] = (int32_t)(((unsigned)i * 2654435761u >> 9) % 1024);
  for (int i = 0; i < 2048 * 128; i++) in.hsidx[i] = (int32_t)(((unsigned)i * 2246822519u >> 11) % 512);
  in.gidx = tkc_tensor_new(in.ctx, TKC_INT32, 2, (const int64_t[]){1024, 64}, in.hgidx);
  in.sidx = tkc_tensor_new(in.ctx, TKC_INT32, 2, (const int64_t[]){2048, 128}, in.hsidx);
  in.ssrc = upload(in.ctx, &in.hssrc, 2, (const int64_t[]){2048, 128}, 22);
  if (!in.emb || !in.pimg || !in.tok || tkc_realize(in.tok) || !in.gidx || !in.sidx || !in.ssrc) status = 1;
  for (int i = 0; i < 6; i++) {
    const int64_t s[2] = {i == 5 ? T_FF : T_D, i == 4 ? T_FF : T_D};
    in.tw[i] = upload(in.ctx, &in.htw[i], 2, s, 13 + (unsigned)i);
    if (!in.tw[i]) status = 1;
    for (int64_t j = 0; in.htw[i] && j < s[0] * s[1]; j++) in.htw[i][j] = (in.htw[i][j] - 0.5f) * 0.1f; /* keep activations O(1) */
    if (in.tw[i]) {
      tkc_tensor_free(in.tw[i]);
      tkc_tensor *raw = tkc_tensor_new(in.ctx, TKC_FLOAT32, 2, s, in.htw[i]);
      /* the weights in the layout the matmuls read, once, as onnxruntime prepacks a model's */
      in.tw[i] = raw ? tkc_matmul_weight_layout(raw) : NULL;
      tkc_tensor_free(raw);
      if (!in.tw[i] || tkc_realize(in.tw[i])) status = 1;
    }
  }
  if (status || !in.x || !in.y || !in.m || !in.img || !in.w || !in.tx) {
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
    double best = INFINITY, best_launch = INFINITY, spent = 0;
    for (int rep = 0; rep < reps && (rep == 0 || spent < 3000); rep++) { /* slow workloads: fewer reps */
      g = w->make(&in);
      tkc_stats s0, s1;
      tkc_ctx_stats(in.ctx, &s0);
      t0 = now_ms();
      st = tkc_realize(g);
      double t = now_ms() - t0;
      tkc_ctx_stats(in.ctx, &s1);
      tkc_tensor_free(g);
      spent += t;
      if (st == TKC_OK && t < best) best = t;
      if (st == TKC_OK && (s1.kernel_s - s0.kernel_s) * 1e3 < best_launch) best_launch = (s1.kernel_s - s0.kernel_s) * 1e3;
    }
    printf("{\"impl\": \"tkc-%s\", \"device\": \"%s\", \"workload\": \"%s\", \"kernels\": %d, \"schedule_ms\": %.2f, \"codegen_ms\": %.2f, "
           "\"first_realize_ms\": %.1f, \"kernel_ms\": %.3f, \"launch_ms\": %.3f",
           tkc_version(), dev, w->name, kernels, sched, codegen, first, best, best_launch);
    if (w->flops) printf(", \"gflops\": %.1f", w->flops / (best * 1e-3) / 1e9);
    if (w->bytes) printf(", \"gbps\": %.1f, \"launch_gbps\": %.1f", w->bytes / (best * 1e-3) / 1e9, w->bytes / (best_launch * 1e-3) / 1e9);
    printf(", \"ok\": %s}\n", ok ? "true" : "false");
    fflush(stdout);
    if (!ok) status = 1;
  }
  tkc_ctx_free(in.ctx);
  free(in.hx), free(in.hy), free(in.hm), free(in.himg), free(in.hw), free(in.htx), free(in.hemb), free(in.hpimg), free(in.hssrc);
  for (int i = 0; i < 3; i++) free(in.ha[i]), free(in.hb[i]);
  for (int i = 0; i < 6; i++) free(in.htw[i]);
  return status;
}

/* ---------------------------------------------------------------- the plain C bandwidth loop */

typedef struct bw_part {
  const float *x, *y;
  float *out;
  size_t lo, hi;
  double sum;
} bw_part;

static void *bw_add(void *arg) {
  bw_part *p = arg;
  for (size_t i = p->lo; i < p->hi; i++) p->out[i] = p->x[i] + p->y[i];
  return NULL;
}

static void *bw_sin(void *arg) {
  bw_part *p = arg;
  for (size_t i = p->lo; i < p->hi; i++) p->out[i] = sinf(p->x[i] * 64.0f);
  return NULL;
}

static void *bw_sum(void *arg) { /* eight partial sums: the adds are not one dependency chain */
  bw_part *p = arg;
  float s[8] = {0};
  size_t i = p->lo;
  for (; i + 8 <= p->hi; i += 8)
    for (int k = 0; k < 8; k++) s[k] += p->x[i + (size_t)k];
  for (; i < p->hi; i++) s[0] += p->x[i];
  p->sum = 0;
  for (int k = 0; k < 8; k++) p->sum += s[k];
  return NULL;
}

/* best time of fn over N16M floats split across the online cores (threads started each time, as tkc's are) */
static double bw_time(void *(*fn)(void *), const float *x, const float *y, float *out, int reps) {
  enum { MAXT = 64 };
  long nt = sysconf(_SC_NPROCESSORS_ONLN);
  if (nt < 1) nt = 1;
  if (nt > MAXT) nt = MAXT;
  double best = INFINITY;
  for (int rep = 0; rep < reps; rep++) {
    bw_part parts[MAXT];
    pthread_t th[MAXT];
    double t0 = now_ms();
    for (long i = 0; i < nt; i++) {
      parts[i] = (bw_part){x, y, out, (size_t)N16M * (size_t)i / (size_t)nt, (size_t)N16M * (size_t)(i + 1) / (size_t)nt, 0};
      if (i) pthread_create(&th[i], NULL, fn, &parts[i]);
    }
    fn(&parts[0]);
    for (long i = 1; i < nt; i++) pthread_join(th[i], NULL);
    double t = now_ms() - t0;
    best = t < best ? t : best;
  }
  return best;
}

static void bench_c_loop(int argc, char **argv, int reps) {
  float *x = host_rand(N16M, 1), *y = host_rand(N16M, 2), *out = malloc((size_t)N16M * sizeof *out);
  if (x && y && out) {
    memset(out, 0, (size_t)N16M * sizeof *out); /* touched once, as a reused buffer would be */
    const workload *add = &WORK[0], *sum = &WORK[1], *sn = &WORK[2];
    if (wanted(add, argc, argv)) {
      double t = bw_time(bw_add, x, y, out, reps);
      printf("{\"impl\": \"c-loop\", \"workload\": \"%s\", \"kernel_ms\": %.3f, \"gbps\": %.1f}\n", add->name, t, add->bytes / (t * 1e-3) / 1e9);
    }
    if (wanted(sum, argc, argv)) {
      double t = bw_time(bw_sum, x, y, out, reps);
      printf("{\"impl\": \"c-loop\", \"workload\": \"%s\", \"kernel_ms\": %.3f, \"gbps\": %.1f}\n", sum->name, t, sum->bytes / (t * 1e-3) / 1e9);
    }
    if (wanted(sn, argc, argv)) {
      double t = bw_time(bw_sin, x, y, out, reps);
      printf("{\"impl\": \"c-loop\", \"workload\": \"%s\", \"kernel_ms\": %.3f, \"gbps\": %.1f}\n", sn->name, t, sn->bytes / (t * 1e-3) / 1e9);
    }
    fflush(stdout);
  }
  free(x), free(y), free(out);
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
  bench_c_loop(argc, argv, reps);
  for (int i = 0; i < n; i++) status |= bench_device(devs[i], argc, argv, reps);
  tkc_ctx_free(def);
  return status;
}
