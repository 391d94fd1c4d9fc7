/* tkc/onnx.h — run ONNX models: load a .onnx file, feed tensors, get lazy output tensors.
 *
 *   tkc_onnx_model *m = tkc_onnx_load(ctx, "resnet18.onnx");
 *   tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 4, (int64_t[]){1, 3, 224, 224}, pixels);
 *   tkc_tensor *y;
 *   if (!m || tkc_onnx_run(m, 1, &x, 1, &y) != TKC_OK) puts(tkc_last_error());
 *   tkc_copy_out(y, logits, sizeof logits);
 *   tkc_onnx_free(m);
 *
 * Loading parses the ModelProto (protobuf-c), checks it (dtypes, dims, data sizes, external data
 * files next to the model, opset imports, every node's op against the op table) and reads the
 * initializers once into realized tensors of ctx. A malformed file or an op, dtype or attribute
 * that tkc cannot express is refused at load: NULL with TKC_EINVAL / TKC_EUNSUPPORTED and a
 * message naming the node (op type, name, opset). Each tkc_onnx_run builds the graph again over
 * the given inputs (lazy: nothing runs until an output is realized); shape arithmetic (Shape ->
 * Gather -> Concat -> Reshape) is done on the host as the graph is built. Where the graph's shape or
 * control flow depends on tensor values (a Reshape's shape computed from data, If/Loop conditions,
 * trip counts, NonZero, Compress, Unique, NonMaxSuppression, GridSample's grid, TopK's k ...) those
 * values are realized and read back during tkc_onnx_run, as tinygrad's runner does; If, Scan and Loop
 * are unrolled into the graph.
 *
 * Built only when protobuf-c and onnx.proto were found (TKC_WITH_ONNX); otherwise tkc_onnx_load
 * fails with TKC_EUNSUPPORTED ("built without the ONNX frontend"). */
#ifndef TKC_ONNX_H
#define TKC_ONNX_H
#include "tkc.h"
#ifdef __cplusplus
extern "C" {
#endif
typedef struct tkc_onnx_model tkc_onnx_model;
/* Loads a model file (external data is read from files next to it). NULL + tkc_last_error() on failure. */
TKC_API tkc_onnx_model *tkc_onnx_load(tkc_ctx *ctx, const char *path);
/* The same from n bytes in memory (external data is refused: there is no folder to read it from). */
TKC_API tkc_onnx_model *tkc_onnx_load_bytes(tkc_ctx *ctx, const void *data, size_t n);
/* The graph's inputs without the initializers, in the graph's order; -1 on a NULL model. */
TKC_API int tkc_onnx_num_inputs(const tkc_onnx_model *m);
/* Input i's name (owned by the model); NULL + TKC_EINVAL out of range. */
TKC_API const char *tkc_onnx_input_name(const tkc_onnx_model *m, int i);
/* Input i's dtype and shape: writes its ndim to *ndim (-1 when the file gives no shape) and, when
 * shape is not NULL, up to max_dims dims to shape. A dim the file names, like "batch", is a tkc dim
 * variable token of the model's ctx (tkc_dim_var with bounds [1, 4096], one per name, named after it:
 * bind it with tkc_dim_bind and build inputs with it); a dim without value or name is -1. dtype may
 * be NULL. TKC_EINVAL for a NULL model or ndim, i out of range, or max_dims smaller than the ndim. */
TKC_API tkc_status tkc_onnx_input_shape(const tkc_onnx_model *m, int i, tkc_dtype *dtype, int *ndim, int64_t *shape, int max_dims);
/* The graph's outputs; -1 on a NULL model. */
TKC_API int tkc_onnx_num_outputs(const tkc_onnx_model *m);
TKC_API const char *tkc_onnx_output_name(const tkc_onnx_model *m, int i);
/* Builds the graph over inputs[0..nin) (graph order, initializers excluded; nin must equal
 * tkc_onnx_num_inputs) and writes nout new lazy tensors to outputs (nout <= tkc_onnx_num_outputs:
 * the first nout outputs). Inputs must have the declared dtype and rank, and the declared size on
 * every fixed dim (TKC_EINVAL naming the input otherwise). On failure no output is written. */
TKC_API tkc_status tkc_onnx_run(tkc_onnx_model *m, int nin, tkc_tensor *const *inputs, int nout, tkc_tensor **outputs);
/* 1 when the last tkc_onnx_run read values it computed on the host to build the graph (NonZero, a
 * shape or a count computed from the inputs, a loop's trip count): its graph depends on the input
 * values, so a tkc_jit capture of it would replay the first values' graph; 0 when the graph depends
 * on the inputs' shapes only (capturing is right); -1 for NULL. */
TKC_API int tkc_onnx_reads_values(const tkc_onnx_model *m);
/* Frees the model and its initializer tensors (tensors from tkc_onnx_run stay). NULL is a no-op. */
TKC_API void tkc_onnx_free(tkc_onnx_model *m);
#ifdef __cplusplus
}
#endif
#endif
