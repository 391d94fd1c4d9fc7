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
 *    whatever the compiler's excess-precision mode.
 *  - bfloat16 lives in memory as `unsigned short` (its bit pattern) and in registers as a float that
 *    always holds a bfloat16 value: loads shift the bits up, stores shift them down, and every bf16
 *    ALU result / cast goes through tkc_bf16_round (to float, then to nearest even as numpy/torch:
 *    NaN stays NaN, overflow gives inf), computed in double like tkc_alu_eval.
 *  - results of bool / 8- and 16-bit integer ALU ops are cast back to their type (C promotes them to
 *    int), so inlined expressions wrap like INTERP; the CPU device compiles with -fwrapv.
 *  - integer IDIV/MOD by a divisor that range analysis cannot prove nonzero (and not -1 when signed)
 *    is guarded: x/0 = x%0 = 0 and INT_MIN/-1 wraps, as tkc_alu_eval, instead of trapping.
 *  - vector values use GCC/clang vector extensions (`typedef float float4 __attribute__((aligned(4),
 *    vector_size(16)))`). Alignment is the element's: a vector access at any element offset is valid.
 *    Vector ALU ops, casts and bool vectors are rendered lane by lane: `(float4){a[0]+b[0], ...}`.
 *    bfloat16 and non-power-of-two vectors are loaded/stored lane by lane.
 *  - bitcasts go through a union compound literal (no strict-aliasing UB).
 * Single-use ALU/CAST/BITCAST/VECTORIZE values are inlined into their user as tinygrad does
 * (CONST/GEP/INDEX always are); loads, accumulators and shared values get names
 * (val0, alu0, cast0, acc0, ridx0). Values used more than once by one expression (MAX, guarded
 * IDIV/MOD, lane-wise vector ops) are always named so nothing is evaluated twice. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/common.h"
#include "render/cstyle.h"
#include "render/renderers.h"

/* ---------------------------------------------------------------- dtype names */

/* the C type of a value held in a variable (bfloat16 is held as a float) */
static const char *const reg_name[TKC_NDTYPES] = {
    [TKC_BOOL] = "_Bool",        [TKC_INT8] = "signed char",          [TKC_UINT8] = "unsigned char",
    [TKC_INT16] = "short",       [TKC_UINT16] = "unsigned short",     [TKC_INT32] = "int",
    [TKC_UINT32] = "unsigned int", [TKC_INT64] = "long long",         [TKC_UINT64] = "unsigned long long",
    [TKC_FLOAT16] = "half",      [TKC_BFLOAT16] = "float",            [TKC_FLOAT32] = "float",
    [TKC_FLOAT64] = "double",    [TKC_VOID] = "void",
};
/* the C type of an element in memory (bfloat16 is stored as its bits) */
static const char *const mem_name[TKC_NDTYPES] = {
    [TKC_BOOL] = "_Bool",        [TKC_INT8] = "signed char",          [TKC_UINT8] = "unsigned char",
    [TKC_INT16] = "short",       [TKC_UINT16] = "unsigned short",     [TKC_INT32] = "int",
    [TKC_UINT32] = "unsigned int", [TKC_INT64] = "long long",         [TKC_UINT64] = "unsigned long long",
    [TKC_FLOAT16] = "half",      [TKC_BFLOAT16] = "unsigned short",   [TKC_FLOAT32] = "float",
    [TKC_FLOAT64] = "double",    [TKC_VOID] = "void",
};
/* vector typedef names (name + count) and their element types */
static const char *const vec_name[TKC_NDTYPES] = {
    [TKC_BOOL] = "bool",   [TKC_INT8] = "char",   [TKC_UINT8] = "uchar",  [TKC_INT16] = "short",
    [TKC_UINT16] = "ushort", [TKC_INT32] = "int", [TKC_UINT32] = "uint",  [TKC_INT64] = "long",
    [TKC_UINT64] = "ulong", [TKC_FLOAT16] = "half", [TKC_BFLOAT16] = "float", [TKC_FLOAT32] = "float",
    [TKC_FLOAT64] = "double", [TKC_VOID] = NULL,
};
static const char *const vec_elem[TKC_NDTYPES] = {
    [TKC_BOOL] = "unsigned char", [TKC_INT8] = "signed char", [TKC_UINT8] = "unsigned char",
    [TKC_INT16] = "short",        [TKC_UINT16] = "unsigned short", [TKC_INT32] = "int",
    [TKC_UINT32] = "unsigned int", [TKC_INT64] = "long long",  [TKC_UINT64] = "unsigned long long",
    [TKC_FLOAT16] = "half",       [TKC_BFLOAT16] = "float",    [TKC_FLOAT32] = "float",
    [TKC_FLOAT64] = "double",     [TKC_VOID] = NULL,
};
static const unsigned char vec_elem_size[TKC_NDTYPES] = {
    [TKC_BOOL] = 1, [TKC_INT8] = 1, [TKC_UINT8] = 1, [TKC_INT16] = 2, [TKC_UINT16] = 2, [TKC_INT32] = 4,
    [TKC_UINT32] = 4, [TKC_INT64] = 8, [TKC_UINT64] = 8, [TKC_FLOAT16] = 2, [TKC_BFLOAT16] = 4,
    [TKC_FLOAT32] = 4, [TKC_FLOAT64] = 8, [TKC_VOID] = 0,
};

static bool is_pow2(unsigned x) { return x && !(x & (x - 1)); }
static bool sc_float(int s) { return s == TKC_FLOAT16 || s == TKC_BFLOAT16 || s == TKC_FLOAT32 || s == TKC_FLOAT64; }
static bool sc_int(int s) { return s >= TKC_INT8 && s <= TKC_UINT64; }
static bool sc_unsigned(int s) { return s == TKC_UINT8 || s == TKC_UINT16 || s == TKC_UINT32 || s == TKC_UINT64; }
/* types C promotes to int in arithmetic (results must be cast back) */
static bool sc_narrow(int s) { return s == TKC_BOOL || (s >= TKC_INT8 && s <= TKC_UINT16); }
/* vector memory accesses that are done lane by lane */
static bool lanewise_mem(tkc_dt base) { return base.count > 1 && (base.scalar == TKC_BFLOAT16 || !is_pow2(base.count)); }

/* ---------------------------------------------------------------- render context */

enum { PFX_RIDX = TKC_CS_RIDX, PFX_ALU = TKC_CS_ALU, PFX_VAL = TKC_CS_VAL, PFX_CAST = TKC_CS_CAST, PFX_ACC = TKC_CS_ACC, PFX_GEP = TKC_CS_GEP };

typedef struct vecty {
  uint8_t scalar; /* bfloat16 registers use float vectors: stored as FLOAT32 */
  uint16_t count;
  bool fma;       /* the kernel uses its tkc_fma_<type> helper */
} vecty;

typedef struct bufarg {
  int64_t num;
  tkc_dt dt;
} bufarg;

typedef struct vararg {
  const char *name; /* the DEFINE_VAR's name (sort key) */
  const char *cname; /* the parameter name (points into r[]) */
} vararg;

typedef struct rctx {
  tkc_cs cs; /* the shared loop's state: uops, their texts and use counts, the body */
  vecty *vecs;
  size_t nvecs, capvecs;
  bufarg *bufs;
  size_t nbufs;
  vararg *vars;
  size_t nvars;
  bool need_half, need_bf16;
  const tkc_uop *split; /* the RANGE split across cores (NULL: core 0 does everything) */
} rctx;

#define fail_oom(c) tkc_cs_oom(&(c)->cs)
#define fail_unsupported(c, u, why) tkc_cs_unsupported(&(c)->cs, (u), (why))
#define posof(c, u) tkc_cs_pos(&(c)->cs, (u))
#define R(c, user, s) tkc_cs_ref(&(c)->cs, (user), (s)) /* the rendered text of a source */
#define emit(c, depth, ...) tkc_cs_emit(&(c)->cs, (depth), __VA_ARGS__)
/* a malloc'ed formatted string; NULL (and the error recorded) on OOM */
#define xfmt(c, ...) tkc_render_fmt(&(c)->cs.failed, "C", __VA_ARGS__)

/* registers a vector typedef; returns its name in buf */
static const char *vec_type(rctx *c, int scalar, int count, char *buf, size_t n) {
  if (scalar == TKC_BFLOAT16) scalar = TKC_FLOAT32;
  snprintf(buf, n, "%s%d", vec_name[scalar], count);
  for (size_t i = 0; i < c->nvecs; i++)
    if (c->vecs[i].scalar == scalar && c->vecs[i].count == count) return buf;
  if (c->nvecs == c->capvecs) {
    size_t cap = c->capvecs ? c->capvecs * 2 : 8;
    vecty *v = tkc_realloc(c->vecs, cap * sizeof *v);
    if (!v) return fail_oom(c);
    c->vecs = v;
    c->capvecs = cap;
  }
  c->vecs[c->nvecs].scalar = (uint8_t)scalar;
  c->vecs[c->nvecs].count = (uint16_t)count;
  c->vecs[c->nvecs].fma = false;
  c->nvecs++;
  return buf;
}

/* the C type of a value (registers) or pointer; NULL for what has none */
static const char *type_of(rctx *c, tkc_dt dt, char *buf, size_t n) {
  if (dt.scalar > TKC_VOID) return NULL;
  if (dt.space) {
    if (dt.pcount > 1) return NULL;
    char eb[48];
    const char *e = mem_name[dt.scalar];
    /* vector pointers; bfloat16 / odd widths are accessed lane by lane through the scalar pointer */
    if (dt.count > 1 && dt.scalar != TKC_VOID && !lanewise_mem(dt) && !(e = vec_type(c, dt.scalar, dt.count, eb, sizeof eb)))
      return NULL;
    snprintf(buf, n, "%s*", e);
    return buf;
  }
  if (dt.scalar == TKC_VOID) return NULL;
  if (dt.count > 1) return vec_type(c, dt.scalar, dt.count, buf, n);
  snprintf(buf, n, "%s", reg_name[dt.scalar]);
  return buf;
}

/* ---------------------------------------------------------------- constants */

/* makes a printed number C: '.' as the decimal point whatever the locale, and a '.0' when it has
 * neither a point nor an exponent (so an 'f' suffix is valid) */
static void c_number(char *s, size_t n) {
  for (char *p = s; *p; p++)
    if (*p == ',') *p = '.';
  if (!strpbrk(s, ".eE")) {
    size_t l = strlen(s);
    if (l + 3 <= n) memcpy(s + l, ".0", 3);
  }
}

/* the shortest decimal that reads back as the same float (f32) or double */
static void fmt_real(double v, bool f32, char *out, size_t n) {
  for (int p = 1; p <= 17; p++) {
    snprintf(out, n, "%.*g", p, v);
    c_number(out, n);
    if (f32 ? strtof(out, NULL) == (float)v : strtod(out, NULL) == v) return;
  }
}

/* a scalar constant of dtype s holding the value of arg a */
static char *const_str(rctx *c, int s, const tkc_arg *a) {
  tkc_value v = tkc_value_from_arg(a, (tkc_dtype)s);
  char num[80];
  switch (s) {
  case TKC_BOOL: return xfmt(c, "%s", v.i ? "1" : "0");
  case TKC_INT8: case TKC_INT16:
    return v.i < 0 ? xfmt(c, "((%s)(%lld))", reg_name[s], (long long)v.i) : xfmt(c, "((%s)%lld)", reg_name[s], (long long)v.i);
  case TKC_UINT8: case TKC_UINT16: return xfmt(c, "((%s)%lluu)", reg_name[s], (unsigned long long)v.u);
  case TKC_INT32:
    if (v.i == INT32_MIN) return xfmt(c, "(-2147483647-1)");
    return v.i < 0 ? xfmt(c, "(%lld)", (long long)v.i) : xfmt(c, "%lld", (long long)v.i);
  case TKC_UINT32: return xfmt(c, "%lluu", (unsigned long long)(uint32_t)v.u);
  case TKC_INT64:
    if (v.i == INT64_MIN) return xfmt(c, "(-9223372036854775807ll-1)");
    return v.i < 0 ? xfmt(c, "(%lldll)", (long long)v.i) : xfmt(c, "%lldll", (long long)v.i);
  case TKC_UINT64: return xfmt(c, "%lluull", (unsigned long long)v.u);
  case TKC_FLOAT16: case TKC_BFLOAT16: case TKC_FLOAT32: case TKC_FLOAT64: {
    bool dbl = s == TKC_FLOAT64;
    double f = v.f;
    if (f != f) snprintf(num, sizeof num, "%s", dbl ? "__builtin_nan(\"\")" : "__builtin_nanf(\"\")");
    else if (f == 1.0 / 0.0) snprintf(num, sizeof num, "%s", dbl ? "__builtin_inf()" : "__builtin_inff()");
    else if (f == -1.0 / 0.0) snprintf(num, sizeof num, "%s", dbl ? "(-__builtin_inf())" : "(-__builtin_inff())");
    else {
      char t[64];
      fmt_real(f, !dbl, t, sizeof t);
      snprintf(num, sizeof num, t[0] == '-' ? "(%s%s)" : "%s%s", t, dbl ? "" : "f");
    }
    if (s == TKC_FLOAT16) return xfmt(c, "((half)%s)", num);
    return xfmt(c, "%s", num);
  }
  default: return NULL;
  }
}

/* ---------------------------------------------------------------- expressions */

static bool op_is_alu(int op) { return (tkc_op_flags((tkc_op)op) & TKC_F_ALU) != 0; }

/* true when the integer divisor d can be used as is (never 0, and never -1 for signed types) */
static bool divisor_safe(const tkc_uop *d, int s) {
  if (!d || d->dtype.space || d->dtype.count > 1) return false;
  if (d->op == TKC_OP_CONST && d->arg.kind == TKC_ARG_INT) {
    int64_t v = d->arg.v.i;
    return v != 0 && (sc_unsigned(s) || v != -1);
  }
  if (sc_unsigned(s)) return d->vmin > 0;
  return d->vmin > 0 || d->vmax < -1;
}

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

/* One scalar ALU op: dtype s for the result, operands a[] (already parenthesised or atoms), the
 * divisor UOp d for IDIV/MOD (NULL: unknown). NULL + error when C cannot express it. */
static char *alu_scalar(rctx *c, const tkc_uop *u, int op, int s, const char *const *a, const tkc_uop *d) {
  bool isf = sc_float(s), isi = sc_int(s) || s == TKC_BOOL;
  bool bf = s == TKC_BFLOAT16;
  /* bfloat16 arithmetic is done in double, like tkc_alu_eval, then truncated */
  const char *dc = bf ? "(double)" : "";
  char *e = NULL;
  switch (op) {
  case TKC_OP_ADD: e = xfmt(c, "(%s%s+%s)", dc, a[0], a[1]); break;
  case TKC_OP_SUB: e = xfmt(c, "(%s%s-%s)", dc, a[0], a[1]); break;
  case TKC_OP_MUL: e = xfmt(c, "(%s%s*%s)", dc, a[0], a[1]); break;
  case TKC_OP_MULACC: /* one fused multiply-add; half and bfloat16 through float, as tkc_alu_eval */
    e = s == TKC_FLOAT64 ? xfmt(c, "__builtin_fma(%s,%s,%s)", a[0], a[1], a[2])
        : isf ? xfmt(c, "__builtin_fmaf((float)%s,(float)%s,(float)%s)", a[0], a[1], a[2])
              : xfmt(c, "((%s*%s)+%s)", a[0], a[1], a[2]);
    break;
  case TKC_OP_FDIV:
    if (!isf) return fail_unsupported(c, u, "FDIV on an integer type");
    e = xfmt(c, "(%s%s/%s)", dc, a[0], a[1]);
    break;
  case TKC_OP_IDIV: case TKC_OP_MOD: {
    if (!isi) return fail_unsupported(c, u, "IDIV/MOD need an integer type");
    const char *o = op == TKC_OP_IDIV ? "/" : "%";
    if (divisor_safe(d, s)) e = xfmt(c, "(%s%s%s)", a[0], o, a[1]);
    else if (sc_unsigned(s) || s == TKC_BOOL) e = xfmt(c, "(%s==0?0:(%s%s%s))", a[1], a[0], o, a[1]);
    else if (op == TKC_OP_IDIV) e = xfmt(c, "(%s==0?0:%s==-1?(-%s):(%s/%s))", a[1], a[1], a[0], a[0], a[1]);
    else e = xfmt(c, "((%s==0||%s==-1)?0:(%s%%%s))", a[1], a[1], a[0], a[1]);
    break;
  }
  case TKC_OP_MAX: e = xfmt(c, "(%s<%s?%s:%s)", a[0], a[1], a[1], a[0]); break;
  case TKC_OP_CMPLT: return xfmt(c, "(%s<%s)", a[0], a[1]);
  case TKC_OP_CMPNE: return xfmt(c, "(%s!=%s)", a[0], a[1]);
  case TKC_OP_WHERE: e = xfmt(c, "(%s?%s:%s)", a[0], a[1], a[2]); break;
  case TKC_OP_AND: case TKC_OP_OR: case TKC_OP_XOR: case TKC_OP_SHL: case TKC_OP_SHR: {
    if (!isi) return fail_unsupported(c, u, "bitwise op on a float type");
    const char *o = op == TKC_OP_AND ? "&" : op == TKC_OP_OR ? "|" : op == TKC_OP_XOR ? "^" : op == TKC_OP_SHL ? "<<" : ">>";
    e = xfmt(c, "(%s%s%s)", a[0], o, a[1]);
    break;
  }
  case TKC_OP_NEG: e = xfmt(c, "(-%s)", a[0]); break;
  case TKC_OP_RECIP:
    if (!isf) return fail_unsupported(c, u, "RECIP needs a float type");
    e = xfmt(c, "(1/%s%s)", dc, a[0]);
    break;
  case TKC_OP_SQRT: case TKC_OP_EXP2: case TKC_OP_LOG2: case TKC_OP_SIN:
    if (!isf) return fail_unsupported(c, u, "transcendental op needs a float type");
    e = xfmt(c, "%s(%s)", math_fn(op, s == TKC_FLOAT64 || bf), a[0]);
    break;
  case TKC_OP_POW: /* in double for every float type, like INTERP: powf is not always correctly rounded */
    if (!isf) return fail_unsupported(c, u, "POW needs a float type");
    e = xfmt(c, s == TKC_FLOAT32 ? "((float)__builtin_pow((double)%s,(double)%s))" : "__builtin_pow((double)%s,(double)%s)", a[0], a[1]);
    break;
  default: return fail_unsupported(c, u, NULL);
  }
  if (!e) return NULL;
  /* round / wrap the result back to its type */
  bool exact = op == TKC_OP_WHERE || op == TKC_OP_MAX;
  char *w = NULL;
  if (s == TKC_FLOAT16 && !exact) w = xfmt(c, "((half)%s)", e);
  else if (bf && !exact && op != TKC_OP_NEG) w = xfmt(c, "tkc_bf16_round(%s)", e);
  else if (sc_narrow(s) && !exact && op != TKC_OP_AND && op != TKC_OP_OR && op != TKC_OP_XOR)
    w = xfmt(c, "((%s)%s)", reg_name[s], e);
  else return e;
  tkc_free(e);
  return w;
}

/* the bit pattern (as unsigned short) of a 16-bit value x of scalar type s */
static char *bits16(rctx *c, int s, const char *x) {
  if (s == TKC_BFLOAT16) return xfmt(c, "tkc_bf16_bits(%s)", x);
  if (s == TKC_FLOAT16) return xfmt(c, "((union { half a; unsigned short b; }){.a = %s}).b", x);
  return xfmt(c, "((unsigned short)%s)", x);
}

/* one scalar CAST (bitcast=false) or BITCAST of x from scalar type f to t */
static char *cast_scalar(rctx *c, const tkc_uop *u, int f, int t, const char *x, bool bitcast) {
  if (f == t) return xfmt(c, "%s", x);
  if (!bitcast) {
    if (t == TKC_BOOL) return xfmt(c, "((_Bool)%s)", x);
    if (t == TKC_BFLOAT16) {
      if (f == TKC_BOOL || sc_int(f)) return xfmt(c, "tkc_bf16_round((float)%s)", x); /* int -> float -> bf16 as INTERP */
      return xfmt(c, "tkc_bf16_round(%s)", x);
    }
    if (f == TKC_BFLOAT16 && t == TKC_FLOAT32) return xfmt(c, "%s", x); /* already a float */
    return xfmt(c, "((%s)%s)", reg_name[t], x);
  }
  if (vec_elem_size[f] == 0 || tkc_dtype_size((tkc_dtype)f) != tkc_dtype_size((tkc_dtype)t))
    return fail_unsupported(c, u, "BITCAST between types of different sizes");
  if (t == TKC_BOOL) return xfmt(c, "((_Bool)%s)", x);
  if (f == TKC_BFLOAT16 || t == TKC_BFLOAT16) {
    char *b = bits16(c, f, x), *r;
    if (!b) return NULL;
    if (t == TKC_BFLOAT16) r = xfmt(c, "tkc_bf16_float(%s)", b);
    else if (t == TKC_FLOAT16) r = xfmt(c, "((union { unsigned short a; half b; }){.a = %s}).b", b);
    else r = xfmt(c, "((%s)%s)", reg_name[t], b);
    tkc_free(b);
    return r;
  }
  return xfmt(c, "((union { %s a; %s b; }){.a = %s}).b", reg_name[f], reg_name[t], x);
}

/* lane i of source s of a vector op (a scalar source is the same for every lane) */
static char *lane(rctx *c, const tkc_uop *user, const tkc_uop *s, int i) {
  if (s->dtype.count <= 1 || s->dtype.space) {
    const char *x = R(c, user, s);
    return x ? xfmt(c, "%s", x) : NULL;
  }
  if (s->op == TKC_OP_CONST) return const_str(c, s->dtype.scalar, &s->arg);
  const char *x = R(c, user, s);
  return x ? xfmt(c, "%s[%d]", x, i) : NULL;
}

/* joins n lane expressions into "(T){l0,l1,...}" (frees them) */
static char *vec_literal(rctx *c, tkc_dt dt, char **l, int n) {
  char tb[48];
  tkc_sbuf b = {0};
  const char *t = type_of(c, dt, tb, sizeof tb);
  if (t) {
    tkc_sbuf_printf(&b, "(%s){", t);
    for (int i = 0; i < n; i++) tkc_sbuf_printf(&b, "%s%s", i ? "," : "", l[i]);
    tkc_sbuf_puts(&b, "}");
  }
  for (int i = 0; i < n; i++) tkc_free(l[i]);
  if (!t) { tkc_free(b.s); return NULL; }
  if (b.oom) { tkc_free(b.s); return fail_oom(c); }
  char *s = tkc_sbuf_take(&b);
  return s ? s : fail_oom(c);
}

/* float32/float64 vector arithmetic with the C operators (and the per-type fma helper): NULL when
 * u is not such an op (it is then rendered lane by lane) */
/* the element types that vector operators, comparisons and __builtin_convertvector handle as C
 * does per lane (half and bfloat16 round per op and stay lane by lane) */
static bool native_elem(int s) { return sc_int(s) || s == TKC_FLOAT32 || s == TKC_FLOAT64; }

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
static char *vec_select(rctx *c, tkc_dt dt, const char *m, const char *a, const char *b) {
  char tb[48], mb[48];
  const char *t = vec_type(c, dt.scalar, dt.count, tb, sizeof tb), *mt = vec_type(c, mask_scalar(dt.scalar), dt.count, mb, sizeof mb);
  if (!t || !mt) return NULL;
  return xfmt(c, "((%s)((((%s)%s)&((%s)%s))|(((%s)%s)&~((%s)%s))))", t, mt, a, mt, m, mt, b, mt, m);
}

/* a vector op as one C vector expression where its lanes mean what the scalar ops mean: wrapping
 * integer arithmetic (clang and gcc vectors don't promote and don't treat overflow as UB), IEEE float
 * ops, comparisons as 0/1 bool lanes, WHERE/MAX as masks, CAST as __builtin_convertvector, BITCAST
 * between equal lane sizes as a vector cast. NULL: render it lane by lane. */
static char *native_vector_op(rctx *c, const tkc_uop *u) {
  int s = u->dtype.scalar, op = u->op, n = u->dtype.count;
  if (n <= 1 || !is_pow2((unsigned)n) || u->dtype.space) return NULL;
  int ss = u->nsrc ? u->src[u->nsrc - 1]->dtype.scalar : s; /* the operand type (WHERE: its values) */
  bool isf = s == TKC_FLOAT32 || s == TKC_FLOAT64, isi = sc_int(s), isb = s == TKC_BOOL;
  const char *a[3] = {NULL, NULL, NULL};
  for (int k = 0; k < u->nsrc && k < 3; k++) {
    if (u->src[k]->dtype.count != n || u->src[k]->dtype.space) return NULL;
    if (k > 0 && op != TKC_OP_WHERE && !tkc_dt_eq(u->src[k]->dtype, u->src[0]->dtype)) return NULL;
  }
  bool ok;
  switch (op) {
  case TKC_OP_ADD: case TKC_OP_SUB: case TKC_OP_MUL: case TKC_OP_NEG: ok = isf || isi; break;
  case TKC_OP_FDIV: case TKC_OP_MULACC: ok = isf; break;
  case TKC_OP_AND: case TKC_OP_OR: case TKC_OP_XOR: ok = isi || isb; break;
  case TKC_OP_SHL: case TKC_OP_SHR: ok = isi; break;
  case TKC_OP_MAX: ok = isf || isi; break;
  case TKC_OP_CMPLT: case TKC_OP_CMPNE: ok = isb && (native_elem(ss) || ss == TKC_BOOL); break;
  case TKC_OP_WHERE: ok = u->nsrc == 3 && u->src[0]->dtype.scalar == TKC_BOOL && tkc_dt_eq(u->src[1]->dtype, u->dtype) && (native_elem(s) || isb); break;
  case TKC_OP_CAST: ok = u->nsrc == 1 && (native_elem(s) || isb) && (native_elem(ss) || ss == TKC_BOOL); break;
  case TKC_OP_BITCAST: ok = u->nsrc == 1 && native_elem(s) && native_elem(ss) && tkc_dtype_size((tkc_dtype)s) == tkc_dtype_size((tkc_dtype)ss); break;
  default: ok = false;
  }
  if (!ok) return NULL;
  for (int k = 0; k < u->nsrc && k < 3; k++)
    if (!(a[k] = R(c, u, u->src[k]))) return NULL;
  char tb[48];
  const char *t = vec_type(c, s, n, tb, sizeof tb);
  if (!t) return NULL;
  switch (op) {
  case TKC_OP_ADD: return xfmt(c, "(%s+%s)", a[0], a[1]);
  case TKC_OP_SUB: return xfmt(c, "(%s-%s)", a[0], a[1]);
  case TKC_OP_MUL: return xfmt(c, "(%s*%s)", a[0], a[1]);
  case TKC_OP_FDIV: return xfmt(c, "(%s/%s)", a[0], a[1]);
  case TKC_OP_NEG: return xfmt(c, "(-%s)", a[0]);
  case TKC_OP_AND: return xfmt(c, "(%s&%s)", a[0], a[1]);
  case TKC_OP_OR: return xfmt(c, "(%s|%s)", a[0], a[1]);
  case TKC_OP_XOR: return xfmt(c, "(%s^%s)", a[0], a[1]);
  case TKC_OP_SHL: return xfmt(c, "(%s<<%s)", a[0], a[1]);
  case TKC_OP_SHR: return xfmt(c, "(%s>>%s)", a[0], a[1]);
  case TKC_OP_CMPLT: case TKC_OP_CMPNE: /* lanes of -1/0 -> bool 0/1 */
    return xfmt(c, "(__builtin_convertvector((%s%s%s),%s)&1)", a[0], op == TKC_OP_CMPLT ? "<" : "!=", a[1], t);
  case TKC_OP_MAX: { /* a<b?b:a per lane, NaN in a kept as the scalar form does */
    char *m = xfmt(c, "(%s<%s)", a[0], a[1]), *r = m ? vec_select(c, u->dtype, m, a[1], a[0]) : NULL;
    tkc_free(m);
    return r;
  }
  case TKC_OP_WHERE: {
    char mb[48];
    const char *mt = vec_type(c, mask_scalar(s), n, mb, sizeof mb);
    char *m = mt ? xfmt(c, "(-__builtin_convertvector(%s,%s))", a[0], mt) : NULL, *r = m ? vec_select(c, u->dtype, m, a[1], a[2]) : NULL;
    tkc_free(m);
    return r;
  }
  case TKC_OP_CAST:
    if (isb) return xfmt(c, "(__builtin_convertvector((%s!=0),%s)&1)", a[0], t); /* nonzero (and NaN) is true */
    return xfmt(c, "__builtin_convertvector(%s,%s)", a[0], t);
  case TKC_OP_BITCAST: return xfmt(c, "((%s)%s)", t, a[0]);
  default: { /* MULACC */
    for (size_t i = 0; i < c->nvecs; i++)
      if (c->vecs[i].scalar == s && c->vecs[i].count == n) c->vecs[i].fma = true;
    return xfmt(c, "tkc_fma_%s(%s,%s,%s)", t, a[0], a[1], a[2]);
  }
  }
}

/* renders a value-producing ALU/CAST/BITCAST u, lane by lane when it is a vector */
static char *render_value_op(rctx *c, const tkc_uop *u) {
  if (u->nsrc <= 3) {
    char *v = native_vector_op(c, u);
    if (v || c->cs.failed) return v;
  }
  int cnt = u->dtype.count;
  int lanes = cnt > 1 ? cnt : 1;
  char **l = tkc_calloc((size_t)lanes, sizeof *l);
  if (!l) return fail_oom(c);
  char *res = NULL;
  bool ok = true;
  for (int i = 0; i < lanes && ok; i++) {
    char *a[3] = {NULL, NULL, NULL};
    int ns = u->nsrc < 3 ? u->nsrc : 3;
    for (int k = 0; k < ns; k++) {
      if (cnt > 1) a[k] = lane(c, u, u->src[k], i);
      else {
        const char *x = R(c, u, u->src[k]);
        a[k] = x ? xfmt(c, "%s", x) : NULL;
      }
      if (!a[k]) ok = false;
    }
    if (ok) {
      if (u->op == TKC_OP_CAST || u->op == TKC_OP_BITCAST) {
        if (u->nsrc != 1) ok = false, fail_unsupported(c, u, "expects one source");
        else if (u->src[0]->dtype.count != u->dtype.count && u->op == TKC_OP_CAST) ok = false, fail_unsupported(c, u, "CAST changing the vector width");
        else l[i] = cast_scalar(c, u, u->src[0]->dtype.scalar, u->dtype.scalar, a[0], u->op == TKC_OP_BITCAST);
      } else {
        int need = (tkc_op_flags((tkc_op)u->op) & TKC_F_T) || u->op == TKC_OP_MULACC ? 3 : (tkc_op_flags((tkc_op)u->op) & TKC_F_B) ? 2 : 1;
        if (u->nsrc != need) ok = false, fail_unsupported(c, u, "wrong number of sources");
        else l[i] = alu_scalar(c, u, u->op, u->dtype.scalar, (const char *const *)a, (u->op == TKC_OP_IDIV || u->op == TKC_OP_MOD) && cnt <= 1 ? u->src[1] : NULL);
      }
      if (!l[i]) ok = false;
    }
    for (int k = 0; k < 3; k++) tkc_free(a[k]);
  }
  if (ok) res = cnt > 1 ? vec_literal(c, u->dtype, l, lanes) : l[0];
  else for (int i = 0; i < lanes; i++) tkc_free(l[i]);
  tkc_free(l);
  return res;
}

/* vector BITCAST where the lane counts differ (e.g. float4 -> half8): a union of the two vector types */
static char *render_vec_bitcast(rctx *c, const tkc_uop *u) {
  tkc_dt f = u->src[0]->dtype, t = u->dtype;
  if (f.scalar == TKC_BFLOAT16 || t.scalar == TKC_BFLOAT16 || f.scalar == TKC_BOOL || t.scalar == TKC_BOOL ||
      tkc_dt_itemsize(f) != tkc_dt_itemsize(t) || !is_pow2(f.count) || !is_pow2(t.count))
    return fail_unsupported(c, u, "vector BITCAST");
  char fb[48], tb[48];
  const char *x = R(c, u, u->src[0]);
  if (!x || !type_of(c, f, fb, sizeof fb) || !type_of(c, t, tb, sizeof tb)) return NULL;
  return xfmt(c, "((union { %s a; %s b; }){.a = %s}).b", fb, tb, x);
}

/* ---------------------------------------------------------------- statements */

/* LOAD: the expression of the loaded value */
static char *render_load(rctx *c, const tkc_uop *u) {
  const tkc_uop *p = u->src[0];
  if (!p->dtype.space) return fail_unsupported(c, u, "LOAD from a non-pointer");
  tkc_dt base = tkc_dt_base(p->dtype);
  const char *pe = R(c, u, p);
  if (!pe) return NULL;
  char *v;
  if (lanewise_mem(base)) {
    int cnt = base.count;
    char **l = tkc_calloc((size_t)cnt, sizeof *l);
    if (!l) return fail_oom(c);
    bool ok = true;
    for (int i = 0; i < cnt && ok; i++) {
      l[i] = base.scalar == TKC_BFLOAT16 ? xfmt(c, "tkc_bf16_float(%s[%d])", pe, i) : xfmt(c, "%s[%d]", pe, i);
      if (!l[i]) ok = false;
    }
    if (!ok) {
      for (int i = 0; i < cnt; i++) tkc_free(l[i]);
      tkc_free(l);
      return NULL;
    }
    v = vec_literal(c, base, l, cnt);
    tkc_free(l);
  } else if (base.scalar == TKC_BFLOAT16) {
    v = xfmt(c, "tkc_bf16_float(*%s)", pe);
  } else {
    v = xfmt(c, "*%s", pe);
  }
  if (!v || u->nsrc < 3) return v;
  const char *alt = R(c, u, u->src[1]), *gate = R(c, u, u->src[2]);
  char *g = alt && gate ? xfmt(c, "(%s?%s:%s)", gate, v, alt) : NULL;
  tkc_free(v);
  return g;
}

static void render_store(rctx *c, const tkc_uop *u, int depth) {
  if (u->nsrc < 2) { fail_unsupported(c, u, "STORE needs an address and a value"); return; }
  const tkc_uop *p = u->src[0];
  if (!p->dtype.space) { fail_unsupported(c, u, "STORE to a non-pointer"); return; }
  tkc_dt base = tkc_dt_base(p->dtype);
  const char *pe = R(c, u, p), *ve = R(c, u, u->src[1]);
  if (!pe || !ve) return;
  if (lanewise_mem(base)) {
    for (int i = 0; i < base.count; i++) {
      char *li = lane(c, u, u->src[1], i);
      if (!li) return;
      if (base.scalar == TKC_BFLOAT16) emit(c, depth, "%s[%d] = tkc_bf16_bits(%s);", pe, i, li);
      else emit(c, depth, "%s[%d] = %s;", pe, i, li);
      tkc_free(li);
    }
  } else if (base.scalar == TKC_BFLOAT16) {
    emit(c, depth, "*%s = tkc_bf16_bits(%s);", pe, ve);
  } else {
    emit(c, depth, "*%s = %s;", pe, ve);
  }
}

/* ---------------------------------------------------------------- names */

/* C keywords and the names this renderer generates or declares */
static bool name_reserved(const char *s) {
  static const char *const kw[] = {
      "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
      "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
      "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while",
      "half", "asm", "typeof", "bool", "true", "false"};
  for (size_t i = 0; i < TKC_COUNTOF(kw); i++)
    if (!strcmp(s, kw[i])) return true;
  if (s[0] == '_' || !strncmp(s, "tkc_", 4)) return true;
  /* generated names and vector typedefs: a known prefix followed only by digits */
  static const char *const pf[] = {"data", "ridx", "alu", "val", "cast", "acc", "gep", "bool", "char", "uchar",
                                   "short", "ushort", "int", "uint", "long", "ulong", "half", "float", "double"};
  for (size_t i = 0; i < TKC_COUNTOF(pf); i++) {
    size_t l = strlen(pf[i]);
    if (!strncmp(s, pf[i], l) && s[l] && strspn(s + l, "0123456789") == strlen(s + l)) return true;
  }
  return false;
}

static int cmp_var(const void *a, const void *b) { return strcmp(((const vararg *)a)->name, ((const vararg *)b)->name); }
static int cmp_buf(const void *a, const void *b) {
  int64_t x = ((const bufarg *)a)->num, y = ((const bufarg *)b)->num;
  return (x > y) - (x < y);
}

/* the parameter name of a DEFINE_VAR: its own name when that is a usable C identifier */
static char *var_cname(rctx *c, const char *name) {
  if (tkc_render_is_ident(name) && !name_reserved(name)) {
    bool dup = false;
    for (size_t i = 0; i < c->nvars; i++)
      if (!strcmp(c->vars[i].cname, name)) dup = true;
    if (!dup) return xfmt(c, "%s", name);
  }
  tkc_sbuf b = {0};
  tkc_sbuf_puts(&b, "var_");
  for (const char *p = name; p && *p; p++) {
    char ch = *p;
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
    tkc_sbuf_printf(&b, "%c", ok ? ch : '_');
  }
  tkc_sbuf_printf(&b, "_%zu", c->nvars);
  char *s = tkc_sbuf_take(&b);
  return s ? s : fail_oom(c);
}

/* ---------------------------------------------------------------- the renderer */

static const char *half_prelude =
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

static const char *bf16_prelude =
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

/* marks which values must get a name, notes half/bf16 (uses are counted before it) */
static void prepass(rctx *c) {
  for (size_t i = 0; i < c->cs.n; i++) {
    const tkc_uop *u = c->cs.uops[i];
    if (c->cs.pos[u->id] != (int32_t)i) continue; /* listed twice */
    if (u->dtype.scalar == TKC_FLOAT16) c->need_half = true;
    if (u->dtype.scalar == TKC_BFLOAT16) c->need_bf16 = true;
    bool dup_all = false, dup_vec = false;
    if (u->op == TKC_OP_MAX) dup_all = true;
    if ((u->op == TKC_OP_IDIV || u->op == TKC_OP_MOD) && u->nsrc == 2 && !divisor_safe(u->src[1], u->dtype.scalar)) dup_all = true;
    if (u->op == TKC_OP_GEP) dup_all = true;
    if (!u->dtype.space && u->dtype.count > 1 && (op_is_alu(u->op) || u->op == TKC_OP_CAST || u->op == TKC_OP_BITCAST)) dup_vec = true;
    if (u->op == TKC_OP_STORE && u->nsrc >= 2 && u->src[0]->dtype.space && lanewise_mem(tkc_dt_base(u->src[0]->dtype))) dup_vec = true;
    for (int k = 0; k < u->nsrc; k++) {
      int p = posof(c, u->src[k]);
      if (p < 0) continue;
      if (dup_all || (dup_vec && u->src[k]->dtype.count > 1 && !u->src[k]->dtype.space)) c->cs.must_name[p] = 1;
    }
  }
}

/* renders uops[i]; returns false on failure */
static bool render_one(rctx *c, size_t i, int *depth) {
  const tkc_uop *u = c->cs.uops[i];
  char tb[64];
  char *e = NULL;       /* the value's expression */
  int pfx = PFX_ALU;    /* the name prefix if it is declared */
  bool inl = false;     /* inline e instead of declaring a variable */
  switch ((tkc_op)u->op) {
  case TKC_OP_NAME: case TKC_OP_SINK: return true;
  case TKC_OP_NOOP:
    if (u->nsrc < 1) return true;
    {
      const char *x = R(c, u, u->src[0]);
      if (!x) return false;
      c->cs.r[i] = xfmt(c, "%s", x);
      return c->cs.r[i] != NULL;
    }
  case TKC_OP_DEFINE_GLOBAL: {
    if (!u->dtype.space || u->arg.kind != TKC_ARG_INT || u->arg.v.i < 0 || u->arg.v.i > 65535) return fail_unsupported(c, u, "DEFINE_GLOBAL needs a pointer dtype and an int arg"), false;
    for (size_t k = 0; k < c->nbufs; k++)
      if (c->bufs[k].num == u->arg.v.i) return tkc_err(TKC_EINVAL, "C renderer: two DEFINE_GLOBALs with arg %lld", (long long)u->arg.v.i), c->cs.failed = true, false;
    c->bufs[c->nbufs].num = u->arg.v.i;
    c->bufs[c->nbufs].dt = u->dtype;
    c->nbufs++;
    c->cs.r[i] = xfmt(c, "data%lld", (long long)u->arg.v.i);
    return c->cs.r[i] != NULL;
  }
  case TKC_OP_DEFINE_VAR: {
    if (u->arg.kind != TKC_ARG_TUPLE || u->arg.n < 1 || u->arg.v.t[0].kind != TKC_ARG_STR)
      return fail_unsupported(c, u, "DEFINE_VAR needs a (name, min, max) arg"), false;
    if (u->dtype.scalar != TKC_INT32 || u->dtype.count != 1 || u->dtype.space) return fail_unsupported(c, u, "DEFINE_VAR must be int32"), false;
    const char *name = u->arg.v.t[0].v.s;
    c->cs.r[i] = var_cname(c, name);
    if (!c->cs.r[i]) return false;
    c->vars[c->nvars].name = name;
    c->vars[c->nvars].cname = c->cs.r[i];
    c->nvars++;
    return true;
  }
  case TKC_OP_CONST: case TKC_OP_VCONST: {
    if (u->dtype.space || u->dtype.scalar >= TKC_VOID) return fail_unsupported(c, u, NULL), false;
    int cnt = u->dtype.count;
    if (u->op == TKC_OP_VCONST && (u->arg.kind != TKC_ARG_TUPLE || (int)u->arg.n != cnt)) return fail_unsupported(c, u, "VCONST arg"), false;
    if (cnt <= 1 && u->op == TKC_OP_CONST) {
      c->cs.r[i] = const_str(c, u->dtype.scalar, &u->arg);
      return c->cs.r[i] != NULL;
    }
    char **l = tkc_calloc((size_t)cnt, sizeof *l);
    if (!l) return fail_oom(c), false;
    bool ok = true;
    for (int k = 0; k < cnt && ok; k++)
      if (!(l[k] = const_str(c, u->dtype.scalar, u->op == TKC_OP_VCONST ? &u->arg.v.t[k] : &u->arg))) ok = false;
    if (ok) c->cs.r[i] = vec_literal(c, u->dtype, l, cnt);
    else for (int k = 0; k < cnt; k++) tkc_free(l[k]);
    tkc_free(l);
    return c->cs.r[i] != NULL;
  }
  case TKC_OP_RANGE: {
    if (u->nsrc != 2) return fail_unsupported(c, u, "RANGE needs (start, end)"), false;
    const char *s = R(c, u, u->src[0]), *en = R(c, u, u->src[1]);
    if (!s || !en || !type_of(c, u->dtype, tb, sizeof tb)) return false;
    char *nm = xfmt(c, "ridx%d", c->cs.cnt[PFX_RIDX]++);
    if (!nm) return false;
    c->cs.r[i] = nm;
    if (u == c->split) { /* this core's contiguous chunk of [start, end) */
      emit(c, *depth, "const long long tkc_n_ = (long long)(%s) - (long long)(%s);", en, s);
      emit(c, *depth, "const %s tkc_lo_ = (%s)((long long)(%s) + tkc_n_ * tkc_core_ / tkc_ncores_);", tb, tb, s);
      emit(c, *depth, "const %s tkc_hi_ = (%s)((long long)(%s) + tkc_n_ * (tkc_core_ + 1) / tkc_ncores_);", tb, tb, s);
      emit(c, *depth, "for (%s %s = tkc_lo_; %s < tkc_hi_; %s++) {", tb, nm, nm, nm);
    } else {
      emit(c, *depth, "for (%s %s = %s; %s < %s; %s++) {", tb, nm, s, nm, en, nm);
    }
    (*depth)++;
    return true;
  }
  case TKC_OP_ENDRANGE: case TKC_OP_ENDIF:
    if (*depth > 1) (*depth)--;
    emit(c, *depth, "}");
    return true;
  case TKC_OP_IF: {
    if (u->nsrc < 1) return fail_unsupported(c, u, "IF needs a gate"), false;
    const char *g = R(c, u, u->src[0]);
    if (!g) return false;
    emit(c, *depth, "if (%s) {", g);
    (*depth)++;
    return true;
  }
  case TKC_OP_DEFINE_ACC: {
    if (u->nsrc < 1) return fail_unsupported(c, u, "DEFINE_ACC needs an initial value"), false;
    const char *init = R(c, u, u->src[0]);
    if (!init || !type_of(c, u->dtype, tb, sizeof tb)) return false;
    char *nm = xfmt(c, "acc%d", c->cs.cnt[PFX_ACC]++);
    if (!nm) return false;
    c->cs.r[i] = nm;
    emit(c, *depth, "%s %s = %s;", tb, nm, init);
    return true;
  }
  case TKC_OP_ASSIGN: {
    if (u->nsrc != 2) return fail_unsupported(c, u, "ASSIGN needs (acc, value)"), false;
    const char *a = R(c, u, u->src[0]), *v = R(c, u, u->src[1]);
    if (!a || !v) return false;
    emit(c, *depth, "%s = %s;", a, v);
    c->cs.r[i] = xfmt(c, "%s", a);
    return c->cs.r[i] != NULL;
  }
  case TKC_OP_INDEX: {
    if (u->nsrc != 2) return fail_unsupported(c, u, "INDEX must be (buf, idx): gates belong on LOAD/STORE"), false;
    if (!u->dtype.space || u->dtype.pcount > 1) return fail_unsupported(c, u, NULL), false;
    const char *b = R(c, u, u->src[0]), *x = R(c, u, u->src[1]);
    if (!b || !x) return false;
    /* drop the index's outer parentheses when it is a sum: (data0+alu0+1) */
    size_t xl = strlen(x);
    if (u->src[1]->op == TKC_OP_ADD && xl >= 2 && x[0] == '(' && x[xl - 1] == ')') c->cs.r[i] = xfmt(c, "(%s+%.*s)", b, (int)(xl - 2), x + 1);
    else c->cs.r[i] = xfmt(c, "(%s+%s)", b, x);
    return c->cs.r[i] != NULL;
  }
  case TKC_OP_LOAD: {
    if (u->nsrc < 1) return fail_unsupported(c, u, "LOAD needs an address"), false;
    if (!(e = render_load(c, u))) return false;
    pfx = PFX_VAL;
    break;
  }
  case TKC_OP_STORE:
    render_store(c, u, *depth);
    return !c->cs.failed;
  case TKC_OP_GEP: {
    if (u->nsrc != 1) return fail_unsupported(c, u, NULL), false;
    const tkc_uop *s = u->src[0];
    int nidx = u->arg.kind == TKC_ARG_TUPLE ? (int)u->arg.n : u->arg.kind == TKC_ARG_INT ? 1 : 0;
    if (nidx < 1) return fail_unsupported(c, u, "GEP arg"), false;
    int64_t idx0 = u->arg.kind == TKC_ARG_INT ? u->arg.v.i : u->arg.v.t[0].v.i;
    if (nidx == 1) {
      if (s->dtype.count <= 1) {
        const char *x = R(c, u, s);
        if (!x) return false;
        c->cs.r[i] = xfmt(c, "%s", x);
      } else {
        c->cs.r[i] = lane(c, u, s, (int)idx0);
      }
      return c->cs.r[i] != NULL;
    }
    char **l = tkc_calloc((size_t)nidx, sizeof *l);
    if (!l) return fail_oom(c), false;
    bool ok = true;
    for (int k = 0; k < nidx && ok; k++)
      if (!(l[k] = lane(c, u, s, (int)u->arg.v.t[k].v.i))) ok = false;
    if (ok) e = vec_literal(c, u->dtype, l, nidx);
    else for (int k = 0; k < nidx; k++) tkc_free(l[k]);
    tkc_free(l);
    if (!e) return false;
    pfx = PFX_GEP;
    inl = c->cs.nchild[i] == 1 && !c->cs.must_name[i];
    break;
  }
  case TKC_OP_VECTORIZE: {
    if (u->dtype.count <= 1 || u->nsrc != u->dtype.count) return fail_unsupported(c, u, "VECTORIZE needs one scalar per lane"), false;
    char **l = tkc_calloc((size_t)u->nsrc, sizeof *l);
    if (!l) return fail_oom(c), false;
    bool ok = true;
    for (int k = 0; k < u->nsrc && ok; k++) {
      if (u->src[k]->dtype.count > 1) { fail_unsupported(c, u, "VECTORIZE of vectors"); ok = false; break; }
      const char *x = R(c, u, u->src[k]);
      if (!x || !(l[k] = xfmt(c, "%s", x))) ok = false;
    }
    if (ok) e = vec_literal(c, u->dtype, l, u->nsrc);
    else for (int k = 0; k < u->nsrc; k++) tkc_free(l[k]);
    tkc_free(l);
    if (!e) return false;
    pfx = PFX_CAST;
    inl = c->cs.nchild[i] == 1 && !c->cs.must_name[i];
    break;
  }
  case TKC_OP_CAST:
    if (u->nsrc != 1) return fail_unsupported(c, u, NULL), false;
    if (u->dtype.space) { /* a pointer cast: CAST(INDEX) to a vector pointer */
      if (!u->src[0]->dtype.space) return fail_unsupported(c, u, "CAST of a value to a pointer"), false;
      const char *x = R(c, u, u->src[0]);
      if (!x) return false;
      tkc_dt base = tkc_dt_base(u->dtype);
      if (lanewise_mem(base) || tkc_dt_eq(u->dtype, u->src[0]->dtype)) c->cs.r[i] = xfmt(c, "%s", x);
      else if (!type_of(c, u->dtype, tb, sizeof tb)) return fail_unsupported(c, u, NULL), false;
      else c->cs.r[i] = xfmt(c, "((%s)%s)", tb, x);
      return c->cs.r[i] != NULL;
    }
    /* fallthrough */
  case TKC_OP_BITCAST:
    if (u->nsrc != 1 || u->dtype.space || u->src[0]->dtype.space) return fail_unsupported(c, u, NULL), false;
    if (u->op == TKC_OP_BITCAST && u->dtype.count != u->src[0]->dtype.count) e = render_vec_bitcast(c, u);
    else e = render_value_op(c, u);
    if (!e) return false;
    pfx = PFX_CAST;
    inl = c->cs.nchild[i] == 1 && !c->cs.must_name[i];
    break;
  default:
    if (op_is_alu(u->op) && u->op != TKC_OP_THREEFRY && !u->dtype.space && u->dtype.scalar < TKC_VOID) {
      if (!(e = render_value_op(c, u))) return false;
      pfx = PFX_ALU;
      inl = c->cs.nchild[i] == 1 && !c->cs.must_name[i];
      break;
    }
    return fail_unsupported(c, u, NULL), false;
  }
  const char *t = inl ? NULL : u->dtype.scalar < TKC_VOID ? type_of(c, u->dtype, tb, sizeof tb) : NULL;
  if (!inl && !t) fail_unsupported(c, u, NULL);
  return tkc_cs_bind(&c->cs, i, e, inl, pfx, t, *depth);
}

static bool render_one_cb(void *c, size_t i, int *depth) { return render_one(c, i, depth); }

static char *render_c(const tkc_renderer *self, const char *name, tkc_uop *const *uops, size_t n) {
  (void)self;
  if (!name) name = "kernel";
  if (!tkc_render_is_ident(name)) return tkc_err_null(TKC_EINVAL, "C renderer: kernel name \"%s\" is not a C identifier", name);
  if (n && !uops) return tkc_err_null(TKC_EINVAL, "C renderer: NULL uops");
  rctx c;
  memset(&c, 0, sizeof c);
  char *out = NULL;
  if (tkc_cs_init(&c.cs, "C", NULL, uops, n) != TKC_OK) goto done;
  c.bufs = tkc_calloc(n + 1, sizeof *c.bufs);
  c.vars = tkc_calloc(n + 1, sizeof *c.vars);
  if (!c.bufs || !c.vars) { fail_oom(&c); goto done; }
  prepass(&c);
  c.split = tkc_render_pick_split(c.cs.uops, c.cs.n, c.cs.pos);
  if (!c.split) emit(&c, 1, "if (tkc_core_ != 0) return; /* no output loop to split: core 0 does it all */");
  if (!tkc_cs_loop(&c.cs, render_one_cb, &c)) goto done;

  /* parameters: buffers by number (gaps filled), then variables by name */
  qsort(c.bufs, c.nbufs, sizeof *c.bufs, cmp_buf);
  qsort(c.vars, c.nvars, sizeof *c.vars, cmp_var);
  tkc_sbuf o = {0};
  if (c.need_half) tkc_sbuf_puts(&o, half_prelude);
  if (c.need_bf16) tkc_sbuf_puts(&o, bf16_prelude);
  for (size_t k = 0; k < c.nvecs; k++) {
    int s = c.vecs[k].scalar, cnt = c.vecs[k].count;
    unsigned lanes = 1;
    while (lanes < (unsigned)cnt) lanes <<= 1;
    tkc_sbuf_printf(&o, "typedef %s %s%d __attribute__((aligned(%d),vector_size(%u)));\n", vec_elem[s], vec_name[s], cnt,
                    vec_elem_size[s], lanes * vec_elem_size[s]);
    if (c.vecs[k].fma) { /* one fused multiply-add per lane, as one vector FMA: clang contracts a*b+c
                            (exactly one rounding where the target has FMA), else fma per lane */
      const char *t = vec_name[s];
      tkc_sbuf_printf(&o, "static inline %s%d tkc_fma_%s%d(%s%d a, %s%d b, %s%d c) {\n"
                          "#if defined(__clang__) && defined(__FMA__)\n#pragma clang fp contract(fast)\n  return a * b + c;\n#else\n"
                          "  %s%d r;\n  for (int i = 0; i < %d; i++) r[i] = __builtin_fma%s(a[i], b[i], c[i]);\n  return r;\n#endif\n}\n",
                      t, cnt, t, cnt, t, cnt, t, cnt, t, cnt, t, cnt, cnt, s == TKC_FLOAT32 ? "f" : "");
    }
  }
  tkc_sbuf_printf(&o, "void %s(", name);
  int np = 0;
  int64_t next = 0;
  for (size_t k = 0; k < c.nbufs; k++) {
    for (; next < c.bufs[k].num; next++) tkc_sbuf_printf(&o, "%svoid* data%lld", np++ ? ", " : "", (long long)next);
    char tb[64];
    if (!type_of(&c, c.bufs[k].dt, tb, sizeof tb)) { tkc_free(o.s); fail_unsupported(&c, uops[0], "buffer dtype"); goto done; }
    tkc_sbuf_printf(&o, "%s%s restrict data%lld", np++ ? ", " : "", tb, (long long)c.bufs[k].num);
    next = c.bufs[k].num + 1;
  }
  for (size_t k = 0; k < c.nvars; k++) tkc_sbuf_printf(&o, "%sconst int %s", np++ ? ", " : "", c.vars[k].cname);
  /* the launch's core number and core count (see tkc_render_pick_split) */
  tkc_sbuf_printf(&o, "%sconst int tkc_core_, const int tkc_ncores_", np ? ", " : "");
  tkc_sbuf_puts(&o, ") {\n");
  if (c.cs.body.s) tkc_sbuf_puts(&o, c.cs.body.s);
  tkc_sbuf_puts(&o, "}\n");
  out = tkc_sbuf_take(&o);
  if (!out) c.cs.failed = true;

done:
  tkc_free(c.bufs);
  tkc_free(c.vars);
  tkc_free(c.vecs);
  tkc_cs_free(&c.cs);
  if (c.cs.failed) {
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
    .extra_matcher = NULL,
    .render = render_c,
};
