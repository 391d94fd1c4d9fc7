/* Kernel opts as data: the axes of a kernel and the checks that make an opt legal (tinygrad's
 * Kernel.apply_opt). An opt either changes the axes or is refused with the reason; nothing aborts. */
#include <stdio.h>
#include <string.h>
#include "codegen/opts.h"

static const char *const opt_names[] = {"UPCAST", "UNROLL", "LOCAL", "GROUP", "GROUPTOP", "PADTO", "SWAP", "NOLOCALS", "TC"};
static const char opt_letters[] = "URLGTPSNC";

const char *tkc_opt_name(tkc_opt_op op) {
  return (unsigned)op < TKC_COUNTOF(opt_names) ? opt_names[op] : NULL;
}

static int shape_of(const tkc_arg *a, int64_t *shape, tkc_kvar *var) {
  if (a->kind != TKC_ARG_TUPLE || a->n > TKC_MAX_DIMS) return -1;
  for (uint32_t i = 0; i < a->n; i++) {
    const tkc_arg *d = &a->v.t[i];
    if (d->kind == TKC_ARG_INT) {
      shape[i] = d->v.i;
      continue;
    }
    if (d->kind != TKC_ARG_TUPLE || d->n != 4 || d->v.t[0].kind != TKC_ARG_STR || d->v.t[0].n >= sizeof var->name) return -1;
    tkc_kvar v = {.vmin = d->v.t[1].v.i, .vmax = d->v.t[2].v.i, .c = d->v.t[3].v.i};
    memcpy(v.name, d->v.t[0].v.s, d->v.t[0].n);
    shape[i] = v.vmax + v.c;
    if (var) var[i] = v;
  }
  return (int)a->n;
}

tkc_status tkc_kshape_init(tkc_kshape *ks, const tkc_uop *ast) {
  memset(ks, 0, sizeof *ks);
  if (!ast || ast->op != TKC_OP_SINK || ast->arg.kind != TKC_ARG_TUPLE || ast->arg.n != 2)
    return tkc_err(TKC_EINTERNAL, "kernel opts: the AST is not SINK(STORE) with shapes");
  ks->ndim = shape_of(&ast->arg.v.t[0], ks->out, NULL);
  if (ks->ndim < 0 || shape_of(&ast->arg.v.t[1], ks->full, ks->var) != ks->ndim) return tkc_err(TKC_EINTERNAL, "kernel opts: bad kernel shapes");
  memcpy(ks->padded, ks->full, sizeof ks->full);
  for (int pass = 0; pass < 2; pass++) /* output dims, then reduce dims */
    for (int d = 0; d < ks->ndim; d++) {
      int reduce = ks->full[d] != ks->out[d] || (ks->var[d].name[0] && ast->arg.v.t[0].v.t[d].kind == TKC_ARG_INT);
      if ((ks->full[d] <= 1 && !ks->var[d].name[0]) || reduce != pass) continue;
      ks->ax[ks->naxes++] = (tkc_kaxis){.dim = d, .size = ks->full[d], .stride = 1, .kind = reduce ? TKC_AX_REDUCE : TKC_AX_GLOBAL};
    }
  return TKC_OK;
}

int tkc_kshape_count(const tkc_kshape *ks, tkc_axis_kind kind) {
  int n = 0;
  for (int i = 0; i < ks->naxes; i++) n += ks->ax[i].kind == kind;
  return n;
}

int tkc_kshape_first_reduce(const tkc_kshape *ks) { return tkc_kshape_count(ks, TKC_AX_GLOBAL); }

int64_t tkc_kshape_lanes(const tkc_kshape *ks) {
  int64_t n = 1;
  for (int i = 0; i < ks->naxes; i++)
    if (ks->ax[i].kind >= TKC_AX_UPCAST) n *= ks->ax[i].size;
  return n;
}

int64_t tkc_kshape_threads(const tkc_kshape *ks) {
  int64_t n = 1;
  for (int i = 0; i < ks->naxes; i++)
    if (ks->ax[i].kind == TKC_AX_LOCAL || ks->ax[i].kind == TKC_AX_GROUP_LOCAL) n *= ks->ax[i].size;
  return n;
}

static int loop_axes(const tkc_kshape *ks) { return tkc_kshape_count(ks, TKC_AX_GLOBAL) + tkc_kshape_count(ks, TKC_AX_REDUCE); }

/* Splits `amount` lanes or threads of kind off axis a: off its inner end (consecutive lanes or
 * threads take consecutive indices), or with top off its outer end (each takes a contiguous run). */
static tkc_status split(tkc_kshape *ks, int a, int64_t amount, tkc_axis_kind kind, bool top, const tkc_renderer *r, const char *what) {
  tkc_kaxis *x = &ks->ax[a];
  if (ks->var[x->dim].name[0]) return tkc_err(TKC_EINVAL, "%s: axis %d has a variable length (%s)", what, a, ks->var[x->dim].name);
  if (amount == 0) amount = x->size; /* 0: the whole axis */
  if (amount < 1) return tkc_err(TKC_EINVAL, "%s: amount %lld must be >= 0", what, (long long)amount);
  if (x->size % amount) return tkc_err(TKC_EINVAL, "%s: %lld does not divide axis %d of size %lld", what, (long long)amount, a, (long long)x->size);
  if (kind == TKC_AX_LOCAL || kind == TKC_AX_GROUP_LOCAL) {
    int64_t max = r->local_max[0] < 256 ? r->local_max[0] : 256;
    if (tkc_kshape_threads(ks) * amount > max)
      return tkc_err(TKC_EINVAL, "%s: %lld threads per workgroup would pass the limit of %lld", what, (long long)(tkc_kshape_threads(ks) * amount), (long long)max);
  } else if (tkc_kshape_lanes(ks) * amount > TKC_MAX_LANES)
    return tkc_err(TKC_EINVAL, "%s: %lld lanes would pass the limit of %d", what, (long long)(tkc_kshape_lanes(ks) * amount), TKC_MAX_LANES);
  if (ks->naxes == TKC_MAX_AXES) return tkc_err(TKC_EINVAL, "%s: a kernel has at most %d axes", what, TKC_MAX_AXES);
  tkc_kaxis lane = {.dim = x->dim, .size = amount, .stride = top ? x->stride * (x->size / amount) : x->stride, .kind = kind};
  x->size /= amount;
  if (!top) x->stride *= amount;
  ks->ax[ks->naxes++] = lane;
  if (x->size == 1) { /* the whole axis became lanes: drop the loop */
    memmove(x, x + 1, (size_t)(ks->naxes - a - 1) * sizeof *x);
    ks->naxes--;
  }
  return TKC_OK;
}

static int axes_of_dim(const tkc_kshape *ks, int dim) {
  int n = 0;
  for (int i = 0; i < ks->naxes; i++) n += ks->ax[i].dim == dim;
  return n;
}

static tkc_status apply(tkc_kshape *ks, tkc_opt o, const tkc_renderer *r) {
  int nloop = loop_axes(ks), first_reduce = tkc_kshape_first_reduce(ks);
  const char *name = tkc_opt_name(o.op);
  bool gpu = r && r->has_local;
  if (!name) return tkc_err(TKC_EINVAL, "kernel opts: unknown opt %d", (int)o.op);
  if (ks->tc) return tkc_err(TKC_EINVAL, "%s: no opt may follow TC", name);
  switch (o.op) {
  case TKC_OPT_UPCAST:
    if (o.axis < 0 || o.axis >= first_reduce) return tkc_err(TKC_EINVAL, "UPCAST: axis %d is not an output axis (the kernel has %d)", o.axis, first_reduce);
    return split(ks, o.axis, o.amount, TKC_AX_UPCAST, false, r, name);
  case TKC_OPT_UNROLL:
    if (o.axis < 0 || first_reduce + o.axis >= nloop) return tkc_err(TKC_EINVAL, "UNROLL: axis %d is not a reduce axis (the kernel has %d)", o.axis, nloop - first_reduce);
    return split(ks, first_reduce + o.axis, o.amount, TKC_AX_UNROLL, false, r, name);
  case TKC_OPT_LOCAL:
    if (!gpu) return tkc_err(TKC_EINVAL, "LOCAL: renderer %s has no workgroups", r ? r->name : "INTERP");
    if (ks->nolocals) return tkc_err(TKC_EINVAL, "LOCAL: the kernel has NOLOCALS");
    if (o.axis < 0 || o.axis >= first_reduce) return tkc_err(TKC_EINVAL, "LOCAL: axis %d is not an output axis (the kernel has %d)", o.axis, first_reduce);
    return split(ks, o.axis, o.amount, TKC_AX_LOCAL, false, r, name);
  case TKC_OPT_GROUP: /* loop devices: partial accumulators (lanes); GPUs: threads + shared memory */
  case TKC_OPT_GROUPTOP:
    if (o.axis < 0 || first_reduce + o.axis >= nloop) return tkc_err(TKC_EINVAL, "%s: axis %d is not a reduce axis (the kernel has %d)", name, o.axis, nloop - first_reduce);
    if (gpu && !r->has_shared) return tkc_err(TKC_EUNSUPPORTED, "%s: renderer %s has no shared memory", name, r->name);
    return split(ks, first_reduce + o.axis, o.amount, gpu ? TKC_AX_GROUP_LOCAL : TKC_AX_GROUP, o.op == TKC_OPT_GROUPTOP, r, name);
  case TKC_OPT_PADTO: {
    if (o.axis < 0 || o.axis >= nloop) return tkc_err(TKC_EINVAL, "PADTO: axis %d is not a loop axis (the kernel has %d)", o.axis, nloop);
    tkc_kaxis *x = &ks->ax[o.axis];
    if (ks->var[x->dim].name[0]) return tkc_err(TKC_EINVAL, "PADTO: axis %d has a variable length (%s)", o.axis, ks->var[x->dim].name);
    if (o.amount < 2) return tkc_err(TKC_EINVAL, "PADTO: amount %d must be >= 2", o.amount);
    if (axes_of_dim(ks, x->dim) != 1) return tkc_err(TKC_EINVAL, "PADTO: axis %d was split already (pad before splitting)", o.axis);
    int64_t up = (x->size + o.amount - 1) / o.amount * o.amount;
    if (up == x->size) return tkc_err(TKC_EINVAL, "PADTO: axis %d (%lld) is a multiple of %d already", o.axis, (long long)x->size, o.amount);
    if (up > 2 * x->size) return tkc_err(TKC_EINVAL, "PADTO: padding axis %d from %lld to %lld wastes more than half", o.axis, (long long)x->size, (long long)up);
    x->size = up;
    ks->padded[x->dim] = up;
    return TKC_OK;
  }
  case TKC_OPT_SWAP:
    if (o.axis < 0 || o.axis >= first_reduce || o.amount < 0 || o.amount >= first_reduce || o.axis == o.amount)
      return tkc_err(TKC_EINVAL, "SWAP: axes %d and %d are not two output axes (the kernel has %d)", o.axis, o.amount, first_reduce);
    tkc_kaxis t = ks->ax[o.axis];
    ks->ax[o.axis] = ks->ax[o.amount];
    ks->ax[o.amount] = t;
    return TKC_OK;
  case TKC_OPT_NOLOCALS: /* loop devices have no locals: nothing to turn off */
    if (gpu && tkc_kshape_count(ks, TKC_AX_LOCAL)) return tkc_err(TKC_EINVAL, "NOLOCALS: the kernel has LOCAL axes already");
    ks->nolocals = true;
    return TKC_OK;
  default: /* TC: the kernel's shape is checked when it is lowered (tkc_tc_match) */
    if (!gpu) return tkc_err(TKC_EINVAL, "%s: renderer %s has no workgroups", name, r ? r->name : "INTERP");
    if (!r->tensor_cores || !r->tensor_cores()) return tkc_err(TKC_EUNSUPPORTED, "%s: renderer %s has no tensor cores for its target", name, r->name);
    if (ks->nopts) return tkc_err(TKC_EINVAL, "%s: TC must be the first opt", name);
    if (o.axis != 0 || o.amount != 0) return tkc_err(TKC_EINVAL, "%s: axis and amount must be 0 (one tensor-core shape)", name);
    for (int d = 0; d < ks->ndim; d++)
      if (ks->var[d].name[0]) return tkc_err(TKC_EINVAL, "%s: the kernel has a dim of variable length (%s)", name, ks->var[d].name);
    ks->tc = true;
    return TKC_OK;
  }
}

tkc_status tkc_kshape_apply(tkc_kshape *ks, tkc_opt o, const tkc_renderer *r) {
  if (ks->nopts == TKC_MAX_OPTS) return tkc_err(TKC_EINVAL, "kernel opts: at most %d opts per kernel", TKC_MAX_OPTS);
  tkc_kshape saved = *ks;
  tkc_status st = apply(ks, o, r);
  if (st) *ks = saved;
  else ks->opts[ks->nopts++] = o;
  return st;
}

void tkc_kshape_name(const tkc_kshape *ks, char *buf, size_t n) {
  size_t k = strlen(buf);
  for (int i = 0; i < ks->nopts && k < n; i++)
    k += (size_t)snprintf(buf + k, n - k, "_%c%dx%d", opt_letters[ks->opts[i].op], ks->opts[i].axis, ks->opts[i].amount);
}

void tkc_kshape_opts_str(const tkc_kshape *ks, char *buf, size_t n) {
  size_t k = 0;
  buf[0] = 0;
  for (int i = 0; i < ks->nopts && k < n; i++)
    k += (size_t)snprintf(buf + k, n - k, "%s%s(%d,%d)", i ? " " : "", tkc_opt_name(ks->opts[i].op), ks->opts[i].axis, ks->opts[i].amount);
  if (!ks->nopts) snprintf(buf, n, "none");
}
