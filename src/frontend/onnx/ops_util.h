/* ops_util.h — helpers the op builders share (ops_util.c) and the builders the op table (ops.c) names. */
#ifndef TKC_ONNX_OPS_UTIL_H
#define TKC_ONNX_OPS_UTIL_H
#include "onnx_internal.h"
#include "tkc/ops_math.h"
#include "tkc/ops_nn.h"
#include "tkc/ops_shape.h"

/* input i's tensor, NULL when absent */
static inline tkc_tensor *onnx_in(const onnx_node *n, int i) { return i < n->nin && n->in[i] ? n->in[i]->t : NULL; }
static inline int onnx_has(const onnx_node *n, int i) { return i < n->nin && n->in[i] != NULL; }
/* sets output k (ignored past the node's outputs); a NULL t is the tensor op's error, named for the node */
tkc_status onnx_set(onnx_node *n, int k, tkc_tensor *t);
/* output 0: t, a view of input 0 (reshape, squeeze, ...: its values in the same order), keeping
 * input 0's host values */
tkc_status onnx_set_view(onnx_node *n, tkc_tensor *t);
/* input i's values as int64 (host values when known, else read back from the device); NULL + error */
const int64_t *onnx_ints(onnx_node *n, int i, int64_t *count);
/* input i's values as doubles (read back); NULL + error. Caller frees. */
double *onnx_doubles(onnx_node *n, int i, int64_t *count);
/* a requires at least nin inputs */
tkc_status onnx_need(onnx_node *n, int nin);
/* axis in [-ndim, ndim) -> [0, ndim); -1 when out of range */
static inline int onnx_axis(int64_t a, int ndim) { return a < -ndim || a >= ndim ? -1 : (int)(a < 0 ? a + ndim : a); }
/* (De)QuantizeLinear: a 1-D scale (and zero point) of x's "axis" attribute reshaped to broadcast
 * along that axis of an nd-dim x, a blocked one (block_size) repeated to x's shape; scalars stay */
tkc_status onnx_per_axis(onnx_node *n, int nd, tkc_tensor **scale, tkc_tensor **zero_point);
/* the output's host ints (takes ownership of vals) */
void onnx_set_host(onnx_node *n, int k, int64_t *vals);
static inline int onnx_is_fp8(tkc_dtype dt) { return dt == TKC_FLOAT8_E4M3FN || dt == TKC_FLOAT8_E5M2; }
static inline int onnx_is_float(tkc_dtype dt) {
  return dt == TKC_FLOAT16 || dt == TKC_BFLOAT16 || dt == TKC_FLOAT32 || dt == TKC_FLOAT64 || onnx_is_fp8(dt);
}
/* x ready for a cast to dt: for a float8 dt under the node's "saturate" attribute (default 1: Cast,
 * CastLike, QuantizeLinear since opset 19), clamped to dt's largest finite value, so that overflow
 * and infinities saturate instead of becoming NaN (e4m3fn) or inf (e5m2); NaN stays NaN */
tkc_tensor *onnx_saturate_fp8(onnx_node *n, tkc_tensor *x, tkc_dtype dt);
static inline int onnx_is_int(tkc_dtype dt) { return dt != TKC_BOOL && !onnx_is_float(dt); }
static inline void onnx_shape_of(tkc_tensor *t, int *ndim, int64_t *shape) {
  *ndim = tkc_ndim(t);
  for (int d = 0; d < *ndim; d++) shape[d] = tkc_dim(t, d);
}
/* x's entries [a, b) along axis (the other axes whole) */
tkc_tensor *onnx_slice_axis(tkc_tensor *x, int axis, int64_t a, int64_t b);
/* a malloc'ed copy of count ints */
int64_t *onnx_dup_ints(const int64_t *v, int64_t count);
/* output k: a realized tensor of the given int values (dtype dt), with them as its host values (takes vals) */
tkc_status onnx_set_host_tensor(onnx_node *n, int k, tkc_dtype dt, int ndim, const int64_t *shape, int64_t *vals);
/* ops_nn.c builders */
tkc_status onnx_build_conv(onnx_node *n);
tkc_status onnx_build_conv_transpose(onnx_node *n);
tkc_status onnx_build_max_pool(onnx_node *n);
tkc_status onnx_build_avg_pool(onnx_node *n);
tkc_status onnx_build_global_avg_pool(onnx_node *n);
tkc_status onnx_build_global_max_pool(onnx_node *n);
tkc_status onnx_build_batch_norm(onnx_node *n);
tkc_status onnx_build_layer_norm(onnx_node *n);
tkc_status onnx_build_instance_norm(onnx_node *n);
tkc_status onnx_build_gemm(onnx_node *n);
tkc_status onnx_build_rms_norm(onnx_node *n);
tkc_status onnx_build_mvn(onnx_node *n);
tkc_status onnx_build_group_norm(onnx_node *n);
tkc_status onnx_build_lp_norm(onnx_node *n);
tkc_status onnx_build_lrn(onnx_node *n);
tkc_status onnx_build_dequantize(onnx_node *n);
tkc_status onnx_build_eye_like(onnx_node *n);
tkc_status onnx_build_nll_loss(onnx_node *n);
tkc_status onnx_build_attention(onnx_node *n);
tkc_status onnx_build_rotary(onnx_node *n);
tkc_status onnx_build_lp_pool(onnx_node *n);
tkc_status onnx_build_matmul_integer(onnx_node *n);
tkc_status onnx_build_qlinear_matmul(onnx_node *n);
tkc_status onnx_build_conv_integer(onnx_node *n);
tkc_status onnx_build_qlinear_conv(onnx_node *n);
tkc_status onnx_build_nms(onnx_node *n); /* nms.c */
tkc_status onnx_build_dft(onnx_node *n); /* dft.c */
/* dft.c: the (rows x cols) matrix m[t][k] = sign * (sin or cos)(2 pi k t / n) * w_k (w NULL: 1), in dt */
tkc_tensor *onnx_trig_matrix(tkc_ctx *c, tkc_dtype dt, int64_t rows, int64_t cols, int64_t n, int use_sin, double sign, const double *w);
tkc_status onnx_build_causal_conv(onnx_node *n);
tkc_status onnx_build_linear_attention(onnx_node *n);
tkc_status onnx_build_if(onnx_node *n);   /* control.c */
tkc_status onnx_build_scan(onnx_node *n); /* control.c */
tkc_status onnx_build_loop(onnx_node *n); /* control.c */
tkc_status onnx_build_unique(onnx_node *n);           /* host_ops.c */
tkc_status onnx_build_reverse_sequence(onnx_node *n); /* host_ops.c */
tkc_status onnx_build_affine_grid(onnx_node *n);      /* host_ops.c */
tkc_status onnx_build_grid_sample(onnx_node *n);      /* grid_sample.c */
tkc_status onnx_build_resize(onnx_node *n); /* resize.c: Resize and Upsample */
tkc_status onnx_build_einsum(onnx_node *n);    /* einsum.c */
tkc_status onnx_build_gather_nd(onnx_node *n); /* ops_scatter.c */
tkc_status onnx_build_scatter_nd(onnx_node *n); /* ops_scatter.c */
tkc_status onnx_build_scatter_elements(onnx_node *n); /* ops_scatter.c: ScatterElements and Scatter */
tkc_status onnx_build_tensor_scatter(onnx_node *n); /* ops_scatter.c */
tkc_status onnx_build_softmax_ce_loss(onnx_node *n);
tkc_status onnx_build_rnn(onnx_node *n);  /* ops_rnn.c */
tkc_status onnx_build_gru(onnx_node *n);  /* ops_rnn.c */
tkc_status onnx_build_lstm(onnx_node *n); /* ops_rnn.c */
/* ops_windows.c: MaxPool with its Indices output (values and indices; pads at the beginning / end) */
tkc_status onnx_max_pool_indices(onnx_node *n, tkc_tensor *x, int nsp, const int *k, const int *st, const int *pb, const int *pe, const int *dil, int ceil_mode);
/* ops_windows.c: the sums over each window of x padded with zeros (NULL + error) */
tkc_tensor *onnx_window_sum(onnx_node *n, tkc_tensor *x, int nsp, const int *k, const int *st, const int *pb, const int *pe, const int *dil, int ceil_mode);
/* ops_windows.c: ConvTranspose without pads (the full output), NULL + error */
tkc_tensor *onnx_conv_transpose_full(onnx_node *n, tkc_tensor *x, tkc_tensor *w, int nsp, const int *st, const int *dil, int group);
tkc_status onnx_build_max_unpool(onnx_node *n); /* ops_windows.c */
tkc_status onnx_build_col2im(onnx_node *n);     /* ops_windows.c */
tkc_status onnx_build_det(onnx_node *n);   /* ops_det.c */
tkc_status onnx_build_tfidf(onnx_node *n); /* ops_tfidf.c */
tkc_status onnx_build_stft(onnx_node *n);        /* ops_signal.c */
tkc_status onnx_build_mel_weights(onnx_node *n); /* ops_signal.c */
tkc_status onnx_build_roi_align(onnx_node *n);   /* ops_roi_align.c */
tkc_status onnx_build_deform_conv(onnx_node *n); /* ops_deform_conv.c */
/* the builders of ops_*.c, by file */
tkc_status onnx_tensor_optional_has_element(onnx_node *n); /* ops_tensor.c */
/* ops_elementwise.c */
tkc_status onnx_binary_add(onnx_node *n);
tkc_status onnx_binary_sub(onnx_node *n);
tkc_status onnx_binary_mul(onnx_node *n);
tkc_status onnx_binary_div(onnx_node *n);
tkc_status onnx_binary_pow(onnx_node *n);
tkc_status onnx_binary_mod(onnx_node *n);
tkc_status onnx_binary_eq(onnx_node *n);
tkc_status onnx_binary_lt(onnx_node *n);
tkc_status onnx_binary_le(onnx_node *n);
tkc_status onnx_binary_gt(onnx_node *n);
tkc_status onnx_binary_ge(onnx_node *n);
tkc_status onnx_binary_and(onnx_node *n);
tkc_status onnx_binary_or(onnx_node *n);
tkc_status onnx_binary_xor(onnx_node *n);
tkc_status onnx_binary_bitshift(onnx_node *n);
tkc_status onnx_binary_prelu(onnx_node *n);
tkc_status onnx_variadic_max(onnx_node *n);
tkc_status onnx_variadic_min(onnx_node *n);
tkc_status onnx_variadic_sum(onnx_node *n);
tkc_status onnx_variadic_mean(onnx_node *n);
tkc_status onnx_unary_asinh(onnx_node *n);
tkc_status onnx_unary_acosh(onnx_node *n);
tkc_status onnx_unary_atanh(onnx_node *n);
tkc_status onnx_unary_not(onnx_node *n);
tkc_status onnx_unary_bitnot(onnx_node *n);
tkc_status onnx_unary_identity(onnx_node *n);
tkc_status onnx_unary_dropout(onnx_node *n);
tkc_status onnx_unary_isinf(onnx_node *n);
tkc_status onnx_unary_leaky_relu(onnx_node *n);
tkc_status onnx_unary_elu(onnx_node *n);
tkc_status onnx_unary_celu(onnx_node *n);
tkc_status onnx_unary_selu(onnx_node *n);
tkc_status onnx_unary_thresholded_relu(onnx_node *n);
tkc_status onnx_unary_hardsigmoid(onnx_node *n);
tkc_status onnx_unary_softplus(onnx_node *n);
tkc_status onnx_unary_softsign(onnx_node *n);
tkc_status onnx_unary_gelu(onnx_node *n);
tkc_status onnx_unary_shrink(onnx_node *n);
tkc_status onnx_binary_where(onnx_node *n);
tkc_status onnx_unary_clip(onnx_node *n);
tkc_status onnx_unary_swish(onnx_node *n);
tkc_status onnx_unary_neg(onnx_node *n);
tkc_status onnx_unary_abs(onnx_node *n);
tkc_status onnx_unary_sqrt(onnx_node *n);
tkc_status onnx_unary_exp(onnx_node *n);
tkc_status onnx_unary_log(onnx_node *n);
tkc_status onnx_unary_recip(onnx_node *n);
tkc_status onnx_unary_relu(onnx_node *n);
tkc_status onnx_unary_sigmoid(onnx_node *n);
tkc_status onnx_unary_tanh(onnx_node *n);
tkc_status onnx_unary_erf(onnx_node *n);
tkc_status onnx_unary_floor(onnx_node *n);
tkc_status onnx_unary_ceil(onnx_node *n);
tkc_status onnx_unary_round(onnx_node *n);
tkc_status onnx_unary_sign(onnx_node *n);
tkc_status onnx_unary_sin(onnx_node *n);
tkc_status onnx_unary_cos(onnx_node *n);
tkc_status onnx_unary_tan(onnx_node *n);
tkc_status onnx_unary_asin(onnx_node *n);
tkc_status onnx_unary_acos(onnx_node *n);
tkc_status onnx_unary_atan(onnx_node *n);
tkc_status onnx_unary_sinh(onnx_node *n);
tkc_status onnx_unary_cosh(onnx_node *n);
tkc_status onnx_unary_isnan(onnx_node *n);
tkc_status onnx_unary_hardswish(onnx_node *n);
tkc_status onnx_unary_mish(onnx_node *n);
/* ops_tensor.c */
tkc_status onnx_tensor_cast(onnx_node *n);
tkc_status onnx_tensor_cast_like(onnx_node *n);
tkc_status onnx_tensor_constant(onnx_node *n);
tkc_status onnx_tensor_constant_of_shape(onnx_node *n);
tkc_status onnx_tensor_shape(onnx_node *n);
tkc_status onnx_tensor_size(onnx_node *n);
tkc_status onnx_tensor_range(onnx_node *n);
tkc_status onnx_tensor_bitcast(onnx_node *n);
tkc_status onnx_window_hann(onnx_node *n);
tkc_status onnx_window_hamming(onnx_node *n);
tkc_status onnx_window_blackman(onnx_node *n);
/* ops_reduce.c */
tkc_status onnx_reduce_argmax(onnx_node *n);
tkc_status onnx_reduce_argmin(onnx_node *n);
tkc_status onnx_math_softmax(onnx_node *n);
tkc_status onnx_math_log_softmax(onnx_node *n);
tkc_status onnx_math_hardmax(onnx_node *n);
tkc_status onnx_math_matmul(onnx_node *n);
tkc_status onnx_reduce_cumsum(onnx_node *n);
tkc_status onnx_reduce_cumprod(onnx_node *n);
tkc_status onnx_reduce_topk(onnx_node *n);
tkc_status onnx_reduce_sum(onnx_node *n);
tkc_status onnx_reduce_mean(onnx_node *n);
tkc_status onnx_reduce_max(onnx_node *n);
tkc_status onnx_reduce_min(onnx_node *n);
tkc_status onnx_reduce_prod(onnx_node *n);
tkc_status onnx_reduce_l1(onnx_node *n);
tkc_status onnx_reduce_l2(onnx_node *n);
tkc_status onnx_reduce_logsum(onnx_node *n);
tkc_status onnx_reduce_logsumexp(onnx_node *n);
tkc_status onnx_reduce_sumsquare(onnx_node *n);
/* ops_shape.c */
tkc_status onnx_shape_reshape(onnx_node *n);
tkc_status onnx_shape_transpose(onnx_node *n);
tkc_status onnx_shape_flatten(onnx_node *n);
tkc_status onnx_shape_squeeze(onnx_node *n);
tkc_status onnx_shape_unsqueeze(onnx_node *n);
tkc_status onnx_shape_concat(onnx_node *n);
tkc_status onnx_shape_split(onnx_node *n);
tkc_status onnx_shape_slice(onnx_node *n);
tkc_status onnx_shape_expand(onnx_node *n);
tkc_status onnx_shape_tile(onnx_node *n);
tkc_status onnx_shape_pad(onnx_node *n);
tkc_status onnx_shape_trilu(onnx_node *n);
tkc_status onnx_shape_center_crop_pad(onnx_node *n);
tkc_status onnx_shape_depth_to_space(onnx_node *n);
tkc_status onnx_shape_space_to_depth(onnx_node *n);
/* ops_index.c */
tkc_status onnx_index_gather(onnx_node *n);
tkc_status onnx_index_gather_elements(onnx_node *n);
tkc_status onnx_index_one_hot(onnx_node *n);
tkc_status onnx_index_compress(onnx_node *n);
tkc_status onnx_index_nonzero(onnx_node *n);
/* ops_quant.c */
tkc_status onnx_quant_quantize(onnx_node *n);
tkc_status onnx_quant_dynamic_quantize(onnx_node *n);
#endif
