/* The lowerer: a kernel AST (from the scheduler) -> UOps with loops, launch indices and index math
 * (tinygrad's lowerer.py). Output dims become RANGE loops on devices without launch indices, or one
 * flattened launch grid (gidx/lidx SPECIALs) on devices with them; reduce dims become RANGE loops
 * inside, with a DEFINE_ACC per REDUCE_AXIS. Views become index and validity expressions, and the
 * whole kernel is then simplified with the symbolic rules. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "graph/graph.h"

typedef struct lower {
  tkc_graph *g;
  int ndim;
  int64_t out[TKC_MAX_DIMS], full[TKC_MAX_DIMS];
  tkc_uop *idx_out[TKC_MAX_DIMS], *idx_full[TKC_MAX_DIMS];
  tkc_uop *launch_valid; /* a partial last launch block: lanes past the end do nothing */
  tkc_umap memo[2];      /* outside / inside a reduce */
  int naccs;
} lower;

static tkc_dt i32(void) { return tkc_dt_of(TKC_INT32); }
static tkc_uop *ci(tkc_graph *g, int64_t v) { return tkc_uop_const_int(g, i32(), v); }

static int shape_of(const tkc_arg *a, int64_t *shape) {
  if (a->kind != TKC_ARG_TUPLE || a->n > TKC_MAX_DIMS) return -1;
  for (uint32_t i = 0; i < a->n; i++) shape[i] = a->v.t[i].v.i;
  return (int)a->n;
}

static tkc_uop *and2(tkc_graph *g, tkc_uop *a, tkc_uop *b) { return !a ? b : !b ? a : tkc_uop_alu2(g, TKC_OP_AND, a, b); }

static tkc_uop *zero_of(tkc_graph *g, tkc_dt dt) {
  return tkc_dt_is_float(dt) ? tkc_uop_const_float(g, dt, 0.0) : tkc_uop_const_int(g, dt, 0);
}

static tkc_uop *identity_of(tkc_graph *g, tkc_op op, tkc_dt dt) {
  if (op == TKC_OP_ADD) return zero_of(g, dt);
  if (tkc_dt_is_float(dt)) return tkc_uop_const_float(g, dt, -INFINITY);
  return tkc_uop_const_int(g, dt, dt.scalar == TKC_UINT64 ? 0 : tkc_dtype_min((tkc_dtype)dt.scalar));
}

/* the index and validity of a view at the current indices */
static tkc_status view_at(lower *L, const tkc_uop *view, int in_reduce, tkc_uop **idx, tkc_uop **valid) {
  tkc_st st;
  if (tkc_st_from_arg(&st, &view->arg)) return tkc_err(TKC_EINTERNAL, "lowerer: malformed VIEW");
  if (tkc_st_ndim(&st) != L->ndim) return tkc_err(TKC_EINTERNAL, "lowerer: a view of rank %d in a rank-%d kernel", tkc_st_ndim(&st), L->ndim);
  return tkc_st_expr(&st, L->g, in_reduce ? L->idx_full : L->idx_out, idx, valid);
}

static tkc_uop *lower_uop(lower *L, tkc_uop *u, int in_reduce);

static tkc_uop *lower_node(lower *L, tkc_uop *u, int in_reduce) {
  tkc_graph *g = L->g;
  tkc_uop *idx, *valid;
  switch (u->op) {
  case TKC_OP_LOAD: { /* LOAD(DEFINE_GLOBAL, VIEW) */
    if (view_at(L, u->src[1], in_reduce, &idx, &valid)) return NULL;
    if (valid && valid->op == TKC_OP_CONST && !valid->arg.v.i) return zero_of(g, u->dtype); /* never read */
    valid = and2(g, valid, L->launch_valid);
    tkc_uop *s[3] = {u->src[0], idx, valid};
    tkc_uop *index = tkc_uop_new(g, TKC_OP_INDEX, u->src[0]->dtype, valid ? 3 : 2, s, tkc_arg_none());
    return index ? tkc_uop_new(g, TKC_OP_LOAD, u->dtype, 1, &index, tkc_arg_none()) : NULL;
  }
  case TKC_OP_CONST: /* CONST(VIEW): zero where the view masks it */
    if (!u->nsrc) return u;
    if (view_at(L, u->src[0], in_reduce, &idx, &valid)) return NULL;
    {
      tkc_uop *c = tkc_uop_new(g, TKC_OP_CONST, u->dtype, 0, NULL, u->arg);
      return valid ? tkc_uop_alu3(g, TKC_OP_WHERE, valid, c, zero_of(g, u->dtype)) : c;
    }
  case TKC_OP_VIEW: /* an iota leaf: the index itself */
    if (view_at(L, u, in_reduce, &idx, &valid)) return NULL;
    return valid ? tkc_uop_alu3(g, TKC_OP_WHERE, valid, idx, ci(g, 0)) : idx;
  case TKC_OP_REDUCE_AXIS: {
    tkc_op op = (tkc_op)u->arg.v.t[0].v.i;
    const tkc_arg *axes = &u->arg.v.t[1];
    tkc_uop *src[1 + TKC_MAX_DIMS];
    int n = 1;
    for (uint32_t i = 0; i < axes->n; i++) {
      int64_t ax = axes->v.t[i].v.i;
      if (L->full[ax] == 0) return identity_of(g, op, u->dtype); /* reducing nothing */
      if (L->idx_full[ax]->op == TKC_OP_RANGE) src[n++] = L->idx_full[ax];
    }
    tkc_uop *val = lower_uop(L, u->src[0], 1);
    if (!val || n == 1) return val; /* nothing to loop over */
    src[0] = identity_of(g, op, u->dtype);
    tkc_uop *acc = tkc_uop_new(g, TKC_OP_DEFINE_ACC, u->dtype, n, src, tkc_arg_int(L->naccs++));
    tkc_uop *upd = tkc_uop_alu2(g, op, acc, val);
    tkc_uop *s2[2] = {acc, upd};
    return upd ? tkc_uop_new(g, TKC_OP_ASSIGN, u->dtype, 2, s2, tkc_arg_none()) : NULL;
  }
  case TKC_OP_STORE: { /* STORE(DEFINE_GLOBAL, VIEW, value) */
    tkc_uop *val = lower_uop(L, u->src[2], 0);
    if (!val || view_at(L, u->src[1], 0, &idx, &valid)) return NULL;
    valid = and2(g, valid, L->launch_valid);
    tkc_uop *s[3] = {u->src[0], idx, valid};
    tkc_uop *index = tkc_uop_new(g, TKC_OP_INDEX, u->src[0]->dtype, valid ? 3 : 2, s, tkc_arg_none());
    tkc_uop *s2[2] = {index, val};
    return index ? tkc_uop_new(g, TKC_OP_STORE, tkc_dt_of(TKC_VOID), 2, s2, tkc_arg_none()) : NULL;
  }
  default: { /* ALU, CAST, BITCAST, SINK: rebuild over lowered sources */
    tkc_uop *src[8];
    if (u->nsrc > 8) return tkc_err_null(TKC_EINTERNAL, "lowerer: %s with %d sources", tkc_op_name((tkc_op)u->op), u->nsrc);
    for (int i = 0; i < u->nsrc; i++)
      if (!(src[i] = lower_uop(L, u->src[i], in_reduce))) return NULL;
    return tkc_uop_new(g, (tkc_op)u->op, u->dtype, u->nsrc, src, u->op == TKC_OP_SINK ? tkc_arg_none() : u->arg);
  }
  }
}

static tkc_uop *lower_uop(lower *L, tkc_uop *u, int in_reduce) {
  tkc_uop *done = tkc_umap_get(&L->memo[in_reduce], u);
  if (done) return done;
  tkc_uop *r = lower_node(L, u, in_reduce);
  if (r && tkc_umap_put(&L->memo[in_reduce], u, r)) return tkc_err_null(TKC_ENOMEM, "out of memory lowering");
  return r;
}

/* Output indices as one flattened launch grid: linear = (gidx1*G0 + gidx0)*L + lidx0. */
static void launch_indices(lower *L, const tkc_renderer *r) {
  tkc_graph *g = L->g;
  int64_t total = tkc_shape_numel(L->ndim, L->out), maxl = r->local_max[0] > 0 ? r->local_max[0] : 1, l = 1;
  if (maxl > 256) maxl = 256;
  while (l * 2 <= maxl && total % (l * 2) == 0) l *= 2; /* a block size that divides: no partial block */
  int64_t blocks = total / l, g0 = blocks, g1 = 1;
  if (l < 32 && total >= 4096 && maxl >= 64) { /* awkward sizes: full blocks plus a guarded tail */
    l = 64;
    blocks = (total + l - 1) / l;
    g0 = blocks;
  }
  if (g0 > r->global_max[0]) {
    g0 = r->global_max[0];
    g1 = (blocks + g0 - 1) / g0;
  }
  tkc_uop *linear = g0 > 1 || g1 > 1 ? tkc_uop_special(g, "gidx0", g0) : ci(g, 0);
  if (g1 > 1) linear = tkc_uop_alu2(g, TKC_OP_ADD, tkc_uop_alu2(g, TKC_OP_MUL, tkc_uop_special(g, "gidx1", g1), ci(g, g0)), linear);
  if (l > 1) linear = tkc_uop_alu2(g, TKC_OP_ADD, tkc_uop_alu2(g, TKC_OP_MUL, linear, ci(g, l)), tkc_uop_special(g, "lidx0", l));
  if (g0 * g1 * l != total) L->launch_valid = tkc_uop_alu2(g, TKC_OP_CMPLT, linear, ci(g, total));
  int64_t stride = 1;
  for (int i = L->ndim - 1; i >= 0; i--) {
    if (L->out[i] == 1) { L->idx_out[i] = ci(g, 0); continue; }
    tkc_uop *q = stride == 1 ? linear : tkc_uop_alu2(g, TKC_OP_IDIV, linear, ci(g, stride));
    stride *= L->out[i];
    L->idx_out[i] = stride == total ? q : tkc_uop_alu2(g, TKC_OP_MOD, q, ci(g, L->out[i]));
  }
}

/* On loop devices a reduce kernel computes UPCAST neighbouring outputs of its last output dim per
 * iteration (tinygrad's UPCAST opt): UPCAST accumulators share one pass over the reduce loop, so
 * loads that do not depend on that dim (a row of a matmul) are read once, and the ones that do are
 * contiguous. */
#define UPCAST 4

static int upcast_dim(const lower *L) {
  int reduce = 0, d = -1;
  for (int i = 0; i < L->ndim; i++) reduce |= L->full[i] != L->out[i];
  for (int i = 0; i < L->ndim; i++)
    if (L->out[i] > 1 && L->full[i] == L->out[i]) d = i;
  return reduce && d >= 0 && L->out[d] % UPCAST == 0 && L->out[d] >= 2 * UPCAST ? d : -1;
}

tkc_uop *tkc_lower(tkc_graph *g, tkc_uop *ast, const tkc_renderer *r) {
  lower L = {.g = g};
  if (!ast || ast->op != TKC_OP_SINK || ast->arg.kind != TKC_ARG_TUPLE || ast->arg.n != 2 || ast->nsrc != 1)
    return tkc_err_null(TKC_EINTERNAL, "lowerer: the AST is not SINK(STORE) with shapes");
  L.ndim = shape_of(&ast->arg.v.t[0], L.out);
  if (L.ndim < 0 || shape_of(&ast->arg.v.t[1], L.full) != L.ndim) return tkc_err_null(TKC_EINTERNAL, "lowerer: bad kernel shapes");
  int gpu = r && r->global_max[0] > 0, up = gpu ? -1 : upcast_dim(&L);
  if (gpu) launch_indices(&L, r);
  else
    for (int i = 0; i < L.ndim; i++)
      L.idx_out[i] = L.out[i] == 1 ? ci(g, 0) : tkc_uop_range(g, ci(g, 0), ci(g, i == up ? L.out[i] / UPCAST : L.out[i]), i);
  for (int i = 0; i < L.ndim; i++)
    L.idx_full[i] = L.full[i] == L.out[i] ? L.idx_out[i] : L.full[i] <= 1 ? ci(g, 0) : tkc_uop_range(g, ci(g, 0), ci(g, L.full[i]), L.ndim + i);
  tkc_uop *src[UPCAST + 33];
  int ns = 0, lanes = up >= 0 ? UPCAST : 1;
  tkc_uop *base = up >= 0 ? L.idx_out[up] : NULL;
  for (int lane = 0; lane < lanes; lane++) {
    if (up >= 0) { /* this lane's index: range*UPCAST + lane */
      L.idx_out[up] = L.idx_full[up] = tkc_uop_alu2(g, TKC_OP_ADD, tkc_uop_alu2(g, TKC_OP_MUL, base, ci(g, UPCAST)), ci(g, lane));
      tkc_umap_free(&L.memo[0]);
      tkc_umap_free(&L.memo[1]);
    }
    if (!(src[ns++] = lower_uop(&L, ast->src[0], 0))) break;
  }
  tkc_umap_free(&L.memo[0]);
  tkc_umap_free(&L.memo[1]);
  if (!src[ns - 1]) return NULL;
  /* every buffer stays a parameter, even one the simplified kernel no longer reads */
  size_t n;
  tkc_uop **order = tkc_toposort(ast, &n);
  if (!order) return NULL;
  for (size_t i = 0; i < n && ns < UPCAST + 33; i++)
    if (order[i]->op == TKC_OP_DEFINE_GLOBAL && order[i]->arg.v.i > 0) src[ns++] = order[i];
  free(order);
  tkc_uop *sink = tkc_uop_sink(g, ns, src);
  return sink ? tkc_simplify(g, sink) : NULL;
}
