/* tkc/io.h — model files: safetensors (Hugging Face) and GGUF (llama.cpp / ggml) read into named
 * tensors, and safetensors written from tensors.
 *
 *   tkc_state *st = tkc_gguf_load(ctx, "model.gguf");
 *   if (!st) puts(tkc_last_error());
 *   for (int i = 0; i < tkc_state_count(st); i++) printf("%s\n", tkc_state_name(st, i));
 *   tkc_tensor *w = tkc_state_get(st, "blk.0.attn_q.weight");   // a new handle: tkc_tensor_free(w)
 *   int64_t n_layer;
 *   tkc_gguf_meta_int(st, "llama.block_count", &n_layer);
 *   tkc_state_free(st);                                        // before tkc_ctx_free(ctx)
 *
 * Loading maps the file (mmap), checks every header field, offset and size against the file's size
 * and copies each tensor's bytes once into a realized tensor of ctx; the mapping is gone when the
 * load returns. A malformed file is refused whole: NULL with TKC_EINVAL and a message naming the file
 * and what is wrong (truncated header, offsets out of range or overlapping, a size that does not match
 * the dtype and shape, duplicate names, absurd counts or lengths); a valid file with something tkc
 * does not read (a dtype or GGML type it has no row for, more than 8 dims) is TKC_EUNSUPPORTED naming
 * it and the tensor. Nothing is ever printed.
 *
 * Both formats are little-endian and read on little-endian hosts only.
 *
 * GGUF (versions 2 and 3): shapes are numpy's row-major order (GGUF's `ne` reversed).
 * F32, F16, BF16, F64, I8, I16, I32 and I64 tensors are tensors of that dtype. The quantized types of
 * src/io/quant.h (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K) stay packed: their blocks are one
 * 1-D uint8 tensor in device memory, and tkc_state_get returns a lazy float32 tensor of the logical
 * shape whose values are dequantized by tensor ops that fuse into the consumer (a matmul reading it
 * never materializes the float weights). Metadata is copied out of the file: every GGUF value type,
 * arrays of scalars and of strings (arrays of arrays are refused).
 *
 * A state belongs to its ctx: free it before the ctx (tkc_ctx_free frees the tensors it holds; the
 * state must not be used after that, not even by tkc_state_free). Thread rules are the ctx's. */
#ifndef TKC_IO_H
#define TKC_IO_H
#include "tkc.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct tkc_state tkc_state;

/* ---------------------------------------------------------------- loading */

/* A safetensors file: an 8-byte little-endian header length, a JSON header (parsed with jansson;
 * duplicate names are refused) and the data. Dtypes F64 F32 F16 BF16 I64 I32 I16 I8 U64 U32 U16 U8
 * BOOL; others (F8_E4M3, C64 ...) are TKC_EUNSUPPORTED naming the dtype and the tensor. The
 * "__metadata__" entry (string values only) is read as string metadata: tkc_gguf_meta_str and the
 * other metadata getters below read it too. Tensors may leave unused bytes between them but never
 * overlap.
 * Built only with jansson (TKC_WITH_JANSSON): otherwise NULL + TKC_EUNSUPPORTED ("built without
 * jansson"). NULL + tkc_last_error() on failure. */
TKC_API tkc_state *tkc_safetensors_load(tkc_ctx *ctx, const char *path);
/* The same from n bytes in memory (copied like a file; data may be freed after the call). */
TKC_API tkc_state *tkc_safetensors_load_bytes(tkc_ctx *ctx, const void *data, size_t n);
/* A GGUF file (version 2 or 3). NULL + tkc_last_error() on failure. */
TKC_API tkc_state *tkc_gguf_load(tkc_ctx *ctx, const char *path);
/* The same from n bytes in memory. */
TKC_API tkc_state *tkc_gguf_load_bytes(tkc_ctx *ctx, const void *data, size_t n);

/* ---------------------------------------------------------------- the tensors of a state */

/* The number of tensors; -1 on NULL. */
TKC_API int tkc_state_count(const tkc_state *s);
/* Tensor i's name in file order (owned by the state); NULL + TKC_EINVAL out of range. */
TKC_API const char *tkc_state_name(const tkc_state *s, int i);
/* A new handle to the tensor `name` (each call another one: release it with tkc_tensor_free; the
 * state keeps its own). For a quantized GGUF tensor: a new lazy float32 dequantizing tensor over the
 * packed blocks. NULL + TKC_EINVAL naming it when there is no such tensor. */
TKC_API tkc_tensor *tkc_state_get(tkc_state *s, const char *name);
/* x @ w^T for the 2-D weight `name` ((out, in), a Linear's): x (..., in) gives (..., out), lazy.
 * flags 0: the same as tkc_matmul(x, tkc_transpose(tkc_state_get(s, name), 0, 1)) (a quantized
 * weight dequantizes inside the product). flags TKC_MATMUL_INT8 with a quantized weight (Q4_0, Q4_1,
 * Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K): as llama.cpp computes it, x is quantized to int8 per block of
 * 32 values (one float scale each) and the block products are int8 dot products summed in int32
 * (tkc_dot4: vpdpbusd on AVX-512 VNNI hosts, dp4a on CUDA), scaled in float32: results within about
 * 1% of the float product (the quantization of x); faster for a few rows of x (a decode step), not
 * for many (a prefill: the float product there). The first such call repacks the weight on the host
 * into 32-bit words of quants and float16 scales kept by the state (about the size of the packed
 * weight; no kernel runs, so the first call may be inside a tkc_jit capture; K-quant scales rounded
 * to float16); other types ignore the flag. NULL + tkc_last_error(): a NULL or unknown name
 * (TKC_EINVAL), x NULL or of another ctx (TKC_EINVAL), a weight that is not 2-D or an x whose last dim
 * is not `in` (TKC_ESHAPE), an int8 x that is not of a float dtype (TKC_EDTYPE), an unknown flag
 * (TKC_EINVAL), a K-quant scale beyond float16 (TKC_EUNSUPPORTED). */
#define TKC_MATMUL_INT8 1
TKC_API tkc_tensor *tkc_state_matmul(tkc_state *s, const char *name, tkc_tensor *x, int flags);
/* tkc_state_matmul of one x with n weights (the q, k and v of an attention, a gate and an up
 * projection): out[i] = x @ names[i]^T, x quantized once for all the int8 products. TKC_OK, or a
 * status with every out[i] NULL: the errors of tkc_state_matmul, and TKC_EINVAL for n < 1 or NULL
 * names / out. */
TKC_API tkc_status tkc_state_matmuls(tkc_state *s, int n, const char *const *names, tkc_tensor *x, int flags, tkc_tensor **out);
/* The dtype and shape tkc_state_get gives for `name` without building anything: ndim to *ndim,
 * up to 8 dims to shape (either may be NULL; dtype too). TKC_EINVAL for an unknown name. */
TKC_API tkc_status tkc_state_shape(const tkc_state *s, const char *name, tkc_dtype *dtype, int *ndim, int64_t *shape);
/* Frees the state and the handles it holds (tensors from tkc_state_get stay). NULL is a no-op. */
TKC_API void tkc_state_free(tkc_state *s);

/* ---------------------------------------------------------------- writing */

/* Writes n tensors (realized first; any ctx, any shape without variable dims) to a safetensors file
 * under names[i] (unique, not empty, not "__metadata__"), data in the given order, the header padded
 * to 8 bytes as the safetensors package does. The file is written next to path and renamed over it,
 * so a failure leaves no partial file. Every dtype but the fp8 ones. TKC_EINVAL for NULL or bad
 * arguments (naming the index), TKC_EUNSUPPORTED without jansson, TKC_ERUNTIME when writing fails. */
TKC_API tkc_status tkc_safetensors_save(const char *path, int n, const char *const *names, tkc_tensor *const *ts);

/* ---------------------------------------------------------------- GGUF metadata and types */

/* GGUF metadata value types (gguf_type). */
enum {
  TKC_GGUF_UINT8 = 0, TKC_GGUF_INT8 = 1, TKC_GGUF_UINT16 = 2, TKC_GGUF_INT16 = 3, TKC_GGUF_UINT32 = 4,
  TKC_GGUF_INT32 = 5, TKC_GGUF_FLOAT32 = 6, TKC_GGUF_BOOL = 7, TKC_GGUF_STRING = 8, TKC_GGUF_ARRAY = 9,
  TKC_GGUF_UINT64 = 10, TKC_GGUF_INT64 = 11, TKC_GGUF_FLOAT64 = 12
};
/* The number of metadata entries (-1 on NULL; a safetensors file's __metadata__ strings) and key i in file order
 * (NULL + TKC_EINVAL out of range). */
TKC_API int tkc_gguf_meta_count(const tkc_state *s);
TKC_API const char *tkc_gguf_meta_key(const tkc_state *s, int i);
/* The value type of key (TKC_GGUF_*), -1 when there is no such key (no error is set: a probe). */
TKC_API int tkc_gguf_meta_type(const tkc_state *s, const char *key);
/* An integer or bool value to *out. TKC_EINVAL for an unknown key, another type, or a uint64 above
 * INT64_MAX. */
TKC_API tkc_status tkc_gguf_meta_int(const tkc_state *s, const char *key, int64_t *out);
/* A float32/float64 value (or an integer one, converted) to *out. TKC_EINVAL otherwise. */
TKC_API tkc_status tkc_gguf_meta_float(const tkc_state *s, const char *key, double *out);
/* A string value (owned by the state, NUL-terminated; a NUL inside the value ends it early: see
 * tkc_gguf_meta_str_len). NULL + TKC_EINVAL for an unknown key or another type. */
TKC_API const char *tkc_gguf_meta_str(const tkc_state *s, const char *key);
/* The byte length of a string value, -1 + TKC_EINVAL as above. */
TKC_API int64_t tkc_gguf_meta_str_len(const tkc_state *s, const char *key);
/* An array value: its element type (TKC_GGUF_*) to *elem_type, its length to *count and to *data
 * its elements (owned by the state): little-endian values of that type packed as in the file (bool
 * as one byte), or for strings an array of count NUL-terminated `const char *`. Any out pointer may
 * be NULL. TKC_EINVAL for an unknown key or a value that is not an array. */
TKC_API tkc_status tkc_gguf_meta_array(const tkc_state *s, const char *key, int *elem_type, int64_t *count, const void **data);
/* Element i of a string array (tokenizer.ggml.tokens); NULL + TKC_EINVAL for an unknown key, a
 * value that is not a string array, or i out of range. */
TKC_API const char *tkc_gguf_meta_array_str(const tkc_state *s, const char *key, int64_t i);
/* The GGML type id (ggml.h GGML_TYPE_*: 0 F32, 1 F16, 8 Q8_0, 30 BF16 ...) of tensor name as stored
 * in the file; -1 + TKC_EINVAL for an unknown name, -1 for a safetensors state. */
TKC_API int tkc_gguf_tensor_type(const tkc_state *s, const char *name);

/* ---------------------------------------------------------------- tokenizer (src/io/tokenizer.c) */

/* A text tokenizer built from a GGUF file's vocabulary (tokenizer.ggml.*), as llama.cpp reads it:
 *
 *   tkc_tokenizer *tok = tkc_tokenizer_from_gguf(st);      // copies what it needs: st may be freed
 *   int32_t ids[512];
 *   int n = tkc_tokenizer_encode(tok, "Hello world", 11, -1, ids, 512);
 *   char text[2048];
 *   tkc_tokenizer_decode(tok, ids, n, text, sizeof text);
 *   tkc_tokenizer_free(tok);
 *
 * tokenizer.ggml.model "llama": SentencePiece (llama.cpp's llm_tokenizer_spm). Spaces become U+2581
 * (and one is put in front of non-empty text when tokenizer.ggml.add_space_prefix, true when absent);
 * the text is split into UTF-8 characters (a byte that does not start a valid sequence is a character
 * of its own), then the adjacent pair whose concatenation is a vocabulary token of the highest score
 * (tokenizer.ggml.scores; the leftmost on a tie) is merged until none is; a character that is no token
 * becomes its bytes' <0xXX> tokens (or tokenizer.ggml.unknown_token_id / the first UNKNOWN-typed token).
 * "gpt2": byte-level BPE: a pre-tokenizer approximating GPT-2's regex whatever tokenizer.ggml.pre
 * says (see tokenizer.c: ASCII letters, digits, whitespace and punctuation classes; every byte >= 0x80
 * counts as a letter), each piece's bytes mapped to GPT-2's printable characters and merged by
 * tokenizer.ggml.merges rank (the lowest first, the leftmost on a tie).
 * Special / user-defined tokens written in the text are not recognized: they are tokenized as text.
 * Required keys: model, tokens (at most 2^24), scores (llama; as many float32 as tokens), merges
 * (gpt2); optional: token_type (int32, as many as tokens), bos/eos/unknown_token_id (in range),
 * add_bos_token (default: true for llama, false for gpt2), add_space_prefix. Anything missing or
 * malformed: NULL + TKC_EINVAL naming the key; another model: TKC_EUNSUPPORTED. */
typedef struct tkc_tokenizer tkc_tokenizer;
TKC_API tkc_tokenizer *tkc_tokenizer_from_gguf(const tkc_state *s);
/* Encodes len bytes of text (any bytes: invalid UTF-8 becomes byte tokens), BOS first when add_bos
 * is 1 (0: never; -1: as the file's add_bos_token says). Returns the number of ids; when it is more
 * than cap, only the first cap are written (call again with a larger buffer). -1 + tkc_last_error()
 * on NULL arguments, a text of over 2^27 bytes, or a byte that has no token and no unknown token.
 * A tokenizer is read-only once built: threads may encode and decode with it at once. */
TKC_API int tkc_tokenizer_encode(tkc_tokenizer *t, const char *text, size_t len, int add_bos, int32_t *ids, int cap);
/* The text of n ids: the pieces below concatenated, and for "llama" with add_space_prefix the one
 * leading space of the result removed (so decode(encode(text)) == text). Returns its byte length;
 * writes at most cap bytes and a NUL after them when there is room. -1 + TKC_EINVAL for an id out of
 * range. */
TKC_API int tkc_tokenizer_decode(tkc_tokenizer *t, const int32_t *ids, int n, char *buf, size_t cap);
/* Token id's bytes in decoded text (owned by t, *len bytes, NUL-terminated; may hold a NUL): a byte
 * token is its byte, U+2581 is a space (llama), GPT-2's byte characters are their bytes (gpt2), a
 * CONTROL token (BOS, EOS ...) is "". NULL + TKC_EINVAL out of range. */
TKC_API const char *tkc_tokenizer_piece(const tkc_tokenizer *t, int32_t id, size_t *len);
/* Token id's text as stored in the vocabulary ("<s>", "\xe2\x96\x81the"), NULL out of range; the id of
 * an exact vocabulary text, -1 when none (no error set: a probe). */
TKC_API const char *tkc_tokenizer_token_text(const tkc_tokenizer *t, int32_t id);
TKC_API int32_t tkc_tokenizer_find(const tkc_tokenizer *t, const char *text);
/* The vocabulary size, "llama" or "gpt2", BOS and EOS ids (-1 when the file has none) and the file's
 * add_bos_token; -1 / NULL on NULL. */
TKC_API int tkc_tokenizer_vocab_size(const tkc_tokenizer *t);
TKC_API const char *tkc_tokenizer_model(const tkc_tokenizer *t);
TKC_API int32_t tkc_tokenizer_bos(const tkc_tokenizer *t);
TKC_API int32_t tkc_tokenizer_eos(const tkc_tokenizer *t);
TKC_API int tkc_tokenizer_add_bos(const tkc_tokenizer *t);
/* NULL is a no-op. */
TKC_API void tkc_tokenizer_free(tkc_tokenizer *t);

#ifdef __cplusplus
}
#endif
#endif
