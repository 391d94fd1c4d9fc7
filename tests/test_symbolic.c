/* Tests of the symbolic rule sets (src/uops/symbolic.c).
 *
 * Most cases are written as small s-expressions, built with the public UOp API and simplified with
 * tkc_simplify (or tkc_symbolic_flat); the result is compared by tkc_uop_expr_str. The expected
 * strings are tinygrad v0.10.2's output for the same expression, except where tinygrad's rule is
 * wrong under C semantics (IDIV/MOD truncate toward zero, x//0 == 0, int32 wraps); those cases say
 * why in a comment.
 *
 * Case syntax: vars "a 0 10, b 0 3, r0 R 4, g0 S 16" declare DEFINE_VARs [lo, hi], RANGEs over
 * [0, n) (axis from the name, rendered ridxN) and SPECIALs of size n. Expressions are prefix:
 * (add x y) (mul x y) (idiv x y) (mod x y) (max x y) (lt x y) (ne x y) (where c t f) (neg x)
 * (and x y) (or x y); integer literals are int32 CONSTs, True/False bool CONSTs.
 *
 * The randomized checks build random int32 trees, evaluate them before and after simplification for
 * many variable assignments with an evaluator written here (C semantics, int32 wrapping), and
 * require equal values. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tkc/uop.h"

/* ---------------------------------------------------------------- building from s-expressions */

typedef struct env {
  tkc_graph *g;
  int n;
  char names[16][16];
  tkc_uop *vars[16];
} env;

static tkc_uop *c32(tkc_graph *g, int64_t v) { return tkc_uop_const_int(g, tkc_dt_of(TKC_INT32), v); }

static void env_init(env *e, tkc_graph *g, const char *spec) {
  memset(e, 0, sizeof *e);
  e->g = g;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", spec);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char name[16], kind[24];
    long long n2 = 0;
    int k = sscanf(tok, " %15s %23s %lld", name, kind, &n2);
    assert_true(k == 3 && e->n < 16);
    tkc_uop *u;
    if (!strcmp(kind, "R")) u = tkc_uop_range(g, c32(g, 0), c32(g, n2), atoi(name + 1));
    else if (!strcmp(kind, "S")) u = tkc_uop_special(g, name, n2);
    else u = tkc_uop_var(g, name, strtoll(kind, NULL, 10), n2);
    assert_non_null(u);
    snprintf(e->names[e->n], 16, "%s", name);
    e->vars[e->n++] = u;
  }
}

static const struct { const char *name; tkc_op op; } sexp_ops[] = {
    {"add", TKC_OP_ADD}, {"mul", TKC_OP_MUL}, {"idiv", TKC_OP_IDIV}, {"mod", TKC_OP_MOD}, {"max", TKC_OP_MAX},
    {"lt", TKC_OP_CMPLT}, {"ne", TKC_OP_CMPNE}, {"where", TKC_OP_WHERE}, {"neg", TKC_OP_NEG}, {"and", TKC_OP_AND},
    {"or", TKC_OP_OR}, {"xor", TKC_OP_XOR},
};

static tkc_uop *parse(env *e, const char **p) {
  while (isspace((unsigned char)**p)) (*p)++;
  char tok[32];
  int k = 0;
  if (**p == '(') {
    (*p)++;
    while (isalpha((unsigned char)**p) && k < 31) tok[k++] = *(*p)++;
    tok[k] = 0;
    tkc_uop *a[3] = {0};
    int n = 0;
    for (;;) {
      while (isspace((unsigned char)**p)) (*p)++;
      if (**p == ')') { (*p)++; break; }
      assert_true(n < 3);
      a[n++] = parse(e, p);
    }
    for (size_t i = 0; i < sizeof sexp_ops / sizeof sexp_ops[0]; i++) {
      if (strcmp(sexp_ops[i].name, tok)) continue;
      if (n == 1) return tkc_uop_alu1(e->g, sexp_ops[i].op, a[0]);
      if (n == 2) return tkc_uop_alu2(e->g, sexp_ops[i].op, a[0], a[1]);
      return tkc_uop_alu3(e->g, sexp_ops[i].op, a[0], a[1], a[2]);
    }
    fail_msg("unknown op %s", tok);
  }
  while (**p && !isspace((unsigned char)**p) && **p != ')' && k < 31) tok[k++] = *(*p)++;
  tok[k] = 0;
  if (!strcmp(tok, "True") || !strcmp(tok, "False")) return tkc_uop_const_int(e->g, tkc_dt_of(TKC_BOOL), tok[0] == 'T');
  for (int i = 0; i < e->n; i++)
    if (!strcmp(e->names[i], tok)) return e->vars[i];
  char *end;
  long long v = strtoll(tok, &end, 10);
  if (*end) fail_msg("unknown token %s", tok);
  return c32(e->g, v);
}

static tkc_uop *build(env *e, const char *expr) {
  const char *p = expr;
  tkc_uop *u = parse(e, &p);
  assert_non_null(u);
  return u;
}

typedef struct scase {
  const char *vars, *expr, *expect;
} scase;

/* Simplifies every case with pm (NULL: tkc_simplify) and compares the rendered result. */
static void run_cases(const scase *cases, size_t n, const tkc_matcher *pm) {
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    tkc_graph *g = tkc_graph_new();
    env e;
    env_init(&e, g, cases[i].vars);
    tkc_uop *u = build(&e, cases[i].expr);
    tkc_uop *s = pm ? tkc_graph_rewrite(g, u, pm, NULL) : tkc_simplify(g, u);
    assert_non_null(s);
    char *got = tkc_uop_expr_str(s);
    assert_non_null(got);
    if (strcmp(got, cases[i].expect)) {
      print_error("case %zu: [%s] %s\n   expected %s\n   got      %s\n", i, cases[i].vars, cases[i].expr, cases[i].expect, got);
      bad++;
    }
    tkc_free(got);
    tkc_graph_free(g);
  }
  assert_int_equal(bad, 0);
}
#define RUN(cases) run_cases(cases, sizeof cases / sizeof cases[0], NULL)

/* ---------------------------------------------------------------- rendered-form cases */

static void test_self_folding(void **state) {
  (void)state;
  static const scase cases[] = {
      {"a 0 10", "(add a 0)", "a"},                                   /* x+0 -> x */
      {"a 0 10", "(add 0 a)", "a"},                                   /* 0+x -> x */
      {"a 0 10", "(mul a 1)", "a"},                                   /* x*1 -> x */
      {"a 0 10", "(mul a 0)", "0"},                                   /* x*0 -> 0 */
      {"a 0 10", "(idiv a 1)", "a"},                                  /* x//1 -> x */
      {"x -10 10", "(idiv x -1)", "(x*-1)"},                          /* x//-1 -> -x */
      {"a 0 10", "(mod a 1)", "0"},                                   /* x%1 -> 0 */
      {"a 1 10", "(idiv a a)", "1"},                                  /* x//x -> 1 */
      /* tinygrad answers 1, but a can be 0 and 0//0 is 0 in exec_alu: not folded */
      {"a 0 10", "(idiv a a)", "(a//a)"},
      {"a 0 10, b 0 3", "(mod (mod a b) b)", "(a%b)"},                /* (x%y)%y -> x%y */
      {"a 0 10", "(max a a)", "a"},                                   /* idempotent */
      {"a 0 10", "(lt a a)", "False"},                                /* x<x -> False */
      {"a 0 10", "(ne a a)", "False"},                                /* x!=x -> False */
      {"a 0 10", "(ne (ne (lt a 5) True) True)", "(a<5)"},            /* not not x -> x */
      {"a 0 10", "(where (lt a 5) True False)", "(a<5)"},             /* x?True:False -> x */
      {"a 0 10, b 0 10", "(and (lt a b) True)", "(a<b)"},
      {"a 0 10, b 0 10", "(and (lt a b) False)", "False"},
      {"a 0 10, b 0 10", "(or (lt a b) True)", "True"},
      {"a 0 10, b 0 10", "(or (lt a b) False)", "(a<b)"},
      {"a 0 10, b 0 10", "(or (lt a b) (and (lt a b) (lt b 5)))", "(a<b)"}, /* x|(x&y) -> x */
      {"a 0 10, b 0 10", "(add (mod a 4) (mul (idiv a 4) 4))", "a"},          /* x%c+(x//c)*c -> x */
      {"a 0 10, b 0 10", "(add (mul (idiv a 4) 12) (mul (mod a 4) 3))", "(a*3)"}, /* (x//4)*12+(x%4)*3 */
      {"a 0 10", "(neg (neg a))", "(-(-a))"},                         /* NEG is not rewritten (tinygrad uses x*-1) */
  };
  RUN(cases);
}

static void test_combine_and_order(void **state) {
  (void)state;
  static const scase cases[] = {
      {"a 0 10", "(add (add a 3) 4)", "(a+7)"},                       /* (x+c1)+c2 -> x+(c1+c2) */
      {"a 0 10", "(mul (mul a 3) 4)", "(a*12)"},                      /* (x*c1)*c2 -> x*(c1*c2) */
      {"a 0 10", "(max (max a 3) 5)", "max(a, 5)"},                   /* max(max(x,c1),c2) */
      {"a 0 10", "(add (mul a 3) (mul a 5))", "(a*8)"},               /* x*c+x*d -> x*(c+d) */
      {"a 0 10, b 0 3", "(add (add b (mul a 3)) (mul a 5))", "(b+(a*8))"},
      {"a 0 10", "(add a (mul a 3))", "(a*4)"},                       /* x+x*c -> x*(c+1) */
      {"a 0 10, b 0 3", "(add (add b a) (mul a 3))", "(b+(a*4))"},
      {"a 0 10", "(add a a)", "(a*2)"},                               /* x+x -> x*2 */
      {"a 0 10, b 0 3", "(add (add b a) a)", "(b+(a*2))"},
      {"a 0 10", "(mul -1 (add a 3))", "((a*-1)+-3)"},                /* -(x+c) -> -x+-c */
      {"a 0 10, b 0 3", "(add b a)", "(a+b)"},                        /* commutative flip */
      {"a 0 10", "(mul 3 a)", "(a*3)"},                               /* consts sort last */
      {"a 0 10, b 0 3", "(add (add a 3) b)", "((a+b)+3)"},            /* move add consts to the end */
      {"a 0 10, b 0 3", "(mul (mul a 3) b)", "((a*b)*3)"},            /* move mul consts to the end */
      {"a 0 10, b 0 3", "(add (add (add a 1) b) 2)", "((a+b)+3)"},
      {"a 0 10, b 0 3", "(add (mul a 4) b)", "(b+(a*4))"},            /* DEFINE_VAR sorts before MUL */
      /* int32 wraps: x+2147483648 is x+-2147483648 */
      {"x -2147483648 2147483647", "(add (add x 2147483647) 1)", "(x+-2147483648)"},
      {"x 0 10", "(add (mul x 2147483647) (mul x 2))", "(x*-2147483647)"}, /* 2147483649 wraps */
  };
  RUN(cases);
}

static void test_div_mod_folding(void **state) {
  (void)state;
  static const scase cases[] = {
      {"a 0 10, b 0 3", "(idiv (add (mul a 4) b) 4)", "a"},           /* (a*4+b)//4 -> a */
      {"a 0 10, b 0 3", "(mod (add (mul a 4) b) 4)", "b"},            /* (a*4+b)%4 -> b */
      {"a 0 10, b 0 3", "(idiv (add b (mul 4 a)) 4)", "a"},
      {"a 0 10", "(idiv (add (mul a 3) 3) 3)", "(a+1)"},              /* (x*3+3)//3 -> x+1 */
      {"a 0 10", "(mod (add (mul a 3) 3) 3)", "0"},
      {"a 0 10", "(idiv (idiv a 2) 3)", "(a//6)"},                    /* (x//c1)//c2 -> x//(c1*c2) */
      {"a 0 10", "(idiv (add (idiv a 4) 1) 2)", "((a+4)//8)"},        /* (x//c+a)//d -> (x+a*c)//(c*d) */
      {"a 0 10", "(mod (add a 12) 4)", "(a%4)"},
      {"a 0 10", "(idiv (add a 12) 4)", "((a//4)+3)"},
      {"a 0 100", "(mod (mod a 12) 4)", "(a%4)"},                     /* nested mod */
      {"a 0 10, b 0 3", "(idiv (add (mul a 4) b) 2)", "((a*2)+(b//2))"},
      {"a 0 10, b 0 10", "(idiv (add (mul a 6) (mul b 4)) 2)", "((a*3)+(b*2))"},
      {"a 0 10, b 0 10", "(mod (add (mul a 6) (mul b 4)) 4)", "((a%2)*2)"},  /* gcd 2 */
      {"a 0 10, b 0 10", "(idiv (add (mul a 6) (mul b 4)) 4)", "(b+((a*3)//2))"},
      {"a 0 10, b 0 3", "(mod (add (mul a 8) (mod b 4)) 4)", "b"},
      {"a 0 1", "(mod (add (mul a 3) 1) 4)", "((a*-1)+1)"},           /* a takes two values */
      {"a 0 1", "(idiv (add (mul a 3) 2) 4)", "a"},
      {"a 4 7", "(mod a 4)", "(a+-4)"},                               /* quotient is always 1 */
      {"a 4 7", "(idiv a 4)", "1"},
      {"a 0 10", "(idiv (mul a 6) 3)", "(a*2)"},
      {"a 0 10, b 0 10", "(mod (add (mul a 6) (mul b 9)) 3)", "0"},
      {"a 0 10, b 0 10", "(idiv (add (mul a 6) (mul b 9)) 3)", "((a*2)+(b*3))"},
      {"a 0 10, b 0 10", "(idiv (add (add (mul a 12) (mul b 4)) 7) 8)", "(((b+(a*3))+1)//2)"},
      {"r0 R 4, r1 R 4", "(mod (add (mul r0 4) r1) 4)", "ridx1"},
      {"r0 R 4, r1 R 4", "(idiv (add (mul r0 4) r1) 4)", "ridx0"},
      {"g0 S 16", "(mod (add (mul g0 4) 3) 4)", "3"},
      {"g0 S 16, r1 R 4", "(idiv (add (add (mul g0 16) (mul r1 4)) 3) 4)", "((g0*4)+ridx1)"},
      {"x 0 1073741823", "(idiv (add (mul x 2) 1) 2)", "x"},          /* x*2+1 <= INT32_MAX: exact */
      /* truncating division: x in [-3,3] gives x//4 == 0 and x%4 == x everywhere (tinygrad, which
       * reasons with floor division, keeps them) */
      {"x -3 3", "(mod x 4)", "x"},
      {"x -3 3", "(idiv x 4)", "0"},
      {"x -10 10", "(idiv x 4)", "(x//4)"},
      {"x -10 10", "(mod x 4)", "(x%4)"},
      /* tinygrad answers x and 2 (floor semantics); with truncation x=-1 gives (-2)//4 == 0 and
       * (-2)%4 == -2, so these must stay */
      {"x -10 10", "(idiv (add (mul x 4) 2) 4)", "(((x*4)+2)//4)"},
      {"x -10 10", "(mod (add (mul x 4) 2) 4)", "(((x*4)+2)%4)"},
      /* tinygrad answers x, but x*4 wraps in int32 for x >= 2^29 */
      {"x 0 2147483647", "(idiv (add (mul x 4) 3) 4)", "(((x*4)+3)//4)"},
  };
  RUN(cases);
}

static void test_lt_folding(void **state) {
  (void)state;
  static const scase cases[] = {
      {"r0 R 4, r1 R 4", "(lt (add (mul r0 4) r1) 8)", "(ridx0<2)"},  /* (ridx0*4+ridx1)<8 -> ridx0<2 */
      {"r0 R 4, r1 R 4", "(lt (add (mul r0 4) r1) 7)", "(((ridx0*4)+ridx1)<7)"}, /* gcd(4,7) == 1 */
      {"a 0 10, b 0 3", "(lt (add (mul a 4) b) 8)", "(a<2)"},
      {"a 0 10, b 0 3", "(lt (add (mul a 4) (mul b 2)) 8)", "((b+(a*2))<4)"}, /* gcd 2 */
      {"a 0 10", "(lt (mul a 3) 7)", "(a<3)"},                        /* c0*x<c1 -> x<ceil(c1/c0) */
      {"x -10 10", "(lt (mul x -2) -3)", "((x*-1)<-1)"},              /* negative c0 */
      {"a 0 10", "(lt (add 5 a) 8)", "(a<3)"},                        /* c0+x<c1 -> x<c1-c0 */
      {"a 0 100", "(lt (idiv a 4) 5)", "(a<20)"},                     /* x//c0<c1 -> x<c1*c0 */
      {"x -10 10", "(lt (idiv x 3) 2)", "(x<6)"},
      /* tinygrad answers x<0; truncation makes x//3 < 0 exactly x <= -3 */
      {"x -10 10", "(lt (idiv x 3) 0)", "(x<-2)"},
      {"a 0 10", "(lt a 11)", "True"},                                /* the range decides */
      {"a 0 10", "(lt a 0)", "False"},
      {"a 0 10", "(lt a 5)", "(a<5)"},
      {"a 0 10, c 0 10", "(ne (lt (add (mul a 2) (mul c 3)) 1) True)", "(((a+c)<1)!=True)"}, /* simplex */
      {"a 0 10, c -3 3", "(ne (lt (add (mul a 2) c) 1) True)", "(((c+(a*2))<1)!=True)"}, /* c may be < 0 */
      /* tinygrad answers False; x+1 wraps to INT32_MIN for x == INT32_MAX */
      {"x 0 2147483647", "(lt (add x 1) 0)", "((x+1)<0)"},
  };
  RUN(cases);
}

static void test_max_where(void **state) {
  (void)state;
  static const scase cases[] = {
      {"a 5 10, b 0 3", "(max a b)", "a"},                            /* max folding */
      {"a 0 10", "(max a 20)", "20"},
      {"a 0 10", "(max a -5)", "a"},
      {"a 0 10, b 0 10", "(max a b)", "max(a, b)"},
      {"a 0 10, b 0 10", "(where True a b)", "a"},                    /* constant condition */
      {"a 0 10, b 0 10", "(where False a b)", "b"},
      {"a 0 10, b 0 10", "(where (lt a 20) a b)", "a"},               /* condition decided by range */
      {"a 0 10, b 0 10, c 0 10", "(where (lt a b) c c)", "c"},        /* same value either way */
      {"a 0 10, b 0 10", "(add (where (lt a b) 1 2) (where (lt a b) 3 4))", "(4 if (a<b) else 6)"},
      {"a 0 10, b 0 10", "(where (lt a b) (add a 1) (add a 1))", "(a+1)"},
  };
  RUN(cases);
}

static void test_unrolled_divs(void **state) {
  (void)state;
  static const scase cases[] = {
      {"a 0 100", "(add (add (add (idiv a 4) (idiv (add a 1) 4)) (idiv (add a 2) 4)) (idiv (add a 3) 4))", "a"},
      {"a 0 2", "(add (add (idiv (add a 1) 4) (idiv (add a 2) 4)) (idiv (add a 3) 4))", "a"}, /* a//4 already 0 */
      {"a 0 100", "(add (idiv a 2) (idiv (add a 1) 2))", "a"},
      /* tinygrad answers x; with truncation x=-1 gives 0 + 0 */
      {"x -10 10", "(add (idiv x 2) (idiv (add x 1) 2))", "((x//2)+((x+1)//2))"},
      /* tinygrad answers x; x+1 wraps for x == INT32_MAX */
      {"x 0 2147483647", "(add (idiv x 2) (idiv (add x 1) 2))", "((x//2)+((x+1)//2))"},
      {"x 0 2147483646", "(add (idiv x 2) (idiv (add x 1) 2))", "x"},
      {"a 0 100", "(add (idiv a 2) (idiv (add a 3) 2))", "(a+1)"}, /* (a+3)//2 -> (a+1)//2+1 first */
      {"a 0 100", "(add (idiv a 3) (idiv (add a 1) 3))", "((a//3)+((a+1)//3))"}, /* (a+2)//3 missing */
      {"a 0 1", "(add (idiv a 3) (idiv (add a 1) 3))", "0"},          /* every term is 0 by range */
  };
  RUN(cases);
}

static void test_flat(void **state) {
  (void)state;
  static const scase flat[] = {
      {"a 0 10, b 0 10", "(mul (add a b) 3)", "((a*3)+(b*3))"},       /* (x+y)*c -> x*c+y*c */
      {"a 0 10, b 0 10", "(mul -1 (add a b))", "((a*-1)+(b*-1))"},    /* -(x+y) -> -x+-y */
      {"a 0 10, b 0 10", "(mul (add a 2) 3)", "((a*3)+6)"},
  };
  run_cases(flat, sizeof flat / sizeof flat[0], tkc_symbolic_flat());
  static const scase plain[] = {
      {"a 0 10, b 0 10", "(mul (add a 2) 3)", "((a+2)*3)"},           /* symbolic does not distribute */
  };
  RUN(plain);
  /* symbolic_simple alone does no range analysis and no flipping */
  static const scase simple[] = {
      {"a 0 10, b 0 10", "(add (mul b 1) (add a 0))", "(b+a)"},
      {"a 0 10", "(lt a 11)", "(a<11)"},
      {"a 0 10", "(mul (add 2 3) a)", "(5*a)"},
  };
  run_cases(simple, sizeof simple / sizeof simple[0], tkc_symbolic_simple());
}

/* ---------------------------------------------------------------- constant folding per dtype */

static tkc_uop *k(tkc_graph *g, tkc_dtype dt, int64_t v) { return tkc_uop_const_int(g, tkc_dt_of(dt), v); }
static tkc_uop *kf(tkc_graph *g, tkc_dtype dt, double v) { return tkc_uop_const_float(g, tkc_dt_of(dt), v); }

static tkc_uop *fold(tkc_graph *g, tkc_uop *u) {
  tkc_uop *r = tkc_simplify(g, u);
  assert_non_null(r);
  assert_int_equal(r->op, TKC_OP_CONST);
  assert_true(tkc_dt_eq(r->dtype, u->dtype));
  return r;
}

static void test_const_fold_ints(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  /* int8 wraps */
  assert_int_equal(fold(g, tkc_uop_alu2(g, TKC_OP_ADD, k(g, TKC_INT8, 100), k(g, TKC_INT8, 100)))->arg.v.i, -56);
  assert_int_equal(fold(g, tkc_uop_alu2(g, TKC_OP_MUL, k(g, TKC_INT8, -128), k(g, TKC_INT8, -1)))->arg.v.i, -128);
  assert_int_equal(fold(g, tkc_uop_alu1(g, TKC_OP_NEG, k(g, TKC_INT8, -128)))->arg.v.i, -128);
  /* uint32 wraps */
  assert_int_equal(fold(g, tkc_uop_alu2(g, TKC_OP_ADD, k(g, TKC_UINT32, 0), k(g, TKC_UINT32, -1)))->arg.v.i, 4294967295LL);
  assert_int_equal(fold(g, tkc_uop_alu2(g, TKC_OP_MUL, k(g, TKC_UINT32, 65536), k(g, TKC_UINT32, 65536)))->arg.v.i, 0);
  assert_int_equal(fold(g, tkc_uop_alu2(g, TKC_OP_CMPLT, k(g, TKC_UINT32, 1), k(g, TKC_UINT32, 4294967295LL)))->arg.v.i, 1);
  /* int32: truncating division, mod with the sign of the dividend, x//0 == 0, INT_MIN//-1 wraps */
  assert_int_equal(fold(g, tkc_uop_alu2(g, TKC_OP_IDIV, k(g, TKC_INT32, -7), k(g, TKC_INT32, 2)))->arg.v.i, -3);
  assert_int_equal(fold(g, tkc_uop_alu2(g, TKC_OP_MOD, k(g, TKC_INT32, -7), k(g, TKC_INT32, 2)))->arg.v.i, -1);
  assert_int_equal(fold(g, tkc_uop_alu2(g, TKC_OP_MOD, k(g, TKC_INT32, 7), k(g, TKC_INT32, -2)))->arg.v.i, 1);
  assert_int_equal(fold(g, tkc_uop_alu2(g, TKC_OP_IDIV, k(g, TKC_INT32, 7), k(g, TKC_INT32, 0)))->arg.v.i, 0);
  assert_int_equal(fold(g, tkc_uop_alu2(g, TKC_OP_IDIV, k(g, TKC_INT32, INT32_MIN), k(g, TKC_INT32, -1)))->arg.v.i, INT32_MIN);
  assert_int_equal(fold(g, tkc_uop_alu2(g, TKC_OP_ADD, k(g, TKC_INT32, INT32_MAX), k(g, TKC_INT32, 1)))->arg.v.i, INT32_MIN);
  assert_int_equal(fold(g, tkc_uop_alu2(g, TKC_OP_MAX, k(g, TKC_INT32, -3), k(g, TKC_INT32, 2)))->arg.v.i, 2);
  assert_int_equal(fold(g, tkc_uop_alu3(g, TKC_OP_WHERE, k(g, TKC_BOOL, 0), k(g, TKC_INT16, 5), k(g, TKC_INT16, 9)))->arg.v.i, 9);
  /* int64 */
  assert_int_equal(fold(g, tkc_uop_alu2(g, TKC_OP_ADD, k(g, TKC_INT64, INT64_MAX), k(g, TKC_INT64, 1)))->arg.v.i, INT64_MIN);
  /* uint8 / int16 */
  assert_int_equal(fold(g, tkc_uop_alu2(g, TKC_OP_ADD, k(g, TKC_UINT8, 250), k(g, TKC_UINT8, 10)))->arg.v.i, 4);
  assert_int_equal(fold(g, tkc_uop_alu2(g, TKC_OP_MUL, k(g, TKC_INT16, 300), k(g, TKC_INT16, 300)))->arg.v.i, 24464);
  tkc_graph_free(g);
}

static void test_const_fold_float_bool(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  /* float32 rounds each result */
  tkc_uop *r = fold(g, tkc_uop_alu2(g, TKC_OP_ADD, kf(g, TKC_FLOAT32, 0.1), kf(g, TKC_FLOAT32, 0.2)));
  assert_true(r->arg.v.f == (double)(float)((double)0.1f + (double)0.2f));
  r = fold(g, tkc_uop_alu2(g, TKC_OP_MUL, kf(g, TKC_FLOAT32, 1e30), kf(g, TKC_FLOAT32, 1e30)));
  assert_true(isinf(r->arg.v.f));
  r = fold(g, tkc_uop_alu2(g, TKC_OP_ADD, kf(g, TKC_FLOAT64, 0.1), kf(g, TKC_FLOAT64, 0.2)));
  assert_true(r->arg.v.f == 0.1 + 0.2);
  r = fold(g, tkc_uop_alu1(g, TKC_OP_SQRT, kf(g, TKC_FLOAT32, 2.0)));
  assert_true(r->arg.v.f == (double)sqrtf(2.0f));
  r = fold(g, tkc_uop_alu2(g, TKC_OP_FDIV, kf(g, TKC_FLOAT32, 1.0), kf(g, TKC_FLOAT32, 3.0)));
  assert_true(r->arg.v.f == (double)(1.0f / 3.0f));
  r = fold(g, tkc_uop_alu2(g, TKC_OP_ADD, kf(g, TKC_FLOAT16, 2048), kf(g, TKC_FLOAT16, 1)));
  assert_true(r->arg.v.f == 2048.0); /* 2049 is not a half: round to even */
  r = fold(g, tkc_uop_alu2(g, TKC_OP_CMPLT, kf(g, TKC_FLOAT32, 1.5), kf(g, TKC_FLOAT32, 2.5)));
  assert_int_equal(r->dtype.scalar, TKC_BOOL);
  assert_int_equal(r->arg.v.i, 1);
  /* bool: ADD is OR, MUL is AND, MAX is OR, NE is XOR */
  tkc_uop *t = k(g, TKC_BOOL, 1), *f = k(g, TKC_BOOL, 0);
  assert_int_equal(fold(g, tkc_uop_alu2(g, TKC_OP_ADD, t, t))->arg.v.i, 1);
  assert_int_equal(fold(g, tkc_uop_alu2(g, TKC_OP_MUL, t, f))->arg.v.i, 0);
  assert_int_equal(fold(g, tkc_uop_alu2(g, TKC_OP_MAX, f, t))->arg.v.i, 1);
  assert_int_equal(fold(g, tkc_uop_alu2(g, TKC_OP_CMPNE, t, t))->arg.v.i, 0);
  assert_int_equal(fold(g, tkc_uop_alu2(g, TKC_OP_AND, t, t))->arg.v.i, 1);
  /* CAST / BITCAST of constants */
  assert_int_equal(fold(g, tkc_uop_cast(g, kf(g, TKC_FLOAT32, -2.75), tkc_dt_of(TKC_INT32)))->arg.v.i, -2);
  assert_int_equal(fold(g, tkc_uop_cast(g, k(g, TKC_INT32, 300), tkc_dt_of(TKC_UINT8)))->arg.v.i, 44);
  assert_int_equal(fold(g, tkc_uop_cast(g, k(g, TKC_INT32, 3), tkc_dt_of(TKC_BOOL)))->arg.v.i, 1);
  assert_true(fold(g, tkc_uop_cast(g, k(g, TKC_INT32, 16777217), tkc_dt_of(TKC_FLOAT32)))->arg.v.f == 16777216.0);
  assert_int_equal(fold(g, tkc_uop_bitcast(g, kf(g, TKC_FLOAT32, 1.0), tkc_dt_of(TKC_INT32)))->arg.v.i, 0x3f800000);
  assert_true(fold(g, tkc_uop_bitcast(g, k(g, TKC_UINT16, 0x3c00), tkc_dt_of(TKC_FLOAT16)))->arg.v.f == 1.0);
  /* a vector CONST folds lane-wise into a vector CONST */
  tkc_dt v4 = tkc_dt_vec(tkc_dt_of(TKC_INT32), 4);
  r = fold(g, tkc_uop_alu2(g, TKC_OP_ADD, tkc_uop_const_int(g, v4, 2), tkc_uop_const_int(g, v4, 3)));
  assert_int_equal(r->arg.v.i, 5);
  /* VCONST lanes fold one by one (and wrap per lane) */
  tkc_arg lanes[4] = {tkc_arg_int(1), tkc_arg_int(2), tkc_arg_int(3), tkc_arg_int(INT32_MAX)};
  tkc_uop *vc = tkc_uop_new(g, TKC_OP_VCONST, v4, 0, NULL, tkc_arg_tuple(lanes, 4));
  r = tkc_simplify(g, tkc_uop_alu2(g, TKC_OP_ADD, vc, tkc_uop_const_int(g, v4, 10)));
  assert_int_equal(r->op, TKC_OP_VCONST);
  assert_int_equal(r->arg.n, 4);
  assert_int_equal(r->arg.v.t[0].v.i, 11);
  assert_int_equal(r->arg.v.t[2].v.i, 13);
  assert_int_equal(r->arg.v.t[3].v.i, INT32_MIN + 9);
  r = tkc_simplify(g, tkc_uop_cast(g, vc, tkc_dt_vec(tkc_dt_of(TKC_INT8), 4)));
  assert_int_equal(r->op, TKC_OP_VCONST);
  assert_int_equal(r->arg.v.t[3].v.i, -1);
  /* lanes that come out equal give a plain CONST */
  r = tkc_simplify(g, tkc_uop_alu2(g, TKC_OP_MUL, vc, tkc_uop_const_int(g, v4, 0)));
  assert_int_equal(r->op, TKC_OP_CONST);
  assert_int_equal(r->arg.v.i, 0);
  tkc_graph_free(g);
}

/* pow without transcendental lowering (only where the result is pow's), float rules tinygrad applies
 * to floats (not the division ones that break IEEE), casts */
static void test_float_rules(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_dt f32 = tkc_dt_of(TKC_FLOAT32);
  tkc_uop *x = tkc_uop_new(g, TKC_OP_DEFINE_VAR, f32, 0, NULL, tkc_arg_tuple((tkc_arg[]){tkc_arg_str("f"), tkc_arg_float(-1e9), tkc_arg_float(1e9)}, 3));
  struct { tkc_uop *u; const char *expect; } cases[] = {
      {tkc_uop_alu2(g, TKC_OP_POW, x, kf(g, TKC_FLOAT32, 2.0)), "(f*f)"},
      {tkc_uop_alu2(g, TKC_OP_POW, x, kf(g, TKC_FLOAT32, 3.0)), "POW(f, 3)"}, /* x*x*x rounds twice: pow stays */
      {tkc_uop_alu2(g, TKC_OP_POW, x, kf(g, TKC_FLOAT32, 0.0)), "1"},
      {tkc_uop_alu2(g, TKC_OP_POW, x, kf(g, TKC_FLOAT32, 1.5)), "POW(f, 1.5)"},
      {tkc_uop_alu2(g, TKC_OP_POW, x, kf(g, TKC_FLOAT32, -1.0)), "RECIP(f)"},
      {tkc_uop_alu2(g, TKC_OP_POW, kf(g, TKC_FLOAT32, 1.0), x), "1"},
      {tkc_uop_alu2(g, TKC_OP_POW, kf(g, TKC_FLOAT32, 4.0), x), "POW(4, f)"}, /* exp2(x*log2 c) is not pow */
      {tkc_uop_alu2(g, TKC_OP_ADD, tkc_uop_alu2(g, TKC_OP_ADD, x, kf(g, TKC_FLOAT32, 1.5)), kf(g, TKC_FLOAT32, 2.0)), "(f+3.5)"},
      {tkc_uop_alu2(g, TKC_OP_ADD, x, x), "(f*2)"},
      {tkc_uop_alu2(g, TKC_OP_FDIV, x, x), "(f/f)"}, /* 0/0 is nan: x/x is not folded for floats */
      {tkc_uop_alu2(g, TKC_OP_MUL, x, kf(g, TKC_FLOAT32, 0.0)), "(f*0)"}, /* inf*0 is nan: x*0 is not folded for floats */
      {tkc_uop_new(g, TKC_OP_CAST, f32, 1, &x, tkc_arg_none()), "f"}, /* cast to its own dtype */
      /* no range analysis on floats: max(f, f*0+...) is not decided */
      {tkc_uop_alu2(g, TKC_OP_MAX, x, kf(g, TKC_FLOAT32, 5.0)), "max(f, 5)"},
      {tkc_uop_alu2(g, TKC_OP_CMPLT, tkc_uop_alu2(g, TKC_OP_ADD, kf(g, TKC_FLOAT32, 1.0), x), kf(g, TKC_FLOAT32, 3.0)), "(f<2)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tkc_uop *s = tkc_simplify(g, cases[i].u);
    assert_non_null(s);
    char *got = tkc_uop_expr_str(s);
    if (strcmp(got, cases[i].expect)) print_error("float case %zu: expected %s got %s\n", i, cases[i].expect, got);
    assert_string_equal(got, cases[i].expect);
    tkc_free(got);
  }
  tkc_graph_free(g);
}

/* ---------------------------------------------------------------- API / bad inputs */

static void test_api(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *x = tkc_uop_var(g, "x", 0, 10);
  tkc_clear_error();
  assert_null(tkc_simplify(NULL, x));
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  tkc_clear_error();
  assert_null(tkc_simplify(g, NULL));
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  /* matchers are built once and shared */
  assert_non_null(tkc_symbolic_simple());
  assert_ptr_equal(tkc_symbolic(), tkc_symbolic());
  assert_ptr_equal(tkc_symbolic_flat(), tkc_symbolic_flat());
  assert_true(tkc_matcher_size(tkc_symbolic()) > tkc_matcher_size(tkc_symbolic_simple()));
  assert_int_equal(tkc_matcher_size(tkc_symbolic_flat()), tkc_matcher_size(tkc_symbolic()) + 2);
  /* simplification is idempotent and leaves irreducible UOps alone */
  assert_ptr_equal(tkc_simplify(g, x), x);
  tkc_uop *e = tkc_uop_alu2(g, TKC_OP_ADD, tkc_uop_alu2(g, TKC_OP_MUL, x, c32(g, 4)), c32(g, 3));
  tkc_uop *s = tkc_simplify(g, e);
  assert_ptr_equal(tkc_simplify(g, s), s);
  /* a SINK of several expressions is simplified source by source */
  tkc_uop *srcs[2] = {tkc_uop_alu2(g, TKC_OP_ADD, x, c32(g, 0)), tkc_uop_alu2(g, TKC_OP_MUL, x, c32(g, 0))};
  tkc_uop *sink = tkc_simplify(g, tkc_uop_sink(g, 2, srcs));
  assert_non_null(sink);
  assert_ptr_equal(sink->src[0], x);
  assert_int_equal(sink->src[1]->op, TKC_OP_CONST);
  /* a long ADD chain (deep graph) simplifies without recursion trouble */
  tkc_uop *acc = x;
  for (int i = 0; i < 5000; i++) acc = tkc_uop_alu2(g, TKC_OP_ADD, acc, c32(g, 1));
  s = tkc_simplify(g, acc);
  assert_non_null(s);
  char *str = tkc_uop_expr_str(s);
  assert_string_equal(str, "(x+5000)");
  tkc_free(str);
  tkc_graph_free(g);
}

/* ---------------------------------------------------------------- randomized equivalence */

static uint64_t rng_state;
static uint64_t rnd(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static int64_t rint_in(int64_t lo, int64_t hi) { /* uniform enough; full int64 span allowed */
  uint64_t span = (uint64_t)hi - (uint64_t)lo;
  uint64_t r = span == UINT64_MAX ? rnd() : rnd() % (span + 1);
  return (int64_t)((uint64_t)lo + r);
}

/* v wrapped to the integer/bool dtype dt (two's complement), without implementation-defined casts. */
static int64_t wrap_dt(tkc_dtype dt, uint64_t v) {
  if (dt == TKC_BOOL) return v != 0;
  int bits = (int)tkc_dtype_size(dt) * 8;
  if (bits < 64) v &= (UINT64_C(1) << bits) - 1;
  bool neg = !tkc_dtype_is_unsigned(dt) && ((v >> (bits - 1)) & 1);
  if (!neg) return (int64_t)v;
  if (bits < 64) return (int64_t)v - (int64_t)(UINT64_C(1) << (bits - 1)) - (int64_t)(UINT64_C(1) << (bits - 1));
  return -(int64_t)(~v) - 1;
}

#define MAXV 6
typedef struct assign {
  tkc_uop *var[MAXV];
  int64_t val[MAXV];
  int n;
} assign;

/* Reference evaluator: wrapping arithmetic in the node's dtype, truncating division, x/0 == 0,
 * x%0 == 0, INT_MIN/-1 wraps. Values of unsigned dtypes (< 2^32 here) are non-negative int64s. */
static int64_t eval(const tkc_uop *u, const assign *a) {
  for (int i = 0; i < a->n; i++)
    if (a->var[i] == u) return a->val[i];
  int64_t x = 0, y = 0, z = 0;
  if (u->op == TKC_OP_CONST) return u->arg.v.i;
  if (u->nsrc > 0) x = eval(u->src[0], a);
  if (u->nsrc > 1) y = eval(u->src[1], a);
  if (u->nsrc > 2) z = eval(u->src[2], a);
  tkc_dtype dt = (tkc_dtype)u->dtype.scalar;
  uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
  switch (u->op) {
  case TKC_OP_ADD: return wrap_dt(dt, ux + uy);
  case TKC_OP_MUL: return wrap_dt(dt, ux * uy);
  case TKC_OP_NEG: return wrap_dt(dt, UINT64_C(0) - ux);
  case TKC_OP_IDIV:
    if (y == 0) return 0;
    if (y == -1) return wrap_dt(dt, UINT64_C(0) - ux);
    return wrap_dt(dt, (uint64_t)(x / y));
  case TKC_OP_MOD:
    if (y == 0 || y == -1) return 0;
    return x % y;
  case TKC_OP_MAX: return x > y ? x : y;
  case TKC_OP_CMPLT: return x < y;
  case TKC_OP_CMPNE: return x != y;
  case TKC_OP_WHERE: return x ? y : z;
  case TKC_OP_AND: return wrap_dt(dt, ux & uy);
  case TKC_OP_OR: return wrap_dt(dt, ux | uy);
  case TKC_OP_XOR: return wrap_dt(dt, ux ^ uy);
  default: fail_msg("evaluator: unexpected op %s", tkc_op_name((tkc_op)u->op)); return 0;
  }
}

typedef struct gen {
  tkc_graph *g;
  tkc_dt dt;
  int64_t dlo, dhi; /* the dtype's range */
  tkc_uop *vars[MAXV];
  int nvars;
  int64_t cmax; /* ordinary constants in [-cmax, cmax] (clamped to the dtype) */
  bool extreme;
} gen;

static tkc_uop *kq(gen *q, int64_t v) { return tkc_uop_const_int(q->g, q->dt, v); }

static tkc_uop *gconst(gen *q) {
  if (q->extreme && rnd() % 4 == 0) {
    int64_t ks[] = {q->dhi, q->dlo, q->dhi - 1, q->dlo + 1, q->dhi / 2 + 1, q->dlo / 2, 65536, 46341};
    return kq(q, ks[rnd() % 8]);
  }
  int64_t lo = -q->cmax < q->dlo ? q->dlo : -q->cmax, hi = q->cmax > q->dhi ? q->dhi : q->cmax;
  return kq(q, rint_in(lo, hi));
}
/* a divisor: mostly positive, sometimes negative (never 0) */
static tkc_uop *gpos(gen *q) {
  if (q->extreme && rnd() % 4 == 0) return kq(q, rnd() % 2 ? q->dhi : q->dhi / 2 + 1);
  int64_t hi = q->cmax > 1 ? q->cmax : 2;
  if (q->dlo < 0 && rnd() % 6 == 0) return kq(q, -rint_in(1, hi));
  return kq(q, rint_in(1, hi > q->dhi ? q->dhi : hi));
}

static tkc_uop *gexpr(gen *q, int depth);

static tkc_uop *gcond(gen *q, int depth) {
  tkc_uop *a = gexpr(q, depth - 1);
  tkc_uop *b = rnd() % 2 ? gconst(q) : gexpr(q, depth - 1);
  tkc_uop *c = tkc_uop_alu2(q->g, rnd() % 3 ? TKC_OP_CMPLT : TKC_OP_CMPNE, a, b);
  if (rnd() % 8 == 0) c = tkc_uop_alu2(q->g, TKC_OP_CMPNE, c, tkc_uop_const_int(q->g, tkc_dt_of(TKC_BOOL), 1)); /* not */
  return c;
}

static tkc_uop *gexpr(gen *q, int depth) {
  tkc_graph *g = q->g;
  if (depth <= 0 || rnd() % 5 == 0) return rnd() % 4 ? q->vars[rnd() % q->nvars] : gconst(q);
  switch (rnd() % 13) {
  case 0: case 1: return tkc_uop_alu2(g, TKC_OP_ADD, gexpr(q, depth - 1), gexpr(q, depth - 1));
  case 2: return tkc_uop_alu2(g, TKC_OP_ADD, gexpr(q, depth - 1), gconst(q));
  case 3: return tkc_uop_alu2(g, TKC_OP_MUL, gexpr(q, depth - 1), gconst(q));
  case 4: return tkc_uop_alu2(g, TKC_OP_MUL, gexpr(q, depth - 1), q->vars[rnd() % q->nvars]);
  case 5: case 6: return tkc_uop_alu2(g, TKC_OP_IDIV, gexpr(q, depth - 1), gpos(q));
  case 7: case 8: return tkc_uop_alu2(g, TKC_OP_MOD, gexpr(q, depth - 1), gpos(q));
  case 9: return tkc_uop_alu2(g, TKC_OP_MAX, gexpr(q, depth - 1), gexpr(q, depth - 1));
  case 10: return tkc_uop_alu3(g, TKC_OP_WHERE, gcond(q, depth), gexpr(q, depth - 1), gexpr(q, depth - 1));
  case 11: return tkc_uop_alu1(g, TKC_OP_NEG, gexpr(q, depth - 1));
  default: { /* index-like: (v*c + e) op c' */
    tkc_uop *v = q->vars[rnd() % q->nvars];
    tkc_uop *e = tkc_uop_alu2(g, TKC_OP_ADD, tkc_uop_alu2(g, TKC_OP_MUL, v, gpos(q)), gexpr(q, depth - 2));
    int w = (int)(rnd() % 3);
    if (w == 0) return tkc_uop_alu2(g, TKC_OP_IDIV, e, gpos(q));
    if (w == 1) return tkc_uop_alu2(g, TKC_OP_MOD, e, gpos(q));
    return tkc_uop_alu3(g, TKC_OP_WHERE, tkc_uop_alu2(g, TKC_OP_CMPLT, e, gconst(q)), e, gconst(q));
  }
  }
}

/* Builds ntrees random trees (int32, or any int dtype but uint64 with multi_dtype); each is evaluated
 * before and after simplification on nassign assignments (bounds included). Returns the number of
 * trees whose values differ (the first few are printed) and counts the trees that changed. */
static int random_check(uint64_t seed, int ntrees, int nassign, bool extreme, bool multi_dtype, const tkc_matcher *pm) {
  static const tkc_dtype others[] = {TKC_INT8, TKC_UINT8, TKC_INT16, TKC_UINT16, TKC_UINT32, TKC_INT64};
  rng_state = seed;
  int bad = 0, changed = 0;
  tkc_graph *g = NULL;
  for (int t = 0; t < ntrees; t++) {
    if (t % 64 == 0) {
      tkc_graph_free(g);
      g = tkc_graph_new();
    }
    tkc_dtype sdt = multi_dtype && rnd() % 2 ? others[rnd() % 6] : TKC_INT32;
    gen q = {.g = g, .dt = tkc_dt_of(sdt), .dlo = tkc_dtype_min(sdt), .dhi = tkc_dtype_max(sdt),
             .cmax = extreme ? 100000 : 12, .extreme = extreme};
    int64_t lo[MAXV], hi[MAXV];
    q.nvars = 2 + (int)(rnd() % 3);
    for (int i = 0; i < q.nvars; i++) {
      char name[16];
      snprintf(name, sizeof name, "v%d", i);
      if (extreme) {
        int64_t mid = q.dlo / 2 + q.dhi / 2;
        int64_t b[][2] = {{q.dlo, q.dhi}, {0, q.dhi}, {q.dlo, q.dlo < 0 ? 0 : 5}, {q.dhi - 10, q.dhi},
                          {q.dlo, q.dlo + 10}, {q.dlo / 2, q.dhi / 2}, {mid, q.dhi}, {q.dlo < 0 ? -5 : 0, 5}};
        int j = (int)(rnd() % 8);
        lo[i] = b[j][0];
        hi[i] = b[j][1];
      } else {
        lo[i] = q.dlo < 0 ? rint_in(-8, 6) : rint_in(0, 6);
        hi[i] = lo[i] + rint_in(0, rnd() % 3 ? 12 : 40);
        if (hi[i] > q.dhi) hi[i] = q.dhi;
      }
      int kind = (int)(rnd() % 4);
      if (sdt == TKC_INT32 && kind == 0 && lo[i] == 0 && hi[i] < INT32_MAX) {
        q.vars[i] = tkc_uop_range(g, c32(g, 0), c32(g, hi[i] + 1), i);
      } else if (sdt == TKC_INT32 && kind == 1 && lo[i] == 0 && hi[i] < INT32_MAX) {
        q.vars[i] = tkc_uop_special(g, name, hi[i] + 1);
      } else {
        tkc_arg targ[3] = {tkc_arg_str(name), tkc_arg_int(lo[i]), tkc_arg_int(hi[i])};
        q.vars[i] = tkc_uop_new(g, TKC_OP_DEFINE_VAR, q.dt, 0, NULL, tkc_arg_tuple(targ, 3));
      }
      assert_non_null(q.vars[i]);
    }
    tkc_uop *u = gexpr(&q, 2 + (int)(rnd() % 4));
    if (u->dtype.scalar == TKC_BOOL) u = tkc_uop_alu3(g, TKC_OP_WHERE, u, kq(&q, 1), kq(&q, 0));
    tkc_uop *s = pm ? tkc_graph_rewrite(g, u, pm, NULL) : tkc_simplify(g, u);
    assert_non_null(s);
    changed += s != u;
    assign a = {.n = q.nvars};
    for (int i = 0; i < q.nvars; i++) a.var[i] = q.vars[i];
    for (int n = 0; n < nassign; n++) {
      for (int i = 0; i < q.nvars; i++) {
        int r = (int)(rnd() % 8);
        a.val[i] = r == 0 ? lo[i] : r == 1 ? hi[i] : rint_in(lo[i], hi[i]);
      }
      int64_t before = eval(u, &a), after = eval(s, &a);
      if (before != after) {
        if (bad < 5) {
          char *su = tkc_uop_expr_str(u), *ss = tkc_uop_expr_str(s);
          print_error("tree %d (%s): %s\n  simplified %s\n  before %lld after %lld at", t, tkc_dtype_name(sdt), su, ss,
                      (long long)before, (long long)after);
          for (int i = 0; i < q.nvars; i++) print_error(" v%d=%lld[%lld,%lld]", i, (long long)a.val[i], (long long)lo[i], (long long)hi[i]);
          print_error("\n");
          tkc_free(su);
          tkc_free(ss);
        }
        bad++;
        break;
      }
    }
  }
  tkc_graph_free(g);
  assert_true(changed > ntrees / 2); /* the trees do exercise the rules */
  return bad;
}

static void test_random_small(void **state) {
  (void)state;
  assert_int_equal(random_check(0x5eed0001, 12000, 200, false, false, NULL), 0);
}

static void test_random_flat(void **state) {
  (void)state;
  assert_int_equal(random_check(0x5eed0002, 4000, 150, false, false, tkc_symbolic_flat()), 0);
}

static void test_random_dtypes(void **state) {
  (void)state;
  assert_int_equal(random_check(0x5eed0004, 8000, 150, false, true, NULL), 0);
}

/* extreme bounds (1,000 assignments per tree): wrapping arithmetic must not be simplified into
 * something else */
static void test_random_extreme(void **state) {
  (void)state;
  assert_int_equal(random_check(0x5eed0003, 3000, 1000, true, false, NULL), 0);
  assert_int_equal(random_check(0x5eed0005, 2000, 1000, true, true, NULL), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_self_folding),
      cmocka_unit_test(test_combine_and_order),
      cmocka_unit_test(test_div_mod_folding),
      cmocka_unit_test(test_lt_folding),
      cmocka_unit_test(test_max_where),
      cmocka_unit_test(test_unrolled_divs),
      cmocka_unit_test(test_flat),
      cmocka_unit_test(test_const_fold_ints),
      cmocka_unit_test(test_const_fold_float_bool),
      cmocka_unit_test(test_float_rules),
      cmocka_unit_test(test_api),
      cmocka_unit_test(test_random_small),
      cmocka_unit_test(test_random_flat),
      cmocka_unit_test(test_random_dtypes),
      cmocka_unit_test(test_random_extreme),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
