/* Kernel opts (tkc_realize_opts, tkc/render.h): on every device, every legal single opt and a sample
 * of random legal opt sequences give results identical to INTERP without opts, for a set of kernels
 * (elementwise, broadcast, reduce over each axis, matmul, conv, softmax, masked/padded views, int and
 * half dtypes). Inputs are small integers, so every float sum is exact whatever order opts give it;
 * only softmax (exp) is compared with a tolerance. Illegal opts must be refused with a reason. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "tensor_ref.h"

#define MAXIN 2

static tkc_ctx *case_ctx; /* the ctx of the case being built (for its scalars) */

typedef struct kcase {
  const char *name;
  tkc_dtype dt;
  int nin;
  int ndim[MAXIN];
  int64_t shape[MAXIN][4];
  tkc_tensor *(*make)(tkc_tensor *const *in);
  int approx; /* compare within 1e-5 (transcendental ops) */
  int min_legal; /* legal single opts the kernel must at least accept */
} kcase;

static tkc_tensor *mk_add(tkc_tensor *const *in) { return tkc_add(tkc_mul(in[0], in[1]), in[0]); }
static tkc_tensor *mk_bcast(tkc_tensor *const *in) { return tkc_mul(in[0], in[1]); }
static tkc_tensor *mk_sum0(tkc_tensor *const *in) { return tkc_sum(in[0], 1, (int[]){0}, 0); }
static tkc_tensor *mk_sum1(tkc_tensor *const *in) { return tkc_sum(in[0], 1, (int[]){1}, 1); }
static tkc_tensor *mk_sum2(tkc_tensor *const *in) { return tkc_sum(in[0], 1, (int[]){2}, 0); }
static tkc_tensor *mk_max1(tkc_tensor *const *in) { return tkc_max(in[0], 1, (int[]){1}, 0); }
static tkc_tensor *mk_matmul(tkc_tensor *const *in) { return tkc_matmul(in[0], in[1]); }
/* fused casts (tinygrad's TC_OPT=1 shape): float32 inputs cast to half in the matmul's kernel */
static tkc_tensor *mk_matmul_f16(tkc_tensor *const *in) { return tkc_matmul(tkc_cast(in[0], TKC_FLOAT16), tkc_cast(in[1], TKC_FLOAT16)); }
static tkc_tensor *mk_matmul_bf16(tkc_tensor *const *in) { return tkc_matmul(tkc_cast(in[0], TKC_BFLOAT16), tkc_cast(in[1], TKC_BFLOAT16)); }
/* the result's dtype: the inputs' but for the fused casts' */
static tkc_dtype out_dtype(const kcase *c) { return c->make == mk_matmul_f16 ? TKC_FLOAT16 : c->make == mk_matmul_bf16 ? TKC_BFLOAT16 : c->dt; }
static tkc_tensor *mk_conv(tkc_tensor *const *in) { return tkc_conv2d(in[0], in[1], NULL, 1, 1); }
static tkc_tensor *mk_softmax(tkc_tensor *const *in) { return tkc_softmax(in[0], -1); }
static tkc_tensor *mk_padsum(tkc_tensor *const *in) {
  return tkc_sum(tkc_pad(in[0], (const int64_t[]){1, 2, 0, 3}, 0.0), 1, (int[]){1}, 0);
}
static tkc_tensor *mk_shrinkflip(tkc_tensor *const *in) {
  tkc_tensor *s = tkc_shrink(in[0], (const int64_t[]){1, 7, 2, 14});
  return tkc_add(tkc_flip(s, 1, (int[]){1}), tkc_scalar(case_ctx, TKC_FLOAT32, 1.0));
}

static const kcase CASES[] = {
    {"add (4,8,16)", TKC_FLOAT32, 2, {3, 3}, {{4, 8, 16}, {4, 8, 16}}, mk_add, 0, 6},
    {"broadcast mul (16,1)*(1,32)", TKC_FLOAT32, 2, {2, 2}, {{16, 1}, {1, 32}}, mk_bcast, 0, 6},
    {"sum axis 0 of (8,12,16)", TKC_FLOAT32, 1, {3}, {{8, 12, 16}}, mk_sum0, 0, 6},
    {"sum axis 1 keepdim of (8,12,16)", TKC_FLOAT32, 1, {3}, {{8, 12, 16}}, mk_sum1, 0, 6},
    {"sum axis 2 of (8,12,16)", TKC_FLOAT32, 1, {3}, {{8, 12, 16}}, mk_sum2, 0, 6},
    {"max axis 1 of (8,12,16)", TKC_FLOAT32, 1, {3}, {{8, 12, 16}}, mk_max1, 0, 6},
    {"matmul (16,24)@(24,32)", TKC_FLOAT32, 2, {2, 2}, {{16, 24}, {24, 32}}, mk_matmul, 0, 8},
    {"conv2d (2,3,8,8)*(4,3,3,3) pad 1", TKC_FLOAT32, 2, {4, 4}, {{2, 3, 8, 8}, {4, 3, 3, 3}}, mk_conv, 0, 4},
    {"softmax (8,32)", TKC_FLOAT32, 1, {2}, {{8, 32}}, mk_softmax, 1, 4},
    {"sum of padded (6,10)", TKC_FLOAT32, 1, {2}, {{6, 10}}, mk_padsum, 0, 2},
    {"flip of shrunk (8,16) + 1", TKC_FLOAT32, 1, {2}, {{8, 16}}, mk_shrinkflip, 0, 2},
    {"int32 sum axis 1 of (8,12,16)", TKC_INT32, 1, {3}, {{8, 12, 16}}, mk_sum1, 0, 6},
    {"int32 matmul (8,16)@(16,8)", TKC_INT32, 2, {2, 2}, {{8, 16}, {16, 8}}, mk_matmul, 0, 6},
    {"half a*b+a (4,8,16)", TKC_FLOAT16, 2, {3, 3}, {{4, 8, 16}, {4, 8, 16}}, mk_add, 0, 6},
    {"half matmul (8,16)@(16,8)", TKC_FLOAT16, 2, {2, 2}, {{8, 16}, {16, 8}}, mk_matmul, 0, 6},
    {"half matmul (32,32)@(32,16) (tensor cores on CUDA)", TKC_FLOAT16, 2, {2, 2}, {{32, 32}, {32, 16}}, mk_matmul, 0, 6},
    {"fused-cast half matmul (32,32)@(32,32) (tensor cores on CUDA)", TKC_FLOAT32, 2, {2, 2}, {{32, 32}, {32, 32}}, mk_matmul_f16, 0, 6},
    {"fused-cast half bmm (2,32,32)@(2,32,16) (tensor cores on CUDA)", TKC_FLOAT32, 2, {3, 3}, {{2, 32, 32}, {2, 32, 16}}, mk_matmul_f16, 0, 6},
    {"fused-cast half matmul (24,40)@(40,12) (no tensor cores)", TKC_FLOAT32, 2, {2, 2}, {{24, 40}, {40, 12}}, mk_matmul_f16, 0, 6},
    {"fused-cast bf16 matmul (16,32)@(32,24) (tensor cores on CUDA)", TKC_FLOAT32, 2, {2, 2}, {{16, 32}, {32, 24}}, mk_matmul_bf16, 0, 6},
};
#define NCASES ((int)(sizeof CASES / sizeof CASES[0]))

/* the candidate opts: every op on every axis with every amount (NOLOCALS and TC once) */
#define NCAND (7 * 4 * 6 + 2)
static tkc_opt candidate(int i) {
  static const tkc_opt_op ops[7] = {TKC_OPT_UPCAST, TKC_OPT_UNROLL, TKC_OPT_GROUP, TKC_OPT_GROUPTOP, TKC_OPT_LOCAL, TKC_OPT_PADTO, TKC_OPT_SWAP};
  static const int amounts[6] = {0, 2, 3, 4, 8, 16};
  if (i == NCAND - 1) return (tkc_opt){TKC_OPT_NOLOCALS, 0, 0};
  if (i == NCAND - 2) return (tkc_opt){TKC_OPT_TC, 0, 0};
  tkc_opt o = {ops[i / 24], (i / 6) % 4, amounts[i % 6]};
  if (o.op == TKC_OPT_SWAP) o.amount = i % 6 < 4 ? i % 6 : 0;
  return o;
}

/* host copies of a case's inputs: integers in [-3, 3] (exact in every float dtype) */
static void *host_input(const kcase *c, int k, size_t *nbytes) {
  int64_t n = 1;
  for (int d = 0; d < c->ndim[k]; d++) n *= c->shape[k][d];
  size_t item = tr_size(c->dt);
  unsigned char *p = malloc((size_t)n * item);
  for (int64_t i = 0; p && i < n; i++) tr_store(c->dt, p, (size_t)i, tr_from_double(c->dt, (double)((i * 7 + k * 5) % 7 - 3)));
  *nbytes = (size_t)n * item;
  return p;
}

/* runs case c on ctx with the given opts (NULL: heuristics); *out malloc'ed. Returns the status. */
static tkc_status run_case(tkc_ctx *ctx, const kcase *c, const tkc_opt *opts, int nopts, int use_opts, void **out, size_t *nout) {
  tkc_tensor *in[MAXIN] = {NULL, NULL};
  tkc_status st = TKC_OK;
  *out = NULL;
  for (int k = 0; k < c->nin && !st; k++) {
    size_t nb;
    void *h = host_input(c, k, &nb);
    in[k] = tkc_tensor_new(ctx, c->dt, c->ndim[k], c->shape[k], h);
    free(h);
    if (!in[k] || tkc_realize(in[k])) st = tkc_last_status();
  }
  case_ctx = ctx;
  tkc_tensor *t = st ? NULL : c->make(in);
  if (!st && !t) st = tkc_last_status();
  if (!st) st = use_opts ? tkc_realize_opts(t, opts, nopts) : tkc_realize(t);
  if (!st) {
    *nout = (size_t)tkc_numel(t) * tr_size(tkc_dtype_of(t));
    if (tkc_dtype_of(t) != out_dtype(c)) st = TKC_EINTERNAL; /* (a case's table row is wrong) */
  }
  if (!st) {
    *out = malloc(*nout ? *nout : 1);
    st = tkc_copy_out(t, *out, *nout);
  }
  tkc_tensor_free(t);
  for (int k = 0; k < c->nin; k++) tkc_tensor_free(in[k]);
  return st;
}

static void describe(char *buf, size_t n, const tkc_opt *o, int no) {
  size_t k = 0;
  buf[0] = 0;
  for (int i = 0; i < no && k < n; i++) k += (size_t)snprintf(buf + k, n - k, "%s%s(%d,%d)", i ? " " : "", tkc_opt_name(o[i].op), o[i].axis, o[i].amount);
}

static void compare(const kcase *c, const void *got, const void *want, size_t n, const char *dev, const char *opts) {
  tkc_dtype dt = out_dtype(c);
  size_t item = tr_size(dt), bad = 0, first = 0;
  for (size_t i = 0; i < n / item; i++) {
    rv g = tr_load(dt, got, i), w = tr_load(dt, want, i);
    bool ok = c->approx ? tr_close(dt, g, w, 1e-5, 1e-6) : memcmp((const char *)got + i * item, (const char *)want + i * item, item) == 0;
    if (!ok && !bad++) first = i;
  }
  TR_EXPECT(!bad, "%s: %s with %s: %zu of %zu elements differ from INTERP without opts (first at %zu)", dev, c->name, opts, bad, n / item, first);
}

static void test_opts_match_interp(void **state) {
  (void)state;
  tr_begin();
  tkc_ctx *ref_ctx = tkc_ctx_new("INTERP");
  assert_non_null(ref_ctx);
  void *want[NCASES];
  size_t nwant[NCASES];
  for (int c = 0; c < NCASES; c++) {
    tkc_status st = run_case(ref_ctx, &CASES[c], NULL, 0, 0, &want[c], &nwant[c]);
    TR_EXPECT(st == TKC_OK, "INTERP reference of %s", CASES[c].name);
  }
  tkc_ctx_free(ref_ctx);
  FOR_EACH_DEVICE(dev, ctx) {
    int nlegal_total = 0;
    for (int c = 0; c < NCASES; c++) {
      const kcase *kc = &CASES[c];
      if (!tr_dev_supports(dev, kc->dt) || !tr_dev_supports(dev, out_dtype(kc)) || !want[c]) continue;
      char what[256];
      void *got;
      size_t n;
      /* the heuristics' opts */
      if (!run_case(ctx, kc, NULL, 0, 0, &got, &n)) compare(kc, got, want[c], n, dev, "the heuristics' opts");
      else TR_EXPECT(0, "%s: %s with the heuristics' opts", dev, kc->name);
      free(got);
      /* every single opt: legal ones must match, illegal ones must be refused with TKC_EINVAL */
      tkc_opt legal[NCAND];
      int nlegal = 0;
      for (int i = 0; i < NCAND; i++) {
        tkc_opt o = candidate(i);
        describe(what, sizeof what, &o, 1);
        tkc_status st = run_case(ctx, kc, &o, 1, 1, &got, &n);
        if (st == TKC_OK) {
          compare(kc, got, want[c], n, dev, what);
          legal[nlegal++] = o;
        } else {
          TR_EXPECT((st == TKC_EINVAL || st == TKC_EUNSUPPORTED) && strstr(tkc_last_error(), tkc_opt_name(o.op)), "%s: %s refused %s with status %d", dev, kc->name, what, (int)st);
        }
        free(got);
      }
      TR_EXPECT(nlegal >= kc->min_legal, "%s: %s accepted only %d single opts", dev, kc->name, nlegal);
      nlegal_total += nlegal;
      /* random sequences of 2..4 legal-looking opts: the accepted ones must match too */
      int accepted = 0;
      for (int tries = 0; tries < 40 && accepted < 6 && nlegal; tries++) {
        tkc_opt seq[4];
        int ns = 2 + (int)(tr_rand_u64() % 3);
        for (int j = 0; j < ns; j++) seq[j] = tr_rand_u64() % 3 ? legal[tr_rand_u64() % (uint64_t)nlegal] : candidate((int)(tr_rand_u64() % NCAND));
        describe(what, sizeof what, seq, ns);
        tkc_status st = run_case(ctx, kc, seq, ns, 1, &got, &n);
        if (st == TKC_OK) {
          compare(kc, got, want[c], n, dev, what);
          accepted++;
        } else {
          TR_EXPECT(st == TKC_EINVAL || st == TKC_EUNSUPPORTED, "%s: %s refused %s with status %d: %s", dev, kc->name, what, (int)st, tkc_last_error());
        }
        free(got);
      }
    }
    printf("  %s: %d legal single opts checked\n", dev, nlegal_total);
  }
  for (int c = 0; c < NCASES; c++) free(want[c]);
  TR_END();
}

/* bad inputs of tkc_realize_opts and illegal opts, each with its reason; the ctx stays usable */
static void test_realize_opts_errors(void **state) {
  (void)state;
  tr_begin();
  FOR_EACH_DEVICE(dev, ctx) {
    int64_t s[2] = {8, 16};
    tkc_tensor *a = tkc_rand(ctx, TKC_FLOAT32, 2, s, 1);
    TR_EXPECT(a && tkc_realize(a) == TKC_OK, "%s: input", dev);
    tkc_opt up = {TKC_OPT_UPCAST, 0, 4};
    TR_EXPECT(tkc_realize_opts(NULL, &up, 1) == TKC_EINVAL, "%s: NULL tensor", dev);
    tkc_tensor *t = tkc_add(a, a);
    TR_EXPECT(tkc_realize_opts(t, NULL, 1) == TKC_EINVAL, "%s: NULL opts", dev);
    TR_EXPECT(tkc_realize_opts(t, &up, -1) == TKC_EINVAL, "%s: negative count", dev);
    struct { tkc_opt o; const char *why; } bad[] = {
        {{(tkc_opt_op)99, 0, 2}, "unknown opt"},
        {{TKC_OPT_UPCAST, 2, 2}, "not an output axis"},
        {{TKC_OPT_UPCAST, -1, 2}, "not an output axis"},
        {{TKC_OPT_UPCAST, 1, 3}, "does not divide"},
        {{TKC_OPT_UPCAST, 1, -2}, "must be >= 0"},
        {{TKC_OPT_UNROLL, 0, 2}, "not a reduce axis"},
        {{TKC_OPT_PADTO, 1, 16}, "multiple of"},
        {{TKC_OPT_PADTO, 1, 1}, "must be >= 2"},
        {{TKC_OPT_PADTO, 0, 1000}, "wastes"},
        {{TKC_OPT_SWAP, 0, 0}, "not two output axes"},
        {{TKC_OPT_SWAP, 0, 5}, "not two output axes"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
      tkc_status st = tkc_realize_opts(t, &bad[i].o, 1);
      TR_EXPECT(st == TKC_EINVAL && strstr(tkc_last_error(), bad[i].why), "%s: opt %zu (%s) gave %d: %s", dev, i, bad[i].why, (int)st, tkc_last_error());
    }
    /* lanes past the limit: 16 x 16 x 2 = 512 > 256 */
    int64_t s3[3] = {16, 16, 4};
    tkc_tensor *b = tkc_rand(ctx, TKC_FLOAT32, 3, s3, 2), *u = tkc_mul(b, b);
    tkc_opt many[3] = {{TKC_OPT_UPCAST, 0, 16}, {TKC_OPT_UPCAST, 0, 16}, {TKC_OPT_UPCAST, 0, 2}};
    TR_EXPECT(tkc_realize_opts(u, many, 3) == TKC_EINVAL && strstr(tkc_last_error(), "limit"), "%s: too many lanes: %s", dev, tkc_last_error());
    /* workgroup opts: refused on loop devices; on GPUs past the workgroup size */
    tkc_device *d = tkc_device_get(dev);
    const tkc_renderer *r = d ? tkc_device_renderer(d) : NULL;
    bool gpu = r && r->has_local;
    tkc_opt local = {TKC_OPT_LOCAL, 0, 4};
    tkc_tensor *t1 = tkc_add(a, a), *t2 = tkc_add(a, a);
    tkc_status st = tkc_realize_opts(t1, &local, 1);
    TR_EXPECT(gpu ? st == TKC_OK : st == TKC_EINVAL && strstr(tkc_last_error(), "LOCAL"), "%s: LOCAL gave %d", dev, (int)st);
    tkc_tensor_free(t1);
    tkc_opt locals[2] = {{TKC_OPT_LOCAL, 1, 16}, {TKC_OPT_LOCAL, 0, 8}}; /* 128 threads; then 256 */
    st = tkc_realize_opts(t2, locals, 2);
    TR_EXPECT(gpu ? st == TKC_OK : st == TKC_EINVAL, "%s: 128 threads gave %d: %s", dev, (int)st, tkc_last_error());
    tkc_tensor_free(t2);
    int64_t s4[2] = {64, 64};
    tkc_tensor *big = tkc_rand(ctx, TKC_FLOAT32, 2, s4, 3), *bs = tkc_sum(big, 1, (int[]){1}, 0);
    tkc_opt toomany[3] = {{TKC_OPT_LOCAL, 0, 16}, {TKC_OPT_GROUP, 0, 32}}; /* 512 threads */
    st = tkc_realize_opts(bs, toomany, 2);
    TR_EXPECT(st == TKC_EINVAL && strstr(tkc_last_error(), gpu ? "threads per workgroup" : "no workgroups"), "%s: 512 threads gave %d: %s", dev, (int)st, tkc_last_error());
    tkc_opt nol[2] = {{TKC_OPT_NOLOCALS, 0, 0}, {TKC_OPT_LOCAL, 0, 4}};
    st = tkc_realize_opts(bs, nol, 2);
    TR_EXPECT(st == TKC_EINVAL && strstr(tkc_last_error(), gpu ? "NOLOCALS" : "no workgroups"), "%s: LOCAL after NOLOCALS gave %d: %s", dev, (int)st, tkc_last_error());
    tkc_opt tc = {TKC_OPT_TC, 0, 0};
    st = tkc_realize_opts(bs, &tc, 1);
    TR_EXPECT((gpu ? st == TKC_EUNSUPPORTED || st == TKC_EINVAL : st == TKC_EINVAL) && strstr(tkc_last_error(), "TC"), "%s: TC of a sum gave %d: %s", dev, (int)st, tkc_last_error());
    tkc_tensor_free(bs);
    tkc_tensor_free(big);
    /* t is still computable, and a realized tensor has no kernel left */
    TR_EXPECT(tkc_realize_opts(t, &up, 1) == TKC_OK, "%s: a legal opt after refusals: %s", dev, tkc_last_error());
    float out[128];
    TR_EXPECT(tkc_copy_out(t, out, sizeof out) == TKC_OK, "%s: copy out", dev);
    float in[128];
    TR_EXPECT(tkc_copy_out(a, in, sizeof in) == TKC_OK, "%s: copy in", dev);
    for (int i = 0; i < 128; i++) TR_EXPECT(out[i] == in[i] + in[i], "%s: a+a at %d", dev, i);
    TR_EXPECT(tkc_realize_opts(t, &up, 1) == TKC_EINVAL && strstr(tkc_last_error(), "realized already"), "%s: realized tensor", dev);
    TR_EXPECT(tkc_realize_opts(t, NULL, 0) == TKC_EINVAL, "%s: realized tensor, no opts", dev);
  }
  TR_END();
}

/* the opts are part of the kernel name; TKC_NOOPT=1 turns them off */
static void test_opts_in_names(void **state) {
  (void)state;
  tr_begin();
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  assert_non_null(ctx);
  int64_t sa[2] = {64, 64};
  tkc_tensor *a = tkc_rand(ctx, TKC_FLOAT32, 2, sa, 1), *b = tkc_rand(ctx, TKC_FLOAT32, 2, sa, 2);
  tkc_tensor *m = tkc_matmul(a, b);
  char *src = tkc_kernels_source(m, "C");
  TR_EXPECT(src && strstr(src, "r_64_64_64_U1x"), "heuristics name the opts: %s", src ? src : tkc_last_error());
  TR_EXPECT(src && strstr(src, "__builtin_fmaf"), "matmul uses fused multiply-add");
  tkc_free(src);
  setenv("TKC_NOOPT", "1", 1);
  src = tkc_kernels_source(m, "C");
  TR_EXPECT(src && strstr(src, "r_64_64_64(") && !strstr(src, "_U1x"), "TKC_NOOPT=1: no opts: %s", src ? src : tkc_last_error());
  tkc_free(src);
  unsetenv("TKC_NOOPT");
  tkc_ctx_free(ctx);
  TR_END();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_opts_in_names),
      cmocka_unit_test(test_realize_opts_errors),
      cmocka_unit_test(test_opts_match_interp),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
