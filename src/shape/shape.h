/* Shapes and views (the shapetracker): how a tensor's index maps to an element offset and a
 * validity. Used by the scheduler (graph/) and the lowerer (codegen/), so it sits below both and
 * includes neither. Not installed. */
#ifndef TKC_SHAPE_H
#define TKC_SHAPE_H

#include "uops/uop_internal.h"

#define TKC_MAX_DIMS 8
#define TKC_MAX_VIEWS 8

/* ---------------------------------------------------------------- views (view.c)
 * A view maps an index in its shape to an element offset: offset + sum(idx_i * strides_i), valid
 * where mask_begin_i <= idx_i < mask_end_i for every masked dim. A shapetracker stacks views: the
 * last view's offset, read as a row-major index into the previous view's shape, feeds that view. */
#define TKC_ST_VARS 4

/* A variable as views see it: copied in, so a view never points into a ctx. */
typedef struct tkc_svar {
  char name[32];
  int64_t vmin, vmax;
} tkc_svar;

/* The offset and mask bounds may also depend on a variable (a shrink starting at it, a pad by it, a
 * pad after a variable-length dim): each has a term k * var, var a 1-based slot of the st's vars
 * (0: no term). Shapes and strides are always constants (variable dims at their largest value). */
typedef struct tkc_view {
  int ndim;
  int has_mask;
  int64_t shape[TKC_MAX_DIMS], strides[TKC_MAX_DIMS], offset;
  int64_t mask_begin[TKC_MAX_DIMS], mask_end[TKC_MAX_DIMS];
  int64_t offset_k, mask_begin_k[TKC_MAX_DIMS], mask_end_k[TKC_MAX_DIMS];
  int8_t offset_var, mask_begin_var[TKC_MAX_DIMS], mask_end_var[TKC_MAX_DIMS];
} tkc_view;

typedef struct tkc_st {
  int nviews;
  int nvars;
  tkc_svar vars[TKC_ST_VARS];
  tkc_view views[TKC_MAX_VIEWS];
} tkc_st;

/* A pad or shrink amount, or a dim's length, that may be a variable: c + var (var a 1-based slot of
 * the st's vars, 0: the constant c). */
typedef struct tkc_sdim {
  int64_t c;
  int var;
} tkc_sdim;

TKC_HIDDEN void tkc_st_contiguous(tkc_st *st, int ndim, const int64_t *shape);
TKC_HIDDEN const int64_t *tkc_st_shape(const tkc_st *st); /* the last view's shape */
TKC_HIDDEN int tkc_st_ndim(const tkc_st *st);
/* true when st is the plain row-major layout of its shape (no offset, no mask, one view) */
TKC_HIDDEN int tkc_st_is_contiguous(const tkc_st *st);
/* Movement ops, in place; they return a status. When st holds TKC_MAX_VIEWS views and the op would
 * stack one more (the views stop merging), TKC_ESHAPE without an error set and st unchanged: the
 * caller then realizes the value so far (the scheduler does) and applies the op to a fresh view.
 * The arguments are already validated by the tensor layer. */
TKC_HIDDEN tkc_status tkc_st_reshape(tkc_st *st, int ndim, const int64_t *shape);
TKC_HIDDEN tkc_status tkc_st_permute(tkc_st *st, const int *order);
TKC_HIDDEN tkc_status tkc_st_expand(tkc_st *st, const int64_t *shape);
/* pads: before, after per dim (at the variables' largest values); sym: NULL, or per dim before, after
 * and the dim's length before the pad, for pads that involve a variable. */
TKC_HIDDEN tkc_status tkc_st_pad(tkc_st *st, const int64_t *pads, const tkc_sdim *sym);
/* ranges: begin, end per dim (at the largest values); sym: NULL, or per dim the begin (a variable
 * start) and the end. */
TKC_HIDDEN tkc_status tkc_st_shrink(tkc_st *st, const int64_t *ranges, const tkc_sdim *sym);
/* The 1-based slot of v in st's variables (added when new); 0 with TKC_EUNSUPPORTED when full. */
TKC_HIDDEN int tkc_st_var_slot(tkc_st *st, const tkc_svar *v);
/* Whether a and b see their buffers the same way. */
TKC_HIDDEN int tkc_st_equal(const tkc_st *a, const tkc_st *b);
TKC_HIDDEN tkc_status tkc_st_flip(tkc_st *st, const int *flip);         /* 0/1 per dim */
/* Sliding windows over the last two dims: (..., H, W) -> (..., OH, OW, KH, KW) with stride s. */
TKC_HIDDEN tkc_status tkc_st_window(tkc_st *st, int64_t kh, int64_t kw, int64_t stride);
/* The element offset and validity of st at index idxs (one int32 UOp per dim of the last view);
 * *valid is NULL when always valid. */
TKC_HIDDEN tkc_status tkc_st_expr(const tkc_st *st, tkc_graph *g, tkc_uop *const *idxs, tkc_uop **index, tkc_uop **valid);
/* The largest element offset st can reach, or element count of an inner view (masks ignored;
 * saturating; a broadcast view of 2^33 elements over 2^22 reaches 2^22): kernels
 * whose views reach past INT32_MAX index in int64. tkc_st_expr builds its index math in the dtype of
 * idxs[0] (int32 or int64). */
TKC_HIDDEN int64_t tkc_st_max_index(const tkc_st *st);
/* The element stride of st along dim: its offset at index 1 of dim minus its offset at 0 (0: a
 * broadcast). INT64_MIN when either offset is not a constant. Builds scratch UOps in g. */
TKC_HIDDEN int64_t tkc_st_stride(const tkc_st *st, tkc_graph *g, int dim);
/* A st as a UOp arg (a tuple of views) and back; TKC_ST_ARGS args of storage always suffice. */
#define TKC_ST_ARGS (TKC_MAX_VIEWS * (5 + 4 * TKC_MAX_DIMS + 8 * (1 + 2 * TKC_MAX_DIMS)) + TKC_MAX_VIEWS)
TKC_HIDDEN tkc_arg tkc_st_to_arg(const tkc_st *st, tkc_arg *storage, size_t nstorage);
TKC_HIDDEN int tkc_st_from_arg(tkc_st *st, const tkc_arg *a);

/* The number of elements of a shape (1 for 0-d). */
TKC_HIDDEN int64_t tkc_shape_numel(int ndim, const int64_t *shape);
/* Overflow-checked sizes, the one place they are computed for new tensors: 0 with *numel (may be NULL)
 * when every dim is >= 0 and numel * itemsize fits int64; -1 otherwise. */
TKC_HIDDEN int tkc_shape_size_checked(int ndim, const int64_t *shape, int64_t itemsize, int64_t *numel);

#endif
