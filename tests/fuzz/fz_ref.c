/* tests/fuzz/fz_ref.c — the fuzzer's reference evaluator: every node of a program computed on the
 * host in double (floats) / int64 (ints, wrapped to their dtype), NumPy-like, following tkc's
 * documented semantics (tinygrad promotion, truncating idiv, C-sign mod, tkc's le = !(b < a) ...).
 *
 * Each float element carries err: a bound on how far a correct device may be. It is propagated to
 * first order through every op (|d(a*b)| <= |a| eb + |b| ea + ea eb, monotone functions by their
 * interval ends ...) plus the op's own rounding (half an ulp of the result) and, for the
 * approximated functions (exp2, log2, sin, sqrt, recip, pow), a few ulps. Where a correct device may
 * legitimately give any value, err is INFINITY ("uncertain"): comparisons of values closer than
 * their errors, NaN fed to max/min (MAX's NaN behaviour depends on operand order, which rewrites
 * may swap), float -> int casts out of range or straddling an integer, division by a value whose
 * error interval holds 0. Ints are exact unless uncertain; uncertainty spreads to whatever reads
 * the element. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "fz.h"

#define UNCERTAIN INFINITY

/* ---------------------------------------------------------------- dtype facts */

static bool isf(tkc_dtype dt) { return tkc_dtype_is_float(dt); }

/* unit roundoff */
static double unit(tkc_dtype dt) {
  switch (dt) {
  case TKC_FLOAT16: return 0x1p-11;
  case TKC_BFLOAT16: return 0x1p-8;
  case TKC_FLOAT64: return 0x1p-53;
  default: return 0x1p-24;
  }
}

static double max_finite(tkc_dtype dt) {
  switch (dt) {
  case TKC_FLOAT16: return 65504.0;
  case TKC_BFLOAT16: return 3.3895313892515355e38;
  case TKC_FLOAT64: return DBL_MAX;
  default: return FLT_MAX;
  }
}

/* an absolute slack for flushed subnormals */
static double tiny(tkc_dtype dt) {
  switch (dt) {
  case TKC_FLOAT16: return 0x1p-13;
  case TKC_FLOAT64: return 0x1p-1020;
  default: return 0x1p-124;
  }
}

static double round_to(double x, tkc_dtype dt) {
  tkc_value v = {.f = x};
  return tkc_value_truncate(v, dt).f;
}

/* x wrapped to the int/bool dtype dt, as an int64 (uint32 values stay non-negative) */
static int64_t wrap(tkc_dtype dt, uint64_t x) {
  if (dt == TKC_BOOL) return x != 0;
  tkc_value v = {.u = x};
  v = tkc_value_truncate(v, dt);
  return tkc_dtype_is_unsigned(dt) ? (int64_t)v.u : v.i;
}

static tkc_dtype float_of(tkc_dtype dt) { return isf(dt) ? dt : tkc_least_upper_dtype(dt, TKC_FLOAT32); }

static tkc_dtype sum_acc(tkc_dtype dt) {
  if (tkc_dtype_is_unsigned(dt)) return tkc_least_upper_dtype(dt, TKC_UINT32);
  if (tkc_dtype_is_int(dt) || dt == TKC_BOOL) return tkc_least_upper_dtype(dt, TKC_INT32);
  return tkc_least_upper_dtype(dt, TKC_FLOAT32);
}

/* ---------------------------------------------------------------- values */

static fz_val mk(tkc_dtype dt, int ndim, const int64_t *shape) {
  fz_val v = {.dt = dt, .ndim = ndim};
  if (ndim) memcpy(v.shape, shape, sizeof(int64_t) * (size_t)ndim);
  v.n = fz_numel(ndim, shape);
  size_t cap = (size_t)(v.n ? v.n : 1);
  v.i = calloc(cap, sizeof *v.i);
  v.f = calloc(cap, sizeof *v.f);
  v.err = calloc(cap, sizeof *v.err);
  return v;
}

static void vfree(fz_val *v) {
  free(v->i), free(v->f), free(v->err);
  v->i = NULL, v->f = NULL, v->err = NULL;
}

void fz_vals_free(fz_val *v, int n) {
  for (int k = 0; k < n; k++) vfree(&v[k]);
}

double fz_val_get(const fz_val *v, int64_t k) { return isf(v->dt) ? v->f[k] : (double)v->i[k]; }

/* element k of v stored as the result of rounding x (exact value) with propagated error e and the
 * op's own error of ulps units of the result: the rounding itself, overflow near the dtype's limit */
static void put_f(fz_val *v, int64_t k, double x, double e, double ulps) {
  tkc_dtype dt = v->dt;
  double u = unit(dt), r = round_to(x, dt);
  v->f[k] = r;
  if (isnan(x) || isinf(x)) { /* a NaN e comes from inf - inf of exact infinities */
    v->err[k] = e > 0 && !isnan(e) ? UNCERTAIN : 0;
    return;
  }
  e = e * (1 + 8 * u) + (ulps + 1) * u * fabs(x) + tiny(dt);
  double m = max_finite(dt);
  if (fabs(x) + e >= m && fabs(x) - e <= m * (1 + 2 * u)) e = UNCERTAIN; /* may overflow, or not */
  if (isnan(e)) e = UNCERTAIN;
  v->err[k] = e;
}

/* element k as the int value x (wrapped to v's dtype), uncertain when unc */
static void put_i(fz_val *v, int64_t k, uint64_t x, bool unc) {
  v->i[k] = wrap(v->dt, x);
  v->err[k] = unc ? UNCERTAIN : 0;
}

/* element k of v converted to dtype to: value in *f (floats) or *i, its error in *e */
static void conv(const fz_val *v, int64_t k, tkc_dtype to, double *f, int64_t *i, double *e) {
  tkc_dtype from = v->dt;
  double ein = v->err[k];
  *e = ein, *f = 0, *i = 0;
  if (isf(to)) {
    double x = isf(from) ? v->f[k] : (double)v->i[k];
    *f = round_to(x, to);
    if (!isf(from) && ein == 0 && from != TKC_INT64 && to != TKC_FLOAT16 && to != TKC_BFLOAT16) *e = 0; /* exact RNE of an int */
    else if (isfinite(x) && ein < UNCERTAIN) *e = ein + unit(to) * fabs(x) + (isf(from) && from != to ? tiny(to) : 0);
    if (isinf(*f) && isfinite(x)) *e = UNCERTAIN;
    return;
  }
  if (!isf(from)) {
    *i = wrap(to, (uint64_t)v->i[k]);
    return;
  }
  double x = v->f[k];
  if (to == TKC_BOOL) {
    *i = x != 0;
    if (ein > 0 && !(fabs(x) > ein)) *e = UNCERTAIN;
    return;
  }
  double t = trunc(x), lo = (double)tkc_dtype_min(to), hi = (double)tkc_dtype_max(to);
  *i = 0;
  if (isnan(x) || ein == UNCERTAIN || t < lo || t > hi || trunc(x - ein) != t || trunc(x + ein) != t) {
    *e = UNCERTAIN;
    return;
  }
  *i = (int64_t)t;
  *e = 0;
}

/* ---------------------------------------------------------------- broadcasting */

/* flat index into v of output element k of an (ndim, shape) result that v broadcasts to */
static int64_t bidx(const fz_val *v, int ndim, const int64_t *shape, int64_t k) {
  int64_t idx = 0, stride = 1;
  for (int d = ndim - 1; d >= 0; d--) {
    int64_t c = k % shape[d];
    k /= shape[d];
    int dv = d - (ndim - v->ndim);
    if (dv < 0) continue;
    if (v->shape[dv] != 1) idx += c * stride;
    stride *= v->shape[dv];
  }
  return idx;
}

/* v converted to dtype dt and broadcast to out's shape (a fresh value) */
static fz_val promote(const fz_val *v, tkc_dtype dt, const fz_node *out) {
  fz_val r = mk(dt, out->ndim, out->shape);
  for (int64_t k = 0; k < r.n; k++) conv(v, bidx(v, out->ndim, out->shape, k), dt, &r.f[k], &r.i[k], &r.err[k]);
  return r;
}

/* ---------------------------------------------------------------- unary */

/* monotone f: the larger distance of f at the ends of [x - e, x + e] from f(x) */
static double mono_err(double (*fn)(double), double x, double e) {
  double v = fn(x), a = fabs(fn(x + e) - v), b = fabs(fn(x - e) - v);
  return a > b ? a : b;
}

static double sigmoid(double x) { return 1 / (1 + exp(-x)); }

/* a float unary op: value and error (ulps: the approximation's own, in units of the result) */
static void unary_f(fz_val *o, int64_t k, int op, double x, double e) {
  double u = unit(o->dt), v = 0, ep = 0, ulps = 0, abs_err = 0;
  bool unc = e == UNCERTAIN;
  switch (op) {
  case FZ_NEG: v = -x, ep = e; break;
  case FZ_ABS: v = fabs(x), ep = e; break;
  case FZ_RELU: v = x > 0 ? x : 0, ep = e, unc |= isnan(x); break;
  case FZ_RECIP:
    v = 1 / x, ulps = 2;
    unc |= fabs(x) <= e;
    if (!unc) ep = e / (fabs(x) * (fabs(x) - e));
    break;
  case FZ_SQRT:
    v = sqrt(x), ulps = 2;
    if (x < 0) unc |= x + e >= 0;
    else ep = x - e < 0 ? sqrt(x + e) : mono_err(sqrt, x, e);
    break;
  case FZ_EXP: case FZ_EXP2:
    v = op == FZ_EXP ? exp(x) : exp2(x);
    ulps = 8 + 2 * fabs(x);               /* exp is exp2(x * log2(e)): the product's rounding grows with x */
    ep = (op == FZ_EXP ? exp(x + e) : exp2(x + e)) - v;
    break;
  case FZ_LOG: case FZ_LOG2:
    v = op == FZ_LOG ? log(x) : log2(x);
    ulps = 8, abs_err = 4 * u;            /* near x = 1 the result is tiny: absolute accuracy */
    if (x < 0) unc |= x + e >= 0;
    else if (x == 0) unc |= e > 0;
    else if (x - e <= 0) unc = true;
    else ep = (op == FZ_LOG ? log(x) - log(x - e) : log2(x) - log2(x - e));
    break;
  case FZ_SIN: case FZ_COS:
    v = op == FZ_SIN ? sin(x) : cos(x);
    ulps = 8, abs_err = u * (4 + 2 * fabs(x)); /* range reduction (cos: sin(pi/2 - x)) */
    ep = e < 2 ? e : 2;
    break;
  case FZ_TANH:
    v = tanh(x), ulps = 8 + 2 * fabs(x), abs_err = 4 * u; /* 2 * sigmoid(2x) - 1 */
    ep = (1 - v * v) * e;
    break;
  default: /* FZ_SIGMOID */
    v = sigmoid(x), ulps = 10 + 2 * fabs(x);
    ep = mono_err(sigmoid, x, e);
    break;
  }
  if (!isfinite(ulps)) ulps = 8; /* an infinite x: the result is exact (0, +-1, inf) or NaN */
  if (o->dt == TKC_FLOAT16 || o->dt == TKC_BFLOAT16) ulps *= 2; /* loose: half transcendental precision */
  put_f(o, k, v, unc ? UNCERTAIN : ep + abs_err, ulps);
  if (unc) o->err[k] = UNCERTAIN;
}

static void unary_i(fz_val *o, int64_t k, int op, int64_t x, double e) {
  bool unc = e == UNCERTAIN;
  uint64_t ux = (uint64_t)x;
  if (o->dt == TKC_BOOL) put_i(o, k, op == FZ_NEG ? !x : (uint64_t)x, unc);
  else if (op == FZ_NEG) put_i(o, k, 0 - ux, unc);
  else if (op == FZ_ABS) put_i(o, k, x < 0 ? 0 - ux : ux, unc);
  else put_i(o, k, x > 0 ? ux : 0, unc); /* relu */
}

static void eval_unary(const fz_node *nd, const fz_val *a, fz_val *o) {
  fz_val x = promote(a, nd->dt, nd);
  for (int64_t k = 0; k < o->n; k++) {
    if (isf(nd->dt)) unary_f(o, k, nd->op, x.f[k], x.err[k]);
    else unary_i(o, k, nd->op, x.i[k], x.err[k]);
  }
  vfree(&x);
}

/* ---------------------------------------------------------------- binary */

static bool near(double a, double b, double e) { return e > 0 && !(fabs(a - b) > e); }

/* pow for floats: corners of the operands' error box (a > 0), exact special cases otherwise */
static void pow_f(fz_val *o, int64_t k, double a, double ea, double b, double eb) {
  double v = pow(a, b), ulps = 16 + 2 * fabs(b * log2(fabs(a) + 1e-300));
  if (!isfinite(ulps)) ulps = 16;
  if (ea == 0 && eb == 0) {
    put_f(o, k, v, 0, ulps);
    if (a == 0 && b < 0) o->err[k] = UNCERTAIN; /* +-inf: the sign of the zero decides */
    return;
  }
  if (!(a - ea > 0)) {
    put_f(o, k, v, UNCERTAIN, 0);
    return;
  }
  double ep = 0;
  for (int s = 0; s < 4; s++) {
    double c = pow(s & 1 ? a + ea : a - ea, s & 2 ? b + eb : b - eb);
    if (fabs(c - v) > ep) ep = fabs(c - v);
  }
  put_f(o, k, v, isfinite(ep) ? ep : UNCERTAIN, ulps);
}

/* a comparison as tkc builds it: lt, gt = b < a, le = !(b < a), ge = !(a < b), eq = !(a != b), ne */
static bool compare(int op, double a, double b) {
  switch (op) {
  case FZ_LT: return a < b;
  case FZ_GT: return b < a;
  case FZ_LE: return !(b < a);
  case FZ_GE: return !(a < b);
  case FZ_EQ: return !(a != b);
  default: return a != b;
  }
}

static bool compare_i(int op, int64_t a, int64_t b) {
  switch (op) {
  case FZ_LT: return a < b;
  case FZ_GT: return b < a;
  case FZ_LE: return !(b < a);
  case FZ_GE: return !(a < b);
  case FZ_EQ: return a == b;
  default: return a != b;
  }
}

static void binary_f(fz_val *o, int64_t k, int op, double a, double ea, double b, double eb) {
  bool unc = ea == UNCERTAIN || eb == UNCERTAIN;
  if (unc) {
    put_f(o, k, 0, UNCERTAIN, 0);
    return;
  }
  switch (op) {
  case FZ_ADD: put_f(o, k, a + b, ea + eb, 0); break;
  case FZ_SUB: put_f(o, k, a - b, ea + eb, 0); break;
  case FZ_MUL: put_f(o, k, a * b, fabs(a) * eb + fabs(b) * ea + ea * eb, 0); break;
  case FZ_DIV:
    if (fabs(b) <= eb || b == 0) put_f(o, k, a / b, UNCERTAIN, 0);
    else put_f(o, k, a / b, (ea + fabs(a / b) * eb) / (fabs(b) - eb), 2);
    break;
  case FZ_MAXIMUM: case FZ_MINIMUM: {
    double v = op == FZ_MAXIMUM ? (a < b ? b : a) : (a < b ? a : b);
    put_f(o, k, v, isnan(a) || isnan(b) ? UNCERTAIN : (ea > eb ? ea : eb), 0);
    break;
  }
  default: put_f(o, k, pow(a, b), 0, 0), pow_f(o, k, a, ea, b, eb); break;
  }
}

/* C semantics as tkc defines them: truncating idiv, mod with the dividend's sign, x/0 = 0 */
static uint64_t int_op(int op, tkc_dtype dt, int64_t a, int64_t b) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  switch (op) {
  case FZ_ADD: return ua + ub;
  case FZ_SUB: return ua - ub;
  case FZ_MUL: return ua * ub;
  case FZ_IDIV: return b == 0 ? 0 : b == -1 ? 0 - ua : (uint64_t)(a / b);
  case FZ_MOD: return b == 0 || b == -1 ? 0 : (uint64_t)(a % b);
  case FZ_MAXIMUM: return (uint64_t)(a < b ? b : a);
  case FZ_MINIMUM: return (uint64_t)(a < b ? a : b);
  case FZ_AND: return ua & ub;
  case FZ_OR: return ua | ub;
  case FZ_XOR: return ua ^ ub;
  case FZ_SHL: return b >= 64 ? 0 : ua << b;
  case FZ_SHR: return tkc_dtype_is_unsigned(dt) ? ua >> b : (uint64_t)(a >> b);
  default: return 0;
  }
}

static void eval_binary(const fz_node *nd, const fz_val *a, const fz_val *b, fz_val *o) {
  bool cmp = nd->op >= FZ_LT && nd->op <= FZ_NE;
  tkc_dtype dt = tkc_least_upper_dtype(a->dt, b->dt);
  if (nd->op == FZ_DIV || nd->op == FZ_POW) dt = float_of(dt);
  fz_val x = promote(a, dt, nd), y = promote(b, dt, nd);
  for (int64_t k = 0; k < o->n; k++) {
    bool unc = x.err[k] == UNCERTAIN || y.err[k] == UNCERTAIN;
    if (cmp) {
      bool r = isf(dt) ? compare(nd->op, x.f[k], y.f[k]) : compare_i(nd->op, x.i[k], y.i[k]);
      put_i(o, k, r, unc || (isf(dt) && near(x.f[k], y.f[k], x.err[k] + y.err[k])));
    } else if (isf(dt)) binary_f(o, k, nd->op, x.f[k], x.err[k], y.f[k], y.err[k]);
    else if (dt == TKC_BOOL) {
      /* bool arithmetic is int arithmetic on 0/1, then != 0: add = or, mul = and */
      uint64_t r = nd->op == FZ_ADD || nd->op == FZ_MAXIMUM || nd->op == FZ_OR ? (uint64_t)(x.i[k] | y.i[k])
                   : nd->op == FZ_XOR                                         ? (uint64_t)(x.i[k] ^ y.i[k])
                                                                              : (uint64_t)(x.i[k] & y.i[k]);
      put_i(o, k, r, unc);
    } else put_i(o, k, int_op(nd->op, dt, x.i[k], y.i[k]), unc);
  }
  vfree(&x), vfree(&y);
}

static void eval_where(const fz_node *nd, const fz_val *c, const fz_val *a, const fz_val *b, fz_val *o) {
  fz_val cc = promote(c, TKC_BOOL, nd), x = promote(a, nd->dt, nd), y = promote(b, nd->dt, nd);
  for (int64_t k = 0; k < o->n; k++) {
    const fz_val *s = cc.i[k] ? &x : &y;
    o->i[k] = s->i[k], o->f[k] = s->f[k], o->err[k] = cc.err[k] == UNCERTAIN ? UNCERTAIN : s->err[k];
  }
  vfree(&cc), vfree(&x), vfree(&y);
}

/* ---------------------------------------------------------------- reductions */

/* the reduce of a over the axes in mask into o (o laid out as a with reduced dims of size 1) */
typedef struct racc {
  double s, abs_s, e;   /* floats: sum (or extreme), sum of |x|, summed errors */
  uint64_t is;          /* ints: wrapped sum */
  int64_t ix;           /* ints: extreme */
  bool unc, has_nonfinite_err, nan, any;
  int64_t n;
} racc;

static void racc_add(racc *r, int op, const fz_val *x, int64_t k) {
  double e = x->err[k];
  r->unc |= e == UNCERTAIN;
  r->n++;
  if (isf(x->dt)) {
    double v = x->f[k];
    if (!isfinite(v)) r->has_nonfinite_err |= e > 0;
    r->nan |= isnan(v);
    if (op == FZ_RSUM || op == FZ_RMEAN) r->s += v, r->abs_s += fabs(v), r->e += e;
    else {
      bool better = op == FZ_RMAX ? v > r->s : v < r->s;
      if (!r->any || better || isnan(v)) r->s = v;
      if (e > r->e) r->e = e;
    }
  } else {
    int64_t v = x->i[k];
    r->is += (uint64_t)v;
    bool better = op == FZ_RMAX ? v > r->ix : v < r->ix;
    if (!r->any || better) r->ix = v;
  }
  r->any = true;
}

static void reduce_into(const fz_node *nd, const fz_val *in, fz_val *o) {
  const int ndim = in->ndim;
  int mask[FZ_MAXDIM];
  for (int i = 0; i < ndim; i++) mask[i] = nd->np == 0;
  for (int k = 0; k < nd->np; k++) mask[nd->p[k] < 0 ? nd->p[k] + ndim : nd->p[k]] = 1;
  int64_t oshape[FZ_MAXDIM], on = 1;
  for (int i = 0; i < ndim; i++) on *= (oshape[i] = mask[i] ? 1 : in->shape[i]);
  racc *acc = calloc((size_t)(on ? on : 1), sizeof *acc);
  for (int64_t k = 0; k < in->n; k++) { /* the output slot of input element k */
    int64_t rem = k, idx = 0, stride = 1;
    for (int d = ndim - 1; d >= 0; d--) {
      int64_t c = rem % in->shape[d];
      rem /= in->shape[d];
      if (!mask[d]) idx += c * stride;
      stride *= oshape[d];
    }
    racc_add(&acc[idx], nd->op, in, k);
  }
  int64_t count = 1;
  for (int i = 0; i < ndim; i++)
    if (mask[i]) count *= in->shape[i];
  /* the accumulator: tkc_sum / tkc_mean cast to sum_acc (mean: at least float32) before reducing */
  tkc_dtype acc_dt = nd->op == FZ_RSUM ? sum_acc(in->dt) : nd->op == FZ_RMEAN ? tkc_least_upper_dtype(sum_acc(in->dt), TKC_FLOAT32) : in->dt;
  fz_val tmp = mk(isf(in->dt) || nd->op != FZ_RMEAN ? acc_dt : sum_acc(in->dt), ndim, oshape);
  for (int64_t k = 0; k < on; k++) {
    racc *r = &acc[k];
    if (isf(tmp.dt)) {
      if (!r->any) r->s = nd->op == FZ_RMAX ? -INFINITY : nd->op == FZ_RMIN ? INFINITY : 0;
      double e = r->unc ? UNCERTAIN : r->e + (double)(r->n + 1) * unit(tmp.dt) * r->abs_s;
      if (!isfinite(r->s)) e = r->has_nonfinite_err || r->unc ? UNCERTAIN : 0;
      if ((nd->op == FZ_RMAX || nd->op == FZ_RMIN) && r->nan) e = UNCERTAIN;
      tmp.f[k] = round_to(r->s, tmp.dt), tmp.err[k] = e;
    } else {
      uint64_t v = nd->op == FZ_RSUM || nd->op == FZ_RMEAN ? r->is : (uint64_t)r->ix;
      if (!r->any && nd->op == FZ_RMAX) v = (uint64_t)tkc_dtype_min(in->dt);
      if (!r->any && nd->op == FZ_RMIN) v = (uint64_t)tkc_dtype_max(in->dt);
      put_i(&tmp, k, v, r->unc);
    }
  }
  free(acc);
  if (nd->op == FZ_RMEAN) { /* sum (ints: wrapped in int32) -> work float, * (1 / count) */
    tkc_dtype work = tkc_least_upper_dtype(sum_acc(in->dt), TKC_FLOAT32);
    fz_val w = mk(work, ndim, oshape);
    double inv = round_to(count ? 1.0 / (double)count : NAN, work);
    for (int64_t k = 0; k < on; k++) {
      double f, e;
      int64_t i;
      conv(&tmp, k, work, &f, &i, &e);
      put_f(&w, k, f * inv, e * fabs(inv), 1);
    }
    vfree(&tmp);
    tmp = w;
  }
  for (int64_t k = 0; k < o->n; k++) conv(&tmp, k, o->dt, &o->f[k], &o->i[k], &o->err[k]);
  vfree(&tmp);
}

/* ---------------------------------------------------------------- movement */

/* coordinates of flat index k in (ndim, shape) */
static void unravel(int64_t k, int ndim, const int64_t *shape, int64_t *c) {
  for (int d = ndim - 1; d >= 0; d--) {
    c[d] = shape[d] ? k % shape[d] : 0;
    if (shape[d]) k /= shape[d];
  }
}

static int64_t ravel(const int64_t *c, int ndim, const int64_t *shape) {
  int64_t k = 0;
  for (int d = 0; d < ndim; d++) k = k * shape[d] + c[d];
  return k;
}

static void copy_elem(fz_val *o, int64_t k, const fz_val *a, int64_t j) { o->i[k] = a->i[j], o->f[k] = a->f[j], o->err[k] = a->err[j]; }

/* for output element k of a movement op: the input element, or -1 for padding */
static int64_t move_src(const fz_node *nd, const fz_val *a, int64_t k) {
  int64_t c[FZ_MAXDIM], s[FZ_MAXDIM];
  unravel(k, nd->ndim, nd->shape, c);
  switch (nd->kind) {
  case FZ_RESHAPE: case FZ_CONTIG: return k;
  case FZ_PERMUTE:
    for (int i = 0; i < a->ndim; i++) s[nd->p[i] < 0 ? nd->p[i] + a->ndim : nd->p[i]] = c[i];
    break;
  case FZ_TRANSPOSE: {
    int x = (int)(nd->p[0] < 0 ? nd->p[0] + a->ndim : nd->p[0]), y = (int)(nd->p[1] < 0 ? nd->p[1] + a->ndim : nd->p[1]);
    memcpy(s, c, sizeof s);
    s[x] = c[y], s[y] = c[x];
    break;
  }
  case FZ_EXPAND: return bidx(a, nd->ndim, nd->shape, k);
  case FZ_PAD:
    for (int i = 0; i < a->ndim; i++) {
      s[i] = c[i] - nd->p[2 * i];
      if (s[i] < 0 || s[i] >= a->shape[i]) return -1;
    }
    break;
  case FZ_SHRINK:
    for (int i = 0; i < a->ndim; i++) s[i] = c[i] + nd->p[2 * i];
    break;
  default: { /* FZ_FLIP */
    int mask[FZ_MAXDIM] = {0};
    for (int i = 0; i < a->ndim; i++) mask[i] = nd->np == 0;
    for (int q = 0; q < nd->np; q++) mask[nd->p[q] < 0 ? nd->p[q] + a->ndim : nd->p[q]] = 1;
    for (int i = 0; i < a->ndim; i++) s[i] = mask[i] ? a->shape[i] - 1 - c[i] : c[i];
  }
  }
  return ravel(s, a->ndim, a->shape);
}

static void eval_move(const fz_node *nd, const fz_val *a, fz_val *o) {
  for (int64_t k = 0; k < o->n; k++) {
    int64_t j = move_src(nd, a, k);
    if (j >= 0) copy_elem(o, k, a, j);
    else if (isf(o->dt)) o->f[k] = round_to(nd->value, o->dt);
    else o->i[k] = wrap(o->dt, (uint64_t)(int64_t)nd->value);
  }
}

/* ---------------------------------------------------------------- composites */

/* a @ b (shapes as fz_infer): products in the operands' dtype (half: widened to float32), summed in
 * the sum accumulator, cast back */
static void eval_matmul(const fz_node *nd, const fz_val *a, const fz_val *b, fz_val *o) {
  tkc_dtype dt = nd->dt, pdt = dt == TKC_FLOAT16 || dt == TKC_BFLOAT16 ? TKC_FLOAT32 : dt, acc = sum_acc(pdt);
  int64_t as[FZ_MAXDIM], bs[FZ_MAXDIM];
  int an = a->ndim == 1 ? 2 : a->ndim, bn = b->ndim == 1 ? 2 : b->ndim;
  if (a->ndim == 1) as[0] = 1, as[1] = a->shape[0];
  else memcpy(as, a->shape, sizeof(int64_t) * (size_t)an);
  if (b->ndim == 1) bs[0] = b->shape[0], bs[1] = 1;
  else memcpy(bs, b->shape, sizeof(int64_t) * (size_t)bn);
  int64_t kk = as[an - 1];
  fz_val av = *a, bv = *b; /* views with the 1-D operands' matrix shapes */
  av.ndim = an, bv.ndim = bn;
  memcpy(av.shape, as, sizeof as), memcpy(bv.shape, bs, sizeof bs);
  int nb = o->ndim - (a->ndim != 1) - (b->ndim != 1);
  fz_val acc_v = mk(acc, 1, (int64_t[]){1});
  for (int64_t q = 0; q < o->n; q++) {
    int64_t c[FZ_MAXDIM], ca[FZ_MAXDIM], cb[FZ_MAXDIM];
    unravel(q, o->ndim, o->shape, c);
    int64_t i = a->ndim != 1 ? c[nb] : 0, j = b->ndim != 1 ? c[o->ndim - 1] : 0;
    for (int d = 0; d < an - 2; d++) ca[d] = as[d] == 1 ? 0 : c[d + nb - (an - 2)];
    for (int d = 0; d < bn - 2; d++) cb[d] = bs[d] == 1 ? 0 : c[d + nb - (bn - 2)];
    double s = 0, abs_s = 0, e = 0;
    uint64_t is = 0;
    bool unc = false;
    for (int64_t t = 0; t < kk; t++) {
      ca[an - 2] = i, ca[an - 1] = t, cb[bn - 2] = t, cb[bn - 1] = j;
      int64_t ka = ravel(ca, an, as), kb = ravel(cb, bn, bs);
      double fa, fb, ea, eb;
      int64_t ia, ib;
      conv(&av, ka, pdt, &fa, &ia, &ea);
      conv(&bv, kb, pdt, &fb, &ib, &eb);
      unc |= ea == UNCERTAIN || eb == UNCERTAIN;
      if (isf(pdt)) {
        double pr = round_to(fa * fb, pdt);
        s += pr, abs_s += fabs(pr), e += fabs(fa) * eb + fabs(fb) * ea + ea * eb;
        if (!isfinite(pr)) unc |= ea > 0 || eb > 0;
      } else {
        uint64_t pr = pdt == TKC_BOOL ? (uint64_t)(ia & ib) : (uint64_t)wrap(pdt, (uint64_t)ia * (uint64_t)ib);
        is += pr;
      }
    }
    if (isf(acc)) {
      acc_v.f[0] = round_to(s, acc);
      acc_v.err[0] = unc ? UNCERTAIN : isfinite(s) ? e + (double)(kk + 2) * unit(acc) * abs_s + tiny(acc) : 0;
    } else put_i(&acc_v, 0, is, unc);
    conv(&acc_v, 0, dt, &o->f[q], &o->i[q], &o->err[q]);
  }
  vfree(&acc_v);
}

/* a node of kind/op over `in` as a throwaway, for composites built from other ops */
static fz_val apply(fz_node tmpl, const fz_val *x, const fz_val *y);

static fz_node reduce_node(int op, int axis, const fz_val *x) {
  fz_node nd = {.kind = FZ_REDUCE, .op = op, .np = 1, .keepdim = 1};
  nd.p[0] = axis;
  nd.ndim = x->ndim;
  memcpy(nd.shape, x->shape, sizeof nd.shape);
  nd.shape[axis < 0 ? axis + x->ndim : axis] = 1;
  nd.dt = op == FZ_RSUM ? (x->dt == TKC_FLOAT16 ? x->dt : sum_acc(x->dt)) : x->dt;
  return nd;
}

static fz_node ew_node(fz_kind kind, int op, const fz_val *x, tkc_dtype dt) {
  fz_node nd = {.kind = kind, .op = op, .ndim = x->ndim, .dt = dt};
  memcpy(nd.shape, x->shape, sizeof nd.shape);
  return nd;
}

/* softmax / log_softmax exactly as tkc composes them: m = max, d = a - m, e = exp(d), s = sum(e) */
static void eval_softmax(const fz_node *nd, const fz_val *a, fz_val *o) {
  fz_val m = apply(reduce_node(FZ_RMAX, nd->axis, a), a, NULL);
  fz_val d = apply(ew_node(FZ_BINARY, FZ_SUB, a, a->dt), a, &m);
  fz_val e = apply(ew_node(FZ_UNARY, FZ_EXP, &d, float_of(d.dt)), &d, NULL);
  fz_val s = apply(reduce_node(FZ_RSUM, nd->axis, &e), &e, NULL);
  fz_val r;
  if (nd->kind == FZ_SOFTMAX) r = apply(ew_node(FZ_BINARY, FZ_DIV, &e, nd->dt), &e, &s);
  else {
    fz_val l = apply(ew_node(FZ_UNARY, FZ_LOG, &s, float_of(s.dt)), &s, NULL);
    r = apply(ew_node(FZ_BINARY, FZ_SUB, &d, nd->dt), &d, &l);
    vfree(&l);
  }
  for (int64_t k = 0; k < o->n; k++) conv(&r, k, o->dt, &o->f[k], &o->i[k], &o->err[k]);
  vfree(&m), vfree(&d), vfree(&e), vfree(&s), vfree(&r);
}

static void eval_cumsum(const fz_node *nd, const fz_val *a, fz_val *o) {
  int ax = a->ndim ? (nd->axis < 0 ? nd->axis + a->ndim : nd->axis) : 0;
  tkc_dtype acc = sum_acc(a->dt);
  int64_t len = a->ndim ? a->shape[ax] : 1, inner = 1;
  for (int d = ax + 1; d < a->ndim; d++) inner *= a->shape[d];
  fz_val t = mk(acc, 1, (int64_t[]){1});
  for (int64_t k = 0; k < o->n; k++) {
    int64_t pos = (k / inner) % (len ? len : 1), base = k - pos * inner;
    double s = 0, abs_s = 0, e = 0;
    uint64_t is = 0;
    bool unc = false, nonfin = false;
    for (int64_t j = 0; j <= pos; j++) {
      double f, ej;
      int64_t i;
      conv(a, base + j * inner, acc, &f, &i, &ej);
      unc |= ej == UNCERTAIN;
      nonfin |= !isfinite(f) && ej > 0;
      s += f, abs_s += fabs(f), e += ej, is += (uint64_t)i;
    }
    if (isf(acc)) {
      t.f[0] = round_to(s, acc);
      t.err[0] = unc || (nonfin && !isfinite(s)) ? UNCERTAIN : isfinite(s) ? e + (double)(pos + 2) * unit(acc) * abs_s + tiny(acc) : 0;
    } else put_i(&t, 0, is, unc);
    conv(&t, 0, o->dt, &o->f[k], &o->i[k], &o->err[k]);
  }
  vfree(&t);
}

static void eval_cat(const fz_node *nd, const fz_val *const *in, fz_val *o) {
  int ax = nd->axis < 0 ? nd->axis + o->ndim : nd->axis;
  for (int64_t k = 0; k < o->n; k++) {
    int64_t c[FZ_MAXDIM];
    unravel(k, o->ndim, o->shape, c);
    int q = 0;
    while (c[ax] >= in[q]->shape[ax]) c[ax] -= in[q++]->shape[ax];
    copy_elem(o, k, in[q], ravel(c, in[q]->ndim, in[q]->shape));
  }
}

/* (x - mean) / sqrt(var + 1e-5) per group of the last naxes dims, in double; the error bound covers
 * tkc's one-pass statistics (sums of d = x - x0 and d^2) and the inputs' errors */
static void eval_layernorm(const fz_node *nd, const fz_val *a, fz_val *o) {
  int64_t m = 1;
  for (int d = a->ndim - (int)nd->p[0]; d < a->ndim; d++) m *= a->shape[d];
  int64_t groups = m ? a->n / m : 0;
  tkc_dtype acc = a->dt == TKC_FLOAT16 || a->dt == TKC_BFLOAT16 ? TKC_FLOAT32 : a->dt;
  double ua = unit(acc);
  for (int64_t g = 0; g < groups; g++) {
    const double *x = a->f + g * m, *ex = a->err + g * m;
    double s = 0, s2 = 0, emax = 0, dmax = 0;
    bool unc = false;
    for (int64_t k = 0; k < m; k++) {
      double d = x[k] - x[0];
      s += d, s2 += d * d, unc |= ex[k] == UNCERTAIN || !isfinite(x[k]);
      if (ex[k] > emax) emax = ex[k];
      if (fabs(d) > dmax) dmax = fabs(d);
    }
    unc |= dmax * dmax >= max_finite(acc) / (double)(m ? m : 1); /* one-pass stats: sum of d^2 overflows */
    double m1 = s / (double)m, var = s2 / (double)m - m1 * m1;
    if (var < 0) var = 0;
    double sd = sqrt(var + 1e-5), rel = (double)(m + 4) * ua * 8 * (1 + dmax * dmax / (sd * sd));
    for (int64_t k = 0; k < m; k++) {
      double y = (x[k] - x[0] - m1) / sd;
      double e = 4 * emax / sd * (1 + fabs(y)) + rel * (1 + fabs(y)) + (dmax / sd) * 4 * ua;
      put_f(o, g * m + k, y, unc ? UNCERTAIN : e, 8);
    }
  }
}

static void eval_index(const fz_node *nd, const fz_val *a, const fz_val *ix, fz_val *o) {
  int ax = nd->axis < 0 ? nd->axis + a->ndim : nd->axis;
  for (int64_t k = 0; k < o->n; k++) {
    int64_t c[FZ_MAXDIM], s[FZ_MAXDIM];
    unravel(k, o->ndim, o->shape, c);
    if (nd->kind == FZ_GATHER) {
      memcpy(s, c, sizeof s);
      s[ax] = ix->i[k] < 0 ? ix->i[k] + a->shape[ax] : ix->i[k];
    } else {
      int n = 0;
      for (int d = 0; d < ax; d++) s[n++] = c[d];
      int64_t j = ix->i[ravel(c + ax, ix->ndim, ix->shape)];
      s[n++] = j < 0 ? j + a->shape[ax] : j;
      for (int d = ax + 1; d < a->ndim; d++) s[n++] = c[d + ix->ndim - 1];
    }
    copy_elem(o, k, a, ravel(s, a->ndim, a->shape));
  }
}

/* ---------------------------------------------------------------- leaves and dispatch */

static void eval_leaf(const fz_node *nd, fz_val *o) {
  for (int64_t k = 0; k < o->n; k++) {
    double v = nd->kind == FZ_DATA ? fz_leaf_value(nd, k) : nd->kind == FZ_ARANGE ? nd->value + (double)(k * nd->p[1]) : nd->value;
    if (isf(o->dt)) {
      o->f[k] = round_to(v, o->dt);
      if (o->f[k] != 0 && fabs(o->f[k]) < 4 * tiny(o->dt)) o->err[k] = fabs(o->f[k]); /* subnormal: may be flushed */
    } else o->i[k] = o->dt == TKC_BOOL ? v != 0 : wrap(o->dt, (uint64_t)(int64_t)v);
  }
}

static void eval_node(const fz_node *nd, const fz_val *const *in, fz_val *o) {
  switch (nd->kind) {
  case FZ_DATA: case FZ_FULL: case FZ_SCALAR: case FZ_ARANGE: eval_leaf(nd, o); break;
  case FZ_UNARY: eval_unary(nd, in[0], o); break;
  case FZ_BINARY: eval_binary(nd, in[0], in[1], o); break;
  case FZ_WHERE: eval_where(nd, in[0], in[1], in[2], o); break;
  case FZ_CAST:
    for (int64_t k = 0; k < o->n; k++) conv(in[0], k, o->dt, &o->f[k], &o->i[k], &o->err[k]);
    break;
  case FZ_REDUCE: reduce_into(nd, in[0], o); break;
  case FZ_MATMUL: eval_matmul(nd, in[0], in[1], o); break;
  case FZ_SOFTMAX: case FZ_LOGSOFTMAX: eval_softmax(nd, in[0], o); break;
  case FZ_CUMSUM: eval_cumsum(nd, in[0], o); break;
  case FZ_CAT: eval_cat(nd, in, o); break;
  case FZ_LAYERNORM: eval_layernorm(nd, in[0], o); break;
  case FZ_GATHER: case FZ_INDEX_SELECT: eval_index(nd, in[0], in[1], o); break;
  default: eval_move(nd, in[0], o); break;
  }
}

static fz_val apply(fz_node tmpl, const fz_val *x, const fz_val *y) {
  fz_val o = mk(tmpl.dt, tmpl.ndim, tmpl.shape);
  const fz_val *in[2] = {x, y};
  eval_node(&tmpl, in, &o);
  return o;
}

void fz_ref_eval(const fz_prog *p, fz_val *out) {
  for (int i = 0; i < p->n; i++) {
    const fz_node *nd = &p->node[i];
    memset(&out[i], 0, sizeof out[i]);
    if (nd->expect_fail) continue;
    const fz_val *in[4] = {0};
    for (int k = 0; k < nd->nin; k++) in[k] = &out[nd->in[k]];
    out[i] = mk(nd->dt, nd->ndim, nd->shape);
    eval_node(nd, in, &out[i]);
  }
}
