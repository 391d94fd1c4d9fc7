/* Lazy nodes: the refcounted graph behind tensors. Realizing them is engine/realize.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "graph/tensor_internal.h"

tkc_rbuf *tkc_rbuf_new(tkc_device *d, tkc_dtype dt, size_t n, bool zero) {
  tkc_rbuf *rb = tkc_malloc(sizeof *rb);
  if (!rb) return tkc_err_null(TKC_ENOMEM, "out of memory allocating a buffer");
  rb->refs = 1;
  rb->in_place = false;
  rb->buf = zero ? tkc_buffer_new(d, dt, n) : tkc_buffer_new_uninit(d, dt, n);
  if (!rb->buf) {
    tkc_free(rb);
    return NULL;
  }
  return rb;
}

void tkc_rbuf_unref(tkc_rbuf *rb) {
  if (!rb || --rb->refs > 0) return;
  tkc_buffer_free(rb->buf);
  tkc_free(rb);
}

tkc_lazy *tkc_lazy_new(struct tkc_ctx *ctx, tkc_lz_kind kind, tkc_dtype dt, int ndim, const int64_t *shape) {
  if (ndim < 0 || ndim > TKC_MAX_DIMS) return tkc_err_null(TKC_ESHAPE, "tensors have at most %d dims, not %d", TKC_MAX_DIMS, ndim);
  /* a dtype the device cannot hold fails here, where the op is built, not when its kernel renders */
  if (tkc_ctx_check_dtype(ctx, dt, NULL)) return NULL;
  /* every node's size is checked here, whatever op made its shape: no wrapped element counts (at
   * the variables' largest values: buffers of variable-size tensors are allocated for those) */
  int64_t max[TKC_MAX_DIMS];
  if (ndim && tkc_shape_check_dims(ctx, ndim, shape, max, "shape")) return NULL;
  if (ndim && tkc_shape_size_checked(ndim, max, (int64_t)tkc_dtype_size(dt), NULL))
    return tkc_err_null(TKC_ESHAPE, "a %s tensor of shape %s: its size in bytes overflows 64 bits", tkc_dtype_name(dt), TKC_SHAPE_STR(ndim, shape));
  tkc_lazy *n = tkc_calloc(1, sizeof *n);
  if (!n) return tkc_err_null(TKC_ENOMEM, "out of memory creating a tensor");
  n->refs = 1;
  n->kind = kind;
  n->dtype = dt;
  n->ndim = ndim;
  if (ndim) memcpy(n->shape, shape, (size_t)ndim * sizeof *shape);
  n->ctx = ctx;
  return n;
}

void tkc_lazy_ref(tkc_lazy *n) {
  if (n) n->refs++;
}

static void drop_sources(tkc_lazy *n) {
  for (int i = 0; i < n->nsrc; i++) tkc_lazy_unref(n->src[i]);
  n->nsrc = 0;
}

/* ---------------------------------------------------------------- gradients held by nodes */

static void unlist_graded(tkc_lazy *n) {
  tkc_ctx *c = n->ctx;
  for (int i = 0; i < c->ngraded; i++)
    if (c->graded[i] == n) {
      c->graded[i] = c->graded[--c->ngraded];
      return;
    }
}

tkc_status tkc_lazy_set_grad(tkc_lazy *n, tkc_lazy *g) {
  tkc_ctx *c = n->ctx;
  if (g && !n->grad) {
    if (c->ngraded == c->capgraded) {
      int cap = c->capgraded ? 2 * c->capgraded : 16;
      tkc_lazy **m = tkc_realloc(c->graded, (size_t)cap * sizeof *m);
      if (!m) return tkc_err(TKC_ENOMEM, "out of memory keeping a gradient");
      c->graded = m, c->capgraded = cap;
    }
    c->graded[c->ngraded++] = n;
  } else if (!g && n->grad) unlist_graded(n);
  tkc_lazy *old = n->grad;
  tkc_lazy_ref(g);
  n->grad = g;
  tkc_lazy_unref(old);
  return TKC_OK;
}

void tkc_ctx_drop_grads(tkc_ctx *c) {
  int n = c->ngraded;
  tkc_lazy **held = c->graded;
  c->graded = NULL, c->ngraded = c->capgraded = 0;
  for (int i = 0; i < n; i++) { /* taken off first: unrefs below may free listed nodes */
    tkc_lazy *g = held[i]->grad;
    held[i]->grad = NULL;
    held[i] = g;
  }
  for (int i = 0; i < n; i++) tkc_lazy_unref(held[i]);
  tkc_free(held);
}

/* Iterative, so freeing a long chain cannot overflow the stack. */
void tkc_lazy_unref(tkc_lazy *n) {
  tkc_lazy *stack[64], **st = stack;
  size_t depth = 0, cap = 64;
  if (n) st[depth++] = n;
  while (depth) {
    tkc_lazy *x = st[--depth];
    if (--x->refs > 0) continue;
    for (int i = 0; i < x->nsrc; i++) {
      if (depth == cap) {
        tkc_lazy **bigger = tkc_malloc(2 * cap * sizeof *bigger);
        if (!bigger) { tkc_lazy_unref(x->src[i]); continue; } /* no memory: recurse for this one */
        memcpy(bigger, st, depth * sizeof *st);
        if (st != stack) tkc_free(st);
        st = bigger;
        cap *= 2;
      }
      st[depth++] = x->src[i];
    }
    if (x->grad) unlist_graded(x);
    tkc_lazy *extra[3] = {x->recipe, x->grad, x->composite};
    for (int i = 0; i < 3; i++) {
      if (!extra[i]) continue;
      if (depth == cap) { tkc_lazy_unref(extra[i]); continue; } /* rare: recurse for this one */
      st[depth++] = extra[i];
    }
    tkc_rbuf_unref(x->rbuf);
    tkc_rbuf_unref(x->target);
    tkc_free(x->st);
    tkc_free(x);
  }
  if (st != stack) tkc_free(st);
}

void tkc_lazy_set_src(tkc_lazy *n, int i, tkc_lazy *src) {
  if (src && (src->requires_grad || src->needs_grad)) n->needs_grad = 1;
  tkc_lazy_ref(src);
  n->src[i] = src;
  if (i >= n->nsrc) n->nsrc = i + 1;
}

void tkc_lazy_mark_composite(tkc_lazy *out, tkc_composite_op op, int nsrc, tkc_lazy *const *src, const int64_t *arg, int narg) {
  bool needed = false;
  for (int i = 0; i < nsrc; i++) needed |= src[i]->requires_grad || src[i]->needs_grad;
  if (!out || !needed || out->composite || nsrc > 3 || narg > 2 * TKC_MAX_DIMS) return;
  tkc_lazy *r = tkc_lazy_new(out->ctx, TKC_LZ_COMPOSITE, out->dtype, out->ndim, out->shape);
  if (!r) {
    tkc_clear_error();
    return;
  }
  r->op = (int)op;
  for (int i = 0; i < nsrc; i++) tkc_lazy_set_src(r, i, src[i]);
  if (narg) memcpy(r->arg, arg, sizeof(int64_t) * (size_t)narg);
  out->composite = r;
}

bool tkc_lazy_owns_buffer(const tkc_lazy *n) {
  return n->kind == TKC_LZ_BUFFER && tkc_st_is_contiguous(n->st) &&
         tkc_buffer_nbytes(n->rbuf->buf) == (size_t)tkc_shape_numel_max(n->ctx, n->ndim, n->shape) * tkc_dtype_size(n->dtype);
}

bool tkc_lazy_is_contiguous_view(const tkc_lazy *n) {
  const tkc_lazy *chain[16];
  int len = 0;
  for (; n->kind == TKC_LZ_MOVE; n = n->src[0])
    if (len == 16) return false;
    else chain[len++] = n;
  if (n->kind != TKC_LZ_BUFFER || n->target) return false;
  tkc_st st = *n->st;
  while (len)
    if (tkc_lazy_apply_move(&st, chain[--len])) return false;
  return tkc_st_is_contiguous(&st);
}

/* A node the backward pass may walk through keeps how it was computed when it becomes a BUFFER: the
 * recipe takes over its sources (n then has none); the buffer itself stands for its value. */
static int keep_recipe(tkc_lazy *n) {
  tkc_lazy *r = tkc_lazy_new(n->ctx, n->kind, n->dtype, n->ndim, n->shape);
  if (!r) return -1;
  r->op = n->op, r->value = n->value, r->needs_grad = 1;
  memcpy(r->arg, n->arg, sizeof r->arg);
  memcpy(r->src, n->src, sizeof r->src);
  r->nsrc = n->nsrc;
  n->nsrc = 0;
  n->recipe = r;
  return 0;
}

tkc_status tkc_lazy_become_buffer(tkc_lazy *n, tkc_rbuf *rb, const tkc_st *st) {
  if (n->needs_grad && n->kind != TKC_LZ_BUFFER && !n->requires_grad && !n->recipe && keep_recipe(n)) return tkc_last_status();
  tkc_st *copy = n->st ? n->st : tkc_malloc(sizeof *copy);
  if (!copy) return tkc_err(TKC_ENOMEM, "out of memory realizing a tensor");
  *copy = *st;
  n->st = copy;
  rb->refs++;
  tkc_rbuf_unref(n->rbuf);
  n->rbuf = rb;
  n->kind = TKC_LZ_BUFFER;
  tkc_rbuf_unref(n->target); /* (an assign's: rb is it) */
  n->target = NULL;
  drop_sources(n);
  tkc_shape_stamp(n);
  return TKC_OK;
}

/* A buffer whose shape has variables holds the values of the binding it was computed for: under
 * another binding its data would be read at the wrong lengths. The stamp, in arg: pairs (variable
 * index, value then), up to TKC_MAX_DIMS of them, ended by -1. A view (tkc_lazy_become_view) reads
 * its base at any binding, so it carries its base's stamp instead of one of its own. */
static void stamp_add(tkc_lazy *n, int *k, int64_t var, int64_t value) {
  for (int i = 0; i < *k; i += 2)
    if (n->arg[i] == var) return;
  if (*k < 2 * TKC_MAX_DIMS) n->arg[(*k)++] = var, n->arg[(*k)++] = value;
}

void tkc_shape_stamp(tkc_lazy *n) {
  int k = 0;
  for (int i = 0; i < n->ndim; i++) {
    int64_t c;
    const tkc_ctx_var *v = tkc_dim_is_var(n->shape[i]) ? tkc_dim_decode(n->ctx, n->shape[i], &c, "realize") : NULL;
    if (v && v->value >= 0) stamp_add(n, &k, v - n->ctx->vars, v->value);
  }
  if (k < 2 * TKC_MAX_DIMS) n->arg[k] = -1;
}

tkc_status tkc_lazy_check_stamp(const tkc_lazy *n, const char *who) {
  if (n->kind != TKC_LZ_BUFFER) return TKC_OK;
  for (int k = 0; k < 2 * TKC_MAX_DIMS && n->arg[k] >= 0; k += 2) {
    const tkc_ctx_var *v = &n->ctx->vars[n->arg[k]];
    if (v->value != n->arg[k + 1])
      return tkc_err(TKC_EINVAL, "%s: the tensor was computed for %s = %lld, and %s is %lld now: build it again for the new value (or replay it with tkc_jit)",
                     who, v->name, (long long)n->arg[k + 1], v->name, (long long)v->value);
  }
  return TKC_OK;
}

/* a dim (plain or a token) as a view sees it: c + a slot of st's variables; 1 when a variable, -1 on error */
static int sym_dim(tkc_st *st, const tkc_ctx *ctx, int64_t dim, tkc_sdim *out) {
  int64_t c = dim;
  const tkc_ctx_var *v = tkc_dim_is_var(dim) ? tkc_dim_decode(ctx, dim, &c, "view") : NULL;
  *out = (tkc_sdim){c, 0};
  if (!v) return tkc_dim_is_var(dim) ? -1 : 0;
  tkc_svar sv = {.vmin = v->min, .vmax = v->max};
  memcpy(sv.name, v->name, sizeof sv.name);
  return (out->var = tkc_st_var_slot(st, &sv)) ? 1 : -1;
}

tkc_status tkc_lazy_apply_move(tkc_st *st, const tkc_lazy *m) {
  int flags[TKC_MAX_DIMS];
  int64_t shape[TKC_MAX_DIMS], arg[2 * TKC_MAX_DIMS]; /* views are at the variables' largest values */
  tkc_sdim sym[3 * TKC_MAX_DIMS]; /* pad: before, after and the dim's length per dim; shrink: begin, end */
  int symbolic = 0, per = m->op == TKC_OP_PAD ? 3 : 2;
  tkc_shape_max(m->ctx, m->ndim, m->shape, shape);
  if (m->op == TKC_OP_PAD || m->op == TKC_OP_SHRINK) {
    tkc_shape_max(m->ctx, 2 * m->ndim, m->arg, arg);
    for (int i = 0; i < m->ndim; i++)
      for (int k = 0; k < per; k++) {
        int r = sym_dim(st, m->ctx, k < 2 ? m->arg[2 * i + k] : m->src[0]->shape[i], &sym[per * i + k]);
        if (r < 0) return tkc_last_status();
        symbolic |= r;
      }
  }
  switch (m->op) {
  case TKC_OP_RESHAPE: return tkc_st_reshape(st, m->ndim, shape);
  case TKC_OP_EXPAND: return tkc_st_expand(st, shape);
  case TKC_OP_PAD: return tkc_st_pad(st, arg, symbolic ? sym : NULL);
  case TKC_OP_SHRINK: return tkc_st_shrink(st, arg, symbolic ? sym : NULL);
  case TKC_OP_PERMUTE:
  case TKC_OP_FLIP:
    for (int k = 0; k < m->ndim; k++) flags[k] = (int)m->arg[k];
    return m->op == TKC_OP_PERMUTE ? tkc_st_permute(st, flags) : tkc_st_flip(st, flags);
  case TKC_MOVE_WINDOW: return tkc_st_window(st, m->arg[0], m->arg[1], m->arg[2]);
  default: return tkc_err(TKC_EINTERNAL, "unknown movement op %d", m->op);
  }
}

tkc_lazy *tkc_lz_move_node(tkc_lazy *src, int ndim, const int64_t *shape) {
  tkc_lazy *m = tkc_lazy_new(src->ctx, TKC_LZ_MOVE, src->dtype, ndim, shape);
  if (!m) return NULL;
  m->op = TKC_OP_RESHAPE;
  tkc_lazy_set_src(m, 0, src);
  return m;
}

/* n is a chain of movement ops over a realized node: see the same data through a composed view. The
 * chain may be any length (the scheduler has realized the nodes where its views stop merging). */
tkc_status tkc_lazy_become_view(tkc_lazy *n) {
  tkc_lazy *few[64], **chain = few;
  size_t len = 0;
  tkc_lazy *b = n;
  for (; b->kind == TKC_LZ_MOVE; b = b->src[0]) len++;
  if (b->kind != TKC_LZ_BUFFER) return tkc_err(TKC_EINTERNAL, "realize: the base of a view was not computed");
  if (len > sizeof few / sizeof *few && !(chain = tkc_malloc(len * sizeof *chain))) return tkc_err(TKC_ENOMEM, "out of memory realizing a view");
  size_t i = 0;
  for (tkc_lazy *m = n; m != b; m = m->src[0]) chain[i++] = m;
  tkc_st st = *b->st;
  tkc_status s = TKC_OK;
  while (i > 0 && !s) {
    bool full = st.nviews == TKC_MAX_VIEWS;
    if ((s = tkc_lazy_apply_move(&st, chain[--i])) == TKC_ESHAPE && full) /* (the schedule realizes where views stop merging) */
      s = tkc_err(TKC_EINTERNAL, "realize: a view needs more than %d stacked views", TKC_MAX_VIEWS);
  }
  if (chain != few) tkc_free(chain);
  if (s) return s;
  int64_t stamp[2 * TKC_MAX_DIMS];
  memcpy(stamp, b->arg, sizeof stamp);
  s = tkc_lazy_become_buffer(n, b->rbuf, &st);
  memcpy(n->arg, stamp, sizeof stamp); /* the base's binding, not the view's */
  return s;
}
