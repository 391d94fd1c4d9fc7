/* test_cpu_compiler.c — the CPU device's compiler runs under hostile conditions (issue 16): a
 * compiler that hangs is killed after TKC_CC_TIMEOUT with its whole process group and its private
 * temp dir removed; a TMPDIR that starts with '-' (or is relative) never reaches the compiler's
 * command line; a disk that refuses the kernel source (RLIMIT_FSIZE) gives TKC_ERUNTIME, no double
 * fclose. The compiler is chosen once per process, so each case runs in a child (this binary
 * re-executed with "--child CASE") whose exit status says whether it saw the expected result. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "runtime/device.h"

static const char KERNEL_SRC[] =
    "void fine(float* restrict data0, const int tkc_core_, const int tkc_ncores_) {\n"
    "  /* some text, so the source is longer than the file size limit of the fsize case */\n"
    "  for (int i = 0; i < 4; i++) data0[i] = (float)i * 2.0f;\n"
    "}\n";

/* compiles KERNEL_SRC; returns the status, and the handle released */
static tkc_status compile_once(void) {
  tkc_dtype dt = TKC_FLOAT32;
  tkc_kernel k = {.name = "fine", .source = KERNEL_SRC, .nbufs = 1, .buf_dtypes = &dt};
  void *handle = NULL;
  tkc_status st = tkc_device_cpu.compile(&k, &handle);
  if (handle) tkc_device_cpu.release(handle);
  return st;
}

/* ---------------------------------------------------------------- the child */
static int child_main(const char *which) {
  if (!strcmp(which, "hang")) {
    tkc_status st = compile_once();
    if (st != TKC_ECOMPILE || !strstr(tkc_last_error(), "did not finish")) {
      fprintf(stderr, "hang: status %d: %s\n", st, tkc_last_error());
      return 1;
    }
    return 0;
  }
  if (!strcmp(which, "dashtmp")) { /* TMPDIR=-bogus: compiles under /tmp instead */
    tkc_status st = compile_once();
    if (st) fprintf(stderr, "dashtmp: %s\n", tkc_last_error());
    return st ? 1 : 0;
  }
  if (!strcmp(which, "fsize")) {
    if (!tkc_device_available("CPU")) return 3; /* probes the compiler before the limit applies */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {64, 64};
    if (setrlimit(RLIMIT_FSIZE, &rl)) return 2;
    tkc_status st = compile_once();
    if (st != TKC_ERUNTIME || !strstr(tkc_last_error(), "cannot write")) {
      fprintf(stderr, "fsize: status %d: %s\n", st, tkc_last_error());
      return 1;
    }
    return 0;
  }
  if (!strcmp(which, "fsize_signal") || !strcmp(which, "fsize_pending")) {
    /* SIGXFSZ at its default (ends the process) and, for fsize_pending, blocked and pending already */
    if (!tkc_device_available("CPU")) return 3;
    int pending_before = !strcmp(which, "fsize_pending");
    sigset_t x, mask, pend;
    sigemptyset(&x);
    sigaddset(&x, SIGXFSZ);
    signal(SIGXFSZ, SIG_DFL);
    if (pending_before) {
      sigprocmask(SIG_BLOCK, &x, NULL);
      raise(SIGXFSZ);
    }
    struct rlimit rl = {64, 64};
    if (setrlimit(RLIMIT_FSIZE, &rl)) return 2;
    tkc_status st = compile_once(); /* alive past this line: no SIGXFSZ killed it */
    if (st != TKC_ERUNTIME || !strstr(tkc_last_error(), "kernel.c") || !strstr(tkc_last_error(), "File too large")) {
      fprintf(stderr, "%s: status %d: %s\n", which, st, tkc_last_error());
      return 1;
    }
    /* the disposition, the mask and the pending set as they were */
    struct sigaction sa;
    sigaction(SIGXFSZ, NULL, &sa);
    sigprocmask(SIG_SETMASK, NULL, &mask);
    sigpending(&pend);
    if (sa.sa_handler != SIG_DFL || sigismember(&mask, SIGXFSZ) != pending_before || sigismember(&pend, SIGXFSZ) != pending_before) {
      fprintf(stderr, "%s: SIGXFSZ handler %s, blocked %d, pending %d\n", which, sa.sa_handler == SIG_DFL ? "default" : "changed",
              sigismember(&mask, SIGXFSZ), sigismember(&pend, SIGXFSZ));
      return 1;
    }
    if (pending_before) { /* take it, so the exit below is a normal one */
      const struct timespec zero = {0, 0};
      sigtimedwait(&x, NULL, &zero);
    }
    return 0;
  }
  if (!strcmp(which, "slowcc")) { /* killed by the parent while the compiler runs */
    compile_once();
    return 4;
  }
  if (!strcmp(which, "compile")) {
    tkc_status st = compile_once();
    if (st) fprintf(stderr, "compile: %s\n", tkc_last_error());
    return st ? 1 : 0;
  }
  return 2;
}

/* ---------------------------------------------------------------- the parent */
static char self_exe[4096];

/* runs "--child which" with the environment changes in env ("NAME=value", "NAME=" to unset);
 * returns its exit status (-1 when it did not exit normally) */
static int run_child(const char *which, const char *const *env, int nenv) {
  pid_t pid = fork();
  if (pid == 0) {
    for (int i = 0; i < nenv; i++) {
      char name[64];
      const char *eq = strchr(env[i], '=');
      snprintf(name, sizeof name, "%.*s", (int)(eq - env[i]), env[i]);
      if (eq[1]) setenv(name, eq + 1, 1);
      else unsetenv(name);
    }
    execl(self_exe, self_exe, "--child", which, (char *)NULL);
    _exit(127);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int count_entries(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
  closedir(d);
  return n;
}

static int is_zombie(int pid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) return 1; /* gone */
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  const char *close_paren = strrchr(buf, ')'); /* "pid (comm) S ..." */
  return close_paren && (close_paren[2] == 'Z' || close_paren[2] == 'X');
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* a fake compiler at work/name whose body follows a line answering --version; tmpdir and pidfile
 * are named under work (tmpdir made) */
struct fake_cc { char script[4200], tmpdir[4200], pidfile[4200]; };
static void fake_cc_write(struct fake_cc *fc, const char *work, const char *name, const char *pidname, const char *body) {
  snprintf(fc->script, sizeof fc->script, "%s/%s", work, name);
  snprintf(fc->tmpdir, sizeof fc->tmpdir, "%s/tmp", work);
  snprintf(fc->pidfile, sizeof fc->pidfile, "%s/%s", work, pidname);
  assert_int_equal(mkdir(fc->tmpdir, 0700), 0);
  FILE *f = fopen(fc->script, "w");
  assert_non_null(f);
  fprintf(f, "#!/bin/sh\ncase \"$1\" in --version) echo '%s 1.0'; exit 0;; esac\n%s", name, body);
  fclose(f);
  assert_int_equal(chmod(fc->script, 0700), 0);
}

/* whether pid is still running (not gone, not a zombie) after up to tries * 10 ms */
static int still_alive(int pid, int tries) {
  int alive = 1;
  for (int i = 0; i < tries && alive; i++) {
    alive = kill(pid, 0) == 0 && !is_zombie(pid);
    if (alive) usleep(10000);
  }
  return alive;
}

/* a "compiler" that answers --version, then leaves a file in $TMPDIR and waits on a grandchild */
static void test_hanging_compiler_is_killed(void **state) {
  (void)state;
  char work[] = "/tmp/tkc-cc-hang-XXXXXX";
  assert_non_null(mkdtemp(work));
  struct fake_cc fc;
  char body[4400];
  snprintf(body, sizeof body, "touch \"$TMPDIR/ccLEFT.s\"\nsleep 1000 & echo $! > '%s/sleep.pid'\nwait\n", work);
  fake_cc_write(&fc, work, "hangcc", "sleep.pid", body);
  char *script = fc.script, *tmpdir = fc.tmpdir, *pidfile = fc.pidfile;
  char cc[4300], tmp[4300];
  snprintf(cc, sizeof cc, "CC=%s", script);
  snprintf(tmp, sizeof tmp, "TMPDIR=%s", tmpdir);
  const char *env[] = {cc, tmp, "TKC_CC_TIMEOUT=1", "TKC_CACHE_DIR="};
  double t0 = now_s();
  assert_int_equal(run_child("hang", env, 4), 0);
  double took = now_s() - t0;
  assert_true(took < 30); /* 1 s limit, plus the start */
  /* the private temp dir (and the compiler's file in it) is gone; the grandchild was killed */
  assert_int_equal(count_entries(tmpdir), 0);
  FILE *f = fopen(pidfile, "r");
  assert_non_null(f);
  int pid = 0;
  assert_int_equal(fscanf(f, "%d", &pid), 1);
  fclose(f);
  assert_false(still_alive(pid, 200)); /* killed: a zombie until whoever adopted it reaps it */
  unlink(script), unlink(pidfile), rmdir(tmpdir), rmdir(work);
}

static void test_tmpdir_not_an_option(void **state) {
  (void)state;
  if (!tkc_device_available("CPU")) skip();
  const char *env[] = {"TMPDIR=-bogus", "TKC_CACHE_DIR="};
  assert_int_equal(run_child("dashtmp", env, 2), 0);
  const char *rel[] = {"TMPDIR=relative/dir", "TKC_CACHE_DIR="};
  assert_int_equal(run_child("dashtmp", rel, 2), 0);
}

static void test_disk_refuses_source(void **state) {
  (void)state;
  if (!tkc_device_available("CPU")) skip();
  const char *env[] = {"TKC_CACHE_DIR="};
  int rc = run_child("fsize", env, 1);
  if (rc == 3) skip();
  assert_int_equal(rc, 0);
}

/* past RLIMIT_FSIZE the kernel source write fails with a clear error: the host is not killed by
 * SIGXFSZ, and its signal disposition, mask and pending set are left as they were */
static void test_file_size_limit_no_signal(void **state) {
  (void)state;
  if (!tkc_device_available("CPU")) skip();
  const char *env[] = {"TKC_CACHE_DIR="};
  int rc = run_child("fsize_signal", env, 1);
  if (rc == 3) skip();
  assert_int_equal(rc, 0); /* -1: killed (by SIGXFSZ) */
  assert_int_equal(run_child("fsize_pending", env, 1), 0);
}

/* the compile folders in dir named tkc-<pid>-...: how many */
static int count_named(const char *dir, long pid) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  char prefix[64];
  snprintf(prefix, sizeof prefix, "tkc-%ld-", pid);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) n += !strncmp(e->d_name, prefix, strlen(prefix));
  closedir(d);
  return n;
}

/* dir/name, made with an mtime two days back */
static void make_old_dir(const char *dir, const char *name) {
  char p[4300];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  assert_int_equal(mkdir(p, 0700), 0);
  struct timespec old[2] = {{time(NULL) - 2 * 86400, 0}, {time(NULL) - 2 * 86400, 0}};
  assert_int_equal(utimensat(AT_FDCWD, p, old, 0), 0);
}

/* a host SIGKILLed mid-compile takes its compiler with it (PR_SET_PDEATHSIG); the compile folder it
 * leaves is removed by the next process's first compile, once old enough, and nothing else is */
static void test_killed_host_takes_its_compiler(void **state) {
  (void)state;
#ifndef __linux__
  skip();
#endif
  char work[] = "/tmp/tkc-cc-orphan-XXXXXX";
  assert_non_null(mkdtemp(work));
  struct fake_cc fc;
  char body[13000];
  snprintf(body, sizeof body, "echo $$ > '%s/cc.pid.part' && mv '%s/cc.pid.part' '%s/cc.pid'\nexec sleep 1000\n", work, work, work);
  fake_cc_write(&fc, work, "slowcc", "cc.pid", body);
  char *script = fc.script, *tmpdir = fc.tmpdir, *pidfile = fc.pidfile;
  FILE *f;
  pid_t host = fork();
  if (host == 0) {
    setenv("CC", script, 1), setenv("TMPDIR", tmpdir, 1), setenv("TKC_CACHE_DIR", "", 1), setenv("TKC_CC_TIMEOUT", "0", 1);
    execl(self_exe, self_exe, "--child", "slowcc", (char *)NULL);
    _exit(127);
  }
  assert_true(host > 0);
  int cc = 0;
  for (int i = 0; i < 3000 && !cc; i++) { /* the compiler started: at most 30 s */
    f = fopen(pidfile, "r");
    if (f && fscanf(f, "%d", &cc) != 1) cc = 0;
    if (f) fclose(f);
    if (!cc) usleep(10000);
  }
  int named = count_named(tmpdir, host); /* its compile folder, named after it */
  kill(host, SIGKILL); /* before any assert: a failing test leaves nothing running */
  int st;
  while (waitpid(host, &st, 0) < 0 && errno == EINTR) {}
  assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
  assert_true(cc > 0);
  int alive = still_alive(cc, 500); /* gone (or a zombie) within 5 s */
  if (alive) kill(cc, SIGKILL); /* leave nothing running, then fail */
  assert_false(alive);
  assert_int_equal(named, 1);
  /* the folder stays until a later process compiles; that one removes it once old enough, and
   * leaves a folder of a live pid and one named otherwise */
  DIR *d = opendir(tmpdir);
  assert_non_null(d);
  char left[4600] = "";
  for (struct dirent *e; (e = readdir(d));)
    if (!strncmp(e->d_name, "tkc-", 4) && strlen(tmpdir) + strlen(e->d_name) + 2 < sizeof left) snprintf(left, sizeof left, "%s/%.255s", tmpdir, e->d_name);
  closedir(d);
  assert_true(left[0]);
  struct timespec old[2] = {{time(NULL) - 2 * 86400, 0}, {time(NULL) - 2 * 86400, 0}};
  assert_int_equal(utimensat(AT_FDCWD, left, old, 0), 0);
  char live[64];
  snprintf(live, sizeof live, "tkc-%ld-abcdef", (long)getpid());
  make_old_dir(tmpdir, live);
  make_old_dir(tmpdir, "tkc-abcdef");
  if (tkc_device_available("CPU")) {
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "TMPDIR=%s", tmpdir);
    const char *env[] = {tmp, "TKC_CACHE_DIR=", "CC="};
    assert_int_equal(run_child("compile", env, 3), 0);
    assert_int_equal(count_named(tmpdir, host), 0);
    assert_int_equal(count_entries(tmpdir), 2);
  }
  char p[4300];
  snprintf(p, sizeof p, "%s/%s", tmpdir, live), rmdir(p);
  snprintf(p, sizeof p, "%s/tkc-abcdef", tmpdir), rmdir(p);
  rmdir(left);
  unlink(script), unlink(pidfile), rmdir(tmpdir), rmdir(work);
}

/* the host's pthread_atfork handlers do not run when the compiler is started (a fork would run them
 * in the compile thread: OpenBLAS's joins its threads there and hung a Python host with numpy) */
static atomic_int atfork_calls;
static void count_atfork(void) { atomic_fetch_add(&atfork_calls, 1); }
static void test_no_atfork_handlers(void **state) {
  (void)state;
  if (!tkc_device_available("CPU")) skip();
#if defined(__SANITIZE_THREAD__)
  printf("skipped: ThreadSanitizer runs vfork as fork (with the atfork handlers)\n");
  skip();
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
  printf("skipped: ThreadSanitizer runs vfork as fork (with the atfork handlers)\n");
  skip();
#endif
#endif
  assert_int_equal(pthread_atfork(count_atfork, count_atfork, count_atfork), 0);
  setenv("TKC_CACHE_DIR", "", 1);
  assert_int_equal(compile_once(), TKC_OK);
  assert_int_equal(atomic_load(&atfork_calls), 0);
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "--child")) return child_main(argv[2]);
  ssize_t n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
  if (n <= 0) return 1;
  self_exe[n] = 0;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hanging_compiler_is_killed),
      cmocka_unit_test(test_tmpdir_not_an_option),
      cmocka_unit_test(test_disk_refuses_source),
      cmocka_unit_test(test_file_size_limit_no_signal),
      cmocka_unit_test(test_killed_host_takes_its_compiler),
      cmocka_unit_test(test_no_atfork_handlers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
