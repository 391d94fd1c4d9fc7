/* src/render/cstyle_prelude.c — the helper code a C-style kernel starts with, only when it uses it:
 * C's half type and bfloat16 conversions (c.c), WGSL's helper functions (wgsl.c). Data only. */
#include "render/cstyle.h"

const char *const tkc_cs_c_half =
    "#if defined(__FLT16_MAX__)\n"
    "typedef _Float16 half;\n"
    "#else\n"
    "/* no _Float16 here (clang < 15 on x86 without AVX512-FP16): clang's storage-only __fp16, whose\n"
    "   conversions are library calls libgcc lacks or declares differently, so they are defined here */\n"
    "typedef __fp16 half;\n"
    "__attribute__((visibility(\"hidden\"))) unsigned short __truncdfhf2(double x) {\n"
    "  union { double d; unsigned long long u; } c = {.d = x};\n"
    "  unsigned short sign = (unsigned short)((c.u >> 48) & 0x8000u);\n"
    "  int e = (int)((c.u >> 52) & 0x7ff), he = e - 1023 + 15, sh;\n"
    "  unsigned long long m = c.u & 0xfffffffffffffull, r, rem, half_ulp;\n"
    "  if (e == 0x7ff) return (unsigned short)(sign | 0x7c00u | (m ? 0x200u | (unsigned)(m >> 42) : 0u));\n"
    "  if (e == 0) return sign;\n"
    "  m |= 1ull << 52;\n"
    "  sh = he >= 1 ? 42 : 42 + 1 - he;\n"
    "  if (sh > 63) return sign;\n"
    "  r = m >> sh, rem = m & ((1ull << sh) - 1), half_ulp = 1ull << (sh - 1);\n"
    "  if (rem > half_ulp || (rem == half_ulp && (r & 1))) r++;\n"
    "  if (he < 1) return (unsigned short)(sign | r);\n"
    "  if (r == 2048) r = 1024, he++;\n"
    "  if (he >= 31) return (unsigned short)(sign | 0x7c00u);\n"
    "  return (unsigned short)(sign | (he << 10) | (r - 1024));\n"
    "}\n"
    "__attribute__((visibility(\"hidden\"))) unsigned short __gnu_f2h_ieee(float f) { return __truncdfhf2(f); }\n"
    "__attribute__((visibility(\"hidden\"))) float __gnu_h2f_ieee(unsigned short h) {\n"
    "  union { unsigned int u; float f; } c;\n"
    "  unsigned int sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;\n"
    "  if (e == 0) return sign ? -((float)m * 0x1p-24f) : (float)m * 0x1p-24f;\n"
    "  c.u = sign | (e == 31 ? 0x7f800000u | (m << 13) : ((e + 112) << 23) | (m << 13));\n"
    "  return c.f;\n"
    "}\n"
    "#endif\n";

const char *const tkc_cs_c_bf16 =
    "/* bfloat16: stored as its bits, computed as float; rounding: to float, then to nearest even */\n"
    "static inline float tkc_bf16_float(unsigned short b) { union { unsigned int u; float f; } c = {.u = (unsigned int)b << 16}; return c.f; }\n"
    "static inline unsigned short tkc_bf16_bits(float f) { union { float f; unsigned int u; } c = {.f = f}; return (unsigned short)(c.u >> 16); }\n"
    "static inline float tkc_bf16_round(double x) {\n"
    "  union { float f; unsigned int u; } c = {.f = (float)x};\n"
    "  if ((c.u & 0x7fffffffu) > 0x7f800000u) c.u |= 0x400000u; /* NaN: quiet, its top payload kept */\n"
    "  else c.u += 0x7fffu + ((c.u >> 16) & 1u); /* a carry past the largest finite value gives inf */\n"
    "  c.u &= 0xffff0000u;\n"
    "  return c.f;\n"
    "}\n";

const char *const tkc_cs_wgsl_helpers[TKC_CS_WGSL_NHELPERS] = {
    /* H_NAN */ "fn tkc_nan() -> f32 { let bits = 0x7fc00000u; return bitcast<f32>(bits); }\n",
    /* H_INF */ "fn tkc_inf() -> f32 { let bits = 0x7f800000u; return bitcast<f32>(bits); }\n",
    /* H_ISNAN */ "fn tkc_isnan(a: f32) -> bool { return min(a, 1.0f) == 1.0f && max(a, -1.0f) == -1.0f; }\n",
    /* H_BF16: to nearest even on the bits (a carry past the largest finite value gives inf), NaN kept quiet */
    "fn tkc_bf16(x: f32) -> f32 {\n"
    "  let b = bitcast<u32>(x);\n"
    "  if ((b & 0x7fffffffu) > 0x7f800000u) { return bitcast<f32>((b | 0x400000u) & 0xffff0000u); }\n"
    "  return bitcast<f32>((b + 0x7fffu + ((b >> 16u) & 1u)) & 0xffff0000u);\n"
    "}\n",
    /* H_F2I: saturating float -> int, NaN -> 0 */
    "fn tkc_f2i(x: f32, lo: i32, hi: i32) -> i32 {\n"
    "  if (tkc_isnan(x)) { return 0i; }\n"
    "  if (x <= f32(lo)) { return lo; }\n"
    "  if (x >= f32(hi)) { return hi; }\n"
    "  return i32(x);\n"
    "}\n",
    /* H_F2U */
    "fn tkc_f2u(x: f32, hi: u32) -> u32 {\n"
    "  if (tkc_isnan(x) || x <= 0.0f) { return 0u; }\n"
    "  if (x >= f32(hi)) { return hi; }\n"
    "  return u32(x);\n"
    "}\n",
    /* H_POW: x ** y with C's special cases, in double-f32 arithmetic (vec2 hi + lo) built only from
     * f32 + - * (correctly rounded in WGSL; products split by bit masks, so contracting a * b + c into
     * an fma cannot break them; / and round/floor/ldexp only where their error is corrected or nil).
     * Whole |y| < 256: repeated squaring (relative error ~2^-36 before the final rounding: whole-number
     * results exact, others within 1 ulp). Otherwise exp2(y * log2|x|) with exp2 of a double-f32
     * argument to ~2^-26 and log2 designed to ~2^-34 (so: within 1 ulp; it is, compiled as C), but on
     * lavapipe its log2 only reaches ~2^-24 (measured up to 40 ulp for 0.999 ** 70000, 7 ulp for
     * 0.9 ** 100.5): something in Mesa still rewrites its error terms. Still far better than WGSL's
     * pow. Infinities and NaN are read from the bits (WGSL lets compilers assume there are none). */
    "fn tkc_split(a: f32) -> vec2<f32> { let h = bitcast<f32>(bitcast<u32>(a) & 0xfffff000u); return vec2<f32>(h, a - h); }\n"
    "fn tkc_prod2(a: f32, b: f32) -> vec2<f32> {\n" /* a * b exactly (Dekker) */
    "  let p = tkc_keep(a * b, a); let x = tkc_split(a); let y = tkc_split(b);\n"
    "  return vec2<f32>(p, ((x.x * y.x - p) + x.x * y.y + x.y * y.x) + x.y * y.y);\n"
    "}\n"
    /* tkc_keep(s, h): s, but opaque to the compiler (0 unless h has one NaN pattern), so that
     * algebraic rewrites of inexact float ops ((h + l) - h -> l, as Mesa's do) cannot cancel the
     * error terms below */
    "fn tkc_keep(s: f32, h: f32) -> f32 { return bitcast<f32>(bitcast<u32>(s) | u32(bitcast<u32>(h) == 0x7fc0deadu)); }\n"
    "fn tkc_fast2(h: f32, l: f32) -> vec2<f32> { let s = tkc_keep(h + l, h); return vec2<f32>(s, l - (s - h)); }\n"
    "fn tkc_inf_bits(a: f32) -> bool { return (bitcast<u32>(a) & 0x7fffffffu) >= 0x7f800000u; }\n"
    "fn tkc_ddmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {\n"
    "  let p = tkc_prod2(a.x, b.x);\n"
    "  if (tkc_inf_bits(p.x)) { return vec2<f32>(p.x, 0.0f); }\n"
    "  return tkc_fast2(p.x, p.y + (a.x * b.y + a.y * b.x));\n"
    "}\n"
    "fn tkc_ddadd(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {\n"
    "  let s = tkc_keep(a.x + b.x, a.y); let v = tkc_keep(s - a.x, b.y);\n"
    "  return tkc_fast2(s, ((a.x - (s - v)) + (b.x - v)) + a.y + b.y);\n"
    "}\n"
    "fn tkc_log2dd(x: f32) -> vec2<f32> {\n" /* x > 0, finite */
    "  var b = bitcast<u32>(x); var e = i32((b >> 23u) & 0xffu) - 127i;\n"
    "  if ((b & 0x7f800000u) == 0u) { b = bitcast<u32>(x * 8388608.0f); e = i32((b >> 23u) & 0xffu) - 150i; }\n"
    "  var m = bitcast<f32>((b & 0x007fffffu) | 0x3f800000u);\n"
    "  if (m > 1.41421356f) { m = m * 0.5f; e = e + 1i; }\n"
    "  let num = m - 1.0f; let d = tkc_keep(m + 1.0f, x); let dv = tkc_keep(d - m, x); let dl = (m - (d - dv)) + (1.0f - dv);\n"
    "  let sh = num / d; let p = tkc_prod2(sh, d);\n"
    "  let s = tkc_fast2(sh, (((num - p.x) - p.y) - sh * dl) / d);\n" /* (m-1)/(m+1) */
    "  let z = tkc_ddmul(s, s); let zf = z.x;\n"
    "  let r = zf * zf * (0.2f + zf * (0.142857143f + zf * (0.111111111f + zf * (0.0909090909f + zf * (0.0769230769f + zf * 0.0666666667f)))));\n"
    "  let u = tkc_ddadd(vec2<f32>(1.0f, 0.0f), tkc_ddadd(tkc_ddmul(z, vec2<f32>(0.333333343f, -9.93410776e-9f)), vec2<f32>(r, 0.0f)));\n"
    "  let l = tkc_ddmul(tkc_ddmul(s, u), vec2<f32>(2.88539004f, 3.85192607e-8f));\n" /* ln(m) / ln 2 = 2 atanh(s) / ln 2 */
    "  return tkc_ddadd(vec2<f32>(f32(e), 0.0f), l);\n"
    "}\n"
    "fn tkc_exp2dd(t: vec2<f32>) -> f32 {\n"
    "  if (t.x >= 128.0f) { return tkc_inf(); }\n"
    "  if (t.x < -151.0f) { return 0.0f; }\n"
    "  let n = round(t.x);\n"
    "  let g = tkc_ddmul(tkc_fast2(t.x - n, t.y), vec2<f32>(0.693147182f, -1.90465421e-9f));\n" /* (t - n) ln 2 */
    "  let gx = g.x;\n"
    "  let q = 0.5f + gx * (0.166666667f + gx * (0.0416666667f + gx * (0.00833333333f + gx * (0.00138888889f + gx * (1.98412698e-4f + gx * (2.48015873e-5f + gx * 2.75573192e-6f))))));\n"
    "  let one = tkc_fast2(1.0f, gx);\n"
    "  let v = one.x + (one.y + (g.y + gx * gx * q));\n"
    "  let k = i32(n); let k2 = k / 2i;\n"
    "  return ldexp(ldexp(v, k2), k - k2);\n"
    "}\n"
    "fn tkc_pow(x: f32, y: f32) -> f32 {\n"
    "  let bx = bitcast<u32>(x) & 0x7fffffffu; let by = bitcast<u32>(y) & 0x7fffffffu;\n"
    "  let pinf = tkc_inf();\n"
    "  if (by == 0u || bitcast<u32>(x) == 0x3f800000u) { return 1.0f; }\n"
    "  if (bx > 0x7f800000u || by > 0x7f800000u) { return tkc_nan(); }\n"
    "  let ax = abs(x); let ay = abs(y); let yneg = (bitcast<u32>(y) >> 31u) == 1u;\n"
    "  if (by == 0x7f800000u) {\n"
    "    if (ax == 1.0f) { return 1.0f; }\n"
    "    return select(0.0f, pinf, (ax > 1.0f) != yneg);\n"
    "  }\n"
    "  let yint = floor(ay) == ay;\n"
    "  let odd = yint && ay < 16777216.0f && (u32(ay) & 1u) == 1u;\n"
    "  let xneg = (bitcast<u32>(x) >> 31u) == 1u;\n"
    "  if (xneg && bx != 0u && bx != 0x7f800000u && !yint) { return tkc_nan(); }\n"
    "  var mag: f32;\n"
    "  if (bx == 0u) { mag = select(0.0f, pinf, yneg); }\n"
    "  else if (bx == 0x7f800000u) { mag = select(pinf, 0.0f, yneg); }\n"
    "  else if (yint && ay < 256.0f) {\n"
    "    var r = vec2<f32>(1.0f, 0.0f); var p = vec2<f32>(ax, 0.0f); var k = u32(ay);\n"
    "    loop {\n"
    "      if ((k & 1u) != 0u) { r = tkc_ddmul(r, p); }\n"
    "      k = k >> 1u;\n"
    "      if (k == 0u) { break; }\n"
    "      p = tkc_ddmul(p, p);\n"
    "    }\n"
    "    if (!yneg) { mag = r.x + r.y; }\n"
    "    else if (tkc_inf_bits(r.x)) { mag = 0.0f; }\n"
    "    else if (r.x == 0.0f) { mag = pinf; }\n"
    "    else {\n" /* 1 / r, the quotient corrected by its exact residual */
    "      let q = 1.0f / r.x; let e = tkc_prod2(q, r.x);\n"
    "      mag = q + q * (((1.0f - e.x) - e.y) - q * r.y);\n"
    "    }\n"
    "  } else {\n"
    "    mag = tkc_exp2dd(tkc_ddmul(vec2<f32>(y, 0.0f), tkc_log2dd(ax)));\n"
    "  }\n"
    "  return select(mag, -mag, xneg && odd);\n"
    "}\n",
};
