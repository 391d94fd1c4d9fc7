/* ops_elementwise.c — elementwise ops: binary (with host folding of int shape arithmetic), variadic, unary and
 * activation functions, Where and Clip. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ops_util.h"

/* ---------------------------------------------------------------- elementwise */
typedef tkc_tensor *(*binary_fn)(tkc_tensor *, tkc_tensor *);
typedef tkc_tensor *(*unary_fn)(tkc_tensor *);

/* host values of a binary int op on same-size or scalar operands */
static void fold_binary(onnx_node *n, char op) {
  if (!onnx_has(n, 0) || !onnx_has(n, 1) || !n->in[0]->host || !n->in[1]->host || !n->out[0].t) return;
  int64_t na = tkc_numel(n->in[0]->t), nb = tkc_numel(n->in[1]->t), no = tkc_numel(n->out[0].t);
  if (!onnx_is_int(tkc_dtype_of(n->out[0].t)) || (na != no && na != 1) || (nb != no && nb != 1)) return;
  int64_t *r = malloc(sizeof(int64_t) * (size_t)(no ? no : 1));
  if (!r) return;
  for (int64_t i = 0; i < no; i++) {
    int64_t a = n->in[0]->host[na == 1 ? 0 : i], b = n->in[1]->host[nb == 1 ? 0 : i];
    switch (op) {
    case '+': r[i] = a + b; break;
    case '-': r[i] = a - b; break;
    case '*': r[i] = a * b; break;
    default:
      if (b == 0) return free(r);
      r[i] = a / b;
      break;
    }
  }
  onnx_set_host(n, 0, r);
}

static tkc_status binary(onnx_node *n, binary_fn fn) {
  tkc_status s = onnx_need(n, 2);
  return s ? s : onnx_set(n, 0, fn(onnx_in(n, 0), onnx_in(n, 1)));
}
tkc_status onnx_binary_add(onnx_node *n) { tkc_status s = binary(n, tkc_add); if (!s) fold_binary(n, '+'); return s; }
tkc_status onnx_binary_sub(onnx_node *n) { tkc_status s = binary(n, tkc_sub); if (!s) fold_binary(n, '-'); return s; }
tkc_status onnx_binary_mul(onnx_node *n) { tkc_status s = binary(n, tkc_mul); if (!s) fold_binary(n, '*'); return s; }
tkc_status onnx_binary_div(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *a = onnx_in(n, 0), *b = onnx_in(n, 1);
  s = onnx_set(n, 0, onnx_is_int(tkc_dtype_of(a)) ? tkc_idiv(a, b) : tkc_div(a, b));
  if (!s) fold_binary(n, '/');
  return s;
}
tkc_status onnx_binary_pow(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *a = onnx_in(n, 0), *b = onnx_in(n, 1);
  tkc_dtype dt = tkc_dtype_of(a);
  tkc_tensor *r = tkc_pow(onnx_is_float(dt) ? a : tkc_cast(a, TKC_FLOAT64), tkc_cast(b, onnx_is_float(dt) ? dt : TKC_FLOAT64));
  return onnx_set(n, 0, tkc_cast(r, dt));
}
tkc_status onnx_binary_mod(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *a = onnx_in(n, 0), *b = onnx_in(n, 1);
  int fmod_ = (int)onnx_attr_int(n, "fmod", 0);
  if (onnx_is_float(tkc_dtype_of(a))) {
    if (!fmod_) return onnx_node_err(n, TKC_EINVAL, "fmod=0 on floats");
    /* a - trunc(a / b) * b */
    return onnx_set(n, 0, tkc_sub(a, tkc_mul(tkc_trunc(tkc_div(a, b)), b)));
  }
  tkc_tensor *r = tkc_mod(a, b);
  if (fmod_) return onnx_set(n, 0, r);
  /* Python's %: the divisor's sign */
  tkc_tensor *zero = tkc_scalar(n->m->ctx, tkc_dtype_of(a), 0);
  tkc_tensor *fix = tkc_and(tkc_ne(r, zero), tkc_ne(tkc_lt(r, zero), tkc_lt(b, zero)));
  return onnx_set(n, 0, tkc_where(fix, tkc_add(r, b), r));
}
tkc_status onnx_binary_eq(onnx_node *n) { return binary(n, tkc_eq); }
tkc_status onnx_binary_lt(onnx_node *n) { return binary(n, tkc_lt); }
tkc_status onnx_binary_le(onnx_node *n) { return binary(n, tkc_le); }
tkc_status onnx_binary_gt(onnx_node *n) { return binary(n, tkc_gt); }
tkc_status onnx_binary_ge(onnx_node *n) { return binary(n, tkc_ge); }
tkc_status onnx_binary_and(onnx_node *n) { return binary(n, tkc_and); }
tkc_status onnx_binary_or(onnx_node *n) { return binary(n, tkc_or); }
tkc_status onnx_binary_xor(onnx_node *n) { return binary(n, tkc_xor); }
tkc_status onnx_binary_bitshift(onnx_node *n) {
  const char *dir = onnx_attr_str(n, "direction", "");
  if (!strcmp(dir, "LEFT")) return binary(n, tkc_shl);
  if (!strcmp(dir, "RIGHT")) return binary(n, tkc_shr);
  return onnx_node_err(n, TKC_EINVAL, "direction '%s' (LEFT or RIGHT)", dir);
}
tkc_status onnx_binary_prelu(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  tkc_tensor *zero = tkc_scalar(n->m->ctx, tkc_dtype_of(x), 0);
  return onnx_set(n, 0, tkc_where(tkc_lt(x, zero), tkc_mul(x, onnx_in(n, 1)), x));
}

/* variadic: Max Min Sum Mean */
static tkc_status variadic(onnx_node *n, binary_fn fn, int mean) {
  if (n->nin < 1 || !onnx_has(n, 0)) return onnx_node_err(n, TKC_EINVAL, "needs at least one input");
  tkc_tensor *acc = onnx_in(n, 0);
  for (int i = 1; i < n->nin; i++) acc = fn(acc, onnx_in(n, i));
  if (mean && n->nin > 1) acc = tkc_div(acc, tkc_scalar(n->m->ctx, tkc_dtype_of(onnx_in(n, 0)), n->nin));
  return onnx_set(n, 0, acc);
}
tkc_status onnx_variadic_max(onnx_node *n) { return variadic(n, tkc_maximum, 0); }
tkc_status onnx_variadic_min(onnx_node *n) { return variadic(n, tkc_minimum, 0); }
tkc_status onnx_variadic_sum(onnx_node *n) { return variadic(n, tkc_add, 0); }
tkc_status onnx_variadic_mean(onnx_node *n) { return variadic(n, tkc_add, 1); }

static tkc_status unary(onnx_node *n, unary_fn fn) {
  tkc_status s = onnx_need(n, 1);
  return s ? s : onnx_set(n, 0, fn(onnx_in(n, 0)));
}
/* float-only math: the result keeps x's dtype */
#define UNARY(name, fn) tkc_status name(onnx_node *n) { return unary(n, fn); }
UNARY(onnx_unary_neg, tkc_neg)
UNARY(onnx_unary_abs, tkc_abs)
UNARY(onnx_unary_sqrt, tkc_sqrt)
UNARY(onnx_unary_exp, tkc_exp)
UNARY(onnx_unary_log, tkc_log)
UNARY(onnx_unary_recip, tkc_recip)
UNARY(onnx_unary_relu, tkc_relu)
UNARY(onnx_unary_sigmoid, tkc_sigmoid)
UNARY(onnx_unary_tanh, tkc_tanh)
UNARY(onnx_unary_erf, tkc_erf)
UNARY(onnx_unary_floor, tkc_floor)
UNARY(onnx_unary_ceil, tkc_ceil)
UNARY(onnx_unary_round, tkc_round)
UNARY(onnx_unary_sign, tkc_sign)
UNARY(onnx_unary_sin, tkc_sin)
UNARY(onnx_unary_cos, tkc_cos)
UNARY(onnx_unary_tan, tkc_tan)
UNARY(onnx_unary_asin, tkc_asin)
UNARY(onnx_unary_acos, tkc_acos)
UNARY(onnx_unary_atan, tkc_atan)
UNARY(onnx_unary_sinh, tkc_sinh)
UNARY(onnx_unary_cosh, tkc_cosh)
UNARY(onnx_unary_isnan, tkc_isnan)
UNARY(onnx_unary_hardswish, tkc_hardswish)
UNARY(onnx_unary_mish, tkc_mish)
/* inverse hyperbolics through log: asinh = log(x + sqrt(x^2 + 1)), acosh = log(x + sqrt(x^2 - 1)), atanh = log((1 + x) / (1 - x)) / 2 */
static tkc_status inv_hyperbolic(onnx_node *n, int which) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  tkc_dtype dt = tkc_dtype_of(x);
  tkc_tensor *one = tkc_scalar(n->m->ctx, dt, 1);
  if (which == 2) return onnx_set(n, 0, tkc_mul(tkc_log(tkc_div(tkc_add(one, x), tkc_sub(one, x))), tkc_scalar(n->m->ctx, dt, 0.5)));
  tkc_tensor *sq = tkc_mul(x, x);
  return onnx_set(n, 0, tkc_log(tkc_add(x, tkc_sqrt(which == 0 ? tkc_add(sq, one) : tkc_sub(sq, one)))));
}
tkc_status onnx_unary_asinh(onnx_node *n) { return inv_hyperbolic(n, 0); }
tkc_status onnx_unary_acosh(onnx_node *n) { return inv_hyperbolic(n, 1); }
tkc_status onnx_unary_atanh(onnx_node *n) { return inv_hyperbolic(n, 2); }
tkc_status onnx_unary_not(onnx_node *n) { return unary(n, tkc_neg); } /* tkc_neg of bool is logical not */
tkc_status onnx_unary_bitnot(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  return onnx_set(n, 0, tkc_xor(x, tkc_scalar(n->m->ctx, tkc_dtype_of(x), -1)));
}
tkc_status onnx_unary_identity(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  return onnx_set_view(n, tkc_tensor_ref(onnx_in(n, 0)));
}
tkc_status onnx_unary_dropout(onnx_node *n) { /* inference: the identity, and an all-true mask */
  if (n->opset >= 12 && onnx_has(n, 2)) {
    int64_t cnt;
    const int64_t *tm = onnx_ints(n, 2, &cnt);
    if (!tm) return tkc_last_status();
    double ratio = 0.5;
    if (onnx_has(n, 1)) {
      int64_t rc;
      double *rv = onnx_doubles(n, 1, &rc);
      if (!rv) return tkc_last_status();
      ratio = rc ? rv[0] : 0.5;
      free(rv);
    }
    /* ratio 0 drops nothing: the identity, as in inference; any other ratio draws random numbers */
    if (cnt && tm[0] && ratio != 0) return onnx_node_err(n, TKC_EUNSUPPORTED, "training_mode (random dropout)");
  }
  tkc_status s = onnx_unary_identity(n);
  if (!s && n->nout > 1) {
    tkc_tensor *x = onnx_in(n, 0);
    int nd;
    int64_t sh[ONNX_MAX_DIMS];
    onnx_shape_of(x, &nd, sh);
    s = onnx_set(n, 1, tkc_full(n->m->ctx, TKC_BOOL, nd, sh, 1));
  }
  return s;
}
tkc_status onnx_unary_isinf(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int pos = (int)onnx_attr_int(n, "detect_positive", 1), neg = (int)onnx_attr_int(n, "detect_negative", 1);
  tkc_tensor *inf = tkc_scalar(n->m->ctx, tkc_dtype_of(x), INFINITY);
  tkc_tensor *r = tkc_and(tkc_isinf(x), tkc_scalar(n->m->ctx, TKC_BOOL, 0));
  if (pos) r = tkc_or(r, tkc_eq(x, inf));
  if (neg) r = tkc_or(r, tkc_eq(x, tkc_neg(inf)));
  return onnx_set(n, 0, r);
}
tkc_status onnx_unary_leaky_relu(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  return s ? s : onnx_set(n, 0, tkc_leaky_relu(onnx_in(n, 0), onnx_attr_float(n, "alpha", 0.01)));
}
tkc_status onnx_unary_elu(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  return s ? s : onnx_set(n, 0, tkc_elu(onnx_in(n, 0), onnx_attr_float(n, "alpha", 1.0)));
}
tkc_status onnx_unary_celu(onnx_node *n) { /* max(0,x) + min(0, alpha*(exp(x/alpha)-1)) */
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  tkc_ctx *c = n->m->ctx;
  tkc_dtype dt = tkc_dtype_of(x);
  double al = onnx_attr_float(n, "alpha", 1.0);
  tkc_tensor *e = tkc_mul(tkc_scalar(c, dt, al), tkc_sub(tkc_exp(tkc_div(x, tkc_scalar(c, dt, al))), tkc_scalar(c, dt, 1)));
  return onnx_set(n, 0, tkc_add(tkc_relu(x), tkc_minimum(tkc_scalar(c, dt, 0), e)));
}
tkc_status onnx_unary_selu(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  tkc_ctx *c = n->m->ctx;
  tkc_dtype dt = tkc_dtype_of(x);
  double al = onnx_attr_float(n, "alpha", 1.67326319217681884765625), ga = onnx_attr_float(n, "gamma", 1.05070102214813232421875);
  tkc_tensor *neg = tkc_mul(tkc_scalar(c, dt, al), tkc_sub(tkc_exp(x), tkc_scalar(c, dt, 1)));
  return onnx_set(n, 0, tkc_mul(tkc_scalar(c, dt, ga), tkc_where(tkc_gt(x, tkc_scalar(c, dt, 0)), x, neg)));
}
tkc_status onnx_unary_thresholded_relu(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  tkc_dtype dt = tkc_dtype_of(x);
  return onnx_set(n, 0, tkc_where(tkc_gt(x, tkc_scalar(n->m->ctx, dt, onnx_attr_float(n, "alpha", 1.0))), x, tkc_scalar(n->m->ctx, dt, 0)));
}
tkc_status onnx_unary_hardsigmoid(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  tkc_ctx *c = n->m->ctx;
  tkc_dtype dt = tkc_dtype_of(x);
  tkc_tensor *y = tkc_add(tkc_mul(x, tkc_scalar(c, dt, onnx_attr_float(n, "alpha", 0.2))), tkc_scalar(c, dt, onnx_attr_float(n, "beta", 0.5)));
  return onnx_set(n, 0, tkc_clamp(y, 0, 1));
}
tkc_status onnx_unary_softplus(onnx_node *n) { /* log(exp(x) + 1) */
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  return onnx_set(n, 0, tkc_log(tkc_add(tkc_exp(x), tkc_scalar(n->m->ctx, tkc_dtype_of(x), 1))));
}
tkc_status onnx_unary_softsign(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  return onnx_set(n, 0, tkc_div(x, tkc_add(tkc_abs(x), tkc_scalar(n->m->ctx, tkc_dtype_of(x), 1))));
}
tkc_status onnx_unary_gelu(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  return s ? s : onnx_set(n, 0, tkc_gelu(onnx_in(n, 0), !strcmp(onnx_attr_str(n, "approximate", "none"), "tanh")));
}
tkc_status onnx_unary_shrink(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  tkc_ctx *c = n->m->ctx;
  tkc_dtype dt = tkc_dtype_of(x);
  double l = onnx_attr_float(n, "lambd", 0.5), b = onnx_attr_float(n, "bias", 0.0);
  tkc_tensor *r = tkc_where(tkc_lt(x, tkc_scalar(c, dt, -l)), tkc_add(x, tkc_scalar(c, dt, b)),
                            tkc_where(tkc_gt(x, tkc_scalar(c, dt, l)), tkc_sub(x, tkc_scalar(c, dt, b)), tkc_scalar(c, dt, 0)));
  return onnx_set(n, 0, r);
}
tkc_status onnx_binary_where(onnx_node *n) {
  tkc_status s = onnx_need(n, 3);
  return s ? s : onnx_set(n, 0, tkc_where(onnx_in(n, 0), onnx_in(n, 1), onnx_in(n, 2)));
}
tkc_status onnx_unary_clip(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  if (n->opset < 11) return onnx_set(n, 0, tkc_clamp(x, onnx_attr_float(n, "min", -INFINITY), onnx_attr_float(n, "max", INFINITY)));
  if (onnx_has(n, 1)) x = tkc_maximum(x, onnx_in(n, 1));
  if (onnx_has(n, 2)) x = tkc_minimum(x, onnx_in(n, 2));
  return onnx_set(n, 0, onnx_has(n, 1) || onnx_has(n, 2) ? x : tkc_tensor_ref(x));
}

tkc_status onnx_unary_swish(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  return onnx_set(n, 0, tkc_mul(x, tkc_sigmoid(tkc_mul(x, tkc_scalar(n->m->ctx, tkc_dtype_of(x), onnx_attr_float(n, "alpha", 1.0))))));
}
/* crop centered where the target is smaller, pad centered where larger */
