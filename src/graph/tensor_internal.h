/* Internal helpers shared by the tensor API files (tensor.c, ops.c, composite.c). */
#ifndef TKC_TENSOR_INTERNAL_H
#define TKC_TENSOR_INTERNAL_H

#include <stdio.h>
#include "graph/graph.h"

/* A handle over node (taking the caller's reference); NULL when node is NULL (error already set). */
TKC_HIDDEN tkc_tensor *tkc_wrap(tkc_ctx *ctx, tkc_lazy *node);
/* 0 when t can be used; else -1 with the error (a NULL keeps the first error of a chain). */
TKC_HIDDEN int tkc_check(const tkc_tensor *t);

/* The temporaries of a composite op (ops_math.c, ops_nn.c): tkc_temp records x (NULL passes
 * through, so a composite is straight-line code checked once at the end), tkc_temps_done frees every
 * recorded tensor but r and returns r. */
#define TKC_NTEMPS 128
typedef struct tkc_temps {
  tkc_tensor *t[TKC_NTEMPS];
  int n;
} tkc_temps;
TKC_HIDDEN tkc_tensor *tkc_temp(tkc_temps *s, tkc_tensor *x);
TKC_HIDDEN tkc_tensor *tkc_temps_done(tkc_temps *s, tkc_tensor *r);
/* a's last axis padded with `before` and `after` values v / shrunk to [lo, hi), recorded in s
 * (NULL passes through) */
TKC_HIDDEN tkc_tensor *tkc_temp_pad_last(tkc_temps *s, tkc_tensor *a, int64_t before, int64_t after, double v);
TKC_HIDDEN tkc_tensor *tkc_temp_shrink_last(tkc_temps *s, tkc_tensor *a, int64_t lo, int64_t hi);
/* mask[i] = 1 for each axis a reduction over (naxes, axes) reduces (naxes 0 / axes NULL: all);
 * -1 with TKC_EINVAL for a bad or repeated axis (the message starts with what, the op's name) */
TKC_HIDDEN int tkc_axes_mask(const char *what, const tkc_lazy *a, int naxes, const int *axes, int *mask);

/* Error-message helpers (shape_fmt.c). TKC_SHAPE_STR(n, shape) is "(2,3)" ("(3,)" for 1-d, "()" for
 * 0-d), valid in the enclosing block: use it inside the tkc_err call. tkc_dtype_str names any dtype
 * value ("float32"; "void"; "an unknown dtype"); tkc_dtype_list is the list of tensor dtype names. */
typedef struct tkc_shape_str {
  char s[TKC_MAX_DIMS * 21 + 4];
} tkc_shape_str;
TKC_HIDDEN const char *tkc_shape_fmt(tkc_shape_str *b, int ndim, const int64_t *shape);
#define TKC_SHAPE_STR(n, shape) tkc_shape_fmt(&(tkc_shape_str){{0}}, (n), (shape))
#define TKC_NODE_SHAPE(node) TKC_SHAPE_STR((node)->ndim, (node)->shape)
TKC_HIDDEN const char *tkc_dim_fmt(tkc_shape_str *b, int64_t dim); /* TKC_DIM_STR(d): "4", "var0+1" */
#define TKC_DIM_STR(d) tkc_dim_fmt(&(tkc_shape_str){{0}}, (d))
TKC_HIDDEN const char *tkc_dtype_str(tkc_dtype dt);
TKC_HIDDEN const char *tkc_dtype_list(void);
/* TKC_EUNSUPPORTED (in the user's terms, with what to do instead) when ctx's device cannot hold dt
 * (64-bit types on WEBGPU); what names the op (NULL: none). TKC_OK otherwise. */
TKC_HIDDEN tkc_status tkc_ctx_check_dtype(const tkc_ctx *ctx, tkc_dtype dt, const char *what);

/* Dot files (schedule_dot.c): appends s escaped for a quoted dot string; writes the text of b (taken)
 * to path (TKC_ERUNTIME naming who and the path when it cannot be written). */
TKC_HIDDEN void tkc_dot_escape(tkc_sbuf *b, const char *s);
TKC_HIDDEN tkc_status tkc_write_text_file(const char *who, const char *path, tkc_sbuf *b);

/* Node builders; each returns a new reference (or NULL with the error). */
TKC_HIDDEN tkc_lazy *tkc_lz_const(tkc_ctx *ctx, tkc_dtype dt, double v, int ndim, const int64_t *shape);
TKC_HIDDEN tkc_lazy *tkc_lz_unary(tkc_op op, tkc_lazy *a);
TKC_HIDDEN tkc_lazy *tkc_lz_alu(tkc_op op, int nsrc, tkc_lazy *const *src);
TKC_HIDDEN tkc_lazy *tkc_lz_cast(tkc_lazy *a, tkc_dtype dt, int bitcast);
TKC_HIDDEN tkc_lazy *tkc_lz_move(tkc_lazy *a, int op, const int64_t *arg, int narg, int ndim, const int64_t *shape);
TKC_HIDDEN tkc_lazy *tkc_lz_reduce(tkc_lazy *a, tkc_op op, const int *axis_mask);
TKC_HIDDEN tkc_tensor *tkc_sum_unsplit(tkc_tensor *a, int axis, int keepdim);
TKC_HIDDEN tkc_lazy *tkc_lz_broadcast(tkc_lazy *a, int ndim, const int64_t *shape);

#endif
