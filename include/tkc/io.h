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

#ifdef __cplusplus
}
#endif
#endif
