/* src/runtime/host_mem.h — host memory for the devices that run kernels on the host (CPU, LLVM,
 * INTERP): their tkc_device_impl alloc/free/copyin/copyout. Internal. */
#ifndef TKC_RUNTIME_HOST_MEM_H
#define TKC_RUNTIME_HOST_MEM_H

#include <stddef.h>
#include "base/common.h"

/* nbytes (rounded up to 64, at least 64: alloc(0) is a valid, distinct buffer) of zeroed, 64-byte
 * aligned memory; NULL when it cannot be had (the caller records the error). */
TKC_HIDDEN void *tkc_host_alloc(size_t nbytes);
/* The same without the zero fill. */
TKC_HIDDEN void *tkc_host_alloc_uninit(size_t nbytes);
TKC_HIDDEN void tkc_host_free(void *p);
/* memcpy; TKC_EINVAL for a NULL pointer with nbytes > 0 */
TKC_HIDDEN tkc_status tkc_host_copy(void *dst, const void *src, size_t nbytes);

#endif
