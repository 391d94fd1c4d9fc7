/* Capture and replay (engine/jit.c): the hook realize calls for every launch while a
 * tkc_jit_run captures. */
#ifndef TKC_ENGINE_JIT_H
#define TKC_ENGINE_JIT_H
#include "engine/kcache.h"
#include "graph/graph.h"

/* Records a launch of p over rbufs (buffer 0 the output) in ctx's capture; keeps p (*ref: its kernel
 * cache use, set to TKC_KCACHE_TAKEN when the jit takes over an uncached p). */
TKC_HIDDEN tkc_status tkc_jit_record(tkc_ctx *ctx, tkc_program *p, tkc_kcache_ref *ref, tkc_rbuf *const *rbufs, int nbufs);

#endif
