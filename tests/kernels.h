/* The hand-built kernel suite: lowered kernels (as tinygrad's lowerer makes them) built by plain
 * functions, shared by
 *   test_kernels.c  every kernel on every available device, against plain C reference loops;
 *   test_ptx.c      every kernel rendered to PTX and assembled with ptxas (sm_75/80/90);
 *   test_cuda.c     every kernel on the CUDA device, against INTERP on the same inputs.
 * Besides the kernels of test_kernels.c (kb_* builders), kb_case() enumerates the whole suite with
 * the buffers each kernel takes and how to fill them: the base kernels, their GPU-style variants
 * (the outer loop replaced by the launch index gidx0, or by gidx0*L + lidx0) and kernels only a GPU
 * backend runs (shared memory + barrier, tensor cores), each with a host reference when INTERP cannot
 * run it. Header-only; every function is static inline so a suite may use any subset. */
#ifndef TKC_TEST_KERNELS_H
#define TKC_TEST_KERNELS_H

#include <stdbool.h>
#include <stdio.h>
#include "kernel_util.h"

/* ---------------------------------------------------------------- the kernels of test_kernels.c */

/* out[i] = op(a[i], b[i]) over n elements: buffers out (0), a (1), b (2) */
static inline tkc_uop *kb_elementwise2(tkc_graph *g, tkc_op op, tkc_dtype dt, tkc_dtype out_dt, int n) {
  tkc_uop *out = k_buf(g, 0, out_dt), *a = k_buf(g, 1, dt), *b = k_buf(g, 2, dt);
  tkc_uop *r = k_range(g, n, 0);
  return k_sink1(g, k_store(g, out, r, tkc_uop_alu2(g, op, k_load(g, a, r), k_load(g, b, r))));
}

/* out_t[i] = (t)in[i] for every dtype t not in the bitmask drop, into buffers 0.. in dtype order;
 * the input is the buffer after them */
static inline tkc_uop *kb_cast_all(tkc_graph *g, tkc_dtype src, int64_t n, uint32_t drop) {
  int nb = 0;
  for (int t = 0; t < TKC_VOID; t++) nb += !((drop >> t) & 1u);
  tkc_uop *inb = k_buf(g, nb, src), *r = k_range(g, n, 0), *stores[TKC_VOID];
  tkc_uop *v = k_load(g, inb, r);
  for (int t = 0, b = 0; t < TKC_VOID; t++) {
    if ((drop >> t) & 1u) continue;
    stores[b] = k_store(g, k_buf(g, b, (tkc_dtype)t), r, tkc_uop_cast(g, v, dt_((tkc_dtype)t)));
    b++;
  }
  return tkc_uop_sink(g, nb, stores);
}

/* out[i] = bitcast<to>(a[i]): out (0), a (1) */
static inline tkc_uop *kb_bitcast(tkc_graph *g, tkc_dtype from, tkc_dtype to, int64_t n) {
  tkc_uop *out = k_buf(g, 0, to), *a = k_buf(g, 1, from), *r = k_range(g, n, 0);
  return k_sink1(g, k_store(g, out, r, tkc_uop_bitcast(g, k_load(g, a, r), dt_(to))));
}

/* out[i] = reduce_k op(acc, a[i*cols+k]) with acc starting at init: out (0), a (1) */
static inline tkc_uop *kb_reduce_rows(tkc_graph *g, tkc_op op, tkc_dtype dt, int rows, int cols, tkc_uop *init) {
  tkc_uop *out = k_buf(g, 0, dt), *a = k_buf(g, 1, dt);
  tkc_uop *ri = k_range(g, rows, 0), *rk = k_range(g, cols, 1);
  tkc_uop *acc = k_op(g, TKC_OP_DEFINE_ACC, dt_(dt), 2, init, rk, NULL);
  tkc_uop *x = k_load(g, a, k_add(g, k_mul(g, ri, k_int(g, cols)), rk));
  tkc_uop *upd = k_op(g, TKC_OP_ASSIGN, dt_(dt), 2, acc, tkc_uop_alu2(g, op, acc, x), NULL);
  return k_sink1(g, k_store(g, out, ri, upd));
}

static inline tkc_uop *kb_reduce_init(tkc_graph *g, tkc_dtype dt, double init) {
  return tkc_dtype_is_float(dt) ? tkc_uop_const_float(g, dt_(dt), init) : tkc_uop_const_int(g, dt_(dt), (int64_t)init);
}

/* out[j*R+i] = in[i*C+j] (float32): out (0), in (1) */
static inline tkc_uop *kb_transpose(tkc_graph *g, int R, int C) {
  tkc_uop *out = k_buf(g, 0, TKC_FLOAT32), *in = k_buf(g, 1, TKC_FLOAT32);
  tkc_uop *ri = k_range(g, R, 0), *rj = k_range(g, C, 1);
  return k_sink1(g, k_store(g, out, k_add(g, k_mul(g, rj, k_int(g, R)), ri), k_load(g, in, k_add(g, k_mul(g, ri, k_int(g, C)), rj))));
}

/* out[idx] = in[idx]*2 + 1 (float64) over three nested loops: out (0), in (1) */
static inline tkc_uop *kb_three_level(tkc_graph *g, int B, int R, int C) {
  tkc_uop *out = k_buf(g, 0, TKC_FLOAT64), *in = k_buf(g, 1, TKC_FLOAT64);
  tkc_uop *rb = k_range(g, B, 0), *ri = k_range(g, R, 1), *rj = k_range(g, C, 2);
  tkc_uop *idx = k_add(g, k_add(g, k_mul(g, rb, k_int(g, R * C)), k_mul(g, ri, k_int(g, C))), rj);
  tkc_uop *v = k_add(g, k_mul(g, k_load(g, in, idx), tkc_uop_const_float(g, dt_(TKC_FLOAT64), 2.0)), tkc_uop_const_float(g, dt_(TKC_FLOAT64), 1.0));
  return k_sink1(g, k_store(g, out, idx, v));
}

/* out[i] = i >= 3 ? a[i-3] : 0 over n+3 elements, a masked INDEX (a pad by 3): out (0), a (1) */
static inline tkc_uop *kb_gated_load_pad(tkc_graph *g, int n) {
  tkc_uop *out = k_buf(g, 0, TKC_FLOAT32), *in = k_buf(g, 1, TKC_FLOAT32), *r = k_range(g, n + 3, 0);
  tkc_uop *gate = tkc_uop_alu2(g, TKC_OP_CMPNE, tkc_uop_alu2(g, TKC_OP_CMPLT, r, k_int(g, 3)), tkc_uop_const_int(g, dt_(TKC_BOOL), 1));
  tkc_uop *ld = k_op(g, TKC_OP_LOAD, dt_(TKC_FLOAT32), 1, k_index_gated(g, in, k_add(g, r, k_int(g, -3)), gate), NULL, NULL);
  return k_sink1(g, k_store(g, out, r, ld));
}

/* out[i] = a[i] where 0 < a[i] (int32), a masked store: out (0), a (1) */
static inline tkc_uop *kb_gated_store(tkc_graph *g, int n) {
  tkc_uop *out = k_buf(g, 0, TKC_INT32), *in = k_buf(g, 1, TKC_INT32), *r = k_range(g, n, 0);
  tkc_uop *v = k_load(g, in, r);
  tkc_uop *gate = tkc_uop_alu2(g, TKC_OP_CMPLT, k_int(g, 0), v);
  return k_sink1(g, k_op(g, TKC_OP_STORE, dt_(TKC_VOID), 2, k_index_gated(g, out, r, gate), v, NULL));
}

/* c = a < b && a != 0; out[i] = c ? a : b, outb[i] = c: out (0), outb (1), a (2), b (3) */
static inline tkc_uop *kb_where_cmp_bool(tkc_graph *g, int n) {
  tkc_uop *out = k_buf(g, 0, TKC_FLOAT32), *outb = k_buf(g, 1, TKC_BOOL), *ab = k_buf(g, 2, TKC_FLOAT32), *bb = k_buf(g, 3, TKC_FLOAT32);
  tkc_uop *r = k_range(g, n, 0), *x = k_load(g, ab, r), *y = k_load(g, bb, r);
  tkc_uop *c = tkc_uop_alu2(g, TKC_OP_AND, tkc_uop_alu2(g, TKC_OP_CMPLT, x, y), tkc_uop_alu2(g, TKC_OP_CMPNE, x, tkc_uop_const_float(g, dt_(TKC_FLOAT32), 0)));
  tkc_uop *st[2] = {k_store(g, out, r, tkc_uop_alu3(g, TKC_OP_WHERE, c, x, y)), k_store(g, outb, r, c)};
  return tkc_uop_sink(g, 2, st);
}

/* q[i] = a[i] / b[i], rm[i] = a[i] % b[i]: q (0), rm (1), a (2), b (3) */
static inline tkc_uop *kb_divmod(tkc_graph *g, tkc_dtype dt, int64_t n) {
  tkc_uop *q = k_buf(g, 0, dt), *rm = k_buf(g, 1, dt), *ab = k_buf(g, 2, dt), *bb = k_buf(g, 3, dt), *r = k_range(g, n, 0);
  tkc_uop *x = k_load(g, ab, r), *y = k_load(g, bb, r);
  tkc_uop *st[2] = {k_store(g, q, r, tkc_uop_alu2(g, TKC_OP_IDIV, x, y)), k_store(g, rm, r, tkc_uop_alu2(g, TKC_OP_MOD, x, y))};
  return tkc_uop_sink(g, 2, st);
}

/* float4 loads/stores: out4[i] = a4[i] * (2,3,4,5) and rev[i] = a4[i] lanes reversed (GEP): out (0), rev (1), a (2) */
static inline tkc_uop *kb_float4(tkc_graph *g, int n4) {
  tkc_dt f4 = tkc_dt_vec(dt_(TKC_FLOAT32), 4), f4p = tkc_dt_ptr(f4, TKC_SPACE_GLOBAL, -1);
  tkc_uop *out = k_buf(g, 0, TKC_FLOAT32), *rev = k_buf(g, 1, TKC_FLOAT32), *in = k_buf(g, 2, TKC_FLOAT32), *r = k_range(g, n4, 0);
  tkc_uop *base = k_mul(g, r, k_int(g, 4));
  tkc_uop *v = k_op(g, TKC_OP_LOAD, f4, 1, k_op(g, TKC_OP_CAST, f4p, 1, k_index(g, in, base), NULL, NULL), NULL, NULL);
  tkc_uop *lanes[4], *rl[4];
  for (int l = 0; l < 4; l++) {
    lanes[l] = tkc_uop_const_float(g, dt_(TKC_FLOAT32), 2.0 + l);
    tkc_arg i = tkc_arg_int(3 - l);
    rl[l] = tkc_uop_new(g, TKC_OP_GEP, dt_(TKC_FLOAT32), 1, &v, tkc_arg_tuple(&i, 1));
  }
  tkc_uop *k4 = tkc_uop_new(g, TKC_OP_VECTORIZE, f4, 4, lanes, tkc_arg_none());
  tkc_uop *vr = tkc_uop_new(g, TKC_OP_VECTORIZE, f4, 4, rl, tkc_arg_none());
  tkc_uop *st[2] = {k_op(g, TKC_OP_STORE, dt_(TKC_VOID), 2, k_op(g, TKC_OP_CAST, f4p, 1, k_index(g, out, base), NULL, NULL), k_mul(g, v, k4), NULL),
                    k_op(g, TKC_OP_STORE, dt_(TKC_VOID), 2, k_op(g, TKC_OP_CAST, f4p, 1, k_index(g, rev, base), NULL, NULL), vr, NULL)};
  return tkc_uop_sink(g, 2, st);
}

/* out[i] = a[i] * 3 for i < n, n a variable in [1, 64]: out (0), a (1) */
static inline tkc_uop *kb_var_size(tkc_graph *g) {
  tkc_uop *n = tkc_uop_var(g, "n", 1, 64);
  tkc_uop *out = k_buf(g, 0, TKC_FLOAT32), *in = k_buf(g, 1, TKC_FLOAT32), *r = k_range_to(g, n, 0);
  return k_sink1(g, k_store(g, out, r, k_mul(g, k_load(g, in, r), tkc_uop_const_float(g, dt_(TKC_FLOAT32), 3.0))));
}

/* out[i] = a[i*s + o] (int16) with variables s in [1, 9], o in [0, 9] (passed sorted: o, s): out (0), a (1) */
static inline tkc_uop *kb_var_stride(tkc_graph *g) {
  tkc_uop *s = tkc_uop_var(g, "s", 1, 9), *o = tkc_uop_var(g, "o", 0, 9);
  tkc_uop *out = k_buf(g, 0, TKC_INT16), *in = k_buf(g, 1, TKC_INT16), *r = k_range(g, 10, 0);
  return k_sink1(g, k_store(g, out, r, k_load(g, in, k_add(g, k_mul(g, r, s), o))));
}

/* the ops of kb_unary, one output buffer each (0..5); the input is buffer 6 */
static const tkc_op kb_unary_ops[6] = {TKC_OP_EXP2, TKC_OP_LOG2, TKC_OP_SQRT, TKC_OP_SIN, TKC_OP_RECIP, TKC_OP_NEG};
static inline tkc_uop *kb_unary(tkc_graph *g, tkc_dtype dt, int64_t n) {
  tkc_uop *in = k_buf(g, 6, dt), *r = k_range(g, n, 0), *x = k_load(g, in, r), *st[6];
  for (int k = 0; k < 6; k++) st[k] = k_store(g, k_buf(g, k, dt), r, tkc_uop_alu1(g, kb_unary_ops[k], x));
  return tkc_uop_sink(g, 6, st);
}

/* the ops of kb_shifts on uint32, one output buffer each (0..4); a (5) and the counts (6) */
static const tkc_op kb_shift_ops[5] = {TKC_OP_SHL, TKC_OP_SHR, TKC_OP_AND, TKC_OP_OR, TKC_OP_XOR};
static inline tkc_uop *kb_shifts(tkc_graph *g, int n) {
  tkc_uop *ab = k_buf(g, 5, TKC_UINT32), *sb = k_buf(g, 6, TKC_UINT32), *r = k_range(g, n, 0), *st[5];
  tkc_uop *x = k_load(g, ab, r), *y = k_load(g, sb, r);
  for (int k = 0; k < 5; k++) st[k] = k_store(g, k_buf(g, k, TKC_UINT32), r, tkc_uop_alu2(g, kb_shift_ops[k], x, y));
  return tkc_uop_sink(g, 5, st);
}

/* out[i] = a[i]*b[i] + 12345 (int64): out (0), a (1), b (2) */
static inline tkc_uop *kb_int64_mul_wrap(tkc_graph *g, int n) {
  tkc_uop *out = k_buf(g, 0, TKC_INT64), *ab = k_buf(g, 1, TKC_INT64), *bb = k_buf(g, 2, TKC_INT64), *r = k_range(g, n, 0);
  tkc_uop *v = k_add(g, k_mul(g, k_load(g, ab, r), k_load(g, bb, r)), tkc_uop_const_int(g, dt_(TKC_INT64), 12345));
  return k_sink1(g, k_store(g, out, r, v));
}

/* and (0), or (1), (a^b) != true (2) of bools a (3), b (4) */
static inline tkc_uop *kb_bool_logic(tkc_graph *g, int n) {
  tkc_uop *ab = k_buf(g, 3, TKC_BOOL), *bb = k_buf(g, 4, TKC_BOOL), *r = k_range(g, n, 0);
  tkc_uop *x = k_load(g, ab, r), *y = k_load(g, bb, r), *t = tkc_uop_const_int(g, dt_(TKC_BOOL), 1);
  tkc_uop *st[3] = {k_store(g, k_buf(g, 0, TKC_BOOL), r, tkc_uop_alu2(g, TKC_OP_AND, x, y)),
                    k_store(g, k_buf(g, 1, TKC_BOOL), r, tkc_uop_alu2(g, TKC_OP_OR, x, y)),
                    k_store(g, k_buf(g, 2, TKC_BOOL), r, tkc_uop_alu2(g, TKC_OP_CMPNE, tkc_uop_alu2(g, TKC_OP_XOR, x, y), t))};
  return tkc_uop_sink(g, 3, st);
}

/* out[M x N] = a[M x K] @ b[K x N] (float32, a reduce loop): out (0), a (1), b (2) */
static inline tkc_uop *kb_matmul(tkc_graph *g, int M, int K, int N) {
  tkc_uop *out = k_buf(g, 0, TKC_FLOAT32), *ab = k_buf(g, 1, TKC_FLOAT32), *bb = k_buf(g, 2, TKC_FLOAT32);
  tkc_uop *ri = k_range(g, M, 0), *rj = k_range(g, N, 1), *rk = k_range(g, K, 2);
  tkc_uop *acc = k_op(g, TKC_OP_DEFINE_ACC, dt_(TKC_FLOAT32), 2, tkc_uop_const_float(g, dt_(TKC_FLOAT32), 0), rk, NULL);
  tkc_uop *prod = k_mul(g, k_load(g, ab, k_add(g, k_mul(g, ri, k_int(g, K)), rk)), k_load(g, bb, k_add(g, k_mul(g, rk, k_int(g, N)), rj)));
  tkc_uop *upd = k_op(g, TKC_OP_ASSIGN, dt_(TKC_FLOAT32), 2, acc, k_add(g, acc, prod), NULL);
  return k_sink1(g, k_store(g, out, k_add(g, k_mul(g, ri, k_int(g, N)), rj), upd));
}

/* out[0] = (half)sum((float)a[k]) over n halves: out (0), a (1) */
static inline tkc_uop *kb_half_sum(tkc_graph *g, int n) {
  tkc_uop *out = k_buf(g, 0, TKC_FLOAT16), *in = k_buf(g, 1, TKC_FLOAT16), *rk = k_range(g, n, 0);
  tkc_uop *acc = k_op(g, TKC_OP_DEFINE_ACC, dt_(TKC_FLOAT32), 2, tkc_uop_const_float(g, dt_(TKC_FLOAT32), 0), rk, NULL);
  tkc_uop *upd = k_op(g, TKC_OP_ASSIGN, dt_(TKC_FLOAT32), 2, acc, k_add(g, acc, tkc_uop_cast(g, k_load(g, in, rk), dt_(TKC_FLOAT32))), NULL);
  return k_sink1(g, k_store(g, out, k_int(g, 0), tkc_uop_cast(g, upd, dt_(TKC_FLOAT16))));
}

/* one loop, two accumulators: sum (0) and max (1) of each row of a (2) */
static inline tkc_uop *kb_two_acc(tkc_graph *g, int R, int C) {
  tkc_uop *os = k_buf(g, 0, TKC_FLOAT32), *om = k_buf(g, 1, TKC_FLOAT32), *in = k_buf(g, 2, TKC_FLOAT32);
  tkc_uop *ri = k_range(g, R, 0), *rk = k_range(g, C, 1);
  tkc_uop *x = k_load(g, in, k_add(g, k_mul(g, ri, k_int(g, C)), rk));
  tkc_uop *s = k_op(g, TKC_OP_DEFINE_ACC, dt_(TKC_FLOAT32), 2, tkc_uop_const_float(g, dt_(TKC_FLOAT32), 0), rk, NULL);
  tkc_uop *m = tkc_uop_new(g, TKC_OP_DEFINE_ACC, dt_(TKC_FLOAT32), 2, (tkc_uop *[]){tkc_uop_const_float(g, dt_(TKC_FLOAT32), -INFINITY), rk}, tkc_arg_int(1));
  tkc_uop *st[2] = {k_store(g, os, ri, k_op(g, TKC_OP_ASSIGN, dt_(TKC_FLOAT32), 2, s, k_add(g, s, x), NULL)),
                    k_store(g, om, ri, k_op(g, TKC_OP_ASSIGN, dt_(TKC_FLOAT32), 2, m, tkc_uop_alu2(g, TKC_OP_MAX, m, x), NULL))};
  return tkc_uop_sink(g, 2, st);
}

/* out[i] = 1 for i < n, n a variable in [1, 8]: out (0) */
static inline tkc_uop *kb_var_fill(tkc_graph *g) {
  tkc_uop *n = tkc_uop_var(g, "n", 1, 8);
  tkc_uop *out = k_buf(g, 0, TKC_FLOAT32), *r = k_range_to(g, n, 0);
  return k_sink1(g, k_store(g, out, r, tkc_uop_const_float(g, dt_(TKC_FLOAT32), 1)));
}

/* ---------------------------------------------------------------- more kernels for the GPU suites */

/* every binary op of a dtype (and NEG, MULACC, WHERE) on a (last-but-one buffer) and b (last); the
 * outputs come first, in the order of kb_binop_list */
static inline int kb_binop_list(tkc_dtype dt, tkc_op *ops) {
  int n = 0;
  const tkc_op common[] = {TKC_OP_ADD, TKC_OP_SUB, TKC_OP_MUL, TKC_OP_MAX, TKC_OP_CMPLT, TKC_OP_CMPNE, TKC_OP_WHERE, TKC_OP_NEG};
  for (size_t i = 0; i < sizeof common / sizeof *common; i++) ops[n++] = common[i];
  if (dt == TKC_BOOL) {
    ops[n++] = TKC_OP_AND, ops[n++] = TKC_OP_OR, ops[n++] = TKC_OP_XOR;
  } else if (tkc_dtype_is_int(dt)) {
    const tkc_op ints[] = {TKC_OP_IDIV, TKC_OP_MOD, TKC_OP_AND, TKC_OP_OR, TKC_OP_XOR, TKC_OP_SHL, TKC_OP_SHR, TKC_OP_MULACC};
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) ops[n++] = ints[i];
  } else {
    ops[n++] = TKC_OP_FDIV, ops[n++] = TKC_OP_MULACC;
  }
  return n;
}

static inline tkc_uop *kb_binops(tkc_graph *g, tkc_dtype dt, int64_t n, int *nout) {
  tkc_op ops[24];
  int k = kb_binop_list(dt, ops);
  tkc_uop *ab = k_buf(g, k, dt), *bb = k_buf(g, k + 1, dt), *r = k_range(g, n, 0), *st[24];
  tkc_uop *x = k_load(g, ab, r), *y = k_load(g, bb, r);
  for (int i = 0; i < k; i++) {
    tkc_uop *v;
    switch (ops[i]) {
    case TKC_OP_WHERE: v = tkc_uop_alu3(g, TKC_OP_WHERE, tkc_uop_alu2(g, TKC_OP_CMPLT, y, x), x, y); break;
    case TKC_OP_MULACC: v = tkc_uop_alu3(g, TKC_OP_MULACC, x, y, x); break;
    case TKC_OP_NEG: v = tkc_uop_alu1(g, TKC_OP_NEG, x); break;
    default: v = tkc_uop_alu2(g, ops[i], x, y); break;
    }
    tkc_dtype od = ops[i] == TKC_OP_CMPLT || ops[i] == TKC_OP_CMPNE ? TKC_BOOL : dt;
    st[i] = k_store(g, k_buf(g, i, od), r, v);
  }
  *nout = k;
  return tkc_uop_sink(g, k, st);
}

/* shifts of a (0) by counts of another dtype (1) into SHL (2), SHR (3) */
static inline tkc_uop *kb_shift_mixed(tkc_graph *g, tkc_dtype dt, tkc_dtype cdt, int64_t n) {
  tkc_uop *ab = k_buf(g, 0, dt), *cb = k_buf(g, 1, cdt), *r = k_range(g, n, 0);
  tkc_uop *x = k_load(g, ab, r), *y = tkc_uop_cast(g, k_load(g, cb, r), dt_(dt));
  tkc_uop *st[2] = {k_store(g, k_buf(g, 2, dt), r, tkc_uop_alu2(g, TKC_OP_SHL, x, y)), k_store(g, k_buf(g, 3, dt), r, tkc_uop_alu2(g, TKC_OP_SHR, x, y))};
  return tkc_uop_sink(g, 2, st);
}

/* a vector load under a gate: out4[i] = (i < lim ? a4[i] : 0) + (7,7,7,7) for dtype dt x4: out (0), a (1) */
static inline tkc_uop *kb_gated_vec4(tkc_graph *g, tkc_dtype dt, int n4, int lim) {
  tkc_dt v4 = tkc_dt_vec(dt_(dt), 4), v4p = tkc_dt_ptr(v4, TKC_SPACE_GLOBAL, -1);
  tkc_uop *out = k_buf(g, 0, dt), *in = k_buf(g, 1, dt), *r = k_range(g, n4, 0);
  tkc_uop *base = k_mul(g, r, k_int(g, 4)), *gate = tkc_uop_alu2(g, TKC_OP_CMPLT, r, k_int(g, lim));
  tkc_uop *ld = k_op(g, TKC_OP_LOAD, v4, 1, k_op(g, TKC_OP_CAST, v4p, 1, k_index_gated(g, in, base, gate), NULL, NULL), NULL, NULL);
  tkc_uop *seven = tkc_dtype_is_float(dt) ? tkc_uop_const_float(g, dt_(dt), 7) : tkc_uop_const_int(g, dt_(dt), 7), *l7[4] = {seven, seven, seven, seven};
  tkc_uop *alt = tkc_uop_new(g, TKC_OP_VECTORIZE, v4, 4, l7, tkc_arg_none());
  return k_sink1(g, k_op(g, TKC_OP_STORE, dt_(TKC_VOID), 2, k_op(g, TKC_OP_CAST, v4p, 1, k_index(g, out, base), NULL, NULL), k_add(g, ld, alt), NULL));
}

/* shared memory + barrier: each block of L threads reverses its slice through a local array;
 * out[g*L + l] = a[g*L + L-1-l] * 2 (float32): out (0), a (1) */
static inline tkc_uop *kb_smem_reverse(tkc_graph *g, int G, int L) {
  tkc_uop *out = k_buf(g, 0, TKC_FLOAT32), *in = k_buf(g, 1, TKC_FLOAT32);
  tkc_uop *gi = tkc_uop_special(g, "gidx0", G), *li = tkc_uop_special(g, "lidx0", L);
  tkc_uop *smem = tkc_uop_new(g, TKC_OP_DEFINE_LOCAL, tkc_dt_ptr(dt_(TKC_FLOAT32), TKC_SPACE_LOCAL, L), 0, NULL, tkc_arg_str("temp0"));
  tkc_uop *gl = k_add(g, k_mul(g, gi, k_int(g, L)), li);
  tkc_uop *st = k_store(g, smem, li, k_load(g, in, gl));
  tkc_uop *bar = k_op(g, TKC_OP_BARRIER, dt_(TKC_VOID), 1, st, NULL, NULL);
  tkc_uop *v = k_op(g, TKC_OP_LOAD, dt_(TKC_FLOAT32), 2, k_index(g, smem, k_add(g, k_int(g, L - 1), tkc_uop_alu1(g, TKC_OP_NEG, li))), bar, NULL);
  return k_sink1(g, k_store(g, out, gl, k_mul(g, v, tkc_uop_const_float(g, dt_(TKC_FLOAT32), 2.0))));
}

/* One warp computing D = A @ B (+ 0) with one mma.sync: A is 16 x K (row-major, dtype din), B is
 * K x 8 (row-major), D 16 x 8 (dout). The per-lane fragments follow the PTX ISA's layouts for
 * mma.m16n8k16 (.f16/.bf16), mma.m16n8k8 (.f16) and mma.m16n8k8 (.tf32). D (0), A (1), B (2). */
static inline tkc_uop *kb_wmma(tkc_graph *g, tkc_dtype din, tkc_dtype dout, int K) {
  tkc_uop *dbuf = k_buf(g, 0, dout), *abuf = k_buf(g, 1, din), *bbuf = k_buf(g, 2, din);
  tkc_uop *lane = tkc_uop_special(g, "lidx0", 32);
  tkc_uop *grp = tkc_uop_alu2(g, TKC_OP_IDIV, lane, k_int(g, 4)), *tig = tkc_uop_alu2(g, TKC_OP_MOD, lane, k_int(g, 4));
  bool tf32 = din == TKC_FLOAT32;
  int na = tf32 ? 4 : K == 16 ? 8 : 4, nb = tf32 ? 2 : K == 16 ? 4 : 2;
  tkc_uop *a[8], *b[4], *zero[4];
  for (int i = 0; i < na; i++) { /* (row, col) of A element i of this lane */
    tkc_uop *row, *col;
    if (tf32) {
      row = k_add(g, grp, k_int(g, (i & 1) * 8));
      col = k_add(g, tig, k_int(g, (i >> 1) * 4));
    } else {
      row = k_add(g, grp, k_int(g, ((i >> 1) & 1) * 8));
      col = k_add(g, k_mul(g, tig, k_int(g, 2)), k_int(g, (i & 1) + (i >> 2) * 8));
    }
    a[i] = k_load(g, abuf, k_add(g, k_mul(g, row, k_int(g, K)), col));
  }
  for (int i = 0; i < nb; i++) { /* (k, n) of B element i */
    tkc_uop *kk = tf32 ? k_add(g, tig, k_int(g, i * 4)) : k_add(g, k_mul(g, tig, k_int(g, 2)), k_int(g, (i & 1) + (i >> 1) * 8));
    b[i] = k_load(g, bbuf, k_add(g, k_mul(g, kk, k_int(g, 8)), grp));
  }
  for (int i = 0; i < 4; i++) zero[i] = tkc_uop_const_float(g, dt_(dout), 0.0);
  tkc_uop *va = tkc_uop_new(g, TKC_OP_VECTORIZE, tkc_dt_vec(dt_(din), na), na, a, tkc_arg_none());
  tkc_uop *vb = tkc_uop_new(g, TKC_OP_VECTORIZE, tkc_dt_vec(dt_(din), nb), nb, b, tkc_arg_none());
  tkc_uop *vc = tkc_uop_new(g, TKC_OP_VECTORIZE, tkc_dt_vec(dt_(dout), 4), 4, zero, tkc_arg_none());
  char name[64];
  snprintf(name, sizeof name, "WMMA_8_16_%d_%s_%s", K, tkc_dtype_name(din), tkc_dtype_name(dout));
  tkc_arg dims[3] = {tkc_arg_int(8), tkc_arg_int(16), tkc_arg_int(K)};
  tkc_arg empty[1] = {tkc_arg_none()};
  tkc_arg args[8] = {tkc_arg_str(name), tkc_arg_tuple(dims, 3), tkc_arg_int(din), tkc_arg_int(dout), tkc_arg_str("CUDA"), tkc_arg_int(32),
                     tkc_arg_tuple(empty, 0), tkc_arg_tuple(empty, 0)};
  tkc_uop *src[3] = {va, vb, vc};
  tkc_uop *w = tkc_uop_new(g, TKC_OP_WMMA, tkc_dt_vec(dt_(dout), 4), 3, src, tkc_arg_tuple(args, 8));
  tkc_uop *st[4];
  for (int i = 0; i < 4; i++) { /* D element i: row grp (+8 for i >= 2), col tig*2 + (i & 1) */
    tkc_arg li = tkc_arg_int(i);
    tkc_uop *d = tkc_uop_new(g, TKC_OP_GEP, dt_(dout), 1, &w, tkc_arg_tuple(&li, 1));
    tkc_uop *row = k_add(g, grp, k_int(g, (i >> 1) * 8)), *col = k_add(g, k_mul(g, tig, k_int(g, 2)), k_int(g, i & 1));
    st[i] = k_store(g, dbuf, k_add(g, k_mul(g, row, k_int(g, 8)), col), d);
  }
  return tkc_uop_sink(g, 4, st);
}

/* The kernel with its axis-0 RANGE (constant bounds from 0, not a reduce range) replaced by the launch
 * index gidx0 (local == 0) or by gidx0*local + lidx0; NULL when there is no such range or local does
 * not divide its size. */
static inline tkc_uop *kb_gpu_variant(tkc_graph *g, tkc_uop *sink, int local) {
  size_t n;
  tkc_uop **all = tkc_toposort(sink, &n), *range = NULL;
  if (!all) return NULL;
  for (size_t i = 0; i < n; i++)
    if (all[i]->op == TKC_OP_RANGE && all[i]->arg.kind == TKC_ARG_INT && all[i]->arg.v.i == 0 && tkc_uop_is_const(all[i]->src[0]) &&
        tkc_uop_const_i(all[i]->src[0]) == 0 && tkc_uop_is_const(all[i]->src[1]))
      range = all[i];
  for (size_t i = 0; i < n && range; i++)
    if (all[i]->op == TKC_OP_DEFINE_ACC)
      for (int k = 1; k < all[i]->nsrc; k++)
        if (all[i]->src[k] == range) range = NULL;
  tkc_free(all);
  if (!range) return NULL;
  int64_t size = tkc_uop_const_i(range->src[1]);
  if (size < 1 || (local && size % local)) return NULL;
  tkc_uop *idx = local ? k_add(g, k_mul(g, tkc_uop_special(g, "gidx0", size / local), k_int(g, local)), tkc_uop_special(g, "lidx0", local))
                       : tkc_uop_special(g, "gidx0", size);
  return tkc_substitute(g, sink, 1, &range, &idx);
}

/* ---------------------------------------------------------------- the enumerated suite */

typedef enum kfill {
  KF_ANY,      /* floats uniform in [-100, 100] ([-4, 4] for half/bfloat16), integers any bits, bools 0/1 */
  KF_EXTREME,  /* special values first (min/max/-1/0/1; 0, -0, inf, nan, huge, tiny), then like KF_ANY */
  KF_UNARY,    /* floats in [0.25, 13.05] (valid for log2/sqrt) */
  KF_DIVISOR,  /* small values in [-9, 9], 0 and -1 included */
  KF_SHIFT,    /* shift counts: 0..70 and a few negative/huge ones */
  KF_SMALLINT, /* integers in [-4, 4] (exact in every float type) */
} kfill;

#define KB_MAXBUF 24

typedef struct kspec {
  char name[64];
  tkc_uop *sink;   /* NULL: this case does not exist (a variant that does not apply) */
  int nbufs;       /* at most KB_MAXBUF */
  tkc_dtype dt[KB_MAXBUF];
  size_t n[KB_MAXBUF];
  kfill fill[KB_MAXBUF];
  int nvars;
  int64_t vars[4];
  double tol;      /* floats: |got - want| <= tol * max(1, |want|) (0: exact) */
  bool no_interp;  /* INTERP cannot run it: ref computes the expected buffers */
  void (*ref)(void **host, const struct kspec *s);
  int min_sm;      /* the CUDA arch it needs (0: any) */
  int param;       /* a size the reference needs */
} kspec;

static inline void kb_buf(kspec *s, int i, tkc_dtype dt, size_t n, kfill f) {
  if (i < 0 || i >= KB_MAXBUF) {
    fprintf(stderr, "kernels.h: buffer %d of %s beyond KB_MAXBUF\n", i, s->name);
    abort(); /* a bug in the suite itself */
  }
  if (i + 1 > s->nbufs) s->nbufs = i + 1;
  s->dt[i] = dt;
  s->n[i] = n;
  s->fill[i] = f;
}

static inline void kb_putf(void *p, tkc_dtype dt, size_t i, double f) {
  switch (dt) {
  case TKC_FLOAT32: ((float *)p)[i] = (float)f; break;
  case TKC_FLOAT64: ((double *)p)[i] = f; break;
  case TKC_FLOAT16: ((uint16_t *)p)[i] = ref_half_bits(f); break;
  case TKC_BFLOAT16: ((uint16_t *)p)[i] = k_bf16_bits((float)f); break;
  default: break;
  }
}

static void kb_ref_smem(void **host, const kspec *s) {
  int L = s->param, G = (int)(s->n[0] / (size_t)L);
  float *out = host[0];
  const float *in = host[1];
  for (int g = 0; g < G; g++)
    for (int l = 0; l < L; l++) out[g * L + l] = in[g * L + L - 1 - l] * 2.0f;
}

static void kb_ref_wmma(void **host, const kspec *s) {
  int K = s->param;
  for (int m = 0; m < 16; m++)
    for (int nn = 0; nn < 8; nn++) {
      double acc = 0;
      for (int k = 0; k < K; k++) acc += k_get_f(host[1], s->dt[1], (size_t)(m * K + k)) * k_get_f(host[2], s->dt[2], (size_t)(k * 8 + nn));
      kb_putf(host[0], s->dt[0], (size_t)(m * 8 + nn), acc);
    }
}

enum { KB_NBASE = 59 + 13 + 6, KB_NEXTRA = 7 };

/* base case i (0 <= i < KB_NBASE) into s */
static inline void kb_base_case(int i, tkc_graph *g, kspec *s) {
  static const tkc_dtype bitcast_pairs[][2] = {{TKC_FLOAT32, TKC_INT32}, {TKC_INT32, TKC_FLOAT32}, {TKC_UINT32, TKC_FLOAT32}, {TKC_FLOAT64, TKC_INT64},
                                               {TKC_INT64, TKC_UINT64},  {TKC_FLOAT16, TKC_INT16}, {TKC_UINT16, TKC_INT16}};
  static const tkc_dtype shift_mix[][2] = {{TKC_INT8, TKC_UINT8}, {TKC_UINT8, TKC_INT32}, {TKC_INT16, TKC_INT64},
                                           {TKC_INT32, TKC_UINT64}, {TKC_INT64, TKC_INT8}, {TKC_UINT64, TKC_UINT16}};
  const size_t n = 37;
  if (i < 13) { /* 1: add on every dtype */
    tkc_dtype dt = (tkc_dtype)i;
    snprintf(s->name, sizeof s->name, "add_%s", tkc_dtype_name(dt));
    s->sink = kb_elementwise2(g, TKC_OP_ADD, dt, dt, (int)n);
    kb_buf(s, 0, dt, n, KF_ANY), kb_buf(s, 1, dt, n, KF_ANY), kb_buf(s, 2, dt, n, KF_ANY);
    return;
  }
  if ((i -= 13) < 13) { /* 2: casts from every dtype to every dtype */
    tkc_dtype src = (tkc_dtype)i;
    snprintf(s->name, sizeof s->name, "cast_from_%s", tkc_dtype_name(src));
    s->sink = kb_cast_all(g, src, 9, 0);
    for (int t = 0; t < TKC_VOID; t++) kb_buf(s, t, (tkc_dtype)t, 9, KF_ANY);
    kb_buf(s, TKC_VOID, src, 9, KF_EXTREME);
    return;
  }
  if ((i -= 13) < 7) { /* 3: bitcasts */
    tkc_dtype from = bitcast_pairs[i][0], to = bitcast_pairs[i][1];
    snprintf(s->name, sizeof s->name, "bitcast_%s_%s", tkc_dtype_name(from), tkc_dtype_name(to));
    s->sink = kb_bitcast(g, from, to, 16);
    kb_buf(s, 0, to, 16, KF_ANY), kb_buf(s, 1, from, 16, KF_ANY);
    return;
  }
  if ((i -= 7) < 4) { /* 4-6: reductions */
    static const struct { tkc_op op; tkc_dtype dt; double init; } red[4] = {
        {TKC_OP_ADD, TKC_FLOAT32, 0.0}, {TKC_OP_ADD, TKC_INT32, 0.0}, {TKC_OP_MAX, TKC_FLOAT32, -INFINITY}, {TKC_OP_MAX, TKC_INT64, -9.2e18}};
    snprintf(s->name, sizeof s->name, "reduce_%s_%s", tkc_op_name(red[i].op), tkc_dtype_name(red[i].dt));
    s->sink = kb_reduce_rows(g, red[i].op, red[i].dt, 5, 7, kb_reduce_init(g, red[i].dt, red[i].init));
    kb_buf(s, 0, red[i].dt, 5, KF_ANY), kb_buf(s, 1, red[i].dt, 35, KF_ANY);
    return;
  }
  i -= 4;
  switch (i) {
  case 0: snprintf(s->name, sizeof s->name, "transpose"); s->sink = kb_transpose(g, 6, 5);
    kb_buf(s, 0, TKC_FLOAT32, 30, KF_ANY), kb_buf(s, 1, TKC_FLOAT32, 30, KF_ANY); return;
  case 1: snprintf(s->name, sizeof s->name, "three_level_nest"); s->sink = kb_three_level(g, 3, 4, 5);
    kb_buf(s, 0, TKC_FLOAT64, 60, KF_ANY), kb_buf(s, 1, TKC_FLOAT64, 60, KF_ANY); return;
  case 2: snprintf(s->name, sizeof s->name, "gated_load_pad"); s->sink = kb_gated_load_pad(g, 10);
    kb_buf(s, 0, TKC_FLOAT32, 13, KF_ANY), kb_buf(s, 1, TKC_FLOAT32, 10, KF_ANY); return;
  case 3: snprintf(s->name, sizeof s->name, "gated_store"); s->sink = kb_gated_store(g, 20);
    kb_buf(s, 0, TKC_INT32, 20, KF_ANY), kb_buf(s, 1, TKC_INT32, 20, KF_DIVISOR); return;
  case 4: snprintf(s->name, sizeof s->name, "where_cmp_bool"); s->sink = kb_where_cmp_bool(g, 24);
    kb_buf(s, 0, TKC_FLOAT32, 24, KF_ANY), kb_buf(s, 1, TKC_BOOL, 24, KF_ANY), kb_buf(s, 2, TKC_FLOAT32, 24, KF_DIVISOR), kb_buf(s, 3, TKC_FLOAT32, 24, KF_DIVISOR);
    return;
  case 5: case 6: case 7: {
    tkc_dtype dt = i == 5 ? TKC_INT32 : i == 6 ? TKC_INT8 : TKC_INT64;
    snprintf(s->name, sizeof s->name, "divmod_%s", tkc_dtype_name(dt));
    s->sink = kb_divmod(g, dt, 40);
    kb_buf(s, 0, dt, 40, KF_ANY), kb_buf(s, 1, dt, 40, KF_ANY), kb_buf(s, 2, dt, 40, KF_EXTREME), kb_buf(s, 3, dt, 40, KF_DIVISOR);
    return;
  }
  case 8: snprintf(s->name, sizeof s->name, "float4_load_store"); s->sink = kb_float4(g, 6);
    kb_buf(s, 0, TKC_FLOAT32, 24, KF_ANY), kb_buf(s, 1, TKC_FLOAT32, 24, KF_ANY), kb_buf(s, 2, TKC_FLOAT32, 24, KF_ANY); return;
  case 9: snprintf(s->name, sizeof s->name, "define_var_size"); s->sink = kb_var_size(g);
    kb_buf(s, 0, TKC_FLOAT32, 64, KF_ANY), kb_buf(s, 1, TKC_FLOAT32, 64, KF_ANY);
    s->nvars = 1, s->vars[0] = 43; return;
  case 10: snprintf(s->name, sizeof s->name, "define_var_stride"); s->sink = kb_var_stride(g);
    kb_buf(s, 0, TKC_INT16, 10, KF_ANY), kb_buf(s, 1, TKC_INT16, 100, KF_ANY);
    s->nvars = 2, s->vars[0] = 5, s->vars[1] = 9; return;
  case 11: case 12: {
    tkc_dtype dt = i == 11 ? TKC_FLOAT32 : TKC_FLOAT64;
    snprintf(s->name, sizeof s->name, "unary_%s", tkc_dtype_name(dt));
    s->sink = kb_unary(g, dt, 17);
    for (int k = 0; k < 6; k++) kb_buf(s, k, dt, 17, KF_ANY);
    kb_buf(s, 6, dt, 17, KF_UNARY);
    s->tol = dt == TKC_FLOAT32 ? 1e-5 : 1e-12;
    return;
  }
  case 13: snprintf(s->name, sizeof s->name, "bitwise_shifts"); s->sink = kb_shifts(g, 32);
    for (int k = 0; k < 6; k++) kb_buf(s, k, TKC_UINT32, 32, KF_ANY);
    kb_buf(s, 6, TKC_UINT32, 32, KF_SHIFT); return;
  case 14: snprintf(s->name, sizeof s->name, "int64_mul_wrap"); s->sink = kb_int64_mul_wrap(g, 16);
    for (int k = 0; k < 3; k++) kb_buf(s, k, TKC_INT64, 16, KF_ANY);
    return;
  case 15: snprintf(s->name, sizeof s->name, "bool_logic"); s->sink = kb_bool_logic(g, 16);
    for (int k = 0; k < 5; k++) kb_buf(s, k, TKC_BOOL, 16, KF_ANY);
    return;
  case 16: snprintf(s->name, sizeof s->name, "uint64_compare"); s->sink = kb_elementwise2(g, TKC_OP_CMPLT, TKC_UINT64, TKC_BOOL, 8);
    kb_buf(s, 0, TKC_BOOL, 8, KF_ANY), kb_buf(s, 1, TKC_UINT64, 8, KF_EXTREME), kb_buf(s, 2, TKC_UINT64, 8, KF_ANY); return;
  case 17: snprintf(s->name, sizeof s->name, "matmul"); s->sink = kb_matmul(g, 3, 4, 5);
    kb_buf(s, 0, TKC_FLOAT32, 15, KF_ANY), kb_buf(s, 1, TKC_FLOAT32, 12, KF_SMALLINT), kb_buf(s, 2, TKC_FLOAT32, 20, KF_SMALLINT); return;
  case 18: snprintf(s->name, sizeof s->name, "half_sum_float_acc"); s->sink = kb_half_sum(g, 50);
    kb_buf(s, 0, TKC_FLOAT16, 1, KF_ANY), kb_buf(s, 1, TKC_FLOAT16, 50, KF_ANY); return;
  case 19: snprintf(s->name, sizeof s->name, "max_float"); s->sink = kb_elementwise2(g, TKC_OP_MAX, TKC_FLOAT32, TKC_FLOAT32, 30);
    kb_buf(s, 0, TKC_FLOAT32, 30, KF_ANY), kb_buf(s, 1, TKC_FLOAT32, 30, KF_EXTREME), kb_buf(s, 2, TKC_FLOAT32, 30, KF_ANY); return;
  case 20: snprintf(s->name, sizeof s->name, "two_accumulators"); s->sink = kb_two_acc(g, 4, 9);
    kb_buf(s, 0, TKC_FLOAT32, 4, KF_ANY), kb_buf(s, 1, TKC_FLOAT32, 4, KF_ANY), kb_buf(s, 2, TKC_FLOAT32, 36, KF_ANY); return;
  case 21: snprintf(s->name, sizeof s->name, "define_var_fill"); s->sink = kb_var_fill(g);
    kb_buf(s, 0, TKC_FLOAT32, 8, KF_ANY);
    s->nvars = 1, s->vars[0] = 5; return;
  default: break;
  }
  if ((i -= 22) < 13) { /* every binary op on every dtype */
    tkc_dtype dt = (tkc_dtype)i;
    int k;
    snprintf(s->name, sizeof s->name, "binops_%s", tkc_dtype_name(dt));
    s->sink = kb_binops(g, dt, 24, &k);
    tkc_op ops[24];
    kb_binop_list(dt, ops);
    for (int j = 0; j < k; j++) kb_buf(s, j, ops[j] == TKC_OP_CMPLT || ops[j] == TKC_OP_CMPNE ? TKC_BOOL : dt, 24, KF_ANY);
    kb_buf(s, k, dt, 24, KF_EXTREME), kb_buf(s, k + 1, dt, 24, KF_DIVISOR);
    /* MULACC: a backend's fused multiply-add may round once where INTERP rounds the sum of an exact
     * (f32) or rounded (f64) product */
    s->tol = dt == TKC_FLOAT32 ? 1e-6 : dt == TKC_FLOAT64 ? 1e-12 : 0;
    return;
  }
  if ((i -= 13) < 6) { /* shifts with counts of another dtype */
    tkc_dtype dt = shift_mix[i][0], cdt = shift_mix[i][1];
    snprintf(s->name, sizeof s->name, "shift_%s_by_%s", tkc_dtype_name(dt), tkc_dtype_name(cdt));
    s->sink = kb_shift_mixed(g, dt, cdt, 24);
    kb_buf(s, 0, dt, 24, KF_EXTREME), kb_buf(s, 1, cdt, 24, KF_SHIFT), kb_buf(s, 2, dt, 24, KF_ANY), kb_buf(s, 3, dt, 24, KF_ANY);
    return;
  }
}

/* GPU-only case i (0 <= i < KB_NEXTRA) into s */
static inline void kb_extra_case(int i, tkc_graph *g, kspec *s) {
  static const struct { tkc_dtype din, dout; int K, sm; } tc[5] = {{TKC_FLOAT16, TKC_FLOAT32, 16, 80}, {TKC_FLOAT16, TKC_FLOAT16, 16, 80},
                                                                 {TKC_BFLOAT16, TKC_FLOAT32, 16, 80}, {TKC_FLOAT16, TKC_FLOAT32, 8, 75},
                                                                 {TKC_FLOAT32, TKC_FLOAT32, 8, 80}};
  if (i == 0) {
    snprintf(s->name, sizeof s->name, "smem_reverse");
    s->sink = kb_smem_reverse(g, 4, 32);
    kb_buf(s, 0, TKC_FLOAT32, 128, KF_ANY), kb_buf(s, 1, TKC_FLOAT32, 128, KF_ANY);
    s->no_interp = true, s->ref = kb_ref_smem, s->param = 32;
    return;
  }
  if (i == 1) {
    snprintf(s->name, sizeof s->name, "gated_half4_load");
    s->sink = kb_gated_vec4(g, TKC_FLOAT16, 6, 4);
    kb_buf(s, 0, TKC_FLOAT16, 24, KF_ANY), kb_buf(s, 1, TKC_FLOAT16, 24, KF_ANY);
    return;
  }
  i -= 2;
  if (i < 5) {
    int K = tc[i].K;
    snprintf(s->name, sizeof s->name, "wmma_m16n8k%d_%s_%s", K, tkc_dtype_name(tc[i].din), tkc_dtype_name(tc[i].dout));
    s->sink = kb_wmma(g, tc[i].din, tc[i].dout, K);
    kb_buf(s, 0, tc[i].dout, 128, KF_ANY), kb_buf(s, 1, tc[i].din, (size_t)16 * K, KF_SMALLINT), kb_buf(s, 2, tc[i].din, (size_t)K * 8, KF_SMALLINT);
    s->no_interp = true, s->ref = kb_ref_wmma, s->param = K, s->min_sm = tc[i].sm;
    return;
  }
}

/* The whole suite: every base case, then its gidx0 and gidx0*4+lidx0 variants, then the GPU-only
 * kernels. Case i into s (s->sink NULL when that variant does not exist); 0 past the end. */
static inline int kb_case(int i, tkc_graph *g, kspec *s) {
  memset(s, 0, sizeof *s);
  if (i < 0) return 0;
  if (i < 3 * KB_NBASE) {
    kb_base_case(i % KB_NBASE, g, s);
    int variant = i / KB_NBASE;
    if (variant && s->sink) {
      s->sink = kb_gpu_variant(g, s->sink, variant == 1 ? 0 : 4);
      size_t l = strlen(s->name);
      snprintf(s->name + l, sizeof s->name - l, variant == 1 ? "_gidx" : "_lidx");
    }
    return 1;
  }
  if ((i -= 3 * KB_NBASE) < KB_NEXTRA) {
    kb_extra_case(i, g, s);
    return 1;
  }
  return 0;
}

#endif
