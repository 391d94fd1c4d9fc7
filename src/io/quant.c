/* src/io/quant.c — GGML's quant formats (see quant.h): the format table, and per format a builder that
 * turns the packed bytes into a lazy float32 tensor with tensor ops only, so that the dequantization
 * fuses into whatever consumes it (tinygrad's nn/state.py ggml_data_to_tensor; the formulas are
 * ggml's dequantize_row_* in ggml-quants.c).
 *
 * Every builder sees the bytes as `blocks`, a (nblocks, block_bytes) uint8 view, and returns the
 * (nblocks, block_elems) values; quant_dequantize reshapes them to the caller's shape (a row is a
 * whole number of blocks). The arithmetic is done in float32 in ggml's order, and each product of
 * scales and quants is exact except the last rounding, so the values are bit-exact with ggml's. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "quant.h"
#include "tkc/ops_math.h"  /* tkc_round */
#include "tkc/ops_shape.h" /* tkc_unsqueeze */
#include "tkc/uop.h"       /* tkc_dtype_is_float */

/* the library's error recorder (src/base/common.h), declared here as the ONNX frontend does: io/ uses
 * the public API only */
tkc_status tkc_err(tkc_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define QUANT_MAX_DIMS 8 /* the tensor API's limit on dims (src/shape/shape.h TKC_MAX_DIMS) */

/* ---------------------------------------------------------------- a builder's temporaries */

/* The handles a builder makes: every one but the result is freed at the end (the result's graph keeps
 * what it reads). A NULL from a failed op passes through the helpers, so a builder is straight-line
 * code whose result is checked once. */
#define QB_MAX 256
typedef struct qb {
  tkc_ctx *ctx;
  tkc_tensor *t[QB_MAX];
  int n;
} qb;

static tkc_tensor *rec(qb *b, tkc_tensor *x) {
  if (!x) return NULL;
  if (b->n == QB_MAX) { /* the builders below make far fewer: a bug, not an input */
    tkc_tensor_free(x);
    (void)tkc_err(TKC_EINTERNAL, "quant: more than %d temporaries in one dequantizer", QB_MAX);
    return NULL;
  }
  return b->t[b->n++] = x;
}

/* frees the temporaries but r; r itself when all went well, else NULL */
static tkc_tensor *qb_done(qb *b, tkc_tensor *r) {
  for (int i = 0; i < b->n; i++)
    if (b->t[i] != r) tkc_tensor_free(b->t[i]);
  b->n = 0;
  return r;
}

static tkc_tensor *K(qb *b, tkc_dtype dt, double v) { return rec(b, tkc_scalar(b->ctx, dt, v)); }
static tkc_tensor *U8(qb *b, double v) { return K(b, TKC_UINT8, v); }
static tkc_tensor *U32(qb *b, double v) { return K(b, TKC_UINT32, v); }
static tkc_tensor *F32(qb *b, double v) { return K(b, TKC_FLOAT32, v); }

static tkc_tensor *add(qb *b, tkc_tensor *x, tkc_tensor *y) { return rec(b, tkc_add(x, y)); }
static tkc_tensor *sub(qb *b, tkc_tensor *x, tkc_tensor *y) { return rec(b, tkc_sub(x, y)); }
static tkc_tensor *mul(qb *b, tkc_tensor *x, tkc_tensor *y) { return rec(b, tkc_mul(x, y)); }
static tkc_tensor *or_(qb *b, tkc_tensor *x, tkc_tensor *y) { return rec(b, tkc_or(x, y)); }
static tkc_tensor *and_(qb *b, tkc_tensor *x, tkc_tensor *y) { return rec(b, tkc_and(x, y)); }
static tkc_tensor *shl(qb *b, tkc_tensor *x, tkc_tensor *y) { return rec(b, tkc_shl(x, y)); }
static tkc_tensor *shr(qb *b, tkc_tensor *x, tkc_tensor *y) { return rec(b, tkc_shr(x, y)); }
static tkc_tensor *cast(qb *b, tkc_tensor *x, tkc_dtype dt) { return rec(b, tkc_cast(x, dt)); }
static tkc_tensor *bitcast(qb *b, tkc_tensor *x, tkc_dtype dt) { return rec(b, tkc_bitcast(x, dt)); }
static tkc_tensor *f32(qb *b, tkc_tensor *x) { return cast(b, x, TKC_FLOAT32); }
static tkc_tensor *unsq(qb *b, tkc_tensor *x, int axis) { return rec(b, tkc_unsqueeze(x, axis)); }

static tkc_tensor *reshape(qb *b, tkc_tensor *x, int ndim, const int64_t *shape) { return rec(b, tkc_reshape(x, ndim, shape)); }
/* x reshaped to (nblocks, n1) / (nblocks, n1, n2): the block axis stays first */
static tkc_tensor *rows2(qb *b, tkc_tensor *x, int64_t n1) { return reshape(b, x, 2, (int64_t[]){-1, n1}); }
static tkc_tensor *rows3(qb *b, tkc_tensor *x, int64_t n1, int64_t n2) { return reshape(b, x, 3, (int64_t[]){-1, n1, n2}); }

/* x (..., n) shrunk to [lo, hi) on its last axis: bytes [lo, hi) of every block of (nblocks, bytes) */
static tkc_tensor *last(qb *b, tkc_tensor *x, int64_t lo, int64_t hi) {
  int nd = tkc_ndim(x);
  int64_t r[2 * QUANT_MAX_DIMS + 2];
  for (int i = 0; i < nd; i++) r[2 * i] = 0, r[2 * i + 1] = tkc_dim(x, i);
  r[2 * nd - 2] = lo, r[2 * nd - 1] = hi;
  return rec(b, tkc_shrink(x, r));
}

/* the bytes x (..., 4 k) of uint8 or uint32 (low byte used) as k little-endian uint32 words (..., k) */
static tkc_tensor *words_of(qb *b, tkc_tensor *x) {
  int nd = tkc_ndim(x);
  int64_t s[QUANT_MAX_DIMS + 1];
  for (int i = 0; i < nd - 1; i++) s[i] = tkc_dim(x, i);
  s[nd - 1] = tkc_dim(x, nd - 1) / 4, s[nd] = 4;
  tkc_tensor *x4 = reshape(b, x, nd + 1, s), *w = NULL;
  for (int i = 0; i < 4; i++) {
    tkc_tensor *byte = cast(b, last(b, x4, i, i + 1), TKC_UINT32);
    w = i ? or_(b, w, shl(b, byte, U32(b, 8 * i))) : byte;
  }
  return reshape(b, w, nd, s); /* the trailing 1 dropped */
}

/* the little-endian uint16 at byte off of every block: (nblocks, 1) */
static tkc_tensor *u16_at(qb *b, tkc_tensor *blocks, int64_t off) {
  tkc_tensor *lo = cast(b, last(b, blocks, off, off + 1), TKC_UINT16);
  tkc_tensor *hi = cast(b, last(b, blocks, off + 1, off + 2), TKC_UINT16);
  /* tkc_bitcast keeps the element size, so the two bytes are joined by a shift, not reinterpreted */
  return or_(b, lo, shl(b, hi, K(b, TKC_UINT16, 8)));
}

/* the float16 at byte off of every block (a scale), as float32: (nblocks, 1) */
static tkc_tensor *f16_at(qb *b, tkc_tensor *blocks, int64_t off) { return f32(b, bitcast(b, u16_at(b, blocks, off), TKC_FLOAT16)); }

/* The bits-wide fields of the bytes x (..., n) as uint32: (..., 8 / bits, n), field k of byte i at [k, i]
 * (field 0 = the lowest bits), as tinygrad's q_to_uint8 (without its transpose). Shifted as uint32:
 * hosts shift 32-bit lanes in one instruction (x86 has no 8-bit vector shift), and the fields stay
 * uint32 up to their float conversion (a uint8 or of two fields makes x86 narrow the lanes to bytes
 * and widen them again). The shift counts are an arange, not a table: each vector lane's count
 * then simplifies to a constant (codegen/expander.c), and LLVM shifts by an immediate and drops the
 * mask of the top field. (Once they were a small uint8 buffer, which a cat had measured twice as fast
 * as; a cat or an arange merged into the rows by a reshape did not lower for PTX: test_quant's
 * test_ptx_render guards it.) */
static tkc_tensor *unpack(qb *b, tkc_tensor *x, int bits) {
  tkc_tensor *count = reshape(b, rec(b, tkc_arange(b->ctx, TKC_UINT32, 0, 8, bits)), 2, (int64_t[]){8 / bits, 1});
  tkc_tensor *field = and_(b, shr(b, cast(b, unsq(b, x, -2), TKC_UINT32), count), K(b, TKC_UINT32, (1 << bits) - 1));
  return field;
}

/* 4-bit quants of bytes [lo, lo + 16): value j < 16 is the low nibble of byte j, value 16 + j its
 * high nibble (Q4_0, Q4_1, Q5_0, Q5_1): (nblocks, 32) uint32 */
static tkc_tensor *nibbles32(qb *b, tkc_tensor *blocks, int64_t lo) { return rows2(b, unpack(b, last(b, blocks, lo, lo + 16), 4), 32); }

/* the 5th bits of Q5_0 / Q5_1: bit j of the little-endian uint32 at bytes [lo, lo + 4) belongs to
 * value j, moved to bit 4: (nblocks, 32) uint32 */
static tkc_tensor *high_bits32(qb *b, tkc_tensor *blocks, int64_t lo) {
  tkc_tensor *bits = unpack(b, last(b, blocks, lo, lo + 4), 1); /* [k, i] = bit k of byte i */
  tkc_tensor *by_value = rows2(b, rec(b, tkc_transpose(bits, 1, 2)), 32);
  return shl(b, by_value, U32(b, 4));
}

/* ---------------------------------------------------------------- the formats */

static tkc_tensor *deq_q8_0(qb *b, tkc_tensor *blocks) { /* d, int8 qs[32]: d * q */
  return mul(b, f32(b, bitcast(b, last(b, blocks, 2, 34), TKC_INT8)), f16_at(b, blocks, 0));
}

static tkc_tensor *deq_q4_0(qb *b, tkc_tensor *blocks) { /* d, qs[16]: (q - 8) * d */
  return mul(b, sub(b, f32(b, nibbles32(b, blocks, 2)), F32(b, 8)), f16_at(b, blocks, 0));
}

static tkc_tensor *deq_q4_1(qb *b, tkc_tensor *blocks) { /* d, m, qs[16]: q * d + m */
  return add(b, mul(b, f32(b, nibbles32(b, blocks, 4)), f16_at(b, blocks, 0)), f16_at(b, blocks, 2));
}

static tkc_tensor *deq_q5_0(qb *b, tkc_tensor *blocks) { /* d, qh[4], qs[16]: (q - 16) * d */
  tkc_tensor *q = or_(b, nibbles32(b, blocks, 6), high_bits32(b, blocks, 2));
  return mul(b, sub(b, f32(b, q), F32(b, 16)), f16_at(b, blocks, 0));
}

static tkc_tensor *deq_q5_1(qb *b, tkc_tensor *blocks) { /* d, m, qh[4], qs[16]: q * d + m */
  tkc_tensor *q = or_(b, nibbles32(b, blocks, 8), high_bits32(b, blocks, 4));
  return add(b, mul(b, f32(b, q), f16_at(b, blocks, 0)), f16_at(b, blocks, 2));
}

/* The 8 six-bit (scale, min) pairs of a K-quant super-block, packed in the 12 bytes at `lo` (ggml's
 * get_scale_min_k4), with c0, c1, c2 its bytes [0, 4), [4, 8), [8, 12) and pair j = 4 h + i:
 *   h = 0: scale = c0[i] & 63,          min = c1[i] & 63
 *   h = 1: scale = (c2[i] & 15) | (c0[i] >> 6) << 4,  min = (c2[i] >> 4) | (c1[i] >> 6) << 4
 * written as one formula of h (an arange: a constant or a scalar per sub-block once lowered) over the
 * bytes viewed so that h picks them: the low part (A & mask) | ..., A = c0 / c2 and B = c1 / c2 by h,
 * mask = 63 >> 2 h, the top bits times h. No select between both halves computed (the formula
 * before), no table read. As float32 (nblocks, 8, 32): d * scale and dmin * min of every value. */
static void k_scales(qb *b, tkc_tensor *blocks, int64_t lo, tkc_tensor **d_sc, tkc_tensor **dmin_m) {
  tkc_tensor *h = reshape(b, rec(b, tkc_arange(b->ctx, TKC_UINT8, 0, 2, 1)), 3, (int64_t[]){2, 1, 1});
  tkc_tensor *mask = shr(b, U8(b, 63), shl(b, h, U8(b, 1)));
  /* bytes [lo, lo + 16) as (nblocks, 2, 2, 4), row 0 of each pair: c0 (h = 0) and c2 (h = 1) */
  tkc_tensor *pairs = reshape(b, last(b, blocks, lo, lo + 16), 4, (int64_t[]){-1, 2, 2, 4});
  tkc_tensor *a = reshape(b, rec(b, tkc_shrink(pairs, (int64_t[]){0, tkc_dim(pairs, 0), 0, 2, 0, 1, 0, 4})), 4, (int64_t[]){-1, 2, 4, 1});
  tkc_tensor *bb = reshape(b, last(b, blocks, lo + 4, lo + 12), 4, (int64_t[]){-1, 2, 4, 1}); /* c1, c2 */
  tkc_tensor *c0 = reshape(b, last(b, blocks, lo, lo + 4), 4, (int64_t[]){-1, 1, 4, 1});
  tkc_tensor *c1 = reshape(b, last(b, blocks, lo + 4, lo + 8), 4, (int64_t[]){-1, 1, 4, 1});
  tkc_tensor *c4 = U8(b, 4), *c6 = U8(b, 6);
  tkc_tensor *sc = or_(b, and_(b, a, mask), mul(b, shl(b, shr(b, c0, c6), c4), h));
  tkc_tensor *m = or_(b, and_(b, shr(b, bb, shl(b, h, U8(b, 2))), mask), mul(b, shl(b, shr(b, c1, c6), c4), h));
  const int64_t per_value[] = {-1, 2, 4, 32};
  sc = rows3(b, rec(b, tkc_expand(sc, 4, per_value)), 8, 32);
  m = rows3(b, rec(b, tkc_expand(m, 4, per_value)), 8, 32);
  *d_sc = mul(b, unsq(b, f16_at(b, blocks, 0), -1), f32(b, sc));
  *dmin_m = mul(b, unsq(b, f16_at(b, blocks, 2), -1), f32(b, m));
}

/* The 4-bit quants of a Q4_K / Q5_K super-block, 128 bytes at lo: 4 chunks of 32 bytes, each the low
 * nibbles (sub-block 2c) then the high nibbles (2c + 1): (nblocks, 8, 32) uint32 by sub-block */
static tkc_tensor *k_nibbles(qb *b, tkc_tensor *blocks, int64_t lo) {
  return rows3(b, unpack(b, rows3(b, last(b, blocks, lo, lo + 128), 4, 32), 4), 8, 32);
}

static tkc_tensor *deq_q4_k(qb *b, tkc_tensor *blocks) { /* d, dmin, scales[12], qs[128]: d sc q - dmin m */
  tkc_tensor *d_sc, *dmin_m;
  k_scales(b, blocks, 4, &d_sc, &dmin_m);
  tkc_tensor *y = sub(b, mul(b, d_sc, f32(b, k_nibbles(b, blocks, 16))), dmin_m);
  return rows2(b, y, 256);
}

static tkc_tensor *deq_q5_k(qb *b, tkc_tensor *blocks) { /* d, dmin, scales[12], qh[32], qs[128] */
  tkc_tensor *d_sc, *dmin_m;
  k_scales(b, blocks, 4, &d_sc, &dmin_m);
  /* the 5th bit of value l of sub-block k is bit k of qh[l] */
  tkc_tensor *high = shl(b, unpack(b, last(b, blocks, 16, 48), 1), U32(b, 4));
  tkc_tensor *q = or_(b, k_nibbles(b, blocks, 48), high);
  return rows2(b, sub(b, mul(b, d_sc, f32(b, q)), dmin_m), 256);
}

static tkc_tensor *deq_q6_k(qb *b, tkc_tensor *blocks) { /* ql[128], qh[64], int8 scales[16], d */
  /* two halves of 128 values; in half n, group g (32 values) takes the low (g < 2) or high nibble of
   * ql[64 n + 32 (g % 2) + l] and bits 2g, 2g + 1 of qh[32 n + l] */
  tkc_tensor *low = rows2(b, unpack(b, rows3(b, last(b, blocks, 0, 128), 2, 64), 4), 256);
  tkc_tensor *high = rows2(b, unpack(b, rows3(b, last(b, blocks, 128, 192), 2, 32), 2), 256);
  tkc_tensor *q = sub(b, f32(b, or_(b, low, shl(b, high, U32(b, 4)))), F32(b, 32));
  /* one int8 scale per 16 values */
  tkc_tensor *sc = unsq(b, f32(b, bitcast(b, last(b, blocks, 192, 208), TKC_INT8)), -1);
  tkc_tensor *d_sc = mul(b, unsq(b, f16_at(b, blocks, 208), -1), sc); /* (nblocks, 16, 1) */
  return rows2(b, mul(b, d_sc, rows3(b, q, 16, 16)), 256);
}

/* the plain float types: blocks of one value */
static tkc_tensor *deq_f32(qb *b, tkc_tensor *blocks) { return bitcast(b, words_of(b, blocks), TKC_FLOAT32); }
static tkc_tensor *deq_f16(qb *b, tkc_tensor *blocks) { return f16_at(b, blocks, 0); }
static tkc_tensor *deq_bf16(qb *b, tkc_tensor *blocks) { /* the high half of a float32 */
  return bitcast(b, shl(b, cast(b, u16_at(b, blocks, 0), TKC_UINT32), K(b, TKC_UINT32, 16)), TKC_FLOAT32);
}

/* ---------------------------------------------------------------- the table */

typedef tkc_tensor *(*quant_builder)(qb *b, tkc_tensor *blocks);
static const struct {
  tkc_quant_format f;
  quant_builder build;
} formats[] = {
    {{TKC_GGML_F32, "F32", 1, 4}, deq_f32},           {{TKC_GGML_F16, "F16", 1, 2}, deq_f16},
    {{TKC_GGML_BF16, "BF16", 1, 2}, deq_bf16},        {{TKC_GGML_Q4_0, "Q4_0", 32, 18}, deq_q4_0},
    {{TKC_GGML_Q4_1, "Q4_1", 32, 20}, deq_q4_1},      {{TKC_GGML_Q5_0, "Q5_0", 32, 22}, deq_q5_0},
    {{TKC_GGML_Q5_1, "Q5_1", 32, 24}, deq_q5_1},      {{TKC_GGML_Q8_0, "Q8_0", 32, 34}, deq_q8_0},
    {{TKC_GGML_Q4_K, "Q4_K", 256, 144}, deq_q4_k},    {{TKC_GGML_Q5_K, "Q5_K", 256, 176}, deq_q5_k},
    {{TKC_GGML_Q6_K, "Q6_K", 256, 210}, deq_q6_k},
};
#define NFORMATS ((int)(sizeof formats / sizeof formats[0]))

static int format_index(int ggml_type) {
  for (int i = 0; i < NFORMATS; i++)
    if (formats[i].f.type == ggml_type) return i;
  return -1;
}

const tkc_quant_format *tkc_quant_format_of(int ggml_type) {
  int i = format_index(ggml_type);
  return i < 0 ? NULL : &formats[i].f;
}

int64_t tkc_quant_nbytes(int ggml_type, int ndim, const int64_t *shape) {
  const tkc_quant_format *f = tkc_quant_format_of(ggml_type);
  if (!f) {
    (void)tkc_err(TKC_EUNSUPPORTED, "GGML type %d is not a type tkc reads (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K)",
                  ggml_type);
    return -1;
  }
  if (ndim < 1 || ndim > QUANT_MAX_DIMS || !shape) {
    (void)tkc_err(TKC_ESHAPE, "%s tensor: %d dims (1 to %d, with a shape)", f->name, ndim, QUANT_MAX_DIMS);
    return -1;
  }
  int64_t numel = 1;
  for (int i = 0; i < ndim; i++) {
    if (tkc_dim_is_var(shape[i]) || shape[i] < 0) {
      (void)tkc_err(TKC_ESHAPE, "%s tensor: dim %d is %s (a fixed size >= 0 is needed)", f->name, i,
                    tkc_dim_is_var(shape[i]) ? "a variable" : "negative");
      return -1;
    }
    if (shape[i] && numel > (INT64_MAX / 256) / shape[i]) {
      (void)tkc_err(TKC_ESHAPE, "%s tensor: more than 2^55 elements", f->name);
      return -1;
    }
    numel *= shape[i];
  }
  if (shape[ndim - 1] % f->block_elems) {
    (void)tkc_err(TKC_ESHAPE, "%s tensor: the last dim %lld is not a multiple of the block of %d values (a row holds whole blocks)",
                  f->name, (long long)shape[ndim - 1], f->block_elems);
    return -1;
  }
  return numel / f->block_elems * f->block_bytes;
}

tkc_tensor *tkc_quant_dequantize(tkc_tensor *packed, int ggml_type, int ndim, const int64_t *shape) {
  tkc_ctx *ctx = tkc_tensor_ctx(packed); /* the constants (shift amounts, masks) are tensors of packed's ctx */
  if (!ctx) return NULL; /* NULL (keeping the first error of a chain) or freed */
  int i = format_index(ggml_type);
  int64_t nbytes = tkc_quant_nbytes(ggml_type, ndim, shape);
  if (nbytes < 0) return NULL;
  const tkc_quant_format *f = &formats[i].f;
  if (tkc_dtype_of(packed) != TKC_UINT8) {
    (void)tkc_err(TKC_EDTYPE, "%s tensor: the packed bytes are %s (uint8 needed)", f->name, tkc_dtype_name(tkc_dtype_of(packed)));
    return NULL;
  }
  if (tkc_ndim(packed) != 1 || tkc_dim_is_var(tkc_dim(packed, 0)) || tkc_numel(packed) != nbytes) {
    (void)tkc_err(TKC_ESHAPE, "%s tensor: %lld packed bytes in a %d-d tensor, but its shape needs %lld in a 1-d one", f->name,
                  (long long)tkc_numel(packed), tkc_ndim(packed), (long long)nbytes);
    return NULL;
  }
  qb b = {.ctx = ctx, .n = 0};
  if (nbytes == 0) /* no blocks: an empty float32 tensor of the shape */
    return qb_done(&b, reshape(&b, cast(&b, packed, TKC_FLOAT32), ndim, shape));
  tkc_tensor *blocks = rows2(&b, packed, f->block_bytes);
  tkc_tensor *values = formats[i].build(&b, blocks);
  return qb_done(&b, reshape(&b, values, ndim, shape));
}

/* ---------------------------------------------------------------- the int8 path (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K)
 * llama.cpp's CPU kernels multiply quantized weights with activations quantized to int8 (per block
 * of 32 values with a float scale: Q8_0; Q8_K for its K-quants), in integers: vpdpbusd / dp4a, 4
 * byte products per instruction. The same here in tensor ops, on every device (tkc_dot4):
 *
 * - each weight is repacked once, on the host, into 32-bit words of quants per block of 32 values
 *   (the table below: a function per format), laid out (rows, blocks / g, words, g): word j of g
 *   consecutive blocks together, g the vector width that divides the row's blocks (16, 8, 4, 1), so
 *   that the kernel loads a vector of one word of g blocks, and their scales as one more; plus one
 *   float16 scale per block (and a second one: Q4_K's min, Q6_K's scale of the block's second 16).
 *   Q4_0's word j holds the bytes qs[4j .. 4j + 3]: its low nibbles are values 4j .. 4j + 3, its high
 *   nibbles values 16 + 4j .. (Q4_K's and Q6_K's sub-blocks are moved into that order); Q8_0's word j
 *   holds values 4j .. 4j + 3, each byte + 128 (XOR 0x80) so that it is unsigned (tkc_dot4 takes
 *   unsigned bytes times signed ones).
 * - x is quantized per block: d = max|x| / 127, q = round(x / d) (half to even; 0 where d is 0), the
 *   32 int8 as 8 words, and the sum of the block's q (and of its first 16).
 * - per block, sum_j dot4(weight word, x word), in int32, is the integer dot product but for the
 *   offsets of the quants (-8 of every Q4_0 one, +128 of every Q8_0 byte, -32 of Q6_K's): a multiple
 *   of the sum of q corrects it; then float32: the kernel is one reduce over the blocks of
 *   float(that integer) * d_w * d_x (exact integers: |sum| < 2^24), less Q4_K's min times sum(q). */

static tkc_tensor *contig(qb *b, tkc_tensor *x) { return rec(b, tkc_contiguous(x)); }

/* x (..., n, m) with its last two axes swapped */
static tkc_tensor *swap_last(qb *b, tkc_tensor *x) {
  int nd = tkc_ndim(x);
  return rec(b, tkc_transpose(x, nd - 2, nd - 1));
}

/* Blocks are grouped by g, the vector width the kernel reads them at: a weight is stored (rows,
 * blocks / g, words, g), word j of g consecutive blocks together (16 with AVX-512, fewer where the
 * row's blocks are not a multiple of 16). */
static int64_t int8_group(int64_t nb) { return nb % 16 == 0 ? 16 : nb % 8 == 0 ? 8 : nb % 4 == 0 ? 4 : 1; }

/* ---- a block of 32 weights as the product reads it: its 32 quants q[i] (value i = scale * (q[i] +
 * offset) - second, or with Q6_K's second scale for i >= 16), as a function per format, then packed
 * into words (pack_block) */

static float half_at(const uint8_t *p) { return tkc_f16_to_f32((uint16_t)(p[0] | p[1] << 8)); }
static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

/* the nibbles of 16 bytes at qs: value i < 16 the low nibble of byte i, 16 + i its high one; the 5th
 * bits (Q5_0, Q5_1) bit i of the uint32 at qh (NULL: none) */
static void nibble_quants(const uint8_t *qs, const uint8_t *qh, uint8_t *q) {
  uint32_t h = qh ? le32(qh) : 0;
  for (int i = 0; i < 16; i++) q[i] = (uint8_t)((qs[i] & 15) | (h >> i & 1) << 4), q[16 + i] = (uint8_t)((qs[i] >> 4) | (h >> (16 + i) & 1) << 4);
}

static void int8_q4_0(const uint8_t *row, int64_t bi, uint8_t *q, float *scale, float *second) { /* d, qs[16] */
  const uint8_t *p = row + bi * 18;
  *scale = half_at(p), *second = 0;
  nibble_quants(p + 2, NULL, q);
}
static void int8_q4_1(const uint8_t *row, int64_t bi, uint8_t *q, float *scale, float *second) { /* d, m, qs[16]: d q + m */
  const uint8_t *p = row + bi * 20;
  *scale = half_at(p), *second = -half_at(p + 2);
  nibble_quants(p + 4, NULL, q);
}
static void int8_q5_0(const uint8_t *row, int64_t bi, uint8_t *q, float *scale, float *second) { /* d, qh[4], qs[16] */
  const uint8_t *p = row + bi * 22;
  *scale = half_at(p), *second = 0;
  nibble_quants(p + 6, p + 2, q);
}
static void int8_q5_1(const uint8_t *row, int64_t bi, uint8_t *q, float *scale, float *second) { /* d, m, qh[4], qs[16] */
  const uint8_t *p = row + bi * 24;
  *scale = half_at(p), *second = -half_at(p + 2);
  nibble_quants(p + 8, p + 4, q);
}
static void int8_q8_0(const uint8_t *row, int64_t bi, uint8_t *q, float *scale, float *second) { /* d, int8 qs[32] */
  const uint8_t *p = row + bi * 34;
  *scale = half_at(p), *second = 0;
  for (int i = 0; i < 32; i++) q[i] = p[2 + i] ^ 0x80; /* + 128: unsigned */
}

/* sub-block bi % 8 of a Q4_K / Q5_K super-block (d, dmin, scales[12], [qh[32],] qs[128]): its 6-bit
 * scale and min (ggml's get_scale_min_k4) and its quants: the low nibbles of the qs chunk bi / 2 for
 * an even sub-block, the high ones for an odd; Q5_K's 5th bit of value l of sub-block j is bit j of
 * qh[l] */
static void k_quants(const uint8_t *p, int j, const uint8_t *qh, const uint8_t *qs, uint8_t *q, float *scale, float *second) {
  const uint8_t *sc = p + 4;
  uint8_t s, m;
  if (j < 4) s = sc[j] & 63, m = sc[j + 4] & 63;
  else s = (uint8_t)((sc[j + 4] & 0xF) | ((sc[j - 4] >> 6) << 4)), m = (uint8_t)((sc[j + 4] >> 4) | ((sc[j] >> 6) << 4));
  *scale = half_at(p) * (float)s, *second = half_at(p + 2) * (float)m;
  for (int l = 0; l < 32; l++) q[l] = (uint8_t)((j % 2 ? qs[32 * (j / 2) + l] >> 4 : qs[32 * (j / 2) + l] & 15) | (qh ? (qh[l] >> j & 1) << 4 : 0));
}
static void int8_q4_k(const uint8_t *row, int64_t bi, uint8_t *q, float *scale, float *second) {
  const uint8_t *p = row + bi / 8 * 144;
  k_quants(p, (int)(bi % 8), NULL, p + 16, q, scale, second);
}
static void int8_q5_k(const uint8_t *row, int64_t bi, uint8_t *q, float *scale, float *second) {
  const uint8_t *p = row + bi / 8 * 176;
  k_quants(p, (int)(bi % 8), p + 16, p + 48, q, scale, second);
}

/* sub-blocks 2 (bi % 8) and 2 (bi % 8) + 1 of a Q6_K super-block (ql[128], qh[64], int8 scales[16],
 * d): the 6-bit quants (value d * scale * (q - 32); ggml's dequantize_row_q6_K); scale: the first 16
 * values' d * scale, second: the next 16's */
static void int8_q6_k(const uint8_t *row, int64_t bi, uint8_t *q, float *scale, float *second) {
  const uint8_t *p = row + bi / 8 * 210, *ql = p, *qh = p + 128;
  const int8_t *sc = (const int8_t *)(p + 192);
  for (int i = 0; i < 32; i++) {
    int v = 32 * (int)(bi % 8) + i, n = v / 128, l = v % 32, quarter = v % 128 / 32;
    int lo = quarter % 2 ? ql[64 * n + l + 32] : ql[64 * n + l];
    q[i] = (uint8_t)((quarter < 2 ? lo & 0xF : lo >> 4) | ((qh[32 * n + l] >> (2 * quarter)) & 3) << 4);
  }
  float d = half_at(p + 208);
  *scale = d * (float)sc[2 * (bi % 8)], *second = d * (float)sc[2 * (bi % 8) + 1];
}

/* the formats of the int8 path: Q4_0-style nibbles or not (bytes: Q8_0), the top bits above a
 * nibble (1: Q5's, 2: Q6_K's), the offset of every quant (a multiple of the sum of x's quants
 * corrects it), and what the second float16 per block is: none, a min (value = scale q - min; Q4_1's
 * and Q5_1's -m) or the scale of the second 16 values (Q6_K) */
enum { SECOND_NONE, SECOND_MIN, SECOND_HALVES };
static const struct {
  int type, nibbles, topbits, offset, second;
  void (*block)(const uint8_t *row, int64_t bi, uint8_t *q, float *scale, float *second);
} int8_formats[] = {
    {TKC_GGML_Q4_0, 1, 0, -8, SECOND_NONE, int8_q4_0},  {TKC_GGML_Q4_1, 1, 0, 0, SECOND_MIN, int8_q4_1},
    {TKC_GGML_Q5_0, 1, 1, -16, SECOND_NONE, int8_q5_0}, {TKC_GGML_Q5_1, 1, 1, 0, SECOND_MIN, int8_q5_1},
    {TKC_GGML_Q8_0, 0, 0, -128, SECOND_NONE, int8_q8_0}, {TKC_GGML_Q4_K, 1, 0, 0, SECOND_MIN, int8_q4_k},
    {TKC_GGML_Q5_K, 1, 1, 0, SECOND_MIN, int8_q5_k},    {TKC_GGML_Q6_K, 1, 2, -32, SECOND_HALVES, int8_q6_k},
};

/* the words of a block (nibbles: 4 words, byte i = q[i] | q[16 + i] << 4, then the top bits: one word
 * (topbits 1: byte m, bit k the top of value 4 k + m of x's word k, words 0..3 holding values 0..15,
 * 4..7 values 16..31) or two (topbits 2: word k / 4, bits 2 (k % 4)); else 8 words of the bytes) */
static int pack_block(const uint8_t *q, int nibbles, int topbits, uint32_t *w) {
  if (!nibbles) {
    for (int j = 0; j < 8; j++) w[j] = le32(q + 4 * j);
    return 8;
  }
  uint8_t b[24] = {0};
  for (int i = 0; i < 16; i++) b[i] = (uint8_t)((q[i] & 15) | (q[16 + i] & 15) << 4);
  for (int k = 0; topbits && k < 8; k++)
    for (int m = 0; m < 4; m++) {
      int top = q[(k < 4 ? 4 * k : 16 + 4 * (k - 4)) + m] >> 4;
      b[16 + 4 * (topbits == 2 ? k / 4 : 0) + m] |= (uint8_t)(top << (topbits == 2 ? 2 * (k % 4) : k));
    }
  for (int j = 0; j < 4 + topbits; j++) w[j] = le32(b + 4 * j);
  return 4 + topbits;
}

static int int8_format(int ggml_type) {
  for (int i = 0; i < (int)(sizeof int8_formats / sizeof int8_formats[0]); i++)
    if (int8_formats[i].type == ggml_type) return i;
  return -1;
}

int tkc_quant_has_int8(int ggml_type) { return int8_format(ggml_type) >= 0; }

tkc_status tkc_quant_int8_repack(tkc_tensor *packed, int ggml_type, int64_t rows, int64_t ncols, tkc_tensor *out[2]) {
  out[0] = out[1] = NULL;
  int fi = int8_format(ggml_type);
  if (fi < 0) return tkc_err(TKC_EUNSUPPORTED, "the int8 path takes Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K and Q6_K weights, not GGML type %d", ggml_type);
  tkc_ctx *ctx = tkc_tensor_ctx(packed);
  if (!ctx) return tkc_last_status();
  const tkc_quant_format *f = tkc_quant_format_of(ggml_type);
  int64_t shape[2] = {rows, ncols}, nb = ncols / 32;
  int64_t nbytes = tkc_quant_nbytes(ggml_type, 2, shape);
  if (nbytes < 0) return tkc_last_status();
  if (tkc_ndim(packed) != 1 || tkc_numel(packed) != nbytes || tkc_dtype_of(packed) != TKC_UINT8 || nbytes == 0)
    return tkc_err(TKC_ESHAPE, "%s weights (%lld, %lld): the packed bytes are not the %lld uint8 of a non-empty matrix", f->name,
                   (long long)rows, (long long)ncols, (long long)nbytes);
  /* on the host, from a copy of the bytes: no kernel runs (a first product inside a tkc_jit capture
   * would otherwise record the repacking into every replay) */
  int64_t ns = int8_formats[fi].second != SECOND_NONE ? 2 : 1; /* float16s per block */
  int64_t nw = int8_formats[fi].nibbles ? 4 + int8_formats[fi].topbits : 8, g = int8_group(nb), nc = nb / g, row_bytes = nbytes / rows;
  uint8_t *p = malloc((size_t)nbytes);
  uint32_t *words = malloc((size_t)(rows * nb * nw) * 4);
  uint16_t *scales = malloc((size_t)(rows * nb * ns) * 2);
  tkc_status st = !p || !words || !scales ? tkc_err(TKC_ENOMEM, "%s weights (%lld, %lld): no memory to repack them", f->name, (long long)rows, (long long)ncols)
                                          : tkc_copy_out(packed, p, (size_t)nbytes);
  for (int64_t blk = 0; !st && blk < rows * nb; blk++) {
    int64_t r = blk / nb, bi = blk % nb, group = r * nc + bi / g, base = group * nw * g + bi % g, sbase = group * ns * g + bi % g;
    uint8_t q[32];
    uint32_t w[8];
    float sc[2];
    int8_formats[fi].block(p + r * row_bytes, bi, q, &sc[0], &sc[1]);
    pack_block(q, int8_formats[fi].nibbles, int8_formats[fi].topbits, w);
    for (int64_t j = 0; j < nw; j++) words[base + j * g] = w[j];
    /* as float16: exact for the formats' own float16 scales, within 2^-11 for a K-quant's products */
    for (int64_t k = 0; k < ns && !st; k++) {
      scales[sbase + k * g] = tkc_f32_to_f16(sc[k]);
      if (isinf(tkc_f16_to_f32(scales[sbase + k * g])))
        st = tkc_err(TKC_EUNSUPPORTED, "%s weights: a block's scale or min %g is beyond float16 (the int8 path keeps them so)", f->name, sc[k]);
    }
  }
  if (!st) {
    out[0] = tkc_tensor_new(ctx, TKC_UINT32, 4, (const int64_t[]){rows, nc, nw, g}, words);
    out[1] = out[0] ? tkc_tensor_new(ctx, TKC_FLOAT16, 4, (const int64_t[]){rows, nc, ns, g}, scales) : NULL;
    st = out[1] ? TKC_OK : tkc_last_status();
  }
  free(p), free(words), free(scales);
  if (st) {
    for (int i = 0; i < 2; i++) tkc_tensor_free(out[i]), out[i] = NULL;
    return st;
  }
  tkc_unscope(out[0]), tkc_unscope(out[1]); /* the state's, not the scope's of the first product */
  return TKC_OK;
}

/* word j of every group of x (..., words, g): (..., g) */
static tkc_tensor *word(qb *b, tkc_tensor *x, int64_t j) {
  int nd = tkc_ndim(x);
  int64_t r[2 * QUANT_MAX_DIMS], s[QUANT_MAX_DIMS];
  for (int i = 0; i < nd; i++) r[2 * i] = 0, r[2 * i + 1] = s[i] = tkc_dim(x, i);
  r[2 * nd - 4] = j, r[2 * nd - 3] = j + 1;
  s[nd - 2] = s[nd - 1];
  return reshape(b, rec(b, tkc_shrink(x, r)), nd - 1, s);
}

tkc_status tkc_quant_int8_input(tkc_tensor *x, int64_t ncols, tkc_quant_int8_x *out) {
  *out = (tkc_quant_int8_x){0};
  tkc_ctx *ctx = tkc_tensor_ctx(x);
  if (!ctx) return tkc_last_status();
  int nd = tkc_ndim(x);
  if (nd < 1 || nd > QUANT_MAX_DIMS - 3 || tkc_dim(x, nd - 1) != ncols || ncols % 32 || ncols <= 0)
    return tkc_err(TKC_ESHAPE, "int8 matmul: x has %d dims, the last %lld (1 to %d dims, the last the weight's %lld columns)", nd,
                   nd ? (long long)tkc_dim(x, nd - 1) : 0LL, QUANT_MAX_DIMS - 3, (long long)ncols);
  if (!tkc_dtype_is_float(tkc_dtype_of(x))) return tkc_err(TKC_EDTYPE, "int8 matmul: x is %s (a float dtype needed)", tkc_dtype_name(tkc_dtype_of(x)));
  qb b = {.ctx = ctx, .n = 0};
  int64_t nb = ncols / 32, g = int8_group(nb), s[QUANT_MAX_DIMS];
  for (int i = 0; i < nd - 1; i++) s[i] = tkc_dim(x, i);
  s[nd - 1] = nb, s[nd] = 32; /* x as (..., nb, 32) */
  tkc_tensor *xb = reshape(&b, f32(&b, x), nd + 1, s);
  const int last_ax = -1;
  tkc_tensor *amax = rec(&b, tkc_max(rec(&b, tkc_abs(xb)), 1, &last_ax, 1)); /* (..., nb, 1) */
  tkc_tensor *d = rec(&b, tkc_div(amax, F32(&b, 127)));
  tkc_tensor *inv = rec(&b, tkc_where(rec(&b, tkc_gt(amax, F32(&b, 0))), rec(&b, tkc_recip(d)), F32(&b, 0)));
  tkc_tensor *q = cast(&b, rec(&b, tkc_round(mul(&b, xb, inv))), TKC_INT32); /* (..., nb, 32) */
  /* the quants as words, grouped as the weights: (..., nb / g, 8, g) */
  tkc_tensor *bytes = and_(&b, bitcast(&b, q, TKC_UINT32), U32(&b, 255));
  int64_t gs[QUANT_MAX_DIMS];
  memcpy(gs, s, sizeof gs);
  gs[nd - 1] = nb / g, gs[nd] = g, gs[nd + 1] = 8;
  out->words = contig(&b, swap_last(&b, reshape(&b, bitcast(&b, words_of(&b, bytes), TKC_INT32), nd + 2, gs)));
  out->sumq = contig(&b, rec(&b, tkc_sum(q, 1, &last_ax, 0)));
  /* the sum of each block's first 16 (Q6_K's halves have scales of their own): lazy, computed only
   * where a product reads it */
  out->sumq_lo = contig(&b, rec(&b, tkc_sum(last(&b, q, 0, 16), 1, &last_ax, 0)));
  out->amax = reshape(&b, amax, nd, s);
  tkc_tensor *keep[4] = {out->words, out->sumq, out->amax, out->sumq_lo};
  for (int i = 0; i < b.n; i++)
    if (b.t[i] != keep[0] && b.t[i] != keep[1] && b.t[i] != keep[2] && b.t[i] != keep[3]) tkc_tensor_free(b.t[i]);
  if (out->words && out->sumq && out->amax && out->sumq_lo) return TKC_OK;
  tkc_quant_int8_x_free(out);
  return tkc_last_status();
}

void tkc_quant_int8_x_free(tkc_quant_int8_x *x) {
  tkc_tensor_free(x->words), tkc_tensor_free(x->sumq), tkc_tensor_free(x->amax), tkc_tensor_free(x->sumq_lo);
  *x = (tkc_quant_int8_x){0};
}

tkc_tensor *tkc_quant_int8_matmul(const tkc_quant_int8_x *x, tkc_tensor *const w[2], int ggml_type) {
  tkc_ctx *ctx = tkc_tensor_ctx(x->words);
  if (!ctx) return NULL;
  int fi = int8_format(ggml_type), nd = tkc_ndim(x->sumq); /* (..., nb) */
  if (fi < 0) return (void)tkc_err(TKC_EUNSUPPORTED, "int8 matmul: GGML type %d has no int8 path", ggml_type), NULL;
  int nib = int8_formats[fi].nibbles, topbits = int8_formats[fi].topbits, halves = int8_formats[fi].second == SECOND_HALVES;
  int64_t g = tkc_dim(w[0], 3), nc = tkc_dim(w[0], 1);
  if (tkc_dim(x->sumq, nd - 1) != nc * g || tkc_dim(x->words, nd + 1) != g) {
    (void)tkc_err(TKC_ESHAPE, "int8 matmul: x quantized for %lld columns, the weight has %lld", 32 * (long long)tkc_dim(x->sumq, nd - 1),
                  32 * (long long)(nc * g));
    return NULL;
  }
  qb b = {.ctx = ctx, .n = 0};
  /* per block: (..., nb) as (..., 1, nb / g, g), against the weight's (rows, nb / g, words, g) */
  int64_t gs[QUANT_MAX_DIMS];
  for (int i = 0; i < nd - 1; i++) gs[i] = tkc_dim(x->sumq, i);
  gs[nd - 1] = nc, gs[nd] = g;
  tkc_tensor *sumq = unsq(&b, reshape(&b, x->sumq, nd + 1, gs), -3), *m = U32(&b, 0x0F0F0F0F);
  tkc_tensor *dx = unsq(&b, reshape(&b, rec(&b, tkc_div(x->amax, F32(&b, 127))), nd + 1, gs), -3);
  tkc_tensor *xw = unsq(&b, x->words, -4); /* (..., 1, nb / g, 8, g) */
  /* the block's scale and second float16, (rows, nb / g, g) each: a scale group and its second side by side */
  tkc_tensor *sc = f32(&b, w[1]), *dw = word(&b, sc, 0), *t;
  /* the block's integer sum (int32, not a float sum per word), a half's for Q6_K: x's word k meets the
   * quants of weight word k (Q8_0's bytes), or of the nibbles (word k's low ones, word k - 4's high
   * ones) with their top bits from word 4 + (k / 4 for Q6_K) */
  tkc_tensor *sum[2] = {NULL, NULL};
  for (int k = 0; k < 8; k++) {
    tkc_tensor *q = word(&b, w[0], k);
    if (nib) q = k < 4 ? and_(&b, q, m) : and_(&b, shr(&b, word(&b, w[0], k - 4), U32(&b, 4)), m);
    if (topbits) {
      tkc_tensor *tw = word(&b, w[0], 4 + (topbits == 2 ? k / 4 : 0));
      tkc_tensor *top = and_(&b, shr(&b, tw, U32(&b, topbits == 2 ? 2 * (k % 4) : k)), U32(&b, topbits == 2 ? 0x03030303 : 0x01010101));
      q = or_(&b, q, shl(&b, top, U32(&b, 4)));
    }
    tkc_tensor *p = rec(&b, tkc_dot4(q, word(&b, xw, k))), **s = &sum[halves && k >= 4];
    *s = *s ? add(&b, *s, p) : p;
  }
  tkc_tensor *c = K(&b, TKC_INT32, int8_formats[fi].offset);
  if (halves) {
    tkc_tensor *lo = unsq(&b, reshape(&b, x->sumq_lo, nd + 1, gs), -3);
    sum[0] = add(&b, sum[0], mul(&b, lo, c)), sum[1] = add(&b, sum[1], mul(&b, sub(&b, sumq, lo), c));
    t = add(&b, mul(&b, f32(&b, sum[0]), dw), mul(&b, f32(&b, sum[1]), word(&b, sc, 1)));
  } else {
    if (int8_formats[fi].offset) sum[0] = add(&b, sum[0], mul(&b, sumq, c));
    t = mul(&b, f32(&b, sum[0]), dw);
    if (int8_formats[fi].second == SECOND_MIN) /* the block's min, times the sum of x's quants */
      t = sub(&b, t, mul(&b, f32(&b, sumq), word(&b, sc, 1)));
  }
  t = mul(&b, t, dx); /* (..., rows, nb / g, g) */
  const int axes[2] = {-2, -1};
  return qb_done(&b, rec(&b, tkc_sum(t, 2, axes, 0)));
}
