/* test_uop_limits.c — the UOp layer refuses malformed input instead of building it (issue 16):
 * ALU ops with the wrong number of sources, unknown arg kinds, vector widths past TKC_DT_MAX_LANES,
 * malformed patterns (a second "...", non-finite numbers, nesting past 64), NULL args to
 * tkc_arg_eq, and deep expressions printed without unbounded recursion. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tkc/uop.h"

static tkc_dt f32(void) { return tkc_dt_of(TKC_FLOAT32); }

static void test_alu_source_counts(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *a = tkc_uop_const_float(g, f32(), 1), *b = tkc_uop_const_float(g, f32(), 2), *c = tkc_uop_const_float(g, f32(), 3);
  tkc_uop *s[3] = {a, b, c};
  assert_null(tkc_uop_new(g, TKC_OP_ADD, f32(), 1, s, tkc_arg_none()));
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "ADD takes 2 sources, got 1"));
  assert_null(tkc_uop_new(g, TKC_OP_SQRT, f32(), 2, s, tkc_arg_none()));
  assert_non_null(strstr(tkc_last_error(), "SQRT takes 1 source, got 2"));
  assert_null(tkc_uop_new(g, TKC_OP_WHERE, f32(), 2, s, tkc_arg_none()));
  assert_null(tkc_uop_new(g, TKC_OP_ADD, f32(), 0, NULL, tkc_arg_none()));
  /* the right counts still build, and equal nodes are one */
  tkc_uop *x = tkc_uop_new(g, TKC_OP_ADD, f32(), 2, s, tkc_arg_none());
  assert_non_null(x);
  assert_ptr_equal(x, tkc_uop_alu2(g, TKC_OP_ADD, a, b));
  assert_non_null(tkc_uop_new(g, TKC_OP_SQRT, f32(), 1, s, tkc_arg_none()));
  tkc_graph_free(g);
}

static void test_bad_args(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_arg bad = tkc_arg_none();
  bad.kind = 77;
  assert_null(tkc_uop_new(g, TKC_OP_CONST, f32(), 0, NULL, bad));
  assert_non_null(strstr(tkc_last_error(), "unknown arg kind"));
  tkc_arg inner[2] = {tkc_arg_int(1), bad};
  assert_null(tkc_uop_new(g, TKC_OP_CUSTOM, tkc_dt_of(TKC_VOID), 0, NULL, tkc_arg_tuple(inner, 2)));
  assert_non_null(strstr(tkc_last_error(), "unknown arg kind"));
  assert_null(tkc_uop_new(g, TKC_OP_CUSTOM, tkc_dt_of(TKC_VOID), 0, NULL, tkc_arg_tuple(NULL, 3)));
  /* tuples nested 17 deep are refused, 16 are fine */
  tkc_arg levels[18];
  levels[0] = tkc_arg_int(5);
  for (int i = 1; i < 18; i++) levels[i] = tkc_arg_tuple(&levels[i - 1], 1);
  assert_non_null(tkc_uop_new(g, TKC_OP_CUSTOM, tkc_dt_of(TKC_VOID), 0, NULL, levels[16]));
  assert_null(tkc_uop_new(g, TKC_OP_CUSTOM, tkc_dt_of(TKC_VOID), 0, NULL, levels[17]));
  assert_non_null(strstr(tkc_last_error(), "nested"));
  tkc_graph_free(g);
}

static void test_arg_eq_null(void **state) {
  (void)state;
  tkc_arg a = tkc_arg_int(3);
  assert_false(tkc_arg_eq(NULL, &a));
  assert_false(tkc_arg_eq(&a, NULL));
  assert_true(tkc_arg_eq(NULL, NULL));
  assert_true(tkc_arg_eq(&a, &a));
}

static void test_vector_width_limit(void **state) {
  (void)state;
  tkc_dt v = tkc_dt_vec(f32(), TKC_DT_MAX_LANES);
  assert_int_equal(v.count, TKC_DT_MAX_LANES);
  tkc_dt bad = tkc_dt_vec(f32(), 70000); /* once silently 70000 mod 65536 = 4464 lanes */
  assert_int_not_equal(bad.count, 4464);
  assert_int_equal(bad.scalar, TKC_NDTYPES);
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  tkc_graph *g = tkc_graph_new();
  assert_null(tkc_uop_new(g, TKC_OP_CONST, bad, 0, NULL, tkc_arg_float(0)));
  assert_non_null(strstr(tkc_last_error(), "bad dtype"));
  tkc_graph_free(g);
}

static tkc_uop *no_rewrite(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)g, (void)m, (void)ctx;
  return NULL;
}

static void test_bad_patterns(void **state) {
  (void)state;
  tkc_rule none = {NULL, NULL};
  assert_null(tkc_matcher_new(&none, 1));
  static const char *bad[][2] = {{"(ADD x ... ...)", "'...' twice"}, {"CONST[1e999999]", "out of range"},
                                  {"CONST[-1e999]", "out of range"}, {"CONST[nan]", "out of range"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    tkc_rule r = {bad[i][0], no_rewrite};
    tkc_matcher *m = tkc_matcher_new(&r, 1);
    if (m) fail_msg("pattern \"%s\" was accepted", bad[i][0]);
    assert_int_equal(tkc_last_status(), TKC_EINVAL);
    if (!strstr(tkc_last_error(), bad[i][1])) fail_msg("pattern \"%s\": %s", bad[i][0], tkc_last_error());
  }
  tkc_rule ok = {"CONST[1e300]", no_rewrite};
  tkc_matcher *okm = tkc_matcher_new(&ok, 1);
  assert_non_null(okm);
  tkc_matcher_free(okm);
  /* nesting: 64 levels parse, deeper is an error, a million is an error (no stack overflow) */
  for (int depth = 63; depth <= 1000000; depth = depth == 63 ? 65 : depth * 100) {
    size_t n = (size_t)depth * 6 + 8;
    char *text = malloc(n), *p = text;
    for (int i = 0; i < depth; i++) p += sprintf(p, "(NEG ");
    p += sprintf(p, "x");
    for (int i = 0; i < depth; i++) *p++ = ')';
    *p = 0;
    tkc_rule r = {text, no_rewrite};
    tkc_matcher *m = tkc_matcher_new(&r, 1);
    if (depth < 64) {
      if (!m) fail_msg("depth %d: %s", depth, tkc_last_error());
      tkc_matcher_free(m);
    } else {
      assert_null(m);
      assert_non_null(strstr(tkc_last_error(), "nested more than 64 deep"));
    }
    free(text);
  }
}

static void test_deep_expression_strings(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *x = tkc_uop_var(g, "i", 0, 10);
  for (int i = 0; i < 200000; i++) x = tkc_uop_alu2(g, TKC_OP_ADD, x, tkc_uop_const_int(g, tkc_dt_of(TKC_INT32), i & 7));
  assert_non_null(x);
  char *s = tkc_uop_expr_str(x);
  assert_non_null(s);
  assert_non_null(strstr(s, "..."));
  tkc_free(s);
  s = tkc_uop_str(x); /* the listing is iterative: every node, no recursion */
  assert_non_null(s);
  assert_true(strlen(s) > 200000);
  tkc_free(s);
  /* shared subexpressions: x2 = x1 + x1 ... printed as a tree would be 2^60 long: capped */
  tkc_uop *y = tkc_uop_var(g, "j", 0, 10);
  for (int i = 0; i < 60; i++) y = tkc_uop_alu2(g, TKC_OP_ADD, y, y);
  s = tkc_uop_expr_str(y);
  assert_non_null(s);
  assert_true(strlen(s) < (4u << 20));
  tkc_free(s);
  tkc_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_alu_source_counts), cmocka_unit_test(test_bad_args),     cmocka_unit_test(test_arg_eq_null),
      cmocka_unit_test(test_vector_width_limit), cmocka_unit_test(test_bad_patterns), cmocka_unit_test(test_deep_expression_strings),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
