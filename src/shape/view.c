/* Views and shapetrackers: movement ops as index arithmetic (tinygrad's View / ShapeTracker).
 * A movement op changes the last view when it can be expressed there, else stacks a new view. */
#include <stdlib.h>
#include <string.h>
#include "shape/shape.h"

static void canonical_strides(int ndim, const int64_t *shape, int64_t *strides) {
  int64_t acc = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    strides[i] = shape[i] == 1 ? 0 : acc;
    acc *= shape[i];
  }
}

static void view_contiguous(tkc_view *v, int ndim, const int64_t *shape) {
  memset(v, 0, sizeof *v);
  v->ndim = ndim;
  if (ndim > 0 && ndim <= TKC_MAX_DIMS) memcpy(v->shape, shape, (size_t)ndim * sizeof *shape);
  canonical_strides(ndim, shape, v->strides);
}

/* ---------------------------------------------------------------- variable terms */

/* adds dk * var to the term (*var, *k); -1 when the term is of another variable already */
static int term_add(int8_t *var, int64_t *k, int slot, int64_t dk) {
  if (!slot || !dk) return 0;
  if (*var && *var != slot) return -1;
  *var = (int8_t)slot;
  *k += dk;
  if (!*k) *var = 0;
  return 0;
}

static int dim_has_var(const tkc_view *v, int i) { return v->has_mask && (v->mask_begin_var[i] || v->mask_end_var[i]); }

int tkc_st_var_slot(tkc_st *st, const tkc_svar *v) {
  for (int i = 0; i < st->nvars; i++)
    if (!strcmp(st->vars[i].name, v->name)) return i + 1;
  if (st->nvars == TKC_ST_VARS) return tkc_err(TKC_EUNSUPPORTED, "a view depends on more than %d variables", TKC_ST_VARS), 0;
  st->vars[st->nvars++] = *v;
  return st->nvars;
}

static tkc_status two_vars(void) { return tkc_err(TKC_EUNSUPPORTED, "a view offset or mask bound would depend on two variables"); }

static int view_is_contiguous(const tkc_view *v) {
  if (v->offset || v->has_mask || v->offset_var) return 0;
  int64_t s[TKC_MAX_DIMS];
  canonical_strides(v->ndim, v->shape, s);
  for (int i = 0; i < v->ndim; i++)
    if (v->shape[i] != 1 && v->strides[i] != s[i]) return 0;
  return 1;
}

void tkc_st_contiguous(tkc_st *st, int ndim, const int64_t *shape) {
  st->nviews = 1;
  st->nvars = 0;
  view_contiguous(&st->views[0], ndim, shape);
}

static tkc_view *last(tkc_st *st) { return &st->views[st->nviews - 1]; }
const int64_t *tkc_st_shape(const tkc_st *st) { return st->views[st->nviews - 1].shape; }
int tkc_st_ndim(const tkc_st *st) { return st->views[st->nviews - 1].ndim; }
int tkc_st_is_contiguous(const tkc_st *st) { return st->nviews == 1 && view_is_contiguous(&st->views[0]); }

/* Stacks a contiguous view of the given shape on top (the index space is re-read row-major). A full
 * stack refuses quietly (no error set, st unchanged): its caller realizes the value so far. */
static tkc_status push_view(tkc_st *st, int ndim, const int64_t *shape) {
  if (st->nviews == TKC_MAX_VIEWS) return TKC_ESHAPE;
  view_contiguous(&st->views[st->nviews++], ndim, shape);
  return TKC_OK;
}

/* Stacks a view of the last view's own shape: later moves then start from a plain index space. */
static tkc_status push_same(tkc_st *st) {
  int64_t shape[TKC_MAX_DIMS];
  memcpy(shape, last(st)->shape, sizeof shape);
  return push_view(st, last(st)->ndim, shape);
}

static int64_t numel(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  return n;
}

/* Reshape of a maskless view by merging/splitting strides (numpy's no-copy reshape); 0 if impossible. */
static int reshape_strides(const tkc_view *v, int ndim, const int64_t *shape, int64_t *out) {
  int64_t os[TKC_MAX_DIMS], ost[TKC_MAX_DIMS];
  int on = 0;
  for (int i = 0; i < v->ndim; i++)
    if (v->shape[i] != 1) { os[on] = v->shape[i]; ost[on++] = v->strides[i]; }
  int nidx[TKC_MAX_DIMS], nn = 0;
  for (int i = 0; i < ndim; i++) {
    out[i] = 0;
    if (shape[i] != 1) nidx[nn++] = i;
  }
  int oi = 0, ni = 0;
  while (oi < on && ni < nn) {
    int64_t op = os[oi], np = shape[nidx[ni]];
    int oj = oi + 1, nj = ni + 1;
    while (op != np) {
      if (np < op) { if (nj >= nn) return 0; np *= shape[nidx[nj++]]; }
      else { if (oj >= on) return 0; op *= os[oj++]; }
    }
    for (int k = oi; k < oj - 1; k++)
      if (ost[k] != ost[k + 1] * os[k + 1]) return 0; /* the old dims of the group must be one block */
    int64_t s = ost[oj - 1];
    for (int k = nj - 1; k >= ni; k--) {
      out[nidx[k]] = s;
      s *= shape[nidx[k]];
    }
    oi = oj;
    ni = nj;
  }
  return oi == on && ni == nn;
}

tkc_status tkc_st_reshape(tkc_st *st, int ndim, const int64_t *shape) {
  tkc_view *v = last(st);
  if (view_is_contiguous(v) || numel(ndim, shape) == 0) {
    if (numel(ndim, shape) == 0 && !view_is_contiguous(v)) return push_view(st, ndim, shape);
    view_contiguous(v, ndim, shape);
    return TKC_OK;
  }
  int64_t strides[TKC_MAX_DIMS];
  if (!v->has_mask && reshape_strides(v, ndim, shape, strides)) {
    v->ndim = ndim;
    memcpy(v->shape, shape, (size_t)ndim * sizeof *shape);
    memcpy(v->strides, strides, sizeof strides);
    return TKC_OK;
  }
  /* only size-1 dims added/removed: keep strides and masks of the others */
  int oi = 0, ok = 1;
  tkc_view nv = *v;
  nv.ndim = ndim;
  for (int i = 0; i < ndim && ok; i++) {
    nv.shape[i] = shape[i];
    if (shape[i] == 1) {
      nv.strides[i] = 0;
      nv.mask_begin[i] = 0;
      nv.mask_end[i] = 1;
      nv.mask_begin_var[i] = nv.mask_end_var[i] = 0;
      nv.mask_begin_k[i] = nv.mask_end_k[i] = 0;
      continue;
    }
    while (oi < v->ndim && v->shape[oi] == 1) {
      if (v->has_mask && (v->mask_begin[oi] >= v->mask_end[oi] || dim_has_var(v, oi))) ok = 0; /* dropping an empty dim loses its mask */
      oi++;
    }
    if (oi >= v->ndim || v->shape[oi] != shape[i]) { ok = 0; break; }
    nv.strides[i] = v->strides[oi];
    nv.mask_begin[i] = v->mask_begin[oi];
    nv.mask_end[i] = v->mask_end[oi];
    nv.mask_begin_var[i] = v->mask_begin_var[oi], nv.mask_end_var[i] = v->mask_end_var[oi];
    nv.mask_begin_k[i] = v->mask_begin_k[oi], nv.mask_end_k[i] = v->mask_end_k[oi];
    oi++;
  }
  for (; ok && oi < v->ndim; oi++)
    if (v->shape[oi] != 1 || (v->has_mask && (v->mask_begin[oi] >= v->mask_end[oi] || dim_has_var(v, oi)))) ok = 0;
  if (ok) {
    *v = nv;
    return TKC_OK;
  }
  return push_view(st, ndim, shape);
}

tkc_status tkc_st_permute(tkc_st *st, const int *order) {
  tkc_view *v = last(st), old = *v;
  for (int i = 0; i < v->ndim; i++) {
    v->shape[i] = old.shape[order[i]];
    v->strides[i] = old.strides[order[i]];
    v->mask_begin[i] = old.mask_begin[order[i]];
    v->mask_end[i] = old.mask_end[order[i]];
    v->mask_begin_var[i] = old.mask_begin_var[order[i]], v->mask_end_var[i] = old.mask_end_var[order[i]];
    v->mask_begin_k[i] = old.mask_begin_k[order[i]], v->mask_end_k[i] = old.mask_end_k[order[i]];
  }
  return TKC_OK;
}

tkc_status tkc_st_expand(tkc_st *st, const int64_t *shape) {
  tkc_view *v = last(st);
  for (int i = 0; i < v->ndim; i++)
    if (v->shape[i] != shape[i] && dim_has_var(v, i)) { /* whether the one index is valid depends on a variable: */
      tkc_status s = push_same(st);                      /* the view below keeps asking (at index 0) */
      if (s) return s;
      v = last(st);
      break;
    }
  for (int i = 0; i < v->ndim; i++) {
    if (v->shape[i] == shape[i]) continue;
    v->strides[i] = 0;
    if (v->has_mask && v->mask_end[i] > v->mask_begin[i]) v->mask_end[i] = shape[i];
    v->shape[i] = shape[i];
  }
  return TKC_OK;
}

static void ensure_mask(tkc_view *v) {
  if (v->has_mask) return;
  v->has_mask = 1;
  for (int i = 0; i < v->ndim; i++) {
    v->mask_begin[i] = 0;
    v->mask_end[i] = v->shape[i];
  }
}

static int dim_mask_trivial(const tkc_view *v, int i) {
  return !v->has_mask || (v->mask_begin[i] == 0 && v->mask_end[i] == v->shape[i] && !dim_has_var(v, i));
}

static void drop_trivial_mask(tkc_view *v) {
  for (int i = 0; i < v->ndim; i++)
    if (!dim_mask_trivial(v, i)) return;
  v->has_mask = 0;
}

static const tkc_sdim no_sym = {0, 0};

/* A pad after a variable-length dim starts where the variable ends, which the view (laid out at
 * the largest value) must be told: its mask there ends at the variable. */
static int ends_at_var(const tkc_sdim *sym, int i, const int64_t *pads) {
  return sym && sym[3 * i + 2].var && (pads[2 * i + 1] != 0 || sym[3 * i + 1].var);
}

tkc_status tkc_st_pad(tkc_st *st, const int64_t *pads, const tkc_sdim *sym) {
  tkc_view *v = last(st);
  for (int i = 0; i < v->ndim; i++)
    if (ends_at_var(sym, i, pads) && !dim_mask_trivial(v, i)) { /* a mask already there: cut the variable's end in a view of its own */
      tkc_status s = push_same(st);
      if (s) return s;
      v = last(st);
      break;
    }
  ensure_mask(v);
  for (int i = 0; i < v->ndim; i++) {
    int64_t b = pads[2 * i], a = pads[2 * i + 1];
    const tkc_sdim *sb = sym ? &sym[3 * i] : &no_sym;
    if (ends_at_var(sym, i, pads)) {
      v->mask_end[i] = sym[3 * i + 2].c;
      v->mask_end_var[i] = (int8_t)sym[3 * i + 2].var, v->mask_end_k[i] = 1;
    }
    int64_t bc = sb->var ? sb->c : b; /* the constant part of the before-pad */
    v->offset -= bc * v->strides[i];
    v->mask_begin[i] += bc;
    v->mask_end[i] += bc;
    if (term_add(&v->offset_var, &v->offset_k, sb->var, -v->strides[i]) || term_add(&v->mask_begin_var[i], &v->mask_begin_k[i], sb->var, 1) ||
        term_add(&v->mask_end_var[i], &v->mask_end_k[i], sb->var, 1))
      return two_vars();
    v->shape[i] += b + a;
  }
  drop_trivial_mask(v);
  return TKC_OK;
}

tkc_status tkc_st_shrink(tkc_st *st, const int64_t *ranges, const tkc_sdim *sym) {
  tkc_view *v = last(st);
  for (int i = 0; i < v->ndim; i++) {
    int64_t b = ranges[2 * i], e = ranges[2 * i + 1];
    const tkc_sdim *sb = sym ? &sym[2 * i] : &no_sym;
    int64_t bc = sb->var ? sb->c : b;
    v->offset += bc * v->strides[i];
    if (term_add(&v->offset_var, &v->offset_k, sb->var, v->strides[i])) return two_vars();
    if (v->has_mask && (sb->var || dim_has_var(v, i))) { /* no clamping: the index never leaves [0, e - b) anyway */
      v->mask_begin[i] -= bc, v->mask_end[i] -= bc;
      if (term_add(&v->mask_begin_var[i], &v->mask_begin_k[i], sb->var, -1) || term_add(&v->mask_end_var[i], &v->mask_end_k[i], sb->var, -1))
        return two_vars();
    } else if (v->has_mask) {
      int64_t mb = v->mask_begin[i] - b, me = v->mask_end[i] - b;
      v->mask_begin[i] = mb < 0 ? 0 : mb;
      v->mask_end[i] = me > e - b ? e - b : me;
      if (v->mask_end[i] < v->mask_begin[i]) v->mask_end[i] = v->mask_begin[i];
    }
    v->shape[i] = e - b;
  }
  if (v->has_mask) drop_trivial_mask(v);
  return TKC_OK;
}

tkc_status tkc_st_flip(tkc_st *st, const int *flip) {
  tkc_view *v = last(st);
  for (int i = 0; i < v->ndim; i++) {
    if (!flip[i] || v->shape[i] == 0) continue;
    v->offset += (v->shape[i] - 1) * v->strides[i];
    v->strides[i] = -v->strides[i];
    if (v->has_mask) { /* [b, e) becomes [n - e, n - b), variable terms negated */
      int64_t mb = v->mask_begin[i], kb = v->mask_begin_k[i];
      int8_t vb = v->mask_begin_var[i];
      v->mask_begin[i] = v->shape[i] - v->mask_end[i];
      v->mask_end[i] = v->shape[i] - mb;
      v->mask_begin_var[i] = v->mask_end_var[i], v->mask_begin_k[i] = -v->mask_end_k[i];
      v->mask_end_var[i] = vb, v->mask_end_k[i] = -kb;
    }
  }
  return TKC_OK;
}

tkc_status tkc_st_window(tkc_st *st, int64_t kh, int64_t kw, int64_t stride) {
  tkc_view *v = last(st);
  if (v->ndim < 2 || v->ndim + 2 > TKC_MAX_DIMS) return tkc_err(TKC_ESHAPE, "window needs 2..%d dims", TKC_MAX_DIMS - 2);
  if (v->has_mask) { /* windows cross masked areas: read the padded index space row-major */
    tkc_status s = push_same(st);
    if (s) return s;
    v = last(st);
  }
  int n = v->ndim;
  int64_t h = v->shape[n - 2], w = v->shape[n - 1], sh = v->strides[n - 2], sw = v->strides[n - 1];
  if (h == 1) sh = 0; /* canonical strides leave size-1 dims at 0; a window never steps past them */
  if (w == 1) sw = 0;
  int64_t oh = (h - kh) / stride + 1, ow = (w - kw) / stride + 1;
  v->ndim = n + 2;
  v->shape[n - 2] = oh;
  v->shape[n - 1] = ow;
  v->shape[n] = kh;
  v->shape[n + 1] = kw;
  v->strides[n - 2] = sh * stride;
  v->strides[n - 1] = sw * stride;
  v->strides[n] = sh;
  v->strides[n + 1] = sw;
  return TKC_OK;
}

/* ---------------------------------------------------------------- index expressions */

/* index constants in the index dtype of the expression (int32, or int64 in kernels that need it) */
static _Thread_local tkc_dtype idx_dtype = TKC_INT32;
static tkc_uop *ci(tkc_graph *g, int64_t v) { return tkc_uop_const_int(g, tkc_dt_of(idx_dtype), v); }

static tkc_uop *and_valid(tkc_graph *g, tkc_uop *a, tkc_uop *b) { return !a ? b : !b ? a : tkc_uop_alu2(g, TKC_OP_AND, a, b); }

/* c + k * var: the kernel reads the variable as a DEFINE_VAR parameter */
static tkc_uop *sym_expr(const tkc_st *st, tkc_graph *g, int64_t c, int var, int64_t k) {
  if (!var) return ci(g, c);
  const tkc_svar *sv = &st->vars[var - 1];
  tkc_uop *x = tkc_uop_var(g, sv->name, sv->vmin, sv->vmax);
  if (x && idx_dtype != TKC_INT32) x = tkc_uop_cast(g, x, tkc_dt_of(idx_dtype));
  if (k != 1) x = tkc_uop_alu2(g, TKC_OP_MUL, x, ci(g, k));
  return c ? tkc_uop_alu2(g, TKC_OP_ADD, x, ci(g, c)) : x;
}

/* offset + sum(idx*stride) and the mask of one view */
static void view_expr(const tkc_st *st, const tkc_view *v, tkc_graph *g, tkc_uop *const *idxs, tkc_uop **index, tkc_uop **valid) {
  tkc_uop *acc = sym_expr(st, g, v->offset, v->offset_var, v->offset_k);
  tkc_uop *ok = NULL;
  for (int i = 0; i < v->ndim; i++) {
    if (v->shape[i] != 1 && v->strides[i] != 0)
      acc = tkc_uop_alu2(g, TKC_OP_ADD, acc, tkc_uop_alu2(g, TKC_OP_MUL, idxs[i], ci(g, v->strides[i])));
    if (!v->has_mask) continue;
    int64_t b = v->mask_begin[i], e = v->mask_end[i];
    int8_t vb = v->mask_begin_var[i], ve = v->mask_end_var[i];
    if (vb == ve && v->mask_begin_k[i] == v->mask_end_k[i] && b >= e) { ok = tkc_uop_const_int(g, tkc_dt_of(TKC_BOOL), 0); continue; }
    if (b > 0 || vb) /* !(idx < b), written as tinygrad writes it */
      ok = and_valid(g, ok, tkc_uop_alu2(g, TKC_OP_CMPNE, tkc_uop_alu2(g, TKC_OP_CMPLT, idxs[i], sym_expr(st, g, b, vb, v->mask_begin_k[i])),
                                         tkc_uop_const_int(g, tkc_dt_of(TKC_BOOL), 1)));
    if (e < v->shape[i] || ve) ok = and_valid(g, ok, tkc_uop_alu2(g, TKC_OP_CMPLT, idxs[i], sym_expr(st, g, e, ve, v->mask_end_k[i])));
  }
  *index = acc;
  *valid = ok;
}

tkc_status tkc_st_expr(const tkc_st *st, tkc_graph *g, tkc_uop *const *idxs, tkc_uop **index, tkc_uop **valid) {
  tkc_uop *idx, *ok;
  int nd = st->views[st->nviews - 1].ndim;
  idx_dtype = nd > 0 && idxs[0] && idxs[0]->dtype.scalar == TKC_INT64 ? TKC_INT64 : TKC_INT32;
  view_expr(st, &st->views[st->nviews - 1], g, idxs, &idx, &ok);
  for (int k = st->nviews - 2; k >= 0; k--) { /* unravel the flat index into the inner view's shape */
    const tkc_view *v = &st->views[k];
    tkc_uop *sub[TKC_MAX_DIMS], *vidx, *vok;
    int64_t acc = 1;
    for (int i = v->ndim - 1; i >= 0; i--) {
      tkc_uop *q = acc == 1 ? idx : tkc_uop_alu2(g, TKC_OP_IDIV, idx, ci(g, acc));
      sub[i] = i == 0 ? q : tkc_uop_alu2(g, TKC_OP_MOD, q, ci(g, v->shape[i]));
      acc *= v->shape[i];
    }
    view_expr(st, v, g, sub, &vidx, &vok);
    idx = vidx;
    ok = and_valid(g, ok, vok);
  }
  *index = idx;
  *valid = ok;
  idx_dtype = TKC_INT32;
  return idx ? TKC_OK : tkc_last_status();
}

/* The largest element offset st can reach (masks ignored) and the element count of its inner views,
 * for choosing the index width: past INT32_MAX the kernel indexes in int64. Saturates at INT64_MAX. */
int64_t tkc_st_max_index(const tkc_st *st) {
  int64_t worst = 0;
  for (int k = 0; k < st->nviews; k++) {
    const tkc_view *v = &st->views[k];
    __int128 off = v->offset, hi = off < 0 ? -off : off, n = 1;
    if (v->offset_var) { /* the worse end of the variable's range */
      const tkc_svar *sv = &st->vars[v->offset_var - 1];
      __int128 lo_end = off + (__int128)v->offset_k * sv->vmin, hi_end = off + (__int128)v->offset_k * sv->vmax;
      if (lo_end < 0) lo_end = -lo_end;
      if (hi_end < 0) hi_end = -hi_end;
      hi = lo_end > hi_end ? lo_end : hi_end;
    }
    for (int i = 0; i < v->ndim; i++) {
      int64_t st_i = v->strides[i] < 0 ? -v->strides[i] : v->strides[i];
      if (v->shape[i] > 0) hi += (__int128)(v->shape[i] - 1) * st_i;
      n *= v->shape[i] > 0 ? v->shape[i] : 1;
      if (n > INT64_MAX) n = INT64_MAX;
    }
    if (k < st->nviews - 1 && n > hi) hi = n; /* an inner view unravels a flat index below its count; the
                                              * outer one (the kernel's) is indexed by its strides only */
    if (hi > INT64_MAX) return INT64_MAX;
    if ((int64_t)hi > worst) worst = (int64_t)hi;
  }
  return worst;
}

/* ---------------------------------------------------------------- as UOp args */

/* per view: (shape, strides, offset, mask or none, variable terms or none); a term is
 * (where: 0 offset, 1 mask begin, 2 mask end; dim; k; the variable's name, min, max) */
#define ARGS_PER_TERM 7
#define ARGS_PER_VIEW (5 + 4 * TKC_MAX_DIMS + (1 + ARGS_PER_TERM) * (1 + 2 * TKC_MAX_DIMS))

static tkc_arg *term_arg(tkc_arg *t, const tkc_st *st, int where, int dim, int var, int64_t k) {
  const tkc_svar *sv = &st->vars[var - 1];
  tkc_arg *f = t + 1;
  f[0] = tkc_arg_int(where), f[1] = tkc_arg_int(dim), f[2] = tkc_arg_int(k);
  f[3] = tkc_arg_str(sv->name), f[4] = tkc_arg_int(sv->vmin), f[5] = tkc_arg_int(sv->vmax);
  *t = tkc_arg_tuple(f, 6);
  return t + ARGS_PER_TERM;
}

/* the variable terms of v as a tuple at s (list: room for the term tuples), or none */
static tkc_arg terms_arg(const tkc_st *st, const tkc_view *v, tkc_arg *list, tkc_arg *s) {
  uint32_t n = 0;
  if (v->offset_var) s = term_arg(s, st, 0, 0, v->offset_var, v->offset_k), list[n++] = s[-ARGS_PER_TERM];
  for (int i = 0; v->has_mask && i < v->ndim; i++) {
    if (v->mask_begin_var[i]) s = term_arg(s, st, 1, i, v->mask_begin_var[i], v->mask_begin_k[i]), list[n++] = s[-ARGS_PER_TERM];
    if (v->mask_end_var[i]) s = term_arg(s, st, 2, i, v->mask_end_var[i], v->mask_end_k[i]), list[n++] = s[-ARGS_PER_TERM];
  }
  return n ? tkc_arg_tuple(list, n) : tkc_arg_none();
}

tkc_arg tkc_st_to_arg(const tkc_st *st, tkc_arg *s, size_t ns) {
  if (ns < (size_t)st->nviews * ARGS_PER_VIEW + TKC_MAX_VIEWS) return tkc_arg_none();
  tkc_arg *views = s;
  s += TKC_MAX_VIEWS;
  for (int k = 0; k < st->nviews; k++) {
    const tkc_view *v = &st->views[k];
    tkc_arg *fields = s, *shape = s + 5, *strides = shape + v->ndim, *mask = strides + v->ndim, *terms = mask + 2 * v->ndim;
    s = terms + 1 + 2 * v->ndim;
    fields[4] = terms_arg(st, v, terms, s);
    s += ARGS_PER_TERM * (1 + 2 * v->ndim);
    for (int i = 0; i < v->ndim; i++) {
      shape[i] = tkc_arg_int(v->shape[i]);
      strides[i] = tkc_arg_int(v->strides[i]);
      mask[2 * i] = tkc_arg_int(v->mask_begin[i]);
      mask[2 * i + 1] = tkc_arg_int(v->mask_end[i]);
    }
    fields[0] = tkc_arg_tuple(shape, (uint32_t)v->ndim);
    fields[1] = tkc_arg_tuple(strides, (uint32_t)v->ndim);
    fields[2] = tkc_arg_int(v->offset);
    fields[3] = v->has_mask ? tkc_arg_tuple(mask, (uint32_t)(2 * v->ndim)) : tkc_arg_none();
    views[k] = tkc_arg_tuple(fields, 5);
  }
  return tkc_arg_tuple(views, (uint32_t)st->nviews);
}

int tkc_st_from_arg(tkc_st *st, const tkc_arg *a) {
  if (a->kind != TKC_ARG_TUPLE || a->n < 1 || a->n > TKC_MAX_VIEWS) return -1;
  st->nviews = (int)a->n;
  st->nvars = 0;
  for (uint32_t k = 0; k < a->n; k++) {
    const tkc_arg *f = &a->v.t[k];
    if (f->kind != TKC_ARG_TUPLE || f->n != 5 || f->v.t[0].kind != TKC_ARG_TUPLE || f->v.t[0].n > TKC_MAX_DIMS) return -1;
    tkc_view *v = &st->views[k];
    memset(v, 0, sizeof *v);
    v->ndim = (int)f->v.t[0].n;
    for (int i = 0; i < v->ndim; i++) {
      v->shape[i] = f->v.t[0].v.t[i].v.i;
      v->strides[i] = f->v.t[1].v.t[i].v.i;
    }
    v->offset = f->v.t[2].v.i;
    v->has_mask = f->v.t[3].kind == TKC_ARG_TUPLE;
    for (int i = 0; v->has_mask && i < v->ndim; i++) {
      v->mask_begin[i] = f->v.t[3].v.t[2 * i].v.i;
      v->mask_end[i] = f->v.t[3].v.t[2 * i + 1].v.i;
    }
    const tkc_arg *terms = &f->v.t[4];
    for (uint32_t j = 0; terms->kind == TKC_ARG_TUPLE && j < terms->n; j++) {
      if (terms->v.t[j].kind != TKC_ARG_TUPLE || terms->v.t[j].n != 6) return -1;
      const tkc_arg *t = terms->v.t[j].v.t;
      int where = (int)t[0].v.i, dim = (int)t[1].v.i;
      tkc_svar sv = {.vmin = t[4].v.i, .vmax = t[5].v.i};
      if (t[3].kind != TKC_ARG_STR || t[3].n >= sizeof sv.name || dim < 0 || dim >= v->ndim) return -1;
      memcpy(sv.name, t[3].v.s, t[3].n);
      int slot = tkc_st_var_slot(st, &sv);
      if (!slot) return -1;
      if (where == 0) v->offset_var = (int8_t)slot, v->offset_k = t[2].v.i;
      else if (where == 1) v->mask_begin_var[dim] = (int8_t)slot, v->mask_begin_k[dim] = t[2].v.i;
      else v->mask_end_var[dim] = (int8_t)slot, v->mask_end_k[dim] = t[2].v.i;
    }
  }
  return 0;
}

int tkc_st_equal(const tkc_st *a, const tkc_st *b) {
  if (a->nviews != b->nviews || a->nvars != b->nvars) return 0;
  for (int i = 0; i < a->nvars; i++)
    if (strcmp(a->vars[i].name, b->vars[i].name) || a->vars[i].vmin != b->vars[i].vmin || a->vars[i].vmax != b->vars[i].vmax) return 0;
  for (int k = 0; k < a->nviews; k++) {
    const tkc_view *x = &a->views[k], *y = &b->views[k];
    size_t n = (size_t)x->ndim * sizeof(int64_t), m = (size_t)x->ndim;
    if (x->ndim != y->ndim || x->offset != y->offset || x->has_mask != y->has_mask || memcmp(x->shape, y->shape, n) || memcmp(x->strides, y->strides, n) ||
        x->offset_var != y->offset_var || (x->offset_var && x->offset_k != y->offset_k))
      return 0;
    if (x->has_mask && (memcmp(x->mask_begin, y->mask_begin, n) || memcmp(x->mask_end, y->mask_end, n) || memcmp(x->mask_begin_var, y->mask_begin_var, m) ||
                        memcmp(x->mask_end_var, y->mask_end_var, m) || memcmp(x->mask_begin_k, y->mask_begin_k, n) || memcmp(x->mask_end_k, y->mask_end_k, n)))
      return 0;
  }
  return 1;
}

int tkc_shape_size_checked(int ndim, const int64_t *shape, int64_t itemsize, int64_t *numel) {
  int64_t n = 1, bytes;
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0) return -1;
  for (int i = 0; i < ndim; i++)
    if (!shape[i]) n = 0; /* an empty tensor: no overflow, whatever the other dims */
  for (int i = 0; i < ndim && n; i++)
    if (__builtin_mul_overflow(n, shape[i], &n)) return -1;
  if (__builtin_mul_overflow(n, itemsize > 0 ? itemsize : 1, &bytes)) return -1;
  if (numel) *numel = n;
  return 0;
}

int64_t tkc_shape_numel(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  return n;
}

/* the element offset of st at index 1 of dim (dim -1: at the origin), or INT64_MIN */
static int64_t offset_at(const tkc_st *st, tkc_graph *g, int dim) {
  tkc_uop *idx[TKC_MAX_DIMS], *off, *valid;
  for (int d = 0; d < tkc_st_ndim(st); d++) idx[d] = tkc_uop_const_int(g, tkc_dt_of(TKC_INT32), d == dim);
  if (tkc_st_expr(st, g, idx, &off, &valid) || !(off = tkc_simplify(g, off)) || off->op != TKC_OP_CONST) return INT64_MIN;
  return tkc_uop_const_i(off);
}

int64_t tkc_st_stride(const tkc_st *st, tkc_graph *g, int dim) {
  tkc_st flat = *st; /* the innermost view's variable offset adds the same to every element */
  flat.views[0].offset_var = 0, flat.views[0].offset_k = 0;
  st = &flat;
  int64_t base = offset_at(st, g, -1), at = base == INT64_MIN ? INT64_MIN : offset_at(st, g, dim);
  return at == INT64_MIN ? INT64_MIN : at - base;
}
