/* ops_shape.c — movement ops: Reshape, Transpose, Flatten, (Un)Squeeze, Concat, Split, Slice, Expand,
 * Tile, Pad, Trilu, CenterCropPad, DepthToSpace and SpaceToDepth. Shape values known on the host stay there. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ops_util.h"

/* ---------------------------------------------------------------- movement */
tkc_status onnx_shape_reshape(onnx_node *n) {
  tkc_status s = onnx_need(n, n->opset < 5 ? 1 : 2);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int64_t cnt;
  const int64_t *v;
  int c;
  if (n->opset < 5) {
    v = onnx_attr_ints(n, "shape", &c);
    cnt = c < 0 ? 0 : c;
  } else if (!(v = onnx_ints(n, 1, &cnt))) return tkc_last_status();
  if (cnt > ONNX_MAX_DIMS) return onnx_node_err(n, TKC_EUNSUPPORTED, "%lld dims", (long long)cnt);
  int64_t sh[ONNX_MAX_DIMS];
  int allowzero = (int)onnx_attr_int(n, "allowzero", 0);
  for (int64_t i = 0; i < cnt; i++) {
    sh[i] = v[i];
    if (v[i] == 0 && !allowzero) {
      if (i >= tkc_ndim(x)) return onnx_node_err(n, TKC_EINVAL, "a 0 in the shape at %lld copies a dim x does not have", (long long)i);
      sh[i] = tkc_dim(x, (int)i);
    }
  }
  return onnx_set_view(n, tkc_reshape(x, (int)cnt, sh));
}
tkc_status onnx_shape_transpose(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int nd = tkc_ndim(x), c, order[ONNX_MAX_DIMS];
  const int64_t *perm = onnx_attr_ints(n, "perm", &c);
  if (c >= 0 && c != nd) return onnx_node_err(n, TKC_EINVAL, "perm has %d entries for %d dims", c, nd);
  for (int d = 0; d < nd; d++) order[d] = c < 0 ? nd - 1 - d : onnx_axis(perm[d], nd);
  return onnx_set(n, 0, nd ? tkc_permute(x, order) : tkc_tensor_ref(x));
}
tkc_status onnx_shape_flatten(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int nd = tkc_ndim(x);
  int64_t a = onnx_attr_int(n, "axis", 1);
  if (a < 0) a += nd;
  if (a < 0 || a > nd) return onnx_node_err(n, TKC_EINVAL, "axis out of range");
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < nd; d++) {
    if (d < a) outer *= tkc_dim(x, d);
    else inner *= tkc_dim(x, d);
  }
  int64_t sh[2] = {outer, inner};
  return onnx_set(n, 0, tkc_reshape(x, 2, sh));
}
/* Squeeze / Unsqueeze axes: an input from opset 13, an attribute before */
static tkc_status squeeze_axes(onnx_node *n, int64_t *axes, int64_t *cnt) {
  const int64_t *v;
  if (n->opset >= 13) {
    *cnt = 0;
    if (!onnx_has(n, 1)) return TKC_OK;
    if (!(v = onnx_ints(n, 1, cnt))) return tkc_last_status();
  } else {
    int c;
    v = onnx_attr_ints(n, "axes", &c);
    *cnt = c < 0 ? 0 : c;
  }
  if (*cnt > ONNX_MAX_DIMS) return onnx_node_err(n, TKC_EINVAL, "%lld axes", (long long)*cnt);
  for (int64_t i = 0; i < *cnt; i++) axes[i] = v[i];
  return TKC_OK;
}
tkc_status onnx_shape_squeeze(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int64_t ax[ONNX_MAX_DIMS], cnt;
  if ((s = squeeze_axes(n, ax, &cnt))) return s;
  int axes[ONNX_MAX_DIMS], nd = tkc_ndim(x);
  for (int64_t i = 0; i < cnt; i++)
    if ((axes[i] = onnx_axis(ax[i], nd)) < 0) return onnx_node_err(n, TKC_EINVAL, "axis %lld out of range", (long long)ax[i]);
  return onnx_set_view(n, tkc_squeeze(x, (int)cnt, axes));
}
tkc_status onnx_shape_unsqueeze(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int64_t ax[ONNX_MAX_DIMS], cnt;
  if ((s = squeeze_axes(n, ax, &cnt))) return s;
  int nd = tkc_ndim(x), out_nd = nd + (int)cnt;
  if (out_nd > ONNX_MAX_DIMS) return onnx_node_err(n, TKC_EUNSUPPORTED, "%d dims", out_nd);
  int is_new[ONNX_MAX_DIMS] = {0};
  for (int64_t i = 0; i < cnt; i++) {
    int a = onnx_axis(ax[i], out_nd);
    if (a < 0 || is_new[a]) return onnx_node_err(n, TKC_EINVAL, "axis %lld out of range or repeated", (long long)ax[i]);
    is_new[a] = 1;
  }
  int64_t sh[ONNX_MAX_DIMS];
  for (int d = 0, k = 0; d < out_nd; d++) sh[d] = is_new[d] ? 1 : tkc_dim(x, k++);
  return onnx_set_view(n, tkc_reshape(x, out_nd, sh));
}
tkc_status onnx_shape_concat(onnx_node *n) {
  if (n->nin < 1) return onnx_node_err(n, TKC_EINVAL, "no inputs");
  tkc_tensor *ts[256];
  int k = 0, all_host = 1;
  if (n->nin > 256) return onnx_node_err(n, TKC_EUNSUPPORTED, "more than 256 inputs");
  for (int i = 0; i < n->nin; i++) {
    if (!onnx_has(n, i)) continue;
    all_host &= n->in[i]->host != NULL;
    ts[k++] = onnx_in(n, i);
  }
  int nd = tkc_ndim(ts[0]);
  int axis = onnx_axis(onnx_attr_int(n, "axis", 0), nd);
  if (axis < 0) return onnx_node_err(n, TKC_EINVAL, "axis out of range");
  /* empty pieces add nothing (tkc_cat may refuse a 0-size piece of another rank) */
  tkc_tensor *nz[256];
  int m = 0;
  for (int i = 0; i < k; i++)
    if (tkc_numel(ts[i]) != 0) nz[m++] = ts[i];
  tkc_status s = onnx_set(n, 0, m == 0 ? tkc_cat(k, ts, axis) : m == 1 ? tkc_tensor_ref(nz[0]) : tkc_cat(m, nz, axis));
  if (!s && all_host && nd == 1) {
    int64_t total = tkc_numel(n->out[0].t), off = 0;
    int64_t *v = malloc(sizeof(int64_t) * (size_t)(total ? total : 1));
    for (int i = 0; v && i < n->nin; i++) {
      if (!onnx_has(n, i)) continue;
      int64_t c = tkc_numel(onnx_in(n, i));
      memcpy(v + off, n->in[i]->host, sizeof(int64_t) * (size_t)c);
      off += c;
    }
    if (v) onnx_set_host(n, 0, v);
  }
  return s;
}
tkc_status onnx_shape_split(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int nd = tkc_ndim(x);
  int axis = onnx_axis(onnx_attr_int(n, "axis", 0), nd);
  if (axis < 0) return onnx_node_err(n, TKC_EINVAL, "axis out of range");
  int64_t dim = tkc_dim(x, axis), sizes[256];
  int parts = n->nout;
  if (parts > 256) return onnx_node_err(n, TKC_EUNSUPPORTED, "more than 256 outputs");
  const int64_t *v = NULL;
  int64_t cnt = -1;
  int c;
  if (n->opset >= 13) {
    if (onnx_has(n, 1) && !(v = onnx_ints(n, 1, &cnt))) return tkc_last_status();
  } else {
    v = onnx_attr_ints(n, "split", &c);
    cnt = c;
  }
  if (v && cnt >= 0) {
    if (cnt != parts) return onnx_node_err(n, TKC_EINVAL, "%lld split sizes for %d outputs", (long long)cnt, parts);
    for (int i = 0; i < parts; i++) sizes[i] = v[i];
  } else {
    int64_t ns = onnx_attr_int(n, "num_outputs", parts);
    if (ns != parts || ns < 1) return onnx_node_err(n, TKC_EINVAL, "num_outputs %lld for %d outputs", (long long)ns, parts);
    int64_t each = (dim + parts - 1) / parts;
    for (int i = 0; i < parts; i++) {
      int64_t left = dim - each * i;
      sizes[i] = left < 0 ? 0 : left < each ? left : each;
    }
  }
  tkc_tensor *outs[256];
  if (tkc_split(x, axis, parts, sizes, outs) != TKC_OK) return onnx_node_err(n, tkc_last_status(), "%s", tkc_last_error());
  for (int i = 0; i < parts; i++) n->out[i].t = outs[i];
  return TKC_OK;
}
tkc_status onnx_shape_slice(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int nd = tkc_ndim(x);
  int64_t starts[ONNX_MAX_DIMS], ends[ONNX_MAX_DIMS], axes[ONNX_MAX_DIMS], steps[ONNX_MAX_DIMS], cnt;
  const int64_t *v;
  int c;
  if (n->opset < 10) {
    const int64_t *st = onnx_attr_ints(n, "starts", &c), *en;
    int ce, ca;
    en = onnx_attr_ints(n, "ends", &ce);
    if (c < 0 || ce != c || c > ONNX_MAX_DIMS) return onnx_node_err(n, TKC_EINVAL, "starts/ends");
    cnt = c;
    const int64_t *ax = onnx_attr_ints(n, "axes", &ca);
    for (int64_t i = 0; i < cnt; i++) starts[i] = st[i], ends[i] = en[i], axes[i] = ca == c ? ax[i] : i, steps[i] = 1;
  } else {
    if ((s = onnx_need(n, 3))) return s;
    int64_t ce;
    if (!(v = onnx_ints(n, 1, &cnt))) return tkc_last_status();
    if (cnt > ONNX_MAX_DIMS) return onnx_node_err(n, TKC_EINVAL, "%lld starts", (long long)cnt);
    memcpy(starts, v, sizeof(int64_t) * (size_t)cnt);
    if (!(v = onnx_ints(n, 2, &ce))) return tkc_last_status();
    if (ce != cnt) return onnx_node_err(n, TKC_EINVAL, "starts and ends differ in length");
    memcpy(ends, v, sizeof(int64_t) * (size_t)cnt);
    for (int64_t i = 0; i < cnt; i++) axes[i] = i, steps[i] = 1;
    if (onnx_has(n, 3)) {
      if (!(v = onnx_ints(n, 3, &ce))) return tkc_last_status();
      if (ce != cnt) return onnx_node_err(n, TKC_EINVAL, "axes differ in length");
      memcpy(axes, v, sizeof(int64_t) * (size_t)cnt);
    }
    if (onnx_has(n, 4)) {
      if (!(v = onnx_ints(n, 4, &ce))) return tkc_last_status();
      if (ce != cnt) return onnx_node_err(n, TKC_EINVAL, "steps differ in length");
      memcpy(steps, v, sizeof(int64_t) * (size_t)cnt);
    }
  }
  int64_t rng[2 * ONNX_MAX_DIMS], step[ONNX_MAX_DIMS];
  for (int d = 0; d < nd; d++) rng[2 * d] = 0, rng[2 * d + 1] = tkc_dim(x, d), step[d] = 1;
  for (int64_t i = 0; i < cnt; i++) {
    int a = onnx_axis(axes[i], nd);
    if (a < 0) return onnx_node_err(n, TKC_EINVAL, "axis %lld out of range", (long long)axes[i]);
    int64_t dim = tkc_dim(x, a), st = starts[i], en = ends[i], sp = steps[i];
    if (sp == 0) return onnx_node_err(n, TKC_EINVAL, "step 0");
    if (st < 0) st += dim;
    if (en < 0) en += dim;
    if (sp > 0) {
      st = st < 0 ? 0 : st > dim ? dim : st;
      en = en < 0 ? 0 : en > dim ? dim : en;
      if (en < st) en = st;
      rng[2 * a] = st, rng[2 * a + 1] = en;
    } else { /* walk down from st to en (exclusive): the flip of [en+1, st+1) */
      st = st < 0 ? -1 : st > dim - 1 ? dim - 1 : st;
      en = en < -1 ? -1 : en > dim - 1 ? dim - 1 : en;
      if (st < en) st = en;
      rng[2 * a] = en + 1, rng[2 * a + 1] = st + 1;
    }
    step[a] = sp;
  }
  tkc_tensor *r = tkc_shrink(x, rng);
  for (int d = 0; d < nd && r; d++) {
    int64_t sp = step[d];
    if (sp == 1) continue;
    if (sp < 0) {
      r = tkc_flip(r, 1, &d);
      sp = -sp;
    }
    if (sp == 1) continue;
    /* every sp-th element: pad the axis to a multiple of sp, split it (len, sp) and keep index 0 */
    int64_t len = tkc_dim(r, d), outn = (len + sp - 1) / sp;
    int rnd = tkc_ndim(r);
    int64_t pads[2 * ONNX_MAX_DIMS] = {0}, sh[ONNX_MAX_DIMS + 1], keep[2 * (ONNX_MAX_DIMS + 1)];
    pads[2 * d + 1] = outn * sp - len;
    r = tkc_pad(r, pads, 0);
    int k = 0;
    for (int e = 0; e < rnd; e++) {
      if (e == d) sh[k++] = outn, sh[k++] = sp;
      else sh[k++] = tkc_dim(r, e);
    }
    r = tkc_reshape(r, rnd + 1, sh);
    for (int e = 0; e < rnd + 1; e++) keep[2 * e] = 0, keep[2 * e + 1] = sh[e];
    keep[2 * (d + 1) + 1] = 1;
    r = tkc_shrink(r, keep);
    int64_t fin[ONNX_MAX_DIMS];
    for (int e = 0; e < rnd; e++) fin[e] = e == d ? outn : tkc_dim(r, e < d ? e : e + 1);
    r = tkc_reshape(r, rnd, fin);
  }
  s = onnx_set(n, 0, r);
  if (!s && n->in[0]->host && nd == 1 && cnt == 1) {
    int64_t total = tkc_numel(r), *hv = malloc(sizeof(int64_t) * (size_t)(total ? total : 1));
    int64_t a = steps[0] > 0 ? rng[0] : rng[1] - 1;
    for (int64_t i = 0; hv && i < total; i++) hv[i] = n->in[0]->host[a + i * steps[0]];
    if (hv) onnx_set_host(n, 0, hv);
  }
  return s;
}

tkc_status onnx_shape_expand(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int64_t cnt;
  const int64_t *v = onnx_ints(n, 1, &cnt);
  if (!v) return tkc_last_status();
  int nd = tkc_ndim(x), out_nd = (int)(cnt > nd ? cnt : nd);
  if (out_nd > ONNX_MAX_DIMS) return onnx_node_err(n, TKC_EUNSUPPORTED, "%d dims", out_nd);
  /* bidirectional broadcast: each dim is the larger of x's and the shape's (1 broadcasts) */
  int64_t sh[ONNX_MAX_DIMS], xs[ONNX_MAX_DIMS];
  for (int d = 0; d < out_nd; d++) {
    int xd = d - (out_nd - nd), vd = d - (out_nd - (int)cnt);
    int64_t a = xd >= 0 ? tkc_dim(x, xd) : 1, b = vd >= 0 ? v[vd] : 1;
    xs[d] = a;
    sh[d] = a == 1 ? b : a;
    if (b != 1 && a != 1 && a != b) return onnx_node_err(n, TKC_ESHAPE, "cannot expand size %lld to %lld", (long long)a, (long long)b);
  }
  return onnx_set(n, 0, tkc_expand(tkc_reshape(x, out_nd, xs), out_nd, sh));
}
tkc_status onnx_shape_tile(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  int64_t cnt;
  const int64_t *v = onnx_ints(n, 1, &cnt);
  if (!v) return tkc_last_status();
  return onnx_set(n, 0, tkc_repeat(onnx_in(n, 0), (int)cnt, v));
}
tkc_status onnx_shape_pad(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int nd = tkc_ndim(x);
  const char *mode = onnx_attr_str(n, "mode", "constant");
  int pad_mode = !strcmp(mode, "constant") ? 0 : !strcmp(mode, "edge") ? 1 : !strcmp(mode, "reflect") ? 2 : !strcmp(mode, "wrap") ? 3 : -1;
  if (pad_mode < 0) return onnx_node_err(n, TKC_EINVAL, "mode '%s'", mode);
  int64_t cnt;
  const int64_t *v;
  double value = 0;
  int c;
  int64_t axes[ONNX_MAX_DIMS];
  int naxes = nd;
  for (int d = 0; d < nd; d++) axes[d] = d;
  if (n->opset < 11) {
    v = onnx_attr_ints(n, n->opset < 2 ? "paddings" : "pads", &c);
    cnt = c;
    value = onnx_attr_float(n, "value", 0);
  } else {
    if (!(v = onnx_ints(n, 1, &cnt))) return tkc_last_status();
    if (onnx_has(n, 2)) {
      int64_t vc;
      double *d = onnx_doubles(n, 2, &vc);
      if (!d) return tkc_last_status();
      value = vc ? d[0] : 0;
      free(d);
    }
    if (onnx_has(n, 3)) {
      int64_t ac;
      const int64_t *av = onnx_ints(n, 3, &ac);
      if (!av) return tkc_last_status();
      if (ac > nd) return onnx_node_err(n, TKC_EINVAL, "too many axes");
      naxes = (int)ac;
      for (int i = 0; i < naxes; i++) {
        int a = onnx_axis(av[i], nd);
        if (a < 0) return onnx_node_err(n, TKC_EINVAL, "axis out of range");
        axes[i] = a;
      }
    }
  }
  if (!v || cnt != 2 * naxes) return onnx_node_err(n, TKC_EINVAL, "%lld pads for %d axes", (long long)cnt, naxes);
  int64_t pads[2 * ONNX_MAX_DIMS] = {0}, rng[2 * ONNX_MAX_DIMS];
  int negative = 0;
  for (int i = 0; i < naxes; i++) {
    pads[2 * axes[i]] = v[i], pads[2 * axes[i] + 1] = v[i + naxes];
    negative |= v[i] < 0 || v[i + naxes] < 0;
  }
  if (pad_mode) { /* edge / reflect / wrap: each padded axis gathers its source positions */
    for (int d = 0; d < nd && x; d++) {
      int64_t dim = tkc_dim(x, d), len = dim + pads[2 * d] + pads[2 * d + 1];
      if (!pads[2 * d] && !pads[2 * d + 1]) continue;
      if (dim < 1 || len < 0 || len > (1 << 24)) return onnx_node_err(n, TKC_EINVAL, "pads %lld, %lld on a dim of %lld", (long long)pads[2 * d], (long long)pads[2 * d + 1], (long long)dim);
      int64_t *src = malloc(sizeof(int64_t) * (size_t)(len ? len : 1));
      if (!src) return onnx_node_err(n, TKC_ENOMEM, "out of memory");
      for (int64_t o = 0; o < len; o++) {
        int64_t i = o - pads[2 * d];
        if (pad_mode == 1) i = i < 0 ? 0 : i >= dim ? dim - 1 : i;
        else if (pad_mode == 3) i = ((i % dim) + dim) % dim;
        else if (dim == 1) i = 0;
        else { /* reflect without repeating the edge: period 2 (dim - 1) */
          int64_t per = 2 * (dim - 1);
          i = ((i % per) + per) % per;
          if (i >= dim) i = per - i;
        }
        src[o] = i;
      }
      tkc_tensor *idx = tkc_tensor_new(n->m->ctx, TKC_INT64, 1, &len, src);
      free(src);
      x = tkc_index_select(x, d, idx);
    }
    return onnx_set(n, 0, x);
  }
  if (negative) { /* negative pads crop */
    for (int d = 0; d < nd; d++) {
      rng[2 * d] = pads[2 * d] < 0 ? -pads[2 * d] : 0;
      rng[2 * d + 1] = tkc_dim(x, d) + (pads[2 * d + 1] < 0 ? pads[2 * d + 1] : 0);
      pads[2 * d] = pads[2 * d] < 0 ? 0 : pads[2 * d];
      pads[2 * d + 1] = pads[2 * d + 1] < 0 ? 0 : pads[2 * d + 1];
    }
    x = tkc_shrink(x, rng);
  }
  return onnx_set(n, 0, tkc_pad(x, pads, value));
}
tkc_status onnx_shape_trilu(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  int64_t k = 0, cnt;
  if (onnx_has(n, 1)) {
    const int64_t *v = onnx_ints(n, 1, &cnt);
    if (!v) return tkc_last_status();
    k = cnt ? v[0] : 0;
  }
  tkc_tensor *x = onnx_in(n, 0);
  return onnx_set(n, 0, onnx_attr_int(n, "upper", 1) ? tkc_triu(x, k) : tkc_tril(x, k));
}
tkc_status onnx_shape_center_crop_pad(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int nd = tkc_ndim(x), c;
  int64_t cnt;
  const int64_t *sv = onnx_ints(n, 1, &cnt);
  if (!sv) return tkc_last_status();
  const int64_t *av = onnx_attr_ints(n, "axes", &c);
  if ((c < 0 && cnt != nd) || (c >= 0 && cnt != c)) return onnx_node_err(n, TKC_EINVAL, "shape and axes differ in length");
  int64_t rng[2 * ONNX_MAX_DIMS], pads[2 * ONNX_MAX_DIMS] = {0};
  for (int d = 0; d < nd; d++) rng[2 * d] = 0, rng[2 * d + 1] = tkc_dim(x, d);
  for (int64_t i = 0; i < cnt; i++) {
    int a = c < 0 ? (int)i : onnx_axis(av[i], nd);
    if (a < 0 || sv[i] < 0) return onnx_node_err(n, TKC_EINVAL, "axis or size out of range");
    int64_t d = tkc_dim(x, a), t = sv[i];
    if (t < d) rng[2 * a] = (d - t) / 2, rng[2 * a + 1] = (d - t) / 2 + t;
    else pads[2 * a] = (t - d) / 2, pads[2 * a + 1] = t - d - (t - d) / 2;
  }
  return onnx_set(n, 0, tkc_pad(tkc_shrink(x, rng), pads, 0));
}
tkc_status onnx_shape_depth_to_space(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  if (tkc_ndim(x) != 4) return onnx_node_err(n, TKC_EINVAL, "needs 4-D input");
  int64_t b = onnx_attr_int(n, "blocksize", 0), N = tkc_dim(x, 0), C = tkc_dim(x, 1), H = tkc_dim(x, 2), W = tkc_dim(x, 3);
  if (b < 1 || C % (b * b)) return onnx_node_err(n, TKC_EINVAL, "blocksize %lld", (long long)b);
  int crd = !strcmp(onnx_attr_str(n, "mode", "DCR"), "CRD");
  int64_t sh[6] = {N, b, b, C / (b * b), H, W}, sh_crd[6] = {N, C / (b * b), b, b, H, W}, fin[4] = {N, C / (b * b), H * b, W * b};
  int perm[6] = {0, 3, 4, 1, 5, 2}, perm_crd[6] = {0, 1, 4, 2, 5, 3};
  tkc_tensor *r = crd ? tkc_permute(tkc_reshape(x, 6, sh_crd), perm_crd) : tkc_permute(tkc_reshape(x, 6, sh), perm);
  return onnx_set(n, 0, tkc_reshape(r, 4, fin));
}
tkc_status onnx_shape_space_to_depth(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  if (tkc_ndim(x) != 4) return onnx_node_err(n, TKC_EINVAL, "needs 4-D input");
  int64_t b = onnx_attr_int(n, "blocksize", 0), N = tkc_dim(x, 0), C = tkc_dim(x, 1), H = tkc_dim(x, 2), W = tkc_dim(x, 3);
  if (b < 1 || H % b || W % b) return onnx_node_err(n, TKC_EINVAL, "blocksize %lld", (long long)b);
  int64_t sh[6] = {N, C, H / b, b, W / b, b}, fin[4] = {N, C * b * b, H / b, W / b};
  int perm[6] = {0, 3, 5, 1, 2, 4};
  return onnx_set(n, 0, tkc_reshape(tkc_permute(tkc_reshape(x, 6, sh), perm), 4, fin));
}
