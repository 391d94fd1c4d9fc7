/* onnx_internal.h — what the ONNX frontend's files share: the loaded model, the values a graph
 * build passes between nodes, attribute readers and the op table's interface.
 *
 * The frontend sits on the public API (tkc.h, tkc/ops_*.h, tkc/onnx.h) and the protobuf-c reader
 * generated at build time from the system's onnx.proto (onnx.pb-c.h). */
#ifndef TKC_ONNX_INTERNAL_H
#define TKC_ONNX_INTERNAL_H
#include <stdarg.h>
#include <stdint.h>
#include "onnx.pb-c.h"
#include "tkc.h"
#include "tkc/onnx.h"

#define ONNX_MAX_DIMS 8
/* a named dim's variable takes values 1 .. this (buffers of variable size are laid out for the largest) */
#define ONNX_DIM_VAR_MAX 4096

/* tkc's own error reporting (src/base/error.c), which the public API has no setter for: the frontend
 * is compiled into libtkc, so its messages land in the same thread-local tkc_last_error(). */
tkc_status tkc_err(tkc_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A value flowing between nodes: the tensor, and its int64 values on the host when they are known
 * while the graph is built (shapes, constants, initializers: tinygrad's "python consts"), so shape
 * arithmetic never runs a kernel. */
typedef struct onnx_value {
  tkc_tensor *t;
  int64_t *host; /* numel values, row-major; NULL when unknown */
} onnx_value;

typedef struct onnx_io {
  const char *name;
  tkc_dtype dtype;
  int ndim;
  int64_t shape[ONNX_MAX_DIMS]; /* a fixed dim, a dim variable token, or -1 (unknown) */
} onnx_io;

typedef struct onnx_init {
  const char *name;
  tkc_tensor *t;
  int64_t *host; /* ints of small integer initializers */
} onnx_init;

struct onnx_op;
struct tkc_onnx_model {
  tkc_ctx *ctx;
  Onnx__ModelProto *proto;
  int64_t opset; /* of the default domain */
  int ninit;
  onnx_init *inits;
  int nin, nout;
  onnx_io *inputs, *outputs;
  const struct onnx_op **ops; /* per node */
  int depth;                  /* subgraphs being run inside each other (bounded: a hostile file may nest deeply) */
  int read_values;            /* the last run read computed values on the host (tkc_onnx_reads_values) */
};

/* What a builder gets: the node, its inputs (NULL for an absent optional one) and room for its outputs. */
typedef struct onnx_node {
  tkc_onnx_model *m;
  const Onnx__NodeProto *proto;
  int64_t opset;
  int nin, nout;
  onnx_value **in;
  onnx_value *out;
  void *scope; /* run.c's values by name, for subgraphs (If, Scan, Loop) to read the outer ones */
} onnx_node;

typedef tkc_status (*onnx_build_fn)(onnx_node *n);
typedef struct onnx_op {
  const char *name;
  onnx_build_fn build;
} onnx_op;

/* run.c: runs subgraph g (an attribute of node n) with its inputs bound to in[0..nin) in g's order;
 * its outputs' values go to out[0..nout) (host values copied; free them with onnx_value_clear) */
tkc_status onnx_run_subgraph(onnx_node *n, const Onnx__GraphProto *g, int nin, onnx_value *const *in, int nout, onnx_value *out);
void onnx_value_clear(onnx_value *v);

/* ops.c: the op table */
const onnx_op *onnx_find_op(const char *op_type);
/* errors naming the node: "ONNX Conv 'conv1' (opset 13): ..." */
tkc_status onnx_node_err(const onnx_node *n, tkc_status s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* attrs.c: attribute readers (def when absent) */
const Onnx__AttributeProto *onnx_attr(const onnx_node *n, const char *name);
int64_t onnx_attr_int(const onnx_node *n, const char *name, int64_t def);
double onnx_attr_float(const onnx_node *n, const char *name, double def);
const char *onnx_attr_str(const onnx_node *n, const char *name, const char *def); /* NUL-terminated copy lives in a ring */
/* the ints of attribute name: *count = -1 when absent */
const int64_t *onnx_attr_ints(const onnx_node *n, const char *name, int *count);

/* tensor_proto.c: a TensorProto's dtype, shape and data, checked. base_dir: where external data
 * files are (NULL: refused). *data is malloc'ed (NULL when empty). */
tkc_status onnx_dtype_from_proto(int32_t onnx_type, tkc_dtype *dt);
const char *onnx_dtype_proto_name(int32_t onnx_type);
tkc_status onnx_tensor_decode(const Onnx__TensorProto *tp, const char *base_dir, tkc_dtype *dt, int *ndim, int64_t *shape, void **data,
                              size_t *nbytes);
size_t onnx_itemsize(tkc_dtype dt);
/* a realized tkc tensor from a TensorProto (+ host ints for small integer tensors when host != NULL) */
tkc_tensor *onnx_tensor_from_proto(tkc_ctx *ctx, const Onnx__TensorProto *tp, const char *base_dir, int64_t **host);
/* int64 values of a (host) buffer of dtype dt; NULL for non-integer dtypes */
int64_t *onnx_ints_from_data(tkc_dtype dt, const void *data, int64_t numel);
#endif
