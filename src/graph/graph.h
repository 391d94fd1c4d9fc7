/* Internal interfaces of the tensor layer: contexts, lazy nodes and the scheduler (the engine that
 * realizes them: engine/engine.h). Not installed. */
#ifndef TKC_GRAPH_H
#define TKC_GRAPH_H

#include "tkc.h"
#include "tkc/runtime.h"
#include "uops/uop_internal.h"
#include "shape/shape.h"

/* ---------------------------------------------------------------- contexts and handles (tensor.c) */

/* A variable of a ctx (graph/vars.c). */
typedef struct tkc_ctx_var {
  char name[32];
  int64_t min, max;
  int64_t value; /* -1: not bound */
} tkc_ctx_var;

struct tkc_ctx {
  tkc_device *dev;
  uint64_t serial;            /* unique per ctx in the process: part of its variables' tokens */
  tkc_ctx_var *vars;              /* tkc_dim_var, by index */
  struct tkc_jit *capture;    /* the tkc_jit_run recording this ctx's launches, if any */
  int nvars, capvars;
  struct tkc_tensor *live;    /* doubly linked list of live handles */
  struct tkc_tensor *spare, *spare_tail; /* freed handles, oldest first: reused only past the quarantine */
  int64_t nspare;
  int scope_depth;            /* open tkc_scope_begin's */
  int64_t kernels_run, kernels_built; /* tkc_ctx_stats */
  double kernel_s, build_s;
  int beam;                   /* tkc_ctx_set_beam: -1 = $TKC_BEAM */
  tkc_progress_fn progress;   /* tkc_ctx_set_progress */
  void *progress_user;
  struct tkc_tensor *rng;      /* the random generator's state on the device (random.c); NULL until first used */
  struct tkc_lazy **graded;   /* the nodes holding a gradient (tkc_lazy_set_grad) */
  int ngraded, capgraded;
};

/* A freed handle stays dead (so that using it is caught, not a silent use of some newer tensor) until
 * this many later frees in its ctx: ~0.9 MB of handles at most per ctx. */
#define TKC_HANDLE_QUARANTINE 16384
#define TKC_TENSOR_LIVE 0x7e45a11du
#define TKC_TENSOR_DEAD 0xdeadbeefu

struct tkc_tensor {
  uint32_t magic;
  int scope;                  /* the scope depth it belongs to (0: none); tkc_keep lowers it */
  struct tkc_ctx *ctx;
  struct tkc_lazy *node;
  struct tkc_tensor *prev, *next;
};

/* vars.c: a new ctx serial; the ctx's variable behind a token (NULL + TKC_EINVAL naming who); the
 * variable named name (NULL when none). */
TKC_HIDDEN uint64_t tkc_ctx_serial_new(void);
TKC_HIDDEN tkc_ctx_var *tkc_var_of(const tkc_ctx *ctx, int64_t token, const char *who);
/* Dims may be tokens (variable + c): the variable and c of one (NULL + TKC_EINVAL for a bad token);
 * checks a shape's tokens (of ctx, never negative), writing its largest values to max (may be NULL);
 * the largest values without checks (tokens already checked); the bound values (the element count,
 * or -1 + TKC_EINVAL when a variable is unbound); whether any dim is a token. */
TKC_HIDDEN tkc_ctx_var *tkc_dim_decode(const tkc_ctx *ctx, int64_t token, int64_t *c, const char *who);
TKC_HIDDEN int tkc_shape_check_dims(const tkc_ctx *ctx, int ndim, const int64_t *shape, int64_t *max, const char *who);
TKC_HIDDEN void tkc_shape_max(const tkc_ctx *ctx, int ndim, const int64_t *shape, int64_t *max);
TKC_HIDDEN int64_t tkc_shape_bound(const tkc_ctx *ctx, int ndim, const int64_t *shape, int64_t *bound, const char *who);
TKC_HIDDEN int tkc_shape_is_symbolic(int ndim, const int64_t *shape);
/* What a buffer of a (maybe variable) shape holds: its element count at the largest values, and
 * its plain layout there. */
TKC_HIDDEN int64_t tkc_shape_numel_max(const tkc_ctx *ctx, int ndim, const int64_t *shape);
TKC_HIDDEN void tkc_st_contiguous_max(tkc_st *st, const tkc_ctx *ctx, int ndim, const int64_t *shape);
/* Variable v of ctx as a 0-d int32 node (its value at each realize). */
TKC_HIDDEN struct tkc_lazy *tkc_lz_var(tkc_ctx *ctx, const tkc_ctx_var *v);
/* The variable's number in its ctx and c of a token (for messages); -1 for a plain dim. */
TKC_HIDDEN int64_t tkc_dim_var_number(int64_t dim, int64_t *c);
TKC_HIDDEN const tkc_ctx_var *tkc_ctx_var_named(const tkc_ctx *ctx, const char *name);
/* Arithmetic on dims that may be tokens: x + sign * y (sign +1 or -1) when the result is a plain dim
 * or one variable + c (0), else -1 + TKC_EUNSUPPORTED naming who; whether x <= y for every value of
 * their variables (1, 0; -1 + TKC_EINVAL for a bad token). */
TKC_HIDDEN int tkc_dim_add(const tkc_ctx *ctx, int64_t x, int64_t y, int sign, int64_t *out, const char *who);
TKC_HIDDEN int tkc_dim_le_always(const tkc_ctx *ctx, int64_t x, int64_t y, const char *who);

/* ---------------------------------------------------------------- lazy nodes (lazy.c) */

typedef enum tkc_lz_kind {
  TKC_LZ_BUFFER,     /* realized: buf seen through st */
  TKC_LZ_CONST,      /* value broadcast to shape */
  TKC_LZ_VAR,        /* ctx variable number value.i (int32) broadcast to shape */
  TKC_LZ_IOTA,       /* element i of a 1-D tensor is i */
  TKC_LZ_ALU,        /* op over srcs of this shape */
  TKC_LZ_CAST,
  TKC_LZ_BITCAST,
  TKC_LZ_REDUCE,     /* op (ADD, MAX) over the axes in arg (keepdim shape) */
  TKC_LZ_MOVE,       /* op (RESHAPE .. FLIP, or WINDOW) with arg */
  TKC_LZ_CONTIGUOUS, /* a kernel boundary */
  TKC_LZ_COMPOSITE   /* never computed: the record of a composite op (op: tkc_composite_op) over src with
                        arg, held by its output's composite field for the backward pass */
} tkc_lz_kind;

/* composites the backward pass differentiates by a rule of their own (autograd/gradient.c) */
typedef enum tkc_composite_op {
  TKC_COMP_CONV2D, /* src x, w; arg stride, padding (tkc_conv2d) */
  TKC_COMP_MATMUL  /* src a (M, K), b (K, N) (tkc_matmul of two matrices) */
} tkc_composite_op;

#define TKC_MOVE_WINDOW (-1) /* the move op of tkc_st_window */

/* A device buffer shared by the nodes that see it. */
typedef struct tkc_rbuf {
  int refs;
  bool in_place; /* a tkc_assign destination: state that lives across jit replays */
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
  /* gradients (autograd/gradient.c) */
  tkc_lazy *recipe;           /* a computed node that became a BUFFER: how it was computed (kind, op,
                                 arg, sources), kept for the backward pass while needs_grad */
  tkc_lazy *grad;             /* requires_grad: the gradient tkc_backward accumulated (NULL: none) */
  uint8_t requires_grad;      /* tkc_requires_grad: a leaf that gradients are accumulated into */
  uint8_t needs_grad;         /* a source (or theirs) requires a gradient */
  uint8_t detached;           /* tkc_detach: gradients stop here */
  tkc_rbuf *target;           /* tkc_assign: the buffer this node's kernel writes (dst's), not a new one */
  tkc_lazy *composite;        /* the output of a composite op: its TKC_LZ_COMPOSITE record (kept when
                                 realized), differentiated by its own rule, not through its nodes */
};

TKC_HIDDEN tkc_lazy *tkc_lazy_new(struct tkc_ctx *ctx, tkc_lz_kind kind, tkc_dtype dt, int ndim, const int64_t *shape);
TKC_HIDDEN void tkc_lazy_ref(tkc_lazy *n);
TKC_HIDDEN void tkc_lazy_unref(tkc_lazy *n);
TKC_HIDDEN void tkc_lazy_set_src(tkc_lazy *n, int i, tkc_lazy *src); /* takes a new reference */
/* n's gradient becomes g (a new reference; NULL drops it). A gradient often reads its own leaf (d
 * sum(x*x) / dx = 2x): a reference cycle, so the ctx lists the nodes holding one and tkc_ctx_free
 * drops them all (tkc_ctx_drop_grads). TKC_ENOMEM (nothing changed) when the list cannot grow. */
TKC_HIDDEN tkc_status tkc_lazy_set_grad(tkc_lazy *n, tkc_lazy *g);
TKC_HIDDEN void tkc_ctx_drop_grads(struct tkc_ctx *ctx);
/* Records on out that it is the output of composite op over src (with arg): the backward pass then
 * uses the composite's rule instead of its decomposition. Only when a source needs gradients; a
 * failure to record (no memory) is no error: the decomposition's gradient is right, only slower. */
TKC_HIDDEN void tkc_lazy_mark_composite(tkc_lazy *out, tkc_composite_op op, int nsrc, tkc_lazy *const *src, const int64_t *arg, int narg);
/* assign.c: a node that writes v into the buffer d holds (d owns its whole buffer or is a pending
 * assign; same dtype and shape), a new reference; NULL with TKC_EINVAL when d has no such buffer.
 * tkc_ctx_redirect: every handle of ctx on from is on to from now on. */
TKC_HIDDEN tkc_lazy *tkc_lazy_assign(tkc_lazy *d, tkc_lazy *v);
TKC_HIDDEN void tkc_ctx_redirect(struct tkc_ctx *ctx, tkc_lazy *from, tkc_lazy *to);
/* An assign into a view (tkc_assign of a view of a buffer-owning tensor): a CONTIGUOUS node of the
 * base's shape, src[0] the value (the view's shape), src[1] the view (movement ops over the base's
 * previous node), target the base's buffer; its kernel stores value through the view. */
static inline bool tkc_lazy_is_view_assign(const tkc_lazy *n) { return n->kind == TKC_LZ_CONTIGUOUS && n->target && n->nsrc == 2; }
/* The view (over the base's contiguous buffer) through which view assign a stores (TKC_EUNSUPPORTED
 * when it does not fit TKC_MAX_VIEWS). */
TKC_HIDDEN tkc_status tkc_lazy_assign_view_st(const tkc_lazy *a, tkc_st *st);
/* n is a BUFFER that sees its whole buffer contiguously (writable in place: copy_in, assign). */
TKC_HIDDEN bool tkc_lazy_owns_buffer(const tkc_lazy *n);
/* n is a realized buffer seen, through movement ops, as a contiguous (row-major, unmasked) view:
 * a contiguous copy of it would copy it as it is */
TKC_HIDDEN bool tkc_lazy_is_contiguous_view(const tkc_lazy *n);
/* Turns n into a BUFFER node over rb seen through st (drops its sources). */
TKC_HIDDEN tkc_status tkc_lazy_become_buffer(tkc_lazy *n, tkc_rbuf *rb, const tkc_st *st);
/* A buffer's lengths at the current binding (done by tkc_lazy_become_buffer), and the check that
 * the binding is still the same when it is read (TKC_EINVAL naming the variable otherwise). */
TKC_HIDDEN void tkc_shape_stamp(tkc_lazy *n);
TKC_HIDDEN tkc_status tkc_lazy_check_stamp(const tkc_lazy *n, const char *who);
/* A RESHAPE node over src (also when it changes nothing). */
TKC_HIDDEN tkc_lazy *tkc_lz_move_node(tkc_lazy *src, int ndim, const int64_t *shape);
/* Applies the movement op of MOVE node m to st. */
TKC_HIDDEN tkc_status tkc_lazy_apply_move(tkc_st *st, const tkc_lazy *m);
/* zero: zero-filled, else undefined contents (for buffers written in full first) */
TKC_HIDDEN tkc_rbuf *tkc_rbuf_new(tkc_device *d, tkc_dtype dt, size_t n, bool zero);
TKC_HIDDEN void tkc_rbuf_unref(tkc_rbuf *rb);

/* ---------------------------------------------------------------- scheduling (schedule.c) */

/* Whether a reduce of `rows` rows of `row` elements each, read broadcast back along the reduced
 * (trailing) dims, is computed inside the kernel that reads it on ctx's device (see schedule.c nests):
 * ops that compose reduces (layer_norm) pick the form that nests there. */
TKC_HIDDEN bool tkc_schedule_nests_rows(const tkc_ctx *ctx, int64_t rows, int64_t row);

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
  struct tkc_users *users; /* how many nodes read each node of the graph (schedule.c) */
} tkc_schedule;

/* The kernels that realize t, in order. Nodes that will be realized are recorded in the items;
 * nothing is run or changed. Free with tkc_schedule_free. */
TKC_HIDDEN tkc_status tkc_schedule_build(tkc_schedule *s, tkc_lazy *t);
/* The same for several tensors at once (one schedule: what they share is computed once). Kernels that
 * write an assigned buffer run after every kernel of the schedule that reads its old contents
 * (TKC_EUNSUPPORTED when that cannot be: a read of the old contents that needs the new ones). */
TKC_HIDDEN tkc_status tkc_schedule_build_many(tkc_schedule *s, int n, tkc_lazy *const *ts);
TKC_HIDDEN void tkc_schedule_free(tkc_schedule *s);

/* n is a chain of movement ops over a BUFFER node: n becomes a BUFFER over the same data. */
TKC_HIDDEN tkc_status tkc_lazy_become_view(tkc_lazy *n);

#endif
