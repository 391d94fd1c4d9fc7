/* Gradients as a rule table (tinygrad's gradient.py, pm_gradient): one row per lazy node kind (and
 * ALU op) giving each source's gradient from the output's. Composites (matmul, softmax, layer_norm,
 * ...) get theirs through their decomposition into these nodes, with no row of their own.
 *
 * The walk (tkc_lazy_gradient) visits only the nodes between the root and the targets, parents
 * before children, summing where a node has several users. A node that was realized kept its recipe
 * (lazy.c): the walk goes through the recipe, and rules read the node itself for the output's value.
 * Lazy nodes are never merged (no hash-consing), so two equal leaves stay two (tinygrad#9597). */
#include <math.h>
#include <string.h>
#include "autograd/gradient.h"
#include "graph/tensor_internal.h"
#include "tkc/ops_nn.h"

/* ---------------------------------------------------------------- building gradient nodes */

/* every node a walk builds is kept here (one reference each) and released at the end */
typedef struct gctx {
  tkc_lazy **made;
  size_t n, cap;
  int failed;
} gctx;

static tkc_lazy *keep(gctx *c, tkc_lazy *x) {
  if (!x) {
    c->failed = 1;
    return NULL;
  }
  if (c->n == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 256;
    tkc_lazy **m = tkc_realloc(c->made, cap * sizeof *m);
    if (!m) {
      tkc_lazy_unref(x);
      c->failed = 1;
      return tkc_err_null(TKC_ENOMEM, "out of memory building gradients");
    }
    c->made = m, c->cap = cap;
  }
  return c->made[c->n++] = x;
}

static tkc_lazy *konst(gctx *c, const tkc_lazy *like, double v) {
  return like ? keep(c, tkc_lz_const(like->ctx, like->dtype, v, like->ndim, like->shape)) : NULL;
}
static tkc_lazy *alu(gctx *c, tkc_op op, tkc_lazy *a, tkc_lazy *b, tkc_lazy *d) {
  tkc_lazy *s[3] = {a, b, d};
  int n = d ? 3 : b ? 2 : 1;
  for (int i = 0; i < n; i++)
    if (!s[i]) return c->failed = 1, NULL;
  return keep(c, n == 1 ? tkc_lz_unary(op, a) : tkc_lz_alu(op, n, s));
}
#define ADD(a, b) alu(c, TKC_OP_ADD, a, b, NULL)
#define MUL(a, b) alu(c, TKC_OP_MUL, a, b, NULL)
#define DIV(a, b) alu(c, TKC_OP_FDIV, a, b, NULL)
#define NEG(a) alu(c, TKC_OP_NEG, a, NULL, NULL)
#define WHERE(x, a, b) alu(c, TKC_OP_WHERE, x, a, b)
#define NE(a, b) alu(c, TKC_OP_CMPNE, a, b, NULL)
#define LT(a, b) alu(c, TKC_OP_CMPLT, a, b, NULL)
#define K(like, v) konst(c, like, v)

static tkc_lazy *cast(gctx *c, tkc_lazy *a, tkc_dtype dt) { return a ? keep(c, tkc_lz_cast(a, dt, 0)) : NULL; }
static tkc_lazy *move_to(gctx *c, tkc_lazy *a, int op, const int64_t *arg, int narg, int ndim, const int64_t *shape) {
  return a ? keep(c, tkc_lz_move(a, op, arg, narg, ndim, shape)) : NULL;
}
static tkc_lazy *move(gctx *c, tkc_lazy *a, int op, const int64_t *arg, int narg, const tkc_lazy *like) {
  return move_to(c, a, op, arg, narg, like->ndim, like->shape);
}

/* sum of a over the axes in mask (keepdim), accumulated in float32 for the half types */
static tkc_lazy *sum_axes(gctx *c, tkc_lazy *a, const int *mask) {
  if (!a) return NULL;
  bool half = a->dtype == TKC_FLOAT16 || a->dtype == TKC_BFLOAT16;
  tkc_lazy *x = half ? cast(c, a, TKC_FLOAT32) : a;
  tkc_lazy *s = x ? keep(c, tkc_lz_reduce(x, TKC_OP_ADD, mask)) : NULL;
  return half ? cast(c, s, a->dtype) : s;
}

/* ---------------------------------------------------------------- the rules
 * r: the node as computed (kind, op, arg, src; a realized node's recipe); out: its value; g: the
 * gradient of the output. Each fills gs[i] for the sources that get one (NULL: none). */

typedef struct grule_in {
  const tkc_lazy *r;
  tkc_lazy *out, *g, *const *src;
} grule_in;
typedef int (*grule_fn)(gctx *c, const grule_in *in, tkc_lazy **gs);

#define G (in->g)
#define OUT (in->out)
#define X (in->src[0])
#define Y (in->src[1])

static int g_add(gctx *c, const grule_in *in, tkc_lazy **gs) { (void)c; gs[0] = gs[1] = G; return 0; }
static int g_sub(gctx *c, const grule_in *in, tkc_lazy **gs) { gs[0] = G, gs[1] = NEG(G); return 0; }
static int g_mul(gctx *c, const grule_in *in, tkc_lazy **gs) { gs[0] = MUL(G, Y), gs[1] = MUL(G, X); return 0; }
static int g_mulacc(gctx *c, const grule_in *in, tkc_lazy **gs) { gs[0] = MUL(G, Y), gs[1] = MUL(G, X), gs[2] = G; return 0; }
static int g_fdiv(gctx *c, const grule_in *in, tkc_lazy **gs) { gs[0] = DIV(G, Y), gs[1] = NEG(DIV(MUL(G, OUT), Y)); return 0; }
static int g_neg(gctx *c, const grule_in *in, tkc_lazy **gs) { gs[0] = NEG(G); return 0; }
static int g_recip(gctx *c, const grule_in *in, tkc_lazy **gs) { gs[0] = NEG(MUL(G, MUL(OUT, OUT))); return 0; }
static int g_sqrt(gctx *c, const grule_in *in, tkc_lazy **gs) { gs[0] = DIV(G, MUL(OUT, K(OUT, 2))); return 0; }
static int g_exp2(gctx *c, const grule_in *in, tkc_lazy **gs) { gs[0] = MUL(G, MUL(OUT, K(OUT, M_LN2))); return 0; }
static int g_log2(gctx *c, const grule_in *in, tkc_lazy **gs) { gs[0] = DIV(G, MUL(X, K(X, M_LN2))); return 0; }
/* d sin(x) = sin(pi/2 - x) */
static int g_sin(gctx *c, const grule_in *in, tkc_lazy **gs) {
  gs[0] = MUL(G, alu(c, TKC_OP_SIN, alu(c, TKC_OP_SUB, K(X, M_PI / 2), X, NULL), NULL, NULL));
  return 0;
}
/* MAX: the larger source gets it all; ties split it evenly (tinygrad) */
static int g_max(gctx *c, const grule_in *in, tkc_lazy **gs) {
  tkc_lazy *half = MUL(G, K(G, 0.5)), *tie = WHERE(NE(X, Y), K(G, 0), half);
  gs[0] = WHERE(LT(Y, X), G, tie), gs[1] = WHERE(LT(X, Y), G, tie);
  return 0;
}
/* POW(x, y): y x^(y-1) (y at 0^0) and x^y ln x (at x = 0: 0, or -inf for y < 0), as tinygrad */
static int g_pow(gctx *c, const grule_in *in, tkc_lazy **gs) {
  tkc_lazy *dx = MUL(Y, alu(c, TKC_OP_POW, X, alu(c, TKC_OP_SUB, Y, K(Y, 1), NULL), NULL));
  gs[0] = MUL(G, WHERE(NE(X, K(X, 0)), dx, WHERE(NE(Y, K(Y, 0)), dx, Y)));
  tkc_lazy *dy = MUL(OUT, MUL(alu(c, TKC_OP_LOG2, X, NULL, NULL), K(X, M_LN2)));
  gs[1] = MUL(G, WHERE(NE(X, K(X, 0)), dy, WHERE(LT(Y, K(Y, 0)), K(Y, -INFINITY), K(Y, 0))));
  return 0;
}
/* WHERE(c, a, b): none for the condition */
static int g_where(gctx *c, const grule_in *in, tkc_lazy **gs) {
  tkc_lazy *zero = K(G, 0);
  gs[1] = WHERE(X, G, zero), gs[2] = WHERE(X, zero, G);
  return 0;
}
static int g_none(gctx *c, const grule_in *in, tkc_lazy **gs) { (void)c, (void)in, (void)gs; return 0; }
static int g_pass(gctx *c, const grule_in *in, tkc_lazy **gs) { (void)c; gs[0] = G; return 0; }
static int g_cast(gctx *c, const grule_in *in, tkc_lazy **gs) {
  if (tkc_dtype_is_float(X->dtype)) gs[0] = cast(c, G, X->dtype);
  return 0;
}

/* REDUCE sum: the output's gradient expanded back; max: to the positions of the maximum, ties split
 * evenly (the tie count in float32, also for the half types) */
static int g_reduce(gctx *c, const grule_in *in, tkc_lazy **gs) {
  if (in->r->op == TKC_OP_ADD) {
    gs[0] = G ? keep(c, tkc_lz_broadcast(G, X->ndim, X->shape)) : NULL;
    return 0;
  }
  if (in->r->op != TKC_OP_MAX) return tkc_err(TKC_EUNSUPPORTED, "gradient: no rule for a %s reduction", tkc_op_name((tkc_op)in->r->op)), -1;
  int mask[TKC_MAX_DIMS];
  for (int i = 0; i < X->ndim; i++) mask[i] = (int)in->r->arg[i];
  tkc_lazy *at_max = NE(X, keep(c, tkc_lz_broadcast(OUT, X->ndim, X->shape)));
  tkc_lazy *one = at_max ? keep(c, tkc_lz_const(X->ctx, TKC_FLOAT32, 1, X->ndim, X->shape)) : NULL;
  tkc_lazy *hit = WHERE(at_max, K(one, 0), one), *count = hit ? keep(c, tkc_lz_reduce(hit, TKC_OP_ADD, mask)) : NULL;
  tkc_lazy *share = DIV(cast(c, G, TKC_FLOAT32), count);
  tkc_lazy *spread = share ? MUL(hit, keep(c, tkc_lz_broadcast(share, X->ndim, X->shape))) : NULL;
  gs[0] = cast(c, spread, X->dtype);
  return 0;
}

/* the sum of t[0..n) as a balanced tree (shallow graphs for long windows) */
static tkc_lazy *tree_sum(gctx *c, tkc_lazy **t, int n) {
  if (n == 1) return t[0];
  return ADD(tree_sum(c, t, n / 2), tree_sum(c, t + n / 2, n - n / 2));
}

/* g (..., O, K) with x[o*s + k] read at (o, k) -> (..., n): d[j] = sum over o of g[o, j - o*s], by
 * the skew of a flat view: each row padded to L = K + O*s and read back in rows of L - s starts
 * row o o*s places later; a sum over o then collects the anti-diagonals. A loop of O per element
 * where the shifted terms of window_grad would unroll K of them. */
static tkc_lazy *skew_sum(gctx *c, tkc_lazy *g, int64_t s, int64_t n) {
  int nd = g->ndim, lead = nd - 2;
  int64_t O = g->shape[lead], K = g->shape[lead + 1], L = K + O * s, sh[TKC_MAX_DIMS], arg[2 * TKC_MAX_DIMS] = {0};
  memcpy(sh, g->shape, sizeof(int64_t) * (size_t)nd);
  tkc_lazy *t;
  if (O == 1) { /* one window: its elements in place */
    L = K + s, sh[lead] = K;
    t = move_to(c, g, TKC_OP_RESHAPE, NULL, 0, lead + 1, sh);
  } else {
    arg[2 * lead + 3] = O * s, sh[lead + 1] = L;
    t = move_to(c, g, TKC_OP_PAD, arg, 2 * nd, nd, sh);
    sh[lead] = O * L;
    t = move_to(c, t, TKC_OP_RESHAPE, NULL, 0, lead + 1, sh);
    for (int d = 0; d < lead; d++) arg[2 * d] = 0, arg[2 * d + 1] = sh[d];
    arg[2 * lead] = 0, arg[2 * lead + 1] = O * (L - s), sh[lead] = O * (L - s);
    t = move_to(c, t, TKC_OP_SHRINK, arg, 2 * (lead + 1), lead + 1, sh);
    sh[lead] = O, sh[lead + 1] = L - s;
    t = move_to(c, t, TKC_OP_RESHAPE, NULL, 0, nd, sh);
    int mask[TKC_MAX_DIMS] = {0};
    mask[lead] = 1;
    t = sum_axes(c, t, mask); /* (..., 1, L - s) */
    sh[lead] = L - s;
    t = move_to(c, t, TKC_OP_RESHAPE, NULL, 0, lead + 1, sh);
  }
  if (!t || L - s == n) return t;
  for (int d = 0; d < lead; d++) arg[2 * d] = 0, arg[2 * d + 1] = sh[d];
  sh[lead] = n;
  if (L - s > n) { /* the last windows' tails past n: none (windows fit) */
    arg[2 * lead] = 0, arg[2 * lead + 1] = n;
    return move_to(c, t, TKC_OP_SHRINK, arg, 2 * (lead + 1), lead + 1, sh);
  }
  for (int d = 0; d < 2 * lead; d++) arg[d] = 0;
  arg[2 * lead] = 0, arg[2 * lead + 1] = n - (L - s); /* elements no window reads */
  return move_to(c, t, TKC_OP_PAD, arg, 2 * (lead + 1), lead + 1, sh);
}

/* the permutation of g's dims that puts dims a, b last (in that order), the rest kept in order */
static tkc_lazy *to_last(gctx *c, tkc_lazy *g, int a, int b) {
  int64_t perm[TKC_MAX_DIMS], sh[TKC_MAX_DIMS];
  int k = 0;
  for (int d = 0; d < g->ndim; d++)
    if (d != a && d != b) perm[k++] = d;
  perm[k++] = a, perm[k++] = b;
  for (int d = 0; d < g->ndim; d++) sh[d] = g->shape[perm[d]];
  return move_to(c, g, TKC_OP_PERMUTE, perm, g->ndim, g->ndim, sh);
}

/* a large window's gradient (a scan's): one skew_sum per axis, W then H */
static tkc_lazy *window_grad_skew(gctx *c, tkc_lazy *g, const tkc_lazy *x, int64_t s) {
  int nd = x->ndim, lead = nd - 2; /* g: (lead..., OH, OW, KH, KW) */
  tkc_lazy *t = to_last(c, g, lead + 1, lead + 3); /* (lead..., OH, KH, OW, KW) */
  t = t ? skew_sum(c, t, s, x->shape[nd - 1]) : NULL; /* (lead..., OH, KH, W) */
  t = t ? to_last(c, t, lead, lead + 1) : NULL;       /* (lead..., W, OH, KH) */
  t = t ? skew_sum(c, t, s, x->shape[nd - 2]) : NULL; /* (lead..., W, H) */
  if (!t) return NULL;
  int64_t perm[TKC_MAX_DIMS];
  for (int d = 0; d < lead; d++) perm[d] = d;
  perm[lead] = lead + 1, perm[lead + 1] = lead;
  return move_to(c, t, TKC_OP_PERMUTE, perm, nd, nd, x->shape);
}

/* WINDOW (..., H, W) -> (..., OH, OW, KH, KW), stride s: x[..., oh*s + i, ow*s + j] is read by
 * window (oh, ow) at (i, j), so its gradient is the sum over (i, j) of g[..., :, :, i, j] spread
 * out by the stride and placed at offset (i, j) */
static tkc_lazy *window_grad(gctx *c, tkc_lazy *g, const tkc_lazy *x, int64_t kh, int64_t kw, int64_t s) {
  int nd = x->ndim, lead = nd - 2;
  int64_t H = x->shape[nd - 2], W = x->shape[nd - 1], OH = g->shape[lead], OW = g->shape[lead + 1];
  if (kh * kw > 32) return window_grad_skew(c, g, x, s); /* unrolled terms would make one huge kernel */
  if (kh * kw > 1) { /* every term reads g: computed once into a buffer, not once per term */
    tkc_lazy *gc = tkc_lazy_new(g->ctx, TKC_LZ_CONTIGUOUS, g->dtype, g->ndim, g->shape);
    if (gc) tkc_lazy_set_src(gc, 0, g);
    if (!(g = keep(c, gc))) return NULL;
  }
  tkc_lazy **terms = tkc_calloc((size_t)(kh * kw), sizeof *terms);
  if (!terms) return c->failed = 1, tkc_err_null(TKC_ENOMEM, "out of memory building gradients");
  int64_t sh[TKC_MAX_DIMS + 2], arg[2 * (TKC_MAX_DIMS + 2)];
  for (int64_t i = 0; i < kh; i++)
    for (int64_t j = 0; j < kw; j++) {
      /* g[..., :, :, i, j] as (..., OH, 1, OW, 1) */
      for (int d = 0; d < lead + 2; d++) arg[2 * d] = 0, arg[2 * d + 1] = g->shape[d];
      arg[2 * lead + 4] = i, arg[2 * lead + 5] = i + 1, arg[2 * lead + 6] = j, arg[2 * lead + 7] = j + 1;
      memcpy(sh, g->shape, sizeof(int64_t) * (size_t)lead);
      sh[lead] = OH, sh[lead + 1] = OW, sh[lead + 2] = 1, sh[lead + 3] = 1;
      tkc_lazy *t = move_to(c, g, TKC_OP_SHRINK, arg, 2 * (lead + 4), lead + 4, sh);
      sh[lead] = OH, sh[lead + 1] = 1, sh[lead + 2] = OW, sh[lead + 3] = 1;
      t = move_to(c, t, TKC_OP_RESHAPE, NULL, 0, lead + 4, sh);
      /* spread by the stride: (..., OH, s, OW, s), then (..., OH*s, OW*s) cut to (OH-1)*s+1 rows/cols */
      for (int d = 0; d < 2 * (lead + 4); d++) arg[d] = 0;
      arg[2 * lead + 3] = s - 1, arg[2 * lead + 7] = s - 1;
      sh[lead + 1] = s, sh[lead + 3] = s;
      t = move_to(c, t, TKC_OP_PAD, arg, 2 * (lead + 4), lead + 4, sh);
      sh[lead] = OH * s, sh[lead + 1] = OW * s;
      t = move_to(c, t, TKC_OP_RESHAPE, NULL, 0, lead + 2, sh);
      int64_t rh = (OH - 1) * s + 1, rw = (OW - 1) * s + 1;
      for (int d = 0; d < lead; d++) arg[2 * d] = 0, arg[2 * d + 1] = sh[d];
      arg[2 * lead] = 0, arg[2 * lead + 1] = rh, arg[2 * lead + 2] = 0, arg[2 * lead + 3] = rw;
      sh[lead] = rh, sh[lead + 1] = rw;
      t = move_to(c, t, TKC_OP_SHRINK, arg, 2 * (lead + 2), lead + 2, sh);
      /* at offset (i, j) of (H, W) */
      for (int d = 0; d < 2 * lead; d++) arg[d] = 0;
      arg[2 * lead] = i, arg[2 * lead + 1] = H - i - rh, arg[2 * lead + 2] = j, arg[2 * lead + 3] = W - j - rw;
      terms[i * kw + j] = move_to(c, t, TKC_OP_PAD, arg, 2 * (lead + 2), nd, x->shape);
    }
  tkc_lazy *sum = c->failed ? NULL : tree_sum(c, terms, (int)(kh * kw));
  tkc_free(terms);
  return sum;
}

/* ---------------------------------------------------------------- composites by their own rules */

/* a node as a temporary handle for the tensor API (its own reference) */
static tkc_tensor *handle(tkc_lazy *n) {
  tkc_lazy_ref(n);
  return tkc_wrap(n->ctx, n);
}
/* the node of t (a result of the tensor API), kept for the walk; frees the handles in tmp */
static tkc_lazy *take(gctx *c, tkc_tensor *t, tkc_tensor **tmp, int ntmp) {
  tkc_lazy *n = t ? t->node : NULL;
  if (n) tkc_lazy_ref(n);
  tkc_tensor_free(t);
  for (int i = 0; i < ntmp; i++) tkc_tensor_free(tmp[i]);
  return keep(c, n);
}

/* tkc_conv2d (x (N,C,H,W), w (O,C,KH,KW), stride s, padding p). Through the decomposition dx is a
 * (N,C,OH,OW,KH,KW) product summed over O and then shifted KH*KW ways, dw a reduce over strided
 * axes. dx as a convolution gets the forward conv's register tiles:
 *   dx = conv_transpose2d(g, w), stride s, pad p, output_padding the rows the forward's floor left
 * dw (conv_weight_grad) is a matmul per image, x's windows against g, with both channel-last. */

/* temporaries of conv_weight_grad, freed together */
typedef struct {
  tkc_tensor *t[24];
  int n;
} tlist;
static void drop_list(tlist *l) {
  for (int i = 0; i < l->n; i++) tkc_tensor_free(l->t[i]);
}
static tkc_tensor *tl(tlist *l, tkc_tensor *t) {
  if (t && l->n < 24) l->t[l->n++] = t;
  else if (t) tkc_tensor_free(t), t = NULL;
  return t;
}
#define TL(e) tl(&tl_, (e))

/* dw (O, C, KH, KW) of conv2d(x (N,C,H,W), w, stride s, padding p) from g (N,O,OH,OW) in a buffer,
 * in float32 for the half types (their operands widened first):
 *   dw[o,c,i,j] = sum over n of ( sum over (oh,ow) of g[n,o,oh,ow] * xpad[n,c,oh*s+i,ow*s+j] )
 * Per image n and tap (i,j) the inner sum is a matmul (O x OH*OW) @ (OH*OW x C). The operand of the
 * vector axis B (C or O, chosen below) is copied channel-last, (N,OH,OW,O) or padded (N,HP,WP,C): the
 * product (A, N, KH, KW, B, OH, OW) has an output axis one load reads contiguously and the other
 * broadcasts: the heuristics give it the matmul register tile (vectors along B, rows of A; the
 * other operand read in place, one scalar per row). The B panel is the outer loop and the images
 * the next, so each image's slices stay in cache across its taps and rows; the per-image partials
 * are then summed over N (a single reduce over (N,OH,OW) per tile would stream all of x and g from
 * memory once per tile). As a conv of x^T (C,N,H,W) by g^T (O,N,OH,OW) - the batch as channels
 * and a kernel the size of the output - it was 7-10x slower: its reduce had no such axis. */
static tkc_tensor *conv_weight_grad(tkc_tensor *x, tkc_tensor *g, int64_t kh, int64_t kw, int s, int p) {
  tlist tl_ = {0};
  const tkc_lazy *xn = x->node, *gn = g->node;
  int64_t nb = xn->shape[0], ci = xn->shape[1], o = gn->shape[1], oh = gn->shape[2], ow = gn->shape[3];
  bool half = xn->dtype == TKC_FLOAT16 || xn->dtype == TKC_BFLOAT16 || gn->dtype == TKC_FLOAT16 || gn->dtype == TKC_BFLOAT16;
  tkc_tensor *xa = half ? TL(tkc_cast(x, TKC_FLOAT32)) : x, *ga = half ? TL(tkc_cast(g, TKC_FLOAT32)) : g;
  /* x padded (channel-last in memory when C is the vector axis), then its windows (N, C, OH, OW, KH, KW) */
  tkc_tensor *xp = p ? TL(tkc_pad(xa, (const int64_t[]){0, 0, 0, 0, p, p, p, p}, 0)) : xa;
  /* the vector axis B: one that whole vectors divide (16 lanes: AVX-512 float32), C when x is padded
   * (its copy is then padded once, where x read in place would check bounds per row and tap: 4x
   * slower at 5x5 pad 2), else the wider */
  bool c16 = ci % 16 == 0, o16 = o % 16 == 0;
  bool cvec = c16 ? (!o16 || p > 0 || ci >= o) : (!o16 && ci >= o);
  tkc_tensor *xv = xp;
  if (cvec) {
    tkc_tensor *xl = TL(tkc_contiguous(TL(tkc_permute(xp, (const int[]){0, 2, 3, 1}))));
    xv = TL(tkc_permute(xl, (const int[]){0, 3, 1, 2}));
  }
  tkc_tensor *win = NULL;
  if (xv) {
    const tkc_lazy *v = xv->node;
    int64_t wshape[6] = {nb, ci, (v->shape[2] - kh) / s + 1, (v->shape[3] - kw) / s + 1, kh, kw}, arg[3] = {kh, kw, s};
    if (wshape[2] != oh || wshape[3] != ow) {
      drop_list(&tl_);
      return tkc_err_null(TKC_ESHAPE, "conv2d gradient: the windows (%lldx%lld) do not match g %s", (long long)wshape[2], (long long)wshape[3], TKC_NODE_SHAPE(gn));
    }
    win = TL(tkc_wrap(xv->ctx, tkc_lz_move(xv->node, TKC_MOVE_WINDOW, arg, 3, 6, wshape)));
  }
  /* g (channel-last in memory when O is the vector axis) */
  tkc_tensor *gv = ga;
  if (!cvec) {
    tkc_tensor *gl = TL(tkc_contiguous(TL(tkc_permute(ga, (const int[]){0, 2, 3, 1}))));
    gv = TL(tkc_permute(gl, (const int[]){0, 3, 1, 2}));
  }
  /* the product (A, N, KH, KW, B, OH, OW): B the vector axis (the wider of C, O), A the rows */
  tkc_tensor *xw = TL(tkc_permute(win, cvec ? (const int[]){0, 4, 5, 1, 2, 3} : (const int[]){1, 0, 4, 5, 2, 3}));
  tkc_tensor *x7 = TL(tkc_reshape(xw, 7, cvec ? (const int64_t[]){1, nb, kh, kw, ci, oh, ow} : (const int64_t[]){ci, nb, kh, kw, 1, oh, ow}));
  tkc_tensor *gp = cvec ? TL(tkc_permute(gv, (const int[]){1, 0, 2, 3})) : gv;
  tkc_tensor *g7 = TL(tkc_reshape(gp, 7, cvec ? (const int64_t[]){o, nb, 1, 1, 1, oh, ow} : (const int64_t[]){1, nb, 1, 1, o, oh, ow}));
  tkc_tensor *prod = x7 && g7 ? TL(tkc_mul(x7, g7)) : NULL;
  /* per image, then over the images: reduces of their own (tkc_sum would split the first one
   * across the images, into partials in another order). The partials kept under 2^22 elements (as
   * tinygrad's split_reduceop): past that, groups of nc images per partial */
  int64_t wsize = o * ci * kh * kw, ng = nb > 1 ? nb : 1; /* (empty shapes: one group) */
  while (ng > 1 && (nb % ng || ng > ((int64_t)1 << 22) / (wsize ? wsize : 1))) ng--;
  int64_t nc = nb / ng, a = cvec ? o : ci, bv = cvec ? ci : o;
  tkc_tensor *p8 = TL(tkc_reshape(prod, 8, (const int64_t[]){a, ng, nc, kh, kw, bv, oh, ow}));
  tkc_tensor *q8 = TL(tkc_permute(p8, (const int[]){0, 1, 3, 4, 5, 2, 6, 7})); /* (A, NG, KH, KW, B, NC, OH, OW) */
  tkc_lazy *part = q8 ? tkc_lz_reduce(q8->node, TKC_OP_ADD, (const int[]){0, 0, 0, 0, 0, 1, 1, 1}) : NULL;
  tkc_tensor *pt = part ? TL(tkc_wrap(prod->ctx, part)) : NULL;
  tkc_lazy *all = pt && ng > 1 ? tkc_lz_reduce(pt->node, TKC_OP_ADD, (const int[]){0, 1, 0, 0, 0, 0, 0, 0}) : NULL;
  tkc_tensor *at = ng == 1 ? pt : all ? TL(tkc_wrap(prod->ctx, all)) : NULL;
  tkc_tensor *a4 = TL(tkc_reshape(at, 4, cvec ? (const int64_t[]){o, kh, kw, ci} : (const int64_t[]){ci, kh, kw, o}));
  tkc_tensor *dw = a4 ? tkc_permute(a4, cvec ? (const int[]){0, 3, 1, 2} : (const int[]){3, 0, 1, 2}) : NULL;
  drop_list(&tl_);
  return dw;
}
#undef TL

static int g_conv2d(gctx *c, const grule_in *in, tkc_lazy **gs) {
  int s = (int)in->r->arg[0], p = (int)in->r->arg[1];
  const tkc_lazy *x = X, *w = Y;
  int64_t kh = w->shape[2], kw = w->shape[3];
  int opad[2] = {(int)(x->shape[2] + 2 * p - kh - (G->shape[2] - 1) * s), (int)(x->shape[3] + 2 * p - kw - (G->shape[3] - 1) * s)};
  tkc_tensor *t[5] = {handle(G), handle(X), handle(Y)};
  /* g in a buffer: both convolutions read each element KH*KW*channels times, and g is often an
   * expression (an activation's gradient) that would be recomputed for every read */
  t[4] = t[0], t[0] = t[0] ? tkc_contiguous(t[0]) : NULL;
  t[3] = t[0] && t[2] ? tkc_conv_transpose2d(t[0], t[2], NULL, (const int[]){s, s}, (const int[]){p, p}, opad, NULL, 1) : NULL;
  gs[0] = cast(c, take(c, t[3], NULL, 0), x->dtype);
  t[3] = NULL; /* (taken) */
  tkc_tensor *dw = t[1] && t[0] ? conv_weight_grad(t[1], t[0], kh, kw, s, p) : NULL;
  gs[1] = cast(c, take(c, dw, t, 5), w->dtype);
  return 0;
}

/* tkc_matmul of matrices (a (M, K) @ b (K, N)): dA = g b^T, dB = a^T g as matmuls. Through the
 * decomposition dB came out as (N, K) and was transposed back, and each was a reduce of its own. */
static int g_matmul(gctx *c, const grule_in *in, tkc_lazy **gs) {
  tkc_tensor *t[7] = {handle(G), handle(X), handle(Y)};
  t[3] = t[2] ? tkc_transpose(t[2], 0, 1) : NULL;
  t[4] = t[0] && t[3] ? tkc_matmul(t[0], t[3]) : NULL;
  gs[0] = cast(c, take(c, t[4], NULL, 0), X->dtype);
  t[4] = NULL; /* (taken) */
  t[5] = t[1] ? tkc_transpose(t[1], 0, 1) : NULL;
  t[6] = t[5] && t[0] ? tkc_matmul(t[5], t[0]) : NULL;
  gs[1] = cast(c, take(c, t[6], t, 6), Y->dtype);
  return 0;
}

/* movement ops by their inverse: RESHAPE back, PERMUTE by the inverse order, PAD <-> SHRINK, FLIP,
 * EXPAND -> a sum over the expanded axes */
static int g_move(gctx *c, const grule_in *in, tkc_lazy **gs) {
  const tkc_lazy *r = in->r;
  int nd = X->ndim;
  int64_t arg[2 * TKC_MAX_DIMS];
  for (int i = 0; i < nd; i++)
    if (tkc_dim_is_var(X->shape[i]) || (r->ndim > i && tkc_dim_is_var(r->shape[i])))
      return tkc_err(TKC_EUNSUPPORTED, "gradient: movement ops of variable-size dims are not differentiated yet"), -1;
  switch (r->op) {
  case TKC_OP_RESHAPE: gs[0] = move(c, G, TKC_OP_RESHAPE, NULL, 0, X); return 0;
  case TKC_OP_PERMUTE:
    for (int i = 0; i < nd; i++) arg[r->arg[i]] = i;
    gs[0] = move(c, G, TKC_OP_PERMUTE, arg, nd, X);
    return 0;
  case TKC_OP_FLIP: gs[0] = move(c, G, TKC_OP_FLIP, r->arg, nd, X); return 0;
  case TKC_OP_PAD: /* (before, after) per axis -> the range [before, before + n) */
    for (int i = 0; i < nd; i++) arg[2 * i] = r->arg[2 * i], arg[2 * i + 1] = r->arg[2 * i] + X->shape[i];
    gs[0] = move(c, G, TKC_OP_SHRINK, arg, 2 * nd, X);
    return 0;
  case TKC_OP_SHRINK: /* [start, end) -> pad (start, n - end) */
    for (int i = 0; i < nd; i++) arg[2 * i] = r->arg[2 * i], arg[2 * i + 1] = X->shape[i] - r->arg[2 * i + 1];
    gs[0] = move(c, G, TKC_OP_PAD, arg, 2 * nd, X);
    return 0;
  case TKC_OP_EXPAND: {
    int mask[TKC_MAX_DIMS];
    for (int i = 0; i < nd; i++) mask[i] = X->shape[i] != r->shape[i];
    gs[0] = sum_axes(c, G, mask);
    return 0;
  }
  case TKC_MOVE_WINDOW: gs[0] = window_grad(c, G, X, r->arg[0], r->arg[1], r->arg[2]); return 0;
  default: return tkc_err(TKC_EUNSUPPORTED, "gradient: no rule for movement op %d", r->op), -1;
  }
}

/* the table: a row per node kind, and per ALU op (op -1: every op of the kind) */
static const struct grule {
  tkc_lz_kind kind;
  int op;
  grule_fn fn;
} RULES[] = {
    {TKC_LZ_ALU, TKC_OP_ADD, g_add},       {TKC_LZ_ALU, TKC_OP_SUB, g_sub},       {TKC_LZ_ALU, TKC_OP_MUL, g_mul},
    {TKC_LZ_ALU, TKC_OP_MULACC, g_mulacc}, {TKC_LZ_ALU, TKC_OP_FDIV, g_fdiv},     {TKC_LZ_ALU, TKC_OP_NEG, g_neg},
    {TKC_LZ_ALU, TKC_OP_RECIP, g_recip},   {TKC_LZ_ALU, TKC_OP_SQRT, g_sqrt},     {TKC_LZ_ALU, TKC_OP_EXP2, g_exp2},
    {TKC_LZ_ALU, TKC_OP_LOG2, g_log2},     {TKC_LZ_ALU, TKC_OP_SIN, g_sin},       {TKC_LZ_ALU, TKC_OP_MAX, g_max},
    {TKC_LZ_ALU, TKC_OP_POW, g_pow},       {TKC_LZ_ALU, TKC_OP_WHERE, g_where},
    /* comparisons, integer and bitwise ops: no gradient */
    {TKC_LZ_ALU, TKC_OP_CMPLT, g_none},    {TKC_LZ_ALU, TKC_OP_CMPNE, g_none},    {TKC_LZ_ALU, TKC_OP_IDIV, g_none},
    {TKC_LZ_ALU, TKC_OP_MOD, g_none},      {TKC_LZ_ALU, TKC_OP_AND, g_none},      {TKC_LZ_ALU, TKC_OP_OR, g_none},
    {TKC_LZ_ALU, TKC_OP_XOR, g_none},      {TKC_LZ_ALU, TKC_OP_SHL, g_none},      {TKC_LZ_ALU, TKC_OP_SHR, g_none},
    {TKC_LZ_ALU, TKC_OP_THREEFRY, g_none},
    {TKC_LZ_CAST, -1, g_cast},             {TKC_LZ_BITCAST, -1, g_none},          {TKC_LZ_REDUCE, -1, g_reduce},
    {TKC_LZ_MOVE, -1, g_move},             {TKC_LZ_CONTIGUOUS, -1, g_pass},
    /* composites with rules of their own */
    {TKC_LZ_COMPOSITE, TKC_COMP_CONV2D, g_conv2d},  {TKC_LZ_COMPOSITE, TKC_COMP_MATMUL, g_matmul},
};

static grule_fn rule_for(const tkc_lazy *r) {
  for (size_t i = 0; i < TKC_COUNTOF(RULES); i++)
    if (RULES[i].kind == r->kind && (RULES[i].op < 0 || RULES[i].op == r->op)) return RULES[i].fn;
  return NULL;
}

/* ---------------------------------------------------------------- the walk */

/* how a node was computed: as a composite op, itself, or the recipe a realized one kept */
static const tkc_lazy *how(const tkc_lazy *n) { return n->composite ? n->composite : n->kind == TKC_LZ_BUFFER && n->recipe ? n->recipe : n; }
/* its sources for the walk: none past a tkc_detach */
static int nsrc_of(const tkc_lazy *n) { return n->detached ? 0 : how(n)->nsrc; }

/* the nodes under root, children before parents, in a pointer -> position table */
typedef struct walk {
  tkc_lazy **order;
  size_t n, cap;
  tkc_lazy **keys; /* open addressing */
  size_t *pos, nkeys;
} walk;

static size_t slot_of(const walk *w, const tkc_lazy *x) {
  size_t h = (size_t)(((uintptr_t)x >> 4) * 0x9E3779B97F4A7C15ull) & (w->nkeys - 1);
  while (w->keys[h] && w->keys[h] != x) h = (h + 1) & (w->nkeys - 1);
  return h;
}
static long find(const walk *w, const tkc_lazy *x) {
  size_t h = slot_of(w, x);
  return w->keys[h] ? (long)w->pos[h] : -1;
}
static int add_node(walk *w, tkc_lazy *x) {
  if (2 * (w->n + 1) > w->nkeys) { /* grow the table (and the order) */
    size_t nk = w->nkeys ? 2 * w->nkeys : 256;
    tkc_lazy **keys = tkc_calloc(nk, sizeof *keys);
    size_t *pos = tkc_calloc(nk, sizeof *pos);
    tkc_lazy **order = tkc_realloc(w->order, nk * sizeof *order);
    if (!keys || !pos || !order) {
      tkc_free(keys), tkc_free(pos);
      if (order) w->order = order;
      return tkc_err(TKC_ENOMEM, "out of memory walking the graph for gradients"), -1;
    }
    tkc_lazy **ok = w->keys;
    size_t *op = w->pos, onk = w->nkeys;
    w->keys = keys, w->pos = pos, w->nkeys = nk, w->order = order;
    for (size_t i = 0; i < onk; i++)
      if (ok[i]) {
        size_t h = slot_of(w, ok[i]);
        w->keys[h] = ok[i], w->pos[h] = op[i];
      }
    tkc_free(ok), tkc_free(op);
  }
  size_t h = slot_of(w, x);
  w->keys[h] = x, w->pos[h] = w->n;
  w->order[w->n++] = x;
  return 0;
}
static void walk_free(walk *w) { tkc_free(w->order), tkc_free(w->keys), tkc_free(w->pos); }

/* post-order DFS from root (iterative: graphs can be deep); leaves: targets when stop_at_targets */
static int collect(walk *w, tkc_lazy *root, int (*is_target)(const tkc_lazy *, void *), void *tctx, bool stop_at_targets) {
  typedef struct { tkc_lazy *n; int next; } frame;
  size_t cap = 64, depth = 0;
  frame *st = tkc_malloc(cap * sizeof *st);
  if (!st) return tkc_err(TKC_ENOMEM, "out of memory walking the graph for gradients"), -1;
  walk open = {0}; /* every node met (on the stack or done) */
  int rc = 0;
  if (add_node(&open, root)) rc = -1;
  st[depth++] = (frame){root, 0};
  while (depth && !rc) {
    frame *f = &st[depth - 1];
    const tkc_lazy *h = how(f->n);
    bool leaf = stop_at_targets && is_target(f->n, tctx);
    if (!leaf && f->next < nsrc_of(f->n)) {
      tkc_lazy *s = h->src[f->next++];
      if (find(&open, s) >= 0) continue; /* done or on the stack (a DAG: never a cycle) */
      if (add_node(&open, s)) { rc = -1; break; }
      if (depth == cap) {
        frame *bigger = tkc_realloc(st, 2 * cap * sizeof *st);
        if (!bigger) { tkc_err(TKC_ENOMEM, "out of memory walking the graph for gradients"); rc = -1; break; }
        st = bigger, cap *= 2;
      }
      st[depth++] = (frame){s, 0};
      continue;
    }
    if (add_node(w, f->n)) rc = -1;
    depth--;
  }
  walk_free(&open);
  tkc_free(st);
  return rc;
}

tkc_status tkc_lazy_gradient(tkc_lazy *root, tkc_lazy *seed, int (*is_target)(const tkc_lazy *, void *), void *tctx, bool stop_at_targets,
                             void (*found)(tkc_lazy *target, tkc_lazy *grad, void *), void *fctx) {
  walk w = {0};
  gctx c = {0};
  if (collect(&w, root, is_target, tctx, stop_at_targets)) return walk_free(&w), tkc_last_status();
  /* reach[i]: a target is at or under node i (only those get gradients) */
  bool *reach = tkc_calloc(w.n + 1, sizeof *reach);
  tkc_lazy **grad = tkc_calloc(w.n + 1, sizeof *grad);
  tkc_status st = TKC_OK;
  if (!reach || !grad) st = tkc_err(TKC_ENOMEM, "out of memory building gradients");
  for (size_t i = 0; i < w.n && !st; i++) {
    tkc_lazy *n = w.order[i];
    reach[i] = is_target(n, tctx);
    if (reach[i] && stop_at_targets) continue;
    const tkc_lazy *h = how(n);
    for (int k = 0; k < nsrc_of(n) && !reach[i]; k++) {
      long p = find(&w, h->src[k]);
      reach[i] = p >= 0 && reach[p];
    }
  }
  if (!st && w.n) grad[w.n - 1] = seed; /* the root is last */
  for (size_t j = w.n; j-- > 0 && !st;) {
    tkc_lazy *n = w.order[j], *g = grad[j];
    if (!g || !reach[j]) continue;
    if (is_target(n, tctx)) {
      found(n, g, fctx);
      if (stop_at_targets) continue;
    }
    const tkc_lazy *h = how(n);
    if (!nsrc_of(n)) continue;
    grule_fn fn = rule_for(h);
    if (!fn) {
      st = tkc_err(TKC_EUNSUPPORTED, "gradient: no rule for a %s node", h->kind == TKC_LZ_ALU ? tkc_op_name((tkc_op)h->op) : "lazy");
      break;
    }
    tkc_lazy *gs[3] = {NULL, NULL, NULL};
    grule_in in = {h, n, g, h->src};
    if (fn(&c, &in, gs) || c.failed) {
      st = tkc_last_status() ? tkc_last_status() : TKC_ENOMEM;
      break;
    }
    for (int k = 0; k < h->nsrc; k++) {
      long p = find(&w, h->src[k]);
      if (h->kind == TKC_LZ_BITCAST && tkc_dtype_is_float(h->dtype) && p >= 0 && reach[p]) { /* the bits of what a target computes */
        st = tkc_err(TKC_EUNSUPPORTED, "gradient: through a bitcast to %s (a gather or index_select with a computed index of a tensor "
                     "that had no tkc_requires_grad when it was built: mark it first)", tkc_dtype_name(h->dtype));
        break;
      }
      if (!gs[k] || p < 0 || !reach[p] || !tkc_dtype_is_float(h->src[k]->dtype)) continue;
      grad[p] = grad[p] ? alu(&c, TKC_OP_ADD, grad[p], gs[k], NULL) : gs[k];
      if (c.failed) { st = tkc_last_status(); break; }
    }
  }
  /* the callers took references to what they keep */
  for (size_t i = 0; i < c.n; i++) tkc_lazy_unref(c.made[i]);
  tkc_free(c.made);
  tkc_free(reach), tkc_free(grad);
  walk_free(&w);
  return st;
}
