/* ops_nn.c — the op table's builders for Gemm, convolutions, pooling and normalization: the ONNX
 * attributes (auto_pad, asymmetric pads, 1-D forms) mapped onto tkc's 2-D ops. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ops_util.h"

tkc_status onnx_build_gemm(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *a = onnx_in(n, 0), *b = onnx_in(n, 1);
  tkc_ctx *c = n->m->ctx;
  if (onnx_attr_int(n, "transA", 0)) a = tkc_transpose(a, 0, 1);
  if (onnx_attr_int(n, "transB", 0)) b = tkc_transpose(b, 0, 1);
  double alpha = onnx_attr_float(n, "alpha", 1.0), beta = onnx_attr_float(n, "beta", 1.0);
  tkc_dtype dt = tkc_dtype_of(a);
  tkc_tensor *r = tkc_matmul(a, b);
  if (alpha != 1.0) r = tkc_mul(r, tkc_scalar(c, dt, alpha));
  if (onnx_has(n, 2)) {
    tkc_tensor *cc = onnx_in(n, 2);
    r = tkc_add(r, beta != 1.0 ? tkc_mul(cc, tkc_scalar(c, dt, beta)) : cc);
  }
  return onnx_set(n, 0, r);
}

/* the spatial attributes of a conv or pool over nsp spatial dims of x with kernel k */
typedef struct spatial {
  int nsp;
  int k[3], stride[3], dil[3];
  int pb[3], pe[3]; /* pads at the beginning / end of each spatial axis */
} spatial;

static tkc_status read_spatial_n(onnx_node *n, tkc_tensor *x, const int64_t *kernel, spatial *sp, int allow_dilation, int max_nsp) {
  int nd = tkc_ndim(x);
  sp->nsp = nd - 2;
  if (sp->nsp < 1 || sp->nsp > max_nsp) return onnx_node_err(n, TKC_EUNSUPPORTED, "%d spatial dims (1 to %d supported)", sp->nsp, max_nsp);
  int c;
  const int64_t *st = onnx_attr_ints(n, "strides", &c);
  if (c >= 0 && c != sp->nsp) return onnx_node_err(n, TKC_EINVAL, "strides has %d entries", c);
  int cd;
  const int64_t *dl = onnx_attr_ints(n, "dilations", &cd);
  if (cd >= 0 && cd != sp->nsp) return onnx_node_err(n, TKC_EINVAL, "dilations has %d entries", cd);
  int cp;
  const int64_t *pd = onnx_attr_ints(n, "pads", &cp);
  if (cp >= 0 && cp != 2 * sp->nsp) return onnx_node_err(n, TKC_EINVAL, "pads has %d entries", cp);
  const char *ap = onnx_attr_str(n, "auto_pad", "NOTSET");
  const int64_t big = 1 << 24;
  for (int i = 0; i < sp->nsp; i++) {
    int64_t k = kernel[i], stv = c >= 0 ? st[i] : 1, dv = cd >= 0 ? dl[i] : 1, pb = cp >= 0 ? pd[i] : 0, pe = cp >= 0 ? pd[i + sp->nsp] : 0;
    if (k < 1 || k > big || stv < 1 || stv > big || dv < 1 || dv > big || pb < 0 || pb > big || pe < 0 || pe > big)
      return onnx_node_err(n, TKC_EINVAL, "bad kernel/stride/dilation/pads");
    sp->k[i] = (int)k, sp->stride[i] = (int)stv, sp->dil[i] = (int)dv, sp->pb[i] = (int)pb, sp->pe[i] = (int)pe;
    if (!allow_dilation && sp->dil[i] != 1) return onnx_node_err(n, TKC_EUNSUPPORTED, "dilations");
    if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
      int64_t in = tkc_dim(x, 2 + i), out = (in + sp->stride[i] - 1) / sp->stride[i];
      int64_t total = (out - 1) * sp->stride[i] + (int64_t)(sp->k[i] - 1) * sp->dil[i] + 1 - in;
      if (total < 0) total = 0;
      int lo = (int)(total / 2), hi = (int)(total - total / 2);
      sp->pb[i] = ap[5] == 'U' ? lo : hi;
      sp->pe[i] = ap[5] == 'U' ? hi : lo;
    } else if (!strcmp(ap, "VALID")) sp->pb[i] = sp->pe[i] = 0;
    else if (strcmp(ap, "NOTSET")) return onnx_node_err(n, TKC_EINVAL, "auto_pad '%s'", ap);
  }
  return TKC_OK;
}

static tkc_status read_spatial(onnx_node *n, tkc_tensor *x, const int64_t *kernel, spatial *sp, int allow_dilation) {
  return read_spatial_n(n, x, kernel, sp, allow_dilation, 2);
}

tkc_status onnx_build_conv(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0), *w = onnx_in(n, 1), *b = onnx_in(n, 2);
  int64_t k[2] = {1, 1};
  for (int i = 2; i < tkc_ndim(w) && i < 4; i++) k[i - 2] = tkc_dim(w, i);
  spatial sp;
  if ((s = read_spatial(n, x, k, &sp, 1))) return s;
  int groups = (int)onnx_attr_int(n, "group", 1);
  if (sp.nsp == 1) return onnx_set(n, 0, tkc_conv1d(x, w, b, sp.stride[0], sp.pb[0], sp.pe[0], sp.dil[0], groups));
  int pad[4] = {sp.pb[0], sp.pe[0], sp.pb[1], sp.pe[1]};
  return onnx_set(n, 0, tkc_conv2d_ex(x, w, b, sp.stride, pad, sp.dil, groups));
}

/* ConvTranspose's window of each spatial axis of the full output r: [pad_begin, full + output_padding -
 * pad_end), padding its end (output_padding, negative pads) before the crop; NULL + error */
static tkc_tensor *transpose_window(onnx_node *n, tkc_tensor *r, int nsp, const int64_t *pb, const int64_t *pe, const int64_t *full, const int64_t *opad) {
  int64_t pads[2 * ONNX_MAX_DIMS] = {0}, rng[2 * ONNX_MAX_DIMS] = {0, tkc_dim(r, 0), 0, tkc_dim(r, 1)};
  for (int i = 0; i < nsp; i++) {
    int64_t lo = pb[i], hi = full[i] + opad[i] - pe[i];
    if (hi <= lo) return onnx_node_err(n, TKC_EINVAL, "an output size of %lld", (long long)(hi - lo)), NULL;
    pads[4 + 2 * i] = lo < 0 ? -lo : 0, pads[5 + 2 * i] = hi > full[i] ? hi - full[i] : 0;
    rng[4 + 2 * i] = lo + pads[4 + 2 * i], rng[5 + 2 * i] = hi + pads[4 + 2 * i];
  }
  return tkc_shrink(tkc_pad(r, pads, 0), rng);
}

/* ConvTranspose: the full transposed convolution (no pads), then per spatial axis the window
 * [pad_begin, full + output_padding - pad_end) of it (zeros past its end), then the bias. output_shape
 * and auto_pad SAME_* give the pads as onnx's spec computes them. 1-D runs as 2-D over (.., 1, L). */
tkc_status onnx_build_conv_transpose(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0), *w = onnx_in(n, 1), *b = onnx_in(n, 2);
  int nd = tkc_ndim(x), nsp = nd - 2;
  if (nsp < 1 || nsp > 3) return onnx_node_err(n, TKC_EUNSUPPORTED, "%d spatial dims (1 to 3 supported)", nsp);
  if (tkc_ndim(w) != nd) return onnx_node_err(n, TKC_ESHAPE, "weights of %d dims for a %d-D input", tkc_ndim(w), nd);
  int c, cs, cd, cp, co, cos_;
  const int64_t *st = onnx_attr_ints(n, "strides", &cs), *dl = onnx_attr_ints(n, "dilations", &cd), *pd = onnx_attr_ints(n, "pads", &cp);
  const int64_t *op = onnx_attr_ints(n, "output_padding", &co), *os = onnx_attr_ints(n, "output_shape", &cos_);
  (void)c;
  if ((cs >= 0 && cs != nsp) || (cd >= 0 && cd != nsp) || (cp >= 0 && cp != 2 * nsp) || (co >= 0 && co != nsp) || (cos_ >= 0 && cos_ != nsp))
    return onnx_node_err(n, TKC_EINVAL, "strides/dilations/pads/output_padding/output_shape do not match %d spatial dims", nsp);
  const char *ap = onnx_attr_str(n, "auto_pad", "NOTSET");
  int stride[3] = {1, 1, 1}, dil[3] = {1, 1, 1}, zero2[2] = {0, 0};
  int64_t pb[3] = {0, 0, 0}, pe[3] = {0, 0, 0}, opad[3] = {0, 0, 0}, full[3], in[3], k[3];
  for (int i = 0; i < nsp; i++) {
    int64_t sv = cs >= 0 ? st[i] : 1, dv = cd >= 0 ? dl[i] : 1;
    if (sv < 1 || sv > (1 << 20) || dv < 1 || dv > (1 << 20)) return onnx_node_err(n, TKC_EINVAL, "strides/dilations");
    stride[i] = (int)sv, dil[i] = (int)dv;
    in[i] = tkc_dim(x, 2 + i), k[i] = tkc_dim(w, 2 + i);
    full[i] = (in[i] - 1) * sv + (k[i] - 1) * dv + 1;
    opad[i] = co >= 0 ? op[i] : 0;
    pb[i] = cp >= 0 ? pd[i] : 0, pe[i] = cp >= 0 ? pd[i + nsp] : 0;
    int same = !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER");
    if (cos_ >= 0 || same) {
      int64_t want = cos_ >= 0 ? os[i] : in[i] * sv, total = full[i] + opad[i] - want;
      int upper = !strcmp(ap, "SAME_UPPER");
      int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2); /* floor, as the spec's Python */
      pb[i] = upper ? half : total - half;
      pe[i] = upper ? total - half : half;
    } else if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID")) return onnx_node_err(n, TKC_EINVAL, "auto_pad '%s'", ap);
    if (opad[i] < 0 || pb[i] > (1 << 20) || pe[i] > (1 << 20) || pb[i] < -(1 << 20) || pe[i] < -(1 << 20)) return onnx_node_err(n, TKC_EINVAL, "pads/output_padding");
  }
  if (nsp == 3) { /* 3-D: tap by tap (ops_windows.c), then the same window of each axis */
    tkc_tensor *r = onnx_conv_transpose_full(n, x, w, 3, stride, dil, (int)onnx_attr_int(n, "group", 1));
    if (!r) return tkc_last_status();
    if (!(r = transpose_window(n, r, 3, pb, pe, full, opad))) return tkc_last_status();
    if (b) r = tkc_add(r, tkc_reshape(b, 5, (int64_t[]){1, tkc_dim(b, 0), 1, 1, 1}));
    return onnx_set(n, 0, r);
  }
  if (nsp == 1) {
    x = tkc_unsqueeze(x, 2), w = tkc_unsqueeze(w, 2);
    stride[1] = stride[0], dil[1] = dil[0], stride[0] = dil[0] = 1;
    pb[1] = pb[0], pe[1] = pe[0], opad[1] = opad[0], full[1] = full[0], pb[0] = pe[0] = opad[0] = 0, full[0] = 1;
  }
  tkc_tensor *r = tkc_conv_transpose2d(x, w, NULL, stride, zero2, zero2, dil, (int)onnx_attr_int(n, "group", 1));
  if (!r) return onnx_set(n, 0, NULL);
  if (!(r = transpose_window(n, r, 2, pb, pe, full, opad))) return tkc_last_status();
  if (b) r = tkc_add(r, tkc_reshape(b, 4, (int64_t[]){1, tkc_dim(b, 0), 1, 1}));
  if (nsp == 1 && r) r = tkc_squeeze(r, 1, (int[]){2});
  return onnx_set(n, 0, r);
}

/* 1-D pools run as 2-D over a (.., 1, L) view */
/* one 2-D pool of x (N, C, H, W); pads may be asymmetric or wider than half the kernel */
static tkc_tensor *pool2d(onnx_node *n, tkc_tensor *x, const int k[2], const int st[2], const int pb[2], const int pe[2], const int dil[2], int is_max,
                          int ceil_mode, int cip) {
  int sym = pb[0] == pe[0] && pb[1] == pe[1] && pb[0] * 2 <= k[0] && pb[1] * 2 <= k[1];
  int pad[2] = {pb[0], pb[1]}, zero[2] = {0, 0}, zero4[4] = {0, 0, 0, 0};
  int64_t pads[8] = {0, 0, 0, 0, pb[0], pe[0], pb[1], pe[1]};
  if (is_max) /* asymmetric: pad with the lowest value first */
    return sym ? tkc_max_pool2d(x, k, st, pad, dil, ceil_mode) : tkc_max_pool2d(tkc_pad(x, pads, -INFINITY), k, st, zero, dil, ceil_mode);
  if (dil[0] != 1 || dil[1] != 1) { /* dilated: a depthwise conv with a ones kernel, divided by the same conv of the counted region */
    int64_t H = tkc_dim(x, 2), W = tkc_dim(x, 3), C = tkc_dim(x, 1), len[2] = {H, W}, extra[2];
    for (int i = 0; i < 2; i++) { /* ceil_mode: zeros past the end that neither the sum nor the count sees */
      int64_t span = len[i] + pb[i] + pe[i] - (int64_t)dil[i] * (k[i] - 1) - 1;
      int64_t out = span < 0 ? 0 : ceil_mode ? (span + st[i] - 1) / st[i] + 1 : span / st[i] + 1;
      if (ceil_mode && (out - 1) * st[i] >= len[i] + pb[i]) out--; /* a last window starting in the end padding is dropped */
      extra[i] = (out - 1) * st[i] + (int64_t)dil[i] * (k[i] - 1) + 1 - (len[i] + pb[i] + pe[i]);
      if (extra[i] < 0) extra[i] = 0;
    }
    int64_t xp[8] = {0, 0, 0, 0, pb[0], pe[0] + extra[0], pb[1], pe[1] + extra[1]};
    int64_t mp[8] = {0, 0, 0, 0, cip ? 0 : pb[0], cip ? extra[0] : pe[0] + extra[0], cip ? 0 : pb[1], cip ? extra[1] : pe[1] + extra[1]};
    tkc_dtype dt = tkc_dtype_of(x);
    tkc_tensor *ones_w = tkc_full(n->m->ctx, dt, 4, (int64_t[]){C, 1, k[0], k[1]}, 1);
    tkc_tensor *sum = tkc_conv2d_ex(tkc_pad(x, xp, 0), ones_w, NULL, st, zero4, dil, (int)C);
    int64_t region[4] = {1, 1, cip ? H + pb[0] + pe[0] : H, cip ? W + pb[1] + pe[1] : W};
    tkc_tensor *mask = tkc_pad(tkc_full(n->m->ctx, dt, 4, region, 1), mp, 0);
    tkc_tensor *cnt = tkc_conv2d_ex(mask, tkc_full(n->m->ctx, dt, 4, (int64_t[]){1, 1, k[0], k[1]}, 1), NULL, st, zero4, dil, 1);
    return tkc_div(sum, cnt);
  }
  if (sym) return tkc_avg_pool2d(x, k, st, pad, ceil_mode, cip);
  /* zero-pad first; without count_include_pad divide by the pooled mask of real elements */
  tkc_tensor *r = tkc_avg_pool2d(tkc_pad(x, pads, 0), k, st, zero, ceil_mode, 1);
  if (cip || !r) return r;
  int64_t sh[4] = {1, 1, tkc_dim(x, 2), tkc_dim(x, 3)};
  tkc_tensor *ones = tkc_full(n->m->ctx, tkc_dtype_of(x), 4, sh, 1);
  return tkc_div(r, tkc_avg_pool2d(tkc_pad(ones, pads, 0), k, st, zero, ceil_mode, 1));
}

/* 1-D pools run as 2-D over a (.., 1, L) view; 3-D as a 2-D pool over (H, W) then one over D (max and
 * average windows are separable: the counts of a 3-D window are the products of its axes') */
static tkc_status pool(onnx_node *n, int is_max) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int c;
  const int64_t *ks = onnx_attr_ints(n, "kernel_shape", &c);
  if (c < 1) return onnx_node_err(n, TKC_EINVAL, "no kernel_shape");
  if (c != tkc_ndim(x) - 2) return onnx_node_err(n, TKC_EINVAL, "kernel_shape has %d entries for %d-D input", c, tkc_ndim(x));
  spatial sp;
  if ((s = read_spatial_n(n, x, ks, &sp, 1, 3))) return s;
  int ceil_mode = (int)onnx_attr_int(n, "ceil_mode", 0), cip = (int)onnx_attr_int(n, "count_include_pad", 0);
  if (n->nout > 1 && is_max) return onnx_max_pool_indices(n, x, sp.nsp, sp.k, sp.stride, sp.pb, sp.pe, sp.dil, ceil_mode);
  tkc_tensor *r;
  if (sp.nsp == 1) {
    int k[2] = {1, sp.k[0]}, st[2] = {1, sp.stride[0]}, pb[2] = {0, sp.pb[0]}, pe[2] = {0, sp.pe[0]}, dl[2] = {1, sp.dil[0]};
    r = pool2d(n, tkc_unsqueeze(x, 2), k, st, pb, pe, dl, is_max, ceil_mode, cip);
    if (r) r = tkc_squeeze(r, 1, (int[]){2});
  } else if (sp.nsp == 2) {
    r = pool2d(n, x, sp.k, sp.stride, sp.pb, sp.pe, sp.dil, is_max, ceil_mode, cip);
  } else {
    int64_t N = tkc_dim(x, 0), C = tkc_dim(x, 1), D = tkc_dim(x, 2), H = tkc_dim(x, 3), W = tkc_dim(x, 4);
    r = pool2d(n, tkc_reshape(x, 4, (int64_t[]){N, C * D, H, W}), sp.k + 1, sp.stride + 1, sp.pb + 1, sp.pe + 1, sp.dil + 1, is_max, ceil_mode, cip);
    if (!r) return onnx_set(n, 0, NULL);
    int64_t Ho = tkc_dim(r, 2), Wo = tkc_dim(r, 3);
    int k[2] = {sp.k[0], 1}, st[2] = {sp.stride[0], 1}, pb[2] = {sp.pb[0], 0}, pe[2] = {sp.pe[0], 0}, dl[2] = {sp.dil[0], 1};
    r = pool2d(n, tkc_reshape(r, 4, (int64_t[]){N, C, D, Ho * Wo}), k, st, pb, pe, dl, is_max, ceil_mode, cip);
    if (r) r = tkc_reshape(r, 5, (int64_t[]){N, C, tkc_dim(r, 2), Ho, Wo});
  }
  return onnx_set(n, 0, r);
}
tkc_status onnx_build_max_pool(onnx_node *n) { return pool(n, 1); }
tkc_status onnx_build_avg_pool(onnx_node *n) { return pool(n, 0); }

static tkc_status global_pool(onnx_node *n, int is_max) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int nd = tkc_ndim(x), axes[ONNX_MAX_DIMS];
  for (int d = 2; d < nd; d++) axes[d - 2] = d;
  if (nd < 3) return onnx_node_err(n, TKC_EINVAL, "needs N, C and spatial dims");
  return onnx_set(n, 0, is_max ? tkc_max(x, nd - 2, axes, 1) : tkc_mean(x, nd - 2, axes, 1));
}
tkc_status onnx_build_global_avg_pool(onnx_node *n) { return global_pool(n, 0); }
tkc_status onnx_build_global_max_pool(onnx_node *n) { return global_pool(n, 1); }

tkc_status onnx_build_batch_norm(onnx_node *n) {
  tkc_status s = onnx_need(n, 5);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0), *mean = onnx_in(n, 3), *var = onnx_in(n, 4);
  double eps = onnx_attr_float(n, "epsilon", 1e-5);
  if (!onnx_attr_int(n, "training_mode", 0) && n->nout == 1) return onnx_set(n, 0, tkc_batch_norm(x, mean, var, onnx_in(n, 1), onnx_in(n, 2), eps));
  /* training mode: normalized with the batch's mean and (biased) variance over all axes but 1; outputs 1
   * and 2 the running statistics, input * momentum + batch * (1 - momentum) */
  int nd = tkc_ndim(x), axes[ONNX_MAX_DIMS], na = 0;
  for (int d = 0; d < nd; d++)
    if (d != 1) axes[na++] = d;
  tkc_tensor *bm = tkc_mean(x, na, axes, 0), *bv = tkc_var(x, na, axes, 0, 0);
  if ((s = onnx_set(n, 0, tkc_batch_norm(x, bm, bv, onnx_in(n, 1), onnx_in(n, 2), eps)))) return s;
  tkc_dtype dt = tkc_dtype_of(mean);
  tkc_tensor *mom = tkc_scalar(n->m->ctx, dt, onnx_attr_float(n, "momentum", 0.9)), *rest = tkc_scalar(n->m->ctx, dt, 1 - onnx_attr_float(n, "momentum", 0.9));
  if (n->nout > 1 && (s = onnx_set(n, 1, tkc_add(tkc_mul(mean, mom), tkc_mul(tkc_cast(bm, dt), rest))))) return s;
  return n->nout > 2 ? onnx_set(n, 2, tkc_add(tkc_mul(var, mom), tkc_mul(tkc_cast(bv, dt), rest))) : TKC_OK;
}

/* the axes from the "axis" attribute (default -1) to the last */
static tkc_status trailing_axes(onnx_node *n, tkc_tensor *x, int *axes, int *naxes) {
  int nd = tkc_ndim(x), axis = onnx_axis(onnx_attr_int(n, "axis", -1), nd);
  if (axis < 0) return onnx_node_err(n, TKC_EINVAL, "axis out of range");
  *naxes = nd - axis;
  for (int i = 0; i < *naxes; i++) axes[i] = axis + i;
  return TKC_OK;
}

/* (x - mean) / sqrt(var + epsilon) over axes (the statistics kept as size-1 axes; *mean and *inv,
 * 1 / sqrt(var + epsilon), given back when asked for) */
static tkc_tensor *normalized(onnx_node *n, tkc_tensor *x, int naxes, const int *axes, tkc_tensor **mean_out, tkc_tensor **inv_out) {
  tkc_tensor *mean = tkc_mean(x, naxes, axes, 1);
  tkc_tensor *d = tkc_sub(x, mean);
  tkc_tensor *var = tkc_mean(tkc_mul(d, d), naxes, axes, 1);
  tkc_tensor *inv = tkc_rsqrt(tkc_add(var, tkc_scalar(n->m->ctx, tkc_dtype_of(x), onnx_attr_float(n, "epsilon", 1e-5))));
  if (mean_out) *mean_out = mean;
  if (inv_out) *inv_out = inv;
  return tkc_mul(d, inv);
}

tkc_status onnx_build_layer_norm(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0), *mean, *inv;
  int naxes = 0, axes[ONNX_MAX_DIMS];
  if ((s = trailing_axes(n, x, axes, &naxes))) return s;
  /* computed here (not tkc_layer_norm) for the Mean and InvStdDev outputs and broadcast scales */
  tkc_tensor *y = tkc_mul(normalized(n, x, naxes, axes, &mean, &inv), onnx_in(n, 1));
  if (onnx_has(n, 2)) y = tkc_add(y, onnx_in(n, 2));
  if ((s = onnx_set(n, 0, y))) return s;
  if (n->nout > 1 && *n->proto->output[1] && (s = onnx_set(n, 1, mean))) return s;
  if (n->nout > 2 && *n->proto->output[2] && (s = onnx_set(n, 2, inv))) return s;
  return TKC_OK;
}

tkc_status onnx_build_instance_norm(onnx_node *n) {
  tkc_status s = onnx_need(n, 3);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int nd = tkc_ndim(x), axes[ONNX_MAX_DIMS];
  if (nd < 3) return onnx_node_err(n, TKC_EINVAL, "needs N, C and spatial dims");
  for (int d = 2; d < nd; d++) axes[d - 2] = d;
  tkc_tensor *y = normalized(n, x, nd - 2, axes, NULL, NULL);
  int64_t sh[ONNX_MAX_DIMS];
  for (int i = 0; i < nd; i++) sh[i] = i == 1 ? tkc_dim(x, 1) : 1;
  y = tkc_add(tkc_mul(y, tkc_reshape(onnx_in(n, 1), nd, sh)), tkc_reshape(onnx_in(n, 2), nd, sh));
  return onnx_set(n, 0, y);
}

tkc_status onnx_build_rms_norm(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int naxes = 0, axes[ONNX_MAX_DIMS];
  if ((s = trailing_axes(n, x, axes, &naxes))) return s;
  tkc_tensor *ms = tkc_mean(tkc_mul(x, x), naxes, axes, 1);
  tkc_tensor *y = tkc_mul(x, tkc_rsqrt(tkc_add(ms, tkc_scalar(n->m->ctx, tkc_dtype_of(x), onnx_attr_float(n, "epsilon", 1e-5)))));
  return onnx_set(n, 0, tkc_mul(y, onnx_in(n, 1)));
}

/* (x - mean) / (sqrt(mean(x^2) - mean^2) + 1e-9) over axes (default 0, 2, 3) */
tkc_status onnx_build_mvn(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int nd = tkc_ndim(x), c, axes[ONNX_MAX_DIMS], naxes = 0;
  const int64_t *av = onnx_attr_ints(n, "axes", &c);
  int64_t def[3] = {0, 2, 3};
  if (c < 0) av = def, c = 3;
  for (int i = 0; i < c && i < ONNX_MAX_DIMS; i++)
    if ((axes[naxes++] = onnx_axis(av[i], nd)) < 0) return onnx_node_err(n, TKC_EINVAL, "axis out of range");
  tkc_dtype dt = tkc_dtype_of(x);
  tkc_tensor *mean = tkc_mean(x, naxes, axes, 1);
  tkc_tensor *var = tkc_sub(tkc_mean(tkc_mul(x, x), naxes, axes, 1), tkc_mul(mean, mean));
  return onnx_set(n, 0, tkc_div(tkc_sub(x, mean), tkc_add(tkc_sqrt(var), tkc_scalar(n->m->ctx, dt, 1e-9))));
}

/* x (N, C, ...) normalized per (n, group); scale and bias per channel (opset 21) or per group (18) */
tkc_status onnx_build_group_norm(onnx_node *n) {
  tkc_status s = onnx_need(n, 3);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0), *sc = onnx_in(n, 1), *bi = onnx_in(n, 2);
  int nd = tkc_ndim(x);
  int64_t g = onnx_attr_int(n, "num_groups", 0), N = tkc_dim(x, 0), C = tkc_dim(x, 1);
  if (nd < 3 || g < 1 || C % g) return onnx_node_err(n, TKC_EINVAL, "num_groups %lld for %lld channels", (long long)g, (long long)C);
  int64_t sh[3] = {N, g, -1}, full[ONNX_MAX_DIMS], ch[ONNX_MAX_DIMS];
  for (int d = 0; d < nd; d++) full[d] = tkc_dim(x, d), ch[d] = d == 1 ? C : 1;
  tkc_tensor *xg = tkc_reshape(x, 3, sh);
  int ax = 2;
  tkc_tensor *mean = tkc_mean(xg, 1, &ax, 1);
  tkc_tensor *d = tkc_sub(xg, mean);
  tkc_tensor *var = tkc_mean(tkc_mul(d, d), 1, &ax, 1);
  tkc_tensor *y = tkc_mul(d, tkc_rsqrt(tkc_add(var, tkc_scalar(n->m->ctx, tkc_dtype_of(x), onnx_attr_float(n, "epsilon", 1e-5)))));
  y = tkc_reshape(y, nd, full);
  if (tkc_numel(sc) == g && g != C) { /* opset 18: one scale per group */
    int64_t gs[2] = {g, 1}, gc[2] = {g, C / g}, c1 = C;
    sc = tkc_reshape(tkc_expand(tkc_reshape(sc, 2, gs), 2, gc), 1, &c1);
    bi = tkc_reshape(tkc_expand(tkc_reshape(bi, 2, gs), 2, gc), 1, &c1);
  }
  return onnx_set(n, 0, tkc_add(tkc_mul(y, tkc_reshape(sc, nd, ch)), tkc_reshape(bi, nd, ch)));
}

tkc_status onnx_build_lp_norm(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int axis = onnx_axis(onnx_attr_int(n, "axis", -1), tkc_ndim(x));
  int64_t p = onnx_attr_int(n, "p", 2);
  if (axis < 0 || (p != 1 && p != 2)) return onnx_node_err(n, TKC_EINVAL, "axis or p (1 or 2)");
  tkc_tensor *norm = p == 1 ? tkc_sum(tkc_abs(x), 1, &axis, 1) : tkc_sqrt(tkc_sum(tkc_mul(x, x), 1, &axis, 1));
  tkc_tensor *zero = tkc_scalar(n->m->ctx, tkc_dtype_of(x), 0);
  return onnx_set(n, 0, tkc_div(x, tkc_where(tkc_eq(norm, zero), tkc_scalar(n->m->ctx, tkc_dtype_of(x), 1), norm))); /* 0 for a zero vector */
}

/* x / (bias + alpha / size * sum of x^2 over a window of channels)^beta */
tkc_status onnx_build_lrn(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int nd = tkc_ndim(x);
  int64_t size = onnx_attr_int(n, "size", 0);
  if (nd < 3 || size < 1 || size > 64) return onnx_node_err(n, TKC_EINVAL, "size %lld", (long long)size);
  tkc_ctx *c = n->m->ctx;
  tkc_dtype dt = tkc_dtype_of(x);
  int64_t C = tkc_dim(x, 1), pads[2 * ONNX_MAX_DIMS] = {0}, rng[2 * ONNX_MAX_DIMS];
  pads[2] = (size - 1) / 2;
  pads[3] = size - 1 - (size - 1) / 2;
  tkc_tensor *sq = tkc_pad(tkc_mul(x, x), pads, 0), *acc = NULL;
  for (int d = 0; d < nd; d++) rng[2 * d] = 0, rng[2 * d + 1] = tkc_dim(x, d);
  for (int64_t k = 0; k < size; k++) {
    rng[2] = k, rng[3] = k + C;
    tkc_tensor *w = tkc_shrink(sq, rng);
    acc = acc ? tkc_add(acc, w) : w;
  }
  double alpha = onnx_attr_float(n, "alpha", 1e-4), beta = onnx_attr_float(n, "beta", 0.75), bias = onnx_attr_float(n, "bias", 1.0);
  tkc_tensor *den = tkc_add(tkc_scalar(c, dt, bias), tkc_mul(tkc_scalar(c, dt, alpha / (double)size), acc));
  return onnx_set(n, 0, tkc_div(x, tkc_pow(den, tkc_scalar(c, dt, beta))));
}

/* (x - zero_point) * scale, per tensor or per axis (1-D scale); the result has scale's dtype */
tkc_status onnx_build_dequantize(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0), *sc = onnx_in(n, 1), *zp = onnx_in(n, 2);
  int nd = tkc_ndim(x);
  tkc_dtype dt = tkc_dtype_of(sc);
  if ((s = onnx_per_axis(n, nd, &sc, &zp))) return s;
  tkc_dtype work = onnx_is_fp8(tkc_dtype_of(x)) ? TKC_FLOAT32 : TKC_INT32; /* a float8 x: its value */
  tkc_tensor *xi = tkc_cast(x, work);
  if (zp) xi = tkc_sub(xi, tkc_cast(zp, work));
  return onnx_set(n, 0, tkc_mul(tkc_cast(xi, dt), sc));
}

/* out[i, j] = (j - i == k) in dtype (default: the input's) */
tkc_status onnx_build_eye_like(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  if (tkc_ndim(x) != 2) return onnx_node_err(n, TKC_EINVAL, "needs a 2-D input");
  tkc_dtype dt = tkc_dtype_of(x);
  const Onnx__AttributeProto *a = onnx_attr(n, "dtype");
  if (a && a->has_i && onnx_dtype_from_proto((int32_t)a->i, &dt) != TKC_OK) return onnx_node_err(n, tkc_last_status(), "%s", tkc_last_error());
  int64_t r = tkc_dim(x, 0), cc = tkc_dim(x, 1), k = onnx_attr_int(n, "k", 0), rs[2] = {r, 1}, cs[2] = {1, cc};
  tkc_ctx *c = n->m->ctx;
  tkc_tensor *i = tkc_reshape(tkc_arange(c, TKC_INT32, 0, (double)r, 1), 2, rs), *j = tkc_reshape(tkc_arange(c, TKC_INT32, 0, (double)cc, 1), 2, cs);
  return onnx_set(n, 0, tkc_cast(tkc_eq(tkc_sub(j, i), tkc_scalar(c, TKC_INT32, (double)k)), dt));
}

/* NegativeLogLikelihoodLoss over log-probabilities lp (N, C, d...) and targets (N, d...): the picked
 * -lp[n, t, d] * weight[t] (0 where t == ignore_index), reduced as asked. Output 1 (for
 * SoftmaxCrossEntropyLoss) is lp itself. */
static tkc_status nll(onnx_node *n, tkc_tensor *lp, tkc_tensor *target, tkc_tensor *weight) {
  tkc_ctx *c = n->m->ctx;
  int nd = tkc_ndim(lp);
  if (nd < 2 || tkc_ndim(target) != nd - 1) return onnx_node_err(n, TKC_ESHAPE, "input of %d dims, target of %d", nd, tkc_ndim(target));
  tkc_dtype dt = tkc_dtype_of(lp);
  int64_t C = tkc_dim(lp, 1), cs[ONNX_MAX_DIMS];
  for (int d = 0; d < nd; d++) cs[d] = d == 1 ? C : 1;
  tkc_tensor *t = tkc_unsqueeze(tkc_cast(target, TKC_INT64), 1);
  tkc_tensor *mask = tkc_eq(t, tkc_reshape(tkc_arange(c, TKC_INT64, 0, (double)C, 1), nd, cs));
  tkc_tensor *maskf = tkc_cast(mask, dt);
  int ax = 1;
  tkc_tensor *picked = tkc_sum(tkc_mul(lp, maskf), 1, &ax, 0);
  tkc_tensor *wt = weight ? tkc_sum(tkc_mul(tkc_reshape(weight, nd, cs), maskf), 1, &ax, 0) : tkc_sum(maskf, 1, &ax, 0);
  const Onnx__AttributeProto *ig = onnx_attr(n, "ignore_index");
  if (ig && ig->has_i) wt = tkc_mul(wt, tkc_cast(tkc_ne(tkc_cast(target, TKC_INT64), tkc_scalar(c, TKC_INT64, (double)ig->i)), dt));
  tkc_tensor *loss = tkc_neg(tkc_mul(picked, wt));
  const char *red = onnx_attr_str(n, "reduction", "mean");
  if (!strcmp(red, "sum")) loss = tkc_sum(loss, 0, NULL, 0);
  else if (!strcmp(red, "mean")) loss = tkc_div(tkc_sum(loss, 0, NULL, 0), tkc_sum(wt, 0, NULL, 0));
  else if (strcmp(red, "none")) return onnx_node_err(n, TKC_EINVAL, "reduction '%s'", red);
  return onnx_set(n, 0, loss);
}

tkc_status onnx_build_nll_loss(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  return s ? s : nll(n, onnx_in(n, 0), onnx_in(n, 1), onnx_in(n, 2));
}

tkc_status onnx_build_softmax_ce_loss(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *lp = tkc_log_softmax(onnx_in(n, 0), 1);
  if (!lp) return onnx_set(n, 0, NULL);
  if ((s = nll(n, lp, onnx_in(n, 1), onnx_in(n, 2)))) return s;
  return n->nout > 1 ? onnx_set(n, 1, lp) : TKC_OK;
}

/* Attention (opset 23): Q K V of (B, heads, S, head) or (B, S, hidden) with q_num_heads / kv_num_heads;
 * past keys/values appended along S (outputs 1, 2: the present ones); a bool (keep) or additive mask
 * padded to the key length; is_causal with the past offset; grouped-query heads repeated; softcap;
 * output 3 the qk product at the stage qk_matmul_output_mode names. As onnx's reference. */
static tkc_tensor *heads_first(tkc_tensor *x, int64_t heads) { /* (B, S, H*D) -> (B, H, S, D) */
  int64_t sh[4] = {tkc_dim(x, 0), tkc_dim(x, 1), heads, heads ? tkc_dim(x, 2) / heads : 0};
  int perm[4] = {0, 2, 1, 3};
  return tkc_permute(tkc_reshape(x, 4, sh), perm);
}

static tkc_tensor *repeat_heads(tkc_tensor *x, int64_t reps) { /* (B, H, S, D) -> (B, H*reps, S, D), each head reps times in a row */
  int64_t B = tkc_dim(x, 0), H = tkc_dim(x, 1), S = tkc_dim(x, 2), D = tkc_dim(x, 3);
  int64_t ex[5] = {B, H, reps, S, D}, fin[4] = {B, H * reps, S, D};
  return tkc_reshape(tkc_expand(tkc_unsqueeze(x, 2), 5, ex), 4, fin);
}

tkc_status onnx_build_attention(onnx_node *n) {
  tkc_status s = onnx_need(n, 3);
  if (s) return s;
  tkc_tensor *q = onnx_in(n, 0), *k = onnx_in(n, 1), *v = onnx_in(n, 2), *mask = onnx_in(n, 3);
  tkc_ctx *c = n->m->ctx;
  int nd = tkc_ndim(q);
  if (nd != tkc_ndim(k) || nd != tkc_ndim(v) || (nd != 3 && nd != 4)) return onnx_node_err(n, TKC_ESHAPE, "Q, K, V must all be 3-D or 4-D");
  if (nd == 3) {
    int64_t qh = onnx_attr_int(n, "q_num_heads", 0), kvh = onnx_attr_int(n, "kv_num_heads", 0);
    if (qh < 1 || kvh < 1 || tkc_dim(q, 2) % qh || tkc_dim(k, 2) % kvh || tkc_dim(v, 2) % kvh)
      return onnx_node_err(n, TKC_EINVAL, "3-D inputs need q_num_heads and kv_num_heads dividing the hidden sizes");
    q = heads_first(q, qh), k = heads_first(k, kvh), v = heads_first(v, kvh);
  }
  tkc_dtype dt = tkc_dtype_of(q);
  const Onnx__AttributeProto *sa = onnx_attr(n, "scale");
  double scale = sa && sa->has_f ? sa->f : 1.0 / sqrt((double)tkc_dim(q, 3));
  int64_t past = 0;
  if (onnx_has(n, 4)) {
    past = tkc_dim(onnx_in(n, 4), 2);
    k = tkc_cat(2, (tkc_tensor *[]){onnx_in(n, 4), k}, 2);
  }
  if (onnx_has(n, 5)) v = tkc_cat(2, (tkc_tensor *[]){onnx_in(n, 5), v}, 2);
  if (!k || !v) return onnx_set(n, 0, NULL);
  int64_t qs = tkc_dim(q, 2), kvs = tkc_dim(k, 2);
  tkc_tensor *ninf = tkc_scalar(c, dt, -INFINITY), *zero = tkc_scalar(c, dt, 0), *bias = NULL;
  if (mask) {
    int mnd = tkc_ndim(mask);
    int64_t pad_w = kvs - tkc_dim(mask, mnd - 1);
    int is_bool = tkc_dtype_of(mask) == TKC_BOOL;
    if (pad_w > 0) {
      int64_t pads[2 * ONNX_MAX_DIMS] = {0};
      pads[2 * (mnd - 1) + 1] = pad_w;
      mask = tkc_pad(mask, pads, is_bool ? 0 : -INFINITY);
    }
    bias = is_bool ? tkc_where(mask, zero, ninf) : mask;
  }
  if (onnx_attr_int(n, "is_causal", 0)) {
    int64_t is[2] = {qs, 1}, js[2] = {1, kvs};
    tkc_tensor *i = tkc_reshape(tkc_arange(c, TKC_INT32, 0, (double)qs, 1), 2, is);
    tkc_tensor *j = tkc_reshape(tkc_arange(c, TKC_INT32, 0, (double)kvs, 1), 2, js);
    tkc_tensor *causal = tkc_where(tkc_gt(j, tkc_add(i, tkc_scalar(c, TKC_INT32, (double)past))), ninf, zero);
    bias = bias ? tkc_add(bias, causal) : causal;
  }
  if (onnx_has(n, 6)) { /* nonpad_kv_seqlen (B): keys at or past it are padding */
    tkc_tensor *len = tkc_reshape(tkc_cast(onnx_in(n, 6), TKC_INT32), 4, (int64_t[]){tkc_dim(q, 0), 1, 1, 1});
    tkc_tensor *j = tkc_reshape(tkc_arange(c, TKC_INT32, 0, (double)kvs, 1), 4, (int64_t[]){1, 1, 1, kvs});
    tkc_tensor *pm = tkc_where(tkc_lt(j, len), zero, ninf);
    bias = bias ? tkc_add(bias, pm) : pm;
  }
  int64_t qh = tkc_dim(q, 1), kh = tkc_dim(k, 1);
  if (qh != kh) {
    if (kh < 1 || qh % kh || tkc_dim(v, 1) != kh) return onnx_node_err(n, TKC_ESHAPE, "%lld query heads for %lld key heads", (long long)qh, (long long)kh);
    if ((s = onnx_set(n, 1, k)) || (s = onnx_set(n, 2, v))) return s;
    k = repeat_heads(k, qh / kh), v = repeat_heads(v, qh / kh);
  } else if ((s = onnx_set(n, 1, k)) || (s = onnx_set(n, 2, v))) return s;
  tkc_tensor *sq = tkc_scalar(c, dt, sqrt(scale));
  tkc_tensor *qk = tkc_matmul(tkc_mul(q, sq), tkc_transpose(tkc_mul(k, sq), 2, 3));
  double softcap = onnx_attr_float(n, "softcap", 0);
  if (softcap > 0) qk = tkc_mul(tkc_tanh(tkc_div(qk, tkc_scalar(c, dt, softcap))), tkc_scalar(c, dt, softcap));
  tkc_tensor *qkb = bias ? tkc_add(qk, bias) : qk;
  const Onnx__AttributeProto *pa = onnx_attr(n, "softmax_precision");
  tkc_dtype sdt = dt;
  if (pa && pa->has_i && onnx_dtype_from_proto((int32_t)pa->i, &sdt) != TKC_OK) return onnx_node_err(n, tkc_last_status(), "%s", tkc_last_error());
  tkc_tensor *sm = tkc_softmax(tkc_cast(qkb, sdt), -1);
  tkc_tensor *out = tkc_cast(tkc_matmul(sm, tkc_cast(v, sdt)), dt);
  if (nd == 3) {
    int perm[4] = {0, 2, 1, 3};
    out = tkc_reshape(tkc_permute(out, perm), 3, (int64_t[]){tkc_dim(q, 0), qs, -1});
  }
  if ((s = onnx_set(n, 0, out))) return s;
  if (n->nout > 3 && *n->proto->output[3]) {
    int64_t mode = onnx_attr_int(n, "qk_matmul_output_mode", 0);
    tkc_tensor *qo = mode == 2 ? qkb : mode == 3 ? sm : qk;
    return onnx_set(n, 3, tkc_cast(qo, dt));
  }
  return TKC_OK;
}

/* RotaryEmbedding (opset 23): x (B, H, S, D) or (B, S, H*D) with num_heads; the first
 * rotary_embedding_dim of each head rotated by cos/sin (indexed by position_ids when given) in halves
 * or in interleaved pairs; as onnx's reference. */
tkc_status onnx_build_rotary(onnx_node *n) {
  tkc_status s = onnx_need(n, 3);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0), *cosc = onnx_in(n, 1), *sinc = onnx_in(n, 2);
  int nd = tkc_ndim(x);
  if (nd != 3 && nd != 4) return onnx_node_err(n, TKC_ESHAPE, "input must be 3-D or 4-D");
  int perm[4] = {0, 2, 1, 3};
  int64_t orig[4];
  for (int d = 0; d < nd; d++) orig[d] = tkc_dim(x, d);
  if (nd == 4) x = tkc_permute(x, perm); /* (B, S, H, D) */
  else {
    int64_t h = onnx_attr_int(n, "num_heads", 0);
    if (h < 1 || orig[2] % h) return onnx_node_err(n, TKC_EINVAL, "num_heads %lld", (long long)h);
    x = tkc_reshape(x, 4, (int64_t[]){orig[0], orig[1], h, orig[2] / h});
  }
  int64_t B = tkc_dim(x, 0), S = tkc_dim(x, 1), H = tkc_dim(x, 2), D = tkc_dim(x, 3);
  int64_t rd = onnx_attr_int(n, "rotary_embedding_dim", 0);
  if (rd == 0) rd = D;
  if (rd < 2 || rd > D || rd % 2) return onnx_node_err(n, TKC_EINVAL, "rotary_embedding_dim %lld", (long long)rd);
  if (onnx_has(n, 3)) {
    tkc_tensor *pos = onnx_in(n, 3);
    cosc = tkc_index_select(cosc, 0, pos), sinc = tkc_index_select(sinc, 0, pos);
  }
  if (!cosc || !sinc) return onnx_set(n, 0, NULL);
  if (tkc_dim(cosc, -1) != rd / 2) return onnx_node_err(n, TKC_ESHAPE, "cos cache's last dim %lld, rotary_embedding_dim/2 is %lld", (long long)tkc_dim(cosc, -1), (long long)(rd / 2));
  int cnd = tkc_ndim(cosc);
  cosc = tkc_unsqueeze(cosc, cnd - 1), sinc = tkc_unsqueeze(sinc, cnd - 1); /* (.., S, 1, rd/2) */
  tkc_tensor *rot = tkc_shrink(x, (int64_t[]){0, B, 0, S, 0, H, 0, rd});
  tkc_tensor *x1, *x2;
  int interleaved = (int)onnx_attr_int(n, "interleaved", 0);
  if (interleaved) {
    tkc_tensor *pairs = tkc_reshape(rot, 5, (int64_t[]){B, S, H, rd / 2, 2});
    x1 = tkc_reshape(tkc_shrink(pairs, (int64_t[]){0, B, 0, S, 0, H, 0, rd / 2, 0, 1}), 4, (int64_t[]){B, S, H, rd / 2});
    x2 = tkc_reshape(tkc_shrink(pairs, (int64_t[]){0, B, 0, S, 0, H, 0, rd / 2, 1, 2}), 4, (int64_t[]){B, S, H, rd / 2});
  } else {
    x1 = tkc_shrink(rot, (int64_t[]){0, B, 0, S, 0, H, 0, rd / 2});
    x2 = tkc_shrink(rot, (int64_t[]){0, B, 0, S, 0, H, rd / 2, rd});
  }
  tkc_tensor *re = tkc_sub(tkc_mul(cosc, x1), tkc_mul(sinc, x2)), *im = tkc_add(tkc_mul(sinc, x1), tkc_mul(cosc, x2));
  tkc_tensor *out;
  if (interleaved) out = tkc_reshape(tkc_stack(2, (tkc_tensor *[]){re, im}, 4), 4, (int64_t[]){B, S, H, rd});
  else out = tkc_cat(2, (tkc_tensor *[]){re, im}, 3);
  if (rd < D) out = tkc_cat(2, (tkc_tensor *[]){out, tkc_shrink(x, (int64_t[]){0, B, 0, S, 0, H, rd, D})}, 3);
  out = nd == 3 ? tkc_reshape(out, 3, orig) : tkc_permute(out, perm);
  tkc_dtype dt = tkc_dtype_of(onnx_in(n, 0));
  if (out && tkc_dtype_of(out) != dt) out = tkc_cast(out, dt);
  return onnx_set(n, 0, out);
}

/* LpPool: (sum over the window of |x|^p)^(1/p), as a sum pool of |x|^p (average * window size) */
tkc_status onnx_build_lp_pool(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int c;
  const int64_t *ks = onnx_attr_ints(n, "kernel_shape", &c);
  if (c != tkc_ndim(x) - 2) return onnx_node_err(n, TKC_EINVAL, "kernel_shape has %d entries for %d-D input", c, tkc_ndim(x));
  spatial sp;
  if ((s = read_spatial_n(n, x, ks, &sp, 1, 3))) return s;
  double p = (double)onnx_attr_int(n, "p", 2);
  tkc_ctx *cx = n->m->ctx;
  tkc_dtype dt = tkc_dtype_of(x);
  tkc_tensor *xp = tkc_pow(tkc_abs(x), tkc_scalar(cx, dt, p));
  int dilated = 0;
  for (int i = 0; i < sp.nsp; i++) dilated |= sp.dil[i] != 1;
  if (dilated || sp.nsp == 3) { /* each window's sum of |x|^p, one strided view per kernel offset */
    tkc_tensor *sum = onnx_window_sum(n, xp, sp.nsp, sp.k, sp.stride, sp.pb, sp.pe, sp.dil, (int)onnx_attr_int(n, "ceil_mode", 0));
    return sum ? onnx_set(n, 0, tkc_pow(sum, tkc_scalar(cx, dt, 1.0 / p))) : tkc_last_status();
  }
  int one_d = sp.nsp == 1;
  if (one_d) {
    xp = tkc_unsqueeze(xp, 2);
    sp.k[1] = sp.k[0], sp.stride[1] = sp.stride[0], sp.pb[1] = sp.pb[0], sp.pe[1] = sp.pe[0];
    sp.k[0] = sp.stride[0] = 1, sp.pb[0] = sp.pe[0] = 0;
  }
  int64_t pads[8] = {0, 0, 0, 0, sp.pb[0], sp.pe[0], sp.pb[1], sp.pe[1]};
  int zero[2] = {0, 0};
  tkc_tensor *avg = tkc_avg_pool2d(tkc_pad(xp, pads, 0), sp.k, sp.stride, zero, (int)onnx_attr_int(n, "ceil_mode", 0), 1);
  tkc_tensor *r = tkc_pow(tkc_mul(avg, tkc_scalar(cx, dt, (double)sp.k[0] * sp.k[1])), tkc_scalar(cx, dt, 1.0 / p));
  if (one_d && r) r = tkc_squeeze(r, 1, (int[]){2});
  return onnx_set(n, 0, r);
}

/* ---------------------------------------------------------------- integer / quantized linear algebra */
/* x - zero_point in int32; a 1-D zero point of axis `axis`'s length applies along that axis */
static tkc_tensor *minus_zero_point(tkc_tensor *x, tkc_tensor *zp, int axis) {
  tkc_tensor *xi = tkc_cast(x, TKC_INT32);
  if (!zp) return xi;
  int nd = tkc_ndim(x);
  if (tkc_ndim(zp) == 1 && tkc_dim(zp, 0) > 1 && axis >= 0 && axis < nd) {
    int64_t sh[ONNX_MAX_DIMS];
    for (int d = 0; d < nd; d++) sh[d] = d == axis ? tkc_dim(zp, 0) : 1;
    zp = tkc_reshape(zp, nd, sh);
  }
  return tkc_sub(xi, tkc_cast(zp, TKC_INT32));
}

tkc_status onnx_build_matmul_integer(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *a = onnx_in(n, 0), *b = onnx_in(n, 1);
  return onnx_set(n, 0, tkc_matmul(minus_zero_point(a, onnx_in(n, 2), tkc_ndim(a) - 2), minus_zero_point(b, onnx_in(n, 3), tkc_ndim(b) - 1)));
}

tkc_status onnx_build_qlinear_matmul(onnx_node *n) {
  tkc_status s = onnx_need(n, 8);
  if (s) return s;
  tkc_tensor *a = onnx_in(n, 0), *b = onnx_in(n, 3), *yzp = onnx_in(n, 7);
  tkc_tensor *acc = tkc_matmul(minus_zero_point(a, onnx_in(n, 2), tkc_ndim(a) - 2), minus_zero_point(b, onnx_in(n, 5), tkc_ndim(b) - 1));
  /* the multiplier in the scales' dtype first, as the reference rounds it */
  tkc_tensor *mult = tkc_div(tkc_mul(onnx_in(n, 1), onnx_in(n, 4)), onnx_in(n, 6));
  tkc_tensor *d = tkc_mul(tkc_cast(acc, TKC_FLOAT64), tkc_cast(mult, TKC_FLOAT64));
  if (yzp) d = tkc_add(d, tkc_cast(yzp, TKC_FLOAT64));
  tkc_dtype out = yzp ? tkc_dtype_of(yzp) : tkc_dtype_of(a);
  double lo = out == TKC_INT8 ? -128 : 0, hi = out == TKC_INT8 ? 127 : 255;
  if (out != TKC_INT8 && out != TKC_UINT8) return onnx_node_err(n, TKC_EUNSUPPORTED, "output dtype %s", tkc_dtype_name(out));
  return onnx_set(n, 0, tkc_cast(tkc_clamp(tkc_round(d), lo, hi), out));
}

tkc_status onnx_build_conv_integer(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0), *w = onnx_in(n, 1);
  tkc_tensor *xi = minus_zero_point(x, onnx_in(n, 2), -1), *wi = minus_zero_point(w, onnx_in(n, 3), 0);
  /* the conv in float64 (exact for 8-bit products summed), back to int32 */
  onnx_value vx = {tkc_cast(xi, TKC_FLOAT64), NULL}, vw = {tkc_cast(wi, TKC_FLOAT64), NULL};
  onnx_value *ins[2] = {&vx, &vw};
  onnx_node sub = *n;
  sub.nin = 2;
  sub.in = ins;
  if ((s = onnx_build_conv(&sub))) return s;
  return onnx_set(n, 0, tkc_cast(n->out[0].t, TKC_INT32));
}

/* QLinearConv: ConvInteger of the zero-point-shifted operands, + the int32 bias, times x_scale *
 * w_scale / y_scale (w_scale per output channel when 1-D) in float64 as the reference's promotion,
 * + y_zero_point, saturated and rounded to y_zero_point's dtype (x's without one). */
tkc_status onnx_build_qlinear_conv(onnx_node *n) {
  tkc_status s = onnx_need(n, 7);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0), *ws = onnx_in(n, 4), *yzp = onnx_in(n, 7), *bias = onnx_in(n, 8);
  onnx_value *ins[4] = {n->in[0], n->in[3], n->in[2], n->in[5]};
  onnx_node sub = *n;
  sub.nin = 4;
  sub.in = ins;
  if ((s = onnx_build_conv_integer(&sub))) return s;
  tkc_tensor *acc = n->out[0].t;
  int nd = tkc_ndim(acc);
  int64_t sh[ONNX_MAX_DIMS];
  for (int d = 0; d < nd; d++) sh[d] = d == 1 ? tkc_dim(acc, 1) : 1;
  if (bias) acc = tkc_add(acc, tkc_reshape(tkc_cast(bias, TKC_INT32), nd, sh));
  if (tkc_ndim(ws) == 1 && tkc_dim(ws, 0) > 1) ws = tkc_reshape(ws, nd, sh);
  tkc_tensor *mult = tkc_div(tkc_mul(onnx_in(n, 1), ws), onnx_in(n, 6));
  tkc_tensor *d = tkc_mul(tkc_cast(acc, TKC_FLOAT64), tkc_cast(mult, TKC_FLOAT64));
  if (yzp) d = tkc_add(d, tkc_cast(yzp, TKC_FLOAT64));
  tkc_dtype out = yzp ? tkc_dtype_of(yzp) : tkc_dtype_of(x);
  if (out != TKC_INT8 && out != TKC_UINT8) return onnx_node_err(n, TKC_EUNSUPPORTED, "output dtype %s", tkc_dtype_name(out));
  double lo = out == TKC_INT8 ? -128 : 0, hi = out == TKC_INT8 ? 127 : 255;
  n->out[0].t = NULL;
  return onnx_set(n, 0, tkc_cast(tkc_round(tkc_clamp(d, lo, hi)), out));
}

/* CausalConvWithState (opset 27): a depthwise 1-D conv over [past_state (zeros) | x] without padding,
 * optionally SiLU (in float32); output 1 the last k - 1 steps of that concatenation. */
tkc_status onnx_build_causal_conv(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0), *w = onnx_in(n, 1), *b = onnx_in(n, 2), *past = onnx_in(n, 3);
  if (tkc_ndim(x) != 3 || tkc_ndim(w) != 3) return onnx_node_err(n, TKC_ESHAPE, "input (B, C, L) and weight (C, 1, k) expected");
  int64_t B = tkc_dim(x, 0), C = tkc_dim(x, 1), L = tkc_dim(x, 2), k = tkc_dim(w, 2);
  const char *act = onnx_attr_str(n, "activation", "none");
  int silu = !strcmp(act, "silu") || !strcmp(act, "swish");
  if (!silu && strcmp(act, "none")) return onnx_node_err(n, TKC_EINVAL, "activation '%s'", act);
  tkc_dtype dt = tkc_dtype_of(x);
  if (k < 1) return onnx_node_err(n, TKC_EINVAL, "kernel size %lld", (long long)k);
  tkc_tensor *padded = x;
  if (k > 1) {
    if (!past) past = tkc_full(n->m->ctx, dt, 3, (int64_t[]){B, C, k - 1}, 0);
    padded = tkc_cat(2, (tkc_tensor *[]){past, x}, 2);
  }
  tkc_tensor *y = tkc_cast(tkc_conv1d(padded, w, b, 1, 0, 0, 1, (int)C), dt);
  if (silu) y = tkc_cast(tkc_silu(tkc_cast(y, TKC_FLOAT32)), dt);
  if ((s = onnx_set(n, 0, y))) return s;
  if (n->nout > 1 && *n->proto->output[1]) {
    int64_t total = L + k - 1;
    return onnx_set(n, 1, tkc_shrink(padded, (int64_t[]){0, B, 0, C, total - (k - 1), total}));
  }
  return TKC_OK;
}

/* LinearAttention (opset 27): the recurrence of onnx's reference unrolled over the T steps (in
 * float32): state (B, Hkv, dk, dv) decayed by exp(decay) (gated), corrected by beta (delta), plus
 * k v^T; each step reads q . state (heads grouped). Output 1 the final state. */
static tkc_tensor *step_of(tkc_tensor *x4, int64_t i) { /* (B, H, T, D) -> (B, H, D) at step i */
  int64_t B = tkc_dim(x4, 0), H = tkc_dim(x4, 1), T = tkc_dim(x4, 2), D = tkc_dim(x4, 3);
  (void)T;
  return tkc_reshape(tkc_shrink(x4, (int64_t[]){0, B, 0, H, i, i + 1, 0, D}), 3, (int64_t[]){B, H, D});
}

tkc_status onnx_build_linear_attention(onnx_node *n) {
  tkc_status s = onnx_need(n, 3);
  if (s) return s;
  tkc_tensor *q = onnx_in(n, 0), *k = onnx_in(n, 1), *v = onnx_in(n, 2), *past = onnx_in(n, 3), *decay = onnx_in(n, 4), *beta = onnx_in(n, 5);
  tkc_ctx *c = n->m->ctx;
  const char *rule = onnx_attr_str(n, "update_rule", "gated_delta");
  int gating = !strcmp(rule, "gated") || !strcmp(rule, "gated_delta"), delta = !strcmp(rule, "delta") || !strcmp(rule, "gated_delta");
  if (!gating && !delta && strcmp(rule, "linear")) return onnx_node_err(n, TKC_EINVAL, "update_rule '%s'", rule);
  if ((gating && !decay) || (!gating && decay) || (delta && !beta) || (!delta && beta)) return onnx_node_err(n, TKC_EINVAL, "decay/beta do not fit update_rule '%s'", rule);
  int64_t qh = onnx_attr_int(n, "q_num_heads", 0), kvh = onnx_attr_int(n, "kv_num_heads", 0);
  if (tkc_ndim(q) != 3 || tkc_ndim(k) != 3 || tkc_ndim(v) != 3 || qh < 1 || kvh < 1 || qh % kvh || tkc_dim(q, 2) % qh || tkc_dim(v, 2) % kvh)
    return onnx_node_err(n, TKC_EINVAL, "3-D inputs with q_num_heads a multiple of kv_num_heads expected");
  int64_t B = tkc_dim(q, 0), T = tkc_dim(q, 1), dk = tkc_dim(q, 2) / qh, dv = tkc_dim(v, 2) / kvh, group = qh / kvh;
  if (T > 4096) return onnx_node_err(n, TKC_EUNSUPPORTED, "%lld steps", (long long)T);
  tkc_dtype dt = tkc_dtype_of(q), state_dt = past ? tkc_dtype_of(past) : dt;
  tkc_tensor *q4 = tkc_cast(heads_first(q, qh), TKC_FLOAT32), *k4 = tkc_cast(heads_first(k, kvh), TKC_FLOAT32), *v4 = tkc_cast(heads_first(v, kvh), TKC_FLOAT32);
  tkc_tensor *g4 = NULL, *b4 = NULL;
  if (decay) {
    int64_t last = tkc_dim(decay, 2);
    g4 = last == kvh ? tkc_permute(tkc_reshape(decay, 4, (int64_t[]){B, T, kvh, 1}), (int[]){0, 2, 1, 3}) : heads_first(decay, kvh);
    g4 = tkc_cast(g4, TKC_FLOAT32);
  }
  if (beta) b4 = tkc_cast(tkc_permute(tkc_reshape(beta, 4, (int64_t[]){B, T, tkc_dim(beta, 2), 1}), (int[]){0, 2, 1, 3}), TKC_FLOAT32);
  tkc_tensor *state = past ? tkc_cast(past, TKC_FLOAT32) : tkc_full(c, TKC_FLOAT32, 4, (int64_t[]){B, kvh, dk, dv}, 0);
  const Onnx__AttributeProto *sa = onnx_attr(n, "scale");
  double scale = sa && sa->has_f && sa->f != 0 ? sa->f : 1.0 / sqrt((double)dk);
  tkc_tensor *outs[4096];
  for (int64_t i = 0; i < T && state; i++) {
    tkc_tensor *qt = step_of(q4, i), *kt = step_of(k4, i), *vt = step_of(v4, i);
    if (g4) state = tkc_mul(state, tkc_unsqueeze(tkc_exp(step_of(g4, i)), 3));
    if (b4) {
      tkc_tensor *retrieved = tkc_sum(tkc_mul(state, tkc_unsqueeze(kt, 3)), 1, (int[]){2}, 0); /* (B, H, dv) */
      vt = tkc_mul(step_of(b4, i), tkc_sub(vt, retrieved));
    }
    state = tkc_contiguous(tkc_add(state, tkc_mul(tkc_unsqueeze(kt, 3), tkc_unsqueeze(vt, 2))));
    tkc_tensor *read = group == 1 ? state : tkc_reshape(tkc_expand(tkc_unsqueeze(state, 2), 5, (int64_t[]){B, kvh, group, dk, dv}), 4, (int64_t[]){B, qh, dk, dv});
    outs[i] = tkc_mul(tkc_sum(tkc_mul(tkc_unsqueeze(qt, 3), read), 1, (int[]){2}, 0), tkc_scalar(c, TKC_FLOAT32, scale)); /* (B, Hq, dv) */
    if (!outs[i]) return onnx_set(n, 0, NULL);
  }
  if (!state) return onnx_set(n, 0, NULL);
  tkc_tensor *o = tkc_stack((int)T, outs, 1); /* (B, T, Hq, dv) */
  if ((s = onnx_set(n, 0, tkc_cast(tkc_reshape(o, 3, (int64_t[]){B, T, qh * dv}), dt)))) return s;
  return n->nout > 1 && *n->proto->output[1] ? onnx_set(n, 1, tkc_cast(state, state_dt)) : TKC_OK;
}
