/* Index folding (tinygrad's arange folding: loop_collapse and index_collapse), on the kernel AST before
 * the opts, so the heuristics see the kernel that is left.
 *
 * The index ops (index_select, embedding, gather, one_hot times a matrix) are sums over a dim r of N
 * entries where only the entry whose arange value equals an index is nonzero:
 *
 *   sum_r where(I == a + r, V(r), 0)   ->  where(0 <= I - a < N, V(I - a), 0)
 *
 * (also with the compare as a cast bool times V, inside casts and bitcasts, and as where(I != r, 0, V)).
 * V(I - a) reads its views at the computed index: a VIEW with one source per kernel dim, the index of
 * that dim (an arange VIEW of the dim itself, or the computed index for r), which the lowerer
 * (codegen/lowerer.c, view_at) evaluates instead of the kernel's indices. The computed index is clamped
 * to 0 where it is out of range, so the load stays inside the buffer; the where gives 0 there, as the
 * sum did. Where the sum counts a comparison with a value independent of r, it has a closed form:
 *
 *   sum_r where(a + r < c, k, 0)       ->  (clamp(c, a, a + N) - a) * k      (and c < a + r, a - r, not, !=)
 *
 * A reduce dim that no reduce is left over is then dropped from the kernel's shape (every view shrunk
 * to its first entry there), so the kernel is elementwise when the fold took its only reduce. */
#include <stdlib.h>
#include <string.h>
#include "codegen/codegen.h"
#include "shape/shape.h"

typedef struct fold_ctx {
  tkc_graph *g;
  int ndim;
  int64_t full[TKC_MAX_DIMS];
  bool var[TKC_MAX_DIMS];    /* a variable-length dim: never folded */
  bool shrink[TKC_MAX_DIMS]; /* the shrink pass: dims to drop */
  tkc_arg *storage;          /* TKC_ST_ARGS args for tkc_st_to_arg */
} fold_ctx;

/* ---------------------------------------------------------------- small builders */

static tkc_dt dt_bool(void) { return tkc_dt_of(TKC_BOOL); }
static tkc_uop *cbool(tkc_graph *g, bool v) { return tkc_uop_const_int(g, dt_bool(), v); }
static tkc_uop *not_(tkc_graph *g, tkc_uop *x) { return x ? tkc_uop_alu2(g, TKC_OP_CMPNE, x, cbool(g, true)) : NULL; }
static tkc_uop *and_(tkc_graph *g, tkc_uop *a, tkc_uop *b) { return !a ? b : !b ? a : tkc_uop_alu2(g, TKC_OP_AND, a, b); }
static tkc_uop *lt(tkc_graph *g, tkc_uop *a, tkc_uop *b) { return a && b ? tkc_uop_alu2(g, TKC_OP_CMPLT, a, b) : NULL; }
static tkc_uop *where(tkc_graph *g, tkc_uop *c, tkc_uop *t, tkc_uop *f) { return c && t && f ? tkc_uop_alu3(g, TKC_OP_WHERE, c, t, f) : NULL; }
static tkc_uop *zero_like(tkc_graph *g, const tkc_uop *like) { return tkc_uop_const_like_int(g, like, 0); }

static bool is_zero(const tkc_uop *u) {
  if (u->op != TKC_OP_CONST || u->nsrc) return false;
  return tkc_dt_is_float(u->dtype) ? tkc_uop_const_f(u) == 0.0 : tkc_uop_const_i(u) == 0;
}
static bool is_true(const tkc_uop *u) { return u->op == TKC_OP_CONST && !u->nsrc && tkc_dt_is_bool(u->dtype) && tkc_uop_const_i(u); }
static bool is_int(tkc_dt dt) { return tkc_dt_is_int(dt) && !tkc_dt_is_bool(dt) && dt.count == 1; }

/* v fits dt (an integer dtype) */
static bool fits(int64_t v, tkc_dt dt) { return v >= tkc_dtype_min((tkc_dtype)dt.scalar) && v <= tkc_dtype_max((tkc_dtype)dt.scalar); }

static tkc_uop *add_(tkc_graph *g, tkc_uop *a, tkc_uop *b) { return !a ? b : !b ? a : tkc_uop_alu2(g, TKC_OP_ADD, a, b); }
/* -x as x * -1 (the form the symbolic rules know) */
static tkc_uop *neg(tkc_graph *g, tkc_uop *x) { return tkc_uop_alu2(g, TKC_OP_MUL, x, tkc_uop_const_like_int(g, x, -1)); }

/* a VIEW of st (keeping like's dtype and sources) */
static tkc_uop *view_of(fold_ctx *F, const tkc_uop *like, const tkc_st *st, int nsrc, tkc_uop *const *src) {
  tkc_arg a = tkc_st_to_arg(st, F->storage, TKC_ST_ARGS);
  return tkc_uop_new(F->g, TKC_OP_VIEW, like->dtype, nsrc, src, a);
}

/* ---------------------------------------------------------------- what depends on dim r */

/* whether a view without sources reads a different element (or validity) as the index of dim r moves */
static bool view_uses_dim(const tkc_uop *v, int r) {
  tkc_st st;
  if (tkc_st_from_arg(&st, &v->arg) || r >= tkc_st_ndim(&st)) return true;
  const tkc_view *lv = &st.views[st.nviews - 1];
  if (lv->shape[r] <= 1) return false;
  if (lv->strides[r]) return true;
  return lv->has_mask && (lv->mask_begin[r] > 0 || lv->mask_end[r] < lv->shape[r] || lv->mask_begin_var[r] || lv->mask_end_var[r]);
}

static bool reduces_dim(const tkc_uop *u, int r) {
  if (u->op != TKC_OP_REDUCE_AXIS) return false;
  const tkc_arg *axes = &u->arg.v.t[1];
  for (uint32_t i = 0; i < axes->n; i++)
    if (axes->v.t[i].v.i == r) return true;
  return false;
}

typedef struct dep {
  int r;
  tkc_umap seen; /* u -> (tkc_uop *)1 (independent) or 2 (depends) */
} dep;

static bool depends(dep *D, const tkc_uop *u) {
  uintptr_t known = (uintptr_t)tkc_umap_get(&D->seen, u);
  if (known) return known == 2;
  bool d = false;
  if (u->op == TKC_OP_VIEW && !u->nsrc) d = view_uses_dim(u, D->r);
  else if (reduces_dim(u, D->r)) d = false; /* a reduce over r inside the sum over r (a log_softmax's, nested:
                                               * schedule.c) has loops of its own: one value for every r */
  else
    for (int i = 0; i < u->nsrc && !d; i++) d = depends(D, u->src[i]);
  tkc_umap_put(&D->seen, u, (tkc_uop *)(uintptr_t)(d ? 2 : 1)); /* (out of memory: only slower) */
  return d;
}

/* ---------------------------------------------------------------- affine in r: e = a + b*r */

typedef struct affine {
  tkc_uop *a; /* independent of r; NULL: 0 */
  int64_t b;
} affine;

static bool affine_of(fold_ctx *F, dep *D, tkc_uop *e, affine *out) {
  tkc_graph *g = F->g;
  if (!is_int(e->dtype)) return false;
  if (!depends(D, e)) {
    *out = (affine){is_zero(e) ? NULL : e, 0};
    return true;
  }
  affine x, y;
  switch (e->op) {
  case TKC_OP_VIEW: { /* an arange: offset + sum_d stride_d * idx_d; r's term split off */
    tkc_st st;
    if (e->nsrc || tkc_st_from_arg(&st, &e->arg) || st.nviews != 1 || st.views[0].has_mask) return false;
    out->b = st.views[0].strides[D->r];
    st.views[0].strides[D->r] = 0;
    bool other = st.views[0].offset_var;
    for (int d = 0; d < st.views[0].ndim; d++) other |= st.views[0].strides[d] != 0;
    out->a = other ? view_of(F, e, &st, 0, NULL) : st.views[0].offset ? tkc_uop_const_int(g, e->dtype, st.views[0].offset) : NULL;
    return !other || out->a;
  }
  case TKC_OP_ADD:
  case TKC_OP_SUB:
    if (!affine_of(F, D, e->src[0], &x) || !affine_of(F, D, e->src[1], &y)) return false;
    if (e->op == TKC_OP_SUB && y.a && !(y.a = neg(g, y.a))) return false;
    if (x.b < -(1 << 30) || x.b > (1 << 30) || y.b < -(1 << 30) || y.b > (1 << 30)) return false; /* (no overflow below) */
    *out = (affine){add_(g, x.a, y.a), e->op == TKC_OP_ADD ? x.b + y.b : x.b - y.b};
    return true;
  case TKC_OP_MUL: {
    int c = e->src[1]->op == TKC_OP_CONST && !e->src[1]->nsrc ? 1 : e->src[0]->op == TKC_OP_CONST && !e->src[0]->nsrc ? 0 : -1;
    if (c < 0 || !affine_of(F, D, e->src[1 - c], &x)) return false;
    int64_t k = tkc_uop_const_i(e->src[c]), b;
    if (__builtin_mul_overflow(x.b, k, &b)) return false;
    *out = (affine){x.a && k != 1 ? tkc_uop_alu2(g, TKC_OP_MUL, x.a, e->src[c]) : k ? x.a : NULL, b};
    return true;
  }
  case TKC_OP_NEG:
    if (!affine_of(F, D, e->src[0], &x) || x.b == INT64_MIN) return false;
    if (x.a && !(x.a = neg(g, x.a))) return false;
    *out = (affine){x.a, -x.b};
    return true;
  case TKC_OP_CAST: /* int -> an int at least as wide: exact, or modular at the same width */
    if (!is_int(e->src[0]->dtype) || tkc_dt_itemsize(e->dtype) < tkc_dt_itemsize(e->src[0]->dtype) || !affine_of(F, D, e->src[0], &x)) return false;
    *out = (affine){x.a ? tkc_uop_cast(g, x.a, e->dtype) : NULL, x.b};
    return true;
  default: return false;
  }
}

/* ---------------------------------------------------------------- the select: nonzero at one r */

typedef struct select {
  tkc_uop *at;   /* the r where the value can be nonzero, in the compare's dtype */
  tkc_uop *gate; /* at is in [0, N) */
  tkc_uop *cmp;  /* the compare that picks it ... */
  bool value;    /* ... and its value there */
} select_t;

/* p == a + r with p independent of r: at = p - a */
static bool eq_select(fold_ctx *F, dep *D, tkc_uop *p, tkc_uop *q, int64_t n, select_t *s) {
  tkc_graph *g = F->g;
  affine x;
  if (!is_int(p->dtype) || depends(D, p) || !affine_of(F, D, q, &x) || x.b != 1 || !fits(n, p->dtype)) return false;
  bool sign = !tkc_dt_is_unsigned(p->dtype);
  tkc_uop *at = x.a ? tkc_uop_alu2(g, TKC_OP_ADD, p, neg(g, x.a)) : p, *zero = zero_like(g, p);
  tkc_uop *gate = lt(g, at, tkc_uop_const_like_int(g, p, n));
  if (sign) gate = and_(g, not_(g, lt(g, at, zero)), gate);
  if (x.a) gate = and_(g, not_(g, lt(g, p, x.a)), gate); /* (p - a wrapping around) */
  s->at = at;
  s->gate = gate;
  return at && gate;
}

static bool find_select(fold_ctx *F, dep *D, tkc_uop *x, int64_t n, select_t *s) {
  if (!depends(D, x)) return false;
  switch (x->op) {
  case TKC_OP_CMPNE:
    if (is_true(x->src[1]) && x->src[0]->op == TKC_OP_CMPNE) { /* not(p != q): p == q */
      tkc_uop *ne = x->src[0];
      if (eq_select(F, D, ne->src[0], ne->src[1], n, s) || eq_select(F, D, ne->src[1], ne->src[0], n, s)) {
        s->cmp = x, s->value = true;
        return true;
      }
    }
    return false;
  case TKC_OP_WHERE:
    if (is_zero(x->src[2]) && find_select(F, D, x->src[0], n, s)) return true; /* where(p == q, v, 0) */
    if (is_zero(x->src[2]) && find_select(F, D, x->src[1], n, s)) return true; /* where(c, select, 0) */
    if (is_zero(x->src[1]) && x->src[0]->op == TKC_OP_CMPNE && !is_true(x->src[0]->src[1])) { /* where(p != q, 0, v) */
      tkc_uop *ne = x->src[0];
      if (eq_select(F, D, ne->src[0], ne->src[1], n, s) || eq_select(F, D, ne->src[1], ne->src[0], n, s)) {
        s->cmp = ne, s->value = false;
        return true;
      }
    }
    return false;
  case TKC_OP_CAST: /* 0 stays 0 */
  case TKC_OP_BITCAST: return find_select(F, D, x->src[0], n, s);
  case TKC_OP_MUL: /* 0 * v (tinygrad's index_collapse: v is taken finite) */
  case TKC_OP_AND: return find_select(F, D, x->src[0], n, s) || find_select(F, D, x->src[1], n, s);
  default: return false;
  }
}

/* ---------------------------------------------------------------- substitution: r := at */

typedef struct subst {
  fold_ctx *F;
  dep *D;
  const select_t *s;
  tkc_uop *at;                     /* the clamped index */
  tkc_uop *iota[TKC_MAX_DIMS];     /* the sources for the other dims */
  tkc_umap done;
} subst;

/* the index of kernel dim d (an arange VIEW, as the scheduler makes them) */
static tkc_uop *arange_of_dim(fold_ctx *F, int d) {
  tkc_st st;
  tkc_st_contiguous(&st, F->ndim, F->full);
  for (int i = 0; i < F->ndim; i++) st.views[0].strides[i] = i == d;
  return tkc_uop_new(F->g, TKC_OP_VIEW, tkc_dt_of(TKC_INT32), 0, NULL, tkc_st_to_arg(&st, F->storage, TKC_ST_ARGS));
}

/* u over the substituted sources src when the compare became a constant there: where(true, t, f) -> t,
 * cast(true or 1) -> 1, 1 * x -> x, true & x -> x (so no constant vector of the expander survives them) */
static tkc_uop *folded_const(tkc_graph *g, const tkc_uop *u, tkc_uop *const *src) {
  bool c0 = u->nsrc && src[0]->op == TKC_OP_CONST && !src[0]->nsrc, c1 = u->nsrc == 2 && src[1]->op == TKC_OP_CONST && !src[1]->nsrc;
  switch (u->op) {
  case TKC_OP_WHERE: return c0 ? (tkc_uop_const_i(src[0]) ? src[1] : src[2]) : NULL;
  case TKC_OP_CAST:
    if (!c0 || tkc_dt_is_float(src[0]->dtype) || (tkc_uop_const_i(src[0]) != 0 && tkc_uop_const_i(src[0]) != 1)) return NULL;
    return tkc_dt_is_float(u->dtype) ? tkc_uop_const_float(g, u->dtype, (double)tkc_uop_const_i(src[0])) : tkc_uop_const_int(g, u->dtype, tkc_uop_const_i(src[0]));
  case TKC_OP_MUL:
    for (int i = 0; i < 2; i++)
      if ((i ? c1 : c0) && (tkc_dt_is_float(src[i]->dtype) ? tkc_uop_const_f(src[i]) == 1.0 : tkc_uop_const_i(src[i]) == 1)) return src[1 - i];
    return NULL;
  case TKC_OP_AND:
    for (int i = 0; i < 2; i++)
      if ((i ? c1 : c0) && tkc_dt_is_bool(src[i]->dtype)) return tkc_uop_const_i(src[i]) ? src[1 - i] : src[i];
    return NULL;
  default: return NULL;
  }
}

static tkc_uop *subst_uop(subst *S, tkc_uop *u) {
  tkc_graph *g = S->F->g;
  if (u == S->s->cmp) return cbool(g, S->s->value);
  if (!depends(S->D, u)) return u;
  tkc_uop *done = tkc_umap_get(&S->done, u);
  if (done) return done;
  tkc_uop *src[TKC_MAX_DIMS > 8 ? TKC_MAX_DIMS : 8], *r = NULL;
  if (u->nsrc > (int)TKC_COUNTOF(src)) return tkc_err_null(TKC_EINTERNAL, "index folding: %s with %d sources", tkc_op_name((tkc_op)u->op), u->nsrc);
  if (u->op == TKC_OP_VIEW && !u->nsrc) { /* read at the kernel's indices but r's */
    for (int d = 0; d < S->F->ndim; d++) {
      if (d != S->D->r && !S->iota[d] && !(S->iota[d] = arange_of_dim(S->F, d))) return NULL;
      src[d] = d == S->D->r ? S->at : S->iota[d];
    }
    r = tkc_uop_new(g, TKC_OP_VIEW, u->dtype, S->F->ndim, src, u->arg);
  } else {
    for (int i = 0; i < u->nsrc; i++)
      if (!(src[i] = subst_uop(S, u->src[i]))) return NULL;
    r = folded_const(g, u, src);
    if (!r) r = tkc_uop_new(g, (tkc_op)u->op, u->dtype, u->nsrc, src, u->arg);
  }
  if (r && tkc_umap_put(&S->done, u, r)) return tkc_err_null(TKC_ENOMEM, "out of memory folding an index");
  return r;
}

/* ---------------------------------------------------------------- closed forms: counting compares */

/* The number of r in [0, n) where c holds, for c a compare of a + r or a - r (a a constant) with a
 * value independent of r, or its negation; NULL when c is not one. In c's operand dtype. */
static tkc_uop *count_of(fold_ctx *F, dep *D, tkc_uop *c, int64_t n) {
  tkc_graph *g = F->g;
  if (c->op == TKC_OP_CMPNE && is_true(c->src[1])) { /* not: n - count */
    tkc_uop *k = count_of(F, D, c->src[0], n);
    return k ? tkc_uop_alu2(g, TKC_OP_SUB, tkc_uop_const_like_int(g, k, n), k) : NULL;
  }
  if (c->op != TKC_OP_CMPLT && c->op != TKC_OP_CMPNE) return NULL;
  for (int side = 0; side < 2; side++) { /* side 0: (a +- r) OP v; 1: v OP (a +- r) */
    tkc_uop *e = c->src[side], *v = c->src[1 - side];
    affine x;
    if (!is_int(v->dtype) || depends(D, v) || !affine_of(F, D, e, &x) || (x.b != 1 && x.b != -1)) continue;
    if (x.a && (x.a->op != TKC_OP_CONST || x.a->nsrc)) continue;
    int64_t a = x.a ? tkc_uop_const_i(x.a) : 0;
    if (a < -((int64_t)1 << 62) || a > ((int64_t)1 << 62)) return NULL; /* (a - n, a + n below stay in int64) */
    if (c->op == TKC_OP_CMPNE) { /* a + r != v: n - (v hits one of a .. a + n - 1, or a - n + 1 .. a) */
      int64_t lo = x.b == 1 ? a : a - n + 1, hi = x.b == 1 ? a + n : a + 1;
      if (!fits(lo, v->dtype) || !fits(hi, v->dtype) || !fits(n, v->dtype)) return NULL;
      tkc_uop *hit = and_(g, not_(g, lt(g, v, tkc_uop_const_like_int(g, v, lo))), lt(g, v, tkc_uop_const_like_int(g, v, hi)));
      return where(g, hit, tkc_uop_const_like_int(g, v, n - 1), tkc_uop_const_like_int(g, v, n));
    }
    /* r < v - a (b 1, side 0), r > v - a (b 1, side 1), r > a - v (b -1, side 0), r < a - v (b -1, side 1):
     * clamp(v, lo, lo + n) - lo, or lo + n - clamp(v, lo, lo + n) */
    bool rising = side == 0;
    int64_t lo = x.b == 1 ? (side == 0 ? a : a - 1) : (side == 0 ? a + 1 - n : a - n);
    if (!fits(lo, v->dtype) || !fits(lo + n, v->dtype)) return NULL;
    tkc_uop *clo = tkc_uop_const_like_int(g, v, lo), *chi = tkc_uop_const_like_int(g, v, lo + n);
    tkc_uop *cl = where(g, lt(g, v, clo), clo, where(g, lt(g, chi, v), chi, v));
    return rising ? tkc_uop_alu2(g, TKC_OP_SUB, cl, clo) : tkc_uop_alu2(g, TKC_OP_SUB, chi, cl);
  }
  return NULL;
}

/* x == (cond ? k : 0) for every r, k independent of r (NULL: 1) */
static bool weight_of(fold_ctx *F, dep *D, tkc_uop *x, tkc_uop **cond, tkc_uop **k) {
  tkc_graph *g = F->g;
  switch (x->op) {
  case TKC_OP_WHERE:
    if (is_zero(x->src[2]) && !depends(D, x->src[1])) return *cond = x->src[0], *k = x->src[1], true;
    if (is_zero(x->src[1]) && !depends(D, x->src[2])) return (*cond = not_(g, x->src[0])) && (*k = x->src[2]);
    return false;
  case TKC_OP_CAST:
    if (tkc_dt_is_bool(x->src[0]->dtype)) return *cond = x->src[0], *k = NULL, true;
    if (!weight_of(F, D, x->src[0], cond, k)) return false;
    return !*k || (*k = tkc_uop_cast(g, *k, x->dtype)) != NULL;
  case TKC_OP_MUL:
    for (int i = 0; i < 2; i++) {
      if (depends(D, x->src[1 - i]) || !weight_of(F, D, x->src[i], cond, k)) continue;
      *k = *k ? tkc_uop_alu2(g, TKC_OP_MUL, *k, x->src[1 - i]) : x->src[1 - i];
      return *k != NULL;
    }
    return false;
  default: return false;
  }
}

/* ---------------------------------------------------------------- the rules */

static bool foldable_dim(const fold_ctx *F, int64_t r) { return r >= 0 && r < F->ndim && !F->var[r] && F->full[r] > 1; }

/* the reduce without axis r (its source then src), or src when r was its only axis */
static tkc_uop *reduce_rest(fold_ctx *F, tkc_uop *red, int r, tkc_uop *src) {
  const tkc_arg *axes = &red->arg.v.t[1];
  if (axes->n == 1 || !src) return src;
  tkc_arg rest[TKC_MAX_DIMS], parts[2] = {red->arg.v.t[0], {0}};
  uint32_t n = 0;
  for (uint32_t i = 0; i < axes->n && n < TKC_MAX_DIMS; i++)
    if (axes->v.t[i].v.i != r) rest[n++] = axes->v.t[i];
  parts[1] = tkc_arg_tuple(rest, n);
  return tkc_uop_new(F->g, TKC_OP_REDUCE_AXIS, red->dtype, 1, &src, tkc_arg_tuple(parts, 2));
}

static bool sum_reduce(const tkc_uop *red) {
  return red->arg.kind == TKC_ARG_TUPLE && red->arg.n == 2 && red->arg.v.t[0].v.i == TKC_OP_ADD && red->nsrc == 1;
}

/* sum_r where(I == a + r, V(r), 0) -> where(0 <= I - a < N, V(I - a), 0) */
static tkc_uop *fold_select(tkc_graph *g, const tkc_match *m, void *ctx) {
  fold_ctx *F = ctx;
  tkc_uop *red = tkc_match_root(m), *x = red->src[0], *out = NULL;
  if (!sum_reduce(red)) return NULL;
  const tkc_arg *axes = &red->arg.v.t[1];
  for (uint32_t i = 0; i < axes->n && !out; i++) {
    int r = (int)axes->v.t[i].v.i;
    if (!foldable_dim(F, r)) continue;
    dep D = {.r = r};
    select_t s;
    if (find_select(F, &D, x, F->full[r], &s)) {
      subst S = {.F = F, .D = &D, .s = &s, .at = where(g, s.gate, s.at, zero_like(g, s.at))};
      tkc_uop *v = S.at ? subst_uop(&S, x) : NULL;
      out = reduce_rest(F, red, r, where(g, s.gate, v, zero_like(g, x)));
      tkc_umap_free(&S.done);
    }
    tkc_umap_free(&D.seen);
  }
  return out;
}

/* sum_r (compare of a +- r with c ? k : 0) -> (the number of r where it holds) * k */
static tkc_uop *fold_count(tkc_graph *g, const tkc_match *m, void *ctx) {
  fold_ctx *F = ctx;
  tkc_uop *red = tkc_match_root(m), *x = red->src[0], *out = NULL;
  if (!sum_reduce(red) || (!is_int(x->dtype) && !tkc_dt_is_float(x->dtype))) return NULL;
  const tkc_arg *axes = &red->arg.v.t[1];
  for (uint32_t i = 0; i < axes->n && !out; i++) {
    int r = (int)axes->v.t[i].v.i;
    if (!foldable_dim(F, r)) continue;
    dep D = {.r = r};
    tkc_uop *cond, *k, *count;
    if (weight_of(F, &D, x, &cond, &k) && (count = count_of(F, &D, cond, F->full[r]))) {
      tkc_uop *v = tkc_uop_cast(g, count, x->dtype);
      if (k) v = tkc_uop_alu2(g, TKC_OP_MUL, v, k);
      if (k && tkc_dt_is_float(x->dtype)) v = where(g, lt(g, zero_like(g, count), count), v, zero_like(g, x)); /* 0 * inf: still 0 */
      out = reduce_rest(F, red, r, v);
    }
    tkc_umap_free(&D.seen);
  }
  return out;
}

static const tkc_rule fold_rules[] = {
    {"(REDUCE_AXIS _)", fold_select}, /* sum_r where(I == a + r, V(r), 0) -> where(0 <= I - a < N, V(I - a), 0) */
    {"(REDUCE_AXIS _)", fold_count},  /* sum_r where(a + r < c, k, 0) -> (clamp(c, a, a + N) - a) * k */
};

/* ---------------------------------------------------------------- dropping the folded dims */

/* a view read at the kernel's indices: dim r shrunk to its first entry */
static tkc_uop *shrink_view(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)g;
  fold_ctx *F = ctx;
  tkc_uop *v = tkc_match_root(m);
  tkc_st st;
  if (v->nsrc || tkc_st_from_arg(&st, &v->arg) || tkc_st_ndim(&st) != F->ndim) return NULL;
  const int64_t *shape = tkc_st_shape(&st);
  int64_t ranges[2 * TKC_MAX_DIMS];
  bool any = false;
  for (int d = 0; d < F->ndim; d++) {
    ranges[2 * d] = 0;
    ranges[2 * d + 1] = F->shrink[d] && shape[d] > 1 ? 1 : shape[d];
    any |= ranges[2 * d + 1] != shape[d];
  }
  if (!any || tkc_st_shrink(&st, ranges, NULL)) return NULL;
  return view_of(F, v, &st, 0, NULL);
}

/* the kernel's full shape with those dims 1 */
static tkc_uop *shrink_sink(tkc_graph *g, const tkc_match *m, void *ctx) {
  fold_ctx *F = ctx;
  tkc_uop *sink = tkc_match_root(m);
  if (sink->arg.kind != TKC_ARG_TUPLE || sink->arg.n != 2 || sink->arg.v.t[1].n != (uint32_t)F->ndim) return NULL;
  tkc_arg full[TKC_MAX_DIMS], parts[2] = {sink->arg.v.t[0], {0}};
  bool any = false;
  for (int d = 0; d < F->ndim; d++) {
    full[d] = sink->arg.v.t[1].v.t[d];
    if (F->shrink[d] && !(full[d].kind == TKC_ARG_INT && full[d].v.i == 1)) full[d] = tkc_arg_int(1), any = true;
  }
  if (!any) return NULL;
  parts[1] = tkc_arg_tuple(full, (uint32_t)F->ndim);
  return tkc_uop_new(g, TKC_OP_SINK, sink->dtype, sink->nsrc, sink->src, tkc_arg_tuple(parts, 2));
}

static const tkc_rule shrink_rules[] = {
    {"VIEW", shrink_view},
    {"SINK", shrink_sink},
};

/* ---------------------------------------------------------------- the stage */

static int kernel_shape(const tkc_uop *ast, fold_ctx *F) {
  if (ast->op != TKC_OP_SINK || ast->arg.kind != TKC_ARG_TUPLE || ast->arg.n != 2) return -1;
  const tkc_arg *out = &ast->arg.v.t[0], *full = &ast->arg.v.t[1];
  if (out->kind != TKC_ARG_TUPLE || full->kind != TKC_ARG_TUPLE || out->n != full->n || full->n > TKC_MAX_DIMS) return -1;
  F->ndim = (int)full->n;
  for (int d = 0; d < F->ndim; d++) {
    const tkc_arg *x = &full->v.t[d];
    F->var[d] = x->kind != TKC_ARG_INT || out->v.t[d].kind != TKC_ARG_INT;
    if (x->kind == TKC_ARG_INT) F->full[d] = x->v.i;
    else if (x->kind == TKC_ARG_TUPLE && x->n == 4) F->full[d] = x->v.t[2].v.i + x->v.t[3].v.i; /* (name, min, max, c): at max */
    else return -1;
  }
  return 0;
}

/* the reduce dims (out 1, full > 1) that no REDUCE_AXIS reduces and no plain view reads any more */
static bool dims_to_drop(fold_ctx *F, const tkc_uop *ast) {
  size_t n;
  tkc_uop **order = tkc_toposort(ast, &n);
  if (!order) return false;
  const tkc_arg *out = &ast->arg.v.t[0];
  bool any = false;
  for (int d = 0; d < F->ndim; d++) {
    F->shrink[d] = !F->var[d] && F->full[d] > 1 && out->v.t[d].kind == TKC_ARG_INT && out->v.t[d].v.i == 1;
    for (size_t i = 0; i < n && F->shrink[d]; i++) /* (a plain view still reading the dim: left as it is) */
      if (reduces_dim(order[i], d) || (order[i]->op == TKC_OP_VIEW && !order[i]->nsrc && view_uses_dim(order[i], d))) F->shrink[d] = false;
    any |= F->shrink[d];
  }
  tkc_free(order);
  return any;
}

tkc_uop *tkc_fold_indices(tkc_graph *g, tkc_uop *ast) {
  static tkc_matcher *_Atomic fold_pm, *_Atomic shrink_pm;
  fold_ctx F = {.g = g};
  if (!ast || kernel_shape(ast, &F)) return ast; /* not a kernel AST: nothing to fold */
  bool reduces = false;
  for (int d = 0; d < F.ndim; d++) reduces |= foldable_dim(&F, d);
  if (!reduces) return ast;
  const tkc_matcher *fold = tkc_matcher_static(&fold_pm, fold_rules, TKC_COUNTOF(fold_rules));
  const tkc_matcher *shrink = tkc_matcher_static(&shrink_pm, shrink_rules, TKC_COUNTOF(shrink_rules));
  if (!fold || !shrink) return NULL;
  if (!(F.storage = tkc_malloc(TKC_ST_ARGS * sizeof *F.storage))) return tkc_err_null(TKC_ENOMEM, "out of memory folding indices");
  tkc_uop *folded = tkc_graph_rewrite(g, ast, fold, &F);
  if (folded && folded != ast && dims_to_drop(&F, folded)) folded = tkc_graph_rewrite(g, folded, shrink, &F);
  tkc_free(F.storage);
  return folded;
}
