/* Helpers shared by the kernel suites: build lowered kernels by hand, run them on a device,
 * independent reference conversions for float16/bfloat16. Header-only, included by tests. */
#ifndef TKC_TEST_KERNEL_UTIL_H
#define TKC_TEST_KERNEL_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tkc/runtime.h"

static inline tkc_dt dt_(tkc_dtype d) { return tkc_dt_of(d); }
static inline tkc_dt ptr_(tkc_dtype d) { return tkc_dt_ptr(tkc_dt_of(d), TKC_SPACE_GLOBAL, -1); }
static inline tkc_uop *k_op(tkc_graph *g, tkc_op op, tkc_dt dt, int n, tkc_uop *a, tkc_uop *b, tkc_uop *c) {
  tkc_uop *s[3] = {a, b, c};
  return tkc_uop_new(g, op, dt, n, s, tkc_arg_none());
}
static inline tkc_uop *k_int(tkc_graph *g, int64_t v) { return tkc_uop_const_int(g, dt_(TKC_INT32), v); }
static inline tkc_uop *k_buf(tkc_graph *g, int n, tkc_dtype d) {
  return tkc_uop_new(g, TKC_OP_DEFINE_GLOBAL, ptr_(d), 0, NULL, tkc_arg_int(n));
}
static inline tkc_uop *k_range(tkc_graph *g, int64_t end, int axis) { return tkc_uop_range(g, k_int(g, 0), k_int(g, end), axis); }
static inline tkc_uop *k_range_to(tkc_graph *g, tkc_uop *end, int axis) { return tkc_uop_range(g, k_int(g, 0), end, axis); }
static inline tkc_uop *k_index(tkc_graph *g, tkc_uop *b, tkc_uop *idx) { return k_op(g, TKC_OP_INDEX, b->dtype, 2, b, idx, NULL); }
static inline tkc_uop *k_index_gated(tkc_graph *g, tkc_uop *b, tkc_uop *idx, tkc_uop *gate) {
  return k_op(g, TKC_OP_INDEX, b->dtype, 3, b, idx, gate);
}
static inline tkc_uop *k_load(tkc_graph *g, tkc_uop *b, tkc_uop *idx) {
  return k_op(g, TKC_OP_LOAD, tkc_dt_base(b->dtype), 1, k_index(g, b, idx), NULL, NULL);
}
static inline tkc_uop *k_store(tkc_graph *g, tkc_uop *b, tkc_uop *idx, tkc_uop *v) {
  return k_op(g, TKC_OP_STORE, dt_(TKC_VOID), 2, k_index(g, b, idx), v, NULL);
}
static inline tkc_uop *k_add(tkc_graph *g, tkc_uop *a, tkc_uop *b) { return tkc_uop_alu2(g, TKC_OP_ADD, a, b); }
static inline tkc_uop *k_mul(tkc_graph *g, tkc_uop *a, tkc_uop *b) { return tkc_uop_alu2(g, TKC_OP_MUL, a, b); }
static inline tkc_uop *k_sink1(tkc_graph *g, tkc_uop *st) { return tkc_uop_sink(g, 1, &st); }

/* The dtypes (bitmask over tkc_dtype) a kernel uses: its buffers' and every UOp's element type. */
static inline uint32_t k_dtypes_used(tkc_uop *sink, int nbufs, const tkc_dtype *dts) {
  uint32_t m = 0;
  for (int i = 0; i < nbufs; i++) m |= 1u << (unsigned)dts[i];
  size_t n = 0;
  tkc_uop **all = tkc_toposort(sink, &n);
  for (size_t i = 0; all && i < n; i++)
    if (all[i]->dtype.scalar < TKC_VOID) m |= 1u << all[i]->dtype.scalar;
  tkc_free(all);
  return m;
}

/* Runs sink on device dev with nbufs host arrays (copied in, launched, copied back into the same
 * arrays). Returns the launch status (compile errors included).
 * A kernel using a dtype the device's renderer cannot hold (its unsupported_dtypes) must fail to
 * build with TKC_EUNSUPPORTED and a message naming one of those dtypes; when it does, the kernel
 * runs on INTERP instead (so the caller's checks still hold), otherwise TKC_EINTERNAL is returned. */
/* Builds sink as a program called name on dev, runs it on copies of host[i] (ns[i] elements of
 * dts[i]) and copies the buffers back into host. */
static inline tkc_status k_run_named(const char *dev, const char *name, tkc_graph *g, tkc_uop *sink, int nbufs, const tkc_dtype *dts,
                                     const size_t *ns, void **host, const int64_t *vars, int nvars) {
  tkc_device *d = tkc_device_get(dev);
  if (!d) return tkc_last_status();
  const tkc_renderer *r = tkc_device_renderer(d);
  uint32_t bad = r ? r->unsupported_dtypes & k_dtypes_used(sink, nbufs, dts) : 0;
  if (bad) {
    tkc_program *p = tkc_program_new(d, g, sink, name);
    const char *named = NULL;
    for (int t = 0; t < TKC_VOID && !p; t++)
      if ((bad >> t) & 1u && strstr(tkc_last_error(), tkc_dtype_name((tkc_dtype)t))) named = tkc_dtype_name((tkc_dtype)t);
    if (p || tkc_last_status() != TKC_EUNSUPPORTED || !named) {
      printf("%s: a kernel with a dtype %s cannot hold built %s: %s\n", dev, r->name, p ? "anyway" : "with the wrong error",
             p ? "" : tkc_last_error());
      tkc_program_free(p);
      return TKC_EINTERNAL;
    }
    printf("note: %s rejects %s as expected (TKC_EUNSUPPORTED); checked on INTERP instead\n", dev, named);
    if (!(d = tkc_device_get("INTERP"))) return tkc_last_status();
  }
  tkc_program *p = tkc_program_new(d, g, sink, name);
  if (!p) return tkc_last_status();
  tkc_buffer *bufs[16] = {0};
  tkc_status st = TKC_OK;
  for (int i = 0; i < nbufs && !st; i++) {
    bufs[i] = tkc_buffer_new(d, dts[i], ns[i]);
    st = bufs[i] ? tkc_buffer_copyin(bufs[i], host[i], ns[i] * tkc_dtype_size(dts[i])) : tkc_last_status();
  }
  if (!st) st = tkc_program_launch(p, bufs, nbufs, vars, nvars);
  for (int i = 0; i < nbufs && !st; i++) st = tkc_buffer_copyout(bufs[i], host[i], ns[i] * tkc_dtype_size(dts[i]));
  for (int i = 0; i < nbufs; i++) tkc_buffer_free(bufs[i]);
  tkc_program_free(p);
  return st;
}

static inline tkc_status k_run(const char *dev, tkc_graph *g, tkc_uop *sink, int nbufs, const tkc_dtype *dts,
                               const size_t *ns, void **host, const int64_t *vars, int nvars) {
  return k_run_named(dev, "test_kernel", g, sink, nbufs, dts, ns, host, vars, nvars);
}

/* ---- independent float16 / bfloat16 references (not the library's converters) ---- */

/* exact value of a half bit pattern */
static inline double ref_half_value(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -v : v;
}
/* nearest half (ties to even) by searching the ordered table of positive halves */
static inline uint16_t ref_half_bits(double x) {
  if (isnan(x)) return 0x7e00;
  uint16_t sign = signbit(x) ? 0x8000 : 0;
  double a = fabs(x);
  if (a >= 65520.0) return sign | 0x7c00;
  unsigned lo = 0, hi = 0x7bff; /* positive finite halves are increasing in their bit pattern */
  while (lo < hi) { /* largest pattern with value <= a */
    unsigned mid = (lo + hi + 1) / 2;
    if (ref_half_value((uint16_t)mid) <= a) lo = mid; else hi = mid - 1;
  }
  unsigned best = lo;
  if (lo < 0x7bff) {
    double d0 = a - ref_half_value((uint16_t)lo), d1 = ref_half_value((uint16_t)(lo + 1)) - a;
    if (d1 < d0 || (d1 == d0 && (lo & 1))) best = lo + 1;
  } else if (a > 65504.0) best = 0x7bff;
  return (uint16_t)(sign | best);
}
static inline double ref_bf16_value(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* ---- typed element access of host arrays (float16/bfloat16 through the references above) ---- */

static inline double k_get_f(const void *p, tkc_dtype dt, size_t i) {
  switch (dt) {
  case TKC_FLOAT32: return ((const float *)p)[i];
  case TKC_FLOAT64: return ((const double *)p)[i];
  case TKC_FLOAT16: return ref_half_value(((const uint16_t *)p)[i]);
  case TKC_BFLOAT16: return ref_bf16_value(((const uint16_t *)p)[i]);
  default: return 0;
  }
}
static inline int64_t k_get_i(const void *p, tkc_dtype dt, size_t i) {
  switch (dt) {
  case TKC_BOOL: return ((const uint8_t *)p)[i] != 0;
  case TKC_INT8: return ((const int8_t *)p)[i];
  case TKC_UINT8: return ((const uint8_t *)p)[i];
  case TKC_INT16: return ((const int16_t *)p)[i];
  case TKC_UINT16: return ((const uint16_t *)p)[i];
  case TKC_INT32: return ((const int32_t *)p)[i];
  case TKC_UINT32: return ((const uint32_t *)p)[i];
  case TKC_INT64: case TKC_UINT64: return ((const int64_t *)p)[i];
  default: return (int64_t)k_get_f(p, dt, i);
  }
}
static inline uint16_t k_bf16_bits(float f) { /* to nearest even, as numpy/torch (and tkc) */
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
/* stores the C-cast of integer v / float f into element i */
static inline void k_put_i(void *p, tkc_dtype dt, size_t i, int64_t v) {
  switch (dt) {
  case TKC_BOOL: ((uint8_t *)p)[i] = v != 0; break;
  case TKC_INT8: case TKC_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
  case TKC_INT16: case TKC_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
  case TKC_INT32: case TKC_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
  case TKC_INT64: case TKC_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; break;
  case TKC_FLOAT32: ((float *)p)[i] = (float)v; break;
  case TKC_FLOAT64: ((double *)p)[i] = (double)v; break;
  case TKC_FLOAT16: ((uint16_t *)p)[i] = ref_half_bits((double)v); break;
  case TKC_BFLOAT16: ((uint16_t *)p)[i] = k_bf16_bits((float)v); break;
  default: break;
  }
}

#endif
