/* graph_rewrite: rewrite a UOp graph to a fixed point with memoization (tinygrad's RewriteContext),
 * iteratively so that deep graphs cannot overflow the C stack. */
#include <stdlib.h>
#include "uops/uop_internal.h"

/* Rules that never settle are reported instead of running forever: a node whose rewrite leads back
 * to itself is a cycle (caught at once); rules that keep producing new nodes are caught by the
 * length of the chain of pending rewrites (top-down) or of the rewrites of one node (bottom-up). */
#define MAX_CHAIN (1u << 16)
#define MIN_LOCAL_STEPS (1u << 17)

typedef tkc_uop *(*step_fn)(void *arg, tkc_graph *g, tkc_uop *u);

typedef struct frame {
  tkc_uop *n;    /* the node being rewritten */
  tkc_uop *last; /* bottom-up: n after the rules were applied to it */
  tkc_uop *next; /* the replacement whose own rewrite gives n's result */
  int state;
} frame;

typedef struct engine {
  tkc_graph *g;
  step_fn step;
  void *arg;
  int bottom_up;
  tkc_umap memo;
  tkc_umap active; /* node -> non-NULL while its frame is unfinished */
  size_t chained;  /* frames waiting on a replacement (state 2) */
  size_t local_limit;
  frame *stack;
  size_t depth, cap;
} engine;

static int push(engine *e, tkc_uop *n) {
  if (e->depth == e->cap) {
    size_t cap = e->cap ? e->cap * 2 : 256;
    frame *s = tkc_realloc(e->stack, cap * sizeof *s);
    if (!s) return tkc_err(TKC_ENOMEM, "out of memory in graph_rewrite");
    e->stack = s;
    e->cap = cap;
  }
  e->stack[e->depth++] = (frame){n, NULL, NULL, 0};
  return 0;
}

/* Pushes the sources of u that have no result yet; returns -1 on error. */
static int push_sources(engine *e, tkc_uop *u) {
  for (int i = u->nsrc - 1; i >= 0; i--)
    if (!tkc_umap_get(&e->memo, u->src[i]) && push(e, u->src[i])) return -1;
  return 0;
}

/* u with its sources replaced by their results (u itself when none changed); NULL on error. */
static tkc_uop *with_new_sources(engine *e, tkc_uop *u, int *changed) {
  tkc_uop *local[8], **src = u->nsrc <= 8 ? local : tkc_malloc(u->nsrc * sizeof *src);
  if (!src) return tkc_err_null(TKC_ENOMEM, "out of memory in graph_rewrite");
  *changed = 0;
  for (int i = 0; i < u->nsrc; i++) {
    src[i] = tkc_umap_get(&e->memo, u->src[i]);
    *changed |= src[i] != u->src[i];
  }
  tkc_uop *r = *changed ? tkc_uop_new(e->g, (tkc_op)u->op, u->dtype, u->nsrc, src, u->arg) : u;
  if (src != local) tkc_free(src);
  return r;
}

static int finish(engine *e, frame *f, tkc_uop *result) {
  if (tkc_umap_put(&e->memo, f->n, result) || tkc_umap_put(&e->active, f->n, NULL)) return tkc_err(TKC_ENOMEM, "out of memory in graph_rewrite");
  if (f->state == 2) e->chained--;
  e->depth--;
  return 0;
}

static int not_converging(void) { return tkc_err(TKC_EINTERNAL, "graph_rewrite did not converge (the rules keep rewriting)"); }

/* bottom-up: applies the rules to one node until none applies */
static tkc_uop *settle(engine *e, tkc_uop *u) {
  tkc_umap seen = {0};
  size_t steps = 0;
  for (tkc_uop *nn; u && (nn = e->step(e->arg, e->g, u)); u = nn) {
    if (++steps > e->local_limit) { not_converging(); u = NULL; break; }
    if (steps > 64) { /* long chains are unusual: from here on, look for a cycle */
      if (tkc_umap_get(&seen, nn)) { not_converging(); u = NULL; break; }
      if (tkc_umap_put(&seen, nn, nn)) { tkc_err(TKC_ENOMEM, "out of memory in graph_rewrite"); u = NULL; break; }
    }
  }
  tkc_umap_free(&seen);
  return u;
}

/* One step of the frame on top of the stack. */
static int advance(engine *e) {
  frame *f = &e->stack[e->depth - 1];
  tkc_uop *done = tkc_umap_get(&e->memo, f->n);
  if (f->state == 0 && done) { e->depth--; return 0; }
  if (f->state == 2) return finish(e, f, tkc_umap_get(&e->memo, f->next));
  if (f->state == 0) {
    f->state = 1;
    if (tkc_umap_put(&e->active, f->n, f->n)) return tkc_err(TKC_ENOMEM, "out of memory in graph_rewrite");
    f->last = e->bottom_up ? settle(e, f->n) : f->n; /* bottom-up: rules on the node first */
    if (!f->last) return -1;
    return push_sources(e, f->last);
  }
  /* state 1: every source of f->last has its result */
  int changed = 0;
  tkc_uop *nn = with_new_sources(e, f->last, &changed);
  if (!nn) return -1;
  if (!changed) {
    if (e->bottom_up) return finish(e, f, f->last);
    nn = e->step(e->arg, e->g, f->n);
    if (!nn) return finish(e, f, f->n);
  }
  tkc_uop *known = tkc_umap_get(&e->memo, nn);
  if (known) return finish(e, f, known);
  if (tkc_umap_get(&e->active, nn) || ++e->chained > MAX_CHAIN) return not_converging();
  f->state = 2;
  f->next = nn;
  return push(e, nn);
}

static tkc_uop *run(tkc_graph *g, tkc_uop *root, step_fn step, void *arg, int bottom_up) {
  engine e = {.g = g, .step = step, .arg = arg, .bottom_up = bottom_up};
  e.local_limit = 4 * tkc_graph_size(g) + MIN_LOCAL_STEPS;
  tkc_uop *result = NULL;
  if (push(&e, root) == 0) {
    while (e.depth)
      if (advance(&e)) break;
    if (!e.depth) result = tkc_umap_get(&e.memo, root);
  }
  tkc_free(e.stack);
  tkc_umap_free(&e.memo);
  tkc_umap_free(&e.active);
  return result;
}

typedef struct pm_arg {
  const tkc_matcher *pm;
  void *ctx;
} pm_arg;

static tkc_uop *pm_step(void *arg, tkc_graph *g, tkc_uop *u) {
  pm_arg *a = arg;
  return tkc_rewrite_once(a->pm, g, u, a->ctx);
}

tkc_uop *tkc_graph_rewrite(tkc_graph *g, tkc_uop *root, const tkc_matcher *pm, void *ctx) {
  if (!g || !root || !pm) return tkc_err_null(TKC_EINVAL, "tkc_graph_rewrite: NULL argument");
  pm_arg a = {pm, ctx};
  return run(g, root, pm_step, &a, 0);
}

tkc_uop *tkc_graph_rewrite_bottom_up(tkc_graph *g, tkc_uop *root, const tkc_matcher *pm, void *ctx) {
  if (!g || !root || !pm) return tkc_err_null(TKC_EINVAL, "tkc_graph_rewrite_bottom_up: NULL argument");
  pm_arg a = {pm, ctx};
  return run(g, root, pm_step, &a, 1);
}

/* Simultaneous replacement: a node in the map becomes its value (which is not rewritten further);
 * every other node is rebuilt over its replaced sources. */
tkc_uop *tkc_substitute(tkc_graph *g, tkc_uop *root, size_t n, tkc_uop *const *from, tkc_uop *const *to) {
  if (!g || !root || (n && (!from || !to))) return tkc_err_null(TKC_EINVAL, "tkc_substitute: NULL argument");
  tkc_umap map = {0};
  tkc_uop *result = NULL, **order = NULL;
  engine e = {.g = g}; /* only its memo is used */
  for (size_t i = 0; i < n; i++) {
    if (!from[i] || !to[i]) { tkc_err(TKC_EINVAL, "tkc_substitute: NULL entry %zu", i); goto done; }
    if (tkc_umap_put(&map, from[i], to[i])) { tkc_err(TKC_ENOMEM, "out of memory in tkc_substitute"); goto done; }
  }
  size_t count;
  if (!(order = tkc_toposort(root, &count))) goto done;
  for (size_t i = 0; i < count; i++) {
    tkc_uop *u = order[i], *r = tkc_umap_get(&map, u);
    if (!r) {
      int changed = 0;
      if (!(r = with_new_sources(&e, u, &changed))) goto done;
    }
    if (tkc_umap_put(&e.memo, u, r)) { tkc_err(TKC_ENOMEM, "out of memory in tkc_substitute"); goto done; }
  }
  result = tkc_umap_get(&e.memo, root);
done:
  tkc_umap_free(&e.memo);
  tkc_free(order);
  tkc_umap_free(&map);
  return result;
}
