/* test_io.c — model files (tkc/io.h): safetensors and GGUF files built byte by byte here, loaded, and
 * their tensors, shapes and metadata checked; safetensors written and read back; and every malformed
 * file (truncated anywhere, bad JSON, offsets out of range or overlapping, wrong sizes, unknown types,
 * absurd counts, duplicate names) refused with a message that names what is wrong, never a crash. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tkc.h"
#include "tkc/io.h"
#include "byte_buf.h"

static char tmpdir[64];
static tkc_ctx *ctx;
static int have_jansson; /* safetensors is built (TKC_WITH_JANSSON and jansson found) */

/* the safetensors tests skip in a build without jansson, where both directions say so */
#define NEED_JANSSON()  \
  do {                  \
    if (!have_jansson) { \
      skip();           \
    }                   \
  } while (0)

/* ---------------------------------------------------------------- byte builders */

static const char *write_file(const char *name, const void *d, size_t n) {
  static char path[4][256];
  static int k;
  char *p = path[k++ % 4];
  snprintf(p, 256, "%s/%s", tmpdir, name);
  FILE *f = fopen(p, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(d, 1, n, f), n);
  fclose(f);
  return p;
}

/* the last error is status s and its message holds every given substring */
static void expect_err(tkc_status s, const char *a, const char *b) {
  if (tkc_last_status() != s || (a && !strstr(tkc_last_error(), a)) || (b && !strstr(tkc_last_error(), b)))
    fail_msg("expected %s with '%s' '%s', got %s: %s", tkc_status_str(s), a ? a : "", b ? b : "", tkc_status_str(tkc_last_status()),
             tkc_last_error());
  tkc_clear_error();
}

static void copy_out(tkc_state *st, const char *name, void *dst, size_t n) {
  tkc_tensor *t = tkc_state_get(st, name);
  if (!t) fail_msg("%s: %s", name, tkc_last_error());
  assert_int_equal(tkc_copy_out(t, dst, n), TKC_OK);
  tkc_tensor_free(t);
}

static uint16_t f16_of(float f) { /* exact for the small values used here */
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) == 0) return (uint16_t)(x >> 16);
  uint32_t sign = (x >> 16) & 0x8000, exp = ((x >> 23) & 0xff) - 127 + 15, man = (x >> 13) & 0x3ff;
  return (uint16_t)(sign | exp << 10 | man);
}

/* ---------------------------------------------------------------- safetensors */

/* a safetensors file: header (padded with spaces to 8) then data */
static void st_file(buf *b, const char *json, const void *data, size_t n) {
  size_t hn = strlen(json), padded = (hn + 7) / 8 * 8;
  put_u64(b, padded);
  put(b, json, hn);
  for (size_t i = hn; i < padded; i++) put_u8(b, ' ');
  put(b, data, n);
}

static const float ST_F32[6] = {1, 2, 3, 4, 5, -6.5f};
static const int64_t ST_I64[2] = {-7, 1LL << 40};
static const uint16_t ST_BF16[2] = {0x3f80, 0xc000}; /* 1, -2 */
static const uint8_t ST_BOOL[3] = {1, 0, 1};
static const uint16_t ST_U16 = 65535;

/* five tensors (24 + 16 + 4 + 3 + 2 bytes of data) and metadata */
static void st_valid(buf *b) {
  uint8_t data[49];
  memcpy(data, ST_F32, 24);
  memcpy(data + 24, ST_I64, 16);
  memcpy(data + 40, ST_BF16, 4);
  memcpy(data + 44, ST_BOOL, 3);
  memcpy(data + 47, &ST_U16, 2);
  st_file(b,
          "{\"__metadata__\":{\"format\":\"pt\"},"
          "\"w\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
          "\"ids\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[24,40]},"
          "\"h\":{\"dtype\":\"BF16\",\"shape\":[2,1],\"data_offsets\":[40,44]},"
          "\"mask\":{\"dtype\":\"BOOL\",\"shape\":[3],\"data_offsets\":[44,47]},"
          "\"s\":{\"dtype\":\"U16\",\"shape\":[],\"data_offsets\":[47,49]}}",
          data, sizeof data);
}

/* F8_E4M3 / F8_E5M2 (PyTorch's float8_e4m3fn / float8_e5m2): tkc's fp8 dtypes, values through a cast */
static void test_safetensors_fp8(void **state) {
  (void)state;
  NEED_JANSSON();
  const uint8_t data[4] = {0x38, 0xc0, 0x3c, 0xc0}; /* e4m3fn 1, -2; e5m2 1, -2 */
  buf b = {0};
  st_file(&b,
          "{\"a\":{\"dtype\":\"F8_E4M3\",\"shape\":[2],\"data_offsets\":[0,2]},"
          "\"b\":{\"dtype\":\"F8_E5M2\",\"shape\":[2],\"data_offsets\":[2,4]}}",
          data, sizeof data);
  tkc_state *st = tkc_safetensors_load(ctx, write_file("f8.safetensors", b.p, b.n));
  if (!st) fail_msg("%s", tkc_last_error());
  const char *names[2] = {"a", "b"};
  const tkc_dtype want_dt[2] = {TKC_FLOAT8_E4M3FN, TKC_FLOAT8_E5M2};
  for (int i = 0; i < 2; i++) {
    tkc_tensor *t = tkc_state_get(st, names[i]);
    assert_non_null(t);
    assert_int_equal(tkc_dtype_of(t), want_dt[i]);
    tkc_tensor *f = tkc_cast(t, TKC_FLOAT32);
    float v[2];
    assert_int_equal(tkc_copy_out(f, v, sizeof v), TKC_OK);
    assert_true(v[0] == 1.0f && v[1] == -2.0f);
    tkc_tensor_free(f), tkc_tensor_free(t);
  }
  tkc_state_free(st);
  free(b.p);
}

static void test_safetensors_load(void **state) {
  (void)state;
  NEED_JANSSON();
  buf b = {0};
  st_valid(&b);
  tkc_state *st = tkc_safetensors_load(ctx, write_file("a.safetensors", b.p, b.n));
  if (!st) fail_msg("%s", tkc_last_error());
  assert_int_equal(tkc_state_count(st), 5);
  assert_string_equal(tkc_state_name(st, 0), "w"); /* file order, __metadata__ skipped */
  assert_string_equal(tkc_state_name(st, 4), "s");
  float w[6];
  copy_out(st, "w", w, sizeof w);
  assert_memory_equal(w, ST_F32, sizeof w);
  int64_t ids[2];
  copy_out(st, "ids", ids, sizeof ids);
  assert_memory_equal(ids, ST_I64, sizeof ids);
  uint16_t h[2];
  copy_out(st, "h", h, sizeof h);
  assert_memory_equal(h, ST_BF16, sizeof h);
  uint8_t mask[3];
  copy_out(st, "mask", mask, sizeof mask);
  assert_memory_equal(mask, ST_BOOL, sizeof mask);
  uint16_t s;
  copy_out(st, "s", &s, sizeof s);
  assert_int_equal(s, 65535);
  tkc_dtype dt;
  int nd;
  int64_t shape[8];
  assert_int_equal(tkc_state_shape(st, "h", &dt, &nd, shape), TKC_OK);
  assert_int_equal(dt, TKC_BFLOAT16);
  assert_int_equal(nd, 2);
  assert_int_equal(shape[0], 2);
  assert_int_equal(shape[1], 1);
  assert_int_equal(tkc_state_shape(st, "s", &dt, &nd, NULL), TKC_OK);
  assert_int_equal(nd, 0);
  assert_int_equal(dt, TKC_UINT16);
  /* a new handle per call: freeing one leaves the other and the state's own */
  tkc_tensor *a = tkc_state_get(st, "w"), *c = tkc_state_get(st, "w");
  assert_non_null(a);
  assert_ptr_not_equal(a, c);
  assert_int_equal(tkc_dim(a, 0), 2);
  assert_int_equal(tkc_dim(a, 1), 3);
  assert_int_equal(tkc_dtype_of(a), TKC_FLOAT32);
  tkc_tensor_free(a);
  float w2[6];
  assert_int_equal(tkc_copy_out(c, w2, sizeof w2), TKC_OK);
  assert_memory_equal(w2, ST_F32, sizeof w2);
  /* unknown name, index out of range, safetensors has no GGUF metadata */
  assert_null(tkc_state_get(st, "nope"));
  expect_err(TKC_EINVAL, "'nope'", NULL);
  assert_null(tkc_state_name(st, 5));
  expect_err(TKC_EINVAL, "out of range", NULL);
  assert_int_equal(tkc_state_shape(st, "nope", NULL, NULL, NULL), TKC_EINVAL);
  assert_int_equal(tkc_gguf_meta_count(st), 1); /* __metadata__ */
  assert_string_equal(tkc_gguf_meta_str(st, "format"), "pt");
  assert_int_equal(tkc_gguf_tensor_type(st, "w"), -1);
  /* tensors from tkc_state_get outlive the state */
  tkc_state_free(st);
  memset(w2, 0, sizeof w2);
  assert_int_equal(tkc_copy_out(c, w2, sizeof w2), TKC_OK);
  assert_memory_equal(w2, ST_F32, sizeof w2);
  tkc_tensor_free(c);
  /* the same from bytes */
  st = tkc_safetensors_load_bytes(ctx, b.p, b.n);
  assert_non_null(st);
  assert_int_equal(tkc_state_count(st), 5);
  tkc_state_free(st);
  free(b.p);
}

/* a tensor of the state and one of another ctx do not mix */
static void test_state_tensor_of_another_ctx(void **state) {
  (void)state;
  NEED_JANSSON();
  buf b = {0};
  st_valid(&b);
  tkc_state *st = tkc_safetensors_load_bytes(ctx, b.p, b.n);
  assert_non_null(st);
  tkc_ctx *other = tkc_ctx_new("INTERP");
  tkc_tensor *w = tkc_state_get(st, "w"), *x = tkc_full(other, TKC_FLOAT32, 2, (const int64_t[]){2, 3}, 1);
  assert_null(tkc_add(w, x));
  assert_int_not_equal(tkc_last_status(), TKC_OK);
  assert_non_null(strstr(tkc_last_error(), "ctx"));
  tkc_clear_error();
  tkc_tensor_free(w);
  tkc_state_free(st);
  tkc_ctx_free(other);
  free(b.p);
}

static void test_safetensors_save(void **state) {
  (void)state;
  NEED_JANSSON();
  const float xv[6] = {1, 2, 3, 4, 5, 6};
  const int32_t iv[3] = {-1, 0, 7};
  tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){2, 3}, xv);
  tkc_tensor *y = tkc_mul(x, tkc_scalar(ctx, TKC_FLOAT32, 2)); /* lazy: realized by the save */
  tkc_tensor *i = tkc_tensor_new(ctx, TKC_INT32, 1, (const int64_t[]){3}, iv);
  tkc_tensor *e = tkc_tensor_new(ctx, TKC_FLOAT16, 2, (const int64_t[]){0, 4}, NULL);
  char path[256];
  snprintf(path, sizeof path, "%s/saved.safetensors", tmpdir);
  const char *names[] = {"x", "y", "i", "empty"};
  tkc_tensor *ts[] = {x, y, i, e};
  assert_int_equal(tkc_safetensors_save(path, 4, names, ts), TKC_OK);
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  uint64_t hlen;
  assert_int_equal(fread(&hlen, 8, 1, f), 1);
  fclose(f);
  assert_int_equal(hlen % 8, 0);
  tkc_state *st = tkc_safetensors_load(ctx, path);
  if (!st) fail_msg("%s", tkc_last_error());
  assert_int_equal(tkc_state_count(st), 4);
  float got[6];
  copy_out(st, "x", got, sizeof got);
  assert_memory_equal(got, xv, sizeof got);
  copy_out(st, "y", got, sizeof got);
  for (int k = 0; k < 6; k++) assert_true(got[k] == 2 * xv[k]);
  int32_t gi[3];
  copy_out(st, "i", gi, sizeof gi);
  assert_memory_equal(gi, iv, sizeof gi);
  tkc_dtype dt;
  int nd;
  int64_t shape[8];
  assert_int_equal(tkc_state_shape(st, "empty", &dt, &nd, shape), TKC_OK);
  assert_int_equal(dt, TKC_FLOAT16);
  assert_int_equal(nd, 2);
  assert_int_equal(shape[0], 0);
  assert_int_equal(shape[1], 4);
  tkc_state_free(st);

  /* bad arguments, each naming what is wrong; the file already there is left as it was */
  assert_int_equal(tkc_safetensors_save(NULL, 1, names, ts), TKC_EINVAL);
  expect_err(TKC_EINVAL, "NULL path", NULL);
  assert_int_equal(tkc_safetensors_save(path, -1, names, ts), TKC_EINVAL);
  assert_int_equal(tkc_safetensors_save(path, 1, NULL, ts), TKC_EINVAL);
  const char *dup[] = {"x", "x"};
  assert_int_equal(tkc_safetensors_save(path, 2, dup, ts), TKC_EINVAL);
  expect_err(TKC_EINVAL, "'x' given twice", NULL);
  const char *empty[] = {""};
  assert_int_equal(tkc_safetensors_save(path, 1, empty, ts), TKC_EINVAL);
  expect_err(TKC_EINVAL, "empty", NULL);
  const char *meta[] = {"__metadata__"};
  assert_int_equal(tkc_safetensors_save(path, 1, meta, ts), TKC_EINVAL);
  expect_err(TKC_EINVAL, "__metadata__", NULL);
  const char *nul[] = {NULL};
  assert_int_equal(tkc_safetensors_save(path, 1, nul, ts), TKC_EINVAL);
  tkc_tensor *none[] = {NULL};
  assert_int_equal(tkc_safetensors_save(path, 1, names, none), TKC_EINVAL);
  expect_err(TKC_EINVAL, "tensor 0 ('x') is NULL", NULL);
  tkc_tensor *freed = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){2}, NULL);
  tkc_tensor_free(freed);
  tkc_tensor *fr[] = {freed};
  assert_int_not_equal(tkc_safetensors_save(path, 1, names, fr), TKC_OK);
  assert_non_null(strstr(tkc_last_error(), "'x'"));
  tkc_clear_error();
  char bad[300];
  snprintf(bad, sizeof bad, "%s/no/such/dir/f.safetensors", tmpdir);
  assert_int_equal(tkc_safetensors_save(bad, 1, names, ts), TKC_ERUNTIME);
  expect_err(TKC_ERUNTIME, "cannot create", NULL);
  st = tkc_safetensors_load(ctx, path); /* still the first save's file */
  assert_non_null(st);
  assert_int_equal(tkc_state_count(st), 4);
  tkc_state_free(st);
  /* no temporary file left next to it */
  char tmp[300];
  snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
  assert_int_equal(access(tmp, F_OK), -1);
  /* zero tensors: a valid empty file */
  assert_int_equal(tkc_safetensors_save(path, 0, NULL, NULL), TKC_OK);
  st = tkc_safetensors_load(ctx, path);
  assert_non_null(st);
  assert_int_equal(tkc_state_count(st), 0);
  tkc_state_free(st);
  tkc_tensor_free(x);
  tkc_tensor_free(y);
  tkc_tensor_free(i);
  tkc_tensor_free(e);
}

/* one bad header: the load fails with status s and a message holding `what` */
static void st_bad(const char *json, size_t ndata, tkc_status s, const char *what, const char *what2) {
  uint8_t data[64] = {0};
  buf b = {0};
  st_file(&b, json, data, ndata);
  tkc_state *st = tkc_safetensors_load(ctx, write_file("bad.safetensors", b.p, b.n));
  if (st) fail_msg("loaded: %s", json);
  expect_err(s, what, what2);
  free(b.p);
}

static void test_safetensors_bad(void **state) {
  (void)state;
  NEED_JANSSON();
  assert_null(tkc_safetensors_load(NULL, "x"));
  expect_err(TKC_EINVAL, "NULL ctx", NULL);
  assert_null(tkc_safetensors_load(ctx, NULL));
  expect_err(TKC_EINVAL, "NULL path", NULL);
  assert_null(tkc_safetensors_load(ctx, "/nonexistent/file.safetensors"));
  expect_err(TKC_EINVAL, "/nonexistent/file.safetensors", "cannot open");
  assert_null(tkc_safetensors_load(ctx, write_file("empty.safetensors", "", 0)));
  expect_err(TKC_EINVAL, "empty.safetensors", "empty file");
  assert_null(tkc_safetensors_load(ctx, tmpdir));
  expect_err(TKC_EINVAL, "not a regular file", NULL);

  /* every truncation of a valid file is an error naming the file */
  buf b = {0};
  st_valid(&b);
  for (size_t n = 1; n < b.n; n++) {
    tkc_state *st = tkc_safetensors_load(ctx, write_file("cut.safetensors", b.p, n));
    if (st) fail_msg("a file cut to %zu of %zu bytes loaded", n, b.n);
    expect_err(TKC_EINVAL, "cut.safetensors", NULL);
  }
  /* a header length past the end, or absurd */
  uint64_t big = 1ull << 62;
  memcpy(b.p, &big, 8);
  assert_null(tkc_safetensors_load_bytes(ctx, b.p, b.n));
  expect_err(TKC_EINVAL, "truncated", NULL);
  free(b.p);

  const char *W = "\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}";
  char json[512];
  st_bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],", 8, TKC_EINVAL, "bad JSON header", NULL);
  st_bad("[1, 2, 3]", 0, TKC_EINVAL, "not an object", NULL);
  st_bad("{\"__metadata__\":[]}", 0, TKC_EINVAL, "__metadata__ is not an object", NULL);
  st_bad("{\"__metadata__\":{\"a\":\"b\",\"n\":1}}", 0, TKC_EINVAL, "__metadata__ 'n' is not a string", NULL);
  st_bad("{\"w\":5}", 0, TKC_EINVAL, "'w'", "dtype");
  st_bad("{\"w\":{\"shape\":[2],\"data_offsets\":[0,8]}}", 8, TKC_EINVAL, "'w'", "dtype");
  st_bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", 8, TKC_EINVAL, "'w'", "data_offsets");
  st_bad("{\"w\":{\"dtype\":\"F33\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, TKC_EINVAL, "unknown dtype 'F33'", "'w'");
  st_bad("{\"w\":{\"dtype\":\"F8_E8M0\",\"shape\":[2],\"data_offsets\":[0,2]}}", 2, TKC_EUNSUPPORTED, "F8_E8M0", "'w'");
  st_bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8, TKC_EINVAL, "'w'", "bad shape");
  st_bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[2.5],\"data_offsets\":[0,8]}}", 8, TKC_EINVAL, "'w'", "bad shape");
  st_bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],\"data_offsets\":[0,8]}}", 8, TKC_EINVAL, "'w'", "bad shape");
  st_bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 4, TKC_EUNSUPPORTED, "'w'", "9 dims");
  st_bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, TKC_EINVAL, "'w'", "need 12");
  st_bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 8, TKC_EINVAL, "'w'", "bad data_offsets");
  st_bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[-8,0]}}", 8, TKC_EINVAL, "'w'", "bad data_offsets");
  st_bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", 8, TKC_EINVAL, "'w'", "past the end");
  st_bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[18446744073709551615,8]}}", 8, TKC_EINVAL, "bad JSON", NULL);
  snprintf(json, sizeof json, "{%s,\"v\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[4,12]}}", W);
  st_bad(json, 12, TKC_EINVAL, "overlap", "'w'");
  snprintf(json, sizeof json, "{%s,%s}", W, W);
  st_bad(json, 8, TKC_EINVAL, "bad JSON", "duplicate");
  /* a NUL byte inside the JSON text */
  uint8_t nul[24] = {16, 0, 0, 0, 0, 0, 0, 0, '{', '"', 'a', 0, '"', ':', '1', '}', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
  assert_null(tkc_safetensors_load_bytes(ctx, nul, sizeof nul));
  expect_err(TKC_EINVAL, "bad JSON", NULL);
  /* an empty object is an empty state; holes between tensors are allowed */
  memset(&b, 0, sizeof b);
  st_file(&b, "{}", NULL, 0);
  tkc_state *st = tkc_safetensors_load_bytes(ctx, b.p, b.n);
  assert_non_null(st);
  assert_int_equal(tkc_state_count(st), 0);
  tkc_state_free(st);
  free(b.p);
  memset(&b, 0, sizeof b);
  const float hv[6] = {1, 2, -1, -1, 3, 4};
  snprintf(json, sizeof json, "{%s,\"v\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[16,24]}}", W);
  st_file(&b, json, hv, sizeof hv);
  st = tkc_safetensors_load_bytes(ctx, b.p, b.n);
  if (!st) fail_msg("%s", tkc_last_error());
  float got[2];
  copy_out(st, "v", got, sizeof got);
  assert_true(got[0] == 3 && got[1] == 4);
  tkc_state_free(st);
  free(b.p);
}

/* ---------------------------------------------------------------- GGUF */

static void gguf_header(buf *b, uint32_t version, uint64_t nt, uint64_t nkv) {
  put(b, "GGUF", 4);
  put_u32(b, version);
  put_u64(b, nt);
  put_u64(b, nkv);
}
static void kv_head(buf *b, const char *key, uint32_t type) {
  put_str(b, key);
  put_u32(b, type);
}
static void tensor_info(buf *b, const char *name, uint32_t nd, const uint64_t *ne, uint32_t type, uint64_t offset) {
  put_str(b, name);
  put_u32(b, nd);
  for (uint32_t d = 0; d < nd; d++) put_u64(b, ne[d]);
  put_u32(b, type);
  put_u64(b, offset);
}

static const float G_W[6] = {0.5f, -1, 2, 3, 4, 5}; /* ne = {3, 2}: numpy shape (2, 3) */
static const int32_t G_I[3] = {-3, 0, 1 << 30};

/* every metadata type, and F32 / F16 / BF16 / I32 tensors, alignment 64 */
static void gguf_valid(buf *b, uint32_t version) {
  gguf_header(b, version, 4, 17);
  kv_head(b, "general.architecture", TKC_GGUF_STRING), put_str(b, "llama");
  kv_head(b, "general.alignment", TKC_GGUF_UINT32), put_u32(b, 64);
  kv_head(b, "u8", TKC_GGUF_UINT8), put_u8(b, 250);
  kv_head(b, "i8", TKC_GGUF_INT8), put_u8(b, 0x80);
  kv_head(b, "u16", TKC_GGUF_UINT16), put_u8(b, 0xff), put_u8(b, 0xff);
  kv_head(b, "i16", TKC_GGUF_INT16), put_u8(b, 0xfe), put_u8(b, 0xff);
  kv_head(b, "u32", TKC_GGUF_UINT32), put_u32(b, 4000000000u);
  kv_head(b, "i32", TKC_GGUF_INT32), put_u32(b, (uint32_t)-5);
  float f = 0.25f;
  kv_head(b, "f32", TKC_GGUF_FLOAT32), put(b, &f, 4);
  kv_head(b, "bool", TKC_GGUF_BOOL), put_u8(b, 1);
  kv_head(b, "u64", TKC_GGUF_UINT64), put_u64(b, UINT64_MAX);
  kv_head(b, "i64", TKC_GGUF_INT64), put_u64(b, (uint64_t)-(1LL << 50));
  double d = -1e300;
  kv_head(b, "f64", TKC_GGUF_FLOAT64), put(b, &d, 8);
  kv_head(b, "arr.i32", TKC_GGUF_ARRAY), put_u32(b, TKC_GGUF_INT32), put_u64(b, 3);
  for (int i = 0; i < 3; i++) put_u32(b, (uint32_t)(i * 10));
  kv_head(b, "tokenizer.ggml.tokens", TKC_GGUF_ARRAY), put_u32(b, TKC_GGUF_STRING), put_u64(b, 3);
  put_str(b, "<s>"), put_str(b, ""), put_str(b, "h\xc3\xa9llo");
  kv_head(b, "arr.empty", TKC_GGUF_ARRAY), put_u32(b, TKC_GGUF_FLOAT32), put_u64(b, 0);
  kv_head(b, "empty.str", TKC_GGUF_STRING), put_str(b, "");
  /* data: w at 0 (24 B), h at 64 (F16, 4 values), bf at 128 (BF16, 2), i at 192 (I32, 3) */
  tensor_info(b, "w", 2, (const uint64_t[]){3, 2}, 0, 0);
  tensor_info(b, "h", 1, (const uint64_t[]){4}, 1, 64);
  tensor_info(b, "bf", 3, (const uint64_t[]){2, 1, 1}, 30, 128);
  tensor_info(b, "i", 1, (const uint64_t[]){3}, 26, 192);
  pad_to(b, 64);
  size_t data = b->n;
  put(b, G_W, sizeof G_W);
  pad_to(b, 64);
  for (int i = 0; i < 4; i++) {
    uint16_t h = f16_of((float)i - 1.5f);
    put(b, &h, 2);
  }
  pad_to(b, 64);
  put(b, &(uint16_t){0x3f80}, 2), put(b, &(uint16_t){0x4040}, 2); /* 1, 3 */
  pad_to(b, 64);
  put(b, G_I, sizeof G_I);
  assert_int_equal(b->n - data, 192 + 12);
}

static void test_gguf_load(void **state) {
  (void)state;
  for (uint32_t version = 2; version <= 3; version++) {
    buf b = {0};
    gguf_valid(&b, version);
    tkc_state *st = tkc_gguf_load(ctx, write_file("a.gguf", b.p, b.n));
    if (!st) fail_msg("%s", tkc_last_error());
    assert_int_equal(tkc_state_count(st), 4);
    assert_string_equal(tkc_state_name(st, 1), "h");
    tkc_dtype dt;
    int nd;
    int64_t shape[8];
    assert_int_equal(tkc_state_shape(st, "w", &dt, &nd, shape), TKC_OK);
    assert_int_equal(dt, TKC_FLOAT32);
    assert_int_equal(nd, 2);
    assert_int_equal(shape[0], 2); /* ne reversed */
    assert_int_equal(shape[1], 3);
    float w[6];
    copy_out(st, "w", w, sizeof w);
    assert_memory_equal(w, G_W, sizeof w);
    tkc_tensor *h = tkc_state_get(st, "h");
    assert_int_equal(tkc_dtype_of(h), TKC_FLOAT16);
    float hf[4];
    tkc_tensor *hc = tkc_cast(h, TKC_FLOAT32);
    assert_int_equal(tkc_copy_out(hc, hf, sizeof hf), TKC_OK);
    for (int i = 0; i < 4; i++) assert_true(hf[i] == (float)i - 1.5f);
    tkc_tensor_free(hc);
    tkc_tensor_free(h);
    tkc_tensor *bf = tkc_state_get(st, "bf");
    assert_int_equal(tkc_dtype_of(bf), TKC_BFLOAT16);
    assert_int_equal(tkc_ndim(bf), 3);
    assert_int_equal(tkc_dim(bf, 0), 1);
    assert_int_equal(tkc_dim(bf, 2), 2);
    tkc_tensor_free(bf);
    int32_t iv[3];
    copy_out(st, "i", iv, sizeof iv);
    assert_memory_equal(iv, G_I, sizeof iv);
    assert_int_equal(tkc_gguf_tensor_type(st, "bf"), 30);
    assert_int_equal(tkc_gguf_tensor_type(st, "i"), 26);
    assert_int_equal(tkc_gguf_tensor_type(st, "zz"), -1);
    expect_err(TKC_EINVAL, "'zz'", NULL);

    /* metadata */
    assert_int_equal(tkc_gguf_meta_count(st), 17);
    assert_string_equal(tkc_gguf_meta_key(st, 0), "general.architecture");
    assert_string_equal(tkc_gguf_meta_str(st, "general.architecture"), "llama");
    assert_int_equal(tkc_gguf_meta_str_len(st, "empty.str"), 0);
    assert_string_equal(tkc_gguf_meta_str(st, "empty.str"), "");
    const struct { const char *key; int64_t v; int type; } ints[] = {
        {"u8", 250, TKC_GGUF_UINT8},      {"i8", -128, TKC_GGUF_INT8},   {"u16", 65535, TKC_GGUF_UINT16},
        {"i16", -2, TKC_GGUF_INT16},      {"u32", 4000000000, TKC_GGUF_UINT32}, {"i32", -5, TKC_GGUF_INT32},
        {"bool", 1, TKC_GGUF_BOOL},       {"i64", -(1LL << 50), TKC_GGUF_INT64}, {"general.alignment", 64, TKC_GGUF_UINT32}};
    for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
      int64_t v = 0;
      assert_int_equal(tkc_gguf_meta_int(st, ints[k].key, &v), TKC_OK);
      assert_int_equal(v, ints[k].v);
      assert_int_equal(tkc_gguf_meta_type(st, ints[k].key), ints[k].type);
      double dv;
      assert_int_equal(tkc_gguf_meta_float(st, ints[k].key, &dv), TKC_OK);
      assert_true(dv == (double)ints[k].v);
    }
    int64_t v;
    assert_int_equal(tkc_gguf_meta_int(st, "u64", &v), TKC_EINVAL);
    expect_err(TKC_EINVAL, "does not fit", "'u64'");
    double dv;
    assert_int_equal(tkc_gguf_meta_float(st, "u64", &dv), TKC_OK);
    assert_true(dv == 18446744073709551615.0);
    assert_int_equal(tkc_gguf_meta_float(st, "f32", &dv), TKC_OK);
    assert_true(dv == 0.25);
    assert_int_equal(tkc_gguf_meta_float(st, "f64", &dv), TKC_OK);
    assert_true(dv == -1e300);
    assert_int_equal(tkc_gguf_meta_int(st, "f32", &v), TKC_EINVAL);
    expect_err(TKC_EINVAL, "'f32' is a float32, not an integer", NULL);
    assert_null(tkc_gguf_meta_str(st, "u8"));
    expect_err(TKC_EINVAL, "'u8' is a uint8, not a string", NULL);
    assert_int_equal(tkc_gguf_meta_int(st, "missing", &v), TKC_EINVAL);
    expect_err(TKC_EINVAL, "no metadata key 'missing'", NULL);
    assert_int_equal(tkc_gguf_meta_type(st, "missing"), -1);
    int et;
    int64_t count;
    const void *data;
    assert_int_equal(tkc_gguf_meta_array(st, "arr.i32", &et, &count, &data), TKC_OK);
    assert_int_equal(et, TKC_GGUF_INT32);
    assert_int_equal(count, 3);
    assert_int_equal(((const int32_t *)data)[2], 20);
    assert_int_equal(tkc_gguf_meta_array(st, "arr.empty", &et, &count, NULL), TKC_OK);
    assert_int_equal(et, TKC_GGUF_FLOAT32);
    assert_int_equal(count, 0);
    assert_int_equal(tkc_gguf_meta_array(st, "tokenizer.ggml.tokens", &et, &count, &data), TKC_OK);
    assert_int_equal(et, TKC_GGUF_STRING);
    assert_int_equal(count, 3);
    assert_string_equal(((const char *const *)data)[0], "<s>");
    assert_string_equal(tkc_gguf_meta_array_str(st, "tokenizer.ggml.tokens", 1), "");
    assert_string_equal(tkc_gguf_meta_array_str(st, "tokenizer.ggml.tokens", 2), "h\xc3\xa9llo");
    assert_null(tkc_gguf_meta_array_str(st, "tokenizer.ggml.tokens", 3));
    expect_err(TKC_EINVAL, "out of range", NULL);
    assert_null(tkc_gguf_meta_array_str(st, "arr.i32", 0));
    expect_err(TKC_EINVAL, "not a string array", NULL);
    assert_int_equal(tkc_gguf_meta_array(st, "u8", NULL, NULL, NULL), TKC_EINVAL);
    tkc_state_free(st);
    free(b.p);
  }
  /* NULL states */
  assert_int_equal(tkc_state_count(NULL), -1);
  assert_int_equal(tkc_gguf_meta_count(NULL), -1);
  assert_null(tkc_state_get(NULL, "w"));
  expect_err(TKC_EINVAL, "NULL state", NULL);
  assert_int_equal(tkc_gguf_meta_int(NULL, "k", NULL), TKC_EINVAL);
  tkc_state_free(NULL);
}

/* Q8_0: blocks of an f16 scale and 32 int8 values, kept packed; the dequantized values are d * q */
/* a GGUF file of one Q8_0 tensor "q", numpy shape (2, 64); want: its values */
static void q8_file(buf *b, float *want) {
  gguf_header(b, 3, 1, 0);
  tensor_info(b, "q", 2, (const uint64_t[]){64, 2}, 8, 0);
  pad_to(b, 32);
  for (int blk = 0; blk < 4; blk++) {
    float d = 0.5f * (float)(blk + 1);
    uint16_t h = f16_of(d);
    put(b, &h, 2);
    for (int j = 0; j < 32; j++) {
      int8_t q = (int8_t)(j * 7 - 100 + blk);
      put_u8(b, (uint8_t)q);
      want[blk * 32 + j] = d * q;
    }
  }
}

static void test_gguf_quant(void **state) {
  (void)state;
  buf b = {0};
  float want[128];
  q8_file(&b, want);
  tkc_state *st = tkc_gguf_load(ctx, write_file("q.gguf", b.p, b.n));
  if (!st) fail_msg("%s", tkc_last_error());
  assert_int_equal(tkc_gguf_tensor_type(st, "q"), 8);
  tkc_dtype dt;
  int nd;
  int64_t shape[8];
  assert_int_equal(tkc_state_shape(st, "q", &dt, &nd, shape), TKC_OK);
  assert_int_equal(dt, TKC_FLOAT32);
  assert_int_equal(nd, 2);
  assert_int_equal(shape[0], 2);
  assert_int_equal(shape[1], 64);
  tkc_tensor *t = tkc_state_get(st, "q");
  if (!t) { /* the dequantizers (src/io/quant.c) may not be there yet: then this is their error */
    expect_err(TKC_EUNSUPPORTED, "Q8_0", NULL);
  } else {
    float got[128];
    assert_int_equal(tkc_dtype_of(t), TKC_FLOAT32);
    assert_int_equal(tkc_copy_out(t, got, sizeof got), TKC_OK);
    for (int k = 0; k < 128; k++)
      if (got[k] != want[k]) fail_msg("q[%d] = %g, want %g", k, got[k], want[k]);
    tkc_tensor_free(t);
  }
  tkc_state_free(st);
  free(b.p);
}

/* tkc_state_matmul(s): x @ q^T in float and through the int8 path (x quantized per 32: within the
 * quantization's bound of the float product), the batch form, and every refusal */
static void test_state_matmul(void **state) {
  (void)state;
  buf b = {0};
  float wv[128], xv[3 * 64], y[6], y8[6], yq[6];
  q8_file(&b, wv);
  tkc_state *st = tkc_gguf_load(ctx, write_file("mm.gguf", b.p, b.n));
  if (!st) fail_msg("%s", tkc_last_error());
  for (int i = 0; i < 3 * 64; i++) xv[i] = (float)((i * 37) % 101 - 50) / 25.0f;
  tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){3, 64}, xv);
  tkc_tensor *yf = tkc_state_matmul(st, "q", x, 0), *yi = tkc_state_matmul(st, "q", x, TKC_MATMUL_INT8);
  if (!yf || !yi) fail_msg("%s", tkc_last_error());
  assert_int_equal(tkc_ndim(yi), 2);
  assert_int_equal(tkc_dim(yi, 1), 2);
  assert_int_equal(tkc_copy_out(yf, y, sizeof y), TKC_OK);
  assert_int_equal(tkc_copy_out(yi, y8, sizeof y8), TKC_OK);
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 2; c++) {
      double exact = 0, bound = 0;
      for (int blk = 0; blk < 2; blk++) {
        float amax = 0;
        double wabs = 0;
        for (int j = 0; j < 32; j++) {
          amax = fabsf(xv[r * 64 + blk * 32 + j]) > amax ? fabsf(xv[r * 64 + blk * 32 + j]) : amax;
          wabs += fabs(wv[c * 64 + blk * 32 + j]);
        }
        bound += wabs * amax / 254.0;
      }
      for (int j = 0; j < 64; j++) exact += (double)xv[r * 64 + j] * wv[c * 64 + j];
      if (fabs(y[r * 2 + c] - exact) > 1e-4 * fabs(exact) + 1e-4) fail_msg("float [%d,%d] = %g, want %g", r, c, y[r * 2 + c], exact);
      if (fabs(y8[r * 2 + c] - exact) > bound * 1.001 + 1e-4) fail_msg("int8 [%d,%d] = %g, want %g within %g", r, c, y8[r * 2 + c], exact, bound);
    }
  /* the batch form: the same values */
  const char *names[2] = {"q", "q"};
  tkc_tensor *out[2];
  assert_int_equal(tkc_state_matmuls(st, 2, names, x, TKC_MATMUL_INT8, out), TKC_OK);
  assert_int_equal(tkc_copy_out(out[1], yq, sizeof yq), TKC_OK);
  assert_memory_equal(yq, y8, sizeof yq);
  tkc_tensor_free(out[0]), tkc_tensor_free(out[1]);
  /* refusals */
  tkc_tensor *x3 = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){3, 63}, NULL), *xi = tkc_tensor_new(ctx, TKC_INT32, 2, (const int64_t[]){1, 64}, NULL);
  tkc_ctx *other = tkc_ctx_new("CPU");
  tkc_tensor *xo = tkc_tensor_new(other, TKC_FLOAT32, 2, (const int64_t[]){1, 64}, NULL);
  assert_null(tkc_state_matmul(st, "nope", x, 0));
  expect_err(TKC_EINVAL, "no tensor named 'nope'", NULL);
  assert_null(tkc_state_matmul(NULL, "q", x, 0));
  expect_err(TKC_EINVAL, "NULL state", NULL);
  assert_null(tkc_state_matmul(st, NULL, x, 0));
  expect_err(TKC_EINVAL, "NULL name", NULL);
  tkc_clear_error();
  assert_null(tkc_state_matmul(st, "q", NULL, 0));
  expect_err(TKC_EINVAL, NULL, NULL);
  assert_null(tkc_state_matmul(st, "q", x3, TKC_MATMUL_INT8));
  expect_err(TKC_ESHAPE, "last dim is 63", NULL);
  assert_null(tkc_state_matmul(st, "q", xi, TKC_MATMUL_INT8));
  expect_err(TKC_EDTYPE, "int32", NULL);
  assert_null(tkc_state_matmul(st, "q", x, 4));
  expect_err(TKC_EINVAL, "unknown flags", NULL);
  assert_null(tkc_state_matmul(st, "q", xo, 0));
  expect_err(TKC_EINVAL, "another ctx", NULL);
  assert_int_equal(tkc_state_matmuls(st, 0, names, x, 0, out), TKC_EINVAL);
  assert_int_equal(tkc_state_matmuls(st, 2, (const char *const[]){"q", "nope"}, x, 0, out), TKC_EINVAL);
  assert_null(out[0]);
  tkc_tensor_free(xo);
  tkc_ctx_free(other);
  /* a plain float weight ignores the int8 flag; a 1-d one is refused */
  buf b2 = {0};
  gguf_valid(&b2, 3);
  tkc_state *st2 = tkc_gguf_load(ctx, write_file("mm2.gguf", b2.p, b2.n));
  if (!st2) fail_msg("%s", tkc_last_error());
  const float x1v[3] = {1, 2, -1};
  float yw[2];
  tkc_tensor *x1 = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){3}, x1v), *x4 = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){4}, NULL);
  tkc_tensor *yw_t = tkc_state_matmul(st2, "w", x1, TKC_MATMUL_INT8);
  if (!yw_t) fail_msg("%s", tkc_last_error());
  assert_int_equal(tkc_copy_out(yw_t, yw, sizeof yw), TKC_OK);
  for (int c = 0; c < 2; c++)
    if (yw[c] != G_W[3 * c] * 1 + G_W[3 * c + 1] * 2 - G_W[3 * c + 2]) fail_msg("x @ w^T [%d] = %g", c, yw[c]);
  assert_null(tkc_state_matmul(st2, "h", x4, 0));
  expect_err(TKC_ESHAPE, "'h' has 1 dims", NULL);
  tkc_tensor_free(x1), tkc_tensor_free(x4), tkc_tensor_free(yw_t);
  tkc_state_free(st2);
  free(b2.p);
  tkc_tensor *ts[] = {x, yf, yi, x3, xi};
  for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) tkc_tensor_free(ts[i]);
  tkc_state_free(st);
  free(b.p);
}

/* one bad GGUF file: the load fails with status s and a message holding a (and b) */
static void gguf_bad(buf *b, tkc_status s, const char *a, const char *a2) {
  tkc_state *st = tkc_gguf_load(ctx, write_file("bad.gguf", b->p, b->n));
  if (st) fail_msg("a bad GGUF file loaded (expected '%s')", a);
  expect_err(s, a, a2);
  free(b->p);
  memset(b, 0, sizeof *b);
}

static void test_gguf_bad(void **state) {
  (void)state;
  assert_null(tkc_gguf_load(NULL, "x"));
  expect_err(TKC_EINVAL, "NULL ctx", NULL);
  assert_null(tkc_gguf_load(ctx, "/nonexistent.gguf"));
  expect_err(TKC_EINVAL, "/nonexistent.gguf", NULL);
  assert_null(tkc_gguf_load(ctx, write_file("empty.gguf", "", 0)));
  expect_err(TKC_EINVAL, "empty file", NULL);
  assert_null(tkc_gguf_load_bytes(ctx, "GGUF", 0));
  expect_err(TKC_EINVAL, "empty", NULL);

  /* every truncation of a valid file */
  buf b = {0};
  gguf_valid(&b, 3);
  for (size_t n = 1; n < b.n; n++) {
    tkc_state *st = tkc_gguf_load(ctx, write_file("cut.gguf", b.p, n));
    if (st) fail_msg("a file cut to %zu of %zu bytes loaded", n, b.n);
    expect_err(TKC_EINVAL, "cut.gguf", NULL);
  }
  free(b.p);
  memset(&b, 0, sizeof b);

  put(&b, "GGUX", 4), put_u32(&b, 3), put_u64(&b, 0), put_u64(&b, 0);
  gguf_bad(&b, TKC_EINVAL, "bad.gguf", "magic");
  gguf_header(&b, 1, 0, 0);
  gguf_bad(&b, TKC_EUNSUPPORTED, "version 1", NULL);
  gguf_header(&b, 4, 0, 0);
  gguf_bad(&b, TKC_EINVAL, "version 4", NULL);
  gguf_header(&b, 0x03000000u, 0, 0);
  gguf_bad(&b, TKC_EUNSUPPORTED, "big-endian", NULL);
  gguf_header(&b, 3, 1ull << 60, 0);
  gguf_bad(&b, TKC_EINVAL, "tensors, more than", NULL);
  gguf_header(&b, 3, 0, UINT64_MAX);
  gguf_bad(&b, TKC_EINVAL, "metadata entries", NULL);
  /* a string longer than the file */
  gguf_header(&b, 3, 0, 1), put_u64(&b, 1ull << 40), put(&b, "key-and-more-bytes", 18);
  gguf_bad(&b, TKC_EINVAL, "truncated", "metadata key");
  gguf_header(&b, 3, 0, 1), put_u64(&b, UINT64_MAX), put(&b, "key-and-more-bytes", 18);
  gguf_bad(&b, TKC_EINVAL, "truncated", NULL);
  gguf_header(&b, 3, 0, 1), kv_head(&b, "k", TKC_GGUF_STRING), put_u64(&b, 1ull << 62), put(&b, "abcdefgh", 8);
  gguf_bad(&b, TKC_EINVAL, "truncated", "k");
  /* keys: empty, with a NUL, twice */
  gguf_header(&b, 3, 0, 1), put_u64(&b, 0), put_u32(&b, 0), put_u8(&b, 1);
  gguf_bad(&b, TKC_EINVAL, "metadata key", "empty");
  gguf_header(&b, 3, 0, 1), put_u64(&b, 3), put(&b, "a\0b", 3), put_u32(&b, 0), put_u8(&b, 1);
  gguf_bad(&b, TKC_EINVAL, "metadata key", "NUL");
  gguf_header(&b, 3, 0, 2);
  kv_head(&b, "k", TKC_GGUF_UINT8), put_u8(&b, 1), kv_head(&b, "k", TKC_GGUF_UINT8), put_u8(&b, 2);
  gguf_bad(&b, TKC_EINVAL, "'k' appears twice", NULL);
  /* value types */
  gguf_header(&b, 3, 0, 1), kv_head(&b, "k", 13), put_u64(&b, 0);
  gguf_bad(&b, TKC_EINVAL, "'k'", "unknown value type 13");
  gguf_header(&b, 3, 0, 1), kv_head(&b, "k", TKC_GGUF_ARRAY), put_u32(&b, TKC_GGUF_ARRAY), put_u64(&b, 1);
  put_u32(&b, 0), put_u64(&b, 0);
  gguf_bad(&b, TKC_EUNSUPPORTED, "'k'", "array of arrays");
  gguf_header(&b, 3, 0, 1), kv_head(&b, "k", TKC_GGUF_ARRAY), put_u32(&b, 77), put_u64(&b, 1), put_u64(&b, 0);
  gguf_bad(&b, TKC_EINVAL, "'k'", "unknown type 77");
  gguf_header(&b, 3, 0, 1), kv_head(&b, "k", TKC_GGUF_ARRAY), put_u32(&b, TKC_GGUF_UINT64), put_u64(&b, 1ull << 61), put_u64(&b, 0);
  gguf_bad(&b, TKC_EINVAL, "'k'", "claims 2305843009213693952 uint64 elements");
  gguf_header(&b, 3, 0, 1), kv_head(&b, "k", TKC_GGUF_ARRAY), put_u32(&b, TKC_GGUF_STRING), put_u64(&b, 1ull << 40), put_u64(&b, 0);
  gguf_bad(&b, TKC_EINVAL, "'k'", "string elements");
  gguf_header(&b, 3, 0, 1), kv_head(&b, "k", TKC_GGUF_ARRAY), put_u32(&b, TKC_GGUF_STRING), put_u64(&b, 2), put_str(&b, "a"),
      put_u64(&b, 1000), put_u64(&b, 0);
  gguf_bad(&b, TKC_EINVAL, "truncated", "'k'");
  /* alignment */
  gguf_header(&b, 3, 0, 1), kv_head(&b, "general.alignment", TKC_GGUF_UINT32), put_u32(&b, 48);
  gguf_bad(&b, TKC_EINVAL, "general.alignment", "power of two");
  gguf_header(&b, 3, 0, 1), kv_head(&b, "general.alignment", TKC_GGUF_UINT64), put_u64(&b, 64);
  gguf_bad(&b, TKC_EINVAL, "general.alignment", "uint64");
  gguf_header(&b, 3, 0, 1), kv_head(&b, "general.alignment", TKC_GGUF_UINT32), put_u32(&b, 0);
  gguf_bad(&b, TKC_EINVAL, "general.alignment", NULL);

  /* tensor infos */
  const float data[16] = {0};
#define ONE_TENSOR(name, nd, ne, type, off) \
  gguf_header(&b, 3, 1, 0), tensor_info(&b, name, nd, ne, type, off), pad_to(&b, 32), put(&b, data, sizeof data)
  ONE_TENSOR("t", 5, ((const uint64_t[]){1, 1, 1, 1, 1}), 0, 0);
  gguf_bad(&b, TKC_EINVAL, "'t'", "5 dims");
  ONE_TENSOR("t", 4, ((const uint64_t[]){1ull << 32, 1ull << 32, 1ull << 32, 1}), 0, 0);
  gguf_bad(&b, TKC_EINVAL, "'t'", "absurd shape");
  ONE_TENSOR("t", 1, ((const uint64_t[]){UINT64_MAX}), 0, 0);
  gguf_bad(&b, TKC_EINVAL, "'t'", "absurd shape");
  ONE_TENSOR("t", 2, ((const uint64_t[]){1ull << 31, 1ull << 31}), 0, 0);
  gguf_bad(&b, TKC_EINVAL, "'t'", "larger than memory");
  ONE_TENSOR("t", 2, ((const uint64_t[]){1ull << 30, 1ull << 30}), 0, 0);
  gguf_bad(&b, TKC_EINVAL, "'t'", "past the end");
  ONE_TENSOR("t", 1, ((const uint64_t[]){4}), 10, 0);
  gguf_bad(&b, TKC_EUNSUPPORTED, "'t'", "Q2_K (10)");
  ONE_TENSOR("t", 1, ((const uint64_t[]){4}), 99, 0);
  gguf_bad(&b, TKC_EUNSUPPORTED, "'t'", "unknown (99)");
  ONE_TENSOR("t", 1, ((const uint64_t[]){48}), 8, 0);
  gguf_bad(&b, TKC_EINVAL, "'t'", "rows of 48 values");
  ONE_TENSOR("t", 1, ((const uint64_t[]){4}), 0, 8);
  gguf_bad(&b, TKC_EINVAL, "'t'", "not aligned");
  ONE_TENSOR("t", 1, ((const uint64_t[]){4}), 0, 64);
  gguf_bad(&b, TKC_EINVAL, "'t'", "past the end");
  ONE_TENSOR("t", 1, ((const uint64_t[]){4}), 0, UINT64_MAX - 31);
  gguf_bad(&b, TKC_EINVAL, "'t'", "past the end");
  ONE_TENSOR("t", 1, ((const uint64_t[]){17}), 0, 0);
  gguf_bad(&b, TKC_EINVAL, "'t'", "past the end");
  gguf_header(&b, 3, 1, 0), put_u64(&b, 0), put_u32(&b, 1), put_u64(&b, 1), put_u32(&b, 0), put_u64(&b, 0);
  gguf_bad(&b, TKC_EINVAL, "tensor name", "empty");
  gguf_header(&b, 3, 2, 0);
  tensor_info(&b, "a", 1, (const uint64_t[]){8}, 0, 0), tensor_info(&b, "b", 1, (const uint64_t[]){4}, 0, 0);
  pad_to(&b, 32), put(&b, data, sizeof data);
  gguf_bad(&b, TKC_EINVAL, "'a' and 'b' overlap", NULL);
  gguf_header(&b, 3, 2, 0);
  tensor_info(&b, "a", 1, (const uint64_t[]){4}, 0, 0), tensor_info(&b, "a", 1, (const uint64_t[]){4}, 0, 32);
  pad_to(&b, 32), put(&b, data, sizeof data);
  gguf_bad(&b, TKC_EINVAL, "'a' appears twice", NULL);
#undef ONE_TENSOR
  /* a file with metadata only, no data section; an empty tensor */
  gguf_header(&b, 3, 1, 1), kv_head(&b, "k", TKC_GGUF_BOOL), put_u8(&b, 2);
  tensor_info(&b, "e", 2, (const uint64_t[]){0, 3}, 0, 0);
  tkc_state *st = tkc_gguf_load_bytes(ctx, b.p, b.n);
  if (!st) fail_msg("%s", tkc_last_error());
  int64_t v;
  assert_int_equal(tkc_gguf_meta_int(st, "k", &v), TKC_OK);
  assert_int_equal(v, 1);
  tkc_tensor *e = tkc_state_get(st, "e");
  assert_non_null(e);
  assert_int_equal(tkc_numel(e), 0);
  assert_int_equal(tkc_dim(e, 0), 3);
  tkc_tensor_free(e);
  tkc_state_free(st);
  free(b.p);
}

static int setup(void **state) {
  (void)state;
  snprintf(tmpdir, sizeof tmpdir, "/tmp/tkc_test_io_XXXXXX");
  if (!mkdtemp(tmpdir)) return -1;
  ctx = tkc_ctx_new("INTERP");
  if (!ctx) return -1;
  static const uint8_t empty[16] = {8, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' ', ' ', ' ', ' ', ' '};
  tkc_state *st = tkc_safetensors_load_bytes(ctx, empty, sizeof empty);
  have_jansson = st != NULL;
  tkc_state_free(st);
  if (!have_jansson && (tkc_last_status() != TKC_EUNSUPPORTED || !strstr(tkc_last_error(), "without jansson"))) return -1;
  if (!have_jansson) printf("test_io: built without jansson: the safetensors tests are skipped\n");
  tkc_clear_error();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tkc_ctx_free(ctx);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_safetensors_load), cmocka_unit_test(test_safetensors_fp8), cmocka_unit_test(test_state_tensor_of_another_ctx),
      cmocka_unit_test(test_safetensors_save), cmocka_unit_test(test_safetensors_bad),
      cmocka_unit_test(test_gguf_load),        cmocka_unit_test(test_gguf_quant), cmocka_unit_test(test_state_matmul),
      cmocka_unit_test(test_gguf_bad),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
