/* src/render/wgsl_rules.c — the WGSL renderer's extra matcher: rewrites applied to a kernel's uops
 * before it is linearized, so that wgsl.c renders only what WGSL can express directly: loads and
 * stores of packed 8/16-bit and bfloat16 buffers as u32 word accesses, bool comparisons on ints,
 * shifts of i32 on u32, MAX as a select (see wgsl.c for the value representation). */
#include <math.h>
#include "codegen/target_rules.h"
#include "render/wgsl_rules.h"
#include "uops/uop_internal.h"

bool tkc_wgsl_packed(int s) { return s >= 0 && s < TKC_NDTYPES && ((TKC_WGSL_PACKED >> s) & 1u); }

static tkc_dt u32_dt(void) { return tkc_dt_of(TKC_UINT32); }
static tkc_uop *u32c(tkc_graph *g, uint32_t v) { return tkc_uop_const_int(g, u32_dt(), v); }
static tkc_uop *alu2(tkc_graph *g, tkc_op op, tkc_dt dt, tkc_uop *a, tkc_uop *b) {
  if (!a || !b) return NULL;
  tkc_uop *s[2] = {a, b};
  return tkc_uop_new(g, op, dt, 2, s, tkc_arg_none());
}
static tkc_uop *cast_to(tkc_graph *g, tkc_uop *a, tkc_dtype d) { return a ? tkc_uop_cast(g, a, tkc_dt_of(d)) : NULL; }

bool tkc_wgsl_load_gated(const tkc_uop *l) {
  return l->nsrc >= 3 && l->src[1]->dtype.scalar != TKC_VOID && !l->src[1]->dtype.space && l->src[2]->dtype.scalar == TKC_BOOL;
}

/* true when an INDEX addresses a packed global buffer of scalar elements */
static bool packed_index(const tkc_uop *idx) {
  if (!idx || idx->op != TKC_OP_INDEX || idx->nsrc != 2) return false;
  tkc_dt p = idx->dtype;
  return p.space == TKC_SPACE_GLOBAL && p.count == 1 && p.pcount == 1 && tkc_wgsl_packed(p.scalar) && idx->src[1]->dtype.count == 1;
}

/* word index and bit shift of element idx in a packed buffer of itemsize-byte elements */
static void packed_addr(tkc_graph *g, const tkc_uop *bidx, int itemsize, tkc_uop **word, tkc_uop **shift) {
  tkc_uop *idx = bidx->src[1];
  int per = 4 / itemsize;
  tkc_uop *w = alu2(g, TKC_OP_IDIV, idx->dtype, idx, tkc_uop_const_int(g, idx->dtype, per));
  tkc_uop *s[2] = {bidx->src[0], w};
  *word = w ? tkc_uop_new(g, TKC_OP_INDEX, bidx->dtype, 2, s, bidx->arg) : NULL;
  *shift = alu2(g, TKC_OP_MUL, u32_dt(), alu2(g, TKC_OP_MOD, u32_dt(), cast_to(g, idx, TKC_UINT32), u32c(g, (uint32_t)per)),
                u32c(g, (uint32_t)(8 * itemsize)));
}

/* the u32 word value w holding an element at shift, as a value of dtype d */
static tkc_uop *unpack(tkc_graph *g, tkc_uop *w, tkc_uop *shift, tkc_dtype d) {
  uint32_t mask = tkc_dtype_size(d) == 1 ? 0xffu : 0xffffu;
  tkc_uop *v = alu2(g, TKC_OP_AND, u32_dt(), alu2(g, TKC_OP_SHR, u32_dt(), w, shift), u32c(g, mask));
  if (d == TKC_BFLOAT16) return v ? tkc_uop_bitcast(g, cast_to(g, v, TKC_UINT16), tkc_dt_of(TKC_BFLOAT16)) : NULL;
  return cast_to(g, v, d); /* bool: != 0; int8/int16: the cast sign-extends */
}

/* LOAD(INDEX(buf, i)) of a packed type -> unpack(LOAD<u32>(INDEX(buf, i/n)) >> shift & mask)
 * LOAD(INDEX(buf, i), alt, gate)        -> gate ? unpack(LOAD<u32>(INDEX(buf, i/n), 0, gate)) : alt
 * (void ordering sources are kept) */
static tkc_uop *r_packed_load(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *l = tkc_match_root(m), *bidx = tkc_match_get(m, "b");
  tkc_dtype d = (tkc_dtype)l->dtype.scalar;
  if (l->dtype.count != 1 || !packed_index(bidx) || !tkc_wgsl_packed(d) || bidx->dtype.scalar != d || l->nsrc > 16) return NULL;
  bool gated = tkc_wgsl_load_gated(l);
  tkc_uop *word, *shift;
  packed_addr(g, bidx, (int)tkc_dtype_size(d), &word, &shift);
  if (!word || !shift) return NULL;
  tkc_uop *src[16];
  for (int k = 0; k < l->nsrc; k++) src[k] = l->src[k];
  src[0] = word;
  if (gated && !(src[1] = u32c(g, 0))) return NULL;
  tkc_uop *ld = tkc_uop_new(g, TKC_OP_LOAD, u32_dt(), l->nsrc, src, l->arg);
  tkc_uop *v = ld ? unpack(g, ld, shift, d) : NULL;
  if (!v || !gated) return v;
  tkc_uop *w[3] = {l->src[2], v, l->src[1]};
  return tkc_uop_new(g, TKC_OP_WHERE, l->dtype, 3, w, tkc_arg_none());
}

/* STORE(INDEX(buf, i), v[, IF]) of a packed type ->
 *   STORE(INDEX(buf, i/n), (LOAD<u32>(INDEX(buf, i/n)) & ~(mask << shift)) | ((bits(v) & mask) << shift)[, IF])
 * rendered as atomicAnd + atomicOr on the word */
static tkc_uop *r_packed_store(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *st = tkc_match_root(m), *bidx = tkc_match_get(m, "bidx"), *var = tkc_match_get(m, "var");
  tkc_dtype d = (tkc_dtype)var->dtype.scalar;
  if (var->dtype.count != 1 || !packed_index(bidx) || bidx->dtype.scalar != d || st->nsrc > 3) return NULL;
  uint32_t mask = tkc_dtype_size(d) == 1 ? 0xffu : 0xffffu;
  tkc_uop *word, *shift;
  packed_addr(g, bidx, (int)tkc_dtype_size(d), &word, &shift);
  if (!word || !shift) return NULL;
  tkc_uop *bits = d == TKC_BFLOAT16 ? cast_to(g, tkc_uop_bitcast(g, var, tkc_dt_of(TKC_UINT16)), TKC_UINT32) : cast_to(g, var, TKC_UINT32);
  tkc_uop *newv = alu2(g, TKC_OP_SHL, u32_dt(), alu2(g, TKC_OP_AND, u32_dt(), bits, u32c(g, mask)), shift);
  tkc_uop *clear = alu2(g, TKC_OP_XOR, u32_dt(), alu2(g, TKC_OP_SHL, u32_dt(), u32c(g, mask), shift), u32c(g, 0xffffffffu));
  tkc_uop *old = tkc_uop_new(g, TKC_OP_LOAD, u32_dt(), 1, &word, tkc_arg_none());
  tkc_uop *val = alu2(g, TKC_OP_OR, u32_dt(), alu2(g, TKC_OP_AND, u32_dt(), old, clear), newv);
  if (!val) return NULL;
  tkc_uop *src[3] = {word, val, st->nsrc == 3 ? st->src[2] : NULL};
  return tkc_uop_new(g, TKC_OP_STORE, st->dtype, st->nsrc, src, st->arg);
}

/* a < b and a ^ b on bools -> on int32, then back to bool (WGSL has neither on bool) */
static tkc_uop *r_bool_int_op(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *c = tkc_match_root(m), *a = tkc_match_get(m, "a"), *b = tkc_match_get(m, "b");
  if (b->dtype.scalar != TKC_BOOL || a->dtype.count != 1 || b->dtype.count != 1) return NULL;
  tkc_uop *r = alu2(g, (tkc_op)c->op, c->op == TKC_OP_CMPLT ? tkc_dt_of(TKC_BOOL) : tkc_dt_of(TKC_INT32), cast_to(g, a, TKC_INT32),
                    cast_to(g, b, TKC_INT32));
  return c->op == TKC_OP_CMPLT ? r : cast_to(g, r, TKC_BOOL);
}

/* a * (g ? nan : 1.0) -> g ? nan : a */
static tkc_uop *r_mul_nan_gate(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *a = tkc_match_get(m, "a"), *gt = tkc_match_get(m, "g"), *c1 = tkc_match_get(m, "c1"), *c2 = tkc_match_get(m, "c2");
  if (!tkc_dt_is_float(c1->dtype) || !isnan(tkc_uop_const_f(c1)) || tkc_uop_const_f(c2) != 1.0 || !tkc_dt_eq(c1->dtype, a->dtype)) return NULL;
  tkc_uop *s[3] = {gt, c1, a};
  return tkc_uop_new(g, TKC_OP_WHERE, a->dtype, 3, s, tkc_arg_none());
}

/* a << b on 32-bit ints with a count that is not u32 -> bitcast<a.dtype>(bitcast<u32>(a) << u32(b)) */
static tkc_uop *r_shl_u32(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *a = tkc_match_get(m, "a"), *b = tkc_match_get(m, "b");
  if (a->dtype.scalar != TKC_INT32 || a->dtype.count != 1 || b->dtype.scalar == TKC_UINT32 || !tkc_dtype_is_int(b->dtype.scalar) || b->dtype.count != 1)
    return NULL;
  tkc_uop *r = alu2(g, TKC_OP_SHL, u32_dt(), tkc_uop_bitcast(g, a, u32_dt()), cast_to(g, b, TKC_UINT32));
  return r ? tkc_uop_bitcast(g, r, a->dtype) : NULL;
}

/* max(a, b) -> a < b ? b : a (cstyle's extra_pm) */
static tkc_uop *r_max(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *mx = tkc_match_root(m);
  if (mx->nsrc != 2 || mx->dtype.scalar == TKC_BOOL) return NULL;
  tkc_uop *lt = alu2(g, TKC_OP_CMPLT, tkc_dt_vec(tkc_dt_of(TKC_BOOL), mx->dtype.count), mx->src[0], mx->src[1]);
  tkc_uop *s[3] = {lt, mx->src[1], mx->src[0]};
  return lt ? tkc_uop_new(g, TKC_OP_WHERE, mx->dtype, 3, s, tkc_arg_none()) : NULL;
}

/* u is float32 vector arithmetic WGSL does as vector ops (the same result as lane by lane); the
 * rules scalarize the other vector ops (r_lanes) */
bool tkc_wgsl_native_vector(const tkc_uop *u) {
  int op = u->op;
  if (u->dtype.count < 2 || u->dtype.count > 4 || u->dtype.space || u->dtype.scalar != TKC_FLOAT32 || u->nsrc > 3) return false;
  if (op != TKC_OP_ADD && op != TKC_OP_SUB && op != TKC_OP_MUL && op != TKC_OP_FDIV && op != TKC_OP_NEG && op != TKC_OP_MULACC) return false;
  for (int k = 0; k < u->nsrc; k++)
    if (!tkc_dt_eq(u->src[k]->dtype, u->dtype)) return false;
  return op != TKC_OP_MULACC || u->nsrc == 3;
}
/* a vector op WGSL has no vector form for (all but float32 arithmetic) -> VECTORIZE of its lane ops */
static tkc_uop *r_lanes(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  const tkc_uop *u = tkc_match_root(m);
  return u->dtype.count > 1 && !tkc_wgsl_native_vector(u) ? tkc_target_scalarize(g, u) : NULL;
}

static const tkc_rule wgsl_rules[] = {
    {"c:(CMPLT a<bool> b)", r_bool_int_op},                         /* a<b (bool) -> int(a)<int(b) */
    {"c:(XOR a<bool> b)", r_bool_int_op},                           /* a^b (bool) -> bool(int(a)^int(b)) */
    {"l:(LOAD b:INDEX ...)", r_packed_load},                        /* packed load: word >> shift & mask */
    {"(STORE bidx:INDEX var ...)", r_packed_store},                 /* packed store: atomicAnd + atomicOr */
    {"(MUL a (WHERE g c1:CONST c2:CONST))", r_mul_nan_gate},        /* a*(g?nan:1) -> g?nan:a */
    {"(SHL a b)", r_shl_u32},                                       /* a<<b -> (u32(a)<<u32(b)) as a */
    {"MAX", r_max},                                                 /* max(a,b) -> a<b?b:a */
    {"x:ALU|CAST|BITCAST", r_lanes},                                /* vector op -> VECTORIZE of lane ops */
};

/* WGSL lacks INTERP's x/0 = 0 (WGSL gives x / 0 = x; it defines INT_MIN / -1 = INT_MIN itself) and
 * most vector ALU */
const tkc_matcher *tkc_wgsl_matcher(void) {
  static tkc_matcher *_Atomic own, *_Atomic all;
  const tkc_matcher *pm = tkc_matcher_static(&own, wgsl_rules, TKC_COUNTOF(wgsl_rules));
  return pm ? tkc_target_matcher(&all, pm, TKC_TARGET_GUARD_DIV_ZERO | TKC_TARGET_LANE_GEPS) : NULL;
}


