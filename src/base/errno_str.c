/* src/base/errno_str.c — thread-safe errno text (see errno_str.h). */
#include "base/errno_str.h"
#include <stdio.h>
#include <string.h>

const char *tkc_strerror(int e, char *buf, size_t n) {
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
  return strerror_r(e, buf, n); /* GNU: may return a static string instead of filling buf */
#else
  if (strerror_r(e, buf, n)) snprintf(buf, n, "error %d", e);
  return buf;
#endif
}
