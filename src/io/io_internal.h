/* src/io/io_internal.h — what the model-file readers (safetensors.c, gguf.c) share: the state of named
 * tensors and GGUF metadata, its name index, and the read-only file mapping. Public API only (tkc.h). */
#ifndef TKC_IO_INTERNAL_H
#define TKC_IO_INTERNAL_H
#include <stdint.h>
#include <stddef.h>
#include "tkc.h"
#include "tkc/io.h"

/* the library's error recorder (src/base/common.h), declared here as quant.c does: io/ uses the public
 * API only */
tkc_status tkc_err(tkc_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define IO_MAX_DIMS 8 /* tkc's own limit on dims (src/shape/shape.h) */

/* one named tensor of a state */
typedef struct {
  char *name;
  tkc_tensor *t;    /* realized: the values, or for a quantized GGUF type its packed blocks (1-D uint8) */
  int ggml_type;    /* the GGML type id for a GGUF tensor, -1 for safetensors */
  int packed;       /* 1: t holds blocks that tkc_state_get dequantizes */
  tkc_dtype dtype;  /* what tkc_state_get gives */
  int ndim;
  int64_t shape[IO_MAX_DIMS];
  tkc_tensor *int8[2]; /* the weight repacked for tkc_state_matmul's int8 path (quant.h), made at its first use */
} io_entry;

/* one GGUF metadata value, copied out of the file */
typedef struct {
  char *key;
  int type;            /* TKC_GGUF_* */
  int64_t i;           /* integer and bool values */
  uint64_t u;          /* the same for TKC_GGUF_UINT64 (may exceed INT64_MAX) */
  double f;            /* float values */
  char *str;           /* TKC_GGUF_STRING: NUL-terminated copy ... */
  int64_t str_len;     /* ... of this many bytes */
  int elem_type;       /* TKC_GGUF_ARRAY: element type, */
  int64_t count;       /* length, */
  void *data;          /* packed scalar elements, or for strings: char *[count] */
} io_kv;

/* an open-addressing name -> index table (the names are owned elsewhere) */
typedef struct {
  const char **keys; /* keys[slot]: the name in that slot, NULL = empty */
  int *idx;          /* idx[slot]: its index */
  size_t cap, n;
} io_index;

struct tkc_state {
  tkc_ctx *ctx;
  int is_gguf;
  io_entry *e;
  int n, cap;
  io_index names;
  io_kv *kv;
  int nkv, kvcap;
  io_index keys;
};

/* a read-only mapping of a whole file (or borrowed bytes) */
typedef struct {
  const uint8_t *p;
  size_t n;
  void *map; /* mmap's base, NULL when p is borrowed */
} io_file;

/* Maps path read-only (TKC_EINVAL naming it when it cannot be opened, is not a regular file or is empty). */
tkc_status io_file_map(const char *path, io_file *f);
void io_file_unmap(io_file *f);

/* a format's parser: the state of the n bytes at p (what names them in errors), NULL + error */
typedef tkc_state *(*io_parser)(tkc_ctx *ctx, const uint8_t *p, size_t n, const char *what);
/* fn (the public call, for its errors) over the file at path, mapped for the parse, or over n bytes */
tkc_state *io_load_file(tkc_ctx *ctx, const char *path, const char *fn, io_parser parse);
tkc_state *io_load_bytes(tkc_ctx *ctx, const void *data, size_t n, const char *fn, const char *what, io_parser parse);

/* index: 0 added, 1 key was there (*found = its index), TKC_ENOMEM as -1 */
int io_index_add(io_index *x, const char *key, int i, int *found);
/* the index of key, -1 when absent */
int io_index_find(const io_index *x, const char *key);
void io_index_free(io_index *x);

tkc_state *io_state_new(tkc_ctx *ctx, int is_gguf);
/* A new entry (zeroed but for name, a copy of the first len bytes, and ggml_type = -1); NULL with
 * TKC_EINVAL naming `what` for a duplicate name, TKC_ENOMEM. */
io_entry *io_state_add(tkc_state *s, const char *name, size_t len, const char *what);
/* A new metadata entry (zeroed, key copied); NULL with TKC_EINVAL for a duplicate key, TKC_ENOMEM. */
io_kv *io_state_add_kv(tkc_state *s, const char *key, size_t len, const char *what);
/* entry / kv by name; NULL when absent (no error set) */
const io_entry *io_state_find(const tkc_state *s, const char *name);
const io_kv *io_state_find_kv(const tkc_state *s, const char *key);

/* a + b and a * b without wrapping: 0 and *out set, or 1 on overflow */
static inline int io_add_overflows(uint64_t a, uint64_t b, uint64_t *out) { return __builtin_add_overflow(a, b, out); }
static inline int io_mul_overflows(uint64_t a, uint64_t b, uint64_t *out) { return __builtin_mul_overflow(a, b, out); }

#endif
