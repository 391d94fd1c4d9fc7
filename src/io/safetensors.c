/* src/io/safetensors.c — the safetensors reader and writer (tkc/io.h): Hugging Face's model file.
 *
 *   u64 N (little-endian), N bytes of JSON, the data
 *   JSON: {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
 *          "__metadata__": {"key": "value"}}   (offsets count from the start of the data)
 *
 * The header is parsed with jansson (duplicate names refused); every offset is checked against the
 * data's size and the dtype and shape's byte size, tensors must not overlap. Without jansson
 * (TKC_WITH_JANSSON off or not found) both directions fail with TKC_EUNSUPPORTED. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io_internal.h"

#ifdef TKC_HAVE_JANSSON
#include <errno.h>
#include <unistd.h>
#include <jansson.h>

#define ST_MAX_HEADER 100000000u /* the safetensors package's limit on the JSON header */

static const struct {
  const char *name;
  tkc_dtype dt;
  int size;
} dtypes[] = {
    {"F64", TKC_FLOAT64, 8}, {"F32", TKC_FLOAT32, 4}, {"F16", TKC_FLOAT16, 2}, {"BF16", TKC_BFLOAT16, 2},
    {"I64", TKC_INT64, 8},   {"I32", TKC_INT32, 4},   {"I16", TKC_INT16, 2},   {"I8", TKC_INT8, 1},
    {"U64", TKC_UINT64, 8},  {"U32", TKC_UINT32, 4},  {"U16", TKC_UINT16, 2},  {"U8", TKC_UINT8, 1},
    {"BOOL", TKC_BOOL, 1},   {"F8_E4M3", TKC_FLOAT8_E4M3FN, 1}, {"F8_E5M2", TKC_FLOAT8_E5M2, 1},
};
/* dtypes the format defines that tkc has no dtype for */
static const char *const other_dtypes[] = {"F8_E8M0", "F6_E2M3", "F6_E3M2", "F4", "C64", "C128"};

typedef struct {
  uint64_t begin, end;
  int entry;
} span;

static int span_cmp(const void *a, const void *b) {
  const span *x = a, *y = b;
  return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* a JSON integer >= 0 */
static int get_uint(const json_t *v, uint64_t *out) {
  if (!json_is_integer(v) || json_integer_value(v) < 0) return 0;
  *out = (uint64_t)json_integer_value(v);
  return 1;
}

/* fills e from one header entry; its data span to *sp */
static int read_entry(const char *what, const char *name, json_t *v, io_entry *e, span *sp) {
  json_t *jdt = json_object_get(v, "dtype"), *jshape = json_object_get(v, "shape"), *joff = json_object_get(v, "data_offsets");
  if (!json_is_object(v) || !json_is_string(jdt) || !json_is_array(jshape) || !json_is_array(joff) || json_array_size(joff) != 2) {
    (void)tkc_err(TKC_EINVAL, "%s: tensor '%s' needs \"dtype\" (a string), \"shape\" (an array) and \"data_offsets\" ([begin, end])", what, name);
    return -1;
  }
  const char *dt = json_string_value(jdt);
  int size = 0;
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
    if (strcmp(dt, dtypes[i].name) == 0) e->dtype = dtypes[i].dt, size = dtypes[i].size;
  if (!size) {
    int known = 0;
    for (size_t i = 0; i < sizeof other_dtypes / sizeof other_dtypes[0]; i++) known |= strcmp(dt, other_dtypes[i]) == 0;
    if (known) (void)tkc_err(TKC_EUNSUPPORTED, "%s: tensor '%s' has dtype %s, which tkc does not read", what, name, dt);
    else (void)tkc_err(TKC_EINVAL, "%s: tensor '%s' has an unknown dtype '%s'", what, name, dt);
    return -1;
  }
  size_t nd = json_array_size(jshape);
  if (nd > IO_MAX_DIMS) {
    (void)tkc_err(TKC_EUNSUPPORTED, "%s: tensor '%s' has %zu dims (tkc tensors have at most %d)", what, name, nd, IO_MAX_DIMS);
    return -1;
  }
  uint64_t numel = 1, nbytes;
  for (size_t d = 0; d < nd; d++) {
    uint64_t dim;
    if (!get_uint(json_array_get(jshape, d), &dim) || dim > INT64_MAX || io_mul_overflows(numel, dim, &numel) || numel > INT64_MAX) {
      (void)tkc_err(TKC_EINVAL, "%s: tensor '%s' has a bad shape (dim %zu is not a size or the product overflows)", what, name, d);
      return -1;
    }
    e->shape[d] = (int64_t)dim;
  }
  e->ndim = (int)nd;
  if (!get_uint(json_array_get(joff, 0), &sp->begin) || !get_uint(json_array_get(joff, 1), &sp->end) || sp->end < sp->begin) {
    (void)tkc_err(TKC_EINVAL, "%s: tensor '%s' has bad data_offsets (two integers 0 <= begin <= end)", what, name);
    return -1;
  }
  if (io_mul_overflows(numel, (uint64_t)size, &nbytes) || sp->end - sp->begin != nbytes) {
    (void)tkc_err(TKC_EINVAL, "%s: tensor '%s' has data_offsets [%" PRIu64 ", %" PRIu64 "] (%" PRIu64 " bytes), its dtype %s and shape need %" PRIu64,
                  what, name, sp->begin, sp->end, sp->end - sp->begin, dt, numel * (uint64_t)size);
    return -1;
  }
  return 0;
}

/* "__metadata__": string keys to string values, kept as string metadata (tkc_gguf_meta_str) */
static int read_metadata(const char *what, json_t *md, tkc_state *st) {
  if (!json_is_object(md)) {
    (void)tkc_err(TKC_EINVAL, "%s: __metadata__ is not an object", what);
    return -1;
  }
  const char *key;
  json_t *v;
  json_object_foreach(md, key, v) {
    if (!json_is_string(v)) {
      (void)tkc_err(TKC_EINVAL, "%s: __metadata__ '%s' is not a string", what, key);
      return -1;
    }
    io_kv *kv = io_state_add_kv(st, key, strlen(key), what);
    if (!kv) return -1;
    kv->type = TKC_GGUF_STRING;
    kv->str_len = (int64_t)json_string_length(v);
    if (!(kv->str = malloc((size_t)kv->str_len + 1))) {
      (void)tkc_err(TKC_ENOMEM, "%s: out of memory", what);
      return -1;
    }
    memcpy(kv->str, json_string_value(v), (size_t)kv->str_len + 1);
  }
  return 0;
}

static tkc_state *parse(tkc_ctx *ctx, const uint8_t *p, size_t n, const char *what) {
  uint64_t hlen;
  if (n < 8) {
    (void)tkc_err(TKC_EINVAL, "%s: truncated: %zu bytes, the header length alone takes 8", what, n);
    return NULL;
  }
  memcpy(&hlen, p, 8); /* little-endian file on a little-endian host */
  if (hlen > n - 8 || hlen > ST_MAX_HEADER || hlen < 2) {
    (void)tkc_err(TKC_EINVAL, "%s: %s: a JSON header of %" PRIu64 " bytes, %zu bytes follow", what,
                  hlen > n - 8 ? "truncated" : "bad header length", hlen, n - 8);
    return NULL;
  }
  json_error_t jerr;
  json_t *root = json_loadb((const char *)p + 8, (size_t)hlen, JSON_REJECT_DUPLICATES, &jerr);
  if (!root || !json_is_object(root)) {
    if (root) (void)tkc_err(TKC_EINVAL, "%s: the header is JSON but not an object", what);
    else (void)tkc_err(TKC_EINVAL, "%s: bad JSON header: %s (line %d, column %d)", what, jerr.text, jerr.line, jerr.column);
    json_decref(root);
    return NULL;
  }
  const uint8_t *data = p + 8 + hlen;
  uint64_t data_n = n - 8 - hlen;
  tkc_state *st = io_state_new(ctx, 0);
  span *spans = calloc(json_object_size(root) + 1, sizeof *spans);
  int ns = 0;
  if (!st || !spans) {
    if (st) (void)tkc_err(TKC_ENOMEM, "%s: out of memory", what);
    goto fail;
  }
  const char *key;
  json_t *v;
  json_object_foreach(root, key, v) {
    if (strcmp(key, "__metadata__") == 0) {
      if (read_metadata(what, v, st)) goto fail;
      continue;
    }
    io_entry *e = io_state_add(st, key, strlen(key), what);
    if (!e || read_entry(what, e->name, v, e, &spans[ns])) goto fail;
    if (spans[ns].end > data_n) {
      (void)tkc_err(TKC_EINVAL, "%s: tensor '%s' (data_offsets [%" PRIu64 ", %" PRIu64 "]) lies past the end of the data (%" PRIu64 " bytes)",
                    what, e->name, spans[ns].begin, spans[ns].end, data_n);
      goto fail;
    }
    spans[ns].entry = st->n - 1;
    ns++;
  }
  if (ns > 1) qsort(spans, (size_t)ns, sizeof *spans, span_cmp);
  for (int i = 1; i < ns; i++) {
    const span *a = &spans[i - 1], *b = &spans[i];
    if (a->end > b->begin && a->end > a->begin && b->end > b->begin) {
      (void)tkc_err(TKC_EINVAL, "%s: tensors '%s' and '%s' overlap (bytes [%" PRIu64 ", %" PRIu64 ") and [%" PRIu64 ", %" PRIu64 "))", what,
                    st->e[a->entry].name, st->e[b->entry].name, a->begin, a->end, b->begin, b->end);
      goto fail;
    }
  }
  for (int i = 0; i < ns; i++) { /* every check passed: copy the data out once */
    io_entry *e = &st->e[spans[i].entry];
    const uint8_t *src = spans[i].end > spans[i].begin ? data + spans[i].begin : NULL; /* NULL: an empty tensor */
    if (!(e->t = tkc_tensor_new(ctx, e->dtype, e->ndim, e->shape, src))) goto fail;
  }
  free(spans);
  json_decref(root);
  return st;
fail:
  free(spans);
  json_decref(root);
  tkc_state_free(st);
  return NULL;
}

tkc_state *tkc_safetensors_load_bytes(tkc_ctx *ctx, const void *data, size_t n) {
  return io_load_bytes(ctx, data, n, "tkc_safetensors_load_bytes", "safetensors bytes", parse);
}

tkc_state *tkc_safetensors_load(tkc_ctx *ctx, const char *path) { return io_load_file(ctx, path, "tkc_safetensors_load", parse); }

/* ---------------------------------------------------------------- writing */

static const char *dtype_name(tkc_dtype dt, int *size) {
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
    if (dtypes[i].dt == dt) return *size = dtypes[i].size, dtypes[i].name;
  return NULL;
}

/* the header: every tensor's entry, offsets in the given order; NULL with the error set */
static char *build_header(const char *path, int n, const char *const *names, tkc_tensor *const *ts, uint64_t *nbytes) {
  json_t *root = json_object();
  io_index seen = {0};
  uint64_t off = 0;
  char *out = NULL;
  if (!root) goto nomem;
  for (int i = 0; i < n; i++) {
    const char *name = names[i];
    int size = 0, nd = ts[i] ? tkc_ndim(ts[i]) : -1;
    const char *dt = ts[i] ? dtype_name(tkc_dtype_of(ts[i]), &size) : NULL;
    if (!name || !*name || strcmp(name, "__metadata__") == 0) {
      (void)tkc_err(TKC_EINVAL, "tkc_safetensors_save %s: name %d is %s", path, i, !name ? "NULL" : *name ? "the reserved __metadata__" : "empty");
      goto fail;
    }
    int r = io_index_add(&seen, name, i, NULL);
    if (r < 0) goto nomem;
    if (r > 0) {
      (void)tkc_err(TKC_EINVAL, "tkc_safetensors_save %s: name '%s' given twice", path, name);
      goto fail;
    }
    if (!ts[i] || nd < 0) {
      (void)tkc_err(TKC_EINVAL, "tkc_safetensors_save %s: tensor %d ('%s') is %s", path, i, name, ts[i] ? "not a live tensor" : "NULL");
      goto fail;
    }
    if (!dt) {
      (void)tkc_err(TKC_EUNSUPPORTED, "tkc_safetensors_save %s: tensor '%s' has dtype %s, which safetensors has no name for", path, name,
                    tkc_dtype_name(tkc_dtype_of(ts[i])));
      goto fail;
    }
    json_t *shape = json_array(), *e = json_object();
    if (!shape || !e || json_object_set_new(root, name, e) != 0) {
      json_decref(shape);
      goto nomem;
    }
    uint64_t numel = 1;
    for (int d = 0; d < nd; d++) {
      int64_t dim = tkc_dim(ts[i], d);
      if (dim < 0 || tkc_dim_is_var(dim)) {
        json_decref(shape);
        (void)tkc_err(TKC_EINVAL, "tkc_safetensors_save %s: tensor '%s' has a variable dim %d", path, name, d);
        goto fail;
      }
      numel *= (uint64_t)dim;
      json_array_append_new(shape, json_integer(dim));
    }
    uint64_t nb = numel * (uint64_t)size;
    json_t *offs = json_pack("[II]", (json_int_t)off, (json_int_t)(off + nb));
    if (json_object_set_new(e, "dtype", json_string(dt)) || json_object_set_new(e, "shape", shape) || !offs ||
        json_object_set_new(e, "data_offsets", offs))
      goto nomem;
    off += nb;
  }
  *nbytes = off;
  if (!(out = json_dumps(root, JSON_COMPACT))) goto nomem;
  io_index_free(&seen);
  json_decref(root);
  return out;
nomem:
  (void)tkc_err(TKC_ENOMEM, "tkc_safetensors_save %s: out of memory", path);
fail:
  io_index_free(&seen);
  json_decref(root);
  return NULL;
}

tkc_status tkc_safetensors_save(const char *path, int n, const char *const *names, tkc_tensor *const *ts) {
  if (!path || n < 0 || (n > 0 && (!names || !ts)))
    return tkc_err(TKC_EINVAL, "tkc_safetensors_save: %s", !path ? "NULL path" : n < 0 ? "negative count" : "NULL names or tensors");
  uint64_t total;
  char *header = build_header(path, n, names, ts, &total);
  if (!header) return tkc_last_status();
  size_t hn = strlen(header), padded = (hn + 7) / 8 * 8; /* the data starts 8-aligned, as the package writes it */
  size_t plen = strlen(path);
  char *tmp = malloc(plen + 16);
  FILE *f = NULL;
  tkc_status s = TKC_OK;
  if (!tmp) {
    free(header);
    return tkc_err(TKC_ENOMEM, "tkc_safetensors_save %s: out of memory", path);
  }
  snprintf(tmp, plen + 16, "%s.tmp%ld", path, (long)getpid());
  if (!(f = fopen(tmp, "wb"))) {
    s = tkc_err(TKC_ERUNTIME, "tkc_safetensors_save %s: cannot create %s: %s", path, tmp, strerror(errno));
    goto done;
  }
  uint64_t hlen = padded;
  int ok = fwrite(&hlen, 8, 1, f) == 1 && fwrite(header, 1, hn, f) == hn;
  for (size_t i = hn; ok && i < padded; i++) ok = fputc(' ', f) != EOF;
  for (int i = 0; ok && i < n; i++) {
    int size = 0;
    (void)dtype_name(tkc_dtype_of(ts[i]), &size);
    size_t nb = (size_t)tkc_numel(ts[i]) * (size_t)size;
    if (!nb) continue;
    void *buf = malloc(nb);
    if (!buf) {
      s = tkc_err(TKC_ENOMEM, "tkc_safetensors_save %s: out of memory for tensor '%s'", path, names[i]);
      break;
    }
    if (tkc_copy_out(ts[i], buf, nb) != TKC_OK) {
      char why[512];
      snprintf(why, sizeof why, "%s", tkc_last_error());
      s = tkc_err(tkc_last_status(), "tkc_safetensors_save %s: tensor '%s': %s", path, names[i], why);
      free(buf);
      break;
    }
    ok = fwrite(buf, 1, nb, f) == nb;
    free(buf);
  }
  if (fclose(f) != 0) ok = 0;
  if (s == TKC_OK && !ok) s = tkc_err(TKC_ERUNTIME, "tkc_safetensors_save %s: writing %s failed: %s", path, tmp, strerror(errno));
  if (s == TKC_OK && rename(tmp, path) != 0) s = tkc_err(TKC_ERUNTIME, "tkc_safetensors_save %s: cannot rename %s: %s", path, tmp, strerror(errno));
  if (s != TKC_OK) remove(tmp);
done:
  free(tmp);
  free(header);
  (void)total;
  return s;
}

#else /* built without jansson */

tkc_state *tkc_safetensors_load_bytes(tkc_ctx *ctx, const void *data, size_t n) {
  (void)ctx, (void)data, (void)n;
  (void)tkc_err(TKC_EUNSUPPORTED, "safetensors: tkc was built without jansson (libjansson-dev)");
  return NULL;
}

tkc_state *tkc_safetensors_load(tkc_ctx *ctx, const char *path) {
  (void)ctx;
  (void)tkc_err(TKC_EUNSUPPORTED, "%s: tkc was built without jansson (libjansson-dev): safetensors files cannot be read", path ? path : "safetensors");
  return NULL;
}

tkc_status tkc_safetensors_save(const char *path, int n, const char *const *names, tkc_tensor *const *ts) {
  (void)n, (void)names, (void)ts;
  return tkc_err(TKC_EUNSUPPORTED, "%s: tkc was built without jansson (libjansson-dev): safetensors files cannot be written", path ? path : "safetensors");
}
#endif
