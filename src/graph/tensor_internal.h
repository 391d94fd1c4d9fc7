/* Internal helpers shared by the tensor API files (tensor.c, ops.c, composite.c). */
#ifndef TKC_TENSOR_INTERNAL_H
#define TKC_TENSOR_INTERNAL_H

#include <stdio.h>
#include "graph/graph.h"

/* A handle over node (taking the caller's reference); NULL when node is NULL (error already set). */
TKC_HIDDEN tkc_tensor *tkc_wrap(tkc_ctx *ctx, tkc_lazy *node);
/* 0 when t can be used; else -1 with the error (a NULL keeps the first error of a chain). */
TKC_HIDDEN int tkc_check(const tkc_tensor *t);

/* Node builders; each returns a new reference (or NULL with the error). */
TKC_HIDDEN tkc_lazy *tkc_lz_const(tkc_ctx *ctx, tkc_dtype dt, double v, int ndim, const int64_t *shape);
TKC_HIDDEN tkc_lazy *tkc_lz_unary(tkc_op op, tkc_lazy *a);
TKC_HIDDEN tkc_lazy *tkc_lz_alu(tkc_op op, int nsrc, tkc_lazy *const *src);
TKC_HIDDEN tkc_lazy *tkc_lz_cast(tkc_lazy *a, tkc_dtype dt, int bitcast);
TKC_HIDDEN tkc_lazy *tkc_lz_move(tkc_lazy *a, int op, const int64_t *arg, int narg, int ndim, const int64_t *shape);
TKC_HIDDEN tkc_lazy *tkc_lz_reduce(tkc_lazy *a, tkc_op op, const int *axis_mask);
TKC_HIDDEN tkc_lazy *tkc_lz_broadcast(tkc_lazy *a, int ndim, const int64_t *shape);

/* The source of a kernel (a lowered SINK) for renderer r, without compiling it (program.c). */
TKC_HIDDEN char *tkc_codegen_source(tkc_uop *sink, const tkc_renderer *r, const char *name);

#endif
