/* run.c — tkc_onnx_run: the graph built over the given inputs, node by node in file order (ONNX
 * requires topological order), each node by its op table builder. Values are looked up by name;
 * every tensor made on the way is freed at the end (a scope), except the outputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "onnx_internal.h"

typedef struct value_map {
  size_t cap;
  const char **key;
  onnx_value **val;
} value_map;

static size_t hash_str(const char *s) {
  size_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static onnx_value *map_get(value_map *vm, const char *k) {
  for (size_t i = hash_str(k) & (vm->cap - 1);; i = (i + 1) & (vm->cap - 1)) {
    if (!vm->key[i]) return NULL;
    if (!strcmp(vm->key[i], k)) return vm->val[i];
  }
}

static void map_put(value_map *vm, const char *k, onnx_value *v) {
  size_t i = hash_str(k) & (vm->cap - 1);
  while (vm->key[i] && strcmp(vm->key[i], k)) i = (i + 1) & (vm->cap - 1);
  vm->key[i] = k;
  vm->val[i] = v;
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
  for (int i = 0; i < nin; i++) {
    tkc_status s = check_input(&m->inputs[i], inputs[i], i);
    if (s != TKC_OK) return s;
  }
  const Onnx__GraphProto *g = m->proto->graph;
  size_t nvals = (size_t)m->ninit + (size_t)nin;
  for (size_t i = 0; i < g->n_node; i++) nvals += g->node[i]->n_output;
  value_map vm = {0};
  vm.cap = 16;
  while (vm.cap < 2 * nvals + 1) vm.cap *= 2;
  vm.key = calloc(vm.cap, sizeof *vm.key);
  vm.val = calloc(vm.cap, sizeof *vm.val);
  onnx_value *store = calloc(nvals ? nvals : 1, sizeof *store);
  onnx_value **node_in = NULL;
  if (!vm.key || !vm.val || !store) {
    free(vm.key), free(vm.val), free(store);
    return tkc_err(TKC_ENOMEM, "tkc_onnx_run: out of memory");
  }
  tkc_status s = tkc_scope_begin(m->ctx);
  if (s != TKC_OK) {
    free(vm.key), free(vm.val), free(store);
    return s;
  }
  size_t used = 0;
  for (int i = 0; i < m->ninit; i++) {
    onnx_value *v = &store[used++];
    v->t = m->inits[i].t;
    if (m->inits[i].host) {
      int64_t ne = tkc_numel(v->t);
      v->host = malloc(sizeof(int64_t) * (size_t)(ne ? ne : 1));
      if (v->host) memcpy(v->host, m->inits[i].host, sizeof(int64_t) * (size_t)ne);
    }
    map_put(&vm, m->inits[i].name, v);
  }
  for (int i = 0; i < nin; i++) { /* an input shadows an initializer of its name */
    onnx_value *v = &store[used++];
    v->t = inputs[i];
    map_put(&vm, m->inputs[i].name, v);
  }
  size_t maxin = 1;
  for (size_t i = 0; i < g->n_node; i++)
    if (g->node[i]->n_input > maxin) maxin = g->node[i]->n_input;
  node_in = calloc(maxin, sizeof *node_in);
  if (!node_in) s = tkc_err(TKC_ENOMEM, "tkc_onnx_run: out of memory");
  for (size_t i = 0; i < g->n_node && s == TKC_OK; i++) {
    const Onnx__NodeProto *nd = g->node[i];
    onnx_node n = {m, nd, m->opset, (int)nd->n_input, (int)nd->n_output, node_in, &store[used]};
    used += nd->n_output;
    for (size_t k = 0; k < nd->n_input && s == TKC_OK; k++) {
      node_in[k] = NULL;
      if (!*nd->input[k]) continue; /* an absent optional input */
      node_in[k] = map_get(&vm, nd->input[k]);
      if (!node_in[k]) s = onnx_node_err(&n, TKC_EINVAL, "input '%s' is not produced before this node (the graph must be in topological order)", nd->input[k]);
    }
    if (s != TKC_OK) break;
    s = m->ops[i]->build(&n);
    for (int k = 0; k < n.nout && s == TKC_OK; k++) {
      if (!n.out[k].t && *nd->output[k]) s = onnx_node_err(&n, TKC_EINTERNAL, "output %d was not built", k);
      if (*nd->output[k]) map_put(&vm, nd->output[k], &n.out[k]);
    }
  }
  tkc_tensor *res[64] = {0};
  if (s == TKC_OK && nout > 64) s = tkc_err(TKC_EUNSUPPORTED, "tkc_onnx_run: more than 64 outputs");
  for (int i = 0; i < nout && s == TKC_OK; i++) {
    onnx_value *v = map_get(&vm, m->outputs[i].name);
    if (!v || !v->t) s = tkc_err(TKC_EINVAL, "ONNX: graph output '%s' is produced by no node", m->outputs[i].name);
    else if (!(res[i] = tkc_keep(tkc_tensor_ref(v->t)))) s = tkc_last_status();
  }
  for (size_t i = 0; i < used; i++) free(store[i].host);
  free(store), free(vm.key), free(vm.val), free(node_in);
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
