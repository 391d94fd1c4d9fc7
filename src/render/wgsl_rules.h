/* src/render/wgsl_rules.h — the WGSL renderer's extra matcher (wgsl_rules.c) and the facts about
 * WGSL buffers it shares with the renderer (wgsl.c). Internal. */
#ifndef TKC_RENDER_WGSL_RULES_H
#define TKC_RENDER_WGSL_RULES_H

#include "base/common.h"
#include "tkc/render.h"

/* element types stored packed in u32 words in global buffers (the seed's is_packed, plus bfloat16) */
#define TKC_WGSL_PACKED (1u << TKC_BOOL | 1u << TKC_INT8 | 1u << TKC_UINT8 | 1u << TKC_INT16 | 1u << TKC_UINT16 | 1u << TKC_BFLOAT16)
TKC_HIDDEN bool tkc_wgsl_packed(int scalar);
/* LOAD(ptr, alt, gate[, ...]) reads only when gate; further sources (and LOAD(ptr, barrier)) are
 * void ordering dependencies */
TKC_HIDDEN bool tkc_wgsl_load_gated(const tkc_uop *l);
/* vector op u is one WGSL renders as a vector op (wgsl.c); the rules scalarize the others */
TKC_HIDDEN bool tkc_wgsl_native_vector(const tkc_uop *u);
/* the rewrites (built once) */
TKC_HIDDEN const tkc_matcher *tkc_wgsl_matcher(void);

#endif
