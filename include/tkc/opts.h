/* tkc/opts.h — kernel opts: how a kernel's loops are split, padded and reordered (tkc_realize_opts).
 * Part of the tensor API (tkc.h includes it) and of the renderer interface (tkc/render.h). Stable:
 * values are only ever appended to tkc_opt_op, and struct tkc_opt keeps its fields. */
#ifndef TKC_OPTS_H
#define TKC_OPTS_H

#include "tkc/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Kernel opts (tinygrad's Opt).
 * A kernel's axes, in loop order: its output dims of size > 1 (global), then its reduce dims, then
 * the lane axes that opts split off (upcast: one output per lane; unroll, group: reduce lanes). An opt names an axis by its index in that order:
 *   UPCAST axis amount   split amount lanes off an output axis (the size must divide)
 *   UNROLL axis amount   split amount lanes off a reduce axis, added to its accumulator in loop order
 *                        (axis counts from the first reduce axis)
 *   GROUP  axis amount   split amount partial reductions off a reduce axis, combined after the loop
 *                        (loop devices: lanes with accumulators of their own, i.e. vector accumulators;
 *                        GPUs: threads of a workgroup, combined through shared memory after a barrier)
 *   GROUPTOP axis amount GROUP splitting off the outer end: each partial reduces a contiguous run
 *   LOCAL  axis amount   GPUs: split amount threads of a workgroup off an output axis
 *   NOLOCALS             GPUs: one thread per workgroup unless LOCAL says otherwise
 *   PADTO  axis amount   round the axis up to a multiple of amount (masked past the end)
 *   SWAP   axis amount   exchange the loop order of output axes axis and amount
 *   TC 0 0               tensor cores (PTX, sm_80+): a float16/bfloat16 matmul with m % 16, n % 8 and
 *                        k % 16 == 0 as one warp per 16 x 8 tile with mma.sync; the first and only opt
 * A workgroup has at most min(256, renderer local_max[0]) threads.
 * Applying an illegal opt fails with TKC_EINVAL and the reason; nothing aborts. */
typedef enum tkc_opt_op {
  TKC_OPT_UPCAST, TKC_OPT_UNROLL, TKC_OPT_LOCAL, TKC_OPT_GROUP, TKC_OPT_GROUPTOP,
  TKC_OPT_PADTO, TKC_OPT_SWAP, TKC_OPT_NOLOCALS, TKC_OPT_TC
} tkc_opt_op;

typedef struct tkc_opt {
  tkc_opt_op op;
  int axis;
  int amount;
} tkc_opt;

/* "UPCAST", "UNROLL", ...; NULL when out of range. */
TKC_API const char *tkc_opt_name(tkc_opt_op op);

#ifdef __cplusplus
}
#endif
#endif
