/* Transcendentals as plain ALU (tinygrad's codegen/transcendental.py: xexp2, xlog2, xsin): EXP2, LOG2
 * and SIN of float32 become a range reduction, a polynomial and exponent-bit arithmetic, so they vectorize
 * like any other op instead of calling libm once per element. float16/bfloat16 go through float32;
 * float64 keeps the libm call. The rules run on the kernel AST (before lowering, so the expander
 * packs the new ops into vectors) for the devices without fast hardware forms: the host renderers
 * and INTERP, which therefore still agree exactly. Accuracy: within 1.5 ulp of the correctly rounded
 * result for normal float32 results, sin within 0.5 ulp + 1e-11 for every float32
 * (tests/test_tensor_transcendental.c measures it); inf, -inf, nan, 0, -0 and denormals follow
 * IEEE/libm (exp2: 2^-150 and below is 0, 128 and above inf; log2: <0 nan, +-0 -inf; sin: inf nan). */
#include <math.h>
#include "codegen/codegen.h"

typedef struct fb { /* float32 builder (and the wider types xsin needs) */
  tkc_graph *g;
  tkc_dt f, i, d, l, u; /* float32, int32, float64, int64, uint64 */
} fb;

static tkc_uop *cf(fb *b, double v) { return tkc_uop_const_float(b->g, b->f, v); }
static tkc_uop *cint(fb *b, int64_t v) { return tkc_uop_const_int(b->g, b->i, v); }
static tkc_uop *cd(fb *b, double v) { return tkc_uop_const_float(b->g, b->d, v); }
static tkc_uop *cu(fb *b, int64_t v) { return tkc_uop_const_int(b->g, b->u, v); }
static tkc_uop *cast(fb *b, tkc_uop *x, tkc_dt dt) { return x ? tkc_uop_cast(b->g, x, dt) : NULL; }
static tkc_uop *bitcast(fb *b, tkc_uop *x, tkc_dt dt) { return x ? tkc_uop_bitcast(b->g, x, dt) : NULL; }
static tkc_uop *op2(fb *b, tkc_op op, tkc_uop *x, tkc_uop *y) { return x && y ? tkc_uop_alu2(b->g, op, x, y) : NULL; }
static tkc_uop *sel(fb *b, tkc_uop *c, tkc_uop *x, tkc_uop *y) { return c && x && y ? tkc_uop_alu3(b->g, TKC_OP_WHERE, c, x, y) : NULL; }
static tkc_uop *isnan_(fb *b, tkc_uop *x) { return op2(b, TKC_OP_CMPNE, x, x); }

/* Horner: ((c0*x + c1)*x + c2)... as multiply-adds (MULACC after the late rules) */
static tkc_uop *poly(fb *b, tkc_uop *x, const double *c, int n) {
  tkc_uop *u = cf(b, c[0]);
  for (int k = 1; k < n; k++) u = op2(b, TKC_OP_ADD, op2(b, TKC_OP_MUL, u, x), cf(b, c[k]));
  return u;
}

static tkc_uop *poly_d(fb *b, tkc_uop *x, const double *c, int n) { /* poly in float64 */
  tkc_uop *u = cd(b, c[0]);
  for (int k = 1; k < n; k++) u = op2(b, TKC_OP_ADD, op2(b, TKC_OP_MUL, u, x), cd(b, c[k]));
  return u;
}

/* 2^q for an int32 q in [-126, 127]: the exponent bits */
static tkc_uop *pow2i(fb *b, tkc_uop *q) {
  tkc_uop *bits = op2(b, TKC_OP_MUL, op2(b, TKC_OP_ADD, q, cint(b, 127)), cint(b, 1 << 23));
  return bits ? tkc_uop_bitcast(b->g, bits, b->f) : NULL;
}

static tkc_uop *xexp2(fb *b, tkc_uop *d) {
  static const double c[7] = {0.1535920892e-3, 0.1339262701e-2, 0.9618384764e-2, 0.5550347269e-1, 0.2402264476e+0, 0.6931471825e+0, 1.0};
  /* round to an integer q with the 1.5 * 2^23 trick (no float -> int cast, which vectorizes badly):
   * d + M rounds d to an integer in the low mantissa bits. Outside [-150, 128) and for nan the
   * integer part and the polynomial are garbage (integer ops wrap), which the two selects at the end
   * replace: no clamp, no nan select, which cost a third of the ops */
  tkc_uop *t = op2(b, TKC_OP_ADD, d, cf(b, 12582912.0)), *qf = op2(b, TKC_OP_SUB, t, cf(b, 12582912.0));
  tkc_uop *q = t ? op2(b, TKC_OP_SUB, tkc_uop_bitcast(b->g, t, b->i), cint(b, 0x4B400000)) : NULL;
  tkc_uop *s = op2(b, TKC_OP_SUB, d, qf); /* in [-0.5, 0.5] */
  tkc_uop *u = s ? poly(b, s, c, 7) : NULL;
  tkc_uop *q1 = op2(b, TKC_OP_SHR, q, cint(b, 1)); /* u * 2^q in two steps: 2^q alone may not be a float */
  u = op2(b, TKC_OP_MUL, op2(b, TKC_OP_MUL, u, pow2i(b, q1)), pow2i(b, op2(b, TKC_OP_SUB, q, q1)));
  /* d >= 128: inf, d < -150: 0, written so that a nan d (both compares false) keeps u, a nan */
  u = sel(b, op2(b, TKC_OP_CMPLT, cf(b, 0x1.fffffep+6), d), cf(b, INFINITY), u);
  return sel(b, op2(b, TKC_OP_CMPLT, d, cf(b, -150)), cf(b, 0), u);
}

static tkc_uop *xlog2(fb *b, tkc_uop *d) {
  static const double c[3] = {0.4374550283e+0, 0.5764790177e+0, 0.9618012905120};
  tkc_uop *den = op2(b, TKC_OP_CMPLT, d, cf(b, 1e-4)); /* denormals (and a margin) scaled by 2^64 first */
  tkc_uop *a = sel(b, den, op2(b, TKC_OP_MUL, d, cf(b, 18446744073709551616.0)), d);
  tkc_uop *scaled = op2(b, TKC_OP_MUL, a, cf(b, 1.0 / 0.75)), *ai = a ? tkc_uop_bitcast(b->g, a, b->i) : NULL;
  tkc_uop *bits = scaled ? tkc_uop_bitcast(b->g, scaled, b->i) : NULL;
  tkc_uop *ei = op2(b, TKC_OP_SUB, op2(b, TKC_OP_AND, op2(b, TKC_OP_SHR, bits, cint(b, 23)), cint(b, 255)), cint(b, 127)); /* ilogb */
  tkc_uop *m = op2(b, TKC_OP_SUB, ai, op2(b, TKC_OP_MUL, ei, cint(b, 1 << 23))); /* a * 2^-e in [0.75, 1.5) */
  m = m ? tkc_uop_bitcast(b->g, m, b->f) : NULL;
  tkc_uop *e = ei ? tkc_uop_cast(b->g, ei, b->f) : NULL;
  e = sel(b, den, op2(b, TKC_OP_SUB, e, cf(b, 64)), e);
  tkc_uop *x = op2(b, TKC_OP_FDIV, op2(b, TKC_OP_SUB, m, cf(b, 1)), op2(b, TKC_OP_ADD, m, cf(b, 1)));
  tkc_uop *x2 = op2(b, TKC_OP_MUL, x, x), *t = x2 ? poly(b, x2, c, 3) : NULL;
  tkc_uop *hi = op2(b, TKC_OP_ADD, e, op2(b, TKC_OP_MUL, x, cf(b, 2.8853900432586669922)));
  tkc_uop *lo = op2(b, TKC_OP_MUL, x, cf(b, 3.2734474483568488616e-08));
  tkc_uop *r = op2(b, TKC_OP_ADD, op2(b, TKC_OP_MUL, t, op2(b, TKC_OP_MUL, x, x2)), op2(b, TKC_OP_ADD, hi, lo));
  r = sel(b, op2(b, TKC_OP_CMPNE, d, cf(b, INFINITY)), r, cf(b, INFINITY));
  r = sel(b, op2(b, TKC_OP_CMPLT, d, cf(b, -0.0)), cf(b, NAN), r);
  r = sel(b, op2(b, TKC_OP_CMPNE, r, cf(b, -191)), r, cf(b, -INFINITY)); /* what the steps above make of 0 */
  r = sel(b, isnan_(b, d), cf(b, NAN), r);
  tkc_uop *rd = d ? tkc_uop_alu1(b->g, TKC_OP_RECIP, d) : NULL; /* -0: 1/d is -inf */
  return sel(b, op2(b, TKC_OP_CMPNE, rd, cf(b, -INFINITY)), r, cf(b, -INFINITY));
}

/* sin of float32 d, returned in float64 (rounded once by the caller to the result type). The
 * argument is reduced modulo pi exactly enough for every float32: r = |x| - n*pi in [-pi/2, pi/2]
 * by Cody-Waite in float64 below 2^22 (n*PI_A exact, fused steps), and by Payne-Hanek above
 * (|x| = m * 2^k with a 24-bit integer m: 96 bits of 1/pi taken at 2^-k, times m in 64-bit fixed
 * point, so the fraction of |x|/pi is known to 2^-63). Both are computed and the result selected, as
 * a vector would. Then a degree-15 odd polynomial in float64 (relative error < 1e-11 on [-pi/2, pi/2]),
 * and the sign of (-1)^n * sign(x): within 0.5 ulp + 1e-11 of the exact result. inf and nan give nan. */
static tkc_uop *xsin(fb *b, tkc_uop *d) {
  static const uint32_t inv_pi[8] = {0, 0x517cc1b7, 0x27220a94, 0xfe13abe8, 0xfa9a6ee0, 0x6db14acc, 0x9e21c820, 0xff28b1d5};
  tkc_uop *db = bitcast(b, d, b->i), *fin = op2(b, TKC_OP_CMPLT, op2(b, TKC_OP_AND, db, cint(b, 0x7fffffff)), cint(b, 0x7f800000));
  tkc_uop *xb = sel(b, fin, db, cint(b, 0)); /* inf and nan as 0 until the end */
  tkc_uop *ab = op2(b, TKC_OP_AND, xb, cint(b, 0x7fffffff)), *a = bitcast(b, ab, b->f), *ad = cast(b, a, b->d);
  /* Cody-Waite: n = rint(|x|/pi) by the 1.5 * 2^52 trick, whose low mantissa bit is n's parity */
  tkc_uop *t = op2(b, TKC_OP_ADD, op2(b, TKC_OP_MUL, ad, cd(b, 0.318309886183790671537767526745028724)), cd(b, 6755399441055744.0));
  tkc_uop *n = op2(b, TKC_OP_SUB, t, cd(b, 6755399441055744.0));
  tkc_uop *odd_small = cast(b, op2(b, TKC_OP_AND, bitcast(b, t, b->u), cu(b, 1)), b->i);
  static const double pi_parts[4] = {3.1415926218032836914, 3.1786509424591713469e-08, 1.2246467864107188502e-16, 1.2736634327021899816e-24};
  tkc_uop *r_small = ad;
  for (int k = 0; k < 4; k++) /* as MULACC: the symbolic rules would fold n*a + n*b into n*(a+b) */
    r_small = n && r_small ? tkc_uop_alu3(b->g, TKC_OP_MULACC, n, cd(b, -pi_parts[k]), r_small) : NULL;
  /* Payne-Hanek: |x| = m * 2^(e-150); the window of 1/pi starts at table bit p0 = e - 119 (bit 31 of
   * the table is 2^0), clamped for the small |x| the other path serves */
  tkc_uop *e = op2(b, TKC_OP_SHR, ab, cint(b, 23));
  tkc_uop *m = cast(b, op2(b, TKC_OP_OR, op2(b, TKC_OP_AND, ab, cint(b, 0x7fffff)), cint(b, 0x800000)), b->u);
  tkc_uop *p0 = op2(b, TKC_OP_MAX, op2(b, TKC_OP_SUB, e, cint(b, 119)), cint(b, 0));
  tkc_uop *wi = op2(b, TKC_OP_SHR, p0, cint(b, 5)), *sh = cast(b, op2(b, TKC_OP_AND, p0, cint(b, 31)), b->u);
  tkc_uop *word[4]; /* table[wi + j], wi in [0, 4] */
  for (int j = 0; j < 4; j++) {
    word[j] = cu(b, inv_pi[j]);
    for (int w = 1; w <= 4; w++) word[j] = sel(b, op2(b, TKC_OP_CMPLT, cint(b, w - 1), wi), cu(b, inv_pi[w + j]), word[j]);
  }
  tkc_uop *w32[3], *mask = cu(b, 0xffffffff), *rsh = op2(b, TKC_OP_SUB, cu(b, 31), sh);
  for (int j = 0; j < 3; j++) /* (word[j] << sh | word[j+1] >> (32 - sh)) & 0xffffffff, the right shift in two steps for sh = 0 */
    w32[j] = op2(b, TKC_OP_AND, op2(b, TKC_OP_OR, op2(b, TKC_OP_SHL, word[j], sh), op2(b, TKC_OP_SHR, op2(b, TKC_OP_SHR, word[j + 1], cu(b, 1)), rsh)), mask);
  tkc_uop *p = op2(b, TKC_OP_ADD, op2(b, TKC_OP_SHL, op2(b, TKC_OP_MUL, m, w32[0]), cu(b, 32)), op2(b, TKC_OP_MUL, m, w32[1]));
  p = op2(b, TKC_OP_ADD, p, op2(b, TKC_OP_SHR, op2(b, TKC_OP_MUL, m, w32[2]), cu(b, 32))); /* |x|/pi mod 2, 2^-63 units */
  tkc_uop *odd_big = cast(b, op2(b, TKC_OP_SHR, op2(b, TKC_OP_ADD, p, cu(b, (int64_t)1 << 62)), cu(b, 63)), b->i);
  tkc_uop *frac = bitcast(b, op2(b, TKC_OP_SHL, p, cu(b, 1)), b->l); /* the signed fraction in [-1/2, 1/2), 2^-64 units */
  tkc_uop *fhi = cast(b, cast(b, op2(b, TKC_OP_SHR, frac, tkc_uop_const_int(b->g, b->l, 32)), b->i), b->d);
  tkc_uop *flo = cast(b, cast(b, op2(b, TKC_OP_AND, p, cu(b, 0x7fffffff)), b->i), b->d); /* the fraction's low 32 bits >> 1 */
  tkc_uop *r_big = op2(b, TKC_OP_MUL, op2(b, TKC_OP_ADD, op2(b, TKC_OP_MUL, fhi, cd(b, 0x1p-32)), op2(b, TKC_OP_MUL, flo, cd(b, 0x1p-63))),
                       cd(b, 3.14159265358979323846));
  tkc_uop *small = op2(b, TKC_OP_CMPLT, a, cf(b, 4194304.0));
  tkc_uop *r = sel(b, small, r_small, r_big), *odd = sel(b, small, odd_small, odd_big);
  /* sin r = r + r^3 * (c3 + r^2 * (c5 + ...)): Taylor to r^15 */
  static const double c[7] = {-1.0 / 1307674368000.0, 1.0 / 6227020800.0, -1.0 / 39916800.0, 1.0 / 362880.0, -1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0};
  tkc_uop *r2 = op2(b, TKC_OP_MUL, r, r), *u = op2(b, TKC_OP_ADD, op2(b, TKC_OP_MUL, op2(b, TKC_OP_MUL, r, r2), poly_d(b, r2, c, 7)), r);
  tkc_uop *neg = op2(b, TKC_OP_CMPNE, op2(b, TKC_OP_CMPNE, odd, cint(b, 0)), op2(b, TKC_OP_CMPLT, xb, cint(b, 0)));
  u = sel(b, neg, op2(b, TKC_OP_MUL, u, cd(b, -1)), u);
  return sel(b, fin, u, cd(b, NAN));
}

static tkc_uop *rewrite(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  tkc_uop *u = tkc_match_root(m), *x = tkc_match_get(m, "x");
  int s = u->dtype.scalar;
  if (u->dtype.count != 1 || tkc_dt_is_ptr(u->dtype) || !tkc_dt_eq(x->dtype, u->dtype) || (s != TKC_FLOAT32 && s != TKC_FLOAT16 && s != TKC_BFLOAT16))
    return NULL;
  fb b = {g, tkc_dt_of(TKC_FLOAT32), tkc_dt_of(TKC_INT32), tkc_dt_of(TKC_FLOAT64), tkc_dt_of(TKC_INT64), tkc_dt_of(TKC_UINT64)};
  tkc_uop *d = tkc_uop_cast(g, x, b.f), *r = u->op == TKC_OP_EXP2 ? xexp2(&b, d) : u->op == TKC_OP_LOG2 ? xlog2(&b, d) : xsin(&b, d);
  return r ? tkc_uop_cast(g, r, u->dtype) : NULL;
}

static const tkc_rule rules[] = {
    {"(EXP2 x)", rewrite},
    {"(LOG2 x)", rewrite},
    {"(SIN x)", rewrite},
};

const tkc_matcher *tkc_transcendental_rules(void) {
  static tkc_matcher *_Atomic pm;
  return tkc_matcher_static(&pm, rules, TKC_COUNTOF(rules));
}

bool tkc_wants_transcendental_rules(const tkc_renderer *r) { return !r || !r->has_local; }
