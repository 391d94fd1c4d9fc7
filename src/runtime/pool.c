/* The buffer pool of each device (tinygrad's LRU allocator, onnxruntime's arena): a freed buffer's
 * memory is kept, by its exact byte size, and handed to the next buffer of that size, so a loop that
 * realizes the same shapes again allocates (and page-faults, and zero-fills) nothing. The pool of a
 * device holds at most TKC_POOL_MB megabytes (default 1024; 0 turns pooling off); past that the least
 * recently freed memory goes back to the device. tkc_device_release_pool empties it (tkc_ctx_free
 * does, for its device). One lock for every pool: buffers come and go from any thread. */
#include <stdlib.h>
#include <pthread.h> /* not C11 threads: ThreadSanitizer sees pthread locks only */
#include "runtime/device.h"

typedef struct pool_entry {
  struct pool_entry *newer, *older;
  void *ptr;
  size_t nbytes;
} pool_entry;

static pthread_mutex_t lock;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static size_t bound_bytes;

static void init(void) {
  pthread_mutex_init(&lock, NULL);
  const char *e = getenv("TKC_POOL_MB");
  char *end;
  long long mb = e && *e ? strtoll(e, &end, 10) : 1024;
  if (e && *e && (*end || mb < 0)) mb = 1024;
  bound_bytes = (size_t)mb << 20;
}

static void unlink_entry(tkc_device *d, pool_entry *e) {
  if (e->newer) e->newer->older = e->older;
  else d->pool_newest = e->older;
  if (e->older) e->older->newer = e->newer;
  else d->pool_oldest = e->newer;
  d->pool_bytes -= e->nbytes;
}

void *tkc_pool_take(tkc_device *d, size_t nbytes) {
  pthread_once(&once, init);
  void *p = NULL;
  pthread_mutex_lock(&lock);
  pool_entry *e = d->pool_newest;
  while (e && e->nbytes != nbytes) e = e->older;
  if (e) {
    unlink_entry(d, e);
    p = e->ptr;
    d->pool_reuses++;
  } else {
    d->pool_allocs++;
  }
  pthread_mutex_unlock(&lock);
  tkc_free(e);
  return p;
}

/* gives a list of entries (linked by newer, out of the pool) back to the device, outside the lock */
static void free_entries(tkc_device *d, pool_entry *e) {
  while (e) {
    pool_entry *next = e->newer;
    d->impl->free(e->ptr);
    tkc_free(e);
    e = next;
  }
}

bool tkc_pool_give(tkc_device *d, void *p, size_t nbytes) {
  pthread_once(&once, init);
  if (nbytes > bound_bytes) return false;
  pool_entry *e = tkc_malloc(sizeof *e), *evicted = NULL;
  if (!e) return false;
  *e = (pool_entry){.ptr = p, .nbytes = nbytes};
  pthread_mutex_lock(&lock);
  while (d->pool_bytes + nbytes > bound_bytes && d->pool_oldest) { /* make room: the oldest go */
    pool_entry *old = d->pool_oldest;
    unlink_entry(d, old);
    old->newer = evicted;
    evicted = old;
  }
  e->older = d->pool_newest;
  if (d->pool_newest) d->pool_newest->newer = e;
  else d->pool_oldest = e;
  d->pool_newest = e;
  d->pool_bytes += nbytes;
  pthread_mutex_unlock(&lock);
  free_entries(d, evicted);
  return true;
}

void tkc_device_release_pool(tkc_device *d) {
  if (!d) return;
  pthread_once(&once, init);
  pthread_mutex_lock(&lock);
  pool_entry *e = d->pool_oldest;
  d->pool_oldest = d->pool_newest = NULL;
  d->pool_bytes = 0;
  pthread_mutex_unlock(&lock);
  free_entries(d, e);
}

tkc_status tkc_device_pool_stats(const tkc_device *d, tkc_pool_stats *out) {
  if (!d || !out) return tkc_err(TKC_EINVAL, "tkc_device_pool_stats: NULL %s", d ? "out" : "device");
  pthread_once(&once, init);
  pthread_mutex_lock(&lock);
  *out = (tkc_pool_stats){.allocs = d->pool_allocs, .reuses = d->pool_reuses, .pooled_bytes = d->pool_bytes, .bound_bytes = bound_bytes};
  pthread_mutex_unlock(&lock);
  return TKC_OK;
}
