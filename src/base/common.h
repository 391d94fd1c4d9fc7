/* src/base/common.h — helpers shared by every tkc source file (not installed). */
#ifndef TKC_COMMON_H
#define TKC_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include "tkc/base.h"

#define TKC_HIDDEN __attribute__((visibility("hidden")))
#define TKC_COUNTOF(a) (sizeof(a) / sizeof((a)[0]))
#define TKC_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* Records a failure for tkc_last_error() on this thread and returns s (so `return tkc_err(...)`). */
TKC_HIDDEN tkc_status tkc_err(tkc_status s, const char *fmt, ...) TKC_PRINTF(2, 3);
/* Same, returning NULL for pointer-returning functions. */
TKC_HIDDEN void *tkc_err_null(tkc_status s, const char *fmt, ...) TKC_PRINTF(2, 3);
/* Counts the failures recorded on this thread: a caller that compares it before and after a call
 * knows whether the callee gave a reason, and adds its own only when not (keeping the first). */
TKC_HIDDEN unsigned tkc_err_serial(void);
/* $TKC_DEBUG as an int (read once). */
TKC_HIDDEN int tkc_debug_level(void);
/* Seconds on the monotonic clock (for durations). */
TKC_HIDDEN double tkc_now_s(void);

/* Host memory, from the allocator set by tkc_set_allocator (see alloc.c). Blocks from these must
 * be freed with tkc_free (public, in tkc/base.h), never with free(). */
TKC_HIDDEN void *tkc_malloc(size_t n);
TKC_HIDDEN void *tkc_calloc(size_t count, size_t size);
TKC_HIDDEN void *tkc_realloc(void *p, size_t n); /* NULL on failure, p untouched */
TKC_HIDDEN char *tkc_strdup(const char *s);
/* align: a power of two >= 16; free with tkc_free_aligned. */
TKC_HIDDEN void *tkc_malloc_aligned(size_t n, size_t align);
TKC_HIDDEN void tkc_free_aligned(void *p);

/* FNV-1a of n bytes continuing from h (start with TKC_FNV_OFFSET); tkc_hash64 also mixes the bits,
 * for when the low bits must be good too (file names, checksums). */
#define TKC_FNV_OFFSET 1469598103934665603ull
TKC_HIDDEN uint64_t tkc_fnv1a(const void *p, size_t n, uint64_t h);
TKC_HIDDEN uint64_t tkc_hash64(const void *p, size_t n, uint64_t seed);
/* splitmix64's output function: nearby inputs give unrelated 64-bit values. */
TKC_HIDDEN uint64_t tkc_splitmix64(uint64_t x);

/* A growable byte buffer for building strings. On allocation failure it sets oom and drops text. */
typedef struct tkc_sbuf {
  char *s;
  size_t len, cap;
  int oom;
} tkc_sbuf;
TKC_HIDDEN void tkc_sbuf_printf(tkc_sbuf *b, const char *fmt, ...) TKC_PRINTF(2, 3);
TKC_HIDDEN void tkc_sbuf_puts(tkc_sbuf *b, const char *s);
/* Hands the string to the caller (NULL + TKC_ENOMEM if anything failed). */
TKC_HIDDEN char *tkc_sbuf_take(tkc_sbuf *b);

#endif
