/* tests/fuzz/fuzz_tensor.c — a differential fuzzer for the tkc tensor API.
 *
 *   fuzz_tensor [--seed N] [--count N | --minutes M] [--devices CPU,LLVM,...] [--verbose]
 *
 * Each program (fz_gen.c: random shapes with broadcasting, dtypes, elementwise / reduce / movement /
 * composite ops, realize points, reused intermediates, now and then a final invalid op) runs on every
 * available device, each in a forked child so a crash or a hang is caught, and every observed node is
 * checked against the host reference evaluator (fz_ref.c) within its per-element error bound; ints,
 * bool and moved values must match exactly. An invalid op must give NULL and an error message on
 * every device. A failing program is minimized (outputs, nodes, realize points, shapes) while the
 * failure persists and printed as C code with its seed. Exit status 1 when anything failed. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "fz.h"

#define MAXDEV 5
#define CHILD_TIMEOUT_S 120
#define MSG 768

static const char *const all_devices[MAXDEV] = {"INTERP", "CPU", "LLVM", "WEBGPU", "CUDA"};

typedef struct opts {
  uint64_t seed;
  long count;
  double minutes;
  const char *devices;
  bool verbose;
} opts;

/* ---------------------------------------------------------------- running in a child */

/* what a child hands back through shared memory */
typedef struct child_out {
  int fail_node;          /* -1: every node built and every observed node copied out */
  int st[FZ_MAXNODES];
  char err[MSG];
  size_t off[FZ_MAXNODES]; /* observed node i's bytes at data + off[i] */
  unsigned char data[];
} child_out;

static child_out *shm;
static size_t shm_size;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* lays out the observed nodes' buffers; false when they do not fit */
static bool layout(const fz_prog *p, void **bufs) {
  size_t off = 0;
  for (int i = 0; i < p->n; i++) {
    const fz_node *nd = &p->node[i];
    shm->off[i] = off;
    bufs[i] = shm->data + off;
    if (nd->observe && !nd->expect_fail) off += ((size_t)fz_numel(nd->ndim, nd->shape) * tkc_dtype_size(nd->dt) + 15) & ~(size_t)15;
  }
  return off + sizeof *shm <= shm_size;
}

typedef enum outcome { RUN_OK, RUN_FAILED, RUN_CRASHED, RUN_TIMEOUT } outcome;

/* Runs p on dev in a child; *sig gets the signal that killed it. */
static outcome run_child(const fz_prog *p, const char *dev, int *sig) {
  void *bufs[FZ_MAXNODES];
  memset(shm, 0, sizeof *shm);
  shm->fail_node = -2; /* the child never reported */
  if (!layout(p, bufs)) {
    snprintf(shm->err, MSG, "outputs do not fit the shared buffer");
    return RUN_FAILED;
  }
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    snprintf(shm->err, MSG, "fork: %s", strerror(errno));
    return RUN_FAILED;
  }
  if (pid == 0) {
    alarm(CHILD_TIMEOUT_S);
    tkc_ctx *ctx = tkc_ctx_new(dev);
    if (!ctx) {
      snprintf(shm->err, MSG, "ctx_new(%s): %s", dev, tkc_last_error());
      shm->fail_node = -3;
      _exit(0);
    }
    shm->fail_node = fz_run_on(ctx, p, bufs, shm->st, shm->err, MSG);
    tkc_ctx_free(ctx);
    _exit(0);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  *sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  if (*sig == SIGALRM) return RUN_TIMEOUT;
  if (*sig || shm->fail_node == -2) return RUN_CRASHED;
  return shm->fail_node == -1 ? RUN_OK : RUN_FAILED;
}

/* ---------------------------------------------------------------- comparing */

/* element k of an observed buffer of dtype dt, as a double (ints exactly up to 2^53) */
static double load(tkc_dtype dt, const unsigned char *b, int64_t k) {
  size_t o = (size_t)k * tkc_dtype_size(dt);
  switch (dt) {
  case TKC_BOOL: return b[o] != 0;
  case TKC_INT8: return *(const int8_t *)(b + o);
  case TKC_UINT8: return b[o];
  case TKC_INT16: return *(const int16_t *)(b + o);
  case TKC_UINT16: return *(const uint16_t *)(b + o);
  case TKC_INT32: return *(const int32_t *)(b + o);
  case TKC_UINT32: return *(const uint32_t *)(b + o);
  case TKC_INT64: return (double)*(const int64_t *)(b + o);
  case TKC_UINT64: return (double)*(const uint64_t *)(b + o);
  case TKC_FLOAT16: return tkc_f16_to_f32(*(const uint16_t *)(b + o));
  case TKC_BFLOAT16: return tkc_bf16_to_f32(*(const uint16_t *)(b + o));
  case TKC_FLOAT64: return *(const double *)(b + o);
  default: return *(const float *)(b + o);
  }
}

static int64_t load_i(tkc_dtype dt, const unsigned char *b, int64_t k) {
  if (dt == TKC_INT64) return ((const int64_t *)b)[k];
  return (int64_t)load(dt, b, k);
}

/* does device value d agree with reference element k of v? ieee_lax: any value may stand for an
 * inf or NaN (WGSL lets implementations assume there are none) */
static bool agrees(const fz_val *v, int64_t k, const unsigned char *buf, bool ieee_lax) {
  double e = v->err[k];
  if (e == INFINITY) return true;
  if (ieee_lax && tkc_dtype_is_float(v->dt) && !isfinite(v->f[k])) return true;
  if (!tkc_dtype_is_float(v->dt)) return load_i(v->dt, buf, k) == v->i[k];
  double d = load(v->dt, buf, k), r = v->f[k];
  if (isnan(r)) return isnan(d);
  if (isinf(r)) return d == r;
  return fabs(d - r) <= 2 * e; /* 2x: the bound is first order */
}

/* the first disagreement of observed node i; its element in *bad */
static bool node_agrees(const fz_val *v, const unsigned char *buf, bool ieee_lax, int64_t *bad) {
  for (int64_t k = 0; k < v->n; k++)
    if (!agrees(v, k, buf, ieee_lax)) return *bad = k, false;
  return true;
}

/* ---------------------------------------------------------------- checking a program */

typedef enum fkind { F_NONE, F_MISMATCH, F_ERROR, F_ACCEPTED, F_NOMSG, F_CRASH, F_TIMEOUT, F_META } fkind;
static const char *const fkind_names[] = {"ok", "wrong values", "unexpected error", "invalid op accepted", "NULL without a message", "crash",
                                          "timeout", "wrong dtype/shape"};

typedef struct failure {
  fkind kind;
  int dev;      /* index into all_devices */
  int node;
  char msg[2 * MSG];
} failure;

typedef struct devset {
  bool on[MAXDEV];
} devset;

static void describe_mismatch(failure *f, const fz_prog *p, int i, const fz_val *v, int64_t k, const unsigned char *buf, const char *dev) {
  char s[160];
  fz_shape_str(&p->node[i], s, sizeof s);
  const fz_node *nd = &p->node[i];
  int64_t c[FZ_MAXDIM], rem = k;
  for (int d = nd->ndim - 1; d >= 0; d--) c[d] = nd->shape[d] ? rem % nd->shape[d] : 0, rem /= nd->shape[d] ? nd->shape[d] : 1;
  char at[96] = "";
  size_t n = 0;
  for (int d = 0; d < nd->ndim && n < sizeof at; d++) n += (size_t)snprintf(at + n, sizeof at - n, d ? ",%" PRId64 : "%" PRId64, c[d]);
  if (tkc_dtype_is_float(v->dt))
    snprintf(f->msg, sizeof f->msg, "%s: t%d %s at [%s]: got %.9g, reference %.9g (+- %.3g)", dev, i, s, at, load(v->dt, buf, k), v->f[k], 2 * v->err[k]);
  else
    snprintf(f->msg, sizeof f->msg, "%s: t%d %s at [%s]: got %" PRId64 ", reference %" PRId64, dev, i, s, at, load_i(v->dt, buf, k), v->i[k]);
}

/* whether some data leaf of p holds inf / NaN / huge / subnormal values */
static bool has_specials(const fz_prog *p) {
  for (int i = 0; i < p->n; i++)
    if (p->node[i].kind == FZ_DATA && p->node[i].vkind == FZ_V_SPECIAL) return true;
  return false;
}

/* p on device d: 0 when fine (or when d cannot hold p's dtypes), else fills *f. WEBGPU: WGSL lets an
 * implementation assume no inf or NaN, so programs fed such values are not checked there, and
 * inf/NaN results may come out as anything. */
static int check_device(const fz_prog *p, const fz_val *ref, int d, failure *f, int *skipped) {
  int sig = 0;
  const char *dev = all_devices[d];
  bool ieee_lax = !strcmp(dev, "WEBGPU");
  if (ieee_lax && has_specials(p)) return ++*skipped, 0;
  outcome oc = run_child(p, dev, &sig);
  f->dev = d;
  f->node = shm->fail_node;
  if (oc == RUN_CRASHED || oc == RUN_TIMEOUT) {
    f->kind = oc == RUN_CRASHED ? F_CRASH : F_TIMEOUT;
    snprintf(f->msg, sizeof f->msg, "%s: %s (signal %d: %s)", dev, fkind_names[f->kind], sig, strsignal(sig));
    return -1;
  }
  if (oc == RUN_FAILED) {
    int i = shm->fail_node;
    if (i < 0) {
      f->kind = F_ERROR;
      snprintf(f->msg, sizeof f->msg, "%s: %s", dev, shm->err);
      return -1;
    }
    const fz_node *nd = &p->node[i];
    if (nd->expect_fail) f->kind = shm->st[i] == TKC_OK ? F_ACCEPTED : F_NOMSG;
    else if (shm->st[i] == -1) f->kind = F_META;
    else if (shm->st[i] == TKC_EUNSUPPORTED && !strcmp(dev, "WEBGPU") && fz_uses_64bit(p)) return ++*skipped, 0; /* WGSL: no 64-bit types */
    else f->kind = F_ERROR;
    snprintf(f->msg, sizeof f->msg, "%s: t%d: %s", dev, i, shm->err);
    return -1;
  }
  for (int i = 0; i < p->n; i++) {
    const fz_node *nd = &p->node[i];
    int64_t k;
    if (!nd->observe || nd->expect_fail) continue;
    const unsigned char *buf = shm->data + shm->off[i];
    if (!node_agrees(&ref[i], buf, ieee_lax, &k)) {
      f->kind = F_MISMATCH;
      f->node = i;
      describe_mismatch(f, p, i, &ref[i], k, buf, dev);
      return -1;
    }
  }
  return 0;
}

/* runs p on every device in ds; the first failure (by device order) in *f, with the other failing
 * devices named after it. 0 when all are fine. */
static int check_prog(const fz_prog *p, const devset *ds, failure *f, int *skipped) {
  fz_val ref[FZ_MAXNODES];
  fz_ref_eval(p, ref);
  int bad = 0;
  memset(f, 0, sizeof *f);
  for (int d = 0; d < MAXDEV; d++) {
    failure g;
    if (!ds->on[d] || check_device(p, ref, d, bad ? &g : f, skipped) == 0) continue;
    if (bad++ == 1) strncat(f->msg, " (also on", sizeof f->msg - strlen(f->msg) - 1);
    if (bad > 1) snprintf(f->msg + strlen(f->msg), sizeof f->msg - strlen(f->msg), " %s", all_devices[d]);
  }
  if (bad > 1) strncat(f->msg, ")", sizeof f->msg - strlen(f->msg) - 1);
  fz_vals_free(ref, p->n);
  return bad ? -1 : 0;
}

/* ---------------------------------------------------------------- minimizing */

typedef struct minimizer {
  devset ds;      /* just the failing device */
  fkind kind;
  int tries, budget;
  double deadline;
} minimizer;

/* does candidate q (already changed) still fail the same way? */
static bool still_fails(minimizer *m, fz_prog *q) {
  if (m->tries >= m->budget || now_s() > m->deadline) return false;
  fz_compact(q);
  if (fz_infer_all(q)) return false;
  for (int i = 0; i < q->n; i++) /* a big leaf must not become an output */
    if (q->node[i].observe && fz_numel(q->node[i].ndim, q->node[i].shape) > FZ_MAXNUMEL) return false;
  m->tries++;
  failure f;
  int skipped = 0;
  return check_prog(q, &m->ds, &f, &skipped) != 0 && f.kind == m->kind;
}

/* keep only the failing node observed */
static bool min_outputs(minimizer *m, fz_prog *p, int node) {
  if (node < 0 || node >= p->n) return false;
  fz_prog q = *p;
  int changed = 0;
  for (int i = 0; i < q.n; i++) {
    bool keep = i == node;
    changed |= q.node[i].observe != keep && !q.node[i].expect_fail;
    if (!q.node[i].expect_fail) q.node[i].observe = keep;
  }
  if (!changed || !still_fails(m, &q)) return false;
  *p = q;
  return true;
}

/* replace the uses of node i with one of its inputs (or observe an input instead) */
static bool min_bypass(minimizer *m, fz_prog *p) {
  for (int i = p->n - 1; i >= 0; i--) {
    for (int k = 0; k < p->node[i].nin; k++) {
      fz_prog q = *p;
      int src = q.node[i].in[k];
      for (int j = i + 1; j < q.n; j++)
        for (int s = 0; s < q.node[j].nin; s++)
          if (q.node[j].in[s] == i) q.node[j].in[s] = src;
      if (q.node[i].observe) q.node[src].observe = 1;
      q.node[i].observe = 0;
      q.node[i].expect_fail = 0;
      if (p->node[i].expect_fail) continue; /* the invalid node itself stays */
      if (still_fails(m, &q)) {
        *p = q;
        return true;
      }
    }
  }
  return false;
}

static bool min_realize(minimizer *m, fz_prog *p) {
  for (int i = 0; i < p->n; i++) {
    if (!p->node[i].realize) continue;
    fz_prog q = *p;
    q.node[i].realize = 0;
    if (still_fails(m, &q)) {
      *p = q;
      return true;
    }
  }
  return false;
}

/* a smaller dim in one leaf's shape (the program must still be valid) */
static bool min_shapes(minimizer *m, fz_prog *p) {
  for (int i = 0; i < p->n; i++) {
    fz_node *nd = &p->node[i];
    if (nd->kind != FZ_DATA && nd->kind != FZ_FULL && nd->kind != FZ_ARANGE) continue;
    int nd_dims = nd->kind == FZ_ARANGE ? 1 : nd->np;
    for (int d = 0; d < nd_dims; d++) {
      int64_t cur = nd->p[d], cands[3] = {1, cur / 2, cur - 1};
      for (int c = 0; c < 3; c++) {
        if (cands[c] < 1 || cands[c] >= cur) continue;
        fz_prog q = *p;
        q.node[i].p[d] = cands[c];
        if (still_fails(m, &q)) {
          *p = q;
          return true;
        }
      }
    }
  }
  return false;
}

static void minimize(fz_prog *p, const failure *f, minimizer *m) {
  m->kind = f->kind;
  memset(&m->ds, 0, sizeof m->ds);
  m->ds.on[f->dev] = true;
  if (f->kind == F_MISMATCH || f->kind == F_META) min_outputs(m, p, f->node);
  for (bool progress = true; progress;) {
    progress = min_bypass(m, p);
    progress = min_realize(m, p) || progress;
    progress = min_shapes(m, p) || progress;
  }
}

/* ---------------------------------------------------------------- main */

static void usage(void) {
  fprintf(stderr, "usage: fuzz_tensor [--seed N] [--count N | --minutes M] [--devices CPU,LLVM,INTERP,WEBGPU] [--verbose]\n");
}

static int parse(int argc, char **argv, opts *o) {
  *o = (opts){.seed = 1, .count = 100, .minutes = 0, .devices = "INTERP,CPU,LLVM,WEBGPU"};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--verbose")) o->verbose = true;
    else if (v && !strcmp(a, "--seed")) o->seed = strtoull(v, NULL, 0), i++;
    else if (v && !strcmp(a, "--count")) o->count = strtol(v, NULL, 0), o->minutes = 0, i++;
    else if (v && !strcmp(a, "--minutes")) o->minutes = strtod(v, NULL), o->count = 0, i++;
    else if (v && !strcmp(a, "--devices")) o->devices = v, i++;
    else return usage(), -1;
  }
  return 0;
}

/* the devices named in list that can run here (asked in a child: the parent never starts a device) */
static int pick_devices(const char *list, devset *ds, char *names, size_t n) {
  memset(ds, 0, sizeof *ds);
  names[0] = 0;
  for (int d = 0; d < MAXDEV; d++) {
    const char *hit = strstr(list, all_devices[d]);
    size_t len = strlen(all_devices[d]);
    if (!hit || (hit != list && hit[-1] != ',') || (hit[len] && hit[len] != ',')) continue;
    memset(shm, 0, sizeof *shm);
    pid_t pid = fork();
    if (pid == 0) {
      shm->fail_node = tkc_device_available(all_devices[d]);
      _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    if (shm->fail_node == 1) {
      ds->on[d] = true;
      snprintf(names + strlen(names), n - strlen(names), "%s%s", names[0] ? "," : "", all_devices[d]);
    }
  }
  return names[0] ? 0 : -1;
}

static void report(const fz_prog *orig, const failure *f, const devset *all, bool verbose) {
  printf("FAIL seed %" PRIu64 ": %s: %s\n", orig->seed, fkind_names[f->kind], f->msg);
  if (verbose) {
    printf("  original program:\n");
    fz_print_c(orig, all_devices[f->dev], stdout);
  }
  fz_prog p = *orig;
  minimizer m = {.budget = 300, .deadline = now_s() + 180};
  minimize(&p, f, &m);
  failure g;
  int skipped = 0;
  devset one = m.ds;
  (void)all;
  if (check_prog(&p, &one, &g, &skipped) == 0) g = *f; /* flaky: print what was found */
  printf("  minimized (%d tries): %s: %s\n  {\n", m.tries, fkind_names[g.kind], g.msg);
  fz_print_c(&p, all_devices[f->dev], stdout);
  printf("  }\n");
  fflush(stdout);
}

int main(int argc, char **argv) {
  opts o;
  if (parse(argc, argv, &o)) return 2;
  shm_size = sizeof(child_out) + (size_t)FZ_MAXNODES * (FZ_MAXNUMEL * 8 + 16) + 4096;
  shm = mmap(NULL, shm_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shm == MAP_FAILED) return perror("mmap"), 2;
  /* lavapipe (WEBGPU) complains on every start when XDG_RUNTIME_DIR is unset */
  char xdg[] = "/tmp/fuzz_tensor_xdg_XXXXXX";
  if (!getenv("XDG_RUNTIME_DIR") && mkdtemp(xdg)) setenv("XDG_RUNTIME_DIR", xdg, 0);
  devset ds;
  char names[128];
  if (pick_devices(o.devices, &ds, names, sizeof names)) {
    fprintf(stderr, "fuzz_tensor: none of the devices %s can run here\n", o.devices);
    return 2;
  }
  double t0 = now_s(), stop = o.minutes > 0 ? t0 + o.minutes * 60 : INFINITY;
  long programs = 0, failures = 0, invalid = 0;
  int skipped = 0;
  for (long k = 0; o.count ? k < o.count : now_s() < stop; k++) {
    fz_prog p;
    fz_generate(&p, o.seed + (uint64_t)k, NULL);
    if (fz_infer_all(&p)) {
      fprintf(stderr, "fuzz_tensor: seed %" PRIu64 ": the generator made an invalid program\n", p.seed);
      failures++;
      continue;
    }
    invalid += p.n && p.node[p.n - 1].expect_fail;
    if (o.verbose) {
      printf("== seed %" PRIu64 " (%d nodes)\n", p.seed, p.n);
      fz_print_c(&p, "INTERP", stdout);
    }
    failure f;
    programs++;
    if (check_prog(&p, &ds, &f, &skipped)) {
      failures++;
      report(&p, &f, &ds, o.verbose);
    }
  }
  printf("fuzz_tensor: %ld programs (%ld with an invalid op, %d device runs skipped: unsupported dtype, or inf/NaN inputs on WEBGPU), devices %s, %ld failures, %.2f minutes, seeds %" PRIu64
         "..%" PRIu64 "\n",
         programs, invalid, skipped, names, failures, (now_s() - t0) / 60, o.seed, o.seed + (uint64_t)(programs ? programs - 1 : 0));
  munmap(shm, shm_size);
  if (!strcmp(getenv("XDG_RUNTIME_DIR") ? getenv("XDG_RUNTIME_DIR") : "", xdg)) rmdir(xdg);
  return failures ? 1 : 0;
}
