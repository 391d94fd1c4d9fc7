/* The kernel cache: a kernel AST (printed, with the device and the opts it was built with) -> its
 * built program, so that a realize of a graph seen before skips opts, lowering, linearizing and
 * rendering (the compiled-code cache in runtime/program.c only saves the compile). Process-wide,
 * thread-safe, at most KCACHE_MAX entries: past that the oldest entry no realize is using is freed. */
#include <stdlib.h>
#include <string.h>
#include <pthread.h> /* not C11 threads: ThreadSanitizer sees pthread locks only */
#include "engine/kcache.h"
#include "runtime/device.h"
#include "tkc.h"

#define KCACHE_MAX 4096
#define KCACHE_BUCKETS 1024

typedef struct entry {
  struct entry *next_in_bucket, *older, *newer;
  uint64_t hash;
  char *key;
  tkc_program *p;
  int users;
} entry;

static entry *buckets[KCACHE_BUCKETS], *oldest, *newest;
static size_t nentries;
static pthread_mutex_t lock;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static void init(void) { pthread_mutex_init(&lock, NULL); }

static uint64_t hash_of(const char *s) { return tkc_fnv1a(s, strlen(s), TKC_FNV_OFFSET); }

tkc_program *tkc_kcache_get(const char *key, tkc_kcache_ref *ref) {
  pthread_once(&once, init);
  uint64_t h = hash_of(key);
  tkc_program *p = NULL;
  *ref = NULL;
  pthread_mutex_lock(&lock);
  for (entry *e = buckets[h % KCACHE_BUCKETS]; e && !p; e = e->next_in_bucket)
    if (e->hash == h && !strcmp(e->key, key)) {
      e->users++;
      p = e->p;
      *ref = e;
    }
  pthread_mutex_unlock(&lock);
  return p;
}

static void unlink_entry(entry *e) {
  entry **at = &buckets[e->hash % KCACHE_BUCKETS];
  while (*at != e) at = &(*at)->next_in_bucket;
  *at = e->next_in_bucket;
  if (e->older) e->older->newer = e->newer;
  else oldest = e->newer;
  if (e->newer) e->newer->older = e->older;
  else newest = e->older;
  nentries--;
}

tkc_program *tkc_kcache_put(const char *key, tkc_program *p, tkc_kcache_ref *ref) {
  pthread_once(&once, init);
  *ref = NULL;
  entry *e = tkc_calloc(1, sizeof *e);
  if (e && !(e->key = tkc_strdup(key))) {
    tkc_free(e);
    e = NULL;
  }
  if (!e) return p; /* not cached: the caller still uses (and releases) p */
  e->hash = hash_of(key);
  e->p = p;
  e->users = 1;
  *ref = e;
  entry *evicted = NULL;
  pthread_mutex_lock(&lock);
  for (entry *x = buckets[e->hash % KCACHE_BUCKETS]; x; x = x->next_in_bucket)
    if (x->hash == e->hash && !strcmp(x->key, key)) { /* another thread built it first: keep one */
      x->users++;
      *ref = x;
      tkc_program *kept = x->p;
      pthread_mutex_unlock(&lock);
      tkc_free(e->key);
      tkc_free(e);
      tkc_program_free(p);
      return kept;
    }
  e->next_in_bucket = buckets[e->hash % KCACHE_BUCKETS];
  buckets[e->hash % KCACHE_BUCKETS] = e;
  e->older = newest;
  if (newest) newest->newer = e;
  else oldest = e;
  newest = e;
  nentries++;
  if (nentries > KCACHE_MAX)
    for (entry *x = oldest; x && !evicted; x = x->newer)
      if (!x->users) {
        unlink_entry(x);
        evicted = x;
      }
  pthread_mutex_unlock(&lock);
  if (evicted) {
    tkc_program_free(evicted->p);
    tkc_free(evicted->key);
    tkc_free(evicted);
  }
  return p;
}

void tkc_kcache_pin(tkc_kcache_ref ref) {
  pthread_mutex_lock(&lock);
  ((entry *)ref)->users++;
  pthread_mutex_unlock(&lock);
}

void tkc_kcache_release(tkc_kcache_ref ref, tkc_program *p) {
  if (!ref) { /* it never made it into the cache */
    tkc_program_free(p);
    return;
  }
  pthread_mutex_lock(&lock);
  ((entry *)ref)->users--;
  pthread_mutex_unlock(&lock);
}

void tkc_cache_flush(void) {
  pthread_once(&once, init);
  entry *drop = NULL;
  pthread_mutex_lock(&lock);
  for (entry *x = oldest, *next; x; x = next) {
    next = x->newer;
    if (!x->users) {
      unlink_entry(x);
      x->older = drop;
      drop = x;
    }
  }
  pthread_mutex_unlock(&lock);
  while (drop) {
    entry *x = drop;
    drop = x->older;
    tkc_program_free(x->p);
    tkc_free(x->key);
    tkc_free(x);
  }
  tkc_program_cache_flush();
}
