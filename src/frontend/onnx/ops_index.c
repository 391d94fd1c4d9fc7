/* ops_index.c — indexing: Gather, GatherElements, OneHot, and the ops whose output shape depends on
 * the data (Compress, NonZero: their values are read on the host). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ops_util.h"

/* ---------------------------------------------------------------- indexing */
tkc_status onnx_index_gather(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0), *idx = onnx_in(n, 1);
  int nd = tkc_ndim(x), axis = onnx_axis(onnx_attr_int(n, "axis", 0), nd);
  if (axis < 0) return onnx_node_err(n, TKC_EINVAL, "axis out of range");
  /* host: a 1-D x of known values (a shape) indexed by known indices */
  if (n->in[0]->host && nd == 1 && (n->in[1]->host || tkc_numel(idx) <= 64)) {
    int64_t cnt;
    const int64_t *iv = onnx_ints(n, 1, &cnt);
    if (!iv) return tkc_last_status();
    int64_t dim = tkc_dim(x, 0), *v = malloc(sizeof(int64_t) * (size_t)(cnt ? cnt : 1));
    if (!v) return onnx_node_err(n, TKC_ENOMEM, "out of memory");
    for (int64_t i = 0; i < cnt; i++) {
      int64_t k = iv[i] < 0 ? iv[i] + dim : iv[i];
      if (k < 0 || k >= dim) {
        free(v);
        return onnx_node_err(n, TKC_EINVAL, "index %lld out of range [%lld, %lld)", (long long)iv[i], (long long)-dim, (long long)dim);
      }
      v[i] = n->in[0]->host[k];
    }
    int ind;
    int64_t ish[ONNX_MAX_DIMS];
    onnx_shape_of(idx, &ind, ish);
    return onnx_set_host_tensor(n, 0, tkc_dtype_of(x), ind, ish, v);
  }
  return onnx_set(n, 0, tkc_index_select(x, axis, idx));
}
tkc_status onnx_index_gather_elements(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int axis = onnx_axis(onnx_attr_int(n, "axis", 0), tkc_ndim(x));
  if (axis < 0) return onnx_node_err(n, TKC_EINVAL, "axis out of range");
  return onnx_set(n, 0, tkc_gather(x, axis, onnx_in(n, 1)));
}
tkc_status onnx_index_one_hot(onnx_node *n) {
  tkc_status s = onnx_need(n, 3);
  if (s) return s;
  tkc_tensor *idx = onnx_in(n, 0), *vals = onnx_in(n, 2);
  double *dv;
  int64_t cnt;
  if (!(dv = onnx_doubles(n, 1, &cnt))) return tkc_last_status();
  int64_t depth = cnt ? (int64_t)dv[0] : 0;
  free(dv);
  if (depth < 1) return onnx_node_err(n, TKC_EINVAL, "depth %lld", (long long)depth);
  int nd = tkc_ndim(idx) + 1, axis = onnx_axis(onnx_attr_int(n, "axis", -1), nd);
  if (axis < 0) return onnx_node_err(n, TKC_EINVAL, "axis out of range");
  tkc_tensor *i64 = tkc_cast(idx, TKC_INT64);
  tkc_tensor *dep = tkc_scalar(n->m->ctx, TKC_INT64, (double)depth);
  i64 = tkc_where(tkc_lt(i64, tkc_scalar(n->m->ctx, TKC_INT64, 0)), tkc_add(i64, dep), i64);
  i64 = tkc_unsqueeze(i64, axis);
  int64_t rs[ONNX_MAX_DIMS + 1];
  for (int d = 0; d < nd; d++) rs[d] = d == axis ? depth : 1;
  tkc_tensor *ar = tkc_reshape(tkc_arange(n->m->ctx, TKC_INT64, 0, (double)depth, 1), nd, rs);
  int64_t r0[2] = {0, 1}, r1[2] = {1, 2};
  tkc_tensor *off = tkc_reshape(tkc_shrink(vals, r0), 0, NULL), *on = tkc_reshape(tkc_shrink(vals, r1), 0, NULL);
  return onnx_set(n, 0, tkc_where(tkc_eq(i64, ar), on, off));
}

/* DynamicQuantizeLinear: uint8 with the scale and zero point that map [min(x, 0), max(x, 0)] onto [0, 255] */
/* ---------------------------------------------------------------- data-dependent shapes: the values are read on the host */
tkc_status onnx_index_compress(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int64_t cnt;
  const int64_t *cond = onnx_ints(n, 1, &cnt);
  if (!cond) return tkc_last_status();
  const Onnx__AttributeProto *aa = onnx_attr(n, "axis");
  int axis = 0;
  if (aa && aa->has_i) {
    if ((axis = onnx_axis(aa->i, tkc_ndim(x))) < 0) return onnx_node_err(n, TKC_EINVAL, "axis out of range");
  } else {
    int64_t all = tkc_numel(x);
    x = tkc_reshape(x, 1, &all);
  }
  int64_t dim = tkc_dim(x, axis), k = 0;
  if (cnt > dim) return onnx_node_err(n, TKC_EINVAL, "condition longer than the axis");
  int64_t *idx = malloc(sizeof(int64_t) * (size_t)(cnt ? cnt : 1));
  if (!idx) return onnx_node_err(n, TKC_ENOMEM, "out of memory");
  for (int64_t i = 0; i < cnt; i++)
    if (cond[i]) idx[k++] = i;
  tkc_tensor *it = tkc_tensor_new(n->m->ctx, TKC_INT64, 1, &k, idx);
  free(idx);
  return onnx_set(n, 0, tkc_index_select(x, axis, it));
}
tkc_status onnx_index_nonzero(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int nd = tkc_ndim(x);
  int64_t cnt, k = 0;
  double *v = onnx_doubles(n, 0, &cnt);
  if (!v) return tkc_last_status();
  for (int64_t i = 0; i < cnt; i++) k += v[i] != 0;
  int64_t total = nd * k;
  int64_t *out = malloc(sizeof(int64_t) * (size_t)(total > 0 ? total : 1));
  if (!out) return free(v), onnx_node_err(n, TKC_ENOMEM, "out of memory");
  for (int64_t i = 0, j = 0; i < cnt; i++) {
    if (v[i] == 0) continue;
    int64_t r = i; /* element i's row-major coordinates */
    for (int d = nd - 1; d >= 0; d--) {
      out[d * k + j] = r % tkc_dim(x, d);
      r /= tkc_dim(x, d);
    }
    j++;
  }
  free(v);
  int64_t sh[2] = {nd, k};
  tkc_status st = onnx_set(n, 0, tkc_tensor_new(n->m->ctx, TKC_INT64, 2, sh, out));
  free(out);
  return st;
}
