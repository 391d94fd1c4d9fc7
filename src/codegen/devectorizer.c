/* Late rewrites before rendering (tinygrad's devectorizer.py: get_late_rewrite_patterns). The
 * tensor path applies them on every device, INTERP included, so devices still agree exactly. */
#include "codegen/codegen.h"

/* a*b + c -> MULACC(a, b, c): one fused multiply-add (one rounding) for float dtypes */
static tkc_uop *fuse_mulacc(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  tkc_uop *r = tkc_match_root(m), *mul = tkc_match_get(m, "mul"), *c = tkc_match_get(m, "c");
  if (!tkc_dt_is_float(r->dtype) || tkc_dt_is_ptr(r->dtype) || !tkc_dt_eq(mul->dtype, r->dtype) || !tkc_dt_eq(c->dtype, r->dtype)) return NULL;
  return tkc_uop_alu3(g, TKC_OP_MULACC, mul->src[0], mul->src[1], c);
}

static const tkc_rule late_rules[] = {
    {"(ADD mul:(MUL _ _) c)", fuse_mulacc}, /* a*b+c -> MULACC(a, b, c) */
};

const tkc_matcher *tkc_late_rules(void) {
  static tkc_matcher *_Atomic pm;
  return tkc_matcher_static(&pm, late_rules, TKC_COUNTOF(late_rules));
}
