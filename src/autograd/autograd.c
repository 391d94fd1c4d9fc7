/* The gradient API on tensors (tkc.h "gradients"): requires_grad, backward, grad, gradient, detach,
 * zero_grad. The walk and the rules are gradient.c's. */
#include <string.h>
#include "autograd/autograd.h"
#include "autograd/gradient.h"
#include "engine/engine.h"
#include "graph/tensor_internal.h"

/* TKC_ESHAPE unless t (checked) has one element */
static tkc_status check_loss(const char *who, const tkc_tensor *t) {
  const tkc_lazy *n = t->node;
  if (tkc_shape_is_symbolic(n->ndim, n->shape) || tkc_shape_numel(n->ndim, n->shape) != 1)
    return tkc_err(TKC_ESHAPE, "%s: the loss must have one element, not a %s tensor of shape %s (sum or mean it first)", who,
                   tkc_dtype_str(n->dtype), TKC_NODE_SHAPE(n));
  if (!tkc_dtype_is_float(n->dtype)) return tkc_err(TKC_EDTYPE, "%s: the loss is a %s tensor: only float tensors have gradients", who, tkc_dtype_str(n->dtype));
  return TKC_OK;
}

tkc_status tkc_requires_grad(tkc_tensor *t, int on) {
  if (tkc_check(t)) return tkc_last_status();
  tkc_lazy *n = t->node;
  if (on && !tkc_dtype_is_float(n->dtype))
    return tkc_err(TKC_EDTYPE, "requires_grad: a %s tensor of shape %s: only float tensors have gradients", tkc_dtype_str(n->dtype), TKC_NODE_SHAPE(n));
  n->requires_grad = on != 0;
  return TKC_OK;
}

/* ---------------------------------------------------------------- backward: into each leaf's grad */

static int requires(const tkc_lazy *n, void *ctx) { return (void)ctx, n->requires_grad; }

typedef struct accum {
  int found;
  tkc_status st;
} accum;

/* The first gradient of a leaf gets a zero-filled buffer of its own, and every backward adds into
 * that buffer in place (an assign): a captured step then accumulates on replay as it did when
 * captured (tinygrad#13642: a new gradient tensor per backward replayed the capture-time sum).
 * Leaves with variable-size dims keep a lazy sum (assign needs a fixed-size buffer). */
static void add_into(tkc_lazy *leaf, tkc_lazy *g, void *ctx) {
  accum *a = ctx;
  a->found++;
  if (a->st) return;
  tkc_lazy *old = leaf->grad;
  if (tkc_shape_is_symbolic(leaf->ndim, leaf->shape)) {
    tkc_lazy *s[2] = {old, g}, *sum = old ? tkc_lz_alu(TKC_OP_ADD, 2, s) : g;
    if (old && !sum) a->st = tkc_last_status();
    else a->st = tkc_lazy_set_grad(leaf, sum);
    if (old) tkc_lazy_unref(sum);
    return;
  }
  tkc_lazy *buf = old;
  if (!buf) { /* zeros, realized */
    tkc_tensor *z = tkc_tensor_new(leaf->ctx, leaf->dtype, leaf->ndim, leaf->shape, NULL);
    if (!z) {
      a->st = tkc_last_status();
      return;
    }
    buf = z->node;
    tkc_lazy_ref(buf);
    tkc_tensor_free(z);
  }
  tkc_lazy *s[2] = {buf, g}, *sum = tkc_lz_alu(TKC_OP_ADD, 2, s), *in_place = sum ? tkc_lazy_assign(buf, sum) : NULL;
  a->st = in_place ? tkc_lazy_set_grad(leaf, in_place) : tkc_last_status();
  if (!a->st && old) tkc_ctx_redirect(leaf->ctx, old, in_place); /* handles from tkc_grad see the sum */
  if (!old) tkc_lazy_unref(buf);
  tkc_lazy_unref(sum), tkc_lazy_unref(in_place);
}

static tkc_lazy *ones_like(const tkc_lazy *n) { return tkc_lz_const(n->ctx, n->dtype, 1, n->ndim, n->shape); }

tkc_status tkc_backward(tkc_tensor *loss) {
  if (tkc_check(loss)) return tkc_last_status();
  if (check_loss("backward", loss)) return tkc_last_status();
  tkc_lazy *seed = ones_like(loss->node);
  if (!seed) return tkc_last_status();
  accum a = {0, TKC_OK};
  tkc_status st = tkc_lazy_gradient(loss->node, seed, requires, NULL, true, add_into, &a);
  tkc_lazy_unref(seed);
  if (st) return st;
  if (a.st) return a.st;
  if (!a.found)
    return tkc_err(TKC_EINVAL, "backward: nothing the loss depends on requires a gradient (tkc_requires_grad on the parameters before using them)");
  return TKC_OK;
}

int tkc_requires_grad_of(const tkc_tensor *t) { return tkc_check(t) ? -1 : t->node->requires_grad; }

int tkc_has_grad(const tkc_tensor *t) { return tkc_check(t) ? -1 : t->node->requires_grad && t->node->grad != NULL; }

tkc_tensor *tkc_grad(tkc_tensor *t) {
  if (tkc_check(t)) return NULL;
  tkc_lazy *n = t->node;
  if (!n->requires_grad)
    return tkc_err_null(TKC_EINVAL, "grad: the %s tensor of shape %s does not require a gradient (tkc_requires_grad)", tkc_dtype_str(n->dtype),
                        TKC_NODE_SHAPE(n));
  if (!n->grad)
    return tkc_err_null(TKC_EINVAL, "grad: the %s tensor of shape %s has no gradient: no tkc_backward yet, or the loss does not depend on it",
                        tkc_dtype_str(n->dtype), TKC_NODE_SHAPE(n));
  tkc_lazy_ref(n->grad);
  return tkc_wrap(t->ctx, n->grad);
}

/* A gradient buffer is filled with zeros by a kernel (run now, so a capture records it): the next
 * backward adds into zeros wherever it runs, replays included. The gradient stays (zeros: torch's
 * zero_grad(set_to_none=False)), as a replay could not bring back a gradient the host dropped. A
 * lazy gradient (variable-size dims) is dropped. */
tkc_status tkc_zero_grads(int n, tkc_tensor *const *ts) {
  tkc_lazy **fill = tkc_calloc((size_t)(n > 0 ? n : 1), sizeof *fill);
  if (!fill) return tkc_err(TKC_ENOMEM, "zero_grad: out of memory");
  int nfill = 0;
  tkc_status st = TKC_OK;
  for (int i = 0; i < n && !st; i++) {
    if (tkc_check(ts[i])) {
      st = tkc_last_status();
      break;
    }
    tkc_lazy *x = ts[i]->node, *g = x->grad;
    if (!g) continue;
    if (!g->target && !tkc_lazy_owns_buffer(g)) {
      tkc_lazy_set_grad(x, NULL);
      continue;
    }
    tkc_lazy *zero = tkc_lz_const(x->ctx, g->dtype, 0, g->ndim, g->shape), *a = zero ? tkc_lazy_assign(g, zero) : NULL;
    tkc_lazy_unref(zero);
    if (!a || (st = tkc_lazy_set_grad(x, a))) {
      st = tkc_last_status();
      tkc_lazy_unref(a);
      break;
    }
    tkc_ctx_redirect(x->ctx, g, a);
    fill[nfill++] = a; /* (x holds it) */
  }
  if (!st && nfill) st = tkc_lazy_realize_all(nfill, fill);
  for (int i = 0; i < nfill; i++) tkc_lazy_unref(fill[i]);
  tkc_free(fill);
  return st;
}

tkc_status tkc_zero_grad(tkc_tensor *t) { return tkc_zero_grads(1, &t); }

/* ---------------------------------------------------------------- gradient: functional */

typedef struct targets {
  int n;
  tkc_tensor *const *wrt;
  tkc_lazy **got;
} targets;

static int is_wrt(const tkc_lazy *n, void *ctx) {
  const targets *t = ctx;
  for (int i = 0; i < t->n; i++)
    if (t->wrt[i]->node == n) return 1;
  return 0;
}

static void take(tkc_lazy *node, tkc_lazy *g, void *ctx) {
  targets *t = ctx;
  for (int i = 0; i < t->n; i++)
    if (t->wrt[i]->node == node && !t->got[i]) {
      tkc_lazy_ref(g);
      t->got[i] = g;
    }
}

tkc_status tkc_gradient(tkc_tensor *y, int n, tkc_tensor *const *wrt, tkc_tensor **grads) {
  if (tkc_check(y)) return tkc_last_status();
  if (n < 1 || !wrt || !grads) return tkc_err(TKC_EINVAL, "gradient: needs n >= 1 tensors to differentiate with respect to and room for their gradients");
  for (int i = 0; i < n; i++) grads[i] = NULL;
  for (int i = 0; i < n; i++) {
    if (tkc_check(wrt[i])) return tkc_err(TKC_EINVAL, "gradient: tensor %d to differentiate with respect to: %s", i, tkc_last_error());
    if (wrt[i]->ctx != y->ctx) return tkc_err(TKC_EINVAL, "gradient: tensor %d belongs to another ctx than y", i);
    const tkc_lazy *w = wrt[i]->node;
    if (!tkc_dtype_is_float(w->dtype))
      return tkc_err(TKC_EDTYPE, "gradient: tensor %d is a %s tensor of shape %s: only float tensors have gradients", i, tkc_dtype_str(w->dtype), TKC_NODE_SHAPE(w));
  }
  if (check_loss("gradient", y)) return tkc_last_status();
  tkc_lazy **got = tkc_calloc((size_t)n, sizeof *got), *seed = got ? ones_like(y->node) : NULL;
  if (!seed) return tkc_free(got), tkc_last_status() ? tkc_last_status() : tkc_err(TKC_ENOMEM, "gradient: out of memory");
  targets t = {n, wrt, got};
  tkc_status st = tkc_lazy_gradient(y->node, seed, is_wrt, &t, false, take, &t);
  tkc_lazy_unref(seed);
  for (int i = 0; i < n && !st; i++) { /* not on y's path: zeros */
    tkc_lazy *w = wrt[i]->node, *g = got[i] ? got[i] : tkc_lz_const(w->ctx, w->dtype, 0, w->ndim, w->shape);
    got[i] = NULL;
    if (!g || !(grads[i] = tkc_wrap(y->ctx, g))) st = tkc_last_status();
  }
  if (st)
    for (int i = 0; i < n; i++) tkc_tensor_free(grads[i]), grads[i] = NULL;
  for (int i = 0; i < n; i++) tkc_lazy_unref(got[i]);
  tkc_free(got);
  return st;
}

/* ---------------------------------------------------------------- detach */

tkc_tensor *tkc_detach(tkc_tensor *t) {
  if (tkc_check(t)) return NULL;
  tkc_lazy *n = tkc_lz_move_node(t->node, t->node->ndim, t->node->shape);
  if (!n) return NULL;
  n->detached = 1, n->needs_grad = 0;
  return tkc_wrap(t->ctx, n);
}
