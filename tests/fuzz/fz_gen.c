/* tests/fuzz/fz_gen.c — random tensor programs: generation, shape/dtype inference with tkc's rules,
 * dead-node removal and printing as C code (see fz.h). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "fz.h"

/* ---------------------------------------------------------------- small helpers */

uint64_t fz_next(fz_rng *r) { /* splitmix64 */
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int fz_below(fz_rng *r, int n) { return n <= 1 ? 0 : (int)(fz_next(r) % (uint64_t)n); }
static bool chance(fz_rng *r, int one_in) { return fz_below(r, one_in) == 0; }

int64_t fz_numel(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  return n;
}

static const char *const unop_names[FZ_NUNOPS] = {"neg", "abs", "recip", "sqrt", "exp", "exp2", "log", "log2", "sin", "cos", "tanh", "sigmoid", "relu"};
static const char *const binop_names[FZ_NBINOPS] = {"add", "sub", "mul", "div", "idiv", "mod", "maximum", "minimum", "pow", "lt", "le",
                                                     "gt",  "ge",  "eq",  "ne",  "and",  "or",  "xor",     "shl",     "shr"};
static const char *const redop_names[FZ_NREDOPS] = {"sum", "max", "min", "mean"};
const char *fz_unop_name(int op) { return unop_names[op]; }
const char *fz_binop_name(int op) { return binop_names[op]; }
const char *fz_redop_name(int op) { return redop_names[op]; }

static bool is_float(tkc_dtype dt) { return tkc_dtype_is_float(dt); }
static bool is_int(tkc_dtype dt) { return tkc_dtype_is_int(dt); }
static tkc_dtype float_of(tkc_dtype dt) { return is_float(dt) ? dt : tkc_least_upper_dtype(dt, TKC_FLOAT32); }

/* the dtype tkc_sum gives (tkc_sum's sum_acc, float16 staying float16) */
static tkc_dtype sum_dtype(tkc_dtype dt) {
  if (dt == TKC_FLOAT16 || dt == TKC_BFLOAT16) return dt;
  if (tkc_dtype_is_unsigned(dt)) return tkc_least_upper_dtype(dt, TKC_UINT32);
  if (is_int(dt) || dt == TKC_BOOL) return tkc_least_upper_dtype(dt, TKC_INT32);
  return tkc_least_upper_dtype(dt, TKC_FLOAT32);
}

void fz_shape_str(const fz_node *nd, char *buf, size_t n) {
  size_t k = (size_t)snprintf(buf, n, "%s[", tkc_dtype_name(nd->dt));
  for (int i = 0; i < nd->ndim && k < n; i++) k += (size_t)snprintf(buf + k, n - k, i ? ",%" PRId64 : "%" PRId64, nd->shape[i]);
  if (k < n) snprintf(buf + k, n - k, "]");
}

bool fz_uses_64bit(const fz_prog *p) {
  for (int i = 0; i < p->n; i++)
    if (tkc_dtype_size(p->node[i].dt) == 8 || (p->node[i].kind == FZ_CAST && tkc_dtype_size(p->node[i].cast_to) == 8)) return true;
  return false;
}

/* ---------------------------------------------------------------- leaf values */

static uint32_t hash32(uint32_t seed, uint32_t i) {
  uint32_t h = (i + 0x9e3779b9u) * 2654435761u ^ seed;
  h ^= h >> 15;
  h *= 2246822519u;
  h ^= h >> 13;
  return h;
}

/* x rounded to the float dtype dt */
static double round_to(double x, tkc_dtype dt) {
  tkc_value v = {.f = x};
  return tkc_value_truncate(v, dt).f;
}

double fz_leaf_value(const fz_node *nd, int64_t i) {
  uint32_t h = hash32(nd->seed, (uint32_t)i);
  tkc_dtype dt = nd->dt;
  bool sgn = !tkc_dtype_is_unsigned(dt) && dt != TKC_BOOL;
  double v;
  switch (nd->vkind) {
  case FZ_V_SIGNED: v = ((int)(h % 257) - 128) / 32.0; break;
  case FZ_V_POS: v = (1 + (int)(h % 128)) / 32.0; break;
  case FZ_V_SMALL: v = sgn ? (int)(h % 19) - 9 : (int)(h % 10); break;
  case FZ_V_NONZERO: v = (1 + (int)(h % 9)) * (sgn && (h >> 20 & 1) ? -1 : 1); break;
  case FZ_V_SHIFT: v = h % 8; break;
  case FZ_V_INDEX: v = (double)(h % (uint32_t)nd->p[FZ_MAXP - 1]); break;
  case FZ_V_NEGINDEX: v = (double)(h % (2 * (uint32_t)nd->p[FZ_MAXP - 1])) - (double)nd->p[FZ_MAXP - 1]; break;
  case FZ_V_SPECIAL: {
    static const double specials[] = {INFINITY, -INFINITY, NAN, -0.0, 0.0, 1e30, -3e38, 60000.0, 1e-40, -1e-42, 7e-7, 1e-300};
    v = h % 3 ? ((int)(h % 257) - 128) / 32.0 : specials[(h >> 8) % (sizeof specials / sizeof *specials)];
    break;
  }
  default: /* FZ_V_WIDE: the whole range of an int dtype (int64: +-2^52, exact in double) */
    if (is_float(dt)) v = ((int32_t)(h % (1u << 20)) - (1 << 19)) / 16.0;
    else if (dt == TKC_INT64) v = (double)(((int64_t)hash32(nd->seed ^ 0x5bd1e995u, (uint32_t)i) << 20) ^ (int64_t)(h & 0xfffff)) * (h >> 31 ? -1 : 1);
    else {
      tkc_value x = {.i = (int64_t)h};
      v = (double)(tkc_dtype_is_unsigned(dt) ? (int64_t)tkc_value_truncate(x, dt).u : tkc_value_truncate(x, dt).i);
      if (dt == TKC_BOOL) v = h & 1;
    }
  }
  if (dt == TKC_BOOL) return nd->vkind == FZ_V_WIDE || nd->vkind == FZ_V_SMALL ? (h >> 7 & 1) : v != 0;
  return is_float(dt) ? round_to(v, dt) : v;
}

/* ---------------------------------------------------------------- inference */

static int broadcast(int na, const int64_t *a, int nb, const int64_t *b, int *n, int64_t *out) {
  int m = na > nb ? na : nb;
  for (int i = 0; i < m; i++) {
    int ia = i - (m - na), ib = i - (m - nb);
    int64_t x = ia >= 0 ? a[ia] : 1, y = ib >= 0 ? b[ib] : 1;
    if (x != y && x != 1 && y != 1) return -1;
    out[i] = x == 1 ? y : x;
  }
  *n = m;
  return 0;
}

/* axes p[0..np) of an ndim tensor as a mask (np 0 = all); -1 for a bad or repeated axis */
static int axes_mask(const fz_node *nd, int ndim, int *mask) {
  for (int i = 0; i < ndim; i++) mask[i] = nd->np == 0;
  for (int k = 0; k < nd->np; k++) {
    int64_t a = nd->p[k] < 0 ? nd->p[k] + ndim : nd->p[k];
    if (a < 0 || a >= ndim || mask[a]) return -1;
    mask[a] = 1;
  }
  return 0;
}

static int norm_axis(int axis, int ndim) { return axis < 0 ? axis + ndim : axis; }

static void set_shape(fz_node *nd, int ndim, const int64_t *shape) {
  nd->ndim = ndim;
  if (ndim) memcpy(nd->shape, shape, sizeof(int64_t) * (size_t)ndim);
}

static bool binop_ok(int op, tkc_dtype dt) {
  switch (op) {
  case FZ_SUB: return dt != TKC_BOOL;
  case FZ_IDIV: case FZ_MOD: case FZ_SHL: case FZ_SHR: return is_int(dt);
  case FZ_AND: case FZ_OR: case FZ_XOR: return is_int(dt) || dt == TKC_BOOL;
  default: return true;
  }
}

static int infer_binary(fz_node *nd, const fz_node *a, const fz_node *b) {
  int64_t s[FZ_MAXDIM];
  int n;
  if (broadcast(a->ndim, a->shape, b->ndim, b->shape, &n, s)) return -1;
  tkc_dtype dt = tkc_least_upper_dtype(a->dt, b->dt);
  if (nd->op == FZ_DIV || nd->op == FZ_POW) dt = float_of(dt);
  if (!binop_ok(nd->op, dt)) return -1;
  set_shape(nd, n, s);
  nd->dt = nd->op >= FZ_LT && nd->op <= FZ_NE ? TKC_BOOL : dt;
  return 0;
}

static int infer_reduce(fz_node *nd, const fz_node *a) {
  int mask[FZ_MAXDIM];
  if (axes_mask(nd, a->ndim, mask)) return -1;
  int64_t s[FZ_MAXDIM];
  int n = 0;
  for (int i = 0; i < a->ndim; i++)
    if (!mask[i] || nd->keepdim) s[n++] = mask[i] ? 1 : a->shape[i];
  set_shape(nd, n, s);
  if (nd->op == FZ_RSUM) nd->dt = sum_dtype(a->dt);
  else if (nd->op == FZ_RMEAN) nd->dt = is_float(a->dt) ? a->dt : TKC_FLOAT32;
  else nd->dt = a->dt;
  return 0;
}

static int infer_reshape(fz_node *nd, const fz_node *a) {
  int64_t s[FZ_MAXDIM], known = 1, total = fz_numel(a->ndim, a->shape);
  int infer = -1;
  if (nd->np > FZ_MAXDIM) return -1;
  for (int i = 0; i < nd->np; i++) {
    s[i] = nd->p[i];
    if (s[i] == -1 && infer < 0) infer = i;
    else if (s[i] < 0) return -1;
    else known *= s[i];
  }
  if (infer >= 0) {
    if (known == 0 || total % known) return -1;
    s[infer] = total / known;
    known *= s[infer];
  }
  if (known != total) return -1;
  set_shape(nd, nd->np, s);
  return 0;
}

static int infer_permute(fz_node *nd, const fz_node *a) {
  int seen[FZ_MAXDIM] = {0};
  int64_t s[FZ_MAXDIM];
  if (nd->np != a->ndim) return -1;
  for (int i = 0; i < a->ndim; i++) {
    int64_t o = nd->p[i] < 0 ? nd->p[i] + a->ndim : nd->p[i];
    if (o < 0 || o >= a->ndim || seen[o]) return -1;
    seen[o] = 1;
    s[i] = a->shape[o];
  }
  set_shape(nd, a->ndim, s);
  return 0;
}

static int infer_transpose(fz_node *nd, const fz_node *a) {
  int n = a->ndim, x = norm_axis((int)nd->p[0], n), y = norm_axis((int)nd->p[1], n);
  if (x < 0 || x >= n || y < 0 || y >= n) return -1;
  set_shape(nd, n, a->shape);
  int64_t t = nd->shape[x];
  nd->shape[x] = nd->shape[y];
  nd->shape[y] = t;
  return 0;
}

static int infer_expand(fz_node *nd, const fz_node *a) {
  int64_t s[FZ_MAXDIM];
  if (nd->np < a->ndim || nd->np > FZ_MAXDIM) return -1;
  for (int i = 0; i < nd->np; i++) {
    int j = i - (nd->np - a->ndim);
    int64_t have = j >= 0 ? a->shape[j] : 1;
    s[i] = nd->p[i] == -1 ? have : nd->p[i];
    if (s[i] < 0 || (have != 1 && have != s[i])) return -1;
  }
  set_shape(nd, nd->np, s);
  return 0;
}

static int infer_pad_shrink(fz_node *nd, const fz_node *a) {
  int64_t s[FZ_MAXDIM];
  if (nd->np != 2 * a->ndim) return -1;
  for (int i = 0; i < a->ndim; i++) {
    int64_t b = nd->p[2 * i], e = nd->p[2 * i + 1];
    if (nd->kind == FZ_PAD) {
      if (b < 0 || e < 0) return -1;
      s[i] = a->shape[i] + b + e;
    } else {
      if (b < 0 || e < b || e > a->shape[i]) return -1;
      s[i] = e - b;
    }
  }
  set_shape(nd, a->ndim, s);
  return 0;
}

static int infer_matmul(fz_node *nd, const fz_node *x, const fz_node *y) {
  if (!x->ndim || !y->ndim) return -1;
  int64_t as[FZ_MAXDIM], bs[FZ_MAXDIM], out[FZ_MAXDIM];
  int an = x->ndim == 1 ? 2 : x->ndim, bn = y->ndim == 1 ? 2 : y->ndim;
  if (x->ndim == 1) as[0] = 1, as[1] = x->shape[0];
  else memcpy(as, x->shape, sizeof(int64_t) * (size_t)an);
  if (y->ndim == 1) bs[0] = y->shape[0], bs[1] = 1;
  else memcpy(bs, y->shape, sizeof(int64_t) * (size_t)bn);
  if (as[an - 1] != bs[bn - 2]) return -1;
  int nb, no = 0;
  if (broadcast(an - 2, as, bn - 2, bs, &nb, out) || nb + 3 > FZ_MAXDIM) return -1;
  no = nb;
  if (x->ndim != 1) out[no++] = as[an - 2];
  if (y->ndim != 1) out[no++] = bs[bn - 1];
  set_shape(nd, no, out);
  nd->dt = tkc_least_upper_dtype(x->dt, y->dt);
  return 0;
}

static int infer_cat(fz_prog *p, fz_node *nd) {
  const fz_node *a = &p->node[nd->in[0]];
  int ax = norm_axis(nd->axis, a->ndim);
  if (a->ndim < 1 || ax < 0 || ax >= a->ndim) return -1;
  int64_t s[FZ_MAXDIM];
  set_shape(nd, a->ndim, a->shape);
  memcpy(s, a->shape, sizeof s);
  s[ax] = 0;
  for (int k = 0; k < nd->nin; k++) {
    const fz_node *b = &p->node[nd->in[k]];
    if (b->ndim != a->ndim || b->dt != a->dt) return -1;
    for (int i = 0; i < a->ndim; i++)
      if (i != ax && b->shape[i] != a->shape[i]) return -1;
    s[ax] += b->shape[ax];
  }
  set_shape(nd, a->ndim, s);
  nd->dt = a->dt;
  return 0;
}

/* gather / index_select: index in[1] is an int data leaf whose values lie in [0, dim) */
static int infer_index(fz_node *nd, const fz_node *a, const fz_node *ix) {
  int ax = norm_axis(nd->axis, a->ndim);
  if (a->ndim < 1 || ax < 0 || ax >= a->ndim || !is_int(ix->dt)) return -1;
  if (ix->kind == FZ_DATA && ix->vkind == FZ_V_INDEX && ix->p[FZ_MAXP - 1] > a->shape[ax]) return -1; /* out of range */
  if (ix->kind == FZ_DATA && ix->vkind == FZ_V_NEGINDEX && ix->p[FZ_MAXP - 1] != a->shape[ax]) return -1;
  nd->dt = a->dt;
  if (nd->kind == FZ_GATHER) {
    if (ix->ndim != a->ndim) return -1;
    for (int i = 0; i < a->ndim; i++)
      if (i != ax && ix->shape[i] > a->shape[i]) return -1;
    set_shape(nd, ix->ndim, ix->shape);
    return 0;
  }
  if (a->ndim + ix->ndim > FZ_MAXDIM) return -1;
  int64_t s[FZ_MAXDIM];
  int n = 0;
  for (int i = 0; i < ax; i++) s[n++] = a->shape[i];
  for (int i = 0; i < ix->ndim; i++) s[n++] = ix->shape[i];
  for (int i = ax + 1; i < a->ndim; i++) s[n++] = a->shape[i];
  set_shape(nd, n, s);
  return 0;
}

static int infer_leaf(fz_node *nd) {
  switch (nd->kind) {
  case FZ_SCALAR: nd->ndim = 0; return 0;
  case FZ_ARANGE: nd->ndim = 1; nd->shape[0] = nd->p[0]; return nd->p[0] >= 0 && nd->p[1] != 0 ? 0 : -1;
  default:
    for (int i = 0; i < nd->np; i++)
      if (nd->p[i] < 0) return -1;
    set_shape(nd, nd->np, nd->p);
    return 0;
  }
}

static int infer_node(fz_prog *p, fz_node *nd) {
  const fz_node *a = nd->nin > 0 ? &p->node[nd->in[0]] : NULL, *b = nd->nin > 1 ? &p->node[nd->in[1]] : NULL;
  switch (nd->kind) {
  case FZ_DATA: case FZ_FULL: case FZ_SCALAR: case FZ_ARANGE: return infer_leaf(nd);
  case FZ_UNARY:
    set_shape(nd, a->ndim, a->shape);
    nd->dt = nd->op == FZ_NEG || nd->op == FZ_ABS || nd->op == FZ_RELU ? a->dt : float_of(a->dt);
    return 0;
  case FZ_BINARY: return infer_binary(nd, a, b);
  case FZ_WHERE: {
    const fz_node *c = &p->node[nd->in[2]];
    int64_t s1[FZ_MAXDIM], s[FZ_MAXDIM];
    int n1, n;
    if (broadcast(b->ndim, b->shape, c->ndim, c->shape, &n1, s1) || broadcast(a->ndim, a->shape, n1, s1, &n, s)) return -1;
    set_shape(nd, n, s);
    nd->dt = tkc_least_upper_dtype(b->dt, c->dt);
    return 0;
  }
  case FZ_CAST: set_shape(nd, a->ndim, a->shape); nd->dt = nd->cast_to; return 0;
  case FZ_REDUCE: return infer_reduce(nd, a);
  case FZ_RESHAPE: nd->dt = a->dt; return infer_reshape(nd, a);
  case FZ_PERMUTE: nd->dt = a->dt; return infer_permute(nd, a);
  case FZ_TRANSPOSE: nd->dt = a->dt; return infer_transpose(nd, a);
  case FZ_EXPAND: nd->dt = a->dt; return infer_expand(nd, a);
  case FZ_PAD: case FZ_SHRINK: nd->dt = a->dt; return infer_pad_shrink(nd, a);
  case FZ_FLIP: {
    int mask[FZ_MAXDIM];
    nd->dt = a->dt;
    set_shape(nd, a->ndim, a->shape);
    return axes_mask(nd, a->ndim, mask);
  }
  case FZ_CONTIG: nd->dt = a->dt; set_shape(nd, a->ndim, a->shape); return 0;
  case FZ_MATMUL: return infer_matmul(nd, a, b);
  case FZ_SOFTMAX: case FZ_LOGSOFTMAX: { /* max-subtracted: a - max(a) needs a dtype tkc_sub takes */
    int ax = norm_axis(nd->axis, a->ndim);
    set_shape(nd, a->ndim, a->shape);
    nd->dt = float_of(a->dt);
    return ax >= 0 && ax < a->ndim && a->dt != TKC_BOOL ? 0 : -1;
  }
  case FZ_CUMSUM: {
    int ax = norm_axis(nd->axis, a->ndim);
    set_shape(nd, a->ndim, a->shape);
    nd->dt = sum_dtype(a->dt);
    return (a->ndim == 0 && (nd->axis == 0 || nd->axis == -1)) || (ax >= 0 && ax < a->ndim) ? 0 : -1;
  }
  case FZ_CAT: return infer_cat(p, nd);
  case FZ_LAYERNORM:
    set_shape(nd, a->ndim, a->shape);
    nd->dt = a->dt;
    return is_float(a->dt) && nd->p[0] >= 1 && nd->p[0] <= a->ndim ? 0 : -1;
  case FZ_GATHER: case FZ_INDEX_SELECT: return infer_index(nd, a, b);
  default: return -1;
  }
}

int fz_infer(fz_prog *p, int i) {
  fz_node *nd = &p->node[i];
  if (infer_node(p, nd)) return -1;
  return fz_numel(nd->ndim, nd->shape) <= (nd->kind == FZ_DATA ? FZ_MAXLEAF : FZ_MAXNUMEL) ? 0 : -1;
}

int fz_infer_all(fz_prog *p) {
  for (int i = 0; i < p->n; i++)
    if (fz_infer(p, i) && !p->node[i].expect_fail) return -1;
  return 0;
}

/* ---------------------------------------------------------------- generation */

typedef struct gen {
  fz_rng r;
  fz_prog *p;
  tkc_dtype main_dt;
  const tkc_dtype *dts; /* the dtypes this run may use */
  int ndts;
  int cur;              /* the chain's latest node */
} gen;

static int dim_pick(gen *g) {
  static const int dims[] = {1, 1, 2, 2, 3, 3, 4, 4, 5, 6, 7, 8, 9, 12, 16, 17, 32, 33, 64};
  return dims[fz_below(&g->r, (int)(sizeof dims / sizeof *dims))];
}

static fz_node *push(gen *g) {
  fz_node *nd = &g->p->node[g->p->n];
  memset(nd, 0, sizeof *nd);
  return nd;
}

/* commits the node pushed last when it infers valid; its index, or -1 */
static int commit(gen *g) {
  fz_prog *p = g->p;
  if (p->n >= FZ_MAXNODES || fz_infer(p, p->n)) return -1;
  return p->n++;
}

static fz_vkind vkind_for(gen *g, tkc_dtype dt) {
  if (is_float(dt)) return chance(&g->r, 4) ? FZ_V_POS : chance(&g->r, 12) ? FZ_V_WIDE : chance(&g->r, 10) ? FZ_V_SPECIAL : FZ_V_SIGNED;
  return chance(&g->r, 5) ? FZ_V_WIDE : FZ_V_SMALL;
}

static int leaf_data(gen *g, tkc_dtype dt, int ndim, const int64_t *shape, fz_vkind vk) {
  if (g->p->n >= FZ_MAXNODES - 1) return -1;
  fz_node *nd = push(g);
  nd->kind = FZ_DATA;
  nd->dt = dt;
  nd->np = ndim;
  memcpy(nd->p, shape, sizeof(int64_t) * (size_t)ndim);
  nd->seed = (uint32_t)fz_next(&g->r);
  nd->vkind = vk;
  return commit(g);
}

static tkc_dtype pick_dtype(gen *g) {
  if (chance(&g->r, 40)) return chance(&g->r, 2) ? TKC_INT16 : TKC_UINT32;
  return chance(&g->r, 6) ? g->dts[fz_below(&g->r, g->ndts)] : g->main_dt;
}

/* a leaf of some kind: data mostly, sometimes a full / scalar / arange constant */
static int leaf(gen *g, int ndim, const int64_t *shape) {
  tkc_dtype dt = pick_dtype(g);
  int k = fz_below(&g->r, 12);
  if (k < 9) return leaf_data(g, dt, ndim, shape, vkind_for(g, dt));
  if (g->p->n >= FZ_MAXNODES - 1) return -1;
  fz_node *nd = push(g);
  nd->dt = dt;
  nd->value = dt == TKC_BOOL ? 1 : is_float(dt) ? (fz_below(&g->r, 33) - 16) / 8.0 : fz_below(&g->r, 19) - 9;
  if (tkc_dtype_is_unsigned(dt)) nd->value = fabs(nd->value);
  if (k == 9) nd->kind = FZ_SCALAR;
  else if (k == 10 || ndim != 1 || dt == TKC_BOOL) {
    nd->kind = FZ_FULL;
    nd->np = ndim;
    memcpy(nd->p, shape, sizeof(int64_t) * (size_t)ndim);
  } else {
    nd->kind = FZ_ARANGE;
    nd->p[0] = shape[0];
    nd->p[1] = tkc_dtype_is_unsigned(dt) ? 1 : fz_below(&g->r, 2) ? 1 : -2;
    if (tkc_dtype_is_unsigned(dt)) nd->value = 0;
  }
  return commit(g);
}

static void random_shape(gen *g, int *ndim, int64_t *shape) {
  *ndim = fz_below(&g->r, 5);
  for (int i = 0; i < *ndim; i++) shape[i] = dim_pick(g);
  if (*ndim && chance(&g->r, 40)) shape[fz_below(&g->r, *ndim)] = 0; /* an empty dim now and then */
  int64_t cap = chance(&g->r, 4) ? 2048 : 512;
  while (fz_numel(*ndim, shape) > cap) shape[fz_below(&g->r, *ndim)] = 1 + fz_below(&g->r, 3);
}

/* a shape that broadcasts with (ndim, shape): a suffix of it with some dims set to 1 */
static void bcast_shape(gen *g, int ndim, const int64_t *shape, int *n2, int64_t *s2) {
  int drop = ndim ? fz_below(&g->r, ndim + 1) : 0;
  if (chance(&g->r, 3)) drop = 0;
  *n2 = ndim - drop;
  for (int i = 0; i < *n2; i++) s2[i] = chance(&g->r, 4) ? 1 : shape[i + drop];
  if (*n2 < FZ_MAXDIM - 3 && chance(&g->r, 10)) { /* one more leading dim: the result grows */
    memmove(s2 + 1, s2, sizeof(int64_t) * (size_t)*n2);
    s2[0] = 2;
    (*n2)++;
  }
}

/* an operand for node a: an existing node that broadcasts with it (DAG reuse), or a new leaf */
static int operand_for(gen *g, int a) {
  const fz_node *x = &g->p->node[a];
  if (chance(&g->r, 3)) {
    int c = fz_below(&g->r, g->p->n);
    int64_t s[FZ_MAXDIM];
    int n;
    if (broadcast(x->ndim, x->shape, g->p->node[c].ndim, g->p->node[c].shape, &n, s) == 0 && !g->p->node[c].expect_fail) return c;
  }
  int n2;
  int64_t s2[FZ_MAXDIM];
  bcast_shape(g, x->ndim, x->shape, &n2, s2);
  return leaf(g, n2, s2);
}

/* the input of the next op: mostly the chain's latest node, sometimes an earlier one */
static int pick_input(gen *g) {
  if (chance(&g->r, 4)) return fz_below(&g->r, g->p->n);
  return g->cur;
}

static int gen_unary(gen *g, int a) {
  fz_node *nd = push(g);
  nd->kind = FZ_UNARY;
  nd->op = fz_below(&g->r, FZ_NUNOPS);
  nd->nin = 1, nd->in[0] = a;
  return commit(g);
}

/* the second operand of op with first operand a: divisors and shift counts are fresh leaves */
static int second_operand(gen *g, int op, int a) {
  const fz_node *x = &g->p->node[a];
  int n2;
  int64_t s2[FZ_MAXDIM];
  bcast_shape(g, x->ndim, x->shape, &n2, s2);
  if ((op == FZ_IDIV || op == FZ_MOD) && is_int(x->dt)) return leaf_data(g, x->dt, n2, s2, FZ_V_NONZERO);
  if (op == FZ_SHL || op == FZ_SHR) return leaf_data(g, x->dt, n2, s2, FZ_V_SHIFT);
  if (op == FZ_POW && chance(&g->r, 2)) return leaf_data(g, float_of(x->dt), n2, s2, FZ_V_SMALL);
  return operand_for(g, a);
}

static int gen_binary(gen *g, int a) {
  int op = fz_below(&g->r, FZ_NBINOPS), b = second_operand(g, op, a);
  if (b < 0) return -1;
  fz_node *nd = push(g);
  nd->kind = FZ_BINARY;
  nd->op = op;
  bool swap = op != FZ_IDIV && op != FZ_MOD && op != FZ_SHL && op != FZ_SHR && chance(&g->r, 3);
  nd->nin = 2, nd->in[0] = swap ? b : a, nd->in[1] = swap ? a : b;
  return commit(g);
}

static int gen_where(gen *g, int a) {
  const fz_node *x = &g->p->node[a];
  int c = -1;
  if (x->dt == TKC_BOOL) c = a, a = operand_for(g, a);
  else {
    int64_t s2[FZ_MAXDIM];
    int n2;
    bcast_shape(g, x->ndim, x->shape, &n2, s2);
    c = chance(&g->r, 2) ? leaf_data(g, TKC_BOOL, n2, s2, FZ_V_SMALL) : operand_for(g, a);
  }
  int b = a >= 0 ? operand_for(g, a) : -1;
  if (a < 0 || b < 0 || c < 0) return -1;
  fz_node *nd = push(g);
  nd->kind = FZ_WHERE;
  nd->nin = 3, nd->in[0] = c, nd->in[1] = a, nd->in[2] = b;
  return commit(g);
}

static int gen_cast(gen *g, int a) {
  fz_node *nd = push(g);
  nd->kind = FZ_CAST;
  nd->cast_to = g->dts[fz_below(&g->r, g->ndts)];
  nd->nin = 1, nd->in[0] = a;
  return commit(g);
}

/* nax distinct random axes of an ndim tensor into p (some negative) */
static void random_axes(gen *g, fz_node *nd, int ndim, int nax) {
  int order[FZ_MAXDIM];
  for (int i = 0; i < ndim; i++) order[i] = i;
  for (int i = ndim - 1; i > 0; i--) {
    int j = fz_below(&g->r, i + 1), t = order[i];
    order[i] = order[j], order[j] = t;
  }
  nd->np = nax;
  for (int k = 0; k < nax; k++) nd->p[k] = chance(&g->r, 3) ? order[k] - ndim : order[k];
}

static int gen_reduce(gen *g, int a) {
  const fz_node *x = &g->p->node[a];
  fz_node *nd = push(g);
  nd->kind = FZ_REDUCE;
  nd->op = fz_below(&g->r, FZ_NREDOPS);
  nd->keepdim = fz_below(&g->r, 2);
  nd->nin = 1, nd->in[0] = a;
  random_axes(g, nd, x->ndim, x->ndim ? fz_below(&g->r, x->ndim + 1) : 0);
  return commit(g);
}

static int gen_reshape(gen *g, int a) {
  const fz_node *x = &g->p->node[a];
  int64_t left = fz_numel(x->ndim, x->shape);
  fz_node *nd = push(g);
  nd->kind = FZ_RESHAPE;
  nd->nin = 1, nd->in[0] = a;
  int want = fz_below(&g->r, 5);
  for (int i = 0; i < want - 1 && left > 0; i++) { /* factor left into dims */
    int64_t d = 1 + fz_below(&g->r, 4);
    if (left % d) d = 1;
    nd->p[nd->np++] = d;
    left /= d;
  }
  if (want > 0 || left != 1) nd->p[nd->np++] = left;
  if (left > 0 && nd->np > 1 && chance(&g->r, 3)) nd->p[fz_below(&g->r, nd->np)] = -1;
  return commit(g);
}

static int gen_permute(gen *g, int a) {
  const fz_node *x = &g->p->node[a];
  fz_node *nd = push(g);
  nd->nin = 1, nd->in[0] = a;
  if (x->ndim >= 2 && chance(&g->r, 3)) {
    nd->kind = FZ_TRANSPOSE;
    nd->p[0] = fz_below(&g->r, x->ndim), nd->p[1] = -1 - fz_below(&g->r, x->ndim);
    nd->np = 2;
  } else {
    nd->kind = FZ_PERMUTE;
    random_axes(g, nd, x->ndim, x->ndim);
  }
  return commit(g);
}

static int gen_expand(gen *g, int a) {
  const fz_node *x = &g->p->node[a];
  fz_node *nd = push(g);
  nd->kind = FZ_EXPAND;
  nd->nin = 1, nd->in[0] = a;
  int extra = x->ndim < FZ_MAXDIM - 2 ? fz_below(&g->r, 3) : 0;
  nd->np = x->ndim + extra;
  for (int i = 0; i < extra; i++) nd->p[i] = 1 + fz_below(&g->r, 3);
  for (int i = 0; i < x->ndim; i++) nd->p[extra + i] = x->shape[i] == 1 && chance(&g->r, 2) ? 1 + fz_below(&g->r, 4) : chance(&g->r, 3) ? -1 : x->shape[i];
  return commit(g);
}

static int gen_pad_shrink(gen *g, int a, bool pad) {
  const fz_node *x = &g->p->node[a];
  fz_node *nd = push(g);
  nd->kind = pad ? FZ_PAD : FZ_SHRINK;
  nd->nin = 1, nd->in[0] = a;
  nd->np = 2 * x->ndim;
  for (int i = 0; i < x->ndim; i++) {
    if (pad) {
      nd->p[2 * i] = chance(&g->r, 2) ? 0 : fz_below(&g->r, 3);
      nd->p[2 * i + 1] = chance(&g->r, 2) ? 0 : fz_below(&g->r, 3);
    } else {
      int64_t d = x->shape[i], b = fz_below(&g->r, (int)d + 1), e = b + fz_below(&g->r, (int)(d - b) + 1);
      if (chance(&g->r, 3)) b = 0, e = d;
      nd->p[2 * i] = b, nd->p[2 * i + 1] = e;
    }
  }
  nd->value = pad && chance(&g->r, 2) ? (fz_below(&g->r, 9) - 4) / 2.0 : 0;
  if (pad && (!is_float(x->dt))) nd->value = x->dt == TKC_BOOL ? (nd->value != 0) : trunc(fabs(nd->value));
  return commit(g);
}

static int gen_flip(gen *g, int a) {
  const fz_node *x = &g->p->node[a];
  fz_node *nd = push(g);
  nd->kind = FZ_FLIP;
  nd->nin = 1, nd->in[0] = a;
  random_axes(g, nd, x->ndim, x->ndim ? 1 + fz_below(&g->r, x->ndim) : 0);
  return commit(g);
}

static int gen_simple(gen *g, int a, fz_kind kind) {
  fz_node *nd = push(g);
  nd->kind = kind;
  nd->nin = 1, nd->in[0] = a;
  int n = g->p->node[a].ndim;
  nd->axis = n ? fz_below(&g->r, 2 * n) - n : 0;
  nd->p[0] = n ? 1 + fz_below(&g->r, n) : 1;
  return commit(g);
}

/* b for a @ b: a new leaf of matching inner dim (sometimes 1-D, sometimes with batch dims) */
static int gen_matmul(gen *g, int a) {
  const fz_node *x = &g->p->node[a];
  if (x->ndim == 0) return -1;
  int64_t k = x->shape[x->ndim - 1], s[FZ_MAXDIM];
  int n = 0;
  if (x->ndim >= 3 && chance(&g->r, 2)) s[n++] = x->shape[x->ndim - 3];
  s[n++] = k;
  if (chance(&g->r, 4) == 0) s[n++] = 1 + fz_below(&g->r, 6);
  int b = leaf(g, n, s);
  if (b < 0) return -1;
  fz_node *nd = push(g);
  nd->kind = FZ_MATMUL;
  nd->nin = 2, nd->in[0] = a, nd->in[1] = b;
  return commit(g);
}

static int gen_cat(gen *g, int a) {
  const fz_node *x = &g->p->node[a];
  if (x->ndim == 0) return -1;
  int ax = fz_below(&g->r, x->ndim), n = 1 + fz_below(&g->r, 3);
  int64_t s[FZ_MAXDIM];
  memcpy(s, x->shape, sizeof s);
  fz_node tmp = {.kind = FZ_CAT, .nin = 1, .in = {a}, .axis = chance(&g->r, 2) ? ax : ax - x->ndim};
  tkc_dtype dt = x->dt;
  for (int k = 0; k < n; k++) {
    s[ax] = fz_below(&g->r, 4);
    int b = chance(&g->r, 4) ? a : leaf_data(g, dt, x->ndim, s, vkind_for(g, dt));
    if (b < 0) return -1;
    tmp.in[tmp.nin++] = b;
  }
  fz_node *nd = push(g);
  *nd = tmp;
  return commit(g);
}

static int gen_index(gen *g, int a, fz_kind kind) {
  const fz_node *x = &g->p->node[a];
  if (x->ndim == 0) return -1;
  int ax = fz_below(&g->r, x->ndim);
  if (x->shape[ax] == 0) return -1;
  int64_t s[FZ_MAXDIM];
  int n = kind == FZ_GATHER ? x->ndim : 1 + fz_below(&g->r, 2);
  for (int i = 0; i < n; i++) s[i] = kind == FZ_GATHER && i != ax ? 1 + fz_below(&g->r, (int)x->shape[i] + (x->shape[i] == 0)) : 1 + fz_below(&g->r, 5);
  if (kind == FZ_GATHER)
    for (int i = 0; i < n; i++)
      if (i != ax && x->shape[i] == 0) s[i] = 0;
  if (g->p->n >= FZ_MAXNODES - 1) return -1;
  fz_node *ix = push(g);
  ix->kind = FZ_DATA;
  ix->dt = chance(&g->r, 3) ? TKC_INT8 : TKC_INT32;
  ix->np = n;
  memcpy(ix->p, s, sizeof(int64_t) * (size_t)n);
  ix->seed = (uint32_t)fz_next(&g->r);
  ix->vkind = chance(&g->r, 3) ? FZ_V_NEGINDEX : FZ_V_INDEX;
  ix->p[FZ_MAXP - 1] = x->shape[ax];
  int b = commit(g);
  if (b < 0) return -1;
  fz_node *nd = push(g);
  nd->kind = kind;
  nd->nin = 2, nd->in[0] = a, nd->in[1] = b;
  nd->axis = chance(&g->r, 2) ? ax : ax - x->ndim;
  return commit(g);
}

/* one op on the chain; -1 when the attempt gave nothing valid (nodes it added are dropped) */
static int gen_op(gen *g) {
  static const struct { fz_kind kind; int w; } kinds[] = {
      {FZ_UNARY, 18}, {FZ_BINARY, 24}, {FZ_WHERE, 4}, {FZ_CAST, 5}, {FZ_REDUCE, 12}, {FZ_RESHAPE, 5}, {FZ_PERMUTE, 5},
      {FZ_EXPAND, 4}, {FZ_PAD, 4}, {FZ_SHRINK, 4}, {FZ_FLIP, 3}, {FZ_CONTIG, 2}, {FZ_MATMUL, 4}, {FZ_SOFTMAX, 2},
      {FZ_LOGSOFTMAX, 2}, {FZ_CUMSUM, 2}, {FZ_CAT, 3}, {FZ_LAYERNORM, 2}, {FZ_GATHER, 2}, {FZ_INDEX_SELECT, 2},
  };
  int total = 0, nk = (int)(sizeof kinds / sizeof *kinds);
  for (int i = 0; i < nk; i++) total += kinds[i].w;
  int r = fz_below(&g->r, total), k = 0;
  while (r >= kinds[k].w) r -= kinds[k++].w;
  int a = pick_input(g), before = g->p->n, res;
  switch (kinds[k].kind) {
  case FZ_UNARY: res = gen_unary(g, a); break;
  case FZ_BINARY: res = gen_binary(g, a); break;
  case FZ_WHERE: res = gen_where(g, a); break;
  case FZ_CAST: res = gen_cast(g, a); break;
  case FZ_REDUCE: res = gen_reduce(g, a); break;
  case FZ_RESHAPE: res = gen_reshape(g, a); break;
  case FZ_PERMUTE: res = gen_permute(g, a); break;
  case FZ_EXPAND: res = gen_expand(g, a); break;
  case FZ_PAD: res = gen_pad_shrink(g, a, true); break;
  case FZ_SHRINK: res = gen_pad_shrink(g, a, false); break;
  case FZ_FLIP: res = gen_flip(g, a); break;
  case FZ_MATMUL: res = gen_matmul(g, a); break;
  case FZ_CAT: res = gen_cat(g, a); break;
  case FZ_GATHER: case FZ_INDEX_SELECT: res = gen_index(g, a, kinds[k].kind); break;
  default: res = gen_simple(g, a, kinds[k].kind); break;
  }
  if (res < 0) g->p->n = before;
  return res;
}

/* A final node that tkc must refuse: a valid op with one parameter or operand broken. */
static void gen_invalid(gen *g) {
  for (int tries = 0; tries < 50 && g->p->n < FZ_MAXNODES - 2; tries++) {
    int before = g->p->n, a = g->cur;
    const fz_node *x = &g->p->node[a];
    fz_node *nd = push(g);
    nd->nin = 1, nd->in[0] = a, nd->expect_fail = 1;
    switch (fz_below(&g->r, 8)) {
    case 0: { /* shapes that do not broadcast */
      int64_t s[FZ_MAXDIM];
      for (int i = 0; i < x->ndim; i++) s[i] = x->shape[i] + 1 + (x->shape[i] == 0);
      int b = leaf_data(g, x->dt, x->ndim, s, FZ_V_SIGNED);
      if (b < 0) break;
      nd = &g->p->node[g->p->n];
      memset(nd, 0, sizeof *nd);
      nd->kind = FZ_BINARY, nd->op = FZ_ADD, nd->nin = 2, nd->in[0] = a, nd->in[1] = b, nd->expect_fail = 1;
      break;
    }
    case 1: nd->kind = FZ_RESHAPE, nd->np = 1, nd->p[0] = fz_numel(x->ndim, x->shape) + 1; break;
    case 2: nd->kind = FZ_PERMUTE, nd->np = x->ndim; for (int i = 0; i < x->ndim; i++) nd->p[i] = 0; break;
    case 3: nd->kind = FZ_REDUCE, nd->op = fz_below(&g->r, FZ_NREDOPS), nd->np = 1, nd->p[0] = x->ndim + fz_below(&g->r, 3); break;
    case 4: nd->kind = FZ_SHRINK, nd->np = 2 * x->ndim; for (int i = 0; i < x->ndim; i++) nd->p[2 * i + 1] = x->shape[i] + 1; break;
    case 5: nd->kind = FZ_PAD, nd->np = 2 * x->ndim; for (int i = 0; i < x->ndim; i++) nd->p[2 * i] = -1; break;
    case 6: nd->kind = FZ_EXPAND, nd->np = x->ndim; for (int i = 0; i < x->ndim; i++) nd->p[i] = x->shape[i] + 2; break;
    default: nd->kind = FZ_SOFTMAX, nd->axis = x->ndim + 1; break;
    }
    if (fz_infer(g->p, g->p->n) != 0) { /* really invalid: keep it */
      g->p->n++;
      return;
    }
    g->p->n = before;
  }
}

/* every op node nothing reads is observed (otherwise it would never run) */
static void observe_sinks(fz_prog *p) {
  bool used[FZ_MAXNODES] = {0};
  for (int i = 0; i < p->n; i++)
    for (int k = 0; k < p->node[i].nin; k++) used[p->node[i].in[k]] = true;
  for (int i = 0; i < p->n; i++)
    if (!used[i] && p->node[i].nin > 0) p->node[i].observe = 1;
  p->node[p->n - 1].observe = 1;
}

void fz_generate(fz_prog *p, uint64_t seed, const char *const *dtypes_allowed) {
  static const tkc_dtype all[] = {TKC_FLOAT32, TKC_INT32, TKC_INT8, TKC_UINT8, TKC_BOOL, TKC_FLOAT16, TKC_FLOAT64, TKC_INT64};
  tkc_dtype dts[8];
  int ndts = 0;
  for (int i = 0; i < 8; i++) {
    bool ok = !dtypes_allowed;
    for (int k = 0; dtypes_allowed && dtypes_allowed[k]; k++) ok |= !strcmp(dtypes_allowed[k], tkc_dtype_name(all[i]));
    if (ok) dts[ndts++] = all[i];
  }
  memset(p, 0, sizeof *p);
  p->seed = seed;
  gen g = {.r = {seed * 0x2545f4914f6cdd1dull + 1}, .p = p, .dts = dts, .ndts = ndts};
  g.main_dt = chance(&g.r, 2) ? dts[0] : dts[fz_below(&g.r, ndts)];
  int ndim;
  int64_t shape[FZ_MAXDIM];
  random_shape(&g, &ndim, shape);
  bool big = chance(&g.r, 12); /* a big leaf, reduced first: the split reduce (>= 32768 elements) */
  if (big) {
    static const int64_t sizes[][2] = {{1, 32768}, {1, 40000}, {1, 65536}, {8, 4096}, {256, 256}, {3, 12000}, {48, 1024}};
    const int64_t *sz = sizes[fz_below(&g.r, 7)];
    ndim = sz[0] == 1 ? 1 : 2;
    shape[0] = sz[0] == 1 ? sz[1] : sz[0], shape[1] = sz[1];
  }
  g.cur = big ? leaf_data(&g, g.main_dt, ndim, shape, vkind_for(&g, g.main_dt)) : leaf(&g, ndim, shape);
  if (g.cur < 0) g.cur = leaf_data(&g, g.main_dt, 0, shape, FZ_V_SIGNED);
  for (int tries = 0; big && tries < 10; tries++) {
    int r = gen_reduce(&g, g.cur);
    if (r >= 0) {
      g.cur = r;
      p->node[r].observe = chance(&g.r, 2);
      break;
    }
  }
  int nops = 1 + fz_below(&g.r, 8), done = 0;
  for (int tries = 0; done < nops && tries < 60 && p->n < FZ_MAXNODES - 6; tries++) {
    int r = gen_op(&g);
    if (r < 0) continue;
    g.cur = r;
    done++;
    fz_node *nd = &p->node[r];
    nd->realize = chance(&g.r, 7);
    nd->observe = chance(&g.r, 6);
  }
  observe_sinks(p);
  if (chance(&g.r, 10)) gen_invalid(&g);
}

/* ---------------------------------------------------------------- compaction */

void fz_compact(fz_prog *p) {
  bool live[FZ_MAXNODES] = {0};
  for (int i = p->n - 1; i >= 0; i--) {
    if (p->node[i].observe || p->node[i].expect_fail) live[i] = true;
    if (live[i])
      for (int k = 0; k < p->node[i].nin; k++) live[p->node[i].in[k]] = true;
  }
  int map[FZ_MAXNODES], n = 0;
  for (int i = 0; i < p->n; i++) {
    if (!live[i]) continue;
    map[i] = n;
    p->node[n] = p->node[i];
    for (int k = 0; k < p->node[n].nin; k++) p->node[n].in[k] = map[p->node[n].in[k]];
    n++;
  }
  p->n = n;
}

/* ---------------------------------------------------------------- printing as C */

static const char *dt_enum(tkc_dtype dt) {
  static char buf[TKC_NDTYPES][24];
  const char *n = tkc_dtype_name(dt);
  char *b = buf[dt];
  int k = snprintf(b, 24, "TKC_");
  for (int i = 0; n[i] && k < 23; i++) b[k++] = (char)(n[i] >= 'a' && n[i] <= 'z' ? n[i] - 32 : n[i]);
  b[k] = 0;
  return b;
}

static const char *c_type(tkc_dtype dt) {
  switch (dt) {
  case TKC_BOOL: return "bool";
  case TKC_INT8: return "int8_t";
  case TKC_UINT8: return "uint8_t";
  case TKC_INT16: return "int16_t";
  case TKC_UINT16: return "uint16_t";
  case TKC_INT32: return "int32_t";
  case TKC_UINT32: return "uint32_t";
  case TKC_INT64: return "int64_t";
  case TKC_UINT64: return "uint64_t";
  case TKC_FLOAT16: case TKC_BFLOAT16: return "uint16_t";
  case TKC_FLOAT64: return "double";
  default: return "float";
  }
}

static void print_i64s(FILE *f, const int64_t *v, int n) {
  fprintf(f, "(const int64_t[]){");
  for (int i = 0; i < n; i++) fprintf(f, i ? ", %" PRId64 : "%" PRId64, v[i]);
  fprintf(f, n ? "}" : "0}");
}

static void print_ints(FILE *f, const int64_t *v, int n) {
  if (!n) {
    fprintf(f, "NULL");
    return;
  }
  fprintf(f, "(const int[]){");
  for (int i = 0; i < n; i++) fprintf(f, i ? ", %d" : "%d", (int)v[i]);
  fprintf(f, "}");
}

static void print_data(FILE *f, const fz_node *nd, int i) {
  int64_t n = fz_numel(nd->ndim, nd->shape);
  fprintf(f, "  static const %s d%d[%" PRId64 "] = {", c_type(nd->dt), i, n ? n : 1);
  for (int64_t k = 0; k < n; k++) {
    double v = fz_leaf_value(nd, k);
    if (k % 16 == 0 && n > 16) fprintf(f, "\n     ");
    if (nd->dt == TKC_FLOAT16) fprintf(f, "0x%04x", tkc_f32_to_f16((float)v));
    else if (nd->dt == TKC_BFLOAT16) fprintf(f, "0x%04x", tkc_f32_to_bf16((float)v));
    else if (isnan(v)) fprintf(f, "NAN");
    else if (isinf(v)) fprintf(f, v < 0 ? "-INFINITY" : "INFINITY");
    else if (is_float(nd->dt)) fprintf(f, v == 0 && signbit(v) ? "-0.0" : "%.9g", v);
    else fprintf(f, "%.0f", v);
    if (k + 1 < n) fprintf(f, ", ");
  }
  fprintf(f, n ? "};%s\n" : "0};%s\n", nd->dt == TKC_FLOAT16 ? " /* float16 bits */" : "");
  fprintf(f, "  tkc_tensor *t%d = tkc_tensor_new(ctx, %s, %d, ", i, dt_enum(nd->dt), nd->ndim);
  print_i64s(f, nd->shape, nd->ndim);
  fprintf(f, ", d%d);\n", i);
}

static void print_node(FILE *f, const fz_prog *p, int i) {
  const fz_node *nd = &p->node[i];
  int a = nd->in[0], b = nd->in[1];
  switch (nd->kind) {
  case FZ_DATA: print_data(f, nd, i); return;
  case FZ_FULL:
    fprintf(f, "  tkc_tensor *t%d = tkc_full(ctx, %s, %d, ", i, dt_enum(nd->dt), nd->ndim);
    print_i64s(f, nd->shape, nd->ndim);
    fprintf(f, ", %.17g);\n", nd->value);
    return;
  case FZ_SCALAR: fprintf(f, "  tkc_tensor *t%d = tkc_scalar(ctx, %s, %.17g);\n", i, dt_enum(nd->dt), nd->value); return;
  case FZ_ARANGE:
    fprintf(f, "  tkc_tensor *t%d = tkc_arange(ctx, %s, %.17g, %.17g, %" PRId64 ");\n", i, dt_enum(nd->dt), nd->value,
            nd->value + (double)(nd->p[0] * nd->p[1]), nd->p[1]);
    return;
  default: break;
  }
  fprintf(f, "  tkc_tensor *t%d = ", i);
  switch (nd->kind) {
  case FZ_UNARY: fprintf(f, "tkc_%s(t%d);\n", unop_names[nd->op], a); break;
  case FZ_BINARY: fprintf(f, "tkc_%s(t%d, t%d);\n", binop_names[nd->op], a, b); break;
  case FZ_WHERE: fprintf(f, "tkc_where(t%d, t%d, t%d);\n", a, b, nd->in[2]); break;
  case FZ_CAST: fprintf(f, "tkc_cast(t%d, %s);\n", a, dt_enum(nd->cast_to)); break;
  case FZ_REDUCE:
    fprintf(f, "tkc_%s(t%d, %d, ", redop_names[nd->op], a, nd->np);
    print_ints(f, nd->p, nd->np);
    fprintf(f, ", %d);\n", nd->keepdim);
    break;
  case FZ_RESHAPE: case FZ_EXPAND:
    fprintf(f, "tkc_%s(t%d, %d, ", nd->kind == FZ_RESHAPE ? "reshape" : "expand", a, nd->np);
    print_i64s(f, nd->p, nd->np);
    fprintf(f, ");\n");
    break;
  case FZ_PERMUTE:
    fprintf(f, "tkc_permute(t%d, ", a);
    print_ints(f, nd->p, nd->np);
    fprintf(f, ");\n");
    break;
  case FZ_TRANSPOSE: fprintf(f, "tkc_transpose(t%d, %d, %d);\n", a, (int)nd->p[0], (int)nd->p[1]); break;
  case FZ_PAD:
    fprintf(f, "tkc_pad(t%d, ", a);
    print_i64s(f, nd->p, nd->np);
    fprintf(f, ", %.17g);\n", nd->value);
    break;
  case FZ_SHRINK:
    fprintf(f, "tkc_shrink(t%d, ", a);
    print_i64s(f, nd->p, nd->np);
    fprintf(f, ");\n");
    break;
  case FZ_FLIP:
    fprintf(f, "tkc_flip(t%d, %d, ", a, nd->np);
    print_ints(f, nd->p, nd->np);
    fprintf(f, ");\n");
    break;
  case FZ_CONTIG: fprintf(f, "tkc_contiguous(t%d);\n", a); break;
  case FZ_MATMUL: fprintf(f, "tkc_matmul(t%d, t%d);\n", a, b); break;
  case FZ_SOFTMAX: fprintf(f, "tkc_softmax(t%d, %d);\n", a, nd->axis); break;
  case FZ_LOGSOFTMAX: fprintf(f, "tkc_log_softmax(t%d, %d);\n", a, nd->axis); break;
  case FZ_CUMSUM: fprintf(f, "tkc_cumsum(t%d, %d);\n", a, nd->axis); break;
  case FZ_CAT:
    fprintf(f, "tkc_cat(%d, (tkc_tensor *[]){", nd->nin);
    for (int k = 0; k < nd->nin; k++) fprintf(f, k ? ", t%d" : "t%d", nd->in[k]);
    fprintf(f, "}, %d);\n", nd->axis);
    break;
  case FZ_LAYERNORM: fprintf(f, "tkc_layer_norm(t%d, %d, NULL, NULL, 1e-5);\n", a, (int)nd->p[0]); break;
  case FZ_GATHER: fprintf(f, "tkc_gather(t%d, %d, t%d);\n", a, nd->axis, b); break;
  case FZ_INDEX_SELECT: fprintf(f, "tkc_index_select(t%d, %d, t%d);\n", a, nd->axis, b); break;
  default: fprintf(f, "NULL; /* ? */\n"); break;
  }
}

void fz_print_c(const fz_prog *p, const char *device, FILE *f) {
  fprintf(f, "  tkc_ctx *ctx = tkc_ctx_new(\"%s\");\n", device);
  for (int i = 0; i < p->n; i++) {
    const fz_node *nd = &p->node[i];
    print_node(f, p, i);
    if (nd->expect_fail) fprintf(f, "  /* t%d must be NULL with an error: %s */\n", i, "tkc_last_error()");
    if (nd->realize) fprintf(f, "  tkc_realize(t%d);\n", i);
    if (nd->observe && !nd->expect_fail) {
      int64_t n = fz_numel(nd->ndim, nd->shape);
      char s[128];
      fz_shape_str(nd, s, sizeof s);
      fprintf(f, "  %s out%d[%" PRId64 "]; /* %s */\n", c_type(nd->dt), i, n ? n : 1, s);
      if (n) fprintf(f, "  tkc_copy_out(t%d, out%d, sizeof out%d);\n", i, i, i);
      else fprintf(f, "  tkc_copy_out(t%d, out%d, 0); /* empty */\n", i, i);
    }
  }
  fprintf(f, "  tkc_ctx_free(ctx);\n");
}
