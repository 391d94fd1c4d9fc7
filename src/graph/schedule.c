/* The scheduler: the lazy graph -> kernel ASTs with tinygrad's fusion rules.
 *
 * A kernel computes one node into a buffer. Building it walks the node's sources and fuses:
 *   - elementwise ops (and casts) fuse;
 *   - movement ops are pushed to the leaves: each leaf (buffer, constant, iota) gets a view that
 *     composes its own layout with every movement above it, so views never copy; any number of
 *     them: where the views stop merging (a leaf would need more than TKC_MAX_VIEWS stacked ones),
 *     the value there is realized first (a contiguous copy, as a user would write by hand) and
 *     the movement ops above it start from that buffer;
 *   - one reduce (or several with the same shape and axes) fuses with the elementwise ops before
 *     and after it;
 * and cuts (realizes the node as its own kernel first) at
 *   - realized buffers and nodes already scheduled (computed once, read by every kernel);
 *   - CONTIGUOUS;
 *   - a reduce seen through a movement op, inside another reduce, or of another shape;
 *   - a pad over ops that do not keep 0 at 0 (exp2, log2, recip, idiv, pow), like tinygrad's can_pad;
 *   - transcendentals broadcast into a reduce (x*sigmoid(x) feeding a matmul): computed once into a
 *     buffer instead of once per use;
 *   - a reduce read by several nodes (seen through movement ops: the matmul in softmax(a @ b)):
 *     its own kernel, which every reader loads, instead of its loop fused into each.
 * The AST is tinygrad's: SINK(STORE(DEFINE_GLOBAL 0, VIEW(st), value)), LOAD(DEFINE_GLOBAL i,
 * VIEW(st)), CONST(VIEW(st)) where a view masks it, REDUCE_AXIS(src) arg (op, axes), and
 * VIEW(st) alone for an iota leaf. The SINK's arg is (output shape, full shape). */
#include <stdlib.h>
#include <string.h>
#include "graph/graph.h"
#include "runtime/device.h"

#define MAX_INPUTS 32
#define ST_ARGS TKC_ST_ARGS

/* The movement ops between a leaf and the kernel's root, any number of them: a list applied from m
 * (the op nearest the source) on. Lists are interned per kernel (the same ops give the same
 * pointer), so the memo compares them by pointer and a list shares its tail with the one above. */
typedef struct moves {
  tkc_lazy *m;              /* NULL: the empty list */
  const struct moves *rest; /* the ops applied after m */
  const tkc_lazy *last;     /* the op applied last (nearest the root) */
  int n;
  bool pad, expand, reshapes; /* some op pads / expands; every op is a reshape */
} moves;
static const moves no_moves = {.reshapes = true};

typedef struct memo_entry {
  tkc_lazy *n;
  const moves *mv;
  int in_reduce;
  tkc_uop *u;
} memo_entry;

typedef struct kernel {
  tkc_schedule *s;
  tkc_lazy *root;
  int ninputs;
  tkc_lazy *inputs[MAX_INPUTS];
  const void *input_keys[MAX_INPUTS];
  int has_reduce;
  int64_t full[TKC_MAX_DIMS];
  tkc_lazy *reduce_shape_of; /* a reduce of this kernel: its src has the full shape */
  uint32_t enclosing;        /* the dims of the reduce whose source is being built (a bit per dim) */
  memo_entry *memo;
  size_t nmemo, capmemo;
  moves **lists; /* the interned move lists: an open-addressing table */
  size_t nlists, caplists;
  tkc_lazy *to_space;       /* the move schedule_node adds above the root, if any */
  const tkc_lazy *overflow; /* set with a quiet TKC_ESHAPE: the move whose view did not fit a leaf's */
} kernel;

/* What a kernel has built so far, to go back to when a part of it is built again another way. */
typedef struct kernel_mark {
  int ninputs, has_reduce;
  size_t nmemo;
  int64_t full[TKC_MAX_DIMS];
  tkc_lazy *reduce_shape_of;
} kernel_mark;

static kernel_mark kernel_marked(const kernel *k) {
  kernel_mark m = {k->ninputs, k->has_reduce, k->nmemo, {0}, k->reduce_shape_of};
  memcpy(m.full, k->full, sizeof m.full);
  return m;
}

static void kernel_back_to(kernel *k, const kernel_mark *m) {
  k->ninputs = m->ninputs, k->has_reduce = m->has_reduce, k->nmemo = m->nmemo, k->reduce_shape_of = m->reduce_shape_of;
  memcpy(k->full, m->full, sizeof k->full);
}

static int is_planned(const tkc_schedule *s, const tkc_lazy *n) {
  for (size_t i = 0; i < s->n; i++)
    if (s->items[i].out == n) return 1;
  return 0;
}

static tkc_status schedule_node(tkc_schedule *s, tkc_lazy *n);

/* ---------------------------------------------------------------- users: who reads a node */

typedef struct tkc_users {
  size_t cap, used;
  const tkc_lazy **key;
  int *count;   /* readers, seen through movement ops (a reshape of x read twice: x has 2) */
  char *seen;   /* visited by the walk; | ROOT_NODE, | SHARED_KNOWN (| SHARED_YES): epilogue_shared's answer */
  /* the readers of the node in slot k: reader[rstart[k] .. rstart[k + 1]), through a view other
   * than reshapes where rview is set (count_users only) */
  size_t *rstart;
  const tkc_lazy **reader;
  char *rview;
} tkc_users;
enum { ROOT_NODE = 2, SHARED_KNOWN = 4, SHARED_YES = 8 };

static size_t users_slot(const tkc_users *u, const tkc_lazy *n) {
  size_t i = ((uintptr_t)n >> 4) * 0x9E3779B97F4A7C15ull & (u->cap - 1);
  while (u->key[i] && u->key[i] != n) i = (i + 1) & (u->cap - 1);
  return i;
}

static int users_of(const tkc_schedule *s, const tkc_lazy *n) {
  if (!s->users) return 1;
  size_t i = users_slot(s->users, n);
  return s->users->key[i] ? s->users->count[i] : 0;
}

static void users_free(tkc_users *u) {
  if (!u) return;
  tkc_free(u->key);
  tkc_free(u->count);
  tkc_free(u->seen);
  tkc_free(u->rstart), tkc_free(u->reader), tkc_free(u->rview);
  tkc_free(u);
}

static int users_alloc(tkc_users *u, size_t cap) {
  u->cap = cap;
  u->key = tkc_calloc(cap, sizeof *u->key);
  u->count = tkc_calloc(cap, sizeof *u->count);
  u->seen = tkc_calloc(cap, 1);
  return u->key && u->count && u->seen ? 0 : -1;
}

/* the slot of n, inserted when new; (size_t)-1 when out of memory */
static size_t users_entry(tkc_users *u, const tkc_lazy *n) {
  size_t k = users_slot(u, n);
  if (u->key[k]) return k;
  if (2 * (u->used + 1) > u->cap) {
    tkc_users big = {0};
    if (users_alloc(&big, u->cap * 2)) {
      tkc_free(big.key), tkc_free(big.count), tkc_free(big.seen);
      return (size_t)-1;
    }
    for (size_t j = 0; j < u->cap; j++)
      if (u->key[j]) {
        size_t m = users_slot(&big, u->key[j]);
        big.key[m] = u->key[j], big.count[m] = u->count[j], big.seen[m] = u->seen[j];
      }
    big.used = u->used;
    tkc_free(u->key), tkc_free(u->count), tkc_free(u->seen);
    *u = big;
    k = users_slot(u, n);
  }
  u->key[k] = n;
  u->used++;
  return k;
}

static int index_readers(tkc_users *u);

/* Counts the readers of every node below the roots (down to buffers). On failure (memory) the counts are
 * simply absent: every reduce then fuses as before. */
static tkc_users *count_users(int nroots, tkc_lazy *const *roots) {
  size_t sp = 0, scap = 64 + (size_t)nroots, k;
  tkc_users *u = tkc_calloc(1, sizeof *u);
  tkc_lazy **stack = tkc_malloc(scap * sizeof *stack);
  if (!u || !stack || users_alloc(u, 64)) goto fail; /* (grows) */
  for (int r = 0; r < nroots; r++) {
    if ((k = users_entry(u, roots[r])) == (size_t)-1) goto fail;
    if (u->seen[k]) continue;
    u->seen[k] = 1;
    stack[sp++] = roots[r];
  }
  while (sp) {
    tkc_lazy *n = stack[--sp];
    if (n->kind == TKC_LZ_BUFFER) continue;
    for (int i = 0; i < n->nsrc; i++) {
      tkc_lazy *c = n->src[i], *base = c;
      if (n->kind != TKC_LZ_MOVE) { /* a reader: of what c is a view of */
        while (base->kind == TKC_LZ_MOVE) base = base->src[0];
        if ((k = users_entry(u, base)) == (size_t)-1) goto fail;
        u->count[k]++;
      }
      if ((k = users_entry(u, c)) == (size_t)-1) goto fail;
      if (u->seen[k]) continue;
      u->seen[k] = 1;
      if (sp == scap) {
        tkc_lazy **ns = tkc_realloc(stack, 2 * scap * sizeof *ns);
        if (!ns) goto fail;
        stack = ns;
        scap *= 2;
      }
      stack[sp++] = c;
    }
  }
  for (int r = 0; r < nroots; r++) u->seen[users_slot(u, roots[r])] |= ROOT_NODE;
  tkc_free(stack);
  if (index_readers(u)) tkc_free(u->rstart), u->rstart = NULL; /* no memory: no epilogue sharing found */
  return u;
fail:
  tkc_free(stack);
  users_free(u);
  return NULL;
}

/* a reader's view of c: its base (past movement ops), and which moves are on the way: VIEW_MOVED a
 * move other than a reshape, VIEW_FOREIGN also one other than an expand (never a nested read) */
enum { VIEW_MOVED = 1, VIEW_FOREIGN = 2 };
static const tkc_lazy *view_base(const tkc_lazy *c, char *view) {
  *view = 0;
  for (; c->kind == TKC_LZ_MOVE; c = c->src[0]) {
    if (c->op != TKC_OP_RESHAPE) *view |= VIEW_MOVED;
    if (c->op != TKC_OP_RESHAPE && c->op != TKC_OP_EXPAND) *view |= VIEW_FOREIGN;
  }
  return c;
}

/* fills rstart/reader/rview from the counted map (two passes: sizes, then entries) */
static int index_readers(tkc_users *u) {
  if (!(u->rstart = tkc_calloc(u->cap + 1, sizeof *u->rstart))) return -1;
  for (int pass = 0; pass < 2; pass++) {
    for (size_t j = 0; j < u->cap; j++) {
      const tkc_lazy *n = u->key[j];
      if (!n || n->kind == TKC_LZ_BUFFER || n->kind == TKC_LZ_MOVE) continue;
      for (int i = 0; i < n->nsrc; i++) {
        char view;
        size_t k = users_slot(u, view_base(n->src[i], &view));
        if (!u->key[k]) continue;
        if (pass == 0) u->rstart[k + 1]++;
        else u->reader[u->rstart[k]] = n, u->rview[u->rstart[k]++] = view;
      }
    }
    if (pass == 0) {
      for (size_t k = 0; k < u->cap; k++) u->rstart[k + 1] += u->rstart[k];
      size_t total = u->rstart[u->cap] ? u->rstart[u->cap] : 1;
      if (!(u->reader = tkc_malloc(total * sizeof *u->reader)) || !(u->rview = tkc_malloc(total))) return -1;
    }
  }
  for (size_t k = u->cap; k > 0; k--) u->rstart[k] = u->rstart[k - 1]; /* the fill moved each start to the next one's */
  u->rstart[0] = 0;
  return 0;
}

/* Cuts before scheduling, found by one iterative (post-order) walk of t, so that no kernel is too
 * big to build:
 *   - depth: building a kernel recurses once per fused node, so a deep chain (x + a + a + ... 100k
 *     times) would overflow the C stack; a non-movement node whose fused height (nodes since the last
 *     cut or buffer) reaches MAX_FUSE_DEPTH becomes a kernel of its own;
 *   - inputs: a node whose fused region reads more than MAX_REGION_INPUTS distinct buffers (the sum of 40
 *     tensors) has its largest sources cut until it reads at most that many.
 * The cuts are scheduled first, in this order, so later builds stop at them (as at buffers). */
#define MAX_FUSE_DEPTH 128
#define MAX_REGION_INPUTS (MAX_INPUTS - 1) /* + the output: WebGPU binds at most 32 buffers per shader */

typedef struct region {
  int height, nleaves, over; /* over: more than MAX_INPUTS distinct buffers */
  const tkc_lazy *leaves[MAX_REGION_INPUTS];
} region;

static void region_add(region *r, const tkc_lazy *leaf) {
  for (int i = 0; i < r->nleaves; i++)
    if (r->leaves[i] == leaf) return;
  if (r->nleaves == MAX_REGION_INPUTS) r->over = 1;
  else r->leaves[r->nleaves++] = leaf;
}

typedef struct cut_walk {
  tkc_users map; /* node -> index into regs (count), seen: 1 expanded, 2 done */
  region *regs;
  size_t nregs, capregs;
  tkc_lazy **cuts;
  size_t ncuts, capcuts;
} cut_walk;

static int add_cut(cut_walk *w, tkc_lazy *n) {
  if (w->ncuts == w->capcuts) {
    tkc_lazy **nn = tkc_realloc(w->cuts, (w->capcuts = w->capcuts ? 2 * w->capcuts : 16) * sizeof *nn);
    if (!nn) return -1;
    w->cuts = nn;
  }
  w->cuts[w->ncuts++] = n;
  return 0;
}

static region *region_of(cut_walk *w, const tkc_lazy *n) { return &w->regs[w->map.count[users_slot(&w->map, n)]]; }

/* n's region from its (done) sources, cutting sources or n itself where needed */
static tkc_status close_region(cut_walk *w, tkc_lazy *n, tkc_lazy *t, region *r) {
  memset(r, 0, sizeof *r);
  if (n->kind == TKC_LZ_BUFFER) {
    region_add(r, n);
    return TKC_OK;
  }
  for (int pass = 0; pass < MAX_INPUTS + 4; pass++) {
    memset(r, 0, sizeof *r);
    for (int i = 0; i < n->nsrc; i++) {
      const region *c = region_of(w, n->src[i]);
      /* (a chain of movement ops is built in one step: it counts once) */
      int h = c->height + (n->kind != TKC_LZ_MOVE || n->src[i]->kind != TKC_LZ_MOVE);
      r->height = h > r->height ? h : r->height;
      for (int j = 0; j < c->nleaves; j++) region_add(r, c->leaves[j]);
      r->over |= c->over;
    }
    if (!r->over) break;
    int biggest = -1, most = 1; /* (only looked for when needed: the walks past movement ops cost) */
    for (int i = 0; i < n->nsrc; i++) {
      const region *c = region_of(w, n->src[i]);
      if (c->nleaves + c->over * MAX_INPUTS <= most) continue;
      tkc_lazy *base = n->src[i];
      while (base->kind == TKC_LZ_MOVE) base = base->src[0];
      if (base->kind != TKC_LZ_BUFFER) most = c->nleaves + c->over * MAX_INPUTS, biggest = i;
    }
    if (biggest < 0) break;
    /* too many buffers: the biggest source's base becomes a kernel (one buffer from here on) */
    tkc_lazy *base = n->src[biggest];
    while (base->kind == TKC_LZ_MOVE) base = base->src[0];
    if (add_cut(w, base)) return tkc_err(TKC_ENOMEM, "out of memory scheduling");
    region *rb = region_of(w, base);
    memset(rb, 0, sizeof *rb);
    region_add(rb, base);
    for (tkc_lazy *m = n->src[biggest]; m != base; m = m->src[0]) *region_of(w, m) = *rb;
  }
  if (r->height >= MAX_FUSE_DEPTH && n->kind != TKC_LZ_MOVE && n != t) {
    if (add_cut(w, n)) return tkc_err(TKC_ENOMEM, "out of memory scheduling");
    memset(r, 0, sizeof *r);
    region_add(r, n);
  }
  return TKC_OK;
}

static tkc_status deep_cuts(tkc_lazy *t, tkc_lazy ***cuts_out, size_t *ncuts) {
  cut_walk w = {0};
  size_t sp = 0, scap = 64;
  tkc_lazy **stack = tkc_malloc(scap * sizeof *stack);
  tkc_status st = TKC_OK;
  if (!stack || users_alloc(&w.map, 64)) goto oom; /* (grows: most roots are a few nodes) */
  stack[sp++] = t;
  while (sp && !st) {
    tkc_lazy *n = stack[sp - 1];
    size_t k = users_entry(&w.map, n);
    if (k == (size_t)-1) goto oom;
    if (w.map.seen[k] == 0 && n->kind != TKC_LZ_BUFFER) {
      w.map.seen[k] = 1;
      if (sp + 3 > scap) {
        tkc_lazy **ns = tkc_realloc(stack, 2 * scap * sizeof *ns);
        if (!ns) goto oom;
        stack = ns, scap *= 2;
      }
      for (int i = 0; i < n->nsrc; i++) stack[sp++] = n->src[i];
      continue;
    }
    sp--;
    if (w.map.seen[k] == 2) continue;
    if (w.nregs == w.capregs) {
      region *nr = tkc_realloc(w.regs, (w.capregs = w.capregs ? 2 * w.capregs : 256) * sizeof *nr);
      if (!nr) goto oom;
      w.regs = nr;
    }
    region r;
    st = close_region(&w, n, t, &r);
    k = users_slot(&w.map, n);
    w.regs[w.nregs] = r;
    w.map.count[k] = (int)w.nregs++;
    w.map.seen[k] = 2;
  }
  goto done;
oom:
  st = tkc_err(TKC_ENOMEM, "out of memory scheduling a deep graph");
done:
  tkc_free(stack);
  tkc_free(w.map.key), tkc_free(w.map.count), tkc_free(w.map.seen);
  tkc_free(w.regs);
  if (st) tkc_free(w.cuts), w.cuts = NULL, w.ncuts = 0;
  *cuts_out = w.cuts;
  *ncuts = w.ncuts;
  return st;
}

/* a reduce read by several nodes is computed once, by a kernel of its own (tinygrad's
 * group_realizes): fusing it into each reader would run its loop once per reader */
static int epilogue_shared(const tkc_schedule *s, const tkc_lazy *r);
static bool one_buffer_for_readers(const tkc_schedule *s, const tkc_lazy *n);
static int shared_reduce(const tkc_schedule *s, const tkc_lazy *n) {
  return n->kind == TKC_LZ_REDUCE && (users_of(s, n) > 1 || epilogue_shared(s, n));
}

/* Whether the elementwise ops over reduce r (its epilogue) are read by more than one kernel at
 * different nodes: fused into each, r's loop would run once per kernel (a conv whose output feeds
 * the activation and, in the backward pass, the activation's gradient). The readers are followed
 * up through elementwise ops to where kernels start (a reduce, a view other than a reshape, a
 * CONTIGUOUS, an output); reading two or more nodes of the epilogue there: shared. Kernels that
 * all read one node (a ResNet block's output, read by the next conv and the skip connection) read
 * the buffer of the one kernel that computes r and its epilogue up to that node; reads of one value
 * within one expression (gelu's x) are one place. A node of the epilogue that a reader reads
 * through a pad, a shrink or a permute is such a node for all its readers: build_node makes it a
 * kernel of its own. Past a budget of nodes, not shared (fusing is always right). */
static int epilogue_shared(const tkc_schedule *s, const tkc_lazy *r) {
  tkc_users *u = s->users;
  if (!u || !u->rstart) return 0;
  size_t kr = users_slot(u, r);
  if (!u->key[kr]) return 0;
  if (u->seen[kr] & SHARED_KNOWN) return (u->seen[kr] & SHARED_YES) != 0;
  enum { BUDGET = 256 };
  const tkc_lazy *todo[BUDGET], *seen[BUDGET], *ends[2];
  int ntodo = 0, nseen = 0, nends = 0, shared = 0;
  todo[ntodo++] = r;
  while (ntodo && !shared) {
    const tkc_lazy *q = todo[--ntodo];
    size_t k = users_slot(u, q);
    if (q != r && one_buffer_for_readers(s, q)) {
      if (nends == 0 || ends[0] != q) ends[nends++] = q;
      shared = nends > 1;
      continue;
    }
    for (size_t e = u->rstart[k]; e < u->rstart[k + 1] && !shared; e++) {
      const tkc_lazy *p = u->reader[e];
      size_t kp = users_slot(u, p);
      bool elementwise = p->kind == TKC_LZ_ALU || p->kind == TKC_LZ_CAST || p->kind == TKC_LZ_BITCAST;
      bool end = u->rview[e] || !elementwise || (u->seen[kp] & ROOT_NODE);
      if (end) { /* where a kernel starts reading the epilogue: at q (at p, an output it computes) */
        const tkc_lazy *at = elementwise && !u->rview[e] ? p : q;
        if (nends == 0 || ends[0] != at) ends[nends++] = at;
        shared = nends > 1;
        continue;
      }
      int known = 0;
      for (int i = 0; i < nseen && !known; i++) known = seen[i] == p;
      if (known) continue;
      if (nseen == BUDGET) { /* too far to tell */
        ntodo = 0;
        break;
      }
      seen[nseen++] = p, todo[ntodo++] = p;
    }
  }
  u->seen[kr] |= SHARED_KNOWN | (shared ? SHARED_YES : 0);
  return shared;
}

/* Whether n has several readers and one of them reads it through a view that moves more than
 * reshapes and expands (a pad, a shrink, a permute): such a reader never computes a reduce's epilogue
 * itself but reads it from a kernel, so n is a kernel of its own that all its readers read
 * (build_node cuts it whichever is built first; epilogue_shared counts it as one place) */
static bool one_buffer_for_readers(const tkc_schedule *s, const tkc_lazy *n) {
  const tkc_users *u = s->users;
  if (!u || !u->rstart) return false;
  size_t k = users_slot(u, n);
  if (!u->key[k] || u->count[k] < 2) return false;
  for (size_t e = u->rstart[k]; e < u->rstart[k + 1]; e++)
    if (u->rview[e] & VIEW_FOREIGN) return true;
  return false;
}

/* ---------------------------------------------------------------- memo */

static tkc_uop *memo_get(const kernel *k, tkc_lazy *n, const moves *mv, int in_reduce) {
  for (size_t i = 0; i < k->nmemo; i++) {
    const memo_entry *e = &k->memo[i];
    if (e->n == n && e->in_reduce == in_reduce && e->mv == mv) return e->u;
  }
  return NULL;
}

static void memo_put(kernel *k, tkc_lazy *n, const moves *mv, int in_reduce, tkc_uop *u) {
  if (k->nmemo == k->capmemo) {
    size_t cap = k->capmemo ? 2 * k->capmemo : 32;
    memo_entry *m = tkc_realloc(k->memo, cap * sizeof *m);
    if (!m) return; /* the memo is only a speed-up */
    k->memo = m;
    k->capmemo = cap;
  }
  k->memo[k->nmemo++] = (memo_entry){n, mv, in_reduce, u};
}

static size_t list_slot(moves *const *lists, size_t cap, const tkc_lazy *m, const moves *rest) {
  size_t i = (((uintptr_t)m >> 4) * 0x9E3779B97F4A7C15ull ^ ((uintptr_t)rest >> 4) * 0xC2B2AE3D27D4EB4Full) & (cap - 1);
  while (lists[i] && (lists[i]->m != m || lists[i]->rest != rest)) i = (i + 1) & (cap - 1);
  return i;
}

/* the list m, then rest (interned); NULL with the error set when out of memory */
static const moves *moves_push(kernel *k, tkc_lazy *m, const moves *rest) {
  if (2 * (k->nlists + 1) > k->caplists) {
    size_t cap = k->caplists ? 2 * k->caplists : 64;
    moves **big = tkc_calloc(cap, sizeof *big);
    if (!big) return tkc_err_null(TKC_ENOMEM, "out of memory scheduling");
    for (size_t j = 0; j < k->caplists; j++)
      if (k->lists[j]) big[list_slot(big, cap, k->lists[j]->m, k->lists[j]->rest)] = k->lists[j];
    tkc_free(k->lists);
    k->lists = big, k->caplists = cap;
  }
  size_t i = list_slot(k->lists, k->caplists, m, rest);
  if (k->lists[i]) return k->lists[i];
  moves *l = tkc_malloc(sizeof *l);
  if (!l) return tkc_err_null(TKC_ENOMEM, "out of memory scheduling");
  *l = (moves){m, rest, rest->m ? rest->last : m, rest->n + 1, rest->pad || m->op == TKC_OP_PAD, rest->expand || m->op == TKC_OP_EXPAND,
               rest->reshapes && m->op == TKC_OP_RESHAPE};
  k->lists[i] = l;
  k->nlists++;
  return l;
}

static void kernel_free(kernel *k) {
  for (size_t i = 0; i < k->caplists; i++) tkc_free(k->lists[i]);
  tkc_free(k->lists);
  tkc_free(k->memo);
}

/* ---------------------------------------------------------------- AST pieces */

__attribute__((noinline)) static tkc_uop *view_uop(tkc_graph *g, const tkc_st *st, tkc_dt dt) { /* (its arg storage stays off the recursion's frames) */
  tkc_arg storage[ST_ARGS];
  return tkc_uop_new(g, TKC_OP_VIEW, dt, 0, NULL, tkc_st_to_arg(st, storage, ST_ARGS));
}

static tkc_uop *global_uop(tkc_graph *g, int i, tkc_dtype dt) {
  return tkc_uop_new(g, TKC_OP_DEFINE_GLOBAL, tkc_dt_ptr(tkc_dt_of(dt), TKC_SPACE_GLOBAL, -1), 0, NULL, tkc_arg_int(i));
}

static int st_masked(const tkc_st *st) {
  for (int i = 0; i < st->nviews; i++)
    if (st->views[i].has_mask) return 1;
  return 0;
}

/* the view a kernel reads n through: a buffer's own, else (a node an earlier kernel computes, a
 * constant, an iota) contiguous */
static void node_st(const tkc_lazy *n, tkc_st *st) {
  if (n->kind == TKC_LZ_BUFFER) *st = *n->st;
  else tkc_st_contiguous_max(st, n->ctx, n->ndim, n->shape);
}

/* x seen through the moves from `from` up to (not including) `upto`, as a node of its own (a new
 * reference): the last of those moves itself when they are the chain right above x (and not the
 * kernel's root), else copies of them over x; a CONTIGUOUS copy of x when there are none. */
static tkc_lazy *moves_node(const kernel *k, tkc_lazy *x, const moves *from, const moves *upto) {
  if (from == upto) {
    tkc_lazy *c = tkc_lazy_new(x->ctx, TKC_LZ_CONTIGUOUS, x->dtype, x->ndim, x->shape);
    if (c) tkc_lazy_set_src(c, 0, x);
    return c;
  }
  const tkc_lazy *below = x;
  const moves *l = from;
  for (; l != upto && l->m->src[0] == below && l->m != k->root; l = l->rest) below = l->m;
  if (l == upto) {
    tkc_lazy_ref((tkc_lazy *)below);
    return (tkc_lazy *)below;
  }
  tkc_lazy *top = x;
  tkc_lazy_ref(x);
  for (l = from; l != upto; l = l->rest) {
    tkc_lazy *c = tkc_lazy_new(x->ctx, TKC_LZ_MOVE, x->dtype, l->m->ndim, l->m->shape);
    if (c) {
      c->op = l->m->op;
      memcpy(c->arg, l->m->arg, sizeof c->arg);
      tkc_lazy_set_src(c, 0, top);
    }
    tkc_lazy_unref(top);
    if (!(top = c)) return NULL;
  }
  return top;
}

/* *st = the view of *x with mv applied. Where the views stop merging (a move would stack more than
 * TKC_MAX_VIEWS of them), the value there is realized first, as a user would with tkc_contiguous:
 *   - the source of that move, by the build step that pushed it onto the list: k->overflow names the
 *     move and a quiet TKC_ESHAPE goes up to that step (so the whole expression below the move
 *     becomes one buffer, however many leaves it has);
 *   - here, where no build step pushed the move (the reshape into a reduce's space) or *x's own view
 *     is full already: a copy of *x seen through the moves so far, which *x then is. */
static tkc_status leaf_view(kernel *k, tkc_lazy **x, const moves *mv, tkc_st *st) {
  const moves *from = mv; /* the moves applied to *x so far start here */
  bool fresh = false;     /* *x was just copied here, nothing applied to it yet */
  node_st(*x, st);
  for (const moves *l = mv; l->m;) {
    bool full = st->nviews == TKC_MAX_VIEWS;
    tkc_status s = tkc_lazy_apply_move(st, l->m);
    if (!s) {
      l = l->rest;
      fresh = false;
      continue;
    }
    if (s != TKC_ESHAPE || !full) return s;
    if (fresh) return tkc_err(TKC_EINTERNAL, "schedule: a single movement op needs more than %d views", TKC_MAX_VIEWS);
    if (from != l && l->m != k->to_space) {
      k->overflow = l->m;
      return TKC_ESHAPE;
    }
    tkc_lazy *mid = moves_node(k, *x, from, l);
    if (!mid) return tkc_last_status();
    s = schedule_node(k->s, mid);
    tkc_lazy_unref(mid); /* its schedule item holds it (and a copy holds what it reads) */
    if (s) return s;
    *x = mid, from = l, fresh = true;
    node_st(mid, st);
  }
  return TKC_OK;
}

/* a buffer (or a node computed by an earlier kernel) read through its view and the moves */
static tkc_status load_view(kernel *k, tkc_lazy *n, const tkc_st *st, tkc_uop **out);
static tkc_status leaf_load(kernel *k, tkc_lazy *n, const moves *mv, tkc_uop **out) {
  tkc_st st;
  tkc_status s = tkc_lazy_check_stamp(n, "realize");
  if (s) return s;
  if ((s = leaf_view(k, &n, mv, &st))) return s;
  return load_view(k, n, &st, out);
}

/* n (a buffer, or a node an earlier kernel computes) read through st */
static tkc_status load_view(kernel *k, tkc_lazy *n, const tkc_st *st, tkc_uop **out) {
  tkc_graph *g = k->s->g;
  const void *key = n->kind == TKC_LZ_BUFFER ? (const void *)n->rbuf : (const void *)n;
  int i = 0;
  while (i < k->ninputs && k->input_keys[i] != key) i++;
  if (i == k->ninputs) {
    if (i == MAX_INPUTS) return tkc_err(TKC_EUNSUPPORTED, "a kernel reads more than %d buffers", MAX_INPUTS);
    k->inputs[i] = n;
    k->input_keys[i] = key;
    k->ninputs++;
  }
  tkc_uop *src[2] = {global_uop(g, i + 1, n->dtype), view_uop(g, st, tkc_dt_of(TKC_VOID))};
  *out = tkc_uop_new(g, TKC_OP_LOAD, tkc_dt_of(n->dtype), 2, src, tkc_arg_none());
  return *out ? TKC_OK : tkc_last_status();
}

/* ---------------------------------------------------------------- fusion decisions */

/* Does a zero-pad pushed into n's kernel region change values (f(0) != 0 somewhere)? */
/* budget: nodes visited at most (DAGs); past it, unsafe (the pad is then computed first: always right) */
static int pad_unsafe(const tkc_schedule *s, tkc_lazy *n, int *budget) {
  if (--*budget < 0) return 1;
  switch (n->kind) {
  case TKC_LZ_BUFFER: case TKC_LZ_CONST: case TKC_LZ_VAR: case TKC_LZ_IOTA: case TKC_LZ_REDUCE: case TKC_LZ_CONTIGUOUS: return 0;
  default: break;
  }
  if (is_planned(s, n)) return 0;
  if (n->kind == TKC_LZ_ALU && (tkc_op_flags((tkc_op)n->op) & TKC_F_P)) return 1;
  for (int i = 0; i < n->nsrc; i++)
    if (pad_unsafe(s, n->src[i], budget)) return 1;
  return 0;
}

/* Whether the elementwise ops below n (down to buffers, reduces and scheduled nodes), broadcast
 * `factor` times into a reduce, are worth a kernel of their own rather than being recomputed for
 * every output that reads them: a transcendental always; two or more buffers (a ReLU of x + bias,
 * its gradient mask, feeding a matmul) when each value is read 16 or more times. What computes from
 * one buffer and registers (a one-hot comparison of an index, a cast) stays fused, and so does what
 * is read a few times only (layer_norm's stats). Past *budget nodes visited: worth it. */
typedef struct loads_seen {
  int n;
  const void *what[3];
} loads_seen;

static int costly_below(const tkc_schedule *s, const tkc_lazy *n, int64_t factor, int *budget, loads_seen *loads) {
  if (--*budget < 0) return 1;
  if (n->kind == TKC_LZ_BUFFER || n->kind == TKC_LZ_REDUCE || n->kind == TKC_LZ_CONTIGUOUS || is_planned(s, n)) {
    const void *what = n->kind == TKC_LZ_BUFFER ? (const void *)n->rbuf : (const void *)n; /* distinct buffers: x read twice is one */
    for (int i = 0; i < loads->n; i++)
      if (loads->what[i] == what) return 0;
    if (loads->n < (int)TKC_COUNTOF(loads->what)) loads->what[loads->n++] = what;
    return loads->n >= 2 && factor >= 16;
  }
  if (n->kind == TKC_LZ_CONST || n->kind == TKC_LZ_VAR || n->kind == TKC_LZ_IOTA) return 0;
  if (n->kind == TKC_LZ_ALU && (n->op == TKC_OP_EXP2 || n->op == TKC_OP_LOG2 || n->op == TKC_OP_SIN || n->op == TKC_OP_POW)) return 1;
  for (int i = 0; i < n->nsrc; i++)
    if (costly_below(s, n->src[i], factor, budget, loads)) return 1;
  return 0;
}

/* how many times the expands in mv repeat each element of what they read */
static int64_t expand_factor(const moves *mv) {
  int64_t f = 1;
  for (const moves *p = mv; p && p->m; p = p->rest) {
    const tkc_lazy *m = p->m, *in = m->src[0];
    if (m->op != TKC_OP_EXPAND) continue;
    for (int d = 0; d < m->ndim && d < in->ndim; d++)
      if (in->shape[d] == 1 && m->shape[d] > 1 && !tkc_dim_is_var(m->shape[d])) f = f > INT32_MAX ? f : f * m->shape[d];
  }
  return f;
}

/* Whether reduce n, read through mv, is computed inside the kernel that reads it (host devices): mv
 * only broadcasts n's value back along the dims it reduces, so each row of n's input (the kernel's
 * own space there) is reduced where the kernel reads it, in loops of its own (codegen/lowerer.c
 * lower_nested), while the row is in the cache: a softmax's max and sum in the kernel that writes
 * exp(x - max) / sum, one pass over x from memory instead of three. The reduced dims are the last
 * ones (the kernel's inner loops: each row is reduced once), rows of at most 64K elements (a loop
 * over each stays in L2) and 8 or more of them (the kernel splits them across cores). */
bool tkc_schedule_nests_rows(const tkc_ctx *ctx, int64_t rows, int64_t row) {
  return ctx->dev->impl->host_memory && rows >= 8 && row >= 2 && row <= 65536;
}

static bool nests(const kernel *k, const tkc_lazy *n, const moves *mv, int in_reduce) {
  const tkc_lazy *x = n->src[0], *in = mv->m ? mv->m->src[0] : NULL;
  if (!mv->n || !mv->expand || x->ndim != n->ndim) return false;
  /* mv starts at n's shape (not so for an epilogue read through reshapes below it: reduce_below) */
  if (in->ndim != n->ndim || memcmp(in->shape, n->shape, sizeof(int64_t) * (size_t)n->ndim)) return false;
  for (const moves *p = mv; p && p->m; p = p->rest)
    if (p->m->op != TKC_OP_RESHAPE && p->m->op != TKC_OP_EXPAND) return false;
  int64_t rows = 1, row = 1;
  for (int d = 0; d < x->ndim; d++) { /* loops run in dim order, a reduce's after the output's: the reduced dims
                                        * must be the last ones that vary where n is read (else each row's loops
                                        * would run again for every position of a later one) */
    if (tkc_dim_is_var(x->shape[d])) return false;
    bool varies = x->shape[d] > 1 && (!in_reduce || k->enclosing >> d & 1);
    if (n->arg[d]) row *= x->shape[d];
    else if (varies && row > 1) return false;
    else rows *= x->shape[d];
    if (n->arg[d] && x->shape[d] > 1 && in_reduce && !(k->enclosing >> d & 1)) return false;
  }
  if (!tkc_schedule_nests_rows(k->root->ctx, rows, row)) return false;
  tkc_st st;
  node_st(n, &st);
  for (const moves *p = mv; p && p->m; p = p->rest)
    if (tkc_lazy_apply_move(&st, p->m)) return false;
  const tkc_view *v = &st.views[0];
  if (st.nviews != 1 || v->ndim != x->ndim || v->has_mask || v->offset || v->offset_var) return false;
  int64_t stride = 1;
  for (int d = x->ndim - 1; d >= 0; d--) { /* n's values at x's positions, broadcast along the reduced dims */
    if (v->shape[d] != x->shape[d]) return false;
    if (n->arg[d] ? v->strides[d] != 0 : v->shape[d] > 1 && v->strides[d] != stride) return false;
    if (!n->arg[d]) stride *= x->shape[d];
  }
  return true;
}

/* ---------------------------------------------------------------- building */

static tkc_status build(kernel *k, tkc_lazy *n, const moves *mv, int in_reduce, tkc_uop **out);
static const tkc_lazy *reduce_below(const tkc_schedule *s, const tkc_lazy *n, int depth, int *budget);

/* realize n as its own kernel first, then read it */
static tkc_status cut(kernel *k, tkc_lazy *n, const moves *mv, tkc_uop **out) {
  tkc_status s = schedule_node(k->s, n);
  return s ? s : leaf_load(k, n, mv, out);
}

static tkc_status build_node(kernel *k, tkc_lazy *n, const moves *mv, int in_reduce, tkc_uop **out) {
  tkc_graph *g = k->s->g;
  if (n->kind == TKC_LZ_BUFFER || is_planned(k->s, n)) return leaf_load(k, n, mv, out);
  tkc_st st;
  tkc_status s;
  tkc_uop *src[3];
  tkc_lazy *at = n; /* a leaf: what the kernel reads; a chain of moves: the node below it */
  switch (n->kind) {
  case TKC_LZ_CONST: {
    if ((s = leaf_view(k, &at, mv, &st))) return s;
    if (at != n) return load_view(k, at, &st, out); /* its view did not merge: a copy of it */
    tkc_uop *view = st_masked(&st) ? view_uop(g, &st, tkc_dt_of(TKC_VOID)) : NULL;
    *out = tkc_uop_new(g, TKC_OP_CONST, tkc_dt_of(n->dtype), view ? 1 : 0, &view, tkc_value_to_arg(n->value, n->dtype));
    return *out ? TKC_OK : tkc_last_status();
  }
  case TKC_LZ_VAR: { /* the kernel's DEFINE_VAR parameter; 0 where a pad masks it (var * masked 1) */
    const tkc_ctx_var *v = &n->ctx->vars[n->value.i];
    tkc_uop *var = tkc_uop_var(g, v->name, v->min, v->max);
    if ((s = leaf_view(k, &at, mv, &st))) return s;
    if (at != n) return load_view(k, at, &st, out);
    tkc_uop *view = st_masked(&st) ? view_uop(g, &st, tkc_dt_of(TKC_VOID)) : NULL;
    *out = var;
    if (view && var) {
      tkc_uop *one = tkc_uop_new(g, TKC_OP_CONST, tkc_dt_of(TKC_INT32), 1, &view, tkc_arg_int(1));
      *out = one ? tkc_uop_alu2(g, TKC_OP_MUL, var, one) : NULL;
    }
    return *out ? TKC_OK : tkc_last_status();
  }
  case TKC_LZ_IOTA:
    if ((s = leaf_view(k, &at, mv, &st))) return s;
    if (at != n) return load_view(k, at, &st, out);
    *out = view_uop(g, &st, tkc_dt_of(TKC_INT32));
    return *out ? TKC_OK : tkc_last_status();
  case TKC_LZ_ALU:
  case TKC_LZ_CAST:
  case TKC_LZ_BITCAST:
    if (mv->n && !mv->reshapes) { /* the epilogue of a reduce read through a view (a conv's BN + ReLU read
                                    * by the next conv's windows): computed once, by the reduce's kernel, not per read */
      int budget = 64;
      const tkc_lazy *r = reduce_below(k->s, n, 0, &budget);
      if (r && !nests(k, r, mv, in_reduce)) return cut(k, n, mv, out); /* (a nested reduce's epilogue: computed where read) */
    } else if (n != k->root && one_buffer_for_readers(k->s, n)) {
      /* an epilogue that another reader reads through such a view is cut there (above): every reader
       * then reads that one kernel's buffer, whichever is built first (a ResNet block's output, read
       * by the next conv's padded windows and by the skip connection's add) */
      int budget = 64;
      if (reduce_below(k->s, n, 0, &budget)) return cut(k, n, mv, out);
    }
    if (in_reduce && mv->expand) { /* broadcast into a reduce: each value would be recomputed per use */
      int budget = 256;
      loads_seen loads = {0};
      if (costly_below(k->s, n, expand_factor(mv), &budget, &loads)) return cut(k, n, mv, out);
    }
    for (int i = 0; i < n->nsrc; i++)
      if ((s = build(k, n->src[i], mv, in_reduce, &src[i]))) return s;
    {
      tkc_op op = n->kind == TKC_LZ_ALU ? (tkc_op)n->op : n->kind == TKC_LZ_CAST ? TKC_OP_CAST : TKC_OP_BITCAST;
      *out = tkc_uop_new(g, op, tkc_dt_of(n->dtype), n->nsrc, src, tkc_arg_none());
    }
    return *out ? TKC_OK : tkc_last_status();
  case TKC_LZ_MOVE: { /* the whole chain of movement ops at once: one frame, however long it is */
    const moves *next = mv;
    bool pad_checked = false, unsafe = false;
    kernel_mark mark = kernel_marked(k);
    for (; at->kind == TKC_LZ_MOVE && !is_planned(k->s, at); at = at->src[0]) {
      if (!(next = moves_push(k, at, next))) return tkc_last_status();
      if (next->pad && !pad_checked) { /* (below every move of the chain is the same node) */
        int budget = 4096;
        pad_checked = true;
        unsafe = pad_unsafe(k->s, at->src[0], &budget);
      }
    }
    /* a zero-pad would change what is below it: that is computed first, and padded as it is read */
    s = unsafe ? cut(k, at, next, out) : build(k, at, next, in_reduce, out);
    while (s == TKC_ESHAPE && k->overflow) { /* a leaf's views stopped merging at k->overflow */
      const moves *l = mv;
      tkc_lazy *m = n;
      for (; m != at; m = m->src[0]) {
        if (!(l = moves_push(k, m, l))) return tkc_last_status();
        if (m == k->overflow) break;
      }
      if (m == at) return s; /* a move of a step above: its to handle */
      if (m->src[0]->kind == TKC_LZ_BUFFER) return tkc_err(TKC_EINTERNAL, "schedule: a full view over a buffer");
      /* one of this chain's: what it reads gets a kernel of its own; this one reads that */
      k->overflow = NULL;
      kernel_back_to(k, &mark);
      s = cut(k, m->src[0], l, out);
    }
    return s;
  }
  case TKC_LZ_REDUCE: {
    tkc_lazy *x = n->src[0];
    bool nested = n != k->root && nests(k, n, mv, in_reduce);
    if (n != k->root && !nested && shared_reduce(k->s, n)) return cut(k, n, mv, out);
    /* reshapes that lead back to this reduce's shape cancel out (the kernel may live in its space) */
    int cancel = mv->n > 0 && mv->reshapes;
    if (cancel) {
      const tkc_lazy *end = mv->last;
      cancel = end->ndim == n->ndim && !memcmp(end->shape, n->shape, sizeof(int64_t) * (size_t)n->ndim);
    }
    int same = !k->has_reduce || (k->reduce_shape_of->ndim == n->ndim && !memcmp(k->full, x->shape, sizeof(int64_t) * (size_t)x->ndim) &&
                                  !memcmp(k->reduce_shape_of->shape, n->shape, sizeof(int64_t) * (size_t)n->ndim));
    if (!nested && ((mv->n && !cancel) || in_reduce || !same)) return cut(k, n, mv, out);
    if (!nested && !k->has_reduce) {
      k->has_reduce = 1;
      memcpy(k->full, x->shape, sizeof(int64_t) * (size_t)x->ndim);
      k->reduce_shape_of = n;
    }
    uint32_t enclosing = k->enclosing;
    k->enclosing = 0;
    for (int i = 0; i < n->ndim; i++) k->enclosing |= (n->arg[i] ? 1u : 0u) << i;
    s = build(k, x, &no_moves, 1, &src[0]);
    k->enclosing = enclosing;
    if (s) return s;
    tkc_arg axes[TKC_MAX_DIMS], a[2];
    uint32_t na = 0;
    for (int i = 0; i < n->ndim; i++)
      if (n->arg[i]) axes[na++] = tkc_arg_int(i);
    a[0] = tkc_arg_int(n->op);
    a[1] = tkc_arg_tuple(axes, na);
    *out = tkc_uop_new(g, TKC_OP_REDUCE_AXIS, tkc_dt_of(n->dtype), 1, src, tkc_arg_tuple(a, 2));
    return *out ? TKC_OK : tkc_last_status();
  }
  case TKC_LZ_CONTIGUOUS:
    if (n == k->root) return build(k, n->src[0], mv, in_reduce, out);
    return cut(k, n, mv, out);
  default: return tkc_err(TKC_EINTERNAL, "schedule: unexpected node kind %d", (int)n->kind);
  }
}

static tkc_status build(kernel *k, tkc_lazy *n, const moves *mv, int in_reduce, tkc_uop **out) {
  tkc_uop *u = memo_get(k, n, mv, in_reduce);
  if (u) {
    *out = u;
    return TKC_OK;
  }
  tkc_status s = build_node(k, n, mv, in_reduce, out);
  if (!s) memo_put(k, n, mv, in_reduce, *out);
  return s;
}

/* A kernel shape as the SINK's arg: an int per dim, or (name, min, max, c) for a dim that is
 * variable + c (the lowerer's loops stop there; buffers and views are at its largest value). */
static void shape_arg(const tkc_ctx *ctx, tkc_arg *storage, tkc_arg (*sym)[4], int ndim, const int64_t *shape, tkc_arg *out) {
  for (int i = 0; i < ndim; i++) {
    int64_t c = 0;
    const tkc_ctx_var *v = tkc_dim_is_var(shape[i]) ? tkc_dim_decode(ctx, shape[i], &c, "schedule") : NULL;
    if (!v) {
      storage[i] = tkc_arg_int(shape[i]);
      continue;
    }
    sym[i][0] = tkc_arg_str(v->name), sym[i][1] = tkc_arg_int(v->min), sym[i][2] = tkc_arg_int(v->max), sym[i][3] = tkc_arg_int(c);
    storage[i] = tkc_arg_tuple(sym[i], 4);
  }
  *out = tkc_arg_tuple(storage, (uint32_t)ndim);
}

/* The reduce the root's values come from through elementwise ops and reshapes, if any: the kernel
 * then computes in that reduce's shape (the same elements: reshapes keep row-major order), so a
 * reduce whose result is reshaped (keepdim=0) still fuses with what follows it. */
static const tkc_lazy *reduce_below(const tkc_schedule *s, const tkc_lazy *n, int depth, int *budget) {
  /* budget: nodes visited at most (a DAG that reads each node twice would take 2^depth steps) */
  if (depth > 64 || --*budget < 0 || n->kind == TKC_LZ_BUFFER || is_planned(s, n)) return NULL;
  if (n->kind == TKC_LZ_REDUCE) return depth && shared_reduce(s, n) ? NULL : n;
  if (n->kind == TKC_LZ_MOVE && n->op != TKC_OP_RESHAPE) return NULL;
  if (n->kind == TKC_LZ_CONTIGUOUS && depth > 0) return NULL;
  for (int i = 0; i < n->nsrc; i++) {
    const tkc_lazy *r = reduce_below(s, n->src[i], depth + 1, budget);
    if (r) return r;
  }
  return NULL;
}

/* Schedules the kernel that computes n (not a BUFFER, not a MOVE) and everything it needs first. */
/* An assigned node's kernel writes its target buffer: reading that buffer in the same kernel is safe
 * only element for element (each element read through the store's own view: in a reduce kernel,
 * after the reduce, by the thread that then writes it: a gradient added into its buffer as the
 * matmul that computes it ends). 1 when it reads it otherwise, 0 when not, -1 (error set) when out
 * of memory. */
/* input in holds target's buffer when the kernel runs: a buffer over it, or a pending assign of it
 * (an earlier kernel of the schedule writes it there) */
static bool reads_buffer(const tkc_lazy *in, const tkc_rbuf *target) {
  return in->kind == TKC_LZ_BUFFER ? in->rbuf == target : in->target == target;
}

/* whether one of the kernel's inputs holds target's buffer */
static bool reads_target(const kernel *k, const tkc_rbuf *target) {
  for (int i = 0; target && i < k->ninputs; i++)
    if (reads_buffer(k->inputs[i], target)) return true;
  return false;
}

static int reads_target_elsewhere(const kernel *k, const tkc_uop *sink, const tkc_rbuf *target) {
  const tkc_uop *store = sink->src[0], *out_view = store->src[1];
  if (!reads_target(k, target)) return 0;
  if (k->root->ctx->dev->impl->no_write_aliasing) return 1;
  size_t n = 0;
  tkc_uop **all = tkc_toposort(sink, &n);
  if (!all) return -1;
  int unsafe = 0;
  for (size_t j = 0; j < n && !unsafe; j++) {
    const tkc_uop *u = all[j];
    if (u->op != TKC_OP_LOAD || u->nsrc < 2 || u->src[0]->op != TKC_OP_DEFINE_GLOBAL || u->src[0]->arg.kind != TKC_ARG_INT) continue;
    int64_t g = u->src[0]->arg.v.i;
    if (g < 1 || g > k->ninputs) continue;
    const tkc_lazy *in = k->inputs[g - 1];
    if (reads_buffer(in, target))
      unsafe = u->src[1]->op != out_view->op || !tkc_arg_eq(&u->src[1]->arg, &out_view->arg);
  }
  tkc_free(all);
  return unsafe;
}

/* the node a view assign writes over when that is a pending assign of the buffer (its write comes
 * first), else NULL */
static const tkc_lazy *written_over(const tkc_lazy *n) {
  if (!tkc_lazy_is_view_assign(n)) return NULL;
  const tkc_lazy *b = n->src[1];
  while (b->kind == TKC_LZ_MOVE) b = b->src[0];
  return b->kind == TKC_LZ_BUFFER ? NULL : b;
}

static tkc_status schedule_node(tkc_schedule *s, tkc_lazy *n) {
  if (is_planned(s, n)) return TKC_OK;
  /* an assign into a view: the kernel computes the value (the view's shape) and stores it through
   * the view into the base's buffer; the value is its root unless it is a kernel boundary itself */
  const bool into_view = tkc_lazy_is_view_assign(n);
  tkc_lazy *value = into_view ? n->src[0] : n;
  if (into_view && written_over(n)) {
    tkc_status st = schedule_node(s, (tkc_lazy *)written_over(n));
    if (st) return st;
  }
  kernel k = {.s = s, .root = into_view && value->kind != TKC_LZ_CONTIGUOUS ? value : n};
  const moves *space = &no_moves;
  int budget = 4096;
  const tkc_lazy *r = reduce_below(s, k.root, 0, &budget);
  tkc_lazy *to_space = NULL; /* reshape root shape -> the reduce's shape */
  if (r && (r->ndim != value->ndim || memcmp(r->shape, value->shape, sizeof(int64_t) * (size_t)value->ndim))) {
    to_space = tkc_lz_move_node(k.root, r->ndim, r->shape);
    if (!to_space) return tkc_last_status();
    k.to_space = to_space;
    if (!(space = moves_push(&k, to_space, &no_moves))) {
      kernel_free(&k);
      tkc_lazy_unref(to_space);
      return tkc_last_status();
    }
  }
  int ndim = to_space ? to_space->ndim : value->ndim;
  const int64_t *shape = to_space ? to_space->shape : value->shape;
  tkc_uop *computed = NULL;
  tkc_status st = build(&k, k.root, space, 0, &computed);
  if (st == TKC_ESHAPE && k.overflow) /* (every move is pushed by a step of this kernel, which handles it) */
    st = tkc_err(TKC_EINTERNAL, "schedule: a view needs more than %d stacked views", TKC_MAX_VIEWS);
  tkc_st out_st; /* where the kernel stores: its own buffer, or the view an assign writes through */
  if (!st && into_view) {
    st = tkc_lazy_assign_view_st(n, &out_st);
    if (!st && to_space && tkc_st_reshape(&out_st, ndim, shape))
      st = tkc_err(TKC_EUNSUPPORTED, "assign: the destination view seen in the shape of the reduce that computes the value needs more than %d "
                   "stacked views (tkc_contiguous the value)", TKC_MAX_VIEWS);
  } else if (!st) tkc_st_contiguous_max(&out_st, n->ctx, ndim, shape);
  if (!st && s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 8;
    tkc_sched_item *items = tkc_realloc(s->items, cap * sizeof *items);
    if (!items) st = tkc_err(TKC_ENOMEM, "out of memory scheduling");
    else {
      s->items = items;
      s->cap = cap;
    }
  }
  if (!st) {
    tkc_graph *g = s->g;
    tkc_uop *src[3] = {global_uop(g, 0, n->dtype), view_uop(g, &out_st, tkc_dt_of(TKC_VOID)), computed};
    tkc_arg store_arg = reads_target(&k, n->target) ? tkc_arg_int(TKC_STORE_OUTPUT_READ) : tkc_arg_none();
    tkc_uop *store = tkc_uop_new(g, TKC_OP_STORE, tkc_dt_of(TKC_VOID), 3, src, store_arg);
    tkc_arg shapes[2], so[TKC_MAX_DIMS], sf[TKC_MAX_DIMS], syo[TKC_MAX_DIMS][4], syf[TKC_MAX_DIMS][4];
    shape_arg(n->ctx, so, syo, ndim, shape, &shapes[0]);
    shape_arg(n->ctx, sf, syf, ndim, k.has_reduce ? k.full : shape, &shapes[1]);
    tkc_uop *sink = store ? tkc_uop_new(g, TKC_OP_SINK, tkc_dt_of(TKC_VOID), 1, &store, tkc_arg_tuple(shapes, 2)) : NULL;
    int unsafe = sink && n->target ? reads_target_elsewhere(&k, sink, n->target) : 0;
    if (!sink || unsafe < 0) st = tkc_last_status();
    else if (unsafe) { /* compute the value into a buffer of its own first; this kernel then copies it */
      tkc_lazy *c = tkc_lazy_new(n->ctx, TKC_LZ_CONTIGUOUS, value->dtype, value->ndim, value->shape);
      if (!c) st = tkc_last_status();
      else {
        tkc_lazy_set_src(c, 0, n->src[0]);
        tkc_lazy_unref(n->src[0]);
        n->src[0] = c; /* (n's reference) */
        kernel_free(&k);
        tkc_lazy_unref(to_space);
        return schedule_node(s, n);
      }
    } else {
      tkc_sched_item *it = &s->items[s->n++];
      it->out = n;
      it->ast = sink;
      it->ninputs = k.ninputs;
      tkc_lazy_ref(n);
      for (int i = 0; i < k.ninputs; i++) {
        it->inputs[i] = k.inputs[i];
        tkc_lazy_ref(k.inputs[i]);
      }
    }
  }
  kernel_free(&k);
  tkc_lazy_unref(to_space);
  return st;
}

/* item j must run after item i: it reads what i computes, i reads the old contents of the buffer j
 * assigns, or j writes into a view of what i assigned (over its result, after those who read it) */
static int must_follow(const tkc_sched_item *j, const tkc_sched_item *i) {
  for (int k = 0; k < j->ninputs; k++)
    if (j->inputs[k] == i->out) return 1;
  if (!j->out->target) return 0;
  const tkc_lazy *over = written_over(j->out);
  if (over && i->out == over) return 1;
  for (int k = 0; k < i->ninputs; k++) {
    const tkc_lazy *in = i->inputs[k];
    if ((in->kind == TKC_LZ_BUFFER && in->rbuf == j->out->target) || (over && in == over)) return 1;
  }
  return 0;
}

/* the items in an order that keeps must_follow, the scheduled order where it can (stable) */
static tkc_status order_items(tkc_schedule *s) {
  bool any = false;
  for (size_t i = 0; i < s->n; i++) any |= s->items[i].out->target != NULL;
  if (!any) return TKC_OK; /* the scheduled order already follows the data */
  tkc_sched_item *sorted = tkc_malloc(s->n * sizeof *sorted);
  bool *done = tkc_calloc(s->n, sizeof *done);
  if (!sorted || !done) {
    tkc_free(sorted), tkc_free(done);
    return tkc_err(TKC_ENOMEM, "out of memory scheduling");
  }
  size_t m = 0;
  while (m < s->n) {
    size_t pick = s->n;
    for (size_t j = 0; j < s->n && pick == s->n; j++) {
      if (done[j]) continue;
      bool ready = true;
      for (size_t i = 0; i < s->n && ready; i++) ready = i == j || done[i] || !must_follow(&s->items[j], &s->items[i]);
      if (ready) pick = j;
    }
    if (pick == s->n) {
      tkc_free(sorted), tkc_free(done);
      return tkc_err(TKC_EUNSUPPORTED, "assign: a tensor is read as it was before an assign and as it is after it in one realize (realize the assign first)");
    }
    done[pick] = true;
    sorted[m++] = s->items[pick];
  }
  memcpy(s->items, sorted, s->n * sizeof *sorted);
  tkc_free(sorted), tkc_free(done);
  return TKC_OK;
}

/* t, a chain of movement ops, becomes a view of the buffer below it when realized
 * (tkc_lazy_become_view): where the chain's views stop merging (more than TKC_MAX_VIEWS stacked
 * ones), the node below the move that does not fit gets a kernel of its own (a contiguous copy) and
 * the view starts again from that buffer. Iterative: chains of any length. */
static tkc_status plan_view(tkc_schedule *s, tkc_lazy *t) {
  size_t len = 0;
  tkc_lazy *base = t;
  for (; base->kind == TKC_LZ_MOVE && !is_planned(s, base); base = base->src[0]) len++;
  if (!len) return TKC_OK;
  tkc_lazy **chain = tkc_malloc(len * sizeof *chain); /* bottom up */
  if (!chain) return tkc_err(TKC_ENOMEM, "out of memory scheduling a view");
  size_t i = len;
  for (tkc_lazy *m = t; m != base; m = m->src[0]) chain[--i] = m;
  tkc_st st;
  node_st(base, &st); /* (a node a kernel computes is contiguous in its buffer) */
  tkc_status r = TKC_OK;
  bool fresh = false; /* st was just started at a node realized for this, nothing applied yet */
  for (i = 0; i < len && !r;) {
    bool full = st.nviews == TKC_MAX_VIEWS;
    if (!(r = tkc_lazy_apply_move(&st, chain[i]))) {
      i++, fresh = false;
      continue;
    }
    if (r != TKC_ESHAPE || !full || fresh) break;
    r = TKC_OK;
    /* realize what the move reads (where that is the base, a buffer with a full stack of views
     * already: the move's own result, whose kernel then reads a copy of the base) */
    tkc_lazy *mid = chain[i ? i - 1 : 0];
    if (!s->g && !(s->g = tkc_graph_new())) r = tkc_last_status();
    if (!r) r = schedule_node(s, mid);
    node_st(mid, &st); /* (planned: contiguous) */
    i += !i, fresh = true;
  }
  tkc_free(chain);
  return r;
}

tkc_status tkc_schedule_build_many(tkc_schedule *s, int n, tkc_lazy *const *ts) {
  memset(s, 0, sizeof *s);
  tkc_lazy **roots = tkc_malloc((size_t)(n > 0 ? n : 1) * sizeof *roots);
  if (!roots) return tkc_err(TKC_ENOMEM, "out of memory scheduling");
  int nr = 0;
  for (int i = 0; i < n; i++) {
    tkc_lazy *t = ts[i];
    while (t->kind == TKC_LZ_MOVE) t = t->src[0]; /* a view of a computed node costs no kernel */
    if (t->kind != TKC_LZ_BUFFER) roots[nr++] = t;
  }
  tkc_status st = TKC_OK;
  if (nr && !(s->g = tkc_graph_new())) st = tkc_last_status();
  if (nr && !st) s->users = count_users(nr, roots);
  for (int r = 0; r < nr && !st; r++) {
    tkc_lazy **cuts;
    size_t ncuts;
    st = deep_cuts(roots[r], &cuts, &ncuts);
    for (size_t i = 0; i < ncuts && !st; i++) st = schedule_node(s, cuts[i]);
    tkc_free(cuts);
    if (!st) st = schedule_node(s, roots[r]);
  }
  for (int i = 0; i < n && !st; i++)
    if (ts[i]->kind == TKC_LZ_MOVE) st = plan_view(s, ts[i]);
  users_free(s->users);
  s->users = NULL;
  tkc_free(roots);
  if (!st) st = order_items(s);
  return st;
}

tkc_status tkc_schedule_build(tkc_schedule *s, tkc_lazy *t) { return tkc_schedule_build_many(s, 1, &t); }

void tkc_schedule_free(tkc_schedule *s) {
  for (size_t i = 0; i < s->n; i++) {
    tkc_lazy_unref(s->items[i].out);
    for (int j = 0; j < s->items[i].ninputs; j++) tkc_lazy_unref(s->items[i].inputs[j]);
  }
  tkc_free(s->items);
  tkc_graph_free(s->g);
  memset(s, 0, sizeof *s);
}
