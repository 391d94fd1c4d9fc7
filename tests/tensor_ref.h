/* Reference helpers for the tensor-API suites (tests/test_tensor_*.c): a tiny host tensor ("href")
 * with plain-C loops for every tkc.h op — movement, broadcasting, tinygrad's dtype rules, reductions,
 * matmul, softmax, conv2d — plus upload/compare helpers and the per-device loop.
 *
 * Values are held as rv {f, i}: float dtypes use f (already rounded to the dtype), ints and bool use
 * i (the value wrapped to the dtype's width; uint64 keeps its bit pattern). Header-only, included by
 * the tensor suites after cmocka.h. Failures are counted in tr_nfail and printed (up to a limit), so
 * one run reports every mismatching op/dtype/device instead of stopping at the first.
 * TKC_TEST_DEVICES=CPU,INTERP (comma-separated) limits the suites to those devices. */
#ifndef TKC_TEST_TENSOR_REF_H
#define TKC_TEST_TENSOR_REF_H

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tkc.h"
#include "kernel_util.h" /* tkc/runtime.h + independent float16/bfloat16 references */

#define TR_MAXDIM 8

/* ---------------------------------------------------------------- failure bookkeeping */

static int tr_nfail;    /* problems found in the current test */
static int tr_nprinted; /* problems printed in the current test (capped) */
#define TR_PRINT_MAX 60

static double tr_t0; /* when the current test began */
static inline double tr_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
static inline void tr_begin(void) { tr_nfail = 0, tr_nprinted = 0, tr_t0 = tr_now(); }

static inline void tr_problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void tr_problem(const char *fmt, ...) {
  tr_nfail++;
  if (tr_nprinted++ >= TR_PRINT_MAX) {
    if (tr_nprinted == TR_PRINT_MAX + 1) printf("  ... (more problems not printed)\n");
    return;
  }
  va_list ap;
  va_start(ap, fmt);
  printf("  FAIL ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
}

/* a condition that must hold; prints the message (and tkc_last_error) when it does not */
#define TR_EXPECT(cond, ...)                                                 \
  do {                                                                       \
    if (!(cond)) {                                                           \
      char tr_m_[512];                                                       \
      snprintf(tr_m_, sizeof tr_m_, __VA_ARGS__);                            \
      tr_problem("%s:%d: %s [%s] (last error: %s)", __FILE__, __LINE__, tr_m_, #cond, tkc_last_error()); \
    }                                                                        \
  } while (0)

/* the end of every test: fails it when any problem was found */
#define TR_END()                                                                         \
  do {                                                                                   \
    printf("  %s: %.1f s\n", __func__, tr_now() - tr_t0);                               \
    if (tr_nfail) printf("  %d problem(s) in %s\n", tr_nfail, __func__);                 \
    assert_int_equal(tr_nfail, 0);                                                       \
  } while (0)

/* ---------------------------------------------------------------- devices */

/* A ctx on dev, or NULL (with a printed note) when dev cannot run here. An available device whose
 * ctx cannot be made is a problem. */
static inline tkc_ctx *tr_ctx_open(const char *dev) {
  const char *only = getenv("TKC_TEST_DEVICES"); /* e.g. "CPU,INTERP": run on these only */
  if (only && *only) {
    const char *p = strstr(only, dev);
    size_t n = strlen(dev);
    bool listed = false;
    for (; p && !listed; p = strstr(p + 1, dev)) listed = (p == only || p[-1] == ',') && (p[n] == ',' || p[n] == 0);
    if (!listed) {
      printf("  skipped on %s: not in TKC_TEST_DEVICES\n", dev);
      return NULL;
    }
  }
  if (!tkc_device_available(dev)) {
    printf("  skipped on %s: unavailable here\n", dev);
    return NULL;
  }
  tkc_ctx *ctx = tkc_ctx_new(dev);
  if (!ctx) tr_problem("tkc_ctx_new(\"%s\") failed on an available device: %s", dev, tkc_last_error());
  return ctx;
}

/* runs the body once per available device with a fresh ctx (freed after the body; `continue` is safe) */
#define FOR_EACH_DEVICE(dev, ctx)                                           \
  for (const char *const *tr_dn_ = tkc_device_names(); *tr_dn_; tr_dn_++)   \
    for (const char *dev = *tr_dn_; dev; dev = NULL)                        \
      for (tkc_ctx *ctx = tr_ctx_open(dev); ctx; tkc_ctx_free(ctx), ctx = NULL)

/* whether dev's renderer can hold dt (INTERP has no renderer: every dtype) */
static inline bool tr_dev_supports(const char *dev, tkc_dtype dt) {
  tkc_device *d = tkc_device_get(dev);
  const tkc_renderer *r = d ? tkc_device_renderer(d) : NULL;
  return !r || !(r->unsupported_dtypes & (1u << (unsigned)dt));
}

/* ---------------------------------------------------------------- dtypes */

typedef struct rv {
  double f;  /* float dtypes */
  int64_t i; /* ints and bool (uint64: the bit pattern) */
} rv;

static const tkc_dtype tr_all_dtypes[] = {TKC_BOOL,   TKC_INT8,   TKC_UINT8,   TKC_INT16,    TKC_UINT16,
                                          TKC_INT32,  TKC_UINT32, TKC_INT64,   TKC_UINT64,   TKC_FLOAT16,
                                          TKC_BFLOAT16, TKC_FLOAT32, TKC_FLOAT64};
#define TR_NDT ((int)(sizeof tr_all_dtypes / sizeof tr_all_dtypes[0]))

static inline bool tr_isf(tkc_dtype dt) { return dt == TKC_FLOAT16 || dt == TKC_BFLOAT16 || dt == TKC_FLOAT32 || dt == TKC_FLOAT64; }
static inline bool tr_isu(tkc_dtype dt) { return dt == TKC_UINT8 || dt == TKC_UINT16 || dt == TKC_UINT32 || dt == TKC_UINT64; }
static inline bool tr_iss(tkc_dtype dt) { return dt == TKC_INT8 || dt == TKC_INT16 || dt == TKC_INT32 || dt == TKC_INT64; }
static inline bool tr_isint(tkc_dtype dt) { return tr_isu(dt) || tr_iss(dt); }
static inline const char *tr_dn(tkc_dtype dt) { return dt == TKC_VOID ? "void" : tkc_dtype_name(dt); }

static inline size_t tr_size(tkc_dtype dt) {
  switch (dt) {
  case TKC_BOOL: case TKC_INT8: case TKC_UINT8: return 1;
  case TKC_INT16: case TKC_UINT16: case TKC_FLOAT16: case TKC_BFLOAT16: return 2;
  case TKC_INT32: case TKC_UINT32: case TKC_FLOAT32: return 4;
  case TKC_INT64: case TKC_UINT64: case TKC_FLOAT64: return 8;
  default: return 0;
  }
}

/* the value x (a bit pattern) wrapped to an int dtype's width, as C's conversion does */
static inline int64_t tr_wrap(tkc_dtype dt, uint64_t x) {
  switch (dt) {
  case TKC_BOOL: return x != 0;
  case TKC_INT8: return (int8_t)(uint8_t)x;
  case TKC_UINT8: return (uint8_t)x;
  case TKC_INT16: return (int16_t)(uint16_t)x;
  case TKC_UINT16: return (uint16_t)x;
  case TKC_INT32: return (int32_t)(uint32_t)x;
  case TKC_UINT32: return (uint32_t)x;
  default: return (int64_t)x;
  }
}

/* round-to-nearest-even bfloat16 (via float32) */
static inline uint16_t tr_bf16_bits(double x) {
  float f = (float)x;
  uint32_t u;
  memcpy(&u, &f, 4);
  if (isnan(f)) return 0x7fc0;
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

static inline double tr_round(tkc_dtype dt, double x) {
  switch (dt) {
  case TKC_FLOAT16: return ref_half_value(ref_half_bits(x));
  case TKC_BFLOAT16: return ref_bf16_value(tr_bf16_bits(x));
  case TKC_FLOAT32: return (double)(float)x;
  default: return x;
  }
}

static inline double tr_to_double(tkc_dtype dt, rv v) {
  if (tr_isf(dt)) return v.f;
  if (tr_isu(dt)) return (double)(uint64_t)v.i;
  return (double)v.i;
}

/* C-cast of a double to dt (x must be in range when dt is an int) */
static inline rv tr_from_double(tkc_dtype dt, double x) {
  rv r = {0, 0};
  if (tr_isf(dt)) r.f = tr_round(dt, x);
  else if (dt == TKC_BOOL) r.i = x != 0;
  else if (tr_isu(dt)) r.i = tr_wrap(dt, (uint64_t)x);
  else r.i = tr_wrap(dt, (uint64_t)(int64_t)x);
  return r;
}

/* C-cast semantics between dtypes */
static inline rv tr_cast(rv v, tkc_dtype from, tkc_dtype to) {
  if (tr_isf(from)) return tr_from_double(to, v.f);
  rv r = {0, 0};
  if (tr_isf(to)) r.f = tr_round(to, tr_to_double(from, v));
  else r.i = tr_wrap(to, (uint64_t)v.i);
  return r;
}

static inline void tr_store(tkc_dtype dt, void *p, size_t k, rv v) {
  switch (dt) {
  case TKC_BOOL: ((uint8_t *)p)[k] = v.i != 0; break;
  case TKC_INT8: ((int8_t *)p)[k] = (int8_t)v.i; break;
  case TKC_UINT8: ((uint8_t *)p)[k] = (uint8_t)v.i; break;
  case TKC_INT16: ((int16_t *)p)[k] = (int16_t)v.i; break;
  case TKC_UINT16: ((uint16_t *)p)[k] = (uint16_t)v.i; break;
  case TKC_INT32: ((int32_t *)p)[k] = (int32_t)v.i; break;
  case TKC_UINT32: ((uint32_t *)p)[k] = (uint32_t)v.i; break;
  case TKC_INT64: ((int64_t *)p)[k] = v.i; break;
  case TKC_UINT64: ((uint64_t *)p)[k] = (uint64_t)v.i; break;
  case TKC_FLOAT16: ((uint16_t *)p)[k] = ref_half_bits(v.f); break;
  case TKC_BFLOAT16: ((uint16_t *)p)[k] = tr_bf16_bits(v.f); break;
  case TKC_FLOAT32: ((float *)p)[k] = (float)v.f; break;
  case TKC_FLOAT64: ((double *)p)[k] = v.f; break;
  default: break;
  }
}

/* bool is loaded as its raw byte, so a device writing anything but 0/1 is caught */
static inline rv tr_load(tkc_dtype dt, const void *p, size_t k) {
  rv r = {0, 0};
  switch (dt) {
  case TKC_BOOL: r.i = ((const uint8_t *)p)[k]; break;
  case TKC_INT8: r.i = ((const int8_t *)p)[k]; break;
  case TKC_UINT8: r.i = ((const uint8_t *)p)[k]; break;
  case TKC_INT16: r.i = ((const int16_t *)p)[k]; break;
  case TKC_UINT16: r.i = ((const uint16_t *)p)[k]; break;
  case TKC_INT32: r.i = ((const int32_t *)p)[k]; break;
  case TKC_UINT32: r.i = ((const uint32_t *)p)[k]; break;
  case TKC_INT64: r.i = ((const int64_t *)p)[k]; break;
  case TKC_UINT64: r.i = (int64_t)((const uint64_t *)p)[k]; break;
  case TKC_FLOAT16: r.f = ref_half_value(((const uint16_t *)p)[k]); break;
  case TKC_BFLOAT16: r.f = ref_bf16_value(((const uint16_t *)p)[k]); break;
  case TKC_FLOAT32: r.f = ((const float *)p)[k]; break;
  case TKC_FLOAT64: r.f = ((const double *)p)[k]; break;
  default: break;
  }
  return r;
}

static inline const char *tr_fmt(tkc_dtype dt, rv v, char *buf, size_t n) {
  if (tr_isf(dt)) snprintf(buf, n, "%.9g", v.f);
  else if (tr_isu(dt)) snprintf(buf, n, "%llu", (unsigned long long)(uint64_t)v.i);
  else snprintf(buf, n, "%lld", (long long)v.i);
  return buf;
}

/* tolerances: rtol/atol for results of exact ops (kind 0) and of transcendental or accumulated ones
 * (kind 1). bfloat16 rounds to nearest even: 1 ulp = 2^-7 (a bound kept from when it truncated). */
static inline double tr_rtol(tkc_dtype dt, int kind) {
  switch (dt) {
  case TKC_FLOAT16: return kind ? 4e-3 : 1e-3;
  case TKC_BFLOAT16: return kind ? 3e-2 : 1.6e-2;
  case TKC_FLOAT32: return kind ? 1e-5 : 1e-6;
  case TKC_FLOAT64: return kind ? 1e-9 : 1e-12;
  default: return 0;
  }
}
static inline double tr_atol(tkc_dtype dt, int kind) {
  switch (dt) {
  case TKC_FLOAT16: return kind ? 4e-3 : 1e-3;
  case TKC_BFLOAT16: return kind ? 3e-2 : 1e-2;
  case TKC_FLOAT32: return kind ? 1e-5 : 1e-6;
  case TKC_FLOAT64: return kind ? 1e-9 : 1e-12;
  default: return 0;
  }
}

static inline bool tr_close(tkc_dtype dt, rv got, rv want, double rtol, double atol) {
  if (!tr_isf(dt)) return got.i == want.i;
  if (isnan(want.f)) return isnan(got.f);
  if (isinf(want.f)) return got.f == want.f;
  return fabs(got.f - want.f) <= atol + rtol * fabs(want.f);
}

/* ---------------------------------------------------------------- host tensors */

typedef struct href {
  tkc_dtype dt;
  int ndim;
  int64_t shape[TR_MAXDIM];
  int64_t n;
  rv *v;
} href;

/* an element count for calloc: at least 1 (and never "negative" to the compiler) */
static inline size_t tr_cnt(int64_t n) { return n > 0 && n < ((int64_t)1 << 40) ? (size_t)n : 1; }

static inline int64_t tr_numel(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  return n;
}

static inline href tr_new(tkc_dtype dt, int ndim, const int64_t *shape) {
  href h;
  memset(&h, 0, sizeof h);
  h.dt = dt;
  h.ndim = ndim;
  for (int i = 0; i < ndim; i++) h.shape[i] = shape[i];
  h.n = tr_numel(ndim, shape);
  h.v = calloc(tr_cnt(h.n), sizeof *h.v);
  return h;
}
static inline void tr_free(href *h) {
  free(h->v);
  h->v = NULL;
}

/* shape literal helper: TR_SHAPE(2, 3) -> (const int64_t[]){2, 3}, ndim */
#define TR_SHAPE(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (const int64_t[]){__VA_ARGS__}

static inline void tr_unravel(int64_t flat, int ndim, const int64_t *shape, int64_t *idx) {
  for (int d = ndim - 1; d >= 0; d--) {
    idx[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
}
static inline int64_t tr_ravel(const int64_t *idx, int ndim, const int64_t *shape) {
  int64_t f = 0;
  for (int d = 0; d < ndim; d++) f = f * shape[d] + idx[d];
  return f;
}

static inline href tr_from_doubles(tkc_dtype dt, int ndim, const int64_t *shape, const double *vals) {
  href h = tr_new(dt, ndim, shape);
  for (int64_t k = 0; k < h.n; k++) h.v[k] = tr_from_double(dt, vals[k]);
  return h;
}

/* xorshift: deterministic inputs */
static uint64_t tr_rng = 0x9E3779B97F4A7C15ull;
static inline uint64_t tr_rand_u64(void) {
  tr_rng ^= tr_rng << 13;
  tr_rng ^= tr_rng >> 7;
  tr_rng ^= tr_rng << 17;
  return tr_rng;
}
static inline int64_t tr_rand_int(int64_t lo, int64_t hi) { return lo + (int64_t)(tr_rand_u64() % (uint64_t)(hi - lo + 1)); }

/* input domains, chosen so every reference value is exact in the dtype and no C UB arises */
enum {
  TR_DOM_ANY,     /* ints: small, signed ones negative too (no overflow in + - *); floats: k/4 in [-4, 4] */
  TR_DOM_NONZERO, /* as ANY without zero (divisors) */
  TR_DOM_POS,     /* > 0 (sqrt, log, pow base) */
  TR_DOM_SHIFT,   /* 0..3 (shift amounts, pow exponents) */
  TR_DOM_SMALL,   /* 0..15 (values to shift) */
  TR_DOM_WIDE     /* ints over their whole range (bitwise ops, wraparound) */
};

static inline rv tr_rand_val(tkc_dtype dt, int dom) {
  rv r = {0, 0};
  if (dt == TKC_BOOL) {
    r.i = (dom == TR_DOM_NONZERO || dom == TR_DOM_POS) ? 1 : (int64_t)(tr_rand_u64() & 1);
    return r;
  }
  bool s = !tr_isu(dt);
  switch (dom) {
  case TR_DOM_SHIFT: r = tr_from_double(dt, (double)tr_rand_int(0, 3)); return r;
  case TR_DOM_SMALL: r = tr_from_double(dt, (double)tr_rand_int(0, 15)); return r;
  case TR_DOM_WIDE:
    if (!tr_isf(dt)) {
      r.i = tr_wrap(dt, tr_rand_u64());
      return r;
    }
    break;
  default: break;
  }
  if (tr_isf(dt)) {
    double x;
    do x = (double)tr_rand_int(-16, 16) / 4.0;
    while ((dom == TR_DOM_NONZERO && x == 0) || (dom == TR_DOM_POS && x <= 0));
    r.f = x;
    return r;
  }
  int64_t x;
  do x = s && dom != TR_DOM_POS ? tr_rand_int(-9, 9) : tr_rand_int(0, 15);
  while ((dom == TR_DOM_NONZERO || dom == TR_DOM_POS) && x == 0);
  r.i = tr_wrap(dt, (uint64_t)x);
  return r;
}

static inline href tr_rand(tkc_dtype dt, int ndim, const int64_t *shape, int dom) {
  href h = tr_new(dt, ndim, shape);
  for (int64_t k = 0; k < h.n; k++) h.v[k] = tr_rand_val(dt, dom);
  return h;
}

/* a tkc tensor holding h's values */
static inline tkc_tensor *tr_upload(tkc_ctx *ctx, const href *h) {
  size_t sz = tr_size(h->dt);
  void *buf = calloc(tr_cnt(h->n), sz ? sz : 1);
  for (int64_t k = 0; k < h->n; k++) tr_store(h->dt, buf, (size_t)k, h->v[k]);
  tkc_tensor *t = tkc_tensor_new(ctx, h->dt, h->ndim, h->shape, buf);
  free(buf);
  return t;
}

/* t is non-NULL with want's dtype and shape (nothing is realized); else reports and returns false */
static inline bool tr_check_meta(tkc_tensor *t, const href *want, const char *what) {
  if (!t) {
    tr_problem("%s: got NULL: %s", what, tkc_last_error());
    return false;
  }
  if (tkc_dtype_of(t) != want->dt) {
    tr_problem("%s: dtype %s, want %s", what, tr_dn(tkc_dtype_of(t)), tr_dn(want->dt));
    return false;
  }
  bool shape_ok = tkc_ndim(t) == want->ndim;
  for (int d = 0; shape_ok && d < want->ndim; d++) shape_ok = tkc_dim(t, d) == want->shape[d];
  if (!shape_ok || tkc_numel(t) != want->n) {
    char g[128] = "", w[128] = "";
    for (int d = 0; d < tkc_ndim(t) && d < TR_MAXDIM; d++) snprintf(g + strlen(g), sizeof g - strlen(g), "%lld,", (long long)tkc_dim(t, d));
    for (int d = 0; d < want->ndim; d++) snprintf(w + strlen(w), sizeof w - strlen(w), "%lld,", (long long)want->shape[d]);
    tr_problem("%s: shape (%s) numel %lld, want (%s) numel %lld", what, g, (long long)tkc_numel(t), w, (long long)want->n);
    return false;
  }
  return true;
}

/* Realizes t and compares it with want (dtype, shape, values). Returns the number of problems found
 * (each printed with what). */
static inline int tr_check(tkc_tensor *t, const href *want, double rtol, double atol, const char *what) {
  int before = tr_nfail;
  if (!tr_check_meta(t, want, what)) return 1;
  size_t nbytes = (size_t)want->n * tr_size(want->dt);
  void *buf = malloc(nbytes ? nbytes : 1) /* nbytes from tr_cnt-bounded counts */;
  tkc_status st = tkc_copy_out(t, buf, nbytes);
  if (st != TKC_OK) {
    tr_problem("%s: tkc_copy_out: %s: %s", what, tkc_status_str(st), tkc_last_error());
    free(buf);
    return 1;
  }
  int shown = 0;
  for (int64_t k = 0; k < want->n; k++) {
    rv got = tr_load(want->dt, buf, (size_t)k);
    if (!tr_close(want->dt, got, want->v[k], rtol, atol)) {
      char gs[48], ws[48];
      if (shown++ < 4)
        tr_problem("%s: element %lld: got %s want %s (%s)", what, (long long)k, tr_fmt(want->dt, got, gs, sizeof gs),
                   tr_fmt(want->dt, want->v[k], ws, sizeof ws), tr_dn(want->dt));
      else tr_nfail++;
    }
  }
  if (shown > 4) printf("  (%s: %d mismatching elements of %lld)\n", what, shown, (long long)want->n);
  free(buf);
  return tr_nfail - before;
}

/* tr_check with the dtype's default tolerance (kind 0 exact-ish, 1 transcendental/accumulated) */
static inline int tr_checkk(tkc_tensor *t, const href *want, int kind, const char *what) {
  return tr_check(t, want, tr_rtol(want->dt, kind), tr_atol(want->dt, kind), what);
}

/* ---------------------------------------------------------------- batched checks
 * Each distinct kernel costs the CPU device a C compiler run (50-150 ms), so the dtype sweeps check
 * up to TR_BATCH_MAX results of one shape in ONE kernel: each result is cast to a wide dtype of its
 * class (float64 / int64, or float32 / int32 where the device lacks those) and the results are
 * stacked along a new first axis with where(index == j, r_j, ...). All inputs stay valid for every op
 * (no padding), so no op sees values it was not given. When the stacked kernel fails or any value is
 * off, every result of the chunk is realized and checked on its own, which names the culprit; a
 * stacked failure whose results all pass alone is reported as a problem of its own. */
#define TR_BATCH_MAX 10 /* 2 inputs each + index + output: within a kernel's 32 buffers */
#define TR_BATCH_CAP 64

typedef struct tr_item {
  tkc_tensor *t;
  href want;
  double rtol, atol;
  char what[160];
} tr_item;

typedef struct tr_batch {
  tkc_ctx *ctx;
  const char *dev;
  int n;
  tr_item it[TR_BATCH_CAP];
} tr_batch;

static inline void tr_batch_init(tr_batch *b, tkc_ctx *ctx, const char *dev) {
  memset(b, 0, sizeof *b);
  b->ctx = ctx;
  b->dev = dev;
}

static inline bool tr_same_shape(const href *a, const href *b) {
  if (a->ndim != b->ndim) return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->shape[d] != b->shape[d]) return false;
  return true;
}

/* checks items[0..k) (same shape and class) through one stacked kernel */
static inline void tr_batch_chunk(tr_batch *b, tr_item **items, int k) {
  if (k == 1) {
    tr_check(items[0]->t, &items[0]->want, items[0]->rtol, items[0]->atol, items[0]->what);
    return;
  }
  const href *w0 = &items[0]->want;
  bool fl = tr_isf(w0->dt);
  tkc_dtype common = fl ? (tr_dev_supports(b->dev, TKC_FLOAT64) ? TKC_FLOAT64 : TKC_FLOAT32)
                        : (tr_dev_supports(b->dev, TKC_INT64) ? TKC_INT64 : TKC_INT32);
  int nd = w0->ndim + 1;
  int64_t shp1[TR_MAXDIM + 1], shpi[TR_MAXDIM + 1];
  shp1[0] = 1, shpi[0] = k;
  for (int d = 0; d < w0->ndim; d++) shp1[d + 1] = w0->shape[d], shpi[d + 1] = 1;
  int32_t idxv[TR_BATCH_MAX];
  for (int j = 0; j < k; j++) idxv[j] = j;
  tkc_tensor *idx = tkc_tensor_new(b->ctx, TKC_INT32, nd, shpi, idxv), *acc = NULL;
  for (int j = k - 1; j >= 0; j--) {
    tkc_tensor *r = tkc_reshape(tkc_cast(items[j]->t, common), nd, shp1);
    acc = acc ? tkc_where(tkc_eq(idx, tkc_scalar(b->ctx, TKC_INT32, j)), r, acc) : r;
  }
  char why[256] = "";
  size_t n = (size_t)w0->n, isz = tr_size(common);
  void *buf = malloc(tr_cnt((int64_t)(n * (size_t)k)) * isz);
  if (!acc) snprintf(why, sizeof why, "building it: %s", tkc_last_error());
  else if (tkc_ndim(acc) != nd || tkc_dim(acc, 0) != k) snprintf(why, sizeof why, "stacked shape wrong (ndim %d)", tkc_ndim(acc));
  else {
    tkc_status st = tkc_copy_out(acc, buf, n * (size_t)k * isz);
    if (st) snprintf(why, sizeof why, "tkc_copy_out: %s: %s", tkc_status_str(st), tkc_last_error());
  }
  for (int j = 0; j < k && !why[0]; j++) {
    const tr_item *it = items[j];
    for (size_t e = 0; e < n && !why[0]; e++) {
      rv got = tr_load(common, buf, (size_t)j * n + e), want = tr_cast(it->want.v[e], it->want.dt, common);
      if (!tr_close(common, got, want, it->rtol, it->atol)) snprintf(why, sizeof why, "%s differs at element %zu", it->what, e);
    }
  }
  free(buf);
  if (why[0]) { /* find the culprit: every result on its own */
    int before = tr_nfail;
    for (int j = 0; j < k; j++) tr_check(items[j]->t, &items[j]->want, items[j]->rtol, items[j]->atol, items[j]->what);
    if (tr_nfail == before)
      tr_problem("%s: a kernel stacking %d results (%s ... %s) failed although each passes alone: %s", b->dev, k, items[0]->what,
                 items[k - 1]->what, why);
  }
  tkc_tensor_free(acc);
  tkc_tensor_free(idx);
}

/* checks every pending item (grouped by shape and float/int class, TR_BATCH_MAX per kernel) */
static inline void tr_batch_flush(tr_batch *b) {
  bool done[TR_BATCH_CAP] = {0};
  for (int i = 0; i < b->n; i++) {
    if (done[i]) continue;
    tr_item *chunk[TR_BATCH_MAX];
    int k = 0;
    for (int j = i; j < b->n && k < TR_BATCH_MAX; j++)
      if (!done[j] && tr_same_shape(&b->it[i].want, &b->it[j].want) && tr_isf(b->it[i].want.dt) == tr_isf(b->it[j].want.dt))
        chunk[k++] = &b->it[j], done[j] = true;
    tr_batch_chunk(b, chunk, k);
  }
  for (int i = 0; i < b->n; i++) tr_free(&b->it[i].want);
  b->n = 0;
}

/* queues t for checking against want (taken over: the batch frees it) */
static inline void tr_batch_add(tr_batch *b, tkc_tensor *t, href *want, double rtol, double atol, const char *what) {
  if (!tr_check_meta(t, want, what)) { /* reported */
    tr_free(want);
    return;
  }
  if (want->n == 0 || want->n > 4096) { /* nothing to stack / too big to stack: alone */
    tr_check(t, want, rtol, atol, what);
    tr_free(want);
    return;
  }
  if (b->n == TR_BATCH_CAP) tr_batch_flush(b);
  tr_item *it = &b->it[b->n++];
  it->t = t;
  it->want = *want;
  want->v = NULL;
  it->rtol = rtol, it->atol = atol;
  snprintf(it->what, sizeof it->what, "%s", what);
}

static inline void tr_batch_addk(tr_batch *b, tkc_tensor *t, href *want, int kind, const char *what) {
  tr_batch_add(b, t, want, tr_rtol(want->dt, kind), tr_atol(want->dt, kind), what);
}

/* expects fn to have failed with status st: t NULL and tkc_last_status() == st */
#define TR_EXPECT_FAIL(t, st, ...)                                                                  \
  do {                                                                                              \
    tkc_tensor *tr_t_ = (t);                                                                        \
    tkc_status tr_s_ = tkc_last_status();                                                           \
    char tr_w_[256];                                                                                \
    snprintf(tr_w_, sizeof tr_w_, __VA_ARGS__);                                                     \
    if (tr_t_) tr_problem("%s:%d: %s: returned a tensor, want NULL + %s", __FILE__, __LINE__, tr_w_, tkc_status_str(st)); \
    else if (tr_s_ != (st))                                                                         \
      tr_problem("%s:%d: %s: status %s (%s), want %s", __FILE__, __LINE__, tr_w_, tkc_status_str(tr_s_), tkc_last_error(), \
                 tkc_status_str(st));                                                               \
  } while (0)

/* ---------------------------------------------------------------- movement (dtype-agnostic) */

static inline href tr_reshape(const href *a, int ndim, const int64_t *shape) {
  int64_t s[TR_MAXDIM], known = 1;
  int neg = -1;
  for (int i = 0; i < ndim; i++) {
    s[i] = shape[i];
    if (s[i] == -1) neg = i;
    else known *= s[i];
  }
  if (neg >= 0) s[neg] = known ? a->n / known : 0;
  href h = tr_new(a->dt, ndim, s);
  for (int64_t k = 0; k < h.n; k++) h.v[k] = a->v[k];
  return h;
}

static inline href tr_permute(const href *a, const int *order) {
  int64_t s[TR_MAXDIM], idx[TR_MAXDIM], src[TR_MAXDIM];
  for (int i = 0; i < a->ndim; i++) s[i] = a->shape[order[i]];
  href h = tr_new(a->dt, a->ndim, s);
  for (int64_t k = 0; k < h.n; k++) {
    tr_unravel(k, h.ndim, h.shape, idx);
    for (int i = 0; i < a->ndim; i++) src[order[i]] = idx[i];
    h.v[k] = a->v[tr_ravel(src, a->ndim, a->shape)];
  }
  return h;
}

static inline href tr_transpose(const href *a, int x, int y) {
  int order[TR_MAXDIM];
  if (x < 0) x += a->ndim;
  if (y < 0) y += a->ndim;
  for (int i = 0; i < a->ndim; i++) order[i] = i;
  order[x] = y, order[y] = x;
  return tr_permute(a, order);
}

/* NumPy-style: aligns right, new leading dims, size-1 dims grow, -1 keeps */
static inline href tr_expand(const href *a, int ndim, const int64_t *shape) {
  int64_t s[TR_MAXDIM], idx[TR_MAXDIM], src[TR_MAXDIM];
  int off = ndim - a->ndim;
  for (int i = 0; i < ndim; i++) s[i] = shape[i] == -1 ? a->shape[i - off] : shape[i];
  href h = tr_new(a->dt, ndim, s);
  for (int64_t k = 0; k < h.n; k++) {
    tr_unravel(k, ndim, s, idx);
    for (int i = 0; i < a->ndim; i++) src[i] = a->shape[i] == 1 ? 0 : idx[i + off];
    h.v[k] = a->v[tr_ravel(src, a->ndim, a->shape)];
  }
  return h;
}

static inline href tr_pad(const href *a, const int64_t *pads, double value) {
  int64_t s[TR_MAXDIM], idx[TR_MAXDIM];
  for (int i = 0; i < a->ndim; i++) s[i] = a->shape[i] + pads[2 * i] + pads[2 * i + 1];
  href h = tr_new(a->dt, a->ndim, s);
  rv fill = tr_from_double(a->dt, value);
  for (int64_t k = 0; k < h.n; k++) {
    tr_unravel(k, a->ndim, s, idx);
    bool in = true;
    for (int i = 0; i < a->ndim; i++) {
      idx[i] -= pads[2 * i];
      if (idx[i] < 0 || idx[i] >= a->shape[i]) in = false;
    }
    h.v[k] = in ? a->v[tr_ravel(idx, a->ndim, a->shape)] : fill;
  }
  return h;
}

static inline href tr_shrink(const href *a, const int64_t *ranges) {
  int64_t s[TR_MAXDIM], idx[TR_MAXDIM];
  for (int i = 0; i < a->ndim; i++) s[i] = ranges[2 * i + 1] - ranges[2 * i];
  href h = tr_new(a->dt, a->ndim, s);
  for (int64_t k = 0; k < h.n; k++) {
    tr_unravel(k, a->ndim, s, idx);
    for (int i = 0; i < a->ndim; i++) idx[i] += ranges[2 * i];
    h.v[k] = a->v[tr_ravel(idx, a->ndim, a->shape)];
  }
  return h;
}

static inline href tr_flip(const href *a, int naxes, const int *axes) {
  bool fl[TR_MAXDIM] = {0};
  int64_t idx[TR_MAXDIM];
  for (int i = 0; i < naxes; i++) fl[axes[i] < 0 ? axes[i] + a->ndim : axes[i]] = true;
  href h = tr_new(a->dt, a->ndim, a->shape);
  for (int64_t k = 0; k < h.n; k++) {
    tr_unravel(k, a->ndim, a->shape, idx);
    for (int i = 0; i < a->ndim; i++)
      if (fl[i]) idx[i] = a->shape[i] - 1 - idx[i];
    h.v[k] = a->v[tr_ravel(idx, a->ndim, a->shape)];
  }
  return h;
}

static inline href tr_copy(const href *a) { return tr_reshape(a, a->ndim, a->shape); }

static inline href tr_astype(const href *a, tkc_dtype dt) {
  href h = tr_new(dt, a->ndim, a->shape);
  for (int64_t k = 0; k < h.n; k++) h.v[k] = tr_cast(a->v[k], a->dt, dt);
  return h;
}

/* ---------------------------------------------------------------- elementwise */

enum {
  TR_ADD, TR_SUB, TR_MUL, TR_DIV, TR_IDIV, TR_MOD, TR_MAXIMUM, TR_MINIMUM, TR_POW,
  TR_LT, TR_LE, TR_GT, TR_GE, TR_EQ, TR_NE, TR_AND, TR_OR, TR_XOR, TR_SHL, TR_SHR, TR_NBIN
};

static inline bool tr_is_cmp(int op) { return op >= TR_LT && op <= TR_NE; }

/* The dtype a binary op computes in for operand dtypes a and b; TKC_VOID when the op rejects them
 * (TKC_EDTYPE). */
static inline tkc_dtype tr_bin_compute_dt(int op, tkc_dtype a, tkc_dtype b) {
  tkc_dtype p = tkc_least_upper_dtype(a, b);
  switch (op) {
  case TR_DIV: case TR_POW: return tr_isf(p) ? p : TKC_FLOAT32;
  case TR_IDIV: case TR_MOD: case TR_SHL: case TR_SHR: return tr_isint(p) ? p : TKC_VOID;
  case TR_AND: case TR_OR: case TR_XOR: return tr_isf(p) ? TKC_VOID : p;
  default: return p;
  }
}
static inline tkc_dtype tr_bin_out_dt(int op, tkc_dtype a, tkc_dtype b) {
  tkc_dtype c = tr_bin_compute_dt(op, a, b);
  return c == TKC_VOID ? TKC_VOID : tr_is_cmp(op) ? TKC_BOOL : c;
}

/* op on two values already of dtype dt (the compute dtype) */
static inline rv tr_binop(int op, tkc_dtype dt, rv a, rv b) {
  rv r = {0, 0};
  if (tr_isf(dt)) {
    double x = a.f, y = b.f, z = 0;
    switch (op) {
    case TR_ADD: z = x + y; break;
    case TR_SUB: z = x - y; break;
    case TR_MUL: z = x * y; break;
    case TR_DIV: z = x / y; break;
    case TR_MAXIMUM: z = x > y ? x : y; break;
    case TR_MINIMUM: z = x < y ? x : y; break;
    case TR_POW: z = pow(x, y); break;
    case TR_LT: r.i = x < y; return r;
    case TR_LE: r.i = x <= y; return r;
    case TR_GT: r.i = x > y; return r;
    case TR_GE: r.i = x >= y; return r;
    case TR_EQ: r.i = x == y; return r;
    case TR_NE: r.i = x != y; return r;
    default: break;
    }
    r.f = tr_round(dt, z);
    return r;
  }
  bool u = tr_isu(dt) || dt == TKC_BOOL;
  uint64_t ux = (uint64_t)a.i, uy = (uint64_t)b.i, z = 0;
  int64_t sx = a.i, sy = b.i;
  switch (op) {
  case TR_ADD: z = ux + uy; break;
  case TR_SUB: z = ux - uy; break;
  case TR_MUL: z = ux * uy; break;
  case TR_IDIV: z = u ? ux / uy : (uint64_t)(sx / sy); break;
  case TR_MOD: z = u ? ux % uy : (uint64_t)(sx % sy); break;
  case TR_MAXIMUM: z = u ? (ux > uy ? ux : uy) : (uint64_t)(sx > sy ? sx : sy); break;
  case TR_MINIMUM: z = u ? (ux < uy ? ux : uy) : (uint64_t)(sx < sy ? sx : sy); break;
  case TR_AND: z = ux & uy; break;
  case TR_OR: z = ux | uy; break;
  case TR_XOR: z = ux ^ uy; break;
  case TR_SHL: z = ux << uy; break;
  case TR_SHR: z = u ? ux >> uy : (uint64_t)(sx >> sy); break;
  case TR_LT: r.i = u ? ux < uy : sx < sy; return r;
  case TR_LE: r.i = u ? ux <= uy : sx <= sy; return r;
  case TR_GT: r.i = u ? ux > uy : sx > sy; return r;
  case TR_GE: r.i = u ? ux >= uy : sx >= sy; return r;
  case TR_EQ: r.i = ux == uy; return r;
  case TR_NE: r.i = ux != uy; return r;
  default: break;
  }
  /* bool arithmetic: + is or, * is and (the wrapped value is != 0) */
  r.i = tr_wrap(dt, z);
  return r;
}

/* the broadcast shape of a and b (false when they do not broadcast) */
static inline bool tr_bcast_shape(int na, const int64_t *sa, int nb, const int64_t *sb, int *n, int64_t *out) {
  *n = na > nb ? na : nb;
  for (int i = 0; i < *n; i++) {
    int ia = i - (*n - na), ib = i - (*n - nb);
    int64_t x = ia >= 0 ? sa[ia] : 1, y = ib >= 0 ? sb[ib] : 1;
    if (x != y && x != 1 && y != 1) return false;
    out[i] = x == 1 ? y : x;
  }
  return true;
}

static inline int64_t tr_bcast_index(const href *a, int n, const int64_t *idx) {
  int64_t src[TR_MAXDIM];
  int off = n - a->ndim;
  for (int i = 0; i < a->ndim; i++) src[i] = a->shape[i] == 1 ? 0 : idx[i + off];
  return tr_ravel(src, a->ndim, a->shape);
}

/* op(a, b) with broadcasting and tinygrad's promotion (the caller checks the op accepts the dtypes) */
static inline href tr_binary(int op, const href *a, const href *b) {
  int n;
  int64_t s[TR_MAXDIM], idx[TR_MAXDIM];
  tr_bcast_shape(a->ndim, a->shape, b->ndim, b->shape, &n, s);
  tkc_dtype cdt = tr_bin_compute_dt(op, a->dt, b->dt);
  href h = tr_new(tr_bin_out_dt(op, a->dt, b->dt), n, s);
  for (int64_t k = 0; k < h.n; k++) {
    tr_unravel(k, n, s, idx);
    rv x = tr_cast(a->v[tr_bcast_index(a, n, idx)], a->dt, cdt), y = tr_cast(b->v[tr_bcast_index(b, n, idx)], b->dt, cdt);
    h.v[k] = tr_binop(op, cdt, x, y);
  }
  return h;
}

static inline href tr_where(const href *c, const href *a, const href *b) {
  int n1, n;
  int64_t s1[TR_MAXDIM], s[TR_MAXDIM], idx[TR_MAXDIM];
  tr_bcast_shape(c->ndim, c->shape, a->ndim, a->shape, &n1, s1);
  tr_bcast_shape(n1, s1, b->ndim, b->shape, &n, s);
  tkc_dtype dt = tkc_least_upper_dtype(a->dt, b->dt);
  href h = tr_new(dt, n, s);
  for (int64_t k = 0; k < h.n; k++) {
    tr_unravel(k, n, s, idx);
    rv cv = tr_cast(c->v[tr_bcast_index(c, n, idx)], c->dt, TKC_BOOL);
    h.v[k] = cv.i ? tr_cast(a->v[tr_bcast_index(a, n, idx)], a->dt, dt) : tr_cast(b->v[tr_bcast_index(b, n, idx)], b->dt, dt);
  }
  return h;
}

enum {
  TR_NEG, TR_ABS, TR_RECIP, TR_SQRT, TR_EXP, TR_EXP2, TR_LOG, TR_LOG2, TR_SIN, TR_COS, TR_TANH, TR_SIGMOID, TR_RELU, TR_NUN
};

static inline tkc_dtype tr_un_out_dt(int op, tkc_dtype dt) {
  if (op == TR_NEG || op == TR_ABS || op == TR_RELU) return dt;
  return tr_isf(dt) ? dt : TKC_FLOAT32;
}

static inline rv tr_unop(int op, tkc_dtype dt, rv a) {
  tkc_dtype o = tr_un_out_dt(op, dt);
  rv r = {0, 0};
  if (op == TR_NEG || op == TR_ABS || op == TR_RELU) {
    if (tr_isf(dt)) {
      r.f = op == TR_NEG ? -a.f : op == TR_ABS ? fabs(a.f) : (a.f > 0 ? a.f : 0.0);
    } else if (dt == TKC_BOOL) {
      r.i = op == TR_NEG ? !a.i : a.i;
    } else if (tr_isu(dt)) {
      r.i = op == TR_NEG ? tr_wrap(dt, 0 - (uint64_t)a.i) : a.i;
    } else {
      r.i = op == TR_NEG ? tr_wrap(dt, 0 - (uint64_t)a.i) : op == TR_ABS ? (a.i < 0 ? -a.i : a.i) : (a.i > 0 ? a.i : 0);
    }
    return r;
  }
  double x = tr_cast(a, dt, o).f, z = 0;
  switch (op) {
  case TR_RECIP: z = 1.0 / x; break;
  case TR_SQRT: z = sqrt(x); break;
  case TR_EXP: z = exp(x); break;
  case TR_EXP2: z = exp2(x); break;
  case TR_LOG: z = log(x); break;
  case TR_LOG2: z = log2(x); break;
  case TR_SIN: z = sin(x); break;
  case TR_COS: z = cos(x); break;
  case TR_TANH: z = tanh(x); break;
  case TR_SIGMOID: z = 1.0 / (1.0 + exp(-x)); break;
  default: break;
  }
  r.f = tr_round(o, z);
  return r;
}

static inline href tr_unary(int op, const href *a) {
  href h = tr_new(tr_un_out_dt(op, a->dt), a->ndim, a->shape);
  for (int64_t k = 0; k < h.n; k++) h.v[k] = tr_unop(op, a->dt, a->v[k]);
  return h;
}

/* ---------------------------------------------------------------- reductions */

enum { TR_SUM, TR_RMAX, TR_RMIN, TR_MEAN };

/* the dtype tkc_sum accumulates ints in (floats: see tr_reduce) */
static inline tkc_dtype tr_sum_acc_dt(tkc_dtype dt) {
  switch (dt) {
  case TKC_BOOL: case TKC_INT8: case TKC_INT16: case TKC_INT32: return TKC_INT32;
  case TKC_UINT8: case TKC_UINT16: case TKC_UINT32: return TKC_UINT32;
  default: return dt;
  }
}
static inline tkc_dtype tr_reduce_out_dt(int kind, tkc_dtype dt) {
  switch (kind) {
  case TR_SUM: return tr_sum_acc_dt(dt);
  case TR_MEAN: return tr_isf(dt) ? dt : TKC_FLOAT32;
  default: return dt;
  }
}

/* reduces a over the given axes (valid, possibly negative; naxes 0 = all) */
static inline href tr_reduce(int kind, const href *a, int naxes, const int *axes, int keepdim) {
  bool red[TR_MAXDIM] = {0};
  if (naxes == 0)
    for (int i = 0; i < a->ndim; i++) red[i] = true;
  for (int i = 0; i < naxes; i++) red[axes[i] < 0 ? axes[i] + a->ndim : axes[i]] = true;
  int64_t ks[TR_MAXDIM], os[TR_MAXDIM] = {0}, idx[TR_MAXDIM];
  int on = 0;
  for (int i = 0; i < a->ndim; i++) {
    ks[i] = red[i] ? 1 : a->shape[i];
    if (!red[i] || keepdim) os[on++] = ks[i];
  }
  tkc_dtype odt = tr_reduce_out_dt(kind, a->dt);
  href h = tr_new(odt, on, os);
  int64_t nk = tr_numel(a->ndim, ks);
  double *fs = calloc(tr_cnt(nk), sizeof *fs);
  int64_t *cnt = calloc(tr_cnt(nk), sizeof *cnt);
  rv *acc = calloc(tr_cnt(nk), sizeof *acc);
  bool *seen = calloc(tr_cnt(nk), 1);
  tkc_dtype adt = kind == TR_SUM ? tr_sum_acc_dt(a->dt) : a->dt;
  for (int64_t k = 0; k < a->n; k++) {
    tr_unravel(k, a->ndim, a->shape, idx);
    for (int i = 0; i < a->ndim; i++)
      if (red[i]) idx[i] = 0;
    int64_t o = tr_ravel(idx, a->ndim, ks);
    rv x = a->v[k];
    cnt[o]++;
    if (kind == TR_SUM || kind == TR_MEAN) {
      if (tr_isf(a->dt)) fs[o] += x.f;
      else {
        rv c = tr_cast(x, a->dt, adt);
        acc[o] = tr_binop(TR_ADD, adt, acc[o], c);
        fs[o] += tr_to_double(a->dt, x);
      }
    } else {
      int op = kind == TR_RMAX ? TR_MAXIMUM : TR_MINIMUM;
      acc[o] = seen[o] ? tr_binop(op, a->dt, acc[o], x) : x;
      seen[o] = true;
    }
  }
  for (int64_t o = 0; o < nk; o++) {
    if (kind == TR_SUM) h.v[o] = tr_isf(a->dt) ? tr_from_double(odt, fs[o]) : acc[o];
    else if (kind == TR_MEAN) h.v[o] = tr_from_double(odt, fs[o] / (double)cnt[o]);
    else h.v[o] = acc[o];
  }
  free(fs), free(cnt), free(acc), free(seen);
  return h;
}

/* ---------------------------------------------------------------- composites */

/* NumPy matmul (1-D operands promoted and squeezed, batch dims broadcast); sums in double */
static inline href tr_matmul(const href *a, const href *b) {
  href A = a->ndim == 1 ? tr_reshape(a, 2, (const int64_t[]){1, a->shape[0]}) : tr_copy(a);
  href B = b->ndim == 1 ? tr_reshape(b, 2, (const int64_t[]){b->shape[0], 1}) : tr_copy(b);
  int64_t M = A.shape[A.ndim - 2], K = A.shape[A.ndim - 1], N = B.shape[B.ndim - 1];
  int nb;
  int64_t bs[TR_MAXDIM], idx[TR_MAXDIM], ia[TR_MAXDIM], ib[TR_MAXDIM];
  tr_bcast_shape(A.ndim - 2, A.shape, B.ndim - 2, B.shape, &nb, bs);
  int64_t os[TR_MAXDIM];
  int on = 0;
  for (int i = 0; i < nb; i++) os[on++] = bs[i];
  if (a->ndim != 1) os[on++] = M;
  if (b->ndim != 1) os[on++] = N;
  tkc_dtype dt = tkc_least_upper_dtype(a->dt, b->dt);
  tkc_dtype adt = tr_isf(dt) ? dt : tr_sum_acc_dt(dt);
  href h = tr_new(dt, on, os); /* tinygrad: sum in the accumulator dtype, cast back to the operands' */
  int64_t nbatch = tr_numel(nb, bs), k = 0;
  for (int64_t bi = 0; bi < nbatch; bi++) {
    tr_unravel(bi, nb, bs, idx);
    for (int i = 0; i < A.ndim - 2; i++) ia[i] = A.shape[i] == 1 ? 0 : idx[i + nb - (A.ndim - 2)];
    for (int i = 0; i < B.ndim - 2; i++) ib[i] = B.shape[i] == 1 ? 0 : idx[i + nb - (B.ndim - 2)];
    int64_t oa = tr_ravel(ia, A.ndim - 2, A.shape) * M * K, ob = tr_ravel(ib, B.ndim - 2, B.shape) * K * N;
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++) {
        double s = 0;
        rv acc = {0, 0};
        for (int64_t q = 0; q < K; q++) {
          rv x = tr_cast(A.v[oa + m * K + q], A.dt, dt), y = tr_cast(B.v[ob + q * N + n], B.dt, dt);
          if (tr_isf(dt)) s += x.f * y.f;
          else acc = tr_binop(TR_ADD, adt, acc, tr_cast(tr_binop(TR_MUL, dt, x, y), dt, adt));
        }
        h.v[k++] = tr_isf(dt) ? tr_from_double(dt, s) : tr_cast(acc, adt, dt);
      }
  }
  tr_free(&A), tr_free(&B);
  return h;
}

/* softmax / log_softmax along axis (float input), in double */
static inline href tr_softmax(const href *a, int axis, bool logsm) {
  if (axis < 0) axis += a->ndim;
  href h = tr_new(a->dt, a->ndim, a->shape);
  int64_t outer = 1, inner = 1, n = a->shape[axis];
  for (int i = 0; i < axis; i++) outer *= a->shape[i];
  for (int i = axis + 1; i < a->ndim; i++) inner *= a->shape[i];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      double m = -INFINITY, s = 0;
      for (int64_t j = 0; j < n; j++) m = fmax(m, a->v[(o * n + j) * inner + in].f);
      for (int64_t j = 0; j < n; j++) s += exp(a->v[(o * n + j) * inner + in].f - m);
      for (int64_t j = 0; j < n; j++) {
        double x = a->v[(o * n + j) * inner + in].f - m;
        h.v[(o * n + j) * inner + in].f = tr_round(a->dt, logsm ? x - log(s) : exp(x) / s);
      }
    }
  return h;
}

/* conv2d: x (N,C,H,W), w (O,C,KH,KW), bias (O) or NULL; float dtypes; zero padding */
static inline href tr_conv2d(const href *x, const href *w, const href *bias, int stride, int pad) {
  int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
  int64_t O = w->shape[0], KH = w->shape[2], KW = w->shape[3];
  int64_t OH = (H + 2 * pad - KH) / stride + 1, OW = (W + 2 * pad - KW) / stride + 1;
  tkc_dtype dt = tkc_least_upper_dtype(x->dt, w->dt);
  if (bias) dt = tkc_least_upper_dtype(dt, bias->dt);
  href h = tr_new(dt, 4, (const int64_t[]){N, O, OH, OW});
  for (int64_t n = 0; n < N; n++)
    for (int64_t o = 0; o < O; o++)
      for (int64_t oy = 0; oy < OH; oy++)
        for (int64_t ox = 0; ox < OW; ox++) {
          double s = bias ? tr_to_double(bias->dt, bias->v[o]) : 0;
          for (int64_t c = 0; c < C; c++)
            for (int64_t ky = 0; ky < KH; ky++)
              for (int64_t kx = 0; kx < KW; kx++) {
                int64_t iy = oy * stride + ky - pad, ix = ox * stride + kx - pad;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                s += tr_to_double(x->dt, x->v[((n * C + c) * H + iy) * W + ix]) *
                     tr_to_double(w->dt, w->v[((o * C + c) * KH + ky) * KW + kx]);
              }
          h.v[((n * O + o) * OH + oy) * OW + ox] = tr_from_double(dt, s);
        }
  return h;
}

/* ---------------------------------------------------------------- misc */

/* a valid computation on ctx after a failure: (x + 1) * 2 on 3 floats */
static inline bool tr_ctx_works(tkc_ctx *ctx) {
  float in[3] = {1, 2, 3}, out[3] = {0};
  int64_t s[1] = {3};
  tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 1, s, in);
  tkc_tensor *y = tkc_mul(tkc_add(x, tkc_scalar(ctx, TKC_FLOAT32, 1)), tkc_scalar(ctx, TKC_FLOAT32, 2));
  bool ok = y && tkc_copy_out(y, out, sizeof out) == TKC_OK && out[0] == 4 && out[1] == 6 && out[2] == 8;
  if (!ok) printf("  ctx broken after a failure: %s\n", tkc_last_error());
  return ok;
}

/* the number of kernel functions in C source: lines starting with "void " */
static inline int tr_count_c_kernels(const char *src) {
  int n = 0;
  for (const char *p = src; p && *p;) {
    if (strncmp(p, "void ", 5) == 0) n++;
    const char *nl = strchr(p, '\n');
    p = nl ? nl + 1 : NULL;
  }
  return n;
}

/* ---------------------------------------------------------------- view recipes
 * A list of movement steps applied the same way to a tkc tensor and to its reference, so a test can
 * build non-contiguous inputs (permuted, flipped, padded, shrunk, expanded, chains of them). */
enum { TS_END, TS_RESHAPE, TS_PERMUTE, TS_TRANSPOSE, TS_EXPAND, TS_PAD, TS_SHRINK, TS_FLIP, TS_CONTIG };
typedef struct tr_step {
  int kind;
  int n;                      /* entries of a used: ndim (reshape/expand/permute), naxes (flip) */
  int64_t a[2 * TR_MAXDIM];   /* shape / order / pads / ranges / axes */
  double value;               /* pad fill */
} tr_step;

static inline const char *tr_step_name(int k) {
  static const char *const names[] = {"end", "reshape", "permute", "transpose", "expand", "pad", "shrink", "flip", "contiguous"};
  return k >= 0 && k <= TS_CONTIG ? names[k] : "?";
}

/* Applies steps (ended by TS_END) to *t and *h; the intermediate tensors stay owned by the ctx.
 * On a NULL result the problem is reported and *t is NULL. */
static inline void tr_apply(tkc_tensor **t, href *h, const tr_step *steps) {
  for (const tr_step *s = steps; s->kind != TS_END; s++) {
    int ord[TR_MAXDIM];
    int64_t shp[TR_MAXDIM];
    for (int i = 0; i < s->n && i < TR_MAXDIM; i++) ord[i] = (int)s->a[i], shp[i] = s->a[i];
    href r;
    tkc_tensor *x = NULL;
    switch (s->kind) {
    case TS_RESHAPE: x = tkc_reshape(*t, s->n, shp); r = tr_reshape(h, s->n, shp); break;
    case TS_PERMUTE: x = tkc_permute(*t, ord); r = tr_permute(h, ord); break;
    case TS_TRANSPOSE: x = tkc_transpose(*t, ord[0], ord[1]); r = tr_transpose(h, ord[0], ord[1]); break;
    case TS_EXPAND: x = tkc_expand(*t, s->n, shp); r = tr_expand(h, s->n, shp); break;
    case TS_PAD: x = tkc_pad(*t, s->a, s->value); r = tr_pad(h, s->a, s->value); break;
    case TS_SHRINK: x = tkc_shrink(*t, s->a); r = tr_shrink(h, s->a); break;
    case TS_FLIP: x = tkc_flip(*t, s->n, ord); r = tr_flip(h, s->n, ord); break;
    default: x = tkc_contiguous(*t); r = tr_copy(h); break;
    }
    if (!x && *t) tr_problem("view step %s returned NULL: %s", tr_step_name(s->kind), tkc_last_error());
    tr_free(h);
    *h = r;
    *t = x;
  }
}
#define TR_STEPS(...) ((const tr_step[]){__VA_ARGS__, {TS_END, 0, {0}, 0}})
#define TR_RESHAPE(...) {TS_RESHAPE, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), {__VA_ARGS__}, 0}
#define TR_PERMUTE(...) {TS_PERMUTE, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), {__VA_ARGS__}, 0}
#define TR_TRANSPOSE(x, y) {TS_TRANSPOSE, 2, {x, y}, 0}
#define TR_EXPAND(...) {TS_EXPAND, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), {__VA_ARGS__}, 0}
#define TR_PAD(v, ...) {TS_PAD, 0, {__VA_ARGS__}, v}
#define TR_SHRINK(...) {TS_SHRINK, 0, {__VA_ARGS__}, 0}
#define TR_FLIP(...) {TS_FLIP, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), {__VA_ARGS__}, 0}
#define TR_CONTIG() {TS_CONTIG, 0, {0}, 0}

/* a random base tensor of dt and shape, uploaded, then transformed by steps */
static inline tkc_tensor *tr_make(tkc_ctx *ctx, tkc_dtype dt, int ndim, const int64_t *shape, int dom, const tr_step *steps, href *h) {
  *h = tr_rand(dt, ndim, shape, dom);
  tkc_tensor *t = tr_upload(ctx, h);
  if (!t) tr_problem("tkc_tensor_new(%s) failed: %s", tr_dn(dt), tkc_last_error());
  if (steps) tr_apply(&t, h, steps);
  return t;
}

#endif
