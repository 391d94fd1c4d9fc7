/* Transcendentals as plain ALU (tinygrad's codegen/transcendental.py: xexp2, xlog2): EXP2 and LOG2
 * of float32 become a range reduction, a polynomial and exponent-bit arithmetic, so they vectorize
 * like any other op instead of calling libm once per element. float16/bfloat16 go through float32;
 * float64 keeps the libm call. The rules run on the kernel AST (before lowering, so the expander
 * packs the new ops into vectors) for the devices without fast hardware forms: the host renderers
 * and INTERP, which therefore still agree exactly. Accuracy: within 1.5 ulp of the correctly rounded
 * result for normal float32 results (tests/test_tensor_transcendental.c measures it); inf, -inf, nan, 0, -0 and denormals follow
 * IEEE/libm (exp2: 2^-150 and below is 0, 128 and above inf; log2: <0 nan, +-0 -inf). */
#include <math.h>
#include "codegen/codegen.h"

typedef struct fb { /* float32 builder */
  tkc_graph *g;
  tkc_dt f, i;
} fb;

static tkc_uop *cf(fb *b, double v) { return tkc_uop_const_float(b->g, b->f, v); }
static tkc_uop *cint(fb *b, int64_t v) { return tkc_uop_const_int(b->g, b->i, v); }
static tkc_uop *op2(fb *b, tkc_op op, tkc_uop *x, tkc_uop *y) { return x && y ? tkc_uop_alu2(b->g, op, x, y) : NULL; }
static tkc_uop *sel(fb *b, tkc_uop *c, tkc_uop *x, tkc_uop *y) { return c && x && y ? tkc_uop_alu3(b->g, TKC_OP_WHERE, c, x, y) : NULL; }
static tkc_uop *isnan_(fb *b, tkc_uop *x) { return op2(b, TKC_OP_CMPNE, x, x); }

/* Horner: ((c0*x + c1)*x + c2)... as multiply-adds (MULACC after the late rules) */
static tkc_uop *poly(fb *b, tkc_uop *x, const double *c, int n) {
  tkc_uop *u = cf(b, c[0]);
  for (int k = 1; k < n; k++) u = op2(b, TKC_OP_ADD, op2(b, TKC_OP_MUL, u, x), cf(b, c[k]));
  return u;
}

/* 2^q for an int32 q in [-126, 127]: the exponent bits */
static tkc_uop *pow2i(fb *b, tkc_uop *q) {
  tkc_uop *bits = op2(b, TKC_OP_MUL, op2(b, TKC_OP_ADD, q, cint(b, 127)), cint(b, 1 << 23));
  return bits ? tkc_uop_bitcast(b->g, bits, b->f) : NULL;
}

static tkc_uop *xexp2(fb *b, tkc_uop *d) {
  static const double c[7] = {0.1535920892e-3, 0.1339262701e-2, 0.9618384764e-2, 0.5550347269e-1, 0.2402264476e+0, 0.6931471825e+0, 1.0};
  /* nan -> 0 and a clamp to [-160, 160] keep the integer part in range; the ends are fixed below */
  tkc_uop *x = sel(b, isnan_(b, d), cf(b, 0), d);
  x = op2(b, TKC_OP_MAX, x, cf(b, -160));
  x = sel(b, op2(b, TKC_OP_CMPLT, cf(b, 160), x), cf(b, 160), x);
  /* round to an integer q with the 1.5 * 2^23 trick (no float -> int cast, which vectorizes badly):
   * x + M rounds x to an integer in the low mantissa bits */
  tkc_uop *t = op2(b, TKC_OP_ADD, x, cf(b, 12582912.0)), *qf = op2(b, TKC_OP_SUB, t, cf(b, 12582912.0));
  tkc_uop *q = t ? op2(b, TKC_OP_SUB, tkc_uop_bitcast(b->g, t, b->i), cint(b, 0x4B400000)) : NULL;
  tkc_uop *s = op2(b, TKC_OP_SUB, x, qf); /* in [-0.5, 0.5] */
  tkc_uop *u = s ? poly(b, s, c, 7) : NULL;
  tkc_uop *q1 = op2(b, TKC_OP_SHR, q, cint(b, 1)); /* u * 2^q in two steps: 2^q alone may not be a float */
  u = op2(b, TKC_OP_MUL, op2(b, TKC_OP_MUL, u, pow2i(b, q1)), pow2i(b, op2(b, TKC_OP_SUB, q, q1)));
  u = sel(b, op2(b, TKC_OP_CMPLT, d, cf(b, 128)), u, cf(b, INFINITY));
  u = sel(b, op2(b, TKC_OP_CMPLT, d, cf(b, -150)), cf(b, 0), u);
  return sel(b, isnan_(b, d), cf(b, NAN), u);
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

static tkc_uop *rewrite(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  tkc_uop *u = tkc_match_root(m), *x = tkc_match_get(m, "x");
  int s = u->dtype.scalar;
  if (u->dtype.count != 1 || tkc_dt_is_ptr(u->dtype) || !tkc_dt_eq(x->dtype, u->dtype) || (s != TKC_FLOAT32 && s != TKC_FLOAT16 && s != TKC_BFLOAT16))
    return NULL;
  fb b = {g, tkc_dt_of(TKC_FLOAT32), tkc_dt_of(TKC_INT32)};
  tkc_uop *d = tkc_uop_cast(g, x, b.f), *r = u->op == TKC_OP_EXP2 ? xexp2(&b, d) : xlog2(&b, d);
  return r ? tkc_uop_cast(g, r, u->dtype) : NULL;
}

static const tkc_rule rules[] = {
    {"(EXP2 x)", rewrite},
    {"(LOG2 x)", rewrite},
};

const tkc_matcher *tkc_transcendental_rules(void) {
  static tkc_matcher *_Atomic pm;
  return tkc_matcher_static(&pm, rules, TKC_COUNTOF(rules));
}

bool tkc_wants_transcendental_rules(const tkc_renderer *r) { return !r || !r->has_local; }
