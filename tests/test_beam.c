/* Beam search over kernel opts (src/engine/beam.c) from the tensor API: with tkc_ctx_set_beam a
 * matmul, a conv and reductions are searched (a "search" progress report per kernel), and their
 * results are bit-identical to INTERP (integer-valued inputs: every order of the sums is exact). A
 * second ctx reuses the picks (kernel cache); TKC_NOOPT and INTERP search nothing; bad widths and
 * NULL are refused. A private TKC_CACHE_DIR keeps picks of earlier runs from skipping the search;
 * TKC_BEAM_BUDGET bounds each search. The cross-process reuse of picks is in test_disk_cache. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "tensor_ref.h"

typedef struct counted {
  int searches, compiles;
} counted;

static void count(const tkc_progress *p, void *user) {
  counted *c = user;
  if (!strcmp(p->stage, "search")) c->searches++;
  else c->compiles++;
}

/* integer-valued floats in [-3, 3] */
static tkc_tensor *ints(tkc_ctx *ctx, int ndim, const int64_t *shape, unsigned seed) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  float *v = malloc((size_t)n * sizeof *v);
  for (int64_t i = 0; i < n; i++) v[i] = (float)((int)(((seed = seed * 1103515245u + 12345u) >> 16) % 7) - 3);
  tkc_tensor *t = tkc_tensor_new(ctx, TKC_FLOAT32, ndim, shape, v);
  free(v);
  return t;
}

typedef tkc_tensor *(*workload)(tkc_ctx *ctx, int salt);

static tkc_tensor *w_matmul(tkc_ctx *ctx, int salt) {
  return tkc_matmul(ints(ctx, 2, (const int64_t[]){32 + salt, 48}, 1), ints(ctx, 2, (const int64_t[]){48, 40}, 2));
}
static tkc_tensor *w_conv(tkc_ctx *ctx, int salt) {
  return tkc_conv2d(ints(ctx, 4, (const int64_t[]){2, 4, 10 + salt, 12}, 3), ints(ctx, 4, (const int64_t[]){8, 4, 3, 3}, 4), NULL, 1, 1);
}
static tkc_tensor *w_reduce(tkc_ctx *ctx, int salt) {
  tkc_tensor *x = ints(ctx, 2, (const int64_t[]){24 + salt, 257}, 5);
  return tkc_add(tkc_sum(x, 1, (const int[]){1}, 1), tkc_max(x, 1, (const int[]){0}, 1)); /* each axis */
}

/* a reduce whose output is float8_e4m3fn (the search fills and compares fp8 buffers by value) */
static tkc_tensor *w_fp8(tkc_ctx *ctx, int salt) {
  tkc_tensor *x = tkc_cast(ints(ctx, 2, (const int64_t[]){16 + salt, 64}, 6), TKC_FLOAT8_E4M3FN);
  return tkc_cast(tkc_contiguous(tkc_sum(x, 1, (const int[]){1}, 1)), TKC_FLOAT32);
}

static const struct {
  const char *name;
  workload make;
} WORK[] = {{"matmul", w_matmul}, {"conv2d", w_conv}, {"reduce", w_reduce}, {"fp8 reduce", w_fp8}};

static float *values(tkc_tensor *t, size_t *n) {
  *n = t ? (size_t)tkc_numel(t) : 0;
  float *v = malloc(*n * sizeof *v);
  if (v && tkc_copy_out(t, v, *n * sizeof *v)) {
    free(v);
    v = NULL;
  }
  return v;
}

/* a private kernel cache (so no pick of an earlier run skips a search) in dir, and a budget of
 * `budget` seconds per search; undone by cache_drop */
static void cache_private(char *dir, size_t n, const char *budget) {
  snprintf(dir, n, "/tmp/tkc-test-beam-XXXXXX");
  TR_EXPECT(mkdtemp(dir) != NULL, "mkdtemp");
  setenv("TKC_CACHE_DIR", dir, 1);
  setenv("TKC_BEAM_BUDGET", budget, 1);
}

static void cache_drop(const char *dir) {
  unsetenv("TKC_BEAM_BUDGET");
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  TR_EXPECT(system(cmd) == 0, "rm %s", dir);
}

static void test_beam_matches_interp(void **state) {
  (void)state;
  tr_begin();
  char dir[256];
  cache_private(dir, sizeof dir, "4");
  static int salt = 1;
  FOR_EACH_DEVICE(dev, ctx) {
    tkc_ctx *ref = tkc_ctx_new("INTERP");
    counted c = {0, 0};
    bool searches = tkc_device_renderer(tkc_device_get(dev)) != NULL;
    TR_EXPECT(tkc_ctx_set_beam(ctx, 2) == TKC_OK && tkc_ctx_set_progress(ctx, count, &c) == TKC_OK, "%s: set_beam", dev);
    for (size_t w = 0; w < sizeof WORK / sizeof *WORK; w++) {
      int before = c.searches;
      size_t n, nr;
      float *got = values(WORK[w].make(ctx, salt), &n), *want = values(WORK[w].make(ref, salt), &nr);
      TR_EXPECT(got && want && n == nr, "%s: %s: %s", dev, WORK[w].name, tkc_last_error());
      TR_EXPECT(!got || !want || !memcmp(got, want, n * sizeof *got), "%s: %s: beam-searched kernels differ from INTERP", dev, WORK[w].name);
      TR_EXPECT(searches ? c.searches > before : c.searches == before, "%s: %s: %d searches", dev, WORK[w].name, c.searches - before);
      free(got), free(want);
    }
    /* the same kernels on a second ctx: picks and programs from the kernel cache, no search */
    tkc_ctx *again = tkc_ctx_new(dev);
    counted c2 = {0, 0};
    tkc_ctx_set_beam(again, 2);
    tkc_ctx_set_progress(again, count, &c2);
    for (size_t w = 0; w < sizeof WORK / sizeof *WORK; w++) {
      size_t n;
      float *got = values(WORK[w].make(again, salt), &n);
      TR_EXPECT(got != NULL, "%s: %s again", dev, WORK[w].name);
      free(got);
    }
    TR_EXPECT(c2.searches == 0 && c2.compiles == 0, "%s: second ctx: %d searches, %d compiles", dev, c2.searches, c2.compiles);
    tkc_ctx_free(again);
    tkc_ctx_free(ref);
    salt++;
  }
  cache_drop(dir);
  TR_END();
}

/* a kernel whose loop runs to a dim variable (a KV cache's length): searched with the variable at
 * its largest value (the search's buffers are laid out for it), and right at the bound values */
static void test_beam_with_variables(void **state) {
  (void)state;
  tr_begin();
  char dir[256];
  cache_private(dir, sizeof dir, "4");
  FOR_EACH_DEVICE(dev, ctx) {
    bool searches = tkc_device_renderer(tkc_device_get(dev)) != NULL;
    counted c = {0, 0};
    TR_EXPECT(tkc_ctx_set_beam(ctx, 2) == TKC_OK && tkc_ctx_set_progress(ctx, count, &c) == TKC_OK, "%s: set_beam", dev);
    int64_t len = tkc_dim_var(ctx, "len", 1, 64);
    tkc_tensor *x = ints(ctx, 2, (const int64_t[]){16, 64}, 7);
    float xs[16 * 64];
    TR_EXPECT(tkc_copy_out(x, xs, sizeof xs) == TKC_OK, "%s: x: %s", dev, tkc_last_error());
    const int64_t at[] = {37, 64, 1};
    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
      TR_EXPECT(tkc_dim_bind(ctx, len, at[k]) == TKC_OK, "%s: bind %lld", dev, (long long)at[k]);
      tkc_tensor *head = tkc_shrink(x, (const int64_t[]){0, 16, 0, len}), *s = tkc_sum(head, 1, (const int[]){1}, 0);
      float got[16];
      TR_EXPECT(s && tkc_copy_out(s, got, sizeof got) == TKC_OK, "%s: len %lld: %s", dev, (long long)at[k], tkc_last_error());
      for (int r = 0; r < 16; r++) {
        float want = 0;
        for (int64_t j = 0; j < at[k]; j++) want += xs[r * 64 + j];
        TR_EXPECT(got[r] == want, "%s: len %lld: row %d = %g, want %g", dev, (long long)at[k], r, got[r], want);
      }
      tkc_tensor_free(head), tkc_tensor_free(s);
    }
    TR_EXPECT(searches ? c.searches >= 1 : c.searches == 0, "%s: %d searches of the kernel with a variable", dev, c.searches);
    tkc_tensor_free(x);
  }
  cache_drop(dir);
  TR_END();
}

static void test_beam_settings(void **state) {
  (void)state;
  tr_begin();
  TR_EXPECT(tkc_ctx_set_beam(NULL, 2) == TKC_EINVAL, "NULL ctx");
  const char *dev = tkc_device_available("LLVM") ? "LLVM" : tkc_device_available("CPU") ? "CPU" : "INTERP";
  tkc_ctx *ctx = tkc_ctx_new(dev);
  TR_EXPECT(ctx != NULL, "ctx");
  TR_EXPECT(tkc_ctx_set_beam(ctx, -2) == TKC_EINVAL && tkc_ctx_set_beam(ctx, 65) == TKC_EINVAL, "width out of range");
  TR_EXPECT(strstr(tkc_last_error(), "[-1, 64]") != NULL, "message: %s", tkc_last_error());
  /* TKC_NOOPT: every opt off, the search too */
  counted c = {0, 0};
  setenv("TKC_NOOPT", "1", 1);
  tkc_ctx_set_beam(ctx, 2);
  tkc_ctx_set_progress(ctx, count, &c);
  size_t n;
  float *v = values(w_matmul(ctx, 40), &n);
  TR_EXPECT(v && c.searches == 0 && c.compiles == 1, "NOOPT: %d searches", c.searches);
  free(v);
  unsetenv("TKC_NOOPT");
  /* TKC_BEAM from the environment when the ctx says -1 */
  char dir[256];
  cache_private(dir, sizeof dir, "2");
  setenv("TKC_BEAM", "1", 1);
  tkc_ctx_set_beam(ctx, -1);
  c.searches = 0;
  v = values(w_reduce(ctx, 41), &n);
  TR_EXPECT(v && (strcmp(dev, "INTERP") ? c.searches >= 1 : c.searches == 0), "TKC_BEAM=1: %d searches", c.searches);
  free(v);
  tkc_ctx_set_beam(ctx, 0); /* 0: off whatever TKC_BEAM says */
  c.searches = 0;
  v = values(w_reduce(ctx, 42), &n);
  TR_EXPECT(v && c.searches == 0, "beam 0: %d searches", c.searches);
  free(v);
  unsetenv("TKC_BEAM");
  tkc_ctx_free(ctx);
  cache_drop(dir);
  TR_END();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_beam_matches_interp),
      cmocka_unit_test(test_beam_with_variables), cmocka_unit_test(test_beam_settings),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
