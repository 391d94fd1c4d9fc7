/* ops_deform_conv.c — DeformConv (2-D). The offsets (and mask) are data: they are read on the host,
 * where each (batch, offset group, kernel tap, output cell) gets the four corners of its bilinear
 * sample (zero outside the image, as GridSample with align_corners in onnx's reference) and their
 * weights, times the mask. X is then sampled with one index_select per offset group, and the
 * sampled columns (N, taps, oH, oW, C) meet the weights in one matmul per conv group. */
#include <math.h>
#include <stdlib.h>
#include "ops_util.h"

tkc_status onnx_build_deform_conv(onnx_node *n) {
  tkc_status s = onnx_need(n, 3);
  if (s) return s;
  tkc_ctx *c = n->m->ctx;
  tkc_tensor *x = onnx_in(n, 0), *w = onnx_in(n, 1), *b = onnx_in(n, 3);
  if (tkc_ndim(x) != 4 || tkc_ndim(w) != 4 || tkc_ndim(onnx_in(n, 2)) != 4) return onnx_node_err(n, TKC_EUNSUPPORTED, "only 2-D DeformConv");
  int64_t N = tkc_dim(x, 0), C = tkc_dim(x, 1), H = tkc_dim(x, 2), W = tkc_dim(x, 3), OC = tkc_dim(w, 0), kh = tkc_dim(w, 2), kw = tkc_dim(w, 3);
  int64_t oh = tkc_dim(onnx_in(n, 2), 2), ow = tkc_dim(onnx_in(n, 2), 3), K = kh * kw;
  int64_t group = onnx_attr_int(n, "group", 1), og = onnx_attr_int(n, "offset_group", 1);
  int cs, cd, cp;
  const int64_t *st = onnx_attr_ints(n, "strides", &cs), *dl = onnx_attr_ints(n, "dilations", &cd), *pd = onnx_attr_ints(n, "pads", &cp);
  int64_t sh = cs >= 2 ? st[0] : 1, sw = cs >= 2 ? st[1] : 1, dh = cd >= 2 ? dl[0] : 1, dw = cd >= 2 ? dl[1] : 1, ph = cp >= 4 ? pd[0] : 0, pw = cp >= 4 ? pd[1] : 0;
  if (group < 1 || og < 1 || C % group || C % og || OC % group || tkc_dim(w, 1) * group != C || tkc_dim(onnx_in(n, 2), 1) != og * 2 * K)
    return onnx_node_err(n, TKC_ESHAPE, "X, W, offset do not match group %lld / offset_group %lld", (long long)group, (long long)og);
  int64_t noff, nmask = 0, cells = N * og * K * oh * ow;
  if (cells * 4 > (1 << 24)) return onnx_node_err(n, TKC_EUNSUPPORTED, "%lld sampling points", (long long)cells);
  double *off = onnx_doubles(n, 2, &noff), *mask = NULL;
  if (!off) return tkc_last_status();
  if (onnx_has(n, 4) && !(mask = onnx_doubles(n, 4, &nmask))) return free(off), tkc_last_status();
  if (noff != 2 * cells || (mask && nmask != cells)) return free(off), free(mask), onnx_node_err(n, TKC_ESHAPE, "offset / mask sizes");
  int64_t *pos = malloc(sizeof(int64_t) * (size_t)(cells * 4));
  double *wt = malloc(sizeof(double) * (size_t)(cells * 4));
  if (!pos || !wt) return free(off), free(mask), free(pos), free(wt), onnx_node_err(n, TKC_ENOMEM, "out of memory");
  /* cells in (n, g, k, oh, ow) order; offset channels (g, k, {dy, dx}), mask channels (g, k) */
  for (int64_t i = 0; i < cells; i++) {
    int64_t xo = i % ow, yo = i / ow % oh, k = i / (ow * oh) % K, g = i / (ow * oh * K) % og, bn = i / (ow * oh * K * og);
    int64_t chan = (g * K + k) * 2, plane = oh * ow, at = yo * ow + xo;
    double y = (double)(yo * sh - ph + (k / kw) * dh) + off[(bn * og * K * 2 + chan) * plane + at];
    double xx = (double)(xo * sw - pw + (k % kw) * dw) + off[(bn * og * K * 2 + chan + 1) * plane + at];
    double m = mask ? mask[(bn * og * K + g * K + k) * plane + at] : 1.0;
    double y0 = floor(y), x0 = floor(xx);
    for (int q = 0; q < 4; q++) {
      int64_t yy = (int64_t)y0 + q / 2, xq = (int64_t)x0 + q % 2;
      double wy = q / 2 ? y - y0 : 1 - (y - y0), wx = q % 2 ? xx - x0 : 1 - (xx - x0);
      int in = yy >= 0 && yy < H && xq >= 0 && xq < W;
      pos[i * 4 + q] = bn * H * W + (in ? yy * W + xq : 0);
      wt[i * 4 + q] = in ? wy * wx * m : 0;
    }
  }
  free(off), free(mask);
  tkc_dtype dt = tkc_dtype_of(x);
  int64_t total = cells * 4, per_g = N * K * oh * ow * 4, cg = C / og;
  tkc_tensor *idx_all = tkc_tensor_new(c, TKC_INT64, 1, &total, pos);
  tkc_tensor *w_all = tkc_cast(tkc_tensor_new(c, TKC_FLOAT64, 1, &total, wt), dt);
  free(pos), free(wt);
  /* (N*og, K*oh*ow*4) -> per offset group g: (N, K, oh, ow, 4) */
  tkc_tensor *idx2 = tkc_reshape(idx_all, 3, (int64_t[]){N, og, per_g / N}), *w2 = tkc_reshape(w_all, 3, (int64_t[]){N, og, per_g / N});
  tkc_tensor *rows = tkc_reshape(tkc_permute(x, (int[]){0, 2, 3, 1}), 2, (int64_t[]){N * H * W, C}); /* (N*H*W, C) */
  tkc_tensor **parts = malloc(sizeof(tkc_tensor *) * (size_t)(og + group));
  if (!parts) return onnx_node_err(n, TKC_ENOMEM, "out of memory");
  for (int64_t g = 0; g < og; g++) {
    int64_t r3[6] = {0, N, g, g + 1, 0, per_g / N};
    tkc_tensor *ig = tkc_reshape(tkc_shrink(idx2, r3), 1, &per_g), *wg = tkc_reshape(tkc_shrink(w2, r3), 6, (int64_t[]){N, K, oh, ow, 4, 1});
    tkc_tensor *v = tkc_index_select(onnx_slice_axis(rows, 1, g * cg, (g + 1) * cg), 0, ig);
    v = tkc_mul(tkc_reshape(v, 6, (int64_t[]){N, K, oh, ow, 4, cg}), wg);
    parts[g] = tkc_sum(v, 1, (int[]){4}, 0); /* (N, K, oh, ow, cg) */
  }
  tkc_tensor *cols = og > 1 ? tkc_cat((int)og, parts, 4) : parts[0];
  cols = tkc_permute(cols, (int[]){0, 2, 3, 1, 4}); /* (N, oh, ow, K, C) */
  int64_t icg = C / group, ocg = OC / group;
  for (int64_t gg = 0; gg < group; gg++) {
    tkc_tensor *cg_cols = tkc_reshape(onnx_slice_axis(cols, 4, gg * icg, (gg + 1) * icg), 3, (int64_t[]){N, oh * ow, K * icg});
    int64_t wr[8] = {gg * ocg, (gg + 1) * ocg, 0, icg, 0, kh, 0, kw};
    tkc_tensor *wg = tkc_reshape(tkc_permute(tkc_shrink(w, wr), (int[]){0, 2, 3, 1}), 2, (int64_t[]){ocg, K * icg});
    parts[gg] = tkc_matmul(cg_cols, tkc_transpose(wg, 0, 1)); /* (N, oh*ow, ocg) */
  }
  tkc_tensor *y = group > 1 ? tkc_cat((int)group, parts, 2) : parts[0];
  free(parts);
  y = tkc_permute(tkc_reshape(y, 4, (int64_t[]){N, oh, ow, OC}), (int[]){0, 3, 1, 2});
  if (b) y = tkc_add(y, tkc_reshape(b, 4, (int64_t[]){1, OC, 1, 1}));
  return onnx_set(n, 0, y);
}
