/* The lowerer: a kernel AST (from the scheduler) + its axes and opts -> UOps with loops, launch
 * indices and index math (tinygrad's lowerer.py + the lane part of its expander). Loop axes become
 * RANGEs (in loop order) on devices without launch indices, or one flattened launch grid
 * (gidx/lidx SPECIALs) on devices with them. Lane axes (UPCAST, UNROLL) are constants: the kernel is
 * lowered once per lane, and on host renderers with vectors the lanes of the first upcast (group)
 * axis are packed into vector UOps by the expander. Each REDUCE_AXIS gets a DEFINE_ACC per group lane
 * (or per vector of them) that its unroll lanes are added to in loop order; the group lanes are
 * combined after the loop. Views become index and validity expressions; the codegen driver
 * (codegen/pipeline.c) then simplifies the whole kernel with the symbolic rules. The expander runs
 * inside the lowerer, not after it: reduces pack their accumulators while they are lowered and the
 * stores are packed with the same packers (shared accumulator numbering and memo), so lowering and
 * expanding have no boundary between them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "codegen/codegen.h"
#include "codegen/opts.h"

typedef struct nested_value {
  tkc_uop *u, *r;
  tkc_uop *at[TKC_MAX_DIMS]; /* idx_full when lowered (the reduced dims' entries unused) */
} nested_value;

/* A view's index and validity at some indices (view_memo): the key is the view, the indices of the
 * dims it reads (NULL for one it broadcasts) and the padding's validity; lanes of a register tile
 * that differ only along dims a load broadcasts share one entry */
typedef struct view_memo_entry {
  const tkc_uop *view;
  tkc_uop *key[TKC_MAX_DIMS + 2];
  tkc_uop *idx, *valid;
} view_memo_entry;

typedef struct lower {
  tkc_graph *g;
  const tkc_kshape *ks;
  int ndim;
  tkc_uop *axis_idx[TKC_MAX_AXES]; /* RANGE / launch index / lane constant of each axis */
  tkc_uop *idx_out[TKC_MAX_DIMS], *idx_full[TKC_MAX_DIMS];
  tkc_uop *launch_valid; /* a partial last launch block: lanes past the end do nothing */
  tkc_uop *tid;          /* GPUs: the thread's index in its workgroup when opts made thread axes */
  int64_t group_threads; /* of them the GROUP_LOCAL ones (the fastest-varying part of tid) */
  tkc_uop *store_gate;   /* with GROUP_LOCAL: only the first thread of a group stores */
  int ntemps;            /* shared-memory arrays made */
  tkc_uop *pad_out, *pad_reduce; /* inside the real (unpadded) output / reduce dims; NULL: no PADTO */
  tkc_umap memo[2];      /* outside / inside a reduce */
  view_memo_entry *vmemo; /* view_at's results (an open-addressing table; NULL: none yet) */
  size_t vmemo_cap, vmemo_used;
  int naccs;
  bool vectors;          /* pack lanes into vector UOps */
  bool aligned;          /* vector accesses must be aligned (GPUs) */
  const tkc_renderer *r; /* NULL: INTERP */
  tkc_packer *packers[5]; /* by log2 of the width */
  bool var_loop[TKC_MAX_DIMS]; /* a variable-length dim whose loop stops at its length (else: gated) */
  int reducing;          /* lowering the source of this many reduces */
  int nfresh;            /* loops made for nested reduces (lower_nested) */
  int nnested;
  nested_value nested[32]; /* nested reduces lowered, by the indices of the dims they keep */
  /* Spilling (see find_spills): the kernel's STORE, the nested reduce sources whose values the nested
   * loop also stores into the output buffer, and those STOREs (sources of the SINK) */
  const tkc_uop *out_store;
  tkc_uop *spilled[4];
  int nspilled;
  tkc_uop **spills;
  int nspills, capspills;
} lower;

/* The index dtype of the kernel being lowered (on this thread): int32, or int64 when an index can
 * pass INT32_MAX (see index_dtype). */
static _Thread_local tkc_dtype idx_scalar = TKC_INT32;
static tkc_dt i32(void) { return tkc_dt_of(idx_scalar); }
static tkc_uop *ci(tkc_graph *g, int64_t v) { return tkc_uop_const_int(g, i32(), v); }

/* a launch index (int32 SPECIAL), widened to the kernel's index dtype */
static tkc_uop *special(tkc_graph *g, const char *name, int64_t n) {
  tkc_uop *s = tkc_uop_special(g, name, n);
  return s && idx_scalar != TKC_INT32 ? tkc_uop_cast(g, s, i32()) : s;
}

/* int64 when the kernel's output space, its reduce space, a view or a buffer can reach past
 * INT32_MAX, else int32. The two spaces are counted apart: no index mixes an output position with a
 * reduce position past what the views reach (a 2048^3 matmul has 2^33 iterations but indices < 2^22;
 * counted together it lost int32 indices, and with them tensor cores) */
static tkc_dtype index_dtype(const tkc_kshape *ks, tkc_uop *const *order, size_t n) {
  __int128 out = 1, red = 1;
  for (int d = 0; d < ks->ndim; d++) {
    int64_t len = ks->padded[d] > ks->full[d] ? ks->padded[d] : ks->full[d];
    if (ks->out[d] == ks->full[d]) out *= len;
    else red *= len;
  }
  if (out > INT32_MAX || red > INT32_MAX) return TKC_INT64;
  for (size_t i = 0; i < n; i++) {
    const tkc_uop *u = order[i];
    tkc_st st;
    if (u->op == TKC_OP_VIEW && !tkc_st_from_arg(&st, &u->arg) && tkc_st_max_index(&st) > INT32_MAX) return TKC_INT64;
    if (u->op == TKC_OP_DEFINE_GLOBAL && u->dtype.size > INT32_MAX) return TKC_INT64;
  }
  return TKC_INT32;
}

/* the length of variable-length dim d: DEFINE_VAR + c, in the index dtype */
static tkc_uop *var_length(lower *L, int d) {
  const tkc_kvar *v = &L->ks->var[d];
  tkc_uop *x = tkc_uop_var(L->g, v->name, v->vmin, v->vmax);
  if (x && idx_scalar != TKC_INT32) x = tkc_uop_cast(L->g, x, i32());
  return x && v->c ? tkc_uop_alu2(L->g, TKC_OP_ADD, x, ci(L->g, v->c)) : x;
}

static tkc_uop *and2(tkc_graph *g, tkc_uop *a, tkc_uop *b) { return !a ? b : !b ? a : tkc_uop_alu2(g, TKC_OP_AND, a, b); }

static tkc_uop *zero_of(tkc_graph *g, tkc_dt dt) {
  return tkc_dt_is_float(dt) ? tkc_uop_const_float(g, dt, 0.0) : tkc_uop_const_int(g, dt, 0);
}

static tkc_uop *identity_of(tkc_graph *g, tkc_op op, tkc_dt dt) {
  if (op == TKC_OP_ADD) return zero_of(g, dt);
  if (dt.scalar == TKC_FLOAT8_E4M3FN) return tkc_uop_const_float(g, dt, -448.0); /* no -inf: its lowest value */
  if (tkc_dt_is_float(dt)) return tkc_uop_const_float(g, dt, -INFINITY);
  return tkc_uop_const_int(g, dt, dt.scalar == TKC_UINT64 ? 0 : tkc_dtype_min((tkc_dtype)dt.scalar));
}

/* Each dim's index from its axes; the validity of padded dims. */
static void set_indices(lower *L) {
  tkc_graph *g = L->g;
  const tkc_kshape *ks = L->ks;
  tkc_uop *pad_out = NULL, *pad_reduce = NULL;
  for (int d = 0; d < L->ndim; d++) {
    tkc_uop *idx = NULL;
    int64_t c = 0;
    for (int a = 0; a < ks->naxes; a++) {
      if (ks->ax[a].dim != d) continue;
      tkc_uop *x = L->axis_idx[a];
      if (x->op == TKC_OP_CONST) c += tkc_uop_const_i(x) * ks->ax[a].stride;
      else {
        tkc_uop *t = ks->ax[a].stride == 1 ? x : tkc_uop_alu2(g, TKC_OP_MUL, x, ci(g, ks->ax[a].stride));
        idx = idx ? tkc_uop_alu2(g, TKC_OP_ADD, idx, t) : t;
      }
    }
    idx = !idx ? ci(g, c) : c ? tkc_uop_alu2(g, TKC_OP_ADD, idx, ci(g, c)) : idx;
    int reduce = ks->full[d] != ks->out[d];
    L->idx_full[d] = idx;
    L->idx_out[d] = reduce ? ci(g, 0) : idx;
    if (ks->padded[d] > ks->full[d] || (ks->var[d].name[0] && !L->var_loop[d])) { /* past the end: padding, or a launch
                                                                                  * grid laid out for a variable's largest value */
      tkc_uop *in = tkc_uop_alu2(g, TKC_OP_CMPLT, idx, ks->var[d].name[0] ? var_length(L, d) : ci(g, ks->full[d]));
      if (reduce) pad_reduce = and2(g, pad_reduce, in);
      else pad_out = and2(g, pad_out, in);
    }
  }
  L->pad_out = pad_out;
  L->pad_reduce = pad_reduce;
}

/* Lane number `lane` of the lane axes in list (the first one varies fastest) as constants. */
static void set_lanes(lower *L, const int *axes, int n, int64_t lane) {
  for (int j = 0; j < n; j++) {
    int64_t size = L->ks->ax[axes[j]].size;
    L->axis_idx[axes[j]] = ci(L->g, lane % size);
    lane /= size;
  }
  set_indices(L);
}

/* The lane axes of kind in ks whose dim is in dims (NULL: any); returns their count, *lanes their product. */
static int lane_axes(const lower *L, tkc_axis_kind kind, const bool *dims, int *axes, int64_t *lanes) {
  int n = 0;
  *lanes = 1;
  for (int a = 0; a < L->ks->naxes; a++)
    if (L->ks->ax[a].kind == kind && (!dims || dims[L->ks->ax[a].dim])) {
      axes[n++] = a;
      *lanes *= L->ks->ax[a].size;
    }
  return n;
}

/* The packer for vectors of the first lane axis in axes, or NULL when its lanes stay scalar. */
static tkc_packer *packer_for(lower *L, const int *axes, int n) {
  if (!L->vectors || !n) return NULL;
  int64_t w = L->ks->ax[axes[0]].size;
  int k = w == 2 ? 1 : w == 4 ? 2 : w == 8 ? 3 : w == 16 ? 4 : 0;
  if (!k) return NULL;
  if (L->r->max_vector && w > L->r->max_vector) return NULL; /* (vectors imply a renderer) */
  uint32_t scalar = L->r->scalar_access_dtypes; /* fp8 buffers are uint8 bytes to the renderer (codegen/fp8.c) */
  if (scalar >> TKC_UINT8 & 1u) scalar |= 1u << TKC_FLOAT8_E4M3FN | 1u << TKC_FLOAT8_E5M2;
  if (!L->packers[k]) L->packers[k] = tkc_packer_new(L->g, (int)w, &L->naccs, L->aligned, scalar);
  return L->packers[k];
}

static tkc_uop *fold(tkc_graph *g, tkc_op op, tkc_uop *const *v, int64_t n) {
  tkc_uop *r = v[0];
  for (int64_t i = 1; i < n && r; i++) r = tkc_uop_alu2(g, op, r, v[i]);
  return r;
}

/* v[0] op ... op v[n-1] as a balanced tree, v[i] with v[i + half] first (the lanes of a vector
 * halved, as a shuffle would): depth log2(n), not n - 1 (64 accumulator lanes summed one after the
 * other took as long as a 768-long quantized row's loop). Overwrites v. */
static tkc_uop *fold_tree(tkc_graph *g, tkc_op op, tkc_uop **v, int64_t n) {
  while (n > 1) {
    int64_t half = n / 2;
    for (int64_t i = 0; i < half; i++)
      if (!(v[i] = tkc_uop_alu2(g, op, v[i], v[n - half + i]))) return NULL;
    n -= half;
  }
  return n ? v[0] : NULL;
}

static tkc_uop *lower_uop(lower *L, tkc_uop *u, int in_reduce);

/* The slot of key in the view memo (its entry, or the empty slot where it goes) */
static view_memo_entry *vmemo_slot(view_memo_entry *t, size_t cap, const tkc_uop *view, tkc_uop *const *key) {
  uint64_t h = (uint64_t)(uintptr_t)view * 0x9E3779B97F4A7C15ull;
  for (int d = 0; d < TKC_MAX_DIMS + 2; d++) h = (h ^ (uint64_t)(uintptr_t)key[d]) * 0x100000001B3ull;
  for (size_t i = (size_t)(h ^ h >> 29) & (cap - 1);; i = (i + 1) & (cap - 1))
    if (!t[i].view || (t[i].view == view && !memcmp(t[i].key, key, sizeof t[i].key))) return &t[i];
}

/* remembers (idx, valid) for key; out of memory only forgets (the memo is a speed-up) */
static void vmemo_put(lower *L, const tkc_uop *view, tkc_uop *const *key, tkc_uop *idx, tkc_uop *valid) {
  if (2 * (L->vmemo_used + 1) > L->vmemo_cap) {
    size_t cap = L->vmemo_cap ? 2 * L->vmemo_cap : 256;
    view_memo_entry *t = tkc_calloc(cap, sizeof *t);
    if (!t) return;
    for (size_t i = 0; i < L->vmemo_cap; i++)
      if (L->vmemo[i].view) *vmemo_slot(t, cap, L->vmemo[i].view, L->vmemo[i].key) = L->vmemo[i];
    tkc_free(L->vmemo);
    L->vmemo = t, L->vmemo_cap = cap;
  }
  view_memo_entry *e = vmemo_slot(L->vmemo, L->vmemo_cap, view, key);
  if (!e->view) L->vmemo_used++;
  e->view = view, e->idx = idx, e->valid = valid;
  memcpy(e->key, key, sizeof e->key);
}

/* the index and validity of a view at the current indices, or, for a VIEW with one source per dim
 * (a gather: codegen/index_folding.c), at the indices those sources compute. A single view's
 * results are remembered by the indices of the dims it reads: the lanes of a register tile mostly
 * differ along dims one operand broadcasts (a matmul's 256 lanes read 8 rows of A and 32 columns of
 * B), and each index expression was built again per lane (a fifth of codegen's time). */
static tkc_status view_at(lower *L, const tkc_uop *view, int in_reduce, tkc_uop **idx, tkc_uop **valid) {
  tkc_st st;
  tkc_uop *at[TKC_MAX_DIMS], *const *idxs = in_reduce ? L->idx_full : L->idx_out;
  if (tkc_st_from_arg(&st, &view->arg)) return tkc_err(TKC_EINTERNAL, "lowerer: malformed VIEW");
  if (tkc_st_ndim(&st) != L->ndim || (view->nsrc && view->nsrc != L->ndim))
    return tkc_err(TKC_EINTERNAL, "lowerer: a view of rank %d (%d sources) in a rank-%d kernel", tkc_st_ndim(&st), view->nsrc, L->ndim);
  for (int d = 0; d < view->nsrc; d++)
    if (!(at[d] = lower_uop(L, view->src[d], in_reduce)) || !(at[d] = tkc_uop_cast(L->g, at[d], i32()))) return tkc_last_status();
  if (view->nsrc) idxs = at;
  bool memo = !view->nsrc && st.nviews == 1;
  tkc_uop *key[TKC_MAX_DIMS + 2] = {0};
  if (memo) {
    const tkc_view *v = &st.views[0];
    for (int d = 0; d < L->ndim; d++) { /* a dim the view neither moves along nor masks: not part of the key */
      bool masked = v->has_mask && (v->mask_begin[d] != 0 || v->mask_end[d] != v->shape[d] || v->mask_begin_var[d] || v->mask_end_var[d]);
      key[d] = v->strides[d] == 0 && !masked ? NULL : idxs[d];
    }
    key[TKC_MAX_DIMS] = L->pad_out;
    key[TKC_MAX_DIMS + 1] = in_reduce ? L->pad_reduce : NULL;
    view_memo_entry *e = L->vmemo ? vmemo_slot(L->vmemo, L->vmemo_cap, view, key) : NULL;
    if (e && e->view) {
      *idx = e->idx, *valid = e->valid;
      return TKC_OK;
    }
  }
  tkc_status r = tkc_st_expr(&st, L->g, idxs, idx, valid);
  if (!r) *valid = and2(L->g, *valid, in_reduce ? and2(L->g, L->pad_out, L->pad_reduce) : L->pad_out);
  if (!r && memo) vmemo_put(L, view, key, *idx, *valid);
  return r;
}

/* The partial results of the GROUP_LOCAL threads of a workgroup combined: each thread stores its
 * own into shared memory, waits at the barrier, and reduces the group's values (every thread, so
 * that each holds the result; only the first one stores it). */
static tkc_uop *combine_group(lower *L, tkc_op op, tkc_uop *partial, tkc_uop *ident) {
  tkc_graph *g = L->g;
  int64_t n = L->group_threads, threads = tkc_kshape_threads(L->ks);
  char name[16];
  snprintf(name, sizeof name, "temp%d", L->ntemps);
  tkc_uop *temp = tkc_uop_new(g, TKC_OP_DEFINE_LOCAL, tkc_dt_ptr(partial->dtype, TKC_SPACE_LOCAL, threads), 0, NULL, tkc_arg_str(name));
  tkc_uop *s[2] = {temp, L->tid}, *at = temp ? tkc_uop_new(g, TKC_OP_INDEX, temp->dtype, 2, s, tkc_arg_none()) : NULL;
  tkc_uop *s2[2] = {at, partial}, *st = at ? tkc_uop_new(g, TKC_OP_STORE, tkc_dt_of(TKC_VOID), 2, s2, tkc_arg_none()) : NULL;
  tkc_uop *bar = st ? tkc_uop_new(g, TKC_OP_BARRIER, tkc_dt_of(TKC_VOID), 1, &st, tkc_arg_none()) : NULL;
  if (!bar) return NULL;
  tkc_uop *r = tkc_uop_range(g, ci(g, 0), ci(g, n), TKC_MAX_AXES + L->ntemps++), *idx = r;
  if (n != threads) idx = tkc_uop_alu2(g, TKC_OP_ADD, tkc_uop_alu2(g, TKC_OP_MUL, tkc_uop_alu2(g, TKC_OP_IDIV, L->tid, ci(g, n)), ci(g, n)), r);
  tkc_uop *s3[2] = {temp, idx}, *from = tkc_uop_new(g, TKC_OP_INDEX, temp->dtype, 2, s3, tkc_arg_none());
  tkc_uop *s4[2] = {from, bar}, *ld = from ? tkc_uop_new(g, TKC_OP_LOAD, partial->dtype, 2, s4, tkc_arg_none()) : NULL;
  tkc_uop *s5[2] = {ident, r}, *acc = tkc_uop_new(g, TKC_OP_DEFINE_ACC, partial->dtype, 2, s5, tkc_arg_int(L->naccs++));
  tkc_uop *upd = ld && acc ? tkc_uop_alu2(g, op, acc, ld) : NULL, *s6[2] = {acc, upd};
  return upd ? tkc_uop_new(g, TKC_OP_ASSIGN, partial->dtype, 2, s6, tkc_arg_none()) : NULL;
}

/* ---------------------------------------------------------------- spilling
 *
 * A softmax's output loop reads exp(x - max) again, which its nested sum has just computed for every
 * element of the row: the nested loop stores each value into the output buffer (where the output
 * will be written, so nothing else is touched) and the output loop loads it back instead of
 * recomputing it, as onnxruntime's softmax does. The LOAD is marked TKC_LOAD_AFTER_STORES so the
 * linearizer places it after the loop that stores it. Only when: the reduce is nested in the output (not in
 * another reduce), it reduces dims with a loop, its source is read outside it, costs a
 * transcendental or a division, and has the output's dtype, and the kernel reads nothing of the
 * output buffer (neither through its own parameter nor, in an assign, through another one). */

/* whether recomputing u costs more than a store and a load: a transcendental (by now usually already
 * expanded into ALU ops), a division, or at least 12 ALU ops (visits: shared nodes count again) */
static bool costly(const tkc_uop *u, int *budget) {
  if (u->op == TKC_OP_EXP2 || u->op == TKC_OP_LOG2 || u->op == TKC_OP_SIN || u->op == TKC_OP_SQRT || u->op == TKC_OP_FDIV ||
      u->op == TKC_OP_RECIP || u->op == TKC_OP_POW || --*budget <= 0)
    return true;
  if (u->op == TKC_OP_REDUCE_AXIS || u->op == TKC_OP_LOAD) return false;
  for (int i = 0; i < u->nsrc; i++)
    if (costly(u->src[i], budget)) return true;
  return false;
}

/* whether the output context of the tree at u (not inside a reduce) reads x; *inner: whether a
 * reduce's source reads r */
static bool reads_outside(const tkc_uop *u, const tkc_uop *x, const tkc_uop *r, bool in_reduce, bool *inner, int depth) {
  if (depth > 256) return *inner = true, false; /* (deep trees: no spill) */
  if (u == r && in_reduce) *inner = true;
  if (u == x && !in_reduce) return true;
  bool found = false;
  for (int i = 0; i < u->nsrc; i++)
    found |= reads_outside(u->src[i], x, r, in_reduce || u->op == TKC_OP_REDUCE_AXIS, inner, depth + 1);
  return found;
}

/* The dims the REDUCE_AXIS u reduces, set in dims: -1 (error set) at a bad axis, 0 at a dim without
 * elements (the reduce is its identity), else 1, *nested telling whether one of them is an output dim
 * of the kernel too (the reduce then runs in loops of its own: lower_nested). */
static int reduce_dims(const lower *L, const tkc_uop *u, bool *dims, bool *nested) {
  const tkc_arg *axes = &u->arg.v.t[1];
  *nested = false;
  for (uint32_t i = 0; i < axes->n; i++) {
    int64_t d = axes->v.t[i].v.i;
    if (d < 0 || d >= L->ndim) return tkc_err(TKC_EINTERNAL, "lowerer: reduce axis %lld of a rank-%d kernel", (long long)d, L->ndim), -1;
    if (L->ks->full[d] == 0) return 0;
    dims[d] = true;
    *nested |= L->ks->full[d] > 1 && L->ks->full[d] == L->ks->out[d];
  }
  return 1;
}

/* a reduce nested in the output's loops (lower_nested), reducing a dim that has a loop */
static bool nested_in_output(const lower *L, const tkc_uop *u) {
  bool dims[TKC_MAX_DIMS] = {false}, nested;
  if (reduce_dims(L, u, dims, &nested) != 1 || !nested) return false;
  for (int a = 0; a < L->ks->naxes; a++)
    if (dims[L->ks->ax[a].dim] && (L->ks->ax[a].kind == TKC_AX_GLOBAL || L->ks->ax[a].kind == TKC_AX_REDUCE)) return true;
  return false;
}

static void find_spills(lower *L, const tkc_uop *store, tkc_uop *const *order, size_t n) {
  if (store->op != TKC_OP_STORE || store->nsrc != 3 || L->r == NULL || L->r->global_max[0] > 0) return; /* (host renderers) */
  if (store->arg.kind == TKC_ARG_INT && store->arg.v.i == TKC_STORE_OUTPUT_READ) return;
  tkc_dt out = tkc_dt_base(store->src[0]->dtype);
  tkc_uop *idx, *valid;
  if (view_at(L, store->src[1], 0, &idx, &valid) || valid) return; /* a gated output (padding): its IF would be the spill's */
  for (size_t i = 0; i < n; i++)
    if (order[i]->op == TKC_OP_LOAD && order[i]->src[0] == store->src[0]) return;
  for (size_t i = 0; i < n && L->nspilled < (int)TKC_COUNTOF(L->spilled); i++) {
    tkc_uop *u = order[i];
    bool inner = false;
    if (u->op != TKC_OP_REDUCE_AXIS || !nested_in_output(L, u)) continue;
    tkc_uop *x = u->src[0];
    int budget = 12;
    if (!tkc_dt_eq(x->dtype, out) || !costly(x, &budget) || !reads_outside(store->src[2], x, u, false, &inner, 0) || inner) continue;
    L->spilled[L->nspilled++] = x;
  }
  if (L->nspilled) L->out_store = store;
}

static bool is_spilled(const lower *L, const tkc_uop *x) {
  for (int i = 0; i < L->nspilled; i++)
    if (L->spilled[i] == x) return true;
  return false;
}

/* buffer[the output's index at the current indices], gated as the output store is */
static tkc_uop *output_index(lower *L) {
  tkc_uop *idx, *valid;
  if (view_at(L, L->out_store->src[1], 0, &idx, &valid)) return NULL;
  tkc_uop *s[3] = {L->out_store->src[0], idx, valid};
  return tkc_uop_new(L->g, TKC_OP_INDEX, s[0]->dtype, valid ? 3 : 2, s, tkc_arg_none());
}

static tkc_status add_spill(lower *L, tkc_uop *st) {
  if (!st) return tkc_last_status();
  if (L->nspills == L->capspills) {
    int cap = L->capspills ? 2 * L->capspills : 16;
    tkc_uop **p = tkc_realloc(L->spills, (size_t)cap * sizeof *p);
    if (!p) return tkc_err(TKC_ENOMEM, "out of memory lowering");
    L->spills = p, L->capspills = cap;
  }
  L->spills[L->nspills++] = st;
  return TKC_OK;
}

/* The reduce u over its lanes (the group lanes lanes[0..ngroup), then the unroll lanes after them)
 * and the loops acc_src[1..nr): the source once per lane, an accumulator per group lane (or per
 * vector of them) that the unroll lanes are added to in loop order, the lanes combined after the
 * loops. gate: where the source is not part of the reduce (padding), or NULL. */
static tkc_uop *accumulate(lower *L, tkc_uop *u, tkc_op op, tkc_uop **acc_src, int nr, const int *lanes, int ngroup, int nun, int64_t ngr,
                           int64_t nun_lanes, bool nested) {
  tkc_graph *g = L->g;
  const tkc_kshape *ks = L->ks;
  int64_t nl = ngr * nun_lanes;
  tkc_uop **vals = tkc_malloc((size_t)nl * 2 * sizeof *vals), **terms = vals + nl, *r = NULL;
  if (!vals) return tkc_err_null(TKC_ENOMEM, "out of memory lowering");
  tkc_uop *ident = identity_of(g, op, u->dtype), **spill = NULL;
  bool spilling = nested && L->reducing == 0 && is_spilled(L, u->src[0]);
  if (spilling && !(spill = tkc_malloc((size_t)nl * sizeof *spill))) {
    tkc_free(vals);
    return tkc_err_null(TKC_ENOMEM, "out of memory lowering");
  }
  L->reducing++;
  for (int64_t lane = 0; lane < nl; lane++) { /* lane = group lane + ngr * unroll lane */
    if (ngroup + nun) {
      set_lanes(L, lanes, ngroup + nun, lane);
      tkc_umap_free(&L->memo[1]);
    }
    tkc_uop *v = lower_uop(L, u->src[0], 1);
    if (spilling) {
      tkc_uop *at = v ? output_index(L) : NULL, *s2[2] = {at, v};
      if (!(spill[lane] = at ? tkc_uop_new(g, TKC_OP_STORE, tkc_dt_of(TKC_VOID), 2, s2, tkc_arg_none()) : NULL)) goto done;
    }
    tkc_uop *gate = nested ? and2(g, L->pad_out, L->pad_reduce) : L->pad_reduce; /* (a nested reduce's dims may be output dims) */
    if (v && gate) v = tkc_uop_alu3(g, TKC_OP_WHERE, gate, v, ident); /* padding adds nothing */
    if (!(vals[lane] = v)) goto done;
  }
  tkc_umap_free(&L->memo[1]);
  if (spilling) { /* the stores of W group lanes as one vector store, as lower_kernel packs the output's */
    tkc_packer *P = packer_for(L, lanes, ngroup);
    int64_t w = P ? ks->ax[lanes[0]].size : 1;
    for (int64_t base = 0; base < nl; base += w) {
      tkc_uop *v = w > 1 ? tkc_pack_stores(P, spill + base) : NULL;
      for (int64_t k = 0; k < (v ? 1 : w); k++)
        if (add_spill(L, v ? v : spill[base + k])) goto done;
    }
  }
  if (nr == 1) { /* no loop left: the lanes are the whole reduction */
    r = fold(g, op, vals, nl);
    goto done;
  }
  /* an accumulator per group lane (a vector one per W group lanes), the unroll lanes added to it in
   * order; after the loop the vector accumulators are added as vectors, then their lanes as a tree */
  tkc_packer *P = packer_for(L, lanes, ngroup);
  int64_t w = P ? ks->ax[lanes[0]].size : 1, nt = 0, nva = 0;
  tkc_uop *vaccs[TKC_MAX_LANES];
  for (int64_t base = 0; base < ngr; base += w) {
    tkc_uop *pv[TKC_MAX_LANES], *lane_vals[TKC_MAX_VEC];
    bool vec = P != NULL;
    for (int64_t k = 0; vec && k < nun_lanes; k++) {
      for (int64_t j = 0; j < w; j++) lane_vals[j] = vals[base + j + ngr * k];
      vec = (pv[k] = tkc_pack_values(P, lane_vals)) != NULL;
    }
    for (int64_t j = 0; j < (vec ? 1 : w); j++) {
      tkc_dt dt = vec ? pv[0]->dtype : u->dtype;
      acc_src[0] = vec ? tkc_uop_new(g, TKC_OP_CONST, dt, 0, NULL, ident->arg) : ident;
      tkc_uop *acc = tkc_uop_new(g, TKC_OP_DEFINE_ACC, dt, nr, acc_src, tkc_arg_int(L->naccs++)), *upd = acc;
      for (int64_t k = 0; k < nun_lanes && upd; k++) upd = tkc_uop_alu2(g, op, upd, vec ? pv[k] : vals[base + j + ngr * k]);
      tkc_uop *s2[2] = {acc, upd};
      tkc_uop *asg = upd ? tkc_uop_new(g, TKC_OP_ASSIGN, dt, 2, s2, tkc_arg_none()) : NULL;
      if (!asg) goto done;
      if (vec) vaccs[nva++] = asg;
      else terms[nt++] = asg;
    }
  }
  tkc_uop *vsum = nva ? fold(g, op, vaccs, nva) : NULL;
  if (nva && !vsum) goto done;
  /* host SIMD widths (8, 16 lanes): fold_tree's halving as vector ops on the two halves (the same
   * sums in the same order), log2(w) ops instead of w - 1 scalar ones and w extracts */
  for (bool host_width = w >= 8; host_width && vsum && nt == 0 && w >= 4 && w == (int64_t)vsum->dtype.count;) {
    int64_t half = w / 2;
    tkc_arg lo[TKC_MAX_VEC], hi[TKC_MAX_VEC];
    for (int64_t i = 0; i < half; i++) lo[i] = tkc_arg_int(i), hi[i] = tkc_arg_int(half + i);
    tkc_dt hdt = tkc_dt_vec(u->dtype, (int)half);
    tkc_uop *a = tkc_uop_new(g, TKC_OP_GEP, hdt, 1, &vsum, tkc_arg_tuple(lo, (int)half));
    tkc_uop *b = a ? tkc_uop_new(g, TKC_OP_GEP, hdt, 1, &vsum, tkc_arg_tuple(hi, (int)half)) : NULL;
    if (!b || !(vsum = tkc_uop_alu2(g, op, a, b))) goto done;
    w = half;
  }
  for (int i = 0; vsum && i < (int)w; i++) {
    tkc_arg ix = tkc_arg_int(i);
    if (!(terms[nt++] = tkc_uop_new(g, TKC_OP_GEP, u->dtype, 1, &vsum, tkc_arg_tuple(&ix, 1)))) goto done;
  }
  r = fold_tree(g, op, terms, nt);
done:
  L->reducing--;
  tkc_free(vals);
  tkc_free(spill);
  return r;
}

/* A reduce inside another reduce's source, or over dims the kernel does not reduce (a softmax's
 * max and sum in the kernel that writes exp(x - max) / sum: host devices, see schedule.c): its dims
 * get loops of their own (fresh RANGEs, before the loops that read its value) and its lanes, of
 * whatever kind, are its reduce lanes; it is lowered once per position of the other dims (its
 * value then reused: the kernel's output lanes along its dims all read the one value). */
static tkc_uop *lower_nested(lower *L, tkc_uop *u, tkc_op op, const bool *dims) {
  tkc_graph *g = L->g;
  const tkc_kshape *ks = L->ks;
  nested_value *c = NULL;
  for (int i = 0; i < L->nnested && !c; i++) {
    nested_value *e = &L->nested[i];
    bool same = e->u == u;
    for (int d = 0; d < L->ndim && same; d++) same = dims[d] || e->at[d] == L->idx_full[d];
    if (same) c = e;
  }
  if (c) return c->r;
  lower saved = *L;
  memset(L->memo, 0, sizeof L->memo);
  tkc_uop *acc_src[1 + TKC_MAX_AXES];
  int lanes[2 * TKC_MAX_AXES] = {0}, nr = 1, ngroup = 0, nun = 0;
  int64_t ngr = 1, nun_lanes = 1;
  tkc_uop *r = NULL;
  for (int pass = 0; pass < 2; pass++) /* the group lanes, then the unroll lanes */
    for (int a = 0; a < ks->naxes; a++) {
      const tkc_kaxis *ax = &ks->ax[a];
      if (!dims[ax->dim]) continue;
      if (ax->kind == TKC_AX_LOCAL || ax->kind == TKC_AX_GROUP_LOCAL || ks->var[ax->dim].name[0]) {
        tkc_err(TKC_EUNSUPPORTED, "lowerer: a nested reduce over a dim with workgroup threads or a variable length");
        goto done;
      }
      bool loop = ax->kind == TKC_AX_GLOBAL || ax->kind == TKC_AX_REDUCE, unroll = ax->kind == TKC_AX_UNROLL;
      if (pass == 0 && loop) {
        if (!(L->axis_idx[a] = acc_src[nr++] = tkc_uop_range(g, ci(g, 0), ci(g, ax->size), 2 * TKC_MAX_AXES + L->nfresh++))) goto done;
      } else if (!loop && unroll == (pass == 1)) {
        lanes[ngroup + nun] = a;
        if (pass) nun++, nun_lanes *= ax->size;
        else ngroup++, ngr *= ax->size;
      }
    }
  set_indices(L);
  r = accumulate(L, u, op, acc_src, nr, lanes, ngroup, nun, ngr, nun_lanes, true);
done:
  tkc_umap_free(&L->memo[0]);
  tkc_umap_free(&L->memo[1]);
  saved.naccs = L->naccs, saved.nfresh = L->nfresh, saved.nnested = L->nnested;
  saved.spills = L->spills, saved.nspills = L->nspills, saved.capspills = L->capspills;
  saved.vmemo = L->vmemo, saved.vmemo_cap = L->vmemo_cap, saved.vmemo_used = L->vmemo_used; /* (it may have grown) */
  memcpy(saved.packers, L->packers, sizeof saved.packers);
  *L = saved;
  if (r && L->nnested < (int)TKC_COUNTOF(L->nested)) { /* (full: lowered again where read, the same values) */
    nested_value *e = &L->nested[L->nnested++];
    e->u = u, e->r = r;
    for (int d = 0; d < L->ndim; d++) e->at[d] = L->idx_full[d];
  }
  return r;
}

/* REDUCE_AXIS(op, axes): the source once per unroll lane, an accumulator per lane (or per vector
 * of lanes) over the reduce loops, the lanes combined after the loop. */
static tkc_uop *lower_reduce(lower *L, tkc_uop *u) {
  tkc_graph *g = L->g;
  const tkc_kshape *ks = L->ks;
  tkc_op op = (tkc_op)u->arg.v.t[0].v.i;
  bool dims[TKC_MAX_DIMS] = {false}, nested;
  int has = reduce_dims(L, u, dims, &nested);
  if (has < 0) return NULL;
  if (has == 0) return identity_of(g, op, u->dtype); /* reducing nothing */
  if (nested || L->reducing > 0) return lower_nested(L, u, op, dims);
  tkc_uop *acc_src[1 + TKC_MAX_AXES];
  int nr = 1;
  int64_t grouped = 1;
  for (int a = 0; a < ks->naxes; a++) {
    if (ks->ax[a].kind == TKC_AX_REDUCE && dims[ks->ax[a].dim]) acc_src[nr++] = L->axis_idx[a];
    if (ks->ax[a].kind == TKC_AX_GROUP_LOCAL && dims[ks->ax[a].dim]) grouped *= ks->ax[a].size;
  }
  if (grouped != L->group_threads)
    return tkc_err_null(TKC_EUNSUPPORTED, "lowerer: a GROUP axis of a dim that one of the kernel's reduces does not reduce");
  int lanes[2 * TKC_MAX_AXES] = {0}; /* the group axes, then the unroll axes */
  int64_t ngr, nun_lanes;
  int ngroup = lane_axes(L, TKC_AX_GROUP, dims, lanes, &ngr);
  int nun = lane_axes(L, TKC_AX_UNROLL, dims, lanes + ngroup, &nun_lanes);
  tkc_uop *r = accumulate(L, u, op, acc_src, nr, lanes, ngroup, nun, ngr, nun_lanes, false);
  return r && grouped > 1 ? combine_group(L, op, r, identity_of(g, op, u->dtype)) : r;
}

static tkc_uop *lower_node(lower *L, tkc_uop *u, int in_reduce) {
  tkc_graph *g = L->g;
  tkc_uop *idx, *valid;
  if (!in_reduce && L->reducing == 0 && is_spilled(L, u)) { /* stored by the nested loop: read back */
    tkc_uop *at = output_index(L);
    return at ? tkc_uop_new(g, TKC_OP_LOAD, u->dtype, 1, &at, tkc_arg_int(TKC_LOAD_AFTER_STORES)) : NULL;
  }
  switch (u->op) {
  case TKC_OP_LOAD: { /* LOAD(DEFINE_GLOBAL, VIEW) */
    if (view_at(L, u->src[1], in_reduce, &idx, &valid)) return NULL;
    if (valid && valid->op == TKC_OP_CONST && !valid->arg.v.i) return zero_of(g, u->dtype); /* never read */
    valid = and2(g, valid, L->launch_valid);
    tkc_uop *s[3] = {u->src[0], idx, valid};
    tkc_uop *index = tkc_uop_new(g, TKC_OP_INDEX, u->src[0]->dtype, valid ? 3 : 2, s, tkc_arg_none());
    return index ? tkc_uop_new(g, TKC_OP_LOAD, u->dtype, 1, &index, tkc_arg_none()) : NULL;
  }
  case TKC_OP_CONST: /* CONST(VIEW): zero where the view masks it */
    if (!u->nsrc) return u;
    if (view_at(L, u->src[0], in_reduce, &idx, &valid)) return NULL;
    {
      tkc_uop *c = tkc_uop_new(g, TKC_OP_CONST, u->dtype, 0, NULL, u->arg);
      return valid ? tkc_uop_alu3(g, TKC_OP_WHERE, valid, c, zero_of(g, u->dtype)) : c;
    }
  case TKC_OP_VIEW: /* an iota leaf: the index itself */
    if (view_at(L, u, in_reduce, &idx, &valid)) return NULL;
    return valid ? tkc_uop_alu3(g, TKC_OP_WHERE, valid, idx, ci(g, 0)) : idx;
  case TKC_OP_REDUCE_AXIS: return lower_reduce(L, u);
  case TKC_OP_STORE: { /* STORE(DEFINE_GLOBAL, VIEW, value) */
    tkc_uop *val = lower_uop(L, u->src[2], 0);
    if (!val || view_at(L, u->src[1], 0, &idx, &valid)) return NULL;
    valid = and2(g, and2(g, valid, L->launch_valid), L->store_gate);
    tkc_uop *s[3] = {u->src[0], idx, valid};
    tkc_uop *index = tkc_uop_new(g, TKC_OP_INDEX, u->src[0]->dtype, valid ? 3 : 2, s, tkc_arg_none());
    tkc_uop *s2[2] = {index, val};
    return index ? tkc_uop_new(g, TKC_OP_STORE, tkc_dt_of(TKC_VOID), 2, s2, tkc_arg_none()) : NULL;
  }
  default: { /* ALU, CAST, BITCAST, SINK: rebuild over lowered sources */
    tkc_uop *src[8];
    if (u->nsrc > 8) return tkc_err_null(TKC_EINTERNAL, "lowerer: %s with %d sources", tkc_op_name((tkc_op)u->op), u->nsrc);
    for (int i = 0; i < u->nsrc; i++)
      if (!(src[i] = lower_uop(L, u->src[i], in_reduce))) return NULL;
    return tkc_uop_new(g, (tkc_op)u->op, u->dtype, u->nsrc, src, u->op == TKC_OP_SINK ? tkc_arg_none() : u->arg);
  }
  }
}

static tkc_uop *lower_uop(lower *L, tkc_uop *u, int in_reduce) {
  tkc_uop *done = tkc_umap_get(&L->memo[in_reduce], u);
  if (done) return done;
  tkc_uop *r = lower_node(L, u, in_reduce);
  if (r && tkc_umap_put(&L->memo[in_reduce], u, r)) return tkc_err_null(TKC_ENOMEM, "out of memory lowering");
  return r;
}

/* The thread axes (LOCAL, GROUP_LOCAL) from the thread index lidx0: the GROUP_LOCAL ones vary
 * fastest, and of each kind the last axis fastest. */
static void thread_indices(lower *L) {
  tkc_graph *g = L->g;
  const tkc_kshape *ks = L->ks;
  int64_t threads = tkc_kshape_threads(ks), stride = 1;
  L->tid = tkc_uop_special(g, "lidx0", threads);
  L->group_threads = 1;
  for (int pass = 0; pass < 2; pass++)
    for (int a = ks->naxes - 1; a >= 0; a--) {
      if (ks->ax[a].kind != (pass ? TKC_AX_LOCAL : TKC_AX_GROUP_LOCAL)) continue;
      tkc_uop *q = stride == 1 ? L->tid : tkc_uop_alu2(g, TKC_OP_IDIV, L->tid, ci(g, stride));
      stride *= ks->ax[a].size;
      L->axis_idx[a] = stride == threads ? q : tkc_uop_alu2(g, TKC_OP_MOD, q, ci(g, ks->ax[a].size));
      if (!pass) L->group_threads *= ks->ax[a].size;
    }
  if (L->group_threads > 1) {
    tkc_uop *first = L->group_threads == threads ? L->tid : tkc_uop_alu2(g, TKC_OP_MOD, L->tid, ci(g, L->group_threads));
    L->store_gate = tkc_uop_alu2(g, TKC_OP_CMPLT, first, ci(g, 1));
  }
}

/* The global axes as one flattened launch grid: linear = (gidx1*G0 + gidx0)*L + lidx0, the last
 * global axis varying fastest. Without thread axes from opts (and without NOLOCALS) a block of
 * L output positions is one workgroup; with them a workgroup is one output position's threads. */
static void launch_indices(lower *L, const tkc_renderer *r) {
  tkc_graph *g = L->g;
  const tkc_kshape *ks = L->ks;
  int nglobal = tkc_kshape_first_reduce(ks);
  bool threads = tkc_kshape_threads(ks) > 1;
  int64_t total = 1, maxl = r->local_max[0] > 0 ? r->local_max[0] : 1, l = 1;
  for (int a = 0; a < nglobal; a++) total *= ks->ax[a].size;
  if (maxl > 256) maxl = 256;
  if (threads || ks->nolocals) maxl = 1;
  while (l * 2 <= maxl && total % (l * 2) == 0) l *= 2; /* a block size that divides: no partial block */
  int64_t blocks = total / l, g0 = blocks, g1 = 1;
  if (l < 32 && total >= 4096 && maxl >= 64) { /* awkward sizes: full blocks plus a guarded tail */
    l = 64;
    blocks = (total + l - 1) / l;
    g0 = blocks;
  }
  if (g0 > r->global_max[0]) {
    g0 = r->global_max[0];
    g1 = (blocks + g0 - 1) / g0;
  }
  tkc_uop *linear = g0 > 1 || g1 > 1 ? special(g, "gidx0", g0) : ci(g, 0);
  if (g1 > 1) linear = tkc_uop_alu2(g, TKC_OP_ADD, tkc_uop_alu2(g, TKC_OP_MUL, special(g, "gidx1", g1), ci(g, g0)), linear);
  if (l > 1) linear = tkc_uop_alu2(g, TKC_OP_ADD, tkc_uop_alu2(g, TKC_OP_MUL, linear, ci(g, l)), special(g, "lidx0", l));
  if (g0 * g1 * l != total) L->launch_valid = tkc_uop_alu2(g, TKC_OP_CMPLT, linear, ci(g, total));
  int64_t stride = 1;
  for (int a = nglobal - 1; a >= 0; a--) {
    tkc_uop *q = stride == 1 ? linear : tkc_uop_alu2(g, TKC_OP_IDIV, linear, ci(g, stride));
    stride *= ks->ax[a].size;
    L->axis_idx[a] = stride == total ? q : tkc_uop_alu2(g, TKC_OP_MOD, q, ci(g, ks->ax[a].size));
  }
  if (threads) thread_indices(L);
}

/* STORE k of W lane STOREs, its value lane k of the W values packed as one vector (when that packs
 * into more than a VECTORIZE of the scalars) */
static tkc_uop *store_lane(lower *L, tkc_packer *P, tkc_uop *const *st, int w, int64_t k) {
  tkc_uop *vals[TKC_MAX_VEC];
  for (int i = 0; i < w; i++) {
    if (st[i]->op != TKC_OP_STORE || st[i]->nsrc != 2) return st[k];
    vals[i] = st[i]->src[1];
  }
  tkc_uop *v = tkc_pack_values(P, vals);
  if (!v || v->op == TKC_OP_VECTORIZE) return st[k];
  tkc_arg ix = tkc_arg_int(k);
  tkc_uop *s2[2] = {st[k]->src[0], tkc_uop_new(L->g, TKC_OP_GEP, vals[k]->dtype, 1, &v, tkc_arg_tuple(&ix, 1))};
  return s2[1] ? tkc_uop_new(L->g, TKC_OP_STORE, st[k]->dtype, 2, s2, tkc_arg_none()) : st[k];
}

static tkc_uop *lower_kernel(tkc_graph *g, tkc_uop *ast, const tkc_kshape *ks, const tkc_renderer *r, tkc_uop **order, size_t n);

tkc_uop *tkc_lower_kernel(tkc_graph *g, tkc_uop *ast, const tkc_kshape *ks, const tkc_renderer *r, bool *simplified) {
  *simplified = false;
  if (!ast || ast->op != TKC_OP_SINK || ast->nsrc != 1 || !ks) return tkc_err_null(TKC_EINTERNAL, "lowerer: the AST is not SINK(STORE)");
  size_t n;
  tkc_uop **order = tkc_toposort(ast, &n);
  if (!order) return NULL;
  tkc_dtype idx = index_dtype(ks, order, n);
  tkc_uop *sink = NULL;
  if (idx == TKC_INT64 && r && (r->unsupported_dtypes >> TKC_INT64 & 1))
    tkc_err(TKC_EUNSUPPORTED, "%s: this kernel indexes past 2^31 - 1 elements, which needs 64-bit indices, and %s has no 64-bit integers "
            "(split the tensor, or use a host device)", r->name, r->name);
  else if (idx == TKC_INT64 && ks->tc)
    tkc_err(TKC_EUNSUPPORTED, "lowerer: tensor cores with 64-bit indices (a matmul past 2^31 - 1 elements): lower it without TC");
  else if (ks->tc)
    *simplified = (sink = tkc_lower_tc(g, ast, ks, r)) != NULL; /* (tensor_core.c simplifies its kernel) */
  else {
    idx_scalar = idx;
    sink = lower_kernel(g, ast, ks, r, order, n);
    idx_scalar = TKC_INT32;
  }
  tkc_free(order);
  return sink;
}

static tkc_uop *lower_kernel(tkc_graph *g, tkc_uop *ast, const tkc_kshape *ks, const tkc_renderer *r, tkc_uop **order, size_t n) {
  lower L = {.g = g, .ks = ks, .ndim = ks->ndim, .group_threads = 1, .r = r};
  int gpu = r && r->global_max[0] > 0;
  L.vectors = r && r->supports_float4;
  L.aligned = gpu;
  if (gpu) launch_indices(&L, r);
  for (int a = gpu ? tkc_kshape_first_reduce(ks) : 0; a < ks->naxes; a++) {
    tkc_axis_kind k = ks->ax[a].kind;
    if (k == TKC_AX_LOCAL || k == TKC_AX_GROUP_LOCAL) {
      if (!gpu) return tkc_err_null(TKC_EINTERNAL, "lowerer: workgroup axes for a renderer without workgroups");
      continue; /* set by launch_indices */
    }
    int d = ks->ax[a].dim;
    bool var = k < TKC_AX_UPCAST && ks->var[d].name[0]; /* (no opt splits such a dim) */
    L.axis_idx[a] = k >= TKC_AX_UPCAST ? ci(g, 0) : tkc_uop_range(g, ci(g, 0), var ? var_length(&L, d) : ci(g, ks->ax[a].size), a);
    if (var) L.var_loop[d] = true;
  }
  int up[TKC_MAX_AXES];
  int64_t nl;
  int nup = lane_axes(&L, TKC_AX_UPCAST, NULL, up, &nl);
  size_t nparams = 0;
  for (size_t i = 0; i < n; i++) nparams += order[i]->op == TKC_OP_DEFINE_GLOBAL && order[i]->arg.v.i > 0;
  tkc_uop **src = tkc_malloc(((size_t)nl + nparams) * sizeof *src), *sink = NULL;
  int64_t ns = 0;
  if (!src) return tkc_err_null(TKC_ENOMEM, "out of memory lowering");
  set_indices(&L);
  find_spills(&L, ast->src[0], order, n);
  for (int64_t lane = 0; lane < nl; lane++) { /* one STORE per output lane */
    set_lanes(&L, up, nup, lane);
    tkc_umap_free(&L.memo[0]);
    tkc_umap_free(&L.memo[1]);
    if (!(src[ns++] = lower_uop(&L, ast->src[0], 0))) goto done;
  }
  tkc_packer *P = packer_for(&L, up, nup);
  if (P) { /* the first upcast axis as vectors: W contiguous STOREs -> one vector STORE */
    int64_t w = ks->ax[up[0]].size, kept = 0;
    for (int64_t base = 0; base < ns; base += w) {
      tkc_uop *group[TKC_MAX_VEC], *v = tkc_pack_stores(P, src + base);
      if (v) src[kept++] = v;
      else { /* strided stores: the values still as one vector, stored lane by lane */
        for (int64_t k = 0; k < w; k++) group[k] = store_lane(&L, P, src + base, (int)w, k);
        for (int64_t k = 0; k < w; k++) src[kept++] = group[k];
      }
    }
    ns = kept;
  }
  /* every buffer stays a parameter, even one the simplified kernel no longer reads */
  for (size_t i = 0; i < n; i++)
    if (order[i]->op == TKC_OP_DEFINE_GLOBAL && order[i]->arg.v.i > 0) src[ns++] = order[i];
  if (L.nspills) {
    tkc_uop **all = tkc_realloc(src, ((size_t)ns + (size_t)L.nspills) * sizeof *src);
    if (!all) { tkc_err(TKC_ENOMEM, "out of memory lowering"); goto done; }
    src = all;
    memcpy(src + ns, L.spills, (size_t)L.nspills * sizeof *src);
    ns += L.nspills;
  }
  sink = tkc_uop_sink(g, (int)ns, src);
done:
  tkc_free(L.spills);
  tkc_free(L.vmemo);
  tkc_umap_free(&L.memo[0]);
  tkc_umap_free(&L.memo[1]);
  for (int k = 0; k < 5; k++) tkc_packer_free(L.packers[k]);
  tkc_free(src);
  return sink;
}

tkc_uop *tkc_lower_opts(tkc_graph *g, tkc_uop *ast, const tkc_kshape *ks, const tkc_renderer *r) {
  bool simplified;
  tkc_uop *sink = tkc_lower_kernel(g, ast, ks, r, &simplified);
  return sink && !simplified ? tkc_simplify(g, sink) : sink;
}

tkc_uop *tkc_lower(tkc_graph *g, tkc_uop *ast, const tkc_renderer *r) {
  tkc_kshape ks;
  return tkc_kshape_init(&ks, ast) ? NULL : tkc_lower_opts(g, ast, &ks, r);
}
