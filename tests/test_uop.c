/* test_uop.c — dtypes, UOp interning, range analysis, toposort, printing, constructors and the
 * error behaviour of the dtype/UOp half of tkc/uop.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tkc/uop.h"

/* ---------------------------------------------------------------- helpers */

static tkc_dt dt_(tkc_dtype d) { return tkc_dt_of(d); }
static tkc_uop *ci(tkc_graph *g, int64_t v) { return tkc_uop_const_int(g, dt_(TKC_INT32), v); }
static tkc_uop *add(tkc_graph *g, tkc_uop *a, tkc_uop *b) { return tkc_uop_alu2(g, TKC_OP_ADD, a, b); }
static tkc_uop *mul(tkc_graph *g, tkc_uop *a, tkc_uop *b) { return tkc_uop_alu2(g, TKC_OP_MUL, a, b); }

/* xorshift64*: a deterministic generator so failures reproduce. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545f4914f6cdd1dull;
}
static int rndi(int n) { return (int)(rnd() % (uint64_t)n); }

/* Asserts that the last call failed with status s and left a non-empty message. */
#define assert_failed_with(s)                                  \
  do {                                                         \
    assert_int_equal(tkc_last_status(), (s));                  \
    assert_true(strlen(tkc_last_error()) > 0);                 \
  } while (0)

/* ---------------------------------------------------------------- dtypes */

static const struct {
  tkc_dtype d;
  const char *name, *short_name;
  size_t size;
  bool is_float, is_int, is_unsigned;
  int64_t min, max;
} scalar_tab[] = {
    {TKC_BOOL, "bool", "bool", 1, false, false, false, 0, 1},
    {TKC_INT8, "int8", "char", 1, false, true, false, -128, 127},
    {TKC_UINT8, "uint8", "uchar", 1, false, true, true, 0, 255},
    {TKC_INT16, "int16", "short", 2, false, true, false, -32768, 32767},
    {TKC_UINT16, "uint16", "ushort", 2, false, true, true, 0, 65535},
    {TKC_INT32, "int32", "int", 4, false, true, false, INT32_MIN, INT32_MAX},
    {TKC_UINT32, "uint32", "uint", 4, false, true, true, 0, UINT32_MAX},
    {TKC_INT64, "int64", "long", 8, false, true, false, INT64_MIN, INT64_MAX},
    {TKC_UINT64, "uint64", "ulong", 8, false, true, true, 0, INT64_MAX /* saturates */},
    {TKC_FLOAT16, "float16", "half", 2, true, false, false, 0, 0},
    {TKC_BFLOAT16, "bfloat16", "bfloat16", 2, true, false, false, 0, 0},
    {TKC_FLOAT32, "float32", "float", 4, true, false, false, 0, 0},
    {TKC_FLOAT64, "float64", "double", 8, true, false, false, 0, 0},
};

static void test_dtype_scalars(void **state) {
  (void)state;
  assert_int_equal(sizeof scalar_tab / sizeof scalar_tab[0], TKC_VOID);
  for (size_t i = 0; i < sizeof scalar_tab / sizeof scalar_tab[0]; i++) {
    tkc_dtype d = scalar_tab[i].d;
    tkc_dt t = tkc_dt_of(d);
    char buf[64];
    assert_int_equal(t.scalar, d);
    assert_int_equal(t.count, 1);
    assert_false(tkc_dt_is_ptr(t));
    assert_string_equal(tkc_dtype_name(d), scalar_tab[i].name);
    assert_string_equal(tkc_dt_str(t, buf, sizeof buf), scalar_tab[i].short_name);
    assert_int_equal(tkc_dtype_size(d), scalar_tab[i].size);
    assert_int_equal(tkc_dt_itemsize(t), scalar_tab[i].size);
    assert_int_equal(tkc_dtype_is_float(d), scalar_tab[i].is_float);
    assert_int_equal(tkc_dtype_is_int(d), scalar_tab[i].is_int);
    assert_int_equal(tkc_dtype_is_unsigned(d), scalar_tab[i].is_unsigned);
    assert_int_equal(tkc_dt_is_float(t), scalar_tab[i].is_float);
    assert_int_equal(tkc_dt_is_int(t), scalar_tab[i].is_int);
    assert_int_equal(tkc_dt_is_unsigned(t), scalar_tab[i].is_unsigned);
    assert_int_equal(tkc_dt_is_bool(t), d == TKC_BOOL);
    if (scalar_tab[i].is_int || d == TKC_BOOL) {
      assert_true(tkc_dtype_min(d) == scalar_tab[i].min);
      assert_true(tkc_dtype_max(d) == scalar_tab[i].max);
    }
    /* the vector of a scalar keeps its kind */
    tkc_dt v = tkc_dt_vec(t, 4);
    assert_int_equal(tkc_dt_is_float(v), scalar_tab[i].is_float);
    assert_int_equal(tkc_dt_is_int(v), scalar_tab[i].is_int);
    assert_int_equal(tkc_dt_is_bool(v), d == TKC_BOOL);
    assert_int_equal(tkc_dt_itemsize(v), 4 * scalar_tab[i].size);
  }
  /* void */
  assert_string_equal(tkc_dtype_name(TKC_VOID), "void");
  assert_int_equal(tkc_dtype_size(TKC_VOID), 0);
  assert_int_equal(tkc_dt_itemsize(tkc_dt_of(TKC_VOID)), 0);
  assert_false(tkc_dtype_is_float(TKC_VOID) || tkc_dtype_is_int(TKC_VOID) || tkc_dtype_is_unsigned(TKC_VOID));
  /* out of range */
  tkc_dtype bad[] = {TKC_NDTYPES, (tkc_dtype)(TKC_NDTYPES + 7), (tkc_dtype)-1};
  for (size_t i = 0; i < 3; i++) {
    assert_null(tkc_dtype_name(bad[i]));
    assert_int_equal(tkc_dtype_size(bad[i]), 0);
    assert_false(tkc_dtype_is_float(bad[i]));
    assert_false(tkc_dtype_is_int(bad[i]));
    assert_false(tkc_dtype_is_unsigned(bad[i]));
    assert_int_equal(tkc_dtype_min(bad[i]), 0);
    assert_int_equal(tkc_dtype_max(bad[i]), 0);
    assert_true(tkc_dt_eq(tkc_dt_of(bad[i]), tkc_dt_of(TKC_VOID)));
  }
}

static void test_dtype_vec_ptr(void **state) {
  (void)state;
  char buf[64];
  tkc_dt f = dt_(TKC_FLOAT32), i = dt_(TKC_INT32);
  tkc_dt v = tkc_dt_vec(f, 4);
  assert_int_equal(v.count, 4);
  assert_false(tkc_dt_eq(v, f));
  assert_true(tkc_dt_eq(tkc_dt_scalar(v), f));
  assert_true(tkc_dt_eq(tkc_dt_base(v), v));
  assert_true(tkc_dt_eq(tkc_dt_scalar(f), f));
  assert_true(tkc_dt_eq(tkc_dt_vec(f, 1), f));
  assert_true(tkc_dt_eq(tkc_dt_vec(f, 0), f));
  assert_true(tkc_dt_eq(tkc_dt_vec(f, -3), f));
  assert_true(tkc_dt_eq(tkc_dt_vec(dt_(TKC_VOID), 4), dt_(TKC_VOID)));
  assert_string_equal(tkc_dt_str(tkc_dt_vec(i, 4), buf, sizeof buf), "int.vec(4)");
  assert_string_equal(tkc_dt_str(tkc_dt_vec(dt_(TKC_BOOL), 2), buf, sizeof buf), "bool.vec(2)");

  tkc_dt p = tkc_dt_ptr(f, TKC_SPACE_GLOBAL, 16);
  assert_true(tkc_dt_is_ptr(p));
  assert_int_equal(p.space, TKC_SPACE_GLOBAL);
  assert_int_equal(p.size, 16);
  assert_int_equal(tkc_dt_itemsize(p), 8);
  assert_true(tkc_dt_eq(tkc_dt_base(p), f));
  assert_true(tkc_dt_eq(tkc_dt_scalar(p), p));
  assert_false(tkc_dt_is_float(p)); /* a pointer is not a float, as in tinygrad */
  assert_false(tkc_dt_is_int(p));
  assert_false(tkc_dt_is_bool(tkc_dt_ptr(dt_(TKC_BOOL), TKC_SPACE_GLOBAL, -1)));
  assert_string_equal(tkc_dt_str(p, buf, sizeof buf), "float.ptr(16)");
  assert_true(tkc_dt_is_ptr(tkc_dt_ptr(f, TKC_SPACE_NONE, -1))); /* NONE means global: still a pointer */

  tkc_dt lp = tkc_dt_ptr(f, TKC_SPACE_LOCAL, 16);
  assert_int_equal(lp.space, TKC_SPACE_LOCAL);
  assert_false(tkc_dt_eq(lp, p));
  assert_false(tkc_dt_eq(tkc_dt_ptr(f, TKC_SPACE_GLOBAL, 17), p));
  assert_false(tkc_dt_eq(tkc_dt_ptr(i, TKC_SPACE_GLOBAL, 16), p));
  assert_true(tkc_dt_eq(tkc_dt_ptr(f, TKC_SPACE_GLOBAL, 16), p));

  /* a vector of pointers: pcount, scalar() drops it, base() is the pointee */
  tkc_dt vp = tkc_dt_vec(p, 4);
  assert_int_equal(vp.pcount, 4);
  assert_int_equal(vp.count, 1);
  assert_true(tkc_dt_is_ptr(vp));
  assert_false(tkc_dt_eq(vp, p));
  assert_true(tkc_dt_eq(tkc_dt_scalar(vp), p));
  assert_true(tkc_dt_eq(tkc_dt_base(vp), f));
  assert_int_equal(tkc_dt_itemsize(vp), 8);

  /* a pointer to a vector */
  tkc_dt pv = tkc_dt_ptr(v, TKC_SPACE_LOCAL, 8);
  assert_true(tkc_dt_eq(tkc_dt_base(pv), v));
  assert_int_equal(tkc_dt_itemsize(pv), 8);
  assert_string_equal(tkc_dt_str(pv, buf, sizeof buf), "float.vec(4).ptr(8, local)");

  /* truncation: always terminated, a prefix of the full name */
  char small[6];
  memset(small, 'X', sizeof small);
  assert_ptr_equal(tkc_dt_str(tkc_dt_vec(i, 4), small, sizeof small), small);
  assert_string_equal(small, "int.v");
  char one[1] = {'X'};
  tkc_dt_str(f, one, 1);
  assert_int_equal(one[0], 0);
  assert_null(tkc_dt_str(f, NULL, 10));
  char tiny[9];
  tkc_dt_str(vp, tiny, sizeof tiny);
  assert_int_equal(strlen(tiny), 8);
}

/* tinygrad's promo_lattice, written out independently of src/uops/dtype.c. */
static const int lattice_edges[][2] = {
    {TKC_BOOL, TKC_INT8},       {TKC_BOOL, TKC_UINT8},       {TKC_INT8, TKC_INT16},       {TKC_INT16, TKC_INT32},
    {TKC_INT32, TKC_INT64},     {TKC_INT64, TKC_FLOAT16},    {TKC_INT64, TKC_BFLOAT16},   {TKC_UINT8, TKC_INT16},
    {TKC_UINT8, TKC_UINT16},    {TKC_UINT16, TKC_INT32},     {TKC_UINT16, TKC_UINT32},    {TKC_UINT32, TKC_INT64},
    {TKC_UINT32, TKC_UINT64},   {TKC_UINT64, TKC_FLOAT16},   {TKC_UINT64, TKC_BFLOAT16},  {TKC_FLOAT16, TKC_FLOAT32},
    {TKC_BFLOAT16, TKC_FLOAT32}, {TKC_FLOAT32, TKC_FLOAT64},
};
/* tinygrad's DType.priority (the order `min` uses among the common parents). */
static const int priority[TKC_VOID] = {
    [TKC_BOOL] = 0,   [TKC_INT8] = 1,   [TKC_UINT8] = 2,   [TKC_INT16] = 3,    [TKC_UINT16] = 4,
    [TKC_INT32] = 5,  [TKC_UINT32] = 6, [TKC_INT64] = 7,   [TKC_UINT64] = 8,   [TKC_FLOAT16] = 9,
    [TKC_BFLOAT16] = 10, [TKC_FLOAT32] = 11, [TKC_FLOAT64] = 12,
};

static void test_least_upper_dtype(void **state) {
  (void)state;
  enum { N = TKC_VOID };
  bool reach[N][N] = {{false}};
  for (int a = 0; a < N; a++) reach[a][a] = true;
  for (size_t e = 0; e < sizeof lattice_edges / sizeof lattice_edges[0]; e++) reach[lattice_edges[e][0]][lattice_edges[e][1]] = true;
  for (int k = 0; k < N; k++) /* Warshall's transitive closure */
    for (int a = 0; a < N; a++)
      for (int b = 0; b < N; b++)
        if (reach[a][k] && reach[k][b]) reach[a][b] = true;
  for (int a = 0; a < N; a++) {
    for (int b = 0; b < N; b++) {
      int best = -1;
      for (int c = 0; c < N; c++)
        if (reach[a][c] && reach[b][c] && (best < 0 || priority[c] < priority[best])) best = c;
      assert_true(best >= 0); /* float64 is above everything */
      tkc_dtype got = tkc_least_upper_dtype((tkc_dtype)a, (tkc_dtype)b);
      if ((int)got != best) fail_msg("least_upper(%s, %s) = %s, expected %s", tkc_dtype_name((tkc_dtype)a),
                                     tkc_dtype_name((tkc_dtype)b), tkc_dtype_name(got), tkc_dtype_name((tkc_dtype)best));
    }
  }
  /* a few written out by hand, as tinygrad answers them */
  assert_int_equal(tkc_least_upper_dtype(TKC_INT8, TKC_UINT8), TKC_INT16);
  assert_int_equal(tkc_least_upper_dtype(TKC_INT32, TKC_UINT32), TKC_INT64);
  assert_int_equal(tkc_least_upper_dtype(TKC_INT64, TKC_UINT64), TKC_FLOAT16);
  assert_int_equal(tkc_least_upper_dtype(TKC_FLOAT16, TKC_BFLOAT16), TKC_FLOAT32);
  assert_int_equal(tkc_least_upper_dtype(TKC_BOOL, TKC_FLOAT16), TKC_FLOAT16);
  assert_int_equal(tkc_least_upper_dtype(TKC_UINT8, TKC_INT64), TKC_INT64);
  assert_int_equal(tkc_least_upper_dtype(TKC_BOOL, TKC_BOOL), TKC_BOOL);
  /* bad input */
  assert_int_equal(tkc_least_upper_dtype(TKC_VOID, TKC_INT32), TKC_VOID);
  assert_int_equal(tkc_least_upper_dtype(TKC_INT32, TKC_VOID), TKC_VOID);
  assert_int_equal(tkc_least_upper_dtype(TKC_NDTYPES, TKC_INT32), TKC_VOID);
  assert_int_equal(tkc_least_upper_dtype(TKC_INT32, (tkc_dtype)-1), TKC_VOID);
  assert_int_equal(tkc_least_upper_dtype((tkc_dtype)1000, (tkc_dtype)1000), TKC_VOID);
}

/* A dt value whose scalar kind is out of range (a caller bug): the dt functions must not read
 * outside their tables and must answer "nothing" rather than crash. */
static void test_dtype_bad_dt(void **state) {
  (void)state;
  tkc_dt bad = tkc_dt_of(TKC_FLOAT32);
  bad.scalar = 200;
  char buf[32] = "unchanged";
  assert_false(tkc_dt_is_float(bad));
  assert_false(tkc_dt_is_int(bad));
  assert_false(tkc_dt_is_unsigned(bad));
  assert_false(tkc_dt_is_bool(bad));
  assert_int_equal(tkc_dt_itemsize(bad), 0);
  assert_ptr_equal(tkc_dt_str(bad, buf, sizeof buf), buf);
  assert_true(strlen(buf) < sizeof buf);
}

/* ---------------------------------------------------------------- interning */

static void test_intern_basic(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  assert_non_null(g);
  assert_int_equal(tkc_graph_size(g), 0);
  tkc_uop *c1 = ci(g, 5), *c2 = ci(g, 5);
  assert_non_null(c1);
  assert_ptr_equal(c1, c2);
  assert_int_equal(tkc_graph_size(g), 1);
  assert_ptr_not_equal(ci(g, 6), c1);
  assert_ptr_not_equal(tkc_uop_const_int(g, dt_(TKC_INT64), 5), c1); /* dtype */
  assert_ptr_not_equal(tkc_uop_const_int(g, tkc_dt_vec(dt_(TKC_INT32), 2), 5), c1);
  /* int 1 vs float 1.0 args differ even on the same op/dtype */
  assert_ptr_not_equal(tkc_uop_new(g, TKC_OP_CONST, dt_(TKC_INT32), 0, NULL, tkc_arg_int(1)),
                       tkc_uop_new(g, TKC_OP_CONST, dt_(TKC_INT32), 0, NULL, tkc_arg_float(1.0)));

  tkc_uop *a = tkc_uop_var(g, "a", 0, 10), *b = tkc_uop_var(g, "b", 0, 10);
  assert_ptr_not_equal(a, b);
  assert_ptr_equal(tkc_uop_var(g, "a", 0, 10), a);
  assert_ptr_not_equal(tkc_uop_var(g, "a", 0, 11), a); /* bounds are part of the arg */
  tkc_uop *ab = add(g, a, b);
  assert_ptr_equal(add(g, a, b), ab);
  assert_ptr_not_equal(add(g, b, a), ab); /* source order matters */
  assert_ptr_not_equal(mul(g, a, b), ab); /* op matters */
  tkc_uop *s2[2] = {a, b};
  assert_ptr_equal(tkc_uop_new(g, TKC_OP_ADD, dt_(TKC_INT32), 2, s2, tkc_arg_none()), ab);
  assert_ptr_not_equal(tkc_uop_new(g, TKC_OP_ADD, dt_(TKC_INT32), 2, s2, tkc_arg_int(0)), ab); /* arg */
  assert_ptr_not_equal(tkc_uop_new(g, TKC_OP_ADD, dt_(TKC_INT64), 2, s2, tkc_arg_none()), ab);
  assert_ptr_not_equal(tkc_uop_new(g, TKC_OP_ADD, dt_(TKC_INT32), 1, s2, tkc_arg_none()), ab); /* nsrc */
  /* pointer dtypes: size and address space are part of the key */
  tkc_uop *g0 = tkc_uop_new(g, TKC_OP_DEFINE_GLOBAL, tkc_dt_ptr(dt_(TKC_FLOAT32), TKC_SPACE_GLOBAL, 16), 0, NULL, tkc_arg_int(0));
  assert_ptr_not_equal(tkc_uop_new(g, TKC_OP_DEFINE_GLOBAL, tkc_dt_ptr(dt_(TKC_FLOAT32), TKC_SPACE_GLOBAL, 32), 0, NULL, tkc_arg_int(0)), g0);
  assert_ptr_not_equal(tkc_uop_new(g, TKC_OP_DEFINE_GLOBAL, tkc_dt_ptr(dt_(TKC_FLOAT32), TKC_SPACE_LOCAL, 16), 0, NULL, tkc_arg_int(0)), g0);
  assert_ptr_equal(tkc_uop_new(g, TKC_OP_DEFINE_GLOBAL, tkc_dt_ptr(dt_(TKC_FLOAT32), TKC_SPACE_GLOBAL, 16), 0, NULL, tkc_arg_int(0)), g0);
  /* ids are creation numbers */
  assert_int_equal(c1->id, 0);
  assert_true(ab->id > a->id && ab->id > b->id);
  tkc_graph_free(g);
}

static void test_intern_args(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  /* strings from different buffers */
  char *heap = strdup("gidx0");
  char stack[16];
  snprintf(stack, sizeof stack, "gidx%d", 0);
  tkc_uop *s1 = tkc_uop_new(g, TKC_OP_NOOP, dt_(TKC_VOID), 0, NULL, tkc_arg_str(heap));
  tkc_uop *s2 = tkc_uop_new(g, TKC_OP_NOOP, dt_(TKC_VOID), 0, NULL, tkc_arg_str(stack));
  tkc_uop *s3 = tkc_uop_new(g, TKC_OP_NOOP, dt_(TKC_VOID), 0, NULL, tkc_arg_str("gidx0"));
  assert_ptr_equal(s1, s2);
  assert_ptr_equal(s1, s3);
  assert_ptr_not_equal(tkc_uop_new(g, TKC_OP_NOOP, dt_(TKC_VOID), 0, NULL, tkc_arg_str("gidx1")), s1);
  assert_ptr_not_equal(tkc_uop_new(g, TKC_OP_NOOP, dt_(TKC_VOID), 0, NULL, tkc_arg_str("gidx")), s1);
  assert_ptr_not_equal(tkc_uop_new(g, TKC_OP_NOOP, dt_(TKC_VOID), 0, NULL, tkc_arg_str("")), s1);
  /* the graph copied the text */
  assert_ptr_not_equal(s1->arg.v.s, heap);
  memset(heap, 'z', 5);
  free(heap);
  stack[0] = 'Q';
  assert_string_equal(s1->arg.v.s, "gidx0");
  assert_int_equal(s1->arg.n, 5);
  assert_ptr_equal(tkc_uop_new(g, TKC_OP_NOOP, dt_(TKC_VOID), 0, NULL, tkc_arg_str("gidx0")), s1);
  /* tkc_arg_str(NULL) is the empty string */
  assert_ptr_equal(tkc_uop_new(g, TKC_OP_NOOP, dt_(TKC_VOID), 0, NULL, tkc_arg_str(NULL)),
                   tkc_uop_new(g, TKC_OP_NOOP, dt_(TKC_VOID), 0, NULL, tkc_arg_str("")));

  /* tuples, nested, from different arrays */
  char n1[8] = "x", n2[8] = "x";
  tkc_arg in1[2] = {tkc_arg_int(3), tkc_arg_float(0.5)}, in2[2] = {tkc_arg_int(3), tkc_arg_float(0.5)};
  tkc_arg t1[3] = {tkc_arg_str(n1), tkc_arg_tuple(in1, 2), tkc_arg_none()};
  tkc_arg t2[3] = {tkc_arg_str(n2), tkc_arg_tuple(in2, 2), tkc_arg_none()};
  tkc_uop *u1 = tkc_uop_new(g, TKC_OP_NOOP, dt_(TKC_VOID), 0, NULL, tkc_arg_tuple(t1, 3));
  tkc_uop *u2 = tkc_uop_new(g, TKC_OP_NOOP, dt_(TKC_VOID), 0, NULL, tkc_arg_tuple(t2, 3));
  assert_ptr_equal(u1, u2);
  assert_ptr_not_equal(u1->arg.v.t, t1); /* deep copy */
  in2[0] = tkc_arg_int(4);
  assert_ptr_not_equal(tkc_uop_new(g, TKC_OP_NOOP, dt_(TKC_VOID), 0, NULL, tkc_arg_tuple(t2, 3)), u1);
  in1[0] = tkc_arg_int(99); /* the stored copy does not see this */
  assert_int_equal(u1->arg.v.t[1].v.t[0].v.i, 3);
  assert_ptr_not_equal(tkc_uop_new(g, TKC_OP_NOOP, dt_(TKC_VOID), 0, NULL, tkc_arg_tuple(t1, 2)), u1); /* length */
  assert_ptr_equal(tkc_uop_new(g, TKC_OP_NOOP, dt_(TKC_VOID), 0, NULL, tkc_arg_tuple(NULL, 0)),
                   tkc_uop_new(g, TKC_OP_NOOP, dt_(TKC_VOID), 0, NULL, tkc_arg_tuple(t1, 0)));
  assert_ptr_not_equal(tkc_uop_new(g, TKC_OP_NOOP, dt_(TKC_VOID), 0, NULL, tkc_arg_tuple(NULL, 0)),
                       tkc_uop_new(g, TKC_OP_NOOP, dt_(TKC_VOID), 0, NULL, tkc_arg_none()));

  /* floats compare by bit pattern: -0.0 and 0.0 differ, NaN equals itself */
  tkc_dt f = dt_(TKC_FLOAT32);
  tkc_uop *pz = tkc_uop_const_float(g, f, 0.0), *nz = tkc_uop_const_float(g, f, -0.0);
  assert_ptr_not_equal(pz, nz);
  assert_ptr_equal(tkc_uop_const_float(g, f, -0.0), nz);
  tkc_uop *nan1 = tkc_uop_const_float(g, f, NAN), *nan2 = tkc_uop_const_float(g, f, nan(""));
  assert_non_null(nan1);
  assert_ptr_equal(nan1, nan2);
  assert_true(isnan(tkc_uop_const_f(nan1)));
  assert_ptr_not_equal(nan1, pz);
  tkc_uop *inf = tkc_uop_const_float(g, f, INFINITY);
  assert_ptr_equal(tkc_uop_const_float(g, f, INFINITY), inf);
  assert_ptr_not_equal(tkc_uop_const_float(g, f, -INFINITY), inf);
  /* float32 rounding: two doubles that round to the same float are the same CONST */
  assert_ptr_equal(tkc_uop_const_float(g, f, 0.1), tkc_uop_const_float(g, f, (double)0.1f));
  assert_ptr_not_equal(tkc_uop_const_float(g, dt_(TKC_FLOAT64), 0.1), tkc_uop_const_float(g, dt_(TKC_FLOAT64), (double)0.1f));
  /* pointer args by address */
  static int x, y;
  assert_ptr_equal(tkc_uop_new(g, TKC_OP_CUSTOM, dt_(TKC_VOID), 0, NULL, tkc_arg_ptr(&x)),
                   tkc_uop_new(g, TKC_OP_CUSTOM, dt_(TKC_VOID), 0, NULL, tkc_arg_ptr(&x)));
  assert_ptr_not_equal(tkc_uop_new(g, TKC_OP_CUSTOM, dt_(TKC_VOID), 0, NULL, tkc_arg_ptr(&x)),
                       tkc_uop_new(g, TKC_OP_CUSTOM, dt_(TKC_VOID), 0, NULL, tkc_arg_ptr(&y)));
  /* tkc_arg_eq */
  tkc_arg fa = tkc_arg_float(0.0), fb = tkc_arg_float(-0.0), fn = tkc_arg_float(NAN), ia = tkc_arg_int(0);
  assert_false(tkc_arg_eq(&fa, &fb));
  assert_true(tkc_arg_eq(&fn, &fn));
  assert_false(tkc_arg_eq(&fa, &ia));
  tkc_graph_free(g);
}

/* The random construction check: an independent table (keyed by the structure) says whether a
 * construction is new; the graph must agree on every one. */
typedef struct fkey {
  uint8_t op, sc, cnt, nsrc, akind, pad[3];
  int64_t ai, aj;
  uintptr_t src[3];
} fkey;

typedef struct fset {
  uint32_t *slots; /* index+1 into keys, 0 = empty */
  size_t cap;
  fkey *keys;
  tkc_uop **vals;
  size_t n;
} fset;

static uint64_t fkey_hash(const fkey *k) {
  const unsigned char *p = (const unsigned char *)k;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < sizeof *k; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

/* Returns the stored UOp for k, or NULL after inserting k -> u. */
static tkc_uop *fset_get_or_put(fset *s, const fkey *k, tkc_uop *u) {
  size_t i = fkey_hash(k) & (s->cap - 1);
  for (; s->slots[i]; i = (i + 1) & (s->cap - 1))
    if (!memcmp(&s->keys[s->slots[i] - 1], k, sizeof *k)) return s->vals[s->slots[i] - 1];
  s->keys[s->n] = *k;
  s->vals[s->n] = u;
  s->slots[i] = (uint32_t)++s->n;
  return NULL;
}

typedef struct fuzz_case {
  tkc_op op;
  tkc_dt dt;
  int nsrc;
  tkc_uop *src[3];
  int akind;
  int64_t ai, aj;
} fuzz_case;

static tkc_uop *fuzz_build(tkc_graph *g, const fuzz_case *c) {
  char name[16];
  tkc_arg tup[2];
  tkc_arg arg = tkc_arg_none();
  switch (c->akind) {
  case 1: arg = tkc_arg_int(c->ai); break;
  case 2: snprintf(name, sizeof name, "s%d", (int)c->ai); arg = tkc_arg_str(name); break;
  case 3:
    snprintf(name, sizeof name, "t%d", (int)c->ai);
    tup[0] = tkc_arg_str(name);
    tup[1] = tkc_arg_int(c->aj);
    arg = tkc_arg_tuple(tup, 2);
    break;
  case 4: arg = tkc_arg_float(0.5 * (double)c->ai - 0.5); break; /* includes -0.5, 0, 0.5, 1 */
  }
  return tkc_uop_new(g, c->op, c->dt, c->nsrc, c->src, arg);
}

static void test_intern_random(void **state) {
  (void)state;
  enum { N = 1000000, SHADOW_EVERY = 16 };
  static const tkc_op ops[] = {TKC_OP_CONST, TKC_OP_ADD, TKC_OP_MUL, TKC_OP_NEG, TKC_OP_WHERE,
                               TKC_OP_SINK, TKC_OP_VECTORIZE, TKC_OP_DEFINE_VAR};
  tkc_dt dts[4] = {dt_(TKC_INT32), dt_(TKC_FLOAT32), dt_(TKC_INT8), tkc_dt_vec(dt_(TKC_INT32), 2)};
  tkc_graph *g = tkc_graph_new();
  fset set = {0};
  set.cap = (size_t)1 << 21;
  set.slots = calloc(set.cap, sizeof *set.slots);
  set.keys = malloc(N * sizeof *set.keys);
  set.vals = malloc(N * sizeof *set.vals);
  tkc_uop **pool = malloc(N * sizeof *pool);
  fuzz_case *shadow = malloc((N / SHADOW_EVERY + 1) * sizeof *shadow);
  tkc_uop **shadow_res = malloc((N / SHADOW_EVERY + 1) * sizeof *shadow_res);
  assert_true(g && set.slots && set.keys && set.vals && pool && shadow && shadow_res);
  size_t npool = 0, nshadow = 0;
  rng_state = 12345;
  for (int it = 0; it < N; it++) {
    fuzz_case c;
    memset(&c, 0, sizeof c);
    c.op = ops[rndi((int)(sizeof ops / sizeof ops[0]))];
    c.dt = dts[rndi(4)];
    switch (c.op) {
    case TKC_OP_CONST: case TKC_OP_DEFINE_VAR: c.nsrc = 0; break;
    case TKC_OP_NEG: c.nsrc = 1; break;
    case TKC_OP_ADD: case TKC_OP_MUL: c.nsrc = 2; break;
    case TKC_OP_WHERE: c.nsrc = 3; break;
    default: c.nsrc = rndi(4); break;
    }
    if (npool == 0) c.op = TKC_OP_CONST, c.nsrc = 0; /* ALU ops need their sources */
    for (int i = 0; i < c.nsrc; i++) { /* mostly recent-ish small ids so duplicates are common */
      size_t lim = npool < 16 ? npool : 16;
      c.src[i] = pool[rndi(8) ? rndi((int)lim) : (int)(rnd() % npool)];
    }
    c.akind = rndi(5);
    c.ai = rndi(4);
    c.aj = rndi(3);
    fkey k;
    memset(&k, 0, sizeof k);
    k.op = (uint8_t)c.op;
    k.sc = c.dt.scalar;
    k.cnt = (uint8_t)c.dt.count;
    k.nsrc = (uint8_t)c.nsrc;
    k.akind = (uint8_t)c.akind;
    k.ai = c.akind ? c.ai : 0;
    k.aj = c.akind == 3 ? c.aj : 0;
    for (int i = 0; i < c.nsrc; i++) k.src[i] = (uintptr_t)c.src[i];
    size_t before = tkc_graph_size(g);
    tkc_uop *u = fuzz_build(g, &c);
    if (!u) fail_msg("construction %d failed: %s", it, tkc_last_error());
    tkc_uop *known = fset_get_or_put(&set, &k, u);
    if (known) {
      if (known != u) fail_msg("construction %d: an equal UOp came back as a different pointer", it);
      assert_int_equal(tkc_graph_size(g), before);
    } else {
      if (tkc_graph_size(g) != before + 1) fail_msg("construction %d: a new UOp did not grow the graph", it);
      pool[npool++] = u;
      assert_int_equal(u->op, c.op);
      assert_int_equal(u->nsrc, c.nsrc);
      assert_true(tkc_dt_eq(u->dtype, c.dt));
    }
    if (it % SHADOW_EVERY == 0) {
      shadow[nshadow] = c;
      shadow_res[nshadow++] = u;
    }
  }
  assert_int_equal(tkc_graph_size(g), set.n);
  assert_int_equal(npool, set.n);
  print_message("random interning: %d constructions, %zu distinct\n", N, set.n);
  assert_true(set.n < N / 2); /* the generator really produced duplicates */
  assert_true(set.n > 1000);
  /* rebuilding the shadow list (new buffers for every string/tuple) gives the same pointers */
  for (size_t i = 0; i < nshadow; i++) {
    tkc_uop *u = fuzz_build(g, &shadow[i]);
    if (u != shadow_res[i]) fail_msg("shadow entry %zu rebuilt to a different UOp", i);
  }
  assert_int_equal(tkc_graph_size(g), set.n);
  assert_true(tkc_graph_bytes(g) > set.n * sizeof(tkc_uop));
  free(set.slots);
  free(set.keys);
  free(set.vals);
  free(pool);
  free(shadow);
  free(shadow_res);
  tkc_graph_free(g);
}

/* ---------------------------------------------------------------- range analysis */

static void assert_range(const tkc_uop *u, int64_t lo, int64_t hi) {
  assert_non_null(u);
  if (u->vmin != lo || u->vmax != hi)
    fail_msg("%s: range [%lld, %lld], expected [%lld, %lld]", tkc_op_name((tkc_op)u->op), (long long)u->vmin,
             (long long)u->vmax, (long long)lo, (long long)hi);
}

static void test_range_exact(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *a = tkc_uop_var(g, "a", 0, 3), *b = tkc_uop_var(g, "b", 2, 5), *n = tkc_uop_var(g, "n", -2, 3);
  tkc_uop *x = tkc_uop_var(g, "x", 0, 9), *y = tkc_uop_var(g, "y", -5, 9);
  assert_range(a, 0, 3);
  assert_range(ci(g, -7), -7, -7);
  assert_range(add(g, a, b), 2, 8);
  assert_range(mul(g, n, tkc_uop_var(g, "m", 4, 5)), -10, 15);
  assert_range(tkc_uop_alu2(g, TKC_OP_IDIV, x, ci(g, 4)), 0, 2);
  assert_range(tkc_uop_alu2(g, TKC_OP_IDIV, y, ci(g, 4)), -1, 2);   /* truncation toward zero */
  assert_range(tkc_uop_alu2(g, TKC_OP_IDIV, x, ci(g, -4)), -2, 0);
  assert_range(tkc_uop_alu2(g, TKC_OP_MOD, x, ci(g, 4)), 0, 3);
  assert_range(tkc_uop_alu2(g, TKC_OP_MOD, a, ci(g, 8)), 0, 3);      /* never above the dividend */
  assert_range(tkc_uop_alu2(g, TKC_OP_MOD, y, ci(g, 4)), -3, 3);
  assert_range(tkc_uop_alu2(g, TKC_OP_MAX, n, a), 0, 3);
  assert_range(tkc_uop_alu2(g, TKC_OP_CMPLT, a, tkc_uop_var(g, "c", 4, 5)), 1, 1);
  assert_range(tkc_uop_alu2(g, TKC_OP_CMPLT, b, a), 0, 1);
  assert_range(tkc_uop_alu2(g, TKC_OP_CMPLT, tkc_uop_var(g, "c", 4, 5), a), 0, 0);
  assert_range(tkc_uop_alu2(g, TKC_OP_CMPNE, ci(g, 3), ci(g, 3)), 0, 0);
  assert_range(tkc_uop_alu2(g, TKC_OP_CMPNE, a, tkc_uop_var(g, "c", 4, 5)), 1, 1);
  assert_range(tkc_uop_alu2(g, TKC_OP_CMPNE, a, b), 0, 1);
  tkc_uop *lt = tkc_uop_alu2(g, TKC_OP_CMPLT, a, b);
  assert_int_equal(lt->dtype.scalar, TKC_BOOL);
  assert_range(tkc_uop_alu3(g, TKC_OP_WHERE, lt, a, tkc_uop_var(g, "c", 4, 5)), 0, 5);
  assert_range(tkc_uop_alu3(g, TKC_OP_WHERE, lt, n, y), -5, 9);
  assert_range(tkc_uop_range(g, ci(g, 0), ci(g, 10), 0), 0, 9);
  assert_range(tkc_uop_range(g, ci(g, 2), x, 1), 2, 8);
  assert_range(tkc_uop_special(g, "gidx0", 8), 0, 7);
  assert_range(tkc_uop_special(g, "gidx1", 1), 0, 0);
  assert_range(tkc_uop_var(g, "big", INT32_MIN, INT32_MAX), INT32_MIN, INT32_MAX);
  /* CAST: int -> int keeps the range when it fits, else the target's full range */
  assert_range(tkc_uop_cast(g, x, dt_(TKC_INT8)), 0, 9);
  assert_range(tkc_uop_cast(g, tkc_uop_var(g, "w", 0, 300), dt_(TKC_INT8)), -128, 127);
  assert_range(tkc_uop_cast(g, tkc_uop_var(g, "w", 0, 300), dt_(TKC_UINT8)), 0, 255);
  assert_range(tkc_uop_cast(g, y, dt_(TKC_INT64)), -5, 9);
  assert_range(tkc_uop_cast(g, lt, dt_(TKC_INT32)), 0, 1);
  /* AND: bools, and x & c for a non-negative constant c */
  tkc_uop *lt2 = tkc_uop_alu2(g, TKC_OP_CMPLT, a, tkc_uop_var(g, "c", 4, 5)); /* always true */
  assert_range(tkc_uop_alu2(g, TKC_OP_AND, lt2, lt2), 1, 1);
  assert_range(tkc_uop_alu2(g, TKC_OP_AND, lt, lt2), 0, 1);
  assert_range(tkc_uop_alu2(g, TKC_OP_AND, y, ci(g, 7)), 0, 7);
  /* dtype bounds when nothing is known; overflow widens to the dtype */
  tkc_uop *big = tkc_uop_var(g, "big", INT32_MIN, INT32_MAX);
  assert_range(add(g, big, ci(g, 1)), INT32_MIN, INT32_MAX);
  assert_range(mul(g, tkc_uop_var(g, "h", 0, 100000), tkc_uop_var(g, "h", 0, 100000)), INT32_MIN, INT32_MAX);
  tkc_uop *i8 = tkc_uop_const_int(g, dt_(TKC_INT8), 100);
  assert_range(i8, 100, 100);
  assert_range(add(g, i8, i8), -128, 127);
  assert_range(tkc_uop_const_int(g, dt_(TKC_BOOL), 1), 1, 1);
  /* floats carry no integer range */
  tkc_uop *fc = tkc_uop_const_float(g, dt_(TKC_FLOAT32), 2.0);
  assert_range(fc, INT64_MIN, INT64_MAX);
  tkc_graph_free(g);
}

/* Brute force: random integer expressions over small variables; for every assignment of the
 * variables, every node's value lies within its [vmin, vmax]. */
typedef struct leafv {
  const tkc_uop *u;
  int64_t lo, hi;
} leafv;

typedef struct rgen {
  tkc_graph *g;
  leafv leaves[3];
  int nleaves;
} rgen;

static tkc_uop *gen_int(rgen *r, int depth);

/* Each generator draws its random numbers in a fixed order (never inside a call's argument
 * list, whose evaluation order C leaves open), so a seed gives the same expressions everywhere. */
static tkc_uop *gen_bool(rgen *r, int depth) {
  int k = rndi(3);
  if (k == 2 && depth > 1) {
    tkc_uop *x = gen_bool(r, depth - 1);
    tkc_uop *y = gen_bool(r, depth - 1);
    return tkc_uop_alu2(r->g, TKC_OP_AND, x, y);
  }
  tkc_uop *x = gen_int(r, depth - 1);
  tkc_uop *y = gen_int(r, depth - 1);
  return tkc_uop_alu2(r->g, k == 1 ? TKC_OP_CMPNE : TKC_OP_CMPLT, x, y);
}

static tkc_uop *gen_int(rgen *r, int depth) {
  tkc_graph *g = r->g;
  if (depth <= 0 || rndi(5) == 0) {
    if (rndi(3)) return (tkc_uop *)r->leaves[rndi(r->nleaves)].u;
    return ci(g, rndi(11) - 5);
  }
  static const tkc_op bin[] = {TKC_OP_ADD, TKC_OP_MUL, TKC_OP_IDIV, TKC_OP_MOD, TKC_OP_MAX, TKC_OP_AND};
  static const tkc_dtype narrow[] = {TKC_INT8, TKC_UINT8, TKC_INT16, TKC_BOOL};
  int k = rndi(9);
  if (k < 6) {
    tkc_uop *x = gen_int(r, depth - 1), *y;
    if (k >= 2 && rndi(2)) y = ci(g, bin[k] == TKC_OP_AND ? rndi(16) : rndi(9) - 4); /* a constant, 0 included */
    else y = gen_int(r, depth - 1);
    return tkc_uop_alu2(g, bin[k], x, y);
  }
  if (k == 6) {
    tkc_uop *c = gen_bool(r, depth - 1);
    tkc_uop *x = gen_int(r, depth - 1);
    tkc_uop *y = gen_int(r, depth - 1);
    return tkc_uop_alu3(g, TKC_OP_WHERE, c, x, y);
  }
  if (k == 7) { /* through a narrow type and back: wraps */
    tkc_uop *x = gen_int(r, depth - 1);
    return tkc_uop_cast(g, tkc_uop_cast(g, x, dt_(narrow[rndi(4)])), dt_(TKC_INT32));
  }
  return tkc_uop_cast(g, gen_bool(r, depth - 1), dt_(TKC_INT32));
}

static int64_t wrap_to(int64_t v, tkc_dtype d) {
  switch (d) {
  case TKC_BOOL: return v != 0;
  case TKC_INT8: return (int8_t)(uint8_t)v;
  case TKC_UINT8: return (uint8_t)v;
  case TKC_INT16: return (int16_t)(uint16_t)v;
  case TKC_UINT16: return (uint16_t)v;
  case TKC_INT32: return (int32_t)(uint32_t)v;
  case TKC_UINT32: return (uint32_t)v;
  default: return v;
  }
}

/* The value of node u given its sources' values (C semantics; x/0 and x%0 are 0). */
static int64_t eval_node(const tkc_uop *u, const int64_t *s) {
  tkc_dtype d = (tkc_dtype)u->dtype.scalar;
  switch (u->op) {
  case TKC_OP_CONST: return u->arg.v.i;
  case TKC_OP_ADD: return wrap_to(s[0] + s[1], d);
  case TKC_OP_MUL: return wrap_to(s[0] * s[1], d);
  case TKC_OP_IDIV: return s[1] ? wrap_to(s[0] / s[1], d) : 0;
  case TKC_OP_MOD: return s[1] ? wrap_to(s[0] % s[1], d) : 0;
  case TKC_OP_MAX: return s[0] > s[1] ? s[0] : s[1];
  case TKC_OP_CMPLT: return s[0] < s[1];
  case TKC_OP_CMPNE: return s[0] != s[1];
  case TKC_OP_AND: return s[0] & s[1];
  case TKC_OP_WHERE: return s[0] ? s[1] : s[2];
  case TKC_OP_CAST: return wrap_to(s[0], d);
  default: fail_msg("eval_node: unexpected op %s", tkc_op_name((tkc_op)u->op)); return 0;
  }
}

static void check_ranges_brute(tkc_uop *root, const leafv *leaves, int nleaves) {
  size_t n;
  tkc_uop **order = tkc_toposort(root, &n);
  assert_non_null(order);
  uint32_t maxid = 0;
  for (size_t i = 0; i < n; i++) maxid = order[i]->id > maxid ? order[i]->id : maxid;
  int *pos = malloc((maxid + 1) * sizeof *pos);
  int64_t *val = malloc(n * sizeof *val);
  for (size_t i = 0; i < n; i++) pos[order[i]->id] = (int)i;
  int64_t cur[3];
  for (int i = 0; i < nleaves; i++) cur[i] = leaves[i].lo;
  for (;;) {
    for (size_t i = 0; i < n; i++) {
      const tkc_uop *u = order[i];
      int leaf = -1;
      for (int l = 0; l < nleaves; l++)
        if (leaves[l].u == u) leaf = l;
      if (leaf >= 0) {
        val[i] = cur[leaf];
      } else {
        int64_t s[3] = {0, 0, 0};
        for (int j = 0; j < u->nsrc && j < 3; j++) s[j] = val[pos[u->src[j]->id]];
        val[i] = eval_node(u, s);
      }
      if (val[i] < u->vmin || val[i] > u->vmax) {
        char *e = tkc_uop_expr_str(u);
        fail_msg("%s = %lld outside [%lld, %lld] (leaves %lld %lld %lld)", e, (long long)val[i], (long long)u->vmin,
                 (long long)u->vmax, (long long)cur[0], (long long)(nleaves > 1 ? cur[1] : 0), (long long)(nleaves > 2 ? cur[2] : 0));
      }
    }
    int l = 0; /* next assignment */
    while (l < nleaves && cur[l] == leaves[l].hi) { cur[l] = leaves[l].lo; l++; }
    if (l == nleaves) break;
    cur[l]++;
  }
  free(pos);
  free(val);
  tkc_free(order);
}

static void test_range_brute_force(void **state) {
  (void)state;
  rng_state = 777;
  for (int it = 0; it < 3000; it++) {
    rgen r = {tkc_graph_new(), {{0}}, 3};
    int lo = rndi(11) - 5, hi = lo + rndi(7);
    r.leaves[0] = (leafv){tkc_uop_var(r.g, "a", lo, hi), lo, hi};
    int n = 1 + rndi(4);
    r.leaves[1] = (leafv){tkc_uop_range(r.g, ci(r.g, 0), ci(r.g, n), 0), 0, n - 1};
    int s = 1 + rndi(4);
    r.leaves[2] = (leafv){tkc_uop_special(r.g, "lidx0", s), 0, s - 1};
    for (int i = 0; i < 3; i++) {
      assert_non_null(r.leaves[i].u);
      assert_range(r.leaves[i].u, r.leaves[i].lo, r.leaves[i].hi);
    }
    tkc_uop *e = gen_int(&r, 1 + rndi(4));
    assert_non_null(e);
    check_ranges_brute(e, r.leaves, 3);
    tkc_graph_free(r.g);
  }
}

/* ---------------------------------------------------------------- toposort */

static void check_topo(tkc_uop **order, size_t n, const tkc_uop *root) {
  assert_ptr_equal(order[n - 1], root);
  for (size_t i = 0; i < n; i++) {
    for (size_t j = i + 1; j < n; j++) assert_ptr_not_equal(order[i], order[j]);
    for (int s = 0; s < order[i]->nsrc; s++) {
      size_t k = 0;
      while (k < i && order[k] != order[i]->src[s]) k++;
      if (k == i) fail_msg("source %d of node %zu not before it", s, i);
    }
  }
}

static tkc_uop *diamond(tkc_graph *g) {
  tkc_uop *a = tkc_uop_var(g, "a", 0, 9);
  tkc_uop *b = add(g, a, ci(g, 1));
  tkc_uop *c = mul(g, a, ci(g, 2));
  return add(g, b, c);
}

static void test_toposort(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *d = diamond(g);
  size_t n = 0;
  tkc_uop **o = tkc_toposort(d, &n);
  assert_non_null(o);
  assert_int_equal(n, 6); /* a, 1, a+1, 2, a*2, root: shared a once */
  check_topo(o, n, d);
  /* tinygrad's order: depth first, sources in order, a node after its sources */
  tkc_uop *a = d->src[0]->src[0];
  tkc_uop *expect[6] = {a, d->src[0]->src[1], d->src[0], d->src[1]->src[1], d->src[1], d};
  for (int i = 0; i < 6; i++) assert_ptr_equal(o[i], expect[i]);
  size_t n2;
  tkc_uop **o2 = tkc_toposort(d, &n2);
  assert_int_equal(n2, n);
  assert_memory_equal(o, o2, n * sizeof *o);
  tkc_free(o2);

  /* the same graph built in another graph (after unrelated nodes, so addresses and ids differ)
   * sorts into the same order */
  tkc_graph *g2 = tkc_graph_new();
  for (int i = 0; i < 100; i++) ci(g2, 1000 + i);
  tkc_uop *d2 = diamond(g2);
  size_t n3;
  tkc_uop **o3 = tkc_toposort(d2, &n3);
  assert_int_equal(n3, n);
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(o3[i]->op, o[i]->op);
    assert_true(tkc_arg_eq(&o3[i]->arg, &o[i]->arg));
  }
  tkc_free(o3);
  tkc_free(o);

  /* a leaf alone */
  o = tkc_toposort(a, &n);
  assert_int_equal(n, 1);
  assert_ptr_equal(o[0], a);
  tkc_free(o);

  /* heavy sharing: x_{i+1} = x_i + x_i, 40 levels: 2^40 paths, 42 nodes */
  tkc_uop *x = a;
  for (int i = 0; i < 40; i++) x = add(g, x, x);
  o = tkc_toposort(x, &n);
  assert_int_equal(n, 41);
  check_topo(o, n, x);
  tkc_free(o);
  tkc_graph_free(g2);
  tkc_graph_free(g);
}

static void test_toposort_deep_chain(void **state) {
  (void)state;
  enum { N = 1000000 };
  tkc_graph *g = tkc_graph_new();
  tkc_uop *a = tkc_uop_var(g, "a", 0, 9), *one = ci(g, 1), *x = a;
  for (int i = 0; i < N; i++) x = add(g, x, one);
  assert_non_null(x);
  assert_int_equal(tkc_graph_size(g), N + 2);
  size_t n;
  tkc_uop **o = tkc_toposort(x, &n);
  assert_non_null(o);
  assert_int_equal(n, N + 2);
  assert_ptr_equal(o[0], a);
  assert_ptr_equal(o[1], one);
  for (size_t i = 2; i < n; i++) {
    if (o[i]->src[0] != o[i - 1] && !(i == 2 && o[i]->src[0] == a)) fail_msg("chain order broken at %zu", i);
  }
  assert_ptr_equal(o[n - 1], x);
  tkc_free(o);
  /* the listing walks the chain iteratively too */
  char *s = tkc_uop_str(x);
  assert_non_null(s);
  assert_true(strlen(s) > (size_t)N * 10);
  tkc_free(s);
  tkc_graph_free(g);
}

/* ---------------------------------------------------------------- printing */

static void test_print(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *a = tkc_uop_var(g, "a", 0, 10), *b = tkc_uop_var(g, "b", 0, 3), *c4 = ci(g, 4);
  tkc_uop *e = add(g, mul(g, a, c4), b);
  char *s = tkc_uop_expr_str(e);
  assert_string_equal(s, "((a*4)+b)");
  tkc_free(s);
  s = tkc_uop_str(e);
  assert_string_equal(s,
                      "   0 DEFINE_VAR     int                    [] ('a', 0, 10)\n"
                      "   1 CONST          int                    [] 4\n"
                      "   2 MUL            int                    [0, 1]\n"
                      "   3 DEFINE_VAR     int                    [] ('b', 0, 3)\n"
                      "   4 ADD            int                    [2, 3]\n");
  tkc_free(s);

  tkc_uop *lt = tkc_uop_alu2(g, TKC_OP_CMPLT, e, c4);
  tkc_uop *w = tkc_uop_alu3(g, TKC_OP_WHERE, lt, e, tkc_uop_alu1(g, TKC_OP_NEG, a));
  tkc_uop *r = tkc_uop_range(g, ci(g, 0), c4, 1);
  tkc_uop *m = tkc_uop_alu2(g, TKC_OP_MAX, w, r);
  s = tkc_uop_expr_str(m);
  assert_string_equal(s, "max((((a*4)+b) if (((a*4)+b)<4) else (-a)), ridx1)");
  tkc_free(s);
  struct { tkc_op op; const char *want; } bins[] = {
      {TKC_OP_IDIV, "(a//b)"}, {TKC_OP_MOD, "(a%b)"},  {TKC_OP_CMPNE, "(a!=b)"}, {TKC_OP_AND, "(a&b)"},
      {TKC_OP_OR, "(a|b)"},    {TKC_OP_XOR, "(a^b)"}, {TKC_OP_SHL, "(a<<b)"},   {TKC_OP_SHR, "(a>>b)"},
      {TKC_OP_SUB, "(a-b)"},
  };
  for (size_t i = 0; i < sizeof bins / sizeof bins[0]; i++) {
    s = tkc_uop_expr_str(tkc_uop_alu2(g, bins[i].op, a, b));
    assert_string_equal(s, bins[i].want);
    tkc_free(s);
  }
  s = tkc_uop_expr_str(tkc_uop_special(g, "gidx0", 16));
  assert_string_equal(s, "gidx0");
  tkc_free(s);
  s = tkc_uop_expr_str(tkc_uop_const_int(g, dt_(TKC_BOOL), 1));
  assert_string_equal(s, "True");
  tkc_free(s);
  s = tkc_uop_expr_str(tkc_uop_const_int(g, dt_(TKC_BOOL), 0));
  assert_string_equal(s, "False");
  tkc_free(s);
  s = tkc_uop_expr_str(ci(g, -12));
  assert_string_equal(s, "-12");
  tkc_free(s);
  s = tkc_uop_expr_str(tkc_uop_const_float(g, dt_(TKC_FLOAT32), 1.5));
  assert_string_equal(s, "1.5");
  tkc_free(s);

  /* the listing prints a shared node once and refers to it by number; args of every kind */
  tkc_uop *sh = add(g, a, a);
  s = tkc_uop_str(sh);
  assert_string_equal(s,
                      "   0 DEFINE_VAR     int                    [] ('a', 0, 10)\n"
                      "   1 ADD            int                    [0, 0]\n");
  tkc_free(s);
  tkc_uop *f = tkc_uop_const_float(g, dt_(TKC_FLOAT32), 1.5);
  tkc_uop *fv = tkc_uop_const_float(g, tkc_dt_vec(dt_(TKC_FLOAT32), 4), 1.5);
  tkc_uop *gp = tkc_uop_new(g, TKC_OP_DEFINE_GLOBAL, tkc_dt_ptr(dt_(TKC_FLOAT32), TKC_SPACE_GLOBAL, 16), 0, NULL, tkc_arg_int(0));
  tkc_arg one[1] = {tkc_arg_int(7)};
  tkc_uop *t1 = tkc_uop_new(g, TKC_OP_NOOP, dt_(TKC_VOID), 0, NULL, tkc_arg_tuple(one, 1));
  tkc_uop *srcs[5] = {f, fv, gp, t1, tkc_uop_special(g, "gidx0", 16)};
  tkc_uop *sink = tkc_uop_sink(g, 5, srcs);
  s = tkc_uop_str(sink);
  assert_string_equal(s,
                      "   0 CONST          float                  [] 1.5\n"
                      "   1 CONST          float.vec(4)           [] 1.5\n"
                      "   2 DEFINE_GLOBAL  float.ptr(16)          [] 0\n"
                      "   3 NOOP           void                   [] (7,)\n"
                      "   4 SPECIAL        int                    [] ('gidx0', 16)\n"
                      "   5 SINK           void                   [0, 1, 2, 3, 4]\n");
  tkc_free(s);
  tkc_graph_free(g);
}

/* ---------------------------------------------------------------- constructors */

static void test_constructors(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_dt i32 = dt_(TKC_INT32), f32 = dt_(TKC_FLOAT32);
  tkc_uop *a = tkc_uop_var(g, "a", -3, 7);
  assert_int_equal(a->op, TKC_OP_DEFINE_VAR);
  assert_true(tkc_dt_eq(a->dtype, i32));
  assert_int_equal(a->arg.kind, TKC_ARG_TUPLE);
  assert_int_equal(a->arg.n, 3);
  assert_string_equal(a->arg.v.t[0].v.s, "a");
  assert_int_equal(a->arg.v.t[1].v.i, -3);
  assert_int_equal(a->arg.v.t[2].v.i, 7);
  assert_non_null(tkc_uop_var(g, "single", 5, 5));

  /* alu dtype inference */
  tkc_uop *b = ci(g, 2);
  assert_true(tkc_dt_eq(tkc_uop_alu2(g, TKC_OP_ADD, a, b)->dtype, i32));
  tkc_uop *lt = tkc_uop_alu2(g, TKC_OP_CMPLT, a, b);
  assert_true(tkc_dt_eq(lt->dtype, dt_(TKC_BOOL)));
  assert_true(tkc_dt_eq(tkc_uop_alu2(g, TKC_OP_CMPNE, a, b)->dtype, dt_(TKC_BOOL)));
  tkc_uop *fv = tkc_uop_const_float(g, tkc_dt_vec(f32, 4), 1.0);
  tkc_uop *fv2 = tkc_uop_const_float(g, tkc_dt_vec(f32, 4), 2.0);
  assert_true(tkc_dt_eq(tkc_uop_alu2(g, TKC_OP_CMPLT, fv, fv2)->dtype, tkc_dt_vec(dt_(TKC_BOOL), 4)));
  assert_true(tkc_dt_eq(tkc_uop_alu2(g, TKC_OP_MUL, fv, fv2)->dtype, tkc_dt_vec(f32, 4)));
  assert_true(tkc_dt_eq(tkc_uop_alu1(g, TKC_OP_NEG, fv)->dtype, tkc_dt_vec(f32, 4)));
  assert_true(tkc_dt_eq(tkc_uop_alu1(g, TKC_OP_SQRT, tkc_uop_const_float(g, f32, 2))->dtype, f32));
  tkc_uop *w = tkc_uop_alu3(g, TKC_OP_WHERE, lt, tkc_uop_const_float(g, f32, 1), tkc_uop_const_float(g, f32, 2));
  assert_true(tkc_dt_eq(w->dtype, f32));
  assert_int_equal(w->nsrc, 3);
  assert_ptr_equal(w->src[0], lt);

  /* constants, truncated to their dtype */
  tkc_uop *c = tkc_uop_const_int(g, dt_(TKC_INT8), 300);
  assert_true(tkc_uop_is_const(c));
  assert_int_equal(tkc_uop_const_i(c), 44);
  assert_int_equal(tkc_uop_const_i(tkc_uop_const_int(g, dt_(TKC_UINT8), -1)), 255);
  assert_int_equal(tkc_uop_const_i(tkc_uop_const_int(g, dt_(TKC_BOOL), 5)), 1);
  tkc_uop *u64 = tkc_uop_const_int(g, dt_(TKC_UINT64), -1);
  assert_true(tkc_uop_const_f(u64) == 18446744073709551615.0);
  tkc_uop *cf = tkc_uop_const_int(g, f32, 3);
  assert_int_equal(cf->arg.kind, TKC_ARG_FLOAT);
  assert_true(tkc_uop_const_f(cf) == 3.0);
  assert_ptr_equal(cf, tkc_uop_const_float(g, f32, 3.0));
  tkc_uop *ff = tkc_uop_const_float(g, f32, 0.1);
  assert_true(tkc_uop_const_f(ff) == (double)0.1f);
  assert_int_equal(tkc_uop_const_i(tkc_uop_const_float(g, i32, 2.9)), 2);
  assert_int_equal(tkc_uop_const_i(tkc_uop_const_float(g, i32, -2.9)), -2);
  /* const_like */
  assert_ptr_equal(tkc_uop_const_like(g, a, 5), ci(g, 5));
  assert_ptr_equal(tkc_uop_const_like(g, ff, 0.25), tkc_uop_const_float(g, f32, 0.25));
  assert_ptr_equal(tkc_uop_const_like_int(g, a, 9), ci(g, 9));
  assert_ptr_equal(tkc_uop_const_like_int(g, fv, 1), fv);
  assert_int_equal(tkc_uop_const_i(tkc_uop_const_like_int(g, c, 257)), 1);
  assert_false(tkc_uop_is_const(a));
  assert_false(tkc_uop_is_const(NULL));

  /* range / special / cast / bitcast / sink */
  tkc_uop *r = tkc_uop_range(g, ci(g, 0), ci(g, 16), 3);
  assert_int_equal(r->op, TKC_OP_RANGE);
  assert_true(tkc_dt_eq(r->dtype, i32));
  assert_int_equal(r->arg.v.i, 3);
  assert_int_equal(r->nsrc, 2);
  tkc_uop *sp = tkc_uop_special(g, "lidx1", 32);
  assert_int_equal(sp->op, TKC_OP_SPECIAL);
  assert_string_equal(sp->arg.v.t[0].v.s, "lidx1");
  assert_int_equal(sp->arg.v.t[1].v.i, 32);
  assert_ptr_equal(tkc_uop_cast(g, a, i32), a);
  tkc_uop *ca = tkc_uop_cast(g, a, f32);
  assert_int_equal(ca->op, TKC_OP_CAST);
  assert_true(tkc_dt_eq(ca->dtype, f32));
  assert_ptr_equal(tkc_uop_bitcast(g, a, i32), a);
  tkc_uop *bc = tkc_uop_bitcast(g, a, f32);
  assert_int_equal(bc->op, TKC_OP_BITCAST);
  assert_ptr_not_equal(bc, ca);
  tkc_uop *srcs[2] = {a, r};
  tkc_uop *s = tkc_uop_sink(g, 2, srcs);
  assert_int_equal(s->op, TKC_OP_SINK);
  assert_true(tkc_dt_eq(s->dtype, dt_(TKC_VOID)));
  assert_non_null(tkc_uop_sink(g, 0, NULL));
  /* ops table */
  assert_string_equal(tkc_op_name(TKC_OP_ADD), "ADD");
  assert_int_equal(tkc_op_from_name("WHERE"), TKC_OP_WHERE);
  for (int o = 0; o < TKC_NOPS; o++) assert_int_equal(tkc_op_from_name(tkc_op_name((tkc_op)o)), o);
  assert_true(tkc_op_flags(TKC_OP_ADD) & TKC_F_C);
  assert_false(tkc_op_flags(TKC_OP_SUB) & TKC_F_C);
  assert_true(tkc_op_flags(TKC_OP_WHERE) & TKC_F_T);
  tkc_graph_free(g);
}

/* ---------------------------------------------------------------- bad input */

static void test_bad_inputs(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *a = tkc_uop_var(g, "a", 0, 3), *b = ci(g, 1);
  size_t size0 = tkc_graph_size(g);
  tkc_dt i32 = dt_(TKC_INT32);
  tkc_uop *srcs[2] = {a, b}, *nulls[2] = {a, NULL};

  tkc_clear_error();
  assert_int_equal(tkc_last_status(), TKC_OK);
  assert_string_equal(tkc_last_error(), "");
#define EXPECT_EINVAL(call)                    \
  do {                                         \
    tkc_clear_error();                         \
    assert_null(call);                         \
    assert_failed_with(TKC_EINVAL);            \
  } while (0)
  EXPECT_EINVAL(tkc_uop_new(NULL, TKC_OP_ADD, i32, 2, srcs, tkc_arg_none()));
  assert_non_null(strstr(tkc_last_error(), "graph"));
  EXPECT_EINVAL(tkc_uop_new(g, TKC_NOPS, i32, 0, NULL, tkc_arg_none()));
  EXPECT_EINVAL(tkc_uop_new(g, (tkc_op)-1, i32, 0, NULL, tkc_arg_none()));
  EXPECT_EINVAL(tkc_uop_new(g, (tkc_op)100000, i32, 0, NULL, tkc_arg_none()));
  EXPECT_EINVAL(tkc_uop_new(g, TKC_OP_ADD, i32, 2, nulls, tkc_arg_none()));
  EXPECT_EINVAL(tkc_uop_new(g, TKC_OP_ADD, i32, 2, NULL, tkc_arg_none()));
  EXPECT_EINVAL(tkc_uop_new(g, TKC_OP_ADD, i32, -1, srcs, tkc_arg_none()));
  tkc_dt bad = i32;
  bad.scalar = TKC_NDTYPES;
  EXPECT_EINVAL(tkc_uop_new(g, TKC_OP_CONST, bad, 0, NULL, tkc_arg_int(0)));
  EXPECT_EINVAL(tkc_uop_const_int(g, bad, 1));
  EXPECT_EINVAL(tkc_uop_const_float(g, bad, 1.0));
  EXPECT_EINVAL(tkc_uop_cast(g, a, bad));
  EXPECT_EINVAL(tkc_uop_bitcast(g, a, bad));
  EXPECT_EINVAL(tkc_uop_const_int(NULL, i32, 1));
  EXPECT_EINVAL(tkc_uop_const_float(NULL, dt_(TKC_FLOAT32), 1));
  EXPECT_EINVAL(tkc_uop_const_like(g, NULL, 1));
  EXPECT_EINVAL(tkc_uop_const_like(NULL, a, 1));
  EXPECT_EINVAL(tkc_uop_const_like_int(g, NULL, 1));
  EXPECT_EINVAL(tkc_uop_const_like_int(NULL, a, 1));
  EXPECT_EINVAL(tkc_uop_alu1(g, TKC_OP_NEG, NULL));
  EXPECT_EINVAL(tkc_uop_alu1(NULL, TKC_OP_NEG, a));
  EXPECT_EINVAL(tkc_uop_alu1(g, (tkc_op)-5, a));
  EXPECT_EINVAL(tkc_uop_alu2(g, TKC_OP_ADD, a, NULL));
  EXPECT_EINVAL(tkc_uop_alu2(g, TKC_OP_ADD, NULL, a));
  EXPECT_EINVAL(tkc_uop_alu2(NULL, TKC_OP_ADD, a, a));
  EXPECT_EINVAL(tkc_uop_alu2(g, TKC_NOPS, a, a));
  EXPECT_EINVAL(tkc_uop_alu2(g, (tkc_op)-1, NULL, a));
  EXPECT_EINVAL(tkc_uop_alu3(g, TKC_OP_WHERE, NULL, a, a));
  EXPECT_EINVAL(tkc_uop_alu3(g, TKC_OP_WHERE, a, NULL, a));
  EXPECT_EINVAL(tkc_uop_alu3(g, TKC_OP_WHERE, a, a, NULL));
  EXPECT_EINVAL(tkc_uop_alu3(NULL, TKC_OP_WHERE, a, a, a));
  EXPECT_EINVAL(tkc_uop_var(g, "v", 5, 4));
  assert_non_null(strstr(tkc_last_error(), "v"));
  EXPECT_EINVAL(tkc_uop_var(g, NULL, 0, 4));
  EXPECT_EINVAL(tkc_uop_var(NULL, "v", 0, 4));
  EXPECT_EINVAL(tkc_uop_range(g, NULL, b, 0));
  EXPECT_EINVAL(tkc_uop_range(g, b, NULL, 0));
  EXPECT_EINVAL(tkc_uop_range(NULL, b, b, 0));
  EXPECT_EINVAL(tkc_uop_special(g, "gidx0", 0));
  EXPECT_EINVAL(tkc_uop_special(g, "gidx0", -4));
  EXPECT_EINVAL(tkc_uop_special(g, NULL, 4));
  EXPECT_EINVAL(tkc_uop_special(NULL, "gidx0", 4));
  EXPECT_EINVAL(tkc_uop_cast(g, NULL, i32));
  EXPECT_EINVAL(tkc_uop_cast(NULL, a, dt_(TKC_FLOAT32)));
  EXPECT_EINVAL(tkc_uop_bitcast(g, NULL, i32));
  EXPECT_EINVAL(tkc_uop_bitcast(NULL, a, dt_(TKC_FLOAT32)));
  EXPECT_EINVAL(tkc_uop_sink(NULL, 2, srcs));
  EXPECT_EINVAL(tkc_uop_sink(g, 2, nulls));
  EXPECT_EINVAL(tkc_uop_sink(g, 2, NULL));
  size_t n = 99;
  EXPECT_EINVAL(tkc_toposort(NULL, &n));
  EXPECT_EINVAL(tkc_toposort(a, NULL));
  EXPECT_EINVAL(tkc_uop_str(NULL));
  EXPECT_EINVAL(tkc_uop_expr_str(NULL));
#undef EXPECT_EINVAL
  assert_int_equal(tkc_uop_const_i(NULL), 0);
  assert_true(tkc_uop_const_f(NULL) == 0.0);
  assert_null(tkc_op_name(TKC_NOPS));
  assert_null(tkc_op_name((tkc_op)-1));
  assert_int_equal(tkc_op_flags(TKC_NOPS), 0);
  assert_int_equal(tkc_op_flags((tkc_op)-1), 0);
  assert_int_equal(tkc_op_from_name(NULL), -1);
  assert_int_equal(tkc_op_from_name("FOO"), -1);
  assert_int_equal(tkc_op_from_name("add"), -1);
  assert_int_equal(tkc_op_from_name(""), -1);
  assert_int_equal(tkc_graph_size(NULL), 0);
  assert_int_equal(tkc_graph_bytes(NULL), 0);
  tkc_graph_free(NULL);
  tkc_free(NULL);

  /* failures neither grew nor corrupted the graph: the next valid call works */
  assert_int_equal(tkc_graph_size(g), size0);
  tkc_uop *ab = add(g, a, b);
  assert_non_null(ab);
  assert_ptr_equal(add(g, a, b), ab);
  assert_int_equal(tkc_graph_size(g), size0 + 1);
  /* success does not clear the last error (only tkc_clear_error does) */
  tkc_uop_var(g, "v", 5, 4);
  assert_non_null(ci(g, 3));
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  tkc_clear_error();
  assert_int_equal(tkc_last_status(), TKC_OK);
  tkc_graph_free(g);
}

static void test_graph_lifecycle(void **state) {
  (void)state;
  for (int i = 0; i < 10000; i++) {
    tkc_graph *g = tkc_graph_new();
    assert_non_null(g);
    tkc_uop *x = tkc_uop_var(g, "x", 0, i);
    for (int j = 0; j < i % 50; j++) x = add(g, x, ci(g, j));
    tkc_uop *sp = tkc_uop_special(g, "gidx0", 1 + i);
    tkc_uop *s2[2] = {x, sp};
    assert_non_null(tkc_uop_sink(g, 2, s2));
    assert_true(tkc_graph_bytes(g) > 0);
    if (i % 1000 == 0) { /* big enough to grow the table and add arena chunks */
      for (int j = 0; j < 3000; j++) ci(g, j);
      assert_true(tkc_graph_size(g) >= 3000);
    }
    tkc_graph_free(g);
  }
  /* bytes grow with content */
  tkc_graph *g = tkc_graph_new();
  size_t b0 = tkc_graph_bytes(g);
  for (int j = 0; j < 100000; j++) ci(g, j);
  assert_true(tkc_graph_bytes(g) > b0 + 100000 * 32);
  tkc_graph_free(g);
}

/* ---------------------------------------------------------------- base */

static void test_status_version(void **state) {
  (void)state;
  const char *seen[TKC_EINTERNAL + 1];
  for (int s = TKC_OK; s <= TKC_EINTERNAL; s++) {
    seen[s] = tkc_status_str((tkc_status)s);
    assert_non_null(seen[s]);
    assert_true(strlen(seen[s]) > 0);
    for (int t = 0; t < s; t++) assert_string_not_equal(seen[t], seen[s]);
  }
  assert_string_equal(tkc_status_str(TKC_OK), "ok");
  assert_non_null(tkc_status_str((tkc_status)-1));
  assert_non_null(tkc_status_str((tkc_status)(TKC_EINTERNAL + 1)));
  assert_non_null(tkc_status_str((tkc_status)12345));
  char want[32];
  snprintf(want, sizeof want, "%d.%d.%d", TKC_VERSION_MAJOR, TKC_VERSION_MINOR, TKC_VERSION_PATCH);
  assert_string_equal(tkc_version(), want);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dtype_scalars),
      cmocka_unit_test(test_dtype_vec_ptr),
      cmocka_unit_test(test_least_upper_dtype),
      cmocka_unit_test(test_dtype_bad_dt),
      cmocka_unit_test(test_intern_basic),
      cmocka_unit_test(test_intern_args),
      cmocka_unit_test(test_intern_random),
      cmocka_unit_test(test_range_exact),
      cmocka_unit_test(test_range_brute_force),
      cmocka_unit_test(test_toposort),
      cmocka_unit_test(test_toposort_deep_chain),
      cmocka_unit_test(test_print),
      cmocka_unit_test(test_constructors),
      cmocka_unit_test(test_bad_inputs),
      cmocka_unit_test(test_graph_lifecycle),
      cmocka_unit_test(test_status_version),
  };
  const char *filter = getenv("TKC_TEST_FILTER"); /* e.g. TKC_TEST_FILTER='test_rewrite_*' */
  if (filter) cmocka_set_test_filter(filter);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
