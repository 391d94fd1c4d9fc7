/* resize.c — Resize (opset 10+) and Upsample (7-9) as onnx's reference computes them: each resized
 * axis independently, the output position mapped to a source coordinate (coordinate_transformation_mode),
 * then n taps around it weighted by the mode's coefficients (nearest, linear, cubic; antialiased when
 * downsampling), edge-clamped or renormalized (exclude_outside). The taps of an axis are a host-built
 * (out x in) weight matrix, so an axis is one matmul whatever the mode. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ops_util.h"

typedef struct resize_opts {
  const char *mode, *ctm, *nearest;
  double cubic_a, extrapolation;
  int exclude_outside, antialias;
} resize_opts;

/* coefficients of the taps for fractional position ratio in (0, 1]; returns n (<= 64) */
static int coeffs(const resize_opts *o, double ratio, double scale, double *c) {
  if (!strcmp(o->mode, "nearest")) {
    if (ratio == 1.0) return c[0] = 0, c[1] = 1, 2;
    int up;
    if (!strcmp(o->nearest, "round_prefer_ceil")) up = ratio >= 0.5;
    else if (!strcmp(o->nearest, "floor")) up = 0;
    else if (!strcmp(o->nearest, "ceil")) up = 1;
    else up = ratio > 0.5;
    return c[0] = !up, c[1] = up, 2;
  }
  double s = scale < 1.0 ? scale : 1.0;
  if (!strcmp(o->mode, "linear")) {
    if (!o->antialias) return c[0] = 1 - ratio, c[1] = ratio, 2;
    int start = (int)floor(-1 / s) + 1, n = 2 - 2 * start;
    if (n > 64) return -1;
    double sum = 0;
    for (int i = 0; i < n; i++) {
      double a = fabs((start + i - ratio) * s);
      c[i] = a < 1 ? 1 - a : 0;
      sum += c[i];
    }
    for (int i = 0; i < n; i++) c[i] /= sum;
    return n;
  }
  double A = o->cubic_a;
  if (!o->antialias) {
    double r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
    c[0] = ((A * r1 - 5 * A) * r1 + 8 * A) * r1 - 4 * A;
    c[1] = ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1;
    c[2] = ((A + 2) * q - (A + 3)) * q * q + 1;
    c[3] = ((A * q1 - 5 * A) * q1 + 8 * A) * q1 - 4 * A;
    return 4;
  }
  int start = (int)floor(-2 / s) + 1, n = 2 - 2 * start;
  if (n > 64) return -1;
  double sum = 0;
  for (int i = 0; i < n; i++) {
    double x = fabs(s * (start + i - ratio)), x2 = x * x, x3 = x2 * x;
    c[i] = x <= 1 ? (A + 2) * x3 - (A + 3) * x2 + 1 : x < 2 ? A * x3 - 5 * A * x2 + 8 * A * x - 4 * A : 0;
    sum += c[i];
  }
  for (int i = 0; i < n; i++) c[i] /= sum;
  return n;
}

/* the (out x in) weights of one axis; *extra (out) gets 1 where tf_crop_and_resize extrapolates; returns 0 when not the identity */
static int axis_weights(const resize_opts *o, int64_t in, int64_t out, double scale, const double *roi, float *w, float *extra) {
  double out_f = scale * (double)in;
  int identity = in == out;
  for (int64_t y = 0; y < out; y++) {
    double x;
    const char *m = o->ctm;
    extra[y] = 0;
    if (!strcmp(m, "align_corners")) x = out_f == 1 ? 0 : (double)y * (double)(in - 1) / (out_f - 1);
    else if (!strcmp(m, "asymmetric")) x = (double)y / scale;
    else if (!strcmp(m, "tf_crop_and_resize")) {
      x = out_f == 1 ? (roi[1] - roi[0]) * (double)(in - 1) / 2 : (double)y * (roi[1] - roi[0]) * (double)(in - 1) / (out_f - 1);
      x += roi[0] * (double)(in - 1);
    } else if (!strcmp(m, "pytorch_half_pixel")) x = out_f == 1 ? -0.5 : ((double)y + 0.5) / scale - 0.5;
    else if (!strcmp(m, "half_pixel_symmetric")) {
      double adj = (double)out / out_f, center = (double)in / 2;
      x = center * (1 - adj) + ((double)y + 0.5) / scale - 0.5;
    } else x = ((double)y + 0.5) / scale - 0.5;
    float *row = w + y * in;
    memset(row, 0, sizeof(float) * (size_t)in);
    if (!strcmp(m, "tf_crop_and_resize") && (x < 0 || x > (double)(in - 1))) {
      extra[y] = 1;
      identity = 0;
      continue;
    }
    double fl = floor(x), ratio = x == fl ? 1.0 : x - fl, base = x == fl ? fl - 1 : fl, c[64];
    int n = coeffs(o, ratio, scale, c);
    if (n < 0) return -1;
    int64_t first = (int64_t)base + 1 - n / 2;
    if (o->exclude_outside) {
      double sum = 0;
      for (int k = 0; k < n; k++) {
        int64_t i = first + k;
        if (i < 0 || i >= in) c[k] = 0;
        sum += c[k];
      }
      for (int k = 0; k < n && sum != 0; k++) c[k] /= sum;
    }
    for (int k = 0; k < n; k++) {
      int64_t i = first + k;
      i = i < 0 ? 0 : i >= in ? in - 1 : i;
      row[i] += (float)c[k];
    }
    for (int64_t i = 0; i < in && identity; i++) identity = row[i] == (i == y ? 1.0f : 0.0f);
  }
  return !identity;
}

static tkc_status resize_axes(onnx_node *n, const resize_opts *o, const double *scales, const int64_t *sizes, const double *roi) {
  tkc_tensor *x = onnx_in(n, 0);
  tkc_dtype dt = tkc_dtype_of(x);
  int nd = tkc_ndim(x);
  tkc_tensor *r = onnx_is_float(dt) ? x : tkc_cast(x, TKC_FLOAT32);
  tkc_dtype wdt = onnx_is_float(dt) ? dt : TKC_FLOAT32;
  for (int a = 0; a < nd && r; a++) {
    int64_t in = tkc_dim(x, a), out = sizes[a];
    if (in < 1 || out < 1 || in > (1 << 16) || out > (1 << 16) || in * out > (1 << 26))
      return onnx_node_err(n, TKC_EUNSUPPORTED, "axis %d from %lld to %lld", a, (long long)in, (long long)out);
    float *w = malloc(sizeof(float) * (size_t)(in * out)), *extra = malloc(sizeof(float) * (size_t)out);
    double ar[2] = {roi ? roi[a] : 0, roi ? roi[a + nd] : 1};
    int need = w && extra ? axis_weights(o, in, out, scales[a], ar, w, extra) : -2;
    if (need < 0) {
      free(w), free(extra);
      return onnx_node_err(n, need == -1 ? TKC_EUNSUPPORTED : TKC_ENOMEM, need == -1 ? "antialias footprint too wide" : "out of memory");
    }
    if (need) {
      int64_t ws[2] = {out, in}, es[1] = {out};
      tkc_tensor *wt = tkc_cast(tkc_tensor_new(n->m->ctx, TKC_FLOAT32, 2, ws, w), wdt);
      tkc_tensor *moved = tkc_transpose(r, a, nd - 1);
      tkc_tensor *y = tkc_matmul(moved, tkc_transpose(wt, 0, 1));
      int has_extra = 0;
      for (int64_t i = 0; i < out; i++) has_extra |= extra[i] != 0;
      if (has_extra) {
        tkc_tensor *e = tkc_cast(tkc_tensor_new(n->m->ctx, TKC_FLOAT32, 1, es, extra), wdt);
        y = tkc_add(y, tkc_mul(e, tkc_scalar(n->m->ctx, wdt, o->extrapolation)));
      }
      r = tkc_transpose(y, a, nd - 1);
    }
    free(w), free(extra);
  }
  if (r && tkc_dtype_of(r) != dt) r = tkc_cast(r, dt);
  return onnx_set(n, 0, r == x ? tkc_tensor_ref(x) : r);
}

tkc_status onnx_build_resize(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int nd = tkc_ndim(x);
  resize_opts o = {onnx_attr_str(n, "mode", "nearest"), onnx_attr_str(n, "coordinate_transformation_mode", "half_pixel"),
                   onnx_attr_str(n, "nearest_mode", "round_prefer_floor"), onnx_attr_float(n, "cubic_coeff_a", -0.75),
                   onnx_attr_float(n, "extrapolation_value", 0), (int)onnx_attr_int(n, "exclude_outside", 0), (int)onnx_attr_int(n, "antialias", 0)};
  int is_upsample = !strcmp(n->proto->op_type, "Upsample");
  if (is_upsample || n->opset < 11) o.ctm = "asymmetric";
  if (is_upsample) o.nearest = "floor";
  if (strcmp(o.mode, "nearest") && strcmp(o.mode, "linear") && strcmp(o.mode, "cubic") && strcmp(o.mode, "bilinear"))
    return onnx_node_err(n, TKC_EUNSUPPORTED, "mode '%s'", o.mode);
  if (!strcmp(o.mode, "bilinear")) o.mode = "linear";
  int c;
  const int64_t *axes_attr = onnx_attr_ints(n, "axes", &c);
  int axes[ONNX_MAX_DIMS], naxes = c < 0 ? nd : c;
  if (naxes > nd) return onnx_node_err(n, TKC_EINVAL, "%d axes", naxes);
  for (int i = 0; i < naxes; i++)
    if ((axes[i] = c < 0 ? i : onnx_axis(axes_attr[i], nd)) < 0) return onnx_node_err(n, TKC_EINVAL, "axis out of range");
  double scales[ONNX_MAX_DIMS], roi[2 * ONNX_MAX_DIMS];
  int64_t sizes[ONNX_MAX_DIMS];
  for (int d = 0; d < nd; d++) scales[d] = 1, sizes[d] = tkc_dim(x, d), roi[d] = 0, roi[d + nd] = 1;
  int scales_in = is_upsample ? 1 : n->opset < 11 ? 1 : 2, sizes_in = is_upsample || n->opset < 11 ? -1 : 3;
  int64_t cnt;
  if (is_upsample && n->opset < 9) {
    const Onnx__AttributeProto *a = onnx_attr(n, "scales");
    if (!a || (int)a->n_floats != nd) return onnx_node_err(n, TKC_EINVAL, "scales");
    for (int d = 0; d < nd; d++) scales[d] = a->floats[d];
    scales_in = -1;
  }
  int have_sizes = sizes_in > 0 && onnx_has(n, sizes_in) && tkc_numel(onnx_in(n, sizes_in)) > 0;
  if (have_sizes) {
    const int64_t *sv = onnx_ints(n, sizes_in, &cnt);
    if (!sv) return tkc_last_status();
    if (cnt != naxes) return onnx_node_err(n, TKC_EINVAL, "%lld sizes for %d axes", (long long)cnt, naxes);
    const char *policy = onnx_attr_str(n, "keep_aspect_ratio_policy", "stretch");
    if (!strcmp(policy, "stretch")) {
      for (int i = 0; i < naxes; i++) sizes[axes[i]] = sv[i], scales[axes[i]] = (double)sv[i] / (double)tkc_dim(x, axes[i]);
    } else {
      int larger = !strcmp(policy, "not_smaller");
      double sc = larger ? 0 : INFINITY;
      for (int i = 0; i < naxes; i++) {
        double r = (double)sv[i] / (double)tkc_dim(x, axes[i]);
        sc = larger ? (r > sc ? r : sc) : (r < sc ? r : sc);
      }
      for (int i = 0; i < naxes; i++) scales[axes[i]] = sc, sizes[axes[i]] = (int64_t)nearbyint(sc * (double)tkc_dim(x, axes[i]));
    }
  } else if (scales_in > 0) {
    int64_t sc_cnt;
    double *sv = onnx_doubles(n, scales_in, &sc_cnt);
    if (!sv) return tkc_last_status();
    if (sc_cnt != naxes) {
      free(sv);
      return onnx_node_err(n, TKC_EINVAL, "%lld scales for %d axes", (long long)sc_cnt, naxes);
    }
    for (int i = 0; i < naxes; i++) scales[axes[i]] = (float)sv[i]; /* scales are float32 in the file */
    free(sv);
  }
  if (!have_sizes)
    for (int d = 0; d < nd; d++) {
      if (!(scales[d] > 0) || scales[d] > 1e6) return onnx_node_err(n, TKC_EINVAL, "scale %g", scales[d]);
      sizes[d] = (int64_t)floor(scales[d] * (double)tkc_dim(x, d));
    }
  if (!strcmp(o.ctm, "tf_crop_and_resize")) {
    double *rv = onnx_has(n, 1) ? onnx_doubles(n, 1, &cnt) : NULL;
    if (!rv || cnt != 2 * naxes) {
      free(rv);
      return onnx_node_err(n, TKC_EINVAL, "tf_crop_and_resize needs a roi of 2 per axis");
    }
    for (int i = 0; i < naxes; i++) roi[axes[i]] = rv[i], roi[axes[i] + nd] = rv[i + naxes];
    free(rv);
  }
  return resize_axes(n, &o, scales, sizes, roi);
}
