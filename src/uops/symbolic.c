/* symbolic.c — tinygrad's symbolic rule sets (codegen/symbolic.py): symbolic_simple (self folding,
 * zero folding, constant folding, cast/bitcast, pow), symbolic (commutative flipping, combining
 * terms, two-stage ALU folding, lt rules, div/mod folding, range based folding) and symbolic_flat
 * (distributing constants).
 *
 * Semantics. tinygrad reasons with Python big ints and floor division; tkc's integer ops wrap at
 * the dtype width and IDIV/MOD truncate toward zero (C). Every rule here keeps the exact value of
 * the expression under those semantics:
 *  - rules that only use ring identities of ADD/MUL (combining terms, moving constants, two-stage
 *    folding, distributing) hold modulo 2^bits and need no check;
 *  - rules that use range analysis (vmin/vmax) only fire when every range involved is sound
 *    (integer dtypes other than uint64; never the "unknown" [INT64_MIN, INT64_MAX] of floats,
 *    pointers and uint64), and when the sums/products they reason about cannot wrap: intervals are
 *    evaluated in __int128 and must fit the dtype;
 *  - rules derived for floor division (div/mod folding, unrolled divs, (x//c+a)//d) only fire when
 *    the dividend is known to be non-negative (where floor and truncation agree); the lt rules with
 *    division use the truncating form of the bound.
 * Where tinygrad applies a rule to floats (combining terms, c0+x<c1, two-stage folding) so does tkc.
 *
 * The matchers are built once (lock-free: the first to finish publishes, a racing copy is freed)
 * and stay reachable from static pointers for the life of the process. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "uops/uop_internal.h"

typedef __int128 i128;

#define I128_MAX ((i128)(((unsigned __int128)1 << 127) - 1))
#define I128_MIN (-I128_MAX - 1)
#define M(name) tkc_match_get(m, name)

/* ---------------------------------------------------------------- small helpers */

static bool is_int_dt(tkc_dt dt) { return !dt.space && tkc_dtype_is_int((tkc_dtype)dt.scalar); }
static bool is_float_dt(tkc_dt dt) { return tkc_dt_is_float(dt); }

/* The range analysis of u is sound (and meaningful) for its dtype: bool and ints but uint64. */
static bool rk(const tkc_uop *u) {
  tkc_dt dt = u->dtype;
  return !dt.space && (dt.scalar == TKC_BOOL || (tkc_dtype_is_int((tkc_dtype)dt.scalar) && dt.scalar != TKC_UINT64));
}

static void bounds(tkc_dt dt, i128 *lo, i128 *hi) {
  int64_t l, h;
  tkc_dt_range(dt, &l, &h);
  *lo = l;
  *hi = h;
}

static bool fits(tkc_dt dt, i128 lo, i128 hi) {
  i128 dlo, dhi;
  bounds(dt, &dlo, &dhi);
  return lo >= dlo && hi <= dhi && lo <= hi;
}

/* An integer CONST (bool/ints but uint64, whose arg is a bit pattern) and its value. */
static bool ic(const tkc_uop *u, i128 *v) {
  if (!u || u->op != TKC_OP_CONST || u->arg.kind != TKC_ARG_INT || !rk(u)) return false;
  *v = u->arg.v.i;
  return true;
}

/* Checked __int128 arithmetic (no libcalls beyond division, no overflow UB). */
static bool sadd(i128 a, i128 b, i128 *o) {
  if ((b > 0 && a > I128_MAX - b) || (b < 0 && a < I128_MIN - b)) return false;
  *o = a + b;
  return true;
}
static bool smul(i128 a, i128 b, i128 *o) {
  if (a == 0 || b == 0) { *o = 0; return true; }
  if (a == I128_MIN || b == I128_MIN) return false;
  i128 aa = a < 0 ? -a : a, bb = b < 0 ? -b : b;
  if (aa > I128_MAX / bb) return false;
  *o = a * b;
  return true;
}

/* Python's floor division and modulo (b != 0). */
static i128 floordiv(i128 a, i128 b) {
  i128 q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) q--;
  return q;
}
static i128 floormod(i128 a, i128 b) { return a - floordiv(a, b) * b; }
static i128 tdiv(i128 a, i128 b) { return a / b; }
static i128 gcd128(i128 a, i128 b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b) { i128 t = a % b; a = b; b = t; }
  return a;
}

/* An interval [lo, hi], built with checked arithmetic. */
typedef struct ival {
  i128 lo, hi;
} ival;

static bool iv_scale(i128 lo, i128 hi, i128 c, ival *o) {
  i128 a, b;
  if (!smul(lo, c, &a) || !smul(hi, c, &b)) return false;
  o->lo = a < b ? a : b;
  o->hi = a < b ? b : a;
  return true;
}
static bool iv_add(ival *acc, ival b) { return sadd(acc->lo, b.lo, &acc->lo) && sadd(acc->hi, b.hi, &acc->hi); }

/* Wraps an __int128 to int64 modulo 2^64 (the constructor then truncates to the dtype). */
static int64_t wrap64(i128 v) {
  uint64_t u = (uint64_t)(unsigned __int128)v;
  return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1;
}

/* ---------------------------------------------------------------- builders (tinygrad's operators) */

static tkc_uop *kc(tkc_graph *g, const tkc_uop *like, i128 v) { return tkc_uop_const_int(g, like->dtype, wrap64(v)); }
static tkc_uop *alu2(tkc_graph *g, tkc_op op, tkc_uop *a, tkc_uop *b) { return tkc_uop_alu2(g, op, a, b); }
static tkc_uop *add(tkc_graph *g, tkc_uop *a, tkc_uop *b) { return alu2(g, TKC_OP_ADD, a, b); }
static tkc_uop *mul(tkc_graph *g, tkc_uop *a, tkc_uop *b) { return alu2(g, TKC_OP_MUL, a, b); }
/* UOp op int (the constant takes a's dtype) and int op UOp, as Python builds them. */
static tkc_uop *addk(tkc_graph *g, tkc_uop *a, i128 c) { return a ? add(g, a, kc(g, a, c)) : NULL; }
static tkc_uop *mulk(tkc_graph *g, tkc_uop *a, i128 c) { return a ? mul(g, a, kc(g, a, c)) : NULL; }
static tkc_uop *kmul(tkc_graph *g, i128 c, tkc_uop *a) { return a ? mul(g, kc(g, a, c), a) : NULL; }
static tkc_uop *ltk(tkc_graph *g, tkc_uop *a, i128 c) { return a ? alu2(g, TKC_OP_CMPLT, a, kc(g, a, c)) : NULL; }
static tkc_uop *bool_const(tkc_graph *g, int count, bool v) {
  return tkc_uop_const_int(g, tkc_dt_vec(tkc_dt_of(TKC_BOOL), count), v);
}
/* -x: logical not for bool, else x*-1. */
static tkc_uop *neg(tkc_graph *g, tkc_uop *x) {
  if (!x) return NULL;
  if (x->dtype.scalar == TKC_BOOL) return alu2(g, TKC_OP_CMPNE, x, bool_const(g, x->dtype.count, true));
  return mul(g, x, tkc_uop_const_int(g, x->dtype, -1));
}

/* ---------------------------------------------------------------- split_uop, const_factor, divides */

typedef struct uvec {
  tkc_uop **v;
  size_t n, cap;
  tkc_uop *local[16];
} uvec;

static void uv_init(uvec *a) {
  a->v = a->local;
  a->n = 0;
  a->cap = TKC_COUNTOF(a->local);
}
static bool uv_push(uvec *a, tkc_uop *u) {
  if (a->n == a->cap) {
    size_t cap = a->cap * 2;
    tkc_uop **nv = tkc_malloc(cap * sizeof *nv);
    if (!nv) return false;
    memcpy(nv, a->v, a->n * sizeof *nv);
    if (a->v != a->local) tkc_free(a->v);
    a->v = nv;
    a->cap = cap;
  }
  a->v[a->n++] = u;
  return true;
}
static void uv_free(uvec *a) {
  if (a->v != a->local) tkc_free(a->v);
  uv_init(a);
}

/* The leaves of the sep-tree under x, left to right (iterative: chains can be long). */
static bool split_uop(tkc_uop *x, tkc_op sep, uvec *out) {
  uvec stack;
  uv_init(&stack);
  bool ok = uv_push(&stack, x);
  while (ok && stack.n) {
    tkc_uop *u = stack.v[--stack.n];
    if (u->op == sep && u->nsrc == 2) ok = uv_push(&stack, u->src[1]) && uv_push(&stack, u->src[0]);
    else ok = uv_push(out, u);
  }
  uv_free(&stack);
  return ok;
}

/* Largest known int that divides u (tinygrad's const_factor); integer UOps only. */
static i128 const_factor(tkc_uop *u) {
  i128 c;
  switch (u->op) {
  case TKC_OP_CONST: return ic(u, &c) ? c : 1;
  case TKC_OP_VCONST: {
    if (u->arg.kind != TKC_ARG_TUPLE) return 1;
    i128 r = 0;
    for (uint32_t i = 0; i < u->arg.n; i++) {
      if (u->arg.v.t[i].kind != TKC_ARG_INT) return 1;
      r = gcd128(r, u->arg.v.t[i].v.i);
    }
    return r;
  }
  case TKC_OP_ADD: {
    uvec t;
    uv_init(&t);
    i128 r = 1;
    if (split_uop(u, TKC_OP_ADD, &t)) {
      r = 0;
      for (size_t i = 0; i < t.n; i++) r = gcd128(r, const_factor(t.v[i]));
    }
    uv_free(&t);
    return r;
  }
  case TKC_OP_MUL:
    if (ic(u->src[0], &c)) return c;
    if (ic(u->src[1], &c)) return c;
    return 1;
  default: return 1;
  }
}

/* u / v as a UOp when u is known to be a multiple of v (tinygrad's divides); NULL if unsure.
 * A factor that becomes the constant 1 is dropped (tinygrad leaves 1*x for the rewrite to fold). */
static tkc_uop *divides(tkc_graph *g, tkc_uop *u, i128 v, int depth) {
  i128 c;
  if (v == 1) return u;
  if (v == 0 || depth > 200) return NULL;
  switch (u->op) {
  case TKC_OP_CONST:
    if (!ic(u, &c) || c % v != 0) return NULL;
    return kc(g, u, c / v);
  case TKC_OP_ADD: {
    tkc_uop *d0 = divides(g, u->src[0], v, depth + 1);
    tkc_uop *d1 = d0 ? divides(g, u->src[1], v, depth + 1) : NULL;
    return d1 ? add(g, d0, d1) : NULL;
  }
  case TKC_OP_MUL: {
    tkc_uop *d0 = divides(g, u->src[0], v, depth + 1);
    if (d0) return ic(d0, &c) && c == 1 ? u->src[1] : mul(g, d0, u->src[1]);
    tkc_uop *d1 = divides(g, u->src[1], v, depth + 1);
    if (d1) return ic(d1, &c) && c == 1 ? u->src[0] : mul(g, u->src[0], d1);
    return NULL;
  }
  default: return NULL;
  }
}

static tkc_uop *sum_of(tkc_graph *g, const uvec *t) {
  tkc_uop *r = t->n ? t->v[0] : NULL;
  for (size_t i = 1; r && i < t->n; i++) r = add(g, r, t->v[i]);
  return r;
}

/* ---------------------------------------------------------------- constant evaluation */

static bool float_only_op(tkc_op op) {
  return op == TKC_OP_EXP2 || op == TKC_OP_LOG2 || op == TKC_OP_SIN || op == TKC_OP_SQRT || op == TKC_OP_RECIP ||
         op == TKC_OP_FDIV;
}
static bool int_only_op(tkc_op op) {
  return op == TKC_OP_XOR || op == TKC_OP_OR || op == TKC_OP_AND || op == TKC_OP_SHL || op == TKC_OP_SHR || op == TKC_OP_DOT4;
}

/* The arg of lane i of a CONST/VCONST (a CONST holds one value for every lane). */
static const tkc_arg *lane_arg(const tkc_uop *c, int i) {
  if (c->op == TKC_OP_CONST) return &c->arg;
  if (c->arg.kind != TKC_ARG_TUPLE || (uint32_t)i >= c->arg.n) return NULL;
  return &c->arg.v.t[i];
}

/* A CONST (all lanes equal) or VCONST of dtype dt holding vals[0..count). */
static tkc_uop *make_const(tkc_graph *g, tkc_dt dt, const tkc_value *vals, int count) {
  tkc_dtype sc = (tkc_dtype)dt.scalar;
  bool same = true;
  tkc_arg args[64];
  if (count > 64) return NULL;
  for (int i = 0; i < count; i++) {
    args[i] = tkc_value_to_arg(vals[i], sc);
    if (i && !tkc_arg_eq(&args[i], &args[0])) same = false;
  }
  if (same) return tkc_uop_new(g, TKC_OP_CONST, dt, 0, NULL, args[0]);
  return tkc_uop_new(g, TKC_OP_VCONST, dt, 0, NULL, tkc_arg_tuple(args, (uint32_t)count));
}

/* Lane count of a CONST/VCONST source as seen by a result of `count` lanes; -1 if it does not fit. */
static bool const_lanes_ok(const tkc_uop *c, int count) {
  if (c->op == TKC_OP_CONST) return c->arg.kind == TKC_ARG_INT || c->arg.kind == TKC_ARG_FLOAT;
  if (c->op != TKC_OP_VCONST || c->arg.kind != TKC_ARG_TUPLE || c->arg.n != (uint32_t)count) return false;
  for (uint32_t i = 0; i < c->arg.n; i++)
    if (c->arg.v.t[i].kind != TKC_ARG_INT && c->arg.v.t[i].kind != TKC_ARG_FLOAT) return false;
  return true;
}

/* ---------------------------------------------------------------- symbolic_simple callbacks */

static tkc_uop *r_x(tkc_graph *g, const tkc_match *m, void *ctx) { return M("x"); }
static tkc_uop *r_val(tkc_graph *g, const tkc_match *m, void *ctx) { return M("val"); }
static tkc_uop *r_base(tkc_graph *g, const tkc_match *m, void *ctx) { return M("base"); }
static tkc_uop *r_neg_x(tkc_graph *g, const tkc_match *m, void *ctx) { return neg(g, M("x")); }

/* x//x -> 1, only where x cannot be 0 (x//0 is 0). */
static tkc_uop *r_div_self(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *x = M("x");
  if (!is_int_dt(x->dtype) || !rk(x) || (x->vmin <= 0 && x->vmax >= 0)) return NULL;
  return tkc_uop_const_int(g, x->dtype, 1);
}

static bool nonzero_int_cvar(const tkc_uop *c) {
  i128 v;
  if (c->op == TKC_OP_CONST) return ic(c, &v) && v != 0;
  if (c->op != TKC_OP_VCONST || c->arg.kind != TKC_ARG_TUPLE || !rk(c)) return false;
  for (uint32_t i = 0; i < c->arg.n; i++)
    if (c->arg.v.t[i].kind != TKC_ARG_INT || c->arg.v.t[i].v.i == 0) return false;
  return true;
}

/* (x%c)+(x//c)*c -> x (C's identity for c != 0; wraps consistently) */
static tkc_uop *r_divmod_recombine(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *x = M("x");
  return is_int_dt(x->dtype) && nonzero_int_cvar(M("c")) ? x : NULL;
}

/* (x//c1)*c3+(x%c1)*c2 -> x*c2 when c1*c2 == c3 */
static tkc_uop *r_divmod_recombine2(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *x = M("x");
  i128 c1, c2, c3;
  if (!is_int_dt(x->dtype) || !ic(M("c1"), &c1) || !ic(M("c2"), &c2) || !ic(M("c3"), &c3) || c1 == 0) return NULL;
  return c1 * c2 == c3 ? mul(g, x, M("c2")) : NULL;
}

static bool const_truthy(const tkc_uop *c) {
  return c->arg.kind == TKC_ARG_FLOAT ? c->arg.v.f != 0 : c->arg.kind == TKC_ARG_INT && c->arg.v.i != 0;
}
static tkc_uop *r_bool_and_const(tkc_graph *g, const tkc_match *m, void *ctx) {
  return const_truthy(M("c")) ? M("x") : M("c");
}
static tkc_uop *r_bool_or_const(tkc_graph *g, const tkc_match *m, void *ctx) {
  return const_truthy(M("c")) ? M("c") : M("x");
}

static tkc_uop *r_false(tkc_graph *g, const tkc_match *m, void *ctx) { return bool_const(g, M("x")->dtype.count, false); }

/* x*0 -> 0 for ints and bool; for floats only when x is a constant (nan when it is nan/inf): a float
 * x may be inf or nan at run time, and inf*0 = nan*0 = nan (tinygrad folds it to 0 regardless) */
static tkc_uop *r_mul_zero(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *x = M("x");
  if (tkc_dt_is_float(x->dtype)) {
    if (x->op != TKC_OP_CONST) return NULL;
    if (x->arg.kind == TKC_ARG_FLOAT && !isfinite(x->arg.v.f)) return tkc_uop_const_float(g, x->dtype, NAN);
  }
  return tkc_uop_const_int(g, x->dtype, 0);
}

/* op(c0, c1, ...) -> c, with tkc_alu_eval (tinygrad's exec_alu, truncated to the dtype) */
static tkc_uop *r_const_fold(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *a = tkc_match_root(m);
  tkc_op op = (tkc_op)a->op;
  tkc_dt dt = a->dtype;
  if (op == TKC_OP_THREEFRY || a->nsrc < 1 || a->nsrc > 3 || dt.space || dt.scalar == TKC_VOID) return NULL;
  tkc_dtype out = (tkc_dtype)dt.scalar;
  tkc_dtype in = (op == TKC_OP_CMPLT || op == TKC_OP_CMPNE || op == TKC_OP_WHERE) ? (tkc_dtype)a->src[0]->dtype.scalar : out;
  tkc_dtype opnd = (op == TKC_OP_CMPLT || op == TKC_OP_CMPNE) ? in : out;
  if (float_only_op(op) && !tkc_dtype_is_float(opnd)) return NULL;
  if (int_only_op(op) && tkc_dtype_is_float(opnd)) return NULL;
  int count = dt.count;
  if (count > 64) return NULL;
  for (int i = 0; i < a->nsrc; i++)
    if (a->src[i]->dtype.space || !const_lanes_ok(a->src[i], count)) return NULL;
  tkc_value vals[64];
  for (int lane = 0; lane < count; lane++) {
    tkc_value s[3];
    for (int i = 0; i < a->nsrc; i++) s[i] = tkc_value_from_arg(lane_arg(a->src[i], lane), (tkc_dtype)a->src[i]->dtype.scalar);
    if (tkc_alu_eval(op, out, in, s, a->nsrc, &vals[lane]) != TKC_OK) return NULL;
  }
  return make_const(g, dt, vals, count);
}

static tkc_uop *r_bool_and(tkc_graph *g, const tkc_match *m, void *ctx) { return alu2(g, TKC_OP_AND, M("x"), M("y")); }
static tkc_uop *r_bool_or(tkc_graph *g, const tkc_match *m, void *ctx) { return alu2(g, TKC_OP_OR, M("x"), M("y")); }

/* CAST(c) / BITCAST(c) -> c converted (tkc_value_cast / tkc_value_bitcast) */
static tkc_uop *cast_const(tkc_graph *g, tkc_uop *root, tkc_uop *c, bool bit) {
  tkc_dt dt = root->dtype;
  if (dt.space || dt.scalar == TKC_VOID || c->dtype.space || c->dtype.scalar == TKC_VOID || dt.count > 64) return NULL;
  if (!const_lanes_ok(c, dt.count)) return NULL;
  tkc_dtype from = (tkc_dtype)c->dtype.scalar, to = (tkc_dtype)dt.scalar;
  if (bit && tkc_dtype_size(from) != tkc_dtype_size(to)) return NULL;
  tkc_value vals[64];
  for (int i = 0; i < dt.count; i++) {
    tkc_value v = tkc_value_from_arg(lane_arg(c, i), from);
    vals[i] = bit ? tkc_value_bitcast(v, from, to) : tkc_value_cast(v, from, to);
  }
  return make_const(g, dt, vals, dt.count);
}
static tkc_uop *r_cast_const(tkc_graph *g, const tkc_match *m, void *ctx) { return cast_const(g, tkc_match_root(m), M("c"), false); }
static tkc_uop *r_bitcast_const(tkc_graph *g, const tkc_match *m, void *ctx) { return cast_const(g, tkc_match_root(m), M("c"), true); }

/* CAST/BITCAST to the same dtype -> x */
static tkc_uop *r_cast_noop(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *r = M("root");
  return r->nsrc >= 1 && tkc_dt_eq(r->dtype, r->src[0]->dtype) ? r->src[0] : NULL;
}

/* tinygrad's simplify_pow: x**c for a constant c without transcendental lowering. For floats only
 * where the result is pow's (correctly rounded, same special values): x**0 -> 1, x**1 -> x,
 * x**2 -> x*x, x**-1 -> 1/x; other exponents stay POW (x*x*x rounds twice). Ints take the
 * non-negative integer exponents as products (wrapping, as the int POW does). */
static tkc_uop *r_simplify_pow(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *x = M("x"), *c = M("c");
  bool fl = is_float_dt(c->dtype);
  if (!fl && !is_int_dt(c->dtype)) return NULL;
  if (!fl && !rk(c)) return NULL;
  double cv = tkc_uop_const_f(c);
  if (cv == 0) return tkc_uop_const_int(g, x->dtype, 1); /* x**0 -> 1 (nan too, as C's pow) */
  if (fl) {
    if (!is_float_dt(x->dtype)) return NULL;
    if (cv == 1) return x;
    if (cv == 2) return mul(g, x, x);
    if (cv == -1) return tkc_uop_alu1(g, TKC_OP_RECIP, x);
    return NULL;
  }
  if (cv < 0 || fabs(cv) >= 9007199254740992.0) return NULL;
  tkc_uop *y = alu2(g, TKC_OP_POW, x, tkc_uop_const_like(g, c, floor(cv / 2))); /* x**n -> y*y(*x), y = x**(n//2) */
  tkc_uop *r = mul(g, y, y);
  return fmod(cv, 2) == 1 ? mul(g, r, x) : r;
}

/* 1**x -> 1 (also for a nan x, as C's pow). tinygrad's c**x -> exp2(x*log2(c)) is left out: it is
 * not within an ulp of pow. */
static tkc_uop *r_const_pow(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *c = M("c"), *root = tkc_match_root(m);
  if (tkc_uop_const_f(c) != 1) return NULL;
  return tkc_dt_eq(c->dtype, root->dtype) ? c : tkc_uop_const_int(g, root->dtype, 1);
}

/* ---------------------------------------------------------------- symbolic callbacks */

/* commutative int32 ops: sources in tuplize order */
static tkc_uop *r_flip(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *x = M("x");
  if (x->nsrc != 2 || tkc_uop_cmp(x->src[1], x->src[0]) >= 0) return NULL;
  tkc_uop *s[2] = {x->src[1], x->src[0]};
  return tkc_uop_new(g, (tkc_op)x->op, x->dtype, 2, s, x->arg);
}

static tkc_uop *r_combine_cc(tkc_graph *g, const tkc_match *m, void *ctx) {
  return mul(g, M("x"), add(g, M("c0"), M("c1")));
}
static tkc_uop *r_combine_ycc(tkc_graph *g, const tkc_match *m, void *ctx) {
  return add(g, M("y"), mul(g, M("x"), add(g, M("c0"), M("c1"))));
}
static tkc_uop *r_combine_c1(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *c = M("c");
  return mul(g, M("x"), add(g, c, tkc_uop_const_int(g, c->dtype, 1)));
}
static tkc_uop *r_combine_yc1(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *c = M("c");
  return add(g, M("y"), mul(g, M("x"), add(g, c, tkc_uop_const_int(g, c->dtype, 1))));
}
static tkc_uop *r_combine_2(tkc_graph *g, const tkc_match *m, void *ctx) { return mulk(g, M("x"), 2); }
static tkc_uop *r_combine_y2(tkc_graph *g, const tkc_match *m, void *ctx) { return add(g, M("y"), mulk(g, M("x"), 2)); }

static tkc_uop *r_neg_add(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *y = M("c") ? M("c") : M("y");
  return add(g, neg(g, M("x")), neg(g, y));
}

static tkc_uop *r_where_const(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *gate = M("gate");
  if (gate->arg.kind != TKC_ARG_INT && gate->arg.kind != TKC_ARG_FLOAT) return NULL;
  return const_truthy(gate) ? M("c0") : M("c1");
}

/* op(c?t:f, c?tt:ff) -> c ? op(t,tt) : op(f,ff) when one side is two constants */
static tkc_uop *r_where_alu(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *alu = M("alu"), *t = M("t"), *tt = M("tt"), *f = M("f"), *ff = M("ff");
  if (!((t->op == TKC_OP_CONST && tt->op == TKC_OP_CONST) || (f->op == TKC_OP_CONST && ff->op == TKC_OP_CONST))) return NULL;
  return tkc_uop_alu3(g, TKC_OP_WHERE, M("c"), alu2(g, (tkc_op)alu->op, t, tt), alu2(g, (tkc_op)alu->op, f, ff));
}

/* ALU min==max -> CONST */
static tkc_uop *r_minmax_const(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *x = M("x");
  if (!rk(x) || x->vmin != x->vmax) return NULL;
  return tkc_uop_const_int(g, x->dtype, x->vmin);
}

/* max(x, y) -> x if x >= y always, y if y >= x always */
static tkc_uop *r_max_fold(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *x = M("x"), *y = M("y");
  if (!rk(x) || !rk(y)) return NULL;
  if (x->vmin >= y->vmax) return x;
  if (x->vmax <= y->vmin) return y;
  return NULL;
}

/* (x op c1) op c2 -> x op (c1 op c2) */
static tkc_uop *r_two_stage(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_op op = (tkc_op)tkc_match_root(m)->op;
  return alu2(g, op, M("x"), alu2(g, op, M("c1"), M("c2")));
}

/* c0+x < c1 -> x < c1-c0 (ints: only when x+c0 cannot wrap) */
static tkc_uop *r_lt_add_const(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *x = M("x"), *c0 = M("c0"), *c1 = M("c1");
  if (is_float_dt(x->dtype)) return alu2(g, TKC_OP_CMPLT, x, add(g, c1, neg(g, c0)));
  i128 a, b;
  if (!is_int_dt(x->dtype) || !rk(x) || !ic(c0, &a) || !ic(c1, &b)) return NULL;
  if (!fits(x->dtype, x->vmin + a, x->vmax + a) || !fits(x->dtype, b - a, b - a)) return NULL;
  return ltk(g, x, b - a);
}

/* (x//c1)//c2 -> x//(c1*c2) */
static tkc_uop *r_div_div(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *x = M("x");
  i128 a, b;
  if (!is_int_dt(x->dtype) || !ic(M("c1"), &a) || !ic(M("c2"), &b)) return NULL;
  if (a == 0 || a == -1 || b == 0 || !fits(x->dtype, a * b, a * b)) return NULL;
  return alu2(g, TKC_OP_IDIV, x, kc(g, x, a * b));
}

/* c0*x < c1 -> x < ceil(c1/c0) (c0 > 0, c1 > 0);  -x < -floor(c1/c0) (c0 < -1, c1 <= 0) */
static tkc_uop *r_lt_mul(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *x = M("x");
  i128 c0, c1;
  ival p;
  if (!rk(x) || !ic(M("c0"), &c0) || !ic(M("c1"), &c1)) return NULL;
  if (!iv_scale(x->vmin, x->vmax, c0, &p) || !fits(x->dtype, p.lo, p.hi)) return NULL; /* c0*x cannot wrap */
  if (c0 > 0 && c1 > 0) return ltk(g, x, floordiv(c1 + c0 - 1, c0));
  if (c0 < 0 && c0 != -1 && c1 <= 0) {
    i128 k = -floordiv(c1, c0);
    if (!fits(x->dtype, -(i128)x->vmax, -(i128)x->vmin) || !fits(x->dtype, k, k)) return NULL;
    return ltk(g, neg(g, x), k);
  }
  return NULL;
}

/* x//c0 < c1 -> x < c1*c0 (c0 > 0; with truncation, x < (c1-1)*c0+1 when c1 <= 0 and x may be < 0) */
static tkc_uop *r_lt_div(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *x = M("x");
  i128 c0, c1;
  if (!rk(x) || !ic(M("c0"), &c0) || !ic(M("c1"), &c1) || c0 <= 0) return NULL;
  i128 k = (c1 > 0 || x->vmin >= 0) ? c1 * c0 : (c1 - 1) * c0 + 1;
  return fits(x->dtype, k, k) ? ltk(g, x, k) : NULL;
}

/* (x+c1)+y -> (x+y)+c1 ; (x*c1)*y -> (x*y)*c1 */
static tkc_uop *r_move_const(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_op op = (tkc_op)tkc_match_root(m)->op;
  return alu2(g, op, alu2(g, op, M("x"), M("y")), M("c1"));
}

/* x//n + (x+1)//n + ... + (x+n-1)//n -> x (Hermite's identity; x >= 0 so truncation is floor) */
static tkc_uop *r_fold_unrolled_divs(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *divs = M("divs"), *ans = NULL, *ret = NULL;
  if (!is_int_dt(divs->dtype)) return NULL;
  uvec t;
  uv_init(&t);
  i128 *seen = NULL, den = 0;
  if (!split_uop(divs, TKC_OP_ADD, &t) || !(seen = tkc_malloc(t.n * sizeof *seen))) goto out;
  for (size_t i = 0; i < t.n; i++) {
    tkc_uop *u = t.v[i], *s0;
    i128 d, s = 0;
    if (u->op != TKC_OP_IDIV || u->src[1]->op != TKC_OP_CONST || !ic(u->src[1], &d)) goto out;
    if (i == 0) den = d;
    else if (d != den) goto out;
    s0 = u->src[0];
    if (s0->op == TKC_OP_ADD && s0->src[1]->op == TKC_OP_CONST) {
      if (!ic(s0->src[1], &s)) goto out;
      s0 = s0->src[0];
    }
    seen[i] = s;
    if (!ans) ans = s0;
    else if (ans != s0) goto out;
  }
  i128 n = (i128)t.n, k = den - n;
  if (den <= 0 || n > den || !rk(ans) || ans->vmin < 0) goto out;
  if (k > 0 && !((i128)ans->vmax + k - 1 < den)) goto out;      /* the missing first terms are 0 */
  if (!fits(ans->dtype, ans->vmin, (i128)ans->vmax + den - 1)) goto out; /* x+i cannot wrap */
  for (size_t i = 1; i < t.n; i++) /* insertion sort (chains are short) */
    for (size_t j = i; j > 0 && seen[j - 1] > seen[j]; j--) { i128 tmp = seen[j]; seen[j] = seen[j - 1]; seen[j - 1] = tmp; }
  for (size_t i = 0; i < t.n; i++)
    if (seen[i] != k + (i128)i) goto out;
  ret = ans;
out:
  tkc_free(seen);
  uv_free(&t);
  return ret;
}

/* x < c with x = d*Q + P, d | c, 0 <= P < d  ->  Q < c/d */
static tkc_uop *r_lt_folding(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *x = M("x"), *ret = NULL;
  i128 c;
  if (!ic(M("c"), &c) || c <= 0 || !rk(x)) return NULL;
  uvec t, np, q;
  uv_init(&t);
  uv_init(&np);
  uv_init(&q);
  ival p = {0, 0}, tot = {0, 0};
  i128 d = c;
  if (!split_uop(x, TKC_OP_ADD, &t)) goto out;
  for (size_t i = 0; i < t.n; i++) {
    tkc_uop *u = t.v[i];
    i128 f = const_factor(u);
    if (f == 1) {
      if (!rk(u) || !iv_add(&p, (ival){u->vmin, u->vmax})) goto out;
    } else {
      if (!uv_push(&np, u)) goto out;
      d = gcd128(d, f);
    }
  }
  if (!np.n || d <= 1 || !(p.lo >= 0 && p.hi < d)) goto out;
  tot = p;
  for (size_t i = 0; i < np.n; i++) { /* u = d*v exactly: d*v cannot wrap */
    tkc_uop *v = divides(g, np.v[i], d, 0);
    ival r;
    if (!v || !rk(v) || !iv_scale(v->vmin, v->vmax, d, &r) || !fits(x->dtype, r.lo, r.hi) || !iv_add(&tot, r)) goto out;
    if (!uv_push(&q, v)) goto out;
  }
  if (!fits(x->dtype, tot.lo, tot.hi)) goto out; /* x is the exact sum of its terms */
  ret = ltk(g, sum_of(g, &q), c / d);
out:
  uv_free(&t);
  uv_free(&np);
  uv_free(&q);
  return ret;
}

/* (a0*x0 + a1*x1 + ... < 1) != True  ->  (x0 + x1 + ... < 1) != True  for ai > 0, xi >= 0 irreducible */
static tkc_uop *r_canonicalize_simplex(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *X = M("x"), *ret = NULL;
  if (!rk(X)) return NULL;
  uvec t, r;
  uv_init(&t);
  uv_init(&r);
  bool changed = false;
  ival tot = {0, 0};
  if (!split_uop(X, TKC_OP_ADD, &t)) goto out;
  for (size_t i = 0; i < t.n; i++) {
    tkc_uop *u = t.v[i];
    i128 a = 1;
    if (u->op == TKC_OP_MUL && u->src[1]->op == TKC_OP_CONST && ic(u->src[1], &a) && a > 0) {
      changed = true;
      u = u->src[0];
    } else {
      a = 1;
    }
    ival s;
    if (!(tkc_op_flags((tkc_op)u->op) & TKC_F_R) || !rk(u) || u->vmin < 0) goto out;
    if (!iv_scale(u->vmin, u->vmax, a, &s) || !fits(X->dtype, s.lo, s.hi) || !iv_add(&tot, s)) goto out;
    if (!uv_push(&r, u)) goto out;
  }
  if (!changed || !fits(X->dtype, tot.lo, tot.hi)) goto out;
  tkc_uop *lt = ltk(g, sum_of(g, &r), 1);
  ret = lt ? alu2(g, TKC_OP_CMPNE, lt, bool_const(g, lt->dtype.count, true)) : NULL;
out:
  uv_free(&t);
  uv_free(&r);
  return ret;
}

/* (x//c+a)//d -> (x+a*c)//(c*d) for c, d > 0, when x and x+a*c have one sign */
static tkc_uop *r_div_add_div(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *x = M("x");
  i128 c, a, d;
  if (!is_int_dt(x->dtype) || !rk(x) || !ic(M("c"), &c) || !ic(M("a"), &a) || !ic(M("d"), &d) || c <= 0 || d <= 0) return NULL;
  i128 ac = a * c, cd = c * d, lo = x->vmin + ac, hi = x->vmax + ac;
  if (!fits(x->dtype, ac, ac) || !fits(x->dtype, cd, cd) || !fits(x->dtype, lo, hi)) return NULL;
  if (!((x->vmin >= 0 && lo >= 0) || (x->vmax <= 0 && hi <= 0))) return NULL;
  return alu2(g, TKC_OP_IDIV, addk(g, x, ac), kc(g, x, cd));
}

/* ---------------------------------------------------------------- div_and_mod_folding */

typedef struct dterm {
  tkc_uop *v;
  i128 f, q, r;
} dterm;

static tkc_uop *div_and_mod_folding(tkc_graph *g, tkc_uop *x, tkc_uop *y, tkc_op which, int depth);

static tkc_uop *dmf_terms(tkc_graph *g, tkc_uop *x, i128 c, tkc_op which, int depth, const uvec *terms, dterm *tm) {
  bool is_mod = which == TKC_OP_MOD, changed = false;
  i128 gcd = c, div = 1, cnst = 0, offset = 0;
  size_t n = 0;
  ival orig = {0, 0};
  for (size_t i = 0; i < terms->n; i++) {
    tkc_uop *u = terms->v[i];
    i128 k, f, q, r;
    if (!rk(u) || !iv_add(&orig, (ival){u->vmin, u->vmax})) return NULL;
    if (is_mod && u->op == TKC_OP_MOD && ic(u->src[1], &k) && k % c == 0) { /* (y%(k*c)) is y mod c */
      u = u->src[0];
      changed = true;
    }
    f = const_factor(u);
    if (f == 0) return NULL;
    q = floordiv(f, c);
    r = f - q * c;
    if (r == 0 || ((is_mod || u->op == TKC_OP_CONST) && r != f)) changed = true;
    if (u->op == TKC_OP_CONST) {
      if (!ic(u, &k) || !sadd(offset, r, &offset) || !sadd(cnst, f, &cnst)) return NULL;
      continue;
    }
    tkc_uop *v = divides(g, u, f, 0);
    ival fv;
    i128 rv;
    if (!v || !rk(v) || !iv_scale(v->vmin, v->vmax, f, &fv) || !fits(x->dtype, fv.lo, fv.hi)) return NULL; /* f*v is u exactly */
    if (!smul(r, v->vmin, &rv) || !sadd(offset, rv, &offset)) return NULL;
    if (f > 1 && c % f == 0 && (div == 1 || div > f)) div = f;
    gcd = gcd128(r, gcd);
    tm[n++] = (dterm){v, f, q, r};
  }
  /* x is the exact (unwrapped) sum of its terms, and >= 0 so that truncation is floor */
  if (!fits(x->dtype, orig.lo, orig.hi) || x->vmin < 0) return NULL;

  i128 lbound, ubound;
  offset = floormod(offset, c);
  lbound = ubound = offset;
  /* one non-constant term taking two values */
  if (n == 1 && (i128)tm[0].v->vmax - tm[0].v->vmin == 1) {
    i128 r = floormod(offset + tm[0].r, c) - offset;
    offset -= r * tm[0].v->vmin;
    if (is_mod) return addk(g, kmul(g, r, tm[0].v), offset);
    return addk(g, kmul(g, floordiv(tm[0].f - r, c), tm[0].v), floordiv(cnst - offset, c));
  }
  /* the remainder stays within [0, c): drop the mod / div */
  bool within = true;
  for (size_t i = 0; i < n && within; i++) {
    i128 r = tm[i].r, span = (i128)tm[i].v->vmax - tm[i].v->vmin, d;
    if (r > c / 2) {
      r -= c;
      if (!smul(r, span, &d) || !sadd(lbound, d, &lbound) || lbound < 0) within = false;
    } else if (!smul(r, span, &d) || !sadd(ubound, d, &ubound) || ubound >= c) {
      within = false;
    }
    if (within && (!smul(r, tm[i].v->vmin, &d) || !sadd(offset, -d, &offset))) return NULL;
  }
  if (within) {
    tkc_uop *acc = NULL;
    i128 base;
    if (is_mod) {
      acc = kc(g, x, offset);
      for (size_t i = 0; i < n; i++) {
        i128 r = tm[i].r, r2 = r - c;
        acc = add(g, acc, kmul(g, (r2 < 0 ? -r2 : r2) < r ? r2 : r, tm[i].v));
      }
      return acc;
    }
    if (!sadd(cnst, -offset, &base)) return NULL;
    acc = kc(g, x, floordiv(base, c));
    for (size_t i = 0; i < n; i++) {
      i128 r = tm[i].r, r2 = r - c;
      r = (r2 < 0 ? -r2 : r2) < r ? r2 : r;
      acc = add(g, acc, kmul(g, floordiv(tm[i].f - r, c), tm[i].v));
    }
    return acc;
  }

  if (gcd != 1) changed = true;
  if (!changed) {
    if (!is_mod && 1 < div && div < c && depth < 8) {
      tkc_uop *nx = div_and_mod_folding(g, x, kc(g, x, div), TKC_OP_IDIV, depth + 1);
      if (nx) return alu2(g, TKC_OP_IDIV, nx, kc(g, x, c / div));
    }
    return NULL;
  }
  /* x = c*quo + gcd*rem + const%gcd; rem must be exact and >= 0 for truncation to be floor */
  i128 k = c / gcd;
  ival remr = {floordiv(floormod(cnst, c), gcd), floordiv(floormod(cnst, c), gcd)};
  for (size_t i = 0; i < n; i++) {
    i128 coef = (!is_mod && tm[i].r != 0) ? tm[i].f / gcd : tm[i].r / gcd;
    ival s;
    if (!iv_scale(tm[i].v->vmin, tm[i].v->vmax, coef, &s) || !iv_add(&remr, s)) return NULL;
  }
  if (remr.lo < 0 || !fits(x->dtype, remr.lo, remr.hi)) return NULL;
  tkc_uop *quo = kc(g, x, floordiv(cnst, c)), *rem = kc(g, x, floordiv(floormod(cnst, c), gcd));
  for (size_t i = 0; i < n; i++) {
    if (!is_mod && tm[i].r != 0) {
      rem = add(g, rem, kmul(g, tm[i].f / gcd, tm[i].v));
    } else {
      rem = add(g, rem, kmul(g, tm[i].r / gcd, tm[i].v));
      quo = add(g, quo, kmul(g, tm[i].q, tm[i].v));
    }
  }
  if (is_mod) return addk(g, kmul(g, gcd, alu2(g, TKC_OP_MOD, rem, kc(g, x, k))), floormod(cnst, gcd));
  return add(g, alu2(g, TKC_OP_IDIV, rem, kc(g, x, k)), quo);
}

/* tinygrad's div_and_mod_folding: x//y or x%y simplified, NULL for no change. */
static tkc_uop *div_and_mod_folding(tkc_graph *g, tkc_uop *x, tkc_uop *y, tkc_op which, int depth) {
  if (!is_int_dt(x->dtype) || !rk(x) || !rk(y)) return NULL;
  /* simple cancel: the quotient is the same everywhere (y of one sign: truncation is monotonic) */
  if (y->vmin > 0 || y->vmax < 0) {
    i128 q = tdiv(x->vmin, y->vmin);
    if (q == tdiv(x->vmin, y->vmax) && q == tdiv(x->vmax, y->vmin) && q == tdiv(x->vmax, y->vmax)) {
      if (which == TKC_OP_IDIV) return kc(g, x, q);
      return q == 0 ? x : add(g, x, mul(g, y, kc(g, y, -q))); /* x - q*y */
    }
  }
  i128 c;
  if (!ic(y, &c) || c <= 0 || x->dtype.count > 1) return NULL;
  uvec t;
  uv_init(&t);
  dterm local[16], *tm = NULL;
  tkc_uop *ret = NULL;
  if (split_uop(x, TKC_OP_ADD, &t)) {
    tm = t.n <= TKC_COUNTOF(local) ? local : tkc_malloc(t.n * sizeof *tm);
    if (tm) ret = dmf_terms(g, x, c, which, depth, &t, tm);
  }
  if (tm != local) tkc_free(tm);
  uv_free(&t);
  return ret;
}

static tkc_uop *r_idiv_fold(tkc_graph *g, const tkc_match *m, void *ctx) {
  return div_and_mod_folding(g, M("x"), M("y"), TKC_OP_IDIV, 0);
}
static tkc_uop *r_mod_fold(tkc_graph *g, const tkc_match *m, void *ctx) {
  return div_and_mod_folding(g, M("x"), M("y"), TKC_OP_MOD, 0);
}

/* ---------------------------------------------------------------- symbolic_flat callbacks */

/* (x+y)*c -> x*c+y*c (ints: floats have inf*0 = nan) */
static tkc_uop *r_distribute(tkc_graph *g, const tkc_match *m, void *ctx) {
  tkc_uop *c = M("c");
  return add(g, mul(g, M("x"), c), mul(g, M("y"), c));
}

/* ---------------------------------------------------------------- rule tables */

static const tkc_rule simple_rules[] = {
    /* ** self folding ** */
    {"(ADD x (CONST[0]))", r_x},                                       /* x+0 -> x */
    {"(MUL x (CONST[1]))", r_x},                                       /* x*1 -> x */
    {"(IDIV x x)", r_div_self},                                        /* x//x -> 1 (x never 0) */
    {"(IDIV x (CONST[1]))", r_x},                                      /* x//1 -> x */
    {"(IDIV x (CONST[-1]))", r_neg_x},                                 /* x//-1 -> -x */
    /* tinygrad's x/x -> 1, (x*y)/y -> x and (x/y)/z -> x/(y*z) are left out: float division is
       IEEE here (0/0 is nan, (x*y)/y rounds twice) */
    {"(MOD base:(MOD _ y) y)", r_base},                                /* (x%y)%y -> x%y */
    {"(ADD (MOD x c:cvar) (MUL (IDIV x c) c))", r_divmod_recombine},   /* (x%c)+(x//c)*c -> x */
    {"(ADD (MUL (IDIV x c1:cvar) c3:cvar) (MUL (MOD x c1) c2:cvar))", r_divmod_recombine2}, /* (x//c1)*c3+(x%c1)*c2 -> x*c2 if c1*c2==c3 */
    {"(AND x<bool> c:CONST)", r_bool_and_const},                       /* x&True -> x, x&False -> False */
    {"(OR x<bool> c:CONST)", r_bool_or_const},                         /* x|True -> True, x|False -> x */
    {"(IDEMPOTENT x x)", r_x},                                         /* max(x,x) / x|x / x&x -> x */
    {"(CMPNE (CMPNE x<bool> (CONST[true])) (CONST[true]))", r_x},      /* not(not(x)) -> x */
    {"(WHERE x<bool> (CONST<bool>[true]) (CONST<bool>[false]))", r_x}, /* x ? True : False -> x */
    /* ** zero folding ** */
    {"(CMPLT x x)", r_false},                                          /* x<x -> False */
    {"(CMPNE x<ints> x)", r_false},                                    /* x!=x -> False (ints) */
    {"(MUL x (CONST[0]))", r_mul_zero},                                /* x*0 -> 0 (floats: const x only) */
    /* ** constant folding ** */
    {"(ALU cvar*)", r_const_fold},                                     /* op(c0, c1, ...) -> c */
    /* bool MUL is AND, ADD/MAX is OR */
    {"(MUL x<bool> y<bool>)", r_bool_and},                             /* x*y -> x&y (bool) */
    {"(ADD x<bool> y<bool>)", r_bool_or},                              /* x+y -> x|y (bool) */
    {"(MAX x<bool> y<bool>)", r_bool_or},                              /* max(x,y) -> x|y (bool) */
    /* ** cast/bitcast ** */
    {"(CAST c:cvar)", r_cast_const},                                   /* cast(c) -> c' */
    {"root:CAST|BITCAST", r_cast_noop},                                /* cast(x) to x's dtype -> x */
    {"(BITCAST c:cvar)", r_bitcast_const},                             /* bitcast(c) -> c' */
    /* ** pow ** */
    {"(POW x c:CONST)", r_simplify_pow},                               /* x**c -> products, sqrt, reciprocal */
    {"(POW c:CONST x)", r_const_pow},                                  /* 1**x -> 1 */
};

static const tkc_rule symbolic_rules[] = {
    /* ** commutative flipping (int32 only) ** */
    {"x:COMMUTATIVE<int>", r_flip},                                    /* b op a -> a op b (tuplize order) */
    /* ** boolean algebra ** */
    {"(OR x (AND x _))", r_x},                                         /* x|(x&y) -> x */
    /* ** combine terms ** */
    {"(ADD (MUL x c0:cvar) (MUL x c1:cvar))", r_combine_cc},           /* x*c0+x*c1 -> x*(c0+c1) */
    {"(ADD (ADD y (MUL x c0:cvar)) (MUL x c1:cvar))", r_combine_ycc},  /* (y+x*c0)+x*c1 -> y+x*(c0+c1) */
    {"(ADD x (MUL x c:cvar))", r_combine_c1},                          /* x+x*c -> x*(c+1) */
    {"(ADD (ADD y x) (MUL x c:cvar))", r_combine_yc1},                 /* (y+x)+x*c -> y+x*(c+1) */
    {"(ADD x x)", r_combine_2},                                        /* x+x -> x*2 */
    {"(ADD (ADD y x) x)", r_combine_y2},                               /* (y+x)+x -> y+x*2 */
    {"(MUL (CONST[-1]) (ADD x c:cvar))", r_neg_add},                   /* -1*(x+c) -> (-x)+(-c) */
    /* ** where: same value either way, constant condition, alu of two wheres ** */
    {"(WHERE _ val val)", r_val},                                      /* c ? v : v -> v */
    {"(WHERE gate:CONST c0 c1)", r_where_const},                       /* True ? a : b -> a */
    {"alu:=(BINARY (WHERE c t f) (WHERE c tt ff))", r_where_alu},      /* op(c?t:f, c?tt:ff) -> c?op(t,tt):op(f,ff) */
    /* ALU min==max -> CONST */
    {"x:ALU", r_minmax_const},                                         /* x -> c when vmin == vmax */
    /* ** max folding ** */
    {"(MAX x y)", r_max_fold},                                         /* max(x,y) -> x when x >= y always */
    /* ** two stage ALU folding ** */
    {"(ADD (ADD x c1:cvar) c2:cvar)", r_two_stage},                    /* (x+c1)+c2 -> x+(c1+c2) */
    {"(MUL (MUL x c1:cvar) c2:cvar)", r_two_stage},                    /* (x*c1)*c2 -> x*(c1*c2) */
    {"(MAX (MAX x c1:cvar) c2:cvar)", r_two_stage},                    /* max(max(x,c1),c2) -> max(x,max(c1,c2)) */
    {"(OR (OR x c1:cvar) c2:cvar)", r_two_stage},                      /* (x|c1)|c2 -> x|(c1|c2) */
    {"(AND (AND x c1:cvar) c2:cvar)", r_two_stage},                    /* (x&c1)&c2 -> x&(c1&c2) */
    {"(CMPLT (ADD c0:cvar x) c1:cvar)", r_lt_add_const},               /* c0+x<c1 -> x<c1-c0 */
    {"(IDIV (IDIV x c1:cvar) c2:cvar)", r_div_div},                    /* (x//c1)//c2 -> x//(c1*c2) */
    /* ** lt ** */
    {"(CMPLT (MUL c0:CONST x<ints>) c1:CONST)", r_lt_mul},             /* c0*x<c1 -> x<ceil(c1/c0) / -x<-floor(c1/c0) */
    {"(CMPLT (IDIV x<ints> c0:CONST) c1:CONST)", r_lt_div},            /* x//c0<c1 -> x<c1*c0 */
    /* ** move add/mul consts to end ** */
    {"(ADD =(ADD x c1:cvar) y)", r_move_const},                        /* (x+c1)+y -> (x+y)+c1 */
    {"(MUL =(MUL x c1:cvar) y)", r_move_const},                        /* (x*c1)*y -> (x*y)*c1 */
    /* ** rules from the old symbolic ** */
    {"divs:(ADD _ IDIV)", r_fold_unrolled_divs},                       /* x//4+(x+1)//4+(x+2)//4+(x+3)//4 -> x */
    {"(CMPLT x<sints> c:CONST)", r_lt_folding},                        /* d*Q+P<c -> Q<c/d (0<=P<d, d|c) */
    {"(CMPNE (CMPLT x<ints> (CONST[1])) (CONST[true]))", r_canonicalize_simplex}, /* a*x+b*y>=1 -> x+y>=1 */
    /* ** div ** */
    {"(IDIV (ADD (IDIV x c:cvar) a:cvar) d:cvar)", r_div_add_div},     /* (x//c+a)//d -> (x+a*c)//(c*d) */
    {"(IDIV x<sints> y)", r_idiv_fold},                                /* div folding */
    /* ** mod ** */
    {"(MOD x y)", r_mod_fold},                                         /* mod folding */
};

static const tkc_rule flat_rules[] = {
    /* ** combine terms (opinionated) ** */
    {"(MUL (CONST[-1]) (ADD x y))", r_neg_add},                        /* -1*(x+y) -> (-x)+(-y) */
    {"(MUL (ADD x<ints> y) c:cvar)", r_distribute},                    /* (x+y)*c -> x*c+y*c (ints) */
};

/* ---------------------------------------------------------------- matchers (built once) */

typedef tkc_matcher *(*build_fn)(void);

static const tkc_matcher *lazy(_Atomic(tkc_matcher *) *slot, build_fn build) {
  tkc_matcher *pm = atomic_load_explicit(slot, memory_order_acquire);
  if (pm) return pm;
  tkc_matcher *made = build();
  if (!made) {
    char why[512];
    strncpy(why, tkc_last_error(), sizeof why - 1);
    why[sizeof why - 1] = 0;
    return tkc_err_null(TKC_EINTERNAL, "symbolic rules do not compile: %s", why);
  }
  tkc_matcher *expected = NULL;
  if (!atomic_compare_exchange_strong_explicit(slot, &expected, made, memory_order_acq_rel, memory_order_acquire)) {
    tkc_matcher_free(made); /* another thread won the race */
    return expected;
  }
  return made;
}

static tkc_matcher *extend(const tkc_matcher *base, const tkc_rule *rules, size_t n) {
  if (!base) return NULL;
  tkc_matcher *more = tkc_matcher_new(rules, n);
  if (!more) return NULL;
  tkc_matcher *r = tkc_matcher_concat(base, more);
  tkc_matcher_free(more);
  return r;
}

static _Atomic(tkc_matcher *) pm_simple, pm_symbolic, pm_flat;

static tkc_matcher *build_simple(void) { return tkc_matcher_new(simple_rules, TKC_COUNTOF(simple_rules)); }
static tkc_matcher *build_symbolic(void) { return extend(tkc_symbolic_simple(), symbolic_rules, TKC_COUNTOF(symbolic_rules)); }
static tkc_matcher *build_flat(void) { return extend(tkc_symbolic(), flat_rules, TKC_COUNTOF(flat_rules)); }

const tkc_matcher *tkc_symbolic_simple(void) { return lazy(&pm_simple, build_simple); }
const tkc_matcher *tkc_symbolic(void) { return lazy(&pm_symbolic, build_symbolic); }
const tkc_matcher *tkc_symbolic_flat(void) { return lazy(&pm_flat, build_flat); }

tkc_uop *tkc_simplify(tkc_graph *g, tkc_uop *u) {
  if (!g || !u) return tkc_err_null(TKC_EINVAL, "tkc_simplify: NULL %s", g ? "UOp" : "graph");
  const tkc_matcher *pm = tkc_symbolic();
  if (!pm) return NULL;
  return tkc_graph_rewrite(g, u, pm, NULL);
}
