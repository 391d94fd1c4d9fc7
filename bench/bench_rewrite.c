/* bench_rewrite: how fast graph_rewrite simplifies the index math of 4-D kernels.
 *
 * For several shapes and two kinds of view it builds a SINK over the expressions a lowered
 * kernel carries (the buffer offset sum(ridx*stride), the per-axis indices recovered with // and %,
 * a reshape's row/column, validity compares of a padded view, a WHERE-guarded index), then times
 *   - tkc_simplify (tinygrad's symbolic rules), and
 *   - tkc_graph_rewrite with a trivial matcher (one rule, x+0 -> x, that never fires here): the
 *     cost of the traversal, memoization and rule lookup alone.
 * Every timed call gets a fresh graph: graphs are built (untimed) in batches of BATCH, then the
 * BATCH rewrites are timed together; each case repeats batches until MIN_SECONDS of rewriting
 * were timed (or MAX_WALL seconds passed, building included: the trivial matcher is so fast that
 * building the graphs is most of the work).
 * Output: one JSON object per line. Nothing here asserts on time. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "tkc/uop.h"

#define BATCH 16
#define MIN_SECONDS 0.25 /* of timed rewrites per case */
#define MAX_WALL 1.0     /* seconds per case, graph building included */

typedef struct {
  const char *name;
  int64_t shape[4];
  int view; /* 0: contiguous + reshape, 1: NHWC-permuted + padded by 1 on H and W */
} bench_case;

static const bench_case cases[] = {
    {"contig_2x3x4x4", {2, 3, 4, 4}, 0},     {"contig_16x16x32x32", {16, 16, 32, 32}, 0},
    {"contig_1x64x56x56", {1, 64, 56, 56}, 0}, {"contig_8x3x224x224", {8, 3, 224, 224}, 0},
    {"pad_perm_2x3x4x4", {2, 3, 4, 4}, 1},   {"pad_perm_16x16x32x32", {16, 16, 32, 32}, 1},
    {"pad_perm_1x64x56x56", {1, 64, 56, 56}, 1}, {"pad_perm_8x3x224x224", {8, 3, 224, 224}, 1},
};

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The SINK of one case's expressions in a fresh graph g; NULL on error. */
static tkc_uop *build(tkc_graph *g, const bench_case *c) {
  tkc_dt i32 = tkc_dt_of(TKC_INT32);
#define C(v) tkc_uop_const_int(g, i32, (v))
#define ADD(a, b) tkc_uop_alu2(g, TKC_OP_ADD, (a), (b))
#define MUL(a, b) tkc_uop_alu2(g, TKC_OP_MUL, (a), (b))
#define DIV(a, b) tkc_uop_alu2(g, TKC_OP_IDIV, (a), (b))
#define MOD(a, b) tkc_uop_alu2(g, TKC_OP_MOD, (a), (b))
#define LT(a, b) tkc_uop_alu2(g, TKC_OP_CMPLT, (a), (b))
#define NOT(a) tkc_uop_alu2(g, TKC_OP_CMPNE, (a), tkc_uop_const_int(g, tkc_dt_of(TKC_BOOL), 1))
#define AND(a, b) tkc_uop_alu2(g, TKC_OP_AND, (a), (b))
  const int64_t *s = c->shape;
  int pad = c->view == 1;
  tkc_uop *r[4], *out[16];
  int n = 0;
  for (int i = 0; i < 4; i++) r[i] = tkc_uop_range(g, C(0), C(s[i] + (i >= 2 ? 2 * pad : 0)), i);
  if (c->view == 0) {
    int64_t st[4] = {s[1] * s[2] * s[3], s[2] * s[3], s[3], 1};
    tkc_uop *flat = ADD(ADD(ADD(MUL(r[0], C(st[0])), MUL(r[1], C(st[1]))), MUL(r[2], C(st[2]))), r[3]);
    out[n++] = flat;
    for (int i = 0; i < 4; i++) out[n++] = MOD(DIV(flat, C(st[i])), C(s[i])); /* unflatten each axis */
    out[n++] = DIV(flat, C(s[2] * s[3]));                                    /* reshape to (N*C, H*W) */
    out[n++] = MOD(flat, C(s[2] * s[3]));
    out[n++] = LT(flat, C(s[0] * st[0]));                                    /* always valid */
  } else {
    int64_t N = s[0], Cc = s[1], H = s[2], W = s[3];
    int64_t st[4] = {H * W * Cc, 1, W * Cc, Cc}; /* NCHW view of NHWC storage */
    tkc_uop *h = ADD(r[2], C(-1)), *w = ADD(r[3], C(-1));
    tkc_uop *valid = AND(AND(NOT(LT(h, C(0))), LT(h, C(H))), AND(NOT(LT(w, C(0))), LT(w, C(W))));
    tkc_uop *idx = ADD(ADD(ADD(MUL(r[0], C(st[0])), MUL(r[1], C(st[1]))), MUL(h, C(st[2]))), MUL(w, C(st[3])));
    out[n++] = valid;
    out[n++] = tkc_uop_alu3(g, TKC_OP_WHERE, valid, idx, C(0));
    out[n++] = MOD(DIV(idx, C(st[2])), C(H)); /* h back out of the offset */
    out[n++] = LT(idx, C(N * st[0]));
  }
  return tkc_uop_sink(g, n, out);
}

static size_t count_uops(const tkc_uop *root) {
  size_t n = 0;
  tkc_uop **order = tkc_toposort(root, &n);
  tkc_free(order);
  return order ? n : 0;
}

static tkc_uop *cb_x(tkc_graph *g, const tkc_match *m, void *ctx) {
  (void)g;
  (void)ctx;
  return tkc_match_get(m, "x");
}

/* Times one case with one matcher (NULL = tkc_simplify); prints its JSON line. */
static int run_case(const bench_case *c, const tkc_matcher *pm, const char *matcher_name) {
  tkc_graph *gs[BATCH];
  tkc_uop *roots[BATCH];
  double total_ns = 0;
  long iters = 0;
  size_t uops_in = 0, uops_out = 0;
  double start = now_ns();
  while (iters < 3 * BATCH || (total_ns < MIN_SECONDS * 1e9 && now_ns() - start < MAX_WALL * 1e9)) {
    for (int b = 0; b < BATCH; b++) {
      gs[b] = tkc_graph_new();
      roots[b] = gs[b] ? build(gs[b], c) : NULL;
      if (!roots[b]) {
        fprintf(stderr, "bench_rewrite: building %s failed: %s\n", c->name, tkc_last_error());
        for (int k = 0; k <= b; k++) tkc_graph_free(gs[k]);
        return 1;
      }
    }
    tkc_uop *res[BATCH];
    double t0 = now_ns();
    for (int b = 0; b < BATCH; b++) res[b] = pm ? tkc_graph_rewrite(gs[b], roots[b], pm, NULL) : tkc_simplify(gs[b], roots[b]);
    total_ns += now_ns() - t0;
    iters += BATCH;
    int failed = 0;
    for (int b = 0; b < BATCH; b++) failed |= !res[b];
    if (!failed && !uops_in) {
      uops_in = count_uops(roots[0]);
      uops_out = count_uops(res[0]);
    }
    if (failed) fprintf(stderr, "bench_rewrite: %s on %s failed: %s\n", matcher_name, c->name, tkc_last_error());
    for (int b = 0; b < BATCH; b++) tkc_graph_free(gs[b]);
    if (failed) return 1;
  }
  double ns = total_ns / (double)iters;
  printf("{\"bench\":\"rewrite\",\"case\":\"%s\",\"matcher\":\"%s\",\"uops_in\":%zu,\"uops_out\":%zu,"
         "\"ns_per_rewrite\":%.0f,\"rewritten_uops_per_s\":%.0f,\"iters\":%ld,\"graph\":\"fresh per rewrite\"}\n",
         c->name, matcher_name, uops_in, uops_out, ns, (double)uops_in / (ns * 1e-9), iters);
  fflush(stdout);
  return 0;
}

int main(void) {
  tkc_rule trivial_rule = {"(ADD x (CONST[0]))", cb_x};
  tkc_matcher *trivial = tkc_matcher_new(&trivial_rule, 1);
  if (!trivial || !tkc_symbolic()) {
    fprintf(stderr, "bench_rewrite: %s\n", tkc_last_error());
    tkc_matcher_free(trivial);
    return 1;
  }
  int status = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    status |= run_case(&cases[i], NULL, "symbolic");
    status |= run_case(&cases[i], trivial, "trivial");
  }
  tkc_matcher_free(trivial);
  return status;
}
