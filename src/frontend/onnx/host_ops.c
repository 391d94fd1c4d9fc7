/* host_ops.c — ops whose indices come from the values (Unique, ReverseSequence) or from the shape
 * alone (AffineGrid): the index or coordinate arrays are computed on the host, the data moves on the
 * device (index_select, gather, matmul). */
#include <stdlib.h>
#include <string.h>
#include "ops_util.h"

/* Unique: the distinct values (or slices along axis), sorted or in first-seen order; outputs the
 * values, their first indices, every element's index among them, and their counts */
typedef struct unique_ctx {
  const double *v;
  int64_t slice; /* values per slice */
} unique_ctx;
static _Thread_local unique_ctx uc;

static int cmp_slices(int64_t a, int64_t b) {
  for (int64_t k = 0; k < uc.slice; k++) {
    double x = uc.v[a * uc.slice + k], y = uc.v[b * uc.slice + k];
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}
static int cmp_order(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  int c = cmp_slices(x, y);
  return c ? c : (x < y ? -1 : x > y);
}

tkc_status onnx_build_unique(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int nd = tkc_ndim(x), axis = -1;
  const Onnx__AttributeProto *aa = onnx_attr(n, "axis");
  if (aa && aa->has_i) {
    if ((axis = onnx_axis(aa->i, nd)) < 0) return onnx_node_err(n, TKC_EINVAL, "axis out of range");
  }
  int64_t cnt;
  double *vals = onnx_doubles(n, 0, &cnt);
  if (!vals) return tkc_last_status();
  /* as (count, slice) rows: the axis moved first */
  int64_t rows = axis < 0 ? cnt : tkc_dim(x, axis), slice = rows ? cnt / (rows ? rows : 1) : 0;
  double *v = vals;
  if (axis > 0) {
    v = malloc(sizeof(double) * (size_t)(cnt ? cnt : 1));
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; d++) outer *= tkc_dim(x, d);
    for (int d = axis + 1; d < nd; d++) inner *= tkc_dim(x, d);
    for (int64_t o = 0; v && o < outer; o++)
      for (int64_t r = 0; r < rows; r++)
        for (int64_t i = 0; i < inner; i++) v[r * slice + o * inner + i] = vals[(o * rows + r) * inner + i];
  }
  int64_t *order = malloc(sizeof(int64_t) * (size_t)(rows ? rows : 1)), *first = malloc(sizeof(int64_t) * (size_t)(rows ? rows : 1));
  int64_t *inverse = malloc(sizeof(int64_t) * (size_t)(rows ? rows : 1)), *counts = malloc(sizeof(int64_t) * (size_t)(rows ? rows : 1));
  if (!v || !order || !first || !inverse || !counts) {
    if (v != vals) free(v);
    free(vals), free(order), free(first), free(inverse), free(counts);
    return onnx_node_err(n, TKC_ENOMEM, "out of memory");
  }
  uc.v = v, uc.slice = slice;
  for (int64_t r = 0; r < rows; r++) order[r] = r;
  qsort(order, (size_t)rows, sizeof *order, cmp_order); /* equal slices: the first index first */
  int64_t nu = 0;
  for (int64_t i = 0; i < rows; i++) {
    if (i == 0 || cmp_slices(order[i], order[i - 1])) first[nu] = order[i], counts[nu++] = 0;
    inverse[order[i]] = nu - 1, counts[nu - 1]++;
  }
  if (!onnx_attr_int(n, "sorted", 1)) { /* first-seen order: renumber the unique values by their first index */
    int64_t *perm = malloc(sizeof(int64_t) * (size_t)(nu ? nu : 1)), *rank = malloc(sizeof(int64_t) * (size_t)(nu ? nu : 1));
    int64_t *f2 = malloc(sizeof(int64_t) * (size_t)(nu ? nu : 1)), *c2 = malloc(sizeof(int64_t) * (size_t)(nu ? nu : 1));
    if (perm && rank && f2 && c2) {
      for (int64_t u = 0; u < nu; u++) perm[u] = u;
      for (int64_t a = 1; a < nu; a++) /* insertion sort by first index: nu is small */
        for (int64_t b = a; b > 0 && first[perm[b - 1]] > first[perm[b]]; b--) {
          int64_t t = perm[b];
          perm[b] = perm[b - 1], perm[b - 1] = t;
        }
      for (int64_t u = 0; u < nu; u++) rank[perm[u]] = u, f2[u] = first[perm[u]], c2[u] = counts[perm[u]];
      for (int64_t r = 0; r < rows; r++) inverse[r] = rank[inverse[r]];
      memcpy(first, f2, sizeof(int64_t) * (size_t)nu), memcpy(counts, c2, sizeof(int64_t) * (size_t)nu);
    }
    free(perm), free(rank), free(f2), free(c2);
  }
  if (v != vals) free(v);
  free(vals), free(order);
  tkc_ctx *c = n->m->ctx;
  tkc_tensor *fi = tkc_tensor_new(c, TKC_INT64, 1, &nu, first);
  tkc_tensor *y = axis < 0 ? tkc_index_select(tkc_reshape(x, 1, &cnt), 0, fi) : tkc_index_select(x, axis, fi);
  s = onnx_set(n, 0, y);
  if (!s && n->nout > 1 && *n->proto->output[1]) s = onnx_set(n, 1, fi);
  if (!s && n->nout > 2 && *n->proto->output[2]) s = onnx_set(n, 2, tkc_tensor_new(c, TKC_INT64, 1, &rows, inverse));
  if (!s && n->nout > 3 && *n->proto->output[3]) s = onnx_set(n, 3, tkc_tensor_new(c, TKC_INT64, 1, &nu, counts));
  free(first), free(inverse), free(counts);
  return s;
}

/* ReverseSequence: along time_axis, the first sequence_lens[b] steps of each batch b reversed */
tkc_status onnx_build_reverse_sequence(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int nd = tkc_ndim(x);
  int ta = onnx_axis(onnx_attr_int(n, "time_axis", 0), nd), ba = onnx_axis(onnx_attr_int(n, "batch_axis", 1), nd);
  if (nd < 2 || ta < 0 || ba < 0 || ta == ba) return onnx_node_err(n, TKC_EINVAL, "time_axis and batch_axis");
  int64_t cnt;
  const int64_t *lens = onnx_ints(n, 1, &cnt);
  if (!lens) return tkc_last_status();
  int64_t T = tkc_dim(x, ta), B = tkc_dim(x, ba);
  if (cnt != B) return onnx_node_err(n, TKC_EINVAL, "%lld sequence lengths for a batch of %lld", (long long)cnt, (long long)B);
  int64_t tb = T * B;
  int64_t *idx = malloc(sizeof(int64_t) * (size_t)(tb > 0 ? tb : 1));
  if (!idx) return onnx_node_err(n, TKC_ENOMEM, "out of memory");
  for (int64_t t = 0; t < T; t++)
    for (int64_t b = 0; b < B; b++) {
      int64_t len = lens[b] < 0 ? 0 : lens[b] > T ? T : lens[b];
      idx[ta < ba ? t * B + b : b * T + t] = t < len ? len - 1 - t : t;
    }
  int64_t ish[ONNX_MAX_DIMS], full[ONNX_MAX_DIMS], two[2] = {ta < ba ? T : B, ta < ba ? B : T};
  for (int d = 0; d < nd; d++) ish[d] = d == ta ? T : d == ba ? B : 1, full[d] = tkc_dim(x, d);
  tkc_tensor *it = tkc_reshape(tkc_tensor_new(n->m->ctx, TKC_INT64, 2, two, idx), nd, ish);
  free(idx);
  return onnx_set(n, 0, tkc_gather(x, ta, tkc_expand(it, nd, full)));
}

/* AffineGrid: the sampling grid theta @ (x, y[, z], 1) over the normalized output coordinates */
tkc_status onnx_build_affine_grid(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *theta = onnx_in(n, 0);
  int64_t cnt;
  const int64_t *size = onnx_ints(n, 1, &cnt);
  if (!size) return tkc_last_status();
  if (cnt != 4 && cnt != 5) return onnx_node_err(n, TKC_EINVAL, "size of %lld entries", (long long)cnt);
  int sp = (int)cnt - 2, ac = (int)onnx_attr_int(n, "align_corners", 0);
  int64_t N = size[0], dims[3], total = 1;
  for (int i = 0; i < sp; i++) {
    dims[i] = size[2 + i];
    if (dims[i] < 1 || dims[i] > 4096) return onnx_node_err(n, TKC_EINVAL, "size");
    total *= dims[i];
  }
  if (total > (1 << 22)) return onnx_node_err(n, TKC_EUNSUPPORTED, "a grid of %lld points", (long long)total);
  double *base = malloc(sizeof(double) * (size_t)(total * (sp + 1)));
  if (!base) return onnx_node_err(n, TKC_ENOMEM, "out of memory");
  for (int64_t p = 0; p < total; p++) {
    int64_t r = p;
    double coord[3];
    for (int i = sp - 1; i >= 0; i--) { /* row-major over (D,) H, W: the last is x */
      int64_t k = r % dims[i], L = dims[i];
      r /= dims[i];
      coord[i] = L == 1 ? 0 : ac ? -1 + 2.0 * (double)k / (double)(L - 1) : (2.0 * (double)k + 1) / (double)L - 1;
    }
    for (int i = 0; i < sp; i++) base[p * (sp + 1) + i] = coord[sp - 1 - i]; /* (x, y[, z]) */
    base[p * (sp + 1) + sp] = 1;
  }
  int64_t bs[2] = {total, sp + 1};
  tkc_tensor *bt = tkc_cast(tkc_tensor_new(n->m->ctx, TKC_FLOAT64, 2, bs, base), tkc_dtype_of(theta));
  free(base);
  tkc_tensor *g = tkc_matmul(bt, tkc_transpose(theta, 1, 2)); /* (N, total, sp) */
  int64_t out[5] = {N};
  for (int i = 0; i < sp; i++) out[1 + i] = dims[i];
  out[1 + sp] = sp;
  return onnx_set(n, 0, tkc_reshape(g, sp + 2, out));
}
