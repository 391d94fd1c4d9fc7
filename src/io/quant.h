/* src/io/quant.h — GGML's quantized weight formats, kept packed in device memory and dequantized by
 * tensor ops (bitcast, shifts, masks, scales) that fuse into the consuming matmul/matvec, as tinygrad's
 * nn/state.py ggml_data_to_tensor does: the full-precision weights never exist in memory.
 * Used by the GGUF reader (src/io/gguf.c); public API only (tkc.h). */
#ifndef TKC_IO_QUANT_H
#define TKC_IO_QUANT_H
#include "tkc.h"

/* GGML type ids (ggml.h GGML_TYPE_*, as stored in GGUF tensor infos) */
enum {
  TKC_GGML_F32 = 0, TKC_GGML_F16 = 1, TKC_GGML_Q4_0 = 2, TKC_GGML_Q4_1 = 3, TKC_GGML_Q5_0 = 6,
  TKC_GGML_Q5_1 = 7, TKC_GGML_Q8_0 = 8, TKC_GGML_Q4_K = 12, TKC_GGML_Q5_K = 13, TKC_GGML_Q6_K = 14,
  TKC_GGML_BF16 = 30
};

/* one row of the format table: block_elems values are stored in block_bytes bytes */
typedef struct {
  int type;
  const char *name; /* "Q4_0", as GGML names it */
  int block_elems, block_bytes;
} tkc_quant_format;

/* The row of a GGML type id, or NULL when tkc does not read that type. */
const tkc_quant_format *tkc_quant_format_of(int ggml_type);

/* A new lazy float32 tensor of the row-major `shape` (ndim >= 1) whose values are the dequantized
 * blocks of `packed`: a 1-D uint8 tensor of exactly numel(shape) / block_elems * block_bytes bytes
 * (its ctx is the result's). The last dim must be a multiple of block_elems (a GGML row never starts
 * inside a block). NULL with tkc_last_error() set otherwise (TKC_EUNSUPPORTED for a type without a
 * row, TKC_ESHAPE for sizes that do not fit). packed is not consumed (the caller keeps its handle). */
tkc_tensor *tkc_quant_dequantize(tkc_tensor *packed, int ggml_type, int ndim, const int64_t *shape);
/* More on tkc_quant_dequantize: the plain types F32, F16 and BF16 give float32 too. packed may be lazy
 * or a view (a shrink of a whole file's bytes at any offset); bytes that are not uint8 are TKC_EDTYPE,
 * a packed tensor that is not 1-d TKC_ESHAPE, a NULL one TKC_EINVAL (an earlier error is kept, as for
 * every op), a freed one TKC_EINVAL. No kernel runs (a few bytes of constant tables, the shift amounts,
 * are uploaded as buffers of the ctx): the result is a lazy expression of bitcasts, shifts, masks and
 * float32 products in ggml's order (values bit-exact with ggml's dequantize_row_*), so a matmul or
 * matvec consuming it is ONE kernel reading the packed bytes (and the tables). The float16 scales go
 * through the device's float16 (tkc_bitcast to float16, then tkc_cast): a WEBGPU adapter without
 * shader-f16 refuses such kernels (TKC_EUNSUPPORTED). */

/* The bytes a tensor of ggml_type and the row-major `shape` takes (numel / block_elems * block_bytes),
 * for a reader to check a file's sizes; -1 with tkc_last_error() set when the type has no row
 * (TKC_EUNSUPPORTED) or the shape does not fit it (TKC_ESHAPE: ndim outside 1..8 (TKC_MAX_DIMS), a
 * negative or variable dim, more than 2^55 elements, a last dim that is not whole blocks). */
int64_t tkc_quant_nbytes(int ggml_type, int ndim, const int64_t *shape);

/* The int8 path (quant.c has the scheme): whether ggml_type has it (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K). */
int tkc_quant_has_int8(int ggml_type);
/* The (rows, cols) weights in `packed` (as tkc_quant_dequantize takes them) repacked for it on the
 * host (no kernel runs), realized in packed's ctx: out[0] the quants as uint32 words (rows, blocks /
 * g, words per block, g), out[1] the float16 scale of each block of 32 and, for the formats with
 * one, its second float16 (Q4_1 / Q5_1 / Q4_K / Q5_K's min, Q6_K's scale of the second 16 values),
 * laid out as the words: (rows, blocks / g, 1 or 2, g). TKC_OK, or a status with out[] NULL
 * (TKC_EUNSUPPORTED for another type or a K-quant scale beyond float16, TKC_ESHAPE for sizes that do
 * not fit, an empty matrix too). */
tkc_status tkc_quant_int8_repack(tkc_tensor *packed, int ggml_type, int64_t rows, int64_t cols, tkc_tensor *out[2]);
/* x (..., cols) of a float dtype quantized for the int8 path (llama.cpp's Q8_0 activations: per
 * block of 32, d = max|x| / 127, q = round(x / d), half to even, 0 where d is 0), lazy: words
 * (..., blocks / g, 8, g) int32, the quants (4 bytes a word) grouped as the repacked weights of
 * `cols` columns; sumq (..., blocks) int32, each block's sum of quants; amax (..., blocks) float32,
 * max|x|. TKC_OK, or a status with every part NULL (TKC_ESHAPE: x's last dim is not cols, or x has
 * more than 5 dims; TKC_EDTYPE: x is not float). */
typedef struct {
  tkc_tensor *words, *sumq, *amax, *sumq_lo; /* sumq_lo: the sum of each block's first 16 quants */
} tkc_quant_int8_x;
tkc_status tkc_quant_int8_input(tkc_tensor *x, int64_t cols, tkc_quant_int8_x *out);
void tkc_quant_int8_x_free(tkc_quant_int8_x *x);
/* x @ w^T for x quantized by tkc_quant_int8_input and the repacked weights of ggml_type: (..., rows)
 * float32, lazy: one kernel of int8 dot products summed in int32 per block (tkc_dot4) and scaled in
 * float32. NULL + error (TKC_ESHAPE when x was quantized for another number of columns; another ctx). */
tkc_tensor *tkc_quant_int8_matmul(const tkc_quant_int8_x *x, tkc_tensor *const w[2], int ggml_type);

#endif
