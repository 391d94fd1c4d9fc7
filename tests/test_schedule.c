/* The scheduler (src/graph/schedule.c): which graphs fuse into how many kernels (elementwise chains,
 * a reduce with what follows, two reduces in a row, contiguous boundaries, matmul and its epilogue,
 * softmax), the kernels' inputs (each realized buffer once, at most 31 per kernel: wide graphs are
 * cut), deep graphs cut without recursion limits, and shared subgraphs realized once (a contiguous
 * node read by several kernels is computed by one kernel, and not again once realized). Every
 * schedule is also run and its values compared with C, so a wrong cut cannot pass. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "kernel_build.h"

static tkc_tensor *input(tkc_dtype dt, int ndim, const int64_t *shape, href *h, int dom) {
  *h = tr_rand(dt, ndim, shape, dom);
  tkc_tensor *t = tr_upload(ctx, h);
  assert_non_null(t);
  return t;
}

/* the number of kernels t's schedule has, from the schedule itself and from tkc_kernel_count */
static int nkernels(tkc_tensor *t) {
  tkc_schedule s;
  kb_schedule(t, &s);
  int n = (int)s.n;
  for (size_t i = 0; i < s.n; i++) { /* every kernel writes one output, reads each input once */
    assert_non_null(s.items[i].ast);
    assert_int_equal(s.items[i].ast->op, TKC_OP_SINK);
    assert_true(s.items[i].ninputs <= 31);
    for (int a = 0; a < s.items[i].ninputs; a++)
      for (int b = a + 1; b < s.items[i].ninputs; b++) assert_ptr_not_equal(s.items[i].inputs[a], s.items[i].inputs[b]);
  }
  assert_int_equal(s.items[s.n - 1].out->dtype, tkc_dtype_of(t)); /* the last kernel computes t */
  assert_int_equal(tkc_shape_numel(s.items[s.n - 1].out->ndim, s.items[s.n - 1].out->shape), tkc_numel(t));
  tkc_schedule_free(&s);
  assert_int_equal(tkc_kernel_count(t), n);
  return n;
}

static void expect(tkc_tensor *t, href *want, const char *what) {
  tr_begin();
  tr_checkk(t, want, 1, what);
  tr_free(want);
  assert_int_equal(tr_nfail, 0);
}

static void test_fusion(void **state) {
  (void)state;
  href a, b, c;
  tkc_tensor *ta = input(TKC_FLOAT32, 2, (const int64_t[]){7, 33}, &a, TR_DOM_ANY);
  tkc_tensor *tb = input(TKC_FLOAT32, 2, (const int64_t[]){7, 33}, &b, TR_DOM_ANY);
  tkc_tensor *tc = input(TKC_FLOAT32, 1, (const int64_t[]){33}, &c, TR_DOM_ANY);
  /* an elementwise chain with broadcasting and movement ops: one kernel */
  tkc_tensor *e = tkc_relu(tkc_add(tkc_mul(ta, tb), tc));
  assert_int_equal(nkernels(e), 1);
  href m = tr_binary(TR_MUL, &a, &b), s = tr_binary(TR_ADD, &m, &c), want = tr_unary(TR_RELU, &s);
  tr_free(&m), tr_free(&s);
  expect(e, &want, "relu(a*b+c)");
  tkc_tensor *p = tkc_add(tkc_transpose(ta, 0, 1), tkc_flip(tkc_transpose(tb, 0, 1), 1, (const int[]){0}));
  assert_int_equal(nkernels(p), 1);
  /* a reduce and the elementwise ops around it: one kernel */
  tkc_tensor *r = tkc_add(tkc_sum(tkc_mul(ta, tb), 1, (const int[]){1}, 0), tkc_scalar(ctx, TKC_FLOAT32, 1));
  assert_int_equal(nkernels(r), 1);
  m = tr_binary(TR_MUL, &a, &b);
  href rs = tr_reduce(TR_SUM, &m, 1, (const int[]){1}, 0), one = tr_from_doubles(TKC_FLOAT32, 0, NULL, (const double[]){1});
  want = tr_binary(TR_ADD, &rs, &one);
  tr_free(&m), tr_free(&rs), tr_free(&one);
  expect(r, &want, "sum(a*b, 1) + 1");
  /* a reduce feeding elementwise ops over the unreduced shape (x - max): the reduce is its own kernel */
  tkc_tensor *x = tkc_sub(ta, tkc_max(ta, 1, (const int[]){1}, 1));
  assert_int_equal(nkernels(x), 2);
  /* two reduces in a row: two kernels */
  tkc_tensor *rr = tkc_sum(tkc_exp(tkc_sum(ta, 1, (const int[]){1}, 0)), 0, NULL, 0);
  assert_int_equal(nkernels(rr), 2);
  /* a contiguous boundary cuts an elementwise chain */
  tkc_tensor *cb = tkc_mul(tkc_contiguous(tkc_add(ta, tb)), tkc_scalar(ctx, TKC_FLOAT32, 2));
  assert_int_equal(nkernels(cb), 2);
  /* matmul with a bias and relu epilogue: one kernel; softmax: max, sum, and the division */
  href w;
  tkc_tensor *tw = input(TKC_FLOAT32, 2, (const int64_t[]){33, 5}, &w, TR_DOM_ANY);
  tkc_tensor *mm = tkc_relu(tkc_add(tkc_matmul(ta, tw), tkc_scalar(ctx, TKC_FLOAT32, 0.5)));
  assert_int_equal(nkernels(mm), 1);
  tkc_tensor *sm = tkc_softmax(ta, -1);
  int nsm = nkernels(sm);
  assert_true(nsm >= 2 && nsm <= 3);
  want = tr_softmax(&a, -1, false);
  expect(sm, &want, "softmax");
  /* a realized tensor needs no kernel; a view of it neither */
  assert_int_equal(tkc_realize(e), TKC_OK);
  assert_int_equal(tkc_kernel_count(e), 0);
  assert_int_equal(tkc_kernel_count(tkc_transpose(ta, 0, 1)), 0);
  tr_free(&a), tr_free(&b), tr_free(&c), tr_free(&w);
}

/* a contiguous node read by two later kernels is computed once, and never again once realized */
static void test_shared_subgraph_once(void **state) {
  (void)state;
  href a;
  tkc_tensor *ta = input(TKC_FLOAT32, 2, (const int64_t[]){6, 9}, &a, TR_DOM_ANY);
  tkc_tensor *shared = tkc_contiguous(tkc_exp(ta));
  /* y = sum(shared, 1) + sum(shared * 2, 0)...: shared, two reduces, the final add (kernels by the
   * schedule); the shared node's kernel appears once */
  tkc_tensor *y = tkc_add(tkc_sum(shared, 0, NULL, 0), tkc_sum(tkc_mul(shared, shared), 0, NULL, 0));
  tkc_schedule s;
  kb_schedule(y, &s);
  int computes_shared = 0;
  for (size_t i = 0; i < s.n; i++) computes_shared += s.items[i].out == shared->node;
  assert_int_equal(computes_shared, 1);
  assert_ptr_equal(s.items[0].out, shared->node); /* before its readers */
  size_t n = s.n;
  tkc_schedule_free(&s);
  tkc_stats st0, st1, st2;
  tkc_ctx_stats(ctx, &st0);
  double got;
  assert_int_equal(tkc_item(y, &got), TKC_OK);
  tkc_ctx_stats(ctx, &st1);
  assert_int_equal(st1.kernels - st0.kernels, (int64_t)n); /* what was scheduled ran, once each */
  double want = 0;
  for (int64_t k = 0; k < a.n; k++) want += exp(a.v[k].f) + exp(a.v[k].f) * exp(a.v[k].f);
  assert_true(fabs(got - want) <= 1e-4 * fabs(want));
  /* shared is realized now: a new reader is one kernel */
  tkc_tensor *z = tkc_add(shared, tkc_scalar(ctx, TKC_FLOAT32, 1));
  assert_int_equal(nkernels(z), 1);
  assert_int_equal(tkc_realize(z), TKC_OK);
  tkc_ctx_stats(ctx, &st2);
  assert_int_equal(st2.kernels - st1.kernels, 1);
  /* the same expression built twice (no contiguous) is still one kernel each time */
  tkc_tensor *u1 = tkc_mul(ta, ta), *u2 = tkc_mul(ta, ta);
  assert_int_equal(nkernels(tkc_add(u1, u2)), 1);
  tr_free(&a);
}

/* deep chains are cut without running out of stack; wide graphs are cut at 31 inputs per kernel */
static void test_deep_and_wide_cuts(void **state) {
  (void)state;
  float one = 1;
  tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){1}, &one), *acc = x;
  for (int i = 0; i < 5000; i++) acc = tkc_add(acc, x);
  int n = nkernels(acc);
  assert_true(n >= 2); /* one kernel cannot hold 5000 adds */
  float got = 0;
  assert_int_equal(tkc_copy_out(acc, &got, sizeof got), TKC_OK);
  assert_true(got == 5001.0f);
  /* 70 distinct inputs summed: at least ceil(70 / 31) kernels, each reading at most 31 buffers */
  tkc_tensor *sum = NULL;
  float want = 0;
  for (int i = 0; i < 70; i++) {
    float v[3] = {(float)i, (float)(2 * i), 1};
    tkc_tensor *t = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){3}, v);
    sum = sum ? tkc_add(sum, t) : t;
    want += (float)i;
  }
  n = nkernels(sum);
  assert_true(n >= 3);
  float out[3];
  assert_int_equal(tkc_copy_out(sum, out, sizeof out), TKC_OK);
  assert_true(out[0] == want && out[1] == 2 * want && out[2] == 70);
}

/* A reduce's epilogue read by two kernels at one node, one of them through a pad and a shrink (a
 * ResNet block's output h = f(x @ w1), copied padded for the next conv and read by the skip
 * connection's add): h's kernel computes the matmul too, whichever reader is built first (3 kernels:
 * h, the padded copy, the next product with the add; it was 4: the matmul alone, then h) */
static void test_epilogue_read_through_a_view(void **state) {
  (void)state;
  enum { R = 6, C = 8 };
  href a, w1, w2;
  tkc_tensor *ta = input(TKC_FLOAT32, 2, (const int64_t[]){R, C}, &a, TR_DOM_ANY);
  tkc_tensor *tw1 = input(TKC_FLOAT32, 2, (const int64_t[]){C, C}, &w1, TR_DOM_ANY);
  tkc_tensor *tw2 = input(TKC_FLOAT32, 2, (const int64_t[]){C, C}, &w2, TR_DOM_ANY);
  double h[R][C], y[R * C];
  for (int i = 0; i < R; i++)
    for (int j = 0; j < C; j++) {
      double acc = 0;
      for (int k = 0; k < C; k++) acc += a.v[i * C + k].f * w1.v[k * C + j].f;
      h[i][j] = exp(acc);
    }
  for (int i = 0; i < R; i++) /* the next layer reads h a row down (row 0 padded) */
    for (int j = 0; j < C; j++) {
      double acc = 0;
      for (int k = 0; k < C && i > 0; k++) acc += h[i - 1][k] * w2.v[k * C + j].f;
      y[i * C + j] = acc + h[i][j] > 0 ? acc + h[i][j] : 0;
    }
  for (int order = 0; order < 2; order++) {
    tkc_tensor *th = tkc_exp(tkc_matmul(ta, tw1)); /* (exp(0) != 0: the pad is computed after h) */
    tkc_tensor *down = tkc_contiguous(tkc_shrink(tkc_pad(th, (const int64_t[]){1, 1, 0, 0}, 0), (const int64_t[]){0, R, 0, C}));
    tkc_tensor *next = tkc_matmul(down, tw2);
    tkc_tensor *out = tkc_relu(order ? tkc_add(th, next) : tkc_add(next, th));
    assert_int_equal(nkernels(out), 3);
    href want = tr_from_doubles(TKC_FLOAT32, 2, (const int64_t[]){R, C}, y);
    expect(out, &want, order ? "relu(h + down(h) @ w2)" : "relu(down(h) @ w2 + h)");
  }
  tr_free(&a), tr_free(&w1), tr_free(&w2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fusion),
      cmocka_unit_test(test_shared_subgraph_once),
      cmocka_unit_test(test_deep_and_wide_cuts),
      cmocka_unit_test(test_epilogue_read_through_a_view),
  };
  return cmocka_run_group_tests(tests, kb_setup, kb_teardown);
}
