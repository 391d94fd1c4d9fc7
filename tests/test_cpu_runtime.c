/* The CPU runtime: compiler errors, temporary files, the program cache, renderers by name. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kernel_util.h"
#include "runtime/device.h"

#define SKIP_WITHOUT_CPU()                                          \
  do {                                                              \
    if (!tkc_device_available("CPU")) {                             \
      printf("skipped: no C compiler for the CPU device\n");      \
      skip();                                                       \
    }                                                               \
  } while (0)

static int count_entries(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
  closedir(d);
  return n;
}

/* source that does not compile: TKC_ECOMPILE quoting the compiler and the offending line */
static void test_compile_error(void **state) {
  (void)state;
  SKIP_WITHOUT_CPU();
  tkc_kernel k = {.name = "broken", .source = "void broken(float* restrict data0, const int tkc_core_, const int tkc_ncores_) {\n  data0[0] = undeclared_thing;\n}\n", .nbufs = 1};
  tkc_dtype dt = TKC_FLOAT32;
  k.buf_dtypes = &dt;
  void *handle = NULL;
  tkc_status st = tkc_device_cpu.compile(&k, &handle);
  assert_int_equal(st, TKC_ECOMPILE);
  assert_null(handle);
  assert_non_null(strstr(tkc_last_error(), "undeclared_thing"));
  assert_non_null(strstr(tkc_last_error(), "line 2"));
}

/* compiling leaves nothing behind in $TMPDIR, and the compiler's chatter never reaches stdout */
static void test_temp_files_removed(void **state) {
  (void)state;
  SKIP_WITHOUT_CPU();
  char dir[] = "/tmp/tkc-test-XXXXXX";
  assert_non_null(mkdtemp(dir));
  const char *old = getenv("TMPDIR");
  char *saved = old ? strdup(old) : NULL;
  setenv("TMPDIR", dir, 1);
  tkc_kernel ok = {.name = "fine", .source = "void fine(float* restrict data0, const int tkc_core_, const int tkc_ncores_) { data0[0] = 1.0f; }\n", .nbufs = 1};
  tkc_kernel bad = {.name = "bad", .source = "void bad(float* restrict data0, const int tkc_core_, const int tkc_ncores_) { syntax error }\n", .nbufs = 1};
  tkc_dtype dt = TKC_FLOAT32;
  ok.buf_dtypes = bad.buf_dtypes = &dt;
  void *h = NULL;
  assert_int_equal(tkc_device_cpu.compile(&ok, &h), TKC_OK);
  assert_non_null(h);
  float x = 0;
  void *bufs[1] = {&x};
  assert_int_equal(tkc_device_cpu.launch(&ok, h, bufs, NULL), TKC_OK);
  assert_true(x == 1.0f);
  tkc_device_cpu.release(h);
  void *h2 = NULL;
  assert_int_equal(tkc_device_cpu.compile(&bad, &h2), TKC_ECOMPILE);
  assert_int_equal(count_entries(dir), 0);
  if (saved) setenv("TMPDIR", saved, 1);
  else unsetenv("TMPDIR");
  free(saved);
  rmdir(dir);
}

static tkc_uop *scale_kernel(tkc_graph *g, double factor) {
  tkc_uop *out = k_buf(g, 0, TKC_FLOAT32), *in = k_buf(g, 1, TKC_FLOAT32), *r = k_range(g, 8, 0);
  return k_sink1(g, k_store(g, out, r, k_mul(g, k_load(g, in, r), tkc_uop_const_float(g, dt_(TKC_FLOAT32), factor))));
}

/* the same kernel twice compiles once; a different kernel is a new entry; entries outlive programs */
static void test_program_cache(void **state) {
  (void)state;
  SKIP_WITHOUT_CPU();
  tkc_device *d = tkc_device_get("CPU");
  tkc_graph *g = tkc_graph_new();
  size_t before = tkc_program_cache_entries();
  tkc_program *p1 = tkc_program_new(d, g, scale_kernel(g, 3.0), "cache_probe");
  tkc_program *p2 = tkc_program_new(d, g, scale_kernel(g, 3.0), "cache_probe");
  assert_non_null(p1);
  assert_non_null(p2);
  assert_int_equal(tkc_program_cache_entries(), before + 1);
  assert_string_equal(tkc_program_source(p1), tkc_program_source(p2));
  tkc_program *p3 = tkc_program_new(d, g, scale_kernel(g, 4.0), "cache_probe");
  assert_non_null(p3);
  assert_int_equal(tkc_program_cache_entries(), before + 2);
  tkc_program_free(p1);
  tkc_program_free(p2);
  tkc_program_free(p3);
  assert_int_equal(tkc_program_cache_entries(), before + 2);
  /* a cached program still runs correctly */
  tkc_program *p4 = tkc_program_new(d, g, scale_kernel(g, 3.0), "cache_probe");
  assert_int_equal(tkc_program_cache_entries(), before + 2);
  float in[8], out[8];
  for (int i = 0; i < 8; i++) in[i] = (float)i;
  tkc_buffer *b[2] = {tkc_buffer_new(d, TKC_FLOAT32, 8), tkc_buffer_new(d, TKC_FLOAT32, 8)};
  assert_int_equal(tkc_buffer_copyin(b[1], in, sizeof in), TKC_OK);
  assert_int_equal(tkc_program_launch(p4, b, 2, NULL, 0), TKC_OK);
  assert_int_equal(tkc_buffer_copyout(b[0], out, sizeof out), TKC_OK);
  for (int i = 0; i < 8; i++) assert_true(out[i] == in[i] * 3.0f);
  tkc_buffer_free(b[0]);
  tkc_buffer_free(b[1]);
  tkc_program_free(p4);
  tkc_graph_free(g);
}

/* a kernel the C renderer cannot express fails with TKC_EUNSUPPORTED naming the op */
static void test_unsupported_op(void **state) {
  (void)state;
  SKIP_WITHOUT_CPU();
  tkc_graph *g = tkc_graph_new();
  tkc_uop *out = k_buf(g, 0, TKC_INT32);
  tkc_uop *gid = tkc_uop_special(g, "gidx0", 16);
  tkc_uop *sink = k_sink1(g, k_store(g, out, gid, gid));
  assert_null(tkc_program_new(tkc_device_get("CPU"), g, sink, "special"));
  assert_int_equal(tkc_last_status(), TKC_EUNSUPPORTED);
  assert_non_null(strstr(tkc_last_error(), "SPECIAL"));
  tkc_graph_free(g);
}

static void test_renderer_registry(void **state) {
  (void)state;
  const tkc_renderer *c = tkc_renderer_get("C");
  assert_non_null(c);
  assert_string_equal(c->name, "C");
  assert_non_null(tkc_renderer_get("PTX"));
  assert_null(tkc_renderer_get("COBOL"));
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  assert_null(tkc_renderer_get(NULL));
  assert_null(tkc_render(NULL, "k", NULL, 0));
  assert_null(tkc_render(c, "k", NULL, 0));
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  if (!tkc_device_available("CUDA")) { /* no GPU here: says why */
    assert_null(tkc_device_get("CUDA"));
    assert_int_equal(tkc_last_status(), TKC_EDEVICE);
  }
  assert_string_equal(tkc_device_name(tkc_device_get("INTERP")), "INTERP");
  assert_null(tkc_device_renderer(tkc_device_get("INTERP")));
  const char *const *names = tkc_device_names();
  int n = 0;
  while (names[n]) n++;
  assert_true(n >= 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_compile_error), cmocka_unit_test(test_temp_files_removed), cmocka_unit_test(test_program_cache),
      cmocka_unit_test(test_unsupported_op), cmocka_unit_test(test_renderer_registry),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
