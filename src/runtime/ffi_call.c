/* libffi calls of compiled kernels (see ffi_call.h). */
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>
#include "runtime/ffi_call.h"
#include "runtime/thread_pool.h"

tkc_status tkc_ffi_prepare(tkc_ffi_sig *s, int nbufs, int nvars, const char *who) {
  return tkc_ffi_prepare_ex(s, nbufs, nvars, 0, who);
}

tkc_status tkc_ffi_prepare_ex(tkc_ffi_sig *s, int nbufs, int nvars, int nextra, const char *who) {
  int nargs = nbufs + nvars + nextra;
  s->nbufs = nbufs;
  s->nvars = nvars;
  s->nextra = nextra;
  s->atypes = NULL;
  if (nargs) {
    s->atypes = tkc_malloc((size_t)nargs * sizeof *s->atypes);
    if (!s->atypes) return tkc_err(TKC_ENOMEM, "%s: out of memory", who);
    for (int i = 0; i < nbufs; i++) s->atypes[i] = &ffi_type_pointer;
    for (int i = 0; i < nvars + nextra; i++) s->atypes[nbufs + i] = &ffi_type_sint;
  }
  if (ffi_prep_cif(&s->cif, FFI_DEFAULT_ABI, (unsigned)nargs, &ffi_type_void, s->atypes) != FFI_OK) {
    tkc_ffi_release(s);
    return tkc_err(TKC_EINTERNAL, "%s: ffi_prep_cif failed for %d arguments", who, nargs);
  }
  return TKC_OK;
}

void tkc_ffi_release(tkc_ffi_sig *s) {
  tkc_free(s->atypes);
  s->atypes = NULL;
}

tkc_status tkc_ffi_call(const tkc_ffi_sig *s, void (*fn)(void), void *const *bufs, const int64_t *vars, const char *who) {
  return tkc_ffi_call_ex(s, fn, bufs, vars, NULL, who);
}

tkc_status tkc_ffi_call_ex(const tkc_ffi_sig *s, void (*fn)(void), void *const *bufs, const int64_t *vars,
                           const int *extra, const char *who) {
  if ((s->nbufs && !bufs) || (s->nvars && !vars) || (s->nextra && !extra))
    return tkc_err(TKC_EINVAL, "%s: launch without its buffers/variables", who);
  enum { NSTACK = 32 };
  void *ptr_s[NSTACK], *val_s[3 * NSTACK];
  int int_s[2 * NSTACK];
  void **ptrs = ptr_s, **vals = val_s;
  int *ints = int_s;
  int heap = s->nbufs > NSTACK || s->nvars + s->nextra > 2 * NSTACK;
  if (heap) {
    ptrs = tkc_malloc(((size_t)s->nbufs + 1) * sizeof *ptrs);
    vals = tkc_malloc(((size_t)s->nbufs + (size_t)s->nvars + (size_t)s->nextra + 1) * sizeof *vals);
    ints = tkc_malloc(((size_t)s->nvars + (size_t)s->nextra + 1) * sizeof *ints);
    if (!ptrs || !vals || !ints) {
      tkc_free(ptrs), tkc_free(vals), tkc_free(ints);
      return tkc_err(TKC_ENOMEM, "%s: out of memory launching a kernel", who);
    }
  }
  for (int i = 0; i < s->nbufs; i++) {
    ptrs[i] = bufs[i];
    vals[i] = &ptrs[i];
  }
  for (int i = 0; i < s->nvars; i++) {
    ints[i] = (int)vars[i];
    vals[s->nbufs + i] = &ints[i];
  }
  for (int i = 0; i < s->nextra; i++) {
    ints[s->nvars + i] = extra[i];
    vals[s->nbufs + s->nvars + i] = &ints[s->nvars + i];
  }
  ffi_arg ret = 0;
  ffi_call((ffi_cif *)&s->cif, FFI_FN(fn), &ret, vals);
  if (heap) tkc_free(ptrs), tkc_free(vals), tkc_free(ints);
  return TKC_OK;
}

int tkc_ffi_threads(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1) n = 1;
  const char *env = getenv("TKC_CPU_THREADS");
  if (env && *env) {
    char *end;
    long cap = strtol(env, &end, 10);
    if (*end == 0 && cap >= 1 && cap < n) n = cap;
  }
  return n > 256 ? 256 : (int)n;
}

/* One threaded launch: every chunk reads it, a failing chunk records the first failure. */
typedef struct ffi_launch {
  const tkc_ffi_sig *s;
  void (*fn)(void);
  void *const *bufs;
  const int64_t *vars;
  const char *who;
  int ncores;
  atomic_int st;
} ffi_launch;

static void run_chunk(void *arg, int core) {
  ffi_launch *l = arg;
  int extra[2] = {core, l->ncores};
  tkc_status st = tkc_ffi_call_ex(l->s, l->fn, l->bufs, l->vars, extra, l->who);
  int ok = TKC_OK;
  if (st) atomic_compare_exchange_strong(&l->st, &ok, (int)st);
}

tkc_status tkc_ffi_call_parallel(const tkc_ffi_sig *s, void (*fn)(void), void *const *bufs, const int64_t *vars,
                                 int nthreads, const char *who) {
  if (s->nextra != 2) return tkc_err(TKC_EINTERNAL, "%s: a kernel without (core, ncores) parameters launched by core", who);
  int T = nthreads;
  if (T <= 1) {
    static const int one[2] = {0, 1};
    return tkc_ffi_call_ex(s, fn, bufs, vars, one, who);
  }
  if ((s->nbufs && !bufs) || (s->nvars && !vars)) return tkc_err(TKC_EINVAL, "%s: launch without its buffers/variables", who);
  ffi_launch l = {.s = s, .fn = fn, .bufs = bufs, .vars = vars, .who = who, .ncores = T};
  atomic_init(&l.st, TKC_OK);
  tkc_thread_pool_run(T, run_chunk, &l);
  tkc_status st = (tkc_status)atomic_load(&l.st);
  if (st) return tkc_err(st, "%s: a kernel chunk failed to launch", who);
  return TKC_OK;
}
