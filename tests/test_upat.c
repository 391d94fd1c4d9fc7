/* test_upat.c — the pattern notation, matching (names, permutations, repeats, filters), the
 * PatternMatcher (rule order, concat) and graph_rewrite (fixed point, memoization, bottom-up,
 * substitute, non-convergence, deep graphs). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tkc/uop.h"

/* ---------------------------------------------------------------- helpers */

static tkc_dt dt_(tkc_dtype d) { return tkc_dt_of(d); }
static tkc_uop *ci(tkc_graph *g, int64_t v) { return tkc_uop_const_int(g, dt_(TKC_INT32), v); }
static tkc_uop *cf(tkc_graph *g, double v) { return tkc_uop_const_float(g, dt_(TKC_FLOAT32), v); }
static tkc_uop *var(tkc_graph *g, const char *name) { return tkc_uop_var(g, name, 0, 10); }
static tkc_uop *alu(tkc_graph *g, tkc_op op, tkc_uop *a, tkc_uop *b) { return tkc_uop_alu2(g, op, a, b); }
static tkc_uop *add(tkc_graph *g, tkc_uop *a, tkc_uop *b) { return tkc_uop_alu2(g, TKC_OP_ADD, a, b); }
static tkc_uop *mul(tkc_graph *g, tkc_uop *a, tkc_uop *b) { return tkc_uop_alu2(g, TKC_OP_MUL, a, b); }
static tkc_uop *node(tkc_graph *g, tkc_op op, int n, tkc_uop *s0, tkc_uop *s1, tkc_uop *s2) {
  tkc_uop *s[3] = {s0, s1, s2};
  return tkc_uop_new(g, op, dt_(TKC_VOID), n, s, tkc_arg_none());
}
static const char *var_name(const tkc_uop *u) {
  return u && u->op == TKC_OP_DEFINE_VAR ? u->arg.v.t[0].v.s : NULL;
}

/* What a callback saw. */
typedef struct seen {
  int calls;
  int accept_on;          /* accept on this call number (1-based); 0 = always accept */
  const char *want_x;     /* accept only when x is the variable with this name */
  tkc_uop *x, *y, *z, *c, *root;
  void *ctx;
} seen;

static tkc_uop *cb_record(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)g;
  seen *s = ctx;
  s->calls++;
  s->x = tkc_match_get(m, "x");
  s->y = tkc_match_get(m, "y");
  s->z = tkc_match_get(m, "z");
  s->c = tkc_match_get(m, "c");
  s->root = tkc_match_root(m);
  assert_null(tkc_match_get(m, "not_a_name"));
  assert_null(tkc_match_get(m, NULL));
  if (s->accept_on && s->calls != s->accept_on) return NULL;
  if (s->want_x && (!s->x || !var_name(s->x) || strcmp(var_name(s->x), s->want_x))) return NULL;
  return s->root;
}

static tkc_matcher *pm1(const char *pattern, tkc_rewrite_fn fn) {
  tkc_rule r = {pattern, fn};
  tkc_matcher *pm = tkc_matcher_new(&r, 1);
  if (!pm) fail_msg("pattern \"%s\" did not compile: %s", pattern, tkc_last_error());
  return pm;
}

/* Does pattern match u? (s, if given, records the bindings of the accepted match.) */
static bool matches_s(const char *pattern, tkc_graph *g, tkc_uop *u, seen *s) {
  seen local = {0};
  if (!s) s = &local;
  tkc_matcher *pm = pm1(pattern, cb_record);
  tkc_uop *r = tkc_rewrite_once(pm, g, u, s);
  tkc_matcher_free(pm);
  if (r) assert_ptr_equal(r, u);
  return r != NULL;
}
static bool matches(const char *pattern, tkc_graph *g, tkc_uop *u) { return matches_s(pattern, g, u, NULL); }

#define MATCH(p, u) assert_true(matches(p, g, u))
#define NO_MATCH(p, u) assert_false(matches(p, g, u))

/* ---------------------------------------------------------------- matching */

static void test_bind_names(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *a = var(g, "a"), *b = var(g, "b"), *c3 = ci(g, 3);
  tkc_uop *ab = add(g, a, b);
  seen s = {0};
  assert_true(matches_s("(ADD x y)", g, ab, &s));
  assert_int_equal(s.calls, 1);
  assert_ptr_equal(s.x, a);
  assert_ptr_equal(s.y, b);
  assert_ptr_equal(s.root, ab);
  assert_null(s.z);

  tkc_uop *e = add(g, mul(g, a, c3), b);
  memset(&s, 0, sizeof s);
  assert_true(matches_s("(ADD (MUL x c:CONST) y)", g, e, &s));
  assert_ptr_equal(s.x, a);
  assert_ptr_equal(s.c, c3);
  assert_ptr_equal(s.y, b);
  /* a name on a whole sub-pattern */
  memset(&s, 0, sizeof s);
  assert_true(matches_s("(ADD z:(MUL x c:CONST) y)", g, e, &s));
  assert_ptr_equal(s.z, e->src[0]);
  assert_ptr_equal(s.c, c3);
  /* the root may be named too */
  memset(&s, 0, sizeof s);
  assert_true(matches_s("z:(ADD x y)", g, ab, &s));
  assert_ptr_equal(s.z, ab);
  /* "_" binds nothing */
  memset(&s, 0, sizeof s);
  assert_true(matches_s("(ADD _ y)", g, ab, &s));
  assert_null(s.x);
  assert_non_null(s.y);
  tkc_graph_free(g);
}

static tkc_uop *cb_long_name(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)g;
  *(tkc_uop **)ctx = tkc_match_get(m, "a_rather_long_binding_name_of_forty_chars_x");
  return tkc_match_root(m);
}

/* Two long names that share a 40-character prefix are different names (or the pattern is refused). */
static void test_long_names(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *a = var(g, "a"), *b = var(g, "b");
  tkc_uop *ab = alu(g, TKC_OP_SUB, a, b);
  tkc_rule r = {"(SUB a_rather_long_binding_name_of_forty_chars_x a_rather_long_binding_name_of_forty_chars_y)", cb_long_name};
  tkc_clear_error();
  tkc_matcher *pm = tkc_matcher_new(&r, 1);
  if (pm) { /* supported: then they are two names, binding a and b */
    tkc_uop *got = NULL;
    assert_non_null(tkc_rewrite_once(pm, g, ab, &got));
    assert_ptr_equal(got, a);
    tkc_matcher_free(pm);
  } else { /* or refused, clearly: never silently the same (truncated) name */
    assert_int_equal(tkc_last_status(), TKC_EINVAL);
    assert_non_null(strstr(tkc_last_error(), "rule 0"));
  }
  tkc_graph_free(g);
}

static void test_same_name_twice(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *a = var(g, "a"), *b = var(g, "b"), *c = var(g, "c");
  MATCH("(ADD x x)", add(g, a, a));
  NO_MATCH("(ADD x x)", add(g, a, b));
  MATCH("(SUB x x)", alu(g, TKC_OP_SUB, b, b));
  NO_MATCH("(SUB x x)", alu(g, TKC_OP_SUB, a, b));
  /* across levels, through a commutative inner op */
  MATCH("(ADD (MUL x y) x)", add(g, mul(g, a, b), a));
  MATCH("(ADD (MUL x y) x)", add(g, mul(g, a, b), b));
  MATCH("(ADD (MUL x y) x)", add(g, b, mul(g, a, b)));
  NO_MATCH("(ADD (MUL x y) x)", add(g, mul(g, a, b), c));
  NO_MATCH("=(SUB (MUL x y) x)", alu(g, TKC_OP_SUB, mul(g, a, b), c));
  /* x*y where x and y must differ is *not* implied: two names may bind the same UOp */
  MATCH("(ADD x y)", add(g, a, a));
  tkc_graph_free(g);
}

static void test_commutative(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *a = var(g, "a"), *b = var(g, "b"), *c3 = ci(g, 3);
  seen s = {0};
  assert_true(matches_s("(ADD c:CONST x)", g, add(g, c3, a), &s));
  assert_ptr_equal(s.c, c3);
  assert_ptr_equal(s.x, a);
  memset(&s, 0, sizeof s);
  assert_true(matches_s("(ADD c:CONST x)", g, add(g, a, c3), &s));
  assert_ptr_equal(s.c, c3);
  assert_ptr_equal(s.x, a);
  NO_MATCH("(ADD c:CONST x)", add(g, a, b));
  MATCH("(MUL x c:CONST)", mul(g, c3, a));
  MATCH("(MAX x c:CONST)", alu(g, TKC_OP_MAX, c3, a));
  MATCH("(CMPNE x c:CONST)", alu(g, TKC_OP_CMPNE, c3, a));
  MATCH("(ADD|MUL x c:CONST)", mul(g, c3, a)); /* every op of the set commutes */
  /* '=' keeps the written order */
  MATCH("=(ADD c:CONST x)", add(g, c3, a));
  NO_MATCH("=(ADD c:CONST x)", add(g, a, c3));
  /* a non-commutative op: in order unless '~' */
  MATCH("(SUB c:CONST x)", alu(g, TKC_OP_SUB, c3, a));
  NO_MATCH("(SUB c:CONST x)", alu(g, TKC_OP_SUB, a, c3));
  memset(&s, 0, sizeof s);
  assert_true(matches_s("~(SUB c:CONST x)", g, alu(g, TKC_OP_SUB, a, c3), &s));
  assert_ptr_equal(s.c, c3);
  assert_ptr_equal(s.x, a);
  NO_MATCH("(CMPLT c:CONST x)", alu(g, TKC_OP_CMPLT, a, c3));
  MATCH("~(CMPLT c:CONST x)", alu(g, TKC_OP_CMPLT, a, c3));
  /* a set with a non-commutative op keeps the order */
  NO_MATCH("(ADD|SUB c:CONST x)", add(g, a, c3));
  MATCH("(ADD|SUB c:CONST x)", add(g, c3, a));
  MATCH("~(ADD|SUB c:CONST x)", add(g, a, c3));
  /* three sources, any order */
  tkc_uop *lt = alu(g, TKC_OP_CMPLT, a, b);
  tkc_uop *w = tkc_uop_alu3(g, TKC_OP_WHERE, lt, a, c3);
  memset(&s, 0, sizeof s);
  assert_true(matches_s("~(WHERE c:CONST x:CMPLT y)", g, w, &s));
  assert_ptr_equal(s.c, c3);
  assert_ptr_equal(s.x, lt);
  assert_ptr_equal(s.y, a);
  NO_MATCH("(WHERE c:CONST x:CMPLT y)", w);
  MATCH("(WHERE x:CMPLT y c:CONST)", w);
  /* commutative matching inside a nested pattern */
  MATCH("(ADD (MUL x c:CONST) y)", add(g, b, mul(g, c3, a)));
  tkc_graph_free(g);
}

static void test_repeat(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *a = var(g, "a"), *b = var(g, "b"), *c1 = ci(g, 1), *c2 = ci(g, 2);
  tkc_uop *aaa[3] = {a, a, a}, *ab[2] = {a, b}, *one[1] = {a};
  MATCH("(SINK x*)", tkc_uop_sink(g, 3, aaa)); /* one name binds every source: all the same UOp */
  MATCH("(SINK x*)", tkc_uop_sink(g, 1, one));
  NO_MATCH("(SINK x*)", tkc_uop_sink(g, 2, ab));
  MATCH("(SINK _*)", tkc_uop_sink(g, 2, ab));
  MATCH("(SINK DEFINE_VAR*)", tkc_uop_sink(g, 2, ab));
  tkc_uop *cc[3] = {c1, c2, c1}, *ca[3] = {c1, a, c2};
  tkc_dt v3 = tkc_dt_vec(dt_(TKC_INT32), 3);
  tkc_uop *vc = tkc_uop_new(g, TKC_OP_VECTORIZE, v3, 3, cc, tkc_arg_none());
  tkc_uop *va = tkc_uop_new(g, TKC_OP_VECTORIZE, v3, 3, ca, tkc_arg_none());
  MATCH("(VECTORIZE CONST*)", vc);
  NO_MATCH("(VECTORIZE CONST*)", va);
  MATCH("(VECTORIZE CONST<int>*)", vc);
  NO_MATCH("(VECTORIZE CONST<floats>*)", vc);
  MATCH("(VECTORIZE c:CONST*)", tkc_uop_new(g, TKC_OP_VECTORIZE, v3, 3, (tkc_uop *[]){c2, c2, c2}, tkc_arg_none()));
  NO_MATCH("(VECTORIZE c:CONST*)", vc);
  MATCH("(VECTORIZE (CONST)*)", vc);
  tkc_graph_free(g);
}

static void test_any_len(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *a = var(g, "a"), *b = var(g, "b"), *c = ci(g, 1);
  seen s = {0};
  assert_true(matches_s("(STORE x y ...)", g, node(g, TKC_OP_STORE, 2, a, b, NULL), &s));
  assert_ptr_equal(s.x, a);
  assert_ptr_equal(s.y, b);
  memset(&s, 0, sizeof s);
  assert_true(matches_s("(STORE x y ...)", g, node(g, TKC_OP_STORE, 3, a, b, c), &s));
  assert_ptr_equal(s.x, a);
  assert_ptr_equal(s.y, b);
  NO_MATCH("(STORE x y ...)", node(g, TKC_OP_STORE, 1, a, NULL, NULL));
  NO_MATCH("(STORE x y)", node(g, TKC_OP_STORE, 3, a, b, c));
  MATCH("(STORE x y)", node(g, TKC_OP_STORE, 2, a, b, NULL));
  NO_MATCH("(STORE x y z)", node(g, TKC_OP_STORE, 2, a, b, NULL));
  MATCH("(STORE ...)", node(g, TKC_OP_STORE, 0, NULL, NULL, NULL));
  MATCH("(STORE ...)", node(g, TKC_OP_STORE, 3, a, b, c));
  NO_MATCH("(STORE)", node(g, TKC_OP_STORE, 1, a, NULL, NULL));
  MATCH("(STORE)", node(g, TKC_OP_STORE, 0, NULL, NULL, NULL));
  /* no source list at all: any number of sources */
  MATCH("STORE", node(g, TKC_OP_STORE, 3, a, b, c));
  MATCH("STORE", node(g, TKC_OP_STORE, 0, NULL, NULL, NULL));
  MATCH("(STORE x (CONST) ...)", node(g, TKC_OP_STORE, 3, a, c, b));
  tkc_graph_free(g);
}

static void test_op_sets(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *a = var(g, "a"), *b = var(g, "b"), *c = ci(g, 1);
  tkc_uop *lt = alu(g, TKC_OP_CMPLT, a, b);
  tkc_uop *neg = tkc_uop_alu1(g, TKC_OP_NEG, a), *w = tkc_uop_alu3(g, TKC_OP_WHERE, lt, a, b);
  tkc_uop *r = tkc_uop_range(g, ci(g, 0), c, 0);
  MATCH("ADD|MUL", add(g, a, b));
  MATCH("ADD|MUL", mul(g, a, b));
  NO_MATCH("ADD|MUL", alu(g, TKC_OP_MAX, a, b));
  MATCH("x:ADD|MUL", mul(g, a, b));
  MATCH("(ADD|MUL x y)", mul(g, a, b));
  MATCH("ALU", neg);
  MATCH("ALU", add(g, a, b));
  MATCH("ALU", w);
  MATCH("ALU", lt);
  NO_MATCH("ALU", c);
  NO_MATCH("ALU", r);
  NO_MATCH("ALU", tkc_uop_cast(g, a, dt_(TKC_FLOAT32))); /* CAST is not in GroupOp.ALU */
  MATCH("BINARY", add(g, a, b));
  MATCH("BINARY", lt);
  NO_MATCH("BINARY", neg);
  NO_MATCH("BINARY", w);
  MATCH("UNARY", neg);
  NO_MATCH("UNARY", add(g, a, b));
  MATCH("TERNARY", w);
  MATCH("COMMUTATIVE", alu(g, TKC_OP_CMPNE, a, b));
  NO_MATCH("COMMUTATIVE", lt);
  MATCH("IRREDUCIBLE", r);
  MATCH("IRREDUCIBLE", c);
  MATCH("IRREDUCIBLE", a);
  NO_MATCH("IRREDUCIBLE", neg);
  MATCH("ALL", neg);
  MATCH("ALL", c);
  MATCH("(ALU x y)", add(g, a, b));
  NO_MATCH("(ALU x y)", neg);
  MATCH("(BINARY|NEG x ...)", neg);
  MATCH("(ADD (ALU x y) z)", add(g, c, mul(g, a, b)));
  tkc_graph_free(g);
}

static void test_dtype_filters(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *i32 = ci(g, 1), *i8 = tkc_uop_const_int(g, dt_(TKC_INT8), 1), *u64 = tkc_uop_const_int(g, dt_(TKC_UINT64), 1);
  tkc_uop *bl = tkc_uop_const_int(g, dt_(TKC_BOOL), 1), *f32 = cf(g, 1);
  tkc_uop *f16 = tkc_uop_const_float(g, dt_(TKC_FLOAT16), 1), *bf16 = tkc_uop_const_float(g, dt_(TKC_BFLOAT16), 1);
  tkc_uop *f64 = tkc_uop_const_float(g, dt_(TKC_FLOAT64), 1);
  tkc_uop *f32v = tkc_uop_const_float(g, tkc_dt_vec(dt_(TKC_FLOAT32), 4), 1);
  tkc_uop *i32v = tkc_uop_const_int(g, tkc_dt_vec(dt_(TKC_INT32), 2), 1);
  tkc_uop *gp = tkc_uop_new(g, TKC_OP_DEFINE_GLOBAL, tkc_dt_ptr(dt_(TKC_FLOAT32), TKC_SPACE_GLOBAL, -1), 0, NULL, tkc_arg_int(0));
  tkc_uop *lp = tkc_uop_new(g, TKC_OP_DEFINE_LOCAL, tkc_dt_ptr(dt_(TKC_INT32), TKC_SPACE_LOCAL, 16), 0, NULL, tkc_arg_int(0));
  MATCH("CONST<int>", i32);
  MATCH("CONST<int32>", i32);
  NO_MATCH("CONST<int>", i8);
  NO_MATCH("CONST<int>", f32);
  MATCH("CONST<int8|int>", i8);
  MATCH("CONST<ints>", i8);
  MATCH("CONST<ints>", u64);
  MATCH("CONST<ints>", i32);
  NO_MATCH("CONST<ints>", bl);
  NO_MATCH("CONST<ints>", f32);
  MATCH("CONST<uints>", u64);
  NO_MATCH("CONST<uints>", i32);
  MATCH("CONST<sints>", i8);
  NO_MATCH("CONST<sints>", u64);
  MATCH("CONST<bool>", bl);
  NO_MATCH("CONST<bool>", i8);
  MATCH("CONST<floats>", f16);
  MATCH("CONST<floats>", bf16);
  MATCH("CONST<floats>", f32);
  MATCH("CONST<floats>", f64);
  NO_MATCH("CONST<floats>", i32);
  MATCH("CONST<float>", f32);
  MATCH("CONST<float32>", f32);
  MATCH("CONST<half>", f16);
  NO_MATCH("CONST<float>", f64);
  /* a vector matches when its scalar does */
  MATCH("CONST<float>", f32v);
  MATCH("CONST<floats>", f32v);
  MATCH("CONST<int>", i32v);
  NO_MATCH("CONST<float>", i32v);
  /* pointers */
  MATCH("DEFINE_GLOBAL<ptr>", gp);
  MATCH("DEFINE_LOCAL<ptr>", lp);
  NO_MATCH("DEFINE_GLOBAL<float>", gp);
  NO_MATCH("CONST<ptr>", f32);
  /* on variables inside a pattern */
  tkc_uop *fa = add(g, f32, f32), *ia = add(g, i32, i32);
  MATCH("(ADD x<floats> y)", fa);
  NO_MATCH("(ADD x<floats> y)", ia);
  MATCH("(ADD<int> x y)", ia);
  NO_MATCH("(ADD<int> x y)", fa);
  MATCH("x:ADD<int>", ia);
  MATCH("c:cvar<int>", i32);
  NO_MATCH("c:cvar<int>", f32);
  MATCH("CONST<void|int>", i32);
  tkc_graph_free(g);
}

static void test_arg_filters(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *a = var(g, "a");
  MATCH("CONST[0]", ci(g, 0));
  MATCH("CONST[0]", cf(g, 0.0));
  MATCH("CONST[0]", cf(g, -0.0));
  MATCH("CONST[0.0]", ci(g, 0));
  NO_MATCH("CONST[0]", ci(g, 1));
  NO_MATCH("CONST[0]", cf(g, 0.5));
  MATCH("CONST[1.5]", cf(g, 1.5));
  NO_MATCH("CONST[1.5]", ci(g, 1));
  MATCH("CONST[-2]", ci(g, -2));
  MATCH("CONST[ -2 ]", ci(g, -2));
  MATCH("CONST[true]", tkc_uop_const_int(g, dt_(TKC_BOOL), 1));
  NO_MATCH("CONST[true]", tkc_uop_const_int(g, dt_(TKC_BOOL), 0));
  MATCH("CONST[false]", tkc_uop_const_int(g, dt_(TKC_BOOL), 0));
  MATCH("CONST<bool>[true]", tkc_uop_const_int(g, dt_(TKC_BOOL), 1));
  NO_MATCH("CONST<bool>[true]", ci(g, 1));
  MATCH("CONST<floats>[0]", cf(g, 0));
  NO_MATCH("CONST<floats>[0]", ci(g, 0));
  NO_MATCH("DEFINE_VAR[0]", a); /* a tuple arg is not a number */
  MATCH("RANGE[2]", tkc_uop_range(g, ci(g, 0), ci(g, 4), 2));
  NO_MATCH("RANGE[2]", tkc_uop_range(g, ci(g, 0), ci(g, 4), 3));
  /* inside patterns, with or without parentheses */
  MATCH("(ADD x (CONST[0]))", add(g, a, ci(g, 0)));
  MATCH("(ADD x (CONST[0]))", add(g, ci(g, 0), a));
  MATCH("(ADD x CONST[0])", add(g, a, ci(g, 0)));
  NO_MATCH("(ADD x CONST[0])", add(g, a, ci(g, 1)));
  MATCH("(ADD x c:CONST[0])", add(g, a, ci(g, 0)));
  tkc_graph_free(g);
}

static void test_cvar(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *a = var(g, "a"), *c = ci(g, 7);
  tkc_arg vals[2] = {tkc_arg_int(1), tkc_arg_int(2)};
  tkc_uop *vc = tkc_uop_new(g, TKC_OP_VCONST, tkc_dt_vec(dt_(TKC_INT32), 2), 0, NULL, tkc_arg_tuple(vals, 2));
  MATCH("c:cvar", c);
  MATCH("c:cvar", vc);
  MATCH("cvar", c);
  NO_MATCH("c:cvar", a);
  MATCH("c:cvar<int>", vc);
  NO_MATCH("c:cvar<floats>", vc);
  seen s = {0};
  assert_true(matches_s("(MUL x c:cvar)", g, mul(g, c, a), &s));
  assert_ptr_equal(s.c, c);
  assert_ptr_equal(s.x, a);
  NO_MATCH("(MUL x c:cvar)", mul(g, a, a));
  MATCH("(ADD x cvar[7])", add(g, a, c));
  tkc_graph_free(g);
}

static void test_no_match(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *a = var(g, "a"), *b = var(g, "b");
  seen s = {0};
  tkc_matcher *pm = pm1("(ADD x (CONST))", cb_record);
  assert_null(tkc_rewrite_once(pm, g, add(g, a, b), &s));
  assert_null(tkc_rewrite_once(pm, g, mul(g, a, ci(g, 1)), &s)); /* no rule for MUL */
  assert_null(tkc_rewrite_once(pm, g, a, &s));
  assert_int_equal(s.calls, 0);
  tkc_matcher_free(pm);
  /* an empty matcher matches nothing */
  pm = tkc_matcher_new(NULL, 0);
  assert_non_null(pm);
  assert_int_equal(tkc_matcher_size(pm), 0);
  assert_null(tkc_rewrite_once(pm, g, a, NULL));
  assert_ptr_equal(tkc_graph_rewrite(g, add(g, a, b), pm, NULL), add(g, a, b));
  tkc_matcher_free(pm);
  tkc_graph_free(g);
}

/* ---------------------------------------------------------------- callbacks that decline */

static tkc_uop *cb_decline(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)g;
  (void)m;
  ((seen *)ctx)->calls++;
  return NULL;
}
static tkc_uop *cb_const42(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)m;
  (void)ctx;
  return ci(g, 42);
}

static void test_callback_decline(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *a = var(g, "a"), *b = var(g, "b");
  tkc_uop *ab = add(g, a, b);
  /* declining the first binding: the matcher tries the other order */
  seen s = {.want_x = "b"};
  assert_true(matches_s("(ADD x y)", g, ab, &s));
  assert_int_equal(s.calls, 2);
  assert_ptr_equal(s.x, b);
  assert_ptr_equal(s.y, a);
  /* accepting only on the third call: there are only two orders */
  memset(&s, 0, sizeof s);
  s.accept_on = 3;
  assert_false(matches_s("(ADD x y)", g, ab, &s));
  assert_int_equal(s.calls, 2);
  /* nested permutations: 2 (outer) x 2 (inner) bindings */
  tkc_uop *e = add(g, mul(g, a, b), var(g, "c"));
  memset(&s, 0, sizeof s);
  s.accept_on = 100;
  assert_false(matches_s("(ADD (MUL x y) z)", g, e, &s));
  assert_int_equal(s.calls, 2); /* z cannot be the MUL: only the inner op has two orders */
  memset(&s, 0, sizeof s);
  s.accept_on = 100;
  assert_false(matches_s("(ADD (MUL x y) (ADD|MUL z w))", g, add(g, mul(g, a, b), mul(g, a, b)), &s));
  assert_int_equal(s.calls, 8); /* 2 outer orders x 2 x 2 inner orders */
  /* declining makes the matcher go on to the next rule */
  seen d = {0};
  tkc_rule rules[3] = {{"(ADD x y)", cb_decline}, {"(MUL x y)", cb_decline}, {"(ADD x y)", cb_const42}};
  tkc_matcher *pm = tkc_matcher_new(rules, 3);
  assert_non_null(pm);
  assert_ptr_equal(tkc_rewrite_once(pm, g, ab, &d), ci(g, 42));
  assert_int_equal(d.calls, 2); /* both orders of rule 0, then rule 2 */
  d.calls = 0;
  assert_null(tkc_rewrite_once(pm, g, mul(g, a, b), &d));
  assert_int_equal(d.calls, 2);
  tkc_matcher_free(pm);
  tkc_graph_free(g);
}

static void test_early_reject(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *a = var(g, "a"), *b = var(g, "b"), *c = ci(g, 3), *d = ci(g, 4);
  tkc_uop *lt = alu(g, TKC_OP_CMPLT, a, b);
  /* the required op is present, in either position */
  MATCH("(ADD x (CONST))", add(g, a, c));
  MATCH("(ADD x (CONST))", add(g, c, a));
  MATCH("(ADD (CONST) (CONST))", add(g, c, d));
  NO_MATCH("(ADD (CONST) (CONST))", add(g, c, a));
  MATCH("(WHERE (CMPLT x y) (CONST) z)", tkc_uop_alu3(g, TKC_OP_WHERE, lt, c, a));
  MATCH("~(WHERE (CONST) z (CMPLT x y))", tkc_uop_alu3(g, TKC_OP_WHERE, lt, c, a));
  MATCH("(STORE x (CONST) ...)", node(g, TKC_OP_STORE, 3, a, c, b));
  /* only single-op sources take part; sets and variables do not */
  MATCH("(ADD x:CONST|DEFINE_VAR y)", add(g, a, b));
  MATCH("(ADD cvar x)", add(g, a, c));
  /* a deeper level's ops do not count at the top */
  MATCH("(ADD (MUL x (CONST)) y)", add(g, b, mul(g, a, c)));
  MATCH("(ADD (MUL x (CONST)) y)", add(g, mul(g, c, a), b));
  /* several rules on the same op, each with its own reject set */
  seen s = {0};
  tkc_rule rules[4] = {{"(ADD x (RANGE))", cb_decline}, {"(ADD x (SPECIAL))", cb_decline},
                       {"(ADD (DEFINE_VAR) (CONST))", cb_const42}, {"(ADD x y)", cb_decline}};
  tkc_matcher *pm = tkc_matcher_new(rules, 4);
  assert_ptr_equal(tkc_rewrite_once(pm, g, add(g, a, c), &s), ci(g, 42));
  assert_int_equal(s.calls, 0); /* the RANGE/SPECIAL rules were rejected early */
  assert_null(tkc_rewrite_once(pm, g, add(g, a, b), &s));
  assert_int_equal(s.calls, 2); /* only the catch-all rule ran (two orders) */
  tkc_matcher_free(pm);
  tkc_graph_free(g);
}

/* ---------------------------------------------------------------- parse errors */

static void test_parse_errors(void **state) {
  (void)state;
  static const char *bad[] = {
      "(ADD x y",         /* unbalanced */
      "((ADD x y)",       /* unbalanced */
      "(ADD x y))",       /* trailing ')' */
      "ADD x",            /* trailing text */
      "(ADD x y) z",      /* trailing text */
      "(FOO x y)",        /* unknown op */
      "FOO",              /* unknown op */
      "ADD|FOO",          /* unknown op in a set */
      "(ADD x<intt> y)",  /* unknown dtype */
      "CONST<>",          /* empty dtype list */
      "(ADD x<int y)",    /* unclosed dtype list */
      "(ADD x y)*",       /* '*' outside a source list */
      "CONST*",           /* '*' outside a source list */
      "(ADD x* y)",       /* a repeated source must be the only one */
      "(ADD x y*)",       /* a repeated source must be the only one */
      "(STORE x ... y)",  /* '...' must come last */
      "x",                /* no op at the top */
      "_",                /* no op at the top */
      "x<int>",           /* no op at the top */
      "x*",               /* '*' outside / no op */
      "",                 /* empty */
      "   ",              /* empty */
      ")",                /* stray ')' */
      "~ADD",             /* '~' needs '(' */
      "=x",               /* '=' needs '(' */
      "CONST[abc]",       /* not a number */
      "CONST[1",          /* unclosed arg */
      "x:y:ADD",          /* two names */
      "(add x y)",        /* ops are upper case */
      "(ADD x y) # c",    /* junk */
      "(ADD 1 y)",        /* a number is not a pattern */
      "(SINK a b c d e f g h i)", /* more sources than a pattern node holds */
  };
  static tkc_rule ok = {"(ADD x (CONST[0]))", cb_decline};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    tkc_rule rules[3] = {ok, {bad[i], cb_decline}, ok};
    tkc_clear_error();
    tkc_matcher *pm = tkc_matcher_new(rules, 3);
    if (pm) fail_msg("pattern \"%s\" compiled", bad[i]);
    assert_int_equal(tkc_last_status(), TKC_EINVAL);
    const char *msg = tkc_last_error();
    if (!strstr(msg, "rule 1") || (bad[i][0] && !strstr(msg, bad[i])))
      fail_msg("message for \"%s\" does not name the rule: %s", bad[i], msg);
  }
  /* NULL pattern / callback */
  tkc_rule nulls[2][2] = {{ok, {NULL, cb_decline}}, {ok, {"(ADD x y)", NULL}}};
  for (int i = 0; i < 2; i++) {
    tkc_clear_error();
    assert_null(tkc_matcher_new(nulls[i], 2));
    assert_int_equal(tkc_last_status(), TKC_EINVAL);
    assert_non_null(strstr(tkc_last_error(), "rule 1"));
  }
  /* and after all that, a good matcher still compiles and works */
  tkc_matcher *pm = tkc_matcher_new(&ok, 1);
  assert_non_null(pm);
  assert_int_equal(tkc_matcher_size(pm), 1);
  tkc_matcher_free(pm);
  /* the notation's whitespace is free */
  tkc_rule spaced = {"  (  ADD   x:CONST<int | int8>[0]   =( MUL y z ) ) ", cb_decline};
  pm = tkc_matcher_new(&spaced, 1);
  if (!pm) fail_msg("spaced pattern: %s", tkc_last_error());
  tkc_matcher_free(pm);
}

/* ---------------------------------------------------------------- matcher concat */

static tkc_uop *cb_one(tkc_graph *g, const tkc_match *m, void *ctx) { (void)m; (void)ctx; return ci(g, 1); }
static tkc_uop *cb_two(tkc_graph *g, const tkc_match *m, void *ctx) { (void)m; (void)ctx; return ci(g, 2); }

static void test_concat(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *a = var(g, "a"), *b = var(g, "b");
  tkc_rule r1[1] = {{"(ADD x y)", cb_one}};
  tkc_rule r2[2] = {{"(ADD x y)", cb_two}, {"(MUL x y)", cb_two}};
  tkc_matcher *m1 = tkc_matcher_new(r1, 1), *m2 = tkc_matcher_new(r2, 2);
  tkc_matcher *m12 = tkc_matcher_concat(m1, m2), *m21 = tkc_matcher_concat(m2, m1);
  tkc_matcher *mn2 = tkc_matcher_concat(NULL, m2), *m1n = tkc_matcher_concat(m1, NULL), *mnn = tkc_matcher_concat(NULL, NULL);
  assert_true(m1 && m2 && m12 && m21 && mn2 && m1n && mnn);
  tkc_matcher_free(m1); /* the concatenation does not depend on its parts */
  tkc_matcher_free(m2);
  assert_int_equal(tkc_matcher_size(m12), 3);
  assert_int_equal(tkc_matcher_size(m21), 3);
  assert_int_equal(tkc_matcher_size(mn2), 2);
  assert_int_equal(tkc_matcher_size(m1n), 1);
  assert_int_equal(tkc_matcher_size(mnn), 0);
  tkc_uop *ab = add(g, a, b), *mab = mul(g, a, b);
  assert_ptr_equal(tkc_rewrite_once(m12, g, ab, NULL), ci(g, 1)); /* the first matcher's rule wins */
  assert_ptr_equal(tkc_rewrite_once(m21, g, ab, NULL), ci(g, 2));
  assert_ptr_equal(tkc_rewrite_once(m12, g, mab, NULL), ci(g, 2));
  assert_ptr_equal(tkc_rewrite_once(m21, g, mab, NULL), ci(g, 2));
  assert_ptr_equal(tkc_rewrite_once(mn2, g, ab, NULL), ci(g, 2));
  assert_ptr_equal(tkc_rewrite_once(m1n, g, ab, NULL), ci(g, 1));
  assert_null(tkc_rewrite_once(m1n, g, mab, NULL));
  assert_null(tkc_rewrite_once(mnn, g, ab, NULL));
  /* concat of a concat */
  tkc_matcher *m3 = tkc_matcher_concat(m21, m12);
  assert_int_equal(tkc_matcher_size(m3), 6);
  assert_ptr_equal(tkc_rewrite_once(m3, g, ab, NULL), ci(g, 2));
  tkc_matcher_free(m3);
  tkc_matcher_free(m12);
  tkc_matcher_free(m21);
  tkc_matcher_free(mn2);
  tkc_matcher_free(m1n);
  tkc_matcher_free(mnn);
  tkc_graph_free(g);
}

/* ---------------------------------------------------------------- graph_rewrite */

static tkc_uop *cb_x(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)g;
  (void)ctx;
  return tkc_match_get(m, "x");
}
/* (x + c1) + c2 -> x + (c1+c2) */
static tkc_uop *cb_fold_add(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  tkc_uop *x = tkc_match_get(m, "x"), *c1 = tkc_match_get(m, "c1"), *c2 = tkc_match_get(m, "c2");
  return add(g, x, ci(g, tkc_uop_const_i(c1) + tkc_uop_const_i(c2)));
}

static const tkc_rule simple_rules[] = {
    {"(ADD x (CONST[0]))", cb_x},                     /* x+0 -> x */
    {"(MUL x (CONST[1]))", cb_x},                     /* x*1 -> x */
    {"(ADD (ADD x c1:CONST) c2:CONST)", cb_fold_add}, /* (x+c1)+c2 -> x+(c1+c2) */
};

static void test_rewrite_fixed_point(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_matcher *pm = tkc_matcher_new(simple_rules, 3);
  assert_non_null(pm);
  tkc_uop *a = var(g, "a"), *b = var(g, "b");
  tkc_uop *e = add(g, add(g, add(g, a, ci(g, 1)), ci(g, 2)), ci(g, 3));
  assert_ptr_equal(tkc_graph_rewrite(g, e, pm, NULL), add(g, a, ci(g, 6)));
  /* folding makes a CONST 0, whose x+0 then goes: two rules chained */
  e = add(g, add(g, a, ci(g, 5)), ci(g, -5));
  assert_ptr_equal(tkc_graph_rewrite(g, e, pm, NULL), a);
  e = add(g, mul(g, add(g, mul(g, a, ci(g, 1)), ci(g, 0)), ci(g, 1)), ci(g, 0));
  assert_ptr_equal(tkc_graph_rewrite(g, e, pm, NULL), a);
  /* nothing to do: the same root */
  e = mul(g, add(g, a, b), b);
  assert_ptr_equal(tkc_graph_rewrite(g, e, pm, NULL), e);
  /* rewrites below an untouched node rebuild it */
  e = mul(g, add(g, a, ci(g, 0)), add(g, b, ci(g, 0)));
  assert_ptr_equal(tkc_graph_rewrite(g, e, pm, NULL), mul(g, a, b));
  tkc_uop *srcs[2] = {add(g, a, ci(g, 0)), mul(g, b, ci(g, 1))};
  tkc_uop *want[2] = {a, b};
  assert_ptr_equal(tkc_graph_rewrite(g, tkc_uop_sink(g, 2, srcs), pm, NULL), tkc_uop_sink(g, 2, want));
  /* bottom-up reaches the same fixed point here */
  e = add(g, add(g, add(g, a, ci(g, 1)), ci(g, 2)), ci(g, 3));
  assert_ptr_equal(tkc_graph_rewrite_bottom_up(g, e, pm, NULL), add(g, a, ci(g, 6)));
  tkc_matcher_free(pm);
  tkc_graph_free(g);
}

/* Counts rewrite attempts per UOp id; declines. */
typedef struct counter {
  int *per_id;
  size_t cap;
  int total;
  void *want_ctx;
} counter;

static tkc_uop *cb_count(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)g;
  counter *c = ctx;
  tkc_uop *r = tkc_match_root(m);
  assert_true(r->id < c->cap);
  c->per_id[r->id]++;
  c->total++;
  return NULL;
}

/* ADD -> MUL, counted */
static tkc_uop *cb_add_to_mul(tkc_graph *g, const tkc_match *m, void *ctx) {
  counter *c = ctx;
  tkc_uop *r = tkc_match_root(m);
  if (r->id < c->cap) c->per_id[r->id]++;
  c->total++;
  return mul(g, tkc_match_get(m, "x"), tkc_match_get(m, "y"));
}

static void test_rewrite_memo(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *a = var(g, "a"), *b = var(g, "b");
  tkc_uop *s = add(g, a, b);  /* used by everything below */
  tkc_uop *t = mul(g, s, s);
  tkc_uop *u = add(g, t, s);
  tkc_uop *v = mul(g, u, t);
  tkc_uop *srcs[4] = {v, u, s, t};
  tkc_uop *root = tkc_uop_sink(g, 4, srcs);
  size_t n;
  tkc_uop **order = tkc_toposort(root, &n);
  assert_non_null(order);
  counter c = {calloc(1024, sizeof(int)), 1024, 0, NULL};
  tkc_rule r = {"ALL", cb_count};
  tkc_matcher *pm = tkc_matcher_new(&r, 1);
  assert_non_null(pm);
  assert_ptr_equal(tkc_graph_rewrite(g, root, pm, &c), root);
  assert_int_equal(c.total, (int)n); /* each distinct node once */
  for (size_t i = 0; i < n; i++) assert_int_equal(c.per_id[order[i]->id], 1);
  memset(c.per_id, 0, 1024 * sizeof(int));
  c.total = 0;
  assert_ptr_equal(tkc_graph_rewrite_bottom_up(g, root, pm, &c), root);
  assert_int_equal(c.total, (int)n);
  for (size_t i = 0; i < n; i++) assert_int_equal(c.per_id[order[i]->id], 1);
  tkc_matcher_free(pm);

  /* a rewrite that changes things: every ADD once, however often it is shared */
  memset(c.per_id, 0, 1024 * sizeof(int));
  c.total = 0;
  size_t before = tkc_graph_size(g);
  tkc_rule r2 = {"(ADD x y)", cb_add_to_mul};
  pm = tkc_matcher_new(&r2, 1);
  tkc_uop *out = tkc_graph_rewrite(g, root, pm, &c);
  assert_non_null(out);
  assert_int_equal(c.per_id[s->id], 1);
  assert_int_equal(c.per_id[u->id], 0); /* u = t+s was rebuilt from new sources first */
  assert_int_equal(c.total, 2);         /* s, then the rebuilt u */
  tkc_uop *s2 = mul(g, a, b), *t2 = mul(g, s2, s2), *u2 = mul(g, t2, s2), *v2 = mul(g, u2, t2);
  tkc_uop *want[4] = {v2, u2, s2, t2};
  assert_ptr_equal(out, tkc_uop_sink(g, 4, want));
  assert_true(tkc_graph_size(g) > before);
  /* running it again on the result: nothing left to do, no calls */
  c.total = 0;
  assert_ptr_equal(tkc_graph_rewrite(g, out, pm, &c), out);
  assert_int_equal(c.total, 0);
  tkc_matcher_free(pm);
  free(c.per_id);
  tkc_free(order);
  tkc_graph_free(g);
}

static tkc_uop *cb_check_ctx(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)g;
  (void)m;
  counter *c = ctx;
  assert_ptr_equal(c->want_ctx, ctx);
  c->total++;
  return NULL;
}

static void test_rewrite_ctx(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *e = add(g, var(g, "a"), ci(g, 2));
  counter c = {NULL, 0, 0, NULL};
  c.want_ctx = &c;
  tkc_rule r = {"ALU", cb_check_ctx};
  tkc_matcher *pm = tkc_matcher_new(&r, 1);
  assert_null(tkc_rewrite_once(pm, g, e, &c));
  assert_int_equal(c.total, 1);
  assert_ptr_equal(tkc_graph_rewrite(g, e, pm, &c), e);
  assert_int_equal(c.total, 2);
  assert_ptr_equal(tkc_graph_rewrite_bottom_up(g, e, pm, &c), e);
  assert_int_equal(c.total, 3);
  tkc_matcher_free(pm);
  tkc_graph_free(g);
}

/* NEG(a) -> 1, only while its source is still the variable named "a" */
static tkc_uop *cb_neg_of_a(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  const char *n = var_name(tkc_match_get(m, "x"));
  return n && !strcmp(n, "a") ? ci(g, 1) : NULL;
}
/* a -> b */
static tkc_uop *cb_rename_a(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  const char *n = var_name(tkc_match_root(m));
  return n && !strcmp(n, "a") ? var(g, "b") : NULL;
}

static void test_rewrite_bottom_up(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_rule rules[2] = {{"(NEG x:DEFINE_VAR)", cb_neg_of_a}, {"DEFINE_VAR", cb_rename_a}};
  tkc_matcher *pm = tkc_matcher_new(rules, 2);
  tkc_uop *a = var(g, "a"), *b = var(g, "b");
  tkc_uop *e = tkc_uop_alu1(g, TKC_OP_NEG, a);
  /* default: sources first, so a is already b when NEG is looked at */
  assert_ptr_equal(tkc_graph_rewrite(g, e, pm, NULL), tkc_uop_alu1(g, TKC_OP_NEG, b));
  /* bottom-up: the NEG is looked at first and still sees a */
  assert_ptr_equal(tkc_graph_rewrite_bottom_up(g, e, pm, NULL), ci(g, 1));
  /* deeper: MUL(NEG(a), a) */
  e = mul(g, tkc_uop_alu1(g, TKC_OP_NEG, a), a);
  assert_ptr_equal(tkc_graph_rewrite(g, e, pm, NULL), mul(g, tkc_uop_alu1(g, TKC_OP_NEG, b), b));
  assert_ptr_equal(tkc_graph_rewrite_bottom_up(g, e, pm, NULL), mul(g, ci(g, 1), b));
  tkc_matcher_free(pm);
  tkc_graph_free(g);
}

static void test_substitute(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *a = var(g, "a"), *b = var(g, "b"), *c = var(g, "c"), *one = ci(g, 1);
  tkc_uop *e = mul(g, add(g, a, one), a);
  tkc_uop *from[2] = {a, NULL}, *to[2] = {b, NULL};
  assert_ptr_equal(tkc_substitute(g, e, 1, from, to), mul(g, add(g, b, one), b));
  /* an inner node */
  from[0] = add(g, a, one);
  to[0] = c;
  assert_ptr_equal(tkc_substitute(g, e, 1, from, to), mul(g, c, a));
  /* the root itself */
  from[0] = e;
  to[0] = one;
  assert_ptr_equal(tkc_substitute(g, e, 1, from, to), one);
  /* two at once */
  tkc_uop *f = alu(g, TKC_OP_SUB, a, b);
  tkc_uop *fr[2] = {a, b}, *tt[2] = {c, one};
  assert_ptr_equal(tkc_substitute(g, f, 2, fr, tt), alu(g, TKC_OP_SUB, c, one));
  /* a swap {a: b, b: a}: the replacements happen at once (a replacement is not replaced again) */
  tt[0] = b;
  tt[1] = a;
  assert_ptr_equal(tkc_substitute(g, f, 2, fr, tt), alu(g, TKC_OP_SUB, b, a));
  /* nothing to replace */
  assert_ptr_equal(tkc_substitute(g, e, 0, NULL, NULL), e);
  from[0] = c;
  to[0] = b;
  assert_ptr_equal(tkc_substitute(g, e, 1, from, to), e);
  tkc_graph_free(g);
}

/* ADD(x,y) -> MUL(x,y) and MUL(x,y) -> ADD(x,y): a cycle through two interned nodes. */
static tkc_uop *cb_to_mul(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  return mul(g, tkc_match_get(m, "x"), tkc_match_get(m, "y"));
}
static tkc_uop *cb_to_add(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  return add(g, tkc_match_get(m, "x"), tkc_match_get(m, "y"));
}
/* c -> c+1 forever: every step makes a node never seen before. */
static tkc_uop *cb_inc(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  tkc_uop *c = tkc_match_root(m);
  return ci(g, tkc_uop_const_i(c) + 1);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Rules that never settle end with TKC_EINTERNAL quickly: a cycle through interned nodes is seen
 * at once, rules that make new nodes forever hit the rewrite-chain limit. */
static void expect_gives_up(tkc_graph *g, tkc_uop *root, const tkc_matcher *pm, int bottom_up, const char *what) {
  double t0 = now_s();
  size_t before = tkc_graph_size(g);
  tkc_clear_error();
  assert_null(bottom_up ? tkc_graph_rewrite_bottom_up(g, root, pm, NULL) : tkc_graph_rewrite(g, root, pm, NULL));
  assert_int_equal(tkc_last_status(), TKC_EINTERNAL);
  double dt = now_s() - t0;
  print_message("%s (%s): gave up after %.3f s, %zu new UOps\n", what, bottom_up ? "bottom-up" : "default", dt, tkc_graph_size(g) - before);
  assert_true(tkc_graph_size(g) - before < 2000000); /* bounded work, not an exhausted machine */
}

static void test_rewrite_nonconverging(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *a = var(g, "a"), *b = var(g, "b");
  tkc_rule cyc[2] = {{"(ADD x y)", cb_to_mul}, {"(MUL x y)", cb_to_add}};
  tkc_matcher *pm = tkc_matcher_new(cyc, 2);
  expect_gives_up(g, add(g, a, b), pm, 1, "ADD<->MUL");
  expect_gives_up(g, add(g, a, b), pm, 0, "ADD<->MUL");
  tkc_matcher_free(pm);
  /* the graph is still usable */
  assert_ptr_equal(add(g, a, b), add(g, a, b));
  tkc_rule inc = {"CONST<int>", cb_inc};
  pm = tkc_matcher_new(&inc, 1);
  expect_gives_up(g, ci(g, 0), pm, 0, "c->c+1");
  expect_gives_up(g, ci(g, 0), pm, 1, "c->c+1");
  tkc_matcher_free(pm);
  tkc_graph_free(g);
}

/* 1,000,000-deep chains: the engine is iterative, so neither mode may overflow the C stack. */
static void test_rewrite_deep_chain(void **state) {
  (void)state;
  enum { N = 1000000 };
  tkc_graph *g = tkc_graph_new();
  tkc_uop *a = var(g, "a"), *zero = ci(g, 0), *one = ci(g, 1);
  /* default mode, collapsing: ((a+0)+0)+... -> a */
  tkc_uop *x = a;
  for (int i = 0; i < N; i++) x = add(g, x, zero);
  tkc_matcher *pm = tkc_matcher_new(simple_rules, 1);
  assert_ptr_equal(tkc_graph_rewrite(g, x, pm, NULL), a);
  /* a chain where nothing applies comes back unchanged */
  tkc_uop *y = a;
  for (int i = 0; i < N / 10; i++) y = mul(g, y, a);
  assert_ptr_equal(tkc_graph_rewrite(g, y, pm, NULL), y);
  assert_ptr_equal(tkc_graph_rewrite_bottom_up(g, y, pm, NULL), y);
  tkc_matcher_free(pm);
  tkc_graph_free(g);

  /* every node rewritten: a chain of ADDs becomes a chain of MULs (bottom-up at full depth,
   * the default mode on a tenth of it to keep the ASan run short) */
  g = tkc_graph_new();
  a = var(g, "a");
  one = ci(g, 1);
  tkc_uop *z = a, *z10 = NULL, *want10 = a;
  for (int i = 0; i < N; i++) {
    z = add(g, z, one);
    if (i == N / 10 - 1) z10 = z;
  }
  for (int i = 0; i < N / 10; i++) want10 = mul(g, want10, one);
  tkc_rule r = {"(ADD x y)", cb_to_mul};
  pm = tkc_matcher_new(&r, 1);
  tkc_uop *out = tkc_graph_rewrite_bottom_up(g, z, pm, NULL);
  for (int i = 0; i < N; i++) { /* walk it: N MULs of one down to a */
    if (!out || out->op != TKC_OP_MUL || out->src[1] != one) fail_msg("level %d of the rewritten chain is wrong", i);
    if (i == N - N / 10) assert_ptr_equal(out, want10); /* shares the nodes built directly */
    out = out->src[0];
  }
  assert_ptr_equal(out, a);
  assert_ptr_equal(tkc_graph_rewrite(g, z10, pm, NULL), want10);
  tkc_matcher_free(pm);
  tkc_graph_free(g);
}

/* Bottom-up on a chain whose every level is removed by a rule: the top node is rewritten N
 * times in a row before any source is visited (the per-node limit grows with the graph). */
static void test_rewrite_bottom_up_long_collapse(void **state) {
  (void)state;
  enum { N = 1000000 };
  tkc_graph *g = tkc_graph_new();
  tkc_uop *a = var(g, "a"), *zero = ci(g, 0), *x = a;
  for (int i = 0; i < N; i++) x = add(g, x, zero);
  tkc_matcher *pm = tkc_matcher_new(simple_rules, 1);
  tkc_clear_error();
  tkc_uop *r = tkc_graph_rewrite_bottom_up(g, x, pm, NULL);
  if (!r) fail_msg("bottom-up rewrite of a %d-deep x+0 chain failed: %s", N, tkc_last_error());
  assert_ptr_equal(r, a);
  tkc_matcher_free(pm);
  tkc_graph_free(g);
}

/* ---------------------------------------------------------------- bad input */

static void test_bad_inputs(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *a = var(g, "a"), *e = add(g, a, ci(g, 0));
  tkc_matcher *pm = tkc_matcher_new(simple_rules, 3);
  assert_non_null(pm);
  tkc_clear_error();
  assert_null(tkc_matcher_new(NULL, 2));
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  tkc_matcher *empty = tkc_matcher_new(NULL, 0);
  assert_non_null(empty);
  tkc_matcher_free(empty);
  tkc_matcher_free(NULL);
  assert_int_equal(tkc_matcher_size(NULL), 0);
  empty = tkc_matcher_concat(NULL, NULL);
  assert_non_null(empty);
  tkc_matcher_free(empty);

  assert_null(tkc_rewrite_once(NULL, g, e, NULL));
  assert_null(tkc_rewrite_once(pm, NULL, e, NULL));
  assert_null(tkc_rewrite_once(pm, g, NULL, NULL));
  assert_ptr_equal(tkc_rewrite_once(pm, g, e, NULL), a);

#define EXPECT_EINVAL(call)            \
  do {                                 \
    tkc_clear_error();                 \
    assert_null(call);                 \
    assert_int_equal(tkc_last_status(), TKC_EINVAL); \
    assert_true(strlen(tkc_last_error()) > 0);       \
  } while (0)
  EXPECT_EINVAL(tkc_graph_rewrite(NULL, e, pm, NULL));
  EXPECT_EINVAL(tkc_graph_rewrite(g, NULL, pm, NULL));
  EXPECT_EINVAL(tkc_graph_rewrite(g, e, NULL, NULL));
  EXPECT_EINVAL(tkc_graph_rewrite_bottom_up(NULL, e, pm, NULL));
  EXPECT_EINVAL(tkc_graph_rewrite_bottom_up(g, NULL, pm, NULL));
  EXPECT_EINVAL(tkc_graph_rewrite_bottom_up(g, e, NULL, NULL));
  tkc_uop *from[1] = {a}, *to[1] = {ci(g, 3)}, *nul[1] = {NULL};
  EXPECT_EINVAL(tkc_substitute(NULL, e, 1, from, to));
  EXPECT_EINVAL(tkc_substitute(g, NULL, 1, from, to));
  EXPECT_EINVAL(tkc_substitute(g, e, 1, NULL, to));
  EXPECT_EINVAL(tkc_substitute(g, e, 1, from, NULL));
  EXPECT_EINVAL(tkc_substitute(g, e, 1, nul, to));
  EXPECT_EINVAL(tkc_substitute(g, e, 1, from, nul));
#undef EXPECT_EINVAL
  assert_null(tkc_match_get(NULL, "x"));
  assert_null(tkc_match_root(NULL));
  /* everything still works */
  assert_ptr_equal(tkc_graph_rewrite(g, e, pm, NULL), a);
  assert_ptr_equal(tkc_substitute(g, e, 1, from, to), add(g, ci(g, 3), ci(g, 0)));
  tkc_matcher_free(pm);
  tkc_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bind_names),
      cmocka_unit_test(test_long_names),
      cmocka_unit_test(test_same_name_twice),
      cmocka_unit_test(test_commutative),
      cmocka_unit_test(test_repeat),
      cmocka_unit_test(test_any_len),
      cmocka_unit_test(test_op_sets),
      cmocka_unit_test(test_dtype_filters),
      cmocka_unit_test(test_arg_filters),
      cmocka_unit_test(test_cvar),
      cmocka_unit_test(test_no_match),
      cmocka_unit_test(test_callback_decline),
      cmocka_unit_test(test_early_reject),
      cmocka_unit_test(test_parse_errors),
      cmocka_unit_test(test_concat),
      cmocka_unit_test(test_rewrite_fixed_point),
      cmocka_unit_test(test_rewrite_memo),
      cmocka_unit_test(test_rewrite_ctx),
      cmocka_unit_test(test_rewrite_bottom_up),
      cmocka_unit_test(test_substitute),
      cmocka_unit_test(test_rewrite_nonconverging),
      cmocka_unit_test(test_rewrite_deep_chain),
      cmocka_unit_test(test_rewrite_bottom_up_long_collapse),
      cmocka_unit_test(test_bad_inputs),
  };
  const char *filter = getenv("TKC_TEST_FILTER"); /* e.g. TKC_TEST_FILTER='test_rewrite_*' */
  if (filter) cmocka_set_test_filter(filter);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
