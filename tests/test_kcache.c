/* The kernel cache (src/engine/kcache.c): its key is the settings text and an exact encoding of the
 * AST, not the printed AST. Structurally equal ASTs built in different graphs get equal keys; ASTs
 * whose printed forms differ only subtly (a constant 1.0 vs 1.0000001, 0.0 vs -0.0, an int vs a
 * float constant, a different stride, a different dtype) get different keys and different cache
 * entries, and a hash collision never returns another AST's program. End to end, realizes of such
 * kernels each build their own kernel, with the right values, and a repeat builds none. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include "engine/kcache.h"
#include "tkc.h"
#include "tkc/runtime.h"

/* the variants of out[i] = a[i*stride] * c (+ a cast) that the keys must tell apart */
typedef struct variant {
  tkc_dtype cdt;   /* the constant's dtype (FLOAT32: a float const; INT32: an int const cast) */
  double c;        /* its value */
  int stride;      /* a's index stride */
  tkc_dtype outdt; /* the element dtype of the buffers */
} variant;

static tkc_uop *op(tkc_graph *g, tkc_op o, tkc_dt dt, int n, tkc_uop *a, tkc_uop *b) {
  tkc_uop *s[2] = {a, b};
  return tkc_uop_new(g, o, dt, n, s, tkc_arg_none());
}

static tkc_uop *kernel(tkc_graph *g, variant v) {
  tkc_dt f = tkc_dt_of(v.outdt), i32 = tkc_dt_of(TKC_INT32), p = tkc_dt_ptr(f, TKC_SPACE_GLOBAL, -1);
  tkc_uop *out = tkc_uop_new(g, TKC_OP_DEFINE_GLOBAL, p, 0, NULL, tkc_arg_int(0));
  tkc_uop *a = tkc_uop_new(g, TKC_OP_DEFINE_GLOBAL, p, 0, NULL, tkc_arg_int(1));
  tkc_uop *r = tkc_uop_range(g, tkc_uop_const_int(g, i32, 0), tkc_uop_const_int(g, i32, 16), 0);
  tkc_uop *ia = tkc_uop_alu2(g, TKC_OP_MUL, r, tkc_uop_const_int(g, i32, v.stride));
  tkc_uop *x = op(g, TKC_OP_LOAD, f, 1, op(g, TKC_OP_INDEX, p, 2, a, ia), NULL);
  tkc_uop *c = v.cdt == TKC_INT32 ? op(g, TKC_OP_CAST, f, 1, tkc_uop_const_int(g, i32, (int64_t)v.c), NULL) : tkc_uop_const_float(g, f, v.c);
  tkc_uop *st = op(g, TKC_OP_STORE, tkc_dt_of(TKC_VOID), 2, op(g, TKC_OP_INDEX, p, 2, out, r), tkc_uop_alu2(g, TKC_OP_MUL, x, c));
  return tkc_uop_sink(g, 1, &st);
}

static const variant base = {TKC_FLOAT32, 1.0, 1, TKC_FLOAT32};

static variant with(variant v, int field, double x) {
  switch (field) {
  case 0: v.c = x; break;
  case 1: v.cdt = TKC_INT32; break;
  case 2: v.stride = (int)x; break;
  default: v.outdt = TKC_FLOAT16; break;
  }
  return v;
}

static void key_of(tkc_kcache_key *k, const char *settings, variant v) {
  tkc_graph *g = tkc_graph_new();
  assert_non_null(g);
  assert_int_equal(tkc_kcache_key_make(k, settings, kernel(g, v)), TKC_OK);
  tkc_graph_free(g); /* the key keeps nothing of the graph */
}

/* the exact part of the keys (the hash alone would tell most of these apart: the bytes must too,
 * as they are what rules out a collision) */
static bool keys_equal(const tkc_kcache_key *a, const tkc_kcache_key *b) {
  return a->len == b->len && !memcmp(a->bytes, b->bytes, a->len);
}

static void test_equal_asts_equal_keys(void **state) {
  (void)state;
  tkc_kcache_key a, b;
  key_of(&a, "CPU x", base);
  key_of(&b, "CPU x", base);
  assert_true(keys_equal(&a, &b));
  assert_true(a.hash == b.hash);
  assert_true(a.len > strlen("CPU x") + 1);
  tkc_kcache_key_free(&a);
  tkc_kcache_key_free(&b);
}

static void test_subtle_differences_differ(void **state) {
  (void)state;
  const variant others[] = {
      with(base, 0, 1.0000001), with(base, 0, -0.0) /* vs 0.0 below */, with(base, 1, 0), with(base, 2, 2), with(base, 3, 0),
  };
  tkc_kcache_key k0, k;
  key_of(&k0, "CPU x", base);
  for (size_t i = 0; i < sizeof others / sizeof *others; i++) {
    key_of(&k, "CPU x", others[i]);
    assert_false(keys_equal(&k0, &k));
    tkc_kcache_key_free(&k);
  }
  tkc_kcache_key zero, negzero;
  key_of(&zero, "CPU x", with(base, 0, 0.0));
  key_of(&negzero, "CPU x", with(base, 0, -0.0));
  assert_false(keys_equal(&zero, &negzero));
  key_of(&k, "CPU y", base); /* other settings, same AST */
  assert_false(keys_equal(&k0, &k));
  tkc_kcache_key_free(&k);
  tkc_kcache_key_free(&zero);
  tkc_kcache_key_free(&negzero);
  tkc_kcache_key_free(&k0);
}

/* a program for v on INTERP (no compiler needed) */
static tkc_program *program_of(variant v, const char *name) {
  tkc_device *d = tkc_device_get("INTERP");
  assert_non_null(d);
  tkc_graph *g = tkc_graph_new();
  tkc_program *p = tkc_program_new(d, g, kernel(g, v), name);
  assert_non_null(p);
  tkc_graph_free(g);
  return p;
}

static void test_entries_and_collisions(void **state) {
  (void)state;
  const char *settings = "test_kcache entries"; /* no realize uses these settings */
  variant v1 = with(base, 0, 3.0), v2 = with(base, 0, 3.0000003), v3 = with(with(base, 0, 3.0), 1, 0);
  tkc_kcache_key k1, k2, k3;
  key_of(&k1, settings, v1);
  key_of(&k2, settings, v2);
  key_of(&k3, settings, v3);
  tkc_kcache_ref r;
  assert_null(tkc_kcache_get(&k1, &r));
  tkc_program *p1 = program_of(v1, "k1"), *p2 = program_of(v2, "k2");
  tkc_kcache_ref r1, r2;
  assert_ptr_equal(tkc_kcache_put(&k1, p1, &r1), p1);
  assert_non_null(r1);
  assert_null(tkc_kcache_get(&k2, &r)); /* 3.0000003 (float32 3.00000024) is not 3.0 */
  assert_null(tkc_kcache_get(&k3, &r)); /* nor is the int 3 */
  assert_ptr_equal(tkc_kcache_put(&k2, p2, &r2), p2);
  assert_ptr_equal(tkc_kcache_get(&k1, &r), p1);
  tkc_kcache_release(r, p1);
  assert_ptr_equal(tkc_kcache_get(&k2, &r), p2);
  tkc_kcache_release(r, p2);
  /* hash collisions: k3 made to hash as k1 still finds nothing, and 3.0000003 made to hash as 3.0
   * finds its own program */
  k3.hash = k1.hash;
  assert_null(tkc_kcache_get(&k3, &r));
  assert_null(r);
  tkc_kcache_key k2c;
  key_of(&k2c, settings, v2);
  k2c.hash = k1.hash;
  assert_null(tkc_kcache_get(&k2c, &r));
  tkc_kcache_key_free(&k2c);
  /* the same AST built again elsewhere finds the entry */
  tkc_kcache_key again;
  key_of(&again, settings, v1);
  assert_ptr_equal(tkc_kcache_get(&again, &r), p1);
  tkc_kcache_release(r, p1);
  tkc_kcache_release(r1, p1);
  tkc_kcache_release(r2, p2);
  tkc_kcache_key_free(&again);
  tkc_kcache_key_free(&k1);
  tkc_kcache_key_free(&k2);
  tkc_kcache_key_free(&k3);
}

static int64_t built(tkc_ctx *ctx) {
  tkc_stats s;
  assert_int_equal(tkc_ctx_stats(ctx, &s), TKC_OK);
  return s.kernels_built;
}

/* realizes a*c (c a float or int scalar) or a's transpose times c, and checks element 1 */
static void realize_check(tkc_ctx *ctx, tkc_tensor *a, tkc_dtype cdt, double c, bool transpose, int64_t expect_built) {
  int64_t b0 = built(ctx);
  assert_int_equal(tkc_scope_begin(ctx), TKC_OK);
  static const int order[2] = {1, 0};
  tkc_tensor *x = transpose ? tkc_permute(a, order) : a;
  tkc_tensor *y = tkc_mul(x, tkc_cast(tkc_scalar(ctx, cdt, c), TKC_FLOAT32));
  assert_non_null(y);
  y = tkc_contiguous(y);
  assert_int_equal(tkc_realize(y), TKC_OK);
  float out[4];
  assert_int_equal(tkc_copy_out(y, out, sizeof out), TKC_OK);
  float a1 = transpose ? 3.0f : 2.0f; /* a = [[1,2],[3,4]] */
  assert_float_equal(out[1], a1 * (float)(cdt == TKC_INT32 ? (double)(int64_t)c : c), 0);
  tkc_scope_end(ctx);
  assert_int_equal(built(ctx) - b0, expect_built);
}

static void test_realize_distinct_kernels(void **state) {
  (void)state;
  tkc_ctx *ctx = tkc_ctx_new("CPU");
  if (!ctx) ctx = tkc_ctx_new("INTERP");
  assert_non_null(ctx);
  const float av[4] = {1, 2, 3, 4};
  const int64_t shape[2] = {2, 2};
  tkc_tensor *a = tkc_tensor_new(ctx, TKC_FLOAT32, 2, shape, av);
  assert_non_null(a);
  assert_int_equal(tkc_realize(a), TKC_OK);
  realize_check(ctx, a, TKC_FLOAT32, 1.5, false, 1);
  realize_check(ctx, a, TKC_FLOAT32, 1.5000001, false, 1); /* a constant one ulp away: its own kernel */
  realize_check(ctx, a, TKC_INT32, 2, false, 1);
  realize_check(ctx, a, TKC_FLOAT32, 2, false, 1); /* the float 2 after the int 2 */
  realize_check(ctx, a, TKC_FLOAT32, 1.5, true, 1); /* other strides */
  realize_check(ctx, a, TKC_FLOAT32, 1.5, false, 0); /* each seen before: a hit */
  realize_check(ctx, a, TKC_FLOAT32, 1.5000001, false, 0);
  realize_check(ctx, a, TKC_INT32, 2, false, 0);
  realize_check(ctx, a, TKC_FLOAT32, 1.5, true, 0);
  tkc_ctx_free(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_equal_asts_equal_keys),
      cmocka_unit_test(test_subtle_differences_differ),
      cmocka_unit_test(test_entries_and_collisions),
      cmocka_unit_test(test_realize_distinct_kernels),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
