/* loader.c — tkc_onnx_load: a ModelProto parsed by protobuf-c (which checks the wire format), then
 * checked here: the graph, the opset imports, every node's op against the op table, the graph's
 * inputs and outputs (tensor types only; a named dim becomes a tkc dim variable, one per name), and
 * the initializers, read once into realized tensors. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "onnx_internal.h"

#define MAX_MODEL_BYTES ((size_t)1 << 31) /* protobuf's own limit for one message */

static void free_model(tkc_onnx_model *m) {
  if (!m) return;
  for (int i = 0; i < m->ninit; i++) {
    tkc_tensor_free(m->inits[i].t);
    free(m->inits[i].host);
  }
  free(m->inits);
  free(m->inputs);
  free(m->outputs);
  free(m->ops);
  if (m->proto) onnx__model_proto__free_unpacked(m->proto, NULL);
  free(m);
}

void tkc_onnx_free(tkc_onnx_model *m) { free_model(m); }

/* a dim variable for a named dim: one per name and model; the name made an identifier for tkc_dim_var */
typedef struct dim_names {
  int n;
  const char *name[64];
  int64_t var[64];
} dim_names;

static tkc_status dim_var_for(tkc_ctx *ctx, dim_names *dn, const char *param, int64_t *out) {
  for (int i = 0; i < dn->n; i++)
    if (!strcmp(dn->name[i], param)) return *out = dn->var[i], TKC_OK;
  if (dn->n == 64) return tkc_err(TKC_EUNSUPPORTED, "ONNX: more than 64 named dims");
  char id[32];
  int k = 0;
  for (const char *p = param; *p && k < 24; p++) id[k++] = isalnum((unsigned char)*p) ? *p : '_';
  id[k] = 0;
  if (!k || isdigit((unsigned char)id[0])) {
    memmove(id + 1, id, (size_t)k + 1);
    id[0] = 'd';
  }
  /* the name may be taken in this ctx (another model, another dim that sanitizes alike): number it */
  int64_t v = 0;
  char try_name[32];
  for (int tries = 0; tries < 100 && !v; tries++) {
    if (tries) snprintf(try_name, sizeof try_name, "%.24s_%d", id, tries);
    else snprintf(try_name, sizeof try_name, "%s", id);
    v = tkc_dim_var(ctx, try_name, 1, ONNX_DIM_VAR_MAX);
  }
  if (!v) return tkc_err(TKC_EINVAL, "ONNX: no dim variable for the named dim '%s'", param);
  tkc_clear_error();
  dn->name[dn->n] = param;
  dn->var[dn->n++] = v;
  *out = v;
  return TKC_OK;
}

static tkc_status read_io(tkc_onnx_model *m, const Onnx__ValueInfoProto *vi, onnx_io *io, dim_names *dn, const char *what) {
  if (!vi || !vi->name || !*vi->name) return tkc_err(TKC_EINVAL, "ONNX: a graph %s without a name", what);
  io->name = vi->name;
  const Onnx__TypeProto *tp = vi->type;
  if (!tp) return tkc_err(TKC_EINVAL, "ONNX: graph %s '%s' has no type", what, vi->name);
  switch (tp->value_case) {
  case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE: break;
  case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: return tkc_err(TKC_EUNSUPPORTED, "ONNX: graph %s '%s' is a sequence (not supported)", what, vi->name);
  case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: return tkc_err(TKC_EUNSUPPORTED, "ONNX: graph %s '%s' is an optional (not supported)", what, vi->name);
  default: return tkc_err(TKC_EUNSUPPORTED, "ONNX: graph %s '%s' is not a dense tensor (map/sparse: not supported)", what, vi->name);
  }
  const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
  if (!tt || !tt->has_elem_type) return tkc_err(TKC_EINVAL, "ONNX: graph %s '%s' has no element type", what, vi->name);
  if (onnx_dtype_from_proto(tt->elem_type, &io->dtype) != TKC_OK)
    return tkc_err(tkc_last_status(), "ONNX: graph %s '%s': dtype %s (%d) is not supported", what, vi->name, onnx_dtype_proto_name(tt->elem_type),
                   (int)tt->elem_type);
  io->ndim = -1; /* unknown rank */
  if (!tt->shape) return TKC_OK;
  if (tt->shape->n_dim > ONNX_MAX_DIMS)
    return tkc_err(TKC_EUNSUPPORTED, "ONNX: graph %s '%s' has %zu dims (at most %d)", what, vi->name, tt->shape->n_dim, ONNX_MAX_DIMS);
  io->ndim = (int)tt->shape->n_dim;
  for (int d = 0; d < io->ndim; d++) {
    const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[d];
    io->shape[d] = -1;
    if (!dim) continue;
    if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
      if (dim->dim_value < 0 || dim->dim_value > (INT64_C(1) << 40))
        return tkc_err(TKC_EINVAL, "ONNX: graph %s '%s': dim %d is %lld", what, vi->name, d, (long long)dim->dim_value);
      io->shape[d] = dim->dim_value;
    } else if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dim->dim_param && *dim->dim_param) {
      tkc_status s = dim_var_for(m->ctx, dn, dim->dim_param, &io->shape[d]);
      if (s != TKC_OK) return s;
    }
  }
  return TKC_OK;
}

static tkc_status check_nodes(tkc_onnx_model *m) {
  const Onnx__GraphProto *g = m->proto->graph;
  m->ops = calloc(g->n_node ? g->n_node : 1, sizeof *m->ops);
  if (!m->ops) return tkc_err(TKC_ENOMEM, "ONNX: out of memory");
  for (size_t i = 0; i < g->n_node; i++) {
    const Onnx__NodeProto *nd = g->node[i];
    if (!nd || !nd->op_type || !*nd->op_type) return tkc_err(TKC_EINVAL, "ONNX: node %zu has no op_type", i);
    const char *nm = nd->name ? nd->name : "";
    if (nd->domain && *nd->domain && strcmp(nd->domain, "ai.onnx"))
      return tkc_err(TKC_EUNSUPPORTED, "ONNX: node %s '%s' (opset %lld): domain '%s' is not supported", nd->op_type, nm, (long long)m->opset, nd->domain);
    for (size_t k = 0; k < nd->n_input; k++)
      if (!nd->input[k]) return tkc_err(TKC_EINVAL, "ONNX: node %s '%s': input %zu has no name", nd->op_type, nm, k);
    if (!nd->n_output) return tkc_err(TKC_EINVAL, "ONNX: node %s '%s' has no outputs", nd->op_type, nm);
    for (size_t k = 0; k < nd->n_output; k++)
      if (!nd->output[k]) return tkc_err(TKC_EINVAL, "ONNX: node %s '%s': output %zu has no name", nd->op_type, nm, k);
    for (size_t k = 0; k < nd->n_attribute; k++)
      if (!nd->attribute[k] || !nd->attribute[k]->name) return tkc_err(TKC_EINVAL, "ONNX: node %s '%s': an attribute without a name", nd->op_type, nm);
    m->ops[i] = onnx_find_op(nd->op_type);
    if (!m->ops[i])
      return tkc_err(TKC_EUNSUPPORTED, "ONNX: node %s '%s' (opset %lld): op %s is not supported", nd->op_type, nm, (long long)m->opset, nd->op_type);
  }
  return TKC_OK;
}

/* the index of the initializer named name, or -1 */
static int init_index(const tkc_onnx_model *m, const char *name) {
  for (int k = 0; name && k < m->ninit; k++)
    if (!strcmp(m->inits[k].name, name)) return k;
  return -1;
}

/* *out: initializer w of node nd in the layout its op's kernels read, seen as it was (same values);
 * NULL when it stays as it is:
 *   Conv (groups of 1, 4-d, output channels a multiple of 8): tkc_conv2d_weight_layout (channel-last
 *     or panels of output channels), seen as OIHW;
 *   MatMul's and Gemm's 2-d float32 B: tkc_matmul_weight_layout (panels of columns), seen as (K, N),
 *     or (N, K) for a Gemm with transB. */
static tkc_status laid_out(const Onnx__NodeProto *nd, tkc_tensor *w, tkc_tensor **out) {
  tkc_dtype dt = tkc_dtype_of(w);
  int conv = !strcmp(nd->op_type, "Conv"), gemm = !strcmp(nd->op_type, "Gemm");
  int64_t group = 1, trans = 0;
  for (size_t k = 0; k < nd->n_attribute; k++) {
    if (conv && !strcmp(nd->attribute[k]->name, "group")) group = nd->attribute[k]->i;
    if (gemm && !strcmp(nd->attribute[k]->name, "transB")) trans = nd->attribute[k]->i;
  }
  *out = NULL;
  if (conv) {
    int real = dt == TKC_FLOAT32 || dt == TKC_FLOAT16 || dt == TKC_BFLOAT16 || dt == TKC_FLOAT64;
    if (group != 1 || !real || tkc_ndim(w) != 4 || tkc_dim(w, 0) % 8) return TKC_OK;
    *out = tkc_conv2d_weight_layout(w);
  } else if ((gemm || !strcmp(nd->op_type, "MatMul")) && dt == TKC_FLOAT32 && tkc_ndim(w) == 2) {
    tkc_tensor *t = trans ? tkc_transpose(w, 0, 1) : w, *l = t ? tkc_matmul_weight_layout(t) : NULL;
    *out = trans && l ? tkc_transpose(l, 0, 1) : l;
    if (trans) tkc_tensor_free(t), tkc_tensor_free(l);
  } else
    return TKC_OK;
  return *out ? TKC_OK : tkc_last_status();
}

/* The weights of the main graph's Conv, MatMul and Gemm nodes are kept in the memory layout their
 * kernels read (laid_out): tkc_conv2d would otherwise copy them to it on every run, and a matmul of
 * fewer than 512 rows read a weight's rows, which evict each other in the cache at lengths such as
 * 768 or 3072 (a BERT layer's matmuls 1.2x slower). Any other reader of the initializer reads the view.
 * One schedule for all of them. */
static tkc_status weights_laid_out(tkc_onnx_model *m) {
  const Onnx__GraphProto *g = m->proto->graph;
  tkc_tensor **cl = calloc(m->ninit ? (size_t)m->ninit : 1, sizeof *cl); /* per initializer: its copy, or NULL */
  if (!cl) return tkc_err(TKC_ENOMEM, "ONNX: out of memory");
  tkc_tensor *todo[256];
  int n = 0;
  tkc_status st = TKC_OK;
  for (size_t i = 0; i < g->n_node && !st; i++) {
    const Onnx__NodeProto *nd = g->node[i];
    int w = nd->n_input >= 2 ? init_index(m, nd->input[1]) : -1;
    if (w < 0 || cl[w]) continue;
    st = laid_out(nd, m->inits[w].t, &cl[w]);
    if (cl[w]) todo[n++] = cl[w];
    if (!st && n == (int)(sizeof todo / sizeof *todo)) st = tkc_realize_all(n, todo), n = 0; /* one schedule per 256 weights */
  }
  if (!st && n) st = tkc_realize_all(n, todo);
  for (int k = 0; k < m->ninit; k++)
    if (!st && cl[k]) tkc_tensor_free(m->inits[k].t), m->inits[k].t = cl[k];
    else tkc_tensor_free(cl[k]);
  free(cl);
  return st;
}

static tkc_onnx_model *load_proto(tkc_ctx *ctx, const uint8_t *data, size_t n, const char *base_dir) {
  if (!ctx) return tkc_err(TKC_EINVAL, "tkc_onnx_load: NULL ctx"), NULL;
  if (n == 0) return tkc_err(TKC_EINVAL, "ONNX: empty model (0 bytes)"), NULL;
  tkc_onnx_model *m = calloc(1, sizeof *m);
  if (!m) return tkc_err(TKC_ENOMEM, "ONNX: out of memory"), NULL;
  m->ctx = ctx;
  m->proto = onnx__model_proto__unpack(NULL, n, data);
  tkc_status s = TKC_OK;
  if (!m->proto) {
    s = tkc_err(TKC_EINVAL, "ONNX: not a valid ModelProto (%zu bytes: truncated, or not an ONNX file)", n);
    goto fail;
  }
  const Onnx__GraphProto *g = m->proto->graph;
  if (!g) {
    s = tkc_err(TKC_EINVAL, "ONNX: the model has no graph");
    goto fail;
  }
  /* opset: the default domain's ("" or "ai.onnx"); a model without opset imports is refused */
  m->opset = -1;
  for (size_t i = 0; i < m->proto->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *op = m->proto->opset_import[i];
    if (!op) continue;
    if (!op->domain || !*op->domain || !strcmp(op->domain, "ai.onnx")) m->opset = op->has_version ? op->version : -1;
  }
  if (m->opset < 1) {
    s = tkc_err(TKC_EINVAL, "ONNX: the model imports no opset of the default domain");
    goto fail;
  }
  if (m->opset < 1 || m->opset > 27) {
    s = tkc_err(TKC_EUNSUPPORTED, "ONNX: opset %lld is not supported (1 to 27)", (long long)m->opset);
    goto fail;
  }
  if (g->n_sparse_initializer) {
    s = tkc_err(TKC_EUNSUPPORTED, "ONNX: sparse initializers are not supported");
    goto fail;
  }
  if ((s = check_nodes(m)) != TKC_OK) goto fail;
  /* initializers: realized tensors, read once */
  m->inits = calloc(g->n_initializer ? g->n_initializer : 1, sizeof *m->inits);
  if (!m->inits) {
    s = tkc_err(TKC_ENOMEM, "ONNX: out of memory");
    goto fail;
  }
  for (size_t i = 0; i < g->n_initializer; i++) {
    const Onnx__TensorProto *tp = g->initializer[i];
    if (!tp || !tp->name || !*tp->name) {
      s = tkc_err(TKC_EINVAL, "ONNX: initializer %zu has no name", i);
      goto fail;
    }
    onnx_init *in = &m->inits[m->ninit];
    in->name = tp->name;
    in->t = onnx_tensor_from_proto(ctx, tp, base_dir, &in->host);
    if (!in->t) {
      s = tkc_last_status();
      goto fail;
    }
    m->ninit++;
  }
  if ((s = weights_laid_out(m)) != TKC_OK) goto fail;
  /* graph inputs without the initializers, and the outputs */
  dim_names dn = {0};
  m->inputs = calloc(g->n_input ? g->n_input : 1, sizeof *m->inputs);
  m->outputs = calloc(g->n_output ? g->n_output : 1, sizeof *m->outputs);
  if (!m->inputs || !m->outputs) {
    s = tkc_err(TKC_ENOMEM, "ONNX: out of memory");
    goto fail;
  }
  for (size_t i = 0; i < g->n_input; i++) {
    const char *name = g->input[i] ? g->input[i]->name : NULL;
    int is_init = 0;
    for (int k = 0; name && k < m->ninit && !is_init; k++) is_init = !strcmp(m->inits[k].name, name);
    if (is_init) continue;
    if ((s = read_io(m, g->input[i], &m->inputs[m->nin], &dn, "input")) != TKC_OK) goto fail;
    m->nin++;
  }
  if (!g->n_output) {
    s = tkc_err(TKC_EINVAL, "ONNX: the graph has no outputs");
    goto fail;
  }
  for (size_t i = 0; i < g->n_output; i++) {
    if ((s = read_io(m, g->output[i], &m->outputs[m->nout], &dn, "output")) != TKC_OK) goto fail;
    m->nout++;
  }
  return m;
fail:
  (void)s;
  free_model(m);
  return NULL;
}

tkc_onnx_model *tkc_onnx_load_bytes(tkc_ctx *ctx, const void *data, size_t n) {
  if (!data && n) return tkc_err(TKC_EINVAL, "tkc_onnx_load_bytes: NULL data"), NULL;
  if (n > MAX_MODEL_BYTES) return tkc_err(TKC_EUNSUPPORTED, "ONNX: a model of %zu bytes (at most 2 GiB; larger ones keep weights as external data)", n), NULL;
  return load_proto(ctx, data, n, NULL);
}

tkc_onnx_model *tkc_onnx_load(tkc_ctx *ctx, const char *path) {
  if (!ctx || !path) return tkc_err(TKC_EINVAL, "tkc_onnx_load: NULL %s", ctx ? "path" : "ctx"), NULL;
  FILE *f = fopen(path, "rb");
  struct stat st;
  if (!f) return tkc_err(TKC_EINVAL, "ONNX: cannot open '%s'", path), NULL;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    fclose(f);
    return tkc_err(TKC_EINVAL, "ONNX: '%s' is not a regular file", path), NULL;
  }
  size_t n = (size_t)st.st_size;
  if (n > MAX_MODEL_BYTES) {
    fclose(f);
    return tkc_err(TKC_EUNSUPPORTED, "ONNX: '%s' has %zu bytes (at most 2 GiB)", path, n), NULL;
  }
  uint8_t *buf = malloc(n ? n : 1);
  if (!buf || fread(buf, 1, n, f) != n) {
    fclose(f);
    free(buf);
    return tkc_err(buf ? TKC_EINVAL : TKC_ENOMEM, "ONNX: cannot read '%s'", path), NULL;
  }
  fclose(f);
  /* external data lives next to the model */
  char *dir = strdup(path);
  char *slash = dir ? strrchr(dir, '/') : NULL;
  if (slash) *slash = 0;
  const char *base = !dir ? NULL : slash ? (slash == dir ? "/" : dir) : ".";
  tkc_onnx_model *m = n == 0 ? (tkc_err(TKC_EINVAL, "ONNX: '%s' is empty", path), NULL) : load_proto(ctx, buf, n, base);
  if (!m && n) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", tkc_last_error());
    tkc_status s = tkc_last_status();
    tkc_err(s, "%s (in '%s')", msg, path);
  }
  free(dir);
  free(buf);
  return m;
}

int tkc_onnx_num_inputs(const tkc_onnx_model *m) { return m ? m->nin : (tkc_err(TKC_EINVAL, "tkc_onnx_num_inputs: NULL model"), -1); }
int tkc_onnx_num_outputs(const tkc_onnx_model *m) { return m ? m->nout : (tkc_err(TKC_EINVAL, "tkc_onnx_num_outputs: NULL model"), -1); }

const char *tkc_onnx_input_name(const tkc_onnx_model *m, int i) {
  if (!m || i < 0 || i >= m->nin) return tkc_err(TKC_EINVAL, "tkc_onnx_input_name: %s", m ? "index out of range" : "NULL model"), NULL;
  return m->inputs[i].name;
}

const char *tkc_onnx_output_name(const tkc_onnx_model *m, int i) {
  if (!m || i < 0 || i >= m->nout) return tkc_err(TKC_EINVAL, "tkc_onnx_output_name: %s", m ? "index out of range" : "NULL model"), NULL;
  return m->outputs[i].name;
}

tkc_status tkc_onnx_input_shape(const tkc_onnx_model *m, int i, tkc_dtype *dtype, int *ndim, int64_t *shape, int max_dims) {
  if (!m || !ndim) return tkc_err(TKC_EINVAL, "tkc_onnx_input_shape: NULL %s", m ? "ndim" : "model");
  if (i < 0 || i >= m->nin) return tkc_err(TKC_EINVAL, "tkc_onnx_input_shape: input %d of %d", i, m->nin);
  const onnx_io *io = &m->inputs[i];
  if (shape && io->ndim > max_dims) return tkc_err(TKC_EINVAL, "tkc_onnx_input_shape: input '%s' has %d dims, room for %d", io->name, io->ndim, max_dims);
  if (dtype) *dtype = io->dtype;
  *ndim = io->ndim;
  for (int d = 0; shape && d < io->ndim; d++) shape[d] = io->shape[d];
  return TKC_OK;
}
