/* tkc_assign and tkc_realize_all (src/graph/assign.c, the ordering in graph/schedule.c) on every
 * device: in-place updates seen through other views, values that read their destination element
 * for element, reversed and reduced, chains of assigns, reads of the old values in the same
 * realize, gradients kept, a captured SGD step replayed against a host loop, and bad inputs; assigns
 * into views of a buffer (rows, columns, transposed blocks, a row at a variable position replayed by
 * a jit like a KV cache step), their order against reads, and bad views. */
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

/* ---------------------------------------------------------------- assigns into a view of a buffer */

static const int64_t S43[] = {4, 3};

/* t (n floats) equals want */
static void expect_n(const char *what, tkc_tensor *t, const float *want, int n) {
  float got[64];
  tkc_status st = tkc_copy_out(t, got, (size_t)n * sizeof *got);
  if (st) printf("%s: %s\n", what, tkc_last_error());
  assert_int_equal(st, TKC_OK);
  for (int i = 0; i < n; i++) {
    if (fabsf(got[i] - want[i]) > 1e-5f) printf("%s: element %d is %g, want %g\n", what, i, got[i], want[i]);
    assert_true(fabsf(got[i] - want[i]) <= 1e-5f);
  }
}

/* rows, a column, a reversed transposed block: only those elements change, in the base's buffer,
 * seen by its handles, by views made before, and by the destination view's handle */
static void test_view_fixed(void **state) {
  (void)state;
  float v[12], want[12];
  for (int i = 0; i < 12; i++) v[i] = want[i] = (float)i;
  for (size_t d = 0; d < NDEV; d++) {
    if (!tkc_device_available(DEVICES[d])) continue;
    tkc_ctx *ctx = tkc_ctx_new(DEVICES[d]);
    for (int i = 0; i < 12; i++) want[i] = v[i];
    tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 2, S43, v), *alias = tkc_tensor_ref(x);
    tkc_tensor *flat = tkc_reshape(x, 1, (const int64_t[]){12}); /* a view made before the writes */
    /* rows 1 and 2 <- 100 + 10 * x's rows 0 and 1 (reads the base, other rows: computed aside first) */
    tkc_tensor *rows = tkc_shrink(x, (const int64_t[]){1, 3, 0, 3});
    tkc_tensor *top = tkc_shrink(x, (const int64_t[]){0, 2, 0, 3});
    assert_int_equal(tkc_assign(rows, tkc_add(tkc_mul(top, tkc_scalar(ctx, TKC_FLOAT32, 10)), tkc_scalar(ctx, TKC_FLOAT32, 100))), TKC_OK);
    for (int i = 3; i < 9; i++) want[i] = 100 + 10 * v[i - 3];
    expect_n("rows: base", x, want, 12);
    expect_n("rows: alias", alias, want, 12);
    expect_n("rows: view made before", flat, want, 12);
    expect_n("rows: the view", rows, want + 3, 6);
    /* column 2 <- -1 .. -4 */
    tkc_tensor *col = tkc_shrink(x, (const int64_t[]){0, 4, 2, 3});
    assert_int_equal(tkc_assign(col, tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){4, 1}, (const float[]){-1, -2, -3, -4})), TKC_OK);
    for (int r = 0; r < 4; r++) want[3 * r + 2] = (float)-(r + 1);
    expect_n("column", x, want, 12);
    /* the block rows 2..4 x columns 0..2, transposed and flipped: value[c][r'] goes to row 3 - r', column c */
    static const float blk[] = {7, 8, 9, 10};
    tkc_tensor *block = tkc_flip(tkc_permute(tkc_shrink(x, (const int64_t[]){2, 4, 0, 2}), (const int[]){1, 0}), 1, (const int[]){1});
    assert_int_equal(tkc_assign(block, tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){2, 2}, blk)), TKC_OK);
    for (int c = 0; c < 2; c++)
      for (int r = 0; r < 2; r++) want[3 * (3 - r) + c] = blk[2 * c + r];
    assert_int_equal(tkc_realize(alias), TKC_OK);
    expect_n("block", x, want, 12);
    expect_n("block: view made before", flat, want, 12);
    /* the column's handle is the same view of the written tensor: read element for element, in place */
    assert_int_equal(tkc_assign(col, tkc_mul(col, tkc_scalar(ctx, TKC_FLOAT32, 3))), TKC_OK);
    for (int r = 0; r < 4; r++) want[3 * r + 2] *= 3;
    expect_n("column tripled", x, want, 12);
    /* column 1 <- a reduce whose result is reshaped (its kernel computes in the reduce's shape) */
    float w[20];
    for (int i = 0; i < 20; i++) w[i] = (float)i;
    tkc_tensor *sums = tkc_sum(tkc_tensor_new(ctx, TKC_FLOAT32, 3, (const int64_t[]){4, 1, 5}, w), 1, (const int[]){2}, 0); /* (4, 1) */
    assert_int_equal(tkc_assign(tkc_shrink(x, (const int64_t[]){0, 4, 1, 2}), sums), TKC_OK);
    for (int r = 0; r < 4; r++) want[3 * r + 1] = (float)(25 * r + 10);
    expect_n("column of sums", x, want, 12);
    expect_n("column of sums: view made before", flat, want, 12);
    tkc_ctx_free(ctx);
  }
}

/* reads of the base before the write run first, reads after see it; two pending writes into views
 * of one buffer (and a read between them) keep their order */
static void test_view_order(void **state) {
  (void)state;
  float v[12];
  for (int i = 0; i < 12; i++) v[i] = (float)(i + 1);
  for (size_t d = 0; d < NDEV; d++) {
    if (!tkc_device_available(DEVICES[d])) continue;
    tkc_ctx *ctx = tkc_ctx_new(DEVICES[d]);
    for (int order = 0; order < 2; order++) {
      float want[12], old2[12], mid[12];
      tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 2, S43, v), *two = tkc_scalar(ctx, TKC_FLOAT32, 2);
      tkc_tensor *before = tkc_mul(x, two); /* the old values */
      tkc_tensor *row0 = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){1, 3}, (const float[]){-1, -2, -3});
      assert_int_equal(tkc_assign(tkc_shrink(x, (const int64_t[]){0, 1, 0, 3}), row0), TKC_OK);
      tkc_tensor *between = tkc_mul(x, two); /* row 0 written, row 3 not yet */
      assert_int_equal(tkc_assign(tkc_shrink(x, (const int64_t[]){3, 4, 0, 3}), tkc_mul(row0, tkc_scalar(ctx, TKC_FLOAT32, 10))), TKC_OK);
      for (int i = 0; i < 12; i++) old2[i] = 2 * v[i], want[i] = v[i];
      for (int c = 0; c < 3; c++) want[c] = (float)-(c + 1), want[9 + c] = (float)(-10 * (c + 1));
      for (int i = 0; i < 12; i++) mid[i] = 2 * (i < 3 ? want[i] : v[i]);
      tkc_tensor *all[3] = {order ? x : before, between, order ? before : x};
      tkc_status st = tkc_realize_all(3, all);
      if (st) printf("%s: %s\n", DEVICES[d], tkc_last_error());
      assert_int_equal(st, TKC_OK);
      expect_n("before", before, old2, 12);
      expect_n("between", between, mid, 12);
      expect_n("after", x, want, 12);
      tkc_tensor *after = tkc_add(x, x);
      for (int i = 0; i < 12; i++) want[i] *= 2;
      expect_n("read after", after, want, 12);
    }
    tkc_ctx_free(ctx);
  }
}

/* a KV-cache step: the row at a variable position written in place, under jit replay */
typedef struct cache_model {
  tkc_tensor *cache; /* (8, 3) */
  int64_t pos;       /* the position variable */
} cache_model;

static tkc_status cache_step(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)nin, (void)nout;
  cache_model *m = user;
  int64_t end = m->pos + 1; /* (a token plus a constant: the variable plus it) */
  tkc_tensor *row = tkc_shrink(m->cache, (const int64_t[]){m->pos, end, 0, 3});
  tkc_status st = tkc_assign(row, tkc_add(in[0], tkc_scalar(ctx, TKC_FLOAT32, 0.5)));
  if (!st) st = tkc_realize(m->cache);
  out[0] = tkc_sum(m->cache, 1, (const int[]){0}, 0); /* reads the written cache: the column sums */
  tkc_tensor_free(row);
  return st;
}

static void test_view_variable_offset(void **state) {
  (void)state;
  for (size_t d = 0; d < NDEV; d++) {
    if (!tkc_device_available(DEVICES[d])) continue;
    tkc_ctx *ctx = tkc_ctx_new(DEVICES[d]);
    float ref[24];
    for (int i = 0; i < 24; i++) ref[i] = (float)(-i);
    cache_model m = {tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){8, 3}, ref), tkc_dim_var(ctx, "kv_pos", 0, 7)};
    tkc_tensor *before = tkc_reshape(m.cache, 1, (const int64_t[]){24}); /* a view of the cache made before */
    tkc_jit *j = tkc_jit_new(ctx, cache_step, &m);
    static const int positions[] = {3, 0, 7, 5, 3, 6};
    int kernels = 0;
    for (int step = 0; step < 6; step++) {
      const int p = positions[step];
      float row[3];
      for (int c = 0; c < 3; c++) row[c] = (float)(10 * step + c);
      tkc_tensor *in = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){1, 3}, row), *out = NULL;
      assert_int_equal(tkc_dim_bind(ctx, m.pos, p), TKC_OK);
      tkc_status st = tkc_jit_run(j, &in, 1, &out, 1);
      if (st) printf("%s step %d: %s\n", DEVICES[d], step, tkc_last_error());
      assert_int_equal(st, TKC_OK);
      if (step == 0) kernels = tkc_jit_kernels(j);
      for (int c = 0; c < 3; c++) ref[3 * p + c] = row[c] + 0.5f;
      float sums[3] = {0, 0, 0};
      for (int r = 0; r < 8; r++)
        for (int c = 0; c < 3; c++) sums[c] += ref[3 * r + c];
      expect_n("the whole cache", m.cache, ref, 24);
      expect_n("a view made before", before, ref, 24);
      expect_n("the sums read after the write", out, sums, 3);
      tkc_tensor_free(out), tkc_tensor_free(in);
    }
    assert_true(kernels > 0);
    assert_int_equal(tkc_jit_kernels(j), kernels); /* replayed: nothing built after the capture */
    /* outside a jit, at a bound position */
    assert_int_equal(tkc_dim_bind(ctx, m.pos, 2), TKC_OK);
    tkc_tensor *row = tkc_shrink(m.cache, (const int64_t[]){m.pos, m.pos + 1, 0, 3});
    assert_int_equal(tkc_assign(row, tkc_full(ctx, TKC_FLOAT32, 2, (const int64_t[]){1, 3}, 42)), TKC_OK);
    for (int c = 0; c < 3; c++) ref[6 + c] = 42;
    expect_n("bound position", m.cache, ref, 24);
    tkc_jit_free(j);
    tkc_ctx_free(ctx);
  }
}

static void test_view_bad_inputs(void **state) {
  (void)state;
  static const float v[] = {1, 2, 3};
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){1, 3}, v);
  tkc_tensor *row2 = tkc_full(ctx, TKC_FLOAT32, 2, (const int64_t[]){2, 3}, 5);
  assert_int_equal(tkc_assign(tkc_expand(x, 2, (const int64_t[]){2, 3}), row2), TKC_EINVAL); /* not one to one */
  assert_non_null(strstr(tkc_last_error(), "expand"));
  assert_int_equal(tkc_assign(tkc_pad(x, (const int64_t[]){0, 1, 0, 0}, 0), row2), TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "pad"));
  tkc_tensor *part = tkc_shrink(x, (const int64_t[]){0, 1, 1, 3});
  assert_int_equal(tkc_assign(part, tkc_full(ctx, TKC_FLOAT32, 2, (const int64_t[]){2, 1}, 5)), TKC_ESHAPE);
  assert_non_null(strstr(tkc_last_error(), "(2,1)"));
  assert_int_equal(tkc_assign(part, tkc_full(ctx, TKC_INT32, 2, (const int64_t[]){1, 2}, 5)), TKC_ESHAPE);
  assert_non_null(strstr(tkc_last_error(), "int32"));
  tkc_tensor *lazy_view = tkc_shrink(tkc_add(x, x), (const int64_t[]){0, 1, 1, 3}); /* a view of a result not computed */
  assert_int_equal(tkc_assign(lazy_view, tkc_full(ctx, TKC_FLOAT32, 2, (const int64_t[]){1, 2}, 5)), TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "does not own its whole buffer"));
  tkc_tensor *realized_view = tkc_shrink(x, (const int64_t[]){0, 1, 0, 2});
  assert_int_equal(tkc_realize(realized_view), TKC_OK);
  assert_int_equal(tkc_assign(tkc_shrink(realized_view, (const int64_t[]){0, 1, 0, 1}), tkc_full(ctx, TKC_FLOAT32, 2, (const int64_t[]){1, 1}, 5)),
                   TKC_EINVAL);
  float got[3];
  assert_int_equal(tkc_copy_out(x, got, sizeof got), TKC_OK); /* untouched by the refused assigns */
  for (int i = 0; i < 3; i++) assert_true(got[i] == v[i]);
  /* a view of the tensor as it was, while an assign to it is pending: the writes would have no order */
  tkc_tensor *old_view = tkc_shrink(x, (const int64_t[]){0, 1, 0, 1}), *five = tkc_full(ctx, TKC_FLOAT32, 2, (const int64_t[]){1, 1}, 5);
  assert_int_equal(tkc_assign(x, tkc_add(x, x)), TKC_OK);
  assert_int_equal(tkc_assign(old_view, five), TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "pending"));
  assert_int_equal(tkc_realize(x), TKC_OK); /* then it is the tensor as it is: x sees the write */
  assert_int_equal(tkc_assign(old_view, five), TKC_OK);
  assert_int_equal(tkc_copy_out(x, got, sizeof got), TKC_OK);
  assert_true(got[0] == 5 && got[1] == 4 && got[2] == 6);
  tkc_ctx_free(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_in_place), cmocka_unit_test(test_old_values_first), cmocka_unit_test(test_gradient_kept),
      cmocka_unit_test(test_captured_sgd), cmocka_unit_test(test_captured_accumulation), cmocka_unit_test(test_bad_inputs),
      cmocka_unit_test(test_view_fixed), cmocka_unit_test(test_view_order), cmocka_unit_test(test_view_variable_offset),
      cmocka_unit_test(test_view_bad_inputs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
