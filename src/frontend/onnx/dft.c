/* dft.c — DFT (opset 17, 20) as matmuls with host-built cos/sin matrices along the transformed axis:
 * forward (optionally one-sided), inverse, and the inverse of a one-sided spectrum (irfft, hermitian
 * weights); the signal truncated or zero-padded to dft_length, as numpy.fft in onnx's reference. */
#include <math.h>
#include <stdlib.h>
#include "ops_util.h"

tkc_tensor *onnx_trig_matrix(tkc_ctx *c, tkc_dtype dt, int64_t rows, int64_t cols, int64_t n, int use_sin, double sign, const double *w) {
  int64_t total = rows * cols;
  double *m = malloc(sizeof(double) * (size_t)(total > 0 ? total : 1));
  if (!m) return NULL;
  for (int64_t t = 0; t < rows; t++)
    for (int64_t k = 0; k < cols; k++) {
      double th = 2 * M_PI * (double)((k * t) % n) / (double)n;
      m[t * cols + k] = sign * (use_sin ? sin(th) : cos(th)) * (w ? w[k] : 1.0);
    }
  int64_t sh[2] = {rows, cols};
  tkc_tensor *r = tkc_cast(tkc_tensor_new(c, TKC_FLOAT64, 2, sh, m), dt);
  free(m);
  return r;
}

tkc_status onnx_build_dft(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  tkc_ctx *c = n->m->ctx;
  tkc_dtype dt = tkc_dtype_of(x);
  int nd = tkc_ndim(x), cnt2 = tkc_dim(x, nd - 1) == 2;
  if (nd < 2 || (tkc_dim(x, nd - 1) != 1 && !cnt2)) return onnx_node_err(n, TKC_ESHAPE, "the last dim must be 1 (real) or 2 (complex)");
  int64_t axis_v = n->opset >= 20 ? -2 : onnx_attr_int(n, "axis", 1), cnt;
  if (n->opset >= 20 && onnx_has(n, 2)) {
    const int64_t *v = onnx_ints(n, 2, &cnt);
    if (!v) return tkc_last_status();
    if (cnt) axis_v = v[0];
  }
  int axis = onnx_axis(axis_v, nd);
  if (axis < 0 || axis == nd - 1) return onnx_node_err(n, TKC_EINVAL, "axis %lld", (long long)axis_v);
  int inverse = (int)onnx_attr_int(n, "inverse", 0), onesided = (int)onnx_attr_int(n, "onesided", 0);
  int64_t len = tkc_dim(x, axis), N = inverse && onesided ? 2 * (len - 1) : len;
  if (onnx_has(n, 1) && tkc_numel(onnx_in(n, 1)) > 0) {
    const int64_t *v = onnx_ints(n, 1, &cnt);
    if (!v) return tkc_last_status();
    N = v[0];
  }
  if (N < 1 || N > 8192) return onnx_node_err(n, TKC_EUNSUPPORTED, "dft_length %lld", (long long)N);
  /* real and imaginary parts, (..) with the transformed axis last */
  int64_t rng[2 * ONNX_MAX_DIMS], sh[ONNX_MAX_DIMS];
  for (int d = 0; d < nd; d++) rng[2 * d] = 0, rng[2 * d + 1] = tkc_dim(x, d), sh[d] = tkc_dim(x, d);
  rng[2 * (nd - 1) + 1] = 1;
  tkc_tensor *re = tkc_reshape(tkc_shrink(x, rng), nd - 1, sh), *im = NULL;
  if (cnt2) {
    rng[2 * (nd - 1)] = 1, rng[2 * (nd - 1) + 1] = 2;
    im = tkc_reshape(tkc_shrink(x, rng), nd - 1, sh);
  }
  int last = nd - 2;
  re = tkc_transpose(re, axis, last);
  if (im) im = tkc_transpose(im, axis, last);
  /* the input length the sum runs over: numpy truncates or zero-pads to N (irfft: to N/2 + 1) */
  int64_t in_len = inverse && onesided ? N / 2 + 1 : N, have = tkc_dim(re, last);
  if (have != in_len) {
    int64_t pads[2 * ONNX_MAX_DIMS] = {0}, r2[2 * ONNX_MAX_DIMS];
    for (int d = 0; d < nd - 1; d++) r2[2 * d] = 0, r2[2 * d + 1] = tkc_dim(re, d);
    if (have > in_len) r2[2 * last + 1] = in_len;
    else pads[2 * last + 1] = in_len - have;
    re = have > in_len ? tkc_shrink(re, r2) : tkc_pad(re, pads, 0);
    if (im) im = have > in_len ? tkc_shrink(im, r2) : tkc_pad(im, pads, 0);
  }
  int64_t K = !inverse && onesided ? N / 2 + 1 : N; /* output length along the axis */
  tkc_tensor *out_re, *out_im = NULL;
  if (!inverse) { /* X = sum x e^{-i th}: Re = re cos + im sin, Im = im cos - re sin */
    tkc_tensor *cm = onnx_trig_matrix(c, dt, in_len, K, N, 0, 1, NULL), *sm = onnx_trig_matrix(c, dt, in_len, K, N, 1, 1, NULL);
    out_re = tkc_matmul(re, cm);
    out_im = tkc_neg(tkc_matmul(re, sm));
    if (im) out_re = tkc_add(out_re, tkc_matmul(im, sm)), out_im = tkc_add(out_im, tkc_matmul(im, cm));
  } else if (!onesided) { /* x = 1/N sum X e^{+i th} */
    tkc_tensor *cm = onnx_trig_matrix(c, dt, in_len, K, N, 0, 1.0 / (double)N, NULL), *sm = onnx_trig_matrix(c, dt, in_len, K, N, 1, 1.0 / (double)N, NULL);
    out_re = tkc_matmul(re, cm);
    out_im = tkc_matmul(re, sm);
    if (im) out_re = tkc_sub(out_re, tkc_matmul(im, sm)), out_im = tkc_add(out_im, tkc_matmul(im, cm));
  } else { /* irfft: the hermitian spectrum's real signal, bins 1 .. counted twice */
    double *w = malloc(sizeof(double) * (size_t)in_len);
    if (!w) return onnx_node_err(n, TKC_ENOMEM, "out of memory");
    for (int64_t k = 0; k < in_len; k++) w[k] = (k == 0 || (N % 2 == 0 && k == N / 2)) ? 1.0 : 2.0;
    /* rows are bins k, columns samples t: weight by row */
    double *m = malloc(sizeof(double) * (size_t)(in_len * N)), *ms = malloc(sizeof(double) * (size_t)(in_len * N));
    if (!m || !ms) return free(w), free(m), free(ms), onnx_node_err(n, TKC_ENOMEM, "out of memory");
    for (int64_t k = 0; k < in_len; k++)
      for (int64_t t = 0; t < N; t++) {
        double th = 2 * M_PI * (double)((k * t) % N) / (double)N;
        m[k * N + t] = w[k] * cos(th) / (double)N, ms[k * N + t] = -w[k] * sin(th) / (double)N;
      }
    int64_t msh[2] = {in_len, N};
    tkc_tensor *cm = tkc_cast(tkc_tensor_new(c, TKC_FLOAT64, 2, msh, m), dt), *sm = tkc_cast(tkc_tensor_new(c, TKC_FLOAT64, 2, msh, ms), dt);
    free(w), free(m), free(ms);
    out_re = tkc_matmul(re, cm);
    if (im) out_re = tkc_add(out_re, tkc_matmul(im, sm));
  }
  out_re = tkc_unsqueeze(tkc_transpose(out_re, axis, last), nd - 1);
  tkc_tensor *out = out_re;
  if (out_im) out = tkc_cat(2, (tkc_tensor *[]){out_re, tkc_unsqueeze(tkc_transpose(out_im, axis, last), nd - 1)}, nd - 1);
  return onnx_set(n, 0, out);
}
