/* ops_roi_align.c — RoiAlign. The regions are data (rois, batch_indices): they are read on the host
 * and, as onnx's reference precomputes them, each output cell's sampling points give four (position,
 * weight) pairs of bilinear interpolation. X then needs one index_select of those positions and a
 * weighted sum (avg: divided by the sample count) or max over the weighted corners (max). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ops_util.h"

tkc_status onnx_build_roi_align(onnx_node *n) {
  tkc_status s = onnx_need(n, 3);
  if (s) return s;
  tkc_ctx *c = n->m->ctx;
  tkc_tensor *x = onnx_in(n, 0);
  if (tkc_ndim(x) != 4) return onnx_node_err(n, TKC_ESHAPE, "X must be (N, C, H, W)");
  int64_t N = tkc_dim(x, 0), C = tkc_dim(x, 1), H = tkc_dim(x, 2), W = tkc_dim(x, 3), nr, nb;
  int64_t oh = onnx_attr_int(n, "output_height", 1), ow = onnx_attr_int(n, "output_width", 1), ratio = onnx_attr_int(n, "sampling_ratio", 0);
  double scale = onnx_attr_float(n, "spatial_scale", 1.0);
  int half_pixel = !strcmp(onnx_attr_str(n, "coordinate_transformation_mode", "half_pixel"), "half_pixel");
  int is_max = !strcmp(onnx_attr_str(n, "mode", "avg"), "max");
  if (oh < 1 || ow < 1 || oh > 4096 || ow > 4096 || ratio < 0 || ratio > 64) return onnx_node_err(n, TKC_EINVAL, "output size / sampling_ratio");
  double *rois = onnx_doubles(n, 1, &nr);
  if (!rois) return tkc_last_status();
  const int64_t *bi = onnx_ints(n, 2, &nb);
  if (!bi || nr != 4 * nb) return free(rois), bi ? onnx_node_err(n, TKC_ESHAPE, "rois must be (R, 4) for R batch indices") : tkc_last_status();
  /* the most samples any roi takes per cell; the ones past a roi's own count repeat its first (weight 0 for avg) */
  int64_t R = nb, S = 1;
  for (int64_t r = 0; r < R; r++) {
    double rh = (rois[4 * r + 3] - rois[4 * r + 1]) * scale, rw = (rois[4 * r + 2] - rois[4 * r]) * scale;
    if (!half_pixel) rh = fmax(rh, 1.0), rw = fmax(rw, 1.0);
    int64_t gh = ratio > 0 ? ratio : (int64_t)ceil(rh / (double)oh), gw = ratio > 0 ? ratio : (int64_t)ceil(rw / (double)ow);
    if (gh * gw > S) S = gh * gw;
    if (bi[r] < 0 || bi[r] >= N || S > 4096) return free(rois), onnx_node_err(n, TKC_EINVAL, "batch index or roi size out of range");
  }
  int64_t cells = R * oh * ow, total = cells * S * 4;
  if (total > (1 << 24)) return free(rois), onnx_node_err(n, TKC_EUNSUPPORTED, "%lld sampling positions", (long long)total);
  int64_t *pos = malloc(sizeof(int64_t) * (size_t)total);
  double *wt = malloc(sizeof(double) * (size_t)total);
  if (!pos || !wt) return free(rois), free(pos), free(wt), onnx_node_err(n, TKC_ENOMEM, "out of memory");
  for (int64_t r = 0; r < R; r++) {
    double off = half_pixel ? 0.5 : 0.0;
    double sw = rois[4 * r] * scale - off, sh = rois[4 * r + 1] * scale - off, ew = rois[4 * r + 2] * scale - off, eh = rois[4 * r + 3] * scale - off;
    double rw = ew - sw, rh = eh - sh;
    if (!half_pixel) rw = fmax(rw, 1.0), rh = fmax(rh, 1.0);
    double bh = rh / (double)oh, bw = rw / (double)ow;
    int64_t gh = ratio > 0 ? ratio : (int64_t)ceil(rh / (double)oh), gw = ratio > 0 ? ratio : (int64_t)ceil(rw / (double)ow);
    double count = (double)(gh * gw > 1 ? gh * gw : 1);
    int64_t base = bi[r] * H * W;
    for (int64_t ph = 0; ph < oh; ph++)
      for (int64_t pw = 0; pw < ow; pw++) {
        int64_t cell = (r * oh + ph) * ow + pw;
        for (int64_t k = 0; k < S; k++) {
          int64_t *p = pos + (cell * S + k) * 4;
          double *w = wt + (cell * S + k) * 4;
          if (k >= gh * gw) { /* padding: the max repeats the first sample, the avg adds nothing */
            memcpy(p, pos + cell * S * 4, sizeof(int64_t) * 4);
            for (int q = 0; q < 4; q++) w[q] = is_max ? wt[cell * S * 4 + q] : 0;
            continue;
          }
          int64_t iy = k / gw, ix = k % gw;
          double y = sh + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
          double xx = sw + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
          if (y < -1.0 || y > (double)H || xx < -1.0 || xx > (double)W) {
            for (int q = 0; q < 4; q++) p[q] = base, w[q] = 0;
            continue;
          }
          y = fmax(y, 0), xx = fmax(xx, 0);
          int64_t yl = (int64_t)y, xl = (int64_t)xx, yh, xh;
          if (yl >= H - 1) yh = yl = H - 1, y = (double)yl;
          else yh = yl + 1;
          if (xl >= W - 1) xh = xl = W - 1, xx = (double)xl;
          else xh = xl + 1;
          double ly = y - (double)yl, lx = xx - (double)xl, hy = 1 - ly, hx = 1 - lx, div = is_max ? 1 : count;
          p[0] = base + yl * W + xl, p[1] = base + yl * W + xh, p[2] = base + yh * W + xl, p[3] = base + yh * W + xh;
          w[0] = hy * hx / div, w[1] = hy * lx / div, w[2] = ly * hx / div, w[3] = ly * lx / div;
        }
      }
  }
  free(rois);
  tkc_dtype dt = tkc_dtype_of(x);
  int64_t ws[5] = {R, oh, ow, S, 4}, flat[2] = {N * H * W, C};
  tkc_tensor *idx = tkc_tensor_new(c, TKC_INT64, 1, &total, pos);
  tkc_tensor *wts = tkc_cast(tkc_tensor_new(c, TKC_FLOAT64, 5, ws, wt), dt);
  free(pos), free(wt);
  /* (N, C, H, W) -> (N*H*W, C) rows, the sampled rows (R, oh, ow, S, 4, C), weighted */
  tkc_tensor *rows = tkc_reshape(tkc_permute(x, (int[]){0, 2, 3, 1}), 2, flat);
  tkc_tensor *v = tkc_mul(tkc_reshape(tkc_index_select(rows, 0, idx), 6, (int64_t[]){R, oh, ow, S, 4, C}), tkc_unsqueeze(wts, 5));
  tkc_tensor *y = is_max ? tkc_max(v, 2, (int[]){3, 4}, 0) : tkc_sum(v, 2, (int[]){3, 4}, 0); /* (R, oh, ow, C) */
  return onnx_set(n, 0, tkc_permute(y, (int[]){0, 3, 1, 2}));
}
