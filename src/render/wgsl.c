/* src/render/wgsl.c — the "WGSL" renderer (tinygrad's WGSLRenderer, renderer/wgsl.py): one WGSL
 * compute shader per kernel, run by the WEBGPU device (src/runtime/webgpu.c, wgpu-native).
 *
 * Output shape:
 *   enable f16;                                   only when float16 is used
 *   fn tkc_nan() -> f32 { ... }  ...              helpers, only the ones used
 *   struct Vars { v0: i32, v1: i32, }             only with DEFINE_VARs
 *   @group(0) @binding(0) var<storage, read_write> data0: array<f32>;
 *   ...                                           one binding per DEFINE_GLOBAL, binding = arg number
 *   @group(0) @binding(N) var<uniform> vars: Vars;  N = number of buffers; fields in the order the
 *                                                 launch passes variables (sorted by name)
 *   var<workgroup> temp0: array<f32, 256>;        one per DEFINE_LOCAL
 *   @compute @workgroup_size(X, Y, Z)             the lidx0/1/2 sizes (1 without them)
 *   fn NAME(@builtin(workgroup_id) gindex: vec3<u32>, @builtin(local_invocation_id) lindex: vec3<u32>) {
 *     ...                                         gidxN = i32(gindex.xyz[N]), lidxN = i32(lindex.xyz[N])
 *   }
 *
 * Value representation (so results match the INTERP device's tkc_alu_eval semantics):
 *  - WGSL has no 64-bit types: int64, uint64 and float64 (the renderer's unsupported_dtypes) give
 *    TKC_EUNSUPPORTED naming the op, the dtype and the backend, never wrong code.
 *  - bool, int8, uint8, int16, uint16 and bfloat16 buffers are packed: the buffer is an
 *    array<atomic<u32>> and the element is a byte / half word of a word, as in the seed. Buffers keep
 *    tkc's host layout (bool is 1 byte), so copyin/copyout are plain copies. The rewrites live in
 *    wgsl_rules.c (the extra_matcher): a load reads the word (atomicLoad) and shifts and masks the
 *    element out (the int8/int16 cast then sign-extends it); a store clears the element's bits with
 *    atomicAnd and sets them with atomicOr, so neighbouring elements written by other invocations
 *    survive. Workgroup memory (DEFINE_LOCAL) is never packed: it holds the register types.
 *  - registers: bool is bool, int8/int16/int32 are i32, uint8/uint16/uint32 are u32, float16 is f16
 *    (`enable f16;`, needs the adapter's shader-f16), float32 and bfloat16 are f32. Results of 8- and
 *    16-bit integer ops are wrapped back to their width (sign-extended / masked) like C's casts.
 *  - bfloat16 is emulated: its bits are the high half of an f32; every bfloat16 ALU result and cast
 *    goes through tkc_bf16(): round to nearest even as numpy/torch (NaN stays NaN, overflow gives inf).
 *  - integer IDIV/MOD by a divisor that may be 0 give 0 (INTERP) instead of WGSL's x/0 = x: the
 *    target rule GUARD_DIV_ZERO (the extra_matcher); INT_MIN / -1 wraps (WGSL defines it as INT_MIN). Shifts by a count that may be
 *    >= 32 or negative give INTERP's results (0, or the sign fill for SHR of signed values).
 *  - float -> int casts saturate and map NaN to 0 (tkc_f2i / tkc_f2u), as tkc_value_cast.
 *  - NaN: WGSL lets implementations assume no NaN/inf ("fast math"; lavapipe folds x != x to false
 *    and compares NaN as ordered), so: NaN and inf constants are bitcasts of a `let` (tkc_nan(),
 *    tkc_inf()) that compilers do not fold; CMPNE(x, x) on floats is tkc_isnan(x), the seed's
 *    min/max test; other float CMPNEs are !(a == b); LOG2(0) is spelled out as -inf (lavapipe turns
 *    exp2(y*log2(x)) into a pow that gives 0 for 0**-1). Other arithmetic that produces NaN/inf at
 *    run time is up to the implementation.
 *  - vectors (2 to 4 lanes) are WGSL vecN<T>; loads and stores are done lane by lane, vector ALU ops
 *    and casts lane by lane (but float32 arithmetic: the target rules scalarize the others). Wider vectors and vector access to packed buffers are TKC_EUNSUPPORTED
 *    (max_vector = 4 and scalar_access_dtypes keep the optimizer from making them).
 *  - gated loads read nothing when the gate is false (var + if), so no out-of-bounds access happens.
 * The render loop, naming and inlining are cstyle.c's; this file is WGSL's language table. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "base/common.h"
#include "codegen/target_rules.h"
#include "render/cstyle.h"
#include "render/renderers.h"
#include "render/wgsl_rules.h"

/* ---------------------------------------------------------------- dtypes */

/* the WGSL type of a value of this scalar dtype held in a register; NULL where WGSL has none */
static const char *const reg_name[TKC_NDTYPES] = {
    [TKC_BOOL] = "bool", [TKC_INT8] = "i32",  [TKC_UINT8] = "u32",    [TKC_INT16] = "i32",
    [TKC_UINT16] = "u32", [TKC_INT32] = "i32", [TKC_UINT32] = "u32",  [TKC_INT64] = NULL,
    [TKC_UINT64] = NULL,  [TKC_FLOAT16] = "f16", [TKC_BFLOAT16] = "f32", [TKC_FLOAT32] = "f32",
    [TKC_FLOAT64] = NULL, [TKC_VOID] = NULL,
};

#define WGSL_UNSUPPORTED ((1u << TKC_INT64) | (1u << TKC_UINT64) | (1u << TKC_FLOAT64))
static bool narrow_int(int s) { return tkc_dtype_is_int(s) && tkc_dtype_size(s) < 4; }

/* ---------------------------------------------------------------- render context */

enum { H_NAN = 1, H_INF = 2, H_ISNAN = 4, H_BF16 = 8, H_F2I = 16, H_F2U = 32, H_POW = 64 };

typedef struct rctx {
  tkc_cs cs;       /* first: the hooks get &cs (r[] of an INDEX: its index expression) */
  int32_t *base;   /* INDEX / pointer CAST: position of the buffer it addresses */
  int64_t local_size[3];
  unsigned helpers;
  bool need_f16;
  tkc_sbuf decl;   /* module-scope declarations (bindings, workgroup arrays) */
} rctx;

#define CTX(cs) ((rctx *)(cs))
#define fail_unsupported(c, u, why) tkc_cs_unsupported(&(c)->cs, (u), (why))
#define FAIL(c, u, why) (fail_unsupported((c), (u), (why)), TKC_CS_FAIL)
#define posof(c, u) tkc_cs_pos(&(c)->cs, (u))
#define R(c, user, s) tkc_cs_ref(&(c)->cs, (user), (s)) /* the rendered text of source s of user */
#define emit(c, depth, ...) tkc_cs_emit(&(c)->cs, (depth), __VA_ARGS__)
/* a malloc'ed formatted string; NULL (and the error recorded) on OOM */
#define xfmt(c, ...) tkc_render_fmt(&(c)->cs.failed, "WGSL", __VA_ARGS__)

/* the dtype has no WGSL type: names the dtype (and says why) */
static void *fail_dtype(rctx *c, const tkc_uop *u, int scalar) {
  char why[128];
  const char *dn = tkc_dtype_name((tkc_dtype)scalar);
  snprintf(why, sizeof why, "%s is not supported by the WGSL backend (WGSL has no 64-bit types)", dn ? dn : "?");
  return fail_unsupported(c, u, why);
}

/* the WGSL type of a value (scalar or 2-4 lane vector); NULL + error when there is none */
static const char *type_of(tkc_cs *cs, const tkc_uop *u, tkc_dt dt, char *buf, size_t n) {
  rctx *c = CTX(cs);
  if (dt.space || dt.scalar >= TKC_VOID) return fail_unsupported(c, u, "no value type");
  const char *e = reg_name[dt.scalar];
  if (!e) return fail_dtype(c, u, dt.scalar);
  if (dt.scalar == TKC_FLOAT16) c->need_f16 = true;
  if (dt.count == 1) snprintf(buf, n, "%s", e);
  else if (dt.count >= 2 && dt.count <= 4) snprintf(buf, n, "vec%d<%s>", dt.count, e);
  else return fail_unsupported(c, u, "WGSL vectors have 2 to 4 lanes");
  return buf;
}

/* ---------------------------------------------------------------- constants */

/* a scalar constant of dtype s holding the value of arg a */
static char *const_str(tkc_cs *cs, const tkc_uop *u, int s, const tkc_arg *a) {
  rctx *c = CTX(cs);
  tkc_value v = tkc_value_from_arg(a, (tkc_dtype)s);
  switch (s) {
  case TKC_BOOL: return xfmt(c, "%s", v.i ? "true" : "false");
  case TKC_INT8: case TKC_INT16: case TKC_INT32:
    if (v.i == INT32_MIN) return xfmt(c, "(-2147483647i - 1i)");
    return v.i < 0 ? xfmt(c, "(%lldi)", (long long)v.i) : xfmt(c, "%lldi", (long long)v.i);
  case TKC_UINT8: case TKC_UINT16: case TKC_UINT32: return xfmt(c, "%lluu", (unsigned long long)(uint32_t)v.u);
  case TKC_FLOAT16: case TKC_BFLOAT16: case TKC_FLOAT32: {
    const char *sfx = s == TKC_FLOAT16 ? "h" : "f";
    if (s == TKC_FLOAT16) c->need_f16 = true;
    double f = v.f;
    if (f != f || f == INFINITY || f == -INFINITY) {
      c->helpers |= f != f ? H_NAN : H_INF;
      const char *fn = f != f ? "tkc_nan()" : "tkc_inf()";
      if (s == TKC_FLOAT16) return xfmt(c, "%sf16(%s)", f == -INFINITY ? "-" : "", fn);
      return xfmt(c, "%s%s%s", f == -INFINITY ? "(-" : "", fn, f == -INFINITY ? ")" : "");
    }
    char t[64];
    tkc_cs_real((float)f, true, t, sizeof t);
    return t[0] == '-' ? xfmt(c, "(%s%s)", t, sfx) : xfmt(c, "%s%s", t, sfx);
  }
  default: return fail_dtype(c, u, s);
  }
}

/* "0i" / "0u" / "0.0f" ... : a zero of the register type of scalar s */
static const char *zero_of(int s) {
  if (s == TKC_BOOL) return "false";
  if (tkc_dtype_is_float(s)) return s == TKC_FLOAT16 ? "0.0h" : "0.0f";
  return tkc_dtype_is_unsigned(s) ? "0u" : "0i";
}

/* x (of register type) wrapped to the width of the 8/16-bit int type s (frees x) */
static char *wrap_narrow(rctx *c, int s, char *x) {
  if (!x || !narrow_int(s)) return x;
  char *w;
  switch (s) {
  case TKC_INT8: w = xfmt(c, "((%s << 24u) >> 24u)", x); break;
  case TKC_INT16: w = xfmt(c, "((%s << 16u) >> 16u)", x); break;
  case TKC_UINT8: w = xfmt(c, "(%s & 0xffu)", x); break;
  default: w = xfmt(c, "(%s & 0xffffu)", x); break;
  }
  tkc_free(x);
  return w;
}

/* ---------------------------------------------------------------- expressions */

/* true when the shift count b is always in [0, 32) */
static bool shift_safe(const tkc_uop *b) {
  if (!b || b->dtype.space || b->dtype.count > 1 || !tkc_dtype_is_int(b->dtype.scalar)) return false;
  if (b->op == TKC_OP_CONST && b->arg.kind == TKC_ARG_INT) return b->arg.v.i >= 0 && b->arg.v.i < 32;
  return b->dtype.scalar != TKC_UINT64 && b->vmin >= 0 && b->vmax < 32;
}

/* other arithmetic on bools (tinygrad's rules turn most into AND/OR): on i32, then != 0 */
static char *bool_arith(rctx *c, const tkc_uop *u, const char *const *a) {
  switch (u->op) {
  case TKC_OP_ADD: case TKC_OP_SUB: case TKC_OP_MUL: case TKC_OP_XOR: {
    int op = u->op;
    return xfmt(c, "((i32(%s) %s i32(%s)) != 0i)", a[0], op == TKC_OP_ADD ? "+" : op == TKC_OP_SUB ? "-" : op == TKC_OP_MUL ? "*" : "^", a[1]);
  }
  case TKC_OP_MAX: return xfmt(c, "(%s | %s)", a[0], a[1]);
  case TKC_OP_NEG: return xfmt(c, "%s", a[0]);
  default: return fail_unsupported(c, u, "op on bool");
  }
}

/* shifts by a count that may be >= 32 or negative with INTERP's results (0, or the sign fill for SHR
 * of signed values); cnt is the count as u32 */
static char *guarded_shift(rctx *c, const tkc_uop *u, const char *const *a, const char *cnt, const char *zero) {
  int op = u->op, s = u->dtype.scalar, bs = u->src[1]->dtype.scalar;
  if (op == TKC_OP_SHL || !tkc_render_is_signed(s)) /* count >= 32 (or negative): 0 */
    return xfmt(c, "select(%s %s (%s & 31u), %s, %s >= 32u)", a[0], op == TKC_OP_SHL ? "<<" : ">>", cnt, zero, cnt);
  if (bs != TKC_BOOL && !tkc_dtype_is_unsigned(bs)) /* arithmetic shift: count >= 32 gives the sign fill, a negative count 0 */
    return xfmt(c, "select(%s >> min(%s, 31u), 0i, %s < %s)", a[0], cnt, a[1], zero_of(bs));
  return xfmt(c, "(%s >> min(%s, 31u))", a[0], cnt);
}

/* One scalar ALU op of the WGSL type of u's dtype on operands a[]; CMPLT/CMPNE compare operands
 * of their source type */
static char *alu_scalar(tkc_cs *cs, const tkc_uop *u, const char *const *a) {
  rctx *c = CTX(cs);
  int op = u->op, s = u->dtype.scalar, in = op == TKC_OP_WHERE ? s : u->src[0]->dtype.scalar;
  if (!reg_name[in]) return fail_dtype(c, u, in);
  bool isf = tkc_dtype_is_float(s), bf = s == TKC_BFLOAT16;
  if (s == TKC_BOOL && op != TKC_OP_AND && op != TKC_OP_OR && op != TKC_OP_CMPNE && op != TKC_OP_CMPLT && op != TKC_OP_WHERE)
    return bool_arith(c, u, a);
  const char *zero = zero_of(s);
  char *e = NULL;
  switch (op) {
  case TKC_OP_MULACC: /* one fused multiply-add; f16 through f32, as INTERP */
    e = !isf ? xfmt(c, "((%s * %s) + %s)", a[0], a[1], a[2])
        : s == TKC_FLOAT16 ? xfmt(c, "f16(fma(f32(%s), f32(%s), f32(%s)))", a[0], a[1], a[2])
                          : xfmt(c, "fma(%s, %s, %s)", a[0], a[1], a[2]);
    break;
  case TKC_OP_FDIV:
    if (!isf) return fail_unsupported(c, u, "FDIV on an integer type");
    if (u->src[1]->op == TKC_OP_CONST && tkc_uop_const_f(u->src[1]) == 0) { /* WGSL leaves x / 0.0 indeterminate (lavapipe gives 0): x * +-inf is IEEE's x / +-0 */
      c->helpers |= H_INF;
      e = xfmt(c, "(%s * %s%s(tkc_inf()))", a[0], signbit(tkc_uop_const_f(u->src[1])) ? "-" : "", s == TKC_FLOAT16 ? "f16" : "");
    } else
      e = tkc_cs_op(cs, op, a);
    break;
  case TKC_OP_IDIV: case TKC_OP_MOD:
    if (isf) return fail_unsupported(c, u, "IDIV/MOD on a float type");
    /* x/0 = x%0 = 0 by the target rules (WGSL's x/0 is x); WGSL itself defines INT_MIN/-1 = INT_MIN, INT_MIN%-1 = 0 */
    e = tkc_divisor_guarded(u->src[1], false) ? tkc_cs_op(cs, op, a) : fail_unsupported(c, u, "a divisor that may be 0 (apply the target rules first)");
    break;
  case TKC_OP_CMPLT: /* (bools are compared as ints by wgsl_rules; kept here for kernels built without them) */
    return in == TKC_BOOL ? xfmt(c, "(i32(%s) < i32(%s))", a[0], a[1]) : tkc_cs_op(cs, op, a);
  case TKC_OP_CMPNE:
    if (tkc_dtype_is_float(in) && u->src[0] == u->src[1]) { /* x != x: the NaN test that survives fast math */
      c->helpers |= H_ISNAN;
      return in == TKC_FLOAT16 ? xfmt(c, "tkc_isnan(f32(%s))", a[0]) : xfmt(c, "tkc_isnan(%s)", a[0]);
    }
    return tkc_dtype_is_float(in) ? xfmt(c, "(!(%s == %s))", a[0], a[1]) : tkc_cs_op(cs, op, a);
  case TKC_OP_WHERE: return tkc_cs_op(cs, op, a);
  case TKC_OP_AND: case TKC_OP_OR: case TKC_OP_XOR:
    if (isf) return fail_unsupported(c, u, "bitwise op on a float type");
    return tkc_cs_op(cs, op, a);
  case TKC_OP_SHL: case TKC_OP_SHR: {
    if (isf) return fail_unsupported(c, u, "shift on a float type");
    int bs = u->src[1]->dtype.scalar;
    char *cnt = bs == TKC_UINT32 || bs == TKC_UINT16 || bs == TKC_UINT8 ? xfmt(c, "%s", a[1]) : xfmt(c, "u32(%s)", a[1]);
    if (!cnt) return NULL;
    const char *b[2] = {a[0], cnt};
    e = shift_safe(u->src[1]) ? tkc_cs_op(cs, op, b) : guarded_shift(c, u, a, cnt, zero);
    tkc_free(cnt);
    break;
  }
  case TKC_OP_NEG: e = tkc_dtype_is_unsigned(s) ? xfmt(c, "(0u - %s)", a[0]) : tkc_cs_op(cs, op, a); break;
  case TKC_OP_RECIP:
    if (!isf) return fail_unsupported(c, u, "RECIP needs a float type");
    e = xfmt(c, "(%s / %s)", s == TKC_FLOAT16 ? "1.0h" : "1.0f", a[0]);
    break;
  case TKC_OP_SQRT: case TKC_OP_EXP2: case TKC_OP_LOG2: case TKC_OP_SIN:
    if (!isf) return fail_unsupported(c, u, "transcendental op needs a float type");
    if (op == TKC_OP_LOG2) { /* log2(0) = -inf spelled out: fast-math compilers fold exp2(y*log2(x)) into a pow that loses it */
      c->helpers |= H_INF;
      e = xfmt(c, "select(log2(%s), -%s, %s == %s)", a[0], s == TKC_FLOAT16 ? "f16(tkc_inf())" : "tkc_inf()", a[0], zero);
    } else {
      e = xfmt(c, "%s(%s)", op == TKC_OP_SQRT ? "sqrt" : op == TKC_OP_EXP2 ? "exp2" : "sin", a[0]);
    }
    break;
  case TKC_OP_POW: /* tkc_pow (below), not WGSL's pow: that is exp2(y * log2(x)), 729.00018 for 3 ** 6 */
    if (!isf) return fail_unsupported(c, u, "POW needs a float type");
    c->helpers |= H_POW | H_INF | H_NAN;
    e = s == TKC_FLOAT16 ? xfmt(c, "f16(tkc_pow(f32(%s), f32(%s)))", a[0], a[1]) : xfmt(c, "tkc_pow(%s, %s)", a[0], a[1]);
    break;
  default:
    if (!cs->lang->code_for_op[op]) return fail_unsupported(c, u, NULL);
    e = tkc_cs_op(cs, op, a); /* ADD SUB MUL MAX */
  }
  if (!e) return NULL;
  if (bf && op != TKC_OP_NEG && op != TKC_OP_MAX) { /* round to bfloat16 */
    c->helpers |= H_BF16;
    char *w = xfmt(c, "tkc_bf16(%s)", e);
    tkc_free(e);
    return w;
  }
  if (narrow_int(s) && op != TKC_OP_MAX && op != TKC_OP_SHR) return wrap_narrow(c, s, e);
  return e;
}

/* bits of a 16-bit value x of scalar type f as a u32 in [0, 0xffff] */
static char *bits16(rctx *c, int f, const char *x) {
  if (f == TKC_BFLOAT16) return xfmt(c, "(bitcast<u32>(%s) >> 16u)", x);
  if (f == TKC_FLOAT16) return xfmt(c, "pack2x16float(vec2<f32>(f32(%s), 0.0f))", x); /* exact: x is a half */
  if (f == TKC_INT16) return xfmt(c, "(bitcast<u32>(%s) & 0xffffu)", x);
  return xfmt(c, "%s", x);
}

/* one scalar CAST (bitcast=false) or BITCAST of x from scalar type f to t */
static char *cast_scalar(tkc_cs *cs, const tkc_uop *u, int f, int t, const char *x, bool bitcast) {
  rctx *c = CTX(cs);
  if (!reg_name[f]) return fail_dtype(c, u, f);
  if (!reg_name[t]) return fail_dtype(c, u, t);
  if (f == TKC_FLOAT16 || t == TKC_FLOAT16) c->need_f16 = true;
  if (f == t) return xfmt(c, "%s", x);
  if (bitcast) {
    if (tkc_dtype_size((tkc_dtype)f) != tkc_dtype_size((tkc_dtype)t)) return fail_unsupported(c, u, "BITCAST between types of different sizes");
    if (t == TKC_BOOL) return xfmt(c, "(%s != %s)", x, zero_of(f));
    if (f == TKC_BOOL) return xfmt(c, "%s(%s)", reg_name[t], x);
    if (tkc_dtype_size((tkc_dtype)t) == 2) {
      char *b = bits16(c, f, x), *r;
      if (!b) return NULL;
      if (t == TKC_BFLOAT16) r = xfmt(c, "bitcast<f32>(%s << 16u)", b);
      else if (t == TKC_FLOAT16) r = xfmt(c, "f16(unpack2x16float(%s).x)", b);
      else if (t == TKC_INT16) r = wrap_narrow(c, t, xfmt(c, "bitcast<i32>(%s)", b));
      else r = xfmt(c, "%s", b);
      tkc_free(b);
      return r;
    }
    if (tkc_dtype_size((tkc_dtype)t) == 1) return wrap_narrow(c, t, xfmt(c, "bitcast<%s>(%s)", reg_name[t], x));
    return xfmt(c, "bitcast<%s>(%s)", reg_name[t], x);
  }
  if (t == TKC_BOOL) return tkc_dtype_is_float(f) ? xfmt(c, "(!(%s == %s))", x, zero_of(f)) : xfmt(c, "(%s != %s)", x, zero_of(f));
  if (f == TKC_BOOL) return t == TKC_BFLOAT16 ? xfmt(c, "f32(%s)", x) : xfmt(c, "%s(%s)", reg_name[t], x);
  if (tkc_dtype_is_float(t)) {
    if (t == TKC_BFLOAT16) {
      c->helpers |= H_BF16;
      return f == TKC_FLOAT32 ? xfmt(c, "tkc_bf16(%s)", x) : xfmt(c, "tkc_bf16(f32(%s))", x);
    }
    if (f == TKC_BFLOAT16 && t == TKC_FLOAT32) return xfmt(c, "%s", x);
    return xfmt(c, "%s(%s)", reg_name[t], x);
  }
  if (tkc_dtype_is_float(f)) { /* float -> int: saturating, NaN -> 0 */
    const char *fx = f == TKC_FLOAT16 ? "f32(" : "", *cl = f == TKC_FLOAT16 ? ")" : "";
    int64_t lo = tkc_dtype_min((tkc_dtype)t), hi = tkc_dtype_max((tkc_dtype)t);
    c->helpers |= H_ISNAN;
    if (tkc_dtype_is_unsigned(t)) {
      c->helpers |= H_F2U;
      return xfmt(c, "tkc_f2u(%s%s%s, %lluu)", fx, x, cl, (unsigned long long)hi);
    }
    c->helpers |= H_F2I;
    if (lo == INT32_MIN) return xfmt(c, "tkc_f2i(%s%s%s, (-2147483647i - 1i), %lldi)", fx, x, cl, (long long)hi);
    return xfmt(c, "tkc_f2i(%s%s%s, (%lldi), %lldi)", fx, x, cl, (long long)lo, (long long)hi);
  }
  /* int -> int: reinterpret between i32 and u32, then wrap to the target width */
  char *r = strcmp(reg_name[f], reg_name[t]) ? xfmt(c, "bitcast<%s>(%s)", reg_name[t], x) : xfmt(c, "%s", x);
  size_t fs = tkc_dtype_size((tkc_dtype)f), ts = tkc_dtype_size((tkc_dtype)t);
  if (narrow_int(t) && (ts < fs || tkc_dtype_is_unsigned(f) != tkc_dtype_is_unsigned(t))) return wrap_narrow(c, t, r);
  return r;
}

/* float32 vector arithmetic (tkc_wgsl_native_vector) as WGSL vector ops */
static char *native_vector_op(tkc_cs *cs, const tkc_uop *u) {
  const char *a[3] = {NULL, NULL, NULL};
  if (!tkc_wgsl_native_vector(u)) return tkc_cs_unsupported(cs, u, "vector op the target rules did not scalarize");
  for (int k = 0; k < u->nsrc; k++)
    if (!(a[k] = tkc_cs_ref(cs, u, u->src[k]))) return NULL;
  return u->op == TKC_OP_MULACC ? tkc_cs_fmt(cs, "fma(%s, %s, %s)", a[0], a[1], a[2]) : tkc_cs_op(cs, u->op, a);
}

/* ---------------------------------------------------------------- memory */

/* the buffer (DEFINE_GLOBAL/DEFINE_LOCAL) and index expression of a pointer p (INDEX or CAST(INDEX)) */
static bool addr_of(rctx *c, const tkc_uop *user, const tkc_uop *p, const tkc_uop **buf, const char **bname, const char **idx) {
  int pp = posof(c, p);
  if (pp < 0 || c->base[pp] < 0 || !c->cs.r[pp]) {
    fail_unsupported(c, user, "address is not an INDEX of a buffer");
    return false;
  }
  *buf = c->cs.uops[c->base[pp]];
  *bname = c->cs.r[c->base[pp]];
  *idx = c->cs.r[pp];
  return *bname != NULL;
}

static bool buf_packed(const tkc_uop *buf) { return buf->op == TKC_OP_DEFINE_GLOBAL && tkc_wgsl_packed(buf->dtype.scalar); }

/* the access expression of element k of the access at idx (k = 0: idx itself) */
static char *elem(rctx *c, const char *bname, const char *idx, int k) {
  return k ? xfmt(c, "%s[%s + %d]", bname, idx, k) : xfmt(c, "%s[%s]", bname, idx);
}
static char *load_lane(tkc_cs *cs, const tkc_uop *u, int k) {
  const tkc_uop *buf;
  const char *bname, *idx;
  return addr_of(CTX(cs), u, u->src[0], &buf, &bname, &idx) ? elem(CTX(cs), bname, idx, k) : NULL;
}

/* LOAD: the loaded value (ungated) */
static char *render_load_value(rctx *c, const tkc_uop *u) {
  const tkc_uop *buf;
  const char *bname, *idx;
  if (!addr_of(c, u, u->src[0], &buf, &bname, &idx)) return NULL;
  int cnt = u->dtype.count;
  if (buf_packed(buf)) {
    if (cnt != 1 || u->dtype.scalar != TKC_UINT32) return fail_unsupported(c, u, "load from a packed 8/16-bit buffer that is not a word load");
    return xfmt(c, "atomicLoad(&%s[%s])", bname, idx);
  }
  if (cnt == 1) return elem(c, bname, idx, 0);
  if (cnt > 4) return fail_unsupported(c, u, "WGSL vectors have 2 to 4 lanes");
  return tkc_cs_vec_of(&c->cs, u, u->dtype, cnt, load_lane);
}

/* ---------------------------------------------------------------- rules (what WGSL renders its own way) */

/* LOAD, lane by lane; gated: declared with var + if, so nothing is read when the gate is false */
static int rule_load(tkc_cs *cs, size_t i, int *depth) {
  rctx *c = CTX(cs);
  const tkc_uop *u = cs->uops[i];
  char tb[64];
  if (u->nsrc < 1 || !u->src[0]->dtype.space) return FAIL(c, u, "LOAD from a non-pointer");
  if (!type_of(cs, u, u->dtype, tb, sizeof tb)) return TKC_CS_FAIL;
  char *v = render_load_value(c, u);
  if (!v) return TKC_CS_FAIL;
  if (!tkc_wgsl_load_gated(u)) return tkc_cs_bind(cs, i, v, false, TKC_CS_VAL, *depth) ? TKC_CS_DONE : TKC_CS_FAIL;
  const char *alt = R(c, u, u->src[1]), *gate = R(c, u, u->src[2]);
  char *nm = alt && gate ? xfmt(c, "val%d", cs->cnt[TKC_CS_VAL]++) : NULL;
  if (nm) {
    emit(c, *depth, "var %s: %s = %s;", nm, tb, alt);
    emit(c, *depth, "if (%s) { %s = %s; }", gate, nm, v);
  }
  tkc_free(v);
  return (cs->r[i] = nm) ? TKC_CS_DONE : TKC_CS_FAIL;
}

/* STORE (gates are IF blocks around it); to a packed buffer (wgsl_rules' masked word update
 * (LOAD(p) & clear) | newv): atomicAnd(p, clear); atomicOr(p, newv) */
static int rule_store(tkc_cs *cs, size_t i, int *depth) {
  rctx *c = CTX(cs);
  const tkc_uop *u = cs->uops[i];
  if (u->nsrc < 2) return FAIL(c, u, "STORE needs an address and a value");
  const tkc_uop *buf, *v = u->src[1];
  const char *bname, *idx;
  if (!addr_of(c, u, u->src[0], &buf, &bname, &idx)) return TKC_CS_FAIL;
  if (buf_packed(buf)) {
    const tkc_uop *andu = NULL, *newv = NULL;
    if (v->op == TKC_OP_OR && v->nsrc == 2 && v->dtype.scalar == TKC_UINT32 && v->dtype.count == 1)
      for (int k = 0; k < 2 && !andu; k++)
        if (v->src[k]->op == TKC_OP_AND && v->src[k]->nsrc == 2) andu = v->src[k], newv = v->src[1 - k];
    const tkc_uop *clear = NULL;
    if (andu)
      for (int k = 0; k < 2 && !clear; k++)
        if (andu->src[k]->op == TKC_OP_LOAD && andu->src[k]->nsrc == 1 && andu->src[k]->src[0] == u->src[0]) clear = andu->src[1 - k];
    if (!clear) return FAIL(c, u, "store to a packed 8/16-bit buffer that is not a masked word update");
    const char *ce = R(c, u, clear), *ne = R(c, u, newv);
    if (!ce || !ne) return TKC_CS_FAIL;
    emit(c, *depth, "atomicAnd(&%s[%s], %s);", bname, idx, ce);
    emit(c, *depth, "atomicOr(&%s[%s], %s);", bname, idx, ne);
    return TKC_CS_DONE;
  }
  const char *ve = R(c, u, v);
  if (!ve) return TKC_CS_FAIL;
  if (v->dtype.count == 1) emit(c, *depth, "%s[%s] = %s;", bname, idx, ve);
  else for (int k = 0; k < v->dtype.count && !cs->failed; k++) {
    char *lk = tkc_cs_lane(cs, u, v, k), *ek = lk ? elem(c, bname, idx, k) : NULL;
    if (ek) emit(c, *depth, "%s = %s;", ek, lk);
    tkc_free(lk);
    tkc_free(ek);
  }
  return TKC_CS_DONE;
}

/* buffers are module-scope bindings: array<T>, or array<atomic<u32>> when packed */
static int rule_define_global(tkc_cs *cs, size_t i, int *depth) {
  rctx *c = CTX(cs);
  const tkc_uop *u = cs->uops[i];
  if (!u->dtype.space || u->dtype.count != 1 || u->dtype.pcount != 1 || u->arg.kind != TKC_ARG_INT || u->arg.v.i < 0 || u->arg.v.i > 65535)
    return FAIL(c, u, "DEFINE_GLOBAL needs a pointer to scalars and a buffer number arg");
  int s = u->dtype.scalar;
  if (!reg_name[s]) return fail_dtype(c, u, s), TKC_CS_FAIL;
  if (!tkc_cs_add_buf(cs, i)) return TKC_CS_FAIL;
  if (s == TKC_FLOAT16) c->need_f16 = true;
  tkc_sbuf_printf(&c->decl, "@group(0) @binding(%lld) var<storage, read_write> data%lld: array<%s>;\n", (long long)u->arg.v.i,
                  (long long)u->arg.v.i, tkc_wgsl_packed(s) ? "atomic<u32>" : reg_name[s]);
  return TKC_CS_DONE;
}

static int rule_define_local(tkc_cs *cs, size_t i, int *depth) {
  rctx *c = CTX(cs);
  const tkc_uop *u = cs->uops[i];
  if (!u->dtype.space || u->dtype.count != 1 || u->dtype.pcount != 1 || u->dtype.size <= 0)
    return FAIL(c, u, "DEFINE_LOCAL needs a pointer with a size");
  int s = u->dtype.scalar;
  if (!reg_name[s]) return fail_dtype(c, u, s), TKC_CS_FAIL;
  char *nm = xfmt(c, "temp%d", cs->cnt[TKC_CS_TEMP]++);
  if (!nm) return TKC_CS_FAIL;
  tkc_sbuf_printf(&c->decl, "var<workgroup> %s: array<%s, %d>;\n", nm, reg_name[s], (int)u->dtype.size);
  cs->r[i] = nm;
  return TKC_CS_DONE;
}

/* gidxN / lidxN: the workgroup / local invocation id (arg checked by note) */
static int rule_special(tkc_cs *cs, size_t i, int *depth) {
  const tkc_uop *u = cs->uops[i];
  const char *nm = u->arg.v.t[0].v.s;
  size_t l = strlen(nm);
  int axis = l && nm[l - 1] >= '0' && nm[l - 1] <= '2' ? nm[l - 1] - '0' : -1;
  bool g = !strncmp(nm, "gidx", 4) && l == 5, li = !strncmp(nm, "lidx", 4) && l == 5;
  if (axis < 0 || (!g && !li)) return FAIL(CTX(cs), u, "SPECIAL must be gidx0..2 or lidx0..2");
  return (cs->r[i] = tkc_cs_fmt(cs, "i32(%s.%c)", g ? "gindex" : "lindex", "xyz"[axis])) ? TKC_CS_DONE : TKC_CS_FAIL;
}

/* INDEX(buf, i): the index expression (the access is buf[i]) and the buffer's position in base[] */
static int rule_index(tkc_cs *cs, size_t i, int *depth) {
  rctx *c = CTX(cs);
  const tkc_uop *u = cs->uops[i];
  if (u->nsrc != 2) return FAIL(c, u, "INDEX must be (buf, idx): gates belong on LOAD/STORE");
  if (!u->dtype.space || u->dtype.pcount > 1) return FAIL(c, u, NULL);
  const tkc_uop *b = u->src[0];
  if (b->op != TKC_OP_DEFINE_GLOBAL && b->op != TKC_OP_DEFINE_LOCAL) return FAIL(c, u, "INDEX of something but a buffer");
  const char *x = R(c, u, u->src[1]);
  if (!x || !R(c, u, b)) return TKC_CS_FAIL;
  if (u->src[1]->dtype.count != 1 || !tkc_dtype_is_int(u->src[1]->dtype.scalar)) return FAIL(c, u, "INDEX needs a scalar int index");
  c->base[i] = posof(c, b);
  size_t xl = strlen(x); /* drop the outer parentheses of a sum: data0[alu0 + 1] */
  if (u->src[1]->op == TKC_OP_ADD && xl >= 2 && x[0] == '(' && x[xl - 1] == ')') cs->r[i] = xfmt(c, "%.*s", (int)(xl - 2), x + 1);
  else cs->r[i] = xfmt(c, "%s", x);
  return cs->r[i] ? TKC_CS_DONE : TKC_CS_FAIL;
}

/* CAST(INDEX) to a vector pointer: the same address */
static int rule_cast(tkc_cs *cs, size_t i, int *depth) {
  rctx *c = CTX(cs);
  const tkc_uop *u = cs->uops[i];
  if (u->nsrc != 1 || !u->dtype.space) return TKC_CS_BASE;
  int ps = posof(c, u->src[0]);
  if (!u->src[0]->dtype.space || ps < 0 || c->base[ps] < 0) return FAIL(c, u, "pointer CAST of something but an INDEX");
  c->base[i] = c->base[ps];
  return (cs->r[i] = xfmt(c, "%s", cs->r[ps])) ? TKC_CS_DONE : TKC_CS_FAIL;
}

/* RANGE, IF, GEP, VECTORIZE: what WGSL cannot express, refused before the base rendering */
static int rule_check(tkc_cs *cs, size_t i, int *depth) {
  const tkc_uop *u = cs->uops[i];
  int64_t k = u->arg.kind == TKC_ARG_INT ? u->arg.v.i : u->arg.kind == TKC_ARG_TUPLE && u->arg.n == 1 ? u->arg.v.t[0].v.i : -1;
  switch (u->op) {
  case TKC_OP_RANGE:
    if (u->nsrc == 2 && (u->dtype.count != 1 || !tkc_dtype_is_int(u->dtype.scalar))) return FAIL(CTX(cs), u, "RANGE must be a scalar int");
    break;
  case TKC_OP_IF:
    if (u->nsrc >= 1 && (u->src[0]->dtype.scalar != TKC_BOOL || u->src[0]->dtype.count != 1)) return FAIL(CTX(cs), u, "IF needs a scalar bool gate");
    break;
  case TKC_OP_GEP:
    if (u->nsrc != 1 || u->dtype.count != 1) return FAIL(CTX(cs), u, "GEP of one lane");
    if (k < 0 || k >= u->src[0]->dtype.count) return FAIL(CTX(cs), u, "GEP arg");
    break;
  default: /* VECTORIZE */
    if (u->dtype.count <= 1 || u->dtype.count > 4 || u->nsrc != u->dtype.count) return FAIL(CTX(cs), u, "WGSL vectors have 2 to 4 lanes");
  }
  return TKC_CS_BASE;
}

/* ---------------------------------------------------------------- names and the prepass */

/* DEFINE_VAR k is field vN of the uniform `vars`, N its place in the launch's (name) order */
static char *var_field(tkc_cs *cs, size_t k) {
  size_t j = 0;
  while (j < cs->nvars && cs->vars_sorted[j] != cs->vars[k]) j++;
  return tkc_cs_fmt(cs, "vars.v%zu", j);
}

/* values used twice by one expression; checks SPECIAL and notes the local size and f16 */
static unsigned note(tkc_cs *cs, const tkc_uop *u) {
  rctx *c = CTX(cs);
  unsigned f = 0;
  if (u->op == TKC_OP_MAX || u->op == TKC_OP_SHL || u->op == TKC_OP_SHR || u->op == TKC_OP_LOG2 ||
      (u->op == TKC_OP_CMPNE && u->nsrc == 2 && u->src[0] == u->src[1]))
    f = TKC_CS_DUP_ALL;
  if (u->op == TKC_OP_STORE || u->op == TKC_OP_GEP) f |= TKC_CS_DUP_VEC;
  if (u->op == TKC_OP_SPECIAL) {
    if (u->arg.kind != TKC_ARG_TUPLE || u->arg.n < 2 || u->arg.v.t[0].kind != TKC_ARG_STR || u->arg.v.t[1].kind != TKC_ARG_INT)
      return fail_unsupported(c, u, "SPECIAL needs a (name, size) arg"), TKC_CS_NOTE_FAIL;
    const char *nm = u->arg.v.t[0].v.s;
    if (!strncmp(nm, "lidx", 4) && nm[4] >= '0' && nm[4] <= '2' && !nm[5]) c->local_size[nm[4] - '0'] = u->arg.v.t[1].v.i;
  }
  if (u->dtype.scalar == TKC_FLOAT16) c->need_f16 = true;
  return f;
}

/* the parts of a packed store (old word load, AND, OR), used by it alone, are rendered by the STORE */
static bool mark_packed_stores(rctx *c) {
  tkc_cs *cs = &c->cs;
  if (!(cs->skip = tkc_calloc(cs->n + 1, 1))) return tkc_cs_oom(cs), false;
  for (size_t i = 0; i < cs->n; i++) {
    const tkc_uop *u = cs->uops[i];
    if (u->op != TKC_OP_STORE || u->nsrc < 2 || u->src[1]->op != TKC_OP_OR) continue;
    int po = posof(c, u->src[1]);
    if (po < 0 || cs->nchild[po] != 1) continue;
    for (int k = 0; k < 2; k++) {
      const tkc_uop *a = u->src[1]->src[k];
      int pa = posof(c, a);
      if (a->op != TKC_OP_AND || pa < 0 || cs->nchild[pa] != 1) continue;
      for (int j = 0; j < 2; j++) {
        const tkc_uop *l = a->src[j];
        int pl = posof(c, l);
        if (l->op == TKC_OP_LOAD && l->nsrc == 1 && l->src[0] == u->src[0] && pl >= 0 && cs->nchild[pl] == 1)
          cs->skip[po] = cs->skip[pa] = cs->skip[pl] = 1;
      }
    }
  }
  return true;
}

/* WGSL keywords, common reserved words and predeclared names, and the names this renderer declares */
static const char *const wgsl_keywords[] = {
    "_", "alias", "break", "case", "const", "const_assert", "continue", "continuing", "default", "diagnostic", "discard",
    "else", "enable", "false", "fn", "for", "if", "let", "loop", "override", "requires", "return", "struct", "switch",
    "true", "var", "while", "bool", "f16", "f32", "i32", "u32", "vec2", "vec3", "vec4", "array", "atomic", "ptr",
    "sampler", "texture_2d", "mat2x2", "mat3x3", "mat4x4", "vars", "Vars", "gindex", "lindex", "select", "bitcast",
    "min", "max", "clamp", "sqrt", "exp2", "log2", "sin", "pow", "fma", "workgroupBarrier", "atomicLoad", "atomicAnd",
    "atomicOr", "NULL", "Self", "abstract", "active", "as", "asm", "async", "auto", "await", "cast", "catch", "class",
    "do", "enum", "export", "extern", "final", "friend", "goto", "impl", "import", "inline", "match", "mod", "module",
    "move", "mut", "new", "null", "package", "private", "protected", "pub", "public", "ref", "self", "set", "shared",
    "static", "super", "target", "this", "throw", "trait", "try", "type", "typedef", "union", "unsafe", "use",
    "using", "where", "with", "yield", "wgsl", NULL};
static const char *const wgsl_reserved_prefixes[] = {"__", "tkc_", NULL};
static const char *const wgsl_numbered[] = {"data", "ridx", "alu", "val", "cast", "acc", "temp", NULL};

static const tkc_cs_lang wgsl_lang = {
    .who = "WGSL", .let = "let", .var = "var", .barrier = "workgroupBarrier();",
    .vec_pre = "", .vec_mid = "(", .vec_sep = ", ", .vec_post = ")",
    .max_vector = 4, .max_vector_why = "WGSL vectors have 2 to 4 lanes",
    .keywords = wgsl_keywords, .reserved_prefixes = wgsl_reserved_prefixes, .numbered = wgsl_numbered,
    .code_for_op = {
        [TKC_OP_ADD] = "($0 + $1)", [TKC_OP_SUB] = "($0 - $1)", [TKC_OP_MUL] = "($0 * $1)", [TKC_OP_FDIV] = "($0 / $1)",
        [TKC_OP_IDIV] = "($0 / $1)", [TKC_OP_MOD] = "($0 % $1)", [TKC_OP_MAX] = "select($0, $1, $0 < $1)",
        [TKC_OP_CMPLT] = "($0 < $1)", [TKC_OP_CMPNE] = "($0 != $1)", [TKC_OP_WHERE] = "select($2, $1, $0)",
        [TKC_OP_AND] = "($0 & $1)", [TKC_OP_OR] = "($0 | $1)", [TKC_OP_XOR] = "($0 ^ $1)", [TKC_OP_SHL] = "($0 << $1)",
        [TKC_OP_SHR] = "($0 >> $1)", [TKC_OP_NEG] = "(-$0)",
    },
    .rules = {[TKC_OP_DEFINE_GLOBAL] = rule_define_global, [TKC_OP_DEFINE_LOCAL] = rule_define_local, [TKC_OP_SPECIAL] = rule_special,
              [TKC_OP_INDEX] = rule_index, [TKC_OP_LOAD] = rule_load, [TKC_OP_STORE] = rule_store, [TKC_OP_CAST] = rule_cast,
              [TKC_OP_RANGE] = rule_check, [TKC_OP_IF] = rule_check, [TKC_OP_GEP] = rule_check, [TKC_OP_VECTORIZE] = rule_check},
    .type = type_of, .const_str = const_str, .alu = alu_scalar, .cast = cast_scalar, .native_vector = native_vector_op,
    .var_name = var_field, .note = note,
};

/* ---------------------------------------------------------------- the kernel */

static char *render_wgsl(const tkc_renderer *self, const char *name, tkc_uop *const *uops, size_t n) {
  (void)self;
  if (!name) name = "kernel";
  if (!tkc_cs_name_usable(&wgsl_lang, name)) return tkc_err_null(TKC_EINVAL, "WGSL renderer: kernel name \"%s\" is not a usable WGSL identifier", name);
  if (!uops) return tkc_err_null(TKC_EINVAL, "WGSL renderer: NULL uops");
  rctx c;
  memset(&c, 0, sizeof c);
  tkc_cs *cs = &c.cs;
  c.local_size[0] = c.local_size[1] = c.local_size[2] = 1;
  char *out = NULL;
  if (tkc_cs_init(cs, &wgsl_lang, uops, n) != TKC_OK) goto done;
  if (!(c.base = tkc_malloc((n + 1) * sizeof *c.base))) { tkc_cs_oom(cs); goto done; }
  for (size_t i = 0; i <= n; i++) c.base[i] = -1;
  if (!tkc_cs_prepass(cs) || !mark_packed_stores(&c) || !tkc_cs_loop(cs)) goto done;
  if (c.decl.oom) { tkc_cs_oom(cs); goto done; }
  for (int d = 0; d < 3; d++)
    if (c.local_size[d] < 1 || c.local_size[d] > 1024) {
      tkc_err(TKC_EUNSUPPORTED, "WGSL renderer: local size %lld on axis %d is out of range", (long long)c.local_size[d], d);
      cs->failed = true;
      goto done;
    }

  tkc_sbuf o = {0};
  if (c.need_f16) tkc_sbuf_puts(&o, "enable f16;\n");
  if (c.helpers & (H_F2I | H_F2U)) c.helpers |= H_ISNAN;
  for (size_t k = 0; k < TKC_CS_WGSL_NHELPERS; k++)
    if (c.helpers & (1u << k)) tkc_sbuf_puts(&o, tkc_cs_wgsl_helpers[k]);
  if (cs->nvars) {
    tkc_sbuf_puts(&o, "struct Vars {");
    for (size_t k = 0; k < cs->nvars; k++) tkc_sbuf_printf(&o, " v%zu: i32,", k);
    tkc_sbuf_puts(&o, " }\n");
  }
  if (c.decl.s) tkc_sbuf_puts(&o, c.decl.s);
  if (cs->nvars) { /* the binding after the buffers' */
    tkc_sbuf_printf(&o, "@group(0) @binding(%lld) var<uniform> vars: Vars; /*", cs->nbufs ? (long long)cs->bufs[cs->nbufs - 1].num + 1 : 0ll);
    for (size_t k = 0; k < cs->nvars; k++) tkc_sbuf_printf(&o, " v%zu = %s", k, cs->vars_sorted[k]->arg.v.t[0].v.s);
    tkc_sbuf_puts(&o, " */\n");
  }
  tkc_sbuf_printf(&o, "@compute @workgroup_size(%lld, %lld, %lld)\n", (long long)c.local_size[0], (long long)c.local_size[1],
                  (long long)c.local_size[2]);
  tkc_sbuf_printf(&o, "fn %s(@builtin(workgroup_id) gindex: vec3<u32>, @builtin(local_invocation_id) lindex: vec3<u32>) {\n", name);
  if (cs->body.s) tkc_sbuf_puts(&o, cs->body.s);
  tkc_sbuf_puts(&o, "}\n");
  out = tkc_sbuf_take(&o);
  if (!out) cs->failed = true;

done:
  tkc_free(c.base);
  tkc_free(c.decl.s);
  tkc_cs_free(cs);
  if (cs->failed) {
    tkc_free(out);
    return NULL;
  }
  return out;
}


/* Capabilities: WebGPU's guaranteed limits (every adapter has them; tinygrad's values), so a
 * kernel lowered for WGSL has a legal launch shape on any adapter: 65535 workgroups per dimension,
 * workgroups of at most 256 invocations (256, 256, 64 per axis), 16 KiB of workgroup memory. */
const tkc_renderer tkc_renderer_wgsl = {
    .name = "WGSL",
    .device = "WEBGPU",
    .has_local = true,
    .has_shared = true,
    .supports_float4 = true, /* vector values; the accesses themselves are lane by lane */
    .max_vector = 4,
    .scalar_access_dtypes = TKC_WGSL_PACKED,
    .global_max = {65535, 65535, 65535},
    .local_max = {256, 256, 64},
    .shared_max = 16384,
    .unsupported_dtypes = WGSL_UNSUPPORTED,
    .extra_matcher = tkc_wgsl_matcher,
    .render = render_wgsl,
};
