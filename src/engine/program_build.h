/* Programs built through the codegen driver (engine/program_build.c): the stages from render_prep
 * on run in the program's own graph, then the runtime takes the instruction list and the source.
 * tkc_program_new (tkc/runtime.h) is implemented there too. Internal: not installed. */
#ifndef TKC_ENGINE_PROGRAM_BUILD_H
#define TKC_ENGINE_PROGRAM_BUILD_H

#include "codegen/pipeline.h"
#include "tkc/runtime.h"

/* The program `name` of cg's kernel (cg has run up to late_rules) for d, not compiled yet
 * (tkc_program_compile): the rest of cg's stages run in the program's graph, with cg's report
 * setting. cg's kernel is then in that graph; cg keeps nothing to free. NULL with the error. */
TKC_HIDDEN tkc_program *tkc_engine_program(tkc_device *d, tkc_codegen *cg, const char *name);

/* tkc_program_new in two steps, so that the realize driver and beam search can compile several
 * programs at once: prepare (render_prep .. render; one thread at a time per graph g) and
 * tkc_program_compile (runtime/device.h: thread-safe where the device's compile_threadsafe says so).
 * Quiet: no TKC_DEBUG output. */
TKC_HIDDEN tkc_program *tkc_program_prepare(tkc_device *d, tkc_graph *g, tkc_uop *sink, const char *name);

#endif
