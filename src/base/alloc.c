/* Every block of host memory tkc takes comes from here, through the allocator the program set
 * (Lua's lua_Alloc shape; the C library's by default).
 *
 * Each block carries a 16-byte header before the pointer tkc uses: its size (so the allocator is
 * given osize on resize and free, as lua_Alloc promises) and the slot of the allocator that made
 * it (so a block is always freed by the allocator that made it, whenever tkc_set_allocator runs).
 * The header also keeps the live-block counters that tkc_memory_stats reports. */
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "base/common.h"

typedef struct {
  alignas(max_align_t) size_t size; /* what the caller asked for */
  uint32_t slot;                    /* index into allocators[] */
} header;
_Static_assert(sizeof(header) % alignof(max_align_t) == 0, "the header keeps blocks aligned");

typedef struct {
  tkc_alloc_fn fn;
  void *ud;
} allocator;

#define MAX_ALLOCATORS 64 /* distinct (fn, ud) pairs a process may install */

static void *libc_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud, (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  return realloc(ptr, nsize);
}

/* Entries are written once, before nallocators publishes them, and never change. */
static allocator allocators[MAX_ALLOCATORS] = {{libc_alloc, NULL}};
static _Atomic uint32_t nallocators = 1;
static _Atomic uint32_t current; /* the slot new blocks come from */
static pthread_mutex_t set_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic size_t live_blocks, live_bytes;

tkc_status tkc_set_allocator(tkc_alloc_fn fn, void *ud) {
  if (!fn) fn = libc_alloc, ud = NULL;
  pthread_mutex_lock(&set_lock);
  uint32_t n = atomic_load(&nallocators), slot = n;
  for (uint32_t i = 0; i < n; i++)
    if (allocators[i].fn == fn && allocators[i].ud == ud) slot = i;
  if (slot == n) {
    if (n == MAX_ALLOCATORS) {
      pthread_mutex_unlock(&set_lock);
      return tkc_err(TKC_EINVAL, "tkc_set_allocator: more than %d distinct allocators in one process", MAX_ALLOCATORS);
    }
    allocators[n] = (allocator){fn, ud};
    atomic_store(&nallocators, n + 1);
  }
  atomic_store(&current, slot);
  pthread_mutex_unlock(&set_lock);
  return TKC_OK;
}

tkc_alloc_fn tkc_get_allocator(void **ud) {
  allocator a = allocators[atomic_load(&current)];
  if (ud) *ud = a.ud;
  return a.fn;
}

void tkc_memory_stats(size_t *blocks, size_t *bytes) {
  if (blocks) *blocks = atomic_load_explicit(&live_blocks, memory_order_relaxed);
  if (bytes) *bytes = atomic_load_explicit(&live_bytes, memory_order_relaxed);
}

static header *head_of(void *p) { return (header *)p - 1; }

void *tkc_malloc(size_t n) {
  if (n > SIZE_MAX - sizeof(header)) return NULL;
  uint32_t slot = atomic_load_explicit(&current, memory_order_relaxed);
  header *h = allocators[slot].fn(allocators[slot].ud, NULL, 0, n + sizeof(header));
  if (!h) return NULL;
  h->size = n, h->slot = slot;
  atomic_fetch_add_explicit(&live_blocks, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&live_bytes, n, memory_order_relaxed);
  return h + 1;
}

void *tkc_calloc(size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) return NULL;
  void *p = tkc_malloc(count * size);
  if (p) memset(p, 0, count * size);
  return p;
}

void *tkc_realloc(void *p, size_t n) {
  if (!p) return tkc_malloc(n);
  if (n > SIZE_MAX - sizeof(header)) return NULL;
  header *h = head_of(p);
  size_t old = h->size;
  allocator a = allocators[h->slot];
  header *nh = a.fn(a.ud, h, old + sizeof(header), n + sizeof(header));
  if (!nh) return NULL; /* p is untouched */
  nh->size = n;
  atomic_fetch_add_explicit(&live_bytes, n - old, memory_order_relaxed); /* wraps back for n < old */
  return nh + 1;
}

void tkc_free(void *p) {
  if (!p) return;
  header *h = head_of(p);
  size_t size = h->size;
  allocator a = allocators[h->slot];
  atomic_fetch_sub_explicit(&live_blocks, 1, memory_order_relaxed);
  atomic_fetch_sub_explicit(&live_bytes, size, memory_order_relaxed);
  a.fn(a.ud, h, size + sizeof(header), 0);
}

char *tkc_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = tkc_malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

void *tkc_malloc_aligned(size_t n, size_t align) {
  /* align is a power of two >= 16; the block's own address sits in the word before the result */
  if (n > SIZE_MAX - align) return NULL;
  char *raw = tkc_malloc(n + align);
  if (!raw) return NULL;
  char *p = (char *)(((uintptr_t)raw + sizeof(void *) + align - 1) & ~(uintptr_t)(align - 1));
  memcpy(p - sizeof(void *), &raw, sizeof raw);
  return p;
}

void tkc_free_aligned(void *p) {
  if (!p) return;
  void *raw;
  memcpy(&raw, (char *)p - sizeof(void *), sizeof raw);
  tkc_free(raw);
}
