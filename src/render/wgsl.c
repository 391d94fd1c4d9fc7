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
 *    wgsl_rules (the extra_matcher): a load reads the word (atomicLoad) and shifts and masks the
 *    element out (the int8/int16 cast then sign-extends it); a store clears the element's bits with
 *    atomicAnd and sets them with atomicOr, so neighbouring elements written by other invocations
 *    survive. Workgroup memory (DEFINE_LOCAL) is never packed: it holds the register types.
 *  - registers: bool is bool, int8/int16/int32 are i32, uint8/uint16/uint32 are u32, float16 is f16
 *    (`enable f16;`, needs the adapter's shader-f16), float32 and bfloat16 are f32. Results of 8- and
 *    16-bit integer ops are wrapped back to their width (sign-extended / masked) like C's casts.
 *  - bfloat16 is emulated: its bits are the high half of an f32; every bfloat16 ALU result and cast
 *    goes through tkc_bf16(): round to nearest even as numpy/torch (NaN stays NaN, overflow gives inf).
 *  - integer IDIV/MOD by a divisor that range analysis cannot prove nonzero give 0 (INTERP) instead of
 *    WGSL's x/0 = x; INT_MIN / -1 wraps (WGSL defines it as INT_MIN). Shifts by a count that may be
 *    >= 32 or negative give INTERP's results (0, or the sign fill for SHR of signed values).
 *  - float -> int casts saturate and map NaN to 0 (tkc_f2i / tkc_f2u), as tkc_value_cast.
 *  - NaN: WGSL lets implementations assume no NaN/inf ("fast math"; lavapipe folds x != x to false
 *    and compares NaN as ordered), so: NaN and inf constants are bitcasts of a `let` (tkc_nan(),
 *    tkc_inf()) that compilers do not fold; CMPNE(x, x) on floats is tkc_isnan(x), the seed's
 *    min/max test; other float CMPNEs are !(a == b); LOG2(0) is spelled out as -inf (lavapipe turns
 *    exp2(y*log2(x)) into a pow that gives 0 for 0**-1). Other arithmetic that produces NaN/inf at
 *    run time is up to the implementation.
 *  - vectors (2 to 4 lanes) are WGSL vecN<T>; loads and stores are done lane by lane, vector ALU ops
 *    and casts lane by lane. Wider vectors and vector access to packed buffers are TKC_EUNSUPPORTED
 *    (max_vector = 4 and scalar_access_dtypes keep the optimizer from making them).
 *  - gated loads read nothing when the gate is false (var + if), so no out-of-bounds access happens.
 * Single-use ALU/CAST/BITCAST/VECTORIZE values are inlined into their user; loads, accumulators and
 * shared values get names (val0, alu0, cast0, acc0, ridx0). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/common.h"
#include "render/cstyle.h"
#include "render/renderers.h"
#include "uops/uop_internal.h"

/* ---------------------------------------------------------------- dtypes */

/* the WGSL type of a value of this scalar dtype held in a register; NULL where WGSL has none */
static const char *const reg_name[TKC_NDTYPES] = {
    [TKC_BOOL] = "bool", [TKC_INT8] = "i32",  [TKC_UINT8] = "u32",    [TKC_INT16] = "i32",
    [TKC_UINT16] = "u32", [TKC_INT32] = "i32", [TKC_UINT32] = "u32",  [TKC_INT64] = NULL,
    [TKC_UINT64] = NULL,  [TKC_FLOAT16] = "f16", [TKC_BFLOAT16] = "f32", [TKC_FLOAT32] = "f32",
    [TKC_FLOAT64] = NULL, [TKC_VOID] = NULL,
};

#define WGSL_UNSUPPORTED ((1u << TKC_INT64) | (1u << TKC_UINT64) | (1u << TKC_FLOAT64))

static bool sc_float(int s) { return s == TKC_FLOAT16 || s == TKC_BFLOAT16 || s == TKC_FLOAT32 || s == TKC_FLOAT64; }
static bool sc_int(int s) { return s >= TKC_INT8 && s <= TKC_UINT64; }
static bool sc_unsigned(int s) { return s == TKC_UINT8 || s == TKC_UINT16 || s == TKC_UINT32 || s == TKC_UINT64; }
static bool sc_narrow_int(int s) { return s >= TKC_INT8 && s <= TKC_UINT16; }
/* element types stored packed in u32 words in global buffers (the seed's is_packed, plus bfloat16) */
static bool sc_packed(int s) { return s == TKC_BOOL || s == TKC_INT8 || s == TKC_UINT8 || s == TKC_INT16 || s == TKC_UINT16 || s == TKC_BFLOAT16; }
static bool is_signed_reg(int s) { return s == TKC_INT8 || s == TKC_INT16 || s == TKC_INT32; }

/* ---------------------------------------------------------------- the extra matcher (wgsl_matcher) */

static tkc_dt u32_dt(void) { return tkc_dt_of(TKC_UINT32); }
static tkc_uop *u32c(tkc_graph *g, uint32_t v) { return tkc_uop_const_int(g, u32_dt(), v); }
static tkc_uop *alu2(tkc_graph *g, tkc_op op, tkc_dt dt, tkc_uop *a, tkc_uop *b) {
  if (!a || !b) return NULL;
  tkc_uop *s[2] = {a, b};
  return tkc_uop_new(g, op, dt, 2, s, tkc_arg_none());
}
static tkc_uop *cast_to(tkc_graph *g, tkc_uop *a, tkc_dtype d) { return a ? tkc_uop_cast(g, a, tkc_dt_of(d)) : NULL; }

/* LOAD(ptr, alt, gate[, ...]) reads only when gate; further sources (and LOAD(ptr, barrier)) are
 * void ordering dependencies */
static bool load_gated(const tkc_uop *l) {
  return l->nsrc >= 3 && l->src[1]->dtype.scalar != TKC_VOID && !l->src[1]->dtype.space && l->src[2]->dtype.scalar == TKC_BOOL;
}

/* true when an INDEX addresses a packed global buffer of scalar elements */
static bool packed_index(const tkc_uop *idx) {
  if (!idx || idx->op != TKC_OP_INDEX || idx->nsrc != 2) return false;
  tkc_dt p = idx->dtype;
  return p.space == TKC_SPACE_GLOBAL && p.count == 1 && p.pcount == 1 && sc_packed(p.scalar) && idx->src[1]->dtype.count == 1;
}

/* word index and bit shift of element idx in a packed buffer of itemsize-byte elements */
static void packed_addr(tkc_graph *g, const tkc_uop *bidx, int itemsize, tkc_uop **word, tkc_uop **shift) {
  tkc_uop *idx = bidx->src[1];
  int per = 4 / itemsize;
  tkc_uop *w = alu2(g, TKC_OP_IDIV, idx->dtype, idx, tkc_uop_const_int(g, idx->dtype, per));
  tkc_uop *s[2] = {bidx->src[0], w};
  *word = w ? tkc_uop_new(g, TKC_OP_INDEX, bidx->dtype, 2, s, bidx->arg) : NULL;
  *shift = alu2(g, TKC_OP_MUL, u32_dt(), alu2(g, TKC_OP_MOD, u32_dt(), cast_to(g, idx, TKC_UINT32), u32c(g, (uint32_t)per)),
                u32c(g, (uint32_t)(8 * itemsize)));
}

/* the u32 word value w holding an element at shift, as a value of dtype d */
static tkc_uop *unpack(tkc_graph *g, tkc_uop *w, tkc_uop *shift, tkc_dtype d) {
  uint32_t mask = tkc_dtype_size(d) == 1 ? 0xffu : 0xffffu;
  tkc_uop *v = alu2(g, TKC_OP_AND, u32_dt(), alu2(g, TKC_OP_SHR, u32_dt(), w, shift), u32c(g, mask));
  if (d == TKC_BFLOAT16) return v ? tkc_uop_bitcast(g, cast_to(g, v, TKC_UINT16), tkc_dt_of(TKC_BFLOAT16)) : NULL;
  return cast_to(g, v, d); /* bool: != 0; int8/int16: the cast sign-extends */
}

/* LOAD(INDEX(buf, i)) of a packed type -> unpack(LOAD<u32>(INDEX(buf, i/n)) >> shift & mask)
 * LOAD(INDEX(buf, i), alt, gate)        -> gate ? unpack(LOAD<u32>(INDEX(buf, i/n), 0, gate)) : alt
 * (void ordering sources are kept) */
static tkc_uop *r_packed_load(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *l = tkc_match_root(m), *bidx = tkc_match_get(m, "b");
  tkc_dtype d = (tkc_dtype)l->dtype.scalar;
  if (l->dtype.count != 1 || !packed_index(bidx) || !sc_packed(d) || bidx->dtype.scalar != d || l->nsrc > 16) return NULL;
  bool gated = load_gated(l);
  tkc_uop *word, *shift;
  packed_addr(g, bidx, (int)tkc_dtype_size(d), &word, &shift);
  if (!word || !shift) return NULL;
  tkc_uop *src[16];
  for (int k = 0; k < l->nsrc; k++) src[k] = l->src[k];
  src[0] = word;
  if (gated && !(src[1] = u32c(g, 0))) return NULL;
  tkc_uop *ld = tkc_uop_new(g, TKC_OP_LOAD, u32_dt(), l->nsrc, src, l->arg);
  tkc_uop *v = ld ? unpack(g, ld, shift, d) : NULL;
  if (!v || !gated) return v;
  tkc_uop *w[3] = {l->src[2], v, l->src[1]};
  return tkc_uop_new(g, TKC_OP_WHERE, l->dtype, 3, w, tkc_arg_none());
}

/* STORE(INDEX(buf, i), v[, IF]) of a packed type ->
 *   STORE(INDEX(buf, i/n), (LOAD<u32>(INDEX(buf, i/n)) & ~(mask << shift)) | ((bits(v) & mask) << shift)[, IF])
 * rendered as atomicAnd + atomicOr on the word */
static tkc_uop *r_packed_store(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *st = tkc_match_root(m), *bidx = tkc_match_get(m, "bidx"), *var = tkc_match_get(m, "var");
  tkc_dtype d = (tkc_dtype)var->dtype.scalar;
  if (var->dtype.count != 1 || !packed_index(bidx) || bidx->dtype.scalar != d || st->nsrc > 3) return NULL;
  uint32_t mask = tkc_dtype_size(d) == 1 ? 0xffu : 0xffffu;
  tkc_uop *word, *shift;
  packed_addr(g, bidx, (int)tkc_dtype_size(d), &word, &shift);
  if (!word || !shift) return NULL;
  tkc_uop *bits = d == TKC_BFLOAT16 ? cast_to(g, tkc_uop_bitcast(g, var, tkc_dt_of(TKC_UINT16)), TKC_UINT32) : cast_to(g, var, TKC_UINT32);
  tkc_uop *newv = alu2(g, TKC_OP_SHL, u32_dt(), alu2(g, TKC_OP_AND, u32_dt(), bits, u32c(g, mask)), shift);
  tkc_uop *clear = alu2(g, TKC_OP_XOR, u32_dt(), alu2(g, TKC_OP_SHL, u32_dt(), u32c(g, mask), shift), u32c(g, 0xffffffffu));
  tkc_uop *old = tkc_uop_new(g, TKC_OP_LOAD, u32_dt(), 1, &word, tkc_arg_none());
  tkc_uop *val = alu2(g, TKC_OP_OR, u32_dt(), alu2(g, TKC_OP_AND, u32_dt(), old, clear), newv);
  if (!val) return NULL;
  tkc_uop *src[3] = {word, val, st->nsrc == 3 ? st->src[2] : NULL};
  return tkc_uop_new(g, TKC_OP_STORE, st->dtype, st->nsrc, src, st->arg);
}

/* a < b and a ^ b on bools -> on int32, then back to bool (WGSL has neither on bool) */
static tkc_uop *r_bool_int_op(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *c = tkc_match_root(m), *a = tkc_match_get(m, "a"), *b = tkc_match_get(m, "b");
  if (b->dtype.scalar != TKC_BOOL || a->dtype.count != 1 || b->dtype.count != 1) return NULL;
  tkc_uop *r = alu2(g, (tkc_op)c->op, c->op == TKC_OP_CMPLT ? tkc_dt_of(TKC_BOOL) : tkc_dt_of(TKC_INT32), cast_to(g, a, TKC_INT32),
                    cast_to(g, b, TKC_INT32));
  return c->op == TKC_OP_CMPLT ? r : cast_to(g, r, TKC_BOOL);
}

/* a * (g ? nan : 1.0) -> g ? nan : a */
static tkc_uop *r_mul_nan_gate(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *a = tkc_match_get(m, "a"), *gt = tkc_match_get(m, "g"), *c1 = tkc_match_get(m, "c1"), *c2 = tkc_match_get(m, "c2");
  if (!tkc_dt_is_float(c1->dtype) || !isnan(tkc_uop_const_f(c1)) || tkc_uop_const_f(c2) != 1.0 || !tkc_dt_eq(c1->dtype, a->dtype)) return NULL;
  tkc_uop *s[3] = {gt, c1, a};
  return tkc_uop_new(g, TKC_OP_WHERE, a->dtype, 3, s, tkc_arg_none());
}

/* a << b on 32-bit ints with a count that is not u32 -> bitcast<a.dtype>(bitcast<u32>(a) << u32(b)) */
static tkc_uop *r_shl_u32(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *a = tkc_match_get(m, "a"), *b = tkc_match_get(m, "b");
  if (a->dtype.scalar != TKC_INT32 || a->dtype.count != 1 || b->dtype.scalar == TKC_UINT32 || !sc_int(b->dtype.scalar) || b->dtype.count != 1)
    return NULL;
  tkc_uop *r = alu2(g, TKC_OP_SHL, u32_dt(), tkc_uop_bitcast(g, a, u32_dt()), cast_to(g, b, TKC_UINT32));
  return r ? tkc_uop_bitcast(g, r, a->dtype) : NULL;
}

/* max(a, b) -> a < b ? b : a (cstyle's extra_pm) */
static tkc_uop *r_max(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *mx = tkc_match_root(m);
  if (mx->nsrc != 2 || mx->dtype.scalar == TKC_BOOL) return NULL;
  tkc_uop *lt = alu2(g, TKC_OP_CMPLT, tkc_dt_vec(tkc_dt_of(TKC_BOOL), mx->dtype.count), mx->src[0], mx->src[1]);
  tkc_uop *s[3] = {lt, mx->src[1], mx->src[0]};
  return lt ? tkc_uop_new(g, TKC_OP_WHERE, mx->dtype, 3, s, tkc_arg_none()) : NULL;
}

static const tkc_rule wgsl_rules[] = {
    {"c:(CMPLT a<bool> b)", r_bool_int_op},                         /* a<b (bool) -> int(a)<int(b) */
    {"c:(XOR a<bool> b)", r_bool_int_op},                           /* a^b (bool) -> bool(int(a)^int(b)) */
    {"l:(LOAD b:INDEX ...)", r_packed_load},                        /* packed load: word >> shift & mask */
    {"(STORE bidx:INDEX var ...)", r_packed_store},                 /* packed store: atomicAnd + atomicOr */
    {"(MUL a (WHERE g c1:CONST c2:CONST))", r_mul_nan_gate},        /* a*(g?nan:1) -> g?nan:a */
    {"(SHL a b)", r_shl_u32},                                       /* a<<b -> (u32(a)<<u32(b)) as a */
    {"MAX", r_max},                                                 /* max(a,b) -> a<b?b:a */
};

static const tkc_matcher *wgsl_matcher(void) {
  static tkc_matcher *_Atomic pm;
  return tkc_matcher_static(&pm, wgsl_rules, TKC_COUNTOF(wgsl_rules));
}

/* ---------------------------------------------------------------- render context */

enum { PFX_RIDX = TKC_CS_RIDX, PFX_ALU = TKC_CS_ALU, PFX_VAL = TKC_CS_VAL, PFX_CAST = TKC_CS_CAST, PFX_ACC = TKC_CS_ACC, PFX_TEMP = TKC_CS_TEMP };

enum { H_NAN = 1, H_INF = 2, H_ISNAN = 4, H_BF16 = 8, H_F2I = 16, H_F2U = 32, H_POW = 64 };

typedef struct rctx {
  tkc_cs cs;       /* the shared loop's state (r[] of an INDEX: its index expression) */
  int32_t *base;   /* INDEX / pointer CAST: position of the buffer it addresses */
  unsigned char *skip;
  const tkc_uop **vars; /* DEFINE_VARs sorted by name */
  size_t nvars;
  int64_t local_size[3];
  unsigned helpers;
  bool need_f16;
  tkc_sbuf decl;   /* module-scope declarations (bindings, workgroup arrays) */
} rctx;

#define fail_oom(c) tkc_cs_oom(&(c)->cs)
#define fail_unsupported(c, u, why) tkc_cs_unsupported(&(c)->cs, (u), (why))
#define posof(c, u) tkc_cs_pos(&(c)->cs, (u))
#define R(c, user, s) tkc_cs_ref(&(c)->cs, (user), (s)) /* the rendered text of source s of user */
#define emit(c, depth, ...) tkc_cs_emit(&(c)->cs, (depth), __VA_ARGS__)

/* the dtype has no WGSL type: names the dtype (and says why) */
static void *fail_dtype(rctx *c, const tkc_uop *u, int scalar) {
  if (!c->cs.failed) {
    char b[64];
    const char *on = tkc_op_name((tkc_op)u->op), *dn = tkc_dtype_name((tkc_dtype)scalar);
    tkc_err(TKC_EUNSUPPORTED, "WGSL renderer: cannot render %s of dtype %s: %s is not supported by the WGSL backend (WGSL has no 64-bit types)",
            on ? on : "?", tkc_dt_str(u->dtype, b, sizeof b), dn ? dn : "?");
  }
  c->cs.failed = true;
  return NULL;
}

/* a malloc'ed formatted string; NULL (and the error recorded) on OOM */
#define xfmt(c, ...) tkc_render_fmt(&(c)->cs.failed, "WGSL", __VA_ARGS__)

/* the WGSL type of a value (scalar or 2-4 lane vector); NULL + error when there is none */
static const char *type_of(rctx *c, const tkc_uop *u, tkc_dt dt, char *buf, size_t n) {
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

/* the shortest decimal that reads back as the same float, with '.' whatever the locale */
static void fmt_f32(float v, char *out, size_t n) {
  for (int p = 1; p <= 17; p++) {
    snprintf(out, n, "%.*g", p, (double)v);
    for (char *q = out; *q; q++)
      if (*q == ',') *q = '.';
    if (strtof(out, NULL) == v) break;
  }
  if (!strpbrk(out, ".eE")) {
    size_t l = strlen(out);
    if (l + 3 <= n) memcpy(out + l, ".0", 3);
  }
}

/* a scalar constant of dtype s holding the value of arg a */
static char *const_str(rctx *c, const tkc_uop *u, int s, const tkc_arg *a) {
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
      return xfmt(c, "%s%s%s%s", f == -INFINITY ? "(-" : "", fn, f == -INFINITY ? ")" : "", "");
    }
    char t[64];
    fmt_f32((float)f, t, sizeof t);
    return t[0] == '-' ? xfmt(c, "(%s%s)", t, sfx) : xfmt(c, "%s%s", t, sfx);
  }
  default: return fail_dtype(c, u, s);
  }
}

/* "0i" / "0u" / "0.0f" ... : a zero of the register type of scalar s */
static const char *zero_of(int s) {
  if (s == TKC_BOOL) return "false";
  if (sc_float(s)) return s == TKC_FLOAT16 ? "0.0h" : "0.0f";
  return sc_unsigned(s) ? "0u" : "0i";
}

/* x (of register type) wrapped to the width of the 8/16-bit int type s (frees x) */
static char *wrap_narrow(rctx *c, int s, char *x) {
  if (!x || !sc_narrow_int(s)) return x;
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

static bool op_is_alu(int op) { return (tkc_op_flags((tkc_op)op) & TKC_F_ALU) != 0; }

/* true when the integer divisor d is never 0 */
static bool divisor_safe(const tkc_uop *d) {
  if (!d || d->dtype.space || d->dtype.count > 1) return false;
  if (d->op == TKC_OP_CONST && d->arg.kind == TKC_ARG_INT) return d->arg.v.i != 0;
  if (d->dtype.scalar == TKC_UINT64) return false;
  return d->vmin > 0 || d->vmax < 0;
}

/* true when the shift count b is always in [0, 32) */
static bool shift_safe(const tkc_uop *b) {
  if (!b || b->dtype.space || b->dtype.count > 1 || !sc_int(b->dtype.scalar)) return false;
  if (b->op == TKC_OP_CONST && b->arg.kind == TKC_ARG_INT) return b->arg.v.i >= 0 && b->arg.v.i < 32;
  return b->dtype.scalar != TKC_UINT64 && b->vmin >= 0 && b->vmax < 32;
}

/* One scalar ALU op: dtype s for the result, operand scalar type in (CMPLT/CMPNE compare operands
 * of type in), operands a[], the UOp u (for its sources' range analysis when scalar). */
static char *alu_scalar(rctx *c, const tkc_uop *u, int s, int in, const char *const *a, bool scalar) {
  int op = u->op;
  bool isf = sc_float(s), bf = s == TKC_BFLOAT16, isb = s == TKC_BOOL;
  char *e = NULL;
  if (isb && op != TKC_OP_AND && op != TKC_OP_OR && op != TKC_OP_CMPNE && op != TKC_OP_CMPLT && op != TKC_OP_WHERE) {
    /* other arithmetic on bools (tinygrad's rules turn most into AND/OR): on i32, then != 0 */
    switch (op) {
    case TKC_OP_ADD: case TKC_OP_SUB: case TKC_OP_MUL: case TKC_OP_XOR: case TKC_OP_MAX: {
      const char *o = op == TKC_OP_ADD ? "+" : op == TKC_OP_SUB ? "-" : op == TKC_OP_MUL ? "*" : op == TKC_OP_XOR ? "^" : NULL;
      if (o) return xfmt(c, "((i32(%s) %s i32(%s)) != 0i)", a[0], o, a[1]);
      return xfmt(c, "(%s | %s)", a[0], a[1]);
    }
    case TKC_OP_NEG: return xfmt(c, "%s", a[0]);
    default: return fail_unsupported(c, u, "op on bool");
    }
  }
  const char *zero = zero_of(s);
  switch (op) {
  case TKC_OP_ADD: e = xfmt(c, "(%s + %s)", a[0], a[1]); break;
  case TKC_OP_SUB: e = xfmt(c, "(%s - %s)", a[0], a[1]); break;
  case TKC_OP_MUL: e = xfmt(c, "(%s * %s)", a[0], a[1]); break;
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
      e = xfmt(c, "(%s / %s)", a[0], a[1]);
    break;
  case TKC_OP_IDIV: case TKC_OP_MOD: {
    if (isf) return fail_unsupported(c, u, "IDIV/MOD on a float type");
    const char *o = op == TKC_OP_IDIV ? "/" : "%";
    /* WGSL: x / 0 = x, x % 0 = 0, INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0; INTERP: x / 0 = 0 */
    if (scalar && divisor_safe(u->src[1])) e = xfmt(c, "(%s %s %s)", a[0], o, a[1]);
    else e = xfmt(c, "select(%s %s %s, %s, %s == %s)", a[0], o, a[1], zero, a[1], zero);
    break;
  }
  case TKC_OP_MAX: e = xfmt(c, "select(%s, %s, %s < %s)", a[0], a[1], a[0], a[1]); break;
  case TKC_OP_CMPLT: /* (bools are compared as ints by wgsl_rules; kept here for kernels built without them) */
    return in == TKC_BOOL ? xfmt(c, "(i32(%s) < i32(%s))", a[0], a[1]) : xfmt(c, "(%s < %s)", a[0], a[1]);
  case TKC_OP_CMPNE:
    if (sc_float(in)) {
      if (u->src[0] == u->src[1]) { /* x != x: the NaN test that survives fast math */
        c->helpers |= H_ISNAN;
        return in == TKC_FLOAT16 ? xfmt(c, "tkc_isnan(f32(%s))", a[0]) : xfmt(c, "tkc_isnan(%s)", a[0]);
      }
      return xfmt(c, "(!(%s == %s))", a[0], a[1]);
    }
    return xfmt(c, "(%s != %s)", a[0], a[1]);
  case TKC_OP_WHERE: return xfmt(c, "select(%s, %s, %s)", a[2], a[1], a[0]);
  case TKC_OP_AND: case TKC_OP_OR: case TKC_OP_XOR:
    if (isf) return fail_unsupported(c, u, "bitwise op on a float type");
    return xfmt(c, "(%s %s %s)", a[0], op == TKC_OP_AND ? "&" : op == TKC_OP_OR ? "|" : "^", a[1]);
  case TKC_OP_SHL: case TKC_OP_SHR: {
    if (isf) return fail_unsupported(c, u, "shift on a float type");
    const tkc_uop *b = scalar ? u->src[1] : NULL;
    bool bsigned = u->src[1]->dtype.scalar != TKC_BOOL && !sc_unsigned(u->src[1]->dtype.scalar);
    char *cnt = u->src[1]->dtype.scalar == TKC_UINT32 || u->src[1]->dtype.scalar == TKC_UINT16 || u->src[1]->dtype.scalar == TKC_UINT8
                    ? xfmt(c, "%s", a[1]) : xfmt(c, "u32(%s)", a[1]);
    if (!cnt) return NULL;
    if (b && shift_safe(b)) e = xfmt(c, "(%s %s %s)", a[0], op == TKC_OP_SHL ? "<<" : ">>", cnt);
    else if (op == TKC_OP_SHL || !is_signed_reg(s)) /* count >= 32 (or negative): 0 */
      e = xfmt(c, "select(%s %s (%s & 31u), %s, %s >= 32u)", a[0], op == TKC_OP_SHL ? "<<" : ">>", cnt, zero, cnt);
    else if (bsigned) /* arithmetic shift: count >= 32 gives the sign fill, a negative count 0 */
      e = xfmt(c, "select(%s >> min(%s, 31u), 0i, %s < %s)", a[0], cnt, a[1], zero_of(u->src[1]->dtype.scalar));
    else e = xfmt(c, "(%s >> min(%s, 31u))", a[0], cnt);
    tkc_free(cnt);
    break;
  }
  case TKC_OP_NEG:
    if (sc_unsigned(s)) e = xfmt(c, "(0u - %s)", a[0]);
    else e = xfmt(c, "(-%s)", a[0]);
    break;
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
  default: return fail_unsupported(c, u, NULL);
  }
  if (!e) return NULL;
  if (bf && op != TKC_OP_NEG && op != TKC_OP_MAX) { /* round to bfloat16 */
    c->helpers |= H_BF16;
    char *w = xfmt(c, "tkc_bf16(%s)", e);
    tkc_free(e);
    return w;
  }
  if (sc_narrow_int(s) && op != TKC_OP_MAX && op != TKC_OP_SHR) return wrap_narrow(c, s, e);
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
static char *cast_scalar(rctx *c, const tkc_uop *u, int f, int t, const char *x, bool bitcast) {
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
  if (t == TKC_BOOL) return sc_float(f) ? xfmt(c, "(!(%s == %s))", x, zero_of(f)) : xfmt(c, "(%s != %s)", x, zero_of(f));
  if (f == TKC_BOOL) return t == TKC_BFLOAT16 ? xfmt(c, "f32(%s)", x) : xfmt(c, "%s(%s)", reg_name[t], x);
  if (sc_float(t)) {
    if (t == TKC_BFLOAT16) {
      c->helpers |= H_BF16;
      return f == TKC_FLOAT32 ? xfmt(c, "tkc_bf16(%s)", x) : xfmt(c, "tkc_bf16(f32(%s))", x);
    }
    if (f == TKC_BFLOAT16 && t == TKC_FLOAT32) return xfmt(c, "%s", x);
    return xfmt(c, "%s(%s)", reg_name[t], x);
  }
  if (sc_float(f)) { /* float -> int: saturating, NaN -> 0 */
    const char *fx = f == TKC_FLOAT16 ? "f32(" : "", *cl = f == TKC_FLOAT16 ? ")" : "";
    int64_t lo = tkc_dtype_min((tkc_dtype)t), hi = tkc_dtype_max((tkc_dtype)t);
    c->helpers |= H_ISNAN;
    if (sc_unsigned(t)) {
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
  if (sc_narrow_int(t) && (ts < fs || sc_unsigned(f) != sc_unsigned(t))) return wrap_narrow(c, t, r);
  return r;
}

/* lane i of source s of a vector op (a scalar source is the same for every lane) */
static char *lane(rctx *c, const tkc_uop *user, const tkc_uop *s, int i) {
  const char *x = R(c, user, s);
  if (!x) return NULL;
  if (s->dtype.count <= 1 || s->dtype.space) return xfmt(c, "%s", x);
  return xfmt(c, "%s[%d]", x, i);
}

/* "vecN<T>(l0, l1, ...)" from n lane expressions (frees them) */
static char *vec_literal(rctx *c, const tkc_uop *u, tkc_dt dt, char **l, int n) {
  char tb[48];
  tkc_sbuf b = {0};
  const char *t = type_of(c, u, dt, tb, sizeof tb);
  if (t) {
    tkc_sbuf_printf(&b, "%s(", t);
    for (int i = 0; i < n; i++) tkc_sbuf_printf(&b, "%s%s", i ? ", " : "", l[i]);
    tkc_sbuf_puts(&b, ")");
  }
  for (int i = 0; i < n; i++) tkc_free(l[i]);
  if (!t) { tkc_free(b.s); return NULL; }
  if (b.oom) { tkc_free(b.s); return fail_oom(c); }
  char *s = tkc_sbuf_take(&b);
  return s ? s : fail_oom(c);
}

/* float32 vector arithmetic as WGSL vector ops (the same result as lane by lane); NULL when u is
 * not such an op (it is then rendered lane by lane) */
static char *native_vector_op(rctx *c, const tkc_uop *u) {
  int s = u->dtype.scalar, op = u->op;
  if (u->dtype.count < 2 || u->dtype.count > 4 || s != TKC_FLOAT32) return NULL;
  if (op != TKC_OP_ADD && op != TKC_OP_SUB && op != TKC_OP_MUL && op != TKC_OP_FDIV && op != TKC_OP_NEG && op != TKC_OP_MULACC) return NULL;
  const char *a[3] = {NULL, NULL, NULL};
  for (int k = 0; k < u->nsrc && k < 3; k++)
    if (!tkc_dt_eq(u->src[k]->dtype, u->dtype) || !(a[k] = R(c, u, u->src[k]))) return NULL;
  switch (op) {
  case TKC_OP_ADD: return xfmt(c, "(%s + %s)", a[0], a[1]);
  case TKC_OP_SUB: return xfmt(c, "(%s - %s)", a[0], a[1]);
  case TKC_OP_MUL: return xfmt(c, "(%s * %s)", a[0], a[1]);
  case TKC_OP_FDIV: return xfmt(c, "(%s / %s)", a[0], a[1]);
  case TKC_OP_NEG: return xfmt(c, "(-%s)", a[0]);
  default: return u->nsrc == 3 ? xfmt(c, "fma(%s, %s, %s)", a[0], a[1], a[2]) : NULL;
  }
}

/* a value-producing ALU/CAST/BITCAST u, lane by lane when it is a vector */
static char *render_value_op(rctx *c, const tkc_uop *u) {
  int cnt = u->dtype.count, lanes = cnt > 1 ? cnt : 1;
  if (cnt > 4) return fail_unsupported(c, u, "WGSL vectors have 2 to 4 lanes");
  char *v = native_vector_op(c, u);
  if (v || c->cs.failed) return v;
  if (u->nsrc < 1 || u->nsrc > 3) return fail_unsupported(c, u, "wrong number of sources");
  char *l[4] = {NULL, NULL, NULL, NULL};
  bool ok = true;
  for (int i = 0; i < lanes && ok; i++) {
    char *a[3] = {NULL, NULL, NULL};
    for (int k = 0; k < u->nsrc; k++)
      if (!(a[k] = lane(c, u, u->src[k], i))) ok = false;
    if (ok) {
      if (u->op == TKC_OP_CAST || u->op == TKC_OP_BITCAST) {
        if (u->nsrc != 1) ok = false, fail_unsupported(c, u, "expects one source");
        else if (u->src[0]->dtype.count != u->dtype.count) ok = false, fail_unsupported(c, u, "changing the vector width");
        else l[i] = cast_scalar(c, u, u->src[0]->dtype.scalar, u->dtype.scalar, a[0], u->op == TKC_OP_BITCAST);
      } else {
        unsigned fl = tkc_op_flags((tkc_op)u->op);
        int need = (fl & TKC_F_T) || u->op == TKC_OP_MULACC ? 3 : (fl & TKC_F_B) ? 2 : 1;
        int in = u->op == TKC_OP_WHERE ? u->dtype.scalar : u->src[0]->dtype.scalar;
        if (u->nsrc != need) ok = false, fail_unsupported(c, u, "wrong number of sources");
        else if (!reg_name[in]) ok = false, fail_dtype(c, u, in);
        else l[i] = alu_scalar(c, u, u->dtype.scalar, in, (const char *const *)a, cnt <= 1);
      }
      if (!l[i]) ok = false;
    }
    for (int k = 0; k < 3; k++) tkc_free(a[k]);
  }
  if (ok) return cnt > 1 ? vec_literal(c, u, u->dtype, l, lanes) : l[0];
  for (int i = 0; i < lanes; i++) tkc_free(l[i]);
  return NULL;
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

static bool buf_packed(const tkc_uop *buf) { return buf->op == TKC_OP_DEFINE_GLOBAL && sc_packed(buf->dtype.scalar); }

/* the access expression of element k of the access at idx (k = 0: idx itself) */
static char *elem(rctx *c, const char *bname, const char *idx, int k) {
  return k ? xfmt(c, "%s[%s + %d]", bname, idx, k) : xfmt(c, "%s[%s]", bname, idx);
}

/* LOAD: the loaded value (ungated), or NULL; sets *stmt when it must be declared with var + if */
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
  char *l[4] = {NULL, NULL, NULL, NULL};
  for (int i = 0; i < cnt; i++)
    if (!(l[i] = elem(c, bname, idx, i))) {
      for (int k = 0; k < i; k++) tkc_free(l[k]);
      return NULL;
    }
  return vec_literal(c, u, u->dtype, l, cnt);
}

/* STORE (gates are IF blocks around it) */
static void render_store(rctx *c, const tkc_uop *u, int depth) {
  if (u->nsrc < 2) { fail_unsupported(c, u, "STORE needs an address and a value"); return; }
  const tkc_uop *buf, *v = u->src[1];
  const char *bname, *idx;
  if (!addr_of(c, u, u->src[0], &buf, &bname, &idx)) return;
  if (buf_packed(buf)) {
    /* (LOAD(p) & clear) | newv -> atomicAnd(p, clear); atomicOr(p, newv) */
    const tkc_uop *andu = NULL, *newv = NULL;
    if (v->op == TKC_OP_OR && v->nsrc == 2 && v->dtype.scalar == TKC_UINT32 && v->dtype.count == 1)
      for (int k = 0; k < 2 && !andu; k++)
        if (v->src[k]->op == TKC_OP_AND && v->src[k]->nsrc == 2) andu = v->src[k], newv = v->src[1 - k];
    const tkc_uop *clear = NULL;
    if (andu)
      for (int k = 0; k < 2 && !clear; k++)
        if (andu->src[k]->op == TKC_OP_LOAD && andu->src[k]->nsrc == 1 && andu->src[k]->src[0] == u->src[0]) clear = andu->src[1 - k];
    if (!clear) { fail_unsupported(c, u, "store to a packed 8/16-bit buffer that is not a masked word update"); return; }
    const char *ce = R(c, u, clear), *ne = R(c, u, newv);
    if (!ce || !ne) return;
    emit(c, depth, "atomicAnd(&%s[%s], %s);", bname, idx, ce);
    emit(c, depth, "atomicOr(&%s[%s], %s);", bname, idx, ne);
    return;
  }
  const char *ve = R(c, u, v);
  if (!ve) return;
  int cnt = v->dtype.count;
  if (cnt == 1) {
    emit(c, depth, "%s[%s] = %s;", bname, idx, ve);
    return;
  }
  for (int i = 0; i < cnt; i++) {
    char *li = lane(c, u, v, i), *ei = li ? elem(c, bname, idx, i) : NULL;
    if (ei) emit(c, depth, "%s = %s;", ei, li);
    tkc_free(li);
    tkc_free(ei);
    if (c->cs.failed) return;
  }
}

/* ---------------------------------------------------------------- names */

static bool is_ident(const char *s) {
  if (!tkc_render_is_ident(s)) return false;
  return !(s[0] == '_' && (s[1] == '_' || !s[1])); /* WGSL: no "_" and no leading "__" */
}

/* WGSL keywords, common reserved words and predeclared names, and the names this renderer declares */
static bool name_reserved(const char *s) {
  static const char *const kw[] = {
      "alias", "break", "case", "const", "const_assert", "continue", "continuing", "default", "diagnostic", "discard",
      "else", "enable", "false", "fn", "for", "if", "let", "loop", "override", "requires", "return", "struct", "switch",
      "true", "var", "while", "bool", "f16", "f32", "i32", "u32", "vec2", "vec3", "vec4", "array", "atomic", "ptr",
      "sampler", "texture_2d", "mat2x2", "mat3x3", "mat4x4", "vars", "Vars", "gindex", "lindex", "select", "bitcast",
      "min", "max", "clamp", "sqrt", "exp2", "log2", "sin", "pow", "fma", "workgroupBarrier", "atomicLoad", "atomicAnd",
      "atomicOr", "NULL", "Self", "abstract", "active", "as", "asm", "async", "auto", "await", "cast", "catch", "class",
      "do", "enum", "export", "extern", "final", "friend", "goto", "impl", "import", "inline", "match", "mod", "module",
      "move", "mut", "new", "null", "package", "private", "protected", "pub", "public", "ref", "self", "set", "shared",
      "static", "super", "target", "this", "throw", "trait", "try", "type", "typedef", "union", "unsafe", "use",
      "using", "where", "with", "yield", "wgsl"};
  for (size_t i = 0; i < TKC_COUNTOF(kw); i++)
    if (!strcmp(s, kw[i])) return true;
  if (!strncmp(s, "tkc_", 4)) return true;
  static const char *const pf[] = {"data", "ridx", "alu", "val", "cast", "acc", "temp"};
  for (size_t i = 0; i < TKC_COUNTOF(pf); i++) {
    size_t l = strlen(pf[i]);
    if (!strncmp(s, pf[i], l) && s[l] && strspn(s + l, "0123456789") == strlen(s + l)) return true;
  }
  return false;
}

static int cmp_var(const void *a, const void *b) {
  const tkc_uop *x = *(const tkc_uop *const *)a, *y = *(const tkc_uop *const *)b;
  return strcmp(x->arg.v.t[0].v.s, y->arg.v.t[0].v.s);
}

/* ---------------------------------------------------------------- the kernel */

/* marks values used twice by one expression, notes the packed-store parts (uses are counted before it) */
static bool prepass(rctx *c) {
  for (size_t i = 0; i < c->cs.n; i++) {
    const tkc_uop *u = c->cs.uops[i];
    if (c->cs.pos[u->id] != (int32_t)i) continue; /* listed twice */
    bool dup_all = u->op == TKC_OP_MAX || u->op == TKC_OP_IDIV || u->op == TKC_OP_MOD || u->op == TKC_OP_SHL || u->op == TKC_OP_SHR || u->op == TKC_OP_LOG2 ||
                   (u->op == TKC_OP_CMPNE && u->nsrc == 2 && u->src[0] == u->src[1]);
    bool dup_vec = !u->dtype.space && u->dtype.count > 1 && (op_is_alu(u->op) || u->op == TKC_OP_CAST || u->op == TKC_OP_BITCAST);
    if (u->op == TKC_OP_STORE || u->op == TKC_OP_GEP) dup_vec = true;
    for (int k = 0; k < u->nsrc; k++) {
      int p = posof(c, u->src[k]);
      if (p < 0) continue;
      if (dup_all || (dup_vec && u->src[k]->dtype.count > 1 && !u->src[k]->dtype.space)) c->cs.must_name[p] = 1;
    }
    if (u->op == TKC_OP_DEFINE_VAR) {
      if (u->arg.kind != TKC_ARG_TUPLE || u->arg.n < 1 || u->arg.v.t[0].kind != TKC_ARG_STR) {
        fail_unsupported(c, u, "DEFINE_VAR needs a (name, min, max) arg");
        return false;
      }
      c->vars[c->nvars++] = u;
    }
    if (u->op == TKC_OP_SPECIAL) {
      if (u->arg.kind != TKC_ARG_TUPLE || u->arg.n < 2 || u->arg.v.t[0].kind != TKC_ARG_STR || u->arg.v.t[1].kind != TKC_ARG_INT) {
        fail_unsupported(c, u, "SPECIAL needs a (name, size) arg");
        return false;
      }
      const char *nm = u->arg.v.t[0].v.s;
      if (!strncmp(nm, "lidx", 4) && nm[4] >= '0' && nm[4] <= '2' && !nm[5]) c->local_size[nm[4] - '0'] = u->arg.v.t[1].v.i;
    }
    if (u->dtype.scalar == TKC_FLOAT16) c->need_f16 = true;
  }
  /* the parts of a packed store (old word load, AND, OR) are rendered by the STORE itself */
  for (size_t i = 0; i < c->cs.n; i++) {
    const tkc_uop *u = c->cs.uops[i];
    if (u->op != TKC_OP_STORE || u->nsrc < 2 || u->src[1]->op != TKC_OP_OR) continue;
    int po = posof(c, u->src[1]);
    if (po < 0 || c->cs.nchild[po] != 1) continue;
    for (int k = 0; k < 2; k++) {
      const tkc_uop *a = u->src[1]->src[k];
      int pa = posof(c, a);
      if (a->op != TKC_OP_AND || pa < 0 || c->cs.nchild[pa] != 1) continue;
      for (int j = 0; j < 2; j++) {
        const tkc_uop *l = a->src[j];
        int pl = posof(c, l);
        if (l->op == TKC_OP_LOAD && l->nsrc == 1 && l->src[0] == u->src[0] && pl >= 0 && c->cs.nchild[pl] == 1) {
          c->skip[po] = c->skip[pa] = c->skip[pl] = 1;
        }
      }
    }
  }
  qsort(c->vars, c->nvars, sizeof *c->vars, cmp_var);
  return true;
}

/* renders uops[i]; false on failure */
static bool render_one(rctx *c, size_t i, int *depth) {
  const tkc_uop *u = c->cs.uops[i];
  char tb[64];
  char *e = NULL;
  int pfx = PFX_ALU;
  bool inl = false;
  if (c->skip[i]) return true;
  switch ((tkc_op)u->op) {
  case TKC_OP_NAME: case TKC_OP_SINK: return true;
  case TKC_OP_NOOP: {
    if (u->nsrc < 1) return true;
    const char *x = R(c, u, u->src[0]);
    return x && (c->cs.r[i] = xfmt(c, "%s", x)) != NULL;
  }
  case TKC_OP_DEFINE_GLOBAL: {
    if (!u->dtype.space || u->dtype.count != 1 || u->dtype.pcount != 1 || u->arg.kind != TKC_ARG_INT || u->arg.v.i < 0 || u->arg.v.i > 65535)
      return fail_unsupported(c, u, "DEFINE_GLOBAL needs a pointer to scalars and a buffer number arg"), false;
    int s = u->dtype.scalar;
    if (!reg_name[s]) return fail_dtype(c, u, s), false;
    for (size_t k = 0; k < i; k++)
      if (c->cs.uops[k]->op == TKC_OP_DEFINE_GLOBAL && c->cs.uops[k] != u && c->cs.uops[k]->arg.v.i == u->arg.v.i)
        return tkc_err(TKC_EINVAL, "WGSL renderer: two DEFINE_GLOBALs with arg %lld", (long long)u->arg.v.i), c->cs.failed = true, false;
    if (s == TKC_FLOAT16) c->need_f16 = true;
    tkc_sbuf_printf(&c->decl, "@group(0) @binding(%lld) var<storage, read_write> data%lld: array<%s>;\n", (long long)u->arg.v.i,
                    (long long)u->arg.v.i, sc_packed(s) ? "atomic<u32>" : reg_name[s]);
    return (c->cs.r[i] = xfmt(c, "data%lld", (long long)u->arg.v.i)) != NULL;
  }
  case TKC_OP_DEFINE_LOCAL: {
    if (!u->dtype.space || u->dtype.count != 1 || u->dtype.pcount != 1 || u->dtype.size <= 0)
      return fail_unsupported(c, u, "DEFINE_LOCAL needs a pointer with a size"), false;
    int s = u->dtype.scalar;
    if (!reg_name[s]) return fail_dtype(c, u, s), false;
    char *nm = xfmt(c, "temp%d", c->cs.cnt[PFX_TEMP]++);
    if (!nm) return false;
    tkc_sbuf_printf(&c->decl, "var<workgroup> %s: array<%s, %d>;\n", nm, reg_name[s], (int)u->dtype.size);
    c->cs.r[i] = nm;
    return true;
  }
  case TKC_OP_DEFINE_VAR: {
    if (u->dtype.scalar != TKC_INT32 || u->dtype.count != 1 || u->dtype.space) return fail_unsupported(c, u, "DEFINE_VAR must be int32"), false;
    size_t k = 0;
    while (k < c->nvars && c->vars[k] != u) k++;
    return (c->cs.r[i] = xfmt(c, "vars.v%zu", k)) != NULL;
  }
  case TKC_OP_SPECIAL: {
    const char *nm = u->arg.v.t[0].v.s;
    int axis = nm[0] && nm[strlen(nm) - 1] >= '0' && nm[strlen(nm) - 1] <= '2' ? nm[strlen(nm) - 1] - '0' : -1;
    bool g = !strncmp(nm, "gidx", 4) && strlen(nm) == 5, l = !strncmp(nm, "lidx", 4) && strlen(nm) == 5;
    if (axis < 0 || (!g && !l)) return fail_unsupported(c, u, "SPECIAL must be gidx0..2 or lidx0..2"), false;
    return (c->cs.r[i] = xfmt(c, "i32(%s.%c)", g ? "gindex" : "lindex", "xyz"[axis])) != NULL;
  }
  case TKC_OP_CONST: case TKC_OP_VCONST: {
    if (u->dtype.space || u->dtype.scalar >= TKC_VOID) return fail_unsupported(c, u, NULL), false;
    int cnt = u->dtype.count;
    if (u->op == TKC_OP_VCONST && (u->arg.kind != TKC_ARG_TUPLE || (int)u->arg.n != cnt)) return fail_unsupported(c, u, "VCONST arg"), false;
    if (cnt <= 1 && u->op == TKC_OP_CONST) return (c->cs.r[i] = const_str(c, u, u->dtype.scalar, &u->arg)) != NULL;
    if (cnt > 4) return fail_unsupported(c, u, "WGSL vectors have 2 to 4 lanes"), false;
    char *l[4] = {NULL, NULL, NULL, NULL};
    bool ok = true;
    for (int k = 0; k < cnt && ok; k++)
      if (!(l[k] = const_str(c, u, u->dtype.scalar, u->op == TKC_OP_VCONST ? &u->arg.v.t[k] : &u->arg))) ok = false;
    if (!ok) {
      for (int k = 0; k < cnt; k++) tkc_free(l[k]);
      return false;
    }
    return (c->cs.r[i] = vec_literal(c, u, u->dtype, l, cnt)) != NULL;
  }
  case TKC_OP_RANGE: {
    if (u->nsrc != 2) return fail_unsupported(c, u, "RANGE needs (start, end)"), false;
    const char *s = R(c, u, u->src[0]), *en = R(c, u, u->src[1]);
    if (!s || !en || !type_of(c, u, u->dtype, tb, sizeof tb)) return false;
    if (u->dtype.count != 1 || !sc_int(u->dtype.scalar)) return fail_unsupported(c, u, "RANGE must be a scalar int"), false;
    char *nm = xfmt(c, "ridx%d", c->cs.cnt[PFX_RIDX]++);
    if (!nm) return false;
    c->cs.r[i] = nm;
    emit(c, *depth, "for (var %s: %s = %s; %s < %s; %s++) {", nm, tb, s, nm, en, nm);
    (*depth)++;
    return !c->cs.failed;
  }
  case TKC_OP_ENDRANGE: case TKC_OP_ENDIF:
    if (*depth > 1) (*depth)--;
    emit(c, *depth, "}");
    return !c->cs.failed;
  case TKC_OP_IF: {
    if (u->nsrc < 1) return fail_unsupported(c, u, "IF needs a gate"), false;
    const char *g = R(c, u, u->src[0]);
    if (!g) return false;
    if (u->src[0]->dtype.scalar != TKC_BOOL || u->src[0]->dtype.count != 1) return fail_unsupported(c, u, "IF needs a scalar bool gate"), false;
    emit(c, *depth, "if (%s) {", g);
    (*depth)++;
    return !c->cs.failed;
  }
  case TKC_OP_BARRIER:
    emit(c, *depth, "workgroupBarrier();");
    return !c->cs.failed;
  case TKC_OP_DEFINE_ACC: {
    if (u->nsrc < 1) return fail_unsupported(c, u, "DEFINE_ACC needs an initial value"), false;
    const char *init = R(c, u, u->src[0]);
    if (!init || !type_of(c, u, u->dtype, tb, sizeof tb)) return false;
    char *nm = xfmt(c, "acc%d", c->cs.cnt[PFX_ACC]++);
    if (!nm) return false;
    c->cs.r[i] = nm;
    emit(c, *depth, "var %s: %s = %s;", nm, tb, init);
    return !c->cs.failed;
  }
  case TKC_OP_ASSIGN: {
    if (u->nsrc != 2) return fail_unsupported(c, u, "ASSIGN needs (acc, value)"), false;
    const char *a = R(c, u, u->src[0]), *v = R(c, u, u->src[1]);
    if (!a || !v) return false;
    emit(c, *depth, "%s = %s;", a, v);
    return (c->cs.r[i] = xfmt(c, "%s", a)) != NULL;
  }
  case TKC_OP_INDEX: {
    if (u->nsrc != 2) return fail_unsupported(c, u, "INDEX must be (buf, idx): gates belong on LOAD/STORE"), false;
    if (!u->dtype.space || u->dtype.pcount > 1) return fail_unsupported(c, u, NULL), false;
    const tkc_uop *b = u->src[0];
    if (b->op != TKC_OP_DEFINE_GLOBAL && b->op != TKC_OP_DEFINE_LOCAL) return fail_unsupported(c, u, "INDEX of something but a buffer"), false;
    const char *x = R(c, u, u->src[1]);
    if (!x || !R(c, u, b)) return false;
    if (u->src[1]->dtype.count != 1 || !sc_int(u->src[1]->dtype.scalar)) return fail_unsupported(c, u, "INDEX needs a scalar int index"), false;
    c->base[i] = posof(c, b);
    size_t xl = strlen(x); /* drop the outer parentheses of a sum: data0[alu0 + 1] */
    if (u->src[1]->op == TKC_OP_ADD && xl >= 2 && x[0] == '(' && x[xl - 1] == ')') c->cs.r[i] = xfmt(c, "%.*s", (int)(xl - 2), x + 1);
    else c->cs.r[i] = xfmt(c, "%s", x);
    return c->cs.r[i] != NULL;
  }
  case TKC_OP_LOAD: {
    if (u->nsrc < 1 || !u->src[0]->dtype.space) return fail_unsupported(c, u, "LOAD from a non-pointer"), false;
    if (!type_of(c, u, u->dtype, tb, sizeof tb)) return false;
    char *v = render_load_value(c, u);
    if (!v) return false;
    if (!load_gated(u)) {
      e = v;
      pfx = PFX_VAL;
      break;
    }
    const char *alt = R(c, u, u->src[1]), *gate = R(c, u, u->src[2]);
    char *nm = alt && gate ? xfmt(c, "val%d", c->cs.cnt[PFX_VAL]++) : NULL;
    if (nm) {
      emit(c, *depth, "var %s: %s = %s;", nm, tb, alt);
      emit(c, *depth, "if (%s) { %s = %s; }", gate, nm, v);
    }
    tkc_free(v);
    c->cs.r[i] = nm;
    return nm && !c->cs.failed;
  }
  case TKC_OP_STORE:
    render_store(c, u, *depth);
    return !c->cs.failed;
  case TKC_OP_GEP: {
    if (u->nsrc != 1 || u->dtype.count != 1) return fail_unsupported(c, u, "GEP of one lane"), false;
    int64_t k = u->arg.kind == TKC_ARG_INT ? u->arg.v.i : u->arg.kind == TKC_ARG_TUPLE && u->arg.n == 1 ? u->arg.v.t[0].v.i : -1;
    if (k < 0 || k >= u->src[0]->dtype.count) return fail_unsupported(c, u, "GEP arg"), false;
    return (c->cs.r[i] = lane(c, u, u->src[0], (int)k)) != NULL;
  }
  case TKC_OP_VECTORIZE: {
    int cnt = u->dtype.count;
    if (cnt <= 1 || cnt > 4 || u->nsrc != cnt) return fail_unsupported(c, u, "WGSL vectors have 2 to 4 lanes"), false;
    char *l[4] = {NULL, NULL, NULL, NULL};
    bool ok = true;
    for (int k = 0; k < cnt && ok; k++) {
      const char *x = u->src[k]->dtype.count == 1 ? R(c, u, u->src[k]) : NULL;
      if (!x && !c->cs.failed) fail_unsupported(c, u, "VECTORIZE of vectors");
      if (!x || !(l[k] = xfmt(c, "%s", x))) ok = false;
    }
    if (!ok) {
      for (int k = 0; k < cnt; k++) tkc_free(l[k]);
      return false;
    }
    if (!(e = vec_literal(c, u, u->dtype, l, cnt))) return false;
    pfx = PFX_CAST;
    inl = c->cs.nchild[i] == 1 && !c->cs.must_name[i];
    break;
  }
  case TKC_OP_CAST:
    if (u->nsrc != 1) return fail_unsupported(c, u, NULL), false;
    if (u->dtype.space) { /* CAST(INDEX) to a vector pointer: the same address */
      int ps = posof(c, u->src[0]);
      if (!u->src[0]->dtype.space || ps < 0 || c->base[ps] < 0) return fail_unsupported(c, u, "pointer CAST of something but an INDEX"), false;
      c->base[i] = c->base[ps];
      return (c->cs.r[i] = xfmt(c, "%s", c->cs.r[ps])) != NULL;
    }
    /* fallthrough */
  case TKC_OP_BITCAST:
    if (u->nsrc != 1 || u->dtype.space || u->src[0]->dtype.space) return fail_unsupported(c, u, NULL), false;
    if (!(e = render_value_op(c, u))) return false;
    pfx = PFX_CAST;
    inl = c->cs.nchild[i] == 1 && !c->cs.must_name[i];
    break;
  default:
    if (op_is_alu(u->op) && !u->dtype.space && u->dtype.scalar < TKC_VOID) {
      if (!(e = render_value_op(c, u))) return false;
      pfx = PFX_ALU;
      inl = c->cs.nchild[i] == 1 && !c->cs.must_name[i];
      break;
    }
    return fail_unsupported(c, u, NULL), false;
  }
  return tkc_cs_bind(&c->cs, i, e, inl, pfx, inl ? NULL : type_of(c, u, u->dtype, tb, sizeof tb), *depth);
}

static bool render_one_cb(void *c, size_t i, int *depth) { return render_one(c, i, depth); }

static const char *const helper_src[] = {
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

static char *render_wgsl(const tkc_renderer *self, const char *name, tkc_uop *const *uops, size_t n) {
  (void)self;
  if (!name) name = "kernel";
  if (!is_ident(name) || name_reserved(name))
    return tkc_err_null(TKC_EINVAL, "WGSL renderer: kernel name \"%s\" is not a usable WGSL identifier", name);
  if (!uops) return tkc_err_null(TKC_EINVAL, "WGSL renderer: NULL uops");
  rctx c;
  memset(&c, 0, sizeof c);
  c.local_size[0] = c.local_size[1] = c.local_size[2] = 1;
  char *out = NULL;
  if (tkc_cs_init(&c.cs, "WGSL", "let", uops, n) != TKC_OK) goto done;
  c.base = tkc_malloc((n + 1) * sizeof *c.base);
  c.skip = tkc_calloc(n + 1, 1);
  c.vars = tkc_calloc(n + 1, sizeof *c.vars);
  if (!c.base || !c.skip || !c.vars) { fail_oom(&c); goto done; }
  for (size_t i = 0; i <= n; i++) c.base[i] = -1;
  if (!prepass(&c)) goto done;
  if (!tkc_cs_loop(&c.cs, render_one_cb, &c)) goto done;
  if (c.decl.oom) { fail_oom(&c); goto done; }
  int nbufs = 0;
  for (size_t i = 0; i < n; i++)
    if (uops[i]->op == TKC_OP_DEFINE_GLOBAL && uops[i]->arg.kind == TKC_ARG_INT && uops[i]->arg.v.i >= nbufs) nbufs = (int)uops[i]->arg.v.i + 1;
  for (int d = 0; d < 3; d++)
    if (c.local_size[d] < 1 || c.local_size[d] > 1024) {
      tkc_err(TKC_EUNSUPPORTED, "WGSL renderer: local size %lld on axis %d is out of range", (long long)c.local_size[d], d);
      c.cs.failed = true;
      goto done;
    }

  tkc_sbuf o = {0};
  if (c.need_f16) tkc_sbuf_puts(&o, "enable f16;\n");
  if (c.helpers & (H_F2I | H_F2U)) c.helpers |= H_ISNAN;
  for (size_t k = 0; k < TKC_COUNTOF(helper_src); k++)
    if (c.helpers & (1u << k)) tkc_sbuf_puts(&o, helper_src[k]);
  if (c.nvars) {
    tkc_sbuf_puts(&o, "struct Vars {");
    for (size_t k = 0; k < c.nvars; k++) tkc_sbuf_printf(&o, " v%zu: i32,", k);
    tkc_sbuf_puts(&o, " }\n");
  }
  if (c.decl.s) tkc_sbuf_puts(&o, c.decl.s);
  if (c.nvars) {
    tkc_sbuf_printf(&o, "@group(0) @binding(%d) var<uniform> vars: Vars; /*", nbufs);
    for (size_t k = 0; k < c.nvars; k++) tkc_sbuf_printf(&o, " v%zu = %s", k, c.vars[k]->arg.v.t[0].v.s);
    tkc_sbuf_puts(&o, " */\n");
  }
  tkc_sbuf_printf(&o, "@compute @workgroup_size(%lld, %lld, %lld)\n", (long long)c.local_size[0], (long long)c.local_size[1],
                  (long long)c.local_size[2]);
  tkc_sbuf_printf(&o, "fn %s(@builtin(workgroup_id) gindex: vec3<u32>, @builtin(local_invocation_id) lindex: vec3<u32>) {\n", name);
  if (c.cs.body.s) tkc_sbuf_puts(&o, c.cs.body.s);
  tkc_sbuf_puts(&o, "}\n");
  out = tkc_sbuf_take(&o);
  if (!out) c.cs.failed = true;

done:
  tkc_free(c.base);
  tkc_free(c.skip);
  tkc_free(c.vars);
  tkc_free(c.decl.s);
  tkc_cs_free(&c.cs);
  if (c.cs.failed) {
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
    .scalar_access_dtypes = 1u << TKC_BOOL | 1u << TKC_INT8 | 1u << TKC_UINT8 | 1u << TKC_INT16 | 1u << TKC_UINT16 | 1u << TKC_BFLOAT16,
    .global_max = {65535, 65535, 65535},
    .local_max = {256, 256, 64},
    .shared_max = 16384,
    .unsupported_dtypes = WGSL_UNSUPPORTED,
    .extra_matcher = wgsl_matcher,
    .render = render_wgsl,
};
