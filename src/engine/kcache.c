/* The kernel cache: a kernel AST (with the device and the opts settings it was built with) -> its
 * built program, so that a realize of a graph seen before skips opts, lowering, linearizing and
 * rendering (the compiled-code cache in runtime/program.c only saves the compile). Process-wide,
 * thread-safe, at most KCACHE_MAX entries: past that the oldest entry no realize is using is freed.
 * The key is not the printed AST (printing it cost most of a cached realize): it is the settings
 * text followed by a compact binary encoding of the AST (each node once, in toposort order: op,
 * dtype, source indices, arg), which is exact, so a hit is always the same AST; its hash needs no
 * walk, as a UOp's hash is already a structural (Merkle) hash of its subgraph. */
#include <stdlib.h>
#include <string.h>
#include <pthread.h> /* not C11 threads: ThreadSanitizer sees pthread locks only */
#include "engine/kcache.h"
#include "runtime/device.h"
#include "uops/uop_internal.h"
#include "tkc.h"

#define KCACHE_MAX 4096
#define KCACHE_BUCKETS 1024

typedef struct entry {
  struct entry *next_in_bucket, *older, *newer;
  uint64_t hash;
  unsigned char *key;
  size_t len;
  tkc_program *p;
  int users;
} entry;

static entry *buckets[KCACHE_BUCKETS], *oldest, *newest;
static size_t nentries;
static pthread_mutex_t lock;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static void init(void) { pthread_mutex_init(&lock, NULL); }

/* ---------------------------------------------------------------- keys */

typedef struct bytes {
  unsigned char *p;
  size_t len, cap;
  bool oom;
} bytes;

static bool grow_bytes(bytes *b, size_t n) {
  if (b->oom) return false;
  size_t cap = b->cap ? b->cap * 2 : 4096;
  while (cap < b->len + n) cap *= 2;
  unsigned char *np = tkc_realloc(b->p, cap);
  if (!np) {
    b->oom = true;
    return false;
  }
  b->p = np;
  b->cap = cap;
  return true;
}

static inline void put_bytes(bytes *b, const void *src, size_t n) {
  if (b->len + n > b->cap && !grow_bytes(b, n)) return;
  memcpy(b->p + b->len, src, n);
  b->len += n;
}

static void put_u32(bytes *b, uint32_t v) { put_bytes(b, &v, sizeof v); }

/* every field the printed form shows (floats by bit pattern: 1.0 and 1.0000001 differ, and so do
 * 0.0 and -0.0) */
static void put_arg(bytes *b, const tkc_arg *a) {
  put_u32(b, a->kind);
  switch (a->kind) {
  case TKC_ARG_INT: put_bytes(b, &a->v.i, 8); break;
  case TKC_ARG_FLOAT: put_bytes(b, &a->v.f, 8); break;
  case TKC_ARG_PTR: put_bytes(b, &a->v.p, sizeof a->v.p); break; /* by address, as printed */
  case TKC_ARG_STR:
    put_u32(b, a->n);
    put_bytes(b, a->v.s, a->n);
    break;
  case TKC_ARG_TUPLE:
    put_u32(b, a->n);
    for (uint32_t i = 0; i < a->n; i++) put_arg(b, &a->v.t[i]);
    break;
  default: break;
  }
}

static void put_node(bytes *b, const tkc_uop *u, const tkc_umap *index) {
  uint16_t head[4] = {u->op, u->nsrc, u->dtype.count, u->dtype.pcount};
  uint8_t kind[2] = {u->dtype.scalar, u->dtype.space};
  put_bytes(b, head, sizeof head);
  put_bytes(b, kind, sizeof kind);
  put_bytes(b, &u->dtype.size, sizeof u->dtype.size);
  for (int j = 0; j < u->nsrc; j++) put_u32(b, (uint32_t)((uintptr_t)tkc_umap_get(index, u->src[j]) - 1));
  put_arg(b, &u->arg);
}

typedef struct frame {
  const tkc_uop *u;
  int next; /* next source to visit */
} frame;

/* The AST's nodes appended to b, each after its sources (an iterative DFS: kernel ASTs can be deep).
 * index maps a node to 1 + its number once appended, and to KCACHE_ON_STACK before. */
#define KCACHE_ON_STACK ((tkc_uop *)(uintptr_t)UINTPTR_MAX)
static void put_ast(bytes *b, const tkc_uop *root) {
  tkc_umap index = {0};
  size_t depth = 0, scap = 64;
  uint32_t count = 0;
  frame *stack = tkc_malloc(scap * sizeof *stack);
  if (!stack || tkc_umap_put(&index, root, KCACHE_ON_STACK)) b->oom = true;
  else stack[depth++] = (frame){root, 0};
  while (depth && !b->oom) {
    frame *f = &stack[depth - 1];
    if (f->next < f->u->nsrc) {
      const tkc_uop *s = f->u->src[f->next++];
      if (tkc_umap_get(&index, s)) continue;
      if (tkc_umap_put(&index, s, KCACHE_ON_STACK)) b->oom = true;
      else if (depth == scap) {
        frame *ns = tkc_realloc(stack, (scap *= 2) * sizeof *stack);
        if (!ns) b->oom = true;
        else stack = ns;
      }
      if (!b->oom) stack[depth++] = (frame){s, 0};
      continue;
    }
    put_node(b, f->u, &index);
    if (tkc_umap_put(&index, f->u, (tkc_uop *)(uintptr_t)++count)) b->oom = true;
    depth--;
  }
  tkc_free(stack);
  tkc_umap_free(&index);
}

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

tkc_status tkc_kcache_key_make(tkc_kcache_key *k, const char *settings, const tkc_uop *ast) {
  bytes b = {0};
  put_bytes(&b, settings, strlen(settings) + 1);
  put_ast(&b, ast);
  if (b.oom) {
    tkc_free(b.p);
    *k = (tkc_kcache_key){0};
    return tkc_err(TKC_ENOMEM, "out of memory building a kernel key");
  }
  *k = (tkc_kcache_key){mix(tkc_fnv1a(settings, strlen(settings), TKC_FNV_OFFSET), ast->hash), b.p, b.len};
  return TKC_OK;
}

void tkc_kcache_key_free(tkc_kcache_key *k) {
  tkc_free(k->bytes);
  *k = (tkc_kcache_key){0};
}

static bool same_key(const entry *e, const tkc_kcache_key *k) {
  return e->hash == k->hash && e->len == k->len && !memcmp(e->key, k->bytes, k->len);
}

/* ---------------------------------------------------------------- the cache */

tkc_program *tkc_kcache_get(const tkc_kcache_key *key, tkc_kcache_ref *ref) {
  pthread_once(&once, init);
  uint64_t h = key->hash;
  tkc_program *p = NULL;
  *ref = NULL;
  pthread_mutex_lock(&lock);
  for (entry *e = buckets[h % KCACHE_BUCKETS]; e && !p; e = e->next_in_bucket)
    if (same_key(e, key)) {
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

tkc_program *tkc_kcache_put(const tkc_kcache_key *key, tkc_program *p, tkc_kcache_ref *ref) {
  pthread_once(&once, init);
  *ref = NULL;
  entry *e = tkc_calloc(1, sizeof *e);
  if (e && !(e->key = tkc_malloc(key->len ? key->len : 1))) {
    tkc_free(e);
    e = NULL;
  }
  if (!e) return p; /* not cached: the caller still uses (and releases) p */
  memcpy(e->key, key->bytes, key->len);
  e->len = key->len;
  e->hash = key->hash;
  e->p = p;
  e->users = 1;
  *ref = e;
  entry *evicted = NULL;
  pthread_mutex_lock(&lock);
  for (entry *x = buckets[e->hash % KCACHE_BUCKETS]; x; x = x->next_in_bucket)
    if (same_key(x, key)) { /* another thread built it first: keep one */
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
