/* tests/ptxas_run.h — PTX checked offline (no GPU needed): ptxas found on PATH or in
 * /usr/local/cuda/bin, run as a subprocess on a temporary file, its messages kept for the failure
 * report. For test_ptx.c, test_fp8.c. */
#ifndef TKC_TESTS_PTXAS_RUN_H
#define TKC_TESTS_PTXAS_RUN_H
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char *ptxas_path(void) {
  static char path[4096];
  static int done;
  if (done) return path[0] ? path : NULL;
  done = 1;
  const char *env = getenv("PATH");
  while (env && *env) {
    const char *end = strchr(env, ':');
    size_t len = end ? (size_t)(end - env) : strlen(env);
    if (len && len < sizeof path - 8) {
      snprintf(path, sizeof path, "%.*s/ptxas", (int)len, env);
      if (access(path, X_OK) == 0) return path;
    }
    env = end ? end + 1 : NULL;
  }
  snprintf(path, sizeof path, "/usr/local/cuda/bin/ptxas");
  if (access(path, X_OK) == 0) return path;
  path[0] = 0;
  return NULL;
}

static char *slurp(const char *file) {
  FILE *f = fopen(file, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  char *s = malloc(cap);
  while (s) {
    size_t k = fread(s + n, 1, cap - n - 1, f);
    n += k;
    if (k == 0) break;
    if (n + 1 == cap) {
      char *t = realloc(s, cap *= 2);
      if (!t) { free(s); s = NULL; }
      else s = t;
    }
  }
  fclose(f);
  if (s) s[n] = 0;
  return s;
}

/* Assembles src for arch with ptxas (output discarded); returns its exit status (-1: could not run)
 * and its messages in *log (malloc'ed; log may be NULL). */
static int ptxas_run(const char *src, const char *arch, char **log) {
  const char *tmp = getenv("TMPDIR");
  char ptx[4200], out[4200], msg[4200], archopt[64];
  if (!tmp || !*tmp) tmp = "/tmp";
  snprintf(ptx, sizeof ptx, "%s/tkc-ptx-XXXXXX.ptx", tmp);
  snprintf(msg, sizeof msg, "%s/tkc-ptxlog-XXXXXX", tmp);
  if (log) *log = NULL;
  int fd = mkstemps(ptx, 4);
  if (fd < 0) return -1;
  size_t len = strlen(src);
  ssize_t w = write(fd, src, len);
  close(fd);
  int lfd = mkstemp(msg);
  if (w != (ssize_t)len || lfd < 0) {
    unlink(ptx);
    if (lfd >= 0) close(lfd), unlink(msg);
    return -1;
  }
  close(lfd);
  snprintf(out, sizeof out, "/dev/null");
  snprintf(archopt, sizeof archopt, "-arch=%s", arch);
  char *argv[] = {(char *)ptxas_path(), archopt, ptx, (char *)"-o", out, NULL};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, msg, O_WRONLY | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ), st = 0;
  posix_spawn_file_actions_destroy(&fa);
  if (rc == 0) {
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
  } else {
    rc = -1;
  }
  if (log) *log = slurp(msg);
  unlink(ptx);
  unlink(msg);
  return rc;
}

#endif
