/* src/io/int8_rows.c — per-row int8 weights (tinygrad's llama Int8Linear): symmetric absmax
 * quantization of each row to int8 with one float32 scale, and the dequantization as lazy tensor ops
 * that fuse into the consuming matmul (the float weights never exist in memory). Public API only. */
#include <stdbool.h>
#include "tkc.h"
#include "tkc/ops_math.h" /* tkc_round, tkc_clamp */
#include "tkc/ops_nn.h"
#include "tkc/uop.h" /* tkc_dtype_is_float */

/* the library's error recorder (src/base/common.h), declared here as src/io/quant.c does */
tkc_status tkc_err(tkc_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* the temporaries of one call: every one is freed at the end (results keep what they read) */
#define TEMPS_MAX 16
typedef struct tmps {
  tkc_tensor *t[TEMPS_MAX];
  int n;
} tmps;
static tkc_tensor *T(tmps *s, tkc_tensor *x) {
  if (x && s->n < TEMPS_MAX) s->t[s->n++] = x;
  return x;
}
static void drop(tmps *s) {
  for (int i = 0; i < s->n; i++) tkc_tensor_free(s->t[i]);
  s->n = 0;
}

tkc_status tkc_quantize_int8_rows(tkc_tensor *w, tkc_tensor **q, tkc_tensor **scale) {
  if (q) *q = NULL;
  if (scale) *scale = NULL;
  if (!w || !q || !scale) return tkc_err(TKC_EINVAL, "quantize_int8_rows: NULL %s", !w ? "weights" : !q ? "q" : "scale");
  tkc_dtype dt = tkc_dtype_of(w);
  if (dt == TKC_VOID) return tkc_last_status(); /* a freed or foreign handle: the error says which */
  if (tkc_ndim(w) != 2) return tkc_err(TKC_ESHAPE, "quantize_int8_rows: weights of %d dims (2 expected: rows, columns)", tkc_ndim(w));
  if (!tkc_dtype_is_float(dt)) return tkc_err(TKC_EDTYPE, "quantize_int8_rows: weights of %s (a float dtype expected)", tkc_dtype_name(dt));
  int64_t n = tkc_dim(w, 0), k = tkc_dim(w, 1);
  if (k <= 0) return tkc_err(TKC_ESHAPE, "quantize_int8_rows: rows of %lld values have no scale", (long long)k);
  tmps s = {.n = 0};
  tkc_ctx *ctx = tkc_tensor_ctx(w);
  int axis = 1;
  tkc_tensor *wf = T(&s, tkc_cast(w, TKC_FLOAT32));
  tkc_tensor *absmax = T(&s, tkc_max(T(&s, tkc_abs(wf)), 1, &axis, 1));                                 /* (n, 1) */
  tkc_tensor *sc = T(&s, tkc_div(absmax, T(&s, tkc_scalar(ctx, TKC_FLOAT32, 127.0))));                   /* absmax / 127 */
  tkc_tensor *zero = T(&s, tkc_eq(sc, T(&s, tkc_scalar(ctx, TKC_FLOAT32, 0.0))));
  tkc_tensor *safe = T(&s, tkc_where(zero, T(&s, tkc_scalar(ctx, TKC_FLOAT32, 1.0)), sc));              /* a zero row: q = 0 */
  tkc_tensor *r = T(&s, tkc_clamp(T(&s, tkc_round(T(&s, tkc_div(wf, safe)))), -127.0, 127.0));          /* half to even */
  tkc_tensor *qi = tkc_cast(r, TKC_INT8), *sv = tkc_reshape(sc, 1, &n);
  drop(&s);
  tkc_tensor *both[2] = {qi, sv};
  tkc_status st = qi && sv ? tkc_realize_all(2, both) : tkc_last_status();
  if (st) {
    tkc_tensor_free(qi), tkc_tensor_free(sv);
    return st;
  }
  *q = qi, *scale = sv;
  return TKC_OK;
}

tkc_tensor *tkc_dequantize_int8_rows(tkc_tensor *q, tkc_tensor *scale) {
  if (!q || !scale) {
    (void)tkc_err(TKC_EINVAL, "dequantize_int8_rows: NULL %s", !q ? "q" : "scale");
    return NULL;
  }
  tkc_dtype qd = tkc_dtype_of(q), sd = tkc_dtype_of(scale);
  if (qd == TKC_VOID || sd == TKC_VOID) return NULL; /* a freed or foreign handle: the error says which */
  if (tkc_tensor_ctx(q) != tkc_tensor_ctx(scale)) {
    (void)tkc_err(TKC_EINVAL, "dequantize_int8_rows: q and scale belong to different ctxs");
    return NULL;
  }
  if (qd != TKC_INT8 || !tkc_dtype_is_float(sd)) {
    (void)tkc_err(TKC_EDTYPE, "dequantize_int8_rows: q of %s and scale of %s (int8 and a float dtype expected)", tkc_dtype_name(qd),
                  tkc_dtype_name(sd));
    return NULL;
  }
  int64_t n = tkc_ndim(q) == 2 ? tkc_dim(q, 0) : -1;
  if (n < 0 || tkc_ndim(scale) != 1 || tkc_dim(scale, 0) != n) {
    (void)tkc_err(TKC_ESHAPE, "dequantize_int8_rows: q of %d dims (2 expected) with %lld rows and a scale of %d dims and %lld values (one per row expected)",
                  tkc_ndim(q), (long long)n, tkc_ndim(scale), (long long)tkc_numel(scale));
    return NULL;
  }
  tmps s = {.n = 0};
  int64_t col[2] = {n, 1};
  tkc_tensor *y = tkc_mul(T(&s, tkc_cast(q, TKC_FLOAT32)), T(&s, tkc_reshape(T(&s, tkc_cast(scale, TKC_FLOAT32)), 2, col)));
  drop(&s);
  return y;
}
