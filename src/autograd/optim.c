/* Optimizers (tinygrad's nn/optim.py): SGD with momentum, Nesterov and weight decay; Adam and AdamW.
 * Built on the public tensor API only: a step reads each parameter's gradient, updates the state and
 * the parameter with tkc_assign, and realizes everything in one schedule. The learning rate and
 * Adam's beta powers are device tensors (updated in place), so a step captured in a tkc_jit replays
 * with the learning rate of each replay. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "autograd/autograd.h"
#include "base/common.h"
#include "tkc.h"

typedef enum { OPT_SGD, OPT_ADAM } opt_kind;

struct tkc_optim {
  tkc_ctx *ctx;
  opt_kind kind;
  int n;
  tkc_tensor **params; /* the caller's handles (not owned: a second handle each, tkc_tensor_ref) */
  tkc_tensor **s1, **s2; /* SGD: momentum buffers; Adam: m, v (NULL until the first step) */
  tkc_tensor *lr;        /* 0-d float32 on the device */
  tkc_tensor *b1_t, *b2_t; /* Adam: beta1^t, beta2^t (0-d float32) */
  double momentum, weight_decay, beta1, beta2, eps;
  int nesterov, decoupled;
};

/* a 0-d float32 tensor realized on the device holding v */
static tkc_tensor *device_scalar(tkc_ctx *ctx, double v) {
  float f = (float)v;
  return tkc_tensor_new(ctx, TKC_FLOAT32, 0, NULL, &f);
}

static bool float_dtype(tkc_dtype dt) { return dt == TKC_FLOAT16 || dt == TKC_BFLOAT16 || dt == TKC_FLOAT32 || dt == TKC_FLOAT64; }

static void shape_str(const tkc_tensor *t, char *buf, size_t n) {
  size_t k = (size_t)snprintf(buf, n, "(");
  for (int i = 0; i < tkc_ndim(t) && k < n; i++) k += (size_t)snprintf(buf + k, n - k, i ? ",%lld" : "%lld", (long long)tkc_dim(t, i));
  if (k < n) snprintf(buf + k, n - k, tkc_ndim(t) == 1 ? ",)" : ")");
}

static tkc_optim *make(const char *who, tkc_ctx *ctx, opt_kind kind, int n, tkc_tensor *const *params, double lr) {
  if (!ctx) return tkc_err_null(TKC_EINVAL, "%s: NULL ctx", who);
  if (n < 1 || !params) return tkc_err_null(TKC_EINVAL, "%s: needs at least one parameter (n = %d)", who, n);
  if (!(lr >= 0) || !isfinite(lr)) return tkc_err_null(TKC_EINVAL, "%s: the learning rate must be finite and >= 0, not %g", who, lr);
  for (int i = 0; i < n; i++) {
    char sh[128];
    if (!params[i] || tkc_ndim(params[i]) < 0) return tkc_err_null(TKC_EINVAL, "%s: parameter %d is NULL or freed", who, i);
    shape_str(params[i], sh, sizeof sh);
    if (!float_dtype(tkc_dtype_of(params[i])))
      return tkc_err_null(TKC_EDTYPE, "%s: parameter %d is a %s tensor of shape %s: only float tensors are trained", who, i, tkc_dtype_name(tkc_dtype_of(params[i])), sh);
    if (!tkc_requires_grad_of(params[i]))
      return tkc_err_null(TKC_EINVAL, "%s: parameter %d is a %s tensor of shape %s that does not require a gradient (tkc_requires_grad)", who, i,
                          tkc_dtype_name(tkc_dtype_of(params[i])), sh);
    for (int k = 0; k < i; k++)
      if (params[k] == params[i]) return tkc_err_null(TKC_EINVAL, "%s: parameter %d is parameter %d again", who, i, k);
  }
  tkc_optim *o = tkc_calloc(1, sizeof *o);
  if (!o) return tkc_err_null(TKC_ENOMEM, "%s: out of memory", who);
  o->ctx = ctx, o->kind = kind, o->n = n;
  o->params = tkc_calloc((size_t)n, sizeof *o->params);
  o->s1 = tkc_calloc((size_t)n, sizeof *o->s1);
  o->s2 = tkc_calloc((size_t)n, sizeof *o->s2);
  o->lr = device_scalar(ctx, lr);
  bool ok = o->params && o->s1 && o->s2 && o->lr;
  for (int i = 0; i < n && ok; i++) ok = (o->params[i] = tkc_tensor_ref(params[i])) != NULL;
  if (!ok) {
    tkc_optim_free(o);
    return tkc_last_status() ? NULL : tkc_err_null(TKC_ENOMEM, "%s: out of memory", who);
  }
  return o;
}

tkc_optim *tkc_sgd_new(tkc_ctx *ctx, int n, tkc_tensor *const *params, double lr, double momentum, double weight_decay, int nesterov) {
  if (!(momentum >= 0) || !isfinite(momentum) || !(weight_decay >= 0) || !isfinite(weight_decay))
    return tkc_err_null(TKC_EINVAL, "sgd: momentum (%g) and weight decay (%g) must be finite and >= 0", momentum, weight_decay);
  if (nesterov && momentum == 0) return tkc_err_null(TKC_EINVAL, "sgd: Nesterov momentum needs momentum > 0");
  tkc_optim *o = make("sgd", ctx, OPT_SGD, n, params, lr);
  if (o) o->momentum = momentum, o->weight_decay = weight_decay, o->nesterov = nesterov != 0;
  return o;
}

tkc_optim *tkc_adam_new(tkc_ctx *ctx, int n, tkc_tensor *const *params, double lr, double beta1, double beta2, double eps, double weight_decay,
                        int decoupled) {
  if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1))
    return tkc_err_null(TKC_EINVAL, "adam: betas must be in [0, 1), not (%g, %g)", beta1, beta2);
  if (!(eps >= 0) || !isfinite(eps) || !(weight_decay >= 0) || !isfinite(weight_decay))
    return tkc_err_null(TKC_EINVAL, "adam: eps (%g) and weight decay (%g) must be finite and >= 0", eps, weight_decay);
  tkc_optim *o = make(decoupled ? "adamw" : "adam", ctx, OPT_ADAM, n, params, lr);
  if (!o) return NULL;
  o->beta1 = beta1, o->beta2 = beta2, o->eps = eps, o->weight_decay = weight_decay, o->decoupled = decoupled != 0;
  o->b1_t = device_scalar(ctx, 1.0), o->b2_t = device_scalar(ctx, 1.0);
  if (!o->b1_t || !o->b2_t) {
    tkc_optim_free(o);
    return NULL;
  }
  return o;
}

void tkc_optim_free(tkc_optim *o) {
  if (!o) return;
  for (int i = 0; i < o->n; i++) {
    if (o->params) tkc_tensor_free(o->params[i]);
    if (o->s1) tkc_tensor_free(o->s1[i]);
    if (o->s2) tkc_tensor_free(o->s2[i]);
  }
  tkc_tensor_free(o->lr), tkc_tensor_free(o->b1_t), tkc_tensor_free(o->b2_t);
  tkc_free(o->params), tkc_free(o->s1), tkc_free(o->s2);
  tkc_free(o);
}

tkc_status tkc_optim_set_lr(tkc_optim *o, double lr) {
  if (!o) return tkc_err(TKC_EINVAL, "optim_set_lr: NULL optimizer");
  if (!(lr >= 0) || !isfinite(lr)) return tkc_err(TKC_EINVAL, "optim_set_lr: the learning rate must be finite and >= 0, not %g", lr);
  float f = (float)lr;
  return tkc_copy_in(o->lr, &f, sizeof f);
}

tkc_status tkc_optim_zero_grad(tkc_optim *o) {
  if (!o) return tkc_err(TKC_EINVAL, "optim_zero_grad: NULL optimizer");
  return tkc_zero_grads(o->n, o->params);
}

/* ---------------------------------------------------------------- one step */

/* the temporaries of one step, freed together */
typedef struct temps {
  tkc_tensor *t[64];
  int n, failed;
} temps;
static tkc_tensor *T(temps *s, tkc_tensor *x) {
  if (!x) s->failed = 1;
  else if (s->n < (int)(sizeof s->t / sizeof *s->t)) s->t[s->n++] = x;
  else s->failed = 1, tkc_tensor_free(x), x = NULL, tkc_err(TKC_EINTERNAL, "optimizer step: too many temporaries");
  return x;
}
static void temps_free(temps *s) {
  for (int i = 0; i < s->n; i++) tkc_tensor_free(s->t[i]);
  s->n = 0;
}
#define ADD(a, b) T(s, tkc_add(a, b))
#define SUB(a, b) T(s, tkc_sub(a, b))
#define MUL(a, b) T(s, tkc_mul(a, b))
#define DIV(a, b) T(s, tkc_div(a, b))
#define K(v) T(s, tkc_scalar(o->ctx, dt, v))
#define AS(x) T(s, tkc_cast(x, dt)) /* a float32 device scalar in the parameter's dtype */

/* a zero-filled realized tensor like p (optimizer state) */
static tkc_tensor *zeros_like(tkc_ctx *ctx, tkc_tensor *p) {
  int64_t shape[16];
  int nd = tkc_ndim(p);
  for (int i = 0; i < nd; i++) shape[i] = tkc_dim(p, i);
  return tkc_tensor_new(ctx, tkc_dtype_of(p), nd, shape, NULL);
}

/* the parameter's update: assigns to p and its state; the tensors to realize go to out */
static tkc_status update(tkc_optim *o, int i, tkc_tensor *g, temps *s, tkc_tensor **out, int *nout) {
  tkc_tensor *p = o->params[i];
  tkc_dtype dt = tkc_dtype_of(p);
  tkc_status st;
  if (o->kind == OPT_SGD) {
    if (o->weight_decay) g = ADD(g, MUL(p, K(o->weight_decay)));
    if (o->momentum) {
      if (!o->s1[i] && !(o->s1[i] = zeros_like(o->ctx, p))) return tkc_last_status();
      tkc_tensor *b = o->s1[i], *nb = ADD(MUL(b, K(o->momentum)), g);
      if (s->failed) return tkc_last_status();
      if ((st = tkc_assign(b, nb))) return st;
      out[(*nout)++] = b;
      g = o->nesterov ? ADD(g, MUL(b, K(o->momentum))) : b;
    }
    if (s->failed) return tkc_last_status();
    if ((st = tkc_assign(p, SUB(p, MUL(g, AS(o->lr)))))) return st;
    out[(*nout)++] = p;
    return TKC_OK;
  }
  /* Adam: m = b1 m + (1-b1) g, v = b2 v + (1-b2) g^2, p -= lr (m/(1-b1^t)) / (sqrt(v/(1-b2^t)) + eps) [+ wd p] */
  if (!o->decoupled && o->weight_decay) g = ADD(g, MUL(p, K(o->weight_decay)));
  if (!o->s1[i] && !(o->s1[i] = zeros_like(o->ctx, p))) return tkc_last_status();
  if (!o->s2[i] && !(o->s2[i] = zeros_like(o->ctx, p))) return tkc_last_status();
  tkc_tensor *m = o->s1[i], *v = o->s2[i];
  if ((st = tkc_assign(m, ADD(MUL(m, K(o->beta1)), MUL(g, K(1 - o->beta1)))))) return s->failed ? tkc_last_status() : st;
  if ((st = tkc_assign(v, ADD(MUL(v, K(o->beta2)), MUL(MUL(g, g), K(1 - o->beta2)))))) return s->failed ? tkc_last_status() : st;
  /* b1_t and b2_t were advanced before the parameters (this step's powers) */
  tkc_tensor *m_hat = DIV(m, SUB(K(1), AS(o->b1_t))), *v_hat = DIV(v, SUB(K(1), AS(o->b2_t)));
  tkc_tensor *up = DIV(m_hat, ADD(T(s, tkc_sqrt(v_hat)), K(o->eps)));
  if (o->decoupled && o->weight_decay) up = ADD(up, MUL(p, K(o->weight_decay)));
  if (s->failed) return tkc_last_status();
  if ((st = tkc_assign(p, SUB(p, MUL(up, AS(o->lr)))))) return s->failed ? tkc_last_status() : st;
  out[(*nout)++] = m, out[(*nout)++] = v, out[(*nout)++] = p;
  return TKC_OK;
}

tkc_status tkc_optim_step(tkc_optim *o) { return tkc_optim_step_realize(o, 0, NULL); }

tkc_status tkc_optim_step_realize(tkc_optim *o, int nalso, tkc_tensor *const *also) {
  if (!o) return tkc_err(TKC_EINVAL, "optim_step: NULL optimizer");
  if (nalso < 0 || (nalso && !also)) return tkc_err(TKC_EINVAL, "optim_step_realize: %d tensors at %p", nalso, (const void *)also);
  tkc_tensor **out = tkc_calloc((size_t)(3 * o->n + nalso + 2), sizeof *out);
  if (!out) return tkc_err(TKC_ENOMEM, "optim_step: out of memory");
  int nout = 0;
  tkc_status st = TKC_OK;
  if (o->kind == OPT_ADAM) { /* the powers first, in their own realize: the updates read the new ones */
    tkc_ctx *ctx = o->ctx;
    tkc_tensor *b1 = tkc_scalar(ctx, TKC_FLOAT32, o->beta1), *b2 = tkc_scalar(ctx, TKC_FLOAT32, o->beta2);
    tkc_tensor *n1 = b1 ? tkc_mul(o->b1_t, b1) : NULL, *n2 = b2 ? tkc_mul(o->b2_t, b2) : NULL;
    if (!n1 || !n2) st = tkc_last_status();
    if (!st) st = tkc_assign(o->b1_t, n1);
    if (!st) st = tkc_assign(o->b2_t, n2);
    tkc_tensor_free(b1), tkc_tensor_free(b2), tkc_tensor_free(n1), tkc_tensor_free(n2);
    tkc_tensor *powers[2] = {o->b1_t, o->b2_t};
    if (!st) st = tkc_realize_all(2, powers);
  }
  for (int i = 0; i < o->n && !st; i++) {
    if (!tkc_has_grad(o->params[i])) continue; /* no gradient (not on the loss's path): left as it is */
    temps s = {.n = 0};
    st = update(o, i, T(&s, tkc_grad(o->params[i])), &s, out, &nout);
    temps_free(&s); /* (the assigns hold what they compute) */
  }
  for (int i = 0; i < nalso; i++) out[nout++] = also[i]; /* (the same schedule: they read the old values) */
  if (!st && nout) st = tkc_realize_all(nout, out);
  tkc_free(out);
  return st;
}
