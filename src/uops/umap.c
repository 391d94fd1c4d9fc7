/* A small pointer-keyed hash map for memo tables (rewrite caches, toposort visited sets). */
#include <stdlib.h>
#include "uops/uop_internal.h"

static size_t slot(const tkc_uop *k, size_t cap) {
  uint64_t h = (uint64_t)(uintptr_t)k * 0x9e3779b97f4a7c15ull;
  return (size_t)(h >> 17) & (cap - 1);
}

tkc_uop *tkc_umap_get(const tkc_umap *m, const tkc_uop *k) {
  if (!m->cap) return NULL;
  for (size_t i = slot(k, m->cap);; i = (i + 1) & (m->cap - 1)) {
    if (!m->keys[i]) return NULL;
    if (m->keys[i] == k) return m->vals[i];
  }
}

static int grow(tkc_umap *m) {
  size_t cap = m->cap ? m->cap * 2 : 64;
  const tkc_uop **keys = tkc_calloc(cap, sizeof *keys);
  tkc_uop **vals = tkc_calloc(cap, sizeof *vals);
  if (!keys || !vals) {
    tkc_free(keys);
    tkc_free(vals);
    return -1;
  }
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->keys[i]) continue;
    size_t j = slot(m->keys[i], cap);
    while (keys[j]) j = (j + 1) & (cap - 1);
    keys[j] = m->keys[i];
    vals[j] = m->vals[i];
  }
  tkc_free(m->keys);
  tkc_free(m->vals);
  m->keys = keys;
  m->vals = vals;
  m->cap = cap;
  return 0;
}

int tkc_umap_put(tkc_umap *m, const tkc_uop *k, tkc_uop *v) {
  if ((m->count + 1) * 2 > m->cap && grow(m)) return -1;
  size_t i = slot(k, m->cap);
  while (m->keys[i] && m->keys[i] != k) i = (i + 1) & (m->cap - 1);
  if (!m->keys[i]) m->count++;
  m->keys[i] = k;
  m->vals[i] = v;
  return 0;
}

void tkc_umap_free(tkc_umap *m) {
  tkc_free(m->keys);
  tkc_free(m->vals);
  m->keys = NULL;
  m->vals = NULL;
  m->cap = m->count = 0;
}
