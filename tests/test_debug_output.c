/* TKC_DEBUG output and the schedule's dot files.
 *
 * TKC_DEBUG is read once per process, so each level is checked in a child: this test runs itself
 * ("--child SCENARIO DEVICE") with TKC_DEBUG set, its stderr in a file the parent reads:
 *   DEBUG=2  one "***" line per launch, numbered 1, 2, 3 ..., with unique kernel names: softmax's two
 *            reductions are both r_2_4 (TKC_NOOPT=1), the second is printed as r_2_4n1
 *   DEBUG=4  a kernel launched 3 times prints its source once (the output without the launch and
 *            build lines, which hold times, is the same as for 1 launch)
 *   DEBUG=5  the linearized UOps once per kernel built
 *   DEBUG=0  nothing at all
 * In process: tkc_schedule_dot writes a digraph with one box per kernel (tkc_kernel_count of them),
 * tkc_kernel_uops_dot one kernel's UOp graph; both refuse NULL, a bad index and an unwritable path. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tkc.h"

extern char **environ;
static const char *self_path;
static char work[256]; /* this test's scratch folder */

/* a host device that renders source (CPU or LLVM), else INTERP (no source to print) */
static const char *source_device(void) {
  if (tkc_device_available("LLVM")) return "LLVM";
  if (tkc_device_available("CPU")) return "CPU";
  return "INTERP";
}

/* ---------------------------------------------------------------- the child */

/* "softmax": softmax of a realized (2,4) tensor (3 kernels: max, sum of exp, divide);
 * "repeat1" / "repeat3": exp(x) * 2 of a new (8,) tensor, realized 1 or 3 times */
static int child_main(const char *scenario, const char *dev) {
  tkc_ctx *ctx = tkc_ctx_new(dev);
  if (!ctx) return 2;
  int ok = 1;
  if (!strcmp(scenario, "softmax")) {
    const float a[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    float out[8];
    tkc_tensor *t = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){2, 4}, a);
    ok = tkc_copy_out(tkc_softmax(t, -1), out, sizeof out) == TKC_OK;
  } else {
    int n = !strcmp(scenario, "repeat3") ? 3 : 1;
    for (int i = 0; ok && i < n; i++) {
      float a[8], out[8];
      for (int j = 0; j < 8; j++) a[j] = (float)(i + j) / 8;
      tkc_tensor *t = tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){8}, a);
      ok = tkc_copy_out(tkc_mul(tkc_exp(t), tkc_scalar(ctx, TKC_FLOAT32, 2)), out, sizeof out) == TKC_OK;
    }
  }
  tkc_ctx_free(ctx);
  return ok ? 0 : 3;
}

/* ---------------------------------------------------------------- the parent */

/* the whole file as a string (NULL when it cannot be read) */
static char *read_file(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  struct stat sb;
  fstat(fileno(f), &sb);
  char *text = calloc(1, (size_t)sb.st_size + 1);
  if (text && fread(text, 1, (size_t)sb.st_size, f) != (size_t)sb.st_size) {
    free(text);
    text = NULL;
  }
  fclose(f);
  return text;
}

/* runs the child with TKC_DEBUG=level (kernel caches off, no opts, no beam); its stderr,
 * malloc'ed (NULL when it failed) */
static char *run_child(const char *scenario, const char *dev, int level) {
  static int tag;
  char err[300], debug_env[32];
  snprintf(err, sizeof err, "%s/err%d", work, tag++);
  snprintf(debug_env, sizeof debug_env, "TKC_DEBUG=%d", level);
  char *env[260];
  int ne = 0;
  for (char **e = environ; *e && ne < 250; e++)
    if (strncmp(*e, "TKC_", 4)) env[ne++] = *e;
  env[ne++] = debug_env;
  env[ne++] = (char *)"TKC_CACHE_DIR=";
  env[ne++] = (char *)"TKC_NOOPT=1";
  env[ne++] = (char *)"TKC_BEAM=0";
  env[ne] = NULL;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  char *argv[] = {(char *)self_path, (char *)"--child", (char *)scenario, (char *)dev, NULL};
  pid_t pid;
  int rc = posix_spawn(&pid, self_path, &fa, NULL, argv, env);
  posix_spawn_file_actions_destroy(&fa);
  int st;
  if (rc || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    print_error("child %s on %s (TKC_DEBUG=%d) failed\n", scenario, dev, level);
    return NULL;
  }
  return read_file(err);
}

/* the launch lines ("*** DEVICE NUM NAME ...") of text: their numbers and names */
static int launches(const char *text, int *num, char (*name)[128], int max) {
  int n = 0;
  for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
    char dev[32];
    if (strncmp(l, "*** ", 4)) continue;
    if (n < max && sscanf(l, "*** %31s %d %127s", dev, &num[n], name[n]) == 3) n++;
    else return -1;
  }
  return n;
}

/* text without its launch lines and build lines, which hold times (malloc'ed) */
static char *without_launches(const char *text) {
  char *out = calloc(1, strlen(text) + 1);
  size_t k = 0;
  for (const char *l = text; out && *l;) {
    const char *nl = strchr(l, '\n');
    size_t len = nl ? (size_t)(nl - l) + 1 : strlen(l);
    if (strncmp(l, "*** ", 4) && strncmp(l, "tkc: built ", 11)) {
      memcpy(out + k, l, len);
      k += len;
    }
    l += len;
  }
  return out;
}

static size_t count(const char *text, const char *what) {
  size_t n = 0;
  for (const char *p = strstr(text, what); p; p = strstr(p + 1, what)) n++;
  return n;
}

static void test_debug2_launch_lines(void **state) {
  (void)state;
  const char *devs[] = {source_device(), "INTERP"};
  for (int d = 0; d < 2; d++) {
    char *text = run_child("softmax", devs[d], 2);
    assert_non_null(text);
    int num[16];
    char name[16][128];
    int n = launches(text, num, name, 16);
    if (n != 3) print_error("%s: TKC_DEBUG=2 printed:\n%s", devs[d], text);
    assert_int_equal(n, 3); /* max, sum of exp, divide */
    int base_and_n1 = 0;
    for (int i = 0; i < n; i++) {
      assert_int_equal(num[i], i + 1);
      for (int j = 0; j < n; j++) {
        if (i != j) assert_string_not_equal(name[i], name[j]);
        size_t li = strlen(name[i]);
        if (i != j && !strncmp(name[i], name[j], li) && !strcmp(name[j] + li, "n1")) base_and_n1 = 1;
      }
    }
    assert_true(base_and_n1); /* r_2_4 and r_2_4n1 */
    assert_non_null(strstr(text, "r_2_4n1"));
    /* each line has the device, the time so far, GFLOPS, GB/s and the memory in use */
    const char *l = strstr(text, "*** ");
    assert_non_null(strstr(l, devs[d]));
    assert_non_null(strstr(l, "GFLOPS"));
    assert_non_null(strstr(l, "GB/s"));
    assert_non_null(strstr(l, " mem "));
    assert_non_null(strstr(l, "ms ("));
    free(text);
  }
}

static void test_debug4_source_once(void **state) {
  (void)state;
  const char *dev = source_device();
  if (!strcmp(dev, "INTERP")) {
    print_message("  skipped: no device that renders source (CPU, LLVM) here\n");
    skip();
  }
  char *one = run_child("repeat1", dev, 4), *three = run_child("repeat3", dev, 4);
  assert_non_null(one);
  assert_non_null(three);
  int num[8];
  char name[8][128];
  assert_int_equal(launches(one, num, name, 8), 1);
  assert_int_equal(launches(three, num, name, 8), 3);
  char *rest1 = without_launches(one), *rest3 = without_launches(three);
  assert_non_null(rest1);
  assert_non_null(rest3);
  assert_non_null(strstr(rest1, name[0])); /* the source (it names the kernel) */
  assert_true(strlen(rest1) > 100);
  assert_string_equal(rest1, rest3); /* printed once for 3 launches */
  assert_int_equal(count(three, "tkc: built"), 1);
  free(rest1);
  free(rest3);
  free(one);
  free(three);
}

static void test_debug5_uops(void **state) {
  (void)state;
  char *text = run_child("repeat3", source_device(), 5);
  assert_non_null(text);
  assert_int_equal(count(text, ": uops ("), 1); /* once per kernel built */
  assert_non_null(strstr(text, "DEFINE_GLOBAL"));
  assert_non_null(strstr(text, "STORE"));
  free(text);
}

static void test_debug3_opts(void **state) {
  (void)state;
  char *text = run_child("softmax", source_device(), 3);
  assert_non_null(text);
  assert_int_equal(count(text, " opts "), 3);
  assert_non_null(strstr(text, "tkc: r_2_4n1 opts none"));
  free(text);
}

static void test_debug0_silent(void **state) {
  (void)state;
  const char *devs[] = {source_device(), "INTERP"};
  for (int d = 0; d < 2; d++) {
    char *text = run_child("softmax", devs[d], 0);
    assert_non_null(text);
    assert_string_equal(text, "");
    free(text);
  }
}

/* ---------------------------------------------------------------- dot files */


static void test_schedule_dot(void **state) {
  (void)state;
  const char *devs[] = {source_device(), "INTERP"};
  for (int d = 0; d < 2; d++) {
    tkc_ctx *ctx = tkc_ctx_new(devs[d]);
    assert_non_null(ctx);
    tkc_tensor *a = tkc_rand(ctx, TKC_FLOAT32, 2, (const int64_t[]){4, 8}, 1), *w = tkc_rand(ctx, TKC_FLOAT32, 2, (const int64_t[]){8, 16}, 2);
    tkc_tensor *y = tkc_softmax(tkc_matmul(a, w), -1);
    assert_non_null(y);
    int nk = tkc_kernel_count(y);
    assert_true(nk >= 2);
    char path[400];
    snprintf(path, sizeof path, "%s/schedule.dot", work);
    assert_int_equal(tkc_schedule_dot(y, path), TKC_OK);
    char *text = read_file(path);
    assert_non_null(text);
    assert_true(!strncmp(text, "digraph ", 8));
    assert_int_equal(text[strlen(text) - 2], '}');
    assert_int_equal((int)count(text, "[shape=box"), nk);
    assert_int_equal((int)count(text, "[shape=ellipse"), 2 + nk); /* a, w and each kernel's output */
    assert_true(count(text, "reads") >= 2);
    assert_int_equal((int)count(text, "writes"), nk);
    assert_non_null(strstr(text, "float32 (4,8)"));
    free(text);
    assert_int_equal(tkc_kernel_count(y), nk); /* nothing ran */

    snprintf(path, sizeof path, "%s/kernel.dot", work);
    for (int k = 0; k < nk; k++) {
      assert_int_equal(tkc_kernel_uops_dot(y, k, path), TKC_OK);
      text = read_file(path);
      assert_non_null(text);
      assert_true(!strncmp(text, "digraph ", 8));
      assert_non_null(strstr(text, "SINK"));
      assert_non_null(strstr(text, "STORE"));
      assert_non_null(strstr(text, "DEFINE_GLOBAL"));
      assert_non_null(strstr(text, " -> "));
      free(text);
    }
    /* errors */
    tkc_clear_error();
    assert_int_equal(tkc_schedule_dot(NULL, path), TKC_EINVAL);
    assert_int_equal(tkc_schedule_dot(y, NULL), TKC_EINVAL);
    assert_int_equal(tkc_kernel_uops_dot(NULL, 0, path), TKC_EINVAL);
    assert_int_equal(tkc_kernel_uops_dot(y, 0, NULL), TKC_EINVAL);
    assert_int_equal(tkc_kernel_uops_dot(y, nk, path), TKC_EINVAL);
    assert_non_null(strstr(tkc_last_error(), "out of range"));
    assert_int_equal(tkc_kernel_uops_dot(y, -1, path), TKC_EINVAL);
    assert_int_equal(tkc_schedule_dot(y, "/nonexistent-tkc-dir/schedule.dot"), TKC_ERUNTIME);
    assert_non_null(strstr(tkc_last_error(), "/nonexistent-tkc-dir/schedule.dot"));
    assert_int_equal(tkc_kernel_uops_dot(y, 0, "/nonexistent-tkc-dir/k.dot"), TKC_ERUNTIME);
    /* the ctx still works; a realized tensor has no kernels */
    assert_int_equal(tkc_realize(y), TKC_OK);
    snprintf(path, sizeof path, "%s/realized.dot", work);
    assert_int_equal(tkc_schedule_dot(y, path), TKC_OK);
    text = read_file(path);
    assert_non_null(text);
    assert_int_equal((int)count(text, "[shape=box"), 0);
    free(text);
    assert_int_equal(tkc_kernel_uops_dot(y, 0, path), TKC_EINVAL);
    tkc_tensor_free(y);
    assert_int_equal(tkc_schedule_dot(y, path), TKC_EINVAL); /* freed */
    tkc_ctx_free(ctx);
  }
}

int main(int argc, char **argv) {
  if (argc == 4 && !strcmp(argv[1], "--child")) return child_main(argv[2], argv[3]);
  self_path = argv[0];
  const char *tmp = getenv("TMPDIR");
  snprintf(work, sizeof work, "%s/tkc-test-debug-XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
  if (!mkdtemp(work)) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_debug2_launch_lines), cmocka_unit_test(test_debug4_source_once), cmocka_unit_test(test_debug5_uops),
      cmocka_unit_test(test_debug3_opts),         cmocka_unit_test(test_debug0_silent),      cmocka_unit_test(test_schedule_dot),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", work);
  if (system(cmd)) rc = rc ? rc : 1;
  return rc;
}
