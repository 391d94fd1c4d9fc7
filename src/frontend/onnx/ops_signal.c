/* ops_signal.c — STFT (frames of the signal, windowed, each a DFT as matmuls with cos / sin
 * matrices) and MelWeightMatrix (a constant built on the host from its scalar inputs, as onnx's
 * reference computes it). */
#include <math.h>
#include <stdlib.h>
#include "ops_util.h"

/* STFT: signal (B, L, 1 or 2), frame_step, optional window and frame_length; output (B, frames,
 * bins, 2) with bins = frame_length / 2 + 1 when onesided (the default) */
tkc_status onnx_build_stft(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_ctx *c = n->m->ctx;
  tkc_tensor *x = onnx_in(n, 0), *win = onnx_in(n, 2);
  tkc_dtype dt = tkc_dtype_of(x);
  if (tkc_ndim(x) != 3 || (tkc_dim(x, 2) != 1 && tkc_dim(x, 2) != 2)) return onnx_node_err(n, TKC_ESHAPE, "signal must be (batch, length, 1 or 2)");
  int64_t cnt, B = tkc_dim(x, 0), L = tkc_dim(x, 1), fl = win ? tkc_dim(win, 0) : L;
  const int64_t *st = onnx_ints(n, 1, &cnt);
  if (!st) return tkc_last_status();
  int64_t step = cnt ? st[0] : 0;
  if (onnx_has(n, 3)) {
    const int64_t *f = onnx_ints(n, 3, &cnt);
    if (!f) return tkc_last_status();
    if (cnt) fl = f[0];
  }
  if (step < 1 || fl < 1 || fl > L || fl > 8192) return onnx_node_err(n, TKC_EINVAL, "frame_step %lld, frame_length %lld for %lld samples", (long long)step, (long long)fl, (long long)L);
  int64_t nf = 1 + (L - fl) / step, bins = onnx_attr_int(n, "onesided", 1) ? fl / 2 + 1 : fl, total = nf * fl;
  int64_t *pos = malloc(sizeof(int64_t) * (size_t)total);
  if (!pos) return onnx_node_err(n, TKC_ENOMEM, "out of memory");
  for (int64_t f = 0; f < nf; f++)
    for (int64_t t = 0; t < fl; t++) pos[f * fl + t] = f * step + t;
  tkc_tensor *frames = tkc_index_select(x, 1, tkc_tensor_new(c, TKC_INT64, 1, &total, pos));
  free(pos);
  frames = tkc_reshape(frames, 4, (int64_t[]){B, nf, fl, tkc_dim(x, 2)});
  int64_t r0[8] = {0, B, 0, nf, 0, fl, 0, 1}, r1[8] = {0, B, 0, nf, 0, fl, 1, 2}, fs[3] = {B, nf, fl};
  tkc_tensor *re = tkc_reshape(tkc_shrink(frames, r0), 3, fs), *im = tkc_dim(x, 2) == 2 ? tkc_reshape(tkc_shrink(frames, r1), 3, fs) : NULL;
  if (win) {
    re = tkc_mul(re, tkc_cast(win, dt));
    if (im) im = tkc_mul(im, tkc_cast(win, dt));
  }
  /* X[k] = sum_t x[t] e^(-2 pi i k t / fl): real = re cos + im sin, imag = im cos - re sin */
  tkc_tensor *cm = onnx_trig_matrix(c, dt, fl, bins, fl, 0, 1, NULL), *sm = onnx_trig_matrix(c, dt, fl, bins, fl, 1, 1, NULL);
  tkc_tensor *out_re = tkc_matmul(re, cm), *out_im = tkc_neg(tkc_matmul(re, sm));
  if (im) out_re = tkc_add(out_re, tkc_matmul(im, sm)), out_im = tkc_add(out_im, tkc_matmul(im, cm));
  return onnx_set(n, 0, tkc_stack(2, (tkc_tensor *[]){out_re, out_im}, 3));
}

/* MelWeightMatrix: (dft_length / 2 + 1, num_mel_bins) triangular filters between mel-spaced edges;
 * the mel arithmetic in float32 and the bin positions in float64, as the reference's numpy does */
tkc_status onnx_build_mel_weights(onnx_node *n) {
  tkc_status s = onnx_need(n, 5);
  if (s) return s;
  int64_t cnt;
  double in[5];
  for (int i = 0; i < 5; i++) {
    double *v = onnx_doubles(n, i, &cnt);
    if (!v) return tkc_last_status();
    in[i] = cnt ? v[0] : 0;
    free(v);
  }
  int64_t mels = (int64_t)in[0], dft = (int64_t)in[1], rate = (int64_t)in[2];
  if (mels < 1 || mels > 4096 || dft < 1 || dft > (1 << 20) || rate < 1) return onnx_node_err(n, TKC_EINVAL, "num_mel_bins, dft_length or sample_rate");
  tkc_dtype dt = TKC_FLOAT32;
  const Onnx__AttributeProto *a = onnx_attr(n, "output_datatype");
  if (a && a->has_i && onnx_dtype_from_proto((int32_t)a->i, &dt) != TKC_OK) return onnx_node_err(n, tkc_last_status(), "%s", tkc_last_error());
  int64_t rows = dft / 2 + 1, *edge = malloc(sizeof(int64_t) * (size_t)(mels + 2));
  double *w = calloc((size_t)(rows * mels), sizeof(double));
  if (!edge || !w) return free(edge), free(w), onnx_node_err(n, TKC_ENOMEM, "out of memory");
  float lo_mel = 2595.0f * log10f(1.0f + (float)in[3] / 700.0f), hi_mel = 2595.0f * log10f(1.0f + (float)in[4] / 700.0f);
  float step = (hi_mel - lo_mel) / (float)(mels + 2);
  for (int64_t i = 0; i < mels + 2; i++) {
    double hz = 700.0 * (pow(10.0, ((double)i * (double)step + (double)lo_mel) / 2595.0) - 1.0);
    edge[i] = (int64_t)floor((double)(dft + 1) * hz / (double)rate);
  }
  for (int64_t i = 0; i < mels; i++) {
    int64_t lo = edge[i], mid = edge[i + 1], hi = edge[i + 2];
    if (lo < 0 || hi >= rows || mid < lo || hi < mid) {
      free(edge), free(w);
      return onnx_node_err(n, TKC_EINVAL, "mel edges out of the %lld spectrogram bins", (long long)rows);
    }
    if (mid == lo) w[mid * mels + i] = 1;
    else
      for (int64_t j = lo; j <= mid; j++) w[j * mels + i] = (double)(j - lo) / (double)(mid - lo);
    for (int64_t j = mid; j < hi; j++) w[j * mels + i] = (double)(hi - j) / (double)(hi - mid);
  }
  int64_t sh[2] = {rows, mels};
  tkc_tensor *t = tkc_cast(tkc_tensor_new(n->m->ctx, TKC_FLOAT64, 2, sh, w), dt);
  free(edge), free(w);
  return onnx_set(n, 0, t);
}
