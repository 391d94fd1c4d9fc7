/* The lowerer (src/codegen/lowerer.c): kernel ASTs from the scheduler lowered through tkc_lower /
 * tkc_lower_opts for INTERP (no renderer), the host renderers (loops) and the GPU renderers (launch
 * indices), then run and compared with C: elementwise with broadcast and permuted views, reduces
 * (one accumulator per reduce, the reduce loop kept on GPUs), matmul, masked (padded) loads, and
 * kernels with opts (upcast, unroll) whose lanes must all be stored. Structural facts are checked
 * where they do not depend on how far the kernel was simplified: the number of loops and launch
 * indices, accumulators, and the lanes stored per output. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "kernel_build.h"

typedef struct lcase {
  const char *name;
  tkc_tensor *t;
  href want;
} lcase;

static tkc_tensor *input(int ndim, const int64_t *shape, href *h) {
  *h = tr_rand(TKC_FLOAT32, ndim, shape, TR_DOM_ANY);
  tkc_tensor *t = tr_upload(ctx, h);
  assert_non_null(t);
  assert_int_equal(tkc_realize(t), TKC_OK);
  return t;
}

/* builds the case's single kernel for renderer rname (NULL: INTERP) with opts, runs it on dev
 * (NULL: not run) and compares with the reference; returns the kernel's counts */
static kb_counts lower_and_run(lcase *c, const char *rname, const char *dev, const kb_opts *opts) {
  const tkc_renderer *r = rname ? tkc_renderer_get(rname) : NULL;
  tkc_schedule s;
  kb_schedule(c->t, &s);
  assert_int_equal(s.n, 1);
  tkc_kshape ks;
  kb_kshape(&s, 0, r, opts, &ks);
  tkc_uop *k = !opts ? tkc_lower(s.g, s.items[0].ast, r) : kb_lower(&s, 0, r, &ks);
  assert_non_null(k);
  kb_counts n = kb_count(k);
  if (dev && tkc_device_available(dev)) {
    size_t nb = (size_t)c->want.n * sizeof(float);
    float *got = malloc(nb ? nb : 1);
    tkc_status st = kb_run(&s, 0, k, dev, got, nb);
    if (st) fprintf(stderr, "%s for %s on %s: %s\n", c->name, rname ? rname : "INTERP", dev, tkc_last_error());
    assert_int_equal(st, TKC_OK);
    for (int64_t i = 0; i < c->want.n; i++)
      if (!(fabs(got[i] - c->want.v[i].f) <= 1e-5 * (1 + fabs(c->want.v[i].f)))) {
        fprintf(stderr, "%s for %s on %s: element %lld: %g, C %g\n", c->name, rname ? rname : "INTERP", dev, (long long)i, got[i], c->want.v[i].f);
        fail();
      }
    free(got);
  }
  tkc_schedule_free(&s);
  return n;
}

static void test_elementwise(void **state) {
  (void)state;
  href a, b;
  tkc_tensor *ta = input(2, (const int64_t[]){5, 7}, &a), *tb = input(2, (const int64_t[]){7, 5}, &b);
  lcase c = {"a + b^T", tkc_add(ta, tkc_transpose(tb, 0, 1)), {0}};
  href bt = tr_transpose(&b, 0, 1);
  c.want = tr_binary(TR_ADD, &a, &bt);
  /* loops on INTERP and the host renderers: no launch indices, no accumulator, one store */
  kb_counts n = lower_and_run(&c, NULL, "INTERP", NULL);
  assert_int_equal(n.specials, 0);
  assert_int_equal(n.accs, 0);
  assert_int_equal(n.stores, 1);
  assert_true(n.ranges >= 1 && n.ranges <= 2);
  n = lower_and_run(&c, "C", "CPU", NULL);
  assert_int_equal(n.specials, 0);
  assert_true(n.ranges >= 1 && n.ranges <= 2);
  n = lower_and_run(&c, "LLVM", "LLVM", NULL);
  assert_int_equal(n.specials, 0);
  /* GPUs: every output loop becomes a launch index */
  n = lower_and_run(&c, "PTX", NULL, NULL);
  assert_int_equal(n.ranges, 0);
  assert_true(n.specials >= 1);
  assert_int_equal(n.stores, 1);
  n = lower_and_run(&c, "WGSL", "WEBGPU", NULL);
  assert_int_equal(n.ranges, 0);
  assert_true(n.specials >= 1);
  tr_free(&c.want), tr_free(&bt), tr_free(&a), tr_free(&b);
}

static void test_reduce_and_matmul(void **state) {
  (void)state;
  href a, b;
  tkc_tensor *ta = input(2, (const int64_t[]){6, 9}, &a), *tb = input(2, (const int64_t[]){9, 4}, &b);
  lcase c = {"sum(a, 1)", tkc_sum(ta, 1, (const int[]){1}, 0), tr_reduce(TR_SUM, &a, 1, (const int[]){1}, 0)};
  kb_counts n = lower_and_run(&c, NULL, "INTERP", NULL);
  assert_int_equal(n.accs, 1); /* one accumulator, one loop for the output and one for the reduce */
  assert_int_equal(n.ranges, 2);
  assert_int_equal(n.stores, 1);
  n = lower_and_run(&c, "C", "CPU", NULL);
  assert_int_equal(n.accs, 1);
  n = lower_and_run(&c, "PTX", NULL, NULL);
  assert_int_equal(n.ranges, 1); /* the reduce stays a loop on GPUs */
  assert_true(n.specials >= 1);
  assert_int_equal(n.accs, 1);
  n = lower_and_run(&c, "WGSL", "WEBGPU", NULL);
  assert_int_equal(n.ranges, 1);
  tr_free(&c.want);
  /* matmul: two output loops and the reduce loop, one accumulator */
  lcase m = {"a @ b", tkc_matmul(ta, tb), tr_matmul(&a, &b)};
  n = lower_and_run(&m, NULL, "INTERP", NULL);
  assert_int_equal(n.ranges, 3);
  assert_int_equal(n.accs, 1);
  n = lower_and_run(&m, "LLVM", "LLVM", NULL);
  assert_int_equal(n.accs, 1);
  /* a max reduce keeps its own accumulator too */
  lcase mx = {"max(a, 0)", tkc_max(ta, 1, (const int[]){0}, 0), tr_reduce(TR_RMAX, &a, 1, (const int[]){0}, 0)};
  n = lower_and_run(&mx, NULL, "INTERP", NULL);
  assert_int_equal(n.accs, 1);
  tr_free(&m.want), tr_free(&mx.want), tr_free(&a), tr_free(&b);
}

/* padded views: loads gated by the mask, zeros where it is off */
static void test_masked_loads(void **state) {
  (void)state;
  href a;
  tkc_tensor *ta = input(2, (const int64_t[]){4, 6}, &a);
  const int64_t pads[4] = {1, 2, 3, 0};
  href p = tr_pad(&a, pads, 0.0);
  lcase c = {"sum(pad(a), 0)", tkc_sum(tkc_pad(ta, pads, 0.0), 1, (const int[]){0}, 0), tr_reduce(TR_SUM, &p, 1, (const int[]){0}, 0)};
  kb_counts n = lower_and_run(&c, NULL, "INTERP", NULL);
  assert_int_equal(n.accs, 1);
  lower_and_run(&c, "C", "CPU", NULL);
  lower_and_run(&c, "WGSL", "WEBGPU", NULL);
  tr_free(&c.want);
  lcase f = {"flip(pad(a)) * 2", tkc_mul(tkc_flip(tkc_pad(ta, pads, 0.0), 1, (const int[]){1}), tkc_scalar(ctx, TKC_FLOAT32, 2)), {0}};
  href fl = tr_flip(&p, 1, (const int[]){1}), two = tr_from_doubles(TKC_FLOAT32, 0, NULL, (const double[]){2});
  f.want = tr_binary(TR_MUL, &fl, &two);
  lower_and_run(&f, NULL, "INTERP", NULL);
  lower_and_run(&f, "LLVM", "LLVM", NULL);
  tr_free(&f.want), tr_free(&fl), tr_free(&two), tr_free(&p), tr_free(&a);
}

/* opts: every lane of an upcast output is stored (as one vector or lane by lane), an unrolled
 * reduce keeps one accumulator, and the values stay those of C */
static void test_opts(void **state) {
  (void)state;
  href a, b;
  tkc_tensor *ta = input(2, (const int64_t[]){4, 6}, &a), *tb = input(2, (const int64_t[]){6, 8}, &b);
  lcase m = {"a @ b", tkc_matmul(ta, tb), tr_matmul(&a, &b)};
  const char *rn[3] = {NULL, "C", "LLVM"}, *dv[3] = {"INTERP", "CPU", "LLVM"};
  for (int r = 0; r < 3; r++) {
    kb_opts up = {false, 1, {{TKC_OPT_UPCAST, 1, 4}}};
    kb_counts n = lower_and_run(&m, rn[r], dv[r], &up);
    int w = n.max_store_width ? n.max_store_width : 1;
    assert_int_equal(n.stores * w, 4); /* 4 lanes stored */
    kb_opts un = {false, 1, {{TKC_OPT_UNROLL, 0, 3}}};
    n = lower_and_run(&m, rn[r], dv[r], &un);
    assert_int_equal(n.accs, 1);
    assert_int_equal(n.stores, 1);
    assert_int_equal(n.ranges, 3); /* the reduce loop is 3 times shorter, not gone */
    kb_opts both = {false, 3, {{TKC_OPT_UPCAST, 0, 2}, {TKC_OPT_UPCAST, 1, 2}, {TKC_OPT_UNROLL, 0, 0}}};
    n = lower_and_run(&m, rn[r], dv[r], &both);
    assert_int_equal(n.ranges, 2); /* the reduce fully unrolled */
    w = n.max_store_width ? n.max_store_width : 1;
    assert_int_equal(n.stores * w, 4);
  }
  tr_free(&m.want), tr_free(&a), tr_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_elementwise),
      cmocka_unit_test(test_reduce_and_matmul),
      cmocka_unit_test(test_masked_loads),
      cmocka_unit_test(test_opts),
  };
  return cmocka_run_group_tests(tests, kb_setup, kb_teardown);
}
