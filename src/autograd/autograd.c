/* The gradient API on tensors (tkc.h "gradients"): requires_grad, backward, grad, gradient, detach,
 * zero_grad. The walk and the rules are gradient.c's. */
#include <string.h>
#include "autograd/gradient.h"
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

static void add_into(tkc_lazy *leaf, tkc_lazy *g, void *ctx) {
  accum *a = ctx;
  a->found++;
  if (a->st) return;
  if (!leaf->grad) {
    a->st = tkc_lazy_set_grad(leaf, g);
    return;
  }
  tkc_lazy *s[2] = {leaf->grad, g}, *sum = tkc_lz_alu(TKC_OP_ADD, 2, s);
  a->st = sum ? tkc_lazy_set_grad(leaf, sum) : tkc_last_status();
  tkc_lazy_unref(sum);
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

int tkc_has_grad(const tkc_tensor *t) { return tkc_check(t) ? -1 : t->node->grad != NULL; }

tkc_tensor *tkc_grad(tkc_tensor *t) {
  if (tkc_check(t)) return NULL;
  tkc_lazy *n = t->node;
  if (!n->requires_grad)
    return tkc_err_null(TKC_EINVAL, "grad: the %s tensor of shape %s does not require a gradient (tkc_requires_grad)", tkc_dtype_str(n->dtype),
                        TKC_NODE_SHAPE(n));
  if (!n->grad)
    return tkc_err_null(TKC_EINVAL, "grad: the %s tensor of shape %s has no gradient: no tkc_backward since tkc_zero_grad, or the loss does not depend on it",
                        tkc_dtype_str(n->dtype), TKC_NODE_SHAPE(n));
  tkc_lazy_ref(n->grad);
  return tkc_wrap(t->ctx, n->grad);
}

tkc_status tkc_zero_grad(tkc_tensor *t) {
  if (tkc_check(t)) return tkc_last_status();
  tkc_lazy_set_grad(t->node, NULL);
  return TKC_OK;
}

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
