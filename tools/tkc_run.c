/* tkc-run — load an ONNX model, run it, print its outputs' shapes and a summary.
 *
 *   tkc-run model.onnx [--device D] [--input name=file.npy | name=random]... [--runs N] [--output DIR]
 *
 * Inputs not given are random (floats uniform in [0, 1), ints zero; a named dim is bound to 1).
 * --runs N: N more runs after the first, timed (build + realize of the outputs): min and median
 * latency, and the kernels each run launched; then, when the model's graph depends on its input
 * shapes only (tkc_onnx_reads_values), N runs captured once with tkc_jit and replayed (what a
 * program that runs the model many times does). --output DIR: each output as DIR/<name>.npy.
 * TKC_DEBUG works as everywhere. Exit status 0 on success, 1 on an error (printed). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tkc.h"
#include "tkc/onnx.h"

#define MAX_IO 64

/* the model as a tkc_jit function */
static tkc_status run_model(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)ctx;
  return tkc_onnx_run(user, nin, in, nout, out);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static size_t itemsize(tkc_dtype dt) {
  switch (dt) {
  case TKC_BOOL: case TKC_INT8: case TKC_UINT8: case TKC_FLOAT8_E4M3FN: case TKC_FLOAT8_E5M2: return 1;
  case TKC_INT16: case TKC_UINT16: case TKC_FLOAT16: case TKC_BFLOAT16: return 2;
  case TKC_INT32: case TKC_UINT32: case TKC_FLOAT32: return 4;
  default: return 8;
  }
}

static const char *npy_descr(tkc_dtype dt) {
  static const char *d[] = {"|b1", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f2", "<V2", "<f4", "<f8"};
  return dt <= TKC_FLOAT64 ? d[dt] : "?";
}

/* a .npy file (version 1-3, little-endian, C order) as a tensor */
static tkc_tensor *load_npy(tkc_ctx *ctx, const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return fprintf(stderr, "tkc-run: cannot open %s\n", path), NULL;
  unsigned char magic[10];
  tkc_tensor *t = NULL;
  char *hdr = NULL;
  void *data = NULL;
  if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "\x93NUMPY", 6)) goto bad;
  size_t hlen;
  if (magic[6] == 1) {
    if (fread(magic, 1, 2, f) != 2) goto bad;
    hlen = magic[0] | (size_t)magic[1] << 8;
  } else {
    if (fread(magic, 1, 4, f) != 4) goto bad;
    hlen = magic[0] | (size_t)magic[1] << 8 | (size_t)magic[2] << 16 | (size_t)magic[3] << 24;
  }
  if (hlen > 1 << 20 || !(hdr = calloc(1, hlen + 1)) || fread(hdr, 1, hlen, f) != hlen) goto bad;
  const char *descr = strstr(hdr, "'descr'"), *shape = strstr(hdr, "'shape'");
  if (!descr || !shape || strstr(hdr, "'fortran_order': True")) goto bad;
  descr = strchr(descr + 7, '\'');
  if (!descr) goto bad;
  tkc_dtype dt = TKC_VOID;
  for (int k = 0; k <= TKC_FLOAT64; k++)
    if (!strncmp(descr + 1, npy_descr((tkc_dtype)k), 3)) dt = (tkc_dtype)k;
  if (!strncmp(descr + 1, "|u1", 3)) dt = TKC_UINT8;
  if (dt == TKC_VOID) goto bad;
  int64_t dims[8];
  int nd = 0;
  const char *p = strchr(shape, '(');
  if (!p) goto bad;
  for (p++; *p && *p != ')';) {
    while (*p == ' ' || *p == ',') p++;
    if (*p == ')') break;
    if (!isdigit((unsigned char)*p) || nd == 8) goto bad;
    dims[nd++] = strtoll(p, (char **)&p, 10);
  }
  int64_t numel = 1;
  for (int i = 0; i < nd; i++) numel *= dims[i];
  size_t nb = (size_t)numel * itemsize(dt);
  if (!(data = malloc(nb ? nb : 1)) || fread(data, 1, nb, f) != nb) goto bad;
  t = tkc_tensor_new(ctx, dt, nd, dims, data);
  if (!t) fprintf(stderr, "tkc-run: %s: %s\n", path, tkc_last_error());
  goto done;
bad:
  fprintf(stderr, "tkc-run: %s is not a .npy file tkc-run reads (little-endian, C order, a plain dtype)\n", path);
done:
  free(hdr);
  free(data);
  fclose(f);
  return t;
}

static int save_npy(const char *path, tkc_tensor *t) {
  tkc_dtype dt = tkc_dtype_of(t);
  int nd = tkc_ndim(t);
  char shape[256] = "";
  size_t off = 0;
  for (int i = 0; i < nd; i++) off += (size_t)snprintf(shape + off, sizeof shape - off, "%lld,%s", (long long)tkc_dim(t, i), nd > 1 && i == nd - 1 ? "" : "");
  if (nd > 1) shape[off - 1] = 0;
  char hdr[512];
  int hl = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", npy_descr(dt), shape);
  int total = 10 + hl + 1, pad = (64 - total % 64) % 64;
  size_t nb = (size_t)tkc_numel(t) * itemsize(dt);
  void *data = malloc(nb ? nb : 1);
  if (!data || tkc_copy_out(t, data, nb) != TKC_OK) return free(data), 1;
  FILE *f = fopen(path, "wb");
  if (!f) return free(data), 1;
  unsigned short len = (unsigned short)(hl + pad + 1);
  fwrite("\x93NUMPY\x01\x00", 1, 8, f);
  fputc(len & 255, f), fputc(len >> 8, f);
  fwrite(hdr, 1, (size_t)hl, f);
  for (int i = 0; i < pad; i++) fputc(' ', f);
  fputc('\n', f);
  fwrite(data, 1, nb, f);
  free(data);
  return fclose(f) != 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void usage(void) {
  fprintf(stderr, "usage: tkc-run model.onnx [--device D] [--input name=file.npy|name=random]... [--runs N] [--output DIR]\n");
}

int main(int argc, char **argv) {
  const char *model = NULL, *device = NULL, *outdir = NULL;
  const char *given[MAX_IO];
  int ngiven = 0, runs = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--device") && i + 1 < argc) device = argv[++i];
    else if (!strcmp(argv[i], "--input") && i + 1 < argc && ngiven < MAX_IO) given[ngiven++] = argv[++i];
    else if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--output") && i + 1 < argc) outdir = argv[++i];
    else if (argv[i][0] != '-' && !model) model = argv[i];
    else return usage(), 1;
  }
  if (!model || runs < 0) return usage(), 1;
  tkc_ctx *ctx = tkc_ctx_new(device);
  if (!ctx) return fprintf(stderr, "tkc-run: %s\n", tkc_last_error()), 1;
  double t0 = now_s();
  tkc_onnx_model *m = tkc_onnx_load(ctx, model);
  if (!m) return fprintf(stderr, "tkc-run: %s\n", tkc_last_error()), tkc_ctx_free(ctx), 1;
  double t_load = now_s() - t0;
  int nin = tkc_onnx_num_inputs(m), nout = tkc_onnx_num_outputs(m), rc = 0;
  if (nin > MAX_IO || nout > MAX_IO) return fprintf(stderr, "tkc-run: more than %d inputs or outputs\n", MAX_IO), 1;
  tkc_tensor *in[MAX_IO] = {0}, *out[MAX_IO] = {0};
  for (int k = 0; k < ngiven && !rc; k++) { /* every --input names an input of the model */
    const char *eq = strchr(given[k], '=');
    int known = 0;
    for (int i = 0; eq && i < nin && !known; i++) {
      const char *name = tkc_onnx_input_name(m, i);
      known = strlen(name) == (size_t)(eq - given[k]) && !strncmp(given[k], name, (size_t)(eq - given[k]));
    }
    if (!known) {
      fprintf(stderr, "tkc-run: --input %s: %s\n", given[k], eq ? "the model has no input of that name" : "expected name=file.npy or name=random");
      rc = 1;
    }
  }
  for (int i = 0; i < nin && !rc; i++) {
    const char *name = tkc_onnx_input_name(m, i), *file = NULL;
    for (int k = 0; k < ngiven; k++) {
      size_t len = strlen(name);
      if (!strncmp(given[k], name, len) && given[k][len] == '=') file = given[k] + len + 1;
    }
    if (file && strcmp(file, "random")) {
      if (!(in[i] = load_npy(ctx, file))) rc = 1;
      continue;
    }
    tkc_dtype dt;
    int nd;
    int64_t shape[8];
    if (tkc_onnx_input_shape(m, i, &dt, &nd, shape, 8) != TKC_OK || nd < 0) {
      fprintf(stderr, "tkc-run: input '%s' has no known shape: give it with --input %s=file.npy\n", name, name);
      rc = 1;
      break;
    }
    for (int d = 0; d < nd; d++) {
      if (tkc_dim_is_var(shape[d])) tkc_dim_bind(ctx, shape[d], 1), shape[d] = 1;
      if (shape[d] < 0) shape[d] = 1;
    }
    int is_float = dt == TKC_FLOAT16 || dt == TKC_BFLOAT16 || dt == TKC_FLOAT32 || dt == TKC_FLOAT64;
    in[i] = is_float ? tkc_rand(ctx, dt, nd, shape, 1234 + (uint64_t)i) : tkc_full(ctx, dt, nd, shape, 0);
    if (in[i] && tkc_realize(in[i]) != TKC_OK) in[i] = NULL;
    if (!in[i]) rc = 1, fprintf(stderr, "tkc-run: input '%s': %s\n", name, tkc_last_error());
  }
  double t1 = now_s();
  if (!rc && (tkc_onnx_run(m, nin, in, nout, out) != TKC_OK || tkc_realize_all(nout, out) != TKC_OK)) {
    fprintf(stderr, "tkc-run: %s\n", tkc_last_error());
    rc = 1;
  }
  double t_first = now_s() - t1;
  if (!rc) {
    printf("%s: loaded in %.1f ms, first run %.1f ms on %s\n", model, t_load * 1e3, t_first * 1e3, tkc_ctx_device(ctx));
    for (int i = 0; i < nout; i++) {
      tkc_tensor *o = out[i];
      printf("  %s: %s (", tkc_onnx_output_name(m, i), tkc_dtype_name(tkc_dtype_of(o)));
      for (int d = 0; d < tkc_ndim(o); d++) printf("%s%lld", d ? ", " : "", (long long)tkc_dim(o, d));
      int64_t ne = tkc_numel(o);
      double *v = ne > 0 ? malloc(sizeof(double) * (size_t)ne) : NULL;
      tkc_tensor *c = tkc_cast(o, TKC_FLOAT64);
      if (v && c && tkc_copy_out(c, v, sizeof(double) * (size_t)ne) == TKC_OK) {
        double lo = v[0], hi = v[0], sum = 0;
        for (int64_t k = 0; k < ne; k++) lo = v[k] < lo ? v[k] : lo, hi = v[k] > hi ? v[k] : hi, sum += v[k];
        printf(")  min %.6g  max %.6g  mean %.6g  first", lo, hi, sum / (double)ne);
        for (int64_t k = 0; k < ne && k < 4; k++) printf(" %.6g", v[k]);
        printf("\n");
      } else printf(")\n");
      free(v);
      tkc_tensor_free(c);
      if (outdir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.npy", outdir, tkc_onnx_output_name(m, i));
        for (char *p = path + strlen(outdir) + 1; *p; p++)
          if (*p == '/') *p = '_';
        if (save_npy(path, o)) fprintf(stderr, "tkc-run: cannot write %s\n", path), rc = 1;
      }
    }
  }
  if (!rc && runs > 0) {
    double *lat = malloc(sizeof(double) * (size_t)runs);
    tkc_stats s0, s1;
    tkc_ctx_stats(ctx, &s0);
    for (int r = 0; r < runs && !rc; r++) {
      tkc_tensor *o[MAX_IO];
      tkc_scope_begin(ctx);
      double ts = now_s();
      if (tkc_onnx_run(m, nin, in, nout, o) != TKC_OK || tkc_realize_all(nout, o) != TKC_OK) rc = 1, fprintf(stderr, "tkc-run: %s\n", tkc_last_error());
      lat[r] = now_s() - ts;
      tkc_scope_end(ctx);
    }
    tkc_ctx_stats(ctx, &s1);
    if (!rc) {
      qsort(lat, (size_t)runs, sizeof *lat, cmp_double);
      printf("%d runs: min %.3f ms  median %.3f ms  %lld kernels per run (%.3f ms in kernels)\n", runs, lat[0] * 1e3, lat[runs / 2] * 1e3,
             (long long)((s1.kernels - s0.kernels) / runs), (s1.kernel_s - s0.kernel_s) / runs * 1e3);
    }
    tkc_jit *j = !rc && !tkc_onnx_reads_values(m) ? tkc_jit_new(ctx, run_model, m) : NULL;
    for (int r = -1; j && r < runs && !rc; r++) { /* r = -1: the capture */
      tkc_tensor *o[MAX_IO];
      double ts = now_s();
      if (tkc_jit_run(j, in, nin, o, nout) != TKC_OK) rc = 1, fprintf(stderr, "tkc-run: %s\n", tkc_last_error());
      else if (r >= 0) lat[r] = now_s() - ts;
      for (int i = 0; i < nout && !rc; i++) tkc_tensor_free(o[i]);
    }
    if (j && !rc) {
      qsort(lat, (size_t)runs, sizeof *lat, cmp_double);
      printf("%d runs captured (tkc_jit): min %.3f ms  median %.3f ms  %d kernels per run\n", runs, lat[0] * 1e3, lat[runs / 2] * 1e3, tkc_jit_kernels(j));
    }
    tkc_jit_free(j);
    free(lat);
  }
  tkc_onnx_free(m);
  tkc_ctx_free(ctx);
  return rc;
}
