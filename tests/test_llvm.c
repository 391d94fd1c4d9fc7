/* The LLVM backend: the IR the renderer writes for typical kernels (key instructions and structure,
 * not whole files), the JIT device's errors (IR that does not parse or verify, missing or
 * unresolvable symbols, unknown device names, a build without LLVM), programs of the same name,
 * compiles from several threads, the half conversions it defines, and zero-trip loops. The edge
 * values where LLVM IR's own semantics differ from tkc's (division by zero, wide shifts, saturating
 * casts, bool arithmetic, bfloat16 overflow, NaN in MAX/compares, bfloat16 vectors) are rows of
 * tests/test_backend_ops.c's ALU table, checked there on every device against INTERP.
 * Renderer checks run in every build; device checks are skipped where the LLVM device is unavailable. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <pthread.h>
#include "codegen/codegen.h"
#include "golden.h"
#include "kernel_util.h"
#include "runtime/device.h"

#define SKIP_WITHOUT_LLVM()                                                   \
  do {                                                                        \
    if (!tkc_device_available("LLVM")) {                                      \
      tkc_device_get("LLVM");                                                 \
      printf("skipped: LLVM device unavailable: %s\n", tkc_last_error());    \
      skip();                                                                 \
    }                                                                         \
  } while (0)

/* ---------------------------------------------------------------- rendering without the device */

/* the LLVM of a kernel, through the same stages as tkc_program_new (malloc'ed) */
static char *render_llvm(tkc_graph *g, tkc_uop *sink, const char *name) {
  (void)g;
  return render_source("LLVM", sink, name);
}

/* out[i*4..] = a[i*4..] * 2 with float4 loads/stores; rev = lanes reversed (GEP + VECTORIZE) */
static tkc_uop *float4_kernel(tkc_graph *g) {
  tkc_dt f4 = tkc_dt_vec(dt_(TKC_FLOAT32), 4), f4p = tkc_dt_ptr(f4, TKC_SPACE_GLOBAL, -1);
  tkc_uop *out = k_buf(g, 0, TKC_FLOAT32), *rev = k_buf(g, 1, TKC_FLOAT32), *in = k_buf(g, 2, TKC_FLOAT32), *r = k_range(g, 6, 0);
  tkc_uop *base = k_mul(g, r, k_int(g, 4));
  tkc_uop *v = k_op(g, TKC_OP_LOAD, f4, 1, k_op(g, TKC_OP_CAST, f4p, 1, k_index(g, in, base), NULL, NULL), NULL, NULL);
  tkc_uop *rl[4];
  for (int l = 0; l < 4; l++) {
    tkc_arg i = tkc_arg_int(3 - l);
    rl[l] = tkc_uop_new(g, TKC_OP_GEP, dt_(TKC_FLOAT32), 1, &v, tkc_arg_tuple(&i, 1));
  }
  tkc_uop *two = tkc_uop_const_float(g, f4, 2.0);
  tkc_uop *st[2] = {k_op(g, TKC_OP_STORE, dt_(TKC_VOID), 2, k_op(g, TKC_OP_CAST, f4p, 1, k_index(g, out, base), NULL, NULL), k_mul(g, v, two), NULL),
                    k_op(g, TKC_OP_STORE, dt_(TKC_VOID), 2, k_op(g, TKC_OP_CAST, f4p, 1, k_index(g, rev, base), NULL, NULL),
                         tkc_uop_new(g, TKC_OP_VECTORIZE, f4, 4, rl, tkc_arg_none()), NULL)};
  return tkc_uop_sink(g, 2, st);
}

static void test_ir_vector_load(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  char *src = render_llvm(g, float4_kernel(g), "vec4");
  assert_non_null(src);
  want(src, "define void @vec4(ptr noalias align 32 %data0, ptr noalias align 32 %data1, ptr noalias align 32 %data2, i32 %core, i32 %ncores) #0 {");
  /* its output loop is split across cores */
  want(src, "%ridx0.go = icmp slt i32 %core.lo, %core.hi");
  want_not(src, "%core.other");
  want(src, "= load <4 x float>, ptr %idx");
  want(src, "fmul nsz <4 x float> %val0, <float 0x4000000000000000, float 0x4000000000000000, float 0x4000000000000000, float 0x4000000000000000>");
  want(src, "store <4 x float> %alu");
  want(src, "extractelement <4 x float> %val0, i32 3");
  want(src, "insertelement <4 x float> poison, float %gep0, i32 0");
  want(src, "getelementptr inbounds float, ptr %data2, i32 %alu0");
  want(src, "attributes #0 = { nounwind \"no-builtins\" \"no-trapping-math\"=\"true\" }");
  want_not(src, "float*"); /* opaque pointers only */
  tkc_free(src);
  tkc_graph_free(g);

  /* no output loop to split across cores: core 0 does it all, the others return at once */
  g = tkc_graph_new();
  src = render_llvm(g, k_sink1(g, k_store(g, k_buf(g, 0, TKC_FLOAT32), k_int(g, 0), tkc_uop_const_float(g, dt_(TKC_FLOAT32), 1.0))), "one");
  assert_non_null(src);
  want(src, "define void @one(ptr noalias align 32 %data0, i32 %core, i32 %ncores) #0 {");
  want(src, "entry:\n  %core.other = icmp ne i32 %core, 0\n  br i1 %core.other, label %not_core0, label %core0\n"
            "not_core0:\n  ret void\ncore0:\n");
  want_not(src, "%core.hi");
  tkc_free(src);
  tkc_graph_free(g);
}

/* out[i] = sum_k a[i*7+k]: one loop with an accumulator phi */
static tkc_uop *rowsum_kernel(tkc_graph *g, tkc_uop *cols) {
  tkc_uop *out = k_buf(g, 0, TKC_FLOAT32), *a = k_buf(g, 1, TKC_FLOAT32);
  tkc_uop *ri = k_range(g, 5, 0), *rk = k_range_to(g, cols, 1);
  tkc_uop *acc = k_op(g, TKC_OP_DEFINE_ACC, dt_(TKC_FLOAT32), 2, tkc_uop_const_float(g, dt_(TKC_FLOAT32), 0.0), rk, NULL);
  tkc_uop *x = k_load(g, a, k_add(g, k_mul(g, ri, cols), rk));
  tkc_uop *upd = k_op(g, TKC_OP_ASSIGN, dt_(TKC_FLOAT32), 2, acc, k_add(g, acc, x), NULL);
  return k_sink1(g, k_store(g, out, ri, upd));
}

static void test_ir_loop_acc_phi(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  char *src = render_llvm(g, rowsum_kernel(g, k_int(g, 7)), "rowsum");
  assert_non_null(src);
  /* the loop: entry -> body (index and accumulator phis) -> latch -> exit */
  want(src, "loop_entry_1:\n  br label %loop_body_1\nloop_body_1:\n  %ridx1 = phi i32 [0, %loop_entry_1], [%ridx1.next, %loop_latch_1]\n"
            "  %acc0.h1 = phi float [0x0000000000000000, %loop_entry_1], [%alu2, %loop_latch_1]\n");
  want(src, "  %alu2 = fadd nsz float %acc0.h1, %val0\n");
  want(src, "loop_latch_1:\n  %ridx1.next = add nsw i32 %ridx1, 1\n  %ridx1.cont = icmp slt i32 %ridx1.next, 7\n"
            "  br i1 %ridx1.cont, label %loop_body_1, label %loop_exit_1\nloop_exit_1:\n");
  /* the store after the reduce loop reads the last value (the loop always runs: no exit phi) */
  want_order(src, "loop_exit_1:", "store float %alu2, ptr %idx0, align 4");
  want_not(src, "%acc0.x1");
  want_not(src, "ninf");
  want_not(src, "nnan");
  want_not(src, "contract");
  want_order(src, "loop_body_0:", "loop_body_1:");
  tkc_free(src);
  tkc_graph_free(g);

  /* a loop of variable length may run zero times: a guard and an exit phi carrying the initial value */
  g = tkc_graph_new();
  src = render_llvm(g, rowsum_kernel(g, tkc_uop_var(g, "n", 0, 16)), "rowsum_n");
  assert_non_null(src);
  want(src, "define void @rowsum_n(ptr noalias align 32 %data0, ptr noalias align 32 %data1, i32 %var.n, i32 %core, i32 %ncores) #0 {");
  /* the output loop (not the reduce loop) is split across cores: [lo, hi) from i64 start/end, guarded */
  want(src, "  %core.n = sub i64 %core.e64, %core.s64\n");
  want(src, "  %core.lom = mul i64 %core.n, %core.i64\n  %core.lod = sdiv i64 %core.lom, %core.nc64\n"
            "  %core.hil = mul i64 %core.n, %core.next\n  %core.hid = sdiv i64 %core.hil, %core.nc64\n");
  want(src, "loop_entry_0:\n  %ridx0.go = icmp slt i32 %core.lo, %core.hi\n  br i1 %ridx0.go, label %loop_body_0, label %loop_exit_0\n");
  want(src, "%ridx0 = phi i32 [%core.lo, %loop_entry_0], [%ridx0.next, %loop_latch_0]");
  want(src, "%ridx0.cont = icmp slt i32 %ridx0.next, %core.hi");
  want_not(src, "%core.other");
  want(src, "%ridx1.go = icmp slt i32 0, %var.n\n  br i1 %ridx1.go, label %loop_body_1, label %loop_exit_1\n");
  want(src, "%acc0.x1 = phi float [0x0000000000000000, %loop_entry_1], [%alu2, %loop_latch_1]");
  want(src, "store float %acc0.x1, ptr");
  tkc_free(src);
  tkc_graph_free(g);
}

/* out[r] = a[r / 3] + a[r % 3] over r in [0, 12): non-negative operands divide unsigned (no sign
 * fix-up); a variable that may be negative still divides signed (LLVM, and C for the CPU device) */
static void test_ir_unsigned_division(void **state) {
  (void)state;
  for (int signed_var = 0; signed_var < 2; signed_var++) {
    tkc_graph *g = tkc_graph_new();
    tkc_uop *out = k_buf(g, 0, TKC_FLOAT32), *a = k_buf(g, 1, TKC_FLOAT32), *r = k_range(g, 12, 0);
    tkc_uop *x = signed_var ? k_add(g, r, tkc_uop_var(g, "n", -6, 6)) : r;
    tkc_uop *q = k_op(g, TKC_OP_IDIV, dt_(TKC_INT32), 2, x, k_int(g, 3), NULL), *m = k_op(g, TKC_OP_MOD, dt_(TKC_INT32), 2, x, k_int(g, 3), NULL);
    if (signed_var) /* kept in bounds: (x / 3) & 3 and (x % 3) & 3 */
      q = k_op(g, TKC_OP_AND, dt_(TKC_INT32), 2, q, k_int(g, 3), NULL), m = k_op(g, TKC_OP_AND, dt_(TKC_INT32), 2, m, k_int(g, 3), NULL);
    char *src = render_llvm(g, k_sink1(g, k_store(g, out, r, k_add(g, k_load(g, a, q), k_load(g, a, m)))), "divs");
    assert_non_null(src);
    if (signed_var) {
      want(src, "sdiv i32");
      want(src, "srem i32");
    } else {
      want(src, "udiv i32");
      want(src, "urem i32");
      want_not(src, "sdiv i32");
      want_not(src, "srem i32");
    }
    tkc_free(src);
    /* the C renderer (the CPU device) likewise, through unsigned int */
    src = render_source("C", k_sink1(g, k_store(g, out, r, k_add(g, k_load(g, a, q), k_load(g, a, m)))), "divs");
    assert_non_null(src);
    if (signed_var) want_not(src, "(unsigned)");
    else want(src, "((int)((unsigned)");
    tkc_free(src);
    tkc_graph_free(g);
  }
}

static void test_ir_bf16_and_bool_memory(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  /* out(float) = (float)a(bf16) ; flag(bool) = b(bool) & (a < 0) */
  tkc_uop *out = k_buf(g, 0, TKC_FLOAT32), *flag = k_buf(g, 1, TKC_BOOL), *a = k_buf(g, 2, TKC_BFLOAT16), *b = k_buf(g, 3, TKC_BOOL);
  tkc_uop *r = k_range(g, 8, 0), *x = k_load(g, a, r);
  tkc_uop *lt = tkc_uop_alu2(g, TKC_OP_CMPLT, x, tkc_uop_const_float(g, dt_(TKC_BFLOAT16), 0.0));
  tkc_uop *st[2] = {k_store(g, out, r, tkc_uop_cast(g, x, dt_(TKC_FLOAT32))), k_store(g, flag, r, tkc_uop_alu2(g, TKC_OP_AND, k_load(g, b, r), lt))};
  char *src = render_llvm(g, tkc_uop_sink(g, 2, st), "bf16k");
  assert_non_null(src);
  /* bf16: 16-bit load, widened and shifted into a float */
  want(src, "= load i16, ptr %idx");
  want(src, "%cast1 = zext i16 %t0 to i32\n  %alu0 = shl i32 %cast1, 16\n  %cast2 = bitcast i32 %alu0 to float\n");
  want(src, "fcmp olt float %cast2, 0x0000000000000000");
  want(src, "store float %cast2, ptr"); /* bf16 -> float32 is the value itself */
  /* bool: a byte in memory, i1 in registers */
  want(src, "= load i8, ptr %idx");
  want(src, "icmp ne i8 %t");
  want(src, "and i1 %val");
  want(src, "zext i1 %alu");
  want(src, "store i8 %t");
  tkc_free(src);
  tkc_graph_free(g);
}

/* the extra matcher's rewrites and the guarded integer ops */
static void test_ir_rewrites(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *o[5], *r = k_range(g, 4, 0);
  for (int i = 0; i < 5; i++) o[i] = k_buf(g, i, i < 2 ? TKC_FLOAT32 : i == 2 ? TKC_BOOL : TKC_INT32);
  tkc_uop *a = k_buf(g, 5, TKC_FLOAT32), *b = k_buf(g, 6, TKC_INT32);
  tkc_uop *x = k_load(g, a, r), *y = k_load(g, b, r);
  tkc_uop *st[5] = {k_store(g, o[0], r, tkc_uop_alu2(g, TKC_OP_MAX, x, tkc_uop_const_float(g, dt_(TKC_FLOAT32), 1.5))),
                    k_store(g, o[1], r, tkc_uop_alu1(g, TKC_OP_RECIP, x)),
                    k_store(g, o[2], r, tkc_uop_cast(g, x, dt_(TKC_BOOL))),
                    k_store(g, o[3], r, tkc_uop_alu2(g, TKC_OP_IDIV, y, k_load(g, o[4], r))),
                    k_store(g, o[4], r, tkc_uop_alu2(g, TKC_OP_IDIV, y, k_int(g, 3)))};
  char *src = render_llvm(g, tkc_uop_sink(g, 5, st), "rw");
  assert_non_null(src);
  want(src, "fcmp olt float %val0, 0x3FF8000000000000"); /* MAX -> compare + select */
  want(src, ", float 0x3FF8000000000000, float %val0"); /* ... select i1 %lt, 1.5, x */
  want(src, "fdiv nsz float 0x3FF0000000000000, %val0"); /* RECIP -> FDIV(1, x) */
  want(src, "fcmp une float %val0, 0x0000000000000000"); /* (bool)x -> x != 0 */
  want(src, "icmp ne i32 %val2, -1");                    /* a divisor that may be 0 or -1 is guarded */
  want(src, "sdiv i32 %val1, 3");                         /* a constant one is not */
  want_not(src, "call");
  tkc_free(src);
  tkc_graph_free(g);
}

static void test_ir_unsupported(void **state) {
  (void)state;
  tkc_graph *g = tkc_graph_new();
  tkc_uop *out = k_buf(g, 0, TKC_FLOAT32), *gid = tkc_uop_special(g, "gidx0", 16);
  char *src = render_llvm(g, k_sink1(g, k_store(g, out, gid, tkc_uop_const_float(g, dt_(TKC_FLOAT32), 1))), "sp");
  assert_null(src);
  assert_int_equal(tkc_last_status(), TKC_EUNSUPPORTED);
  assert_non_null(strstr(tkc_last_error(), "LLVM renderer"));
  assert_non_null(strstr(tkc_last_error(), "SPECIAL"));
  /* a kernel name that is no identifier */
  src = render_llvm(g, k_sink1(g, k_store(g, out, k_int(g, 0), tkc_uop_const_float(g, dt_(TKC_FLOAT32), 1))), "bad name");
  assert_null(src);
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  tkc_graph_free(g);
}

/* ---------------------------------------------------------------- the device */

static tkc_kernel raw_kernel(const char *name, const char *ir, int nbufs, tkc_dtype *dts) {
  tkc_kernel k = {.name = name, .source = ir, .nbufs = nbufs, .buf_dtypes = dts};
  return k;
}

static void test_device_names(void **state) {
  (void)state;
  int listed = 0;
  for (const char *const *n = tkc_device_names(); *n; n++) listed += !strcmp(*n, "LLVM");
  assert_int_equal(listed, 1);
  assert_null(tkc_device_get("LLVM2"));
  assert_int_equal(tkc_last_status(), TKC_EDEVICE);
  assert_int_equal(tkc_device_available("llvm"), 0); /* names are case-sensitive */
  assert_non_null(tkc_renderer_get("LLVM"));
  if (!tkc_device_available("LLVM")) { /* e.g. built without LLVM: says why, compiles nothing */
    assert_null(tkc_device_get("LLVM"));
    assert_int_equal(tkc_last_status(), TKC_EDEVICE);
    assert_non_null(strstr(tkc_last_error(), "unavailable"));
    printf("LLVM device unavailable: %s\n", tkc_last_error());
    tkc_dtype dt = TKC_FLOAT32;
    tkc_kernel k = raw_kernel("k", "define void @k(ptr %data0) {\n  ret void\n}\n", 1, &dt);
    void *h = (void *)1;
    assert_int_equal(tkc_device_llvm.compile(&k, &h), TKC_EDEVICE);
    assert_null(h);
    return;
  }
  tkc_device *d = tkc_device_get("LLVM");
  assert_non_null(d);
  assert_string_equal(tkc_device_name(d), "LLVM");
  assert_ptr_equal(tkc_device_renderer(d), tkc_renderer_get("LLVM"));
}

static void test_invalid_ir(void **state) {
  (void)state;
  SKIP_WITHOUT_LLVM();
  tkc_dtype dt = TKC_FLOAT32;
  void *h = NULL;
  /* does not parse: LLVM's parser message */
  tkc_kernel k = raw_kernel("broken", "define void @broken(ptr %data0) {\n  store float %nothing, ptr %data0\n  ret void\n}\n", 1, &dt);
  assert_int_equal(tkc_device_llvm.compile(&k, &h), TKC_ECOMPILE);
  assert_null(h);
  assert_non_null(strstr(tkc_last_error(), "does not parse"));
  assert_non_null(strstr(tkc_last_error(), "nothing")); /* "use of undefined value '%nothing'" */
  /* parses but does not verify: the verifier's message */
  k = raw_kernel("selfref", "define void @selfref(ptr %data0) {\nentry:\n  br label %b\nb:\n  %x = add i32 %x, 1\n  ret void\n}\n", 1, &dt);
  assert_int_equal(tkc_device_llvm.compile(&k, &h), TKC_ECOMPILE);
  assert_non_null(strstr(tkc_last_error(), "not valid IR"));
  assert_non_null(strstr(tkc_last_error(), "Only PHI nodes may reference their own value"));
  /* no function of the kernel's name */
  k = raw_kernel("wanted", "define void @other(ptr %data0) {\n  ret void\n}\n", 1, &dt);
  assert_int_equal(tkc_device_llvm.compile(&k, &h), TKC_ECOMPILE);
  assert_non_null(strstr(tkc_last_error(), "@wanted"));
  /* a symbol neither the module nor the process defines: the JIT lookup fails, nothing is printed */
  k = raw_kernel("ext", "declare void @tkc_test_no_such_symbol()\ndefine void @ext(ptr %data0) {\n  call void @tkc_test_no_such_symbol()\n  ret void\n}\n", 1, &dt);
  assert_int_equal(tkc_device_llvm.compile(&k, &h), TKC_ECOMPILE);
  assert_non_null(strstr(tkc_last_error(), "tkc_test_no_such_symbol"));
  assert_null(h);
  /* empty / garbage sources */
  k = raw_kernel("k", "", 1, &dt);
  assert_int_equal(tkc_device_llvm.compile(&k, &h), TKC_ECOMPILE);
  k = raw_kernel("k", "\x01\x02 not IR at all", 1, &dt);
  assert_int_equal(tkc_device_llvm.compile(&k, &h), TKC_ECOMPILE);
  assert_int_equal(tkc_device_llvm.compile(NULL, &h), TKC_EINVAL);
  assert_int_equal(tkc_device_llvm.compile(&k, NULL), TKC_EINVAL);

  /* and then a good one works */
  k = raw_kernel("fine", "define void @fine(ptr %data0, i32 %n, i32 %core, i32 %ncores) {\n  %f = sitofp i32 %n to float\n  store float %f, ptr %data0\n  ret void\n}\n", 1, &dt);
  k.nvars = 1;
  assert_int_equal(tkc_device_llvm.compile(&k, &h), TKC_OK);
  assert_non_null(h);
  float x = 0;
  void *bufs[1] = {&x};
  int64_t n = 42;
  assert_int_equal(tkc_device_llvm.launch(&k, h, bufs, &n), TKC_OK);
  assert_true(x == 42.0f);
  tkc_device_llvm.release(h);
}

/* two programs with the same name and different code live side by side; release frees them */
static void test_same_name_programs(void **state) {
  (void)state;
  SKIP_WITHOUT_LLVM();
  tkc_device *d = tkc_device_get("LLVM");
  tkc_graph *g = tkc_graph_new();
  tkc_program *p[2];
  for (int i = 0; i < 2; i++) {
    tkc_uop *out = k_buf(g, 0, TKC_FLOAT32), *r = k_range(g, 4, 0);
    p[i] = tkc_program_new(d, g, k_sink1(g, k_store(g, out, r, tkc_uop_const_float(g, dt_(TKC_FLOAT32), 10.0 + i))), "same");
    assert_non_null(p[i]);
  }
  for (int i = 0; i < 2; i++) {
    tkc_buffer *b = tkc_buffer_new(d, TKC_FLOAT32, 4);
    float got[4];
    assert_int_equal(tkc_program_launch(p[i], &b, 1, NULL, 0), TKC_OK);
    assert_int_equal(tkc_buffer_copyout(b, got, sizeof got), TKC_OK);
    for (int j = 0; j < 4; j++) assert_true(got[j] == 10.0f + (float)i);
    tkc_buffer_free(b);
  }
  tkc_program_free(p[0]);
  tkc_program_free(p[1]);
  /* compile and release many distinct kernels directly (no cache) */
  tkc_dtype dt = TKC_FLOAT32;
  for (int i = 0; i < 40; i++) {
    char ir[256];
    snprintf(ir, sizeof ir, "define void @many(ptr %%data0, i32 %%core, i32 %%ncores) {\n  store float %d.0, ptr %%data0\n  ret void\n}\n", i);
    tkc_kernel k = raw_kernel("many", ir, 1, &dt);
    void *h = NULL;
    assert_int_equal(tkc_device_llvm.compile(&k, &h), TKC_OK);
    float x = -1;
    void *bufs[1] = {&x};
    assert_int_equal(tkc_device_llvm.launch(&k, h, bufs, NULL), TKC_OK);
    assert_true(x == (float)i);
    tkc_device_llvm.release(h);
  }
  tkc_graph_free(g);
}

/* compiles from several threads at once */
static void *compile_worker(void *arg) {
  int id = (int)(intptr_t)arg, bad = 0;
  tkc_device *d = tkc_device_get("LLVM");
  for (int i = 0; i < 4 && d; i++) {
    tkc_graph *g = tkc_graph_new();
    tkc_uop *out = k_buf(g, 0, TKC_FLOAT32), *a = k_buf(g, 1, TKC_FLOAT32), *r = k_range(g, 64, 0);
    double f = id * 10 + i;
    tkc_uop *sink = k_sink1(g, k_store(g, out, r, k_add(g, k_load(g, a, r), tkc_uop_const_float(g, dt_(TKC_FLOAT32), f))));
    float in[64], res[64];
    for (int j = 0; j < 64; j++) in[j] = (float)j;
    tkc_dtype dts[2] = {TKC_FLOAT32, TKC_FLOAT32};
    size_t ns[2] = {64, 64};
    void *host[2] = {res, in};
    if (k_run("LLVM", g, sink, 2, dts, ns, host, NULL, 0) != TKC_OK) bad++;
    else
      for (int j = 0; j < 64; j++) bad += res[j] != (float)(j + f);
    tkc_graph_free(g);
  }
  return (void *)(intptr_t)bad;
}

static void test_threads(void **state) {
  (void)state;
  SKIP_WITHOUT_LLVM();
  pthread_t t[4]; /* pthreads, not C11 threads: ThreadSanitizer (make tsan) follows these */
  for (int i = 0; i < 4; i++) assert_int_equal(pthread_create(&t[i], NULL, compile_worker, (void *)(intptr_t)i), 0);
  for (int i = 0; i < 4; i++) {
    void *bad = (void *)-1;
    pthread_join(t[i], &bad);
    assert_int_equal((intptr_t)bad, 0);
  }
}

/* The half conversions the device defines where the process lacks them (src/runtime/llvm.c), compiled
 * here as internal functions of a test kernel and checked on every half and many doubles. */
extern const char tkc_llvm_half_support_ir[];

static void test_half_support_ir(void **state) {
  (void)state;
  SKIP_WITHOUT_LLVM();
  static const char wrapper[] =
      "define void @halfconv(ptr %data0, ptr %data1, ptr %data2, ptr %data3, ptr %data4, ptr %data5, i32 %n, i32 %core, i32 %ncores) {\n"
      "entry:\n  br label %loop\n"
      "loop:\n  %i = phi i32 [0, %entry], [%next, %loop]\n"
      "  %pd = getelementptr double, ptr %data3, i32 %i\n  %d = load double, ptr %pd\n"
      "  %h = call half @__truncdfhf2(double %d)\n  %hb = bitcast half %h to i16\n"
      "  %po = getelementptr i16, ptr %data0, i32 %i\n  store i16 %hb, ptr %po\n"
      "  %pf = getelementptr float, ptr %data4, i32 %i\n  %f = load float, ptr %pf\n"
      "  %h2 = call half @__truncsfhf2(float %f)\n  %hb2 = bitcast half %h2 to i16\n"
      "  %po2 = getelementptr i16, ptr %data1, i32 %i\n  store i16 %hb2, ptr %po2\n"
      "  %pi = getelementptr i16, ptr %data5, i32 %i\n  %ib = load i16, ptr %pi\n  %ih = bitcast i16 %ib to half\n"
      "  %x = call float @__extendhfsf2(half %ih)\n  %px = getelementptr float, ptr %data2, i32 %i\n  store float %x, ptr %px\n"
      "  %next = add i32 %i, 1\n  %more = icmp slt i32 %next, %n\n  br i1 %more, label %loop, label %done\n"
      "done:\n  ret void\n}\n";
  /* the support functions as internal ones of this module, so that they, not the process's, are called */
  size_t cap = strlen(tkc_llvm_half_support_ir) + sizeof wrapper + 256;
  char *ir = malloc(cap), *w = ir;
  for (const char *p = tkc_llvm_half_support_ir; *p;) {
    if (!strncmp(p, "define half", 11) || !strncmp(p, "define float", 12) || !strncmp(p, "define double", 13)) {
      w += sprintf(w, "define internal");
      p += 6;
    } else *w++ = *p++;
  }
  strcpy(w, wrapper);
  enum { N = 65536 };
  uint16_t *o16 = calloc(N, 2), *o16b = calloc(N, 2), *in16 = calloc(N, 2);
  float *of = calloc(N, 4), *inf = calloc(N, 4);
  double *ind = calloc(N, 8);
  uint64_t st = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < N; i++) {
    in16[i] = (uint16_t)i; /* every half */
    st ^= st << 13; st ^= st >> 7; st ^= st << 17;
    uint16_t h = (uint16_t)(st & 0xffff);
    double v = ref_half_value(h & 0x7bff ? h : 0x3c00);
    switch (i % 4) { /* exact halves, midpoints (ties), and values nudged off them */
    case 0: ind[i] = v; break;
    case 1: ind[i] = (v + ref_half_value((uint16_t)(((h & 0x7bff ? h : 0x3c00) + 1) & 0xffff))) / 2; break;
    case 2: ind[i] = nextafter(v, INFINITY) * (1 + ldexp(1, -12)); break;
    default: ind[i] = ldexp((double)(st >> 11), -(int)(st % 90)); break;
    }
    inf[i] = (float)ind[(i * 7) % N];
  }
  const double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 65504.0, 65519.99, 65520.0, 1e300, 5.960464477539063e-08,
                            2.980232238769531e-08, 2.9802322387695316e-08, 1e-300, 4.9e-324, 6.103515625e-05, 6.1035156e-05};
  for (size_t i = 0; i < TKC_COUNTOF(special); i++) ind[i * 4] = special[i], inf[i * 4] = (float)special[i];
  tkc_dtype dts[6] = {TKC_UINT16, TKC_UINT16, TKC_FLOAT32, TKC_FLOAT64, TKC_FLOAT32, TKC_UINT16};
  tkc_kernel k = raw_kernel("halfconv", ir, 6, dts);
  k.nvars = 1;
  void *h = NULL;
  tkc_status s = tkc_device_llvm.compile(&k, &h);
  if (s) fprintf(stderr, "%s\n", tkc_last_error());
  assert_int_equal(s, TKC_OK);
  void *bufs[6] = {o16, o16b, of, ind, inf, in16};
  int64_t n = N;
  assert_int_equal(tkc_device_llvm.launch(&k, h, bufs, &n), TKC_OK);
  tkc_device_llvm.release(h);
  int bad = 0;
  for (int i = 0; i < N && bad < 10; i++) {
    uint16_t w1 = ref_half_bits(ind[i]), w2 = ref_half_bits(inf[i]);
    double x = ref_half_value((uint16_t)i);
    bool ok1 = isnan(ind[i]) ? (o16[i] & 0x7fff) > 0x7c00 : o16[i] == w1;
    bool ok2 = isnan(inf[i]) ? (o16b[i] & 0x7fff) > 0x7c00 : o16b[i] == w2;
    bool ok3 = isnan(x) ? isnan(of[i]) : (double)of[i] == x && !signbit(of[i]) == !signbit(x);
    if (!ok1) fprintf(stderr, "__truncdfhf2(%.17g) = %#x, want %#x\n", ind[i], o16[i], w1);
    if (!ok2) fprintf(stderr, "__truncsfhf2(%.9g) = %#x, want %#x\n", (double)inf[i], o16b[i], w2);
    if (!ok3) fprintf(stderr, "__extendhfsf2(%#x) = %.9g, want %.9g\n", i, (double)of[i], x);
    bad += !ok1 + !ok2 + !ok3;
  }
  assert_int_equal(bad, 0);
  free(ir); free(o16); free(o16b); free(in16); free(of); free(inf); free(ind);
}

/* ---------------------------------------------------------------- loops that may run zero times */

/* a reduce over a loop that may run zero times (the exit phi carries the initial value) */
static void test_empty_loops(void **state) {
  (void)state;
  SKIP_WITHOUT_LLVM();
  /* out[i] = max over k < n of a[i*16+k], starting at -inf: with n = 0 the loop never runs */
  tkc_device *d = tkc_device_get("LLVM");
  for (int64_t n = 0; n <= 16; n += 8) {
    tkc_graph *g = tkc_graph_new();
    tkc_uop *nv = tkc_uop_var(g, "n", 0, 16);
    tkc_uop *o = k_buf(g, 0, TKC_FLOAT32), *a = k_buf(g, 1, TKC_FLOAT32), *ri = k_range(g, 4, 0), *rk = k_range_to(g, nv, 1);
    tkc_uop *acc = k_op(g, TKC_OP_DEFINE_ACC, dt_(TKC_FLOAT32), 2, tkc_uop_const_float(g, dt_(TKC_FLOAT32), -INFINITY), rk, NULL);
    tkc_uop *xv = k_load(g, a, k_add(g, k_mul(g, ri, k_int(g, 16)), rk));
    tkc_uop *upd = k_op(g, TKC_OP_ASSIGN, dt_(TKC_FLOAT32), 2, acc, tkc_uop_alu2(g, TKC_OP_MAX, acc, xv), NULL);
    tkc_program *p = tkc_program_new(d, g, k_sink1(g, k_store(g, o, ri, upd)), "maxn");
    assert_non_null(p);
    tkc_buffer *bo = tkc_buffer_new(d, TKC_FLOAT32, 4), *ba = tkc_buffer_new(d, TKC_FLOAT32, 64);
    float av[64], got[4];
    for (int i = 0; i < 64; i++) av[i] = (float)((i * 37) % 64) - 20.0f;
    assert_int_equal(tkc_buffer_copyin(ba, av, sizeof av), TKC_OK);
    tkc_buffer *bufs[2] = {bo, ba};
    assert_int_equal(tkc_program_launch(p, bufs, 2, &n, 1), TKC_OK);
    assert_int_equal(tkc_buffer_copyout(bo, got, sizeof got), TKC_OK);
    for (int i = 0; i < 4; i++) {
      float w = -INFINITY;
      for (int k = 0; k < n; k++) w = av[i * 16 + k] > w ? av[i * 16 + k] : w;
      assert_true(got[i] == w);
    }
    tkc_buffer_free(bo);
    tkc_buffer_free(ba);
    tkc_program_free(p);
    tkc_graph_free(g);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ir_vector_load), cmocka_unit_test(test_ir_unsigned_division),    cmocka_unit_test(test_ir_loop_acc_phi),
      cmocka_unit_test(test_ir_bf16_and_bool_memory), cmocka_unit_test(test_ir_rewrites),
      cmocka_unit_test(test_ir_unsupported),    cmocka_unit_test(test_device_names),
      cmocka_unit_test(test_invalid_ir),        cmocka_unit_test(test_same_name_programs),
      cmocka_unit_test(test_threads),           cmocka_unit_test(test_half_support_ir),
      cmocka_unit_test(test_empty_loops),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
