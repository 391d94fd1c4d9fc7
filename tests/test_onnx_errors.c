/* test_onnx_errors.c — the ONNX loader and runner on bad input: a missing file, an empty file, random
 * bytes, a truncated model, a node with an unknown op, bad TensorProtos, wrong inputs at run, NULL
 * arguments. Each a clear error (status + message), never a crash; and a good model built here
 * (with the generated protobuf-c code) runs right. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "tkc.h"
#include "tkc/onnx.h"
#ifdef TKC_HAVE_ONNX
#include "onnx.pb-c.h"

static tkc_ctx *ctx;

/* a model: y = op(x, w) with x a float (2, batch) input and w a float (2, 3) initializer */
typedef struct built {
  uint8_t *bytes;
  size_t n;
} built;

static built build_model_w(const char *op_type, int64_t opset, int w_values, int x_dtype, int64_t w_cols) {
  Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
  Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
  Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT, *osp = &os;
  os.domain = "";
  os.has_version = 1;
  os.version = opset;
  mp.has_ir_version = 1;
  mp.ir_version = 8;
  mp.n_opset_import = 1;
  mp.opset_import = &osp;
  mp.graph = &g;
  Onnx__NodeProto node = ONNX__NODE_PROTO__INIT, *nodep = &node;
  char *ins[2] = {"x", "w"}, *outs[1] = {"y"};
  node.op_type = (char *)op_type;
  node.name = "the_node";
  node.n_input = 2;
  node.input = ins;
  node.n_output = 1;
  node.output = outs;
  g.n_node = 1;
  g.node = &nodep;
  Onnx__TensorProto w = ONNX__TENSOR_PROTO__INIT, *wp = &w;
  int64_t wdims[2] = {2, w_cols};
  float wdata[6] = {1, 2, 3, 4, 5, 6};
  w.name = "w";
  w.has_data_type = 1;
  w.data_type = 1;
  w.n_dims = 2;
  w.dims = wdims;
  w.n_float_data = (size_t)w_values;
  w.float_data = wdata;
  g.n_initializer = 1;
  g.initializer = &wp;
  Onnx__TensorShapeProto__Dimension d0 = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT, d1 = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
  Onnx__TensorShapeProto__Dimension *dims[2] = {&d0, &d1};
  d0.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
  d0.dim_value = 2;
  d1.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
  d1.dim_param = "batch";
  Onnx__TensorShapeProto shp = ONNX__TENSOR_SHAPE_PROTO__INIT;
  shp.n_dim = 2;
  shp.dim = dims;
  Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT;
  tt.has_elem_type = 1;
  tt.elem_type = x_dtype;
  tt.shape = &shp;
  Onnx__TypeProto tp = ONNX__TYPE_PROTO__INIT;
  tp.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  tp.tensor_type = &tt;
  Onnx__ValueInfoProto xi = ONNX__VALUE_INFO_PROTO__INIT, yi = ONNX__VALUE_INFO_PROTO__INIT, *xip = &xi, *yip = &yi;
  xi.name = "x";
  xi.type = &tp;
  yi.name = "y";
  yi.type = &tp;
  g.n_input = 1;
  g.input = &xip;
  g.n_output = 1;
  g.output = &yip;
  built b;
  b.n = onnx__model_proto__get_packed_size(&mp);
  b.bytes = malloc(b.n);
  onnx__model_proto__pack(&mp, b.bytes);
  return b;
}

static built build_model(const char *op_type, int64_t opset, int w_values, int x_dtype) {
  return build_model_w(op_type, opset, w_values, x_dtype, 3);
}

static void expect_error(const void *m, tkc_status want, const char *needle) {
  assert_null(m);
  assert_int_equal(tkc_last_status(), want);
  if (!strstr(tkc_last_error(), needle)) fail_msg("error '%s' does not mention '%s'", tkc_last_error(), needle);
}

static void test_missing_and_empty_file(void **state) {
  (void)state;
  expect_error(tkc_onnx_load(ctx, "/nonexistent/model.onnx"), TKC_EINVAL, "cannot open");
  char path[] = "/tmp/tkc_onnx_emptyXXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  expect_error(tkc_onnx_load(ctx, path), TKC_EINVAL, "empty");
  unlink(path);
  expect_error(tkc_onnx_load(ctx, "/tmp"), TKC_EINVAL, "not a regular file");
  expect_error(tkc_onnx_load_bytes(ctx, "", 0), TKC_EINVAL, "empty");
}

static void test_random_bytes_and_truncation(void **state) {
  (void)state;
  uint8_t junk[4096];
  uint64_t s = 12345;
  for (int round = 0; round < 200; round++) {
    size_t n = 1 + (size_t)(s % sizeof junk);
    for (size_t i = 0; i < n; i++) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      junk[i] = (uint8_t)(s >> 56);
    }
    tkc_onnx_model *m = tkc_onnx_load_bytes(ctx, junk, n);
    if (m) tkc_onnx_free(m); /* random bytes can parse as an empty-ish message: then it must be refused by the checks */
    assert_null(m);
    assert_true(strlen(tkc_last_error()) > 0);
  }
  built b = build_model("Add", 13, 6, 1);
  for (size_t cut = 1; cut < b.n; cut += 7) {
    tkc_onnx_model *m = tkc_onnx_load_bytes(ctx, b.bytes, cut);
    assert_null(m);
  }
  /* a flipped byte anywhere: an error or a model, never a crash */
  for (size_t i = 0; i < b.n; i++) {
    uint8_t *c = malloc(b.n);
    memcpy(c, b.bytes, b.n);
    c[i] ^= 0x5a;
    tkc_onnx_free(tkc_onnx_load_bytes(ctx, c, b.n));
    free(c);
  }
  free(b.bytes);
}

static void test_unknown_op(void **state) {
  (void)state;
  built b = build_model("NoSuchOp", 13, 6, 1);
  tkc_onnx_model *m = tkc_onnx_load_bytes(ctx, b.bytes, b.n);
  expect_error(m, TKC_EUNSUPPORTED, "NoSuchOp");
  assert_non_null(strstr(tkc_last_error(), "the_node"));
  assert_non_null(strstr(tkc_last_error(), "opset 13"));
  free(b.bytes);
}

static void test_bad_tensor_data(void **state) {
  (void)state;
  built b = build_model("Add", 13, 5, 1); /* 5 floats for a (2, 3) initializer */
  expect_error(tkc_onnx_load_bytes(ctx, b.bytes, b.n), TKC_EINVAL, "float_data");
  free(b.bytes);
  b = build_model("Add", 13, 6, 8); /* a string input */
  expect_error(tkc_onnx_load_bytes(ctx, b.bytes, b.n), TKC_EUNSUPPORTED, "string");
  free(b.bytes);
  b = build_model("Add", 19, 6, 18); /* float8e4m3fnuz: no -0, NaN at 0x80, a dtype tkc has not (e4m3fn and e5m2 it has) */
  expect_error(tkc_onnx_load_bytes(ctx, b.bytes, b.n), TKC_EUNSUPPORTED, "float8e4m3fnuz");
  free(b.bytes);
  b = build_model("Add", 13, 6, 99); /* no such dtype */
  expect_error(tkc_onnx_load_bytes(ctx, b.bytes, b.n), TKC_EINVAL, "dtype");
  free(b.bytes);
  b = build_model("Add", 30, 6, 1); /* an opset tkc does not know */
  expect_error(tkc_onnx_load_bytes(ctx, b.bytes, b.n), TKC_EUNSUPPORTED, "opset 30");
  free(b.bytes);
}

static void test_good_model_and_bad_run(void **state) {
  (void)state;
  built b = build_model("Add", 13, 6, 1);
  tkc_onnx_model *m = tkc_onnx_load_bytes(ctx, b.bytes, b.n);
  free(b.bytes);
  assert_non_null(m);
  assert_int_equal(tkc_onnx_num_inputs(m), 1);
  assert_int_equal(tkc_onnx_num_outputs(m), 1);
  assert_string_equal(tkc_onnx_input_name(m, 0), "x");
  assert_string_equal(tkc_onnx_output_name(m, 0), "y");
  int nd;
  int64_t shape[4];
  tkc_dtype dt;
  assert_int_equal(tkc_onnx_input_shape(m, 0, &dt, &nd, shape, 4), TKC_OK);
  assert_int_equal(dt, TKC_FLOAT32);
  assert_int_equal(nd, 2);
  assert_int_equal(shape[0], 2);
  assert_true(tkc_dim_is_var(shape[1])); /* "batch" */
  assert_int_equal(tkc_onnx_input_shape(m, 0, &dt, &nd, shape, 1), TKC_EINVAL);
  assert_int_equal(tkc_onnx_input_shape(m, 1, &dt, &nd, shape, 4), TKC_EINVAL);
  assert_null(tkc_onnx_input_name(m, 5));
  assert_null(tkc_onnx_output_name(m, -1));

  float xv[6] = {10, 20, 30, 40, 50, 60}, yv[6];
  tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (int64_t[]){2, 3}, xv), *y = NULL;
  assert_int_equal(tkc_onnx_run(m, 1, &x, 1, &y), TKC_OK);
  assert_int_equal(tkc_copy_out(y, yv, sizeof yv), TKC_OK);
  for (int i = 0; i < 6; i++) assert_float_equal(yv[i], xv[i] + (float)(i + 1), 1e-6);
  tkc_tensor_free(y);
  assert_int_equal(tkc_onnx_reads_values(m), 0); /* its graph depends on the input's shape only */

  y = NULL;
  assert_int_equal(tkc_onnx_run(m, 0, NULL, 1, &y), TKC_EINVAL); /* wrong input count */
  assert_non_null(strstr(tkc_last_error(), "0 inputs given, the model takes 1"));
  assert_int_equal(tkc_onnx_run(m, 2, (tkc_tensor *[]){x, x}, 1, &y), TKC_EINVAL);
  assert_int_equal(tkc_onnx_run(m, 1, &x, 2, &y), TKC_EINVAL); /* more outputs than the model has */
  tkc_tensor *bad_dt = tkc_tensor_new(ctx, TKC_INT32, 2, (int64_t[]){2, 3}, NULL);
  assert_int_equal(tkc_onnx_run(m, 1, &bad_dt, 1, &y), TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "int32"));
  tkc_tensor *bad_shape = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (int64_t[]){3, 3}, NULL);
  assert_int_equal(tkc_onnx_run(m, 1, &bad_shape, 1, &y), TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "axis 0"));
  tkc_tensor *bad_rank = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (int64_t[]){6}, NULL);
  assert_int_equal(tkc_onnx_run(m, 1, &bad_rank, 1, &y), TKC_EINVAL);
  tkc_tensor *null_in = NULL;
  assert_int_equal(tkc_onnx_run(m, 1, &null_in, 1, &y), TKC_EINVAL);
  assert_null(y);
  /* the model and ctx still work after all of that */
  assert_int_equal(tkc_onnx_run(m, 1, &x, 1, &y), TKC_OK);
  assert_int_equal(tkc_copy_out(y, yv, sizeof yv), TKC_OK);
  assert_float_equal(yv[5], 66, 1e-6);
  tkc_onnx_free(m);
}

/* a named dim is a dim variable: one model serves every size bound to it */
static void test_dynamic_dim(void **state) {
  (void)state;
  built b = build_model_w("Add", 13, 2, 1, 1); /* x (2, batch) + w (2, 1) */
  tkc_onnx_model *m = tkc_onnx_load_bytes(ctx, b.bytes, b.n);
  free(b.bytes);
  assert_non_null(m);
  int nd;
  int64_t shape[2];
  assert_int_equal(tkc_onnx_input_shape(m, 0, NULL, &nd, shape, 2), TKC_OK);
  int64_t batch = shape[1];
  assert_true(tkc_dim_is_var(batch));
  tkc_tensor *x = tkc_full(ctx, TKC_FLOAT32, 2, (int64_t[]){2, batch}, 10);
  for (int64_t size = 3; size <= 5; size += 2) {
    assert_int_equal(tkc_dim_bind(ctx, batch, size), TKC_OK);
    tkc_tensor *y = NULL;
    assert_int_equal(tkc_onnx_run(m, 1, &x, 1, &y), TKC_OK);
    float out[10];
    assert_int_equal(tkc_copy_out(y, out, sizeof(float) * 2 * (size_t)size), TKC_OK);
    for (int64_t i = 0; i < 2 * size; i++) assert_float_equal(out[i], 10 + (i < size ? 1 : 2), 1e-6);
    tkc_tensor_free(y);
  }
  tkc_onnx_free(m);
}

static void test_null_arguments(void **state) {
  (void)state;
  expect_error(tkc_onnx_load(NULL, "x.onnx"), TKC_EINVAL, "NULL");
  expect_error(tkc_onnx_load(ctx, NULL), TKC_EINVAL, "NULL");
  expect_error(tkc_onnx_load_bytes(ctx, NULL, 10), TKC_EINVAL, "NULL");
  expect_error(tkc_onnx_load_bytes(NULL, "abc", 3), TKC_EINVAL, "NULL");
  assert_int_equal(tkc_onnx_num_inputs(NULL), -1);
  assert_int_equal(tkc_onnx_num_outputs(NULL), -1);
  assert_null(tkc_onnx_input_name(NULL, 0));
  assert_null(tkc_onnx_output_name(NULL, 0));
  int nd;
  assert_int_equal(tkc_onnx_input_shape(NULL, 0, NULL, &nd, NULL, 0), TKC_EINVAL);
  assert_int_equal(tkc_onnx_run(NULL, 0, NULL, 0, NULL), TKC_EINVAL);
  assert_int_equal(tkc_onnx_reads_values(NULL), -1);
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  tkc_onnx_free(NULL);
}

int main(void) {
  ctx = tkc_ctx_new("INTERP");
  if (!ctx) return 1;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_missing_and_empty_file), cmocka_unit_test(test_random_bytes_and_truncation), cmocka_unit_test(test_unknown_op),
    cmocka_unit_test(test_bad_tensor_data),        cmocka_unit_test(test_good_model_and_bad_run),      cmocka_unit_test(test_null_arguments),
    cmocka_unit_test(test_dynamic_dim),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  tkc_ctx_free(ctx);
  return rc;
}
#else
int main(void) {
  printf("skipped: tkc was built without the ONNX frontend\n");
  return 0;
}
#endif
