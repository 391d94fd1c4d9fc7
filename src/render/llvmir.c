/* src/render/llvmir.c — the "LLVM" renderer (tinygrad's LLVMRenderer): one LLVM IR function per
 * kernel, compiled in process by the LLVM device (src/runtime/llvm.c). Textual IR with opaque
 * pointers (`ptr`), so LLVM 15 or newer.
 *
 * Output shape:
 *   define void @NAME(ptr noalias align 32 %data0, ..., i32 %var.n, ..., i32 %core, i32 %ncores) #0 {
 *   entry:
 *     ...
 *     ret void
 *   }
 *   declare <intrinsics used>
 *   attributes #0 = { nounwind "no-builtins" "no-trapping-math"="true" }
 * Parameters come in DEFINE_GLOBAL arg order (a missing number gets an unused `ptr %dataK`), then one
 * i32 per DEFINE_VAR sorted by name (strcmp): the order the launch passes them in, as the C renderer,
 * then `i32 %core, i32 %ncores`: the launch runs the function once per core (0..ncores-1), and each
 * call does a contiguous chunk of the outermost output loop (tkc_render_pick_split, as the C
 * renderer): that loop runs over [%core.lo, %core.hi) = start + (end-start)*core/ncores ..
 * start + (end-start)*(core+1)/ncores, computed in i64, always behind the zero-trip guard. Without
 * such a loop, entry branches to `ret void` for core != 0 (block not_core0) and core 0 does it all.
 * `align 32` holds because the LLVM device allocates every buffer 64-byte aligned; `noalias` is the
 * C renderer's `restrict`.
 *
 * Control flow (every block is named; nothing refers to an unnamed value):
 *  - RANGE K:  loop_entry_K (the zero-trip guard `start < end`, omitted when both are constants and
 *    the range is not empty) -> loop_body_K (phi of the index, and one phi per accumulator updated
 *    inside the loop) ... ENDRANGE: loop_latch_K (index + 1, compare, branch back) -> loop_exit_K
 *    (phis merging each accumulator's value when the loop ran zero times).
 *  - accumulators are SSA values, not memory: DEFINE_ACC sets the current value of the accumulator
 *    to its initial value, ASSIGN replaces it, and reading a DEFINE_ACC or an ASSIGN reads the current
 *    value (what the C renderer's variable would hold at that point). Loops and IFs that update an
 *    accumulator defined outside them get the phis that carry it.
 *  - IF K: if_head_K (conditional branch) -> if_body_K ... ENDIF: if_tail_K -> if_end_K (phis).
 *  - gated LOAD(ptr, alt, gate): NAME.entry -> NAME.load -> NAME.exit with a phi of the loaded value
 *    and alt, so the address is only dereferenced when the gate holds.
 *
 * Value representation (chosen so results match the INTERP device, like the C renderer):
 *  - bool is i1 in registers and i8 in memory (any nonzero byte loads as true); bfloat16 is its i16
 *    bits in registers and memory: the target rules (src/codegen/target_rules.h, BF16_BITS |
 *    BF16_VIA_F64) compute it in double, round to float, then to nearest even bfloat16 (NaN stays
 *    NaN, overflow gives inf) with integer ops, as src/uops/alu.c does.
 *  - float16 is LLVM's half; MULACC is one fused multiply-add (llvm.fma; half and bfloat16 through float), as INTERP.
 *  - integers wrap (no nsw/nuw on user arithmetic). IDIV/MOD print sdiv/udiv/srem/urem: the target
 *    rules guarded every divisor not proven safe (x/0 = x%0 = 0, INT_MIN/-1 wraps, x%-1 = 0, where
 *    LLVM's would be undefined); a divisor that is neither is refused.
 *    Shifts by a count outside [0, bits) give INTERP's answer (0, or the sign fill for SHR of signed
 *    ints) instead of LLVM's poison. Float -> int casts use llvm.fpto[su]i.sat: truncate toward zero,
 *    saturate, NaN -> 0, exactly tkc_value_cast.
 *  - bool arithmetic (ADD, MUL, IDIV, ...) is done on i8 0/1 and compared with 0 afterwards, as Python's
 *    bool and INTERP do (True+True is True).
 *  - MAX is compare+select (`a < b ? b : a`, as INTERP), RECIP is FDIV(1, x) and CAST to bool is
 *    CMPNE(x, 0): the extra matcher below rewrites them as UOps (the renderer also handles the original
 *    ops, for callers that render without the matcher).
 *  - transcendental ops are LLVM intrinsics (llvm.sqrt/exp2/log2/sin/pow), which become libm calls
 *    resolved in the host process; bf16 ones are computed in double.
 *  - fast-math flags: `nsz` only. `nnan`/`ninf` would break inf/NaN results that INTERP gives (a max
 *    reduction starts at -inf), and `contract`/`arcp`/`afn`/`reassoc` change rounding (an FMA, a
 *    reciprocal multiply, an approximate libm call or a reordered sum), so results would drift from
 *    INTERP and the CPU device. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/common.h"
#include "codegen/target_rules.h"
#include "render/render_util.h"
#include "render/renderers.h"
#include "uops/uop_internal.h"

#define FMF "nsz"

/* ---------------------------------------------------------------- dtype names */

/* the LLVM type of a value in a register (bfloat16 is held as a float) */
static const char *const reg_ty[TKC_NDTYPES] = {
    [TKC_BOOL] = "i1",     [TKC_INT8] = "i8",     [TKC_UINT8] = "i8",       [TKC_INT16] = "i16",
    [TKC_UINT16] = "i16",  [TKC_INT32] = "i32",   [TKC_UINT32] = "i32",     [TKC_INT64] = "i64",
    [TKC_UINT64] = "i64",  [TKC_FLOAT16] = "half", [TKC_BFLOAT16] = "i16",   [TKC_FLOAT32] = "float",
    [TKC_FLOAT64] = "double", [TKC_VOID] = "void",
};
/* the LLVM type of an element in memory (bool is a byte, bfloat16 its bits) */
static const char *const mem_ty[TKC_NDTYPES] = {
    [TKC_BOOL] = "i8",     [TKC_INT8] = "i8",     [TKC_UINT8] = "i8",       [TKC_INT16] = "i16",
    [TKC_UINT16] = "i16",  [TKC_INT32] = "i32",   [TKC_UINT32] = "i32",     [TKC_INT64] = "i64",
    [TKC_UINT64] = "i64",  [TKC_FLOAT16] = "half", [TKC_BFLOAT16] = "i16",   [TKC_FLOAT32] = "float",
    [TKC_FLOAT64] = "double", [TKC_VOID] = "void",
};
/* intrinsic name suffix of the register type */
static const char *const mangle_ty[TKC_NDTYPES] = {
    [TKC_BOOL] = "i1",     [TKC_INT8] = "i8",     [TKC_UINT8] = "i8",       [TKC_INT16] = "i16",
    [TKC_UINT16] = "i16",  [TKC_INT32] = "i32",   [TKC_UINT32] = "i32",     [TKC_INT64] = "i64",
    [TKC_UINT64] = "i64",  [TKC_FLOAT16] = "f16", [TKC_BFLOAT16] = "i16",   [TKC_FLOAT32] = "f32",
    [TKC_FLOAT64] = "f64", [TKC_VOID] = "isVoid",
};
/* bits of the register type */
static const unsigned char reg_bits[TKC_NDTYPES] = {
    [TKC_BOOL] = 1,   [TKC_INT8] = 8,    [TKC_UINT8] = 8,      [TKC_INT16] = 16,     [TKC_UINT16] = 16,
    [TKC_INT32] = 32, [TKC_UINT32] = 32, [TKC_INT64] = 64,     [TKC_UINT64] = 64,    [TKC_FLOAT16] = 16,
    [TKC_BFLOAT16] = 16, [TKC_FLOAT32] = 32, [TKC_FLOAT64] = 64, [TKC_VOID] = 0,
};

/* a float in registers (bfloat16 is held as its i16 bits) */
static bool sc_float(int s) { return tkc_dtype_is_float((tkc_dtype)s) && s != TKC_BFLOAT16; }
#define sc_int(s) tkc_dtype_is_int((tkc_dtype)(s))
#define sc_unsigned(s) tkc_dtype_is_unsigned((tkc_dtype)(s))
static bool op_is_alu(int op) { return (tkc_op_flags((tkc_op)op) & TKC_F_ALU) != 0; }

/* ---------------------------------------------------------------- render context */

/* every string of one render lives in this pool and is freed at once at the end */
typedef struct chunk {
  struct chunk *next;
  size_t used, cap;
  char mem[];
} chunk;

typedef struct accum {
  const char *cur; /* its value at the current point of the function */
  tkc_dt dt;
  size_t defpos;   /* position of the DEFINE_ACC */
} accum;

typedef struct scope {
  const tkc_uop *u; /* the RANGE or IF */
  int kind;         /* TKC_OP_RANGE / TKC_OP_IF */
  int id;           /* K in the block names */
  int ord;          /* scope ordinal (row of marks) */
  bool guarded;     /* RANGE: loop_entry_K may branch straight to loop_exit_K */
  const char *end;  /* RANGE: its end value */
  const char **entry; /* per accumulator: its value before the scope (NULL: no phi) */
  size_t *slot;       /* per accumulator: the line reserved for its loop-header phi */
} scope;

typedef struct vararg {
  const char *name;  /* the DEFINE_VAR's name */
  const char *pname; /* its parameter ("%var.n") */
} vararg;

typedef struct lctx {
  tkc_uop *const *uops;
  size_t n;
  int32_t *pos; /* uop id -> position, -1 */
  uint32_t npos;
  const char **r;  /* operand text of each position's value */
  int *accidx;     /* position of a DEFINE_ACC -> accumulator number, else -1 */
  int *scopeord;   /* position of a RANGE/IF -> scope ordinal, else -1 */
  accum *accs;
  int nacc, nscopes;
  unsigned char *marks; /* [ord * nacc + j]: accumulator j is updated inside scope ord and defined before it */
  scope *stack;
  int depth;
  const char **lines;
  size_t nlines, caplines;
  const char **decls;
  size_t ndecls, capdecls;
  tkc_render_params params; /* buffers and variables in launch order */
  vararg *vars;              /* parameter names given so far */
  size_t nvars;
  int ntmp, nrange, nif, cnt[8];
  const tkc_uop *split; /* the RANGE split across cores (NULL: core 0 does everything) */
  chunk *pool;
  bool failed;
} lctx;

enum { PFX_ALU, PFX_VAL, PFX_CAST, PFX_GEP, PFX_VEC, PFX_IDX, PFX_N };
static const char *const pfx_name[PFX_N] = {"alu", "val", "cast", "gep", "vec", "idx"};

static void fail_oom(lctx *c) { tkc_render_oom(&c->failed, "LLVM"); }

static bool fail_unsupported(lctx *c, const tkc_uop *u, const char *why) {
  char b[64];
  if (!c->failed) {
    const char *on = tkc_op_name((tkc_op)u->op);
    tkc_err(TKC_EUNSUPPORTED, "LLVM renderer: cannot render %s of dtype %s%s%s", on ? on : "?",
            tkc_dt_str(u->dtype, b, sizeof b), why ? ": " : "", why ? why : "");
  }
  c->failed = true;
  return false;
}

static bool fail_internal(lctx *c, const char *what) {
  if (!c->failed) tkc_err(TKC_EINTERNAL, "LLVM renderer: %s (kernel not linearized?)", what);
  c->failed = true;
  return false;
}

static void *pool_alloc(lctx *c, size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (!c->pool || c->pool->cap - c->pool->used < n) {
    size_t cap = n > 16384 ? n : 16384;
    chunk *k = tkc_malloc(sizeof *k + cap);
    if (!k) return fail_oom(c), NULL;
    k->next = c->pool;
    k->used = 0;
    k->cap = cap;
    c->pool = k;
  }
  void *p = c->pool->mem + c->pool->used;
  c->pool->used += n;
  return p;
}

/* a formatted string from the pool; "" (and the failure recorded) when memory runs out */
static const char *vS(lctx *c, const char *fmt, va_list ap) {
  va_list aq;
  va_copy(aq, ap);
  int n = vsnprintf(NULL, 0, fmt, aq);
  va_end(aq);
  if (n < 0) return fail_oom(c), "";
  char *s = pool_alloc(c, (size_t)n + 1);
  if (!s) return "";
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  return s;
}

static const char *S(lctx *c, const char *fmt, ...) TKC_PRINTF(2, 3);
static const char *S(lctx *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const char *s = vS(c, fmt, ap);
  va_end(ap);
  return s;
}

static size_t push_line(lctx *c, const char *s) {
  if (c->nlines == c->caplines) {
    size_t cap = c->caplines ? c->caplines * 2 : 256;
    const char **l = tkc_realloc(c->lines, cap * sizeof *l);
    if (!l) return fail_oom(c), 0;
    c->lines = l;
    c->caplines = cap;
  }
  c->lines[c->nlines] = s;
  return c->nlines++;
}

/* one line of the function body, as is (labels) */
static void line(lctx *c, const char *fmt, ...) TKC_PRINTF(2, 3);
static void line(lctx *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  push_line(c, vS(c, fmt, ap));
  va_end(ap);
}

/* one instruction "  res = ..." (res NULL: a fresh temporary); returns res */
static const char *ins(lctx *c, const char *res, const char *fmt, ...) TKC_PRINTF(3, 4);
static const char *ins(lctx *c, const char *res, const char *fmt, ...) {
  if (!res) res = S(c, "%%t%d", c->ntmp++);
  va_list ap;
  va_start(ap, fmt);
  const char *body = vS(c, fmt, ap);
  va_end(ap);
  push_line(c, S(c, "  %s = %s", res, body));
  return res;
}

static void declare(lctx *c, const char *d) {
  for (size_t i = 0; i < c->ndecls; i++)
    if (!strcmp(c->decls[i], d)) return;
  if (c->ndecls == c->capdecls) {
    size_t cap = c->capdecls ? c->capdecls * 2 : 8;
    const char **l = tkc_realloc(c->decls, cap * sizeof *l);
    if (!l) { fail_oom(c); return; }
    c->decls = l;
    c->capdecls = cap;
  }
  c->decls[c->ndecls++] = d;
}

static const char *fresh(lctx *c, int pfx) { return S(c, "%%%s%d", pfx_name[pfx], c->cnt[pfx]++); }

/* ---------------------------------------------------------------- types and constants */

/* the LLVM type of scalar s with n lanes, in registers or in memory */
static const char *ty(lctx *c, int s, int n, bool mem) {
  const char *t = (mem ? mem_ty : reg_ty)[s];
  return n > 1 ? S(c, "<%d x %s>", n, t) : t;
}
static const char *T(lctx *c, tkc_dt dt) { return dt.space ? "ptr" : ty(c, dt.scalar, dt.count, false); }
/* intrinsic suffix: f32 / v4f32 */
static const char *mangle(lctx *c, int s, int n) { return n > 1 ? S(c, "v%d%s", n, mangle_ty[s]) : mangle_ty[s]; }

/* a constant of n lanes with element text e (of LLVM scalar type et) */
static const char *splat(lctx *c, const char *et, int n, const char *e) {
  if (n <= 1) return e;
  tkc_sbuf b = {0};
  tkc_sbuf_puts(&b, "<");
  for (int i = 0; i < n; i++) tkc_sbuf_printf(&b, "%s%s %s", i ? ", " : "", et, e);
  tkc_sbuf_puts(&b, ">");
  if (b.oom) { tkc_free(b.s); fail_oom(c); return ""; }
  const char *s = S(c, "%s", b.s ? b.s : "");
  tkc_free(b.s);
  return s;
}

/* a double's bit pattern, the exact form LLVM accepts for float and double constants */
static const char *fhex(lctx *c, double v) {
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return S(c, "0x%016llX", (unsigned long long)b);
}

/* the register constant of scalar dtype s holding the value of arg a */
static const char *const_str(lctx *c, int s, const tkc_arg *a) {
  tkc_value v = tkc_value_truncate(tkc_value_from_arg(a, (tkc_dtype)s), (tkc_dtype)s);
  switch (s) {
  case TKC_BOOL: return v.i ? "true" : "false";
  case TKC_INT8: case TKC_UINT8: return S(c, "%d", (int)(int8_t)(uint8_t)v.u);
  case TKC_INT16: case TKC_UINT16: return S(c, "%d", (int)(int16_t)(uint16_t)v.u);
  case TKC_INT32: case TKC_UINT32: return S(c, "%ld", (long)(int32_t)(uint32_t)v.u);
  case TKC_INT64: case TKC_UINT64: return S(c, "%lld", (long long)v.i);
  case TKC_FLOAT16: return S(c, "0xH%04X", (unsigned)(tkc_value_bitcast(v, TKC_FLOAT16, TKC_UINT16).u & 0xffffu));
  case TKC_BFLOAT16: return S(c, "%d", (int)(int16_t)tkc_f32_to_bf16((float)v.f));
  case TKC_FLOAT32: return fhex(c, (double)(float)v.f);
  case TKC_FLOAT64: return fhex(c, v.f);
  default: return NULL;
  }
}

/* zero / one of scalar s (register type), splatted over n lanes */
static const char *zero(lctx *c, int s, int n) {
  if (n > 1) return "zeroinitializer";
  return s == TKC_BOOL ? "false" : sc_float(s) ? (s == TKC_FLOAT16 ? "0xH0000" : "0.0") : "0";
}
static const char *iconst(lctx *c, int s, int n, long long v) { return splat(c, reg_ty[s], n, S(c, "%lld", v)); }
static const char *fconst(lctx *c, int s, int n, double v) {
  const char *e = s == TKC_FLOAT16 ? S(c, "0xH%04X", (unsigned)tkc_f32_to_f16((float)v)) : fhex(c, s == TKC_FLOAT64 ? v : (double)(float)v);
  return splat(c, reg_ty[s], n, e);
}

/* ---------------------------------------------------------------- operands */

static int posof(const lctx *c, const tkc_uop *u) {
  if (!u || u->id >= c->npos) return -1;
  return c->pos[u->id];
}

/* the value of a source at this point (accumulators: their current value) */
static const char *R(lctx *c, const tkc_uop *s) {
  const tkc_uop *a = s->op == TKC_OP_ASSIGN && s->nsrc >= 1 ? s->src[0] : s;
  int p = posof(c, a);
  if (p >= 0 && a->op == TKC_OP_DEFINE_ACC && c->accidx[p] >= 0) {
    const char *cur = c->accs[c->accidx[p]].cur;
    if (cur) return cur;
  } else if (p >= 0 && a->op != TKC_OP_DEFINE_ACC && c->r[p]) {
    return c->r[p];
  }
  const char *sn = tkc_op_name((tkc_op)s->op);
  fail_internal(c, S(c, "a %s is used before it is rendered", sn ? sn : "?"));
  return "";
}

/* source s as a vector of n lanes (a scalar source is splatted) */
static const char *RV(lctx *c, const tkc_uop *s, int n) {
  const char *x = R(c, s);
  if (n <= 1 || s->dtype.count == n) return x;
  if (s->dtype.count != 1) return fail_internal(c, "operands of different vector widths"), "";
  const char *st = reg_ty[s->dtype.scalar];
  const char *one = ins(c, NULL, "insertelement <1 x %s> poison, %s %s, i32 0", st, st, x);
  return ins(c, NULL, "shufflevector <1 x %s> %s, <1 x %s> poison, <%d x i32> zeroinitializer", st, one, st, n);
}

/* ---------------------------------------------------------------- conversions */

/* a value as loaded from memory -> the register value */
static const char *mem_to_reg(lctx *c, int s, int n, const char *x, const char *res) {
  if (s == TKC_BOOL) return ins(c, res, "icmp ne %s %s, %s", ty(c, TKC_BOOL, n, true), x, zero(c, TKC_INT8, n));
  return x;
}

/* a register value -> what is stored in memory */
static const char *reg_to_mem(lctx *c, int s, int n, const char *x) {
  if (s == TKC_BOOL) return ins(c, NULL, "zext %s %s to %s", ty(c, TKC_BOOL, n, false), x, ty(c, TKC_BOOL, n, true));
  return x;
}

/* x != 0 (a bool) for x of scalar s */
static const char *ne_zero(lctx *c, int s, int n, const char *x, const char *res) {
  if (s == TKC_BOOL) return x;
  if (sc_float(s)) return ins(c, res, "fcmp une %s %s, %s", ty(c, s, n, false), x, zero(c, s, n));
  return ins(c, res, "icmp ne %s %s, %s", ty(c, s, n, false), x, zero(c, s, n));
}

/* x of scalar f -> scalar t (n lanes), as tkc_value_cast */
static const char *convert(lctx *c, const tkc_uop *u, int f, int t, int n, const char *x, const char *res) {
  if (f == t) return x;
  if (f == TKC_BFLOAT16 || t == TKC_BFLOAT16) return fail_unsupported(c, u, "bfloat16 conversions are made of integer ops by the target rules"), "";
  const char *ft = ty(c, f, n, false), *tt = ty(c, t, n, false);
  if (t == TKC_BOOL) return ne_zero(c, f, n, x, res);
  if (f == TKC_BOOL) return ins(c, res, "%s %s %s to %s", sc_float(t) ? "uitofp" : "zext", ft, x, tt);
  if (sc_int(f) && sc_int(t)) {
    if (reg_bits[f] == reg_bits[t]) return x;
    return ins(c, res, "%s %s %s to %s", reg_bits[t] < reg_bits[f] ? "trunc" : sc_unsigned(f) ? "zext" : "sext", ft, x, tt);
  }
  if (sc_int(f) && sc_float(t)) /* one rounding of the integer */
    return ins(c, res, "%s %s %s to %s", sc_unsigned(f) ? "uitofp" : "sitofp", ft, x, tt);
  if (sc_float(f) && sc_int(t)) { /* truncate toward zero, saturate, NaN -> 0 */
    const char *nm = S(c, "llvm.%s.sat.%s.%s", sc_unsigned(t) ? "fptoui" : "fptosi", mangle(c, t, n), mangle(c, f, n));
    declare(c, S(c, "declare %s @%s(%s)", tt, nm, ft));
    return ins(c, res, "call %s @%s(%s %s)", tt, nm, ft, x);
  }
  if (sc_float(f) && sc_float(t))
    return ins(c, res, "%s %s %s to %s", reg_bits[t] > reg_bits[f] ? "fpext" : "fptrunc", ft, x, tt);
  fail_unsupported(c, u, "cast between these dtypes");
  return "";
}

/* BITCAST of x from f (nf lanes) to t (nt lanes), same total size */
static const char *bitcast(lctx *c, const tkc_uop *u, int f, int nf, int t, int nt, const char *x, const char *res) {
  if (f == t && nf == nt) return x;
  const char *ft = ty(c, f, nf, false), *tt = ty(c, t, nt, false);
  if (nf != nt) {
    if (f == TKC_BOOL || t == TKC_BOOL) return fail_unsupported(c, u, "vector BITCAST of bool"), "";
    return ins(c, res, "bitcast %s %s to %s", ft, x, tt);
  }
  int n = nf;
  if (f == TKC_BOOL) return ins(c, res, "zext %s %s to %s", ft, x, tt);
  if (t == TKC_BOOL) return ne_zero(c, f, n, x, res);
  if (!strcmp(ft, tt)) return x;
  return ins(c, res, "bitcast %s %s to %s", ft, x, tt);
}

/* ---------------------------------------------------------------- ALU */

static const char *call1(lctx *c, const char *fn, int s, int n, const char *x, const char *res) {
  const char *t = ty(c, s, n, false), *nm = S(c, "llvm.%s.%s", fn, mangle(c, s, n));
  declare(c, S(c, "declare %s @%s(%s)", t, nm, t));
  return ins(c, res, "call " FMF " %s @%s(%s %s)", t, nm, t, x);
}

/* every lane of the shift count u is in [0, bits): a scalar by its range, a vector of scalars (constants,
 * a broadcast count) that each are */
static bool shift_in_range(const tkc_uop *u, int bits) {
  if (u->dtype.count <= 1) return u->vmin >= 0 && u->vmax < bits;
  if (u->op != TKC_OP_VECTORIZE) return false;
  for (int k = 0; k < u->nsrc; k++)
    if (u->src[k]->dtype.count != 1 || !shift_in_range(u->src[k], bits)) return false;
  return true;
}

/* integer op on scalar s (not bool) with n lanes */
static const char *int_alu(lctx *c, const tkc_uop *u, int op, int s, int n, const char *const *a, const char *res) {
  const char *t = ty(c, s, n, false), *ct = ty(c, TKC_BOOL, n, false);
  bool uns = sc_unsigned(s);
  switch (op) {
  case TKC_OP_ADD: return ins(c, res, "add %s %s, %s", t, a[0], a[1]);
  case TKC_OP_SUB: return ins(c, res, "sub %s %s, %s", t, a[0], a[1]);
  case TKC_OP_MUL: return ins(c, res, "mul %s %s, %s", t, a[0], a[1]);
  case TKC_OP_AND: return ins(c, res, "and %s %s, %s", t, a[0], a[1]);
  case TKC_OP_OR: return ins(c, res, "or %s %s, %s", t, a[0], a[1]);
  case TKC_OP_XOR: return ins(c, res, "xor %s %s, %s", t, a[0], a[1]);
  case TKC_OP_NEG: return ins(c, res, "sub %s %s, %s", t, zero(c, s, n), a[0]);
  case TKC_OP_MULACC: return ins(c, res, "add %s %s, %s", t, ins(c, NULL, "mul %s %s, %s", t, a[0], a[1]), a[2]);
  case TKC_OP_MAX: {
    const char *lt = ins(c, NULL, "icmp %s %s %s, %s", uns ? "ult" : "slt", t, a[0], a[1]);
    return ins(c, res, "select %s %s, %s %s, %s %s", ct, lt, t, a[1], t, a[0]);
  }
  case TKC_OP_IDIV: case TKC_OP_MOD: { /* the target rules made the divisor safe (never 0 or -1) */
    if (!tkc_divisor_guarded(u->src[1], true)) return fail_unsupported(c, u, "a divisor that may be 0 or -1 (apply the target rules first)"), "";
    /* both operands known non-negative (an index over a loop's range): the unsigned op is the same
     * and LLVM makes a power of two a shift or a mask, without the sign fix-up */
    bool nonneg = u->src[0]->vmin >= 0 && u->src[1]->vmin > 0;
    const char *o = op == TKC_OP_IDIV ? (uns || nonneg ? "udiv" : "sdiv") : (uns || nonneg ? "urem" : "srem");
    return ins(c, res, "%s %s %s, %s", o, t, a[0], a[1]);
  }
  case TKC_OP_SHL: case TKC_OP_SHR: {
    const char *o = op == TKC_OP_SHL ? "shl" : uns ? "lshr" : "ashr";
    int bits = reg_bits[s];
    const tkc_uop *cnt = u->src[1];
    if (shift_in_range(cnt, bits)) return ins(c, res, "%s %s %s, %s", o, t, a[0], a[1]);
    /* counts outside [0, bits) give INTERP's answer instead of poison: 0, or the sign fill of SHR */
    const char *ok = ins(c, NULL, "icmp ult %s %s, %s", t, a[1], iconst(c, s, n, bits));
    const char *sc = ins(c, NULL, "select %s %s, %s %s, %s %s", ct, ok, t, a[1], t, zero(c, s, n));
    const char *v = ins(c, NULL, "%s %s %s, %s", o, t, a[0], sc);
    const char *other = zero(c, s, n);
    if (op == TKC_OP_SHR && !uns) {
      const char *negc = ins(c, NULL, "icmp slt %s %s, %s", t, a[1], zero(c, s, n));
      const char *fill = ins(c, NULL, "ashr %s %s, %s", t, a[0], iconst(c, s, n, bits - 1));
      other = ins(c, NULL, "select %s %s, %s %s, %s %s", ct, negc, t, zero(c, s, n), t, fill);
    }
    return ins(c, res, "select %s %s, %s %s, %s %s", ct, ok, t, v, t, other);
  }
  default: return fail_unsupported(c, u, "this op needs a float dtype"), "";
  }
}

/* float op on scalar s (half, float, double) with n lanes */
static const char *float_alu(lctx *c, const tkc_uop *u, int op, int s, int n, const char *const *a, const char *res) {
  const char *t = ty(c, s, n, false);
  switch (op) {
  case TKC_OP_ADD: return ins(c, res, "fadd " FMF " %s %s, %s", t, a[0], a[1]);
  case TKC_OP_SUB: return ins(c, res, "fsub " FMF " %s %s, %s", t, a[0], a[1]);
  case TKC_OP_MUL: return ins(c, res, "fmul " FMF " %s %s, %s", t, a[0], a[1]);
  case TKC_OP_FDIV: return ins(c, res, "fdiv " FMF " %s %s, %s", t, a[0], a[1]);
  case TKC_OP_RECIP: return ins(c, res, "fdiv " FMF " %s %s, %s", t, fconst(c, s, n, 1.0), a[0]);
  case TKC_OP_NEG: return ins(c, res, "fneg " FMF " %s %s", t, a[0]);
  case TKC_OP_MAX: {
    const char *lt = ins(c, NULL, "fcmp olt %s %s, %s", t, a[0], a[1]);
    return ins(c, res, "select %s %s, %s %s, %s %s", ty(c, TKC_BOOL, n, false), lt, t, a[1], t, a[0]);
  }
  case TKC_OP_MULACC: { /* one fused multiply-add (llvm.fma); half through float, as INTERP */
    if (s == TKC_FLOAT16) {
      const char *ft = ty(c, TKC_FLOAT32, n, false), *x[3];
      for (int k = 0; k < 3; k++) x[k] = ins(c, NULL, "fpext %s %s to %s", t, a[k], ft);
      return ins(c, res, "fptrunc %s %s to %s", ft, float_alu(c, u, op, TKC_FLOAT32, n, x, NULL), t);
    }
    const char *nm = S(c, "llvm.fma.%s", mangle(c, s, n));
    declare(c, S(c, "declare %s @%s(%s, %s, %s)", t, nm, t, t, t));
    return ins(c, res, "call %s @%s(%s %s, %s %s, %s %s)", t, nm, t, a[0], t, a[1], t, a[2]);
  }
  case TKC_OP_SQRT: return call1(c, "sqrt", s, n, a[0], res);
  case TKC_OP_EXP2: return call1(c, "exp2", s, n, a[0], res);
  case TKC_OP_LOG2: return call1(c, "log2", s, n, a[0], res);
  case TKC_OP_SIN: return call1(c, "sin", s, n, a[0], res);
  case TKC_OP_POW: { /* in double for every float type, like INTERP: powf is not always correctly rounded */
    const char *dt = ty(c, TKC_FLOAT64, n, false), *x = a[0], *y = a[1];
    if (s != TKC_FLOAT64) {
      x = ins(c, NULL, "fpext %s %s to %s", t, a[0], dt);
      y = ins(c, NULL, "fpext %s %s to %s", t, a[1], dt);
    }
    const char *nm = S(c, "llvm.pow.%s", mangle(c, TKC_FLOAT64, n));
    declare(c, S(c, "declare %s @%s(%s, %s)", dt, nm, dt, dt));
    if (s == TKC_FLOAT64) return ins(c, res, "call " FMF " %s @%s(%s %s, %s %s)", t, nm, t, x, t, y);
    const char *p = ins(c, NULL, "call " FMF " %s @%s(%s %s, %s %s)", dt, nm, dt, x, dt, y);
    return ins(c, res, "fptrunc %s %s to %s", dt, p, t);
  }
  default: return fail_unsupported(c, u, "this op needs an integer dtype"), "";
  }
}

/* an ALU UOp (not CAST/BITCAST); res names its value */
static const char *render_alu(lctx *c, const tkc_uop *u, const char *res) {
  int op = u->op, s = u->dtype.scalar, n = u->dtype.count;
  unsigned fl = tkc_op_flags((tkc_op)op);
  int need = (fl & TKC_F_T) || op == TKC_OP_MULACC ? 3 : (fl & TKC_F_B) ? 2 : 1;
  if (u->nsrc != need) return fail_unsupported(c, u, "wrong number of sources"), "";
  if (op == TKC_OP_THREEFRY) return fail_unsupported(c, u, NULL), "";
  if (op != TKC_OP_WHERE && (s == TKC_BFLOAT16 || u->src[0]->dtype.scalar == TKC_BFLOAT16))
    return fail_unsupported(c, u, "bfloat16 arithmetic is done in float by the target rules"), "";
  if (op == TKC_OP_CMPLT || op == TKC_OP_CMPNE) {
    int si = u->src[0]->dtype.scalar, ni = n > 1 ? n : u->src[0]->dtype.count;
    if (s != TKC_BOOL || u->src[1]->dtype.scalar != si) return fail_unsupported(c, u, "compares give bool from two operands of one dtype"), "";
    const char *x = RV(c, u->src[0], ni), *y = RV(c, u->src[1], ni), *t = ty(c, si, ni, false);
    if (sc_float(si)) return ins(c, res, "fcmp %s %s %s, %s", op == TKC_OP_CMPLT ? "olt" : "une", t, x, y);
    return ins(c, res, "icmp %s %s %s, %s", op == TKC_OP_CMPNE ? "ne" : si == TKC_BOOL || sc_unsigned(si) ? "ult" : "slt", t, x, y);
  }
  if (op == TKC_OP_WHERE) {
    const tkc_uop *cs = u->src[0];
    const char *g = R(c, cs);
    if (cs->dtype.scalar != TKC_BOOL) g = ne_zero(c, cs->dtype.scalar, cs->dtype.count, g, NULL);
    if (cs->dtype.count != 1 && cs->dtype.count != n) return fail_unsupported(c, u, "condition width"), "";
    const char *t = ty(c, s, n, false);
    return ins(c, res, "select %s %s, %s %s, %s %s", ty(c, TKC_BOOL, cs->dtype.count, false), g, t, RV(c, u->src[1], n), t, RV(c, u->src[2], n));
  }
  const char *a[3] = {NULL, NULL, NULL};
  for (int k = 0; k < need; k++) {
    if (u->src[k]->dtype.scalar != s) return fail_unsupported(c, u, "operands of another dtype"), "";
    a[k] = RV(c, u->src[k], n);
  }
  if (s == TKC_BOOL) {
    if (op == TKC_OP_AND || op == TKC_OP_OR || op == TKC_OP_XOR || op == TKC_OP_MAX) {
      const char *t = ty(c, TKC_BOOL, n, false);
      return ins(c, res, "%s %s %s, %s", op == TKC_OP_AND ? "and" : op == TKC_OP_XOR ? "xor" : "or", t, a[0], a[1]);
    }
    if (!(op == TKC_OP_ADD || op == TKC_OP_SUB || op == TKC_OP_MUL || op == TKC_OP_SHL || op == TKC_OP_SHR || op == TKC_OP_NEG ||
          op == TKC_OP_MULACC)) /* IDIV/MOD of bool: AND / false by the target rules */
      return fail_unsupported(c, u, "this op on bool"), "";
    /* Python bool arithmetic: on 0/1 integers, then != 0 */
    const char *w[3] = {NULL, NULL, NULL};
    for (int k = 0; k < need; k++) w[k] = ins(c, NULL, "zext %s %s to %s", ty(c, TKC_BOOL, n, false), a[k], ty(c, TKC_UINT8, n, false));
    const char *v = int_alu(c, u, op, TKC_UINT8, n, w, NULL);
    return ins(c, res, "icmp ne %s %s, %s", ty(c, TKC_UINT8, n, false), v, zero(c, TKC_UINT8, n));
  }
  if (sc_int(s)) return int_alu(c, u, op, s, n, a, res);
  if (sc_float(s)) return float_alu(c, u, op, s, n, a, res);
  return fail_unsupported(c, u, NULL), "";
}

/* ---------------------------------------------------------------- memory */

static bool render_load(lctx *c, size_t i, const tkc_uop *u) {
  const tkc_uop *p = u->src[0];
  if (!p->dtype.space || p->dtype.pcount > 1) return fail_unsupported(c, u, "LOAD from a non-pointer");
  tkc_dt base = tkc_dt_base(p->dtype);
  int s = base.scalar, n = base.count;
  if (s >= TKC_VOID || s != u->dtype.scalar || n != u->dtype.count) return fail_unsupported(c, u, "LOAD of another dtype than its pointer's");
  const char *mt = ty(c, s, n, true), *rt = T(c, u->dtype), *pe = R(c, p), *nm = fresh(c, PFX_VAL);
  unsigned align = (unsigned)tkc_dtype_size((tkc_dtype)s);
  if (u->nsrc < 3) {
    bool conv = s == TKC_BOOL || s == TKC_BFLOAT16;
    const char *raw = ins(c, conv ? NULL : nm, "load %s, ptr %s, align %u", mt, pe, align);
    c->r[i] = mem_to_reg(c, s, n, raw, conv ? nm : NULL);
    return !c->failed;
  }
  const tkc_uop *gate = u->src[2];
  if (gate->dtype.scalar != TKC_BOOL || gate->dtype.count != 1) return fail_unsupported(c, u, "the gate of a LOAD must be one bool");
  if (!tkc_dt_eq(u->src[1]->dtype, u->dtype)) return fail_unsupported(c, u, "the alternative value of a gated LOAD has another dtype");
  const char *alt = R(c, u->src[1]), *g = R(c, gate), *b = nm + 1;
  line(c, "  br label %%%s.entry", b);
  line(c, "%s.entry:", b);
  line(c, "  br i1 %s, label %%%s.load, label %%%s.exit", g, b, b);
  line(c, "%s.load:", b);
  const char *raw = ins(c, NULL, "load %s, ptr %s, align %u", mt, pe, align);
  const char *v = mem_to_reg(c, s, n, raw, NULL);
  line(c, "  br label %%%s.exit", b);
  line(c, "%s.exit:", b);
  ins(c, nm, "phi %s [%s, %%%s.load], [%s, %%%s.entry]", rt, v, b, alt, b);
  c->r[i] = nm;
  return !c->failed;
}

static bool render_store(lctx *c, const tkc_uop *u) {
  if (u->nsrc < 2) return fail_unsupported(c, u, "STORE needs an address and a value");
  const tkc_uop *p = u->src[0], *v = u->src[1];
  if (!p->dtype.space || p->dtype.pcount > 1) return fail_unsupported(c, u, "STORE to a non-pointer");
  tkc_dt base = tkc_dt_base(p->dtype);
  int s = base.scalar, n = base.count;
  if (s >= TKC_VOID || v->dtype.space || v->dtype.scalar != s || (v->dtype.count != n && v->dtype.count != 1))
    return fail_unsupported(c, u, "STORE of another dtype than its pointer's");
  const char *pe = R(c, p), *x = reg_to_mem(c, s, n, RV(c, v, n));
  line(c, "  store %s %s, ptr %s, align %u", ty(c, s, n, true), x, pe, (unsigned)tkc_dtype_size((tkc_dtype)s));
  return !c->failed;
}

/* ---------------------------------------------------------------- scopes */

static bool open_scope(lctx *c, size_t i, const tkc_uop *u) {
  if (c->depth >= (int)c->n) return fail_internal(c, "scopes nested too deep");
  scope *sc = &c->stack[c->depth++];
  memset(sc, 0, sizeof *sc);
  sc->u = u;
  sc->kind = u->op;
  sc->ord = c->scopeord[i];
  if (c->nacc) {
    sc->entry = pool_alloc(c, (size_t)c->nacc * sizeof *sc->entry);
    sc->slot = pool_alloc(c, (size_t)c->nacc * sizeof *sc->slot);
    if (!sc->entry || !sc->slot) return false;
    for (int j = 0; j < c->nacc; j++) sc->entry[j] = NULL;
  }
  if (u->op == TKC_OP_RANGE) {
    if (u->nsrc != 2 || u->dtype.count != 1 || !sc_int(u->dtype.scalar)) return fail_unsupported(c, u, "RANGE needs (start, end) of an integer dtype");
    int k = sc->id = c->nrange++;
    const tkc_uop *st = u->src[0], *en = u->src[1];
    const char *t = T(c, u->dtype), *s0 = R(c, st);
    sc->end = R(c, en);
    sc->guarded = !(tkc_uop_is_const(st) && tkc_uop_is_const(en) && tkc_uop_const_i(st) < tkc_uop_const_i(en));
    if (u == c->split) { /* this core's contiguous chunk of [start, end), computed in i64 */
      bool wide = reg_bits[u->dtype.scalar] == 64;
      const char *ext = sc_unsigned(u->dtype.scalar) ? "zext" : "sext";
      const char *s64 = wide ? s0 : ins(c, "%core.s64", "%s %s %s to i64", ext, t, s0);
      const char *e64 = wide ? sc->end : ins(c, "%core.e64", "%s %s %s to i64", ext, t, sc->end);
      ins(c, "%core.n", "sub i64 %s, %s", e64, s64);
      ins(c, "%core.i64", "sext i32 %%core to i64");
      ins(c, "%core.nc64", "sext i32 %%ncores to i64");
      ins(c, "%core.next", "add i64 %%core.i64, 1");
      ins(c, "%core.lom", "mul i64 %%core.n, %%core.i64");
      ins(c, "%core.lod", "sdiv i64 %%core.lom, %%core.nc64");
      ins(c, "%core.hil", "mul i64 %%core.n, %%core.next");
      ins(c, "%core.hid", "sdiv i64 %%core.hil, %%core.nc64");
      if (wide) {
        s0 = ins(c, "%core.lo", "add i64 %s, %%core.lod", s64);
        sc->end = ins(c, "%core.hi", "add i64 %s, %%core.hid", s64);
      } else {
        ins(c, "%core.lo64", "add i64 %s, %%core.lod", s64);
        ins(c, "%core.hi64", "add i64 %s, %%core.hid", s64);
        s0 = ins(c, "%core.lo", "trunc i64 %%core.lo64 to %s", t);
        sc->end = ins(c, "%core.hi", "trunc i64 %%core.hi64 to %s", t);
      }
      sc->guarded = true; /* a core's chunk may be empty */
    }
    line(c, "  br label %%loop_entry_%d", k);
    line(c, "loop_entry_%d:", k);
    if (sc->guarded) {
      const char *go = ins(c, S(c, "%%ridx%d.go", k), "icmp %s %s %s, %s", sc_unsigned(u->dtype.scalar) ? "ult" : "slt", t, s0, sc->end);
      line(c, "  br i1 %s, label %%loop_body_%d, label %%loop_exit_%d", go, k, k);
    } else {
      line(c, "  br label %%loop_body_%d", k);
    }
    line(c, "loop_body_%d:", k);
    c->r[i] = S(c, "%%ridx%d", k);
    ins(c, c->r[i], "phi %s [%s, %%loop_entry_%d], [%%ridx%d.next, %%loop_latch_%d]", t, s0, k, k, k);
    for (int j = 0; j < c->nacc; j++) /* accumulators carried around this loop */
      if (c->marks[(size_t)sc->ord * c->nacc + j]) {
        sc->entry[j] = c->accs[j].cur;
        sc->slot[j] = push_line(c, ""); /* the header phi, filled in at ENDRANGE */
        c->accs[j].cur = S(c, "%%acc%d.h%d", j, k);
      }
  } else {
    if (u->nsrc < 1 || u->src[0]->dtype.scalar != TKC_BOOL || u->src[0]->dtype.count != 1) return fail_unsupported(c, u, "IF needs one bool gate");
    int k = sc->id = c->nif++;
    const char *g = R(c, u->src[0]);
    line(c, "  br label %%if_head_%d", k);
    line(c, "if_head_%d:", k);
    line(c, "  br i1 %s, label %%if_body_%d, label %%if_end_%d", g, k, k);
    line(c, "if_body_%d:", k);
    for (int j = 0; j < c->nacc; j++)
      if (c->marks[(size_t)sc->ord * c->nacc + j]) sc->entry[j] = c->accs[j].cur;
  }
  return !c->failed;
}

static bool close_scope(lctx *c, const tkc_uop *u) {
  int want = u->op == TKC_OP_ENDRANGE ? TKC_OP_RANGE : TKC_OP_IF;
  if (c->depth == 0 || u->nsrc < 1 || c->stack[c->depth - 1].u != u->src[0] || c->stack[c->depth - 1].kind != want)
    return fail_internal(c, u->op == TKC_OP_ENDRANGE ? "ENDRANGE does not close the innermost RANGE" : "ENDIF does not close the innermost IF");
  scope *sc = &c->stack[--c->depth];
  int k = sc->id;
  if (want == TKC_OP_RANGE) {
    const char *t = T(c, sc->u->dtype), *cmp = sc_unsigned(sc->u->dtype.scalar) ? "ult" : "slt";
    line(c, "  br label %%loop_latch_%d", k);
    line(c, "loop_latch_%d:", k);
    /* ridx < end <= the type's max, so the increment never wraps */
    ins(c, S(c, "%%ridx%d.next", k), "add %s %s %%ridx%d, 1", sc_unsigned(sc->u->dtype.scalar) ? "nuw" : "nsw", t, k);
    ins(c, S(c, "%%ridx%d.cont", k), "icmp %s %s %%ridx%d.next, %s", cmp, t, k, sc->end);
    line(c, "  br i1 %%ridx%d.cont, label %%loop_body_%d, label %%loop_exit_%d", k, k, k);
    line(c, "loop_exit_%d:", k);
    for (int j = 0; j < c->nacc; j++) {
      if (!sc->entry || !sc->entry[j]) continue;
      const char *at = T(c, c->accs[j].dt), *latch = c->accs[j].cur;
      c->lines[sc->slot[j]] = S(c, "  %%acc%d.h%d = phi %s [%s, %%loop_entry_%d], [%s, %%loop_latch_%d]", j, k, at, sc->entry[j], k, latch, k);
      if (sc->guarded) c->accs[j].cur = ins(c, S(c, "%%acc%d.x%d", j, k), "phi %s [%s, %%loop_entry_%d], [%s, %%loop_latch_%d]", at, sc->entry[j], k, latch, k);
      else c->accs[j].cur = latch; /* the body ran: its value reaches the exit */
    }
  } else {
    line(c, "  br label %%if_tail_%d", k);
    line(c, "if_tail_%d:", k);
    line(c, "  br label %%if_end_%d", k);
    line(c, "if_end_%d:", k);
    for (int j = 0; j < c->nacc; j++) {
      if (!sc->entry || !sc->entry[j]) continue;
      c->accs[j].cur = ins(c, S(c, "%%acc%d.m%d", j, k), "phi %s [%s, %%if_head_%d], [%s, %%if_tail_%d]", T(c, c->accs[j].dt), sc->entry[j], k, c->accs[j].cur, k);
    }
  }
  return !c->failed;
}

/* ---------------------------------------------------------------- names */

/* the parameter of a DEFINE_VAR: %var.NAME, or a sanitized unique form */
static const char *var_pname(lctx *c, const char *name) {
  if (tkc_render_is_ident(name)) {
    bool dup = false;
    for (size_t i = 0; i < c->nvars; i++)
      if (!strcmp(c->vars[i].name, name)) dup = true;
    if (!dup) return S(c, "%%var.%s", name);
  }
  tkc_sbuf b = {0};
  for (const char *p = name; p && *p; p++) {
    char ch = *p;
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
    tkc_sbuf_printf(&b, "%c", ok ? ch : '_');
  }
  if (b.oom) { tkc_free(b.s); fail_oom(c); return ""; }
  const char *s = S(c, "%%var.%s.%zu", b.s ? b.s : "", c->nvars);
  tkc_free(b.s);
  return s;
}

/* ---------------------------------------------------------------- one UOp */

static bool render_one(lctx *c, size_t i) {
  const tkc_uop *u = c->uops[i];
  switch ((tkc_op)u->op) {
  case TKC_OP_NAME: case TKC_OP_SINK: return true;
  case TKC_OP_NOOP:
    if (u->nsrc >= 1) c->r[i] = R(c, u->src[0]);
    return !c->failed;
  case TKC_OP_DEFINE_GLOBAL:
    if (!u->dtype.space || u->dtype.pcount > 1 || u->arg.kind != TKC_ARG_INT || u->arg.v.i < 0 || u->arg.v.i > 65535)
      return fail_unsupported(c, u, "DEFINE_GLOBAL needs a pointer dtype and an int arg");
    c->r[i] = S(c, "%%data%lld", (long long)u->arg.v.i);
    return !c->failed;
  case TKC_OP_DEFINE_VAR: {
    if (u->arg.kind != TKC_ARG_TUPLE || u->arg.n < 1 || u->arg.v.t[0].kind != TKC_ARG_STR)
      return fail_unsupported(c, u, "DEFINE_VAR needs a (name, min, max) arg");
    if (u->dtype.scalar != TKC_INT32 || u->dtype.count != 1 || u->dtype.space) return fail_unsupported(c, u, "DEFINE_VAR must be int32");
    const char *name = u->arg.v.t[0].v.s;
    c->r[i] = var_pname(c, name);
    c->vars[c->nvars].name = name;
    c->vars[c->nvars].pname = c->r[i];
    c->nvars++;
    return !c->failed;
  }
  case TKC_OP_CONST: case TKC_OP_VCONST: {
    int s = u->dtype.scalar, n = u->dtype.count;
    if (u->dtype.space || s >= TKC_VOID) return fail_unsupported(c, u, NULL);
    if (u->op == TKC_OP_VCONST && (u->arg.kind != TKC_ARG_TUPLE || (int)u->arg.n != n)) return fail_unsupported(c, u, "VCONST arg");
    if (u->op == TKC_OP_CONST) {
      const char *e = const_str(c, s, &u->arg);
      c->r[i] = n > 1 ? splat(c, reg_ty[s], n, e) : e;
    } else {
      tkc_sbuf b = {0};
      tkc_sbuf_puts(&b, "<");
      for (int k = 0; k < n; k++) tkc_sbuf_printf(&b, "%s%s %s", k ? ", " : "", reg_ty[s], const_str(c, s, &u->arg.v.t[k]));
      tkc_sbuf_puts(&b, ">");
      if (b.oom) { tkc_free(b.s); fail_oom(c); return false; }
      c->r[i] = S(c, "%s", b.s ? b.s : "");
      tkc_free(b.s);
    }
    return !c->failed;
  }
  case TKC_OP_RANGE: case TKC_OP_IF: return open_scope(c, i, u);
  case TKC_OP_ENDRANGE: case TKC_OP_ENDIF: return close_scope(c, u);
  case TKC_OP_DEFINE_ACC: {
    if (u->nsrc < 1 || u->dtype.space || u->dtype.scalar >= TKC_VOID) return fail_unsupported(c, u, "DEFINE_ACC needs an initial value");
    if (!tkc_dt_eq(u->src[0]->dtype, u->dtype)) return fail_unsupported(c, u, "the initial value has another dtype");
    c->accs[c->accidx[i]].cur = R(c, u->src[0]);
    return !c->failed;
  }
  case TKC_OP_ASSIGN: {
    if (u->nsrc != 2 || u->src[0]->op != TKC_OP_DEFINE_ACC) return fail_unsupported(c, u, "ASSIGN needs (DEFINE_ACC, value)");
    int p = posof(c, u->src[0]);
    if (p < 0 || (size_t)p > i || c->accidx[p] < 0) return fail_internal(c, "ASSIGN before its DEFINE_ACC");
    if (!tkc_dt_eq(u->src[1]->dtype, u->src[0]->dtype)) return fail_unsupported(c, u, "the value has another dtype than the accumulator");
    c->accs[c->accidx[p]].cur = R(c, u->src[1]);
    return !c->failed;
  }
  case TKC_OP_INDEX: {
    if (u->nsrc != 2) return fail_unsupported(c, u, "INDEX must be (buf, idx): gates belong on LOAD/STORE");
    const tkc_uop *b = u->src[0], *x = u->src[1];
    if (!u->dtype.space || u->dtype.pcount > 1 || !b->dtype.space || x->dtype.count != 1 || !sc_int(x->dtype.scalar)) return fail_unsupported(c, u, NULL);
    int s = tkc_dt_base(b->dtype).scalar;
    if (s >= TKC_VOID) return fail_unsupported(c, u, "INDEX into a void buffer");
    if (tkc_uop_is_const(x) && tkc_uop_const_i(x) == 0) {
      c->r[i] = R(c, b);
      return !c->failed;
    }
    const char *xe = R(c, x), *it = reg_ty[x->dtype.scalar];
    /* GEP sign-extends its index: a narrower unsigned index is zero-extended to i64 first */
    if (sc_unsigned(x->dtype.scalar) && x->dtype.scalar != TKC_UINT64) {
      xe = ins(c, NULL, "zext %s %s to i64", it, xe);
      it = "i64";
    }
    c->r[i] = ins(c, fresh(c, PFX_IDX), "getelementptr inbounds %s, ptr %s, %s %s", mem_ty[s], R(c, b), it, xe);
    return !c->failed;
  }
  case TKC_OP_LOAD:
    if (u->nsrc < 1) return fail_unsupported(c, u, "LOAD needs an address");
    return render_load(c, i, u);
  case TKC_OP_STORE: return render_store(c, u);
  case TKC_OP_GEP: {
    if (u->nsrc != 1 || u->dtype.space) return fail_unsupported(c, u, NULL);
    const tkc_uop *s = u->src[0];
    int nidx = u->arg.kind == TKC_ARG_TUPLE ? (int)u->arg.n : u->arg.kind == TKC_ARG_INT ? 1 : 0;
    if (nidx < 1 || nidx != u->dtype.count || s->dtype.scalar != u->dtype.scalar) return fail_unsupported(c, u, "GEP arg");
    int64_t idx[256];
    if (nidx > 256) return fail_unsupported(c, u, "GEP of more than 256 lanes");
    for (int k = 0; k < nidx; k++) {
      idx[k] = u->arg.kind == TKC_ARG_INT ? u->arg.v.i : u->arg.v.t[k].v.i;
      if (idx[k] < 0 || idx[k] >= (s->dtype.count > 1 ? s->dtype.count : 1)) return fail_unsupported(c, u, "GEP lane out of range");
    }
    const char *x = R(c, s);
    if (s->dtype.count <= 1) { /* every lane is the scalar itself */
      c->r[i] = nidx == 1 ? x : RV(c, s, nidx);
      return !c->failed;
    }
    const char *st = T(c, s->dtype);
    if (nidx == 1) {
      c->r[i] = ins(c, fresh(c, PFX_GEP), "extractelement %s %s, i32 %lld", st, x, (long long)idx[0]);
    } else {
      tkc_sbuf b = {0};
      for (int k = 0; k < nidx; k++) tkc_sbuf_printf(&b, "%si32 %lld", k ? ", " : "", (long long)idx[k]);
      if (b.oom) { tkc_free(b.s); fail_oom(c); return false; }
      c->r[i] = ins(c, fresh(c, PFX_GEP), "shufflevector %s %s, %s poison, <%d x i32> <%s>", st, x, st, nidx, b.s ? b.s : "");
      tkc_free(b.s);
    }
    return !c->failed;
  }
  case TKC_OP_VECTORIZE: {
    int n = u->dtype.count, s = u->dtype.scalar;
    if (n <= 1 || u->nsrc != n || u->dtype.space || s >= TKC_VOID) return fail_unsupported(c, u, "VECTORIZE needs one scalar per lane");
    bool all_const = true, all_same = true;
    for (int k = 0; k < n; k++) {
      if (u->src[k]->dtype.count != 1 || u->src[k]->dtype.scalar != s || u->src[k]->dtype.space) return fail_unsupported(c, u, "VECTORIZE of vectors or of another dtype");
      if (u->src[k]->op != TKC_OP_CONST) all_const = false;
      if (u->src[k] != u->src[0]) all_same = false;
    }
    const char *et = reg_ty[s], *vt = T(c, u->dtype);
    if (all_const) { /* a constant vector */
      tkc_sbuf b = {0};
      tkc_sbuf_puts(&b, "<");
      for (int k = 0; k < n; k++) tkc_sbuf_printf(&b, "%s%s %s", k ? ", " : "", et, R(c, u->src[k]));
      tkc_sbuf_puts(&b, ">");
      if (b.oom) { tkc_free(b.s); fail_oom(c); return false; }
      c->r[i] = S(c, "%s", b.s ? b.s : "");
      tkc_free(b.s);
    } else if (all_same) { /* a splat */
      const char *one = ins(c, NULL, "insertelement <1 x %s> poison, %s %s, i32 0", et, et, R(c, u->src[0]));
      c->r[i] = ins(c, fresh(c, PFX_VEC), "shufflevector <1 x %s> %s, <1 x %s> poison, <%d x i32> zeroinitializer", et, one, et, n);
    } else {
      const char *v = "poison", *nm = fresh(c, PFX_VEC);
      for (int k = 0; k < n; k++) v = ins(c, k == n - 1 ? nm : NULL, "insertelement %s %s, %s %s, i32 %d", vt, v, et, R(c, u->src[k]), k);
      c->r[i] = v;
    }
    return !c->failed;
  }
  case TKC_OP_CAST: case TKC_OP_BITCAST: {
    if (u->nsrc != 1) return fail_unsupported(c, u, NULL);
    const tkc_uop *s = u->src[0];
    if (u->dtype.space || s->dtype.space) { /* pointer casts are free with opaque pointers */
      if (!u->dtype.space || !s->dtype.space || u->dtype.pcount > 1 || s->dtype.pcount > 1) return fail_unsupported(c, u, "CAST between a value and a pointer");
      c->r[i] = R(c, s);
      return !c->failed;
    }
    if (u->dtype.scalar >= TKC_VOID || s->dtype.scalar >= TKC_VOID) return fail_unsupported(c, u, NULL);
    const char *x = R(c, s), *nm = fresh(c, PFX_CAST);
    if (u->op == TKC_OP_CAST) {
      if (s->dtype.count != u->dtype.count) return fail_unsupported(c, u, "CAST changing the vector width");
      c->r[i] = convert(c, u, s->dtype.scalar, u->dtype.scalar, u->dtype.count, x, nm);
    } else {
      if (tkc_dt_itemsize(s->dtype) != tkc_dt_itemsize(u->dtype)) return fail_unsupported(c, u, "BITCAST between types of different sizes");
      c->r[i] = bitcast(c, u, s->dtype.scalar, s->dtype.count, u->dtype.scalar, u->dtype.count, x, nm);
    }
    return !c->failed;
  }
  default:
    if (op_is_alu(u->op) && !u->dtype.space && u->dtype.scalar < TKC_VOID) {
      c->r[i] = render_alu(c, u, fresh(c, PFX_ALU));
      return !c->failed;
    }
    return fail_unsupported(c, u, NULL);
  }
}

/* ---------------------------------------------------------------- the renderer */

/* accumulators, scopes, and which accumulators each scope must carry */
static bool prepass(lctx *c) {
  for (size_t i = 0; i < c->n; i++) {
    const tkc_uop *u = c->uops[i];
    c->accidx[i] = c->scopeord[i] = -1;
    if (c->pos[u->id] != (int32_t)i) continue;
    if (u->op == TKC_OP_DEFINE_ACC) c->accidx[i] = c->nacc++;
    if (u->op == TKC_OP_RANGE || u->op == TKC_OP_IF) c->scopeord[i] = c->nscopes++;
  }
  c->accs = tkc_calloc((size_t)c->nacc + 1, sizeof *c->accs);
  c->marks = tkc_calloc((size_t)c->nacc * (size_t)c->nscopes + 1, 1);
  int *open = tkc_malloc((c->n + 1) * sizeof *open); /* positions of the open scopes */
  if (!c->accs || !c->marks || !open) { tkc_free(open); fail_oom(c); return false; }
  int depth = 0;
  for (size_t i = 0; i < c->n; i++) {
    const tkc_uop *u = c->uops[i];
    if (c->pos[u->id] != (int32_t)i) continue;
    if (c->scopeord[i] >= 0) open[depth++] = (int)i;
    else if ((u->op == TKC_OP_ENDRANGE || u->op == TKC_OP_ENDIF) && depth > 0) depth--;
    else if (u->op == TKC_OP_DEFINE_ACC) {
      accum *a = &c->accs[c->accidx[i]];
      a->dt = u->dtype;
      a->defpos = i;
    } else if (u->op == TKC_OP_ASSIGN && u->nsrc >= 1) {
      int p = posof(c, u->src[0]);
      if (p < 0 || c->accidx[p] < 0 || (size_t)p > i) continue; /* reported when rendered */
      int j = c->accidx[p];
      for (int k = 0; k < depth; k++)
        if ((size_t)open[k] > c->accs[j].defpos) c->marks[(size_t)c->scopeord[open[k]] * c->nacc + j] = 1;
    }
  }
  tkc_free(open);
  return true;
}

static char *render_llvm(const tkc_renderer *self, const char *name, tkc_uop *const *uops, size_t n) {
  (void)self;
  if (!name) name = "kernel";
  if (!tkc_render_is_ident(name)) return tkc_err_null(TKC_EINVAL, "LLVM renderer: kernel name \"%s\" is not an identifier", name);
  if (n && !uops) return tkc_err_null(TKC_EINVAL, "LLVM renderer: NULL uops");
  lctx c;
  memset(&c, 0, sizeof c);
  c.uops = uops;
  c.n = n;
  if (tkc_render_posmap("LLVM", uops, n, &c.pos, &c.npos) != TKC_OK) return NULL;
  c.r = tkc_calloc(n + 1, sizeof *c.r);
  c.accidx = tkc_calloc(n + 1, sizeof *c.accidx);
  c.scopeord = tkc_calloc(n + 1, sizeof *c.scopeord);
  c.stack = tkc_calloc(n + 1, sizeof *c.stack);
  c.vars = tkc_calloc(n + 1, sizeof *c.vars);
  char *out = NULL;
  if (!c.r || !c.accidx || !c.scopeord || !c.stack || !c.vars) { fail_oom(&c); goto done; }
  if (tkc_render_params_collect("LLVM", uops, n, &c.params) != TKC_OK) { c.failed = true; goto done; }
  if (!prepass(&c)) goto done;

  line(&c, "entry:");
  c.split = tkc_render_pick_split(uops, n, c.pos);
  if (!c.split) { /* no output loop to split: core 0 does it all */
    line(&c, "  %%core.other = icmp ne i32 %%core, 0");
    line(&c, "  br i1 %%core.other, label %%not_core0, label %%core0");
    line(&c, "not_core0:");
    line(&c, "  ret void");
    line(&c, "core0:");
  }
  for (size_t i = 0; i < n && !c.failed; i++) {
    if (c.pos[uops[i]->id] != (int32_t)i) continue;
    if (!render_one(&c, i)) c.failed = true;
  }
  if (!c.failed && c.depth) fail_internal(&c, "a RANGE or IF is never closed");
  if (c.failed) goto done;

  /* parameters: buffers by number (gaps filled), then variables by name */
  tkc_sbuf o = {0};
  tkc_sbuf_printf(&o, "define void @%s(", name);
  int np = 0;
  int64_t next = 0;
  for (size_t k = 0; k < c.params.nbufs; k++) {
    int64_t num = c.params.bufs[k];
    for (; next < num; next++) tkc_sbuf_printf(&o, "%sptr %%data%lld", np++ ? ", " : "", (long long)next);
    tkc_sbuf_printf(&o, "%sptr noalias align 32 %%data%lld", np++ ? ", " : "", (long long)num);
    next = num + 1;
  }
  for (size_t k = 0; k < c.params.nvars; k++) { /* each DEFINE_VAR was rendered (its parameter named) */
    int p = posof(&c, c.params.vars[k]);
    tkc_sbuf_printf(&o, "%si32 %s", np++ ? ", " : "", p >= 0 && c.r[p] ? c.r[p] : "%var.missing");
  }
  /* the launch's core number and core count (see tkc_render_pick_split) */
  tkc_sbuf_printf(&o, "%si32 %%core, i32 %%ncores", np ? ", " : "");
  tkc_sbuf_puts(&o, ") #0 {\n");
  for (size_t k = 0; k < c.nlines; k++) {
    tkc_sbuf_puts(&o, c.lines[k]);
    tkc_sbuf_puts(&o, "\n");
  }
  tkc_sbuf_puts(&o, "  ret void\n}\n\n");
  for (size_t k = 0; k < c.ndecls; k++) tkc_sbuf_printf(&o, "%s\n", c.decls[k]);
  tkc_sbuf_puts(&o, "attributes #0 = { nounwind \"no-builtins\" \"no-trapping-math\"=\"true\" }\n");
  out = tkc_sbuf_take(&o);
  if (!out) c.failed = true;

done:
  tkc_free(c.pos);
  tkc_free(c.r);
  tkc_free(c.accidx);
  tkc_free(c.scopeord);
  tkc_free(c.stack);
  tkc_render_params_free(&c.params);
  tkc_free(c.vars);
  tkc_free(c.accs);
  tkc_free(c.marks);
  tkc_free(c.lines);
  tkc_free(c.decls);
  while (c.pool) {
    chunk *k = c.pool;
    c.pool = k->next;
    tkc_free(k);
  }
  if (c.failed) {
    tkc_free(out);
    return NULL;
  }
  return out;
}

/* ---------------------------------------------------------------- extra matcher (tinygrad's extra_matcher) */

/* RECIP(x) -> FDIV(1, x) */
static tkc_uop *recip_to_fdiv(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *r = tkc_match_root(m), *x = tkc_match_get(m, "x");
  if (!tkc_dt_is_float(r->dtype) || r->dtype.space) return NULL; /* ints: reported by the renderer */
  tkc_uop *s[2] = {tkc_uop_const_like(g, x, 1.0), x};
  return s[0] ? tkc_uop_new(g, TKC_OP_FDIV, r->dtype, 2, s, tkc_arg_none()) : NULL;
}

/* CAST(x) to bool -> CMPNE(x, 0) */
static tkc_uop *cast_to_bool(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *r = tkc_match_root(m), *x = tkc_match_get(m, "x");
  if (x->dtype.space || x->dtype.scalar >= TKC_VOID || x->dtype.count != r->dtype.count) return NULL;
  tkc_uop *s[2] = {x, tkc_dt_is_float(x->dtype) ? tkc_uop_const_like(g, x, 0.0) : tkc_uop_const_like_int(g, x, 0)};
  return s[1] ? tkc_uop_new(g, TKC_OP_CMPNE, r->dtype, 2, s, tkc_arg_none()) : NULL;
}

/* MAX(a, b) -> WHERE(CMPLT(a, b), b, a) */
static tkc_uop *max_to_where(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *r = tkc_match_root(m), *a = tkc_match_get(m, "a"), *b = tkc_match_get(m, "b");
  if (r->dtype.space || !tkc_dt_eq(a->dtype, r->dtype) || !tkc_dt_eq(b->dtype, r->dtype)) return NULL;
  tkc_uop *ab[2] = {a, b};
  tkc_uop *lt = tkc_uop_new(g, TKC_OP_CMPLT, tkc_dt_vec(tkc_dt_of(TKC_BOOL), r->dtype.count), 2, ab, tkc_arg_none());
  tkc_uop *s[3] = {lt, b, a};
  return lt ? tkc_uop_new(g, TKC_OP_WHERE, r->dtype, 3, s, tkc_arg_none()) : NULL;
}

static const tkc_rule llvm_rules[] = {
    {"(RECIP x)", recip_to_fdiv},        /* 1/x as a division */
    {"(CAST<bool> x)", cast_to_bool},    /* (bool)x -> x != 0 */
    {"=(MAX a b)", max_to_where},        /* max(a, b) -> a < b ? b : a */
};

/* LLVM lacks: defined x/0 and INT_MIN/-1 (sdiv/srem are undefined there), bfloat16 arithmetic
 * (computed in double, as before the rules: the same results as INTERP) */
#define LLVM_TARGET (TKC_TARGET_GUARD_DIV_ZERO | TKC_TARGET_GUARD_DIV_MINUS1 | TKC_TARGET_BF16_BITS | TKC_TARGET_BF16_VIA_F64)

static const tkc_matcher *llvm_matcher(void) {
  static tkc_matcher *_Atomic own, *_Atomic all;
  const tkc_matcher *pm = tkc_matcher_static(&own, llvm_rules, TKC_COUNTOF(llvm_rules));
  return pm ? tkc_target_matcher(&all, pm, LLVM_TARGET) : NULL;
}

const tkc_renderer tkc_renderer_llvm = {
    .name = "LLVM",
    .device = "LLVM",
    .has_local = false,
    .has_shared = false,
    .supports_float4 = true,
    .global_max = {0, 0, 0},
    .local_max = {0, 0, 0},
    .shared_max = 0,
    .unsupported_dtypes = 0,
    .extra_matcher = llvm_matcher,
    .render = render_llvm,
};
