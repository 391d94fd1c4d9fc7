/* Kernel names, as tinygrad names them: "r_" (a reduce) or "E_" and the full shape, then the opts
 * ("r_512_512_512_U1x8"), and made unique per distinct kernel as tinygrad's Kernel.kernel_cnt: the
 * second distinct kernel (by its kernel key: device, opts, AST) with a name gets "n1" appended, the
 * third "n2", ... for the rest of the process, so that every name in TKC_DEBUG output, in the
 * rendered source and in the schedule's dot names one program. */
#include <pthread.h> /* not C11 threads: ThreadSanitizer sees pthread locks only */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "codegen/pipeline.h"

void tkc_kernel_base_name(const tkc_uop *ast, char *buf, size_t n) {
  const tkc_arg *out = &ast->arg.v.t[0], *full = &ast->arg.v.t[1];
  int reduce = 0;
  for (uint32_t i = 0; i < full->n; i++)
    reduce |= full->v.t[i].kind != out->v.t[i].kind || (full->v.t[i].kind == TKC_ARG_INT && full->v.t[i].v.i != out->v.t[i].v.i);
  size_t k = (size_t)snprintf(buf, n, "%s", reduce ? "r" : "E");
  for (uint32_t i = 0; i < full->n && k < n; i++) {
    const tkc_arg *d = &full->v.t[i];
    if (d->kind == TKC_ARG_INT) k += (size_t)snprintf(buf + k, n - k, "_%lld", (long long)d->v.i);
    else if (d->v.t[3].v.i) k += (size_t)snprintf(buf + k, n - k, "_%s%s%lld", d->v.t[0].v.s, d->v.t[3].v.i > 0 ? "p" : "m", (long long)llabs(d->v.t[3].v.i));
    else k += (size_t)snprintf(buf + k, n - k, "_%s", d->v.t[0].v.s);
  }
}

typedef struct kname {
  struct kname *next;
  char *base;
  uint64_t *keys; /* hashes of the kernel keys seen with this name, in order */
  size_t n, cap;
} kname;

static kname *knames;
static pthread_mutex_t kname_lock;
static pthread_once_t kname_once = PTHREAD_ONCE_INIT;
static void kname_init(void) { pthread_mutex_init(&kname_lock, NULL); }

static uint64_t key_hash(const char *s) { return tkc_fnv1a(s, strlen(s), TKC_FNV_OFFSET); }

/* The number of the kernel key among the distinct kernels named base (0 for the first; 0 also
 * when out of memory: the name is then not made unique) */
static size_t name_number(const char *base, const char *key) {
  pthread_once(&kname_once, kname_init);
  uint64_t h = key_hash(key);
  size_t num = 0;
  pthread_mutex_lock(&kname_lock);
  kname *e = knames;
  while (e && strcmp(e->base, base)) e = e->next;
  if (!e) { /* the first kernel with this name */
    e = tkc_calloc(1, sizeof *e);
    if (e && !(e->base = tkc_strdup(base))) {
      tkc_free(e);
      e = NULL;
    }
    if (e) {
      e->next = knames;
      knames = e;
    }
  }
  if (e) {
    size_t i = 0;
    while (i < e->n && e->keys[i] != h) i++;
    if (i == e->n) {
      if (e->n == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 4;
        uint64_t *k = tkc_realloc(e->keys, cap * sizeof *k);
        if (k) { e->keys = k; e->cap = cap; }
      }
      if (e->n < e->cap) e->keys[e->n++] = h;
      else i = 0;
    }
    num = i;
  }
  pthread_mutex_unlock(&kname_lock);
  return num;
}

void tkc_kernel_unique_name(char *name, size_t n, const char *key) {
  size_t num = name_number(name, key), len = strlen(name);
  if (num && len < n) snprintf(name + len, n - len, "n%zu", num);
}
