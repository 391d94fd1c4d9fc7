/* src/base/hash.c — FNV-1a, plain (hash tables, short names) and mixed (file names, cache sums);
 * splitmix64 (seeds, counter-based random values). */
#include "base/common.h"

uint64_t tkc_fnv1a(const void *p, size_t n, uint64_t h) {
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ull;
  return h;
}

uint64_t tkc_splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t tkc_hash64(const void *p, size_t n, uint64_t seed) {
  uint64_t h = tkc_fnv1a(p, n, TKC_FNV_OFFSET ^ seed);
  h ^= h >> 33, h *= 0xff51afd7ed558ccdull, h ^= h >> 33, h *= 0xc4ceb9fe1a85ec53ull, h ^= h >> 33; /* murmur3's finalizer */
  return h;
}
