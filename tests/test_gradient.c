/* Gradients (src/autograd/gradient.c, autograd.c): every rule and every differentiable composite of
 * tkc.h and tkc/ops_*.h (each with its float inputs, in the variants that take different paths)
 * against central finite differences of the same function in float64 on INTERP, on every device
 * (float32 on WEBGPU, which has no float64); max ties, casts through the half types, a blocked
 * cumsum, training dropout, accumulation, zero_grad, detach, a tensor used twice, a leaf off the
 * loss's path, backward after the loss was realized, and the bad inputs of every gradient function.
 * Not differentiable, so not here: the bool predicates (isnan ...), any / all, argmax / argmin,
 * one_hot's and sort's indices, the random initializers. */
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

/* ---------------------------------------------------------------- cases: y = f(x0, ..), loss = sum(y * w) */

typedef tkc_tensor *(*case_fn)(tkc_tensor *const *x);
#define MAXIN 5 /* inputs of a case (batch_norm's x, mean, var, weight, bias) */
typedef struct gcase {
  const char *name;
  case_fn f;
  int nin;
  int ndim[MAXIN];
  int64_t shape[MAXIN][4];
  double lo[MAXIN], hi[MAXIN]; /* inputs in [lo, hi], kept 0.05 away from 0 when the range spans it (kinks) */
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
/* conv2d's own rule with a stride: 6 rows pad 1 stride 2 leave a row no window reads (output_padding) */
static tkc_tensor *c_conv2d_strided(tkc_tensor *const *x) { return tkc_conv2d(x[0], x[1], NULL, 2, 1); }
/* rows of 7 or more: read as flat rows of the padded input; a strided 5x5 over 14 or more columns:
 * of stride 1 over the input's phases (composite.c) */
static tkc_tensor *c_conv2d_flat(tkc_tensor *const *x) { return tkc_conv2d(x[0], x[1], NULL, 1, 1); }
static tkc_tensor *c_conv2d_phases(tkc_tensor *const *x) { return tkc_conv2d(x[0], x[1], NULL, 2, 2); }
static tkc_tensor *c_conv2d_ex(tkc_tensor *const *x) {
  return tkc_conv2d_ex(x[0], x[1], NULL, (const int[]){2, 1}, (const int[]){1, 0, 0, 1}, (const int[]){1, 2}, 2);
}
static tkc_tensor *c_max_pool(tkc_tensor *const *x) { return tkc_max_pool2d(x[0], (const int[]){2, 2}, (const int[]){2, 1}, NULL, NULL, 0); }
static tkc_tensor *c_avg_pool(tkc_tensor *const *x) { return tkc_avg_pool2d(x[0], (const int[]){3, 2}, (const int[]){2, 2}, (const int[]){1, 1}, 1, 0); }
static tkc_tensor *c_cumsum(tkc_tensor *const *x) { return tkc_cumsum(x[0], 1); }
/* windows of more than 32 elements: the gradient by skewed views and a sum (gradient.c skew_sum) */
static tkc_tensor *c_max_pool_big(tkc_tensor *const *x) { return tkc_max_pool2d(x[0], (const int[]){6, 6}, (const int[]){2, 3}, NULL, NULL, 0); }
static tkc_tensor *c_avg_pool_big(tkc_tensor *const *x) { return tkc_avg_pool2d(x[0], (const int[]){7, 5}, (const int[]){1, 1}, NULL, 1, 0); }
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

/* int32 index tensors and float constants (of like's dtype: float64, or float32 on WEBGPU) a case builds */
static tkc_tensor *ints(int n, const int32_t *v) { return tkc_tensor_new(cur_ctx, TKC_INT32, 1, (const int64_t[]){n}, v); }
static tkc_tensor *ints2(int64_t r, int64_t c, const int32_t *v) { return tkc_tensor_new(cur_ctx, TKC_INT32, 2, (const int64_t[]){r, c}, v); }
static tkc_tensor *floats(tkc_tensor *like, int nd, const int64_t *shape, const float *v) {
  return tkc_cast(tkc_tensor_new(cur_ctx, TKC_FLOAT32, nd, shape, v), tkc_dtype_of(like));
}

/* ---- composites of ops_math.h */
static tkc_tensor *c_rsqrt(tkc_tensor *const *x) { return tkc_rsqrt(x[0]); }
static tkc_tensor *c_square(tkc_tensor *const *x) { return tkc_square(x[0]); }
/* piecewise constant: the gradient of rounded(x) * x is rounded(x) (no input lies within h of a jump) */
static tkc_tensor *c_floor(tkc_tensor *const *x) { return tkc_mul(tkc_floor(x[0]), x[0]); }
static tkc_tensor *c_ceil(tkc_tensor *const *x) { return tkc_mul(tkc_ceil(x[0]), x[0]); }
static tkc_tensor *c_round(tkc_tensor *const *x) { return tkc_mul(tkc_round(x[0]), x[0]); }
static tkc_tensor *c_trunc(tkc_tensor *const *x) { return tkc_mul(tkc_trunc(x[0]), x[0]); }
static tkc_tensor *c_sign(tkc_tensor *const *x) { return tkc_mul(tkc_sign(x[0]), tkc_square(x[0])); }
static tkc_tensor *c_erf(tkc_tensor *const *x) { return tkc_erf(x[0]); }
static tkc_tensor *c_gelu_erf(tkc_tensor *const *x) { return tkc_gelu(x[0], 0); }
static tkc_tensor *c_leaky_relu(tkc_tensor *const *x) { return tkc_leaky_relu(x[0], 0.1); }
static tkc_tensor *c_elu(tkc_tensor *const *x) { return tkc_elu(x[0], 0.7); }
static tkc_tensor *c_selu(tkc_tensor *const *x) { return tkc_selu(x[0]); }
static tkc_tensor *c_softplus(tkc_tensor *const *x) { return tkc_softplus(x[0], 1.0); }
static tkc_tensor *c_softplus_beta(tkc_tensor *const *x) { return tkc_softplus(x[0], 2.5); }
static tkc_tensor *c_hardsigmoid(tkc_tensor *const *x) { return tkc_hardsigmoid(x[0]); }
static tkc_tensor *c_hardswish(tkc_tensor *const *x) { return tkc_hardswish(x[0]); }
static tkc_tensor *c_mish(tkc_tensor *const *x) { return tkc_mish(x[0]); }
static tkc_tensor *c_tan(tkc_tensor *const *x) { return tkc_tan(x[0]); }
static tkc_tensor *c_asin(tkc_tensor *const *x) { return tkc_asin(x[0]); }
static tkc_tensor *c_acos(tkc_tensor *const *x) { return tkc_acos(x[0]); }
static tkc_tensor *c_atan(tkc_tensor *const *x) { return tkc_atan(x[0]); }
static tkc_tensor *c_atan2(tkc_tensor *const *x) { return tkc_atan2(x[0], x[1]); }
static tkc_tensor *c_sinh(tkc_tensor *const *x) { return tkc_sinh(x[0]); }
static tkc_tensor *c_cosh(tkc_tensor *const *x) { return tkc_cosh(x[0]); }
static tkc_tensor *c_log1p(tkc_tensor *const *x) { return tkc_log1p(x[0]); }
static tkc_tensor *c_expm1(tkc_tensor *const *x) { return tkc_expm1(x[0]); }
static tkc_tensor *c_lerp(tkc_tensor *const *x) { return tkc_lerp(x[0], x[1], x[2]); }
static tkc_tensor *c_prod1(tkc_tensor *const *x) { return tkc_prod(x[0], 1, AX1, 0); }
static tkc_tensor *c_prod_all(tkc_tensor *const *x) { return tkc_prod(x[0], 0, NULL, 1); }
static tkc_tensor *c_var(tkc_tensor *const *x) { return tkc_var(x[0], 1, AX1, 0, 1.0); }
static tkc_tensor *c_var02(tkc_tensor *const *x) { return tkc_var(x[0], 2, AX02, 1, 0.0); }
static tkc_tensor *c_std(tkc_tensor *const *x) { return tkc_std(x[0], 1, AX1, 1, 1.0); }
static tkc_tensor *c_logsumexp02(tkc_tensor *const *x) { return tkc_logsumexp(x[0], 2, AX02, 1); }
static tkc_tensor *c_sum_acc(tkc_tensor *const *x) { return tkc_square(tkc_sum_acc(x[0], 1, AX0, 0, tkc_dtype_of(x[0]))); }
static tkc_tensor *c_cummax(tkc_tensor *const *x) { return tkc_cummax(x[0], 1); }
static tkc_tensor *c_cumprod(tkc_tensor *const *x) { return tkc_cumprod(x[0], -1); }
static tkc_tensor *c_cumsum0(tkc_tensor *const *x) { return tkc_cumsum(x[0], 0); }

/* ---- composites of ops_nn.h */
static tkc_tensor *c_layer_norm_bias(tkc_tensor *const *x) { return tkc_layer_norm(x[0], 2, x[1], x[2], 1e-5); }
static tkc_tensor *c_rms_norm_plain(tkc_tensor *const *x) { return tkc_rms_norm(x[0], 2, NULL, 1e-6); }
static tkc_tensor *c_batch_norm(tkc_tensor *const *x) { return tkc_batch_norm(x[0], x[1], x[2], x[3], x[4], 1e-5); }
static tkc_tensor *c_batch_norm_plain(tkc_tensor *const *x) { return tkc_batch_norm(x[0], x[1], x[2], NULL, NULL, 1e-3); }
static tkc_tensor *c_conv1d(tkc_tensor *const *x) { return tkc_conv1d(x[0], x[1], x[2], 2, 1, 2, 2, 2); }
static tkc_tensor *c_conv1d_plain(tkc_tensor *const *x) { return tkc_conv1d(x[0], x[1], NULL, 1, 0, 0, 1, 1); }
static tkc_tensor *c_conv_transpose2d(tkc_tensor *const *x) {
  return tkc_conv_transpose2d(x[0], x[1], x[2], (const int[]){2, 1}, (const int[]){1, 0}, (const int[]){1, 0}, NULL, 1);
}
static tkc_tensor *c_conv_transpose2d_groups(tkc_tensor *const *x) {
  return tkc_conv_transpose2d(x[0], x[1], NULL, (const int[]){1, 2}, (const int[]){0, 1}, (const int[]){0, 1}, (const int[]){2, 1}, 2);
}
static tkc_tensor *c_max_pool_pad(tkc_tensor *const *x) {
  return tkc_max_pool2d(x[0], (const int[]){3, 2}, (const int[]){2, 2}, (const int[]){1, 1}, (const int[]){1, 2}, 1);
}
/* windows that do not overlap (kernel <= stride): laid out by a reshape, their gradient a view; an odd
 * size leaves rows no window reads, ceil mode a partial window */
static tkc_tensor *c_max_pool_tiles(tkc_tensor *const *x) { return tkc_max_pool2d(x[0], (const int[]){2, 2}, NULL, NULL, NULL, 0); }
static tkc_tensor *c_max_pool_gaps(tkc_tensor *const *x) { return tkc_max_pool2d(x[0], (const int[]){2, 1}, (const int[]){3, 2}, NULL, NULL, 1); }
static tkc_tensor *c_avg_pool_exclude(tkc_tensor *const *x) { return tkc_avg_pool2d(x[0], (const int[]){2, 3}, NULL, (const int[]){1, 1}, 0, 0); }
static tkc_tensor *c_nearest_up(tkc_tensor *const *x) { return tkc_interpolate(x[0], 5, 7, TKC_INTERP_NEAREST, 0); }
static tkc_tensor *c_nearest_down(tkc_tensor *const *x) { return tkc_interpolate(x[0], 2, 3, TKC_INTERP_NEAREST, 0); }
static tkc_tensor *c_bilinear(tkc_tensor *const *x) { return tkc_interpolate(x[0], 5, 4, TKC_INTERP_BILINEAR, 0); }
static tkc_tensor *c_bilinear_corners(tkc_tensor *const *x) { return tkc_interpolate(x[0], 4, 5, TKC_INTERP_BILINEAR, 1); }
static tkc_tensor *c_bilinear_down(tkc_tensor *const *x) { return tkc_interpolate(x[0], 2, 2, TKC_INTERP_BILINEAR, 0); }
static tkc_tensor *c_sdpa(tkc_tensor *const *x) { return tkc_scaled_dot_product_attention(x[0], x[1], x[2], NULL, 0, 0.0); }
static tkc_tensor *c_sdpa_causal(tkc_tensor *const *x) { return tkc_scaled_dot_product_attention(x[0], x[1], x[2], NULL, 1, 0.7); }
static tkc_tensor *c_sdpa_bool_mask(tkc_tensor *const *x) {
  static const uint8_t m[] = {1, 0, 1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 1, 0, 1}; /* (3, 5): every row attends somewhere */
  tkc_tensor *mask = tkc_tensor_new(cur_ctx, TKC_BOOL, 2, (const int64_t[]){3, 5}, m);
  return tkc_scaled_dot_product_attention(x[0], x[1], x[2], mask, 0, 0.0);
}
static tkc_tensor *c_sdpa_float_mask_causal(tkc_tensor *const *x) {
  static const float m[] = {0.5f, -1, 0.25f, 2, -0.5f, 1, -2, 0, 0.75f}; /* (3, 3), added; with causal */
  return tkc_scaled_dot_product_attention(x[0], x[1], x[2], floats(x[0], 2, (const int64_t[]){3, 3}, m), 1, 0.0);
}
static tkc_tensor *c_nll_none(tkc_tensor *const *x) { return tkc_nll_loss(x[0], ints(3, (const int32_t[]){1, 3, 1}), TKC_REDUCTION_NONE); }
static tkc_tensor *c_nll_sum(tkc_tensor *const *x) {
  return tkc_nll_loss(tkc_log_softmax(x[0], 1), ints(3, (const int32_t[]){0, 0, 2}), TKC_REDUCTION_SUM);
}
static tkc_tensor *c_cross_entropy_none(tkc_tensor *const *x) {
  return tkc_cross_entropy(x[0], ints(3, (const int32_t[]){3, 1, 0}), TKC_REDUCTION_NONE);
}
static tkc_tensor *c_cross_entropy_sum(tkc_tensor *const *x) {
  return tkc_cross_entropy(x[0], ints(3, (const int32_t[]){2, 2, 1}), TKC_REDUCTION_SUM);
}
static tkc_tensor *c_dropout_eval(tkc_tensor *const *x) { return tkc_mul(tkc_dropout(x[0], 0.5, 0), x[0]); }
static tkc_tensor *c_dropout_p0(tkc_tensor *const *x) { return tkc_mul(tkc_dropout(x[0], 0.0, 1), x[0]); }
/* a Linear layer: x @ w^T + b */
static tkc_tensor *c_linear(tkc_tensor *const *x) { return tkc_add(tkc_matmul(x[0], tkc_transpose(x[1], 0, 1)), x[2]); }
static tkc_tensor *c_matmul_batched(tkc_tensor *const *x) { return tkc_matmul(x[0], x[1]); }
static tkc_tensor *c_matmul_vector(tkc_tensor *const *x) { return tkc_matmul(x[0], x[1]); }

/* ---- composites of ops_shape.h */
static tkc_tensor *c_cat(tkc_tensor *const *x) { return tkc_cat(3, (tkc_tensor *const[]){x[0], x[1], x[0]}, 1); }
static tkc_tensor *c_stack(tkc_tensor *const *x) { return tkc_stack(3, (tkc_tensor *const[]){x[1], x[0], x[1]}, -1); }
static tkc_tensor *c_split(tkc_tensor *const *x) { /* pieces 1, 3, 2 of axis 1: p0 * p2[:, :1] + sum(p1) */
  tkc_tensor *p[3];
  if (tkc_split(x[0], 1, 3, (const int64_t[]){1, 3, 2}, p)) return NULL;
  tkc_tensor *q[2];
  if (tkc_split(p[2], 1, 2, (const int64_t[]){1, 1}, q)) return NULL;
  return tkc_add(tkc_mul(p[0], q[0]), tkc_sum(tkc_exp(p[1]), 1, AX1, 1));
}
static tkc_tensor *c_chunk(tkc_tensor *const *x) { /* 5 rows in 3 chunks: 2, 2, 1 */
  tkc_tensor *p[3];
  if (tkc_chunk(x[0], 0, 3, p) != 3) return NULL;
  return tkc_add(tkc_mul(p[0], p[1]), p[2]);
}
static tkc_tensor *c_squeeze(tkc_tensor *const *x) {
  return tkc_mul(tkc_unsqueeze(tkc_squeeze(x[0], 0, NULL), 0), tkc_squeeze(x[0], 1, (const int[]){2}));
}
static tkc_tensor *c_repeat(tkc_tensor *const *x) {
  static const int64_t reps[] = {2, 1, 3}; /* (2, 3) -> (2, 2, 9): a new leading axis */
  return tkc_mul(tkc_repeat(x[0], 3, reps), tkc_repeat(x[0], 3, reps));
}
static tkc_tensor *c_flatten(tkc_tensor *const *x) { return tkc_mul(tkc_flatten(x[0], 1, 2), tkc_flatten(x[1], 0, 1)); }
static tkc_tensor *c_tril(tkc_tensor *const *x) { return tkc_mul(tkc_tril(x[0], 0), tkc_triu(x[0], -1)); }
static tkc_tensor *c_triu(tkc_tensor *const *x) { return tkc_exp(tkc_triu(x[0], 1)); }
static tkc_tensor *c_transpose(tkc_tensor *const *x) { return tkc_mul(tkc_transpose(x[0], 0, 2), x[1]); }
static tkc_tensor *c_gather(tkc_tensor *const *x) {
  static const int32_t idx[] = {2, 0, 0, 3, 1, 1, 1, 2, 3}; /* (3, 3) along axis 1 of a (3, 4): repeats */
  tkc_requires_grad(x[0], 1);
  return tkc_gather(x[0], 1, ints2(3, 3, idx));
}
static tkc_tensor *c_gather0(tkc_tensor *const *x) {
  static const int32_t idx[] = {1, -1, 0, 0}; /* (2, 2) along axis 0 of a (3, 2) (a negative index) */
  tkc_requires_grad(x[0], 1);
  return tkc_gather(x[0], 0, ints2(2, 2, idx));
}
static tkc_tensor *c_embedding(tkc_tensor *const *x) { /* a (5, 3) table looked up by (2, 3) token ids */
  static const int32_t ids[] = {4, 0, 4, 2, 1, 4};
  tkc_requires_grad(x[0], 1);
  return tkc_index_select(x[0], 0, ints2(2, 3, ids));
}
static const int32_t SCATTER_IDX[] = {1, 0, 1, 2, 2, 2}; /* (2, 3) into axis 0 of a (3, 4): duplicates */
static tkc_tensor *c_scatter(tkc_tensor *const *x) {
  tkc_requires_grad(x[0], 1), tkc_requires_grad(x[1], 1);
  return tkc_scatter(x[0], 0, ints2(2, 3, SCATTER_IDX), x[1]);
}
static tkc_tensor *c_scatter_add(tkc_tensor *const *x) {
  tkc_requires_grad(x[0], 1), tkc_requires_grad(x[1], 1);
  return tkc_scatter_add(x[0], 0, ints2(2, 3, SCATTER_IDX), x[1]);
}
static tkc_tensor *c_one_hot_matmul(tkc_tensor *const *x) {
  tkc_tensor *oh = tkc_cast(tkc_one_hot(ints(4, (const int32_t[]){2, 0, 3, 2}), 4), tkc_dtype_of(x[0]));
  return tkc_matmul(oh, x[0]);
}
static tkc_tensor *c_sort(tkc_tensor *const *x) {
  tkc_tensor *v = NULL;
  tkc_requires_grad(x[0], 1);
  if (tkc_sort(x[0], 1, 0, &v, NULL)) return NULL;
  return v;
}
static tkc_tensor *c_sort_desc(tkc_tensor *const *x) {
  tkc_tensor *v = NULL;
  tkc_requires_grad(x[0], 1);
  if (tkc_sort(x[0], 0, 1, &v, NULL)) return NULL;
  return v;
}
static tkc_tensor *c_topk(tkc_tensor *const *x) {
  tkc_tensor *v = NULL;
  tkc_requires_grad(x[0], 1);
  if (tkc_topk(x[0], 2, 1, 1, &v, NULL)) return NULL;
  return v;
}

/* ---- other paths: a negative base, an infinite bound, statistics computed from x, derived norms, edges */
static tkc_tensor *c_pow_int(tkc_tensor *const *x) { return tkc_pow(x[0], tkc_scalar(cur_ctx, tkc_dtype_of(x[0]), 3.0)); }
static tkc_tensor *c_clamp_inf(tkc_tensor *const *x) { return tkc_clamp(x[0], -INFINITY, 0.25); }
static tkc_tensor *c_std_all(tkc_tensor *const *x) { return tkc_std(x[0], 0, NULL, 0, 0.0); }
static tkc_tensor *c_batch_norm_train(tkc_tensor *const *x) { /* batch statistics: x reaches the output three ways */
  static const int axes[] = {0, 2};
  return tkc_batch_norm(x[0], tkc_mean(x[0], 2, axes, 0), tkc_var(x[0], 2, axes, 0, 0.0), x[1], NULL, 1e-5);
}
static tkc_tensor *c_group_norm(tkc_tensor *const *x) { /* (N, C, L) = (2, 4, 3) in 2 groups: layer_norm of (2, 2, 6) */
  return tkc_reshape(tkc_layer_norm(tkc_reshape(x[0], 3, (const int64_t[]){2, 2, 6}), 1, NULL, NULL, 1e-5), 3, (const int64_t[]){2, 4, 3});
}
static tkc_tensor *c_bilinear_one(tkc_tensor *const *x) { return tkc_interpolate(x[0], 1, 3, TKC_INTERP_BILINEAR, 1); }
static tkc_tensor *c_sdpa_mask_input(tkc_tensor *const *x) { /* the float mask is differentiable too */
  return tkc_scaled_dot_product_attention(x[0], x[0], x[0], x[1], 0, 0.0);
}
static tkc_tensor *c_scatter_axis1(tkc_tensor *const *x) {
  static const int32_t idx[] = {3, 0, 3, 1}; /* (2, 2) into axis 1 of a (2, 4) */
  tkc_requires_grad(x[0], 1), tkc_requires_grad(x[1], 1);
  return tkc_scatter(x[0], 1, ints2(2, 2, idx), x[1]);
}
static tkc_tensor *c_softmax0(tkc_tensor *const *x) { return tkc_softmax(x[0], -3); }

static tkc_tensor *c_scatter_add_corner(tkc_tensor *const *x) { /* only src's index-shaped (2, 3) corner is read */
  tkc_requires_grad(x[0], 1), tkc_requires_grad(x[1], 1);
  return tkc_scatter_add(x[0], 0, ints2(2, 3, SCATTER_IDX), x[1]);
}
static tkc_tensor *c_bilinear_one_axis(tkc_tensor *const *x) { return tkc_interpolate(x[0], 3, 5, TKC_INTERP_BILINEAR, 0); }
static tkc_tensor *c_avg_pool_ceil_exclude(tkc_tensor *const *x) {
  return tkc_avg_pool2d(x[0], (const int[]){2, 2}, (const int[]){2, 2}, (const int[]){1, 1}, 1, 0);
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
    {"conv2d (stride 2, padded, a row unread)", c_conv2d_strided, 2, {4, 4}, {{2, 2, 6, 5}, {3, 2, 3, 3}}, {-1, -1}, {1, 1}},
    {"conv2d (flat rows)", c_conv2d_flat, 2, {4, 4}, {{1, 2, 3, 8}, {3, 2, 3, 3}}, {-1, -1}, {1, 1}},
    {"conv2d (stride 2 as phases)", c_conv2d_phases, 2, {4, 4}, {{1, 1, 5, 28}, {2, 1, 5, 5}}, {-1, -1}, {1, 1}},
    {"conv2d_ex (stride, dilation, groups)", c_conv2d_ex, 2, {4, 4}, {{1, 4, 5, 6}, {2, 2, 2, 2}}, {-1, -1}, {1, 1}},
    {"max_pool2d (stride 2x1)", c_max_pool, 1, {4}, {{1, 2, 4, 5}}, {-1}, {1}},
    {"avg_pool2d (padded, ceil)", c_avg_pool, 1, {4}, {{1, 1, 5, 4}}, {-1}, {1}},
    {"cumsum", c_cumsum, 1, {2}, {{2, 5}}, {-1}, {1}},
    {"cumsum (a 40-element window)", c_cumsum, 1, {2}, {{2, 40}}, {-1}, {1}},
    {"max_pool2d (2x2 tiles, a row and a column unread)", c_max_pool_tiles, 1, {4}, {{2, 3, 5, 7}}, {-1}, {1}},
    {"max_pool2d (2x1 windows, stride 3x2, ceil)", c_max_pool_gaps, 1, {4}, {{1, 2, 7, 5}}, {-1}, {1}},
    {"max_pool2d (6x6 windows, stride 2x3)", c_max_pool_big, 1, {4}, {{1, 2, 11, 13}}, {-1}, {1}},
    {"avg_pool2d (7x5 windows)", c_avg_pool_big, 1, {4}, {{1, 1, 9, 8}}, {-1}, {1}},
    {"cross_entropy", c_cross_entropy, 1, {2}, {{3, 4}}, {-2}, {2}},
    {"index_select (an index used twice)", c_index_select, 1, {2}, {{2, 3}}, {-1}, {1}},
    /* composites of ops_math.h */
    {"rsqrt", c_rsqrt, 1, {2}, {{2, 3}}, {0.5}, {2}},
    {"square", c_square, 1, {2}, {{2, 3}}, {-1}, {1}},
    {"floor (times x)", c_floor, 1, {2}, {{2, 3}}, {-2}, {2}},
    {"ceil (times x)", c_ceil, 1, {2}, {{2, 3}}, {-2}, {2}},
    {"round (times x)", c_round, 1, {2}, {{2, 3}}, {-2}, {2}},
    {"trunc (times x)", c_trunc, 1, {2}, {{2, 3}}, {-2}, {2}},
    {"sign (times x^2)", c_sign, 1, {2}, {{2, 3}}, {-1}, {1}},
    {"erf (both branches: |x| < 1 and beyond)", c_erf, 1, {2}, {{3, 4}}, {-2.5}, {2.5}},
    {"gelu (erf, also x < -sqrt 2)", c_gelu_erf, 1, {2}, {{3, 4}}, {-3}, {3}},
    {"leaky_relu", c_leaky_relu, 1, {2}, {{2, 3}}, {-1}, {1}},
    {"elu", c_elu, 1, {2}, {{2, 3}}, {-1}, {1}},
    {"selu", c_selu, 1, {2}, {{2, 3}}, {-1}, {1}},
    {"softplus", c_softplus, 1, {2}, {{2, 3}}, {-2}, {2}},
    {"softplus (beta 2.5)", c_softplus_beta, 1, {2}, {{2, 3}}, {-2}, {2}},
    /* [-4, 6] puts inputs on both flat parts and the ramp (none within h of the kinks at -3 and 3) */
    {"hardsigmoid", c_hardsigmoid, 1, {2}, {{3, 4}}, {-4}, {6}},
    {"hardswish", c_hardswish, 1, {2}, {{3, 4}}, {-4}, {6}},
    {"mish", c_mish, 1, {2}, {{2, 3}}, {-2}, {2}},
    {"tan", c_tan, 1, {2}, {{2, 3}}, {-1.2}, {1.2}},
    {"asin", c_asin, 1, {2}, {{2, 3}}, {-0.9}, {0.9}},
    {"acos", c_acos, 1, {2}, {{2, 3}}, {-0.9}, {0.9}},
    {"atan (|x| above and below 1)", c_atan, 1, {2}, {{3, 4}}, {-3}, {3}},
    /* y kept away from 0: the branch cut along x < 0 */
    {"atan2 (all four quadrants)", c_atan2, 2, {2, 2}, {{3, 4}, {3, 4}}, {-1, -1}, {1, 1}},
    {"sinh (|x| above and below 1)", c_sinh, 1, {2}, {{2, 3}}, {-2}, {2}},
    {"cosh", c_cosh, 1, {2}, {{2, 3}}, {-2}, {2}},
    {"log1p", c_log1p, 1, {2}, {{2, 3}}, {-0.5}, {2}},
    {"expm1", c_expm1, 1, {2}, {{2, 3}}, {-1}, {1}},
    {"lerp (w broadcast, both branches)", c_lerp, 3, {2, 2, 1}, {{2, 3}, {2, 3}, {3}}, {-1, -1, 0.3}, {1, 1, 1}}, /* w .59 .51 .37 */
    {"prod axis 1", c_prod1, 1, {2}, {{2, 4}}, {-2}, {2}},
    {"prod all keepdim", c_prod_all, 1, {2}, {{2, 3}}, {-2}, {2}},
    {"var axis 1 (correction 1)", c_var, 1, {2}, {{2, 4}}, {-2}, {2}},
    {"var axes 0,2 keepdim (correction 0)", c_var02, 1, {3}, {{2, 3, 2}}, {-2}, {2}},
    {"std axis 1 keepdim", c_std, 1, {2}, {{3, 4}}, {-2}, {2}},
    {"logsumexp axes 0,2 keepdim", c_logsumexp02, 1, {3}, {{2, 3, 2}}, {-2}, {2}},
    {"sum_acc axis 0 (squared)", c_sum_acc, 1, {2}, {{3, 4}}, {-1}, {1}},
    {"cumsum axis 0", c_cumsum0, 1, {2}, {{4, 2}}, {-1}, {1}},
    {"cummax", c_cummax, 1, {2}, {{2, 5}}, {-1}, {1}},
    {"cummax (a 40-element window)", c_cummax, 1, {2}, {{2, 40}}, {-1}, {1}},
    {"cumprod", c_cumprod, 1, {2}, {{2, 5}}, {-1.5}, {1.5}},
    /* composites of ops_nn.h */
    {"layer_norm (2 axes, weight, bias)", c_layer_norm_bias, 3, {3, 2, 2}, {{2, 2, 3}, {2, 3}, {2, 3}}, {-2, 0.5, -1}, {2, 1.5, 1}},
    {"rms_norm (2 axes, no weight)", c_rms_norm_plain, 1, {3}, {{3, 2, 2}}, {-2}, {2}},
    {"batch_norm (x, mean, var, weight, bias)", c_batch_norm, 5, {4, 1, 1, 1, 1}, {{2, 3, 2, 2}, {3}, {3}, {3}, {3}},
     {-2, -1, 0.5, 0.5, -1}, {2, 1, 2, 1.5, 1}},
    {"batch_norm (no weight, no bias)", c_batch_norm_plain, 3, {3, 1, 1}, {{2, 3, 4}, {3}, {3}}, {-2, -1, 0.5}, {2, 1, 2}},
    {"conv1d (stride, pads, dilation, groups, bias)", c_conv1d, 3, {3, 3, 1}, {{1, 4, 6}, {2, 2, 3}, {2}}, {-1, -1, -1}, {1, 1, 1}},
    {"conv1d (plain)", c_conv1d_plain, 2, {3, 3}, {{1, 2, 5}, {3, 2, 2}}, {-1, -1}, {1, 1}},
    {"conv_transpose2d (stride, pad, output_padding, bias)", c_conv_transpose2d, 3, {4, 4, 1}, {{1, 2, 3, 3}, {2, 3, 2, 2}, {3}},
     {-1, -1, -1}, {1, 1, 1}},
    {"conv_transpose2d (dilation, groups)", c_conv_transpose2d_groups, 2, {4, 4}, {{1, 4, 2, 3}, {4, 1, 2, 2}}, {-1, -1}, {1, 1}},
    {"max_pool2d (pad, dilation, ceil)", c_max_pool_pad, 1, {4}, {{1, 1, 5, 6}}, {-1}, {1}},
    {"avg_pool2d (padding not counted)", c_avg_pool_exclude, 1, {4}, {{1, 2, 4, 5}}, {-1}, {1}},
    {"interpolate nearest (up)", c_nearest_up, 1, {4}, {{1, 2, 3, 4}}, {-1}, {1}},
    {"interpolate nearest (down)", c_nearest_down, 1, {4}, {{1, 1, 5, 7}}, {-1}, {1}},
    {"interpolate bilinear", c_bilinear, 1, {4}, {{1, 2, 3, 3}}, {-1}, {1}},
    {"interpolate bilinear (align_corners)", c_bilinear_corners, 1, {4}, {{1, 1, 3, 3}}, {-1}, {1}},
    {"interpolate bilinear (down)", c_bilinear_down, 1, {4}, {{1, 1, 4, 5}}, {-1}, {1}},
    {"attention (batch broadcast)", c_sdpa, 3, {3, 3, 3}, {{2, 3, 2}, {1, 5, 2}, {1, 5, 2}}, {-1, -1, -1}, {1, 1, 1}},
    {"attention (causal, scale)", c_sdpa_causal, 3, {3, 3, 3}, {{2, 3, 2}, {2, 5, 2}, {2, 5, 2}}, {-1, -1, -1}, {1, 1, 1}},
    {"attention (bool mask)", c_sdpa_bool_mask, 3, {3, 3, 3}, {{2, 3, 2}, {2, 5, 2}, {2, 5, 2}}, {-1, -1, -1}, {1, 1, 1}},
    {"attention (float mask and causal)", c_sdpa_float_mask_causal, 3, {3, 3, 3}, {{2, 3, 2}, {2, 3, 2}, {2, 3, 2}}, {-1, -1, -1}, {1, 1, 1}},
    {"nll_loss (none)", c_nll_none, 1, {2}, {{3, 4}}, {-2}, {2}},
    {"nll_loss of log_softmax (sum)", c_nll_sum, 1, {2}, {{3, 4}}, {-2}, {2}},
    {"cross_entropy (none)", c_cross_entropy_none, 1, {2}, {{3, 4}}, {-2}, {2}},
    {"cross_entropy (sum)", c_cross_entropy_sum, 1, {2}, {{3, 4}}, {-2}, {2}},
    {"dropout (eval: identity)", c_dropout_eval, 1, {2}, {{2, 3}}, {-1}, {1}},
    {"dropout (p 0)", c_dropout_p0, 1, {2}, {{2, 3}}, {-1}, {1}},
    {"linear (x @ w^T + b)", c_linear, 3, {2, 2, 1}, {{2, 3}, {4, 3}, {4}}, {-1, -1, -1}, {1, 1, 1}},
    {"matmul (batched, broadcast)", c_matmul_batched, 2, {3, 2}, {{2, 2, 3}, {3, 2}}, {-1, -1}, {1, 1}},
    {"matmul (vector @ matrix)", c_matmul_vector, 2, {1, 2}, {{3}, {3, 4}}, {-1, -1}, {1, 1}},
    /* composites of ops_shape.h */
    {"cat", c_cat, 2, {2, 2}, {{2, 3}, {2, 2}}, {-1, -1}, {1, 1}},
    {"stack", c_stack, 2, {2, 2}, {{2, 3}, {2, 3}}, {-1, -1}, {1, 1}},
    {"split", c_split, 1, {2}, {{2, 6}}, {-1}, {1}},
    {"chunk", c_chunk, 1, {2}, {{5, 2}}, {-1}, {1}},
    {"squeeze, unsqueeze", c_squeeze, 1, {3}, {{2, 3, 1}}, {-1}, {1}},
    {"repeat", c_repeat, 1, {2}, {{2, 3}}, {-1}, {1}},
    {"flatten", c_flatten, 2, {3, 3}, {{2, 3, 2}, {1, 2, 6}}, {-1, -1}, {1, 1}},
    {"tril, triu", c_tril, 1, {2}, {{3, 4}}, {-1}, {1}},
    {"triu (k 1)", c_triu, 1, {2}, {{3, 4}}, {-1}, {1}},
    {"transpose", c_transpose, 2, {3, 3}, {{2, 3, 4}, {4, 3, 2}}, {-1, -1}, {1, 1}},
    {"gather axis 1 (repeated indices)", c_gather, 1, {2}, {{3, 4}}, {-1}, {1}},
    {"gather axis 0 (a negative index)", c_gather0, 1, {2}, {{3, 2}}, {-1}, {1}},
    {"index_select as an embedding (2-D ids)", c_embedding, 1, {2}, {{5, 3}}, {-1}, {1}},
    {"scatter (a and src, duplicates)", c_scatter, 2, {2, 2}, {{3, 4}, {2, 3}}, {-1, -1}, {1, 1}},
    {"scatter_add (a and src, duplicates)", c_scatter_add, 2, {2, 2}, {{3, 4}, {2, 3}}, {-1, -1}, {1, 1}},
    {"one_hot @ matrix", c_one_hot_matmul, 1, {2}, {{4, 3}}, {-1}, {1}},
    {"sort (values)", c_sort, 1, {2}, {{3, 4}}, {-1}, {1}},
    {"sort descending axis 0 (values)", c_sort_desc, 1, {2}, {{3, 4}}, {-1}, {1}},
    {"topk (values)", c_topk, 1, {2}, {{3, 5}}, {-1}, {1}},
    {"pow (negative base, exponent 3)", c_pow_int, 1, {2}, {{2, 3}}, {-2}, {2}},
    {"clamp (-inf, 0.25)", c_clamp_inf, 1, {2}, {{2, 3}}, {-1}, {1}},
    {"prod of 20 (two levels of the tree)", c_prod1, 1, {2}, {{2, 20}}, {0.7}, {1.4}},
    {"cumprod of 10 (two kernels)", c_cumprod, 1, {2}, {{2, 10}}, {0.7}, {1.4}},
    {"cummax of 10", c_cummax, 1, {2}, {{1, 10}}, {-1}, {1}},
    {"std all (correction 0)", c_std_all, 1, {2}, {{2, 3}}, {-2}, {2}},
    {"batch_norm (training form: batch mean and var of x)", c_batch_norm_train, 2, {3, 1}, {{3, 2, 2}, {2}}, {-2, 0.5}, {2, 1.5}},
    {"group norm (layer_norm of a reshape)", c_group_norm, 1, {3}, {{2, 4, 3}}, {-2}, {2}},
    {"interpolate bilinear (align_corners, out 1)", c_bilinear_one, 1, {4}, {{1, 1, 3, 2}}, {-1}, {1}},
    {"attention (self, float mask as an input)", c_sdpa_mask_input, 2, {3, 2}, {{2, 3, 2}, {3, 3}}, {-1, -1}, {1, 1}},
    {"scatter axis 1", c_scatter_axis1, 2, {2, 2}, {{2, 4}, {2, 2}}, {-1, -1}, {1, 1}},
    {"softmax (axis -3)", c_softmax0, 1, {3}, {{3, 2, 2}}, {-2}, {2}},
    {"scatter_add (src larger than the index)", c_scatter_add_corner, 2, {2, 2}, {{3, 4}, {3, 4}}, {-1, -1}, {1, 1}},
    {"interpolate bilinear (one axis kept)", c_bilinear_one_axis, 1, {4}, {{1, 1, 3, 3}}, {-1}, {1}},
    {"avg_pool2d (ceil, padding not counted)", c_avg_pool_ceil_exclude, 1, {4}, {{1, 1, 5, 5}}, {-1}, {1}},
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
  tkc_tensor *x[MAXIN] = {NULL};
  upload(ctx, c, v, TKC_FLOAT64, x);
  tkc_tensor *l = loss_of(ctx, c, x, TKC_FLOAT64);
  double out = NAN;
  if (!l || tkc_copy_out(l, &out, sizeof out)) printf("%s: %s\n", c->name, tkc_last_error());
  tkc_tensor_free(l);
  for (int k = 0; k < c->nin; k++) tkc_tensor_free(x[k]);
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
  double *v[MAXIN] = {NULL}, *fd[MAXIN] = {NULL};
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
    tkc_tensor *x[MAXIN] = {NULL}, *g[MAXIN] = {NULL};
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

/* a scan longer than 32 is cut in blocks of 16 (triangles) whose totals are scanned again: too many
 * elements for finite differences, so against closed forms: d sum(cumsum(x) * w) / dx[i] = sum of
 * w[j >= i]; d sum(cummax(x)^2) / dx[i] = sum of 2 max_j over the prefixes j whose maximum is x[i]
 * (distinct values). */
static void test_long_scans(void **state) {
  (void)state;
  enum { N = 600 };
  static float x[N], w[N], got[N];
  static double want[N], want_max[N];
  for (int i = 0; i < N; i++) x[i] = (float)sin(i * 1.7) + (float)i * 1e-3f, w[i] = 0.5f + (float)i / N;
  double acc = 0;
  for (int i = N - 1; i >= 0; i--) acc += w[i], want[i] = acc;
  for (int j = 0, at = 0; j < N; j++) {
    if (x[j] > x[at]) at = j;
    want_max[at] += 2.0 * x[at];
  }
  for (size_t d = 0; d < 4; d++) {
    tkc_ctx *ctx = ctx_on(DEVICES[d]);
    if (!ctx) continue;
    tkc_tensor *xt = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){N}, x), *wt = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){N}, w);
    tkc_tensor *g = NULL;
    assert_int_equal(tkc_gradient(tkc_sum(tkc_mul(tkc_cumsum(xt, 0), wt), 0, NULL, 0), 1, &xt, &g), TKC_OK);
    read_f32(g, got, N);
    for (int i = 0; i < N; i++) assert_true(fabs(got[i] - want[i]) <= 1e-5 * want[i]);
    tkc_tensor *m = tkc_cummax(xt, 0);
    assert_int_equal(tkc_gradient(tkc_sum(tkc_mul(m, m), 0, NULL, 0), 1, &xt, &g), TKC_OK);
    read_f32(g, got, N);
    for (int i = 0; i < N; i++) {
      if (!(fabs(got[i] - want_max[i]) <= 1e-4 * fmax(1, fabs(want_max[i])))) printf("%s: cummax grad[%d] %g, want %g\n", DEVICES[d], i, got[i], want_max[i]);
      assert_true(fabs(got[i] - want_max[i]) <= 1e-4 * fmax(1, fabs(want_max[i])));
    }
    tkc_ctx_free(ctx);
  }
}

/* training dropout draws a new mask at each call, so finite differences cannot see it: with y = dropout(x),
 * d sum(y * x) / dx = mask * x / (1 - p) + y = 2y exactly (kept: both are x / (1 - p); dropped: 0) */
static void test_dropout_training(void **state) {
  (void)state;
  enum { N = 32 };
  float x[N];
  for (int i = 0; i < N; i++) x[i] = 0.5f + 0.125f * (float)i;
  for (size_t d = 0; d < 4; d++) {
    tkc_ctx *ctx = ctx_on(DEVICES[d]);
    if (!ctx) continue;
    assert_int_equal(tkc_manual_seed(ctx, 7), TKC_OK);
    tkc_tensor *xt = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){N}, x), *g = NULL;
    tkc_tensor *y = tkc_dropout(xt, 0.25, 1);
    assert_non_null(y);
    assert_int_equal(tkc_gradient(tkc_sum(tkc_mul(y, xt), 0, NULL, 0), 1, &xt, &g), TKC_OK);
    float yv[N], gv[N];
    read_f32(y, yv, N);
    read_f32(g, gv, N);
    int dropped = 0;
    for (int i = 0; i < N; i++) {
      dropped += yv[i] == 0;
      assert_true(yv[i] == 0 || fabsf(yv[i] - x[i] / 0.75f) <= 1e-6f * yv[i]);
      assert_true(fabsf(gv[i] - 2 * yv[i]) <= 1e-6f * fmaxf(1.0f, yv[i]));
    }
    assert_true(dropped > 0 && dropped < N); /* (8 expected) */
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
      cmocka_unit_test(test_backward_accumulates), cmocka_unit_test(test_long_scans), cmocka_unit_test(test_dropout_training), cmocka_unit_test(test_bad_inputs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
