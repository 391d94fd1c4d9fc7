/* Gradients (src/autograd/gradient.c, autograd.c): every rule and differentiable composite against
 * central finite differences of the same function in float64 on INTERP, on every device (float32 on
 * WEBGPU, which has no float64); max ties, casts through the half types, accumulation, zero_grad,
 * detach, a tensor used twice, a leaf off the loss's path, backward after the loss was realized,
 * and the bad inputs of every gradient function. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "tkc.h"
#include "tkc/ops_math.h"
#include "tkc/ops_nn.h"
#include "tkc/ops_shape.h"

static const char *const DEVICES[] = {"INTERP", "CPU", "LLVM", "WEBGPU"};

/* ---------------------------------------------------------------- cases: y = f(x0, x1), loss = sum(y * w) */

typedef tkc_tensor *(*case_fn)(tkc_tensor *const *x);
typedef struct gcase {
  const char *name;
  case_fn f;
  int nin;
  int ndim[2];
  int64_t shape[2][4];
  double lo[2], hi[2]; /* inputs in [lo, hi], kept 0.05 away from 0 when the range spans it (kinks) */
} gcase;

static tkc_ctx *cur_ctx; /* the ctx a case builds in (for tensors that are not inputs) */
static tkc_tensor *T(tkc_tensor *t) { return t; } /* (tensors are freed with their ctx) */
static const int AX1[] = {1}, AX0[] = {0}, AX02[] = {0, 2};

static tkc_tensor *c_add(tkc_tensor *const *x) { return tkc_add(x[0], x[1]); }
static tkc_tensor *c_sub(tkc_tensor *const *x) { return tkc_sub(x[0], x[1]); }
static tkc_tensor *c_mul(tkc_tensor *const *x) { return tkc_mul(x[0], x[1]); }
static tkc_tensor *c_div(tkc_tensor *const *x) { return tkc_div(x[0], x[1]); }
static tkc_tensor *c_neg(tkc_tensor *const *x) { return tkc_neg(x[0]); }
static tkc_tensor *c_recip(tkc_tensor *const *x) { return tkc_recip(x[0]); }
static tkc_tensor *c_sqrt(tkc_tensor *const *x) { return tkc_sqrt(x[0]); }
static tkc_tensor *c_exp(tkc_tensor *const *x) { return tkc_exp(x[0]); }
static tkc_tensor *c_log(tkc_tensor *const *x) { return tkc_log(x[0]); }
static tkc_tensor *c_exp2(tkc_tensor *const *x) { return tkc_exp2(x[0]); }
static tkc_tensor *c_log2(tkc_tensor *const *x) { return tkc_log2(x[0]); }
static tkc_tensor *c_sin(tkc_tensor *const *x) { return tkc_sin(x[0]); }
static tkc_tensor *c_cos(tkc_tensor *const *x) { return tkc_cos(x[0]); }
static tkc_tensor *c_tanh(tkc_tensor *const *x) { return tkc_tanh(x[0]); }
static tkc_tensor *c_sigmoid(tkc_tensor *const *x) { return tkc_sigmoid(x[0]); }
static tkc_tensor *c_relu(tkc_tensor *const *x) { return tkc_relu(x[0]); }
static tkc_tensor *c_abs(tkc_tensor *const *x) { return tkc_abs(x[0]); }
static tkc_tensor *c_pow(tkc_tensor *const *x) { return tkc_pow(x[0], x[1]); }
static tkc_tensor *c_maximum(tkc_tensor *const *x) { return tkc_maximum(x[0], x[1]); }
static tkc_tensor *c_minimum(tkc_tensor *const *x) { return tkc_minimum(x[0], x[1]); }
static tkc_tensor *c_where(tkc_tensor *const *x) { return tkc_where(tkc_gt(x[0], x[1]), tkc_mul(x[0], x[0]), tkc_mul(x[1], x[0])); }
static tkc_tensor *c_clamp(tkc_tensor *const *x) { return tkc_clamp(x[0], -0.5, 0.5); }
static tkc_tensor *c_sum1(tkc_tensor *const *x) { return tkc_sum(x[0], 1, AX1, 1); }
static tkc_tensor *c_sum02(tkc_tensor *const *x) { return tkc_sum(x[0], 2, AX02, 0); }
static tkc_tensor *c_sum_all(tkc_tensor *const *x) { return tkc_mul(tkc_sum(x[0], 0, NULL, 0), tkc_sum(x[0], 0, NULL, 0)); }
static tkc_tensor *c_max1(tkc_tensor *const *x) { return tkc_max(x[0], 1, AX1, 0); }
static tkc_tensor *c_max02(tkc_tensor *const *x) { return tkc_max(x[0], 2, AX02, 1); }
static tkc_tensor *c_min0(tkc_tensor *const *x) { return tkc_min(x[0], 1, AX0, 0); }
static tkc_tensor *c_mean1(tkc_tensor *const *x) { return tkc_mean(x[0], 1, AX1, 0); }
static tkc_tensor *c_reshape_permute(tkc_tensor *const *x) {
  static const int64_t s[] = {3, 2, 2};
  static const int order[] = {2, 0, 1};
  return tkc_permute(tkc_reshape(x[0], 3, s), order);
}
static tkc_tensor *c_expand(tkc_tensor *const *x) {
  static const int64_t s[] = {2, 3, 4};
  return tkc_mul(tkc_expand(x[0], 3, s), x[1]);
}
static tkc_tensor *c_pad_shrink_flip(tkc_tensor *const *x) {
  static const int64_t pads[] = {1, 2, 0, 1}, ranges[] = {0, 3, 1, 4};
  return tkc_flip(tkc_shrink(tkc_pad(x[0], pads, 0.0), ranges), 2, (const int[]){0, 1});
}
static tkc_tensor *c_pad_value(tkc_tensor *const *x) {
  static const int64_t pads[] = {1, 1, 2, 0};
  return tkc_mul(tkc_pad(x[0], pads, 2.5), tkc_pad(x[0], pads, 2.5));
}
static tkc_tensor *c_contiguous(tkc_tensor *const *x) { return tkc_mul(tkc_contiguous(tkc_mul(x[0], x[1])), x[0]); }
static tkc_tensor *c_used_twice(tkc_tensor *const *x) { return tkc_add(tkc_mul(x[0], x[0]), tkc_exp(x[0])); }
static tkc_tensor *c_matmul(tkc_tensor *const *x) { return tkc_matmul(x[0], x[1]); }
static tkc_tensor *c_softmax(tkc_tensor *const *x) { return tkc_softmax(x[0], 1); }
static tkc_tensor *c_log_softmax(tkc_tensor *const *x) { return tkc_log_softmax(x[0], 1); }
static tkc_tensor *c_logsumexp(tkc_tensor *const *x) { return tkc_logsumexp(x[0], 1, AX1, 0); }
static tkc_tensor *c_layer_norm(tkc_tensor *const *x) { return tkc_layer_norm(x[0], 1, x[1], NULL, 1e-5); }
static tkc_tensor *c_rms_norm(tkc_tensor *const *x) { return tkc_rms_norm(x[0], 1, x[1], 1e-6); }
static tkc_tensor *c_conv2d_weight(tkc_tensor *const *x) {
  static const float img[] = {0.5f, -1, 2, 0.25f, 1, 1.5f, -0.5f, 2, -2, 0.75f, 1, -1, 0.5f, 0.5f, 3, -0.25f, 1, 2};
  tkc_tensor *t = tkc_cast(tkc_tensor_new(cur_ctx, TKC_FLOAT32, 4, (const int64_t[]){1, 2, 3, 3}, img), tkc_dtype_of(x[0]));
  return tkc_conv2d(t, x[0], x[1], 1, 0);
}
static tkc_tensor *c_conv2d_input(tkc_tensor *const *x) { return tkc_conv2d(x[0], x[1], NULL, 1, 1); }
static tkc_tensor *c_conv2d_ex(tkc_tensor *const *x) {
  return tkc_conv2d_ex(x[0], x[1], NULL, (const int[]){2, 1}, (const int[]){1, 0, 0, 1}, (const int[]){1, 2}, 2);
}
static tkc_tensor *c_max_pool(tkc_tensor *const *x) { return tkc_max_pool2d(x[0], (const int[]){2, 2}, (const int[]){2, 1}, NULL, NULL, 0); }
static tkc_tensor *c_avg_pool(tkc_tensor *const *x) { return tkc_avg_pool2d(x[0], (const int[]){3, 2}, (const int[]){2, 2}, (const int[]){1, 1}, 1, 0); }
static tkc_tensor *c_cumsum(tkc_tensor *const *x) { return tkc_cumsum(x[0], 1); }
static tkc_tensor *c_gelu(tkc_tensor *const *x) { return tkc_gelu(x[0], 1); }
static tkc_tensor *c_silu(tkc_tensor *const *x) { return tkc_silu(x[0]); }
static tkc_tensor *c_cross_entropy(tkc_tensor *const *x) {
  static const int32_t tgt[] = {2, 0, 3};
  tkc_tensor *t = tkc_tensor_new(cur_ctx, TKC_INT32, 1, (const int64_t[]){3}, tgt);
  return tkc_cross_entropy(x[0], t, TKC_REDUCTION_MEAN);
}
static tkc_tensor *c_index_select(tkc_tensor *const *x) {
  static const int32_t idx[] = {2, 0, 2, 1};
  tkc_tensor *t = tkc_tensor_new(cur_ctx, TKC_INT32, 1, (const int64_t[]){4}, idx);
  tkc_requires_grad(x[0], 1); /* selects values, not bits */
  return tkc_index_select(x[0], 1, t);
}

static const gcase CASES[] = {
    {"add (broadcast)", c_add, 2, {2, 1}, {{2, 3}, {3}}, {-1, -1}, {1, 1}},
    {"sub (broadcast)", c_sub, 2, {2, 2}, {{2, 3}, {2, 1}}, {-1, -1}, {1, 1}},
    {"mul (broadcast)", c_mul, 2, {2, 2}, {{2, 3}, {1, 3}}, {-1, -1}, {1, 1}},
    {"div", c_div, 2, {2, 2}, {{2, 3}, {2, 3}}, {-1, 1}, {1, 2}},
    {"neg", c_neg, 1, {2}, {{2, 3}}, {-1}, {1}},
    {"recip", c_recip, 1, {2}, {{2, 3}}, {0.5}, {2}},
    {"sqrt", c_sqrt, 1, {2}, {{2, 3}}, {0.5}, {2}},
    {"exp", c_exp, 1, {2}, {{2, 3}}, {-1}, {1}},
    {"log", c_log, 1, {2}, {{2, 3}}, {0.5}, {2}},
    {"exp2", c_exp2, 1, {2}, {{2, 3}}, {-1}, {1}},
    {"log2", c_log2, 1, {2}, {{2, 3}}, {0.5}, {2}},
    {"sin", c_sin, 1, {2}, {{2, 3}}, {-2}, {2}},
    {"cos", c_cos, 1, {2}, {{2, 3}}, {-2}, {2}},
    {"tanh", c_tanh, 1, {2}, {{2, 3}}, {-2}, {2}},
    {"sigmoid", c_sigmoid, 1, {2}, {{2, 3}}, {-2}, {2}},
    {"relu", c_relu, 1, {2}, {{2, 3}}, {-1}, {1}},
    {"abs", c_abs, 1, {2}, {{2, 3}}, {-1}, {1}},
    {"pow", c_pow, 2, {2, 2}, {{2, 3}, {2, 3}}, {0.5, -1.5}, {2, 1.5}},
    {"maximum", c_maximum, 2, {2, 2}, {{2, 3}, {2, 3}}, {-1, -1}, {1, 1}},
    {"minimum (broadcast)", c_minimum, 2, {2, 1}, {{2, 3}, {3}}, {-1, -1}, {1, 1}},
    {"where", c_where, 2, {2, 2}, {{2, 3}, {2, 3}}, {-1, -1}, {1, 1}},
    {"clamp", c_clamp, 1, {2}, {{2, 3}}, {-1}, {1}},
    {"sum axis 1 keepdim", c_sum1, 1, {2}, {{2, 3}}, {-1}, {1}},
    {"sum axes 0,2", c_sum02, 1, {3}, {{2, 3, 2}}, {-1}, {1}},
    {"sum all, squared", c_sum_all, 1, {2}, {{2, 3}}, {-1}, {1}},
    {"max axis 1", c_max1, 1, {2}, {{3, 4}}, {-1}, {1}},
    {"max axes 0,2 keepdim", c_max02, 1, {3}, {{2, 3, 2}}, {-1}, {1}},
    {"min axis 0", c_min0, 1, {2}, {{3, 4}}, {-1}, {1}},
    {"mean axis 1", c_mean1, 1, {2}, {{2, 3}}, {-1}, {1}},
    {"reshape, permute", c_reshape_permute, 1, {2}, {{3, 4}}, {-1}, {1}},
    {"expand", c_expand, 2, {3, 3}, {{2, 1, 4}, {2, 3, 4}}, {-1, -1}, {1, 1}},
    {"pad, shrink, flip", c_pad_shrink_flip, 1, {2}, {{2, 3}}, {-1}, {1}},
    {"pad with a value", c_pad_value, 1, {2}, {{2, 3}}, {-1}, {1}},
    {"contiguous", c_contiguous, 2, {2, 2}, {{2, 3}, {2, 3}}, {-1, -1}, {1, 1}},
    {"used twice", c_used_twice, 1, {2}, {{2, 3}}, {-1}, {1}},
    {"matmul", c_matmul, 2, {2, 2}, {{2, 3}, {3, 4}}, {-1, -1}, {1, 1}},
    {"softmax", c_softmax, 1, {2}, {{2, 4}}, {-2}, {2}},
    {"log_softmax", c_log_softmax, 1, {2}, {{2, 4}}, {-2}, {2}},
    {"logsumexp", c_logsumexp, 1, {2}, {{2, 4}}, {-2}, {2}},
    {"layer_norm", c_layer_norm, 2, {2, 1}, {{3, 4}, {4}}, {-2, 0.5}, {2, 1.5}},
    {"rms_norm", c_rms_norm, 2, {2, 1}, {{3, 4}, {4}}, {-2, 0.5}, {2, 1.5}},
    {"gelu (tanh)", c_gelu, 1, {2}, {{2, 3}}, {-2}, {2}},
    {"silu", c_silu, 1, {2}, {{2, 3}}, {-2}, {2}},
    {"conv2d (weight, bias)", c_conv2d_weight, 2, {4, 1}, {{2, 2, 2, 2}, {2}}, {-1, -1}, {1, 1}},
    {"conv2d (input, padded)", c_conv2d_input, 2, {4, 4}, {{1, 2, 4, 4}, {3, 2, 3, 3}}, {-1, -1}, {1, 1}},
    {"conv2d_ex (stride, dilation, groups)", c_conv2d_ex, 2, {4, 4}, {{1, 4, 5, 6}, {2, 2, 2, 2}}, {-1, -1}, {1, 1}},
    {"max_pool2d (stride 2x1)", c_max_pool, 1, {4}, {{1, 2, 4, 5}}, {-1}, {1}},
    {"avg_pool2d (padded, ceil)", c_avg_pool, 1, {4}, {{1, 1, 5, 4}}, {-1}, {1}},
    {"cumsum", c_cumsum, 1, {2}, {{2, 5}}, {-1}, {1}},
    {"cross_entropy", c_cross_entropy, 1, {2}, {{3, 4}}, {-2}, {2}},
    {"index_select (an index used twice)", c_index_select, 1, {2}, {{2, 3}}, {-1}, {1}},
};

/* deterministic inputs without ties, away from 0 when the range spans it */
static double input_value(int k, int i, double lo, double hi) {
  double u = fmod(fabs(sin((i + 1) * 12.9898 + (k + 1) * 78.233)) * 43758.5453, 1.0);
  double v = lo + (hi - lo) * u;
  if (lo < 0 && hi > 0 && fabs(v) < 0.05) v = v < 0 ? v - 0.05 : v + 0.05;
  return v;
}

static int64_t numel(int nd, const int64_t *s) {
  int64_t n = 1;
  for (int i = 0; i < nd; i++) n *= s[i];
  return n;
}

/* loss = sum(f(x) * w) with w = 0.5 + i/n over f's elements (so every output element counts differently) */
static tkc_tensor *loss_of(tkc_ctx *ctx, const gcase *c, tkc_tensor *const *x, tkc_dtype dt) {
  cur_ctx = ctx;
  tkc_tensor *y = c->f(x);
  if (!y) return NULL;
  int nd = tkc_ndim(y);
  int64_t shape[8];
  for (int i = 0; i < nd; i++) shape[i] = tkc_dim(y, i);
  int64_t n = numel(nd, shape);
  double *w = malloc((size_t)(n ? n : 1) * sizeof *w);
  float *wf = malloc((size_t)(n ? n : 1) * sizeof *wf);
  for (int64_t i = 0; i < n; i++) w[i] = 0.5 + (double)i / (double)n, wf[i] = (float)w[i];
  tkc_tensor *wt = tkc_tensor_new(ctx, dt, nd, shape, dt == TKC_FLOAT64 ? (void *)w : (void *)wf);
  free(w), free(wf);
  return T(tkc_sum(tkc_mul(y, wt), 0, NULL, 0));
}

static void upload(tkc_ctx *ctx, const gcase *c, const double *const *v, tkc_dtype dt, tkc_tensor **x) {
  for (int k = 0; k < c->nin; k++) {
    int64_t n = numel(c->ndim[k], c->shape[k]);
    float *f = malloc((size_t)n * sizeof *f);
    for (int64_t i = 0; i < n; i++) f[i] = (float)v[k][i];
    x[k] = tkc_tensor_new(ctx, dt, c->ndim[k], c->shape[k], dt == TKC_FLOAT64 ? (const void *)v[k] : (const void *)f);
    free(f);
  }
}

static double loss_value(tkc_ctx *ctx, const gcase *c, const double *const *v) {
  tkc_tensor *x[2] = {NULL, NULL};
  upload(ctx, c, v, TKC_FLOAT64, x);
  tkc_tensor *l = loss_of(ctx, c, x, TKC_FLOAT64);
  double out = NAN;
  if (!l || tkc_copy_out(l, &out, sizeof out)) printf("%s: %s\n", c->name, tkc_last_error());
  tkc_tensor_free(l), tkc_tensor_free(x[0]), tkc_tensor_free(x[1]);
  return out;
}

/* d loss / d x[k][i] by central differences in float64 on INTERP */
static void finite_differences(const gcase *c, double **v, double **fd) {
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  assert_non_null(ctx);
  for (int k = 0; k < c->nin; k++) {
    int64_t n = numel(c->ndim[k], c->shape[k]);
    for (int64_t i = 0; i < n; i++) {
      double keep = v[k][i], h = 1e-6 * fmax(1.0, fabs(keep));
      v[k][i] = keep + h;
      double up = loss_value(ctx, c, (const double *const *)v);
      v[k][i] = keep - h;
      double down = loss_value(ctx, c, (const double *const *)v);
      v[k][i] = keep;
      fd[k][i] = (up - down) / (2 * h);
    }
  }
  tkc_ctx_free(ctx);
}

static void check_case(const gcase *c, int *nfail) {
  double *v[2] = {NULL, NULL}, *fd[2] = {NULL, NULL};
  for (int k = 0; k < c->nin; k++) {
    int64_t n = numel(c->ndim[k], c->shape[k]);
    v[k] = malloc((size_t)n * sizeof *v[k]), fd[k] = malloc((size_t)n * sizeof *fd[k]);
    for (int64_t i = 0; i < n; i++) v[k][i] = input_value(k, (int)i, c->lo[k], c->hi[k]);
  }
  finite_differences(c, v, fd);
  for (size_t d = 0; d < sizeof DEVICES / sizeof *DEVICES; d++) {
    if (!tkc_device_available(DEVICES[d])) continue;
    tkc_dtype dt = strcmp(DEVICES[d], "WEBGPU") ? TKC_FLOAT64 : TKC_FLOAT32;
    double tol = dt == TKC_FLOAT64 ? 1e-6 : 2e-3;
    tkc_ctx *ctx = tkc_ctx_new(DEVICES[d]);
    assert_non_null(ctx);
    tkc_tensor *x[2] = {NULL, NULL}, *g[2] = {NULL, NULL};
    upload(ctx, c, (const double *const *)v, dt, x);
    tkc_tensor *loss = loss_of(ctx, c, x, dt);
    tkc_status st = loss ? tkc_gradient(loss, c->nin, x, g) : tkc_last_status();
    if (st) {
      printf("  FAIL %s on %s: %s\n", c->name, DEVICES[d], tkc_last_error());
      (*nfail)++;
    }
    for (int k = 0; k < c->nin && !st; k++) {
      int64_t n = numel(c->ndim[k], c->shape[k]);
      double *got = malloc((size_t)n * sizeof *got);
      float *gf = malloc((size_t)n * sizeof *gf);
      if (tkc_copy_out(g[k], dt == TKC_FLOAT64 ? (void *)got : (void *)gf, (size_t)n * (dt == TKC_FLOAT64 ? 8 : 4))) {
        printf("  FAIL %s on %s: %s\n", c->name, DEVICES[d], tkc_last_error());
        (*nfail)++;
      } else {
        for (int64_t i = 0; i < n; i++) {
          double gi = dt == TKC_FLOAT64 ? got[i] : (double)gf[i];
          if (!(fabs(gi - fd[k][i]) <= tol * fmax(1.0, fabs(fd[k][i])))) {
            printf("  FAIL %s on %s: d/dx%d[%lld] = %.9g, finite differences %.9g\n", c->name, DEVICES[d], k, (long long)i, gi, fd[k][i]);
            (*nfail)++;
            break;
          }
        }
      }
      free(got), free(gf);
    }
    tkc_ctx_free(ctx);
  }
  for (int k = 0; k < c->nin; k++) free(v[k]), free(fd[k]);
}

static void test_rules_against_finite_differences(void **state) {
  (void)state;
  int nfail = 0;
  for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) check_case(&CASES[i], &nfail);
  assert_int_equal(nfail, 0);
}

/* ---------------------------------------------------------------- exact cases */

static tkc_ctx *ctx_on(const char *dev) { return tkc_device_available(dev) ? tkc_ctx_new(dev) : NULL; }

static void read_f32(tkc_tensor *t, float *out, size_t n) {
  tkc_status st = tkc_copy_out(t, out, n * sizeof *out);
  if (st) printf("%s\n", tkc_last_error());
  assert_int_equal(st, TKC_OK);
}

/* max with ties: the maximum's gradient split evenly among its positions (also in the half types) */
static void test_max_ties(void **state) {
  (void)state;
  static const float x[] = {1, 3, 3, 2, 5, 5, 5, -1};
  for (size_t d = 0; d < 4; d++) {
    tkc_ctx *ctx = ctx_on(DEVICES[d]);
    if (!ctx) continue;
    for (int h = 0; h < 3; h++) {
      tkc_dtype dt = h == 0 ? TKC_FLOAT32 : h == 1 ? TKC_FLOAT16 : TKC_BFLOAT16;
      tkc_tensor *xt = tkc_cast(tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){2, 4}, x), dt);
      tkc_tensor *loss = tkc_sum(tkc_max(xt, 1, AX1, 0), 0, NULL, 0), *g = NULL;
      assert_int_equal(tkc_gradient(loss, 1, &xt, &g), TKC_OK);
      float got[8];
      read_f32(tkc_cast(g, TKC_FLOAT32), got, 8);
      static const float want[] = {0, 0.5f, 0.5f, 0, 1.0f / 3, 1.0f / 3, 1.0f / 3, 0};
      for (int i = 0; i < 8; i++) assert_true(fabsf(got[i] - want[i]) < (h ? 4e-3f : 1e-6f));
    }
    tkc_ctx_free(ctx);
  }
}

/* a cast through float16 / bfloat16 passes the gradient through, cast back to the source dtype */
static void test_cast_through_halves(void **state) {
  (void)state;
  static const float x[] = {0.5f, -1.25f, 2.0f};
  for (size_t d = 0; d < 4; d++) {
    tkc_ctx *ctx = ctx_on(DEVICES[d]);
    if (!ctx) continue;
    for (int h = 0; h < 2; h++) {
      tkc_tensor *xt = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){3}, x), *g = NULL;
      tkc_tensor *y = tkc_cast(tkc_mul(tkc_cast(xt, h ? TKC_BFLOAT16 : TKC_FLOAT16), tkc_scalar(ctx, h ? TKC_BFLOAT16 : TKC_FLOAT16, 3.0)), TKC_FLOAT32);
      tkc_tensor *loss = tkc_sum(tkc_mul(y, xt), 0, NULL, 0); /* d/dx = 3x (through the half) + y */
      assert_int_equal(tkc_gradient(loss, 1, &xt, &g), TKC_OK);
      assert_int_equal(tkc_dtype_of(g), TKC_FLOAT32);
      float got[3];
      read_f32(g, got, 3);
      for (int i = 0; i < 3; i++) assert_true(fabsf(got[i] - 6 * x[i]) < 1e-2f);
    }
    tkc_ctx_free(ctx);
  }
}

/* backward accumulates; zero_grad zeroes; detach stops; a leaf off the path gets none; backward
 * after the loss was realized gives the same */
static void test_backward_accumulates(void **state) {
  (void)state;
  static const float a[] = {1, 2, 3}, b[] = {-1, 0.5f, 4};
  for (size_t d = 0; d < 4; d++) {
    tkc_ctx *ctx = ctx_on(DEVICES[d]);
    if (!ctx) continue;
    tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){3}, a), *w = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){3}, b);
    tkc_tensor *off = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){3}, a);
    assert_int_equal(tkc_requires_grad(x, 1), TKC_OK);
    assert_int_equal(tkc_requires_grad(w, 1), TKC_OK);
    assert_int_equal(tkc_requires_grad(off, 1), TKC_OK);
    for (int round = 0; round < 2; round++) { /* loss = sum(x * w) + sum(detach(x) * x) */
      tkc_tensor *loss = tkc_add(tkc_sum(tkc_mul(x, w), 0, NULL, 0), tkc_sum(tkc_mul(tkc_detach(x), x), 0, NULL, 0));
      if (round == 1) assert_int_equal(tkc_realize(loss), TKC_OK); /* realized first: the recipe is kept */
      assert_int_equal(tkc_backward(loss), TKC_OK);
    }
    float gx[3], gw[3];
    read_f32(tkc_grad(x), gx, 3);
    read_f32(tkc_grad(w), gw, 3);
    for (int i = 0; i < 3; i++) {
      assert_true(fabsf(gx[i] - 2 * (b[i] + a[i])) < 1e-5f); /* twice: w + detach(x) */
      assert_true(fabsf(gw[i] - 2 * a[i]) < 1e-5f);
    }
    assert_null(tkc_grad(off)); /* not on the loss's path */
    assert_non_null(strstr(tkc_last_error(), "has no gradient"));
    assert_int_equal(tkc_zero_grad(x), TKC_OK);
    read_f32(tkc_grad(x), gx, 3); /* zeros (the buffer stays: captured steps add into it) */
    for (int i = 0; i < 3; i++) assert_true(gx[i] == 0);
    tkc_tensor *loss = tkc_sum(tkc_mul(x, x), 0, NULL, 0);
    assert_int_equal(tkc_backward(loss), TKC_OK);
    read_f32(tkc_grad(x), gx, 3);
    for (int i = 0; i < 3; i++) assert_true(fabsf(gx[i] - 2 * a[i]) < 1e-5f);
    /* tkc_gradient: zeros for a tensor y does not depend on, and nothing accumulated */
    tkc_tensor *wrt[2] = {w, off}, *g[2];
    assert_int_equal(tkc_gradient(tkc_sum(tkc_mul(x, w), 0, NULL, 0), 2, wrt, g), TKC_OK);
    float z[3];
    read_f32(g[1], z, 3);
    for (int i = 0; i < 3; i++) assert_true(z[i] == 0);
    read_f32(tkc_grad(x), gx, 3);
    for (int i = 0; i < 3; i++) assert_true(fabsf(gx[i] - 2 * a[i]) < 1e-5f);
    tkc_ctx_free(ctx);
  }
}

static void test_bad_inputs(void **state) {
  (void)state;
  tkc_ctx *ctx = tkc_ctx_new("INTERP"), *other = tkc_ctx_new("INTERP");
  static const int32_t iv[] = {1, 2};
  tkc_tensor *i = tkc_tensor_new(ctx, TKC_INT32, 1, (const int64_t[]){2}, iv);
  tkc_tensor *x = tkc_full(ctx, TKC_FLOAT32, 2, (const int64_t[]){2, 3}, 1.0), *g = NULL;
  tkc_tensor *y = tkc_full(other, TKC_FLOAT32, 1, (const int64_t[]){1}, 1.0);
  assert_int_equal(tkc_requires_grad(NULL, 1), TKC_EINVAL); /* (a NULL from a failed op keeps that op's error) */
  assert_int_equal(tkc_requires_grad(i, 1), TKC_EDTYPE);
  assert_non_null(strstr(tkc_last_error(), "int32 tensor of shape (2,)"));
  assert_int_equal(tkc_requires_grad(i, 0), TKC_OK);
  assert_int_not_equal(tkc_backward(NULL), TKC_OK);
  assert_int_equal(tkc_backward(x), TKC_ESHAPE); /* 6 elements */
  assert_non_null(strstr(tkc_last_error(), "float32 tensor of shape (2,3)"));
  assert_int_equal(tkc_backward(tkc_sum(i, 0, NULL, 0)), TKC_EDTYPE);
  assert_int_equal(tkc_backward(tkc_sum(x, 0, NULL, 0)), TKC_EINVAL); /* nothing requires a gradient */
  assert_null(tkc_grad(NULL));
  assert_int_equal(tkc_requires_grad_of(NULL), -1);
  assert_int_equal(tkc_has_grad(NULL), -1);
  assert_int_equal(tkc_requires_grad_of(x), 0);
  assert_int_equal(tkc_has_grad(x), 0);
  assert_null(tkc_grad(x));
  assert_non_null(strstr(tkc_last_error(), "does not require a gradient"));
  assert_int_not_equal(tkc_zero_grad(NULL), TKC_OK);
  assert_null(tkc_detach(NULL));
  tkc_tensor *s = tkc_sum(x, 0, NULL, 0);
  assert_int_not_equal(tkc_gradient(NULL, 1, &x, &g), TKC_OK);
  assert_int_equal(tkc_gradient(s, 0, &x, &g), TKC_EINVAL);
  assert_int_equal(tkc_gradient(s, 1, NULL, &g), TKC_EINVAL);
  assert_int_equal(tkc_gradient(s, 1, &x, NULL), TKC_EINVAL);
  assert_int_equal(tkc_gradient(s, 1, &i, &g), TKC_EDTYPE);
  assert_null(g);
  assert_int_equal(tkc_gradient(s, 1, &y, &g), TKC_EINVAL); /* another ctx */
  assert_int_equal(tkc_gradient(x, 1, &x, &g), TKC_ESHAPE);
  tkc_tensor *freed = tkc_full(ctx, TKC_FLOAT32, 1, (const int64_t[]){1}, 1.0);
  tkc_tensor_free(freed);
  assert_int_equal(tkc_gradient(s, 1, &freed, &g), TKC_EINVAL);
  /* a gather of a tensor that did not ask for gradients when it was built */
  static const int32_t two[] = {1, 0};
  static const float six[] = {1, 2, 3, 4, 5, 6};
  x = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){2, 3}, six);
  tkc_tensor *lazy_index = tkc_add(tkc_tensor_new(ctx, TKC_INT32, 1, (const int64_t[]){2}, two), tkc_scalar(ctx, TKC_INT32, 0));
  tkc_tensor *sel = tkc_index_select(x, 1, lazy_index); /* (a realized index: shrinks and a cat, differentiable) */
  assert_int_equal(tkc_gradient(tkc_sum(sel, 0, NULL, 0), 1, &x, &g), TKC_EUNSUPPORTED);
  assert_non_null(strstr(tkc_last_error(), "tkc_requires_grad"));
  tkc_ctx_free(ctx), tkc_ctx_free(other);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rules_against_finite_differences), cmocka_unit_test(test_max_ties), cmocka_unit_test(test_cast_through_halves),
      cmocka_unit_test(test_backward_accumulates), cmocka_unit_test(test_bad_inputs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
