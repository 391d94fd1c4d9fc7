/* tkc.h — the tensor API: lazy tensors that fuse into kernels and run on a device.
 *
 *   tkc_ctx *ctx = tkc_ctx_new(NULL);                      // $TKC_DEVICE or the best device here
 *   tkc_tensor *a = tkc_tensor_new(ctx, TKC_FLOAT32, 2, shape, data);
 *   tkc_tensor *y = tkc_softmax(tkc_matmul(a, b), -1);     // nothing runs yet
 *   tkc_copy_out(y, out, sizeof out);                      // schedules, compiles, runs
 *   tkc_ctx_free(ctx);                                     // frees every tensor of ctx
 *
 * Errors: functions returning a pointer return NULL on failure and set tkc_last_error(); an op given
 * a NULL tensor returns NULL and keeps the first error, so a chain needs one check at the end.
 * Bad input never aborts, never prints (unless TKC_DEBUG), and leaves the ctx usable.
 * Ownership: tensors belong to their ctx. tkc_tensor_free releases one handle early; tkc_ctx_free
 * releases everything. Destructors accept NULL. Every op returns a new handle, also for results
 * the caller never names (the matmul in relu(matmul(x, w))); in a loop, use a scope:
 *
 *   for (...) {
 *     tkc_scope_begin(ctx);                                 // handles made from here on...
 *     tkc_copy_in(x, batch, nbytes);                        // new data for a realized input
 *     tkc_tensor *y = tkc_keep(tkc_relu(tkc_matmul(x, w))); // ...except kept ones...
 *     tkc_copy_out(y, out, sizeof out);
 *     tkc_scope_end(ctx);                                   // ...are freed here; y lives on
 *     tkc_tensor_free(y);
 *   }
 *
 * Scope rules: tkc_scope_end frees every handle created since the matching tkc_scope_begin that was
 * not passed to tkc_keep, which moves a handle to the enclosing scope (or, from the outermost
 * scope, out of scopes: then only tkc_tensor_free / tkc_ctx_free free it). Scopes nest. Data still
 * used by a live tensor (an outer or kept one, or one whose graph reads it) lives on. Using a freed
 * handle is an error ("use of a freed tensor"), not a crash, as long as its ctx is alive: a freed
 * handle's memory is not given to a new tensor until 16384 more handles of that ctx have been freed,
 * so a stale handle is not silently another tensor. After tkc_ctx_free, its tensors (and the ctx)
 * must not be used at all: their memory is gone.
 * Threads: a ctx (and its tensors) is used by one thread at a time; use one ctx per thread. */
#ifndef TKC_H
#define TKC_H

#include <stddef.h>
#include <stdint.h>
#include "tkc/base.h"
#include "tkc/opts.h" /* tkc_opt: tkc_realize_opts */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tkc_ctx tkc_ctx;
typedef struct tkc_tensor tkc_tensor;

/* ---------------------------------------------------------------- contexts */

/* A ctx on device "CPU", "LLVM", "CUDA", "WEBGPU" or "INTERP"; NULL = $TKC_DEVICE or the best
 * available device. NULL + TKC_EDEVICE when the device cannot run here. */
TKC_API tkc_ctx *tkc_ctx_new(const char *device);
/* Frees the ctx, its tensors and device buffers. NULL is a no-op. Within a live ctx a freed tensor
 * handle stays detected ("use of a freed tensor") for the ctx's next 16384 frees; after
 * tkc_ctx_free the ctx and all its tensor handles are gone, and passing any of them to tkc (even to
 * tkc_tensor_free or tkc_ctx_free again) is undefined, as with a pointer after free. */
TKC_API void tkc_ctx_free(tkc_ctx *ctx);
/* The ctx's device name (static). */
TKC_API const char *tkc_ctx_device(const tkc_ctx *ctx);
/* 1 when the device exists and can run here, else 0. */
TKC_API int tkc_device_available(const char *device);

/* ---------------------------------------------------------------- creation */

/* A tensor of the given shape holding a copy of data (numel * itemsize bytes, row-major); NULL data
 * = uninitialized (zero-filled). ndim may be 0 (a scalar); dims must be >= 0 (0 = empty). */
TKC_API tkc_tensor *tkc_tensor_new(tkc_ctx *ctx, tkc_dtype dt, int ndim, const int64_t *shape, const void *data);
/* Every element = value (converted to dt). Lazy: a broadcast constant, no buffer until realized. */
TKC_API tkc_tensor *tkc_full(tkc_ctx *ctx, tkc_dtype dt, int ndim, const int64_t *shape, double value);
/* A 0-d tensor: broadcasts against any shape. */
TKC_API tkc_tensor *tkc_scalar(tkc_ctx *ctx, tkc_dtype dt, double value);
/* [start, stop) by step (step != 0), like numpy.arange. */
TKC_API tkc_tensor *tkc_arange(tkc_ctx *ctx, tkc_dtype dt, double start, double stop, double step);
/* Uniform [0, 1) of a float dtype from a counter-based generator: the same seed gives the same values. */
TKC_API tkc_tensor *tkc_rand(tkc_ctx *ctx, tkc_dtype dt, int ndim, const int64_t *shape, uint64_t seed);
/* The ctx's random generator, on the device: tkc_randn, tkc_rand_uniform, tkc_kaiming_uniform,
 * tkc_glorot_uniform and tkc_dropout draw from it, and each draw advances it, so two calls give
 * different values. Its state (a key from the seed and a draw counter) is a small buffer of the ctx:
 * the values are computed by a kernel that reads it (Threefry-2x32-20, counter-based), and a second
 * kernel advances the counter; a draw realizes both at once and returns realized values. So under
 * tkc_jit replay every replay draws new values (dropout masks differ), as tinygrad's device-side
 * counter. A fresh ctx is seeded with 0, so runs are reproducible. tkc_manual_seed(ctx, seed) resets
 * the key and the counter (also for jits that captured draws: they continue from the new seed).
 * Draws make float dtypes only (TKC_EDTYPE otherwise; float64 not on WEBGPU) of fixed shapes (a
 * variable dim is TKC_EUNSUPPORTED, a negative one or 2^31 or more elements TKC_ESHAPE); the same
 * seed gives the same uniform values on every device, and normal values up to the devices' cos/log.
 * An empty shape draws nothing. TKC_EINVAL for a NULL ctx. */
TKC_API tkc_status tkc_manual_seed(tkc_ctx *ctx, uint64_t seed);
/* Standard normal values (Box-Muller from two uniforms: cos(2 pi u1) sqrt(-2 log(1 - u2)), as
 * tinygrad's Tensor.randn), computed in float32 (float64 for float64) and rounded to dt. */
TKC_API tkc_tensor *tkc_randn(tkc_ctx *ctx, tkc_dtype dt, int ndim, const int64_t *shape);
/* Uniform values in [lo, hi): (hi - lo) * u + lo as tinygrad's Tensor.uniform, u = k / 2^m for a
 * random m-bit k, m the precision of dt (24 for float32, 53 for float64, 11 for float16, 8 for
 * bfloat16), computed in float32 (float64 for float64). The rounding of that sum may give hi itself
 * when lo and hi are far apart in magnitude. lo <= hi, both finite (TKC_EINVAL otherwise). */
TKC_API tkc_tensor *tkc_rand_uniform(tkc_ctx *ctx, tkc_dtype dt, int ndim, const int64_t *shape, double lo, double hi);
/* Releases one tensor handle (the data lives on while other tensors use it). NULL is a no-op. */
TKC_API void tkc_tensor_free(tkc_tensor *t);
/* A second handle to the same tensor (both are freed, each once): for wrappers that own handles
 * (tkc.hpp's Jit hands its callback's tensors over this way). NULL + TKC_EINVAL for a bad t. */
TKC_API tkc_tensor *tkc_tensor_ref(tkc_tensor *t);

/* ---------------------------------------------------------------- properties (0 / -1 on NULL) */

TKC_API int tkc_ndim(const tkc_tensor *t);
/* tkc_dim: negative axes count from the end; -1 when out of range; a variable-length dim is its
 * token (tkc_dim_is_var; tkc_dim_value gives the bound value). tkc_numel: at the variables' bound
 * values (-1 + TKC_EINVAL while one is unbound). */
TKC_API int64_t tkc_dim(const tkc_tensor *t, int axis);
TKC_API int64_t tkc_numel(const tkc_tensor *t);
TKC_API tkc_dtype tkc_dtype_of(const tkc_tensor *t);     /* TKC_VOID on NULL */
/* The ctx t belongs to; NULL + TKC_EINVAL for NULL or a freed handle (as every call on one). */
TKC_API tkc_ctx *tkc_tensor_ctx(const tkc_tensor *t);

/* ---------------------------------------------------------------- elementwise
 * NumPy broadcasting and tinygrad's type promotion. Binary ops take (a, b); both must share a ctx. */
TKC_API tkc_tensor *tkc_add(tkc_tensor *a, tkc_tensor *b);
TKC_API tkc_tensor *tkc_sub(tkc_tensor *a, tkc_tensor *b);
TKC_API tkc_tensor *tkc_mul(tkc_tensor *a, tkc_tensor *b);
TKC_API tkc_tensor *tkc_div(tkc_tensor *a, tkc_tensor *b);     /* true division: ints promote to float32 */
TKC_API tkc_tensor *tkc_idiv(tkc_tensor *a, tkc_tensor *b);    /* ints: truncating division */
TKC_API tkc_tensor *tkc_mod(tkc_tensor *a, tkc_tensor *b);     /* ints: remainder with the dividend's sign */
TKC_API tkc_tensor *tkc_maximum(tkc_tensor *a, tkc_tensor *b);
TKC_API tkc_tensor *tkc_minimum(tkc_tensor *a, tkc_tensor *b);
TKC_API tkc_tensor *tkc_pow(tkc_tensor *a, tkc_tensor *b);     /* floats (ints promote to float32) */
TKC_API tkc_tensor *tkc_lt(tkc_tensor *a, tkc_tensor *b);      /* comparisons give bool (uint32 with a signed int too on WEBGPU) */
TKC_API tkc_tensor *tkc_le(tkc_tensor *a, tkc_tensor *b);
TKC_API tkc_tensor *tkc_gt(tkc_tensor *a, tkc_tensor *b);
TKC_API tkc_tensor *tkc_ge(tkc_tensor *a, tkc_tensor *b);
TKC_API tkc_tensor *tkc_eq(tkc_tensor *a, tkc_tensor *b);
TKC_API tkc_tensor *tkc_ne(tkc_tensor *a, tkc_tensor *b);
TKC_API tkc_tensor *tkc_and(tkc_tensor *a, tkc_tensor *b);     /* bool and ints: bitwise */
TKC_API tkc_tensor *tkc_or(tkc_tensor *a, tkc_tensor *b);
TKC_API tkc_tensor *tkc_xor(tkc_tensor *a, tkc_tensor *b);
TKC_API tkc_tensor *tkc_shl(tkc_tensor *a, tkc_tensor *b);     /* ints */
TKC_API tkc_tensor *tkc_shr(tkc_tensor *a, tkc_tensor *b);
/* Per element (broadcast), int32 words: the 4 bytes of a, unsigned, times the 4 bytes of b, signed,
 * summed (CUDA's dp4a, x86's vpdpbusd: one instruction where the device has it). a and b are int32
 * or uint32 (their bits are read); the result is int32. Int8 dot products over packed words. */
TKC_API tkc_tensor *tkc_dot4(tkc_tensor *a, tkc_tensor *b);
/* cond ? a : b, elementwise (cond is cast to bool). */
TKC_API tkc_tensor *tkc_where(tkc_tensor *cond, tkc_tensor *a, tkc_tensor *b);

/* Unary ops; the math functions promote ints to float32. tkc_neg of bool is logical not. */
TKC_API tkc_tensor *tkc_neg(tkc_tensor *a);
TKC_API tkc_tensor *tkc_abs(tkc_tensor *a);
TKC_API tkc_tensor *tkc_recip(tkc_tensor *a);
TKC_API tkc_tensor *tkc_sqrt(tkc_tensor *a);
TKC_API tkc_tensor *tkc_exp(tkc_tensor *a);
TKC_API tkc_tensor *tkc_exp2(tkc_tensor *a);
TKC_API tkc_tensor *tkc_log(tkc_tensor *a);
TKC_API tkc_tensor *tkc_log2(tkc_tensor *a);
TKC_API tkc_tensor *tkc_sin(tkc_tensor *a);
TKC_API tkc_tensor *tkc_cos(tkc_tensor *a);
TKC_API tkc_tensor *tkc_tanh(tkc_tensor *a);
TKC_API tkc_tensor *tkc_sigmoid(tkc_tensor *a);
TKC_API tkc_tensor *tkc_relu(tkc_tensor *a);
/* Value conversion (C-cast semantics) and bit reinterpretation (same itemsize only; bool <-> int8/uint8
 * too: a nonzero byte reads as true, true is stored as 1). */
TKC_API tkc_tensor *tkc_cast(tkc_tensor *a, tkc_dtype dt);
TKC_API tkc_tensor *tkc_bitcast(tkc_tensor *a, tkc_dtype dt);

/* ---------------------------------------------------------------- reductions
 * naxes 0 / axes NULL = all axes; negative axes count from the end; keepdim keeps reduced axes as 1.
 * tkc_sum accumulates as tinygrad: small ints in int32/uint32, half in float32 (result half). */
TKC_API tkc_tensor *tkc_sum(tkc_tensor *a, int naxes, const int *axes, int keepdim);
TKC_API tkc_tensor *tkc_max(tkc_tensor *a, int naxes, const int *axes, int keepdim);
TKC_API tkc_tensor *tkc_min(tkc_tensor *a, int naxes, const int *axes, int keepdim);
TKC_API tkc_tensor *tkc_mean(tkc_tensor *a, int naxes, const int *axes, int keepdim); /* float result */

/* ---------------------------------------------------------------- movement (views: no copy until needed) */

TKC_API tkc_tensor *tkc_reshape(tkc_tensor *a, int ndim, const int64_t *shape); /* one -1 allowed */
TKC_API tkc_tensor *tkc_permute(tkc_tensor *a, const int *order);                /* ndim entries */
TKC_API tkc_tensor *tkc_transpose(tkc_tensor *a, int ax0, int ax1);
TKC_API tkc_tensor *tkc_expand(tkc_tensor *a, int ndim, const int64_t *shape);   /* size-1 dims grow; -1 keeps */
TKC_API tkc_tensor *tkc_pad(tkc_tensor *a, const int64_t *pads, double value);   /* 2*ndim: before,after per axis */
TKC_API tkc_tensor *tkc_shrink(tkc_tensor *a, const int64_t *ranges);            /* 2*ndim: start,end per axis */
TKC_API tkc_tensor *tkc_flip(tkc_tensor *a, int naxes, const int *axes);
/* A kernel boundary: a is computed into its own buffer when the result is realized. */
TKC_API tkc_tensor *tkc_contiguous(tkc_tensor *a);

/* ---------------------------------------------------------------- composites */

TKC_API tkc_tensor *tkc_matmul(tkc_tensor *a, tkc_tensor *b); /* batched, NumPy semantics (1-D operands too) */
TKC_API tkc_tensor *tkc_softmax(tkc_tensor *a, int axis);
TKC_API tkc_tensor *tkc_log_softmax(tkc_tensor *a, int axis);
/* x NCHW, w OIHW, optional bias (O); square stride and zero padding. */
TKC_API tkc_tensor *tkc_conv2d(tkc_tensor *x, tkc_tensor *w, tkc_tensor *bias_or_null, int stride, int padding);
/* w (O, I, KH, KW) copied into the memory layout tkc_conv2d's kernels read on w's device, seen as
 * OIHW again (same values): realize it once for weights convolved many times (a model's), and
 * tkc_conv2d reads it with no copy per call. A lazy tensor; NULL + error for a bad w. */
TKC_API tkc_tensor *tkc_conv2d_weight_layout(tkc_tensor *w);
/* b (K, N), a matmul's right operand used many times (a layer's weight), copied into the memory
 * layout tkc_matmul's kernels read it in on b's device, seen as (K, N) again (same values): on host
 * devices panels of N (N/W, K, W), W the register tile's width, which tkc_matmul otherwise makes per
 * call only for M >= 512 rows; rows of a power-of-two-like length evict each other in the cache; a
 * few columns that the vectors do not divide (N < 64, a classifier's) as (N, K) rows, as it reads them.
 * Realize it once; tkc_matmul(a, it) then reads it with no copy. NULL + error for a bad b. */
TKC_API tkc_tensor *tkc_matmul_weight_layout(tkc_tensor *b);

/* ---------------------------------------------------------------- variables
 * A variable is a named int of a ctx with bounds [min, max] (0 <= min <= max < 2^31), bound to a
 * value before each realize that reads it. Kernels read it as a parameter (DEFINE_VAR), so one
 * compiled kernel serves every value: the kernel cache builds it once for all of them.
 *
 * tkc_dim_var returns the variable's token: an int64 that names it (far below any real dim, so it
 * is never mistaken for one), 0 with TKC_EINVAL for a bad name (an identifier, at most 31 chars,
 * unique in the ctx) or bounds. tkc_dim_bind sets its value for the next realizes (TKC_EINVAL out
 * of bounds, for a token of another ctx or no token). A realize reading an unbound variable fails
 * with TKC_EINVAL naming it. tkc_dim_value gives a token's bound value (-1 + TKC_EINVAL when
 * unbound) and a plain dim itself; tkc_dim_is_var tells tokens from dims. tkc_dim_scalar is the
 * variable as a 0-d int32 tensor: its value at each realize.
 *
 * Shapes and ranges take tokens: token + c (|c| < 2^20) is the variable plus c, so a shape may say
 * L + 1; a token pushed past that (L + 2^20) is TKC_EUNSUPPORTED wherever it is given, never read
 * as another variable. Buffers are laid out for the variables' largest values. Where a shape or range is given,
 * every dim must stay a fixed size or one variable plus a constant (TKC_EUNSUPPORTED otherwise):
 *   tkc_full / tkc_rand / tkc_tensor_new / tkc_expand   variable dims;
 *   tkc_reshape    variable dims kept in order (fixed dims between them may be regrouped);
 *   tkc_pad        by a variable amount (before or after), and after a variable-length dim;
 *   tkc_shrink     a variable end; a variable start with an end of the same variable (x[L:L+2]);
 *                  the range must be inside the axis for every value of the variables (TKC_ESHAPE);
 *   tkc_cat        along a variable axis joined with fixed-size ones (a KV cache append);
 *   refused        flipping a variable dim, merging it in a reshape, L + L or L + M.
 * A computed tensor with variable dims holds the values of the binding it was realized under:
 * reading it (copy_out, or as a kernel or jit input) after its variables were bound otherwise is
 * TKC_EINVAL naming the variable, not data read at the wrong lengths. Build it again, or replay it
 * with a jit (a view of such a tensor carries its binding too). Views of other buffers (a shrink
 * from a variable start of a fixed-size tensor, ...) read them at any binding. */
TKC_API int64_t tkc_dim_var(tkc_ctx *ctx, const char *name, int64_t min, int64_t max);
TKC_API tkc_status tkc_dim_bind(tkc_ctx *ctx, int64_t var, int64_t value);
TKC_API int64_t tkc_dim_value(tkc_ctx *ctx, int64_t dim);
TKC_API int tkc_dim_is_var(int64_t dim);
TKC_API tkc_tensor *tkc_dim_scalar(tkc_ctx *ctx, int64_t var);

/* ---------------------------------------------------------------- gradients
 * Reverse-mode gradients through every differentiable op (tinygrad's gradient rules; composites
 * through what they are made of). Only float tensors have gradients.
 *
 * tkc_requires_grad marks t as a leaf whose gradient tkc_backward accumulates (set it before using
 * t: graphs built from t earlier do not know). tkc_backward(loss): loss has one element; adds
 * d loss / d leaf into every requires-grad leaf the loss depends on (TKC_EINVAL when it depends on
 * none); the gradients are lazy tensors, computed when realized. It may be called after the loss
 * was realized (the computed nodes keep how they were computed while a gradient may pass through
 * them). tkc_grad(t): a new handle to t's gradient (TKC_EINVAL when t does not require one, or has
 * none: no backward yet, or the loss does not depend on it). Each leaf's gradient lives in a buffer
 * of its own that every backward adds into in place, so a tkc_jit that captured backward without a
 * zero_grad accumulates over its replays (gradient accumulation); tkc_zero_grad fills that buffer
 * with zeros now (a kernel, captured too): the gradient is then zeros, not absent (torch's
 * zero_grad(set_to_none=False): a replayed step could not bring back a gradient the host dropped).
 * tkc_gradient(y, n, wrt, grads): d y / d wrt[i] into new handles grads[i] (zeros for a tensor y
 * does not depend on), accumulating nothing; y unrealized or built from requires-grad leaves.
 * tkc_detach(t): the same values, through which no gradient flows.
 * Not differentiated yet (TKC_EUNSUPPORTED): movement ops of variable-size dims; a gather with a
 * computed index of a tensor that was not marked with tkc_requires_grad before it was used. */
TKC_API tkc_status tkc_requires_grad(tkc_tensor *t, int on);
/* 1 / 0 whether t requires a gradient, has one (tkc_grad would give it); -1 for a NULL or freed t. */
TKC_API int tkc_requires_grad_of(const tkc_tensor *t);
TKC_API int tkc_has_grad(const tkc_tensor *t);
TKC_API tkc_status tkc_backward(tkc_tensor *loss);
TKC_API tkc_tensor *tkc_grad(tkc_tensor *t);
TKC_API tkc_status tkc_zero_grad(tkc_tensor *t);
TKC_API tkc_status tkc_gradient(tkc_tensor *y, int n, tkc_tensor *const *wrt, tkc_tensor **grads);
TKC_API tkc_tensor *tkc_detach(tkc_tensor *t);

/* ---------------------------------------------------------------- optimizers
 * tinygrad's nn/optim.py over parameters that require gradients (TKC_EINVAL naming the one that
 * does not, with its shape and dtype; TKC_EDTYPE for a non-float one). tkc_optim_step updates every
 * parameter that has a gradient (one that never had one is left as it is) and its state in place (tkc_assign),
 * all in one schedule; tkc_optim_zero_grad zeroes the gradients (tkc_zero_grad). The learning rate (tkc_optim_set_lr)
 * and Adam's beta powers live on the device, so a step captured in a tkc_jit replays with the
 * current learning rate. The optimizer holds its own handles to the parameters.
 *   SGD:   g += wd p;  b = momentum b + g;  g = nesterov ? g + momentum b : b;  p -= lr g
 *          (momentum 0: no buffer)
 *   Adam:  g += wd p (decoupled = 0);  m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;
 *          p -= lr (m / (1-b1^t) / (sqrt(v / (1-b2^t)) + eps) + wd p (decoupled = 1: AdamW)) */
typedef struct tkc_optim tkc_optim;
TKC_API tkc_optim *tkc_sgd_new(tkc_ctx *ctx, int n, tkc_tensor *const *params, double lr, double momentum, double weight_decay, int nesterov);
TKC_API tkc_optim *tkc_adam_new(tkc_ctx *ctx, int n, tkc_tensor *const *params, double lr, double beta1, double beta2, double eps,
                                double weight_decay, int decoupled);
TKC_API tkc_status tkc_optim_step(tkc_optim *o);
/* The step and the realize of n more tensors in one schedule: what they share with the step is
 * computed once, and they read the parameters as they were before it. The loss of the step this
 * way: realized with it, not recomputed from the updated parameters by a later realize. */
TKC_API tkc_status tkc_optim_step_realize(tkc_optim *o, int n, tkc_tensor *const *also);
TKC_API tkc_status tkc_optim_zero_grad(tkc_optim *o);
TKC_API tkc_status tkc_optim_set_lr(tkc_optim *o, double lr);
TKC_API void tkc_optim_free(tkc_optim *o);

/* ---------------------------------------------------------------- capture and replay
 * A jit runs fn (which builds and realizes outputs from inputs) once as usual, recording every
 * kernel launch; every later tkc_jit_run replays those launches on the new inputs' buffers and the
 * variables' current values (tkc_dim_bind), without building graphs, scheduling or compiling, as
 * tinygrad's TinyJit. Intermediate buffers are planned once and shared between kernels whose uses
 * do not overlap.
 *
 * fn gets the inputs and fills out[0..nout-1] (tensors it made); tkc_jit_run realizes them. A
 * replay returns new handles in out (free them as any tensor) that view the jit's own output
 * buffers: the next replay overwrites their values (copy them out, or tkc_contiguous, to keep them);
 * except an output that is an input or a view of one, which views that run's input. An output
 * passed back as an input (x = jit(x); out may be the in array) keeps its values: the jit writes a
 * new buffer. Inputs must have the dtype, shape (variable dims included) and layout they had at the
 * capture (TKC_EINVAL naming the input otherwise: make another jit for that shape), and inputs that
 * were one tensor at the capture must be one at every replay; they are realized first. fn must not
 * free its inputs (TKC_EINVAL). Buffers updated in place (tkc_assign: parameters, optimizer state)
 * keep their updates across replays, so a captured train step trains. What fn does besides
 * launching kernels (host copies, reading values, branching on them) is not replayed. A failed capture leaves the jit empty: the next run captures again. Free jits before
 * their ctx. tkc_jit_kernels / tkc_jit_buffers: the launches and planned intermediate buffers of the
 * capture (0 before it). */
typedef struct tkc_jit tkc_jit;
typedef tkc_status (*tkc_jit_fn)(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user);
TKC_API tkc_jit *tkc_jit_new(tkc_ctx *ctx, tkc_jit_fn fn, void *user);
TKC_API tkc_status tkc_jit_run(tkc_jit *j, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout);
TKC_API void tkc_jit_free(tkc_jit *j);
TKC_API int tkc_jit_kernels(const tkc_jit *j);
TKC_API int tkc_jit_buffers(const tkc_jit *j);

/* ---------------------------------------------------------------- running */

/* Computes t (and what it needs) on the ctx's device. */
TKC_API tkc_status tkc_realize(tkc_tensor *t);
/* Computes n tensors in one schedule: what they share (a gradient read by several updates) is
 * computed once. NULL or freed tensors: TKC_EINVAL naming the index. */
TKC_API tkc_status tkc_realize_all(int n, tkc_tensor *const *ts);
/* In-place update: dst's buffer receives value at dst's next realize (tkc_realize / tkc_realize_all,
 * or any realize that reads dst). dst must own its whole buffer (tkc_tensor_new'd or realized, not a
 * view: TKC_EINVAL) and value must have its shape and dtype (TKC_ESHAPE); value may read dst (x =
 * x - lr * g): it reads the values from before the assign. Other views of dst's buffer see the new
 * values once it is realized, a jit replays the write into the same buffer, and dst keeps its
 * requires_grad and gradient. Kernels of one realize that read dst's old values run before the
 * write.
 * dst may also be a view of a tensor that owns its whole buffer, through reshapes, shrinks (also at
 * a variable offset: tkc_dim_var), permutes and flips (each element of the view one of the buffer;
 * an expand, pad or window, or a view of a lazy result: TKC_EINVAL): only the view's elements are
 * written, in place (tinygrad's cache[pos:pos+1].assign(row): one row of a KV cache per step, not the
 * whole cache). Every handle of that tensor becomes the tensor after the write, dst's handles the
 * same view of it; under a jit the offset takes each replay's value of the variable. No gradient
 * flows through such a write (the tensor stays a leaf). */
TKC_API tkc_status tkc_assign(tkc_tensor *dst, tkc_tensor *value);
/* Realizes t with these kernel opts (tkc/opts.h) for the kernel that computes t, instead of the
 * heuristics' (earlier kernels of its schedule keep theirs). TKC_EINVAL with the reason when an opt is
 * illegal for that kernel, when t is realized already or needs no kernel; nothing is run then. */
TKC_API tkc_status tkc_realize_opts(tkc_tensor *t, const tkc_opt *opts, int nopts);
/* Writes new data (row-major, nbytes = numel * itemsize) into a realized tensor that owns its whole
 * buffer (from tkc_tensor_new, or realized); graphs built on it see the new data when they are
 * realized, with the kernels compiled before. TKC_EINVAL for a lazy tensor or a view of another
 * tensor's buffer. Tensors realized earlier from it keep their values. */
TKC_API tkc_status tkc_copy_in(tkc_tensor *t, const void *src, size_t nbytes);
/* Scopes (see the top of this file): begin; end (TKC_EINVAL without a begin); keep returns t, or
 * NULL + TKC_EINVAL when t belongs to no scope. */
TKC_API tkc_status tkc_scope_begin(tkc_ctx *ctx);
TKC_API tkc_status tkc_scope_end(tkc_ctx *ctx);
TKC_API tkc_tensor *tkc_keep(tkc_tensor *t);
/* Moves t out of every scope (a cache made inside a caller's scope: only tkc_tensor_free or
 * tkc_ctx_free free it then) and returns it; t in no scope is returned as it is. NULL + error for a
 * NULL or freed t. */
TKC_API tkc_tensor *tkc_unscope(tkc_tensor *t);
/* Frees the built kernels and compiled code that no ctx is using right now. They are kept,
 * process-wide, so that a graph seen again (in any ctx) is not rebuilt; up to 4096 kernels. The
 * disk cache is not touched. */
TKC_API void tkc_cache_flush(void);
/* Realizes t if needed and copies it out row-major; nbytes must equal numel * itemsize. */
TKC_API tkc_status tkc_copy_out(tkc_tensor *t, void *dst, size_t nbytes);
/* What the realizes of a ctx have done so far: kernels launched and the seconds spent inside their
 * launches (the device's run time, without scheduling, compiling or allocating); kernels built
 * (opts, lowering, rendering, compiling: a kernel seen before in this process, on the same device
 * with the same opts, is taken from the kernel cache instead) and the seconds that took. */
typedef struct tkc_stats {
  int64_t kernels;
  double kernel_s;
  int64_t kernels_built;
  double build_s;
} tkc_stats;
/* Fills *out; TKC_EINVAL for a NULL ctx or out. */
TKC_API tkc_status tkc_ctx_stats(const tkc_ctx *ctx, tkc_stats *out);
/* Progress of long work, for a program to show (the library itself prints nothing unless
 * TKC_DEBUG >= 1 asks for a line per kernel on stderr): fn is called on the thread that realizes,
 * once per kernel a realize builds (cache hits are not reported), with the kernel's name, how many
 * of the realize's kernels to build are done and the seconds this one took. stage is "compile".
 * Kernels of one realize compile in parallel on the host devices (CPU, LLVM): done counts them in
 * the order they finish. fn NULL turns it off; TKC_EINVAL for a NULL ctx. */
typedef struct tkc_progress {
  const char *stage;
  const char *kernel;
  int done, total;
  double seconds;
} tkc_progress;
typedef void (*tkc_progress_fn)(const tkc_progress *p, void *user);
TKC_API tkc_status tkc_ctx_set_progress(tkc_ctx *ctx, tkc_progress_fn fn, void *user);
/* Beam search over kernel opts (as tinygrad's BEAM=N) for the kernels ctx's realizes build: each
 * kernel's opts are searched by timing candidates on the device, keeping the width fastest per
 * round, starting from no opts and the heuristics' opts (so never slower than either, as measured),
 * and the pick's output is checked against the kernel without opts (the heuristics' kernel where that
 * one would run too long) before it is used. The picks are
 * kept in the kernel cache and on disk (TKC_CACHE_DIR): a later process reuses them without
 * searching. width 0 turns it off, -1 (the default) takes $TKC_BEAM; TKC_BEAM_BUDGET bounds the
 * seconds per kernel (default 60). A search reports progress with stage "search" and its time at
 * TKC_DEBUG >= 1. Not on INTERP (no renderer to time). TKC_EINVAL for a NULL ctx or a width
 * outside [-1, 64]. */
TKC_API tkc_status tkc_ctx_set_beam(tkc_ctx *ctx, int width);
/* Number of kernels t's schedule still needs (0 once realized); -1 on error. */
TKC_API int tkc_kernel_count(tkc_tensor *t);
/* The kernels of t's schedule rendered for renderer "C", "LLVM", "PTX" or "WGSL" (lowered for that
 * renderer's capabilities whatever the ctx's device), concatenated. Malloc'ed: free with tkc_free.
 * NULL on error. Does not run anything. */
TKC_API char *tkc_kernels_source(tkc_tensor *t, const char *renderer);
/* Writes the schedule that realizing t would run as a Graphviz dot file at path, without running
 * anything: each kernel a box (its number, its name as TKC_DEBUG prints it, its opts, its output),
 * each buffer an ellipse (dtype and shape; realized inputs filled grey), edges buffer -> kernel
 * ("reads", with the kernel's argument number) and kernel -> buffer ("writes"). A realized t gives a
 * graph without kernels. TKC_EINVAL for a NULL t or path; TKC_ERUNTIME when path cannot be written.
 * Render it with `dot -Tpng schedule.dot -o schedule.png`. */
TKC_API tkc_status tkc_schedule_dot(tkc_tensor *t, const char *path);
/* Writes kernel kernel_index (0 .. tkc_kernel_count(t) - 1, in schedule order) of t's schedule,
 * lowered to UOps for the ctx's device as a realize would build it, as a Graphviz dot file: a node per
 * UOp (number, op, dtype, arg), an edge from each source to its user. Nothing is compiled or run.
 * TKC_EINVAL for a NULL t or path or an index out of range; TKC_ERUNTIME when path cannot be written. */
TKC_API tkc_status tkc_kernel_uops_dot(tkc_tensor *t, int kernel_index, const char *path);

#ifdef __cplusplus
}
#endif

/* the rest of the tensor API, by area (each header's ops are compositions of the ops above) */
#include "tkc/ops_math.h"  /* elementwise math, reductions, scans */
#include "tkc/ops_shape.h" /* cat/stack/split, squeeze, repeat, tril/triu, indexing, sort */
#include "tkc/ops_nn.h"    /* normalization, convolutions, pooling, attention, losses */
#include "tkc/io.h"        /* model files: safetensors, GGUF */
#endif
