/* Programs: a linearized kernel and its source (made by the codegen driver, codegen/pipeline.c, through
 * engine/program_build.c) -> compile (cached by device + name + source) -> launch; the TKC_DEBUG
 * listings of what was built and launched, and the FlopCounter-style estimates. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h> /* not C11 threads: ThreadSanitizer sees pthread locks only */
#include "render/render_util.h"
#include "runtime/device.h"
#include "uops/uop_internal.h"

struct tkc_program {
  tkc_device *dev;
  tkc_graph *g; /* private: owns the linearized UOps */
  tkc_kernel k;
  char *name, *source;
  char *symbol; /* the compiled function's name: "tk_" + name, so that no kernel is called exit or
                 * sqrtf (a C kernel so named would be the libc function or call itself) */
  bool *is_out;
  void *handle;
  struct cache_entry *cached;
};

/* ---------------------------------------------------------------- compiled-program cache */

typedef struct cache_entry {
  struct cache_entry *next;
  const tkc_device_impl *impl;
  char *name, *source;
  void *handle;
  int refs;
} cache_entry;

static cache_entry *cache_head;
static pthread_mutex_t cache_lock;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static void cache_init(void) { pthread_mutex_init(&cache_lock, NULL); }

/* The compiled handle for (device, name, source), compiling it on a miss. */
static tkc_status cache_get(tkc_program *p) {
  pthread_once(&cache_once, cache_init);
  const tkc_device_impl *impl = p->dev->impl;
  pthread_mutex_lock(&cache_lock);
  for (cache_entry *e = cache_head; e; e = e->next)
    if (e->impl == impl && !strcmp(e->name, p->name) && !strcmp(e->source, p->source)) {
      e->refs++;
      p->cached = e;
      p->handle = e->handle;
      pthread_mutex_unlock(&cache_lock);
      return TKC_OK;
    }
  pthread_mutex_unlock(&cache_lock); /* compile outside the lock: it may take a while */
  void *handle = NULL;
  tkc_status st = impl->compile(&p->k, &handle);
  if (st) return st;
  cache_entry *e = tkc_calloc(1, sizeof *e);
  if (e) {
    e->name = tkc_strdup(p->name);
    e->source = tkc_strdup(p->source);
  }
  if (!e || !e->name || !e->source) {
    if (e) { tkc_free(e->name); tkc_free(e->source); tkc_free(e); }
    impl->release(handle);
    return tkc_err(TKC_ENOMEM, "out of memory caching a program");
  }
  e->impl = impl;
  e->handle = handle;
  e->refs = 1;
  pthread_mutex_lock(&cache_lock);
  e->next = cache_head;
  cache_head = e;
  pthread_mutex_unlock(&cache_lock);
  p->cached = e;
  p->handle = handle;
  return TKC_OK;
}

size_t tkc_program_cache_entries(void) {
  pthread_once(&cache_once, cache_init);
  size_t n = 0;
  pthread_mutex_lock(&cache_lock);
  for (cache_entry *e = cache_head; e; e = e->next) n++;
  pthread_mutex_unlock(&cache_lock);
  return n;
}

/* Entries outlive their programs so that rebuilding a kernel does not recompile it; past
 * CACHE_MAX entries the least recently added unused ones are released. */
#define CACHE_MAX 256

static void release_entries(cache_entry *drop) {
  while (drop) {
    cache_entry *e = drop;
    drop = e->next;
    e->impl->release(e->handle);
    tkc_free(e->name);
    tkc_free(e->source);
    tkc_free(e);
  }
}

static void cache_put(cache_entry *done) {
  cache_entry *drop = NULL;
  pthread_mutex_lock(&cache_lock);
  done->refs--;
  size_t n = 0;
  for (cache_entry **pp = &cache_head; *pp;) { /* newest first: keep the first CACHE_MAX */
    cache_entry *e = *pp;
    if (++n > CACHE_MAX && e->refs == 0) {
      *pp = e->next;
      e->next = drop;
      drop = e;
    } else pp = &e->next;
  }
  pthread_mutex_unlock(&cache_lock);
  release_entries(drop);
}

void tkc_program_cache_flush(void) {
  pthread_once(&cache_once, cache_init);
  cache_entry *drop = NULL;
  pthread_mutex_lock(&cache_lock);
  for (cache_entry **pp = &cache_head; *pp;) {
    cache_entry *e = *pp;
    if (e->refs == 0) {
      *pp = e->next;
      e->next = drop;
      drop = e;
    } else pp = &e->next;
  }
  pthread_mutex_unlock(&cache_lock);
  release_entries(drop);
}

/* ---------------------------------------------------------------- building */

static int is_var(const tkc_uop *u) {
  return u->op == TKC_OP_DEFINE_VAR && u->arg.kind == TKC_ARG_TUPLE && u->arg.n == 3 && u->arg.v.t[0].kind == TKC_ARG_STR;
}

/* Buffers, their dtypes and which are written; variables sorted by name. */
/* How many elements each buffer must hold, from the range analysis of the kernel's ungated
 * indices, so that launch refuses buffers too small instead of reading past them. Indices that
 * depend on a variable (their size changes with its value) or on loaded data (no bound known) and
 * gated ones (out of range where the gate is off) tell nothing and are skipped. */
static tkc_status collect_buffer_needs(tkc_kernel *k) {
  uint32_t maxid = 0;
  for (size_t i = 0; i < k->nuops; i++) maxid = k->uops[i]->id > maxid ? k->uops[i]->id : maxid;
  bool *unbounded = tkc_calloc(2 * ((size_t)maxid + 1), sizeof *unbounded); /* depends on a var or a load */
  bool *gated = unbounded + maxid + 1;
  k->buf_need = tkc_calloc((size_t)k->nbufs + 1, sizeof *k->buf_need);
  if (!unbounded || !k->buf_need) {
    tkc_free(unbounded);
    return tkc_err(TKC_ENOMEM, "out of memory building a program");
  }
  for (size_t i = 0; i < k->nuops; i++) { /* a LOAD (index, alt, gate) or STORE (index, value, gate) gates its index */
    const tkc_uop *u = k->uops[i];
    if ((u->op == TKC_OP_LOAD || u->op == TKC_OP_STORE) && u->nsrc >= 3) {
      const tkc_uop *ix = u->src[0];
      if (ix->op == TKC_OP_CAST && ix->nsrc) ix = ix->src[0];
      if (ix->id <= maxid) gated[ix->id] = true;
    }
  }
  for (size_t i = 0; i < k->nuops; i++) { /* sources come first in the linearized order */
    const tkc_uop *u = k->uops[i];
    bool ub = u->op == TKC_OP_DEFINE_VAR || u->op == TKC_OP_LOAD;
    for (int j = 0; j < u->nsrc && !ub; j++) ub = u->src[j]->id <= maxid && unbounded[u->src[j]->id];
    unbounded[u->id] = ub;
    if (u->op != TKC_OP_INDEX || u->nsrc != 2 || gated[u->id] || u->src[0]->op != TKC_OP_DEFINE_GLOBAL || unbounded[u->src[1]->id]) continue;
    const tkc_uop *idx = u->src[1];
    if (!tkc_dt_is_int(tkc_dt_of(idx->dtype.scalar)) || idx->vmax >= INT64_MAX / 2 || idx->vmax < 0) continue;
    int64_t need = idx->vmax + 1, b = u->src[0]->arg.v.i;
    if (need > k->buf_need[b]) k->buf_need[b] = need;
  }
  for (size_t i = 0; i < k->nuops; i++) { /* a vector load or store through a cast pointer reaches count - 1 further */
    const tkc_uop *u = k->uops[i];
    if (u->op != TKC_OP_CAST || !u->nsrc || u->src[0]->op != TKC_OP_INDEX || u->src[0]->nsrc != 2 || !tkc_dt_is_ptr(u->dtype)) continue;
    const tkc_uop *ix = u->src[0], *idx = ix->src[1];
    if (ix->src[0]->op != TKC_OP_DEFINE_GLOBAL || gated[ix->id] || unbounded[idx->id] || idx->vmax >= INT64_MAX / 2 || idx->vmax < 0) continue;
    int64_t need = idx->vmax + u->dtype.count, b = ix->src[0]->arg.v.i;
    if (need > k->buf_need[b]) k->buf_need[b] = need;
  }
  tkc_free(unbounded);
  return TKC_OK;
}

static tkc_status collect_args(tkc_program *p) {
  tkc_kernel *k = &p->k;
  int nvars = 0;
  for (size_t i = 0; i < k->nuops; i++) {
    const tkc_uop *u = k->uops[i];
    if (u->op == TKC_OP_DEFINE_GLOBAL) {
      if (u->arg.kind != TKC_ARG_INT || u->arg.v.i < 0 || u->arg.v.i > 4096 || !tkc_dt_is_ptr(u->dtype))
        return tkc_err(TKC_EINVAL, "DEFINE_GLOBAL needs a pointer dtype and a buffer number arg");
      if (u->arg.v.i >= k->nbufs) k->nbufs = (int)u->arg.v.i + 1;
    } else if (u->op == TKC_OP_DEFINE_VAR) {
      if (!is_var(u)) return tkc_err(TKC_EINVAL, "DEFINE_VAR needs the arg (name, min, max)");
      nvars++;
    }
  }
  k->buf_dtypes = tkc_calloc((size_t)k->nbufs + 1, sizeof *k->buf_dtypes);
  p->is_out = tkc_calloc((size_t)k->nbufs + 1, sizeof *p->is_out);
  k->vars = tkc_calloc((size_t)nvars + 1, sizeof *k->vars);
  if (!k->buf_dtypes || !p->is_out || !k->vars) return tkc_err(TKC_ENOMEM, "out of memory building a program");
  for (int i = 0; i < k->nbufs; i++) k->buf_dtypes[i] = TKC_VOID;
  for (size_t i = 0; i < k->nuops; i++) {
    tkc_uop *u = k->uops[i];
    if (u->op == TKC_OP_DEFINE_GLOBAL) k->buf_dtypes[u->arg.v.i] = (tkc_dtype)u->dtype.scalar;
    else if (u->op == TKC_OP_DEFINE_VAR) k->vars[k->nvars++] = u;
    else if (u->op == TKC_OP_STORE && u->nsrc >= 1) {
      const tkc_uop *b = u->src[0];
      while (b->nsrc && b->op != TKC_OP_DEFINE_GLOBAL) b = b->src[0];
      if (b->op == TKC_OP_DEFINE_GLOBAL) p->is_out[b->arg.v.i] = true;
    }
  }
  for (int i = 0; i < k->nbufs; i++)
    if (k->buf_dtypes[i] == TKC_VOID) return tkc_err(TKC_EINVAL, "kernel skips buffer number %d", i);
  qsort(k->vars, (size_t)k->nvars, sizeof *k->vars, tkc_render_var_order); /* the renderers' order */
  return collect_buffer_needs(k);
}

/* ---------------------------------------------------------------- TKC_DEBUG output */

void tkc_arg_fmt(tkc_sbuf *b, const tkc_arg *a) {
  switch (a->kind) {
  case TKC_ARG_NONE: tkc_sbuf_puts(b, "None"); break;
  case TKC_ARG_INT: tkc_sbuf_printf(b, "%" PRId64, a->v.i); break;
  case TKC_ARG_FLOAT: tkc_sbuf_printf(b, "%.9g", a->v.f); break;
  case TKC_ARG_STR: tkc_sbuf_printf(b, "'%s'", a->v.s); break;
  case TKC_ARG_PTR: tkc_sbuf_puts(b, "<ptr>"); break;
  case TKC_ARG_TUPLE:
    tkc_sbuf_puts(b, "(");
    for (uint32_t i = 0; i < a->n; i++) {
      if (i) tkc_sbuf_puts(b, ", ");
      tkc_arg_fmt(b, &a->v.t[i]);
    }
    tkc_sbuf_puts(b, a->n == 1 ? ",)" : ")");
    break;
  }
}

/* The linearized UOps as tinygrad's print_uops: index, op, dtype, the indices of the sources, arg. */
static char *uops_listing(const tkc_program *p) {
  tkc_sbuf b = {0};
  tkc_umap pos = {0};
  for (size_t i = 0; i < p->k.nuops; i++) tkc_umap_put(&pos, p->k.uops[i], (tkc_uop *)(uintptr_t)(i + 1));
  tkc_sbuf_printf(&b, "tkc: %s: uops (%zu)\n", p->name, p->k.nuops);
  for (size_t i = 0; i < p->k.nuops; i++) {
    const tkc_uop *u = p->k.uops[i];
    char dt[64], srcs[256];
    size_t k = (size_t)snprintf(srcs, sizeof srcs, "[");
    for (int j = 0; j < u->nsrc && k < sizeof srcs; j++) {
      uintptr_t at = (uintptr_t)tkc_umap_get(&pos, u->src[j]);
      k += at ? (size_t)snprintf(srcs + k, sizeof srcs - k, j ? ", %zu" : "%zu", (size_t)(at - 1)) : (size_t)snprintf(srcs + k, sizeof srcs - k, j ? ", --" : "--");
    }
    if (k < sizeof srcs) snprintf(srcs + k, sizeof srcs - k, "]");
    tkc_dt_str(u->dtype, dt, sizeof dt);
    tkc_sbuf_printf(&b, "%4zu %-20s: %-28s %-24s ", i, tkc_op_name((tkc_op)u->op), dt, srcs);
    tkc_arg_fmt(&b, &u->arg);
    tkc_sbuf_puts(&b, "\n");
  }
  tkc_umap_free(&pos);
  return tkc_sbuf_take(&b);
}

void tkc_program_debug_built(const tkc_program *p) {
  int level = tkc_debug_level();
  if (!p || level < 4) return;
  if (level >= 5) {
    char *s = uops_listing(p);
    if (s) fputs(s, stderr);
    else tkc_clear_error(); /* out of memory: no listing */
    tkc_free(s);
  }
  if (p->source && *p->source) fprintf(stderr, "%s\n", p->source);
}

tkc_uop *const *tkc_program_uops(const tkc_program *p, size_t *n) {
  *n = p ? p->k.nuops : 0;
  return p ? p->k.uops : NULL;
}

tkc_status tkc_program_compile(tkc_program *p) {
  if (p->handle || p->cached) return TKC_OK;
  return tkc_device_renderer(p->dev) ? cache_get(p) : p->dev->impl->compile(&p->k, &p->handle);
}

tkc_program *tkc_program_alloc(tkc_device *d, const char *name) {
  if (!d || !name) return tkc_err_null(TKC_EINVAL, "tkc_program_new: NULL argument");
  tkc_program *p = tkc_calloc(1, sizeof *p);
  if (!p) return tkc_err_null(TKC_ENOMEM, "out of memory creating a program");
  p->dev = d;
  p->name = tkc_strdup(name);
  p->symbol = p->name ? tkc_malloc(strlen(p->name) + 4) : NULL;
  p->g = tkc_graph_new();
  if (!p->symbol || !p->g) {
    tkc_program_free(p);
    return tkc_err_null(TKC_ENOMEM, "out of memory creating a program");
  }
  memcpy(p->symbol, "tk_", 3), strcpy(p->symbol + 3, p->name);
  p->k.name = p->symbol;
  return p;
}

tkc_graph *tkc_program_graph(const tkc_program *p) { return p->g; }
const char *tkc_program_symbol(const tkc_program *p) { return p->symbol; }

tkc_status tkc_program_set_uops(tkc_program *p, tkc_uop **uops, size_t n) {
  tkc_free((void *)p->k.uops);
  p->k.uops = uops;
  p->k.nuops = n;
  return collect_args(p);
}

tkc_status tkc_program_set_source(tkc_program *p, char *source) {
  tkc_free(p->source);
  p->source = source ? source : tkc_strdup("");
  p->k.source = p->source;
  return p->source ? TKC_OK : tkc_err(TKC_ENOMEM, "out of memory creating a program");
}

void tkc_program_free(tkc_program *p) {
  if (!p) return;
  if (p->cached) cache_put(p->cached);
  else if (p->handle) p->dev->impl->release(p->handle);
  tkc_free((void *)p->k.uops);
  tkc_free(p->k.buf_dtypes);
  tkc_free(p->k.buf_need);
  tkc_free(p->k.vars);
  tkc_free(p->is_out);
  tkc_free(p->name);
  tkc_free(p->symbol);
  tkc_free(p->source);
  tkc_graph_free(p->g);
  tkc_free(p);
}

const char *tkc_program_name(const tkc_program *p) { return p ? p->name : NULL; }
const char *tkc_program_source(const tkc_program *p) { return p ? p->source : NULL; }
int tkc_program_nbufs(const tkc_program *p) { return p ? p->k.nbufs : 0; }
int tkc_program_nvars(const tkc_program *p) { return p ? p->k.nvars : 0; }
const char *tkc_program_var_name(const tkc_program *p, int i) {
  return p && i >= 0 && i < p->k.nvars ? p->k.vars[i]->arg.v.t[0].v.s : NULL;
}
int64_t tkc_program_var_max(const tkc_program *p, int i) { return p && i >= 0 && i < p->k.nvars ? p->k.vars[i]->vmax : 0; }
bool tkc_program_buf_is_output(const tkc_program *p, int i) { return p && i >= 0 && i < p->k.nbufs && p->is_out[i]; }

/* ---------------------------------------------------------------- estimates (tinygrad's flops_mem) */

/* Value of an integer expression of consts and variables (0 when it depends on anything else). */
static int64_t eval_int(const tkc_program *p, const tkc_uop *u, const int64_t *vars) {
  if (u->op == TKC_OP_CONST) return tkc_uop_const_i(u);
  if (u->op == TKC_OP_DEFINE_VAR) {
    for (int i = 0; i < p->k.nvars; i++)
      if (p->k.vars[i] == u) return vars ? vars[i] : u->vmax;
    return u->vmax;
  }
  if (!(tkc_op_flags((tkc_op)u->op) & TKC_F_ALU) || u->nsrc > 3 || !tkc_dt_is_int(u->dtype)) return u->vmin == u->vmax ? u->vmin : 0;
  tkc_value src[3], out;
  for (int i = 0; i < u->nsrc; i++) src[i].i = eval_int(p, u->src[i], vars);
  tkc_dtype dt = (tkc_dtype)u->dtype.scalar;
  return tkc_alu_eval((tkc_op)u->op, dt, (tkc_dtype)u->src[u->nsrc - 1]->dtype.scalar, src, u->nsrc, &out) ? 0 : out.i;
}

static void estimate(const tkc_program *p, const int64_t *vars, int64_t *flops, int64_t *mem) {
  int64_t mult = 1, stack[64];
  int depth = 0;
  *flops = *mem = 0;
  for (size_t i = 0; i < p->k.nuops; i++) {
    const tkc_uop *u = p->k.uops[i];
    unsigned fl = tkc_op_flags((tkc_op)u->op);
    if (u->op == TKC_OP_RANGE && depth < 64) {
      stack[depth++] = mult;
      mult *= eval_int(p, u->src[1], vars) - eval_int(p, u->src[0], vars);
    } else if (u->op == TKC_OP_ENDRANGE && depth > 0) {
      mult = stack[--depth];
    } else if (u->op == TKC_OP_SPECIAL && u->arg.kind == TKC_ARG_TUPLE && u->arg.n >= 2) {
      mult *= u->arg.v.t[1].v.i;
    } else if (u->op == TKC_OP_LOAD) {
      *mem += (int64_t)tkc_dt_itemsize(u->dtype) * mult;
    } else if (u->op == TKC_OP_STORE && u->nsrc >= 2) {
      *mem += (int64_t)tkc_dt_itemsize(u->src[1]->dtype) * mult;
    } else if ((fl & TKC_F_ALU) && !tkc_dt_is_int(u->dtype) && u->dtype.scalar != TKC_BOOL) {
      /* like tinygrad's ignore_indexing: integer index math is not counted */
      *flops += mult * (u->op == TKC_OP_MULACC ? 2 : 1) * u->dtype.count;
    }
  }
}

int64_t tkc_program_ops(const tkc_program *p, const int64_t *vars) {
  int64_t f = 0, m = 0;
  if (p) estimate(p, vars, &f, &m);
  return f;
}

int64_t tkc_program_mem(const tkc_program *p, const int64_t *vars) {
  int64_t f = 0, m = 0;
  if (p) estimate(p, vars, &f, &m);
  return m;
}

tkc_status tkc_kernel_check_signature(const tkc_kernel *k, const char *who) {
  if (!k->uops) return TKC_OK;
  int64_t maxbuf = -1;
  int nv = 0;
  for (size_t i = 0; i < k->nuops; i++) {
    const tkc_uop *u = k->uops[i];
    if (u->op == TKC_OP_DEFINE_GLOBAL && u->arg.kind == TKC_ARG_INT && u->arg.v.i > maxbuf) maxbuf = u->arg.v.i;
    if (u->op == TKC_OP_DEFINE_VAR) nv++;
  }
  if (maxbuf + 1 != k->nbufs || nv != k->nvars)
    return tkc_err(TKC_EINTERNAL, "%s: kernel %s declares %lld buffers and %d variables but the program passes %d and %d", who,
                   k->name, (long long)(maxbuf + 1), nv, k->nbufs, k->nvars);
  return TKC_OK;
}

int64_t tkc_kernel_work_estimate(const tkc_kernel *k) {
  int64_t w = 1, lanes = 1;
  for (size_t i = 0; k->uops && i < k->nuops; i++) {
    const tkc_uop *u = k->uops[i];
    if (u->op == TKC_OP_LOAD && u->dtype.count > lanes) lanes = u->dtype.count;
    if (u->op != TKC_OP_RANGE || u->nsrc != 2) continue;
    const tkc_uop *a = u->src[0], *b = u->src[1];
    if (a->op != TKC_OP_CONST || b->op != TKC_OP_CONST || a->arg.kind != TKC_ARG_INT || b->arg.kind != TKC_ARG_INT) continue;
    int64_t n = b->arg.v.i - a->arg.v.i;
    if (n <= 1) continue;
    w = w > ((int64_t)1 << 40) / n ? (int64_t)1 << 40 : w * n;
  }
  /* each iteration loads vectors of `lanes` elements (an upcast axis is no loop): a matvec that
   * computes 32 rows per iteration is 32 times the work its loops count */
  return w > ((int64_t)1 << 40) / lanes ? (int64_t)1 << 40 : w * lanes;
}

void tkc_kernel_launch_dims(const tkc_kernel *k, const int64_t *vars, int64_t global[3], int64_t local[3]) {
  for (int i = 0; i < 3; i++) global[i] = local[i] = 1;
  for (size_t i = 0; i < k->nuops; i++) {
    const tkc_uop *u = k->uops[i];
    if (u->op != TKC_OP_SPECIAL || u->arg.kind != TKC_ARG_TUPLE || u->arg.n < 2 || u->arg.v.t[0].kind != TKC_ARG_STR) continue;
    const char *nm = u->arg.v.t[0].v.s;
    int axis = nm[strlen(nm) - 1] - '0';
    if (axis < 0 || axis > 2) continue;
    if (!strncmp(nm, "gidx", 4)) global[axis] = u->arg.v.t[1].v.i;
    else if (!strncmp(nm, "lidx", 4)) local[axis] = u->arg.v.t[1].v.i;
  }
  (void)vars; /* sizes are constants today; symbolic launch sizes will read vars */
}

void tkc_program_launch_dims(const tkc_program *p, const int64_t *vars, int64_t global[3], int64_t local[3]) {
  if (!p) {
    for (int i = 0; i < 3; i++) global[i] = local[i] = 1;
    return;
  }
  tkc_kernel_launch_dims(&p->k, vars, global, local);
}

/* ---------------------------------------------------------------- launch */

/* tinygrad's time_to_str: 9 wide, in s, ms or us */
static void time_str(char *buf, size_t n, double t) {
  if (t > 10) snprintf(buf, n, "%9.2fs ", t);
  else if (t > 10e-3) snprintf(buf, n, "%9.2fms", t * 1e3);
  else snprintf(buf, n, "%9.2fus", t * 1e6);
}

static void bytes_str(char *buf, size_t n, double b) {
  if (b >= 1e9) snprintf(buf, n, "%7.2f GB", b * 1e-9);
  else if (b >= 1e6) snprintf(buf, n, "%7.2f MB", b * 1e-6);
  else snprintf(buf, n, "%7.2f KB", b * 1e-3);
}

/* process-wide counts of the launches tkc_program_launch reports (tinygrad's GlobalCounters) */
static _Atomic int64_t launch_count, launch_ns;

static tkc_status launch(tkc_program *p, tkc_buffer *const *bufs, int nbufs, const int64_t *vars, int nvars, bool report) {
  if (!p) return tkc_err(TKC_EINVAL, "tkc_program_launch: NULL program");
  if (nbufs != p->k.nbufs) return tkc_err(TKC_EINVAL, "%s takes %d buffers, %d given", p->name, p->k.nbufs, nbufs);
  if (nvars != p->k.nvars) return tkc_err(TKC_EINVAL, "%s takes %d variables, %d given", p->name, p->k.nvars, nvars);
  if ((nbufs && !bufs) || (nvars && !vars)) return tkc_err(TKC_EINVAL, "tkc_program_launch: NULL buffer or variable list");
  void *local[16], **ptrs = nbufs <= 16 ? local : tkc_malloc((size_t)nbufs * sizeof *ptrs);
  if (!ptrs) return tkc_err(TKC_ENOMEM, "out of memory launching");
  tkc_status st = TKC_OK;
  for (int i = 0; i < nbufs && !st; i++) {
    if (!bufs[i]) st = tkc_err(TKC_EINVAL, "%s: buffer %d is NULL", p->name, i);
    else if (tkc_buffer_device(bufs[i]) != p->dev) st = tkc_err(TKC_EINVAL, "%s: buffer %d lives on %s, the program on %s", p->name, i, tkc_device_name(tkc_buffer_device(bufs[i])), tkc_device_name(p->dev));
    else if (tkc_buffer_dtype(bufs[i]) != p->k.buf_dtypes[i] && tkc_dtype_size(tkc_buffer_dtype(bufs[i])) != tkc_dtype_size(p->k.buf_dtypes[i]))
      st = tkc_err(TKC_EDTYPE, "%s: buffer %d holds %s, the kernel reads %s", p->name, i, tkc_dtype_name(tkc_buffer_dtype(bufs[i])), tkc_dtype_name(p->k.buf_dtypes[i]));
    else if ((uint64_t)p->k.buf_need[i] > tkc_buffer_numel(bufs[i]))
      st = tkc_err(TKC_EINVAL, "%s: buffer %d holds %zu elements, the kernel indexes %" PRId64, p->name, i, tkc_buffer_numel(bufs[i]), p->k.buf_need[i]);
    else ptrs[i] = tkc_buffer_ptr(bufs[i]);
  }
  for (int i = 0; i < nvars && !st; i++)
    if (vars[i] < p->k.vars[i]->vmin || vars[i] > p->k.vars[i]->vmax)
      st = tkc_err(TKC_EINVAL, "%s: variable %s = %" PRId64 " is outside [%" PRId64 ", %" PRId64 "]", p->name, tkc_program_var_name(p, i), vars[i], p->k.vars[i]->vmin, p->k.vars[i]->vmax);
  if (!st) {
    /* every device's launch returns when the kernel is done (CUDA synchronizes the context, WEBGPU
     * polls its queue), so this is the kernel's run time */
    double t0 = tkc_now_s();
    st = p->dev->impl->launch(&p->k, p->handle, ptrs, vars);
    double dt = tkc_now_s() - t0;
    int level = report && !st ? tkc_debug_level() : 0;
    int64_t num = report && !st ? atomic_fetch_add(&launch_count, 1) + 1 : 0;
    int64_t total_ns = report && !st ? atomic_fetch_add(&launch_ns, (int64_t)(dt * 1e9)) + (int64_t)(dt * 1e9) : 0;
    if (level >= 1) {
      int64_t g[3], l[3], flops, mem;
      tkc_program_launch_dims(p, vars, g, l);
      estimate(p, vars, &flops, &mem);
      double sec = dt > 0 ? dt : 1e-20;
      if (level == 1)
        fprintf(stderr, "*** %-6s %-24s global [%" PRId64 ",%" PRId64 ",%" PRId64 "] local [%" PRId64 ",%" PRId64 ",%" PRId64 "] tm %9.2fus %8.2f GFLOPS %8.2f GB/s\n",
                p->dev->impl->name, p->name, g[0], g[1], g[2], l[0], l[1], l[2], dt * 1e6, dt > 0 ? (double)flops / dt * 1e-9 : 0.0,
                dt > 0 ? (double)mem / dt * 1e-9 : 0.0);
      else { /* tinygrad's DEBUG=2 line: number, device, name, buffers, memory in use, time / total time, GFLOPS, GB/s */
        char tm[32], mu[32];
        time_str(tm, sizeof tm, dt);
        bytes_str(mu, sizeof mu, (double)tkc_device_mem_used());
        fprintf(stderr, "*** %-7s %4" PRId64 " %-40s arg %2d mem %s tm %s/%9.2fms (%9.2f GFLOPS %7.2f GB/s) global [%" PRId64 ",%" PRId64 ",%" PRId64
                "] local [%" PRId64 ",%" PRId64 ",%" PRId64 "]\n",
                p->dev->impl->name, num, p->name, nbufs, mu, tm, (double)total_ns * 1e-6, (double)flops / sec * 1e-9, (double)mem / sec * 1e-9, g[0], g[1], g[2],
                l[0], l[1], l[2]);
      }
    }
  }
  if (ptrs != local) tkc_free(ptrs);
  return st;
}

tkc_status tkc_program_launch(tkc_program *p, tkc_buffer *const *bufs, int nbufs, const int64_t *vars, int nvars) {
  return launch(p, bufs, nbufs, vars, nvars, true);
}

tkc_status tkc_program_launch_quiet(tkc_program *p, tkc_buffer *const *bufs, int nbufs, const int64_t *vars, int nvars) {
  return launch(p, bufs, nbufs, vars, nvars, false);
}
