/* ops_util.h — helpers the op builders share (ops.c, ops_nn.c). */
#ifndef TKC_ONNX_OPS_UTIL_H
#define TKC_ONNX_OPS_UTIL_H
#include "onnx_internal.h"
#include "tkc/ops_math.h"
#include "tkc/ops_nn.h"
#include "tkc/ops_shape.h"

/* input i's tensor, NULL when absent */
static inline tkc_tensor *onnx_in(const onnx_node *n, int i) { return i < n->nin && n->in[i] ? n->in[i]->t : NULL; }
static inline int onnx_has(const onnx_node *n, int i) { return i < n->nin && n->in[i] != NULL; }
/* sets output k (ignored past the node's outputs); a NULL t is the tensor op's error, named for the node */
tkc_status onnx_set(onnx_node *n, int k, tkc_tensor *t);
/* input i's values as int64 (host values when known, else read back from the device); NULL + error */
const int64_t *onnx_ints(onnx_node *n, int i, int64_t *count);
/* input i's values as doubles (read back); NULL + error. Caller frees. */
double *onnx_doubles(onnx_node *n, int i, int64_t *count);
/* a requires at least nin inputs */
tkc_status onnx_need(onnx_node *n, int nin);
/* axis in [-ndim, ndim) -> [0, ndim); -1 when out of range */
static inline int onnx_axis(int64_t a, int ndim) { return a < -ndim || a >= ndim ? -1 : (int)(a < 0 ? a + ndim : a); }
/* (De)QuantizeLinear: a 1-D scale (and zero point) of x's "axis" attribute reshaped to broadcast
 * along that axis of an nd-dim x; scalars stay as they are */
tkc_status onnx_per_axis(onnx_node *n, int nd, tkc_tensor **scale, tkc_tensor **zero_point);
/* the output's host ints (takes ownership of vals) */
void onnx_set_host(onnx_node *n, int k, int64_t *vals);
static inline int onnx_is_float(tkc_dtype dt) { return dt == TKC_FLOAT16 || dt == TKC_BFLOAT16 || dt == TKC_FLOAT32 || dt == TKC_FLOAT64; }
/* ops_nn.c builders */
tkc_status onnx_build_conv(onnx_node *n);
tkc_status onnx_build_conv_transpose(onnx_node *n);
tkc_status onnx_build_max_pool(onnx_node *n);
tkc_status onnx_build_avg_pool(onnx_node *n);
tkc_status onnx_build_global_avg_pool(onnx_node *n);
tkc_status onnx_build_global_max_pool(onnx_node *n);
tkc_status onnx_build_batch_norm(onnx_node *n);
tkc_status onnx_build_layer_norm(onnx_node *n);
tkc_status onnx_build_instance_norm(onnx_node *n);
tkc_status onnx_build_gemm(onnx_node *n);
tkc_status onnx_build_rms_norm(onnx_node *n);
tkc_status onnx_build_mvn(onnx_node *n);
tkc_status onnx_build_group_norm(onnx_node *n);
tkc_status onnx_build_lp_norm(onnx_node *n);
tkc_status onnx_build_lrn(onnx_node *n);
tkc_status onnx_build_dequantize(onnx_node *n);
tkc_status onnx_build_eye_like(onnx_node *n);
tkc_status onnx_build_nll_loss(onnx_node *n);
tkc_status onnx_build_attention(onnx_node *n);
tkc_status onnx_build_rotary(onnx_node *n);
tkc_status onnx_build_lp_pool(onnx_node *n);
tkc_status onnx_build_matmul_integer(onnx_node *n);
tkc_status onnx_build_qlinear_matmul(onnx_node *n);
tkc_status onnx_build_conv_integer(onnx_node *n);
tkc_status onnx_build_nms(onnx_node *n); /* nms.c */
tkc_status onnx_build_dft(onnx_node *n); /* dft.c */
tkc_status onnx_build_causal_conv(onnx_node *n);
tkc_status onnx_build_linear_attention(onnx_node *n);
tkc_status onnx_build_if(onnx_node *n);   /* control.c */
tkc_status onnx_build_scan(onnx_node *n); /* control.c */
tkc_status onnx_build_loop(onnx_node *n); /* control.c */
tkc_status onnx_build_unique(onnx_node *n);           /* host_ops.c */
tkc_status onnx_build_reverse_sequence(onnx_node *n); /* host_ops.c */
tkc_status onnx_build_affine_grid(onnx_node *n);      /* host_ops.c */
tkc_status onnx_build_grid_sample(onnx_node *n);      /* grid_sample.c */
tkc_status onnx_build_resize(onnx_node *n); /* resize.c: Resize and Upsample */
tkc_status onnx_build_einsum(onnx_node *n);    /* einsum.c */
tkc_status onnx_build_gather_nd(onnx_node *n); /* einsum.c */
tkc_status onnx_build_scatter_nd(onnx_node *n); /* einsum.c */
tkc_status onnx_build_softmax_ce_loss(onnx_node *n);
#endif
