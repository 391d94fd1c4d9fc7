/* ops.c — the op table: ONNX op type -> builder over the public tensor API, with each op's per-opset
 * differences decided by n->opset. Elementwise, reductions, shapes and indexing live here; the
 * convolution, pooling and normalization builders in ops_nn.c. Shape arithmetic is folded on the
 * host when its inputs' values are known (onnx_value.host), as tinygrad's "python consts". */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ops_util.h"

tkc_status onnx_set(onnx_node *n, int k, tkc_tensor *t) {
  if (!t) return onnx_node_err(n, tkc_last_status(), "%s", tkc_last_error());
  if (k < n->nout) n->out[k].t = t;
  return TKC_OK;
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

tkc_status onnx_per_axis(onnx_node *n, int nd, tkc_tensor **scale, tkc_tensor **zero_point) {
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

static int64_t *dup_ints(const int64_t *v, int64_t count) {
  int64_t *r = malloc(sizeof(int64_t) * (size_t)(count ? count : 1));
  if (r && count) memcpy(r, v, sizeof(int64_t) * (size_t)count);
  return r;
}

/* a realized tensor of the given int values (dtype dt), with them as its host values (takes vals) */
static tkc_status set_host_tensor(onnx_node *n, int k, tkc_dtype dt, int ndim, const int64_t *shape, int64_t *vals) {
  tkc_tensor *t = tkc_tensor_new(n->m->ctx, TKC_INT64, ndim, shape, vals);
  if (t && dt != TKC_INT64) t = tkc_cast(t, dt);
  tkc_status s = onnx_set(n, k, t);
  if (s == TKC_OK) onnx_set_host(n, k, vals);
  else free(vals);
  return s;
}

static void shape_of(tkc_tensor *t, int *ndim, int64_t *shape) {
  *ndim = tkc_ndim(t);
  for (int d = 0; d < *ndim; d++) shape[d] = tkc_dim(t, d);
}

static int is_int_dt(tkc_dtype dt) { return dt != TKC_BOOL && !onnx_is_float(dt); }

/* ---------------------------------------------------------------- elementwise */
typedef tkc_tensor *(*binary_fn)(tkc_tensor *, tkc_tensor *);
typedef tkc_tensor *(*unary_fn)(tkc_tensor *);

/* host values of a binary int op on same-size or scalar operands */
static void fold_binary(onnx_node *n, char op) {
  if (!onnx_has(n, 0) || !onnx_has(n, 1) || !n->in[0]->host || !n->in[1]->host || !n->out[0].t) return;
  int64_t na = tkc_numel(n->in[0]->t), nb = tkc_numel(n->in[1]->t), no = tkc_numel(n->out[0].t);
  if (!is_int_dt(tkc_dtype_of(n->out[0].t)) || (na != no && na != 1) || (nb != no && nb != 1)) return;
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
static tkc_status b_add(onnx_node *n) { tkc_status s = binary(n, tkc_add); if (!s) fold_binary(n, '+'); return s; }
static tkc_status b_sub(onnx_node *n) { tkc_status s = binary(n, tkc_sub); if (!s) fold_binary(n, '-'); return s; }
static tkc_status b_mul(onnx_node *n) { tkc_status s = binary(n, tkc_mul); if (!s) fold_binary(n, '*'); return s; }
static tkc_status b_div(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *a = onnx_in(n, 0), *b = onnx_in(n, 1);
  s = onnx_set(n, 0, is_int_dt(tkc_dtype_of(a)) ? tkc_idiv(a, b) : tkc_div(a, b));
  if (!s) fold_binary(n, '/');
  return s;
}
static tkc_status b_pow(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *a = onnx_in(n, 0), *b = onnx_in(n, 1);
  tkc_dtype dt = tkc_dtype_of(a);
  tkc_tensor *r = tkc_pow(onnx_is_float(dt) ? a : tkc_cast(a, TKC_FLOAT64), tkc_cast(b, onnx_is_float(dt) ? dt : TKC_FLOAT64));
  return onnx_set(n, 0, tkc_cast(r, dt));
}
static tkc_status b_mod(onnx_node *n) {
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
static tkc_status b_eq(onnx_node *n) { return binary(n, tkc_eq); }
static tkc_status b_lt(onnx_node *n) { return binary(n, tkc_lt); }
static tkc_status b_le(onnx_node *n) { return binary(n, tkc_le); }
static tkc_status b_gt(onnx_node *n) { return binary(n, tkc_gt); }
static tkc_status b_ge(onnx_node *n) { return binary(n, tkc_ge); }
static tkc_status b_and(onnx_node *n) { return binary(n, tkc_and); }
static tkc_status b_or(onnx_node *n) { return binary(n, tkc_or); }
static tkc_status b_xor(onnx_node *n) { return binary(n, tkc_xor); }
static tkc_status b_bitshift(onnx_node *n) {
  const char *dir = onnx_attr_str(n, "direction", "");
  if (!strcmp(dir, "LEFT")) return binary(n, tkc_shl);
  if (!strcmp(dir, "RIGHT")) return binary(n, tkc_shr);
  return onnx_node_err(n, TKC_EINVAL, "direction '%s' (LEFT or RIGHT)", dir);
}
static tkc_status b_prelu(onnx_node *n) {
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
static tkc_status v_max(onnx_node *n) { return variadic(n, tkc_maximum, 0); }
static tkc_status v_min(onnx_node *n) { return variadic(n, tkc_minimum, 0); }
static tkc_status v_sum(onnx_node *n) { return variadic(n, tkc_add, 0); }
static tkc_status v_mean(onnx_node *n) { return variadic(n, tkc_add, 1); }

static tkc_status unary(onnx_node *n, unary_fn fn) {
  tkc_status s = onnx_need(n, 1);
  return s ? s : onnx_set(n, 0, fn(onnx_in(n, 0)));
}
/* float-only math: the result keeps x's dtype */
#define UNARY(name, fn) static tkc_status name(onnx_node *n) { return unary(n, fn); }
UNARY(u_neg, tkc_neg)
UNARY(u_abs, tkc_abs)
UNARY(u_sqrt, tkc_sqrt)
UNARY(u_exp, tkc_exp)
UNARY(u_log, tkc_log)
UNARY(u_recip, tkc_recip)
UNARY(u_relu, tkc_relu)
UNARY(u_sigmoid, tkc_sigmoid)
UNARY(u_tanh, tkc_tanh)
UNARY(u_erf, tkc_erf)
UNARY(u_floor, tkc_floor)
UNARY(u_ceil, tkc_ceil)
UNARY(u_round, tkc_round)
UNARY(u_sign, tkc_sign)
UNARY(u_sin, tkc_sin)
UNARY(u_cos, tkc_cos)
UNARY(u_tan, tkc_tan)
UNARY(u_asin, tkc_asin)
UNARY(u_acos, tkc_acos)
UNARY(u_atan, tkc_atan)
UNARY(u_sinh, tkc_sinh)
UNARY(u_cosh, tkc_cosh)
UNARY(u_isnan, tkc_isnan)
UNARY(u_hardswish, tkc_hardswish)
UNARY(u_mish, tkc_mish)
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
static tkc_status u_asinh(onnx_node *n) { return inv_hyperbolic(n, 0); }
static tkc_status u_acosh(onnx_node *n) { return inv_hyperbolic(n, 1); }
static tkc_status u_atanh(onnx_node *n) { return inv_hyperbolic(n, 2); }
static tkc_status u_not(onnx_node *n) { return unary(n, tkc_neg); } /* tkc_neg of bool is logical not */
static tkc_status u_bitnot(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  return onnx_set(n, 0, tkc_xor(x, tkc_scalar(n->m->ctx, tkc_dtype_of(x), -1)));
}
static tkc_status u_identity(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  s = onnx_set(n, 0, tkc_tensor_ref(onnx_in(n, 0)));
  if (!s && n->in[0]->host) onnx_set_host(n, 0, dup_ints(n->in[0]->host, tkc_numel(onnx_in(n, 0))));
  return s;
}
static tkc_status u_dropout(onnx_node *n) { /* inference: the identity, and an all-true mask */
  if (n->opset >= 12 && onnx_has(n, 2)) {
    int64_t cnt;
    const int64_t *tm = onnx_ints(n, 2, &cnt);
    if (!tm) return tkc_last_status();
    if (cnt && tm[0]) return onnx_node_err(n, TKC_EUNSUPPORTED, "training_mode (random dropout)");
  }
  tkc_status s = u_identity(n);
  if (!s && n->nout > 1) {
    tkc_tensor *x = onnx_in(n, 0);
    int nd;
    int64_t sh[ONNX_MAX_DIMS];
    shape_of(x, &nd, sh);
    s = onnx_set(n, 1, tkc_full(n->m->ctx, TKC_BOOL, nd, sh, 1));
  }
  return s;
}
static tkc_status u_isinf(onnx_node *n) {
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
static tkc_status u_leaky_relu(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  return s ? s : onnx_set(n, 0, tkc_leaky_relu(onnx_in(n, 0), onnx_attr_float(n, "alpha", 0.01)));
}
static tkc_status u_elu(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  return s ? s : onnx_set(n, 0, tkc_elu(onnx_in(n, 0), onnx_attr_float(n, "alpha", 1.0)));
}
static tkc_status u_celu(onnx_node *n) { /* max(0,x) + min(0, alpha*(exp(x/alpha)-1)) */
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  tkc_ctx *c = n->m->ctx;
  tkc_dtype dt = tkc_dtype_of(x);
  double al = onnx_attr_float(n, "alpha", 1.0);
  tkc_tensor *e = tkc_mul(tkc_scalar(c, dt, al), tkc_sub(tkc_exp(tkc_div(x, tkc_scalar(c, dt, al))), tkc_scalar(c, dt, 1)));
  return onnx_set(n, 0, tkc_add(tkc_relu(x), tkc_minimum(tkc_scalar(c, dt, 0), e)));
}
static tkc_status u_selu(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  tkc_ctx *c = n->m->ctx;
  tkc_dtype dt = tkc_dtype_of(x);
  double al = onnx_attr_float(n, "alpha", 1.67326319217681884765625), ga = onnx_attr_float(n, "gamma", 1.05070102214813232421875);
  tkc_tensor *neg = tkc_mul(tkc_scalar(c, dt, al), tkc_sub(tkc_exp(x), tkc_scalar(c, dt, 1)));
  return onnx_set(n, 0, tkc_mul(tkc_scalar(c, dt, ga), tkc_where(tkc_gt(x, tkc_scalar(c, dt, 0)), x, neg)));
}
static tkc_status u_thresholded_relu(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  tkc_dtype dt = tkc_dtype_of(x);
  return onnx_set(n, 0, tkc_where(tkc_gt(x, tkc_scalar(n->m->ctx, dt, onnx_attr_float(n, "alpha", 1.0))), x, tkc_scalar(n->m->ctx, dt, 0)));
}
static tkc_status u_hardsigmoid(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  tkc_ctx *c = n->m->ctx;
  tkc_dtype dt = tkc_dtype_of(x);
  tkc_tensor *y = tkc_add(tkc_mul(x, tkc_scalar(c, dt, onnx_attr_float(n, "alpha", 0.2))), tkc_scalar(c, dt, onnx_attr_float(n, "beta", 0.5)));
  return onnx_set(n, 0, tkc_clamp(y, 0, 1));
}
static tkc_status u_softplus(onnx_node *n) { /* log(exp(x) + 1) */
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  return onnx_set(n, 0, tkc_log(tkc_add(tkc_exp(x), tkc_scalar(n->m->ctx, tkc_dtype_of(x), 1))));
}
static tkc_status u_softsign(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  return onnx_set(n, 0, tkc_div(x, tkc_add(tkc_abs(x), tkc_scalar(n->m->ctx, tkc_dtype_of(x), 1))));
}
static tkc_status u_gelu(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  return s ? s : onnx_set(n, 0, tkc_gelu(onnx_in(n, 0), !strcmp(onnx_attr_str(n, "approximate", "none"), "tanh")));
}
static tkc_status u_shrink(onnx_node *n) {
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
static tkc_status t_where(onnx_node *n) {
  tkc_status s = onnx_need(n, 3);
  return s ? s : onnx_set(n, 0, tkc_where(onnx_in(n, 0), onnx_in(n, 1), onnx_in(n, 2)));
}
static tkc_status t_clip(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  if (n->opset < 11) return onnx_set(n, 0, tkc_clamp(x, onnx_attr_float(n, "min", -INFINITY), onnx_attr_float(n, "max", INFINITY)));
  if (onnx_has(n, 1)) x = tkc_maximum(x, onnx_in(n, 1));
  if (onnx_has(n, 2)) x = tkc_minimum(x, onnx_in(n, 2));
  return onnx_set(n, 0, onnx_has(n, 1) || onnx_has(n, 2) ? x : tkc_tensor_ref(x));
}

/* ---------------------------------------------------------------- casts and constants */
static tkc_status cast_to(onnx_node *n, tkc_dtype to) {
  tkc_status s = onnx_set(n, 0, tkc_cast(onnx_in(n, 0), to));
  if (!s && n->in[0]->host && is_int_dt(to)) onnx_set_host(n, 0, dup_ints(n->in[0]->host, tkc_numel(onnx_in(n, 0))));
  return s;
}
static tkc_status t_cast(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  const Onnx__AttributeProto *a = onnx_attr(n, "to");
  tkc_dtype to;
  if (!a || !a->has_i) return onnx_node_err(n, TKC_EINVAL, "no 'to' attribute");
  if (onnx_dtype_from_proto((int32_t)a->i, &to) != TKC_OK) return onnx_node_err(n, tkc_last_status(), "%s", tkc_last_error());
  return cast_to(n, to);
}
static tkc_status t_cast_like(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  return s ? s : cast_to(n, tkc_dtype_of(onnx_in(n, 1)));
}
static tkc_status t_constant(onnx_node *n) {
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
    int64_t *v = dup_ints(&a->i, 1);
    return v ? set_host_tensor(n, 0, TKC_INT64, 0, NULL, v) : onnx_node_err(n, TKC_ENOMEM, "out of memory");
  }
  if (!strcmp(a->name, "value_floats")) {
    int64_t len = (int64_t)a->n_floats;
    return onnx_set(n, 0, tkc_tensor_new(c, TKC_FLOAT32, 1, &len, a->floats));
  }
  if (!strcmp(a->name, "value_ints")) {
    int64_t len = (int64_t)a->n_ints;
    int64_t *v = dup_ints(a->ints, len);
    return v ? set_host_tensor(n, 0, TKC_INT64, 1, &len, v) : onnx_node_err(n, TKC_ENOMEM, "out of memory");
  }
  return onnx_node_err(n, TKC_EUNSUPPORTED, "attribute '%s' (sparse or string constants are not supported)", a->name);
}
static tkc_status t_constant_of_shape(onnx_node *n) {
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
static tkc_status t_shape(onnx_node *n) {
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
  return set_host_tensor(n, 0, TKC_INT64, 1, &len, v);
}
static tkc_status t_size(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  int64_t *v = malloc(sizeof(int64_t));
  if (!v) return onnx_node_err(n, TKC_ENOMEM, "out of memory");
  v[0] = tkc_numel(onnx_in(n, 0));
  return set_host_tensor(n, 0, TKC_INT64, 0, NULL, v);
}
static tkc_status t_range(onnx_node *n) {
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
    return set_host_tensor(n, 0, dt, 1, &len, h);
  }
  tkc_tensor *idx = tkc_arange(n->m->ctx, dt, 0, (double)len, 1);
  return onnx_set(n, 0, tkc_add(tkc_mul(idx, tkc_scalar(n->m->ctx, dt, v[2])), tkc_scalar(n->m->ctx, dt, v[0])));
}

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
#define REDUCE(name, kind) static tkc_status name(onnx_node *n) { return reduce(n, kind); }
REDUCE(r_sum, R_SUM)
REDUCE(r_mean, R_MEAN)
REDUCE(r_max, R_MAX)
REDUCE(r_min, R_MIN)
REDUCE(r_prod, R_PROD)
REDUCE(r_l1, R_L1)
REDUCE(r_l2, R_L2)
REDUCE(r_logsum, R_LOGSUM)
REDUCE(r_logsumexp, R_LOGSUMEXP)
REDUCE(r_sumsquare, R_SUMSQUARE)

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
static tkc_status r_argmax(onnx_node *n) { return arg_reduce(n, 1); }
static tkc_status r_argmin(onnx_node *n) { return arg_reduce(n, 0); }

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
static tkc_status m_softmax(onnx_node *n) { return softmax_like(n, 0); }
static tkc_status m_log_softmax(onnx_node *n) { return softmax_like(n, 1); }
static tkc_status m_hardmax(onnx_node *n) { return softmax_like(n, 2); }

static tkc_status m_matmul(onnx_node *n) { return binary(n, tkc_matmul); }

/* ---------------------------------------------------------------- movement */
static tkc_status s_reshape(onnx_node *n) {
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
  s = onnx_set(n, 0, tkc_reshape(x, (int)cnt, sh));
  if (!s && n->in[0]->host) onnx_set_host(n, 0, dup_ints(n->in[0]->host, tkc_numel(x)));
  return s;
}
static tkc_status s_transpose(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int nd = tkc_ndim(x), c, order[ONNX_MAX_DIMS];
  const int64_t *perm = onnx_attr_ints(n, "perm", &c);
  if (c >= 0 && c != nd) return onnx_node_err(n, TKC_EINVAL, "perm has %d entries for %d dims", c, nd);
  for (int d = 0; d < nd; d++) order[d] = c < 0 ? nd - 1 - d : onnx_axis(perm[d], nd);
  return onnx_set(n, 0, nd ? tkc_permute(x, order) : tkc_tensor_ref(x));
}
static tkc_status s_flatten(onnx_node *n) {
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
static tkc_status s_squeeze(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int64_t ax[ONNX_MAX_DIMS], cnt;
  if ((s = squeeze_axes(n, ax, &cnt))) return s;
  int axes[ONNX_MAX_DIMS], nd = tkc_ndim(x);
  for (int64_t i = 0; i < cnt; i++)
    if ((axes[i] = onnx_axis(ax[i], nd)) < 0) return onnx_node_err(n, TKC_EINVAL, "axis %lld out of range", (long long)ax[i]);
  s = onnx_set(n, 0, tkc_squeeze(x, (int)cnt, axes));
  if (!s && n->in[0]->host) onnx_set_host(n, 0, dup_ints(n->in[0]->host, tkc_numel(x)));
  return s;
}
static tkc_status s_unsqueeze(onnx_node *n) {
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
  s = onnx_set(n, 0, tkc_reshape(x, out_nd, sh));
  if (!s && n->in[0]->host) onnx_set_host(n, 0, dup_ints(n->in[0]->host, tkc_numel(x)));
  return s;
}
static tkc_status s_concat(onnx_node *n) {
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
static tkc_status s_split(onnx_node *n) {
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
static tkc_status s_slice(onnx_node *n) {
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

/* ---------------------------------------------------------------- indexing */
static tkc_status x_gather(onnx_node *n) {
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
    shape_of(idx, &ind, ish);
    return set_host_tensor(n, 0, tkc_dtype_of(x), ind, ish, v);
  }
  return onnx_set(n, 0, tkc_index_select(x, axis, idx));
}
static tkc_status x_gather_elements(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int axis = onnx_axis(onnx_attr_int(n, "axis", 0), tkc_ndim(x));
  if (axis < 0) return onnx_node_err(n, TKC_EINVAL, "axis out of range");
  return onnx_set(n, 0, tkc_gather(x, axis, onnx_in(n, 1)));
}
static tkc_status x_scatter_elements(onnx_node *n) {
  tkc_status s = onnx_need(n, 3);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int axis = onnx_axis(onnx_attr_int(n, "axis", 0), tkc_ndim(x));
  if (axis < 0) return onnx_node_err(n, TKC_EINVAL, "axis out of range");
  const char *red = onnx_attr_str(n, "reduction", "none");
  if (!strcmp(red, "none")) return onnx_set(n, 0, tkc_scatter(x, axis, onnx_in(n, 1), onnx_in(n, 2)));
  if (!strcmp(red, "add")) return onnx_set(n, 0, tkc_scatter_add(x, axis, onnx_in(n, 1), onnx_in(n, 2)));
  return onnx_node_err(n, TKC_EUNSUPPORTED, "reduction '%s'", red);
}
static tkc_status x_expand(onnx_node *n) {
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
static tkc_status x_tile(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  int64_t cnt;
  const int64_t *v = onnx_ints(n, 1, &cnt);
  if (!v) return tkc_last_status();
  return onnx_set(n, 0, tkc_repeat(onnx_in(n, 0), (int)cnt, v));
}
static tkc_status x_pad(onnx_node *n) {
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
static tkc_status x_trilu(onnx_node *n) {
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
static tkc_status x_cumsum(onnx_node *n) { return scan_op(n, 0); }
static tkc_status x_cumprod(onnx_node *n) { return scan_op(n, 1); }
static tkc_status t_bitcast(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  const Onnx__AttributeProto *a = onnx_attr(n, "to");
  tkc_dtype to;
  if (!a || !a->has_i) return onnx_node_err(n, TKC_EINVAL, "no 'to' attribute");
  if (onnx_dtype_from_proto((int32_t)a->i, &to) != TKC_OK) return onnx_node_err(n, tkc_last_status(), "%s", tkc_last_error());
  return onnx_set(n, 0, tkc_bitcast(onnx_in(n, 0), to));
}
static tkc_status u_swish(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  return onnx_set(n, 0, tkc_mul(x, tkc_sigmoid(tkc_mul(x, tkc_scalar(n->m->ctx, tkc_dtype_of(x), onnx_attr_float(n, "alpha", 1.0))))));
}
/* crop centered where the target is smaller, pad centered where larger */
static tkc_status x_center_crop_pad(onnx_node *n) {
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
/* saturate(round_half_even(x / scale) + zero_point) in the zero point's dtype (uint8 without one) */
static tkc_status t_quantize(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0), *sc = onnx_in(n, 1), *zp = onnx_in(n, 2);
  if (onnx_attr_int(n, "block_size", 0)) return onnx_node_err(n, TKC_EUNSUPPORTED, "block_size");
  tkc_dtype out = zp ? tkc_dtype_of(zp) : TKC_UINT8;
  const Onnx__AttributeProto *oa = onnx_attr(n, "output_dtype");
  if (oa && oa->has_i && oa->i && onnx_dtype_from_proto((int32_t)oa->i, &out) != TKC_OK) return onnx_node_err(n, tkc_last_status(), "%s", tkc_last_error());
  double lo, hi;
  switch (out) {
  case TKC_UINT8: lo = 0, hi = 255; break;
  case TKC_INT8: lo = -128, hi = 127; break;
  case TKC_UINT16: lo = 0, hi = 65535; break;
  case TKC_INT16: lo = -32768, hi = 32767; break;
  case TKC_INT32: lo = -2147483648.0, hi = 2147483647.0; break;
  default: return onnx_node_err(n, TKC_EUNSUPPORTED, "output dtype %s", tkc_dtype_name(out));
  }
  int nd = tkc_ndim(x);
  if ((s = onnx_per_axis(n, nd, &sc, &zp))) return s;
  tkc_tensor *q = tkc_round(tkc_div(tkc_cast(x, TKC_FLOAT32), tkc_cast(sc, TKC_FLOAT32)));
  if (zp) q = tkc_add(q, tkc_cast(zp, TKC_FLOAT32));
  return onnx_set(n, 0, tkc_cast(tkc_clamp(q, lo, hi), out));
}
static tkc_status x_topk(onnx_node *n) {
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
static tkc_status x_depth_to_space(onnx_node *n) {
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
static tkc_status x_space_to_depth(onnx_node *n) {
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
static tkc_status x_one_hot(onnx_node *n) {
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
static tkc_status t_dynamic_quantize(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = tkc_cast(onnx_in(n, 0), TKC_FLOAT32);
  tkc_ctx *c = n->m->ctx;
  tkc_tensor *zero = tkc_scalar(c, TKC_FLOAT32, 0);
  tkc_tensor *hi = tkc_maximum(tkc_max(x, 0, NULL, 0), zero), *lo = tkc_minimum(tkc_min(x, 0, NULL, 0), zero);
  tkc_tensor *scale = tkc_div(tkc_sub(hi, lo), tkc_scalar(c, TKC_FLOAT32, 255));
  tkc_tensor *zp = tkc_clamp(tkc_round(tkc_div(tkc_neg(lo), scale)), 0, 255);
  tkc_tensor *y = tkc_clamp(tkc_add(tkc_round(tkc_div(x, scale)), zp), 0, 255);
  if ((s = onnx_set(n, 0, tkc_cast(y, TKC_UINT8)))) return s;
  if (n->nout > 1 && (s = onnx_set(n, 1, scale))) return s;
  return n->nout > 2 ? onnx_set(n, 2, tkc_cast(zp, TKC_UINT8)) : TKC_OK;
}

/* ---------------------------------------------------------------- data-dependent shapes: the values are read on the host */
static tkc_status x_compress(onnx_node *n) {
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
static tkc_status x_nonzero(onnx_node *n) {
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
static tkc_status w_hann(onnx_node *n) { return window_op(n, 0); }
static tkc_status w_hamming(onnx_node *n) { return window_op(n, 1); }
static tkc_status w_blackman(onnx_node *n) { return window_op(n, 2); }

/* ---------------------------------------------------------------- the table (by name) */
static const onnx_op OPS[] = {
  {"Abs", u_abs}, {"Acos", u_acos}, {"Acosh", u_acosh}, {"Add", b_add}, {"And", b_and}, {"ArgMax", r_argmax}, {"ArgMin", r_argmin}, {"Asin", u_asin}, {"Asinh", u_asinh},
  {"Atan", u_atan}, {"Atanh", u_atanh}, {"AveragePool", onnx_build_avg_pool}, {"BatchNormalization", onnx_build_batch_norm}, {"BitShift", b_bitshift},
  {"BitwiseAnd", b_and}, {"BitwiseNot", u_bitnot}, {"BitwiseOr", b_or}, {"BitwiseXor", b_xor}, {"Cast", t_cast}, {"CastLike", t_cast_like},
  {"Ceil", u_ceil}, {"Celu", u_celu}, {"Clip", t_clip}, {"Concat", s_concat}, {"Constant", t_constant}, {"ConstantOfShape", t_constant_of_shape},
  {"Conv", onnx_build_conv}, {"ConvTranspose", onnx_build_conv_transpose}, {"Cos", u_cos}, {"Cosh", u_cosh}, {"CumSum", x_cumsum},
  {"DepthToSpace", x_depth_to_space}, {"Div", b_div}, {"Dropout", u_dropout}, {"Elu", u_elu}, {"Equal", b_eq},
  {"Erf", u_erf}, {"Exp", u_exp}, {"Expand", x_expand}, {"Flatten", s_flatten}, {"Floor", u_floor}, {"Gather", x_gather},
  {"GatherElements", x_gather_elements}, {"Gelu", u_gelu}, {"Gemm", onnx_build_gemm}, {"GlobalAveragePool", onnx_build_global_avg_pool},
  {"GlobalMaxPool", onnx_build_global_max_pool}, {"Greater", b_gt}, {"GreaterOrEqual", b_ge}, {"HardSigmoid", u_hardsigmoid},
  {"HardSwish", u_hardswish}, {"Hardmax", m_hardmax}, {"Identity", u_identity}, {"InstanceNormalization", onnx_build_instance_norm},
  {"IsInf", u_isinf}, {"IsNaN", u_isnan}, {"LayerNormalization", onnx_build_layer_norm}, {"LeakyRelu", u_leaky_relu}, {"Less", b_lt},
  {"LessOrEqual", b_le}, {"Log", u_log}, {"LogSoftmax", m_log_softmax}, {"MatMul", m_matmul}, {"Max", v_max},
  {"MaxPool", onnx_build_max_pool}, {"Mean", v_mean}, {"Min", v_min}, {"Mish", u_mish}, {"Mod", b_mod}, {"Mul", b_mul}, {"Neg", u_neg},
  {"Not", u_not}, {"OneHot", x_one_hot}, {"Or", b_or}, {"PRelu", b_prelu}, {"Pad", x_pad}, {"Pow", b_pow}, {"Range", t_range},
  {"Reciprocal", u_recip}, {"ReduceL1", r_l1}, {"ReduceL2", r_l2}, {"ReduceLogSum", r_logsum}, {"ReduceLogSumExp", r_logsumexp},
  {"ReduceMax", r_max}, {"ReduceMean", r_mean}, {"ReduceMin", r_min}, {"ReduceProd", r_prod}, {"ReduceSum", r_sum},
  {"ReduceSumSquare", r_sumsquare}, {"Relu", u_relu}, {"Reshape", s_reshape}, {"Round", u_round}, {"ScatterElements", x_scatter_elements},
  {"Selu", u_selu}, {"Shape", t_shape}, {"Shrink", u_shrink}, {"Sigmoid", u_sigmoid}, {"Sign", u_sign}, {"Sin", u_sin}, {"Sinh", u_sinh},
  {"Size", t_size}, {"Slice", s_slice}, {"Softmax", m_softmax}, {"Softplus", u_softplus}, {"Softsign", u_softsign},
  {"SpaceToDepth", x_space_to_depth}, {"Split", s_split}, {"Sqrt", u_sqrt}, {"Squeeze", s_squeeze}, {"Sub", b_sub}, {"Sum", v_sum},
  {"Tan", u_tan}, {"Tanh", u_tanh}, {"ThresholdedRelu", u_thresholded_relu}, {"Tile", x_tile}, {"TopK", x_topk}, {"Transpose", s_transpose},
  {"Trilu", x_trilu}, {"Unsqueeze", s_unsqueeze}, {"Where", t_where}, {"Xor", b_xor},
  {"RMSNormalization", onnx_build_rms_norm}, {"MeanVarianceNormalization", onnx_build_mvn}, {"GroupNormalization", onnx_build_group_norm},
  {"LpNormalization", onnx_build_lp_norm}, {"LRN", onnx_build_lrn}, {"DequantizeLinear", onnx_build_dequantize}, {"EyeLike", onnx_build_eye_like}, {"Attention", onnx_build_attention},
  {"Resize", onnx_build_resize}, {"CumProd", x_cumprod}, {"BitCast", t_bitcast}, {"Swish", u_swish},
  {"CenterCropPad", x_center_crop_pad}, {"QuantizeLinear", t_quantize}, {"DynamicQuantizeLinear", t_dynamic_quantize},
  {"Einsum", onnx_build_einsum}, {"MatMulInteger", onnx_build_matmul_integer}, {"QLinearMatMul", onnx_build_qlinear_matmul},
  {"ConvInteger", onnx_build_conv_integer}, {"NonMaxSuppression", onnx_build_nms}, {"DFT", onnx_build_dft}, {"ScatterND", onnx_build_scatter_nd}, {"CausalConvWithState", onnx_build_causal_conv},
  {"LinearAttention", onnx_build_linear_attention}, {"If", onnx_build_if}, {"Scan", onnx_build_scan}, {"Loop", onnx_build_loop},
  {"Unique", onnx_build_unique}, {"ReverseSequence", onnx_build_reverse_sequence}, {"AffineGrid", onnx_build_affine_grid},
  {"GridSample", onnx_build_grid_sample}, {"Compress", x_compress}, {"NonZero", x_nonzero}, {"Scatter", x_scatter_elements},
  {"HannWindow", w_hann}, {"HammingWindow", w_hamming}, {"BlackmanWindow", w_blackman}, {"RotaryEmbedding", onnx_build_rotary}, {"LpPool", onnx_build_lp_pool}, {"GatherND", onnx_build_gather_nd}, {"Upsample", onnx_build_resize},
  {"NegativeLogLikelihoodLoss", onnx_build_nll_loss}, {"SoftmaxCrossEntropyLoss", onnx_build_softmax_ce_loss},
};

const onnx_op *onnx_find_op(const char *op_type) {
  for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++) /* a load looks each node up once: a scan is plenty */
    if (!strcmp(op_type, OPS[i].name)) return &OPS[i];
  return NULL;
}
