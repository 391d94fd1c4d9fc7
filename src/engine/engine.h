/* The engine's entry points for the tensor layer (engine/realize.c): realize a lazy node (schedule
 * -> the codegen driver for each kernel -> compile -> launch), the kernels' sources, and each kernel
 * as realize would build it, for the schedule's dot files. Internal: not installed. */
#ifndef TKC_ENGINE_H
#define TKC_ENGINE_H

#include "graph/graph.h"

/* Runs the schedule that realizes n (nodes computed become BUFFERs; a view of a realized node
 * becomes a BUFFER over the same data): with the heuristics' opts; with the given opts for the last
 * kernel. The sources of the kernels of n for renderer r (malloc'ed). */
TKC_HIDDEN tkc_status tkc_lazy_realize(tkc_lazy *n);
/* The n nodes in one schedule (what they share is computed once). */
TKC_HIDDEN tkc_status tkc_lazy_realize_all(int n, tkc_lazy *const *ns);
TKC_HIDDEN tkc_status tkc_lazy_realize_opts(tkc_lazy *n, const tkc_opt *opts, int nopts);
TKC_HIDDEN char *tkc_lazy_kernels_source(tkc_lazy *n, const tkc_renderer *r);

/* For the schedule's dot (nothing runs): kernel i's name (as realize names it) and its opts
 * ("UPCAST(0,4) ..." or "none"); kernel i lowered to UOps (a SINK in s->g) and its name. */
TKC_HIDDEN tkc_status tkc_engine_kernel_label(tkc_schedule *s, size_t i, char *name, size_t nname, char *opts, size_t nopts);
TKC_HIDDEN tkc_uop *tkc_engine_kernel_uops(tkc_schedule *s, size_t i, char *name, size_t nname);

#endif
