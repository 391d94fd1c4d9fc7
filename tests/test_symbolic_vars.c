/* test_symbolic_vars.c — variables (tkc_dim_var, issue 15): kernels read them as parameters, so one
 * compiled kernel serves every bound value, on every device; bad bindings and tokens are clear
 * errors. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include "tkc.h"

static const char *const devs[] = {"CPU", "LLVM", "WEBGPU", "CUDA", "INTERP"};
#define NDEVS (sizeof devs / sizeof devs[0])

static int64_t built(tkc_ctx *ctx) {
  tkc_stats s;
  assert_int_equal(tkc_ctx_stats(ctx, &s), TKC_OK);
  return s.kernels_built;
}

/* y = x * pos + pos and sum(y) for several values of pos: right values, one build per kernel */
static void test_var_as_value(void **state) {
  (void)state;
  for (size_t d = 0; d < NDEVS; d++) {
    if (!tkc_device_available(devs[d])) {
      printf("# skip %s: not available here\n", devs[d]);
      continue;
    }
    tkc_ctx *ctx = tkc_ctx_new(devs[d]);
    assert_non_null(ctx);
    int64_t pos = tkc_dim_var(ctx, "pos", 0, 100);
    assert_true(tkc_dim_is_var(pos));
    enum { N = 10 };
    float x[N];
    for (int i = 0; i < N; i++) x[i] = (float)i / 2 - 1;
    tkc_tensor *xt = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){N}, x);
    int64_t after_first = -1;
    const int values[] = {3, 0, 7, 100, 3};
    for (size_t k = 0; k < sizeof values / sizeof values[0]; k++) {
      assert_int_equal(tkc_dim_bind(ctx, pos, values[k]), TKC_OK);
      assert_int_equal(tkc_dim_value(ctx, pos), values[k]);
      tkc_tensor *p = tkc_cast(tkc_dim_scalar(ctx, pos), TKC_FLOAT32);
      tkc_tensor *y = tkc_add(tkc_mul(xt, p), p);
      tkc_tensor *s = tkc_sum(y, 0, NULL, 0);
      float got[N], sum = 0, want_sum = 0;
      if (tkc_copy_out(y, got, sizeof got) || tkc_copy_out(s, &sum, sizeof sum)) fail_msg("%s: %s", devs[d], tkc_last_error());
      for (int i = 0; i < N; i++) {
        float want = x[i] * (float)values[k] + (float)values[k];
        want_sum += want;
        if (fabsf(got[i] - want) > 1e-5f * (1 + fabsf(want))) fail_msg("%s: pos=%d: y[%d] = %g, want %g", devs[d], values[k], i, got[i], want);
      }
      if (fabsf(sum - want_sum) > 1e-4f * (1 + fabsf(want_sum))) fail_msg("%s: pos=%d: sum %g, want %g", devs[d], values[k], sum, want_sum);
      if (k == 0) after_first = built(ctx);
      else if (built(ctx) != after_first) fail_msg("%s: pos=%d built %lld more kernels", devs[d], values[k], (long long)(built(ctx) - after_first));
      tkc_tensor_free(p), tkc_tensor_free(y), tkc_tensor_free(s);
    }
    tkc_ctx_free(ctx);
  }
}

static void test_var_errors(void **state) {
  (void)state;
  tkc_ctx *ctx = tkc_ctx_new("INTERP"), *other = tkc_ctx_new("INTERP");
  int64_t n = tkc_dim_var(ctx, "n", 1, 16);
  assert_true(tkc_dim_is_var(n));
  assert_false(tkc_dim_is_var(16));
  assert_false(tkc_dim_is_var(-1));
  /* names and bounds */
  assert_int_equal(tkc_dim_var(ctx, "n", 1, 4), 0);
  assert_non_null(strstr(tkc_last_error(), "already"));
  assert_int_equal(tkc_dim_var(ctx, "2x", 1, 4), 0);
  assert_int_equal(tkc_dim_var(ctx, NULL, 1, 4), 0);
  assert_int_equal(tkc_dim_var(ctx, "a very long name that does not fit in 31", 1, 4), 0);
  assert_int_equal(tkc_dim_var(ctx, "m", 5, 4), 0);
  assert_int_equal(tkc_dim_var(ctx, "m", -1, 4), 0);
  assert_int_equal(tkc_dim_var(ctx, "m", 0, INT64_C(1) << 31), 0);
  assert_int_equal(tkc_dim_var(NULL, "m", 0, 4), 0);
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  /* binding */
  assert_int_equal(tkc_dim_bind(ctx, n, 0), TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "outside its bounds [1, 16]"));
  assert_int_equal(tkc_dim_bind(ctx, n, 17), TKC_EINVAL);
  assert_int_equal(tkc_dim_bind(other, n, 2), TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "another ctx"));
  assert_int_equal(tkc_dim_bind(ctx, 12, 2), TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "not a variable"));
  assert_int_equal(tkc_dim_bind(ctx, n + 5, 2), TKC_EINVAL); /* a made-up token */
  assert_int_equal(tkc_dim_bind(NULL, n, 2), TKC_EINVAL);
  assert_null(tkc_dim_scalar(other, n));
  /* unbound at realize */
  assert_int_equal(tkc_dim_value(ctx, n), -1);
  assert_non_null(strstr(tkc_last_error(), "not bound"));
  assert_int_equal(tkc_dim_value(ctx, 7), 7);
  tkc_tensor *s = tkc_add(tkc_dim_scalar(ctx, n), tkc_scalar(ctx, TKC_INT32, 1));
  assert_non_null(s);
  int32_t v = 0;
  assert_int_equal(tkc_copy_out(s, &v, sizeof v), TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "variable n is not bound"));
  assert_int_equal(tkc_dim_bind(ctx, n, 9), TKC_OK);
  assert_int_equal(tkc_copy_out(s, &v, sizeof v), TKC_OK); /* the same tensor, now bound */
  assert_int_equal(v, 10);
  tkc_ctx_free(ctx);
  tkc_ctx_free(other);
}


/* ---------------------------------------------------------------- variable-length dims */

enum { LMAX = 16, D = 4, M = 3 };
static float X[LMAX * D], A[M * LMAX], B[LMAX * D];

/* The kernel set over length L (a variable bound to L, or the plain number L): each result into out,
 * concatenated. */
static int64_t kernel_set(tkc_ctx *ctx, int64_t len, float *out, int *nout) {
  tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){LMAX, D}, X);
  tkc_tensor *a = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){M, LMAX}, A);
  tkc_tensor *b = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){LMAX, D}, B);
  tkc_tensor *xl = tkc_shrink(x, (const int64_t[]){0, len, 0, D});     /* (L, D) */
  tkc_tensor *al = tkc_shrink(a, (const int64_t[]){0, M, 0, len});     /* (M, L) */
  tkc_tensor *bl = tkc_shrink(b, (const int64_t[]){0, len, 0, D});     /* (L, D) */
  tkc_tensor *r[20];
  int n = 0;
  r[n++] = tkc_add(tkc_mul(xl, tkc_scalar(ctx, TKC_FLOAT32, 2)), tkc_scalar(ctx, TKC_FLOAT32, 1)); /* elementwise (L, D) */
  r[n++] = tkc_sum(xl, 1, (const int[]){0}, 0);                      /* reduce over L: (D) */
  r[n++] = tkc_matmul(al, bl);                                         /* inner dim L: (M, D) */
  r[n++] = tkc_softmax(tkc_transpose(xl, 0, 1), 1);                    /* over L: (D, L) */
  r[n++] = tkc_mean(xl, 1, (const int[]){0}, 0);                     /* (D) */
  r[n++] = tkc_sum(tkc_pad(xl, (const int64_t[]){2, 0, 1, 1}, 0), 1, (const int[]){1}, 0); /* (L+2) */
  r[n++] = tkc_max(tkc_shrink(xl, (const int64_t[]){1, len, 0, D}), 1, (const int[]){0}, 0); /* rows 1..L-1 */
  /* pads and shrinks with variable bounds: after a variable length, by a variable amount, from a
   * variable start, and cat along a variable axis (a KV cache append) */
  tkc_tensor *two = tkc_shrink(b, (const int64_t[]){0, 2, 0, D});     /* (2, D) */
  r[n++] = tkc_pad(xl, (const int64_t[]){0, 3, 1, 0}, 0.5);             /* (L+3, D+1) */
  r[n++] = tkc_sum(tkc_pad(xl, (const int64_t[]){1, 2, 0, 0}, 0), 1, (const int[]){0}, 0); /* over L+3 rows: (D) */
  r[n++] = tkc_pad(two, (const int64_t[]){len, 1, 0, 0}, -1);           /* (L+3, D) */
  r[n++] = tkc_pad(two, (const int64_t[]){0, len - 2, 0, 0}, 0);        /* (L, D) */
  r[n++] = tkc_shrink(x, (const int64_t[]){len - 2, len, 0, D});        /* rows L-2, L-1: (2, D) */
  r[n++] = tkc_sum(tkc_shrink(tkc_pad(x, (const int64_t[]){1, 0, 0, 0}, 3), (const int64_t[]){len - 1, len + 1, 0, D}), 1, (const int[]){1}, 0);
  r[n++] = tkc_cat(2, (tkc_tensor *[]){xl, two}, 0);                     /* (L+2, D) */
  r[n++] = tkc_sum(tkc_cat(2, (tkc_tensor *[]){two, xl}, 0), 1, (const int[]){0}, 0);
  r[n++] = tkc_expand(tkc_shrink(tkc_pad(xl, (const int64_t[]){0, 1, 0, 0}, 7), (const int64_t[]){len, len + 1, 0, D}), 2, (const int64_t[]){3, D});
  int64_t total = 0;
  for (int i = 0; i < n; i++) {
    if (!r[i]) fail_msg("len %lld: op %d: %s", (long long)len, i, tkc_last_error());
    int64_t k = tkc_numel(r[i]);
    if (k < 0 || tkc_copy_out(r[i], out + total, (size_t)k * sizeof(float))) fail_msg("op %d: %s", i, tkc_last_error());
    total += k;
  }
  *nout = n;
  return total;
}

/* every device: the set for L = 2, 5, 16, 1, 5 with one variable, against the same set with
 * plain lengths on INTERP; kernels are built for the first L only */
static void test_variable_lengths(void **state) {
  (void)state;
  for (int i = 0; i < LMAX * D; i++) X[i] = (float)((i * 7) % 11) / 4 - 1, B[i] = (float)((i * 5) % 13) / 6 - 1;
  for (int i = 0; i < M * LMAX; i++) A[i] = (float)((i * 3) % 7) / 3 - 1;
  tkc_ctx *ref = tkc_ctx_new("INTERP");
  for (size_t d = 0; d < NDEVS; d++) {
    if (!tkc_device_available(devs[d])) continue;
    tkc_ctx *ctx = tkc_ctx_new(devs[d]);
    int64_t L = tkc_dim_var(ctx, "L", 2, LMAX);
    const int lens[] = {2, 5, 16, 3, 5};
    int64_t first = -1;
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
      static float got[4096], want[4096];
      int n1, n2;
      assert_int_equal(tkc_dim_bind(ctx, L, lens[k]), TKC_OK);
      int64_t ng = kernel_set(ctx, L, got, &n1), nw = kernel_set(ref, lens[k], want, &n2);
      assert_int_equal(ng, nw);
      for (int64_t i = 0; i < ng; i++)
        if (!(fabsf(got[i] - want[i]) <= 1e-5f * (1 + fabsf(want[i])))) fail_msg("%s, L = %d: value %lld is %g, want %g", devs[d], lens[k], (long long)i, got[i], want[i]);
      if (k == 0) first = built(ctx);
      else if (built(ctx) != first) fail_msg("%s, L = %d: %lld kernels built again", devs[d], lens[k], (long long)(built(ctx) - first));
    }
    printf("# %s: %lld kernels, built once for 5 lengths\n", devs[d], (long long)first);
    tkc_ctx_free(ctx);
  }
  tkc_ctx_free(ref);
}

/* creation with a variable shape, reading shapes back, and what is refused */
static void test_variable_shapes_api(void **state) {
  (void)state;
  tkc_ctx *ctx = tkc_ctx_new("INTERP"), *other = tkc_ctx_new("INTERP");
  int64_t n = tkc_dim_var(ctx, "n", 0, 8), m = tkc_dim_var(ctx, "m", 1, 4), o = tkc_dim_var(other, "n", 0, 8);
  tkc_tensor *f = tkc_full(ctx, TKC_FLOAT32, 2, (const int64_t[]){n, 3}, 2.5);
  assert_non_null(f);
  assert_int_equal(tkc_dim(f, 0), n);
  assert_int_equal(tkc_dim(f, 1), 3);
  assert_int_equal(tkc_numel(f), -1); /* n unbound */
  float buf[64];
  assert_int_equal(tkc_copy_out(f, buf, 0), TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "not bound"));
  assert_int_equal(tkc_dim_bind(ctx, n, 5), TKC_OK);
  assert_int_equal(tkc_numel(f), 15);
  assert_int_equal(tkc_copy_out(f, buf, 15 * sizeof(float)), TKC_OK);
  for (int i = 0; i < 15; i++) assert_true(buf[i] == 2.5f);
  assert_int_equal(tkc_dim_bind(ctx, n, 0), TKC_OK); /* an empty length */
  assert_int_equal(tkc_numel(f), 0);
  tkc_tensor *s0 = tkc_sum(tkc_full(ctx, TKC_FLOAT32, 1, (const int64_t[]){n}, 1), 0, NULL, 0);
  assert_int_equal(tkc_copy_out(s0, buf, sizeof(float)), TKC_OK);
  assert_true(buf[0] == 0);
  assert_int_equal(tkc_dim_bind(ctx, n, 4), TKC_OK);
  /* data in at the bound size, n + 1 as a dim */
  float in[5 * 2];
  for (int i = 0; i < 10; i++) in[i] = (float)i;
  tkc_tensor *t = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){n + 1, 2}, in);
  assert_non_null(t);
  assert_int_equal(tkc_dim_value(ctx, tkc_dim(t, 0)), 5);
  tkc_tensor *e = tkc_expand(tkc_reshape(tkc_sum(t, 1, (const int[]){0}, 1), 2, (const int64_t[]){1, 2}), 2, (const int64_t[]){m, 2});
  assert_non_null(e);
  assert_int_equal(tkc_dim_bind(ctx, m, 3), TKC_OK);
  assert_int_equal(tkc_copy_out(e, buf, 6 * sizeof(float)), TKC_OK);
  for (int i = 0; i < 3; i++) assert_true(buf[2 * i] == 20 && buf[2 * i + 1] == 25);
  /* broadcasting a variable dim against a different one, or a fixed one */
  assert_null(tkc_add(tkc_full(ctx, TKC_FLOAT32, 1, (const int64_t[]){n}, 1), tkc_full(ctx, TKC_FLOAT32, 1, (const int64_t[]){m}, 1)));
  assert_int_equal(tkc_last_status(), TKC_ESHAPE);
  assert_null(tkc_add(tkc_full(ctx, TKC_FLOAT32, 1, (const int64_t[]){n}, 1), tkc_full(ctx, TKC_FLOAT32, 1, (const int64_t[]){8}, 1)));
  /* a token of another ctx, in a shape */
  assert_null(tkc_full(ctx, TKC_FLOAT32, 1, &o, 1));
  assert_non_null(strstr(tkc_last_error(), "another ctx"));
  /* a result computed for one binding, read under another: refused (its data has the old lengths);
   * a view of a buffer reads it at any binding */
  tkc_tensor *base = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){8}, (const float[]){1, 2, 3, 4, 5, 6, 7, 8});
  tkc_tensor *grown = tkc_pad(tkc_shrink(base, (const int64_t[]){0, n}), (const int64_t[]){0, 1}, -1), *view = tkc_shrink(base, (const int64_t[]){m - 1, m});
  assert_int_equal(tkc_dim_bind(ctx, n, 3), TKC_OK);
  assert_int_equal(tkc_copy_out(grown, buf, 4 * sizeof(float)), TKC_OK);
  assert_true(buf[0] == 1 && buf[2] == 3 && buf[3] == -1);
  tkc_tensor *part = tkc_shrink(grown, (const int64_t[]){0, 1}); /* a view of it carries its binding */
  assert_int_equal(tkc_copy_out(part, buf, sizeof(float)), TKC_OK);
  assert_true(buf[0] == 1);
  assert_int_equal(tkc_dim_bind(ctx, n, 2), TKC_OK);
  assert_int_equal(tkc_copy_out(part, buf, sizeof(float)), TKC_EINVAL);
  assert_int_equal(tkc_copy_out(grown, buf, 3 * sizeof(float)), TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "computed for n = 3, and n is 2 now"));
  tkc_tensor *twice = tkc_add(grown, grown);
  assert_non_null(twice);
  assert_int_equal(tkc_realize(twice), TKC_EINVAL); /* as a kernel input too */
  assert_int_equal(tkc_dim_bind(ctx, m, 2), TKC_OK);
  assert_int_equal(tkc_copy_out(view, buf, sizeof(float)), TKC_OK);
  assert_true(buf[0] == 2);
  assert_int_equal(tkc_dim_bind(ctx, m, 4), TKC_OK);
  assert_int_equal(tkc_copy_out(view, buf, sizeof(float)), TKC_OK);
  assert_true(buf[0] == 4);
  /* pads after and by a variable, variable shrink starts: the shapes they make, and what is refused */
  tkc_tensor *v = tkc_full(ctx, TKC_FLOAT32, 2, (const int64_t[]){n, 3}, 1), *w = tkc_full(ctx, TKC_FLOAT32, 2, (const int64_t[]){10, 3}, 1);
  tkc_tensor *pv = tkc_pad(v, (const int64_t[]){0, 1, 0, 0}, 0);
  assert_non_null(pv);
  assert_int_equal(tkc_dim(pv, 0), n + 1);
  assert_int_equal(tkc_dim(tkc_pad(w, (const int64_t[]){m, 2, 0, 0}, 0), 0), m + 12);
  assert_int_equal(tkc_dim(tkc_shrink(w, (const int64_t[]){m, m + 2, 0, 3}), 0), 2);
  assert_int_equal(tkc_dim(tkc_shrink(v, (const int64_t[]){n, n, 0, 3}), 0), 0);
  assert_null(tkc_pad(v, (const int64_t[]){n, 0, 0, 0}, 0)); /* n + n */
  assert_int_equal(tkc_last_status(), TKC_EUNSUPPORTED);
  assert_null(tkc_pad(w, (const int64_t[]){m, n, 0, 0}, 0)); /* m + n */
  assert_int_equal(tkc_last_status(), TKC_EUNSUPPORTED);
  assert_null(tkc_pad(v, (const int64_t[]){0, 0, n - 1, 0}, 0)); /* -1 for n = 0 */
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "negative padding (var0-1, 0)"));
  assert_null(tkc_pad(v, (const int64_t[]){0, INT64_C(1) << 21, 0, 0}, 0)); /* n + 2^21: past what a token holds */
  assert_non_null(strstr(tkc_last_error(), "within +-2^20"));
  assert_null(tkc_shrink(w, (const int64_t[]){m, 8, 0, 3})); /* 8 - m */
  assert_int_equal(tkc_last_status(), TKC_EUNSUPPORTED);
  assert_null(tkc_shrink(v, (const int64_t[]){m, m + 1, 0, 3})); /* m + 1 > n for some values */
  assert_int_equal(tkc_last_status(), TKC_ESHAPE);
  assert_non_null(strstr(tkc_last_error(), "for every value of its variables"));
  assert_null(tkc_shrink(v, (const int64_t[]){0, n + 1, 0, 3})); /* past the end for every value */
  assert_int_equal(tkc_last_status(), TKC_ESHAPE);
  assert_null(tkc_flip(v, 1, (const int[]){0}));
  assert_null(tkc_reshape(v, 1, (const int64_t[]){-1}));
  assert_int_equal(tkc_last_status(), TKC_ESHAPE);
  assert_non_null(tkc_reshape(v, 3, (const int64_t[]){n, 1, 3}));
  assert_non_null(tkc_reshape(v, 3, (const int64_t[]){1, n, -1}));
  tkc_ctx_free(ctx);
  tkc_ctx_free(other);
}

/* token + c holds a variable plus c only for |c| < 2^20: a token pushed past that (L + 2^20, which
 * once decoded as another variable M - 2^20) is refused wherever a shape or range takes it, never
 * read as another dim */
static void test_token_offset_limit(void **state) {
  (void)state;
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  int64_t big = INT64_C(1) << 20;
  int64_t L = tkc_dim_var(ctx, "L", 1, 10), Mv = tkc_dim_var(ctx, "M", big + 1, 2 * big);
  assert_true(L && Mv);
  assert_int_equal(tkc_dim_bind(ctx, L, 5), TKC_OK);
  assert_int_equal(tkc_dim_bind(ctx, Mv, big + 2), TKC_OK);
  const int64_t bad[] = {L + big, L + big + 5, L + 2 * big, L - big, L - big - 1, Mv + big, L + (INT64_C(1) << 31)};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    assert_null(tkc_full(ctx, TKC_FLOAT32, 1, &bad[k], 1));
    assert_int_equal(tkc_last_status(), TKC_EUNSUPPORTED);
    assert_non_null(strstr(tkc_last_error(), "a variable plus a constant past +-2^20"));
    assert_non_null(strstr(tkc_last_error(), k == 5 ? "M+" : "L")); /* names the variable it came from */
    assert_null(tkc_tensor_new(ctx, TKC_FLOAT32, 1, &bad[k], NULL));
    assert_int_equal(tkc_last_status(), TKC_EUNSUPPORTED);
    assert_int_equal(tkc_dim_value(ctx, bad[k]), -1);
    assert_int_not_equal(tkc_dim_bind(ctx, bad[k], 3), TKC_OK);
  }
  /* the largest offsets allowed still work: numel at the bound values */
  tkc_tensor *edge = tkc_full(ctx, TKC_FLOAT32, 1, (const int64_t[]){L + big - 1}, 1);
  assert_non_null(edge);
  assert_int_equal(tkc_numel(edge), 5 + big - 1);
  assert_int_equal(tkc_dim_value(ctx, Mv - big + 1), 3);
  /* reshape, expand, pad and shrink given such a token refuse it too */
  tkc_tensor *x = tkc_full(ctx, TKC_FLOAT32, 2, (const int64_t[]){L, 1}, 1);
  assert_non_null(x);
  assert_null(tkc_expand(x, 2, (const int64_t[]){L, L + big}));
  assert_int_equal(tkc_last_status(), TKC_EUNSUPPORTED);
  assert_null(tkc_expand(tkc_full(ctx, TKC_FLOAT32, 1, (const int64_t[]){1}, 1), 1, (const int64_t[]){L + big}));
  assert_int_equal(tkc_last_status(), TKC_EUNSUPPORTED);
  assert_null(tkc_reshape(x, 2, (const int64_t[]){L + big, 1}));
  assert_int_not_equal(tkc_last_status(), TKC_OK);
  assert_null(tkc_pad(x, (const int64_t[]){0, 0, L + big, 0}, 0));
  assert_int_equal(tkc_last_status(), TKC_EUNSUPPORTED);
  assert_null(tkc_shrink(tkc_full(ctx, TKC_FLOAT32, 1, (const int64_t[]){8}, 1), (const int64_t[]){0, L + big}));
  assert_int_equal(tkc_last_status(), TKC_EUNSUPPORTED);
  tkc_ctx_free(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_var_as_value), cmocka_unit_test(test_var_errors),
                                     cmocka_unit_test(test_variable_lengths), cmocka_unit_test(test_variable_shapes_api),
                                     cmocka_unit_test(test_token_offset_limit)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
