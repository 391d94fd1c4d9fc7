/* src/render/c.c — the "C" renderer (tinygrad's ClangRenderer): one C function per kernel, compiled
 * by the CPU device with the system C compiler (gcc or clang).
 *
 * Output shape:
 *   <half typedef / bfloat16 helpers / vector typedefs, only when used>
 *   void NAME(float* restrict data0, ..., const int n, ...) { ... }
 * Buffers come in DEFINE_GLOBAL arg order (a missing arg number gets an unused `void* dataK` so the
 * positions still match the launch), then one `const int` per DEFINE_VAR sorted by name (strcmp),
 * which is the order the launch passes variable values in, then `const int tkc_core_, const int
 * tkc_ncores_`: the launch runs the function once per core (0..ncores-1), and each call does a
 * contiguous chunk of the outermost output loop (a depth-0 RANGE no DEFINE_ACC reduces over, when
 * every STORE is inside it; see tkc_render_pick_split), or, without one, everything on core 0 only.
 *
 * Value representation (chosen so results match the INTERP device's tkc_alu_eval semantics):
 *  - float16 is `half`: _Float16 where the compiler supports it (__FLT16_MAX__), else clang's
 *    storage-only __fp16. Every half ALU result is cast back to half, so each op rounds once to half
 *    whatever the compiler's excess-precision mode. Vectors of 4, 8 or 16 halves convert to and from
 *    float32 vectors in one F16C / AVX-512 instruction (tkc_h2f_N / tkc_f2h_N, rounding to nearest
 *    even as the scalar cast), lane by lane where the host lacks it.
 *  - bfloat16 lives in memory as `unsigned short` (its bit pattern) and in registers as a float that
 *    always holds a bfloat16 value: loads shift the bits up, stores shift them down, and every bf16
 *    ALU result / cast goes through tkc_bf16_round (to float, then to nearest even as numpy/torch:
 *    NaN stays NaN, overflow gives inf), computed in double like tkc_alu_eval.
 *  - results of bool / 8- and 16-bit integer ALU ops are cast back to their type (C promotes them to
 *    int), so inlined expressions wrap like INTERP; signed integer arithmetic that is not index math
 *    is done in unsigned (wrapped_int_op), so no overflow is undefined (and no -fwrapv is needed,
 *    which would keep index math from being widened: index_math_of).
 *  - IDIV/MOD: target rules (c_matcher) give x/0 = x%0 = 0 and INT_MIN/-1 wraps, as tkc_alu_eval;
 *    shifts by counts outside [0, bits) give 0 or the sign fill, and float -> int casts saturate with
 *    NaN -> 0 (GUARD_SHIFT, GUARD_FTOI): C leaves all of these undefined.
 *  - vector values use GCC/clang vector extensions (`typedef float float4 __attribute__((aligned(4),
 *    vector_size(16)))`). Alignment is the element's: a vector access at any element offset is valid.
 *    Vector ops they cannot do as the scalar ops (half, bf16, IDIV, ...) become lane ops (c_lanes).
 *    bfloat16 and non-power-of-two vectors are loaded/stored lane by lane.
 *  - bitcasts go through a union compound literal (no strict-aliasing UB).
 * The render loop, naming and inlining are cstyle.c's; this file is C's language table. */
#include <stdio.h>
#include <string.h>
#include "base/common.h"
#include "codegen/target_rules.h"
#include "render/cstyle.h"
#include "render/renderers.h"
#include "uops/uop_internal.h"

/* ---------------------------------------------------------------- dtype names */

/* the C type of a value held in a variable (bfloat16 is held as a float) */
static const char *const reg_name[TKC_NDTYPES] = {
    [TKC_BOOL] = "_Bool",        [TKC_INT8] = "signed char",          [TKC_UINT8] = "unsigned char",
    [TKC_INT16] = "short",       [TKC_UINT16] = "unsigned short",     [TKC_INT32] = "int",
    [TKC_UINT32] = "unsigned int", [TKC_INT64] = "long long",         [TKC_UINT64] = "unsigned long long",
    [TKC_FLOAT16] = "half",      [TKC_BFLOAT16] = "float",            [TKC_FLOAT32] = "float",
    [TKC_FLOAT64] = "double",    [TKC_VOID] = "void",
};
/* vector typedef names (name + count); the elements are of the register type, but bool vectors hold unsigned char */
static const char *const vec_name[TKC_NDTYPES] = {
    [TKC_BOOL] = "bool",   [TKC_INT8] = "char",   [TKC_UINT8] = "uchar",  [TKC_INT16] = "short",
    [TKC_UINT16] = "ushort", [TKC_INT32] = "int", [TKC_UINT32] = "uint",  [TKC_INT64] = "long",
    [TKC_UINT64] = "ulong", [TKC_FLOAT16] = "half", [TKC_BFLOAT16] = "float", [TKC_FLOAT32] = "float",
    [TKC_FLOAT64] = "double", [TKC_VOID] = NULL,
};
/* the size of s in a register (bfloat16 is held as a float); 0 for void */
static size_t reg_size(int s) { return s == TKC_BFLOAT16 ? 4 : s == TKC_BOOL ? 1 : tkc_dtype_size((tkc_dtype)s); }
/* types C promotes to int in arithmetic (results must be cast back) */
static bool narrow(int s) { return s == TKC_BOOL || (tkc_dtype_is_int((tkc_dtype)s) && tkc_dtype_size((tkc_dtype)s) < 4); }
/* vector memory accesses that are done lane by lane */
static bool lanewise_mem(tkc_dt base) { return base.count > 1 && (base.scalar == TKC_BFLOAT16 || !tkc_render_is_pow2(base.count)); }

/* ---------------------------------------------------------------- render context */

typedef struct vecty {
  uint8_t scalar; /* bfloat16 registers use float vectors: stored as FLOAT32 */
  uint16_t count;
  bool fma;       /* the kernel uses its tkc_fma_<type> helper */
  bool h2f, f2h;  /* (float32 vectors) it uses tkc_h2f_<count> / tkc_f2h_<count> */
} vecty;

typedef struct rctx {
  tkc_cs cs; /* first: the hooks get &cs */
  vecty *vecs;
  size_t nvecs, capvecs;
  bool need_half, need_bf16, need_dot4;
  const tkc_uop *split; /* the RANGE split across cores (NULL: core 0 does everything) */
  uint8_t *index_math;  /* by position: an integer computed from loop / launch indices, variables and
                           constants, read only as an address, gate or loop bound (index_math_of) */
} rctx;

#define CTX(cs) ((rctx *)(cs))
#define FAIL(cs, u, why) (tkc_cs_unsupported((cs), (u), (why)), TKC_CS_FAIL)
#define R(cs, user, s) tkc_cs_ref((cs), (user), (s)) /* the rendered text of a source */
#define xfmt tkc_cs_fmt

/* the kernel's vector type of count scalars, registered when new (valid until the next one is) */
static vecty *vec_entry(tkc_cs *cs, int scalar, int count) {
  rctx *c = CTX(cs);
  if (scalar == TKC_BFLOAT16) scalar = TKC_FLOAT32;
  for (size_t i = 0; i < c->nvecs; i++)
    if (c->vecs[i].scalar == scalar && c->vecs[i].count == count) return &c->vecs[i];
  if (c->nvecs == c->capvecs) {
    size_t cap = c->capvecs ? c->capvecs * 2 : 8;
    vecty *v = tkc_realloc(c->vecs, cap * sizeof *v);
    if (!v) return tkc_cs_oom(cs);
    c->vecs = v;
    c->capvecs = cap;
  }
  c->vecs[c->nvecs] = (vecty){.scalar = (uint8_t)scalar, .count = (uint16_t)count};
  return &c->vecs[c->nvecs++];
}

/* registers a vector typedef; returns its name in buf */
static const char *vec_type(tkc_cs *cs, int scalar, int count, char *buf, size_t n) {
  if (!vec_entry(cs, scalar, count)) return NULL;
  snprintf(buf, n, "%s%d", vec_name[scalar == TKC_BFLOAT16 ? TKC_FLOAT32 : scalar], count);
  return buf;
}

/* the C type of a value (registers) or pointer; NULL for what has none */
static const char *type_of(tkc_cs *cs, const tkc_uop *u, tkc_dt dt, char *buf, size_t n) {
  (void)u;
  if (dt.scalar > TKC_VOID) return NULL;
  if (dt.space) {
    if (dt.pcount > 1) return NULL;
    char eb[48];
    /* in memory bfloat16 is its bits; vector pointers, but bfloat16 / odd widths are accessed lane by
     * lane through the scalar pointer */
    const char *e = dt.scalar == TKC_BFLOAT16 ? "unsigned short" : reg_name[dt.scalar];
    if (dt.count > 1 && dt.scalar != TKC_VOID && !lanewise_mem(dt) && !(e = vec_type(cs, dt.scalar, dt.count, eb, sizeof eb)))
      return NULL;
    snprintf(buf, n, "%s*", e);
    return buf;
  }
  if (dt.scalar == TKC_VOID) return NULL;
  if (dt.count > 1) return vec_type(cs, dt.scalar, dt.count, buf, n);
  snprintf(buf, n, "%s", reg_name[dt.scalar]);
  return buf;
}

/* ---------------------------------------------------------------- constants */

/* a scalar constant of dtype s holding the value of arg a */
static char *const_str(tkc_cs *cs, const tkc_uop *u, int s, const tkc_arg *a) {
  (void)u;
  tkc_value v = tkc_value_from_arg(a, (tkc_dtype)s);
  char num[80];
  switch (s) {
  case TKC_BOOL: return xfmt(cs, "%s", v.i ? "1" : "0");
  case TKC_INT8: case TKC_INT16:
    return v.i < 0 ? xfmt(cs, "((%s)(%lld))", reg_name[s], (long long)v.i) : xfmt(cs, "((%s)%lld)", reg_name[s], (long long)v.i);
  case TKC_UINT8: case TKC_UINT16: return xfmt(cs, "((%s)%lluu)", reg_name[s], (unsigned long long)v.u);
  case TKC_INT32:
    if (v.i == INT32_MIN) return xfmt(cs, "(-2147483647-1)");
    return v.i < 0 ? xfmt(cs, "(%lld)", (long long)v.i) : xfmt(cs, "%lld", (long long)v.i);
  case TKC_UINT32: return xfmt(cs, "%lluu", (unsigned long long)(uint32_t)v.u);
  case TKC_INT64:
    if (v.i == INT64_MIN) return xfmt(cs, "(-9223372036854775807ll-1)");
    return v.i < 0 ? xfmt(cs, "(%lldll)", (long long)v.i) : xfmt(cs, "%lldll", (long long)v.i);
  case TKC_UINT64: return xfmt(cs, "%lluull", (unsigned long long)v.u);
  case TKC_FLOAT16: case TKC_BFLOAT16: case TKC_FLOAT32: case TKC_FLOAT64: {
    bool dbl = s == TKC_FLOAT64;
    double f = v.f;
    if (f != f) snprintf(num, sizeof num, "%s", dbl ? "__builtin_nan(\"\")" : "__builtin_nanf(\"\")");
    else if (f == 1.0 / 0.0) snprintf(num, sizeof num, "%s", dbl ? "__builtin_inf()" : "__builtin_inff()");
    else if (f == -1.0 / 0.0) snprintf(num, sizeof num, "%s", dbl ? "(-__builtin_inf())" : "(-__builtin_inff())");
    else {
      char t[64];
      tkc_cs_real(f, !dbl, t, sizeof t);
      snprintf(num, sizeof num, t[0] == '-' ? "(%s%s)" : "%s%s", t, dbl ? "" : "f");
    }
    if (s == TKC_FLOAT16) return xfmt(cs, "((half)%s)", num);
    return xfmt(cs, "%s", num);
  }
  default: return NULL;
  }
}

/* ---------------------------------------------------------------- expressions */

/* names of the libm builtins by precision: [0] float, [1] double */
static const char *math_fn(int op, bool dbl) {
  switch (op) {
  case TKC_OP_SQRT: return dbl ? "__builtin_sqrt" : "__builtin_sqrtf";
  case TKC_OP_EXP2: return dbl ? "__builtin_exp2" : "__builtin_exp2f";
  case TKC_OP_LOG2: return dbl ? "__builtin_log2" : "__builtin_log2f";
  case TKC_OP_SIN: return dbl ? "__builtin_sin" : "__builtin_sinf";
  default: return NULL;
  }
}

/* the result e (taken) of op on type s, which C computes in a wider type, rounded / wrapped back to s:
 * half and bfloat16 (tkc_bf16_round: the bfloat16 emulation) round once per op, narrow ints wrap */
static char *round_back(tkc_cs *cs, int op, int s, char *e) {
  if (!e || op == TKC_OP_WHERE || op == TKC_OP_MAX) return e;
  char *w;
  if (s == TKC_FLOAT16) w = xfmt(cs, "((half)%s)", e);
  else if (s == TKC_BFLOAT16 && op != TKC_OP_NEG) w = xfmt(cs, "tkc_bf16_round(%s)", e);
  else if (narrow(s) && op != TKC_OP_AND && op != TKC_OP_OR && op != TKC_OP_XOR) w = xfmt(cs, "((%s)%s)", reg_name[s], e);
  else return e;
  tkc_free(e);
  return w;
}

/* Which UOps are index math: integers computed from RANGEs, SPECIALs, DEFINE_VARs and constants by
 * integer ops, and read only as addresses, gates or loop bounds (through more such ops), never as a
 * value. Their values fit the kernel's index type by construction (the lowerer picks int64 where an
 * index could pass 2^31 - 1), so C may treat their overflow as impossible: signed index math lets
 * the compiler widen a loop's index into a pointer increment (with -fwrapv, or in unsigned, each
 * access recomputed a 32-bit index and sign-extended it: a padded copy ran 2.2x slower). Every
 * other signed integer op wraps through unsigned (wrapped_int_op), as INTERP's do. */
static uint8_t *index_math_of(tkc_cs *cs) {
  size_t n = cs->n;
  uint8_t *m = tkc_calloc(n ? 2 * n : 1, 1), *value_use = m + n;
  if (!m) return tkc_cs_oom(cs), NULL;
  for (size_t i = 0; i < n; i++) { /* from index leaves by integer (and, for gates, bool) ops */
    const tkc_uop *u = cs->uops[i];
    int s = u->dtype.scalar;
    if (cs->pos[u->id] != (int32_t)i || u->dtype.count != 1 || u->dtype.space || !(tkc_dtype_is_int((tkc_dtype)s) || s == TKC_BOOL)) continue;
    bool leaf = u->op == TKC_OP_RANGE || u->op == TKC_OP_SPECIAL || u->op == TKC_OP_DEFINE_VAR || (u->op == TKC_OP_CONST && !u->nsrc);
    bool ok = leaf || (tkc_op_flags((tkc_op)u->op) & TKC_F_ALU) || u->op == TKC_OP_CAST;
    for (int k = 0; ok && !leaf && k < u->nsrc; k++) {
      int p = tkc_cs_pos(cs, u->src[k]);
      ok = p >= 0 && m[p];
    }
    m[i] = ok;
  }
  for (size_t i = n; i-- > 0;) { /* users come after their sources: each one's uses are known here */
    const tkc_uop *u = cs->uops[i];
    if (cs->pos[u->id] != (int32_t)i) continue;
    bool through = m[i] && !value_use[i]; /* an index op: its sources are read as it is */
    for (int k = 0; k < u->nsrc; k++) {
      int p = tkc_cs_pos(cs, u->src[k]);
      bool address = (u->op == TKC_OP_INDEX && k >= 1) || u->op == TKC_OP_RANGE || u->op == TKC_OP_IF;
      if (p >= 0 && !address && !through) value_use[p] = 1;
    }
  }
  for (size_t i = 0; i < n; i++) m[i] = m[i] && !value_use[i];
  return m;
}

/* a scalar ADD, SUB, MUL, NEG, SHL or integer MULACC of a signed type (or of uint16, which C
 * promotes to int) that is not index math (a SHL always: C leaves a negative value shifted left
 * undefined): computed in unsigned, where C wraps, then converted back (two's complement: what
 * INTERP and numpy give) */
static char *wrapped_int_op(tkc_cs *cs, const tkc_uop *u, const char *const *a) {
  int op = u->op, s = u->dtype.scalar;
  bool signed_int = s == TKC_INT8 || s == TKC_INT16 || s == TKC_INT32 || s == TKC_INT64;
  if (!(signed_int || s == TKC_UINT16) || (op != TKC_OP_ADD && op != TKC_OP_SUB && op != TKC_OP_MUL && op != TKC_OP_NEG && op != TKC_OP_SHL && op != TKC_OP_MULACC))
    return NULL;
  int p = tkc_cs_pos(cs, u);
  if (op != TKC_OP_SHL && CTX(cs)->index_math && p >= 0 && CTX(cs)->index_math[p]) return NULL;
  const char *ut = s == TKC_INT64 ? "unsigned long long" : "unsigned int";
  switch (op) {
  case TKC_OP_NEG: return xfmt(cs, "((%s)(0u-(%s)%s))", reg_name[s], ut, a[0]);
  case TKC_OP_MULACC: return xfmt(cs, "((%s)((%s)%s*(%s)%s+(%s)%s))", reg_name[s], ut, a[0], ut, a[1], ut, a[2]);
  default: {
    const char *sym = op == TKC_OP_ADD ? "+" : op == TKC_OP_SUB ? "-" : op == TKC_OP_MUL ? "*" : "<<";
    return xfmt(cs, "((%s)((%s)%s%s(%s)%s))", reg_name[s], ut, a[0], sym, ut, a[1]);
  }
  }
}

/* One scalar ALU op; NULL + error when C cannot express it. */
static char *alu_scalar(tkc_cs *cs, const tkc_uop *u, const char *const *a) {
  int op = u->op, s = u->dtype.scalar;
  bool isf = tkc_dtype_is_float((tkc_dtype)s), bf = s == TKC_BFLOAT16;
  switch (op) {
  case TKC_OP_FDIV: if (!isf) return tkc_cs_unsupported(cs, u, "FDIV on an integer type"); break;
  case TKC_OP_RECIP: if (!isf) return tkc_cs_unsupported(cs, u, "RECIP needs a float type"); break;
  case TKC_OP_POW: if (!isf) return tkc_cs_unsupported(cs, u, "POW needs a float type"); break;
  case TKC_OP_IDIV: case TKC_OP_MOD: if (isf) return tkc_cs_unsupported(cs, u, "IDIV/MOD need an integer type"); break;
  case TKC_OP_AND: case TKC_OP_OR: case TKC_OP_XOR: case TKC_OP_SHL: case TKC_OP_SHR:
    if (isf) return tkc_cs_unsupported(cs, u, "bitwise op on a float type");
    break;
  case TKC_OP_SQRT: case TKC_OP_EXP2: case TKC_OP_LOG2: case TKC_OP_SIN:
    if (!isf) return tkc_cs_unsupported(cs, u, "transcendental op needs a float type");
    break;
  case TKC_OP_DOT4:
    if (s != TKC_INT32 || u->src[0]->dtype.scalar != TKC_INT32 || u->src[1]->dtype.scalar != TKC_INT32) return tkc_cs_unsupported(cs, u, "DOT4 needs int32");
    return xfmt(cs, "tkc_dot4(%s,%s)", a[0], a[1]);
  default: if (!cs->lang->code_for_op[op] && op != TKC_OP_MULACC) return tkc_cs_unsupported(cs, u, NULL);
  }
  char *e, *dbl = NULL;
  const char *b[3] = {a[0], a[1], a[2]};
  /* bfloat16 arithmetic is done in double, like tkc_alu_eval, then rounded */
  if (bf && (op == TKC_OP_ADD || op == TKC_OP_SUB || op == TKC_OP_MUL || op == TKC_OP_FDIV || op == TKC_OP_RECIP) && !(b[0] = dbl = xfmt(cs, "(double)%s", a[0])))
    return NULL;
  switch (op) {
  case TKC_OP_MULACC: /* one fused multiply-add; half and bfloat16 through float, as tkc_alu_eval */
    e = s == TKC_FLOAT64 ? xfmt(cs, "__builtin_fma(%s,%s,%s)", a[0], a[1], a[2])
        : isf ? xfmt(cs, "__builtin_fmaf((float)%s,(float)%s,(float)%s)", a[0], a[1], a[2])
              : wrapped_int_op(cs, u, a);
    if (!e && !cs->failed) e = xfmt(cs, "((%s*%s)+%s)", a[0], a[1], a[2]);
    break;
  case TKC_OP_IDIV: case TKC_OP_MOD: /* x/0 and INT_MIN/-1 are guarded by the target rules (C traps on both) */
    if (!tkc_divisor_guarded(u->src[1], true)) e = tkc_cs_unsupported(cs, u, "a divisor that may be 0 or -1 (apply the target rules first)");
    else if (s == TKC_INT32 && u->src[0]->vmin >= 0 && u->src[1]->vmin > 0) /* an index: unsigned, no sign fix-up */
      e = xfmt(cs, op == TKC_OP_IDIV ? "((int)((unsigned)%s/(unsigned)%s))" : "((int)((unsigned)%s%%(unsigned)%s))", a[0], a[1]);
    else e = tkc_cs_op(cs, op, b);
    break;
  case TKC_OP_SQRT: case TKC_OP_EXP2: case TKC_OP_LOG2: case TKC_OP_SIN: e = xfmt(cs, "%s(%s)", math_fn(op, s == TKC_FLOAT64 || bf), a[0]); break;
  case TKC_OP_POW: /* in double for every float type, like INTERP: powf is not always correctly rounded */
    e = xfmt(cs, s == TKC_FLOAT32 ? "((float)__builtin_pow((double)%s,(double)%s))" : "__builtin_pow((double)%s,(double)%s)", a[0], a[1]);
    break;
  case TKC_OP_CMPLT: case TKC_OP_CMPNE: return tkc_cs_op(cs, op, b);
  default: e = wrapped_int_op(cs, u, a);
    if (!e && !cs->failed) e = tkc_cs_op(cs, op, b);
  }
  tkc_free(dbl);
  return round_back(cs, op, s, e);
}

/* the bit pattern (as unsigned short) of a 16-bit value x of scalar type s */
static char *bits16(tkc_cs *cs, int s, const char *x) {
  if (s == TKC_BFLOAT16) return xfmt(cs, "tkc_bf16_bits(%s)", x);
  if (s == TKC_FLOAT16) return xfmt(cs, "((union { half a; unsigned short b; }){.a = %s}).b", x);
  return xfmt(cs, "((unsigned short)%s)", x);
}

/* one scalar CAST (bitcast=false) or BITCAST of x from scalar type f to t */
static char *cast_scalar(tkc_cs *cs, const tkc_uop *u, int f, int t, const char *x, bool bitcast) {
  if (f == t) return xfmt(cs, "%s", x);
  if (!bitcast) {
    if (t == TKC_BOOL) return xfmt(cs, "((_Bool)%s)", x);
    if (t == TKC_BFLOAT16) {
      if (f == TKC_BOOL || tkc_dtype_is_int((tkc_dtype)f)) return xfmt(cs, "tkc_bf16_round((float)%s)", x); /* int -> float -> bf16 as INTERP */
      return xfmt(cs, "tkc_bf16_round(%s)", x);
    }
    if (f == TKC_BFLOAT16 && t == TKC_FLOAT32) return xfmt(cs, "%s", x); /* already a float */
    return xfmt(cs, "((%s)%s)", reg_name[t], x);
  }
  if (!reg_size(f) || tkc_dtype_size((tkc_dtype)f) != tkc_dtype_size((tkc_dtype)t))
    return tkc_cs_unsupported(cs, u, "BITCAST between types of different sizes");
  if (t == TKC_BOOL) return xfmt(cs, "((_Bool)%s)", x);
  if (f == TKC_BFLOAT16 || t == TKC_BFLOAT16) {
    char *b = bits16(cs, f, x), *r;
    if (!b) return NULL;
    if (t == TKC_BFLOAT16) r = xfmt(cs, "tkc_bf16_float(%s)", b);
    else if (t == TKC_FLOAT16) r = xfmt(cs, "((union { unsigned short a; half b; }){.a = %s}).b", b);
    else r = xfmt(cs, "((%s)%s)", reg_name[t], b);
    tkc_free(b);
    return r;
  }
  return xfmt(cs, "((union { %s a; %s b; }){.a = %s}).b", reg_name[f], reg_name[t], x);
}

/* the element types that vector operators, comparisons and __builtin_convertvector handle as C
 * does per lane (half and bfloat16 round per op and stay lane by lane) */
static bool native_elem(int s) { return tkc_dtype_is_int((tkc_dtype)s) || s == TKC_FLOAT32 || s == TKC_FLOAT64; }

/* the signed integer type whose vectors mask a vector of s lanes (same element size) */
static int mask_scalar(int s) {
  switch (tkc_dtype_size((tkc_dtype)s)) {
  case 1: return TKC_INT8;
  case 2: return TKC_INT16;
  case 4: return TKC_INT32;
  default: return TKC_INT64;
  }
}

/* select(m, a, b) for a full-width mask m (-1 or 0 per lane) as bit operations: C has no vector ?: */
static char *vec_select(tkc_cs *cs, tkc_dt dt, const char *m, const char *a, const char *b) {
  char tb[48], mb[48];
  const char *t = vec_type(cs, dt.scalar, dt.count, tb, sizeof tb), *mt = vec_type(cs, mask_scalar(dt.scalar), dt.count, mb, sizeof mb);
  if (!t || !mt) return NULL;
  return xfmt(cs, "((%s)((((%s)%s)&((%s)%s))|(((%s)%s)&~((%s)%s))))", t, mt, a, mt, m, mt, b, mt, m);
}

/* whether c is the constant true in every lane */
static bool all_true(const tkc_uop *c) {
  if (c->op == TKC_OP_CONST) return c->dtype.scalar == TKC_BOOL && c->arg.kind == TKC_ARG_INT && c->arg.v.i != 0;
  if (c->op != TKC_OP_VECTORIZE) return false;
  for (int k = 0; k < c->nsrc; k++)
    if (!all_true(c->src[k])) return false;
  return c->nsrc > 0;
}

/* The full-width mask (lanes of -1/0 of the signed type ms) of the bool vector c, where it can be had
 * without the bool round trip: a comparison of operands of that lane size is its own mask, x != true
 * the complement of x's. NULL (no error) otherwise: the caller converts the 0/1 bool lanes. The round
 * trip (narrow to bytes, mask, widen, negate) was most of the work of exp's range checks. */
static char *direct_mask(tkc_cs *cs, const tkc_uop *user, const tkc_uop *c, int ms, int depth) {
  if (depth > 4 || c->dtype.scalar != TKC_BOOL || c->nsrc != 2 || (c->op != TKC_OP_CMPLT && c->op != TKC_OP_CMPNE)) return NULL;
  int os = c->src[0]->dtype.scalar;
  char mb[48];
  const char *mt = vec_type(cs, ms, c->dtype.count, mb, sizeof mb);
  if (!mt) return NULL;
  if (os == TKC_BOOL && c->op == TKC_OP_CMPNE && all_true(c->src[1])) {
    char *m = direct_mask(cs, user, c->src[0], ms, depth + 1), *r = m ? xfmt(cs, "(~%s)", m) : NULL;
    tkc_free(m);
    return r;
  }
  if (!native_elem(os) || tkc_dtype_size((tkc_dtype)os) != tkc_dtype_size((tkc_dtype)ms)) return NULL;
  const char *a[3] = {R(cs, user, c->src[0]), R(cs, user, c->src[1]), NULL};
  if (!a[0] || !a[1]) return NULL;
  char *cmp = tkc_cs_op(cs, c->op, a), *r = cmp ? xfmt(cs, "((%s)%s)", mt, cmp) : NULL;
  tkc_free(cmp);
  return r;
}

/* u is a vector op whose lanes C's vector extensions compute as the scalar ops do: wrapping integer
 * arithmetic (clang and gcc vectors don't promote and don't treat overflow as UB), IEEE float ops,
 * comparisons as 0/1 bool lanes, WHERE/MAX as masks, CAST as __builtin_convertvector, BITCAST
 * between equal lane sizes as a vector cast. The others are scalarized by the target rules (c_lanes). */
static bool native_vector(const tkc_uop *u) {
  int s = u->dtype.scalar, op = u->op, n = u->dtype.count;
  if (n <= 1 || !tkc_render_is_pow2((unsigned)n) || u->dtype.space || u->nsrc < 1 || u->nsrc > 3) return false;
  int ss = u->src[u->nsrc - 1]->dtype.scalar; /* the operand type (WHERE: its values) */
  bool isf = s == TKC_FLOAT32 || s == TKC_FLOAT64, isi = tkc_dtype_is_int((tkc_dtype)s), isb = s == TKC_BOOL;
  for (int k = 0; k < u->nsrc; k++) {
    if (u->src[k]->dtype.count != n || u->src[k]->dtype.space) return false;
    if (k > 0 && op != TKC_OP_WHERE && !tkc_dt_eq(u->src[k]->dtype, u->src[0]->dtype)) return false;
  }
  switch (op) {
  case TKC_OP_ADD: case TKC_OP_SUB: case TKC_OP_MUL: case TKC_OP_NEG: case TKC_OP_MAX: return isf || isi;
  case TKC_OP_FDIV: case TKC_OP_MULACC: case TKC_OP_RECIP: return isf;
  case TKC_OP_AND: case TKC_OP_OR: case TKC_OP_XOR: return isi || isb;
  case TKC_OP_SHL: case TKC_OP_SHR: return isi;
  case TKC_OP_DOT4: return s == TKC_INT32;
  case TKC_OP_CMPLT: case TKC_OP_CMPNE: return isb && (native_elem(ss) || ss == TKC_BOOL);
  case TKC_OP_WHERE: return u->nsrc == 3 && u->src[0]->dtype.scalar == TKC_BOOL && tkc_dt_eq(u->src[1]->dtype, u->dtype) && (native_elem(s) || isb);
  case TKC_OP_CAST:
    if (u->nsrc == 1 && ((s == TKC_FLOAT32 && ss == TKC_FLOAT16) || (s == TKC_FLOAT16 && ss == TKC_FLOAT32))) return true; /* (half_cast) */
    return u->nsrc == 1 && (native_elem(s) || isb) && (native_elem(ss) || ss == TKC_BOOL);
  case TKC_OP_BITCAST: return u->nsrc == 1 && native_elem(s) && native_elem(ss) && tkc_dtype_size((tkc_dtype)s) == tkc_dtype_size((tkc_dtype)ss);
  default: return false;
  }
}

/* a vector of n halves widened to floats (widen) or floats rounded to halves: one F16C (AVX-512
 * for 16 lanes) conversion where the host has it, through a helper made per width (the lane casts were
 * an insert and a scalar conversion per lane, a third of an int8 matvec's instructions) */
static char *half_cast(tkc_cs *cs, bool widen, int n, const char *x) {
  vecty *f = vec_entry(cs, TKC_FLOAT16, n) ? vec_entry(cs, TKC_FLOAT32, n) : NULL; /* (the float one last: it stays valid) */
  if (!f) return NULL;
  *(widen ? &f->h2f : &f->f2h) = true;
  return xfmt(cs, "tkc_%s_%d(%s)", widen ? "h2f" : "f2h", n, x);
}

/* a native vector op (native_vector) as one C vector expression; NULL + error for any other */
static char *native_vector_op(tkc_cs *cs, const tkc_uop *u) {
  int s = u->dtype.scalar, op = u->op, n = u->dtype.count;
  const char *a[3] = {NULL, NULL, NULL};
  if (!native_vector(u)) return tkc_cs_unsupported(cs, u, "vector op the target rules did not scalarize");
  for (int k = 0; k < u->nsrc && k < 3; k++)
    if (!(a[k] = R(cs, u, u->src[k]))) return NULL;
  char tb[48], mb[48];
  const char *t = vec_type(cs, s, n, tb, sizeof tb);
  if (!t) return NULL;
  char *m = NULL, *r = NULL;
  switch (op) {
  case TKC_OP_CMPLT: case TKC_OP_CMPNE: /* lanes of -1/0 -> bool 0/1 */
    m = tkc_cs_op(cs, op, a), r = m ? xfmt(cs, "(__builtin_convertvector(%s,%s)&1)", m, t) : NULL;
    break;
  case TKC_OP_MAX: /* a<b?b:a per lane, NaN in a kept as the scalar form does */
    m = tkc_cs_op(cs, TKC_OP_CMPLT, a), r = m ? vec_select(cs, u->dtype, m, a[1], a[0]) : NULL;
    break;
  case TKC_OP_WHERE: {
    const char *mt = vec_type(cs, mask_scalar(s), n, mb, sizeof mb);
    if (mt && !(m = direct_mask(cs, u, u->src[0], mask_scalar(s), 0)) && !cs->failed) m = xfmt(cs, "(-__builtin_convertvector(%s,%s))", a[0], mt);
    r = m ? vec_select(cs, u->dtype, m, a[1], a[2]) : NULL;
    break;
  }
  case TKC_OP_RECIP: return xfmt(cs, "(%s/%s)", s == TKC_FLOAT64 ? "1.0" : "1.0f", a[0]); /* 1/x as the scalar form */
  case TKC_OP_CAST:
    if (s == TKC_FLOAT16 || u->src[0]->dtype.scalar == TKC_FLOAT16) return half_cast(cs, s == TKC_FLOAT32, n, a[0]);
    if (s == TKC_BOOL) return xfmt(cs, "(__builtin_convertvector((%s!=0),%s)&1)", a[0], t); /* nonzero (and NaN) is true */
    return xfmt(cs, "__builtin_convertvector(%s,%s)", a[0], t);
  case TKC_OP_BITCAST: return xfmt(cs, "((%s)%s)", t, a[0]);
  case TKC_OP_DOT4: return xfmt(cs, "tkc_dot4_%s(%s,%s)", t, a[0], a[1]);
  case TKC_OP_MULACC: {
    vecty *v = vec_entry(cs, s, n);
    if (!v) return NULL;
    v->fma = true;
    return xfmt(cs, "tkc_fma_%s(%s,%s,%s)", t, a[0], a[1], a[2]);
  }
  default: return tkc_cs_op(cs, op, a);
  }
  tkc_free(m);
  return r;
}

/* ---------------------------------------------------------------- rules (what C renders its own way) */

/* vector BITCAST where the lane counts differ (e.g. float4 -> half8): a union of the two vector types */
static int rule_bitcast(tkc_cs *cs, size_t i, int *depth) {
  const tkc_uop *u = cs->uops[i];
  if (u->nsrc != 1 || u->dtype.space || u->src[0]->dtype.space || u->dtype.count == u->src[0]->dtype.count) return TKC_CS_BASE;
  tkc_dt f = u->src[0]->dtype, t = u->dtype;
  if (f.scalar == TKC_BFLOAT16 || t.scalar == TKC_BFLOAT16 || f.scalar == TKC_BOOL || t.scalar == TKC_BOOL ||
      tkc_dt_itemsize(f) != tkc_dt_itemsize(t) || !tkc_render_is_pow2(f.count) || !tkc_render_is_pow2(t.count))
    return FAIL(cs, u, "vector BITCAST");
  char fb[48], tb[48];
  const char *x = R(cs, u, u->src[0]);
  if (!x || !type_of(cs, u, f, fb, sizeof fb) || !type_of(cs, u, t, tb, sizeof tb)) return TKC_CS_FAIL;
  char *e = xfmt(cs, "((union { %s a; %s b; }){.a = %s}).b", fb, tb, x);
  return tkc_cs_bind(cs, i, e, tkc_cs_inline(cs, i), TKC_CS_CAST, *depth);
}

/* a pointer CAST to a vector accessed lane by lane keeps the scalar pointer */
static int rule_cast(tkc_cs *cs, size_t i, int *depth) {
  (void)depth;
  const tkc_uop *u = cs->uops[i];
  if (u->nsrc != 1 || !u->dtype.space || !u->src[0]->dtype.space || !lanewise_mem(tkc_dt_base(u->dtype))) return TKC_CS_BASE;
  const char *x = R(cs, u, u->src[0]);
  return x && (cs->r[i] = xfmt(cs, "%s", x)) ? TKC_CS_DONE : TKC_CS_FAIL;
}

/* the RANGE split across cores: this core's contiguous chunk of [start, end) */
static int rule_range(tkc_cs *cs, size_t i, int *depth) {
  const tkc_uop *u = cs->uops[i];
  if (u != CTX(cs)->split || u->nsrc != 2) return TKC_CS_BASE;
  char tb[64];
  const char *s = R(cs, u, u->src[0]), *en = R(cs, u, u->src[1]);
  if (!s || !en || !type_of(cs, u, u->dtype, tb, sizeof tb)) return TKC_CS_FAIL;
  char *nm = xfmt(cs, "ridx%d", cs->cnt[TKC_CS_RIDX]++);
  if (!(cs->r[i] = nm)) return TKC_CS_FAIL;
  tkc_cs_emit(cs, *depth, "const long long tkc_n_ = (long long)(%s) - (long long)(%s);", en, s);
  tkc_cs_emit(cs, *depth, "const %s tkc_lo_ = (%s)((long long)(%s) + tkc_n_ * tkc_core_ / tkc_ncores_);", tb, tb, s);
  tkc_cs_emit(cs, *depth, "const %s tkc_hi_ = (%s)((long long)(%s) + tkc_n_ * (tkc_core_ + 1) / tkc_ncores_);", tb, tb, s);
  tkc_cs_emit(cs, *depth, "for (%s %s = tkc_lo_; %s < tkc_hi_; %s++) {", tb, nm, nm, nm);
  (*depth)++;
  return TKC_CS_DONE;
}

static char *load_lane(tkc_cs *cs, const tkc_uop *u, int k) {
  const char *pe = R(cs, u, u->src[0]);
  if (!pe) return NULL;
  return tkc_dt_base(u->src[0]->dtype).scalar == TKC_BFLOAT16 ? xfmt(cs, "tkc_bf16_float(%s[%d])", pe, k) : xfmt(cs, "%s[%d]", pe, k);
}

/* LOAD: bfloat16 from its bits, lane-wise vectors as a literal, gated as (gate?v:alt) */
static int rule_load(tkc_cs *cs, size_t i, int *depth) {
  const tkc_uop *u = cs->uops[i];
  if (u->nsrc < 1) return FAIL(cs, u, "LOAD needs an address");
  const tkc_uop *p = u->src[0];
  if (!p->dtype.space) return FAIL(cs, u, "LOAD from a non-pointer");
  tkc_dt base = tkc_dt_base(p->dtype);
  const char *pe = R(cs, u, p);
  if (!pe) return TKC_CS_FAIL;
  char *v;
  if (lanewise_mem(base)) v = tkc_cs_vec_of(cs, u, base, base.count, load_lane);
  else v = base.scalar == TKC_BFLOAT16 ? xfmt(cs, "tkc_bf16_float(*%s)", pe) : xfmt(cs, "*%s", pe);
  if (v && u->nsrc >= 3) {
    const char *alt = R(cs, u, u->src[1]), *gate = R(cs, u, u->src[2]);
    char *g = alt && gate ? xfmt(cs, "(%s?%s:%s)", gate, v, alt) : NULL;
    tkc_free(v);
    v = g;
  }
  return tkc_cs_bind(cs, i, v, false, TKC_CS_VAL, *depth) ? TKC_CS_DONE : TKC_CS_FAIL;
}

static int rule_store(tkc_cs *cs, size_t i, int *depth) {
  const tkc_uop *u = cs->uops[i];
  if (u->nsrc < 2) return FAIL(cs, u, "STORE needs an address and a value");
  const tkc_uop *p = u->src[0];
  if (!p->dtype.space) return FAIL(cs, u, "STORE to a non-pointer");
  tkc_dt base = tkc_dt_base(p->dtype);
  const char *pe = R(cs, u, p), *ve = R(cs, u, u->src[1]);
  if (!pe || !ve) return TKC_CS_FAIL;
  bool bf = base.scalar == TKC_BFLOAT16;
  if (!lanewise_mem(base)) {
    tkc_cs_emit(cs, *depth, bf ? "*%s = tkc_bf16_bits(%s);" : "*%s = %s;", pe, ve);
    return TKC_CS_DONE;
  }
  for (int k = 0; k < base.count; k++) {
    char *lk = tkc_cs_lane(cs, u, u->src[1], k);
    if (!lk) return TKC_CS_FAIL;
    tkc_cs_emit(cs, *depth, bf ? "%s[%d] = tkc_bf16_bits(%s);" : "%s[%d] = %s;", pe, k, lk);
    tkc_free(lk);
  }
  return TKC_CS_DONE;
}

/* ---------------------------------------------------------------- names and the prepass */

/* the parameter name of DEFINE_VAR k: its own name when that is a usable C identifier */
static char *var_cname(tkc_cs *cs, size_t k) {
  const char *name = cs->vars[k]->arg.v.t[0].v.s;
  if (tkc_cs_name_usable(cs->lang, name)) {
    bool dup = false;
    for (size_t j = 0; j < k; j++)
      if (!strcmp(cs->r[tkc_cs_pos(cs, cs->vars[j])], name)) dup = true;
    if (!dup) return xfmt(cs, "%s", name);
  }
  tkc_sbuf b = {0};
  tkc_sbuf_puts(&b, "var_");
  for (const char *p = name; p && *p; p++) {
    char ch = *p;
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
    tkc_sbuf_printf(&b, "%c", ok ? ch : '_');
  }
  tkc_sbuf_printf(&b, "_%zu", k);
  char *s = tkc_sbuf_take(&b);
  return s ? s : tkc_cs_oom(cs);
}

/* notes half/bf16; values used twice by one expression: MAX, GEP, lane-wise stores */
static unsigned note(tkc_cs *cs, const tkc_uop *u) {
  rctx *c = CTX(cs);
  if (u->dtype.scalar == TKC_FLOAT16) c->need_half = true;
  if (u->dtype.scalar == TKC_BFLOAT16) c->need_bf16 = true;
  if (u->op == TKC_OP_DOT4) c->need_dot4 = true;
  if (u->op == TKC_OP_MAX || u->op == TKC_OP_GEP) return TKC_CS_DUP_ALL;
  if (u->op == TKC_OP_STORE && u->nsrc >= 2 && u->src[0]->dtype.space && lanewise_mem(tkc_dt_base(u->src[0]->dtype))) return TKC_CS_DUP_VEC;
  return 0;
}

/* C keywords and the names this renderer generates or declares */
static const char *const c_keywords[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
    "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
    "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while",
    "half", "asm", "typeof", "bool", "true", "false", NULL};
static const char *const c_reserved_prefixes[] = {"_", "tkc_", NULL};
static const char *const c_numbered[] = {"data", "ridx", "alu", "val", "cast", "acc", "gep", "bool", "char", "uchar", "short",
                                         "ushort", "int", "uint", "long", "ulong", "half", "float", "double", NULL};

static const tkc_cs_lang c_lang = {
    .who = "C",
    .vec_pre = "(", .vec_mid = "){", .vec_sep = ",", .vec_post = "}",
    .const_lanes = true,
    .keywords = c_keywords, .reserved_prefixes = c_reserved_prefixes, .numbered = c_numbered,
    .code_for_op = {
        [TKC_OP_ADD] = "($0+$1)", [TKC_OP_SUB] = "($0-$1)", [TKC_OP_MUL] = "($0*$1)", [TKC_OP_FDIV] = "($0/$1)",
        [TKC_OP_IDIV] = "($0/$1)", [TKC_OP_MOD] = "($0%$1)", [TKC_OP_MAX] = "($0<$1?$1:$0)", [TKC_OP_CMPLT] = "($0<$1)",
        [TKC_OP_CMPNE] = "($0!=$1)", [TKC_OP_WHERE] = "($0?$1:$2)", [TKC_OP_AND] = "($0&$1)", [TKC_OP_OR] = "($0|$1)",
        [TKC_OP_XOR] = "($0^$1)", [TKC_OP_SHL] = "($0<<$1)", [TKC_OP_SHR] = "($0>>$1)", [TKC_OP_NEG] = "(-$0)",
        [TKC_OP_RECIP] = "(1/$0)",
    },
    .rules = {[TKC_OP_BITCAST] = rule_bitcast, [TKC_OP_CAST] = rule_cast, [TKC_OP_RANGE] = rule_range,
              [TKC_OP_LOAD] = rule_load, [TKC_OP_STORE] = rule_store},
    .type = type_of, .const_str = const_str, .alu = alu_scalar, .cast = cast_scalar, .native_vector = native_vector_op,
    .var_name = var_cname, .note = note,
};

/* DOT4 (include/tkc/ops.def) per lane; the vector helpers, made per vector type, are one vpdpbusd
 * where the host has AVX-512 VNNI */
static const char c_dot4[] = "#if defined(__x86_64__) && defined(__AVX512VNNI__)\n#include <immintrin.h>\n#endif\n"
                             "static inline int tkc_dot4(int a, int b) {\n  int r = 0;\n"
                             "  for (int k = 0; k < 4; k++) r += (int)((unsigned)a >> 8 * k & 255u) * (int)(signed char)((unsigned)b >> 8 * k & 255u);\n"
                             "  return r;\n}\n";

/* ---------------------------------------------------------------- the renderer */

/* a vector op C's vector extensions cannot do (half, bfloat16, odd widths, IDIV, math functions ...)
 * -> VECTORIZE of its lane ops */
static tkc_uop *c_lanes(tkc_graph *g, const tkc_match *m, void *ctx) {
  const tkc_uop *u = tkc_match_root(m);
  return (void)ctx, u->dtype.count > 1 && !native_vector(u) ? tkc_target_scalarize(g, u) : NULL;
}
static const tkc_rule c_rules[] = {{"x:ALU|CAST|BITCAST", c_lanes}};

/* C lacks defined x/0 and INT_MIN/-1 (both trap), shifts past the width, float -> int casts out of
 * range, and vector forms of some ops */
static const tkc_matcher *c_matcher(void) {
  static tkc_matcher *_Atomic own, *_Atomic all;
  const tkc_matcher *pm = tkc_matcher_static(&own, c_rules, TKC_COUNTOF(c_rules));
  return pm ? tkc_target_matcher(&all, pm, TKC_TARGET_GUARD_DIV_ZERO | TKC_TARGET_GUARD_DIV_MINUS1 | TKC_TARGET_GUARD_SHIFT | TKC_TARGET_GUARD_FTOI |
                                                     TKC_TARGET_LANE_GEPS) : NULL;
}

static char *render_c(const tkc_renderer *self, const char *name, tkc_uop *const *uops, size_t n) {
  (void)self;
  if (!name) name = "kernel";
  if (!tkc_render_is_ident(name)) return tkc_err_null(TKC_EINVAL, "C renderer: kernel name \"%s\" is not a C identifier", name);
  if (n && !uops) return tkc_err_null(TKC_EINVAL, "C renderer: NULL uops");
  rctx c;
  memset(&c, 0, sizeof c);
  tkc_cs *cs = &c.cs;
  char *out = NULL;
  if (tkc_cs_init(cs, &c_lang, uops, n) != TKC_OK || !tkc_cs_prepass(cs) || !(c.index_math = index_math_of(cs))) goto done;
  c.split = tkc_render_pick_split(cs->uops, cs->n, cs->pos);
  if (!c.split) tkc_cs_emit(cs, 1, "if (tkc_core_ != 0) return; /* no output loop to split: core 0 does it all */");
  if (!tkc_cs_loop(cs)) goto done;

  tkc_sbuf o = {0};
  if (c.need_half) tkc_sbuf_puts(&o, tkc_cs_c_half);
  if (c.need_bf16) tkc_sbuf_puts(&o, tkc_cs_c_bf16);
  if (c.need_dot4) tkc_sbuf_puts(&o, c_dot4);
  for (size_t k = 0; k < c.nvecs; k++) {
    int s = c.vecs[k].scalar, cnt = c.vecs[k].count;
    unsigned lanes = 1;
    while (lanes < (unsigned)cnt) lanes <<= 1;
    tkc_sbuf_printf(&o, "typedef %s %s%d __attribute__((aligned(%d),vector_size(%u)));\n", s == TKC_BOOL ? "unsigned char" : reg_name[s], vec_name[s], cnt,
                    (int)reg_size(s), lanes * (unsigned)reg_size(s));
    if (c.need_dot4 && s == TKC_INT32) { /* lane by lane, or one vpdpbusd where the host has it */
      bool vnni = cnt == 4 || cnt == 8 || cnt == 16;
      const char *bits = cnt == 16 ? "512" : cnt == 8 ? "256" : "", *vt = cnt == 16 ? "__m512i" : cnt == 8 ? "__m256i" : "__m128i";
      tkc_sbuf_printf(&o, "static inline int%d tkc_dot4_int%d(int%d a, int%d b) {\n", cnt, cnt, cnt, cnt);
      if (vnni)
        tkc_sbuf_printf(&o, "#if defined(__AVX512VNNI__)%s\n  return (int%d)_mm%s_dpbusd_epi32(_mm%s_setzero_si%s(),(%s)a,(%s)b);\n#else\n",
                        cnt == 16 ? "" : " && defined(__AVX512VL__)", cnt, bits, bits, cnt == 4 ? "128" : bits, vt, vt);
      tkc_sbuf_printf(&o, "  int%d r;\n  for (int i = 0; i < %d; i++) r[i] = tkc_dot4(a[i], b[i]);\n  return r;\n%s}\n", cnt, cnt, vnni ? "#endif\n" : "");
    }
    if (c.vecs[k].fma) { /* one fused multiply-add per lane, as one vector FMA: clang contracts a*b+c
                            (exactly one rounding where the target has FMA), else fma per lane */
      const char *t = vec_name[s];
      tkc_sbuf_printf(&o, "static inline %s%d tkc_fma_%s%d(%s%d a, %s%d b, %s%d c) {\n"
                          "#if defined(__clang__) && defined(__FMA__)\n#pragma clang fp contract(fast)\n  return a * b + c;\n#else\n"
                          "  %s%d r;\n  for (int i = 0; i < %d; i++) r[i] = __builtin_fma%s(a[i], b[i], c[i]);\n  return r;\n#endif\n}\n",
                      t, cnt, t, cnt, t, cnt, t, cnt, t, cnt, t, cnt, cnt, s == TKC_FLOAT32 ? "f" : "");
    }
  }
  for (size_t k = 0; k < c.nvecs; k++) { /* half_cast's helpers (after every typedef: they name two) */
    int w = c.vecs[k].count;
    if (!c.vecs[k].h2f && !c.vecs[k].f2h) continue;
    const char *guard = w == 16 ? "defined(__AVX512F__)" : "defined(__F16C__)";
    bool fast = w == 4 || w == 8 || w == 16;
    tkc_sbuf_printf(&o, "#if defined(__x86_64__) && %s\n#include <immintrin.h>\n#endif\n", guard);
    if (c.vecs[k].h2f) {
      tkc_sbuf_printf(&o, "static inline float%d tkc_h2f_%d(half%d a) {\n", w, w, w);
      if (fast && w == 4) tkc_sbuf_printf(&o, "#if defined(__x86_64__) && %s\n  __m128i b;\n  __builtin_memcpy(&b, &a, 8);\n  return (float4)_mm_cvtph_ps(b);\n#else\n", guard);
      else if (fast) tkc_sbuf_printf(&o, "#if defined(__x86_64__) && %s\n  return (float%d)_mm%s_cvtph_ps((__m%di)a);\n#else\n", guard, w, w == 16 ? "512" : "256", w * 16);
      tkc_sbuf_printf(&o, "  float%d r;\n  for (int i = 0; i < %d; i++) r[i] = (float)a[i];\n  return r;\n%s}\n", w, w, fast ? "#endif\n" : "");
    }
    if (c.vecs[k].f2h) { /* (rounding 0: to nearest even, as the scalar conversion) */
      tkc_sbuf_printf(&o, "static inline half%d tkc_f2h_%d(float%d a) {\n", w, w, w);
      if (fast && w == 4) tkc_sbuf_printf(&o, "#if defined(__x86_64__) && %s\n  __m128i b = _mm_cvtps_ph((__m128)a, 0);\n  half4 r;\n  __builtin_memcpy(&r, &b, 8);\n  return r;\n#else\n", guard);
      else if (fast) tkc_sbuf_printf(&o, "#if defined(__x86_64__) && %s\n  return (half%d)_mm%s_cvtps_ph((__m%d)a, 0);\n#else\n", guard, w, w == 16 ? "512" : "256", w * 32);
      tkc_sbuf_printf(&o, "  half%d r;\n  for (int i = 0; i < %d; i++) r[i] = (half)a[i];\n  return r;\n%s}\n", w, w, fast ? "#endif\n" : "");
    }
  }
  /* parameters: buffers by number (gaps filled), then variables by name, then the launch's core
   * number and core count (see tkc_render_pick_split) */
  tkc_sbuf_printf(&o, "void %s(", name);
  int np = 0;
  int64_t next = 0;
  for (size_t k = 0; k < cs->nbufs; k++) {
    for (; next < cs->bufs[k].num; next++) tkc_sbuf_printf(&o, "%svoid* data%lld", np++ ? ", " : "", (long long)next);
    char tb[64];
    if (!type_of(cs, NULL, cs->bufs[k].dt, tb, sizeof tb)) { tkc_free(o.s); tkc_cs_unsupported(cs, uops[0], "buffer dtype"); goto done; }
    tkc_sbuf_printf(&o, "%s%s restrict data%lld", np++ ? ", " : "", tb, (long long)cs->bufs[k].num);
    next = cs->bufs[k].num + 1;
  }
  for (size_t k = 0; k < cs->nvars; k++) tkc_sbuf_printf(&o, "%sconst int %s", np++ ? ", " : "", cs->r[tkc_cs_pos(cs, cs->vars_sorted[k])]);
  tkc_sbuf_printf(&o, "%sconst int tkc_core_, const int tkc_ncores_", np ? ", " : "");
  tkc_sbuf_puts(&o, ") {\n");
  if (cs->body.s) tkc_sbuf_puts(&o, cs->body.s);
  tkc_sbuf_puts(&o, "}\n");
  out = tkc_sbuf_take(&o);
  if (!out) cs->failed = true;

done:
  tkc_free(c.vecs);
  tkc_free(c.index_math);
  tkc_cs_free(cs);
  if (cs->failed) {
    tkc_free(out);
    return NULL;
  }
  return out;
}

const tkc_renderer tkc_renderer_c = {
    .name = "C",
    .device = "CPU",
    .has_local = false,
    .has_shared = false,
    .supports_float4 = true,
    .global_max = {0, 0, 0},
    .local_max = {0, 0, 0},
    .shared_max = 0,
    .extra_matcher = c_matcher,
    .render = render_c,
};
