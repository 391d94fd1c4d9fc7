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
/* $TKC_DEBUG as an int (read once). */
TKC_HIDDEN int tkc_debug_level(void);
/* Seconds on the monotonic clock (for durations). */
TKC_HIDDEN double tkc_now_s(void);

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
