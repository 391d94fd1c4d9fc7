/* ops_reduce.c — reductions (Reduce*, ArgMax/ArgMin), Softmax and its kin, MatMul, the scans
 * (CumSum, CumProd) and TopK. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ops_util.h"

/* ---------------------------------------------------------------- reductions */
enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_LOGSUM, R_LOGSUMEXP, R_SUMSQUARE };

/* the axes of a reduce: an input from opset 13 (ReduceSum) / 18 (the others), an attribute before */
static tkc_status reduce_axes(onnx_node *n, int axes_input, int *axes, int *naxes, int *noop) {
  int nd = tkc_ndim(onnx_in(n, 0));
  int64_t cnt = 0;
  const int64_t *v = NULL;
  if (axes_input) {
    if (onnx_has(n, 1) && !(v = onnx_ints(n, 1, &cnt))) return tkc_last_status();
  } else {
    int c;
    v = onnx_attr_ints(n, "axes", &c);
    cnt = c < 0 ? 0 : c;
  }
  *noop = cnt == 0 && axes_input && onnx_attr_int(n, "noop_with_empty_axes", 0);
  if (cnt > ONNX_MAX_DIMS) return onnx_node_err(n, TKC_EINVAL, "%lld axes", (long long)cnt);
  for (int64_t i = 0; i < cnt; i++)
    if ((axes[i] = onnx_axis(v[i], nd)) < 0) return onnx_node_err(n, TKC_EINVAL, "axis %lld out of range for %d dims", (long long)v[i], nd);
  *naxes = (int)cnt;
  if (!cnt)
    for (int i = 0; i < nd; i++) axes[(*naxes)++] = i;
  return TKC_OK;
}

static tkc_status reduce(onnx_node *n, int kind) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  tkc_dtype dt = tkc_dtype_of(x);
  int axes_input = kind == R_SUM ? n->opset >= 13 : n->opset >= 18;
  int axes[ONNX_MAX_DIMS], naxes = 0, noop = 0;
  if ((s = reduce_axes(n, axes_input, axes, &naxes, &noop))) return s;
  if (noop) return onnx_set(n, 0, tkc_tensor_ref(x));
  int keep = (int)onnx_attr_int(n, "keepdims", 1);
  tkc_tensor *r;
  if (!naxes) r = tkc_tensor_ref(x);
  else switch (kind) {
    case R_SUM: r = tkc_sum(x, naxes, axes, keep); break;
    case R_MEAN: r = tkc_mean(x, naxes, axes, keep); break;
    case R_MAX: r = tkc_max(x, naxes, axes, keep); break;
    case R_MIN: r = tkc_min(x, naxes, axes, keep); break;
    case R_PROD: r = tkc_prod(x, naxes, axes, keep); break;
    case R_L1: r = tkc_sum(tkc_abs(x), naxes, axes, keep); break;
    case R_L2: r = tkc_sqrt(tkc_sum(tkc_mul(x, x), naxes, axes, keep)); break;
    case R_LOGSUM: r = tkc_log(tkc_sum(x, naxes, axes, keep)); break;
    case R_LOGSUMEXP: r = tkc_logsumexp(x, naxes, axes, keep); break;
    default: r = tkc_sum(tkc_mul(x, x), naxes, axes, keep); break;
    }
  if (r && tkc_dtype_of(r) != dt) r = tkc_cast(r, dt);
  return onnx_set(n, 0, r);
}
#define REDUCE(name, kind) tkc_status name(onnx_node *n) { return reduce(n, kind); }
REDUCE(onnx_reduce_sum, R_SUM)
REDUCE(onnx_reduce_mean, R_MEAN)
REDUCE(onnx_reduce_max, R_MAX)
REDUCE(onnx_reduce_min, R_MIN)
REDUCE(onnx_reduce_prod, R_PROD)
REDUCE(onnx_reduce_l1, R_L1)
REDUCE(onnx_reduce_l2, R_L2)
REDUCE(onnx_reduce_logsum, R_LOGSUM)
REDUCE(onnx_reduce_logsumexp, R_LOGSUMEXP)
REDUCE(onnx_reduce_sumsquare, R_SUMSQUARE)

static tkc_status arg_reduce(onnx_node *n, int is_max) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int nd = tkc_ndim(x), axis = onnx_axis(onnx_attr_int(n, "axis", 0), nd);
  if (axis < 0) return onnx_node_err(n, TKC_EINVAL, "axis out of range");
  int keep = (int)onnx_attr_int(n, "keepdims", 1);
  if (onnx_attr_int(n, "select_last_index", 0)) { /* flip, take the first, map back */
    tkc_tensor *f = tkc_flip(x, 1, &axis);
    tkc_tensor *i = is_max ? tkc_argmax(f, axis, keep) : tkc_argmin(f, axis, keep);
    i = tkc_cast(i, TKC_INT64);
    return onnx_set(n, 0, tkc_sub(tkc_scalar(n->m->ctx, TKC_INT64, (double)(tkc_dim(x, axis) - 1)), i));
  }
  tkc_tensor *i = is_max ? tkc_argmax(x, axis, keep) : tkc_argmin(x, axis, keep);
  return onnx_set(n, 0, tkc_cast(i, TKC_INT64));
}
tkc_status onnx_reduce_argmax(onnx_node *n) { return arg_reduce(n, 1); }
tkc_status onnx_reduce_argmin(onnx_node *n) { return arg_reduce(n, 0); }

/* Softmax / LogSoftmax / Hardmax: before opset 13 over the 2-D coercion at axis (default 1), from 13 over one axis (default -1) */
static tkc_status softmax_like(onnx_node *n, int kind) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int nd = tkc_ndim(x);
  int axis = onnx_axis(onnx_attr_int(n, "axis", n->opset < 13 ? 1 : -1), nd > 0 ? nd : 1);
  if (axis < 0) return onnx_node_err(n, TKC_EINVAL, "axis out of range");
  int nd0 = nd;
  int64_t sh[ONNX_MAX_DIMS];
  for (int d = 0; d < nd; d++) sh[d] = tkc_dim(x, d);
  if (n->opset < 13) {
    x = tkc_flatten(tkc_flatten(x, axis, nd - 1), 0, axis > 0 ? axis - 1 : 0);
    if (axis == 0) x = tkc_unsqueeze(x, 0);
    axis = 1;
  }
  tkc_tensor *r;
  if (kind == 0) r = tkc_softmax(x, axis);
  else if (kind == 1) r = tkc_log_softmax(x, axis);
  else {
    tkc_tensor *am = tkc_argmax(x, axis, 1);
    tkc_tensor *ar = tkc_arange(n->m->ctx, tkc_dtype_of(am), 0, (double)tkc_dim(x, axis), 1);
    int rs_nd = tkc_ndim(x);
    int64_t rs[ONNX_MAX_DIMS];
    for (int d = 0; d < rs_nd; d++) rs[d] = d == axis ? tkc_dim(x, axis) : 1;
    r = tkc_cast(tkc_eq(am, tkc_reshape(ar, rs_nd, rs)), tkc_dtype_of(x));
  }
  if (n->opset < 13) r = tkc_reshape(r, nd0, sh);
  return onnx_set(n, 0, r);
}
tkc_status onnx_math_softmax(onnx_node *n) { return softmax_like(n, 0); }
tkc_status onnx_math_log_softmax(onnx_node *n) { return softmax_like(n, 1); }
tkc_status onnx_math_hardmax(onnx_node *n) { return softmax_like(n, 2); }

tkc_status onnx_math_matmul(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  return s ? s : onnx_set(n, 0, tkc_matmul(onnx_in(n, 0), onnx_in(n, 1)));
}

/* CumSum / CumProd: exclusive by shifting the inclusive scan one place (the identity comes in), reverse by flipping */
static tkc_status scan_op(onnx_node *n, int prod) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int64_t cnt;
  const int64_t *v = onnx_ints(n, 1, &cnt);
  if (!v) return tkc_last_status();
  int nd = tkc_ndim(x), axis = onnx_axis(cnt ? v[0] : 0, nd);
  if (axis < 0) return onnx_node_err(n, TKC_EINVAL, "axis out of range");
  int excl = (int)onnx_attr_int(n, "exclusive", 0), rev = (int)onnx_attr_int(n, "reverse", 0);
  tkc_dtype dt = tkc_dtype_of(x);
  if (rev) x = tkc_flip(x, 1, &axis);
  tkc_tensor *r = prod ? tkc_cumprod(x, axis) : tkc_cumsum(x, axis);
  if (r && tkc_dtype_of(r) != dt) r = tkc_cast(r, dt);
  if (excl && r) {
    int64_t pads[2 * ONNX_MAX_DIMS] = {0}, rng[2 * ONNX_MAX_DIMS];
    pads[2 * axis] = 1;
    for (int d = 0; d < nd; d++) rng[2 * d] = 0, rng[2 * d + 1] = tkc_dim(x, d);
    r = tkc_shrink(tkc_pad(r, pads, prod ? 1 : 0), rng);
  }
  if (rev) r = tkc_flip(r, 1, &axis);
  return onnx_set(n, 0, r);
}
tkc_status onnx_reduce_cumsum(onnx_node *n) { return scan_op(n, 0); }
tkc_status onnx_reduce_cumprod(onnx_node *n) { return scan_op(n, 1); }
tkc_status onnx_reduce_topk(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int64_t cnt;
  const int64_t *v = onnx_ints(n, 1, &cnt);
  if (!v || cnt < 1) return v ? onnx_node_err(n, TKC_EINVAL, "no k") : tkc_last_status();
  int axis = onnx_axis(onnx_attr_int(n, "axis", -1), tkc_ndim(x));
  if (axis < 0) return onnx_node_err(n, TKC_EINVAL, "axis out of range");
  tkc_tensor *vals, *idx;
  if (tkc_topk(x, v[0], axis, (int)onnx_attr_int(n, "largest", 1), &vals, &idx) != TKC_OK) return onnx_node_err(n, tkc_last_status(), "%s", tkc_last_error());
  n->out[0].t = vals;
  return n->nout > 1 ? onnx_set(n, 1, tkc_cast(idx, TKC_INT64)) : TKC_OK;
}
