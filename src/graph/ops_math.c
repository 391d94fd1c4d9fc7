/* Elementwise math and reductions of tkc/ops_math.h (scans: ops_scan.c), composed from the tensor API as
 * composite.c composes matmul: no new node kinds, so everything fuses as the primitives do.
 * Each function keeps its temporaries in a `tmps` list and frees them all but the result at the
 * end; every helper passes NULL through, so a chain needs one check (done() returns NULL then). */
#include <math.h>
#include <string.h>
#include "graph/tensor_internal.h"

/* ---------------------------------------------------------------- temporaries */

typedef tkc_temps tmps;
static tkc_tensor *K(tmps *s, tkc_tensor *x) { return tkc_temp(s, x); }
static tkc_tensor *done(tmps *s, tkc_tensor *r) { return tkc_temps_done(s, r); } /* frees every temporary but r */
static tkc_dtype dt_of(const tkc_tensor *t) { return tkc_dtype_of(t); }

static tkc_tensor *cst(tmps *s, tkc_tensor *like, double v) { return like ? K(s, tkc_scalar(like->ctx, dt_of(like), v)) : NULL; }
static tkc_tensor *add(tmps *s, tkc_tensor *a, tkc_tensor *b) { return K(s, tkc_add(a, b)); }
static tkc_tensor *sub(tmps *s, tkc_tensor *a, tkc_tensor *b) { return K(s, tkc_sub(a, b)); }
static tkc_tensor *mul(tmps *s, tkc_tensor *a, tkc_tensor *b) { return K(s, tkc_mul(a, b)); }
static tkc_tensor *dvd(tmps *s, tkc_tensor *a, tkc_tensor *b) { return K(s, tkc_div(a, b)); }
static tkc_tensor *addc(tmps *s, tkc_tensor *a, double c) { return add(s, a, cst(s, a, c)); }
static tkc_tensor *mulc(tmps *s, tkc_tensor *a, double c) { return mul(s, a, cst(s, a, c)); }
static tkc_tensor *csub(tmps *s, double c, tkc_tensor *a) { return sub(s, cst(s, a, c), a); }
static tkc_tensor *lt(tmps *s, tkc_tensor *a, tkc_tensor *b) { return K(s, tkc_lt(a, b)); }
static tkc_tensor *ltc(tmps *s, tkc_tensor *a, double c) { return lt(s, a, cst(s, a, c)); }
static tkc_tensor *gtc(tmps *s, tkc_tensor *a, double c) { return K(s, tkc_gt(a, cst(s, a, c))); }
static tkc_tensor *eqc(tmps *s, tkc_tensor *a, double c) { return K(s, tkc_eq(a, cst(s, a, c))); }
static tkc_tensor *nec(tmps *s, tkc_tensor *a, double c) { return K(s, tkc_ne(a, cst(s, a, c))); }
static tkc_tensor *and2(tmps *s, tkc_tensor *a, tkc_tensor *b) { return K(s, tkc_and(a, b)); }
static tkc_tensor *or2(tmps *s, tkc_tensor *a, tkc_tensor *b) { return K(s, tkc_or(a, b)); }
static tkc_tensor *wh(tmps *s, tkc_tensor *c, tkc_tensor *a, tkc_tensor *b) { return K(s, tkc_where(c, a, b)); }
/* c ? v : b, v a constant of b's dtype */
static tkc_tensor *whc(tmps *s, tkc_tensor *c, double v, tkc_tensor *b) { return wh(s, c, cst(s, b, v), b); }
static tkc_tensor *neg(tmps *s, tkc_tensor *a) { return K(s, tkc_neg(a)); }
static tkc_tensor *fabs_(tmps *s, tkc_tensor *a) { return K(s, tkc_abs(a)); }
static tkc_tensor *cast(tmps *s, tkc_tensor *a, tkc_dtype dt) { return K(s, tkc_cast(a, dt)); }
static tkc_tensor *exp_(tmps *s, tkc_tensor *a) { return K(s, tkc_exp(a)); }
static tkc_tensor *log_(tmps *s, tkc_tensor *a) { return K(s, tkc_log(a)); }
static tkc_tensor *sqrt_(tmps *s, tkc_tensor *a) { return K(s, tkc_sqrt(a)); }
static tkc_tensor *recip(tmps *s, tkc_tensor *a) { return K(s, tkc_recip(a)); }
static tkc_tensor *reshape(tmps *s, tkc_tensor *a, int ndim, const int64_t *shape) { return K(s, tkc_reshape(a, ndim, shape)); }

/* c[0] + z (c[1] + z (c[2] + ...)) */
static tkc_tensor *poly(tmps *s, tkc_tensor *z, const double *c, int n) {
  tkc_tensor *r = cst(s, z, c[n - 1]);
  for (int i = n - 2; i >= 0; i--) r = addc(s, mul(s, r, z), c[i]);
  return r;
}

/* the float dtype ints and bool promote to (as tkc_sqrt), and the one math is computed in */
static tkc_dtype float_of(tkc_dtype dt) { return tkc_dtype_is_float(dt) ? dt : tkc_least_upper_dtype(dt, TKC_FLOAT32); }

/* signbit(x) for a float32/float64 x, from its bits */
static tkc_tensor *signbit_(tmps *s, tkc_tensor *x) {
  tkc_tensor *b = K(s, tkc_bitcast(x, dt_of(x) == TKC_FLOAT64 ? TKC_INT64 : TKC_INT32));
  return ltc(s, b, 0);
}

/* (bits << 1) compared with the exponent mask << 1: -1 / 0 / 1 kind of test for nan, inf, finite.
 * x is float32 or float64. */
static tkc_tensor *class_test(tmps *s, tkc_tensor *x, int which) {
  int wide = dt_of(x) == TKC_FLOAT64;
  tkc_tensor *b = K(s, tkc_bitcast(x, wide ? TKC_UINT64 : TKC_UINT32));
  tkc_tensor *b2 = K(s, tkc_shl(b, cst(s, b, 1)));
  tkc_tensor *m = cst(s, b, wide ? 18446744073709551616.0 - 9007199254740992.0 : 4278190080.0); /* 0xffe0.. / 0xff000000 */
  return which == 0 ? K(s, tkc_gt(b2, m)) : which == 1 ? K(s, tkc_eq(b2, m)) : lt(s, b2, m);
}

/* ---------------------------------------------------------------- elementwise */

typedef tkc_tensor *(*body_fn)(tmps *s, tkc_tensor *x, const double *p);

/* the frame of a math function: a checked, promoted to float (ints, bool) and computed in float32
 * (float16, bfloat16); the result in the promoted dtype */
static tkc_tensor *math1(tkc_tensor *a, body_fn body, const double *p) {
  if (tkc_check(a)) return NULL;
  tmps s = {.n = 0};
  tkc_dtype out = float_of(dt_of(a));
  tkc_tensor *x = cast(&s, a, tkc_dtype_work(out));
  return done(&s, cast(&s, body(&s, x, p), out));
}

tkc_tensor *tkc_clamp(tkc_tensor *a, double lo, double hi) {
  if (tkc_check(a)) return NULL;
  tkc_dtype dt = dt_of(a);
  if (dt == TKC_BOOL) return tkc_err_null(TKC_EDTYPE, "clamp does not accept bool");
  if (isnan(lo) || isnan(hi)) return tkc_err_null(TKC_EINVAL, "clamp: a NaN bound");
  if (!tkc_dtype_is_float(dt)) { /* inwards, then saturated (64-bit: to the largest double below the limit) */
    int bits = 8 * (int)tkc_dtype_size(dt);
    double mn = (double)tkc_dtype_min(dt), mx = ldexp(1.0, tkc_dtype_is_unsigned(dt) ? bits : bits - 1) - 1;
    if (bits == 64) mx = nextafter(mx, 0);
    lo = fmin(fmax(ceil(lo), mn), mx);
    hi = fmin(fmax(floor(hi), mn), mx);
  }
  tmps s = {.n = 0};
  tkc_tensor *m = wh(&s, ltc(&s, a, lo), cst(&s, a, lo), a);
  return done(&s, wh(&s, gtc(&s, m, hi), cst(&s, a, hi), m));
}

enum { R_TRUNC, R_FLOOR, R_CEIL, R_ROUND };

/* Exact rounding. For |x| < 2^mant (and x != 0) the integral part fits an int: ta = float(int(|x|));
 * larger values, inf, NaN and zeros are integral already and pass through. Signs come back by
 * negation, so -0.5 truncates to -0.0. */
static tkc_tensor *rounding(tkc_tensor *a, int mode) {
  if (tkc_check(a)) return NULL;
  tkc_dtype dt = dt_of(a);
  if (dt == TKC_BOOL) return tkc_err_null(TKC_EDTYPE, "%s does not accept bool", (const char *[]){"trunc", "floor", "ceil", "round"}[mode]);
  if (!tkc_dtype_is_float(dt)) return tkc_cast(a, dt); /* integral already */
  tmps s = {.n = 0};
  tkc_dtype w = tkc_dtype_work(dt);
  tkc_tensor *x = cast(&s, a, w), *ax = fabs_(&s, x);
  tkc_tensor *small = and2(&s, ltc(&s, ax, w == TKC_FLOAT64 ? 0x1p52 : 0x1p23), nec(&s, x, 0));
  tkc_tensor *ia = cast(&s, wh(&s, small, ax, cst(&s, ax, 0)), w == TKC_FLOAT64 ? TKC_INT64 : TKC_INT32);
  tkc_tensor *ta = cast(&s, ia, w), *r;
  if (mode == R_ROUND) { /* up when the fraction is > 1/2, or = 1/2 and the integral part odd */
    tkc_tensor *d = sub(&s, ax, ta);
    tkc_tensor *odd = nec(&s, and2(&s, ia, cst(&s, ia, 1)), 0);
    tkc_tensor *up = or2(&s, gtc(&s, d, 0.5), and2(&s, eqc(&s, d, 0.5), odd));
    ta = wh(&s, up, addc(&s, ta, 1), ta);
  }
  r = wh(&s, ltc(&s, x, 0), neg(&s, ta), ta); /* trunc(x), or round(x) */
  if (mode == R_FLOOR) r = wh(&s, K(&s, tkc_gt(r, x)), addc(&s, r, -1), r);
  if (mode == R_CEIL) r = wh(&s, lt(&s, r, x), addc(&s, r, 1), r);
  return done(&s, cast(&s, wh(&s, small, r, x), dt));
}

tkc_tensor *tkc_trunc(tkc_tensor *a) { return rounding(a, R_TRUNC); }
tkc_tensor *tkc_floor(tkc_tensor *a) { return rounding(a, R_FLOOR); }
tkc_tensor *tkc_ceil(tkc_tensor *a) { return rounding(a, R_CEIL); }
tkc_tensor *tkc_round(tkc_tensor *a) { return rounding(a, R_ROUND); }

tkc_tensor *tkc_square(tkc_tensor *a) { return tkc_mul(a, a); }

tkc_tensor *tkc_sign(tkc_tensor *a) {
  if (tkc_check(a)) return NULL;
  if (dt_of(a) == TKC_BOOL) return tkc_err_null(TKC_EDTYPE, "sign does not accept bool");
  tmps s = {.n = 0};
  tkc_tensor *mid = tkc_dtype_is_float(dt_of(a)) ? a : cst(&s, a, 0); /* floats: +-0 and NaN as they are */
  return done(&s, whc(&s, gtc(&s, a, 0), 1, whc(&s, ltc(&s, a, 0), -1, mid)));
}

static tkc_tensor *b_rsqrt(tmps *s, tkc_tensor *x, const double *p) { return recip(s, sqrt_(s, x)); }
tkc_tensor *tkc_rsqrt(tkc_tensor *a) { return math1(a, b_rsqrt, NULL); }

/* erf for |x| < 1: x P(x^2), P fitted (relative error 1.2e-9) */
static const double ERF_P[] = {1.128379165716023, -0.37612625746605366, 0.1128358423813633, -0.026853772950967084,
                               0.005188252313123468, -0.00080095223955412, 7.851620696252087e-05};
/* erfc(z) for z >= 0 (Numerical Recipes' erfcc: t exp(-z^2 + Q(t)), t = 1 / (1 + z/2); fractional
 * error < 1.2e-7 everywhere) */
static const double ERFC_Q[] = {-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
                                0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277};

static tkc_tensor *erfc_pos(tmps *s, tkc_tensor *z) {
  tkc_tensor *t = recip(s, addc(s, mulc(s, z, 0.5), 1));
  tkc_tensor *e = sub(s, poly(s, t, ERFC_Q, 10), mul(s, z, z));
  return mul(s, t, exp_(s, e));
}

static tkc_tensor *erf_(tmps *s, tkc_tensor *x) {
  tkc_tensor *ax = fabs_(s, x);
  tkc_tensor *small = mul(s, x, poly(s, mul(s, x, x), ERF_P, 7));
  tkc_tensor *c = erfc_pos(s, ax);
  tkc_tensor *big = wh(s, ltc(s, x, 0), addc(s, c, -1), csub(s, 1, c));
  return wh(s, ltc(s, ax, 1), small, big);
}
static tkc_tensor *b_erf(tmps *s, tkc_tensor *x, const double *p) { return erf_(s, x); }
tkc_tensor *tkc_erf(tkc_tensor *a) { return math1(a, b_erf, NULL); }

static tkc_tensor *b_gelu(tmps *s, tkc_tensor *x, const double *p) {
  if (p[0]) { /* x sigmoid(2y) = 0.5 x (1 + tanh(y)), y = sqrt(2/pi) (x + 0.044715 x^3) */
    tkc_tensor *y = mulc(s, add(s, x, mulc(s, mul(s, x, mul(s, x, x)), 0.044715)), 2 * 0.7978845608028654);
    return mul(s, x, K(s, tkc_sigmoid(y)));
  }
  tkc_tensor *u = mulc(s, x, 0.7071067811865476); /* 1 + erf(u) = erfc(-u) for u < -1 */
  tkc_tensor *q = wh(s, ltc(s, u, -1), erfc_pos(s, neg(s, u)), addc(s, erf_(s, u), 1));
  return mul(s, mulc(s, x, 0.5), q);
}
tkc_tensor *tkc_gelu(tkc_tensor *a, int tanh_approx) { return math1(a, b_gelu, (const double[]){tanh_approx != 0}); }

static tkc_tensor *b_silu(tmps *s, tkc_tensor *x, const double *p) { return mul(s, x, K(s, tkc_sigmoid(x))); }
tkc_tensor *tkc_silu(tkc_tensor *a) { return math1(a, b_silu, NULL); }

static tkc_tensor *b_leaky(tmps *s, tkc_tensor *x, const double *p) { return wh(s, ltc(s, x, 0), mulc(s, x, p[0]), x); }
tkc_tensor *tkc_leaky_relu(tkc_tensor *a, double slope) {
  if (isnan(slope)) return tkc_err_null(TKC_EINVAL, "leaky_relu: NaN slope");
  return math1(a, b_leaky, &slope);
}

/* expm1 (Kahan): u = e^x; x when u == 1, -1 when u - 1 == -1, else (u - 1) x / log u */
static tkc_tensor *expm1_(tmps *s, tkc_tensor *x) {
  tkc_tensor *u = exp_(s, x), *um = addc(s, u, -1);
  tkc_tensor *r = mul(s, um, dvd(s, x, log_(s, u)));
  r = wh(s, eqc(s, u, INFINITY), u, r);
  r = whc(s, eqc(s, um, -1), -1, r);
  return wh(s, eqc(s, u, 1), x, r);
}
static tkc_tensor *b_expm1(tmps *s, tkc_tensor *x, const double *p) { return expm1_(s, x); }
tkc_tensor *tkc_expm1(tkc_tensor *a) { return math1(a, b_expm1, NULL); }

/* log1p (Goldberg): u = 1 + x; x when u == 1, else log(u) x / (u - 1) (log u when u is inf) */
static tkc_tensor *log1p_(tmps *s, tkc_tensor *x) {
  tkc_tensor *u = addc(s, x, 1), *l = log_(s, u);
  tkc_tensor *r = wh(s, eqc(s, u, INFINITY), l, mul(s, l, dvd(s, x, addc(s, u, -1))));
  return wh(s, eqc(s, u, 1), x, r);
}
static tkc_tensor *b_log1p(tmps *s, tkc_tensor *x, const double *p) { return log1p_(s, x); }
tkc_tensor *tkc_log1p(tkc_tensor *a) { return math1(a, b_log1p, NULL); }

static tkc_tensor *b_elu(tmps *s, tkc_tensor *x, const double *p) {
  return wh(s, gtc(s, x, 0), mulc(s, x, p[1]), mulc(s, expm1_(s, x), p[0] * p[1]));
}
tkc_tensor *tkc_elu(tkc_tensor *a, double alpha) {
  if (isnan(alpha)) return tkc_err_null(TKC_EINVAL, "elu: NaN alpha");
  return math1(a, b_elu, (const double[]){alpha, 1});
}
tkc_tensor *tkc_selu(tkc_tensor *a) { return math1(a, b_elu, (const double[]){1.6732632423543772, 1.0507009873554805}); }

static tkc_tensor *b_softplus(tmps *s, tkc_tensor *x, const double *p) {
  tkc_tensor *bx = mulc(s, x, p[0]);
  tkc_tensor *r = add(s, wh(s, gtc(s, bx, 0), bx, cst(s, bx, 0)), log1p_(s, exp_(s, neg(s, fabs_(s, bx)))));
  return mulc(s, r, 1 / p[0]);
}
tkc_tensor *tkc_softplus(tkc_tensor *a, double beta) {
  if (!(beta > 0) || isinf(beta)) return tkc_err_null(TKC_EINVAL, "softplus: beta must be finite and > 0");
  return math1(a, b_softplus, &beta);
}

/* relu6(x + 3) / 6 */
static tkc_tensor *hardsig(tmps *s, tkc_tensor *x) {
  tkc_tensor *h = addc(s, x, 3);
  h = whc(s, ltc(s, h, 0), 0, whc(s, gtc(s, h, 6), 6, h));
  return mulc(s, h, 1.0 / 6);
}
static tkc_tensor *b_hardsigmoid(tmps *s, tkc_tensor *x, const double *p) { return hardsig(s, x); }
static tkc_tensor *b_hardswish(tmps *s, tkc_tensor *x, const double *p) { return mul(s, x, hardsig(s, x)); }
tkc_tensor *tkc_hardsigmoid(tkc_tensor *a) { return math1(a, b_hardsigmoid, NULL); }
tkc_tensor *tkc_hardswish(tkc_tensor *a) { return math1(a, b_hardswish, NULL); }

/* tanh(log(1 + e)) = n / (n + 2), n = e (e + 2); x itself past 20 (where tanh(softplus) is 1) */
static tkc_tensor *b_mish(tmps *s, tkc_tensor *x, const double *p) {
  tkc_tensor *big = gtc(s, x, 20);
  tkc_tensor *e = exp_(s, whc(s, big, 20, x));
  tkc_tensor *n = mul(s, e, addc(s, e, 2));
  return wh(s, big, x, mul(s, x, dvd(s, n, addc(s, n, 2))));
}
tkc_tensor *tkc_mish(tkc_tensor *a) { return math1(a, b_mish, NULL); }

static tkc_tensor *b_tan(tmps *s, tkc_tensor *x, const double *p) { return dvd(s, K(s, tkc_sin(x)), K(s, tkc_cos(x))); }
tkc_tensor *tkc_tan(tkc_tensor *a) { return math1(a, b_tan, NULL); }

/* atan(r) = r P(r^2) on [0, tan(pi/8)], P fitted (relative error 6e-10) */
static const double ATAN_P[] = {0.9999999993973905, -0.3333330764672519, 0.1999821791625365,
                                -0.14240098757155684, 0.10573584415884661, -0.0603503370945197};

/* atan with two range reductions: |x| > 1 -> pi/2 - atan(1/|x|); r > tan(pi/8) -> pi/4 + atan((r-1)/(r+1)) */
static tkc_tensor *atan_(tmps *s, tkc_tensor *x) {
  tkc_tensor *ax = fabs_(s, x), *inv = gtc(s, ax, 1);
  tkc_tensor *r0 = wh(s, inv, recip(s, ax), ax);
  tkc_tensor *mid = gtc(s, r0, 0.41421356237309503);
  tkc_tensor *r1 = wh(s, mid, dvd(s, addc(s, r0, -1), addc(s, r0, 1)), r0);
  tkc_tensor *a1 = add(s, mul(s, r1, poly(s, mul(s, r1, r1), ATAN_P, 6)), whc(s, mid, M_PI / 4, cst(s, r1, 0)));
  tkc_tensor *a2 = wh(s, inv, csub(s, M_PI / 2, a1), a1);
  return wh(s, signbit_(s, x), neg(s, a2), a2); /* atan(-0) = -0 */
}
static tkc_tensor *b_atan(tmps *s, tkc_tensor *x, const double *p) { return atan_(s, x); }
/* asin x = atan(x / sqrt((1 - x)(1 + x))) */
static tkc_tensor *b_asin(tmps *s, tkc_tensor *x, const double *p) {
  return atan_(s, dvd(s, x, sqrt_(s, mul(s, csub(s, 1, x), addc(s, x, 1)))));
}
/* acos x = 2 atan(sqrt((1 - x) / (1 + x))) (no cancellation near 1) */
static tkc_tensor *b_acos(tmps *s, tkc_tensor *x, const double *p) {
  return mulc(s, atan_(s, sqrt_(s, dvd(s, csub(s, 1, x), addc(s, x, 1)))), 2);
}
tkc_tensor *tkc_atan(tkc_tensor *a) { return math1(a, b_atan, NULL); }
tkc_tensor *tkc_asin(tkc_tensor *a) { return math1(a, b_asin, NULL); }
tkc_tensor *tkc_acos(tkc_tensor *a) { return math1(a, b_acos, NULL); }

tkc_tensor *tkc_atan2(tkc_tensor *y, tkc_tensor *x) {
  if (tkc_check(y) || tkc_check(x)) return NULL;
  tmps s = {.n = 0};
  tkc_tensor *z = K(&s, tkc_add(y, x)); /* checks ctx and broadcast, gives the promoted dtype */
  if (!z) return NULL;
  tkc_dtype out = float_of(dt_of(z)), w = tkc_dtype_work(out);
  tkc_tensor *yy = cast(&s, y, w), *xx = cast(&s, x, w);
  tkc_tensor *yneg = signbit_(&s, yy), *xneg = signbit_(&s, xx);
  tkc_tensor *pi = whc(&s, yneg, -M_PI, cst(&s, yy, M_PI)); /* +-pi with y's sign */
  tkc_tensor *t = atan_(&s, dvd(&s, yy, xx));
  t = wh(&s, xneg, add(&s, t, pi), t);
  /* 0/0: +-0 or +-pi; inf/inf: +-pi/4 or +-3pi/4 */
  tkc_tensor *zeros = and2(&s, eqc(&s, yy, 0), eqc(&s, xx, 0));
  t = wh(&s, zeros, wh(&s, xneg, pi, yy), t);
  tkc_tensor *infs = and2(&s, eqc(&s, fabs_(&s, yy), INFINITY), eqc(&s, fabs_(&s, xx), INFINITY));
  t = wh(&s, infs, mul(&s, pi, whc(&s, xneg, 0.75, cst(&s, yy, 0.25))), t);
  return done(&s, cast(&s, t, out));
}

/* P = e^|x| / 2 as e^(|x|/2) (e^(|x|/2) / 2): no overflow before the result's */
static tkc_tensor *half_exp(tmps *s, tkc_tensor *ax) {
  tkc_tensor *e = exp_(s, mulc(s, ax, 0.5));
  return mul(s, e, mulc(s, e, 0.5));
}
static tkc_tensor *b_sinh(tmps *s, tkc_tensor *x, const double *p) {
  tkc_tensor *ax = fabs_(s, x), *P = half_exp(s, ax);
  tkc_tensor *big = sub(s, P, dvd(s, cst(s, P, 0.25), P));
  big = wh(s, ltc(s, x, 0), neg(s, big), big);
  tkc_tensor *small = mulc(s, sub(s, expm1_(s, x), expm1_(s, neg(s, x))), 0.5);
  return wh(s, ltc(s, ax, 1), small, big);
}
static tkc_tensor *b_cosh(tmps *s, tkc_tensor *x, const double *p) {
  tkc_tensor *P = half_exp(s, fabs_(s, x));
  return add(s, P, dvd(s, cst(s, P, 0.25), P));
}
tkc_tensor *tkc_sinh(tkc_tensor *a) { return math1(a, b_sinh, NULL); }
tkc_tensor *tkc_cosh(tkc_tensor *a) { return math1(a, b_cosh, NULL); }

static tkc_tensor *classify(tkc_tensor *a, int which) {
  if (tkc_check(a)) return NULL;
  tkc_lazy *n = a->node;
  if (!tkc_dtype_is_float(n->dtype)) return tkc_full(a->ctx, TKC_BOOL, n->ndim, n->shape, which == 2);
  tmps s = {.n = 0};
  return done(&s, class_test(&s, cast(&s, a, tkc_dtype_work(n->dtype)), which));
}
tkc_tensor *tkc_isnan(tkc_tensor *a) { return classify(a, 0); }
tkc_tensor *tkc_isinf(tkc_tensor *a) { return classify(a, 1); }
tkc_tensor *tkc_isfinite(tkc_tensor *a) { return classify(a, 2); }

tkc_tensor *tkc_lerp(tkc_tensor *a, tkc_tensor *b, tkc_tensor *w) {
  if (tkc_check(a) || tkc_check(b) || tkc_check(w)) return NULL;
  tmps s = {.n = 0};
  tkc_tensor *z = add(&s, add(&s, a, b), w); /* checks ctxs and shapes, gives the promoted dtype */
  if (!z) return done(&s, NULL);
  tkc_dtype out = float_of(dt_of(z)), wd = tkc_dtype_work(out);
  tkc_tensor *x = cast(&s, a, wd), *y = cast(&s, b, wd), *t = cast(&s, w, wd);
  tkc_tensor *d = sub(&s, y, x);
  tkc_tensor *lo = add(&s, x, mul(&s, t, d)), *hi = sub(&s, y, mul(&s, d, csub(&s, 1, t)));
  return done(&s, cast(&s, wh(&s, ltc(&s, t, 0.5), lo, hi), out));
}

/* ---------------------------------------------------------------- reductions */

static int axes_mask(const char *what, const tkc_lazy *a, int naxes, const int *axes, int *mask) { return tkc_axes_mask(what, a, naxes, axes, mask); }

/* the product of the last axis, keeping it as size 1: pairwise halving, a kernel per 4 levels */
static tkc_tensor *prod_last(tmps *s, tkc_tensor *x) {
  int64_t n = x ? x->node->shape[x->node->ndim - 1] : 1, p = 1;
  while (p < n) p *= 2;
  x = tkc_temp_pad_last(s, x, 0, p - n, 1);
  for (int level = 1; x && p > 1; level++, p /= 2) {
    x = mul(s, tkc_temp_shrink_last(s, x, 0, p / 2), tkc_temp_shrink_last(s, x, p / 2, p));
    if (level % 4 == 0 && p > 2) x = K(s, tkc_contiguous(x));
  }
  return x;
}

tkc_tensor *tkc_prod(tkc_tensor *a, int naxes, const int *axes, int keepdim) {
  int mask[TKC_MAX_DIMS];
  if (tkc_check(a) || axes_mask("prod", a->node, naxes, axes, mask)) return NULL;
  const tkc_lazy *n = a->node;
  tmps s = {.n = 0};
  /* reduced axes last, flattened: (kept..., R) */
  int order[TKC_MAX_DIMS], k = 0, nk = 0;
  int64_t flat[TKC_MAX_DIMS], out[TKC_MAX_DIMS], r = 1;
  for (int i = 0; i < n->ndim; i++)
    if (!mask[i]) order[k++] = i, flat[nk++] = n->shape[i];
  for (int i = 0; i < n->ndim; i++)
    if (mask[i]) order[k++] = i, r *= n->shape[i];
  flat[nk] = r;
  for (int i = 0, j = 0; i < n->ndim; i++)
    if (keepdim || !mask[i]) out[j++] = mask[i] ? 1 : n->shape[i];
  tkc_tensor *x = cast(&s, a, tkc_dtype_work(n->dtype));
  x = reshape(&s, n->ndim ? K(&s, tkc_permute(x, order)) : x, nk + 1, flat);
  tkc_tensor *p = prod_last(&s, x);
  return done(&s, cast(&s, reshape(&s, p, keepdim ? n->ndim : nk, out), n->dtype));
}

/* sum((x - mean)^2) / (n - correction) in the work dtype, keepdim */
static tkc_tensor *var_(tmps *s, const char *what, tkc_tensor *a, int naxes, const int *axes, double correction, tkc_dtype *out) {
  int mask[TKC_MAX_DIMS];
  if (tkc_check(a) || axes_mask(what, a->node, naxes, axes, mask)) return NULL;
  int64_t count = 1;
  for (int i = 0; i < a->node->ndim; i++)
    if (mask[i]) count *= a->node->shape[i];
  if (!(correction >= 0 && correction <= (double)count))
    return tkc_err_null(TKC_EINVAL, "%s: correction %g is not in [0, %lld] (the number of reduced elements)", what, correction, (long long)count);
  *out = float_of(dt_of(a));
  tkc_tensor *x = cast(s, a, tkc_dtype_work(*out));
  tkc_tensor *d = sub(s, x, K(s, tkc_mean(x, naxes, axes, 1)));
  tkc_tensor *ss = K(s, tkc_sum(mul(s, d, d), naxes, axes, 1));
  return dvd(s, ss, cst(s, ss, (double)count - correction));
}

/* the keepdim result r of a reduction of a, without the reduced axes unless keepdim */
static tkc_tensor *squeeze_reduced(tmps *s, tkc_tensor *r, tkc_tensor *a, int naxes, const int *axes, int keepdim) {
  if (!r || keepdim) return r;
  int mask[TKC_MAX_DIMS];
  axes_mask("reduce", a->node, naxes, axes, mask); /* checked before */
  int64_t shape[TKC_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < a->node->ndim; i++)
    if (!mask[i]) shape[n++] = a->node->shape[i];
  return reshape(s, r, n, shape);
}

static tkc_tensor *var_std(tkc_tensor *a, int naxes, const int *axes, int keepdim, double correction, int root) {
  tmps s = {.n = 0};
  tkc_dtype out = TKC_VOID;
  tkc_tensor *v = var_(&s, root ? "std" : "var", a, naxes, axes, correction, &out);
  if (root) v = sqrt_(&s, v);
  return done(&s, cast(&s, squeeze_reduced(&s, v, a, naxes, axes, keepdim), out));
}
tkc_tensor *tkc_var(tkc_tensor *a, int naxes, const int *axes, int keepdim, double correction) { return var_std(a, naxes, axes, keepdim, correction, 0); }
tkc_tensor *tkc_std(tkc_tensor *a, int naxes, const int *axes, int keepdim, double correction) { return var_std(a, naxes, axes, keepdim, correction, 1); }

/* the axes of a composite reduction checked up front, so that its error names it */
static int check_axes(const char *what, tkc_tensor *a, int naxes, const int *axes) {
  int mask[TKC_MAX_DIMS];
  return tkc_check(a) || axes_mask(what, a->node, naxes, axes, mask);
}

tkc_tensor *tkc_logsumexp(tkc_tensor *a, int naxes, const int *axes, int keepdim) {
  if (check_axes("logsumexp", a, naxes, axes)) return NULL;
  tmps s = {.n = 0};
  tkc_dtype out = float_of(dt_of(a));
  tkc_tensor *x = cast(&s, a, tkc_dtype_work(out));
  tkc_tensor *m = K(&s, tkc_max(x, naxes, axes, 1));
  m = whc(&s, eqc(&s, fabs_(&s, m), INFINITY), 0, m); /* all -inf (or an inf): subtract nothing */
  tkc_tensor *l = add(&s, log_(&s, K(&s, tkc_sum(exp_(&s, sub(&s, x, m)), naxes, axes, 1))), m);
  return done(&s, cast(&s, squeeze_reduced(&s, l, a, naxes, axes, keepdim), out));
}

tkc_tensor *tkc_any(tkc_tensor *a, int naxes, const int *axes, int keepdim) {
  if (check_axes("any", a, naxes, axes)) return NULL;
  tmps s = {.n = 0};
  return done(&s, K(&s, tkc_max(nec(&s, a, 0), naxes, axes, keepdim)));
}
tkc_tensor *tkc_all(tkc_tensor *a, int naxes, const int *axes, int keepdim) {
  if (check_axes("all", a, naxes, axes)) return NULL;
  tmps s = {.n = 0};
  return done(&s, K(&s, tkc_min(nec(&s, a, 0), naxes, axes, keepdim)));
}

tkc_tensor *tkc_sum_acc(tkc_tensor *a, int naxes, const int *axes, int keepdim, tkc_dtype acc) {
  if (tkc_check(a)) return NULL;
  if (!tkc_dtype_is_tensor(acc)) return tkc_err_null(TKC_EDTYPE, "sum_acc: the accumulator %s is not a tensor dtype (%s)", tkc_dtype_str(acc), tkc_dtype_list());
  if (check_axes("sum_acc", a, naxes, axes)) return NULL;
  tmps s = {.n = 0};
  return done(&s, cast(&s, K(&s, tkc_sum(cast(&s, a, acc), naxes, axes, keepdim)), acc));
}

/* scans (tkc_cumsum, tkc_cummax, tkc_cumprod): ops_scan.c */
