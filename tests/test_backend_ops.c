/* Every op on every device, as ggml's test-backend-ops: two tables, each row {name, builder, dtypes,
 * shapes, tolerance}, run on each available device (one cmocka test per table and device; a device
 * that cannot run here is skipped with the reason) and compared with a plain C reference computed
 * here (tests/tensor_ref.h's host tensors and the references below) and with INTERP on the same inputs.
 *
 *   tensor table  the tensor API: every elementwise unary/binary/ternary op, cast and bitcast, each
 *                 reduction and scan, each movement op and the main composites (matmul, conv2d,
 *                 pooling, softmax, norms, attention, indexing, sort/topk), over odd shapes (1, 7, 33,
 *                 0-size), 0-d operands and non-contiguous inputs (permuted, sliced, broadcast, flipped
 *                 views). The first dtype of a row runs every shape case, the others a sample of them.
 *   ALU table     single UOp ALU ops in hand-built kernels (tests/kernel_util.h), for the values where
 *                 a backend's own semantics differ from tkc's: division by zero, INT_MIN / -1, shifts
 *                 by >= the width or negative counts, saturating float -> int casts of NaN/inf/huge
 *                 values, NaN in MAX and compares, signed zeros, bool arithmetic, float16/bfloat16
 *                 rounding and overflow, 64-bit wraparound; plus every dtype's add, all cast pairs and
 *                 bitcasts. Rows whose inputs are defined in C are checked against C too; the others
 *                 (C would be undefined) against INTERP, bit for bit (any NaN equals any NaN).
 * A dtype the device's renderer cannot hold (WEBGPU: 64-bit types) is skipped for that device; the
 * refusal itself is checked in tests/test_wgsl.c. TKC_TEST_FILTER="alu on CPU" (a cmocka pattern) runs a part
 * of the suite; TKC_TEST_DEVICES=CPU,INTERP limits the devices. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <float.h>
#include "tensor_ref.h"

/* ================================================================ shapes and layouts */

enum { L_C, L_PERM, L_SLICE, L_BCAST, L_FLIP }; /* how an input is made: contiguous or a view */
static const char *const LAYOUT_NAME[] = {"", " permuted", " sliced", " broadcast", " flipped"};

#define MAXIN 3
typedef struct bo_shape {
  int nin;
  int ndim[MAXIN];
  int64_t s[MAXIN][4];
  int layout[MAXIN];
  int axis, keepdim; /* reductions, scans, softmax, movement ops: the axis (ALL = every axis) */
} bo_shape;
#define ALL 99

/* the movement steps that make an input of shape s with the given layout from a random base tensor */
static void layout_steps(int layout, int nd, const int64_t *s, int64_t *base, tr_step *steps) {
  int k = 0;
  for (int d = 0; d < nd; d++) base[d] = s[d];
  if (layout == L_PERM && nd < 2) layout = L_FLIP;
  if (layout == L_PERM) {
    steps[k] = (tr_step){TS_PERMUTE, nd, {0}, 0};
    for (int d = 0; d < nd; d++) base[d] = s[nd - 1 - d], steps[k].a[d] = nd - 1 - d;
    k++;
  } else if (layout == L_SLICE) {
    steps[k] = (tr_step){TS_SHRINK, 0, {0}, 0};
    for (int d = 0; d < nd; d++) base[d] = s[d] + 2 + (d == nd - 1), steps[k].a[2 * d] = 1, steps[k].a[2 * d + 1] = 1 + s[d];
    k++;
  } else if (layout == L_BCAST) {
    int d = 0;
    while (d < nd - 1 && s[d] == 1) d++;
    if (nd) base[d] = 1;
    steps[k] = (tr_step){TS_EXPAND, nd, {0}, 0};
    for (int i = 0; i < nd; i++) steps[k].a[i] = s[i];
    k++;
  } else if (layout == L_FLIP) {
    steps[k] = (tr_step){TS_FLIP, nd, {0}, 0};
    for (int d = 0; d < nd; d++) steps[k].a[d] = d;
    k++;
  }
  steps[k] = (tr_step){TS_END, 0, {0}, 0};
}

#define S1(l, ...) {1, {(int)(sizeof((int64_t[]){__VA_ARGS__}) / 8)}, {{__VA_ARGS__}}, {l}, 0, 0}
#define SA(ax, kd, l, ...) {1, {(int)(sizeof((int64_t[]){__VA_ARGS__}) / 8)}, {{__VA_ARGS__}}, {l}, ax, kd}
#define END {0, {0}, {{0}}, {0}, 0, 0}

static const bo_shape SH_UNARY[] = {S1(L_C, 7),  S1(L_C, 4, 33),    S1(L_PERM, 33, 7), S1(L_SLICE, 5, 7),
                                    S1(L_C, 1),  S1(L_BCAST, 3, 33), S1(L_C, 0),        S1(L_FLIP, 2, 3, 5), END};
static const bo_shape SH_BINARY[] = {
    {2, {1, 1}, {{7}, {7}}, {L_C, L_C}, 0, 0},
    {2, {2, 2}, {{4, 33}, {4, 33}}, {L_C, L_C}, 0, 0},
    {2, {2, 2}, {{33, 7}, {33, 7}}, {L_PERM, L_FLIP}, 0, 0},
    {2, {2, 2}, {{5, 7}, {5, 7}}, {L_SLICE, L_BCAST}, 0, 0},
    {2, {2, 2}, {{7, 1}, {1, 33}}, {L_C, L_C}, 0, 0}, /* broadcasting shapes */
    {2, {3, 0}, {{2, 3, 5}, {0}}, {L_C, L_C}, 0, 0},  /* a 0-d operand */
    {2, {1, 1}, {{1}, {1}}, {L_C, L_C}, 0, 0},
    {2, {2, 2}, {{0, 3}, {0, 3}}, {L_C, L_C}, 0, 0},
    END};
static const bo_shape SH_TERNARY[] = {
    {3, {1, 1, 1}, {{7}, {7}, {7}}, {L_C, L_C, L_C}, 0, 0},
    {3, {2, 2, 2}, {{4, 33}, {4, 33}, {4, 33}}, {L_C, L_C, L_C}, 0, 0},
    {3, {2, 2, 2}, {{33, 7}, {33, 7}, {33, 7}}, {L_PERM, L_SLICE, L_FLIP}, 0, 0},
    {3, {2, 2, 0}, {{7, 1}, {1, 33}, {0}}, {L_C, L_BCAST, L_C}, 0, 0},
    {3, {1, 1, 1}, {{0}, {0}, {0}}, {L_C, L_C, L_C}, 0, 0},
    END};
static const bo_shape SH_REDUCE[] = {SA(1, 0, L_C, 7, 33),     SA(ALL, 0, L_C, 4, 5, 6), SA(0, 1, L_C, 7, 33),  SA(-1, 0, L_PERM, 33, 7),
                                     SA(1, 1, L_SLICE, 5, 7), SA(0, 0, L_C, 1),         SA(1, 0, L_BCAST, 3, 7), SA(1, 0, L_C, 0, 5), END};
static const bo_shape SH_SCAN[] = {SA(1, 0, L_C, 3, 7), SA(0, 0, L_C, 33), SA(0, 0, L_PERM, 5, 7), SA(-1, 0, L_SLICE, 2, 9), SA(0, 0, L_C, 1),
                                   SA(1, 0, L_C, 2, 100), SA(0, 0, L_PERM, 70, 3), END}; /* the last two in blocks */
static const bo_shape SH_SOFTMAX[] = {SA(-1, 0, L_C, 4, 33), SA(0, 0, L_C, 7, 3), SA(1, 0, L_PERM, 5, 7), SA(-1, 0, L_C, 1, 1), END};
static const bo_shape SH_MOVE[] = {SA(1, 0, L_C, 4, 6), SA(0, 0, L_PERM, 3, 7), SA(1, 0, L_SLICE, 5, 7), SA(0, 0, L_BCAST, 3, 4), SA(1, 0, L_C, 0, 3), END};
static const bo_shape SH_CAT[] = {
    {2, {2, 2}, {{4, 6}, {3, 6}}, {L_C, L_C}, 0, 0},
    {2, {2, 2}, {{5, 7}, {5, 1}}, {L_SLICE, L_FLIP}, 1, 0},
    {2, {2, 2}, {{3, 3}, {0, 3}}, {L_PERM, L_C}, 0, 0},
    END};
static const bo_shape SH_STACK[] = {
    {2, {2, 2}, {{4, 6}, {4, 6}}, {L_C, L_PERM}, 0, 0},
    {2, {1, 1}, {{7}, {7}}, {L_C, L_SLICE}, -1, 0},
    END};
static const bo_shape SH_MATMUL[] = {
    {2, {2, 2}, {{3, 4}, {4, 5}}, {L_C, L_C}, 0, 0},
    {2, {2, 2}, {{33, 7}, {7, 5}}, {L_PERM, L_C}, 0, 0},
    {2, {1, 2}, {{7}, {7, 33}}, {L_C, L_SLICE}, 0, 0},
    {2, {3, 2}, {{2, 3, 4}, {4, 1}}, {L_C, L_C}, 0, 0},
    {2, {2, 1}, {{1, 1}, {1}}, {L_C, L_C}, 0, 0},
    {2, {3, 3}, {{0, 2, 3}, {1, 3, 4}}, {L_C, L_C}, 0, 0},          /* an empty batch is 0, not 1 (a fuzz find) */
    {2, {4, 4}, {{1, 3, 0, 2}, {2, 1, 2, 1}}, {L_C, L_C}, 0, 0},    /* (1,3) with (2,1) batches, no rows */
    {2, {2, 2}, {{4, 5}, {5, 6}}, {L_BCAST, L_FLIP}, 0, 0},
    END};
static const bo_shape SH_CONV[] = {
    {2, {4, 4}, {{1, 2, 5, 5}, {3, 2, 3, 3}}, {L_C, L_C}, 1, 0},    /* axis = stride, keepdim = padding */
    {2, {4, 4}, {{2, 3, 7, 6}, {4, 3, 2, 3}}, {L_C, L_C}, 2, 1},
    {2, {4, 4}, {{1, 1, 6, 6}, {2, 1, 3, 3}}, {L_PERM, L_FLIP}, 1, 1},
    END};
static const bo_shape SH_POOL[] = {S1(L_C, 1, 2, 6, 6), S1(L_C, 2, 1, 7, 5), S1(L_PERM, 1, 2, 5, 5), END};
static const bo_shape SH_NORM[] = {SA(1, 0, L_C, 4, 33), SA(2, 0, L_C, 2, 3, 5), SA(1, 0, L_PERM, 5, 7), SA(1, 0, L_C, 3, 1), END};
static const bo_shape SH_ATTN[] = {
    {3, {3, 3, 3}, {{2, 5, 4}, {2, 7, 4}, {2, 7, 3}}, {L_C, L_C, L_C}, 0, 0},
    {3, {3, 3, 3}, {{1, 4, 8}, {1, 4, 8}, {1, 4, 8}}, {L_C, L_PERM, L_SLICE}, 1, 0}, /* axis 1: causal */
    {3, {2, 2, 2}, {{1, 3}, {6, 3}, {6, 2}}, {L_C, L_C, L_C}, 0, 0},
    END};
static const bo_shape SH_INDEX[] = { /* input 0 the data, input 1 an index (built in range by bo_input) */
    {2, {2, 2}, {{5, 7}, {3, 7}}, {L_C, L_C}, 0, 0},
    {2, {2, 2}, {{5, 7}, {5, 4}}, {L_PERM, L_C}, 1, 0},
    {2, {1, 1}, {{33}, {9}}, {L_SLICE, L_C}, 0, 0},
    END};
static const bo_shape SH_MATZERO[] = {S1(L_C, 2, 1), S1(L_C, 4, 33), S1(L_PERM, 33, 7), END};
static const bo_shape SH_SORT[] = {SA(-1, 0, L_C, 3, 7), SA(0, 0, L_C, 33), SA(0, 1, L_PERM, 6, 4), SA(0, 0, L_C, 1), END};

/* ================================================================ the tensor table */

enum { /* families: one builder and one reference each, the op picked by the row */
  F_UNARY, F_BINARY, F_TERNARY, F_CAST, F_BITCAST, F_REDUCE, F_SCAN, F_MOVE, F_CAT, F_MATMUL, F_SOFTMAX,
  F_CONV, F_POOL, F_NORM, F_ATTN, F_INDEX, F_SORT, F_FUSED
};

/* unary ops: the tr_unop ones first (same numbering as tensor_ref.h's TR_NEG..TR_RELU) */
enum {
  U_FLOOR = TR_NUN, U_CEIL, U_ROUND, U_TRUNC, U_RSQRT, U_SQUARE, U_SIGN, U_ERF, U_GELU, U_GELU_TANH, U_SILU, U_LEAKY,
  U_ELU, U_SELU, U_SOFTPLUS, U_HSIG, U_HSWISH, U_MISH, U_TAN, U_ASIN, U_ACOS, U_ATAN, U_SINH, U_COSH, U_ISNAN, U_ISINF,
  U_ISFINITE, U_LOG1P, U_EXPM1, U_CLAMP
};
enum { B_ATAN2 = TR_NBIN, B_DOT4 };
enum { T_WHERE, T_LERP };
enum { R_SUM = TR_SUM, R_MAX = TR_RMAX, R_MIN = TR_RMIN, R_MEAN = TR_MEAN, R_PROD, R_VAR, R_STD, R_LSE, R_ANY, R_ALL, R_ARGMAX, R_ARGMIN, R_SUMACC };
enum { C_CUMSUM, C_CUMMAX, C_CUMPROD };
enum { M_RESHAPE, M_PERMUTE, M_EXPAND, M_PAD, M_SHRINK, M_FLIP, M_CONTIG, M_SQUEEZE, M_UNSQUEEZE, M_REPEAT, M_FLATTEN, M_TRIL, M_TRIU,
       M_CHUNK, M_CAT, M_STACK };
enum { SM_SOFTMAX, SM_LOGSOFTMAX };
enum { P_MAX, P_AVG };
enum { N_LAYER, N_LAYER_AFFINE, N_RMS };
enum { I_GATHER, I_INDEX_SELECT, I_ONE_HOT };
enum { O_SORT_VALUES, O_SORT_INDICES, O_TOPK_VALUES, O_TOPK_INDICES };
enum { X_CUMSUM_DIV, X_MUL_ADD_RELU, X_MATMUL_ZEROS };

/* input value domains: tensor_ref.h's TR_DOM_* and these */
enum { D_UNIT = 16, /* floats in [-1, 1] */
       D_CASTSRC,   /* floats in [0, 16) (every target holds them), ints and bool as TR_DOM_ANY */
       D_FBITS,     /* ints holding the bits of a normal float of their size (bitcast to floats) */
       D_SPECIAL,   /* floats: NaN, +-inf, +-0, 1, -2.5 and small values; ints as TR_DOM_ANY */
       D_GT_M1,     /* floats > -1 (log1p) */
       D_DISTINCT   /* distinct values (sorting: no ties), ints within the dtype's range */
};

#define DT(x) (1u << (x))
#define D_FLOATS (DT(TKC_FLOAT32) | DT(TKC_FLOAT16) | DT(TKC_BFLOAT16) | DT(TKC_FLOAT64))
#define D_SINTS (DT(TKC_INT8) | DT(TKC_INT16) | DT(TKC_INT32) | DT(TKC_INT64))
#define D_UINTS (DT(TKC_UINT8) | DT(TKC_UINT16) | DT(TKC_UINT32) | DT(TKC_UINT64))
#define D_INTS (D_SINTS | D_UINTS)
#define D_ALL (D_FLOATS | D_INTS | DT(TKC_BOOL))
#define SAME (-1)

typedef struct bo_row {
  const char *name;
  int family, op;
  uint32_t dtypes;           /* the row's dtype: every input's unless in_dt says otherwise */
  const bo_shape *shapes;
  int dom[MAXIN];            /* input domains */
  int kind;                  /* tolerance: 0 exact ops, 1 transcendental/accumulated, 2 composites */
  int in_dt[MAXIN];          /* SAME or a fixed dtype for that input (promotion, conditions, indices) */
  int param;                 /* op parameter: a target dtype (cast), k (topk, tril), ... */
  int no_webgpu;             /* WGSL may assume no NaN/inf: special values are not run there */
} bo_row;

#define UN(n, o, dts, dom, kind) {n, F_UNARY, o, dts, SH_UNARY, {dom}, kind, {SAME, SAME, SAME}, 0, 0}
#define BIN(n, o, dts, d0, d1, kind) {n, F_BINARY, o, dts, SH_BINARY, {d0, d1}, kind, {SAME, SAME, SAME}, 0, 0}
#define RED(n, o, dts, dom, kind) {n, F_REDUCE, o, dts, SH_REDUCE, {dom}, kind, {SAME, SAME, SAME}, 0, 0}
#define MOVE(n, o, dts) {n, F_MOVE, o, dts, SH_MOVE, {TR_DOM_WIDE}, 0, {SAME, SAME, SAME}, 0, 0}

static const bo_row TENSOR_ROWS[] = {
    /* unary */
    UN("neg", TR_NEG, D_ALL, TR_DOM_ANY, 0),
    UN("abs", TR_ABS, D_FLOATS | D_SINTS | DT(TKC_UINT8), TR_DOM_ANY, 0),
    UN("relu", TR_RELU, D_FLOATS | D_SINTS, TR_DOM_ANY, 0),
    UN("recip", TR_RECIP, D_FLOATS | DT(TKC_INT32), TR_DOM_NONZERO, 0),
    UN("sqrt", TR_SQRT, D_FLOATS | DT(TKC_UINT8), TR_DOM_POS, 1),
    UN("exp", TR_EXP, D_FLOATS | DT(TKC_INT8), TR_DOM_ANY, 1),
    UN("exp2", TR_EXP2, D_FLOATS, TR_DOM_ANY, 1),
    UN("log", TR_LOG, D_FLOATS | DT(TKC_INT32), TR_DOM_POS, 1),
    UN("log2", TR_LOG2, D_FLOATS, TR_DOM_POS, 1),
    UN("sin", TR_SIN, D_FLOATS | DT(TKC_INT16), TR_DOM_ANY, 1),
    UN("cos", TR_COS, D_FLOATS, TR_DOM_ANY, 1),
    UN("tanh", TR_TANH, D_FLOATS, TR_DOM_ANY, 1),
    UN("sigmoid", TR_SIGMOID, D_FLOATS | DT(TKC_BOOL), TR_DOM_ANY, 1),
    UN("floor", U_FLOOR, D_FLOATS | DT(TKC_INT32), TR_DOM_ANY, 0),
    UN("ceil", U_CEIL, D_FLOATS, TR_DOM_ANY, 0),
    UN("round", U_ROUND, D_FLOATS, TR_DOM_ANY, 0),
    UN("trunc", U_TRUNC, D_FLOATS, TR_DOM_ANY, 0),
    UN("rsqrt", U_RSQRT, D_FLOATS, TR_DOM_POS, 1),
    UN("square", U_SQUARE, D_FLOATS | D_SINTS | DT(TKC_BOOL), TR_DOM_ANY, 0),
    UN("sign", U_SIGN, D_FLOATS | D_SINTS, TR_DOM_ANY, 0),
    UN("erf", U_ERF, D_FLOATS, TR_DOM_ANY, 1),
    UN("gelu", U_GELU, D_FLOATS, TR_DOM_ANY, 1),
    UN("gelu tanh", U_GELU_TANH, D_FLOATS, TR_DOM_ANY, 1),
    UN("silu", U_SILU, D_FLOATS, TR_DOM_ANY, 1),
    UN("leaky_relu", U_LEAKY, D_FLOATS, TR_DOM_ANY, 0),
    UN("elu", U_ELU, D_FLOATS, TR_DOM_ANY, 1),
    UN("selu", U_SELU, D_FLOATS, TR_DOM_ANY, 1),
    UN("softplus", U_SOFTPLUS, D_FLOATS, TR_DOM_ANY, 1),
    UN("hardsigmoid", U_HSIG, D_FLOATS, TR_DOM_ANY, 1),
    UN("hardswish", U_HSWISH, D_FLOATS, TR_DOM_ANY, 1),
    UN("mish", U_MISH, D_FLOATS, TR_DOM_ANY, 1),
    UN("tan", U_TAN, D_FLOATS, D_UNIT, 1),
    UN("asin", U_ASIN, D_FLOATS, D_UNIT, 1),
    UN("acos", U_ACOS, D_FLOATS, D_UNIT, 1),
    UN("atan", U_ATAN, D_FLOATS | DT(TKC_INT8), TR_DOM_ANY, 1),
    UN("sinh", U_SINH, D_FLOATS, TR_DOM_ANY, 1),
    UN("cosh", U_COSH, D_FLOATS, TR_DOM_ANY, 1),
    UN("log1p", U_LOG1P, D_FLOATS, D_GT_M1, 1),
    UN("expm1", U_EXPM1, D_FLOATS, TR_DOM_ANY, 1),
    UN("clamp", U_CLAMP, D_FLOATS | D_SINTS | DT(TKC_UINT16), TR_DOM_ANY, 0),
    {"isnan", F_UNARY, U_ISNAN, D_FLOATS | DT(TKC_INT32), SH_UNARY, {D_SPECIAL}, 0, {SAME, SAME, SAME}, 0, 1},
    {"isinf", F_UNARY, U_ISINF, D_FLOATS | DT(TKC_INT32), SH_UNARY, {D_SPECIAL}, 0, {SAME, SAME, SAME}, 0, 1},
    {"isfinite", F_UNARY, U_ISFINITE, D_FLOATS | DT(TKC_BOOL), SH_UNARY, {D_SPECIAL}, 0, {SAME, SAME, SAME}, 0, 1},
    /* binary */
    BIN("add", TR_ADD, D_ALL, TR_DOM_ANY, TR_DOM_ANY, 0),
    BIN("sub", TR_SUB, D_FLOATS | D_INTS, TR_DOM_ANY, TR_DOM_ANY, 0),
    BIN("mul", TR_MUL, D_ALL, TR_DOM_ANY, TR_DOM_ANY, 0),
    BIN("mul wraps", TR_MUL, D_INTS, TR_DOM_WIDE, TR_DOM_WIDE, 0),
    BIN("div", TR_DIV, D_FLOATS | DT(TKC_INT32) | DT(TKC_UINT8), TR_DOM_ANY, TR_DOM_NONZERO, 0),
    BIN("idiv", TR_IDIV, D_INTS, TR_DOM_ANY, TR_DOM_NONZERO, 0),
    BIN("mod", TR_MOD, D_INTS, TR_DOM_ANY, TR_DOM_NONZERO, 0),
    BIN("maximum", TR_MAXIMUM, D_ALL, TR_DOM_ANY, TR_DOM_ANY, 0),
    BIN("minimum", TR_MINIMUM, D_ALL, TR_DOM_ANY, TR_DOM_ANY, 0),
    BIN("pow", TR_POW, D_FLOATS | DT(TKC_INT32), TR_DOM_POS, TR_DOM_SHIFT, 1),
    BIN("lt", TR_LT, D_ALL, TR_DOM_ANY, TR_DOM_ANY, 0),
    BIN("le", TR_LE, D_FLOATS | D_INTS, TR_DOM_ANY, TR_DOM_ANY, 0),
    BIN("gt", TR_GT, D_FLOATS | D_UINTS, TR_DOM_ANY, TR_DOM_ANY, 0),
    BIN("ge", TR_GE, D_FLOATS | D_SINTS, TR_DOM_ANY, TR_DOM_ANY, 0),
    BIN("eq", TR_EQ, D_ALL, TR_DOM_ANY, TR_DOM_ANY, 0),
    BIN("ne", TR_NE, D_ALL, TR_DOM_ANY, TR_DOM_ANY, 0),
    BIN("and", TR_AND, D_INTS | DT(TKC_BOOL), TR_DOM_WIDE, TR_DOM_WIDE, 0),
    BIN("or", TR_OR, D_INTS | DT(TKC_BOOL), TR_DOM_WIDE, TR_DOM_WIDE, 0),
    BIN("xor", TR_XOR, D_INTS | DT(TKC_BOOL), TR_DOM_WIDE, TR_DOM_WIDE, 0),
    BIN("shl", TR_SHL, D_INTS, TR_DOM_SMALL, TR_DOM_SHIFT, 0),
    BIN("shr", TR_SHR, D_INTS, TR_DOM_WIDE, TR_DOM_SHIFT, 0),
    BIN("atan2", B_ATAN2, D_FLOATS, TR_DOM_ANY, TR_DOM_NONZERO, 1),
    BIN("dot4", B_DOT4, DT(TKC_INT32) | DT(TKC_UINT32), TR_DOM_WIDE, TR_DOM_WIDE, 0),
    {"add promotes int8+float16", F_BINARY, TR_ADD, DT(TKC_INT8) | DT(TKC_UINT8) | DT(TKC_BOOL), SH_BINARY, {TR_DOM_ANY, TR_DOM_ANY}, 0,
     {SAME, TKC_FLOAT16, SAME}, 0, 0},
    {"mul promotes int32*uint32", F_BINARY, TR_MUL, DT(TKC_INT32) | DT(TKC_INT16), SH_BINARY, {TR_DOM_ANY, TR_DOM_SMALL}, 0,
     {SAME, TKC_UINT32, SAME}, 0, 0},
    {"lt promotes bfloat16<float32", F_BINARY, TR_LT, DT(TKC_BFLOAT16), SH_BINARY, {TR_DOM_ANY, TR_DOM_ANY}, 0, {SAME, TKC_FLOAT32, SAME}, 0, 0},
    {"add of special values", F_BINARY, TR_ADD, D_FLOATS, SH_BINARY, {D_SPECIAL, D_SPECIAL}, 0, {SAME, SAME, SAME}, 0, 1},
    {"mul of special values", F_BINARY, TR_MUL, DT(TKC_FLOAT32) | DT(TKC_FLOAT16), SH_BINARY, {D_SPECIAL, D_SPECIAL}, 0, {SAME, SAME, SAME}, 0, 1},
    /* ternary */
    {"where", F_TERNARY, T_WHERE, D_ALL, SH_TERNARY, {TR_DOM_ANY, TR_DOM_WIDE, TR_DOM_WIDE}, 0, {TKC_BOOL, SAME, SAME}, 0, 0},
    {"where (int condition)", F_TERNARY, T_WHERE, DT(TKC_FLOAT32) | DT(TKC_INT8), SH_TERNARY, {TR_DOM_ANY, TR_DOM_ANY, TR_DOM_ANY}, 0,
     {TKC_INT32, SAME, SAME}, 0, 0},
    {"lerp", F_TERNARY, T_LERP, D_FLOATS, SH_TERNARY, {TR_DOM_ANY, TR_DOM_ANY, D_UNIT}, 1, {SAME, SAME, SAME}, 0, 0},
    /* casts: every source dtype to each target */
    {"cast to float32", F_CAST, 0, D_ALL, SH_UNARY, {D_CASTSRC}, 0, {SAME, SAME, SAME}, TKC_FLOAT32, 0},
    {"cast to float16", F_CAST, 0, D_ALL, SH_UNARY, {D_CASTSRC}, 0, {SAME, SAME, SAME}, TKC_FLOAT16, 0},
    {"cast to bfloat16", F_CAST, 0, D_ALL, SH_UNARY, {D_CASTSRC}, 0, {SAME, SAME, SAME}, TKC_BFLOAT16, 0},
    {"cast to float64", F_CAST, 0, D_ALL, SH_UNARY, {D_CASTSRC}, 0, {SAME, SAME, SAME}, TKC_FLOAT64, 0},
    {"cast to int8", F_CAST, 0, D_ALL, SH_UNARY, {D_CASTSRC}, 0, {SAME, SAME, SAME}, TKC_INT8, 0},
    {"cast to uint8", F_CAST, 0, D_ALL, SH_UNARY, {D_CASTSRC}, 0, {SAME, SAME, SAME}, TKC_UINT8, 0},
    {"cast to int16", F_CAST, 0, D_ALL, SH_UNARY, {D_CASTSRC}, 0, {SAME, SAME, SAME}, TKC_INT16, 0},
    {"cast to uint16", F_CAST, 0, D_ALL, SH_UNARY, {D_CASTSRC}, 0, {SAME, SAME, SAME}, TKC_UINT16, 0},
    {"cast to int32", F_CAST, 0, D_ALL, SH_UNARY, {D_CASTSRC}, 0, {SAME, SAME, SAME}, TKC_INT32, 0},
    {"cast to uint32", F_CAST, 0, D_ALL, SH_UNARY, {D_CASTSRC}, 0, {SAME, SAME, SAME}, TKC_UINT32, 0},
    {"cast to int64", F_CAST, 0, D_ALL, SH_UNARY, {D_CASTSRC}, 0, {SAME, SAME, SAME}, TKC_INT64, 0},
    {"cast to uint64", F_CAST, 0, D_ALL, SH_UNARY, {D_CASTSRC}, 0, {SAME, SAME, SAME}, TKC_UINT64, 0},
    {"cast to bool", F_CAST, 0, D_ALL, SH_UNARY, {D_CASTSRC}, 0, {SAME, SAME, SAME}, TKC_BOOL, 0},
    /* bitcasts between same-size dtypes */
    {"bitcast to int32", F_BITCAST, 0, DT(TKC_FLOAT32) | DT(TKC_UINT32), SH_UNARY, {TR_DOM_ANY}, 0, {SAME, SAME, SAME}, TKC_INT32, 0},
    {"bitcast to float32", F_BITCAST, 0, DT(TKC_INT32) | DT(TKC_UINT32), SH_UNARY, {D_FBITS}, 0, {SAME, SAME, SAME}, TKC_FLOAT32, 0},
    {"bitcast to int16", F_BITCAST, 0, DT(TKC_FLOAT16) | DT(TKC_BFLOAT16) | DT(TKC_UINT16), SH_UNARY, {TR_DOM_ANY}, 0, {SAME, SAME, SAME},
     TKC_INT16, 0},
    {"bitcast to float16", F_BITCAST, 0, DT(TKC_INT16) | DT(TKC_UINT16), SH_UNARY, {D_FBITS}, 0, {SAME, SAME, SAME}, TKC_FLOAT16, 0},
    {"bitcast to bfloat16", F_BITCAST, 0, DT(TKC_FLOAT16) | DT(TKC_INT16), SH_UNARY, {D_FBITS}, 0, {SAME, SAME, SAME}, TKC_BFLOAT16, 0},
    {"bitcast to int64", F_BITCAST, 0, DT(TKC_FLOAT64) | DT(TKC_UINT64), SH_UNARY, {TR_DOM_ANY}, 0, {SAME, SAME, SAME}, TKC_INT64, 0},
    {"bitcast to float64", F_BITCAST, 0, DT(TKC_INT64), SH_UNARY, {D_FBITS}, 0, {SAME, SAME, SAME}, TKC_FLOAT64, 0},
    {"bitcast to bool", F_BITCAST, 0, DT(TKC_UINT8) | DT(TKC_INT8), SH_UNARY, {TR_DOM_WIDE}, 0, {SAME, SAME, SAME}, TKC_BOOL, 0},
    {"bitcast to uint8", F_BITCAST, 0, DT(TKC_INT8) | DT(TKC_BOOL), SH_UNARY, {TR_DOM_ANY}, 0, {SAME, SAME, SAME}, TKC_UINT8, 0},
    /* reductions and scans */
    RED("sum", R_SUM, D_ALL, TR_DOM_ANY, 1),
    RED("sum wraps", R_SUM, DT(TKC_INT32) | DT(TKC_UINT8) | DT(TKC_INT64), TR_DOM_WIDE, 0),
    RED("max", R_MAX, D_ALL, TR_DOM_ANY, 0),
    RED("min", R_MIN, D_FLOATS | D_INTS, TR_DOM_WIDE, 0),
    RED("mean", R_MEAN, D_FLOATS | DT(TKC_INT32) | DT(TKC_UINT8), TR_DOM_ANY, 1),
    RED("prod", R_PROD, D_FLOATS | DT(TKC_INT32) | DT(TKC_BOOL), D_UNIT, 1),
    RED("var", R_VAR, D_FLOATS | DT(TKC_INT16), TR_DOM_ANY, 1),
    RED("std", R_STD, D_FLOATS, TR_DOM_ANY, 1),
    RED("logsumexp", R_LSE, D_FLOATS, TR_DOM_ANY, 1),
    RED("any", R_ANY, D_ALL, TR_DOM_SHIFT, 0),
    RED("all", R_ALL, D_ALL, TR_DOM_SHIFT, 0),
    RED("argmax", R_ARGMAX, D_FLOATS | D_INTS, D_DISTINCT, 0),
    RED("argmin", R_ARGMIN, D_FLOATS | D_INTS, D_DISTINCT, 0),
    {"sum_acc float32", F_REDUCE, R_SUMACC, DT(TKC_FLOAT16) | DT(TKC_INT8), SH_REDUCE, {TR_DOM_ANY}, 1, {SAME, SAME, SAME}, TKC_FLOAT32, 0},
    {"cumsum", F_SCAN, C_CUMSUM, D_FLOATS | DT(TKC_INT8) | DT(TKC_INT32) | DT(TKC_BOOL), SH_SCAN, {TR_DOM_ANY}, 1, {SAME, SAME, SAME}, 0, 0},
    {"cummax", F_SCAN, C_CUMMAX, D_FLOATS | D_SINTS, SH_SCAN, {TR_DOM_WIDE}, 0, {SAME, SAME, SAME}, 0, 0},
    {"cumprod", F_SCAN, C_CUMPROD, D_FLOATS | DT(TKC_INT32), SH_SCAN, {D_UNIT}, 1, {SAME, SAME, SAME}, 0, 0},
    /* movement */
    MOVE("reshape", M_RESHAPE, D_ALL),
    MOVE("permute", M_PERMUTE, DT(TKC_FLOAT32) | DT(TKC_INT8) | DT(TKC_FLOAT16)),
    MOVE("expand", M_EXPAND, DT(TKC_FLOAT32) | DT(TKC_BOOL) | DT(TKC_INT64)),
    MOVE("pad", M_PAD, D_ALL),
    MOVE("shrink", M_SHRINK, DT(TKC_FLOAT32) | DT(TKC_UINT16) | DT(TKC_BFLOAT16)),
    MOVE("flip", M_FLIP, DT(TKC_FLOAT32) | DT(TKC_INT32) | DT(TKC_UINT8)),
    MOVE("contiguous", M_CONTIG, D_ALL),
    MOVE("squeeze", M_SQUEEZE, DT(TKC_FLOAT32) | DT(TKC_INT16)),
    MOVE("unsqueeze", M_UNSQUEEZE, DT(TKC_FLOAT32) | DT(TKC_BOOL)),
    MOVE("repeat", M_REPEAT, DT(TKC_FLOAT32) | DT(TKC_INT8) | DT(TKC_FLOAT64)),
    MOVE("flatten", M_FLATTEN, DT(TKC_FLOAT32) | DT(TKC_UINT32)),
    MOVE("tril", M_TRIL, DT(TKC_FLOAT32) | DT(TKC_INT32) | DT(TKC_BOOL)),
    MOVE("triu", M_TRIU, DT(TKC_FLOAT32) | DT(TKC_FLOAT16)),
    MOVE("chunk", M_CHUNK, DT(TKC_FLOAT32) | DT(TKC_INT8)),
    {"cat", F_CAT, M_CAT, D_ALL, SH_CAT, {TR_DOM_WIDE, TR_DOM_WIDE}, 0, {SAME, SAME, SAME}, 0, 0},
    {"stack", F_CAT, M_STACK, DT(TKC_FLOAT32) | DT(TKC_INT16) | DT(TKC_BOOL), SH_STACK, {TR_DOM_WIDE, TR_DOM_WIDE}, 0, {SAME, SAME, SAME}, 0, 0},
    /* composites */
    {"matmul", F_MATMUL, 0, DT(TKC_FLOAT32) | DT(TKC_FLOAT16) | DT(TKC_INT32) | DT(TKC_BFLOAT16) | DT(TKC_INT8), SH_MATMUL,
     {TR_DOM_ANY, TR_DOM_ANY}, 2, {SAME, SAME, SAME}, 0, 0},
    {"matmul of inf and 0", F_MATMUL, 0, DT(TKC_FLOAT32), SH_MATMUL, {D_SPECIAL, D_SPECIAL}, 0, {SAME, SAME, SAME}, 0, 1},
    {"softmax", F_SOFTMAX, SM_SOFTMAX, DT(TKC_FLOAT32) | DT(TKC_FLOAT16) | DT(TKC_FLOAT64), SH_SOFTMAX, {TR_DOM_ANY}, 2, {SAME, SAME, SAME}, 0, 0},
    {"log_softmax", F_SOFTMAX, SM_LOGSOFTMAX, DT(TKC_FLOAT32) | DT(TKC_BFLOAT16), SH_SOFTMAX, {TR_DOM_ANY}, 2, {SAME, SAME, SAME}, 0, 0},
    {"conv2d", F_CONV, 0, DT(TKC_FLOAT32) | DT(TKC_FLOAT16), SH_CONV, {TR_DOM_ANY, TR_DOM_ANY}, 2, {SAME, SAME, SAME}, 0, 0},
    {"max_pool2d 3x3 s2 p1", F_POOL, P_MAX, DT(TKC_FLOAT32) | DT(TKC_INT32) | DT(TKC_UINT8), SH_POOL, {TR_DOM_WIDE}, 0, {SAME, SAME, SAME}, 0, 0},
    {"avg_pool2d 2x2 s1", F_POOL, P_AVG, DT(TKC_FLOAT32) | DT(TKC_FLOAT16), SH_POOL, {TR_DOM_ANY}, 2, {SAME, SAME, SAME}, 0, 0},
    {"layer_norm", F_NORM, N_LAYER, DT(TKC_FLOAT32) | DT(TKC_FLOAT16), SH_NORM, {TR_DOM_ANY}, 2, {SAME, SAME, SAME}, 0, 0},
    {"layer_norm affine", F_NORM, N_LAYER_AFFINE, DT(TKC_FLOAT32), SH_NORM, {TR_DOM_ANY, TR_DOM_ANY, TR_DOM_ANY}, 2, {SAME, SAME, SAME}, 0, 0},
    {"rms_norm", F_NORM, N_RMS, DT(TKC_FLOAT32) | DT(TKC_BFLOAT16), SH_NORM, {TR_DOM_ANY, TR_DOM_ANY}, 2, {SAME, SAME, SAME}, 0, 0},
    {"scaled_dot_product_attention", F_ATTN, 0, DT(TKC_FLOAT32) | DT(TKC_FLOAT16), SH_ATTN, {D_UNIT, D_UNIT, TR_DOM_ANY}, 2,
     {SAME, SAME, SAME}, 0, 0},
    {"gather", F_INDEX, I_GATHER, DT(TKC_FLOAT32) | DT(TKC_INT8) | DT(TKC_FLOAT64), SH_INDEX, {TR_DOM_WIDE, 0}, 0, {SAME, TKC_INT32, SAME}, 0, 0},
    {"index_select", F_INDEX, I_INDEX_SELECT, DT(TKC_FLOAT32) | DT(TKC_UINT16), SH_INDEX, {TR_DOM_WIDE, 0}, 0, {SAME, TKC_INT32, SAME}, 0, 0},
    {"index_select (int8 index)", F_INDEX, I_INDEX_SELECT, DT(TKC_BFLOAT16), SH_INDEX, {TR_DOM_WIDE, 0}, 0, {SAME, TKC_INT8, SAME}, 0, 0},
    {"one_hot", F_INDEX, I_ONE_HOT, DT(TKC_INT32) | DT(TKC_UINT8), SH_INDEX, {0, 0}, 0, {SAME, SAME, SAME}, 0, 0},
    {"sort values", F_SORT, O_SORT_VALUES, DT(TKC_FLOAT32) | DT(TKC_INT32) | DT(TKC_FLOAT16), SH_SORT, {D_DISTINCT}, 0, {SAME, SAME, SAME}, 0, 0},
    {"sort indices", F_SORT, O_SORT_INDICES, DT(TKC_FLOAT32) | DT(TKC_UINT8), SH_SORT, {D_DISTINCT}, 0, {SAME, SAME, SAME}, 0, 0},
    {"topk values", F_SORT, O_TOPK_VALUES, DT(TKC_FLOAT32) | DT(TKC_INT16), SH_SORT, {D_DISTINCT}, 0, {SAME, SAME, SAME}, 1, 0},
    {"topk indices", F_SORT, O_TOPK_INDICES, DT(TKC_FLOAT32), SH_SORT, {D_DISTINCT}, 0, {SAME, SAME, SAME}, 1, 0},
    /* fused expressions */
    {"cumsum of a division", F_FUSED, X_CUMSUM_DIV, DT(TKC_FLOAT32) | DT(TKC_FLOAT16), SH_BINARY, {TR_DOM_ANY, TR_DOM_NONZERO}, 1,
     {SAME, SAME, SAME}, 0, 0}, /* a fuzz find: the window padding pushed into FDIV gave 0/0 = NaN */
    {"matmul with a constant zero matrix", F_FUSED, X_MATMUL_ZEROS, DT(TKC_FLOAT32) | DT(TKC_FLOAT16), SH_MATZERO, {D_SPECIAL}, 0,
     {SAME, SAME, SAME}, 0, 1}, /* a fuzz find: inf * 0.0 was folded to 0 (it is NaN) */
    {"relu(a*b+a)", F_FUSED, X_MUL_ADD_RELU, D_FLOATS | DT(TKC_INT32), SH_BINARY, {TR_DOM_ANY, TR_DOM_ANY}, 0, {SAME, SAME, SAME}, 0, 0},
};
#define NTROWS ((int)(sizeof TENSOR_ROWS / sizeof *TENSOR_ROWS))

/* ---------------------------------------------------------------- inputs */

static rv bo_rand_val(tkc_dtype dt, int dom, int64_t k) {
  rv r = {0, 0};
  switch (dom) {
  case D_UNIT:
    if (tr_isf(dt)) r.f = (double)tr_rand_int(-8, 8) / 8.0;
    else r.i = tr_rand_int(0, 1);
    return r;
  case D_GT_M1:
    if (tr_isf(dt)) r.f = (double)tr_rand_int(-7, 24) / 8.0;
    else r.i = tr_rand_int(0, 5);
    return r;
  case D_CASTSRC:
    if (tr_isf(dt)) return tr_from_double(dt, (double)tr_rand_int(0, 63) / 4.0);
    return tr_rand_val(dt, TR_DOM_ANY);
  case D_FBITS: {
    if (tr_isf(dt)) return tr_rand_val(dt, TR_DOM_ANY);
    double f = (double)tr_rand_int(1, 64) / 8.0 * (tr_rand_int(0, 1) ? 1 : -1);
    size_t sz = tr_size(dt);
    if (sz == 2) r.i = tr_wrap(dt, dt == TKC_INT16 || dt == TKC_UINT16 ? ref_half_bits(f) : tr_bf16_bits(f));
    else if (sz == 4) {
      float x = (float)f;
      uint32_t u;
      memcpy(&u, &x, 4);
      r.i = tr_wrap(dt, u);
    } else {
      uint64_t u;
      memcpy(&u, &f, 8);
      r.i = (int64_t)u;
    }
    return r;
  }
  case D_SPECIAL:
    if (tr_isf(dt)) {
      static const double sv[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.0, -2.5, 0.25};
      uint64_t p = tr_rand_u64() % 16;
      r.f = p < 8 ? sv[p] : (double)tr_rand_int(-16, 16) / 4.0;
      return r;
    }
    return tr_rand_val(dt, TR_DOM_ANY);
  case D_DISTINCT: /* k-th element: a permutation-free but distinct value */
    if (tr_isf(dt)) r.f = tr_round(dt, (double)((k * 37) % 101) / 4.0 - 12.0);
    else if (dt == TKC_BOOL) r.i = k & 1;
    else r.i = tr_wrap(dt, (uint64_t)((k * 37) % 101 + (tr_isu(dt) ? 0 : -50)));
    return r;
  default: return tr_rand_val(dt, dom);
  }
}

static uint64_t bo_seed(int row, int dti, int ci, int input) { return 0x9E3779B97F4A7C15ull ^ ((uint64_t)row << 40) ^ ((uint64_t)dti << 24) ^ ((uint64_t)ci << 8) ^ (uint64_t)input; }

/* index inputs (gather/index_select/one_hot) hold valid indices for the data and axis */
static int64_t index_bound(const bo_row *r, const bo_shape *sh) {
  int ax = sh->axis < 0 ? sh->axis + sh->ndim[0] : sh->axis;
  if (r->op == I_ONE_HOT) return 5;
  return sh->s[0][ax];
}

/* the reference and the tkc tensor of input i (the same values: both from a seeded generator) */
static tkc_tensor *bo_input(tkc_ctx *ctx, const bo_row *r, int ri, int dti, int ci, tkc_dtype dt, const bo_shape *sh, int i, href *h) {
  tkc_dtype idt = r->in_dt[i] == SAME ? dt : (tkc_dtype)r->in_dt[i];
  int64_t base[4];
  tr_step steps[3];
  layout_steps(sh->layout[i], sh->ndim[i], sh->s[i], base, steps);
  tr_rng = bo_seed(ri, dti, ci, i) | 1;
  *h = tr_new(idt, sh->ndim[i], base);
  bool is_index = (r->family == F_INDEX && (i == 1 || r->op == I_ONE_HOT));
  for (int64_t k = 0; k < h->n; k++) {
    if (is_index) {
      int64_t bound = index_bound(r, sh);
      h->v[k].i = tr_wrap(idt, (uint64_t)tr_rand_int(r->op == I_INDEX_SELECT ? -bound : 0, bound - 1));
    } else h->v[k] = bo_rand_val(idt, r->dom[i], k);
  }
  tkc_tensor *t = tr_upload(ctx, h);
  if (!t) tr_problem("tkc_tensor_new(%s) failed: %s", tr_dn(idt), tkc_last_error());
  tr_apply(&t, h, steps);
  return t;
}

/* ---------------------------------------------------------------- references */

static double ref_unary_f(int op, double x) {
  switch (op) {
  case U_FLOOR: return floor(x);
  case U_CEIL: return ceil(x);
  case U_ROUND: return nearbyint(x); /* half to even */
  case U_TRUNC: return trunc(x);
  case U_RSQRT: return 1.0 / sqrt(x);
  case U_ERF: return erf(x);
  case U_GELU: return 0.5 * x * (1 + erf(x / sqrt(2.0)));
  case U_GELU_TANH: return 0.5 * x * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
  case U_SILU: return x / (1 + exp(-x));
  case U_LEAKY: return x < 0 ? 0.125 * x : x;
  case U_ELU: return x > 0 ? x : 0.5 * expm1(x);
  case U_SELU: return 1.0507009873554805 * (x > 0 ? x : 1.6732632423543772 * expm1(x));
  case U_SOFTPLUS: return log1p(exp(x));
  case U_HSIG: return fmin(fmax(x + 3, 0), 6) / 6;
  case U_HSWISH: return x * fmin(fmax(x + 3, 0), 6) / 6;
  case U_MISH: return x * tanh(log1p(exp(x)));
  case U_TAN: return tan(x);
  case U_ASIN: return asin(x);
  case U_ACOS: return acos(x);
  case U_ATAN: return atan(x);
  case U_SINH: return sinh(x);
  case U_COSH: return cosh(x);
  case U_LOG1P: return log1p(x);
  case U_EXPM1: return expm1(x);
  default: return 0;
  }
}

static bool unary_keeps_dtype(int op) {
  return op == TR_NEG || op == TR_ABS || op == TR_RELU || op == U_FLOOR || op == U_CEIL || op == U_ROUND || op == U_TRUNC ||
         op == U_SQUARE || op == U_SIGN || op == U_CLAMP;
}

static href ref_unary(int op, const href *a) {
  if (op < TR_NUN) return tr_unary(op, a);
  bool keep = unary_keeps_dtype(op), isbool = op == U_ISNAN || op == U_ISINF || op == U_ISFINITE;
  tkc_dtype o = isbool ? TKC_BOOL : keep || tr_isf(a->dt) ? a->dt : TKC_FLOAT32;
  href h = tr_new(o, a->ndim, a->shape);
  for (int64_t k = 0; k < h.n; k++) {
    rv x = a->v[k], r = {0, 0};
    if (isbool) {
      double f = tr_isf(a->dt) ? x.f : 0;
      r.i = op == U_ISNAN ? isnan(f) != 0 : op == U_ISINF ? isinf(f) != 0 : isfinite(f) != 0;
    } else if (!tr_isf(o)) { /* ints that keep their dtype */
      if (op == U_SQUARE) r = tr_binop(TR_MUL, o, x, x);
      else if (op == U_SIGN) r.i = tr_isu(o) ? x.i != 0 : (x.i > 0) - (x.i < 0);
      else if (op == U_CLAMP) r.i = x.i < -2 ? (tr_isu(o) ? 0 : -2) : x.i > 3 ? 3 : x.i; /* clamp(-2.5, 3.5): bounds rounded inwards */
      else r = x;
      if (op == U_CLAMP && tr_isu(o) && x.i < 0) r.i = 0;
    } else {
      double f = tr_cast(x, a->dt, o).f, z;
      if (op == U_SQUARE) z = f * f;
      else if (op == U_SIGN) z = f > 0 ? 1 : f < 0 ? -1 : f;
      else if (op == U_CLAMP) z = fmin(fmax(f, -2.5), 3.5);
      else z = ref_unary_f(op, f);
      r.f = tr_round(o, z);
    }
    h.v[k] = r;
  }
  return h;
}

static href ref_binary(int op, const href *a, const href *b) {
  if (op != B_ATAN2 && op != B_DOT4) return tr_binary(op, a, b);
  href h = tr_binary(TR_ADD, a, b); /* the broadcast shape and dtype */
  int n;
  int64_t s[TR_MAXDIM], idx[TR_MAXDIM];
  tr_bcast_shape(a->ndim, a->shape, b->ndim, b->shape, &n, s);
  if (op == B_DOT4) { /* the bytes of a (unsigned) times those of b (signed): int32 */
    href d = tr_new(TKC_INT32, n, s);
    for (int64_t k = 0; k < d.n; k++) {
      tr_unravel(k, n, s, idx);
      uint32_t x = (uint32_t)a->v[tr_bcast_index(a, n, idx)].i, y = (uint32_t)b->v[tr_bcast_index(b, n, idx)].i;
      int64_t z = 0;
      for (int j = 0; j < 4; j++) z += (int64_t)(x >> 8 * j & 255u) * (int8_t)(uint8_t)(y >> 8 * j & 255u);
      d.v[k].i = z;
    }
    tr_free(&h);
    return d;
  }
  for (int64_t k = 0; k < h.n; k++) {
    tr_unravel(k, n, s, idx);
    double y = a->v[tr_bcast_index(a, n, idx)].f, x = b->v[tr_bcast_index(b, n, idx)].f;
    h.v[k].f = tr_round(h.dt, atan2(y, x));
  }
  return h;
}

/* a generic reduction over one axis (or all): fn gets the values of each output element's group */
typedef rv (*group_fn)(const rv *v, int64_t n, tkc_dtype dt);
static href ref_group(const href *a, int axis, int keepdim, tkc_dtype odt, group_fn fn) {
  int nd = a->ndim;
  bool red[TR_MAXDIM] = {0};
  for (int d = 0; d < nd; d++) red[d] = axis == ALL || d == (axis < 0 ? axis + nd : axis);
  int64_t os[TR_MAXDIM], ks[TR_MAXDIM], idx[TR_MAXDIM];
  int on = 0;
  for (int d = 0; d < nd; d++) {
    ks[d] = red[d] ? 1 : a->shape[d];
    if (!red[d] || keepdim) os[on++] = ks[d];
  }
  href h = tr_new(odt, on, os);
  int64_t g = h.n ? a->n / h.n : 0;
  rv *vals = calloc(tr_cnt(g), sizeof *vals);
  for (int64_t o = 0; o < h.n; o++) {
    int64_t m = 0;
    for (int64_t k = 0; k < a->n; k++) {
      tr_unravel(k, nd, a->shape, idx);
      for (int d = 0; d < nd; d++)
        if (red[d]) idx[d] = 0;
      if (tr_ravel(idx, nd, ks) == o) vals[m++] = a->v[k];
    }
    h.v[o] = fn(vals, m, a->dt);
  }
  free(vals);
  return h;
}
static tkc_dtype g_out; /* the output dtype of the group function being run */
static rv g_prod(const rv *v, int64_t n, tkc_dtype dt) {
  rv r = tr_from_double(dt, 1);
  for (int64_t i = 0; i < n; i++) r = tr_isf(dt) ? (rv){tr_round(TKC_FLOAT32, r.f * v[i].f), 0} : tr_binop(TR_MUL, dt, r, v[i]);
  if (tr_isf(dt)) r.f = tr_round(dt, r.f);
  return r;
}
static double g_var_of(const rv *v, int64_t n, tkc_dtype dt) {
  double m = 0, s = 0;
  for (int64_t i = 0; i < n; i++) m += tr_to_double(dt, v[i]);
  m /= (double)n;
  for (int64_t i = 0; i < n; i++) s += (tr_to_double(dt, v[i]) - m) * (tr_to_double(dt, v[i]) - m);
  return s / (double)(n - 1);
}
static rv g_var(const rv *v, int64_t n, tkc_dtype dt) { return tr_from_double(g_out, g_var_of(v, n, dt)); }
static rv g_std(const rv *v, int64_t n, tkc_dtype dt) { return tr_from_double(g_out, sqrt(g_var_of(v, n, dt))); }
static rv g_lse(const rv *v, int64_t n, tkc_dtype dt) {
  double m = -INFINITY, s = 0;
  for (int64_t i = 0; i < n; i++) m = fmax(m, v[i].f);
  for (int64_t i = 0; i < n; i++) s += exp(v[i].f - m);
  (void)dt;
  return tr_from_double(g_out, n ? m + log(s) : -INFINITY);
}
static rv g_any(const rv *v, int64_t n, tkc_dtype dt) {
  rv r = {0, 0};
  for (int64_t i = 0; i < n; i++) r.i |= tr_isf(dt) ? v[i].f != 0 : v[i].i != 0;
  return r;
}
static rv g_all(const rv *v, int64_t n, tkc_dtype dt) {
  rv r = {0, 1};
  for (int64_t i = 0; i < n; i++) r.i &= tr_isf(dt) ? v[i].f != 0 : v[i].i != 0;
  return r;
}
static int g_cmp(rv x, rv y, tkc_dtype dt) { /* -1, 0, 1 */
  if (tr_isf(dt)) return x.f < y.f ? -1 : x.f > y.f;
  if (tr_isu(dt)) return (uint64_t)x.i < (uint64_t)y.i ? -1 : (uint64_t)x.i > (uint64_t)y.i;
  return x.i < y.i ? -1 : x.i > y.i;
}
static rv g_argmax(const rv *v, int64_t n, tkc_dtype dt) {
  rv r = {0, 0};
  for (int64_t i = 1; i < n; i++)
    if (g_cmp(v[i], v[r.i], dt) > 0) r.i = i;
  return r;
}
static rv g_argmin(const rv *v, int64_t n, tkc_dtype dt) {
  rv r = {0, 0};
  for (int64_t i = 1; i < n; i++)
    if (g_cmp(v[i], v[r.i], dt) < 0) r.i = i;
  return r;
}
static rv g_sum32(const rv *v, int64_t n, tkc_dtype dt) {
  double s = 0;
  for (int64_t i = 0; i < n; i++) s += tr_to_double(dt, v[i]);
  return tr_from_double(TKC_FLOAT32, s);
}

static href ref_reduce(const bo_row *r, const bo_shape *sh, const href *a) {
  int ax = sh->axis;
  if (r->op <= R_MEAN) return ax == ALL ? tr_reduce(r->op, a, 0, NULL, sh->keepdim) : tr_reduce(r->op, a, 1, &ax, sh->keepdim);
  tkc_dtype fl = tr_isf(a->dt) ? a->dt : TKC_FLOAT32;
  switch (r->op) {
  case R_PROD: return ref_group(a, ax, sh->keepdim, a->dt, g_prod);
  case R_VAR: g_out = fl; return ref_group(a, ax, sh->keepdim, fl, g_var);
  case R_STD: g_out = fl; return ref_group(a, ax, sh->keepdim, fl, g_std);
  case R_LSE: g_out = fl; return ref_group(a, ax, sh->keepdim, fl, g_lse);
  case R_ANY: return ref_group(a, ax, sh->keepdim, TKC_BOOL, g_any);
  case R_ALL: return ref_group(a, ax, sh->keepdim, TKC_BOOL, g_all);
  case R_ARGMAX: return ref_group(a, ax, sh->keepdim, TKC_INT32, g_argmax);
  case R_ARGMIN: return ref_group(a, ax, sh->keepdim, TKC_INT32, g_argmin);
  default: return ref_group(a, ax, sh->keepdim, TKC_FLOAT32, g_sum32);
  }
}

static href ref_scan(int op, const href *a, int axis) {
  if (axis < 0) axis += a->ndim;
  tkc_dtype odt = op == C_CUMSUM ? tr_sum_acc_dt(a->dt) : a->dt;
  href h = tr_new(odt, a->ndim, a->shape);
  int64_t outer = 1, inner = 1, n = a->shape[axis];
  for (int i = 0; i < axis; i++) outer *= a->shape[i];
  for (int i = axis + 1; i < a->ndim; i++) inner *= a->shape[i];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      rv acc = {0, 0};
      double f = op == C_CUMPROD ? 1 : 0;
      for (int64_t j = 0; j < n; j++) {
        int64_t k = (o * n + j) * inner + in;
        rv x = tr_cast(a->v[k], a->dt, odt);
        if (tr_isf(odt)) {
          f = op == C_CUMSUM ? f + x.f : op == C_CUMPROD ? tr_round(TKC_FLOAT32, f * x.f) : (j == 0 ? x.f : fmax(f, x.f));
          h.v[k].f = tr_round(odt, f);
        } else {
          acc = j == 0 ? x : tr_binop(op == C_CUMSUM ? TR_ADD : op == C_CUMPROD ? TR_MUL : TR_MAXIMUM, odt, acc, x);
          h.v[k] = acc;
        }
      }
    }
  return h;
}

static href ref_tri(const href *a, int64_t k, bool lower) {
  href h = tr_copy(a);
  int64_t R = a->shape[a->ndim - 2], C = a->shape[a->ndim - 1];
  for (int64_t e = 0; e < h.n; e++) {
    int64_t c = e % C, rr = (e / C) % R;
    if (lower ? c > rr + k : c < rr + k) h.v[e] = (rv){0, 0};
  }
  return h;
}

static href ref_cat(const href *a, const href *b, int axis) {
  if (axis < 0) axis += a->ndim;
  int64_t s[TR_MAXDIM], idx[TR_MAXDIM];
  for (int d = 0; d < a->ndim; d++) s[d] = a->shape[d] + (d == axis ? b->shape[d] : 0);
  href h = tr_new(a->dt, a->ndim, s);
  for (int64_t k = 0; k < h.n; k++) {
    tr_unravel(k, a->ndim, s, idx);
    if (idx[axis] < a->shape[axis]) h.v[k] = a->v[tr_ravel(idx, a->ndim, a->shape)];
    else {
      idx[axis] -= a->shape[axis];
      h.v[k] = b->v[tr_ravel(idx, b->ndim, b->shape)];
    }
  }
  return h;
}

/* pools with kernel 3 stride 2 pad 1 (max) / kernel 2 stride 1 (avg) over (N, C, H, W) */
static href ref_pool(int op, const href *x) {
  int K = op == P_MAX ? 3 : 2, S = op == P_MAX ? 2 : 1, P = op == P_MAX ? 1 : 0;
  int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
  int64_t OH = (H + 2 * P - K) / S + 1, OW = (W + 2 * P - K) / S + 1;
  href h = tr_new(x->dt, 4, (const int64_t[]){N, C, OH, OW});
  for (int64_t n = 0; n < N * C; n++)
    for (int64_t oy = 0; oy < OH; oy++)
      for (int64_t ox = 0; ox < OW; ox++) {
        rv best = {0, 0};
        bool seen = false;
        double s = 0;
        for (int ky = 0; ky < K; ky++)
          for (int kx = 0; kx < K; kx++) {
            int64_t iy = oy * S + ky - P, ix = ox * S + kx - P;
            if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
            rv v = x->v[(n * H + iy) * W + ix];
            if (!seen || g_cmp(v, best, x->dt) > 0) best = v;
            seen = true;
            s += v.f;
          }
        h.v[(n * OH + oy) * OW + ox] = op == P_MAX ? best : tr_from_double(x->dt, s / (K * K));
      }
  return h;
}

/* layer_norm / rms_norm over the last naxes dims (sh->axis), eps 1e-5 */
static href ref_norm(int op, const href *x, const href *w, const href *b, int naxes) {
  int64_t inner = 1;
  for (int d = x->ndim - naxes; d < x->ndim; d++) inner *= x->shape[d];
  href h = tr_new(x->dt, x->ndim, x->shape);
  for (int64_t o = 0; o * inner < x->n; o++) {
    double m = 0, v = 0;
    for (int64_t i = 0; i < inner; i++) m += x->v[o * inner + i].f;
    m /= (double)inner;
    for (int64_t i = 0; i < inner; i++) {
      double d = x->v[o * inner + i].f - (op == N_RMS ? 0 : m);
      v += d * d;
    }
    v /= (double)inner;
    for (int64_t i = 0; i < inner; i++) {
      double y = (x->v[o * inner + i].f - (op == N_RMS ? 0 : m)) / sqrt(v + 1e-5);
      if (w) y *= w->v[i].f;
      if (b) y += b->v[i].f;
      h.v[o * inner + i].f = tr_round(x->dt, y);
    }
  }
  return h;
}

/* softmax(q k^T * scale [+ causal mask]) v over the last two dims (batch dims shared) */
static href ref_attn(const href *q, const href *k, const href *v, bool causal) {
  int nd = q->ndim;
  int64_t L = q->shape[nd - 2], D = q->shape[nd - 1], S = k->shape[nd - 2], E = v->shape[nd - 1];
  int64_t LD = L * D, B = LD > 0 ? q->n / LD : 0, os[4];
  for (int d = 0; d < nd - 1; d++) os[d] = q->shape[d];
  os[nd - 1] = E;
  href h = tr_new(q->dt, nd, os);
  double *sc = calloc(tr_cnt(S), sizeof *sc);
  for (int64_t bb = 0; bb < B; bb++)
    for (int64_t i = 0; i < L; i++) {
      double m = -INFINITY, tot = 0;
      for (int64_t j = 0; j < S; j++) {
        double s = 0;
        for (int64_t d = 0; d < D; d++) s += q->v[(bb * L + i) * D + d].f * k->v[(bb * S + j) * D + d].f;
        sc[j] = causal && j > i ? -INFINITY : s / sqrt((double)D);
        m = fmax(m, sc[j]);
      }
      for (int64_t j = 0; j < S; j++) tot += sc[j] = exp(sc[j] - m);
      for (int64_t e = 0; e < E; e++) {
        double o = 0;
        for (int64_t j = 0; j < S; j++) o += sc[j] / tot * v->v[(bb * S + j) * E + e].f;
        h.v[(bb * L + i) * E + e].f = tr_round(q->dt, o);
      }
    }
  free(sc);
  return h;
}

static href ref_index(int op, const href *a, const href *ix, int axis) {
  if (op == I_ONE_HOT) {
    int64_t s[TR_MAXDIM];
    for (int d = 0; d < a->ndim; d++) s[d] = a->shape[d];
    s[a->ndim] = 5;
    href h = tr_new(TKC_INT32, a->ndim + 1, s);
    for (int64_t k = 0; k < h.n; k++) h.v[k].i = a->v[k / 5].i == k % 5;
    return h;
  }
  if (axis < 0) axis += a->ndim;
  int64_t idx[TR_MAXDIM], s[TR_MAXDIM], src[TR_MAXDIM];
  if (op == I_GATHER) {
    href h = tr_new(a->dt, ix->ndim, ix->shape);
    for (int64_t k = 0; k < h.n; k++) {
      tr_unravel(k, ix->ndim, ix->shape, idx);
      idx[axis] = ix->v[k].i;
      h.v[k] = a->v[tr_ravel(idx, a->ndim, a->shape)];
    }
    return h;
  }
  /* index_select with a 1-D index (negative counts from the end): a.shape[:axis] + (n,) + a.shape[axis+1:] */
  href flat = tr_reshape(ix, 1, (const int64_t[]){ix->n});
  for (int d = 0; d < a->ndim; d++) s[d] = d == axis ? flat.n : a->shape[d];
  href h = tr_new(a->dt, a->ndim, s);
  for (int64_t k = 0; k < h.n; k++) {
    tr_unravel(k, a->ndim, s, idx);
    for (int d = 0; d < a->ndim; d++) src[d] = idx[d];
    int64_t j = flat.v[idx[axis]].i;
    src[axis] = j < 0 ? j + a->shape[axis] : j;
    h.v[k] = a->v[tr_ravel(src, a->ndim, a->shape)];
  }
  tr_free(&flat);
  return h;
}

/* stable sort (descending = sh->keepdim) along axis; topk: the first k = param of the descending order */
static href ref_sort(const bo_row *r, const bo_shape *sh, const href *a) {
  int axis = sh->axis < 0 ? sh->axis + a->ndim : sh->axis;
  bool topk = r->op == O_TOPK_VALUES || r->op == O_TOPK_INDICES, want_idx = r->op == O_SORT_INDICES || r->op == O_TOPK_INDICES;
  bool desc = topk || sh->keepdim;
  int64_t n = a->shape[axis], kk = topk ? (r->param < n ? r->param + 1 : n) : n, inner = 1, outer = 1, s[TR_MAXDIM];
  for (int d = 0; d < a->ndim; d++) s[d] = d == axis ? kk : a->shape[d];
  for (int d = 0; d < axis; d++) outer *= a->shape[d];
  for (int d = axis + 1; d < a->ndim; d++) inner *= a->shape[d];
  href h = tr_new(want_idx ? TKC_INT32 : a->dt, a->ndim, s);
  int64_t *ord = calloc(tr_cnt(n), sizeof *ord);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      for (int64_t j = 0; j < n; j++) ord[j] = j;
      for (int64_t j = 1; j < n; j++) /* insertion sort: stable */
        for (int64_t q = j; q > 0; q--) {
          int c = g_cmp(a->v[(o * n + ord[q]) * inner + in], a->v[(o * n + ord[q - 1]) * inner + in], a->dt);
          if (desc ? c > 0 : c < 0) {
            int64_t t = ord[q];
            ord[q] = ord[q - 1], ord[q - 1] = t;
          } else break;
        }
      for (int64_t j = 0; j < kk; j++) {
        rv v = a->v[(o * n + ord[j]) * inner + in];
        h.v[(o * kk + j) * inner + in] = want_idx ? (rv){0, ord[j]} : v;
      }
    }
  free(ord);
  return h;
}

static void move_params(int op, const href *a, const bo_shape *sh, int64_t *p) { /* shape / pads / ranges for a's shape */
  int nd = a->ndim;
  (void)sh;
  for (int d = 0; d < 2 * TR_MAXDIM; d++) p[d] = 0;
  if (op == M_PAD)
    for (int d = 0; d < nd; d++) p[2 * d] = d, p[2 * d + 1] = 2 - d;
  if (op == M_SHRINK)
    for (int d = 0; d < nd; d++) p[2 * d] = a->shape[d] > 2, p[2 * d + 1] = a->shape[d] - (a->shape[d] > 3);
}

static href ref_move(const bo_row *r, const bo_shape *sh, const href *a) {
  int64_t p[2 * TR_MAXDIM];
  move_params(r->op, a, sh, p);
  int64_t R = a->shape[0], C = a->shape[a->ndim - 1];
  switch (r->op) {
  case M_RESHAPE: return tr_reshape(a, 3, (const int64_t[]){C, 1, R});
  case M_PERMUTE: return tr_permute(a, (const int[]){1, 0});
  case M_EXPAND: {
    href x = tr_reshape(a, 3, (const int64_t[]){R, 1, C}), y = tr_expand(&x, 3, (const int64_t[]){R, 3, C});
    tr_free(&x);
    return y;
  }
  case M_PAD: return tr_pad(a, p, 1.0);
  case M_SHRINK: return tr_shrink(a, p);
  case M_FLIP: return tr_flip(a, 1, (const int[]){sh->axis});
  case M_SQUEEZE: return tr_reshape(a, 2, (const int64_t[]){R, C}); /* of (R, 1, C) */
  case M_CONTIG: return tr_copy(a);
  case M_UNSQUEEZE: return tr_reshape(a, 3, (const int64_t[]){R, C, 1});
  case M_REPEAT: { /* repeat (2, 1, 3) of (R, C): (2, R, 3C) */
    href h = tr_new(a->dt, 3, (const int64_t[]){2, R, 3 * C});
    for (int64_t k = 0; k < h.n; k++) h.v[k] = a->v[((k / (3 * C)) % R) * C + (k % (3 * C)) % C];
    return h;
  }
  case M_FLATTEN: return tr_reshape(a, 1, (const int64_t[]){R * C});
  case M_TRIL: return ref_tri(a, 1, true);
  case M_TRIU: return ref_tri(a, -1, false);
  default: { /* chunk into 2 along axis: the second piece */
    int ax = sh->axis;
    int64_t half = (a->shape[ax] + 1) / 2, q[2 * TR_MAXDIM] = {0, R, 0, C};
    q[2 * ax] = half;
    if (q[2 * ax] > a->shape[ax]) q[2 * ax] = a->shape[ax];
    return tr_shrink(a, q);
  }
  }
}

static href bo_reference(const bo_row *r, const bo_shape *sh, const href *in) {
  switch (r->family) {
  case F_UNARY: return ref_unary(r->op, &in[0]);
  case F_BINARY: return ref_binary(r->op, &in[0], &in[1]);
  case F_TERNARY: {
    if (r->op == T_WHERE) return tr_where(&in[0], &in[1], &in[2]);
    href d = tr_binary(TR_SUB, &in[1], &in[0]), wd = tr_binary(TR_MUL, &in[2], &d), h = tr_binary(TR_ADD, &in[0], &wd);
    tr_free(&d), tr_free(&wd);
    return h;
  }
  case F_CAST: return tr_astype(&in[0], (tkc_dtype)r->param);
  case F_BITCAST: {
    href h = tr_new((tkc_dtype)r->param, in[0].ndim, in[0].shape);
    unsigned char b[8];
    for (int64_t k = 0; k < h.n; k++) {
      tr_store(in[0].dt, b, 0, in[0].v[k]);
      h.v[k] = tr_load(h.dt, b, 0);
      if (h.dt == TKC_BOOL) h.v[k].i = h.v[k].i != 0;
    }
    return h;
  }
  case F_REDUCE: return ref_reduce(r, sh, &in[0]);
  case F_SCAN: return ref_scan(r->op, &in[0], sh->axis);
  case F_MOVE: return ref_move(r, sh, &in[0]);
  case F_CAT:
    if (r->op == M_CAT) return ref_cat(&in[0], &in[1], sh->axis);
    else {
      int ax = sh->axis < 0 ? sh->axis + in[0].ndim + 1 : sh->axis;
      int64_t s[TR_MAXDIM];
      for (int d = 0, j = 0; d <= in[0].ndim; d++) s[d] = d == ax ? 1 : in[0].shape[j++];
      href a = tr_reshape(&in[0], in[0].ndim + 1, s), b = tr_reshape(&in[1], in[0].ndim + 1, s), h = ref_cat(&a, &b, ax);
      tr_free(&a), tr_free(&b);
      return h;
    }
  case F_MATMUL: return tr_matmul(&in[0], &in[1]);
  case F_SOFTMAX: return tr_softmax(&in[0], sh->axis, r->op == SM_LOGSOFTMAX);
  case F_CONV: return tr_conv2d(&in[0], &in[1], NULL, sh->axis, sh->keepdim);
  case F_POOL: return ref_pool(r->op, &in[0]);
  case F_NORM: return ref_norm(r->op, &in[0], r->op == N_LAYER ? NULL : &in[1], r->op == N_LAYER_AFFINE ? &in[2] : NULL, sh->axis);
  case F_ATTN: return ref_attn(&in[0], &in[1], &in[2], sh->axis == 1);
  case F_INDEX: return ref_index(r->op, &in[0], &in[1], sh->axis);
  case F_SORT: return ref_sort(r, sh, &in[0]);
  default:
    if (r->op == X_CUMSUM_DIV) {
      href q = tr_binary(TR_DIV, &in[0], &in[1]);
      href flat = tr_reshape(&q, 1, (const int64_t[]){q.n}), h = ref_scan(C_CUMSUM, &flat, 0);
      tr_free(&q), tr_free(&flat);
      return h;
    } else if (r->op == X_MATMUL_ZEROS) {
      href z = tr_new(in[0].dt, 2, (const int64_t[]){in[0].shape[1], 1}), h = tr_matmul(&in[0], &z); /* calloc: zeros */
      tr_free(&z);
      return h;
    } else {
      href m = tr_binary(TR_MUL, &in[0], &in[1]), s = tr_binary(TR_ADD, &m, &in[0]), h = tr_unary(TR_RELU, &s);
      tr_free(&m), tr_free(&s);
      return h;
    }
  }
}

/* the inputs a row takes for a shape case (norms: x plus weight/bias of the normalized dims) */
static int row_nin(const bo_row *r, const bo_shape *sh) {
  if (r->family == F_NORM) return r->op == N_LAYER ? 1 : r->op == N_LAYER_AFFINE ? 3 : 2;
  if (r->family == F_INDEX && r->op == I_ONE_HOT) return 1;
  return sh->nin;
}
static bo_shape row_shape(const bo_row *r, const bo_shape *sh) {
  bo_shape s = *sh;
  if (r->family == F_NORM) { /* weight / bias: the last axis dims of x */
    for (int i = 1; i < 3; i++) {
      s.ndim[i] = sh->axis;
      for (int d = 0; d < sh->axis; d++) s.s[i][d] = sh->s[0][sh->ndim[0] - sh->axis + d];
      s.layout[i] = L_C;
    }
  }
  if (r->family == F_MOVE && (r->op == M_SQUEEZE)) { /* (R, 1, C) */
    s.ndim[0] = 3;
    s.s[0][2] = sh->s[0][1], s.s[0][1] = 1;
  }
  return s;
}

/* ---------------------------------------------------------------- builders */

static tkc_tensor *bo_build(const bo_row *r, const bo_shape *sh, tkc_ctx *ctx, tkc_tensor **in, const href *hin) {
  tkc_tensor *a = in[0], *b = in[1], *c = in[2];
  int ax = sh->axis;
  switch (r->family) {
  case F_UNARY:
    switch (r->op) {
    case TR_NEG: return tkc_neg(a);
    case TR_ABS: return tkc_abs(a);
    case TR_RECIP: return tkc_recip(a);
    case TR_SQRT: return tkc_sqrt(a);
    case TR_EXP: return tkc_exp(a);
    case TR_EXP2: return tkc_exp2(a);
    case TR_LOG: return tkc_log(a);
    case TR_LOG2: return tkc_log2(a);
    case TR_SIN: return tkc_sin(a);
    case TR_COS: return tkc_cos(a);
    case TR_TANH: return tkc_tanh(a);
    case TR_SIGMOID: return tkc_sigmoid(a);
    case TR_RELU: return tkc_relu(a);
    case U_FLOOR: return tkc_floor(a);
    case U_CEIL: return tkc_ceil(a);
    case U_ROUND: return tkc_round(a);
    case U_TRUNC: return tkc_trunc(a);
    case U_RSQRT: return tkc_rsqrt(a);
    case U_SQUARE: return tkc_square(a);
    case U_SIGN: return tkc_sign(a);
    case U_ERF: return tkc_erf(a);
    case U_GELU: return tkc_gelu(a, 0);
    case U_GELU_TANH: return tkc_gelu(a, 1);
    case U_SILU: return tkc_silu(a);
    case U_LEAKY: return tkc_leaky_relu(a, 0.125);
    case U_ELU: return tkc_elu(a, 0.5);
    case U_SELU: return tkc_selu(a);
    case U_SOFTPLUS: return tkc_softplus(a, 1.0);
    case U_HSIG: return tkc_hardsigmoid(a);
    case U_HSWISH: return tkc_hardswish(a);
    case U_MISH: return tkc_mish(a);
    case U_TAN: return tkc_tan(a);
    case U_ASIN: return tkc_asin(a);
    case U_ACOS: return tkc_acos(a);
    case U_ATAN: return tkc_atan(a);
    case U_SINH: return tkc_sinh(a);
    case U_COSH: return tkc_cosh(a);
    case U_ISNAN: return tkc_isnan(a);
    case U_ISINF: return tkc_isinf(a);
    case U_ISFINITE: return tkc_isfinite(a);
    case U_LOG1P: return tkc_log1p(a);
    case U_EXPM1: return tkc_expm1(a);
    default: return tkc_clamp(a, -2.5, 3.5);
    }
  case F_BINARY:
    switch (r->op) {
    case TR_ADD: return tkc_add(a, b);
    case TR_SUB: return tkc_sub(a, b);
    case TR_MUL: return tkc_mul(a, b);
    case TR_DIV: return tkc_div(a, b);
    case TR_IDIV: return tkc_idiv(a, b);
    case TR_MOD: return tkc_mod(a, b);
    case TR_MAXIMUM: return tkc_maximum(a, b);
    case TR_MINIMUM: return tkc_minimum(a, b);
    case TR_POW: return tkc_pow(a, b);
    case TR_LT: return tkc_lt(a, b);
    case TR_LE: return tkc_le(a, b);
    case TR_GT: return tkc_gt(a, b);
    case TR_GE: return tkc_ge(a, b);
    case TR_EQ: return tkc_eq(a, b);
    case TR_NE: return tkc_ne(a, b);
    case TR_AND: return tkc_and(a, b);
    case TR_OR: return tkc_or(a, b);
    case TR_XOR: return tkc_xor(a, b);
    case TR_SHL: return tkc_shl(a, b);
    case TR_SHR: return tkc_shr(a, b);
    case B_DOT4: return tkc_dot4(a, b);
    default: return tkc_atan2(a, b);
    }
  case F_TERNARY: return r->op == T_WHERE ? tkc_where(a, b, c) : tkc_lerp(a, b, c);
  case F_CAST: return tkc_cast(a, (tkc_dtype)r->param);
  case F_BITCAST: return tkc_bitcast(a, (tkc_dtype)r->param);
  case F_REDUCE: {
    int n = ax == ALL ? 0 : 1, kd = sh->keepdim;
    const int *axes = ax == ALL ? NULL : &ax;
    switch (r->op) {
    case R_SUM: return tkc_sum(a, n, axes, kd);
    case R_MAX: return tkc_max(a, n, axes, kd);
    case R_MIN: return tkc_min(a, n, axes, kd);
    case R_MEAN: return tkc_mean(a, n, axes, kd);
    case R_PROD: return tkc_prod(a, n, axes, kd);
    case R_VAR: return tkc_var(a, n, axes, kd, 1.0);
    case R_STD: return tkc_std(a, n, axes, kd, 1.0);
    case R_LSE: return tkc_logsumexp(a, n, axes, kd);
    case R_ANY: return tkc_any(a, n, axes, kd);
    case R_ALL: return tkc_all(a, n, axes, kd);
    case R_ARGMAX: return ax == ALL ? tkc_argmax(tkc_flatten(a, 0, -1), 0, 0) : tkc_argmax(a, ax, kd);
    case R_ARGMIN: return ax == ALL ? tkc_argmin(tkc_flatten(a, 0, -1), 0, 0) : tkc_argmin(a, ax, kd);
    default: return tkc_sum_acc(a, n, axes, kd, (tkc_dtype)r->param);
    }
  }
  case F_SCAN: return r->op == C_CUMSUM ? tkc_cumsum(a, ax) : r->op == C_CUMMAX ? tkc_cummax(a, ax) : tkc_cumprod(a, ax);
  case F_MOVE: {
    int64_t p[2 * TR_MAXDIM], R = tkc_dim(a, 0), C = tkc_dim(a, 1);
    move_params(r->op, &hin[0], sh, p);
    switch (r->op) {
    case M_RESHAPE: return tkc_reshape(a, 3, (const int64_t[]){C, 1, R});
    case M_PERMUTE: return tkc_permute(a, (const int[]){1, 0});
    case M_EXPAND: return tkc_expand(tkc_reshape(a, 3, (const int64_t[]){R, 1, C}), 3, (const int64_t[]){-1, 3, -1});
    case M_PAD: return tkc_pad(a, p, 1.0);
    case M_SHRINK: return tkc_shrink(a, p);
    case M_FLIP: return tkc_flip(a, 1, &sh->axis);
    case M_CONTIG: return tkc_contiguous(a);
    case M_SQUEEZE: return tkc_squeeze(a, 1, (const int[]){1});
    case M_UNSQUEEZE: return tkc_unsqueeze(a, -1);
    case M_REPEAT: return tkc_repeat(a, 3, (const int64_t[]){2, 1, 3});
    case M_FLATTEN: return tkc_flatten(a, 0, 1);
    case M_TRIL: return tkc_tril(a, 1);
    case M_TRIU: return tkc_triu(a, -1);
    default: {
      tkc_tensor *out[2] = {NULL, NULL};
      int n = tkc_chunk(a, ax, 2, out);
      return n == 2 ? out[1] : n == 1 ? tkc_shrink(out[0], (const int64_t[]){ax == 0 ? R : 0, R, ax == 1 ? C : 0, C}) : NULL;
    }
    }
  }
  case F_CAT: {
    tkc_tensor *ts[2] = {a, b};
    return r->op == M_CAT ? tkc_cat(2, ts, ax) : tkc_stack(2, ts, ax);
  }
  case F_MATMUL: return tkc_matmul(a, b);
  case F_SOFTMAX: return r->op == SM_SOFTMAX ? tkc_softmax(a, ax) : tkc_log_softmax(a, ax);
  case F_CONV: return tkc_conv2d(a, b, NULL, sh->axis, sh->keepdim);
  case F_POOL:
    if (r->op == P_MAX) return tkc_max_pool2d(a, (const int[]){3, 3}, (const int[]){2, 2}, (const int[]){1, 1}, NULL, 0);
    return tkc_avg_pool2d(a, (const int[]){2, 2}, (const int[]){1, 1}, (const int[]){0, 0}, 0, 1);
  case F_NORM:
    if (r->op == N_RMS) return tkc_rms_norm(a, ax, b, 1e-5);
    return tkc_layer_norm(a, ax, r->op == N_LAYER ? NULL : b, r->op == N_LAYER ? NULL : c, 1e-5);
  case F_ATTN: return tkc_scaled_dot_product_attention(a, b, c, NULL, sh->axis == 1, 1.0 / sqrt((double)tkc_dim(a, -1)));
  case F_INDEX:
    if (r->op == I_ONE_HOT) return tkc_one_hot(a, 5);
    return r->op == I_GATHER ? tkc_gather(a, ax, b) : tkc_index_select(a, ax, tkc_flatten(b, 0, -1));
  case F_SORT: {
    tkc_tensor *v = NULL, *ix = NULL;
    bool topk = r->op == O_TOPK_VALUES || r->op == O_TOPK_INDICES, want_idx = r->op == O_SORT_INDICES || r->op == O_TOPK_INDICES;
    int64_t n = tkc_dim(a, ax), k = r->param < n ? r->param + 1 : n;
    tkc_status st = topk ? tkc_topk(a, k, ax, 1, want_idx ? NULL : &v, want_idx ? &ix : NULL)
                         : tkc_sort(a, ax, sh->keepdim, want_idx ? NULL : &v, want_idx ? &ix : NULL);
    return st ? NULL : want_idx ? ix : v;
  }
  default:
    if (r->op == X_CUMSUM_DIV) return tkc_cumsum(tkc_flatten(tkc_div(a, b), 0, -1), 0);
    if (r->op == X_MATMUL_ZEROS) return tkc_matmul(a, tkc_full(ctx, tkc_dtype_of(a), 2, (const int64_t[]){tkc_dim(a, 1), 1}, 0.0));
    return tkc_relu(tkc_add(tkc_mul(a, b), a));
  }
}

/* whether a row takes this dtype on this case at all (ops with rules of their own) */
static bool row_case_ok(const bo_row *r, const bo_shape *sh, tkc_dtype dt) {
  if (r->family == F_MOVE && (r->op == M_TRIL || r->op == M_TRIU) && sh->ndim[0] < 2) return false;
  if (r->family == F_REDUCE && r->op >= R_PROD && sh->s[0][0] == 0) return false; /* empty groups: covered by sum/max rows */
  if (r->family == F_REDUCE && (r->op == R_VAR || r->op == R_STD)) { /* n - 1 > 0 */
    int64_t n = 1;
    for (int d = 0; d < sh->ndim[0]; d++)
      if (sh->axis == ALL || d == (sh->axis < 0 ? sh->axis + sh->ndim[0] : sh->axis)) n *= sh->s[0][d];
    if (n < 2) return false;
  }
  (void)dt;
  return true;
}

/* ---------------------------------------------------------------- running */

/* the polynomial ops are fitted for float32: float64 inputs get float32-grade accuracy (tkc/ops_math.h) */
static bool float32_grade(const bo_row *r, tkc_dtype dt) {
  if (dt != TKC_FLOAT64) return false;
  if (r->family == F_BINARY) return r->op == B_ATAN2;
  return r->family == F_UNARY && (r->op == U_ERF || r->op == U_GELU || r->op == U_GELU_TANH || r->op == U_ATAN || r->op == U_ASIN ||
                                  r->op == U_ACOS);
}
static double row_rtol(const bo_row *r, tkc_dtype dt) {
  if (float32_grade(r, dt)) return 1e-6;
  if (r->kind == 2) return tr_rtol(dt, 1) * (dt == TKC_FLOAT32 ? 10 : 2);
  return tr_rtol(dt, r->kind);
}
static double row_atol(const bo_row *r, tkc_dtype dt) {
  if (float32_grade(r, dt)) return 1e-6;
  if (r->kind == 2) return tr_atol(dt, 1) * (dt == TKC_FLOAT32 ? 10 : 2);
  return tr_atol(dt, r->kind);
}

/* INTERP's result bytes per (row, dtype, case), for every other device to be compared with */
typedef struct interp_result {
  bool done, ok;
  void *bytes;
  size_t n;
} interp_result;
static interp_result interp_cache[NTROWS][TR_NDT][12];
static tkc_ctx *interp_ctx;

/* Builds and realizes the row on ctx; the result bytes (malloc'ed) or NULL with a problem reported */
static void *run_on(tkc_ctx *ctx, const char *dev, const bo_row *r, int ri, int dti, int ci, tkc_dtype dt, const bo_shape *sh0, href *want,
                    size_t *nbytes) {
  bo_shape sh = row_shape(r, sh0);
  int nin = row_nin(r, &sh);
  href hin[MAXIN];
  tkc_tensor *in[MAXIN] = {NULL, NULL, NULL};
  tkc_scope_begin(ctx);
  for (int i = 0; i < nin; i++) in[i] = bo_input(ctx, r, ri, dti, ci, dt, &sh, i, &hin[i]);
  if (want) *want = bo_reference(r, &sh, hin);
  if (want && !tr_dev_supports(dev, want->dt)) { /* a result dtype the device cannot hold: not run there */
    tkc_scope_end(ctx);
    for (int i = 0; i < nin; i++) tr_free(&hin[i]);
    *nbytes = SIZE_MAX;
    return NULL;
  }
  tkc_tensor *out = bo_build(r, &sh, ctx, in, hin);
  void *bytes = NULL;
  char what[200];
  snprintf(what, sizeof what, "%s %s case %d%s%s on %s", r->name, tr_dn(dt), ci, LAYOUT_NAME[sh.layout[0]], nin > 1 ? LAYOUT_NAME[sh.layout[1]] : "", dev);
  if (!out) tr_problem("%s: building it failed: %s", what, tkc_last_error());
  else {
    *nbytes = (size_t)tkc_numel(out) * tr_size(tkc_dtype_of(out));
    bytes = malloc(*nbytes ? *nbytes : 1);
    tkc_status st = tkc_copy_out(out, bytes, *nbytes);
    if (st) {
      tr_problem("%s: %s: %s", what, tkc_status_str(st), tkc_last_error());
      free(bytes);
      bytes = NULL;
    } else if (want && tr_check_meta(out, want, what)) { /* against the C reference */
      for (int64_t k = 0, shown = 0; k < want->n; k++) {
        rv got = tr_load(want->dt, bytes, (size_t)k);
        if (!tr_close(want->dt, got, want->v[k], row_rtol(r, want->dt), row_atol(r, want->dt)) && shown++ < 3) {
          char gs[48], ws[48];
          tr_problem("%s: element %lld: got %s, the C reference %s", what, (long long)k, tr_fmt(want->dt, got, gs, sizeof gs),
                     tr_fmt(want->dt, want->v[k], ws, sizeof ws));
        }
      }
    }
  }
  tkc_scope_end(ctx);
  for (int i = 0; i < nin; i++) tr_free(&hin[i]);
  return bytes;
}

static interp_result *interp_of(const bo_row *r, int ri, int dti, int ci, tkc_dtype dt, const bo_shape *sh) {
  interp_result *ir = &interp_cache[ri][dti][ci];
  if (ir->done) return ir;
  ir->done = true;
  if (!interp_ctx) interp_ctx = tkc_ctx_new("INTERP");
  href want;
  ir->bytes = run_on(interp_ctx, "INTERP", r, ri, dti, ci, dt, sh, &want, &ir->n);
  tr_free(&want);
  ir->ok = ir->bytes != NULL;
  return ir;
}

/* Which shape cases a dtype runs on a device (every kernel a compiled device builds costs a compiler
 * run the first time: thousands of them made this suite the slowest of CI): INTERP runs every case of
 * the row's first dtype and two of each other dtype; the compiled devices every case of the first
 * dtype and, in every other row (alternating, so that neighbouring rows of a family cover each dtype),
 * one case (rotating, so that the rows together still cover every layout) of each other dtype.
 * TKC_BACKEND_OPS_FULL=1 runs INTERP's set everywhere. */
static bool case_sampled(const char *dev, int row, int nth_dtype, int ci, int ncases) {
  const char *full = getenv("TKC_BACKEND_OPS_FULL");
  if (!strcmp(dev, "INTERP") || (full && !strcmp(full, "1"))) return nth_dtype == 0 || ci == 1 || ci == 2 + nth_dtype % 3;
  return nth_dtype == 0 || ((row + nth_dtype) % 2 == 0 && ci == (row + nth_dtype) % ncases);
}

/* whether dev runs here; else why. A build with webgpu.h (TKC_WEBGPU_EXPECTED) must have the WEBGPU
 * device unless TKC_SKIP_WEBGPU=1, and TKC_REQUIRE_CUDA=1 (scripts/gpu-check.sh) requires CUDA: a CI
 * machine missing the driver fails instead of skipping. */
static bool device_ok(const char *dev, char *why, size_t n) {
  const char *only = getenv("TKC_TEST_DEVICES");
  if (only && *only && !strstr(only, dev)) {
    snprintf(why, n, "not in TKC_TEST_DEVICES");
    return false;
  }
  if (tkc_device_available(dev)) return true;
  tkc_device_get(dev);
  snprintf(why, n, "%s", tkc_last_error());
  const char *skip_wgpu = getenv("TKC_SKIP_WEBGPU"), *need_cuda = getenv("TKC_REQUIRE_CUDA");
  bool required = !strcmp(dev, "CUDA") && need_cuda && !strcmp(need_cuda, "1");
#ifdef TKC_WEBGPU_EXPECTED
  required |= !strcmp(dev, "WEBGPU") && !(skip_wgpu && !strcmp(skip_wgpu, "1"));
#endif
  (void)skip_wgpu;
  if (required) fail_msg("%s is required here but unavailable: %s", dev, why);
  return false;
}

static void run_tensor_rows(const char *dev, int first, int last) {
  char why[256];
  if (!device_ok(dev, why, sizeof why)) {
    printf("skipped: %s unavailable here: %s\n", dev, why);
    skip();
  }
  tr_begin();
  tkc_ctx *ctx = strcmp(dev, "INTERP") ? tkc_ctx_new(dev) : NULL;
  int ncases = 0;
  for (int ri = first; ri < last; ri++) {
    const bo_row *r = &TENSOR_ROWS[ri];
    if (r->no_webgpu && !strcmp(dev, "WEBGPU")) {
      printf("  %s: not on WEBGPU (WGSL may assume there are no NaN/inf)\n", r->name);
      continue;
    }
    for (int dti = 0, nth = 0; dti < TR_NDT; dti++) {
      tkc_dtype dt = tr_all_dtypes[dti];
      if (!(r->dtypes & DT(dt))) continue;
      bool supported = tr_dev_supports(dev, dt) && !(r->family == F_CAST && !tr_dev_supports(dev, (tkc_dtype)r->param)) &&
                       !(r->family == F_BITCAST && !tr_dev_supports(dev, (tkc_dtype)r->param));
      for (int i = 0; i < MAXIN; i++)
        if (r->in_dt[i] != SAME && !tr_dev_supports(dev, (tkc_dtype)r->in_dt[i])) supported = false;
      int nshapes = 0;
      while (r->shapes[nshapes].nin) nshapes++;
      for (int ci = 0; ci < nshapes; ci++) {
        if (!case_sampled(dev, ri, nth, ci, nshapes) || !row_case_ok(r, &r->shapes[ci], dt) || !supported) continue;
        ncases++;
        if (!ctx) { /* INTERP: its own result against the reference */
          interp_of(r, ri, dti, ci, dt, &r->shapes[ci]);
          continue;
        }
        href want;
        size_t n = 0;
        void *got = run_on(ctx, dev, r, ri, dti, ci, dt, &r->shapes[ci], &want, &n);
        if (!got && n == SIZE_MAX) {
          tr_free(&want);
          continue;
        }
        interp_result *ir = interp_of(r, ri, dti, ci, dt, &r->shapes[ci]);
        if (got && ir->ok) { /* against INTERP, with twice the reference tolerance */
          if (n != ir->n) tr_problem("%s %s case %d on %s: %zu bytes, INTERP %zu", r->name, tr_dn(dt), ci, dev, n, ir->n);
          else
            for (int64_t k = 0, shown = 0; k < want.n; k++) {
              rv g = tr_load(want.dt, got, (size_t)k), w = tr_load(want.dt, ir->bytes, (size_t)k);
              if (!tr_close(want.dt, g, w, 2 * row_rtol(r, want.dt), 2 * row_atol(r, want.dt)) && shown++ < 3) {
                char gs[48], ws[48];
                tr_problem("%s %s case %d on %s: element %lld: got %s, INTERP %s", r->name, tr_dn(dt), ci, dev, (long long)k,
                           tr_fmt(want.dt, g, gs, sizeof gs), tr_fmt(want.dt, w, ws, sizeof ws));
              }
            }
        }
        free(got);
        tr_free(&want);
      }
      nth++;
    }
  }
  printf("  %d cases on %s\n", ncases, dev);
  tkc_ctx_free(ctx);
  TR_END();
}

/* ================================================================ the ALU table (hand-built kernels) */

enum { AN = 40 }; /* elements per input set */

/* an input set: values for operands a and b of one dtype; defined = C's result is defined on them */
typedef struct alu_inputs {
  const char *name;
  tkc_dtype dt;
  int n;
  void (*fill)(tkc_dtype dt, int n, void *a, void *b);
  bool defined;
} alu_inputs;

/* a row: out = op(a, b) (or op(a), cast/bitcast to out_dt) on an input set; tol > 0: relative
 * tolerance (transcendental ops), else exact (floats by bits, any NaN equal to any NaN) */
enum { FX_NONE, FX_SCALE, FX_X50_I8, FX_NANBITS, FX_VEC4 };
typedef struct alu_row {
  int set;
  tkc_op op;
  int out_dt; /* SAME = the input dtype (compares: bool) */
  double tol;
  int fx; /* FX_NONE: out = op(a, b); else one of the compound expressions (against INTERP only) */
} alu_row;

static uint64_t alu_rng;
static uint64_t arnd(void) {
  alu_rng ^= alu_rng << 13, alu_rng ^= alu_rng >> 7, alu_rng ^= alu_rng << 17;
  return alu_rng;
}

static void fill_random(tkc_dtype dt, int n, void *a, void *b) { /* any values of dt (finite floats, halves small) */
  for (int i = 0; i < n; i++)
    for (int k = 0; k < 2; k++) {
      void *p = k ? b : a;
      if (tr_isf(dt)) tr_store(dt, p, (size_t)i, tr_from_double(dt, dt == TKC_FLOAT16 || dt == TKC_BFLOAT16 ? (double)(arnd() % 64) / 8 - 4
                                                                                                         : (double)(arnd() % 20001) / 100 - 100));
      else tr_store(dt, p, (size_t)i, (rv){0, tr_wrap(dt, arnd())});
    }
}
static void fill_divmod(tkc_dtype dt, int n, void *a, void *b) { /* C-defined integer division */
  for (int i = 0; i < n; i++) {
    int64_t x = (int64_t)(arnd() % 201) - 100, y = (int64_t)(arnd() % 19) - 9;
    if (y == 0) y = 3;
    tr_store(dt, a, (size_t)i, (rv){0, x});
    tr_store(dt, b, (size_t)i, (rv){0, y});
  }
}
static void fill_shifts(tkc_dtype dt, int n, void *a, void *b) { /* counts below the width */
  for (int i = 0; i < n; i++) {
    tr_store(dt, a, (size_t)i, (rv){0, tr_wrap(dt, arnd())});
    tr_store(dt, b, (size_t)i, (rv){0, (int64_t)(arnd() % (tr_size(dt) * 8))});
  }
}
static void fill_unary_pos(tkc_dtype dt, int n, void *a, void *b) {
  for (int i = 0; i < n; i++) tr_store(dt, a, (size_t)i, tr_from_double(dt, 0.25 + i * 0.8)), tr_store(dt, b, (size_t)i, tr_from_double(dt, 1));
}
static void fill_cast_src(tkc_dtype dt, int n, void *a, void *b) { /* in range of every target */
  static const double fv[9] = {0.0, 0.5, 1.0, 2.75, 3.0, 9.9, 42.25, 99.0, 100.5};
  static const int64_t iv[9] = {0, 1, -1, 7, -100, 127, 100, -128, 55};
  for (int i = 0; i < n; i++) {
    rv v = tr_isf(dt) ? tr_from_double(dt, fv[i % 9]) : (rv){0, tr_wrap(dt, (uint64_t)(dt == TKC_BOOL ? i & 1 : iv[i % 9]))};
    tr_store(dt, a, (size_t)i, v), tr_store(dt, b, (size_t)i, v);
  }
}
static void fill_bool(tkc_dtype dt, int n, void *a, void *b) {
  (void)dt;
  for (int i = 0; i < n; i++) ((uint8_t *)a)[i] = (uint8_t)(i & 1), ((uint8_t *)b)[i] = (uint8_t)((i >> 1) & 1);
}
static void fill_u64_cmp(tkc_dtype dt, int n, void *a, void *b) {
  static const uint64_t av[8] = {0, 1, UINT64_MAX, 1ull << 63, 5, (1ull << 63) - 1, 42, UINT64_MAX - 1};
  static const uint64_t bv[8] = {1, 0, 0, 1, 5, 1ull << 63, 43, UINT64_MAX};
  (void)dt;
  for (int i = 0; i < n; i++) ((uint64_t *)a)[i] = av[i % 8], ((uint64_t *)b)[i] = bv[i % 8];
}
static void fill_bitpattern(tkc_dtype dt, int n, void *a, void *b) { /* finite floats' patterns */
  for (int i = 0; i < n; i++) {
    uint64_t u = arnd() & 0x3f7fffffffffffffull;
    memcpy((char *)a + (size_t)i * tr_size(dt), &u, tr_size(dt));
    if (tr_size(dt) == 2) ((uint16_t *)a)[i] &= 0x3bff;
    memcpy((char *)b + (size_t)i * tr_size(dt), (char *)a + (size_t)i * tr_size(dt), tr_size(dt));
  }
}
/* edge values (C would be undefined or backends differ): from test_wgsl's and test_llvm's edge checks */
static void fill_edge_int(tkc_dtype dt, int n, void *a, void *b) {
  static const int32_t av[16] = {7, -7, 100, INT32_MIN, INT32_MIN, INT32_MAX, 0, -1, 5, -5, 123456, -99, 1, 2, 3, 40000};
  static const int32_t bv[16] = {0, 0, 3, -1, 1, -1, 0, 31, 32, 33, -1, 64, -3, 40, 7, 0};
  for (int i = 0; i < n; i++) {
    int32_t x, y;
    if (i < 16) x = av[i], y = bv[i];
    else { /* test_llvm's: INT_MIN, divisors 0 and -1, shift counts -6 .. 63 */
      int j = i - 16;
      x = j % 3 == 0 ? INT32_MIN : j * 7919 - 50000;
      y = j % 4 == 0 ? 0 : j % 4 == 1 ? -1 : j % 2 ? j - 12 : j * 3 - 6;
      if (dt == TKC_INT8) x = j % 3 == 0 ? -128 : j * 11 - 100;
      if (dt == TKC_UINT32) x = (int32_t)((uint32_t)j * 2654435761u), y = j % 3 == 0 ? 0 : y;
    }
    tr_store(dt, a, (size_t)i, (rv){0, tr_wrap(dt, (uint64_t)(int64_t)x)});
    tr_store(dt, b, (size_t)i, (rv){0, tr_wrap(dt, (uint64_t)(int64_t)y)});
  }
}
static void fill_edge_float(tkc_dtype dt, int n, void *a, void *b) {
  static const double sp[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.0, -1.0, FLT_MAX, -FLT_MAX, 3e38, 1e-40, 2.5,
                              3e9, -3e9, 1e10, 300.5, -300.5, 70000.0, -40000.0, 1.5, -1.5, 65504.0, 65520.0, 1e300};
  enum { NS = sizeof sp / sizeof *sp };
  for (int i = 0; i < n; i++) {
    double x = sp[i % NS], y = sp[(i * 5 + 3) % NS];
    if (dt == TKC_FLOAT64 && i >= NS) x = ldexp(1.0, 127) * (2 - ldexp(1.0, -8)) + (double)(i - NS) * ldexp(1.0, 100); /* around bf16's max */
    tr_store(dt, a, (size_t)i, (rv){tr_round(dt, x), 0});
    tr_store(dt, b, (size_t)i, (rv){tr_round(dt, y), 0});
  }
}
static void fill_edge_half(tkc_dtype dt, int n, void *a, void *b) { /* halves: large ones, +-inf, a quiet NaN, random */
  for (int i = 0; i < n; i++) {
    uint16_t x, y = (uint16_t)(0x3f80 + i * 0x0101);
    if (dt == TKC_BFLOAT16) x = (uint16_t)(i < 12 ? (i * 0x1357) & 0x7fff : i < 21 ? 0x7f70 + (i - 12) : i == 21 ? 0x7f80 : i == 22 ? 0xff80 : i == 23 ? 0x7fc0 : (int)(arnd() & 0xbfff));
    else x = i < 24 ? ref_half_bits(i * 0.37 - 3) : (uint16_t)(arnd() & 0xbfff), y = (uint16_t)(arnd() & 0xbfff);
    ((uint16_t *)a)[i] = x, ((uint16_t *)b)[i] = dt == TKC_FLOAT16 && i < 24 ? x : y;
  }
}
static void fill_small_halves(tkc_dtype dt, int n, void *a, void *b) { /* random bits of finite halves, |x| < 2 */
  (void)dt;
  for (int i = 0; i < n; i++) ((uint16_t *)a)[i] = (uint16_t)(arnd() & 0xbfff), ((uint16_t *)b)[i] = (uint16_t)(arnd() & 0xbfff);
}
static void fill_edge_wide(tkc_dtype dt, int n, void *a, void *b) { /* 64-bit values near the top, bytes */
  for (int i = 0; i < n; i++) {
    int64_t v = i % 2 ? INT64_MAX - i : (int64_t)i * 40000 - 300000;
    if (tr_size(dt) == 8) ((int64_t *)a)[i] = v, ((int64_t *)b)[i] = (int64_t)arnd();
    else ((uint8_t *)a)[i] = (uint8_t)(i * 37), ((uint8_t *)b)[i] = (uint8_t)(i * 11);
  }
}

enum { /* input sets */
  S_RAND_BOOL, S_RAND_I8, S_RAND_U8, S_RAND_I16, S_RAND_U16, S_RAND_I32, S_RAND_U32, S_RAND_I64, S_RAND_U64, S_RAND_F16, S_RAND_BF16,
  S_RAND_F32, S_RAND_F64, /* in tr_all_dtypes' order */
  S_CAST_BOOL, S_CAST_I8, S_CAST_U8, S_CAST_I16, S_CAST_U16, S_CAST_I32, S_CAST_U32, S_CAST_I64, S_CAST_U64, S_CAST_F16, S_CAST_BF16,
  S_CAST_F32, S_CAST_F64,
  S_DIVMOD_I32, S_DIVMOD_I8, S_DIVMOD_I64, S_SHIFT_U32, S_SHIFT_I64, S_POS_F32, S_POS_F64, S_BOOL, S_U64_CMP, S_EDGE_BOOL, S_BITS_F32, S_BITS_I32,
  S_BITS_U32, S_BITS_F64, S_BITS_I64, S_BITS_F16, S_BITS_U16,
  S_EDGE_I32, S_EDGE_U32, S_EDGE_I8, S_EDGE_F32, S_EDGE_F64, S_EDGE_BF16, S_EDGE_F16, S_EDGE_I64, S_EDGE_U64, S_EDGE_U8, S_HALF_BF16, S_HALF_F16
};
#define RSET(d) {"random " #d, d, AN, fill_random, true}
#define CSET(d) {"in range " #d, d, 18, fill_cast_src, true}
static const alu_inputs ALU_SETS[] = {
    RSET(TKC_BOOL), RSET(TKC_INT8), RSET(TKC_UINT8), RSET(TKC_INT16), RSET(TKC_UINT16), RSET(TKC_INT32), RSET(TKC_UINT32),
    RSET(TKC_INT64), RSET(TKC_UINT64), RSET(TKC_FLOAT16), RSET(TKC_BFLOAT16), RSET(TKC_FLOAT32), RSET(TKC_FLOAT64),
    CSET(TKC_BOOL), CSET(TKC_INT8), CSET(TKC_UINT8), CSET(TKC_INT16), CSET(TKC_UINT16), CSET(TKC_INT32), CSET(TKC_UINT32),
    CSET(TKC_INT64), CSET(TKC_UINT64), CSET(TKC_FLOAT16), CSET(TKC_BFLOAT16), CSET(TKC_FLOAT32), CSET(TKC_FLOAT64),
    {"divmod int32", TKC_INT32, AN, fill_divmod, true},  {"divmod int8", TKC_INT8, AN, fill_divmod, true},
    {"divmod int64", TKC_INT64, AN, fill_divmod, true},  {"shifts uint32", TKC_UINT32, 32, fill_shifts, true},
    {"shifts int64", TKC_INT64, 32, fill_shifts, true},  {"positive float32", TKC_FLOAT32, 17, fill_unary_pos, true},
    {"positive float64", TKC_FLOAT64, 17, fill_unary_pos, true}, {"bools", TKC_BOOL, 16, fill_bool, true},
    {"uint64 compares", TKC_UINT64, 8, fill_u64_cmp, true}, {"edge bools", TKC_BOOL, 16, fill_bool, false},
    {"bits float32", TKC_FLOAT32, 16, fill_random, true}, {"bits int32", TKC_INT32, 16, fill_bitpattern, true},
    {"bits uint32", TKC_UINT32, 16, fill_bitpattern, true}, {"bits float64", TKC_FLOAT64, 16, fill_random, true},
    {"bits int64", TKC_INT64, 16, fill_bitpattern, true}, {"bits float16", TKC_FLOAT16, 16, fill_random, true},
    {"bits uint16", TKC_UINT16, 16, fill_bitpattern, true},
    {"edge int32", TKC_INT32, AN, fill_edge_int, false}, {"edge uint32", TKC_UINT32, AN, fill_edge_int, false},
    {"edge int8", TKC_INT8, AN, fill_edge_int, false},   {"edge float32", TKC_FLOAT32, 30, fill_edge_float, false},
    {"edge float64", TKC_FLOAT64, 30, fill_edge_float, false}, {"edge bfloat16", TKC_BFLOAT16, AN, fill_edge_half, false},
    {"edge float16", TKC_FLOAT16, AN, fill_edge_half, false}, {"edge int64", TKC_INT64, 24, fill_edge_wide, false},
    {"edge uint64", TKC_UINT64, 24, fill_edge_wide, false}, {"edge uint8", TKC_UINT8, 24, fill_edge_wide, false},
    {"small bfloat16", TKC_BFLOAT16, 64, fill_small_halves, false}, {"small float16", TKC_FLOAT16, 64, fill_small_halves, false},
};

#define R_ADD_ALL(s) {s, TKC_OP_ADD, SAME, 0, 0}
#define CAST_ALL(s)                                                                                                                  \
  {s, TKC_OP_CAST, TKC_BOOL, 0, 0}, {s, TKC_OP_CAST, TKC_INT8, 0, 0}, {s, TKC_OP_CAST, TKC_UINT8, 0, 0}, {s, TKC_OP_CAST, TKC_INT16, 0, 0},      \
      {s, TKC_OP_CAST, TKC_UINT16, 0, 0}, {s, TKC_OP_CAST, TKC_INT32, 0, 0}, {s, TKC_OP_CAST, TKC_UINT32, 0, 0}, {s, TKC_OP_CAST, TKC_INT64, 0, 0}, \
      {s, TKC_OP_CAST, TKC_UINT64, 0, 0}, {s, TKC_OP_CAST, TKC_FLOAT16, 0, 0}, {s, TKC_OP_CAST, TKC_BFLOAT16, 0, 0},                           \
      {s, TKC_OP_CAST, TKC_FLOAT32, 0, 0}, {s, TKC_OP_CAST, TKC_FLOAT64, 0, 0}
#define FTOI_ALL(s)                                                                                                                  \
  {s, TKC_OP_CAST, TKC_INT8, 0, 0}, {s, TKC_OP_CAST, TKC_UINT8, 0, 0}, {s, TKC_OP_CAST, TKC_INT16, 0, 0}, {s, TKC_OP_CAST, TKC_UINT16, 0, 0},    \
      {s, TKC_OP_CAST, TKC_INT32, 0, 0}, {s, TKC_OP_CAST, TKC_UINT32, 0, 0}, {s, TKC_OP_CAST, TKC_INT64, 0, 0}, {s, TKC_OP_CAST, TKC_UINT64, 0, 0}, \
      {s, TKC_OP_CAST, TKC_BOOL, 0, 0}

static const alu_row ALU_ROWS[] = {
    /* every dtype's add (bool: or) */
    R_ADD_ALL(S_RAND_BOOL), R_ADD_ALL(S_RAND_I8), R_ADD_ALL(S_RAND_U8), R_ADD_ALL(S_RAND_I16), R_ADD_ALL(S_RAND_U16),
    R_ADD_ALL(S_RAND_I32), R_ADD_ALL(S_RAND_U32), R_ADD_ALL(S_RAND_I64), R_ADD_ALL(S_RAND_U64), R_ADD_ALL(S_RAND_F16),
    R_ADD_ALL(S_RAND_BF16), R_ADD_ALL(S_RAND_F32), R_ADD_ALL(S_RAND_F64),
    {S_RAND_F32, TKC_OP_MAX, SAME, 0, 0}, {S_RAND_I64, TKC_OP_MUL, SAME, 0, 0}, {S_RAND_I64, TKC_OP_MAX, SAME, 0, 0}, {S_RAND_U64, TKC_OP_MUL, SAME, 0, 0},
    {S_RAND_F32, TKC_OP_CMPLT, SAME, 0, 0}, {S_RAND_F32, TKC_OP_SUB, SAME, 0, 0}, {S_RAND_F32, TKC_OP_FDIV, SAME, 0, 0},
    {S_RAND_F16, TKC_OP_MUL, SAME, 0, 0}, {S_RAND_BF16, TKC_OP_MUL, SAME, 0, 0},
    /* every cast pair on values every target holds */
    CAST_ALL(S_CAST_BOOL), CAST_ALL(S_CAST_I8), CAST_ALL(S_CAST_U8), CAST_ALL(S_CAST_I16), CAST_ALL(S_CAST_U16), CAST_ALL(S_CAST_I32),
    CAST_ALL(S_CAST_U32), CAST_ALL(S_CAST_I64), CAST_ALL(S_CAST_U64), CAST_ALL(S_CAST_F16), CAST_ALL(S_CAST_BF16), CAST_ALL(S_CAST_F32),
    CAST_ALL(S_CAST_F64),
    /* integer division and remainder (C's: toward zero, the dividend's sign), shifts, bitwise ops */
    {S_DIVMOD_I32, TKC_OP_IDIV, SAME, 0, 0}, {S_DIVMOD_I32, TKC_OP_MOD, SAME, 0, 0}, {S_DIVMOD_I8, TKC_OP_IDIV, SAME, 0, 0},
    {S_DIVMOD_I8, TKC_OP_MOD, SAME, 0, 0}, {S_DIVMOD_I64, TKC_OP_IDIV, SAME, 0, 0}, {S_DIVMOD_I64, TKC_OP_MOD, SAME, 0, 0},
    {S_SHIFT_U32, TKC_OP_SHL, SAME, 0, 0}, {S_SHIFT_U32, TKC_OP_SHR, SAME, 0, 0}, {S_SHIFT_U32, TKC_OP_AND, SAME, 0, 0},
    {S_SHIFT_U32, TKC_OP_OR, SAME, 0, 0}, {S_SHIFT_U32, TKC_OP_XOR, SAME, 0, 0}, {S_SHIFT_I64, TKC_OP_SHL, SAME, 0, 0},
    {S_SHIFT_I64, TKC_OP_SHR, SAME, 0, 0},
    /* float math */
    {S_POS_F32, TKC_OP_EXP2, SAME, 1e-5, 0}, {S_POS_F32, TKC_OP_LOG2, SAME, 1e-5, 0}, {S_POS_F32, TKC_OP_SQRT, SAME, 1e-6, 0},
    {S_POS_F32, TKC_OP_SIN, SAME, 1e-5, 0}, {S_POS_F32, TKC_OP_RECIP, SAME, 1e-6, 0}, {S_POS_F32, TKC_OP_NEG, SAME, 0, 0},
    {S_POS_F64, TKC_OP_EXP2, SAME, 1e-12, 0}, {S_POS_F64, TKC_OP_LOG2, SAME, 1e-12, 0}, {S_POS_F64, TKC_OP_SQRT, SAME, 1e-12, 0},
    {S_POS_F64, TKC_OP_SIN, SAME, 1e-12, 0}, {S_POS_F64, TKC_OP_RECIP, SAME, 1e-12, 0}, {S_POS_F64, TKC_OP_NEG, SAME, 0, 0},
    /* bool logic, uint64 compares */
    {S_BOOL, TKC_OP_AND, SAME, 0, 0}, {S_BOOL, TKC_OP_OR, SAME, 0, 0}, {S_BOOL, TKC_OP_XOR, SAME, 0, 0}, {S_BOOL, TKC_OP_CMPNE, SAME, 0, 0},
    {S_BOOL, TKC_OP_ADD, SAME, 0, 0}, {S_BOOL, TKC_OP_MUL, SAME, 0, 0}, {S_BOOL, TKC_OP_MAX, SAME, 0, 0}, {S_BOOL, TKC_OP_CMPLT, SAME, 0, 0},
    {S_U64_CMP, TKC_OP_CMPLT, SAME, 0, 0}, {S_U64_CMP, TKC_OP_CMPNE, SAME, 0, 0},
    /* bitcasts */
    {S_BITS_F32, TKC_OP_BITCAST, TKC_INT32, 0, 0}, {S_BITS_I32, TKC_OP_BITCAST, TKC_FLOAT32, 0, 0}, {S_BITS_U32, TKC_OP_BITCAST, TKC_FLOAT32, 0, 0},
    {S_BITS_F64, TKC_OP_BITCAST, TKC_INT64, 0, 0}, {S_BITS_I64, TKC_OP_BITCAST, TKC_UINT64, 0, 0}, {S_BITS_F16, TKC_OP_BITCAST, TKC_INT16, 0, 0},
    {S_BITS_U16, TKC_OP_BITCAST, TKC_INT16, 0, 0}, {S_BITS_U16, TKC_OP_BITCAST, TKC_FLOAT16, 0, 0}, {S_BITS_U16, TKC_OP_BITCAST, TKC_BFLOAT16, 0, 0},
    /* edge values, against INTERP: division by 0 and INT_MIN / -1, shifts by >= 32 and negative counts, wraps */
    {S_EDGE_I32, TKC_OP_IDIV, SAME, 0, 0}, {S_EDGE_I32, TKC_OP_MOD, SAME, 0, 0}, {S_EDGE_I32, TKC_OP_SHL, SAME, 0, 0},
    {S_EDGE_I32, TKC_OP_SHR, SAME, 0, 0}, {S_EDGE_I32, TKC_OP_MUL, SAME, 0, 0}, {S_EDGE_I32, TKC_OP_SUB, SAME, 0, 0},
    {S_EDGE_I32, TKC_OP_MAX, SAME, 0, 0}, {S_EDGE_I32, TKC_OP_ADD, SAME, 0, 0},
    {S_EDGE_U32, TKC_OP_IDIV, SAME, 0, 0}, {S_EDGE_U32, TKC_OP_MOD, SAME, 0, 0}, {S_EDGE_U32, TKC_OP_SHL, SAME, 0, 0},
    {S_EDGE_U32, TKC_OP_SHR, SAME, 0, 0}, {S_EDGE_U32, TKC_OP_MUL, SAME, 0, 0}, {S_EDGE_U32, TKC_OP_SUB, SAME, 0, 0},
    {S_EDGE_U32, TKC_OP_MAX, SAME, 0, 0}, {S_EDGE_U32, TKC_OP_ADD, SAME, 0, 0},
    {S_EDGE_I8, TKC_OP_IDIV, SAME, 0, 0}, {S_EDGE_I8, TKC_OP_MOD, SAME, 0, 0}, {S_EDGE_I8, TKC_OP_SHL, SAME, 0, 0},
    {S_EDGE_I8, TKC_OP_SHR, SAME, 0, 0}, {S_EDGE_I8, TKC_OP_MUL, SAME, 0, 0}, {S_EDGE_I8, TKC_OP_SUB, SAME, 0, 0},
    {S_EDGE_I8, TKC_OP_MAX, SAME, 0, 0}, {S_EDGE_I8, TKC_OP_ADD, SAME, 0, 0}, {S_EDGE_I8, TKC_OP_NEG, SAME, 0, 0},
    /* bool arithmetic is Python's: True+True is True, x//0 is 0 */
    {S_EDGE_BOOL, TKC_OP_IDIV, SAME, 0, 0}, {S_EDGE_BOOL, TKC_OP_MOD, SAME, 0, 0}, {S_EDGE_BOOL, TKC_OP_NEG, SAME, 0, 0},
    /* floats: NaN in MAX and compares, signed zeros, RECIP of zeros, saturating casts (NaN -> 0) */
    {S_EDGE_F32, TKC_OP_MAX, SAME, 0, 0}, {S_EDGE_F32, TKC_OP_CMPLT, SAME, 0, 0}, {S_EDGE_F32, TKC_OP_CMPNE, SAME, 0, 0},
    {S_EDGE_F32, TKC_OP_ADD, SAME, 0, 0}, {S_EDGE_F32, TKC_OP_RECIP, SAME, 0, 0}, {S_EDGE_F32, TKC_OP_NEG, SAME, 0, 0},
    FTOI_ALL(S_EDGE_F32), FTOI_ALL(S_EDGE_F64),
    {S_EDGE_F32, TKC_OP_CAST, TKC_BFLOAT16, 0, 0}, {S_EDGE_F32, TKC_OP_CAST, TKC_FLOAT16, 0, 0}, {S_EDGE_F64, TKC_OP_CAST, TKC_BFLOAT16, 0, 0},
    {S_EDGE_F64, TKC_OP_CAST, TKC_FLOAT16, 0, 0},
    /* bfloat16 / float16 arithmetic overflows to inf and rounds as tinygrad; conversions between them */
    {S_EDGE_BF16, TKC_OP_ADD, SAME, 0, 0}, {S_EDGE_BF16, TKC_OP_MUL, SAME, 0, 0}, {S_EDGE_BF16, TKC_OP_FDIV, SAME, 0, 0},
    {S_EDGE_BF16, TKC_OP_MAX, SAME, 0, 0}, {S_EDGE_BF16, TKC_OP_CMPLT, SAME, 0, 0}, {S_EDGE_BF16, TKC_OP_SQRT, SAME, 0, 0},
    {S_EDGE_BF16, TKC_OP_RECIP, SAME, 0, 0}, {S_EDGE_BF16, TKC_OP_CAST, TKC_FLOAT16, 0, 0}, {S_EDGE_BF16, TKC_OP_CAST, TKC_FLOAT32, 0, 0},
    {S_EDGE_BF16, TKC_OP_BITCAST, TKC_INT16, 0, 0}, {S_EDGE_BF16, TKC_OP_CAST, TKC_INT8, 0, 0},
    {S_EDGE_F16, TKC_OP_MUL, SAME, 0, 0}, {S_EDGE_F16, TKC_OP_FDIV, SAME, 0, 0}, {S_EDGE_F16, TKC_OP_ADD, SAME, 0, 0},
    {S_EDGE_F16, TKC_OP_CAST, TKC_BFLOAT16, 0, 0}, {S_EDGE_F16, TKC_OP_CAST, TKC_FLOAT32, 0, 0}, {S_EDGE_F16, TKC_OP_BITCAST, TKC_BFLOAT16, 0, 0},
    {S_EDGE_F16, TKC_OP_BITCAST, TKC_INT16, 0, 0}, {S_EDGE_F16, TKC_OP_CAST, TKC_INT8, 0, 0},
    /* 64-bit: int64 -> halves, uint64 -> float32, bytes as bools (any nonzero byte is true) */
    {S_EDGE_I64, TKC_OP_CAST, TKC_FLOAT16, 0, 0}, {S_EDGE_I64, TKC_OP_CAST, TKC_BFLOAT16, 0, 0}, {S_EDGE_U64, TKC_OP_CAST, TKC_FLOAT32, 0, 0},
    {S_EDGE_I64, TKC_OP_MUL, SAME, 0, 0}, {S_EDGE_U8, TKC_OP_BITCAST, TKC_BOOL, 0, 0},
    /* compound expressions: a float32 round trip of halves, halves * 50 to int8, the NaN tests, bfloat16x4 vectors */
    {S_HALF_BF16, TKC_OP_MUL, SAME, 0, FX_SCALE}, {S_HALF_BF16, TKC_OP_MUL, TKC_INT8, 0, FX_X50_I8}, {S_HALF_BF16, TKC_OP_ADD, SAME, 0, 0},
    {S_HALF_BF16, TKC_OP_MUL, SAME, 0, 0}, {S_HALF_BF16, TKC_OP_CAST, TKC_FLOAT32, 0, 0}, {S_HALF_BF16, TKC_OP_BITCAST, TKC_INT16, 0, 0},
    {S_HALF_F16, TKC_OP_MUL, SAME, 0, FX_SCALE}, {S_HALF_F16, TKC_OP_MUL, TKC_INT8, 0, FX_X50_I8}, {S_HALF_F16, TKC_OP_ADD, SAME, 0, 0},
    {S_HALF_F16, TKC_OP_MUL, SAME, 0, 0}, {S_HALF_F16, TKC_OP_CAST, TKC_FLOAT32, 0, 0}, {S_HALF_F16, TKC_OP_BITCAST, TKC_INT16, 0, 0},
    {S_EDGE_F32, TKC_OP_CMPNE, TKC_INT32, 0, FX_NANBITS}, {S_EDGE_BF16, TKC_OP_MUL, SAME, 0, FX_VEC4},
};
#define NAROWS ((int)(sizeof ALU_ROWS / sizeof *ALU_ROWS))

static bool is_cmp_op(tkc_op op) { return op == TKC_OP_CMPLT || op == TKC_OP_CMPNE; }
static tkc_dtype alu_out_dt(const alu_row *r) {
  if (r->out_dt != SAME) return (tkc_dtype)r->out_dt;
  return is_cmp_op(r->op) ? TKC_BOOL : ALU_SETS[r->set].dt;
}

/* C's result of a row on element values a, b (only for input sets where it is defined) */
static rv alu_ref(const alu_row *r, rv a, rv b) {
  tkc_dtype dt = ALU_SETS[r->set].dt;
  switch (r->op) {
  case TKC_OP_CAST: return tr_cast(a, dt, alu_out_dt(r));
  case TKC_OP_BITCAST: {
    unsigned char buf[8];
    tr_store(dt, buf, 0, a);
    return tr_load(alu_out_dt(r), buf, 0);
  }
  case TKC_OP_NEG: return tr_unop(TR_NEG, dt, a);
  case TKC_OP_RECIP: return (rv){tr_round(dt, 1.0 / a.f), 0};
  case TKC_OP_SQRT: return (rv){tr_round(dt, sqrt(a.f)), 0};
  case TKC_OP_EXP2: return (rv){tr_round(dt, exp2(a.f)), 0};
  case TKC_OP_LOG2: return (rv){tr_round(dt, log2(a.f)), 0};
  case TKC_OP_SIN: return (rv){tr_round(dt, sin(a.f)), 0};
  default: break;
  }
  static const struct { tkc_op op; int tr; } map[] = {{TKC_OP_ADD, TR_ADD}, {TKC_OP_SUB, TR_SUB}, {TKC_OP_MUL, TR_MUL}, {TKC_OP_FDIV, TR_DIV},
                                                     {TKC_OP_IDIV, TR_IDIV}, {TKC_OP_MOD, TR_MOD}, {TKC_OP_MAX, TR_MAXIMUM}, {TKC_OP_CMPLT, TR_LT},
                                                     {TKC_OP_CMPNE, TR_NE}, {TKC_OP_AND, TR_AND}, {TKC_OP_OR, TR_OR}, {TKC_OP_XOR, TR_XOR},
                                                     {TKC_OP_SHL, TR_SHL}, {TKC_OP_SHR, TR_SHR}};
  for (size_t i = 0; i < sizeof map / sizeof *map; i++)
    if (map[i].op == r->op) return tr_binop(map[i].tr, dt, a, b);
  return (rv){0, 0};
}

static bool alu_unary(tkc_op op) {
  return op == TKC_OP_CAST || op == TKC_OP_BITCAST || op == TKC_OP_NEG || op == TKC_OP_RECIP || op == TKC_OP_SQRT || op == TKC_OP_EXP2 ||
         op == TKC_OP_LOG2 || op == TKC_OP_SIN;
}

/* same element: bits equal, or both NaN, or (tol > 0) within tol */
static bool alu_same(tkc_dtype dt, const void *x, const void *y, size_t i, double tol) {
  size_t sz = tr_size(dt);
  if (!memcmp((const char *)x + i * sz, (const char *)y + i * sz, sz)) return true;
  if (!tr_isf(dt)) return false;
  double a = tr_load(dt, x, i).f, b = tr_load(dt, y, i).f;
  if (isnan(a) && isnan(b)) return true;
  return tol > 0 && fabs(a - b) <= tol * fmax(1.0, fabs(b));
}

/* the value a row stores, from the loaded operands x and y */
static tkc_uop *alu_value(tkc_graph *g, const alu_row *r, tkc_uop *x, tkc_uop *y, tkc_uop *ab, tkc_uop *rg, int n) {
  tkc_dtype dt = ALU_SETS[r->set].dt, o = alu_out_dt(r);
  switch (r->fx) {
  case FX_SCALE: /* (dt)((float)x * 1.0001) */
    return tkc_uop_cast(g, k_mul(g, tkc_uop_cast(g, x, dt_(TKC_FLOAT32)), tkc_uop_const_float(g, dt_(TKC_FLOAT32), 1.0001)), dt_(dt));
  case FX_X50_I8: return tkc_uop_cast(g, k_mul(g, x, tkc_uop_const_float(g, dt_(dt), 50.0)), dt_(TKC_INT8));
  case FX_NANBITS: { /* isnan(x) + 2 (x != y) + 4 (x < y) + 8 (max(x, y) != x), y = a[(i + 1) % n] */
    y = k_load(g, ab, k_mul(g, tkc_uop_alu2(g, TKC_OP_MOD, k_add(g, rg, k_int(g, 1)), k_int(g, n)), k_int(g, 1)));
    tkc_uop *bits = tkc_uop_cast(g, tkc_uop_alu2(g, TKC_OP_CMPNE, x, x), dt_(TKC_INT32));
    bits = k_add(g, bits, k_mul(g, tkc_uop_cast(g, tkc_uop_alu2(g, TKC_OP_CMPNE, x, y), dt_(TKC_INT32)), k_int(g, 2)));
    bits = k_add(g, bits, k_mul(g, tkc_uop_cast(g, tkc_uop_alu2(g, TKC_OP_CMPLT, x, y), dt_(TKC_INT32)), k_int(g, 4)));
    return k_add(g, bits, k_mul(g, tkc_uop_cast(g, tkc_uop_alu2(g, TKC_OP_CMPNE, tkc_uop_alu2(g, TKC_OP_MAX, x, y), x), dt_(TKC_INT32)), k_int(g, 8)));
  }
  default: break;
  }
  if (r->op == TKC_OP_CAST) return tkc_uop_cast(g, x, dt_(o));
  if (r->op == TKC_OP_BITCAST) return tkc_uop_bitcast(g, x, dt_(o));
  return alu_unary(r->op) ? tkc_uop_alu1(g, r->op, x) : tkc_uop_alu2(g, r->op, x, y);
}

/* runs rows[0..nout) (one input set) as one kernel with a store per row on dev; outs[k] get the results.
 * FX_VEC4 (alone in its kernel): out = x * x on 4-lane vectors loaded and stored whole. */
static tkc_status alu_run(const char *dev, const int *rows, int nout, const void *a, const void *b, void **outs) {
  const alu_inputs *s = &ALU_SETS[ALU_ROWS[rows[0]].set];
  tkc_graph *g = tkc_graph_new();
  tkc_uop *ab = k_buf(g, nout, s->dt), *bb = k_buf(g, nout + 1, s->dt), *st[16];
  tkc_dtype dts[16];
  size_t ns[16];
  void *host[16];
  if (ALU_ROWS[rows[0]].fx == FX_VEC4) {
    tkc_dt v4 = tkc_dt_vec(dt_(s->dt), 4), v4p = tkc_dt_ptr(v4, TKC_SPACE_GLOBAL, -1);
    tkc_uop *rg = k_range(g, s->n / 4, 0), *base = k_mul(g, rg, k_int(g, 4));
    tkc_uop *v = k_op(g, TKC_OP_LOAD, v4, 1, k_op(g, TKC_OP_CAST, v4p, 1, k_index(g, ab, base), NULL, NULL), NULL, NULL);
    st[0] = k_op(g, TKC_OP_STORE, dt_(TKC_VOID), 2, k_op(g, TKC_OP_CAST, v4p, 1, k_index(g, k_buf(g, 0, s->dt), base), NULL, NULL),
                 tkc_uop_alu2(g, TKC_OP_MUL, v, v), NULL);
  } else {
    tkc_uop *rg = k_range(g, s->n, 0), *x = k_load(g, ab, rg), *y = k_load(g, bb, rg);
    for (int k = 0; k < nout; k++) st[k] = k_store(g, k_buf(g, k, alu_out_dt(&ALU_ROWS[rows[k]])), rg, alu_value(g, &ALU_ROWS[rows[k]], x, y, ab, rg, s->n));
  }
  for (int k = 0; k < nout; k++) {
    tkc_dtype o = alu_out_dt(&ALU_ROWS[rows[k]]);
    dts[k] = o, ns[k] = (size_t)s->n, host[k] = outs[k];
    memset(outs[k], 0x5a, (size_t)s->n * tr_size(o));
  }
  dts[nout] = dts[nout + 1] = s->dt, ns[nout] = ns[nout + 1] = (size_t)s->n;
  host[nout] = (void *)a, host[nout + 1] = (void *)b; /* copies of the inputs: copied back unchanged */
  bool uses_b = false; /* a kernel of unary rows takes no second input */
  for (int k = 0; k < nout; k++)
    uses_b |= !ALU_ROWS[rows[k]].fx && !alu_unary(ALU_ROWS[rows[k]].op);
  tkc_status stt = k_run(dev, g, tkc_uop_sink(g, nout, st), nout + 1 + uses_b, dts, ns, host, NULL, 0);
  if (stt) printf("  %s on %s: %s\n", s->name, dev, tkc_last_error());
  tkc_graph_free(g);
  return stt;
}

static const char *alu_row_name(const alu_row *r, char *buf, size_t n) {
  static const char *const fx[] = {"", " (x*1.0001 in float32)", " (x*50 to int8)", " (NaN test bits)", " (4-lane vectors)"};
  snprintf(buf, n, "%s %s -> %s%s", tkc_op_name(r->op), ALU_SETS[r->set].name, tr_dn(alu_out_dt(r)), fx[r->fx]);
  return buf;
}

/* checks the rows of one kernel on dev: against INTERP and (defined inputs, plain ops) against C */
static void alu_check(const char *dev, const int *rows, int nout) {
  const alu_inputs *s = &ALU_SETS[ALU_ROWS[rows[0]].set];
  size_t isz = tr_size(s->dt);
  unsigned char *a = calloc((size_t)s->n, 8), *b = calloc((size_t)s->n, 8), *a2 = calloc((size_t)s->n, 8), *b2 = calloc((size_t)s->n, 8);
  alu_rng = 0x2545F4914F6CDD1Dull ^ ((uint64_t)ALU_ROWS[rows[0]].set << 32);
  s->fill(s->dt, s->n, a, b);
  memcpy(a2, a, (size_t)s->n * isz), memcpy(b2, b, (size_t)s->n * isz);
  void *got[16], *ref[16];
  for (int k = 0; k < nout; k++) got[k] = calloc((size_t)s->n, 8), ref[k] = calloc((size_t)s->n, 8);
  bool interp = !strcmp(dev, "INTERP");
  tkc_status st = alu_run(dev, rows, nout, a, b, got), st2 = interp ? TKC_OK : alu_run("INTERP", rows, nout, a2, b2, ref);
  char nm[160];
  if (st || st2) tr_problem("%s: the kernel of %d rows (the first %s) failed on %s", s->name, nout, alu_row_name(&ALU_ROWS[rows[0]], nm, sizeof nm), st ? dev : "INTERP");
  for (int k = 0; k < nout && !st && !st2; k++) {
    const alu_row *r = &ALU_ROWS[rows[k]];
    tkc_dtype o = alu_out_dt(r);
    size_t osz = tr_size(o);
    for (int i = 0, shown = 0; i < s->n; i++) {
      char gs[48], ws[48];
      rv gv = tr_load(o, got[k], (size_t)i);
      if (!interp && !alu_same(o, got[k], ref[k], (size_t)i, r->tol) && shown++ < 3)
        tr_problem("%s on %s: element %d: %s, INTERP %s", alu_row_name(r, nm, sizeof nm), dev, i, tr_fmt(o, gv, gs, sizeof gs),
                   tr_fmt(o, tr_load(o, ref[k], (size_t)i), ws, sizeof ws));
      if (o == TKC_BOOL && gv.i > 1 && shown++ < 3) tr_problem("%s on %s: element %d: a bool byte %d", alu_row_name(r, nm, sizeof nm), dev, i, (int)gv.i);
      if (!s->defined || r->fx) continue;
      rv want = alu_ref(r, tr_load(s->dt, a, (size_t)i), tr_load(s->dt, b, (size_t)i));
      unsigned char wb[8];
      tr_store(o, wb, 0, want);
      bool ok = r->tol > 0 ? tr_close(o, gv, want, r->tol, r->tol)
                           : !memcmp((char *)got[k] + (size_t)i * osz, wb, osz) || (tr_isf(o) && isnan(gv.f) && isnan(want.f));
      if (!ok && shown++ < 3)
        tr_problem("%s on %s: element %d: %s, C %s", alu_row_name(r, nm, sizeof nm), dev, i, tr_fmt(o, gv, gs, sizeof gs), tr_fmt(o, want, ws, sizeof ws));
    }
  }
  for (int k = 0; k < nout; k++) free(got[k]), free(ref[k]);
  free(a), free(b), free(a2), free(b2);
}

/* Rows a renderer refuses to render (TKC_EUNSUPPORTED, checked): WGSL has no vector loads of packed
 * 8/16-bit buffers. (Bool division is computed everywhere: the target rules make it AND / a uint8 MOD.) */
static bool refused_on(const char *dev, const alu_row *r) { return !strcmp(dev, "WEBGPU") && r->fx == FX_VEC4; }

static void run_alu_rows(const char *dev) {
  char why[256];
  if (!device_ok(dev, why, sizeof why)) {
    printf("skipped: %s unavailable here: %s\n", dev, why);
    skip();
  }
  tr_begin();
  int nkernels = 0, nrows = 0, left_out = 0, rows[16], n = 0;
  for (int i = 0; i <= NAROWS; i++) {
    const alu_row *r = i < NAROWS ? &ALU_ROWS[i] : NULL;
    if (r && refused_on(dev, r)) { /* alone: it must be refused as unsupported, not fail otherwise */
      char nm[160];
      void *buf = calloc(64, 8), *out = calloc(64, 8);
      tkc_status st = alu_run(dev, &i, 1, buf, buf, &out);
      if (st != TKC_EUNSUPPORTED) tr_problem("%s on %s: %s, want TKC_EUNSUPPORTED", alu_row_name(r, nm, sizeof nm), dev, tkc_status_str(st));
      free(buf), free(out);
      left_out++;
      continue;
    }
    if (r && !(tr_dev_supports(dev, ALU_SETS[r->set].dt) && tr_dev_supports(dev, alu_out_dt(r)))) { /* the device cannot hold it */
      left_out++;
      continue;
    }
    /* a kernel per input set, up to 14 stores; the vector row alone */
    if (n && (!r || r->set != ALU_ROWS[rows[0]].set || n == 14 || r->fx == FX_VEC4 || ALU_ROWS[rows[0]].fx == FX_VEC4)) {
      alu_check(dev, rows, n);
      nkernels++, nrows += n, n = 0;
    }
    if (r) rows[n++] = i;
  }
  printf("  %d rows in %d kernels on %s (%d rows it cannot hold or render left out)\n", nrows, nkernels, dev, left_out);
  TR_END();
}

/* ================================================================ the tests: table x device */

static const char *const DEVICES[] = {"INTERP", "CPU", "LLVM", "WEBGPU", "CUDA"};
#define NDEV ((int)(sizeof DEVICES / sizeof *DEVICES))

typedef struct part {
  const char *name;
  int first_family, last_family; /* tensor rows of these families; -1: the ALU table */
} part;
static const part PARTS[] = {
    {"elementwise", F_UNARY, F_TERNARY}, {"cast", F_CAST, F_BITCAST}, {"reduce", F_REDUCE, F_SCAN},
    {"movement", F_MOVE, F_CAT},         {"composite", F_MATMUL, F_FUSED}, {"alu", -1, -1},
};
#define NPARTS ((int)(sizeof PARTS / sizeof *PARTS))

typedef struct test_param {
  const part *p;
  const char *dev;
} test_param;

static void test_part(void **state) {
  const test_param *tp = *state;
  if (tp->p->first_family < 0) {
    run_alu_rows(tp->dev);
    return;
  }
  int first = 0, last;
  while (first < NTROWS && TENSOR_ROWS[first].family < tp->p->first_family) first++;
  for (last = first; last < NTROWS && TENSOR_ROWS[last].family <= tp->p->last_family; last++) {}
  run_tensor_rows(tp->dev, first, last);
}

int main(void) {
  static test_param params[NPARTS * NDEV];
  static char names[NPARTS * NDEV][64];
  struct CMUnitTest tests[NPARTS * NDEV];
  int n = 0;
  for (int d = 0; d < NDEV; d++) /* INTERP first: the other devices compare with its results */
    for (int p = 0; p < NPARTS; p++) {
      params[n] = (test_param){&PARTS[p], DEVICES[d]};
      snprintf(names[n], sizeof names[n], "%s on %s", PARTS[p].name, DEVICES[d]);
      tests[n] = (struct CMUnitTest){names[n], test_part, NULL, NULL, &params[n]};
      n++;
    }
  const char *filter = getenv("TKC_TEST_FILTER"); /* e.g. "alu on CPU", "*on LLVM" */
  if (filter && *filter) cmocka_set_test_filter(filter);
  int rc = _cmocka_run_group_tests("test_backend_ops", tests, (size_t)n, NULL, NULL);
  for (int r = 0; r < NTROWS; r++)
    for (int t = 0; t < TR_NDT; t++)
      for (int c = 0; c < 12; c++) free(interp_cache[r][t][c].bytes);
  tkc_ctx_free(interp_ctx);
  return rc;
}
