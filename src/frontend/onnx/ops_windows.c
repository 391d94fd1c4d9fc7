/* ops_windows.c — the ops that map positions between an image and its kernel windows: MaxPool's
 * Indices output, MaxUnpool and Col2Im, over 1 to 3 spatial axes.
 *
 * Each kernel offset is one strided view of the (padded) image, taken with an index_select per
 * spatial axis (MaxPool) or laid back with a pad / reshape / shrink per axis (Col2Im); the windows
 * of a test-sized kernel are few, so the graph stays small. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ops_util.h"

#define MAX_SP 3

/* x's positions start, start + step, ... (count of them) along axis */
static tkc_tensor *strided(tkc_ctx *c, tkc_tensor *x, int axis, int64_t start, int64_t step, int64_t count) {
  int64_t *pos = malloc(sizeof(int64_t) * (size_t)(count ? count : 1));
  if (!pos) return NULL;
  for (int64_t i = 0; i < count; i++) pos[i] = start + i * step;
  tkc_tensor *idx = tkc_tensor_new(c, TKC_INT64, 1, &count, pos);
  free(pos);
  return tkc_index_select(x, axis, idx);
}

/* the output size of each spatial axis (ceil_mode as the spec: a last window starting in the end
 * padding is dropped) and the pads of x (.., beginning, end + what the last window needs); -1 when an
 * axis has no output or the kernel / output is too large */
static int window_geometry(tkc_tensor *x, int nsp, const int *k, const int *st, const int *pb, const int *pe, const int *dil, int ceil_mode, int64_t *out,
                           int64_t *pads) {
  int64_t taps = 1, cells = 1;
  for (int d = 0; d < 2 * (nsp + 2); d++) pads[d] = 0;
  for (int i = 0; i < nsp; i++) {
    int64_t len = tkc_dim(x, 2 + i), span = len + pb[i] + pe[i] - (int64_t)dil[i] * (k[i] - 1) - 1;
    out[i] = span < 0 ? 0 : ceil_mode ? (span + st[i] - 1) / st[i] + 1 : span / st[i] + 1;
    if (ceil_mode && out[i] > 0 && (out[i] - 1) * st[i] >= len + pb[i]) out[i]--;
    if (out[i] < 1) return -1;
    int64_t need = (out[i] - 1) * st[i] + (int64_t)dil[i] * (k[i] - 1) + 1, extra = need - (len + pb[i] + pe[i]);
    pads[2 * (2 + i)] = pb[i], pads[2 * (2 + i) + 1] = pe[i] + (extra > 0 ? extra : 0);
    taps *= k[i], cells *= out[i];
  }
  return taps > 4096 || cells > (1 << 24) ? -1 : 0; /* one view per tap: a kernel of thousands is not this path's */
}

/* kernel offset kk's (row-major over the kernel) strided view of the padded xp; off gets the offset */
static tkc_tensor *window_view(tkc_ctx *c, tkc_tensor *xp, int nsp, int64_t kk, const int *k, const int *st, const int *dil, const int64_t *out, int *off) {
  for (int i = nsp - 1; i >= 0; i--) off[i] = (int)(kk % k[i]), kk /= k[i];
  tkc_tensor *v = xp;
  for (int i = 0; i < nsp; i++) v = strided(c, v, 2 + i, (int64_t)off[i] * dil[i], st[i], out[i]);
  return v;
}

/* MaxPool's values and Indices: each kernel offset's strided view of x padded with -inf, the first
 * largest kept; an index is the position's flat number in x (row-major, or with storage_order 1 the
 * spatial axes column-major), batch and channel included. */
tkc_status onnx_max_pool_indices(onnx_node *n, tkc_tensor *x, int nsp, const int *k, const int *st, const int *pb, const int *pe, const int *dil, int ceil_mode) {
  tkc_ctx *c = n->m->ctx;
  if (nsp < 1 || nsp > MAX_SP) return onnx_node_err(n, TKC_EUNSUPPORTED, "%d spatial dims", nsp);
  int nd = nsp + 2, col_major = (int)onnx_attr_int(n, "storage_order", 0);
  int64_t len[MAX_SP], out[MAX_SP], pads[2 * (MAX_SP + 2)], sp_total = 1, n_out = 1, nk = 1;
  if (window_geometry(x, nsp, k, st, pb, pe, dil, ceil_mode, out, pads)) return onnx_node_err(n, TKC_EINVAL, "no output along a spatial axis, or over 4096 kernel taps");
  for (int i = 0; i < nsp; i++) len[i] = tkc_dim(x, 2 + i), sp_total *= len[i], n_out *= out[i], nk *= k[i];
  tkc_tensor *xp = tkc_pad(x, pads, -INFINITY), *best = NULL, *bi = NULL;
  int64_t *flat = malloc(sizeof(int64_t) * (size_t)n_out);
  if (!flat) return onnx_node_err(n, TKC_ENOMEM, "out of memory");
  for (int64_t kk = 0; kk < nk; kk++) {
    int off[MAX_SP];
    tkc_tensor *v = window_view(c, xp, nsp, kk, k, st, dil, out, off);
    for (int64_t o = 0; o < n_out; o++) { /* the input position of output o at this offset (padding gives out-of-range ones, never chosen) */
      int64_t r = o, pos[MAX_SP], f = 0;
      for (int i = nsp - 1; i >= 0; i--) pos[i] = (r % out[i]) * st[i] + (int64_t)off[i] * dil[i] - pb[i], r /= out[i];
      if (col_major)
        for (int i = nsp - 1; i >= 0; i--) f = f * len[i] + pos[i];
      else
        for (int i = 0; i < nsp; i++) f = f * len[i] + pos[i];
      flat[o] = f;
    }
    tkc_tensor *iv = tkc_tensor_new(c, TKC_INT64, nsp, out, flat);
    if (!best) best = v, bi = iv;
    else {
      tkc_tensor *take = tkc_gt(v, best);
      best = tkc_where(take, v, best), bi = tkc_where(take, iv, bi);
    }
  }
  free(flat);
  int64_t bc[ONNX_MAX_DIMS];
  for (int d = 0; d < nd; d++) bc[d] = d < 2 ? tkc_dim(x, d) : 1;
  tkc_tensor *base = tkc_reshape(tkc_arange(c, TKC_INT64, 0, (double)(bc[0] * bc[1] * sp_total), (double)sp_total), nd, bc);
  tkc_status s = onnx_set(n, 0, best);
  return s ? s : onnx_set(n, 1, tkc_add(bi, base));
}

/* the sum over each (dilated) window of x padded with zeros: LpPool's dilated and 3-D forms */
tkc_tensor *onnx_window_sum(onnx_node *n, tkc_tensor *x, int nsp, const int *k, const int *st, const int *pb, const int *pe, const int *dil, int ceil_mode) {
  int64_t out[MAX_SP], pads[2 * (MAX_SP + 2)], nk = 1;
  if (nsp < 1 || nsp > MAX_SP) return onnx_node_err(n, TKC_EUNSUPPORTED, "%d spatial dims", nsp), NULL;
  if (window_geometry(x, nsp, k, st, pb, pe, dil, ceil_mode, out, pads)) return onnx_node_err(n, TKC_EINVAL, "no output along a spatial axis, or over 4096 kernel taps"), NULL;
  for (int i = 0; i < nsp; i++) nk *= k[i];
  tkc_tensor *xp = tkc_pad(x, pads, 0), *sum = NULL;
  for (int64_t kk = 0; kk < nk; kk++) {
    int off[MAX_SP];
    tkc_tensor *v = window_view(n->m->ctx, xp, nsp, kk, k, st, dil, out, off);
    sum = sum ? tkc_add(sum, v) : v;
  }
  return sum;
}

/* MaxUnpool: zeros of the inferred shape (each spatial axis (in - 1) * stride - pads + kernel) with
 * x's values at their indices, as one scatter over the flat output; an output_shape given pads (or
 * cuts) that at the end of each axis, as onnx's reference does. */
tkc_status onnx_build_max_unpool(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0), *idx = onnx_in(n, 1);
  int nd = tkc_ndim(x), nsp = nd - 2, ck, cs, cp;
  const int64_t *ks = onnx_attr_ints(n, "kernel_shape", &ck), *st = onnx_attr_ints(n, "strides", &cs), *pd = onnx_attr_ints(n, "pads", &cp);
  if (nsp < 1 || ck != nsp || (cs >= 0 && cs != nsp) || (cp >= 0 && cp != 2 * nsp)) return onnx_node_err(n, TKC_EINVAL, "kernel_shape / strides / pads do not match %d spatial dims", nsp);
  int64_t sh[ONNX_MAX_DIMS], want[ONNX_MAX_DIMS], total = 1;
  for (int d = 0; d < nd; d++) {
    int i = d - 2;
    sh[d] = d < 2 ? tkc_dim(x, d) : (tkc_dim(x, d) - 1) * (cs >= 0 ? st[i] : 1) - (cp >= 0 ? pd[i] + pd[i + nsp] : 0) + ks[i];
    if (sh[d] < 1 || sh[d] > (1 << 24)) return onnx_node_err(n, TKC_EINVAL, "an output dim of %lld", (long long)sh[d]);
    total *= sh[d];
  }
  memcpy(want, sh, sizeof want);
  if (onnx_has(n, 2)) {
    int64_t cnt;
    const int64_t *os = onnx_ints(n, 2, &cnt);
    if (!os) return tkc_last_status();
    if (cnt != nd) return onnx_node_err(n, TKC_EINVAL, "output_shape of %lld dims for %d", (long long)cnt, nd);
    for (int d = 0; d < nd; d++)
      if ((want[d] = os[d]) < 1 || os[d] > (1 << 24)) return onnx_node_err(n, TKC_EINVAL, "an output dim of %lld", (long long)os[d]);
  }
  int64_t ne = tkc_numel(x), pads[2 * ONNX_MAX_DIMS] = {0}, rng[2 * ONNX_MAX_DIMS];
  tkc_tensor *zeros = tkc_full(n->m->ctx, tkc_dtype_of(x), 1, &total, 0);
  tkc_tensor *r = tkc_scatter(zeros, 0, tkc_reshape(tkc_cast(idx, TKC_INT64), 1, &ne), tkc_reshape(x, 1, &ne));
  r = tkc_reshape(r, nd, sh);
  for (int d = 0; d < nd; d++) {
    pads[2 * d + 1] = want[d] > sh[d] ? want[d] - sh[d] : 0;
    rng[2 * d] = 0, rng[2 * d + 1] = want[d];
  }
  return onnx_set(n, 0, tkc_shrink(tkc_pad(r, pads, 0), rng));
}

/* x's axis of size m laid out at stride step from position before, in a zero axis of size total */
static tkc_tensor *spread(tkc_tensor *x, int axis, int64_t step, int64_t before, int64_t total) {
  int nd = tkc_ndim(x);
  int64_t m = tkc_dim(x, axis), sh[ONNX_MAX_DIMS + 1], pads[2 * (ONNX_MAX_DIMS + 1)] = {0}, rng[2 * ONNX_MAX_DIMS];
  if (step > 1) { /* (.., m, ..) -> (.., m, step) with zeros after each -> (.., m * step, ..), cut to (m - 1) * step + 1 */
    x = tkc_unsqueeze(x, axis + 1);
    pads[2 * (axis + 1) + 1] = step - 1;
    x = tkc_pad(x, pads, 0);
    for (int d = 0; d < nd; d++) sh[d] = d == axis ? m * step : tkc_dim(x, d + (d > axis));
    x = tkc_reshape(x, nd, sh);
    for (int d = 0; d < nd; d++) rng[2 * d] = 0, rng[2 * d + 1] = d == axis ? (m - 1) * step + 1 : tkc_dim(x, d);
    x = tkc_shrink(x, rng);
  }
  int64_t p[2 * ONNX_MAX_DIMS] = {0}, used = (m - 1) * step + 1;
  p[2 * axis] = before, p[2 * axis + 1] = total - before - used;
  return tkc_pad(x, p, 0);
}

/* Col2Im: input (N, C * prod(block), L) of L blocks; each block offset's (N, C, blocks...) slice is
 * spread at the strides into the padded image and the slices summed; the pads are cut off. */
tkc_status onnx_build_col2im(onnx_node *n) {
  tkc_status s = onnx_need(n, 3);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int64_t ni, nb;
  const int64_t *img = onnx_ints(n, 1, &ni);
  if (!img) return tkc_last_status();
  const int64_t *blk = onnx_ints(n, 2, &nb);
  if (!blk) return tkc_last_status();
  int nsp = (int)ni, cd, cp, cs;
  if (nsp < 1 || nsp > MAX_SP || nb != ni || tkc_ndim(x) != 3) return onnx_node_err(n, TKC_EINVAL, "image_shape / block_shape / input rank");
  const int64_t *dl = onnx_attr_ints(n, "dilations", &cd), *pd = onnx_attr_ints(n, "pads", &cp), *sd = onnx_attr_ints(n, "strides", &cs);
  if ((cd >= 0 && cd != nsp) || (cp >= 0 && cp != 2 * nsp) || (cs >= 0 && cs != nsp)) return onnx_node_err(n, TKC_EINVAL, "dilations / pads / strides");
  int64_t N = tkc_dim(x, 0), kprod = 1, L = 1, cnt[MAX_SP], padded[MAX_SP], dil[MAX_SP], st[MAX_SP], pb[MAX_SP];
  for (int i = 0; i < nsp; i++) {
    dil[i] = cd >= 0 ? dl[i] : 1, st[i] = cs >= 0 ? sd[i] : 1, pb[i] = cp >= 0 ? pd[i] : 0;
    padded[i] = img[i] + pb[i] + (cp >= 0 ? pd[i + nsp] : 0);
    if (blk[i] < 1 || dil[i] < 1 || st[i] < 1 || img[i] < 1 || img[i] > (1 << 20)) return onnx_node_err(n, TKC_EINVAL, "block / dilation / stride / image size");
    cnt[i] = (padded[i] - dil[i] * (blk[i] - 1) - 1) / st[i] + 1;
    if (cnt[i] < 1) return onnx_node_err(n, TKC_EINVAL, "no block fits");
    kprod *= blk[i], L *= cnt[i];
  }
  if (tkc_dim(x, 1) % kprod || tkc_dim(x, 2) != L) return onnx_node_err(n, TKC_ESHAPE, "input (%lld, %lld) does not hold %lld blocks of %lld", (long long)tkc_dim(x, 1), (long long)tkc_dim(x, 2), (long long)L, (long long)kprod);
  int64_t C = tkc_dim(x, 1) / kprod, sh[2 + 2 * MAX_SP], vs[2 + MAX_SP];
  sh[0] = N, sh[1] = C, vs[0] = N, vs[1] = C;
  for (int i = 0; i < nsp; i++) sh[2 + i] = blk[i], sh[2 + nsp + i] = cnt[i], vs[2 + i] = cnt[i];
  tkc_tensor *xb = tkc_reshape(x, 2 + 2 * nsp, sh), *sum = NULL;
  for (int64_t kk = 0; kk < kprod; kk++) {
    int64_t off[MAX_SP], rng[2 * (2 + 2 * MAX_SP)];
    for (int i = nsp - 1, r = (int)kk; i >= 0; i--) off[i] = r % blk[i], r /= (int)blk[i];
    for (int d = 0; d < 2 + 2 * nsp; d++) rng[2 * d] = 0, rng[2 * d + 1] = sh[d];
    for (int i = 0; i < nsp; i++) rng[2 * (2 + i)] = off[i], rng[2 * (2 + i) + 1] = off[i] + 1;
    tkc_tensor *v = tkc_reshape(tkc_shrink(xb, rng), 2 + nsp, vs);
    for (int i = 0; i < nsp; i++) v = spread(v, 2 + i, st[i], off[i] * dil[i], padded[i]);
    sum = sum ? tkc_add(sum, v) : v;
  }
  int64_t crop[2 * (2 + MAX_SP)] = {0, N, 0, C};
  for (int i = 0; i < nsp; i++) crop[2 * (2 + i)] = pb[i], crop[2 * (2 + i) + 1] = pb[i] + img[i];
  return onnx_set(n, 0, tkc_shrink(sum, crop));
}

/* ConvTranspose over nsp spatial axes without pads: each kernel offset's channel matmul of x with
 * that tap of w, spread at the strides from offset * dilation into the full output, summed; groups
 * one after the other. The caller crops the pads. */
tkc_tensor *onnx_conv_transpose_full(onnx_node *n, tkc_tensor *x, tkc_tensor *w, int nsp, const int *st, const int *dil, int group) {
  int nd = nsp + 2, to_last[ONNX_MAX_DIMS], to_second[ONNX_MAX_DIMS];
  if (nsp < 1 || nsp > MAX_SP || group < 1 || tkc_dim(x, 1) % group || tkc_dim(w, 0) != tkc_dim(x, 1))
    return onnx_node_err(n, TKC_ESHAPE, "input and weights do not match group %d", group), NULL;
  int64_t cg = tkc_dim(x, 1) / group, og = tkc_dim(w, 1), nk = 1, full[MAX_SP];
  int k[MAX_SP];
  for (int i = 0; i < nsp; i++) {
    k[i] = (int)tkc_dim(w, 2 + i), nk *= k[i];
    full[i] = (tkc_dim(x, 2 + i) - 1) * st[i] + (int64_t)(k[i] - 1) * dil[i] + 1;
  }
  for (int d = 0; d < nd; d++) { /* (N, C, sp..) <-> (N, sp.., C) */
    to_last[d] = d == 0 ? 0 : d == nd - 1 ? 1 : d + 1;
    to_second[d] = d == 0 ? 0 : d == 1 ? nd - 1 : d - 1;
  }
  tkc_tensor *groups[64];
  if (group > 64) return onnx_node_err(n, TKC_EUNSUPPORTED, "%d groups", group), NULL;
  for (int g = 0; g < group; g++) {
    tkc_tensor *xg = tkc_permute(onnx_slice_axis(x, 1, g * cg, (g + 1) * cg), to_last), *wg = onnx_slice_axis(w, 0, g * cg, (g + 1) * cg), *sum = NULL;
    for (int64_t kk = 0; kk < nk; kk++) {
      int off[MAX_SP];
      tkc_tensor *tap = wg;
      for (int i = nsp - 1, r = (int)kk; i >= 0; i--) off[i] = r % k[i], r /= k[i];
      for (int i = 0; i < nsp; i++) tap = onnx_slice_axis(tap, 2 + i, off[i], off[i] + 1);
      tkc_tensor *v = tkc_permute(tkc_matmul(xg, tkc_reshape(tap, 2, (int64_t[]){cg, og})), to_second); /* (N, og, in..) */
      for (int i = 0; i < nsp; i++) v = spread(v, 2 + i, st[i], (int64_t)off[i] * dil[i], full[i]);
      sum = sum ? tkc_add(sum, v) : v;
    }
    groups[g] = sum;
  }
  return group > 1 ? tkc_cat(group, groups, 1) : groups[0];
}
