/* Variables of a ctx (tkc_dim_var): named ints with bounds, bound to a value for the next realizes.
 * A kernel reads a variable as a DEFINE_VAR parameter, so the one compiled kernel serves every value.
 *
 * A dim token is an int64 far below any real dim (in [-2^62, -2^62 + 2^61)) standing for
 * "variable + c": the ctx's serial number (16 bits), the variable's index (12 bits) and c + 2^32
 * (33 bits). tkc_dim_var returns the token with c = 0, and token + k is the variable plus k, so
 * shapes can say L + 1. Only |c| < 2^20 is allowed: the offset field is far wider than that so a
 * token pushed past the limit (L + 2^20, L - 5000000) decodes as L with a refused offset instead of
 * as a neighbouring variable. Every token is decoded by tkc_dim_decode, which refuses offsets past
 * +-2^20 (for |k| < 2^32 - 2^20 the variable is still named), and tokens of another ctx (unless
 * 2^16 ctxs apart) or made up ones. */
#include <stdatomic.h>
#include <string.h>
#include "graph/tensor_internal.h"

#define TOKEN_BASE (INT64_MIN / 2)
#define OFF_BITS 33
#define VAR_BITS 12
#define SERIAL_BITS 16
#define OFF_ZERO (INT64_C(1) << (OFF_BITS - 1))
#define OFF_LIMIT (INT64_C(1) << 20) /* |c| < OFF_LIMIT, as include/tkc.h documents */

static _Atomic uint64_t next_serial = 1;

uint64_t tkc_ctx_serial_new(void) { return atomic_fetch_add(&next_serial, 1) & ((UINT64_C(1) << SERIAL_BITS) - 1); }

int tkc_dim_is_var(int64_t dim) { return dim >= TOKEN_BASE && dim < TOKEN_BASE + (INT64_C(1) << (OFF_BITS + VAR_BITS + SERIAL_BITS)); }

static int64_t token_of(uint64_t serial, int index, int64_t c) {
  return TOKEN_BASE + (int64_t)((serial << (OFF_BITS + VAR_BITS)) | ((uint64_t)index << OFF_BITS)) + OFF_ZERO + c;
}

tkc_ctx_var *tkc_dim_decode(const tkc_ctx *ctx, int64_t token, int64_t *c, const char *who) {
  if (!ctx) return tkc_err_null(TKC_EINVAL, "%s: NULL ctx", who);
  if (!tkc_dim_is_var(token)) return tkc_err_null(TKC_EINVAL, "%s: %lld is not a variable (tkc_dim_var makes them)", who, (long long)token);
  uint64_t t = (uint64_t)(token - TOKEN_BASE), serial = t >> (OFF_BITS + VAR_BITS), i = (t >> OFF_BITS) & ((1u << VAR_BITS) - 1);
  if (serial != ctx->serial) return tkc_err_null(TKC_EINVAL, "%s: the variable belongs to another ctx", who);
  if (i >= (uint64_t)ctx->nvars) return tkc_err_null(TKC_EINVAL, "%s: no such variable in this ctx", who);
  int64_t off = (int64_t)(t & ((UINT64_C(1) << OFF_BITS) - 1)) - OFF_ZERO;
  if (off <= -OFF_LIMIT || off >= OFF_LIMIT)
    return tkc_err_null(TKC_EUNSUPPORTED, "%s: dim %s%+lld: a variable plus a constant past +-2^20 (|c| < 2^20)", who, ctx->vars[i].name,
                        (long long)off);
  if (c) *c = off;
  return &ctx->vars[i];
}

int64_t tkc_dim_var_number(int64_t dim, int64_t *c) {
  if (!tkc_dim_is_var(dim)) return -1;
  uint64_t t = (uint64_t)(dim - TOKEN_BASE);
  *c = (int64_t)(t & ((UINT64_C(1) << OFF_BITS) - 1)) - OFF_ZERO;
  return (int64_t)((t >> OFF_BITS) & ((1u << VAR_BITS) - 1));
}

tkc_ctx_var *tkc_var_of(const tkc_ctx *ctx, int64_t token, const char *who) {
  int64_t c = 0; /* set when v is not NULL: gcc -O3 cannot see that */
  tkc_ctx_var *v = tkc_dim_decode(ctx, token, &c, who);
  if (v && c) return tkc_err_null(TKC_EINVAL, "%s: %s%+lld is not a variable but an expression of one", who, v->name, (long long)c);
  return v;
}

int tkc_shape_check_dims(const tkc_ctx *ctx, int ndim, const int64_t *shape, int64_t *max, const char *who) {
  for (int i = 0; i < ndim; i++) {
    if (!tkc_dim_is_var(shape[i])) {
      if (max) max[i] = shape[i];
      continue;
    }
    int64_t c = 0; /* set when v is not NULL: gcc -O3 cannot see that */
    tkc_ctx_var *v = tkc_dim_decode(ctx, shape[i], &c, who);
    if (!v) return -1;
    if (v->min + c < 0) {
      tkc_err(TKC_ESHAPE, "%s: dim %d, %s%+lld, is negative for %s = %lld", who, i, v->name, (long long)c, v->name, (long long)v->min);
      return -1;
    }
    if (max) max[i] = v->max + c;
  }
  return 0;
}

void tkc_shape_max(const tkc_ctx *ctx, int ndim, const int64_t *shape, int64_t *max) {
  for (int i = 0; i < ndim; i++) {
    int64_t c = 0;
    const tkc_ctx_var *v = tkc_dim_is_var(shape[i]) ? tkc_dim_decode(ctx, shape[i], &c, "shape") : NULL;
    max[i] = v ? v->max + c : shape[i];
  }
}

int64_t tkc_shape_bound(const tkc_ctx *ctx, int ndim, const int64_t *shape, int64_t *bound, const char *who) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) {
    int64_t d = shape[i], c = 0;
    if (tkc_dim_is_var(d)) {
      tkc_ctx_var *v = tkc_dim_decode(ctx, d, &c, who);
      if (!v) return -1;
      if (v->value < 0) return tkc_err(TKC_EINVAL, "%s: variable %s is not bound (tkc_dim_bind)", who, v->name), -1;
      d = v->value + c;
    }
    if (bound) bound[i] = d;
    n *= d;
  }
  return n;
}

int64_t tkc_shape_numel_max(const tkc_ctx *ctx, int ndim, const int64_t *shape) {
  int64_t max[TKC_MAX_DIMS];
  tkc_shape_max(ctx, ndim, shape, max);
  return tkc_shape_numel(ndim, max);
}

void tkc_st_contiguous_max(tkc_st *st, const tkc_ctx *ctx, int ndim, const int64_t *shape) {
  int64_t max[TKC_MAX_DIMS];
  tkc_shape_max(ctx, ndim, shape, max);
  tkc_st_contiguous(st, ndim, max);
}

int tkc_shape_is_symbolic(int ndim, const int64_t *shape) {
  for (int i = 0; i < ndim; i++)
    if (tkc_dim_is_var(shape[i])) return 1;
  return 0;
}

static int is_identifier(const char *s) {
  if (!s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z'))) return 0;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_')) return 0;
  return 1;
}

int64_t tkc_dim_var(tkc_ctx *ctx, const char *name, int64_t min, int64_t max) {
  if (!ctx) return tkc_err(TKC_EINVAL, "tkc_dim_var: NULL ctx"), 0;
  if (!is_identifier(name) || strlen(name) >= sizeof ctx->vars[0].name)
    return tkc_err(TKC_EINVAL, "tkc_dim_var: name \"%s\" is not an identifier of 1 to %zu letters, digits and _ (starting with a letter)",
                   name ? name : "(null)", sizeof ctx->vars[0].name - 1), 0;
  if (min < 0 || max < min || max > INT32_MAX)
    return tkc_err(TKC_EINVAL, "tkc_dim_var: %s: bounds [%lld, %lld] must satisfy 0 <= min <= max <= 2^31-1", name, (long long)min,
                   (long long)max), 0;
  for (int i = 0; i < ctx->nvars; i++)
    if (!strcmp(ctx->vars[i].name, name)) return tkc_err(TKC_EINVAL, "tkc_dim_var: this ctx has a variable %s already", name), 0;
  if (ctx->nvars == ctx->capvars) {
    int cap = ctx->capvars ? 2 * ctx->capvars : 8;
    if (cap > (1 << VAR_BITS)) return tkc_err(TKC_EINVAL, "tkc_dim_var: more than %d variables in one ctx", 1 << VAR_BITS), 0;
    tkc_ctx_var *v = tkc_realloc(ctx->vars, (size_t)cap * sizeof *v);
    if (!v) return tkc_err(TKC_ENOMEM, "out of memory creating variable %s", name), 0;
    ctx->vars = v, ctx->capvars = cap;
  }
  tkc_ctx_var *v = &ctx->vars[ctx->nvars];
  memset(v, 0, sizeof *v);
  strcpy(v->name, name);
  v->min = min, v->max = max, v->value = -1;
  return token_of(ctx->serial, ctx->nvars++, 0);
}

tkc_status tkc_dim_bind(tkc_ctx *ctx, int64_t var, int64_t value) {
  tkc_ctx_var *v = tkc_var_of(ctx, var, "tkc_dim_bind");
  if (!v) return tkc_last_status();
  if (value < v->min || value > v->max)
    return tkc_err(TKC_EINVAL, "tkc_dim_bind: %s = %lld is outside its bounds [%lld, %lld]", v->name, (long long)value, (long long)v->min,
                   (long long)v->max);
  v->value = value;
  return TKC_OK;
}

int64_t tkc_dim_value(tkc_ctx *ctx, int64_t dim) {
  if (!tkc_dim_is_var(dim)) return dim;
  return tkc_shape_bound(ctx, 1, &dim, NULL, "tkc_dim_value");
}

const tkc_ctx_var *tkc_ctx_var_named(const tkc_ctx *ctx, const char *name) {
  for (int i = 0; i < ctx->nvars; i++)
    if (!strcmp(ctx->vars[i].name, name)) return &ctx->vars[i];
  return NULL;
}

/* the variable of dim d (NULL: plain), c, and the least and largest values of d */
static int dim_range(const tkc_ctx *ctx, int64_t d, const tkc_ctx_var **v, int64_t *c, int64_t *lo, int64_t *hi, const char *who) {
  *v = NULL, *c = d, *lo = *hi = d;
  if (!tkc_dim_is_var(d)) return 0;
  if (!(*v = tkc_dim_decode(ctx, d, c, who))) return -1;
  *lo = (*v)->min + *c, *hi = (*v)->max + *c;
  return 0;
}

int tkc_dim_add(const tkc_ctx *ctx, int64_t x, int64_t y, int sign, int64_t *out, const char *who) {
  const tkc_ctx_var *vx, *vy;
  int64_t cx, cy, lo, hi, c;
  if (dim_range(ctx, x, &vx, &cx, &lo, &hi, who) || dim_range(ctx, y, &vy, &cy, &lo, &hi, who)) return -1;
  int cancel = vx && vx == vy && sign < 0; /* (L + a) - (L + b) */
  const tkc_ctx_var *v = cancel ? NULL : vx ? vx : vy;
  if (!cancel && vy && (vx || sign < 0))
    return tkc_err(TKC_EUNSUPPORTED, "%s: %s %c %s is not a fixed size nor a variable plus a constant", who, TKC_DIM_STR(x), sign < 0 ? '-' : '+',
                   TKC_DIM_STR(y)), -1;
  if (__builtin_mul_overflow(cy, (int64_t)sign, &cy) || __builtin_add_overflow(cx, cy, &c))
    return tkc_err(TKC_ESHAPE, "%s: the size overflows 64 bits", who), -1;
  if (!v) return *out = c, 0;
  if (c <= -OFF_LIMIT || c >= OFF_LIMIT)
    return tkc_err(TKC_EUNSUPPORTED, "%s: %s%+lld: a variable's offset must stay within +-2^20", who, v->name, (long long)c), -1;
  *out = token_of(ctx->serial, (int)(v - ctx->vars), c);
  return 0;
}

int tkc_dim_le_always(const tkc_ctx *ctx, int64_t x, int64_t y, const char *who) {
  const tkc_ctx_var *vx, *vy;
  int64_t cx, cy, xlo, xhi, ylo, yhi;
  if (dim_range(ctx, x, &vx, &cx, &xlo, &xhi, who) || dim_range(ctx, y, &vy, &cy, &ylo, &yhi, who)) return -1;
  return vx && vx == vy ? cx <= cy : xhi <= ylo;
}

tkc_lazy *tkc_lz_var(tkc_ctx *ctx, const tkc_ctx_var *v) {
  tkc_lazy *n = tkc_lazy_new(ctx, TKC_LZ_VAR, TKC_INT32, 0, NULL);
  if (n) n->value.i = v - ctx->vars;
  return n;
}

tkc_tensor *tkc_dim_scalar(tkc_ctx *ctx, int64_t var) {
  tkc_ctx_var *v = tkc_var_of(ctx, var, "tkc_dim_scalar");
  return v ? tkc_wrap(ctx, tkc_lz_var(ctx, v)) : NULL;
}
