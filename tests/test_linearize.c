/* The linearizer: ordering, scopes, accumulator placement, hoisting, determinism, bad input. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include "tkc/render.h"
#include "runtime/device.h" /* tkc_kernel_work_estimate */

static tkc_dt i32(void) { return tkc_dt_of(TKC_INT32); }
static tkc_dt f32(void) { return tkc_dt_of(TKC_FLOAT32); }
static tkc_uop *ci(tkc_graph *g, int64_t v) { return tkc_uop_const_int(g, i32(), v); }
static tkc_uop *buf(tkc_graph *g, int n) {
  return tkc_uop_new(g, TKC_OP_DEFINE_GLOBAL, tkc_dt_ptr(f32(), TKC_SPACE_GLOBAL, -1), 0, NULL, tkc_arg_int(n));
}
static tkc_uop *mk(tkc_graph *g, tkc_op op, tkc_dt dt, int n, tkc_uop *a, tkc_uop *b, tkc_uop *c) {
  tkc_uop *s[3] = {a, b, c};
  return tkc_uop_new(g, op, dt, n, s, tkc_arg_none());
}
static tkc_uop *load(tkc_graph *g, tkc_uop *b, tkc_uop *idx) {
  return mk(g, TKC_OP_LOAD, f32(), 1, mk(g, TKC_OP_INDEX, b->dtype, 2, b, idx, NULL), NULL, NULL);
}
static tkc_uop *store(tkc_graph *g, tkc_uop *b, tkc_uop *idx, tkc_uop *v) {
  return mk(g, TKC_OP_STORE, tkc_dt_of(TKC_VOID), 2, mk(g, TKC_OP_INDEX, b->dtype, 2, b, idx, NULL), v, NULL);
}

/* the host devices' work estimate (which kernels run threaded): constant trip counts times the widest
 * vector loaded: out[i] = a[i] over 16 iterations, scalar, then as 8-wide vectors (16 x 8 elements) */
static void test_work_estimate(void **state) {
  (void)state;
  for (int lanes = 1; lanes <= 8; lanes *= 8) {
    tkc_graph *g = tkc_graph_new();
    tkc_uop *out = buf(g, 0), *a = buf(g, 1), *ri = tkc_uop_range(g, ci(g, 0), ci(g, 16), 0);
    tkc_uop *idx = tkc_uop_alu2(g, TKC_OP_MUL, ri, ci(g, lanes));
    tkc_uop *x = mk(g, TKC_OP_LOAD, tkc_dt_vec(f32(), lanes), 1, mk(g, TKC_OP_INDEX, a->dtype, 2, a, idx, NULL), NULL, NULL);
    tkc_uop *st = store(g, out, idx, x);
    size_t n;
    tkc_uop **l = tkc_linearize(g, tkc_uop_sink(g, 1, &st), &n);
    assert_non_null(l);
    tkc_kernel k = {.name = "k", .source = "", .uops = l, .nuops = n};
    assert_int_equal(tkc_kernel_work_estimate(&k), 16 * lanes);
    tkc_free(l);
    tkc_graph_free(g);
  }
}

static long pos(tkc_uop **l, size_t n, const tkc_uop *u) {
  for (size_t i = 0; i < n; i++)
    if (l[i] == u) return (long)i;
  return -1;
}
static long pos_end(tkc_uop **l, size_t n, const tkc_uop *scope) {
  for (size_t i = 0; i < n; i++)
    if ((l[i]->op == TKC_OP_ENDRANGE || l[i]->op == TKC_OP_ENDIF) && l[i]->src[0] == scope) return (long)i;
  return -1;
}

/* every source comes before its user (DEFINE_ACC's ranges excepted: it precedes its loop) */
static void assert_sources_first(tkc_uop **l, size_t n) {
  for (size_t i = 0; i < n; i++) {
    int nsrc = l[i]->op == TKC_OP_DEFINE_ACC ? 1 : l[i]->nsrc;
    for (int j = 0; j < nsrc; j++) {
      long p = pos(l, n, l[i]->src[j]);
      assert_true(p >= 0);
      assert_true(p < (long)i);
    }
  }
}

/* out[i] = sum_k a[i*K+k] * 2  with K a reduce range: the matmul-like shape */
static void test_reduce_kernel(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *out = buf(g, 0), *a = buf(g, 1);
  tkc_uop *ri = tkc_uop_range(g, ci(g, 0), ci(g, 4), 0), *rk = tkc_uop_range(g, ci(g, 0), ci(g, 8), 1);
  tkc_uop *acc_src[2] = {tkc_uop_const_float(g, f32(), 0.0), rk};
  tkc_uop *acc = tkc_uop_new(g, TKC_OP_DEFINE_ACC, f32(), 2, acc_src, tkc_arg_int(0));
  tkc_uop *x = load(g, a, tkc_uop_alu2(g, TKC_OP_ADD, tkc_uop_alu2(g, TKC_OP_MUL, ri, ci(g, 8)), rk));
  tkc_uop *two = tkc_uop_const_float(g, f32(), 2.0);
  tkc_uop *upd = mk(g, TKC_OP_ASSIGN, f32(), 2, acc, tkc_uop_alu2(g, TKC_OP_ADD, acc, tkc_uop_alu2(g, TKC_OP_MUL, x, two)), NULL);
  tkc_uop *st = store(g, out, ri, upd);
  tkc_uop *sink = tkc_uop_sink(g, 1, &st);
  size_t n;
  tkc_uop **l = tkc_linearize(g, sink, &n);
  assert_non_null(l);
  assert_sources_first(l, n);
  long p_ri = pos(l, n, ri), p_rk = pos(l, n, rk), p_acc = pos(l, n, acc), p_st = pos(l, n, st);
  long e_ri = pos_end(l, n, ri), e_rk = pos_end(l, n, rk);
  assert_true(p_ri >= 0 && p_rk >= 0 && e_ri >= 0 && e_rk >= 0);
  assert_true(p_ri < p_acc && p_acc == p_rk - 1); /* accumulator right before its loop, inside the outer one */
  assert_true(p_rk < pos(l, n, upd) && pos(l, n, upd) < e_rk);
  assert_true(e_rk < p_st && p_st < e_ri); /* the store follows the reduce loop */
  assert_true(pos(l, n, two) < p_ri);      /* constants outside every loop */
  for (size_t i = 0; i < n; i++) assert_int_not_equal(l[i]->op, TKC_OP_SINK);
  /* deterministic: the same graph linearizes the same way */
  size_t n2;
  tkc_uop **l2 = tkc_linearize(g, sink, &n2);
  assert_int_equal(n, n2);
  for (size_t i = 0; i < n; i++) assert_ptr_equal(l[i], l2[i]);
  tkc_free(l);
  tkc_free(l2);
  tkc_graph_free(g);
}

/* out[i*4+j] = a[i] * b[j]: the load of a[i] is hoisted out of the j loop */
static void test_hoisting(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *out = buf(g, 0), *a = buf(g, 1), *b = buf(g, 2);
  tkc_uop *ri = tkc_uop_range(g, ci(g, 0), ci(g, 4), 0), *rj = tkc_uop_range(g, ci(g, 0), ci(g, 4), 1);
  tkc_uop *la = load(g, a, ri), *lb = load(g, b, rj);
  tkc_uop *st = store(g, out, tkc_uop_alu2(g, TKC_OP_ADD, tkc_uop_alu2(g, TKC_OP_MUL, ri, ci(g, 4)), rj), tkc_uop_alu2(g, TKC_OP_MUL, la, lb));
  tkc_uop *sink = tkc_uop_sink(g, 1, &st);
  size_t n;
  tkc_uop **l = tkc_linearize(g, sink, &n);
  assert_non_null(l);
  assert_sources_first(l, n);
  assert_true(pos(l, n, ri) < pos(l, n, la));
  assert_true(pos(l, n, la) < pos(l, n, rj)); /* invariant of the j loop */
  assert_true(pos(l, n, rj) < pos(l, n, lb) && pos(l, n, lb) < pos_end(l, n, rj));
  assert_true(pos_end(l, n, rj) < pos_end(l, n, ri));
  tkc_free(l);
  tkc_graph_free(g);
}

/* a gated store opens an IF inside the loop and closes it before the loop ends */
static void test_if_scope(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *out = buf(g, 0);
  tkc_uop *ri = tkc_uop_range(g, ci(g, 0), ci(g, 10), 0);
  tkc_uop *gate = tkc_uop_alu2(g, TKC_OP_CMPLT, ri, ci(g, 5));
  tkc_uop *iff = mk(g, TKC_OP_IF, tkc_dt_of(TKC_VOID), 1, gate, NULL, NULL);
  tkc_uop *idx = mk(g, TKC_OP_INDEX, out->dtype, 2, out, ri, NULL);
  tkc_uop *st = mk(g, TKC_OP_STORE, tkc_dt_of(TKC_VOID), 3, idx, tkc_uop_const_float(g, f32(), 1.0), iff);
  tkc_uop *sink = tkc_uop_sink(g, 1, &st);
  size_t n;
  tkc_uop **l = tkc_linearize(g, sink, &n);
  assert_non_null(l);
  assert_sources_first(l, n);
  assert_true(pos(l, n, ri) < pos(l, n, iff) && pos(l, n, iff) < pos(l, n, st));
  assert_true(pos(l, n, st) < pos_end(l, n, iff) && pos_end(l, n, iff) < pos_end(l, n, ri));
  tkc_free(l);
  tkc_graph_free(g);
}

/* tmp[j] = a[j] * 2 in one loop, out[i] = tmp[i] (a LOAD marked TKC_LOAD_AFTER_STORES) in another: the
 * load is placed after the storing loop has closed, though its own loop has the lower axis (which
 * opens first otherwise) and nothing else orders the two; unmarked, it is not */
static void test_load_after_stores(void **state) {
  (void)state;
  for (int marked = 0; marked < 2; marked++) {
    tkc_graph *g = tkc_graph_new();
    tkc_uop *out = buf(g, 0), *tmp = buf(g, 1), *a = buf(g, 2);
    tkc_uop *ri = tkc_uop_range(g, ci(g, 0), ci(g, 8), 0), *rj = tkc_uop_range(g, ci(g, 0), ci(g, 8), 1);
    tkc_uop *st1 = store(g, tmp, rj, tkc_uop_alu2(g, TKC_OP_MUL, load(g, a, rj), tkc_uop_const_float(g, f32(), 2.0)));
    tkc_uop *at = mk(g, TKC_OP_INDEX, tmp->dtype, 2, tmp, ri, NULL);
    tkc_uop *ld = tkc_uop_new(g, TKC_OP_LOAD, f32(), 1, &at, marked ? tkc_arg_int(TKC_LOAD_AFTER_STORES) : tkc_arg_none());
    tkc_uop *st2 = store(g, out, ri, ld), *s[2] = {st2, st1};
    size_t n;
    tkc_uop **l = tkc_linearize(g, tkc_uop_sink(g, 2, s), &n);
    assert_non_null(l);
    assert_sources_first(l, n);
    if (marked) assert_true(pos_end(l, n, rj) < pos(l, n, ri) && pos(l, n, ri) < pos(l, n, ld));
    else assert_true(pos(l, n, ld) < pos(l, n, rj));
    tkc_free(l);
    tkc_graph_free(g);
  }
}

static void test_bad_input(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  size_t n;
  tkc_uop *c = ci(g, 1);
  assert_null(tkc_linearize(NULL, c, &n));
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  assert_null(tkc_linearize(g, NULL, &n));
  assert_null(tkc_linearize(g, c, NULL));
  assert_null(tkc_linearize(g, c, &n)); /* not a SINK */
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  tkc_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reduce_kernel),
      cmocka_unit_test(test_hoisting),
      cmocka_unit_test(test_if_scope),
      cmocka_unit_test(test_load_after_stores),
      cmocka_unit_test(test_bad_input),
      cmocka_unit_test(test_work_estimate),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
