/* Tensor cores from the tensor API (tinygrad's TC opt, for PTX's mma.sync.m16n8k16): a matmul-like
 * kernel  out[b.., m, n] = cast(sum_k cast_f32(A[b.., m, k]) * cast_f32(B[b.., k, n]))  (or the
 * product cast to float32 after the multiply) with float16 or
 * bfloat16 inputs becomes one warp per 16 x 8 output tile. Each of the warp's 32 lanes (grp = lane/4,
 * tig = lane%4) loads its fragment of A (8 values) and B (4 values) per 16-long step of k, one WMMA
 * accumulates into its 4 float32 outputs, and the lanes store them. Fragment layouts are the PTX
 * ISA's for mma.m16n8k16 (see kb_wmma in tests/kernels.h, which checks them on a GPU):
 *   A element i: row grp + 8*((i>>1)&1), col 2*tig + (i&1) + 8*(i>>2)
 *   B element i: row (k) 2*tig + (i&1) + 8*(i>>1), col (n) grp
 *   C element i: row grp + 8*(i>>1), col 2*tig + (i&1)
 * The tensor API widens the inputs before the multiply (sum_k cast_f32(A) * cast_f32(B), src/graph/
 * composite.c), which matches too: the products are exact in float32 either way, so results differ
 * from the plain kernel only by the order of the float32 sums. Fused casts match as well: A or B a
 * float32 LOAD cast to float16/bfloat16 and back (matmul(cast(a, f16), cast(b, f16)), tinygrad's
 * TC_OPT=1); the fragment loads then read float32 and convert each value once (cvt.rn on PTX), so
 * the mma gets the very halves the unfused program would multiply. */
#include <stdlib.h>
#include <string.h>
#include "codegen/codegen.h"
#include "codegen/opts.h"

static tkc_dt i32(void) { return tkc_dt_of(TKC_INT32); }
static tkc_uop *ci(tkc_graph *g, int64_t v) { return tkc_uop_const_int(g, i32(), v); }
static tkc_uop *add(tkc_graph *g, tkc_uop *a, tkc_uop *b) { return a && b ? tkc_uop_alu2(g, TKC_OP_ADD, a, b) : NULL; }
static tkc_uop *mul(tkc_graph *g, tkc_uop *a, int64_t k) { return a ? tkc_uop_alu2(g, TKC_OP_MUL, a, ci(g, k)) : NULL; }

/* An operand of the product: the LOAD under at most one CAST to float32, and with fused casts
 * (matmul(cast(a, f16), cast(b, f16)) of float32 a, b) a CAST of a float32 LOAD to float16 or
 * bfloat16 between them. *dt: the dtype the tensor cores get (the LOAD's, or the narrowing CAST's);
 * the fragments then convert the float32 values once, as the unfused kernel's cast would. Not a LOAD
 * read at computed indices (a folded gather). */
static const tkc_uop *load_of(const tkc_uop *u, int *dt) {
  if (u->op == TKC_OP_CAST && u->dtype.scalar == TKC_FLOAT32 && u->nsrc == 1) u = u->src[0];
  *dt = u->dtype.scalar;
  if (u->op == TKC_OP_CAST && u->nsrc == 1 && !u->dtype.space && u->dtype.count == 1 && (*dt == TKC_FLOAT16 || *dt == TKC_BFLOAT16) &&
      (u->src[0]->dtype.scalar == TKC_FLOAT32 || u->src[0]->dtype.scalar == *dt))
    u = u->src[0];
  return u->op == TKC_OP_LOAD && u->nsrc == 2 && u->src[1]->op == TKC_OP_VIEW && !u->src[1]->nsrc ? u : NULL;
}

/* the element stride of a LOAD's view along kernel dim d (INT64_MIN: not affine) */
static int64_t stride_of(tkc_graph *g, const tkc_uop *load, int ndim, int d) {
  tkc_st st;
  if (tkc_st_from_arg(&st, &load->src[1]->arg) || tkc_st_ndim(&st) != ndim) return INT64_MIN;
  return tkc_st_stride(&st, g, d);
}

tkc_status tkc_tc_match(const tkc_uop *ast, const tkc_kshape *ks, const tkc_renderer *r, tkc_tc_info *info) {
  memset(info, 0, sizeof *info);
  if (!r || !r->tensor_cores || !r->tensor_cores()) return tkc_err(TKC_EINVAL, "TC: renderer %s has no tensor cores for its target", r ? r->name : "INTERP");
  const tkc_uop *store = ast->nsrc == 1 ? ast->src[0] : NULL, *v = store && store->nsrc == 3 ? store->src[2] : NULL;
  if (v && v->op == TKC_OP_CAST) v = v->src[0];
  if (!v || v->op != TKC_OP_REDUCE_AXIS || v->dtype.scalar != TKC_FLOAT32 || v->arg.v.t[0].v.i != TKC_OP_ADD || v->arg.v.t[1].n != 1)
    return tkc_err(TKC_EINVAL, "TC: the kernel is not a float32-accumulated sum over one axis");
  const tkc_uop *m = v->src[0];
  if (m->op == TKC_OP_CAST && m->dtype.scalar == TKC_FLOAT32) m = m->src[0];
  if (m->op != TKC_OP_MUL) return tkc_err(TKC_EINVAL, "TC: the summed value is not a product");
  int din = -1, ydt = -1;
  const tkc_uop *x = load_of(m->src[0], &din), *y = load_of(m->src[1], &ydt);
  if (!x || !y || ydt != din || (din != TKC_FLOAT16 && din != TKC_BFLOAT16))
    return tkc_err(TKC_EINVAL, "TC: the product is not of two float16 or bfloat16 loads (or float32 loads cast to one of them)");
  int kd = (int)v->arg.v.t[1].v.t[0].v.i, nd = ks->ndim;
  if (kd < 0 || kd >= nd || ks->full[kd] % 16) return tkc_err(TKC_EINVAL, "TC: the reduce axis (%lld) is not a multiple of 16", kd >= 0 && kd < nd ? (long long)ks->full[kd] : -1LL);
  tkc_graph *g = tkc_graph_new();
  if (!g) return tkc_last_status();
  int md = -1, ndim_n = -1;
  bool swap = false;
  for (int a = 0; a < nd && md < 0; a++)
    for (int b = 0; b < nd && md < 0; b++) {
      if (a == b || a == kd || b == kd || ks->full[a] != ks->out[a] || ks->full[b] != ks->out[b] || ks->full[a] % 16 || ks->full[b] % 8) continue;
      for (int s = 0; s < 2 && md < 0; s++) { /* A: broadcast along n, B: broadcast along m */
        const tkc_uop *A = s ? y : x, *B = s ? x : y;
        if (stride_of(g, A, nd, b) == 0 && stride_of(g, B, nd, a) == 0 && stride_of(g, A, nd, a) != 0 && stride_of(g, B, nd, b) != 0)
          md = a, ndim_n = b, swap = s;
      }
    }
  tkc_graph_free(g);
  if (md < 0) return tkc_err(TKC_EINVAL, "TC: no output axes of sizes 16k and 8k that the two inputs broadcast like a matmul");
  *info = (tkc_tc_info){.m = md, .n = ndim_n, .k = kd, .din = din, .reduce = v, .a = swap ? y : x, .b = swap ? x : y};
  return TKC_OK;
}

/* the value of a LOAD (A or B of the product) at the kernel indices idx, as din (a float32 LOAD of
 * fused casts: converted here, cvt.rn on PTX) */
static tkc_uop *load_at(tkc_graph *g, const tkc_uop *load, tkc_uop *const *idx, tkc_dt din) {
  tkc_st st;
  tkc_uop *index, *valid;
  if (tkc_st_from_arg(&st, &load->src[1]->arg) || tkc_st_expr(&st, g, idx, &index, &valid)) return NULL;
  tkc_uop *s[3] = {load->src[0], index, valid};
  tkc_uop *ix = tkc_uop_new(g, TKC_OP_INDEX, load->src[0]->dtype, valid ? 3 : 2, s, tkc_arg_none());
  tkc_uop *v = ix ? tkc_uop_new(g, TKC_OP_LOAD, load->dtype, 1, &ix, tkc_arg_none()) : NULL;
  return v ? tkc_uop_cast(g, v, din) : NULL; /* (v itself when it is din already) */
}

tkc_uop *tkc_lower_tc(tkc_graph *g, tkc_uop *ast, const tkc_kshape *ks, const tkc_renderer *r) {
  tkc_tc_info tc;
  if (tkc_tc_match(ast, ks, r, &tc)) return NULL;
  int nd = ks->ndim;
  int64_t M = ks->full[tc.m], N = ks->full[tc.n], K = ks->full[tc.k], tiles = (M / 16) * (N / 8);
  for (int d = 0; d < nd; d++)
    if (d != tc.m && d != tc.n && d != tc.k) tiles *= ks->out[d];
  if (tiles > r->global_max[0]) return tkc_err_null(TKC_EINVAL, "TC: %lld tiles pass the launch grid's %d", (long long)tiles, r->global_max[0]);
  tkc_uop *lane = tkc_uop_special(g, "lidx0", 32), *t = tkc_uop_special(g, "gidx0", tiles);
  tkc_uop *grp = tkc_uop_alu2(g, TKC_OP_IDIV, lane, ci(g, 4)), *tig = tkc_uop_alu2(g, TKC_OP_MOD, lane, ci(g, 4));
  tkc_uop *base[TKC_MAX_DIMS]; /* per dim: the batch index, the tile's first row / column, 0 for k */
  int64_t stride = 1;
  for (int d = nd - 1; d >= 0; d--) { /* the tile index: batch dims outermost, then m tiles, then n tiles */
    int64_t size = d == tc.m ? M / 16 : d == tc.n ? N / 8 : d == tc.k ? 1 : ks->out[d];
    tkc_uop *q = stride == 1 ? t : tkc_uop_alu2(g, TKC_OP_IDIV, t, ci(g, stride));
    base[d] = size == 1 ? ci(g, 0) : stride * size == tiles ? q : tkc_uop_alu2(g, TKC_OP_MOD, q, ci(g, size));
    stride *= size;
  }
  base[tc.m] = mul(g, base[tc.m], 16);
  base[tc.n] = mul(g, base[tc.n], 8);
  tkc_uop *k0 = tkc_uop_range(g, ci(g, 0), ci(g, K / 16), 0), *kb = mul(g, k0, 16);
  tkc_uop *av[8], *bv[4], *idx[TKC_MAX_DIMS];
  tkc_dt din = tkc_dt_of((tkc_dtype)tc.din), f4 = tkc_dt_vec(tkc_dt_of(TKC_FLOAT32), 4);
  for (int i = 0; i < 8; i++) {
    memcpy(idx, base, sizeof(tkc_uop *) * (size_t)nd);
    idx[tc.m] = add(g, base[tc.m], add(g, grp, ci(g, ((i >> 1) & 1) * 8)));
    idx[tc.k] = add(g, kb, add(g, mul(g, tig, 2), ci(g, (i & 1) + (i >> 2) * 8)));
    if (!(av[i] = load_at(g, tc.a, idx, din))) return NULL;
  }
  for (int i = 0; i < 4; i++) {
    memcpy(idx, base, sizeof(tkc_uop *) * (size_t)nd);
    idx[tc.k] = add(g, kb, add(g, mul(g, tig, 2), ci(g, (i & 1) + (i >> 1) * 8)));
    idx[tc.n] = add(g, base[tc.n], grp);
    if (!(bv[i] = load_at(g, tc.b, idx, din))) return NULL;
  }
  tkc_uop *va = tkc_uop_new(g, TKC_OP_VECTORIZE, tkc_dt_vec(din, 8), 8, av, tkc_arg_none());
  tkc_uop *vb = tkc_uop_new(g, TKC_OP_VECTORIZE, tkc_dt_vec(din, 4), 4, bv, tkc_arg_none());
  tkc_uop *s2[2] = {tkc_uop_new(g, TKC_OP_CONST, f4, 0, NULL, tkc_arg_float(0.0)), k0};
  tkc_uop *acc = s2[0] ? tkc_uop_new(g, TKC_OP_DEFINE_ACC, f4, 2, s2, tkc_arg_int(0)) : NULL;
  char name[64];
  snprintf(name, sizeof name, "WMMA_8_16_16_%s_float", tkc_dtype_name((tkc_dtype)tc.din));
  tkc_arg dims[3] = {tkc_arg_int(8), tkc_arg_int(16), tkc_arg_int(16)}, none[1] = {tkc_arg_none()};
  tkc_arg args[8] = {tkc_arg_str(name), tkc_arg_tuple(dims, 3), tkc_arg_int(tc.din), tkc_arg_int(TKC_FLOAT32), tkc_arg_str("CUDA"), tkc_arg_int(32),
                     tkc_arg_tuple(none, 0), tkc_arg_tuple(none, 0)};
  tkc_uop *s3[3] = {va, vb, acc};
  tkc_uop *w = va && vb && acc ? tkc_uop_new(g, TKC_OP_WMMA, f4, 3, s3, tkc_arg_tuple(args, 8)) : NULL;
  tkc_uop *s4[2] = {acc, w}, *done = w ? tkc_uop_new(g, TKC_OP_ASSIGN, f4, 2, s4, tkc_arg_none()) : NULL;
  if (!done) return NULL;
  /* the four outputs of the lane: STORE(out, view at (row, col), cast(acc[e])) */
  const tkc_uop *store = ast->src[0], *val = store->src[2];
  tkc_st st;
  if (tkc_st_from_arg(&st, &store->src[1]->arg)) return tkc_err_null(TKC_EINTERNAL, "TC: malformed output view");
  tkc_uop *src[4 + 32];
  int ns = 0;
  for (int e = 0; e < 4; e++) {
    memcpy(idx, base, sizeof(tkc_uop *) * (size_t)nd);
    idx[tc.m] = add(g, base[tc.m], add(g, grp, ci(g, (e >> 1) * 8)));
    idx[tc.n] = add(g, base[tc.n], add(g, mul(g, tig, 2), ci(g, e & 1)));
    idx[tc.k] = ci(g, 0);
    tkc_arg ix = tkc_arg_int(e);
    tkc_uop *x = tkc_uop_new(g, TKC_OP_GEP, tkc_dt_of(TKC_FLOAT32), 1, &done, tkc_arg_tuple(&ix, 1)), *index, *valid;
    if (x && val->op == TKC_OP_CAST) x = tkc_uop_cast(g, x, val->dtype);
    if (!x || tkc_st_expr(&st, g, idx, &index, &valid)) return NULL;
    tkc_uop *s5[3] = {store->src[0], index, valid}, *at = tkc_uop_new(g, TKC_OP_INDEX, store->src[0]->dtype, valid ? 3 : 2, s5, tkc_arg_none());
    tkc_uop *s6[2] = {at, x};
    if (!at || !(src[ns++] = tkc_uop_new(g, TKC_OP_STORE, tkc_dt_of(TKC_VOID), 2, s6, tkc_arg_none()))) return NULL;
  }
  size_t n;
  tkc_uop **order = tkc_toposort(ast, &n);
  if (!order) return NULL;
  for (size_t i = 0; i < n && ns < (int)TKC_COUNTOF(src); i++)
    if (order[i]->op == TKC_OP_DEFINE_GLOBAL && order[i]->arg.v.i > 0) src[ns++] = order[i];
  tkc_free(order);
  tkc_uop *sink = tkc_uop_sink(g, ns, src);
  return sink ? tkc_simplify(g, sink) : NULL;
}
