/* grid_sample.c — GridSample (opset 16, 20), 1 to 3 spatial dims: the grid's values are read on the
 * host, where each output position's taps (their flat input index and weight, after the padding
 * mode) are computed exactly as onnx's reference does; the device gathers the taps and sums them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ops_util.h"

enum { PAD_ZEROS, PAD_BORDER, PAD_REFLECTION };

static double reflect(double x, double lo, double hi) {
  double rng = hi - lo;
  if (rng <= 0) return lo;
  if (x < lo) {
    double dx = lo - x;
    int64_t k = (int64_t)(dx / rng);
    double r = dx - (double)k * rng;
    return k % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    double dx = x - hi;
    int64_t k = (int64_t)(dx / rng);
    double r = dx - (double)k * rng;
    return k % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

/* the input index that integer position i reads along a dim of length d; -1: a zero (padding) */
static int64_t pixel_index(int64_t i, int64_t d, int pad, double lo, double hi) {
  if (pad == PAD_ZEROS) return i >= 0 && i < d ? i : -1;
  if (pad == PAD_BORDER) return i < 0 ? 0 : i >= d ? d - 1 : i;
  int64_t r = (int64_t)reflect((double)i, lo, hi);
  return r < 0 ? 0 : r >= d ? d - 1 : r;
}

static void cubic_coeffs(double x, double *c) {
  double A = -0.75;
  x = fabs(x);
  c[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
  c[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
  c[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
  c[3] = ((A * (2 - x) - 5 * A) * (2 - x) + 8 * A) * (2 - x) - 4 * A;
}

tkc_status onnx_build_grid_sample(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0), *grid = onnx_in(n, 1);
  int nd = tkc_ndim(x), nsp = nd - 2;
  if (nsp < 1 || nsp > 3 || tkc_ndim(grid) != nd || tkc_dim(grid, nd - 1) != nsp || tkc_dim(grid, 0) != tkc_dim(x, 0))
    return onnx_node_err(n, TKC_ESHAPE, "input (N, C, spatial...) and grid (N, out spatial..., %d) expected", nsp);
  const char *mode_s = onnx_attr_str(n, "mode", n->opset >= 20 ? "linear" : "bilinear");
  const char *pad_s = onnx_attr_str(n, "padding_mode", "zeros");
  int mode = !strcmp(mode_s, "nearest") ? 1 : (!strcmp(mode_s, "linear") || !strcmp(mode_s, "bilinear")) ? 2 : (!strcmp(mode_s, "cubic") || !strcmp(mode_s, "bicubic")) ? 4 : 0;
  int pad = !strcmp(pad_s, "zeros") ? PAD_ZEROS : !strcmp(pad_s, "border") ? PAD_BORDER : !strcmp(pad_s, "reflection") ? PAD_REFLECTION : -1;
  if (!mode || pad < 0) return onnx_node_err(n, TKC_EINVAL, "mode '%s', padding_mode '%s'", mode_s, pad_s);
  int ac = (int)onnx_attr_int(n, "align_corners", 0);
  int64_t N = tkc_dim(x, 0), C = tkc_dim(x, 1), dims[3], S = 1, O = 1, taps = 1;
  for (int d = 0; d < nsp; d++) dims[d] = tkc_dim(x, 2 + d), S *= dims[d], O *= tkc_dim(grid, 1 + d), taps *= mode;
  if (N * O * taps > (1 << 24)) return onnx_node_err(n, TKC_EUNSUPPORTED, "%lld taps", (long long)(N * O * taps));
  int64_t cnt;
  double *g = onnx_doubles(n, 1, &cnt);
  if (!g) return tkc_last_status();
  int64_t total = N * O * taps;
  int64_t *idx = malloc(sizeof(int64_t) * (size_t)(total ? total : 1));
  double *w = malloc(sizeof(double) * (size_t)(total ? total : 1));
  if (!idx || !w) return free(g), free(idx), free(w), onnx_node_err(n, TKC_ENOMEM, "out of memory");
  for (int64_t b = 0; b < N; b++)
    for (int64_t o = 0; o < O; o++) {
      const double *gp = g + (b * O + o) * nsp;
      double pos[3], lo[3], hi[3];
      for (int d = 0; d < nsp; d++) { /* the grid's last axis is (x, y[, z]): the dims reversed */
        double v = (float)gp[nsp - 1 - d];
        int64_t L = dims[d];
        pos[d] = (float)(ac ? (v + 1) / 2.0 * (double)(L - 1) : ((v + 1) * (double)L - 1) / 2.0);
        lo[d] = ac ? 0.0 : -0.5, hi[d] = ac ? (double)L - 1 : (double)L - 0.5;
        if (mode == 1) pos[d] = nearbyint(pos[d]);
        if (pos[d] < lo[d] || pos[d] > hi[d]) {
          if (pad == PAD_BORDER) pos[d] = pos[d] < 0 ? 0 : pos[d] > (double)(L - 1) ? (double)(L - 1) : pos[d];
          else if (pad == PAD_REFLECTION) pos[d] = (float)reflect(pos[d], lo[d], hi[d]);
        }
      }
      /* per dim: the integer positions and coefficients of its taps */
      int64_t ti[3][4];
      double tc[3][4];
      for (int d = 0; d < nsp; d++) {
        if (mode == 1) {
          ti[d][0] = (int64_t)pos[d], tc[d][0] = 1; /* truncation, as astype(int32) */
        } else {
          double f = floor(pos[d]), r = pos[d] - f;
          if (mode == 2) ti[d][0] = (int64_t)f, ti[d][1] = (int64_t)f + 1, tc[d][0] = 1 - r, tc[d][1] = r;
          else {
            cubic_coeffs(r, tc[d]);
            for (int k = 0; k < 4; k++) ti[d][k] = (int64_t)f - 1 + k;
          }
        }
      }
      for (int64_t t = 0; t < taps; t++) {
        int64_t rem = t, flat = 0;
        double weight = 1;
        int zero = 0;
        for (int d = nsp - 1; d >= 0; d--) { /* the tap's digit per dim, the last dim fastest */
          int k = (int)(rem % mode);
          rem /= mode;
          int64_t pi = pixel_index(ti[d][k], dims[d], pad, lo[d], hi[d]);
          if (pi < 0) zero = 1;
          weight *= tc[d][k];
          int64_t stride = 1;
          for (int e = d + 1; e < nsp; e++) stride *= dims[e];
          flat += (pi < 0 ? 0 : pi) * stride;
        }
        idx[(b * O + o) * taps + t] = flat;
        w[(b * O + o) * taps + t] = zero ? 0 : weight;
      }
    }
  free(g);
  tkc_ctx *c = n->m->ctx;
  tkc_dtype dt = tkc_dtype_of(x);
  int64_t is[3] = {N, 1, O * taps}, ie[3] = {N, C, O * taps};
  tkc_tensor *it = tkc_expand(tkc_tensor_new(c, TKC_INT64, 3, is, idx), 3, ie);
  tkc_tensor *wt = tkc_cast(tkc_tensor_new(c, TKC_FLOAT64, 3, is, w), onnx_is_float(dt) ? dt : TKC_FLOAT32);
  free(idx), free(w);
  tkc_tensor *picked = tkc_gather(tkc_reshape(x, 3, (int64_t[]){N, C, S}), 2, it);
  tkc_tensor *y = tkc_sum(tkc_reshape(tkc_mul(picked, wt), 4, (int64_t[]){N, C, O, taps}), 1, (int[]){3}, 0);
  int64_t out[5] = {N, C};
  for (int d = 0; d < nsp; d++) out[2 + d] = tkc_dim(grid, 1 + d);
  y = tkc_reshape(y, nd, out);
  if (y && tkc_dtype_of(y) != dt) y = tkc_cast(y, dt);
  return onnx_set(n, 0, y);
}
