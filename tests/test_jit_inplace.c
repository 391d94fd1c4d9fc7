/* test_jit_inplace.c — capture and replay (tkc_jit, issue 25) when an output is an input or a view
 * of one (the input itself, a reshape, a permute, a shrink): every replay returns the new input's
 * data seen as the function says, never the capture's; outputs that do not depend on the inputs
 * (constants, tensors made inside the function) keep their values; inputs that were one buffer at
 * the capture must be one at a replay; a function that frees its input is a clear error, not a
 * crash; a replay's output fed back as the next input (x = jit(x), also through one array) is read
 * before it is overwritten and keeps its values. Each case runs on every device available here,
 * with new input data at each replay. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include "tkc.h"

static const char *const devs[] = {"CPU", "LLVM", "INTERP", "WEBGPU"};
enum { R = 3, C = 4, N = R * C, RUNS = 4 };

/* the input of run k: distinct for every run and element */
static void input_data(int k, float *x) {
  for (int i = 0; i < N; i++) x[i] = (float)(100 * (k + 1) + i);
}

static tkc_tensor *input(tkc_ctx *ctx, int k) {
  float x[N];
  input_data(k, x);
  tkc_tensor *t = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){R, C}, x);
  assert_non_null(t);
  return t;
}

static void expect(const char *what, tkc_tensor *t, const float *want, int n) {
  float got[N];
  assert_true(n <= N);
  if (tkc_copy_out(t, got, (size_t)n * sizeof(float))) fail_msg("%s: copy_out: %s", what, tkc_last_error());
  for (int i = 0; i < n; i++)
    if (got[i] != want[i]) fail_msg("%s: [%d] = %g, want %g", what, i, (double)got[i], (double)want[i]);
}

/* ---------------------------------------------------------------- the functions */

static tkc_status same_fn(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)ctx, (void)nin, (void)nout, (void)user;
  out[0] = in[0]; /* the input's own handle: tkc_jit_run hands out a handle of its own */
  return TKC_OK;
}

static tkc_status ref_fn(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)ctx, (void)nin, (void)nout, (void)user;
  out[0] = tkc_tensor_ref(in[0]);
  return out[0] ? TKC_OK : tkc_last_status();
}

static tkc_status reshape_fn(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)ctx, (void)nin, (void)nout, (void)user;
  out[0] = tkc_reshape(in[0], 2, (const int64_t[]){C, R});
  return out[0] ? TKC_OK : tkc_last_status();
}

static tkc_status permute_fn(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)ctx, (void)nin, (void)nout, (void)user;
  out[0] = tkc_permute(in[0], (const int[]){1, 0});
  return out[0] ? TKC_OK : tkc_last_status();
}

static tkc_status shrink_fn(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)ctx, (void)nin, (void)nout, (void)user;
  out[0] = tkc_shrink(in[0], (const int64_t[]){1, 3, 1, 3}); /* rows 1..2, columns 1..2 */
  return out[0] ? TKC_OK : tkc_last_status();
}

/* out[0] = in[0] * 2 (computed), out[1] = in[1] transposed (a view), out[2] = in[0] itself */
static tkc_status mix_fn(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)nin, (void)nout, (void)user;
  tkc_tensor *two = tkc_scalar(ctx, TKC_FLOAT32, 2);
  out[0] = tkc_mul(in[0], two);
  out[1] = tkc_permute(in[1], (const int[]){1, 0});
  out[2] = tkc_reshape(in[0], 2, (const int64_t[]){R, C});
  tkc_tensor_free(two);
  return out[0] && out[1] && out[2] ? TKC_OK : tkc_last_status();
}

/* outputs that do not depend on the input: a constant, a tensor made from host data, and in + 1 */
static const float HOST[N] = {5, 4, 3, 2, 1, 0, -1, -2, -3, -4, -5, -6};
static tkc_status consts_fn(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)nin, (void)nout, (void)user;
  tkc_tensor *one = tkc_scalar(ctx, TKC_FLOAT32, 1);
  out[0] = tkc_full(ctx, TKC_FLOAT32, 2, (const int64_t[]){R, C}, 7);
  out[1] = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){R, C}, HOST);
  out[2] = tkc_add(in[0], one);
  tkc_tensor_free(one);
  return out[0] && out[1] && out[2] ? TKC_OK : tkc_last_status();
}

/* ---------------------------------------------------------------- the expected values */

static void want_same(const float *x, float *y, int *n) {
  memcpy(y, x, N * sizeof *y);
  *n = N;
}

static void want_permute(const float *x, float *y, int *n) {
  for (int c = 0; c < C; c++)
    for (int r = 0; r < R; r++) y[c * R + r] = x[r * C + c];
  *n = N;
}

static void want_shrink(const float *x, float *y, int *n) {
  *n = 0;
  for (int r = 1; r < 3; r++)
    for (int c = 1; c < 3; c++) y[(*n)++] = x[r * C + c];
}

typedef struct one_case {
  const char *name;
  tkc_jit_fn fn;
  void (*want)(const float *x, float *y, int *n);
} one_case;

static const one_case cases[] = {
    {"the input's handle", same_fn, want_same},
    {"a second handle", ref_fn, want_same},
    {"a reshape", reshape_fn, want_same}, /* row-major data is the same */
    {"a permute", permute_fn, want_permute},
    {"a shrink", shrink_fn, want_shrink},
};

/* one output that is the input or a view of it: each run gives the new input's data */
static void test_passthrough_outputs(void **state) {
  (void)state;
  for (size_t d = 0; d < sizeof devs / sizeof devs[0]; d++) {
    if (!tkc_device_available(devs[d])) {
      printf("# skip %s: not available here\n", devs[d]);
      continue;
    }
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
      tkc_ctx *ctx = tkc_ctx_new(devs[d]);
      tkc_jit *j = tkc_jit_new(ctx, cases[c].fn, NULL);
      assert_non_null(j);
      tkc_tensor *prev = NULL; /* the previous run's output: a view of that run's input */
      float prev_want[N];
      int prev_n = 0;
      for (int k = 0; k < RUNS; k++) {
        char what[96];
        snprintf(what, sizeof what, "%s, %s, run %d", devs[d], cases[c].name, k);
        tkc_tensor *x = input(ctx, k), *out = NULL;
        if (tkc_jit_run(j, &x, 1, &out, 1)) fail_msg("%s: %s", what, tkc_last_error());
        assert_non_null(out);
        assert_true(out != x);
        float xs[N], want[N];
        int n;
        input_data(k, xs);
        cases[c].want(xs, want, &n);
        expect(what, out, want, n);
        if (prev) { /* still the data of its own run */
          expect(what, prev, prev_want, prev_n);
          tkc_tensor_free(prev);
        }
        prev = out, prev_n = n;
        memcpy(prev_want, want, sizeof want);
        tkc_tensor_free(x); /* the output keeps the data it views */
        expect(what, out, want, n);
      }
      tkc_tensor_free(prev);
      tkc_jit_free(j);
      tkc_ctx_free(ctx);
    }
  }
}

/* computed and passthrough outputs together, over two inputs */
static void test_mixed_outputs(void **state) {
  (void)state;
  for (size_t d = 0; d < sizeof devs / sizeof devs[0]; d++) {
    if (!tkc_device_available(devs[d])) continue;
    tkc_ctx *ctx = tkc_ctx_new(devs[d]);
    tkc_jit *j = tkc_jit_new(ctx, mix_fn, NULL);
    for (int k = 0; k < RUNS; k++) {
      char what[64];
      snprintf(what, sizeof what, "%s, mixed, run %d", devs[d], k);
      tkc_tensor *in[2] = {input(ctx, k), input(ctx, k + 10)}, *out[3] = {NULL, NULL, NULL};
      if (tkc_jit_run(j, in, 2, out, 3)) fail_msg("%s: %s", what, tkc_last_error());
      float a[N], b[N], want[N];
      int n;
      input_data(k, a), input_data(k + 10, b);
      for (int i = 0; i < N; i++) want[i] = 2 * a[i];
      expect(what, out[0], want, N);
      want_permute(b, want, &n);
      expect(what, out[1], want, n);
      expect(what, out[2], a, N);
      if (k) assert_int_equal(tkc_jit_kernels(j), 1); /* only the multiply is a kernel */
      for (int i = 0; i < 3; i++) tkc_tensor_free(out[i]);
      tkc_tensor_free(in[0]), tkc_tensor_free(in[1]);
    }
    tkc_jit_free(j);
    tkc_ctx_free(ctx);
  }
}

/* outputs that do not depend on the inputs keep their values on every replay */
static void test_constant_outputs(void **state) {
  (void)state;
  for (size_t d = 0; d < sizeof devs / sizeof devs[0]; d++) {
    if (!tkc_device_available(devs[d])) continue;
    tkc_ctx *ctx = tkc_ctx_new(devs[d]);
    tkc_jit *j = tkc_jit_new(ctx, consts_fn, NULL);
    for (int k = 0; k < RUNS; k++) {
      char what[64];
      snprintf(what, sizeof what, "%s, constants, run %d", devs[d], k);
      tkc_tensor *x = input(ctx, k), *out[3] = {NULL, NULL, NULL};
      if (tkc_jit_run(j, &x, 1, out, 3)) fail_msg("%s: %s", what, tkc_last_error());
      float xs[N], want[N];
      input_data(k, xs);
      for (int i = 0; i < N; i++) want[i] = 7;
      expect(what, out[0], want, N);
      expect(what, out[1], HOST, N);
      for (int i = 0; i < N; i++) want[i] = xs[i] + 1;
      expect(what, out[2], want, N);
      for (int i = 0; i < 3; i++) tkc_tensor_free(out[i]);
      tkc_tensor_free(x);
    }
    tkc_jit_free(j);
    tkc_ctx_free(ctx);
  }
}

/* out[0] = in[0] - in[1]: captured with one tensor as both inputs, a replay with two different
 * ones cannot tell which launch read which (TKC_EINVAL); the other way round is right */
static tkc_status add_fn(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)ctx, (void)nin, (void)nout, (void)user;
  out[0] = tkc_sub(in[0], in[1]);
  return out[0] ? TKC_OK : tkc_last_status();
}

static void test_aliased_inputs(void **state) {
  (void)state;
  for (size_t d = 0; d < sizeof devs / sizeof devs[0]; d++) {
    if (!tkc_device_available(devs[d])) continue;
    tkc_ctx *ctx = tkc_ctx_new(devs[d]);
    float a[N], b[N], want[N];
    input_data(0, a), input_data(1, b);
    /* captured with distinct inputs, replayed with one buffer for both: right */
    tkc_jit *j = tkc_jit_new(ctx, add_fn, NULL);
    tkc_tensor *x = input(ctx, 0), *y = input(ctx, 1), *out = NULL;
    assert_int_equal(tkc_jit_run(j, (tkc_tensor *[]){x, y}, 2, &out, 1), TKC_OK);
    for (int i = 0; i < N; i++) want[i] = a[i] - b[i];
    expect(devs[d], out, want, N);
    tkc_tensor_free(out);
    assert_int_equal(tkc_jit_run(j, (tkc_tensor *[]){y, y}, 2, &out, 1), TKC_OK);
    for (int i = 0; i < N; i++) want[i] = 0;
    expect(devs[d], out, want, N);
    tkc_tensor_free(out);
    tkc_jit_free(j);
    /* captured with one buffer for both: a replay with two is refused, with one it is right */
    j = tkc_jit_new(ctx, add_fn, NULL);
    tkc_tensor *x2 = tkc_tensor_ref(x);
    assert_int_equal(tkc_jit_run(j, (tkc_tensor *[]){x, x2}, 2, &out, 1), TKC_OK);
    expect(devs[d], out, want, N);
    tkc_tensor_free(out);
    out = NULL;
    assert_int_equal(tkc_jit_run(j, (tkc_tensor *[]){x, y}, 2, &out, 1), TKC_EINVAL);
    assert_null(out);
    assert_non_null(strstr(tkc_last_error(), "inputs 0 and 1"));
    assert_int_equal(tkc_jit_run(j, (tkc_tensor *[]){y, y}, 2, &out, 1), TKC_OK);
    expect(devs[d], out, want, N);
    tkc_tensor_free(out);
    tkc_jit_free(j);
    tkc_tensor_free(x), tkc_tensor_free(x2), tkc_tensor_free(y);
    tkc_ctx_free(ctx);
  }
}

/* a function that frees its input: a clear error, the caller's other tensors intact */
static tkc_status free_input_fn(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)ctx, (void)nout, (void)user;
  tkc_tensor *one = tkc_scalar(ctx, TKC_FLOAT32, 1);
  out[0] = tkc_add(in[nin - 1], one);
  tkc_tensor_free(one);
  tkc_tensor_free(in[nin - 1]);
  return out[0] ? TKC_OK : tkc_last_status();
}

static void test_function_frees_input(void **state) {
  (void)state;
  for (size_t d = 0; d < sizeof devs / sizeof devs[0]; d++) {
    if (!tkc_device_available(devs[d])) continue;
    tkc_ctx *ctx = tkc_ctx_new(devs[d]);
    tkc_jit *j = tkc_jit_new(ctx, free_input_fn, NULL);
    for (int k = 0; k < 2; k++) { /* a failed capture leaves the jit empty: the next run fails alike */
      tkc_tensor *in[2] = {input(ctx, 0), input(ctx, 1)}, *out = NULL;
      assert_int_equal(tkc_jit_run(j, in, 2, &out, 1), TKC_EINVAL);
      assert_non_null(strstr(tkc_last_error(), "freed its input 1"));
      assert_null(out);
      assert_int_equal(tkc_jit_kernels(j), 0);
      float a[N];
      input_data(0, a);
      expect(devs[d], in[0], a, N);
      tkc_tensor_free(in[0]);
      tkc_tensor_free(in[1]); /* freed already: a no-op */
    }
    tkc_jit_free(j);
    tkc_ctx_free(ctx);
  }
}

/* a training loop's x = jit(x): the replay's input is the jit's own output buffer, which the launch
 * writes while it reads the input (flip + add reads other elements than it writes) */
static tkc_status flip_add_fn(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)ctx, (void)nin, (void)nout, (void)user;
  tkc_tensor *f = tkc_flip(in[0], 1, (const int[]){1});
  out[0] = tkc_add(tkc_mul(f, tkc_scalar(ctx, TKC_FLOAT32, 2)), in[0]);
  out[1] = tkc_reshape(out[0], 1, (const int64_t[]){N}); /* a view of the computed output */
  tkc_tensor_free(f);
  return out[0] && out[1] ? TKC_OK : tkc_last_status();
}

static void test_output_fed_back(void **state) {
  (void)state;
  for (size_t d = 0; d < sizeof devs / sizeof devs[0]; d++) {
    if (!tkc_device_available(devs[d])) continue;
    tkc_ctx *ctx = tkc_ctx_new(devs[d]);
    tkc_scope_begin(ctx); /* frees the 2-constants fn leaves */
    tkc_jit *j = tkc_jit_new(ctx, flip_add_fn, NULL);
    float x[N], prev[N];
    input_data(0, x);
    tkc_tensor *t = input(ctx, 0), *t1 = NULL;
    for (int k = 0; k < RUNS + 2; k++) {
      char what[64];
      snprintf(what, sizeof what, "%s, fed back, run %d", devs[d], k);
      tkc_tensor *out[2] = {NULL, NULL};
      if (tkc_jit_run(j, &t, 1, out, 2)) fail_msg("%s: %s", what, tkc_last_error());
      memcpy(prev, x, sizeof x);
      for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++) x[r * C + c] = 2 * prev[r * C + C - 1 - c] + prev[r * C + c];
      expect(what, out[0], x, N);
      expect(what, out[1], x, N);
      expect(what, t, prev, N); /* the input (the last run's output) keeps its values */
      if (t1) tkc_tensor_free(t1);
      tkc_tensor_free(t);
      t = out[0], t1 = out[1];
    }
    tkc_tensor_free(t), tkc_tensor_free(t1);
    tkc_jit_free(j);
    tkc_scope_end(ctx);
    tkc_ctx_free(ctx);
  }
}

/* x = jit(x) with one array for the inputs and the outputs; bad calls leave out NULL */
static tkc_status flip_only_fn(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)ctx, (void)nin, (void)nout, (void)user;
  tkc_tensor *f = tkc_flip(in[0], 1, (const int[]){0});
  out[0] = tkc_sub(f, in[0]);
  tkc_tensor_free(f);
  return out[0] ? TKC_OK : tkc_last_status();
}

static void test_same_array_and_bad_calls(void **state) {
  (void)state;
  for (size_t d = 0; d < sizeof devs / sizeof devs[0]; d++) {
    if (!tkc_device_available(devs[d])) continue;
    tkc_ctx *ctx = tkc_ctx_new(devs[d]);
    tkc_jit *j = tkc_jit_new(ctx, flip_only_fn, NULL);
    float x[N], prev[N];
    input_data(2, x);
    tkc_tensor *t = input(ctx, 2);
    for (int k = 0; k < RUNS; k++) {
      char what[64];
      snprintf(what, sizeof what, "%s, x = jit(x), run %d", devs[d], k);
      tkc_tensor *old = t;
      if (tkc_jit_run(j, &t, 1, &t, 1)) fail_msg("%s: %s", what, tkc_last_error());
      assert_true(t != old);
      memcpy(prev, x, sizeof x);
      for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++) x[r * C + c] = prev[(R - 1 - r) * C + c] - prev[r * C + c];
      expect(what, t, x, N);
      expect(what, old, prev, N);
      tkc_tensor_free(old);
    }
    /* bad calls: nothing replayed, out left NULL, the jit still replays after them */
    tkc_tensor *out = t, *none = NULL, *two[2] = {t, t};
    assert_int_equal(tkc_jit_run(j, two, 2, &out, 1), TKC_EINVAL);
    assert_null(out);
    assert_int_equal(tkc_jit_run(j, &t, 1, two, 2), TKC_EINVAL);
    assert_null(two[0]), assert_null(two[1]);
    tkc_clear_error();
    assert_int_equal(tkc_jit_run(j, &none, 1, &out, 1), TKC_EINVAL);
    assert_int_equal(tkc_jit_run(j, NULL, 1, &out, 1), TKC_EINVAL);
    assert_int_equal(tkc_jit_run(j, &t, 1, NULL, 1), TKC_EINVAL);
    assert_int_equal(tkc_jit_run(j, &t, -1, &out, 1), TKC_EINVAL);
    tkc_tensor *small = tkc_full(ctx, TKC_FLOAT32, 2, (const int64_t[]){R, C - 1}, 1);
    assert_int_equal(tkc_jit_run(j, &small, 1, &out, 1), TKC_EINVAL);
    assert_null(out);
    assert_int_equal(tkc_jit_run(j, &t, 1, &out, 1), TKC_OK);
    memcpy(prev, x, sizeof x);
    for (int r = 0; r < R; r++)
      for (int c = 0; c < C; c++) x[r * C + c] = prev[(R - 1 - r) * C + c] - prev[r * C + c];
    expect(devs[d], out, x, N);
    tkc_tensor_free(out), tkc_tensor_free(t), tkc_tensor_free(small);
    tkc_jit_free(j);
    tkc_ctx_free(ctx);
  }
}

/* a view of an input with a variable-length dim: each replay sees the new input at the new length */
static tkc_status var_view_fn(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) {
  (void)ctx, (void)nin, (void)nout, (void)user;
  out[0] = tkc_permute(in[0], (const int[]){1, 0});
  out[1] = tkc_sum(in[0], 1, (const int[]){1}, 0);
  return out[0] && out[1] ? TKC_OK : tkc_last_status();
}

static void test_variable_length_view(void **state) {
  (void)state;
  for (size_t d = 0; d < sizeof devs / sizeof devs[0]; d++) {
    if (!tkc_device_available(devs[d])) continue;
    tkc_ctx *ctx = tkc_ctx_new(devs[d]);
    int64_t len = tkc_dim_var(ctx, "len", 1, 8);
    tkc_jit *j = tkc_jit_new(ctx, var_view_fn, NULL);
    const int lens[] = {3, 5, 1, 8, 2};
    for (int k = 0; k < 5; k++) {
      char what[64];
      snprintf(what, sizeof what, "%s, len %d, run %d", devs[d], lens[k], k);
      int L = lens[k];
      float x[8 * 2], want[8 * 2], sums[8];
      for (int i = 0; i < L * 2; i++) x[i] = (float)(10 * k + i);
      assert_int_equal(tkc_dim_bind(ctx, len, L), TKC_OK);
      tkc_tensor *t = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){len, 2}, x), *out[2] = {NULL, NULL};
      if (tkc_jit_run(j, &t, 1, out, 2)) fail_msg("%s: %s", what, tkc_last_error());
      for (int r = 0; r < L; r++) want[r] = x[2 * r], want[L + r] = x[2 * r + 1], sums[r] = x[2 * r] + x[2 * r + 1];
      float got[16];
      if (tkc_copy_out(out[0], got, (size_t)L * 2 * sizeof(float))) fail_msg("%s: %s", what, tkc_last_error());
      for (int i = 0; i < 2 * L; i++)
        if (got[i] != want[i]) fail_msg("%s: [%d] = %g, want %g", what, i, (double)got[i], (double)want[i]);
      if (tkc_copy_out(out[1], got, (size_t)L * sizeof(float))) fail_msg("%s: %s", what, tkc_last_error());
      for (int i = 0; i < L; i++)
        if (got[i] != sums[i]) fail_msg("%s: sum [%d] = %g, want %g", what, i, (double)got[i], (double)sums[i]);
      /* the view carries its input's binding: read at another one it is refused, not misread */
      assert_int_equal(tkc_dim_bind(ctx, len, L == 8 ? 7 : L + 1), TKC_OK);
      assert_int_equal(tkc_copy_out(out[0], got, sizeof got), TKC_EINVAL);
      tkc_tensor_free(out[0]), tkc_tensor_free(out[1]), tkc_tensor_free(t);
    }
    tkc_jit_free(j);
    tkc_ctx_free(ctx);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_passthrough_outputs), cmocka_unit_test(test_mixed_outputs),
                                     cmocka_unit_test(test_constant_outputs), cmocka_unit_test(test_aliased_inputs),
                                     cmocka_unit_test(test_function_frees_input), cmocka_unit_test(test_output_fed_back),
                                     cmocka_unit_test(test_same_array_and_bad_calls),                                     cmocka_unit_test(test_variable_length_view)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
