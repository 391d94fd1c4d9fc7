/* The default opts of a kernel (tinygrad's hand_coded_optimizations, adapted to host CPUs):
 *   matmul-like reduce (an output axis a load reads contiguously and another load broadcasts):
 *     a register tile: UPCAST that axis by the SIMD width (x2 when it is the contiguous output axis),
 *     UPCAST another output axis by 4 (or 3, 5, 2; 8 with 32 vector registers and a long k), and SWAP a contiguous vector axis outermost, so
 *     its panel of the contiguous input stays in cache while the other axis streams past it (and the
 *     cores split it); a conv with channel-last weights vectorizes over its output channels;
 *   reduce over an axis the loads read contiguously (sum, max, softmax rows): GROUP it by the SIMD
 *     width and again by 4: four vector accumulators; dot products (A B^T, both along k): GROUP by
 *     the SIMD width and a 4x4 tile of outputs (UPCAST two broadcast output axes by 4);
 *   other reduces: UPCAST the contiguous output axis by the SIMD width (vector accumulators);
 *   elementwise: UPCAST the contiguous output axis by the SIMD width, or the widest half or quarter of
 *     it that divides the axis (vector loads and stores).
 * GPU renderers (tinygrad's GPU branch):
 *   a long reduce (4K or more per output, and few outputs or 16K or more): GROUP its last reduce axis
 *     by 256 threads of a workgroup (GROUPTOP when no load reads it contiguously), PADTO 256 first
 *     when 256 does not divide it, so any size runs across a workgroup;
 *   a float16/bfloat16 matmul whose sizes fit: TC (tensor cores, PTX sm_80+);
 *   matmul-like: an 8 x 4 register tile (UPCAST two broadcast output axes by 8 and 4);
 *   elementwise, where the renderer has vector accesses: UPCAST the contiguous output axis by 4.
 * The first upcast axis becomes vector loads/stores where the renderer has them (PTX ld.v4) and the
 * index is provably aligned. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "codegen/codegen.h"
#include "codegen/opts.h"

int tkc_host_simd_bytes(void) {
  const char *e = getenv("TKC_SIMD_BYTES");
  if (e && *e) {
    long v = strtol(e, NULL, 10);
    if (v == 16 || v == 32 || v == 64) return (int)v;
  }
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return 64;
  if (__builtin_cpu_supports("avx2") || __builtin_cpu_supports("avx")) return 32;
#endif
  return 16;
}

/* The settings the heuristics read besides the kernel and renderer: TKC_SIMD_BYTES as set (the
 * host's width it stands for is the same in every run on this machine). */
int tkc_heuristics_key(char *buf, size_t n) {
  const char *simd = getenv("TKC_SIMD_BYTES");
  return snprintf(buf, n, "simd=%s", simd ? simd : "");
}

#define MAX_LOADS 32

/* Element strides of every loaded view along every kernel dim (0 = broadcast; -1 = not affine). */
typedef struct strides {
  int n;
  int64_t s[MAX_LOADS][TKC_MAX_DIMS];
} strides;

static void load_strides(const tkc_uop *ast, int ndim, strides *S) {
  size_t n;
  tkc_uop **order = tkc_toposort(ast, &n);
  tkc_graph *g = order ? tkc_graph_new() : NULL;
  S->n = 0;
  for (size_t i = 0; g && i < n && S->n < MAX_LOADS; i++) {
    const tkc_uop *u = order[i];
    tkc_st st;
    if (u->op != TKC_OP_LOAD || u->nsrc < 2 || tkc_st_from_arg(&st, &u->src[1]->arg) || tkc_st_ndim(&st) != ndim) continue;
    for (int d = 0; d < ndim; d++) {
      int64_t stride = tkc_st_stride(&st, g, d);
      S->s[S->n][d] = stride == INT64_MIN ? -1 : stride;
    }
    S->n++;
  }
  tkc_graph_free(g);
  tkc_free(order);
}

static bool has_transcendental(const tkc_uop *ast) {
  size_t n;
  tkc_uop **order = tkc_toposort(ast, &n);
  bool found = !order;
  for (size_t i = 0; order && i < n && !found; i++)
    found = order[i]->op == TKC_OP_EXP2 || order[i]->op == TKC_OP_LOG2 || order[i]->op == TKC_OP_SIN || order[i]->op == TKC_OP_POW;
  tkc_free(order);
  return found;
}

static bool some_load(const strides *S, int dim, int64_t stride) {
  for (int i = 0; i < S->n; i++)
    if (S->s[i][dim] == stride) return true;
  return false;
}

/* whether a load that the reduce reads (one that moves along a reduce axis: not an epilogue's operand,
 * such as the gate a SwiGLU's up projection multiplies by) reads dim d contiguously */
static bool reduce_operand_load(const strides *S, const tkc_kshape *ks, int d) {
  for (int i = 0; i < S->n; i++) {
    if (S->s[i][d] != 1) continue;
    for (int a = tkc_kshape_first_reduce(ks); a < ks->naxes; a++)
      if (ks->ax[a].kind == TKC_AX_REDUCE && S->s[i][ks->ax[a].dim] != 0) return true;
  }
  return false;
}

/* whether a load that reads dim vdim contiguously reads dim d broadcast (an epilogue's loads may
 * not: a reduce's operands are what the register tile reuses) */
static bool vector_broadcast(const strides *S, int vdim, int d) {
  for (int i = 0; i < S->n; i++)
    if (S->s[i][vdim] == 1 && S->s[i][d] == 0) return true;
  return false;
}

static void try_opt(tkc_kshape *ks, tkc_opt_op op, int axis, int amount, const tkc_renderer *r) {
  tkc_kshape t = *ks;
  if (tkc_kshape_apply(&t, (tkc_opt){op, axis, amount}, r) == TKC_OK) *ks = t;
}

/* the loop axis of kernel dim d, or -1 */
static int axis_of(const tkc_kshape *ks, int d) {
  for (int a = 0; a < ks->naxes; a++)
    if (ks->ax[a].dim == d && ks->ax[a].kind <= TKC_AX_REDUCE) return a;
  return -1;
}

/* whether every REDUCE_AXIS of ast reduces kernel dim d (a workgroup can then share its threads) */
static bool all_reduce(const tkc_uop *ast, int d) {
  size_t n;
  tkc_uop **order = tkc_toposort(ast, &n);
  bool all = order != NULL;
  for (size_t i = 0; all && i < n; i++) {
    if (order[i]->op != TKC_OP_REDUCE_AXIS) continue;
    const tkc_arg *axes = &order[i]->arg.v.t[1];
    bool has = false;
    for (uint32_t k = 0; k < axes->n; k++) has |= axes->v.t[k].v.i == d;
    all = has;
  }
  tkc_free(order);
  return all;
}

enum { GPU_GROUP = 256, GPU_GROUP_OUTPUTS = 2048, GPU_LONG_REDUCE = 16384 };

static void gpu_heuristics(tkc_kshape *ks, const tkc_uop *ast, const tkc_renderer *r, const strides *S) {
  tkc_tc_info tc;
  if (r->tensor_cores && tkc_tc_match(ast, ks, r, &tc) == TKC_OK) { /* a float16/bfloat16 matmul: tensor cores */
    try_opt(ks, TKC_OPT_TC, 0, 0, r);
    if (ks->tc) return;
  }
  int first_reduce = tkc_kshape_first_reduce(ks), last = ks->naxes - 1;
  int64_t outputs = 1, reduce = 1;
  for (int a = 0; a < ks->naxes; a++) *(a < first_reduce ? &outputs : &reduce) *= ks->ax[a].size;
  if (first_reduce < ks->naxes && r->has_shared && (outputs <= GPU_GROUP_OUTPUTS || reduce >= GPU_LONG_REDUCE) && reduce >= 16 * GPU_GROUP &&
      ks->ax[last].size >= GPU_GROUP && all_reduce(ast, ks->ax[last].dim)) {
    int d = ks->ax[last].dim, ra = last - first_reduce;
    if (ks->ax[last].size % GPU_GROUP) try_opt(ks, TKC_OPT_PADTO, last, GPU_GROUP, r);
    try_opt(ks, some_load(S, d, 1) ? TKC_OPT_GROUP : TKC_OPT_GROUPTOP, ra, GPU_GROUP, r);
    return;
  }
  if (first_reduce == ks->naxes) { /* elementwise: 4 contiguous outputs per thread (vector loads/stores) */
    int c = first_reduce - 1;
    if (r->supports_float4 && c >= 0 && ks->ax[c].size % 4 == 0 && ks->ax[c].size >= 8 && some_load(S, ks->ax[c].dim, 1)) try_opt(ks, TKC_OPT_UPCAST, c, 4, r);
    return;
  }
  /* a register tile over two output axes that some load broadcasts (matmul, conv): with vector
   * accesses the inner (contiguous) axis is upcast first, so its lanes become the vectors; without,
   * the outer one first (lane order is then free) */
  int pick[2], npick = 0;
  for (int a = first_reduce - 1; a >= 0 && npick < 2 && first_reduce < ks->naxes; a--)
    if (ks->ax[a].size % 4 == 0 && ks->ax[a].size >= 8 && some_load(S, ks->ax[a].dim, 0)) pick[npick++] = a;
  for (int i = 0; i < npick; i++) { /* sizes >= 8: no axis disappears, the indices stay valid */
    int a = pick[r->supports_float4 ? i : npick - 1 - i];
    bool outer = a != pick[0]; /* 8 rows where they divide: 32 accumulators, 12 loads per 32 FMAs */
    try_opt(ks, TKC_OPT_UPCAST, a, outer && ks->ax[a].size % 8 == 0 && ks->ax[a].size >= 16 ? 8 : 4, r);
  }
}

/* A transpose (a load reads the output's contiguous dim cdim strided, and another output dim
 * contiguously): upcast that dim too, and the dims after it in the load's contiguous run, up to a
 * cache line of elements, so every line read is used whole while it is in cache. Row by row, the
 * lines of one vector of outputs lie a power-of-two stride apart and evict each other (a 512x4608
 * weight transposed: 4-7 ms, tiled 1 ms). */
static void transpose_tile(tkc_kshape *ks, const strides *S, int cdim, int item, const tkc_renderer *r) {
  int line = item > 0 && item < 64 ? 64 / item : 1;
  for (int i = 0; cdim >= 0 && i < S->n; i++) {
    if (S->s[i][cdim] == 0 || S->s[i][cdim] == 1 || S->s[i][cdim] < line) continue;
    int64_t stride = 1;
    for (int have = 1; have < line;) {
      int d = 0, a;
      while (d < ks->ndim && (d == cdim || S->s[i][d] != stride || axis_of(ks, d) < 0)) d++;
      if (d == ks->ndim) break;
      a = axis_of(ks, d);
      int64_t size = ks->ax[a].size;
      int amount = 1;
      for (int u = line / have; u >= 2 && amount == 1; u--)
        if (size % u == 0) amount = u;
      if (amount == 1) break;
      tkc_kshape t = *ks;
      if (tkc_kshape_apply(&t, (tkc_opt){TKC_OPT_UPCAST, a, amount}, r) != TKC_OK) break;
      *ks = t;
      have *= amount;
      if (amount != size) break; /* the rest of the run is not contiguous with this part */
      stride *= size;
    }
    return;
  }
}

/* Short output axes (2 to 16) that two or more loads all read broadcast: the axes of a cat or stack
 * (each input padded along it, read where its own slice is), whose values differ only by what the
 * pads' masks select. Unrolled whole, each copy of the body sees its position as a constant and
 * keeps just its own input's loads; looped over, every output evaluates every input's gated loads
 * (a stack of 16 inputs: 30x slower). */
static void joined_axis(tkc_kshape *ks, const strides *S, const tkc_renderer *r) {
  if (S->n < 2) return;
  for (int a = 0; a < ks->naxes; a++) {
    int d = ks->ax[a].dim;
    if (ks->ax[a].kind != TKC_AX_GLOBAL || ks->ax[a].size < 2 || ks->ax[a].size > 16) continue;
    bool all = true;
    for (int i = 0; i < S->n && all; i++) all = S->s[i][d] == 0;
    if (!all) continue;
    int64_t before = tkc_kshape_lanes(ks);
    try_opt(ks, TKC_OPT_UPCAST, a, (int)ks->ax[a].size, r);
    if (tkc_kshape_lanes(ks) != before) a--; /* (the axis became lanes: the next one is at a now) */
  }
}

/* rows of a register tile along an output row that 8, 7, 6 and 4 do not divide: a divisor in 9..13
 * (26 -> 13: 13 vector accumulators), 0 when none */
static int long_row_tile(int64_t n) {
  for (int d = 13; d > 8; d--)
    if (n % d == 0) return d;
  return 0;
}

void tkc_heuristics(tkc_kshape *ks, const tkc_uop *ast, const tkc_renderer *r) {
  if (!r || ast->nsrc != 1) return;
  if (r->global_max[0] > 0) {
    strides S;
    load_strides(ast, ks->ndim, &S);
    gpu_heuristics(ks, ast, r, &S);
    return;
  }
  if (!r->supports_float4) return;
  const tkc_uop *store = ast->src[0];
  size_t item = store->nsrc >= 3 ? tkc_dt_itemsize(store->src[2]->dtype) : 4;
  int w = item ? tkc_host_simd_bytes() / (int)item : 0;
  if (w > TKC_MAX_VEC) w = TKC_MAX_VEC;
  if (w < 2) return;
  if (has_transcendental(ast)) return; /* what transcendental.c left (pow, float64): libm per lane */
  strides S;
  load_strides(ast, ks->ndim, &S);
  int first_reduce = tkc_kshape_first_reduce(ks), c = first_reduce ? first_reduce - 1 : -1; /* the contiguous output axis */
  int cdim = c >= 0 ? ks->ax[c].dim : -1;
  int64_t csize = c >= 0 ? ks->ax[c].size : 0;
  if (first_reduce == ks->naxes) { /* elementwise: the widest vector that divides the row (24: 8 lanes) */
    for (int v = w; c >= 0 && v >= 4; v /= 2)
      if (csize % v == 0) {
        try_opt(ks, TKC_OPT_UPCAST, c, v, r);
        break;
      }
    transpose_tile(ks, &S, cdim, (int)item, r);
    joined_axis(ks, &S, r);
    return;
  }
  /* matmul-like: an output axis one load reads contiguously and another broadcasts (the contiguous
   * output axis if it is one, else e.g. the output channels of a conv with channel-last weights) */
  int v = -1;
  for (int lanes = w; lanes >= 8 && v < 0; lanes /= 2) { /* half vectors where no axis divides by the width (N = 1000) */
    for (int a = first_reduce - 1; a >= 0 && v < 0; a--)
      if (ks->ax[a].size % lanes == 0 && reduce_operand_load(&S, ks, ks->ax[a].dim) && some_load(&S, ks->ax[a].dim, 0)) v = a;
    if (v >= 0) w = lanes;
  }
  if (v >= 0) {
    int vdim = ks->ax[v].dim, m = -1;
    if (v != c) {
      m = c;
      /* rows of the output row, unless it divides badly (34 = 2 x 17): then another axis the vector
       * operand is broadcast along too, that 8 divides (a conv's batch, whose rows each read their own
       * image: 26-wide rows of a CNN's input gradient ran 1.45x slower so than 13 rows of the row) */
      if (w >= 16 && csize % 8 && csize % 7 && csize % 6 && csize % 4 && !long_row_tile(csize))
        for (int a = 0; a < first_reduce; a++)
          if (a != v && a != c && ks->ax[a].size % 8 == 0 && vector_broadcast(&S, ks->ax[v].dim, ks->ax[a].dim) &&
              (m == c || ks->ax[a].size > ks->ax[m].size))
            m = a;
    } else /* the rows: an axis along which the vector operand is broadcast (a conv's output channels,
          * not its batch: rows of the batch would each load their own vectors), the longest */
      for (int pass = 0; pass < 2 && m < 0; pass++)
        for (int a = 0; a < first_reduce; a++)
          if (a != c && ks->ax[a].size % 4 == 0 && (pass || vector_broadcast(&S, ks->ax[v].dim, ks->ax[a].dim)) &&
              (m < 0 || ks->ax[a].size > ks->ax[m].size))
            m = a;
    int64_t msize = m >= 0 ? ks->ax[m].size : 0;
    int mdim = m >= 0 ? ks->ax[m].dim : -1;
    try_opt(ks, TKC_OPT_UPCAST, v, w, r);
    /* two vectors: along the contiguous output axis, or (32 registers) along another one, e.g. a
     * conv's output channels */
    if (ks->ax[v].dim == vdim && ks->ax[v].size % 2 == 0 && ks->ax[v].size >= 4 && (v == c || w >= 16))
      try_opt(ks, TKC_OPT_UPCAST, v, 2, r);
    if (m >= 0) {
      int ma = axis_of(ks, mdim); /* its index after the upcasts of v */
      /* 8 rows when the registers allow (32 with AVX-512: 16 accumulators) and k is long enough
       * that the B panel, not the A rows, is what each pass streams (on one core here: 1.6x at
       * k = 768 and 1024, 1.05-1.6x at 128-512; at k = 64, 4 rows are faster) */
      int64_t klen = 1;
      for (int a = 0; a < ks->naxes; a++)
        if (ks->ax[a].kind == TKC_AX_REDUCE) klen *= ks->ax[a].size;
      int amounts[8] = {4, 3, 5, 2, 0};
      if (w >= 16 && msize % 8 == 0 && klen >= 128) amounts[0] = 8, amounts[4] = 4;
      else if (w >= 16 && m == c && long_row_tile(msize)) /* (past the lane limit with two vectors: 7) */
        memcpy(amounts, (const int[]){long_row_tile(msize), 7, 6, 4, 5, 3, 2, 0}, sizeof amounts);
      else if (w >= 16 || v != c) /* rows of 7x7, 14x14 images (P = 49, 196): 7 of them, with two vectors 14
                                    * accumulators (32 registers), with one (AVX2's 16) 7 */
        memcpy(amounts, (const int[]){7, 6, 4, 5, 3, 2, 0, 0}, sizeof amounts);
      int64_t before = tkc_kshape_lanes(ks);
      for (int k = 0; k < 8 && amounts[k] && ma >= 0 && tkc_kshape_lanes(ks) == before; k++) /* the first that divides and fits */
        if (msize % amounts[k] == 0) try_opt(ks, TKC_OPT_UPCAST, ma, amounts[k], r);
    }
    int vn = axis_of(ks, vdim);
    /* the vector panel outermost, unless too few of them split unevenly across the cores (7 panels
     * of a 14x14 conv's 224 positions: one core did 4 of 7, 12% of the kernel lost) */
    if (v == c && vn > 0 && vn < tkc_kshape_first_reduce(ks) && (ks->ax[vn].size % 2 == 0 || ks->ax[vn].size >= 16))
      try_opt(ks, TKC_OPT_SWAP, 0, vn, r);
    return;
  }
  /* a reduce the loads read contiguously: vector accumulators */
  for (int a = first_reduce; a < ks->naxes; a++) {
    /* the SIMD width, or on an AVX-512 host half of it (still a whole AVX2 vector) where that divides
     * the axis (24 blocks of 32 weights per row, word-major: tkc_state_matmul's int8 path) */
    int64_t size = ks->ax[a].size;
    int lanes = size % w == 0 ? w : w >= 16 && size % (w / 2) == 0 ? w / 2 : 0;
    if (ks->ax[a].kind != TKC_AX_REDUCE || !some_load(&S, ks->ax[a].dim, 1) || !lanes) continue;
    int d = ks->ax[a].dim;
    /* dot products (A B^T: a matmul whose operands both run along k): two output axes that one load
     * broadcasts and another reads, each upcast by 4: a 4x4 tile of vector accumulators, 8 loads
     * per 16 FMAs instead of 2 per 1 */
    int tile[2], tamt[2], ntile = 0;
    for (int o = first_reduce - 1; o >= 0 && ntile < 2; o--) {
      /* 4, or for a short axis that 4 does not divide (a 10-class output layer) 5 or 2 */
      int64_t sz = ks->ax[o].size;
      int amt = sz % 4 == 0 && sz >= 8 ? 4 : w >= 16 && sz % 5 == 0 && sz >= 10 ? 5 : sz % 2 == 0 && sz >= 4 ? 2 : 0;
      if (amt && some_load(&S, ks->ax[o].dim, 0)) tamt[ntile] = amt, tile[ntile++] = ks->ax[o].dim;
    }
    try_opt(ks, TKC_OPT_GROUP, a - first_reduce, lanes, r);
    if (ntile == 2) {
      for (int i = 0; i < 2; i++) {
        int ta = axis_of(ks, tile[i]);
        int64_t before = tkc_kshape_lanes(ks);
        if (ta >= 0) try_opt(ks, TKC_OPT_UPCAST, ta, tamt[i], r);
        if (ta >= 0 && tkc_kshape_lanes(ks) == before && tamt[i] > 2 && ks->ax[ta].size % 2 == 0) try_opt(ks, TKC_OPT_UPCAST, ta, 2, r); /* past the lane limit after a 5 */
      }
      return;
    }
    int a2 = axis_of(ks, d);
    if (a2 >= 0 && ks->ax[a2].size % 4 == 0 && ks->ax[a2].size >= 16) try_opt(ks, TKC_OPT_GROUP, a2 - tkc_kshape_first_reduce(ks), 4, r);
    return;
  }
  /* a reduce over a strided axis: vector accumulators along the contiguous output axis (also when
   * the loads read it strided and another broadcasts it: a short-k matmul against a transposed
   * operand, whose lanes are then gathered, still beats one scalar accumulator) */
  if (c < 0 || !(some_load(&S, cdim, 1) || some_load(&S, cdim, 0))) return;
  for (int lanes = w; lanes >= 4; lanes /= 2) /* the widest vector that divides the row (a 56-wide pool: 8 lanes) */
    if (csize % lanes == 0) {
      try_opt(ks, TKC_OPT_UPCAST, c, lanes, r);
      break;
    }
  /* and rows of another output axis that a load broadcasts (the output rows of a scatter-add, whose
   * indices and values every row compares against): each vector loaded serves 4-8 accumulators
   * instead of one, and the reduce's operands are streamed once per tile, not once per row */
  int fr = tkc_kshape_first_reduce(ks), row = -1;
  for (int a = 0; a < fr; a++)
    if (ks->ax[a].dim != cdim && ks->ax[a].size % 4 == 0 && some_load(&S, ks->ax[a].dim, 0) && (row < 0 || ks->ax[a].size > ks->ax[row].size)) row = a;
  if (row >= 0) try_opt(ks, TKC_OPT_UPCAST, row, w >= 16 && ks->ax[row].size % 8 == 0 ? 8 : 4, r);
}
