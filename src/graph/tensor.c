/* The tensor API (tkc.h): contexts, handles, creation, elementwise ops with broadcasting and
 * tinygrad's type promotion, reductions, movement ops, realizing and reading results. The
 * composites built from these live in composite.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "engine/engine.h"
#include "graph/tensor_internal.h"

/* ---------------------------------------------------------------- contexts */

tkc_ctx *tkc_ctx_new(const char *device) {
  static const char *const preferred[] = {"CUDA", "LLVM", "CPU", "INTERP"};
  const char *name = device ? device : getenv("TKC_DEVICE");
  tkc_device *d = NULL;
  if (name && *name) d = tkc_device_get(name);
  else
    for (size_t i = 0; !d && i < TKC_COUNTOF(preferred); i++)
      if (tkc_device_available(preferred[i])) d = tkc_device_get(preferred[i]);
  if (!d) return name ? NULL : tkc_err_null(TKC_EDEVICE, "no device can run here");
  tkc_ctx *ctx = tkc_calloc(1, sizeof *ctx);
  if (!ctx) return tkc_err_null(TKC_ENOMEM, "out of memory creating a ctx");
  ctx->dev = d;
  ctx->serial = tkc_ctx_serial_new();
  ctx->beam = -1; /* $TKC_BEAM */
  return ctx;
}

static void free_list(tkc_tensor *t, int release_node) {
  while (t) {
    tkc_tensor *next = t->next;
    if (release_node) tkc_lazy_unref(t->node);
    tkc_free(t);
    t = next;
  }
}

void tkc_ctx_free(tkc_ctx *ctx) {
  if (!ctx) return;
  tkc_device *dev = ctx->dev;
  tkc_ctx_drop_grads(ctx); /* (the cycles of gradients that read their leaves) */
  free_list(ctx->live, 1);
  free_list(ctx->spare, 0);
  tkc_free(ctx->vars);
  tkc_free(ctx);
  tkc_device_release_pool(dev);
}

const char *tkc_ctx_device(const tkc_ctx *ctx) { return ctx ? tkc_device_name(ctx->dev) : NULL; }

/* ---------------------------------------------------------------- handles */

/* A handle for node (the handle takes over the caller's reference). NULL + error when node is NULL. */
tkc_tensor *tkc_wrap(tkc_ctx *ctx, tkc_lazy *node) {
  if (!node) return NULL;
  tkc_tensor *t = NULL;
  if (ctx->nspare > TKC_HANDLE_QUARANTINE) { /* the oldest dead handle, freed long enough ago */
    t = ctx->spare;
    ctx->spare = t->next;
    if (!ctx->spare) ctx->spare_tail = NULL;
    ctx->nspare--;
  } else if (!(t = tkc_malloc(sizeof *t))) {
    tkc_lazy_unref(node);
    return tkc_err_null(TKC_ENOMEM, "out of memory creating a tensor");
  }
  t->magic = TKC_TENSOR_LIVE;
  t->ctx = ctx;
  t->node = node;
  t->scope = ctx->scope_depth;
  t->prev = NULL;
  t->next = ctx->live;
  if (ctx->live) ctx->live->prev = t;
  ctx->live = t;
  return t;
}

void tkc_tensor_free(tkc_tensor *t) {
  if (!t || t->magic != TKC_TENSOR_LIVE) return;
  tkc_ctx *ctx = t->ctx;
  if (t->prev) t->prev->next = t->next;
  else ctx->live = t->next;
  if (t->next) t->next->prev = t->prev;
  tkc_lazy_unref(t->node);
  t->node = NULL;
  t->magic = TKC_TENSOR_DEAD;
  t->next = NULL; /* kept, not freed, at the end of the queue: a later use of this handle is caught */
  if (ctx->spare_tail) ctx->spare_tail->next = t;
  else ctx->spare = t;
  ctx->spare_tail = t;
  ctx->nspare++;
}

/* 0 when t can be used; otherwise keeps the first error of a chain (NULL) or reports a dead handle */
int tkc_check(const tkc_tensor *t) {
  if (!t) {
    if (!tkc_last_status()) tkc_err(TKC_EINVAL, "NULL tensor");
    return -1;
  }
  if (t->magic != TKC_TENSOR_LIVE) {
    tkc_err(TKC_EINVAL, "use of a freed tensor");
    return -1;
  }
  return 0;
}

/* ---------------------------------------------------------------- properties */

int tkc_ndim(const tkc_tensor *t) { return tkc_check(t) ? 0 : t->node->ndim; }

int64_t tkc_dim(const tkc_tensor *t, int axis) {
  if (tkc_check(t)) return -1;
  int n = t->node->ndim, given = axis;
  if (axis < 0) axis += n;
  if (axis < 0 || axis >= n) {
    tkc_err(TKC_EINVAL, "dim: axis %d out of range for a %d-d tensor of shape %s", given, n, TKC_NODE_SHAPE(t->node));
    return -1;
  }
  return t->node->shape[axis];
}

int64_t tkc_numel(const tkc_tensor *t) {
  if (tkc_check(t)) return 0;
  const tkc_lazy *n = t->node;
  return tkc_shape_bound(n->ctx, n->ndim, n->shape, NULL, "numel"); /* (the plain count without variables) */
}
tkc_dtype tkc_dtype_of(const tkc_tensor *t) { return tkc_check(t) ? TKC_VOID : t->node->dtype; }
tkc_ctx *tkc_tensor_ctx(const tkc_tensor *t) { return tkc_check(t) ? NULL : t->ctx; }

/* ---------------------------------------------------------------- node builders */

/* the dims; a tensor's bytes must fit int64 (kernels index past 2^31 - 1 elements in int64), and
 * below 2^31 elements where the op says so (limit32: rand's counters are 32-bit) */
static tkc_status check_shape(const char *what, tkc_ctx *ctx, int ndim, const int64_t *shape, tkc_dtype dt, int limit32) {
  if (ndim < 0 || ndim > TKC_MAX_DIMS) return tkc_err(TKC_ESHAPE, "%s: tensors have 0..%d dims, not %d", what, TKC_MAX_DIMS, ndim);
  if (ndim && !shape) return tkc_err(TKC_EINVAL, "%s: NULL shape for %d dims", what, ndim);
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0 && !tkc_dim_is_var(shape[i]))
      return tkc_err(TKC_ESHAPE, "%s: shape %s: dim %d is negative (%lld)", what, TKC_SHAPE_STR(ndim, shape), i, (long long)shape[i]);
  int64_t numel, max[TKC_MAX_DIMS]; /* variable dims at their largest values */
  if (tkc_shape_check_dims(ctx, ndim, shape, max, what)) return tkc_last_status();
  if (tkc_shape_size_checked(ndim, max, (int64_t)tkc_dtype_size(dt), &numel))
    return tkc_err(TKC_ESHAPE, "%s: shape %s of %s: the size in bytes overflows 64 bits", what, TKC_SHAPE_STR(ndim, shape), tkc_dtype_name(dt));
  if (limit32 && numel > INT32_MAX) return tkc_err(TKC_ESHAPE, "%s: shape %s has 2^31 or more elements", what, TKC_SHAPE_STR(ndim, shape));
  return TKC_OK;
}

tkc_lazy *tkc_lz_const(tkc_ctx *ctx, tkc_dtype dt, double v, int ndim, const int64_t *shape) {
  tkc_lazy *n = tkc_lazy_new(ctx, TKC_LZ_CONST, dt, ndim, shape);
  if (!n) return NULL;
  /* ints: through int64, so -1 is all ones in an unsigned dtype */
  if ((tkc_dtype_is_int(dt) || dt == TKC_BOOL) && v == floor(v) && fabs(v) < 9.2e18 && dt != TKC_BOOL)
    n->value = tkc_value_truncate((tkc_value){.i = (int64_t)v}, dt);
  else n->value = tkc_value_cast((tkc_value){.f = v}, TKC_FLOAT64, dt);
  return n;
}

tkc_lazy *tkc_lz_unary(tkc_op op, tkc_lazy *a) {
  tkc_lazy *n = tkc_lazy_new(a->ctx, TKC_LZ_ALU, a->dtype, a->ndim, a->shape);
  if (!n) return NULL;
  n->op = op;
  tkc_lazy_set_src(n, 0, a);
  return n;
}

/* an ALU node over sources of one shape; CMPLT/CMPNE give bool, the rest the last source's dtype */
tkc_lazy *tkc_lz_alu(tkc_op op, int nsrc, tkc_lazy *const *src) {
  tkc_dtype dt = (op == TKC_OP_CMPLT || op == TKC_OP_CMPNE) ? TKC_BOOL : src[nsrc - 1]->dtype;
  tkc_lazy *n = tkc_lazy_new(src[0]->ctx, TKC_LZ_ALU, dt, src[0]->ndim, src[0]->shape);
  if (!n) return NULL;
  n->op = op;
  for (int i = 0; i < nsrc; i++) tkc_lazy_set_src(n, i, src[i]);
  return n;
}

tkc_lazy *tkc_lz_cast(tkc_lazy *a, tkc_dtype dt, int bitcast) {
  if (a->dtype == dt) {
    tkc_lazy_ref(a);
    return a;
  }
  tkc_lazy *n = tkc_lazy_new(a->ctx, bitcast ? TKC_LZ_BITCAST : TKC_LZ_CAST, dt, a->ndim, a->shape);
  if (n) tkc_lazy_set_src(n, 0, a);
  return n;
}

/* a movement node; no node (a new reference to a) when the op changes nothing */
tkc_lazy *tkc_lz_move(tkc_lazy *a, int op, const int64_t *arg, int narg, int ndim, const int64_t *shape) {
  if (op != TKC_MOVE_WINDOW && ndim == a->ndim && (!ndim || !memcmp(shape, a->shape, (size_t)ndim * sizeof *shape))) {
    int noop = op == TKC_OP_RESHAPE || op == TKC_OP_EXPAND;
    if (op == TKC_OP_PERMUTE || op == TKC_OP_FLIP || op == TKC_OP_PAD || op == TKC_OP_SHRINK) {
      noop = 1;
      for (int i = 0; i < narg; i++) {
        int64_t identity = op == TKC_OP_PERMUTE ? i : op == TKC_OP_SHRINK ? (i % 2 ? a->shape[i / 2] : 0) : 0;
        if (arg[i] != identity) noop = 0;
      }
    }
    if (noop) {
      tkc_lazy_ref(a);
      return a;
    }
  }
  tkc_lazy *n = tkc_lazy_new(a->ctx, TKC_LZ_MOVE, a->dtype, ndim, shape);
  if (!n) return NULL;
  n->op = op;
  if (narg) memcpy(n->arg, arg, (size_t)narg * sizeof *arg);
  tkc_lazy_set_src(n, 0, a);
  return n;
}

tkc_lazy *tkc_lz_reduce(tkc_lazy *a, tkc_op op, const int *axis_mask) {
  int64_t shape[TKC_MAX_DIMS];
  int any = 0;
  for (int i = 0; i < a->ndim; i++) {
    shape[i] = axis_mask[i] ? 1 : a->shape[i];
    any |= axis_mask[i] && a->shape[i] != 1;
  }
  if (!any) { /* reducing size-1 dims is the identity */
    tkc_lazy_ref(a);
    return a;
  }
  tkc_lazy *n = tkc_lazy_new(a->ctx, TKC_LZ_REDUCE, a->dtype, a->ndim, shape);
  if (!n) return NULL;
  n->op = op;
  for (int i = 0; i < a->ndim; i++) n->arg[i] = axis_mask[i];
  tkc_lazy_set_src(n, 0, a);
  return n;
}

/* a broadcast to shape: leading 1s by reshape, then expand */
tkc_lazy *tkc_lz_broadcast(tkc_lazy *a, int ndim, const int64_t *shape) {
  int64_t r[TKC_MAX_DIMS];
  int pad = ndim - a->ndim;
  for (int i = 0; i < ndim; i++) r[i] = i < pad ? 1 : a->shape[i - pad];
  tkc_lazy *x = tkc_lz_move(a, TKC_OP_RESHAPE, NULL, 0, ndim, r);
  if (!x) return NULL;
  tkc_lazy *y = tkc_lz_move(x, TKC_OP_EXPAND, NULL, 0, ndim, shape);
  tkc_lazy_unref(x);
  return y;
}

/* ---------------------------------------------------------------- creation */

static tkc_status check_ctx_dtype(const char *what, tkc_ctx *ctx, tkc_dtype dt) {
  if (!ctx) return tkc_err(TKC_EINVAL, "%s: NULL ctx", what);
  if (dt == TKC_VOID) return tkc_err(TKC_EDTYPE, "%s: void is not a tensor dtype (%s)", what, tkc_dtype_list());
  if (!tkc_dtype_is_tensor(dt)) return tkc_err(TKC_EDTYPE, "%s: %d is not a dtype (%s)", what, (int)dt, tkc_dtype_list());
  return tkc_ctx_check_dtype(ctx, dt, what);
}

/* Variable-size tensors live in buffers laid out for the variables' largest values: their data,
 * row-major at the bound values, moves in and out through this copy (a plain one without them). */
static void box_copy(char *box, char *full, const int64_t *bound, const int64_t *max, int ndim, size_t item, int to_full) {
  int64_t idx[TKC_MAX_DIMS] = {0}, inner = ndim ? bound[ndim - 1] : 1, nb = tkc_shape_numel(ndim, bound);
  if (nb == 0) return;
  for (int64_t done = 0; done < nb; done += inner) {
    int64_t off = 0;
    for (int d = 0; d < ndim; d++) off = off * max[d] + idx[d];
    if (to_full) memcpy(full + (size_t)off * item, box + (size_t)done * item, (size_t)inner * item);
    else memcpy(box + (size_t)done * item, full + (size_t)off * item, (size_t)inner * item);
    for (int d = ndim - 2; d >= 0 && ++idx[d] == bound[d]; d--) idx[d] = 0;
  }
}

static tkc_status box_transfer(tkc_buffer *b, void *host, tkc_ctx *ctx, int ndim, const int64_t *shape, tkc_dtype dt, int in) {
  size_t item = tkc_dtype_size(dt);
  if (!tkc_shape_is_symbolic(ndim, shape)) {
    size_t nbytes = (size_t)tkc_shape_numel(ndim, shape) * item;
    return in ? tkc_buffer_copyin(b, host, nbytes) : tkc_buffer_copyout(b, host, nbytes);
  }
  int64_t bound[TKC_MAX_DIMS], max[TKC_MAX_DIMS];
  if (tkc_shape_bound(ctx, ndim, shape, bound, in ? "tensor_new" : "copy_out") < 0) return tkc_last_status();
  tkc_shape_max(ctx, ndim, shape, max);
  char *full = tkc_malloc(tkc_buffer_nbytes(b) + 1);
  if (!full) return tkc_err(TKC_ENOMEM, "out of memory copying a variable-size tensor");
  tkc_status st = in ? TKC_OK : tkc_buffer_copyout(b, full, tkc_buffer_nbytes(b));
  if (in) memset(full, 0, tkc_buffer_nbytes(b));
  if (!st) box_copy(host, full, bound, max, ndim, item, in);
  if (!st && in) st = tkc_buffer_copyin(b, full, tkc_buffer_nbytes(b));
  tkc_free(full);
  return st;
}

static tkc_status copy_box_in(tkc_buffer *b, const void *data, tkc_ctx *ctx, int ndim, const int64_t *shape, tkc_dtype dt) {
  return box_transfer(b, (void *)data, ctx, ndim, shape, dt, 1);
}

tkc_tensor *tkc_tensor_new(tkc_ctx *ctx, tkc_dtype dt, int ndim, const int64_t *shape, const void *data) {
  if (check_ctx_dtype("tensor_new", ctx, dt) || check_shape("tensor_new", ctx, ndim, shape, dt, 0)) return NULL;
  int64_t numel = tkc_shape_numel_max(ctx, ndim, shape); /* variable dims: the buffer holds their largest values */
  tkc_lazy *n = tkc_lazy_new(ctx, TKC_LZ_BUFFER, dt, ndim, shape);
  tkc_rbuf *rb = n ? tkc_rbuf_new(ctx->dev, dt, (size_t)numel, data == NULL) : NULL;
  if (!rb) {
    tkc_lazy_unref(n);
    return NULL;
  }
  if (data && copy_box_in(rb->buf, data, ctx, ndim, shape, dt)) {
    tkc_rbuf_unref(rb);
    tkc_lazy_unref(n);
    return NULL;
  }
  tkc_st st;
  tkc_st_contiguous_max(&st, ctx, ndim, shape);
  tkc_status s = tkc_lazy_become_buffer(n, rb, &st);
  tkc_rbuf_unref(rb);
  if (s) {
    tkc_lazy_unref(n);
    return NULL;
  }
  return tkc_wrap(ctx, n);
}

tkc_tensor *tkc_full(tkc_ctx *ctx, tkc_dtype dt, int ndim, const int64_t *shape, double value) {
  if (check_ctx_dtype(ndim ? "full" : "scalar", ctx, dt) || check_shape("full", ctx, ndim, shape, dt, 0)) return NULL;
  tkc_lazy *c = tkc_lz_const(ctx, dt, value, 0, NULL);
  tkc_lazy *n = c ? tkc_lz_broadcast(c, ndim, shape) : NULL;
  tkc_lazy_unref(c);
  return tkc_wrap(ctx, n);
}

tkc_tensor *tkc_scalar(tkc_ctx *ctx, tkc_dtype dt, double value) { return tkc_full(ctx, dt, 0, NULL, value); }

tkc_tensor *tkc_arange(tkc_ctx *ctx, tkc_dtype dt, double start, double stop, double step) {
  if (check_ctx_dtype("arange", ctx, dt)) return NULL;
  if (step == 0 || !isfinite(start) || !isfinite(stop) || !isfinite(step))
    return tkc_err_null(TKC_EINVAL, "arange(%g, %g, %g): needs finite start/stop and step != 0", start, stop, step);
  double count = ceil((stop - start) / step);
  if (count < 0) count = 0;
  if (count > INT32_MAX) return tkc_err_null(TKC_ESHAPE, "arange(%g, %g, %g): 2^31 or more elements", start, stop, step);
  int64_t n = (int64_t)count;
  tkc_lazy *iota = tkc_lazy_new(ctx, TKC_LZ_IOTA, TKC_INT32, 1, &n);
  if (!iota) return NULL;
  /* start + i*step, computed in float64 for float dtypes and in the dtype for ints */
  tkc_dtype work = tkc_dtype_is_float(dt) ? (dt == TKC_FLOAT64 ? TKC_FLOAT64 : TKC_FLOAT32) : dt;
  tkc_lazy *i = tkc_lz_cast(iota, work, 0);
  tkc_lazy *s = tkc_lz_const(ctx, work, step, 1, &n), *b = tkc_lz_const(ctx, work, start, 1, &n);
  tkc_lazy *m = i && s ? tkc_lz_alu(TKC_OP_MUL, 2, (tkc_lazy *[]){i, s}) : NULL;
  tkc_lazy *r = m && b ? tkc_lz_alu(TKC_OP_ADD, 2, (tkc_lazy *[]){m, b}) : NULL;
  tkc_lazy *out = r ? tkc_lz_cast(r, dt, 0) : NULL;
  tkc_lazy_unref(iota);
  tkc_lazy_unref(i);
  tkc_lazy_unref(s);
  tkc_lazy_unref(b);
  tkc_lazy_unref(m);
  tkc_lazy_unref(r);
  return tkc_wrap(ctx, out);
}

tkc_tensor *tkc_rand(tkc_ctx *ctx, tkc_dtype dt, int ndim, const int64_t *shape, uint64_t seed) {
  if (check_ctx_dtype("rand", ctx, dt) || check_shape("rand", ctx, ndim, shape, dt, 1)) return NULL;
  if (!tkc_dtype_is_float(dt)) return tkc_err_null(TKC_EDTYPE, "rand: makes floats, not %s", tkc_dtype_name(dt));
  int64_t n = tkc_shape_bound(ctx, ndim, shape, NULL, "rand");
  if (n < 0) return NULL; /* an unbound variable: the values are made now, for the bound sizes */
  size_t item = tkc_dtype_size(dt);
  unsigned char *host = tkc_malloc((size_t)n * item + 1);
  if (!host) return tkc_err_null(TKC_ENOMEM, "out of memory generating random numbers");
  uint64_t key = tkc_splitmix64(seed); /* splitmix64 as a counter-based generator: a seed gives one tensor */
  for (int64_t i = 0; i < n; i++) {
    double u = (double)(tkc_splitmix64(key ^ tkc_splitmix64((uint64_t)i)) >> 11) * 0x1p-53; /* [0, 1) */
    tkc_value v = tkc_value_cast((tkc_value){.f = u}, TKC_FLOAT64, dt);
    if (v.f >= 1.0)
      v.f = 1.0 - (dt == TKC_FLOAT16 ? 0x1p-11 : dt == TKC_BFLOAT16 ? 0x1p-8 : dt == TKC_FLOAT32 ? 0x1p-24 : dt == TKC_FLOAT64 ? 0x1p-53
                   : dt == TKC_FLOAT8_E4M3FN ? 0x1p-4 : 0x1p-3);
    float f = (float)v.f;
    uint16_t h;
    switch (dt) {
    case TKC_FLOAT64: memcpy(host + i * 8, &v.f, 8); break;
    case TKC_FLOAT32: memcpy(host + i * 4, &f, 4); break;
    case TKC_FLOAT16: h = tkc_f32_to_f16(f); memcpy(host + i * 2, &h, 2); break;
    case TKC_FLOAT8_E4M3FN: case TKC_FLOAT8_E5M2: host[i] = tkc_fp8_from_double(v.f, dt); break;
    default: h = tkc_f32_to_bf16(f); memcpy(host + i * 2, &h, 2); break;
    }
  }
  tkc_tensor *t = tkc_tensor_new(ctx, dt, ndim, shape, host);
  tkc_free(host);
  return t;
}

/* ---------------------------------------------------------------- running */

tkc_status tkc_realize(tkc_tensor *t) {
  if (tkc_check(t)) return tkc_last_status();
  return tkc_lazy_realize(t->node);
}

/* numel * itemsize of n at the bound values; -1 with the error when a variable is unbound */
static int64_t bound_nbytes(const tkc_lazy *n, const char *who) {
  int64_t numel = tkc_shape_bound(n->ctx, n->ndim, n->shape, NULL, who);
  return numel < 0 ? -1 : numel * (int64_t)tkc_dtype_size(n->dtype);
}

tkc_status tkc_copy_out(tkc_tensor *t, void *dst, size_t nbytes) {
  if (tkc_check(t)) return tkc_last_status();
  tkc_lazy *n = t->node;
  int64_t want = bound_nbytes(n, "copy_out");
  if (want < 0) return tkc_last_status();
  if (nbytes != (size_t)want) return tkc_err(TKC_EINVAL, "copy_out: %zu bytes given, the tensor has %zu", nbytes, (size_t)want);
  if (nbytes && !dst) return tkc_err(TKC_EINVAL, "copy_out: NULL destination");
  tkc_status st = tkc_lazy_realize(n);
  if (!st) st = tkc_lazy_check_stamp(n, "copy_out");
  if (st) return st;
  if (!nbytes) return TKC_OK;
  size_t full = (size_t)tkc_shape_numel_max(n->ctx, n->ndim, n->shape) * tkc_dtype_size(n->dtype);
  if (tkc_st_is_contiguous(n->st) && tkc_buffer_nbytes(n->rbuf->buf) == full)
    return box_transfer(n->rbuf->buf, dst, n->ctx, n->ndim, n->shape, n->dtype, 0);
  /* a view: gather it into a contiguous buffer first */
  tkc_lazy *c = tkc_lazy_new(n->ctx, TKC_LZ_CONTIGUOUS, n->dtype, n->ndim, n->shape);
  if (!c) return tkc_last_status();
  tkc_lazy_set_src(c, 0, n);
  st = tkc_lazy_realize(c);
  if (!st) st = box_transfer(c->rbuf->buf, dst, c->ctx, c->ndim, c->shape, c->dtype, 0);
  tkc_lazy_unref(c);
  return st;
}

tkc_status tkc_copy_in(tkc_tensor *t, const void *src, size_t nbytes) {
  if (tkc_check(t)) return tkc_last_status();
  tkc_lazy *n = t->node;
  int64_t want = bound_nbytes(n, "copy_in");
  if (want < 0) return tkc_last_status();
  if (nbytes != (size_t)want) return tkc_err(TKC_EINVAL, "copy_in: %zu bytes given, the tensor has %zu", nbytes, (size_t)want);
  if (nbytes && !src) return tkc_err(TKC_EINVAL, "copy_in: NULL source");
  if (n->kind != TKC_LZ_BUFFER) return tkc_err(TKC_EINVAL, "copy_in: the tensor is not realized (realize it, or build it with tkc_tensor_new)");
  if (!tkc_lazy_owns_buffer(n))
    return tkc_err(TKC_EINVAL, "copy_in: the tensor is a view of a larger or reordered buffer (copy it with tkc_contiguous and realize that)");
  return nbytes ? box_transfer(n->rbuf->buf, (void *)src, n->ctx, n->ndim, n->shape, n->dtype, 1) : TKC_OK;
}

/* ---------------------------------------------------------------- scopes */

#define TKC_MAX_SCOPES 4096

tkc_status tkc_scope_begin(tkc_ctx *ctx) {
  if (!ctx) return tkc_err(TKC_EINVAL, "tkc_scope_begin: NULL ctx");
  if (ctx->scope_depth == TKC_MAX_SCOPES) return tkc_err(TKC_EINVAL, "tkc_scope_begin: scopes nest at most %d deep", TKC_MAX_SCOPES);
  ctx->scope_depth++;
  return TKC_OK;
}

tkc_status tkc_scope_end(tkc_ctx *ctx) {
  if (!ctx) return tkc_err(TKC_EINVAL, "tkc_scope_end: NULL ctx");
  if (!ctx->scope_depth) return tkc_err(TKC_EINVAL, "tkc_scope_end without a matching tkc_scope_begin");
  for (tkc_tensor *t = ctx->live, *next; t; t = next) {
    next = t->next;
    if (t->scope >= ctx->scope_depth) tkc_tensor_free(t);
  }
  ctx->scope_depth--;
  return TKC_OK;
}

tkc_tensor *tkc_tensor_ref(tkc_tensor *t) {
  if (tkc_check(t)) return NULL;
  tkc_lazy_ref(t->node);
  return tkc_wrap(t->ctx, t->node);
}

tkc_tensor *tkc_keep(tkc_tensor *t) {
  if (tkc_check(t)) return NULL;
  if (!t->scope) return tkc_err_null(TKC_EINVAL, "tkc_keep: the tensor belongs to no scope (keep it inside tkc_scope_begin/end)");
  t->scope--;
  return t;
}

tkc_tensor *tkc_unscope(tkc_tensor *t) {
  if (tkc_check(t)) return NULL;
  t->scope = 0;
  return t;
}

tkc_status tkc_ctx_stats(const tkc_ctx *ctx, tkc_stats *out) {
  if (!ctx || !out) return tkc_err(TKC_EINVAL, "tkc_ctx_stats: NULL %s", ctx ? "out" : "ctx");
  *out = (tkc_stats){.kernels = ctx->kernels_run, .kernel_s = ctx->kernel_s, .kernels_built = ctx->kernels_built, .build_s = ctx->build_s};
  return TKC_OK;
}

tkc_status tkc_ctx_set_beam(tkc_ctx *ctx, int width) {
  if (!ctx) return tkc_err(TKC_EINVAL, "tkc_ctx_set_beam: NULL ctx");
  if (width < -1 || width > 64) return tkc_err(TKC_EINVAL, "tkc_ctx_set_beam: width %d is not in [-1, 64]", width);
  ctx->beam = width;
  return TKC_OK;
}

tkc_status tkc_ctx_set_progress(tkc_ctx *ctx, tkc_progress_fn fn, void *user) {
  if (!ctx) return tkc_err(TKC_EINVAL, "tkc_ctx_set_progress: NULL ctx");
  ctx->progress = fn;
  ctx->progress_user = fn ? user : NULL;
  return TKC_OK;
}

int tkc_kernel_count(tkc_tensor *t) {
  if (tkc_check(t)) return -1;
  tkc_schedule s;
  tkc_status st = tkc_schedule_build(&s, t->node);
  int n = st ? -1 : (int)s.n;
  tkc_schedule_free(&s);
  return n;
}

char *tkc_kernels_source(tkc_tensor *t, const char *renderer) {
  if (tkc_check(t)) return NULL;
  const tkc_renderer *r = tkc_renderer_get(renderer);
  return r ? tkc_lazy_kernels_source(t->node, r) : NULL;
}

tkc_status tkc_realize_opts(tkc_tensor *t, const tkc_opt *opts, int nopts) {
  if (tkc_check(t)) return tkc_last_status();
  if (nopts < 0 || (nopts > 0 && !opts)) return tkc_err(TKC_EINVAL, "tkc_realize_opts: %s", nopts < 0 ? "negative nopts" : "NULL opts");
  return tkc_lazy_realize_opts(t->node, opts, nopts);
}
