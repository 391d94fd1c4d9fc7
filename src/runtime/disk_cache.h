/* src/runtime/disk_cache.h — the on-disk cache of compiled kernels (and other build results) that
 * outlives the process: a second process running the same program compiles nothing. Internal; the
 * public side is tkc_disk_cache_stats / tkc_disk_cache_dir in tkc/runtime.h. */
#ifndef TKC_DISK_CACHE_H
#define TKC_DISK_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include "base/common.h"

/* Looks key up in the cache's kind folder ("cpu", "llvm", ...). On a hit returns the stored bytes
 * (malloc'ed, *n set); NULL on a miss, when the cache is off, or when the entry is damaged (a
 * truncated, corrupt, foreign or unreadable file is removed and counts as "rejected"). Never sets
 * an error: the caller builds what it looked for. */
TKC_HIDDEN void *tkc_dcache_get(const char *kind, const void *key, size_t keylen, size_t *n);

/* Stores data under key, atomically (a private temporary file renamed into place), then keeps the
 * cache within its size bound. Failures (a full disk, the file size limit: EFBIG, never SIGXFSZ)
 * only count in the stats (and print at TKC_DEBUG >= 2, naming the file and the reason). */
TKC_HIDDEN void tkc_dcache_put(const char *kind, const void *key, size_t keylen, const void *data, size_t n);

/* Whether a cache folder is in effect (TKC_CACHE_DIR is not empty, or a default one can be named):
 * callers skip building keys and reading back what they would store when it is not. */
TKC_HIDDEN bool tkc_dcache_on(void);

#endif
