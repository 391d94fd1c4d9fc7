/* Shapes and dtypes in error messages, as the user wrote them: "(2,3)", "(3,)", "()". */
#include <stdio.h>
#include <string.h>
#include "graph/tensor_internal.h"

/* one dim at b + k: "4", or a variable dim "var0", "var0+1" */
static size_t dim_fmt(char *b, size_t n, int64_t d) {
  int64_t c, var = tkc_dim_var_number(d, &c);
  return (size_t)(var >= 0 ? snprintf(b, n, c ? "var%lld%+lld" : "var%lld", (long long)var, (long long)c) : snprintf(b, n, "%lld", (long long)d));
}

const char *tkc_shape_fmt(tkc_shape_str *b, int ndim, const int64_t *shape) {
  size_t k = 0, n = sizeof b->s;
  b->s[k++] = '(';
  for (int i = 0; i < ndim && shape && k < n; i++) {
    if (i) b->s[k++] = ',';
    if (k < n) k += dim_fmt(b->s + k, n - k, shape[i]);
  }
  if (k < n) k += (size_t)snprintf(b->s + k, n - k, ndim == 1 ? ",)" : ")");
  b->s[n - 1] = 0;
  return b->s;
}

const char *tkc_dim_fmt(tkc_shape_str *b, int64_t dim) {
  dim_fmt(b->s, sizeof b->s, dim);
  return b->s;
}

const char *tkc_dtype_str(tkc_dtype dt) {
  const char *s = tkc_dtype_name(dt);
  return s ? s : dt == TKC_VOID ? "void" : "an unknown dtype";
}

const char *tkc_dtype_list(void) {
  return "bool, int8, uint8, int16, uint16, int32, uint32, int64, uint64, float16, bfloat16, float32, float64, float8_e4m3fn, float8_e5m2";
}

tkc_status tkc_ctx_check_dtype(const tkc_ctx *ctx, tkc_dtype dt, const char *what) {
  const tkc_renderer *r = ctx ? tkc_device_renderer(ctx->dev) : NULL;
  if (!r || (unsigned)dt >= 32 || !(r->unsupported_dtypes >> dt & 1u)) return TKC_OK;
  const char *dev = tkc_device_name(ctx->dev), *name = tkc_dtype_str(dt);
  const char *instead = tkc_dtype_is_float(dt) ? "float32" : tkc_dtype_is_unsigned(dt) ? "uint32" : "int32";
  if (!strcmp(r->name, "WGSL") && tkc_dtype_size(dt) == 8)
    return tkc_err(TKC_EUNSUPPORTED, "%s%s%s is not supported on %s (WGSL has no 64-bit types): cast to %s or use the CPU device", what ? what : "",
                   what ? ": " : "", name, dev, instead);
  return tkc_err(TKC_EUNSUPPORTED, "%s%s%s is not supported on %s (the %s renderer cannot hold it): cast to %s or use the CPU device", what ? what : "",
                 what ? ": " : "", name, dev, r->name, instead);
}
