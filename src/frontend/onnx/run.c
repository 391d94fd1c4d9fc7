/* run.c — tkc_onnx_run: the graph built over the given inputs, node by node in file order (ONNX
 * requires topological order), each node by its op table builder. Values are looked up by name (a
 * subgraph's names fall back to the enclosing graph's); every tensor made on the way is freed at the
 * end (a scope), except the outputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "onnx_internal.h"

typedef struct value_map {
  size_t cap;
  const char **key;
  onnx_value **val;
  struct value_map *outer;
} value_map;

static size_t hash_str(const char *s) {
  size_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static onnx_value *map_get(const value_map *vm, const char *k) {
  for (; vm; vm = vm->outer)
    for (size_t i = hash_str(k) & (vm->cap - 1);; i = (i + 1) & (vm->cap - 1)) {
      if (!vm->key[i]) break;
      if (!strcmp(vm->key[i], k)) return vm->val[i];
    }
  return NULL;
}

static void map_put(value_map *vm, const char *k, onnx_value *v) {
  size_t i = hash_str(k) & (vm->cap - 1);
  while (vm->key[i] && strcmp(vm->key[i], k)) i = (i + 1) & (vm->cap - 1);
  vm->key[i] = k;
  vm->val[i] = v;
}

void onnx_value_clear(onnx_value *v) {
  free(v->host);
  v->host = NULL;
  v->t = NULL;
}

/* the values of one graph run: a map for nvals names and their storage */
typedef struct graph_run {
  value_map vm;
  onnx_value *store;
  size_t used, nvals;
  onnx_value **node_in;
} graph_run;

static tkc_status run_begin(graph_run *r, const Onnx__GraphProto *g, size_t extra, value_map *outer) {
  memset(r, 0, sizeof *r);
  r->nvals = extra + g->n_initializer;
  size_t maxin = 1;
  for (size_t i = 0; i < g->n_node; i++) {
    r->nvals += g->node[i]->n_output;
    if (g->node[i]->n_input > maxin) maxin = g->node[i]->n_input;
  }
  r->vm.cap = 16;
  while (r->vm.cap < 2 * r->nvals + 1) r->vm.cap *= 2;
  r->vm.outer = outer;
  r->vm.key = calloc(r->vm.cap, sizeof *r->vm.key);
  r->vm.val = calloc(r->vm.cap, sizeof *r->vm.val);
  r->store = calloc(r->nvals ? r->nvals : 1, sizeof *r->store);
  r->node_in = calloc(maxin, sizeof *r->node_in);
  if (!r->vm.key || !r->vm.val || !r->store || !r->node_in) return tkc_err(TKC_ENOMEM, "ONNX: out of memory");
  return TKC_OK;
}

static void run_end(graph_run *r) {
  for (size_t i = 0; r->store && i < r->used; i++) free(r->store[i].host);
  free(r->store), free(r->vm.key), free(r->vm.val), free(r->node_in);
}

/* the nodes of g in order; ops: the model's per-node table entries, or NULL to look each up */
static tkc_status run_nodes(tkc_onnx_model *m, const Onnx__GraphProto *g, const onnx_op *const *ops, graph_run *r) {
  tkc_status s = TKC_OK;
  for (size_t i = 0; i < g->n_node && s == TKC_OK; i++) {
    const Onnx__NodeProto *nd = g->node[i];
    onnx_node n = {m, nd, m->opset, (int)nd->n_input, (int)nd->n_output, r->node_in, &r->store[r->used], &r->vm};
    r->used += nd->n_output;
    const onnx_op *op = ops ? ops[i] : NULL;
    if (!op) { /* a subgraph's node: checked here, as the loader checks the main graph's */
      if (!nd->op_type || (nd->domain && *nd->domain && strcmp(nd->domain, "ai.onnx")))
        return tkc_err(TKC_EUNSUPPORTED, "ONNX: node %s '%s' (opset %lld): domain '%s' is not supported", nd->op_type ? nd->op_type : "?",
                       nd->name ? nd->name : "", (long long)m->opset, nd->domain ? nd->domain : "");
      for (size_t k = 0; k < nd->n_attribute; k++)
        if (!nd->attribute[k] || !nd->attribute[k]->name) return onnx_node_err(&n, TKC_EINVAL, "an attribute without a name");
      if (!(op = onnx_find_op(nd->op_type))) return onnx_node_err(&n, TKC_EUNSUPPORTED, "op %s is not supported", nd->op_type);
    }
    for (size_t k = 0; k < nd->n_input && s == TKC_OK; k++) {
      r->node_in[k] = NULL;
      if (!nd->input[k]) return onnx_node_err(&n, TKC_EINVAL, "input %zu has no name", k);
      if (!*nd->input[k]) continue; /* an absent optional input */
      r->node_in[k] = map_get(&r->vm, nd->input[k]);
      if (!r->node_in[k]) s = onnx_node_err(&n, TKC_EINVAL, "input '%s' is not produced before this node (the graph must be in topological order)", nd->input[k]);
    }
    if (s != TKC_OK) break;
    s = op->build(&n);
    for (int k = 0; k < n.nout && s == TKC_OK; k++) {
      if (!nd->output[k]) return onnx_node_err(&n, TKC_EINVAL, "output %d has no name", k);
      if (!n.out[k].t && *nd->output[k]) s = onnx_node_err(&n, TKC_EINTERNAL, "output %d was not built", k);
      if (*nd->output[k]) map_put(&r->vm, nd->output[k], &n.out[k]);
    }
  }
  return s;
}

tkc_status onnx_run_subgraph(onnx_node *n, const Onnx__GraphProto *g, int nin, onnx_value *const *in, int nout, onnx_value *out) {
  if (!g) return onnx_node_err(n, TKC_EINVAL, "no subgraph");
  if ((size_t)nin != g->n_input || (size_t)nout > g->n_output)
    return onnx_node_err(n, TKC_EINVAL, "its subgraph takes %zu inputs and gives %zu outputs (%d, %d here)", g->n_input, g->n_output, nin, nout);
  if (n->m->depth >= 32) return onnx_node_err(n, TKC_EUNSUPPORTED, "subgraphs nested more than 32 deep");
  graph_run r;
  n->m->depth++;
  tkc_status s = run_begin(&r, g, (size_t)nin, (value_map *)n->scope);
  for (size_t i = 0; i < g->n_initializer && s == TKC_OK; i++) {
    onnx_value *v = &r.store[r.used++];
    const Onnx__TensorProto *tp = g->initializer[i];
    if (!tp || !tp->name) s = onnx_node_err(n, TKC_EINVAL, "a subgraph initializer without a name");
    else if (!(v->t = onnx_tensor_from_proto(n->m->ctx, tp, NULL, &v->host))) s = tkc_last_status();
    else map_put(&r.vm, tp->name, v);
  }
  for (int i = 0; i < nin && s == TKC_OK; i++) {
    if (!g->input[i] || !g->input[i]->name) s = onnx_node_err(n, TKC_EINVAL, "a subgraph input without a name");
    else map_put(&r.vm, g->input[i]->name, in[i]);
  }
  if (s == TKC_OK) s = run_nodes(n->m, g, NULL, &r);
  for (int i = 0; i < nout && s == TKC_OK; i++) {
    const onnx_value *v = g->output[i] && g->output[i]->name ? map_get(&r.vm, g->output[i]->name) : NULL;
    if (!v || !v->t) s = onnx_node_err(n, TKC_EINVAL, "subgraph output %d is produced by no node", i);
    else {
      out[i].t = v->t;
      out[i].host = NULL;
      int64_t ne = tkc_numel(v->t);
      if (v->host && ne >= 0 && (out[i].host = malloc(sizeof(int64_t) * (size_t)(ne ? ne : 1))))
        memcpy(out[i].host, v->host, sizeof(int64_t) * (size_t)ne);
    }
  }
  run_end(&r);
  n->m->depth--;
  return s;
}

static tkc_status check_input(const onnx_io *io, tkc_tensor *t, int i) {
  if (!t) return tkc_err(TKC_EINVAL, "tkc_onnx_run: input %d ('%s') is NULL", i, io->name);
  if (tkc_dtype_of(t) != io->dtype)
    return tkc_err(TKC_EINVAL, "tkc_onnx_run: input %d ('%s') is %s, the model takes %s", i, io->name, tkc_dtype_name(tkc_dtype_of(t)),
                   tkc_dtype_name(io->dtype));
  if (io->ndim < 0) return TKC_OK;
  if (tkc_ndim(t) != io->ndim) return tkc_err(TKC_EINVAL, "tkc_onnx_run: input %d ('%s') has %d dims, the model takes %d", i, io->name, tkc_ndim(t), io->ndim);
  for (int d = 0; d < io->ndim; d++) {
    int64_t want = io->shape[d], have = tkc_dim(t, d);
    if (want >= 0 && !tkc_dim_is_var(want) && have != want)
      return tkc_err(TKC_EINVAL, "tkc_onnx_run: input %d ('%s') has size %lld on axis %d, the model takes %lld", i, io->name, (long long)have, d,
                     (long long)want);
  }
  return TKC_OK;
}

tkc_status tkc_onnx_run(tkc_onnx_model *m, int nin, tkc_tensor *const *inputs, int nout, tkc_tensor **outputs) {
  if (!m) return tkc_err(TKC_EINVAL, "tkc_onnx_run: NULL model");
  if (nin != m->nin) return tkc_err(TKC_EINVAL, "tkc_onnx_run: %d inputs given, the model takes %d", nin, m->nin);
  if (nin && !inputs) return tkc_err(TKC_EINVAL, "tkc_onnx_run: NULL inputs");
  if (nout < 0 || nout > m->nout) return tkc_err(TKC_EINVAL, "tkc_onnx_run: %d outputs asked, the model has %d", nout, m->nout);
  if (nout && !outputs) return tkc_err(TKC_EINVAL, "tkc_onnx_run: NULL outputs");
  if (nout > 64) return tkc_err(TKC_EUNSUPPORTED, "tkc_onnx_run: more than 64 outputs");
  for (int i = 0; i < nin; i++) {
    tkc_status s = check_input(&m->inputs[i], inputs[i], i);
    if (s != TKC_OK) return s;
  }
  const Onnx__GraphProto *g = m->proto->graph;
  graph_run r;
  m->read_values = 0;
  tkc_status s = run_begin(&r, g, (size_t)nin, NULL);
  if (s != TKC_OK) return run_end(&r), s;
  if ((s = tkc_scope_begin(m->ctx)) != TKC_OK) return run_end(&r), s;
  for (int i = 0; i < m->ninit; i++) { /* the realized initializers, with their host ints */
    onnx_value *v = &r.store[r.used++];
    v->t = m->inits[i].t;
    if (m->inits[i].host) {
      int64_t ne = tkc_numel(v->t);
      v->host = malloc(sizeof(int64_t) * (size_t)(ne ? ne : 1));
      if (v->host) memcpy(v->host, m->inits[i].host, sizeof(int64_t) * (size_t)ne);
    }
    map_put(&r.vm, m->inits[i].name, v);
  }
  for (int i = 0; i < nin; i++) { /* an input shadows an initializer of its name */
    onnx_value *v = &r.store[r.used++];
    v->t = inputs[i];
    map_put(&r.vm, m->inputs[i].name, v);
  }
  s = run_nodes(m, g, m->ops, &r);
  tkc_tensor *res[64] = {0};
  for (int i = 0; i < nout && s == TKC_OK; i++) {
    onnx_value *v = map_get(&r.vm, m->outputs[i].name);
    if (!v || !v->t) s = tkc_err(TKC_EINVAL, "ONNX: graph output '%s' is produced by no node", m->outputs[i].name);
    else if (!(res[i] = tkc_keep(tkc_tensor_ref(v->t)))) s = tkc_last_status();
  }
  run_end(&r);
  if (s != TKC_OK) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", tkc_last_error());
    for (int i = 0; i < nout; i++) tkc_tensor_free(res[i]);
    tkc_scope_end(m->ctx);
    return tkc_err(s, "%s", msg);
  }
  tkc_scope_end(m->ctx);
  for (int i = 0; i < nout; i++) outputs[i] = res[i];
  return TKC_OK;
}

int tkc_onnx_reads_values(const tkc_onnx_model *m) {
  return m ? m->read_values : (tkc_err(TKC_EINVAL, "tkc_onnx_reads_values: NULL model"), -1);
}
