/* Optimizers (src/autograd/optim.c) against plain C implementations of their formulas, over several
 * steps, on every device: SGD (plain, momentum, Nesterov, weight decay), Adam (with L2 decay), AdamW;
 * a learning rate changed between steps, also in a captured step; parameters without a gradient
 * left alone; bad inputs. Loss: sum(c * p) + 0.5 * sum(p * p), so d loss / dp = c + p. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "tkc.h"

static const char *const DEVICES[] = {"INTERP", "CPU", "LLVM", "WEBGPU"};
#define NDEV (sizeof DEVICES / sizeof *DEVICES)
#define N 6
static const int64_t SHAPE[] = {2, 3};

typedef struct cfg {
  const char *name;
  int adam, nesterov, decoupled;
  double lr, momentum, wd, b1, b2, eps;
} cfg;

static const cfg CFGS[] = {
    {"sgd", 0, 0, 0, 0.1, 0, 0, 0, 0, 0},
    {"sgd momentum", 0, 0, 0, 0.05, 0.9, 0, 0, 0, 0},
    {"sgd nesterov, weight decay", 0, 1, 0, 0.05, 0.8, 0.01, 0, 0, 0},
    {"adam", 1, 0, 0, 0.01, 0, 0, 0.9, 0.999, 1e-8},
    {"adam, L2 decay", 1, 0, 0, 0.02, 0, 0.1, 0.8, 0.99, 1e-6},
    {"adamw", 1, 0, 1, 0.02, 0, 0.1, 0.9, 0.999, 1e-8},
};

/* the host's state of one run */
typedef struct host {
  double p[N], s1[N], s2[N], b1t, b2t;
} host;

static void host_step(const cfg *c, host *h, const double *coef, double lr) {
  h->b1t = (h->b1t ? h->b1t : 1) * c->b1, h->b2t = (h->b2t ? h->b2t : 1) * c->b2;
  for (int i = 0; i < N; i++) {
    double g = coef[i] + h->p[i];
    if (!c->adam) {
      g += c->wd * h->p[i];
      if (c->momentum) {
        h->s1[i] = c->momentum * h->s1[i] + g;
        g = c->nesterov ? g + c->momentum * h->s1[i] : h->s1[i];
      }
      h->p[i] -= lr * g;
      continue;
    }
    if (!c->decoupled) g += c->wd * h->p[i];
    h->s1[i] = c->b1 * h->s1[i] + (1 - c->b1) * g;
    h->s2[i] = c->b2 * h->s2[i] + (1 - c->b2) * g * g;
    double up = h->s1[i] / (1 - h->b1t) / (sqrt(h->s2[i] / (1 - h->b2t)) + c->eps);
    if (c->decoupled) up += c->wd * h->p[i];
    h->p[i] -= lr * up;
  }
}

static tkc_optim *make(tkc_ctx *ctx, const cfg *c, tkc_tensor *p) {
  return c->adam ? tkc_adam_new(ctx, 1, &p, c->lr, c->b1, c->b2, c->eps, c->wd, c->decoupled) : tkc_sgd_new(ctx, 1, &p, c->lr, c->momentum, c->wd, c->nesterov);
}

static tkc_tensor *loss_of(tkc_ctx *ctx, tkc_tensor *p, tkc_tensor *coef) {
  tkc_tensor *half = tkc_scalar(ctx, TKC_FLOAT32, 0.5);
  return tkc_add(tkc_sum(tkc_mul(coef, p), 0, NULL, 0), tkc_mul(half, tkc_sum(tkc_mul(p, p), 0, NULL, 0)));
}

static void compare(const char *what, const char *dev, int step, tkc_tensor *p, const host *h) {
  float got[N];
  assert_int_equal(tkc_copy_out(p, got, sizeof got), TKC_OK);
  for (int i = 0; i < N; i++) {
    double tol = 2e-5 * fmax(1, fabs(h->p[i]));
    if (fabs(got[i] - h->p[i]) > tol) printf("%s on %s, step %d: p[%d] = %.9g, want %.9g\n", what, dev, step, i, got[i], h->p[i]);
    assert_true(fabs(got[i] - h->p[i]) <= tol);
  }
}

static void test_steps(void **state) {
  (void)state;
  static const float p0[N] = {0.5f, -1, 2, 0.25f, -0.75f, 1.5f}, c0[N] = {1, -0.5f, 0.25f, 2, -1, 0.1f};
  for (size_t d = 0; d < NDEV; d++) {
    if (!tkc_device_available(DEVICES[d])) continue;
    for (size_t k = 0; k < sizeof CFGS / sizeof *CFGS; k++) {
      const cfg *c = &CFGS[k];
      tkc_ctx *ctx = tkc_ctx_new(DEVICES[d]);
      tkc_tensor *p = tkc_tensor_new(ctx, TKC_FLOAT32, 2, SHAPE, p0), *coef = tkc_tensor_new(ctx, TKC_FLOAT32, 2, SHAPE, c0);
      tkc_tensor *idle = tkc_tensor_new(ctx, TKC_FLOAT32, 2, SHAPE, p0); /* never on the loss's path */
      assert_int_equal(tkc_requires_grad(p, 1), TKC_OK);
      assert_int_equal(tkc_requires_grad(idle, 1), TKC_OK);
      tkc_tensor *both[2] = {p, idle};
      tkc_optim *o = c->adam ? tkc_adam_new(ctx, 2, both, c->lr, c->b1, c->b2, c->eps, c->wd, c->decoupled)
                             : tkc_sgd_new(ctx, 2, both, c->lr, c->momentum, c->wd, c->nesterov);
      assert_non_null(o);
      host h = {.b1t = 0};
      double hc[N];
      for (int i = 0; i < N; i++) h.p[i] = p0[i], hc[i] = c0[i];
      for (int step = 0; step < 5; step++) {
        double lr = step == 3 ? c->lr / 2 : c->lr;
        if (step >= 3) assert_int_equal(tkc_optim_set_lr(o, lr), TKC_OK);
        tkc_tensor *loss = loss_of(ctx, p, coef);
        assert_int_equal(tkc_backward(loss), TKC_OK);
        tkc_status st = tkc_optim_step(o);
        if (st) printf("%s on %s: %s\n", c->name, DEVICES[d], tkc_last_error());
        assert_int_equal(st, TKC_OK);
        assert_int_equal(tkc_optim_zero_grad(o), TKC_OK);
        assert_int_equal(tkc_has_grad(p), 1); /* zeros */
        tkc_tensor_free(loss);
        host_step(c, &h, hc, lr);
        compare(c->name, DEVICES[d], step, p, &h);
      }
      float untouched[N];
      assert_int_equal(tkc_copy_out(idle, untouched, sizeof untouched), TKC_OK);
      assert_memory_equal(untouched, p0, sizeof p0);
      tkc_optim_free(o);
      tkc_ctx_free(ctx);
    }
  }
}

/* ---------------------------------------------------------------- captured */

typedef struct train {
  tkc_tensor *p;
  tkc_optim *o;
} train;

static tkc_status step_fn(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)nin, (void)nout;
  train *t = user;
  tkc_tensor *loss = loss_of(ctx, t->p, in[0]);
  tkc_status st = tkc_backward(loss);
  if (!st) st = tkc_optim_step(t->o);
  if (!st) st = tkc_optim_zero_grad(t->o);
  out[0] = loss;
  return st;
}

static void test_captured(void **state) {
  (void)state;
  static const float p0[N] = {0.5f, -1, 2, 0.25f, -0.75f, 1.5f};
  for (size_t d = 0; d < NDEV; d++) {
    if (!tkc_device_available(DEVICES[d])) continue;
    for (int adam = 0; adam < 2; adam++) {
      const cfg *c = &CFGS[adam ? 5 : 2];
      tkc_ctx *ctx = tkc_ctx_new(DEVICES[d]);
      train t = {tkc_tensor_new(ctx, TKC_FLOAT32, 2, SHAPE, p0), NULL};
      tkc_requires_grad(t.p, 1);
      t.o = make(ctx, c, t.p);
      assert_non_null(t.o);
      tkc_jit *j = tkc_jit_new(ctx, step_fn, &t);
      host h = {.b1t = 0};
      for (int i = 0; i < N; i++) h.p[i] = p0[i];
      int kernels = 0;
      for (int step = 0; step < 6; step++) {
        double lr = c->lr * (1.0 + step) / 3, coef[N];
        float cf[N];
        for (int i = 0; i < N; i++) coef[i] = cf[i] = (float)sin(step * 7 + i);
        assert_int_equal(tkc_optim_set_lr(t.o, lr), TKC_OK);
        tkc_tensor *in = tkc_tensor_new(ctx, TKC_FLOAT32, 2, SHAPE, cf), *out = NULL;
        tkc_status st = tkc_jit_run(j, &in, 1, &out, 1);
        if (st) printf("captured %s on %s: %s\n", c->name, DEVICES[d], tkc_last_error());
        assert_int_equal(st, TKC_OK);
        if (!step) kernels = tkc_jit_kernels(j);
        host_step(c, &h, coef, (float)lr);
        compare(c->name, DEVICES[d], step, t.p, &h);
        tkc_tensor_free(in), tkc_tensor_free(out);
      }
      assert_int_equal(tkc_jit_kernels(j), kernels);
      tkc_jit_free(j);
      tkc_optim_free(t.o);
      tkc_ctx_free(ctx);
    }
  }
}

static void test_bad_inputs(void **state) {
  (void)state;
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  static const float v[N] = {0};
  static const int32_t iv[N] = {0};
  tkc_tensor *p = tkc_tensor_new(ctx, TKC_FLOAT32, 2, SHAPE, v), *plain = tkc_tensor_new(ctx, TKC_FLOAT32, 2, SHAPE, v);
  tkc_tensor *ints = tkc_tensor_new(ctx, TKC_INT32, 2, SHAPE, iv);
  tkc_requires_grad(p, 1);
  assert_null(tkc_sgd_new(NULL, 1, &p, 0.1, 0, 0, 0));
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  assert_null(tkc_sgd_new(ctx, 0, &p, 0.1, 0, 0, 0));
  assert_null(tkc_sgd_new(ctx, 1, NULL, 0.1, 0, 0, 0));
  assert_null(tkc_sgd_new(ctx, 1, &plain, 0.1, 0, 0, 0));
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "float32 tensor of shape (2,3) that does not require a gradient"));
  assert_null(tkc_adam_new(ctx, 1, &ints, 0.1, 0.9, 0.999, 1e-8, 0, 0));
  assert_int_equal(tkc_last_status(), TKC_EDTYPE);
  assert_non_null(strstr(tkc_last_error(), "int32 tensor of shape (2,3)"));
  tkc_tensor *twice[2] = {p, p};
  assert_null(tkc_sgd_new(ctx, 2, twice, 0.1, 0, 0, 0));
  assert_null(tkc_sgd_new(ctx, 1, &p, -0.1, 0, 0, 0));
  assert_null(tkc_sgd_new(ctx, 1, &p, NAN, 0, 0, 0));
  assert_null(tkc_sgd_new(ctx, 1, &p, 0.1, -1, 0, 0));
  assert_null(tkc_sgd_new(ctx, 1, &p, 0.1, 0, 0, 1)); /* Nesterov without momentum */
  assert_null(tkc_adam_new(ctx, 1, &p, 0.1, 1.0, 0.999, 1e-8, 0, 0));
  assert_null(tkc_adam_new(ctx, 1, &p, 0.1, 0.9, -0.1, 1e-8, 0, 0));
  assert_null(tkc_adam_new(ctx, 1, &p, 0.1, 0.9, 0.999, -1, 0, 0));
  tkc_tensor *freed = tkc_add(p, p);
  tkc_tensor_free(freed);
  assert_null(tkc_sgd_new(ctx, 1, &freed, 0.1, 0, 0, 0));
  assert_int_equal(tkc_optim_step(NULL), TKC_EINVAL);
  assert_int_equal(tkc_optim_zero_grad(NULL), TKC_EINVAL);
  assert_int_equal(tkc_optim_set_lr(NULL, 0.1), TKC_EINVAL);
  tkc_optim_free(NULL);
  tkc_optim *o = tkc_sgd_new(ctx, 1, &p, 0.1, 0, 0, 0);
  assert_non_null(o);
  assert_int_equal(tkc_optim_set_lr(o, -1), TKC_EINVAL);
  assert_int_equal(tkc_optim_step_realize(NULL, 0, NULL), TKC_EINVAL);
  assert_int_equal(tkc_optim_step_realize(o, -1, NULL), TKC_EINVAL);
  assert_int_equal(tkc_optim_step_realize(o, 1, NULL), TKC_EINVAL);
  assert_int_equal(tkc_optim_step(o), TKC_OK); /* no gradient yet: nothing changes */
  float got[N];
  assert_int_equal(tkc_copy_out(p, got, sizeof got), TKC_OK);
  assert_memory_equal(got, v, sizeof v);
  tkc_tensor_free(p); /* the optimizer holds its own handle */
  assert_int_equal(tkc_optim_step(o), TKC_OK);
  tkc_optim_free(o);
  tkc_ctx_free(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_steps), cmocka_unit_test(test_captured), cmocka_unit_test(test_bad_inputs)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
