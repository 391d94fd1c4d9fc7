/* ops_scatter.c — the ops that address a tensor with an index tensor: GatherND, ScatterND,
 * ScatterElements (Scatter) with every reduction, and TensorScatter (a KV-cache write).
 *
 * tkc has scatter and scatter_add; the mul / max / min reductions are composed: each update is
 * compared with every position of the axis (index == arange), the matching updates reduced along
 * the index's axis (the unmatched ones are the reduction's identity) and combined with the data
 * where at least one update landed. That costs O(updates * axis length), as tkc_scatter does. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ops_util.h"

enum { SC_NONE, SC_ADD, SC_MUL, SC_MAX, SC_MIN };

static int reduction_of(const char *red) {
  return !strcmp(red, "none") ? SC_NONE : !strcmp(red, "add") ? SC_ADD : !strcmp(red, "mul") ? SC_MUL : !strcmp(red, "max") ? SC_MAX : !strcmp(red, "min") ? SC_MIN : -1;
}

/* negative indices count from the end of an axis of size dim */
static tkc_tensor *wrap_index(tkc_ctx *c, tkc_tensor *idx, int64_t dim) {
  idx = tkc_cast(idx, TKC_INT64);
  return tkc_where(tkc_lt(idx, tkc_scalar(c, TKC_INT64, 0)), tkc_add(idx, tkc_scalar(c, TKC_INT64, (double)dim)), idx);
}

/* a copy of a with src combined into the positions index addresses along axis (index and src have
 * one shape, no larger than a's); duplicates combine with each other too */
static tkc_tensor *scatter_reduce(tkc_ctx *c, tkc_tensor *a, int axis, tkc_tensor *index, tkc_tensor *src, int kind) {
  int64_t N = tkc_dim(a, axis);
  index = wrap_index(c, index, N);
  if (kind == SC_NONE) return tkc_scatter(a, axis, index, src);
  if (kind == SC_ADD) return tkc_scatter_add(a, axis, index, src);
  int nd = tkc_ndim(a);
  int64_t rs[ONNX_MAX_DIMS + 1];
  for (int d = 0; d < nd; d++) rs[d] = 1;
  rs[nd] = N;
  tkc_tensor *hit_each = tkc_eq(tkc_unsqueeze(index, nd), tkc_reshape(tkc_arange(c, TKC_INT64, 0, (double)N, 1), nd + 1, rs)); /* (..index.., N) */
  /* the identity: 1 for mul; for max (min) the smallest (largest) update, which every real one matches or beats */
  tkc_tensor *ident = kind == SC_MUL ? tkc_scalar(c, tkc_dtype_of(src), 1) : kind == SC_MAX ? tkc_min(src, 0, NULL, 0) : tkc_max(src, 0, NULL, 0);
  tkc_tensor *v = tkc_where(hit_each, tkc_unsqueeze(src, nd), ident);
  tkc_tensor *r = kind == SC_MUL ? tkc_prod(v, 1, &axis, 1) : kind == SC_MAX ? tkc_max(v, 1, &axis, 1) : tkc_min(v, 1, &axis, 1);
  tkc_tensor *hit = tkc_any(hit_each, 1, &axis, 1);
  /* (.., 1 at axis, .., N) -> (.., N at axis, ..), then padded up to a's shape (no hit there) */
  int64_t sh[ONNX_MAX_DIMS], pads[2 * ONNX_MAX_DIMS] = {0};
  for (int d = 0; d < nd; d++) {
    sh[d] = d == axis ? N : tkc_dim(index, d);
    pads[2 * d + 1] = d == axis ? 0 : tkc_dim(a, d) - sh[d];
  }
  r = tkc_pad(tkc_reshape(tkc_transpose(r, axis, nd), nd, sh), pads, 0);
  hit = tkc_pad(tkc_reshape(tkc_transpose(hit, axis, nd), nd, sh), pads, 0);
  tkc_tensor *comb = kind == SC_MUL ? tkc_mul(a, r) : kind == SC_MAX ? tkc_maximum(a, r) : tkc_minimum(a, r);
  return tkc_where(hit, comb, a);
}

tkc_status onnx_build_scatter_elements(onnx_node *n) {
  tkc_status s = onnx_need(n, 3);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int axis = onnx_axis(onnx_attr_int(n, "axis", 0), tkc_ndim(x));
  if (axis < 0) return onnx_node_err(n, TKC_EINVAL, "axis out of range");
  const char *red = onnx_attr_str(n, "reduction", "none");
  int kind = reduction_of(red);
  if (kind < 0) return onnx_node_err(n, TKC_EINVAL, "reduction '%s'", red);
  return onnx_set(n, 0, scatter_reduce(n->m->ctx, x, axis, onnx_in(n, 1), onnx_in(n, 2), kind));
}

/* GatherND / ScatterND: the linear number, over data's axes [base, base + k), of each index row (the
 * last axis of idx, k entries); negative entries count from the end. *rows: the product of those axes. */
static tkc_tensor *linear_index(tkc_ctx *c, tkc_tensor *x, tkc_tensor *idx, int base, int64_t k, int64_t *rows) {
  int ind = tkc_ndim(idx);
  int64_t stride[ONNX_MAX_DIMS], lin_n = 1;
  for (int64_t j = k - 1; j >= 0; j--) stride[j] = lin_n, lin_n *= tkc_dim(x, (int)(base + j));
  *rows = lin_n;
  tkc_tensor *lin = NULL;
  for (int64_t j = 0; j < k; j++) {
    tkc_tensor *ij = wrap_index(c, onnx_slice_axis(idx, ind - 1, j, j + 1), tkc_dim(x, (int)(base + j)));
    ij = tkc_mul(ij, tkc_scalar(c, TKC_INT64, (double)stride[j]));
    lin = lin ? tkc_add(lin, ij) : ij;
  }
  return lin;
}

/* GatherND: the first batch_dims axes pair up; the last axis of indices (k entries) addresses the next
 * k axes of data, whose slices are gathered. Done as one index_select over data with those axes (and
 * the batch axes) flattened. */
tkc_status onnx_build_gather_nd(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0), *idx = tkc_cast(onnx_in(n, 1), TKC_INT64);
  tkc_ctx *c = n->m->ctx;
  int nd = tkc_ndim(x), ind = tkc_ndim(idx);
  int64_t b = onnx_attr_int(n, "batch_dims", 0);
  if (ind < 1) return onnx_node_err(n, TKC_EINVAL, "indices must be at least 1-D");
  int64_t k = tkc_dim(idx, ind - 1);
  if (b < 0 || b >= ind || b + k > nd) return onnx_node_err(n, TKC_EINVAL, "batch_dims %lld with %lld index entries for %d dims", (long long)b, (long long)k, nd);
  int64_t bsz = 1, lin_n;
  for (int d = 0; d < b; d++) bsz *= tkc_dim(x, d);
  tkc_tensor *lin = linear_index(c, x, idx, (int)b, k, &lin_n);
  int64_t ish[ONNX_MAX_DIMS];
  for (int d = 0; d < ind; d++) ish[d] = d == ind - 1 ? 1 : tkc_dim(idx, d);
  if (!lin) lin = tkc_full(c, TKC_INT64, ind, ish, 0);
  if (b > 0) { /* + the batch's flat number * lin_n */
    int64_t bs[ONNX_MAX_DIMS];
    for (int d = 0; d < ind; d++) bs[d] = d < b ? tkc_dim(idx, d) : 1;
    tkc_tensor *bi = tkc_reshape(tkc_arange(c, TKC_INT64, 0, (double)bsz, 1), ind, bs);
    lin = tkc_add(lin, tkc_mul(bi, tkc_scalar(c, TKC_INT64, (double)lin_n)));
  }
  lin = tkc_reshape(lin, ind - 1, ish); /* drop the k axis */
  int64_t xs[ONNX_MAX_DIMS];
  int xn = 0;
  xs[xn++] = bsz * lin_n;
  for (int d = (int)(b + k); d < nd; d++) xs[xn++] = tkc_dim(x, d);
  return onnx_set(n, 0, tkc_index_select(tkc_reshape(x, xn, xs), 0, lin));
}

/* ScatterND: data's first k axes flattened into rows, the update rows scattered (reduced) to the rows
 * the last index axis addresses. */
tkc_status onnx_build_scatter_nd(onnx_node *n) {
  tkc_status s = onnx_need(n, 3);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0), *idx = tkc_cast(onnx_in(n, 1), TKC_INT64), *upd = onnx_in(n, 2);
  tkc_ctx *c = n->m->ctx;
  const char *red = onnx_attr_str(n, "reduction", "none");
  int kind = reduction_of(red);
  if (kind < 0) return onnx_node_err(n, TKC_EINVAL, "reduction '%s'", red);
  int nd = tkc_ndim(x), ind = tkc_ndim(idx);
  if (ind < 1) return onnx_node_err(n, TKC_EINVAL, "indices must be at least 1-D");
  int64_t k = tkc_dim(idx, ind - 1);
  if (k < 1 || k > nd) return onnx_node_err(n, TKC_EINVAL, "%lld index entries for %d dims", (long long)k, nd);
  int64_t rows, rest = 1, u = 1;
  for (int d = (int)k; d < nd; d++) rest *= tkc_dim(x, d);
  for (int d = 0; d < ind - 1; d++) u *= tkc_dim(idx, d);
  tkc_tensor *lin = linear_index(c, x, idx, 0, k, &rows);
  int64_t xs[2] = {rows, rest}, us[2] = {u, rest}, ls[2] = {u, 1};
  tkc_tensor *index = tkc_expand(tkc_reshape(lin, 2, ls), 2, us);
  tkc_tensor *r = scatter_reduce(c, tkc_reshape(x, 2, xs), 0, index, tkc_reshape(upd, 2, us), kind);
  int64_t sh[ONNX_MAX_DIMS];
  for (int d = 0; d < nd; d++) sh[d] = tkc_dim(x, d);
  return onnx_set(n, 0, tkc_reshape(r, nd, sh));
}

/* TensorScatter: update (.., U at axis, ..) written into past_cache (.., L at axis, ..) from
 * write_indices[b] on for each batch entry b (axis 0); mode circular wraps past L, linear drops what
 * falls past it. Each cache position gathers update[pos - start] where that is in [0, U). */
tkc_status onnx_build_tensor_scatter(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_ctx *c = n->m->ctx;
  tkc_tensor *past = onnx_in(n, 0), *upd = onnx_in(n, 1), *wi = onnx_in(n, 2);
  int nd = tkc_ndim(past), axis = onnx_axis(onnx_attr_int(n, "axis", -2), nd);
  if (axis < 1 || tkc_ndim(upd) != nd) return onnx_node_err(n, TKC_EINVAL, "axis out of range or update of another rank");
  const char *mode = onnx_attr_str(n, "mode", "linear");
  int circular = !strcmp(mode, "circular");
  if (!circular && strcmp(mode, "linear")) return onnx_node_err(n, TKC_EINVAL, "mode '%s'", mode);
  int64_t L = tkc_dim(past, axis), U = tkc_dim(upd, axis), B = tkc_dim(past, 0), ps[ONNX_MAX_DIMS], bs[ONNX_MAX_DIMS], as[ONNX_MAX_DIMS];
  for (int d = 0; d < nd; d++) {
    ps[d] = tkc_dim(past, d);
    bs[d] = d == 0 ? B : 1;
    as[d] = d == axis ? L : 1;
    if (d != axis && tkc_dim(upd, d) != ps[d]) return onnx_node_err(n, TKC_ESHAPE, "update and past_cache differ off the axis");
  }
  tkc_tensor *start = wi ? tkc_reshape(tkc_cast(wi, TKC_INT64), nd, bs) : tkc_full(c, TKC_INT64, nd, bs, 0);
  tkc_tensor *rel = tkc_sub(tkc_reshape(tkc_arange(c, TKC_INT64, 0, (double)L, 1), nd, as), start);
  if (circular) { /* ((rel % L) + L) % L with tkc_mod's truncating remainder */
    tkc_tensor *l = tkc_scalar(c, TKC_INT64, (double)L);
    rel = tkc_mod(tkc_add(tkc_mod(rel, l), l), l);
  }
  tkc_tensor *valid = tkc_and(tkc_ge(rel, tkc_scalar(c, TKC_INT64, 0)), tkc_lt(rel, tkc_scalar(c, TKC_INT64, (double)U)));
  tkc_tensor *src = tkc_expand(tkc_clamp(rel, 0, (double)(U > 0 ? U - 1 : 0)), nd, ps);
  return onnx_set(n, 0, tkc_where(tkc_expand(valid, nd, ps), tkc_gather(upd, axis, src), past));
}
