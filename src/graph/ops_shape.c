/* Shape ops, indexing and sorting (tkc/ops_shape.h), built from the tensor API as tinygrad builds them:
 * cat pads each input to the full size and selects it by a padded mask; the index ops compare the
 * index with an arange and select (where + sum); argmax is max, then the first index equal to it; sort
 * ranks every element by counting the elements before it, then selects by rank. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "graph/tensor_internal.h"

#define LIMIT INT32_MAX /* element counts (of results and of the pairwise work) stay below 2^31 */
#define CAT_GROUP 16    /* inputs joined per kernel (a kernel reads at most 32 buffers) */

/* ---------------------------------------------------------------- helpers */

/* The temporaries of one op, freed together at its end (NULLs are fine). */
/* the temporaries of a composite (graph/temps.c): P records one, pool_free frees them all */
typedef tkc_temps pool;
static tkc_tensor *P(pool *p, tkc_tensor *t) { return tkc_temp(p, t); }
static void pool_free(pool *p) { tkc_temps_done(p, NULL); }

/* axis in [-n, n) -> [0, n); -1 with TKC_EINVAL when out of range */
static int norm_axis(int axis, int n, const char *what) {
  int ax = axis < 0 ? axis + n : axis;
  if (ax < 0 || ax >= n) {
    tkc_err(TKC_EINVAL, "%s: axis %d out of range for %d dims", what, axis, n);
    return -1;
  }
  return ax;
}

/* the product of dims (and extra), or -1 with TKC_ESHAPE when it exceeds LIMIT */
static int64_t checked_numel(int ndim, const int64_t *shape, int64_t extra, const char *what) {
  int64_t n = extra;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] && n > LIMIT / shape[i]) n = LIMIT + (int64_t)1;
    else n *= shape[i];
  }
  if (n > LIMIT) {
    tkc_err(TKC_ESHAPE, "%s: more than 2^31 - 1 elements (of the result or of the work it needs)", what);
    return -1;
  }
  return n;
}

static const tkc_lazy *node(const tkc_tensor *t) { return t->node; }

/* the same shape with dim d set to v (or inserted / removed) */
static void shape_of(const tkc_tensor *t, int64_t *s) { memcpy(s, node(t)->shape, sizeof(int64_t) * (size_t)node(t)->ndim); }
static void insert_dim(int64_t *s, int n, int at, int64_t v) {
  memmove(s + at + 1, s + at, sizeof(int64_t) * (size_t)(n - at));
  s[at] = v;
}
static void remove_dim(int64_t *s, int n, int at) { memmove(s + at, s + at + 1, sizeof(int64_t) * (size_t)(n - at - 1)); }

static tkc_tensor *reshape_v(tkc_tensor *t, int n, const int64_t *s) { return t ? tkc_reshape(t, n, s) : NULL; }

/* arange(d) of dt reshaped to n dims: d at position at, 1 elsewhere */
static tkc_tensor *arange_at(pool *p, tkc_ctx *ctx, tkc_dtype dt, int64_t d, int n, int at) {
  int64_t s[TKC_MAX_DIMS];
  for (int i = 0; i < n; i++) s[i] = i == at ? d : 1;
  return P(p, reshape_v(P(p, tkc_arange(ctx, dt, 0, (double)d, 1)), n, s));
}

static tkc_tensor *zero_of(pool *p, tkc_ctx *ctx, tkc_dtype dt) { return P(p, tkc_scalar(ctx, dt, 0)); }

/* the bits of a float dtype as an int of its size (bitcast: a select-sum then moves them exactly) */
static tkc_dtype bits_dtype(tkc_dtype dt) {
  switch (dt) {
  case TKC_FLOAT8_E4M3FN: case TKC_FLOAT8_E5M2: return TKC_INT8;
  case TKC_FLOAT16: case TKC_BFLOAT16: return TKC_INT16;
  case TKC_FLOAT32: return TKC_INT32;
  case TKC_FLOAT64: return TKC_INT64;
  default: return dt;
  }
}

/* sum over axis of where(mask, x, 0) where mask selects at most one x per output: that x exactly, in
 * x's dtype (floats travel as their bits, so NaN payloads and -0.0 survive) */
static tkc_tensor *select_sum(pool *p, tkc_tensor *mask, tkc_tensor *x, int axis, int keepdim) {
  if (!mask || !x) return NULL;
  tkc_dtype dt = node(x)->dtype, bits = bits_dtype(dt);
  /* selected as bits (exact for -0.0 and NaN payloads), but as values where a gradient must pass */
  if (node(x)->needs_grad || node(x)->requires_grad) bits = dt;
  tkc_tensor *xb = bits != dt ? P(p, tkc_bitcast(x, bits)) : x;
  tkc_tensor *w = P(p, tkc_where(mask, xb, zero_of(p, x->ctx, bits)));
  tkc_tensor *s = P(p, tkc_sum_unsplit(w, axis, keepdim));
  if (bits == dt) return P(p, tkc_cast(s, dt)); /* bool: != 0; ints: their own width */
  return P(p, tkc_bitcast(P(p, tkc_cast(s, bits)), dt));
}

/* ---------------------------------------------------------------- index tensors */

/* the dtype an index of dt is compared in (an arange of it holds any dim) */
static tkc_dtype index_work_dtype(tkc_dtype dt) {
  switch (dt) {
  case TKC_INT64: return TKC_INT64;
  case TKC_UINT32: return TKC_UINT32;
  case TKC_UINT64: return TKC_UINT64;
  default: return TKC_INT32;
  }
}

/* whether t is realized data (a buffer, or views of one): its values can be read on the host */
static int is_realized(const tkc_tensor *t) {
  const tkc_lazy *n = node(t);
  while (n->kind == TKC_LZ_MOVE && n->nsrc == 1) n = n->src[0];
  return n->kind == TKC_LZ_BUFFER;
}

/* reads a realized index tensor and checks every value is in [-d, d) */
static tkc_status check_index_values(tkc_tensor *index, int64_t d, const char *what) {
  tkc_dtype dt = node(index)->dtype;
  int64_t n = tkc_numel(index);
  size_t isz = tkc_dtype_size(dt);
  if (n == 0) return TKC_OK;
  unsigned char *buf = tkc_malloc((size_t)n * isz);
  if (!buf) return tkc_err(TKC_ENOMEM, "%s: out of memory reading the index", what);
  tkc_status st = tkc_copy_out(index, buf, (size_t)n * isz);
  for (int64_t k = 0; k < n && !st; k++) {
    int64_t v = 0;
    uint64_t u = 0;
    int is_u = tkc_dtype_is_unsigned(dt);
    switch (isz) {
    case 1: if (is_u) u = buf[k]; else v = (int8_t)buf[k]; break;
    case 2: { uint16_t x; memcpy(&x, buf + k * 2, 2); if (is_u) u = x; else v = (int16_t)x; } break;
    case 4: { uint32_t x; memcpy(&x, buf + k * 4, 4); if (is_u) u = x; else v = (int32_t)x; } break;
    default: { uint64_t x; memcpy(&x, buf + k * 8, 8); if (is_u) u = x; else v = (int64_t)x; } break;
    }
    if (is_u ? u >= (uint64_t)d : (v < -d || v >= d)) {
      if (is_u) st = tkc_err(TKC_EINVAL, "%s: index %llu (element %lld) is out of range for a dim of %lld", what, (unsigned long long)u, (long long)k, (long long)d);
      else st = tkc_err(TKC_EINVAL, "%s: index %lld (element %lld) is out of range for a dim of %lld", what, (long long)v, (long long)k, (long long)d);
    }
  }
  tkc_free(buf);
  return st;
}

/* index checked (dtype; values when realized), in its work dtype, negatives counted from the end of d */
static tkc_tensor *prep_index(pool *p, tkc_tensor *index, int64_t d, const char *what) {
  tkc_dtype dt = node(index)->dtype;
  if (!tkc_dtype_is_int(dt)) return tkc_err_null(TKC_EDTYPE, "%s: the index must be an integer tensor, not %s", what, tkc_dtype_name(dt));
  if (is_realized(index) && check_index_values(index, d, what)) return NULL;
  tkc_dtype w = index_work_dtype(dt);
  tkc_tensor *i = w == dt ? index : P(p, tkc_cast(index, w));
  if (tkc_dtype_is_unsigned(w)) return i;
  tkc_tensor *neg = P(p, tkc_lt(i, zero_of(p, index->ctx, w)));
  return P(p, tkc_where(neg, P(p, tkc_add(i, P(p, tkc_scalar(index->ctx, w, (double)d)))), i));
}

static int same_ctx(const tkc_tensor *a, const tkc_tensor *b) {
  if (a->ctx == b->ctx) return 1;
  tkc_err(TKC_EINVAL, "tensors of different ctxs");
  return 0;
}

/* ---------------------------------------------------------------- cat / stack / split */

static tkc_tensor *cat_group(int n, tkc_tensor *const *ts, int ax, int64_t total) {
  pool p = {.n = 0};
  tkc_tensor *acc = NULL;
  int nd = node(ts[0])->ndim;
  int64_t off = 0, pads[2 * TKC_MAX_DIMS] = {0};
  for (int i = 0; i < n; i++) {
    int64_t sz = node(ts[i])->shape[ax];
    pads[2 * ax] = off;
    pads[2 * ax + 1] = total - off - sz;
    off += sz;
    if (sz == 0 && (acc || i + 1 < n)) continue; /* nothing of it shows */
    tkc_tensor *x = P(&p, tkc_pad(ts[i], pads, 0));
    if (!acc) {
      acc = x;
      continue;
    }
    int64_t s[TKC_MAX_DIMS];
    shape_of(ts[i], s);
    tkc_tensor *inside = P(&p, tkc_pad(P(&p, tkc_full(ts[i]->ctx, TKC_BOOL, nd, s, 1)), pads, 0));
    acc = P(&p, tkc_where(inside, x, acc));
  }
  tkc_tensor *r = acc ? tkc_reshape(acc, nd, node(acc)->shape) : NULL; /* a handle of its own */
  pool_free(&p);
  return r;
}

tkc_tensor *tkc_cat(int n, tkc_tensor *const *ts, int axis) {
  if (n < 1 || !ts) return tkc_err_null(TKC_EINVAL, "cat: needs n >= 1 tensors (n = %d%s)", n, ts ? "" : ", NULL array");
  for (int i = 0; i < n; i++)
    if (tkc_check(ts[i])) return NULL;
  const tkc_lazy *a = node(ts[0]);
  if (a->ndim == 0) return tkc_err_null(TKC_ESHAPE, "cat: 0-d tensors cannot be joined (use tkc_stack)");
  int ax = norm_axis(axis, a->ndim, "cat");
  if (ax < 0) return NULL;
  int64_t total = 0;
  for (int i = 0; i < n; i++) {
    const tkc_lazy *b = node(ts[i]);
    if (!same_ctx(ts[0], ts[i])) return NULL;
    if (b->dtype != a->dtype) return tkc_err_null(TKC_EDTYPE, "cat: tensor %d is %s, tensor 0 is %s", i, tkc_dtype_name(b->dtype), tkc_dtype_name(a->dtype));
    if (b->ndim != a->ndim) return tkc_err_null(TKC_ESHAPE, "cat: tensor %d has %d dims, tensor 0 has %d", i, b->ndim, a->ndim);
    for (int d = 0; d < a->ndim; d++)
      if (d != ax && b->shape[d] != a->shape[d])
        return tkc_err_null(TKC_ESHAPE, "cat: tensor %d has %lld on axis %d, tensor 0 has %lld", i, (long long)b->shape[d], d, (long long)a->shape[d]);
    if (tkc_dim_add(a->ctx, total, b->shape[ax], 1, &total, "cat")) return NULL; /* a variable axis may be joined with fixed ones */
    if (total > LIMIT) return tkc_err_null(TKC_ESHAPE, "cat: the joined axis exceeds 2^31 - 1");
  }
  int64_t s[TKC_MAX_DIMS], max[TKC_MAX_DIMS];
  shape_of(ts[0], s);
  s[ax] = total;
  tkc_shape_max(a->ctx, a->ndim, s, max);
  if (checked_numel(a->ndim, max, 1, "cat") < 0) return NULL;
  if (n <= CAT_GROUP) return cat_group(n, ts, ax, total);
  /* groups of CAT_GROUP, each a kernel of its own, then joined */
  int ng = (n + CAT_GROUP - 1) / CAT_GROUP;
  tkc_tensor **parts = tkc_calloc((size_t)ng, sizeof *parts);
  if (!parts) return tkc_err_null(TKC_ENOMEM, "cat: out of memory");
  int ok = 1;
  for (int g = 0; g < ng && ok; g++) {
    int k = n - g * CAT_GROUP < CAT_GROUP ? n - g * CAT_GROUP : CAT_GROUP;
    tkc_tensor *c = tkc_cat(k, ts + g * CAT_GROUP, ax);
    parts[g] = c ? tkc_contiguous(c) : NULL;
    tkc_tensor_free(c);
    ok = parts[g] != NULL;
  }
  tkc_tensor *r = ok ? tkc_cat(ng, parts, ax) : NULL;
  for (int g = 0; g < ng; g++) tkc_tensor_free(parts[g]);
  tkc_free(parts);
  return r;
}

tkc_tensor *tkc_stack(int n, tkc_tensor *const *ts, int axis) {
  if (n < 1 || !ts) return tkc_err_null(TKC_EINVAL, "stack: needs n >= 1 tensors (n = %d%s)", n, ts ? "" : ", NULL array");
  for (int i = 0; i < n; i++)
    if (tkc_check(ts[i])) return NULL;
  const tkc_lazy *a = node(ts[0]);
  for (int i = 1; i < n; i++) {
    const tkc_lazy *b = node(ts[i]);
    int same = b->ndim == a->ndim;
    for (int d = 0; same && d < a->ndim; d++) same = b->shape[d] == a->shape[d];
    if (!same) return tkc_err_null(TKC_ESHAPE, "stack: tensor %d's shape differs from tensor 0's", i);
  }
  if (norm_axis(axis, a->ndim + 1, "stack") < 0) return NULL;
  tkc_tensor **u = tkc_calloc((size_t)n, sizeof *u);
  if (!u) return tkc_err_null(TKC_ENOMEM, "stack: out of memory");
  int ok = 1;
  for (int i = 0; i < n && ok; i++) ok = (u[i] = tkc_unsqueeze(ts[i], axis)) != NULL;
  tkc_tensor *r = ok ? tkc_cat(n, u, axis) : NULL;
  for (int i = 0; i < n; i++) tkc_tensor_free(u[i]);
  tkc_free(u);
  return r;
}

/* out[i] = a[.., offset_i : offset_i + sizes[i], ..] along ax (sizes already checked) */
static tkc_status cut(tkc_tensor *a, int ax, int n, const int64_t *sizes, int64_t step, tkc_tensor **out) {
  int nd = node(a)->ndim;
  int64_t ranges[2 * TKC_MAX_DIMS], off = 0;
  for (int d = 0; d < nd; d++) ranges[2 * d] = 0, ranges[2 * d + 1] = node(a)->shape[d];
  for (int i = 0; i < n; i++) {
    int64_t sz = sizes ? sizes[i] : (node(a)->shape[ax] - off < step ? node(a)->shape[ax] - off : step);
    ranges[2 * ax] = off;
    ranges[2 * ax + 1] = off + sz;
    off += sz;
    if (!(out[i] = tkc_shrink(a, ranges))) {
      for (int j = 0; j < i; j++) tkc_tensor_free(out[j]), out[j] = NULL;
      return tkc_last_status();
    }
  }
  return TKC_OK;
}

tkc_status tkc_split(tkc_tensor *a, int axis, int n, const int64_t *sizes, tkc_tensor **out) {
  if (out && n > 0) memset(out, 0, sizeof *out * (size_t)n);
  if (tkc_check(a)) return tkc_last_status();
  if (n < 1 || !sizes || !out) return tkc_err(TKC_EINVAL, "split: needs n >= 1 sizes and an out array (n = %d)", n);
  int ax = norm_axis(axis, node(a)->ndim, "split");
  if (ax < 0) return TKC_EINVAL;
  int64_t sum = 0, d = node(a)->shape[ax];
  for (int i = 0; i < n; i++) {
    if (sizes[i] < 0 || sizes[i] > d - sum)
      return tkc_err(TKC_EINVAL, "split: sizes[%d] = %lld: the sizes must be >= 0 and sum to the dim %lld", i, (long long)sizes[i], (long long)d);
    sum += sizes[i];
  }
  if (sum != d) return tkc_err(TKC_EINVAL, "split: the sizes sum to %lld, the dim is %lld", (long long)sum, (long long)d);
  return cut(a, ax, n, sizes, 0, out);
}

int tkc_chunk(tkc_tensor *a, int axis, int chunks, tkc_tensor **out) {
  if (tkc_check(a)) return -1;
  if (chunks < 1 || !out) return tkc_err(TKC_EINVAL, "chunk: needs chunks >= 1 (%d) and an out array", chunks), -1;
  int ax = norm_axis(axis, node(a)->ndim, "chunk");
  if (ax < 0) return -1;
  int64_t d = node(a)->shape[ax], step = (d + chunks - 1) / chunks;
  int n = d ? (int)((d + step - 1) / step) : chunks; /* a dim of 0: chunks empty pieces (tinygrad) */
  memset(out, 0, sizeof *out * (size_t)chunks);
  return cut(a, ax, n, NULL, step, out) ? -1 : n;
}

/* ---------------------------------------------------------------- squeeze / unsqueeze / flatten / repeat */

tkc_tensor *tkc_squeeze(tkc_tensor *a, int naxes, const int *axes) {
  if (tkc_check(a)) return NULL;
  const tkc_lazy *x = node(a);
  if (naxes < 0 || (naxes > 0 && !axes)) return tkc_err_null(TKC_EINVAL, "squeeze: bad axes list");
  int drop[TKC_MAX_DIMS] = {0};
  for (int i = 0; i < naxes; i++) {
    int ax = norm_axis(axes[i], x->ndim, "squeeze");
    if (ax < 0) return NULL;
    if (drop[ax]) return tkc_err_null(TKC_EINVAL, "squeeze: axis %d given twice", axes[i]);
    if (x->shape[ax] != 1) return tkc_err_null(TKC_ESHAPE, "squeeze: axis %d has size %lld, not 1", axes[i], (long long)x->shape[ax]);
    drop[ax] = 1;
  }
  int64_t s[TKC_MAX_DIMS];
  int n = 0;
  for (int d = 0; d < x->ndim; d++)
    if (!(naxes ? drop[d] : x->shape[d] == 1)) s[n++] = x->shape[d];
  return tkc_reshape(a, n, s);
}

tkc_tensor *tkc_unsqueeze(tkc_tensor *a, int axis) {
  if (tkc_check(a)) return NULL;
  int n = node(a)->ndim, ax = norm_axis(axis, n + 1, "unsqueeze");
  if (ax < 0) return NULL;
  if (n + 1 > TKC_MAX_DIMS) return tkc_err_null(TKC_ESHAPE, "unsqueeze: tensors have at most %d dims", TKC_MAX_DIMS);
  int64_t s[TKC_MAX_DIMS];
  shape_of(a, s);
  insert_dim(s, n, ax, 1);
  return tkc_reshape(a, n + 1, s);
}

tkc_tensor *tkc_flatten(tkc_tensor *a, int start, int end) {
  if (tkc_check(a)) return NULL;
  const tkc_lazy *x = node(a);
  int n = x->ndim ? x->ndim : 1; /* a 0-d tensor flattens as a (1) */
  int s0 = norm_axis(start, n, "flatten"), e0 = s0 < 0 ? -1 : norm_axis(end, n, "flatten");
  if (s0 < 0 || e0 < 0) return NULL;
  if (s0 > e0) return tkc_err_null(TKC_EINVAL, "flatten: start axis %d comes after end axis %d", start, end);
  int64_t s[TKC_MAX_DIMS], m = 1;
  int k = 0;
  for (int d = 0; d < s0; d++) s[k++] = x->shape[d];
  for (int d = s0; d <= e0 && x->ndim; d++) m *= x->shape[d];
  s[k++] = m;
  for (int d = e0 + 1; d < x->ndim; d++) s[k++] = x->shape[d];
  return tkc_reshape(a, k, s);
}

tkc_tensor *tkc_repeat(tkc_tensor *a, int n, const int64_t *repeats) {
  if (tkc_check(a)) return NULL;
  if (n < 0 || (n > 0 && !repeats)) return tkc_err_null(TKC_EINVAL, "repeat: bad repeats list");
  int nd = node(a)->ndim, m = n > nd ? n : nd;
  if (m > TKC_MAX_DIMS) return tkc_err_null(TKC_ESHAPE, "repeat: more than %d dims", TKC_MAX_DIMS);
  int64_t s[TKC_MAX_DIMS], r[TKC_MAX_DIMS], out[TKC_MAX_DIMS];
  for (int d = 0; d < m; d++) {
    int ia = d - (m - nd), ir = d - (m - n);
    s[d] = ia >= 0 ? node(a)->shape[ia] : 1;
    r[d] = ir >= 0 ? repeats[ir] : 1;
    if (r[d] < 0) return tkc_err_null(TKC_EINVAL, "repeat: repeats[%d] = %lld is negative", ir, (long long)r[d]);
    out[d] = 0;
  }
  for (int d = 0; d < m; d++) {
    if (s[d] && r[d] > LIMIT / s[d]) return tkc_err_null(TKC_ESHAPE, "repeat: axis %d would exceed 2^31 - 1", d);
    out[d] = s[d] * r[d];
  }
  if (checked_numel(m, out, 1, "repeat") < 0) return NULL;
  /* per axis: (.., s, ..) -> (.., 1, s, ..) -> expand (.., r, s, ..) -> (.., r*s, ..); a size-1
   * axis just expands */
  pool p = {.n = 0};
  tkc_tensor *x = P(&p, tkc_reshape(a, m, s));
  for (int d = 0; d < m && x; d++) {
    if (r[d] == 1) continue;
    int64_t cur[TKC_MAX_DIMS + 1];
    shape_of(x, cur);
    if (cur[d] == 1) {
      cur[d] = r[d];
      x = P(&p, tkc_expand(x, m, cur));
      continue;
    }
    if (m + 1 > TKC_MAX_DIMS) {
      pool_free(&p);
      return tkc_err_null(TKC_ESHAPE, "repeat: tiling a %d-dim tensor needs a spare dim (at most %d dims)", m, TKC_MAX_DIMS - 1);
    }
    insert_dim(cur, m, d, 1);
    tkc_tensor *u = P(&p, tkc_reshape(x, m + 1, cur));
    cur[d] = r[d];
    tkc_tensor *e = P(&p, u ? tkc_expand(u, m + 1, cur) : NULL);
    cur[d + 1] *= r[d];
    remove_dim(cur, m + 1, d);
    x = P(&p, reshape_v(e, m, cur));
  }
  tkc_tensor *res = x ? tkc_reshape(x, m, out) : NULL;
  pool_free(&p);
  return res;
}

/* ---------------------------------------------------------------- tril / triu */

static tkc_tensor *triangle(tkc_tensor *a, int64_t k, int lower) {
  if (tkc_check(a)) return NULL;
  const tkc_lazy *x = node(a);
  if (x->ndim < 2) return tkc_err_null(TKC_ESHAPE, "%s: needs at least 2 dims, got %d", lower ? "tril" : "triu", x->ndim);
  int64_t rows = x->shape[x->ndim - 2], cols = x->shape[x->ndim - 1];
  /* k beyond the matrix changes nothing further: clamp so it fits an int32 */
  int64_t kk = k < -rows - 1 ? -rows - 1 : k > cols + 1 ? cols + 1 : k;
  pool p = {.n = 0};
  tkc_tensor *i = arange_at(&p, a->ctx, TKC_INT32, rows, 2, 0), *j = arange_at(&p, a->ctx, TKC_INT32, cols, 2, 1);
  tkc_tensor *ik = P(&p, tkc_add(i, P(&p, tkc_scalar(a->ctx, TKC_INT32, (double)kk))));
  tkc_tensor *keep = P(&p, lower ? tkc_le(j, ik) : tkc_ge(j, ik));
  tkc_tensor *r = tkc_where(keep, a, zero_of(&p, a->ctx, x->dtype));
  pool_free(&p);
  return r;
}

tkc_tensor *tkc_tril(tkc_tensor *a, int64_t k) { return triangle(a, k, 1); }
tkc_tensor *tkc_triu(tkc_tensor *a, int64_t k) { return triangle(a, k, 0); }

/* ---------------------------------------------------------------- item */

tkc_status tkc_item_bytes(tkc_tensor *t, void *dst, size_t nbytes) {
  if (tkc_check(t)) return tkc_last_status();
  int64_t n = tkc_numel(t);
  if (n != 1) return tkc_err(TKC_ESHAPE, "item: the tensor has %lld elements, not 1", (long long)n);
  size_t isz = tkc_dtype_size(node(t)->dtype);
  if (!dst || nbytes != isz) return tkc_err(TKC_EINVAL, "item: needs a destination of %zu bytes (%s), got %zu%s", isz, tkc_dtype_name(node(t)->dtype), nbytes, dst ? "" : " (NULL)");
  return tkc_copy_out(t, dst, nbytes);
}

tkc_status tkc_item(tkc_tensor *t, double *out) {
  if (tkc_check(t)) return tkc_last_status();
  if (!out) return tkc_err(TKC_EINVAL, "item: NULL out");
  tkc_dtype dt = node(t)->dtype;
  unsigned char b[8] = {0};
  tkc_status st = tkc_item_bytes(t, b, tkc_dtype_size(dt));
  if (st) return st;
  tkc_value v = {0};
  uint16_t h;
  uint32_t w;
  float f;
  switch (dt) {
  case TKC_BOOL: v.i = b[0] != 0; break;
  case TKC_INT8: v.i = (int8_t)b[0]; break;
  case TKC_UINT8: v.u = b[0]; break;
  case TKC_INT16: memcpy(&h, b, 2); v.i = (int16_t)h; break;
  case TKC_UINT16: memcpy(&h, b, 2); v.u = h; break;
  case TKC_INT32: memcpy(&w, b, 4); v.i = (int32_t)w; break;
  case TKC_UINT32: memcpy(&w, b, 4); v.u = w; break;
  case TKC_INT64: memcpy(&v.i, b, 8); break;
  case TKC_UINT64: memcpy(&v.u, b, 8); break;
  case TKC_FLOAT16: memcpy(&h, b, 2); v.f = tkc_f16_to_f32(h); break;
  case TKC_BFLOAT16: memcpy(&h, b, 2); v.f = tkc_bf16_to_f32(h); break;
  case TKC_FLOAT8_E4M3FN: case TKC_FLOAT8_E5M2: v.f = tkc_fp8_to_float(b[0], dt); break;
  case TKC_FLOAT32: memcpy(&f, b, 4); v.f = f; break;
  default: memcpy(&v.f, b, 8); break;
  }
  *out = tkc_dtype_is_float(dt) ? v.f : tkc_value_cast(v, dt, TKC_FLOAT64).f;
  return TKC_OK;
}

/* ---------------------------------------------------------------- gather / index_select */

tkc_tensor *tkc_gather(tkc_tensor *a, int axis, tkc_tensor *index) {
  if (tkc_check(a) || tkc_check(index) || !same_ctx(a, index)) return NULL;
  const tkc_lazy *x = node(a), *ix = node(index);
  if (x->ndim == 0) { /* 0-d: as (1) */
    if (ix->ndim != 0) return tkc_err_null(TKC_ESHAPE, "gather: a 0-d tensor needs a 0-d index");
    if (norm_axis(axis, 1, "gather") < 0) return NULL;
    pool p = {.n = 0};
    tkc_tensor *r = P(&p, tkc_gather(P(&p, tkc_reshape(a, 1, (const int64_t[]){1})), 0, P(&p, tkc_reshape(index, 1, (const int64_t[]){1}))));
    tkc_tensor *res = r ? tkc_reshape(r, 0, NULL) : NULL;
    pool_free(&p);
    return res;
  }
  int n = x->ndim, ax = norm_axis(axis, n, "gather");
  if (ax < 0) return NULL;
  if (ix->ndim != n) return tkc_err_null(TKC_ESHAPE, "gather: the index has %d dims, the tensor %d", ix->ndim, n);
  if (n + 1 > TKC_MAX_DIMS) return tkc_err_null(TKC_ESHAPE, "gather: needs a spare dim (at most %d dims)", TKC_MAX_DIMS - 1);
  int64_t d = x->shape[ax], ranges[2 * TKC_MAX_DIMS], is[TKC_MAX_DIMS], xr[TKC_MAX_DIMS];
  for (int k = 0; k < n; k++) {
    if (k != ax && ix->shape[k] > x->shape[k])
      return tkc_err_null(TKC_ESHAPE, "gather: index dim %d is %lld, larger than the tensor's %lld", k, (long long)ix->shape[k], (long long)x->shape[k]);
    ranges[2 * k] = 0;
    ranges[2 * k + 1] = k == ax ? d : ix->shape[k];
    is[k] = ix->shape[k];
    xr[k] = ranges[2 * k + 1];
  }
  if (checked_numel(n, is, 1, "gather") < 0 || checked_numel(1, &d, 1, "gather") < 0) return NULL; /* apart: as index_select */
  pool p = {.n = 0};
  tkc_tensor *idx = prep_index(&p, index, d, "gather");
  /* x: the index's corner of a with the axis moved last (..., 1, ..., D); idx: (..I.., 1) */
  is[n] = xr[n] = 1;
  tkc_tensor *xv = idx ? P(&p, tkc_shrink(a, ranges)) : NULL;
  tkc_tensor *x2 = P(&p, tkc_transpose(P(&p, reshape_v(xv, n + 1, xr)), ax, n));
  tkc_tensor *mask = P(&p, tkc_eq(P(&p, reshape_v(idx, n + 1, is)), arange_at(&p, a->ctx, index_work_dtype(ix->dtype), d, n + 1, n)));
  tkc_tensor *r = select_sum(&p, mask, x2, n, 0);
  tkc_tensor *res = r ? tkc_reshape(r, n, ix->shape) : NULL;
  pool_free(&p);
  return res;
}

tkc_tensor *tkc_index_select(tkc_tensor *a, int axis, tkc_tensor *index) {
  if (tkc_check(a) || tkc_check(index) || !same_ctx(a, index)) return NULL;
  const tkc_lazy *x = node(a), *ix = node(index);
  if (x->ndim == 0) return tkc_err_null(TKC_ESHAPE, "index_select: needs a tensor of at least 1 dim");
  int n = x->ndim, m = ix->ndim, ax = norm_axis(axis, n, "index_select");
  if (ax < 0) return NULL;
  if (n + m > TKC_MAX_DIMS) return tkc_err_null(TKC_ESHAPE, "index_select: %d + %d dims exceed %d", n, m, TKC_MAX_DIMS);
  /* x: (pre, 1.., D, post)   idx: (1.., J.., 1, 1..)   -> select over D: (pre, J.., post) */
  int64_t d = x->shape[ax], xs[TKC_MAX_DIMS], is[TKC_MAX_DIMS], out[TKC_MAX_DIMS];
  int k = 0, o = 0;
  for (int i = 0; i < ax; i++) xs[k] = out[o++] = x->shape[i], is[k++] = 1;
  for (int i = 0; i < m; i++) xs[k] = 1, is[k++] = out[o++] = ix->shape[i];
  xs[k] = d, is[k++] = 1;
  for (int i = ax + 1; i < n; i++) xs[k] = out[o++] = x->shape[i], is[k++] = 1;
  /* the result and the selected axis are limited apart: their product is the one-hot select's loop
   * count, not an index (codegen folds the select into one load per element: a 128-token prompt
   * looked up in a 32000 x 768 embedding is 3.1G iterations, none of them indexed) */
  if (checked_numel(o, out, 1, "index_select") < 0 || checked_numel(1, &d, 1, "index_select") < 0) return NULL;
  pool p = {.n = 0};
  tkc_tensor *idx = P(&p, reshape_v(prep_index(&p, index, d, "index_select"), k, is));
  tkc_tensor *mask = P(&p, tkc_eq(idx, arange_at(&p, a->ctx, index_work_dtype(ix->dtype), d, k, ax + m)));
  tkc_tensor *r = select_sum(&p, mask, P(&p, tkc_reshape(a, k, xs)), ax + m, 0);
  tkc_tensor *res = r ? tkc_reshape(r, o, out) : NULL;
  pool_free(&p);
  return res;
}

/* ---------------------------------------------------------------- scatter / scatter_add */

/* The pieces both scatters share, in n+1 dims: the index and src padded to a's shape off the axis
 * (the index with D, which matches nothing) and moved so the index's axis J is last and a's axis D at
 * ax: mask[..o.., j] = (index[..o with j on ax..] == o_ax), vals[..o.., j] = src[..]. A reduce over
 * the last axis then gives a's shape directly (no pad after the reduce: one kernel). */
#define SCATTER_INDEX_BUFFER 16
typedef struct scatter_parts {
  int n, ax;
  tkc_tensor *mask, *vals;
} scatter_parts;

static int scatter_prep(pool *p, tkc_tensor *a, int axis, tkc_tensor *index, tkc_tensor *src, scatter_parts *sp, const char *what) {
  if (tkc_check(a) || tkc_check(index) || tkc_check(src) || !same_ctx(a, index) || !same_ctx(a, src)) return -1;
  const tkc_lazy *x = node(a), *ix = node(index), *sx = node(src);
  int n = x->ndim;
  if (n == 0) return tkc_err(TKC_ESHAPE, "%s: needs a tensor of at least 1 dim", what), -1;
  int ax = norm_axis(axis, n, what);
  if (ax < 0) return -1;
  if (ix->ndim != n || sx->ndim != n) return tkc_err(TKC_ESHAPE, "%s: the tensor, index and src need one ndim (%d, %d, %d)", what, n, ix->ndim, sx->ndim), -1;
  if (sx->dtype != x->dtype) return tkc_err(TKC_EDTYPE, "%s: src is %s, the tensor %s", what, tkc_dtype_name(sx->dtype), tkc_dtype_name(x->dtype)), -1;
  if (n + 1 > TKC_MAX_DIMS) return tkc_err(TKC_ESHAPE, "%s: needs a spare dim (at most %d dims)", what, TKC_MAX_DIMS - 1), -1;
  int64_t ranges[2 * TKC_MAX_DIMS], pads[2 * TKC_MAX_DIMS], d = x->shape[ax], j = ix->shape[ax];
  for (int k = 0; k < n; k++) {
    if (ix->shape[k] > sx->shape[k] || (k != ax && ix->shape[k] > x->shape[k]))
      return tkc_err(TKC_ESHAPE, "%s: index dim %d is %lld: larger than src's %lld or the tensor's %lld", what, k, (long long)ix->shape[k],
                     (long long)sx->shape[k], (long long)x->shape[k]), -1;
    ranges[2 * k] = pads[2 * k] = 0;
    ranges[2 * k + 1] = ix->shape[k];
    pads[2 * k + 1] = k == ax ? 0 : x->shape[k] - ix->shape[k];
  }
  if (checked_numel(n, x->shape, j ? j : 1, what) < 0) return -1;
  /* (S with J on ax) -> permute J last -> (S with 1 on ax, J) */
  int order[TKC_MAX_DIMS];
  int64_t e[TKC_MAX_DIMS];
  for (int k = 0, o = 0; k < n; k++)
    if (k != ax) order[o++] = k;
  order[n - 1] = ax;
  for (int k = 0; k < n; k++) e[k] = k == ax ? 1 : x->shape[k];
  e[n] = j;
  tkc_tensor *idx = prep_index(p, index, d, what);
  tkc_tensor *ip = P(p, idx ? tkc_pad(idx, pads, (double)d) : NULL);
  /* each index element is compared with all d positions: past a few, the wrapped and padded index
   * is computed once into a buffer, leaving a load, a compare and a select per step of the reduce */
  if (d >= SCATTER_INDEX_BUFFER) ip = P(p, ip ? tkc_contiguous(ip) : NULL);
  tkc_tensor *sp0 = P(p, ip ? tkc_pad(P(p, tkc_shrink(src, ranges)), pads, 0) : NULL);
  tkc_tensor *ie = P(p, reshape_v(P(p, ip ? tkc_permute(ip, order) : NULL), n + 1, e));
  sp->vals = P(p, reshape_v(P(p, sp0 ? tkc_permute(sp0, order) : NULL), n + 1, e));
  sp->mask = P(p, ie ? tkc_eq(ie, arange_at(p, a->ctx, index_work_dtype(ix->dtype), d, n + 1, ax)) : NULL);
  sp->n = n, sp->ax = ax;
  return sp->mask && sp->vals ? 0 : -1;
}

tkc_tensor *tkc_scatter_add(tkc_tensor *a, int axis, tkc_tensor *index, tkc_tensor *src) {
  pool p = {.n = 0};
  scatter_parts sp;
  tkc_tensor *res = NULL;
  if (!scatter_prep(&p, a, axis, index, src, &sp, "scatter_add")) {
    tkc_dtype dt = node(a)->dtype;
    tkc_tensor *w = P(&p, tkc_where(sp.mask, sp.vals, zero_of(&p, a->ctx, dt)));
    tkc_tensor *s = P(&p, tkc_cast(P(&p, tkc_sum(w, 1, &sp.n, 0)), dt));
    res = s ? (dt == TKC_BOOL ? tkc_or(a, s) : tkc_add(a, s)) : NULL;
  }
  pool_free(&p);
  return res;
}

tkc_tensor *tkc_scatter(tkc_tensor *a, int axis, tkc_tensor *index, tkc_tensor *src) {
  pool p = {.n = 0};
  scatter_parts sp;
  tkc_tensor *res = NULL;
  if (!scatter_prep(&p, a, axis, index, src, &sp, "scatter")) {
    /* the last writer along the axis: last = max(where(mask, j, -1)); then its value */
    int64_t j = node(index)->shape[sp.ax];
    tkc_tensor *jj = arange_at(&p, a->ctx, TKC_INT32, j, sp.n + 1, sp.n);
    tkc_tensor *cand = P(&p, tkc_where(sp.mask, jj, P(&p, tkc_scalar(a->ctx, TKC_INT32, -1))));
    tkc_tensor *last = P(&p, tkc_max(cand, 1, &sp.n, 1));
    tkc_tensor *val = select_sum(&p, P(&p, tkc_eq(jj, last)), sp.vals, sp.n, 0);
    tkc_tensor *hit = P(&p, reshape_v(P(&p, tkc_ge(last, zero_of(&p, a->ctx, TKC_INT32))), sp.n, node(a)->shape));
    res = val && hit ? tkc_where(hit, val, a) : NULL;
  }
  pool_free(&p);
  return res;
}

/* ---------------------------------------------------------------- one_hot */

tkc_tensor *tkc_one_hot(tkc_tensor *index, int64_t num_classes) {
  if (tkc_check(index)) return NULL;
  const tkc_lazy *ix = node(index);
  if (num_classes < 1) return tkc_err_null(TKC_EINVAL, "one_hot: num_classes must be >= 1, not %lld", (long long)num_classes);
  if (ix->ndim + 1 > TKC_MAX_DIMS) return tkc_err_null(TKC_ESHAPE, "one_hot: the result would have more than %d dims", TKC_MAX_DIMS);
  if (num_classes > LIMIT || checked_numel(ix->ndim, ix->shape, num_classes, "one_hot") < 0)
    return tkc_err_null(TKC_ESHAPE, "one_hot: %lld elements x %lld classes exceed 2^31 - 1", (long long)tkc_numel(index), (long long)num_classes);
  int n = ix->ndim;
  int64_t s[TKC_MAX_DIMS];
  shape_of(index, s);
  s[n] = 1;
  pool p = {.n = 0};
  tkc_tensor *idx = P(&p, reshape_v(prep_index(&p, index, num_classes, "one_hot"), n + 1, s));
  tkc_tensor *eq = P(&p, tkc_eq(idx, arange_at(&p, index->ctx, index_work_dtype(ix->dtype), num_classes, n + 1, n)));
  tkc_tensor *r = eq ? tkc_cast(eq, TKC_INT32) : NULL;
  pool_free(&p);
  return r;
}

/* ---------------------------------------------------------------- argmax / argmin */

/* The first index of the extreme along axis (a NaN is the extreme): m = max (min), then the largest
 * key among the hits, key = D - j (+ D for a NaN, so NaNs win). */
static tkc_tensor *arg_extreme(tkc_tensor *a, int axis, int keepdim, int is_max) {
  const char *what = is_max ? "argmax" : "argmin";
  if (tkc_check(a)) return NULL;
  const tkc_lazy *x = node(a);
  pool p = {.n = 0};
  if (x->ndim == 0) { /* as (1); the result is 0-d either way */
    if (norm_axis(axis, 1, what) < 0) return NULL;
    tkc_tensor *r = P(&p, arg_extreme(P(&p, tkc_reshape(a, 1, (const int64_t[]){1})), 0, 0, is_max));
    tkc_tensor *res = r ? tkc_reshape(r, 0, NULL) : NULL;
    pool_free(&p);
    return res;
  }
  int n = x->ndim, ax = norm_axis(axis, n, what);
  if (ax < 0) return NULL;
  int64_t d = x->shape[ax];
  if (d == 0) return tkc_err_null(TKC_ESHAPE, "%s: axis %d is empty", what, axis);
  if (d >= (1 << 30)) return tkc_err_null(TKC_ESHAPE, "%s: axis %d has 2^30 or more elements", what, axis);
  tkc_tensor *v = x->dtype == TKC_BOOL ? P(&p, tkc_cast(a, TKC_INT32)) : a;
  tkc_tensor *key = P(&p, tkc_sub(P(&p, tkc_scalar(a->ctx, TKC_INT32, (double)d)), arange_at(&p, a->ctx, TKC_INT32, d, n, ax)));
  tkc_tensor *hit, *m;
  if (tkc_dtype_is_float(x->dtype)) {
    tkc_tensor *nan = P(&p, tkc_ne(a, a));
    tkc_tensor *y = P(&p, tkc_where(nan, P(&p, tkc_scalar(a->ctx, x->dtype, is_max ? -INFINITY : INFINITY)), a));
    m = P(&p, is_max ? tkc_max(y, 1, &ax, 1) : tkc_min(y, 1, &ax, 1));
    hit = P(&p, tkc_or(nan, P(&p, tkc_eq(a, m))));
    key = P(&p, tkc_where(nan, P(&p, tkc_add(key, P(&p, tkc_scalar(a->ctx, TKC_INT32, (double)d)))), key));
  } else {
    m = P(&p, is_max ? tkc_max(v, 1, &ax, 1) : tkc_min(v, 1, &ax, 1));
    hit = P(&p, tkc_eq(v, m));
  }
  tkc_tensor *k = P(&p, tkc_max(P(&p, tkc_where(hit, key, zero_of(&p, a->ctx, TKC_INT32))), 1, &ax, keepdim));
  /* the index: (2D - key) % D (key is D - j, or 2D - j for a NaN); k read once, so this fuses */
  tkc_tensor *res = tkc_mod(P(&p, tkc_sub(P(&p, tkc_scalar(a->ctx, TKC_INT32, 2.0 * (double)d)), k)), P(&p, tkc_scalar(a->ctx, TKC_INT32, (double)d)));
  pool_free(&p);
  return res;
}

tkc_tensor *tkc_argmax(tkc_tensor *a, int axis, int keepdim) { return arg_extreme(a, axis, keepdim, 1); }
tkc_tensor *tkc_argmin(tkc_tensor *a, int axis, int keepdim) { return arg_extreme(a, axis, keepdim, 0); }

/* ---------------------------------------------------------------- sort / topk */

/* The first k of a stable sort along axis. rank[j] = how many i come before j (x_i before x_j, or tied
 * with i < j); then output t takes the j of rank t. */
static tkc_status sort_first(tkc_tensor *a, int axis, int desc, int64_t k, tkc_tensor **values, tkc_tensor **indices, const char *what) {
  if (values) *values = NULL;
  if (indices) *indices = NULL;
  if (tkc_check(a)) return tkc_last_status();
  if (!values && !indices) return tkc_err(TKC_EINVAL, "%s: values and indices are both NULL", what);
  const tkc_lazy *x = node(a);
  pool p = {.n = 0};
  if (x->ndim == 0) { /* as (1) */
    if (norm_axis(axis, 1, what) < 0) return TKC_EINVAL;
    if (k > 1 || k < 0) return tkc_err(TKC_EINVAL, "%s: k = %lld for a dim of 1", what, (long long)k);
    tkc_tensor *v = NULL, *i = NULL;
    tkc_status st = sort_first(P(&p, tkc_reshape(a, 1, (const int64_t[]){1})), 0, desc, k, values ? &v : NULL, indices ? &i : NULL, what);
    P(&p, v), P(&p, i);
    if (!st && k == 1) { /* back to 0-d */
      if (values) st = (*values = tkc_reshape(v, 0, NULL)) ? TKC_OK : tkc_last_status();
      if (indices && !st) st = (*indices = tkc_reshape(i, 0, NULL)) ? TKC_OK : tkc_last_status();
    } else if (!st) { /* k = 0: (0) */
      if (values) *values = tkc_reshape(v, 1, (const int64_t[]){0});
      if (indices) *indices = tkc_reshape(i, 1, (const int64_t[]){0});
    }
    pool_free(&p);
    return st;
  }
  int n = x->ndim, ax = norm_axis(axis, n, what);
  if (ax < 0) return TKC_EINVAL;
  int64_t d = x->shape[ax];
  if (k < 0 || k > d) return tkc_err(TKC_EINVAL, "%s: k = %lld outside [0, %lld] (the dim)", what, (long long)k, (long long)d);
  if (checked_numel(n, x->shape, d ? d : 1, what) < 0) return TKC_ESHAPE;
  if (n + 1 > TKC_MAX_DIMS) return tkc_err(TKC_ESHAPE, "%s: needs a spare dim (at most %d dims)", what, TKC_MAX_DIMS - 1);
  /* xt: (R.., D) with the axis last; xj: (R.., D, 1), xi: (R.., 1, D) */
  int64_t s[TKC_MAX_DIMS];
  tkc_tensor *xt = P(&p, tkc_transpose(a, ax, n - 1));
  shape_of(a, s);
  s[ax] = s[n - 1];
  s[n - 1] = d;
  s[n] = 1;
  tkc_tensor *xj = P(&p, tkc_reshape(xt, n + 1, s));
  s[n - 1] = 1;
  s[n] = d;
  tkc_tensor *xi = P(&p, tkc_reshape(xt, n + 1, s));
  tkc_tensor *before = P(&p, desc ? tkc_gt(xi, xj) : tkc_lt(xi, xj)), *tie = P(&p, tkc_eq(xi, xj));
  if (tkc_dtype_is_float(x->dtype)) { /* NaN after everything ascending, before everything descending; NaNs tie */
    tkc_tensor *ni = P(&p, tkc_ne(xi, xi)), *nj = P(&p, tkc_ne(xj, xj));
    tkc_tensor *nan_first = P(&p, desc ? tkc_and(ni, P(&p, tkc_neg(nj))) : tkc_and(P(&p, tkc_neg(ni)), nj));
    before = P(&p, tkc_or(before, nan_first));
    tie = P(&p, tkc_or(tie, P(&p, tkc_and(ni, nj))));
  }
  tkc_tensor *ii = arange_at(&p, a->ctx, TKC_INT32, d, n + 1, n), *jj = arange_at(&p, a->ctx, TKC_INT32, d, n + 1, n - 1);
  before = P(&p, tkc_or(before, P(&p, tkc_and(tie, P(&p, tkc_lt(ii, jj))))));
  int last = n;
  tkc_tensor *rank = P(&p, tkc_sum(before, 1, &last, 0)); /* (R.., D) int32 */
  /* sel[.., t, j] = rank[.., j] == t for t < k */
  s[n - 1] = 1;
  s[n] = d;
  tkc_tensor *sel = P(&p, tkc_eq(P(&p, reshape_v(rank, n + 1, s)), arange_at(&p, a->ctx, TKC_INT32, k, n + 1, n - 1)));
  tkc_tensor *v = values ? select_sum(&p, sel, xi, n, 0) : NULL;
  tkc_tensor *ix = indices ? select_sum(&p, sel, ii, n, 0) : NULL;
  tkc_status st = TKC_OK;
  if ((values && !v) || (indices && !ix)) st = tkc_last_status() ? tkc_last_status() : TKC_EINTERNAL;
  if (!st && values && !(*values = tkc_transpose(v, ax, n - 1))) st = tkc_last_status();
  if (!st && indices && !(*indices = tkc_transpose(ix, ax, n - 1))) st = tkc_last_status();
  if (st && values) tkc_tensor_free(*values), *values = NULL;
  pool_free(&p);
  return st;
}

tkc_status tkc_sort(tkc_tensor *a, int axis, int descending, tkc_tensor **values, tkc_tensor **indices) {
  if (values) *values = NULL;
  if (indices) *indices = NULL;
  if (tkc_check(a)) return tkc_last_status();
  int axn = node(a)->ndim ? norm_axis(axis, node(a)->ndim, "sort") : 0;
  if (axn < 0) return TKC_EINVAL;
  return sort_first(a, axis, descending, node(a)->ndim ? node(a)->shape[axn] : 1, values, indices, "sort");
}

tkc_status tkc_topk(tkc_tensor *a, int64_t k, int axis, int largest, tkc_tensor **values, tkc_tensor **indices) {
  return sort_first(a, axis, largest, k, values, indices, "topk");
}
