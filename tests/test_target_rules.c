/* The target rules (src/codegen/target_rules.c): the graphs they leave (no unguarded IDIV/MOD, no
 * bfloat16 arithmetic or conversion, no vector ALU) and what those graphs compute, run on INTERP and
 * compared bit for bit with the kernel before the rules and with a C reference at the edge values
 * (divisors 0 and -1 with INT_MIN, bfloat16 NaN / inf / ties / overflow / subnormals). Also the
 * divisor predicates and the shared kernel-parameter order (src/render/render_util.c). */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "codegen/target_rules.h"
#include "kernel_util.h"
#include "render/render_util.h"

#define NE 64

static const unsigned ALL_FLAGS[] = {
    TKC_TARGET_GUARD_DIV_ZERO | TKC_TARGET_GUARD_DIV_MINUS1 | TKC_TARGET_BF16_BITS | TKC_TARGET_SCALAR_ALU, /* PTX */
    TKC_TARGET_GUARD_DIV_ZERO | TKC_TARGET_GUARD_DIV_MINUS1 | TKC_TARGET_BF16_BITS | TKC_TARGET_BF16_VIA_F64, /* LLVM */
    TKC_TARGET_GUARD_DIV_ZERO | TKC_TARGET_LANE_GEPS, /* WGSL (its own rule scalarizes) */
    TKC_TARGET_GUARD_DIV_ZERO | TKC_TARGET_GUARD_DIV_MINUS1 | TKC_TARGET_GUARD_SHIFT | TKC_TARGET_GUARD_FTOI | TKC_TARGET_LANE_GEPS, /* C */
    TKC_TARGET_GUARD_SHIFT | TKC_TARGET_GUARD_FTOI | TKC_TARGET_SCALAR_ALU, /* the guards on lanes */
};

/* what the rules of flags must have left in the graph under sink */
static void check_shape(tkc_uop *sink, unsigned flags) {
  size_t n = 0;
  tkc_uop **all = tkc_toposort(sink, &n);
  assert_non_null(all);
  for (size_t i = 0; i < n; i++) {
    const tkc_uop *u = all[i];
    bool alu = (tkc_op_flags((tkc_op)u->op) & TKC_F_ALU) != 0;
    if ((flags & TKC_TARGET_GUARD_DIV_ZERO) && (u->op == TKC_OP_IDIV || u->op == TKC_OP_MOD) && tkc_dt_is_int(u->dtype))
      assert_true(tkc_divisor_guarded(u->src[1], (flags & TKC_TARGET_GUARD_DIV_MINUS1) != 0));
    if ((flags & TKC_TARGET_GUARD_DIV_ZERO) && (u->op == TKC_OP_IDIV || u->op == TKC_OP_MOD)) assert_false(tkc_dt_is_bool(u->dtype));
    if (flags & TKC_TARGET_BF16_BITS) {
      if (alu && u->op != TKC_OP_WHERE) {
        assert_int_not_equal(u->dtype.scalar, TKC_BFLOAT16);
        for (int k = 0; k < u->nsrc; k++) assert_int_not_equal(u->src[k]->dtype.scalar, TKC_BFLOAT16);
      }
      if (u->op == TKC_OP_CAST && !u->dtype.space) assert_true((u->dtype.scalar == TKC_BFLOAT16) == (u->src[0]->dtype.scalar == TKC_BFLOAT16));
    }
    if ((flags & TKC_TARGET_GUARD_SHIFT) && (u->op == TKC_OP_SHL || u->op == TKC_OP_SHR) && tkc_dt_is_int(u->dtype))
      assert_true(tkc_shift_count_safe(u->src[1], 8 * (int)tkc_dtype_size((tkc_dtype)u->dtype.scalar)));
    if ((flags & TKC_TARGET_GUARD_FTOI) && u->op == TKC_OP_CAST && !u->dtype.space && tkc_dt_is_int(u->dtype) && tkc_dt_is_float(u->src[0]->dtype))
      assert_true(tkc_ftoi_clamped(u->src[0]));
    if ((flags & TKC_TARGET_SCALAR_ALU) && (alu || u->op == TKC_OP_CAST || u->op == TKC_OP_BITCAST) && !u->dtype.space)
      assert_int_equal(u->dtype.count, 1);
  }
  tkc_free(all);
}

/* runs sink on INTERP with copies of init; the results in out (malloc'ed arrays) */
static void run_interp(tkc_graph *g, tkc_uop *sink, int nbufs, const tkc_dtype *dts, const size_t *ns, void *const *init, void **out) {
  for (int i = 0; i < nbufs; i++) {
    size_t bytes = ns[i] * tkc_dtype_size(dts[i]);
    out[i] = malloc(bytes);
    assert_non_null(out[i]);
    memcpy(out[i], init[i], bytes);
  }
  tkc_status st = k_run("INTERP", g, sink, nbufs, dts, ns, out, NULL, 0);
  if (st) printf("INTERP: %s\n", tkc_last_error());
  assert_int_equal(st, TKC_OK);
}

/* For every flag set: the rules' graph has the shape they promise, rewriting it again changes
 * nothing, and INTERP computes the same bytes from it as from the kernel before (buffer 0 is the
 * output). Returns INTERP's output of the original kernel (malloc'ed) for reference checks. */
static void *check_rules(const char *what, tkc_graph *g, tkc_uop *sink, int nbufs, const tkc_dtype *dts, const size_t *ns, void *const *init) {
  void *want[4], *got[4];
  run_interp(g, sink, nbufs, dts, ns, init, want);
  for (size_t f = 0; f < TKC_COUNTOF(ALL_FLAGS); f++) {
    const tkc_matcher *pm = tkc_target_rules(ALL_FLAGS[f]);
    assert_non_null(pm);
    tkc_uop *rw = tkc_graph_rewrite(g, sink, pm, NULL);
    assert_non_null(rw);
    check_shape(rw, ALL_FLAGS[f]);
    assert_ptr_equal(tkc_graph_rewrite(g, rw, pm, NULL), rw); /* a fixed point: no rule fires twice */
    run_interp(g, rw, nbufs, dts, ns, init, got);
    size_t bytes = ns[0] * tkc_dtype_size(dts[0]);
    if (memcmp(want[0], got[0], bytes)) {
      for (size_t j = 0; j < ns[0]; j++) {
        size_t sz = tkc_dtype_size(dts[0]);
        if (memcmp((char *)want[0] + j * sz, (char *)got[0] + j * sz, sz)) {
          uint64_t a = 0, b = 0;
          memcpy(&a, (char *)want[0] + j * sz, sz);
          memcpy(&b, (char *)got[0] + j * sz, sz);
          printf("%s, flags 0x%x: element %zu is 0x%llx before the rules, 0x%llx after\n", what, ALL_FLAGS[f], j, (unsigned long long)a,
                 (unsigned long long)b);
          break;
        }
      }
      fail();
    }
    for (int i = 0; i < nbufs; i++) free(got[i]);
  }
  for (int i = 1; i < nbufs; i++) free(want[i]);
  return want[0];
}

/* out = op(a, b) elementwise over NE elements; the results of INTERP (checked against the rules) */
static void *binary(tkc_op op, tkc_dtype in, tkc_dtype out, const void *av, const void *bv) {
  tkc_graph *g = tkc_graph_new();
  tkc_uop *o = k_buf(g, 0, out), *a = k_buf(g, 1, in), *b = k_buf(g, 2, in), *r = k_range(g, NE, 0);
  tkc_uop *sink = k_sink1(g, k_store(g, o, r, tkc_uop_alu2(g, op, k_load(g, a, r), k_load(g, b, r))));
  void *zero = calloc(NE, 8);
  tkc_dtype dts[3] = {out, in, in};
  size_t ns[3] = {NE, NE, NE};
  void *init[3] = {zero, (void *)av, (void *)bv};
  char what[80];
  snprintf(what, sizeof what, "%s %s", tkc_op_name(op), tkc_dtype_name(in));
  void *res = check_rules(what, g, sink, 3, dts, ns, init);
  free(zero);
  tkc_graph_free(g);
  return res;
}

/* out = op(a) or (out)a elementwise */
static void *unary(tkc_op op, tkc_dtype in, tkc_dtype out, const void *av) {
  tkc_graph *g = tkc_graph_new();
  tkc_uop *o = k_buf(g, 0, out), *a = k_buf(g, 1, in), *r = k_range(g, NE, 0), *x = k_load(g, a, r);
  tkc_uop *v = op == TKC_OP_CAST ? tkc_uop_cast(g, x, dt_(out)) : op == TKC_OP_BITCAST ? tkc_uop_bitcast(g, x, dt_(out)) : tkc_uop_alu1(g, op, x);
  void *zero = calloc(NE, 8);
  tkc_dtype dts[2] = {out, in};
  size_t ns[2] = {NE, NE};
  void *init[2] = {zero, (void *)av};
  char what[80];
  snprintf(what, sizeof what, "%s %s->%s", tkc_op_name(op), tkc_dtype_name(in), tkc_dtype_name(out));
  void *res = check_rules(what, g, k_sink1(g, k_store(g, o, r, v)), 2, dts, ns, init);
  free(zero);
  tkc_graph_free(g);
  return res;
}

/* ---------------------------------------------------------------- IDIV / MOD */

/* C references: x / 0 = x % 0 = 0, truncation toward zero, INT_MIN / -1 wraps, INT_MIN % -1 = 0 */
static int64_t ref_idiv(int64_t a, int64_t b, int64_t min) { return b == 0 ? 0 : b == -1 ? (a == min ? min : -a) : a / b; }
static int64_t ref_mod(int64_t a, int64_t b) { return b == 0 || b == -1 ? 0 : a % b; }

static void test_divmod_edges(void **state) {
  (void)state;
  int32_t a32[NE], b32[NE];
  int8_t a8[NE], b8[NE];
  uint32_t ua[NE], ub[NE];
  uint64_t ua64[NE], ub64[NE];
  uint8_t ba[NE], bb[NE];
  for (int i = 0; i < NE; i++) {
    a32[i] = i % 3 == 0 ? INT32_MIN : i % 3 == 1 ? INT32_MAX - i : i * 7919 - 50000;
    b32[i] = i % 4 == 0 ? 0 : i % 4 == 1 ? -1 : i - 12;
    a8[i] = (int8_t)(i % 3 == 0 ? -128 : i * 11 - 100);
    b8[i] = (int8_t)(i % 4 == 0 ? 0 : i % 4 == 1 ? -1 : i - 12);
    ua[i] = (uint32_t)i * 2654435761u;
    ub[i] = i % 3 == 0 ? 0 : i % 3 == 1 ? UINT32_MAX : (uint32_t)i;
    ua64[i] = (uint64_t)i * 0x9E3779B97F4A7C15ull;
    ub64[i] = i % 3 == 0 ? 0 : i % 3 == 1 ? UINT64_MAX : (uint64_t)i;
    ba[i] = (uint8_t)(i & 1);
    bb[i] = (uint8_t)((i >> 1) & 1);
  }
  for (int op = 0; op < 2; op++) {
    tkc_op o = op ? TKC_OP_MOD : TKC_OP_IDIV;
    int32_t *r32 = binary(o, TKC_INT32, TKC_INT32, a32, b32);
    int8_t *r8 = binary(o, TKC_INT8, TKC_INT8, a8, b8);
    uint32_t *ru = binary(o, TKC_UINT32, TKC_UINT32, ua, ub);
    uint64_t *ru64 = binary(o, TKC_UINT64, TKC_UINT64, ua64, ub64);
    uint8_t *rb = binary(o, TKC_BOOL, TKC_BOOL, ba, bb);
    for (int i = 0; i < NE; i++) {
      assert_int_equal(r32[i], (int32_t)(op ? ref_mod(a32[i], b32[i]) : ref_idiv(a32[i], b32[i], INT32_MIN)));
      assert_int_equal(r8[i], (int8_t)(op ? ref_mod(a8[i], b8[i]) : ref_idiv(a8[i], b8[i], INT8_MIN)));
      assert_int_equal(ru[i], ub[i] ? (op ? ua[i] % ub[i] : ua[i] / ub[i]) : 0);
      assert_true(ru64[i] == (ub64[i] ? (op ? ua64[i] % ub64[i] : ua64[i] / ub64[i]) : 0));
      assert_int_equal(rb[i], op ? 0 : (ba[i] & bb[i]));
    }
    free(r32), free(r8), free(ru), free(ru64), free(rb);
  }
}

/* a constant or range-proven divisor is left alone; -1 only where the target guards it */
static void test_divmod_safe_divisors(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_dt i32 = dt_(TKC_INT32), u32 = dt_(TKC_UINT32), u64 = dt_(TKC_UINT64);
  tkc_uop *x = tkc_uop_var(g, "x", -100, 100), *pos = tkc_uop_var(g, "p", 1, 9), *neg = tkc_uop_var(g, "q", -9, -1);
  assert_true(tkc_divisor_safe(tkc_uop_const_int(g, i32, 3)));
  assert_false(tkc_divisor_safe(tkc_uop_const_int(g, i32, 0)));
  assert_false(tkc_divisor_safe(tkc_uop_const_int(g, i32, -1)));
  assert_true(tkc_divisor_nonzero(tkc_uop_const_int(g, i32, -1)));
  assert_true(tkc_divisor_safe(tkc_uop_const_int(g, u32, 0xffffffff))); /* unsigned: no -1 */
  assert_true(tkc_divisor_safe(pos));
  assert_false(tkc_divisor_safe(neg)); /* may be -1 */
  assert_true(tkc_divisor_nonzero(neg));
  assert_false(tkc_divisor_nonzero(x));
  assert_false(tkc_divisor_nonzero(tkc_uop_cast(g, pos, u64))); /* uint64 ranges are not trusted */
  assert_false(tkc_divisor_nonzero(tkc_uop_const_int(g, tkc_dt_vec(i32, 2), 3)));

  const tkc_matcher *both = tkc_target_rules(TKC_TARGET_GUARD_DIV_ZERO | TKC_TARGET_GUARD_DIV_MINUS1);
  const tkc_matcher *zero = tkc_target_rules(TKC_TARGET_GUARD_DIV_ZERO);
  assert_non_null(both);
  assert_non_null(zero);
  tkc_uop *safe = tkc_uop_alu2(g, TKC_OP_IDIV, x, pos);
  assert_ptr_equal(tkc_graph_rewrite(g, safe, both, NULL), safe);
  tkc_uop *m1 = tkc_uop_alu2(g, TKC_OP_IDIV, x, neg);
  assert_ptr_equal(tkc_graph_rewrite(g, m1, zero, NULL), m1);       /* nonzero is enough there */
  tkc_uop *guarded = tkc_graph_rewrite(g, m1, both, NULL);
  assert_ptr_not_equal(guarded, m1);
  assert_int_equal(guarded->op, TKC_OP_WHERE);
  /* no flags: an empty matcher; unknown flags are refused */
  assert_non_null(tkc_target_rules(0));
  assert_int_equal(tkc_matcher_size(tkc_target_rules(0)), 0);
  assert_null(tkc_target_rules(1u << TKC_TARGET_NFLAGS));
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  tkc_graph_free(g);
}

/* ---------------------------------------------------------------- shifts */

/* INTERP's shift (Python's, truncated to bits): a count >= bits leaves 0 or the sign fill, a negative one 0 */
static int64_t ref_shift(bool left, int64_t a, int64_t n, int bits, bool sign) {
  if (n < 0) return 0;
  if (left) return n >= bits ? 0 : (int64_t)((uint64_t)a << n);
  if (n >= bits) return sign && a < 0 ? -1 : 0;
  return sign ? a >> n : (int64_t)((uint64_t)a >> n);
}

static void test_shift_edges(void **state) {
  (void)state;
  int32_t a32[NE], n32[NE];
  int8_t a8[NE], n8[NE];
  uint32_t ua[NE], un[NE];
  int64_t a64[NE], n64[NE];
  static const int counts[] = {0, 1, 7, 8, 9, 15, 16, 31, 32, 33, 63, 64, 65, 200, -1, -32, -64, -200};
  for (int i = 0; i < NE; i++) {
    int c = counts[i % TKC_COUNTOF(counts)];
    a32[i] = i % 2 ? -1234567 - i : 0x12345 + i, n32[i] = c;
    a8[i] = (int8_t)(i % 2 ? -100 + i : 3 + i), n8[i] = (int8_t)(c > 127 ? 127 : c < -128 ? -128 : c);
    ua[i] = 0x80000001u + (uint32_t)i, un[i] = (uint32_t)c;
    a64[i] = i % 2 ? -(int64_t)0x123456789ll - i : 0x123456789ll + i, n64[i] = c;
  }
  for (int left = 0; left < 2; left++) {
    tkc_op o = left ? TKC_OP_SHL : TKC_OP_SHR;
    int32_t *r32 = binary(o, TKC_INT32, TKC_INT32, a32, n32);
    int8_t *r8 = binary(o, TKC_INT8, TKC_INT8, a8, n8);
    uint32_t *ru = binary(o, TKC_UINT32, TKC_UINT32, ua, un);
    int64_t *r64 = binary(o, TKC_INT64, TKC_INT64, a64, n64);
    for (int i = 0; i < NE; i++) {
      assert_int_equal(r32[i], (int32_t)ref_shift(left, a32[i], n32[i], 32, true));
      assert_int_equal(r8[i], (int8_t)ref_shift(left, a8[i], n8[i], 8, true));
      assert_int_equal(ru[i], (uint32_t)ref_shift(left, ua[i], un[i], 32, false)); /* counts as unsigned: huge, not negative */
      assert_true(r64[i] == ref_shift(left, a64[i], n64[i], 64, true));
    }
    free(r32), free(r8), free(ru), free(r64);
  }
}

/* ---------------------------------------------------------------- float -> int */

/* tkc_value_cast's float -> int: truncate toward zero, saturate, NaN -> 0 */
static int64_t ref_ftoi(double x, int64_t lo, int64_t hi) {
  if (x != x) return 0;
  if (x <= (double)lo) return lo;
  if (x >= (double)hi) return hi; /* (double)INT64_MAX is 2^63: saturates */
  return (int64_t)x;
}

static void test_ftoi_edges(void **state) {
  (void)state;
  static const double special[] = {0.0, -0.0, 0.5, -0.5, -0.99, -1.0, 1.99, 127.5, 128.0, -128.5, -129.0, 255.9, 256.0, 32767.5, 32768.0,
                                   -32769.0, 2147483520.0, 2147483648.0, -2147483648.0, -2147483904.0, 4294967040.0, 4294967296.0,
                                   9.2233720368547748e18, -9.2233720368547758e18, 1.8446744073709552e19, 1e30, -1e30, 65504.0};
  float f[NE];
  double d[NE];
  for (int i = 0; i < NE; i++) {
    int k = i % (int)(TKC_COUNTOF(special) + 4);
    d[i] = k < (int)TKC_COUNTOF(special) ? special[k] : k == (int)TKC_COUNTOF(special) ? NAN : k == (int)TKC_COUNTOF(special) + 1 ? INFINITY
         : k == (int)TKC_COUNTOF(special) + 2 ? -INFINITY : -NAN;
    f[i] = (float)d[i];
  }
  static const struct { tkc_dtype dt; int64_t lo, hi; } to[] = {
      {TKC_INT8, INT8_MIN, INT8_MAX}, {TKC_UINT8, 0, UINT8_MAX}, {TKC_INT16, INT16_MIN, INT16_MAX}, {TKC_INT32, INT32_MIN, INT32_MAX},
      {TKC_UINT32, 0, UINT32_MAX}, {TKC_INT64, INT64_MIN, INT64_MAX},
  };
  for (size_t t = 0; t < TKC_COUNTOF(to); t++) {
    for (int src = 0; src < 2; src++) {
      void *r = unary(TKC_OP_CAST, src ? TKC_FLOAT64 : TKC_FLOAT32, to[t].dt, src ? (void *)d : (void *)f);
      size_t sz = tkc_dtype_size(to[t].dt);
      for (int i = 0; i < NE; i++) {
        int64_t got = 0, want = ref_ftoi(src ? d[i] : (double)f[i], to[t].lo, to[t].hi);
        memcpy(&got, (char *)r + (size_t)i * sz, sz);
        if (sz < 8 && to[t].lo < 0 && (got >> (sz * 8 - 1)) & 1) got |= (int64_t)(~0ull << (sz * 8)); /* sign-extend */
        if (got != want) printf("%s -> %s: %.17g gives %lld, want %lld\n", src ? "float64" : "float32", tkc_dtype_name(to[t].dt), src ? d[i] : (double)f[i], (long long)got, (long long)want);
        assert_true(got == want);
      }
      free(r);
    }
  }
  /* uint64 (whose top half a signed reference cannot hold) */
  uint64_t *r = unary(TKC_OP_CAST, TKC_FLOAT64, TKC_UINT64, d);
  for (int i = 0; i < NE; i++) {
    double x = d[i];
    uint64_t want = x != x || x <= 0 ? 0 : x >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)x;
    assert_true(r[i] == want);
  }
  free(r);
}

/* ---------------------------------------------------------------- bfloat16 */

static float fbits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* float32 values around the bfloat16 rounding edges */
static void edge_floats(float *f) {
  static const uint32_t special[] = {
      0x3f808000, /* a tie between 1.0 and the next bf16: to even (1.0) */
      0x3f818000, /* a tie to even upward */
      0x3f808001, /* just above a tie */
      0x7f7fffff, /* FLT_MAX: rounds to inf */
      0x7f7f8000, /* a tie at bf16's max: to inf */
      0x7f800000, 0xff800000, /* +-inf */
      0x7fc00000, 0xffc00001, /* quiet NaNs */
      0x7f800001, /* a signaling NaN: stays a NaN, made quiet */
      0x00000001, 0x80008000, /* subnormals */
      0x00000000, 0x80000000, /* +-0 */
  };
  for (int i = 0; i < NE; i++)
    f[i] = i < (int)TKC_COUNTOF(special) ? fbits(special[i]) : (float)((i - 30) * 1.37e3) * (i % 2 ? 1e-3f : 1e3f);
}

static void test_bf16_casts(void **state) {
  (void)state;
  float f[NE];
  double d[NE];
  int32_t iv[NE];
  uint16_t h[NE], bits[NE];
  edge_floats(f);
  for (int i = 0; i < NE; i++) {
    d[i] = (double)f[i] * (1.0 + 0x1p-30); /* one rounding to float first, then to bf16 */
    iv[i] = i * 104729 - 3000000;
    h[i] = (uint16_t)(0x3c00 + i * 977);
    bits[i] = k_bf16_bits(f[i]);
  }
  uint16_t *r = unary(TKC_OP_CAST, TKC_FLOAT32, TKC_BFLOAT16, f);
  for (int i = 0; i < NE; i++) assert_int_equal(r[i], k_bf16_bits(f[i]));
  free(r);
  r = unary(TKC_OP_CAST, TKC_FLOAT64, TKC_BFLOAT16, d);
  for (int i = 0; i < NE; i++) assert_int_equal(r[i], k_bf16_bits((float)d[i]));
  free(r);
  r = unary(TKC_OP_CAST, TKC_INT32, TKC_BFLOAT16, iv);
  for (int i = 0; i < NE; i++) assert_int_equal(r[i], k_bf16_bits((float)iv[i]));
  free(r);
  free(unary(TKC_OP_CAST, TKC_FLOAT16, TKC_BFLOAT16, h));
  float *back = unary(TKC_OP_CAST, TKC_BFLOAT16, TKC_FLOAT32, bits);
  for (int i = 0; i < NE; i++) {
    uint32_t u;
    memcpy(&u, &back[i], 4);
    assert_int_equal(u, (uint32_t)bits[i] << 16);
  }
  free(back);
  free(unary(TKC_OP_CAST, TKC_BFLOAT16, TKC_INT32, bits));
  free(unary(TKC_OP_CAST, TKC_BFLOAT16, TKC_BOOL, bits));
  free(unary(TKC_OP_CAST, TKC_BFLOAT16, TKC_FLOAT64, bits));
  free(unary(TKC_OP_BITCAST, TKC_BFLOAT16, TKC_INT16, bits));
  free(unary(TKC_OP_BITCAST, TKC_INT16, TKC_BFLOAT16, bits));
}

static void test_bf16_arithmetic(void **state) {
  (void)state;
  float f[NE];
  uint16_t a[NE], b[NE];
  edge_floats(f);
  for (int i = 0; i < NE; i++) {
    a[i] = k_bf16_bits(f[i]);
    b[i] = k_bf16_bits(f[(i * 7 + 3) % NE]);
  }
  const tkc_op ops[] = {TKC_OP_ADD, TKC_OP_SUB, TKC_OP_MUL, TKC_OP_FDIV, TKC_OP_MAX};
  for (size_t k = 0; k < TKC_COUNTOF(ops); k++) {
    uint16_t *r = binary(ops[k], TKC_BFLOAT16, TKC_BFLOAT16, a, b);
    for (int i = 0; i < NE && ops[k] == TKC_OP_ADD; i++) /* in float32, then rounded: the C reference */
      assert_int_equal(r[i], k_bf16_bits((float)ref_bf16_value(a[i]) + (float)ref_bf16_value(b[i])));
    free(r);
  }
  free(binary(TKC_OP_CMPLT, TKC_BFLOAT16, TKC_BOOL, a, b));
  free(binary(TKC_OP_CMPNE, TKC_BFLOAT16, TKC_BOOL, a, b));
  free(unary(TKC_OP_SQRT, TKC_BFLOAT16, TKC_BFLOAT16, a));
  free(unary(TKC_OP_RECIP, TKC_BFLOAT16, TKC_BFLOAT16, a));
  uint16_t *neg = unary(TKC_OP_NEG, TKC_BFLOAT16, TKC_BFLOAT16, b);
  for (int i = 0; i < NE; i++)
    if (!isnan(ref_bf16_value(b[i]))) assert_int_equal(neg[i], b[i] ^ 0x8000);
  free(neg);
  /* MULACC: one float32 fma, then rounded */
  tkc_graph *g = tkc_graph_new();
  tkc_uop *o = k_buf(g, 0, TKC_BFLOAT16), *x = k_buf(g, 1, TKC_BFLOAT16), *y = k_buf(g, 2, TKC_BFLOAT16), *r = k_range(g, NE, 0);
  tkc_uop *lx = k_load(g, x, r), *ly = k_load(g, y, r);
  tkc_uop *sink = k_sink1(g, k_store(g, o, r, tkc_uop_alu3(g, TKC_OP_MULACC, lx, ly, lx)));
  void *zero = calloc(NE, 2);
  tkc_dtype dts[3] = {TKC_BFLOAT16, TKC_BFLOAT16, TKC_BFLOAT16};
  size_t ns[3] = {NE, NE, NE};
  void *init[3] = {zero, a, b};
  free(check_rules("MULACC bfloat16", g, sink, 3, dts, ns, init));
  free(zero);
  tkc_graph_free(g);
}

/* ---------------------------------------------------------------- vectors */

/* out4 = a4 * b4 + a4 and (float)(a4 < b4) on float4 loads: devectorized where the target wants */
static void test_vector_alu(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_dt f4 = tkc_dt_vec(dt_(TKC_FLOAT32), 4), f4p = tkc_dt_ptr(f4, TKC_SPACE_GLOBAL, -1);
  tkc_uop *out = k_buf(g, 0, TKC_FLOAT32), *a = k_buf(g, 1, TKC_FLOAT32), *b = k_buf(g, 2, TKC_FLOAT32), *r = k_range(g, NE / 4, 0);
  tkc_uop *base = k_mul(g, r, k_int(g, 4));
  tkc_uop *va = k_op(g, TKC_OP_LOAD, f4, 1, k_op(g, TKC_OP_CAST, f4p, 1, k_index(g, a, base), NULL, NULL), NULL, NULL);
  tkc_uop *vb = k_op(g, TKC_OP_LOAD, f4, 1, k_op(g, TKC_OP_CAST, f4p, 1, k_index(g, b, base), NULL, NULL), NULL, NULL);
  tkc_uop *lt = tkc_uop_cast(g, tkc_uop_alu2(g, TKC_OP_CMPLT, va, vb), f4);
  tkc_uop *v = k_add(g, k_add(g, k_mul(g, va, vb), va), lt);
  tkc_uop *sink = k_sink1(g, k_op(g, TKC_OP_STORE, dt_(TKC_VOID), 2, k_op(g, TKC_OP_CAST, f4p, 1, k_index(g, out, base), NULL, NULL), v, NULL));
  float fa[NE], fb[NE], zero[NE] = {0};
  for (int i = 0; i < NE; i++) fa[i] = (float)i * 0.5f - 7.0f, fb[i] = (float)(NE - i) * 0.25f;
  tkc_dtype dts[3] = {TKC_FLOAT32, TKC_FLOAT32, TKC_FLOAT32};
  size_t ns[3] = {NE, NE, NE};
  void *init[3] = {zero, fa, fb};
  float *res = check_rules("float4 ALU", g, sink, 3, dts, ns, init);
  for (int i = 0; i < NE; i++) assert_true(res[i] == fa[i] * fb[i] + fa[i] + (fa[i] < fb[i] ? 1.0f : 0.0f));
  free(res);
  tkc_graph_free(g);
}

/* a renderer's own rule that scalarizes only some vector ops (here: all but ADD and MUL), as C's
 * and WGSL's do with their predicates */
static tkc_uop *some_lanes(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)ctx;
  const tkc_uop *u = tkc_match_root(m);
  return u->op == TKC_OP_ADD || u->op == TKC_OP_MUL ? NULL : tkc_target_scalarize(g, u);
}

/* the float4 kernel of test_vector_alu through tkc_target_matcher with such a rule and LANE_GEPS:
 * ADD and MUL stay vectors, CMPLT and CAST become lanes, no GEP of a VECTORIZE is left, INTERP
 * computes the same; tkc_target_scalarize leaves scalars alone */
static void test_partial_scalarize(void **state) {
  (void)state;
  static const tkc_rule own_rules[] = {{"x:ALU|CAST|BITCAST", some_lanes}};
  static tkc_matcher *_Atomic slot;
  tkc_matcher *own = tkc_matcher_new(own_rules, 1);
  assert_non_null(own);
  const tkc_matcher *pm = tkc_target_matcher(&slot, own, TKC_TARGET_LANE_GEPS);
  assert_non_null(pm);
  tkc_graph *g = tkc_graph_new();
  tkc_dt f4 = tkc_dt_vec(dt_(TKC_FLOAT32), 4), f4p = tkc_dt_ptr(f4, TKC_SPACE_GLOBAL, -1);
  tkc_uop *out = k_buf(g, 0, TKC_FLOAT32), *a = k_buf(g, 1, TKC_FLOAT32), *b = k_buf(g, 2, TKC_FLOAT32), *r = k_range(g, NE / 4, 0);
  tkc_uop *base = k_mul(g, r, k_int(g, 4));
  assert_null(tkc_target_scalarize(g, base)); /* a scalar */
  tkc_uop *va = k_op(g, TKC_OP_LOAD, f4, 1, k_op(g, TKC_OP_CAST, f4p, 1, k_index(g, a, base), NULL, NULL), NULL, NULL);
  tkc_uop *vb = k_op(g, TKC_OP_LOAD, f4, 1, k_op(g, TKC_OP_CAST, f4p, 1, k_index(g, b, base), NULL, NULL), NULL, NULL);
  tkc_uop *v = k_add(g, k_mul(g, va, vb), tkc_uop_cast(g, tkc_uop_alu2(g, TKC_OP_CMPLT, va, vb), f4));
  tkc_uop *sink = k_sink1(g, k_op(g, TKC_OP_STORE, dt_(TKC_VOID), 2, k_op(g, TKC_OP_CAST, f4p, 1, k_index(g, out, base), NULL, NULL), v, NULL));
  tkc_uop *rw = tkc_graph_rewrite(g, sink, pm, NULL);
  assert_non_null(rw);
  size_t n = 0;
  tkc_uop **all = tkc_toposort(rw, &n);
  assert_non_null(all);
  int vec_arith = 0;
  for (size_t i = 0; i < n; i++) {
    const tkc_uop *u = all[i];
    if (u->op == TKC_OP_CMPLT || (u->op == TKC_OP_CAST && !u->dtype.space)) assert_int_equal(u->dtype.count, 1);
    if ((u->op == TKC_OP_ADD || u->op == TKC_OP_MUL) && u->dtype.count == 4) vec_arith++;
    if (u->op == TKC_OP_GEP) assert_int_not_equal(u->src[0]->op, TKC_OP_VECTORIZE);
  }
  tkc_free(all);
  assert_int_equal(vec_arith, 2);
  float fa[NE], fb[NE], zero[NE] = {0};
  for (int i = 0; i < NE; i++) fa[i] = (float)i * 0.5f - 7.0f, fb[i] = (float)(NE - i) * 0.25f;
  tkc_dtype dts[3] = {TKC_FLOAT32, TKC_FLOAT32, TKC_FLOAT32};
  size_t ns[3] = {NE, NE, NE};
  void *init[3] = {zero, fa, fb}, *got[3];
  run_interp(g, rw, 3, dts, ns, init, got);
  for (int i = 0; i < NE; i++) assert_true(((float *)got[0])[i] == fa[i] * fb[i] + (fa[i] < fb[i] ? 1.0f : 0.0f));
  for (int i = 0; i < 3; i++) free(got[i]);
  tkc_graph_free(g);
  tkc_matcher_free(own);
  tkc_matcher_free(atomic_exchange(&slot, NULL)); /* the concatenation is the caller's slot */
}

/* ---------------------------------------------------------------- kernel parameters */

static void test_param_order(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *u[6] = {k_buf(g, 3, TKC_FLOAT32), tkc_uop_var(g, "zeta", 0, 9), k_buf(g, 0, TKC_INT32), tkc_uop_var(g, "alpha", 0, 9),
                   NULL, NULL};
  u[4] = u[0]; /* listed twice: counted once */
  u[5] = tkc_uop_var(g, "mid", 0, 9);
  tkc_render_params p;
  assert_int_equal(tkc_render_params_collect("T", u, 6, &p), TKC_OK);
  assert_int_equal(p.nbufs, 2);
  assert_int_equal(p.bufs[0], 0);
  assert_int_equal(p.bufs[1], 3);
  assert_int_equal(p.nvars, 3);
  assert_string_equal(tkc_render_var_name(p.vars[0]), "alpha");
  assert_string_equal(tkc_render_var_name(p.vars[1]), "mid");
  assert_string_equal(tkc_render_var_name(p.vars[2]), "zeta");
  assert_int_equal(tkc_render_params_var(&p, u[1]), 2);
  assert_int_equal(tkc_render_params_var(&p, u[0]), -1);
  tkc_render_params_free(&p);
  /* the comparator sorts plain arrays of DEFINE_VARs the same way (program.c, wgsl.c) */
  tkc_uop *vars[3] = {u[1], u[5], u[3]};
  qsort(vars, 3, sizeof *vars, tkc_render_var_order);
  assert_ptr_equal(vars[0], u[3]);
  assert_ptr_equal(vars[2], u[1]);
  /* two buffers with one number */
  tkc_uop *dup[2] = {k_buf(g, 1, TKC_FLOAT32), k_buf(g, 1, TKC_INT32)};
  assert_int_equal(tkc_render_params_collect("T", dup, 2, &p), TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "T renderer: two DEFINE_GLOBALs with arg 1"));
  assert_null(p.bufs);
  tkc_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_divmod_edges),   cmocka_unit_test(test_divmod_safe_divisors), cmocka_unit_test(test_bf16_casts),
      cmocka_unit_test(test_bf16_arithmetic), cmocka_unit_test(test_vector_alu),
      cmocka_unit_test(test_partial_scalarize),          cmocka_unit_test(test_param_order),
      cmocka_unit_test(test_shift_edges),                cmocka_unit_test(test_ftoi_edges),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
