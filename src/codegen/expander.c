/* The expander: W lanes of a kernel (the same AST lowered W times, once per value of a lane axis)
 * become one vector value (tinygrad's expander + the load/store folding of its devectorizer).
 * Lanes are packed node by node from the top:
 *   all lanes the same UOp            -> that UOp (uniform; broadcast where a vector needs it)
 *   LOAD(buf[i0+0]) .. LOAD(buf[i0+W-1]) with one mask  -> one vector LOAD through CAST(INDEX) to ptr(T.vec(W))
 *   STORE of such contiguous addresses                   -> one vector STORE (else no packing)
 *   the same ALU/CAST/BITCAST           -> the vector op over the packed sources
 *   DEFINE_ACC / ASSIGN of the lanes    -> one vector accumulator
 *   anything else scalar               -> VECTORIZE(lanes) (a gather: still right, only slower)
 * Contiguity: lane k's index is lane 0's plus k, as linear forms (sum of coef * atom + c) or, when
 * those differ, after simplifying the indices. On GPUs lane 0's index must also be a multiple of W
 * (vector loads need aligned addresses): a linear form whose terms all are; else the lanes gather. */
#include <stdlib.h>
#include <string.h>
#include "codegen/codegen.h"

#define MEMO_BITS 6 /* (grows: memo_grow; 1024 entries were 139 KB, a fresh mmap and its page faults per packer) */

typedef struct memo_entry {
  tkc_uop *lanes[TKC_MAX_VEC];
  tkc_uop *result;
} memo_entry;

struct tkc_packer {
  tkc_graph *g;
  int w;
  int *naccs; /* accumulator numbering shared with the lowerer */
  bool aligned; /* vector accesses must start at a multiple of w elements (GPUs: ld.v4 needs it) */
  uint32_t scalar_access; /* element dtypes accessed lane by lane (the renderer's scalar_access_dtypes) */
  memo_entry *memo;
  size_t cap, used;
  tkc_umap index_math; /* uop -> 1 (index math: see index_math) or 2 (not) */
};

tkc_packer *tkc_packer_new(tkc_graph *g, int width, int *naccs, bool aligned, uint32_t scalar_access) {
  if (width < 2 || width > TKC_MAX_VEC) return tkc_err_null(TKC_EINTERNAL, "expander: vector width %d", width);
  tkc_packer *p = tkc_calloc(1, sizeof *p);
  if (!p) return tkc_err_null(TKC_ENOMEM, "out of memory expanding a kernel");
  *p = (tkc_packer){.g = g, .w = width, .naccs = naccs, .aligned = aligned, .scalar_access = scalar_access, .cap = 1u << MEMO_BITS};
  if (!(p->memo = tkc_calloc(p->cap, sizeof *p->memo))) {
    tkc_free(p);
    return tkc_err_null(TKC_ENOMEM, "out of memory expanding a kernel");
  }
  return p;
}

void tkc_packer_free(tkc_packer *p) {
  if (!p) return;
  tkc_umap_free(&p->index_math);
  tkc_free(p->memo);
  tkc_free(p);
}

static size_t lanes_hash(tkc_uop *const *l, int w) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < w; i++) h = (h ^ (uint64_t)(uintptr_t)l[i]) * 1099511628211ull;
  return (size_t)(h ^ (h >> 29));
}

static memo_entry *memo_slot(tkc_packer *p, tkc_uop *const *l) {
  size_t mask = p->cap - 1;
  for (size_t i = lanes_hash(l, p->w) & mask;; i = (i + 1) & mask)
    if (!p->memo[i].result || !memcmp(p->memo[i].lanes, l, (size_t)p->w * sizeof *l)) return &p->memo[i];
}

static int memo_grow(tkc_packer *p) {
  memo_entry *old = p->memo;
  size_t ocap = p->cap;
  p->memo = tkc_calloc(ocap * 2, sizeof *p->memo);
  if (!p->memo) {
    p->memo = old;
    return -1;
  }
  p->cap = ocap * 2;
  for (size_t i = 0; i < ocap; i++)
    if (old[i].result) *memo_slot(p, old[i].lanes) = old[i];
  tkc_free(old);
  return 0;
}

static tkc_uop *memo_put(tkc_packer *p, tkc_uop *const *l, tkc_uop *r) {
  if (!r) return NULL;
  if (2 * (p->used + 1) > p->cap && memo_grow(p)) return tkc_err_null(TKC_ENOMEM, "out of memory expanding a kernel");
  memo_entry *e = memo_slot(p, l);
  if (!e->result) p->used++;
  memcpy(e->lanes, l, (size_t)p->w * sizeof *l);
  e->result = r;
  return r;
}

static bool uniform(tkc_uop *const *l, int w) {
  for (int i = 1; i < w; i++)
    if (l[i] != l[0]) return false;
  return true;
}

static tkc_uop *vectorize(tkc_packer *p, tkc_uop *const *l) {
  return tkc_uop_new(p->g, TKC_OP_VECTORIZE, tkc_dt_vec(l[0]->dtype, p->w), p->w, l, tkc_arg_none());
}

/* a packed source as a vector: a uniform scalar is broadcast */
static tkc_uop *as_vector(tkc_packer *p, tkc_uop *s) {
  if (!s || s->dtype.count == p->w) return s;
  tkc_uop *l[TKC_MAX_VEC];
  for (int i = 0; i < p->w; i++) l[i] = s;
  return vectorize(p, l);
}

/* An integer index as sum(coef * atom) + c, atoms sorted; 0 when it does not fit (too many terms). */
#define LIN_TERMS 16
typedef struct linear {
  int n;
  const tkc_uop *atom[LIN_TERMS];
  int64_t coef[LIN_TERMS];
  int64_t c;
} linear;

static int lin_add(linear *f, const tkc_uop *atom, int64_t coef) {
  int i = 0;
  while (i < f->n && f->atom[i] < atom) i++;
  if (i < f->n && f->atom[i] == atom) {
    f->coef[i] += coef;
    return 1;
  }
  if (f->n == LIN_TERMS) return 0;
  memmove(f->atom + i + 1, f->atom + i, (size_t)(f->n - i) * sizeof *f->atom);
  memmove(f->coef + i + 1, f->coef + i, (size_t)(f->n - i) * sizeof *f->coef);
  f->atom[i] = atom;
  f->coef[i] = coef;
  f->n++;
  return 1;
}

static int lin_of(const tkc_uop *u, int64_t scale, linear *f, int depth) {
  if (depth > 64) return 0;
  if (u->op == TKC_OP_CONST) { f->c += scale * tkc_uop_const_i(u); return 1; }
  if (u->op == TKC_OP_ADD) return lin_of(u->src[0], scale, f, depth + 1) && lin_of(u->src[1], scale, f, depth + 1);
  if (u->op == TKC_OP_MUL && u->src[1]->op == TKC_OP_CONST) return lin_of(u->src[0], scale * tkc_uop_const_i(u->src[1]), f, depth + 1);
  if (u->op == TKC_OP_MUL && u->src[0]->op == TKC_OP_CONST) return lin_of(u->src[1], scale * tkc_uop_const_i(u->src[0]), f, depth + 1);
  return lin_add(f, u, scale);
}

/* idx - base as a constant, when both are linear in the same atoms; else INT64_MIN */
static int64_t lin_offset(const tkc_uop *idx, const linear *base) {
  linear f = {0};
  if (!lin_of(idx, 1, &f, 0)) return INT64_MIN;
  int i = 0, j = 0;
  while (i < f.n || j < base->n) { /* equal after dropping zero coefficients */
    if (i < f.n && !f.coef[i]) { i++; continue; }
    if (j < base->n && !base->coef[j]) { j++; continue; }
    if (i == f.n || j == base->n || f.atom[i] != base->atom[j] || f.coef[i] != base->coef[j]) return INT64_MIN;
    i++, j++;
  }
  return f.c - base->c;
}

/* u = rest + c, c constant (rest NULL when u is a constant) */
static int64_t split_const(tkc_uop *u, tkc_uop **rest) {
  if (u->op == TKC_OP_CONST) { *rest = NULL; return tkc_uop_const_i(u); }
  if (u->op == TKC_OP_ADD && u->src[1]->op == TKC_OP_CONST) { *rest = u->src[0]; return tkc_uop_const_i(u->src[1]); }
  *rest = u;
  return 0;
}

/* whether idx is provably a multiple of w: a linear form whose coefficients and constant all are */
static bool multiple_of(tkc_packer *p, tkc_uop *idx, int64_t w) {
  linear f = {0};
  tkc_uop *s = tkc_simplify(p->g, idx);
  if (!s || !lin_of(s, 1, &f, 0) || f.c % w) return false;
  for (int i = 0; i < f.n; i++)
    if (f.coef[i] % w) return false;
  return true;
}

/* lane k of idx is lane 0 plus k: first as linear forms (cheap), else after simplifying them */
static bool lanes_contiguous(tkc_packer *p, tkc_uop *const *idx) {
  if (p->aligned && !multiple_of(p, idx[0], p->w)) return false;
  linear base = {0};
  bool linear_ok = lin_of(idx[0], 1, &base, 0);
  for (int k = 1; linear_ok && k < p->w; k++) linear_ok = lin_offset(idx[k], &base) == k;
  if (linear_ok) return true;
  tkc_uop *rest0 = NULL;
  int64_t c0 = 0;
  for (int k = 0; k < p->w; k++) {
    tkc_uop *s = tkc_simplify(p->g, idx[k]), *rest;
    if (!s) return false;
    int64_t c = split_const(s, &rest);
    if (k == 0) c0 = c, rest0 = rest;
    else if (rest != rest0 || c != c0 + k) return false;
  }
  return true;
}

/* The vector pointer INDEX for lanes INDEX(buf, i0 + k[, mask]) k = 0..w-1, or NULL when they are
 * not one contiguous run under one mask. */
static tkc_uop *contiguous_index(tkc_packer *p, tkc_uop *const *idx) {
  tkc_uop *buf = idx[0]->src[0], *mask = idx[0]->nsrc > 2 ? idx[0]->src[2] : NULL, *lane_idx[TKC_MAX_VEC];
  tkc_dt base = tkc_dt_base(buf->dtype);
  if (base.count != 1 || tkc_dt_is_bool(base) || (p->scalar_access >> base.scalar & 1u)) return NULL;
  for (int k = 0; k < p->w; k++) {
    const tkc_uop *x = idx[k];
    if (x->op != TKC_OP_INDEX || x->src[0] != buf || (x->nsrc > 2 ? x->src[2] : NULL) != mask) return NULL;
    lane_idx[k] = x->src[1];
  }
  if (!lanes_contiguous(p, lane_idx)) return NULL;
  tkc_uop *src[3] = {buf, lane_idx[0], mask};
  tkc_uop *index = tkc_uop_new(p->g, TKC_OP_INDEX, buf->dtype, mask ? 3 : 2, src, tkc_arg_none());
  tkc_dt vptr = tkc_dt_ptr(tkc_dt_vec(base, p->w), (tkc_addrspace)buf->dtype.space, -1);
  return index ? tkc_uop_new(p->g, TKC_OP_CAST, vptr, 1, &index, tkc_arg_none()) : NULL;
}

/* The scalar INDEX all lanes INDEX(buf, i[, mask]) read, when their indices simplify to one (a
 * per-block value indexed by lane / block_size); else NULL. */
static tkc_uop *same_address(tkc_packer *p, tkc_uop *const *idx) {
  tkc_uop *buf = idx[0]->src[0], *mask = idx[0]->nsrc > 2 ? idx[0]->src[2] : NULL, *i0 = NULL;
  for (int k = 0; k < p->w; k++) {
    const tkc_uop *x = idx[k];
    if (x->op != TKC_OP_INDEX || x->src[0] != buf || (x->nsrc > 2 ? x->src[2] : NULL) != mask) return NULL;
    tkc_uop *s = tkc_simplify(p->g, x->src[1]);
    if (!s || (k && s != i0)) return NULL;
    i0 = s;
  }
  tkc_uop *src[3] = {buf, i0, mask};
  return tkc_uop_new(p->g, TKC_OP_INDEX, idx[0]->dtype, mask ? 3 : 2, src, tkc_arg_none());
}

static tkc_uop *pack(tkc_packer *p, tkc_uop *const *l);

/* Whether u is index math: integer (or bool) values computed from constants, loop and launch
 * indices and variables only, no loaded or float value below it (memoized per packer). Only such
 * values can simplify lane by lane to a constant or one value; simplifying the others (a sin's
 * quadrant, a cast of a loaded value) would rewrite the whole float computation below them once per
 * lane: sin over 16 lanes took 17 ms to lower. */
static bool index_math(tkc_packer *p, tkc_uop *u) {
  uintptr_t known = (uintptr_t)tkc_umap_get(&p->index_math, u);
  if (known) return known == 1;
  bool yes;
  if (u->op == TKC_OP_CONST || u->op == TKC_OP_RANGE || u->op == TKC_OP_SPECIAL || u->op == TKC_OP_DEFINE_VAR) yes = true;
  else if (!tkc_dt_is_int(u->dtype) && !tkc_dt_is_bool(u->dtype)) yes = false;
  else if (!(tkc_op_flags((tkc_op)u->op) & TKC_F_ALU) && u->op != TKC_OP_CAST) yes = false;
  else {
    yes = true;
    for (int i = 0; i < u->nsrc && yes; i++) yes = index_math(p, u->src[i]);
  }
  if (tkc_umap_put(&p->index_math, u, (tkc_uop *)(uintptr_t)(yes ? 1 : 2))) return false; /* (out of memory: not simplified) */
  return yes;
}

static bool all_index_math(tkc_packer *p, tkc_uop *const *l) {
  for (int k = 0; k < p->w; k++)
    if (!index_math(p, l[k])) return false;
  return true;
}

/* the sources at position i of every lane, packed */
static tkc_uop *pack_src(tkc_packer *p, tkc_uop *const *l, int i) {
  tkc_uop *s[TKC_MAX_VEC];
  for (int k = 0; k < p->w; k++) s[k] = l[k]->src[i];
  return pack(p, s);
}

static bool same_shape(tkc_uop *const *l, int w) {
  for (int k = 1; k < w; k++)
    if (l[k]->op != l[0]->op || l[k]->nsrc != l[0]->nsrc || !tkc_dt_eq(l[k]->dtype, l[0]->dtype) || !tkc_arg_eq(&l[k]->arg, &l[0]->arg)) return false;
  return true;
}

static tkc_uop *pack_node(tkc_packer *p, tkc_uop *const *l) {
  tkc_graph *g = p->g;
  tkc_uop *u = l[0], *src[8];
  tkc_dt vdt = tkc_dt_vec(u->dtype, p->w);
  unsigned fl = tkc_op_flags((tkc_op)u->op);
  if (u->op == TKC_OP_DEFINE_ACC) { /* one accumulator for all lanes: same init and loops */
    for (int k = 1; k < p->w; k++)
      if (l[k]->op != TKC_OP_DEFINE_ACC || l[k]->nsrc != u->nsrc || memcmp(l[k]->src, u->src, (size_t)u->nsrc * sizeof *u->src)) return NULL;
    tkc_uop *s[40]; /* init + the reduce loops */
    if (u->nsrc > (int)TKC_COUNTOF(s) || u->src[0]->op != TKC_OP_CONST) return NULL;
    memcpy(s, u->src, (size_t)u->nsrc * sizeof *s);
    s[0] = tkc_uop_new(g, TKC_OP_CONST, vdt, 0, NULL, u->src[0]->arg);
    return s[0] ? tkc_uop_new(g, TKC_OP_DEFINE_ACC, vdt, u->nsrc, s, tkc_arg_int((*p->naccs)++)) : NULL;
  }
  if (!same_shape(l, p->w)) return u->op == TKC_OP_ASSIGN ? NULL : vectorize(p, l);
  if (u->op == TKC_OP_ASSIGN) {
    tkc_uop *acc = pack_src(p, l, 0), *val = acc ? as_vector(p, pack_src(p, l, 1)) : NULL;
    if (!acc || !val || acc->op != TKC_OP_DEFINE_ACC) return NULL;
    tkc_uop *s[2] = {acc, val};
    return tkc_uop_new(g, TKC_OP_ASSIGN, vdt, 2, s, tkc_arg_none());
  }
  if (u->op == TKC_OP_LOAD && u->nsrc == 1 && u->src[0]->op == TKC_OP_INDEX) {
    tkc_uop *idx[TKC_MAX_VEC];
    for (int k = 0; k < p->w; k++) idx[k] = l[k]->src[0];
    tkc_uop *vp = contiguous_index(p, idx);
    if (vp) return tkc_uop_new(g, TKC_OP_LOAD, vdt, 1, &vp, u->arg); /* (the arg: see TKC_LOAD_AFTER_STORES) */
    tkc_uop *same = same_address(p, idx);
    return same ? tkc_uop_new(g, TKC_OP_LOAD, u->dtype, 1, &same, u->arg) : vectorize(p, l);
  }
  if ((fl & TKC_F_ALU) && tkc_dt_is_int(u->dtype) && !tkc_dt_is_bool(u->dtype) && all_index_math(p, l)) {
    /* Integer values computed from the lane index (an arange, a field's shift from its position) are
     * the index math of each lane: simplified lane by lane they often are constants or one value
     * (((64 r + k) / 16) % 2 with k < 16 is 0), where the vector op would compute them per lane at
     * run time. Only those two outcomes are taken (else the lanes are packed as they are); masks
     * (bools) are left to the loads' gates. Index math of loads and stores does not come here
     * (contiguous_index). */
    tkc_uop *s[TKC_MAX_VEC];
    bool changed = false, consts = true;
    for (int k = 0; k < p->w; k++) {
      if (!(s[k] = tkc_simplify(g, l[k]))) return NULL;
      changed |= s[k] != l[k];
      consts &= s[k]->op == TKC_OP_CONST && s[k]->dtype.count == 1;
    }
    if (changed && uniform(s, p->w) && s[0]->dtype.count == 1) return s[0];
    if (changed && consts) return vectorize(p, s);
  }
  if (((fl & TKC_F_ALU) || u->op == TKC_OP_CAST || u->op == TKC_OP_BITCAST) && u->nsrc <= 8) {
    bool all_uniform = true;
    for (int i = 0; i < u->nsrc; i++) {
      if (!(src[i] = pack_src(p, l, i))) return NULL;
      all_uniform &= src[i]->dtype.count == 1;
    }
    /* sources that are one value for all lanes (a block's scale loaded once): the op on that value,
     * broadcast where a vector needs it, rather than the op on its broadcast in every lane */
    if (all_uniform) return tkc_uop_new(g, (tkc_op)u->op, u->dtype, u->nsrc, src, u->arg);
    for (int i = 0; i < u->nsrc; i++)
      if (!(src[i] = as_vector(p, src[i]))) return NULL;
    return tkc_uop_new(g, (tkc_op)u->op, vdt, u->nsrc, src, u->arg);
  }
  return vectorize(p, l); /* CONSTs that differ, gathers, anything else: lane by lane */
}

static tkc_uop *pack(tkc_packer *p, tkc_uop *const *l) {
  if (uniform(l, p->w)) return l[0];
  for (int k = 0; k < p->w; k++)
    if (l[k]->dtype.count != 1 || tkc_dt_is_ptr(l[k]->dtype) || l[k]->dtype.scalar == TKC_VOID) return NULL;
  memo_entry *e = memo_slot(p, l);
  if (e->result) return e->result;
  return memo_put(p, l, pack_node(p, l));
}

tkc_uop *tkc_pack_values(tkc_packer *p, tkc_uop *const *lanes) {
  tkc_uop *r = pack(p, lanes);
  return as_vector(p, r);
}

tkc_uop *tkc_pack_stores(tkc_packer *p, tkc_uop *const *st) {
  tkc_uop *idx[TKC_MAX_VEC], *val[TKC_MAX_VEC];
  for (int k = 0; k < p->w; k++) {
    if (st[k]->op != TKC_OP_STORE || st[k]->nsrc != 2) return NULL;
    idx[k] = st[k]->src[0];
    val[k] = st[k]->src[1];
  }
  tkc_uop *vp = contiguous_index(p, idx), *v = vp ? tkc_pack_values(p, val) : NULL;
  tkc_uop *s[2] = {vp, v};
  return v ? tkc_uop_new(p->g, TKC_OP_STORE, tkc_dt_of(TKC_VOID), 2, s, tkc_arg_none()) : NULL;
}
