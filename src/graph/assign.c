/* In-place updates (tkc_assign) and realizing several tensors in one schedule (tkc_realize_all).
 *
 * tkc_assign(dst, value) makes dst's handles (every handle of that tensor) a lazy node that, when realized, is computed by a kernel
 * writing dst's own buffer (node->target): other views of that buffer see the new values, and a jit
 * replays the write into the same buffer. The scheduler keeps it safe: a kernel that reads the
 * buffer it writes other than element for element first computes the value elsewhere, and kernels
 * reading the old contents run before the write (graph/schedule.c). */
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

tkc_status tkc_assign(tkc_tensor *dst, tkc_tensor *value) {
  if (tkc_check(dst) || tkc_check(value)) return tkc_last_status();
  tkc_lazy *d = dst->node, *v = value->node;
  if (dst->ctx != value->ctx) return tkc_err(TKC_EINVAL, "assign: dst and value belong to different ctxs");
  if (d->dtype != v->dtype || d->ndim != v->ndim || memcmp(d->shape, v->shape, sizeof(int64_t) * (size_t)d->ndim))
    return tkc_err(TKC_ESHAPE, "assign: dst is a %s tensor of shape %s, value a %s tensor of shape %s (they must match: tkc_cast / tkc_expand it first)",
                   tkc_dtype_str(d->dtype), TKC_NODE_SHAPE(d), tkc_dtype_str(v->dtype), TKC_NODE_SHAPE(v));
  if (tkc_shape_is_symbolic(d->ndim, d->shape))
    return tkc_err(TKC_EUNSUPPORTED, "assign: dst has variable-size dims %s (assign to a fixed-size tensor)", TKC_NODE_SHAPE(d));
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
