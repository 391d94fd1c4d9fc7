/* Rewrites that put a kernel into the form renderers read (tinygrad's pm_render): masks move from
 * INDEX to the LOAD (gate ? *p : 0) or to an IF around the STORE, vector constants and multi-lane
 * GEPs become explicit VECTORIZEs. */
#include "codegen/codegen.h"

static tkc_uop *zero_like(tkc_graph *g, const tkc_uop *like) {
  return tkc_dt_is_float(like->dtype) ? tkc_uop_const_float(g, like->dtype, 0.0) : tkc_uop_const_int(g, like->dtype, 0);
}

/* the INDEX (or CAST(INDEX)) p without its mask */
static tkc_uop *unmasked(tkc_graph *g, tkc_uop *p, tkc_uop *idx) {
  tkc_uop *s[2] = {idx->src[0], idx->src[1]};
  tkc_uop *plain = tkc_uop_new(g, TKC_OP_INDEX, idx->dtype, 2, s, idx->arg);
  return p == idx ? plain : tkc_uop_new(g, (tkc_op)p->op, p->dtype, 1, &plain, p->arg);
}

/* LOAD(INDEX(buf, idx, mask)) -> LOAD(INDEX(buf, idx), 0, mask) */
static tkc_uop *masked_load(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *ld = tkc_match_root(m), *idx = tkc_match_get(m, "idx"), *p = ld->src[0];
  tkc_uop *src[3] = {unmasked(g, p, idx), zero_like(g, ld), idx->src[2]};
  return tkc_uop_new(g, TKC_OP_LOAD, ld->dtype, 3, src, ld->arg);
}

/* STORE(INDEX(buf, idx, mask), v) -> STORE(INDEX(buf, idx), v, IF(mask)) */
static tkc_uop *masked_store(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *st = tkc_match_root(m), *idx = tkc_match_get(m, "idx"), *p = st->src[0];
  tkc_uop *gate = idx->src[2];
  tkc_uop *src[3] = {unmasked(g, p, idx), st->src[1], tkc_uop_new(g, TKC_OP_IF, tkc_dt_of(TKC_VOID), 1, &gate, tkc_arg_none())};
  return tkc_uop_new(g, TKC_OP_STORE, st->dtype, 3, src, st->arg);
}

/* STORE(p, v, gate) with a bool gate -> STORE(p, v, IF(gate)) */
static tkc_uop *gate_store(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *st = tkc_match_root(m), *gate = tkc_match_get(m, "gate");
  tkc_uop *src[3] = {st->src[0], st->src[1], tkc_uop_new(g, TKC_OP_IF, tkc_dt_of(TKC_VOID), 1, &gate, tkc_arg_none())};
  return tkc_uop_new(g, TKC_OP_STORE, st->dtype, 3, src, st->arg);
}

/* CONST of a vector dtype -> VECTORIZE of the scalar CONST */
static tkc_uop *vector_const(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *c = tkc_match_root(m);
  if (c->dtype.count <= 1 || tkc_dt_is_ptr(c->dtype)) return NULL;
  tkc_uop *s = tkc_uop_new(g, TKC_OP_CONST, tkc_dt_scalar(c->dtype), 0, NULL, c->arg);
  tkc_uop *lanes[256];
  if (!s || c->dtype.count > 256) return NULL;
  for (int i = 0; i < c->dtype.count; i++) lanes[i] = s;
  return tkc_uop_new(g, TKC_OP_VECTORIZE, c->dtype, c->dtype.count, lanes, tkc_arg_none());
}

/* GEP(v, (i, j, ...)) -> VECTORIZE(GEP(v, i), GEP(v, j), ...) */
static tkc_uop *split_gep(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *gep = tkc_match_root(m);
  if (gep->arg.kind != TKC_ARG_TUPLE || gep->arg.n <= 1 || gep->arg.n > 256) return NULL;
  tkc_uop *lanes[256];
  for (uint32_t i = 0; i < gep->arg.n; i++) {
    lanes[i] = tkc_uop_new(g, TKC_OP_GEP, tkc_dt_scalar(gep->dtype), 1, gep->src, tkc_arg_tuple(&gep->arg.v.t[i], 1));
    if (!lanes[i]) return NULL;
  }
  return tkc_uop_new(g, TKC_OP_VECTORIZE, gep->dtype, (int)gep->arg.n, lanes, tkc_arg_none());
}

static tkc_uop *first_src(tkc_graph *g, const tkc_match *m, void *ctx) { return tkc_match_get(m, "x"); }

static const tkc_rule render_prep_rules[] = {
    {"(LOAD idx:(INDEX _ _ _<bool>))", masked_load},             /* LOAD(buf[i] if m) -> m ? *p : 0 */
    {"(LOAD (CAST idx:(INDEX _ _ _<bool>)))", masked_load},      /* same through a vector cast */
    {"(STORE idx:(INDEX _ _ _<bool>) _)", masked_store},         /* store under mask -> if (m) store */
    {"(STORE (CAST idx:(INDEX _ _ _<bool>)) _)", masked_store},
    {"(STORE _ _ gate<bool>)", gate_store},                        /* bool gate -> IF */
    {"CONST", vector_const},                                        /* vector const -> VECTORIZE */
    {"GEP", split_gep},                                             /* multi-lane GEP -> VECTORIZE */
    {"(VECTORIZE x)", first_src},                                   /* VECTORIZE(x) -> x */
};

const tkc_matcher *tkc_render_prep(void) {
  static tkc_matcher *_Atomic pm;
  return tkc_matcher_static(&pm, render_prep_rules, TKC_COUNTOF(render_prep_rules));
}
