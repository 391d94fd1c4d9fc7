/* Scans of tkc/ops_math.h (tkc_cumsum, tkc_cummax, tkc_cumprod), composed from the tensor API as
 * ops_math.c composes its functions: no new node kinds, so they fuse as the primitives do.
 *
 * A scan of the last axis of length n is a two-level (blocked) scan:
 *   - n <= SCAN_DIRECT: one triangle, out[i] = op over j <= i of x[j], computed as x broadcast to
 *     (..., n, n) with the upper triangle replaced by the op's identity and reduced over j: one
 *     kernel, n operations per element, loads independent of i (they vectorize);
 *   - longer axes are padded with the identity to blocks of SCAN_BLOCK, each block scanned by a
 *     triangle (a buffer), the block totals (its last column) scanned the same way (recursively),
 *     and the exclusive prefix of the totals combined into every block (add / max / multiply):
 *     about SCAN_BLOCK + 1 operations per element at two kernels per level.
 * The product has no reduce op: its triangle is reduced by a tree of pairwise products. */
#include <math.h>
#include <string.h>
#include "graph/tensor_internal.h"

typedef tkc_temps tmps;
static tkc_tensor *K(tmps *s, tkc_tensor *x) { return tkc_temp(s, x); }
static tkc_tensor *done(tmps *s, tkc_tensor *r) { return tkc_temps_done(s, r); } /* frees every temporary but r */
static tkc_dtype dt_of(const tkc_tensor *t) { return tkc_dtype_of(t); }

static tkc_tensor *cst(tmps *s, tkc_tensor *like, double v) { return like ? K(s, tkc_scalar(like->ctx, dt_of(like), v)) : NULL; }
static tkc_tensor *cast(tmps *s, tkc_tensor *a, tkc_dtype dt) { return K(s, tkc_cast(a, dt)); }
static tkc_tensor *reshape(tmps *s, tkc_tensor *a, int ndim, const int64_t *shape) { return K(s, tkc_reshape(a, ndim, shape)); }

enum { SCAN_SUM, SCAN_MAX, SCAN_PROD };
static const char *const scan_name[3] = {"cumsum", "cummax", "cumprod"};

/* tkc_sum's result dtype: small ints in int32 / uint32, float16 and bfloat16 as they are */
static tkc_dtype sum_dtype(tkc_dtype dt) {
  if (tkc_dtype_is_float(dt)) return tkc_dtype_is_narrow_float(dt) ? dt : tkc_least_upper_dtype(dt, TKC_FLOAT32);
  return tkc_least_upper_dtype(dt, tkc_dtype_is_unsigned(dt) ? TKC_UINT32 : TKC_INT32);
}

static double scan_identity(int kind, tkc_dtype dt) {
  if (kind == SCAN_SUM) return 0;
  if (kind == SCAN_PROD) return 1;
  return tkc_dtype_is_float(dt) ? -INFINITY : (double)tkc_dtype_min(dt);
}

/* tkc_add / tkc_maximum / tkc_mul */
static tkc_tensor *combine(tmps *s, int kind, tkc_tensor *a, tkc_tensor *b) {
  return K(s, kind == SCAN_SUM ? tkc_add(a, b) : kind == SCAN_MAX ? tkc_maximum(a, b) : tkc_mul(a, b));
}

/* the op over the last axis, dropped: sum / max reduce; a product as pairwise halvings (one fused
 * expression: the triangles it serves are at most SCAN_DIRECT long) */
static tkc_tensor *reduce_last(tmps *s, tkc_tensor *x, int kind) {
  if (!x) return NULL;
  int last = x->node->ndim - 1;
  if (kind != SCAN_PROD) return K(s, kind == SCAN_SUM ? tkc_sum(x, 1, &last, 0) : tkc_max(x, 1, &last, 0));
  int64_t n = x->node->shape[last], p = 1, sh[TKC_MAX_DIMS];
  while (p < n) p *= 2;
  x = tkc_temp_pad_last(s, x, 0, p - n, 1);
  for (; x && p > 1; p /= 2) x = combine(s, kind, tkc_temp_shrink_last(s, x, 0, p / 2), tkc_temp_shrink_last(s, x, p / 2, p));
  if (!x) return NULL;
  memcpy(sh, x->node->shape, sizeof(int64_t) * (size_t)last);
  return reshape(s, x, last, sh);
}

/* inclusive scan of the last axis in one kernel: x as (..., 1, n) broadcast to (..., n, n), where
 * row i keeps x[j] for j <= i and the identity above, reduced over j */
static tkc_tensor *scan_triangle(tmps *parent, tkc_tensor *x, int kind) {
  if (!x) return NULL;
  tmps own = {.n = 0}, *s = &own; /* a list per level: long scans recurse past one list's room */
  const tkc_lazy *n = x->node;
  int nd = n->ndim;
  int64_t len = n->shape[nd - 1], sh[TKC_MAX_DIMS];
  if (nd + 1 > TKC_MAX_DIMS) return tkc_err_null(TKC_ESHAPE, "%s: scanning a %d-D tensor needs a spare dim (at most %d dims)", scan_name[kind], nd, TKC_MAX_DIMS - 1);
  memcpy(sh, n->shape, sizeof(int64_t) * (size_t)nd);
  sh[nd - 1] = 1, sh[nd] = len;
  tkc_tensor *row = reshape(s, x, nd + 1, sh);
  sh[nd - 1] = len;
  tkc_tensor *sq = K(s, row ? tkc_expand(row, nd + 1, sh) : NULL);
  tkc_tensor *io = K(s, tkc_arange(x->ctx, TKC_INT32, 0, (double)len, 1));
  tkc_tensor *i = reshape(s, io, 2, (const int64_t[]){len, 1}), *j = reshape(s, io, 2, (const int64_t[]){1, len});
  tkc_tensor *keep = K(s, tkc_le(j, i));
  return K(parent, done(s, reduce_last(s, K(s, tkc_where(keep, sq, cst(s, x, scan_identity(kind, n->dtype)))), kind)));
}

#define SCAN_DIRECT 32 /* longest axis scanned by one triangle (a product tree of 32 is still cheap) */
#define SCAN_BLOCK 16  /* the blocks of longer ones: 16 operations per element, then 1/16 of them */

/* inclusive scan of the last axis: a triangle, or blocks whose exclusive totals are combined back */
static tkc_tensor *scan_last(tmps *parent, tkc_tensor *x, int kind) {
  if (!x) return NULL;
  const tkc_lazy *n = x->node;
  int nd = n->ndim;
  int64_t len = n->shape[nd - 1];
  if (len <= SCAN_DIRECT) return scan_triangle(parent, x, kind);
  tmps own = {.n = 0}, *s = &own;
  if (nd + 2 > TKC_MAX_DIMS) return tkc_err_null(TKC_ESHAPE, "%s: a long axis of a %d-D tensor needs two spare dims (at most %d dims)", scan_name[kind], nd, TKC_MAX_DIMS - 2);
  int64_t nb = (len + SCAN_BLOCK - 1) / SCAN_BLOCK, bs[TKC_MAX_DIMS], ts[TKC_MAX_DIMS], full[TKC_MAX_DIMS];
  memcpy(bs, n->shape, sizeof(int64_t) * (size_t)nd);
  memcpy(ts, n->shape, sizeof(int64_t) * (size_t)nd);
  memcpy(full, n->shape, sizeof(int64_t) * (size_t)nd);
  bs[nd - 1] = nb, bs[nd] = SCAN_BLOCK, ts[nd - 1] = nb, full[nd - 1] = nb * SCAN_BLOCK;
  tkc_tensor *xp = reshape(s, tkc_temp_pad_last(s, x, 0, nb * SCAN_BLOCK - len, scan_identity(kind, n->dtype)), nd + 1, bs);
  tkc_tensor *inner = K(s, tkc_contiguous(scan_triangle(s, xp, kind)));                   /* (..., nb, B) */
  tkc_tensor *tot = reshape(s, tkc_temp_shrink_last(s, inner, SCAN_BLOCK - 1, SCAN_BLOCK), nd, ts); /* (..., nb) */
  tkc_tensor *incl = scan_last(s, tot, kind);
  tkc_tensor *excl = tkc_temp_shrink_last(s, tkc_temp_pad_last(s, incl, 1, 0, scan_identity(kind, n->dtype)), 0, nb);
  bs[nd] = 1;
  tkc_tensor *r = combine(s, kind, inner, reshape(s, excl, nd + 1, bs));
  return K(parent, done(s, tkc_temp_shrink_last(s, reshape(s, r, nd, full), 0, len)));
}

static tkc_tensor *scan(tkc_tensor *a, int axis, int kind) {
  if (tkc_check(a)) return NULL;
  const tkc_lazy *n = a->node;
  int nd = n->ndim, ax = axis < 0 ? axis + (nd ? nd : 1) : axis;
  if (ax < 0 || ax >= (nd ? nd : 1))
    return tkc_err_null(TKC_EINVAL, "%s: axis %d out of range for a %d-d tensor of shape %s", scan_name[kind], axis, nd, TKC_NODE_SHAPE(n));
  if (nd && tkc_dim_is_var(n->shape[ax]))
    return tkc_err_null(TKC_EUNSUPPORTED, "%s: axis %d has a variable length (%s); scan a fixed-length axis (shrink or pad to its largest value)", scan_name[kind],
                        axis, TKC_DIM_STR(n->shape[ax]));
  tkc_dtype dt = n->dtype, out = kind == SCAN_SUM ? sum_dtype(dt) : dt;
  if (!nd || n->shape[ax] <= 1 || tkc_numel(a) == 0) return tkc_cast(a, out);
  tmps s = {.n = 0};
  int order[TKC_MAX_DIMS];
  for (int i = 0; i < nd; i++) order[i] = i;
  order[ax] = nd - 1, order[nd - 1] = ax; /* a swap: its own inverse */
  tkc_tensor *x = K(&s, tkc_permute(a, order));
  int64_t swapped[TKC_MAX_DIMS];
  memcpy(swapped, x ? x->node->shape : n->shape, sizeof(int64_t) * (size_t)nd);
  if (x && nd + 2 > TKC_MAX_DIMS) { /* the blocks need two spare dims: the leading dims as one */
    if (tkc_shape_is_symbolic(nd - 1, swapped)) return done(&s, tkc_err_null(TKC_EUNSUPPORTED, "%s of a %d-d tensor with variable dims", scan_name[kind], nd));
    x = reshape(&s, x, 2, (const int64_t[]){tkc_numel(x) / n->shape[ax], n->shape[ax]});
  }
  /* sums in their result's work dtype, products in a's (halves in float32), maxima as they are */
  tkc_tensor *r = scan_last(&s, kind == SCAN_MAX ? x : cast(&s, x, tkc_dtype_work(out)), kind);
  r = reshape(&s, r, nd, swapped);
  return done(&s, cast(&s, K(&s, tkc_permute(r, order)), out));
}

tkc_tensor *tkc_cumsum(tkc_tensor *a, int axis) { return scan(a, axis, SCAN_SUM); }
tkc_tensor *tkc_cummax(tkc_tensor *a, int axis) { return scan(a, axis, SCAN_MAX); }
tkc_tensor *tkc_cumprod(tkc_tensor *a, int axis) { return scan(a, axis, SCAN_PROD); }
