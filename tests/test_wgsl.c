/* The WGSL backend: the shaders the renderer writes for typical kernels (key substrings and
 * structure: packed 8/16-bit stores, workgroup memory + barrier, launch builtins), GPU-style kernels
 * (gidx/lidx SPECIALs, several invocations writing bytes of one word) run on WEBGPU against INTERP or
 * a plain C reference, and bad input (shaders that do not compile, 64-bit types, names, launch
 * shapes, a missing library). The edge values where WGSL's own semantics differ from tkc's (division
 * by zero, wide shifts, saturating float->int casts, NaN tests, bfloat16) are rows of
 * tests/test_backend_ops.c's ALU table, checked there on every device against INTERP.
 * Renderer checks run in every build; device checks need the WEBGPU device (wgpu-native + a Vulkan
 * driver such as lavapipe). A build that found webgpu.h (TKC_WEBGPU_EXPECTED, see cmake/webgpu.cmake)
 * fails when the device is unavailable, so CI cannot silently skip them; TKC_SKIP_WEBGPU=1 allows it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <sys/wait.h>
#include <pthread.h>
#include <unistd.h>
#include "codegen/codegen.h"
#include "golden.h"
#include "kernel_util.h"
#include "runtime/device.h"
#include "tkc.h"

static int webgpu_ok(void) {
  if (tkc_device_available("WEBGPU")) return 1;
  tkc_device_get("WEBGPU");
  const char *skip_env = getenv("TKC_SKIP_WEBGPU");
#ifdef TKC_WEBGPU_EXPECTED
  if (!(skip_env && !strcmp(skip_env, "1"))) {
    fprintf(stderr, "WEBGPU is unavailable although tkc was built with webgpu.h (run scripts/install-deps.sh; "
                    "TKC_SKIP_WEBGPU=1 to skip): %s\n", tkc_last_error());
    fail();
  }
#endif
  (void)skip_env;
  printf("skipped: WEBGPU unavailable: %s\n", tkc_last_error());
  return 0;
}
#define SKIP_WITHOUT_WEBGPU() \
  do {                        \
    if (!webgpu_ok()) skip(); \
  } while (0)

/* ---------------------------------------------------------------- rendering without the device */

/* the WGSL of a kernel, through the same stages as tkc_program_new (malloc'ed) */
static char *render_wgsl(tkc_graph *g, tkc_uop *sink, const char *name) {
  (void)g;
  return render_source("WGSL", sink, name);
}

static tkc_uop *k_special(tkc_graph *g, const char *name, int64_t n) { return tkc_uop_special(g, name, n); }
static tkc_uop *k_lt(tkc_graph *g, tkc_uop *a, tkc_uop *b) { return tkc_uop_alu2(g, TKC_OP_CMPLT, a, b); }
static tkc_uop *k_store_gated(tkc_graph *g, tkc_uop *b, tkc_uop *idx, tkc_uop *gate, tkc_uop *v) {
  return k_op(g, TKC_OP_STORE, dt_(TKC_VOID), 2, k_index_gated(g, b, idx, gate), v, NULL);
}
static tkc_uop *k_load_gated(tkc_graph *g, tkc_uop *b, tkc_uop *idx, tkc_uop *gate) {
  return k_op(g, TKC_OP_LOAD, tkc_dt_base(b->dtype), 1, k_index_gated(g, b, idx, gate), NULL, NULL);
}

/* out[i] = a[i] + 1 on int8 (packed bytes, loop kernel) */
static void test_golden_packed_char(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *out = k_buf(g, 0, TKC_INT8), *a = k_buf(g, 1, TKC_INT8), *r = k_range(g, 10, 0);
  tkc_uop *sink = k_sink1(g, k_store(g, out, r, k_add(g, k_load(g, a, r), tkc_uop_const_int(g, dt_(TKC_INT8), 1))));
  char *src = render_wgsl(g, sink, "packed");
  assert_non_null(src);
  want(src, "@group(0) @binding(0) var<storage, read_write> data0: array<atomic<u32>>;");
  want(src, "@group(0) @binding(1) var<storage, read_write> data1: array<atomic<u32>>;");
  want(src, "@compute @workgroup_size(1, 1, 1)");
  want(src, "fn packed(@builtin(workgroup_id) gindex: vec3<u32>, @builtin(local_invocation_id) lindex: vec3<u32>) {");
  want(src, "for (var ridx0: i32 = 0i; ridx0 < 10i; ridx0++) {");
  want(src, "(ridx0 / 4i)");                /* the word */
  want(src, "% 4u) * 8u)");                 /* the byte's shift */
  want(src, "atomicLoad(&data1[");          /* the word read */
  want(src, "& 255u)");                     /* the byte masked out */
  want(src, "<< 24u) >> 24u)");             /* int8: sign-extended, and the sum wrapped */
  want_order(src, "atomicAnd(&data0[", "atomicOr(&data0["); /* clear the byte, then set it */
  want(src, "((255u << ");                  /* the clearing mask ... */
  want(src, "^ 4294967295u)");              /* ... inverted */
  want_not(src, "data0[alu0] =");           /* never a plain (racy) word store */
  want_not(src, "enable f16;");
  want_not(src, "i64");
  tkc_free(src);
  tkc_graph_free(g);
}

/* gated packed uint16 load with a non-zero alternative, bool store */
static void test_golden_packed_gated(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *out = k_buf(g, 0, TKC_BOOL), *a = k_buf(g, 1, TKC_UINT16), *r = k_range(g, 9, 0);
  tkc_uop *gate = k_lt(g, r, k_int(g, 5));
  tkc_uop *ld = k_op(g, TKC_OP_LOAD, dt_(TKC_UINT16), 1, k_index_gated(g, a, r, gate), NULL, NULL);
  tkc_uop *v = tkc_uop_alu2(g, TKC_OP_CMPNE, ld, tkc_uop_const_int(g, dt_(TKC_UINT16), 7));
  char *src = render_wgsl(g, k_sink1(g, k_store(g, out, r, v)), "gated");
  assert_non_null(src);
  want(src, "(ridx0 / 2i)");                /* two halves per word */
  want(src, "% 2u) * 16u)");
  want(src, "& 65535u)");
  want(src, "var val0: u32 = 0u;");
  want(src, ") { val0 = atomicLoad(&data1[(ridx0 / 2i)]); }"); /* nothing is read when the gate is off */
  want(src, "select(0u, ");                 /* gate ? unpacked : alternative */
  want(src, "u32((");                       /* the bool stored as a byte */
  tkc_free(src);
  tkc_graph_free(g);
}

/* A workgroup reduction: 4 groups of 16 invocations; each stores its element into workgroup memory,
 * waits at the barrier, and invocation 0 sums the 16 values: out[g] = sum(a[g*16 .. g*16+15]). */
static tkc_uop *workgroup_sum(tkc_graph *g) {
  tkc_uop *out = k_buf(g, 0, TKC_FLOAT32), *a = k_buf(g, 1, TKC_FLOAT32);
  tkc_uop *gid = k_special(g, "gidx0", 4), *lid = k_special(g, "lidx0", 16);
  tkc_uop *tmp = tkc_uop_new(g, TKC_OP_DEFINE_LOCAL, tkc_dt_ptr(dt_(TKC_FLOAT32), TKC_SPACE_LOCAL, 16), 0, NULL, tkc_arg_str("temp0"));
  tkc_uop *st = k_store(g, tmp, lid, k_load(g, a, k_add(g, k_mul(g, gid, k_int(g, 16)), lid)));
  tkc_uop *bar = tkc_uop_new(g, TKC_OP_BARRIER, dt_(TKC_VOID), 1, &st, tkc_arg_none());
  tkc_uop *rk = k_range(g, 16, 1);
  tkc_uop *ld = k_op(g, TKC_OP_LOAD, dt_(TKC_FLOAT32), 2, k_index(g, tmp, rk), bar, NULL);
  tkc_uop *acc = k_op(g, TKC_OP_DEFINE_ACC, dt_(TKC_FLOAT32), 2, tkc_uop_const_float(g, dt_(TKC_FLOAT32), 0), rk, NULL);
  tkc_uop *upd = k_op(g, TKC_OP_ASSIGN, dt_(TKC_FLOAT32), 2, acc, k_add(g, acc, ld), NULL);
  tkc_uop *first = tkc_uop_alu2(g, TKC_OP_CMPNE, lid, k_int(g, 0));
  first = tkc_uop_alu2(g, TKC_OP_CMPNE, first, tkc_uop_const_int(g, dt_(TKC_BOOL), 1)); /* lid == 0 */
  return k_sink1(g, k_store_gated(g, out, gid, first, upd));
}

static void test_golden_workgroup_barrier(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  char *src = render_wgsl(g, workgroup_sum(g), "wgsum");
  assert_non_null(src);
  want(src, "var<workgroup> temp0: array<f32, 16>;");
  want(src, "@compute @workgroup_size(16, 1, 1)");
  want(src, "i32(gindex.x)");
  want(src, "i32(lindex.x)");
  want_order(src, "temp0[", "workgroupBarrier();"); /* the store, then the barrier, then the reads */
  want_order(src, "workgroupBarrier();", "acc0 = ");
  want(src, "for (var ridx0: i32 = 0i; ridx0 < 16i; ridx0++) {");
  want_not(src, "atomic"); /* float32: nothing packed */
  tkc_free(src);
  tkc_graph_free(g);
}

static void test_golden_specials(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *out = k_buf(g, 0, TKC_FLOAT16), *a = k_buf(g, 1, TKC_FLOAT16);
  tkc_uop *i = k_add(g, k_mul(g, k_special(g, "gidx1", 3), k_int(g, 4)), k_special(g, "lidx1", 4));
  tkc_uop *j = k_add(g, k_mul(g, k_special(g, "gidx0", 5), k_int(g, 8)), k_special(g, "lidx0", 8));
  tkc_uop *idx = k_add(g, k_mul(g, i, k_int(g, 40)), j);
  tkc_uop *v = k_mul(g, k_load(g, a, idx), tkc_uop_const_float(g, dt_(TKC_FLOAT16), 0.5));
  char *src = render_wgsl(g, k_sink1(g, k_store(g, out, idx, v)), "twod");
  assert_non_null(src);
  want_order(src, "enable f16;", "@group(0)");
  want(src, "array<f16>;");
  want(src, "@compute @workgroup_size(8, 4, 1)");
  want(src, "i32(gindex.x)");
  want(src, "i32(gindex.y)");
  want(src, "i32(lindex.x)");
  want(src, "i32(lindex.y)");
  want(src, "0.5h");
  tkc_free(src);
  tkc_graph_free(g);
}

/* variables, NaN/inf constants, the NaN test, casts, bfloat16 */
static void test_golden_values(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *n = tkc_uop_var(g, "n", 1, 100), *m = tkc_uop_var(g, "m", 0, 100);
  tkc_uop *o0 = k_buf(g, 0, TKC_BOOL), *o1 = k_buf(g, 1, TKC_INT32), *o2 = k_buf(g, 2, TKC_BFLOAT16), *a = k_buf(g, 3, TKC_FLOAT32);
  tkc_uop *r = k_range_to(g, n, 0), *x = k_load(g, a, k_add(g, r, m));
  tkc_uop *isnan_x = tkc_uop_alu2(g, TKC_OP_CMPNE, x, x);
  tkc_uop *y = tkc_uop_alu3(g, TKC_OP_WHERE, isnan_x, tkc_uop_const_float(g, dt_(TKC_FLOAT32), INFINITY), x);
  tkc_uop *st[3] = {k_store(g, o0, r, isnan_x), k_store(g, o1, r, tkc_uop_cast(g, y, dt_(TKC_INT32))),
                    k_store(g, o2, r, k_add(g, tkc_uop_cast(g, x, dt_(TKC_BFLOAT16)), tkc_uop_const_float(g, dt_(TKC_BFLOAT16), NAN)))};
  char *src = render_wgsl(g, tkc_uop_sink(g, 3, st), "values");
  assert_non_null(src);
  want(src, "struct Vars { v0: i32, v1: i32, }");
  want(src, "@group(0) @binding(4) var<uniform> vars: Vars; /* v0 = m v1 = n */"); /* sorted by name */
  want(src, "ridx0 < vars.v1;");
  want(src, "fn tkc_isnan(a: f32) -> bool { return min(a, 1.0f) == 1.0f && max(a, -1.0f) == -1.0f; }");
  want(src, "tkc_isnan(val0)");
  want_not(src, "val0 != val0");
  want(src, "fn tkc_inf() -> f32 { let bits = 0x7f800000u; return bitcast<f32>(bits); }");
  want(src, "fn tkc_nan() -> f32 { let bits = 0x7fc00000u; return bitcast<f32>(bits); }");
  want(src, "tkc_f2i(");                  /* saturating float -> int32 */
  want(src, "(-2147483647i - 1i), 2147483647i)");
  want(src, "fn tkc_bf16(x: f32) -> f32 {");
  want(src, "tkc_bf16((tkc_bf16(val0) + tkc_nan()))");
  tkc_free(src);
  tkc_graph_free(g);
}

/* 64-bit types: TKC_EUNSUPPORTED naming the op, the dtype and the backend, never a shader */
static void test_unsupported_dtypes(void **state) {
  (void)state;
  const tkc_renderer *r = tkc_renderer_get("WGSL");
  assert_non_null(r);
  assert_string_equal(r->device, "WEBGPU");
  assert_true(r->has_local && r->has_shared);
  assert_int_equal(r->unsupported_dtypes, (1u << TKC_INT64) | (1u << TKC_UINT64) | (1u << TKC_FLOAT64));
  const tkc_dtype bad[3] = {TKC_INT64, TKC_UINT64, TKC_FLOAT64};
  for (int k = 0; k < 3; k++) {
    /* in a buffer */
    tkc_graph *g = tkc_graph_new();
    tkc_uop *out = k_buf(g, 0, bad[k]), *a = k_buf(g, 1, bad[k]), *rr = k_range(g, 4, 0);
    assert_null(render_wgsl(g, k_sink1(g, k_store(g, out, rr, k_load(g, a, rr))), "k64"));
    assert_int_equal(tkc_last_status(), TKC_EUNSUPPORTED);
    assert_non_null(strstr(tkc_last_error(), tkc_dtype_name(bad[k])));
    assert_non_null(strstr(tkc_last_error(), "WGSL"));
    assert_non_null(strstr(tkc_last_error(), "DEFINE_GLOBAL"));
    tkc_graph_free(g);
    /* only in a register: int32 -> (64-bit) -> int32 */
    g = tkc_graph_new();
    tkc_uop *o = k_buf(g, 0, TKC_FLOAT32), *b = k_buf(g, 1, TKC_INT32);
    rr = k_range(g, 4, 0);
    tkc_uop *wide = tkc_uop_cast(g, k_mul(g, tkc_uop_cast(g, k_load(g, b, rr), dt_(bad[k])), tkc_uop_cast(g, k_load(g, b, rr), dt_(bad[k]))), dt_(TKC_FLOAT32));
    assert_null(render_wgsl(g, k_sink1(g, k_store(g, o, rr, wide)), "k64"));
    assert_int_equal(tkc_last_status(), TKC_EUNSUPPORTED);
    assert_non_null(strstr(tkc_last_error(), tkc_dtype_name(bad[k])));
    tkc_graph_free(g);
  }
  /* through the device: the program is refused the same way */
  if (!tkc_device_available("WEBGPU")) return;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *out = k_buf(g, 0, TKC_INT64), *rr = k_range(g, 4, 0);
  assert_null(tkc_program_new(tkc_device_get("WEBGPU"), g, k_sink1(g, k_store(g, out, rr, tkc_uop_cast(g, rr, dt_(TKC_INT64)))), "k64"));
  assert_int_equal(tkc_last_status(), TKC_EUNSUPPORTED);
  assert_non_null(strstr(tkc_last_error(), "int64"));
  tkc_graph_free(g);
}

static void test_render_bad_input(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *out = k_buf(g, 0, TKC_FLOAT32), *r = k_range(g, 4, 0);
  tkc_uop *sink = k_sink1(g, k_store(g, out, r, tkc_uop_cast(g, r, dt_(TKC_FLOAT32))));
  /* names that are not usable WGSL identifiers, or that the shader declares itself */
  const char *bad_names[] = {"9lives", "has space", "fn", "data0", "__x", "vars", "tkc_nan", "_"};
  for (size_t i = 0; i < sizeof bad_names / sizeof *bad_names; i++) {
    assert_null(render_wgsl(g, sink, bad_names[i]));
    assert_int_equal(tkc_last_status(), TKC_EINVAL);
  }
  char *ok = render_wgsl(g, sink, "fine_name_2");
  assert_non_null(ok);
  tkc_free(ok);
  /* an idxN SPECIAL (no such builtin here), and a workgroup too large for any adapter */
  tkc_uop *i0 = k_special(g, "idx0", 8);
  assert_null(render_wgsl(g, k_sink1(g, k_store(g, out, i0, tkc_uop_cast(g, i0, dt_(TKC_FLOAT32)))), "k"));
  assert_int_equal(tkc_last_status(), TKC_EUNSUPPORTED);
  assert_non_null(strstr(tkc_last_error(), "SPECIAL"));
  tkc_uop *l0 = k_special(g, "lidx0", 4096);
  assert_null(render_wgsl(g, k_sink1(g, k_store(g, out, l0, tkc_uop_cast(g, l0, dt_(TKC_FLOAT32)))), "k"));
  assert_int_equal(tkc_last_status(), TKC_EUNSUPPORTED);
  /* vectors wider than WGSL's vec4 */
  tkc_dt f8 = tkc_dt_vec(dt_(TKC_FLOAT32), 8);
  tkc_uop *lanes[8];
  for (int k = 0; k < 8; k++) lanes[k] = tkc_uop_const_float(g, dt_(TKC_FLOAT32), k);
  tkc_uop *v8 = tkc_uop_new(g, TKC_OP_VECTORIZE, f8, 8, lanes, tkc_arg_none());
  tkc_uop *f8p = k_op(g, TKC_OP_CAST, tkc_dt_ptr(f8, TKC_SPACE_GLOBAL, -1), 1, k_index(g, out, k_mul(g, r, k_int(g, 8))), NULL, NULL);
  assert_null(render_wgsl(g, k_sink1(g, k_op(g, TKC_OP_STORE, dt_(TKC_VOID), 2, f8p, v8, NULL)), "k"));
  assert_int_equal(tkc_last_status(), TKC_EUNSUPPORTED);
  assert_non_null(strstr(tkc_last_error(), "4 lanes"));
  tkc_graph_free(g);
}

/* ---------------------------------------------------------------- GPU-style kernels on the device */

/* out[i] = f(a[i]) for i = gidx0*64 + lidx0 < n: 64 invocations per workgroup, so neighbouring
 * invocations write bytes / halves of the same word at the same time */
static tkc_uop *grid_map(tkc_graph *g, tkc_dtype dt, int n) {
  enum { L = 64 };
  tkc_uop *out = k_buf(g, 0, dt), *a = k_buf(g, 1, dt);
  tkc_uop *idx = k_add(g, k_mul(g, k_special(g, "gidx0", (n + L - 1) / L), k_int(g, L)), k_special(g, "lidx0", L));
  tkc_uop *gate = k_lt(g, idx, k_int(g, n));
  tkc_uop *x = k_load_gated(g, a, idx, gate), *v;
  if (dt == TKC_BOOL) v = tkc_uop_alu2(g, TKC_OP_CMPNE, x, tkc_uop_const_int(g, dt_(TKC_BOOL), 1));
  else if (tkc_dtype_is_float(dt)) v = k_mul(g, x, tkc_uop_const_float(g, dt_(dt), -3.0));
  else v = k_add(g, k_mul(g, x, tkc_uop_const_int(g, dt_(dt), 3)), tkc_uop_const_int(g, dt_(dt), 1));
  return k_sink1(g, k_store_gated(g, out, idx, gate, v));
}

static void test_grid_every_dtype(void **state) {
  (void)state;
  SKIP_WITHOUT_WEBGPU();
  const int n = 1001;
  const tkc_dtype dts[] = {TKC_BOOL, TKC_INT8, TKC_UINT8, TKC_INT16, TKC_UINT16, TKC_INT32, TKC_UINT32, TKC_FLOAT16, TKC_BFLOAT16, TKC_FLOAT32};
  for (size_t k = 0; k < sizeof dts / sizeof *dts; k++) {
    tkc_dtype dt = dts[k];
    size_t sz = tkc_dtype_size(dt);
    unsigned char *a = malloc(n * sz), *got = malloc(n * sz), *want_ = malloc(n * sz);
    uint64_t s = 0x9E3779B97F4A7C15ull * (k + 1);
    for (size_t i = 0; i < n * sz; i++) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      a[i] = (unsigned char)s;
    }
    if (dt == TKC_BOOL) for (int i = 0; i < n; i++) a[i] &= 1;
    if (dt == TKC_FLOAT16 || dt == TKC_BFLOAT16) /* finite values */
      for (int i = 0; i < n; i++) a[2 * i + 1] &= 0xbf;
    if (dt == TKC_FLOAT32) for (int i = 0; i < n; i++) a[4 * i + 3] &= 0xbf;
    memset(got, 0xa5, n * sz);
    memset(want_, 0xa5, n * sz);
    const char *devs[2] = {"INTERP", "WEBGPU"};
    unsigned char *outs[2] = {want_, got};
    for (int d = 0; d < 2; d++) {
      tkc_graph *g = tkc_graph_new();
      tkc_dtype bd[2] = {dt, dt};
      size_t ns[2] = {(size_t)n, (size_t)n};
      void *host[2] = {outs[d], a};
      tkc_status st = k_run(devs[d], g, grid_map(g, dt, n), 2, bd, ns, host, NULL, 0);
      if (st) fprintf(stderr, "%s %s: %s\n", devs[d], tkc_dtype_name(dt), tkc_last_error());
      assert_int_equal(st, TKC_OK);
      tkc_graph_free(g);
    }
    if (memcmp(got, want_, n * sz)) {
      for (int i = 0; i < n; i++)
        if (memcmp(got + i * sz, want_ + i * sz, sz)) {
          fprintf(stderr, "%s element %d differs from INTERP\n", tkc_dtype_name(dt), i);
          break;
        }
      fail();
    }
    free(a), free(got), free(want_);
  }
}

/* 2-D grid: a 12x40 int16 transpose with 8x4 workgroups */
static void test_grid_2d_transpose(void **state) {
  (void)state;
  SKIP_WITHOUT_WEBGPU();
  enum { R = 12, C = 40 };
  int16_t a[R * C], got[R * C], want_[R * C];
  for (int i = 0; i < R * C; i++) a[i] = (int16_t)(i * 37 - 5000);
  for (int i = 0; i < R; i++)
    for (int j = 0; j < C; j++) want_[j * R + i] = a[i * C + j];
  tkc_graph *g = tkc_graph_new();
  tkc_uop *out = k_buf(g, 0, TKC_INT16), *in = k_buf(g, 1, TKC_INT16);
  tkc_uop *i = k_add(g, k_mul(g, k_special(g, "gidx1", R / 4), k_int(g, 4)), k_special(g, "lidx1", 4));
  tkc_uop *j = k_add(g, k_mul(g, k_special(g, "gidx0", C / 8), k_int(g, 8)), k_special(g, "lidx0", 8));
  tkc_uop *sink = k_sink1(g, k_store(g, out, k_add(g, k_mul(g, j, k_int(g, R)), i), k_load(g, in, k_add(g, k_mul(g, i, k_int(g, C)), j))));
  tkc_program *p = tkc_program_new(tkc_device_get("WEBGPU"), g, sink, "transpose");
  assert_non_null(p);
  int64_t gs[3], ls[3];
  tkc_program_launch_dims(p, NULL, gs, ls);
  assert_int_equal(gs[0], C / 8);
  assert_int_equal(gs[1], R / 4);
  assert_int_equal(ls[0], 8);
  assert_int_equal(ls[1], 4);
  want(tkc_program_source(p), "@compute @workgroup_size(8, 4, 1)");
  tkc_program_free(p);
  tkc_dtype bd[2] = {TKC_INT16, TKC_INT16};
  size_t ns[2] = {R * C, R * C};
  void *host[2] = {got, a};
  assert_int_equal(k_run("WEBGPU", g, sink, 2, bd, ns, host, NULL, 0), TKC_OK);
  assert_memory_equal(got, want_, sizeof want_);
  tkc_graph_free(g);
}

/* workgroup memory + barrier, checked against a plain C reference (INTERP runs workgroup memory
 * only without local indices) */
static void test_workgroup_sum(void **state) {
  (void)state;
  SKIP_WITHOUT_WEBGPU();
  float a[64], got[4] = {0}, want_[4] = {0};
  for (int i = 0; i < 64; i++) a[i] = (float)((i * 7) % 23) - 11.0f;
  for (int i = 0; i < 64; i++) want_[i / 16] += a[i]; /* small integers: exact in any order */
  tkc_graph *g = tkc_graph_new();
  tkc_dtype bd[2] = {TKC_FLOAT32, TKC_FLOAT32};
  size_t ns[2] = {4, 64};
  void *host[2] = {got, a};
  tkc_status st = k_run("WEBGPU", g, workgroup_sum(g), 2, bd, ns, host, NULL, 0);
  if (st) fprintf(stderr, "%s\n", tkc_last_error());
  assert_int_equal(st, TKC_OK);
  assert_memory_equal(got, want_, sizeof want_);
  tkc_graph_free(g);
}

/* a variable bounds the grid: out[i] = a[i] + o for i < n (n, o passed sorted by name: n, o) */
static void test_grid_variables(void **state) {
  (void)state;
  SKIP_WITHOUT_WEBGPU();
  for (int64_t nv = 1; nv <= 100; nv += 33) {
    int32_t a[128], got[128], want_[128];
    for (int i = 0; i < 128; i++) { a[i] = i * 3 - 50; got[i] = -1; want_[i] = i < nv ? a[i] + 7 : -1; }
    tkc_graph *g = tkc_graph_new();
    tkc_uop *n = tkc_uop_var(g, "n", 1, 128), *o = tkc_uop_var(g, "o", 0, 10);
    tkc_uop *out = k_buf(g, 0, TKC_INT32), *in = k_buf(g, 1, TKC_INT32);
    tkc_uop *idx = k_add(g, k_mul(g, k_special(g, "gidx0", 4), k_int(g, 32)), k_special(g, "lidx0", 32));
    tkc_uop *gate = k_lt(g, idx, n);
    tkc_uop *sink = k_sink1(g, k_store_gated(g, out, idx, gate, k_add(g, k_load_gated(g, in, idx, gate), o)));
    int64_t vars[2] = {nv, 7};
    tkc_dtype bd[2] = {TKC_INT32, TKC_INT32};
    size_t ns[2] = {128, 128};
    void *host[2] = {got, a};
    assert_int_equal(k_run("WEBGPU", g, sink, 2, bd, ns, host, vars, 2), TKC_OK);
    assert_memory_equal(got, want_, sizeof want_);
    tkc_graph_free(g);
  }
}

/* several threads building and running kernels at once (each with its own graph and buffers) */
typedef struct thread_job {
  int seed, failures;
} thread_job;

static void *thread_main(void *arg) {
  thread_job *j = arg;
  enum { N = 300 };
  for (int it = 0; it < 4; it++) {
    int8_t a[N], got[N], want_[N];
    for (int i = 0; i < N; i++) {
      a[i] = (int8_t)(i * (j->seed + 3) + it);
      want_[i] = (int8_t)(a[i] * 3 + 1);
    }
    tkc_graph *g = tkc_graph_new();
    tkc_dtype bd[2] = {TKC_INT8, TKC_INT8};
    size_t ns[2] = {N, N};
    void *host[2] = {got, a};
    /* the kernel differs per thread and iteration (its size), so compiles happen concurrently too */
    if (!g || k_run("WEBGPU", g, grid_map(g, TKC_INT8, N - j->seed - 7 * it), 2, bd, ns, host, NULL, 0) ||
        memcmp(got, want_, (size_t)(N - j->seed - 7 * it)))
      j->failures++;
    tkc_graph_free(g);
  }
  return NULL;
}

static void test_threads(void **state) {
  (void)state;
  SKIP_WITHOUT_WEBGPU();
  enum { T = 4 };
  pthread_t th[T]; /* pthreads: ThreadSanitizer (make tsan) follows these */
  thread_job jobs[T];
  for (int t = 0; t < T; t++) {
    jobs[t] = (thread_job){t + 1, 0};
    assert_int_equal(pthread_create(&th[t], NULL, thread_main, &jobs[t]), 0);
  }
  for (int t = 0; t < T; t++) {
    assert_int_equal(pthread_join(th[t], NULL), 0);
    assert_int_equal(jobs[t].failures, 0);
  }
}

/* out[0] = sum of a[0 .. R*C) in one invocation (two nested loops; C may be a variable). An adapter
 * that cuts long loops short (llvmpipe stops a shader's loops after 65535 iterations in total) must
 * refuse the kernel; any other must compute it. */
static void long_loops(int R, int C, bool var) {
  tkc_device *d = tkc_device_get("WEBGPU");
  float *a = malloc(sizeof(float) * (size_t)R * (size_t)C), got = 0, want_ = 0;
  for (long i = 0; i < (long)R * C; i++) {
    a[i] = (float)(i % 7) - 3.0f; /* small integers: exact sums */
    want_ += a[i];
  }
  tkc_graph *g = tkc_graph_new();
  tkc_uop *out = k_buf(g, 0, TKC_FLOAT32), *in = k_buf(g, 1, TKC_FLOAT32);
  tkc_uop *cn = var ? tkc_uop_var(g, "c", 1, 100000) : k_int(g, C);
  tkc_uop *r0 = k_range(g, R, 0), *r1 = k_range_to(g, cn, 1);
  tkc_uop *acc = tkc_uop_new(g, TKC_OP_DEFINE_ACC, dt_(TKC_FLOAT32), 3, (tkc_uop *[]){tkc_uop_const_float(g, dt_(TKC_FLOAT32), 0), r0, r1}, tkc_arg_none());
  tkc_uop *upd = k_op(g, TKC_OP_ASSIGN, dt_(TKC_FLOAT32), 2, acc, k_add(g, acc, k_load(g, in, k_add(g, k_mul(g, r0, cn), r1))), NULL);
  tkc_program *p = tkc_program_new(d, g, k_sink1(g, k_store(g, out, k_int(g, 0), upd)), "long_loops");
  tkc_status st = p ? TKC_OK : tkc_last_status();
  tkc_buffer *b[2] = {tkc_buffer_new(d, TKC_FLOAT32, 1), tkc_buffer_new(d, TKC_FLOAT32, (size_t)R * C)};
  assert_non_null(b[0]);
  assert_non_null(b[1]);
  assert_int_equal(tkc_buffer_copyin(b[1], a, sizeof(float) * (size_t)R * C), TKC_OK);
  int64_t cv = C;
  if (p) st = tkc_program_launch(p, b, 2, var ? &cv : NULL, var ? 1 : 0);
  if (st) { /* refused: only for the loop limit, saying so */
    assert_int_equal(st, TKC_EUNSUPPORTED);
    assert_non_null(strstr(tkc_last_error(), "65535"));
    assert_true((long)R * C + R > 65535);
  } else {
    assert_int_equal(tkc_buffer_copyout(b[0], &got, sizeof got), TKC_OK);
    assert_true(got == want_);
  }
  tkc_buffer_free(b[0]);
  tkc_buffer_free(b[1]);
  tkc_program_free(p);
  tkc_graph_free(g);
  free(a);
}

static void test_long_loops(void **state) {
  (void)state;
  SKIP_WITHOUT_WEBGPU();
  long_loops(300, 218, false); /* 65400 + 300 iterations: too many for llvmpipe */
  long_loops(2, 30000, false); /* 60002: fine everywhere */
  long_loops(2, 40000, true);  /* checked at launch, with the variable's value */
  long_loops(2, 1000, true);
}

/* a sum from the tensor API runs across a workgroup: workgroup memory and workgroupBarrier (its
 * value on lavapipe is checked against C in test_tensor_reduce's long reductions) */
static void test_tensor_api_workgroup_sum(void **state) {
  (void)state;
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  assert_non_null(ctx);
  tkc_tensor *s = tkc_sum(tkc_full(ctx, TKC_FLOAT32, 1, (int64_t[]){1000003}, 1), 0, NULL, 0);
  char *src = tkc_kernels_source(s, "WGSL");
  assert_non_null(src);
  want(src, "var<workgroup> temp0: array<f32, 256>;");
  want(src, "@compute @workgroup_size(256, 1, 1)");
  want_order(src, "temp0[i32(lindex.x)] = ", "workgroupBarrier();");
  want(src, "if ((i32(lindex.x) < 1i)) {"); /* one invocation stores */
  tkc_free(src);
  tkc_ctx_free(ctx);
}

/* elementwise float32 from the tensor API computes on vec4<f32> values with WGSL vector operators;
 * packed element types (int8) keep per-lane accesses */
static void test_tensor_api_vectors(void **state) {
  (void)state;
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  assert_non_null(ctx);
  tkc_tensor *a = tkc_rand(ctx, TKC_FLOAT32, 2, (int64_t[]){64, 64}, 1), *b = tkc_rand(ctx, TKC_FLOAT32, 2, (int64_t[]){64, 64}, 2);
  char *src = tkc_kernels_source(tkc_add(a, b), "WGSL");
  assert_non_null(src);
  want(src, "let val0: vec4<f32> = vec4<f32>(data1[alu0], data1[alu0 + 1], data1[alu0 + 2], data1[alu0 + 3]);");
  want(src, "(val0 + val1)");
  tkc_free(src);
  tkc_tensor *c = tkc_full(ctx, TKC_INT8, 2, (int64_t[]){64, 64}, 3);
  src = tkc_kernels_source(tkc_add(tkc_contiguous(c), tkc_contiguous(c)), "WGSL");
  assert_non_null(src);
  want(src, "atomicOr(&data0[");                 /* each packed lane stored on its own */
  tkc_free(src);
  tkc_ctx_free(ctx);
}

/* ---------------------------------------------------------------- device errors */

static void test_compile_errors(void **state) {
  (void)state;
  SKIP_WITHOUT_WEBGPU();
  tkc_dtype dt = TKC_FLOAT32;
  /* an undeclared name: TKC_ECOMPILE with naga's message */
  tkc_kernel k = {.name = "broken", .nbufs = 1, .buf_dtypes = &dt,
                  .source = "@group(0) @binding(0) var<storage, read_write> data0: array<f32>;\n"
                            "@compute @workgroup_size(1) fn broken() { data0[0] = undeclared_thing; }\n"};
  void *handle = (void *)1;
  assert_int_equal(tkc_device_webgpu.compile(&k, &handle), TKC_ECOMPILE);
  assert_null(handle);
  assert_non_null(strstr(tkc_last_error(), "undeclared_thing"));
  /* a type error */
  k.source = "@group(0) @binding(0) var<storage, read_write> data0: array<f32>;\n"
             "@compute @workgroup_size(4) fn broken() { let x: i32 = 1.5f; data0[0] = f32(x); }\n";
  assert_int_equal(tkc_device_webgpu.compile(&k, &handle), TKC_ECOMPILE);
  assert_null(handle);
  assert_non_null(strstr(tkc_last_error(), "i32"));
  /* the entry point is missing */
  k.source = "@compute @workgroup_size(1) fn other() {}\n";
  assert_int_equal(tkc_device_webgpu.compile(&k, &handle), TKC_ECOMPILE);
  /* a workgroup beyond the adapter's limits fails when the pipeline is built */
  k.source = "@group(0) @binding(0) var<storage, read_write> data0: array<f32>;\n"
             "@compute @workgroup_size(1024, 1024, 1) fn broken() { data0[0] = 1.0f; }\n";
  assert_int_equal(tkc_device_webgpu.compile(&k, &handle), TKC_ECOMPILE);
  /* the device works after all of that */
  k.source = "@group(0) @binding(0) var<storage, read_write> data0: array<f32>;\n"
             "@compute @workgroup_size(1) fn fine() { data0[1] = 2.5f; }\n";
  k.name = "fine";
  assert_int_equal(tkc_device_webgpu.compile(&k, &handle), TKC_OK);
  assert_non_null(handle);
  void *buf = tkc_device_webgpu.alloc(8);
  assert_non_null(buf);
  float zero[2] = {0, 0}, out[2] = {-1, -1};
  assert_int_equal(tkc_device_webgpu.copyin(buf, zero, sizeof zero), TKC_OK);
  assert_int_equal(tkc_device_webgpu.launch(&k, handle, &buf, NULL), TKC_OK);
  assert_int_equal(tkc_device_webgpu.copyout(out, buf, sizeof out), TKC_OK);
  assert_true(out[0] == 0.0f && out[1] == 2.5f);
  tkc_device_webgpu.free(buf);
  tkc_device_webgpu.release(handle);
}

static void test_launch_errors(void **state) {
  (void)state;
  SKIP_WITHOUT_WEBGPU();
  tkc_device *d = tkc_device_get("WEBGPU");
  tkc_graph *g = tkc_graph_new();
  /* more workgroups than any adapter dispatches on one axis */
  tkc_uop *out = k_buf(g, 0, TKC_INT32), *gi = k_special(g, "gidx0", 70000);
  tkc_program *p = tkc_program_new(d, g, k_sink1(g, k_store(g, out, gi, gi)), "wide");
  assert_non_null(p);
  tkc_buffer *b = tkc_buffer_new(d, TKC_INT32, 70000);
  assert_non_null(b);
  assert_int_equal(tkc_program_launch(p, &b, 1, NULL, 0), TKC_EUNSUPPORTED);
  assert_non_null(strstr(tkc_last_error(), "workgroups"));
  tkc_program_free(p);
  tkc_buffer_free(b);
  /* a buffer larger than the adapter allows */
  assert_null(tkc_buffer_new(d, TKC_FLOAT32, (size_t)1 << 42));
  assert_int_equal(tkc_last_status(), TKC_ENOMEM);
  /* odd sizes: 3 bytes in, 3 bytes out (words are padded) */
  tkc_buffer *small = tkc_buffer_new(d, TKC_UINT8, 3), *zero = tkc_buffer_new(d, TKC_UINT8, 0);
  assert_non_null(small);
  assert_non_null(zero);
  unsigned char in3[3] = {1, 2, 3}, out3[3] = {0, 0, 0};
  assert_int_equal(tkc_buffer_copyin(small, in3, 3), TKC_OK);
  assert_int_equal(tkc_buffer_copyout(small, out3, 3), TKC_OK);
  assert_memory_equal(in3, out3, 3);
  assert_int_equal(tkc_buffer_copyin(zero, NULL, 0), TKC_OK);
  tkc_buffer_free(small);
  tkc_buffer_free(zero);
  /* the same buffer bound twice (in place: a[i] = a[i] * 2) */
  tkc_uop *o = k_buf(g, 0, TKC_FLOAT32), *a = k_buf(g, 1, TKC_FLOAT32), *r = k_range(g, 8, 0);
  p = tkc_program_new(d, g, k_sink1(g, k_store(g, o, r, k_mul(g, k_load(g, a, r), tkc_uop_const_float(g, dt_(TKC_FLOAT32), 2)))), "inplace");
  assert_non_null(p);
  tkc_buffer *x = tkc_buffer_new(d, TKC_FLOAT32, 8);
  float xv[8] = {1, 2, 3, 4, 5, 6, 7, 8}, xo[8];
  assert_int_equal(tkc_buffer_copyin(x, xv, sizeof xv), TKC_OK);
  tkc_buffer *both[2] = {x, x};
  assert_int_equal(tkc_program_launch(p, both, 2, NULL, 0), TKC_OK);
  assert_int_equal(tkc_buffer_copyout(x, xo, sizeof xo), TKC_OK);
  for (int i = 0; i < 8; i++) assert_true(xo[i] == xv[i] * 2);
  tkc_buffer_free(x);
  tkc_program_free(p);
  tkc_graph_free(g);
}

/* a library that cannot be loaded: the device is unavailable and says why (in a child process:
 * the device is set up once per process) */
static void test_missing_library(void **state) {
  (void)state;
  SKIP_WITHOUT_WEBGPU(); /* a build without the headers never loads the library */
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) skip();
  self[n] = 0;
  fflush(stdout);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    setenv("TKC_WGPU_LIB", "/nonexistent/libwgpu_native.so", 1);
    execl(self, self, "--probe-missing-library", (char *)NULL);
    _exit(99);
  }
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
}

static int probe_missing_library(void) {
  if (tkc_device_available("WEBGPU")) return 1;
  if (tkc_device_get("WEBGPU")) return 2;
  if (tkc_last_status() != TKC_EDEVICE || !strstr(tkc_last_error(), "TKC_WGPU_LIB") || !strstr(tkc_last_error(), "/nonexistent/")) return 3;
  tkc_graph *g = tkc_graph_new(); /* other devices are not affected */
  tkc_program *p = tkc_program_new(tkc_device_get("INTERP"), g, k_sink1(g, k_store(g, k_buf(g, 0, TKC_INT32), k_int(g, 0), k_int(g, 1))), "k");
  int rc = p ? 0 : 4;
  tkc_program_free(p);
  tkc_graph_free(g);
  return rc;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--probe-missing-library")) return probe_missing_library();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_golden_packed_char),    cmocka_unit_test(test_golden_packed_gated),
      cmocka_unit_test(test_golden_workgroup_barrier), cmocka_unit_test(test_golden_specials),
      cmocka_unit_test(test_golden_values),         cmocka_unit_test(test_unsupported_dtypes),
      cmocka_unit_test(test_render_bad_input),      cmocka_unit_test(test_grid_every_dtype),
      cmocka_unit_test(test_grid_2d_transpose),     cmocka_unit_test(test_workgroup_sum),
      cmocka_unit_test(test_grid_variables),        cmocka_unit_test(test_threads),
      cmocka_unit_test(test_long_loops),            cmocka_unit_test(test_tensor_api_workgroup_sum), cmocka_unit_test(test_tensor_api_vectors),
      cmocka_unit_test(test_compile_errors),        cmocka_unit_test(test_launch_errors),
      cmocka_unit_test(test_missing_library),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
