/* tkc/ops_math.h — elementwise math, reductions and scans (part of the tensor API: include tkc.h). Every function
 * follows tkc.h's rules: NULL + tkc_last_error() on bad input, results are lazy tensors of the same
 * ctx, inputs are not consumed.
 *
 * All of these are compositions of the ops in tkc.h, so they fuse like them: an elementwise function
 * of one input is one kernel, also inside a bigger expression.
 * Float-only functions ("math" below) take ints and bool too and promote them to float32 as tkc_sqrt
 * does; float16/bfloat16 are computed in float32 and rounded once to the input's dtype. float32
 * results are within a few ulp (relative ~1e-6) of the correctly rounded value unless a comment says
 * otherwise; the polynomial ones (erf, gelu, atan, asin, acos, atan2) are fitted for float32, so
 * float64 inputs get float32-grade accuracy (relative ~2e-7) from them. */
#ifndef TKC_OPS_MATH_H
#define TKC_OPS_MATH_H

#include "tkc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- elementwise */

/* min(max(a, lo), hi), a's dtype (bool: TKC_EDTYPE). lo > hi gives hi everywhere (as numpy.clip);
 * -inf / inf bounds make it one-sided; a NaN bound is TKC_EINVAL; NaN elements stay NaN. For ints
 * the bounds are rounded inwards (lo up, hi down) and saturated to the dtype's range. */
TKC_API tkc_tensor *tkc_clamp(tkc_tensor *a, double lo, double hi);
/* Rounding to an integral value, exact for every float (|x| >= 2^mantissa, inf and NaN pass through,
 * signs of zeros kept: floor(-0.0) = -0.0, trunc(-0.5) = -0.0). tkc_round rounds half to even
 * (round(2.5) = 2). Ints are returned as they are; bool is TKC_EDTYPE. */
TKC_API tkc_tensor *tkc_floor(tkc_tensor *a);
TKC_API tkc_tensor *tkc_ceil(tkc_tensor *a);
TKC_API tkc_tensor *tkc_round(tkc_tensor *a);
TKC_API tkc_tensor *tkc_trunc(tkc_tensor *a);
/* math: 1 / sqrt(a) (two roundings: within 2 ulp). */
TKC_API tkc_tensor *tkc_rsqrt(tkc_tensor *a);
/* a * a in a's dtype (as tkc_mul: ints wrap, bool is logical and). */
TKC_API tkc_tensor *tkc_square(tkc_tensor *a);
/* -1, 0 or 1 in a's dtype; floats: zeros (with their sign) and NaN are returned as they are. Ints and
 * floats; bool is TKC_EDTYPE. */
TKC_API tkc_tensor *tkc_sign(tkc_tensor *a);
/* math: the error function (a polynomial for |x| < 1, 1 - erfc by Numerical Recipes' Chebyshev fit of
 * erfc beyond). */
TKC_API tkc_tensor *tkc_erf(tkc_tensor *a);
/* math: x * Phi(x). tanh_approx 0: 0.5 x (1 + erf(x / sqrt 2)), computed through erfc for x < -sqrt 2
 * so the negative tail keeps its relative accuracy (which, as exp(-x^2/2)'s, degrades by about x^2 ulp
 * far out); nonzero: the tanh form 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
TKC_API tkc_tensor *tkc_gelu(tkc_tensor *a, int tanh_approx);
/* math: x * sigmoid(x). */
TKC_API tkc_tensor *tkc_silu(tkc_tensor *a);
/* math: x < 0 ? slope * x : x. A NaN slope is TKC_EINVAL. */
TKC_API tkc_tensor *tkc_leaky_relu(tkc_tensor *a, double slope);
/* math: x > 0 ? x : alpha * expm1(x). A NaN alpha is TKC_EINVAL. */
TKC_API tkc_tensor *tkc_elu(tkc_tensor *a, double alpha);
/* math: 1.0507009873554805 * elu(x, 1.6732632423543772). */
TKC_API tkc_tensor *tkc_selu(tkc_tensor *a);
/* math: log(1 + exp(beta x)) / beta, computed as max(bx, 0) + log1p(exp(-|bx|)) (no overflow). beta
 * must be finite and > 0 (else TKC_EINVAL). */
TKC_API tkc_tensor *tkc_softplus(tkc_tensor *a, double beta);
/* math: relu6(x + 3) / 6, and x * hardsigmoid(x). */
TKC_API tkc_tensor *tkc_hardsigmoid(tkc_tensor *a);
TKC_API tkc_tensor *tkc_hardswish(tkc_tensor *a);
/* math: x * tanh(softplus(x)), as x * n / (n + 2) with n = e^x (e^x + 2) (accurate for x << 0). */
TKC_API tkc_tensor *tkc_mish(tkc_tensor *a);
/* math: sin(x) / cos(x): the relative error grows near odd multiples of pi/2 and with |x| as those of
 * tkc_sin / tkc_cos do. */
TKC_API tkc_tensor *tkc_tan(tkc_tensor *a);
/* math: inverse trigonometric functions (NaN outside [-1, 1] for asin/acos), from a fitted
 * arctangent polynomial with range reduction. */
TKC_API tkc_tensor *tkc_asin(tkc_tensor *a);
TKC_API tkc_tensor *tkc_acos(tkc_tensor *a);
TKC_API tkc_tensor *tkc_atan(tkc_tensor *a);
/* math, binary (broadcasting, promotion as tkc_add, then to float): the angle of the point (x, y) in
 * [-pi, pi], with C's atan2 conventions for signed zeros and infinities. */
TKC_API tkc_tensor *tkc_atan2(tkc_tensor *y, tkc_tensor *x);
/* math: hyperbolic sine and cosine (sinh through expm1 for |x| < 1, no overflow before the result's). */
TKC_API tkc_tensor *tkc_sinh(tkc_tensor *a);
TKC_API tkc_tensor *tkc_cosh(tkc_tensor *a);
/* bool results, from the float's bits (so no backend's fast-math can fold them away). Ints and bool:
 * isnan and isinf are all false, isfinite all true. */
TKC_API tkc_tensor *tkc_isnan(tkc_tensor *a);
TKC_API tkc_tensor *tkc_isinf(tkc_tensor *a);
TKC_API tkc_tensor *tkc_isfinite(tkc_tensor *a);
/* math: log(1 + x) and exp(x) - 1, accurate near 0 (Goldberg's and Kahan's corrections). */
TKC_API tkc_tensor *tkc_log1p(tkc_tensor *a);
TKC_API tkc_tensor *tkc_expm1(tkc_tensor *a);
/* math, broadcasting a, b and w together: a + w (b - a) for w < 0.5, b - (b - a)(1 - w) otherwise
 * (exact at w = 0 and w = 1, as torch.lerp). */
TKC_API tkc_tensor *tkc_lerp(tkc_tensor *a, tkc_tensor *b, tkc_tensor *w);

/* ---------------------------------------------------------------- reductions
 * Axes as tkc_sum: naxes 0 / axes NULL = all axes; negative axes count from the end; a bad or
 * repeated axis is TKC_EINVAL. */

/* Product in a's dtype (ints wrap, bool is "all"; float16/bfloat16 multiply in float32). 1 over an
 * empty axis. Built as a tree of pairwise products: ceil(log2(n) / 4) kernels for n reduced
 * elements, O(n) work. */
TKC_API tkc_tensor *tkc_prod(tkc_tensor *a, int naxes, const int *axes, int keepdim);
/* math: sum((x - mean)^2) / (n - correction) over the n reduced elements (two passes: no
 * cancellation). correction must lie in [0, n] (TKC_EINVAL otherwise, also for NaN); correction == n
 * divides by zero: inf, or NaN for a zero sum or n == 0, as numpy. tkc_std = sqrt(tkc_var). */
TKC_API tkc_tensor *tkc_var(tkc_tensor *a, int naxes, const int *axes, int keepdim, double correction);
TKC_API tkc_tensor *tkc_std(tkc_tensor *a, int naxes, const int *axes, int keepdim, double correction);
/* math: log(sum(exp(x))) with the max subtracted (no overflow); -inf for an empty or all -inf set,
 * inf when an element is inf. */
TKC_API tkc_tensor *tkc_logsumexp(tkc_tensor *a, int naxes, const int *axes, int keepdim);
/* bool: whether any / every element is nonzero (NaN counts as nonzero); false / true when empty. */
TKC_API tkc_tensor *tkc_any(tkc_tensor *a, int naxes, const int *axes, int keepdim);
TKC_API tkc_tensor *tkc_all(tkc_tensor *a, int naxes, const int *axes, int keepdim);
/* The sum with elements cast to acc and the result in acc. acc narrower than 32 bits: ints wrap as
 * an acc accumulator would (the sum is taken in 32 bits and wrapped once, which is the same), float16
 * and bfloat16 add in float32 and round once (at least as accurate); bool acc gives "any". An invalid
 * acc is TKC_EDTYPE. */
TKC_API tkc_tensor *tkc_sum_acc(tkc_tensor *a, int naxes, const int *axes, int keepdim, tkc_dtype acc);

/* ---------------------------------------------------------------- scans along one axis
 * Inclusive: out[i] = a[0] op ... op a[i] along axis (negative counts from the end; out of range is
 * TKC_EINVAL; a 0-d tensor takes axis 0 or -1 and is returned as it is). Shapes are a's. */

/* Sum, dtype as tkc_sum's (small ints in int32, float16 stays float16) / running max in a's dtype
 * (NaN as tkc_maximum treats it). n <= 32: one kernel, the axis broadcast to a triangle reduced
 * per row (n operations per element); longer axes: blocks of 16 scanned so, the block totals
 * scanned again (recursively) and their exclusive prefix added back: about 17 operations per
 * element, two kernels per level. A variable-length axis is TKC_EUNSUPPORTED. */
TKC_API tkc_tensor *tkc_cumsum(tkc_tensor *a, int axis);
TKC_API tkc_tensor *tkc_cummax(tkc_tensor *a, int axis);
/* Running product in a's dtype (float16/bfloat16 multiply in float32): the same blocks, each
 * triangle a tree of pairwise products. */
TKC_API tkc_tensor *tkc_cumprod(tkc_tensor *a, int axis);

#ifdef __cplusplus
}
#endif
#endif
