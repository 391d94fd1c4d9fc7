/* Meaning as rules before rendering (see target_rules.h): the integer division guards, shift and
 * float -> int cast guards, bfloat16 as
 * bits computed through float, and lane-wise ALU ops for targets without vector ALU. Every rule keeps
 * the INTERP device's answers (src/uops/alu.c) bit for bit. */
#include <math.h>
#include <stdatomic.h>
#include "codegen/target_rules.h"
#include "codegen/uop_build.h"

#define M(name) tkc_match_get(m, name)

/* ---------------------------------------------------------------- building blocks */

/* a constant in render form: a scalar CONST, VECTORIZE of it for vectors */
static tkc_uop *vconst(tkc_graph *g, tkc_dt dt, int64_t iv, double fv) {
  tkc_dt s = tkc_dt_scalar(dt);
  tkc_uop *c = tkc_dt_is_float(s) ? tkc_uop_const_float(g, s, fv) : tkc_uop_const_int(g, s, iv);
  if (!c || dt.count <= 1) return c;
  tkc_uop *lanes[256];
  if (dt.count > 256) return NULL;
  for (int i = 0; i < dt.count; i++) lanes[i] = c;
  return tkc_uop_new(g, TKC_OP_VECTORIZE, dt, dt.count, lanes, tkc_arg_none());
}
static tkc_uop *iconst(tkc_graph *g, tkc_dt dt, int64_t v) { return vconst(g, dt, v, (double)v); }

/* u is the integer constant v (a CONST, or a VECTORIZE of one) */
static bool is_const_int(const tkc_uop *u, int64_t v) {
  if (u->op == TKC_OP_VECTORIZE && u->nsrc > 0) {
    for (int i = 1; i < u->nsrc; i++)
      if (u->src[i] != u->src[0]) return false;
    u = u->src[0];
  }
  return u->op == TKC_OP_CONST && u->arg.kind == TKC_ARG_INT && u->arg.v.i == v;
}

/* ---------------------------------------------------------------- integer IDIV / MOD */

/* u is a VECTORIZE of its lanes, one scalar source per lane */
static bool lanes_of_vectorize(const tkc_uop *u) {
  return u->op == TKC_OP_VECTORIZE && !u->dtype.space && u->dtype.count > 1 && u->nsrc == u->dtype.count;
}

bool tkc_divisor_nonzero(const tkc_uop *d) {
  if (!d || d->dtype.space || d->dtype.count > 1 || !tkc_dt_is_int(d->dtype)) return false;
  if (d->op == TKC_OP_CONST && d->arg.kind == TKC_ARG_INT) return d->arg.v.i != 0;
  if (d->dtype.scalar == TKC_UINT64) return false;
  return d->vmin > 0 || d->vmax < 0;
}

bool tkc_divisor_safe(const tkc_uop *d) {
  if (!tkc_divisor_nonzero(d)) return false;
  if (tkc_dt_is_unsigned(d->dtype)) return true;
  if (d->op == TKC_OP_CONST && d->arg.kind == TKC_ARG_INT) return d->arg.v.i != -1;
  return d->vmin > 0 || d->vmax < -1;
}

/* the guard condition on divisor x: x != 0, and x != -1 for signed x when minus1 */
static bool guards_minus1(const tkc_uop *x, bool minus1) { return minus1 && !tkc_dt_is_unsigned(x->dtype); }

bool tkc_divisor_guarded(const tkc_uop *d, bool minus1) {
  if (!d) return false;
  /* a vector lane by lane: a VECTORIZE of constants, and what SCALAR_ALU makes of the guard below
   * (a VECTORIZE of its per-lane WHEREs) must count as guarded, or guard and scalarize take turns
   * rewriting the same IDIV/MOD forever (the shift and float -> int guards likewise) */
  if (lanes_of_vectorize(d)) {
    for (int i = 0; i < d->nsrc; i++)
      if (d->src[i]->dtype.count != 1 || !tkc_divisor_guarded(d->src[i], minus1)) return false;
    return true;
  }
  if (minus1 ? tkc_divisor_safe(d) : tkc_divisor_nonzero(d)) return true;
  if (d->op != TKC_OP_WHERE || d->nsrc != 3 || !is_const_int(d->src[2], 1)) return false;
  const tkc_uop *c = d->src[0], *x = d->src[1];
  const tkc_uop *ne[2] = {c, NULL};
  int want = guards_minus1(x, minus1) ? 2 : 1;
  if (want == 2) {
    if (c->op != TKC_OP_AND || c->nsrc != 2) return false;
    ne[0] = c->src[0], ne[1] = c->src[1];
  }
  bool zero = false, m1 = false;
  for (int k = 0; k < want; k++) {
    const tkc_uop *e = ne[k];
    if (e->op != TKC_OP_CMPNE || e->nsrc != 2 || e->src[0] != x) return false;
    if (is_const_int(e->src[1], 0)) zero = true;
    else if (is_const_int(e->src[1], -1)) m1 = true;
  }
  return zero && (want == 1 || m1);
}

/* the condition "divisor x may be used": x != 0 [& x != -1] */
static tkc_uop *divisor_ok(tkc_graph *g, tkc_uop *x, bool minus1) {
  tkc_uop *nz = cmpne(g, x, iconst(g, x->dtype, 0));
  if (!guards_minus1(x, minus1)) return nz;
  return nz ? op2(g, TKC_OP_AND, nz->dtype, nz, cmpne(g, x, iconst(g, x->dtype, -1))) : NULL;
}

static tkc_uop *guard_divmod(tkc_graph *g, const tkc_match *m, bool minus1) {
  tkc_uop *r = tkc_match_root(m), *a = M("a"), *d = M("d");
  if (r->dtype.space || !tkc_dt_is_int(r->dtype) || !tkc_dt_eq(d->dtype, r->dtype) || tkc_divisor_guarded(d, minus1)) return NULL;
  tkc_uop *ok = divisor_ok(g, d, minus1), *zero = iconst(g, r->dtype, 0);
  tkc_uop *q = op2(g, (tkc_op)r->op, r->dtype, a, where(g, ok, d, iconst(g, r->dtype, 1)));
  if (r->op == TKC_OP_MOD || !guards_minus1(d, minus1)) return where(g, ok, q, zero);
  /* signed IDIV: x / -1 = -x (INT_MIN wraps), x / 0 = 0 */
  tkc_uop *nz = cmpne(g, d, iconst(g, d->dtype, 0)), *nm1 = cmpne(g, d, iconst(g, d->dtype, -1));
  tkc_uop *neg = a ? tkc_uop_new(g, TKC_OP_NEG, r->dtype, 1, &a, tkc_arg_none()) : NULL;
  return where(g, nz, where(g, nm1, q, neg), zero);
}

/* IDIV(a, d) -> WHERE(d != 0, IDIV(a, WHERE(d != 0, d, 1)), 0)                        (unsigned)
 * IDIV(a, d) -> WHERE(d != 0, WHERE(d != -1, IDIV(a, WHERE(ok, d, 1)), -a), 0)        (signed, ok = d != 0 & d != -1)
 * MOD(a, d)  -> WHERE(ok, MOD(a, WHERE(ok, d, 1)), 0)                                  */
static tkc_uop *guard_div_zero(tkc_graph *g, const tkc_match *m, void *ctx) { (void)ctx; return guard_divmod(g, m, false); }
static tkc_uop *guard_div_both(tkc_graph *g, const tkc_match *m, void *ctx) { (void)ctx; return guard_divmod(g, m, true); }

/* bool IDIV(a, b) -> a & b                          (a/1 = a, a/0 = 0)
 * bool MOD(a, b)  -> (bool)MOD<uint8>((uint8)a, (uint8)b)   (0/1 integers, as Python's bool; then guarded) */
static tkc_uop *bool_divmod(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  tkc_uop *r = tkc_match_root(m), *a = M("a"), *d = M("d");
  if (r->dtype.space || a->dtype.count != r->dtype.count || d->dtype.count != r->dtype.count) return NULL;
  if (r->op == TKC_OP_IDIV) return op2(g, TKC_OP_AND, r->dtype, a, d);
  return cast(g, op2(g, TKC_OP_MOD, dt_n(TKC_UINT8, r->dtype.count), cast(g, a, TKC_UINT8), cast(g, d, TKC_UINT8)), TKC_BOOL);
}

static const tkc_rule div_zero_rules[] = {
    {"(IDIV|MOD<bool> a d)", bool_divmod},     /* a/b -> a & b;  a%b -> (bool)((uint8)a % (uint8)b) */
    {"=(IDIV|MOD<ints> a d)", guard_div_zero}, /* a/d -> d != 0 ? a / (d != 0 ? d : 1) : 0, likewise % */
};
static const tkc_rule div_both_rules[] = {
    {"(IDIV|MOD<bool> a d)", bool_divmod},
    {"=(IDIV|MOD<ints> a d)", guard_div_both}, /* ... and for signed d == -1: a/d -> -a, a%d -> 0 */
};

/* ---------------------------------------------------------------- shifts and float -> int casts */

static int bits_of(tkc_dt dt) { return 8 * (int)tkc_dtype_size((tkc_dtype)dt.scalar); }

/* u (scalar or vector of constants) is an integer constant in [lo, hi) */
static bool const_in(const tkc_uop *u, int64_t lo, int64_t hi) {
  if (u->op == TKC_OP_VECTORIZE) {
    for (int i = 0; i < u->nsrc; i++)
      if (!const_in(u->src[i], lo, hi)) return false;
    return u->nsrc > 0;
  }
  return u->op == TKC_OP_CONST && u->arg.kind == TKC_ARG_INT && u->arg.v.i >= lo && u->arg.v.i < hi;
}

bool tkc_shift_count_safe(const tkc_uop *cnt, int bits) {
  if (!cnt || cnt->dtype.space) return false;
  if (lanes_of_vectorize(cnt)) { /* lane by lane: the guard's mask split into lanes by SCALAR_ALU too */
    for (int i = 0; i < cnt->nsrc; i++)
      if (cnt->src[i]->dtype.count != 1 || !tkc_shift_count_safe(cnt->src[i], bits)) return false;
    return true;
  }
  if (cnt->dtype.scalar == TKC_BOOL || const_in(cnt, 0, bits)) return true;
  if (cnt->dtype.count == 1 && cnt->dtype.scalar != TKC_UINT64 && cnt->vmin >= 0 && cnt->vmax < bits) return true;
  return cnt->op == TKC_OP_AND && cnt->nsrc == 2 && const_in(cnt->src[1], 0, bits); /* what the guard builds */
}

/* SHL(a, b)        -> WHERE(b <u bits, SHL(a, b & (bits-1)), 0)              (and SHR of unsigned a)
 * SHR(a, b) signed -> WHERE(b <u bits, SHR(a, b & (bits-1)), b < 0 ? 0 : SHR(a, bits-1))
 * (INTERP: a count >= bits shifts everything out, leaving 0 or the sign fill; a negative count gives 0) */
static tkc_uop *guard_shift(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  tkc_uop *r = tkc_match_root(m), *a = M("a"), *b = M("b");
  int bits = bits_of(r->dtype);
  if (r->dtype.space || b->dtype.space || b->dtype.count != r->dtype.count || tkc_shift_count_safe(b, bits)) return NULL;
  tkc_dt bdt = b->dtype, bool_dt = dt_n(TKC_BOOL, r->dtype.count);
  bool bsigned = !tkc_dt_is_unsigned(bdt);
  tkc_dtype bu = (tkc_dtype)(bits_of(bdt) == 8 ? TKC_UINT8 : bits_of(bdt) == 16 ? TKC_UINT16 : bits_of(bdt) == 32 ? TKC_UINT32 : TKC_UINT64);
  tkc_uop *ub = bsigned ? cast(g, b, bu) : b;
  tkc_uop *ok = ub ? op2(g, TKC_OP_CMPLT, bool_dt, ub, iconst(g, ub->dtype, bits)) : NULL;
  tkc_uop *v = op2(g, (tkc_op)r->op, r->dtype, a, op2(g, TKC_OP_AND, bdt, b, iconst(g, bdt, bits - 1)));
  tkc_uop *fill = iconst(g, r->dtype, 0);
  if (r->op == TKC_OP_SHR && !tkc_dt_is_unsigned(r->dtype)) {
    fill = op2(g, TKC_OP_SHR, r->dtype, a, iconst(g, bdt, bits - 1));
    if (bsigned) fill = where(g, op2(g, TKC_OP_CMPLT, bool_dt, b, iconst(g, bdt, 0)), iconst(g, r->dtype, 0), fill);
  }
  return where(g, ok, v, fill);
}

/* x is the clamped operand guard_ftoi builds: WHERE(v < hi, WHERE(v < lo, lo, v), 0) */
bool tkc_ftoi_clamped(const tkc_uop *x) {
  if (lanes_of_vectorize(x)) { /* lane by lane: the clamp split into lanes by SCALAR_ALU */
    for (int i = 0; i < x->nsrc; i++)
      if (x->src[i]->dtype.count != 1 || !tkc_ftoi_clamped(x->src[i])) return false;
    return true;
  }
  if (x->op != TKC_OP_WHERE || x->nsrc != 3 || x->src[2]->op == TKC_OP_WHERE) return false;
  const tkc_uop *in = x->src[1], *c = x->src[0];
  return c->op == TKC_OP_CMPLT && in->op == TKC_OP_WHERE && in->nsrc == 3 && in->src[2] == c->src[0] && in->src[0]->op == TKC_OP_CMPLT &&
         in->src[0]->src[0] == c->src[0] && in->src[0]->src[1] == in->src[1];
}

/* CAST<T>(x float) -> WHERE(x < hi, CAST<T>(WHERE(x < hi, WHERE(x < lo, lo, x), 0)), x != x ? 0 : MAX)
 * with [lo, hi) the floats that truncate into T (lo = MIN or 0, hi = MAX+1): truncates toward zero,
 * saturates, NaN -> 0 as tkc_value_cast; the operand C converts is always in range (else undefined).
 * Halves are widened to float32 first (exact). */
static tkc_uop *guard_ftoi(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  tkc_uop *r = tkc_match_root(m), *x = M("x");
  if (r->dtype.space || x->dtype.space || r->dtype.count != x->dtype.count || tkc_ftoi_clamped(x)) return NULL;
  int n = r->dtype.count;
  if (n > 1 && (n & (n - 1))) return tkc_target_scalarize(g, r); /* lanes the target may split: guard each */
  if (x->dtype.scalar != TKC_FLOAT32 && x->dtype.scalar != TKC_FLOAT64) x = cast(g, x, TKC_FLOAT32);
  if (!x) return NULL;
  int bits = bits_of(r->dtype);
  bool uns = tkc_dt_is_unsigned(r->dtype);
  double hi = uns ? ldexp(1, bits) : ldexp(1, bits - 1), lo = uns ? 0 : -hi;
  int64_t max = uns ? (bits == 64 ? -1 : (int64_t)(((uint64_t)1 << bits) - 1)) : (int64_t)(((uint64_t)1 << (bits - 1)) - 1);
  tkc_dt bool_dt = dt_n(TKC_BOOL, x->dtype.count);
  tkc_uop *lo_c = vconst(g, x->dtype, 0, lo), *below_hi = op2(g, TKC_OP_CMPLT, bool_dt, x, vconst(g, x->dtype, 0, hi));
  tkc_uop *clamped = where(g, below_hi, where(g, op2(g, TKC_OP_CMPLT, bool_dt, x, lo_c), lo_c, x), vconst(g, x->dtype, 0, 0));
  tkc_uop *over = where(g, cmpne(g, x, x), iconst(g, r->dtype, 0), iconst(g, r->dtype, max));
  return where(g, below_hi, cast(g, clamped, (tkc_dtype)r->dtype.scalar), over);
}

static const tkc_rule shift_rules[] = {
    {"(SHL|SHR<ints> a b)", guard_shift},  /* counts outside [0, bits): 0 or the sign fill */
};
static const tkc_rule ftoi_rules[] = {
    {"(CAST<ints> x<floats>)", guard_ftoi}, /* float -> int: truncate, saturate, NaN -> 0 */
};

/* ---------------------------------------------------------------- bfloat16 as bits */

static bool is_bf16(const tkc_uop *u) { return !u->dtype.space && u->dtype.scalar == TKC_BFLOAT16; }

/* the float32 bits of a rounded bfloat16 value: b & 0xffff0000 where b is the rounded word */
static tkc_uop *round_word(tkc_graph *g, tkc_uop *f) {
  tkc_dt u32 = dt_n(TKC_UINT32, f->dtype.count);
  tkc_uop *b = bitcast(g, f, TKC_UINT32);
  tkc_uop *odd = op2(g, TKC_OP_AND, u32, op2(g, TKC_OP_SHR, u32, b, iconst(g, u32, 16)), iconst(g, u32, 1));
  tkc_uop *even = op2(g, TKC_OP_ADD, u32, b, op2(g, TKC_OP_ADD, u32, odd, iconst(g, u32, 0x7fff)));
  tkc_uop *quiet = op2(g, TKC_OP_OR, u32, b, iconst(g, u32, 0x400000));
  tkc_uop *r = where(g, cmpne(g, f, f), quiet, even);
  return op2(g, TKC_OP_AND, u32, r, iconst(g, u32, 0xffff0000));
}

/* float32 f -> bfloat16 (to nearest even on the bits, NaN quiet, overflow to inf):
 * bf16(f) -> BITCAST<bf16>(CAST<uint16>(SHR(AND(WHERE(f != f, b | 0x400000, b + ((b >> 16) & 1) + 0x7fff), 0xffff0000), 16)))
 * with b = BITCAST<uint32>(f) */
static tkc_uop *f32_to_bf16(tkc_graph *g, tkc_uop *f) {
  tkc_uop *w = round_word(g, f);
  if (!w) return NULL;
  tkc_uop *hi = op2(g, TKC_OP_SHR, w->dtype, w, iconst(g, w->dtype, 16));
  return bitcast(g, cast(g, hi, TKC_UINT16), TKC_BFLOAT16);
}

/* bfloat16 x -> its float32 value:
 * float(x) -> BITCAST<float>(SHL(CAST<uint32>(BITCAST<uint16>(x)), 16))
 * float(bf16(f)) -> BITCAST<float>(w) where w is the rounded word (the shifts cancel) */
static tkc_uop *bf16_to_f32(tkc_graph *g, tkc_uop *x) {
  if (x->op == TKC_OP_CONST) return tkc_uop_const_float(g, dt_n(TKC_FLOAT32, 1), tkc_uop_const_f(x));
  if (x->op == TKC_OP_VECTORIZE && x->nsrc > 0 && x->src[0]->op == TKC_OP_CONST) {
    bool same = true;
    for (int i = 1; i < x->nsrc; i++) same = same && x->src[i] == x->src[0];
    if (same) return vconst(g, dt_n(TKC_FLOAT32, x->dtype.count), 0, tkc_uop_const_f(x->src[0]));
  }
  const tkc_uop *h = x->op == TKC_OP_BITCAST && x->nsrc == 1 ? x->src[0] : NULL;        /* CAST<uint16>(SHR(w, 16)) */
  const tkc_uop *s = h && h->op == TKC_OP_CAST && h->nsrc == 1 ? h->src[0] : NULL;     /* SHR(w, 16) */
  if (s && s->op == TKC_OP_SHR && s->dtype.scalar == TKC_UINT32 && is_const_int(s->src[1], 16) && s->src[0]->op == TKC_OP_AND &&
      is_const_int(s->src[0]->src[1], (int64_t)0xffff0000))
    return bitcast(g, s->src[0], TKC_FLOAT32);
  tkc_dt u32 = dt_n(TKC_UINT32, x->dtype.count);
  return bitcast(g, op2(g, TKC_OP_SHL, u32, cast(g, bitcast(g, x, TKC_UINT16), TKC_UINT32), iconst(g, u32, 16)), TKC_FLOAT32);
}

/* CAST<bf16>(x) -> bf16(CAST<float>(x));  CAST<T>(x<bf16>) -> CAST<T>(float(x))
 * (to float first, as INTERP: one rounding of an int or a double to float, then to bfloat16) */
static tkc_uop *bf16_cast(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  tkc_uop *r = tkc_match_root(m), *x = M("x");
  if (r->dtype.space || x->dtype.space || r->dtype.count != x->dtype.count || is_bf16(r) == is_bf16(x)) return NULL;
  if (is_bf16(r)) return f32_to_bf16(g, cast(g, x, TKC_FLOAT32));
  return cast(g, bf16_to_f32(g, x), (tkc_dtype)r->dtype.scalar);
}

/* CMPLT/CMPNE(a<bf16>, b) -> the compare on float(a), float(b) (exact) */
static tkc_uop *bf16_cmp(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  tkc_uop *r = tkc_match_root(m), *a = M("a"), *b = M("b");
  if (!is_bf16(b) || a->dtype.count != b->dtype.count) return NULL;
  return op2(g, (tkc_op)r->op, r->dtype, bf16_to_f32(g, a), bf16_to_f32(g, b));
}

/* op<bf16>(s...) -> bf16(op<F>(F(s)...)):   NEG(x) -> x ^ 0x8000 on the bits;  MAX(a, b) -> a < b ? b : a */
static tkc_uop *bf16_alu(tkc_graph *g, const tkc_match *m, bool via_f64) {
  tkc_uop *r = tkc_match_root(m);
  int n = r->dtype.count;
  if (r->dtype.space || r->op == TKC_OP_WHERE || r->nsrc < 1 || r->nsrc > 3) return NULL;
  for (int k = 0; k < r->nsrc; k++)
    if (!is_bf16(r->src[k]) || r->src[k]->dtype.count != n) return NULL;
  if (r->op == TKC_OP_NEG) {
    tkc_uop *bits = bitcast(g, r->src[0], TKC_UINT16);
    return bitcast(g, op2(g, TKC_OP_XOR, dt_n(TKC_UINT16, n), bits, iconst(g, dt_n(TKC_UINT16, n), 0x8000)), TKC_BFLOAT16);
  }
  if (r->op == TKC_OP_MAX) {
    tkc_uop *a = r->src[0], *b = r->src[1];
    return where(g, op2(g, TKC_OP_CMPLT, dt_n(TKC_BOOL, n), bf16_to_f32(g, a), bf16_to_f32(g, b)), b, a);
  }
  tkc_dtype F = via_f64 && r->op != TKC_OP_MULACC ? TKC_FLOAT64 : TKC_FLOAT32;
  tkc_uop *s[3];
  for (int k = 0; k < r->nsrc; k++)
    if (!(s[k] = cast(g, bf16_to_f32(g, r->src[k]), F))) return NULL;
  tkc_uop *y = tkc_uop_new(g, (tkc_op)r->op, dt_n(F, n), r->nsrc, s, r->arg);
  return y ? f32_to_bf16(g, cast(g, y, TKC_FLOAT32)) : NULL;
}
static tkc_uop *bf16_alu_f32(tkc_graph *g, const tkc_match *m, void *ctx) { (void)ctx; return bf16_alu(g, m, false); }
static tkc_uop *bf16_alu_f64(tkc_graph *g, const tkc_match *m, void *ctx) { (void)ctx; return bf16_alu(g, m, true); }

static const tkc_rule bf16_f32_rules[] = {
    {"x:ALU<bfloat16>", bf16_alu_f32},           /* op<bf16> -> bf16(op<float>(float(s)...)) */
    {"(CMPLT|CMPNE a<bfloat16> b)", bf16_cmp},   /* compare float(a), float(b) */
    {"(CAST x)", bf16_cast},                     /* conversions through float32, on the bits */
};
static const tkc_rule bf16_f64_rules[] = {
    {"x:ALU<bfloat16>", bf16_alu_f64},           /* op<bf16> -> bf16(float(op<double>(double(s)...))) */
    {"(CMPLT|CMPNE a<bfloat16> b)", bf16_cmp},
    {"(CAST x)", bf16_cast},
};

/* ---------------------------------------------------------------- no vector ALU */

/* lane i of vector v (GEP, or the VECTORIZE's source); a scalar serves every lane */
static tkc_uop *lane_of(tkc_graph *g, tkc_uop *v, int i) {
  if (v->dtype.count <= 1) return v;
  if (v->op == TKC_OP_VECTORIZE && v->nsrc == v->dtype.count) return v->src[i];
  tkc_arg a = tkc_arg_int(i);
  return tkc_uop_new(g, TKC_OP_GEP, tkc_dt_scalar(v->dtype), 1, &v, tkc_arg_tuple(&a, 1));
}

/* op<T.vec(n)>(s...) -> VECTORIZE(op<T>(GEP(s, 0)...), ..., op<T>(GEP(s, n-1)...)) */
tkc_uop *tkc_target_scalarize(tkc_graph *g, const tkc_uop *r) {
  tkc_uop *lanes[256], *s[3];
  int n = r->dtype.count;
  if (r->dtype.space || n <= 1 || n > 256 || r->nsrc < 1 || r->nsrc > 3) return NULL;
  if (!(tkc_op_flags((tkc_op)r->op) & TKC_F_ALU) && r->op != TKC_OP_CAST && r->op != TKC_OP_BITCAST) return NULL;
  for (int k = 0; k < r->nsrc; k++) {
    const tkc_uop *sk = r->src[k];
    if (sk->dtype.space || (sk->dtype.count != n && sk->dtype.count != 1)) return NULL;
    if (r->op == TKC_OP_BITCAST && sk->dtype.count != n) return NULL;
  }
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < r->nsrc; k++)
      if (!(s[k] = lane_of(g, r->src[k], i))) return NULL;
    if (!(lanes[i] = tkc_uop_new(g, (tkc_op)r->op, tkc_dt_scalar(r->dtype), r->nsrc, s, r->arg))) return NULL;
  }
  return tkc_uop_new(g, TKC_OP_VECTORIZE, r->dtype, n, lanes, tkc_arg_none());
}
static tkc_uop *devectorize(tkc_graph *g, const tkc_match *m, void *ctx) { (void)ctx; return tkc_target_scalarize(g, tkc_match_root(m)); }

/* GEP(VECTORIZE(s0, ..., sn), (i,)) -> si */
static tkc_uop *gep_vectorize(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)g, (void)ctx;
  tkc_uop *r = tkc_match_root(m), *v = M("v");
  if (r->arg.kind != TKC_ARG_TUPLE || r->arg.n != 1 || r->arg.v.t[0].kind != TKC_ARG_INT || v->nsrc != v->dtype.count) return NULL;
  int64_t i = r->arg.v.t[0].v.i;
  return i >= 0 && i < v->nsrc && tkc_dt_eq(v->src[i]->dtype, r->dtype) ? v->src[i] : NULL;
}

static const tkc_rule scalar_alu_rules[] = {
    {"x:ALU|CAST|BITCAST", devectorize},   /* vector op -> VECTORIZE of lane ops */
    {"(GEP v:VECTORIZE)", gep_vectorize},  /* a lane of a VECTORIZE is its source */
};
static const tkc_rule lane_gep_rules[] = {
    {"(GEP v:VECTORIZE)", gep_vectorize},  /* (LANE_GEPS alone: the renderer scalarizes what it picks) */
};

/* ---------------------------------------------------------------- the matcher of a flag set */

static const tkc_matcher *group(unsigned bit, unsigned flags) {
  static tkc_matcher *_Atomic pm[8];
  switch (bit) {
  case TKC_TARGET_GUARD_DIV_ZERO:
    if (flags & TKC_TARGET_GUARD_DIV_MINUS1) return tkc_matcher_static(&pm[0], div_both_rules, TKC_COUNTOF(div_both_rules));
    return tkc_matcher_static(&pm[1], div_zero_rules, TKC_COUNTOF(div_zero_rules));
  case TKC_TARGET_BF16_BITS:
    if (flags & TKC_TARGET_BF16_VIA_F64) return tkc_matcher_static(&pm[2], bf16_f64_rules, TKC_COUNTOF(bf16_f64_rules));
    return tkc_matcher_static(&pm[3], bf16_f32_rules, TKC_COUNTOF(bf16_f32_rules));
  case TKC_TARGET_SCALAR_ALU: return tkc_matcher_static(&pm[4], scalar_alu_rules, TKC_COUNTOF(scalar_alu_rules));
  case TKC_TARGET_LANE_GEPS: return tkc_matcher_static(&pm[5], lane_gep_rules, TKC_COUNTOF(lane_gep_rules));
  case TKC_TARGET_GUARD_SHIFT: return tkc_matcher_static(&pm[6], shift_rules, TKC_COUNTOF(shift_rules));
  case TKC_TARGET_GUARD_FTOI: return tkc_matcher_static(&pm[7], ftoi_rules, TKC_COUNTOF(ftoi_rules));
  default: return NULL;
  }
}

/* a new matcher of a's rules then b's; a is freed */
static tkc_matcher *append(tkc_matcher *a, const tkc_matcher *b) {
  tkc_matcher *c = tkc_matcher_concat(a, b);
  tkc_matcher_free(a);
  return c;
}

/* stores fresh into *slot unless another thread was first; returns the one kept */
static const tkc_matcher *publish(tkc_matcher *_Atomic *slot, tkc_matcher *fresh) {
  tkc_matcher *expected = NULL;
  if (!fresh) return NULL;
  if (atomic_compare_exchange_strong(slot, &expected, fresh)) return fresh;
  tkc_matcher_free(fresh);
  return expected;
}

const tkc_matcher *tkc_target_rules(unsigned flags) {
  static tkc_matcher *_Atomic built[1u << TKC_TARGET_NFLAGS];
  if (flags >= (1u << TKC_TARGET_NFLAGS)) return tkc_err_null(TKC_EINVAL, "target rules: unknown flags 0x%x", flags);
  const tkc_matcher *done = atomic_load(&built[flags]);
  if (done) return done;
  /* GUARD_DIV_MINUS1 and BF16_VIA_F64 only refine the group of the flag before them; SCALAR_ALU has
   * LANE_GEPS' rule already */
  if (flags & TKC_TARGET_SCALAR_ALU) flags &= ~(unsigned)TKC_TARGET_LANE_GEPS;
  static const unsigned order[] = {TKC_TARGET_GUARD_DIV_ZERO, TKC_TARGET_GUARD_SHIFT, TKC_TARGET_GUARD_FTOI, TKC_TARGET_BF16_BITS,
                                   TKC_TARGET_SCALAR_ALU, TKC_TARGET_LANE_GEPS};
  tkc_matcher *all = tkc_matcher_concat(NULL, NULL); /* empty */
  for (size_t i = 0; i < TKC_COUNTOF(order) && all; i++) {
    if (!(flags & order[i])) continue;
    const tkc_matcher *g = group(order[i], flags);
    if (!g) { tkc_matcher_free(all); return NULL; }
    all = append(all, g);
  }
  return publish(&built[flags], all);
}

const tkc_matcher *tkc_target_matcher(tkc_matcher *_Atomic *slot, const tkc_matcher *own, unsigned flags) {
  const tkc_matcher *done = atomic_load(slot);
  if (done) return done;
  const tkc_matcher *rules = tkc_target_rules(flags);
  if (!rules) return NULL;
  return publish(slot, tkc_matcher_concat(own, rules));
}
