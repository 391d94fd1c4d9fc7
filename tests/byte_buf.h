/* tests/byte_buf.h — a growable byte buffer for tests and fuzz targets that write files in memory
 * (GGUF, safetensors): little-endian integers, GGUF strings (u64 length + bytes), alignment padding.
 * Out of memory aborts: it is the harness's, not the library's. */
#ifndef TKC_TESTS_BYTE_BUF_H
#define TKC_TESTS_BYTE_BUF_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  uint8_t *p;
  size_t n, cap;
} buf;

static inline void put(buf *b, const void *d, size_t k) {
  if (b->n + k > b->cap) {
    b->cap = (b->n + k) * 2 + 64;
    uint8_t *p = realloc(b->p, b->cap);
    if (!p) abort();
    b->p = p;
  }
  if (k) memcpy(b->p + b->n, d, k);
  b->n += k;
}
static inline void put_u8(buf *b, uint8_t v) { put(b, &v, 1); }
static inline void put_u32(buf *b, uint32_t v) { put(b, &v, 4); }
static inline void put_u64(buf *b, uint64_t v) { put(b, &v, 8); }
static inline void put_str(buf *b, const char *s) {
  put_u64(b, strlen(s));
  put(b, s, strlen(s));
}
static inline void pad_to(buf *b, size_t align) {
  while (b->n % align) put_u8(b, 0);
}

#endif
