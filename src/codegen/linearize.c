/* The linearizer: orders a kernel graph into an instruction list.
 *
 * Every UOp gets a context: the RANGEs and IFs it depends on (tinygrad's block context: an ASSIGN's
 * users leave the reduce ranges of its accumulator; a STORE's users inherit nothing; a LOAD marked
 * TKC_LOAD_AFTER_STORES waits for the loops storing into its buffer to close). Scheduling is
 * greedy over a stack of open scopes:
 *   1. emit a ready UOp whose context is open (and that does not need a still-open reduce loop
 *      closed), definitions first, then LOADs, then creation order;
 *   2. else close the innermost scope once nothing left needs it;
 *   3. else open the next scope (lowest axis first), emitting the accumulators of a reduce range
 *      right before it.
 * Because step 1 runs before step 3, loop-invariant UOps land outside the loops. */
#include <stdlib.h>
#include <string.h>
#include "tkc/render.h"
#include "uops/uop_internal.h"

#define MAX_SCOPES 64

typedef struct node {
  tkc_uop *u;
  uint64_t ctx;        /* scopes this UOp depends on (its users inherit them) */
  uint64_t inside;     /* scopes it must be placed inside: ctx, but a DEFINE_ACC sits before its loops */
  uint64_t must_close; /* reduce ranges that must be closed before it (it reads an ASSIGN) */
  uint64_t after;      /* reduce ranges whose result it reads, directly or through other UOps */
  uint64_t wait;       /* loops that must have run before it (a LOAD of what they STOREd) */
  int scope;           /* its own scope number if RANGE/IF, else -1 */
  int waiting;         /* sources not emitted yet */
  int emitted;
  int nusers, *users;
} node;

typedef struct lin {
  tkc_graph *g;
  tkc_umap index; /* UOp -> node number + 1 */
  node *nodes;
  size_t n;
  int scope_node[MAX_SCOPES];
  int nscopes;
  size_t pending[MAX_SCOPES]; /* unemitted UOps inside each scope */
  int stack[MAX_SCOPES];
  int depth;
  uint64_t open, closed;
  uint64_t needs[MAX_SCOPES]; /* reduce ranges that UOps inside each scope need closed first */
  uint64_t dep[MAX_SCOPES];   /* the other scopes that UOps inside each scope are inside */
  uint64_t outer[MAX_SCOPES]; /* the other scopes that every UOp inside each scope is inside */
  int *user_pool; /* storage of every node's users list */
  int *ready;     /* nodes whose sources are all emitted and that step 1 may place (unordered) */
  size_t nready;
  tkc_uop **out;
  size_t nout;
} lin;

static int node_of(const lin *l, const tkc_uop *u) { return (int)(uintptr_t)tkc_umap_get(&l->index, u) - 1; }
static int is_scope(const tkc_uop *u) { return u->op == TKC_OP_RANGE || u->op == TKC_OP_IF; }

/* The reduce ranges of a DEFINE_ACC, as a scope mask. */
static uint64_t acc_ranges(const lin *l, const tkc_uop *acc) {
  uint64_t m = 0;
  for (int i = 1; i < acc->nsrc; i++) {
    int k = node_of(l, acc->src[i]);
    if (k >= 0 && l->nodes[k].scope >= 0) m |= 1ull << l->nodes[k].scope;
  }
  return m;
}

/* the DEFINE_GLOBAL a LOAD or STORE addresses (through INDEX and a vector CAST), or NULL */
static const tkc_uop *buffer_of(const tkc_uop *u) {
  const tkc_uop *p = u->nsrc ? u->src[0] : NULL;
  if (p && p->op == TKC_OP_CAST && p->nsrc == 1) p = p->src[0];
  return p && p->op == TKC_OP_INDEX && p->nsrc >= 1 && p->src[0]->op == TKC_OP_DEFINE_GLOBAL ? p->src[0] : NULL;
}

static int build(lin *l, tkc_uop *sink) {
  size_t n;
  tkc_uop **order = tkc_toposort(sink, &n);
  if (!order) return -1;
  l->nodes = tkc_calloc(n, sizeof *l->nodes);
  if (!l->nodes) { tkc_free(order); return tkc_err(TKC_ENOMEM, "out of memory linearizing"); }
  l->n = n;
  for (size_t i = 0; i < n; i++) {
    node *nd = &l->nodes[i];
    nd->u = order[i];
    nd->scope = -1;
    if (tkc_umap_put(&l->index, order[i], (tkc_uop *)(uintptr_t)(i + 1))) { tkc_free(order); return tkc_err(TKC_ENOMEM, "out of memory linearizing"); }
    if (is_scope(order[i])) {
      if (l->nscopes == MAX_SCOPES) { tkc_free(order); return tkc_err(TKC_EUNSUPPORTED, "linearize: more than %d RANGE/IF scopes", MAX_SCOPES); }
      l->scope_node[l->nscopes] = (int)i;
      nd->scope = l->nscopes++;
    }
  }
  tkc_free(order);
  /* contexts, in toposort order (sources first) */
  for (size_t i = 0; i < n; i++) {
    node *nd = &l->nodes[i];
    for (int j = 0; j < nd->u->nsrc; j++) {
      tkc_uop *s = nd->u->src[j];
      node *sn = &l->nodes[node_of(l, s)];
      nd->after |= sn->after;
      if (sn->scope >= 0) nd->ctx |= 1ull << sn->scope;
      else if (s->op == TKC_OP_STORE) continue;
      else if (s->op == TKC_OP_ASSIGN && s->nsrc == 2 && s->src[0]->op == TKC_OP_DEFINE_ACC) {
        uint64_t r = acc_ranges(l, s->src[0]);
        nd->ctx |= sn->ctx & ~r;
        nd->must_close |= r;
        nd->after |= r;
      } else nd->ctx |= sn->ctx;
    }
  }
  /* a LOAD marked TKC_LOAD_AFTER_STORES waits for the loops that store into its buffer (and that it
   * is not inside) to have run (IFs do not count: the output's own STORE may share the spill's IF) */
  uint64_t loops = 0;
  for (int s = 0; s < l->nscopes; s++)
    if (l->nodes[l->scope_node[s]].u->op == TKC_OP_RANGE) loops |= 1ull << s;
  for (size_t i = 0; i < n; i++) {
    node *ld = &l->nodes[i];
    if (ld->u->op != TKC_OP_LOAD || ld->u->arg.kind != TKC_ARG_INT || ld->u->arg.v.i != TKC_LOAD_AFTER_STORES) continue;
    const tkc_uop *buf = buffer_of(ld->u);
    for (size_t j = 0; j < n && buf; j++)
      if (l->nodes[j].u->op == TKC_OP_STORE && buffer_of(l->nodes[j].u) == buf) ld->wait |= l->nodes[j].ctx & loops & ~ld->ctx;
    ld->after |= ld->wait;
  }
  /* users and waiting counts; a DEFINE_ACC waits only for its initial value */
  size_t total = 0;
  for (size_t i = 0; i < n; i++) total += l->nodes[i].u->nsrc;
  int *pool = l->user_pool = tkc_malloc((total + 1) * sizeof *pool);
  int *fill = tkc_calloc(n + 1, sizeof *fill);
  if (!pool || !fill) { tkc_free(fill); return tkc_err(TKC_ENOMEM, "out of memory linearizing"); }
  for (size_t i = 0; i < n; i++) {
    node *nd = &l->nodes[i];
    int nsrc = nd->u->op == TKC_OP_DEFINE_ACC ? 1 : nd->u->nsrc;
    for (int j = 0; j < nsrc; j++) l->nodes[node_of(l, nd->u->src[j])].nusers++;
  }
  size_t off = 0;
  for (size_t i = 0; i < n; i++) { l->nodes[i].users = pool + off; off += (size_t)l->nodes[i].nusers; }
  for (size_t i = 0; i < n; i++) {
    node *nd = &l->nodes[i];
    int nsrc = nd->u->op == TKC_OP_DEFINE_ACC ? (nd->u->nsrc > 0) : nd->u->nsrc;
    for (int j = 0; j < nsrc; j++) {
      int k = node_of(l, nd->u->src[j]);
      l->nodes[k].users[fill[k]++] = (int)i;
      nd->waiting++;
    }
    nd->inside = nd->u->op == TKC_OP_DEFINE_ACC ? nd->ctx & ~acc_ranges(l, nd->u) : nd->ctx;
    for (int s = 0; s < l->nscopes; s++)
      if (nd->inside >> s & 1) {
        l->outer[s] = l->pending[s] ? l->outer[s] & nd->inside : nd->inside & ~(1ull << s);
        l->pending[s]++, l->needs[s] |= nd->after, l->dep[s] |= nd->inside & ~(1ull << s);
      }
  }
  tkc_free(fill);
  if (!(l->ready = tkc_malloc((n + 1) * sizeof *l->ready))) return tkc_err(TKC_ENOMEM, "out of memory linearizing");
  for (size_t i = 0; i < n; i++)
    if (!l->nodes[i].waiting) l->ready[l->nready++] = (int)i;
  return 0;
}

static void emit(lin *l, tkc_uop *u) { l->out[l->nout++] = u; }

static void mark_emitted(lin *l, int k) {
  node *nd = &l->nodes[k];
  nd->emitted = 1;
  for (int s = 0; s < l->nscopes; s++)
    if (nd->inside >> s & 1) l->pending[s]--;
  for (int i = 0; i < nd->nusers; i++)
    if (--l->nodes[nd->users[i]].waiting == 0) l->ready[l->nready++] = nd->users[i];
  emit(l, nd->u);
}

/* Lower is placed first: definitions, then loads, then creation order. */
static int rank(const tkc_uop *u) {
  switch (u->op) {
  case TKC_OP_DEFINE_GLOBAL: case TKC_OP_DEFINE_VAR: case TKC_OP_DEFINE_LOCAL: case TKC_OP_SPECIAL: case TKC_OP_CONST: return 0;
  case TKC_OP_LOAD: return 1;
  default: return 2;
  }
}

static int better(const tkc_uop *a, const tkc_uop *b) {
  int ra = rank(a), rb = rank(b);
  if (ra != rb) return ra < rb;
  return a->id < b->id;
}

static int step(lin *l) {
  /* 1. a ready UOp whose context is open */
  int best = -1;
  size_t at = 0;
  for (size_t j = 0; j < l->nready; j++) { /* (scanning the ready nodes only: all of them made this O(n^2)) */
    int i = l->ready[j];
    node *nd = &l->nodes[i];
    if (nd->emitted) { /* (a scope or accumulator that step 3 placed) */
      l->ready[j--] = l->ready[--l->nready];
      continue;
    }
    if (nd->scope >= 0 || nd->u->op == TKC_OP_DEFINE_ACC || nd->u->op == TKC_OP_SINK) continue;
    if ((nd->inside & ~l->open) || (nd->must_close & l->open) || (nd->wait & ~l->closed)) continue;
    if (best < 0 || better(nd->u, l->nodes[best].u)) best = i, at = j;
  }
  if (best >= 0) {
    l->ready[at] = l->ready[--l->nready];
    mark_emitted(l, best);
    return 1;
  }
  /* 2. close the innermost scope when nothing left needs it */
  if (l->depth && l->pending[l->stack[l->depth - 1]] == 0) {
    int s = l->stack[--l->depth];
    tkc_uop *scope = l->nodes[l->scope_node[s]].u;
    l->open &= ~(1ull << s);
    l->closed |= 1ull << s;
    tkc_uop *end = tkc_uop_new(l->g, scope->op == TKC_OP_RANGE ? TKC_OP_ENDRANGE : TKC_OP_ENDIF, tkc_dt_of(TKC_VOID), 1, &scope, tkc_arg_none());
    if (!end) return -1;
    emit(l, end);
    return 1;
  }
  /* 3. open the next scope that is ready and needed; not one whose UOps need a loop closed that does
   * not depend on it (a nested reduce's: opened inside, it would run once per iteration) while such
   * a loop has still to run and can open here, nor one whose UOps all sit inside a scope not open
   * yet (that one opens first), unless nothing else can open */
  int pick = -1;
  for (int pass = 0; pass < 2 && pick < 0; pass++)
    for (int s = 0; s < l->nscopes; s++) {
      node *nd = &l->nodes[l->scope_node[s]];
      if (nd->emitted || nd->waiting || l->pending[s] == 0 || (nd->inside & ~l->open) || (nd->must_close & l->open)) continue;
      bool early = !pass && (l->outer[s] & ~l->open);
      for (int t = 0; t < l->nscopes && !pass && !early; t++)
        early = t != s && (l->needs[s] >> t & 1) && !(l->closed >> t & 1) && !(l->dep[t] >> s & 1) && !(l->outer[t] & ~l->open);
      if (early) continue;
      if (pick < 0 || tkc_uop_cmp(nd->u, l->nodes[l->scope_node[pick]].u) < 0) pick = s;
    }
  if (pick < 0) return 0;
  for (size_t i = 0; i < l->n; i++) { /* accumulators of this reduce loop go right before it */
    node *nd = &l->nodes[i];
    if (nd->u->op != TKC_OP_DEFINE_ACC || nd->emitted || !(acc_ranges(l, nd->u) >> pick & 1)) continue;
    if (nd->waiting || (nd->inside & ~l->open)) return tkc_err(TKC_EINTERNAL, "linearize: accumulator is not ready before its loop"), -1;
    mark_emitted(l, (int)i);
  }
  mark_emitted(l, l->scope_node[pick]);
  l->stack[l->depth++] = pick;
  l->open |= 1ull << pick;
  return 1;
}

tkc_uop **tkc_linearize(tkc_graph *g, tkc_uop *sink, size_t *n) {
  if (!g || !sink || !n) return tkc_err_null(TKC_EINVAL, "tkc_linearize: NULL argument");
  if (sink->op != TKC_OP_SINK) return tkc_err_null(TKC_EINVAL, "tkc_linearize: root is %s, not SINK", tkc_op_name((tkc_op)sink->op));
  lin l = {.g = g};
  tkc_uop **result = NULL;
  if (build(&l, sink)) goto done;
  l.out = tkc_malloc((l.n + (size_t)l.nscopes + 1) * sizeof *l.out);
  if (!l.out) { tkc_err(TKC_ENOMEM, "out of memory linearizing"); goto done; }
  for (;;) {
    int r = step(&l);
    if (r < 0) goto done;
    if (r == 0) break;
  }
  for (size_t i = 0; i < l.n; i++)
    if (!l.nodes[i].emitted && l.nodes[i].u != sink) {
      tkc_err(TKC_EINTERNAL, "linearize: cannot place %s (its scopes do not nest)", tkc_op_name((tkc_op)l.nodes[i].u->op));
      goto done;
    }
  result = l.out;
  l.out = NULL;
  *n = l.nout;
done:
  tkc_free(l.out);
  tkc_free(l.user_pool);
  tkc_free(l.ready);
  tkc_free(l.nodes);
  tkc_umap_free(&l.index);
  return result;
}
