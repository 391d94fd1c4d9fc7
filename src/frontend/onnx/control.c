/* control.c — If, Scan and Loop: their subgraphs run while the graph is built, the branch or the trip
 * count decided on the host from the condition's values (read back when not known), every iteration
 * unrolled into the lazy graph. */
#include <stdlib.h>
#include <string.h>
#include "ops_util.h"

static const Onnx__GraphProto *graph_attr(const onnx_node *n, const char *name) {
  const Onnx__AttributeProto *a = onnx_attr(n, name);
  return a ? a->g : NULL;
}

tkc_status onnx_build_if(onnx_node *n) {
  int64_t cnt;
  const int64_t *cond = onnx_ints(n, 0, &cnt);
  if (!cond) return tkc_last_status();
  if (cnt != 1) return onnx_node_err(n, TKC_EINVAL, "the condition has %lld values", (long long)cnt);
  const Onnx__GraphProto *g = graph_attr(n, cond[0] ? "then_branch" : "else_branch");
  onnx_value *outs = calloc((size_t)n->nout + 1, sizeof *outs);
  if (!outs) return onnx_node_err(n, TKC_ENOMEM, "out of memory");
  tkc_status s = onnx_run_subgraph(n, g, 0, NULL, n->nout, outs);
  for (int i = 0; i < n->nout; i++) {
    if (s == TKC_OK) s = onnx_set(n, i, tkc_tensor_ref(outs[i].t));
    if (s == TKC_OK && outs[i].host) onnx_set_host(n, i, outs[i].host), outs[i].host = NULL;
    onnx_value_clear(&outs[i]);
  }
  free(outs);
  return s;
}

/* x without axis, at index i of it */
static tkc_tensor *take(tkc_tensor *x, int axis, int64_t i) {
  int nd = tkc_ndim(x);
  int64_t rng[2 * ONNX_MAX_DIMS];
  for (int d = 0; d < nd; d++) rng[2 * d] = 0, rng[2 * d + 1] = tkc_dim(x, d);
  rng[2 * axis] = i, rng[2 * axis + 1] = i + 1;
  return tkc_squeeze(tkc_shrink(x, rng), 1, &axis);
}

/* Scan (opset 9+): N state values carried through the body, M scan inputs sliced along their axes
 * (reversed by direction 1), K scan outputs stacked along theirs */
/* Scan-8: (sequence_lens, states..., scan inputs...) with a leading batch axis on all; each batch entry
 * runs as a Scan-9 over its slices (scan axis 0, forward), the outputs stacked back along the batch.
 * sequence_lens and reversed directions are refused. */
static tkc_status scan_v8(onnx_node *n) {
  int c;
  const int64_t *dirs = onnx_attr_ints(n, "directions", &c);
  for (int i = 0; i < c; i++)
    if (dirs[i]) return onnx_node_err(n, TKC_EUNSUPPORTED, "Scan-8 in reverse");
  if (onnx_has(n, 0)) return onnx_node_err(n, TKC_EUNSUPPORTED, "Scan-8 with sequence_lens");
  int nin = n->nin - 1, nout = n->nout;
  if (nin < 1 || nout < 1) return onnx_node_err(n, TKC_EINVAL, "no inputs or outputs");
  for (int i = 1; i < n->nin; i++)
    if (!onnx_has(n, i)) return onnx_node_err(n, TKC_EINVAL, "input %d is missing", i);
  int64_t B = tkc_dim(onnx_in(n, 1), 0);
  if (B < 1 || B > 4096) return onnx_node_err(n, TKC_EUNSUPPORTED, "a batch of %lld", (long long)B);
  onnx_value *vals = calloc((size_t)nin, sizeof *vals), **args = calloc((size_t)nin, sizeof *args), *outs = calloc((size_t)nout, sizeof *outs);
  tkc_tensor **per_b = calloc((size_t)(nout * B), sizeof *per_b);
  tkc_status s = vals && args && outs && per_b ? TKC_OK : onnx_node_err(n, TKC_ENOMEM, "out of memory");
  for (int64_t b = 0; b < B && s == TKC_OK; b++) {
    for (int i = 0; i < nin; i++) vals[i].t = take(onnx_in(n, 1 + i), 0, b), vals[i].host = NULL, args[i] = &vals[i];
    onnx_node sub = *n;
    sub.opset = 9, sub.nin = nin, sub.in = args, sub.out = outs;
    s = onnx_build_scan(&sub);
    for (int k = 0; k < nout; k++) per_b[k * B + b] = outs[k].t, onnx_value_clear(&outs[k]);
  }
  for (int k = 0; k < nout && s == TKC_OK; k++) s = onnx_set(n, k, tkc_stack((int)B, per_b + k * B, 0));
  free(vals), free(args), free(outs), free(per_b);
  return s;
}

tkc_status onnx_build_scan(onnx_node *n) {
  if (n->opset < 9) return scan_v8(n);
  const Onnx__GraphProto *g = graph_attr(n, "body");
  int64_t M = onnx_attr_int(n, "num_scan_inputs", 0);
  int N = n->nin - (int)M;
  if (!g || M < 1 || N < 0 || (size_t)n->nout != g->n_output || g->n_input != (size_t)n->nin) return onnx_node_err(n, TKC_EINVAL, "body or num_scan_inputs");
  int K = n->nout - N, c;
  if (K < 0) return onnx_node_err(n, TKC_EINVAL, "fewer outputs than states");
  for (int i = 0; i < n->nin; i++)
    if (!onnx_has(n, i)) return onnx_node_err(n, TKC_EINVAL, "input %d is missing", i);
  const int64_t *in_axes = onnx_attr_ints(n, "scan_input_axes", &c);
  int n_in_axes = c;
  const int64_t *in_dirs = onnx_attr_ints(n, "scan_input_directions", &c);
  int n_in_dirs = c;
  const int64_t *out_axes = onnx_attr_ints(n, "scan_output_axes", &c);
  int n_out_axes = c;
  const int64_t *out_dirs = onnx_attr_ints(n, "scan_output_directions", &c);
  int n_out_dirs = c;
  int64_t L = -1;
  int axes[64];
  for (int j = 0; j < M && j < 64; j++) {
    tkc_tensor *x = onnx_in(n, N + j);
    axes[j] = onnx_axis(n_in_axes > j ? in_axes[j] : 0, tkc_ndim(x));
    if (axes[j] < 0) return onnx_node_err(n, TKC_EINVAL, "scan input axis out of range");
    int64_t len = tkc_dim(x, axes[j]);
    if (L >= 0 && len != L) return onnx_node_err(n, TKC_ESHAPE, "scan inputs of lengths %lld and %lld", (long long)L, (long long)len);
    L = len;
  }
  if (M > 64 || L < 0 || L > 4096) return onnx_node_err(n, TKC_EUNSUPPORTED, "%lld scan inputs of length %lld", (long long)M, (long long)L);
  onnx_value *state = calloc((size_t)n->nin, sizeof *state), *outs = calloc((size_t)n->nout, sizeof *outs);
  onnx_value **args = calloc((size_t)n->nin, sizeof *args);
  tkc_tensor **collected = calloc((size_t)(K ? K : 1) * (size_t)(L ? L : 1), sizeof *collected);
  tkc_status s = state && outs && args && collected ? TKC_OK : onnx_node_err(n, TKC_ENOMEM, "out of memory");
  for (int i = 0; i < N && s == TKC_OK; i++) state[i].t = onnx_in(n, i);
  for (int64_t t = 0; t < L && s == TKC_OK; t++) {
    for (int j = 0; j < M; j++) {
      int64_t at = n_in_dirs > j && in_dirs[j] ? L - 1 - t : t;
      state[N + j].t = take(onnx_in(n, N + j), axes[j], at);
      state[N + j].host = NULL;
    }
    for (int i = 0; i < n->nin; i++) args[i] = &state[i];
    s = onnx_run_subgraph(n, g, n->nin, args, n->nout, outs);
    for (int i = 0; i < N && s == TKC_OK; i++) {
      free(state[i].host);
      state[i] = outs[i], outs[i].host = NULL;
    }
    for (int k = 0; k < K && s == TKC_OK; k++) {
      collected[k * L + t] = outs[N + k].t;
      onnx_value_clear(&outs[N + k]);
    }
  }
  for (int i = 0; i < N && s == TKC_OK; i++) s = onnx_set(n, i, tkc_tensor_ref(state[i].t));
  for (int k = 0; k < K && s == TKC_OK; k++) {
    tkc_tensor **seq = collected + k * L;
    if (n_out_dirs > k && out_dirs[k])
      for (int64_t a = 0, b = L - 1; a < b; a++, b--) {
        tkc_tensor *tmp = seq[a];
        seq[a] = seq[b], seq[b] = tmp;
      }
    if (L == 0) {
      s = onnx_node_err(n, TKC_EUNSUPPORTED, "a scan of length 0");
      break;
    }
    int out_nd = tkc_ndim(seq[0]) + 1, ax = onnx_axis(n_out_axes > k ? out_axes[k] : 0, out_nd);
    if (ax < 0) s = onnx_node_err(n, TKC_EINVAL, "scan output axis out of range");
    else s = onnx_set(n, N + k, tkc_stack((int)L, seq, ax));
  }
  for (int i = 0; state && i < N; i++) free(state[i].host);
  free(state), free(outs), free(args), free(collected);
  return s;
}

/* Loop (opset 11+): at most M iterations while cond; body (iteration, cond, carried...) ->
 * (cond, carried..., scan outputs...), the scan outputs stacked along a new first axis */
tkc_status onnx_build_loop(onnx_node *n) {
  const Onnx__GraphProto *g = graph_attr(n, "body");
  if (!g || n->nin < 2 || g->n_input != (size_t)n->nin || g->n_output < (size_t)(n->nin - 1)) return onnx_node_err(n, TKC_EINVAL, "body");
  int N = n->nin - 2, K = n->nout - N;
  if (K < 0 || (size_t)(1 + N + K) != g->n_output) return onnx_node_err(n, TKC_EINVAL, "outputs do not match the body");
  int64_t max_trip = 4096, cnt;
  int has_cond = onnx_has(n, 1);
  int64_t cond = 1;
  if (onnx_has(n, 0)) {
    const int64_t *v = onnx_ints(n, 0, &cnt);
    if (!v) return tkc_last_status();
    max_trip = cnt ? v[0] : 0;
  } else if (!has_cond) return onnx_node_err(n, TKC_EUNSUPPORTED, "an endless loop (no trip count, no condition)");
  if (has_cond) {
    const int64_t *v = onnx_ints(n, 1, &cnt);
    if (!v) return tkc_last_status();
    cond = cnt ? v[0] : 0;
  }
  if (max_trip > 4096) return onnx_node_err(n, TKC_EUNSUPPORTED, "%lld iterations (at most 4096 unrolled)", (long long)max_trip);
  onnx_value *vals = calloc((size_t)n->nin, sizeof *vals), *outs = calloc(g->n_output, sizeof *outs);
  onnx_value **args = calloc((size_t)n->nin, sizeof *args);
  tkc_tensor **collected = calloc((size_t)(K ? K : 1) * (size_t)(max_trip ? max_trip : 1), sizeof *collected);
  tkc_status s = vals && outs && args && collected ? TKC_OK : onnx_node_err(n, TKC_ENOMEM, "out of memory");
  for (int i = 0; i < N && s == TKC_OK; i++) {
    if (!onnx_has(n, 2 + i)) s = onnx_node_err(n, TKC_EINVAL, "loop-carried input %d is missing", i);
    else vals[2 + i].t = onnx_in(n, 2 + i);
  }
  int64_t it = 0;
  for (; it < max_trip && cond && s == TKC_OK; it++) {
    int64_t *iv = malloc(sizeof(int64_t)), *cv = malloc(sizeof(int64_t));
    if (!iv || !cv) {
      free(iv), free(cv);
      s = onnx_node_err(n, TKC_ENOMEM, "out of memory");
      break;
    }
    *iv = it, *cv = 1;
    free(vals[0].host), free(vals[1].host);
    vals[0].t = tkc_tensor_new(n->m->ctx, TKC_INT64, 0, NULL, iv), vals[0].host = iv;
    vals[1].t = tkc_full(n->m->ctx, TKC_BOOL, 0, NULL, 1), vals[1].host = cv;
    for (int i = 0; i < n->nin; i++) args[i] = &vals[i];
    s = onnx_run_subgraph(n, g, n->nin, args, (int)g->n_output, outs);
    if (s != TKC_OK) break;
    onnx_node condn = *n; /* read the body's condition through a one-input view of this node */
    onnx_value *cin = &outs[0];
    condn.nin = 1, condn.in = &cin;
    const int64_t *c = onnx_ints(&condn, 0, &cnt);
    if (!c) {
      s = tkc_last_status();
      break;
    }
    cond = cnt ? c[0] : 0;
    onnx_value_clear(&outs[0]);
    for (int i = 0; i < N; i++) {
      free(vals[2 + i].host);
      vals[2 + i] = outs[1 + i], outs[1 + i].host = NULL;
    }
    for (int k = 0; k < K; k++) {
      collected[k * max_trip + it] = outs[1 + N + k].t;
      onnx_value_clear(&outs[1 + N + k]);
    }
  }
  for (int i = 0; i < N && s == TKC_OK; i++) s = onnx_set(n, i, tkc_tensor_ref(vals[2 + i].t));
  for (int k = 0; k < K && s == TKC_OK; k++) {
    if (it == 0) s = onnx_node_err(n, TKC_EUNSUPPORTED, "scan outputs of a loop that ran 0 times");
    else s = onnx_set(n, N + k, tkc_stack((int)it, collected + k * max_trip, 0));
  }
  for (int i = 0; vals && i < n->nin; i++) free(vals[i].host);
  free(vals), free(outs), free(args), free(collected);
  return s;
}
