/* NN layer ops (tkc/ops_nn.h) as compositions of the tensor API, as tinygrad's Tensor builds them:
 * norms from reductions, convolutions and pooling from a padded sliding-window view (pad, WINDOW,
 * reshape + shrink for stride and dilation) times the weights and a sum, conv_transpose from a
 * zero-dilated input and a flipped kernel, interpolation as matmuls with weight matrices built by
 * index arithmetic over arange, losses by comparing class indices with arange. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "graph/tensor_internal.h"

/* ---------------------------------------------------------------- helpers */

/* The intermediate handles of one op: T(expr) records one, finish() frees them all (the graph keeps
 * what the result needs). Every tensor op passes a NULL input on (keeping the first error), so a
 * composite is straight-line code checked once at the end. */
typedef tkc_temps tmps;
static tkc_tensor *tmp(tmps *s, tkc_tensor *t) { return tkc_temp(s, t); }
#define T(e) tmp(&tm, (e))
static tkc_tensor *finish(tmps *s, tkc_tensor *r) { return tkc_temps_done(s, r); }

static tkc_tensor *sc(const tkc_tensor *like, double v) { return tkc_scalar(like->ctx, tkc_dtype_of(like), v); }
static tkc_tensor *isc(const tkc_tensor *like, int64_t v) { return tkc_scalar(like->ctx, TKC_INT32, (double)v); }
static tkc_tensor *iota(const tkc_tensor *like, int64_t n) { return tkc_arange(like->ctx, TKC_INT32, 0, (double)n, 1); }
/* 1 / sqrt(a) */
static tkc_tensor *rsqrt_(tmps *s, tkc_tensor *a) { return tmp(s, tkc_recip(tmp(s, tkc_sqrt(a)))); }

/* 0 when the first nreq tensors and the others given (NULL = absent) are usable and share a ctx */
static int check_in(const char *op, int nreq, tkc_tensor *a, tkc_tensor *b, tkc_tensor *c, tkc_tensor *d, tkc_tensor *e) {
  tkc_tensor *ts[5] = {a, b, c, d, e};
  for (int i = 0; i < nreq; i++)
    if (tkc_check(ts[i])) return -1;
  for (int i = 1; i < 5; i++) {
    if (!ts[i]) continue;
    if (tkc_check(ts[i])) return -1;
    if (ts[i]->ctx != a->ctx) return tkc_err(TKC_EINVAL, "%s: the tensors belong to different ctxs", op), -1;
  }
  return 0;
}

/* out[i] = v ? v[i] : def, each >= lo */
static int ints(const char *op, const char *what, const int *v, int n, int def, int lo, int64_t *out) {
  for (int i = 0; i < n; i++) {
    out[i] = v ? v[i] : def;
    if (out[i] < lo) return tkc_err(TKC_EINVAL, "%s: %s must be >= %d (got %lld)", op, what, lo, (long long)out[i]), -1;
  }
  return 0;
}

/* 0 when the product of dims stays below 2^31 (kernels index in int32) */
static int numel_ok(const char *op, int n, const int64_t *d) {
  int64_t total = 1;
  for (int i = 0; i < n; i++) {
    if (d[i] == 0) return 0;
    if (total > INT32_MAX / d[i]) return tkc_err(TKC_ESHAPE, "%s: an intermediate of 2^31 or more elements", op), -1;
    total *= d[i];
  }
  return 0;
}

/* 0 when x's spatial dims (2 and 3) and w's (kernel sizes, w may be NULL) are below 2^31: every
 * window size below (products of them with the int stride, pad and dilation) then stays far inside
 * int64. Larger ones could only make empty tensors: kernels index their intermediates in int32. */
static int spatial_ok(const char *op, const tkc_lazy *x, const tkc_lazy *w) {
  for (int i = 2; i < 4; i++) {
    if (x->shape[i] > INT32_MAX) return tkc_err(TKC_ESHAPE, "%s: x %s: spatial dims must be below 2^31", op, TKC_NODE_SHAPE(x)), -1;
    if (w && w->shape[i] > INT32_MAX) return tkc_err(TKC_ESHAPE, "%s: w %s: kernel sizes must be below 2^31", op, TKC_NODE_SHAPE(w)), -1;
  }
  return 0;
}

/* a 1-D tensor of n elements (weights, biases, statistics) */
static int check_vec(const char *op, const char *what, const tkc_tensor *t, int64_t n) {
  if (!t || (t->node->ndim == 1 && t->node->shape[0] == n)) return 0;
  return tkc_err(TKC_ESHAPE, "%s: %s %s must have shape (%lld,)", op, what, TKC_NODE_SHAPE(t->node), (long long)n), -1;
}

/* windows along one axis of padded length len: (len - d*(k-1) - 1) / s + 1, rounded up with ceil
 * (then, as torch, a last window starting past len - pad_after is dropped); <= 0 when none fits */
static int64_t out_len(int64_t len, int64_t k, int64_t s, int64_t d, int ceil, int64_t pad_after) {
  int64_t span = len - d * (k - 1) - 1;
  if (span < 0) return 0;
  int64_t o = (ceil ? span + s - 1 : span) / s + 1;
  if (ceil && (o - 1) * s >= len - pad_after) o--;
  return o;
}

/* x (N, C, H, W) padded with value by top rows and left columns and after them up to rows x cols,
 * or cut there (rows past the last window, or that no window reads: a stride clamped to 1) */
static tkc_tensor *padded_to(tmps *s, tkc_tensor *x, int64_t top, int64_t left, int64_t rows, int64_t cols, double value) {
  const int64_t *xs = x->node->shape;
  int64_t bottom = rows - xs[2] - top, right = cols - xs[3] - left;
  int64_t pads[8] = {0, 0, 0, 0, top, bottom > 0 ? bottom : 0, left, right > 0 ? right : 0};
  return tmp(s, tkc_shrink(tmp(s, tkc_pad(x, pads, value)), (const int64_t[]){0, xs[0], 0, xs[1], 0, rows, 0, cols}));
}

/* (N, C, H, W) -> (N, C, OH, OW, KH, KW), a view: window (oh, ow, i, j) reads x at
 * (oh*sh + i*dh - top, ow*sw + j*dw - left), `value` outside x. x is padded by top/left and at the
 * bottom/right to exactly OH*sh + KH*dh - 1 rows (and likewise columns; the caller's bottom/right
 * padding is in out), seen as stride-1 windows of KH*dh x KW*dw, whose
 * window and tap axes are then split into (OH, sh) and (KH, dh) (and so on) keeping index 0 of sh
 * and dh. */
static tkc_tensor *windows(tmps *s, tkc_tensor *x, const int64_t k[2], const int64_t st[2], const int64_t dl[2], int64_t top, int64_t left,
                           const int64_t out[2], double value) {
  if (!x) return NULL;
  const int64_t *xs = x->node->shape;
  int64_t nb = xs[0], c = xs[1];
  tkc_tensor *p = padded_to(s, x, top, left, out[0] * st[0] + k[0] * dl[0] - 1, out[1] * st[1] + k[1] * dl[1] - 1, value);
  if (!p) return NULL;
  int64_t wshape[6] = {nb, c, out[0] * st[0], out[1] * st[1], k[0] * dl[0], k[1] * dl[1]}, warg[3] = {wshape[4], wshape[5], 1};
  tkc_tensor *w = tmp(s, tkc_wrap(p->ctx, tkc_lz_move(p->node, TKC_MOVE_WINDOW, warg, 3, 6, wshape)));
  /* rows: (OH, sh) and (KH, dh), keeping sh = dh = 0 */
  w = tmp(s, tkc_reshape(w, 8, (const int64_t[]){nb, c, out[0], st[0], wshape[3], k[0], dl[0], wshape[5]}));
  w = tmp(s, tkc_shrink(w, (const int64_t[]){0, nb, 0, c, 0, out[0], 0, 1, 0, wshape[3], 0, k[0], 0, 1, 0, wshape[5]}));
  /* columns: (OW, sw) and (KW, dw) */
  w = tmp(s, tkc_reshape(w, 8, (const int64_t[]){nb, c, out[0], out[1], st[1], k[0], k[1], dl[1]}));
  w = tmp(s, tkc_shrink(w, (const int64_t[]){0, nb, 0, c, 0, out[0], 0, out[1], 0, 1, 0, k[0], 0, k[1], 0, 1}));
  return tmp(s, tkc_reshape(w, 6, (const int64_t[]){nb, c, out[0], out[1], k[0], k[1]}));
}

/* windows that do not overlap (kernel <= stride, no dilation: a 2x2 max-pool), as tinygrad's fast
 * path: x padded or cut to (OH*sh, OW*sw), reshaped to (N, C, OH, sh, OW, sw), the first k of each
 * stride kept and the kernel axes moved last. A view whose gradient is a view too (a WINDOW's sums
 * shifted copies of it: a CNN's pool backward took five kernels). */
static tkc_tensor *tiles(tmps *s, tkc_tensor *x, const int64_t k[2], const int64_t st[2], int64_t top, int64_t left, const int64_t out[2],
                         double value) {
  int64_t nb = x->node->shape[0], c = x->node->shape[1];
  tkc_tensor *p = padded_to(s, x, top, left, out[0] * st[0], out[1] * st[1], value);
  p = tmp(s, tkc_reshape(p, 6, (const int64_t[]){nb, c, out[0], st[0], out[1], st[1]}));
  p = tmp(s, tkc_shrink(p, (const int64_t[]){0, nb, 0, c, 0, out[0], 0, k[0], 0, out[1], 0, k[1]}));
  return tmp(s, tkc_permute(p, (const int[]){0, 1, 2, 4, 3, 5}));
}

/* a pool's windows: tiles when they do not overlap (their gradient a view), else windows */
static tkc_tensor *pool_windows(tmps *s, tkc_tensor *x, const int64_t k[2], const int64_t st[2], const int64_t dl[2], int64_t top, int64_t left,
                                const int64_t out[2], double value) {
  if (x && dl[0] == 1 && dl[1] == 1 && k[0] <= st[0] && k[1] <= st[1]) return tiles(s, x, k, st, top, left, out, value);
  return windows(s, x, k, st, dl, top, left, out, value);
}

/* ---------------------------------------------------------------- normalization */

/* the result dtype of x with optional weight/bias (floats only) */
static tkc_dtype norm_dtype(const char *op, tkc_tensor *x, tkc_tensor *w, tkc_tensor *b) {
  tkc_dtype dt = tkc_dtype_of(x);
  if (w) dt = tkc_least_upper_dtype(dt, tkc_dtype_of(w));
  if (b) dt = tkc_least_upper_dtype(dt, tkc_dtype_of(b));
  if (!tkc_dtype_is_float(tkc_dtype_of(x)) || !tkc_dtype_is_float(dt)) {
    tkc_err(TKC_EDTYPE, "%s needs float tensors (x is %s)", op, tkc_dtype_name(tkc_dtype_of(x)));
    return TKC_VOID;
  }
  return dt;
}

/* weight and bias: the shape of x's last naxes dims; eps finite and >= 0 */
static int check_norm(const char *op, tkc_tensor *x, int naxes, tkc_tensor *w, tkc_tensor *b, double eps) {
  const tkc_lazy *n = x->node;
  if (naxes < 1 || naxes > n->ndim) return tkc_err(TKC_EINVAL, "%s: naxes %d is not in [1, %d] for x of shape %s", op, naxes, n->ndim, TKC_NODE_SHAPE(n)), -1;
  if (!(eps >= 0) || !isfinite(eps)) return tkc_err(TKC_EINVAL, "%s: eps must be finite and >= 0", op), -1;
  tkc_tensor *p[2] = {w, b};
  for (int i = 0; i < 2; i++) {
    if (!p[i]) continue;
    int ok = p[i]->node->ndim == naxes && !memcmp(p[i]->node->shape, n->shape + n->ndim - naxes, sizeof(int64_t) * (size_t)naxes);
    if (!ok)
      return tkc_err(TKC_ESHAPE, "%s: %s %s must have the shape %s of x's last %d dims (x is %s)", op, i ? "bias" : "weight", TKC_NODE_SHAPE(p[i]->node),
                     TKC_SHAPE_STR(naxes, n->shape + n->ndim - naxes), naxes, TKC_NODE_SHAPE(n)), -1;
  }
  return 0;
}

/* y * weight + bias in the compute dtype, then cast to dt */
static tkc_tensor *affine(tmps *s, tkc_tensor *y, tkc_tensor *w, tkc_tensor *b, tkc_dtype dt) {
  tkc_dtype acc = tkc_dtype_of(y);
  if (w) y = tmp(s, tkc_mul(y, tmp(s, tkc_cast(w, acc))));
  if (b) y = tmp(s, tkc_add(y, tmp(s, tkc_cast(b, acc))));
  return tkc_cast(y, dt);
}

tkc_tensor *tkc_layer_norm(tkc_tensor *x, int naxes, tkc_tensor *weight, tkc_tensor *bias, double eps) {
  if (check_in("layer_norm", 1, x, weight, bias, NULL, NULL) || check_norm("layer_norm", x, naxes, weight, bias, eps)) return NULL;
  tkc_dtype dt = norm_dtype("layer_norm", x, weight, bias), acc = tkc_dtype_work(dt);
  if (dt == TKC_VOID) return NULL;
  const tkc_lazy *n = x->node;
  int64_t groups = 1, m = 1;
  for (int i = 0; i < n->ndim; i++) {
    if (i < n->ndim - naxes) groups *= n->shape[i];
    else m *= n->shape[i];
  }
  tmps tm = {0};
  if (tkc_schedule_nests_rows(x->ctx, groups, m)) { /* two passes over each row, in the kernel that writes it (host
                                                     * devices: the mean's and the variance's loops per row) */
    int axes[TKC_MAX_DIMS];
    for (int i = 0; i < naxes; i++) axes[i] = n->ndim - naxes + i;
    tkc_tensor *xa = T(tkc_cast(x, acc));
    tkc_tensor *dm = T(tkc_sub(xa, T(tkc_mean(xa, naxes, axes, 1))));
    tkc_tensor *var = T(tkc_mean(T(tkc_mul(dm, dm)), naxes, axes, 1));
    tkc_tensor *y = T(tkc_mul(dm, rsqrt_(&tm, T(tkc_add(var, T(sc(var, eps)))))));
    return finish(&tm, y ? affine(&tm, y, weight, bias, dt) : NULL);
  }
  /* elsewhere one kernel of statistics: (P, 1, M), shifted by its first element x0: d = x - x0 */
  tkc_tensor *xr = T(tkc_cast(T(tkc_reshape(x, 3, (const int64_t[]){groups, 1, m})), acc));
  tkc_tensor *x0 = m ? T(tkc_shrink(xr, (const int64_t[]){0, groups, 0, 1, 0, 1})) : T(sc(xr, 0));
  tkc_tensor *d = T(tkc_sub(xr, x0));
  /* one reduce: stats[:, 0] = sum(d), stats[:, 1] = sum(d^2) */
  tkc_tensor *first = T(tkc_eq(T(tkc_reshape(T(iota(x, 2)), 2, (const int64_t[]){2, 1})), T(isc(x, 0))));
  tkc_tensor *stats = T(tkc_sum(T(tkc_where(first, d, T(tkc_mul(d, d)))), 1, (const int[]){2}, 1));
  tkc_tensor *inv_m = T(tkc_scalar(x->ctx, acc, m ? 1.0 / (double)m : NAN));
  tkc_tensor *m1 = T(tkc_mul(T(tkc_shrink(stats, (const int64_t[]){0, groups, 0, 1, 0, 1})), inv_m));
  tkc_tensor *m2 = T(tkc_mul(T(tkc_shrink(stats, (const int64_t[]){0, groups, 1, 2, 0, 1})), inv_m));
  tkc_tensor *var = T(tkc_maximum(T(tkc_sub(m2, T(tkc_mul(m1, m1)))), T(sc(m1, 0))));
  tkc_tensor *y = T(tkc_mul(T(tkc_sub(d, m1)), rsqrt_(&tm, T(tkc_add(var, T(sc(var, eps)))))));
  y = T(tkc_reshape(y, n->ndim, n->shape));
  return finish(&tm, y ? affine(&tm, y, weight, bias, dt) : NULL);
}

tkc_tensor *tkc_rms_norm(tkc_tensor *x, int naxes, tkc_tensor *weight, double eps) {
  if (check_in("rms_norm", 1, x, weight, NULL, NULL, NULL) || check_norm("rms_norm", x, naxes, weight, NULL, eps)) return NULL;
  tkc_dtype dt = norm_dtype("rms_norm", x, weight, NULL);
  if (dt == TKC_VOID) return NULL;
  int axes[TKC_MAX_DIMS], nd = x->node->ndim;
  for (int i = 0; i < naxes; i++) axes[i] = nd - naxes + i;
  tmps tm = {0};
  tkc_tensor *xa = T(tkc_cast(x, tkc_dtype_work(dt)));
  tkc_tensor *ms = T(tkc_mean(T(tkc_mul(xa, xa)), naxes, axes, 1));
  tkc_tensor *y = T(tkc_mul(xa, rsqrt_(&tm, T(tkc_add(ms, T(sc(ms, eps)))))));
  return finish(&tm, y ? affine(&tm, y, weight, NULL, dt) : NULL);
}

tkc_tensor *tkc_batch_norm(tkc_tensor *x, tkc_tensor *mean, tkc_tensor *var, tkc_tensor *weight, tkc_tensor *bias, double eps) {
  if (check_in("batch_norm", 3, x, mean, var, weight, bias)) return NULL;
  const tkc_lazy *n = x->node;
  if (n->ndim < 2) return tkc_err_null(TKC_ESHAPE, "batch_norm needs x (N, C, ...) of 2 or more dims");
  if (!(eps >= 0) || !isfinite(eps)) return tkc_err_null(TKC_EINVAL, "batch_norm: eps must be finite and >= 0");
  int64_t c = n->shape[1];
  if (check_vec("batch_norm", "running_mean", mean, c) || check_vec("batch_norm", "running_var", var, c) ||
      check_vec("batch_norm", "weight", weight, c) || check_vec("batch_norm", "bias", bias, c))
    return NULL;
  tkc_dtype dt = norm_dtype("batch_norm", x, weight, bias);
  if (dt == TKC_VOID) return NULL;
  dt = tkc_least_upper_dtype(dt, tkc_least_upper_dtype(tkc_dtype_of(mean), tkc_dtype_of(var)));
  tkc_dtype acc = tkc_dtype_work(dt);
  int64_t bshape[TKC_MAX_DIMS];
  for (int i = 0; i < n->ndim; i++) bshape[i] = i == 1 ? c : 1;
  tmps tm = {0};
  tkc_tensor *m = T(tkc_cast(T(tkc_reshape(mean, n->ndim, bshape)), acc));
  tkc_tensor *v = T(tkc_cast(T(tkc_reshape(var, n->ndim, bshape)), acc));
  tkc_tensor *y = T(tkc_mul(T(tkc_sub(T(tkc_cast(x, acc)), m)), rsqrt_(&tm, T(tkc_add(v, T(sc(v, eps)))))));
  tkc_tensor *w = weight ? T(tkc_reshape(weight, n->ndim, bshape)) : NULL, *b = bias ? T(tkc_reshape(bias, n->ndim, bshape)) : NULL;
  if ((weight && !w) || (bias && !b)) y = NULL;
  return finish(&tm, y ? affine(&tm, y, w, b, dt) : NULL);
}

/* ---------------------------------------------------------------- convolutions */

/* conv2d_ex after the argument checks (st, dl >= 1; pd >= 0) */
static tkc_tensor *conv(const char *op, tkc_tensor *x, tkc_tensor *w, tkc_tensor *bias, const int64_t st[2], const int64_t pd[4],
                        const int64_t dl[2], int64_t groups) {
  const tkc_lazy *xn = x->node, *wn = w->node;
  if (xn->ndim != 4 || wn->ndim != 4) return tkc_err_null(TKC_ESHAPE, "%s: x %s and w %s: %s needs x NCHW and w OIHW (4-d)", op, TKC_NODE_SHAPE(xn), TKC_NODE_SHAPE(wn), op);
  if (groups < 1) return tkc_err_null(TKC_EINVAL, "%s: groups must be >= 1 (got %lld)", op, (long long)groups);
  if (spatial_ok(op, xn, wn)) return NULL;
  int64_t nb = xn->shape[0], c = xn->shape[1], o = wn->shape[0], cg = wn->shape[1], kh = wn->shape[2], kw = wn->shape[3];
  if (c % groups || o % groups)
    return tkc_err_null(TKC_ESHAPE, "%s: %lld input and %lld output channels do not divide into %lld groups", op, (long long)c, (long long)o,
                        (long long)groups);
  if (cg != c / groups)
    return tkc_err_null(TKC_ESHAPE, "%s: x %s has %lld channels per group, w %s expects %lld", op, TKC_NODE_SHAPE(xn), (long long)(c / groups), TKC_NODE_SHAPE(wn),
                        (long long)cg);
  if (kh < 1 || kw < 1) return tkc_err_null(TKC_ESHAPE, "%s: empty kernel", op);
  if (check_vec(op, "bias", bias, o)) return NULL;
  int64_t hp = xn->shape[2] + pd[0] + pd[1], wp = xn->shape[3] + pd[2] + pd[3];
  int64_t out[2] = {out_len(hp, kh, st[0], dl[0], 0, 0), out_len(wp, kw, st[1], dl[1], 0, 0)}, k[2] = {kh, kw};
  if (out[0] < 1 || out[1] < 1)
    return tkc_err_null(TKC_ESHAPE, "%s: the dilated kernel %lldx%lld does not fit the padded input %lldx%lld", op, (long long)((kh - 1) * dl[0] + 1),
                        (long long)((kw - 1) * dl[1] + 1), (long long)hp, (long long)wp);
  int64_t s[2] = {out[0] > 1 ? st[0] : 1, out[1] > 1 ? st[1] : 1}; /* one window: any stride is 1 */
  int64_t padded[4] = {nb, c, out[0] * s[0] + kh * dl[0], out[1] * s[1] + kw * dl[1]}, full[7] = {nb, o, out[0], out[1], cg, kh, kw};
  if (numel_ok(op, 4, padded) || numel_ok(op, 7, full)) return NULL;
  tmps tm = {0};
  if (groups == 1 && dl[0] == 1 && dl[1] == 1 && s[0] == s[1]) { /* tkc_conv2d's kernels, on the rows and cols windows read */
    tkc_tensor *xp = T(tkc_pad(x, (const int64_t[]){0, 0, 0, 0, pd[0], pd[1], pd[2], pd[3]}, 0));
    xp = T(tkc_shrink(xp, (const int64_t[]){0, nb, 0, c, 0, (out[0] - 1) * s[0] + kh, 0, (out[1] - 1) * s[1] + kw}));
    return finish(&tm, tkc_conv2d(xp, w, bias, (int)s[0], 0));
  }
  /* windows (N, G, Cg, OH, OW, KH, KW) -> (N, G, 1, OH, OW, Cg, KH, KW) times w (1, G, O/G, 1, 1, Cg, KH, KW) */
  int64_t g = groups;
  tkc_tensor *win = windows(&tm, x, k, s, dl, pd[0], pd[2], out, 0);
  win = T(tkc_reshape(win, 7, (const int64_t[]){nb, g, cg, out[0], out[1], kh, kw}));
  win = T(tkc_permute(win, (const int[]){0, 1, 3, 4, 2, 5, 6}));
  win = T(tkc_reshape(win, 8, (const int64_t[]){nb, g, 1, out[0], out[1], cg, kh, kw}));
  tkc_tensor *wr = T(tkc_reshape(w, 8, (const int64_t[]){1, g, o / g, 1, 1, cg, kh, kw}));
  tkc_tensor *prod = T(tkc_mul(win, wr));
  tkc_tensor *sum = T(tkc_cast(T(tkc_sum(prod, 3, (const int[]){5, 6, 7}, 0)), tkc_dtype_of(prod))); /* as tkc_conv2d */
  const int64_t oshape[4] = {nb, o, out[0], out[1]};
  if (!bias) return finish(&tm, tkc_reshape(sum, 4, oshape));
  return finish(&tm, tkc_add(T(tkc_reshape(sum, 4, oshape)), T(tkc_reshape(bias, 4, (const int64_t[]){1, o, 1, 1}))));
}

tkc_tensor *tkc_conv2d_ex(tkc_tensor *x, tkc_tensor *w, tkc_tensor *bias, const int stride[2], const int pad[4], const int dilation[2], int groups) {
  int64_t st[2], pd[4], dl[2];
  if (check_in("conv2d_ex", 2, x, w, bias, NULL, NULL) || ints("conv2d_ex", "stride", stride, 2, 1, 1, st) ||
      ints("conv2d_ex", "pad", pad, 4, 0, 0, pd) || ints("conv2d_ex", "dilation", dilation, 2, 1, 1, dl))
    return NULL;
  return conv("conv2d_ex", x, w, bias, st, pd, dl, groups);
}

tkc_tensor *tkc_conv1d(tkc_tensor *x, tkc_tensor *w, tkc_tensor *bias, int stride, int pad_left, int pad_right, int dilation, int groups) {
  int64_t st[2] = {1, stride}, pd[4] = {0, 0, pad_left, pad_right}, dl[2] = {1, dilation};
  if (check_in("conv1d", 2, x, w, bias, NULL, NULL) || ints("conv1d", "stride", &stride, 1, 1, 1, st + 1) ||
      ints("conv1d", "pad", (const int[]){pad_left, pad_right}, 2, 0, 0, pd + 2) || ints("conv1d", "dilation", &dilation, 1, 1, 1, dl + 1))
    return NULL;
  const tkc_lazy *xn = x->node, *wn = w->node;
  if (xn->ndim != 3 || wn->ndim != 3) return tkc_err_null(TKC_ESHAPE, "conv1d needs x (N, C, L) and w (O, C/groups, K) (3-D)");
  tmps tm = {0};
  tkc_tensor *x4 = T(tkc_reshape(x, 4, (const int64_t[]){xn->shape[0], xn->shape[1], 1, xn->shape[2]}));
  tkc_tensor *w4 = T(tkc_reshape(w, 4, (const int64_t[]){wn->shape[0], wn->shape[1], 1, wn->shape[2]}));
  tkc_tensor *r = x4 && w4 ? T(conv("conv1d", x4, w4, bias, st, pd, dl, groups)) : NULL;
  return finish(&tm, r ? tkc_reshape(r, 3, (const int64_t[]){tkc_dim(r, 0), tkc_dim(r, 1), tkc_dim(r, 3)}) : NULL);
}

tkc_tensor *tkc_conv_transpose2d(tkc_tensor *x, tkc_tensor *w, tkc_tensor *bias, const int stride[2], const int pad[2], const int output_padding[2],
                                 const int dilation[2], int groups) {
  const char *op = "conv_transpose2d";
  int64_t st[2], pd[2], op_[2], dl[2];
  if (check_in(op, 2, x, w, bias, NULL, NULL) || ints(op, "stride", stride, 2, 1, 1, st) || ints(op, "pad", pad, 2, 0, 0, pd) ||
      ints(op, "output_padding", output_padding, 2, 0, 0, op_) || ints(op, "dilation", dilation, 2, 1, 1, dl))
    return NULL;
  const tkc_lazy *xn = x->node, *wn = w->node;
  if (xn->ndim != 4 || wn->ndim != 4) return tkc_err_null(TKC_ESHAPE, "%s needs x NCHW and w IOHW (4-D)", op);
  if (groups < 1) return tkc_err_null(TKC_EINVAL, "%s: groups must be >= 1 (got %d)", op, groups);
  if (spatial_ok(op, xn, wn)) return NULL;
  int64_t nb = xn->shape[0], c = xn->shape[1], g = groups, og = wn->shape[1], k[2] = {wn->shape[2], wn->shape[3]};
  if (c % g) return tkc_err_null(TKC_ESHAPE, "%s: %lld input channels do not divide into %d groups", op, (long long)c, groups);
  if (wn->shape[0] != c) return tkc_err_null(TKC_ESHAPE, "%s: x has %lld channels, w (IOHW) expects %lld", op, (long long)c, (long long)wn->shape[0]);
  if (k[0] < 1 || k[1] < 1 || og < 1) return tkc_err_null(TKC_ESHAPE, "%s: empty kernel", op);
  if (og > INT32_MAX / g) return tkc_err_null(TKC_ESHAPE, "%s: %d groups of %lld output channels: 2^31 or more channels", op, groups, (long long)og);
  int64_t in[2] = {xn->shape[2], xn->shape[3]}, before[2], after[2];
  for (int i = 0; i < 2; i++) {
    if (op_[i] >= (st[i] > dl[i] ? st[i] : dl[i]))
      return tkc_err_null(TKC_EINVAL, "%s: output_padding %lld must be smaller than the stride or the dilation", op, (long long)op_[i]);
    if (in[i] < 1) return tkc_err_null(TKC_ESHAPE, "%s: the output would be empty (x %s)", op, TKC_NODE_SHAPE(xn));
    /* both below 2^62 (spatial_ok); past 2^31 the dilated input or kernel has no int32 index */
    if ((in[i] - 1) * st[i] > INT32_MAX || (k[i] - 1) * dl[i] > INT32_MAX)
      return tkc_err_null(TKC_ESHAPE, "%s: stride %lld, dilation %lld: the dilated input (%lld) or kernel (%lld) spans 2^31 or more", op, (long long)st[i],
                          (long long)dl[i], (long long)in[i], (long long)k[i]);
    if ((in[i] - 1) * st[i] - 2 * pd[i] + dl[i] * (k[i] - 1) + op_[i] + 1 < 1)
      return tkc_err_null(TKC_ESHAPE, "%s: the output would be empty (pad %lld too large for the input)", op, (long long)pd[i]);
    before[i] = (k[i] - 1) * dl[i] - pd[i];
    after[i] = before[i] + op_[i];
  }
  int64_t dil_shape[4] = {nb, c, (in[0] - 1) * st[0] + 1 + (before[0] > 0 ? before[0] : 0) + (after[0] > 0 ? after[0] : 0),
                          (in[1] - 1) * st[1] + 1 + (before[1] > 0 ? before[1] : 0) + (after[1] > 0 ? after[1] : 0)};
  if (numel_ok(op, 4, dil_shape)) return NULL;
  tmps tm = {0};
  /* the input with stride-1 zeros between its elements: (N,C,H,1,W,1) -pad-> (N,C,H,sh,W,sw) -> (N,C,H*sh,W*sw), shrunk */
  tkc_tensor *xd = T(tkc_reshape(x, 6, (const int64_t[]){nb, c, in[0], 1, in[1], 1}));
  xd = T(tkc_pad(xd, (const int64_t[]){0, 0, 0, 0, 0, 0, 0, st[0] - 1, 0, 0, 0, st[1] - 1}, 0));
  xd = T(tkc_reshape(xd, 4, (const int64_t[]){nb, c, in[0] * st[0], in[1] * st[1]}));
  xd = T(tkc_shrink(xd, (const int64_t[]){0, nb, 0, c, 0, (in[0] - 1) * st[0] + 1, 0, (in[1] - 1) * st[1] + 1}));
  /* the full correlation's padding (k-1)*d each side, less pad, plus output_padding after: negative parts shrink */
  int64_t pos[8] = {0, 0, 0, 0}, neg[8] = {0, nb, 0, c};
  for (int i = 0; i < 2; i++) {
    pos[4 + 2 * i] = before[i] > 0 ? before[i] : 0;
    pos[5 + 2 * i] = after[i] > 0 ? after[i] : 0;
    neg[4 + 2 * i] = before[i] < 0 ? -before[i] : 0;
    neg[5 + 2 * i] = dil_shape[2 + i] - (after[i] < 0 ? -after[i] : 0);
  }
  xd = T(tkc_shrink(T(tkc_pad(xd, pos, 0)), neg));
  /* w (C, O/G, KH, KW) -> (G, C/G, O/G, KH, KW) -> (G, O/G, C/G, KH, KW), flipped -> (O, C/G, KH, KW) */
  tkc_tensor *wt = T(tkc_reshape(w, 5, (const int64_t[]){g, c / g, og, k[0], k[1]}));
  wt = T(tkc_flip(T(tkc_permute(wt, (const int[]){0, 2, 1, 3, 4})), 2, (const int[]){3, 4}));
  wt = T(tkc_reshape(wt, 4, (const int64_t[]){g * og, c / g, k[0], k[1]}));
  const int64_t one[2] = {1, 1}, zero[4] = {0, 0, 0, 0};
  return finish(&tm, xd && wt ? conv(op, xd, wt, bias, one, zero, dl, g) : NULL);
}

/* ---------------------------------------------------------------- pooling */

/* kernel, stride, pad (<= kernel/2), dilation of a pool and its output size; 0 when valid */
static int pool_args(const char *op, tkc_tensor *x, const int *kernel, const int *stride, const int *pad, const int *dilation, int ceil_mode,
                     int64_t k[2], int64_t st[2], int64_t pd[2], int64_t dl[2], int64_t out[2]) {
  if (tkc_check(x)) return -1;
  if (x->node->ndim != 4) return tkc_err(TKC_ESHAPE, "%s: needs x NCHW (4-d), got x of shape %s", op, TKC_NODE_SHAPE(x->node)), -1;
  if (!kernel) return tkc_err(TKC_EINVAL, "%s: NULL kernel", op), -1;
  if (spatial_ok(op, x->node, NULL)) return -1;
  if (ints(op, "kernel", kernel, 2, 1, 1, k) || ints(op, "stride", stride ? stride : kernel, 2, 1, 1, st) || ints(op, "pad", pad, 2, 0, 0, pd) ||
      ints(op, "dilation", dilation, 2, 1, 1, dl))
    return -1;
  for (int i = 0; i < 2; i++) {
    if (pd[i] > k[i] / 2) return tkc_err(TKC_EINVAL, "%s: pad %lld is more than half the kernel %lld", op, (long long)pd[i], (long long)k[i]), -1;
    out[i] = out_len(x->node->shape[2 + i] + 2 * pd[i], k[i], st[i], dl[i], ceil_mode, pd[i]);
    if (out[i] < 1) return tkc_err(TKC_ESHAPE, "%s: the (dilated) kernel does not fit the padded input", op), -1;
    if (out[i] == 1) st[i] = 1; /* one window: any stride is 1 */
  }
  const int64_t *xs = x->node->shape;
  int64_t padded[4] = {xs[0], xs[1], out[0] * st[0] + k[0] * dl[0], out[1] * st[1] + k[1] * dl[1]}, full[6] = {xs[0], xs[1], out[0], out[1], k[0], k[1]};
  return numel_ok(op, 4, padded) || numel_ok(op, 6, full) ? -1 : 0;
}

tkc_tensor *tkc_max_pool2d(tkc_tensor *x, const int kernel[2], const int stride[2], const int pad[2], const int dilation[2], int ceil_mode) {
  int64_t k[2], st[2], pd[2], dl[2], out[2];
  if (pool_args("max_pool2d", x, kernel, stride, pad, dilation, ceil_mode, k, st, pd, dl, out)) return NULL;
  tkc_dtype dt = tkc_dtype_of(x);
  double low = tkc_dtype_is_float(dt) ? -INFINITY : dt == TKC_BOOL ? 0 : (double)tkc_dtype_min(dt);
  tmps tm = {0};
  tkc_tensor *win;
  if (k[0] > 1 && k[1] > 1 && ((out[0] > 1 && k[0] * dl[0] > st[0]) || (out[1] > 1 && k[1] * dl[1] > st[1]))) {
    /* overlapping windows (a ResNet's 3x3 at stride 2): the max of each column of a window first, over
     * rows (N, C, OH, W), then along the rows: 3 + 3 loads per output instead of 9, and the first
     * kernel reads whole rows as vectors (the 2-d windows' strided reads were scalar: 4-13 ms at
     * batch 8 of 64x112x112) */
    const int64_t *xs = x->node->shape;
    int64_t rows_out[2] = {out[0], xs[3]};
    tkc_tensor *rows = T(tkc_max(pool_windows(&tm, x, (const int64_t[]){k[0], 1}, (const int64_t[]){st[0], 1}, (const int64_t[]){dl[0], 1}, pd[0], 0, rows_out, low), 2,
                                 (const int[]){4, 5}, 0));
    win = pool_windows(&tm, rows, (const int64_t[]){1, k[1]}, (const int64_t[]){1, st[1]}, (const int64_t[]){1, dl[1]}, 0, pd[1], out, low);
  } else
    win = pool_windows(&tm, x, k, st, dl, pd[0], pd[1], out, low);
  return finish(&tm, tkc_max(win, 2, (const int[]){4, 5}, 0));
}

tkc_tensor *tkc_avg_pool2d(tkc_tensor *x, const int kernel[2], const int stride[2], const int pad[2], int ceil_mode, int count_include_pad) {
  int64_t k[2], st[2], pd[2], dl[2], out[2];
  if (pool_args("avg_pool2d", x, kernel, stride, pad, NULL, ceil_mode, k, st, pd, dl, out)) return NULL;
  tkc_dtype dt = tkc_dtype_of(x), acc = tkc_dtype_work(dt);
  if (!tkc_dtype_is_float(dt)) return tkc_err_null(TKC_EDTYPE, "avg_pool2d needs a float x (got %s)", tkc_dtype_name(dt));
  const int64_t *xs = x->node->shape;
  tmps tm = {0};
  tkc_tensor *sum = T(tkc_sum(pool_windows(&tm, T(tkc_cast(x, acc)), k, st, dl, pd[0], pd[1], out, 0), 2, (const int[]){4, 5}, 0));
  /* the divisor: the same windows over ones (the input, or the input and its padding) */
  int64_t ones_shape[4] = {xs[0], xs[1], xs[2] + (count_include_pad ? 2 * pd[0] : 0), xs[3] + (count_include_pad ? 2 * pd[1] : 0)};
  tkc_tensor *ones = T(tkc_full(x->ctx, acc, 4, ones_shape, 1));
  tkc_tensor *cnt = T(tkc_sum(pool_windows(&tm, ones, k, st, dl, count_include_pad ? 0 : pd[0], count_include_pad ? 0 : pd[1], out, 0), 2, (const int[]){4, 5}, 0));
  return finish(&tm, tkc_cast(T(tkc_div(sum, cnt)), dt));
}

/* ---------------------------------------------------------------- interpolation */

/* (out, in) weights: row o holds the weights of source positions for output position o */
static tkc_tensor *interp_weights(tmps *s, tkc_tensor *x, int64_t in, int64_t out, int mode, int align, tkc_dtype wdt) {
  tkc_tensor *o = tmp(s, tkc_reshape(tmp(s, iota(x, out)), 2, (const int64_t[]){out, 1}));
  tkc_tensor *i = tmp(s, tkc_reshape(tmp(s, iota(x, in)), 2, (const int64_t[]){1, in}));
  if (mode == TKC_INTERP_NEAREST) { /* floor(o * in / out), exactly */
    tkc_tensor *idx = tmp(s, tkc_idiv(tmp(s, tkc_mul(o, tmp(s, isc(x, in)))), tmp(s, isc(x, out))));
    return tkc_cast(tmp(s, tkc_eq(i, idx)), wdt);
  }
  /* source coordinate num / den: o*(in-1) / (out-1), or max((2o+1)*in - out, 0) / (2*out) */
  tkc_tensor *num, *den;
  if (align) {
    num = out > 1 ? tmp(s, tkc_mul(o, tmp(s, isc(x, in - 1)))) : tmp(s, tkc_mul(o, tmp(s, isc(x, 0))));
    den = tmp(s, isc(x, out > 1 ? out - 1 : 1));
  } else {
    tkc_tensor *two_o1 = tmp(s, tkc_add(tmp(s, tkc_mul(o, tmp(s, isc(x, 2)))), tmp(s, isc(x, 1))));
    num = tmp(s, tkc_maximum(tmp(s, tkc_sub(tmp(s, tkc_mul(two_o1, tmp(s, isc(x, in)))), tmp(s, isc(x, out)))), tmp(s, isc(x, 0))));
    den = tmp(s, isc(x, 2 * out));
  }
  tkc_tensor *i0 = tmp(s, tkc_idiv(num, den)), *i1 = tmp(s, tkc_minimum(tmp(s, tkc_add(i0, tmp(s, isc(x, 1)))), tmp(s, isc(x, in - 1))));
  tkc_tensor *f = tmp(s, tkc_div(tmp(s, tkc_cast(tmp(s, tkc_mod(num, den)), wdt)), tmp(s, tkc_cast(den, wdt))));
  tkc_tensor *zero = tmp(s, tkc_scalar(x->ctx, wdt, 0)), *one = tmp(s, tkc_scalar(x->ctx, wdt, 1));
  tkc_tensor *w0 = tmp(s, tkc_where(tmp(s, tkc_eq(i, i0)), tmp(s, tkc_sub(one, f)), zero));
  return tkc_add(w0, tmp(s, tkc_where(tmp(s, tkc_eq(i, i1)), f, zero)));
}

tkc_tensor *tkc_interpolate(tkc_tensor *x, int64_t out_h, int64_t out_w, int mode, int align_corners) {
  if (tkc_check(x)) return NULL;
  const tkc_lazy *n = x->node;
  if (n->ndim != 4) return tkc_err_null(TKC_ESHAPE, "interpolate needs x NCHW (4-D), got %d dims", n->ndim);
  if (mode != TKC_INTERP_NEAREST && mode != TKC_INTERP_BILINEAR) return tkc_err_null(TKC_EINVAL, "interpolate: unknown mode %d", mode);
  if (mode == TKC_INTERP_NEAREST && align_corners) return tkc_err_null(TKC_EINVAL, "interpolate: align_corners needs the bilinear mode");
  if (out_h < 1 || out_w < 1) return tkc_err_null(TKC_ESHAPE, "interpolate: output size %lldx%lld", (long long)out_h, (long long)out_w);
  tkc_dtype dt = n->dtype;
  if (mode == TKC_INTERP_BILINEAR ? !tkc_dtype_is_float(dt) : dt == TKC_BOOL)
    return tkc_err_null(TKC_EDTYPE, "interpolate: %s x in %s mode", tkc_dtype_name(dt), mode ? "bilinear" : "nearest");
  int64_t in[2] = {n->shape[2], n->shape[3]}, out[2] = {out_h, out_w};
  for (int i = 0; i < 2; i++) /* before 2 * out + 1 below: a size past 2^31 has no int32 index anyway */
    if (out[i] > INT32_MAX) return tkc_err_null(TKC_ESHAPE, "interpolate: %s %lld is 2^31 or more", i ? "out_w" : "out_h", (long long)out[i]);
  if (spatial_ok("interpolate", n, NULL)) return NULL;
  for (int i = 0; i < 2; i++) /* index math in int32: (2*out + 1) * in */
    if (in[i] < 1 || numel_ok("interpolate", 3, (const int64_t[]){2 * out[i] + 1, in[i] + 1, 2})) {
      if (in[i] < 1) return tkc_err_null(TKC_ESHAPE, "interpolate: an empty input axis");
      return NULL;
    }
  if (numel_ok("interpolate", 4, (const int64_t[]){n->shape[0], n->shape[1], out_h, in[1] > out_w ? in[1] : out_w})) return NULL;
  tkc_dtype wdt = mode == TKC_INTERP_NEAREST ? dt : tkc_dtype_work(dt);
  tmps tm = {0};
  tkc_tensor *y = T(tkc_reshape(x, 4, n->shape));
  if (out_h != in[0]) y = T(tkc_matmul(T(interp_weights(&tm, x, in[0], out_h, mode, align_corners, wdt)), y));
  if (out_w != in[1]) y = T(tkc_matmul(y, T(tkc_transpose(T(interp_weights(&tm, x, in[1], out_w, mode, align_corners, wdt)), 0, 1))));
  return finish(&tm, tkc_cast(y, dt));
}

/* ---------------------------------------------------------------- attention */

tkc_tensor *tkc_scaled_dot_product_attention(tkc_tensor *q, tkc_tensor *k, tkc_tensor *v, tkc_tensor *mask, int causal, double scale) {
  const char *op = "scaled_dot_product_attention";
  if (check_in(op, 3, q, k, v, mask, NULL)) return NULL;
  const tkc_lazy *qn = q->node, *kn = k->node, *vn = v->node;
  if (qn->ndim < 2 || kn->ndim < 2 || vn->ndim < 2)
    return tkc_err_null(TKC_ESHAPE, "%s: q %s, k %s, v %s: needs q, k, v of 2 or more dims", op, TKC_NODE_SHAPE(qn), TKC_NODE_SHAPE(kn), TKC_NODE_SHAPE(vn));
  if (!tkc_dtype_is_float(qn->dtype) || !tkc_dtype_is_float(kn->dtype) || !tkc_dtype_is_float(vn->dtype))
    return tkc_err_null(TKC_EDTYPE, "%s needs float q, k, v", op);
  int64_t l = qn->shape[qn->ndim - 2], e = qn->shape[qn->ndim - 1], s = kn->shape[kn->ndim - 2];
  if (kn->shape[kn->ndim - 1] != e)
    return tkc_err_null(TKC_ESHAPE, "%s: q %s and k %s have head dims %lld and %lld", op, TKC_NODE_SHAPE(qn), TKC_NODE_SHAPE(kn), (long long)e,
                        (long long)kn->shape[kn->ndim - 1]);
  if (vn->shape[vn->ndim - 2] != s)
    return tkc_err_null(TKC_ESHAPE, "%s: k %s and v %s have %lld and %lld positions", op, TKC_NODE_SHAPE(kn), TKC_NODE_SHAPE(vn), (long long)s,
                        (long long)vn->shape[vn->ndim - 2]);
  if (!isfinite(scale)) return tkc_err_null(TKC_EINVAL, "%s: scale must be finite", op);
  if (mask && !tkc_dtype_is_float(mask->node->dtype) && mask->node->dtype != TKC_BOOL) return tkc_err_null(TKC_EDTYPE, "%s: the mask must be bool or float", op);
  tmps tm = {0};
  tkc_tensor *scores = T(tkc_matmul(q, T(tkc_transpose(k, -1, -2))));
  if (!scores) return finish(&tm, NULL);
  const tkc_lazy *sn = scores->node;
  if (mask) { /* broadcasts to the scores without growing them */
    const tkc_lazy *mn = mask->node;
    int ok = mn->ndim <= sn->ndim;
    for (int i = 1; ok && i <= mn->ndim; i++) ok = mn->shape[mn->ndim - i] == 1 || mn->shape[mn->ndim - i] == sn->shape[sn->ndim - i];
    if (!ok) return finish(&tm, tkc_err_null(TKC_ESHAPE, "%s: the mask %s does not broadcast to the scores %s", op, TKC_NODE_SHAPE(mask->node), TKC_NODE_SHAPE(sn)));
  }
  tkc_tensor *x = T(tkc_mul(scores, T(sc(scores, scale != 0 ? scale : 1.0 / sqrt((double)e)))));
  tkc_tensor *ninf = T(sc(scores, -INFINITY));
  if (causal) {
    tkc_tensor *j = T(tkc_reshape(T(iota(q, s)), 2, (const int64_t[]){1, s})), *i = T(tkc_reshape(T(iota(q, l)), 2, (const int64_t[]){l, 1}));
    x = T(tkc_where(T(tkc_le(j, i)), x, ninf));
  }
  if (mask) x = mask->node->dtype == TKC_BOOL ? T(tkc_where(mask, x, ninf)) : T(tkc_add(x, mask));
  return finish(&tm, tkc_matmul(T(tkc_softmax(x, -1)), v));
}

/* ---------------------------------------------------------------- losses */

/* the first index of a realized integer target outside [0, c), or -1 (-2 + error when it cannot be read) */
static int64_t bad_index(tkc_tensor *target, int64_t c, int64_t *value) {
  tkc_dtype dt = target->node->dtype;
  int64_t n = tkc_numel(target);
  size_t sz = tkc_dtype_size(dt);
  unsigned char *buf = tkc_malloc(n ? (size_t)n * sz : 1);
  if (!buf) return tkc_err(TKC_ENOMEM, "out of memory checking the target"), -2;
  if (tkc_copy_out(target, buf, (size_t)n * sz)) {
    tkc_free(buf);
    return -2;
  }
  int64_t bad = -1;
  for (int64_t i = 0; i < n && bad < 0; i++) {
    int64_t s = 0;
    uint64_t u = 0;
    switch (sz) {
    case 1: { int8_t a; memcpy(&a, buf + i, 1); s = a; u = (uint8_t)a; } break;
    case 2: { int16_t a; memcpy(&a, buf + 2 * i, 2); s = a; u = (uint16_t)a; } break;
    case 4: { int32_t a; memcpy(&a, buf + 4 * i, 4); s = a; u = (uint32_t)a; } break;
    default: { int64_t a; memcpy(&a, buf + 8 * i, 8); s = a; u = (uint64_t)a; } break;
    }
    int ok = tkc_dtype_is_unsigned(dt) ? u < (uint64_t)c : s >= 0 && s < c;
    if (!ok) bad = i, *value = tkc_dtype_is_unsigned(dt) ? (int64_t)u : s;
  }
  tkc_free(buf);
  return bad;
}

static tkc_tensor *nll(const char *op, tkc_tensor *lp, tkc_tensor *target, int reduction, int from_logits) {
  if (check_in(op, 2, lp, target, NULL, NULL, NULL)) return NULL;
  const tkc_lazy *ln = lp->node, *tn = target->node;
  if (ln->ndim != 2 || tn->ndim != 1 || tn->shape[0] != ln->shape[0])
    return tkc_err_null(TKC_ESHAPE, "%s needs %s (N, C) and target (N)", op, from_logits ? "logits" : "log_probs");
  if (!tkc_dtype_is_float(ln->dtype)) return tkc_err_null(TKC_EDTYPE, "%s needs float %s", op, from_logits ? "logits" : "log_probs");
  if (!tkc_dtype_is_int(tn->dtype)) return tkc_err_null(TKC_EDTYPE, "%s: the target must hold integer class indices (got %s)", op, tkc_dtype_name(tn->dtype));
  if (reduction < TKC_REDUCTION_NONE || reduction > TKC_REDUCTION_SUM) return tkc_err_null(TKC_EINVAL, "%s: unknown reduction %d", op, reduction);
  int64_t nb = ln->shape[0], c = ln->shape[1], value = 0;
  if (c < 1) return tkc_err_null(TKC_ESHAPE, "%s: no classes (C = 0)", op);
  if (c > INT32_MAX) return tkc_err_null(TKC_ESHAPE, "%s: 2^31 or more classes", op);
  if (tn->kind == TKC_LZ_BUFFER) {
    int64_t bad = bad_index(target, c, &value);
    if (bad == -2) return NULL;
    if (bad >= 0) return tkc_err_null(TKC_EINVAL, "%s: target[%lld] = %lld is not a class index in [0, %lld)", op, (long long)bad, (long long)value, (long long)c);
  }
  tmps tm = {0};
  if (from_logits) lp = T(tkc_log_softmax(lp, 1));
  tkc_dtype cmp = tkc_least_upper_dtype(tn->dtype, TKC_INT32); /* compares without wrapping */
  tkc_tensor *cls = T(tkc_cast(T(tkc_reshape(T(iota(target, c)), 2, (const int64_t[]){1, c})), cmp));
  tkc_tensor *hit = T(tkc_eq(cls, T(tkc_cast(T(tkc_reshape(target, 2, (const int64_t[]){nb, 1})), cmp))));
  tkc_tensor *loss = lp ? T(tkc_neg(T(tkc_sum(T(tkc_where(hit, lp, T(sc(lp, 0)))), 1, (const int[]){1}, 0)))) : NULL;
  if (reduction == TKC_REDUCTION_NONE) return finish(&tm, loss ? tkc_reshape(loss, 1, &nb) : NULL);
  return finish(&tm, reduction == TKC_REDUCTION_SUM ? tkc_sum(loss, 0, NULL, 0) : tkc_mean(loss, 0, NULL, 0));
}

tkc_tensor *tkc_nll_loss(tkc_tensor *log_probs, tkc_tensor *target, int reduction) { return nll("nll_loss", log_probs, target, reduction, 0); }
tkc_tensor *tkc_cross_entropy(tkc_tensor *logits, tkc_tensor *target, int reduction) { return nll("cross_entropy", logits, target, reduction, 1); }
