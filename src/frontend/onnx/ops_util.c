/* ops_util.c — the helpers every op builder uses: outputs and their host values, inputs read as ints or doubles. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ops_util.h"

tkc_status onnx_set(onnx_node *n, int k, tkc_tensor *t) {
  if (!t) return onnx_node_err(n, tkc_last_status(), "%s", tkc_last_error());
  if (k < n->nout) n->out[k].t = t;
  return TKC_OK;
}

tkc_status onnx_set_view(onnx_node *n, tkc_tensor *t) {
  tkc_status s = onnx_set(n, 0, t);
  if (!s && n->in[0]->host) onnx_set_host(n, 0, onnx_dup_ints(n->in[0]->host, tkc_numel(onnx_in(n, 0))));
  return s;
}

void onnx_set_host(onnx_node *n, int k, int64_t *vals) {
  if (k < n->nout && !n->out[k].host) n->out[k].host = vals;
  else free(vals);
}

tkc_status onnx_need(onnx_node *n, int nin) {
  for (int i = 0; i < nin; i++)
    if (!onnx_has(n, i)) return onnx_node_err(n, TKC_EINVAL, "input %d is missing (%d needed)", i, nin);
  return TKC_OK;
}

/* a blocked scale / zero point (x's rank, ceil(dim / block) along axis): each entry repeated block
 * times along axis, cut to x's dim */
static tkc_tensor *unblock(tkc_tensor *t, int axis, int64_t block, int64_t dim) {
  int nd = tkc_ndim(t);
  int64_t sh[ONNX_MAX_DIMS + 1], big[ONNX_MAX_DIMS + 1], fin[ONNX_MAX_DIMS];
  for (int d = 0, k = 0; d < nd; d++) {
    sh[k] = big[k] = fin[d] = tkc_dim(t, d), k++;
    if (d == axis) sh[k] = 1, big[k] = block, fin[d] = tkc_dim(t, d) * block, k++;
  }
  t = tkc_reshape(tkc_expand(tkc_reshape(t, nd + 1, sh), nd + 1, big), nd, fin);
  return onnx_slice_axis(t, axis, 0, dim);
}

tkc_tensor *onnx_saturate_fp8(onnx_node *n, tkc_tensor *x, tkc_dtype dt) {
  if (!onnx_is_fp8(dt) || !onnx_attr_int(n, "saturate", 1) || !onnx_is_float(tkc_dtype_of(x))) return x;
  double max = dt == TKC_FLOAT8_E4M3FN ? 448 : 57344;
  return tkc_clamp(x, -max, max);
}

tkc_status onnx_per_axis(onnx_node *n, int nd, tkc_tensor **scale, tkc_tensor **zero_point) {
  int64_t block = onnx_attr_int(n, "block_size", 0);
  if (block > 0) { /* blocked: the scale has x's rank; n->in[0] is x (QuantizeLinear, DequantizeLinear) */
    int axis = onnx_axis(onnx_attr_int(n, "axis", 1), nd);
    tkc_tensor *x = onnx_in(n, 0);
    if (axis < 0 || !x || tkc_ndim(*scale) != nd || block > (1 << 24)) return onnx_node_err(n, TKC_EINVAL, "block_size %lld: axis or scale rank", (long long)block);
    if ((tkc_dim(x, axis) + block - 1) / block != tkc_dim(*scale, axis)) return onnx_node_err(n, TKC_ESHAPE, "a scale of %lld blocks of %lld for a dim of %lld", (long long)tkc_dim(*scale, axis), (long long)block, (long long)tkc_dim(x, axis));
    *scale = unblock(*scale, axis, block, tkc_dim(x, axis));
    if (*zero_point) *zero_point = unblock(*zero_point, axis, block, tkc_dim(x, axis));
    return TKC_OK;
  }
  if (tkc_ndim(*scale) != 1 || nd == 0) return TKC_OK;
  int axis = onnx_axis(onnx_attr_int(n, "axis", 1), nd);
  if (axis < 0) return onnx_node_err(n, TKC_EINVAL, "axis out of range");
  int64_t sh[ONNX_MAX_DIMS];
  for (int d = 0; d < nd; d++) sh[d] = d == axis ? tkc_dim(*scale, 0) : 1;
  *scale = tkc_reshape(*scale, nd, sh);
  if (*zero_point) *zero_point = tkc_reshape(*zero_point, nd, sh);
  return TKC_OK;
}

const int64_t *onnx_ints(onnx_node *n, int i, int64_t *count) {
  if (!onnx_has(n, i)) return onnx_node_err(n, TKC_EINVAL, "input %d is missing", i), NULL;
  onnx_value *v = n->in[i];
  int64_t ne = tkc_numel(v->t);
  if (ne < 0 || ne > (1 << 20)) return onnx_node_err(n, TKC_EUNSUPPORTED, "input %d must have a known size (it gives ints)", i), NULL;
  *count = ne;
  if (v->host) return v->host;
  if (onnx_is_float(tkc_dtype_of(v->t))) return onnx_node_err(n, TKC_EINVAL, "input %d must be ints", i), NULL;
  n->m->read_values = 1;
  int64_t *h = malloc(sizeof(int64_t) * (size_t)(ne ? ne : 1));
  tkc_tensor *c = tkc_cast(v->t, TKC_INT64);
  if (!h || !c || tkc_copy_out(c, h, sizeof(int64_t) * (size_t)ne) != TKC_OK) {
    free(h);
    tkc_tensor_free(c);
    return onnx_node_err(n, tkc_last_status(), "reading input %d: %s", i, tkc_last_error()), NULL;
  }
  tkc_tensor_free(c);
  v->host = h;
  return h;
}

double *onnx_doubles(onnx_node *n, int i, int64_t *count) {
  if (!onnx_has(n, i)) return onnx_node_err(n, TKC_EINVAL, "input %d is missing", i), NULL;
  tkc_tensor *t = n->in[i]->t;
  int64_t ne = tkc_numel(t);
  if (ne < 0 || ne > (1 << 20)) return onnx_node_err(n, TKC_EUNSUPPORTED, "input %d must have a known size", i), NULL;
  *count = ne;
  n->m->read_values = 1;
  double *h = malloc(sizeof(double) * (size_t)(ne ? ne : 1));
  tkc_tensor *c = tkc_cast(t, TKC_FLOAT64);
  if (!h || !c || tkc_copy_out(c, h, sizeof(double) * (size_t)ne) != TKC_OK) {
    free(h);
    tkc_tensor_free(c);
    return onnx_node_err(n, tkc_last_status(), "reading input %d: %s", i, tkc_last_error()), NULL;
  }
  tkc_tensor_free(c);
  return h;
}

int64_t *onnx_dup_ints(const int64_t *v, int64_t count) {
  int64_t *r = malloc(sizeof(int64_t) * (size_t)(count ? count : 1));
  if (r && count) memcpy(r, v, sizeof(int64_t) * (size_t)count);
  return r;
}

/* a realized tensor of the given int values (dtype dt), with them as its host values (takes vals) */
tkc_status onnx_set_host_tensor(onnx_node *n, int k, tkc_dtype dt, int ndim, const int64_t *shape, int64_t *vals) {
  tkc_tensor *t = tkc_tensor_new(n->m->ctx, TKC_INT64, ndim, shape, vals);
  if (t && dt != TKC_INT64) t = tkc_cast(t, dt);
  tkc_status s = onnx_set(n, k, t);
  if (s == TKC_OK) onnx_set_host(n, k, vals);
  else free(vals);
  return s;
}

tkc_tensor *onnx_slice_axis(tkc_tensor *x, int axis, int64_t a, int64_t b) {
  int nd = tkc_ndim(x);
  int64_t rng[2 * ONNX_MAX_DIMS];
  if (!x) return NULL; /* the error of what made x stands */
  if (nd < 1 || nd > ONNX_MAX_DIMS || axis < 0 || axis >= nd) return tkc_err(TKC_EINVAL, "ONNX: axis %d of a %d-D tensor", axis, nd), NULL;
  for (int d = 0; d < nd; d++) rng[2 * d] = 0, rng[2 * d + 1] = tkc_dim(x, d);
  rng[2 * axis] = a, rng[2 * axis + 1] = b;
  return tkc_shrink(x, rng);
}
