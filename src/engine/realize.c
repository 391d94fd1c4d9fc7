/* The realize driver: a lazy node -> its schedule -> for each kernel the codegen pipeline -> run.
 * build_kernel() is the pipeline, one stage per line (TKC_DEBUG levels show what each made):
 *   transcendental EXP2/LOG2/SIN -> polynomials on host devices and INTERP       (codegen/transcendental.c)
 *   kernel opts   the kernel's axes, then the heuristics' opts (none with TKC_NOOPT=1), or the
 *                 caller's for the last kernel (tkc_realize_opts)                     [3: the opts]
 *   lower         AST -> UOps with loops / launch indices, lanes, vectors, index math  (codegen/lowerer.c)
 *   late rules    a*b+c -> MULACC                                                     (codegen/devectorizer.c)
 * then tkc_program_prepare linearizes and renders, the compile pool compiles [1: a line per kernel
 * built, 4: its source, 5: its linearized uops, once per build] and the launch runs it [1: a line;
 * 2: tinygrad's line: launch number, name, memory in use, time and total time, GFLOPS, GB/s].
 * Kernel names are unique per distinct kernel (the second r_2_4 is r_2_4n1, as tinygrad names them).
 * TKC_DEBUG >= 6 also prints the AST going in and the lowered kernel coming out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h> /* not C11 threads: ThreadSanitizer sees pthread locks only */
#include "codegen/codegen.h"
#include "codegen/opts.h"
#include "graph/graph.h"
#include "graph/tensor_internal.h"
#include "engine/beam.h"
#include "engine/compile_pool.h"
#include "engine/jit.h"
#include "engine/kcache.h"
#include "runtime/device.h"

/* opts given by the caller for the last kernel of a realize (NULL: heuristics) */
typedef struct given_opts {
  const tkc_opt *opts;
  int n;
} given_opts;

static int noopt(void) {
  const char *e = getenv("TKC_NOOPT");
  return e && *e && strcmp(e, "0") != 0;
}

/* tinygrad's names: "r_" (a reduce) or "E_" and the full shape; a variable-length dim by its name */
static void base_name(const tkc_uop *ast, char *buf, size_t n) {
  const tkc_arg *out = &ast->arg.v.t[0], *full = &ast->arg.v.t[1];
  int reduce = 0;
  for (uint32_t i = 0; i < full->n; i++)
    reduce |= full->v.t[i].kind != out->v.t[i].kind || (full->v.t[i].kind == TKC_ARG_INT && full->v.t[i].v.i != out->v.t[i].v.i);
  size_t k = (size_t)snprintf(buf, n, "%s", reduce ? "r" : "E");
  for (uint32_t i = 0; i < full->n && k < n; i++) {
    const tkc_arg *d = &full->v.t[i];
    if (d->kind == TKC_ARG_INT) k += (size_t)snprintf(buf + k, n - k, "_%lld", (long long)d->v.i);
    else if (d->v.t[3].v.i) k += (size_t)snprintf(buf + k, n - k, "_%s%s%lld", d->v.t[0].v.s, d->v.t[3].v.i > 0 ? "p" : "m", (long long)llabs(d->v.t[3].v.i));
    else k += (size_t)snprintf(buf + k, n - k, "_%s", d->v.t[0].v.s);
  }
}

/* ---------------------------------------------------------------- kernel names
 * As tinygrad's Kernel.kernel_cnt: the second distinct kernel (by kernel key: device, opts, AST)
 * with a name gets "n1" appended, the third "n2", ... for the rest of the process, so that every
 * name in TKC_DEBUG output, in the rendered source and in the schedule's dot names one program. */

typedef struct kname {
  struct kname *next;
  char *base;
  uint64_t *keys; /* hashes of the kernel keys seen with this name, in order */
  size_t n, cap;
} kname;

static kname *knames;
static pthread_mutex_t kname_lock;
static pthread_once_t kname_once = PTHREAD_ONCE_INIT;
static void kname_init(void) { pthread_mutex_init(&kname_lock, NULL); }

static uint64_t key_hash(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
}

/* The number of the kernel key among the distinct kernels named base (0 for the first; 0 also
 * when out of memory: the name is then not made unique) */
static size_t name_number(const char *base, const char *key) {
  pthread_once(&kname_once, kname_init);
  uint64_t h = key_hash(key);
  size_t num = 0;
  pthread_mutex_lock(&kname_lock);
  kname *e = knames;
  while (e && strcmp(e->base, base)) e = e->next;
  if (!e) { /* the first kernel with this name */
    e = tkc_calloc(1, sizeof *e);
    if (e && !(e->base = tkc_strdup(base))) {
      tkc_free(e);
      e = NULL;
    }
    if (e) {
      e->next = knames;
      knames = e;
    }
  }
  if (e) {
    size_t i = 0;
    while (i < e->n && e->keys[i] != h) i++;
    if (i == e->n) {
      if (e->n == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 4;
        uint64_t *k = tkc_realloc(e->keys, cap * sizeof *k);
        if (k) { e->keys = k; e->cap = cap; }
      }
      if (e->n < e->cap) e->keys[e->n++] = h;
      else i = 0;
    }
    num = i;
  }
  pthread_mutex_unlock(&kname_lock);
  return num;
}

static void unique_name(char *name, size_t n, const char *key) {
  size_t num = name_number(name, key), len = strlen(name);
  if (num && len < n) snprintf(name + len, n - len, "n%zu", num);
}

static void dump(const char *stage, const char *name, const tkc_uop *u) {
  char *text = tkc_uop_str(u);
  fprintf(stderr, "tkc: %s: %s\n%s", name, stage, text ? text : "(out of memory)\n");
  tkc_free(text);
}

tkc_uop *tkc_engine_kernel_ast(tkc_graph *g, tkc_uop *ast, const tkc_renderer *r) {
  return tkc_wants_transcendental_rules(r) ? tkc_graph_rewrite(g, ast, tkc_transcendental_rules(), NULL) : ast;
}

/* The first stages of a kernel: the AST after the transcendental rules (*ast), its opts (ks) and
 * its name (made unique by key when key is given). -1 with the error. */
static int plan_kernel(tkc_graph *g, tkc_uop **ast, const tkc_renderer *r, const given_opts *given, const char *key, tkc_kshape *ks, char *name, size_t nname) {
  if (!(*ast = tkc_engine_kernel_ast(g, *ast, r))) return -1;
  if (tkc_kshape_init(ks, *ast)) return -1;
  if (given) {
    for (int i = 0; i < given->n; i++)
      if (tkc_kshape_apply(ks, given->opts[i], r)) return -1;
  } else if (!noopt()) {
    tkc_heuristics(ks, *ast, r);
  }
  base_name(*ast, name, nname);
  tkc_kshape_name(ks, name, nname);
  if (key) unique_name(name, nname, key);
  return 0;
}

/* The codegen pipeline of one kernel: its UOps for renderer r (NULL: INTERP) and its name (unique
 * by key when given). report: TKC_DEBUG output (not for beam search's candidates). */
static tkc_uop *build_kernel(tkc_graph *g, tkc_uop *ast, const tkc_renderer *r, const given_opts *given, const char *key, bool report, char *name,
                             size_t nname) {
  tkc_kshape ks;
  if (plan_kernel(g, &ast, r, given, key, &ks, name, nname)) return NULL;
  if (report && tkc_debug_level() >= 3) {
    char o[256];
    tkc_kshape_opts_str(&ks, o, sizeof o);
    fprintf(stderr, "tkc: %s opts %s\n", name, o);
  }
  if (report && tkc_debug_level() >= 6) dump("AST (after the transcendental rules)", name, ast);
  tkc_uop *k = tkc_lower_opts(g, ast, &ks, r);
  if (k) k = tkc_graph_rewrite(g, k, tkc_late_rules(), NULL);
  if (k && report && tkc_debug_level() >= 6) dump("lowered kernel (after the late rules)", name, k);
  return k;
}

tkc_uop *tkc_engine_build_kernel(tkc_graph *g, tkc_uop *ast, const tkc_renderer *r, const tkc_opt *opts, int nopts, char *name, size_t n) {
  given_opts given = {opts, nopts};
  return build_kernel(g, ast, r, &given, NULL, false, name, n);
}

/* What a built kernel depends on: the device, the opts (given, or the heuristics and the settings
 * they read) and the AST. Malloc'ed; NULL when out of memory. */
static char *kernel_key(const tkc_device *d, const tkc_uop *ast, const given_opts *given, int beam) {
  char *ast_str = tkc_uop_str(ast);
  if (!ast_str) return NULL;
  tkc_sbuf b = {0};
  const tkc_renderer *r = tkc_device_renderer(d);
  const char *arch = getenv("TKC_CUDA_ARCH"); /* the PTX target (and so TC) may change in a process */
  tkc_sbuf_printf(&b, "%s tc=%d arch=%s\n", tkc_device_name(d), r && r->tensor_cores ? r->tensor_cores() : 0, arch ? arch : "");
  if (given)
    for (int i = 0; i < given->n; i++) tkc_sbuf_printf(&b, "%d,%d,%d;", (int)given->opts[i].op, given->opts[i].axis, given->opts[i].amount);
  else {
    const char *simd = getenv("TKC_SIMD_BYTES");
    tkc_sbuf_printf(&b, "heuristics noopt=%d simd=%s beam=%d", noopt(), simd ? simd : "", beam);
  }
  tkc_sbuf_printf(&b, "\n%s", ast_str);
  tkc_free(ast_str);
  return tkc_sbuf_take(&b);
}

/* a schedule item's program: from the kernel cache, or built by this realize */
typedef struct built {
  tkc_program *p;
  tkc_kcache_ref ref;
  char *key;        /* when built here: its kernel cache key */
  double prepare_s; /* the time before compiling */
} built;

typedef struct build_report { /* what tkc_compile_all's callback needs */
  tkc_ctx *ctx;
  built *b;
  const int *item; /* job -> schedule item */
  int done, total;
} build_report;

static void compiled(void *user, int job, double seconds) {
  build_report *r = user;
  built *b = &r->b[r->item[job]];
  double t = b->prepare_s + seconds;
  r->ctx->kernels_built++;
  r->ctx->build_s += t;
  r->done++;
  const char *name = tkc_program_name(b->p);
  if (tkc_debug_level() >= 1) fprintf(stderr, "tkc: built %d/%d %s in %.3f s\n", r->done, r->total, name, t);
  tkc_program_debug_built(b->p); /* TKC_DEBUG >= 4: its source, once per kernel built */
  if (r->ctx->progress) r->ctx->progress(&(tkc_progress){"compile", name, r->done, r->total, t}, r->ctx->progress_user);
}

/* the sizes of it's buffers, for timing its kernel (inputs not realized yet are earlier items'
 * outputs: contiguous buffers of their shape) */
/* a node's element count at its variables' largest values (what its buffer holds) */
static int64_t max_numel(const tkc_lazy *n) { return tkc_shape_numel_max(n->ctx, n->ndim, n->shape); }

static void item_bufs(const tkc_sched_item *it, tkc_beam_bufs *bb) {
  bb->n = it->ninputs + 1;
  bb->dt[0] = it->out->dtype;
  bb->numel[0] = (size_t)max_numel(it->out);
  for (int i = 0; i < it->ninputs && i < 32; i++) {
    const tkc_lazy *in = it->inputs[i];
    bool real = in->kind == TKC_LZ_BUFFER;
    bb->dt[i + 1] = real ? tkc_buffer_dtype(in->rbuf->buf) : in->dtype;
    bb->numel[i + 1] = real ? tkc_buffer_numel(in->rbuf->buf) : (size_t)max_numel(in);
  }
}

/* The opts beam search picks for it (from an earlier search on disk, or searched now); false when
 * the search failed (the heuristics then). */
static bool beam_opts(tkc_schedule *s, tkc_sched_item *it, const char *key, int width, int done, int total, tkc_opt *opts, int *nopts) {
  tkc_ctx *ctx = it->out->ctx;
  if (tkc_beam_load(key, opts, nopts)) return true;
  tkc_beam_bufs bb;
  tkc_beam_result br;
  item_bufs(it, &bb);
  if (tkc_beam_search(s->g, it->ast, ctx->dev, &bb, width, &br)) {
    if (tkc_debug_level() >= 1) fprintf(stderr, "tkc: beam search failed (%s); using the heuristics' opts\n", tkc_last_error());
    tkc_clear_error();
    return false;
  }
  memcpy(opts, br.opts, sizeof br.opts);
  *nopts = br.nopts;
  tkc_beam_store(key, opts, *nopts);
  char name[160];
  base_name(it->ast, name, sizeof name);
  if (tkc_debug_level() >= 1) {
    tkc_kshape ks = {.nopts = br.nopts};
    memcpy(ks.opts, br.opts, sizeof br.opts);
    char o[256];
    tkc_kshape_opts_str(&ks, o, sizeof o);
    fprintf(stderr, "tkc: beam %d searched %s in %.2f s (%d candidates): %s, %.3f ms (heuristics %.3f ms, no opts %.3f ms)\n", width, name,
            br.search_s, br.tried, o, br.best_s * 1e3, br.heuristic_s * 1e3, br.noopt_s * 1e3);
  }
  if (ctx->progress) ctx->progress(&(tkc_progress){"search", name, done, total, br.search_s}, ctx->progress_user);
  return true;
}

/* The programs of every item of s: the kernel cache's, else built here, all the kernels this
 * realize lacks compiled at once (in parallel where the device allows) */
static tkc_status build_all(tkc_schedule *s, const given_opts *given, built *b) {
  int *item = tkc_calloc(s->n + 1, sizeof *item), njobs = 0, nmiss = 0, nsearched = 0;
  tkc_program **jobs = tkc_calloc(s->n + 1, sizeof *jobs);
  tkc_status st = item && jobs ? TKC_OK : tkc_err(TKC_ENOMEM, "out of memory building kernels");
  tkc_ctx *ctx = s->n ? s->items[0].out->ctx : NULL;
  int width = ctx && tkc_device_renderer(ctx->dev) && !noopt() ? tkc_beam_width(ctx->beam) : 0; /* TKC_NOOPT: no search either */
  for (size_t i = 0; !st && i < s->n; i++) { /* the kernel cache first */
    tkc_sched_item *it = &s->items[i];
    if (max_numel(it->out) == 0) continue;
    const given_opts *g = i + 1 == s->n ? given : NULL;
    if (!(b[i].key = kernel_key(ctx->dev, it->ast, g, g ? 0 : width))) st = tkc_err(TKC_ENOMEM, "out of memory building a kernel key");
    else if (!(b[i].p = tkc_kcache_get(b[i].key, &b[i].ref))) nmiss++;
  }
  for (size_t i = 0; !st && i < s->n; i++) { /* then what it lacks: opts, lowering, rendering */
    tkc_sched_item *it = &s->items[i];
    if (b[i].p || !b[i].key) continue;
    const given_opts *g = i + 1 == s->n ? given : NULL;
    double t0 = tkc_now_s();
    tkc_opt bo[TKC_MAX_OPTS];
    given_opts searched = {bo, 0};
    if (!g && width && beam_opts(s, it, b[i].key, width, ++nsearched, nmiss, bo, &searched.n)) g = &searched;
    char name[160];
    tkc_uop *k = build_kernel(s->g, it->ast, tkc_device_renderer(ctx->dev), g, b[i].key, true, name, sizeof name);
    if (!(b[i].p = k ? tkc_program_prepare(ctx->dev, s->g, k, name) : NULL)) {
      st = tkc_last_status();
      break;
    }
    b[i].prepare_s = tkc_now_s() - t0;
    item[njobs] = (int)i;
    jobs[njobs++] = b[i].p;
  }
  if (!st && njobs) {
    build_report r = {ctx, b, item, 0, njobs};
    st = tkc_compile_all(jobs, njobs, tkc_compile_threads(ctx->dev), compiled, &r);
  }
  for (int j = 0; !st && j < njobs; j++) { /* into the kernel cache (or the program another thread put there first) */
    built *bi = &b[item[j]];
    bi->p = tkc_kcache_put(bi->key, bi->p, &bi->ref);
  }
  tkc_free(item);
  tkc_free(jobs);
  return st;
}

/* ---------------------------------------------------------------- the schedule without running it
 * (tkc_schedule_dot, tkc_kernel_uops_dot): each item's kernel as realize would build it */

/* item i's kernel key (malloc'ed) and the opts a beam search stored for it (*given when found) */
static char *item_key(tkc_schedule *s, size_t i, tkc_opt *bo, given_opts *searched, const given_opts **given) {
  tkc_ctx *ctx = s->items[i].out->ctx;
  int width = tkc_device_renderer(ctx->dev) && !noopt() ? tkc_beam_width(ctx->beam) : 0;
  char *key = kernel_key(ctx->dev, s->items[i].ast, NULL, width);
  if (!key) return tkc_err_null(TKC_ENOMEM, "out of memory building a kernel key");
  *given = NULL;
  searched->opts = bo;
  if (width && tkc_beam_load(key, bo, &searched->n)) *given = searched;
  return key;
}

tkc_status tkc_engine_kernel_label(tkc_schedule *s, size_t i, char *name, size_t nname, char *opts, size_t nopts) {
  if (i >= s->n) return tkc_err(TKC_EINVAL, "kernel %zu of %zu", i, s->n);
  tkc_sched_item *it = &s->items[i];
  tkc_opt bo[TKC_MAX_OPTS];
  given_opts searched;
  const given_opts *given;
  char *key = item_key(s, i, bo, &searched, &given);
  if (!key) return tkc_last_status();
  tkc_kshape ks;
  tkc_uop *ast = it->ast;
  int bad = plan_kernel(s->g, &ast, tkc_device_renderer(it->out->ctx->dev), given, key, &ks, name, nname);
  tkc_free(key);
  if (bad) return tkc_last_status();
  tkc_kshape_opts_str(&ks, opts, nopts);
  return TKC_OK;
}

tkc_uop *tkc_engine_kernel_uops(tkc_schedule *s, size_t i, char *name, size_t nname) {
  if (i >= s->n) return tkc_err_null(TKC_EINVAL, "kernel %zu of %zu", i, s->n);
  tkc_opt bo[TKC_MAX_OPTS];
  given_opts searched;
  const given_opts *given;
  char *key = item_key(s, i, bo, &searched, &given);
  if (!key) return NULL;
  tkc_uop *k = build_kernel(s->g, s->items[i].ast, tkc_device_renderer(s->items[i].out->ctx->dev), given, key, false, name, nname);
  tkc_free(key);
  return k;
}

static void release_all(tkc_schedule *s, built *b) {
  for (size_t i = 0; b && i < s->n; i++) {
    if (b[i].p && b[i].ref != TKC_KCACHE_TAKEN) tkc_kcache_release(b[i].ref, b[i].p); /* (taken: a jit keeps it) */
    tkc_free(b[i].key);
  }
  tkc_free(b);
}

/* the values bound to the variables p reads, in its order */
static tkc_status var_values(const tkc_ctx *ctx, const tkc_program *p, int64_t *vals, int nvars) {
  if (nvars > 64) return tkc_err(TKC_EUNSUPPORTED, "%s reads %d variables; at most 64 per kernel", tkc_program_name(p), nvars);
  for (int i = 0; i < nvars; i++) {
    const tkc_ctx_var *v = tkc_ctx_var_named(ctx, tkc_program_var_name(p, i));
    if (!v) return tkc_err(TKC_EINTERNAL, "%s reads variable %s, which its ctx lacks", tkc_program_name(p), tkc_program_var_name(p, i));
    if (v->value < 0) return tkc_err(TKC_EINVAL, "realize: variable %s is not bound (tkc_dim_bind)", v->name);
    vals[i] = v->value;
  }
  return TKC_OK;
}

static tkc_status run_item(tkc_sched_item *it, built *bi) {
  tkc_program *p = bi->p;
  tkc_lazy *out = it->out;
  tkc_device *d = out->ctx->dev;
  int64_t numel = max_numel(out);
  tkc_rbuf *rb = tkc_rbuf_new(d, out->dtype, (size_t)numel, false); /* the kernel writes all of it */
  if (!rb) return tkc_last_status();
  tkc_status st = TKC_OK;
  if (numel > 0) {
    tkc_buffer *bufs[33];
    bufs[0] = rb->buf;
    for (int i = 0; !st && i < it->ninputs; i++)
      if (!(bufs[i + 1] = it->inputs[i]->kind == TKC_LZ_BUFFER ? it->inputs[i]->rbuf->buf : NULL))
        st = tkc_err(TKC_EINTERNAL, "schedule: input %d of %s is not realized", i, tkc_program_name(p));
    int64_t vals[64];
    int nvars = tkc_program_nvars(p);
    if (!st) st = var_values(out->ctx, p, vals, nvars);
    if (!st) {
      double t0 = tkc_now_s();
      st = tkc_program_launch(p, bufs, it->ninputs + 1, vals, nvars);
      out->ctx->kernels_run += !st;
      out->ctx->kernel_s += tkc_now_s() - t0;
    }
    if (!st && out->ctx->capture) { /* tkc_jit_run is recording */
      tkc_rbuf *rbufs[33] = {rb};
      for (int i = 0; i < it->ninputs; i++) rbufs[i + 1] = it->inputs[i]->rbuf;
      st = tkc_jit_record(out->ctx, p, &bi->ref, rbufs, it->ninputs + 1);
    }
  }
  if (!st) {
    tkc_st cst;
    tkc_st_contiguous_max(&cst, out->ctx, out->ndim, out->shape);
    st = tkc_lazy_become_buffer(out, rb, &cst);
  }
  tkc_rbuf_unref(rb);
  return st;
}

static tkc_status realize(tkc_lazy *n, const given_opts *given) {
  if (n->kind == TKC_LZ_BUFFER) return given ? tkc_err(TKC_EINVAL, "tkc_realize_opts: the tensor is realized already (no kernel to apply opts to)") : TKC_OK;
  tkc_schedule s = {0};
  tkc_status st = tkc_schedule_build(&s, n);
  if (!st && given && !s.n) st = tkc_err(TKC_EINVAL, "tkc_realize_opts: the tensor needs no kernel (a view of realized data)");
  built *b = st ? NULL : tkc_calloc(s.n + 1, sizeof *b);
  if (!st && !b) st = tkc_err(TKC_ENOMEM, "out of memory realizing %zu kernels", s.n);
  if (!st) st = build_all(&s, given, b);
  for (size_t i = 0; !st && i < s.n; i++) st = run_item(&s.items[i], &b[i]);
  release_all(&s, b);
  tkc_schedule_free(&s);
  if (!st && n->kind == TKC_LZ_MOVE) st = tkc_lazy_become_view(n);
  return st;
}

tkc_status tkc_lazy_realize(tkc_lazy *n) { return realize(n, NULL); }

tkc_status tkc_lazy_realize_opts(tkc_lazy *n, const tkc_opt *opts, int nopts) {
  given_opts given = {opts, nopts};
  return realize(n, &given);
}

char *tkc_lazy_kernels_source(tkc_lazy *n, const tkc_renderer *r) {
  tkc_schedule s;
  if (tkc_schedule_build(&s, n)) {
    tkc_schedule_free(&s);
    return NULL;
  }
  tkc_sbuf out = {0};
  int failed = 0;
  char (*seen)[160] = tkc_calloc(s.n + 1, sizeof *seen); /* the names so far, before their suffix */
  if (!seen) {
    tkc_err(TKC_ENOMEM, "out of memory rendering kernels");
    failed = 1;
  }
  for (size_t i = 0; i < s.n && !failed; i++) {
    char name[160];
    tkc_uop *k = build_kernel(s.g, s.items[i].ast, r, NULL, NULL, true, name, sizeof name);
    size_t dup = 0; /* unique as a realize names them: the second r_2_4 is r_2_4n1 */
    for (size_t j = 0; j < i; j++) dup += !strcmp(seen[j], name);
    snprintf(seen[i], sizeof seen[i], "%s", name);
    if (dup) snprintf(name + strlen(name), sizeof name - strlen(name), "n%zu", dup);
    char *src = k ? tkc_codegen_source(k, r, name) : NULL;
    if (!src) failed = 1;
    else {
      tkc_sbuf_puts(&out, src);
      tkc_sbuf_puts(&out, "\n");
      tkc_free(src);
    }
  }
  tkc_free(seen);
  tkc_schedule_free(&s);
  if (failed) {
    tkc_free(out.s);
    return NULL;
  }
  return tkc_sbuf_take(&out);
}
