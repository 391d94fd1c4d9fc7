/* tkc/ops_math.h on every available device against plain-C (double precision libm) reference loops
 * and against INTERP: elementwise math (float32 / float16 / float64 / int32 inputs, 0-d, size-1,
 * empty and non-contiguous views), exact rounding of special values bit for bit, reductions and
 * scans (axes, keepdim, views, long axes), kernel counts of the composites, and bad inputs. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "tensor_ref.h"
#include "tkc/ops_math.h"

static tkc_ctx *interp; /* the reference device, opened once */

/* an input of dt with these values and shape, then the view steps (NULL: none) */
static tkc_tensor *mk(tkc_ctx *ctx, tkc_dtype dt, const double *vals, int ndim, const int64_t *shape, const tr_step *steps, href *h) {
  *h = tr_from_doubles(dt, ndim, shape, vals);
  tkc_tensor *t = tr_upload(ctx, h);
  if (steps) tr_apply(&t, h, steps);
  return t;
}

/* ---------------------------------------------------------------- references */

static double r_sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double r_softplus(double x, double b) { return (b * x > 30 ? b * x : log1p(exp(b * x))) / b; }
static double r_hsig(double x) { return isnan(x) ? x : fmin(fmax(x + 3, 0), 6) / 6; }
static double r_elu(double x, double a) { return x > 0 ? x : a * expm1(x); }

typedef struct uop_case {
  const char *name;
  tkc_tensor *(*fn)(tkc_tensor *);
  double (*ref)(double);
  int dom;       /* input values: D_* */
  double rtol32; /* float32 tolerance (atol = rtol32 / 10); float16 and float64 use the dtype's */
  bool poly;     /* float32-grade on float64 */
} uop_case;

enum { D_ANY, D_POS, D_UNIT, D_TAN, D_LOG1P, D_NDOM };
/* 32 values per domain (so they reshape to (4, 8)) */
static const double dom_vals[D_NDOM][32] = {
    {-20, -8.5, -3.75, -2.5, -1.25, -1, -0.75, -0.3, -1e-3, -1e-6, -0.0, 0, 1e-7, 1e-4, 0.01, 0.2,
     0.5, 0.7, 0.99, 1, 1.5, 2, 3.3, 5, 9.75, 15, 30, -5.5, 4.25, -0.05, 0.03, NAN},
    {1e-3, 0.01, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 4, 7, 10, 16, 100, 1e3,
     1e4, 1e6, 3e-5, 0.9, 1.1, 12.5, 64, 81, 0.2, 0.3, 5, 6, 8, 9, 11, 0},
    {-1, -0.999, -0.9, -0.75, -0.5, -0.3, -0.1, -1e-3, -1e-6, 0, 1e-7, 1e-4, 0.01, 0.2, 0.4, 0.5,
     0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.9999, 1, -0.6, -0.2, 0.3, 0.45, -0.45, 1.25, -1.5, NAN},
    {-1.5, -1.4, -1.2, -1, -0.8, -0.6, -0.4, -0.2, -0.1, -1e-3, -1e-6, 0, 1e-7, 1e-4, 0.01, 0.05,
     0.1, 0.3, 0.5, 0.7, 0.785, 0.9, 1.1, 1.3, 1.45, 0.25, -0.25, 0.6, -0.7, 1.2, -1.3, NAN},
    {-1, -0.999999, -0.9, -0.5, -0.1, -1e-3, -1e-6, -1e-8, 0, 1e-8, 1e-7, 1e-5, 1e-3, 0.01, 0.1, 0.5,
     1, 2, 5, 10, 100, 1e3, 1e5, 1e6, 3e7, -0.3, 0.3, -0.7, 0.7, -1.5, 1e-4, NAN},
};
static const double dom_ints[D_NDOM][8] = {
    {-3, -2, -1, 0, 1, 2, 3, 5}, {1, 2, 3, 4, 5, 7, 9, 16}, {-1, 0, 1, 0, -1, 1, 0, 1},
    {-1, 0, 1, 0, -1, 1, 0, 1}, {0, 1, 2, 3, 5, 10, 100, 7},
};

static double f_rsqrt(double x) { return 1 / sqrt(x); }
static double f_square(double x) { return x * x; }
static double f_sign(double x) { return x > 0 ? 1 : x < 0 ? -1 : x; }
static double f_gelu(double x) { return 0.5 * x * erfc(-x / sqrt(2)); }
static double f_gelu_tanh(double x) { return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }
static double f_silu(double x) { return x * r_sigmoid(x); }
static double f_leaky(double x) { return x < 0 ? 0.1 * x : x; }
static double f_elu(double x) { return r_elu(x, 1.3); }
static double f_selu(double x) { return 1.0507009873554805 * r_elu(x, 1.6732632423543772); }
static double f_softplus(double x) { return r_softplus(x, 1); }
static double f_softplus25(double x) { return r_softplus(x, 2.5); }
static double f_hsig(double x) { return r_hsig(x); }
static double f_hswish(double x) { return x * r_hsig(x); }
static double f_mish(double x) { return x * tanh(r_softplus(x, 1)); }
static double f_clamp(double x) { return isnan(x) ? x : fmin(fmax(x, -2), 3.5); }

static tkc_tensor *w_gelu(tkc_tensor *a) { return tkc_gelu(a, 0); }
static tkc_tensor *w_gelu_tanh(tkc_tensor *a) { return tkc_gelu(a, 1); }
static tkc_tensor *w_leaky(tkc_tensor *a) { return tkc_leaky_relu(a, 0.1); }
static tkc_tensor *w_elu(tkc_tensor *a) { return tkc_elu(a, 1.3); }
static tkc_tensor *w_softplus(tkc_tensor *a) { return tkc_softplus(a, 1); }
static tkc_tensor *w_softplus25(tkc_tensor *a) { return tkc_softplus(a, 2.5); }
static tkc_tensor *w_clamp(tkc_tensor *a) { return tkc_clamp(a, -2, 3.5); }

static const uop_case ucases[] = {
    {"rsqrt", tkc_rsqrt, f_rsqrt, D_POS, 1e-6, false},
    {"square", tkc_square, f_square, D_ANY, 1e-6, false},
    {"sign", tkc_sign, f_sign, D_ANY, 0, false},
    {"erf", tkc_erf, erf, D_ANY, 1e-6, true},
    {"gelu", w_gelu, f_gelu, D_ANY, 2e-6, true},
    {"gelu(tanh)", w_gelu_tanh, f_gelu_tanh, D_ANY, 2e-6, false},
    {"silu", tkc_silu, f_silu, D_ANY, 2e-6, false},
    {"leaky_relu", w_leaky, f_leaky, D_ANY, 1e-6, false},
    {"elu", w_elu, f_elu, D_ANY, 2e-6, false},
    {"selu", tkc_selu, f_selu, D_ANY, 2e-6, false},
    {"softplus", w_softplus, f_softplus, D_ANY, 2e-6, false},
    {"softplus(2.5)", w_softplus25, f_softplus25, D_ANY, 2e-6, false},
    {"hardsigmoid", tkc_hardsigmoid, f_hsig, D_ANY, 1e-6, false},
    {"hardswish", tkc_hardswish, f_hswish, D_ANY, 1e-6, false},
    {"mish", tkc_mish, f_mish, D_ANY, 2e-6, false},
    {"tan", tkc_tan, tan, D_TAN, 4e-6, false},
    {"asin", tkc_asin, asin, D_UNIT, 2e-6, true},
    {"acos", tkc_acos, acos, D_UNIT, 2e-6, true},
    {"atan", tkc_atan, atan, D_ANY, 1e-6, true},
    {"sinh", tkc_sinh, sinh, D_ANY, 4e-6, false},
    {"cosh", tkc_cosh, cosh, D_ANY, 4e-6, false},
    {"log1p", tkc_log1p, log1p, D_LOG1P, 2e-6, false},
    {"expm1", tkc_expm1, expm1, D_ANY, 4e-6, false},
    {"clamp(-2, 3.5)", w_clamp, f_clamp, D_ANY, 0, false},
    {"floor", tkc_floor, floor, D_ANY, 0, false},
    {"ceil", tkc_ceil, ceil, D_ANY, 0, false},
    {"round", tkc_round, nearbyint, D_ANY, 0, false},
    {"trunc", tkc_trunc, trunc, D_ANY, 0, false},
};
#define NUCASES ((int)(sizeof ucases / sizeof ucases[0]))

/* ops whose result keeps an int input's dtype (the others promote ints to float32) */
static bool keeps_int(const uop_case *c) {
  return c->fn == tkc_square || c->fn == tkc_sign || c->fn == w_clamp || c->fn == tkc_floor || c->fn == tkc_ceil ||
         c->fn == tkc_round || c->fn == tkc_trunc;
}

static href ref_unary(const uop_case *c, const href *a) {
  tkc_dtype out = tr_isf(a->dt) ? a->dt : keeps_int(c) ? a->dt : TKC_FLOAT32;
  href h = tr_new(out, a->ndim, a->shape);
  for (int64_t k = 0; k < a->n; k++) h.v[k] = tr_from_double(out, c->ref(tr_to_double(a->dt, a->v[k])));
  return h;
}

static void tol_of(const uop_case *c, tkc_dtype dt, double *rtol, double *atol) {
  if (dt == TKC_FLOAT16 || dt == TKC_BFLOAT16) *rtol = *atol = tr_rtol(dt, 0) * (c->rtol32 ? 2 : 0.01);
  else if (dt == TKC_FLOAT64) *rtol = c->poly ? 4e-7 : c->rtol32 ? 1e-9 : 0, *atol = *rtol / 10;
  else if (tr_isint(dt)) *rtol = *atol = 0;
  else *rtol = c->rtol32, *atol = c->rtol32 / 10;
}

/* the variants every elementwise op is checked on */
typedef struct variant {
  const char *name;
  tkc_dtype dt;
  int ndim;
  int64_t shape[3];
  tr_step steps[3];
} variant;
static const variant variants[] = {
    {"(32,) float32", TKC_FLOAT32, 1, {32}, {{TS_END, 0, {0}, 0}}},
    {"(8,4) permuted+flipped", TKC_FLOAT32, 2, {4, 8}, {TR_PERMUTE(1, 0), TR_FLIP(1), {TS_END, 0, {0}, 0}}},
    {"(2,5) shrunk", TKC_FLOAT32, 2, {4, 8}, {TR_SHRINK(1, 3, 2, 7), {TS_END, 0, {0}, 0}}},
    {"0-d", TKC_FLOAT32, 0, {0}, {{TS_END, 0, {0}, 0}}},
    {"(1,1)", TKC_FLOAT32, 2, {1, 1}, {{TS_END, 0, {0}, 0}}},
    {"empty (2,0,3)", TKC_FLOAT32, 3, {2, 0, 3}, {{TS_END, 0, {0}, 0}}},
    {"(32,) float16", TKC_FLOAT16, 1, {32}, {{TS_END, 0, {0}, 0}}},
    {"(32,) float64", TKC_FLOAT64, 1, {32}, {{TS_END, 0, {0}, 0}}},
    {"(8,) int32", TKC_INT32, 1, {8}, {{TS_END, 0, {0}, 0}}},
};

static void test_elementwise(void **state) {
  (void)state;
  tr_begin();
  FOR_EACH_DEVICE(dev, ctx) {
    tr_batch b;
    tr_batch_init(&b, ctx, dev);
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
      const variant *va = &variants[v];
      if (!tr_dev_supports(dev, va->dt)) continue;
      for (int c = 0; c < NUCASES; c++) {
        const double *vals = va->dt == TKC_INT32 ? dom_ints[ucases[c].dom] : dom_vals[ucases[c].dom];
        href h;
        tkc_tensor *t = mk(ctx, va->dt, vals + (va->ndim == 0 ? 1 : 0), va->ndim, va->shape, va->steps, &h);
        href want = ref_unary(&ucases[c], &h);
        double rtol, atol;
        tol_of(&ucases[c], want.dt, &rtol, &atol);
        char what[128];
        snprintf(what, sizeof what, "%s: %s %s", dev, ucases[c].name, va->name);
        tr_batch_add(&b, ucases[c].fn(t), &want, rtol, atol, what);
        tr_free(&h);
      }
      tr_batch_flush(&b);
    }
    /* against INTERP on the same inputs, and one kernel per op of one input */
    for (int c = 0; c < NUCASES && interp; c++) {
      href h, hi;
      tkc_tensor *t = mk(ctx, TKC_FLOAT32, dom_vals[ucases[c].dom], TR_SHAPE(32), NULL, &h);
      tkc_tensor *ti = mk(interp, TKC_FLOAT32, dom_vals[ucases[c].dom], TR_SHAPE(32), NULL, &hi);
      tkc_tensor *r = ucases[c].fn(t), *ri = ucases[c].fn(ti);
      TR_EXPECT(tkc_kernel_count(r) == 1, "%s: %s of one input needs %d kernels, want 1", dev, ucases[c].name, tkc_kernel_count(r));
      float got[32], ref[32];
      if (tkc_copy_out(r, got, sizeof got) || tkc_copy_out(ri, ref, sizeof ref)) {
        tr_problem("%s: %s vs INTERP: %s", dev, ucases[c].name, tkc_last_error());
        continue;
      }
      for (int k = 0; k < 32; k++) {
        double tol = 2 * ucases[c].rtol32 * fabs(ref[k]) + ucases[c].rtol32 / 5;
        TR_EXPECT((isnan(got[k]) && isnan(ref[k])) || got[k] == ref[k] || fabs(got[k] - ref[k]) <= tol, "%s: %s(%g) = %.9g, INTERP %.9g", dev,
                  ucases[c].name, (double)h.v[k].f, got[k], ref[k]);
      }
      tr_free(&h), tr_free(&hi);
    }
  }
  TR_END();
}

/* ---------------------------------------------------------------- rounding, bit for bit */

static const double round_vals[] = {0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997, -0.49999997, 1.0000001, -1.0000001,
                                    8388607.5, -8388607.5, 8388608, 8388609, 4194304.5, 4194305.5, -4194305.5, 1e30, -1e30, 3.4e38,
                                    1e-45, -1e-45, 1e-38, INFINITY, -INFINITY, NAN, 123.456, -123.456, 7.5, -7.5, 2147483648.0, -3e9,
                                    4503599627370495.5, -4503599627370495.5, 4503599627370497.0, 0.25, -0.75, 1e-300};
#define NROUND ((int64_t)(sizeof round_vals / sizeof round_vals[0]))

static void test_rounding_exact(void **state) {
  (void)state;
  tr_begin();
  tkc_tensor *(*const fns[4])(tkc_tensor *) = {tkc_floor, tkc_ceil, tkc_round, tkc_trunc};
  double (*const refs[4])(double) = {floor, ceil, nearbyint, trunc};
  const char *names[4] = {"floor", "ceil", "round", "trunc"};
  FOR_EACH_DEVICE(dev, ctx) {
    for (int d = 0; d < 3; d++) {
      tkc_dtype dt = (tkc_dtype[]){TKC_FLOAT32, TKC_FLOAT16, TKC_FLOAT64}[d];
      if (!tr_dev_supports(dev, dt)) continue;
      href h;
      tkc_tensor *t = mk(ctx, dt, round_vals, TR_SHAPE(NROUND), NULL, &h);
      for (int f = 0; f < 4; f++) {
        unsigned char got[NROUND * 8], want[NROUND * 8];
        size_t sz = tr_size(dt);
        for (int64_t k = 0; k < NROUND; k++) tr_store(dt, want, (size_t)k, tr_from_double(dt, refs[f](h.v[k].f)));
        if (tkc_copy_out(fns[f](t), got, (size_t)NROUND * sz)) {
          tr_problem("%s: %s %s: %s", dev, names[f], tr_dn(dt), tkc_last_error());
          continue;
        }
        for (int64_t k = 0; k < NROUND; k++) {
          rv g = tr_load(dt, got, (size_t)k);
          bool ok = isnan(h.v[k].f) ? isnan(g.f) : !memcmp(got + k * (int64_t)sz, want + k * (int64_t)sz, sz);
          TR_EXPECT(ok, "%s: %s(%.17g) %s = %.17g (want %.17g, bits differ)", dev, names[f], h.v[k].f, tr_dn(dt), g.f, tr_load(dt, want, (size_t)k).f);
        }
      }
      tr_free(&h);
    }
    /* ints: as they are; bool: refused */
    href h;
    tkc_tensor *t = mk(ctx, TKC_INT32, (const double[]){-3, 0, 7, 2147483647}, TR_SHAPE(4), NULL, &h);
    for (int f = 0; f < 4; f++) {
      tr_checkk(fns[f](t), &h, 0, names[f]);
      TR_EXPECT_FAIL(fns[f](tkc_full(ctx, TKC_BOOL, 1, (const int64_t[]){2}, 1)), TKC_EDTYPE, "%s(bool)", names[f]);
    }
    tr_free(&h);
  }
  TR_END();
}

/* ---------------------------------------------------------------- classification, clamp, sign, atan2, lerp */

static void test_special(void **state) {
  (void)state;
  tr_begin();
  FOR_EACH_DEVICE(dev, ctx) {
    /* isnan / isinf / isfinite */
    static const double cv[] = {0, -0.0, 1, -1e30, 3.4e38, 1e-45, INFINITY, -INFINITY, NAN, -NAN, 65504, 1e300};
    tkc_tensor *(*const cls[3])(tkc_tensor *) = {tkc_isnan, tkc_isinf, tkc_isfinite};
    for (int d = 0; d < 4; d++) {
      tkc_dtype dt = (tkc_dtype[]){TKC_FLOAT32, TKC_FLOAT16, TKC_FLOAT64, TKC_INT32}[d];
      if (!tr_dev_supports(dev, dt)) continue;
      href h;
      tkc_tensor *t = mk(ctx, dt, dt == TKC_INT32 ? (const double[]){1, 2, 3, 4, 5, 6, 7, 8, 9, 0, -1, -2} : cv, TR_SHAPE(3, 4),
                         TR_STEPS(TR_PERMUTE(1, 0)), &h);
      for (int f = 0; f < 3; f++) {
        href w = tr_new(TKC_BOOL, h.ndim, h.shape);
        for (int64_t k = 0; k < h.n; k++) {
          double x = tr_to_double(dt, h.v[k]);
          w.v[k].i = f == 0 ? isnan(x) != 0 : f == 1 ? isinf(x) != 0 : isfinite(x) != 0;
        }
        char what[64];
        snprintf(what, sizeof what, "%s: %s %s", dev, (const char *[]){"isnan", "isinf", "isfinite"}[f], tr_dn(dt));
        tr_checkk(cls[f](t), &w, 0, what);
        tr_free(&w);
      }
      tr_free(&h);
    }
    /* clamp: lo > hi gives hi; one-sided; ints round the bounds inwards and saturate */
    href h, w;
    tkc_tensor *t = mk(ctx, TKC_FLOAT32, (const double[]){-5, -1, 0, 1, 2, 7, NAN, INFINITY}, TR_SHAPE(8), NULL, &h);
    w = tr_from_doubles(TKC_FLOAT32, TR_SHAPE(8), (const double[]){1, 1, 1, 1, 1, 1, NAN, 1});
    tr_checkk(tkc_clamp(t, 3, 1), &w, 0, "clamp(lo 3 > hi 1) = hi");
    tr_free(&w);
    w = tr_from_doubles(TKC_FLOAT32, TR_SHAPE(8), (const double[]){-1, -1, 0, 1, 2, 7, NAN, INFINITY});
    tr_checkk(tkc_clamp(t, -1, INFINITY), &w, 0, "clamp(-1, inf)");
    tr_free(&w), tr_free(&h);
    t = mk(ctx, TKC_INT8, (const double[]){-128, -3, 0, 3, 127}, TR_SHAPE(5), NULL, &h);
    w = tr_from_doubles(TKC_INT8, TR_SHAPE(5), (const double[]){-2, -2, 0, 2, 2});
    tr_checkk(tkc_clamp(t, -2.5, 2.5), &w, 0, "clamp int8 (-2.5, 2.5)");
    tr_free(&w);
    tr_checkk(tkc_clamp(t, -1000, 1000), &h, 0, "clamp int8 (-1000, 1000)");
    tr_free(&h);
    t = mk(ctx, TKC_UINT32, (const double[]){0, 5, 4294967295.0}, TR_SHAPE(3), NULL, &h);
    w = tr_from_doubles(TKC_UINT32, TR_SHAPE(3), (const double[]){1, 5, 4294967295.0});
    tr_checkk(tkc_clamp(t, 0.5, 1e30), &w, 0, "clamp uint32 (0.5, 1e30)");
    tr_free(&w), tr_free(&h);
    /* sign of ints */
    t = mk(ctx, TKC_INT32, (const double[]){-7, 0, 3}, TR_SHAPE(3), NULL, &h);
    w = tr_from_doubles(TKC_INT32, TR_SHAPE(3), (const double[]){-1, 0, 1});
    tr_checkk(tkc_sign(t), &w, 0, "sign int32");
    tr_free(&w), tr_free(&h);
    /* atan2 over a grid of signs, zeros and infinities (y (9,1) against x (1,9)) */
    static const double av[9] = {-INFINITY, -2.5, -1, -0.0, 0, 1e-3, 1, 3, INFINITY};
    href hy, hx;
    tkc_tensor *ty = mk(ctx, TKC_FLOAT32, av, TR_SHAPE(9, 1), NULL, &hy), *tx = mk(ctx, TKC_FLOAT32, av, TR_SHAPE(1, 9), NULL, &hx);
    w = tr_new(TKC_FLOAT32, 2, (const int64_t[]){9, 9});
    for (int i = 0; i < 9; i++)
      for (int j = 0; j < 9; j++) w.v[i * 9 + j].f = (float)atan2(av[i], av[j]);
    tr_check(tkc_atan2(ty, tx), &w, 2e-6, 1e-7, "atan2 grid");
    tr_free(&w);
    /* odd functions keep the sign of zero: atan(-0) = asin(-0) = -0, as libm */
    t = mk(ctx, TKC_FLOAT32, (const double[]){-0.0, 0.0}, TR_SHAPE(2), NULL, &h);
    tkc_tensor *odd[2] = {tkc_atan(t), tkc_asin(t)};
    for (int k = 0; k < 2; k++) {
      float o[2] = {1, 1};
      TR_EXPECT(tkc_copy_out(odd[k], o, sizeof o) == TKC_OK, "atan/asin of +-0");
      TR_EXPECT(o[0] == 0 && signbit(o[0]) && o[1] == 0 && !signbit(o[1]), "atan/asin(-0) = -0, of +0 = +0");
    }
    tr_free(&h);
    /* int operands promote; a flipped view */
    tkc_tensor *iy = mk(ctx, TKC_INT32, (const double[]){-3, 0, 2, 5}, TR_SHAPE(4), TR_STEPS(TR_FLIP(0)), &h);
    w = tr_new(TKC_FLOAT32, 1, (const int64_t[]){4});
    for (int i = 0; i < 4; i++) w.v[i].f = (float)atan2((double)h.v[i].i, 2.0);
    tr_check(tkc_atan2(iy, tkc_scalar(ctx, TKC_INT32, 2)), &w, 2e-6, 1e-7, "atan2(int32 flipped, 2)");
    tr_free(&w), tr_free(&h), tr_free(&hy), tr_free(&hx);
    /* lerp, broadcast (3,1) (1,4) (4,) */
    href ha, hb, hw;
    tkc_tensor *ta = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(3, 1), TR_DOM_ANY, NULL, &ha);
    tkc_tensor *tb = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(1, 4), TR_DOM_ANY, NULL, &hb);
    tkc_tensor *tw = mk(ctx, TKC_FLOAT32, (const double[]){0, 0.25, 0.75, 1}, TR_SHAPE(4), NULL, &hw);
    w = tr_new(TKC_FLOAT32, 2, (const int64_t[]){3, 4});
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 4; j++) {
        double a = ha.v[i].f, bb = hb.v[j].f, ww = hw.v[j].f;
        w.v[i * 4 + j].f = (float)(ww < 0.5 ? a + ww * (bb - a) : bb - (bb - a) * (1 - ww));
      }
    tr_check(tkc_lerp(ta, tb, tw), &w, 1e-6, 1e-7, "lerp broadcast");
    tr_free(&w), tr_free(&hb);
    /* exact at w = 0 / 1 */
    TR_EXPECT(tkc_lerp(ta, tb, tkc_scalar(ctx, TKC_INT32, 1)) != NULL, "lerp with an int weight");
    tr_free(&ha), tr_free(&hw);
    if (tr_dev_supports(dev, TKC_FLOAT16)) {
      tkc_tensor *x = mk(ctx, TKC_FLOAT16, (const double[]){1, 2, 3}, TR_SHAPE(3), NULL, &ha);
      tkc_tensor *y = mk(ctx, TKC_FLOAT16, (const double[]){3, -2, 3.5}, TR_SHAPE(3), NULL, &hb);
      w = tr_from_doubles(TKC_FLOAT16, TR_SHAPE(3), (const double[]){2, 0, 3.25});
      tr_checkk(tkc_lerp(x, y, tkc_scalar(ctx, TKC_FLOAT16, 0.5)), &w, 0, "lerp float16");
      tr_free(&w), tr_free(&ha), tr_free(&hb);
    }
  }
  TR_END();
}

/* ---------------------------------------------------------------- reductions */

enum { RK_PROD, RK_VAR, RK_STD, RK_LSE, RK_ANY, RK_ALL, RK_SUMACC };

/* a reduced over axes, in double (floats) or int64 (ints), to out */
static href ref_reduce(int kind, const href *a, int naxes, const int *axes, int keepdim, tkc_dtype out, double corr) {
  int mask[TR_MAXDIM] = {0};
  for (int i = 0; i < a->ndim; i++) mask[i] = naxes == 0;
  for (int k = 0; k < naxes; k++) mask[axes[k] < 0 ? axes[k] + a->ndim : axes[k]] = 1;
  int64_t ks[TR_MAXDIM], os[TR_MAXDIM], cnt = 1;
  int on = 0;
  for (int i = 0; i < a->ndim; i++) {
    ks[i] = mask[i] ? 1 : a->shape[i];
    if (mask[i]) cnt *= a->shape[i];
    if (keepdim || !mask[i]) os[on++] = ks[i];
  }
  href h = tr_new(out, on, os);
  double *vals = calloc(tr_cnt(h.n * cnt), sizeof *vals);
  int64_t *ivals = calloc(tr_cnt(h.n * cnt), sizeof *ivals), *fill = calloc(tr_cnt(h.n), sizeof *fill);
  for (int64_t k = 0; k < a->n; k++) {
    int64_t idx[TR_MAXDIM];
    tr_unravel(k, a->ndim, a->shape, idx);
    for (int i = 0; i < a->ndim; i++) idx[i] = mask[i] ? 0 : idx[i];
    int64_t o = tr_ravel(idx, a->ndim, ks), p = o * cnt + fill[o]++;
    vals[p] = tr_to_double(a->dt, a->v[k]);
    ivals[p] = a->v[k].i;
  }
  for (int64_t o = 0; o < h.n; o++) {
    const double *v = vals + o * cnt;
    double r = 0, m = -INFINITY;
    int64_t ir = kind == RK_PROD ? 1 : 0;
    switch (kind) {
    case RK_PROD:
      r = 1;
      for (int64_t i = 0; i < cnt; i++) r *= v[i], ir = (int64_t)((uint64_t)ir * (uint64_t)ivals[o * cnt + i]);
      break;
    case RK_VAR: case RK_STD: {
      double mean = 0;
      for (int64_t i = 0; i < cnt; i++) mean += v[i];
      mean /= (double)cnt;
      for (int64_t i = 0; i < cnt; i++) r += (v[i] - mean) * (v[i] - mean);
      r /= (double)cnt - corr;
      if (kind == RK_STD) r = sqrt(r);
      break;
    }
    case RK_LSE:
      for (int64_t i = 0; i < cnt; i++) m = fmax(m, v[i]);
      if (isinf(m)) r = m;
      else {
        for (int64_t i = 0; i < cnt; i++) r += exp(v[i] - m);
        r = log(r) + m;
      }
      break;
    case RK_ANY: case RK_ALL:
      ir = kind == RK_ALL;
      for (int64_t i = 0; i < cnt; i++) ir = kind == RK_ANY ? ir || v[i] != 0 : ir && v[i] != 0;
      break;
    default:
      for (int64_t i = 0; i < cnt; i++) r += v[i], ir = (int64_t)((uint64_t)ir + (uint64_t)ivals[o * cnt + i]);
    }
    if (tr_isf(out)) h.v[o] = tr_from_double(out, r);
    else h.v[o].i = tr_wrap(out, (uint64_t)ir);
  }
  free(vals), free(ivals), free(fill);
  return h;
}

static tkc_tensor *run_reduce(int kind, tkc_tensor *t, int naxes, const int *axes, int keepdim, double corr, tkc_dtype acc) {
  switch (kind) {
  case RK_PROD: return tkc_prod(t, naxes, axes, keepdim);
  case RK_VAR: return tkc_var(t, naxes, axes, keepdim, corr);
  case RK_STD: return tkc_std(t, naxes, axes, keepdim, corr);
  case RK_LSE: return tkc_logsumexp(t, naxes, axes, keepdim);
  case RK_ANY: return tkc_any(t, naxes, axes, keepdim);
  case RK_ALL: return tkc_all(t, naxes, axes, keepdim);
  default: return tkc_sum_acc(t, naxes, axes, keepdim, acc);
  }
}

static void test_reductions(void **state) {
  (void)state;
  tr_begin();
  static const char *const knames[] = {"prod", "var", "std", "logsumexp", "any", "all", "sum_acc"};
  static const struct { int ndim; int64_t shape[3]; int naxes; int axes[3]; int keepdim; tr_step steps[2]; } cases[] = {
      {3, {3, 4, 5}, 1, {1}, 0, {{TS_END, 0, {0}, 0}}},
      {3, {3, 4, 5}, 2, {0, -1}, 1, {{TS_END, 0, {0}, 0}}},
      {3, {3, 4, 5}, 0, {0}, 0, {{TS_END, 0, {0}, 0}}},
      {2, {6, 5}, 1, {0}, 1, {TR_PERMUTE(1, 0), {TS_END, 0, {0}, 0}}}, /* (5,6) view */
      {2, {6, 5}, 1, {1}, 0, {TR_FLIP(0, 1), {TS_END, 0, {0}, 0}}},
      {2, {1, 7}, 1, {0}, 0, {{TS_END, 0, {0}, 0}}},
      {0, {0}, 0, {0}, 0, {{TS_END, 0, {0}, 0}}},
      {2, {3, 0}, 1, {1}, 0, {{TS_END, 0, {0}, 0}}}, /* empty reduction */
      {2, {40, 3}, 1, {0}, 0, {{TS_END, 0, {0}, 0}}}, /* prod: several kernels */
  };
  FOR_EACH_DEVICE(dev, ctx) {
    tr_batch b;
    tr_batch_init(&b, ctx, dev);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++, tr_batch_flush(&b))
      for (int kind = RK_PROD; kind <= RK_SUMACC; kind++)
        for (int d = 0; d < 4; d++) {
          tkc_dtype dt = (tkc_dtype[]){TKC_FLOAT32, TKC_INT32, TKC_FLOAT16, TKC_BOOL}[d];
          if (!tr_dev_supports(dev, dt) || (dt == TKC_BOOL && kind != RK_ANY && kind != RK_ALL && kind != RK_PROD)) continue;
          if (dt == TKC_FLOAT16 && kind == RK_PROD && cases[c].shape[0] == 40) continue; /* overflows half */
          bool empty = cases[c].shape[1] == 0;
          if (empty && (kind == RK_VAR || kind == RK_STD)) continue; /* below */
          double corr = kind == RK_VAR || kind == RK_STD ? (c % 2 ? 0 : 1) : 0;
          tkc_dtype acc = kind == RK_SUMACC ? (dt == TKC_INT32 ? TKC_INT8 : dt == TKC_FLOAT16 ? TKC_FLOAT32 : TKC_FLOAT64) : TKC_VOID;
          if (acc == TKC_FLOAT64 && !tr_dev_supports(dev, acc)) acc = TKC_FLOAT32;
          href h;
          /* prod: values near 1 (no overflow); any/all: a few zeros */
          int dom = kind == RK_ANY || kind == RK_ALL ? TR_DOM_SHIFT : kind == RK_PROD ? TR_DOM_NONZERO : TR_DOM_ANY;
          tkc_tensor *t = tr_make(ctx, dt, cases[c].ndim, cases[c].shape, dom, cases[c].steps, &h);
          if (kind == RK_PROD && tr_isf(dt)) { /* re-upload the changed values, then the same view */
            href h2 = tr_new(dt, cases[c].ndim, cases[c].shape);
            for (int64_t k = 0; k < h2.n; k++) h2.v[k] = tr_from_double(dt, 1 + (double)((k * 7) % 9 - 4) / 64);
            tr_free(&h);
            h = h2;
            t = tr_upload(ctx, &h);
            if (cases[c].steps[0].kind != TS_END) tr_apply(&t, &h, cases[c].steps);
          }
          tkc_dtype out = kind == RK_ANY || kind == RK_ALL ? TKC_BOOL : kind == RK_SUMACC ? acc : kind == RK_PROD ? dt : tr_isf(dt) ? dt : TKC_FLOAT32;
          href want = ref_reduce(kind, &h, cases[c].naxes, cases[c].axes, cases[c].keepdim, out, corr);
          char what[128];
          snprintf(what, sizeof what, "%s: %s case %zu %s", dev, knames[kind], c, tr_dn(dt));
          tr_batch_addk(&b, run_reduce(kind, t, cases[c].naxes, cases[c].axes, cases[c].keepdim, corr, acc), &want, 1, what);
          tr_free(&h);
        }
    /* var of an empty set and correction == n: nan / inf as numpy */
    href h;
    tkc_tensor *t = mk(ctx, TKC_FLOAT32, (const double[]){1, 3}, TR_SHAPE(2), NULL, &h);
    href w = tr_from_doubles(TKC_FLOAT32, 0, NULL, (const double[]){INFINITY});
    tr_checkk(tkc_var(t, 0, NULL, 0, 2), &w, 0, "var with correction == n");
    tr_free(&w), tr_free(&h);
    w = tr_from_doubles(TKC_FLOAT32, 1, (const int64_t[]){3}, (const double[]){NAN, NAN, NAN});
    tr_checkk(tkc_std(tkc_full(ctx, TKC_FLOAT32, 2, (const int64_t[]){3, 0}, 1), 1, (const int[]){1}, 0, 0), &w, 0, "std of empty rows");
    tr_free(&w);
    /* logsumexp: large values, all -inf rows, an inf */
    t = mk(ctx, TKC_FLOAT32, (const double[]){1000, 1001, 999, -INFINITY, -INFINITY, -INFINITY, 1, INFINITY, 2}, TR_SHAPE(3, 3), NULL, &h);
    href want = ref_reduce(RK_LSE, &h, 1, (const int[]){1}, 0, TKC_FLOAT32, 0);
    tr_checkk(tkc_logsumexp(t, 1, (const int[]){-1}, 0), &want, 1, "logsumexp of +-1000 / -inf / inf rows");
    tr_free(&want), tr_free(&h);
    /* kernel counts */
    href hx;
    tkc_tensor *x = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(4, 16), TR_DOM_ANY, NULL, &hx);
    int kv = tkc_kernel_count(tkc_var(x, 1, (const int[]){1}, 0, 1)), kl = tkc_kernel_count(tkc_logsumexp(x, 1, (const int[]){1}, 0));
    int kp = tkc_kernel_count(tkc_prod(x, 1, (const int[]){1}, 0)), ka = tkc_kernel_count(tkc_any(x, 0, NULL, 0));
    TR_EXPECT(kv >= 1 && kv <= 2, "%s: var needs %d kernels, want 1..2", dev, kv);
    TR_EXPECT(kl >= 1 && kl <= 3, "%s: logsumexp needs %d kernels, want 1..3", dev, kl);
    TR_EXPECT(kp == 1, "%s: prod of 16 needs %d kernels, want 1", dev, kp);
    TR_EXPECT(ka == 1, "%s: any needs %d kernels, want 1", dev, ka);
    tr_free(&hx);
  }
  TR_END();
}

/* ---------------------------------------------------------------- scans */

enum { SK_SUM, SK_PROD, SK_MAX };

static href ref_scan(int kind, const href *a, int axis, tkc_dtype out) {
  href h = tr_new(out, a->ndim, a->shape);
  if (!a->ndim) {
    h.v[0] = tr_cast(a->v[0], a->dt, out);
    return h;
  }
  int ax = axis < 0 ? axis + a->ndim : axis;
  int64_t n = a->shape[ax], inner = 1;
  for (int i = ax + 1; i < a->ndim; i++) inner *= a->shape[i];
  for (int64_t base = 0; base < a->n; base++) {
    if ((base / inner) % (n ? n : 1)) continue; /* the first element of each line */
    double r = kind == SK_SUM ? 0 : kind == SK_PROD ? 1 : -INFINITY;
    int64_t ir = kind == SK_SUM ? 0 : kind == SK_PROD ? 1 : INT64_MIN;
    for (int64_t i = 0; i < n; i++) {
      int64_t k = base + i * inner;
      double v = tr_to_double(a->dt, a->v[k]);
      int64_t iv = a->v[k].i;
      if (kind == SK_SUM) r += v, ir = (int64_t)((uint64_t)ir + (uint64_t)iv);
      else if (kind == SK_PROD) r *= v, ir = (int64_t)((uint64_t)ir * (uint64_t)iv);
      else r = fmax(r, v), ir = iv > ir ? iv : ir;
      if (tr_isf(out)) h.v[k] = tr_from_double(out, r);
      else h.v[k].i = tr_wrap(out, (uint64_t)ir);
    }
  }
  return h;
}

static void test_scans(void **state) {
  (void)state;
  tr_begin();
  tkc_tensor *(*const fns[3])(tkc_tensor *, int) = {tkc_cumsum, tkc_cumprod, tkc_cummax};
  static const char *const names[3] = {"cumsum", "cumprod", "cummax"};
  static const struct { int ndim; int64_t shape[3]; int axis; tr_step steps[2]; } cases[] = {
      {1, {7}, 0, {{TS_END, 0, {0}, 0}}},
      {2, {3, 5}, 1, {{TS_END, 0, {0}, 0}}},
      {2, {3, 5}, 0, {{TS_END, 0, {0}, 0}}},
      {3, {2, 3, 4}, -2, {TR_PERMUTE(2, 0, 1), {TS_END, 0, {0}, 0}}}, /* (4,2,3) view */
      {2, {4, 6}, -1, {TR_FLIP(1), {TS_END, 0, {0}, 0}}},
      {2, {6, 1}, 1, {{TS_END, 0, {0}, 0}}},
      {0, {0}, 0, {{TS_END, 0, {0}, 0}}},
      {2, {0, 4}, 1, {{TS_END, 0, {0}, 0}}},
      {2, {2, 1300}, 1, {{TS_END, 0, {0}, 0}}}, /* blocks of 16, their 82 totals in blocks again */
      {1, {140000}, 0, {{TS_END, 0, {0}, 0}}},   /* four block levels (float32, not on INTERP: slow there) */
      {1, {32}, 0, {{TS_END, 0, {0}, 0}}},       /* the longest single triangle */
      {2, {3, 33}, 1, {{TS_END, 0, {0}, 0}}},    /* the shortest blocked axis: a padded tail of 15 */
      {2, {2, 1000}, 1, {{TS_END, 0, {0}, 0}}},
      {2, {3, 1024}, -1, {{TS_END, 0, {0}, 0}}}, /* whole blocks at each level */
      {2, {2, 4097}, 1, {{TS_END, 0, {0}, 0}}},  /* one past: three levels */
      {2, {1009, 2}, 0, {{TS_END, 0, {0}, 0}}},  /* a prime length along axis 0 */
      {3, {2, 3, 257}, 1, {TR_PERMUTE(0, 2, 1), {TS_END, 0, {0}, 0}}}, /* (2,257,3) view, a prime axis of a permuted view */
      {2, {2, 523}, 1, {TR_FLIP(1), {TS_END, 0, {0}, 0}}},             /* flipped: a reversed view scanned */
  };
  FOR_EACH_DEVICE(dev, ctx) {
    tr_batch b;
    tr_batch_init(&b, ctx, dev);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++, tr_batch_flush(&b))
      for (int kind = 0; kind < 3; kind++)
        for (int d = 0; d < 5; d++) {
          tkc_dtype dt = (tkc_dtype[]){TKC_FLOAT32, TKC_INT32, TKC_INT8, TKC_FLOAT16, TKC_BOOL}[d];
          int64_t n = cases[c].ndim ? cases[c].shape[cases[c].ndim - 1] : 1;
          if (!tr_dev_supports(dev, dt) || (n > 5000 && d >= 3) || (n > 20000 && d != 0)) continue;
          if ((dt == TKC_BOOL && kind == SK_PROD) || (n > 20000 && !strcmp(dev, "INTERP"))) continue;
          href h;
          tkc_tensor *t;
          if (kind == SK_PROD) { /* values +-1 (ints) or near 1 (floats): no overflow */
            href hb = tr_new(dt, cases[c].ndim, cases[c].shape);
            for (int64_t k = 0; k < hb.n; k++)
              hb.v[k] = tr_from_double(dt, tr_isf(dt) ? 1 + (double)((k * 5) % 7 - 3) / (n > 1000 ? 4096 : 32) : (k % 5 == 2 ? -1 : 1));
            t = tr_upload(ctx, &hb);
            h = hb;
            if (cases[c].steps[0].kind != TS_END) tr_apply(&t, &h, cases[c].steps);
          } else {
            t = tr_make(ctx, dt, cases[c].ndim, cases[c].shape, TR_DOM_ANY, cases[c].steps, &h);
          }
          tkc_dtype out = dt;
          if (kind == SK_SUM) out = dt == TKC_INT8 || dt == TKC_BOOL ? TKC_INT32 : dt;
          href want = ref_scan(kind, &h, cases[c].axis, out);
          char what[128];
          snprintf(what, sizeof what, "%s: %s case %zu %s", dev, names[kind], c, tr_dn(dt));
          double rtol = tr_isf(out) ? (n > 1000 && out == TKC_FLOAT32 ? 1e-4 : tr_rtol(out, 1)) : 0;
          tr_batch_add(&b, fns[kind](t, cases[c].axis), &want, rtol, rtol * (tr_isf(out) && n > 1000 ? 100 : 1), what);
          tr_free(&h);
        }
    /* kernel counts: one triangle up to 32; beyond, a buffer of scanned blocks of 16 per level, the
     * last level's triangle and one kernel adding every level's totals back (a product's triangle
     * is elementwise and fuses into it) */
    href h;
    tkc_tensor *x = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(3, 500), TR_DOM_ANY, NULL, &h);
    tkc_tensor *x32 = tkc_shrink(x, (const int64_t[]){0, 3, 0, 32});
    TR_EXPECT(tkc_kernel_count(tkc_cumsum(x32, 1)) == 1, "%s: cumsum of 32 needs %d kernels, want 1", dev, tkc_kernel_count(tkc_cumsum(x32, 1)));
    TR_EXPECT(tkc_kernel_count(tkc_cummax(x, 0)) == 1, "%s: cummax needs %d kernels, want 1", dev, tkc_kernel_count(tkc_cummax(x, 0)));
    TR_EXPECT(tkc_kernel_count(tkc_cumprod(x, 0)) == 1, "%s: cumprod of 3 needs %d kernels, want 1", dev, tkc_kernel_count(tkc_cumprod(x, 0)));
    int ks = tkc_kernel_count(tkc_cumsum(x, 1)), kp = tkc_kernel_count(tkc_cumprod(x, 1));
    TR_EXPECT(ks == 3, "%s: cumsum of 500 needs %d kernels, want 3", dev, ks);
    TR_EXPECT(kp == 2, "%s: cumprod of 500 needs %d kernels, want 2", dev, kp);
    tr_free(&h);
    x = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(2, 5000), TR_DOM_ANY, NULL, &h);
    int kl = tkc_kernel_count(tkc_cumsum(x, 1));
    TR_EXPECT(kl == 4, "%s: cumsum of 5000 (blocks of 313, then 20) needs %d kernels, want 4", dev, kl);
    tr_free(&h);
    /* a variable leading dim with a blocked axis; a variable axis is refused, not scanned wrong */
    int64_t L = tkc_dim_var(ctx, "L", 1, 6);
    x = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(6, 100), TR_DOM_ANY, NULL, &h);
    TR_EXPECT(tkc_dim_bind(ctx, L, 4) == TKC_OK, "%s: bind L", dev);
    tkc_tensor *xv = tkc_shrink(x, (const int64_t[]){0, L, 0, 100});
    href hv = tr_new(TKC_FLOAT32, 2, (const int64_t[]){4, 100});
    memcpy(hv.v, h.v, sizeof(hv.v[0]) * 400);
    for (int kind = SK_SUM; kind <= SK_MAX; kind += SK_MAX - SK_SUM) { /* products of 100 such values overflow */
      tkc_tensor *r = fns[kind](xv, 1);
      float got[400];
      TR_EXPECT(r && tkc_copy_out(r, got, sizeof got) == TKC_OK, "%s: %s of an (L, 100) view: %s", dev, names[kind], tkc_last_error());
      href want = ref_scan(kind, &hv, 1, TKC_FLOAT32);
      int bad = 0;
      for (int k = 0; k < 400; k++) bad += !(fabs(got[k] - tr_to_double(TKC_FLOAT32, want.v[k])) <= 1e-4 * (1 + fabs(tr_to_double(TKC_FLOAT32, want.v[k]))));
      TR_EXPECT(!bad, "%s: %s of an (L=4, 100) view: %d of 400 wrong", dev, names[kind], bad);
      tr_free(&want);
    }
    tr_free(&hv);
    tr_free(&h);
    x = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(6, 4), TR_DOM_ANY, NULL, &h);
    TR_EXPECT_FAIL(tkc_cumsum(tkc_shrink(x, (const int64_t[]){0, L, 0, 4}), 0), TKC_EUNSUPPORTED, "%s: cumsum along a variable axis", dev);
    tr_free(&h);
    /* 7 dims: the leading ones scanned as one (the blocks need two spare dims) */
    int64_t s7[7] = {2, 1, 3, 1, 1, 2, 40};
    x = tr_make(ctx, TKC_FLOAT32, 7, s7, TR_DOM_ANY, NULL, &h);
    for (int ax = 0; ax < 7; ax += 6) {
      href want = ref_scan(SK_SUM, &h, ax, TKC_FLOAT32);
      char what[96];
      snprintf(what, sizeof what, "%s: cumsum of a 7-d tensor along axis %d", dev, ax);
      tr_check(tkc_cumsum(x, ax), &want, 1e-5, 1e-5, what);
      tr_free(&want);
    }
    tr_free(&h);
  }
  TR_END();
}

/* ---------------------------------------------------------------- bad inputs */

static void test_bad_inputs(void **state) {
  (void)state;
  tr_begin();
  FOR_EACH_DEVICE(dev, ctx) {
    /* NULL in: NULL out, the first error kept */
    tkc_tensor *bad = tkc_reshape(tkc_full(ctx, TKC_FLOAT32, 1, (const int64_t[]){3}, 1), 1, (const int64_t[]){4});
    TR_EXPECT(bad == NULL, "reshape 3 -> 4 fails");
    char first[256];
    snprintf(first, sizeof first, "%s", tkc_last_error());
    for (int c = 0; c < NUCASES; c++) {
      TR_EXPECT(ucases[c].fn(NULL) == NULL && !strcmp(tkc_last_error(), first), "%s: %s(NULL) keeps the first error (now '%s')", dev,
                ucases[c].name, tkc_last_error());
    }
    tkc_tensor *(*const un[])(tkc_tensor *) = {tkc_isnan, tkc_isinf, tkc_isfinite, tkc_floor, tkc_ceil, tkc_round, tkc_trunc};
    for (size_t i = 0; i < sizeof un / sizeof un[0]; i++) TR_EXPECT(un[i](NULL) == NULL && !strcmp(tkc_last_error(), first), "%s: unary %zu(NULL)", dev, i);
    TR_EXPECT(!tkc_atan2(NULL, NULL) && !tkc_lerp(NULL, NULL, NULL) && !tkc_prod(NULL, 0, NULL, 0) && !tkc_var(NULL, 0, NULL, 0, 1) &&
                  !tkc_std(NULL, 0, NULL, 0, 1) && !tkc_logsumexp(NULL, 0, NULL, 0) && !tkc_any(NULL, 0, NULL, 0) &&
                  !tkc_all(NULL, 0, NULL, 0) && !tkc_sum_acc(NULL, 0, NULL, 0, TKC_FLOAT32) && !tkc_cumsum(NULL, 0) &&
                  !tkc_cumprod(NULL, 0) && !tkc_cummax(NULL, 0) && !tkc_elu(NULL, 1) && !tkc_leaky_relu(NULL, 0.1),
              "%s: NULL inputs give NULL", dev);
    TR_EXPECT(!strcmp(tkc_last_error(), first), "%s: the first error is kept (now '%s')", dev, tkc_last_error());
    /* wrong dtypes, bad parameters, bad axes */
    tkc_tensor *bl = tkc_full(ctx, TKC_BOOL, 1, (const int64_t[]){3}, 1), *f = tkc_full(ctx, TKC_FLOAT32, 2, (const int64_t[]){2, 3}, 1);
    TR_EXPECT_FAIL(tkc_floor(bl), TKC_EDTYPE, "floor(bool)");
    TR_EXPECT_FAIL(tkc_sign(bl), TKC_EDTYPE, "sign(bool)");
    TR_EXPECT_FAIL(tkc_clamp(bl, 0, 1), TKC_EDTYPE, "clamp(bool)");
    TR_EXPECT_FAIL(tkc_clamp(f, NAN, 1), TKC_EINVAL, "clamp(NaN lo)");
    TR_EXPECT_FAIL(tkc_leaky_relu(f, NAN), TKC_EINVAL, "leaky_relu(NaN slope)");
    TR_EXPECT_FAIL(tkc_elu(f, NAN), TKC_EINVAL, "elu(NaN alpha)");
    TR_EXPECT_FAIL(tkc_softplus(f, 0), TKC_EINVAL, "softplus(beta 0)");
    TR_EXPECT_FAIL(tkc_softplus(f, -1), TKC_EINVAL, "softplus(beta -1)");
    TR_EXPECT_FAIL(tkc_sum_acc(f, 0, NULL, 0, TKC_VOID), TKC_EDTYPE, "sum_acc(void acc)");
    TR_EXPECT_FAIL(tkc_var(f, 1, (const int[]){1}, 0, 4), TKC_EINVAL, "var(correction 4 > 3)");
    TR_EXPECT_FAIL(tkc_std(f, 0, NULL, 0, -1), TKC_EINVAL, "std(correction -1)");
    TR_EXPECT_FAIL(tkc_var(f, 0, NULL, 0, NAN), TKC_EINVAL, "var(correction NaN)");
    const int ax2 = 2, axm3 = -3, twice[2] = {0, -2};
    TR_EXPECT_FAIL(tkc_prod(f, 1, &ax2, 0), TKC_EINVAL, "prod(axis 2 of 2-D)");
    TR_EXPECT_FAIL(tkc_var(f, 1, &axm3, 0, 0), TKC_EINVAL, "var(axis -3 of 2-D)");
    TR_EXPECT_FAIL(tkc_logsumexp(f, 1, &ax2, 0), TKC_EINVAL, "logsumexp(axis 2)");
    TR_EXPECT_FAIL(tkc_any(f, 2, twice, 0), TKC_EINVAL, "any(axis given twice)");
    TR_EXPECT_FAIL(tkc_all(f, 1, &ax2, 0), TKC_EINVAL, "all(axis 2)");
    TR_EXPECT_FAIL(tkc_sum_acc(f, 1, &ax2, 0, TKC_FLOAT32), TKC_EINVAL, "sum_acc(axis 2)");
    TR_EXPECT_FAIL(tkc_prod(f, -1, NULL, 0), TKC_EINVAL, "prod(naxes -1)");
    TR_EXPECT_FAIL(tkc_cumsum(f, 2), TKC_EINVAL, "cumsum(axis 2)");
    TR_EXPECT_FAIL(tkc_cumprod(f, -3), TKC_EINVAL, "cumprod(axis -3)");
    TR_EXPECT_FAIL(tkc_cummax(tkc_scalar(ctx, TKC_FLOAT32, 1), 1), TKC_EINVAL, "cummax(0-d, axis 1)");
    TR_EXPECT_FAIL(tkc_atan2(f, tkc_full(ctx, TKC_FLOAT32, 1, (const int64_t[]){4}, 1)), TKC_ESHAPE, "atan2 of (2,3) and (4,)");
    TR_EXPECT_FAIL(tkc_lerp(f, f, tkc_full(ctx, TKC_FLOAT32, 1, (const int64_t[]){2}, 1)), TKC_ESHAPE, "lerp of (2,3) and (2,)");
    tkc_ctx *other = tkc_ctx_new("INTERP");
    TR_EXPECT_FAIL(tkc_atan2(f, tkc_scalar(other, TKC_FLOAT32, 1)), TKC_EINVAL, "atan2 across ctxs");
    tkc_ctx_free(other);
    /* a freed handle is an error, not a crash */
    tkc_tensor *gone = tkc_full(ctx, TKC_FLOAT32, 1, (const int64_t[]){2}, 1);
    tkc_tensor_free(gone);
    TR_EXPECT(tkc_any(gone, 0, NULL, 0) == NULL && tkc_erf(gone) == NULL, "%s: a freed input is refused", dev);
    TR_EXPECT(tr_ctx_works(ctx), "%s: ctx works after the failures", dev);
  }
  TR_END();
}

static int setup(void **state) {
  (void)state;
  interp = tkc_device_available("INTERP") ? tkc_ctx_new("INTERP") : NULL;
  return 0;
}
static int teardown(void **state) {
  (void)state;
  tkc_ctx_free(interp);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_elementwise), cmocka_unit_test(test_rounding_exact), cmocka_unit_test(test_special),
      cmocka_unit_test(test_reductions),  cmocka_unit_test(test_scans),          cmocka_unit_test(test_bad_inputs),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
