/* The heuristics (src/codegen/heuristics.c, tinygrad's hand_coded_optimizations): which opts they pick
 * for typical kernels on each renderer (INTERP: none; host renderers: upcasts as wide as the SIMD
 * registers, grouped reduce lanes, the matmul's 2-D upcast and swap; GPU renderers: 4-wide upcasts,
 * tensor cores for half matmuls where the renderer has them), how TKC_SIMD_BYTES changes them, that
 * every pick is legal (replayed opt by opt with tkc_kshape_apply) and computes what C computes, and
 * that illegal opts are refused with a reason and leave the kernel unchanged. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "kernel_build.h"

static const char *const RENDERERS[5] = {NULL, "C", "LLVM", "PTX", "WGSL"}; /* NULL: INTERP */
static const char *const RUN_ON[5] = {"INTERP", "CPU", "LLVM", NULL, "WEBGPU"};

static tkc_tensor *input(tkc_dtype dt, int64_t r, int64_t c, href *h) {
  *h = tr_rand(dt, 2, (const int64_t[]){r, c}, TR_DOM_ANY);
  tkc_tensor *t = tr_upload(ctx, h);
  assert_non_null(t);
  assert_int_equal(tkc_realize(t), TKC_OK);
  return t;
}

/* the heuristics' opts for t's single kernel on renderer ri, replayed (each must be legal), lowered
 * and run where a device runs that renderer, compared with want */
static void picked(tkc_tensor *t, const href *want, int ri, tkc_kshape *ks) {
  const tkc_renderer *r = RENDERERS[ri] ? tkc_renderer_get(RENDERERS[ri]) : NULL;
  tkc_schedule s;
  kb_schedule(t, &s);
  assert_int_equal(s.n, 1);
  kb_opts h = {true, 0, {{0}}};
  kb_kshape(&s, 0, r, &h, ks);
  kb_opts replay = {false, ks->nopts, {{0}}};
  memcpy(replay.o, ks->opts, sizeof ks->opts);
  tkc_kshape again;
  kb_kshape(&s, 0, r, &replay, &again); /* fails the test when an opt is refused */
  assert_int_equal(again.naxes, ks->naxes);
  assert_int_equal(tkc_kshape_lanes(&again), tkc_kshape_lanes(ks));
  if (RUN_ON[ri] && tkc_device_available(RUN_ON[ri]) && !ks->tc) {
    tkc_uop *k = kb_lower(&s, 0, r, ks);
    size_t nb = (size_t)want->n * tr_size(want->dt);
    void *got = malloc(nb ? nb : 1);
    assert_int_equal(kb_run(&s, 0, k, RUN_ON[ri], got, nb), TKC_OK);
    for (int64_t i = 0; i < want->n; i++) {
      rv g = tr_load(want->dt, got, (size_t)i);
      if (!tr_close(want->dt, g, want->v[i], tr_rtol(want->dt, 1), tr_atol(want->dt, 1) * 64)) {
        fprintf(stderr, "%s: element %lld: %g, C %g\n", RUN_ON[ri], (long long)i, g.f, want->v[i].f);
        fail();
      }
    }
    free(got);
  }
  tkc_schedule_free(&s);
}

static bool is_opt(const tkc_kshape *ks, int i, tkc_opt_op op, int axis, int amount) {
  return i < ks->nopts && ks->opts[i].op == op && ks->opts[i].axis == axis && ks->opts[i].amount == amount;
}

static void with_simd(const char *bytes) {
  if (bytes) setenv("TKC_SIMD_BYTES", bytes, 1);
  else unsetenv("TKC_SIMD_BYTES");
}

static void test_elementwise_and_reduce_picks(void **state) {
  (void)state;
  href a, b;
  tkc_tensor *ta = input(TKC_FLOAT32, 64, 64, &a), *tb = input(TKC_FLOAT32, 64, 64, &b);
  href add = tr_binary(TR_ADD, &a, &b), s1 = tr_reduce(TR_SUM, &a, 1, (const int[]){1}, 0), s0 = tr_reduce(TR_SUM, &a, 1, (const int[]){0}, 0);
  const char *simd[3] = {"16", "32", "64"};
  for (int w = 0; w < 3; w++) {
    with_simd(simd[w]);
    assert_int_equal(tkc_host_simd_bytes(), atoi(simd[w]));
    int lanes = atoi(simd[w]) / 4; /* float32 lanes in a register */
    for (int ri = 0; ri < 5; ri++) {
      tkc_kshape ks;
      bool host = ri == 1 || ri == 2, gpu = ri >= 3;
      /* elementwise: the contiguous output axis upcast, as wide as a register on hosts, 4 on GPUs */
      picked(tkc_add(ta, tb), &add, ri, &ks);
      if (!ri) assert_int_equal(ks.nopts, 0);
      if (host) assert_true(ks.nopts == 1 && is_opt(&ks, 0, TKC_OPT_UPCAST, 1, lanes));
      if (gpu) assert_true(ks.nopts == 1 && is_opt(&ks, 0, TKC_OPT_UPCAST, 1, 4));
      /* a reduce over the contiguous axis: grouped lanes (vector partial sums) on hosts */
      picked(tkc_sum(ta, 1, (const int[]){1}, 0), &s1, ri, &ks);
      if (host) { /* a register of partial sums first (maybe more groups: at most 16 accumulator lanes) */
        assert_true(is_opt(&ks, 0, TKC_OPT_GROUP, 0, lanes));
        for (int i = 0; i < ks.nopts; i++) assert_int_equal(ks.opts[i].op, TKC_OPT_GROUP);
        assert_true(tkc_kshape_lanes(&ks) % lanes == 0 && tkc_kshape_lanes(&ks) <= 16);
      } else assert_int_equal(ks.nopts, 0);
      /* a reduce over axis 0: the output axis upcast on hosts */
      picked(tkc_sum(ta, 1, (const int[]){0}, 0), &s0, ri, &ks);
      if (host) assert_true(ks.nopts == 1 && is_opt(&ks, 0, TKC_OPT_UPCAST, 0, lanes));
      else assert_int_equal(ks.nopts, 0);
    }
  }
  with_simd(NULL);
  int native = tkc_host_simd_bytes();
  assert_true(native == 16 || native == 32 || native == 64);
  with_simd("not a number"); /* ignored: the CPU's own width */
  assert_int_equal(tkc_host_simd_bytes(), native);
  with_simd(NULL);
  /* odd sizes: nothing divides them, no opt */
  href o;
  tkc_tensor *to = input(TKC_FLOAT32, 7, 33, &o);
  href o1 = tr_unary(TR_EXP2, &o);
  for (int ri = 0; ri < 5; ri++) {
    tkc_kshape ks;
    picked(tkc_exp2(to), &o1, ri, &ks);
    assert_int_equal(ks.nopts, 0);
  }
  tr_free(&add), tr_free(&s1), tr_free(&s0), tr_free(&a), tr_free(&b), tr_free(&o), tr_free(&o1);
}

static void test_matmul_picks(void **state) {
  (void)state;
  href a, b, ha, hb;
  tkc_tensor *ta = input(TKC_FLOAT32, 64, 64, &a), *tb = input(TKC_FLOAT32, 64, 64, &b);
  tkc_tensor *tha = input(TKC_FLOAT16, 64, 64, &ha), *thb = input(TKC_FLOAT16, 64, 64, &hb);
  href mm = tr_matmul(&a, &b), hmm = tr_matmul(&ha, &hb);
  with_simd("32");
  for (int ri = 0; ri < 5; ri++) {
    tkc_kshape ks;
    picked(tkc_matmul(ta, tb), &mm, ri, &ks);
    if (ri == 0) assert_int_equal(ks.nopts, 0);
    if (ri == 1 || ri == 2) { /* a register-wide upcast of the columns, doubled, 4 rows, loops swapped */
      assert_true(is_opt(&ks, 0, TKC_OPT_UPCAST, 1, 8) && is_opt(&ks, 1, TKC_OPT_UPCAST, 1, 2) && is_opt(&ks, 2, TKC_OPT_UPCAST, 0, 4));
      assert_true(kb_has_opt(&ks, TKC_OPT_SWAP, -1, -1));
      assert_int_equal(tkc_kshape_lanes(&ks), 64);
    }
    if (ri >= 3) { /* GPUs: a 4 x 8 register tile */
      assert_true(is_opt(&ks, 0, TKC_OPT_UPCAST, 1, 4) && is_opt(&ks, 1, TKC_OPT_UPCAST, 0, 8));
      assert_int_equal(tkc_kshape_lanes(&ks), 32);
    }
    /* half inputs: tensor cores where the renderer has them, else the same tile */
    const tkc_renderer *r = RENDERERS[ri] ? tkc_renderer_get(RENDERERS[ri]) : NULL;
    bool has_tc = r && r->tensor_cores && r->tensor_cores();
    picked(tkc_matmul(tha, thb), &hmm, ri, &ks);
    assert_int_equal(kb_has_opt(&ks, TKC_OPT_TC, -1, -1), has_tc);
    assert_int_equal(ks.tc, has_tc);
  }
  with_simd(NULL);
  tr_free(&mm), tr_free(&hmm), tr_free(&a), tr_free(&b), tr_free(&ha), tr_free(&hb);
}

/* a matvec W x (W row-major, both read along k) whose epilogue multiplies by a vector read along the
 * outputs (a SwiGLU's up projection times the gate): the epilogue's load does not make it matmul-like;
 * on hosts the reduce is grouped along k (contiguous rows of W), never the outputs upcast (which makes
 * every lane read another row of W) */
static void test_matvec_with_epilogue_picks(void **state) {
  (void)state;
  href w, x, e;
  tkc_tensor *tw = input(TKC_FLOAT32, 64, 64, &w), *tx = input(TKC_FLOAT32, 1, 64, &x), *te = input(TKC_FLOAT32, 1, 64, &e);
  href wt = tr_transpose(&w, 0, 1), mv = tr_matmul(&x, &wt), want = tr_binary(TR_MUL, &mv, &e);
  with_simd("32");
  for (int ri = 0; ri < 5; ri++) {
    tkc_kshape ks;
    tkc_tensor *wT = tkc_transpose(tw, 0, 1), *y = tkc_matmul(tx, wT), *out = tkc_mul(y, te);
    picked(out, &want, ri, &ks);
    if (ri == 1 || ri == 2) {
      assert_true(ks.nopts >= 1 && ks.opts[0].op == TKC_OPT_GROUP && ks.opts[0].amount == 8);
      assert_false(kb_has_opt(&ks, TKC_OPT_SWAP, -1, -1));
    }
    tkc_tensor_free(out), tkc_tensor_free(y), tkc_tensor_free(wT);
  }
  with_simd(NULL);
  tr_free(&w), tr_free(&x), tr_free(&e), tr_free(&wt), tr_free(&mv), tr_free(&want);
}

/* conv x (*) w (stride 1) with TKC_SIMD_BYTES simd: one reduce kernel, whose full dims have `dim` among
 * them and whose opts UPCAST by u1 and u2, and values right on the devices that compile */
static void conv_picks(const int64_t *xs, const int64_t *ws, int pad, const char *simd, int64_t dim, int u1, int u2) {
  href x = tr_rand(TKC_FLOAT32, 4, xs, TR_DOM_ANY), w = tr_rand(TKC_FLOAT32, 4, ws, TR_DOM_ANY);
  href want = tr_conv2d(&x, &w, NULL, 1, pad);
  with_simd(simd);
  tkc_tensor *tx = tr_upload(ctx, &x), *tw = tr_upload(ctx, &w), *y = tkc_conv2d(tx, tw, NULL, 1, pad);
  tkc_schedule s;
  kb_schedule(y, &s);
  int convs = 0;
  for (size_t i = 0; i < s.n; i++) {
    tkc_kshape ks;
    kb_kshape(&s, i, tkc_renderer_get("C"), &(kb_opts){true, 0, {{0}}}, &ks);
    bool reduce = false;
    for (int a = 0; a < ks.naxes; a++) reduce |= ks.ax[a].kind == TKC_AX_REDUCE;
    if (!reduce) continue; /* the copies */
    convs++;
    bool has_dim = false;
    for (int d = 0; d < ks.ndim; d++) has_dim |= ks.full[d] == dim;
    assert_true(has_dim);
    assert_true(kb_has_opt(&ks, TKC_OPT_UPCAST, -1, u1) && kb_has_opt(&ks, TKC_OPT_UPCAST, -1, u2));
  }
  assert_int_equal(convs, 1);
  tkc_schedule_free(&s);
  tkc_tensor_free(y), tkc_tensor_free(tw), tkc_tensor_free(tx);
  for (int ri = 1; ri < 5; ri++) { /* (not INTERP: tens of millions of multiply-adds) */
    tkc_ctx *c = RUN_ON[ri] && tkc_device_available(RUN_ON[ri]) ? tkc_ctx_new(RUN_ON[ri]) : NULL;
    if (!c) continue;
    tkc_tensor *cx = tr_upload(c, &x), *cw = tr_upload(c, &w), *cy = tkc_conv2d(cx, cw, NULL, 1, pad);
    assert_int_equal(tr_checkk(cy, &want, 1, RUN_ON[ri]), 0);
    tkc_tensor_free(cy), tkc_tensor_free(cw), tkc_tensor_free(cx);
    tkc_ctx_free(c);
  }
  with_simd(NULL);
  tr_free(&x), tr_free(&w), tr_free(&want);
}

/* a stride-1 conv on a host device (3x3 over 28x28 rows, 8 images): its input padded and copied
 * once, and read as flat rows (composite.c's flat_windows) by a conv over a grid of 26 x 28 = 728
 * positions. With 16 lanes the conv's register tile is a vector of 16 output channels (channel-last
 * weights) by 8 grid positions (it was 26-wide rows by 13 in the windows' view form); the values on
 * every host device */
static void test_flat_conv_picks(void **state) {
  (void)state;
  conv_picks((const int64_t[]){8, 48, 28, 28}, (const int64_t[]){32, 48, 3, 3}, 0, "64", 26 * 28, 16, 8);
}

/* 256 output channels over 7x7 (ResNet's last layers): the windows of the padded input, whose
 * rows of 7 the tile broadcasts against vectors of output channels: 16 lanes (x2) and 7 rows on
 * AVX-512, 8 lanes and 7 rows on AVX2 */
static void test_wide_conv_picks(void **state) {
  (void)state;
  for (int avx2 = 0; avx2 < 2; avx2++)
    conv_picks((const int64_t[]){1, 64, 7, 7}, (const int64_t[]){256, 64, 3, 3}, 1, avx2 ? "32" : "64", 7, avx2 ? 8 : 16, 7);
}

/* a stack of 16 (5, 14) tensors (tkc_stack: each padded along the new axis, summed): the stacked axis,
 * which every load reads broadcast, is unrolled whole on host renderers (UPCAST(0, 16)), so that each
 * copy of the body keeps its own input's loads (14 columns: no vector divides the row); none on the
 * others; the values on every device that runs them */
static void test_stack_picks(void **state) {
  (void)state;
  href a;
  tkc_tensor *ta = input(TKC_FLOAT32, 5, 14, &a), *items[16];
  double *want = malloc(16 * 70 * sizeof *want);
  assert_non_null(want);
  for (int k = 0; k < 16; k++) {
    items[k] = tkc_mul(ta, tkc_scalar(ctx, TKC_FLOAT32, k - 7.5));
    for (int i = 0; i < 70; i++) want[k * 70 + i] = (double)(float)(a.v[i].f * (k - 7.5));
  }
  href w = tr_from_doubles(TKC_FLOAT32, 3, (const int64_t[]){16, 5, 14}, want);
  tkc_tensor *st = tkc_stack(16, items, 0);
  for (int ri = 0; ri < 5; ri++) {
    tkc_kshape ks;
    picked(st, &w, ri, &ks);
    if (ri == 1 || ri == 2) assert_true(ks.nopts == 1 && is_opt(&ks, 0, TKC_OPT_UPCAST, 0, 16));
    else if (!ri) assert_int_equal(ks.nopts, 0);
  }
  for (int k = 0; k < 16; k++) tkc_tensor_free(items[k]);
  tkc_tensor_free(st);
  free(want);
  tr_free(&a), tr_free(&w);
}

/* illegal opts: refused with a reason, the kernel's axes unchanged */
static void test_legality(void **state) {
  (void)state;
  href a;
  tkc_tensor *ta = input(TKC_FLOAT32, 64, 48, &a);
  tkc_schedule s;
  kb_schedule(tkc_sum(ta, 1, (const int[]){1}, 0), &s);
  const tkc_renderer *c = tkc_renderer_get("C"), *ptx = tkc_renderer_get("PTX");
  struct {
    tkc_opt o;
    const tkc_renderer *r;
  } bad[] = {
      {{TKC_OPT_UPCAST, 0, 5}, c},    /* 5 does not divide 64 */
      {{TKC_OPT_UPCAST, 3, 4}, c},    /* no such axis */
      {{TKC_OPT_UNROLL, 0, 7}, c},    /* 7 does not divide 48 */
      {{TKC_OPT_LOCAL, 0, 4}, c},     /* no workgroups on the host */
      {{TKC_OPT_TC, 0, 0}, c},        /* nor tensor cores */
      {{TKC_OPT_TC, 0, 0}, ptx},      /* a sum is no matmul */
      {{TKC_OPT_UPCAST, 0, 512}, c},  /* wider than the lanes allowed */
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    tkc_kshape ks, before;
    assert_int_equal(tkc_kshape_init(&ks, s.items[0].ast), TKC_OK);
    assert_int_equal(tkc_kshape_apply(&ks, (tkc_opt){TKC_OPT_UPCAST, 0, 2}, bad[i].r), TKC_OK); /* a legal one first */
    memcpy(&before, &ks, sizeof ks);
    tkc_status st = tkc_kshape_apply(&ks, bad[i].o, bad[i].r);
    if (st != TKC_EINVAL) fprintf(stderr, "%s(%d,%d) was not refused\n", tkc_opt_name(bad[i].o.op), bad[i].o.axis, bad[i].o.amount);
    assert_int_equal(st, TKC_EINVAL);
    assert_true(strlen(tkc_last_error()) > 0);
    assert_int_equal(ks.naxes, before.naxes);
    assert_int_equal(ks.nopts, before.nopts);
    assert_memory_equal(ks.ax, before.ax, sizeof ks.ax);
  }
  /* the same opts legal on a GPU renderer: a workgroup, a grouped reduce in shared memory */
  tkc_kshape ks;
  assert_int_equal(tkc_kshape_init(&ks, s.items[0].ast), TKC_OK);
  assert_int_equal(tkc_kshape_apply(&ks, (tkc_opt){TKC_OPT_LOCAL, 0, 4}, ptx), TKC_OK);
  assert_int_equal(tkc_kshape_apply(&ks, (tkc_opt){TKC_OPT_GROUPTOP, 0, 16}, ptx), TKC_OK);
  assert_int_equal(tkc_kshape_threads(&ks), 64);
  assert_int_equal(kb_axes(&ks, TKC_AX_LOCAL), 1);
  assert_int_equal(kb_axes(&ks, TKC_AX_GROUP_LOCAL), 1);
  tkc_schedule_free(&s);
  tr_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_elementwise_and_reduce_picks),
      cmocka_unit_test(test_matmul_picks),
      cmocka_unit_test(test_matvec_with_epilogue_picks),
      cmocka_unit_test(test_flat_conv_picks),
      cmocka_unit_test(test_wide_conv_picks),
      cmocka_unit_test(test_stack_picks),
      cmocka_unit_test(test_legality),
  };
  return cmocka_run_group_tests(tests, kb_setup, kb_teardown);
}
