/* DOT4 (include/tkc/ops.def: the 4 unsigned bytes of x times the 4 signed bytes of y, summed) as
 * int32 shifts, masks, products and sums, for the renderers without a form of their own: every one but
 * C, whose helper is an AVX-512 VNNI vpdpbusd where the host has it (render/c.c), and PTX (dp4a). Same integers, so
 * every device agrees exactly. Runs on the kernel AST, before lowering, like the transcendental rules. */
#include <string.h>
#include "codegen/codegen.h"

static tkc_uop *decompose(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  tkc_uop *u = tkc_match_root(m), *x = u->src[0], *y = u->src[1];
  tkc_dt i32 = tkc_dt_of(TKC_INT32);
  if (u->dtype.count != 1 || !tkc_dt_eq(u->dtype, i32) || !tkc_dt_eq(x->dtype, i32) || !tkc_dt_eq(y->dtype, i32)) return NULL;
  tkc_uop *sum = NULL;
  for (int k = 0; k < 4; k++) {
    tkc_uop *xb = tkc_uop_alu2(g, TKC_OP_AND, k ? tkc_uop_alu2(g, TKC_OP_SHR, x, tkc_uop_const_int(g, i32, 8 * k)) : x, tkc_uop_const_int(g, i32, 255));
    /* byte k of y sign-extended: moved to the top, then shifted down arithmetically */
    tkc_uop *yt = k < 3 ? tkc_uop_alu2(g, TKC_OP_SHL, y, tkc_uop_const_int(g, i32, 24 - 8 * k)) : y;
    tkc_uop *yb = yt ? tkc_uop_alu2(g, TKC_OP_SHR, yt, tkc_uop_const_int(g, i32, 24)) : NULL;
    tkc_uop *p = xb && yb ? tkc_uop_alu2(g, TKC_OP_MUL, xb, yb) : NULL;
    sum = !p ? NULL : sum ? tkc_uop_alu2(g, TKC_OP_ADD, sum, p) : p;
    if (!sum) return NULL;
  }
  return sum;
}

static const tkc_rule rules[] = {
    {"(DOT4 _ _)", decompose},
};

const tkc_matcher *tkc_dot4_rules(void) {
  static tkc_matcher *_Atomic pm;
  return tkc_matcher_static(&pm, rules, TKC_COUNTOF(rules));
}

bool tkc_wants_dot4_rules(const tkc_renderer *r) { return !r || (strcmp(r->name, "C") && strcmp(r->name, "PTX")); }
