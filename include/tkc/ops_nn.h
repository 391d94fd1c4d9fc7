/* tkc/ops_nn.h — NN layer ops (part of the tensor API: include tkc.h). Every function
 * follows tkc.h's rules: NULL + tkc_last_error() on bad input, results are lazy tensors of the same
 * ctx, inputs are not consumed.
 *
 * All of them are compositions of tkc.h's ops (no kernels of their own kind). Layouts are torch's:
 * images NCHW, sequences NCL, conv weights OIHW (O = output channels, I = input channels per
 * group), conv_transpose weights IOHW. Array arguments (stride, pad, dilation, ...) hold one value
 * per spatial axis, height first; NULL gives the default named at each function. Bad geometry
 * (a stride or dilation < 1, a negative pad, a kernel larger than the padded input, an output of
 * size <= 0, channels that do not divide into the groups, an intermediate of 2^31 or more
 * elements) is TKC_EINVAL / TKC_ESHAPE with the reason; wrong ranks are TKC_ESHAPE; a dtype an op
 * does not take is TKC_EDTYPE. Float16/bfloat16 norms, average pooling and bilinear weights are
 * computed in float32 and rounded once at the end. */
#ifndef TKC_OPS_NN_H
#define TKC_OPS_NN_H

#include "tkc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- normalization */

/* (x - mean) / sqrt(var + eps) over the last naxes dims (1 <= naxes <= ndim; var biased), then
 * * weight + bias where given (each the shape of those naxes dims). x of a float dtype; eps >= 0
 * and finite. The result dtype promotes x, weight and bias. The mean and variance come from one
 * pass over x (sums of x - x0 and (x - x0)^2, x0 the first element of each group), so the op is two
 * kernels: the statistics and the output. */
TKC_API tkc_tensor *tkc_layer_norm(tkc_tensor *x, int naxes, tkc_tensor *weight_or_null, tkc_tensor *bias_or_null, double eps);
/* x / sqrt(mean(x^2) + eps) over the last naxes dims, then * weight (the shape of those dims). */
TKC_API tkc_tensor *tkc_rms_norm(tkc_tensor *x, int naxes, tkc_tensor *weight_or_null, double eps);
/* Inference batch norm over channel axis 1 of x (N, C, ...), ndim >= 2:
 * (x - mean[c]) / sqrt(var[c] + eps) * weight[c] + bias[c]; mean, var, weight, bias are (C). */
TKC_API tkc_tensor *tkc_batch_norm(tkc_tensor *x, tkc_tensor *running_mean, tkc_tensor *running_var, tkc_tensor *weight_or_null,
                                   tkc_tensor *bias_or_null, double eps);

/* ---------------------------------------------------------------- convolutions */

/* 2-D convolution (cross-correlation, as torch): x (N, C, H, W), w (O, C/groups, KH, KW), bias (O).
 * stride[2] (NULL = 1, 1), pad[4] = top, bottom, left, right zeros (NULL = 0), dilation[2] (NULL =
 * 1, 1), groups >= 1 dividing C and O. Out (N, O, OH, OW), OH = (H + top + bottom - dh*(KH-1) - 1)
 * / sh + 1. tkc_conv2d(x, w, b, s, p) is the case stride {s, s}, pad {p, p, p, p}, groups 1. */
TKC_API tkc_tensor *tkc_conv2d_ex(tkc_tensor *x, tkc_tensor *w, tkc_tensor *bias_or_null, const int stride[2], const int pad[4],
                                  const int dilation[2], int groups);
/* 1-D convolution: x (N, C, L), w (O, C/groups, K), bias (O); out (N, O, OL) with
 * OL = (L + pad_left + pad_right - dilation*(K-1) - 1) / stride + 1. */
TKC_API tkc_tensor *tkc_conv1d(tkc_tensor *x, tkc_tensor *w, tkc_tensor *bias_or_null, int stride, int pad_left, int pad_right, int dilation,
                               int groups);
/* Transposed 2-D convolution (the gradient of conv2d_ex wrt its input, as torch's
 * conv_transpose2d): x (N, C, H, W), w (C, O/groups, KH, KW) (IOHW), bias (O); stride[2] (NULL = 1),
 * pad[2] (NULL = 0: removes pad rows/cols from both sides of the full output), output_padding[2]
 * (NULL = 0: adds rows/cols at the bottom/right; each < max(stride, dilation) of its axis),
 * dilation[2] (NULL = 1), groups dividing C. OH = (H-1)*sh - 2*ph + dh*(KH-1) + oph + 1 >= 1. */
TKC_API tkc_tensor *tkc_conv_transpose2d(tkc_tensor *x, tkc_tensor *w, tkc_tensor *bias_or_null, const int stride[2], const int pad[2],
                                         const int output_padding[2], const int dilation[2], int groups);

/* ---------------------------------------------------------------- pooling (x NCHW, 4-D) */

/* Max over kernel windows (kernel[2] required, >= 1); stride (NULL = kernel), pad (NULL = 0; each
 * <= kernel/2, as torch: padding is -inf, the dtype's minimum for ints), dilation (NULL = 1).
 * OH = (H + 2*ph - dh*(KH-1) - 1) / sh + 1, rounded up with ceil_mode (a last window that would
 * start in the bottom padding is dropped, as torch). Any dtype. */
TKC_API tkc_tensor *tkc_max_pool2d(tkc_tensor *x, const int kernel[2], const int stride[2], const int pad[2], const int dilation[2],
                                   int ceil_mode);
/* Mean over kernel windows of a float x; kernel, stride, pad and ceil_mode as tkc_max_pool2d (no
 * dilation). The divisor counts the window's elements inside the input, plus its zero padding when
 * count_include_pad (never the part of a ceil_mode window past the padding), as torch. */
TKC_API tkc_tensor *tkc_avg_pool2d(tkc_tensor *x, const int kernel[2], const int stride[2], const int pad[2], int ceil_mode,
                                   int count_include_pad);

/* ---------------------------------------------------------------- resampling */

typedef enum tkc_interp_mode { TKC_INTERP_NEAREST, TKC_INTERP_BILINEAR } tkc_interp_mode;
/* Resizes the last two dims of x (N, C, H, W) to (out_h, out_w), both >= 1, as torch's
 * interpolate. NEAREST: source index floor(o * in / out) (exact integer math; any non-bool dtype;
 * align_corners must be 0). BILINEAR (float x): source coordinate o * (in-1)/(out-1) with
 * align_corners, else (o + 0.5) * in/out - 0.5 clamped at 0; the two neighbours weighted linearly
 * (the last row/col repeats at the edge). One matmul-like kernel per resized axis. */
TKC_API tkc_tensor *tkc_interpolate(tkc_tensor *x, int64_t out_h, int64_t out_w, int mode, int align_corners);

/* ---------------------------------------------------------------- attention */

/* softmax(q @ k^T * scale + mask) @ v over the last axis: q (..., L, E), k (..., S, E), v (..., S, Ev)
 * of float dtypes, batch dims broadcast (NumPy); out (..., L, Ev). scale 0 = 1/sqrt(E) (else any
 * finite value). mask_or_null broadcasts to (..., L, S) (without growing the result): bool (true =
 * attend, false = -inf) or float (added). causal: position i attends to j <= i (top-left aligned,
 * as torch's is_causal); causal and a mask together apply both. A row with nothing to attend to is
 * NaN, as torch. */
TKC_API tkc_tensor *tkc_scaled_dot_product_attention(tkc_tensor *q, tkc_tensor *k, tkc_tensor *v, tkc_tensor *mask_or_null, int causal,
                                                     double scale);

/* ---------------------------------------------------------------- losses */

typedef enum tkc_reduction { TKC_REDUCTION_NONE, TKC_REDUCTION_MEAN, TKC_REDUCTION_SUM } tkc_reduction;
/* Negative log likelihood: loss[n] = -log_probs[n, target[n]] for log_probs (N, C) of a float
 * dtype (C >= 1) and target (N) of an integer dtype holding class indices; reduction NONE gives (N),
 * MEAN / SUM a 0-d tensor (MEAN over N: NaN for N = 0). No class weights, no ignore_index. A target
 * that is realized (tkc_tensor_new'ed or tkc_realize'd) is checked on the host: an index outside
 * [0, C) is TKC_EINVAL naming it. A lazy target is not checked: an out-of-range index matches no
 * class and that row's loss is 0 (still counted by MEAN). */
TKC_API tkc_tensor *tkc_nll_loss(tkc_tensor *log_probs, tkc_tensor *target, int reduction);
/* tkc_nll_loss(tkc_log_softmax(logits, 1), target, reduction): logits (N, C) of a float dtype. */
TKC_API tkc_tensor *tkc_cross_entropy(tkc_tensor *logits, tkc_tensor *target, int reduction);

/* ---------------------------------------------------------------- initialization and dropout
 * These draw from the ctx's random generator (tkc_manual_seed in tkc.h: each call advances it,
 * values are realized when returned, and jit replays draw new ones). */

/* Uniform in [-bound, bound), as tinygrad's Tensor.kaiming_uniform (torch's with a leaky_relu gain):
 * bound = sqrt(3) * sqrt(2 / (1 + a^2)) / sqrt(fan_in), fan_in = prod(shape[1:]) (1 for 1 dim): a
 * Linear weight is (out, in), a conv weight (O, I, KH, KW). Errors as tkc_rand_uniform; also
 * TKC_ESHAPE for 0 dims and TKC_EINVAL for fan_in 0 or a non-finite a. */
TKC_API tkc_tensor *tkc_kaiming_uniform(tkc_ctx *ctx, tkc_dtype dt, int ndim, const int64_t *shape, double a);
/* Uniform in [-bound, bound), as tinygrad's Tensor.glorot_uniform: bound = sqrt(6 / (shape[0] +
 * prod(shape[1:]))). Errors as tkc_kaiming_uniform (TKC_EINVAL when that sum is 0). */
TKC_API tkc_tensor *tkc_glorot_uniform(tkc_ctx *ctx, tkc_dtype dt, int ndim, const int64_t *shape);
/* training 0 (or p 0): x itself (a new handle). training nonzero: each element is zeroed with
 * probability p (where a float32 uniform draw < p, as tinygrad's Tensor.dropout) and the others are
 * multiplied by 1 / (1 - p) (that factor rounded to x's dtype); the mask is drawn from the ctx's
 * generator and realized (a bool tensor of x's shape), the result is lazy. x of a float dtype
 * (TKC_EDTYPE), p in [0, 1) (TKC_EINVAL), x of fixed shape (TKC_EUNSUPPORTED for a variable dim). */
TKC_API tkc_tensor *tkc_dropout(tkc_tensor *x, double p, int training);

/* ---------------------------------------------------------------- per-row int8 weights
 * Symmetric absmax quantization of each row of a (rows, columns) weight matrix, as tinygrad's llama
 * Int8Linear: scale[r] = max|w[r, :]| / 127 (float32), q[r, c] = round(w[r, c] / scale[r]) (half to
 * even, in [-127, 127]; a row of zeros has scale 0 and q 0). */

/* w: 2-D of a float dtype (computed in float32), at least one column. On success *q (int8, w's shape)
 * and *scale (float32, (rows,)) are new realized tensors of w's ctx, the caller's to free; on failure
 * both are NULL: TKC_EINVAL (a NULL argument), TKC_ESHAPE (not 2-D, no columns), TKC_EDTYPE (w not a
 * float). Weights that are not finite give rows of unspecified q. */
TKC_API tkc_status tkc_quantize_int8_rows(tkc_tensor *w, tkc_tensor **q, tkc_tensor **scale);
/* The float32 weights float(q) * scale[:, None], lazy: a matmul reading them (x @ w^T for a Linear)
 * is one kernel over the int8 bytes, the float weights never exist. q int8 (rows, columns), scale of a
 * float dtype with one value per row, same ctx. NULL on failure: TKC_EINVAL (NULL, other ctxs),
 * TKC_EDTYPE, TKC_ESHAPE (q not 2-D, scale not (rows,)). A new handle; q and scale may be freed after. */
TKC_API tkc_tensor *tkc_dequantize_int8_rows(tkc_tensor *q, tkc_tensor *scale);

#ifdef __cplusplus
}
#endif
#endif
