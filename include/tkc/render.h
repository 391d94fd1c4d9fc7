/* tkc/render.h — renderers: linearized UOps -> source text for one target language.
 *
 * A renderer is one static struct (capabilities + functions) in one file under src/render/;
 * tkc_renderer_get finds it by name. Renderers are immutable and may be used from any thread. */
#ifndef TKC_RENDER_H
#define TKC_RENDER_H

#include "tkc/uop.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel form renderers and devices accept (tinygrad v0.10.2 after full_graph_rewrite + pm_render):
 *   DEFINE_GLOBAL  dtype ptr(T), arg = buffer number          DEFINE_VAR int32, arg = (name, min, max)
 *   CONST          scalar dtype (vectors are VECTORIZE of CONSTs)
 *   RANGE(start, end) int32, arg = axis; closed by ENDRANGE(range)
 *   SPECIAL        int32, arg = (name, size): gidxN / lidxN launch indices (GPU renderers only)
 *   INDEX(buf, idx)                -> ptr(T): the address buf + idx (elements)
 *   CAST(INDEX) to ptr(T.vec(n))   -> a vector pointer for vector LOAD/STORE
 *   LOAD(ptr) | LOAD(ptr, alt, gate)         gated load: gate ? *ptr : alt
 *   STORE(ptr, value) | STORE(ptr, value, IF(gate))   IF(gate) opens a block closed by ENDIF(if)
 *   DEFINE_ACC(init, range...)  an accumulator (re)initialised right before its reduce loop;
 *   ASSIGN(acc, value)          writes the accumulator and yields value
 *   VECTORIZE(s...)  GEP(v) arg = (i,)   CAST  BITCAST  and the ALU ops (WHERE, CMPLT, CMPNE -> bool)
 * Before rendering, tkc_program_new rewrites INDEX(buf, idx, gate) into the gated LOAD/STORE forms above. */
typedef struct tkc_renderer tkc_renderer;
struct tkc_renderer {
  const char *name;        /* "C", "LLVM", "PTX", "WGSL" */
  const char *device;      /* the device that runs its output by default */
  bool has_local;          /* launch has local (workgroup) indices */
  bool has_shared;         /* DEFINE_LOCAL (shared memory) is available */
  bool supports_float4;    /* vector loads/stores */
  int max_vector;          /* widest vector value (0: no limit) */
  uint32_t scalar_access_dtypes; /* bitmask over tkc_dtype: buffers of these are read/written lane by lane */
  int global_max[3];       /* 0 = no global indices: ranges become loops */
  int local_max[3];
  size_t shared_max;
  uint32_t unsupported_dtypes; /* bitmask over tkc_dtype: element types the target cannot hold */
  /* NULL: no tensor cores; else whether the current target has mma.sync m16n8k16 (the TC opt) */
  bool (*tensor_cores)(void);
  /* backend-specific rewrites applied before linearizing (may be NULL) */
  const tkc_matcher *(*extra_matcher)(void);
  /* the kernel's source; malloc'ed (tkc_free), NULL + TKC_EUNSUPPORTED naming op/dtype when the
   * target cannot express a UOp */
  char *(*render)(const tkc_renderer *self, const char *name, tkc_uop *const *uops, size_t n);
};

/* The built-in renderer with that name; NULL + TKC_EINVAL/TKC_EUNSUPPORTED when unknown. */
TKC_API const tkc_renderer *tkc_renderer_get(const char *name);
/* Renders a linearized kernel with r; malloc'ed source (tkc_free) or NULL with the reason. */
TKC_API char *tkc_render(const tkc_renderer *r, const char *name, tkc_uop *const *uops, size_t n);

/* ---------------------------------------------------------------- kernel opts (tinygrad's Opt)
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

/* Orders a kernel graph (a SINK of STOREs) into an instruction list: sources before users, RANGE/IF
 * opened before and ENDRANGE/ENDIF placed after everything inside them, DEFINE_ACC right before its
 * reduce loop, loop-invariant UOps outside loops, deterministic. The ENDRANGE/ENDIF UOps are built in
 * g. Returns a malloc'ed array (tkc_free) of *n UOps without the SINK, or NULL with the reason. */
TKC_API tkc_uop **tkc_linearize(tkc_graph *g, tkc_uop *sink, size_t *n);

#ifdef __cplusplus
}
#endif
#endif
