/* src/base/errno_str.h — errno text without strerror (which may share one static buffer between
 * threads). TKC_STRERROR(e) gives a string that lives until the end of the enclosing block. */
#ifndef TKC_ERRNO_STR_H
#define TKC_ERRNO_STR_H
#include "base/common.h"

TKC_HIDDEN const char *tkc_strerror(int e, char *buf, size_t n);
#define TKC_STRERROR(e) tkc_strerror((e), (char[128]){0}, 128)

#endif
