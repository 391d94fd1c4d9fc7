/* simplify: build the index math of a 4-D kernel as UOps, simplify it, print it.
 *
 * A kernel over a 2x3x4x4 tensor loops over four RANGEs (ridx0..ridx3). Views turn those loop
 * indices into buffer offsets with +, *, // and %; tkc_simplify() (tinygrad's symbolic rules)
 * folds them back to the simple form a person would write. */
#include <stdio.h>
#include "tkc/uop.h"

int main(void) {
  tkc_dt i32 = tkc_dt_of(TKC_INT32);
  tkc_graph *g = tkc_graph_new();
  if (!g) return 1;
#define C(v) tkc_uop_const_int(g, i32, (v))
#define ADD(a, b) tkc_uop_alu2(g, TKC_OP_ADD, (a), (b))
#define MUL(a, b) tkc_uop_alu2(g, TKC_OP_MUL, (a), (b))
#define DIV(a, b) tkc_uop_alu2(g, TKC_OP_IDIV, (a), (b))
#define MOD(a, b) tkc_uop_alu2(g, TKC_OP_MOD, (a), (b))
#define LT(a, b) tkc_uop_alu2(g, TKC_OP_CMPLT, (a), (b))
  static const int64_t shape[4] = {2, 3, 4, 4};
  tkc_uop *r[4];
  for (int i = 0; i < 4; i++) r[i] = tkc_uop_range(g, C(0), C(shape[i]), i);
  tkc_uop *a = tkc_uop_var(g, "a", 0, 8), *x = tkc_uop_var(g, "x", 1, 100);

  /* the flat offset of a contiguous 2x3x4x4 tensor, and a reshape of the last two axes */
  tkc_uop *flat = ADD(ADD(ADD(MUL(r[0], C(48)), MUL(r[1], C(16))), MUL(r[2], C(4))), r[3]);
  tkc_uop *inner = ADD(MUL(r[2], C(4)), r[3]);
  tkc_uop *exprs[] = {
      DIV(inner, C(4)),                  /* (ridx2*4+ridx3)//4  -> ridx2 */
      MOD(inner, C(4)),                  /* (ridx2*4+ridx3)%4   -> ridx3 */
      MOD(DIV(flat, C(16)), C(3)),       /* the axis-1 index back out of the offset -> ridx1 */
      ADD(a, C(0)),                      /* a+0 -> a */
      MUL(x, C(1)),                      /* x*1 -> x */
      ADD(ADD(x, C(2)), C(3)),           /* (x+2)+3 -> x+5 */
      LT(flat, C(96)),                   /* a validity check that always holds -> True */
      ADD(MUL(x, C(4)), MUL(x, C(3))),   /* x*4+x*3 -> x*7 */
      DIV(ADD(MUL(x, C(6)), C(3)), C(3)), /* (x*6+3)//3 -> x*2+1 */
  };
  int n = (int)(sizeof exprs / sizeof exprs[0]), status = 0;
  tkc_uop *shown = NULL;
  printf("%-55s    %s\n", "expression", "simplified");
  for (int i = 0; i < n; i++) {
    tkc_uop *s = exprs[i] ? tkc_simplify(g, exprs[i]) : NULL;
    char *before = exprs[i] ? tkc_uop_expr_str(exprs[i]) : NULL, *after = s ? tkc_uop_expr_str(s) : NULL;
    if (!before || !after) {
      fprintf(stderr, "quickstart: expression %d failed: %s\n", i, tkc_last_error());
      status = 1;
    } else {
      printf("%-55s -> %s\n", before, after);
    }
    tkc_free(before);
    tkc_free(after);
    if (i == n - 1) shown = s;
  }
  char *listing = shown ? tkc_uop_str(shown) : NULL;
  if (listing) printf("\nthe last result as a graph (one line per UOp: number, op, dtype, [sources], arg):\n%s", listing);
  else status = 1;
  tkc_free(listing);
  tkc_graph_free(g);
  return status;
}
