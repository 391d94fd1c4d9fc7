/* test_codegen_pipeline.c — the codegen driver (src/codegen/pipeline.c):
 *   the stages run one by one make the same kernel as tkc_lower_opts (lower + simplify) for the C,
 *   PTX and WGSL renderers and INTERP, with the heuristics' opts (lanes packed into vectors);
 *   an unknown stage name is refused; a stage missing its input says which;
 *   TKC_DEBUG_STAGE=simplify,render (set before the first kernel: it is read once) prints the kernel
 *   after exactly those stages;
 *   the kernel-key settings: PTX's cache_key follows the target arch, the C renderer has none, the
 *   heuristics' key follows TKC_SIMD_BYTES. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "codegen/pipeline.h"
#include "graph/tensor_internal.h"
#include "render/ptx.h"

/* the schedule of sum(a * 2, axis 1) + 1 over a (16, 32) float tensor on INTERP (nothing runs) */
static tkc_tensor *sample(tkc_ctx *ctx) {
  float a[16 * 32];
  for (int i = 0; i < 16 * 32; i++) a[i] = (float)(i % 7);
  tkc_tensor *t = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){16, 32}, a);
  return tkc_add(tkc_sum(tkc_mul(t, tkc_scalar(ctx, TKC_FLOAT32, 2)), 1, (const int[]){1}, 0), tkc_scalar(ctx, TKC_FLOAT32, 1));
}

static void test_stages_match_lowerer(void **state) {
  (void)state;
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  assert_non_null(ctx);
  tkc_tensor *y = sample(ctx);
  assert_non_null(y);
  tkc_schedule s;
  assert_int_equal(tkc_schedule_build(&s, y->node), TKC_OK);
  assert_true(s.n >= 1);
  const char *names[] = {"C", "PTX", "WGSL", NULL};
  for (int k = 0; k < 4; k++) {
    const tkc_renderer *r = names[k] ? tkc_renderer_get(names[k]) : NULL;
    if (names[k]) assert_non_null(r);
    tkc_codegen cg = {.g = s.g, .r = r, .ast = s.items[s.n - 1].ast};
    assert_int_equal(tkc_codegen_run(&cg, NULL, "opts"), TKC_OK);
    assert_true(strncmp(cg.name, "r_16_32", 7) == 0);
    tkc_uop *lowered = tkc_lower_opts(s.g, cg.ast, &cg.ks, r);
    assert_non_null(lowered);
    assert_int_equal(tkc_codegen_run(&cg, "lower", "lower"), TKC_OK);
    assert_int_equal(tkc_codegen_run(&cg, "simplify", "simplify"), TKC_OK);
    assert_ptr_equal(cg.sink, lowered); /* hash-consed: the same graph is the same pointer */
    assert_int_equal(tkc_codegen_run(&cg, "late_rules", NULL), TKC_OK);
    assert_true(cg.uops && cg.nuops > 0);
    if (r) assert_non_null(cg.source);
    else assert_null(cg.source); /* INTERP runs the UOps */
    tkc_codegen_clear(&cg);
  }
  tkc_schedule_free(&s);
  tkc_ctx_free(ctx);
}

static void test_bad_stage_names(void **state) {
  (void)state;
  tkc_codegen cg = {0};
  assert_int_equal(tkc_codegen_run(&cg, "lowering", NULL), TKC_EINTERNAL);
  assert_non_null(strstr(tkc_last_error(), "no stage \"lowering\""));
  assert_int_equal(tkc_codegen_run(&cg, NULL, "expand"), TKC_EINTERNAL);
  assert_int_equal(tkc_codegen_run(&cg, "linearize", "linearize"), TKC_EINTERNAL); /* no kernel yet */
  assert_non_null(strstr(tkc_last_error(), "the linearize stage has no kernel"));
}

/* TKC_DEBUG_STAGE was set in main: realizing a kernel prints it after simplify and render only */
static void test_debug_stage(void **state) {
  (void)state;
  const char *dev = tkc_device_available("CPU") ? "CPU" : "INTERP";
  char path[] = "/tmp/tkc_stage_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  fflush(stderr);
  int saved = dup(2);
  dup2(fd, 2);
  tkc_ctx *ctx = tkc_ctx_new(dev);
  tkc_tensor *y = ctx ? sample(ctx) : NULL;
  tkc_status st = y ? tkc_realize(y) : TKC_EINVAL;
  tkc_ctx_free(ctx);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  assert_int_equal(st, TKC_OK);
  FILE *f = fdopen(fd, "r");
  assert_non_null(f);
  rewind(f);
  static char text[1 << 20];
  size_t n = fread(text, 1, sizeof text - 1, f);
  text[n] = 0;
  fclose(f);
  unlink(path);
  assert_non_null(strstr(text, ": after simplify\n"));
  assert_non_null(strstr(text, ": after render\n"));
  assert_null(strstr(text, ": after lower\n"));
  assert_null(strstr(text, ": after linearize"));
  if (!strcmp(dev, "CPU")) assert_non_null(strstr(text, "void tk_r_16_32")); /* the C source after render */
}

static void test_kernel_key_settings(void **state) {
  (void)state;
  const tkc_renderer *ptx = tkc_renderer_get("PTX"), *c = tkc_renderer_get("C");
  assert_non_null(ptx);
  assert_non_null(c);
  assert_null(c->cache_key); /* nothing but the struct changes C's output */
  assert_non_null(ptx->cache_key);
  char k75[128], k90[128], again[128];
  assert_int_equal(tkc_ptx_set_arch("sm_75"), TKC_OK);
  assert_true(ptx->cache_key(k75, sizeof k75) > 0);
  assert_int_equal(tkc_ptx_set_arch("sm_90"), TKC_OK);
  ptx->cache_key(k90, sizeof k90);
  ptx->cache_key(again, sizeof again);
  assert_int_equal(tkc_ptx_set_arch(NULL), TKC_OK);
  assert_non_null(strstr(k75, "sm_75"));
  assert_string_not_equal(k75, k90);
  assert_string_equal(k90, again);
  char h1[64], h2[64];
  char *saved = getenv("TKC_SIMD_BYTES") ? strdup(getenv("TKC_SIMD_BYTES")) : NULL;
  setenv("TKC_SIMD_BYTES", "16", 1);
  tkc_heuristics_key(h1, sizeof h1);
  setenv("TKC_SIMD_BYTES", "64", 1);
  tkc_heuristics_key(h2, sizeof h2);
  if (saved) setenv("TKC_SIMD_BYTES", saved, 1);
  else unsetenv("TKC_SIMD_BYTES");
  free(saved);
  assert_string_equal(h1, "simd=16");
  assert_string_equal(h2, "simd=64");
}

int main(void) {
  setenv("TKC_DEBUG_STAGE", "simplify,render", 1); /* read once, at the first kernel built */
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_debug_stage),
      cmocka_unit_test(test_stages_match_lowerer),
      cmocka_unit_test(test_bad_stage_names),
      cmocka_unit_test(test_kernel_key_settings),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
