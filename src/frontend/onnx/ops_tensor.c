/* ops_tensor.c — casts, constants and generated tensors: Cast, CastLike, BitCast, Constant,
 * ConstantOfShape, Shape, Size, Range and the Hann / Hamming / Blackman windows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ops_util.h"

/* ---------------------------------------------------------------- casts and constants */
static tkc_status cast_to(onnx_node *n, tkc_dtype to) {
  tkc_status s = onnx_set(n, 0, tkc_cast(onnx_saturate_fp8(n, onnx_in(n, 0), to), to));
  if (!s && n->in[0]->host && onnx_is_int(to)) onnx_set_host(n, 0, onnx_dup_ints(n->in[0]->host, tkc_numel(onnx_in(n, 0))));
  return s;
}
/* the dtype of the "to" attribute (Cast, BitCast), with the node's one input checked */
static tkc_status attr_to(onnx_node *n, tkc_dtype *to) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  const Onnx__AttributeProto *a = onnx_attr(n, "to");
  if (!a || !a->has_i) return onnx_node_err(n, TKC_EINVAL, "no 'to' attribute");
  if (onnx_dtype_from_proto((int32_t)a->i, to) != TKC_OK) return onnx_node_err(n, tkc_last_status(), "%s", tkc_last_error());
  return TKC_OK;
}
tkc_status onnx_tensor_cast(onnx_node *n) {
  tkc_dtype to;
  tkc_status s = attr_to(n, &to);
  return s ? s : cast_to(n, to);
}
tkc_status onnx_tensor_cast_like(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  return s ? s : cast_to(n, tkc_dtype_of(onnx_in(n, 1)));
}
tkc_status onnx_tensor_constant(onnx_node *n) {
  const Onnx__AttributeProto *a = n->proto->n_attribute == 1 ? n->proto->attribute[0] : NULL;
  if (!a) return onnx_node_err(n, TKC_EINVAL, "needs exactly one attribute");
  tkc_ctx *c = n->m->ctx;
  if (!strcmp(a->name, "value") && a->t) {
    int64_t *host = NULL;
    tkc_tensor *t = onnx_tensor_from_proto(c, a->t, NULL, &host);
    tkc_status s = onnx_set(n, 0, t);
    if (!s) onnx_set_host(n, 0, host);
    else free(host);
    return s;
  }
  if (!strcmp(a->name, "value_float") && a->has_f) return onnx_set(n, 0, tkc_scalar(c, TKC_FLOAT32, a->f));
  if (!strcmp(a->name, "value_int") && a->has_i) {
    int64_t *v = onnx_dup_ints(&a->i, 1);
    return v ? onnx_set_host_tensor(n, 0, TKC_INT64, 0, NULL, v) : onnx_node_err(n, TKC_ENOMEM, "out of memory");
  }
  if (!strcmp(a->name, "value_floats")) {
    int64_t len = (int64_t)a->n_floats;
    return onnx_set(n, 0, tkc_tensor_new(c, TKC_FLOAT32, 1, &len, a->floats));
  }
  if (!strcmp(a->name, "value_ints")) {
    int64_t len = (int64_t)a->n_ints;
    int64_t *v = onnx_dup_ints(a->ints, len);
    return v ? onnx_set_host_tensor(n, 0, TKC_INT64, 1, &len, v) : onnx_node_err(n, TKC_ENOMEM, "out of memory");
  }
  return onnx_node_err(n, TKC_EUNSUPPORTED, "attribute '%s' (sparse or string constants are not supported)", a->name);
}
tkc_status onnx_tensor_constant_of_shape(onnx_node *n) {
  int64_t cnt;
  const int64_t *shape = onnx_ints(n, 0, &cnt);
  if (!shape) return tkc_last_status();
  if (cnt > ONNX_MAX_DIMS) return onnx_node_err(n, TKC_EUNSUPPORTED, "%lld dims", (long long)cnt);
  const Onnx__AttributeProto *a = onnx_attr(n, "value");
  tkc_dtype dt = TKC_FLOAT32;
  double v = 0;
  if (a && a->t) {
    int nd;
    int64_t sh[ONNX_MAX_DIMS];
    void *data;
    size_t nb;
    if (onnx_tensor_decode(a->t, NULL, &dt, &nd, sh, &data, &nb) != TKC_OK) return onnx_node_err(n, tkc_last_status(), "%s", tkc_last_error());
    if (nb != onnx_itemsize(dt)) {
      free(data);
      return onnx_node_err(n, TKC_EINVAL, "value must have one element");
    }
    tkc_tensor *one = tkc_tensor_new(n->m->ctx, dt, 0, NULL, data);
    free(data);
    return onnx_set(n, 0, tkc_contiguous(tkc_expand(one, (int)cnt, shape)));
  }
  return onnx_set(n, 0, tkc_full(n->m->ctx, dt, (int)cnt, shape, v));
}
tkc_status onnx_tensor_shape(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int nd = tkc_ndim(x);
  int64_t start = onnx_attr_int(n, "start", 0), end = onnx_attr_int(n, "end", nd);
  if (start < 0) start += nd;
  if (end < 0) end += nd;
  start = start < 0 ? 0 : start > nd ? nd : start;
  end = end < start ? start : end > nd ? nd : end;
  int64_t len = end - start;
  int64_t *v = malloc(sizeof(int64_t) * (size_t)(len ? len : 1));
  if (!v) return onnx_node_err(n, TKC_ENOMEM, "out of memory");
  for (int64_t d = start; d < end; d++) v[d - start] = tkc_dim(x, (int)d);
  return onnx_set_host_tensor(n, 0, TKC_INT64, 1, &len, v);
}
tkc_status onnx_tensor_size(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  int64_t *v = malloc(sizeof(int64_t));
  if (!v) return onnx_node_err(n, TKC_ENOMEM, "out of memory");
  v[0] = tkc_numel(onnx_in(n, 0));
  return onnx_set_host_tensor(n, 0, TKC_INT64, 0, NULL, v);
}
tkc_status onnx_tensor_range(onnx_node *n) {
  tkc_status s = onnx_need(n, 3);
  if (s) return s;
  tkc_dtype dt = tkc_dtype_of(onnx_in(n, 0));
  double v[3];
  for (int i = 0; i < 3; i++) {
    int64_t cnt;
    double *d = onnx_doubles(n, i, &cnt);
    if (!d) return tkc_last_status();
    v[i] = cnt ? d[0] : 0;
    free(d);
  }
  if (v[2] == 0) return onnx_node_err(n, TKC_EINVAL, "delta is 0");
  double cnt = ceil((v[1] - v[0]) / v[2]);
  int64_t len = cnt > 0 ? (int64_t)cnt : 0;
  if (!onnx_is_float(dt)) {
    int64_t *h = malloc(sizeof(int64_t) * (size_t)(len ? len : 1));
    if (!h) return onnx_node_err(n, TKC_ENOMEM, "out of memory");
    for (int64_t i = 0; i < len; i++) h[i] = (int64_t)v[0] + i * (int64_t)v[2];
    return onnx_set_host_tensor(n, 0, dt, 1, &len, h);
  }
  tkc_tensor *idx = tkc_arange(n->m->ctx, dt, 0, (double)len, 1);
  return onnx_set(n, 0, tkc_add(tkc_mul(idx, tkc_scalar(n->m->ctx, dt, v[2])), tkc_scalar(n->m->ctx, dt, v[0])));
}

tkc_status onnx_tensor_bitcast(onnx_node *n) {
  tkc_dtype to;
  tkc_status s = attr_to(n, &to);
  return s ? s : onnx_set(n, 0, tkc_bitcast(onnx_in(n, 0), to));
}
/* Hann / Hamming / Blackman windows of size N (periodic: period N, else N - 1) */
static tkc_status window_op(onnx_node *n, int kind) {
  int64_t cnt;
  const int64_t *sz = onnx_ints(n, 0, &cnt);
  if (!sz) return tkc_last_status();
  int64_t N = cnt ? sz[0] : 0;
  if (N < 0 || N > (1 << 24)) return onnx_node_err(n, TKC_EINVAL, "size %lld", (long long)N);
  tkc_dtype dt = TKC_FLOAT32;
  const Onnx__AttributeProto *a = onnx_attr(n, "output_datatype");
  if (a && a->has_i && onnx_dtype_from_proto((int32_t)a->i, &dt) != TKC_OK) return onnx_node_err(n, tkc_last_status(), "%s", tkc_last_error());
  double per = onnx_attr_int(n, "periodic", 1) ? (double)N : (double)(N - 1);
  double *w = malloc(sizeof(double) * (size_t)(N ? N : 1));
  if (!w) return onnx_node_err(n, TKC_ENOMEM, "out of memory");
  for (int64_t i = 0; i < N; i++) {
    double t = per > 0 ? 2 * M_PI * (double)i / per : 0;
    w[i] = kind == 0 ? 0.5 - 0.5 * cos(t) : kind == 1 ? 25.0 / 46.0 - (21.0 / 46.0) * cos(t) : 0.42 - 0.5 * cos(t) + 0.08 * cos(2 * t);
  }
  tkc_tensor *t = tkc_cast(tkc_tensor_new(n->m->ctx, TKC_FLOAT64, 1, &N, w), dt);
  free(w);
  return onnx_set(n, 0, t);
}
tkc_status onnx_window_hann(onnx_node *n) { return window_op(n, 0); }
tkc_status onnx_window_hamming(onnx_node *n) { return window_op(n, 1); }
tkc_status onnx_window_blackman(onnx_node *n) { return window_op(n, 2); }

/* OptionalHasElement of a tensor (an optional sequence is a type tkc has not; OptionalGetElement of a
 * tensor is the Identity): absent is an empty input name or no input */
tkc_status onnx_tensor_optional_has_element(onnx_node *n) { return onnx_set(n, 0, tkc_scalar(n->m->ctx, TKC_BOOL, onnx_has(n, 0) ? 1 : 0)); }
