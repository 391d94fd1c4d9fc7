/* Capture and replay (tinygrad's TinyJit): the first tkc_jit_run calls the user's function as
 * usual and records every kernel launch its realizes make (program, buffers, variables); later runs
 * replay those launches with the new inputs' buffers and the variables' current values, without
 * building graphs, scheduling or looking kernels up.
 *
 * Buffers are planned once, after the capture: the inputs are the run's own; the outputs and the
 * buffers the function reads but did not compute (weights) are kept, also where a kernel updates
 * them in place (tkc_assign: optimizer state); every other buffer a kernel writes is an intermediate and gets a planned buffer, shared between intermediates whose lifetimes
 * (first write .. last read, in launch order) do not overlap.
 *
 * An output that is an input, or a view of one (a reshape, permute, shrink, ... that needs no
 * kernel), is not one of the jit's buffers: a replay returns the same view of the new input. */
#include <string.h>
#include "engine/jit.h"
#include "engine/kcache.h"
#include "graph/tensor_internal.h"
#include "runtime/device.h"

enum { B_FIXED, B_INPUT, B_OUTPUT, B_TEMP };

typedef struct jbuf {
  tkc_rbuf *rb;      /* as captured (a reference) */
  int kind, input;   /* B_*; for B_INPUT the input number */
  int first, last;   /* launches that write it first / use it last */
  int read_first;    /* read before (or by) its first write: it holds state from before the capture */
  tkc_buffer *plan;  /* B_TEMP: the planned buffer (owned by a slot) */
} jbuf;

typedef struct jlaunch {
  tkc_program *p;
  tkc_kcache_ref ref; /* the pin on p in the kernel cache (NULL: p is the jit's own) */
  int nbufs, nvars;
  int buf[33];        /* into bufs */
  int var[TKC_MAX_KERNEL_VARS]; /* ctx variable numbers, in the program's order */
} jlaunch;

typedef struct jin { /* what each input looked like at capture */
  tkc_dtype dt;
  int ndim;
  int64_t shape[TKC_MAX_DIMS];
  tkc_st st;
  int same_as; /* the first earlier input that was the same buffer (-1: none) */
} jin;

typedef struct jout {
  tkc_rbuf *rb; /* a buffer of the jit's (computed, or kept as is: a reference); NULL when from >= 0 */
  int from;     /* >= 0: a view of that input's buffer */
  jin view;     /* the output's dtype, shape and view of its buffer */
} jout;

struct tkc_jit {
  tkc_ctx *ctx;
  tkc_jit_fn fn;
  void *user;
  int state; /* 0: not captured; 1: captured */
  int nin, nout;
  jin *ins;
  jlaunch *launches;
  int nlaunches, caplaunches;
  jbuf *bufs;
  int nbufs, capbufs;
  jout *outs; /* the captured outputs: replays return views of their buffers or of the inputs' */
  tkc_buffer **slots;
  int nslots;
  tkc_status capture_error;
};

tkc_jit *tkc_jit_new(tkc_ctx *ctx, tkc_jit_fn fn, void *user) {
  if (!ctx || !fn) return tkc_err_null(TKC_EINVAL, "tkc_jit_new: NULL %s", ctx ? "function" : "ctx");
  tkc_jit *j = tkc_calloc(1, sizeof *j);
  if (!j) return tkc_err_null(TKC_ENOMEM, "out of memory creating a jit");
  j->ctx = ctx, j->fn = fn, j->user = user;
  return j;
}

static void forget(tkc_jit *j) {
  for (int i = 0; i < j->nlaunches; i++) tkc_kcache_release(j->launches[i].ref, j->launches[i].p);
  for (int i = 0; i < j->nbufs; i++) tkc_rbuf_unref(j->bufs[i].rb);
  for (int i = 0; i < j->nslots; i++) tkc_buffer_free(j->slots[i]);
  for (int i = 0; j->outs && i < j->nout; i++) tkc_rbuf_unref(j->outs[i].rb);
  tkc_free(j->launches), tkc_free(j->bufs), tkc_free(j->slots), tkc_free(j->outs), tkc_free(j->ins);
  tkc_ctx *ctx = j->ctx;
  tkc_jit_fn fn = j->fn;
  void *user = j->user;
  memset(j, 0, sizeof *j);
  j->ctx = ctx, j->fn = fn, j->user = user;
}

void tkc_jit_free(tkc_jit *j) {
  if (!j) return;
  if (j->ctx->capture == j) j->ctx->capture = NULL;
  forget(j);
  tkc_free(j);
}

static int buf_index(tkc_jit *j, tkc_rbuf *rb, int launch, int writes) {
  for (int i = 0; i < j->nbufs; i++)
    if (j->bufs[i].rb == rb) {
      j->bufs[i].last = launch;
      if (!writes && (j->bufs[i].first < 0 || j->bufs[i].first == launch)) j->bufs[i].read_first = 1;
      if (writes && j->bufs[i].first < 0) j->bufs[i].first = launch;
      return i;
    }
  if (j->nbufs == j->capbufs) {
    int cap = j->capbufs ? 2 * j->capbufs : 16;
    jbuf *b = tkc_realloc(j->bufs, (size_t)cap * sizeof *b);
    if (!b) return -1;
    j->bufs = b, j->capbufs = cap;
  }
  rb->refs++;
  j->bufs[j->nbufs] = (jbuf){rb, B_FIXED, -1, writes ? launch : -1, launch, !writes, NULL};
  return j->nbufs++;
}

tkc_status tkc_jit_record(tkc_ctx *ctx, tkc_program *p, tkc_kcache_ref *ref, tkc_rbuf *const *rbufs, int nbufs) {
  tkc_jit *j = ctx->capture;
  if (!j || j->capture_error) return TKC_OK;
  tkc_status st = TKC_OK;
  if (nbufs > 33 || tkc_program_nvars(p) > TKC_MAX_KERNEL_VARS) st = tkc_err(TKC_EUNSUPPORTED, "jit: kernel %s has too many buffers or variables to capture", tkc_program_name(p));
  if (!st && j->nlaunches == j->caplaunches) {
    int cap = j->caplaunches ? 2 * j->caplaunches : 16;
    jlaunch *l = tkc_realloc(j->launches, (size_t)cap * sizeof *l);
    if (!l) st = tkc_err(TKC_ENOMEM, "out of memory capturing a launch");
    else j->launches = l, j->caplaunches = cap;
  }
  if (st) return j->capture_error = st;
  jlaunch *l = &j->launches[j->nlaunches];
  memset(l, 0, sizeof *l);
  l->nbufs = nbufs;
  l->nvars = tkc_program_nvars(p);
  for (int i = 0; i < l->nvars; i++) l->var[i] = (int)(tkc_ctx_var_named(ctx, tkc_program_var_name(p, i)) - ctx->vars);
  for (int i = 0; i < nbufs; i++)
    if ((l->buf[i] = buf_index(j, rbufs[i], j->nlaunches, i == 0)) < 0) return j->capture_error = tkc_err(TKC_ENOMEM, "out of memory capturing a launch");
  /* keep the program: a second use in the kernel cache, or take it over when it is not cached */
  l->p = p;
  if (*ref) tkc_kcache_pin(*ref);
  l->ref = *ref;
  if (!*ref) *ref = TKC_KCACHE_TAKEN;
  j->nlaunches++;
  return TKC_OK;
}

/* intermediates share planned buffers when their lifetimes do not overlap (same device, dtype size) */
static tkc_status plan(tkc_jit *j) {
  int *slot_free_at = NULL; /* the last launch using each slot so far */
  j->slots = tkc_calloc((size_t)j->nbufs + 1, sizeof *j->slots);
  slot_free_at = tkc_calloc((size_t)j->nbufs + 1, sizeof *slot_free_at);
  if (!j->slots || !slot_free_at) {
    tkc_free(slot_free_at);
    return tkc_err(TKC_ENOMEM, "out of memory planning jit buffers");
  }
  for (int i = 0; i < j->nbufs; i++) { /* in order of first write: bufs were added in launch order */
    jbuf *b = &j->bufs[i];
    if (b->kind != B_TEMP) continue;
    tkc_buffer *rb = b->rb->buf;
    int s = -1;
    for (int k = 0; k < j->nslots && s < 0; k++)
      if (slot_free_at[k] < b->first && tkc_buffer_nbytes(j->slots[k]) >= tkc_buffer_nbytes(rb) &&
          tkc_dtype_size(tkc_buffer_dtype(j->slots[k])) == tkc_dtype_size(tkc_buffer_dtype(rb)))
        s = k;
    if (s < 0) {
      s = j->nslots;
      if (!(j->slots[s] = tkc_buffer_new_uninit(tkc_buffer_device(rb), tkc_buffer_dtype(rb), tkc_buffer_numel(rb)))) {
        tkc_free(slot_free_at);
        return tkc_last_status();
      }
      j->nslots++;
    }
    slot_free_at[s] = b->last;
    b->plan = j->slots[s];
  }
  tkc_free(slot_free_at);
  return TKC_OK;
}

static int node_same(const jin *c, const tkc_lazy *n) {
  return c->dt == n->dtype && c->ndim == n->ndim && !memcmp(c->shape, n->shape, (size_t)n->ndim * sizeof *n->shape) && tkc_st_equal(&c->st, n->st);
}

static tkc_status check_io(const tkc_jit *j, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout) {
  if ((nin && !in) || nin < 0 || (nout && !out) || nout < 0) return tkc_err(TKC_EINVAL, "tkc_jit_run: NULL or negative input/output list");
  for (int i = 0; i < nin; i++) {
    if (tkc_check(in[i])) return tkc_last_status();
    if (in[i]->ctx != j->ctx) return tkc_err(TKC_EINVAL, "tkc_jit_run: input %d belongs to another ctx", i);
  }
  return TKC_OK;
}

/* fn filled out with one of the caller's input handles, or one handle twice: each output gets a
 * handle of its own, as a replay gives (the caller frees inputs and outputs, each once) */
static tkc_status own_handles(tkc_ctx *ctx, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout) {
  for (int i = 0; i < nout; i++) {
    if (!out[i] || out[i]->magic != TKC_TENSOR_LIVE) continue;
    int shared = 0;
    for (int k = 0; k < nin && !shared; k++) shared = out[i] == in[k];
    for (int k = 0; k < i && !shared; k++) shared = out[i] == out[k];
    if (!shared) continue;
    tkc_lazy_ref(out[i]->node);
    if (!(out[i] = tkc_wrap(ctx, out[i]->node))) return tkc_last_status();
  }
  return TKC_OK;
}

/* the input nodes of the capture (a reference each, kept while fn runs): fn must leave them be */
static tkc_status check_inputs_kept(tkc_tensor *const *in, int nin, tkc_lazy *const *nodes) {
  for (int i = 0; i < nin; i++)
    if (in[i]->magic != TKC_TENSOR_LIVE || in[i]->node != nodes[i])
      return tkc_err(TKC_EINVAL, "tkc_jit_run: the jit function freed its input %d: the inputs belong to the caller (free only the tensors the function made)", i);
  return TKC_OK;
}

/* what each captured buffer is (an input's, an output's, the function's own intermediate, or kept as
 * is), and what each output is (a jit buffer, or a view of an input's buffer) */
static tkc_status classify(tkc_jit *j, tkc_lazy *const *in, tkc_tensor **out) {
  for (int b = 0; b < j->nbufs; b++) {
    jbuf *x = &j->bufs[b];
    for (int i = 0; i < j->nin && x->kind != B_INPUT; i++)
      if (in[i]->rbuf == x->rb) x->kind = B_INPUT, x->input = i;
    for (int i = 0; i < j->nout; i++)
      if (out[i]->node->rbuf == x->rb && x->kind != B_INPUT) x->kind = B_OUTPUT;
    /* written here and holding nothing from before (not read first, not an assign's destination) */
    if (x->kind == B_FIXED && x->first >= 0 && !x->read_first && !x->rb->in_place) x->kind = B_TEMP;
    if (x->kind == B_INPUT) tkc_rbuf_unref(x->rb), x->rb = NULL; /* replays use their own inputs */
  }
  for (int i = 0; i < j->nout; i++) {
    tkc_lazy *o = out[i]->node;
    jout *jo = &j->outs[i];
    if (o->kind != TKC_LZ_BUFFER) return tkc_err(TKC_EINTERNAL, "jit: output %d was not realized", i);
    jo->from = -1;
    for (int k = 0; k < j->nin && jo->from < 0; k++)
      if (in[k]->rbuf == o->rbuf) jo->from = k;
    if (jo->from < 0) jo->rb = o->rbuf, o->rbuf->refs++;
    jo->view = (jin){.dt = o->dtype, .ndim = o->ndim, .st = *o->st, .same_as = -1};
    memcpy(jo->view.shape, o->shape, (size_t)o->ndim * sizeof *o->shape);
  }
  return TKC_OK;
}

static tkc_status capture(tkc_jit *j, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout) {
  tkc_ctx *ctx = j->ctx;
  tkc_status st = TKC_OK;
  for (int i = 0; i < nin && !st; i++) st = tkc_realize(in[i]); /* inputs are buffers before the capture starts */
  if (st) return st;
  j->ins = tkc_calloc((size_t)nin + 1, sizeof *j->ins);
  j->outs = tkc_calloc((size_t)nout + 1, sizeof *j->outs);
  tkc_lazy **nodes = tkc_calloc((size_t)nin + 1, sizeof *nodes);
  if (!j->ins || !j->outs || !nodes) {
    tkc_free(nodes);
    return tkc_err(TKC_ENOMEM, "out of memory capturing");
  }
  j->nin = nin, j->nout = nout;
  for (int i = 0; i < nin; i++) {
    tkc_lazy *n = nodes[i] = in[i]->node;
    tkc_lazy_ref(n);
    j->ins[i] = (jin){.dt = n->dtype, .ndim = n->ndim, .st = *n->st, .same_as = -1};
    memcpy(j->ins[i].shape, n->shape, (size_t)n->ndim * sizeof *n->shape);
    for (int k = 0; k < i && j->ins[i].same_as < 0; k++)
      if (nodes[k]->rbuf == n->rbuf) j->ins[i].same_as = k;
  }
  ctx->capture = j;
  st = j->fn(ctx, in, nin, out, nout, j->user);
  tkc_status own = own_handles(ctx, in, nin, out, nout); /* also when fn failed: the caller frees out */
  if (!st) st = own;
  if (!st) st = check_inputs_kept(in, nin, nodes);
  for (int i = 0; i < nout && !st; i++) st = out[i] ? tkc_realize(out[i]) : tkc_err(TKC_EINVAL, "tkc_jit_run: the function left output %d NULL", i);
  ctx->capture = NULL;
  if (!st) st = j->capture_error;
  if (!st) st = classify(j, nodes, out);
  if (!st) st = plan(j);
  for (int i = 0; i < nin; i++) tkc_lazy_unref(nodes[i]);
  tkc_free(nodes);
  if (st) return st;
  j->state = 1;
  return TKC_OK;
}

/* An input that views an output buffer of this jit (a training loop's x = jit(x)) would be read by
 * the launches that write it: that output gets a new buffer, and the input keeps the old one. */
static tkc_status renew_fed_back(tkc_jit *j, tkc_tensor *const *in, int nin) {
  for (int b = 0; b < j->nbufs; b++) {
    jbuf *x = &j->bufs[b];
    int fed = 0;
    for (int i = 0; i < nin && !fed && x->kind == B_OUTPUT; i++) fed = in[i]->node->rbuf == x->rb;
    if (!fed) continue;
    const tkc_buffer *old = x->rb->buf;
    tkc_rbuf *rb = tkc_rbuf_new(tkc_buffer_device(old), tkc_buffer_dtype(old), tkc_buffer_numel(old), false);
    if (!rb) return tkc_last_status();
    for (int o = 0; o < j->nout; o++)
      if (j->outs[o].rb == x->rb) tkc_rbuf_unref(j->outs[o].rb), j->outs[o].rb = rb, rb->refs++;
    tkc_rbuf_unref(x->rb);
    x->rb = rb;
  }
  return TKC_OK;
}

static tkc_status replay(tkc_jit *j, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout) {
  tkc_ctx *ctx = j->ctx;
  if (nin != j->nin || nout != j->nout)
    return tkc_err(TKC_EINVAL, "tkc_jit_run: %d inputs and %d outputs, the capture had %d and %d", nin, nout, j->nin, j->nout);
  for (int i = 0; i < nin; i++) {
    tkc_status st = tkc_realize(in[i]);
    if (!st) st = tkc_lazy_check_stamp(in[i]->node, "tkc_jit_run");
    if (st) return st;
    if (!node_same(&j->ins[i], in[i]->node))
      return tkc_err(TKC_EINVAL, "tkc_jit_run: input %d is %s %s, laid out otherwise than at the capture (%s %s): make a new jit for it", i,
                     tkc_dtype_name(in[i]->node->dtype), TKC_NODE_SHAPE(in[i]->node), tkc_dtype_name(j->ins[i].dt),
                     TKC_SHAPE_STR(j->ins[i].ndim, j->ins[i].shape));
    /* the launches read one buffer for both: they cannot be told apart now */
    int k = j->ins[i].same_as;
    if (k >= 0 && in[k]->node->rbuf != in[i]->node->rbuf)
      return tkc_err(TKC_EINVAL, "tkc_jit_run: inputs %d and %d were one buffer at the capture and are two now: make a new jit for distinct inputs", k, i);
  }
  tkc_status fed = renew_fed_back(j, in, nin);
  if (fed) return fed;
  for (int k = 0; k < j->nlaunches; k++) {
    jlaunch *l = &j->launches[k];
    tkc_buffer *bufs[33];
    int64_t vals[TKC_MAX_KERNEL_VARS];
    for (int i = 0; i < l->nbufs; i++) {
      const jbuf *b = &j->bufs[l->buf[i]];
      bufs[i] = b->kind == B_INPUT ? in[b->input]->node->rbuf->buf : b->kind == B_TEMP ? b->plan : b->rb->buf;
    }
    for (int i = 0; i < l->nvars; i++) {
      const tkc_ctx_var *v = &ctx->vars[l->var[i]];
      if (v->value < 0) return tkc_err(TKC_EINVAL, "tkc_jit_run: variable %s is not bound (tkc_dim_bind)", v->name);
      vals[i] = v->value;
    }
    double t0 = tkc_now_s();
    tkc_status st = tkc_program_launch(l->p, bufs, l->nbufs, vals, l->nvars);
    ctx->kernels_run += !st;
    ctx->kernel_s += tkc_now_s() - t0;
    if (st) return st;
  }
  /* views of the kept output buffers (the next replay overwrites them), or of this run's inputs */
  for (int i = 0; i < nout; i++) {
    const jout *o = &j->outs[i];
    const tkc_lazy *from = o->from >= 0 ? in[o->from]->node : NULL;
    tkc_lazy *n = tkc_lazy_new(ctx, TKC_LZ_BUFFER, o->view.dt, o->view.ndim, o->view.shape);
    tkc_status st = n ? tkc_lazy_become_buffer(n, from ? from->rbuf : o->rb, &o->view.st) : tkc_last_status();
    if (!st && from) memcpy(n->arg, from->arg, sizeof n->arg); /* a view carries its base's binding (tkc_lazy_become_view) */
    if (st) {
      tkc_lazy_unref(n);
      for (int k = 0; k < i; k++) tkc_tensor_free(out[k]), out[k] = NULL;
      return tkc_last_status();
    }
    if (!(out[i] = tkc_wrap(ctx, n))) {
      for (int k = 0; k < i; k++) tkc_tensor_free(out[k]), out[k] = NULL;
      return tkc_last_status();
    }
  }
  return TKC_OK;
}

tkc_status tkc_jit_run(tkc_jit *j, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout) {
  if (!j) return tkc_err(TKC_EINVAL, "tkc_jit_run: NULL jit");
  if (j->ctx->capture) return tkc_err(TKC_EINVAL, "tkc_jit_run: called while a capture of this ctx is running");
  tkc_status st = check_io(j, in, nin, out, nout);
  if (st) return st;
  /* the inputs as given: out may be the same array (x = jit(x)), and is cleared for a failed run */
  tkc_tensor *few[8], **ins = nin <= 8 ? few : tkc_malloc((size_t)nin * sizeof *ins);
  if (!ins) return tkc_err(TKC_ENOMEM, "out of memory running a jit");
  if (nin) memcpy(ins, in, (size_t)nin * sizeof *ins);
  for (int i = 0; i < nout; i++) out[i] = NULL;
  if (j->state) st = replay(j, ins, nin, out, nout);
  else if ((st = capture(j, ins, nin, out, nout))) {
    for (int i = 0; i < nout; i++) tkc_tensor_free(out[i]), out[i] = NULL;
    forget(j); /* the next run captures again */
  }
  if (ins != few) tkc_free(ins);
  return st;
}

int tkc_jit_kernels(const tkc_jit *j) { return j && j->state ? j->nlaunches : 0; }

int tkc_jit_buffers(const tkc_jit *j) { return j && j->state ? j->nslots : 0; }
