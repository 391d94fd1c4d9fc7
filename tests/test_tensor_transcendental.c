/* exp2/log2 (and exp/log/sigmoid built on them) on every device against libm in double: on the host
 * devices and INTERP, where they are polynomials (src/codegen/transcendental.c), within 1.5 ulp of
 * the correctly rounded float32 result for normal results (log2 just below 1 is the worst, 1.37), IEEE special values exact, and every host
 * device bit-identical to INTERP; on GPU devices (hardware exp2/log2) within a relative 1e-5 (absolute
 * 2^-21 for log2 in [0.5, 2], WGSL's bound), denormals aside.
 * Each input is checked at several vector widths (shapes with and without a vector axis). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "tensor_ref.h"

#define NSWEEP 4096
#define NVALS (NSWEEP + 32)

enum domain { DOM_EXP, DOM_LOG, DOM_SIN };

/* the inputs: a sweep over the interesting range plus the special values */
static int inputs(enum domain dom, float *v) {
  int n = 0;
  for (int i = 0; i < NSWEEP; i++) {
    double t = (double)i / (NSWEEP - 1);
    if (dom == DOM_LOG) v[n++] = (float)exp2(-149.0 + t * (127.99 + 149.0)); /* denormals up to 2^128 */
    else if (dom == DOM_EXP) v[n++] = (float)(-155.0 + t * 285.0);            /* past both ends of exp2 */
    else if (i < NSWEEP / 2) v[n++] = (float)(-40.0 + t * 160.0);             /* a few periods, densely */
    else v[n++] = (float)((i & 1 ? -1 : 1) * exp2(-140.0 + (t - 0.5) * 2 * 267.9)); /* every magnitude */
  }
  const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.0f, -1.0f, 0.5f, 2.0f, 127.99f, 128.0f, 128.5f, -126.0f, -127.5f,
                            -149.0f, -149.5f, -150.0f, -151.0f, 1e-45f, 1e-40f, 1.17549435e-38f, 3.4028235e38f, -3.4028235e38f,
                            0x1.fffffep+6f, -0x1.2bfffep+7f, -NAN, 0.75f, 1.5f, 0.999999f, 1.000001f, 1e-4f, 9.99e-5f, -1e-30f, 88.7f, -87.3f};
  /* sin: next to multiples of pi/2 (the reduction's hard cases) and at both sides of its 2^22 switch */
  const float sin_specials[] = {3.14159274f, -3.14159274f, 1.57079637f, 6.28318548f, 355.0f, 103993.0f, 4194303.5f, 4194304.0f, -4194305.0f,
                                16777216.0f, 1.0e10f, 1.0e20f, 1.0e30f, 1.6263e25f, 0x1p64f, 0x1p100f, 0x1p127f, 3.4028235e38f,
                                -3.4028235e38f, 0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f, -1e-40f, 1.17549435e-38f, 1e-20f,
                                -1e-5f, 0.785398185f, 2.35619450f, 1.0e5f};
  const float *sp = dom == DOM_SIN ? sin_specials : specials;
  size_t nsp = dom == DOM_SIN ? sizeof sin_specials / sizeof *sin_specials : sizeof specials / sizeof *specials;
  for (size_t k = 0; k < nsp && n < NVALS; k++) v[n++] = sp[k];
  return n;
}

/* ulps between got and the double result want rounded to float32 (inf when one is special and the other not) */
static double ulps(float got, double want) {
  float w = (float)want;
  if (isnan(w) || isnan(got)) return isnan(w) && isnan(got) ? 0 : INFINITY;
  if (isinf(w) || isinf(got)) return got == w ? 0 : INFINITY;
  if (got == w) return 0;
  float a = fabsf(w), up = nextafterf(a, INFINITY) - a;
  if (a == 0) up = 1.4e-45f;
  return fabs((double)got - want) / up;
}

typedef struct fn {
  const char *name;
  tkc_tensor *(*op)(tkc_tensor *);
  double (*ref)(double);
  enum domain dom;
} fn;

static double ref_exp2(double x) { return exp2(x); }
static double ref_log2(double x) { return log2(x); }
static double ref_sin(double x) { return sin(x); } /* glibc's sin is correctly rounded in double */

static const fn FNS[] = {
    {"exp2", tkc_exp2, ref_exp2, DOM_EXP},
    {"log2", tkc_log2, ref_log2, DOM_LOG},
    {"sin", tkc_sin, ref_sin, DOM_SIN},
};

static bool is_gpu(const char *dev) {
  tkc_device *d = tkc_device_get(dev);
  const tkc_renderer *r = d ? tkc_device_renderer(d) : NULL;
  return r && r->has_local;
}

/* f over v on ctx as a (rows, cols) tensor; *out malloc'ed */
static float *run(tkc_ctx *ctx, const fn *f, const float *v, int n, int cols) {
  int64_t shape[2] = {n / cols, cols};
  tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 2, shape, v), *y = x ? f->op(x) : NULL;
  float *out = malloc((size_t)n * sizeof *out);
  if (!y || !out || tkc_copy_out(y, out, (size_t)n * sizeof *out)) {
    free(out);
    out = NULL;
  }
  tkc_tensor_free(y);
  tkc_tensor_free(x);
  return out;
}

static void test_exp2_log2_accuracy(void **state) {
  (void)state;
  tr_begin();
  static float v[NVALS];
  for (size_t k = 0; k < sizeof FNS / sizeof *FNS; k++) {
    const fn *f = &FNS[k];
    int n = inputs(f->dom, v);
    n -= n % 32; /* a multiple of every vector width */
    tkc_ctx *ref_ctx = tkc_ctx_new("INTERP");
    float *interp = run(ref_ctx, f, v, n, 32);
    TR_EXPECT(interp != NULL, "INTERP %s", f->name);
    FOR_EACH_DEVICE(dev, ctx) {
      bool gpu = is_gpu(dev);
      static const int widths[3] = {32, 1, 8};
      for (int w = 0; w < 3; w++) {
        float *got = run(ctx, f, v, n, widths[w]);
        TR_EXPECT(got != NULL, "%s: %s", dev, f->name);
        double worst = 0;
        int at = 0, differ = 0;
        for (int i = 0; got && i < n; i++) {
          double want = f->ref((double)v[i]), e = ulps(got[i], want);
          bool subnormal = fabs(want) < 1.17549435e-38 || (fabsf(v[i]) < 1.17549435e-38f && v[i] != 0);
          if (gpu) { /* hardware: relative 1e-5; denormal inputs and results may flush (lavapipe does) */
            if (subnormal) continue;
            float w32 = (float)want;
            bool special = isinf(w32) || isnan(w32) || isinf(got[i]) || isnan(got[i]);
            if (f->dom == DOM_SIN) { /* absolute 2^-11 on [-pi, pi] (WGSL's bound); wider arguments: only nan for inf/nan */
              if (fabsf(v[i]) > 3.14159265f && !isnan(w32)) continue;
              if (!special) e = fabs((double)got[i] - want) <= 0x1p-11 ? 0 : 10;
            } else {
              double tol = f->dom == DOM_LOG && v[i] >= 0.5f && v[i] <= 2.0f ? 0x1p-21 : 1e-5 * fabs(want); /* WGSL's log2 bound near 1 */
              if (!special) e = fabs((double)got[i] - want) <= tol ? 0 : 10;
            }
          } else if (fabs(want) < 1.17549435e-38 && e <= 2) e = 0; /* a denormal result: within 2 of its ulps */
          if (e > worst) worst = e, at = i;
          if (!gpu && interp && memcmp(&got[i], &interp[i], 4)) differ++;
        }
        TR_EXPECT(worst <= 1.5, "%s: %s(%.9g) = %.9g, libm %.9g: %.2f ulp (width %d)", dev, f->name, v[at], got ? got[at] : 0.0, f->ref(v[at]), worst, widths[w]);
        TR_EXPECT(!differ, "%s: %s: %d of %d results differ from INTERP's bits (width %d)", dev, f->name, differ, n, widths[w]);
        free(got);
      }
    }
    free(interp);
    tkc_ctx_free(ref_ctx);
  }
  TR_END();
}

/* exp, log, sigmoid and softmax built on them, against libm (relative 2e-6: two roundings more) and
 * float16 through float32 */
static void test_derived(void **state) {
  (void)state;
  tr_begin();
  FOR_EACH_DEVICE(dev, ctx) {
    enum { N = 64 };
    float x[N], e[N], l[N], s[N];
    for (int i = 0; i < N; i++) x[i] = -20.0f + 40.0f * (float)i / (N - 1);
    tkc_tensor *t = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){N}, x), *ax = tkc_abs(t);
    TR_EXPECT(tkc_copy_out(tkc_exp(t), e, sizeof e) == TKC_OK, "%s: exp", dev);
    TR_EXPECT(tkc_copy_out(tkc_log(ax), l, sizeof l) == TKC_OK, "%s: log", dev);
    TR_EXPECT(tkc_copy_out(tkc_sigmoid(t), s, sizeof s) == TKC_OK, "%s: sigmoid", dev);
    for (int i = 0; i < N; i++) {
      double we = exp((double)x[i]), wl = log(fabs((double)x[i])), ws = 1 / (1 + exp(-(double)x[i]));
      TR_EXPECT(fabs(e[i] - we) <= 2e-6 * we, "%s: exp(%g) = %.9g, want %.9g", dev, x[i], e[i], we);
      TR_EXPECT(fabs(l[i] - wl) <= 2e-6 * fabs(wl) + 1e-7, "%s: log(%g) = %.9g, want %.9g", dev, fabs(x[i]), l[i], wl);
      TR_EXPECT(fabs(s[i] - ws) <= 2e-6 * ws + 1e-9, "%s: sigmoid(%g) = %.9g, want %.9g", dev, x[i], s[i], ws);
    }
    if (tr_dev_supports(dev, TKC_FLOAT16)) {
      href h = tr_new(TKC_FLOAT16, TR_SHAPE(16));
      for (int i = 0; i < 16; i++) h.v[i].f = ref_half_value(ref_half_bits(-8.0 + i)); /* -8 .. 7: exact halves */
      tkc_tensor *th = tr_upload(ctx, &h), *eh = tkc_exp2(th);
      uint16_t bits[16];
      TR_EXPECT(eh && tkc_copy_out(eh, bits, sizeof bits) == TKC_OK, "%s: float16 exp2", dev);
      for (int i = 0; i < 16; i++) TR_EXPECT(ref_half_value(bits[i]) == exp2(-8.0 + i), "%s: float16 exp2(%d) = %g", dev, i - 8, ref_half_value(bits[i]));
      tr_free(&h);
    }
  }
  TR_END();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exp2_log2_accuracy),
      cmocka_unit_test(test_derived),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
