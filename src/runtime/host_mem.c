/* Host memory of the host devices (see host_mem.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "base/common.h"
#include "runtime/host_mem.h"

void *tkc_host_alloc_uninit(size_t nbytes) {
  if (nbytes > SIZE_MAX - 63) return NULL;
  size_t sz = (nbytes + 63) & ~(size_t)63;
  if (sz == 0) sz = 64; /* alloc(0) is a valid, distinct buffer */
  return tkc_malloc_aligned(sz, 64);
}

void *tkc_host_alloc(size_t nbytes) {
  void *p = tkc_host_alloc_uninit(nbytes);
  if (p) memset(p, 0, (nbytes + 63) & ~(size_t)63);
  return p;
}

void tkc_host_free(void *p) { tkc_free_aligned(p); }

tkc_status tkc_host_copy(void *dst, const void *src, size_t nbytes) {
  if (nbytes == 0) return TKC_OK;
  if (!dst || !src) return tkc_err(TKC_EINVAL, "host copy with a NULL pointer");
  memcpy(dst, src, nbytes);
  return TKC_OK;
}
