/* tests/fuzz/fuzz_symbolic.c — fuzzes the symbolic simplifier (tkc_simplify: graph_rewrite with
 * tkc_symbolic()).
 *
 * The input bytes are decoded into an integer expression over a few DEFINE_VARs (RANGE / SPECIAL
 * too) with bounds: ADD SUB MUL IDIV MOD MAX NEG WHERE CMPLT CMPNE AND OR XOR SHL SHR CAST, index
 * shapes like (v*c + e) // c, in int32 or another int dtype. The expression is simplified, and both
 * versions are evaluated at the variables' bounds and at values drawn inside them with an evaluator
 * written here (tkc's semantics from src/uops/alu.c: ints wrap to their dtype, IDIV truncates, MOD
 * has the dividend's sign, x // 0 = x % 0 = 0, shifts past the width give 0 / the sign fill). They
 * must agree; every node of both must stay within the [vmin, vmax] its range analysis claims; and
 * the evaluator must agree with tkc_alu_eval node by node. The same for tkc_symbolic_flat() and
 * tkc_symbolic_simple(); and rewriting a result again must not change it (a fixed point).
 *
 * Built with -DFZ_LIBFUZZER it is a libFuzzer target (a failure aborts). Otherwise main() runs
 *   fuzz_symbolic [--seed N] [--count N] [--verbose] [FILE...]
 * on N random inputs (or on the given files) and exits 1 when any failed. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tkc/uop.h"
#include "fz_driver.h"

#define MAXVARS 4
#define MAXNODES 96

/* ---------------------------------------------------------------- input bytes */

typedef struct reader {
  const uint8_t *d;
  size_t n, at;
} reader;

static unsigned byte(reader *r) { return r->at < r->n ? r->d[r->at++] : 0; }

/* ---------------------------------------------------------------- building */

typedef struct builder {
  reader r;
  tkc_graph *g;
  tkc_dt dt;
  int64_t dlo, dhi;
  int nvars, nodes;
  tkc_uop *vars[MAXVARS];
  int64_t lo[MAXVARS], hi[MAXVARS];
} builder;

static int64_t clamp_dt(const builder *b, int64_t v) { return v < b->dlo ? b->dlo : v > b->dhi ? b->dhi : v; }

static tkc_uop *konst(builder *b, int64_t v) { return tkc_uop_const_int(b->g, b->dt, v); }

/* a constant: mostly small, sometimes one of the values where rules tend to break */
static int64_t const_value(builder *b) {
  unsigned k = byte(&b->r);
  if (k < 192) return clamp_dt(b, (int64_t)((k + 20) % 41) - 20); /* 0 once the input runs out */
  int64_t hot[] = {b->dhi, b->dlo, b->dhi - 1, b->dlo + 1, 65536, 46341, 1 << 20, -(1 << 16), 255, 256, 127, -128, b->dhi / 2 + 1, b->dlo / 2};
  return clamp_dt(b, hot[k % (sizeof hot / sizeof *hot)]);
}

/* a divisor constant: non-zero, mostly positive */
static int64_t divisor(builder *b) {
  int64_t v = const_value(b);
  if (v == 0) v = 1 + (int64_t)(byte(&b->r) % 8);
  if (b->dlo == 0 && v < 0) v = -v;
  return clamp_dt(b, v);
}

static tkc_uop *expr(builder *b, int depth);

static tkc_uop *leaf(builder *b) {
  unsigned k = byte(&b->r);
  return k % 4 ? b->vars[k % b->nvars] : konst(b, const_value(b));
}

static tkc_uop *cond(builder *b, int depth) {
  unsigned k = byte(&b->r);
  tkc_uop *x = expr(b, depth - 1), *y = k & 4 ? konst(b, const_value(b)) : expr(b, depth - 1);
  tkc_uop *c = tkc_uop_alu2(b->g, k & 1 ? TKC_OP_CMPNE : TKC_OP_CMPLT, x, y);
  if (k & 2) c = tkc_uop_alu2(b->g, TKC_OP_CMPNE, c, tkc_uop_const_int(b->g, tkc_dt_of(TKC_BOOL), 1)); /* not */
  if (k & 8) c = tkc_uop_alu2(b->g, k & 16 ? TKC_OP_AND : TKC_OP_OR, c, cond(b, depth - 1));
  return c;
}

static tkc_uop *expr(builder *b, int depth) {
  if (depth <= 0 || ++b->nodes > MAXNODES) return leaf(b);
  tkc_graph *g = b->g;
  unsigned k = byte(&b->r);
  switch (k % 20) {
  case 0: case 1: return leaf(b);
  case 2: case 3: return tkc_uop_alu2(g, TKC_OP_ADD, expr(b, depth - 1), expr(b, depth - 1));
  case 4: return tkc_uop_alu2(g, TKC_OP_ADD, expr(b, depth - 1), konst(b, const_value(b)));
  case 5: return tkc_uop_alu2(g, TKC_OP_MUL, expr(b, depth - 1), k & 32 ? expr(b, depth - 1) : konst(b, const_value(b)));
  case 6: case 7: return tkc_uop_alu2(g, TKC_OP_IDIV, expr(b, depth - 1), konst(b, divisor(b)));
  case 8: case 9: return tkc_uop_alu2(g, TKC_OP_MOD, expr(b, depth - 1), konst(b, divisor(b)));
  case 10: return tkc_uop_alu2(g, TKC_OP_MAX, expr(b, depth - 1), expr(b, depth - 1));
  case 11: return tkc_uop_alu1(g, TKC_OP_NEG, expr(b, depth - 1));
  case 12: return tkc_uop_alu3(g, TKC_OP_WHERE, cond(b, depth), expr(b, depth - 1), expr(b, depth - 1));
  case 13: return tkc_uop_alu2(g, (tkc_op[]){TKC_OP_AND, TKC_OP_OR, TKC_OP_XOR}[(k >> 5) % 3], expr(b, depth - 1), k & 128 ? expr(b, depth - 1) : konst(b, const_value(b)));
  case 14: { /* shifts by a constant inside the width */
    int bits = (int)tkc_dt_itemsize(b->dt) * 8;
    return tkc_uop_alu2(g, k & 32 ? TKC_OP_SHL : TKC_OP_SHR, expr(b, depth - 1), konst(b, (int64_t)(byte(&b->r) % (unsigned)bits)));
  }
  case 15: return tkc_uop_alu2(g, TKC_OP_SUB, expr(b, depth - 1), expr(b, depth - 1));
  case 16: { /* through a cast to another int dtype and back */
    static const tkc_dtype others[] = {TKC_INT8, TKC_UINT8, TKC_INT16, TKC_INT32, TKC_INT64, TKC_UINT32};
    tkc_uop *x = tkc_uop_cast(g, expr(b, depth - 1), tkc_dt_of(others[(k >> 5) % 6]));
    return tkc_uop_cast(g, x, b->dt);
  }
  case 17: return tkc_uop_cast(g, cond(b, depth), b->dt); /* bool -> int */
  default: { /* index-like: (v*c + e) op c' */
    tkc_uop *v = b->vars[byte(&b->r) % (unsigned)b->nvars];
    tkc_uop *e = tkc_uop_alu2(g, TKC_OP_ADD, tkc_uop_alu2(g, TKC_OP_MUL, v, konst(b, divisor(b))), expr(b, depth - 2));
    unsigned w = byte(&b->r) % 3;
    if (w == 0) return tkc_uop_alu2(g, TKC_OP_IDIV, e, konst(b, divisor(b)));
    if (w == 1) return tkc_uop_alu2(g, TKC_OP_MOD, e, konst(b, divisor(b)));
    return tkc_uop_alu3(g, TKC_OP_WHERE, tkc_uop_alu2(g, TKC_OP_CMPLT, e, konst(b, const_value(b))), e, konst(b, const_value(b)));
  }
  }
}

/* the variables: a dtype for the whole expression, then per variable a kind and bounds */
static bool make_vars(builder *b) {
  static const tkc_dtype dts[] = {TKC_INT32, TKC_INT32, TKC_INT32, TKC_INT32, TKC_INT64, TKC_INT8, TKC_UINT8, TKC_INT16, TKC_UINT32};
  tkc_dtype sdt = dts[byte(&b->r) % (sizeof dts / sizeof *dts)];
  b->dt = tkc_dt_of(sdt);
  b->dlo = tkc_dtype_min(sdt), b->dhi = tkc_dtype_max(sdt);
  b->nvars = 1 + (int)(byte(&b->r) % MAXVARS);
  for (int i = 0; i < b->nvars; i++) {
    unsigned k = byte(&b->r);
    int64_t lo, hi;
    if (k & 128) { /* near the dtype's edges */
      int64_t edges[][2] = {{b->dlo, b->dhi}, {0, b->dhi}, {b->dhi - 10, b->dhi}, {b->dlo, b->dlo + 10}, {b->dlo / 2, b->dhi / 2}};
      lo = edges[k % 5][0], hi = edges[k % 5][1];
    } else {
      lo = clamp_dt(b, b->dlo < 0 ? (int64_t)(byte(&b->r) % 17) - 8 : (int64_t)(byte(&b->r) % 7));
      hi = clamp_dt(b, lo + (int64_t)(byte(&b->r) % (k & 64 ? 41 : 13)));
    }
    char name[16];
    snprintf(name, sizeof name, "v%d", i);
    if (sdt == TKC_INT32 && lo == 0 && hi < INT32_MAX && k % 4 == 1) b->vars[i] = tkc_uop_range(b->g, konst(b, 0), konst(b, hi + 1), i);
    else if (sdt == TKC_INT32 && lo == 0 && hi < INT32_MAX && k % 4 == 2) b->vars[i] = tkc_uop_special(b->g, name, hi + 1);
    else {
      tkc_arg t[3] = {tkc_arg_str(name), tkc_arg_int(lo), tkc_arg_int(hi)};
      b->vars[i] = tkc_uop_new(b->g, TKC_OP_DEFINE_VAR, b->dt, 0, NULL, tkc_arg_tuple(t, 3));
    }
    if (!b->vars[i]) return false;
    b->lo[i] = lo, b->hi[i] = hi;
  }
  return true;
}

/* ---------------------------------------------------------------- evaluating */

typedef struct env {
  const builder *b;
  int64_t val[MAXVARS];
  const tkc_uop *seen[4 * MAXNODES + 64];
  int64_t memo[4 * MAXNODES + 64];
  int nseen;
  bool bad;          /* an op the evaluator does not know */
  char why[256];
} env;

/* v wrapped to the int/bool dtype dt (two's complement), as int64 */
static int64_t wrap(tkc_dtype dt, uint64_t v) {
  if (dt == TKC_BOOL) return v != 0;
  tkc_value x = {.u = v};
  x = tkc_value_truncate(x, dt);
  return tkc_dtype_is_unsigned(dt) ? (int64_t)x.u : x.i;
}

static int64_t alu(env *e, const tkc_uop *u, const int64_t *s) {
  tkc_dtype dt = (tkc_dtype)u->dtype.scalar, in = u->nsrc ? (tkc_dtype)u->src[u->nsrc - 1]->dtype.scalar : dt;
  uint64_t x = (uint64_t)s[0], y = u->nsrc > 1 ? (uint64_t)s[1] : 0;
  switch (u->op) {
  case TKC_OP_ADD: return wrap(dt, x + y);
  case TKC_OP_SUB: return wrap(dt, x - y);
  case TKC_OP_MUL: return wrap(dt, x * y);
  case TKC_OP_NEG: return dt == TKC_BOOL ? !s[0] : wrap(dt, 0 - x);
  case TKC_OP_IDIV: return s[1] == 0 ? 0 : s[1] == -1 ? wrap(dt, 0 - x) : wrap(dt, (uint64_t)(s[0] / s[1]));
  case TKC_OP_MOD: return s[1] == 0 || s[1] == -1 ? 0 : s[0] % s[1];
  case TKC_OP_MAX: return s[0] > s[1] ? s[0] : s[1];
  case TKC_OP_CMPLT: return s[0] < s[1];
  case TKC_OP_CMPNE: return s[0] != s[1];
  case TKC_OP_WHERE: return s[0] ? s[1] : s[2];
  case TKC_OP_AND: return wrap(dt, x & y);
  case TKC_OP_OR: return wrap(dt, x | y);
  case TKC_OP_XOR: return wrap(dt, x ^ y);
  case TKC_OP_SHL: return s[1] < 0 || s[1] >= 64 ? 0 : wrap(dt, x << s[1]);
  case TKC_OP_SHR:
    if (s[1] < 0) return 0;
    if (s[1] >= 64) return tkc_dtype_is_unsigned(dt) || dt == TKC_BOOL || s[0] >= 0 ? 0 : -1;
    return tkc_dtype_is_unsigned(dt) ? (int64_t)(x >> s[1]) : wrap(dt, (uint64_t)(s[0] >> s[1]));
  case TKC_OP_CAST: return wrap(dt, x);
  default:
    (void)in;
    e->bad = true;
    snprintf(e->why, sizeof e->why, "the evaluator does not know %s", tkc_op_name((tkc_op)u->op));
    return 0;
  }
}

/* tkc_alu_eval on the same operands: the library's constant folder must agree with alu() */
static void cross_check(env *e, const tkc_uop *u, const int64_t *s, int64_t mine) {
  if (e->bad || u->op == TKC_OP_CAST) return;
  tkc_value src[3], out;
  tkc_dtype dt = (tkc_dtype)u->dtype.scalar, in = (tkc_dtype)u->src[u->nsrc > 1 ? 1 : 0]->dtype.scalar;
  for (int i = 0; i < u->nsrc; i++) {
    tkc_dtype sd = (tkc_dtype)u->src[i]->dtype.scalar;
    if (tkc_dtype_is_unsigned(sd)) src[i].u = (uint64_t)s[i];
    else src[i].i = s[i];
  }
  if (tkc_alu_eval((tkc_op)u->op, dt, in, src, u->nsrc, &out) != TKC_OK) return;
  int64_t theirs = tkc_dtype_is_unsigned(dt) ? (int64_t)out.u : out.i;
  if (theirs != mine) {
    e->bad = true;
    snprintf(e->why, sizeof e->why, "tkc_alu_eval(%s, %s) gives %" PRId64 ", the evaluator %" PRId64 " (operands %" PRId64 ", %" PRId64 ")", tkc_op_name((tkc_op)u->op),
             tkc_dtype_name(dt), theirs, mine, s[0], u->nsrc > 1 ? s[1] : 0);
  }
}

static int64_t eval(env *e, const tkc_uop *u) {
  for (int i = 0; i < e->nseen; i++)
    if (e->seen[i] == u) return e->memo[i];
  int64_t v;
  int vi = -1;
  for (int i = 0; i < e->b->nvars; i++)
    if (e->b->vars[i] == u) vi = i;
  if (vi >= 0) v = e->val[vi];
  else if (u->op == TKC_OP_CONST) v = u->arg.v.i;
  else {
    int64_t s[3] = {0, 0, 0};
    for (int i = 0; i < u->nsrc && i < 3; i++) s[i] = eval(e, u->src[i]);
    v = alu(e, u, s);
    cross_check(e, u, s, v);
  }
  if (e->nseen < (int)(sizeof e->seen / sizeof *e->seen)) e->seen[e->nseen] = u, e->memo[e->nseen++] = v;
  return v;
}

/* every node under root within its [vmin, vmax] at this assignment; else why */
static bool ranges_hold(env *e, const tkc_uop *root, const char *which) {
  size_t n;
  tkc_uop **order = tkc_toposort(root, &n);
  bool ok = order != NULL;
  for (size_t i = 0; ok && i < n; i++) {
    const tkc_uop *u = order[i];
    int64_t v = eval(e, u);
    if (v < u->vmin || v > u->vmax) {
      char *s = tkc_uop_expr_str(u);
      snprintf(e->why, sizeof e->why, "%s: %s = %" PRId64 " outside its range [%" PRId64 ", %" PRId64 "]", which, s ? s : "?", v, u->vmin, u->vmax);
      tkc_free(s);
      ok = false;
    }
  }
  tkc_free(order);
  return ok;
}

/* ---------------------------------------------------------------- one input */

static bool verbose;

static void print_failure(const builder *b, const tkc_uop *u, const tkc_uop *s, const env *e) {
  char *su = tkc_uop_expr_str(u), *ss = s ? tkc_uop_expr_str(s) : NULL;
  printf("FAIL (%s): %s\n  expression %s\n  simplified %s\n  at", tkc_dtype_name((tkc_dtype)b->dt.scalar), e->why, su ? su : "?", ss ? ss : "(none)");
  for (int i = 0; i < b->nvars; i++) printf(" v%d=%" PRId64 " in [%" PRId64 ", %" PRId64 "]", i, e->val[i], b->lo[i], b->hi[i]);
  printf("\n");
  tkc_free(su);
  tkc_free(ss);
}

/* 0 when s (u rewritten by the matcher called which) keeps u's values and ranges, and rewriting
 * s again gives s (a fixed point); 1 otherwise (printed) */
static int check_rewrite(const builder *bp, tkc_uop *u, const tkc_matcher *pm, const char *which, const uint8_t *data, size_t size) {
  env e = {.b = bp};
  const builder b = *bp;
  tkc_uop *s = tkc_graph_rewrite(b.g, u, pm, NULL);
  if (!s) {
    snprintf(e.why, sizeof e.why, "%s: the rewrite failed: %s", which, tkc_last_error());
    print_failure(&b, u, NULL, &e);
    return 1;
  }
  uint64_t h = 1469598103934665603ull; /* assignments: the corners, then values drawn from the input's hash */
  for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 1099511628211ull;
  for (int a = 0; a < 24; a++) {
    e.nseen = 0;
    for (int i = 0; i < b.nvars; i++) {
      h = h * 6364136223846793005ull + 1442695040888963407ull;
      uint64_t span = (uint64_t)b.hi[i] - (uint64_t)b.lo[i] + 1;
      e.val[i] = a < 4 ? ((a >> (i % 2)) & 1 ? b.hi[i] : b.lo[i]) : (int64_t)((uint64_t)b.lo[i] + (span ? (h >> 11) % span : h >> 11));
    }
    int64_t before = eval(&e, u), after = eval(&e, s);
    if (!e.bad && before != after) snprintf(e.why, sizeof e.why, "%s: value %" PRId64 " became %" PRId64, which, before, after), e.bad = true;
    if (!e.bad && (!ranges_hold(&e, u, "original") || !ranges_hold(&e, s, which))) e.bad = true;
    if (e.bad) return print_failure(&b, u, s, &e), 1;
  }
  tkc_uop *again = tkc_graph_rewrite(b.g, s, pm, NULL);
  if (again != s) {
    snprintf(e.why, sizeof e.why, "%s: not a fixed point: rewriting the result again changes it", which);
    return print_failure(&b, s, again, &e), 1;
  }
  if (verbose && pm == tkc_symbolic()) {
    char *su = tkc_uop_expr_str(u), *ss = tkc_uop_expr_str(s);
    printf("ok: %s -> %s\n", su, ss);
    tkc_free(su);
    tkc_free(ss);
  }
  return 0;
}

/* 0 when every symbolic rule set keeps the expression's values and ranges; 1 otherwise (printed) */
static int test_one(const uint8_t *data, size_t size) {
  builder b = {.r = {data, size, 0}};
  b.g = tkc_graph_new();
  if (!b.g) return 0;
  int bad = 0;
  if (!make_vars(&b)) goto done;
  tkc_uop *u = expr(&b, 2 + (int)(byte(&b.r) % 5));
  if (!u) goto done; /* e.g. a cast the graph refuses: not the simplifier's business */
  if (u->dtype.scalar == TKC_BOOL) u = tkc_uop_cast(b.g, u, b.dt);
  static const char *const names[] = {"symbolic", "symbolic_flat", "symbolic_simple"};
  const tkc_matcher *pms[] = {tkc_symbolic(), tkc_symbolic_flat(), tkc_symbolic_simple()};
  for (int m = 0; m < 3 && !bad; m++) bad = check_rewrite(&b, u, pms[m], names[m], data, size);
done:
  tkc_graph_free(b.g);
  return bad;
}

#ifdef FZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (test_one(data, size)) abort();
  return 0;
}
#else
/* 16..215 bytes of a 64-bit LCG, one stream across the inputs */
static size_t gen_bytes(uint64_t seed, long k, uint8_t *buf, size_t cap) {
  static uint64_t s;
  if (k == 0) s = seed;
  size_t n = 16 + (size_t)(k % 200);
  if (n > cap) n = cap;
  for (size_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    buf[i] = (uint8_t)(s >> 56);
  }
  return n;
}

int main(int argc, char **argv) { return fz_driver(argc, argv, "fuzz_symbolic", test_one, gen_bytes, &verbose); }
#endif
