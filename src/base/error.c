/* Thread-local error state, status strings, version. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"

static _Thread_local char err_msg[1024];
static _Thread_local tkc_status err_status;
static _Thread_local unsigned err_serial;

static void set_error(tkc_status s, const char *fmt, va_list ap) {
  err_status = s;
  err_serial++;
  vsnprintf(err_msg, sizeof err_msg, fmt, ap);
  if (tkc_debug_level() >= 2) fprintf(stderr, "tkc: %s: %s\n", tkc_status_str(s), err_msg);
}

tkc_status tkc_err(tkc_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_error(s, fmt, ap);
  va_end(ap);
  return s;
}

void *tkc_err_null(tkc_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_error(s, fmt, ap);
  va_end(ap);
  return NULL;
}

const char *tkc_last_error(void) { return err_msg; }
tkc_status tkc_last_status(void) { return err_status; }
unsigned tkc_err_serial(void) { return err_serial; }
void tkc_clear_error(void) { err_status = TKC_OK; err_msg[0] = 0; }

const char *tkc_status_str(tkc_status s) {
  switch (s) {
  case TKC_OK: return "ok";
  case TKC_EINVAL: return "invalid argument";
  case TKC_ESHAPE: return "shape mismatch";
  case TKC_EDTYPE: return "unsupported dtype";
  case TKC_ENOMEM: return "out of memory";
  case TKC_EDEVICE: return "device unavailable";
  case TKC_ECOMPILE: return "compile error";
  case TKC_EUNSUPPORTED: return "unsupported on this backend";
  case TKC_ERUNTIME: return "runtime error";
  case TKC_EINTERNAL: return "internal error";
  }
  return "unknown status";
}

#define STR_(x) #x
#define STR(x) STR_(x)
const char *tkc_version(void) { return STR(TKC_VERSION_MAJOR) "." STR(TKC_VERSION_MINOR) "." STR(TKC_VERSION_PATCH); }

int tkc_debug_level(void) {
  static _Atomic int level = -1; /* read once; threads racing here store the same value */
  int v = atomic_load_explicit(&level, memory_order_relaxed);
  if (v < 0) {
    const char *e = getenv("TKC_DEBUG");
    v = e ? atoi(e) : 0;
    if (v < 0) v = 0;
    atomic_store_explicit(&level, v, memory_order_relaxed);
  }
  return v;
}

static void sbuf_grow(tkc_sbuf *b, size_t need) {
  if (b->oom || b->len + need + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + need + 1) cap *= 2;
  char *s = tkc_realloc(b->s, cap);
  if (!s) { b->oom = 1; return; }
  b->s = s;
  b->cap = cap;
}

void tkc_sbuf_printf(tkc_sbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) { b->oom = 1; return; }
  sbuf_grow(b, (size_t)n);
  if (b->oom) return;
  va_start(ap, fmt);
  vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

void tkc_sbuf_puts(tkc_sbuf *b, const char *s) {
  size_t n = strlen(s);
  sbuf_grow(b, n);
  if (b->oom) return;
  memcpy(b->s + b->len, s, n + 1);
  b->len += n;
}

char *tkc_sbuf_take(tkc_sbuf *b) {
  if (!b->oom && !b->s) sbuf_grow(b, 0);
  if (b->oom) { tkc_free(b->s); b->s = NULL; return tkc_err_null(TKC_ENOMEM, "out of memory building a string"); }
  b->s[b->len] = 0;
  char *s = b->s;
  b->s = NULL;
  b->len = b->cap = 0;
  return s;
}
