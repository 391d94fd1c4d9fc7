/* test_onnx_node.c — the ONNX backend node tests (onnx/backend/test/data/node of the pinned onnx
 * wheel) through tkc_onnx_load / tkc_onnx_run on INTERP and CPU ($TKC_ONNX_DEVICES to change),
 * compared with onnx's tolerance (rtol 1e-3, atol 1e-7 times the output's largest magnitude when above 1; a few ulps for float16 and bfloat16). A plain counted runner: each test runs in
 * a child process (a crash or a hang is a counted failure, not the end of the run). It prints
 * passed / failed / skipped by reason; it fails when any test fails. A test is skipped only for a
 * reason it names: a dtype tkc has no type for (string, complex, the fnuz and e8m0 float8s, 4-bit), sequences,
 * optionals, training ops, another domain, random draws (Bernoulli, Random*: no reference can match
 * them), or an op/attribute the frontend refuses with TKC_EUNSUPPORTED (tallied by op).
 *   test_onnx_node [substring]      only the tests whose folder name contains substring
 * TKC_ONNX_NODE_DIR overrides the folder found at configure time. */
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tkc.h"
#include "tkc/onnx.h"
#ifdef TKC_HAVE_ONNX
#include "frontend/onnx/onnx_internal.h"

enum { R_PASS, R_FAIL, R_ERROR, R_SKIP };

static uint8_t *read_file(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc(len > 0 ? (size_t)len : 1);
  if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *n = (size_t)len;
  return buf;
}

/* a skip reason from the model alone, or NULL */
static const char *type_reason(int32_t t) {
  switch (t) {
  case 8: return "string dtype";
  case 14: case 15: return "complex dtype";
  case 18: case 20: case 24: return "float8 dtype without a tkc type (fnuz, e8m0)";
  case 21: case 22: case 23: case 25: case 26: return "4-bit/2-bit dtype";
  default: return NULL;
  }
}
static const char *value_reason(const Onnx__TypeProto *tp) {
  if (!tp) return NULL;
  switch (tp->value_case) {
  case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: return "sequences";
  case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: return "optionals";
  case ONNX__TYPE_PROTO__VALUE_MAP_TYPE: case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE: return "maps/sparse";
  case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE: return tp->tensor_type && tp->tensor_type->has_elem_type ? type_reason(tp->tensor_type->elem_type) : NULL;
  default: return NULL;
  }
}
static const char *model_reason(const Onnx__ModelProto *mp) {
  for (size_t i = 0; i < mp->n_opset_import; i++)
    if (mp->opset_import[i]->domain && strstr(mp->opset_import[i]->domain, "training")) return "training ops";
  const Onnx__GraphProto *g = mp->graph;
  if (!g) return NULL;
  for (size_t i = 0; i < g->n_input; i++) {
    const char *r = value_reason(g->input[i]->type);
    if (r) return r;
  }
  for (size_t i = 0; i < g->n_output; i++) {
    const char *r = value_reason(g->output[i]->type);
    if (r) return r;
  }
  for (size_t i = 0; i < g->n_node; i++) {
    const Onnx__NodeProto *nd = g->node[i];
    if (nd->domain && strstr(nd->domain, "training")) return "training ops";
    if (nd->domain && *nd->domain && strcmp(nd->domain, "ai.onnx")) return "other domain";
    /* their outputs are random draws that no reference can match value for value */
    static const char *const random_ops[] = {"Bernoulli", "RandomUniform", "RandomUniformLike", "RandomNormal", "RandomNormalLike", "Multinomial"};
    for (size_t k = 0; k < sizeof random_ops / sizeof *random_ops; k++)
      if (nd->op_type && !strcmp(nd->op_type, random_ops[k])) return "random values (not comparable)";
    for (size_t k = 0; k < nd->n_attribute; k++) {
      const Onnx__AttributeProto *a = nd->attribute[k];
      if (a->has_i && a->name && (!strcmp(a->name, "to") || !strcmp(a->name, "dtype") || !strcmp(a->name, "output_datatype"))) {
        const char *r = type_reason((int32_t)a->i);
        if (r) return r;
      }
      if (a->t && a->t->has_data_type && type_reason(a->t->data_type)) return type_reason(a->t->data_type);
    }
  }
  for (size_t i = 0; i < g->n_initializer; i++)
    if (g->initializer[i]->has_data_type && type_reason(g->initializer[i]->data_type)) return type_reason(g->initializer[i]->data_type);
  return NULL;
}

static double elem(tkc_dtype dt, const void *p, int64_t i) {
  switch (dt) {
  case TKC_BOOL: case TKC_UINT8: return ((const uint8_t *)p)[i];
  case TKC_INT8: return ((const int8_t *)p)[i];
  case TKC_INT16: return ((const int16_t *)p)[i];
  case TKC_UINT16: return ((const uint16_t *)p)[i];
  case TKC_INT32: return ((const int32_t *)p)[i];
  case TKC_UINT32: return ((const uint32_t *)p)[i];
  case TKC_INT64: return (double)((const int64_t *)p)[i];
  case TKC_UINT64: return (double)((const uint64_t *)p)[i];
  case TKC_FLOAT32: return ((const float *)p)[i];
  case TKC_FLOAT64: return ((const double *)p)[i];
  case TKC_BFLOAT16: {
    uint32_t b = (uint32_t)((const uint16_t *)p)[i] << 16;
    float f;
    memcpy(&f, &b, 4);
    return f;
  }
  case TKC_FLOAT16: {
    uint16_t h = ((const uint16_t *)p)[i];
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
  }
  case TKC_FLOAT8_E4M3FN: case TKC_FLOAT8_E5M2: return tkc_fp8_to_float(((const uint8_t *)p)[i], dt);
  default: return NAN;
  }
}

/* one test on one device: R_* and a message */
static int run_one(const char *dir, const char *device, char *msg, size_t msz) {
  char path[4200];
  tkc_ctx *ctx = tkc_ctx_new(device);
  if (!ctx) return snprintf(msg, msz, "no ctx: %s", tkc_last_error()), R_ERROR;
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  tkc_onnx_model *m = tkc_onnx_load(ctx, path);
  int rc = R_PASS;
  tkc_tensor *ins[64] = {0}, *outs[64] = {0};
  if (!m) {
    snprintf(msg, msz, "%s", tkc_last_error());
    rc = tkc_last_status() == TKC_EUNSUPPORTED ? R_SKIP : R_ERROR;
    goto done;
  }
  int nin = tkc_onnx_num_inputs(m), nout = tkc_onnx_num_outputs(m);
  if (nin > 64 || nout > 64) {
    snprintf(msg, msz, "too many inputs/outputs");
    rc = R_SKIP;
    goto done;
  }
  for (int i = 0; i < nin; i++) {
    size_t n;
    snprintf(path, sizeof path, "%s/test_data_set_0/input_%d.pb", dir, i);
    uint8_t *buf = read_file(path, &n);
    Onnx__TensorProto *tp = buf ? onnx__tensor_proto__unpack(NULL, n, buf) : NULL;
    free(buf);
    if (!tp) {
      snprintf(msg, msz, "cannot read %.900s", path);
      rc = R_ERROR;
      goto done;
    }
    ins[i] = onnx_tensor_from_proto(ctx, tp, NULL, NULL);
    onnx__tensor_proto__free_unpacked(tp, NULL);
    if (!ins[i]) {
      snprintf(msg, msz, "input %d: %s", i, tkc_last_error());
      rc = tkc_last_status() == TKC_EUNSUPPORTED ? R_SKIP : R_ERROR;
      goto done;
    }
  }
  if (tkc_onnx_run(m, nin, ins, nout, outs) != TKC_OK) {
    snprintf(msg, msz, "%s", tkc_last_error());
    rc = tkc_last_status() == TKC_EUNSUPPORTED ? R_SKIP : R_ERROR;
    goto done;
  }
  for (int i = 0; i < nout && rc == R_PASS; i++) {
    size_t n;
    snprintf(path, sizeof path, "%s/test_data_set_0/output_%d.pb", dir, i);
    uint8_t *buf = read_file(path, &n);
    Onnx__TensorProto *tp = buf ? onnx__tensor_proto__unpack(NULL, n, buf) : NULL;
    free(buf);
    tkc_dtype dt;
    int nd;
    int64_t shape[ONNX_MAX_DIMS];
    void *want = NULL;
    size_t nb;
    if (!tp || onnx_tensor_decode(tp, NULL, &dt, &nd, shape, &want, &nb) != TKC_OK) {
      if (tp) onnx__tensor_proto__free_unpacked(tp, NULL);
      snprintf(msg, msz, "cannot read %.900s", path);
      rc = R_ERROR;
      break;
    }
    onnx__tensor_proto__free_unpacked(tp, NULL);
    tkc_tensor *o = outs[i];
    int shape_ok = tkc_ndim(o) == nd;
    for (int d = 0; d < nd && shape_ok; d++) shape_ok = tkc_dim(o, d) == shape[d];
    if (tkc_dtype_of(o) != dt || !shape_ok) {
      snprintf(msg, msz, "output %d: %s of %d dims (first %lld), expected %s of %d dims (first %lld)", i, tkc_dtype_name(tkc_dtype_of(o)), tkc_ndim(o),
               (long long)tkc_dim(o, 0), tkc_dtype_name(dt), nd, nd ? (long long)shape[0] : -1LL);
      rc = R_FAIL;
      free(want);
      break;
    }
    void *got = malloc(nb ? nb : 1);
    if (tkc_copy_out(o, got, nb) != TKC_OK) {
      snprintf(msg, msz, "output %d: %s", i, tkc_last_error());
      rc = tkc_last_status() == TKC_EUNSUPPORTED ? R_SKIP : R_ERROR;
    } else {
      int64_t ne = (int64_t)(nb / onnx_itemsize(dt));
      /* onnx's rtol 1e-3 is one float16 ulp: the reference rounds every step to float16 (bfloat16), a
       * fused kernel keeps float32 between them, so the 16-bit floats get a few of their ulps */
      double rtol = dt == TKC_FLOAT16 ? 4e-3 : dt == TKC_BFLOAT16 ? 3e-2 : 1e-3;
      /* atol 1e-7 at the output's scale: a reference computed in float32 leaves noise of about
       * 1e-7 * its largest value where the exact answer is 0 (test_dft_inverse) */
      double scale = 1;
      for (int64_t k = 0; k < ne; k++) {
        double w = fabs(elem(dt, want, k));
        if (isfinite(w) && w > scale) scale = w;
      }
      for (int64_t k = 0; k < ne; k++) {
        double g = elem(dt, got, k), w = elem(dt, want, k);
        int ok = (isnan(g) && isnan(w)) || g == w || fabs(g - w) <= 1e-7 * scale + rtol * fabs(w);
        if (!ok) {
          snprintf(msg, msz, "output %d [%lld]: %.9g, expected %.9g (%lld values)", i, (long long)k, g, w, (long long)ne);
          rc = R_FAIL;
          break;
        }
      }
    }
    free(got);
    free(want);
  }
done:
  tkc_onnx_free(m);
  tkc_ctx_free(ctx);
  return rc;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

typedef struct tally {
  char name[64];
  int count;
} tally;
static void tally_add(tally *t, int *nt, const char *name) {
  for (int i = 0; i < *nt; i++)
    if (!strcmp(t[i].name, name)) return (void)t[i].count++;
  if (*nt < 512) {
    snprintf(t[*nt].name, sizeof t[*nt].name, "%s", name);
    t[(*nt)++].count = 1;
  }
}

int main(int argc, char **argv) {
  const char *root = getenv("TKC_ONNX_NODE_DIR");
#ifdef TKC_ONNX_NODE_DIR_DEFAULT
  if (!root || !*root) root = TKC_ONNX_NODE_DIR_DEFAULT;
#endif
  DIR *d = root && *root ? opendir(root) : NULL;
  if (!d) {
    printf("skipped: no ONNX node tests (pip install onnx==1.22.0, then reconfigure; or set TKC_ONNX_NODE_DIR)\n");
    return 0;
  }
  const char *filter = argc > 1 ? argv[1] : NULL;
  char devs_buf[256];
  snprintf(devs_buf, sizeof devs_buf, "%s", getenv("TKC_ONNX_DEVICES") ? getenv("TKC_ONNX_DEVICES") : "INTERP,CPU");
  const char *devices[8];
  int ndev = 0;
  for (char *tok = strtok(devs_buf, ","); tok && ndev < 8; tok = strtok(NULL, ",")) {
    /* probed in a child: a device runtime started here (wgpu's threads) would not survive the forks */
    pid_t pid = fork();
    if (pid == 0) _exit(tkc_device_available(tok) ? 0 : 1);
    int status = 0;
    if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0) devices[ndev++] = tok;
    else printf("device %s is not available here: not run\n", tok);
  }
  char **names = NULL;
  size_t nn = 0, cap = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (strncmp(e->d_name, "test_", 5) || (filter && !strstr(e->d_name, filter))) continue;
    if (nn == cap) names = realloc(names, (cap = cap ? cap * 2 : 256) * sizeof *names);
    names[nn++] = strdup(e->d_name);
  }
  closedir(d);
  if (nn) qsort(names, nn, sizeof *names, cmp_str);
  int passed = 0, failed = 0, skipped = 0, nr = 0, no = 0;
  tally reasons[512], ops[512];
  for (size_t t = 0; t < nn; t++) {
    char dir[4000], path[4200];
    snprintf(dir, sizeof dir, "%s/%s", root, names[t]);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    size_t n;
    uint8_t *buf = read_file(path, &n);
    Onnx__ModelProto *mp = buf ? onnx__model_proto__unpack(NULL, n, buf) : NULL;
    free(buf);
    const char *why = mp ? model_reason(mp) : "unreadable model";
    if (mp) onnx__model_proto__free_unpacked(mp, NULL);
    if (why) {
      skipped++;
      tally_add(reasons, &nr, why);
      continue;
    }
    int result = R_PASS;
    char msg[1024] = "";
    for (int k = 0; k < ndev && result == R_PASS; k++) {
      int fds[2];
      if (pipe(fds)) return 2;
      fflush(stdout);
      pid_t pid = fork();
      if (pid == 0) {
        close(fds[0]);
        alarm(300);
        char m[1024] = "";
        int r = run_one(dir, devices[k], m, sizeof m);
        dprintf(fds[1], "%d\t%s", r, m);
        _exit(0);
      }
      close(fds[1]);
      char out[1100] = "";
      ssize_t got = 0, r;
      while ((r = read(fds[0], out + got, sizeof out - 1 - (size_t)got)) > 0) got += r;
      out[got > 0 ? got : 0] = 0;
      close(fds[0]);
      int status = 0;
      waitpid(pid, &status, 0);
      char *tab = strchr(out, '\t');
      if (!tab) {
        result = R_FAIL;
        snprintf(msg, sizeof msg, "%s: crashed (%s)", devices[k],
                 WIFSIGNALED(status) ? (WTERMSIG(status) == SIGALRM ? "timeout" : strsignal(WTERMSIG(status))) : "no result");
      } else {
        result = atoi(out);
        snprintf(msg, sizeof msg, "%s: %s", devices[k], tab + 1);
      }
    }
    if (result == R_PASS) passed++;
    else if (result == R_SKIP) {
      skipped++;
      tally_add(reasons, &nr, "unsupported op/attribute (TKC_EUNSUPPORTED)");
      const char *p = strstr(msg, "node ");
      char op[64] = "(other)";
      if (p) sscanf(p + 5, "%63s", op);
      else if (strstr(msg, "dtype")) snprintf(op, sizeof op, "(dtype)");
      else if (strstr(msg, "opset")) snprintf(op, sizeof op, "(opset)");
      tally_add(ops, &no, op);
      if (getenv("TKC_ONNX_VERBOSE")) printf("SKIP %s: %s\n", names[t], msg);
    } else {
      failed++;
      printf("FAIL %s: %s%s\n", names[t], result == R_ERROR ? "error: " : "", msg);
    }
    fflush(stdout);
  }
  printf("\nONNX node tests on");
  for (int k = 0; k < ndev; k++) printf(" %s", devices[k]);
  printf(": %zu tests, %d passed, %d failed, %d skipped\n", nn, passed, failed, skipped);
  for (int i = 0; i < nr; i++) printf("  skipped %4d: %s\n", reasons[i].count, reasons[i].name);
  if (no) {
    printf("  unsupported, by op:");
    for (int i = 0; i < no; i++) printf(" %s(%d)", ops[i].name, ops[i].count);
    printf("\n");
  }
  for (size_t t = 0; t < nn; t++) free(names[t]);
  free(names);
  return failed ? 1 : 0;
}
#else
int main(void) {
  printf("skipped: tkc was built without the ONNX frontend\n");
  return 0;
}
#endif
