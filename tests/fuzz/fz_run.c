/* tests/fuzz/fz_run.c — builds a fuzz program with the tkc tensor API on one ctx, realizes its
 * realize points and copies out its observed nodes. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "fz.h"

/* value v (exact in dt) stored as one element of dt at dst */
static void store(tkc_dtype dt, double v, void *dst) {
  switch (dt) {
  case TKC_BOOL: *(uint8_t *)dst = v != 0; break;
  case TKC_INT8: *(int8_t *)dst = (int8_t)v; break;
  case TKC_UINT8: *(uint8_t *)dst = (uint8_t)v; break;
  case TKC_INT16: *(int16_t *)dst = (int16_t)v; break;
  case TKC_UINT16: *(uint16_t *)dst = (uint16_t)v; break;
  case TKC_INT32: *(int32_t *)dst = (int32_t)v; break;
  case TKC_UINT32: *(uint32_t *)dst = (uint32_t)v; break;
  case TKC_INT64: *(int64_t *)dst = (int64_t)v; break;
  case TKC_UINT64: *(uint64_t *)dst = (uint64_t)v; break;
  case TKC_FLOAT16: *(uint16_t *)dst = tkc_f32_to_f16((float)v); break;
  case TKC_BFLOAT16: *(uint16_t *)dst = tkc_f32_to_bf16((float)v); break;
  case TKC_FLOAT64: *(double *)dst = v; break;
  default: *(float *)dst = (float)v; break;
  }
}

static tkc_tensor *build_leaf(tkc_ctx *ctx, const fz_node *nd) {
  switch (nd->kind) {
  case FZ_FULL: return tkc_full(ctx, nd->dt, nd->ndim, nd->shape, nd->value);
  case FZ_SCALAR: return tkc_scalar(ctx, nd->dt, nd->value);
  case FZ_ARANGE: return tkc_arange(ctx, nd->dt, nd->value, nd->value + (double)(nd->p[0] * nd->p[1]), (double)nd->p[1]);
  default: break;
  }
  int64_t n = fz_numel(nd->ndim, nd->shape);
  size_t isz = tkc_dtype_size(nd->dt);
  unsigned char *data = malloc((size_t)(n ? n : 1) * isz);
  if (!data) return NULL;
  for (int64_t k = 0; k < n; k++) store(nd->dt, fz_leaf_value(nd, k), data + (size_t)k * isz);
  tkc_tensor *t = tkc_tensor_new(ctx, nd->dt, nd->ndim, nd->shape, data);
  free(data);
  return t;
}

static tkc_tensor *build_unary(tkc_tensor *a, int op) {
  static tkc_tensor *(*const fns[FZ_NUNOPS])(tkc_tensor *) = {tkc_neg, tkc_abs, tkc_recip, tkc_sqrt, tkc_exp, tkc_exp2, tkc_log,
                                                               tkc_log2, tkc_sin, tkc_cos, tkc_tanh, tkc_sigmoid, tkc_relu};
  return fns[op](a);
}

static tkc_tensor *build_binary(tkc_tensor *a, tkc_tensor *b, int op) {
  static tkc_tensor *(*const fns[FZ_NBINOPS])(tkc_tensor *, tkc_tensor *) = {
      tkc_add, tkc_sub, tkc_mul, tkc_div, tkc_idiv, tkc_mod, tkc_maximum, tkc_minimum, tkc_pow, tkc_lt,
      tkc_le,  tkc_gt,  tkc_ge,  tkc_eq,  tkc_ne,   tkc_and, tkc_or,      tkc_xor,     tkc_shl, tkc_shr};
  return fns[op](a, b);
}

static tkc_tensor *build_reduce(tkc_tensor *a, const fz_node *nd) {
  static tkc_tensor *(*const fns[FZ_NREDOPS])(tkc_tensor *, int, const int *, int) = {tkc_sum, tkc_max, tkc_min, tkc_mean};
  int axes[FZ_MAXP];
  for (int i = 0; i < nd->np; i++) axes[i] = (int)nd->p[i];
  return fns[nd->op](a, nd->np, nd->np ? axes : NULL, nd->keepdim);
}

static tkc_tensor *build_node(tkc_ctx *ctx, const fz_node *nd, tkc_tensor *const *t) {
  tkc_tensor *a = nd->nin > 0 ? t[nd->in[0]] : NULL, *b = nd->nin > 1 ? t[nd->in[1]] : NULL;
  int ax[FZ_MAXP];
  for (int i = 0; i < nd->np; i++) ax[i] = (int)nd->p[i];
  switch (nd->kind) {
  case FZ_DATA: case FZ_FULL: case FZ_SCALAR: case FZ_ARANGE: return build_leaf(ctx, nd);
  case FZ_UNARY: return build_unary(a, nd->op);
  case FZ_BINARY: return build_binary(a, b, nd->op);
  case FZ_WHERE: return tkc_where(a, b, t[nd->in[2]]);
  case FZ_CAST: return tkc_cast(a, nd->cast_to);
  case FZ_REDUCE: return build_reduce(a, nd);
  case FZ_RESHAPE: return tkc_reshape(a, nd->np, nd->p);
  case FZ_PERMUTE: return tkc_permute(a, ax);
  case FZ_TRANSPOSE: return tkc_transpose(a, ax[0], ax[1]);
  case FZ_EXPAND: return tkc_expand(a, nd->np, nd->p);
  case FZ_PAD: return tkc_pad(a, nd->p, nd->value);
  case FZ_SHRINK: return tkc_shrink(a, nd->p);
  case FZ_FLIP: return tkc_flip(a, nd->np, nd->np ? ax : NULL);
  case FZ_CONTIG: return tkc_contiguous(a);
  case FZ_MATMUL: return tkc_matmul(a, b);
  case FZ_SOFTMAX: return tkc_softmax(a, nd->axis);
  case FZ_LOGSOFTMAX: return tkc_log_softmax(a, nd->axis);
  case FZ_CUMSUM: return tkc_cumsum(a, nd->axis);
  case FZ_CAT: {
    tkc_tensor *ts[4];
    for (int k = 0; k < nd->nin; k++) ts[k] = t[nd->in[k]];
    return tkc_cat(nd->nin, ts, nd->axis);
  }
  case FZ_LAYERNORM: return tkc_layer_norm(a, (int)nd->p[0], NULL, NULL, 1e-5);
  case FZ_GATHER: return tkc_gather(a, nd->axis, b);
  case FZ_INDEX_SELECT: return tkc_index_select(a, nd->axis, b);
  default: return NULL;
  }
}

/* the tensor's dtype and shape are the inferred ones; else a message in err */
static int check_meta(const tkc_tensor *t, const fz_node *nd, char *err, size_t errn) {
  bool same = tkc_dtype_of(t) == nd->dt && tkc_ndim(t) == nd->ndim;
  for (int d = 0; same && d < nd->ndim; d++) same = tkc_dim(t, d) == nd->shape[d];
  if (same) return 0;
  char want[160], got[160];
  fz_node g = {.dt = tkc_dtype_of(t), .ndim = tkc_ndim(t)};
  for (int d = 0; d < g.ndim && d < FZ_MAXDIM; d++) g.shape[d] = tkc_dim(t, d);
  fz_shape_str(nd, want, sizeof want);
  fz_shape_str(&g, got, sizeof got);
  snprintf(err, errn, "result is %s, expected %s", got, want);
  return -1;
}

int fz_run_on(tkc_ctx *ctx, const fz_prog *p, void *const *bufs, int *st, char *err, size_t errn) {
  tkc_tensor *t[FZ_MAXNODES] = {0};
  for (int i = 0; i < p->n; i++) {
    const fz_node *nd = &p->node[i];
    tkc_clear_error();
    t[i] = build_node(ctx, nd, t);
    st[i] = t[i] ? TKC_OK : (int)tkc_last_status();
    if (nd->expect_fail) {
      snprintf(err, errn, "%s", t[i] ? "(accepted)" : tkc_last_error());
      if (t[i] || !*tkc_last_error()) return i;
      continue;
    }
    if (!t[i]) {
      snprintf(err, errn, "%s: %s", tkc_status_str(tkc_last_status()), tkc_last_error());
      return i;
    }
    if (check_meta(t[i], nd, err, errn)) return st[i] = -1, i;
    if (nd->realize && (st[i] = (int)tkc_realize(t[i])) != TKC_OK) {
      snprintf(err, errn, "realize: %s: %s", tkc_status_str((tkc_status)st[i]), tkc_last_error());
      return i;
    }
  }
  for (int i = 0; i < p->n; i++) {
    const fz_node *nd = &p->node[i];
    if (!nd->observe || nd->expect_fail) continue;
    size_t nbytes = (size_t)fz_numel(nd->ndim, nd->shape) * tkc_dtype_size(nd->dt);
    if ((st[i] = (int)tkc_copy_out(t[i], bufs[i], nbytes)) != TKC_OK) {
      snprintf(err, errn, "copy_out: %s: %s", tkc_status_str((tkc_status)st[i]), tkc_last_error());
      return i;
    }
  }
  return -1;
}
