/* tests/test_alu.c — constant evaluation (tkc_alu_eval), value casts/bitcasts/truncation, CONST args,
 * and float16/bfloat16 conversion, checked against reference arithmetic written here with the C types
 * themselves (ints wrap through their unsigned type, float32 in float) and independent rounding
 * references (float16 by nearest search over a decoded table, bfloat16 by the nearer neighbour).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "tkc/uop.h"

/* ---------------------------------------------------------------- helpers */

static int g_fail;
#define EXPECT(cond, ...)                                        \
  do {                                                           \
    if (!(cond)) {                                               \
      if (g_fail++ < 25) {                                       \
        print_error("%s:%d: ", __FILE__, __LINE__);              \
        print_error(__VA_ARGS__);                                \
        print_error("\n");                                       \
      }                                                          \
    }                                                            \
  } while (0)
#define BEGIN() (g_fail = 0)
#define END() assert_int_equal(g_fail, 0)

static const char *const op_names[TKC_NOPS] = {
#define TKC_OP(name, flags) #name,
#include "tkc/ops.def"
#undef TKC_OP
};
static const char *const dt_names[TKC_NDTYPES] = {"bool", "int8", "uint8", "int16", "uint16", "int32", "uint32",
                                                  "int64", "uint64", "float16", "bfloat16", "float32", "float64", "void"};

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void) { /* xorshift64*, fixed seed */
  g_rng ^= g_rng >> 12;
  g_rng ^= g_rng << 25;
  g_rng ^= g_rng >> 27;
  return g_rng * 0x2545F4914F6CDD1Dull;
}

static bool is_float(tkc_dtype dt) { return dt >= TKC_FLOAT16 && dt <= TKC_FLOAT64; }

/* The value ops: arity, written here independently of the implementation's table. */
static int arity(tkc_op op) {
  switch (op) {
  case TKC_OP_EXP2: case TKC_OP_LOG2: case TKC_OP_SIN: case TKC_OP_SQRT: case TKC_OP_RECIP: case TKC_OP_NEG: return 1;
  case TKC_OP_ADD: case TKC_OP_SUB: case TKC_OP_MUL: case TKC_OP_FDIV: case TKC_OP_IDIV: case TKC_OP_MOD:
  case TKC_OP_MAX: case TKC_OP_CMPLT: case TKC_OP_CMPNE: case TKC_OP_XOR: case TKC_OP_OR: case TKC_OP_AND:
  case TKC_OP_SHL: case TKC_OP_SHR: case TKC_OP_POW: case TKC_OP_DOT4: return 2;
  case TKC_OP_WHERE: case TKC_OP_MULACC: return 3;
  default: return 0;
  }
}
static const tkc_op ALU_OPS[] = {TKC_OP_EXP2, TKC_OP_LOG2, TKC_OP_SIN,  TKC_OP_SQRT, TKC_OP_RECIP, TKC_OP_NEG,
                                 TKC_OP_ADD,  TKC_OP_SUB,  TKC_OP_MUL,  TKC_OP_FDIV, TKC_OP_IDIV,  TKC_OP_MOD,
                                 TKC_OP_MAX,  TKC_OP_CMPLT, TKC_OP_CMPNE, TKC_OP_XOR, TKC_OP_OR,   TKC_OP_AND,
                                 TKC_OP_SHL,  TKC_OP_SHR,  TKC_OP_POW,  TKC_OP_MULACC};
#define NALU_OPS ((int)(sizeof ALU_OPS / sizeof ALU_OPS[0]))
static bool is_cmp(tkc_op op) { return op == TKC_OP_CMPLT || op == TKC_OP_CMPNE; }

static tkc_status eval(tkc_op op, tkc_dtype dt, tkc_dtype in_dt, const tkc_value *s, tkc_value *out) {
  out->u = 0xdeadbeefdeadbeefull;
  return tkc_alu_eval(op, dt, in_dt, s, arity(op), out);
}

static tkc_value vi(int64_t i) { tkc_value v; v.i = i; return v; }
static tkc_value vu(uint64_t u) { tkc_value v; v.u = u; return v; }
static tkc_value vf(double f) { tkc_value v; v.f = f; return v; }

static uint64_t dbits(double x) { uint64_t b; memcpy(&b, &x, sizeof b); return b; }
static uint32_t fbits(float x) { uint32_t b; memcpy(&b, &x, sizeof b); return b; }
static float bitsf(uint32_t b) { float f; memcpy(&f, &b, sizeof f); return f; }

/* Same value: floats bit for bit (so -0.0 != 0.0) with any NaN equal to any NaN; ints by all 64 bits
 * (which checks the canonical sign/zero extension too). */
static bool same(tkc_dtype dt, tkc_value a, tkc_value b) {
  if (is_float(dt)) return (isnan(a.f) && isnan(b.f)) || dbits(a.f) == dbits(b.f);
  return a.u == b.u;
}

/* ---------------------------------------------------------------- reference rounding */

static double f16tab[0x7c00]; /* value of each positive finite half code */
static void f16tab_init(void) {
  for (int c = 0; c < 0x7c00; c++) {
    int e = c >> 10, m = c & 0x3ff;
    f16tab[c] = e == 0 ? ldexp((double)m, -24) : ldexp((double)(1024 + m), e - 25);
  }
}
static double ref_f16_decode(uint16_t c) {
  double s = (c & 0x8000) ? -1.0 : 1.0;
  if ((c & 0x7c00) == 0x7c00) return (c & 0x3ff) ? NAN : s * INFINITY;
  return s * f16tab[c & 0x7fff];
}
/* Nearest half by search, ties to the even code; |x| >= 65520 (half an ulp past 65504) is inf. */
static uint16_t ref_f16_code(double x) {
  uint16_t s = signbit(x) ? 0x8000 : 0;
  if (isnan(x)) return (uint16_t)(s | 0x7e00);
  double a = fabs(x);
  if (a >= 65520.0) return (uint16_t)(s | 0x7c00);
  int lo = 0, hi = 0x7bff;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (f16tab[mid] <= a) lo = mid;
    else hi = mid - 1;
  }
  int c = lo;
  if (f16tab[c] != a && c < 0x7bff) {
    double dl = a - f16tab[c], dh = f16tab[c + 1] - a;
    if (dh < dl || (dh == dl && (c & 1))) c++;
  }
  return (uint16_t)(s | c);
}
/* bfloat16 as numpy/torch round it: to float32, then the nearer of the two neighbouring bfloat16
 * values (ties to the even pattern; past the largest finite one, 2^128 stands for inf). */
static double ref_bf16_round(double x) {
  float f = (float)x;
  if (isnan(f) || isinf(f)) return f;
  uint32_t lo = fbits(f) & 0xffff0000u;
  if (lo == fbits(f)) return f;
  double dl = fabs((double)f - (double)bitsf(lo)), up = (lo & 0x7fffffffu) == 0x7f7f0000u ? 0x1p128 : fabs((double)bitsf(lo + 0x10000u));
  double dh = fabs(up - fabs((double)f));
  if (dl < dh || (dl == dh && !((lo >> 16) & 1))) return bitsf(lo);
  return (lo & 0x7fffffffu) == 0x7f7f0000u ? copysign(INFINITY, x) : bitsf(lo + 0x10000u);
}
static double ref_round(tkc_dtype dt, double x) {
  switch (dt) {
  case TKC_FLOAT16: return ref_f16_decode(ref_f16_code(x));
  case TKC_BFLOAT16: return ref_bf16_round(x);
  case TKC_FLOAT32: return (float)x;
  default: return x;
  }
}
/* Monotonic code of a value of a float dtype (for 1-ulp tolerance). */
static int64_t ordered(tkc_dtype dt, double x) {
  uint64_t b, sign;
  switch (dt) {
  case TKC_FLOAT16: b = ref_f16_code(x); sign = 0x8000; break;
  case TKC_BFLOAT16: b = fbits((float)x) >> 16; sign = 0x8000; break;
  case TKC_FLOAT32: b = fbits((float)x); sign = 0x80000000u; break;
  default: b = dbits(x); sign = 0x8000000000000000ull; break;
  }
  return (b & sign) ? -(int64_t)(b & ~sign) : (int64_t)b;
}
static bool close1(tkc_dtype dt, double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  int64_t d = ordered(dt, a) - ordered(dt, b);
  return d >= -1 && d <= 1;
}

/* int/bool of dt from a 64-bit pattern by C conversion. */
static tkc_value ref_int(tkc_dtype dt, uint64_t b) {
  tkc_value v;
  switch (dt) {
  case TKC_BOOL: v.i = (bool)b; break;
  case TKC_INT8: v.i = (int8_t)b; break;
  case TKC_UINT8: v.u = (uint8_t)b; break;
  case TKC_INT16: v.i = (int16_t)b; break;
  case TKC_UINT16: v.u = (uint16_t)b; break;
  case TKC_INT32: v.i = (int32_t)b; break;
  case TKC_UINT32: v.u = (uint32_t)b; break;
  case TKC_INT64: v.i = (int64_t)b; break;
  default: v.u = b; break;
  }
  return v;
}

/* ---------------------------------------------------------------- integer ops, per C type */

#define DEF_INT_SUITE(NAME, T, UT, DT, BITS, SIGNED, TMIN, TMAX)                                                \
  static T NAME##_get(tkc_value v) { return SIGNED ? (T)v.i : (T)v.u; }                                       \
  static tkc_value NAME##_mk(T x) {                                                                           \
    tkc_value v;                                                                                              \
    if (SIGNED) v.i = (int64_t)x;                                                                             \
    else v.u = (uint64_t)x;                                                                                   \
    return v;                                                                                                 \
  }                                                                                                           \
  static int NAME##_cnt(T y, int *neg) {                                                                      \
    double d = (double)y;                                                                                     \
    *neg = d < 0;                                                                                             \
    return d < 0 ? 0 : d > 300 ? 300 : (int)d;                                                                \
  }                                                                                                           \
  /* 1: defined, result in *r; 0: not defined (TKC_EDTYPE); -1: not checked */                                \
  static int NAME##_ref(tkc_op op, const T *a, T *r) {                                                        \
    T x = a[0], y = a[1], z = a[2];                                                                           \
    int neg, n;                                                                                               \
    switch (op) {                                                                                             \
    case TKC_OP_NEG: *r = (T)(UT)(UINT64_C(0) - (uint64_t)(UT)x); return 1;                                   \
    case TKC_OP_ADD: *r = (T)(UT)((uint64_t)(UT)x + (uint64_t)(UT)y); return 1;                               \
    case TKC_OP_SUB: *r = (T)(UT)((uint64_t)(UT)x - (uint64_t)(UT)y); return 1;                               \
    case TKC_OP_MUL: *r = (T)(UT)((uint64_t)(UT)x * (uint64_t)(UT)y); return 1;                               \
    case TKC_OP_MULACC: *r = (T)(UT)((uint64_t)(UT)x * (uint64_t)(UT)y + (uint64_t)(UT)z); return 1;          \
    case TKC_OP_IDIV:                                                                                         \
      if (y == 0) *r = 0;                                                                                     \
      else if (SIGNED && x == TMIN && y == (T)-1) *r = TMIN;                                                  \
      else *r = (T)(x / y);                                                                                   \
      return 1;                                                                                               \
    case TKC_OP_MOD:                                                                                          \
      if (y == 0) *r = 0;                                                                                     \
      else if (SIGNED && x == TMIN && y == (T)-1) *r = 0;                                                     \
      else *r = (T)(x % y);                                                                                   \
      return 1;                                                                                               \
    case TKC_OP_MAX: *r = y > x ? y : x; return 1;                                                            \
    case TKC_OP_CMPLT: *r = (T)(x < y); return 1;                                                             \
    case TKC_OP_CMPNE: *r = (T)(x != y); return 1;                                                            \
    case TKC_OP_XOR: *r = (T)(x ^ y); return 1;                                                               \
    case TKC_OP_OR: *r = (T)(x | y); return 1;                                                                \
    case TKC_OP_AND: *r = (T)(x & y); return 1;                                                               \
    case TKC_OP_SHL:                                                                                          \
      n = NAME##_cnt(y, &neg);                                                                                \
      *r = (neg || n >= BITS) ? 0 : (T)(UT)((uint64_t)(UT)x << n);                                            \
      return 1;                                                                                               \
    case TKC_OP_SHR:                                                                                          \
      n = NAME##_cnt(y, &neg);                                                                                \
      if (neg) *r = 0;                                                                                        \
      else if (n >= BITS) *r = (SIGNED && (double)x < 0) ? (T)-1 : 0;                                         \
      else *r = (T)(x >> n);                                                                                  \
      return 1;                                                                                               \
    case TKC_OP_POW:                                                                                          \
      n = NAME##_cnt(y, &neg);                                                                                \
      if (neg) {                                                                                              \
        *r = x == 1 ? 1 : (double)x == -1.0 ? (((UT)y & 1) ? (T)-1 : 1) : 0;                                  \
        return 1;                                                                                             \
      }                                                                                                       \
      if (n < 300) {                                                                                          \
        T p = 1;                                                                                              \
        for (int i = 0; i < n; i++) p = (T)(UT)((uint64_t)(UT)p * (uint64_t)(UT)x);                           \
        *r = p;                                                                                               \
        return 1;                                                                                             \
      }                                                                                                       \
      if (x == 0 || x == 1 || ((UT)x & 1) == 0) { *r = (x == 1); return 1; }                                  \
      if ((double)x == -1.0) { *r = ((UT)y & 1) ? (T)-1 : 1; return 1; }                                     \
      return -1;                                                                                              \
    default: return 0; /* EXP2 LOG2 SIN SQRT RECIP FDIV: float only */                                       \
    }                                                                                                         \
  }                                                                                                           \
  static void NAME##_test(void **state) {                                                                     \
    (void)state;                                                                                              \
    BEGIN();                                                                                                  \
    T v[48];                                                                                                  \
    int nv = 0;                                                                                               \
    const T fixed[] = {0,       1,          (T)-1,         2,        3,          7,         (T)-7,      (T)100, \
                       TMIN,    TMAX,       (T)(TMIN + 1), (T)(TMAX - 1), (T)(BITS - 1), (T)BITS, (T)(BITS + 1), \
                       (T)63,   (T)64,      (T)65};                                                           \
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) v[nv++] = fixed[i];                           \
    for (int i = 0; i < 10; i++) v[nv++] = (T)(UT)rng();                                                      \
    for (int i = 0; i < 6; i++) v[nv++] = (T)((int)(rng() % 19) - 9);                                         \
    for (int oi = 0; oi < NALU_OPS; oi++) {                                                                   \
      tkc_op op = ALU_OPS[oi];                                                                                \
      int ar = arity(op), n0 = nv, n1 = ar > 1 ? nv : 1, n2 = ar > 2 ? nv : 1;                                \
      tkc_dtype dt = is_cmp(op) ? TKC_BOOL : DT;                                                              \
      for (int i = 0; i < n0; i++)                                                                            \
        for (int j = 0; j < n1; j++)                                                                          \
          for (int k = 0; k < n2; k++) {                                                                      \
            T a[3] = {v[i], v[j], v[k]}, r = 0;                                                               \
            tkc_value s[3] = {NAME##_mk(a[0]), NAME##_mk(a[1]), NAME##_mk(a[2])}, out;                        \
            int def = NAME##_ref(op, a, &r);                                                                  \
            tkc_status st = eval(op, dt, DT, s, &out);                                                        \
            if (def == 0) {                                                                                   \
              EXPECT(st == TKC_EDTYPE, "%s %s: status %d, want EDTYPE", op_names[op], #T, st);                \
              continue;                                                                                       \
            }                                                                                                 \
            EXPECT(st == TKC_OK, "%s %s: status %d", op_names[op], #T, st);                                   \
            if (def < 0 || st != TKC_OK) continue;                                                            \
            tkc_value want = is_cmp(op) ? vi((int64_t)r) : NAME##_mk(r);                                      \
            EXPECT(out.u == want.u, "%s %s (%lld, %lld, %lld): got %lld want %lld", op_names[op], #T,         \
                   (long long)a[0], (long long)a[1], (long long)a[2], (long long)NAME##_get(out),             \
                   (long long)r);                                                                             \
          }                                                                                                   \
    }                                                                                                         \
    for (int c = 0; c < 2; c++) /* WHERE with a bool condition */                                            \
      for (int i = 0; i < nv; i++)                                                                            \
        for (int j = 0; j < nv; j++) {                                                                        \
          tkc_value s[3] = {vi(c), NAME##_mk(v[i]), NAME##_mk(v[j])}, out;                                    \
          EXPECT(eval(TKC_OP_WHERE, DT, TKC_BOOL, s, &out) == TKC_OK, "WHERE %s", #T);                        \
          EXPECT(out.u == NAME##_mk(c ? v[i] : v[j]).u, "WHERE %s", #T);                                      \
        }                                                                                                     \
    END();                                                                                                    \
  }

DEF_INT_SUITE(i8, int8_t, uint8_t, TKC_INT8, 8, 1, INT8_MIN, INT8_MAX)
DEF_INT_SUITE(u8, uint8_t, uint8_t, TKC_UINT8, 8, 0, 0, UINT8_MAX)
DEF_INT_SUITE(i16, int16_t, uint16_t, TKC_INT16, 16, 1, INT16_MIN, INT16_MAX)
DEF_INT_SUITE(u16, uint16_t, uint16_t, TKC_UINT16, 16, 0, 0, UINT16_MAX)
DEF_INT_SUITE(i32, int32_t, uint32_t, TKC_INT32, 32, 1, INT32_MIN, INT32_MAX)
DEF_INT_SUITE(u32, uint32_t, uint32_t, TKC_UINT32, 32, 0, 0, UINT32_MAX)
DEF_INT_SUITE(i64, int64_t, uint64_t, TKC_INT64, 64, 1, INT64_MIN, INT64_MAX)
DEF_INT_SUITE(u64, uint64_t, uint64_t, TKC_UINT64, 64, 0, 0, UINT64_MAX)

/* ---------------------------------------------------------------- bool ops: C _Bool arithmetic */

static int ref_bool(tkc_op op, const bool *a, bool *r) {
  bool x = a[0], y = a[1], z = a[2];
  int prod = x * y, shl = x << y; /* Python int arithmetic on 0/1, then bool() */
  switch (op) {
  case TKC_OP_EXP2: *r = (bool)exp2((double)x); return 1;
  case TKC_OP_LOG2: *r = x ? (bool)log2(1.0) : true; return 1; /* log2(0) = -inf is true */
  case TKC_OP_SIN: *r = (bool)sin((double)x); return 1;
  case TKC_OP_SQRT: *r = (bool)sqrt((double)x); return 1;
  case TKC_OP_RECIP: *r = true; return 1; /* 1/1 = 1, recip(0) = inf */
  case TKC_OP_NEG: *r = (bool)(-x); return 1;
  case TKC_OP_ADD: *r = (bool)(x + y); return 1;
  case TKC_OP_SUB: *r = (bool)(x - y); return 1;
  case TKC_OP_MUL: *r = (bool)prod; return 1;
  case TKC_OP_IDIV: *r = y ? (bool)(x / y) : false; return 1;
  case TKC_OP_MOD: *r = y ? (bool)(x % y) : false; return 1;
  case TKC_OP_MAX: *r = y > x ? y : x; return 1;
  case TKC_OP_CMPLT: *r = x < y; return 1;
  case TKC_OP_CMPNE: *r = x != y; return 1;
  case TKC_OP_XOR: *r = x ^ y; return 1;
  case TKC_OP_OR: *r = x | y; return 1;
  case TKC_OP_AND: *r = x & y; return 1;
  case TKC_OP_SHL: *r = (bool)shl; return 1;
  case TKC_OP_SHR: *r = (bool)(x >> y); return 1;
  case TKC_OP_POW: *r = (bool)pow((double)x, (double)y); return 1;
  case TKC_OP_MULACC: *r = (bool)(x * y + z); return 1;
  default: return 0; /* FDIV */
  }
}

static void test_bool_ops(void **state) {
  (void)state;
  BEGIN();
  for (int oi = 0; oi < NALU_OPS; oi++) {
    tkc_op op = ALU_OPS[oi];
    int ar = arity(op);
    for (int m = 0; m < (1 << ar); m++) {
      bool a[3] = {m & 1, (m >> 1) & 1, (m >> 2) & 1}, r = false;
      tkc_value s[3] = {vi(a[0]), vi(a[1]), vi(a[2])}, out;
      int def = ref_bool(op, a, &r);
      tkc_status st = eval(op, TKC_BOOL, TKC_BOOL, s, &out);
      if (!def) {
        EXPECT(st == TKC_EDTYPE, "%s bool: status %d", op_names[op], st);
        continue;
      }
      EXPECT(st == TKC_OK && out.i == (int64_t)r, "%s bool (%d,%d,%d): got %lld want %d", op_names[op], a[0], a[1],
             a[2], (long long)out.i, r);
    }
  }
  for (int m = 0; m < 8; m++) {
    tkc_value s[3] = {vi(m & 1), vi((m >> 1) & 1), vi((m >> 2) & 1)}, out;
    EXPECT(eval(TKC_OP_WHERE, TKC_BOOL, TKC_BOOL, s, &out) == TKC_OK, "WHERE bool");
    EXPECT(out.i == ((m & 1) ? s[1].i : s[2].i), "WHERE bool %d", m);
  }
  /* a non-canonical bool (2) reads as true */
  tkc_value s[2] = {vi(2), vi(0)}, out;
  EXPECT(eval(TKC_OP_ADD, TKC_BOOL, TKC_BOOL, s, &out) == TKC_OK && out.i == 1, "bool 2 + 0");
  END();
}

/* ---------------------------------------------------------------- float ops */

/* 1 defined (*approx: compare within one ulp), 0 EDTYPE, -1 not checked. */
static int ref_float(tkc_op op, tkc_dtype dt, const double *a, double *r, int *approx) {
  double x = a[0], y = a[1], z = a[2];
  *approx = 0;
  if (dt == TKC_FLOAT32) { /* the C float type for the correctly rounded ops */
    float fx = (float)x, fy = (float)y;
    switch (op) {
    case TKC_OP_ADD: *r = fx + fy; return 1;
    case TKC_OP_SUB: *r = fx - fy; return 1;
    case TKC_OP_MUL: *r = fx * fy; return 1;
    case TKC_OP_FDIV: *r = fx / fy; return 1;
    case TKC_OP_SQRT: *r = fx < 0 ? NAN : sqrtf(fx); return 1;
    case TKC_OP_RECIP: *r = fx == 0 ? copysignf(INFINITY, fx) : 1.0f / fx; return 1;
    default: break;
    }
  }
  double t;
  switch (op) {
  case TKC_OP_ADD: t = x + y; break;
  case TKC_OP_SUB: t = x - y; break;
  case TKC_OP_MUL: t = x * y; break;
  case TKC_OP_FDIV: t = x / y; break;
  case TKC_OP_SQRT: t = x < 0 ? NAN : sqrt(x); break;
  case TKC_OP_RECIP: t = x == 0 ? copysign(INFINITY, x) : 1.0 / x; break;
  case TKC_OP_NEG: t = -x; break;
  case TKC_OP_EXP2: t = exp2(x); *approx = 1; break;
  case TKC_OP_LOG2: t = x == 0 ? -INFINITY : x < 0 ? NAN : log2(x); *approx = 1; break;
  case TKC_OP_SIN: t = isinf(x) ? NAN : sin(x); *approx = 1; break;
  case TKC_OP_POW:
    if (isfinite(x) && x < 0 && isfinite(y) && y != floor(y)) t = NAN;
    else t = pow(x, y);
    *approx = 1;
    break;
  case TKC_OP_MAX: t = y > x ? y : x; break; /* Python max(x, y) */
  case TKC_OP_CMPLT: *r = x < y; return 1;
  case TKC_OP_CMPNE: *r = x != y; return 1;
  case TKC_OP_MULACC: /* one fused multiply-add: in float below float64 (C's fma/fmaf) */
    t = dt == TKC_FLOAT64 ? fma(x, y, z) : (double)fmaf((float)x, (float)y, (float)z);
    break;
  case TKC_OP_IDIV:
  case TKC_OP_MOD: {
    if (op == TKC_OP_IDIV && y == 0) { t = 0; break; }
    if (op == TKC_OP_MOD && isfinite(x) && y == 0) { t = 0; break; }
    if (op == TKC_OP_MOD && (!isfinite(x) || !isfinite(y))) { t = NAN; break; }
    /* otherwise only integer-valued operands, by int64 C division */
    if (!(fabs(x) < 1048576 && fabs(y) < 1048576 && x == floor(x) && y == floor(y))) return -1;
    int64_t ix = (int64_t)x, iy = (int64_t)y;
    if (op == TKC_OP_IDIV) {
      t = (double)(ix / iy);
      if (ix / iy == 0 && ix != 0 && ((ix < 0) != (iy < 0))) t = -0.0; /* Python: 0.0 * -1 */
    } else {
      t = (double)(ix % iy);
    }
    break;
  }
  default: return 0; /* bitwise and shifts */
  }
  *r = ref_round(dt, t);
  return 1;
}

static int float_values(tkc_dtype dt, double *v) {
  const double fixed[] = {0.0,  -0.0,  1.0,    -1.0,    0.5,   -0.5,     2.0,      3.0,     -3.0,    0.1,
                          1.5,  2.5,   -2.5,   7.0,     10.0,  100.0,    1000.0,   -1000.0, 65504.0, 65520.0,
                          1e10, -1e10, FLT_MAX, DBL_MAX, 0x1p-24, 0x1p-14, 0x1p-133, FLT_MIN, 0x1p-149, DBL_MIN,
                          4.9e-324, INFINITY, -INFINITY, NAN, 3.14159, -1.7};
  int n = 0;
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) v[n++] = ref_round(dt, fixed[i]);
  for (int i = 0; i < 10; i++) {
    double m = 1.0 + (double)(rng() >> 11) * 0x1p-53;
    int e = (int)(rng() % 41) - 20;
    v[n++] = ref_round(dt, ((rng() & 1) ? -1.0 : 1.0) * ldexp(m, e));
  }
  return n;
}

static void test_float_ops(void **state) {
  (void)state;
  BEGIN();
  const tkc_dtype dts[] = {TKC_FLOAT16, TKC_BFLOAT16, TKC_FLOAT32, TKC_FLOAT64};
  for (int di = 0; di < 4; di++) {
    tkc_dtype dt = dts[di];
    double v[64];
    int nv = float_values(dt, v);
    for (int oi = 0; oi < NALU_OPS; oi++) {
      tkc_op op = ALU_OPS[oi];
      int ar = arity(op), n1 = ar > 1 ? nv : 1, n2 = ar > 2 ? nv : 1;
      tkc_dtype odt = is_cmp(op) ? TKC_BOOL : dt;
      for (int i = 0; i < nv; i++)
        for (int j = 0; j < n1; j++)
          for (int k = 0; k < n2; k++) {
            double a[3] = {v[i], v[j], v[k]}, r = 0;
            int approx;
            tkc_value s[3] = {vf(a[0]), vf(a[1]), vf(a[2])}, out;
            int def = ref_float(op, dt, a, &r, &approx);
            tkc_status st = eval(op, odt, dt, s, &out);
            if (def == 0) {
              EXPECT(st == TKC_EDTYPE, "%s %s: status %d, want EDTYPE", op_names[op], dt_names[dt], st);
              continue;
            }
            EXPECT(st == TKC_OK, "%s %s: status %d", op_names[op], dt_names[dt], st);
            if (def < 0 || st != TKC_OK) continue;
            if (is_cmp(op)) {
              EXPECT(out.i == (int64_t)r, "%s %s (%a, %a): got %lld", op_names[op], dt_names[dt], a[0], a[1],
                     (long long)out.i);
            } else if (approx) {
              EXPECT(close1(dt, out.f, r), "%s %s (%a, %a): got %a want %a", op_names[op], dt_names[dt], a[0], a[1],
                     out.f, r);
            } else {
              EXPECT(same(dt, out, vf(r)), "%s %s (%a, %a, %a): got %a want %a", op_names[op], dt_names[dt], a[0],
                     a[1], a[2], out.f, r);
            }
          }
    }
    for (int c = 0; c < 2; c++)
      for (int i = 0; i < nv; i++)
        for (int j = 0; j < nv; j++) {
          tkc_value s[3] = {vi(c), vf(v[i]), vf(v[j])}, out;
          EXPECT(eval(TKC_OP_WHERE, dt, TKC_BOOL, s, &out) == TKC_OK, "WHERE");
          EXPECT(same(dt, out, vf(c ? v[i] : v[j])), "WHERE %s", dt_names[dt]);
        }
  }
  END();
}

/* ---------------------------------------------------------------- the listed edge cases */

static tkc_value ev(tkc_op op, tkc_dtype dt, tkc_dtype in_dt, tkc_value a, tkc_value b, tkc_value c) {
  tkc_value s[3] = {a, b, c}, out;
  tkc_status st = eval(op, dt, in_dt, s, &out);
  EXPECT(st == TKC_OK, "%s %s: status %d (%s)", op_names[op], dt_names[dt], st, tkc_last_error());
  return out;
}
#define EV1(op, dt, a) ev(TKC_OP_##op, dt, dt, a, vi(0), vi(0))
#define EV2(op, dt, a, b) ev(TKC_OP_##op, dt, dt, a, b, vi(0))
#define EVC(op, in_dt, a, b) ev(TKC_OP_##op, TKC_BOOL, in_dt, a, b, vi(0))

static void test_int_edges(void **state) {
  (void)state;
  BEGIN();
  /* IDIV truncates toward zero, MOD takes the dividend's sign */
  EXPECT(EV2(IDIV, TKC_INT32, vi(-7), vi(2)).i == -3, "-7/2");
  EXPECT(EV2(IDIV, TKC_INT32, vi(7), vi(-2)).i == -3, "7/-2");
  EXPECT(EV2(IDIV, TKC_INT32, vi(-7), vi(-2)).i == 3, "-7/-2");
  EXPECT(EV2(MOD, TKC_INT32, vi(-7), vi(2)).i == -1, "-7%%2");
  EXPECT(EV2(MOD, TKC_INT32, vi(7), vi(-2)).i == 1, "7%%-2");
  EXPECT(EV2(MOD, TKC_INT32, vi(-7), vi(-2)).i == -1, "-7%%-2");
  /* division by zero */
  EXPECT(EV2(IDIV, TKC_INT32, vi(5), vi(0)).i == 0, "5/0");
  EXPECT(EV2(MOD, TKC_INT32, vi(5), vi(0)).i == 0, "5%%0");
  EXPECT(EV2(IDIV, TKC_UINT64, vu(UINT64_MAX), vu(0)).u == 0, "u64/0");
  EXPECT(EV2(MOD, TKC_INT8, vi(-128), vi(0)).i == 0, "-128%%0");
  /* INT_MIN / -1 wraps */
  EXPECT(EV2(IDIV, TKC_INT8, vi(-128), vi(-1)).i == -128, "-128/-1");
  EXPECT(EV2(IDIV, TKC_INT64, vi(INT64_MIN), vi(-1)).i == INT64_MIN, "INT64_MIN/-1");
  EXPECT(EV2(MOD, TKC_INT64, vi(INT64_MIN), vi(-1)).i == 0, "INT64_MIN%%-1");
  EXPECT(EV2(IDIV, TKC_INT32, vi(INT32_MIN), vi(-1)).i == INT32_MIN, "INT32_MIN/-1");
  EXPECT(EV1(NEG, TKC_INT64, vi(INT64_MIN)).i == INT64_MIN, "-INT64_MIN");
  /* wrapping */
  EXPECT(EV2(ADD, TKC_INT8, vi(127), vi(1)).i == -128, "int8 127+1");
  EXPECT(EV2(SUB, TKC_UINT32, vu(0), vu(1)).u == 4294967295u, "uint32 0-1");
  EXPECT(EV2(MUL, TKC_UINT16, vu(65535), vu(65535)).u == 1, "uint16 65535^2");
  EXPECT(EV2(ADD, TKC_UINT64, vu(UINT64_MAX), vu(2)).u == 1, "uint64 max+2");
  EXPECT(EV2(MUL, TKC_INT64, vi(INT64_MAX), vi(2)).i == -2, "int64 max*2");
  EXPECT(EV1(NEG, TKC_UINT8, vu(1)).u == 255, "uint8 -1");
  /* unsigned compare */
  EXPECT(EVC(CMPLT, TKC_UINT64, vu(0), vu(UINT64_MAX)).i == 1, "0 < u64max");
  EXPECT(EVC(CMPLT, TKC_UINT64, vu(UINT64_MAX), vu(0)).i == 0, "u64max < 0");
  EXPECT(EVC(CMPLT, TKC_INT64, vi(-1), vi(0)).i == 1, "-1 < 0");
  EXPECT(EVC(CMPLT, TKC_UINT32, vu(0xffffffffu), vu(1)).i == 0, "u32max < 1");
  EXPECT(EV2(MAX, TKC_UINT64, vu(UINT64_MAX), vu(1)).u == UINT64_MAX, "max u64");
  EXPECT(EV2(MAX, TKC_INT64, vi(-1), vi(1)).i == 1, "max i64");
  /* shifts */
  EXPECT(EV2(SHL, TKC_UINT32, vu(1), vu(32)).u == 0, "u32 1<<32");
  EXPECT(EV2(SHL, TKC_UINT32, vu(1), vu(31)).u == 0x80000000u, "u32 1<<31");
  EXPECT(EV2(SHL, TKC_INT32, vi(1), vi(31)).i == INT32_MIN, "i32 1<<31");
  EXPECT(EV2(SHL, TKC_UINT64, vu(1), vu(64)).u == 0, "u64 1<<64");
  EXPECT(EV2(SHL, TKC_UINT64, vu(3), vu(63)).u == 0x8000000000000000ull, "u64 3<<63");
  EXPECT(EV2(SHR, TKC_INT32, vi(-8), vi(1)).i == -4, "i32 -8>>1");
  EXPECT(EV2(SHR, TKC_INT32, vi(-1), vi(100)).i == -1, "i32 -1>>100");
  EXPECT(EV2(SHR, TKC_INT64, vi(INT64_MIN), vi(63)).i == -1, "i64 min>>63");
  EXPECT(EV2(SHR, TKC_INT64, vi(INT64_MAX), vi(64)).i == 0, "i64 max>>64");
  EXPECT(EV2(SHR, TKC_UINT8, vu(200), vu(8)).u == 0, "u8 200>>8");
  EXPECT(EV2(SHR, TKC_UINT64, vu(UINT64_MAX), vu(63)).u == 1, "u64 max>>63");
  EXPECT(EV2(SHL, TKC_INT32, vi(5), vi(-1)).i == 0, "shift by -1");
  EXPECT(EV2(SHR, TKC_INT32, vi(-5), vi(-1)).i == 0, "shift by -1");
  /* int POW */
  EXPECT(EV2(POW, TKC_INT32, vi(3), vi(4)).i == 81, "3**4");
  EXPECT(EV2(POW, TKC_INT8, vi(2), vi(7)).i == -128, "int8 2**7");
  EXPECT(EV2(POW, TKC_INT32, vi(2), vi(-1)).i == 0, "2**-1");
  EXPECT(EV2(POW, TKC_INT32, vi(-1), vi(-3)).i == -1, "(-1)**-3");
  EXPECT(EV2(POW, TKC_INT32, vi(0), vi(0)).i == 1, "0**0");
  EXPECT(EV2(POW, TKC_UINT64, vu(3), vu(UINT64_MAX)).u != 0, "3**huge is odd");
  /* bool arithmetic is Python int arithmetic then bool() */
  EXPECT(EV2(ADD, TKC_BOOL, vi(1), vi(1)).i == 1, "True+True");
  EXPECT(EV2(SUB, TKC_BOOL, vi(0), vi(1)).i == 1, "False-True");
  EXPECT(EV2(SUB, TKC_BOOL, vi(1), vi(1)).i == 0, "True-True");
  EXPECT(EV2(MUL, TKC_BOOL, vi(1), vi(0)).i == 0, "True*False");
  /* a compare whose result dtype is not bool, and non-canonical int inputs are wrapped first */
  EXPECT(ev(TKC_OP_CMPLT, TKC_INT32, TKC_FLOAT32, vf(1.0), vf(2.0), vi(0)).i == 1, "cmplt -> int32");
  EXPECT(ev(TKC_OP_CMPNE, TKC_FLOAT32, TKC_INT8, vi(1), vi(2), vi(0)).f == 1.0, "cmpne -> float32");
  EXPECT(ev(TKC_OP_CMPLT, TKC_FLOAT64, TKC_FLOAT16, vf(1.0), vf(2.0), vi(0)).f == 1.0, "cmplt f16 -> float64");
  EXPECT(ev(TKC_OP_CMPLT, TKC_UINT64, TKC_FLOAT32, vf(2.0), vf(1.0), vi(0)).u == 0, "cmplt f32 -> uint64");
  EXPECT(EV2(ADD, TKC_INT8, vi(300), vi(0)).i == 44, "int8 300 wraps to 44");
  /* WHERE with float / int conditions */
  EXPECT(ev(TKC_OP_WHERE, TKC_INT32, TKC_FLOAT32, vf(NAN), vi(1), vi(2)).i == 1, "where(nan)");
  EXPECT(ev(TKC_OP_WHERE, TKC_INT32, TKC_FLOAT32, vf(-0.0), vi(1), vi(2)).i == 2, "where(-0.0)");
  EXPECT(ev(TKC_OP_WHERE, TKC_INT32, TKC_UINT8, vu(256), vi(1), vi(2)).i == 2, "where(uint8 256 = 0)");
  EXPECT(ev(TKC_OP_WHERE, TKC_INT8, TKC_BOOL, vi(1), vi(300), vi(2)).i == 44, "where truncates to dt");
  /* DOT4: bytes of x unsigned, of y signed: 255*1 + 128*-1 + 255*-128 + 1*127 */
  EXPECT(EV2(DOT4, TKC_INT32, vi((int32_t)0x01FF80FF), vi(0x7F80FF01)).i == -32386, "dot4");
  EXPECT(EV2(DOT4, TKC_INT32, vi(-1), vi((int32_t)0x80808080)).i == -4 * 255 * 128, "dot4 at its lowest");
  END();
}

static void test_float_edges(void **state) {
  (void)state;
  BEGIN();
  const tkc_dtype F32 = TKC_FLOAT32, F64 = TKC_FLOAT64, F16 = TKC_FLOAT16, BF16 = TKC_BFLOAT16;
  tkc_value r;
  r = EV1(LOG2, F32, vf(0.0));
  EXPECT(isinf(r.f) && r.f < 0, "log2(0)");
  r = EV1(LOG2, F32, vf(-0.0));
  EXPECT(isinf(r.f) && r.f < 0, "log2(-0)");
  EXPECT(isnan(EV1(LOG2, F64, vf(-1.0)).f), "log2(-1)");
  EXPECT(EV1(LOG2, F64, vf(8.0)).f == 3.0, "log2(8)");
  EXPECT(isnan(EV1(SQRT, F32, vf(-1.0)).f), "sqrt(-1)");
  EXPECT(same(F64, EV1(SQRT, F64, vf(-0.0)), vf(-0.0)), "sqrt(-0)");
  EXPECT(EV1(EXP2, F64, vf(1000.0)).f == 0x1p1000, "exp2(1000) f64 is finite");
  EXPECT(EV1(EXP2, F64, vf(1024.0)).f == INFINITY, "exp2(1024) f64");
  EXPECT(EV1(EXP2, F64, vf(2000.0)).f == INFINITY, "exp2(2000) f64");
  EXPECT(EV1(EXP2, F32, vf(1000.0)).f == INFINITY, "exp2(1000) f32");
  EXPECT(EV1(EXP2, F16, vf(16.0)).f == INFINITY, "exp2(16) f16");
  EXPECT(EV1(EXP2, F64, vf(-2000.0)).f == 0.0, "exp2(-2000)");
  EXPECT(EV1(EXP2, F64, vf(10.0)).f == 1024.0, "exp2(10)");
  EXPECT(EV1(RECIP, F64, vf(-0.0)).f == -INFINITY, "recip(-0)");
  EXPECT(EV1(RECIP, F32, vf(0.0)).f == INFINITY, "recip(0)");
  EXPECT(EV1(RECIP, F16, vf(-0.0)).f == -INFINITY, "recip(-0) f16");
  EXPECT(isnan(EV1(SIN, F64, vf(INFINITY)).f) && isnan(EV1(SIN, F64, vf(-INFINITY)).f), "sin(inf)");
  EXPECT(isnan(EV1(SIN, F32, vf(NAN)).f), "sin(nan)");
  /* float32 rounding: computed as float, not as double */
  r = EV2(ADD, F32, vf((double)0.1f), vf((double)0.2f));
  EXPECT(r.f == (double)(0.1f + 0.2f) && r.f != 0.1f + 0.2, "0.1f+0.2f: got %.17g", r.f);
  EXPECT(EV2(ADD, F64, vf(0.1), vf(0.2)).f == 0.1 + 0.2, "0.1+0.2 f64");
  EXPECT(EV2(ADD, F32, vf(16777216.0), vf(1.0)).f == 16777216.0, "2^24+1 f32");
  EXPECT(EV2(MUL, F32, vf(FLT_MAX), vf(2.0)).f == INFINITY, "f32 overflow");
  /* float16 */
  EXPECT(EV2(ADD, F16, vf(65504.0), vf(16.0)).f == INFINITY, "65504+16 f16");
  EXPECT(EV2(ADD, F16, vf(65504.0), vf(8.0)).f == 65504.0, "65504+8 f16");
  EXPECT(EV2(ADD, F16, vf(2048.0), vf(1.0)).f == 2048.0, "2048+1 f16 (tie to even)");
  EXPECT(EV2(ADD, F16, vf(2048.0), vf(3.0)).f == 2052.0, "2048+3 f16 (tie to even)");
  EXPECT(tkc_value_truncate(vf(65520.0), F16).f == INFINITY, "65520 -> inf");
  EXPECT(tkc_value_truncate(vf(-65520.0), F16).f == -INFINITY, "-65520 -> -inf");
  EXPECT(tkc_value_truncate(vf(65519.0), F16).f == 65504.0, "65519 -> 65504");
  EXPECT(tkc_value_truncate(vf(0x1p-25), F16).f == 0.0, "2^-25 -> 0 (tie to even)");
  EXPECT(tkc_value_truncate(vf(0x1.8p-25), F16).f == 0x1p-24, "1.5*2^-25 -> 2^-24");
  EXPECT(EV2(MUL, F16, vf(0x1p-14), vf(0.5)).f == 0x1p-15, "f16 subnormal product");
  /* bfloat16 rounds to nearest even (numpy/torch), as the converter does */
  EXPECT(tkc_value_truncate(vf(1.005859375), BF16).f == 1.0078125, "bf16 rne 1+0.75ulp");
  EXPECT(tkc_bf16_to_f32(tkc_f32_to_bf16(1.005859375f)) == 1.0078125f, "bf16 rne 1+0.75ulp");
  EXPECT(tkc_value_truncate(vf(-1.005859375), BF16).f == -1.0078125, "bf16 rne, negative");
  EXPECT(tkc_value_truncate(vf(1.00390625), BF16).f == 1.0, "bf16 tie to even");
  EXPECT(EV2(ADD, BF16, vf(1.0), vf(0.0078125 * 0.75)).f == 1.0078125, "bf16 add rounds");
  double maxbf = (double)bitsf(0x7f7f0000u);
  EXPECT(tkc_value_truncate(vf(maxbf), BF16).f == maxbf, "bf16 max");
  EXPECT(tkc_value_truncate(vf((double)bitsf(0x7f7f0001u)), BF16).f == maxbf, "bf16 just above max rounds to max");
  EXPECT(tkc_value_truncate(vf((double)bitsf(0x7f7f8000u)), BF16).f == INFINITY, "bf16 tie above max -> inf");
  EXPECT(tkc_value_truncate(vf(-(double)FLT_MAX), BF16).f == -INFINITY, "bf16 -FLT_MAX -> -inf");
  EXPECT(isnan(tkc_value_truncate(vf(NAN), BF16).f), "bf16 nan");
  /* FDIV is IEEE */
  EXPECT(EV2(FDIV, F32, vf(1.0), vf(0.0)).f == INFINITY, "1/0");
  EXPECT(EV2(FDIV, F64, vf(-1.0), vf(0.0)).f == -INFINITY, "-1/0");
  EXPECT(EV2(FDIV, F64, vf(1.0), vf(-0.0)).f == -INFINITY, "1/-0");
  EXPECT(isnan(EV2(FDIV, F16, vf(0.0), vf(0.0)).f), "0/0");
  EXPECT(EV2(FDIV, F32, vf(1.0), vf(3.0)).f == (double)(1.0f / 3.0f), "1/3 f32");
  /* MAX is Python's max(a, b) */
  EXPECT(isnan(EV2(MAX, F64, vf(NAN), vf(1.0)).f), "max(nan, 1)");
  EXPECT(EV2(MAX, F64, vf(1.0), vf(NAN)).f == 1.0, "max(1, nan)");
  EXPECT(same(F64, EV2(MAX, F64, vf(-0.0), vf(0.0)), vf(-0.0)), "max(-0, 0)");
  EXPECT(same(F64, EV2(MAX, F64, vf(0.0), vf(-0.0)), vf(0.0)), "max(0, -0)");
  EXPECT(EV2(MAX, F32, vf(-INFINITY), vf(-3.0)).f == -3.0, "max(-inf, -3)");
  /* compares */
  EXPECT(EVC(CMPNE, F64, vf(NAN), vf(NAN)).i == 1, "nan != nan");
  EXPECT(EVC(CMPLT, F64, vf(NAN), vf(1.0)).i == 0, "nan < 1");
  EXPECT(EVC(CMPNE, F32, vf(0.0), vf(-0.0)).i == 0, "0 != -0");
  /* POW is C's pow */
  EXPECT(isnan(EV2(POW, F64, vf(-8.0), vf(1.0 / 3.0)).f), "(-8)**(1/3)");
  EXPECT(EV2(POW, F64, vf(0.0), vf(-1.0)).f == INFINITY, "0**-1");
  EXPECT(EV2(POW, F64, vf(-0.0), vf(-1.0)).f == -INFINITY, "(-0)**-1 (C / numpy)");
  EXPECT(EV2(POW, F32, vf(0.0), vf(-0.5)).f == INFINITY, "0**-0.5");
  EXPECT(EV2(POW, F64, vf(-2.0), vf(3.0)).f == -8.0, "(-2)**3");
  EXPECT(EV2(POW, F64, vf(2.0), vf(10.0)).f == 1024.0, "2**10");
  EXPECT(EV2(POW, F64, vf(1.0), vf(NAN)).f == 1.0, "1**nan");
  EXPECT(EV2(POW, F64, vf(NAN), vf(0.0)).f == 1.0, "nan**0");
  EXPECT(EV2(POW, F64, vf(10.0), vf(400.0)).f == INFINITY, "10**400");
  EXPECT(EV2(POW, F16, vf(2.0), vf(16.0)).f == INFINITY, "2**16 f16");
  /* float IDIV / MOD as tinygrad's python_alu */
  EXPECT(EV2(IDIV, F64, vf(7.5), vf(2.0)).f == 3.0, "7.5 // 2");
  EXPECT(EV2(IDIV, F64, vf(-7.5), vf(2.0)).f == -3.0, "-7.5 // 2");
  EXPECT(same(F64, EV2(IDIV, F64, vf(-1.0), vf(2.0)), vf(-0.0)), "-1 // 2 = -0.0");
  EXPECT(same(F64, EV2(IDIV, F64, vf(1.0), vf(0.0)), vf(0.0)), "1 // 0 = 0");
  EXPECT(same(F32, EV2(IDIV, F32, vf(NAN), vf(0.0)), vf(0.0)), "nan // 0 = 0");
  EXPECT(isnan(EV2(IDIV, F64, vf(NAN), vf(1.0)).f), "nan // 1");
  EXPECT(isnan(EV2(IDIV, F64, vf(1.0), vf(NAN)).f), "1 // nan");
  EXPECT(isnan(EV2(IDIV, F64, vf(INFINITY), vf(1.0)).f), "inf // 1");
  EXPECT(EV2(IDIV, F64, vf(1.0), vf(INFINITY)).f == 0.0, "1 // inf");
  EXPECT(EV2(IDIV, F64, vf(1e300), vf(1e-300)).f == INFINITY, "1e300 // 1e-300");
  /* Python snaps (x - fmod(x, y)) / y = 246.99999999999997 to 247 */
  EXPECT(EV2(IDIV, F64, vf(0x1.3641b2cc24bf1p+13), vf(0x1.40f1880ea062cp+5)).f == 247.0, "python floordiv snap");
  EXPECT(EV2(IDIV, F64, vf(-0x1.66cd841ded99ep+39), vf(0x1.cc0b104cc4a2ep+9)).f == -837446473.0, "floordiv snap");
  EXPECT(EV2(MOD, F64, vf(7.5), vf(2.0)).f == 1.0, "7.5 %% 2");
  EXPECT(EV2(MOD, F64, vf(-7.5), vf(2.0)).f == -1.0, "-7.5 %% 2");
  EXPECT(EV2(MOD, F64, vf(7.0), vf(-2.0)).f == 1.0, "7 %% -2");
  EXPECT(same(F64, EV2(MOD, F64, vf(-4.0), vf(2.0)), vf(0.0)), "-4 %% 2 = +0");
  EXPECT(EV2(MOD, F64, vf(5.0), vf(0.5)).f == 0.0, "5 %% 0.5 (int(0.5) = 0)");
  EXPECT(isnan(EV2(MOD, F64, vf(NAN), vf(2.0)).f), "nan %% 2");
  EXPECT(isnan(EV2(MOD, F64, vf(2.0), vf(INFINITY)).f), "2 %% inf");
  EXPECT(EV2(MOD, F64, vf(1e20), vf(7.0)).f == 2.0, "1e20 %% 7"); /* 10^20 = 3^20 = 2 (mod 7) */
  /* MULACC is one fused multiply-add: x*y+z rounded once */
  double big = 0x1p52 + 1;
  EXPECT(EV2(MUL, F64, vf(big), vf(big)).f == big * big, "mul");
  EXPECT(ev(TKC_OP_MULACC, F64, F64, vf(big), vf(big), vf(-big * big)).f == 1.0, "mulacc keeps the low bit of the product");
  EXPECT(ev(TKC_OP_MULACC, F32, F32, vf(3.0), vf(4.0), vf(0.5)).f == 12.5, "mulacc");
  END();
}

/* ---------------------------------------------------------------- bad inputs */

static void test_bad_inputs(void **state) {
  (void)state;
  tkc_value s[3] = {vi(1), vi(2), vi(3)}, out;
  assert_int_equal(tkc_alu_eval(TKC_OP_ADD, TKC_INT32, TKC_INT32, s, 1, &out), TKC_EINVAL);
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  assert_true(strlen(tkc_last_error()) > 0);
  assert_int_equal(tkc_alu_eval(TKC_OP_ADD, TKC_INT32, TKC_INT32, s, 3, &out), TKC_EINVAL);
  assert_int_equal(tkc_alu_eval(TKC_OP_NEG, TKC_INT32, TKC_INT32, s, 2, &out), TKC_EINVAL);
  assert_int_equal(tkc_alu_eval(TKC_OP_WHERE, TKC_INT32, TKC_BOOL, s, 2, &out), TKC_EINVAL);
  assert_int_equal(tkc_alu_eval(TKC_OP_ADD, TKC_INT32, TKC_INT32, s, -1, &out), TKC_EINVAL);
  assert_int_equal(tkc_alu_eval(TKC_OP_ADD, TKC_VOID, TKC_VOID, s, 2, &out), TKC_EDTYPE);
  assert_int_equal(tkc_last_status(), TKC_EDTYPE);
  assert_int_equal(tkc_alu_eval(TKC_OP_ADD, (tkc_dtype)99, (tkc_dtype)99, s, 2, &out), TKC_EDTYPE);
  assert_int_equal(tkc_alu_eval(TKC_OP_ADD, (tkc_dtype)-1, (tkc_dtype)-1, s, 2, &out), TKC_EDTYPE);
  assert_int_equal(tkc_alu_eval(TKC_OP_CMPLT, TKC_BOOL, TKC_VOID, s, 2, &out), TKC_EDTYPE);
  assert_int_equal(tkc_alu_eval(TKC_OP_WHERE, TKC_INT32, TKC_NDTYPES, s, 3, &out), TKC_EDTYPE);
  assert_int_equal(tkc_alu_eval(TKC_OP_LOAD, TKC_INT32, TKC_INT32, s, 1, &out), TKC_EUNSUPPORTED);
  assert_int_equal(tkc_last_status(), TKC_EUNSUPPORTED);
  assert_int_equal(tkc_alu_eval(TKC_OP_THREEFRY, TKC_UINT64, TKC_UINT64, s, 2, &out), TKC_EUNSUPPORTED);
  assert_int_equal(tkc_alu_eval(TKC_OP_CONST, TKC_INT32, TKC_INT32, s, 0, &out), TKC_EUNSUPPORTED);
  assert_int_equal(tkc_alu_eval(TKC_OP_CAST, TKC_INT32, TKC_INT32, s, 1, &out), TKC_EUNSUPPORTED);
  assert_int_equal(tkc_alu_eval((tkc_op)TKC_NOPS, TKC_INT32, TKC_INT32, s, 2, &out), TKC_EINVAL);
  assert_int_equal(tkc_alu_eval(TKC_OP_ADD, TKC_INT32, TKC_INT32, s, 2, NULL), TKC_EINVAL);
  assert_int_equal(tkc_alu_eval(TKC_OP_ADD, TKC_INT32, TKC_INT32, NULL, 2, &out), TKC_EINVAL);
  assert_int_equal(tkc_alu_eval(TKC_OP_XOR, TKC_FLOAT32, TKC_FLOAT32, s, 2, &out), TKC_EDTYPE);
  assert_int_equal(tkc_alu_eval(TKC_OP_SHL, TKC_FLOAT64, TKC_FLOAT64, s, 2, &out), TKC_EDTYPE);
  assert_int_equal(tkc_alu_eval(TKC_OP_EXP2, TKC_INT32, TKC_INT32, s, 1, &out), TKC_EDTYPE);
  assert_int_equal(tkc_alu_eval(TKC_OP_FDIV, TKC_UINT8, TKC_UINT8, s, 2, &out), TKC_EDTYPE);
  assert_int_equal(tkc_alu_eval(TKC_OP_FDIV, TKC_BOOL, TKC_BOOL, s, 2, &out), TKC_EDTYPE);
  tkc_clear_error();
  assert_int_equal(tkc_alu_eval(TKC_OP_ADD, TKC_INT32, TKC_INT32, s, 2, &out), TKC_OK);
  assert_int_equal(out.i, 3);
  assert_int_equal(tkc_last_status(), TKC_OK);
}

/* ---------------------------------------------------------------- casts, truncation, bitcasts */

static int dtype_values(tkc_dtype dt, tkc_value *v) {
  int n = 0;
  if (is_float(dt)) {
    double d[64];
    int nd = float_values(dt, d);
    const double more[] = {-0.9, 0.9, 127.5, 128.0, -128.5, -129.0, 255.9, 256.0, -1.5, 32767.9, 65535.0, 65536.0,
                           2147483647.0, 2147483648.0, -2147483648.0, -2147483649.0, 4294967295.0, 4294967296.0,
                           9223372036854775807.0, -9223372036854775808.0, 18446744073709551615.0, 1e30, -1e30};
    for (int i = 0; i < nd; i++) v[n++] = vf(d[i]);
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) v[n++] = vf(ref_round(dt, more[i]));
    return n;
  }
  const uint64_t pats[] = {0, 1, (uint64_t)-1, 2, 127, 128, 255, 256, (uint64_t)-128, (uint64_t)-129, 32767, 32768,
                           65535, 65536, 0x7fffffff, 0x80000000ull, 0xffffffffull, 0x7fffffffffffffffull,
                           0x8000000000000000ull, (1ull << 53) + 1, (1ull << 24) + 1, 65504, 65520, 2049};
  for (size_t i = 0; i < sizeof pats / sizeof pats[0]; i++) v[n++] = ref_int(dt, pats[i]);
  for (int i = 0; i < 12; i++) v[n++] = ref_int(dt, rng() >> (rng() % 64));
  return n;
}

static bool is_signed_int(tkc_dtype dt) {
  return dt == TKC_INT8 || dt == TKC_INT16 || dt == TKC_INT32 || dt == TKC_INT64;
}

/* Saturating float -> int by long double compare, NaN -> 0. */
static tkc_value ref_f2i(double x, tkc_dtype to) {
  long double lo = 0, hi = 0;
  int64_t smin = 0, smax = 0;
  uint64_t umax = 0;
  switch (to) {
  case TKC_INT8: smin = INT8_MIN; smax = INT8_MAX; break;
  case TKC_INT16: smin = INT16_MIN; smax = INT16_MAX; break;
  case TKC_INT32: smin = INT32_MIN; smax = INT32_MAX; break;
  case TKC_INT64: smin = INT64_MIN; smax = INT64_MAX; break;
  case TKC_UINT8: umax = UINT8_MAX; break;
  case TKC_UINT16: umax = UINT16_MAX; break;
  case TKC_UINT32: umax = UINT32_MAX; break;
  default: umax = UINT64_MAX; break;
  }
  if (isnan(x)) return vu(0);
  long double t = truncl((long double)x);
  if (is_signed_int(to)) {
    lo = (long double)smin;
    hi = (long double)smax;
    if (t <= lo) return vi(smin);
    if (t >= hi) return vi(smax);
    return vi((int64_t)t);
  }
  hi = (long double)umax;
  if (t <= 0) return vu(0);
  if (t >= hi) return vu(umax);
  return vu((uint64_t)t);
}

static tkc_value ref_cast(tkc_value v, tkc_dtype from, tkc_dtype to) {
  if (is_float(from)) {
    if (is_float(to)) return vf(ref_round(to, v.f));
    if (to == TKC_BOOL) return vi(v.f != 0);
    return ref_f2i(v.f, to);
  }
  bool sgn = is_signed_int(from) || from == TKC_BOOL;
  if (!is_float(to)) return ref_int(to, v.u);
  switch (to) {
  case TKC_FLOAT64: return vf(sgn ? (double)v.i : (double)v.u);
  case TKC_FLOAT32: return vf(sgn ? (float)v.i : (float)v.u);
  case TKC_BFLOAT16: return vf(ref_bf16_round(sgn ? (float)v.i : (float)v.u));
  default: return vf(ref_round(TKC_FLOAT16, sgn ? (double)v.i : (double)v.u));
  }
}

static void test_cast(void **state) {
  (void)state;
  BEGIN();
  for (int from = 0; from < TKC_VOID; from++) {
    tkc_value v[96];
    int nv = dtype_values((tkc_dtype)from, v);
    for (int to = 0; to < TKC_VOID; to++)
      for (int i = 0; i < nv; i++) {
        tkc_value got = tkc_value_cast(v[i], (tkc_dtype)from, (tkc_dtype)to), want = ref_cast(v[i], (tkc_dtype)from, (tkc_dtype)to);
        EXPECT(same((tkc_dtype)to, got, want), "cast %s -> %s of %llx (%a): got %llx (%a) want %llx (%a)", dt_names[from],
               dt_names[to], (unsigned long long)v[i].u, v[i].f, (unsigned long long)got.u, got.f,
               (unsigned long long)want.u, want.f);
      }
  }
  /* spot checks written by hand */
  EXPECT(tkc_value_cast(vf(-2.7), TKC_FLOAT64, TKC_INT32).i == -2, "trunc toward zero");
  EXPECT(tkc_value_cast(vf(2.7), TKC_FLOAT32, TKC_INT8).i == 2, "trunc toward zero");
  EXPECT(tkc_value_cast(vf(NAN), TKC_FLOAT32, TKC_INT32).i == 0, "nan -> 0");
  EXPECT(tkc_value_cast(vf(1e20), TKC_FLOAT64, TKC_INT32).i == INT32_MAX, "saturate high");
  EXPECT(tkc_value_cast(vf(-INFINITY), TKC_FLOAT64, TKC_INT64).i == INT64_MIN, "saturate low");
  EXPECT(tkc_value_cast(vf(-1.0), TKC_FLOAT64, TKC_UINT8).u == 0, "negative -> unsigned 0");
  EXPECT(tkc_value_cast(vf(1e30), TKC_FLOAT64, TKC_UINT64).u == UINT64_MAX, "saturate u64");
  EXPECT(tkc_value_cast(vf(NAN), TKC_FLOAT64, TKC_BOOL).i == 1, "nan -> true");
  EXPECT(tkc_value_cast(vf(-0.0), TKC_FLOAT64, TKC_BOOL).i == 0, "-0 -> false");
  EXPECT(tkc_value_cast(vi(-1), TKC_INT32, TKC_UINT64).u == UINT64_MAX, "sign extension");
  EXPECT(tkc_value_cast(vu(0xffffffffu), TKC_UINT32, TKC_INT64).i == 4294967295ll, "zero extension");
  EXPECT(tkc_value_cast(vi(300), TKC_INT32, TKC_UINT8).u == 44, "wrap");
  EXPECT(tkc_value_cast(vu(UINT64_MAX), TKC_UINT64, TKC_FLOAT32).f == 0x1p64, "u64 -> f32");
  EXPECT(tkc_value_cast(vi(16777217), TKC_INT32, TKC_FLOAT32).f == 16777216.0, "int -> f32 rounds");
  EXPECT(tkc_value_cast(vi(2049), TKC_INT32, TKC_FLOAT16).f == 2048.0, "int -> f16 rounds to even");
  EXPECT(tkc_value_cast(vi(70000), TKC_INT32, TKC_FLOAT16).f == INFINITY, "int -> f16 overflows");
  EXPECT(tkc_value_cast(vi(257), TKC_INT32, TKC_BFLOAT16).f == 256.0, "int -> bf16");
  /* int64 -> float32 rounds once (as C), not through double: 2^62 + 2^39 + 2^38 - 1 is below the tie */
  EXPECT(tkc_value_cast(vi((1ll << 62) + (1ll << 39) + (1ll << 38) - 1), TKC_INT64, TKC_FLOAT32).f == 0x1p62 + 0x1p39,
         "int64 -> f32 single rounding");
  /* ... and so does -> bfloat16, through float32: mantissa 0x00ffff (below the float32 tie), which then
   * rounds up to 2^62*(1+2^-7) */
  EXPECT(tkc_value_cast(vi((1ll << 62) + 0xffffll * (1ll << 39) + (1ll << 38) - 1), TKC_INT64, TKC_BFLOAT16).f ==
             0x1p62 + 0x1p55,
         "int64 -> bf16 through float32");
  EXPECT(tkc_value_cast(vi(3), TKC_BOOL, TKC_INT32).i == 1, "bool reads nonzero as 1");
  EXPECT(tkc_value_cast(vf(0.1), TKC_FLOAT64, TKC_FLOAT32).f == (double)0.1f, "f64 -> f32");
  /* void / out of range: unchanged */
  EXPECT(tkc_value_cast(vu(0x1234), TKC_VOID, TKC_INT8).u == 0x1234, "void");
  EXPECT(tkc_value_cast(vu(0x1234), TKC_INT32, (tkc_dtype)77).u == 0x1234, "bad dtype");
  END();
}

static void test_truncate(void **state) {
  (void)state;
  BEGIN();
  for (int dt = 0; dt < TKC_VOID; dt++)
    for (int i = 0; i < 2000; i++) {
      tkc_value v, want;
      if (is_float((tkc_dtype)dt)) {
        uint64_t b = rng();
        if (i % 2) {
          double m = 1.0 + (double)(rng() >> 11) * 0x1p-53;
          v = vf(((b & 1) ? -1.0 : 1.0) * ldexp(m, (int)(rng() % 300) - 150));
        } else {
          v.u = b;
        }
        want = vf(ref_round((tkc_dtype)dt, v.f));
      } else {
        v.u = rng() >> (rng() % 64);
        want = ref_int((tkc_dtype)dt, v.u);
      }
      tkc_value got = tkc_value_truncate(v, (tkc_dtype)dt);
      EXPECT(same((tkc_dtype)dt, got, want), "truncate %s %llx: got %llx want %llx", dt_names[dt],
             (unsigned long long)v.u, (unsigned long long)got.u, (unsigned long long)want.u);
    }
  EXPECT(tkc_value_truncate(vi(300), TKC_INT8).i == 44, "300 int8");
  EXPECT(tkc_value_truncate(vi(128), TKC_INT8).i == -128, "128 int8");
  EXPECT(tkc_value_truncate(vu(0x1ff), TKC_UINT8).u == 0xff, "0x1ff uint8");
  EXPECT(tkc_value_truncate(vi(2), TKC_BOOL).i == 1, "2 bool");
  EXPECT(tkc_value_truncate(vi(-1), TKC_UINT64).u == UINT64_MAX, "-1 uint64");
  EXPECT(tkc_value_truncate(vf(0.1), TKC_FLOAT32).f == (double)0.1f, "0.1 f32");
  EXPECT(tkc_value_truncate(vf(1e300), TKC_FLOAT32).f == INFINITY, "1e300 f32");
  EXPECT(tkc_value_truncate(vu(42), TKC_VOID).u == 42, "void unchanged");
  END();
}

static void test_bitcast(void **state) {
  (void)state;
  BEGIN();
  for (int i = 0; i < 3000; i++) {
    uint64_t b = rng();
    /* int32 <-> float32 */
    int32_t i32 = (int32_t)(uint32_t)b;
    float f32;
    memcpy(&f32, &i32, 4);
    tkc_value got = tkc_value_bitcast(vi(i32), TKC_INT32, TKC_FLOAT32);
    EXPECT(same(TKC_FLOAT32, got, vf(f32)), "i32->f32 %x", (unsigned)i32);
    if (!isnan(f32)) {
      got = tkc_value_bitcast(vf(f32), TKC_FLOAT32, TKC_INT32);
      EXPECT(got.i == i32, "f32->i32 %x", (unsigned)i32);
      got = tkc_value_bitcast(vf(f32), TKC_FLOAT32, TKC_UINT32);
      EXPECT(got.u == (uint32_t)i32, "f32->u32 %x", (unsigned)i32);
    }
    /* uint64/int64 <-> float64 */
    double f64;
    memcpy(&f64, &b, 8);
    got = tkc_value_bitcast(vu(b), TKC_UINT64, TKC_FLOAT64);
    EXPECT(same(TKC_FLOAT64, got, vf(f64)), "u64->f64");
    if (!isnan(f64)) {
      EXPECT(tkc_value_bitcast(vf(f64), TKC_FLOAT64, TKC_INT64).u == b, "f64->i64");
      EXPECT(tkc_value_bitcast(vf(f64), TKC_FLOAT64, TKC_UINT64).u == b, "f64->u64");
    }
    /* 16-bit */
    uint16_t h = (uint16_t)b;
    double hv = ref_f16_decode(h), bv = (double)bitsf((uint32_t)h << 16);
    EXPECT(same(TKC_FLOAT16, tkc_value_bitcast(vu(h), TKC_UINT16, TKC_FLOAT16), vf(hv)), "u16->f16 %x", h);
    EXPECT(same(TKC_FLOAT16, tkc_value_bitcast(vi((int16_t)h), TKC_INT16, TKC_FLOAT16), vf(hv)), "i16->f16 %x", h);
    EXPECT(same(TKC_BFLOAT16, tkc_value_bitcast(vi((int16_t)h), TKC_INT16, TKC_BFLOAT16), vf(bv)), "i16->bf16 %x", h);
    if (!isnan(hv)) {
      EXPECT(tkc_value_bitcast(vf(hv), TKC_FLOAT16, TKC_UINT16).u == h, "f16->u16 %x", h);
      EXPECT(tkc_value_bitcast(vf(hv), TKC_FLOAT16, TKC_INT16).i == (int16_t)h, "f16->i16 %x", h);
      EXPECT(same(TKC_BFLOAT16, tkc_value_bitcast(vf(hv), TKC_FLOAT16, TKC_BFLOAT16), vf(bv)), "f16->bf16 %x", h);
    }
    if (!isnan(bv)) EXPECT(tkc_value_bitcast(vf(bv), TKC_BFLOAT16, TKC_UINT16).u == h, "bf16->u16 %x", h);
    /* 8-bit */
    uint8_t u8 = (uint8_t)b;
    EXPECT(tkc_value_bitcast(vu(u8), TKC_UINT8, TKC_INT8).i == (int8_t)u8, "u8->i8");
    EXPECT(tkc_value_bitcast(vi((int8_t)u8), TKC_INT8, TKC_UINT8).u == u8, "i8->u8");
    EXPECT(tkc_value_bitcast(vu(u8), TKC_UINT8, TKC_BOOL).i == (u8 != 0), "u8->bool");
  }
  EXPECT(tkc_value_bitcast(vi(1), TKC_BOOL, TKC_UINT8).u == 1, "bool->u8");
  EXPECT(tkc_value_bitcast(vf(1.0), TKC_FLOAT32, TKC_INT32).i == 0x3f800000, "1.0f");
  EXPECT(tkc_value_bitcast(vf(-2.0), TKC_FLOAT64, TKC_UINT64).u == 0xc000000000000000ull, "-2.0");
  EXPECT(tkc_value_bitcast(vf(1.0), TKC_FLOAT16, TKC_UINT16).u == 0x3c00, "1.0h");
  EXPECT(tkc_value_bitcast(vf(-0.0), TKC_FLOAT16, TKC_INT16).i == (int16_t)0x8000, "-0.0h");
  EXPECT(tkc_value_bitcast(vf(1.0), TKC_BFLOAT16, TKC_UINT16).u == 0x3f80, "1.0bf");
  EXPECT(tkc_value_bitcast(vi(-1), TKC_INT32, TKC_UINT32).u == 0xffffffffu, "i32->u32");
  /* size mismatch / void: unchanged */
  EXPECT(tkc_value_bitcast(vf(1.5), TKC_FLOAT32, TKC_INT64).f == 1.5, "size mismatch");
  EXPECT(tkc_value_bitcast(vi(-3), TKC_INT8, TKC_INT16).i == -3, "size mismatch");
  EXPECT(tkc_value_bitcast(vi(-3), TKC_INT8, TKC_VOID).i == -3, "void");
  END();
}

static void test_args(void **state) {
  (void)state;
  BEGIN();
  tkc_arg a;
  a = tkc_arg_int(5);
  EXPECT(tkc_value_from_arg(&a, TKC_INT8).i == 5, "int 5");
  a = tkc_arg_int(300);
  EXPECT(tkc_value_from_arg(&a, TKC_UINT8).u == 44, "int 300 uint8");
  a = tkc_arg_int(-1);
  EXPECT(tkc_value_from_arg(&a, TKC_UINT64).u == UINT64_MAX, "uint64 bit pattern");
  EXPECT(tkc_value_from_arg(&a, TKC_BOOL).i == 1, "-1 bool");
  EXPECT(tkc_value_from_arg(&a, TKC_FLOAT32).f == -1.0, "-1 float");
  a = tkc_arg_int(16777217);
  EXPECT(tkc_value_from_arg(&a, TKC_FLOAT32).f == 16777216.0, "int arg rounds to f32");
  EXPECT(tkc_value_from_arg(&a, TKC_FLOAT64).f == 16777217.0, "int arg f64");
  a = tkc_arg_float(2.7);
  EXPECT(tkc_value_from_arg(&a, TKC_INT32).i == 2, "2.7 int32");
  a = tkc_arg_float(-2.7);
  EXPECT(tkc_value_from_arg(&a, TKC_INT32).i == -2, "-2.7 int32");
  a = tkc_arg_float(1e20);
  EXPECT(tkc_value_from_arg(&a, TKC_INT32).i == INT32_MAX, "1e20 int32");
  a = tkc_arg_float(NAN);
  EXPECT(tkc_value_from_arg(&a, TKC_INT16).i == 0, "nan int16");
  EXPECT(isnan(tkc_value_from_arg(&a, TKC_FLOAT16).f), "nan f16");
  a = tkc_arg_float(0.5);
  EXPECT(tkc_value_from_arg(&a, TKC_BOOL).i == 1, "0.5 bool");
  a = tkc_arg_float(0.1);
  EXPECT(tkc_value_from_arg(&a, TKC_FLOAT32).f == (double)0.1f, "0.1 f32");
  EXPECT(tkc_value_from_arg(&a, TKC_FLOAT64).f == 0.1, "0.1 f64");
  EXPECT(tkc_value_from_arg(&a, TKC_FLOAT16).f == ref_round(TKC_FLOAT16, 0.1), "0.1 f16");
  a = tkc_arg_none();
  EXPECT(tkc_value_from_arg(&a, TKC_INT32).u == 0, "none");
  EXPECT(tkc_value_from_arg(NULL, TKC_INT32).u == 0, "NULL");

  tkc_arg r = tkc_value_to_arg(vi(-5), TKC_INT8);
  EXPECT(r.kind == TKC_ARG_INT && r.v.i == -5, "to_arg int8");
  r = tkc_value_to_arg(vu(UINT64_MAX), TKC_UINT64);
  EXPECT(r.kind == TKC_ARG_INT && r.v.i == -1, "to_arg uint64 pattern");
  r = tkc_value_to_arg(vu(4000000000u), TKC_UINT32);
  EXPECT(r.kind == TKC_ARG_INT && r.v.i == 4000000000ll, "to_arg uint32");
  r = tkc_value_to_arg(vi(1), TKC_BOOL);
  EXPECT(r.kind == TKC_ARG_INT && r.v.i == 1, "to_arg bool");
  r = tkc_value_to_arg(vf(0.1), TKC_FLOAT32);
  EXPECT(r.kind == TKC_ARG_FLOAT && r.v.f == (double)0.1f, "to_arg f32");
  r = tkc_value_to_arg(vf(-0.0), TKC_FLOAT64);
  EXPECT(r.kind == TKC_ARG_FLOAT && dbits(r.v.f) == dbits(-0.0), "to_arg -0.0");
  r = tkc_value_to_arg(vi(1), TKC_VOID);
  EXPECT(r.kind == TKC_ARG_NONE, "to_arg void");
  /* round trip over every dtype's values */
  for (int dt = 0; dt < TKC_VOID; dt++) {
    tkc_value v[96];
    int nv = dtype_values((tkc_dtype)dt, v);
    for (int i = 0; i < nv; i++) {
      tkc_arg ar = tkc_value_to_arg(v[i], (tkc_dtype)dt);
      EXPECT(ar.kind == (is_float((tkc_dtype)dt) ? TKC_ARG_FLOAT : TKC_ARG_INT), "kind %s", dt_names[dt]);
      EXPECT(same((tkc_dtype)dt, tkc_value_from_arg(&ar, (tkc_dtype)dt), v[i]), "round trip %s %llx", dt_names[dt],
             (unsigned long long)v[i].u);
    }
  }
  END();
}

/* ---------------------------------------------------------------- float16 / bfloat16 converters */

static void test_f16_convert(void **state) {
  (void)state;
  BEGIN();
  for (uint32_t c = 0; c < 0x10000; c++) { /* every half decodes exactly */
    double want = ref_f16_decode((uint16_t)c);
    float got = tkc_f16_to_f32((uint16_t)c);
    if (isnan(want)) {
      EXPECT(isnan(got) && !!signbit(got) == !!(c & 0x8000), "f16 nan %x", c);
      uint16_t back = tkc_f32_to_f16(got);
      EXPECT((back & 0x7c00) == 0x7c00 && (back & 0x3ff) && (back & 0x8000) == (c & 0x8000), "nan round trip %x", c);
    } else {
      EXPECT(dbits((double)got) == dbits(want), "f16 decode %x", c);
      EXPECT(tkc_f32_to_f16(got) == c, "f16 round trip %x", c);
    }
  }
  for (int c = 0; c < 0x7bff; c++) /* halfway points round to even, and just off them to nearest */
    for (int s = 0; s < 2; s++) {
      float sign = s ? -1.0f : 1.0f, mid = sign * (float)((f16tab[c] + f16tab[c + 1]) / 2);
      uint16_t sb = s ? 0x8000 : 0, even = (uint16_t)((c & 1) ? c + 1 : c);
      EXPECT(tkc_f32_to_f16(mid) == (sb | even), "mid %x", c);
      EXPECT(tkc_f32_to_f16(nextafterf(mid, 0.0f)) == (sb | c), "below mid %x", c);
      EXPECT(tkc_f32_to_f16(nextafterf(mid, sign * INFINITY)) == (sb | (c + 1)), "above mid %x", c);
    }
  EXPECT(tkc_f32_to_f16(65520.0f) == 0x7c00, "65520");
  EXPECT(tkc_f32_to_f16(nextafterf(65520.0f, 0.0f)) == 0x7bff, "below 65520");
  EXPECT(tkc_f32_to_f16(-65520.0f) == 0xfc00, "-65520");
  EXPECT(tkc_f32_to_f16(1e20f) == 0x7c00, "1e20");
  EXPECT(tkc_f32_to_f16(INFINITY) == 0x7c00 && tkc_f32_to_f16(-INFINITY) == 0xfc00, "inf");
  EXPECT(tkc_f32_to_f16(0x1p-25f) == 0x0000, "2^-25 ties to 0");
  EXPECT(tkc_f32_to_f16(nextafterf(0x1p-25f, 1.0f)) == 0x0001, "above 2^-25");
  EXPECT(tkc_f32_to_f16(0x1.8p-24f) == 0x0002, "1.5*2^-24 ties to 2");
  EXPECT(tkc_f32_to_f16(-0x1p-30f) == 0x8000, "tiny negative -> -0");
  EXPECT(tkc_f32_to_f16(0x1.ffcp-15f) == 0x0400, "tie between the largest subnormal and the smallest normal -> even (normal)");
  EXPECT(tkc_f32_to_f16(1.0f) == 0x3c00 && tkc_f32_to_f16(-2.0f) == 0xc000, "1, -2");
  uint16_t n = tkc_f32_to_f16(NAN);
  EXPECT((n & 0x7c00) == 0x7c00 && (n & 0x3ff), "nan");
  for (int i = 0; i < 300000; i++) { /* random float bit patterns against the nearest-search reference */
    float f = bitsf((uint32_t)rng());
    uint16_t got = tkc_f32_to_f16(f);
    if (isnan(f)) {
      EXPECT((got & 0x7c00) == 0x7c00 && (got & 0x3ff), "rand nan");
      continue;
    }
    EXPECT(got == ref_f16_code((double)f), "f32 %a -> %x want %x", (double)f, got, ref_f16_code((double)f));
  }
  END();
}

/* Nearest bfloat16 by comparing the two neighbours, ties to even; past the largest finite value the
 * upper neighbour is 2^128 (IEEE overflow rule). */
static uint16_t ref_bf16_rne(float f) {
  uint32_t b = fbits(f), lo = b & 0xffff0000u, hi = lo + 0x10000u;
  double x = f, vlo = bitsf(lo);
  double vhi = ((hi & 0x7f800000u) == 0x7f800000u) ? copysign(0x1p128, x) : (double)bitsf(hi);
  double dlo = fabs(x - vlo), dhi = fabs(vhi - x);
  if (dlo < dhi) return (uint16_t)(lo >> 16);
  if (dhi < dlo) return (uint16_t)(hi >> 16);
  return (uint16_t)(((lo >> 16) & 1) ? hi >> 16 : lo >> 16);
}

static void test_bf16_convert(void **state) {
  (void)state;
  BEGIN();
  for (uint32_t c = 0; c < 0x10000; c++) {
    float want = bitsf(c << 16), got = tkc_bf16_to_f32((uint16_t)c);
    EXPECT(fbits(got) == fbits(want), "bf16 decode %x", c);
    if (!isnan(want)) EXPECT(tkc_f32_to_bf16(got) == c, "bf16 round trip %x", c);
    else EXPECT(isnan(tkc_bf16_to_f32(tkc_f32_to_bf16(got))), "bf16 nan round trip %x", c);
  }
  for (int i = 0; i < 300000; i++) {
    uint32_t b = (uint32_t)rng();
    if (i % 3 == 0) b = (b & 0xffff0000u) | 0x8000u; /* exact ties */
    float f = bitsf(b);
    uint16_t got = tkc_f32_to_bf16(f);
    if (isnan(f)) {
      EXPECT(isnan(tkc_bf16_to_f32(got)) && (got & 0x8000) == ((b >> 16) & 0x8000), "nan %x", b);
      continue;
    }
    EXPECT(got == ref_bf16_rne(f), "f32 %x -> %x want %x", b, got, ref_bf16_rne(f));
  }
  EXPECT(tkc_f32_to_bf16(1.0f) == 0x3f80, "1");
  EXPECT(tkc_f32_to_bf16(bitsf(0x3f808000u)) == 0x3f80, "tie to even down");
  EXPECT(tkc_f32_to_bf16(bitsf(0x3f818000u)) == 0x3f82, "tie to even up");
  EXPECT(tkc_f32_to_bf16(FLT_MAX) == 0x7f80, "FLT_MAX rounds to inf");
  EXPECT(tkc_f32_to_bf16(bitsf(0x7f7f7fffu)) == 0x7f7f, "just below the overflow tie");
  EXPECT(tkc_f32_to_bf16(-INFINITY) == 0xff80, "-inf");
  EXPECT(isnan(tkc_bf16_to_f32(tkc_f32_to_bf16(bitsf(0x7f800001u)))), "low-payload nan stays nan");
  EXPECT(tkc_f32_to_bf16(bitsf(0x00000001u)) == 0x0000, "smallest subnormal");
  EXPECT(tkc_f32_to_bf16(bitsf(0x00018000u)) == 0x0002, "subnormal tie to even");
  END();
}

int main(void) {
  f16tab_init();
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(i8_test),        cmocka_unit_test(u8_test),          cmocka_unit_test(i16_test),
    cmocka_unit_test(u16_test),       cmocka_unit_test(i32_test),         cmocka_unit_test(u32_test),
    cmocka_unit_test(i64_test),       cmocka_unit_test(u64_test),         cmocka_unit_test(test_bool_ops),
    cmocka_unit_test(test_float_ops), cmocka_unit_test(test_int_edges),   cmocka_unit_test(test_float_edges),
    cmocka_unit_test(test_bad_inputs), cmocka_unit_test(test_cast),       cmocka_unit_test(test_truncate),
    cmocka_unit_test(test_bitcast),   cmocka_unit_test(test_args),        cmocka_unit_test(test_f16_convert),
    cmocka_unit_test(test_bf16_convert),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
