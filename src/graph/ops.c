/* Tensor ops of tkc.h: elementwise (broadcasting + tinygrad's promotion), reductions, movement.
 * Each validates its inputs, then builds lazy nodes; nothing runs here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "graph/tensor_internal.h"

/* ---------------------------------------------------------------- helpers */

static tkc_dtype float_of(tkc_dtype dt) { return tkc_dtype_is_float(dt) ? dt : tkc_least_upper_dtype(dt, TKC_FLOAT32); }

/* a constant of a's dtype (or dt) and shape */
static tkc_lazy *konst(tkc_lazy *a, tkc_dtype dt, double v) { return tkc_lz_const(a->ctx, dt, v, a->ndim, a->shape); }

static tkc_lazy *alu2(tkc_op op, tkc_lazy *a, tkc_lazy *b) {
  if (!a || !b) return NULL;
  tkc_lazy *s[2] = {a, b};
  return tkc_lz_alu(op, 2, s);
}

/* Consumes (unrefs) its node arguments: lets expressions nest without temporaries. */
static tkc_lazy *take2(tkc_op op, tkc_lazy *a, tkc_lazy *b) {
  tkc_lazy *r = alu2(op, a, b);
  tkc_lazy_unref(a);
  tkc_lazy_unref(b);
  return r;
}

static tkc_lazy *take1(tkc_op op, tkc_lazy *a) {
  tkc_lazy *r = a ? tkc_lz_unary(op, a) : NULL;
  tkc_lazy_unref(a);
  return r;
}

static tkc_lazy *take_cast(tkc_lazy *a, tkc_dtype dt) {
  tkc_lazy *r = a ? tkc_lz_cast(a, dt, 0) : NULL;
  tkc_lazy_unref(a);
  return r;
}

static tkc_lazy *take_where(tkc_lazy *c, tkc_lazy *a, tkc_lazy *b) {
  tkc_lazy *r = NULL;
  if (c && a && b) r = tkc_lz_alu(TKC_OP_WHERE, 3, (tkc_lazy *[]){c, a, b});
  tkc_lazy_unref(c);
  tkc_lazy_unref(a);
  tkc_lazy_unref(b);
  return r;
}

static tkc_lazy *ref(tkc_lazy *a) {
  tkc_lazy_ref(a);
  return a;
}

/* logical not of a bool node */
static tkc_lazy *lnot(tkc_lazy *a) { return take2(TKC_OP_CMPNE, ref(a), konst(a, TKC_BOOL, 1)); }

/* -x as tinygrad writes it: x * -1 (logical not for bool) */
static tkc_lazy *negate(tkc_lazy *a) {
  if (a->dtype == TKC_BOOL) return lnot(a);
  return take2(TKC_OP_MUL, ref(a), konst(a, a->dtype, -1));
}

/* ---------------------------------------------------------------- broadcasting */

static tkc_status broadcast_shape(const char *what, const tkc_lazy *a, const tkc_lazy *b, int *ndim, int64_t *shape) {
  int n = a->ndim > b->ndim ? a->ndim : b->ndim;
  for (int i = 0; i < n; i++) {
    int ia = i - (n - a->ndim), ib = i - (n - b->ndim);
    int64_t x = ia >= 0 ? a->shape[ia] : 1, y = ib >= 0 ? b->shape[ib] : 1;
    if (x != y && x != 1 && y != 1)
      return tkc_err(TKC_ESHAPE, "%s: shapes %s and %s do not broadcast (dim %d: %lld vs %lld)", what, TKC_NODE_SHAPE(a), TKC_NODE_SHAPE(b), i, (long long)x,
                     (long long)y);
    shape[i] = x == 1 ? y : x;
  }
  *ndim = n;
  return TKC_OK;
}

/* uint32 and a signed int of at most 32 bits: they promote to int64, which a comparison of them
 * does without (cmp) */
static int u32_and_signed(tkc_dtype a, tkc_dtype b) {
  if (b == TKC_UINT32) b = a, a = TKC_UINT32;
  return a == TKC_UINT32 && tkc_dtype_is_int(b) && !tkc_dtype_is_unsigned(b) && tkc_dtype_size(b) <= 4;
}

/* the operands of a binary op, broadcast to one shape and cast to one dtype; for ops that compute in
 * floats (to_float) ints go straight to the float dtype of their promotion (the same values: each
 * int converts exactly once), so int32 / uint32 does not need int64 on a device without it. A
 * comparison (keep_mixed) of uint32 with a signed int keeps their dtypes: cmp compares them. */
static int operands(const char *what, tkc_tensor *a, tkc_tensor *b, int to_float, int keep_mixed, tkc_dtype *dt, tkc_lazy **x, tkc_lazy **y) {
  if (tkc_check(a) || tkc_check(b)) return -1;
  if (a->ctx != b->ctx) {
    tkc_err(TKC_EINVAL, "%s: the tensors belong to different ctxs", what);
    return -1;
  }
  int ndim;
  int64_t shape[TKC_MAX_DIMS];
  if (broadcast_shape(what, a->node, b->node, &ndim, shape)) return -1;
  *dt = tkc_least_upper_dtype(a->node->dtype, b->node->dtype);
  if (to_float && !tkc_dtype_is_float(*dt)) *dt = float_of(*dt);
  int mixed = keep_mixed && u32_and_signed(a->node->dtype, b->node->dtype);
  if (!mixed && tkc_ctx_check_dtype(a->ctx, *dt, what)) return -1; /* int32 and uint32 meet in int64 */
  tkc_lazy *xa = tkc_lz_broadcast(a->node, ndim, shape), *xb = xa ? tkc_lz_broadcast(b->node, ndim, shape) : NULL;
  *x = mixed ? xa : take_cast(xa, *dt);
  *y = mixed ? xb : take_cast(xb, *dt);
  if (!*x || !*y) {
    tkc_lazy_unref(*x);
    tkc_lazy_unref(*y);
    return -1;
  }
  return 0;
}

enum { ANY = 0, NO_BOOL = 1, INTS = 2, INTS_BOOL = 3, FLOATS = 4, COMPARE = 5 /* ANY; operands may keep uint32 + signed */ };

static int dtype_ok(tkc_dtype dt, int rule, const char *what) {
  int ok = rule == ANY || rule == COMPARE || (rule == NO_BOOL && dt != TKC_BOOL) || (rule == INTS && tkc_dtype_is_int(dt)) ||
           (rule == INTS_BOOL && (tkc_dtype_is_int(dt) || dt == TKC_BOOL)) || (rule == FLOATS && tkc_dtype_is_float(dt));
  if (!ok) tkc_err(TKC_EDTYPE, "%s does not accept %s", what, tkc_dtype_name(dt));
  return ok;
}

typedef tkc_lazy *(*binary_fn)(tkc_lazy *x, tkc_lazy *y, tkc_dtype dt);

static tkc_tensor *binary(tkc_tensor *a, tkc_tensor *b, int rule, int to_float, const char *what, binary_fn fn) {
  tkc_dtype dt;
  tkc_lazy *x, *y;
  if (operands(what, a, b, to_float, rule == COMPARE, &dt, &x, &y)) return NULL;
  tkc_lazy *r = NULL;
  if (x && y && dtype_ok(dt, rule, what)) r = fn(x, y, dt);
  tkc_lazy_unref(x);
  tkc_lazy_unref(y);
  return tkc_wrap(a->ctx, r);
}

static tkc_lazy *f_add(tkc_lazy *x, tkc_lazy *y, tkc_dtype dt) { (void)dt; return alu2(TKC_OP_ADD, x, y); }
static tkc_lazy *f_sub(tkc_lazy *x, tkc_lazy *y, tkc_dtype dt) { (void)dt; return take2(TKC_OP_ADD, ref(x), negate(y)); }
static tkc_lazy *f_mul(tkc_lazy *x, tkc_lazy *y, tkc_dtype dt) { (void)dt; return alu2(TKC_OP_MUL, x, y); }
/* IEEE division (FDIV; tinygrad's x * (1/y) rounds twice: -2.5 / (5/255) would be -127.5) */
static tkc_lazy *f_div(tkc_lazy *x, tkc_lazy *y, tkc_dtype dt) { (void)dt; return alu2(TKC_OP_FDIV, x, y); }
static tkc_lazy *f_idiv(tkc_lazy *x, tkc_lazy *y, tkc_dtype dt) { (void)dt; return alu2(TKC_OP_IDIV, x, y); }
static tkc_lazy *f_mod(tkc_lazy *x, tkc_lazy *y, tkc_dtype dt) { (void)dt; return alu2(TKC_OP_MOD, x, y); }
static tkc_lazy *f_max(tkc_lazy *x, tkc_lazy *y, tkc_dtype dt) { (void)dt; return alu2(TKC_OP_MAX, x, y); }
static tkc_lazy *f_min(tkc_lazy *x, tkc_lazy *y, tkc_dtype dt) { (void)dt; return take_where(alu2(TKC_OP_CMPLT, x, y), ref(x), ref(y)); }
static tkc_lazy *not_of(tkc_lazy *b) {
  tkc_lazy *r = b ? lnot(b) : NULL;
  tkc_lazy_unref(b);
  return r;
}
/* x < y (CMPLT) or x != y (CMPNE). For a uint32 and a signed int (left uncast by operands) the
 * promotion is int64, which WEBGPU lacks; the same answer without it: a negative signed side is
 * below every uint32 (and differs from it), the others compare as uint32 */
static tkc_lazy *cmp(tkc_op op, tkc_lazy *x, tkc_lazy *y) {
  if (!x || !y || !u32_and_signed(x->dtype, y->dtype)) return alu2(op, x, y);
  tkc_lazy *s = x->dtype == TKC_UINT32 ? y : x;
  tkc_lazy *neg = take2(TKC_OP_CMPLT, ref(s), konst(s, s->dtype, 0));
  tkc_lazy *as_u32 = take2(op, take_cast(ref(x), TKC_UINT32), take_cast(ref(y), TKC_UINT32));
  if (op == TKC_OP_CMPLT && s == y) return take2(TKC_OP_AND, not_of(neg), as_u32); /* u < s: s >= 0 and u < (u32)s */
  return take2(TKC_OP_OR, neg, as_u32);                                           /* s < u, s != u: s < 0 or ... */
}
static tkc_lazy *f_lt(tkc_lazy *x, tkc_lazy *y, tkc_dtype dt) { (void)dt; return cmp(TKC_OP_CMPLT, x, y); }
static tkc_lazy *f_gt(tkc_lazy *x, tkc_lazy *y, tkc_dtype dt) { (void)dt; return cmp(TKC_OP_CMPLT, y, x); }
static tkc_lazy *f_ne(tkc_lazy *x, tkc_lazy *y, tkc_dtype dt) { (void)dt; return cmp(TKC_OP_CMPNE, x, y); }
static tkc_lazy *f_le(tkc_lazy *x, tkc_lazy *y, tkc_dtype dt) { (void)dt; return not_of(cmp(TKC_OP_CMPLT, y, x)); }
static tkc_lazy *f_ge(tkc_lazy *x, tkc_lazy *y, tkc_dtype dt) { (void)dt; return not_of(cmp(TKC_OP_CMPLT, x, y)); }
static tkc_lazy *f_eq(tkc_lazy *x, tkc_lazy *y, tkc_dtype dt) { (void)dt; return not_of(cmp(TKC_OP_CMPNE, x, y)); }
static tkc_lazy *f_and(tkc_lazy *x, tkc_lazy *y, tkc_dtype dt) { (void)dt; return alu2(TKC_OP_AND, x, y); }
static tkc_lazy *f_or(tkc_lazy *x, tkc_lazy *y, tkc_dtype dt) { (void)dt; return alu2(TKC_OP_OR, x, y); }
static tkc_lazy *f_xor(tkc_lazy *x, tkc_lazy *y, tkc_dtype dt) { (void)dt; return alu2(TKC_OP_XOR, x, y); }
static tkc_lazy *f_shl(tkc_lazy *x, tkc_lazy *y, tkc_dtype dt) { (void)dt; return alu2(TKC_OP_SHL, x, y); }
static tkc_lazy *f_shr(tkc_lazy *x, tkc_lazy *y, tkc_dtype dt) { (void)dt; return alu2(TKC_OP_SHR, x, y); }

/* x ** y for floats: the POW op, C's pow semantics (a negative base takes an integer exponent's sign,
 * a fractional one gives nan; 0 ** 0 = 1; 0 ** negative = +inf as tinygrad's safe_pow). Not
 * tinygrad's exp2(y*log2(x)), which gives 728.9999999999997 for 3.0 ** 6.0: each renderer gives POW
 * an accurate form (libm pow in double on CPU / LLVM, compositions on PTX and WGSL; their accuracy
 * is stated there). */
static tkc_lazy *f_pow(tkc_lazy *x, tkc_lazy *y, tkc_dtype dt) { (void)dt; return alu2(TKC_OP_POW, x, y); }

tkc_tensor *tkc_add(tkc_tensor *a, tkc_tensor *b) { return binary(a, b, ANY, 0, "add", f_add); }
tkc_tensor *tkc_sub(tkc_tensor *a, tkc_tensor *b) { return binary(a, b, NO_BOOL, 0, "sub", f_sub); }
tkc_tensor *tkc_mul(tkc_tensor *a, tkc_tensor *b) { return binary(a, b, ANY, 0, "mul", f_mul); }
tkc_tensor *tkc_div(tkc_tensor *a, tkc_tensor *b) { return binary(a, b, FLOATS, 1, "div", f_div); }
tkc_tensor *tkc_idiv(tkc_tensor *a, tkc_tensor *b) { return binary(a, b, INTS, 0, "idiv", f_idiv); }
tkc_tensor *tkc_mod(tkc_tensor *a, tkc_tensor *b) { return binary(a, b, INTS, 0, "mod", f_mod); }
tkc_tensor *tkc_maximum(tkc_tensor *a, tkc_tensor *b) { return binary(a, b, ANY, 0, "maximum", f_max); }
tkc_tensor *tkc_minimum(tkc_tensor *a, tkc_tensor *b) { return binary(a, b, ANY, 0, "minimum", f_min); }
tkc_tensor *tkc_pow(tkc_tensor *a, tkc_tensor *b) { return binary(a, b, FLOATS, 1, "pow", f_pow); }
tkc_tensor *tkc_lt(tkc_tensor *a, tkc_tensor *b) { return binary(a, b, COMPARE, 0, "lt", f_lt); }
tkc_tensor *tkc_le(tkc_tensor *a, tkc_tensor *b) { return binary(a, b, COMPARE, 0, "le", f_le); }
tkc_tensor *tkc_gt(tkc_tensor *a, tkc_tensor *b) { return binary(a, b, COMPARE, 0, "gt", f_gt); }
tkc_tensor *tkc_ge(tkc_tensor *a, tkc_tensor *b) { return binary(a, b, COMPARE, 0, "ge", f_ge); }
tkc_tensor *tkc_eq(tkc_tensor *a, tkc_tensor *b) { return binary(a, b, COMPARE, 0, "eq", f_eq); }
tkc_tensor *tkc_ne(tkc_tensor *a, tkc_tensor *b) { return binary(a, b, COMPARE, 0, "ne", f_ne); }
tkc_tensor *tkc_and(tkc_tensor *a, tkc_tensor *b) { return binary(a, b, INTS_BOOL, 0, "and", f_and); }
tkc_tensor *tkc_or(tkc_tensor *a, tkc_tensor *b) { return binary(a, b, INTS_BOOL, 0, "or", f_or); }
tkc_tensor *tkc_xor(tkc_tensor *a, tkc_tensor *b) { return binary(a, b, INTS_BOOL, 0, "xor", f_xor); }
tkc_tensor *tkc_shl(tkc_tensor *a, tkc_tensor *b) { return binary(a, b, INTS, 0, "shl", f_shl); }
tkc_tensor *tkc_shr(tkc_tensor *a, tkc_tensor *b) { return binary(a, b, INTS, 0, "shr", f_shr); }

static tkc_lazy *f_dot4(tkc_lazy *x, tkc_lazy *y, tkc_dtype dt) { (void)dt; return alu2(TKC_OP_DOT4, x, y); }

tkc_tensor *tkc_dot4(tkc_tensor *a, tkc_tensor *b) {
  if (tkc_check(a) || tkc_check(b)) return NULL;
  tkc_tensor *w[2] = {a, b}, *as[2] = {NULL, NULL};
  for (int i = 0; i < 2; i++) {
    tkc_dtype dt = w[i]->node->dtype;
    if (dt != TKC_INT32 && dt != TKC_UINT32) return tkc_err_null(TKC_EDTYPE, "dot4: the words are int32 or uint32, not %s", tkc_dtype_name(dt));
  }
  for (int i = 0; i < 2; i++) /* the bits as int32 */
    if (w[i]->node->dtype == TKC_UINT32 && !(w[i] = as[i] = tkc_bitcast(w[i], TKC_INT32))) {
      tkc_tensor_free(as[0]);
      return NULL;
    }
  tkc_tensor *r = binary(w[0], w[1], INTS, 0, "dot4", f_dot4);
  tkc_tensor_free(as[0]);
  tkc_tensor_free(as[1]);
  return r;
}

tkc_tensor *tkc_where(tkc_tensor *cond, tkc_tensor *a, tkc_tensor *b) {
  if (tkc_check(cond) || tkc_check(a) || tkc_check(b)) return NULL;
  if (cond->ctx != a->ctx || a->ctx != b->ctx) return tkc_err_null(TKC_EINVAL, "where: the tensors belong to different ctxs");
  int n1, n;
  int64_t s1[TKC_MAX_DIMS], shape[TKC_MAX_DIMS];
  if (broadcast_shape("where", a->node, b->node, &n1, s1)) return NULL;
  tkc_lazy tmp = {.ndim = n1};
  memcpy(tmp.shape, s1, sizeof s1);
  if (broadcast_shape("where", cond->node, &tmp, &n, shape)) return NULL;
  tkc_dtype dt = tkc_least_upper_dtype(a->node->dtype, b->node->dtype);
  if (tkc_ctx_check_dtype(a->ctx, dt, "where")) return NULL;
  tkc_lazy *c = take_cast(tkc_lz_broadcast(cond->node, n, shape), TKC_BOOL);
  tkc_lazy *x = take_cast(tkc_lz_broadcast(a->node, n, shape), dt);
  tkc_lazy *y = take_cast(tkc_lz_broadcast(b->node, n, shape), dt);
  return tkc_wrap(a->ctx, take_where(c, x, y));
}

/* ---------------------------------------------------------------- unary */

typedef tkc_lazy *(*unary_fn)(tkc_lazy *x);

static tkc_tensor *unary(tkc_tensor *a, int to_float, unary_fn fn) {
  if (tkc_check(a)) return NULL;
  tkc_dtype fd = float_of(a->node->dtype);
  /* fp8 math in float32, rounded once (its constants, e.g. 1/ln 2, would be 1.5 in fp8) */
  bool fp8 = to_float && (fd == TKC_FLOAT8_E4M3FN || fd == TKC_FLOAT8_E5M2);
  tkc_lazy *x = to_float ? tkc_lz_cast(a->node, fp8 ? TKC_FLOAT32 : fd, 0) : ref(a->node);
  tkc_lazy *r = x ? fn(x) : NULL;
  tkc_lazy_unref(x);
  if (fp8 && r) {
    tkc_lazy *w = r;
    r = tkc_lz_cast(w, fd, 0);
    tkc_lazy_unref(w);
  }
  return tkc_wrap(a->ctx, r);
}

static const double LN2 = 0.6931471805599453, INV_LN2 = 1.4426950408889634;

static tkc_lazy *u_neg(tkc_lazy *x) { return negate(x); }
static tkc_lazy *u_abs(tkc_lazy *x) {
  if (x->dtype == TKC_BOOL || tkc_dtype_is_unsigned(x->dtype)) return ref(x);
  return take_where(take2(TKC_OP_CMPLT, ref(x), konst(x, x->dtype, 0)), negate(x), ref(x));
}
static tkc_lazy *u_recip(tkc_lazy *x) { return tkc_lz_unary(TKC_OP_RECIP, x); }
static tkc_lazy *u_sqrt(tkc_lazy *x) { return tkc_lz_unary(TKC_OP_SQRT, x); }
static tkc_lazy *u_exp2(tkc_lazy *x) { return tkc_lz_unary(TKC_OP_EXP2, x); }
static tkc_lazy *u_log2(tkc_lazy *x) { return tkc_lz_unary(TKC_OP_LOG2, x); }
static tkc_lazy *u_sin(tkc_lazy *x) { return tkc_lz_unary(TKC_OP_SIN, x); }
static tkc_lazy *u_exp(tkc_lazy *x) { return take1(TKC_OP_EXP2, take2(TKC_OP_MUL, ref(x), konst(x, x->dtype, INV_LN2))); }
static tkc_lazy *u_log(tkc_lazy *x) { return take2(TKC_OP_MUL, take1(TKC_OP_LOG2, ref(x)), konst(x, x->dtype, LN2)); }
static tkc_lazy *u_cos(tkc_lazy *x) { return take1(TKC_OP_SIN, take2(TKC_OP_ADD, negate(x), konst(x, x->dtype, M_PI / 2))); }
/* sigmoid(x) = 1 / (1 + exp(-x)) */
static tkc_lazy *u_sigmoid(tkc_lazy *x) {
  tkc_lazy *e = take1(TKC_OP_EXP2, take2(TKC_OP_MUL, ref(x), konst(x, x->dtype, -INV_LN2)));
  return take1(TKC_OP_RECIP, take2(TKC_OP_ADD, e, konst(x, x->dtype, 1)));
}
/* tanh(x) = 2 * sigmoid(2x) - 1 */
static tkc_lazy *u_tanh(tkc_lazy *x) {
  tkc_lazy *x2 = take2(TKC_OP_MUL, ref(x), konst(x, x->dtype, 2));
  tkc_lazy *s = x2 ? u_sigmoid(x2) : NULL;
  tkc_lazy_unref(x2);
  return take2(TKC_OP_ADD, take2(TKC_OP_MUL, s, konst(x, x->dtype, 2)), konst(x, x->dtype, -1));
}
static tkc_lazy *u_relu(tkc_lazy *x) { return take2(TKC_OP_MAX, ref(x), konst(x, x->dtype, 0)); }

tkc_tensor *tkc_neg(tkc_tensor *a) { return unary(a, 0, u_neg); }
tkc_tensor *tkc_abs(tkc_tensor *a) { return unary(a, 0, u_abs); }
tkc_tensor *tkc_recip(tkc_tensor *a) { return unary(a, 1, u_recip); }
tkc_tensor *tkc_sqrt(tkc_tensor *a) { return unary(a, 1, u_sqrt); }
tkc_tensor *tkc_exp(tkc_tensor *a) { return unary(a, 1, u_exp); }
tkc_tensor *tkc_exp2(tkc_tensor *a) { return unary(a, 1, u_exp2); }
tkc_tensor *tkc_log(tkc_tensor *a) { return unary(a, 1, u_log); }
tkc_tensor *tkc_log2(tkc_tensor *a) { return unary(a, 1, u_log2); }
tkc_tensor *tkc_sin(tkc_tensor *a) { return unary(a, 1, u_sin); }
tkc_tensor *tkc_cos(tkc_tensor *a) { return unary(a, 1, u_cos); }
tkc_tensor *tkc_tanh(tkc_tensor *a) { return unary(a, 1, u_tanh); }
tkc_tensor *tkc_sigmoid(tkc_tensor *a) { return unary(a, 1, u_sigmoid); }
tkc_tensor *tkc_relu(tkc_tensor *a) { return unary(a, 0, u_relu); }

/* "cast: 99 is not a dtype (bool, ...)" */
static tkc_tensor *bad_dtype(const char *what, tkc_dtype dt) {
  if (dt == TKC_VOID) return tkc_err_null(TKC_EDTYPE, "%s: void is not a tensor dtype (%s)", what, tkc_dtype_list());
  return tkc_err_null(TKC_EDTYPE, "%s: %d is not a dtype (%s)", what, (int)dt, tkc_dtype_list());
}

tkc_tensor *tkc_cast(tkc_tensor *a, tkc_dtype dt) {
  if (tkc_check(a)) return NULL;
  if (!tkc_dtype_is_tensor(dt)) return bad_dtype("cast", dt);
  if (tkc_ctx_check_dtype(a->ctx, dt, "cast")) return NULL;
  return tkc_wrap(a->ctx, tkc_lz_cast(a->node, dt, 0));
}

tkc_tensor *tkc_bitcast(tkc_tensor *a, tkc_dtype dt) {
  if (tkc_check(a)) return NULL;
  if (!tkc_dtype_is_tensor(dt)) return bad_dtype("bitcast", dt);
  if (tkc_dtype_size(dt) != tkc_dtype_size(a->node->dtype))
    return tkc_err_null(TKC_EDTYPE, "bitcast: %s (%zu bytes) -> %s (%zu bytes) needs two dtypes of one size", tkc_dtype_name(a->node->dtype),
                        tkc_dtype_size(a->node->dtype), tkc_dtype_name(dt), tkc_dtype_size(dt));
  if (tkc_ctx_check_dtype(a->ctx, dt, "bitcast")) return NULL;
  /* bool is one byte holding 0 or 1: bool -> (u)int8 is that byte, (u)int8 -> bool reads a nonzero
   * byte as true (stored as 1, so a bool never holds another byte) -- both are value casts */
  bool with_bool = dt == TKC_BOOL || a->node->dtype == TKC_BOOL;
  return tkc_wrap(a->ctx, tkc_lz_cast(a->node, dt, !with_bool));
}

/* ---------------------------------------------------------------- reductions */

static int axes_mask(const char *what, const tkc_lazy *a, int naxes, const int *axes, int *mask) { return tkc_axes_mask(what, a, naxes, axes, mask); }

/* tinygrad's split_reduceop: a reduce of 32768+ elements into few outputs becomes two kernels —
 * first over (rest of one reduced axis + the other reduced axes) with `divisor` partial results per
 * output, then over those — so no single loop runs over everything (GPUs get parallelism, lavapipe
 * gets loops it can run, and float sums lose less). */
static tkc_lazy *reduce_split(tkc_lazy *x, tkc_op op, const int *mask) {
  if (tkc_shape_is_symbolic(x->ndim, x->shape)) return tkc_lz_reduce(x, op, mask); /* its loop stops at the variable */
  int64_t out = 1, red = 1;
  for (int i = 0; i < x->ndim; i++) {
    if (mask[i]) red *= x->shape[i];
    else out *= x->shape[i];
  }
  if (red < 32768 || x->ndim + 1 > TKC_MAX_DIMS) return tkc_lz_reduce(x, op, mask);
  int64_t top = (1 << 22) / (out ? out : 1);
  if (top > 256) top = 256;
  int axis = -1;
  int64_t div = 0;
  for (int i = 0; i < x->ndim && axis < 0; i++)
    for (int64_t d = top; mask[i] && d >= 8; d--)
      if (x->shape[i] % d == 0) { axis = i; div = d; break; }
  if (axis < 0) return tkc_lz_reduce(x, op, mask);
  /* (.., n, ..) -> (.., div, n/div, ..) -> (.., n/div, .., div): the divisor dim last */
  int n = x->ndim + 1;
  int64_t split[TKC_MAX_DIMS], perm_shape[TKC_MAX_DIMS], order[TKC_MAX_DIMS];
  for (int i = 0, j = 0; i < x->ndim; i++) {
    if (i == axis) { split[j++] = div; split[j++] = x->shape[i] / div; }
    else split[j++] = x->shape[i];
  }
  int mask1[TKC_MAX_DIMS], mask2[TKC_MAX_DIMS], k = 0;
  for (int j = 0; j < n; j++)
    if (j != axis) {
      order[k] = j;
      perm_shape[k] = split[j];
      mask1[k] = j < axis ? mask[j] : j == axis + 1 ? 1 : mask[j - 1];
      mask2[k] = 0;
      k++;
    }
  order[n - 1] = axis;
  perm_shape[n - 1] = div;
  mask1[n - 1] = 0;
  mask2[n - 1] = 1;
  tkc_lazy *a = tkc_lz_move(x, TKC_OP_RESHAPE, NULL, 0, n, split);
  tkc_lazy *b = a ? tkc_lz_move(a, TKC_OP_PERMUTE, order, n, n, perm_shape) : NULL;
  tkc_lazy *r1 = b ? reduce_split(b, op, mask1) : NULL; /* may split again */
  tkc_lazy *r2 = r1 ? tkc_lz_reduce(r1, op, mask2) : NULL;
  int64_t keep[TKC_MAX_DIMS];
  for (int i = 0; i < x->ndim; i++) keep[i] = mask[i] ? 1 : x->shape[i];
  tkc_lazy *r = r2 ? tkc_lz_move(r2, TKC_OP_RESHAPE, NULL, 0, x->ndim, keep) : NULL;
  tkc_lazy_unref(a);
  tkc_lazy_unref(b);
  tkc_lazy_unref(r1);
  tkc_lazy_unref(r2);
  return r;
}

/* reduce (split where reduce_split would, when split) then (without keepdim) drop the reduced axes */
static tkc_lazy *reduce_keep_ex(tkc_lazy *x, tkc_op op, const int *mask, int keepdim, bool split) {
  tkc_lazy *r = split ? reduce_split(x, op, mask) : tkc_lz_reduce(x, op, mask);
  if (!r || keepdim) return r;
  int64_t shape[TKC_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < x->ndim; i++)
    if (!mask[i]) shape[n++] = x->shape[i];
  tkc_lazy *out = tkc_lz_move(r, TKC_OP_RESHAPE, NULL, 0, n, shape);
  tkc_lazy_unref(r);
  return out;
}

static tkc_lazy *reduce_keep(tkc_lazy *x, tkc_op op, const int *mask, int keepdim) { return reduce_keep_ex(x, op, mask, keepdim, true); }

static tkc_dtype sum_acc(tkc_dtype dt) {
  if (tkc_dtype_is_unsigned(dt)) return tkc_least_upper_dtype(dt, TKC_UINT32);
  if (tkc_dtype_is_int(dt) || dt == TKC_BOOL) return tkc_least_upper_dtype(dt, TKC_INT32);
  return tkc_least_upper_dtype(dt, TKC_FLOAT32);
}

static tkc_lazy *sum_node_ex(tkc_lazy *x, const int *mask, int keepdim, tkc_dtype result, bool split) {
  tkc_lazy *c = tkc_lz_cast(x, sum_acc(x->dtype), 0);
  tkc_lazy *r = c ? reduce_keep_ex(c, TKC_OP_ADD, mask, keepdim, split) : NULL;
  tkc_lazy_unref(c);
  return take_cast(r, result);
}

static tkc_lazy *sum_node(tkc_lazy *x, const int *mask, int keepdim, tkc_dtype result) { return sum_node_ex(x, mask, keepdim, result, true); }

static tkc_tensor *sum_tensor(tkc_tensor *a, int naxes, const int *axes, int keepdim, bool split) {
  int mask[TKC_MAX_DIMS];
  if (tkc_check(a) || axes_mask("sum", a->node, naxes, axes, mask)) return NULL;
  tkc_dtype dt = a->node->dtype;
  tkc_dtype out = tkc_dtype_is_narrow_float(dt) ? dt : sum_acc(dt);
  return tkc_wrap(a->ctx, sum_node_ex(a->node, mask, keepdim, out, split));
}

tkc_tensor *tkc_sum(tkc_tensor *a, int naxes, const int *axes, int keepdim) { return sum_tensor(a, naxes, axes, keepdim, true); }

/* a sum never split in two kernels: a one-hot select (gather, index_select), which codegen folds into
 * one load per element only while the select is one reduce */
tkc_tensor *tkc_sum_unsplit(tkc_tensor *a, int axis, int keepdim) { return sum_tensor(a, 1, &axis, keepdim, false); }

tkc_tensor *tkc_max(tkc_tensor *a, int naxes, const int *axes, int keepdim) {
  int mask[TKC_MAX_DIMS];
  if (tkc_check(a) || axes_mask("max", a->node, naxes, axes, mask)) return NULL;
  return tkc_wrap(a->ctx, reduce_keep(a->node, TKC_OP_MAX, mask, keepdim));
}

/* ~x: bitwise not for ints (order reversing for signed and unsigned), logical not for bool */
static tkc_lazy *invert(tkc_lazy *x) {
  if (x->dtype == TKC_BOOL) return lnot(x);
  return take2(TKC_OP_XOR, ref(x), konst(x, x->dtype, -1));
}

tkc_tensor *tkc_min(tkc_tensor *a, int naxes, const int *axes, int keepdim) {
  int mask[TKC_MAX_DIMS];
  if (tkc_check(a) || axes_mask("min", a->node, naxes, axes, mask)) return NULL;
  int is_float = tkc_dtype_is_float(a->node->dtype);
  tkc_lazy *flipped = is_float ? negate(a->node) : invert(a->node);
  tkc_lazy *m = flipped ? reduce_keep(flipped, TKC_OP_MAX, mask, keepdim) : NULL;
  tkc_lazy *r = m ? (is_float ? negate(m) : invert(m)) : NULL;
  tkc_lazy_unref(flipped);
  tkc_lazy_unref(m);
  return tkc_wrap(a->ctx, r);
}

/* acc * (the value of variable dim d) as a 0-d int32 node (acc NULL: the dim alone); takes acc */
static tkc_lazy *mul_dim(tkc_lazy *acc, tkc_ctx *ctx, int64_t d) {
  int64_t c;
  tkc_ctx_var *v = tkc_dim_decode(ctx, d, &c, "mean");
  tkc_lazy *var = v ? tkc_lz_var(ctx, v) : NULL;
  if (!var) {
    tkc_lazy_unref(acc);
    return NULL;
  }
  tkc_lazy *len = c ? take2(TKC_OP_ADD, var, tkc_lz_const(ctx, TKC_INT32, (double)c, 0, NULL)) : var;
  return acc ? take2(TKC_OP_MUL, acc, len) : len;
}

tkc_tensor *tkc_mean(tkc_tensor *a, int naxes, const int *axes, int keepdim) {
  int mask[TKC_MAX_DIMS];
  if (tkc_check(a) || axes_mask("mean", a->node, naxes, axes, mask)) return NULL;
  tkc_lazy *x = a->node;
  int64_t count = 1;
  tkc_lazy *varcount = NULL; /* the product of the variable-length reduced dims, when there are some */
  for (int i = 0; i < x->ndim; i++) {
    if (!mask[i]) continue;
    if (!tkc_dim_is_var(x->shape[i])) count *= x->shape[i];
    else if (!(varcount = mul_dim(varcount, x->ctx, x->shape[i]))) return NULL;
  }
  tkc_dtype out = tkc_dtype_is_float(x->dtype) ? x->dtype : TKC_FLOAT32;
  tkc_dtype work = tkc_least_upper_dtype(sum_acc(x->dtype), TKC_FLOAT32);
  tkc_lazy *s = sum_node(x, mask, keepdim, work);
  tkc_lazy *m = NULL;
  if (s && varcount) { /* sum / (count * variables), in the work dtype */
    tkc_lazy *c = take2(TKC_OP_MUL, take_cast(varcount, work), tkc_lz_const(x->ctx, work, (double)count, 0, NULL));
    tkc_lazy *cb = c ? tkc_lz_broadcast(c, s->ndim, s->shape) : NULL;
    tkc_lazy_unref(c);
    m = cb ? take2(TKC_OP_FDIV, ref(s), cb) : NULL;
  } else if (s) m = take2(TKC_OP_MUL, ref(s), konst(s, work, count ? 1.0 / (double)count : NAN));
  tkc_lazy_unref(s);
  return tkc_wrap(a->ctx, take_cast(m, out));
}

/* ---------------------------------------------------------------- movement */

/* A reshape of variable-length dims keeps each of them as it is, in order: the fixed dims between
 * two of them (and before the first, after the last) may be regrouped, with one -1 among them. */
static tkc_tensor *reshape_symbolic(tkc_tensor *a, int ndim, const int64_t *shape) {
  const tkc_lazy *x = a->node;
  int64_t s[TKC_MAX_DIMS];
  int i = 0, j = 0, infer = -1;
  for (;;) { /* one segment of fixed dims per pass, then the variable dim ending it */
    int64_t have = 1, want = 1;
    for (; i < x->ndim && !tkc_dim_is_var(x->shape[i]); i++) have *= x->shape[i];
    int seg = j;
    for (; j < ndim && !tkc_dim_is_var(shape[j]); j++) {
      s[j] = shape[j];
      if (shape[j] == -1 && infer < 0) infer = j;
      else if (shape[j] < 0) return tkc_err_null(TKC_ESHAPE, "reshape: %s -> %s: dim %d is %lld", TKC_NODE_SHAPE(x), TKC_SHAPE_STR(ndim, shape), j, (long long)shape[j]);
      else want *= shape[j];
    }
    if (infer >= seg && infer < j) {
      if (want == 0 || have % want) return tkc_err_null(TKC_ESHAPE, "reshape: %s -> %s: cannot infer the -1 dim", TKC_NODE_SHAPE(x), TKC_SHAPE_STR(ndim, shape));
      s[infer] = have / want;
      want = have;
      infer = -2; /* used */
    }
    if (want != have || (i < x->ndim) != (j < ndim) || (i < x->ndim && x->shape[i] != shape[j]))
      return tkc_err_null(TKC_ESHAPE, "reshape: %s -> %s: a reshape keeps each variable-length dim and regroups only the fixed dims between them",
                          TKC_NODE_SHAPE(x), TKC_SHAPE_STR(ndim, shape));
    if (i == x->ndim) break;
    s[j++] = x->shape[i++];
  }
  return tkc_wrap(a->ctx, tkc_lz_move(a->node, TKC_OP_RESHAPE, NULL, 0, ndim, s));
}

tkc_tensor *tkc_reshape(tkc_tensor *a, int ndim, const int64_t *shape) {
  if (tkc_check(a)) return NULL;
  if (ndim && !shape) return tkc_err_null(TKC_EINVAL, "reshape: NULL shape");
  if (ndim < 0 || ndim > TKC_MAX_DIMS) return tkc_err_null(TKC_ESHAPE, "reshape: %d dims (tensors have 0..%d)", ndim, TKC_MAX_DIMS);
  if (tkc_shape_is_symbolic(a->node->ndim, a->node->shape) || tkc_shape_is_symbolic(ndim, shape)) return reshape_symbolic(a, ndim, shape);
  int64_t s[TKC_MAX_DIMS], known = 1, total = tkc_shape_numel(a->node->ndim, a->node->shape);
  int infer = -1;
  for (int i = 0; i < ndim; i++)
    if (shape[i] == 0) known = 0; /* an empty target: its other dims cannot overflow the count */
  for (int i = 0; i < ndim; i++) {
    s[i] = shape[i];
    if (s[i] == -1) {
      if (infer >= 0) return tkc_err_null(TKC_ESHAPE, "reshape: %s -> %s: more than one -1", TKC_NODE_SHAPE(a->node), TKC_SHAPE_STR(ndim, shape));
      infer = i;
    } else if (s[i] < 0) return tkc_err_null(TKC_ESHAPE, "reshape: %s -> %s: dim %d is %lld", TKC_NODE_SHAPE(a->node), TKC_SHAPE_STR(ndim, shape), i, (long long)s[i]);
    else if (known && __builtin_mul_overflow(known, s[i], &known)) /* (2^32, 2^32) once wrapped to 0 elements */
      return tkc_err_null(TKC_ESHAPE, "reshape: %s -> %s: the element count overflows 64 bits", TKC_NODE_SHAPE(a->node), TKC_SHAPE_STR(ndim, shape));
  }
  if (infer >= 0) {
    if (known == 0 || total % known) /* (a 0 dim beside -1 leaves it undetermined, as numpy) */
      return tkc_err_null(TKC_ESHAPE, "reshape: %s -> %s: cannot infer the -1 dim (%lld elements are not a multiple of %lld)", TKC_NODE_SHAPE(a->node),
                          TKC_SHAPE_STR(ndim, shape), (long long)total, (long long)known);
    s[infer] = total / known;
    known *= s[infer];
  }
  if (known != total)
    return tkc_err_null(TKC_ESHAPE, "reshape: %s (%lld elements) -> %s (%lld elements): the element counts differ", TKC_NODE_SHAPE(a->node), (long long)total,
                        TKC_SHAPE_STR(ndim, shape), (long long)known);
  return tkc_wrap(a->ctx, tkc_lz_move(a->node, TKC_OP_RESHAPE, NULL, 0, ndim, s));
}

tkc_tensor *tkc_permute(tkc_tensor *a, const int *order) {
  if (tkc_check(a)) return NULL;
  int n = a->node->ndim, seen[TKC_MAX_DIMS] = {0};
  if (n && !order) return tkc_err_null(TKC_EINVAL, "permute: NULL order");
  int64_t shape[TKC_MAX_DIMS], arg[TKC_MAX_DIMS];
  for (int i = 0; i < n; i++) {
    int o = order[i] < 0 ? order[i] + n : order[i];
    if (o < 0 || o >= n || seen[o]) {
      char ord[TKC_MAX_DIMS * 12 + 4];
      size_t k = 0;
      for (int j = 0; j < n && k < sizeof ord; j++) k += (size_t)snprintf(ord + k, sizeof ord - k, j ? ",%d" : "(%d", order[j]);
      if (k < sizeof ord) snprintf(ord + k, sizeof ord - k, n == 1 ? ",)" : ")");
      if (o < 0 || o >= n)
        return tkc_err_null(TKC_EINVAL, "permute: order %s of a %d-d tensor of shape %s: axis %d out of range", ord, n, TKC_NODE_SHAPE(a->node), order[i]);
      return tkc_err_null(TKC_EINVAL, "permute: order %s of a %d-d tensor of shape %s: axis %d given twice", ord, n, TKC_NODE_SHAPE(a->node), order[i]);
    }
    seen[o] = 1;
    arg[i] = o;
    shape[i] = a->node->shape[o];
  }
  return tkc_wrap(a->ctx, tkc_lz_move(a->node, TKC_OP_PERMUTE, arg, n, n, shape));
}

tkc_tensor *tkc_transpose(tkc_tensor *a, int ax0, int ax1) {
  if (tkc_check(a)) return NULL;
  int n = a->node->ndim, order[TKC_MAX_DIMS], given0 = ax0, given1 = ax1;
  if (ax0 < 0) ax0 += n;
  if (ax1 < 0) ax1 += n;
  if (ax0 < 0 || ax0 >= n || ax1 < 0 || ax1 >= n)
    return tkc_err_null(TKC_EINVAL, "transpose: axis %d out of range for a %d-d tensor of shape %s", ax0 < 0 || ax0 >= n ? given0 : given1, n, TKC_NODE_SHAPE(a->node));
  for (int i = 0; i < n; i++) order[i] = i;
  order[ax0] = ax1;
  order[ax1] = ax0;
  return tkc_permute(a, order);
}

tkc_tensor *tkc_expand(tkc_tensor *a, int ndim, const int64_t *shape) {
  if (tkc_check(a)) return NULL;
  tkc_lazy *x = a->node;
  if (ndim && !shape) return tkc_err_null(TKC_EINVAL, "expand: NULL shape");
  if (ndim < x->ndim || ndim > TKC_MAX_DIMS)
    return tkc_err_null(TKC_ESHAPE, "expand: %s to %d dims: %s", TKC_NODE_SHAPE(x), ndim, ndim < x->ndim ? "fewer dims than the tensor has" : "too many dims");
  int64_t s[TKC_MAX_DIMS];
  for (int i = 0; i < ndim; i++) {
    int j = i - (ndim - x->ndim);
    int64_t have = j >= 0 ? x->shape[j] : 1;
    s[i] = shape[i] == -1 ? have : shape[i];
    if ((s[i] < 0 && !tkc_dim_is_var(s[i])) || (have != 1 && have != s[i]))
      return tkc_err_null(TKC_ESHAPE, "expand: %s -> %s: dim %d of size %lld cannot become %lld", TKC_NODE_SHAPE(x), TKC_SHAPE_STR(ndim, shape), i, (long long)have,
                          (long long)shape[i]);
  }
  int64_t max[TKC_MAX_DIMS];
  if (tkc_shape_check_dims(x->ctx, ndim, s, max, "expand")) return NULL;
  if (tkc_shape_size_checked(ndim, max, (int64_t)tkc_dtype_size(x->dtype), NULL))
    return tkc_err_null(TKC_ESHAPE, "expand: %s -> %s: the size of the %s result overflows 64 bits", TKC_NODE_SHAPE(x), TKC_SHAPE_STR(ndim, s),
                        tkc_dtype_name(x->dtype));
  return tkc_wrap(a->ctx, tkc_lz_broadcast(x, ndim, s));
}

tkc_tensor *tkc_pad(tkc_tensor *a, const int64_t *pads, double value) {
  if (tkc_check(a)) return NULL;
  tkc_lazy *x = a->node;
  int n = x->ndim;
  if (n && !pads) return tkc_err_null(TKC_EINVAL, "pad: NULL pads");
  int64_t shape[TKC_MAX_DIMS];
  for (int i = 0; i < n; i++) {
    int64_t b = pads[2 * i], e = pads[2 * i + 1];
    int nb = tkc_dim_le_always(x->ctx, 0, b, "pad"), ne = nb < 0 ? -1 : tkc_dim_le_always(x->ctx, 0, e, "pad");
    if (nb < 0 || ne < 0) return NULL;
    if (!nb || !ne)
      return tkc_err_null(TKC_EINVAL, "pad: %s: negative padding (%s, %s) on axis %d", TKC_NODE_SHAPE(x), TKC_DIM_STR(b), TKC_DIM_STR(e), i);
    /* variable amounts and lengths: the padded length must stay one variable + c */
    if (tkc_dim_add(x->ctx, x->shape[i], b, 1, &shape[i], "pad") || tkc_dim_add(x->ctx, shape[i], e, 1, &shape[i], "pad")) return NULL;
  }
  int64_t max[TKC_MAX_DIMS];
  if (tkc_shape_check_dims(x->ctx, n, shape, max, "pad")) return NULL;
  if (tkc_shape_size_checked(n, max, (int64_t)tkc_dtype_size(x->dtype), NULL))
    return tkc_err_null(TKC_ESHAPE, "pad: %s padded to %s: the size overflows 64 bits", TKC_NODE_SHAPE(x), TKC_SHAPE_STR(n, shape));
  tkc_lazy *p = tkc_lz_move(x, TKC_OP_PAD, pads, 2 * n, n, shape);
  if (!p || value == 0) return tkc_wrap(a->ctx, p);
  /* value padding: where(pad(true), pad(x), value) */
  tkc_lazy *ones = konst(x, TKC_BOOL, 1);
  tkc_lazy *inside = ones ? tkc_lz_move(ones, TKC_OP_PAD, pads, 2 * n, n, shape) : NULL;
  tkc_lazy_unref(ones);
  tkc_lazy *r = take_where(inside, p, tkc_lz_const(x->ctx, x->dtype, value, n, shape));
  return tkc_wrap(a->ctx, r);
}

tkc_tensor *tkc_shrink(tkc_tensor *a, const int64_t *ranges) {
  if (tkc_check(a)) return NULL;
  tkc_lazy *x = a->node;
  int n = x->ndim;
  if (n && !ranges) return tkc_err_null(TKC_EINVAL, "shrink: NULL ranges");
  int64_t shape[TKC_MAX_DIMS];
  for (int i = 0; i < n; i++) { /* 0 <= b <= e <= the axis, for every value of the variables */
    int64_t b = ranges[2 * i], e = ranges[2 * i + 1], d = x->shape[i];
    int in0 = tkc_dim_le_always(x->ctx, 0, b, "shrink"), in1 = in0 < 0 ? -1 : tkc_dim_le_always(x->ctx, b, e, "shrink");
    int in2 = in1 < 0 ? -1 : tkc_dim_le_always(x->ctx, e, d, "shrink");
    if (in0 < 0 || in1 < 0 || in2 < 0) return NULL;
    if ((!in0 || !in1 || !in2) && !tkc_shape_is_symbolic(3, (const int64_t[]){b, e, d}))
      return tkc_err_null(TKC_ESHAPE, "shrink: %s: [%lld, %lld) is outside axis %d of size %lld", TKC_NODE_SHAPE(x), (long long)b, (long long)e, i, (long long)d);
    if (!in0 || !in1 || !in2)
      return tkc_err_null(TKC_ESHAPE, "shrink: %s: [%s, %s) is not inside axis %d for every value of its variables", TKC_NODE_SHAPE(x), TKC_DIM_STR(b),
                          TKC_DIM_STR(e), i);
    if (tkc_dim_add(x->ctx, e, b, -1, &shape[i], "shrink")) return NULL; /* a variable start needs an end of the same variable */
  }
  return tkc_wrap(a->ctx, tkc_lz_move(x, TKC_OP_SHRINK, ranges, 2 * n, n, shape));
}

tkc_tensor *tkc_flip(tkc_tensor *a, int naxes, const int *axes) {
  int mask[TKC_MAX_DIMS];
  if (tkc_check(a) || axes_mask("flip", a->node, naxes, axes, mask)) return NULL;
  int64_t arg[TKC_MAX_DIMS];
  for (int i = 0; i < a->node->ndim; i++) {
    if (mask[i] && tkc_dim_is_var(a->node->shape[i]))
      return tkc_err_null(TKC_EUNSUPPORTED, "flip: %s: axis %d has a variable length", TKC_NODE_SHAPE(a->node), i);
    arg[i] = mask[i] && a->node->shape[i] > 1;
  }
  return tkc_wrap(a->ctx, tkc_lz_move(a->node, TKC_OP_FLIP, arg, a->node->ndim, a->node->ndim, a->node->shape));
}

tkc_tensor *tkc_contiguous(tkc_tensor *a) {
  if (tkc_check(a)) return NULL;
  tkc_lazy *x = a->node;
  tkc_lazy *c = tkc_lazy_new(x->ctx, TKC_LZ_CONTIGUOUS, x->dtype, x->ndim, x->shape);
  if (c) tkc_lazy_set_src(c, 0, x);
  return tkc_wrap(a->ctx, c);
}
