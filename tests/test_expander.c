/* The expander (src/codegen/expander.c): W lanes packed into vector UOps. Directly through the packer
 * (tkc_packer_new / tkc_pack_values / tkc_pack_stores): contiguous stores become one vector STORE
 * whose loads are vector LOADs, scattered addresses are refused (NULL), strided loads become a
 * gather, aligned packers refuse unaligned runs, scalar-access dtypes and bools stay lane by lane,
 * identical accumulators become one vector accumulator (numbered on), uniform lanes stay one UOp,
 * integer lanes that simplify to one value or to constants and loads of one simplified address are
 * a scalar op or load (broadcast), not a vector op.
 * Packed kernels are run on every device against C. Then through the lowerer with opts: UPCAST
 * gives vector stores and loads on the renderers with vectors, UNROLL one scalar accumulator, GROUP
 * (host) a vector accumulator, summed after the loop by halving it as vectors, and the values stay
 * those of C. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "kernel_build.h"

enum { W = 4, N = 32 };

/* lane k of out[r*W + k*step + off] = a[r*W*lstep + k*lstep] * 2 + b[...] (the lanes of one kernel) */
typedef struct lanes {
  tkc_graph *g;
  tkc_uop *range, *store[W], *val[W], *load[W];
} lanes;

static void make_lanes(lanes *L, tkc_dtype dt, int step, int off, int lstep) {
  L->g = tkc_graph_new();
  tkc_graph *g = L->g;
  tkc_uop *out = k_buf(g, 0, dt), *a = k_buf(g, 1, dt), *b = k_buf(g, 2, dt);
  L->range = k_range(g, N / W, 0);
  for (int k = 0; k < W; k++) {
    tkc_uop *ia = k_add(g, k_mul(g, L->range, k_int(g, W * lstep)), k_int(g, k * lstep));
    tkc_uop *io = k_add(g, k_mul(g, L->range, k_int(g, W)), k_int(g, k * step + off));
    L->load[k] = k_load(g, a, ia);
    tkc_uop *two = tkc_dtype_is_float(dt) ? tkc_uop_const_float(g, dt_(dt), 2) : tkc_uop_const_int(g, dt_(dt), 2);
    L->val[k] = k_add(g, k_mul(g, L->load[k], two), k_load(g, b, ia));
    L->store[k] = k_store(g, out, io, L->val[k]);
  }
}

/* runs sink (out, a, b as above) on every available device and compares with C */
static void run_packed(tkc_graph *g, tkc_uop *sink, int lstep) {
  float a[N * W], b[N * W], want[N], got[N];
  for (int i = 0; i < N * W; i++) a[i] = (float)(i % 13) - 6, b[i] = (float)(i % 5);
  for (int i = 0; i < N; i++) want[i] = a[(i / W) * W * lstep + (i % W) * lstep] * 2 + b[(i / W) * W * lstep + (i % W) * lstep];
  for (const char *const *dn = tkc_device_names(); *dn; dn++) {
    if (!tkc_device_available(*dn)) continue;
    tkc_dtype dts[3] = {TKC_FLOAT32, TKC_FLOAT32, TKC_FLOAT32};
    size_t ns[3] = {N, N * W, N * W};
    void *host[3] = {got, a, b};
    memset(got, 0, sizeof got);
    tkc_status st = k_run(*dn, g, sink, 3, dts, ns, host, NULL, 0);
    if (st) fprintf(stderr, "%s: %s\n", *dn, tkc_last_error());
    assert_int_equal(st, TKC_OK);
    assert_memory_equal(got, want, sizeof want);
  }
}

static void test_pack_contiguous_stores(void **state) {
  (void)state;
  lanes L;
  make_lanes(&L, TKC_FLOAT32, 1, 0, 1);
  int naccs = 0;
  tkc_packer *p = tkc_packer_new(L.g, W, &naccs, false, 0);
  assert_non_null(p);
  tkc_uop *st = tkc_pack_stores(p, L.store);
  assert_non_null(st);
  assert_int_equal(st->op, TKC_OP_STORE);
  assert_int_equal(st->src[1]->dtype.count, W); /* one float4 value */
  assert_int_equal(tkc_dt_base(st->src[0]->dtype).count, W); /* through a float4 pointer */
  kb_counts c = kb_count(st);
  assert_int_equal(c.loads, 2); /* a and b: one vector load each */
  assert_int_equal(c.max_load_width, W);
  tkc_uop *v = tkc_pack_values(p, L.val); /* the same lanes again: the memoized vector */
  assert_ptr_equal(v, st->src[1]);
  tkc_packer_free(p);
  run_packed(L.g, k_sink1(L.g, st), 1);
  tkc_graph_free(L.g);
}

static void test_pack_refusals(void **state) {
  (void)state;
  int naccs = 0;
  /* stores with a gap (step 2) are not one run */
  lanes L;
  make_lanes(&L, TKC_FLOAT32, 2, 0, 1);
  tkc_packer *p = tkc_packer_new(L.g, W, &naccs, false, 0);
  assert_null(tkc_pack_stores(p, L.store));
  tkc_packer_free(p);
  tkc_graph_free(L.g);
  /* contiguous stores of strided loads: the store is packed, the loads gathered (VECTORIZE) */
  make_lanes(&L, TKC_FLOAT32, 1, 0, 3);
  p = tkc_packer_new(L.g, W, &naccs, false, 0);
  tkc_uop *st = tkc_pack_stores(p, L.store);
  assert_non_null(st);
  kb_counts c = kb_count(st);
  assert_int_equal(c.max_load_width, 1);
  assert_int_equal(c.loads, 2 * W);
  tkc_packer_free(p);
  run_packed(L.g, k_sink1(L.g, st), 3);
  tkc_graph_free(L.g);
  /* an aligned packer (GPUs) refuses a run starting at r*4 + 1, an unaligned one takes it */
  make_lanes(&L, TKC_FLOAT32, 1, 1, 1);
  p = tkc_packer_new(L.g, W, &naccs, true, 0);
  assert_null(tkc_pack_stores(p, L.store));
  tkc_packer_free(p);
  p = tkc_packer_new(L.g, W, &naccs, false, 0);
  assert_non_null(tkc_pack_stores(p, L.store));
  tkc_packer_free(p);
  tkc_graph_free(L.g);
  /* a dtype the renderer accesses lane by lane, and bool buffers: no vector access */
  make_lanes(&L, TKC_FLOAT32, 1, 0, 1);
  p = tkc_packer_new(L.g, W, &naccs, false, 1u << TKC_FLOAT32);
  assert_null(tkc_pack_stores(p, L.store));
  tkc_packer_free(p);
  tkc_graph_free(L.g);
  make_lanes(&L, TKC_BOOL, 1, 0, 1);
  p = tkc_packer_new(L.g, W, &naccs, false, 0);
  assert_null(tkc_pack_stores(p, L.store));
  tkc_packer_free(p);
  tkc_graph_free(L.g);
}

static void test_pack_values(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  int naccs = 5;
  tkc_packer *p = tkc_packer_new(g, W, &naccs, false, 0);
  /* uniform lanes: the one UOp, broadcast to a vector */
  tkc_uop *x = tkc_uop_const_float(g, dt_(TKC_FLOAT32), 1.5), *same[W] = {x, x, x, x};
  tkc_uop *v = tkc_pack_values(p, same);
  assert_non_null(v);
  assert_int_equal(v->dtype.count, W);
  /* different constants: a vector of W lanes holding each */
  tkc_uop *cs[W];
  for (int k = 0; k < W; k++) cs[k] = tkc_uop_const_float(g, dt_(TKC_FLOAT32), k);
  v = tkc_pack_values(p, cs);
  assert_non_null(v);
  assert_int_equal(v->dtype.count, W);
  /* identical accumulators over one loop: one vector accumulator, numbered from *naccs */
  tkc_uop *r = k_range(g, 8, 1), *acc[W];
  for (int k = 0; k < W; k++) { /* one per lane (numbered as the lowerer numbers them) */
    tkc_uop *src[2] = {tkc_uop_const_float(g, dt_(TKC_FLOAT32), 0), r};
    acc[k] = tkc_uop_new(g, TKC_OP_DEFINE_ACC, dt_(TKC_FLOAT32), 2, src, tkc_arg_int(k));
  }
  v = tkc_pack_values(p, acc);
  assert_non_null(v);
  assert_int_equal(v->op, TKC_OP_DEFINE_ACC);
  assert_int_equal(v->dtype.count, W);
  assert_int_equal(naccs, 6);
  /* ALU over packed sources: the vector op */
  tkc_uop *sum[W];
  for (int k = 0; k < W; k++) sum[k] = k_add(g, acc[k], cs[k]);
  v = tkc_pack_values(p, sum);
  assert_non_null(v);
  assert_int_equal(v->op, TKC_OP_ADD);
  assert_int_equal(v->dtype.count, W);
  tkc_packer_free(p);
  tkc_graph_free(g);
}

/* Lanes whose integer math simplifies: to one value (a per-block field of lane / 16), to constants
 * (a shift count from the lane's position), and loads whose addresses simplify to one address (a
 * block's scale): the scalar op or load once, broadcast, not a vector op computing each lane. */
static void test_pack_lane_math(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  int naccs = 0;
  tkc_packer *p = tkc_packer_new(g, W, &naccs, false, 0);
  tkc_uop *r = k_range(g, 8, 0), *block[W], *shift[W], *scaled[W], *buf = k_buf(g, 1, TKC_FLOAT32);
  for (int k = 0; k < W; k++) {
    tkc_uop *i = k_add(g, k_mul(g, r, k_int(g, 4 * W)), k_int(g, k)); /* 16 r + k, k < 4 */
    block[k] = k_mul(g, tkc_uop_alu2(g, TKC_OP_IDIV, i, k_int(g, 4 * W)), k_int(g, 3)); /* 3 r in every lane */
    shift[k] = k_mul(g, tkc_uop_alu2(g, TKC_OP_MOD, i, k_int(g, W)), k_int(g, 2));      /* 2 k */
    tkc_uop *scale = k_load(g, buf, tkc_uop_alu2(g, TKC_OP_IDIV, i, k_int(g, 4 * W)));  /* buf[r] */
    scaled[k] = k_mul(g, scale, tkc_uop_const_float(g, dt_(TKC_FLOAT32), 0.5));
  }
  tkc_uop *v = tkc_pack_values(p, block);
  assert_non_null(v);
  assert_int_equal(v->op, TKC_OP_VECTORIZE); /* the broadcast of one scalar */
  for (int k = 0; k < W; k++) assert_ptr_equal(v->src[k], v->src[0]);
  assert_int_equal(v->src[0]->dtype.count, 1);
  v = tkc_pack_values(p, shift);
  assert_non_null(v);
  assert_int_equal(v->op, TKC_OP_VECTORIZE); /* the constants 0, 2, 4, 6 */
  for (int k = 0; k < W; k++) {
    assert_int_equal(v->src[k]->op, TKC_OP_CONST);
    assert_int_equal(tkc_uop_const_i(v->src[k]), 2 * k);
  }
  v = tkc_pack_values(p, scaled);
  assert_non_null(v);
  assert_int_equal(v->op, TKC_OP_VECTORIZE);
  tkc_uop *one = v->src[0];
  for (int k = 0; k < W; k++) assert_ptr_equal(v->src[k], one);
  assert_int_equal(one->op, TKC_OP_MUL); /* the scalar product of one scalar load */
  assert_int_equal(one->dtype.count, 1);
  assert_int_equal(one->src[0]->op, TKC_OP_LOAD);
  assert_int_equal(one->src[0]->dtype.count, 1);
  tkc_packer_free(p);
  tkc_graph_free(g);
}

/* ---------------------------------------------------------------- through the lowerer */

static kb_counts lower_run(tkc_tensor *t, const href *want, const char *rname, const char *dev, const kb_opts *o) {
  tkc_schedule s;
  kb_schedule(t, &s);
  assert_int_equal(s.n, 1);
  const tkc_renderer *r = rname ? tkc_renderer_get(rname) : NULL;
  tkc_kshape ks;
  kb_kshape(&s, 0, r, o, &ks);
  tkc_uop *k = kb_lower(&s, 0, r, &ks);
  kb_counts c = kb_count(k);
  if (tkc_device_available(dev)) {
    float got[256];
    assert_true(want->n <= 256);
    assert_int_equal(kb_run(&s, 0, k, dev, got, (size_t)want->n * sizeof(float)), TKC_OK);
    for (int64_t i = 0; i < want->n; i++) assert_float_equal(got[i], want->v[i].f, 1e-4 * (1 + fabs(want->v[i].f)));
  }
  tkc_schedule_free(&s);
  return c;
}

static void test_lowered_vectors(void **state) {
  (void)state;
  href a = tr_rand(TKC_FLOAT32, 2, (const int64_t[]){8, 16}, TR_DOM_ANY), b = tr_rand(TKC_FLOAT32, 2, (const int64_t[]){8, 16}, TR_DOM_ANY);
  tkc_tensor *ta = tr_upload(ctx, &a), *tb = tr_upload(ctx, &b);
  assert_int_equal(tkc_realize(ta), TKC_OK);
  assert_int_equal(tkc_realize(tb), TKC_OK);
  href want = tr_binary(TR_ADD, &a, &b);
  tkc_tensor *e = tkc_add(ta, tb);
  /* UPCAST of the contiguous output axis: float4 loads and one float4 store on C and LLVM */
  kb_opts up = {false, 1, {{TKC_OPT_UPCAST, 1, 4}}};
  const char *rn[2] = {"C", "LLVM"}, *dv[2] = {"CPU", "LLVM"};
  for (int i = 0; i < 2; i++) {
    kb_counts c = lower_run(e, &want, rn[i], dv[i], &up);
    assert_int_equal(c.stores, 1);
    assert_int_equal(c.max_store_width, 4);
    assert_int_equal(c.max_load_width, 4);
  }
  /* on INTERP the lanes are the same values */
  lower_run(e, &want, NULL, "INTERP", &up);
  tr_free(&want);
  /* UPCAST of an axis that is not contiguous in the output (axis 0): lanes stored one by one */
  kb_opts up0 = {false, 1, {{TKC_OPT_UPCAST, 0, 4}}};
  want = tr_binary(TR_ADD, &a, &b);
  kb_counts c = lower_run(e, &want, "C", "CPU", &up0);
  assert_int_equal(c.stores, 4);
  assert_true(c.max_store_width <= 1);
  tr_free(&want);
  /* reduces: UNROLL adds the lanes into one scalar accumulator; GROUP gives a vector accumulator */
  tkc_tensor *s = tkc_sum(ta, 1, (const int[]){1}, 0);
  want = tr_reduce(TR_SUM, &a, 1, (const int[]){1}, 0);
  kb_opts un = {false, 1, {{TKC_OPT_UNROLL, 0, 4}}};
  c = lower_run(s, &want, "C", "CPU", &un);
  assert_int_equal(c.accs, 1);
  assert_int_equal(c.max_acc_width, 1);
  kb_opts gr = {false, 1, {{TKC_OPT_GROUP, 0, 4}}};
  c = lower_run(s, &want, "LLVM", "LLVM", &gr);
  assert_int_equal(c.accs * c.max_acc_width, 4); /* 4 partial sums, combined after the loop */
  c = lower_run(s, &want, "C", "CPU", &gr);
  assert_int_equal(c.accs * c.max_acc_width, 4);
  tr_free(&want), tr_free(&a), tr_free(&b);
}

/* GEPs in the lowered kernel k: *single of one lane, *multi of several */
static void count_geps(const tkc_uop *k, int *single, int *multi) {
  size_t n = 0;
  tkc_uop **all = tkc_toposort(k, &n);
  assert_non_null(all);
  *single = *multi = 0;
  for (size_t i = 0; i < n; i++)
    if (all[i]->op == TKC_OP_GEP) ++*(all[i]->dtype.count == 1 ? single : multi);
  tkc_free(all);
}

/* a 16-lane vector accumulator (GROUP by the host SIMD width) is summed after the loop by halving
 * it as vectors (16 -> 8 -> 4 -> 2 lanes, then the last two), not lane by lane, on every renderer
 * with vectors; the sums are the same */
static void test_lowered_vector_sum(void **state) {
  (void)state;
  href a = tr_rand(TKC_FLOAT32, 2, (const int64_t[]){4, 64}, TR_DOM_ANY);
  tkc_tensor *ta = tr_upload(ctx, &a);
  assert_int_equal(tkc_realize(ta), TKC_OK);
  tkc_tensor *s = tkc_sum(ta, 1, (const int[]){1}, 0);
  href want = tr_reduce(TR_SUM, &a, 1, (const int[]){1}, 0);
  kb_opts gr = {false, 1, {{TKC_OPT_GROUP, 0, 16}}};
  const char *rn[2] = {"C", "LLVM"}, *dv[2] = {"CPU", "LLVM"};
  for (int i = 0; i < 2; i++) {
    lower_run(s, &want, rn[i], dv[i], &gr); /* the values */
    tkc_schedule sc;
    kb_schedule(s, &sc);
    const tkc_renderer *r = tkc_renderer_get(rn[i]);
    tkc_kshape ks;
    kb_kshape(&sc, 0, r, &gr, &ks);
    int single, multi;
    count_geps(kb_lower(&sc, 0, r, &ks), &single, &multi);
    assert_int_equal(multi, 6); /* two halves of 16, 8 and 4 lanes */
    assert_int_equal(single, 2);
    tkc_schedule_free(&sc);
  }
  tr_free(&want), tr_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pack_contiguous_stores),
      cmocka_unit_test(test_pack_refusals),
      cmocka_unit_test(test_pack_values),
      cmocka_unit_test(test_pack_lane_math),
      cmocka_unit_test_setup_teardown(test_lowered_vectors, kb_setup, kb_teardown),
      cmocka_unit_test_setup_teardown(test_lowered_vector_sum, kb_setup, kb_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
