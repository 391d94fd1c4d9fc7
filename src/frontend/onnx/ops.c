/* ops.c — the op table: ONNX op type -> builder over the public tensor API, with each op's per-opset
 * differences decided by n->opset. The builders live in files by concern (ops_elementwise.c,
 * ops_tensor.c, ops_reduce.c, ops_shape.c, ops_index.c, ops_quant.c, ops_nn.c, ops_rnn.c, ...); this
 * file only names them. */
#include <string.h>
#include "ops_util.h"

/* ---------------------------------------------------------------- the table (by name) */
static const onnx_op OPS[] = {
  {"Abs", onnx_unary_abs}, {"Acos", onnx_unary_acos}, {"Acosh", onnx_unary_acosh}, {"Add", onnx_binary_add}, {"And", onnx_binary_and}, {"ArgMax", onnx_reduce_argmax}, {"ArgMin", onnx_reduce_argmin}, {"Asin", onnx_unary_asin}, {"Asinh", onnx_unary_asinh},
  {"Atan", onnx_unary_atan}, {"Atanh", onnx_unary_atanh}, {"AveragePool", onnx_build_avg_pool}, {"BatchNormalization", onnx_build_batch_norm}, {"BitShift", onnx_binary_bitshift},
  {"BitwiseAnd", onnx_binary_and}, {"BitwiseNot", onnx_unary_bitnot}, {"BitwiseOr", onnx_binary_or}, {"BitwiseXor", onnx_binary_xor}, {"Cast", onnx_tensor_cast}, {"CastLike", onnx_tensor_cast_like},
  {"Ceil", onnx_unary_ceil}, {"Celu", onnx_unary_celu}, {"Clip", onnx_unary_clip}, {"Concat", onnx_shape_concat}, {"Constant", onnx_tensor_constant}, {"ConstantOfShape", onnx_tensor_constant_of_shape},
  {"Conv", onnx_build_conv}, {"ConvTranspose", onnx_build_conv_transpose}, {"Cos", onnx_unary_cos}, {"Cosh", onnx_unary_cosh}, {"CumSum", onnx_reduce_cumsum},
  {"DepthToSpace", onnx_shape_depth_to_space}, {"Div", onnx_binary_div}, {"Dropout", onnx_unary_dropout}, {"Elu", onnx_unary_elu}, {"Equal", onnx_binary_eq},
  {"Erf", onnx_unary_erf}, {"Exp", onnx_unary_exp}, {"Expand", onnx_shape_expand}, {"Flatten", onnx_shape_flatten}, {"Floor", onnx_unary_floor}, {"Gather", onnx_index_gather},
  {"GatherElements", onnx_index_gather_elements}, {"Gelu", onnx_unary_gelu}, {"Gemm", onnx_build_gemm}, {"GlobalAveragePool", onnx_build_global_avg_pool},
  {"GlobalMaxPool", onnx_build_global_max_pool}, {"Greater", onnx_binary_gt}, {"GreaterOrEqual", onnx_binary_ge}, {"HardSigmoid", onnx_unary_hardsigmoid},
  {"HardSwish", onnx_unary_hardswish}, {"Hardmax", onnx_math_hardmax}, {"Identity", onnx_unary_identity}, {"InstanceNormalization", onnx_build_instance_norm},
  {"IsInf", onnx_unary_isinf}, {"IsNaN", onnx_unary_isnan}, {"LayerNormalization", onnx_build_layer_norm}, {"LeakyRelu", onnx_unary_leaky_relu}, {"Less", onnx_binary_lt},
  {"LessOrEqual", onnx_binary_le}, {"Log", onnx_unary_log}, {"LogSoftmax", onnx_math_log_softmax}, {"MatMul", onnx_math_matmul}, {"Max", onnx_variadic_max},
  {"MaxPool", onnx_build_max_pool}, {"Mean", onnx_variadic_mean}, {"Min", onnx_variadic_min}, {"Mish", onnx_unary_mish}, {"Mod", onnx_binary_mod}, {"Mul", onnx_binary_mul}, {"Neg", onnx_unary_neg},
  {"Not", onnx_unary_not}, {"OneHot", onnx_index_one_hot}, {"Or", onnx_binary_or}, {"PRelu", onnx_binary_prelu}, {"Pad", onnx_shape_pad}, {"Pow", onnx_binary_pow}, {"Range", onnx_tensor_range},
  {"Reciprocal", onnx_unary_recip}, {"ReduceL1", onnx_reduce_l1}, {"ReduceL2", onnx_reduce_l2}, {"ReduceLogSum", onnx_reduce_logsum}, {"ReduceLogSumExp", onnx_reduce_logsumexp},
  {"ReduceMax", onnx_reduce_max}, {"ReduceMean", onnx_reduce_mean}, {"ReduceMin", onnx_reduce_min}, {"ReduceProd", onnx_reduce_prod}, {"ReduceSum", onnx_reduce_sum},
  {"ReduceSumSquare", onnx_reduce_sumsquare}, {"Relu", onnx_unary_relu}, {"Reshape", onnx_shape_reshape}, {"Round", onnx_unary_round}, {"ScatterElements", onnx_build_scatter_elements},
  {"Selu", onnx_unary_selu}, {"Shape", onnx_tensor_shape}, {"Shrink", onnx_unary_shrink}, {"Sigmoid", onnx_unary_sigmoid}, {"Sign", onnx_unary_sign}, {"Sin", onnx_unary_sin}, {"Sinh", onnx_unary_sinh},
  {"Size", onnx_tensor_size}, {"Slice", onnx_shape_slice}, {"Softmax", onnx_math_softmax}, {"Softplus", onnx_unary_softplus}, {"Softsign", onnx_unary_softsign},
  {"SpaceToDepth", onnx_shape_space_to_depth}, {"Split", onnx_shape_split}, {"Sqrt", onnx_unary_sqrt}, {"Squeeze", onnx_shape_squeeze}, {"Sub", onnx_binary_sub}, {"Sum", onnx_variadic_sum},
  {"Tan", onnx_unary_tan}, {"Tanh", onnx_unary_tanh}, {"ThresholdedRelu", onnx_unary_thresholded_relu}, {"Tile", onnx_shape_tile}, {"TopK", onnx_reduce_topk}, {"Transpose", onnx_shape_transpose},
  {"Trilu", onnx_shape_trilu}, {"Unsqueeze", onnx_shape_unsqueeze}, {"Where", onnx_binary_where}, {"Xor", onnx_binary_xor},
  {"RMSNormalization", onnx_build_rms_norm}, {"MeanVarianceNormalization", onnx_build_mvn}, {"GroupNormalization", onnx_build_group_norm},
  {"LpNormalization", onnx_build_lp_norm}, {"LRN", onnx_build_lrn}, {"DequantizeLinear", onnx_build_dequantize}, {"EyeLike", onnx_build_eye_like}, {"Attention", onnx_build_attention},
  {"Resize", onnx_build_resize}, {"CumProd", onnx_reduce_cumprod}, {"BitCast", onnx_tensor_bitcast}, {"Swish", onnx_unary_swish},
  {"CenterCropPad", onnx_shape_center_crop_pad}, {"QuantizeLinear", onnx_quant_quantize}, {"DynamicQuantizeLinear", onnx_quant_dynamic_quantize},
  {"Einsum", onnx_build_einsum}, {"MatMulInteger", onnx_build_matmul_integer}, {"QLinearMatMul", onnx_build_qlinear_matmul},
  {"ConvInteger", onnx_build_conv_integer}, {"NonMaxSuppression", onnx_build_nms}, {"DFT", onnx_build_dft}, {"ScatterND", onnx_build_scatter_nd}, {"CausalConvWithState", onnx_build_causal_conv},
  {"LinearAttention", onnx_build_linear_attention}, {"If", onnx_build_if}, {"Scan", onnx_build_scan}, {"Loop", onnx_build_loop},
  {"Unique", onnx_build_unique}, {"ReverseSequence", onnx_build_reverse_sequence}, {"AffineGrid", onnx_build_affine_grid},
  {"GridSample", onnx_build_grid_sample}, {"Compress", onnx_index_compress}, {"NonZero", onnx_index_nonzero}, {"Scatter", onnx_build_scatter_elements},
  {"HannWindow", onnx_window_hann}, {"HammingWindow", onnx_window_hamming}, {"BlackmanWindow", onnx_window_blackman}, {"RotaryEmbedding", onnx_build_rotary}, {"LpPool", onnx_build_lp_pool}, {"GatherND", onnx_build_gather_nd}, {"Upsample", onnx_build_resize},
  {"NegativeLogLikelihoodLoss", onnx_build_nll_loss}, {"SoftmaxCrossEntropyLoss", onnx_build_softmax_ce_loss},
  {"RNN", onnx_build_rnn}, {"GRU", onnx_build_gru}, {"LSTM", onnx_build_lstm},
  {"TensorScatter", onnx_build_tensor_scatter},
  {"MaxUnpool", onnx_build_max_unpool}, {"Col2Im", onnx_build_col2im},
  {"Det", onnx_build_det}, {"TfIdfVectorizer", onnx_build_tfidf},
  {"QLinearConv", onnx_build_qlinear_conv},
  {"STFT", onnx_build_stft}, {"MelWeightMatrix", onnx_build_mel_weights}, {"RoiAlign", onnx_build_roi_align},
  {"DeformConv", onnx_build_deform_conv},
  {"OptionalHasElement", onnx_tensor_optional_has_element}, {"OptionalGetElement", onnx_unary_identity},
};

const onnx_op *onnx_find_op(const char *op_type) {
  for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++) /* a load looks each node up once: a scan is plenty */
    if (!strcmp(op_type, OPS[i].name)) return &OPS[i];
  return NULL;
}
