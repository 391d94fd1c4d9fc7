/* tkc_assign and tkc_realize_all (src/graph/assign.c, the ordering in graph/schedule.c) on every
 * device: in-place updates seen through other views, values that read their destination element
 * for element, reversed and reduced, chains of assigns, reads of the old values in the same
 * realize, gradients kept, a captured SGD step replayed against a host loop, and bad inputs. */
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
static const int64_t S4[] = {4}, S22[] = {2, 2};

static void read4(tkc_tensor *t, float *out) {
  tkc_status st = tkc_copy_out(t, out, 4 * sizeof *out);
  if (st) printf("%s\n", tkc_last_error());
  assert_int_equal(st, TKC_OK);
}
static void expect4(tkc_tensor *t, float a, float b, float c, float d) {
  float got[4];
  read4(t, got);
  const float want[4] = {a, b, c, d};
  for (int i = 0; i < 4; i++) {
    if (fabsf(got[i] - want[i]) > 1e-5f) printf("element %d: %g, want %g\n", i, got[i], want[i]);
    assert_true(fabsf(got[i] - want[i]) <= 1e-5f);
  }
}

static void test_in_place(void **state) {
  (void)state;
  static const float v[] = {1, 2, 3, 4};
  for (size_t d = 0; d < NDEV; d++) {
    if (!tkc_device_available(DEVICES[d])) continue;
    tkc_ctx *ctx = tkc_ctx_new(DEVICES[d]);
    tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 1, S4, v);
    tkc_tensor *view = tkc_reshape(x, 2, S22), *alias = tkc_tensor_ref(x);
    assert_int_equal(tkc_assign(x, tkc_mul(x, tkc_scalar(ctx, TKC_FLOAT32, 2))), TKC_OK); /* element for element */
    assert_int_equal(tkc_realize(x), TKC_OK);
    expect4(x, 2, 4, 6, 8);
    expect4(view, 2, 4, 6, 8); /* a view made before sees it */
    expect4(alias, 2, 4, 6, 8);
    assert_int_equal(tkc_assign(x, tkc_flip(x, 0, NULL)), TKC_OK); /* reads other elements: computed aside first */
    expect4(x, 8, 6, 4, 2);                                        /* (read: realized by the copy) */
    assert_int_equal(tkc_assign(x, tkc_sub(x, tkc_sum(x, 0, NULL, 0))), TKC_OK); /* a reduce of itself */
    expect4(x, -12, -14, -16, -18);
    /* a chain before any realize */
    assert_int_equal(tkc_assign(x, tkc_add(x, tkc_scalar(ctx, TKC_FLOAT32, 20))), TKC_OK);
    assert_int_equal(tkc_assign(x, tkc_mul(x, x)), TKC_OK);
    expect4(x, 64, 36, 16, 4);
    /* assign of another realized tensor: a copy */
    tkc_tensor *y = tkc_tensor_new(ctx, TKC_FLOAT32, 1, S4, v);
    assert_int_equal(tkc_assign(x, y), TKC_OK);
    expect4(x, 1, 2, 3, 4);
    expect4(view, 1, 2, 3, 4);
    tkc_ctx_free(ctx);
  }
}

/* a tensor read as it was and the assign in one realize_all, in either order: the reads come first */
static void test_old_values_first(void **state) {
  (void)state;
  static const float v[] = {1, 2, 3, 4};
  for (size_t d = 0; d < NDEV; d++) {
    if (!tkc_device_available(DEVICES[d])) continue;
    tkc_ctx *ctx = tkc_ctx_new(DEVICES[d]);
    for (int order = 0; order < 2; order++) {
      tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 1, S4, v);
      tkc_tensor *old3 = tkc_mul(x, tkc_scalar(ctx, TKC_FLOAT32, 3)), *oldsum = tkc_sum(x, 0, NULL, 1);
      assert_int_equal(tkc_assign(x, tkc_add(x, tkc_scalar(ctx, TKC_FLOAT32, 1))), TKC_OK);
      tkc_tensor *both[3] = {order ? x : old3, order ? old3 : x, oldsum};
      assert_int_equal(tkc_realize_all(3, both), TKC_OK);
      expect4(x, 2, 3, 4, 5);
      expect4(old3, 3, 6, 9, 12);
      float s;
      assert_int_equal(tkc_copy_out(oldsum, &s, sizeof s), TKC_OK);
      assert_true(s == 10);
      /* what reads x after the assign sees the new values */
      tkc_tensor *after = tkc_add(x, x);
      expect4(after, 4, 6, 8, 10);
    }
    tkc_ctx_free(ctx);
  }
}

/* an SGD step on a requires-grad tensor: the gradient and the flag stay with it */
static void test_gradient_kept(void **state) {
  (void)state;
  static const float v[] = {1, -2, 3, -4};
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  tkc_tensor *w = tkc_tensor_new(ctx, TKC_FLOAT32, 1, S4, v);
  assert_int_equal(tkc_requires_grad(w, 1), TKC_OK);
  for (int step = 0; step < 3; step++) {
    tkc_tensor *loss = tkc_sum(tkc_mul(w, w), 0, NULL, 0); /* d/dw = 2w */
    assert_int_equal(tkc_backward(loss), TKC_OK);
    tkc_tensor *g = tkc_grad(w);
    assert_non_null(g);
    assert_int_equal(tkc_assign(w, tkc_sub(w, tkc_mul(g, tkc_scalar(ctx, TKC_FLOAT32, 0.25)))), TKC_OK);
    assert_int_equal(tkc_realize(w), TKC_OK);
    assert_non_null(tkc_grad(w)); /* kept */
    assert_int_equal(tkc_zero_grad(w), TKC_OK);
  }
  expect4(w, 0.125f, -0.25f, 0.375f, -0.5f); /* w * 0.5^3 */
  tkc_ctx_free(ctx);
}

/* ---------------------------------------------------------------- a captured train step */

typedef struct model {
  tkc_tensor *w, *b;
  float lr;
} model;

/* y = x @ w + b, loss = mean((y - t)^2); SGD */
static tkc_status sgd_step(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)nin, (void)nout;
  model *m = user;
  tkc_tensor *y = tkc_add(tkc_matmul(in[0], m->w), m->b);
  tkc_tensor *d = tkc_sub(y, in[1]);
  tkc_tensor *loss = tkc_mean(tkc_mul(d, d), 0, NULL, 0);
  tkc_status st = tkc_backward(loss);
  if (st) return st;
  tkc_tensor *lr = tkc_scalar(ctx, TKC_FLOAT32, m->lr), *gw = tkc_grad(m->w), *gb = tkc_grad(m->b);
  if ((st = tkc_assign(m->w, tkc_sub(m->w, tkc_mul(gw, lr)))) || (st = tkc_assign(m->b, tkc_sub(m->b, tkc_mul(gb, lr))))) return st;
  tkc_tensor *all[3] = {m->w, m->b, loss};
  if ((st = tkc_realize_all(3, all))) return st;
  tkc_zero_grad(m->w), tkc_zero_grad(m->b);
  out[0] = loss;
  return TKC_OK;
}

/* the same on the host */
static float host_step(float *w, float *b, const float *x, const float *t, float lr) {
  float y[4][2], gw[3][2] = {{0}}, gb[2] = {0}, loss = 0;
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 2; j++) {
      y[i][j] = b[j];
      for (int k = 0; k < 3; k++) y[i][j] += x[i * 3 + k] * w[k * 2 + j];
      float dd = y[i][j] - t[i * 2 + j];
      loss += dd * dd / 8;
      for (int k = 0; k < 3; k++) gw[k][j] += 2 * dd / 8 * x[i * 3 + k];
      gb[j] += 2 * dd / 8;
    }
  for (int k = 0; k < 3; k++)
    for (int j = 0; j < 2; j++) w[k * 2 + j] -= lr * gw[k][j];
  for (int j = 0; j < 2; j++) b[j] -= lr * gb[j];
  return loss;
}

static void test_captured_sgd(void **state) {
  (void)state;
  for (size_t d = 0; d < NDEV; d++) {
    if (!tkc_device_available(DEVICES[d])) continue;
    tkc_ctx *ctx = tkc_ctx_new(DEVICES[d]);
    float w[6] = {0.1f, -0.2f, 0.3f, 0.05f, -0.1f, 0.2f}, b[2] = {0.01f, -0.02f};
    model m = {tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){3, 2}, w), tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){2}, b), 0.1f};
    tkc_requires_grad(m.w, 1), tkc_requires_grad(m.b, 1);
    tkc_jit *j = tkc_jit_new(ctx, sgd_step, &m);
    int kernels = 0;
    for (int step = 0; step < 6; step++) {
      float x[12], t[8];
      for (int i = 0; i < 12; i++) x[i] = (float)sin(step * 12 + i);
      for (int i = 0; i < 8; i++) t[i] = (float)cos(step * 8 + i);
      tkc_tensor *in[2] = {tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){4, 3}, x), tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){4, 2}, t)};
      tkc_tensor *out = NULL;
      tkc_status st = tkc_jit_run(j, in, 2, &out, 1);
      if (st) printf("%s step %d: %s\n", DEVICES[d], step, tkc_last_error());
      assert_int_equal(st, TKC_OK);
      if (step == 0) kernels = tkc_jit_kernels(j);
      float loss, want = host_step(w, b, x, t, 0.1f);
      assert_int_equal(tkc_copy_out(out, &loss, sizeof loss), TKC_OK);
      if (!(fabsf(loss - want) < 1e-4f * fmaxf(1, want))) printf("%s step %d: loss %g, want %g\n", DEVICES[d], step, loss, want);
      assert_true(fabsf(loss - want) < 1e-4f * fmaxf(1, want));
      float gotw[6], gotb[2];
      assert_int_equal(tkc_copy_out(m.w, gotw, sizeof gotw), TKC_OK);
      assert_int_equal(tkc_copy_out(m.b, gotb, sizeof gotb), TKC_OK);
      for (int i = 0; i < 6; i++) assert_true(fabsf(gotw[i] - w[i]) < 1e-5f);
      for (int i = 0; i < 2; i++) assert_true(fabsf(gotb[i] - b[i]) < 1e-5f);
      tkc_tensor_free(out), tkc_tensor_free(in[0]), tkc_tensor_free(in[1]);
    }
    assert_true(kernels > 0);
    assert_int_equal(tkc_jit_kernels(j), kernels); /* nothing built after the capture */
    tkc_jit_free(j);
    tkc_ctx_free(ctx);
  }
}

/* ---------------------------------------------------------------- gradient accumulation under replay */

/* backward only: the gradients add up over calls (tinygrad#13642 replayed the capture-time sum) */
static tkc_status accumulate(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)ctx, (void)nin, (void)nout;
  model *m = user;
  tkc_tensor *d = tkc_sub(tkc_add(tkc_matmul(in[0], m->w), m->b), in[1]);
  tkc_tensor *loss = tkc_mean(tkc_mul(d, d), 0, NULL, 0);
  tkc_status st = tkc_backward(loss);
  tkc_tensor *all[3] = {loss, tkc_grad(m->w), tkc_grad(m->b)};
  if (!st) st = tkc_realize_all(3, all);
  tkc_tensor_free(all[1]), tkc_tensor_free(all[2]);
  out[0] = loss;
  return st;
}

/* an SGD step with the accumulated gradients, then zero_grad (captured: a fill kernel) */
static tkc_status apply(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)in, (void)nin, (void)nout;
  model *m = user;
  tkc_tensor *lr = tkc_scalar(ctx, TKC_FLOAT32, m->lr), *gw = tkc_grad(m->w), *gb = tkc_grad(m->b);
  tkc_status st = tkc_assign(m->w, tkc_sub(m->w, tkc_mul(gw, lr)));
  if (!st) st = tkc_assign(m->b, tkc_sub(m->b, tkc_mul(gb, lr)));
  tkc_tensor *all[2] = {m->w, m->b};
  if (!st) st = tkc_realize_all(2, all);
  if (!st) st = tkc_zero_grad(m->w);
  if (!st) st = tkc_zero_grad(m->b);
  out[0] = tkc_mul(m->b, tkc_scalar(ctx, TKC_FLOAT32, 1)); /* (a jit returns something) */
  return st;
}

/* d mean((x w + b - t)^2) added into gw, gb */
static void host_grads(const float *w, const float *b, const float *x, const float *t, float *gw, float *gb) {
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 2; j++) {
      float y = b[j];
      for (int k = 0; k < 3; k++) y += x[i * 3 + k] * w[k * 2 + j];
      float dd = (y - t[i * 2 + j]) * 2 / 8;
      for (int k = 0; k < 3; k++) gw[k * 2 + j] += dd * x[i * 3 + k];
      gb[j] += dd;
    }
}

static void expect_near(const char *what, tkc_tensor *t, const float *want, int n) {
  float got[8];
  tkc_status st = tkc_copy_out(t, got, (size_t)n * sizeof *got);
  if (st) printf("%s: %s\n", what, tkc_last_error());
  assert_int_equal(st, TKC_OK);
  for (int i = 0; i < n; i++) {
    if (!(fabsf(got[i] - want[i]) < 1e-5f)) printf("%s[%d]: %g, want %g\n", what, i, got[i], want[i]);
    assert_true(fabsf(got[i] - want[i]) < 1e-5f);
  }
}

static void test_captured_accumulation(void **state) {
  (void)state;
  for (size_t d = 0; d < NDEV; d++) {
    if (!tkc_device_available(DEVICES[d])) continue;
    tkc_ctx *ctx = tkc_ctx_new(DEVICES[d]);
    float w[6] = {0.1f, -0.2f, 0.3f, 0.05f, -0.1f, 0.2f}, b[2] = {0.01f, -0.02f}, gw[6] = {0}, gb[2] = {0};
    model m = {tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){3, 2}, w), tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){2}, b), 0.1f};
    tkc_requires_grad(m.w, 1), tkc_requires_grad(m.b, 1);
    tkc_jit *acc = tkc_jit_new(ctx, accumulate, &m), *step = tkc_jit_new(ctx, apply, &m);
    /* 3 batches, a step, 2 batches, a zero_grad outside the jits, 2 batches, a step */
    static const char plan[] = "aaasaazaas";
    int kernels = 0;
    for (int k = 0; plan[k]; k++) {
      tkc_tensor *out = NULL;
      if (plan[k] == 'a') {
        float x[12], t[8];
        for (int i = 0; i < 12; i++) x[i] = (float)sin(k * 12 + i);
        for (int i = 0; i < 8; i++) t[i] = (float)cos(k * 8 + i);
        tkc_tensor *in[2] = {tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){4, 3}, x), tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){4, 2}, t)};
        assert_int_equal(tkc_jit_run(acc, in, 2, &out, 1), TKC_OK);
        if (!kernels) kernels = tkc_jit_kernels(acc);
        host_grads(w, b, x, t, gw, gb);
        tkc_tensor *g[2] = {tkc_grad(m.w), tkc_grad(m.b)};
        expect_near("accumulated grad w", g[0], gw, 6);
        expect_near("accumulated grad b", g[1], gb, 2);
        tkc_tensor_free(g[0]), tkc_tensor_free(g[1]), tkc_tensor_free(in[0]), tkc_tensor_free(in[1]);
      } else if (plan[k] == 's') {
        tkc_status st = tkc_jit_run(step, NULL, 0, &out, 1);
        if (st) printf("%s: %s\n", DEVICES[d], tkc_last_error());
        assert_int_equal(st, TKC_OK);
        for (int i = 0; i < 6; i++) w[i] -= m.lr * gw[i], gw[i] = 0;
        for (int i = 0; i < 2; i++) b[i] -= m.lr * gb[i], gb[i] = 0;
        expect_near("w after the step", m.w, w, 6);
        expect_near("b after the step", m.b, b, 2);
        tkc_tensor *gz = tkc_grad(m.w); /* zeroed by the replayed fill kernel */
        expect_near("grad w after the step", gz, gw, 6);
        tkc_tensor_free(gz);
      } else {
        assert_int_equal(tkc_zero_grad(m.w), TKC_OK);
        assert_int_equal(tkc_zero_grad(m.b), TKC_OK);
        for (int i = 0; i < 6; i++) gw[i] = 0;
        for (int i = 0; i < 2; i++) gb[i] = 0;
      }
      tkc_tensor_free(out);
    }
    assert_int_equal(tkc_jit_kernels(acc), kernels); /* replayed, nothing built after the capture */
    tkc_jit_free(acc), tkc_jit_free(step);
    tkc_ctx_free(ctx);
  }
}

static void test_bad_inputs(void **state) {
  (void)state;
  static const float v[] = {1, 2, 3, 4};
  tkc_ctx *ctx = tkc_ctx_new("INTERP"), *other = tkc_ctx_new("INTERP");
  tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 1, S4, v), *o = tkc_tensor_new(other, TKC_FLOAT32, 1, S4, v);
  assert_int_equal(tkc_assign(NULL, x), TKC_EINVAL);
  assert_int_not_equal(tkc_assign(x, NULL), TKC_OK);
  assert_int_equal(tkc_assign(x, o), TKC_EINVAL);
  assert_int_equal(tkc_assign(x, tkc_reshape(x, 2, S22)), TKC_ESHAPE);
  assert_non_null(strstr(tkc_last_error(), "float32 tensor of shape (2,2)"));
  assert_int_equal(tkc_assign(x, tkc_cast(x, TKC_FLOAT16)), TKC_ESHAPE);
  assert_non_null(strstr(tkc_last_error(), "float16"));
  tkc_tensor *lazy = tkc_add(x, x);
  assert_int_equal(tkc_assign(lazy, x), TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "does not own its whole buffer"));
  tkc_tensor *part = tkc_shrink(x, (const int64_t[]){1, 3});
  assert_int_equal(tkc_realize(part), TKC_OK);
  assert_int_equal(tkc_assign(part, tkc_shrink(x, (const int64_t[]){0, 2})), TKC_EINVAL); /* a view */
  int64_t L = tkc_dim_var(ctx, "L", 1, 8);
  assert_int_equal(tkc_dim_bind(ctx, L, 4), TKC_OK);
  tkc_tensor *sym = tkc_full(ctx, TKC_FLOAT32, 1, &L, 1.0);
  assert_int_equal(tkc_realize(sym), TKC_OK);
  assert_int_equal(tkc_assign(sym, sym), TKC_EUNSUPPORTED);
  assert_int_equal(tkc_realize_all(-1, &x), TKC_EINVAL);
  assert_int_equal(tkc_realize_all(1, NULL), TKC_EINVAL);
  assert_int_equal(tkc_realize_all(0, NULL), TKC_OK);
  tkc_tensor *two[2] = {x, o};
  assert_int_equal(tkc_realize_all(2, two), TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "tensor 1"));
  tkc_tensor *freed = tkc_add(x, x);
  tkc_tensor_free(freed);
  tkc_tensor *with_freed[2] = {x, freed};
  assert_int_equal(tkc_realize_all(2, with_freed), TKC_EINVAL);
  expect4(x, 1, 2, 3, 4); /* untouched by the refused assigns */
  tkc_ctx_free(ctx), tkc_ctx_free(other);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_in_place), cmocka_unit_test(test_old_values_first), cmocka_unit_test(test_gradient_kept),
      cmocka_unit_test(test_captured_sgd), cmocka_unit_test(test_captured_accumulation), cmocka_unit_test(test_bad_inputs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
