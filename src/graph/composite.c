/* Composite ops built from the primitives, as tinygrad builds them: matmul (reshape, expand, mul,
 * sum), softmax / log_softmax (max-subtracted), conv2d (pad + sliding-window view, mul, sum). */
#include <string.h>
#include "codegen/opts.h" /* tkc_host_simd_bytes: the width of the register tile a packed panel matches */
#include "graph/tensor_internal.h"
#include "runtime/device.h"

/* frees the temporaries of a composite (NULLs are fine) */
static void drop(tkc_tensor **ts, int n) {
  for (int i = 0; i < n; i++) tkc_tensor_free(ts[i]);
}

static tkc_tensor *reshape_to(tkc_tensor *t, int ndim, const int64_t *shape) { return t ? tkc_reshape(t, ndim, shape) : NULL; }

/* a * b summed over axes (keepdim) and cast back to the operands' dtype dt. float16 / bfloat16
 * accumulate in float32, so the operands are widened before the multiply: each product is exact and
 * the result is rounded once (as cuBLAS / torch), not (half)(a*b) per term. Takes a and b. */
static tkc_tensor *mul_sum(tkc_tensor *a, tkc_tensor *b, int naxes, const int *axes, tkc_dtype dt) {
  bool widen = tkc_dtype_is_narrow_float(dt);
  tkc_tensor *wa = a && widen ? tkc_cast(a, TKC_FLOAT32) : NULL, *wb = b && widen ? tkc_cast(b, TKC_FLOAT32) : NULL;
  tkc_tensor *p = widen ? (wa && wb ? tkc_mul(wa, wb) : NULL) : (a && b ? tkc_mul(a, b) : NULL);
  tkc_tensor *s = p ? tkc_sum(p, naxes, axes, 1) : NULL;
  tkc_tensor *r = s ? tkc_cast(s, dt) : NULL; /* tinygrad casts the sum back */
  tkc_tensor *tmp[5] = {a, b, wa, wb, p};
  drop(tmp, 5);
  tkc_tensor_free(s);
  return r;
}

/* The width W of the host matmul kernels' register tile in float32 lanes (two vectors: 32 with
 * AVX-512, 16 with AVX2), which the panel copies below match; 0 on a device that is not the host */
static int64_t host_tile_width(const tkc_ctx *ctx) { return ctx->dev->impl->host_memory ? 2 * (int64_t)tkc_host_simd_bytes() / 4 : 0; }

/* b (K, N) read from its copy in panels (N/W, K, W): a (K, N) view of the copy */
static tkc_tensor *panels_of(tkc_tensor *b, int64_t k, int64_t n, int64_t w) {
  int64_t panels[3] = {k, n / w, w}, back[2] = {k, n};
  tkc_tensor *p[4] = {0};
  p[0] = tkc_reshape(b, 3, panels);
  p[1] = p[0] ? tkc_permute(p[0], (const int[]){1, 0, 2}) : NULL;
  p[2] = p[1] ? tkc_contiguous(p[1]) : NULL; /* (N/W, K, W) */
  p[3] = p[2] ? tkc_permute(p[2], (const int[]){1, 0, 2}) : NULL;
  tkc_tensor *r = p[3] ? tkc_reshape(p[3], 2, back) : NULL;
  drop(p, 4);
  return r;
}

/* whether b (K, N) is panels_of's view of a (N/W, K, W) buffer: tkc_matmul_weight_layout's, realized
 * (a buffer seen through that view; as for conv weights, the view is what tells) */
static bool is_panels(const tkc_lazy *b, int64_t k, int64_t n, int64_t w) {
  if (b->kind != TKC_LZ_BUFFER || !b->rbuf || b->target) return false;
  tkc_st want;
  tkc_st_contiguous(&want, 3, (const int64_t[]){n / w, k, w});
  return !tkc_st_permute(&want, (const int[]){1, 0, 2}) && !tkc_st_reshape(&want, 2, (const int64_t[]){k, n}) && tkc_st_equal(&want, b->st);
}

/* b (K, N) read from its transpose copied contiguous (N, K) */
static tkc_tensor *transposed_copy(tkc_tensor *b) {
  tkc_tensor *p[2] = {0};
  p[0] = tkc_transpose(b, 0, 1);
  p[1] = p[0] ? tkc_contiguous(p[0]) : NULL;
  tkc_tensor *r = p[1] ? tkc_transpose(p[1], 0, 1) : NULL;
  drop(p, 2);
  return r;
}

tkc_tensor *tkc_matmul_weight_layout(tkc_tensor *b) {
  if (tkc_check(b)) return NULL;
  const tkc_lazy *y = b->node;
  if (y->ndim != 2) return tkc_err_null(TKC_ESHAPE, "matmul_weight_layout: b %s must be (K, N) (2-d)", TKC_NODE_SHAPE(y));
  int64_t k = y->shape[0], n = y->shape[1], w = host_tile_width(b->ctx);
  bool fixed = !tkc_dim_is_var(k) && !tkc_dim_is_var(n) && w && y->dtype == TKC_FLOAT32;
  if (fixed && n % w == 0 && n > w) return panels_of(b, k, n, w);
  /* a few columns that the vectors do not divide (a 10-class output layer): (N, K) rows, which
   * tkc_matmul reads as dot products and otherwise copies so per call (its `transpose`) */
  if (fixed && n > 1 && n < 64 && n % 8 && k >= 64) return transposed_copy(b);
  return tkc_contiguous(b);
}

tkc_tensor *tkc_matmul(tkc_tensor *a, tkc_tensor *b) {
  if (tkc_check(a) || tkc_check(b)) return NULL;
  const tkc_lazy *x = a->node, *y = b->node;
  if (!x->ndim || !y->ndim) return tkc_err_null(TKC_ESHAPE, "matmul: %s @ %s: matmul needs at least 1-d operands", TKC_NODE_SHAPE(x), TKC_NODE_SHAPE(y));
  if (a->ctx != b->ctx) return tkc_err_null(TKC_EINVAL, "matmul: the tensors belong to different ctxs");
  int an = x->ndim == 1 ? 2 : x->ndim, bn = y->ndim == 1 ? 2 : y->ndim;
  int64_t as[TKC_MAX_DIMS], bs[TKC_MAX_DIMS];
  if (x->ndim == 1) { as[0] = 1; as[1] = x->shape[0]; } else memcpy(as, x->shape, sizeof(int64_t) * (size_t)an);
  if (y->ndim == 1) { bs[0] = y->shape[0]; bs[1] = 1; } else memcpy(bs, y->shape, sizeof(int64_t) * (size_t)bn);
  int64_t m = as[an - 2], k = as[an - 1], k2 = bs[bn - 2], n = bs[bn - 1];
  if (k != k2) return tkc_err_null(TKC_ESHAPE, "matmul: %s @ %s: inner dims %lld and %lld differ", TKC_NODE_SHAPE(x), TKC_NODE_SHAPE(y), (long long)k, (long long)k2);
  int nb = (an > bn ? an : bn) - 2; /* broadcast batch dims */
  if (nb + 3 > TKC_MAX_DIMS)
    return tkc_err_null(TKC_ESHAPE, "matmul: %s @ %s: %d batch dims is too many (at most %d)", TKC_NODE_SHAPE(x), TKC_NODE_SHAPE(y), nb, TKC_MAX_DIMS - 3);
  int64_t xs[TKC_MAX_DIMS], ys[TKC_MAX_DIMS], out[TKC_MAX_DIMS];
  for (int i = 0; i < nb; i++) {
    int ia = i - (nb - (an - 2)), ib = i - (nb - (bn - 2));
    xs[i] = ia >= 0 ? as[ia] : 1;
    ys[i] = ib >= 0 ? bs[ib] : 1;
    if (xs[i] != ys[i] && xs[i] != 1 && ys[i] != 1)
      return tkc_err_null(TKC_ESHAPE, "matmul: %s @ %s: batch dims %s and %s do not broadcast (dim %d: %lld vs %lld)", TKC_NODE_SHAPE(x), TKC_NODE_SHAPE(y),
                          TKC_SHAPE_STR(an - 2, as), TKC_SHAPE_STR(bn - 2, bs), i, (long long)xs[i], (long long)ys[i]);
  }
  /* b a transpose of a row-major (..., N, K) value (attention's K^T, the W^T of a backward pass): its
   * copy (..., K, N) first, so that the reduce vectorizes over N with a register tile as a matmul
   * does; read as it is, only k runs contiguously in both operands (dot products: a horizontal sum
   * per output, 2-3x slower at short k). Only when b is an expression: the kernel computing it then
   * writes it transposed, at no extra pass (a realized b, a weight, would be copied on every use).
   * From k = 512 on, the dot products run within 5-15% of the tile, and b's value is copied in its
   * own (..., N, K) layout instead: a kernel writing it transposed reads its inputs across rows, which
   * for a weight dequantized from packed blocks (a prefill's W^T) is a gather per lane, 4-8x slower. */
  tkc_tensor *b_in = b, *b_copy = NULL;
  const tkc_lazy *b_base = y;
  while (b_base->kind == TKC_LZ_MOVE) b_base = b_base->src[0];
  if (y->kind == TKC_LZ_MOVE && y->op == TKC_OP_PERMUTE && y->ndim >= 2 && m >= 16 && n >= 16 && k >= 16 && b_base->kind != TKC_LZ_BUFFER &&
      b_base->kind != TKC_LZ_CONST && y->arg[y->ndim - 1] != y->ndim - 1 && y->arg[y->ndim - 2] == y->ndim - 1) {
    if (!(b_copy = k >= 512 ? transposed_copy(b) : tkc_contiguous(b))) return NULL;
    b = b_copy, y = b->node;
  }
  /* b in panels (N/W, K, W), W the host matmul tile's width (two vectors), on host devices: the
   * register-tiled kernel reads a (K, W) panel per row tile; read straight from a (K, N) b, each k is
   * a new row N floats away, and at a power-of-two row length (N = 1024, 2048) every k of the panel
   * falls into the same few cache sets, so no level keeps the panel (matmul 2048 at half numpy's
   * speed; packed, 2x faster, as BLAS packs it). Only where the copy pays (M >= 512 rows reuse it)
   * and the panel would alias: row length a multiple of 4 KB, or b far larger than the L2 (at 512
   * it measured neutral, at 1024 1.2x). */
  int64_t w = host_tile_width(a->ctx), bm = m;
  for (int i = 0; i < nb; i++) bm *= xs[i];
  bool host2d = w && y->dtype == TKC_FLOAT32 && x->dtype == TKC_FLOAT32 && y->ndim == 2;
  for (int i = 0; i < nb; i++) host2d = host2d && ys[i] == 1;
  bool pack = host2d && bm >= 512 && k >= 256 && n % w == 0 && n > w && ((n * 4) % 4096 == 0 || k * n * 4 >= ((int64_t)8 << 20)) && !is_panels(y, k, n, w);
  /* a few columns that the host's vectors do not divide (a 10-class output layer): b's transpose
   * copied contiguous (N, K), so that the reduce runs as dot products along k in both operands with a
   * register tile (3-6x faster than vectors of k gathered from b's rows) */
  bool transpose = !pack && host2d && n > 1 && n < 64 && n % 8 && k >= 64 && bm >= 16 && tkc_lazy_is_contiguous_view(y);
  if (pack || transpose) {
    tkc_tensor *laid = pack ? panels_of(b, k, n, w) : transposed_copy(b);
    tkc_tensor_free(b_copy);
    if (!laid) return NULL;
    b = b_copy = laid, y = b->node;
  }
  /* x: (..., M, 1, K)   y: (..., 1, N, K) read through a transpose of b's last two dims */
  xs[nb] = m; xs[nb + 1] = 1; xs[nb + 2] = k;
  ys[nb] = 1; ys[nb + 1] = n; ys[nb + 2] = k;
  int64_t bt[TKC_MAX_DIMS];
  memcpy(bt, bs, sizeof(int64_t) * (size_t)bn);
  bt[bn - 2] = n;
  bt[bn - 1] = k;
  tkc_tensor *t[8] = {0};
  t[0] = reshape_to(a, an, as);
  t[1] = reshape_to(b, bn, bs);
  t[2] = t[1] ? tkc_transpose(t[1], -1, -2) : NULL;
  t[3] = reshape_to(t[0], nb + 3, xs);
  t[4] = reshape_to(t[2], nb + 3, ys);
  int last = nb + 2;
  t[7] = mul_sum(t[3], t[4], 1, &last, tkc_least_upper_dtype(x->dtype, y->dtype));
  t[3] = t[4] = NULL; /* taken */
  int no = 0;
  for (int i = 0; i < nb; i++) out[no++] = xs[i] == 1 ? ys[i] : xs[i]; /* broadcast: 1 takes the other (0 too) */
  if (x->ndim != 1) out[no++] = m;
  if (y->ndim != 1) out[no++] = n;
  tkc_tensor *r = t[7] ? tkc_reshape(t[7], no, out) : NULL;
  if (r && x->ndim == 2 && y->ndim == 2) tkc_lazy_mark_composite(r->node, TKC_COMP_MATMUL, 2, (tkc_lazy *const[]){a->node, b_in->node}, NULL, 0);
  drop(t, 8);
  tkc_tensor_free(b_copy);
  return r;
}

/* -1 with the error (naming what) when axis is not an axis of a */
static int check_axis(const char *what, const tkc_tensor *a, int axis) {
  int n = a->node->ndim;
  if (axis >= -n && axis < n) return 0;
  return tkc_err(TKC_EINVAL, "%s: axis %d out of range for a %d-d tensor of shape %s", what, axis, n, TKC_NODE_SHAPE(a->node)), -1;
}

tkc_tensor *tkc_softmax(tkc_tensor *a, int axis) {
  if (tkc_check(a) || check_axis("softmax", a, axis)) return NULL;
  tkc_tensor *t[5] = {0};
  t[0] = tkc_max(a, 1, &axis, 1);
  t[1] = t[0] ? tkc_sub(a, t[0]) : NULL;
  t[2] = t[1] ? tkc_exp(t[1]) : NULL;
  t[3] = t[2] ? tkc_sum(t[2], 1, &axis, 1) : NULL;
  /* times 1/sum, computed once per row: a division per element costs more than the exp on hosts */
  t[4] = t[3] ? tkc_recip(t[3]) : NULL;
  tkc_tensor *r = t[4] ? tkc_mul(t[2], t[4]) : NULL;
  drop(t, 5);
  return r;
}

tkc_tensor *tkc_log_softmax(tkc_tensor *a, int axis) {
  if (tkc_check(a) || check_axis("log_softmax", a, axis)) return NULL;
  tkc_tensor *t[5] = {0};
  t[0] = tkc_max(a, 1, &axis, 1);
  t[1] = t[0] ? tkc_sub(a, t[0]) : NULL;
  t[2] = t[1] ? tkc_exp(t[1]) : NULL;
  t[3] = t[2] ? tkc_sum(t[2], 1, &axis, 1) : NULL;
  t[4] = t[3] ? tkc_log(t[3]) : NULL;
  tkc_tensor *r = t[4] ? tkc_sub(t[1], t[4]) : NULL;
  drop(t, 5);
  return r;
}

/* (N, C, H, W) -> (N, C, OH, OW, KH, KW): a view of the sliding windows, no copy */
static tkc_tensor *windows(tkc_tensor *x, int64_t kh, int64_t kw, int64_t stride) {
  const tkc_lazy *n = x->node;
  int64_t shape[TKC_MAX_DIMS], arg[3] = {kh, kw, stride};
  memcpy(shape, n->shape, sizeof(int64_t) * (size_t)n->ndim);
  shape[2] = (n->shape[2] - kh) / stride + 1;
  shape[3] = (n->shape[3] - kw) / stride + 1;
  shape[4] = kh;
  shape[5] = kw;
  return tkc_wrap(x->ctx, tkc_lz_move(x->node, TKC_MOVE_WINDOW, arg, 3, 6, shape));
}

/* A stride-1 conv's windows read along the rows of its padded input laid end to end: the output is
 * computed on a grid of rows wg >= wp wide (the padded row), whose last wg - ow columns are garbage
 * that the result's shrink drops, so that output p = y*wg + x reads xp[c][p + i*wg + j] for window
 * element (i, j): for each (c, i, j) a run of contiguous elements along p, which the register tile
 * loads as vectors, with no window index arithmetic, no padding guards and no im2col copy (KH*KW
 * times the input). x is padded (one more row at the bottom, so that the last windows' rows stay
 * inside) and copied once, 1.1x the input. Returns the view (N, 1, C, 1, OH*wg, KH, KW): the shape of
 * the windows' view form (N, 1, C, OH, OW, KH, KW), with the grid as one row. */
static tkc_tensor *flat_windows(tkc_tensor *x, int64_t pad, int64_t kh, int64_t kw, int64_t oh, int64_t wg) {
  const tkc_lazy *xn = x->node;
  int64_t nb = xn->shape[0], c = xn->shape[1], rows = xn->shape[2] + 2 * pad + 1, len = rows * wg, span = kh * wg;
  int64_t pads[8] = {0, 0, 0, 0, pad, pad + 1, pad, wg - xn->shape[3] - pad};
  tkc_tensor *t[6] = {0};
  t[0] = tkc_pad(x, pads, 0);
  t[1] = t[0] ? tkc_contiguous(t[0]) : NULL; /* (N, C, rows, wg) */
  t[2] = reshape_to(t[1], 4, (const int64_t[]){nb, c, 1, len});
  t[3] = t[2] ? windows(t[2], 1, span, 1) : NULL; /* (N, C, 1, len - span + 1, 1, span) */
  t[4] = reshape_to(t[3], 5, (const int64_t[]){nb, c, len - span + 1, kh, wg});
  t[5] = t[4] ? tkc_shrink(t[4], (const int64_t[]){0, nb, 0, c, 0, oh * wg, 0, kh, 0, kw}) : NULL;
  tkc_tensor *r = reshape_to(t[5], 7, (const int64_t[]){nb, 1, c, 1, oh * wg, kh, kw});
  drop(t, 6);
  return r;
}

/* The memory order in which tkc_conv2d's kernels read w (O, I, KH, KW), as a 5-D view of w
 * (O/P, I, KH, KW, P): the output channels innermost, so that the register tile loads vectors of them.
 * Channel-last (P = O) in general; on host devices, for layers whose (K, O) rows would alias in the
 * cache (O*4 a multiple of 1 KB: 256 and 512 channels), panels of P = two vectors, as a matmul's b
 * (tkc_matmul). NULL (no error) when w is read as it is (O not a multiple of 8). */
static tkc_tensor *conv_weight_order(tkc_tensor *w) {
  const tkc_lazy *wn = w->node;
  int64_t o = wn->shape[0], kk = wn->shape[1] * wn->shape[2] * wn->shape[3], p = o;
  if (o % 8) return NULL;
  int64_t lanes = host_tile_width(w->ctx);
  if (lanes && wn->dtype == TKC_FLOAT32 && o % lanes == 0 && o > lanes && ((o * 4) % 1024 == 0 || kk * o * 4 >= ((int64_t)8 << 20)))
    p = lanes;
  tkc_tensor *t[2] = {0};
  t[0] = tkc_reshape(w, 5, (const int64_t[]){o / p, p, wn->shape[1], wn->shape[2], wn->shape[3]});
  t[1] = t[0] ? tkc_permute(t[0], (const int[]){0, 2, 3, 4, 1}) : NULL;
  tkc_tensor_free(t[0]);
  return t[1];
}

/* w as tkc_conv2d_weight_layout made it: a realized buffer laid out in conv_weight_order's order
 * `ord` (5-D), seen as OIHW through a permute and a reshape: a new handle that sees that buffer in
 * the order, contiguously, else NULL (no error). (Composing the reshape's stacked views back is not
 * recognized as contiguous, so the layout is recognized by its view instead.) */
static tkc_tensor *laid_out_source(tkc_tensor *w, const tkc_tensor *ord) {
  const tkc_lazy *n = w->node;
  if (n->kind != TKC_LZ_BUFFER || n->target || !n->rbuf || n->requires_grad || n->needs_grad || ord->node->ndim != 5) return NULL; /* (a new leaf: no gradient path) */
  tkc_st want;
  tkc_st_contiguous(&want, 5, ord->node->shape);
  if (tkc_st_permute(&want, (const int[]){0, 4, 1, 2, 3}) || tkc_st_reshape(&want, 4, n->shape) || !tkc_st_equal(&want, n->st)) return NULL;
  tkc_lazy *b = tkc_lazy_new(w->ctx, TKC_LZ_BUFFER, n->dtype, 5, ord->node->shape);
  tkc_st flat;
  tkc_st_contiguous(&flat, 5, ord->node->shape);
  if (!b || tkc_lazy_become_buffer(b, n->rbuf, &flat)) {
    if (b) tkc_lazy_unref(b);
    return NULL;
  }
  return tkc_wrap(w->ctx, b);
}

/* the OIHW view of a tensor in conv_weight_order's order */
static tkc_tensor *conv_weight_oihw(tkc_tensor *ordered, const int64_t *oihw) {
  tkc_tensor *t = tkc_permute(ordered, (const int[]){0, 4, 1, 2, 3}), *r = t ? tkc_reshape(t, 4, oihw) : NULL;
  tkc_tensor_free(t);
  return r;
}

tkc_tensor *tkc_conv2d_weight_layout(tkc_tensor *w) {
  if (tkc_check(w)) return NULL;
  if (w->node->ndim != 4) return tkc_err_null(TKC_ESHAPE, "conv2d_weight_layout: w %s must be OIHW (4-d)", TKC_NODE_SHAPE(w->node));
  tkc_tensor *ord = conv_weight_order(w); /* NULL: conv2d reads w as it is */
  if (!ord) return tkc_contiguous(w);
  tkc_tensor *copy = tkc_contiguous(ord), *r = copy ? conv_weight_oihw(copy, w->node->shape) : NULL;
  tkc_tensor_free(ord);
  tkc_tensor_free(copy);
  return r;
}

/* A conv of stride s as one of stride 1 over the input's s x s phases as channels (space to depth):
 * xp[c][s*y + i] with i = s*a + r is phase r's row y + a, so x (N, C, H, W) padded becomes
 * (N, C*s*s, OH + KA - 1, OW + KB - 1) and w (O, C, KH, KW) becomes (O, C*s*s, KA, KB), KA = ceil(KH/s),
 * with zero taps past the kernel's end. Returns that conv (no padding, stride 1). */
static tkc_tensor *phase_conv2d(tkc_tensor *x, tkc_tensor *w, tkc_tensor *bias, int64_t s, int64_t pad, int64_t oh, int64_t ow) {
  const tkc_lazy *xn = x->node, *wn = w->node;
  int64_t nb = xn->shape[0], c = xn->shape[1], o = wn->shape[0];
  int64_t ka = (wn->shape[2] + s - 1) / s, kb = (wn->shape[3] + s - 1) / s, hs = oh + ka - 1, ws = ow + kb - 1;
  int64_t hp = xn->shape[2] + 2 * pad, wp = xn->shape[3] + 2 * pad, eh = s * hs > hp ? s * hs - hp : 0, ew = s * ws > wp ? s * ws - wp : 0;
  tkc_tensor *t[10] = {0};
  t[0] = tkc_pad(x, (const int64_t[]){0, 0, 0, 0, pad, pad + eh, pad, pad + ew}, 0);
  t[1] = t[0] ? tkc_shrink(t[0], (const int64_t[]){0, nb, 0, c, 0, s * hs, 0, s * ws}) : NULL;
  t[2] = reshape_to(t[1], 6, (const int64_t[]){nb, c, hs, s, ws, s});
  t[3] = t[2] ? tkc_permute(t[2], (const int[]){0, 1, 3, 5, 2, 4}) : NULL;
  t[4] = reshape_to(t[3], 4, (const int64_t[]){nb, c * s * s, hs, ws});
  t[5] = tkc_pad(w, (const int64_t[]){0, 0, 0, 0, 0, s * ka - wn->shape[2], 0, s * kb - wn->shape[3]}, 0);
  t[6] = reshape_to(t[5], 6, (const int64_t[]){o, c, ka, s, kb, s});
  t[7] = t[6] ? tkc_permute(t[6], (const int[]){0, 1, 3, 5, 2, 4}) : NULL;
  t[8] = reshape_to(t[7], 4, (const int64_t[]){o, c * s * s, ka, kb});
  tkc_tensor *r = t[4] && t[8] ? tkc_conv2d(t[4], t[8], bias, 1, 0) : NULL;
  drop(t, 10);
  return r;
}

tkc_tensor *tkc_conv2d(tkc_tensor *x, tkc_tensor *w, tkc_tensor *bias, int stride, int padding) {
  if (tkc_check(x) || tkc_check(w) || (bias && tkc_check(bias))) return NULL;
  const tkc_lazy *xn = x->node, *wn = w->node;
  if (xn->ndim != 4 || wn->ndim != 4)
    return tkc_err_null(TKC_ESHAPE, "conv2d: x %s and w %s: conv2d needs x NCHW and w OIHW (4-d)", TKC_NODE_SHAPE(xn), TKC_NODE_SHAPE(wn));
  if (stride < 1 || padding < 0) return tkc_err_null(TKC_EINVAL, "conv2d: stride (%d) must be >= 1 and padding (%d) >= 0", stride, padding);
  int64_t nb = xn->shape[0], c = xn->shape[1], o = wn->shape[0], kh = wn->shape[2], kw = wn->shape[3];
  if (wn->shape[1] != c) return tkc_err_null(TKC_ESHAPE, "conv2d: x %s has %lld channels, w %s expects %lld", TKC_NODE_SHAPE(xn), (long long)c, TKC_NODE_SHAPE(wn), (long long)wn->shape[1]);
  /* padding up to INT_MAX: 2 * padding in int64, and a padded input or windows too large to exist
   * refused naming padding (not as a kernel larger than a wrapped size) */
  int64_t hp, wp;
  if (__builtin_add_overflow(xn->shape[2], 2 * (int64_t)padding, &hp) || __builtin_add_overflow(xn->shape[3], 2 * (int64_t)padding, &wp))
    return tkc_err_null(TKC_ESHAPE, "conv2d: padding %d: the padded input of x %s overflows 64 bits", padding, TKC_NODE_SHAPE(xn));
  if (kh < 1 || kw < 1 || kh > hp || kw > wp) return tkc_err_null(TKC_ESHAPE, "conv2d: the kernel %lldx%lld is larger than the padded input %lldx%lld", (long long)kh, (long long)kw, (long long)hp, (long long)wp);
  if (bias && (bias->node->ndim != 1 || bias->node->shape[0] != o)) return tkc_err_null(TKC_ESHAPE, "conv2d: bias %s must have shape (%lld,)", TKC_NODE_SHAPE(bias->node), (long long)o);
  if (bias && (bias->ctx != x->ctx)) return tkc_err_null(TKC_EINVAL, "conv2d: the tensors belong to different ctxs");
  int64_t oh = (hp - kh) / stride + 1, ow = (wp - kw) / stride + 1;
  int64_t padded[4] = {nb, c, hp, wp}, windowed[7] = {nb, o, c, oh, ow, kh, kw}, item = (int64_t)tkc_dtype_size(tkc_least_upper_dtype(xn->dtype, wn->dtype));
  if (tkc_shape_size_checked(4, padded, item, NULL) || tkc_shape_size_checked(7, windowed, item, NULL))
    return tkc_err_null(TKC_ESHAPE, "conv2d: x %s, w %s, stride %d, padding %d: the padded input (%lldx%lld) or its windows overflow 64 bits in size",
                        TKC_NODE_SHAPE(xn), TKC_NODE_SHAPE(wn), stride, padding, (long long)hp, (long long)wp);
  /* a strided conv with a large kernel (a ResNet's 7x7 stem, stride 2) on a host device: of stride 1
   * over the input's phases (phase_conv2d), which the flat windows then serve (1.3x the taps of a
   * 7x7; the strided windows' copy or direct form ran 3-4x slower at batch 8) */
  bool concrete = true; /* (the flat and phase forms compute with the dims: no dim variables) */
  for (int i = 0; i < 4; i++) concrete = concrete && !tkc_dim_is_var(xn->shape[i]) && !tkc_dim_is_var(wn->shape[i]);
  if (concrete && stride > 1 && kh > 2 * (int64_t)stride && kw > 2 * (int64_t)stride && ow >= 14 && host_tile_width(x->ctx)) {
    tkc_tensor *r = phase_conv2d(x, w, bias, stride, padding, oh, ow);
    if (r) tkc_lazy_mark_composite(r->node, TKC_COMP_CONV2D, 2, (tkc_lazy *const[]){x->node, w->node}, (const int64_t[]){stride, padding}, 2);
    return r;
  }
  int64_t pads[8] = {0, 0, 0, 0, padding, padding, padding, padding};
  int64_t kk = c * kh * kw, pp = oh * ow, out[4] = {nb, o, oh, ow};
  tkc_tensor *t[9] = {0};
  /* On host devices (concrete dims, windows of at most 64 taps, rows of 7 or more):
   * - many output channels (128 or more, in whole register tiles): the tile's vectors run along the
   *   output channels and its rows along an output row, whose inputs it broadcasts, so the windows
   *   are read as a view of the padded input, copied once (no padding guards, no im2col, no garbage
   *   columns: a 7x7 layer's flat grid is 9 wide, 1.3x the work; ResNet's 512-channel convs 1.30 ->
   *   1.05 ms, its stride-2 ones 0.54-0.70 ms plus a 9x copy -> 0.53-0.58 ms);
   * - else, at stride 1: the tile's vectors run along the positions, which the flat windows of the
   *   padded input (flat_windows) make contiguous, at the cost of the grid's kw - 1 garbage columns */
  int64_t lanes = host_tile_width(x->ctx);
  bool host = concrete && lanes && kh * kw <= 64 && ow >= 7;
  bool wide = host && o % lanes == 0 && o >= 128 && (kh * kw > 1 || stride > 1);
  int64_t wg = host && !wide && stride == 1 && kh * kw > 1 ? wp : 0;
  if (!wg) {
    t[0] = tkc_pad(x, pads, 0);
    if (wide) {
      tkc_tensor *copy = t[0] ? tkc_contiguous(t[0]) : NULL;
      tkc_tensor_free(t[0]);
      t[0] = copy;
    }
    t[1] = t[0] ? windows(t[0], kh, kw, stride) : NULL; /* (N, C, OH, OW, KH, KW) */
  }
  int64_t colbytes = nb * kk * pp * item; /* (no overflow: the windows' size was checked) */
  if (wg) {
    t[2] = flat_windows(x, padding, kh, kw, oh, wg); /* (N, 1, C, 1, OH*wg, KH, KW) */
  } else if (t[1] && !wide && kh * kw <= 64 && (colbytes <= ((int64_t)8 << 20) || (ow < 16 && colbytes <= ((int64_t)1 << 29)))) {
    /* when the windows' copy stays in cache (8 MB), or the output rows are too short for the direct
     * form's register tile (7x7, 14x14: it then re-reads the weights per row):
     * a matmul per image: out (N, O, P) = sum over K of cols (N, K, P) * w (O, K), P = OH*OW and
     * K = C*KH*KW. The windows are copied out once, contiguous along P (im2col, as onnxruntime's
     * MLAS), so the reduce loads them as a matmul loads its operand, without the padding guards and
     * window arithmetic of the input's view; a 1x1 conv of stride 1 reads x itself */
    bool direct = kh * kw == 1 && stride == 1 && padding == 0;
    /* on host devices, with P a multiple of the register tile's width W (two vectors), the columns
     * are copied in panels (N, P/W, K, W), as a matmul's b: the tile then reads W contiguous values per
     * k instead of a row P values away from the last (rows that evict each other in the cache) */
    bool panels = !direct && lanes && xn->dtype == TKC_FLOAT32 && wn->dtype == TKC_FLOAT32 && pp % lanes == 0 && pp > lanes;
    tkc_tensor *tmp[6] = {0};
    if (panels) { /* (N, C, OH, OW, KH, KW) -> (N, C, P/W, W, KH, KW) -> (N, P/W, C, KH, KW, W) */
      tmp[0] = reshape_to(t[1], 6, (const int64_t[]){nb, c, pp / lanes, lanes, kh, kw});
      tmp[1] = tmp[0] ? tkc_permute(tmp[0], (const int[]){0, 2, 1, 4, 5, 3}) : NULL;
      tmp[2] = tmp[1] ? tkc_contiguous(tmp[1]) : NULL;
      tmp[3] = reshape_to(tmp[2], 4, (const int64_t[]){nb, pp / lanes, kk, lanes});
      tmp[4] = tmp[3] ? tkc_permute(tmp[3], (const int[]){0, 1, 3, 2}) : NULL; /* (N, P/W, W, K) */
      t[2] = reshape_to(tmp[4], 4, (const int64_t[]){nb, 1, pp, kk});
    } else {
      tmp[0] = direct ? NULL : tkc_permute(t[1], (const int[]){0, 1, 4, 5, 2, 3});
      tmp[1] = tmp[0] ? tkc_contiguous(tmp[0]) : NULL;
      tmp[2] = reshape_to(direct ? t[1] : tmp[1], 3, (const int64_t[]){nb, kk, pp});
      tmp[3] = tmp[2] ? tkc_permute(tmp[2], (const int[]){0, 2, 1}) : NULL;
      t[2] = reshape_to(tmp[3], 4, (const int64_t[]){nb, 1, pp, kk});
    }
    drop(tmp, 6);
  } else { /* wide, or large windows (a weight gradient's): the product (N, O, C, OH, OW, KH, KW) of the view */
    t[2] = reshape_to(t[1], 7, (const int64_t[]){nb, 1, c, oh, ow, kh, kw});
  }
  /* weights in conv_weight_order's layout (output channels innermost: the conv's register tile loads
   * vectors of them): one small copy kernel, none when w is a view of such a buffer already
   * (tkc_conv2d_weight_layout, as the ONNX frontend keeps its conv weights) */
  tkc_tensor *wperm = conv_weight_order(w);
  tkc_tensor *wl = NULL;
  if (wperm) wl = tkc_lazy_is_contiguous_view(wperm->node) ? tkc_tensor_ref(wperm) : laid_out_source(w, wperm);
  if (wperm && !wl) wl = tkc_contiguous(wperm);
  tkc_tensor *wv = wl ? conv_weight_oihw(wl, wn->shape) : NULL;
  bool flat = t[2] && t[2]->node->ndim == 4;
  t[3] = flat ? tkc_reshape(wv ? wv : w, 4, (const int64_t[]){1, o, 1, kk}) : tkc_reshape(wv ? wv : w, 7, (const int64_t[]){1, o, c, 1, 1, kh, kw});
  tkc_tensor_free(wv);
  tkc_tensor_free(wl);
  tkc_tensor_free(wperm);
  t[6] = mul_sum(t[2], t[3], flat ? 1 : 3, flat ? (const int[]){3} : (const int[]){2, 5, 6}, tkc_least_upper_dtype(xn->dtype, wn->dtype));
  t[2] = t[3] = NULL; /* taken */
  if (wg) { /* the grid (N, O, OH, wg) less its garbage columns */
    t[4] = reshape_to(t[6], 4, (const int64_t[]){nb, o, oh, wg});
    t[7] = t[4] ? tkc_shrink(t[4], (const int64_t[]){0, nb, 0, o, 0, oh, 0, ow}) : NULL;
  } else
    t[7] = reshape_to(t[6], 4, out);
  if (t[7]) tkc_lazy_mark_composite(t[7]->node, TKC_COMP_CONV2D, 2, (tkc_lazy *const[]){x->node, w->node}, (const int64_t[]){stride, padding}, 2);
  t[8] = t[7] && bias ? reshape_to(bias, 4, (const int64_t[]){1, o, 1, 1}) : NULL;
  tkc_tensor *r = !bias ? t[7] : t[8] ? tkc_add(t[7], t[8]) : NULL;
  if (!bias) t[7] = NULL; /* returned */
  drop(t, 9);
  return r;
}
