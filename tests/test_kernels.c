/* Hand-built kernels (as tinygrad's lowerer makes them; built by tests/kernels.h) run on every available device — the CPU
 * (C compiler + dlopen + libffi) and INTERP — and compared with plain C reference loops: kernel structures (accumulators,
 * nested and gated ranges, vector loads and GEP, variables, composite kernels) and the program API's bad inputs. Single
 * ALU ops on every dtype (add, all cast pairs, bitcasts, division, shifts, bool logic, float math) are rows of
 * tests/test_backend_ops.c's ALU table. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include "kernels.h" /* the kernels (builders shared with test_ptx.c / test_cuda.c) */

/* every registered device that can run here (a device that can't says so and is skipped) */
#define FOR_DEVICES(dev)                                                                  \
  for (const char *const *dn_ = tkc_device_names(); *dn_; dn_++)                          \
    for (const char *dev = *dn_; dev; dev = NULL)                                         \
      if (!tkc_device_available(dev)) { printf("skipped on %s: unavailable\n", dev); } else

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
static double rnd_unit(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }

/* ---------------------------------------------------------------- typed element access */

static void put_f(void *p, tkc_dtype dt, size_t i, double f) {
  switch (dt) {
  case TKC_FLOAT32: ((float *)p)[i] = (float)f; break;
  case TKC_FLOAT64: ((double *)p)[i] = f; break;
  case TKC_FLOAT16: ((uint16_t *)p)[i] = ref_half_bits(f); break;
  case TKC_BFLOAT16: ((uint16_t *)p)[i] = k_bf16_bits((float)f); break;
  case TKC_BOOL: ((uint8_t *)p)[i] = f != 0; break;
  case TKC_UINT64: ((uint64_t *)p)[i] = (uint64_t)f; break; /* f >= 0 in the tests */
  case TKC_UINT32: ((uint32_t *)p)[i] = (uint32_t)f; break;
  case TKC_UINT16: ((uint16_t *)p)[i] = (uint16_t)f; break;
  case TKC_UINT8: ((uint8_t *)p)[i] = (uint8_t)f; break;
  default: k_put_i(p, dt, i, (int64_t)f); break;
  }
}

static void *alloc_elems(tkc_dtype dt, size_t n) { return calloc(n ? n : 1, tkc_dtype_size(dt)); }

/* random data suited to dt (halves kept small so float sums are exact before rounding) */
static void fill_random(void *p, tkc_dtype dt, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (tkc_dtype_is_float(dt)) put_f(p, dt, i, dt == TKC_FLOAT16 || dt == TKC_BFLOAT16 ? (rnd_unit() * 8 - 4) : (rnd_unit() * 200 - 100));
    else k_put_i(p, dt, i, (int64_t)rnd());
  }
}

static void assert_same_elems(const void *got, const void *want, tkc_dtype dt, size_t n, double tol, const char *what) {
  for (size_t i = 0; i < n; i++) {
    if (tkc_dtype_is_float(dt)) {
      double a = k_get_f(got, dt, i), b = k_get_f(want, dt, i);
      if (a == b || (isnan(a) && isnan(b))) continue;
      if (!(fabs(a - b) <= tol * fmax(1.0, fabs(b)))) {
        fprintf(stderr, "%s: %s element %zu: got %.9g want %.9g\n", what, tkc_dtype_name(dt), i, a, b);
        fail();
      }
    } else if (k_get_i(got, dt, i) != k_get_i(want, dt, i)) {
      fprintf(stderr, "%s: %s element %zu: got %lld want %lld\n", what, tkc_dtype_name(dt), i, (long long)k_get_i(got, dt, i), (long long)k_get_i(want, dt, i));
      fail();
    }
  }
}

/* ---------------------------------------------------------------- reductions with accumulators */

static void check_reduce(tkc_op op, tkc_dtype dt, double init) {
  const int rows = 5, cols = 7;
  void *a = alloc_elems(dt, (size_t)rows * cols), *want = alloc_elems(dt, (size_t)rows);
  fill_random(a, dt, (size_t)rows * cols);
  for (int i = 0; i < rows; i++) {
    double facc = init;
    uint64_t iacc = (uint64_t)(int64_t)init;
    for (int k = 0; k < cols; k++) {
      size_t j = (size_t)i * cols + k;
      if (tkc_dtype_is_float(dt)) facc = op == TKC_OP_ADD ? (double)(float)(facc + k_get_f(a, dt, j)) : fmax(facc, k_get_f(a, dt, j));
      else if (op == TKC_OP_ADD) iacc += (uint64_t)k_get_i(a, dt, j);
      else iacc = (uint64_t)((int64_t)iacc > k_get_i(a, dt, j) ? (int64_t)iacc : k_get_i(a, dt, j));
    }
    if (tkc_dtype_is_float(dt)) put_f(want, dt, (size_t)i, facc);
    else k_put_i(want, dt, (size_t)i, (int64_t)iacc);
  }
  FOR_DEVICES(dev) {
    tkc_graph *g = tkc_graph_new();
    tkc_uop *init_u = kb_reduce_init(g, dt, init);
    void *out = alloc_elems(dt, (size_t)rows);
    tkc_dtype dts[2] = {dt, dt};
    size_t ns[2] = {(size_t)rows, (size_t)rows * cols};
    void *host[2] = {out, a};
    tkc_status st = k_run(dev, g, kb_reduce_rows(g, op, dt, rows, cols, init_u), 2, dts, ns, host, NULL, 0);
    if (st) fprintf(stderr, "%s: %s\n", dev, tkc_last_error());
    assert_int_equal(st, TKC_OK);
    assert_same_elems(out, want, dt, (size_t)rows, 1e-5, dev);
    free(out);
    tkc_graph_free(g);
  }
  free(a);
  free(want);
}

static void test_sum_float(void **state) { (void)state; check_reduce(TKC_OP_ADD, TKC_FLOAT32, 0.0); }
static void test_sum_int_wraps(void **state) { (void)state; check_reduce(TKC_OP_ADD, TKC_INT32, 0.0); }
static void test_max_float(void **state) { (void)state; check_reduce(TKC_OP_MAX, TKC_FLOAT32, -INFINITY); }
static void test_max_int64(void **state) { (void)state; check_reduce(TKC_OP_MAX, TKC_INT64, -9.2e18); }

/* ---------------------------------------------------------------- nested ranges */

static void test_transpose_nested(void **state) {
  (void)state;
  const int R = 6, C = 5;
  float a[30], want[30];
  for (int i = 0; i < R * C; i++) a[i] = (float)(rnd_unit() * 10);
  for (int i = 0; i < R; i++)
    for (int j = 0; j < C; j++) want[j * R + i] = a[i * C + j];
  FOR_DEVICES(dev) {
    tkc_graph *g = tkc_graph_new();
    tkc_uop *sink = kb_transpose(g, R, C);
    float got[30] = {0};
    tkc_dtype dts[2] = {TKC_FLOAT32, TKC_FLOAT32};
    size_t ns[2] = {30, 30};
    void *host[2] = {got, a};
    assert_int_equal(k_run(dev, g, sink, 2, dts, ns, host, NULL, 0), TKC_OK);
    assert_memory_equal(got, want, sizeof want);
    tkc_graph_free(g);
  }
}

static void test_three_level_nest(void **state) {
  (void)state;
  const int B = 3, R = 4, C = 5, N = B * R * C;
  double a[60], want[60];
  for (int i = 0; i < N; i++) { a[i] = rnd_unit() * 4 - 2; want[i] = a[i] * 2.0 + 1.0; }
  FOR_DEVICES(dev) {
    tkc_graph *g = tkc_graph_new();
    tkc_uop *sink = kb_three_level(g, B, R, C);
    double got[60];
    tkc_dtype dts[2] = {TKC_FLOAT64, TKC_FLOAT64};
    size_t ns[2] = {60, 60};
    void *host[2] = {got, a};
    assert_int_equal(k_run(dev, g, sink, 2, dts, ns, host, NULL, 0), TKC_OK);
    assert_memory_equal(got, want, sizeof want);
    tkc_graph_free(g);
  }
}

/* ---------------------------------------------------------------- gated loads and stores */

/* out[i] = i >= 3 ? a[i-3] : 0  (a pad by 3), as a masked INDEX */
static void test_gated_load_pad(void **state) {
  (void)state;
  const int n = 10;
  float a[10], want[13];
  for (int i = 0; i < n; i++) a[i] = (float)(i + 1) * 1.5f;
  for (int i = 0; i < n + 3; i++) want[i] = i >= 3 ? a[i - 3] : 0.0f;
  FOR_DEVICES(dev) {
    tkc_graph *g = tkc_graph_new();
    tkc_uop *sink = kb_gated_load_pad(g, n);
    float got[13];
    memset(got, 0xff, sizeof got);
    tkc_dtype dts[2] = {TKC_FLOAT32, TKC_FLOAT32};
    size_t ns[2] = {13, 10};
    void *host[2] = {got, a};
    assert_int_equal(k_run(dev, g, sink, 2, dts, ns, host, NULL, 0), TKC_OK);
    assert_memory_equal(got, want, sizeof want);
    tkc_graph_free(g);
  }
}

/* out[i] = a[i] only where a[i] > 0 (a store under an IF); elsewhere out keeps its value */
static void test_gated_store(void **state) {
  (void)state;
  int32_t a[20], want[20];
  for (int i = 0; i < 20; i++) { a[i] = (int32_t)(rnd() % 21) - 10; want[i] = a[i] > 0 ? a[i] : -777; }
  FOR_DEVICES(dev) {
    tkc_graph *g = tkc_graph_new();
    tkc_uop *sink = kb_gated_store(g, 20);
    int32_t got[20];
    for (int i = 0; i < 20; i++) got[i] = -777;
    tkc_dtype dts[2] = {TKC_INT32, TKC_INT32};
    size_t ns[2] = {20, 20};
    void *host[2] = {got, a};
    assert_int_equal(k_run(dev, g, sink, 2, dts, ns, host, NULL, 0), TKC_OK);
    assert_memory_equal(got, want, sizeof want);
    tkc_graph_free(g);
  }
}

/* ---------------------------------------------------------------- where / cmp / bool logic */

static void test_where_cmp_bool(void **state) {
  (void)state;
  const int n = 24;
  float a[24], b[24], want[24];
  uint8_t wantb[24];
  for (int i = 0; i < n; i++) {
    a[i] = (float)(int)(rnd() % 7) - 3;
    b[i] = (float)(int)(rnd() % 7) - 3;
    int c = (a[i] < b[i]) && (a[i] != 0.0f);
    wantb[i] = (uint8_t)c;
    want[i] = c ? a[i] : b[i];
  }
  FOR_DEVICES(dev) {
    tkc_graph *g = tkc_graph_new();
    tkc_uop *sink = kb_where_cmp_bool(g, n);
    float got[24];
    uint8_t gotb[24];
    tkc_dtype dts[4] = {TKC_FLOAT32, TKC_BOOL, TKC_FLOAT32, TKC_FLOAT32};
    size_t ns[4] = {24, 24, 24, 24};
    void *host[4] = {got, gotb, a, b};
    assert_int_equal(k_run(dev, g, sink, 4, dts, ns, host, NULL, 0), TKC_OK);
    assert_memory_equal(got, want, sizeof want);
    assert_memory_equal(gotb, wantb, sizeof wantb);
    tkc_graph_free(g);
  }
}

/* ---------------------------------------------------------------- vector loads/stores, GEP */

/* out4[i] = a4[i] * (2,3,4,5) with float4 loads/stores, and rev[i] = a4[i] lanes reversed via GEP */
static void test_float4_load_store(void **state) {
  (void)state;
  const int n4 = 6;
  float a[24], want[24], wrev[24];
  for (int i = 0; i < 24; i++) a[i] = (float)(rnd_unit() * 10 - 5);
  for (int i = 0; i < n4; i++)
    for (int l = 0; l < 4; l++) { want[i * 4 + l] = a[i * 4 + l] * (float)(2 + l); wrev[i * 4 + l] = a[i * 4 + 3 - l]; }
  FOR_DEVICES(dev) {
    tkc_graph *g = tkc_graph_new();
    tkc_uop *sink = kb_float4(g, n4);
    float got[24], grev[24];
    tkc_dtype dts[3] = {TKC_FLOAT32, TKC_FLOAT32, TKC_FLOAT32};
    size_t ns[3] = {24, 24, 24};
    void *host[3] = {got, grev, a};
    tkc_status s = k_run(dev, g, sink, 3, dts, ns, host, NULL, 0);
    if (s) fprintf(stderr, "%s: %s\n", dev, tkc_last_error());
    assert_int_equal(s, TKC_OK);
    assert_memory_equal(got, want, sizeof want);
    assert_memory_equal(grev, wrev, sizeof wrev);
    tkc_graph_free(g);
  }
}

/* ---------------------------------------------------------------- symbolic sizes */

static void test_define_var_size(void **state) {
  (void)state;
  float a[64], want[64];
  for (int i = 0; i < 64; i++) a[i] = (float)i - 20.5f;
  FOR_DEVICES(dev) {
    for (int64_t nv = 1; nv <= 64; nv += 21) {
      tkc_graph *g = tkc_graph_new();
      tkc_uop *sink = kb_var_size(g);
      float got[64];
      for (int i = 0; i < 64; i++) { got[i] = -1.0f; want[i] = i < nv ? a[i] * 3.0f : -1.0f; }
      tkc_dtype dts[2] = {TKC_FLOAT32, TKC_FLOAT32};
      size_t ns[2] = {64, 64};
      void *host[2] = {got, a};
      assert_int_equal(k_run(dev, g, sink, 2, dts, ns, host, &nv, 1), TKC_OK);
      assert_memory_equal(got, want, sizeof want);
      tkc_graph_free(g);
    }
  }
}

/* out[i] = a[i*s + o] with two variables (passed sorted by name: o, s) */
static void test_define_var_stride(void **state) {
  (void)state;
  int16_t a[100], want[10];
  for (int i = 0; i < 100; i++) a[i] = (int16_t)(i * 7 - 300);
  const int64_t vars[2] = {5, 9}; /* o = 5, s = 9 */
  for (int i = 0; i < 10; i++) want[i] = a[i * 9 + 5];
  FOR_DEVICES(dev) {
    tkc_graph *g = tkc_graph_new();
    tkc_uop *sink = kb_var_stride(g);
    int16_t got[10];
    tkc_dtype dts[2] = {TKC_INT16, TKC_INT16};
    size_t ns[2] = {10, 100};
    void *host[2] = {got, a};
    assert_int_equal(k_run(dev, g, sink, 2, dts, ns, host, vars, 2), TKC_OK);
    assert_memory_equal(got, want, sizeof want);
    tkc_graph_free(g);
  }
}

/* ---------------------------------------------------------------- composite kernels */

static void test_matmul(void **state) {
  (void)state;
  enum { M = 3, K = 4, N = 5 };
  float a[M * K], b[K * N], want[M * N];
  for (int i = 0; i < M * K; i++) a[i] = (float)(int)(rnd() % 9) - 4;
  for (int i = 0; i < K * N; i++) b[i] = (float)(int)(rnd() % 9) - 4;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      float s = 0;
      for (int k = 0; k < K; k++) s += a[i * K + k] * b[k * N + j];
      want[i * N + j] = s;
    }
  FOR_DEVICES(dev) {
    tkc_graph *g = tkc_graph_new();
    tkc_uop *sink = kb_matmul(g, M, K, N);
    float got[M * N];
    tkc_dtype dts[3] = {TKC_FLOAT32, TKC_FLOAT32, TKC_FLOAT32};
    size_t ns[3] = {M * N, M * K, K * N};
    void *host[3] = {got, a, b};
    assert_int_equal(k_run(dev, g, sink, 3, dts, ns, host, NULL, 0), TKC_OK);
    assert_memory_equal(got, want, sizeof want); /* small integers: exact */
    tkc_graph_free(g);
  }
}

/* half data, float accumulation, half result: out = (half)sum((float)a[k]) */
static void test_half_sum_float_acc(void **state) {
  (void)state;
  uint16_t a[50], want[1];
  float s = 0;
  for (int i = 0; i < 50; i++) { a[i] = ref_half_bits(rnd_unit() * 4 - 2); s += (float)ref_half_value(a[i]); }
  want[0] = ref_half_bits(s);
  FOR_DEVICES(dev) {
    tkc_graph *g = tkc_graph_new();
    tkc_uop *sink = kb_half_sum(g, 50);
    uint16_t got[1];
    tkc_dtype dts[2] = {TKC_FLOAT16, TKC_FLOAT16};
    size_t ns[2] = {1, 50};
    void *host[2] = {got, a};
    assert_int_equal(k_run(dev, g, sink, 2, dts, ns, host, NULL, 0), TKC_OK);
    assert_int_equal(got[0], want[0]);
    tkc_graph_free(g);
  }
}

/* one loop, two accumulators: sum and max of each row */
static void test_two_accumulators(void **state) {
  (void)state;
  enum { R = 4, C = 9 };
  float a[R * C], ws[R], wm[R];
  for (int i = 0; i < R * C; i++) a[i] = (float)(int)(rnd() % 11) - 5;
  for (int i = 0; i < R; i++) {
    ws[i] = 0; wm[i] = -INFINITY;
    for (int k = 0; k < C; k++) { ws[i] += a[i * C + k]; wm[i] = fmaxf(wm[i], a[i * C + k]); }
  }
  FOR_DEVICES(dev) {
    tkc_graph *g = tkc_graph_new();
    tkc_uop *sink = kb_two_acc(g, R, C);
    float gs[R], gm[R];
    tkc_dtype dts[3] = {TKC_FLOAT32, TKC_FLOAT32, TKC_FLOAT32};
    size_t ns[3] = {R, R, R * C};
    void *host[3] = {gs, gm, a};
    assert_int_equal(k_run(dev, g, sink, 3, dts, ns, host, NULL, 0), TKC_OK);
    assert_memory_equal(gs, ws, sizeof ws);
    assert_memory_equal(gm, wm, sizeof wm);
    tkc_graph_free(g);
  }
}

/* ---------------------------------------------------------------- bad inputs */

static void test_bad_inputs(void **state) {
  (void)state;
  assert_null(tkc_device_get("NOPE"));
  assert_int_equal(tkc_last_status(), TKC_EDEVICE);
  assert_null(tkc_device_get(NULL));
  assert_int_equal(tkc_device_available("NOPE"), 0);
  assert_int_equal(tkc_device_available(NULL), 0);
  tkc_device *d = tkc_device_get("INTERP");
  assert_non_null(d);
  assert_null(tkc_buffer_new(NULL, TKC_FLOAT32, 4));
  assert_null(tkc_buffer_new(d, TKC_VOID, 4));
  assert_int_equal(tkc_last_status(), TKC_EDTYPE);
  assert_null(tkc_buffer_new(d, TKC_FLOAT32, SIZE_MAX / 2)); /* bytes overflow size_t */
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  assert_null(tkc_buffer_new_uninit(NULL, TKC_FLOAT32, 4));
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  assert_null(tkc_buffer_new_uninit(d, TKC_VOID, 4));
  assert_int_equal(tkc_last_status(), TKC_EDTYPE);
  assert_null(tkc_buffer_new_uninit(d, TKC_FLOAT32, SIZE_MAX / 2));
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "tkc_buffer_new_uninit"));
  tkc_buffer *zero = tkc_buffer_new(d, TKC_FLOAT32, 0); /* zero-size buffers are valid */
  assert_non_null(zero);
  assert_int_equal(tkc_buffer_nbytes(zero), 0);
  assert_int_equal(tkc_buffer_copyin(zero, NULL, 0), TKC_OK);
  float x[4] = {0};
  assert_int_equal(tkc_buffer_copyin(zero, x, sizeof x), TKC_EINVAL);
  assert_int_equal(tkc_buffer_copyin(NULL, x, 4), TKC_EINVAL);
  assert_int_equal(tkc_buffer_copyout(NULL, x, 4), TKC_EINVAL);
  tkc_buffer_free(NULL);
  tkc_program_free(NULL);

  tkc_graph *g = tkc_graph_new();
  tkc_uop *sink = kb_elementwise2(g, TKC_OP_ADD, TKC_FLOAT32, TKC_FLOAT32, 4);
  assert_null(tkc_program_new(NULL, g, sink, "k"));
  assert_null(tkc_program_new(d, NULL, sink, "k"));
  assert_null(tkc_program_new(d, g, NULL, "k"));
  assert_null(tkc_program_new(d, g, sink->src[0], "k")); /* not a SINK */
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  tkc_program *p = tkc_program_new(d, g, sink, NULL);
  assert_non_null(p);
  assert_string_equal(tkc_program_name(p), "kernel");
  assert_int_equal(tkc_program_nbufs(p), 3);
  assert_true(tkc_program_buf_is_output(p, 0));
  assert_false(tkc_program_buf_is_output(p, 1));
  assert_int_equal(tkc_program_ops(p, NULL), 4);       /* 4 float adds */
  assert_int_equal(tkc_program_mem(p, NULL), 3 * 4 * 4); /* 2 loads + 1 store of 4 floats */
  tkc_buffer *b[3] = {tkc_buffer_new(d, TKC_FLOAT32, 4), tkc_buffer_new(d, TKC_FLOAT32, 4), zero};
  assert_int_equal(tkc_program_launch(p, b, 2, NULL, 0), TKC_EINVAL); /* wrong buffer count */
  assert_int_equal(tkc_program_launch(NULL, b, 3, NULL, 0), TKC_EINVAL);
  assert_int_equal(tkc_program_launch(p, NULL, 3, NULL, 0), TKC_EINVAL);
  int64_t v = 1;
  assert_int_equal(tkc_program_launch(p, b, 3, &v, 1), TKC_EINVAL); /* wrong variable count */
  tkc_buffer *wrong = tkc_buffer_new(d, TKC_FLOAT64, 4);
  tkc_buffer *b2[3] = {b[0], b[1], wrong};
  assert_int_equal(tkc_program_launch(p, b2, 3, NULL, 0), TKC_EDTYPE);
  if (tkc_device_available("CPU")) { /* a buffer of another device */
    tkc_buffer *cpu = tkc_buffer_new(tkc_device_get("CPU"), TKC_FLOAT32, 4);
    tkc_buffer *b3[3] = {b[0], b[1], cpu};
    assert_int_equal(tkc_program_launch(p, b3, 3, NULL, 0), TKC_EINVAL);
    tkc_buffer_free(cpu);
  }
  /* the ctx still works after the failures */
  tkc_buffer *ok3[3] = {b[0], b[1], tkc_buffer_new(d, TKC_FLOAT32, 4)};
  assert_int_equal(tkc_program_launch(p, ok3, 3, NULL, 0), TKC_OK);
  tkc_buffer_free(ok3[2]);
  tkc_buffer_free(wrong);
  tkc_buffer_free(b[0]);
  tkc_buffer_free(b[1]);
  tkc_buffer_free(zero);
  tkc_program_free(p);

  /* a variable outside its bounds */
  tkc_uop *vs = kb_var_fill(g);
  tkc_program *pv = tkc_program_new(d, g, vs, "varkernel");
  assert_non_null(pv);
  assert_int_equal(tkc_program_nvars(pv), 1);
  assert_string_equal(tkc_program_var_name(pv, 0), "n");
  assert_null(tkc_program_var_name(pv, 1));
  tkc_buffer *ob = tkc_buffer_new(d, TKC_FLOAT32, 8);
  int64_t big = 9;
  assert_int_equal(tkc_program_launch(pv, &ob, 1, &big, 1), TKC_EINVAL);
  tkc_buffer_free(ob);
  tkc_program_free(pv);
  tkc_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sum_float),         cmocka_unit_test(test_sum_int_wraps),      cmocka_unit_test(test_max_float),
      cmocka_unit_test(test_max_int64),         cmocka_unit_test(test_transpose_nested),   cmocka_unit_test(test_three_level_nest),
      cmocka_unit_test(test_gated_load_pad),    cmocka_unit_test(test_gated_store),        cmocka_unit_test(test_where_cmp_bool),
      cmocka_unit_test(test_float4_load_store), cmocka_unit_test(test_define_var_size),    cmocka_unit_test(test_define_var_stride),
      cmocka_unit_test(test_matmul),            cmocka_unit_test(test_half_sum_float_acc), cmocka_unit_test(test_two_accumulators),
      cmocka_unit_test(test_bad_inputs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
