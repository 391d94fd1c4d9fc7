/* tkc/render.h — renderers: linearized UOps -> source text for one target language.
 *
 * A renderer is one static struct (capabilities + functions) in one file under src/render/;
 * tkc_renderer_get finds it by name. Renderers are immutable and may be used from any thread.
 *
 * Stability (for people who build their own front end or renderer): tkc_renderer_get, tkc_render,
 * tkc_linearize and the kernel opts (tkc/opts.h) are stable. struct tkc_renderer may change between
 * minor versions (0.1 -> 0.2): fields are added (at the end) as the code generator learns about
 * targets; read it, but build renderers against the headers of the version you link. */
#ifndef TKC_RENDER_H
#define TKC_RENDER_H

#include "tkc/opts.h"
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
 *   LOAD(ptr) | LOAD(ptr, alt, gate)         gated load: gate ? *ptr : alt; arg TKC_LOAD_AFTER_STORES: it
 *                  reads what the kernel's STOREs to the same buffer in loops it is not in wrote, so it
 *                  is placed after those loops (a value spilled by a nested reduce's loop)
 *   STORE(ptr, value) | STORE(ptr, value, IF(gate))   IF(gate) opens a block closed by ENDIF(if)
 *   DEFINE_ACC(init, range...)  an accumulator (re)initialised right before its reduce loop;
 *   ASSIGN(acc, value)          writes the accumulator and yields value
 *   VECTORIZE(s...)  GEP(v) arg = (i,)   CAST  BITCAST  and the ALU ops (WHERE, CMPLT, CMPNE -> bool)
 * Before rendering, tkc_program_new rewrites INDEX(buf, idx, gate) into the gated LOAD/STORE forms above. */
#define TKC_LOAD_AFTER_STORES 1
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
  /* NULL: none. Otherwise the settings that change this renderer's output beyond the struct itself
   * (e.g. the PTX target arch), written as text into buf (n bytes, NUL-terminated, truncated if
   * longer); the realize driver puts it in its kernel cache keys, so a kernel built for one setting
   * is not reused under another. Returns the length written. */
  int (*cache_key)(char *buf, size_t n);
};

/* The built-in renderer with that name; NULL + TKC_EINVAL/TKC_EUNSUPPORTED when unknown. */
TKC_API const tkc_renderer *tkc_renderer_get(const char *name);
/* Renders a linearized kernel with r; malloc'ed source (tkc_free) or NULL with the reason. */
TKC_API char *tkc_render(const tkc_renderer *r, const char *name, tkc_uop *const *uops, size_t n);

/* Orders a kernel graph (a SINK of STOREs) into an instruction list: sources before users, RANGE/IF
 * opened before and ENDRANGE/ENDIF placed after everything inside them, DEFINE_ACC right before its
 * reduce loop, loop-invariant UOps outside loops, deterministic. The ENDRANGE/ENDIF UOps are built in
 * g. Returns a malloc'ed array (tkc_free) of *n UOps without the SINK, or NULL with the reason. */
TKC_API tkc_uop **tkc_linearize(tkc_graph *g, tkc_uop *sink, size_t *n);

#ifdef __cplusplus
}
#endif
#endif
