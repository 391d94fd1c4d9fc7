/* tkc_schedule_dot: the schedule that realizing a tensor would run, as a Graphviz graph, without
 * running it. Kernels are boxes (number, name as TKC_DEBUG prints it, opts, output shape), buffers
 * are ellipses (dtype, shape; realized inputs grey, buffers the schedule computes white), edges are
 * reads (buffer -> kernel, labelled with the kernel's argument number) and writes (kernel -> buffer). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/fsize_guard.h"
#include "engine/engine.h"
#include "graph/tensor_internal.h"

/* ---------------------------------------------------------------- shared with engine/debug_dot.c */

void tkc_dot_escape(tkc_sbuf *b, const char *s) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') tkc_sbuf_printf(b, "\\%c", *s);
    else if (*s == '\n') tkc_sbuf_puts(b, "\\n");
    else tkc_sbuf_printf(b, "%c", *s);
  }
}

tkc_status tkc_write_text_file(const char *who, const char *path, tkc_sbuf *b) {
  char *text = tkc_sbuf_take(b);
  if (!text) return tkc_last_status();
  tkc_fsize_guard g; /* past the file size limit: EFBIG, not SIGXFSZ at the host */
  tkc_fsize_guard_begin(&g);
  FILE *f = fopen(path, "w");
  int e = errno, bad = !f;
  if (f) {
    size_t n = strlen(text);
    bad = fwrite(text, 1, n, f) != n;
    if (bad) e = errno;
    if (fclose(f) != 0 && !bad) bad = 1, e = errno;
  }
  tkc_fsize_guard_end(&g);
  tkc_free(text);
  return bad ? tkc_err(TKC_ERUNTIME, "%s: cannot write %s: %s", who, path, strerror(e)) : TKC_OK;
}

/* ---------------------------------------------------------------- the schedule */

typedef struct bufs {
  const void *key[512]; /* a realized buffer (its tkc_rbuf) or a node the schedule computes */
  int n;
} bufs;

/* the buffer's node number; new buffers are declared in b */
static int buffer_id(bufs *ids, tkc_sbuf *b, const tkc_lazy *n) {
  const void *key = n->kind == TKC_LZ_BUFFER ? (const void *)n->rbuf : (const void *)n;
  for (int i = 0; i < ids->n; i++)
    if (ids->key[i] == key) return i;
  if (ids->n == (int)TKC_COUNTOF(ids->key)) return -1;
  int id = ids->n++;
  ids->key[id] = key;
  tkc_sbuf_printf(b, "  b%d [shape=ellipse, ", id);
  if (n->kind == TKC_LZ_BUFFER) {
    size_t numel = tkc_buffer_numel(n->rbuf->buf);
    tkc_sbuf_printf(b, "style=filled, fillcolor=\"#e0e0e0\", label=\"%s %s", tkc_dtype_str(tkc_buffer_dtype(n->rbuf->buf)), TKC_NODE_SHAPE(n));
    if ((int64_t)numel != tkc_shape_numel(n->ndim, n->shape)) tkc_sbuf_printf(b, "\\nview of %zu elements", numel);
    tkc_sbuf_puts(b, "\\nrealized\"];\n");
  } else {
    tkc_sbuf_printf(b, "label=\"%s %s\"];\n", tkc_dtype_str(n->dtype), TKC_NODE_SHAPE(n));
  }
  return id;
}

tkc_status tkc_schedule_dot(tkc_tensor *t, const char *path) {
  if (!t) return tkc_err(TKC_EINVAL, "schedule_dot: NULL tensor");
  if (tkc_check(t)) return tkc_last_status();
  if (!path) return tkc_err(TKC_EINVAL, "schedule_dot: NULL path");
  tkc_schedule s;
  tkc_status st = tkc_schedule_build(&s, t->node);
  tkc_sbuf b = {0};
  bufs *ids = st ? NULL : tkc_calloc(1, sizeof *ids);
  if (!st && !ids) st = tkc_err(TKC_ENOMEM, "out of memory writing a schedule");
  tkc_sbuf_printf(&b, "digraph schedule {\n  /* %zu kernels on %s */\n  rankdir=TB;\n  node [fontname=\"monospace\", fontsize=10];\n  edge [fontsize=9];\n",
                  s.n, tkc_ctx_device(t->ctx));
  for (size_t i = 0; !st && i < s.n; i++) {
    tkc_sched_item *it = &s.items[i];
    char name[160], opts[256];
    if (tkc_shape_numel(it->out->ndim, it->out->shape) == 0) {
      snprintf(name, sizeof name, "(empty: no launch)");
      snprintf(opts, sizeof opts, "none");
    } else if ((st = tkc_engine_kernel_label(&s, i, name, sizeof name, opts, sizeof opts))) {
      break;
    }
    tkc_sbuf_printf(&b, "  k%zu [shape=box, style=filled, fillcolor=\"#cfe2ff\", label=\"kernel %zu: ", i, i);
    tkc_dot_escape(&b, name);
    tkc_sbuf_puts(&b, "\\nopts ");
    tkc_dot_escape(&b, opts);
    tkc_sbuf_printf(&b, "\\nout %s %s\"];\n", tkc_dtype_str(it->out->dtype), TKC_NODE_SHAPE(it->out));
    for (int j = 0; j < it->ninputs; j++) {
      int id = buffer_id(ids, &b, it->inputs[j]);
      if (id >= 0) tkc_sbuf_printf(&b, "  b%d -> k%zu [label=\"reads (data%d)\"];\n", id, i, j + 1);
    }
    int out = buffer_id(ids, &b, it->out);
    if (out >= 0) tkc_sbuf_printf(&b, "  k%zu -> b%d [label=\"writes (data0)\"];\n", i, out);
  }
  tkc_sbuf_puts(&b, "}\n");
  tkc_free(ids);
  tkc_schedule_free(&s);
  if (st) {
    tkc_free(b.s);
    return st;
  }
  return tkc_write_text_file("schedule_dot", path, &b);
}
