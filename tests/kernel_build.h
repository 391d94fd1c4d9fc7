/* Helpers for the code generator's unit suites (test_schedule, test_lowerer, test_expander,
 * test_heuristics): a tensor expression scheduled into kernel ASTs, one kernel built through the
 * internal entry points (kshape, opts or the heuristics, the lowerer), run on a device with the
 * inputs of the schedule item, and structural counts of a lowered kernel (ranges, launch indices,
 * accumulators, stores, vector widths) that do not depend on how far it was simplified.
 * The internal graph/engine interfaces are included HERE only, so that moving their prototypes
 * (graph/graph.h -> engine/engine.h) is fixed in one place. Header-only; include after cmocka.h. */
#ifndef TKC_TEST_KERNEL_BUILD_H
#define TKC_TEST_KERNEL_BUILD_H

#include "codegen/codegen.h"
#include "codegen/opts.h"
#include "graph/graph.h" /* tkc_schedule_build, tkc_lazy */
#include "engine/engine.h"
#include "tensor_ref.h"

/* the INTERP ctx a suite builds its graphs in: kb_setup/kb_teardown as its group (or test) fixtures */
static tkc_ctx *ctx;
static inline int kb_setup(void **state) {
  (void)state;
  ctx = tkc_ctx_new("INTERP");
  return ctx ? 0 : -1;
}
static inline int kb_teardown(void **state) {
  (void)state;
  tkc_ctx_free(ctx);
  return 0;
}

/* the schedule of t (kernels in order); fails the test when it cannot be built */
static inline void kb_schedule(tkc_tensor *t, tkc_schedule *s) {
  memset(s, 0, sizeof *s);
  assert_non_null(t);
  tkc_status st = tkc_schedule_build(s, t->node);
  if (st) fprintf(stderr, "tkc_schedule_build: %s\n", tkc_last_error());
  assert_int_equal(st, TKC_OK);
}

/* How to choose a kernel's opts: none, the given list, or the heuristics. */
typedef struct kb_opts {
  bool heuristics;
  int n;
  tkc_opt o[TKC_MAX_OPTS];
} kb_opts;

/* The axes of item i's kernel with opts chosen as asked, for renderer r (NULL: INTERP). */
static inline void kb_kshape(tkc_schedule *s, size_t i, const tkc_renderer *r, const kb_opts *opts, tkc_kshape *ks) {
  assert_true(i < s->n);
  assert_int_equal(tkc_kshape_init(ks, s->items[i].ast), TKC_OK);
  if (opts && opts->heuristics) tkc_heuristics(ks, s->items[i].ast, r);
  for (int k = 0; opts && k < opts->n; k++) {
    tkc_status st = tkc_kshape_apply(ks, opts->o[k], r);
    if (st) fprintf(stderr, "opt %s(%d,%d): %s\n", tkc_opt_name(opts->o[k].op), opts->o[k].axis, opts->o[k].amount, tkc_last_error());
    assert_int_equal(st, TKC_OK);
  }
}

/* item i's kernel lowered for renderer r with ks (a SINK in s->g) */
static inline tkc_uop *kb_lower(tkc_schedule *s, size_t i, const tkc_renderer *r, const tkc_kshape *ks) {
  tkc_uop *k = tkc_lower_opts(s->g, s->items[i].ast, ks, r);
  if (!k) fprintf(stderr, "tkc_lower_opts: %s\n", tkc_last_error());
  assert_non_null(k);
  return k;
}

/* Runs the lowered kernel k of item i on device dev: its inputs are copied from the schedule's
 * realized input buffers; the output (numel elements) comes back into out. */
static inline tkc_status kb_run(tkc_schedule *s, size_t i, tkc_uop *k, const char *dev, void *out, size_t out_bytes) {
  const tkc_sched_item *it = &s->items[i];
  tkc_device *d = tkc_device_get(dev);
  if (!d) return tkc_last_status();
  tkc_program *p = tkc_program_new(d, s->g, k, "kb_kernel");
  if (!p) return tkc_last_status();
  tkc_buffer *bufs[33] = {0};
  tkc_status st = TKC_OK;
  size_t isz = tkc_dtype_size(it->out->dtype), n = isz ? out_bytes / isz : 0;
  bufs[0] = tkc_buffer_new(d, it->out->dtype, n);
  if (!bufs[0]) st = tkc_last_status();
  for (int j = 0; j < it->ninputs && !st; j++) {
    const tkc_lazy *in = it->inputs[j];
    if (in->kind != TKC_LZ_BUFFER) { /* the suites only build kernels over realized inputs */
      st = TKC_EINVAL;
      break;
    }
    tkc_buffer *src = in->rbuf->buf;
    size_t nb = tkc_buffer_nbytes(src);
    void *tmp = malloc(nb ? nb : 1);
    bufs[j + 1] = tkc_buffer_new(d, tkc_buffer_dtype(src), tkc_buffer_numel(src));
    st = !bufs[j + 1] ? tkc_last_status() : tkc_buffer_copyout(src, tmp, nb);
    if (!st) st = tkc_buffer_copyin(bufs[j + 1], tmp, nb);
    free(tmp);
  }
  if (!st) st = tkc_program_launch(p, bufs, it->ninputs + 1, NULL, 0);
  if (!st) st = tkc_buffer_copyout(bufs[0], out, out_bytes);
  for (int j = 0; j <= it->ninputs; j++) tkc_buffer_free(bufs[j]);
  tkc_program_free(p);
  return st;
}

/* ---------------------------------------------------------------- structural facts */

typedef struct kb_counts {
  int ranges, specials, accs, stores, loads, wmma, locals, barriers;
  int max_store_width, max_load_width, max_acc_width;
} kb_counts;

static inline kb_counts kb_count(const tkc_uop *k) {
  kb_counts c;
  memset(&c, 0, sizeof c);
  size_t n = 0;
  tkc_uop **all = tkc_toposort(k, &n);
  assert_non_null(all);
  for (size_t i = 0; i < n; i++) {
    const tkc_uop *u = all[i];
    switch (u->op) {
    case TKC_OP_RANGE: c.ranges++; break;
    case TKC_OP_SPECIAL: c.specials++; break;
    case TKC_OP_DEFINE_ACC:
      c.accs++;
      if (u->dtype.count > c.max_acc_width) c.max_acc_width = u->dtype.count;
      break;
    case TKC_OP_STORE: {
      int w = u->src[1]->dtype.count;
      c.stores++;
      if (w > c.max_store_width) c.max_store_width = w;
      break;
    }
    case TKC_OP_LOAD:
      c.loads++;
      if (u->dtype.count > c.max_load_width) c.max_load_width = u->dtype.count;
      break;
    case TKC_OP_WMMA: c.wmma++; break;
    case TKC_OP_DEFINE_LOCAL: c.locals++; break;
    case TKC_OP_BARRIER: c.barriers++; break;
    default: break;
    }
  }
  tkc_free(all);
  return c;
}

/* the number of axes of a kind */
static inline int kb_axes(const tkc_kshape *ks, tkc_axis_kind kind) { return tkc_kshape_count(ks, kind); }

/* whether ks has the opt (op, axis, amount) among its applied opts (axis/amount -1: any) */
static inline bool kb_has_opt(const tkc_kshape *ks, tkc_opt_op op, int axis, int amount) {
  for (int i = 0; i < ks->nopts; i++)
    if (ks->opts[i].op == op && (axis < 0 || ks->opts[i].axis == axis) && (amount < 0 || ks->opts[i].amount == amount)) return true;
  return false;
}

#endif
