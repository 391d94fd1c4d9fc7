/* The fp8 dtypes (float8_e4m3fn, float8_e5m2) as storage types, on every device, against plain-C
 * references written here (not the library's converters):
 *  - the references themselves: the decoder by the format's formula, the encoder as the nearest of the
 *    256 values (ties to the even code; past the largest finite value by half a step: NaN for e4m3fn,
 *    inf for e5m2), agreeing with tkc_fp8_from_double / tkc_fp8_to_float on a sweep of doubles;
 *  - decode: all 256 bit patterns of each type cast to every dtype the device holds (float32 bit for
 *    bit, NaN as NaN of the same sign; ints truncated and saturated, NaN -> 0);
 *  - encode: float32 values (ties at every step, subnormals, the largest values, the overflow
 *    boundaries, NaN, +-inf, -0.0, every fp8 value and its neighbours), float64 values whose rounding
 *    through float32 would differ, all float16 bit patterns, ints, bool, and fp8 of the other format;
 *  - tensors of fp8: from data, tkc_full, arithmetic (done in float32, rounded back), promotion;
 *  - PTX (no GPU here): the casts render and assemble with ptxas; WGSL renders;
 *  - refusals: dtypes out of range, the converters given another dtype.
 * Per-row int8 weights (tkc_quantize_int8_rows / tkc_dequantize_int8_rows): q and scale against plain
 * C, the dequantized matmul one kernel and against float64, and bad inputs. */
#include <float.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>
#include <cmocka.h>
#include "tensor_ref.h"
#include "tkc/ops_math.h"
#include "tkc/ops_nn.h"
#include "tkc/ops_shape.h"
#include "ptxas_run.h"

static const tkc_dtype fp8s[2] = {TKC_FLOAT8_E4M3FN, TKC_FLOAT8_E5M2};

/* ---------------------------------------------------------------- the references */

/* the value of code b (NaN, +-inf included) */
static double ref_decode(tkc_dtype dt, uint8_t b) {
  bool e4 = dt == TKC_FLOAT8_E4M3FN;
  int mb = e4 ? 3 : 2, bias = e4 ? 7 : 15;
  int ex = (b & 0x7f) >> mb, m = b & ((1 << mb) - 1);
  double v;
  if (e4 && (b & 0x7f) == 0x7f) v = NAN;
  else if (!e4 && ex == 31) v = m ? NAN : INFINITY;
  else if (ex == 0) v = ldexp(m, 1 - bias - mb);
  else v = ldexp(1.0 + ldexp(m, -mb), ex - bias);
  return b & 0x80 ? -v : v;
}

/* x as the nearest code: a search over the positive codes 0..top plus one step past the largest
 * finite value (the overflow code), ties to the even code */
static uint8_t ref_encode(tkc_dtype dt, double x) {
  bool e4 = dt == TKC_FLOAT8_E4M3FN;
  int top = e4 ? 0x7e : 0x7b;
  uint8_t sign = signbit(x) ? 0x80 : 0, over = e4 ? 0x7f : 0x7c;
  if (isnan(x)) return sign | (e4 ? 0x7f : 0x7e);
  double a = fabs(x), past = e4 ? 480.0 : 65536.0; /* the value the overflow code would have */
  if (a >= past) return sign | over;
  int lo = 0;
  while (lo < top && ref_decode(dt, (uint8_t)(lo + 1)) <= a) lo++;
  double vlo = ref_decode(dt, (uint8_t)lo), vhi = lo < top ? ref_decode(dt, (uint8_t)(lo + 1)) : past;
  int code = a - vlo < vhi - a ? lo : a - vlo > vhi - a ? lo + 1 : (lo % 2 == 0 ? lo : lo + 1);
  if (code > top) return sign | over;
  return sign | (uint8_t)code;
}

/* tkc's float -> int cast: truncated toward zero, saturated, NaN -> 0 */
static int64_t ref_f2i(tkc_dtype dt, double x) {
  if (isnan(x)) return 0;
  double lo = tr_isu(dt) ? 0 : -ldexp(1, (int)tr_size(dt) * 8 - 1), hi = tr_isu(dt) ? ldexp(1, (int)tr_size(dt) * 8) - 1 : -lo - 1;
  double t = trunc(x);
  int bits = (int)tr_size(dt) * 8;
  if (t < lo) t = lo;
  if (t > hi) { /* saturated (2^64 - 1 and 2^63 - 1 are not doubles) */
    if (tr_isu(dt)) return bits == 64 ? -1 : (int64_t)((UINT64_C(1) << bits) - 1);
    return bits == 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << (bits - 1)) - 1);
  }
  return tr_isu(dt) ? (int64_t)(uint64_t)t : (int64_t)t;
}

static bool same_float(double got, double want) {
  if (isnan(want)) return isnan(got) && signbit(got) == signbit(want);
  return got == want && signbit(got) == signbit(want);
}

/* the float32 values the encoders are checked on */
static size_t sweep_f32(float *v, size_t cap) {
  size_t n = 0;
#define ADD(x) do { if (n < cap) v[n++] = (float)(x); } while (0)
  for (int d = 0; d < 2; d++)
    for (int b = 0; b < 128; b++) { /* every value, the midpoints to the next (ties) and beside them */
      double a = ref_decode(fp8s[d], (uint8_t)b), c = ref_decode(fp8s[d], (uint8_t)(b + 1));
      if (isnan(a) || isinf(a)) continue;
      if (b + 1 >= 128 || isnan(c) || isinf(c)) c = d == 0 ? 480.0 : 65536.0;
      double mid = (a + c) / 2;
      float list[] = {(float)a, (float)mid, nextafterf((float)mid, 0), nextafterf((float)mid, INFINITY), (float)(a + (c - a) / 4)};
      for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) {
        ADD(list[i]);
        ADD(-list[i]);
      }
    }
  float specials[] = {0.0f, -0.0f, NAN, -NAN, INFINITY, -INFINITY, 448.0f, 449.0f, 464.0f, 464.5f, 465.0f, 479.9f, 480.0f, 1e4f,
                      57344.0f, 57345.0f, 61439.0f, 61440.0f, 61441.0f, 65504.0f, 1e30f, FLT_MAX, 1e-30f, 0x1p-10f, 0x1p-17f,
                      0x1p-149f, 0x1.8p-10f, 0x1.8p-17f, 0x1p-7f, 0x1.fffffep-7f, 3.14159265f, 0.1f, 1.0f / 3};
  for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) {
    ADD(specials[i]);
    ADD(-specials[i]);
  }
  uint32_t s = 12345;
  for (int i = 0; i < 500; i++) { /* random magnitudes from 2^-20 to 2^17 */
    s = s * 1664525u + 1013904223u;
    ADD(ldexp((double)(s >> 8) / (1 << 24), (int)(s % 38) - 20) * (s & 1 ? -1 : 1));
  }
#undef ADD
  return n;
}

/* ---------------------------------------------------------------- 0: the references agree with the library's converters */

static void test_reference(void **state) {
  (void)state;
  tr_begin();
  for (int d = 0; d < 2; d++) {
    tkc_dtype dt = fp8s[d];
    for (int b = 0; b < 256; b++) {
      double want = ref_decode(dt, (uint8_t)b);
      TR_EXPECT(same_float(tkc_fp8_to_float((uint8_t)b, dt), want), "%s decode 0x%02x", tkc_dtype_name(dt), b);
      if (!isnan(want)) TR_EXPECT(ref_encode(dt, want) == b, "%s ref round trip 0x%02x -> 0x%02x", tkc_dtype_name(dt), b, ref_encode(dt, want));
    }
    float v[4096];
    size_t n = sweep_f32(v, 4096);
    for (size_t i = 0; i < n; i++)
      TR_EXPECT(tkc_fp8_from_double(v[i], dt) == ref_encode(dt, v[i]), "%s encode %.9g: 0x%02x, reference 0x%02x", tkc_dtype_name(dt), v[i],
                tkc_fp8_from_double(v[i], dt), ref_encode(dt, v[i]));
    /* one rounding from a double (ml_dtypes: 1 + 2^-4 + 2^-40 -> 1.125 in e4m3fn, not 1.0 through float32) */
    TR_EXPECT(tkc_fp8_from_double(1 + 0x1p-4 + 0x1p-40, TKC_FLOAT8_E4M3FN) == 0x39, "double rounding");
  }
  /* fixed points from ml_dtypes (numpy astype) */
  TR_EXPECT(tkc_fp8_from_double(464.0, TKC_FLOAT8_E4M3FN) == 0x7e && tkc_fp8_from_double(465.0, TKC_FLOAT8_E4M3FN) == 0x7f, "e4m3fn 464/465");
  TR_EXPECT(tkc_fp8_from_double(-INFINITY, TKC_FLOAT8_E4M3FN) == 0xff && tkc_fp8_from_double(-NAN, TKC_FLOAT8_E5M2) == 0xfe, "inf/NaN");
  TR_EXPECT(tkc_fp8_from_double(61439.0, TKC_FLOAT8_E5M2) == 0x7b && tkc_fp8_from_double(61440.0, TKC_FLOAT8_E5M2) == 0x7c, "e5m2 61440");
  TR_EXPECT(tkc_fp8_from_double(0x1.8p-9, TKC_FLOAT8_E4M3FN) == 0x02 && tkc_fp8_from_double(0x1p-10, TKC_FLOAT8_E4M3FN) == 0, "subnormal ties");
  /* dtype facts */
  TR_EXPECT(!strcmp(tkc_dtype_name(TKC_FLOAT8_E4M3FN), "float8_e4m3fn") && !strcmp(tkc_dtype_name(TKC_FLOAT8_E5M2), "float8_e5m2"), "names");
  TR_EXPECT(tkc_dtype_size(TKC_FLOAT8_E4M3FN) == 1 && tkc_dtype_is_float(TKC_FLOAT8_E5M2) && !tkc_dtype_is_int(TKC_FLOAT8_E5M2), "facts");
  TR_EXPECT(TKC_VOID == 13 && TKC_FLOAT8_E4M3FN == 14 && TKC_FLOAT8_E5M2 == 15, "appended after the existing values");
  /* fp8 below float16 / bfloat16 only: ints with fp8 -> float16, e4m3fn with e5m2 -> float16, fp8 with float32 -> float32 */
  TR_EXPECT(tkc_least_upper_dtype(TKC_INT32, TKC_FLOAT8_E4M3FN) == TKC_FLOAT16, "int32 + e4m3fn");
  TR_EXPECT(tkc_least_upper_dtype(TKC_BOOL, TKC_FLOAT8_E5M2) == TKC_FLOAT16, "bool + e5m2");
  TR_EXPECT(tkc_least_upper_dtype(TKC_FLOAT8_E5M2, TKC_FLOAT8_E5M2) == TKC_FLOAT8_E5M2, "e5m2 + e5m2");
  TR_EXPECT(tkc_least_upper_dtype(TKC_INT8, TKC_UINT64) == TKC_FLOAT16, "int8 + uint64 unchanged");
  TR_EXPECT(tkc_least_upper_dtype(TKC_FLOAT8_E5M2, TKC_FLOAT8_E4M3FN) == TKC_FLOAT16, "e5m2 + e4m3fn");
  TR_EXPECT(tkc_least_upper_dtype(TKC_FLOAT8_E5M2, TKC_BFLOAT16) == TKC_BFLOAT16, "e5m2 + bf16");
  TR_EXPECT(tkc_least_upper_dtype(TKC_FLOAT8_E5M2, TKC_FLOAT32) == TKC_FLOAT32, "e5m2 + f32");
  TR_EXPECT(tkc_least_upper_dtype(TKC_INT64, TKC_FLOAT16) == TKC_FLOAT16 && tkc_least_upper_dtype(TKC_UINT8, TKC_INT8) == TKC_INT16, "old pairs");
  /* the converters given another dtype */
  TR_EXPECT(tkc_fp8_from_double(1.0, TKC_FLOAT32) == 0 && tkc_fp8_to_float(0x38, TKC_INT8) == 0.0f, "not an fp8 dtype: 0");
  TR_END();
}

/* ---------------------------------------------------------------- 1: decode on every device */

static const tkc_dtype targets[] = {TKC_BOOL,  TKC_INT8,    TKC_UINT8,    TKC_INT16,   TKC_UINT16,       TKC_INT32,      TKC_UINT32, TKC_INT64,
                                    TKC_UINT64, TKC_FLOAT16, TKC_BFLOAT16, TKC_FLOAT32, TKC_FLOAT64};
#define NTARGETS ((int)(sizeof targets / sizeof targets[0]))

/* what casting value x (an fp8 value) to dt stores, read back through tr_load */
static rv ref_cast_to(tkc_dtype dt, double x) {
  rv r = {0, 0};
  if (dt == TKC_BOOL) r.i = x != 0; /* NaN != 0 */
  else if (tr_isint(dt)) r.i = tr_wrap(dt, (uint64_t)ref_f2i(dt, x));
  else r.f = isnan(x) ? x : tr_round(dt, x); /* NaN keeps its sign */
  return r;
}

static void test_decode(void **state) {
  (void)state;
  tr_begin();
  uint8_t all[256];
  for (int b = 0; b < 256; b++) all[b] = (uint8_t)b;
  int64_t n = 256;
  FOR_EACH_DEVICE(dev, ctx) {
    for (int d = 0; d < 2; d++) {
      tkc_tensor *t = tkc_tensor_new(ctx, fp8s[d], 1, &n, all);
      TR_EXPECT(t && tkc_dtype_of(t) == fp8s[d], "%s %s from data", dev, tkc_dtype_name(fp8s[d]));
      for (int k = 0; k < NTARGETS; k++) {
        tkc_dtype to = targets[k];
        if (!tr_dev_supports(dev, to)) continue;
        tkc_tensor *y = tkc_cast(t, to);
        uint8_t out[256 * 8];
        tkc_status st = y ? tkc_copy_out(y, out, (size_t)n * tr_size(to)) : tkc_last_status();
        TR_EXPECT(st == TKC_OK, "%s %s -> %s", dev, tkc_dtype_name(fp8s[d]), tkc_dtype_name(to));
        for (int b = 0; b < 256 && st == TKC_OK; b++) {
          double x = ref_decode(fp8s[d], (uint8_t)b);
          rv got = tr_load(to, out, (size_t)b), want = ref_cast_to(to, x);
          bool ok = tr_isf(to) ? same_float(got.f, want.f) : got.i == want.i;
          if (to == TKC_FLOAT32 && ok && !isnan(x)) { /* float32: bit for bit */
            float w = (float)x;
            ok = !memcmp(out + 4 * b, &w, 4);
          }
          TR_EXPECT(ok, "%s %s 0x%02x (%g) -> %s: got %g / %lld, want %g / %lld", dev, tkc_dtype_name(fp8s[d]), b, x, tkc_dtype_name(to), got.f,
                    (long long)got.i, want.f, (long long)want.i);
        }
        tkc_tensor_free(y);
      }
      tkc_tensor_free(t);
    }
  }
  TR_END();
}

/* ---------------------------------------------------------------- 2: encode on every device */

/* values of dtype `from` (host data of n elements, their values in vals) cast to each fp8 dtype */
static void check_encode(tkc_ctx *ctx, const char *dev, tkc_dtype from, const void *data, const double *vals, int64_t n) {
  tkc_tensor *x = tkc_tensor_new(ctx, from, 1, &n, data);
  TR_EXPECT(x, "%s %s from data", dev, tkc_dtype_name(from));
  uint8_t *out = malloc((size_t)n);
  for (int d = 0; d < 2; d++) {
    tkc_tensor *y = tkc_cast(x, fp8s[d]);
    tkc_status st = y ? tkc_copy_out(y, out, (size_t)n) : tkc_last_status();
    TR_EXPECT(st == TKC_OK, "%s %s -> %s", dev, tkc_dtype_name(from), tkc_dtype_name(fp8s[d]));
    int bad = 0;
    for (int64_t i = 0; i < n && st == TKC_OK && bad < 8; i++) {
      /* (a cast to its own dtype changes nothing: NaN payloads stay) */
      uint8_t want = from == fp8s[d] ? ((const uint8_t *)data)[i] : ref_encode(fp8s[d], vals[i]);
      if (out[i] != want) {
        bad++;
        tr_problem("%s %s %.17g -> %s: 0x%02x, want 0x%02x", dev, tkc_dtype_name(from), vals[i], tkc_dtype_name(fp8s[d]), out[i], want);
      }
    }
    tkc_tensor_free(y);
  }
  tkc_tensor_free(x);
  free(out);
}

static void test_encode(void **state) {
  (void)state;
  tr_begin();
  enum { CAP = 4096 };
  float *f32 = malloc(CAP * 4);
  double *v = malloc(CAP * 8), *f64 = malloc(CAP * 8);
  size_t n = sweep_f32(f32, CAP);
  FOR_EACH_DEVICE(dev, ctx) {
    /* float32 */
    for (size_t i = 0; i < n; i++) v[i] = f32[i];
    check_encode(ctx, dev, TKC_FLOAT32, f32, v, (int64_t)n);
    /* float64: the sweep, and values one rounding apart from the rounding through float32 */
    if (tr_dev_supports(dev, TKC_FLOAT64)) {
      size_t m = 0;
      for (size_t i = 0; i < n; i++) f64[m++] = f32[i];
      for (int d = 0; d < 2; d++)
        for (int b = 0; b < 127; b++) {
          double a = ref_decode(fp8s[d], (uint8_t)b), c = ref_decode(fp8s[d], (uint8_t)(b + 1));
          if (isnan(c) || isinf(c)) continue;
          double mid = (a + c) / 2;
          f64[m++] = mid + ldexp(mid, -40), f64[m++] = -(mid - ldexp(mid, -40)), f64[m++] = mid + ldexp(mid, -60);
        }
      f64[m++] = 1e300, f64[m++] = -1e-300, f64[m++] = 4.9e-324;
      check_encode(ctx, dev, TKC_FLOAT64, f64, f64, (int64_t)m);
    }
    /* every float16 bit pattern */
    if (tr_dev_supports(dev, TKC_FLOAT16)) {
      uint16_t *h = malloc(65536 * 2);
      double *hv = malloc(65536 * 8);
      for (int i = 0; i < 65536; i++) {
        h[i] = (uint16_t)i;
        bool nan = (i & 0x7c00) == 0x7c00 && (i & 0x3ff);
        hv[i] = nan ? (i & 0x8000 ? -NAN : NAN) : ref_half_value((uint16_t)i);
      }
      check_encode(ctx, dev, TKC_FLOAT16, h, hv, 65536);
      free(h), free(hv);
    }
    /* bfloat16: the top halves of the float32 sweep */
    {
      uint16_t bf[CAP];
      for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &f32[i], 4);
        bf[i] = (uint16_t)(u >> 16);
        u &= 0xffff0000u;
        float f;
        memcpy(&f, &u, 4);
        v[i] = f;
      }
      check_encode(ctx, dev, TKC_BFLOAT16, bf, v, (int64_t)n);
    }
    /* ints and bool */
    int32_t i32[1200];
    for (int i = 0; i < 1200; i++) i32[i] = i < 1100 ? i - 550 : (i - 1100) * 1000 + 57000, v[i] = i32[i];
    check_encode(ctx, dev, TKC_INT32, i32, v, 1200);
    uint8_t u8[256], b8[2] = {0, 1};
    for (int i = 0; i < 256; i++) u8[i] = (uint8_t)i, v[i] = i;
    check_encode(ctx, dev, TKC_UINT8, u8, v, 256);
    int8_t i8[256];
    for (int i = 0; i < 256; i++) i8[i] = (int8_t)(i - 128), v[i] = i - 128;
    check_encode(ctx, dev, TKC_INT8, i8, v, 256);
    v[0] = 0, v[1] = 1;
    check_encode(ctx, dev, TKC_BOOL, b8, v, 2);
    if (tr_dev_supports(dev, TKC_INT64)) {
      int64_t i64[4] = {INT64_MIN, -448, 57344, INT64_MAX};
      for (int i = 0; i < 4; i++) v[i] = (double)i64[i];
      check_encode(ctx, dev, TKC_INT64, i64, v, 4);
    }
    /* fp8 of the other format: e4m3fn <-> e5m2 (all 256 codes; the reference through the value) */
    for (int d = 0; d < 2; d++) {
      uint8_t all[256];
      for (int b = 0; b < 256; b++) all[b] = (uint8_t)b, v[b] = ref_decode(fp8s[d], (uint8_t)b);
      check_encode(ctx, dev, fp8s[d], all, v, 256);
    }
  }
  free(f32), free(v), free(f64);
  TR_END();
}

/* ---------------------------------------------------------------- 3: tensors of fp8 */

static void test_tensors(void **state) {
  (void)state;
  tr_begin();
  FOR_EACH_DEVICE(dev, ctx) {
    for (int d = 0; d < 2; d++) {
      tkc_dtype dt = fp8s[d];
      const char *nm = tkc_dtype_name(dt);
      int64_t n = 200, sh[2] = {10, 20};
      uint8_t a[200], b[200], out[200];
      for (int i = 0; i < 200; i++) a[i] = (uint8_t)(i * 37 + 11), b[i] = (uint8_t)(i * 91 + 3);
      tkc_tensor *ta = tkc_tensor_new(ctx, dt, 1, &n, a), *tb = tkc_tensor_new(ctx, dt, 1, &n, b);
      /* a + b, a * b, max(a, b), -a: in fp8, i.e. the float32 op (the device's, NaN handling included)
       * on the values, rounded once: against the op on float32 tensors of the values */
      float av[200], bv[200], fo[200];
      for (int i = 0; i < 200; i++) av[i] = (float)ref_decode(dt, a[i]), bv[i] = (float)ref_decode(dt, b[i]);
      tkc_tensor *fa = tkc_tensor_new(ctx, TKC_FLOAT32, 1, &n, av), *fb = tkc_tensor_new(ctx, TKC_FLOAT32, 1, &n, bv);
      tkc_tensor *sum = tkc_add(ta, tb), *prod = tkc_mul(ta, tb), *mx = tkc_maximum(ta, tb), *ng = tkc_neg(ta);
      tkc_tensor *fsum = tkc_add(fa, fb), *fprod = tkc_mul(fa, fb), *fmx = tkc_maximum(fa, fb), *fng = tkc_neg(fa);
      TR_EXPECT(sum && tkc_dtype_of(sum) == dt, "%s %s + %s is %s", dev, nm, nm, nm);
      tkc_tensor *res[4] = {sum, prod, mx, ng}, *fres[4] = {fsum, fprod, fmx, fng};
      for (int k = 0; k < 4; k++) {
        TR_EXPECT(tkc_copy_out(res[k], out, 200) == TKC_OK && tkc_copy_out(fres[k], fo, 800) == TKC_OK, "%s %s op %d", dev, nm, k);
        for (int i = 0; i < 200; i++) {
          if (k == 2 && !isnan(av[i]) && !isnan(bv[i])) TR_EXPECT(fo[i] == fmaxf(av[i], bv[i]), "%s float32 max", dev);
          uint8_t want = ref_encode(dt, fo[i]);
          TR_EXPECT(out[i] == want, "%s %s op %d [%d]: %g, %g -> 0x%02x, want 0x%02x (%g)", dev, nm, k, i, av[i], bv[i], out[i], want, fo[i]);
        }
      }
      tkc_tensor *fts[] = {fa, fb, fsum, fprod, fmx, fng};
      for (size_t i = 0; i < sizeof fts / sizeof fts[0]; i++) tkc_tensor_free(fts[i]);
      /* compares are exact; an int scalar gives float16; float32 wins */
      tkc_tensor *lt = tkc_lt(ta, tb), *pi = tkc_add(ta, tkc_scalar(ctx, TKC_INT32, 1)), *pf = tkc_add(ta, tkc_scalar(ctx, TKC_FLOAT32, 0.5));
      TR_EXPECT(pi && tkc_dtype_of(pi) == TKC_FLOAT16 && pf && tkc_dtype_of(pf) == TKC_FLOAT32, "%s %s promotion", dev, nm);
      uint8_t lto[200];
      float pfo[200];
      TR_EXPECT(tkc_copy_out(lt, lto, 200) == TKC_OK && tkc_copy_out(pf, pfo, 800) == TKC_OK, "%s %s compare, +float", dev, nm);
      for (int i = 0; i < 200; i++) {
        double x = ref_decode(dt, a[i]), y = ref_decode(dt, b[i]);
        TR_EXPECT(lto[i] == (x < y), "%s %s %g < %g", dev, nm, x, y);
        TR_EXPECT(same_float(pfo[i], (double)((float)x + 0.5f)), "%s %s %g + 0.5f: %g", dev, nm, x, pfo[i]);
      }
      /* full, a 2-d view, a sum (accumulated in float32, rounded to fp8 once) */
      tkc_tensor *fl = tkc_full(ctx, dt, 2, sh, 1.3);
      TR_EXPECT(tkc_copy_out(fl, out, 200) == TKC_OK && out[0] == ref_encode(dt, 1.3) && out[199] == out[0], "%s %s full 1.3 -> 0x%02x", dev, nm, out[0]);
      int axis = 1;
      uint8_t small[200];
      for (int i = 0; i < 200; i++) small[i] = ref_encode(dt, (i % 7) * 0.25 - 0.5);
      tkc_tensor *ts = tkc_tensor_new(ctx, dt, 2, sh, small), *s = tkc_sum(ts, 1, &axis, 0);
      TR_EXPECT(s && tkc_dtype_of(s) == dt && tkc_copy_out(s, out, 10) == TKC_OK, "%s %s sum", dev, nm);
      for (int r = 0; r < 10; r++) {
        double acc = 0;
        for (int c = 0; c < 20; c++) acc += ref_decode(dt, small[r * 20 + c]);
        TR_EXPECT(out[r] == ref_encode(dt, acc), "%s %s sum row %d: 0x%02x, want %g (0x%02x)", dev, nm, r, out[r], acc, ref_encode(dt, acc));
      }
      /* math functions: in float32, rounded once (exp(3) = 20.09: 20 in both formats, not 2^(3 * 1.5)) */
      tkc_tensor *e3 = tkc_exp(tkc_full(ctx, dt, 1, &n, 3.0)), *l2 = tkc_log2(tkc_full(ctx, dt, 1, &n, 12.0));
      uint8_t eo[200], lo2[200];
      TR_EXPECT(e3 && tkc_dtype_of(e3) == dt && tkc_copy_out(e3, eo, 200) == TKC_OK && tkc_copy_out(l2, lo2, 200) == TKC_OK, "%s %s exp, log2", dev, nm);
      TR_EXPECT(eo[0] == ref_encode(dt, 20.0) && eo[199] == eo[0], "%s %s exp(3) = %g, want 20", dev, nm, ref_decode(dt, eo[0]));
      TR_EXPECT(lo2[0] == ref_encode(dt, log2(12.0)), "%s %s log2(12) = %g, want %g", dev, nm, ref_decode(dt, lo2[0]), ref_decode(dt, ref_encode(dt, log2(12.0))));
      tkc_tensor_free(e3), tkc_tensor_free(l2);
      /* max / min along rows (e4m3fn has no -inf: the max starts from its lowest value, -448) */
      uint8_t neg[200];
      for (int i = 0; i < 200; i++) neg[i] = ref_encode(dt, -((i * 37) % 23) * 3.0 - 30.0); /* all below -30, some far */
      tkc_tensor *tn = tkc_tensor_new(ctx, dt, 2, sh, neg), *mxr = tkc_max(tn, 1, &axis, 0), *mnr = tkc_min(tn, 1, &axis, 0);
      uint8_t mo[10], no[10];
      TR_EXPECT(mxr && tkc_dtype_of(mxr) == dt && tkc_copy_out(mxr, mo, 10) == TKC_OK && tkc_copy_out(mnr, no, 10) == TKC_OK, "%s %s max/min", dev, nm);
      for (int r = 0; r < 10; r++) {
        double hi = -INFINITY, lo = INFINITY;
        for (int c = 0; c < 20; c++) hi = fmax(hi, ref_decode(dt, neg[r * 20 + c])), lo = fmin(lo, ref_decode(dt, neg[r * 20 + c]));
        TR_EXPECT(ref_decode(dt, mo[r]) == hi && ref_decode(dt, no[r]) == lo, "%s %s row %d max %g min %g, want %g %g", dev, nm, r,
                  ref_decode(dt, mo[r]), ref_decode(dt, no[r]), hi, lo);
      }
      tkc_tensor_free(tn), tkc_tensor_free(mxr), tkc_tensor_free(mnr);
      /* bitcast to and from int8 moves the bits */
      tkc_tensor *bc = tkc_bitcast(ta, TKC_INT8), *back = tkc_bitcast(bc, dt);
      int8_t bco[200];
      TR_EXPECT(tkc_copy_out(bc, bco, 200) == TKC_OK && !memcmp(bco, a, 200) && tkc_copy_out(back, out, 200) == TKC_OK && !memcmp(out, a, 200),
                "%s %s bitcast", dev, nm);
      /* the value of one element (tkc_item reads the byte on the host) */
      double it = 0;
      tkc_tensor *one = tkc_shrink(ta, (int64_t[]){5, 6});
      TR_EXPECT(tkc_item(one, &it) == TKC_OK && same_float(it, ref_decode(dt, a[5])), "%s %s item %g, want %g", dev, nm, it, ref_decode(dt, a[5]));
      tkc_tensor_free(one);
      tkc_tensor *all[] = {ta, tb, sum, prod, mx, ng, lt, pi, pf, fl, ts, s, bc, back};
      for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tkc_tensor_free(all[i]);
    }
  }
  TR_END();
}

/* ---------------------------------------------------------------- 4: PTX and WGSL without their devices */

/* ptxas -arch=arch on src: its exit status (-1: could not run) */
static int ptxas(const char *src, const char *arch) { return ptxas_run(src, arch, NULL); }

static void test_ptx_wgsl(void **state) {
  (void)state;
  tr_begin();
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  assert_non_null(ctx);
  const char *pa = ptxas_path();
  if (!pa) printf("  skipped ptxas: not found (the PTX is rendered only)\n");
  int64_t n = 1000;
  for (int d = 0; d < 2; d++) {
    tkc_tensor *x8 = tkc_tensor_new(ctx, fp8s[d], 1, &n, NULL);
    for (int k = 0; k < NTARGETS; k++) {
      tkc_dtype to = targets[k];
      tkc_tensor *x = tkc_tensor_new(ctx, to, 1, &n, NULL);
      tkc_tensor *ys[3] = {tkc_cast(x8, to), tkc_cast(x, fp8s[d]), tkc_add(x8, x8)};
      for (int j = 0; j < 3; j++) {
        char *ptx = tkc_kernels_source(ys[j], "PTX");
        TR_EXPECT(ptx && strstr(ptx, ".entry"), "PTX of %s %s %s", tkc_dtype_name(fp8s[d]), j == 1 ? "<-" : "->", tkc_dtype_name(to));
        if (ptx && pa) {
          TR_EXPECT(ptxas(ptx, "sm_80") == 0, "ptxas sm_80: %s %s %s", tkc_dtype_name(fp8s[d]), j == 1 ? "<-" : "->", tkc_dtype_name(to));
          if (k == 0 && j == 0) TR_EXPECT(ptxas(ptx, "sm_90") == 0, "ptxas sm_90: %s", tkc_dtype_name(fp8s[d]));
        }
        tkc_free(ptx);
        if (to != TKC_FLOAT64 && to != TKC_INT64 && to != TKC_UINT64) {
          char *wgsl = tkc_kernels_source(ys[j], "WGSL");
          TR_EXPECT(wgsl && strstr(wgsl, "@compute"), "WGSL of %s and %s (%s)", tkc_dtype_name(fp8s[d]), tkc_dtype_name(to), tkc_last_error());
          tkc_free(wgsl);
        }
        tkc_tensor_free(ys[j]);
      }
      tkc_tensor_free(x);
    }
    tkc_tensor_free(x8);
  }
  tkc_ctx_free(ctx);
  TR_END();
}

/* ---------------------------------------------------------------- 5: refusals */

static void test_refusals(void **state) {
  (void)state;
  tr_begin();
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  assert_non_null(ctx);
  int64_t n = 4;
  tkc_tensor *t = tkc_tensor_new(ctx, TKC_FLOAT8_E4M3FN, 1, &n, (uint8_t[]){0x38, 0x40, 0xb8, 0x7f});
  TR_EXPECT(t && tkc_numel(t) == 4, "fp8 tensor from data");
  TR_EXPECT(!tkc_cast(t, TKC_NDTYPES) && tkc_last_status() == TKC_EDTYPE && strstr(tkc_last_error(), "not a dtype"), "cast to NDTYPES");
  TR_EXPECT(!tkc_cast(t, TKC_VOID) && tkc_last_status() == TKC_EDTYPE, "cast to void");
  TR_EXPECT(!tkc_bitcast(t, TKC_FLOAT16) && tkc_last_status() != TKC_OK, "bitcast to a wider dtype");
  TR_EXPECT(!tkc_tensor_new(ctx, (tkc_dtype)(TKC_NDTYPES + 1), 1, &n, NULL) && tkc_last_status() == TKC_EDTYPE, "tensor of an unknown dtype");
  /* the ctx still works: fp8 -> float32 of 1, 2, -1, NaN */
  float out[4];
  tkc_tensor *f = tkc_cast(t, TKC_FLOAT32);
  TR_EXPECT(tkc_copy_out(f, out, sizeof out) == TKC_OK && out[0] == 1 && out[1] == 2 && out[2] == -1 && isnan(out[3]), "usable after");
  TR_EXPECT(tkc_copy_out(t, out, 3) == TKC_EINVAL, "copy_out of a wrong byte count");
  tkc_tensor_free(f), tkc_tensor_free(t);
  tkc_ctx_free(ctx);
  TR_END();
}

/* ---------------------------------------------------------------- 6: per-row int8 weights */

static void ref_quantize(const float *w, int64_t rows, int64_t cols, int8_t *q, float *scale) {
  for (int64_t r = 0; r < rows; r++) {
    float m = 0;
    for (int64_t c = 0; c < cols; c++) m = fmaxf(m, fabsf(w[r * cols + c]));
    scale[r] = m / 127.0f;
    for (int64_t c = 0; c < cols; c++) {
      float x = scale[r] == 0 ? 0 : w[r * cols + c] / scale[r];
      x = nearbyintf(x); /* half to even (the default rounding mode) */
      q[r * cols + c] = (int8_t)(x > 127 ? 127 : x < -127 ? -127 : x);
    }
  }
}

static void test_int8_rows(void **state) {
  (void)state;
  tr_begin();
  enum { R = 24, C = 96, M = 5 };
  float w[R * C], x[M * C], sref[R], sgot[R], y[M * R];
  int8_t qref[R * C], qgot[R * C];
  uint32_t s = 7;
  for (int i = 0; i < R * C; i++) s = s * 1664525u + 1013904223u, w[i] = ((float)(s >> 9) / (1 << 23) - 0.5f) * (float)(1 + i / C);
  for (int c = 0; c < C; c++) w[3 * C + c] = 0; /* a row of zeros */
  w[5 * C + 7] = 127 * 0.5f, w[5 * C + 8] = 2.5f * 0.5f, w[5 * C + 9] = 3.5f * 0.5f, w[5 * C + 10] = -2.5f * 0.5f; /* halves: ties */
  for (int c = 11; c < C; c++) w[5 * C + c] = 0;
  for (int c = 0; c < 7; c++) w[5 * C + c] = 0;
  for (int i = 0; i < M * C; i++) s = s * 1664525u + 1013904223u, x[i] = (float)(s >> 9) / (1 << 23) - 0.5f;
  ref_quantize(w, R, C, qref, sref);
  TR_EXPECT(qref[5 * C + 8] == 2 && qref[5 * C + 9] == 4 && qref[5 * C + 10] == -2, "the reference rounds half to even");
  FOR_EACH_DEVICE(dev, ctx) {
    int64_t ws[2] = {R, C}, xs[2] = {M, C};
    tkc_tensor *tw = tkc_tensor_new(ctx, TKC_FLOAT32, 2, ws, w), *q = NULL, *sc = NULL;
    TR_EXPECT(tkc_quantize_int8_rows(tw, &q, &sc) == TKC_OK, "%s quantize", dev);
    if (!q || !sc) continue;
    TR_EXPECT(tkc_dtype_of(q) == TKC_INT8 && tkc_ndim(q) == 2 && tkc_dim(q, 1) == C && tkc_dtype_of(sc) == TKC_FLOAT32 && tkc_ndim(sc) == 1 &&
                  tkc_dim(sc, 0) == R && tkc_kernel_count(q) == 0,
              "%s q int8 (R, C), scale float32 (R,), both realized", dev);
    TR_EXPECT(tkc_copy_out(q, qgot, sizeof qgot) == TKC_OK && tkc_copy_out(sc, sgot, sizeof sgot) == TKC_OK, "%s copy out", dev);
    for (int r = 0; r < R; r++) {
      TR_EXPECT(sgot[r] == sref[r], "%s scale[%d] %.9g, want %.9g", dev, r, sgot[r], sref[r]);
      for (int c = 0; c < C; c++)
        if (qgot[r * C + c] != qref[r * C + c]) {
          tr_problem("%s q[%d,%d] = %d, want %d (w %.9g, scale %.9g)", dev, r, c, qgot[r * C + c], qref[r * C + c], w[r * C + c], sref[r]);
          break;
        }
    }
    /* x (M, C) @ dequantize(q, scale)^T: one kernel over the int8 bytes, against float64 */
    tkc_tensor *tx = tkc_tensor_new(ctx, TKC_FLOAT32, 2, xs, x), *dq = tkc_dequantize_int8_rows(q, sc);
    tkc_tensor *wt = tkc_transpose(dq, 0, 1), *ty = tkc_matmul(tx, wt);
    TR_EXPECT(dq && tkc_dtype_of(dq) == TKC_FLOAT32 && tkc_dim(dq, 0) == R && tkc_dim(dq, 1) == C, "%s dequantized (R, C) float32", dev);
    int nk = tkc_kernel_count(ty);
    TR_EXPECT(nk == 1, "%s the int8 matmul is %d kernels (1 expected: dequantization fused)", dev, nk);
    TR_EXPECT(tkc_copy_out(ty, y, sizeof y) == TKC_OK, "%s matmul", dev);
    for (int i = 0; i < M; i++)
      for (int r = 0; r < R; r++) {
        double acc = 0, mag = 0;
        for (int c = 0; c < C; c++) {
          double p = (double)x[i * C + c] * ((double)qref[r * C + c] * sref[r]);
          acc += p, mag += fabs(p);
        }
        TR_EXPECT(fabs(y[i * R + r] - acc) <= 1e-5 * mag + 1e-6, "%s y[%d,%d] %.9g, want %.9g", dev, i, r, y[i * R + r], acc);
      }
    /* dequantized values alone: float(q) * scale exactly */
    float dv[R * C];
    TR_EXPECT(tkc_copy_out(dq, dv, sizeof dv) == TKC_OK, "%s dequantized values", dev);
    for (int i = 0; i < R * C; i++)
      if (dv[i] != (float)qref[i] * sref[i / C]) {
        tr_problem("%s dequantized [%d] %.9g, want %.9g", dev, i, dv[i], (float)qref[i] * sref[i / C]);
        break;
      }
    /* float16 weights quantize too (computed in float32) */
    if (tr_dev_supports(dev, TKC_FLOAT16)) {
      tkc_tensor *wh = tkc_cast(tw, TKC_FLOAT16), *qh = NULL, *sh = NULL;
      TR_EXPECT(tkc_quantize_int8_rows(wh, &qh, &sh) == TKC_OK && qh && sh, "%s float16 weights", dev);
      tkc_tensor_free(wh), tkc_tensor_free(qh), tkc_tensor_free(sh);
    }
    tkc_tensor *ts[] = {tw, q, sc, tx, dq, wt, ty};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) tkc_tensor_free(ts[i]);
  }
  /* PTX: the fused product renders as one kernel and assembles */
  {
    tkc_ctx *ctx = tkc_ctx_new("INTERP");
    int64_t qs[2] = {64, 128}, ss = 64, xs[2] = {4, 128};
    tkc_tensor *q = tkc_tensor_new(ctx, TKC_INT8, 2, qs, NULL), *sc = tkc_tensor_new(ctx, TKC_FLOAT32, 1, &ss, NULL);
    tkc_tensor *xx = tkc_tensor_new(ctx, TKC_FLOAT32, 2, xs, NULL), *dq = tkc_dequantize_int8_rows(q, sc), *wt = tkc_transpose(dq, 0, 1);
    tkc_tensor *yy = tkc_matmul(xx, wt);
    char *ptx = tkc_kernels_source(yy, "PTX");
    int entries = 0;
    for (const char *e = ptx ? strstr(ptx, ".entry ") : NULL; e; e = strstr(e + 1, ".entry ")) entries++;
    TR_EXPECT(ptx && entries == 1, "PTX of the int8 matmul: %d kernels", entries);
    if (ptx && ptxas_path()) TR_EXPECT(ptxas(ptx, "sm_80") == 0, "ptxas of the int8 matmul");
    tkc_free(ptx);

    /* bad inputs */
    tkc_tensor *qq = q, *ss2 = sc;
    TR_EXPECT(tkc_quantize_int8_rows(NULL, &qq, &ss2) == TKC_EINVAL && !qq && !ss2, "NULL weights: EINVAL, outputs NULL");
    TR_EXPECT(tkc_quantize_int8_rows(xx, NULL, &ss2) == TKC_EINVAL, "NULL q");
    TR_EXPECT(tkc_quantize_int8_rows(xx, &qq, NULL) == TKC_EINVAL, "NULL scale");
    tkc_tensor *v1 = tkc_tensor_new(ctx, TKC_FLOAT32, 1, &ss, NULL);
    TR_EXPECT(tkc_quantize_int8_rows(v1, &qq, &ss2) == TKC_ESHAPE && strstr(tkc_last_error(), "2 expected"), "1-d weights: ESHAPE");
    TR_EXPECT(tkc_quantize_int8_rows(q, &qq, &ss2) == TKC_EDTYPE && strstr(tkc_last_error(), "int8"), "int8 weights: EDTYPE");
    int64_t zs[2] = {3, 0};
    tkc_tensor *z = tkc_tensor_new(ctx, TKC_FLOAT32, 2, zs, NULL);
    TR_EXPECT(tkc_quantize_int8_rows(z, &qq, &ss2) == TKC_ESHAPE, "rows of no values: ESHAPE");
    TR_EXPECT(!tkc_dequantize_int8_rows(NULL, sc) && tkc_last_status() == TKC_EINVAL, "dequantize NULL q");
    TR_EXPECT(!tkc_dequantize_int8_rows(q, NULL) && tkc_last_status() == TKC_EINVAL, "dequantize NULL scale");
    TR_EXPECT(!tkc_dequantize_int8_rows(xx, sc) && tkc_last_status() == TKC_EDTYPE, "dequantize float q: EDTYPE");
    tkc_tensor *qi = tkc_tensor_new(ctx, TKC_INT32, 1, &ss, NULL);
    TR_EXPECT(!tkc_dequantize_int8_rows(q, qi) && tkc_last_status() == TKC_EDTYPE, "dequantize int scale: EDTYPE");
    int64_t wrong = 63;
    tkc_tensor *s63 = tkc_tensor_new(ctx, TKC_FLOAT32, 1, &wrong, NULL);
    TR_EXPECT(!tkc_dequantize_int8_rows(q, s63) && tkc_last_status() == TKC_ESHAPE, "dequantize 63 scales for 64 rows: ESHAPE");
    TR_EXPECT(!tkc_dequantize_int8_rows(q, dq) && tkc_last_status() == TKC_ESHAPE, "dequantize a 2-d scale: ESHAPE");
    tkc_tensor *q1 = tkc_reshape(q, 1, (int64_t[]){64 * 128});
    TR_EXPECT(!tkc_dequantize_int8_rows(q1, sc) && tkc_last_status() == TKC_ESHAPE, "dequantize 1-d q: ESHAPE");
    tkc_ctx *other = tkc_ctx_new("INTERP");
    tkc_tensor *so = tkc_tensor_new(other, TKC_FLOAT32, 1, &ss, NULL);
    TR_EXPECT(!tkc_dequantize_int8_rows(q, so) && tkc_last_status() == TKC_EINVAL, "dequantize with a scale of another ctx: EINVAL");
    tkc_ctx_free(other);
    /* usable after */
    tkc_tensor *ok = tkc_dequantize_int8_rows(q, sc);
    TR_EXPECT(ok && tkc_realize(ok) == TKC_OK, "usable after the refusals");
    tkc_tensor *ts[] = {q, sc, xx, dq, wt, yy, v1, z, qi, s63, q1, ok};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) tkc_tensor_free(ts[i]);
    tkc_ctx_free(ctx);
  }
  TR_END();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reference), cmocka_unit_test(test_decode),   cmocka_unit_test(test_encode),
      cmocka_unit_test(test_tensors),   cmocka_unit_test(test_ptx_wgsl), cmocka_unit_test(test_refusals),
      cmocka_unit_test(test_int8_rows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
