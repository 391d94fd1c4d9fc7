/* src/io/state.c — the state of named tensors the model-file readers fill (tkc/io.h), its name index and
 * the read-only file mapping they parse from. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "io_internal.h"
#include "quant.h"

/* ---------------------------------------------------------------- file mapping */

tkc_status io_file_map(const char *path, io_file *f) {
  memset(f, 0, sizeof *f);
  if (!path) return tkc_err(TKC_EINVAL, "model file: NULL path");
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return tkc_err(TKC_EINVAL, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return tkc_err(TKC_EINVAL, "%s: not a regular file", path);
  }
  if (st.st_size == 0) {
    close(fd);
    return tkc_err(TKC_EINVAL, "%s: empty file", path);
  }
  if ((uint64_t)st.st_size > SIZE_MAX) {
    close(fd);
    return tkc_err(TKC_EINVAL, "%s: too large to map", path);
  }
  void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd); /* the mapping keeps the file */
  if (m == MAP_FAILED) return tkc_err(TKC_EINVAL, "%s: cannot map: %s", path, strerror(errno));
  f->p = m;
  f->n = (size_t)st.st_size;
  f->map = m;
  return TKC_OK;
}

void io_file_unmap(io_file *f) {
  if (f->map) munmap(f->map, f->n);
  memset(f, 0, sizeof *f);
}

tkc_state *io_load_file(tkc_ctx *ctx, const char *path, const char *fn, io_parser parse) {
  if (!ctx || !path) {
    (void)tkc_err(TKC_EINVAL, "%s: NULL %s", fn, ctx ? "path" : "ctx");
    return NULL;
  }
  io_file f;
  if (io_file_map(path, &f) != TKC_OK) return NULL;
  tkc_state *st = parse(ctx, f.p, f.n, path);
  io_file_unmap(&f);
  return st;
}

tkc_state *io_load_bytes(tkc_ctx *ctx, const void *data, size_t n, const char *fn, const char *what, io_parser parse) {
  if (!ctx || !data) {
    (void)tkc_err(TKC_EINVAL, "%s: NULL %s", fn, ctx ? "data" : "ctx");
    return NULL;
  }
  return parse(ctx, data, n, what);
}

/* ---------------------------------------------------------------- name index */

static uint64_t hash_str(const char *k) { /* FNV-1a */
  uint64_t h = 1469598103934665603ull;
  for (; *k; k++) h = (h ^ (uint8_t)*k) * 1099511628211ull;
  return h;
}

static int index_grow(io_index *x) {
  size_t cap = x->cap ? x->cap * 2 : 64;
  const char **keys = calloc(cap, sizeof *keys);
  int *idx = calloc(cap, sizeof *idx);
  if (!keys || !idx) {
    free(keys);
    free(idx);
    return -1;
  }
  for (size_t s = 0; s < x->cap; s++) {
    if (!x->keys[s]) continue;
    size_t j = hash_str(x->keys[s]) & (cap - 1);
    while (keys[j]) j = (j + 1) & (cap - 1);
    keys[j] = x->keys[s];
    idx[j] = x->idx[s];
  }
  free(x->keys);
  free(x->idx);
  x->keys = keys;
  x->idx = idx;
  x->cap = cap;
  return 0;
}

int io_index_add(io_index *x, const char *key, int i, int *found) {
  if ((x->n + 1) * 2 > x->cap && index_grow(x) != 0) return -1;
  size_t j = hash_str(key) & (x->cap - 1);
  for (; x->keys[j]; j = (j + 1) & (x->cap - 1))
    if (strcmp(x->keys[j], key) == 0) {
      if (found) *found = x->idx[j];
      return 1;
    }
  x->keys[j] = key;
  x->idx[j] = i;
  x->n++;
  return 0;
}

int io_index_find(const io_index *x, const char *key) {
  if (!x->cap || !key) return -1;
  for (size_t j = hash_str(key) & (x->cap - 1); x->keys[j]; j = (j + 1) & (x->cap - 1))
    if (strcmp(x->keys[j], key) == 0) return x->idx[j];
  return -1;
}

void io_index_free(io_index *x) {
  free(x->keys);
  free(x->idx);
  memset(x, 0, sizeof *x);
}

/* ---------------------------------------------------------------- building a state */

tkc_state *io_state_new(tkc_ctx *ctx, int is_gguf) {
  tkc_state *s = calloc(1, sizeof *s);
  if (!s) {
    (void)tkc_err(TKC_ENOMEM, "model file: out of memory");
    return NULL;
  }
  s->ctx = ctx;
  s->is_gguf = is_gguf;
  return s;
}

static char *copy_name(const char *name, size_t len) {
  char *c = malloc(len + 1);
  if (c) {
    memcpy(c, name, len);
    c[len] = 0;
  }
  return c;
}

io_entry *io_state_add(tkc_state *s, const char *name, size_t len, const char *what) {
  if (s->n == s->cap) {
    int cap = s->cap ? s->cap * 2 : 16;
    io_entry *e = realloc(s->e, (size_t)cap * sizeof *e);
    if (!e) goto nomem;
    s->e = e;
    s->cap = cap;
  }
  io_entry *e = &s->e[s->n];
  memset(e, 0, sizeof *e);
  e->ggml_type = -1;
  if (!(e->name = copy_name(name, len))) goto nomem;
  int r = io_index_add(&s->names, e->name, s->n, NULL);
  if (r != 0) {
    if (r > 0) (void)tkc_err(TKC_EINVAL, "%s: tensor '%s' appears twice", what, e->name);
    else (void)tkc_err(TKC_ENOMEM, "%s: out of memory", what);
    free(e->name);
    return NULL;
  }
  s->n++;
  return e;
nomem:
  (void)tkc_err(TKC_ENOMEM, "%s: out of memory", what);
  return NULL;
}

io_kv *io_state_add_kv(tkc_state *s, const char *key, size_t len, const char *what) {
  if (s->nkv == s->kvcap) {
    int cap = s->kvcap ? s->kvcap * 2 : 16;
    io_kv *kv = realloc(s->kv, (size_t)cap * sizeof *kv);
    if (!kv) goto nomem;
    s->kv = kv;
    s->kvcap = cap;
  }
  io_kv *kv = &s->kv[s->nkv];
  memset(kv, 0, sizeof *kv);
  if (!(kv->key = copy_name(key, len))) goto nomem;
  int r = io_index_add(&s->keys, kv->key, s->nkv, NULL);
  if (r != 0) {
    if (r > 0) (void)tkc_err(TKC_EINVAL, "%s: metadata key '%s' appears twice", what, kv->key);
    else (void)tkc_err(TKC_ENOMEM, "%s: out of memory", what);
    free(kv->key);
    return NULL;
  }
  s->nkv++;
  return kv;
nomem:
  (void)tkc_err(TKC_ENOMEM, "%s: out of memory", what);
  return NULL;
}

const io_entry *io_state_find(const tkc_state *s, const char *name) {
  int i = io_index_find(&s->names, name);
  return i < 0 ? NULL : &s->e[i];
}

const io_kv *io_state_find_kv(const tkc_state *s, const char *key) {
  int i = io_index_find(&s->keys, key);
  return i < 0 ? NULL : &s->kv[i];
}

/* ---------------------------------------------------------------- public: the tensors of a state */

int tkc_state_count(const tkc_state *s) { return s ? s->n : -1; }

const char *tkc_state_name(const tkc_state *s, int i) {
  if (!s) {
    (void)tkc_err(TKC_EINVAL, "tkc_state_name: NULL state");
    return NULL;
  }
  if (i < 0 || i >= s->n) {
    (void)tkc_err(TKC_EINVAL, "tkc_state_name: index %d out of range (the state has %d tensors)", i, s->n);
    return NULL;
  }
  return s->e[i].name;
}

static const io_entry *find_or_err(const tkc_state *s, const char *name, const char *fn) {
  if (!s || !name) {
    (void)tkc_err(TKC_EINVAL, "%s: NULL %s", fn, s ? "name" : "state");
    return NULL;
  }
  const io_entry *e = io_state_find(s, name);
  if (!e) (void)tkc_err(TKC_EINVAL, "%s: no tensor named '%s' (the state has %d tensors)", fn, name, s->n);
  return e;
}

/* defined in gguf.c: the dequantizing tensor over an entry's packed blocks */
tkc_tensor *io_gguf_dequantize(const io_entry *e);

tkc_tensor *tkc_state_get(tkc_state *s, const char *name) {
  const io_entry *e = find_or_err(s, name, "tkc_state_get");
  if (!e) return NULL;
  return e->packed ? io_gguf_dequantize(e) : tkc_tensor_ref(e->t);
}

/* the entry `name` if x can multiply it: a 2-d weight whose `in` is x's last dim */
static io_entry *matmul_weight(tkc_state *s, const char *name, tkc_tensor *x, const char *fn) {
  io_entry *e = (io_entry *)find_or_err(s, name, fn);
  if (!e) return NULL;
  if (e->ndim != 2) return (void)tkc_err(TKC_ESHAPE, "%s: '%s' has %d dims (a 2-d (out, in) weight needed)", fn, name, e->ndim), NULL;
  int nd = tkc_ndim(x);
  if (nd < 1 || tkc_dim(x, nd - 1) != e->shape[1])
    return (void)tkc_err(TKC_ESHAPE, "%s: x's last dim is %lld, '%s' (%lld, %lld) takes %lld", fn, nd ? (long long)tkc_dim(x, nd - 1) : 0LL, name,
                         (long long)e->shape[0], (long long)e->shape[1], (long long)e->shape[1]),
           NULL;
  return e;
}

/* whether e goes through the int8 path under flags */
static int int8_path(const io_entry *e, int flags) {
  return (flags & TKC_MATMUL_INT8) && e->packed && tkc_quant_has_int8(e->ggml_type) && e->shape[0] > 0;
}

tkc_status tkc_state_matmuls(tkc_state *s, int n, const char *const *names, tkc_tensor *x, int flags, tkc_tensor **out) {
  const char *fn = "tkc_state_matmuls";
  if (out && n > 0) memset(out, 0, (size_t)n * sizeof *out);
  if (!s || !names || !out || n < 1) return tkc_err(TKC_EINVAL, "%s: %s", fn, n < 1 ? "n < 1" : !s ? "NULL state" : "NULL names or out");
  tkc_ctx *xctx = tkc_tensor_ctx(x);
  if (!xctx) return tkc_last_status();
  if (flags & ~TKC_MATMUL_INT8) return tkc_err(TKC_EINVAL, "%s: unknown flags 0x%x", fn, (unsigned)flags);
  if (xctx != s->ctx) return tkc_err(TKC_EINVAL, "%s: x belongs to another ctx than the state", fn);
  int any_int8 = 0;
  for (int i = 0; i < n; i++) {
    io_entry *e = matmul_weight(s, names[i], x, fn);
    if (!e) return tkc_last_status();
    any_int8 |= int8_path(e, flags);
  }
  /* x quantized once for every int8 product */
  tkc_quant_int8_x xq = {0};
  if (any_int8 && tkc_quant_int8_input(x, tkc_dim(x, tkc_ndim(x) - 1), &xq)) return tkc_last_status();
  tkc_status st = TKC_OK;
  for (int i = 0; i < n && !st; i++) {
    io_entry *e = (io_entry *)io_state_find(s, names[i]);
    if (int8_path(e, flags)) {
      if (!e->int8[0] && tkc_quant_int8_repack(e->t, e->ggml_type, e->shape[0], e->shape[1], e->int8)) st = tkc_last_status();
      else if (!(out[i] = tkc_quant_int8_matmul(&xq, e->int8, e->ggml_type))) st = tkc_last_status();
      continue;
    }
    tkc_tensor *w = tkc_state_get(s, names[i]), *wt = w ? tkc_transpose(w, 0, 1) : NULL;
    if (!(out[i] = wt ? tkc_matmul(x, wt) : NULL)) st = tkc_last_status();
    tkc_tensor_free(w);
    tkc_tensor_free(wt);
  }
  tkc_quant_int8_x_free(&xq);
  if (st)
    for (int i = 0; i < n; i++) tkc_tensor_free(out[i]), out[i] = NULL;
  return st;
}

tkc_tensor *tkc_state_matmul(tkc_state *s, const char *name, tkc_tensor *x, int flags) {
  tkc_tensor *y = NULL;
  return tkc_state_matmuls(s, 1, &name, x, flags, &y) ? NULL : y;
}

tkc_status tkc_state_shape(const tkc_state *s, const char *name, tkc_dtype *dtype, int *ndim, int64_t *shape) {
  const io_entry *e = find_or_err(s, name, "tkc_state_shape");
  if (!e) return tkc_last_status();
  if (dtype) *dtype = e->dtype;
  if (ndim) *ndim = e->ndim;
  if (shape) memcpy(shape, e->shape, (size_t)e->ndim * sizeof *shape);
  return TKC_OK;
}

int tkc_gguf_tensor_type(const tkc_state *s, const char *name) {
  const io_entry *e = find_or_err(s, name, "tkc_gguf_tensor_type");
  return e ? e->ggml_type : -1;
}

void tkc_state_free(tkc_state *s) {
  if (!s) return;
  for (int i = 0; i < s->n; i++) {
    tkc_tensor_free(s->e[i].t);
    tkc_tensor_free(s->e[i].int8[0]);
    tkc_tensor_free(s->e[i].int8[1]);
    free(s->e[i].name);
  }
  for (int i = 0; i < s->nkv; i++) {
    io_kv *kv = &s->kv[i];
    if (kv->type == TKC_GGUF_ARRAY && kv->elem_type == TKC_GGUF_STRING)
      for (int64_t j = 0; j < kv->count; j++) free(((char **)kv->data)[j]);
    free(kv->data);
    free(kv->str);
    free(kv->key);
  }
  io_index_free(&s->names);
  io_index_free(&s->keys);
  free(s->e);
  free(s->kv);
  free(s);
}
