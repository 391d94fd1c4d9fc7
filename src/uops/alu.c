/* src/uops/alu.c — constant evaluation of scalar values: tinygrad's python_alu / exec_alu / truncate
 * (ops.py, dtype.py), value casts and bitcasts, CONST args <-> values, and float16 / bfloat16
 * conversion.
 *
 * Values (tkc_value): bool and signed ints live in .i (bool as 0/1, ints sign-extended), unsigned
 * ints in .u (zero-extended), every float dtype in .f as a double that the dtype can represent.
 * Integer operands are wrapped to their dtype before use, so an out-of-range .i/.u is read modulo
 * 2^bits (bool: nonzero is true).
 *
 * Semantics, following tinygrad v0.10.2's exec_alu(op, dtype, src) with truncate_output=True:
 *  - every op is computed the way Python computes it (big ints -> here uint64 modulo 2^64, floats in
 *    double) and the result is then truncated to the result dtype: ints wrap, bool is `!= 0`
 *    (NaN is true), float32 rounds to nearest float, float16 rounds to nearest even with overflow
 *    (|x| >= 65520) going to +-inf, bfloat16 rounds x to float32, then to nearest even (numpy/torch;
 *    tinygrad's truncate_bf16 truncates instead), overflowing to +-inf, NaN staying NaN.
 *  - bool is Python's bool: arithmetic is int arithmetic on 0/1, then `!= 0` (True+True -> True,
 *    False-True -> True, -True -> True). EXP2/LOG2/SIN/SQRT/RECIP on bool are evaluated on 0.0/1.0
 *    and then `!= 0`, like exec_alu.
 *  - IDIV truncates toward zero, MOD takes the sign of the dividend (Python: abs(x)//abs(y) with the
 *    sign of x*y, abs(int(x)) % abs(int(y)) with the sign of x). INT_MIN / -1 wraps to INT_MIN,
 *    INT_MIN % -1 is 0.
 *  - LOG2(0) = -inf, LOG2(<0) = nan, SQRT(<0) = nan, EXP2 overflow = inf, RECIP(+-0) = +-inf,
 *    SIN(+-inf) = nan, MAX(a, b) = b > a ? b : a (Python's max: NaN handling follows that).
 *  - POW is C's pow, as numpy's (Python raises for 0 ** negative; this gives +-inf): a negative base
 *    with a non-integer exponent is nan, (-0) ** -3 = -inf, 1 ** nan = 1.
 *  - FDIV (not in python_alu) is IEEE division on floats: x/0 = +-inf, 0/0 = nan.
 *  - CMPLT/CMPNE compare the operands as in_dt (unsigned compare for unsigned ints, IEEE for
 *    floats: NaN != NaN) and give 0/1 converted to dt (normally bool).
 *  - WHERE reads its condition as in_dt (normally bool; a float condition is true when != 0) and
 *    picks src[1] or src[2], which are of dt. For every other op in_dt is ignored: the operands
 *    are of dt.
 *
 * Decisions where Python would raise instead of answering (documented deviations):
 *  - integer x / 0 = 0 (as tinygrad's IDIV), x % 0 = 0 (Python raises ZeroDivisionError).
 *  - SHL/SHR: a shift count >= the 64-bit working width gives 0 for SHL and for SHR of unsigned and
 *    bool, and the sign fill (0 or -1) for SHR of signed ints, which is exactly Python's big-int
 *    result truncated to the dtype (x << y for y >= bits wraps to 0; x >> y is arithmetic for
 *    signed). A negative shift count (Python: ValueError) gives 0.
 *  - POW on ints (tinygrad only uses POW on floats): a non-negative exponent gives the exact power
 *    modulo 2^bits (Python pow + wrap); a negative exponent gives the power truncated toward zero:
 *    1 for base 1, +-1 for base -1, else 0 (0 ** -n = 0 like x / 0).
 *  - POW overflow gives C pow's +-inf (Python raises OverflowError, which safe_pow does not catch).
 *  - float MOD follows Python (truncate both to integers, |x| % |y| with the sign of x, zero is +0);
 *    a non-finite operand gives nan (Python raises) and a divisor that truncates to 0 gives 0.
 *  - float IDIV follows Python: y == 0 -> 0, else floor(|x| / |y|) by Python's float floor division,
 *    negated when x*y < 0 (so -1.0 // 2.0 = -0.0).
 *  - EXP2/LOG2/SIN/SQRT/RECIP/FDIV on signed/unsigned ints, bitwise ops and shifts on floats, and
 *    FDIV on bool are TKC_EDTYPE (Python/ctypes raise TypeError there).
 *
 * Casts (tkc_value_cast) are C casts made total: float -> int truncates toward zero and saturates to
 * the dtype's range, NaN -> 0 (C: undefined); int -> int wraps; -> bool is != 0 (NaN -> true);
 * int -> float32 is one rounding of the integer (as C, not through double); -> float16 rounds to
 * nearest even from the double value; -> bfloat16 uses the same rounding as the ALU (to float32,
 * then to nearest even).
 *
 * tkc_f32_to_f16 / tkc_f32_to_bf16 are IEEE round-to-nearest-even conversions (subnormals, +-inf,
 * NaN kept quiet with the top payload bits). */
#include <math.h>
#include <string.h>
#include "tkc/uop.h"
#include "base/common.h"

/* ---------------------------------------------------------------- dtype facts (local) */

enum { ALU_KBOOL = 1, ALU_KSINT, ALU_KUINT, ALU_KFLOAT };

typedef struct alu_dtinfo {
  uint8_t kind; /* ALU_K*; 0 = no value (void) */
  uint8_t bits; /* storage width */
} alu_dtinfo;

static const alu_dtinfo alu_dt[TKC_NDTYPES] = {
  [TKC_BOOL] = {ALU_KBOOL, 8},     [TKC_INT8] = {ALU_KSINT, 8},     [TKC_UINT8] = {ALU_KUINT, 8},
  [TKC_INT16] = {ALU_KSINT, 16},   [TKC_UINT16] = {ALU_KUINT, 16},  [TKC_INT32] = {ALU_KSINT, 32},
  [TKC_UINT32] = {ALU_KUINT, 32},  [TKC_INT64] = {ALU_KSINT, 64},   [TKC_UINT64] = {ALU_KUINT, 64},
  [TKC_FLOAT16] = {ALU_KFLOAT, 16}, [TKC_BFLOAT16] = {ALU_KFLOAT, 16}, [TKC_FLOAT32] = {ALU_KFLOAT, 32},
  [TKC_FLOAT64] = {ALU_KFLOAT, 64}, [TKC_VOID] = {0, 0},
  [TKC_FLOAT8_E4M3FN] = {ALU_KFLOAT, 8}, [TKC_FLOAT8_E5M2] = {ALU_KFLOAT, 8},
};

static const char *const alu_op_names[TKC_NOPS] = {
#define TKC_OP(name, flags) #name,
#include "tkc/ops.def"
#undef TKC_OP
};

static int alu_kind(tkc_dtype dt) { return (unsigned)dt < (unsigned)TKC_NDTYPES ? alu_dt[dt].kind : 0; }

/* x wrapped to dt's width: sign-extended for signed ints, zero-extended for unsigned, 0/1 for bool. */
static uint64_t alu_wrap(uint64_t x, tkc_dtype dt) {
  const alu_dtinfo *d = &alu_dt[dt];
  if (d->kind == ALU_KBOOL) return x != 0;
  if (d->bits >= 64) return x;
  uint64_t mask = (UINT64_C(1) << d->bits) - 1;
  x &= mask;
  if (d->kind == ALU_KSINT && ((x >> (d->bits - 1)) & 1)) x |= ~mask;
  return x;
}

/* The two's complement reading of x, without implementation-defined conversions. */
static int64_t alu_u2i(uint64_t x) { return x <= (uint64_t)INT64_MAX ? (int64_t)x : -(int64_t)~x - 1; }

/* An int/bool value of dt from a raw 64-bit pattern (wrapped first). */
static tkc_value alu_int_value(uint64_t raw, tkc_dtype dt) {
  tkc_value v;
  raw = alu_wrap(raw, dt);
  if (alu_dt[dt].kind == ALU_KUINT) v.u = raw;
  else v.i = alu_u2i(raw);
  return v;
}

/* ---------------------------------------------------------------- float16 / bfloat16 */

/* q >= 0 (< 2^52) rounded to an integer, ties to even. */
static uint64_t alu_rne(double q) {
  double f = floor(q), d = q - f;
  uint64_t r = (uint64_t)f;
  if (d > 0.5 || (d == 0.5 && (r & 1))) r++;
  return r;
}

/* double -> IEEE half bits, one rounding (nearest even). */
static uint16_t alu_f64_to_f16(double x) {
  uint16_t sign = signbit(x) ? 0x8000 : 0;
  if (isnan(x)) {
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return (uint16_t)(sign | 0x7e00 | ((b >> 42) & 0x3ff));
  }
  double a = fabs(x);
  if (a >= 65520.0) return (uint16_t)(sign | 0x7c00); /* rounds past 65504 (and inf) */
  if (a < 0x1p-14) return (uint16_t)(sign | alu_rne(a * 0x1p24)); /* subnormal; 1024 encodes 2^-14 */
  int e;
  (void)frexp(a, &e);                      /* a in [2^(e-1), 2^e) */
  uint64_t r = alu_rne(ldexp(a, 11 - e));  /* [1024, 2048] */
  int ex = e - 1 + 15;
  if (r == 2048) { r = 1024; ex++; }
  return (uint16_t)(sign | (ex << 10) | (int)(r - 1024));
}

uint16_t tkc_f32_to_f16(float f) { return alu_f64_to_f16((double)f); }

float tkc_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, ex = (h >> 10) & 0x1f, m = h & 0x3ff, bits;
  if (ex == 0) {
    float f = (float)m * 0x1p-24f; /* exact */
    return sign ? -f : f;
  }
  if (ex == 0x1f) bits = sign | 0x7f800000u | (m << 13);
  else bits = sign | ((ex + 112) << 23) | (m << 13);
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t tkc_f32_to_bf16(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  if ((b & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((b >> 16) | 0x40); /* NaN stays a (quiet) NaN */
  b += 0x7fffu + ((b >> 16) & 1);
  return (uint16_t)(b >> 16);
}

float tkc_bf16_to_f32(uint16_t h) {
  uint32_t b = (uint32_t)h << 16;
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

/* ---------------------------------------------------------------- fp8 (OCP e4m3fn, e5m2) */

/* the fp8 format of dt: mantissa bits and exponent bias (the exponent has 7 - mbits bits) */
static bool alu_fp8_format(tkc_dtype dt, int *mbits, int *bias) {
  if (dt == TKC_FLOAT8_E4M3FN) *mbits = 3, *bias = 7;
  else if (dt == TKC_FLOAT8_E5M2) *mbits = 2, *bias = 15;
  else return false;
  return true;
}

uint8_t tkc_fp8_from_double(double x, tkc_dtype dt) {
  int mb, bias;
  if (!alu_fp8_format(dt, &mb, &bias)) return 0;
  bool e4 = dt == TKC_FLOAT8_E4M3FN;
  unsigned sign = signbit(x) ? 0x80u : 0u;
  if (isnan(x)) return (uint8_t)(sign | (e4 ? 0x7fu : 0x7eu));
  double a = fabs(x);
  if (isinf(a)) return (uint8_t)(sign | (e4 ? 0x7fu : 0x7cu)); /* e4m3fn has no inf */
  unsigned bits;
  if (a < ldexp(1.0, 1 - bias)) { /* subnormal: multiples of 2^(1-bias-mb); 2^mb encodes the least normal */
    bits = (unsigned)alu_rne(ldexp(a, bias + mb - 1));
  } else {
    int e;
    (void)frexp(a, &e);                           /* a in [2^(e-1), 2^e) */
    uint64_t r = alu_rne(ldexp(a, mb + 1 - e));   /* [2^mb, 2^(mb+1)] */
    int ex = e - 1 + bias;
    if (r == (UINT64_C(1) << (mb + 1))) { r >>= 1; ex++; }
    bits = ex >= 1 << (7 - mb) ? 0x80u : (unsigned)ex << mb | (unsigned)(r - (UINT64_C(1) << mb)); /* 0x80: overflowed */
  }
  if (e4 && bits > 0x7eu) bits = 0x7f;  /* past 448 (the rounding of anything above 464) -> NaN */
  if (!e4 && bits > 0x7bu) bits = 0x7c; /* past 57344 -> inf */
  return (uint8_t)(sign | bits);
}

float tkc_fp8_to_float(uint8_t b, tkc_dtype dt) {
  int mb, bias;
  if (!alu_fp8_format(dt, &mb, &bias)) return 0.0f;
  unsigned ex = (b & 0x7fu) >> mb, m = b & ((1u << mb) - 1);
  bool e4 = dt == TKC_FLOAT8_E4M3FN;
  float f;
  if (e4 ? (b & 0x7fu) == 0x7fu : ex == 0x1fu) f = e4 || m ? NAN : INFINITY;
  else if (ex == 0) f = ldexpf((float)m, 1 - bias - mb); /* subnormal (exact) */
  else f = ldexpf((float)(m | 1u << mb), (int)ex - bias - mb);
  return b & 0x80u ? -f : f;
}

/* x rounded to bfloat16 as numpy/torch do: to float32 first, then to nearest even (NaN stays NaN,
 * past the largest finite value -> +-inf). Every device rounds this way, bit for bit. */
static double alu_round_bf16(double x) { return tkc_bf16_to_f32(tkc_f32_to_bf16((float)x)); }

/* x rounded to the float dtype dt. */
static double alu_round(double x, tkc_dtype dt) {
  switch (dt) {
  case TKC_FLOAT32: return (double)(float)x;
  case TKC_FLOAT16: return (double)tkc_f16_to_f32(alu_f64_to_f16(x));
  case TKC_BFLOAT16: return alu_round_bf16(x);
  case TKC_FLOAT8_E4M3FN: case TKC_FLOAT8_E5M2: return tkc_fp8_to_float(tkc_fp8_from_double(x, dt), dt);
  default: return x;
  }
}

/* ---------------------------------------------------------------- casts */

/* A float converted to the int dtype `to`: truncated toward zero, saturated, NaN -> 0. Raw pattern. */
static uint64_t alu_f2i(double x, tkc_dtype to) {
  int bits = alu_dt[to].bits;
  if (isnan(x)) return 0;
  double t = trunc(x);
  if (alu_dt[to].kind == ALU_KUINT) {
    if (t <= 0) return 0;
    if (t >= ldexp(1.0, bits)) return bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    return (uint64_t)t;
  }
  double lim = ldexp(1.0, bits - 1);
  if (t >= lim) return (UINT64_C(1) << (bits - 1)) - 1;
  if (t < -lim) return UINT64_C(0) - (UINT64_C(1) << (bits - 1));
  return (uint64_t)(int64_t)t;
}

/* An int/bool value as a float of dtype `to` (one rounding from the integer). */
static double alu_i2f(uint64_t raw, tkc_dtype from, tkc_dtype to) {
  int sgn = alu_dt[from].kind == ALU_KSINT;
  int64_t s = alu_u2i(raw);
  switch (to) {
  case TKC_FLOAT32: return sgn ? (double)(float)s : (double)(float)raw;
  case TKC_BFLOAT16: return alu_round_bf16(sgn ? (double)(float)s : (double)(float)raw);
  case TKC_FLOAT16: case TKC_FLOAT8_E4M3FN: case TKC_FLOAT8_E5M2: /* > 2^53 is past their range anyway */
    return alu_round(sgn ? (double)s : (double)raw, to);
  default: return sgn ? (double)s : (double)raw;
  }
}

tkc_value tkc_value_cast(tkc_value v, tkc_dtype from, tkc_dtype to) {
  int kf = alu_kind(from), kt = alu_kind(to);
  tkc_value r;
  if (!kf || !kt) return v;
  if (kf == ALU_KFLOAT) {
    if (kt == ALU_KFLOAT) r.f = alu_round(v.f, to);
    else if (kt == ALU_KBOOL) r.i = v.f != 0;
    else r = alu_int_value(alu_f2i(v.f, to), to);
    return r;
  }
  uint64_t raw = alu_wrap(v.u, from);
  if (kt == ALU_KFLOAT) r.f = alu_i2f(raw, from, to);
  else r = alu_int_value(raw, to);
  return r;
}

tkc_value tkc_value_truncate(tkc_value v, tkc_dtype dt) {
  int k = alu_kind(dt);
  if (!k) return v;
  if (k == ALU_KFLOAT) {
    v.f = alu_round(v.f, dt);
    return v;
  }
  return alu_int_value(v.u, dt);
}

/* The low itemsize bytes of v as dt stores them. */
static uint64_t alu_bits_of(tkc_value v, tkc_dtype dt) {
  switch (dt) {
  case TKC_FLOAT8_E4M3FN: case TKC_FLOAT8_E5M2: return tkc_fp8_from_double(v.f, dt);
  case TKC_FLOAT16: return alu_f64_to_f16(v.f);
  case TKC_BFLOAT16: {
    float f = (float)alu_round_bf16(v.f);
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b >> 16;
  }
  case TKC_FLOAT32: {
    float f = (float)v.f;
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
  }
  case TKC_FLOAT64: {
    uint64_t b;
    memcpy(&b, &v.f, sizeof b);
    return b;
  }
  default: {
    int bits = alu_dt[dt].bits;
    uint64_t x = alu_wrap(v.u, dt);
    return bits >= 64 ? x : x & ((UINT64_C(1) << bits) - 1);
  }
  }
}

static tkc_value alu_from_bits(uint64_t b, tkc_dtype dt) {
  tkc_value v;
  switch (dt) {
  case TKC_FLOAT16: v.f = tkc_f16_to_f32((uint16_t)b); break;
  case TKC_BFLOAT16: v.f = tkc_bf16_to_f32((uint16_t)b); break;
  case TKC_FLOAT8_E4M3FN: case TKC_FLOAT8_E5M2: v.f = tkc_fp8_to_float((uint8_t)b, dt); break;
  case TKC_FLOAT32: {
    uint32_t b32 = (uint32_t)b;
    float f;
    memcpy(&f, &b32, sizeof f);
    v.f = f;
    break;
  }
  case TKC_FLOAT64: memcpy(&v.f, &b, sizeof v.f); break;
  default: v = alu_int_value(b, dt); break; /* bool: any nonzero byte is true */
  }
  return v;
}

/* Same itemsize required; otherwise (or for void / out-of-range dtypes) v is returned unchanged. */
tkc_value tkc_value_bitcast(tkc_value v, tkc_dtype from, tkc_dtype to) {
  if (!alu_kind(from) || !alu_kind(to) || alu_dt[from].bits != alu_dt[to].bits) return v;
  return alu_from_bits(alu_bits_of(v, from), to);
}

/* INT args are read as int64 (uint64 CONSTs hold their bit pattern), FLOAT args as float64, then cast
 * to dt. Other arg kinds, a NULL arg or a void dtype give 0. */
tkc_value tkc_value_from_arg(const tkc_arg *a, tkc_dtype dt) {
  tkc_value v;
  v.u = 0;
  if (!a || !alu_kind(dt)) return v;
  if (a->kind == TKC_ARG_INT) {
    v.i = a->v.i;
    return tkc_value_cast(v, TKC_INT64, dt);
  }
  if (a->kind == TKC_ARG_FLOAT) {
    v.f = a->v.f;
    return tkc_value_cast(v, TKC_FLOAT64, dt);
  }
  return v;
}

/* TKC_ARG_INT (truncated; uint64 as its bit pattern) for bool/ints, TKC_ARG_FLOAT (rounded) for
 * floats, TKC_ARG_NONE for a void / out-of-range dtype. */
tkc_arg tkc_value_to_arg(tkc_value v, tkc_dtype dt) {
  int k = alu_kind(dt);
  if (!k) return tkc_arg_none();
  if (k == ALU_KFLOAT) return tkc_arg_float(alu_round(v.f, dt));
  return tkc_arg_int(alu_u2i(alu_wrap(v.u, dt)));
}

/* ---------------------------------------------------------------- integer kernels
 * Operands are raw 64-bit patterns wrapped to the operand dtype; sgn: the dtype is signed. The result
 * is a raw pattern that the caller wraps to the result dtype (exact modulo 2^64). */

typedef uint64_t (*alu_ifn)(const uint64_t *s, int sgn);

static int alu_neg64(uint64_t x, int sgn) { return sgn && alu_u2i(x) < 0; }
static uint64_t alu_abs64(uint64_t x, int sgn) { return alu_neg64(x, sgn) ? UINT64_C(0) - x : x; }

static uint64_t alu_i_neg(const uint64_t *s, int sgn) { (void)sgn; return UINT64_C(0) - s[0]; }
static uint64_t alu_i_add(const uint64_t *s, int sgn) { (void)sgn; return s[0] + s[1]; }
static uint64_t alu_i_sub(const uint64_t *s, int sgn) { (void)sgn; return s[0] - s[1]; }
static uint64_t alu_i_mul(const uint64_t *s, int sgn) { (void)sgn; return s[0] * s[1]; }
static uint64_t alu_i_mulacc(const uint64_t *s, int sgn) { (void)sgn; return s[0] * s[1] + s[2]; }
static uint64_t alu_i_xor(const uint64_t *s, int sgn) { (void)sgn; return s[0] ^ s[1]; }
static uint64_t alu_i_or(const uint64_t *s, int sgn) { (void)sgn; return s[0] | s[1]; }
static uint64_t alu_i_and(const uint64_t *s, int sgn) { (void)sgn; return s[0] & s[1]; }
static uint64_t alu_i_cmpne(const uint64_t *s, int sgn) { (void)sgn; return s[0] != s[1]; }
/* the 4 bytes of s[0] (unsigned) times those of s[1] (signed), summed: |sum| < 2^17 */
static uint64_t alu_i_dot4(const uint64_t *s, int sgn) {
  (void)sgn;
  int64_t r = 0;
  for (int k = 0; k < 4; k++) r += (int64_t)(s[0] >> 8 * k & 255) * (int8_t)(uint8_t)(s[1] >> 8 * k & 255);
  return (uint64_t)r;
}

static uint64_t alu_i_cmplt(const uint64_t *s, int sgn) {
  return sgn ? alu_u2i(s[0]) < alu_u2i(s[1]) : s[0] < s[1];
}

static uint64_t alu_i_max(const uint64_t *s, int sgn) {
  int gt = sgn ? alu_u2i(s[1]) > alu_u2i(s[0]) : s[1] > s[0];
  return gt ? s[1] : s[0];
}

/* x / 0 = 0; truncates toward zero; INT_MIN / -1 = 2^(bits-1), which wraps to INT_MIN. */
static uint64_t alu_i_idiv(const uint64_t *s, int sgn) {
  if (s[1] == 0) return 0;
  uint64_t q = alu_abs64(s[0], sgn) / alu_abs64(s[1], sgn);
  return alu_neg64(s[0], sgn) != alu_neg64(s[1], sgn) ? UINT64_C(0) - q : q;
}

/* x % 0 = 0; the sign of the dividend. */
static uint64_t alu_i_mod(const uint64_t *s, int sgn) {
  if (s[1] == 0) return 0;
  uint64_t r = alu_abs64(s[0], sgn) % alu_abs64(s[1], sgn);
  return alu_neg64(s[0], sgn) ? UINT64_C(0) - r : r;
}

static uint64_t alu_i_shl(const uint64_t *s, int sgn) {
  if (alu_neg64(s[1], sgn) || s[1] >= 64) return 0;
  return s[0] << s[1];
}

static uint64_t alu_i_shr(const uint64_t *s, int sgn) {
  if (alu_neg64(s[1], sgn)) return 0;
  if (!sgn) return s[1] >= 64 ? 0 : s[0] >> s[1];
  uint64_t n = s[1] >= 64 ? 63 : s[1];
  return alu_neg64(s[0], sgn) ? ~(~s[0] >> n) : s[0] >> n; /* arithmetic */
}

static uint64_t alu_i_pow(const uint64_t *s, int sgn) {
  uint64_t b = s[0], e = s[1], r = 1;
  if (alu_neg64(e, sgn)) { /* truncated 1 / b^-e */
    if (b == 1) return 1;
    if (alu_u2i(b) == -1 && sgn) return (e & 1) ? UINT64_MAX : 1;
    return 0;
  }
  for (; e; e >>= 1, b *= b)
    if (e & 1) r *= b;
  return r;
}

/* ---------------------------------------------------------------- float kernels (in double) */

typedef double (*alu_ffn)(const double *s);

static double alu_f_exp2(const double *s) { return pow(2.0, s[0]); } /* Python 2 ** x; overflow -> inf */
static double alu_f_log2(const double *s) { return s[0] > 0 ? log2(s[0]) : s[0] == 0 ? -INFINITY : NAN; }
static double alu_f_sin(const double *s) { return isinf(s[0]) ? NAN : sin(s[0]); }
static double alu_f_sqrt(const double *s) { return s[0] >= 0 ? sqrt(s[0]) : NAN; }
static double alu_f_recip(const double *s) { return s[0] != 0 ? 1.0 / s[0] : copysign(INFINITY, s[0]); }
static double alu_f_neg(const double *s) { return -s[0]; }
static double alu_f_add(const double *s) { return s[0] + s[1]; }
static double alu_f_sub(const double *s) { return s[0] - s[1]; }
static double alu_f_mul(const double *s) { return s[0] * s[1]; }
static double alu_f_fdiv(const double *s) { return s[0] / s[1]; }
static double alu_f_max(const double *s) { return s[1] > s[0] ? s[1] : s[0]; }
static double alu_f_cmplt(const double *s) { return s[0] < s[1]; }
static double alu_f_cmpne(const double *s) { return s[0] != s[1]; }

static double alu_f_mulacc(const double *s) { return fma(s[0], s[1], s[2]); } /* below float64: tkc_alu_eval */

static double alu_f_pow(const double *s) { return pow(s[0], s[1]); }

/* Python's float floor division vx // wx for vx >= 0, wx > 0 (or NaN): CPython's float_floor_div with
 * the sign corrections that cannot apply to non-negative operands left out. */
static double alu_py_floordiv(double vx, double wx) {
  double mod = fmod(vx, wx), div = (vx - mod) / wx;
  if (div == 0) return 0.0;
  double fl = floor(div);
  if (div - fl > 0.5) fl += 1.0;
  return fl;
}

static double alu_f_idiv(const double *s) {
  if (s[1] == 0) return 0.0;
  double q = alu_py_floordiv(fabs(s[0]), fabs(s[1]));
  return s[0] * s[1] < 0 ? q * -1.0 : q;
}

static double alu_f_mod(const double *s) {
  if (!isfinite(s[0]) || !isfinite(s[1])) return NAN;
  double ty = fabs(trunc(s[1]));
  if (ty == 0) return 0.0;
  double r = fmod(fabs(trunc(s[0])), ty);
  return s[0] < 0 && r != 0 ? -r : r;
}

/* ---------------------------------------------------------------- the op table */

enum {
  ALU_CMP = 1,    /* operands are in_dt, the result is a bool converted to dt */
  ALU_WHERE = 2,  /* condition in_dt, values dt */
  ALU_NOBOOL = 4, /* no bool form */
};

typedef struct alu_row {
  uint8_t nsrc; /* 0: no value semantics */
  uint8_t flags;
  alu_ifn ifn;  /* bool and int operands; NULL: not defined on ints */
  alu_ffn ffn;  /* float operands (and bool, when ifn is NULL); NULL: not defined on floats */
} alu_row;

static const alu_row alu_table[TKC_NOPS] = {
  [TKC_OP_EXP2] = {1, 0, NULL, alu_f_exp2},
  [TKC_OP_LOG2] = {1, 0, NULL, alu_f_log2},
  [TKC_OP_SIN] = {1, 0, NULL, alu_f_sin},
  [TKC_OP_SQRT] = {1, 0, NULL, alu_f_sqrt},
  [TKC_OP_RECIP] = {1, 0, NULL, alu_f_recip},
  [TKC_OP_NEG] = {1, 0, alu_i_neg, alu_f_neg},
  [TKC_OP_ADD] = {2, 0, alu_i_add, alu_f_add},
  [TKC_OP_SUB] = {2, 0, alu_i_sub, alu_f_sub},
  [TKC_OP_MUL] = {2, 0, alu_i_mul, alu_f_mul},
  [TKC_OP_FDIV] = {2, ALU_NOBOOL, NULL, alu_f_fdiv},
  [TKC_OP_IDIV] = {2, 0, alu_i_idiv, alu_f_idiv},
  [TKC_OP_MOD] = {2, 0, alu_i_mod, alu_f_mod},
  [TKC_OP_MAX] = {2, 0, alu_i_max, alu_f_max},
  [TKC_OP_CMPLT] = {2, ALU_CMP, alu_i_cmplt, alu_f_cmplt},
  [TKC_OP_CMPNE] = {2, ALU_CMP, alu_i_cmpne, alu_f_cmpne},
  [TKC_OP_XOR] = {2, 0, alu_i_xor, NULL},
  [TKC_OP_OR] = {2, 0, alu_i_or, NULL},
  [TKC_OP_AND] = {2, 0, alu_i_and, NULL},
  [TKC_OP_DOT4] = {2, ALU_NOBOOL, alu_i_dot4, NULL},
  [TKC_OP_SHL] = {2, 0, alu_i_shl, NULL},
  [TKC_OP_SHR] = {2, 0, alu_i_shr, NULL},
  [TKC_OP_POW] = {2, 0, alu_i_pow, alu_f_pow},
  [TKC_OP_WHERE] = {3, ALU_WHERE, NULL, NULL},
  [TKC_OP_MULACC] = {3, 0, alu_i_mulacc, alu_f_mulacc},
};

static const char *alu_dtname(tkc_dtype dt) {
  static const char *const names[TKC_NDTYPES] = {"bool", "int8", "uint8", "int16", "uint16", "int32", "uint32",
                                                 "int64", "uint64", "float16", "bfloat16", "float32", "float64", "void",
                                                 "float8_e4m3fn", "float8_e5m2"};
  return (unsigned)dt < (unsigned)TKC_NDTYPES ? names[dt] : "?";
}

static tkc_value alu_bool_as(int b, tkc_dtype dt) {
  tkc_value v;
  v.i = b != 0;
  return tkc_value_cast(v, TKC_BOOL, dt);
}

tkc_status tkc_alu_eval(tkc_op op, tkc_dtype dt, tkc_dtype in_dt, const tkc_value *src, int nsrc, tkc_value *out) {
  if (!out || !src) return tkc_err(TKC_EINVAL, "tkc_alu_eval: NULL %s", out ? "src" : "out");
  if ((unsigned)op >= (unsigned)TKC_NOPS) return tkc_err(TKC_EINVAL, "tkc_alu_eval: op %d out of range", (int)op);
  const alu_row *row = &alu_table[op];
  if (!row->nsrc) return tkc_err(TKC_EUNSUPPORTED, "tkc_alu_eval: %s has no value semantics", alu_op_names[op]);
  if (nsrc != row->nsrc)
    return tkc_err(TKC_EINVAL, "tkc_alu_eval: %s takes %d sources, got %d", alu_op_names[op], row->nsrc, nsrc);
  if (alu_kind(dt) == 0) return tkc_err(TKC_EDTYPE, "tkc_alu_eval: %s on dtype %d", alu_op_names[op], (int)dt);
  tkc_dtype opdt = (row->flags & (ALU_CMP | ALU_WHERE)) ? in_dt : dt;
  int k = alu_kind(opdt);
  if (!k) return tkc_err(TKC_EDTYPE, "tkc_alu_eval: %s with operand dtype %d", alu_op_names[op], (int)opdt);

  if (row->flags & ALU_WHERE) {
    int cond = k == ALU_KFLOAT ? src[0].f != 0 : alu_wrap(src[0].u, opdt) != 0;
    *out = tkc_value_truncate(cond ? src[1] : src[2], dt);
    return TKC_OK;
  }

  int use_float = k == ALU_KFLOAT || (k == ALU_KBOOL && !row->ifn && !(row->flags & ALU_NOBOOL));
  if (use_float ? !row->ffn : !row->ifn)
    return tkc_err(TKC_EDTYPE, "tkc_alu_eval: %s is not defined on %s", alu_op_names[op], alu_dtname(opdt));

  if (use_float) {
    double x[3] = {0, 0, 0};
    for (int i = 0; i < nsrc; i++) x[i] = k == ALU_KFLOAT ? src[i].f : (double)alu_wrap(src[i].u, opdt);
    double y = row->ffn(x);
    if (op == TKC_OP_MULACC && k == ALU_KFLOAT) /* one fused multiply-add: in float below float64 */
      y = opdt == TKC_FLOAT64 ? fma(x[0], x[1], x[2]) : (double)fmaf((float)x[0], (float)x[1], (float)x[2]);
    if (row->flags & ALU_CMP) *out = alu_bool_as(y != 0, dt);
    else if (alu_kind(dt) == ALU_KFLOAT) out->f = alu_round(y, dt);
    else out->i = y != 0; /* a float op on bool: Python's bool(), NaN is true */
    return TKC_OK;
  }
  uint64_t x[3] = {0, 0, 0};
  for (int i = 0; i < nsrc; i++) x[i] = alu_wrap(src[i].u, opdt);
  uint64_t y = row->ifn(x, k == ALU_KSINT);
  *out = (row->flags & ALU_CMP) ? alu_bool_as(y != 0, dt) : alu_int_value(y, dt);
  return TKC_OK;
}
