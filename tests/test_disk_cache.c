/* The on-disk kernel cache (src/runtime/disk_cache.c) across processes: this test runs itself as a
 * child ("--child DEVICE OUT") that realizes a small program on DEVICE with TKC_CACHE_DIR set by the
 * parent, checks its values against plain C and writes its cache counts to OUT. The parent fills,
 * damages and locks the cache between children, on every host device that compiles (CPU, LLVM):
 *   a second process hits and compiles nothing; corrupt, truncated and other-format entries are
 *   rejected and rebuilt; a missing folder is created (0700, entries 0600); a folder others may
 *   write and a path that cannot be a folder turn the cache off; two processes filling the same
 *   cache at once both succeed; TKC_CACHE_DIR= disables it; beam search picks made by one process
 *   are used by the next without a search; past TKC_CACHE_MB the least recently used entries go;
 *   a child prints nothing without TKC_DEBUG. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tkc.h"
#include "tkc/runtime.h"
#include "runtime/disk_cache.h"

extern char **environ;
static const char *self_path;
static char work[256]; /* this test's scratch folder */

/* ---------------------------------------------------------------- the child */

static void count_search(const tkc_progress *p, void *user) { *(int *)user += !strcmp(p->stage, "search"); }

static int child_main(const char *dev, const char *out, int beam) {
  enum { N = 64 };
  float x[N], y[N];
  int searches = 0;
  for (int i = 0; i < N; i++) x[i] = (float)i / N - 0.5f;
  tkc_ctx *ctx = tkc_ctx_new(dev);
  if (ctx && beam) {
    setenv("TKC_BEAM_BUDGET", "2", 1);
    tkc_ctx_set_beam(ctx, beam);
    tkc_ctx_set_progress(ctx, count_search, &searches);
  }
  tkc_tensor *t = ctx ? tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){8, 8}, x) : NULL;
  /* two kernels: exp(x*x) + its column sums broadcast back (a row's sum would be computed in the
   * kernel that reads it: schedule.c nests) */
  tkc_tensor *e = t ? tkc_exp(tkc_mul(t, t)) : NULL, *r = e ? tkc_add(e, tkc_sum(e, 1, (const int[]){0}, 1)) : NULL;
  int ok = r && tkc_copy_out(r, y, sizeof y) == TKC_OK;
  for (int j = 0; ok && j < 8; j++) {
    double s = 0;
    for (int i = 0; i < 8; i++) s += exp((double)x[i * 8 + j] * x[i * 8 + j]);
    for (int i = 0; i < 8 && ok; i++) ok = fabs(y[i * 8 + j] - (exp((double)x[i * 8 + j] * x[i * 8 + j]) + s)) < 1e-4;
  }
  tkc_disk_cache_info info;
  tkc_disk_cache_stats(&info);
  FILE *f = fopen(out, "w");
  if (!f) return 3;
  fprintf(f, "%d %lld %lld %lld %lld %lld %d %d\n", ok, (long long)info.hits, (long long)info.misses, (long long)info.stores,
          (long long)info.rejected, (long long)info.errors, info.enabled, searches);
  fclose(f);
  tkc_ctx_free(ctx);
  return 0;
}

/* past RLIMIT_FSIZE (64 bytes), with SIGXFSZ at its default: a store fails and counts as an error,
 * its temporary file removed, the process alive and its SIGXFSZ state unchanged; then (when LLVM
 * runs) a realize on LLVM, whose kernels' stores fail the same way, still gives right values.
 * Exit 0 when all that held. TKC_CACHE_DIR and TKC_DEBUG=2 come from the parent. */
static int fsize_child_main(const char *dir) {
  signal(SIGXFSZ, SIG_DFL);
  struct rlimit rl = {64, 64};
  if (setrlimit(RLIMIT_FSIZE, &rl)) return 2;
  static char data[4096];
  memset(data, 7, sizeof data);
  tkc_dcache_put("cpu", "fsize key", 9, data, sizeof data); /* alive past this line: not killed */
  tkc_disk_cache_info info;
  tkc_disk_cache_stats(&info);
  if (info.errors != 1 || info.stores != 0) return fprintf(stderr, "errors %lld, stores %lld\n", (long long)info.errors, (long long)info.stores), 1;
  char sub[400];
  snprintf(sub, sizeof sub, "%s/cpu", dir);
  DIR *d = opendir(sub);
  int left = 0;
  for (struct dirent *e; d && (e = readdir(d));) left += e->d_name[0] != '.' || !strncmp(e->d_name, ".tmp-", 5);
  if (d) closedir(d);
  if (left) return fprintf(stderr, "%d files left in %s\n", left, sub), 1;
  sigset_t mask, pend;
  sigprocmask(SIG_SETMASK, NULL, &mask);
  sigpending(&pend);
  if (sigismember(&mask, SIGXFSZ) || sigismember(&pend, SIGXFSZ)) return fprintf(stderr, "SIGXFSZ blocked or pending after the store\n"), 1;
  if (tkc_device_available("LLVM")) {
    tkc_ctx *ctx = tkc_ctx_new("LLVM");
    float x[4] = {1, 2, 3, 4}, y[4] = {0};
    tkc_tensor *t = ctx ? tkc_tensor_new(ctx, TKC_FLOAT32, 1, (const int64_t[]){4}, x) : NULL;
    tkc_tensor *r = t ? tkc_mul(t, tkc_add(t, t)) : NULL;
    if (!r || tkc_copy_out(r, y, sizeof y) != TKC_OK) return fprintf(stderr, "LLVM: %s\n", tkc_last_error()), 1;
    for (int i = 0; i < 4; i++)
      if (y[i] != 2 * x[i] * x[i]) return fprintf(stderr, "LLVM: y[%d] = %g\n", i, y[i]), 1;
    tkc_disk_cache_stats(&info);
    if (info.errors < 2 || info.stores != 0) return fprintf(stderr, "LLVM: errors %lld, stores %lld\n", (long long)info.errors, (long long)info.stores), 1;
    tkc_ctx_free(ctx);
  }
  return 0;
}

/* ---------------------------------------------------------------- the parent */

typedef struct counts {
  int ok;
  long long hits, misses, stores, rejected, errors;
  int enabled, searches;
  long stderr_bytes;
} counts;

typedef struct child {
  pid_t pid;
  char out[300], err[300];
} child;

static const char *child_cache_mb; /* TKC_CACHE_MB for the children (NULL: unset) */

/* starts a child on dev with TKC_CACHE_DIR=dir (NULL: unset; "" : empty) and TKC_DEBUG unset; with
 * beam, beam search of width 2 */
static int start_beam(child *c, const char *dev, const char *dir, int tag, int beam) {
  snprintf(c->out, sizeof c->out, "%s/out%d", work, tag);
  snprintf(c->err, sizeof c->err, "%s/err%d", work, tag);
  char cache_env[400];
  char *env[256];
  int ne = 0;
  for (char **e = environ; *e && ne < 250; e++)
    if (strncmp(*e, "TKC_CACHE_DIR=", 14) && strncmp(*e, "TKC_DEBUG=", 10) && strncmp(*e, "TKC_CACHE_MB=", 13)) env[ne++] = *e;
  char mb_env[64];
  if (child_cache_mb) {
    snprintf(mb_env, sizeof mb_env, "TKC_CACHE_MB=%s", child_cache_mb);
    env[ne++] = mb_env;
  }
  if (dir) {
    snprintf(cache_env, sizeof cache_env, "TKC_CACHE_DIR=%s", dir);
    env[ne++] = cache_env;
  }
  env[ne] = NULL;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, c->err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  char *argv[] = {(char *)self_path, (char *)"--child", (char *)dev, c->out, beam ? (char *)"beam" : NULL, NULL};
  int rc = posix_spawn(&c->pid, self_path, &fa, NULL, argv, env);
  posix_spawn_file_actions_destroy(&fa);
  return rc == 0;
}

static int start(child *c, const char *dev, const char *dir, int tag) { return start_beam(c, dev, dir, tag, 0); }

static counts finish(child *c) {
  counts r;
  memset(&r, 0, sizeof r);
  int st;
  if (waitpid(c->pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return r;
  FILE *f = fopen(c->out, "r");
  if (!f) return r;
  if (fscanf(f, "%d %lld %lld %lld %lld %lld %d %d", &r.ok, &r.hits, &r.misses, &r.stores, &r.rejected, &r.errors, &r.enabled, &r.searches) != 8)
    r.ok = 0;
  fclose(f);
  struct stat sb;
  r.stderr_bytes = stat(c->err, &sb) ? -1 : (long)sb.st_size;
  return r;
}

static counts run_child_beam(const char *dev, const char *dir, int beam) {
  static int tag;
  child c;
  counts r;
  memset(&r, 0, sizeof r);
  if (!start_beam(&c, dev, dir, tag++, beam)) return r;
  return finish(&c);
}

static counts run_child(const char *dev, const char *dir) { return run_child_beam(dev, dir, 0); }

/* calls fn on every entry file of dir/kind (not the temporary ones); returns how many */
static int each_entry(const char *dir, const char *kind, void (*fn)(const char *path)) {
  char d[400];
  if (snprintf(d, sizeof d, "%s/%s", dir, kind) >= (int)sizeof d) return 0;
  DIR *dp = opendir(d);
  int n = 0;
  struct dirent *de;
  while (dp && (de = readdir(dp))) {
    if (de->d_name[0] == '.') continue;
    char p[700];
    if (snprintf(p, sizeof p, "%s/%s", d, de->d_name) >= (int)sizeof p) continue;
    if (fn) fn(p);
    n++;
  }
  if (dp) closedir(dp);
  return n;
}

static void flip_middle_byte(const char *path) {
  FILE *f = fopen(path, "r+b");
  if (!f) return;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, n / 2, SEEK_SET);
  int c = fgetc(f);
  fseek(f, n / 2, SEEK_SET);
  fputc(c ^ 0x5a, f);
  fclose(f);
}

static void truncate_half(const char *path) {
  struct stat sb;
  if (!stat(path, &sb)) truncate(path, sb.st_size / 2);
}

static void other_format(const char *path) { /* the format version field, right after the magic */
  FILE *f = fopen(path, "r+b");
  if (!f) return;
  fseek(f, 8, SEEK_SET);
  unsigned v = 99;
  fwrite(&v, sizeof v, 1, f);
  fclose(f);
}

static int mode_of(const char *path) {
  struct stat sb;
  return stat(path, &sb) ? -1 : (int)(sb.st_mode & 0777);
}

static void check_mode(const char *path) { assert_int_equal(mode_of(path), 0600); }

static const char *const KIND[2] = {"cpu", "llvm"};
static const char *const DEV[2] = {"CPU", "LLVM"};

static void test_across_processes(void **state) {
  (void)state;
  for (int d = 0; d < 2; d++) {
    if (!tkc_device_available(DEV[d])) {
      printf("  skipped on %s: unavailable here\n", DEV[d]);
      continue;
    }
    char dir[400];
    snprintf(dir, sizeof dir, "%s/%s/a/b", work, DEV[d]); /* missing: created */
    counts c = run_child(DEV[d], dir);
    assert_true(c.ok && c.enabled);
    assert_true(c.misses >= 2 && c.stores >= 2 && c.hits == 0 && c.rejected == 0 && c.errors == 0);
    assert_int_equal(c.stderr_bytes, 0);
    assert_int_equal(mode_of(dir), 0700);
    assert_true(each_entry(dir, KIND[d], check_mode) >= 2);

    c = run_child(DEV[d], dir); /* the second process compiles nothing */
    assert_true(c.ok && c.hits >= 2 && c.misses == 0 && c.stores == 0 && c.rejected == 0);
    assert_int_equal(c.stderr_bytes, 0);

    void (*damage[3])(const char *) = {flip_middle_byte, truncate_half, other_format};
    for (int k = 0; k < 3; k++) {
      assert_true(each_entry(dir, KIND[d], damage[k]) >= 2);
      c = run_child(DEV[d], dir); /* rejected, rebuilt, stored again: right values */
      assert_true(c.ok && c.rejected >= 2 && c.stores >= 2 && c.hits <= (d == 0)); /* CPU: the compiler's identity is a hit */
      assert_int_equal(c.stderr_bytes, 0);
      c = run_child(DEV[d], dir);
      assert_true(c.ok && c.hits >= 2 && c.stores == 0 && c.rejected == 0);
    }
  }
}

static void test_unusable_folders(void **state) {
  (void)state;
  for (int d = 0; d < 2; d++) {
    if (!tkc_device_available(DEV[d])) continue;
    char dir[400];
    /* writable by others: the cache would run what anyone planted there, so it stays off */
    snprintf(dir, sizeof dir, "%s/open-%s", work, DEV[d]);
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(chmod(dir, 0777), 0);
    counts c = run_child(DEV[d], dir);
    assert_true(c.ok && c.stores == 0 && c.errors >= 1);
    assert_int_equal(c.stderr_bytes, 0);
    assert_int_equal(each_entry(dir, KIND[d], NULL), 0);
    /* a path under a regular file cannot be a folder */
    snprintf(dir, sizeof dir, "%s/file-%s", work, DEV[d]);
    FILE *f = fopen(dir, "w");
    assert_non_null(f);
    fclose(f);
    strcat(dir, "/cache");
    c = run_child(DEV[d], dir);
    assert_true(c.ok && c.stores == 0 && c.hits == 0 && c.errors >= 1);
    assert_int_equal(c.stderr_bytes, 0);
    /* TKC_CACHE_DIR= turns it off */
    c = run_child(DEV[d], "");
    assert_true(c.ok && !c.enabled && c.hits == 0 && c.stores == 0 && c.errors == 0);
  }
}

static void test_concurrent_writers(void **state) {
  (void)state;
  for (int d = 0; d < 2; d++) {
    if (!tkc_device_available(DEV[d])) continue;
    char dir[400];
    snprintf(dir, sizeof dir, "%s/race-%s", work, DEV[d]);
    for (int round = 0; round < 3; round++) { /* fresh entries each round */
      char rd[460];
      snprintf(rd, sizeof rd, "%s/%d", dir, round);
      child a, b;
      assert_true(start(&a, DEV[d], rd, 100 + round * 2));
      assert_true(start(&b, DEV[d], rd, 101 + round * 2));
      counts ca = finish(&a), cb = finish(&b);
      assert_true(ca.ok && cb.ok && ca.errors == 0 && cb.errors == 0 && ca.rejected == 0 && cb.rejected == 0);
      counts c = run_child(DEV[d], rd);
      assert_true(c.ok && c.hits >= 2 && c.stores == 0 && c.rejected == 0);
      char kd[520];
      snprintf(kd, sizeof kd, "%s/%s", rd, KIND[d]);
      DIR *dp = opendir(kd);
      struct dirent *de;
      int temps = 0;
      while (dp && (de = readdir(dp))) temps += !strncmp(de->d_name, ".tmp-", 5);
      if (dp) closedir(dp);
      assert_int_equal(temps, 0); /* no temporary file left behind */
    }
  }
}

static long long folder_bytes(const char *dir, const char *kind) {
  char d[500];
  if (snprintf(d, sizeof d, "%s/%s", dir, kind) >= (int)sizeof d) return -1;
  DIR *dp = opendir(d);
  long long total = 0;
  struct dirent *de;
  while (dp && (de = readdir(dp))) {
    char p[700];
    struct stat sb;
    if (de->d_name[0] != '.' && snprintf(p, sizeof p, "%s/%s", d, de->d_name) < (int)sizeof p && !stat(p, &sb)) total += sb.st_size;
  }
  if (dp) closedir(dp);
  return total;
}

/* the size bound: old entries go first, the cache ends within TKC_CACHE_MB, what was just stored stays */
static void test_eviction(void **state) {
  (void)state;
  for (int d = 0; d < 2; d++) {
    if (!tkc_device_available(DEV[d])) continue;
    char dir[400], kd[460], old[3][520];
    snprintf(dir, sizeof dir, "%s/evict-%s", work, DEV[d]);
    snprintf(kd, sizeof kd, "%s/%s", dir, KIND[d]);
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(mkdir(kd, 0700), 0);
    static char junk[400 * 1024];
    for (int i = 0; i < 3; i++) { /* 1.2 MB of entries last used long ago */
      snprintf(old[i], sizeof old[i], "%s/%032d", kd, i);
      FILE *f = fopen(old[i], "wb");
      assert_non_null(f);
      assert_int_equal(fwrite(junk, 1, sizeof junk, f), sizeof junk);
      fclose(f);
      struct timespec t[2] = {{1000000000 + i, 0}, {1000000000 + i, 0}};
      assert_int_equal(utimensat(AT_FDCWD, old[i], t, 0), 0);
    }
    child_cache_mb = "1";
    counts c = run_child(DEV[d], dir);
    assert_true(c.ok && c.stores >= 2);
    assert_true(folder_bytes(dir, KIND[d]) <= 1 << 20);
    assert_true(access(old[0], F_OK) != 0 && access(old[2], F_OK) == 0); /* the oldest went first, down to 90% */
    c = run_child(DEV[d], dir); /* the new entries stayed */
    assert_true(c.ok && c.hits >= 2 && c.stores == 0);
    child_cache_mb = NULL;
  }
}

/* beam picks: searched by the first process, read by the second, which neither searches nor compiles */
static void test_beam_across_processes(void **state) {
  (void)state;
  for (int d = 0; d < 2; d++) {
    if (!tkc_device_available(DEV[d])) continue;
    char dir[400];
    snprintf(dir, sizeof dir, "%s/beam-%s", work, DEV[d]);
    counts c = run_child_beam(DEV[d], dir, 2);
    assert_true(c.ok && c.searches >= 2 && c.stores >= 4 && c.errors == 0);
    assert_int_equal(c.stderr_bytes, 0);
    assert_true(each_entry(dir, "beam", check_mode) >= 2);
    c = run_child_beam(DEV[d], dir, 2);
    assert_true(c.ok && c.searches == 0 && c.stores == 0 && c.hits >= 4 && c.rejected == 0);
    assert_int_equal(c.stderr_bytes, 0);
  }
}

/* in this process a second ctx reuses the kernels already loaded: nothing is built or read again */
static void test_second_ctx(void **state) {
  (void)state;
  for (int d = 0; d < 2; d++) {
    if (!tkc_device_available(DEV[d])) continue;
    char out[300];
    snprintf(out, sizeof out, "%s/inproc-%s", work, DEV[d]);
    char dir[400];
    snprintf(dir, sizeof dir, "%s/inproc-cache-%s", work, DEV[d]);
    setenv("TKC_CACHE_DIR", dir, 1);
    assert_int_equal(child_main(DEV[d], out, 0), 0);
    tkc_disk_cache_info before, after;
    tkc_disk_cache_stats(&before);
    assert_int_equal(child_main(DEV[d], out, 0), 0);
    tkc_disk_cache_stats(&after);
    assert_int_equal(after.misses + after.hits + after.stores, before.misses + before.hits + before.stores);
    FILE *f = fopen(out, "r");
    int ok = 0;
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%d", &ok), 1);
    fclose(f);
    assert_true(ok);
  }
}

static void test_stats_bad_input(void **state) {
  (void)state;
  tkc_disk_cache_stats(NULL); /* a no-op */
  setenv("TKC_CACHE_DIR", "", 1);
  tkc_disk_cache_info i;
  tkc_disk_cache_stats(&i);
  assert_int_equal(i.enabled, 0);
  assert_string_equal(i.dir, "");
  setenv("TKC_CACHE_DIR", "/nonexistent/x", 1);
  tkc_disk_cache_stats(&i);
  assert_int_equal(i.enabled, 1);
  assert_string_equal(i.dir, "/nonexistent/x");
  assert_true(i.bound_bytes > 0);
}

/* a store past the file size limit is an error the cache counts (and names at TKC_DEBUG=2: the
 * file and "File too large"), never SIGXFSZ killing the process */
static void test_file_size_limit(void **state) {
  (void)state;
  char dir[300];
  snprintf(dir, sizeof dir, "%s/fsize", work);
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 2);
    close(fds[0]), close(fds[1]);
    setenv("TKC_CACHE_DIR", dir, 1), setenv("TKC_DEBUG", "2", 1);
    execl(self_path, self_path, "--fsize-child", dir, (char *)NULL);
    _exit(127);
  }
  assert_true(pid > 0);
  close(fds[1]);
  static char err[1 << 20];
  size_t n = 0;
  for (ssize_t got; (got = read(fds[0], err + n, sizeof err - 1 - n)) != 0;) {
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) break;
    n += (size_t)got;
    if (n == sizeof err - 1) n = 0; /* keep reading; the first note is what counts */
  }
  err[n] = 0;
  close(fds[0]);
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  if (!WIFEXITED(st) || WEXITSTATUS(st)) fprintf(stderr, "fsize child: %s %d\n%s\n", WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), err);
  assert_true(WIFEXITED(st)); /* not killed by SIGXFSZ */
  assert_int_equal(WEXITSTATUS(st), 0);
  char *note = strstr(err, "cannot store");
  assert_non_null(note);
  assert_non_null(strstr(note, dir));
  assert_non_null(strstr(note, "File too large"));
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "--fsize-child")) return fsize_child_main(argv[2]);
  if ((argc == 4 || argc == 5) && !strcmp(argv[1], "--child")) return child_main(argv[2], argv[3], argc == 5 ? 2 : 0);
  self_path = argv[0];
  const char *tmp = getenv("TMPDIR");
  snprintf(work, sizeof work, "%s/tkc-test-cache-XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
  if (!mkdtemp(work)) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_across_processes),
      cmocka_unit_test(test_unusable_folders),
      cmocka_unit_test(test_concurrent_writers),
      cmocka_unit_test(test_beam_across_processes),
      cmocka_unit_test(test_eviction),
      cmocka_unit_test(test_second_ctx),
      cmocka_unit_test(test_stats_bad_input),
      cmocka_unit_test(test_file_size_limit),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", work); /* test-side cleanup only */
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", work);
  return rc;
}
