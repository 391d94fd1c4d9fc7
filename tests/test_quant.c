/* GGML's quant formats dequantized by tensor ops (src/io/quant.c), on every device:
 *  - each type's values bit-exact against a plain C port of ggml's dequantize_row_* (ggml-quants.c),
 *    on random blocks (random bytes with finite float16 scales), for rows of one and several blocks,
 *    several rows, 3-d shapes and the odd row lengths a format allows (K-quants: 256 k, the 32-value
 *    types: 32 k), F32/F16/BF16 included, and bytes that are a view at an odd offset of a buffer;
 *  - refusals: a last dim that is not whole blocks, a wrong byte count, non-uint8 or 2-d bytes, an
 *    unknown type, NULL, bad shapes;
 *  - a quantized matvec (1 x K . K x N) and matmul (M = 8) with the dequantization fused into it,
 *    against the same product of the dequantized weights realized first (float tolerance); the fused
 *    product must be one kernel over the packed bytes (the dequantization is not a kernel of its own);
 *  - the int8 path of Q4_0 / Q4_1 / Q5_0 / Q5_1 / Q8_0 / Q4_K / Q5_K / Q6_K (weights repacked, x quantized to int8 per 32, tkc_dot4):
 *    against a C reference of the same scheme (llama.cpp's ggml_vec_dot_q4_0_q8_0 / q8_0_q8_0; Q4_K's
 *    scale and min per 32, Q6_K's scales per 16, as float16) and within the
 *    quantization's bound of the float product, rows of 1 to 3 groupings of blocks, x with 1 and 3
 *    dims, on every device; its refusals; rendered for PTX (dp4a). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "tensor_ref.h"
#include "io/quant.h"

/* ---------------------------------------------------------------- the reference (ggml's formulas) */

static float ref_h(const uint8_t *p) { return (float)ref_half_value((uint16_t)(p[0] | p[1] << 8)); }

/* ggml's get_scale_min_k4 */
static void ref_scale_min_k4(int j, const uint8_t *q, uint8_t *d, uint8_t *m) {
  if (j < 4) {
    *d = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *d = (uint8_t)((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = (uint8_t)((q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4));
  }
}

/* one block x of type into y (block_elems floats) */
static void ref_block(int type, const uint8_t *x, float *y) {
  switch (type) {
  case TKC_GGML_F32: memcpy(y, x, 4); break;
  case TKC_GGML_F16: y[0] = ref_h(x); break;
  case TKC_GGML_BF16: {
    uint32_t u = (uint32_t)(x[0] | x[1] << 8) << 16;
    memcpy(y, &u, 4);
    break;
  }
  case TKC_GGML_Q8_0: {
    float d = ref_h(x);
    for (int j = 0; j < 32; j++) y[j] = (int8_t)x[2 + j] * d;
    break;
  }
  case TKC_GGML_Q4_0: {
    float d = ref_h(x);
    for (int j = 0; j < 16; j++) {
      int x0 = (x[2 + j] & 0x0F) - 8, x1 = (x[2 + j] >> 4) - 8;
      y[j] = x0 * d, y[j + 16] = x1 * d;
    }
    break;
  }
  case TKC_GGML_Q4_1: {
    float d = ref_h(x), m = ref_h(x + 2);
    for (int j = 0; j < 16; j++) {
      int x0 = x[4 + j] & 0x0F, x1 = x[4 + j] >> 4;
      y[j] = x0 * d + m, y[j + 16] = x1 * d + m;
    }
    break;
  }
  case TKC_GGML_Q5_0:
  case TKC_GGML_Q5_1: {
    int q1 = type == TKC_GGML_Q5_1;
    float d = ref_h(x), m = q1 ? ref_h(x + 2) : 0;
    const uint8_t *hp = x + (q1 ? 4 : 2), *qs = hp + 4;
    uint32_t qh = (uint32_t)hp[0] | (uint32_t)hp[1] << 8 | (uint32_t)hp[2] << 16 | (uint32_t)hp[3] << 24;
    for (int j = 0; j < 16; j++) {
      uint8_t xh0 = (uint8_t)(((qh >> j) << 4) & 0x10), xh1 = (uint8_t)((qh >> (j + 12)) & 0x10);
      int x0 = (qs[j] & 0x0F) | xh0, x1 = (qs[j] >> 4) | xh1;
      if (q1) y[j] = x0 * d + m, y[j + 16] = x1 * d + m;
      else y[j] = (x0 - 16) * d, y[j + 16] = (x1 - 16) * d;
    }
    break;
  }
  case TKC_GGML_Q4_K:
  case TKC_GGML_Q5_K: {
    int five = type == TKC_GGML_Q5_K;
    float d = ref_h(x), dmin = ref_h(x + 2);
    const uint8_t *scales = x + 4, *qh = x + 16, *ql = x + (five ? 48 : 16);
    int is = 0;
    uint8_t sc, m, u1 = 1, u2 = 2;
    for (int j = 0; j < 256; j += 64) {
      ref_scale_min_k4(is + 0, scales, &sc, &m);
      float d1 = d * sc, m1 = dmin * m;
      ref_scale_min_k4(is + 1, scales, &sc, &m);
      float d2 = d * sc, m2 = dmin * m;
      for (int l = 0; l < 32; l++) *y++ = d1 * ((ql[l] & 0xF) + (five && (qh[l] & u1) ? 16 : 0)) - m1;
      for (int l = 0; l < 32; l++) *y++ = d2 * ((ql[l] >> 4) + (five && (qh[l] & u2) ? 16 : 0)) - m2;
      ql += 32, is += 2;
      u1 = (uint8_t)(u1 << 2), u2 = (uint8_t)(u2 << 2);
    }
    break;
  }
  case TKC_GGML_Q6_K: {
    const uint8_t *ql = x, *qh = x + 128;
    const int8_t *sc = (const int8_t *)(x + 192);
    float d = ref_h(x + 208);
    for (int n = 0; n < 256; n += 128) {
      for (int l = 0; l < 32; l++) {
        int is = l / 16;
        int8_t q1 = (int8_t)((ql[l + 0] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        int8_t q2 = (int8_t)((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        int8_t q3 = (int8_t)((ql[l + 0] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        int8_t q4 = (int8_t)((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l + 0] = d * sc[is + 0] * q1;
        y[l + 32] = d * sc[is + 2] * q2;
        y[l + 64] = d * sc[is + 4] * q3;
        y[l + 96] = d * sc[is + 6] * q4;
      }
      y += 128, ql += 64, qh += 32, sc += 8;
    }
    break;
  }
  default: fail_msg("no reference for type %d", type);
  }
}

/* ---------------------------------------------------------------- random blocks */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void) { /* xorshift64* */
  rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
  return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32);
}

/* a random finite float16; moderate: magnitude in [2^-9, 2^-4) (a weight scale: keeps matmul sums
 * near 1), else any finite pattern (subnormals, zeros, up to 65504) */
static uint16_t rnd_half(int moderate) {
  uint16_t h = (uint16_t)rnd();
  if (moderate) return (uint16_t)((h & 0x83ff) | (uint16_t)((6 + rnd() % 5) << 10));
  if (((h >> 10) & 31) == 31) h ^= 1 << 14; /* inf / NaN -> a finite exponent */
  return h;
}
static void put_half(uint8_t *p, uint16_t h) { p[0] = (uint8_t)h, p[1] = (uint8_t)(h >> 8); }

/* nblocks random blocks of type: random bytes, then every float16 field set to a finite half (the
 * plain float types: finite values, so that no NaN payload is in question) */
static void random_blocks(int type, uint8_t *x, int64_t nblocks, int moderate) {
  const tkc_quant_format *f = tkc_quant_format_of(type);
  for (int64_t i = 0; i < nblocks * f->block_bytes; i++) x[i] = (uint8_t)rnd();
  for (int64_t i = 0; i < nblocks; i++) {
    uint8_t *b = x + i * f->block_bytes;
    switch (type) {
    case TKC_GGML_F32: {
      float v = moderate ? (float)((int)(rnd() % 2001) - 1000) / 1000.0f : 0;
      if (moderate) memcpy(b, &v, 4);
      else if (((b[3] & 0x7f) == 0x7f) && (b[2] & 0x80)) b[3] ^= 0x40; /* exponent 255 -> finite */
      break;
    }
    case TKC_GGML_F16: put_half(b, rnd_half(moderate)); break;
    case TKC_GGML_BF16:
      if (moderate) put_half(b, (uint16_t)(0x3c00 + rnd() % 0x300) | (uint16_t)(rnd() & 0x8000));
      else if (((b[1] & 0x7f) == 0x7f) && (b[0] & 0x80)) b[1] ^= 0x40;
      break;
    case TKC_GGML_Q4_1: case TKC_GGML_Q5_1: case TKC_GGML_Q4_K: case TKC_GGML_Q5_K:
      put_half(b, rnd_half(moderate)), put_half(b + 2, rnd_half(moderate));
      break;
    case TKC_GGML_Q6_K: put_half(b + 208, rnd_half(moderate)); break;
    default: put_half(b, rnd_half(moderate)); break; /* Q4_0, Q5_0, Q8_0: d first */
    }
  }
}

static void ref_dequantize(int type, const uint8_t *x, int64_t numel, float *y) {
  const tkc_quant_format *f = tkc_quant_format_of(type);
  for (int64_t i = 0; i < numel / f->block_elems; i++) ref_block(type, x + i * f->block_bytes, y + i * f->block_elems);
}

static const int all_types[] = {TKC_GGML_F32,  TKC_GGML_F16,  TKC_GGML_BF16, TKC_GGML_Q8_0, TKC_GGML_Q4_0, TKC_GGML_Q4_1,
                                TKC_GGML_Q5_0, TKC_GGML_Q5_1, TKC_GGML_Q4_K, TKC_GGML_Q5_K, TKC_GGML_Q6_K};
#define NTYPES ((int)(sizeof all_types / sizeof all_types[0]))

static int64_t numel_of(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  return n;
}

/* the packed bytes of a (ndim, shape) tensor of type as a realized uint8 tensor of ctx; data filled */
static tkc_tensor *packed_tensor(tkc_ctx *ctx, int type, int ndim, const int64_t *shape, int moderate, uint8_t **data) {
  const tkc_quant_format *f = tkc_quant_format_of(type);
  int64_t nblocks = numel_of(ndim, shape) / f->block_elems, nbytes = nblocks * f->block_bytes;
  *data = malloc((size_t)nbytes + 1);
  random_blocks(type, *data, nblocks, moderate);
  return tkc_tensor_new(ctx, TKC_UINT8, 1, &nbytes, *data);
}

/* ---------------------------------------------------------------- bit-exact values */

/* offset > 0: the bytes are a view at that (unaligned) offset into a larger buffer, as a model
 * file's tensors are views of the file's data */
static void check_bit_exact(tkc_ctx *ctx, const char *dev, int type, int ndim, const int64_t *shape, int moderate, int64_t offset) {
  const tkc_quant_format *f = tkc_quant_format_of(type);
  int64_t n = numel_of(ndim, shape);
  uint8_t *data;
  tkc_tensor *packed = packed_tensor(ctx, type, ndim, shape, moderate, &data);
  if (offset) {
    int64_t nbytes = tkc_numel(packed), total = offset + nbytes + 3;
    uint8_t *file = malloc((size_t)total);
    for (int64_t i = 0; i < total; i++) file[i] = (uint8_t)rnd();
    memcpy(file + offset, data, (size_t)nbytes);
    tkc_tensor *whole = tkc_tensor_new(ctx, TKC_UINT8, 1, &total, file);
    tkc_tensor_free(packed);
    packed = tkc_shrink(whole, (int64_t[]){offset, offset + nbytes});
    tkc_tensor_free(whole);
    free(file);
  }
  float *want = malloc((size_t)n * 4 + 4), *got = malloc((size_t)n * 4 + 4);
  ref_dequantize(type, data, n, want);
  tkc_tensor *w = tkc_quant_dequantize(packed, type, ndim, shape);
  TR_EXPECT(w, "%s %s: dequantize", dev, f->name);
  if (w) {
    TR_EXPECT(tkc_dtype_of(w) == TKC_FLOAT32 && tkc_ndim(w) == ndim, "%s %s: float32 of %d dims", dev, f->name, ndim);
    for (int i = 0; i < ndim && tkc_ndim(w) == ndim; i++) TR_EXPECT(tkc_dim(w, i) == shape[i], "%s %s: dim %d", dev, f->name, i);
    tkc_status s = tkc_copy_out(w, got, (size_t)n * 4);
    TR_EXPECT(s == TKC_OK, "%s %s: copy_out", dev, f->name);
    int bad = 0;
    for (int64_t i = 0; s == TKC_OK && i < n && bad < 3; i++)
      if (memcmp(&got[i], &want[i], 4)) {
        uint32_t g, e;
        memcpy(&g, &got[i], 4), memcpy(&e, &want[i], 4);
        tr_problem("%s %s numel %lld: value %lld is %.9g (0x%08x), ggml's formula gives %.9g (0x%08x)", dev, f->name, (long long)n,
                   (long long)i, (double)got[i], g, (double)want[i], e);
        bad++;
      }
  }
  tkc_tensor_free(w);
  tkc_tensor_free(packed);
  free(data), free(want), free(got);
}

static void test_bit_exact(void **state) {
  (void)state;
  tr_begin();
  FOR_EACH_DEVICE(dev, ctx) {
    for (int t = 0; t < NTYPES; t++) {
      const tkc_quant_format *f = tkc_quant_format_of(all_types[t]);
      int64_t be = f->block_elems == 1 ? 32 : f->block_elems; /* the float types: rows of 32 k too */
      /* one block; a row of several blocks; several rows of an odd number of blocks; 3-d */
      int64_t s1[] = {be}, s2[] = {5 * be}, s3[] = {3, 7 * be}, s4[] = {2, 3, 2 * be};
      if (f->block_elems == 1) s3[1] = 7 * 32 + 5; /* one-value blocks: any row length */
      check_bit_exact(ctx, dev, all_types[t], 1, s1, 0, 0);
      check_bit_exact(ctx, dev, all_types[t], 1, s2, 0, 0);
      check_bit_exact(ctx, dev, all_types[t], 2, s3, 0, 0);
      check_bit_exact(ctx, dev, all_types[t], 3, s4, 1, 0);
      check_bit_exact(ctx, dev, all_types[t], 2, s3, 0, 5); /* a view at an odd offset */
    }
  }
  TR_END();
}

/* ---------------------------------------------------------------- refusals */

static void expect_refused(tkc_tensor *packed, int type, int ndim, const int64_t *shape, tkc_status want, const char *needle, const char *what) {
  tkc_clear_error();
  tkc_tensor *w = tkc_quant_dequantize(packed, type, ndim, shape);
  TR_EXPECT(!w, "%s: refused", what);
  TR_EXPECT(tkc_last_status() == want, "%s: status %s, got %s (%s)", what, tkc_status_str(want), tkc_status_str(tkc_last_status()),
            tkc_last_error());
  TR_EXPECT(strstr(tkc_last_error(), needle), "%s: the message names '%s': %s", what, needle, tkc_last_error());
  tkc_tensor_free(w);
}

static void test_refusals(void **state) {
  (void)state;
  tr_begin();
  tkc_ctx *ctx = tkc_ctx_new("CPU");
  assert_non_null(ctx);
  int64_t n18 = 18 * 4, n144 = 144;
  tkc_tensor *q40 = tkc_tensor_new(ctx, TKC_UINT8, 1, &n18, NULL);   /* 4 Q4_0 blocks */
  tkc_tensor *q4k = tkc_tensor_new(ctx, TKC_UINT8, 1, &n144, NULL);  /* 1 Q4_K block */
  assert_non_null(q40), assert_non_null(q4k);

  expect_refused(q40, TKC_GGML_Q4_0, 2, (int64_t[]){8, 16}, TKC_ESHAPE, "not a multiple of the block of 32", "row of half a block");
  expect_refused(q40, TKC_GGML_Q4_0, 2, (int64_t[]){2, 48}, TKC_ESHAPE, "not a multiple", "a block across a row end");
  expect_refused(q4k, TKC_GGML_Q4_K, 2, (int64_t[]){2, 128}, TKC_ESHAPE, "block of 256", "K-quant rows of 128");
  expect_refused(q40, TKC_GGML_Q4_0, 1, (int64_t[]){96}, TKC_ESHAPE, "needs 54", "too few values for the bytes");
  expect_refused(q40, TKC_GGML_Q4_0, 2, (int64_t[]){5, 32}, TKC_ESHAPE, "needs 90", "too many values for the bytes");
  expect_refused(q4k, TKC_GGML_Q8_0, 1, (int64_t[]){128}, TKC_ESHAPE, "144 packed bytes", "another type's size");
  expect_refused(q40, TKC_GGML_Q4_0, 0, (int64_t[]){128}, TKC_ESHAPE, "0 dims", "0-d");
  expect_refused(q40, TKC_GGML_Q4_0, 1, NULL, TKC_ESHAPE, "dims", "NULL shape");
  expect_refused(q40, TKC_GGML_Q4_0, 2, (int64_t[]){-2, -64}, TKC_ESHAPE, "negative", "negative dims");
  expect_refused(q40, 10 /* Q2_K */, 1, (int64_t[]){256}, TKC_EUNSUPPORTED, "GGML type 10", "a type without a row");
  expect_refused(q40, -1, 1, (int64_t[]){128}, TKC_EUNSUPPORTED, "GGML type -1", "a negative type");
  int64_t v = tkc_dim_var(ctx, "rows", 1, 8);
  expect_refused(q40, TKC_GGML_Q4_0, 2, (int64_t[]){v, 32}, TKC_ESHAPE, "variable", "a variable dim");

  tkc_tensor *i8 = tkc_tensor_new(ctx, TKC_INT8, 1, &n18, NULL), *f = tkc_tensor_new(ctx, TKC_FLOAT32, 1, &n18, NULL);
  expect_refused(i8, TKC_GGML_Q4_0, 1, (int64_t[]){128}, TKC_EDTYPE, "int8 (uint8 needed)", "int8 bytes");
  expect_refused(f, TKC_GGML_Q4_0, 1, (int64_t[]){128}, TKC_EDTYPE, "float32", "float32 bytes");
  tkc_tensor *two = tkc_reshape(q40, 2, (int64_t[]){4, 18});
  expect_refused(two, TKC_GGML_Q4_0, 1, (int64_t[]){128}, TKC_ESHAPE, "2-d", "2-d bytes");

  tkc_clear_error();
  TR_EXPECT(!tkc_quant_dequantize(NULL, TKC_GGML_Q4_0, 1, (int64_t[]){128}), "NULL packed");
  TR_EXPECT(tkc_last_status() == TKC_EINVAL && strstr(tkc_last_error(), "NULL"), "NULL packed: TKC_EINVAL, got %s", tkc_last_error());
  tkc_tensor *dead = tkc_tensor_new(ctx, TKC_UINT8, 1, &n18, NULL);
  tkc_tensor_free(dead);
  expect_refused(dead, TKC_GGML_Q4_0, 1, (int64_t[]){128}, TKC_EINVAL, "freed", "a freed tensor");

  /* the byte count a reader checks a file against */
  TR_EXPECT(tkc_quant_nbytes(TKC_GGML_Q6_K, 2, (int64_t[]){3, 512}) == 6 * 210, "Q6_K bytes");
  TR_EXPECT(tkc_quant_nbytes(TKC_GGML_BF16, 1, (int64_t[]){7}) == 14, "BF16 bytes");
  TR_EXPECT(tkc_quant_nbytes(TKC_GGML_Q8_0, 3, (int64_t[]){1LL << 30, 1LL << 30, 1LL << 10}) == -1 && tkc_last_status() == TKC_ESHAPE,
            "an absurd element count is refused, not overflowed");
  /* an empty tensor: no blocks, no bytes */
  int64_t zero = 0;
  tkc_tensor *none = tkc_tensor_new(ctx, TKC_UINT8, 1, &zero, NULL);
  tkc_tensor *e = tkc_quant_dequantize(none, TKC_GGML_Q4_K, 2, (int64_t[]){0, 512});
  TR_EXPECT(e && tkc_dtype_of(e) == TKC_FLOAT32 && tkc_dim(e, 0) == 0 && tkc_dim(e, 1) == 512, "empty Q4_K (0, 512)");
  /* the ctx is usable after the refusals */
  tkc_tensor *ok = tkc_quant_dequantize(q40, TKC_GGML_Q4_0, 2, (int64_t[]){2, 64});
  float out[128];
  TR_EXPECT(ok && tkc_copy_out(ok, out, sizeof out) == TKC_OK && out[0] == -0.0f, "zero bytes dequantize to (0 - 8) * 0");
  tkc_ctx_free(ctx);
  TR_END();
}

/* ---------------------------------------------------------------- fused matvec / matmul */

/* y = x W^T with W (n, k) dequantized from type, fused, against the same with W realized first */
static void check_matmul(tkc_ctx *ctx, const char *dev, int type, int64_t m, int64_t n, int64_t k) {
  const tkc_quant_format *f = tkc_quant_format_of(type);
  int64_t wshape[] = {n, k}, xshape[] = {m, k};
  uint8_t *data;
  tkc_tensor *packed = packed_tensor(ctx, type, 2, wshape, 1, &data);
  float *xv = malloc((size_t)(m * k) * 4), *wv = malloc((size_t)(n * k) * 4);
  float *fused = malloc((size_t)(m * n) * 4), *unfused = malloc((size_t)(m * n) * 4);
  for (int64_t i = 0; i < m * k; i++) xv[i] = (float)((int)(rnd() % 2001) - 1000) / 1000.0f;
  ref_dequantize(type, data, n * k, wv);
  tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 2, xshape, xv);
  tkc_tensor *w = tkc_quant_dequantize(packed, type, 2, wshape);
  tkc_tensor *wt = tkc_transpose(w, 0, 1), *y = tkc_matmul(x, wt);
  TR_EXPECT(y, "%s %s m=%lld: build", dev, f->name, (long long)m);
  int nk = tkc_kernel_count(y);
  TR_EXPECT(nk == 1, "%s %s m=%lld: the fused product is %d kernels (1 expected: dequantization fused into the matmul)", dev, f->name,
            (long long)m, nk);
  TR_EXPECT(tkc_copy_out(y, fused, (size_t)(m * n) * 4) == TKC_OK, "%s %s: fused copy_out", dev, f->name);
  /* dequantize first: W realized on its own, then the product of the float weights */
  tkc_tensor *w2 = tkc_quant_dequantize(packed, type, 2, wshape);
  TR_EXPECT(tkc_realize(w2) == TKC_OK, "%s %s: realize the dequantized weights", dev, f->name);
  tkc_tensor *wt2 = tkc_transpose(w2, 0, 1), *y2 = tkc_matmul(x, wt2);
  TR_EXPECT(tkc_copy_out(y2, unfused, (size_t)(m * n) * 4) == TKC_OK, "%s %s: unfused copy_out", dev, f->name);
  int bad = 0;
  for (int64_t r = 0; r < m; r++)
    for (int64_t c = 0; c < n && bad < 3; c++) {
      double mag = 0, exact = 0;
      for (int64_t i = 0; i < k; i++) mag += fabs((double)xv[r * k + i] * wv[c * k + i]), exact += (double)xv[r * k + i] * wv[c * k + i];
      double tol = 1e-5 * mag + 1e-6, a = fused[r * n + c], b = unfused[r * n + c];
      if (!(fabs(a - b) <= tol && fabs(a - exact) <= tol)) {
        tr_problem("%s %s (%lldx%lld . %lldx%lld) [%lld,%lld]: fused %.9g, dequantized first %.9g, float64 %.9g (tolerance %.3g)", dev,
                   f->name, (long long)m, (long long)k, (long long)k, (long long)n, (long long)r, (long long)c, a, b, exact, tol);
        bad++;
      }
    }
  tkc_tensor *ts[] = {packed, x, w, wt, y, w2, wt2, y2};
  for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) tkc_tensor_free(ts[i]);
  free(data), free(xv), free(wv), free(fused), free(unfused);
}

static void test_fused_matmul(void **state) {
  (void)state;
  tr_begin();
  FOR_EACH_DEVICE(dev, ctx) {
    int interp = !strcmp(dev, "INTERP"); /* an interpreter: smaller products */
    for (int t = 3; t < NTYPES; t++) { /* the quant types */
      int64_t k = 512, n = interp ? 16 : 64;
      check_matmul(ctx, dev, all_types[t], 1, n, k);
      check_matmul(ctx, dev, all_types[t], 8, n, k);
    }
  }
  TR_END();
}

/* ---------------------------------------------------------------- the int8 path */

/* the reference: x quantized per 32 as tkc_quant_int8_input does (float32 ops: d = amax / 127, q =
 * round-half-even(x * (1 / d))), integer block dots with the weights' quants, scaled per block */
static void ref_int8_matmul(int type, const uint8_t *wq, const float *x, int64_t m, int64_t n, int64_t k, double *y, double *bound) {
  const tkc_quant_format *f = tkc_quant_format_of(type);
  int64_t nb = k / 32;
  float *wv = malloc((size_t)(n * k) * 4);
  ref_dequantize(type, wq, n * k, wv);
  for (int64_t r = 0; r < m; r++)
    for (int64_t c = 0; c < n; c++) {
      double acc = 0, err = 0;
      for (int64_t b = 0; b < nb; b++) {
        const float *xb = x + r * k + b * 32;
        float amax = 0;
        for (int i = 0; i < 32; i++) amax = fabsf(xb[i]) > amax ? fabsf(xb[i]) : amax;
        float d = amax / 127.0f, id = amax > 0 ? 1.0f / d : 0.0f;
        /* the block's quants, scales (value i = scale[i] * q[i] - min) */
        int32_t wq32[32];
        float scale[32], minv = 0;
        if (type == TKC_GGML_Q4_K || type == TKC_GGML_Q5_K) {
          const uint8_t *p = wq + (c * nb + b) / 8 * f->block_bytes, *qs = p + (type == TKC_GGML_Q5_K ? 48 : 16);
          int j = (int)(b % 8);
          uint8_t sc, mn;
          ref_scale_min_k4(j, p + 4, &sc, &mn);
          /* as the int8 path keeps them: float16 (round to nearest even) */
          float s16 = (float)ref_half_value(tkc_f32_to_f16(ref_h(p) * sc));
          minv = (float)ref_half_value(tkc_f32_to_f16(ref_h(p + 2) * mn));
          for (int i = 0; i < 32; i++) {
            wq32[i] = j % 2 ? qs[32 * (j / 2) + i] >> 4 : qs[32 * (j / 2) + i] & 15, scale[i] = s16;
            if (type == TKC_GGML_Q5_K) wq32[i] |= (p[16 + i] >> j & 1) << 4; /* bit j of qh[i] */
          }
        } else if (type == TKC_GGML_Q4_1 || type == TKC_GGML_Q5_0 || type == TKC_GGML_Q5_1) { /* d, [m,] [qh[4],] qs[16] */
          const uint8_t *blk = wq + (c * nb + b) * f->block_bytes;
          int has_m = type != TKC_GGML_Q5_0, has_h = type != TKC_GGML_Q4_1, at = 2 + 2 * has_m;
          uint32_t h = has_h ? (uint32_t)blk[at] | (uint32_t)blk[at + 1] << 8 | (uint32_t)blk[at + 2] << 16 | (uint32_t)blk[at + 3] << 24 : 0;
          const uint8_t *qs = blk + at + 4 * has_h;
          minv = has_m ? -ref_h(blk + 2) : 0;
          for (int i = 0; i < 32; i++)
            wq32[i] = (int32_t)((i < 16 ? qs[i] & 15 : qs[i - 16] >> 4) | (h >> i & 1) << 4) - (type == TKC_GGML_Q5_0 ? 16 : 0), scale[i] = ref_h(blk);
        } else if (type == TKC_GGML_Q6_K) { /* ggml's dequantize_row_q6_K's loop over the super-block */
          const uint8_t *p = wq + (c * nb + b) / 8 * f->block_bytes, *ql = p, *qh = p + 128;
          int j = (int)(b % 8), q6[256];
          for (int h = 0; h < 2; h++)
            for (int l = 0; l < 32; l++) {
              q6[128 * h + l] = (ql[64 * h + l] & 0xF) | ((qh[32 * h + l] >> 0) & 3) << 4;
              q6[128 * h + l + 32] = (ql[64 * h + l + 32] & 0xF) | ((qh[32 * h + l] >> 2) & 3) << 4;
              q6[128 * h + l + 64] = (ql[64 * h + l] >> 4) | ((qh[32 * h + l] >> 4) & 3) << 4;
              q6[128 * h + l + 96] = (ql[64 * h + l + 32] >> 4) | ((qh[32 * h + l] >> 6) & 3) << 4;
            }
          for (int i = 0; i < 32; i++)
            wq32[i] = q6[32 * j + i] - 32, scale[i] = (float)ref_half_value(tkc_f32_to_f16(ref_h(p + 208) * (float)(int8_t)p[192 + 2 * j + i / 16]));
        } else {
          const uint8_t *blk = wq + (c * nb + b) * f->block_bytes;
          for (int i = 0; i < 32; i++)
            wq32[i] = type == TKC_GGML_Q8_0 ? (int8_t)blk[2 + i] : (int32_t)(i < 16 ? blk[2 + i] & 15 : blk[2 + i - 16] >> 4) - 8, scale[i] = ref_h(blk);
        }
        int32_t qsum = 0;
        double wabs = 0, xabs = 0, dot = 0;
        for (int i = 0; i < 32; i++) {
          int32_t q = (int32_t)nearbyintf(xb[i] * id);
          dot += (double)q * wq32[i] * scale[i], qsum += q;
          wabs += fabs((double)wv[c * k + b * 32 + i]);
          xabs += fabs((double)xb[i]) * (fabs((double)scale[i]) * abs(wq32[i]) + fabs((double)minv));
        }
        acc += dot * d - (double)qsum * d * minv;
        err += xabs * 0x1p-11; /* a K-quant's scale and min rounded to float16 */
        err += wabs * d * 0.5; /* each x differs from its quantized value by at most d / 2 */
      }
      y[r * n + c] = acc, bound[r * n + c] = err;
    }
  free(wv);
}

static void check_int8(tkc_ctx *ctx, const char *dev, int type, int xnd, int64_t m, int64_t n, int64_t k) {
  const tkc_quant_format *f = tkc_quant_format_of(type);
  int64_t wshape[] = {n, k};
  uint8_t *data;
  tkc_tensor *packed = packed_tensor(ctx, type, 2, wshape, 1, &data), *w[2];
  float *xv = malloc((size_t)(m * k) * 4), *got = malloc((size_t)(m * n) * 4), *fl = malloc((size_t)(m * n) * 4);
  double *want = malloc((size_t)(m * n) * 8), *bound = malloc((size_t)(m * n) * 8);
  for (int64_t i = 0; i < m * k; i++) xv[i] = (float)((int)(rnd() % 2001) - 1000) / 1000.0f;
  if (m * k > 40) xv[40] = 0.0f, memset(xv + 32, 0, 32 * 4); /* an all-zero block of x: d = 0 */
  ref_int8_matmul(type, data, xv, m, n, k, want, bound);
  int64_t x3[] = {m, 1, k};
  tkc_tensor *x = xnd == 3 ? tkc_tensor_new(ctx, TKC_FLOAT32, 3, x3, xv) : tkc_tensor_new(ctx, TKC_FLOAT32, 2, (int64_t[]){m, k}, xv);
  TR_EXPECT(tkc_quant_int8_repack(packed, type, n, k, w) == TKC_OK, "%s %s: repack: %s", dev, f->name, tkc_last_error());
  tkc_quant_int8_x xq;
  TR_EXPECT(tkc_quant_int8_input(x, k, &xq) == TKC_OK, "%s %s: quantize x: %s", dev, f->name, tkc_last_error());
  tkc_tensor *y = tkc_quant_int8_matmul(&xq, w, type);
  TR_EXPECT(y && tkc_numel(y) == m * n && tkc_ndim(y) == xnd, "%s %s (%lld, %lld . %lld): the product: %s", dev, f->name, (long long)m, (long long)k,
            (long long)n, tkc_last_error());
  TR_EXPECT(!y || tkc_copy_out(y, got, (size_t)(m * n) * 4) == TKC_OK, "%s %s: copy_out: %s", dev, f->name, tkc_last_error());
  /* the float product of the dequantized weights */
  tkc_tensor *wf = tkc_quant_dequantize(packed, type, 2, wshape), *wt = tkc_transpose(wf, 0, 1), *x2 = tkc_reshape(x, 2, (int64_t[]){m, k});
  tkc_tensor *yf = tkc_matmul(x2, wt);
  TR_EXPECT(tkc_copy_out(yf, fl, (size_t)(m * n) * 4) == TKC_OK, "%s %s: float product", dev, f->name);
  int bad = 0;
  for (int64_t i = 0; y && i < m * n && bad < 3; i++) {
    double mag = 0;
    for (int64_t j = 0; j < k; j++) mag += fabs((double)xv[(i / n) * k + j]);
    double tol = 1e-5 * (bound[i] * 254 + 1e-3), near = bound[i] * 1.001 + 1e-5 * mag;
    if (!(fabs(got[i] - want[i]) <= tol) || !(fabs(got[i] - fl[i]) <= near)) {
      tr_problem("%s %s (%lld x %lld . %lld x %lld, x %d-d) [%lld]: int8 %.9g, reference %.9g (tolerance %.3g), float product %.9g (bound %.3g)", dev,
                 f->name, (long long)m, (long long)k, (long long)k, (long long)n, xnd, (long long)i, got[i], want[i], tol, fl[i], near);
      bad++;
    }
  }
  tkc_tensor *ts[] = {packed, x, w[0], w[1], y, wf, wt, x2, yf};
  for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) tkc_tensor_free(ts[i]);
  tkc_quant_int8_x_free(&xq);
  free(data), free(xv), free(got), free(fl), free(want), free(bound);
}

static void test_int8_matmul(void **state) {
  (void)state;
  tr_begin();
  FOR_EACH_DEVICE(dev, ctx) {
    int interp = !strcmp(dev, "INTERP");
    const int types[8] = {TKC_GGML_Q4_0, TKC_GGML_Q4_1, TKC_GGML_Q5_0, TKC_GGML_Q5_1, TKC_GGML_Q8_0, TKC_GGML_Q4_K, TKC_GGML_Q5_K, TKC_GGML_Q6_K};
    for (int t = 0; t < 8; t++) {
      int kq = tkc_quant_format_of(types[t])->block_elems == 256;                           /* rows of whole 256-value super-blocks */
      check_int8(ctx, dev, types[t], 2, 1, interp ? 8 : 64, 512);   /* 16 blocks a row: groups of 16 */
      check_int8(ctx, dev, types[t], 2, 2, 16, 768);                /* 24: groups of 8 */
      check_int8(ctx, dev, types[t], 3, 3, 8, kq ? 256 : 96);       /* 8: groups of 8 / 3: of 1; x (3, 1, k) */
    }
  }
  TR_END();
}

static void test_int8_refusals(void **state) {
  (void)state;
  tkc_ctx *ctx = tkc_ctx_new("CPU");
  assert_non_null(ctx);
  uint8_t *data, *data16;
  int64_t shape[] = {4, 64};
  tkc_tensor *packed = packed_tensor(ctx, TKC_GGML_Q4_0, 2, shape, 1, &data), *w[2] = {NULL, NULL};
  tkc_tensor *f16w = packed_tensor(ctx, TKC_GGML_F16, 2, shape, 1, &data16);
  free(data), free(data16);
  assert_int_equal(tkc_quant_has_int8(TKC_GGML_F16), 0);
  assert_int_equal(tkc_quant_int8_repack(f16w, TKC_GGML_F16, 4, 64, w), TKC_EUNSUPPORTED);
  assert_null(w[0]);
  assert_int_equal(tkc_quant_int8_repack(packed, TKC_GGML_Q4_0, 4, 96, w), TKC_ESHAPE); /* the bytes of another shape */
  assert_int_equal(tkc_quant_int8_repack(packed, TKC_GGML_Q4_0, 4, 48, w), TKC_ESHAPE); /* not whole blocks */
  tkc_clear_error(); /* a NULL keeps an earlier error (a failed op's), else it is TKC_EINVAL */
  assert_int_equal(tkc_quant_int8_repack(NULL, TKC_GGML_Q4_0, 4, 64, w), TKC_EINVAL);
  assert_int_equal(tkc_quant_int8_repack(packed, TKC_GGML_Q4_0, 4, 64, w), TKC_OK);
  tkc_quant_int8_x xq;
  tkc_tensor *xi = tkc_tensor_new(ctx, TKC_INT32, 2, (int64_t[]){1, 64}, NULL), *x96 = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (int64_t[]){1, 96}, NULL);
  assert_int_equal(tkc_quant_int8_input(xi, 64, &xq), TKC_EDTYPE);
  assert_null(xq.words);
  assert_int_equal(tkc_quant_int8_input(x96, 64, &xq), TKC_ESHAPE);
  tkc_clear_error();
  assert_int_equal(tkc_quant_int8_input(NULL, 64, &xq), TKC_EINVAL);
  assert_int_equal(tkc_quant_int8_input(x96, 96, &xq), TKC_OK); /* x of 96 columns against a weight of 64 */
  assert_null(tkc_quant_int8_matmul(&xq, w, TKC_GGML_Q4_0));
  assert_int_equal(tkc_last_status(), TKC_ESHAPE);
  tkc_quant_int8_x_free(&xq);
  tkc_tensor *ts[] = {packed, f16w, w[0], w[1], xi, x96};
  for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) tkc_tensor_free(ts[i]);
  tkc_ctx_free(ctx);
}

/* CUDA has no GPU here: the dequantizers and the fused products are at least lowered and rendered for
 * PTX, each as one kernel (a cat or an arange joined to the rows by a reshape did not lower for PTX) */
static void test_ptx_render(void **state) {
  (void)state;
  tr_begin();
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  assert_non_null(ctx);
  for (int t = 0; t < NTYPES; t++) {
    const tkc_quant_format *f = tkc_quant_format_of(all_types[t]);
    int64_t wshape[] = {64, 512}, nbytes = tkc_quant_nbytes(all_types[t], 2, wshape);
    tkc_tensor *packed = tkc_tensor_new(ctx, TKC_UINT8, 1, &nbytes, NULL);
    for (int64_t m = 0; m <= 8; m += m ? 7 : 1) { /* 0: the dequantized weights alone, then 1 x K and 8 x K products */
      tkc_scope_begin(ctx);
      tkc_tensor *w = tkc_quant_dequantize(packed, all_types[t], 2, wshape), *y = w;
      if (m) y = tkc_matmul(tkc_tensor_new(ctx, TKC_FLOAT32, 2, (int64_t[]){m, 512}, NULL), tkc_transpose(w, 0, 1));
      char *src = tkc_kernels_source(y, "PTX");
      TR_EXPECT(src, "%s m=%lld: rendered for PTX", f->name, (long long)m);
      int entries = 0;
      for (const char *e = src ? strstr(src, ".entry ") : NULL; e; e = strstr(e + 1, ".entry ")) entries++;
      TR_EXPECT(!src || entries == 1, "%s m=%lld: %d PTX kernels (1 expected)", f->name, (long long)m, entries);
      tkc_free(src);
      tkc_scope_end(ctx);
    }
    tkc_tensor_free(packed);
  }
  /* the int8 path: its product is one kernel of dp4a */
  for (int t = 0; t < 2; t++) {
    int type = t ? TKC_GGML_Q8_0 : TKC_GGML_Q4_0;
    uint8_t *data;
    int64_t wshape[] = {64, 512};
    tkc_tensor *packed = packed_tensor(ctx, type, 2, wshape, 1, &data), *w[2];
    free(data);
    TR_EXPECT(tkc_quant_int8_repack(packed, type, 64, 512, w) == TKC_OK, "int8 repack: %s", tkc_last_error());
    tkc_quant_int8_x xq;
    tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (int64_t[]){1, 512}, NULL);
    TR_EXPECT(tkc_quant_int8_input(x, 512, &xq) == TKC_OK, "int8 input: %s", tkc_last_error());
    tkc_tensor *y = tkc_quant_int8_matmul(&xq, w, type), *wr = tkc_contiguous(xq.words);
    char *src = y ? tkc_kernels_source(y, "PTX") : NULL;
    TR_EXPECT(src && strstr(src, "dp4a.u32.s32"), "%s int8 product for PTX: %s", tkc_quant_format_of(type)->name, src ? "no dp4a" : tkc_last_error());
    tkc_free(src);
    tkc_tensor *ts[] = {packed, w[0], w[1], x, y, wr};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) tkc_tensor_free(ts[i]);
    tkc_quant_int8_x_free(&xq);
  }
  tkc_ctx_free(ctx);
  TR_END();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_refusals),
      cmocka_unit_test(test_bit_exact),
      cmocka_unit_test(test_fused_matmul),
      cmocka_unit_test(test_ptx_render),
      cmocka_unit_test(test_int8_matmul),
      cmocka_unit_test(test_int8_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
