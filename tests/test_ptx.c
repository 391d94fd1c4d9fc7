/* The PTX renderer, checked without a GPU:
 *  - every kernel of the hand-built suite (tests/kernels.h: the kernels of test_kernels.c, their
 *    GPU-style variants with launch indices, shared memory + barrier and tensor-core kernels) is
 *    rendered to PTX and assembled with ptxas for sm_75, sm_80 and sm_90 (ptxas found on PATH or in
 *    /usr/local/cuda/bin; "skipped: no ptxas" only when neither has it), and so is every kernel a
 *    sweep of tensor-API expressions (every op on every dtype, reductions, movement, composites)
 *    schedules and lowers for PTX (sm_80, sm_90). Zero ptxas errors.
 *  - golden checks on the PTX of a few kernels (vector load, gated load, shared memory + barrier,
 *    WMMA, headers, parameters, loops);
 *  - what fails must fail clearly: TKC_EUNSUPPORTED naming op/dtype/backend for what PTX cannot
 *    express, TKC_EINVAL for bad names and targets, and the CUDA device's error paths that can run
 *    here (no driver, the toolkit's stub libcuda).
 * ptxas runs as a subprocess with its output in a temporary file, shown only when it fails. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "codegen/pipeline.h"
#include "graph/tensor_internal.h"
#include "kernels.h"
#include "ptxas_run.h"
#include "render/ptx.h"
#include "runtime/cuda.h"
#include "tkc.h"

/* ---------------------------------------------------------------- rendering without a device */

/* The codegen pipeline's last stages (src/codegen/pipeline.c: simplify, render_prep, the renderer's
 * rules, linearize, render) for the PTX renderer, without a device. Malloc'ed PTX or NULL. */
static char *ptx_of(tkc_graph *g, tkc_uop *sink, const char *name) {
  const tkc_renderer *r = tkc_renderer_get("PTX");
  return r ? tkc_codegen_source(sink, r, name) : NULL;
}

/* ---------------------------------------------------------------- 1: the suite assembles */

/* the part of a rendered kernel from ".visible .entry" on (modules are joined under one header) */
static const char *entry_of(const char *src) {
  const char *e = strstr(src, ".visible .entry");
  return e ? e : src;
}

static void check_arch(const char *arch, int sm) {
  assert_int_equal(tkc_ptx_set_arch(arch), TKC_OK);
  char *module = NULL, **srcs = NULL, **names = NULL;
  size_t mlen = 0, nk = 0;
  int unexpected = 0, need_newer = 0;
  for (int i = 0;; i++) {
    tkc_graph *g = tkc_graph_new();
    kspec s;
    if (!kb_case(i, g, &s)) { tkc_graph_free(g); break; }
    if (!s.sink) { tkc_graph_free(g); continue; }
    char *src = ptx_of(g, s.sink, s.name);
    if (s.min_sm > sm) { /* tensor-core shapes a target lacks must be refused, clearly */
      if (src || tkc_last_status() != TKC_EUNSUPPORTED || !strstr(tkc_last_error(), "sm_80")) {
        printf("%s on %s: expected TKC_EUNSUPPORTED naming sm_80, got %s\n", s.name, arch, src ? "PTX" : tkc_last_error());
        unexpected++;
      }
      need_newer++;
      tkc_free(src);
      tkc_graph_free(g);
      continue;
    }
    if (!src) {
      printf("%s on %s: %s\n", s.name, arch, tkc_last_error());
      unexpected++;
      tkc_graph_free(g);
      continue;
    }
    const char *body = nk ? entry_of(src) : src;
    size_t bl = strlen(body);
    char *m = realloc(module, mlen + bl + 2);
    char **ns = realloc(srcs, (nk + 1) * sizeof *srcs), **nn = ns ? realloc(names, (nk + 1) * sizeof *names) : NULL;
    assert_non_null(m);
    module = m;
    assert_non_null(ns);
    srcs = ns;
    assert_non_null(nn);
    names = nn;
    memcpy(module + mlen, body, bl);
    mlen += bl;
    module[mlen++] = '\n';
    module[mlen] = 0;
    srcs[nk] = src;
    names[nk] = strdup(s.name);
    nk++;
    tkc_graph_free(g);
  }
  assert_int_equal(unexpected, 0);
  assert_true(nk > 150);
  char *log = NULL;
  int rc = ptxas_run(module, arch, &log);
  int bad = 0;
  if (rc != 0) { /* find the kernels ptxas rejects, one by one */
    printf("ptxas -arch=%s rejected the suite module (exit %d):\n%s\n", arch, rc, log ? log : "");
    for (size_t k = 0; k < nk; k++) {
      char *l1 = NULL;
      if (ptxas_run(srcs[k], arch, &l1) != 0) {
        printf("---- %s (%s):\n%s\n%s\n", names[k], arch, l1 ? l1 : "", srcs[k]);
        bad++;
      }
      free(l1);
    }
  }
  printf("ptxas -arch=%s: %zu kernels assembled, %d rejected, %d refused as needing a newer target\n", arch, nk - (size_t)bad,
         rc ? bad : 0, need_newer);
  free(log);
  for (size_t k = 0; k < nk; k++) tkc_free(srcs[k]), free(names[k]);
  free(srcs);
  free(names);
  free(module);
  assert_int_equal(tkc_ptx_set_arch(NULL), TKC_OK);
  assert_int_equal(rc, 0);
}

static int have_ptxas(void) {
  if (ptxas_path()) return 1;
  printf("skipped: no ptxas (not on PATH, not in /usr/local/cuda/bin)\n");
  return 0;
}

static void test_suite_sm80(void **state) { (void)state; if (have_ptxas()) check_arch("sm_80", 80); }
static void test_suite_sm90(void **state) { (void)state; if (have_ptxas()) check_arch("sm_90", 90); }
static void test_suite_sm75(void **state) { (void)state; if (have_ptxas()) check_arch("sm_75", 75); }

/* ---------------------------------------------------------------- 1b: tensor-API kernels */

typedef struct tmodule {
  char *s;
  size_t len;
  int kernels, exprs, failed;
} tmodule;

/* appends the PTX kernels of t (lowered for the PTX renderer) to m, entries renamed e<N>_<kernel name> */
static void add_tensor(tmodule *m, tkc_tensor *t, const char *what) {
  if (!t) return; /* the tensor API refused the expression: not a renderer matter */
  char *src = tkc_kernels_source(t, "PTX");
  m->exprs++;
  if (!src) {
    printf("tensor %s: %s\n", what, tkc_last_error());
    m->failed++;
    return;
  }
  for (const char *e = strstr(src, ".visible .entry "); e;) {
    const char *next = strstr(e + 1, ".visible .entry ");
    size_t len = next ? (size_t)(next - e) : strlen(e);
    /* the piece up to the next entry may end in the next kernel's header: cut at its comment */
    const char *hdr = strstr(e, "\n//");
    if (hdr && (!next || hdr < next)) len = (size_t)(hdr - e) + 1;
    char prefix[160];
    int pl = snprintf(prefix, sizeof prefix, "%s.visible .entry e%d_", m->len ? "" : ".version 7.0\n.target TARGET\n.address_size 64\n\n", m->exprs);
    char *ns = realloc(m->s, m->len + (size_t)pl + len + 2);
    assert_non_null(ns);
    m->s = ns;
    memcpy(m->s + m->len, prefix, (size_t)pl);
    m->len += (size_t)pl;
    const char *body = e + strlen(".visible .entry ");
    len -= (size_t)(body - e);
    memcpy(m->s + m->len, body, len);
    m->len += len;
    m->s[m->len++] = '\n';
    m->s[m->len] = 0;
    m->kernels++;
    e = next;
  }
  tkc_free(src);
}

static void tensor_sweep(tkc_ctx *ctx, tmodule *m) {
  int64_t s23[2] = {2, 3}, s3[1] = {3}, s45[2] = {4, 5};
  char what[96];
  for (int d = 0; d < TKC_VOID; d++) {
    tkc_dtype dt = (tkc_dtype)d;
    tkc_tensor *a = tkc_full(ctx, dt, 2, s23, 1), *b = tkc_full(ctx, dt, 1, s3, 2);
    int ax1 = 1, ax0 = 0;
    struct { const char *n; tkc_tensor *t; } ops[] = {
        {"add", tkc_add(a, b)},       {"sub", tkc_sub(a, b)},        {"mul", tkc_mul(a, b)},         {"div", tkc_div(a, b)},
        {"idiv", tkc_idiv(a, b)},     {"mod", tkc_mod(a, b)},        {"maximum", tkc_maximum(a, b)}, {"minimum", tkc_minimum(a, b)},
        {"lt", tkc_lt(a, b)},         {"eq", tkc_eq(a, b)},          {"ne", tkc_ne(a, b)},           {"ge", tkc_ge(a, b)},
        {"and", tkc_and(a, b)},       {"or", tkc_or(a, b)},          {"xor", tkc_xor(a, b)},         {"shl", tkc_shl(a, b)},
        {"shr", tkc_shr(a, b)},       {"where", tkc_where(tkc_lt(a, b), a, b)}, {"neg", tkc_neg(a)}, {"abs", tkc_abs(a)},
        {"sum", tkc_sum(a, 0, NULL, 0)}, {"max1", tkc_max(a, 1, &ax1, 1)}, {"min0", tkc_min(a, 1, &ax0, 0)}, {"mean", tkc_mean(a, 1, &ax1, 0)},
        {"sqrt", tkc_sqrt(a)},        {"exp", tkc_exp(a)},           {"log2", tkc_log2(a)},          {"sin", tkc_sin(a)},
        {"sigmoid", tkc_sigmoid(a)},  {"relu", tkc_relu(a)},         {"recip", tkc_recip(a)},        {"pow", tkc_pow(a, b)},
        {"dot4", tkc_dot4(a, b)},
    };
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
      snprintf(what, sizeof what, "%s(%s)", ops[i].n, tkc_dtype_name(dt));
      add_tensor(m, ops[i].t, what);
    }
    for (int t = 0; t < TKC_VOID; t++) {
      snprintf(what, sizeof what, "cast(%s -> %s)", tkc_dtype_name(dt), tkc_dtype_name((tkc_dtype)t));
      add_tensor(m, tkc_cast(tkc_add(a, b), (tkc_dtype)t), what);
    }
  }
  tkc_tensor *x = tkc_arange(ctx, TKC_FLOAT32, 0, 20, 1), *y = tkc_reshape(x, 2, s45);
  int perm[2] = {1, 0}, flip0 = 0, last = 1;
  int64_t pads[4] = {1, 2, 0, 3}, rng[4] = {1, 3, 0, 4}, s345[3] = {3, 4, 5}, e245[3] = {2, 4, 5};
  int64_t sx[4] = {1, 2, 5, 5}, sw[4] = {3, 2, 3, 3}, sb[1] = {3}, sa[3] = {2, 3, 4}, sbm[3] = {2, 4, 5};
  struct { const char *n; tkc_tensor *t; } comp[] = {
      {"permute", tkc_contiguous(tkc_permute(y, perm))},  {"pad", tkc_pad(y, pads, -1.5)},
      {"shrink", tkc_contiguous(tkc_shrink(y, rng))},     {"flip", tkc_contiguous(tkc_flip(y, 1, &flip0))},
      {"expand", tkc_contiguous(tkc_expand(tkc_reshape(y, 3, (int64_t[]){1, 4, 5}), 3, s345))},
      {"matmul", tkc_matmul(y, tkc_transpose(y, 0, 1))}, {"softmax", tkc_softmax(y, 1)}, {"log_softmax", tkc_log_softmax(y, 0)},
      {"conv2d", tkc_conv2d(tkc_full(ctx, TKC_FLOAT32, 4, sx, 0.5), tkc_full(ctx, TKC_FLOAT32, 4, sw, 0.25), tkc_full(ctx, TKC_FLOAT32, 1, sb, 1), 1, 1)},
      {"bmm", tkc_matmul(tkc_full(ctx, TKC_FLOAT32, 3, sa, 1), tkc_full(ctx, TKC_FLOAT32, 3, sbm, 2))},
      {"half_matmul", tkc_matmul(tkc_full(ctx, TKC_FLOAT16, 3, sa, 1), tkc_full(ctx, TKC_FLOAT16, 3, sbm, 2))},
      {"tanh", tkc_tanh(y)}, {"cos", tkc_cos(y)}, {"log", tkc_log(y)}, {"exp2", tkc_exp2(y)},
      {"sum_keepdim", tkc_sum(tkc_expand(tkc_reshape(y, 3, (int64_t[]){1, 4, 5}), 3, e245), 1, &last, 1)},
      {"rand", tkc_add(tkc_rand(ctx, TKC_FLOAT32, 2, s45, 7), y)},
      {"long_sum", tkc_sum(tkc_full(ctx, TKC_FLOAT32, 1, (int64_t[]){1000003}, 1), 0, NULL, 0)},
      {"long_max_rows", tkc_max(tkc_full(ctx, TKC_FLOAT16, 2, (int64_t[]){3, 70000}, 1), 1, &last, 0)},
      {"tc_half_matmul", tkc_matmul(tkc_full(ctx, TKC_FLOAT16, 3, (int64_t[]){2, 32, 64}, 1), tkc_full(ctx, TKC_FLOAT16, 3, (int64_t[]){2, 64, 16}, 1))},
      {"tc_bf16_matmul", tkc_matmul(tkc_full(ctx, TKC_BFLOAT16, 2, (int64_t[]){16, 32}, 1), tkc_full(ctx, TKC_BFLOAT16, 2, (int64_t[]){32, 24}, 1))},
      {"tc_fused_cast_matmul", tkc_matmul(tkc_cast(tkc_rand(ctx, TKC_FLOAT32, 3, (int64_t[]){2, 32, 32}, 3), TKC_FLOAT16),
                                          tkc_cast(tkc_rand(ctx, TKC_FLOAT32, 3, (int64_t[]){2, 32, 16}, 4), TKC_FLOAT16))},
      {"tc_fused_cast_bf16_matmul", tkc_matmul(tkc_cast(tkc_rand(ctx, TKC_FLOAT32, 2, (int64_t[]){16, 32}, 5), TKC_BFLOAT16),
                                               tkc_cast(tkc_rand(ctx, TKC_FLOAT32, 2, (int64_t[]){32, 24}, 6), TKC_BFLOAT16))},
      {"long_matmul", tkc_matmul(tkc_full(ctx, TKC_FLOAT32, 2, (int64_t[]){3, 70000}, 1), tkc_full(ctx, TKC_FLOAT32, 2, (int64_t[]){70000, 5}, 1))},
  };
  for (size_t i = 0; i < sizeof comp / sizeof *comp; i++) add_tensor(m, comp[i].t, comp[i].n);
  /* variable lengths (issue 15): loops and launch grids to a DEFINE_VAR parameter */
  int64_t L = tkc_dim_var(ctx, "L", 1, 64);
  tkc_tensor *rows = tkc_full(ctx, TKC_FLOAT32, 2, (int64_t[]){64, 5}, 0.5), *cols = tkc_full(ctx, TKC_FLOAT32, 2, (int64_t[]){3, 64}, 2);
  tkc_tensor *rl = tkc_shrink(rows, (int64_t[]){0, L, 0, 5}), *cl = tkc_shrink(cols, (int64_t[]){0, 3, 0, L});
  int first = 0;
  struct { const char *n; tkc_tensor *t; } var[] = {
      {"var_elementwise", tkc_exp(rl)}, {"var_softmax", tkc_softmax(rl, 0)}, {"var_matmul", tkc_matmul(cl, rl)},
      {"var_mean", tkc_mean(rl, 1, &first, 0)}, {"var_scalar", tkc_mul(y, tkc_cast(tkc_dim_scalar(ctx, L), TKC_FLOAT32))},
      /* masks and offsets that depend on the variable */
      {"var_pad_after", tkc_pad(rl, (int64_t[]){0, 2, 0, 0}, 1)}, {"var_shrink_start", tkc_exp(tkc_shrink(rows, (int64_t[]){L - 1, L, 0, 5}))},
      {"var_cat", tkc_cat(2, (tkc_tensor *[]){rl, tkc_shrink(rows, (int64_t[]){0, 1, 0, 5})}, 0)},
  };
  for (size_t i = 0; i < sizeof var / sizeof *var; i++) add_tensor(m, var[i].t, var[i].n);
}

/* a float32 sum from the tensor API runs across a workgroup: shared memory and bar.sync */
static void test_tensor_api_shared_sum(void **state) {
  (void)state;
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  assert_non_null(ctx);
  tkc_tensor *s = tkc_sum(tkc_full(ctx, TKC_FLOAT32, 1, (int64_t[]){1000003}, 1), 0, NULL, 0);
  char *src = tkc_kernels_source(s, "PTX");
  assert_non_null(src);
  if (!strstr(src, ".shared .align") || !strstr(src, "bar.sync 0") || !strstr(src, "st.shared.f32") || !strstr(src, "%tid.x")) {
    printf("%s\n", src);
    fail_msg("the sum's PTX lacks shared memory, st.shared, bar.sync or %%tid.x");
  }
  tkc_free(src);
  tkc_ctx_free(ctx);
}

/* a float16 / bfloat16 matmul from the tensor API runs on tensor cores (sm_80+), a float32 one and an
 * odd-sized one do not; an sm_75 target falls back to the plain kernel */
static void test_tensor_api_mma(void **state) {
  (void)state;
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  assert_non_null(ctx);
  struct { tkc_dtype dt; int64_t m, k, n; const char *want; } cases[] = {
      {TKC_FLOAT16, 32, 64, 16, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"},
      {TKC_BFLOAT16, 16, 32, 24, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"},
      {TKC_FLOAT32, 32, 64, 16, NULL},
      {TKC_FLOAT16, 24, 64, 12, NULL}, /* neither output dim a multiple of 16 */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    tkc_tensor *a = tkc_rand(ctx, cases[i].dt, 2, (int64_t[]){cases[i].m, cases[i].k}, 1), *b = tkc_rand(ctx, cases[i].dt, 2, (int64_t[]){cases[i].k, cases[i].n}, 2);
    assert_true(a && b && !tkc_realize(a) && !tkc_realize(b));
    tkc_tensor *m = tkc_matmul(a, b);
    char *src = tkc_kernels_source(m, "PTX");
    assert_non_null(src);
    if (cases[i].want ? !strstr(src, cases[i].want) || !strstr(src, "_C0x0(") : strstr(src, "mma.sync") != NULL) {
      printf("%s\n", src);
      fail_msg("case %zu: mma.sync %s", i, cases[i].want ? "missing" : "where it cannot be");
    }
    tkc_free(src);
    if (!i) { /* sm_75 has no m16n8k16: the plain kernel */
      assert_int_equal(tkc_ptx_set_arch("sm_75"), TKC_OK);
      src = tkc_kernels_source(m, "PTX");
      assert_non_null(src);
      assert_null(strstr(src, "mma.sync"));
      tkc_free(src);
      tkc_ptx_set_arch(NULL);
    }
  }
  tkc_ctx_free(ctx);
}

/* the number of (non-overlapping) occurrences of what in src */
static int count_of(const char *src, const char *what) {
  int n = 0;
  for (const char *p = src; (p = strstr(p, what)) != NULL; p += strlen(what)) n++;
  return n;
}

/* fused casts (tinygrad's TC_OPT=1): matmul(cast(a, f16), cast(b, f16)) of float32 a, b is one kernel
 * on tensor cores; its fragments load float32 and convert each value once (cvt.rn.f16.f32), no half
 * buffer in between; sizes tensor cores cannot tile and an sm_75 target give the plain kernel. Every
 * kernel assembles. (The launch, compared with INTERP, is test_opts' on a GPU: INTERP runs no WMMA.) */
static void test_tensor_api_mma_fused_casts(void **state) {
  (void)state;
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  assert_non_null(ctx);
  struct { tkc_dtype dt; int64_t batch, m, k, n; const char *want; bool b_half; } cases[] = {
      {TKC_FLOAT16, 0, 32, 32, 32, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", false},
      {TKC_FLOAT16, 0, 32, 32, 32, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", true}, /* b a half buffer */
      {TKC_FLOAT16, 2, 32, 64, 16, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", false},
      {TKC_BFLOAT16, 0, 16, 32, 24, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", false},
      {TKC_FLOAT16, 0, 24, 40, 12, NULL, false}, /* neither output dim a multiple of 16, k not one of 16 */
      {TKC_FLOAT16, 0, 32, 40, 16, NULL, false}, /* k not a multiple of 16 */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int b = cases[i].batch > 0, nd = 2 + b;
    int64_t sa[3] = {cases[i].batch, cases[i].m, cases[i].k}, sb[3] = {cases[i].batch, cases[i].k, cases[i].n};
    tkc_tensor *a = tkc_rand(ctx, TKC_FLOAT32, nd, sa + 1 - b, 1), *bt = tkc_rand(ctx, cases[i].b_half ? cases[i].dt : TKC_FLOAT32, nd, sb + 1 - b, 2);
    assert_true(a && bt && !tkc_realize(a) && !tkc_realize(bt));
    tkc_tensor *m = tkc_matmul(tkc_cast(a, cases[i].dt), tkc_cast(bt, cases[i].dt));
    assert_non_null(m);
    for (int sm75 = 0; sm75 < 2; sm75++) {
      if (sm75) assert_int_equal(tkc_ptx_set_arch("sm_75"), TKC_OK); /* no m16n8k16 there: the plain kernel */
      char *src = tkc_kernels_source(m, "PTX");
      tkc_ptx_set_arch(NULL);
      assert_non_null(src);
      bool mma = cases[i].want && !sm75;
      const char *why = NULL;
      if (count_of(src, ".entry") != 1) why = "the casts are not fused into the matmul's one kernel";
      else if (mma ? !strstr(src, cases[i].want) || !strstr(src, "_C0x0(") : strstr(src, "mma.sync") != NULL) why = mma ? "mma.sync missing" : "mma.sync where it cannot be";
      else if (!strstr(src, "ld.global.f32") || (!cases[i].b_half && (strstr(src, "ld.global.b16") || strstr(src, "ld.global.u16"))))
        why = "the float32 inputs are not read as float32";
      /* f16: each of the 8 A and 4 B values of a k step converted once (B: none when it is half), and the 4 outputs */
      else if (mma && cases[i].dt == TKC_FLOAT16 && count_of(src, "cvt.rn.f16.f32") != 8 + (cases[i].b_half ? 0 : 4) + 4) why = "not one conversion to half per value";
      if (!why && have_ptxas()) {
        char *log = NULL;
        if (ptxas_run(src, sm75 ? "sm_75" : "sm_80", &log)) {
          printf("%s\n", log ? log : "");
          why = "ptxas rejects it";
        }
        free(log);
      }
      if (why) {
        printf("%s\n", src);
        fail_msg("case %zu (%s): %s", i, sm75 ? "sm_75" : "sm_80", why);
      }
      tkc_free(src);
    }
    tkc_tensor_free(m);
  }
  tkc_ctx_free(ctx);
}

/* a 2048^3 half matmul (2^33 iterations, every index < 2^22) keeps int32 indices and tensor cores */
static void test_tensor_api_mma_large(void **state) {
  (void)state;
  tkc_ctx *ctx = tkc_ctx_new(tkc_device_available("CPU") ? "CPU" : "INTERP"); /* (realizes the inputs) */
  assert_non_null(ctx);
  tkc_tensor *a = tkc_rand(ctx, TKC_FLOAT16, 2, (const int64_t[]){2048, 2048}, 1), *b = tkc_rand(ctx, TKC_FLOAT16, 2, (const int64_t[]){2048, 2048}, 2);
  assert_true(a && b && !tkc_realize(a) && !tkc_realize(b));
  tkc_tensor *m = tkc_matmul(a, b);
  char *src = m ? tkc_kernels_source(m, "PTX") : NULL;
  if (!src) fail_msg("2048^3 half matmul: no PTX: %s", tkc_last_error());
  assert_non_null(strstr(src, "mma.sync.aligned.m16n8k16"));
  tkc_free(src);
  tkc_tensor_free(m), tkc_tensor_free(a), tkc_tensor_free(b);
  tkc_ctx_free(ctx);
}

/* elementwise kernels from the tensor API use ld/st.global.v4 where the index is provably aligned;
 * a view starting one element in does not (scalar loads); the kernel assembles */
static void test_tensor_api_vector_access(void **state) {
  (void)state;
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  assert_non_null(ctx);
  tkc_tensor *a = tkc_rand(ctx, TKC_FLOAT32, 2, (int64_t[]){64, 64}, 1), *b = tkc_rand(ctx, TKC_FLOAT32, 2, (int64_t[]){64, 64}, 2);
  assert_true(!tkc_realize(a) && !tkc_realize(b));
  char *src = tkc_kernels_source(tkc_add(a, b), "PTX");
  assert_non_null(src);
  if (!strstr(src, "ld.global.v4.f32") || !strstr(src, "st.global.v4.f32")) {
    printf("%s\n", src);
    fail_msg("a + b has no vector loads/stores");
  }
  tkc_free(src);
  tkc_tensor *shifted = tkc_shrink(a, (const int64_t[]){0, 64, 1, 61}); /* rows start at 64*r + 1 */
  src = tkc_kernels_source(tkc_add(shifted, tkc_shrink(b, (const int64_t[]){0, 64, 0, 60})), "PTX");
  assert_non_null(src);
  if (!strstr(src, "ld.global.f32 ") || !strstr(src, "ld.global.v4.f32") || !strstr(src, "st.global.v4.f32")) {
    printf("%s\n", src);
    fail_msg("want scalar loads of the view one element in, vector loads of the aligned one");
  }
  if (have_ptxas()) {
    char *log = NULL;
    int rc = ptxas_run(src, "sm_80", &log);
    if (rc) printf("%s\n", log ? log : "");
    free(log);
    assert_int_equal(rc, 0);
  }
  tkc_free(src);
  tkc_ctx_free(ctx);
}

/* A cat (or an arange, a pad) whose axes a reshape merges, then an elementwise op: the fused kernel
 * computes its index in vectors and takes it modulo a vector constant. The PTX rules once rewrote that
 * MOD forever ("graph_rewrite did not converge": the division guard wrapped the divisor, the split of
 * vector ALU into lanes turned the guard into a VECTORIZE the guard did not recognize, and so on);
 * the same for integer division / modulo of loaded vectors. Each renders for PTX (assembled by ptxas
 * for sm_80), C and LLVM IR; test_tensor_shape checks their values on every device. */
static void test_tensor_api_merged_cat(void **state) {
  (void)state;
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  assert_non_null(ctx);
  float d[64];
  for (int i = 0; i < 64; i++) d[i] = (float)i;
  tkc_tensor *w = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){4, 4}, d);
  tkc_tensor *w3 = tkc_tensor_new(ctx, TKC_FLOAT32, 3, (const int64_t[]){2, 3, 4}, d);
  tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){4, 8}, d);
  tkc_tensor *ia = tkc_cast(tkc_mul(tkc_rand(ctx, TKC_FLOAT32, 2, (const int64_t[]){64, 64}, 1), tkc_scalar(ctx, TKC_FLOAT32, 50)), TKC_INT32);
  tkc_tensor *ib = tkc_cast(tkc_mul(tkc_rand(ctx, TKC_FLOAT32, 2, (const int64_t[]){64, 64}, 2), tkc_scalar(ctx, TKC_FLOAT32, 5)), TKC_INT32);
  assert_true(w && w3 && x && ia && ib && !tkc_realize(w) && !tkc_realize(w3) && !tkc_realize(x) && !tkc_realize(ia) && !tkc_realize(ib));
  tkc_tensor *two = tkc_scalar(ctx, TKC_FLOAT32, 2);
  const int64_t n32[1] = {32}, n48[1] = {48};
  struct { const char *n; tkc_tensor *t; } cases[] = {
      {"reshape(cat(w, w, -1)) * 2", tkc_mul(tkc_reshape(tkc_cat(2, (tkc_tensor *[]){w, w}, -1), 1, n32), two)},
      {"reshape(cat(w, w, 0)) * 2", tkc_mul(tkc_reshape(tkc_cat(2, (tkc_tensor *[]){w, w}, 0), 1, n32), two)},
      {"reshape(cat(w, w, w, 1)) * 2", tkc_mul(tkc_reshape(tkc_cat(3, (tkc_tensor *[]){w, w, w}, 1), 1, n48), two)},
      {"reshape(cat(w3, w3, 2)) * 2", tkc_mul(tkc_reshape(tkc_cat(2, (tkc_tensor *[]){w3, w3}, 2), 2, (const int64_t[]){2, 24}), two)},
      {"rotate_half", tkc_mul(tkc_reshape(tkc_cat(2, (tkc_tensor *[]){tkc_neg(tkc_shrink(x, (const int64_t[]){0, 4, 4, 8})), tkc_shrink(x, (const int64_t[]){0, 4, 0, 4})}, -1), 1, n32), two)},
      {"reshape(expand(arange(8))) * 2", tkc_mul(tkc_reshape(tkc_expand(tkc_reshape(tkc_arange(ctx, TKC_FLOAT32, 0, 8, 1), 2, (const int64_t[]){1, 8}), 2, (const int64_t[]){4, 8}), 1, n32), two)},
      {"reshape(arange(32) as (4,8)) * 2", tkc_mul(tkc_reshape(tkc_reshape(tkc_arange(ctx, TKC_FLOAT32, 0, 32, 1), 2, (const int64_t[]){4, 8}), 1, n32), two)},
      {"reshape(pad(w)) * 2", tkc_mul(tkc_reshape(tkc_pad(w, (const int64_t[]){0, 0, 1, 3}, 0), 1, n32), two)},
      {"int a % b", tkc_mod(ia, ib)},
      {"int a / b", tkc_idiv(ia, ib)},
      {"int a % 3", tkc_mod(ia, tkc_scalar(ctx, TKC_INT32, 3))},
      {"int a / -1", tkc_idiv(ia, tkc_scalar(ctx, TKC_INT32, -1))},
  };
  static const char *const renderers[] = {"PTX", "C", "LLVM"};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    assert_non_null(cases[i].t);
    for (size_t r = 0; r < sizeof renderers / sizeof *renderers; r++) {
      char *src = tkc_kernels_source(cases[i].t, renderers[r]);
      if (!src) fail_msg("%s for %s: %s", cases[i].n, renderers[r], tkc_last_error());
      if (!r && have_ptxas()) {
        char *log = NULL;
        int rc = ptxas_run(src, "sm_80", &log);
        if (rc) printf("%s\n%s\n", src, log ? log : "");
        free(log);
        if (rc) fail_msg("%s: ptxas -arch=sm_80 rejects it", cases[i].n);
      }
      tkc_free(src);
    }
  }
  tkc_ctx_free(ctx);
}

static void test_tensor_api_kernels(void **state) {
  (void)state;
  if (!have_ptxas()) return;
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  assert_non_null(ctx);
  tmodule m = {0};
  tensor_sweep(ctx, &m);
  assert_int_equal(m.failed, 0);
  assert_true(m.kernels > 300);
  const char *archs[2] = {"sm_80", "sm_90"};
  for (int k = 0; k < 2; k++) {
    char *mod = strdup(m.s), *t = strstr(mod, "TARGET");
    assert_non_null(t);
    memcpy(t, archs[k], 5);
    memmove(t + 5, t + 6, strlen(t + 6) + 1);
    if (k == 1) memcpy(strstr(mod, ".version 7.0"), ".version 7.8", 12);
    char *log = NULL;
    int rc = ptxas_run(mod, archs[k], &log);
    if (rc) printf("ptxas -arch=%s rejected tensor-API kernels:\n%s\n", archs[k], log ? log : "");
    printf("ptxas -arch=%s: %d kernels of %d tensor-API expressions, %s\n", archs[k], m.kernels, m.exprs, rc ? "REJECTED" : "0 errors");
    free(log);
    free(mod);
    assert_int_equal(rc, 0);
  }
  free(m.s);
  tkc_ctx_free(ctx);
}

/* ptxas failures are seen: the harness is not a test that cannot fail */
static void test_ptxas_rejects_bad_ptx(void **state) {
  (void)state;
  if (!have_ptxas()) return;
  tkc_graph *g = tkc_graph_new();
  char *src = ptx_of(g, kb_transpose(g, 3, 2), "k");
  assert_non_null(src);
  char *log = NULL;
  assert_int_equal(ptxas_run(src, "sm_80", &log), 0);
  free(log);
  char *bad = strstr(src, "ld.global.f32");
  assert_non_null(bad);
  memcpy(bad, "ld.global.q32", 13); /* no such type */
  assert_int_not_equal(ptxas_run(src, "sm_80", &log), 0);
  assert_non_null(log);
  assert_non_null(strstr(log, "error"));
  free(log);
  tkc_free(src);
  tkc_graph_free(g);
}

/* ---------------------------------------------------------------- 2: golden checks */

/* src has a line containing every one of the (NULL-terminated) pieces, in order */
static const char *line_with(const char *src, ...) {
  for (const char *line = src; line && *line;) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    char buf[512];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), line);
    va_list ap;
    va_start(ap, src);
    const char *at = buf, *piece;
    int ok = 1;
    while ((piece = va_arg(ap, const char *)))
      if (!(at = strstr(at, piece))) { ok = 0; break; }
      else at += strlen(piece);
    va_end(ap);
    if (ok) return line;
    line = end ? end + 1 : NULL;
  }
  return NULL;
}

static char *golden(tkc_graph *g, tkc_uop *sink, const char *name) {
  char *src = ptx_of(g, sink, name);
  if (!src) printf("%s: %s\n", name, tkc_last_error());
  assert_non_null(src);
  return src;
}

static void test_golden_header_params_loop(void **state) {
  (void)state;
  assert_int_equal(tkc_ptx_set_arch(NULL), TKC_OK);
  tkc_graph *g = tkc_graph_new();
  char *src = golden(g, kb_var_stride(g), "strided");
  /* default target sm_80 (without a device or $TKC_CUDA_ARCH) */
  if (!getenv("TKC_CUDA_ARCH") && !tkc_device_available("CUDA")) assert_non_null(strstr(src, ".version 7.0\n.target sm_80\n.address_size 64\n"));
  assert_non_null(strstr(src, ".visible .entry strided(\n\t.param .u64 data0,\n\t.param .u64 data1,\n\t.param .s32 var0,\n\t.param .s32 var1\n)"));
  assert_non_null(line_with(src, "ld.param.u64", "[data1]", NULL));
  assert_non_null(line_with(src, "cvta.to.global.u64", NULL));
  assert_non_null(line_with(src, "ld.param.s32", "[var1]", NULL));   /* s, sorted after o */
  assert_non_null(line_with(src, "ld.global.s16", NULL));
  assert_non_null(line_with(src, "st.global.s16", NULL));
  const char *loop = strstr(src, "$LOOP_"), *back = line_with(src, "bra $LOOP_", NULL);
  assert_non_null(loop);
  assert_non_null(back);
  assert_true(loop < back);
  assert_non_null(line_with(src, "setp.lt.s32", NULL));
  assert_non_null(strstr(src, "\tret;\n}\n"));
  tkc_free(src);

  /* the target follows tkc_ptx_set_arch, then $TKC_CUDA_ARCH */
  assert_int_equal(tkc_ptx_set_arch("sm_90"), TKC_OK);
  src = golden(g, kb_transpose(g, 2, 3), "t");
  assert_non_null(strstr(src, ".version 7.8\n.target sm_90\n"));
  tkc_free(src);
  assert_int_equal(tkc_ptx_set_arch("sm_90a"), TKC_OK);
  src = golden(g, kb_transpose(g, 2, 3), "t");
  assert_non_null(strstr(src, ".version 8.0\n.target sm_90a\n"));
  tkc_free(src);
  assert_int_equal(tkc_ptx_set_arch(NULL), TKC_OK);
  char *saved = getenv("TKC_CUDA_ARCH") ? strdup(getenv("TKC_CUDA_ARCH")) : NULL;
  setenv("TKC_CUDA_ARCH", "sm_86", 1);
  src = golden(g, kb_transpose(g, 2, 3), "t");
  assert_non_null(strstr(src, ".version 7.1\n.target sm_86\n"));
  tkc_free(src);
  setenv("TKC_CUDA_ARCH", "kepler", 1);
  assert_null(ptx_of(g, kb_transpose(g, 2, 3), "t"));
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "TKC_CUDA_ARCH"));
  if (saved) setenv("TKC_CUDA_ARCH", saved, 1);
  else unsetenv("TKC_CUDA_ARCH");
  free(saved);
  tkc_graph_free(g);
}

static void test_golden_vector_load(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  char *src = golden(g, kb_float4(g, 6), "vec4");
  assert_non_null(line_with(src, "ld.global.v4.f32 {%f", "}, [%rd", NULL));
  assert_non_null(line_with(src, "st.global.v4.f32 [%rd", "], {%f", NULL));
  assert_non_null(line_with(src, "mul.rn.f32", NULL));
  tkc_free(src);
  /* half x4 under a gate: the alternate lanes are moved in where the gate is false */
  src = golden(g, kb_gated_vec4(g, TKC_FLOAT16, 6, 4), "hvec4");
  assert_non_null(line_with(src, "@%p", " ld.global.v4.b16 {%h", NULL));
  assert_non_null(line_with(src, "@!%p", " mov.b16 %h", NULL));
  assert_non_null(line_with(src, "add.rn.f16", NULL));
  tkc_free(src);
  tkc_graph_free(g);
}

static void test_golden_gated_load(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  char *src = golden(g, kb_gated_load_pad(g, 10), "pad");
  const char *ld = line_with(src, "\t@%p", " ld.global.f32 %f", ", [%rd", NULL);
  const char *alt = line_with(src, "\t@!%p", " mov.f32 %f", NULL);
  assert_non_null(ld);
  assert_non_null(alt);
  assert_true(ld < alt);
  tkc_free(src);
  /* gated store: the store sits in an IF block skipped by a predicated branch */
  src = golden(g, kb_gated_store(g, 20), "gstore");
  const char *br = line_with(src, "@!%p", "bra $ENDIF_", NULL), *st = line_with(src, "st.global.s32", NULL), *lab = strstr(src, "\n$ENDIF_");
  assert_non_null(br);
  assert_non_null(st);
  assert_non_null(lab);
  assert_true(br < st && st < lab);
  tkc_free(src);
  tkc_graph_free(g);
}

static void test_golden_shared_barrier(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  char *src = golden(g, kb_smem_reverse(g, 4, 32), "smem");
  assert_non_null(strstr(src, "\t.shared .align 16 .b8 smem0[128];\n"));
  assert_non_null(line_with(src, "mov.u64 %rd", ", smem0", NULL));
  assert_non_null(line_with(src, "mov.u32 %r", ", %ctaid.x", NULL));
  assert_non_null(line_with(src, "mov.u32 %r", ", %tid.x", NULL));
  const char *st = line_with(src, "st.shared.f32 [%rd", NULL), *bar = line_with(src, "bar.sync 0;", NULL), *ld = line_with(src, "ld.shared.f32 %f", NULL);
  const char *gst = line_with(src, "st.global.f32", NULL);
  assert_non_null(st);
  assert_non_null(bar);
  assert_non_null(ld);
  assert_non_null(gst);
  assert_true(st < bar && bar < ld && ld < gst);
  assert_null(strstr(src, "$LOOP_")); /* launch indices, no loops */
  tkc_free(src);
  tkc_graph_free(g);
}

static void test_golden_wmma(void **state) {
  (void)state;
  assert_int_equal(tkc_ptx_set_arch("sm_80"), TKC_OK);
  tkc_graph *g = tkc_graph_new();
  char *src = golden(g, kb_wmma(g, TKC_FLOAT16, TKC_FLOAT32, 16), "mma");
  const char *mma = line_with(src, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f", "}, {%r", "}, {%r", "}, {%f", NULL);
  assert_non_null(mma);
  assert_non_null(line_with(src, "mov.b32 %r", ", {%h", ", %h", "}", NULL)); /* two halves per register */
  assert_non_null(line_with(src, "mov.u32 %r", "%tid.x", NULL));
  tkc_free(src);
  src = golden(g, kb_wmma(g, TKC_FLOAT32, TKC_FLOAT32, 8), "mma_tf32");
  assert_non_null(line_with(src, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", NULL));
  tkc_free(src);
  src = golden(g, kb_wmma(g, TKC_FLOAT16, TKC_FLOAT16, 16), "mma_h");
  assert_non_null(line_with(src, "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%r", NULL));
  assert_non_null(line_with(src, "mov.b32 {%h", ", %h", "}, %r", NULL)); /* unpacking the result */
  tkc_free(src);
  assert_int_equal(tkc_ptx_set_arch(NULL), TKC_OK);
  tkc_graph_free(g);
}

/* the backend rewrites show in the PTX: bools as bytes, MULACC, guarded division, bf16 as f32 */
static void test_golden_rewrites(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  char *src = golden(g, kb_bool_logic(g, 16), "bools");
  assert_non_null(line_with(src, "ld.global.u8 %rs", NULL));
  assert_non_null(line_with(src, "setp.ne.b16 %p", NULL));
  assert_non_null(line_with(src, "xor.pred", NULL));
  assert_non_null(line_with(src, "st.global.u8", NULL));
  tkc_free(src);
  src = golden(g, kb_matmul(g, 3, 4, 5), "mm");
  assert_non_null(line_with(src, "fma.rn.f32", NULL));
  tkc_free(src);
  src = golden(g, kb_divmod(g, TKC_INT32, 40), "dm");
  /* guarded by the target rules: d != 0 & d != -1 picks d or 1, then the answer or 0 / -x */
  assert_non_null(line_with(src, "setp.ne.s32", NULL));
  assert_non_null(line_with(src, "and.pred", NULL));
  assert_non_null(line_with(src, "div.s32", NULL));
  assert_non_null(line_with(src, "rem.s32", NULL));
  assert_non_null(line_with(src, "neg.s32", NULL)); /* INT_MIN / -1 wraps */
  tkc_free(src);
  src = golden(g, kb_elementwise2(g, TKC_OP_ADD, TKC_BFLOAT16, TKC_BFLOAT16, 8), "bf");
  assert_non_null(line_with(src, "ld.global.b16 %rs", NULL));
  assert_non_null(line_with(src, "shl.b32", NULL)); /* bits << 16: the float (target rules: constants in registers) */
  assert_non_null(line_with(src, "add.rn.f32", NULL));
  assert_non_null(line_with(src, "mov.b32", ", 4294901760;", NULL)); /* bf16 rounding (to nearest even, then the low bits cleared) */
  assert_non_null(line_with(src, "and.b32", NULL));
  assert_non_null(line_with(src, "st.global.b16", NULL));
  tkc_free(src);
  src = golden(g, kb_unary(g, TKC_FLOAT16, 4), "hun"); /* no f16 form: computed in f32 */
  assert_non_null(line_with(src, "lg2.approx.f32", NULL));
  assert_non_null(line_with(src, "ex2.approx.f16", NULL));
  assert_non_null(line_with(src, "cvt.rn.f16.f32", NULL));
  tkc_free(src);
  src = golden(g, kb_unary(g, TKC_FLOAT64, 4), "dun"); /* f64: no approx instructions, inline sequences */
  assert_null(strstr(src, "approx.f64"));
  assert_non_null(line_with(src, "sqrt.rn.f64", NULL));
  assert_non_null(line_with(src, "rcp.rn.f64", NULL));
  tkc_free(src);
  tkc_graph_free(g);
}

/* ---------------------------------------------------------------- 4: bad input */

static void expect_unsupported(tkc_graph *g, tkc_uop *sink, const char *what) {
  char *src = ptx_of(g, sink, "k");
  if (src) printf("rendered what it should refuse (%s):\n%s\n", what, src);
  assert_null(src);
  assert_int_equal(tkc_last_status(), TKC_EUNSUPPORTED);
  const char *e = tkc_last_error();
  if (!strstr(e, what) || !strstr(e, "PTX")) printf("message \"%s\" should name %s and PTX\n", e, what);
  assert_non_null(strstr(e, what));
  assert_non_null(strstr(e, "PTX"));
}

static void test_renderer_refuses(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  expect_unsupported(g, kb_elementwise2(g, TKC_OP_THREEFRY, TKC_UINT64, TKC_UINT64, 4), "THREEFRY");
  expect_unsupported(g, kb_elementwise2(g, TKC_OP_IDIV, TKC_FLOAT32, TKC_FLOAT32, 4), "IDIV");
  expect_unsupported(g, kb_elementwise2(g, TKC_OP_SHL, TKC_BOOL, TKC_BOOL, 4), "SHL");
  /* launch indices other than gidx/lidx, and sizes beyond the launch limits */
  tkc_uop *out = k_buf(g, 0, TKC_INT32), *sp = tkc_uop_special(g, "idx0", 16);
  expect_unsupported(g, k_sink1(g, k_store(g, out, sp, sp)), "SPECIAL");
  sp = tkc_uop_special(g, "gidx1", 70000);
  expect_unsupported(g, k_sink1(g, k_store(g, out, sp, sp)), "SPECIAL");
  sp = tkc_uop_special(g, "lidx0", 2048);
  expect_unsupported(g, k_sink1(g, k_store(g, out, sp, sp)), "SPECIAL");
  /* more shared memory than a block has */
  tkc_uop *li = tkc_uop_special(g, "lidx0", 64);
  tkc_uop *big = tkc_uop_new(g, TKC_OP_DEFINE_LOCAL, tkc_dt_ptr(dt_(TKC_FLOAT32), TKC_SPACE_LOCAL, 16384), 0, NULL, tkc_arg_str("temp0"));
  expect_unsupported(g, k_sink1(g, k_store(g, big, li, tkc_uop_const_float(g, dt_(TKC_FLOAT32), 1))), "DEFINE_LOCAL");
  /* tensor cores: a shape mma.sync lacks; a k16 shape on sm_75 */
  tkc_uop *w = kb_wmma(g, TKC_FLOAT16, TKC_FLOAT32, 16);
  tkc_uop *wmma = NULL;
  size_t n;
  tkc_uop **all = tkc_toposort(w, &n);
  for (size_t i = 0; i < n; i++)
    if (all[i]->op == TKC_OP_WMMA) wmma = all[i];
  tkc_free(all);
  assert_non_null(wmma);
  tkc_arg t[8];
  memcpy(t, wmma->arg.v.t, sizeof t);
  tkc_arg dims[3] = {tkc_arg_int(8), tkc_arg_int(16), tkc_arg_int(32)};
  t[1] = tkc_arg_tuple(dims, 3);
  tkc_uop *odd = tkc_uop_new(g, TKC_OP_WMMA, wmma->dtype, 3, wmma->src, tkc_arg_tuple(t, 8));
  expect_unsupported(g, tkc_substitute(g, w, 1, &wmma, &odd), "WMMA");
  assert_int_equal(tkc_ptx_set_arch("sm_75"), TKC_OK);
  expect_unsupported(g, w, "sm_80");
  char *k8 = ptx_of(g, kb_wmma(g, TKC_FLOAT16, TKC_FLOAT32, 8), "k8"); /* k8 f16 exists on sm_75 */
  assert_non_null(k8);
  tkc_free(k8);
  assert_int_equal(tkc_ptx_set_arch(NULL), TKC_OK);
  tkc_graph_free(g);
}

static void test_renderer_bad_args(void **state) {
  (void)state;
  const tkc_renderer *r = tkc_renderer_get("PTX");
  assert_non_null(r);
  assert_string_equal(r->name, "PTX");
  assert_string_equal(r->device, "CUDA");
  assert_true(r->has_local && r->has_shared && r->supports_float4);
  assert_int_equal(r->global_max[0], 2147483647);
  assert_int_equal(r->local_max[0], 1024);
  assert_int_equal(r->local_max[2], 64);
  assert_int_equal(r->shared_max, 49152);
  assert_true(r->extra_matcher && r->extra_matcher());
  tkc_graph *g = tkc_graph_new();
  assert_null(ptx_of(g, kb_transpose(g, 2, 2), "bad-name"));
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  assert_null(tkc_render(r, "k", NULL, 0));
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  /* malformed instruction lists: an error, never a crash */
  tkc_uop *rg = k_range(g, 4, 0), *c1 = k_int(g, 1), *b0 = k_buf(g, 0, TKC_FLOAT32);
  tkc_uop *end = k_op(g, TKC_OP_ENDRANGE, dt_(TKC_VOID), 1, rg, NULL, NULL);
  tkc_uop *bad_lists[][3] = {
      {end, NULL, NULL},                                                            /* ENDRANGE without its RANGE */
      {k_add(g, c1, c1), NULL, NULL},                                               /* a source never defined */
      {c1, k_op(g, TKC_OP_LOAD, dt_(TKC_FLOAT32), 1, c1, NULL, NULL), NULL},        /* LOAD of a 32-bit int */
      {b0, k_buf(g, 0, TKC_INT32), NULL},                                           /* two buffers numbered 0 */
      {c1, k_op(g, TKC_OP_CAST, ptr_(TKC_FLOAT32), 1, c1, NULL, NULL), NULL},       /* an int cast to a pointer */
  };
  for (size_t i = 0; i < sizeof bad_lists / sizeof *bad_lists; i++) {
    size_t nu = bad_lists[i][1] ? 2 : 1;
    assert_null(tkc_render(r, "k", bad_lists[i], nu));
    assert_true(tkc_last_status() == TKC_EUNSUPPORTED || tkc_last_status() == TKC_EINTERNAL || tkc_last_status() == TKC_EINVAL);
  }
  const char *bad[] = {"sm_50", "sm_", "compute_80", "sm_80b", "", "sm_8x"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    assert_int_equal(tkc_ptx_set_arch(bad[i]), TKC_EINVAL);
    assert_non_null(strstr(tkc_last_error(), "not a CUDA target"));
  }
  assert_int_equal(tkc_ptx_set_arch("sm_120"), TKC_OK);
  char buf[16];
  assert_int_equal(tkc_ptx_arch(buf, sizeof buf), 120);
  assert_string_equal(buf, "sm_120");
  assert_string_equal(tkc_ptx_isa_version(120, false), "8.7");
  assert_string_equal(tkc_ptx_isa_version(75, false), "7.0");
  assert_int_equal(tkc_ptx_set_arch(NULL), TKC_OK);
  tkc_graph_free(g);
}

/* the CUDA device's error paths that run without a GPU */
static void test_cuda_unavailable(void **state) {
  (void)state;
  char why[320];
  assert_string_equal(tkc_cuda_error_name(34), "CUDA_ERROR_STUB_LIBRARY");
  assert_string_equal(tkc_cuda_error_name(100), "CUDA_ERROR_NO_DEVICE");
  assert_string_equal(tkc_cuda_error_name(12345), "CUDA_ERROR_12345");
  assert_int_equal(tkc_cuda_probe("/nonexistent/libcuda.so.1", why, sizeof why), 0);
  assert_non_null(strstr(why, "not found"));
  const char *stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (access(stub, R_OK) == 0) { /* the toolkit's stub: every call says CUDA_ERROR_STUB_LIBRARY */
    assert_int_equal(tkc_cuda_probe(stub, why, sizeof why), 0);
    assert_non_null(strstr(why, "cuInit: CUDA_ERROR_STUB_LIBRARY"));
  } else {
    printf("note: no stub libcuda at %s, stub check skipped\n", stub);
  }
  tkc_cuda_limits lim;
  int avail = tkc_device_available("CUDA");
  assert_int_equal(tkc_cuda_device_limits(&lim), avail);
  if (avail) {
    printf("CUDA device: %s (sm_%d), %d threads/block, %d bytes shared/block\n", lim.name, lim.sm, lim.max_threads_per_block, lim.shared_per_block);
    assert_true(lim.sm >= 75 && lim.max_threads_per_block >= 1024);
    return;
  }
  assert_null(tkc_device_get("CUDA"));
  assert_int_equal(tkc_last_status(), TKC_EDEVICE);
  const char *e = tkc_last_error();
  printf("CUDA: %s\n", e);
  assert_non_null(strstr(e, "device CUDA is unavailable: "));
  assert_true(strlen(e) > strlen("device CUDA is unavailable: ") + 5);
  /* the ctx still works after the failure */
  assert_non_null(tkc_device_get("INTERP"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_suite_sm80),          cmocka_unit_test(test_suite_sm90),       cmocka_unit_test(test_suite_sm75),
      cmocka_unit_test(test_tensor_api_kernels), cmocka_unit_test(test_tensor_api_shared_sum), cmocka_unit_test(test_tensor_api_mma), cmocka_unit_test(test_tensor_api_mma_fused_casts), cmocka_unit_test(test_tensor_api_mma_large), cmocka_unit_test(test_tensor_api_vector_access), cmocka_unit_test(test_tensor_api_merged_cat),  cmocka_unit_test(test_ptxas_rejects_bad_ptx), cmocka_unit_test(test_golden_header_params_loop),
      cmocka_unit_test(test_golden_vector_load),  cmocka_unit_test(test_golden_gated_load), cmocka_unit_test(test_golden_shared_barrier),
      cmocka_unit_test(test_golden_wmma),         cmocka_unit_test(test_golden_rewrites),  cmocka_unit_test(test_renderer_refuses),
      cmocka_unit_test(test_renderer_bad_args),   cmocka_unit_test(test_cuda_unavailable),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
