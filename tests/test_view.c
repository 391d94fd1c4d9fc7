/* The shapetracker (src/shape/view.c): chains of movement ops on views, their index and validity
 * expressions (tkc_st_expr) evaluated for every element and compared with a brute-force model (a
 * host array holding each element's buffer offset, or -1 where it reads padding, moved by the same
 * ops), view merging and stacking, contiguity, the max index, strides, UOp-arg round trips, and
 * variables in offsets and masks (a shrink from a variable start, a pad by a variable amount). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "shape/shape.h"
#include "tensor_ref.h" /* href: the brute-force model (offsets as int64 values) */

/* ---------------------------------------------------------------- evaluating index expressions */

typedef struct env {
  int n;
  const char *names[12];
  int64_t values[12];
} env;

/* the value of an integer/bool UOp expression: CONSTs, DEFINE_VARs from e, ALU ops and casts */
static int64_t eval(const tkc_uop *u, const env *e) {
  if (u->op == TKC_OP_CONST) return tkc_uop_const_i(u);
  if (u->op == TKC_OP_DEFINE_VAR) {
    for (int i = 0; i < e->n; i++)
      if (!strcmp(e->names[i], u->arg.v.t[0].v.s)) return e->values[i];
    fail_msg("unbound variable %s", u->arg.v.t[0].v.s);
  }
  tkc_value src[3], out;
  for (int i = 0; i < u->nsrc && i < 3; i++) src[i].i = eval(u->src[i], e);
  if (u->op == TKC_OP_CAST) {
    out = tkc_value_cast(src[0], u->src[0]->dtype.scalar, u->dtype.scalar);
    return out.i;
  }
  tkc_dtype in = u->src[u->nsrc - 1]->dtype.scalar;
  assert_int_equal(tkc_alu_eval((tkc_op)u->op, u->dtype.scalar, in, src, u->nsrc, &out), TKC_OK);
  return out.i;
}

/* The model and the st must agree on every element: tkc_st_expr's index and validity, evaluated at
 * each index (and at the variables' values in vars), against the model's offset (-1: invalid). */
static void check_st(const tkc_st *st, const href *model, const env *vars, const char *what) {
  assert_int_equal(tkc_st_ndim(st), model->ndim);
  for (int d = 0; d < model->ndim; d++) assert_int_equal(tkc_st_shape(st)[d], model->shape[d]);
  tkc_graph *g = tkc_graph_new();
  tkc_uop *idxs[TKC_MAX_DIMS], *index = NULL, *valid = NULL;
  env e = vars ? *vars : (env){0, {0}, {0}};
  char names[TKC_MAX_DIMS][16]; /* "i" and any int */
  for (int d = 0; d < model->ndim; d++) {
    snprintf(names[d], sizeof names[d], "i%d", d);
    idxs[d] = tkc_uop_var(g, names[d], 0, model->shape[d] > 0 ? model->shape[d] - 1 : 0);
    e.names[e.n + d] = names[d];
  }
  assert_int_equal(tkc_st_expr(st, g, idxs, &index, &valid), TKC_OK);
  assert_non_null(index);
  int64_t idx[TR_MAXDIM];
  int base = e.n;
  e.n += model->ndim;
  for (int64_t k = 0; k < model->n; k++) {
    tr_unravel(k, model->ndim, model->shape, idx);
    for (int d = 0; d < model->ndim; d++) e.values[base + d] = idx[d];
    int64_t want = model->v[k].i, ok = valid ? eval(valid, &e) : 1;
    if (want < 0 ? ok != 0 : (ok != 1 || eval(index, &e) != want)) {
      char *s = tkc_uop_expr_str(index), *v = valid ? tkc_uop_expr_str(valid) : NULL;
      fail_msg("%s: element %lld: valid %lld index %lld, want %s%lld\n  index %s\n  valid %s", what, (long long)k, (long long)ok,
               (long long)eval(index, &e), want < 0 ? "invalid " : "", (long long)want, s, v ? v : "(always)");
    }
  }
  tkc_graph_free(g);
}

/* ---------------------------------------------------------------- movement chains */

enum { V_RESHAPE, V_PERMUTE, V_EXPAND, V_PAD, V_SHRINK, V_FLIP, V_WINDOW, V_END };
typedef struct vstep {
  int op, n;
  int64_t a[16];
} vstep;

static href model_window(const href *a, int64_t kh, int64_t kw, int64_t s) {
  int n = a->ndim;
  int64_t H = a->shape[n - 2], W = a->shape[n - 1], OH = (H - kh) / s + 1, OW = (W - kw) / s + 1, shp[TR_MAXDIM], idx[TR_MAXDIM], src[TR_MAXDIM];
  for (int d = 0; d < n - 2; d++) shp[d] = a->shape[d];
  shp[n - 2] = OH, shp[n - 1] = OW, shp[n] = kh, shp[n + 1] = kw;
  href h = tr_new(a->dt, n + 2, shp);
  for (int64_t k = 0; k < h.n; k++) {
    tr_unravel(k, n + 2, shp, idx);
    for (int d = 0; d < n - 2; d++) src[d] = idx[d];
    src[n - 2] = idx[n - 2] * s + idx[n], src[n - 1] = idx[n - 1] * s + idx[n + 1];
    h.v[k] = a->v[tr_ravel(src, n, a->shape)];
  }
  return h;
}

/* applies one step to the st and the model */
static void apply(tkc_st *st, href *m, const vstep *s) {
  int ord[TKC_MAX_DIMS];
  for (int i = 0; i < s->n && i < TKC_MAX_DIMS; i++) ord[i] = (int)s->a[i];
  href r;
  switch (s->op) {
  case V_RESHAPE: assert_int_equal(tkc_st_reshape(st, s->n, s->a), TKC_OK); r = tr_reshape(m, s->n, s->a); break;
  case V_PERMUTE: assert_int_equal(tkc_st_permute(st, ord), TKC_OK); r = tr_permute(m, ord); break;
  case V_EXPAND: assert_int_equal(tkc_st_expand(st, s->a), TKC_OK); r = tr_expand(m, s->n, s->a); break;
  case V_PAD: assert_int_equal(tkc_st_pad(st, s->a, NULL), TKC_OK); r = tr_pad(m, s->a, -1.0); break;
  case V_SHRINK: assert_int_equal(tkc_st_shrink(st, s->a, NULL), TKC_OK); r = tr_shrink(m, s->a); break;
  case V_FLIP: {
    int axes[TKC_MAX_DIMS], na = 0;
    for (int i = 0; i < m->ndim; i++)
      if (ord[i]) axes[na++] = i;
    assert_int_equal(tkc_st_flip(st, ord), TKC_OK);
    r = tr_flip(m, na, axes);
    break;
  }
  default: assert_int_equal(tkc_st_window(st, s->a[0], s->a[1], s->a[2]), TKC_OK); r = model_window(m, s->a[0], s->a[1], s->a[2]); break;
  }
  tr_free(m);
  *m = r;
}

/* a contiguous base of the given shape: the model holds offsets 0..n-1 */
static void start(tkc_st *st, href *m, int ndim, const int64_t *shape) {
  tkc_st_contiguous(st, ndim, shape);
  *m = tr_new(TKC_INT64, ndim, shape);
  for (int64_t k = 0; k < m->n; k++) m->v[k].i = k;
}

typedef struct chain {
  const char *name;
  int ndim;
  int64_t shape[4];
  vstep steps[8];
} chain;

#define STEP(op, ...) {op, (int)(sizeof((int64_t[]){__VA_ARGS__}) / 8), {__VA_ARGS__}}
#define ENDS {V_END, 0, {0}}
static const chain CHAINS[] = {
    {"reshapes", 2, {4, 6}, {STEP(V_RESHAPE, 2, 12), STEP(V_RESHAPE, 24), STEP(V_RESHAPE, 3, 1, 8), ENDS}},
    {"permute then reshape (a second view)", 3, {2, 3, 4}, {STEP(V_PERMUTE, 2, 0, 1), STEP(V_RESHAPE, 4, 6), STEP(V_RESHAPE, 24), ENDS}},
    {"transpose then merge back", 2, {5, 7}, {STEP(V_PERMUTE, 1, 0), STEP(V_PERMUTE, 1, 0), STEP(V_RESHAPE, 35), ENDS}},
    {"expand then reshape", 2, {1, 5}, {STEP(V_EXPAND, 3, 5), STEP(V_RESHAPE, 15), STEP(V_RESHAPE, 5, 3), ENDS}},
    {"pad then reshape (a mask through a merge)", 2, {3, 4}, {STEP(V_PAD, 1, 2, 0, 1), STEP(V_RESHAPE, 30), STEP(V_SHRINK, 3, 27), ENDS}},
    {"shrink, flip, permute, reshape", 2, {6, 7}, {STEP(V_SHRINK, 1, 5, 2, 7), STEP(V_FLIP, 0, 1), STEP(V_PERMUTE, 1, 0), STEP(V_RESHAPE, 20), ENDS}},
    {"flip then pad then shrink into the pad", 2, {4, 4}, {STEP(V_FLIP, 1, 1), STEP(V_PAD, 2, 0, 1, 3), STEP(V_SHRINK, 1, 6, 0, 8), ENDS}},
    {"pad twice, flip the padded dims", 1, {5}, {STEP(V_PAD, 2, 1), STEP(V_RESHAPE, 2, 4), STEP(V_PAD, 1, 0, 0, 2), STEP(V_FLIP, 1, 1), ENDS}},
    {"window stride 1", 4, {1, 2, 5, 6}, {STEP(V_WINDOW, 3, 2, 1), ENDS}},
    {"window stride 2 after a pad (conv padding)", 4, {2, 1, 5, 5}, {STEP(V_PAD, 0, 0, 0, 0, 1, 1, 1, 1), STEP(V_WINDOW, 3, 3, 2), ENDS}},
    {"window of a permuted tensor", 3, {4, 6, 3}, {STEP(V_PERMUTE, 2, 0, 1), STEP(V_WINDOW, 2, 2, 1), STEP(V_RESHAPE, 3, 3, 5, 4), ENDS}},
    {"expand a padded dim", 2, {3, 1}, {STEP(V_PAD, 1, 1, 0, 0), STEP(V_EXPAND, 5, 4), STEP(V_PERMUTE, 1, 0), ENDS}},
    {"shrink to nothing", 2, {4, 5}, {STEP(V_SHRINK, 1, 1, 0, 5), STEP(V_RESHAPE, 0, 5), ENDS}},
    {"8 dims", 4, {2, 3, 2, 2}, {STEP(V_RESHAPE, 2, 1, 3, 1, 2, 1, 2, 1), STEP(V_PERMUTE, 7, 6, 5, 4, 3, 2, 1, 0), STEP(V_RESHAPE, 24), ENDS}},
    {"odd sizes", 2, {7, 33}, {STEP(V_PERMUTE, 1, 0), STEP(V_SHRINK, 1, 32, 0, 7), STEP(V_PAD, 0, 2, 3, 0), STEP(V_RESHAPE, 33, 10), ENDS}},
};

static void test_chains(void **state) {
  (void)state;
  for (size_t c = 0; c < sizeof CHAINS / sizeof *CHAINS; c++) {
    const chain *ch = &CHAINS[c];
    tkc_st st;
    href m;
    start(&st, &m, ch->ndim, ch->shape);
    check_st(&st, &m, NULL, ch->name);
    for (const vstep *s = ch->steps; s->op != V_END; s++) {
      apply(&st, &m, s);
      check_st(&st, &m, NULL, ch->name);
    }
    tr_free(&m);
  }
}

/* ---------------------------------------------------------------- merges, stacking, contiguity */

static void test_merges_and_stacking(void **state) {
  (void)state;
  tkc_st st;
  href m;
  /* reshapes of a contiguous st stay one contiguous view */
  start(&st, &m, 2, (const int64_t[]){4, 6});
  assert_true(tkc_st_is_contiguous(&st));
  apply(&st, &m, &(vstep)STEP(V_RESHAPE, 3, 8));
  assert_int_equal(st.nviews, 1);
  assert_true(tkc_st_is_contiguous(&st));
  /* a permute is one view, not contiguous; permuting back is contiguous again */
  apply(&st, &m, &(vstep)STEP(V_PERMUTE, 1, 0));
  assert_int_equal(st.nviews, 1);
  assert_false(tkc_st_is_contiguous(&st));
  apply(&st, &m, &(vstep)STEP(V_PERMUTE, 1, 0));
  assert_true(tkc_st_is_contiguous(&st));
  /* merging permuted dims cannot be one view: a second view is stacked */
  apply(&st, &m, &(vstep)STEP(V_PERMUTE, 1, 0));
  apply(&st, &m, &(vstep)STEP(V_RESHAPE, 24));
  assert_int_equal(st.nviews, 2);
  assert_false(tkc_st_is_contiguous(&st));
  check_st(&st, &m, NULL, "stacked");
  tr_free(&m);
  /* splitting a permuted dim stays one view (strides multiply) */
  start(&st, &m, 2, (const int64_t[]){4, 6});
  apply(&st, &m, &(vstep)STEP(V_PERMUTE, 1, 0));
  apply(&st, &m, &(vstep)STEP(V_RESHAPE, 2, 3, 4));
  assert_int_equal(st.nviews, 1);
  check_st(&st, &m, NULL, "split");
  tr_free(&m);
  /* a reshape of a masked view (merging its unmasked dims) is at most one more view, and right */
  start(&st, &m, 3, (const int64_t[]){2, 3, 4});
  apply(&st, &m, &(vstep)STEP(V_PAD, 1, 1, 0, 0, 0, 0));
  apply(&st, &m, &(vstep)STEP(V_RESHAPE, 4, 12));
  assert_true(st.nviews <= 2);
  assert_true(st.views[0].has_mask);
  check_st(&st, &m, NULL, "masked merge");
  tr_free(&m);
  /* long chains of permute + reshape stay within TKC_MAX_VIEWS views and right */
  start(&st, &m, 2, (const int64_t[]){3, 5});
  for (int i = 0; i < 3 * TKC_MAX_VIEWS; i++) {
    apply(&st, &m, &(vstep)STEP(V_PERMUTE, 1, 0));
    apply(&st, &m, i % 2 ? &(vstep)STEP(V_RESHAPE, 3, 5) : &(vstep)STEP(V_RESHAPE, 5, 3));
    assert_true(st.nviews <= TKC_MAX_VIEWS);
  }
  check_st(&st, &m, NULL, "long chain");
  tr_free(&m);
  /* equality: the same ops give equal sts, a different op does not */
  tkc_st a, b;
  tkc_st_contiguous(&a, 2, (const int64_t[]){4, 6});
  tkc_st_contiguous(&b, 2, (const int64_t[]){4, 6});
  assert_true(tkc_st_equal(&a, &b));
  tkc_st_permute(&a, (const int[]){1, 0});
  assert_false(tkc_st_equal(&a, &b));
  tkc_st_permute(&b, (const int[]){1, 0});
  assert_true(tkc_st_equal(&a, &b));
  tkc_st_flip(&b, (const int[]){1, 0});
  assert_false(tkc_st_equal(&a, &b));
}

/* ---------------------------------------------------------------- max index, strides, args */

static int64_t model_max(const href *m) {
  int64_t best = 0;
  for (int64_t k = 0; k < m->n; k++)
    if (m->v[k].i > best) best = m->v[k].i;
  return best;
}

static void test_max_index_and_strides(void **state) {
  (void)state;
  tkc_st st;
  href m;
  start(&st, &m, 2, (const int64_t[]){4, 5});
  assert_int_equal(tkc_st_max_index(&st), 19); /* the largest offset (a single view is indexed by its strides) */
  tkc_graph *g = tkc_graph_new();
  assert_int_equal(tkc_st_stride(&st, g, 0), 5);
  assert_int_equal(tkc_st_stride(&st, g, 1), 1);
  apply(&st, &m, &(vstep)STEP(V_PERMUTE, 1, 0));
  assert_int_equal(tkc_st_stride(&st, g, 0), 1);
  assert_int_equal(tkc_st_stride(&st, g, 1), 5);
  apply(&st, &m, &(vstep)STEP(V_FLIP, 1, 0));
  assert_int_equal(tkc_st_stride(&st, g, 0), -1);
  assert_true(tkc_st_max_index(&st) >= model_max(&m));
  tr_free(&m);
  /* a broadcast dim has stride 0 and adds nothing to the max index */
  start(&st, &m, 2, (const int64_t[]){1, 7});
  apply(&st, &m, &(vstep)STEP(V_EXPAND, 1000, 7));
  assert_int_equal(tkc_st_stride(&st, g, 0), 0);
  assert_true(tkc_st_max_index(&st) >= model_max(&m));
  assert_int_equal(tkc_st_max_index(&st), 6); /* not the 7000 elements it shows */
  tr_free(&m);
  /* a shrink's offset counts: (100, 100)[90:100, 95:100] reaches 9999 */
  start(&st, &m, 2, (const int64_t[]){100, 100});
  apply(&st, &m, &(vstep)STEP(V_SHRINK, 90, 100, 95, 100));
  assert_true(tkc_st_max_index(&st) >= 9999);
  assert_int_equal(model_max(&m), 9999);
  tr_free(&m);
  /* past INT32_MAX: a view the kernels must index in int64 */
  tkc_st_contiguous(&st, 2, (const int64_t[]){70000, 70000});
  assert_true(tkc_st_max_index(&st) > INT32_MAX);
  tkc_graph_free(g);
}

static void test_arg_round_trip(void **state) {
  (void)state;
  tkc_st st, back;
  href m;
  start(&st, &m, 3, (const int64_t[]){2, 3, 4});
  apply(&st, &m, &(vstep)STEP(V_PERMUTE, 2, 0, 1));
  apply(&st, &m, &(vstep)STEP(V_RESHAPE, 4, 6));
  apply(&st, &m, &(vstep)STEP(V_PAD, 1, 0, 0, 2));
  static tkc_arg storage[TKC_ST_ARGS];
  tkc_arg a = tkc_st_to_arg(&st, storage, TKC_ST_ARGS);
  memset(&back, 0, sizeof back);
  assert_int_equal(tkc_st_from_arg(&back, &a), 0);
  assert_int_equal(tkc_st_from_arg(&back, &(tkc_arg){TKC_ARG_INT, 0, {0}}), -1); /* not a st */
  assert_int_equal(tkc_st_from_arg(&back, &a), 0);
  assert_true(tkc_st_equal(&st, &back));
  check_st(&back, &m, NULL, "from its arg");
  tr_free(&m);
}

/* ---------------------------------------------------------------- variables in offsets and masks */

static void test_variable_offsets_and_masks(void **state) {
  (void)state;
  const tkc_svar L = {"L", 0, 8};
  for (int64_t lv = 0; lv <= 8; lv += 4) {
    env e = {1, {"L"}, {lv}};
    /* x[L:L+2] of a (10,): offset L */
    tkc_st st;
    tkc_st_contiguous(&st, 1, (const int64_t[]){10});
    int slot = tkc_st_var_slot(&st, &L);
    assert_int_equal(slot, 1);
    assert_int_equal(tkc_st_var_slot(&st, &L), 1); /* the same variable: the same slot */
    tkc_sdim sym[2] = {{0, slot}, {2, slot}};
    assert_int_equal(tkc_st_shrink(&st, (const int64_t[]){8, 10}, sym), TKC_OK);
    href m = tr_new(TKC_INT64, 1, (const int64_t[]){2});
    m.v[0].i = lv, m.v[1].i = lv + 1;
    check_st(&st, &m, &e, "shrink from L");
    assert_true(tkc_st_max_index(&st) >= 9);
    tr_free(&m);
    /* a (3, 4) padded before by L rows (laid out at L's largest value, 8): rows [L, L+3) hold data */
    tkc_st_contiguous(&st, 2, (const int64_t[]){3, 4});
    slot = tkc_st_var_slot(&st, &L);
    tkc_sdim psym[6] = {{0, slot}, {0, 0}, {3, 0}, {0, 0}, {0, 0}, {4, 0}};
    assert_int_equal(tkc_st_pad(&st, (const int64_t[]){8, 0, 0, 0}, psym), TKC_OK);
    m = tr_new(TKC_INT64, 2, (const int64_t[]){11, 4});
    for (int64_t k = 0; k < m.n; k++) {
      int64_t r = k / 4 - lv;
      m.v[k].i = r >= 0 && r < 3 ? r * 4 + k % 4 : -1;
    }
    check_st(&st, &m, &e, "pad by L");
    /* and a reshape of the unpadded dim keeps the variable mask */
    tr_free(&m);
  }
  /* a fifth variable does not fit a st */
  tkc_st st;
  tkc_st_contiguous(&st, 1, (const int64_t[]){4});
  for (int i = 0; i < TKC_ST_VARS; i++) {
    tkc_svar v = {"v", 0, 3};
    v.name[1] = (char)('0' + i);
    assert_int_equal(tkc_st_var_slot(&st, &v), i + 1);
  }
  assert_int_equal(tkc_st_var_slot(&st, &(tkc_svar){"w", 0, 3}), 0);
  assert_int_equal(tkc_last_status(), TKC_EUNSUPPORTED);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_chains),
      cmocka_unit_test(test_merges_and_stacking),
      cmocka_unit_test(test_max_index_and_strides),
      cmocka_unit_test(test_arg_round_trip),
      cmocka_unit_test(test_variable_offsets_and_masks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
