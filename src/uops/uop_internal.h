/* Internal helpers of the UOp layer (not installed). */
#ifndef TKC_UOP_INTERNAL_H
#define TKC_UOP_INTERNAL_H

#include "base/common.h"
#include "tkc/uop.h"

/* The bounds range analysis assumes for dtype dt: the dtype's range for ints/bool, and
 * [INT64_MIN, INT64_MAX] ("nothing known") for floats, pointers and uint64. */
TKC_HIDDEN void tkc_dt_range(tkc_dt dt, int64_t *lo, int64_t *hi);
/* dt is a tensor element type: in range and not TKC_VOID (the fp8 types come after it) */
TKC_HIDDEN bool tkc_dtype_is_tensor(tkc_dtype dt);
/* float16, bfloat16 and the fp8 types: floats narrower than float32, which tensors store as they are
 * and compute in float32 (math, sums, matmuls accumulate there and round once) */
TKC_HIDDEN bool tkc_dtype_is_narrow_float(tkc_dtype dt);
/* the dtype dt is computed in: float32 for a narrow float, dt itself otherwise */
TKC_HIDDEN tkc_dtype tkc_dtype_work(tkc_dtype dt);
/* A kernel AST's STORE(DEFINE_GLOBAL, VIEW, value) with this arg: the kernel also reads the buffer it
 * writes, through another parameter (an assign that reads its target element for element), so the
 * lowerer parks nothing in the output before the final store (see lowerer.c, spilling). */
#define TKC_STORE_OUTPUT_READ 1

/* tinygrad's tuplize order: op, arg, dtype, then sources; 0 only for the same UOp. */
TKC_HIDDEN int tkc_uop_cmp(const tkc_uop *a, const tkc_uop *b);

/* A UOp -> UOp hash map (open addressing, keyed by pointer). */
typedef struct tkc_umap {
  const tkc_uop **keys;
  tkc_uop **vals;
  size_t cap, count;
} tkc_umap;
TKC_HIDDEN tkc_uop *tkc_umap_get(const tkc_umap *m, const tkc_uop *k);
TKC_HIDDEN int tkc_umap_put(tkc_umap *m, const tkc_uop *k, tkc_uop *v); /* -1 on ENOMEM */
TKC_HIDDEN void tkc_umap_free(tkc_umap *m);

/* A matcher built from static rules on first use and kept for the life of the process (reachable
 * from *slot, so leak checkers stay quiet). Thread-safe; NULL (TKC_EINTERNAL) if the rules do not compile. */
TKC_HIDDEN const tkc_matcher *tkc_matcher_static(tkc_matcher *_Atomic *slot, const tkc_rule *rules, size_t n);

#endif
