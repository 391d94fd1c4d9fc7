/* test_index_folding.c — index folding (src/codegen/index_folding.c; tinygrad's arange folding):
 *   the kernels of index_select (an embedding lookup, a middle axis), gather and one_hot times a
 *   matrix keep no reduce: built through the codegen driver for INTERP and every renderer, their axes
 *   have no reduce axis (the heuristics saw the folded kernel), the lowered kernel has no accumulator
 *   and, on GPUs, no loop at all;
 *   their values equal a plain C reference on every device (INTERP included), bit for bit, with
 *   negative and out-of-range indices of a lazy index (which select nothing: 0), for int32, int64,
 *   uint32 and int16 indices and float32, float16 (bits, -0.0 and infinities) and int32 values; the
 *   select composition with a variable number of indices (tkc_dim_var) folds too, and one over a
 *   variable-length arange (not folded) gives the same values;
 *   the closed forms: sums over an arange of a compare with a value (a + r < c, c < a + r, a - r < c,
 *   their negations, !=, weighted by a constant) keep no reduce and count right at every c, in and
 *   beyond [a, a + N). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "kernel_build.h"
#include "codegen/pipeline.h"

static const char *const DEVS[] = {"INTERP", "CPU", "LLVM", "WEBGPU", "CUDA"};
#define NDEVS ((int)(sizeof DEVS / sizeof *DEVS))

static uint32_t rng_state = 12345u;
static uint32_t next_u32(void) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return rng_state >> 8 ^ rng_state << 13;
}

/* n index values in [lo, hi) */
static void random_indices(int64_t *v, int64_t n, int64_t lo, int64_t hi) {
  for (int64_t i = 0; i < n; i++) v[i] = lo + (int64_t)(next_u32() % (uint32_t)(hi - lo));
}

/* an index tensor of dtype dt holding v (converted as C does), made lazy (+ 0) so that its values
 * are not checked at the call: out-of-range ones then select nothing */
static tkc_tensor *lazy_index(tkc_ctx *c, tkc_dtype dt, int ndim, const int64_t *shape, const int64_t *v) {
  int64_t n = tkc_shape_numel(ndim, shape);
  size_t isz = tkc_dtype_size(dt);
  unsigned char *buf = malloc((size_t)n * isz + 1);
  assert_non_null(buf);
  for (int64_t i = 0; i < n; i++) {
    int16_t s16 = (int16_t)v[i];
    int32_t s32 = (int32_t)v[i];
    uint32_t u32 = (uint32_t)v[i];
    int64_t s64 = v[i];
    const void *src = dt == TKC_INT16 ? (const void *)&s16 : dt == TKC_INT32 ? (const void *)&s32 : dt == TKC_UINT32 ? (const void *)&u32 : (const void *)&s64;
    memcpy(buf + (size_t)i * isz, src, isz);
  }
  tkc_tensor *t = tkc_tensor_new(c, dt, ndim, shape, buf);
  free(buf);
  return tkc_add(t, tkc_scalar(c, dt, 0));
}

/* the position index value v (of dtype dt) selects on a dim of d, or -1 for none */
static int64_t picked(tkc_dtype dt, int64_t v, int64_t d) {
  if (dt == TKC_UINT32) v = (int64_t)(uint32_t)v;
  else if (dt == TKC_INT16) v = (int16_t)v;
  else if (dt == TKC_INT32) v = (int32_t)v;
  if (v < 0 && dt != TKC_UINT32) v += d;
  return v >= 0 && v < d ? v : -1;
}

static bool dev_ok(const char *dev, tkc_dtype idt, tkc_dtype vdt) {
  if (!tkc_device_available(dev)) return false;
  if (!strcmp(dev, "WEBGPU") && (idt == TKC_INT64 || vdt == TKC_INT64 || vdt == TKC_FLOAT64)) return false; /* no 64-bit ints there */
  return true;
}

static void expect_bytes(const char *what, const char *dev, tkc_tensor *t, const void *want, size_t nb, size_t isz) {
  unsigned char *got = malloc(nb + 1);
  assert_non_null(got);
  tkc_status st = tkc_copy_out(t, got, nb);
  if (st) fail_msg("%s on %s: %s", what, dev, tkc_last_error());
  for (size_t i = 0; i < nb; i += isz)
    if (memcmp(got + i, (const unsigned char *)want + i, isz)) fail_msg("%s on %s: element %zu differs from C", what, dev, i / isz);
  free(got);
}

/* ---------------------------------------------------------------- structure: no reduce left */

/* t's last kernel through the codegen driver (lowered, simplified, late rules) for each renderer and
 * INTERP: its axes have no reduce axis, the kernel no accumulator; on GPUs no loop */
static void expect_folded(const char *what, tkc_tensor *t) {
  assert_non_null(t);
  tkc_schedule s;
  kb_schedule(t, &s);
  assert_true(s.n >= 1);
  const char *names[] = {NULL, "C", "LLVM", "PTX", "WGSL"};
  for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
    const tkc_renderer *r = names[k] ? tkc_renderer_get(names[k]) : NULL;
    if (names[k] && !r) continue;
    tkc_codegen cg = {.g = s.g, .r = r, .ast = s.items[s.n - 1].ast};
    tkc_status st = tkc_codegen_run(&cg, NULL, "late_rules");
    if (st) fail_msg("%s for %s: %s", what, names[k] ? names[k] : "INTERP", tkc_last_error());
    kb_counts n = kb_count(cg.sink);
    if (kb_axes(&cg.ks, TKC_AX_REDUCE) || kb_axes(&cg.ks, TKC_AX_UNROLL) || kb_axes(&cg.ks, TKC_AX_GROUP) || kb_axes(&cg.ks, TKC_AX_GROUP_LOCAL) || n.accs)
      fail_msg("%s for %s: a reduce is left (%s: %d accumulators)", what, names[k] ? names[k] : "INTERP", cg.name, n.accs);
    if (cg.name[0] != 'E') fail_msg("%s for %s: kernel %s is not elementwise", what, names[k] ? names[k] : "INTERP", cg.name);
    if (r && r->global_max[0] > 0 && n.ranges) fail_msg("%s for %s: %d loops on a GPU", what, names[k], n.ranges);
    tkc_codegen_clear(&cg);
  }
  tkc_schedule_free(&s);
}

static tkc_tensor *table_f32(tkc_ctx *c, int64_t v, int64_t e, float *h) {
  for (int64_t i = 0; i < v * e; i++) h[i] = (float)(int32_t)(next_u32() % 2001) / 64.0f - 15.0f;
  return tkc_tensor_new(c, TKC_FLOAT32, 2, (const int64_t[]){v, e}, h);
}

static void test_structure(void **state) {
  (void)state;
  enum { V = 37, E = 24, B = 5, T = 7 };
  float w[V * E];
  int64_t ids[V * 4]; /* (the most any index tensor below takes: gather's (V, 4)) */
  random_indices(ids, V * 4, -V - 3, V + 3);
  tkc_tensor *table = table_f32(ctx, V, E, w);
  tkc_tensor *idx = lazy_index(ctx, TKC_INT32, 2, (const int64_t[]){B, T}, ids);
  expect_folded("embedding", tkc_index_select(table, 0, idx));
  float x3[3 * 11 * 5];
  for (int i = 0; i < 3 * 11 * 5; i++) x3[i] = (float)i;
  tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 3, (const int64_t[]){3, 11, 5}, x3);
  expect_folded("index_select axis 1", tkc_index_select(x, 1, lazy_index(ctx, TKC_INT32, 1, (const int64_t[]){9}, ids)));
  expect_folded("gather axis 1", tkc_gather(table, 1, lazy_index(ctx, TKC_INT32, 2, (const int64_t[]){V, 4}, ids)));
  int64_t ids0[4 * E];
  random_indices(ids0, 4 * E, -V, V);
  expect_folded("gather axis 0", tkc_gather(table, 0, lazy_index(ctx, TKC_INT32, 2, (const int64_t[]){4, E}, ids0)));
  tkc_tensor *oh = tkc_cast(tkc_one_hot(lazy_index(ctx, TKC_INT32, 1, (const int64_t[]){B * T}, ids), V), TKC_FLOAT32);
  expect_folded("one_hot @ W", tkc_matmul(oh, table));
  expect_folded("one_hot", tkc_sum(tkc_one_hot(lazy_index(ctx, TKC_INT32, 1, (const int64_t[]){B * T}, ids), V), 1, (const int[]){1}, 0));
}

/* ---------------------------------------------------------------- values */

/* embedding: (V, E) table of dtype vdt (random bits), (B, T) index of dtype idt */
static void embedding_case(tkc_dtype idt, tkc_dtype vdt) {
  enum { V = 29, E = 16, B = 3, T = 9 };
  size_t isz = tkc_dtype_size(vdt);
  unsigned char table[V * E * 8], want[B * T * E * 8];
  for (size_t i = 0; i < V * E * isz; i++) table[i] = (unsigned char)next_u32();
  for (size_t i = 0; vdt == TKC_FLOAT16 && i < V * E; i++) /* no NaN: INTERP's float16 does not keep every payload */
    if ((table[2 * i + 1] & 0x7c) == 0x7c) table[2 * i + 1] ^= 0x04;
  for (size_t i = 0; vdt == TKC_FLOAT32 && i < V * E; i++) /* nor float32's: INTERP may quiet a signaling NaN (through double) */
    if ((table[4 * i + 3] & 0x7f) == 0x7f && (table[4 * i + 2] & 0x80)) table[4 * i + 3] ^= 0x01;
  int64_t ids[B * T];
  random_indices(ids, B * T, -V - 4, V + 4);
  ids[0] = V, ids[1] = -V - 1, ids[2] = -1, ids[3] = 0, ids[4] = V - 1, ids[5] = -V; /* the edges */
  memset(want, 0, sizeof want);
  for (int i = 0; i < B * T; i++) {
    int64_t p = picked(idt, ids[i], V);
    if (p >= 0) memcpy(want + (size_t)i * E * isz, table + (size_t)p * E * isz, E * isz);
  }
  for (int d = 0; d < NDEVS; d++) {
    if (!dev_ok(DEVS[d], idt, vdt)) continue;
    tkc_ctx *c = tkc_ctx_new(DEVS[d]);
    assert_non_null(c);
    tkc_tensor *tt = tkc_tensor_new(c, vdt, 2, (const int64_t[]){V, E}, table);
    tkc_tensor *y = tkc_index_select(tt, 0, lazy_index(c, idt, 2, (const int64_t[]){B, T}, ids));
    char what[64];
    snprintf(what, sizeof what, "embedding (%s index, %s values)", tkc_dtype_name(idt), tkc_dtype_name(vdt));
    assert_non_null(y);
    expect_bytes(what, DEVS[d], y, want, (size_t)B * T * E * isz, isz);
    tkc_ctx_free(c);
  }
}

static void test_embedding_values(void **state) {
  (void)state;
  const tkc_dtype idts[] = {TKC_INT32, TKC_INT64, TKC_UINT32, TKC_INT16};
  const tkc_dtype vdts[] = {TKC_FLOAT32, TKC_FLOAT16, TKC_INT32};
  for (size_t i = 0; i < sizeof idts / sizeof *idts; i++)
    for (size_t v = 0; v < sizeof vdts / sizeof *vdts; v++) embedding_case(idts[i], vdts[v]);
}

static void test_index_select_gather_values(void **state) {
  (void)state;
  enum { A = 3, D = 11, C = 5, J = 9, R = 6, K = 13, G = 4 };
  float x[A * D * C], m[R * K], want_sel[A * J * C], want_g1[R * G], want_g0[G * K];
  for (int i = 0; i < A * D * C; i++) x[i] = (float)(int)(next_u32() % 1000) - 500.0f;
  for (int i = 0; i < R * K; i++) m[i] = (float)(int)(next_u32() % 1000) / 8.0f;
  int64_t sel[J], g1[R * G], g0[G * K];
  random_indices(sel, J, -D - 2, D + 2);
  random_indices(g1, R * G, -K - 2, K + 2);
  random_indices(g0, G * K, -R - 2, R + 2);
  for (int a = 0; a < A; a++)
    for (int j = 0; j < J; j++)
      for (int c = 0; c < C; c++) {
        int64_t p = picked(TKC_INT32, sel[j], D);
        want_sel[(a * J + j) * C + c] = p < 0 ? 0.0f : x[(a * D + p) * C + c];
      }
  for (int i = 0; i < R; i++)
    for (int g = 0; g < G; g++) {
      int64_t p = picked(TKC_INT32, g1[i * G + g], K);
      want_g1[i * G + g] = p < 0 ? 0.0f : m[i * K + p];
    }
  for (int g = 0; g < G; g++)
    for (int k = 0; k < K; k++) {
      int64_t p = picked(TKC_INT32, g0[g * K + k], R);
      want_g0[g * K + k] = p < 0 ? 0.0f : m[p * K + k];
    }
  for (int d = 0; d < NDEVS; d++) {
    if (!dev_ok(DEVS[d], TKC_INT32, TKC_FLOAT32)) continue;
    tkc_ctx *c = tkc_ctx_new(DEVS[d]);
    tkc_tensor *xt = tkc_tensor_new(c, TKC_FLOAT32, 3, (const int64_t[]){A, D, C}, x);
    tkc_tensor *mt = tkc_tensor_new(c, TKC_FLOAT32, 2, (const int64_t[]){R, K}, m);
    expect_bytes("index_select axis 1", DEVS[d], tkc_index_select(xt, 1, lazy_index(c, TKC_INT32, 1, (const int64_t[]){J}, sel)), want_sel, sizeof want_sel, 4);
    expect_bytes("gather axis 1", DEVS[d], tkc_gather(mt, 1, lazy_index(c, TKC_INT32, 2, (const int64_t[]){R, G}, g1)), want_g1, sizeof want_g1, 4);
    expect_bytes("gather axis 0", DEVS[d], tkc_gather(mt, 0, lazy_index(c, strcmp(DEVS[d], "WEBGPU") ? TKC_INT64 : TKC_INT32, 2, (const int64_t[]){G, K}, g0)), want_g0, sizeof want_g0, 4);
    tkc_ctx_free(c);
  }
}

static void test_one_hot_matmul_values(void **state) {
  (void)state;
  enum { N = 10, C = 7, E = 12 };
  float w[C * E], want[N * E];
  int32_t want_oh[N * C];
  for (int i = 0; i < C * E; i++) w[i] = (float)(int)(next_u32() % 999) / 16.0f - 20.0f;
  int64_t ids[N];
  random_indices(ids, N, -C - 2, C + 2);
  for (int n = 0; n < N; n++) {
    int64_t p = picked(TKC_INT32, ids[n], C);
    for (int e = 0; e < E; e++) want[n * E + e] = p < 0 ? 0.0f : w[p * E + e];
    for (int k = 0; k < C; k++) want_oh[n * C + k] = p == k;
  }
  for (int d = 0; d < NDEVS; d++) {
    if (!dev_ok(DEVS[d], TKC_INT32, TKC_FLOAT32)) continue;
    tkc_ctx *c = tkc_ctx_new(DEVS[d]);
    tkc_tensor *wt = tkc_tensor_new(c, TKC_FLOAT32, 2, (const int64_t[]){C, E}, w);
    tkc_tensor *oh = tkc_one_hot(lazy_index(c, TKC_INT32, 1, (const int64_t[]){N}, ids), C);
    expect_bytes("one_hot", DEVS[d], oh, want_oh, sizeof want_oh, 4);
    expect_bytes("one_hot @ W", DEVS[d], tkc_matmul(tkc_cast(oh, TKC_FLOAT32), wt), want, sizeof want, 4);
    tkc_ctx_free(c);
  }
}

/* tkc_index_select and tkc_gather refuse variable-length dims (their size check); the composition
 * they are made of folds with a variable number of indices (a variable output dim), and a sum over a
 * variable-length arange (a variable reduce dim: not folded) stays right */
static void test_variable_dims(void **state) {
  (void)state;
  enum { V = 23, MAXN = 16 };
  float w[V], want[MAXN];
  for (int i = 0; i < V; i++) w[i] = (float)i * 0.5f - 3.0f;
  int64_t ids[MAXN];
  random_indices(ids, MAXN, -3, V + 3);
  for (int d = 0; d < NDEVS; d++) {
    if (!dev_ok(DEVS[d], TKC_INT32, TKC_FLOAT32)) continue;
    tkc_ctx *c = tkc_ctx_new(DEVS[d]);
    int64_t n = tkc_dim_var(c, "n", 1, MAXN), rows = tkc_dim_var(c, "rows", 1, V);
    tkc_tensor *wt = tkc_tensor_new(c, TKC_FLOAT32, 2, (const int64_t[]){1, V}, w);
    tkc_tensor *all = lazy_index(c, TKC_INT32, 2, (const int64_t[]){MAXN, 1}, ids);
    tkc_tensor *idx = tkc_shrink(all, (const int64_t[]){0, n, 0, 1});
    tkc_tensor *ar = tkc_reshape(tkc_arange(c, TKC_INT32, 0, V, 1), 2, (const int64_t[]){1, V});
    const int64_t binds[] = {5, 16, 1};
    for (size_t b = 0; b < 3; b++) {
      assert_int_equal(tkc_dim_bind(c, n, binds[b]), TKC_OK);
      assert_int_equal(tkc_dim_bind(c, rows, 11), TKC_OK);
      for (int i = 0; i < binds[b]; i++) want[i] = ids[i] >= 0 && ids[i] < V ? w[ids[i]] : 0.0f;
      tkc_tensor *y = tkc_sum(tkc_where(tkc_eq(idx, ar), wt, tkc_scalar(c, TKC_FLOAT32, 0)), 1, (const int[]){1}, 0);
      if (!y) fail_msg("a select over a variable number of indices: %s", tkc_last_error());
      if (d == 0 && b == 0) expect_folded("a select over a variable number of indices", y);
      expect_bytes("a select over a variable number of indices", DEVS[d], y, want, (size_t)binds[b] * 4, 4);
      tkc_tensor_free(y);
      /* the first `rows` entries only: a reduce over a variable-length dim */
      tkc_tensor *z = tkc_sum(tkc_where(tkc_eq(idx, tkc_shrink(ar, (const int64_t[]){0, 1, 0, rows})), tkc_shrink(wt, (const int64_t[]){0, 1, 0, rows}),
                                        tkc_scalar(c, TKC_FLOAT32, 0)),
                              1, (const int[]){1}, 0);
      if (!z) fail_msg("a select over a variable-length arange: %s", tkc_last_error());
      for (int i = 0; i < binds[b]; i++) want[i] = ids[i] >= 0 && ids[i] < 11 ? w[ids[i]] : 0.0f;
      expect_bytes("a select over a variable-length arange", DEVS[d], z, want, (size_t)binds[b] * 4, 4);
      tkc_tensor_free(z);
    }
    tkc_ctx_free(c);
  }
}

/* ---------------------------------------------------------------- closed forms */

typedef enum cmp_kind { LT, GT, LE, GE, NE, EQ } cmp_kind;

static tkc_tensor *compare(cmp_kind k, tkc_tensor *a, tkc_tensor *b) {
  switch (k) {
  case LT: return tkc_lt(a, b);
  case GT: return tkc_gt(a, b);
  case LE: return tkc_le(a, b);
  case GE: return tkc_ge(a, b);
  case NE: return tkc_ne(a, b);
  default: return tkc_eq(a, b);
  }
}

static bool holds(cmp_kind k, int64_t a, int64_t b) {
  switch (k) {
  case LT: return a < b;
  case GT: return a > b;
  case LE: return a <= b;
  case GE: return a >= b;
  case NE: return a != b;
  default: return a == b;
  }
}

/* sum over r of (arange(start, start + step * N, step)[r] OP c) for a column of c values: as an int32
 * count, and as a float32 sum of 2.5 where it holds */
static void count_case(tkc_ctx *c, const char *dev, cmp_kind k, int64_t start, int64_t step, bool structure) {
  enum { N = 12, M = 24 };
  int64_t cv[M];
  int32_t want[M];
  float wantf[M];
  for (int i = 0; i < M; i++) cv[i] = start + step * (i - 6);
  for (int i = 0; i < M; i++) {
    int n = 0;
    for (int r = 0; r < N; r++) n += holds(k, start + step * r, cv[i]);
    want[i] = n;
    wantf[i] = 2.5f * (float)n;
  }
  tkc_tensor *ar = tkc_reshape(tkc_arange(c, TKC_INT32, (double)start, (double)(start + step * N), (double)step), 2, (const int64_t[]){1, N});
  tkc_tensor *cc = lazy_index(c, TKC_INT32, 2, (const int64_t[]){M, 1}, cv);
  tkc_tensor *hit = compare(k, ar, cc);
  tkc_tensor *count = tkc_sum(tkc_cast(hit, TKC_INT32), 1, (const int[]){1}, 0);
  tkc_tensor *weighted = tkc_sum(tkc_where(hit, tkc_scalar(c, TKC_FLOAT32, 2.5), tkc_scalar(c, TKC_FLOAT32, 0)), 1, (const int[]){1}, 0);
  char what[96];
  snprintf(what, sizeof what, "count of arange(%lld, step %lld) %s c", (long long)start, (long long)step, (const char *[]){"<", ">", "<=", ">=", "!=", "=="}[k]);
  if (structure) {
    expect_folded(what, count);
    expect_folded(what, weighted);
  }
  if (dev) {
    expect_bytes(what, dev, count, want, sizeof want, 4);
    expect_bytes(what, dev, weighted, wantf, sizeof wantf, 4);
  }
}

static void test_closed_forms(void **state) {
  (void)state;
  const int64_t starts[][2] = {{0, 1}, {5, 1}, {-3, 1}, {11, -1}, {0, -1}};
  for (int k = LT; k <= EQ; k++)
    for (size_t s = 0; s < sizeof starts / sizeof *starts; s++) count_case(ctx, NULL, (cmp_kind)k, starts[s][0], starts[s][1], true);
  for (int d = 0; d < NDEVS; d++) {
    if (!dev_ok(DEVS[d], TKC_INT32, TKC_FLOAT32)) continue;
    tkc_ctx *c = tkc_ctx_new(DEVS[d]);
    for (int k = LT; k <= EQ; k++)
      for (size_t s = 0; s < sizeof starts / sizeof *starts; s++) count_case(c, DEVS[d], (cmp_kind)k, starts[s][0], starts[s][1], false);
    tkc_ctx_free(c);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_structure),
      cmocka_unit_test(test_embedding_values),
      cmocka_unit_test(test_index_select_gather_values),
      cmocka_unit_test(test_one_hot_matmul_values),
      cmocka_unit_test(test_variable_dims),
      cmocka_unit_test(test_closed_forms),
  };
  return cmocka_run_group_tests(tests, kb_setup, kb_teardown);
}
