/* Random tensors from a generator that lives on the device (tkc_manual_seed, tkc_randn,
 * tkc_rand_uniform, tkc_kaiming_uniform, tkc_glorot_uniform, tkc_dropout).
 *
 * The ctx's generator is a realized uint32 tensor {k0, k1, counter} (ctx->rng, made on first use
 * from seed 0). A draw of n values is a lazy graph of the counter-based Threefry-2x32-20 block
 * cipher (Random123) keyed by (k0, k1) over the counters (stream * n + i, counter), i < n, read
 * from that buffer by the kernel; the draw then advances the counter with tkc_assign and realizes
 * the values and the advance in one schedule (the values' kernel reads the old counter first). So
 * the state never leaves the device: a jit records both kernels, and every replay draws new values
 * and advances the counter again, as tinygrad's device-side RNG counter does. tkc_rand (the host
 * generator with an explicit seed, tensor.c) is separate and unchanged. */
#include <math.h>
#include <string.h>
#include "graph/tensor_internal.h"

#define RNG_WORDS 3 /* k0, k1, counter */

static void seed_words(uint64_t seed, uint32_t w[RNG_WORDS]) {
  uint64_t k = tkc_splitmix64(seed); /* nearby seeds spread over the whole key space */
  w[0] = (uint32_t)k, w[1] = (uint32_t)(k >> 32), w[2] = 0;
}

static tkc_status new_state(tkc_ctx *ctx, uint64_t seed) {
  uint32_t w[RNG_WORDS];
  seed_words(seed, w);
  const int64_t shape[1] = {RNG_WORDS};
  tkc_tensor *t = tkc_tensor_new(ctx, TKC_UINT32, 1, shape, w);
  if (!t) return tkc_last_status();
  t->scope = 0; /* the ctx's own: no scope of the caller's frees it (tkc_ctx_free does) */
  ctx->rng = t;
  return TKC_OK;
}

tkc_status tkc_manual_seed(tkc_ctx *ctx, uint64_t seed) {
  if (!ctx) return tkc_err(TKC_EINVAL, "manual_seed: NULL ctx");
  if (!ctx->rng) return new_state(ctx, seed);
  /* the same buffer: jits that captured draws see the new seed too (as tinygrad resets its counter) */
  tkc_status st = tkc_realize(ctx->rng); /* an advance left pending by a failed draw */
  uint32_t w[RNG_WORDS];
  seed_words(seed, w);
  return st ? st : tkc_copy_in(ctx->rng, w, sizeof w);
}

/* ---------------------------------------------------------------- building blocks
 * Every helper returns a new handle (NULL keeps the first error) and consumes nothing, except own(),
 * which frees the handles a result replaced. */

static tkc_tensor *own(tkc_tensor *result, tkc_tensor *a, tkc_tensor *b) {
  tkc_tensor_free(a);
  tkc_tensor_free(b);
  return result;
}

typedef tkc_tensor *(*binop)(tkc_tensor *, tkc_tensor *);

/* a op constant c (of a's dtype) */
static tkc_tensor *op_c(binop f, tkc_tensor *a, double c) {
  if (!a) return NULL;
  tkc_tensor *s = tkc_scalar(a->ctx, tkc_dtype_of(a), c);
  return own(s ? f(a, s) : NULL, s, NULL);
}

static tkc_tensor *rotl(tkc_tensor *x, int r) {
  tkc_tensor *l = op_c(tkc_shl, x, r), *h = op_c(tkc_shr, x, 32 - r);
  return own(l && h ? tkc_or(l, h) : NULL, l, h);
}

/* word i of the state: shape (1,), broadcasting against the counters */
static tkc_tensor *state_word(tkc_tensor *state, int i) {
  const int64_t range[2] = {i, i + 1};
  return tkc_shrink(state, range);
}

/* Threefry-2x32 with 20 rounds (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3"):
 * the block of counters (c0, c1) under key (k0, k1); c0 (n,) and the key and c1 (1,) uint32. */
static const int ROT[8] = {13, 15, 26, 6, 17, 29, 16, 24};

static void threefry(tkc_tensor *k0, tkc_tensor *k1, tkc_tensor *c0, tkc_tensor *c1, tkc_tensor **out0, tkc_tensor **out1) {
  tkc_tensor *ks[3] = {k0, k1, NULL};
  tkc_tensor *kx = k0 && k1 ? tkc_xor(k0, k1) : NULL;
  ks[2] = own(op_c(tkc_xor, kx, 0x1BD11BDA), kx, NULL);
  tkc_tensor *x0 = c0 && k0 ? tkc_add(c0, k0) : NULL, *x1 = c1 && k1 ? tkc_add(c1, k1) : NULL;
  for (int r = 0; r < 20; r++) {
    x0 = own(x0 && x1 ? tkc_add(x0, x1) : NULL, x0, NULL);
    x1 = own(x1 ? rotl(x1, ROT[r % 8]) : NULL, x1, NULL);
    x1 = own(x0 && x1 ? tkc_xor(x1, x0) : NULL, x1, NULL);
    if (r % 4 == 3) { /* key injection s */
      int s = r / 4 + 1;
      x0 = own(x0 && ks[s % 3] ? tkc_add(x0, ks[s % 3]) : NULL, x0, NULL);
      x1 = own(x1 && ks[(s + 1) % 3] ? tkc_add(x1, ks[(s + 1) % 3]) : NULL, x1, NULL);
      x1 = own(op_c(tkc_add, x1, s), x1, NULL);
    }
  }
  tkc_tensor_free(ks[2]);
  *out0 = x0, *out1 = x1;
}

/* The random 32-bit words of stream `stream` of a draw of n values: both words of the blocks at
 * counters (stream * n + i, counter). */
static void random_words(tkc_tensor *state, int64_t n, int stream, tkc_tensor **w0, tkc_tensor **w1) {
  tkc_tensor *k0 = state_word(state, 0), *k1 = state_word(state, 1), *ctr = state_word(state, 2);
  tkc_tensor *c0 = tkc_arange(state->ctx, TKC_UINT32, (double)(stream * n), (double)((stream + 1) * n), 1);
  threefry(k0, k1, c0, ctr, w0, w1);
  tkc_tensor_free(k0);
  tkc_tensor_free(k1);
  tkc_tensor_free(ctr);
  tkc_tensor_free(c0);
}

/* Uniform [0, 1) (n,) in work_dtype(dt) from stream `stream`: k/2^m for a random m-bit k, m the
 * precision of dt (53, 24, 11 for float16, 8 for bfloat16), so rounding to dt is exact and never
 * gives 1. float64 joins 27 bits of one word and 26 of the other. */
static tkc_tensor *uniform01(tkc_tensor *state, tkc_dtype dt, int64_t n, int stream) {
  tkc_tensor *w0, *w1;
  random_words(state, n, stream, &w0, &w1);
  tkc_tensor *u;
  if (dt == TKC_FLOAT64) {
    tkc_tensor *hi = op_c(tkc_shr, w0, 5), *lo = op_c(tkc_shr, w1, 6);
    hi = own(hi ? tkc_cast(hi, TKC_FLOAT64) : NULL, hi, NULL);
    lo = own(lo ? tkc_cast(lo, TKC_FLOAT64) : NULL, lo, NULL);
    hi = own(op_c(tkc_mul, hi, 0x1p-27), hi, NULL); /* hi * 2^26 * 2^-53 */
    lo = own(op_c(tkc_mul, lo, 0x1p-53), lo, NULL);
    u = own(hi && lo ? tkc_add(hi, lo) : NULL, hi, lo);
  } else {
    int m = dt == TKC_FLOAT16 ? 11 : dt == TKC_BFLOAT16 ? 8 : 24;
    tkc_tensor *k = op_c(tkc_shr, w0, 32 - m);
    k = own(k ? tkc_cast(k, TKC_FLOAT32) : NULL, k, NULL);
    u = own(op_c(tkc_mul, k, ldexp(1, -m)), k, NULL);
  }
  return own(u, w0, w1);
}

/* ---------------------------------------------------------------- draws */

typedef struct draw {
  tkc_ctx *ctx;
  const char *who;
  tkc_tensor *state;
  int64_t n;
} draw;

/* Checks ctx, a float dtype dt (any dtype when dt is TKC_VOID) and a fixed shape of < 2^31 elements,
 * and gets the ctx's generator. */
static tkc_status draw_begin(draw *d, const char *who, tkc_ctx *ctx, tkc_dtype dt, int ndim, const int64_t *shape) {
  *d = (draw){.ctx = ctx, .who = who};
  if (!ctx) return tkc_err(TKC_EINVAL, "%s: NULL ctx", who);
  if (dt != TKC_VOID) {
    if (!tkc_dtype_is_float(dt)) return tkc_err(TKC_EDTYPE, "%s: makes floats (float16, bfloat16, float32, float64), not %s", who, tkc_dtype_str(dt));
    if (tkc_ctx_check_dtype(ctx, dt, who)) return tkc_last_status();
  }
  if (ndim < 0 || ndim > TKC_MAX_DIMS) return tkc_err(TKC_ESHAPE, "%s: tensors have 0..%d dims, not %d", who, TKC_MAX_DIMS, ndim);
  if (ndim && !shape) return tkc_err(TKC_EINVAL, "%s: NULL shape for %d dims", who, ndim);
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) {
    if (tkc_dim_is_var(shape[i]))
      return tkc_err(TKC_EUNSUPPORTED, "%s: shape %s: dim %d has a variable length (random tensors have fixed shapes)", who,
                     TKC_SHAPE_STR(ndim, shape), i);
    if (shape[i] < 0) return tkc_err(TKC_ESHAPE, "%s: shape %s: dim %d is negative (%lld)", who, TKC_SHAPE_STR(ndim, shape), i, (long long)shape[i]);
    n = shape[i] && n > INT32_MAX / shape[i] ? (int64_t)INT32_MAX + 1 : n * shape[i];
  }
  if (n > INT32_MAX) return tkc_err(TKC_ESHAPE, "%s: shape %s has 2^31 or more elements", who, TKC_SHAPE_STR(ndim, shape));
  if (!ctx->rng && new_state(ctx, 0)) return tkc_last_status();
  d->state = ctx->rng, d->n = n;
  return TKC_OK;
}

/* Realizes values (n,) as a contiguous tensor of shape (ndim, shape) together with the generator's
 * advance (counter + 1); values is consumed. */
static tkc_tensor *draw_end(draw *d, tkc_tensor *values, int ndim, const int64_t *shape) {
  tkc_tensor *r = values ? tkc_reshape(values, ndim, shape) : NULL;
  tkc_tensor *c = own(r ? tkc_contiguous(r) : NULL, r, values);
  if (!c) return NULL;
  const int64_t one = 1, pads[2] = {RNG_WORDS - 1, 0};
  tkc_tensor *s1 = tkc_full(d->ctx, TKC_UINT32, 1, &one, 1), *inc = s1 ? tkc_pad(s1, pads, 0) : NULL; /* {0, 0, 1} */
  tkc_tensor *next = own(inc ? tkc_add(d->state, inc) : NULL, s1, inc);
  tkc_status st = next ? tkc_assign(d->state, next) : tkc_last_status();
  tkc_tensor_free(next);
  tkc_tensor *both[2] = {c, d->state};
  if (!st) st = tkc_realize_all(2, both);
  if (st) {
    tkc_tensor_free(c);
    return NULL;
  }
  return c;
}

/* n == 0: an empty tensor, and the generator is not advanced */
static tkc_tensor *empty(draw *d, tkc_dtype dt, int ndim, const int64_t *shape) { return tkc_full(d->ctx, dt, ndim, shape, 0); }

tkc_tensor *tkc_rand_uniform(tkc_ctx *ctx, tkc_dtype dt, int ndim, const int64_t *shape, double lo, double hi) {
  draw d;
  if (draw_begin(&d, "rand_uniform", ctx, dt, ndim, shape)) return NULL;
  if (!isfinite(lo) || !isfinite(hi) || !isfinite(hi - lo) || lo > hi)
    return tkc_err_null(TKC_EINVAL, "rand_uniform: needs finite lo <= hi (and a finite hi - lo), not [%g, %g)", lo, hi);
  if (!d.n) return empty(&d, dt, ndim, shape);
  /* as tinygrad's Tensor.uniform: (hi - lo) * u + lo */
  tkc_tensor *u = uniform01(d.state, dt, d.n, 0);
  tkc_tensor *v = own(op_c(tkc_mul, u, hi - lo), u, NULL);
  v = own(op_c(tkc_add, v, lo), v, NULL);
  v = own(v ? tkc_cast(v, dt) : NULL, v, NULL);
  return draw_end(&d, v, ndim, shape);
}

tkc_tensor *tkc_randn(tkc_ctx *ctx, tkc_dtype dt, int ndim, const int64_t *shape) {
  draw d;
  if (draw_begin(&d, "randn", ctx, dt, ndim, shape)) return NULL;
  if (!d.n) return empty(&d, dt, ndim, shape);
  /* Box-Muller as tinygrad's Tensor.randn: cos(2 pi u1) * sqrt(-2 log(1 - u2)); 1 - u2 is in (0, 1] */
  tkc_tensor *u1 = uniform01(d.state, dt, d.n, 0), *u2 = uniform01(d.state, dt, d.n, 1);
  tkc_tensor *a = own(op_c(tkc_mul, u1, 6.283185307179586), u1, NULL);
  a = own(a ? tkc_cos(a) : NULL, a, NULL);
  tkc_tensor *one = u2 ? tkc_scalar(ctx, tkc_dtype_of(u2), 1) : NULL;
  tkc_tensor *r = own(one ? tkc_sub(one, u2) : NULL, one, u2);
  r = own(r ? tkc_log(r) : NULL, r, NULL);
  r = own(op_c(tkc_mul, r, -2), r, NULL);
  r = own(r ? tkc_sqrt(r) : NULL, r, NULL);
  tkc_tensor *v = own(a && r ? tkc_mul(a, r) : NULL, a, r);
  v = own(v ? tkc_cast(v, dt) : NULL, v, NULL);
  return draw_end(&d, v, ndim, shape);
}

/* prod(shape[1:]) of a shape whose dims were checked; ndim >= 1 */
static double fan_in(int ndim, const int64_t *shape) {
  double f = 1;
  for (int i = 1; i < ndim; i++) f *= (double)shape[i];
  return f;
}

static tkc_tensor *init_uniform(const char *who, tkc_ctx *ctx, tkc_dtype dt, int ndim, const int64_t *shape, int glorot, double a) {
  draw d;
  if (draw_begin(&d, who, ctx, dt, ndim, shape)) return NULL;
  if (ndim < 1) return tkc_err_null(TKC_ESHAPE, "%s: needs at least 1 dim (shape[0] is the fan out, the rest the fan in)", who);
  double fin = fan_in(ndim, shape), den = glorot ? (double)shape[0] + fin : fin;
  if (den == 0) return tkc_err_null(TKC_EINVAL, "%s: shape %s: the fan %s is 0 (tinygrad divides by it)", who, TKC_SHAPE_STR(ndim, shape), glorot ? "in + out" : "in");
  if (!glorot && !isfinite(a)) return tkc_err_null(TKC_EINVAL, "%s: a must be finite, not %g", who, a);
  double bound = glorot ? sqrt(6 / den) : sqrt(3.0) * sqrt(2.0 / (1 + a * a)) / sqrt(fin);
  return tkc_rand_uniform(ctx, dt, ndim, shape, -bound, bound);
}

tkc_tensor *tkc_kaiming_uniform(tkc_ctx *ctx, tkc_dtype dt, int ndim, const int64_t *shape, double a) {
  return init_uniform("kaiming_uniform", ctx, dt, ndim, shape, 0, a);
}

tkc_tensor *tkc_glorot_uniform(tkc_ctx *ctx, tkc_dtype dt, int ndim, const int64_t *shape) {
  return init_uniform("glorot_uniform", ctx, dt, ndim, shape, 1, 0);
}

tkc_tensor *tkc_dropout(tkc_tensor *x, double p, int training) {
  if (tkc_check(x)) return NULL;
  tkc_dtype dt = tkc_dtype_of(x);
  if (!tkc_dtype_is_float(dt)) return tkc_err_null(TKC_EDTYPE, "dropout: x must be a float tensor, not %s", tkc_dtype_str(dt));
  if (!(p >= 0 && p < 1)) return tkc_err_null(TKC_EINVAL, "dropout: p must be in [0, 1), not %g", p);
  if (!training || p == 0) return tkc_tensor_ref(x);
  int64_t shape[TKC_MAX_DIMS];
  int ndim = tkc_ndim(x);
  for (int i = 0; i < ndim; i++) shape[i] = tkc_dim(x, i);
  draw d;
  if (draw_begin(&d, "dropout", x->ctx, TKC_VOID, ndim, shape)) return NULL;
  if (!d.n) return tkc_tensor_ref(x);
  /* as tinygrad: keep where rand >= p (a float32 uniform), then scale by 1 / (1 - p) */
  tkc_tensor *u = uniform01(d.state, TKC_FLOAT32, d.n, 0);
  tkc_tensor *keep = own(op_c(tkc_ge, u, p), u, NULL);
  keep = draw_end(&d, keep, ndim, shape);
  tkc_tensor *scaled = op_c(tkc_mul, x, 1.0 / (1.0 - p)), *zero = tkc_scalar(x->ctx, dt, 0);
  return own(own(keep && scaled && zero ? tkc_where(keep, scaled, zero) : NULL, keep, scaled), zero, NULL);
}
