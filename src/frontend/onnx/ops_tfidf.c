/* ops_tfidf.c — TfIdfVectorizer over int n-grams (pool_int64s; string pools are a dtype tkc lacks).
 * Each pool n-gram of a counted length k is matched at every start and, for k > 1, every skip
 * distance d = 1 .. max_skip_count + 1 (unigrams once), as onnx's reference counts: the product of k
 * equality tests on shifted views of X, summed along the last axis. The counts land in their output
 * columns (ngram_indexes) by a matmul with a 0/1 matrix, then TF / IDF / TFIDF weighting. */
#include <stdlib.h>
#include <string.h>
#include "ops_util.h"

tkc_status onnx_build_tfidf(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_ctx *c = n->m->ctx;
  tkc_tensor *x = onnx_in(n, 0);
  int nd = tkc_ndim(x);
  if (nd < 1 || nd > 2) return onnx_node_err(n, TKC_EINVAL, "X must be [C] or [N, C]");
  const Onnx__AttributeProto *pool = onnx_attr(n, "pool_int64s"), *cnts = onnx_attr(n, "ngram_counts"), *oidx = onnx_attr(n, "ngram_indexes");
  const Onnx__AttributeProto *wts = onnx_attr(n, "weights");
  if (!pool || !cnts || !oidx) return onnx_node_err(n, TKC_EUNSUPPORTED, "needs pool_int64s, ngram_counts and ngram_indexes (string pools unsupported)");
  const char *mode = onnx_attr_str(n, "mode", "TF");
  int tf = !strcmp(mode, "TF"), idf = !strcmp(mode, "IDF"), tfidf = !strcmp(mode, "TFIDF");
  if (!tf && !idf && !tfidf) return onnx_node_err(n, TKC_EINVAL, "mode '%s'", mode);
  int64_t minl = onnx_attr_int(n, "min_gram_length", 1), maxl = onnx_attr_int(n, "max_gram_length", 1), maxskip = onnx_attr_int(n, "max_skip_count", 0);
  int64_t C = tkc_dim(x, nd - 1), out_n = 0, ngrams = 0;
  for (size_t i = 0; i < oidx->n_ints; i++) {
    if (oidx->ints[i] < 0 || oidx->ints[i] > (1 << 20)) return onnx_node_err(n, TKC_EINVAL, "ngram_indexes");
    if (oidx->ints[i] + 1 > out_n) out_n = oidx->ints[i] + 1;
  }
  if (maxskip < 0 || maxskip > 64 || minl < 1 || maxl > 16) return onnx_node_err(n, TKC_EUNSUPPORTED, "gram lengths / skips");
  float *map = calloc((size_t)((int64_t)oidx->n_ints * out_n + 1), sizeof(float));
  tkc_tensor **counts = calloc(oidx->n_ints + 1, sizeof *counts);
  if (!map || !counts) return free(map), free(counts), onnx_node_err(n, TKC_ENOMEM, "out of memory");
  x = tkc_cast(x, TKC_INT64);
  int64_t bsh[1] = {nd == 2 ? tkc_dim(x, 0) : 1};
  for (size_t lvl = 0; lvl < cnts->n_ints; lvl++) { /* level lvl holds the (lvl + 1)-grams */
    int64_t k = (int64_t)lvl + 1, start = cnts->ints[lvl], end = lvl + 1 < cnts->n_ints ? cnts->ints[lvl + 1] : (int64_t)pool->n_ints;
    if (start < 0 || end > (int64_t)pool->n_ints || end < start) return free(map), free(counts), onnx_node_err(n, TKC_EINVAL, "ngram_counts");
    for (int64_t g = start; g + k <= end; g += k, ngrams++) {
      if ((size_t)ngrams >= oidx->n_ints) return free(map), free(counts), onnx_node_err(n, TKC_EINVAL, "more n-grams than ngram_indexes");
      map[ngrams * out_n + oidx->ints[ngrams]] = 1;
      tkc_tensor *total = NULL;
      if (k >= minl && k <= maxl)
        for (int64_t d = 1; d <= (k == 1 ? 1 : maxskip + 1); d++) {
          int64_t len = C - (k - 1) * d;
          if (len < 1) break;
          tkc_tensor *m = NULL;
          for (int64_t j = 0; j < k; j++) {
            tkc_tensor *e = tkc_eq(onnx_slice_axis(x, nd - 1, j * d, j * d + len), tkc_scalar(c, TKC_INT64, (double)pool->ints[g + j]));
            m = m ? tkc_and(m, e) : e;
          }
          tkc_tensor *cnt = tkc_sum(tkc_cast(m, TKC_FLOAT32), 1, (int[]){nd - 1}, 0);
          total = total ? tkc_add(total, cnt) : cnt;
        }
      counts[ngrams] = total ? total : tkc_full(c, TKC_FLOAT32, nd - 1, bsh, 0);
    }
  }
  if (ngrams == 0) return free(map), free(counts), onnx_node_err(n, TKC_EINVAL, "an empty pool");
  tkc_tensor *per_gram = tkc_stack((int)ngrams, counts, nd - 1); /* (.., G) */
  int64_t msh[2] = {ngrams, out_n};
  tkc_tensor *y = tkc_matmul(per_gram, tkc_tensor_new(c, TKC_FLOAT32, 2, msh, map));
  free(map);
  free(counts);
  tkc_tensor *w = NULL;
  if (wts && wts->n_floats) {
    if ((int64_t)wts->n_floats < out_n) return onnx_node_err(n, TKC_EINVAL, "%zu weights for %lld outputs", wts->n_floats, (long long)out_n);
    w = tkc_tensor_new(c, TKC_FLOAT32, 1, &out_n, wts->floats);
  }
  if (idf) y = tkc_cast(tkc_gt(y, tkc_scalar(c, TKC_FLOAT32, 0)), TKC_FLOAT32);
  if ((idf || tfidf) && w) y = tkc_mul(y, w);
  return onnx_set(n, 0, y);
}
