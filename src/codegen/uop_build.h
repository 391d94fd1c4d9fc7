/* src/codegen/uop_build.h — small builders for rewrite rules that make new uops (target_rules.c,
 * fp8.c): each takes NULL sources through (a failed allocation), so a rule is straight-line code
 * whose result is checked once. Vector-aware: results keep the operands' lane count. */
#ifndef TKC_CODEGEN_UOP_BUILD_H
#define TKC_CODEGEN_UOP_BUILD_H
#include "uops/uop_internal.h"

static inline tkc_dt dt_n(tkc_dtype s, int n) { return tkc_dt_vec(tkc_dt_of(s), n); }

static inline tkc_uop *op2(tkc_graph *g, tkc_op op, tkc_dt dt, tkc_uop *a, tkc_uop *b) {
  tkc_uop *s[2] = {a, b};
  return a && b ? tkc_uop_new(g, op, dt, 2, s, tkc_arg_none()) : NULL;
}
static inline tkc_uop *where(tkc_graph *g, tkc_uop *c, tkc_uop *a, tkc_uop *b) {
  tkc_uop *s[3] = {c, a, b};
  return c && a && b ? tkc_uop_new(g, TKC_OP_WHERE, a->dtype, 3, s, tkc_arg_none()) : NULL;
}
static inline tkc_uop *cmplt(tkc_graph *g, tkc_uop *a, tkc_uop *b) { return a ? op2(g, TKC_OP_CMPLT, dt_n(TKC_BOOL, a->dtype.count), a, b) : NULL; }
static inline tkc_uop *cmpne(tkc_graph *g, tkc_uop *a, tkc_uop *b) { return a ? op2(g, TKC_OP_CMPNE, dt_n(TKC_BOOL, a->dtype.count), a, b) : NULL; }
static inline tkc_uop *cast(tkc_graph *g, tkc_uop *a, tkc_dtype s) { return a ? tkc_uop_cast(g, a, dt_n(s, a->dtype.count)) : NULL; }
static inline tkc_uop *bitcast(tkc_graph *g, tkc_uop *a, tkc_dtype s) { return a ? tkc_uop_bitcast(g, a, dt_n(s, a->dtype.count)) : NULL; }

#endif
