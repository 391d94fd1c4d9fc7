/* src/runtime/cpu.c — the "CPU" device: host memory, kernels rendered by the "C" renderer, compiled
 * by the system C compiler into a shared object, loaded with dlopen and called through libffi.
 *
 * Compiler: $CC when set (split on blanks, so "ccache gcc" works), else clang, else cc; the first one
 * whose `--version` succeeds is used (checked once per process). It runs without a shell (fork +
 * execve of the program found on $PATH), in a private mkdtemp directory tkc-<pid>-XXXXXX under
 * $TMPDIR (or /tmp), with its stdout/stderr captured in a file there and only ever shown inside a
 * TKC_ECOMPILE message. The directory and its files are removed right after dlopen: the mapping
 * stays valid until release() dlcloses it. On Linux the compiler is killed when the host dies
 * (PR_SET_PDEATHSIG); the directory a killed host leaves behind is removed by the next process's
 * first compile (its pid is gone and it is older than the compile timeout).
 * Writes of kernel.c and kernel.so past the file size limit fail (EFBIG), never raise SIGXFSZ at
 * the host (base/fsize_guard.h).
 *
 * Flags (kept in sync with the renderer's assumptions; see src/render/c.c):
 *   -O2 -march=native       speed, like tinygrad's ClangJITCompiler
 *   -ffp-contract=off       no FMA contraction: a*b+c rounds twice, as INTERP does
 *   -fno-math-errno         __builtin_sqrtf becomes an instruction
 *   -fno-strict-aliasing    vector pointer casts of scalar buffers are always well defined
 *   -std=c11                standard excess-precision rules: casts round half values
 *   -fPIC -shared ... -lm   a loadable object; exp2/log2/sin come from libm
 *
 * Cores: every kernel takes two trailing ints (core, ncores) and does its share of the work (see
 * src/render/c.c). A kernel whose source splits a loop and whose constant RANGE trip counts
 * multiply to at least TKC_CPU_PARALLEL_MIN_WORK (ffi_call.h) runs on T = online CPUs threads (at most
 * $TKC_CPU_THREADS when set): the caller plus T-1 persistent workers of runtime/thread_pool.c,
 * all done before launch returns (tkc_ffi_call_parallel).
 * Anything smaller is one call with (0, 1) on the caller's thread. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include "runtime/ffi_call.h"
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include "runtime/device.h"
#include "base/errno_str.h"
#include "base/fsize_guard.h"
#include "runtime/disk_cache.h"
#include "runtime/host_mem.h"

extern char **environ;

/* ---------------------------------------------------------------- running the compiler */

/* Seconds a compiler run may take: $TKC_CC_TIMEOUT (read once; default 300, 0 = no limit). */
static double cc_timeout_s(void) {
  static _Atomic int cached = -1;
  int v = cached;
  if (v < 0) {
    const char *e = getenv("TKC_CC_TIMEOUT");
    char *end;
    long t = e && *e ? strtol(e, &end, 10) : 300;
    v = e && *e && (*end || t < 0) ? 300 : (int)(t > 86400 ? 86400 : t);
    cached = v;
  }
  return v;
}

/* environ with TMPDIR replaced by dir (so the compiler's own temporary files land in the private
 * directory, and go with it); NULL when out of memory. Free the array (not the strings but [0]). */
static char **env_with_tmpdir(const char *dir) {
  size_t n = 0;
  while (environ[n]) n++;
  char **env = tkc_malloc((n + 2) * sizeof *env);
  char *tmpdir = env ? tkc_malloc(strlen(dir) + 8) : NULL;
  if (!tmpdir) {
    tkc_free(env);
    return NULL;
  }
  sprintf(tmpdir, "TMPDIR=%s", dir);
  size_t k = 0;
  env[k++] = tmpdir;
  for (size_t i = 0; i < n; i++)
    if (strncmp(environ[i], "TMPDIR=", 7)) env[k++] = environ[i];
  env[k] = NULL;
  return env;
}

/* the program file name runs, as execvp finds it: name itself when it has a '/', else the first
 * executable regular file name on $PATH (default /usr/bin:/bin); 0 when there is none */
static int find_program(const char *name, char *full, size_t n) {
  struct stat st;
  if (strchr(name, '/')) return (size_t)snprintf(full, n, "%s", name) < n;
  const char *path = getenv("PATH");
  for (const char *p = path ? path : "/usr/bin:/bin"; *p; p += *p == ':') {
    size_t len = strcspn(p, ":");
    if ((size_t)snprintf(full, n, "%.*s/%s", (int)len, len ? p : ".", name) < n && !stat(full, &st) && S_ISREG(st.st_mode) && !access(full, X_OK))
      return 1;
    p += len;
  }
  full[0] = 0;
  return 0;
}

/* The child side of run_quiet, between vfork and execve: async-signal-safe calls only (the host
 * may have other threads, one of them holding malloc's lock), and no return (it runs on the
 * parent's stack, the parent suspended until execve or _exit). Default dispositions and an empty
 * mask whatever the host set, a process group of its own, stdin from /dev/null, stdout and stderr
 * into log; on Linux it dies with its parent. Sends execve's errno down err_fd when that fails. */
static void exec_child(const char *path, char *const argv[], char **env, const char *log, pid_t parent, int err_fd) {
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, NULL); /* glibc's reserved ones refuse: harmless */
  setpgid(0, 0);
#ifdef __linux__
  /* a host killed mid-compile takes the compiler with it; the parent may have died before prctl */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) == 0 && getppid() != parent) _exit(127);
#else
  (void)parent;
#endif
  int in = open("/dev/null", O_RDONLY), out = open(log ? log : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
  int e = 0;
  if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(1, 2) < 0) e = errno;
  if (!e) {
    if (in > 2) close(in);
    if (out > 2) close(out);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(path, argv, env);
    e = errno;
  }
  while (write(err_fd, &e, sizeof e) < 0 && errno == EINTR) {}
  _exit(127);
}

/* vfork, not fork: fork runs the host's pthread_atfork handlers in this (compile worker) thread, and
 * some deadlock there (OpenBLAS's, loaded by numpy/scipy, joins its threads); vfork runs none and
 * copies nothing. The child only execs (exec_child). */
static pid_t spawn(const char *path, char *const argv[], char **env, const char *log, int err_fd) {
  pid_t parent = getpid();
  pid_t pid = vfork();
  if (pid == 0) exec_child(path, argv, env, log, parent, err_fd);
  return pid;
}

/* Runs argv (PATH search, no shell) with stdin from /dev/null, stdout+stderr into log (or
 * /dev/null) and, when tmpdir is given, TMPDIR=tmpdir. The child leads a process group of its own:
 * past cc_timeout_s() the whole group (the driver and cc1/as/ld under it) is killed. Returns the exit
 * status, 128+signal when killed by a signal, -2 on the timeout, or -1 with *err set when it could
 * not be started / waited for. */
static int run_quiet(char *const argv[], const char *log, const char *tmpdir, int *err) {
  *err = 0;
  char path[4200];
  if (!find_program(argv[0], path, sizeof path)) {
    *err = ENOENT;
    return -1;
  }
  char **env = tmpdir ? env_with_tmpdir(tmpdir) : environ;
  if (!env) { *err = ENOMEM; return -1; }
  int pipefd[2]; /* execve's errno comes back here; closed by a successful execve (O_CLOEXEC) */
  pid_t pid = -1;
  if (pipe2(pipefd, O_CLOEXEC) == 0) {
    /* no host signal handler may run in the child before its dispositions are reset */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid = spawn(path, argv, env, log, pipefd[1]);
    *err = pid < 0 ? errno : 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    close(pipefd[1]);
    if (pid < 0) close(pipefd[0]);
  } else *err = errno;
  if (tmpdir) {
    tkc_free(env[0]);
    tkc_free(env);
  }
  if (pid < 0) return -1;
  setpgid(pid, pid); /* as the child does: the group exists before any kill(-pid) below */
  int child_err = 0;
  ssize_t got;
  while ((got = read(pipefd[0], &child_err, sizeof child_err)) < 0 && errno == EINTR) {}
  close(pipefd[0]);
  int st;
  if (got == (ssize_t)sizeof child_err) { /* not started */
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    *err = child_err ? child_err : ENOEXEC;
    return -1;
  }
  /* poll: 1 ms growing to 20 ms between looks costs nothing next to a compile */
  double limit = cc_timeout_s(), waited = 0;
  useconds_t nap = 1000;
  for (;;) {
    pid_t w = waitpid(pid, &st, limit > 0 ? WNOHANG : 0);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) { *err = errno; return -1; }
    if (w == 0) {
      if (waited >= limit) {
        kill(-pid, SIGKILL);
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
        return -2;
      }
      usleep(nap);
      waited += nap * 1e-6;
      if (nap < 20000) nap *= 2;
    }
  }
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* $TMPDIR when it is an absolute path (a relative one, or one starting with '-', would reach the
 * compiler's command line as something else), else /tmp */
static const char *tmp_root(void) {
  const char *tmp = getenv("TMPDIR");
  return tmp && *tmp == '/' ? tmp : "/tmp";
}

/* Removes dir and the plain files in it (what a killed compiler may have left). */
static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    char path[4400];
    for (struct dirent *e; (e = readdir(d));) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < sizeof path) unlink(path);
    }
    closedir(d);
  }
  rmdir(dir);
}

/* Compile folders tkc-<pid>-XXXXXX that a killed host left in tmp: removed when they are ours (our
 * uid, a real folder), their pid no longer runs, and they are older than a compile may take (a
 * process of another pid namespace sharing tmp cannot be told from a dead one by its pid). Once a
 * process, at its first compile. Folders named otherwise (tkc-XXXXXX of older versions) stay. */
static void remove_stale_dirs(void) {
  const char *tmp = tmp_root();
  DIR *d = opendir(tmp);
  if (!d) return;
  double limit = cc_timeout_s();
  time_t now = time(NULL), age = (time_t)(limit > 0 ? limit + 60 : 86400);
  char path[4400];
  for (struct dirent *e; (e = readdir(d));) {
    char *end;
    if (strncmp(e->d_name, "tkc-", 4) || e->d_name[4] < '0' || e->d_name[4] > '9') continue;
    long pid = strtol(e->d_name + 4, &end, 10);
    struct stat st;
    if (*end != '-' || strlen(end + 1) != 6 || pid <= 0 || pid == (long)getpid()) continue;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", tmp, e->d_name) >= sizeof path || lstat(path, &st) || !S_ISDIR(st.st_mode) ||
        st.st_uid != geteuid() || now - st.st_mtime < age)
      continue;
    if (kill((pid_t)pid, 0) < 0 && errno == ESRCH) remove_dir(path);
  }
  closedir(d);
}
static pthread_once_t stale_once = PTHREAD_ONCE_INIT;

/* the compiler: argv prefix (words of $CC, or one name), found once */
static pthread_once_t cc_once = PTHREAD_ONCE_INIT;
static char *cc_words[16];
static int cc_nwords;
static char cc_buf[512];
static char cc_why[600];
static int cc_ok;
static char cc_ident[1024]; /* the compiler's first --version line and the host CPU: part of the disk cache key */

/* splits s into up to max-1 blank-separated words stored in buf (NUL-separated) */
static int split_words(const char *s, char *buf, size_t bufn, char **words, int max) {
  snprintf(buf, bufn, "%s", s);
  int n = 0;
  char *p = buf;
  while (*p && n < max - 1) {
    while (*p == ' ' || *p == '\t') *p++ = 0;
    if (!*p) break;
    words[n++] = p;
    while (*p && *p != ' ' && *p != '\t') p++;
  }
  words[n] = NULL;
  return n;
}

static char *read_file(const char *path, size_t max);
static void cc_identify(const char *ver);

/* the disk cache key of the compiler's --version output: the command and the identity (path, inode,
 * size, time) of the program it runs, found on $PATH as run_quiet does; NULL when not found */
static char *version_key(const char *cmd, size_t *n) {
  char full[4200];
  struct stat st;
  if (!find_program(cc_words[0], full, sizeof full) || stat(full, &st)) return NULL;
  tkc_sbuf b = {0};
  tkc_sbuf_printf(&b, "tkc %s compiler version\n%s\n%s %llu %lld %lld", tkc_version(), cmd, full, (unsigned long long)st.st_ino,
                  (long long)st.st_size, (long long)st.st_mtime);
  *n = b.s ? strlen(b.s) : 0;
  return tkc_sbuf_take(&b);
}

static int try_compiler(const char *cmd, char *tried, size_t tn) {
  cc_nwords = split_words(cmd, cc_buf, sizeof cc_buf, cc_words, (int)TKC_COUNTOF(cc_words) - 1);
  if (cc_nwords == 0) {
    snprintf(tried + strlen(tried), tn - strlen(tried), "%s\"%s\" (empty)", *tried ? ", " : "", cmd);
    return 0;
  }
  /* a compiler whose --version an earlier process ran (same program file): not run again */
  size_t keylen = 0, vlen = 0;
  char *key = tkc_dcache_on() ? version_key(cmd, &keylen) : NULL, *known = key ? tkc_dcache_get("cc", key, keylen, &vlen) : NULL;
  if (known) {
    known[vlen] = 0;
    cc_identify(known);
    tkc_free(known);
    tkc_free(key);
    return 1;
  }
  char *argv[TKC_COUNTOF(cc_words) + 1];
  for (int i = 0; i < cc_nwords; i++) argv[i] = cc_words[i];
  argv[cc_nwords] = (char *)"--version";
  argv[cc_nwords + 1] = NULL;
  int err;
  char log[4200];
  snprintf(log, sizeof log, "%s/tkc-ccver-XXXXXX", tmp_root());
  int fd = mkstemp(log);
  if (fd >= 0) close(fd);
  int rc = run_quiet(argv, fd >= 0 ? log : NULL, NULL, &err);
  char *ver = rc == 0 && fd >= 0 ? read_file(log, 512) : NULL;
  if (fd >= 0) unlink(log);
  if (rc == 0) {
    if (key && ver) tkc_dcache_put("cc", key, keylen, ver, strlen(ver));
    tkc_free(key);
    cc_identify(ver);
    tkc_free(ver);
    return 1;
  }
  tkc_free(key);
  size_t l = strlen(tried);
  if (rc == -2) snprintf(tried + l, tn - l, "%s%s (--version timed out)", l ? ", " : "", cmd);
  else if (rc < 0) snprintf(tried + l, tn - l, "%s%s (%s)", l ? ", " : "", cmd, TKC_STRERROR(err));
  else if (rc == 127) snprintf(tried + l, tn - l, "%s%s (not found)", l ? ", " : "", cmd);
  else snprintf(tried + l, tn - l, "%s%s (--version exited with %d)", l ? ", " : "", cmd, rc);
  return 0;
}

/* cc_ident: what else a compiled object depends on than its source and flags: the compiler's
 * first --version line (ver) and the host CPU */
static void cc_identify(const char *ver) {
  char cpu[768] = "?";
  char *info = read_file("/proc/cpuinfo", 64 * 1024), *m = info ? strstr(info, "model name") : NULL, *f = info ? strstr(info, "\nflags") : NULL;
  if (m || f) snprintf(cpu, sizeof cpu, "%.*s|%.*s", m ? (int)strcspn(m, "\n") : 0, m ? m : "", f ? (int)strcspn(f + 1, "\n") : 0, f ? f + 1 : "");
  snprintf(cc_ident, sizeof cc_ident, "%.*s\n%s", ver ? (int)strcspn(ver, "\n") : 1, ver ? ver : "?", cpu);
  tkc_free(info);
}

static void cc_detect(void) {
  char tried[400] = "";
  const char *env = getenv("CC");
  if (env && *env) {
    cc_ok = try_compiler(env, tried, sizeof tried);
    if (!cc_ok) snprintf(cc_why, sizeof cc_why, "no working C compiler: tried $CC=%s", tried);
    return;
  }
  static const char *const names[] = {"clang", "cc"};
  for (size_t i = 0; i < TKC_COUNTOF(names) && !cc_ok; i++) cc_ok = try_compiler(names[i], tried, sizeof tried);
  if (!cc_ok) snprintf(cc_why, sizeof cc_why, "no working C compiler: tried %s (set $CC to choose one)", tried);
}

static int cpu_available(char *why, size_t n) {
  pthread_once(&cc_once, cc_detect);
  if (!cc_ok && why && n) snprintf(why, n, "%s", cc_why);
  return cc_ok;
}

/* ---------------------------------------------------------------- compile */

typedef struct cpu_prog {
  void *dl;
  void (*fn)(void);
  tkc_ffi_sig sig;
  bool parallel; /* big enough to spread across cores, and the source splits a loop */
} cpu_prog;

static const char *const cc_flags[] = {"-x", "c", "-std=c11", "-O2", "-march=native", "-fPIC", "-shared",
                                       "-ffp-contract=off", "-fno-math-errno", "-fno-strict-aliasing"};

/* The file's bytes, NUL-terminated: at most max of them, cut there when truncate, else NULL past max. */
static char *read_upto(const char *path, size_t max, int truncate, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *s = tkc_malloc(max + 2);
  size_t got = s ? fread(s, 1, max + 1, f) : 0;
  fclose(f);
  if (s && got > max && truncate) got = max;
  if (!s || got > max) {
    tkc_free(s);
    return NULL;
  }
  s[got] = 0;
  if (n) *n = got;
  return s;
}
static char *read_file(const char *path, size_t max) { return read_upto(path, max, 1, NULL); }
static void *read_bytes(const char *path, size_t max, size_t *n) { return read_upto(path, max, 0, n); }

/* the disk cache key of k's object: everything the compiled bytes depend on */
static char *object_key(const tkc_kernel *k, size_t *n) {
  tkc_sbuf b = {0};
  tkc_sbuf_printf(&b, "tkc %s CPU shared object\n%s\n", tkc_version(), cc_ident);
  for (int i = 0; i < cc_nwords; i++) tkc_sbuf_printf(&b, "%s ", cc_words[i]);
  for (size_t i = 0; i < TKC_COUNTOF(cc_flags); i++) tkc_sbuf_printf(&b, "%s ", cc_flags[i]);
  tkc_sbuf_printf(&b, "-lm\n%s", k->source);
  *n = b.s ? strlen(b.s) : 0;
  return tkc_sbuf_take(&b);
}

/* removes every occurrence of pat from s (in place) */
static void strip_all(char *s, const char *pat) {
  size_t pl = strlen(pat);
  if (!pl) return;
  char *w = s;
  for (char *r = s; *r;) {
    if (!strncmp(r, pat, pl)) r += pl;
    else *w++ = *r++;
  }
  *w = 0;
}

/* builds the TKC_ECOMPILE message from the compiler's output */
static tkc_status compile_error(const tkc_kernel *k, int rc, char *log) {
  const char *cc = cc_words[0];
  if (!log || !*log) return tkc_err(TKC_ECOMPILE, "CPU: %s failed compiling kernel %s (exit status %d) without a message", cc, k->name, rc);
  /* the first error line and the source line it points at */
  const char *first = strstr(log, "error");
  const char *ls = log;
  if (first) {
    ls = first;
    while (ls > log && ls[-1] != '\n') ls--;
  }
  const char *le = strchr(ls, '\n');
  int elen = (int)(le ? le - ls : (ptrdiff_t)strlen(ls));
  if (elen > 400) elen = 400;
  char where[420] = "";
  const char *m = strstr(ls, "kernel.c:");
  long line = m ? strtol(m + 9, NULL, 10) : 0;
  if (line > 0) {
    const char *p = k->source;
    for (long i = 1; i < line && p; i++) {
      p = strchr(p, '\n');
      if (p) p++;
    }
    if (p) {
      const char *pe = strchr(p, '\n');
      int plen = (int)(pe ? pe - p : (ptrdiff_t)strlen(p));
      while (plen > 0 && (*p == ' ' || *p == '\t')) p++, plen--;
      if (plen > 300) plen = 300;
      snprintf(where, sizeof where, "\n  line %ld: %.*s", line, plen, p);
    }
  }
  return tkc_err(TKC_ECOMPILE, "CPU: %s failed compiling kernel %s: %.*s%s\n%s", cc, k->name, elen, ls, where, log);
}

static tkc_status cpu_compile(const tkc_kernel *k, void **handle) {
  if (!handle) return tkc_err(TKC_EINVAL, "CPU: compile needs a handle pointer");
  *handle = NULL;
  if (!k || !k->name || !k->source || k->nbufs < 0 || k->nvars < 0)
    return tkc_err(TKC_EINVAL, "CPU: compile of an incomplete kernel");
  tkc_status st = tkc_kernel_check_signature(k, "CPU");
  if (st) return st;
  char why[600];
  if (!cpu_available(why, sizeof why)) return tkc_err(TKC_EDEVICE, "CPU: %s", why);

  pthread_once(&stale_once, remove_stale_dirs);
  const char *tmp = tmp_root();
  char dir[4096], src[4200], out[4200], log[4200];
  if ((size_t)snprintf(dir, sizeof dir, "%s/tkc-%ld-XXXXXX", tmp, (long)getpid()) >= sizeof dir) return tkc_err(TKC_ERUNTIME, "CPU: $TMPDIR is too long");
  if (!mkdtemp(dir)) return tkc_err(TKC_ERUNTIME, "CPU: cannot create a temporary directory in %s: %s", tmp, TKC_STRERROR(errno));
  snprintf(src, sizeof src, "%s/kernel.c", dir);
  snprintf(out, sizeof out, "%s/kernel.so", dir);
  snprintf(log, sizeof log, "%s/cc.log", dir);

  cpu_prog *p = NULL;
  char *msg = NULL;
  size_t keylen = 0, objlen = 0;
  char *key = tkc_dcache_on() ? object_key(k, &keylen) : NULL;
  void *obj = key ? tkc_dcache_get("cpu", key, keylen, &objlen) : NULL;
  FILE *f = NULL;
  tkc_fsize_guard g; /* past the file size limit the writes fail with EFBIG: no SIGXFSZ at the host */
  if (obj) { /* built by an earlier process: dlopen wants a file */
    tkc_fsize_guard_begin(&g);
    f = fopen(out, "wb");
    int ok = f && fwrite(obj, 1, objlen, f) == objlen;
    if (f && fclose(f) != 0) ok = 0;
    tkc_fsize_guard_end(&g);
    f = NULL;
    if (ok) goto load;
  }
compile:
  tkc_fsize_guard_begin(&g);
  f = fopen(src, "wb");
  size_t slen = strlen(k->source);
  int wrote = f && fwrite(k->source, 1, slen, f) == slen;
  int e = errno;
  if (f && fclose(f) != 0 && wrote) wrote = 0, e = errno; /* closed either way: never a second fclose */
  tkc_fsize_guard_end(&g);
  if (!wrote) {
    f = NULL;
    st = tkc_err(TKC_ERUNTIME, "CPU: cannot write %s: %s", src, TKC_STRERROR(e));
    goto cleanup;
  }
  f = NULL;

  char *argv[TKC_COUNTOF(cc_words) + TKC_COUNTOF(cc_flags) + 8];
  int na = 0;
  for (int i = 0; i < cc_nwords; i++) argv[na++] = cc_words[i];
  for (size_t i = 0; i < TKC_COUNTOF(cc_flags); i++) argv[na++] = (char *)cc_flags[i];
  argv[na++] = (char *)"-o";
  argv[na++] = out;
  argv[na++] = src;
  argv[na++] = (char *)"-lm";
  argv[na] = NULL;
  int err;
  int rc = run_quiet(argv, log, dir, &err);
  if (rc == -2) {
    st = tkc_err(TKC_ECOMPILE, "CPU: %s did not finish compiling %s in %.0f s (killed; TKC_CC_TIMEOUT sets the limit)", cc_words[0], k->name,
                 cc_timeout_s());
    goto cleanup;
  }
  if (rc < 0) {
    st = tkc_err(TKC_ECOMPILE, "CPU: cannot run %s: %s", cc_words[0], TKC_STRERROR(err));
    goto cleanup;
  }
  if (rc != 0) {
    msg = read_file(log, 64 * 1024);
    if (msg) {
      char pre[4200];
      snprintf(pre, sizeof pre, "%s/", dir);
      strip_all(msg, pre);
    }
    st = compile_error(k, rc, msg);
    goto cleanup;
  }
  if (key) { /* for the next process */
    size_t n = 0;
    void *bytes = read_bytes(out, (size_t)1 << 30, &n);
    if (bytes) tkc_dcache_put("cpu", key, keylen, bytes, n);
    tkc_free(bytes);
  }

load:
  p = tkc_calloc(1, sizeof *p);
  if (!p) { st = tkc_err(TKC_ENOMEM, "CPU: out of memory"); goto cleanup; }
  p->dl = dlopen(out, RTLD_NOW | RTLD_LOCAL);
  if (!p->dl && obj) { /* a cached object this process cannot load: build it again */
    tkc_free(p);
    p = NULL;
    tkc_free(obj);
    obj = NULL;
    goto compile;
  }
  if (!p->dl) {
    const char *de = dlerror();
    st = tkc_err(TKC_ECOMPILE, "CPU: cannot load the compiled kernel %s: %s", k->name, de ? de : "dlopen failed");
    goto cleanup;
  }
  void *sym = dlsym(p->dl, k->name);
  if (!sym) {
    st = tkc_err(TKC_ECOMPILE, "CPU: the compiled object has no function %s", k->name);
    goto cleanup;
  }
  memcpy(&p->fn, &sym, sizeof p->fn); /* object -> function pointer without a cast warning */
  /* the kernel takes (bufs..., vars..., core, ncores): see src/render/c.c */
  st = tkc_ffi_prepare_ex(&p->sig, k->nbufs, k->nvars, 2, "CPU");
  if (st) goto cleanup;
  p->parallel = strstr(k->source, "tkc_hi_") != NULL && tkc_kernel_work_estimate(k) >= TKC_CPU_PARALLEL_MIN_WORK;
cleanup:
  tkc_free(msg);
  tkc_free(key);
  tkc_free(obj);
  remove_dir(dir);
  if (st != TKC_OK) {
    if (p) {
      if (p->dl) dlclose(p->dl);
      tkc_ffi_release(&p->sig);
      tkc_free(p);
    }
    return st;
  }
  *handle = p;
  return TKC_OK;
}

static void cpu_release(void *handle) {
  cpu_prog *p = handle;
  if (!p) return;
  if (p->dl) dlclose(p->dl);
  tkc_ffi_release(&p->sig);
  tkc_free(p);
}

/* ---------------------------------------------------------------- launch */

/* Small kernels are one call with (core 0, ncores 1); big ones run as T calls (core 0..T-1,
 * ncores T) on T-1 new threads plus this one, joined before returning. */
static tkc_status cpu_launch(const tkc_kernel *k, void *handle, void *const *bufs, const int64_t *vars) {
  (void)k;
  cpu_prog *p = handle;
  if (!p || !p->fn) return tkc_err(TKC_EINVAL, "CPU: launch of a kernel that was not compiled");
  return tkc_ffi_call_parallel(&p->sig, p->fn, bufs, vars, p->parallel ? tkc_ffi_threads() : 1, "CPU");
}

const tkc_device_impl tkc_device_cpu = {
    .name = "CPU",
    .renderer = "C",
    .available = cpu_available,
    .alloc = tkc_host_alloc,
    .alloc_uninit = tkc_host_alloc_uninit,
    .host_memory = true,
    .free = tkc_host_free,
    .copyin = tkc_host_copy,
    .copyout = tkc_host_copy,
    .compile = cpu_compile,
    .compile_threadsafe = true, /* a private folder and compiler process each */
    .release = cpu_release,
    .launch = cpu_launch,
};
