/* In-place updates (tkc_assign) and realizing several tensors in one schedule (tkc_realize_all).
 *
 * tkc_assign(dst, value) makes dst's handles (every handle of that tensor) a lazy node that, when realized, is computed by a kernel
 * writing dst's own buffer (node->target): other views of that buffer see the new values, and a jit
 * replays the write into the same buffer. The scheduler keeps it safe: a kernel that reads the
 * buffer it writes other than element for element first computes the value elsewhere, and kernels
 * reading the old contents run before the write (graph/schedule.c).
 *
 * dst may also be a view (reshapes, shrinks, permutes, flips: each element of the view one element
 * of the buffer) of a tensor that owns its whole buffer: tinygrad's cache[:, pos:pos+1].assign(row).
 * The node then stands for the whole base tensor after the write (its handles move to it), its
 * kernel iterates over value only and stores through the view into the base's buffer (the rows a
 * KV cache step writes, not the whole cache), and a shrink at a variable offset takes the
 * variable's value at each realize or jit replay. Its sources: value, and the view (over the base's
 * previous node: the buffer, or a pending assign whose write comes first). */
#include <string.h>
#include "engine/engine.h"
#include "graph/tensor_internal.h"


/* TKC_EINVAL unless d owns its whole buffer (a pending assign's target is such a buffer) */
static tkc_status assignable(const tkc_lazy *d) {
  if (d->target || tkc_lazy_owns_buffer(d)) return TKC_OK;
  return tkc_err(TKC_EINVAL, "assign: the %s tensor of shape %s does not own its whole buffer (a lazy result or a view): realize it, or "
                 "assign to the tensor it is a view of", tkc_dtype_str(d->dtype), TKC_NODE_SHAPE(d));
}

tkc_lazy *tkc_lazy_assign(tkc_lazy *d, tkc_lazy *v) {
  if (assignable(d)) return NULL;
  tkc_lazy *a = tkc_lazy_new(d->ctx, TKC_LZ_CONTIGUOUS, d->dtype, d->ndim, d->shape);
  if (!a) return NULL;
  tkc_lazy_set_src(a, 0, v);
  a->target = d->target ? d->target : d->rbuf;
  a->target->refs++;
  a->target->in_place = true;
  return a;
}

void tkc_ctx_redirect(tkc_ctx *ctx, tkc_lazy *from, tkc_lazy *to) {
  for (tkc_tensor *h = ctx->live; h; h = h->next)
    if (h->node == from) {
      tkc_lazy_ref(to);
      h->node = to;
      tkc_lazy_unref(from);
    }
}

/* the node below the movement ops of a view (d itself when it is none) */
static tkc_lazy *view_base(tkc_lazy *d) {
  while (d->kind == TKC_LZ_MOVE) d = d->src[0];
  return d;
}

tkc_status tkc_lazy_assign_view_st(const tkc_lazy *a, tkc_st *st) {
  const tkc_lazy *few[32], **chain = few;
  size_t len = 0, cap = sizeof few / sizeof *few;
  const tkc_lazy *b = a->src[1];
  for (; b->kind == TKC_LZ_MOVE; b = b->src[0]) {
    if (len == cap) {
      const tkc_lazy **more = tkc_malloc(2 * cap * sizeof *more);
      if (!more) {
        if (chain != few) tkc_free(chain);
        return tkc_err(TKC_ENOMEM, "out of memory scheduling an assign");
      }
      memcpy(more, chain, len * sizeof *chain);
      if (chain != few) tkc_free(chain);
      chain = more, cap *= 2;
    }
    chain[len++] = b;
  }
  tkc_st_contiguous_max(st, b->ctx, b->ndim, b->shape); /* (the base owns its buffer, contiguously) */
  tkc_status s = TKC_OK;
  while (len && !s) s = tkc_lazy_apply_move(st, chain[--len]);
  if (chain != few) tkc_free(chain);
  if (s == TKC_ESHAPE) s = tkc_err(TKC_EUNSUPPORTED, "assign: the destination view needs more than %d stacked views (assign into a simpler view)", TKC_MAX_VIEWS);
  return s;
}

/* the same movement ops as the chain from top down to (not including) below, over base instead: a new reference */
static tkc_lazy *chain_over(tkc_lazy *top, const tkc_lazy *below, tkc_lazy *base) {
  if (top == below) {
    tkc_lazy_ref(base);
    return base;
  }
  tkc_lazy *under = chain_over(top->src[0], below, base);
  if (!under) return NULL;
  tkc_lazy *m = tkc_lazy_new(top->ctx, TKC_LZ_MOVE, top->dtype, top->ndim, top->shape);
  if (m) {
    m->op = top->op;
    memcpy(m->arg, top->arg, sizeof m->arg);
    tkc_lazy_set_src(m, 0, under);
  }
  tkc_lazy_unref(under);
  return m;
}

static const char *move_name(int op) {
  switch (op) {
  case TKC_OP_EXPAND: return "an expand (a broadcast: several elements of the view are one of the buffer)";
  case TKC_OP_PAD: return "a pad (elements of the view outside the buffer)";
  case TKC_MOVE_WINDOW: return "a sliding window (overlapping windows share elements)";
  default: return "a movement op that does not map elements one to one";
  }
}

/* n is the tensor whose buffer target is: the view's base b, or a realized node that sees the whole
 * buffer as it is (a handle kept from before an earlier realize of the tensor) */
static bool is_the_tensor(const tkc_lazy *n, const tkc_lazy *b, const tkc_rbuf *target) {
  return n == b || (n->kind == TKC_LZ_BUFFER && n->rbuf == target && tkc_lazy_owns_buffer(n));
}

/* dst a view: the node of its base after the write; the tensor's handles and the view's move to it */
static tkc_status assign_view(tkc_tensor *dst, tkc_lazy *d, tkc_lazy *v) {
  tkc_lazy *b = view_base(d);
  int64_t len = 0;
  for (const tkc_lazy *m = d; m != b; m = m->src[0], len++)
    if (m->op != TKC_OP_RESHAPE && m->op != TKC_OP_SHRINK && m->op != TKC_OP_PERMUTE && m->op != TKC_OP_FLIP)
      return tkc_err(TKC_EINVAL, "assign: dst is a view through %s of a %s tensor of shape %s: assign into a view made of reshapes, shrinks, "
                     "permutes and flips", move_name(m->op), tkc_dtype_str(b->dtype), TKC_NODE_SHAPE(b));
  if (len > 64) return tkc_err(TKC_EUNSUPPORTED, "assign: dst is a view through %lld movement ops (at most 64)", (long long)len);
  if (!b->target && !tkc_lazy_owns_buffer(b))
    return tkc_err(TKC_EINVAL, "assign: dst is a view of a %s tensor of shape %s that does not own its whole buffer (a lazy result or a "
                   "realized view): realize that tensor first, or assign to a view of the tensor that owns the buffer", tkc_dtype_str(b->dtype), TKC_NODE_SHAPE(b));
  if (tkc_shape_is_symbolic(b->ndim, b->shape))
    return tkc_err(TKC_EUNSUPPORTED, "assign: dst is a view of a tensor with variable-size dims %s (assign to a view of a fixed-size tensor)", TKC_NODE_SHAPE(b));
  tkc_rbuf *target = b->target ? b->target : b->rbuf;
  for (const tkc_tensor *h = dst->ctx->live; h; h = h->next) /* the two writes would have no order */
    if (h->node != b && h->node->kind != TKC_LZ_BUFFER && h->node->target == target)
      return tkc_err(TKC_EINVAL, "assign: dst is a view of the %s tensor of shape %s as it was before an assign still pending: realize "
                     "the tensor first, or assign into a view of it as it is now", tkc_dtype_str(b->dtype), TKC_NODE_SHAPE(b));
  if (v == d) return TKC_OK;
  tkc_lazy *a = tkc_lazy_new(b->ctx, TKC_LZ_CONTIGUOUS, b->dtype, b->ndim, b->shape);
  if (!a) return tkc_last_status();
  tkc_lazy_set_src(a, 0, v);
  tkc_lazy_set_src(a, 1, d);
  a->target = target;
  a->target->refs++;
  tkc_st st;
  tkc_status s = tkc_lazy_assign_view_st(a, &st); /* (the view composes: found now, not at the realize) */
  if (s) {
    tkc_lazy_unref(a);
    return s;
  }
  /* no gradient flows through a partial write: the base stays a leaf, its gradient kept */
  a->detached = 1, a->needs_grad = 0;
  a->requires_grad = b->requires_grad;
  if (b->grad && tkc_lazy_set_grad(a, b->grad)) {
    tkc_lazy_unref(a);
    return tkc_last_status();
  }
  tkc_lazy *view = chain_over(d, b, a); /* dst's handles: the same view of the written tensor */
  if (!view) {
    tkc_lazy_set_grad(a, NULL);
    tkc_lazy_unref(a);
    return tkc_last_status();
  }
  a->target->in_place = true;
  tkc_lazy_set_grad(b, NULL);
  for (tkc_tensor *h = dst->ctx->live; h; h = h->next) /* (b stays alive: the view a reads holds it) */
    if (is_the_tensor(h->node, b, target)) {
      tkc_lazy *old = h->node;
      tkc_lazy_ref(a);
      h->node = a;
      tkc_lazy_unref(old);
    }
  tkc_ctx_redirect(dst->ctx, d, view);
  tkc_lazy_unref(view);
  tkc_lazy_unref(a);
  return TKC_OK;
}

tkc_status tkc_assign(tkc_tensor *dst, tkc_tensor *value) {
  if (tkc_check(dst) || tkc_check(value)) return tkc_last_status();
  tkc_lazy *d = dst->node, *v = value->node;
  if (dst->ctx != value->ctx) return tkc_err(TKC_EINVAL, "assign: dst and value belong to different ctxs");
  if (d->dtype != v->dtype || d->ndim != v->ndim || memcmp(d->shape, v->shape, sizeof(int64_t) * (size_t)d->ndim))
    return tkc_err(TKC_ESHAPE, "assign: dst is a %s tensor of shape %s, value a %s tensor of shape %s (they must match: tkc_cast / tkc_expand it first)",
                   tkc_dtype_str(d->dtype), TKC_NODE_SHAPE(d), tkc_dtype_str(v->dtype), TKC_NODE_SHAPE(v));
  if (tkc_shape_is_symbolic(d->ndim, d->shape))
    return tkc_err(TKC_EUNSUPPORTED, "assign: dst has variable-size dims %s (assign to a fixed-size tensor)", TKC_NODE_SHAPE(d));
  if (d->kind == TKC_LZ_MOVE) return assign_view(dst, d, v);
  if (assignable(d)) return tkc_last_status();
  if (v == d) return TKC_OK;
  tkc_lazy *a = tkc_lazy_assign(d, v);
  if (!a) return tkc_last_status();
  /* the tensor stays what it was for gradients: a leaf, its gradient kept */
  a->requires_grad = d->requires_grad;
  if (a->requires_grad) a->needs_grad = 0;
  if (d->grad && tkc_lazy_set_grad(a, d->grad)) {
    tkc_lazy_unref(a);
    return tkc_last_status();
  }
  tkc_lazy_set_grad(d, NULL);
  /* every handle to the tensor is the tensor: they all see the assign (an optimizer's, the caller's) */
  tkc_ctx_redirect(dst->ctx, d, a);
  tkc_lazy_unref(a); /* (the handles hold it) */
  return TKC_OK;
}

tkc_status tkc_realize_all(int n, tkc_tensor *const *ts) {
  if (n < 0 || (n && !ts)) return tkc_err(TKC_EINVAL, "realize_all: %d tensors at %p", n, (const void *)ts);
  if (!n) return TKC_OK;
  tkc_lazy **nodes = tkc_malloc((size_t)n * sizeof *nodes);
  if (!nodes) return tkc_err(TKC_ENOMEM, "realize_all: out of memory");
  tkc_status st = TKC_OK;
  for (int i = 0; i < n && !st; i++) {
    if (tkc_check(ts[i])) st = tkc_err(TKC_EINVAL, "realize_all: tensor %d: %s", i, tkc_last_error());
    else if (ts[i]->ctx != ts[0]->ctx) st = tkc_err(TKC_EINVAL, "realize_all: tensor %d belongs to another ctx than tensor 0", i);
    else nodes[i] = ts[i]->node;
  }
  if (!st) st = tkc_lazy_realize_all(n, nodes);
  tkc_free(nodes);
  return st;
}
