/* tkc_kernel_uops_dot: one kernel of a schedule lowered to UOps (as realize builds it for the ctx's
 * device, before the renderer's rewrites and linearizing), as a Graphviz graph: a node per UOp
 * (op, dtype, arg), an edge from each source to its user. Nothing is compiled or run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/engine.h"
#include "graph/tensor_internal.h"
#include "runtime/device.h"

/* fill colours by what a UOp does, as tinygrad's graph view groups them */
static const char *uop_color(tkc_op op) {
  switch (op) {
  case TKC_OP_DEFINE_GLOBAL: case TKC_OP_DEFINE_VAR: case TKC_OP_DEFINE_LOCAL: case TKC_OP_DEFINE_ACC: return "#ffe0b2";
  case TKC_OP_LOAD: case TKC_OP_STORE: case TKC_OP_INDEX: return "#ffcdd2";
  case TKC_OP_RANGE: case TKC_OP_ENDRANGE: case TKC_OP_SPECIAL: case TKC_OP_IF: case TKC_OP_ENDIF: return "#c8e6c9";
  case TKC_OP_CONST: return "#eeeeee";
  case TKC_OP_SINK: return "#e1bee7";
  default: return "#cfe2ff";
  }
}

static void uops_dot(tkc_sbuf *b, const char *name, tkc_uop *const *order, size_t n) {
  tkc_umap pos = {0};
  tkc_sbuf_puts(b, "digraph kernel {\n  /* ");
  tkc_dot_escape(b, name);
  tkc_sbuf_printf(b, ": %zu uops */\n  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fontname=\"monospace\", fontsize=10];\n", n);
  for (size_t i = 0; i < n; i++) {
    const tkc_uop *u = order[i];
    tkc_umap_put(&pos, u, (tkc_uop *)(uintptr_t)(i + 1));
    char dt[64];
    tkc_dt_str(u->dtype, dt, sizeof dt);
    tkc_sbuf arg = {0};
    tkc_arg_fmt(&arg, &u->arg);
    char *a = tkc_sbuf_take(&arg);
    tkc_sbuf_printf(b, "  u%zu [fillcolor=\"%s\", label=\"%zu %s\\n%s", i, uop_color((tkc_op)u->op), i, tkc_op_name((tkc_op)u->op), dt);
    if (a && u->arg.kind != TKC_ARG_NONE) {
      tkc_sbuf_puts(b, "\\n");
      tkc_dot_escape(b, a);
    }
    tkc_sbuf_puts(b, "\"];\n");
    tkc_free(a);
    for (int j = 0; j < u->nsrc; j++) {
      uintptr_t at = (uintptr_t)tkc_umap_get(&pos, u->src[j]);
      if (at) tkc_sbuf_printf(b, "  u%zu -> u%zu;\n", (size_t)(at - 1), i);
    }
  }
  tkc_sbuf_puts(b, "}\n");
  tkc_umap_free(&pos);
}

tkc_status tkc_kernel_uops_dot(tkc_tensor *t, int kernel_index, const char *path) {
  if (!t) return tkc_err(TKC_EINVAL, "kernel_uops_dot: NULL tensor");
  if (tkc_check(t)) return tkc_last_status();
  if (!path) return tkc_err(TKC_EINVAL, "kernel_uops_dot: NULL path");
  tkc_schedule s;
  tkc_status st = tkc_schedule_build(&s, t->node);
  if (!st && (kernel_index < 0 || (size_t)kernel_index >= s.n))
    st = tkc_err(TKC_EINVAL, "kernel_uops_dot: kernel %d out of range (the schedule has %zu kernel%s%s)", kernel_index, s.n, s.n == 1 ? "" : "s",
                 s.n ? "" : ": the tensor is realized");
  char name[160];
  tkc_uop *k = st ? NULL : tkc_engine_kernel_uops(&s, (size_t)kernel_index, name, sizeof name);
  if (!st && !k) st = tkc_last_status();
  size_t n = 0;
  tkc_uop **order = k ? tkc_toposort(k, &n) : NULL;
  if (k && !order) st = tkc_last_status();
  tkc_sbuf b = {0};
  if (order) uops_dot(&b, name, order, n);
  tkc_free(order);
  tkc_schedule_free(&s);
  if (st) {
    tkc_free(b.s);
    return st;
  }
  return tkc_write_text_file("kernel_uops_dot", path, &b);
}
