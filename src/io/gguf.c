/* src/io/gguf.c — the GGUF reader (tkc/io.h): llama.cpp's model file, versions 2 and 3, little-endian.
 *
 *   "GGUF" u32 version, u64 n_tensors, u64 n_kv
 *   n_kv x (string key, u32 type, value)        string = u64 length + bytes; array = u32 type, u64 n, values
 *   n_tensors x (string name, u32 n_dims, u64 ne[n_dims], u32 ggml_type, u64 offset)
 *   padding to general.alignment (default 32), then the data section the offsets count from
 *
 * Every length and count is checked against the bytes left before it is used, so a malformed file is
 * an error naming the field, never a read past the mapping; tensor data must lie in the data section,
 * aligned, without overlapping another tensor's. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io_internal.h"
#include "quant.h"

#define GGUF_DEFAULT_ALIGNMENT 32
#define GGUF_MAX_DIMS 4 /* GGML_MAX_DIMS: llama.cpp refuses more */

/* ggml.h's type names, for messages about the types tkc does not read */
static const char *ggml_type_name(uint32_t t) {
  static const char *const names[] = {
      "F32", "F16", "Q4_0", "Q4_1", "Q4_2", "Q4_3", "Q5_0", "Q5_1", "Q8_0", "Q8_1", "Q2_K", "Q3_K", "Q4_K",
      "Q5_K", "Q6_K", "Q8_K", "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS",
      "I8", "I16", "I32", "I64", "F64", "IQ1_M", "BF16", "Q4_0_4_4", "Q4_0_4_8", "Q4_0_8_8", "TQ1_0",
      "TQ2_0", "IQ4_NL_4_4", "IQ4_NL_4_8", "IQ4_NL_8_8", "MXFP4"};
  return t < sizeof names / sizeof names[0] ? names[t] : "unknown";
}

/* the GGML types that are plain arrays of one tkc dtype */
static int ggml_plain_dtype(uint32_t t, tkc_dtype *dt, int *size) {
  switch (t) {
  case TKC_GGML_F32: *dt = TKC_FLOAT32, *size = 4; return 1;
  case TKC_GGML_F16: *dt = TKC_FLOAT16, *size = 2; return 1;
  case TKC_GGML_BF16: *dt = TKC_BFLOAT16, *size = 2; return 1;
  case 24: *dt = TKC_INT8, *size = 1; return 1;    /* GGML_TYPE_I8 */
  case 25: *dt = TKC_INT16, *size = 2; return 1;   /* I16 */
  case 26: *dt = TKC_INT32, *size = 4; return 1;   /* I32 */
  case 27: *dt = TKC_INT64, *size = 8; return 1;   /* I64 */
  case 28: *dt = TKC_FLOAT64, *size = 8; return 1; /* F64 */
  default: return 0;
  }
}

static const char *gguf_type_name(uint32_t t) {
  static const char *const names[] = {"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
                                      "bool", "string", "array", "uint64", "int64", "float64"};
  return t < sizeof names / sizeof names[0] ? names[t] : "unknown";
}

/* the byte size of a scalar GGUF value type, 0 for string / array / unknown */
static size_t gguf_scalar_size(uint32_t t) {
  switch (t) {
  case TKC_GGUF_UINT8: case TKC_GGUF_INT8: case TKC_GGUF_BOOL: return 1;
  case TKC_GGUF_UINT16: case TKC_GGUF_INT16: return 2;
  case TKC_GGUF_UINT32: case TKC_GGUF_INT32: case TKC_GGUF_FLOAT32: return 4;
  case TKC_GGUF_UINT64: case TKC_GGUF_INT64: case TKC_GGUF_FLOAT64: return 8;
  default: return 0;
  }
}

/* ---------------------------------------------------------------- a bounds-checked reader */

typedef struct {
  const uint8_t *p;
  size_t n, pos;
  const char *what; /* the file's path, for messages */
} reader;

/* 0 when k more bytes are there; else the error, naming what was being read */
static int need(reader *r, uint64_t k, const char *field) {
  if (k <= r->n - r->pos) return 0;
  (void)tkc_err(TKC_EINVAL, "%s: truncated: %s at byte %zu needs %" PRIu64 " bytes, %zu are left", r->what, field,
                r->pos, k, r->n - r->pos);
  return -1;
}

static int rd_bytes(reader *r, void *out, size_t k, const char *field) {
  if (need(r, k, field)) return -1;
  memcpy(out, r->p + r->pos, k); /* little-endian file on a little-endian host */
  r->pos += k;
  return 0;
}
static int rd_u32(reader *r, uint32_t *v, const char *field) { return rd_bytes(r, v, 4, field); }
static int rd_u64(reader *r, uint64_t *v, const char *field) { return rd_bytes(r, v, 8, field); }

/* a GGUF string: *s points into the file (not NUL-terminated), *len its length */
static int rd_str(reader *r, const char **s, uint64_t *len, const char *field) {
  if (rd_u64(r, len, field) || need(r, *len, field)) return -1;
  *s = (const char *)r->p + r->pos;
  r->pos += (size_t)*len;
  return 0;
}

/* a name (key or tensor name): no NUL inside, not empty */
static int rd_name(reader *r, const char **s, uint64_t *len, const char *field) {
  size_t at = r->pos;
  if (rd_str(r, s, len, field)) return -1;
  if (*len == 0 || memchr(*s, 0, (size_t)*len)) {
    (void)tkc_err(TKC_EINVAL, "%s: %s at byte %zu is %s", r->what, field, at, *len ? "a string with a NUL byte" : "empty");
    return -1;
  }
  return 0;
}

static char *copy_str(const char *s, uint64_t len, const char *what) {
  char *c = malloc((size_t)len + 1);
  if (!c) {
    (void)tkc_err(TKC_ENOMEM, "%s: out of memory", what);
    return NULL;
  }
  memcpy(c, s, (size_t)len);
  c[len] = 0;
  return c;
}

/* ---------------------------------------------------------------- metadata */

static int read_scalar(reader *r, io_kv *kv, uint32_t type, const char *field) {
  uint8_t b[8] = {0};
  if (rd_bytes(r, b, gguf_scalar_size(type), field)) return -1;
  switch (type) {
  case TKC_GGUF_UINT8: kv->i = b[0]; break;
  case TKC_GGUF_INT8: kv->i = (int8_t)b[0]; break;
  case TKC_GGUF_BOOL: kv->i = b[0] != 0; break;
  case TKC_GGUF_UINT16: { uint16_t v; memcpy(&v, b, 2); kv->i = v; break; }
  case TKC_GGUF_INT16: { int16_t v; memcpy(&v, b, 2); kv->i = v; break; }
  case TKC_GGUF_UINT32: { uint32_t v; memcpy(&v, b, 4); kv->i = v; break; }
  case TKC_GGUF_INT32: { int32_t v; memcpy(&v, b, 4); kv->i = v; break; }
  case TKC_GGUF_FLOAT32: { float v; memcpy(&v, b, 4); kv->f = v; break; }
  case TKC_GGUF_UINT64: memcpy(&kv->u, b, 8); kv->i = (int64_t)kv->u; break;
  case TKC_GGUF_INT64: memcpy(&kv->i, b, 8); break;
  case TKC_GGUF_FLOAT64: memcpy(&kv->f, b, 8); break;
  default: break;
  }
  if (type != TKC_GGUF_UINT64 && type != TKC_GGUF_FLOAT32 && type != TKC_GGUF_FLOAT64) kv->u = (uint64_t)kv->i;
  return 0;
}

static int read_array(reader *r, io_kv *kv, const char *field) {
  uint32_t et;
  uint64_t count;
  if (rd_u32(r, &et, field) || rd_u64(r, &count, field)) return -1;
  if (et == TKC_GGUF_ARRAY) {
    (void)tkc_err(TKC_EUNSUPPORTED, "%s: metadata '%s' is an array of arrays, which tkc does not read", r->what, kv->key);
    return -1;
  }
  size_t es = et == TKC_GGUF_STRING ? 8 : gguf_scalar_size(et); /* a string takes 8 bytes at least */
  if (!es) {
    (void)tkc_err(TKC_EINVAL, "%s: metadata '%s' is an array of unknown type %" PRIu32, r->what, kv->key, et);
    return -1;
  }
  if (count > (r->n - r->pos) / es) {
    (void)tkc_err(TKC_EINVAL, "%s: metadata '%s' claims %" PRIu64 " %s elements, more than the %zu bytes left hold", r->what,
                  kv->key, count, gguf_type_name(et), r->n - r->pos);
    return -1;
  }
  kv->elem_type = (int)et;
  if (et != TKC_GGUF_STRING) {
    size_t nb = (size_t)count * es;
    if (!(kv->data = malloc(nb ? nb : 1))) return tkc_err(TKC_ENOMEM, "%s: out of memory", r->what), -1;
    kv->count = (int64_t)count;
    return rd_bytes(r, kv->data, nb, field);
  }
  char **strs = calloc(count ? (size_t)count : 1, sizeof *strs);
  if (!strs) return tkc_err(TKC_ENOMEM, "%s: out of memory", r->what), -1;
  kv->data = strs;
  kv->count = (int64_t)count; /* every slot NULL until read: tkc_state_free frees what was */
  for (uint64_t j = 0; j < count; j++) {
    const char *s;
    uint64_t len;
    if (rd_str(r, &s, &len, field) || !(strs[j] = copy_str(s, len, r->what))) return -1;
  }
  return 0;
}

static int read_kv(reader *r, tkc_state *st) {
  const char *key;
  uint64_t klen;
  uint32_t type;
  if (rd_name(r, &key, &klen, "a metadata key")) return -1;
  io_kv *kv = io_state_add_kv(st, key, (size_t)klen, r->what);
  if (!kv) return -1;
  char field[160]; /* what the messages name */
  snprintf(field, sizeof field, "metadata '%s'", kv->key);
  if (rd_u32(r, &type, field)) return -1;
  kv->type = (int)type;
  if (gguf_scalar_size(type)) return read_scalar(r, kv, type, field);
  if (type == TKC_GGUF_STRING) {
    const char *s;
    if (rd_str(r, &s, (uint64_t *)&kv->str_len, field)) return -1;
    return (kv->str = copy_str(s, (uint64_t)kv->str_len, r->what)) ? 0 : -1;
  }
  if (type == TKC_GGUF_ARRAY) return read_array(r, kv, field);
  (void)tkc_err(TKC_EINVAL, "%s: metadata '%s' has unknown value type %" PRIu32, r->what, kv->key, type);
  return -1;
}

/* ---------------------------------------------------------------- tensor infos and data */

typedef struct {
  uint64_t offset, nbytes;
  int entry;
} span;

static int span_cmp(const void *a, const void *b) {
  const span *x = a, *y = b;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* reads one tensor info into a new entry; its byte size to *nbytes, its offset to *offset */
static int read_tensor_info(reader *r, tkc_state *st, uint64_t *offset, uint64_t *nbytes) {
  const char *name;
  uint64_t nlen;
  uint32_t nd, type;
  if (rd_name(r, &name, &nlen, "a tensor name")) return -1;
  io_entry *e = io_state_add(st, name, (size_t)nlen, r->what);
  if (!e) return -1;
  char field[160]; /* what the messages name */
  snprintf(field, sizeof field, "tensor '%s'", e->name);
  if (rd_u32(r, &nd, field)) return -1;
  if (nd > GGUF_MAX_DIMS) {
    (void)tkc_err(TKC_EINVAL, "%s: tensor '%s' has %" PRIu32 " dims (GGUF allows %d)", r->what, e->name, nd, GGUF_MAX_DIMS);
    return -1;
  }
  uint64_t ne[GGUF_MAX_DIMS], numel = 1;
  for (uint32_t d = 0; d < nd; d++) {
    if (rd_u64(r, &ne[d], field)) return -1;
    if (ne[d] > INT64_MAX || io_mul_overflows(numel, ne[d], &numel) || numel > INT64_MAX) {
      (void)tkc_err(TKC_EINVAL, "%s: tensor '%s' has an absurd shape (dim %" PRIu32 " = %" PRIu64 ")", r->what, e->name, d, ne[d]);
      return -1;
    }
  }
  if (rd_u32(r, &type, field) || rd_u64(r, offset, field)) return -1;
  e->ggml_type = (int)type;
  e->ndim = (int)nd;
  for (uint32_t d = 0; d < nd; d++) e->shape[d] = (int64_t)ne[nd - 1 - d]; /* ne[0] is the fastest dim */
  int size;
  const tkc_quant_format *q;
  if (ggml_plain_dtype(type, &e->dtype, &size)) {
    if (io_mul_overflows(numel, (uint64_t)size, nbytes)) goto absurd;
  } else if ((q = tkc_quant_format_of((int)type))) {
    e->packed = 1;
    e->dtype = TKC_FLOAT32;
    uint64_t row = nd ? ne[0] : 1;
    if (row % (uint64_t)q->block_elems) {
      (void)tkc_err(TKC_EINVAL, "%s: tensor '%s' of type %s has rows of %" PRIu64 " values, not a multiple of its %d-value blocks",
                    r->what, e->name, q->name, row, q->block_elems);
      return -1;
    }
    if (io_mul_overflows(numel / (uint64_t)q->block_elems, (uint64_t)q->block_bytes, nbytes)) goto absurd;
  } else {
    (void)tkc_err(TKC_EUNSUPPORTED, "%s: tensor '%s' has GGML type %s (%" PRIu32 "), which tkc does not read", r->what, e->name,
                  ggml_type_name(type), type);
    return -1;
  }
  if (*nbytes > SIZE_MAX) goto absurd;
  return 0;
absurd:
  (void)tkc_err(TKC_EINVAL, "%s: tensor '%s' is larger than memory can hold", r->what, e->name);
  return -1;
}

static int check_alignment(tkc_state *st, const char *what, uint64_t *align) {
  *align = GGUF_DEFAULT_ALIGNMENT;
  const io_kv *kv = io_state_find_kv(st, "general.alignment");
  if (!kv) return 0;
  if (kv->type != TKC_GGUF_UINT32 || kv->u == 0 || (kv->u & (kv->u - 1))) {
    (void)tkc_err(TKC_EINVAL, "%s: general.alignment must be a uint32 power of two, is a %s%s", what, gguf_type_name((uint32_t)kv->type),
                  kv->type == TKC_GGUF_UINT32 ? " that is not" : "");
    return -1;
  }
  *align = kv->u;
  return 0;
}

static tkc_state *parse(tkc_ctx *ctx, const uint8_t *p, size_t n, const char *what) {
  reader r = {p, n, 0, what};
  char magic[4];
  uint32_t version;
  uint64_t nt, nkv;
  if (rd_bytes(&r, magic, 4, "the magic") || rd_u32(&r, &version, "the version")) return NULL;
  if (memcmp(magic, "GGUF", 4) != 0) {
    (void)tkc_err(TKC_EINVAL, "%s: not a GGUF file (no \"GGUF\" magic)", what);
    return NULL;
  }
  if (version != 2 && version != 3) {
    if (version == 0x02000000u || version == 0x03000000u)
      (void)tkc_err(TKC_EUNSUPPORTED, "%s: a big-endian GGUF file, which tkc does not read", what);
    else
      (void)tkc_err(version == 1 ? TKC_EUNSUPPORTED : TKC_EINVAL, "%s: GGUF version %" PRIu32 " (tkc reads versions 2 and 3)", what, version);
    return NULL;
  }
  if (rd_u64(&r, &nt, "the tensor count") || rd_u64(&r, &nkv, "the metadata count")) return NULL;
  /* the smallest metadata entry takes 13 bytes (key length, one-byte key, type, one-byte value), the
   * smallest tensor info 25: a count that more than the file could hold is refused before any allocation */
  if (nkv > (n - r.pos) / 13 || nt > (n - r.pos) / 25 || nkv > INT32_MAX / 2 || nt > INT32_MAX / 2) {
    (void)tkc_err(TKC_EINVAL, "%s: claims %" PRIu64 " metadata entries and %" PRIu64 " tensors, more than its %zu bytes hold", what,
                  nkv, nt, n);
    return NULL;
  }
  tkc_state *st = io_state_new(ctx, 1);
  if (!st) return NULL;
  span *spans = NULL;
  for (uint64_t i = 0; i < nkv; i++)
    if (read_kv(&r, st)) goto fail;
  if (nt && !(spans = calloc((size_t)nt, sizeof *spans))) {
    (void)tkc_err(TKC_ENOMEM, "%s: out of memory", what);
    goto fail;
  }
  for (uint64_t i = 0; i < nt; i++) {
    spans[i].entry = (int)i;
    if (read_tensor_info(&r, st, &spans[i].offset, &spans[i].nbytes)) goto fail;
  }
  uint64_t align, data = r.pos;
  if (check_alignment(st, what, &align)) goto fail;
  if (data % align) data += align - data % align;
  uint64_t data_n = data <= n ? n - data : 0;
  for (uint64_t i = 0; i < nt; i++) {
    const span *sp = &spans[i];
    const char *name = st->e[sp->entry].name;
    uint64_t end;
    if (sp->offset % align) {
      (void)tkc_err(TKC_EINVAL, "%s: tensor '%s' at offset %" PRIu64 " is not aligned to %" PRIu64 " bytes", what, name, sp->offset, align);
      goto fail;
    }
    if (io_add_overflows(sp->offset, sp->nbytes, &end) || end > data_n) {
      (void)tkc_err(TKC_EINVAL, "%s: tensor '%s' (%" PRIu64 " bytes at offset %" PRIu64 ") lies past the end of the data section (%" PRIu64 " bytes)",
                    what, name, sp->nbytes, sp->offset, data_n);
      goto fail;
    }
  }
  if (nt > 1) qsort(spans, (size_t)nt, sizeof *spans, span_cmp);
  for (uint64_t i = 1; i < nt; i++) {
    const span *a = &spans[i - 1], *b = &spans[i];
    if (a->nbytes && b->nbytes && a->offset + a->nbytes > b->offset) {
      (void)tkc_err(TKC_EINVAL, "%s: tensors '%s' and '%s' overlap (bytes %" PRIu64 "..%" PRIu64 " and %" PRIu64 "..)", what,
                    st->e[a->entry].name, st->e[b->entry].name, a->offset, a->offset + a->nbytes, b->offset);
      goto fail;
    }
  }
  for (uint64_t i = 0; i < nt; i++) { /* every check passed: copy the data out once */
    io_entry *e = &st->e[spans[i].entry];
    const uint8_t *src = spans[i].nbytes ? p + data + spans[i].offset : NULL; /* NULL: an empty tensor */
    if (e->packed) {
      int64_t nb = (int64_t)spans[i].nbytes;
      e->t = tkc_tensor_new(ctx, TKC_UINT8, 1, &nb, src);
    } else {
      e->t = tkc_tensor_new(ctx, e->dtype, e->ndim, e->shape, src);
    }
    if (!e->t) goto fail;
  }
  free(spans);
  return st;
fail:
  free(spans);
  tkc_state_free(st);
  return NULL;
}

tkc_tensor *io_gguf_dequantize(const io_entry *e) { return tkc_quant_dequantize(e->t, e->ggml_type, e->ndim, e->shape); }

tkc_state *tkc_gguf_load_bytes(tkc_ctx *ctx, const void *data, size_t n) {
  if (ctx && data && !n) {
    (void)tkc_err(TKC_EINVAL, "GGUF bytes: empty");
    return NULL;
  }
  return io_load_bytes(ctx, data, n, "tkc_gguf_load_bytes", "GGUF bytes", parse);
}

tkc_state *tkc_gguf_load(tkc_ctx *ctx, const char *path) { return io_load_file(ctx, path, "tkc_gguf_load", parse); }

/* ---------------------------------------------------------------- metadata getters */

static const io_kv *kv_or_err(const tkc_state *s, const char *key, const char *fn) {
  if (!s || !key) {
    (void)tkc_err(TKC_EINVAL, "%s: NULL %s", fn, s ? "key" : "state");
    return NULL;
  }
  const io_kv *kv = io_state_find_kv(s, key);
  if (!kv) (void)tkc_err(TKC_EINVAL, "%s: no metadata key '%s'", fn, key);
  return kv;
}

static const io_kv *wrong_type(const io_kv *kv, const char *fn, const char *want) {
  (void)tkc_err(TKC_EINVAL, "%s: metadata '%s' is a %s, not %s", fn, kv->key, gguf_type_name((uint32_t)kv->type), want);
  return NULL;
}

int tkc_gguf_meta_count(const tkc_state *s) { return s ? s->nkv : -1; }

const char *tkc_gguf_meta_key(const tkc_state *s, int i) {
  if (!s || i < 0 || i >= s->nkv) {
    (void)tkc_err(TKC_EINVAL, "tkc_gguf_meta_key: %s", s ? "index out of range" : "NULL state");
    return NULL;
  }
  return s->kv[i].key;
}

int tkc_gguf_meta_type(const tkc_state *s, const char *key) {
  const io_kv *kv = s && key ? io_state_find_kv(s, key) : NULL;
  return kv ? kv->type : -1;
}

static int is_int_type(int t) { return gguf_scalar_size((uint32_t)t) && t != TKC_GGUF_FLOAT32 && t != TKC_GGUF_FLOAT64; }

tkc_status tkc_gguf_meta_int(const tkc_state *s, const char *key, int64_t *out) {
  const io_kv *kv = kv_or_err(s, key, "tkc_gguf_meta_int");
  if (kv && !is_int_type(kv->type)) kv = wrong_type(kv, "tkc_gguf_meta_int", "an integer");
  if (kv && kv->type == TKC_GGUF_UINT64 && kv->u > INT64_MAX) {
    (void)tkc_err(TKC_EINVAL, "tkc_gguf_meta_int: metadata '%s' = %" PRIu64 " does not fit in int64", kv->key, kv->u);
    kv = NULL;
  }
  if (!kv) return tkc_last_status();
  if (out) *out = kv->i;
  return TKC_OK;
}

tkc_status tkc_gguf_meta_float(const tkc_state *s, const char *key, double *out) {
  const io_kv *kv = kv_or_err(s, key, "tkc_gguf_meta_float");
  if (kv && !gguf_scalar_size((uint32_t)kv->type)) kv = wrong_type(kv, "tkc_gguf_meta_float", "a number");
  if (!kv) return tkc_last_status();
  if (out) *out = kv->type == TKC_GGUF_FLOAT32 || kv->type == TKC_GGUF_FLOAT64 ? kv->f
                  : kv->type == TKC_GGUF_UINT64                                ? (double)kv->u
                                                                               : (double)kv->i;
  return TKC_OK;
}

const char *tkc_gguf_meta_str(const tkc_state *s, const char *key) {
  const io_kv *kv = kv_or_err(s, key, "tkc_gguf_meta_str");
  if (kv && kv->type != TKC_GGUF_STRING) kv = wrong_type(kv, "tkc_gguf_meta_str", "a string");
  return kv ? kv->str : NULL;
}

int64_t tkc_gguf_meta_str_len(const tkc_state *s, const char *key) {
  const io_kv *kv = kv_or_err(s, key, "tkc_gguf_meta_str_len");
  if (kv && kv->type != TKC_GGUF_STRING) kv = wrong_type(kv, "tkc_gguf_meta_str_len", "a string");
  return kv ? kv->str_len : -1;
}

tkc_status tkc_gguf_meta_array(const tkc_state *s, const char *key, int *elem_type, int64_t *count, const void **data) {
  const io_kv *kv = kv_or_err(s, key, "tkc_gguf_meta_array");
  if (kv && kv->type != TKC_GGUF_ARRAY) kv = wrong_type(kv, "tkc_gguf_meta_array", "an array");
  if (!kv) return tkc_last_status();
  if (elem_type) *elem_type = kv->elem_type;
  if (count) *count = kv->count;
  if (data) *data = kv->data;
  return TKC_OK;
}

const char *tkc_gguf_meta_array_str(const tkc_state *s, const char *key, int64_t i) {
  const io_kv *kv = kv_or_err(s, key, "tkc_gguf_meta_array_str");
  if (kv && (kv->type != TKC_GGUF_ARRAY || kv->elem_type != TKC_GGUF_STRING)) kv = wrong_type(kv, "tkc_gguf_meta_array_str", "a string array");
  if (kv && (i < 0 || i >= kv->count)) {
    (void)tkc_err(TKC_EINVAL, "tkc_gguf_meta_array_str: index %" PRId64 " out of range for '%s' (%" PRId64 " strings)", i, kv->key, kv->count);
    kv = NULL;
  }
  return kv ? ((char *const *)kv->data)[i] : NULL;
}
