/* Internal interfaces of the tensor layer: views (shapetracker), lazy nodes, the scheduler and the
 * lowerer. Not installed. */
#ifndef TKC_GRAPH_H
#define TKC_GRAPH_H

#include "tkc.h"
#include "tkc/runtime.h"
#include "uops/uop_internal.h"

#define TKC_MAX_DIMS 8
#define TKC_MAX_VIEWS 8

/* ---------------------------------------------------------------- views (view.c)
 * A view maps an index in its shape to an element offset: offset + sum(idx_i * strides_i), valid
 * where mask_begin_i <= idx_i < mask_end_i for every masked dim. A shapetracker stacks views: the
 * last view's offset, read as a row-major index into the previous view's shape, feeds that view. */
typedef struct tkc_view {
  int ndim;
  int has_mask;
  int64_t shape[TKC_MAX_DIMS], strides[TKC_MAX_DIMS], offset;
  int64_t mask_begin[TKC_MAX_DIMS], mask_end[TKC_MAX_DIMS];
} tkc_view;

typedef struct tkc_st {
  int nviews;
  tkc_view views[TKC_MAX_VIEWS];
} tkc_st;

TKC_HIDDEN void tkc_st_contiguous(tkc_st *st, int ndim, const int64_t *shape);
TKC_HIDDEN const int64_t *tkc_st_shape(const tkc_st *st); /* the last view's shape */
TKC_HIDDEN int tkc_st_ndim(const tkc_st *st);
/* true when st is the plain row-major layout of its shape (no offset, no mask, one view) */
TKC_HIDDEN int tkc_st_is_contiguous(const tkc_st *st);
/* Movement ops, in place; they return a status (TKC_ESHAPE when st would need too many views). The
 * arguments are already validated by the tensor layer. */
TKC_HIDDEN tkc_status tkc_st_reshape(tkc_st *st, int ndim, const int64_t *shape);
TKC_HIDDEN tkc_status tkc_st_permute(tkc_st *st, const int *order);
TKC_HIDDEN tkc_status tkc_st_expand(tkc_st *st, const int64_t *shape);
TKC_HIDDEN tkc_status tkc_st_pad(tkc_st *st, const int64_t *pads);      /* before, after per dim */
TKC_HIDDEN tkc_status tkc_st_shrink(tkc_st *st, const int64_t *ranges); /* begin, end per dim */
TKC_HIDDEN tkc_status tkc_st_flip(tkc_st *st, const int *flip);         /* 0/1 per dim */
/* Sliding windows over the last two dims: (..., H, W) -> (..., OH, OW, KH, KW) with stride s. */
TKC_HIDDEN tkc_status tkc_st_window(tkc_st *st, int64_t kh, int64_t kw, int64_t stride);
/* The element offset and validity of st at index idxs (one int32 UOp per dim of the last view);
 * *valid is NULL when always valid. */
TKC_HIDDEN tkc_status tkc_st_expr(const tkc_st *st, tkc_graph *g, tkc_uop *const *idxs, tkc_uop **index, tkc_uop **valid);
/* A st as a UOp arg (a tuple of views) and back. */
TKC_HIDDEN tkc_arg tkc_st_to_arg(const tkc_st *st, tkc_arg *storage, size_t nstorage);
TKC_HIDDEN int tkc_st_from_arg(tkc_st *st, const tkc_arg *a);

/* ---------------------------------------------------------------- contexts and handles (tensor.c) */

struct tkc_ctx {
  tkc_device *dev;
  struct tkc_tensor *live;    /* doubly linked list of live handles */
  struct tkc_tensor *spare;   /* freed handles, reused (kept so a use after free is caught) */
};

#define TKC_TENSOR_LIVE 0x7e45a11du
#define TKC_TENSOR_DEAD 0xdeadbeefu

struct tkc_tensor {
  uint32_t magic;
  struct tkc_ctx *ctx;
  struct tkc_lazy *node;
  struct tkc_tensor *prev, *next;
};

/* ---------------------------------------------------------------- lazy nodes (lazy.c) */

typedef enum tkc_lz_kind {
  TKC_LZ_BUFFER,     /* realized: buf seen through st */
  TKC_LZ_CONST,      /* value broadcast to shape */
  TKC_LZ_IOTA,       /* element i of a 1-D tensor is i */
  TKC_LZ_ALU,        /* op over srcs of this shape */
  TKC_LZ_CAST,
  TKC_LZ_BITCAST,
  TKC_LZ_REDUCE,     /* op (ADD, MAX) over the axes in arg (keepdim shape) */
  TKC_LZ_MOVE,       /* op (RESHAPE .. FLIP, or WINDOW) with arg */
  TKC_LZ_CONTIGUOUS  /* a kernel boundary */
} tkc_lz_kind;

#define TKC_MOVE_WINDOW (-1) /* the move op of tkc_st_window */

/* A device buffer shared by the nodes that see it. */
typedef struct tkc_rbuf {
  int refs;
  tkc_buffer *buf;
} tkc_rbuf;

typedef struct tkc_lazy tkc_lazy;
struct tkc_lazy {
  int refs;
  tkc_lz_kind kind;
  tkc_dtype dtype;
  int ndim;
  int64_t shape[TKC_MAX_DIMS];
  int op;                     /* tkc_op of ALU/REDUCE/MOVE (or TKC_MOVE_WINDOW) */
  int nsrc;
  tkc_lazy *src[3];
  int64_t arg[2 * TKC_MAX_DIMS]; /* MOVE arguments; REDUCE: 1 per reduced axis */
  tkc_value value;            /* CONST */
  tkc_rbuf *rbuf;             /* BUFFER */
  tkc_st *st;                 /* BUFFER: how this node sees rbuf (owned) */
  struct tkc_ctx *ctx;
};

TKC_HIDDEN tkc_lazy *tkc_lazy_new(struct tkc_ctx *ctx, tkc_lz_kind kind, tkc_dtype dt, int ndim, const int64_t *shape);
TKC_HIDDEN void tkc_lazy_ref(tkc_lazy *n);
TKC_HIDDEN void tkc_lazy_unref(tkc_lazy *n);
TKC_HIDDEN void tkc_lazy_set_src(tkc_lazy *n, int i, tkc_lazy *src); /* takes a new reference */
/* Turns n into a BUFFER node over rb seen through st (drops its sources). */
TKC_HIDDEN tkc_status tkc_lazy_become_buffer(tkc_lazy *n, tkc_rbuf *rb, const tkc_st *st);
/* A RESHAPE node over src (also when it changes nothing). */
TKC_HIDDEN tkc_lazy *tkc_lz_move_node(tkc_lazy *src, int ndim, const int64_t *shape);
/* Applies the movement op of MOVE node m to st. */
TKC_HIDDEN tkc_status tkc_lazy_apply_move(tkc_st *st, const tkc_lazy *m);
TKC_HIDDEN tkc_rbuf *tkc_rbuf_new(tkc_device *d, tkc_dtype dt, size_t n);
TKC_HIDDEN void tkc_rbuf_unref(tkc_rbuf *rb);
TKC_HIDDEN int64_t tkc_shape_numel(int ndim, const int64_t *shape);

/* ---------------------------------------------------------------- scheduling (schedule.c) */

/* One kernel: out = the node it computes (made a BUFFER when run), ast = SINK(STORE(...)) in the
 * schedule's graph, inputs[i] = the node behind DEFINE_GLOBAL i+1 (i.e. buffer 0 is the output). */
typedef struct tkc_sched_item {
  tkc_lazy *out;
  tkc_uop *ast;
  int ninputs;
  tkc_lazy *inputs[32];
} tkc_sched_item;

typedef struct tkc_schedule {
  tkc_graph *g;
  tkc_sched_item *items;
  size_t n, cap;
} tkc_schedule;

/* The kernels that realize t, in order. Nodes that will be realized are recorded in the items;
 * nothing is run or changed. Free with tkc_schedule_free. */
TKC_HIDDEN tkc_status tkc_schedule_build(tkc_schedule *s, tkc_lazy *t);
TKC_HIDDEN void tkc_schedule_free(tkc_schedule *s);

/* Runs the schedule that realizes n (nodes computed become BUFFERs; a view of a realized node
 * becomes a BUFFER over the same data). */
TKC_HIDDEN tkc_status tkc_lazy_realize(tkc_lazy *n);

/* ---------------------------------------------------------------- lowering (codegen/lowerer.c) */

/* The kernel for ast (SINK(STORE(DEFINE_GLOBAL, VIEW, value))) as UOps with ranges (or SPECIAL
 * launch indices when r has global dims) and index math, simplified. */
TKC_HIDDEN tkc_uop *tkc_lower(tkc_graph *g, tkc_uop *ast, const tkc_renderer *r);

#endif
