/* src/render/ptx.c — the "PTX" renderer (tinygrad's PTXRenderer, renderer/ptx.py): one `.entry`
 * function of PTX assembly per kernel, loaded by the CUDA device with cuModuleLoadDataEx and checked
 * offline with `ptxas`.
 *
 * Output shape:
 *   .version 7.0 / .target sm_80 / .address_size 64          (see src/render/ptx.h for the target)
 *   .visible .entry NAME(.param .u64 data0, ..., .param .s32 var0, ...)
 *   { .reg declarations; .shared arrays; body; ret; }
 * Parameters: buffers in DEFINE_GLOBAL arg order (a missing number gets an unused .u64 so positions
 * match the launch), then one .s32 per DEFINE_VAR sorted by name (strcmp): the launch's order.
 *
 * Backend rewrites (ptx_matcher, applied by the program driver before linearizing):
 *   bool x != y -> x ^ y;  bool x < y -> (x ^ true) & y        (there is no setp on predicates)
 *   RECIP/LOG2/SIN/SQRT/FDIV/POW on half -> the float32 op between casts  (no f16 form in PTX)
 *   bool LOAD/STORE -> uint8 LOAD/STORE + CAST                  (memory holds a byte)
 *   INDEX(buf, i) -> (int64)buf + (int64)i * itemsize           (64-bit byte addresses)
 *   CAST of a pointer -> its source                             (a byte address has no element type)
 *   a*b + c -> MULACC(a, b, c)                                  (mad.lo / fma.rn)
 * and the target rules of src/codegen/target_rules.h (PTX has no vector ALU, no bf16 arithmetic
 * before sm_90 and no defined x/0): integer IDIV/MOD guarded, bfloat16 as bits computed in float32,
 * vector ALU ops split into lanes. The renderer prints what those rules leave.
 *
 * Values and registers (semantics match the INTERP device, i.e. tkc_alu_eval):
 *   bool -> .pred (stored as a u8 0/1); int8/uint8 -> 16-bit registers holding the sign-/zero-extended
 *   value, loaded/stored as s8/u8 and re-extended after every op that can leave the 8-bit range;
 *   int16/32/64 -> .b16/.b32/.b64; float16 -> .f16; float32 -> .f32; float64 -> .f64;
 *   bfloat16 -> a 16-bit register holding its bits (the target rules compute in f32 and round).
 *   Float add/sub/mul/fma/div/rcp/sqrt use .rn (IEEE rounding; also stops ptxas from contracting
 *   a*b+c into an fma the kernel did not ask for). EXP2/LOG2/SIN use ex2/lg2/sin.approx for f32 (and
 *   ex2.approx.f16 for half); float64 has no such instructions, so EXP2/LOG2/SIN on f64 are rendered as
 *   inline polynomial sequences accurate to a few ulp (SIN: Cody-Waite reduction, exact to ~1e-16 for
 *   |x| < 2^30, degrading beyond). MAX is compare+select (max(a, b) = b > a ? b : a, as INTERP);
 *   CMPNE on floats is setp.neu (NaN != NaN). Integer IDIV/MOD print div/rem; the target rules have
 *   guarded every divisor not proven safe (x/0 = x%0 = 0, INT_MIN/-1 wraps, INT_MIN%-1 = 0), and
 *   one that is neither is refused. SHL/SHR take the count in the value's
 *   dtype: a negative count gives 0, counts >= the width saturate (0, or the sign for signed SHR).
 *   Casts: float->int truncates and saturates (cvt.rzi; NaN -> 0), int->int wraps, ->bool is != 0
 *   (NaN is true), float->float rounds to nearest even.
 * Memory: ld/st.global for buffers, ld/st.shared for DEFINE_LOCAL arrays (`.shared .align 16`),
 * vectors as .v2/.v4 accesses (the address must be aligned to the vector: a float4 LOAD at an element
 * offset that is a multiple of 4); gated loads are predicated with the alternate value moved in where
 * the gate is false; a STORE with a bool gate is predicated, one under IF(gate) sits in the IF block.
 * RANGE loops test their bound before the first iteration unless range analysis proves it is taken.
 * SPECIAL gidxN/lidxN read %ctaid/%tid. WMMA (arg as tinygrad's: (name, (N, M, K), dtype_in, dtype_out,
 * device, threads, upcast_axes, reduce_axes); dtypes as tkc_dtype ints or names) becomes
 * mma.sync.aligned: m16n8k16 f16->f32/f16 and bf16->f32, m16n8k8 f16->f32/f16 (sm_75+) and
 * tf32 (float) -> f32; the k16 shapes, bf16 and tf32 need sm_80.
 * POW is rewritten into ALU ops by the extra matcher (pow_rewrite: float64 arithmetic, accuracy there).
 * Not expressible (TKC_EUNSUPPORTED naming op, dtype and backend): THREEFRY, float IDIV/MOD,
 * shifts and transcendentals on bool, SPECIAL other than gidx/lidx, shared memory over 48 KiB. */
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "codegen/target_rules.h"
#include "render/ptx.h"
#include "render/render_util.h"
#include "render/renderers.h"
#include "uops/uop_internal.h"

/* ---------------------------------------------------------------- target selection */

#define ARCH_DEFAULT 80
static atomic_int arch_explicit; /* sm * 2 + ('a' suffix); 0 = unset */
static atomic_int arch_device;

/* "sm_86" / "sm_90a" -> sm * 2 + a, 0 when malformed or before sm_75 */
static int parse_arch(const char *s) {
  if (!s || strncmp(s, "sm_", 3)) return 0;
  int sm = 0, k = 3;
  while (s[k] >= '0' && s[k] <= '9' && sm < 10000) sm = sm * 10 + (s[k++] - '0');
  if (k == 3 || sm < 75 || sm > 9999) return 0;
  int a = 0;
  if (s[k] == 'a') a = 1, k++;
  return s[k] ? 0 : sm * 2 + a;
}

tkc_status tkc_ptx_set_arch(const char *arch) {
  if (!arch) {
    atomic_store(&arch_explicit, 0);
    return TKC_OK;
  }
  int code = parse_arch(arch);
  if (!code) return tkc_err(TKC_EINVAL, "PTX renderer: \"%s\" is not a CUDA target (sm_75 or newer, e.g. \"sm_80\")", arch);
  atomic_store(&arch_explicit, code);
  return TKC_OK;
}

void tkc_ptx_set_device_arch(int sm) { atomic_store(&arch_device, sm >= 75 && sm < 10000 ? sm * 2 : 0); }

/* the target in effect as sm*2+a; 0 with the error recorded */
static int arch_code(void) {
  int code = atomic_load(&arch_explicit);
  if (code) return code;
  const char *env = getenv("TKC_CUDA_ARCH");
  if (env && *env) {
    code = parse_arch(env);
    if (!code) tkc_err(TKC_EINVAL, "PTX renderer: TKC_CUDA_ARCH=\"%s\" is not a CUDA target (sm_75 or newer, e.g. \"sm_80\")", env);
    return code;
  }
  code = atomic_load(&arch_device);
  return code ? code : ARCH_DEFAULT * 2;
}

int tkc_ptx_arch(char *buf, size_t n) {
  int code = arch_code();
  if (buf && n) {
    buf[0] = 0;
    if (code) snprintf(buf, n, "sm_%d%s", code / 2, code & 1 ? "a" : "");
  }
  return code / 2;
}

const char *tkc_ptx_isa_version(int sm, bool arch_specific) {
  /* the first PTX ISA that knows each target, and at least 7.0 (ex2.approx.f16, mma.m16n8k16) */
  static const struct { int sm; const char *v; } t[] = {{75, "7.0"},  {80, "7.0"},  {86, "7.1"},  {87, "7.4"},
                                                       {88, "9.0"},  {89, "7.8"},  {90, "7.8"},  {100, "8.6"},
                                                       {101, "8.6"}, {103, "8.8"}, {110, "9.0"}, {120, "8.7"},
                                                       {121, "8.8"}};
  const char *v = "9.0"; /* newer than this table: the newest ISA we know */
  for (size_t i = 0; i < TKC_COUNTOF(t); i++)
    if (t[i].sm <= sm) v = t[i].v;
  if (sm > 121) v = "9.0";
  if (arch_specific && strcmp(v, "8.0") < 0) v = "8.0"; /* sm_90a */
  return v;
}

/* ---------------------------------------------------------------- registers and types */

enum { C_P, C_RS, C_R, C_RD, C_H, C_F, C_FD, C_N };
static const char *const cls_prefix[C_N] = {"%p", "%rs", "%r", "%rd", "%h", "%f", "%fd"};
static const char *const cls_decl[C_N] = {"pred", "b16", "b32", "b64", "f16", "f32", "f64"};
static const char *const cls_mov[C_N] = {"mov.pred", "mov.b16", "mov.b32", "mov.b64", "mov.b16", "mov.f32", "mov.f64"};
static const char *const cls_selp[C_N] = {NULL, "selp.b16", "selp.b32", "selp.b64", "selp.b16", "selp.f32", "selp.f64"};
static const char *const cls_bits[C_N] = {"pred", "b16", "b32", "b64", "b16", "b32", "b64"};

typedef struct tinfo {
  uint8_t cls;     /* register class */
  uint8_t bytes;   /* bytes in memory */
  const char *t;   /* type of arithmetic / compare instructions */
  const char *mem; /* type of ld/st */
  const char *cvt; /* type in cvt */
} tinfo;

static const tinfo TI[TKC_NDTYPES] = {
    [TKC_BOOL] = {C_P, 1, "pred", "u8", "u8"},        [TKC_INT8] = {C_RS, 1, "s16", "s8", "s8"},
    [TKC_UINT8] = {C_RS, 1, "u16", "u8", "u8"},       [TKC_INT16] = {C_RS, 2, "s16", "s16", "s16"},
    [TKC_UINT16] = {C_RS, 2, "u16", "u16", "u16"},    [TKC_INT32] = {C_R, 4, "s32", "s32", "s32"},
    [TKC_UINT32] = {C_R, 4, "u32", "u32", "u32"},     [TKC_INT64] = {C_RD, 8, "s64", "s64", "s64"},
    [TKC_UINT64] = {C_RD, 8, "u64", "u64", "u64"},    [TKC_FLOAT16] = {C_H, 2, "f16", "b16", "f16"},
    [TKC_BFLOAT16] = {C_RS, 2, "b16", "b16", "b16"},   [TKC_FLOAT32] = {C_F, 4, "f32", "f32", "f32"},
    [TKC_FLOAT64] = {C_FD, 8, "f64", "f64", "f64"},   [TKC_VOID] = {C_N, 0, NULL, NULL, NULL},
};

#define s_float(s) tkc_dtype_is_float((tkc_dtype)(s))
#define s_int(s) tkc_dtype_is_int((tkc_dtype)(s))
#define s_signed(s) tkc_render_is_signed(s)
/* int8/uint8 live sign-/zero-extended in 16-bit registers */
static bool s_byte(int s) { return s == TKC_INT8 || s == TKC_UINT8; }

#define NOREG UINT32_MAX
static uint32_t mkreg(int cls, uint32_t n) { return (uint32_t)cls << 24 | n; }
static int reg_cls(uint32_t r) { return (int)(r >> 24); }

typedef struct rname { char s[20]; } rname;
static rname regname(uint32_t r) {
  rname n;
  snprintf(n.s, sizeof n.s, "%s%u", cls_prefix[r >> 24 < C_N ? r >> 24 : 0], r & 0xffffffu);
  return n;
}
#define N(r) (regname(r).s)

/* hex float literals: 0fXXXXXXXX (f32), 0dXXXXXXXXXXXXXXXX (f64) */
typedef struct lit { char s[24]; } lit;
static lit f32lit(float f) {
  lit l;
  uint32_t b;
  memcpy(&b, &f, 4);
  snprintf(l.s, sizeof l.s, "0f%08X", (unsigned)b);
  return l;
}
static lit f64lit(double d) {
  lit l;
  uint64_t b;
  memcpy(&b, &d, 8);
  snprintf(l.s, sizeof l.s, "0d%016llX", (unsigned long long)b);
  return l;
}
#define F32(x) (f32lit(x).s)
#define F64(x) (f64lit(x).s)

/* ---------------------------------------------------------------- render context */

enum { SP_NONE, SP_GLOBAL, SP_SHARED };


typedef struct pctx {
  tkc_uop *const *uops;
  size_t n;
  int32_t *pos; /* uop id -> position, -1 */
  uint32_t npos;
  uint32_t **val; /* lanes of each position's value */
  int *nl;
  uint8_t *space; /* address space a pointer/address value points into */
  uint32_t nreg[C_N];
  int sm;
  int nlocal;
  size_t shared_bytes;
  tkc_render_params params; /* buffers and variables in launch order */
  bool failed;
  tkc_sbuf body, decl;
} pctx;

static void *fail_oom(pctx *c) { return tkc_render_oom(&c->failed, "PTX"); }

static bool fail_uns(pctx *c, const tkc_uop *u, const char *fmt, ...) TKC_PRINTF(3, 4);
static bool fail_uns(pctx *c, const tkc_uop *u, const char *fmt, ...) {
  if (!c->failed) {
    char why[256] = "", b[64];
    if (fmt) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(why, sizeof why, fmt, ap);
      va_end(ap);
    }
    const char *on = tkc_op_name((tkc_op)u->op);
    tkc_err(TKC_EUNSUPPORTED, "PTX renderer: cannot render %s of dtype %s%s%s", on ? on : "?", tkc_dt_str(u->dtype, b, sizeof b),
            *why ? ": " : "", why);
  }
  c->failed = true;
  return false;
}

static void ins(pctx *c, const char *fmt, ...) TKC_PRINTF(2, 3);
static void ins(pctx *c, const char *fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (k < 0) { fail_oom(c); return; }
  if ((size_t)k >= sizeof line) { /* long lines (mma operand lists) */
    va_start(ap, fmt);
    char *big = tkc_render_vfmt(&c->failed, "PTX", fmt, ap);
    va_end(ap);
    if (!big) return;
    tkc_sbuf_printf(&c->body, "\t%s;\n", big);
    tkc_free(big);
    return;
  }
  tkc_sbuf_printf(&c->body, "\t%s;\n", line);
}

static void label(pctx *c, const char *kind, size_t k) { tkc_sbuf_printf(&c->body, "$%s_%zu:\n", kind, k); }

static uint32_t newreg(pctx *c, int cls) {
  if (c->nreg[cls] >= 0xffffffu) { fail_oom(c); return mkreg(cls, 0); }
  return mkreg(cls, c->nreg[cls]++);
}

static int posof(const pctx *c, const tkc_uop *u) { return u && u->id < c->npos ? c->pos[u->id] : -1; }

/* the lanes of a source (NULL + EINTERNAL when it has no value before its use) */
static const uint32_t *V(pctx *c, const tkc_uop *user, const tkc_uop *s, int *nl) {
  int p = posof(c, s);
  if (p >= 0 && c->val[p]) {
    if (nl) *nl = c->nl[p];
    return c->val[p];
  }
  if (!c->failed) {
    const char *un = tkc_op_name((tkc_op)user->op), *sn = tkc_op_name((tkc_op)s->op);
    tkc_err(TKC_EINTERNAL, "PTX renderer: %s uses a %s that has no value before it (kernel not linearized?)", un ? un : "?", sn ? sn : "?");
  }
  c->failed = true;
  return NULL;
}

/* lane j of source s (a scalar source serves every lane); NOREG on failure */
static uint32_t lane(pctx *c, const tkc_uop *user, const tkc_uop *s, int j) {
  int nl;
  const uint32_t *v = V(c, user, s, &nl);
  if (!v) return NOREG;
  if (nl == 1) return v[0];
  if (j >= nl) { fail_uns(c, user, "source has %d lanes, lane %d asked", nl, j); return NOREG; }
  return v[j];
}

static bool set_val(pctx *c, size_t i, const uint32_t *regs, int nl) {
  uint32_t *v = tkc_malloc((size_t)(nl > 0 ? nl : 1) * sizeof *v);
  if (!v) return fail_oom(c), false;
  memcpy(v, regs, (size_t)nl * sizeof *v);
  c->val[i] = v;
  c->nl[i] = nl;
  return true;
}

static bool set_val1(pctx *c, size_t i, uint32_t r) { return set_val(c, i, &r, 1); }

/* scalar type of a value dtype, or -1 when it is not a plain value */
static int vscalar(tkc_dt dt) { return dt.space || dt.scalar >= TKC_VOID ? -1 : dt.scalar; }

/* ---------------------------------------------------------------- constants */

static void mov_const(pctx *c, uint32_t r, int s, tkc_value v) {
  switch (s) {
  case TKC_BOOL: ins(c, "mov.pred %s, %d", N(r), v.i ? 1 : 0); break;
  case TKC_INT8: case TKC_INT16: case TKC_INT32: ins(c, "mov.b%d %s, %lld", TI[s].cls == C_R ? 32 : 16, N(r), (long long)v.i); break;
  case TKC_UINT8: case TKC_UINT16: case TKC_UINT32: ins(c, "mov.b%d %s, %llu", TI[s].cls == C_R ? 32 : 16, N(r), (unsigned long long)v.u); break;
  case TKC_INT64: case TKC_UINT64: /* decimal when it reads back the same, else the bits */
    if (v.u <= (uint64_t)INT64_MAX || (s == TKC_INT64 && v.i != INT64_MIN)) ins(c, "mov.b64 %s, %lld", N(r), (long long)v.i);
    else ins(c, "mov.b64 %s, 0x%016llX", N(r), (unsigned long long)v.u);
    break;
  case TKC_FLOAT16: ins(c, "mov.b16 %s, 0x%04X", N(r), (unsigned)tkc_value_bitcast(v, TKC_FLOAT16, TKC_UINT16).u); break;
  case TKC_BFLOAT16: ins(c, "mov.b16 %s, 0x%04X", N(r), (unsigned)tkc_f32_to_bf16((float)v.f)); break;
  case TKC_FLOAT32: ins(c, "mov.f32 %s, %s", N(r), F32((float)v.f)); break;
  case TKC_FLOAT64: ins(c, "mov.f64 %s, %s", N(r), F64(v.f)); break;
  default: break;
  }
}

/* a register holding the constant value v of scalar s */
static uint32_t const_reg(pctx *c, int s, tkc_value v) {
  uint32_t r = newreg(c, TI[s].cls);
  mov_const(c, r, s, v);
  return r;
}

/* ---------------------------------------------------------------- conversions */

/* re-extends an 8-bit value held in a 16-bit register after an op that may have left its range */
static void norm8(pctx *c, uint32_t r, int s) {
  if (s == TKC_INT8) ins(c, "cvt.s16.s8 %s, %s", N(r), N(r));
  else if (s == TKC_UINT8) ins(c, "and.b16 %s, %s, 0x00FF", N(r), N(r));
}

static const char *one_lit(int s, char *buf, size_t n) {
  switch (s) {
  case TKC_FLOAT16: return "0x3C00";
  case TKC_FLOAT32: return "0f3F800000";
  case TKC_FLOAT64: return "0d3FF0000000000000";
  default: snprintf(buf, n, "1"); return buf;
  }
}
static const char *zero_lit(int s) {
  switch (s) {
  case TKC_FLOAT16: return "0x0000";
  case TKC_FLOAT32: return "0f00000000";
  case TKC_FLOAT64: return "0d0000000000000000";
  default: return "0";
  }
}

/* value a of scalar fs converted (CAST) to scalar ts; returns the register (a itself when nothing changes) */
static uint32_t cvt_val(pctx *c, const tkc_uop *u, uint32_t a, int fs, int ts) {
  if (a == NOREG) return NOREG;
  if (fs == ts) return a;
  if (fs < 0 || ts < 0) return fail_uns(c, u, "cast between non-values"), NOREG;
  if (fs == TKC_BFLOAT16 || ts == TKC_BFLOAT16) return fail_uns(c, u, "bfloat16 conversions are made of integer ops by the target rules"), NOREG;
  const tinfo *F = &TI[fs], *T = &TI[ts];
  uint32_t d;
  char ob[8];
  if (fs == TKC_BOOL) { /* 1 / 0 */
    d = newreg(c, T->cls);
    ins(c, "%s %s, %s, %s, %s", cls_selp[T->cls], N(d), one_lit(ts, ob, sizeof ob), zero_lit(ts), N(a));
    return d;
  }
  if (ts == TKC_BOOL) { /* != 0, NaN is true */
    d = newreg(c, C_P);
    if (fs == TKC_FLOAT16) {
      uint32_t t = newreg(c, C_RS);
      ins(c, "and.b16 %s, %s, 0x7FFF", N(t), N(a));
      ins(c, "setp.ne.b16 %s, %s, 0", N(d), N(t));
    } else if (s_float(fs)) {
      ins(c, "setp.neu.%s %s, %s, %s", F->t, N(d), N(a), zero_lit(fs));
    } else {
      ins(c, "setp.ne.%s %s, %s, 0", cls_bits[F->cls], N(d), N(a));
    }
    return d;
  }
  d = newreg(c, T->cls);
  if (s_float(fs) && s_float(ts)) { /* f16 <-> f32 <-> f64 */
    bool narrower = T->bytes < F->bytes;
    ins(c, "cvt%s.%s.%s %s, %s", narrower ? ".rn" : "", T->t, F->t, N(d), N(a));
  } else if (s_float(fs)) { /* -> int: truncate, saturate, NaN -> 0 */
    ins(c, "cvt.rzi.%s.%s %s, %s", T->cvt, F->t, N(d), N(a));
  } else if (s_float(ts)) { /* int -> float: one rounding */
    ins(c, "cvt.rn.%s.%s %s, %s", T->t, F->t, N(d), N(a));
  } else { /* int -> int: wraps */
    if (T->bytes == F->bytes || (F->bytes == 1 && T->bytes == 2)) {
      if (ts == TKC_INT8 && fs != TKC_INT8) ins(c, "cvt.s16.s8 %s, %s", N(d), N(a));
      else if (ts == TKC_UINT8 && fs != TKC_UINT8) ins(c, "and.b16 %s, %s, 0x00FF", N(d), N(a));
      else return a; /* same bits (an 8-bit value is already extended to 16) */
    } else if (T->bytes > F->bytes) {
      ins(c, "cvt.%s.%s %s, %s", T->t, F->t, N(d), N(a)); /* extension by the source's signedness */
    } else {
      ins(c, "cvt.%s.%s %s, %s", T->cvt, F->t, N(d), N(a)); /* truncation (8-bit: re-extended) */
    }
  }
  return d;
}

/* BITCAST of a scalar (same size in memory) */
static uint32_t bitcast_val(pctx *c, const tkc_uop *u, uint32_t a, int fs, int ts) {
  if (a == NOREG) return NOREG;
  if (fs == ts) return a;
  if (fs < 0 || ts < 0 || TI[fs].bytes != TI[ts].bytes) return fail_uns(c, u, "BITCAST between types of different sizes"), NOREG;
  if (fs == TKC_BOOL || ts == TKC_BOOL) return cvt_val(c, u, a, fs, ts); /* a byte 0/1 <-> nonzero */
  if (s_byte(fs) && s_byte(ts)) return cvt_val(c, u, a, fs, ts);       /* int8 <-> uint8 re-extends */
  if (TI[fs].cls == TI[ts].cls) return a;
  uint32_t d = newreg(c, TI[ts].cls);
  ins(c, "mov.%s %s, %s", cls_bits[TI[ts].cls], N(d), N(a));
  return d;
}

/* ---------------------------------------------------------------- float64 EXP2 / LOG2 / SIN */

static uint32_t f64_tmp(pctx *c) { return newreg(c, C_FD); }

/* Horner: c[0] + x*(c[1] + x*(... c[n-1])) */
static uint32_t horner(pctx *c, uint32_t x, const double *k, int n) {
  uint32_t p = f64_tmp(c);
  ins(c, "mov.f64 %s, %s", N(p), F64(k[n - 1]));
  for (int i = n - 2; i >= 0; i--) ins(c, "fma.rn.f64 %s, %s, %s, %s", N(p), N(p), N(x), F64(k[i]));
  return p;
}

/* 2^x: x = k + f (k = rint(x), |f| <= 1/2), 2^f by its Taylor series in f*ln2 (error < 1e-19), times
 * 2^(k/2) * 2^(k - k/2) built from exponent bits (one rounding into the subnormal range) */
static uint32_t f64_exp2(pctx *c, uint32_t x) {
  double k[15];
  double t = 1.0;
  for (int i = 0; i < 15; i++) {
    k[i] = t;
    t = t * 0.693147180559945309417232121458176568 / (double)(i + 1);
  }
  uint32_t pn = newreg(c, C_P), xc = f64_tmp(c), kf = f64_tmp(c), f = f64_tmp(c), ki = newreg(c, C_R);
  ins(c, "setp.nan.f64 %s, %s, %s", N(pn), N(x), N(x));
  ins(c, "max.f64 %s, %s, %s", N(xc), N(x), F64(-1100.0));
  ins(c, "min.f64 %s, %s, %s", N(xc), N(xc), F64(1100.0));
  ins(c, "cvt.rni.f64.f64 %s, %s", N(kf), N(xc));
  ins(c, "sub.rn.f64 %s, %s, %s", N(f), N(xc), N(kf));
  ins(c, "cvt.rzi.s32.f64 %s, %s", N(ki), N(kf));
  uint32_t p = horner(c, f, k, 15);
  uint32_t k1 = newreg(c, C_R), k2 = newreg(c, C_R), e = newreg(c, C_RD), s1 = f64_tmp(c), s2 = f64_tmp(c), r = f64_tmp(c);
  ins(c, "shr.s32 %s, %s, 1", N(k1), N(ki));
  ins(c, "sub.s32 %s, %s, %s", N(k2), N(ki), N(k1));
  ins(c, "add.s32 %s, %s, 1023", N(k1), N(k1));
  ins(c, "add.s32 %s, %s, 1023", N(k2), N(k2));
  ins(c, "cvt.u64.u32 %s, %s", N(e), N(k1));
  ins(c, "shl.b64 %s, %s, 52", N(e), N(e));
  ins(c, "mov.b64 %s, %s", N(s1), N(e));
  ins(c, "cvt.u64.u32 %s, %s", N(e), N(k2));
  ins(c, "shl.b64 %s, %s, 52", N(e), N(e));
  ins(c, "mov.b64 %s, %s", N(s2), N(e));
  ins(c, "mul.rn.f64 %s, %s, %s", N(r), N(p), N(s1));
  ins(c, "mul.rn.f64 %s, %s, %s", N(r), N(r), N(s2));
  ins(c, "@%s mov.f64 %s, %s", N(pn), N(r), N(x));
  return r;
}

/* log2(x): x = m * 2^e with m in [sqrt(1/2), sqrt(2)), ln(m) = 2*atanh(s) with s = (m-1)/(m+1) by its
 * series in s^2 (error < 1e-18); log2(x) = e + ln(m)/ln(2). Subnormals are scaled by 2^54 first. */
static uint32_t f64_log2(pctx *c, uint32_t x) {
  double k[12];
  for (int i = 0; i < 12; i++) k[i] = 1.0 / (double)(2 * i + 1);
  uint32_t pneg = newreg(c, C_P), pnan = newreg(c, C_P), pzero = newreg(c, C_P), pinf = newreg(c, C_P), psub = newreg(c, C_P);
  ins(c, "setp.lt.f64 %s, %s, 0d0000000000000000", N(pneg), N(x));
  ins(c, "setp.nan.f64 %s, %s, %s", N(pnan), N(x), N(x));
  ins(c, "setp.eq.f64 %s, %s, 0d0000000000000000", N(pzero), N(x));
  ins(c, "setp.eq.f64 %s, %s, 0d7FF0000000000000", N(pinf), N(x));
  ins(c, "setp.lt.f64 %s, %s, 0d0010000000000000", N(psub), N(x));
  uint32_t xs = f64_tmp(c), xm = f64_tmp(c), eadj = newreg(c, C_R), bits = newreg(c, C_RD), t = newreg(c, C_RD), e = newreg(c, C_R);
  ins(c, "mul.rn.f64 %s, %s, 0d4350000000000000", N(xm), N(x)); /* * 2^54 */
  ins(c, "selp.f64 %s, %s, %s, %s", N(xs), N(xm), N(x), N(psub));
  ins(c, "selp.b32 %s, -54, 0, %s", N(eadj), N(psub));
  ins(c, "mov.b64 %s, %s", N(bits), N(xs));
  ins(c, "shr.u64 %s, %s, 52", N(t), N(bits));
  ins(c, "cvt.u32.u64 %s, %s", N(e), N(t));
  ins(c, "and.b32 %s, %s, 0x7FF", N(e), N(e));
  ins(c, "add.s32 %s, %s, -1023", N(e), N(e));
  ins(c, "add.s32 %s, %s, %s", N(e), N(e), N(eadj));
  uint32_t m = f64_tmp(c), mh = f64_tmp(c), pbig = newreg(c, C_P), inc = newreg(c, C_R);
  ins(c, "and.b64 %s, %s, 0x000FFFFFFFFFFFFF", N(t), N(bits));
  ins(c, "or.b64 %s, %s, 0x3FF0000000000000", N(t), N(t));
  ins(c, "mov.b64 %s, %s", N(m), N(t));
  ins(c, "setp.gt.f64 %s, %s, 0d3FF6A09E667F3BCD", N(pbig), N(m)); /* sqrt(2) */
  ins(c, "mul.rn.f64 %s, %s, 0d3FE0000000000000", N(mh), N(m));
  ins(c, "selp.f64 %s, %s, %s, %s", N(m), N(mh), N(m), N(pbig));
  ins(c, "selp.b32 %s, 1, 0, %s", N(inc), N(pbig));
  ins(c, "add.s32 %s, %s, %s", N(e), N(e), N(inc));
  uint32_t num = f64_tmp(c), den = f64_tmp(c), s = f64_tmp(c), z = f64_tmp(c);
  ins(c, "sub.rn.f64 %s, %s, 0d3FF0000000000000", N(num), N(m));
  ins(c, "add.rn.f64 %s, %s, 0d3FF0000000000000", N(den), N(m));
  ins(c, "div.rn.f64 %s, %s, %s", N(s), N(num), N(den));
  ins(c, "mul.rn.f64 %s, %s, %s", N(z), N(s), N(s));
  uint32_t q = horner(c, z, k, 12), ef = f64_tmp(c), r = f64_tmp(c);
  ins(c, "mul.rn.f64 %s, %s, %s", N(q), N(q), N(s));                          /* ln(m) / 2 */
  ins(c, "cvt.rn.f64.s32 %s, %s", N(ef), N(e));
  ins(c, "fma.rn.f64 %s, %s, 0d40071547652B82FE, %s", N(r), N(q), N(ef)); /* * 2/ln(2) + e */
  ins(c, "@%s mov.f64 %s, 0dFFF0000000000000", N(pzero), N(r));
  ins(c, "@%s mov.f64 %s, 0d7FF0000000000000", N(pinf), N(r));
  ins(c, "@%s mov.f64 %s, 0d7FF8000000000000", N(pneg), N(r));
  ins(c, "@%s mov.f64 %s, %s", N(pnan), N(r), N(x));
  return r;
}

/* sin(x): k = rint(x * 2/pi), r = x - k*pi/2 in three fma steps (Cody-Waite), then the Taylor series of
 * sin or cos on |r| <= pi/4 by the quadrant k mod 4 (within 1 ulp for |x| < 1e5, checked against libm on
 * 2e6 points like exp2 (1 ulp) and log2 (2 ulp)). inf/NaN give NaN (the reduction does). */
static uint32_t f64_sin(pctx *c, uint32_t x) {
  double ks[9], kc[10];
  double fact = 1.0;
  for (int i = 1; i <= 18; i++) {
    fact *= (double)i;
    if (i % 2 == 1 && i >= 3) ks[(i - 1) / 2 - 1] = ((i - 1) / 2 % 2 ? -1.0 : 1.0) / fact; /* S_j = (-1)^j/(2j+1)! */
    if (i % 2 == 0) kc[i / 2 - 1] = (i / 2 % 2 ? -1.0 : 1.0) / fact;                   /* C_j = (-1)^j/(2j)! */
  }
  uint32_t t = f64_tmp(c), kf = f64_tmp(c), r = f64_tmp(c), k64 = newreg(c, C_RD), k32 = newreg(c, C_R);
  ins(c, "mul.rn.f64 %s, %s, 0d3FE45F306DC9C883", N(t), N(x)); /* 2/pi */
  ins(c, "cvt.rni.f64.f64 %s, %s", N(kf), N(t));
  ins(c, "fma.rn.f64 %s, %s, 0dBFF921FB54442D18, %s", N(r), N(kf), N(x)); /* - k * pi/2 (3 parts) */
  ins(c, "fma.rn.f64 %s, %s, 0dBC91A62633145C07, %s", N(r), N(kf), N(r));
  ins(c, "fma.rn.f64 %s, %s, 0d391F1976B7ED8FBC, %s", N(r), N(kf), N(r));
  ins(c, "cvt.rzi.s64.f64 %s, %s", N(k64), N(kf));
  ins(c, "cvt.u32.u64 %s, %s", N(k32), N(k64));
  uint32_t r2 = f64_tmp(c);
  ins(c, "mul.rn.f64 %s, %s, %s", N(r2), N(r), N(r));
  uint32_t sp = horner(c, r2, ks, 8), sn = f64_tmp(c);
  ins(c, "mul.rn.f64 %s, %s, %s", N(sp), N(sp), N(r2));
  ins(c, "fma.rn.f64 %s, %s, %s, %s", N(sn), N(r), N(sp), N(r)); /* r + r * r^2 * S(r^2) */
  uint32_t cp = horner(c, r2, kc, 9), cs = f64_tmp(c);
  ins(c, "fma.rn.f64 %s, %s, %s, 0d3FF0000000000000", N(cs), N(cp), N(r2)); /* 1 + r^2 * C(r^2) */
  uint32_t q = newreg(c, C_R), podd = newreg(c, C_P), pneg = newreg(c, C_P), res = f64_tmp(c), nres = f64_tmp(c);
  ins(c, "and.b32 %s, %s, 1", N(q), N(k32));
  ins(c, "setp.ne.b32 %s, %s, 0", N(podd), N(q));
  ins(c, "and.b32 %s, %s, 2", N(q), N(k32));
  ins(c, "setp.ne.b32 %s, %s, 0", N(pneg), N(q));
  ins(c, "selp.f64 %s, %s, %s, %s", N(res), N(cs), N(sn), N(podd));
  ins(c, "neg.f64 %s, %s", N(nres), N(res));
  ins(c, "selp.f64 %s, %s, %s, %s", N(res), N(nres), N(res), N(pneg));
  uint32_t pz = newreg(c, C_P); /* sin(-0) = -0 */
  ins(c, "setp.eq.f64 %s, %s, 0d0000000000000000", N(pz), N(x));
  ins(c, "@%s mov.f64 %s, %s", N(pz), N(res), N(x));
  return res;
}

/* ---------------------------------------------------------------- ALU */

/* integer IDIV / MOD by a divisor the target rules made safe (x/0, INT_MIN/-1 are guarded there) */
static uint32_t int_divmod(pctx *c, const tkc_uop *u, int op, int s, uint32_t a, uint32_t b) {
  if (!tkc_divisor_guarded(u->src[1], true)) return fail_uns(c, u, "a divisor that may be 0 or -1 (apply the target rules first)"), NOREG;
  const tinfo *T = &TI[s];
  uint32_t d = newreg(c, T->cls);
  ins(c, "%s.%s %s, %s, %s", op == TKC_OP_IDIV ? "div" : "rem", T->t, N(d), N(a), N(b));
  return d; /* in range: the divisor is never -1 */
}

/* SHL / SHR with the count in the value's dtype: negative -> 0, >= width saturates */
static uint32_t int_shift(pctx *c, int op, int s, uint32_t a, uint32_t b) {
  const tinfo *T = &TI[s];
  uint32_t cnt = b, d = newreg(c, T->cls);
  if (T->cls == C_RD) {
    uint32_t m = newreg(c, C_RD);
    cnt = newreg(c, C_R);
    ins(c, "min.u64 %s, %s, 255", N(m), N(b));
    ins(c, "cvt.u32.u64 %s, %s", N(cnt), N(m));
  } else if (T->cls == C_RS) {
    cnt = newreg(c, C_R);
    ins(c, "cvt.u32.u16 %s, %s", N(cnt), N(b));
  }
  if (op == TKC_OP_SHL) ins(c, "shl.%s %s, %s, %s", cls_bits[T->cls], N(d), N(a), N(cnt));
  else ins(c, "shr.%s %s, %s, %s", T->t, N(d), N(a), N(cnt));
  if (s_signed(s)) {
    uint32_t p = newreg(c, C_P);
    ins(c, "setp.lt.%s %s, %s, 0", T->t, N(p), N(b));
    ins(c, "@%s mov.%s %s, 0", N(p), cls_bits[T->cls], N(d));
  }
  if (op == TKC_OP_SHL) norm8(c, d, s);
  return d;
}

static bool f16_native(int op) {
  switch (op) {
  case TKC_OP_ADD: case TKC_OP_SUB: case TKC_OP_MUL: case TKC_OP_MULACC: case TKC_OP_NEG: case TKC_OP_MAX:
  case TKC_OP_EXP2: case TKC_OP_CMPLT: case TKC_OP_CMPNE: case TKC_OP_WHERE:
    return true;
  default: return false;
  }
}

/* one float op on registers of scalar s (f16 native ops, f32, f64); a[] operands, cond for WHERE */
static uint32_t float_op(pctx *c, const tkc_uop *u, int op, int s, const uint32_t *a) {
  const char *t = TI[s].t;
  int cls = TI[s].cls;
  uint32_t d = op == TKC_OP_CMPLT || op == TKC_OP_CMPNE ? newreg(c, C_P) : newreg(c, cls);
  switch (op) {
  case TKC_OP_ADD: ins(c, "add.rn.%s %s, %s, %s", t, N(d), N(a[0]), N(a[1])); break;
  case TKC_OP_SUB: ins(c, "sub.rn.%s %s, %s, %s", t, N(d), N(a[0]), N(a[1])); break;
  case TKC_OP_MUL: ins(c, "mul.rn.%s %s, %s, %s", t, N(d), N(a[0]), N(a[1])); break;
  case TKC_OP_MULACC: ins(c, "fma.rn.%s %s, %s, %s, %s", t, N(d), N(a[0]), N(a[1]), N(a[2])); break;
  case TKC_OP_NEG: ins(c, "neg.%s %s, %s", t, N(d), N(a[0])); break;
  case TKC_OP_FDIV: ins(c, "div.rn.%s %s, %s, %s", t, N(d), N(a[0]), N(a[1])); break;
  case TKC_OP_RECIP: ins(c, "rcp.rn.%s %s, %s", t, N(d), N(a[0])); break;
  case TKC_OP_SQRT: ins(c, "sqrt.rn.%s %s, %s", t, N(d), N(a[0])); break;
  case TKC_OP_EXP2:
    if (s == TKC_FLOAT64) return f64_exp2(c, a[0]);
    ins(c, "ex2.approx.%s %s, %s", t, N(d), N(a[0]));
    break;
  case TKC_OP_LOG2:
    if (s == TKC_FLOAT64) return f64_log2(c, a[0]);
    ins(c, "lg2.approx.%s %s, %s", t, N(d), N(a[0]));
    break;
  case TKC_OP_SIN:
    if (s == TKC_FLOAT64) return f64_sin(c, a[0]);
    ins(c, "sin.approx.%s %s, %s", t, N(d), N(a[0]));
    break;
  case TKC_OP_MAX: { /* b > a ? b : a */
    uint32_t p = newreg(c, C_P);
    ins(c, "setp.gt.%s %s, %s, %s", t, N(p), N(a[1]), N(a[0]));
    ins(c, "%s %s, %s, %s, %s", cls_selp[cls], N(d), N(a[1]), N(a[0]), N(p));
    break;
  }
  case TKC_OP_CMPLT: ins(c, "setp.lt.%s %s, %s, %s", t, N(d), N(a[0]), N(a[1])); break;
  case TKC_OP_CMPNE: ins(c, "setp.neu.%s %s, %s, %s", t, N(d), N(a[0]), N(a[1])); break;
  default: return fail_uns(c, u, "no PTX form of %s on floats", tkc_op_name((tkc_op)op)), NOREG;
  }
  return d;
}

/* One lane of an ALU op. s: result scalar; in: operand scalar (CMPLT/CMPNE: the compared values;
 * WHERE: the values, a[0] being the bool condition); a[] already of those scalars. */
static uint32_t alu_lane(pctx *c, const tkc_uop *u, int op, int in, const uint32_t *a) {
  if (in == TKC_BOOL) {
    uint32_t d = newreg(c, C_P);
    switch (op) {
    case TKC_OP_ADD: case TKC_OP_OR: case TKC_OP_MAX: ins(c, "or.pred %s, %s, %s", N(d), N(a[0]), N(a[1])); break;
    case TKC_OP_MUL: case TKC_OP_AND: ins(c, "and.pred %s, %s, %s", N(d), N(a[0]), N(a[1])); break;
    case TKC_OP_SUB: case TKC_OP_XOR: case TKC_OP_CMPNE: ins(c, "xor.pred %s, %s, %s", N(d), N(a[0]), N(a[1])); break;
    case TKC_OP_CMPLT: ins(c, "not.pred %s, %s", N(d), N(a[0])); ins(c, "and.pred %s, %s, %s", N(d), N(d), N(a[1])); break;
    case TKC_OP_NEG: ins(c, "mov.pred %s, %s", N(d), N(a[0])); break;
    case TKC_OP_MULACC: ins(c, "and.pred %s, %s, %s", N(d), N(a[0]), N(a[1])); ins(c, "or.pred %s, %s, %s", N(d), N(d), N(a[2])); break;
    case TKC_OP_WHERE: ins(c, "@%s mov.pred %s, %s", N(a[0]), N(d), N(a[1])); ins(c, "@!%s mov.pred %s, %s", N(a[0]), N(d), N(a[2])); break;
    default: return fail_uns(c, u, "no PTX form of %s on bool", tkc_op_name((tkc_op)op)), NOREG;
    }
    return d;
  }
  if (op == TKC_OP_WHERE) {
    int cls = TI[in].cls;
    uint32_t d = newreg(c, cls);
    ins(c, "%s %s, %s, %s, %s", cls_selp[cls], N(d), N(a[1]), N(a[2]), N(a[0]));
    return d;
  }
  if (s_int(in)) {
    const tinfo *T = &TI[in];
    const char *b = cls_bits[T->cls];
    uint32_t d;
    switch (op) {
    case TKC_OP_IDIV: case TKC_OP_MOD: return int_divmod(c, u, op, in, a[0], a[1]);
    case TKC_OP_SHL: case TKC_OP_SHR: return int_shift(c, op, in, a[0], a[1]);
    case TKC_OP_CMPLT: case TKC_OP_CMPNE:
      d = newreg(c, C_P);
      ins(c, "setp.%s.%s %s, %s, %s", op == TKC_OP_CMPLT ? "lt" : "ne", T->t, N(d), N(a[0]), N(a[1]));
      return d;
    default: break;
    }
    d = newreg(c, T->cls);
    switch (op) {
    case TKC_OP_ADD: ins(c, "add.%s %s, %s, %s", T->t, N(d), N(a[0]), N(a[1])); break;
    case TKC_OP_SUB: ins(c, "sub.%s %s, %s, %s", T->t, N(d), N(a[0]), N(a[1])); break;
    case TKC_OP_MUL: ins(c, "mul.lo.%s %s, %s, %s", T->t, N(d), N(a[0]), N(a[1])); break;
    case TKC_OP_MULACC: ins(c, "mad.lo.%s %s, %s, %s, %s", T->t, N(d), N(a[0]), N(a[1]), N(a[2])); break;
    case TKC_OP_NEG: ins(c, "neg.s%d %s, %s", T->cls == C_RS ? 16 : T->cls == C_R ? 32 : 64, N(d), N(a[0])); break;
    case TKC_OP_MAX: ins(c, "max.%s %s, %s, %s", T->t, N(d), N(a[0]), N(a[1])); return d;
    case TKC_OP_AND: ins(c, "and.%s %s, %s, %s", b, N(d), N(a[0]), N(a[1])); return d;
    case TKC_OP_OR: ins(c, "or.%s %s, %s, %s", b, N(d), N(a[0]), N(a[1])); return d;
    case TKC_OP_XOR: ins(c, "xor.%s %s, %s, %s", b, N(d), N(a[0]), N(a[1])); return d;
    case TKC_OP_DOT4: /* the bytes of a unsigned, of b signed (sm_61 and newer) */
      if (in != TKC_INT32) return fail_uns(c, u, "DOT4 needs int32"), NOREG;
      ins(c, "dp4a.u32.s32 %s, %s, %s, 0", N(d), N(a[0]), N(a[1]));
      return d;
    default: return fail_uns(c, u, "no PTX form of %s on integers", tkc_op_name((tkc_op)op)), NOREG;
    }
    norm8(c, d, in);
    return d;
  }
  /* floats */
  if (op == TKC_OP_IDIV || op == TKC_OP_MOD || op == TKC_OP_POW)
    return fail_uns(c, u, "%s on floats has no PTX instruction (decompose it before rendering)", tkc_op_name((tkc_op)op)), NOREG;
  if (in == TKC_BFLOAT16) return fail_uns(c, u, "bfloat16 arithmetic is done in float32 by the target rules"), NOREG;
  if (in == TKC_FLOAT16 && !f16_native(op)) return fail_uns(c, u, "%s has no f16 form (the backend rules compute it in float32)", tkc_op_name((tkc_op)op)), NOREG;
  return float_op(c, u, op, in, a);
}

static int alu_arity(int op) {
  unsigned f = tkc_op_flags((tkc_op)op);
  return (f & TKC_F_T) ? 3 : (f & TKC_F_B) ? 2 : 1;
}

static bool render_alu(pctx *c, size_t i, const tkc_uop *u) {
  int op = u->op, s = vscalar(u->dtype);
  if (op == TKC_OP_THREEFRY) return fail_uns(c, u, "THREEFRY has no PTX form (decompose it before rendering)");
  if (s < 0 || u->nsrc != alu_arity(op)) return fail_uns(c, u, "malformed ALU op");
  int cmp = op == TKC_OP_CMPLT || op == TKC_OP_CMPNE, where = op == TKC_OP_WHERE;
  int in = cmp ? vscalar(u->src[0]->dtype) : s;
  if (in < 0) return fail_uns(c, u, "operand is not a value");
  if (in == TKC_BOOL && (op == TKC_OP_SHL || op == TKC_OP_SHR))
    return fail_uns(c, u, "shifts of bool have no PTX form");
  if (in == TKC_BOOL && (tkc_op_flags((tkc_op)op) & TKC_F_U) && op != TKC_OP_NEG)
    return fail_uns(c, u, "%s of bool has no PTX form", tkc_op_name((tkc_op)op));
  if (u->dtype.count != 1) return fail_uns(c, u, "no vector ALU in PTX (the target rules split it into lanes)");
  uint32_t a[3] = {NOREG, NOREG, NOREG};
  for (int k = 0; k < u->nsrc; k++) {
    const tkc_uop *sk = u->src[k];
    int want = where && k == 0 ? TKC_BOOL : in, have = vscalar(sk->dtype);
    if (sk->dtype.count != 1) return fail_uns(c, u, "a vector operand of a scalar op");
    a[k] = lane(c, u, sk, 0);
    if (a[k] == NOREG) return false;
    if (have != want) a[k] = cvt_val(c, u, a[k], have, want);
    if (a[k] == NOREG) return false;
  }
  uint32_t d = alu_lane(c, u, op, in, a);
  if (d == NOREG) return false;
  if (cmp && s != TKC_BOOL) d = cvt_val(c, u, d, TKC_BOOL, s); /* a compare producing a non-bool */
  return d != NOREG && set_val1(c, i, d);
}

/* ---------------------------------------------------------------- memory */

static const char *space_str(int sp) { return sp == SP_GLOBAL ? ".global" : sp == SP_SHARED ? ".shared" : ""; }

/* the 64-bit address register of a LOAD/STORE's address source */
static uint32_t address(pctx *c, const tkc_uop *u, const tkc_uop *a, int *sp) {
  bool ok = a->dtype.space ? a->dtype.pcount == 1 : (a->dtype.count == 1 && (a->dtype.scalar == TKC_INT64 || a->dtype.scalar == TKC_UINT64));
  if (!ok) return fail_uns(c, u, "the address is not a pointer or a 64-bit integer"), NOREG;
  int p = posof(c, a);
  *sp = p >= 0 ? c->space[p] : SP_NONE;
  return lane(c, u, a, 0);
}

/* chunks of a vector access: the lanes per instruction (1, 2 or 4) */
static int chunk_of(int cnt, int bytes) {
  if (cnt <= 1 || !tkc_render_is_pow2((unsigned)cnt)) return 1;
  int maxv = bytes == 8 ? 2 : 4;
  return cnt < maxv ? cnt : maxv;
}

static void emit_access(pctx *c, bool load, const char *pred, int sp, const char *mem, uint32_t addr, const uint32_t *regs, int cnt, int bytes) {
  int ch = chunk_of(cnt, bytes);
  for (int k = 0; k < cnt; k += ch) {
    char list[256];
    size_t off = 0;
    if (ch > 1) off += (size_t)snprintf(list, sizeof list, "{");
    for (int j = 0; j < ch; j++)
      off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", j ? ", " : "", N(regs[k + j]));
    if (ch > 1) snprintf(list + off, sizeof list - off, "}");
    char vec[16] = "";
    if (ch > 1) snprintf(vec, sizeof vec, ".v%d", ch);
    if (load) ins(c, "%sld%s%s.%s %s, [%s+%d]", pred, space_str(sp), vec, mem, list, N(addr), k * bytes);
    else ins(c, "%sst%s%s.%s [%s+%d], %s", pred, space_str(sp), vec, mem, N(addr), k * bytes, list);
  }
}

static bool is_void(const tkc_uop *u) { return !u->dtype.space && u->dtype.scalar == TKC_VOID; }

static bool render_load(pctx *c, size_t i, const tkc_uop *u) {
  int s = vscalar(u->dtype), cnt = u->dtype.count, sp;
  if (s < 0 || u->nsrc < 1) return fail_uns(c, u, "LOAD needs a value dtype and an address");
  if (cnt < 1 || cnt > 256) return fail_uns(c, u, "vector width");
  uint32_t addr = address(c, u, u->src[0], &sp);
  if (addr == NOREG) return false;
  const tkc_uop *alt = NULL, *gate = NULL;
  if (u->nsrc >= 3 && !is_void(u->src[1]) && !is_void(u->src[2])) alt = u->src[1], gate = u->src[2];
  else
    for (int k = 1; k < u->nsrc; k++)
      if (!is_void(u->src[k])) return fail_uns(c, u, "LOAD sources must be (address[, alt, gate]) plus barriers");
  char pred[32] = "";
  uint32_t g = NOREG;
  if (gate) {
    if (gate->dtype.count != 1) return fail_uns(c, u, "a vector gate");
    g = cvt_val(c, u, lane(c, u, gate, 0), vscalar(gate->dtype), TKC_BOOL);
    if (g == NOREG) return false;
    snprintf(pred, sizeof pred, "@%s ", N(g));
  }
  uint32_t res[256], mem[256];
  bool conv = s == TKC_BOOL;
  for (int j = 0; j < cnt; j++) mem[j] = res[j] = newreg(c, conv ? C_RS : TI[s].cls);
  emit_access(c, true, pred, sp, TI[s].mem, addr, mem, cnt, TI[s].bytes);
  for (int j = 0; j < cnt && conv; j++) { /* bytes -> pred */
    res[j] = newreg(c, C_P);
    ins(c, "setp.ne.b16 %s, %s, 0", N(res[j]), N(mem[j]));
  }
  if (gate) {
    for (int j = 0; j < cnt; j++) {
      uint32_t a = cvt_val(c, u, lane(c, u, alt, j), vscalar(alt->dtype), s);
      if (a == NOREG) return false;
      if (s == TKC_BOOL) ins(c, "@!%s mov.pred %s, %s", N(g), N(res[j]), N(a));
      else ins(c, "@!%s %s %s, %s", N(g), cls_mov[TI[s].cls], N(res[j]), N(a));
    }
  }
  return set_val(c, i, res, cnt);
}

static bool render_store(pctx *c, const tkc_uop *u) {
  if (u->nsrc < 2) return fail_uns(c, u, "STORE needs an address and a value");
  const tkc_uop *v = u->src[1];
  int s = vscalar(v->dtype), cnt = v->dtype.count, sp;
  if (s < 0 || s == TKC_VOID) return fail_uns(c, u, "STORE of a non-value");
  if (cnt < 1 || cnt > 256) return fail_uns(c, u, "vector width");
  uint32_t addr = address(c, u, u->src[0], &sp);
  if (addr == NOREG) return false;
  char pred[32] = "";
  for (int k = 2; k < u->nsrc; k++) {
    const tkc_uop *gk = u->src[k];
    if (gk->op == TKC_OP_IF || is_void(gk)) continue; /* inside the IF block */
    if (vscalar(gk->dtype) < 0 || gk->dtype.count != 1 || pred[0]) return fail_uns(c, u, "STORE gate must be one bool");
    uint32_t g = cvt_val(c, u, lane(c, u, gk, 0), vscalar(gk->dtype), TKC_BOOL);
    if (g == NOREG) return false;
    snprintf(pred, sizeof pred, "@%s ", N(g));
  }
  uint32_t mem[256];
  for (int j = 0; j < cnt; j++) {
    uint32_t r = lane(c, u, v, j);
    if (r == NOREG) return false;
    if (s == TKC_BOOL) {
      uint32_t b = newreg(c, C_RS);
      ins(c, "selp.b16 %s, 1, 0, %s", N(b), N(r));
      r = b;
    }
    mem[j] = r;
  }
  emit_access(c, false, pred, sp, TI[s].mem, addr, mem, cnt, TI[s].bytes);
  return !c->failed;
}

/* ---------------------------------------------------------------- WMMA */

static int arg_dtype(const tkc_arg *a) {
  if (a->kind == TKC_ARG_INT) return a->v.i >= 0 && a->v.i < TKC_VOID ? (int)a->v.i : -1;
  if (a->kind != TKC_ARG_STR || !a->v.s) return -1;
  static const struct { const char *n; int dt; } alias[] = {{"half", TKC_FLOAT16}, {"float", TKC_FLOAT32}, {"bf16", TKC_BFLOAT16}};
  for (int d = 0; d < TKC_VOID; d++)
    if (!strcmp(tkc_dtype_name((tkc_dtype)d), a->v.s)) return d;
  for (size_t k = 0; k < TKC_COUNTOF(alias); k++)
    if (!strcmp(alias[k].n, a->v.s)) return alias[k].dt;
  return -1;
}

/* packs 16-bit lanes (f16 or bfloat16 bits) two per b32 register */
static void pack16(pctx *c, const uint32_t *lanes, int n, uint32_t *out) {
  for (int k = 0; k < n / 2; k++) {
    uint32_t lo = lanes[2 * k], hi = lanes[2 * k + 1];
    out[k] = newreg(c, C_R);
    ins(c, "mov.b32 %s, {%s, %s}", N(out[k]), N(lo), N(hi));
  }
}

static void reglist(char *buf, size_t n, const uint32_t *r, int k) {
  size_t off = (size_t)snprintf(buf, n, "{");
  for (int j = 0; j < k && off < n; j++) off += (size_t)snprintf(buf + off, n - off, "%s%s", j ? ", " : "", N(r[j]));
  if (off < n) snprintf(buf + off, n - off, "}");
}

static bool render_wmma(pctx *c, size_t i, const tkc_uop *u) {
  const tkc_arg *a = &u->arg;
  if (a->kind != TKC_ARG_TUPLE || a->n < 4 || a->v.t[1].kind != TKC_ARG_TUPLE || a->v.t[1].n != 3 || u->nsrc != 3)
    return fail_uns(c, u, "WMMA needs the arg (name, (N, M, K), dtype_in, dtype_out, ...) and sources (A, B, C)");
  const tkc_arg *dims = a->v.t[1].v.t;
  for (int k = 0; k < 3; k++)
    if (dims[k].kind != TKC_ARG_INT) return fail_uns(c, u, "WMMA dims must be ints");
  int64_t Nn = dims[0].v.i, M = dims[1].v.i, K = dims[2].v.i;
  int din = arg_dtype(&a->v.t[2]), dout = arg_dtype(&a->v.t[3]);
  int na, nb, nc;
  const char *tin;
  if (Nn == 8 && M == 16 && K == 16 && (din == TKC_FLOAT16 || din == TKC_BFLOAT16) && (dout == TKC_FLOAT32 || (dout == TKC_FLOAT16 && din == TKC_FLOAT16)))
    na = 8, nb = 4, nc = 4, tin = din == TKC_FLOAT16 ? "f16" : "bf16";
  else if (Nn == 8 && M == 16 && K == 8 && din == TKC_FLOAT16 && (dout == TKC_FLOAT32 || dout == TKC_FLOAT16))
    na = 4, nb = 2, nc = 4, tin = "f16";
  else if (Nn == 8 && M == 16 && K == 8 && din == TKC_FLOAT32 && dout == TKC_FLOAT32)
    na = 4, nb = 2, nc = 4, tin = "tf32";
  else
    return fail_uns(c, u, "no mma.sync shape for N=%lld M=%lld K=%lld %s -> %s", (long long)Nn, (long long)M, (long long)K,
                    din >= 0 ? tkc_dtype_name((tkc_dtype)din) : "?", dout >= 0 ? tkc_dtype_name((tkc_dtype)dout) : "?");
  bool needs80 = K == 16 || din != TKC_FLOAT16;
  if (needs80 && c->sm < 80) return fail_uns(c, u, "this mma.sync shape needs sm_80 or newer (target is sm_%d)", c->sm);
  int nla, nlb, nlc;
  const uint32_t *A = V(c, u, u->src[0], &nla), *B = V(c, u, u->src[1], &nlb), *C = V(c, u, u->src[2], &nlc);
  if (!A || !B || !C) return false;
  if (nla != na || nlb != nb || nlc != nc || vscalar(u->src[0]->dtype) != din || vscalar(u->src[1]->dtype) != din ||
      vscalar(u->src[2]->dtype) != dout || vscalar(u->dtype) != dout || u->dtype.count != nc)
    return fail_uns(c, u, "WMMA sources must be %s.vec(%d), %s.vec(%d), %s.vec(%d)", tkc_dtype_name((tkc_dtype)din), na,
                    tkc_dtype_name((tkc_dtype)din), nb, tkc_dtype_name((tkc_dtype)dout), nc);
  uint32_t ra[8], rb[4], rc[4], rd[4], out[4];
  int ka, kb, kc;
  if (din == TKC_FLOAT32) { /* tf32: one value per register */
    for (int k = 0; k < na; k++) ra[k] = newreg(c, C_R), ins(c, "mov.b32 %s, %s", N(ra[k]), N(A[k]));
    for (int k = 0; k < nb; k++) rb[k] = newreg(c, C_R), ins(c, "mov.b32 %s, %s", N(rb[k]), N(B[k]));
    ka = na, kb = nb;
  } else {
    pack16(c, A, na, ra);
    pack16(c, B, nb, rb);
    ka = na / 2, kb = nb / 2;
  }
  if (dout == TKC_FLOAT32) {
    for (int k = 0; k < nc; k++) rc[k] = C[k], rd[k] = out[k] = newreg(c, C_F);
    kc = nc;
  } else {
    pack16(c, C, nc, rc);
    kc = nc / 2;
    for (int k = 0; k < kc; k++) rd[k] = newreg(c, C_R);
  }
  char la[128], lb[64], lc[128], ld[128];
  reglist(la, sizeof la, ra, ka);
  reglist(lb, sizeof lb, rb, kb);
  reglist(lc, sizeof lc, rc, kc);
  reglist(ld, sizeof ld, rd, kc);
  const char *to = dout == TKC_FLOAT32 ? "f32" : "f16";
  ins(c, "mma.sync.aligned.m16n8k%lld.row.col.%s.%s.%s.%s %s, %s, %s, %s", (long long)K, to, tin, tin, to, ld, la, lb, lc);
  if (dout == TKC_FLOAT16)
    for (int k = 0; k < kc; k++) {
      out[2 * k] = newreg(c, C_H), out[2 * k + 1] = newreg(c, C_H);
      ins(c, "mov.b32 {%s, %s}, %s", N(out[2 * k]), N(out[2 * k + 1]), N(rd[k]));
    }
  return set_val(c, i, out, nc);
}

/* ---------------------------------------------------------------- one UOp */

static bool range_taken(const tkc_uop *r) { return r->nsrc == 2 && r->src[0]->vmax < r->src[1]->vmin; }

static bool render_one(pctx *c, size_t i) {
  const tkc_uop *u = c->uops[i];
  int s = vscalar(u->dtype);
  switch ((tkc_op)u->op) {
  case TKC_OP_NAME: case TKC_OP_SINK: return true;
  case TKC_OP_NOOP: {
    if (u->nsrc < 1) return true;
    int nl;
    const uint32_t *v = V(c, u, u->src[0], &nl);
    return v && set_val(c, i, v, nl);
  }
  case TKC_OP_DEFINE_GLOBAL: {
    if (!u->dtype.space || u->dtype.pcount != 1 || u->arg.kind != TKC_ARG_INT) return fail_uns(c, u, "DEFINE_GLOBAL needs a pointer dtype and an int arg");
    uint32_t p = newreg(c, C_RD), g = newreg(c, C_RD);
    ins(c, "ld.param.u64 %s, [data%lld]", N(p), (long long)u->arg.v.i);
    ins(c, "cvta.to.global.u64 %s, %s", N(g), N(p));
    return set_val1(c, i, g);
  }
  case TKC_OP_DEFINE_LOCAL: {
    if (!u->dtype.space || u->dtype.pcount != 1 || u->dtype.size < 0 || u->dtype.scalar >= TKC_VOID)
      return fail_uns(c, u, "DEFINE_LOCAL needs a pointer dtype with a size");
    size_t bytes = (size_t)u->dtype.size * TI[u->dtype.scalar].bytes * (u->dtype.count ? u->dtype.count : 1);
    if (bytes > tkc_renderer_ptx.shared_max || c->shared_bytes + bytes > tkc_renderer_ptx.shared_max)
      return fail_uns(c, u, "%zu bytes of shared memory (with %zu before) exceed the %zu of a block", bytes, c->shared_bytes, tkc_renderer_ptx.shared_max);
    c->shared_bytes += bytes;
    int k = c->nlocal++;
    tkc_sbuf_printf(&c->decl, "\t.shared .align 16 .b8 smem%d[%zu];\n", k, bytes ? bytes : 16);
    uint32_t r = newreg(c, C_RD);
    ins(c, "mov.u64 %s, smem%d", N(r), k);
    return set_val1(c, i, r);
  }
  case TKC_OP_DEFINE_VAR: {
    if (s != TKC_INT32 || u->dtype.count != 1) return fail_uns(c, u, "DEFINE_VAR must be int32");
    int k = tkc_render_params_var(&c->params, u);
    if (k < 0) return fail_uns(c, u, "DEFINE_VAR needs a (name, min, max) arg");
    uint32_t r = newreg(c, C_R);
    ins(c, "ld.param.s32 %s, [var%d]", N(r), k);
    return set_val1(c, i, r);
  }
  case TKC_OP_SPECIAL: {
    const tkc_arg *a = &u->arg;
    if (a->kind != TKC_ARG_TUPLE || a->n < 2 || a->v.t[0].kind != TKC_ARG_STR || a->v.t[1].kind != TKC_ARG_INT)
      return fail_uns(c, u, "SPECIAL needs the arg (name, size)");
    const char *nm = a->v.t[0].v.s;
    bool gl = !strncmp(nm, "gidx", 4), lo = !strncmp(nm, "lidx", 4);
    int axis = (gl || lo) && nm[4] >= '0' && nm[4] <= '2' && !nm[5] ? nm[4] - '0' : -1;
    if (axis < 0) return fail_uns(c, u, "SPECIAL \"%s\": only gidx0-2 / lidx0-2 launch indices exist", nm);
    int64_t size = a->v.t[1].v.i, max = gl ? tkc_renderer_ptx.global_max[axis] : tkc_renderer_ptx.local_max[axis];
    if (size < 0 || size > max) return fail_uns(c, u, "SPECIAL %s of size %lld exceeds the launch limit %lld", nm, (long long)size, (long long)max);
    if (s < 0 || !s_int(s) || u->dtype.count != 1) return fail_uns(c, u, "SPECIAL must be an integer");
    uint32_t r = newreg(c, C_R);
    ins(c, "mov.u32 %s, %%%s.%c", N(r), gl ? "ctaid" : "tid", 'x' + axis);
    return set_val1(c, i, cvt_val(c, u, r, TKC_UINT32, s));
  }
  case TKC_OP_CONST: case TKC_OP_VCONST: {
    if (s < 0) return fail_uns(c, u, "constant of a non-value dtype");
    int cnt = u->dtype.count;
    if (u->op == TKC_OP_VCONST && (u->arg.kind != TKC_ARG_TUPLE || (int)u->arg.n != cnt)) return fail_uns(c, u, "VCONST arg");
    if (u->op == TKC_OP_CONST && u->arg.kind != TKC_ARG_INT && u->arg.kind != TKC_ARG_FLOAT) return fail_uns(c, u, "CONST arg");
    if (cnt > 256) return fail_uns(c, u, "vector too wide");
    uint32_t r[256];
    for (int j = 0; j < cnt; j++) {
      const tkc_arg *aj = u->op == TKC_OP_VCONST ? &u->arg.v.t[j] : &u->arg;
      if (u->op == TKC_OP_CONST && j > 0) { r[j] = r[0]; continue; }
      r[j] = const_reg(c, s, tkc_value_from_arg(aj, (tkc_dtype)s));
    }
    return set_val(c, i, r, cnt);
  }
  case TKC_OP_RANGE: {
    if (u->nsrc != 2 || s < 0 || !s_int(s) || u->dtype.count != 1) return fail_uns(c, u, "RANGE needs (start, end) of an integer dtype");
    uint32_t st = cvt_val(c, u, lane(c, u, u->src[0], 0), vscalar(u->src[0]->dtype), s);
    uint32_t en = cvt_val(c, u, lane(c, u, u->src[1], 0), vscalar(u->src[1]->dtype), s);
    if (st == NOREG || en == NOREG) return false;
    uint32_t r = newreg(c, TI[s].cls);
    ins(c, "%s %s, %s", cls_mov[TI[s].cls], N(r), N(st));
    if (!range_taken(u)) {
      uint32_t p = newreg(c, C_P);
      ins(c, "setp.ge.%s %s, %s, %s", TI[s].t, N(p), N(r), N(en));
      ins(c, "@%s bra $END_%zu", N(p), i);
    }
    label(c, "LOOP", i);
    uint32_t v[2] = {r, en}; /* one lane (the counter); the end rides along for ENDRANGE */
    if (!set_val(c, i, v, 2)) return false;
    c->nl[i] = 1;
    return true;
  }
  case TKC_OP_ENDRANGE: {
    int k = u->nsrc >= 1 ? posof(c, u->src[0]) : -1;
    if (k < 0 || c->uops[k]->op != TKC_OP_RANGE || !c->val[k]) return fail_uns(c, u, "ENDRANGE of a RANGE that was not opened");
    int rs = vscalar(c->uops[k]->dtype);
    uint32_t r = c->val[k][0], en = c->val[k][1], p = newreg(c, C_P);
    ins(c, "add.%s %s, %s, 1", TI[rs].t, N(r), N(r));
    ins(c, "setp.lt.%s %s, %s, %s", TI[rs].t, N(p), N(r), N(en));
    ins(c, "@%s bra $LOOP_%d", N(p), k);
    label(c, "END", (size_t)k);
    return true;
  }
  case TKC_OP_IF: {
    if (u->nsrc < 1 || u->src[0]->dtype.count != 1) return fail_uns(c, u, "IF needs one gate");
    uint32_t g = cvt_val(c, u, lane(c, u, u->src[0], 0), vscalar(u->src[0]->dtype), TKC_BOOL);
    if (g == NOREG) return false;
    ins(c, "@!%s bra $ENDIF_%zu", N(g), i);
    return true;
  }
  case TKC_OP_ENDIF: {
    int k = u->nsrc >= 1 ? posof(c, u->src[0]) : -1;
    if (k < 0 || c->uops[k]->op != TKC_OP_IF) return fail_uns(c, u, "ENDIF of an IF that was not opened");
    label(c, "ENDIF", (size_t)k);
    return true;
  }
  case TKC_OP_BARRIER: ins(c, "bar.sync 0"); return true;
  case TKC_OP_DEFINE_ACC: {
    if (s < 0 || u->nsrc < 1) return fail_uns(c, u, "DEFINE_ACC needs a value dtype and an initial value");
    int cnt = u->dtype.count, is = vscalar(u->src[0]->dtype);
    uint32_t r[256];
    if (cnt > 256) return fail_uns(c, u, "vector too wide");
    for (int j = 0; j < cnt; j++) {
      uint32_t init = cvt_val(c, u, lane(c, u, u->src[0], j), is, s);
      if (init == NOREG) return false;
      r[j] = newreg(c, TI[s].cls);
      ins(c, "%s %s, %s", cls_mov[TI[s].cls], N(r[j]), N(init));
    }
    return set_val(c, i, r, cnt);
  }
  case TKC_OP_ASSIGN: {
    if (u->nsrc != 2 || s < 0) return fail_uns(c, u, "ASSIGN needs (accumulator, value)");
    int nl;
    const uint32_t *acc = V(c, u, u->src[0], &nl);
    if (!acc) return false;
    int vs = vscalar(u->src[1]->dtype), as = vscalar(u->src[0]->dtype);
    if (vs < 0 || as < 0) return fail_uns(c, u, "ASSIGN of a non-value");
    for (int j = 0; j < nl; j++) {
      uint32_t v = cvt_val(c, u, lane(c, u, u->src[1], j), vs, as);
      if (v == NOREG) return false;
      if (v != acc[j]) ins(c, "%s %s, %s", cls_mov[reg_cls(acc[j])], N(acc[j]), N(v));
    }
    return set_val(c, i, acc, nl);
  }
  case TKC_OP_INDEX: { /* kept when the backend rewrite was not applied: base + idx * itemsize */
    if (u->nsrc != 2 || !u->dtype.space || u->dtype.pcount != 1 || !u->src[0]->dtype.space) return fail_uns(c, u, "INDEX must be (buffer, index) here: gates belong on LOAD/STORE");
    int is = vscalar(u->src[1]->dtype);
    if (is < 0 || !s_int(is) || u->src[1]->dtype.count != 1) return fail_uns(c, u, "INDEX needs a scalar integer index");
    uint32_t b = lane(c, u, u->src[0], 0), x = cvt_val(c, u, lane(c, u, u->src[1], 0), is, TKC_INT64);
    if (b == NOREG || x == NOREG) return false;
    uint32_t d = newreg(c, C_RD);
    ins(c, "mad.lo.s64 %s, %s, %u, %s", N(d), N(x), (unsigned)TI[u->src[0]->dtype.scalar].bytes, N(b));
    return set_val1(c, i, d);
  }
  case TKC_OP_LOAD: return render_load(c, i, u);
  case TKC_OP_STORE: return render_store(c, u);
  case TKC_OP_GEP: {
    if (u->nsrc != 1) return fail_uns(c, u, "GEP needs one source");
    int nidx = u->arg.kind == TKC_ARG_TUPLE ? (int)u->arg.n : u->arg.kind == TKC_ARG_INT ? 1 : 0;
    if (nidx < 1 || nidx > 256) return fail_uns(c, u, "GEP arg");
    uint32_t r[256];
    for (int k = 0; k < nidx; k++) {
      const tkc_arg *ak = u->arg.kind == TKC_ARG_INT ? &u->arg : &u->arg.v.t[k];
      if (ak->kind != TKC_ARG_INT || ak->v.i < 0 || ak->v.i > 255) return fail_uns(c, u, "GEP arg");
      if ((r[k] = lane(c, u, u->src[0], (int)ak->v.i)) == NOREG) return false;
    }
    return set_val(c, i, r, nidx);
  }
  case TKC_OP_VECTORIZE: {
    uint32_t r[256];
    int n = 0;
    for (int k = 0; k < u->nsrc; k++) {
      int nl;
      const uint32_t *v = V(c, u, u->src[k], &nl);
      if (!v) return false;
      if (n + nl > 256) return fail_uns(c, u, "vector too wide");
      int ss = vscalar(u->src[k]->dtype);
      for (int j = 0; j < nl; j++) {
        r[n] = s >= 0 && ss >= 0 ? cvt_val(c, u, v[j], ss, s) : v[j];
        if (r[n++] == NOREG) return false;
      }
    }
    return set_val(c, i, r, n);
  }
  case TKC_OP_CAST: case TKC_OP_BITCAST: {
    if (u->nsrc != 1) return fail_uns(c, u, "expects one source");
    const tkc_uop *x = u->src[0];
    if (u->dtype.space || x->dtype.space) { /* pointer casts: the byte address stays */
      bool to_addr = u->dtype.space || (!u->dtype.space && u->dtype.count == 1 && (u->dtype.scalar == TKC_INT64 || u->dtype.scalar == TKC_UINT64));
      if (!to_addr || (!x->dtype.space && !(x->dtype.scalar == TKC_INT64 || x->dtype.scalar == TKC_UINT64)))
        return fail_uns(c, u, "a pointer converts only to a pointer or a 64-bit integer");
      int nl;
      const uint32_t *v = V(c, u, x, &nl);
      return v && set_val(c, i, v, nl);
    }
    int fs = vscalar(x->dtype);
    if (s < 0 || fs < 0) return fail_uns(c, u, "cast of a non-value");
    if (u->dtype.count != x->dtype.count) return fail_uns(c, u, "%s changing the vector width", u->op == TKC_OP_CAST ? "CAST" : "BITCAST");
    uint32_t r[256];
    if (u->dtype.count > 256) return fail_uns(c, u, "vector too wide");
    for (int j = 0; j < u->dtype.count; j++) {
      uint32_t a = lane(c, u, x, j);
      r[j] = u->op == TKC_OP_CAST ? cvt_val(c, u, a, fs, s) : bitcast_val(c, u, a, fs, s);
      if (r[j] == NOREG) return false;
    }
    return set_val(c, i, r, u->dtype.count);
  }
  case TKC_OP_WMMA: return render_wmma(c, i, u);
  default:
    if (tkc_op_flags((tkc_op)u->op) & TKC_F_ALU) return render_alu(c, i, u);
    return fail_uns(c, u, NULL);
  }
}

/* ---------------------------------------------------------------- the renderer */

/* buffers and variables (parameters), and the address space of every pointer-derived value */
static bool prepass(pctx *c) {
  for (size_t i = 0; i < c->n; i++) {
    const tkc_uop *u = c->uops[i];
    if (c->pos[u->id] != (int32_t)i) continue;
    if (u->op == TKC_OP_DEFINE_GLOBAL) {
      if (u->arg.kind != TKC_ARG_INT || u->arg.v.i < 0 || u->arg.v.i > 65535) return fail_uns(c, u, "DEFINE_GLOBAL needs a buffer number arg");
      c->space[i] = SP_GLOBAL;
    } else if (u->op == TKC_OP_DEFINE_VAR) {
      if (!tkc_render_var_name(u)) return fail_uns(c, u, "DEFINE_VAR needs a (name, min, max) arg");
    } else if (u->op == TKC_OP_DEFINE_LOCAL) {
      c->space[i] = SP_SHARED;
    } else {
      /* an address keeps the space of the pointer it is computed from */
      int from = -1;
      if (u->op == TKC_OP_CAST || u->op == TKC_OP_NOOP || u->op == TKC_OP_INDEX) from = 0;
      else if (u->op == TKC_OP_ADD || u->op == TKC_OP_SUB) from = 2; /* either source */
      else if (u->op == TKC_OP_MULACC) from = 3;                     /* the addend */
      if (from == 0 && u->nsrc >= 1) c->space[i] = (uint8_t)(posof(c, u->src[0]) >= 0 ? c->space[posof(c, u->src[0])] : 0);
      else if (from == 2)
        for (int k = 0; k < u->nsrc && k < 2; k++) {
          int p = posof(c, u->src[k]);
          if (p >= 0 && c->space[p]) c->space[i] = c->space[p];
        }
      else if (from == 3 && u->nsrc == 3 && posof(c, u->src[2]) >= 0) c->space[i] = c->space[posof(c, u->src[2])];
    }
  }
  return true;
}

static char *render_ptx(const tkc_renderer *self, const char *name, tkc_uop *const *uops, size_t n) {
  (void)self;
  if (!name) name = "kernel";
  if (!tkc_render_is_ident(name)) return tkc_err_null(TKC_EINVAL, "PTX renderer: kernel name \"%s\" is not an identifier", name);
  if (!uops || !n) return tkc_err_null(TKC_EINVAL, "PTX renderer: NULL or empty kernel");
  char arch[24];
  int sm = tkc_ptx_arch(arch, sizeof arch);
  if (!sm) return NULL;
  pctx c;
  memset(&c, 0, sizeof c);
  c.uops = uops;
  c.n = n;
  c.sm = sm;
  if (tkc_render_posmap("PTX", uops, n, &c.pos, &c.npos) != TKC_OK) return NULL;
  c.val = tkc_calloc(n, sizeof *c.val);
  c.nl = tkc_calloc(n, sizeof *c.nl);
  c.space = tkc_calloc(n, 1);
  char *out = NULL;
  if (!c.val || !c.nl || !c.space) { fail_oom(&c); goto done; }
  if (!prepass(&c)) goto done;
  if (tkc_render_params_collect("PTX", uops, n, &c.params) != TKC_OK) { c.failed = true; goto done; }
  for (size_t i = 0; i < n; i++) {
    if (c.pos[uops[i]->id] != (int32_t)i) continue;
    if (!render_one(&c, i) || c.failed) { c.failed = true; goto done; }
  }
  if (c.body.oom || c.decl.oom) { fail_oom(&c); goto done; }

  tkc_sbuf o = {0};
  tkc_sbuf_printf(&o, "//\n// Generated by tkc %s (PTX renderer)\n//\n\n", tkc_version());
  tkc_sbuf_printf(&o, ".version %s\n.target %s\n.address_size 64\n\n", tkc_ptx_isa_version(sm, strchr(arch, 'a') != NULL), arch);
  tkc_sbuf_printf(&o, ".visible .entry %s(", name);
  int np = 0;
  int64_t next = 0;
  for (size_t k = 0; k < c.params.nbufs; k++) {
    for (; next <= c.params.bufs[k]; next++) tkc_sbuf_printf(&o, "%s\n\t.param .u64 data%lld", np++ ? "," : "", (long long)next);
  }
  for (size_t k = 0; k < c.params.nvars; k++) tkc_sbuf_printf(&o, "%s\n\t.param .s32 var%zu", np++ ? "," : "", k);
  tkc_sbuf_puts(&o, np ? "\n)\n{\n" : ")\n{\n");
  for (int k = 0; k < C_N; k++)
    if (c.nreg[k]) tkc_sbuf_printf(&o, "\t.reg .%s %s<%u>;\n", cls_decl[k], cls_prefix[k], c.nreg[k]);
  if (c.decl.s) tkc_sbuf_puts(&o, c.decl.s);
  tkc_sbuf_puts(&o, "\n");
  if (c.body.s) tkc_sbuf_puts(&o, c.body.s);
  tkc_sbuf_puts(&o, "\tret;\n}\n");
  out = tkc_sbuf_take(&o);
  if (!out) c.failed = true;

done:
  if (c.val)
    for (size_t i = 0; i < n; i++) tkc_free(c.val[i]);
  tkc_free(c.val);
  tkc_free(c.nl);
  tkc_free(c.pos);
  tkc_free(c.space);
  tkc_render_params_free(&c.params);
  tkc_free(c.body.s);
  tkc_free(c.decl.s);
  if (c.failed) {
    tkc_free(out);
    return NULL;
  }
  return out;
}

/* ---------------------------------------------------------------- backend rewrites (ptx_matcher) */

#define M(name) tkc_match_get(m, name)

static tkc_uop *mk(tkc_graph *g, tkc_op op, tkc_dt dt, int n, tkc_uop *a, tkc_uop *b, tkc_uop *c) {
  tkc_uop *s[3] = {a, b, c};
  if (!a || (n > 1 && !b) || (n > 2 && !c)) return NULL;
  return tkc_uop_new(g, op, dt, n, s, tkc_arg_none());
}

/* x != y on bools -> x ^ y */
static tkc_uop *bool_cmpne(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  tkc_uop *x = M("x"), *y = M("y"), *r = tkc_match_root(m);
  if (!tkc_dt_eq(x->dtype, y->dtype) || !tkc_dt_eq(r->dtype, x->dtype)) return NULL;
  return mk(g, TKC_OP_XOR, x->dtype, 2, x, y, NULL);
}

/* x < y on bools -> (x ^ true) & y */
static tkc_uop *bool_cmplt(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  tkc_uop *x = M("x"), *y = M("y"), *r = tkc_match_root(m);
  if (!tkc_dt_eq(x->dtype, y->dtype) || !tkc_dt_eq(r->dtype, x->dtype)) return NULL;
  tkc_uop *t = tkc_uop_const_int(g, x->dtype, 1);
  return mk(g, TKC_OP_AND, x->dtype, 2, mk(g, TKC_OP_XOR, x->dtype, 2, x, t, NULL), y, NULL);
}

/* op(half...) -> (half)op((float)...) for the ops PTX has no f16 form of */
static tkc_uop *half_upcast(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  tkc_uop *x = M("x"), *src[3];
  if (x->nsrc > 3) return NULL;
  tkc_dt f = tkc_dt_vec(tkc_dt_of(TKC_FLOAT32), x->dtype.count);
  for (int k = 0; k < x->nsrc; k++)
    if (!(src[k] = tkc_uop_cast(g, x->src[k], tkc_dt_vec(tkc_dt_of(TKC_FLOAT32), x->src[k]->dtype.count)))) return NULL;
  tkc_uop *r = tkc_uop_new(g, (tkc_op)x->op, f, x->nsrc, src, x->arg);
  return r ? tkc_uop_cast(g, r, x->dtype) : NULL;
}

/* POW, which PTX has no instruction for (tinygrad's exp2(y*log2(x)) gives 728.9999999999997 for
 * 3.0 ** 6.0), with C's special cases:
 *  - float32 / bfloat16 (half is upcast to float32 first) are computed in float64 and rounded once:
 *    the float64 error below is ~1e-14 relative where the float32 result is finite, so the result is
 *    within 1 ulp of the correctly rounded float32 (nearly always equal) and whole-number results are
 *    exact;
 *  - float64: a whole exponent |y| < 2048 by repeated squaring (11 steps: exact where the result is
 *    representable, else within ~|y| ulp), others exp2(y * log2|x|) with the float64 EXP2/LOG2
 *    sequences (relative error ~ |y * log2|x|| * 2^-52, e.g. ~100 ulp for results near 1e30). */
static tkc_uop *pow_rewrite(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  tkc_uop *p = M("x"), *x = p->src[0], *y = p->src[1];
  int n = p->dtype.count;
  tkc_dt f64 = tkc_dt_vec(tkc_dt_of(TKC_FLOAT64), n), i64 = tkc_dt_vec(tkc_dt_of(TKC_INT64), n), b = tkc_dt_vec(tkc_dt_of(TKC_BOOL), n);
  if (p->dtype.scalar != TKC_FLOAT64) { /* float32 / bfloat16 through float64 */
    tkc_uop *s[2] = {tkc_uop_cast(g, x, f64), tkc_uop_cast(g, y, f64)};
    tkc_uop *r = s[0] && s[1] ? tkc_uop_new(g, TKC_OP_POW, f64, 2, s, tkc_arg_none()) : NULL;
    return r ? tkc_uop_cast(g, r, p->dtype) : NULL;
  }
#define K(v) tkc_uop_const_like(g, x, (v))
#define A2(op, a, c) tkc_uop_alu2(g, TKC_OP_##op, (a), (c))
#define NOT(a) A2(CMPNE, (a), tkc_uop_const_float(g, b, 1))
#define SEL(c, a, e) tkc_uop_alu3(g, TKC_OP_WHERE, (c), (a), (e))
#define EQ(a, c) NOT(A2(CMPNE, (a), (c)))
  tkc_uop *xneg = A2(CMPLT, x, K(0)), *ax = SEL(xneg, tkc_uop_alu1(g, TKC_OP_NEG, x), x);
  tkc_uop *yneg = A2(CMPLT, y, K(0)), *ay = SEL(yneg, tkc_uop_alu1(g, TKC_OP_NEG, y), y);
  tkc_uop *yi = tkc_uop_cast(g, y, i64); /* saturates; |y| >= 2^62 is an even integer anyway */
  tkc_uop *big = NOT(A2(CMPLT, ay, K(0x1p62)));
  tkc_uop *yint = A2(OR, EQ(tkc_uop_cast(g, yi, f64), y), big);
  tkc_uop *odd = A2(AND, A2(CMPNE, A2(AND, yi, tkc_uop_const_like_int(g, yi, 1)), tkc_uop_const_like_int(g, yi, 0)), NOT(big));
  /* repeated squaring over the bits of |y| (a whole |y| < 2048) */
  tkc_uop *e = tkc_uop_cast(g, SEL(A2(CMPLT, ay, K(2048)), ay, K(0)), i64), *r = K(1), *sq = ax;
  for (int k = 0; k < 11; k++) {
    tkc_uop *bit = A2(CMPNE, A2(AND, e, tkc_uop_const_like_int(g, e, (int64_t)1 << k)), tkc_uop_const_like_int(g, e, 0));
    r = SEL(bit, A2(MUL, r, sq), r);
    if (k < 10) sq = A2(MUL, sq, sq);
  }
  r = SEL(yneg, tkc_uop_alu1(g, TKC_OP_RECIP, r), r);
  tkc_uop *gen = tkc_uop_alu1(g, TKC_OP_EXP2, A2(MUL, y, tkc_uop_alu1(g, TKC_OP_LOG2, ax)));
  tkc_uop *mag = SEL(A2(AND, yint, A2(CMPLT, ay, K(2048))), r, gen);
  tkc_uop *res = SEL(A2(AND, xneg, odd), tkc_uop_alu1(g, TKC_OP_NEG, mag), mag);
  res = SEL(A2(AND, xneg, NOT(yint)), K(NAN), res);                       /* negative base, fractional exponent */
  res = SEL(A2(AND, EQ(ax, K(1)), EQ(ay, K(INFINITY))), K(1), res);       /* (-1) ** +-inf = 1 */
  return SEL(A2(OR, EQ(x, K(1)), EQ(y, K(0))), K(1), res);                /* 1 ** y = x ** 0 = 1, NaN too */
#undef K
#undef A2
#undef NOT
#undef SEL
#undef EQ
}

/* LOAD<bool> -> (bool)LOAD<uint8> (alt value cast to uint8) */
static tkc_uop *bool_load(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  tkc_uop *x = M("x"), *src[8];
  if (x->nsrc > 8 || x->nsrc < 1) return NULL;
  tkc_dt u8 = tkc_dt_vec(tkc_dt_of(TKC_UINT8), x->dtype.count);
  for (int k = 0; k < x->nsrc; k++) src[k] = x->src[k];
  if (x->nsrc >= 3 && !is_void(src[1]) && !(src[1] = tkc_uop_cast(g, src[1], tkc_dt_vec(tkc_dt_of(TKC_UINT8), src[1]->dtype.count))))
    return NULL;
  tkc_uop *ld = tkc_uop_new(g, TKC_OP_LOAD, u8, x->nsrc, src, x->arg);
  return ld ? tkc_uop_cast(g, ld, x->dtype) : NULL;
}

/* STORE(a, v<bool>, ...) -> STORE(a, (uint8)v, ...) */
static tkc_uop *bool_store(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  tkc_uop *st = tkc_match_root(m), *src[8];
  if (st->nsrc > 8) return NULL;
  for (int k = 0; k < st->nsrc; k++) src[k] = st->src[k];
  if (!(src[1] = tkc_uop_cast(g, src[1], tkc_dt_vec(tkc_dt_of(TKC_UINT8), src[1]->dtype.count)))) return NULL;
  return tkc_uop_new(g, TKC_OP_STORE, st->dtype, st->nsrc, src, st->arg);
}

/* INDEX(buf, i) -> (int64)buf + (int64)i * itemsize */
static tkc_uop *index_addr(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  tkc_uop *buf = M("buf"), *idx = M("idx");
  if (!buf->dtype.space || buf->dtype.pcount != 1 || idx->dtype.space || idx->dtype.count != 1 || !tkc_dt_is_int(idx->dtype)) return NULL;
  tkc_dt i64 = tkc_dt_of(TKC_INT64);
  int64_t size = (int64_t)TI[buf->dtype.scalar < TKC_VOID ? buf->dtype.scalar : TKC_UINT8].bytes;
  tkc_uop *base = tkc_uop_new(g, TKC_OP_CAST, i64, 1, &buf, tkc_arg_none()), *off;
  if (!base) return NULL;
  if (idx->op == TKC_OP_CONST && idx->arg.kind == TKC_ARG_INT) {
    if (idx->arg.v.i == 0) return base;
    off = tkc_uop_const_int(g, i64, idx->arg.v.i * size);
  } else {
    off = tkc_uop_cast(g, idx, i64);
    if (off && size != 1) off = mk(g, TKC_OP_MUL, i64, 2, off, tkc_uop_const_int(g, i64, size), NULL);
  }
  return mk(g, TKC_OP_ADD, i64, 2, base, off, NULL);
}

/* CAST of a pointer -> its source, once that source is a byte address */
static tkc_uop *ptr_cast(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)g, (void)ctx;
  tkc_uop *x = M("x");
  if (x->nsrc != 1 || x->src[0]->dtype.space) return NULL;
  return x->src[0];
}

/* a*b + c -> MULACC(a, b, c), but not for the address sum base + offset (it stays an ADD of the base) */
static tkc_uop *mulacc(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  tkc_uop *r = tkc_match_root(m), *mul = M("mul"), *c = M("c");
  if (r->dtype.space || r->dtype.scalar == TKC_BOOL || !tkc_dt_eq(mul->dtype, r->dtype) || !tkc_dt_eq(c->dtype, r->dtype)) return NULL;
  if (c->op == TKC_OP_CAST && c->nsrc == 1 && c->src[0]->dtype.space) return NULL;
  return mk(g, TKC_OP_MULACC, r->dtype, 3, mul->src[0], mul->src[1], c);
}

static const tkc_rule ptx_rules[] = {
    {"(CMPNE x<bool> y)", bool_cmpne},                            /* x != y -> x ^ y on bools */
    {"(CMPLT x<bool> y)", bool_cmplt},                            /* x < y -> !x & y on bools */
    {"x:RECIP|LOG2|SIN|SQRT|FDIV|POW|MULACC<half>", half_upcast}, /* f(half) -> (half)f(float) */
    {"x:POW", pow_rewrite},                                       /* x ** y: accurate, from ALU ops */
    {"x:LOAD<bool>", bool_load},                                  /* bools live in memory as bytes */
    {"(STORE _ _<bool> ...)", bool_store},
    {"(INDEX buf idx)", index_addr},                              /* buf[i] -> buf + i*itemsize */
    {"x:CAST<ptr>", ptr_cast},                                    /* (T*)addr -> addr */
    {"(ADD mul:(MUL _ _) c)", mulacc},                            /* a*b+c -> MULACC */
};

/* PTX lacks: defined x/0 and INT_MIN/-1, bfloat16 arithmetic, vector ALU */
#define PTX_TARGET (TKC_TARGET_GUARD_DIV_ZERO | TKC_TARGET_GUARD_DIV_MINUS1 | TKC_TARGET_BF16_BITS | TKC_TARGET_SCALAR_ALU)

static const tkc_matcher *ptx_matcher(void) {
  static tkc_matcher *_Atomic own, *_Atomic all;
  const tkc_matcher *pm = tkc_matcher_static(&own, ptx_rules, TKC_COUNTOF(ptx_rules));
  return pm ? tkc_target_matcher(&all, pm, PTX_TARGET) : NULL;
}

/* mma.sync.m16n8k16 (float16/bfloat16) needs sm_80 */
static bool ptx_tensor_cores(void) {
  char arch[16];
  return tkc_ptx_arch(arch, sizeof arch) >= 80;
}

static int ptx_cache_key(char *buf, size_t n);

const tkc_renderer tkc_renderer_ptx = {
    .name = "PTX",
    .device = "CUDA",
    .has_local = true,
    .has_shared = true,
    .tensor_cores = ptx_tensor_cores,
    .supports_float4 = true,
    .global_max = {2147483647, 65535, 65535}, /* CUDA grid limits (tinygrad's CUDARenderer) */
    .local_max = {1024, 1024, 64},            /* block limits */
    .shared_max = 49152,                      /* static shared memory per block */
    .unsupported_dtypes = 0,
    .extra_matcher = ptx_matcher,
    .render = render_ptx,
    .cache_key = ptx_cache_key,
};

/* The settings the PTX depends on (the renderer's cache_key): the target in effect (tkc_ptx_set_arch,
 * $TKC_CUDA_ARCH, the device's, or the default), and $TKC_CUDA_ARCH as set, as kernel keys had it. */
static int ptx_cache_key(char *buf, size_t n) {
  char arch[16];
  const char *env = getenv("TKC_CUDA_ARCH");
  if (!tkc_ptx_arch(arch, sizeof arch)) snprintf(arch, sizeof arch, "?"); /* (a malformed $TKC_CUDA_ARCH: the render fails) */
  return snprintf(buf, n, "arch=%s env=%s", arch, env ? env : "");
}
