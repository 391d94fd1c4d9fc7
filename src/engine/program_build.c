/* Programs from kernels: the codegen driver's last stages (render_prep .. render) in the program's
 * own graph, then the runtime's program over the instruction list and the source. tkc_program_new
 * (tkc/runtime.h) is here, not in runtime/, because it needs the driver. */
#include <stdio.h>
#include "engine/program_build.h"
#include "runtime/device.h"

tkc_program *tkc_engine_program(tkc_device *d, tkc_codegen *cg, const char *name) {
  const tkc_renderer *r = tkc_device_renderer(d);
  if (d->impl->renderer && !r) return NULL; /* (the error says why) */
  tkc_program *p = tkc_program_alloc(d, name);
  if (!p) return NULL;
  cg->r = r;
  cg->symbol = tkc_program_symbol(p);
  tkc_status st = tkc_codegen_move(cg, tkc_program_graph(p));
  if (!st) st = tkc_codegen_run(cg, "render_prep", "linearize");
  bool taken = !st;
  if (!st) st = tkc_program_set_uops(p, cg->uops, cg->nuops); /* (p owns them now; render reads them) */
  if (!st && r) st = tkc_codegen_run(cg, "render", "render");
  if (taken) cg->uops = NULL;
  if (!st) {
    st = tkc_program_set_source(p, cg->source); /* (takes it) */
    cg->source = NULL;
  }
  cg->symbol = NULL;
  tkc_codegen_clear(cg);
  if (st) {
    tkc_program_free(p);
    return NULL;
  }
  return p;
}

static tkc_program *prepare(tkc_device *d, tkc_graph *g, tkc_uop *sink, const char *name, bool report) {
  if (!d || !g || !sink) return tkc_err_null(TKC_EINVAL, "tkc_program_new: NULL argument");
  if (sink->op != TKC_OP_SINK) return tkc_err_null(TKC_EINVAL, "tkc_program_new: the kernel root is %s, not SINK", tkc_op_name((tkc_op)sink->op));
  tkc_codegen cg = {.g = g, .sink = sink, .report = report};
  if (name) snprintf(cg.name, sizeof cg.name, "%s", name);
  return tkc_engine_program(d, &cg, name ? name : "kernel");
}

tkc_program *tkc_program_prepare(tkc_device *d, tkc_graph *g, tkc_uop *sink, const char *name) { return prepare(d, g, sink, name, false); }

tkc_program *tkc_program_new(tkc_device *d, tkc_graph *g, tkc_uop *sink, const char *name) {
  tkc_program *p = prepare(d, g, sink, name, true);
  if (p && tkc_program_compile(p)) {
    tkc_program_free(p);
    return NULL;
  }
  if (p) tkc_program_debug_built(p);
  return p;
}
