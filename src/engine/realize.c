/* The realize driver: a lazy node -> its schedule -> for each kernel the codegen driver
 * (codegen/pipeline.c: transcendental -> opts -> lower -> simplify -> late rules -> render prep ->
 * the renderer's rules -> linearize -> render) -> compile -> run. The kernel cache (kcache.c) keeps
 * what was built by kernel key; beam search (beam.c) picks opts where TKC_BEAM asks. TKC_DEBUG:
 * 1 a line per kernel built, 4 its source, 5 its linearized uops (once per build); launches: 1 a
 * line; 2 tinygrad's line: launch number, name, memory in use, time and total time, GFLOPS, GB/s;
 * 3 and 6 come from the codegen driver's stages (the opts; the AST and the lowered kernel).
 * Kernel names are unique per distinct kernel (the second r_2_4 is r_2_4n1, as tinygrad names them). */
#include <stdio.h>
#include <string.h>
#include "codegen/pipeline.h"
#include "engine/beam.h"
#include "engine/compile_pool.h"
#include "engine/engine.h"
#include "engine/jit.h"
#include "engine/kcache.h"
#include "engine/program_build.h"
#include "graph/tensor_internal.h"
#include "runtime/device.h"

/* opts given by the caller for the last kernel of a realize (NULL: heuristics) */
typedef struct given_opts {
  const tkc_opt *opts;
  int n;
} given_opts;

/* The codegen driver set up for the kernel of ast, with the given opts (NULL: the heuristics'), its
 * name made unique by key (when given); report: TKC_DEBUG output (not for the dot files). */
static tkc_codegen codegen_for(tkc_graph *g, tkc_uop *ast, const tkc_renderer *r, const given_opts *given, const char *key, bool report) {
  tkc_codegen cg = {.g = g, .r = r, .ast = ast, .key = key, .report = report};
  if (given) {
    cg.given_opts = true;
    cg.opts = given->opts;
    cg.nopts = given->n;
  }
  return cg;
}

/* What a built kernel depends on besides its AST: the device and the opts (given, or the heuristics
 * and the settings they read). Malloc'ed; NULL when out of memory. */
static char *kernel_settings(const tkc_device *d, const given_opts *given, int beam) {
  tkc_sbuf b = {0};
  const tkc_renderer *r = tkc_device_renderer(d);
  char rkey[256] = "", hkey[256] = ""; /* the settings the renderer's output and the heuristics' picks depend on */
  if (r && r->cache_key) r->cache_key(rkey, sizeof rkey);
  tkc_sbuf_printf(&b, "%s tc=%d %s\n", tkc_device_name(d), r && r->tensor_cores ? r->tensor_cores() : 0, rkey);
  if (given)
    for (int i = 0; i < given->n; i++) tkc_sbuf_printf(&b, "%d,%d,%d;", (int)given->opts[i].op, given->opts[i].axis, given->opts[i].amount);
  else {
    tkc_heuristics_key(hkey, sizeof hkey);
    tkc_sbuf_printf(&b, "heuristics noopt=%d %s beam=%d", tkc_codegen_noopt(), hkey, beam);
  }
  return tkc_sbuf_take(&b);
}

/* The printed kernel key: the settings and the printed AST. Beam search's results on disk are
 * stored under it (so it must stay stable across processes) and kernel names are numbered by it;
 * only a kernel being built needs it (the kernel cache has its own key, kcache.h). Malloc'ed; NULL
 * when out of memory. */
static char *printed_key(const char *settings, const tkc_uop *ast) {
  char *ast_str = tkc_uop_str(ast);
  if (!ast_str) return NULL;
  tkc_sbuf b = {0};
  tkc_sbuf_printf(&b, "%s\n%s", settings, ast_str);
  tkc_free(ast_str);
  return tkc_sbuf_take(&b);
}

static char *kernel_key(const tkc_device *d, const tkc_uop *ast, const given_opts *given, int beam) {
  char *settings = kernel_settings(d, given, beam);
  char *key = settings ? printed_key(settings, ast) : NULL;
  tkc_free(settings);
  return key;
}

/* a schedule item's program: from the kernel cache, or built by this realize */
typedef struct built {
  tkc_program *p;
  tkc_kcache_ref ref;
  tkc_kcache_key ck; /* its kernel cache key */
  char *key;         /* when built here: its printed key (printed_key) */
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
  tkc_kernel_base_name(it->ast, name, sizeof name);
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
  int width = ctx && tkc_device_renderer(ctx->dev) && !tkc_codegen_noopt() ? tkc_beam_width(ctx->beam) : 0; /* TKC_NOOPT: no search either */
  /* the settings text once per realize (the last item's differs when it has given opts) */
  char *settings = !st && ctx ? kernel_settings(ctx->dev, NULL, width) : NULL, *given_settings = NULL;
  if (!st && ctx && !settings) st = tkc_err(TKC_ENOMEM, "out of memory building a kernel key");
  if (!st && given && !(given_settings = kernel_settings(ctx->dev, given, 0))) st = tkc_err(TKC_ENOMEM, "out of memory building a kernel key");
  for (size_t i = 0; !st && i < s->n; i++) { /* the kernel cache first */
    tkc_sched_item *it = &s->items[i];
    if (max_numel(it->out) == 0) continue;
    bool last = i + 1 == s->n && given;
    if (!(st = tkc_kcache_key_make(&b[i].ck, last ? given_settings : settings, it->ast)) && !(b[i].p = tkc_kcache_get(&b[i].ck, &b[i].ref)))
      nmiss++;
  }
  for (size_t i = 0; !st && i < s->n; i++) { /* then what it lacks: opts, lowering, rendering */
    tkc_sched_item *it = &s->items[i];
    if (b[i].p || !b[i].ck.bytes) continue;
    const given_opts *g = i + 1 == s->n ? given : NULL;
    if (!(b[i].key = printed_key(g ? given_settings : settings, it->ast))) {
      st = tkc_err(TKC_ENOMEM, "out of memory building a kernel key");
      break;
    }
    double t0 = tkc_now_s();
    tkc_opt bo[TKC_MAX_OPTS];
    given_opts searched = {bo, 0};
    if (!g && width && beam_opts(s, it, b[i].key, width, ++nsearched, nmiss, bo, &searched.n)) g = &searched;
    tkc_codegen cg = codegen_for(s->g, it->ast, tkc_device_renderer(ctx->dev), g, b[i].key, true);
    if (!(b[i].p = tkc_codegen_run(&cg, NULL, "late_rules") ? NULL : tkc_engine_program(ctx->dev, &cg, cg.name))) {
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
    bi->p = tkc_kcache_put(&bi->ck, bi->p, &bi->ref);
  }
  tkc_free(settings);
  tkc_free(given_settings);
  tkc_free(item);
  tkc_free(jobs);
  return st;
}

/* ---------------------------------------------------------------- the schedule without running it
 * (tkc_schedule_dot, tkc_kernel_uops_dot): each item's kernel as realize would build it */

/* item i's kernel key (malloc'ed) and the opts a beam search stored for it (*given when found) */
static char *item_key(tkc_schedule *s, size_t i, tkc_opt *bo, given_opts *searched, const given_opts **given) {
  tkc_ctx *ctx = s->items[i].out->ctx;
  int width = tkc_device_renderer(ctx->dev) && !tkc_codegen_noopt() ? tkc_beam_width(ctx->beam) : 0;
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
  tkc_codegen cg = codegen_for(s->g, it->ast, tkc_device_renderer(it->out->ctx->dev), given, key, false);
  tkc_status st = tkc_codegen_run(&cg, NULL, "opts");
  tkc_free(key);
  if (st) return st;
  snprintf(name, nname, "%s", cg.name);
  tkc_kshape_opts_str(&cg.ks, opts, nopts);
  return TKC_OK;
}

tkc_uop *tkc_engine_kernel_uops(tkc_schedule *s, size_t i, char *name, size_t nname) {
  if (i >= s->n) return tkc_err_null(TKC_EINVAL, "kernel %zu of %zu", i, s->n);
  tkc_opt bo[TKC_MAX_OPTS];
  given_opts searched;
  const given_opts *given;
  char *key = item_key(s, i, bo, &searched, &given);
  if (!key) return NULL;
  tkc_codegen cg = codegen_for(s->g, s->items[i].ast, tkc_device_renderer(s->items[i].out->ctx->dev), given, key, false);
  tkc_status st = tkc_codegen_run(&cg, NULL, "late_rules");
  tkc_free(key);
  if (st) return NULL;
  snprintf(name, nname, "%s", cg.name);
  return cg.sink;
}

static void release_all(tkc_schedule *s, built *b) {
  for (size_t i = 0; b && i < s->n; i++) {
    if (b[i].p && b[i].ref != TKC_KCACHE_TAKEN) tkc_kcache_release(b[i].ref, b[i].p); /* (taken: a jit keeps it) */
    tkc_free(b[i].key);
    tkc_kcache_key_free(&b[i].ck);
  }
  tkc_free(b);
}

/* the values bound to the variables p reads, in its order */
static tkc_status var_values(const tkc_ctx *ctx, const tkc_program *p, int64_t *vals, int nvars) {
  if (nvars > TKC_MAX_KERNEL_VARS)
    return tkc_err(TKC_EUNSUPPORTED, "%s reads %d variables; at most %d per kernel", tkc_program_name(p), nvars, TKC_MAX_KERNEL_VARS);
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
  tkc_rbuf *rb = out->target; /* an assign writes its destination's buffer */
  if (rb) rb->refs++;
  else if (!(rb = tkc_rbuf_new(d, out->dtype, (size_t)numel, false))) return tkc_last_status(); /* the kernel writes all of it */
  tkc_status st = TKC_OK;
  if (numel > 0) {
    tkc_buffer *bufs[33];
    bufs[0] = rb->buf;
    for (int i = 0; !st && i < it->ninputs; i++)
      if (!(bufs[i + 1] = it->inputs[i]->kind == TKC_LZ_BUFFER ? it->inputs[i]->rbuf->buf : NULL))
        st = tkc_err(TKC_EINTERNAL, "schedule: input %d of %s is not realized", i, tkc_program_name(p));
    int64_t vals[TKC_MAX_KERNEL_VARS];
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

static tkc_status realize(int nn, tkc_lazy *const *ns, const given_opts *given) {
  if (nn == 1 && ns[0]->kind == TKC_LZ_BUFFER)
    return given ? tkc_err(TKC_EINVAL, "tkc_realize_opts: the tensor is realized already (no kernel to apply opts to)") : TKC_OK;
  tkc_schedule s = {0};
  tkc_status st = tkc_schedule_build_many(&s, nn, ns);
  if (!st && given && !s.n) st = tkc_err(TKC_EINVAL, "tkc_realize_opts: the tensor needs no kernel (a view of realized data)");
  built *b = st ? NULL : tkc_calloc(s.n + 1, sizeof *b);
  if (!st && !b) st = tkc_err(TKC_ENOMEM, "out of memory realizing %zu kernels", s.n);
  if (!st) st = build_all(&s, given, b);
  for (size_t i = 0; !st && i < s.n; i++) st = run_item(&s.items[i], &b[i]);
  release_all(&s, b);
  tkc_schedule_free(&s);
  for (int i = 0; i < nn && !st; i++)
    if (ns[i]->kind == TKC_LZ_MOVE) st = tkc_lazy_become_view(ns[i]);
  return st;
}

tkc_status tkc_lazy_realize(tkc_lazy *n) { return realize(1, &n, NULL); }

tkc_status tkc_lazy_realize_all(int n, tkc_lazy *const *ns) { return realize(n, ns, NULL); }

tkc_status tkc_lazy_realize_opts(tkc_lazy *n, const tkc_opt *opts, int nopts) {
  given_opts given = {opts, nopts};
  return realize(1, &n, &given);
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
    tkc_codegen cg = codegen_for(s.g, s.items[i].ast, r, NULL, NULL, true);
    bool lowered = !tkc_codegen_run(&cg, NULL, "late_rules");
    char *name = cg.name;
    size_t dup = 0; /* unique as a realize names them: the second r_2_4 is r_2_4n1 */
    for (size_t j = 0; j < i; j++) dup += !strcmp(seen[j], name);
    snprintf(seen[i], sizeof seen[i], "%s", name);
    if (dup) snprintf(name + strlen(name), sizeof cg.name - strlen(name), "n%zu", dup);
    char *src = lowered ? tkc_codegen_finish_source(&cg) : NULL;
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
