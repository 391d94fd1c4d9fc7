/* The codegen driver (codegen/pipeline.c): a kernel AST from the scheduler -> its opts -> UOps ->
 * linearized UOps -> source, as a table of named stages run in order. Everything that builds a
 * kernel goes through it: realize, beam search, the schedule's dot files, tkc_program_new.
 * Internal: not installed. */
#ifndef TKC_CODEGEN_PIPELINE_H
#define TKC_CODEGEN_PIPELINE_H

#include "codegen/codegen.h"
#include "codegen/opts.h"

/* One kernel going through the stages: the caller fills in the first part, the stages the rest. */
typedef struct tkc_codegen {
  tkc_graph *g;           /* where the stages build (tkc_codegen_move switches it) */
  const tkc_renderer *r;  /* NULL: INTERP (the render stage then makes no source) */
  const tkc_opt *opts;    /* opts: with given_opts these opts (nopts may be 0), else the heuristics' */
  int nopts;              /*       (none with TKC_NOOPT=1) */
  bool given_opts;
  const char *key;        /* opts: the kernel key that makes the name unique (NULL: not made unique) */
  const char *symbol;     /* render: the function name in the source (NULL: name) */
  bool report;            /* TKC_DEBUG output (not for beam search's candidates) */

  tkc_uop *ast;           /* the kernel AST: SINK(STORE) with arg (output shape, full shape) */
  tkc_kshape ks;          /* opts: its axes and opts */
  char name[160];         /* opts: its name ("r_2_4_U0x4"); set it when starting after opts */
  tkc_uop *sink;          /* lower .. renderer_rules: the kernel */
  bool simplified;        /* lower: the kernel comes out simplified (tensor cores) */
  tkc_uop **uops;         /* linearize: the instruction list (malloc'ed; tkc_codegen_clear) */
  size_t nuops;
  char *source;           /* render: malloc'ed (tkc_codegen_clear) */
} tkc_codegen;

/* Runs the stages from `first` to `last` (stage names, both included; NULL: from the first / to the
 * last stage) on cg. TKC_OK, or the error of the stage that failed (TKC_EINTERNAL for an unknown
 * name). TKC_DEBUG output as each stage's table entry says, and TKC_DEBUG_STAGE's. */
TKC_HIDDEN tkc_status tkc_codegen_run(tkc_codegen *cg, const char *first, const char *last);
/* Copies cg's kernel (sink) into graph g, where the next stages then build. */
TKC_HIDDEN tkc_status tkc_codegen_move(tkc_codegen *cg, tkc_graph *g);
/* Frees what the stages left to the caller (uops, source) and clears those fields. */
TKC_HIDDEN void tkc_codegen_clear(tkc_codegen *cg);

/* The source of cg's kernel (after late_rules) for cg->r, without compiling it: the stages from
 * render_prep on, in a graph of their own, dropped afterwards (malloc'ed; NULL with the error).
 * tkc_codegen_source: the same for a lowered SINK, rendered as function `name`. */
TKC_HIDDEN char *tkc_codegen_finish_source(tkc_codegen *cg);
TKC_HIDDEN char *tkc_codegen_source(tkc_uop *sink, const tkc_renderer *r, const char *name);

/* TKC_NOOPT=1 (nonzero): kernels get no opts from the heuristics (nor from beam search). */
TKC_HIDDEN bool tkc_codegen_noopt(void);

/* Kernel names (kernel_name.c): tinygrad's "r_" (a reduce) or "E_" and the full shape of ast, a
 * variable-length dim by its name; and a name made unique per distinct kernel key for the rest of
 * the process (the second r_2_4 is r_2_4n1). */
TKC_HIDDEN void tkc_kernel_base_name(const tkc_uop *ast, char *buf, size_t n);
TKC_HIDDEN void tkc_kernel_unique_name(char *name, size_t n, const char *key);

#endif
