/* attrs.c — a node's attributes by name, with defaults, and the node error message. */
#include <stdio.h>
#include <string.h>
#include "onnx_internal.h"

const Onnx__AttributeProto *onnx_attr(const onnx_node *n, const char *name) {
  for (size_t i = 0; i < n->proto->n_attribute; i++)
    if (!strcmp(n->proto->attribute[i]->name, name)) return n->proto->attribute[i];
  return NULL;
}

int64_t onnx_attr_int(const onnx_node *n, const char *name, int64_t def) {
  const Onnx__AttributeProto *a = onnx_attr(n, name);
  return a && a->has_i ? a->i : def;
}

double onnx_attr_float(const onnx_node *n, const char *name, double def) {
  const Onnx__AttributeProto *a = onnx_attr(n, name);
  return a && a->has_f ? a->f : def;
}

const char *onnx_attr_str(const onnx_node *n, const char *name, const char *def) {
  static _Thread_local char ring[4][256];
  static _Thread_local int next;
  const Onnx__AttributeProto *a = onnx_attr(n, name);
  if (!a || !a->has_s) return def;
  char *buf = ring[next++ & 3];
  size_t len = a->s.len < 255 ? a->s.len : 255;
  memcpy(buf, a->s.data, len);
  buf[len] = 0;
  return buf;
}

const int64_t *onnx_attr_ints(const onnx_node *n, const char *name, int *count) {
  const Onnx__AttributeProto *a = onnx_attr(n, name);
  if (!a) return *count = -1, NULL;
  *count = (int)(a->n_ints > 64 ? 64 : a->n_ints);
  return a->ints;
}

tkc_status onnx_node_err(const onnx_node *n, tkc_status s, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap); /* may read tkc_last_error(): formatted before it is overwritten */
  va_end(ap);
  return tkc_err(s ? s : TKC_EINTERNAL, "ONNX: node %s '%s' (opset %lld): %s", n->proto->op_type, n->proto->name ? n->proto->name : "",
                 (long long)n->opset, msg);
}
