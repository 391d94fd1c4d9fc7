/* bench/workloads.h — graphs the benchmarks share (bench_tensor, bench_beam): the transformer block
 * x[128,768]; q,k,v = x@W (768x768); 12 heads (reshape/permute); softmax(q@k^T/8)@v; @Wo;
 * MLP 768->3072->768 with x*sigmoid(1.702x). Header-only. */
#ifndef TKC_BENCH_WORKLOADS_H
#define TKC_BENCH_WORKLOADS_H

#include "tkc.h"

enum { T_S = 128, T_D = 768, T_H = 12, T_HD = 64, T_FF = 3072 };
#define T_FLOPS (2.0 * T_S * T_D * T_D * 4 + 2.0 * 2 * T_H * T_S * T_S * T_HD + 2.0 * 2 * T_S * T_D * T_FF)

/* (128, 768) -> (12, 128, 64) */
static inline tkc_tensor *bench_heads(tkc_tensor *t) {
  return tkc_permute(tkc_reshape(t, 3, (const int64_t[]){T_S, T_H, T_HD}), (const int[]){1, 0, 2});
}

/* w: Wq Wk Wv Wo W1 W2 */
static inline tkc_tensor *bench_transformer(tkc_ctx *ctx, tkc_tensor *x, tkc_tensor *const *w) {
  tkc_tensor *q = bench_heads(tkc_matmul(x, w[0])), *k = bench_heads(tkc_matmul(x, w[1])), *v = bench_heads(tkc_matmul(x, w[2]));
  tkc_tensor *att = tkc_softmax(tkc_mul(tkc_matmul(q, tkc_transpose(k, 1, 2)), tkc_scalar(ctx, TKC_FLOAT32, 0.125)), -1);
  tkc_tensor *o = tkc_reshape(tkc_permute(tkc_matmul(att, v), (const int[]){1, 0, 2}), 2, (const int64_t[]){T_S, T_D});
  tkc_tensor *h = tkc_matmul(tkc_matmul(o, w[3]), w[4]);
  h = tkc_mul(h, tkc_sigmoid(tkc_mul(h, tkc_scalar(ctx, TKC_FLOAT32, 1.702))));
  return tkc_matmul(h, w[5]);
}

#endif
