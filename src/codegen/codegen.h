/* Internal interfaces of the code generator (not installed). */
#ifndef TKC_CODEGEN_H
#define TKC_CODEGEN_H

#include "tkc/render.h"
#include "uops/uop_internal.h"

/* tinygrad's pm_render: the rewrites that put a kernel into the form renderers read. */
TKC_HIDDEN const tkc_matcher *tkc_render_prep(void);

/* ---------------------------------------------------------------- expander (expander.c) */
#define TKC_MAX_VEC 16 /* the widest vector the expander makes */

/* Packs W lanes into vector UOps in g; accumulators it makes are numbered from *naccs on. */
typedef struct tkc_packer tkc_packer;
TKC_HIDDEN tkc_packer *tkc_packer_new(tkc_graph *g, int width, int *naccs, bool aligned, uint32_t scalar_access);
TKC_HIDDEN void tkc_packer_free(tkc_packer *p);
/* W scalar values -> one vector value, or NULL when they cannot share one (an accumulator of its own). */
TKC_HIDDEN tkc_uop *tkc_pack_values(tkc_packer *p, tkc_uop *const *lanes);
/* W STOREs -> one vector STORE, or NULL when their addresses are not one contiguous run. */
TKC_HIDDEN tkc_uop *tkc_pack_stores(tkc_packer *p, tkc_uop *const *stores);

/* ---------------------------------------------------------------- devectorizer (devectorizer.c) */
/* tinygrad's late rewrites: a float multiply feeding an add becomes one fused MULACC (FMA). */
TKC_HIDDEN const tkc_matcher *tkc_late_rules(void);
/* EXP2/LOG2/SIN of float32 (and float16/bfloat16 through float32) as ALU ops (codegen/transcendental.c),
 * applied to kernel ASTs for the renderers that want them (host renderers and INTERP: NULL). */
TKC_HIDDEN const tkc_matcher *tkc_transcendental_rules(void);
TKC_HIDDEN bool tkc_wants_transcendental_rules(const tkc_renderer *r);
/* DOT4 as int32 ALU ops (codegen/dot4.c) for the renderers without a form of their own */
TKC_HIDDEN const tkc_matcher *tkc_dot4_rules(void);
TKC_HIDDEN bool tkc_wants_dot4_rules(const tkc_renderer *r);

/* ---------------------------------------------------------------- fp8 (fp8.c) */
/* The kernel with its fp8 values as uint8 bits and their casts and arithmetic as integer and float32
 * ops (see fp8.c); sink itself when it has none; NULL with the error. */
TKC_HIDDEN tkc_uop *tkc_fp8_to_bits(tkc_graph *g, tkc_uop *sink);

/* ---------------------------------------------------------------- index folding (index_folding.c) */
/* The kernel AST with each sum over an arange compare folded (a gather at the computed index, or the
 * count of a compare in closed form) and the reduce dims left unused dropped; ast itself when nothing
 * folds, NULL with the error (out of memory). */
TKC_HIDDEN tkc_uop *tkc_fold_indices(tkc_graph *g, tkc_uop *ast);

/* ---------------------------------------------------------------- lowerer (lowerer.c) */
struct tkc_kshape;
/* The kernel for ast (SINK(STORE(DEFINE_GLOBAL, VIEW, value)), arg = (output shape, full shape)) as
 * UOps with ranges (or SPECIAL launch indices when r has global dims) and index math, simplified. */
TKC_HIDDEN tkc_uop *tkc_lower(tkc_graph *g, tkc_uop *ast, const tkc_renderer *r);
/* The same with the axes and opts of ks (tkc_kshape_init of ast, then opts applied). */
TKC_HIDDEN tkc_uop *tkc_lower_opts(tkc_graph *g, tkc_uop *ast, const struct tkc_kshape *ks, const tkc_renderer *r);
/* The codegen driver's "lower" stage: tkc_lower_opts without the final tkc_simplify (its "simplify"
 * stage); *simplified is set when the kernel comes out simplified already (tensor cores). */
TKC_HIDDEN tkc_uop *tkc_lower_kernel(tkc_graph *g, tkc_uop *ast, const struct tkc_kshape *ks, const tkc_renderer *r, bool *simplified);

#endif
