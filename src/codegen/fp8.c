/* fp8 as bytes: before a kernel reaches any renderer (or INTERP), its float8_e4m3fn / float8_e5m2
 * values become uint8 bits and every conversion becomes integer ops on them, so that each device
 * gets the same casts, bit for bit, without knowing the formats (src/uops/alu.c is the reference:
 * tkc_fp8_from_double / tkc_fp8_to_float, ml_dtypes' answers).
 *
 * Two passes, because the first needs to know which bytes are fp8:
 *   1. meaning:  CAST<float>(x<fp8>) -> decode(x);  CAST<fp8>(x<float|double>) -> encode(x) (one
 *                rounding; other sources through float32 first, exact for every value that can
 *                round to a finite fp8); other casts through float32; an ALU op of fp8 values is done
 *                in float32 and rounded back; compares of fp8 values compare their float32 values.
 *   2. storage:  every remaining fp8 dtype (buffers, loads, stores, WHEREs, vectors, constants) is
 *                retyped to uint8 and the BITCASTs between the two disappear. */
#include <math.h>
#include <stdatomic.h>
#include <string.h>
#include "codegen/codegen.h"
#include "codegen/uop_build.h"

#define M(name) tkc_match_get(m, name)

static bool is_fp8_scalar(int s) { return s == TKC_FLOAT8_E4M3FN || s == TKC_FLOAT8_E5M2; }
static bool is_fp8(const tkc_uop *u) { return !u->dtype.space && is_fp8_scalar(u->dtype.scalar); }

/* ---------------------------------------------------------------- building blocks */

static tkc_uop *iconst(tkc_graph *g, tkc_dt dt, uint64_t v) { return tkc_uop_const_int(g, dt, (int64_t)v); }
static tkc_uop *fconst(tkc_graph *g, tkc_dt dt, double v) { return tkc_uop_const_float(g, dt, v); }

/* the fp8 format: mantissa bits and exponent bias */
static void format_of(int fp8, int *mb, int *bias) {
  *mb = fp8 == TKC_FLOAT8_E4M3FN ? 3 : 2;
  *bias = fp8 == TKC_FLOAT8_E4M3FN ? 7 : 15;
}

/* the bits of v as float32 (wide: float64) */
static uint64_t float_bits(double v, bool wide) {
  if (wide) {
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
  }
  float f = (float)v;
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

/* ---------------------------------------------------------------- decode: fp8 -> float32 */

/* fp8 x -> its float32 value (exact), on the bits w = uint32(x), em = w & 0x7f:
 *   normal      sign | (em << (23 - mb)) + ((127 - bias) << 23)
 *   subnormal   sign | bits(float(w & mmask) * 2^(1 - bias - mb))            (em < 2^mb)
 *   e4m3fn      em == 0x7f -> NaN;  e5m2  em >= 0x7c -> em == 0x7c ? inf : NaN */
static tkc_uop *decode(tkc_graph *g, tkc_uop *x) {
  int n = x->dtype.count, fp8 = x->dtype.scalar, mb, bias;
  format_of(fp8, &mb, &bias);
  tkc_dt u32 = dt_n(TKC_UINT32, n), f32 = dt_n(TKC_FLOAT32, n);
  if (x->op == TKC_OP_CONST) return fconst(g, f32, tkc_uop_const_f(x));
  tkc_uop *w = cast(g, bitcast(g, x, TKC_UINT8), TKC_UINT32);
  tkc_uop *sign = op2(g, TKC_OP_SHL, u32, op2(g, TKC_OP_AND, u32, w, iconst(g, u32, 0x80)), iconst(g, u32, 24));
  tkc_uop *em = op2(g, TKC_OP_AND, u32, w, iconst(g, u32, 0x7f));
  tkc_uop *normal = op2(g, TKC_OP_ADD, u32, op2(g, TKC_OP_SHL, u32, em, iconst(g, u32, (uint64_t)(23 - mb))),
                        iconst(g, u32, (uint64_t)(127 - bias) << 23));
  tkc_uop *m = op2(g, TKC_OP_AND, u32, w, iconst(g, u32, (1u << mb) - 1));
  tkc_uop *sub = bitcast(g, op2(g, TKC_OP_MUL, f32, cast(g, m, TKC_FLOAT32), fconst(g, f32, ldexp(1.0, 1 - bias - mb))), TKC_UINT32);
  tkc_uop *nan = iconst(g, u32, 0x7fc00000u), *special, *body;
  if (fp8 == TKC_FLOAT8_E4M3FN) {
    special = cmplt(g, iconst(g, u32, 0x7e), em);
  } else {
    special = cmplt(g, iconst(g, u32, 0x7b), em);
    nan = where(g, cmpne(g, em, iconst(g, u32, 0x7c)), nan, iconst(g, u32, 0x7f800000u));
  }
  body = where(g, cmplt(g, em, iconst(g, u32, 1u << mb)), sub, where(g, special, nan, normal));
  return bitcast(g, op2(g, TKC_OP_OR, u32, sign, body), TKC_FLOAT32);
}

/* ---------------------------------------------------------------- encode: float32 / float64 -> fp8 */

/* float x (float32 or float64) -> fp8 bits, one rounding to nearest even, on a = bits(x) & ~sign
 * (U = uint32 or uint64, fm = 23 or 52 mantissa bits, fb = 127 or 1023 the exponent bias):
 *   normal      n = a - ((fb - bias) << fm):  (n + 2^(S-1) - 1 + ((n >> S) & 1)) >> S,  S = fm - mb
 *               (a carry out of the mantissa is the next exponent, as the format wants)
 *   subnormal   x / 2^(1-bias-mb) rounded: mant = (a & (2^fm - 1)) | 2^fm shifted right by
 *               K - E (K = fb + fm + 1 - bias - mb, E = a >> fm clamped so the count stays in [S+1, fm+2])
 *   e4m3fn      a > bits(464) -> 0x7f (NaN: past 448 after rounding, inf, NaN)
 *   e5m2        a > bits(inf) -> 0x7e (NaN);  a >= bits(61440) -> 0x7c (inf)
 * and the sign bit on top: (bits(x) >> (width - 8)) & 0x80 */
static tkc_uop *encode(tkc_graph *g, tkc_uop *x, int fp8) {
  int n = x->dtype.count, mb, bias;
  format_of(fp8, &mb, &bias);
  bool wide = x->dtype.scalar == TKC_FLOAT64;
  tkc_dtype U = wide ? TKC_UINT64 : TKC_UINT32;
  tkc_dt u = dt_n(U, n);
  int fm = wide ? 52 : 23, fb = wide ? 1023 : 127, width = wide ? 64 : 32, S = fm - mb;
  uint64_t one = 1;
  tkc_uop *bits = bitcast(g, x, U);
  tkc_uop *sign = op2(g, TKC_OP_AND, u, op2(g, TKC_OP_SHR, u, bits, iconst(g, u, (uint64_t)(width - 8))), iconst(g, u, 0x80));
  tkc_uop *a = op2(g, TKC_OP_AND, u, bits, iconst(g, u, (one << (width - 1)) - 1));
  /* normal */
  tkc_uop *nn = op2(g, TKC_OP_SUB, u, a, iconst(g, u, (uint64_t)(fb - bias) << fm));
  tkc_uop *odd = op2(g, TKC_OP_AND, u, op2(g, TKC_OP_SHR, u, nn, iconst(g, u, (uint64_t)S)), iconst(g, u, 1));
  tkc_uop *normal = op2(g, TKC_OP_SHR, u, op2(g, TKC_OP_ADD, u, op2(g, TKC_OP_ADD, u, nn, iconst(g, u, (one << (S - 1)) - 1)), odd),
                        iconst(g, u, (uint64_t)S));
  /* subnormal */
  int64_t K = fb + fm + 1 - bias - mb, lo = K - (fm + 2), hi = fb - bias;
  tkc_uop *E = op2(g, TKC_OP_SHR, u, a, iconst(g, u, (uint64_t)fm));
  E = where(g, cmplt(g, E, iconst(g, u, (uint64_t)lo)), iconst(g, u, (uint64_t)lo), where(g, cmplt(g, iconst(g, u, (uint64_t)hi), E), iconst(g, u, (uint64_t)hi), E));
  tkc_uop *cnt = op2(g, TKC_OP_SUB, u, iconst(g, u, (uint64_t)K), E); /* in [S + 1, fm + 2] */
  tkc_uop *mant = op2(g, TKC_OP_OR, u, op2(g, TKC_OP_AND, u, a, iconst(g, u, (one << fm) - 1)), iconst(g, u, one << fm));
  tkc_uop *half = op2(g, TKC_OP_SHL, u, iconst(g, u, 1), op2(g, TKC_OP_SUB, u, cnt, iconst(g, u, 1)));
  tkc_uop *sodd = op2(g, TKC_OP_AND, u, op2(g, TKC_OP_SHR, u, mant, cnt), iconst(g, u, 1));
  tkc_uop *sub = op2(g, TKC_OP_SHR, u, op2(g, TKC_OP_ADD, u, op2(g, TKC_OP_ADD, u, mant, op2(g, TKC_OP_SUB, u, half, iconst(g, u, 1))), sodd), cnt);
  /* range */
  tkc_uop *body = where(g, cmplt(g, a, iconst(g, u, (uint64_t)(fb + 1 - bias) << fm)), sub, normal);
  if (fp8 == TKC_FLOAT8_E4M3FN) {
    body = where(g, cmplt(g, iconst(g, u, float_bits(464.0, wide)), a), iconst(g, u, 0x7f), body);
  } else {
    body = where(g, cmplt(g, iconst(g, u, float_bits(61440.0, wide) - 1), a), iconst(g, u, 0x7c), body);
    body = where(g, cmplt(g, iconst(g, u, float_bits(INFINITY, wide)), a), iconst(g, u, 0x7e), body);
  }
  return bitcast(g, cast(g, op2(g, TKC_OP_OR, u, sign, body), TKC_UINT8), (tkc_dtype)fp8);
}

/* ---------------------------------------------------------------- pass 1: meaning */

/* CAST<fp8>(x) -> encode(x) (x a float32 / float64, else float32(x) first);
 * CAST<T>(x<fp8>) -> decode(x), then CAST<T> of that unless T is float32 */
static tkc_uop *fp8_cast(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  tkc_uop *r = tkc_match_root(m), *x = M("x");
  if (r->dtype.space || x->dtype.space || r->dtype.count != x->dtype.count || (!is_fp8(r) && !is_fp8(x))) return NULL;
  if (is_fp8(r) && is_fp8(x) && r->dtype.scalar == x->dtype.scalar) return x;
  tkc_uop *v = is_fp8(x) ? decode(g, x) : x;
  if (!is_fp8(r)) return cast(g, v, (tkc_dtype)r->dtype.scalar);
  if (v && v->dtype.scalar != TKC_FLOAT64) v = cast(g, v, TKC_FLOAT32);
  return v ? encode(g, v, r->dtype.scalar) : NULL;
}

/* CMPLT/CMPNE(a<fp8>, b<fp8>) -> the compare of float32(a), float32(b) (exact) */
static tkc_uop *fp8_cmp(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  tkc_uop *r = tkc_match_root(m), *a = M("a"), *b = M("b");
  if (!is_fp8(a) || !is_fp8(b)) return NULL;
  return op2(g, (tkc_op)r->op, r->dtype, decode(g, a), decode(g, b));
}

/* op<fp8>(s...) -> CAST<fp8>(op<float>(float(s)...)) (not WHERE: it selects the bits) */
static tkc_uop *fp8_alu(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  tkc_uop *r = tkc_match_root(m), *s[3];
  if (!is_fp8(r) || r->op == TKC_OP_WHERE || r->nsrc < 1 || r->nsrc > 3) return NULL;
  for (int k = 0; k < r->nsrc; k++)
    if (!(s[k] = is_fp8(r->src[k]) ? decode(g, r->src[k]) : cast(g, r->src[k], TKC_FLOAT32))) return NULL;
  tkc_uop *y = tkc_uop_new(g, (tkc_op)r->op, dt_n(TKC_FLOAT32, r->dtype.count), r->nsrc, s, r->arg);
  return y ? encode(g, y, r->dtype.scalar) : NULL;
}

static const tkc_rule meaning_rules[] = {
    {"x:ALU<float8_e4m3fn>", fp8_alu},             /* op<fp8> -> fp8(op<float>(float(s)...)) */
    {"x:ALU<float8_e5m2>", fp8_alu},
    {"(CMPLT|CMPNE a b)", fp8_cmp},                /* compare float(a), float(b) */
    {"(CAST x)", fp8_cast},                        /* conversions: integer ops on the bits */
};

/* ---------------------------------------------------------------- pass 2: storage */

/* u with uint8 where it has an fp8 dtype (pointers to fp8 included): CONSTs hold the bits,
 * BITCASTs between fp8 and uint8 vanish, every other op keeps its sources and arg */
static tkc_uop *retype(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  tkc_uop *r = tkc_match_root(m);
  if (r->op == TKC_OP_BITCAST && r->nsrc == 1 && tkc_dt_eq(r->src[0]->dtype, r->dtype)) return r->src[0];
  if (!is_fp8_scalar(r->dtype.scalar)) return NULL;
  tkc_dt dt = r->dtype;
  dt.scalar = TKC_UINT8;
  if (r->op == TKC_OP_CONST) return iconst(g, dt, tkc_fp8_from_double(tkc_uop_const_f(r), (tkc_dtype)r->dtype.scalar));
  if (r->op == TKC_OP_BITCAST && r->nsrc == 1) return tkc_uop_bitcast(g, r->src[0], dt);
  if (r->op == TKC_OP_VCONST) return tkc_err_null(TKC_EUNSUPPORTED, "fp8: VCONST of %s", tkc_dtype_name((tkc_dtype)r->dtype.scalar));
  return tkc_uop_new(g, (tkc_op)r->op, dt, r->nsrc, r->src, r->arg);
}

static const tkc_rule storage_rules[] = {
    {"x:ALL", retype}, /* fp8 -> uint8 bits */
};

/* 1 when a UOp under sink has an fp8 dtype, 0 when none has, -1 out of memory */
static int has_fp8(const tkc_uop *sink) {
  size_t n = 0;
  tkc_uop **all = tkc_toposort(sink, &n);
  if (!all) return -1;
  int any = 0;
  for (size_t i = 0; i < n && !any; i++) any = is_fp8_scalar(all[i]->dtype.scalar);
  tkc_free(all);
  return any;
}

tkc_uop *tkc_fp8_to_bits(tkc_graph *g, tkc_uop *sink) {
  static tkc_matcher *_Atomic pm_meaning, *_Atomic pm_storage;
  int any = sink ? has_fp8(sink) : 0;
  if (any < 0) return tkc_err_null(TKC_ENOMEM, "fp8: out of memory walking the kernel");
  if (!any) return sink;
  const tkc_matcher *meaning = tkc_matcher_static(&pm_meaning, meaning_rules, TKC_COUNTOF(meaning_rules));
  const tkc_matcher *storage = tkc_matcher_static(&pm_storage, storage_rules, TKC_COUNTOF(storage_rules));
  if (!meaning || !storage) return NULL;
  tkc_uop *r = tkc_graph_rewrite(g, sink, meaning, NULL);
  return r ? tkc_graph_rewrite(g, r, storage, NULL) : NULL;
}
