/* The kernel cache (engine/kcache.c): built programs by kernel key (device and opts settings, AST). */
#ifndef TKC_ENGINE_KCACHE_H
#define TKC_ENGINE_KCACHE_H

#include "base/common.h"
#include "tkc/runtime.h"

typedef void *tkc_kcache_ref; /* a use of a cached program; NULL: p is not in the cache */

/* A kernel's cache key: the settings text (device, renderer, opts) and the AST's exact structure,
 * encoded without printing it. Equal keys <=> equal settings and structurally equal ASTs. */
typedef struct tkc_kcache_key {
  uint64_t hash;
  unsigned char *bytes;
  size_t len;
} tkc_kcache_key;
/* Fills *k (free it with tkc_kcache_key_free); TKC_ENOMEM when out of memory (*k then empty). */
TKC_HIDDEN tkc_status tkc_kcache_key_make(tkc_kcache_key *k, const char *settings, const tkc_uop *ast);
TKC_HIDDEN void tkc_kcache_key_free(tkc_kcache_key *k);

/* The cached program for key (and a use of it, *ref), or NULL. */
TKC_HIDDEN tkc_program *tkc_kcache_get(const tkc_kcache_key *key, tkc_kcache_ref *ref);
/* Caches p under key and returns the program to use (p, or the one another thread cached first,
 * p then freed), with a use of it in *ref. When caching fails, p itself with *ref NULL. */
TKC_HIDDEN tkc_program *tkc_kcache_put(const tkc_kcache_key *key, tkc_program *p, tkc_kcache_ref *ref);
/* One more use of a cached program (a jit keeps it). */
TKC_HIDDEN void tkc_kcache_pin(tkc_kcache_ref ref);
/* A ref meaning "not cached, and its program now belongs to someone else" (release nothing). */
#define TKC_KCACHE_TAKEN ((tkc_kcache_ref)(uintptr_t)1)
/* Ends a use; frees p when it was not cached (ref NULL). */
TKC_HIDDEN void tkc_kcache_release(tkc_kcache_ref ref, tkc_program *p);

#endif
