/* The codegen driver: the stages that turn a kernel AST into source, in order, one line each in
 * `stages` below. Each stage reads and writes the tkc_codegen it is given; adding a stage is adding
 * its function and its line.
 *
 * TKC_DEBUG shows what some stages made, at the level in their line (what the stage's `show`
 * prints; only for kernels built with report set, i.e. not for beam search's candidates):
 *   3  opts: "tkc: NAME opts UPCAST(0,4) ..."; at 6 also the AST going in (after transcendental)
 *   6  late_rules: the lowered kernel
 *   5  linearize, 4 render: the linearized UOps and the source are printed by the program once it is
 *      compiled (tkc_program_debug_built: once per kernel built, after its "built" line), not here.
 * TKC_DEBUG_STAGE=name,name,... (or "all") prints the graph (the source, for render) after each named
 * stage to stderr, whatever TKC_DEBUG is. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "codegen/pipeline.h"

typedef enum stage_out { OUT_AST, OUT_SINK, OUT_UOPS, OUT_SOURCE } stage_out;

typedef struct stage {
  const char *name;
  tkc_status (*run)(tkc_codegen *cg);
  int debug_level;                     /* TKC_DEBUG level at which show runs (0: never) */
  void (*show)(const tkc_codegen *cg); /* TKC_DEBUG output (NULL: none here) */
  stage_out out;                       /* what TKC_DEBUG_STAGE prints after it */
} stage;

bool tkc_codegen_noopt(void) {
  const char *e = getenv("TKC_NOOPT");
  return e && *e && strcmp(e, "0") != 0;
}

static tkc_status failed(void) {
  tkc_status st = tkc_last_status();
  return st ? st : tkc_err(TKC_EINTERNAL, "codegen: a stage failed without saying why");
}

static tkc_status need(const void *input, const char *who, const char *what) {
  return input ? TKC_OK : tkc_err(TKC_EINTERNAL, "codegen: the %s stage has no %s (an earlier stage skipped)", who, what);
}

/* ---------------------------------------------------------------- the stages */

/* EXP2/LOG2/SIN as polynomials on host devices and INTERP (codegen/transcendental.c) */
static tkc_status transcendental(tkc_codegen *cg) {
  tkc_status st = need(cg->ast, "transcendental", "AST");
  if (!st && tkc_wants_transcendental_rules(cg->r) && !(cg->ast = tkc_graph_rewrite(cg->g, cg->ast, tkc_transcendental_rules(), NULL))) st = failed();
  return st;
}

/* DOT4 as int32 shifts, masks and products where the renderer has no form of its own (codegen/dot4.c) */
static tkc_status dot4(tkc_codegen *cg) {
  tkc_status st = need(cg->ast, "dot4", "AST");
  if (!st && tkc_wants_dot4_rules(cg->r) && !(cg->ast = tkc_graph_rewrite(cg->g, cg->ast, tkc_dot4_rules(), NULL))) st = failed();
  return st;
}

/* sums over an arange compare folded: a gather per output instead of a loop (codegen/index_folding.c),
 * before the opts so that they see the kernel that is left */
static tkc_status index_folding(tkc_codegen *cg) {
  tkc_status st = need(cg->ast, "index_folding", "AST");
  if (!st && !(cg->ast = tkc_fold_indices(cg->g, cg->ast))) st = failed();
  return st;
}

/* the kernel's axes, then the caller's opts or the heuristics' (codegen/opts.c, heuristics.c), and
 * its name: the shape's, the opts', made unique by the kernel key when there is one */
static tkc_status opts(tkc_codegen *cg) {
  tkc_status st = need(cg->ast, "opts", "AST");
  if (!st) st = tkc_kshape_init(&cg->ks, cg->ast);
  if (!st && cg->given_opts) {
    for (int i = 0; i < cg->nopts && !st; i++) st = tkc_kshape_apply(&cg->ks, cg->opts[i], cg->r);
  } else if (!st && !tkc_codegen_noopt()) {
    tkc_heuristics(&cg->ks, cg->ast, cg->r);
  }
  if (st) return st;
  tkc_kernel_base_name(cg->ast, cg->name, sizeof cg->name);
  tkc_kshape_name(&cg->ks, cg->name, sizeof cg->name);
  if (cg->key) tkc_kernel_unique_name(cg->name, sizeof cg->name, cg->key);
  return TKC_OK;
}

/* AST -> UOps with loops / launch indices, lanes packed into vectors, index math (codegen/lowerer.c
 * with the expander, codegen/expander.c, inside it: see there why they are one stage) */
static tkc_status lower(tkc_codegen *cg) {
  tkc_status st = need(cg->ast, "lower", "AST");
  if (!st && !(cg->sink = tkc_lower_kernel(cg->g, cg->ast, &cg->ks, cg->r, &cg->simplified))) st = failed();
  return st;
}

/* the symbolic rules over the whole kernel (uops/symbolic.c) */
static tkc_status simplify(tkc_codegen *cg) {
  tkc_status st = need(cg->sink, "simplify", "kernel");
  if (!st && !cg->simplified && !(cg->sink = tkc_simplify(cg->g, cg->sink))) st = failed();
  if (!st) cg->simplified = true;
  return st;
}

/* fp8 values as uint8 bits, their casts as integer ops, for every device (codegen/fp8.c) */
static tkc_status fp8(tkc_codegen *cg) {
  tkc_status st = need(cg->sink, "fp8", "kernel");
  if (!st && !(cg->sink = tkc_fp8_to_bits(cg->g, cg->sink))) st = failed();
  return st;
}

/* a*b+c -> MULACC (codegen/devectorizer.c) */
static tkc_status late_rules(tkc_codegen *cg) {
  tkc_status st = need(cg->sink, "late_rules", "kernel");
  if (!st && !(cg->sink = tkc_graph_rewrite(cg->g, cg->sink, tkc_late_rules(), NULL))) st = failed();
  return st;
}

/* tinygrad's pm_render with symbolic_simple, in one rewrite: masks to gated LOAD/STORE, vector
 * constants and GEPs to VECTORIZE (codegen/render_prep.c) */
static tkc_status render_prep(tkc_codegen *cg) {
  static tkc_matcher *_Atomic prep;
  tkc_status st = need(cg->sink, "render_prep", "kernel");
  const tkc_matcher *pm = atomic_load(&prep);
  if (!st && !pm) { /* built once */
    tkc_matcher *fresh = tkc_matcher_concat(tkc_symbolic_simple(), tkc_render_prep()), *expected = NULL;
    if (!fresh) return failed();
    if (atomic_compare_exchange_strong(&prep, &expected, fresh)) pm = fresh;
    else {
      tkc_matcher_free(fresh);
      pm = expected;
    }
  }
  if (!st && !(cg->sink = tkc_graph_rewrite(cg->g, cg->sink, pm, NULL))) st = failed();
  return st;
}

/* the renderer's own rewrites (its extra_matcher: PTX's bool compares, WGSL's packed storage ...) */
static tkc_status renderer_rules(tkc_codegen *cg) {
  tkc_status st = need(cg->sink, "renderer_rules", "kernel");
  const tkc_matcher *pm = !st && cg->r && cg->r->extra_matcher ? cg->r->extra_matcher() : NULL;
  if (pm && !(cg->sink = tkc_graph_rewrite(cg->g, cg->sink, pm, NULL))) st = failed();
  return st;
}

/* the kernel graph -> an instruction list (codegen/linearize.c) */
static tkc_status linearize(tkc_codegen *cg) {
  tkc_status st = need(cg->sink, "linearize", "kernel");
  tkc_free(cg->uops);
  cg->uops = NULL;
  if (!st && !(cg->uops = tkc_linearize(cg->g, cg->sink, &cg->nuops))) st = failed();
  return st;
}

/* the instruction list -> source (the renderer's render; INTERP runs the UOps: no source) */
static tkc_status render(tkc_codegen *cg) {
  tkc_status st = need(cg->uops, "render", "instruction list");
  tkc_free(cg->source);
  cg->source = NULL;
  if (!st && cg->r && !(cg->source = tkc_render(cg->r, cg->symbol ? cg->symbol : cg->name[0] ? cg->name : NULL, cg->uops, cg->nuops))) st = failed();
  return st;
}

/* ---------------------------------------------------------------- TKC_DEBUG output */

static void dump(const char *name, const char *what, const tkc_uop *u) {
  char *text = tkc_uop_str(u);
  fprintf(stderr, "tkc: %s: %s\n%s", name, what, text ? text : "(out of memory)\n");
  tkc_free(text);
}

static void show_opts(const tkc_codegen *cg) {
  char o[256];
  tkc_kshape_opts_str(&cg->ks, o, sizeof o);
  fprintf(stderr, "tkc: %s opts %s\n", cg->name, o);
  if (tkc_debug_level() >= 6) dump(cg->name, "AST (after the transcendental rules)", cg->ast);
}

static void show_lowered(const tkc_codegen *cg) { dump(cg->name, "lowered kernel (after the late rules)", cg->sink); }

/* ---------------------------------------------------------------- the table */

static const stage stages[] = {
    {"transcendental", transcendental, 0, NULL, OUT_AST},
    {"dot4", dot4, 0, NULL, OUT_AST},
    {"index_folding", index_folding, 0, NULL, OUT_AST},
    {"opts", opts, 3, show_opts, OUT_AST},
    {"lower", lower, 0, NULL, OUT_SINK},
    {"simplify", simplify, 0, NULL, OUT_SINK},
    {"fp8", fp8, 0, NULL, OUT_SINK},
    {"late_rules", late_rules, 6, show_lowered, OUT_SINK},
    {"render_prep", render_prep, 0, NULL, OUT_SINK},
    {"renderer_rules", renderer_rules, 0, NULL, OUT_SINK},
    {"linearize", linearize, 5, NULL, OUT_UOPS}, /* shown by tkc_program_debug_built */
    {"render", render, 4, NULL, OUT_SOURCE},     /* likewise */
};
#define NSTAGES TKC_COUNTOF(stages)

static int stage_index(const char *name, size_t len) {
  for (size_t i = 0; i < NSTAGES; i++)
    if (strlen(stages[i].name) == len && !strncmp(stages[i].name, name, len)) return (int)i;
  return -1;
}

/* TKC_DEBUG_STAGE as a bit per stage, read once (an unknown name is reported once, on stderr: the
 * variable asks for debug output) */
static uint32_t debug_stages(void) {
  static _Atomic int64_t mask = -1; /* threads racing here store the same value */
  int64_t m = atomic_load_explicit(&mask, memory_order_relaxed);
  if (m >= 0) return (uint32_t)m;
  const char *e = getenv("TKC_DEBUG_STAGE");
  m = 0;
  for (const char *p = e ? e : ""; *p;) {
    size_t len = strcspn(p, ", ");
    int i = stage_index(p, len);
    if (len == 3 && !strncmp(p, "all", 3)) m = ((int64_t)1 << NSTAGES) - 1;
    else if (i >= 0) m |= (int64_t)1 << i;
    else if (len) {
      fprintf(stderr, "tkc: TKC_DEBUG_STAGE: no stage \"%.*s\" (stages:", (int)len, p);
      for (size_t j = 0; j < NSTAGES; j++) fprintf(stderr, " %s", stages[j].name);
      fprintf(stderr, ", or all)\n");
    }
    p += len;
    p += strspn(p, ", ");
  }
  int64_t expected = -1;
  atomic_compare_exchange_strong(&mask, &expected, m);
  return (uint32_t)atomic_load(&mask);
}

static void print_uops(const tkc_codegen *cg) {
  tkc_umap pos = {0};
  for (size_t i = 0; i < cg->nuops; i++) tkc_umap_put(&pos, cg->uops[i], (tkc_uop *)(uintptr_t)(i + 1));
  for (size_t i = 0; i < cg->nuops; i++) {
    const tkc_uop *u = cg->uops[i];
    char dt[64];
    tkc_dt_str(u->dtype, dt, sizeof dt);
    fprintf(stderr, "%4zu %-20s: %-28s [", i, tkc_op_name((tkc_op)u->op), dt);
    for (int j = 0; j < u->nsrc; j++) {
      uintptr_t at = (uintptr_t)tkc_umap_get(&pos, u->src[j]);
      if (at) fprintf(stderr, j ? ", %zu" : "%zu", (size_t)(at - 1));
      else fprintf(stderr, j ? ", --" : "--");
    }
    fprintf(stderr, "]\n");
  }
  tkc_umap_free(&pos);
}

static void print_stage(const tkc_codegen *cg, const stage *s) {
  const char *name = cg->name[0] ? cg->name : "kernel";
  char what[64];
  snprintf(what, sizeof what, "after %s", s->name);
  switch (s->out) {
  case OUT_AST: dump(name, what, cg->ast); break;
  case OUT_SINK: dump(name, what, cg->sink); break;
  case OUT_UOPS:
    fprintf(stderr, "tkc: %s: %s (%zu uops)\n", name, what, cg->nuops);
    print_uops(cg);
    break;
  case OUT_SOURCE: fprintf(stderr, "tkc: %s: %s\n%s\n", name, what, cg->source ? cg->source : "(no source: the device runs the UOps)"); break;
  }
}

/* ---------------------------------------------------------------- running */

tkc_status tkc_codegen_run(tkc_codegen *cg, const char *first, const char *last) {
  int from = first ? stage_index(first, strlen(first)) : 0, to = last ? stage_index(last, strlen(last)) : (int)NSTAGES - 1;
  if (from < 0 || to < 0) return tkc_err(TKC_EINTERNAL, "codegen: no stage \"%s\"", from < 0 ? first : last);
  uint32_t shown = cg->report ? debug_stages() : 0;
  for (int i = from; i <= to; i++) {
    const stage *s = &stages[i];
    tkc_status st = s->run(cg);
    if (st) return st;
    if (cg->report && s->show && s->debug_level && tkc_debug_level() >= s->debug_level) s->show(cg);
    if (shown >> i & 1) print_stage(cg, s);
  }
  return TKC_OK;
}

tkc_status tkc_codegen_move(tkc_codegen *cg, tkc_graph *dst) {
  tkc_status st = need(cg->sink, "move", "kernel");
  if (st) return st;
  size_t n;
  tkc_uop **order = tkc_toposort(cg->sink, &n);
  if (!order) return failed();
  tkc_umap map = {0};
  tkc_uop *out = NULL, *local[16];
  for (size_t i = 0; i < n; i++) {
    tkc_uop *u = order[i];
    tkc_uop **src = u->nsrc <= 16 ? local : tkc_malloc(u->nsrc * sizeof *src);
    if (!src) {
      out = NULL;
      break;
    }
    for (int j = 0; j < u->nsrc; j++) src[j] = tkc_umap_get(&map, u->src[j]);
    out = tkc_uop_new(dst, (tkc_op)u->op, u->dtype, u->nsrc, src, u->arg);
    if (src != local) tkc_free(src);
    if (!out || tkc_umap_put(&map, u, out)) {
      out = NULL;
      break;
    }
  }
  tkc_free(order);
  tkc_umap_free(&map);
  if (!out) return tkc_err(TKC_ENOMEM, "out of memory copying a kernel");
  cg->g = dst;
  cg->sink = out;
  return TKC_OK;
}

void tkc_codegen_clear(tkc_codegen *cg) {
  tkc_free(cg->uops);
  tkc_free(cg->source);
  cg->uops = NULL;
  cg->source = NULL;
  cg->nuops = 0;
}

char *tkc_codegen_finish_source(tkc_codegen *cg) {
  if (!cg->r) return tkc_err_null(TKC_EINVAL, "tkc_render: NULL renderer or empty kernel");
  tkc_graph *pg = tkc_graph_new(), *g = cg->g;
  char *src = NULL;
  if (pg && !tkc_codegen_move(cg, pg) && !tkc_codegen_run(cg, "render_prep", NULL)) {
    src = cg->source;
    cg->source = NULL;
  }
  tkc_codegen_clear(cg);
  cg->g = g; /* (the kernel in pg goes with it) */
  cg->sink = NULL;
  tkc_graph_free(pg);
  return src;
}

char *tkc_codegen_source(tkc_uop *sink, const tkc_renderer *r, const char *name) {
  tkc_codegen cg = {.r = r, .sink = sink, .symbol = name};
  return tkc_codegen_finish_source(&cg);
}
