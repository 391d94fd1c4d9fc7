/* Calling a compiled kernel `void f(T *buf0, ..., int var0, ...)` through libffi: shared by the
 * devices that produce host function pointers (CPU, LLVM). Internal. */
#ifndef TKC_FFI_CALL_H
#define TKC_FFI_CALL_H

#include <ffi.h>
#include "base/common.h"

typedef struct tkc_ffi_sig {
  ffi_cif cif;
  ffi_type **atypes;
  int nbufs, nvars, nextra;
} tkc_ffi_sig;

/* Prepares the call interface for nbufs pointers then nvars ints; who names the device in errors. */
TKC_HIDDEN tkc_status tkc_ffi_prepare(tkc_ffi_sig *s, int nbufs, int nvars, const char *who);
/* The same with nextra more trailing ints (the CPU device's core / ncores). */
TKC_HIDDEN tkc_status tkc_ffi_prepare_ex(tkc_ffi_sig *s, int nbufs, int nvars, int nextra, const char *who);
TKC_HIDDEN void tkc_ffi_release(tkc_ffi_sig *s);
/* Calls fn with the buffers and the variables (narrowed to int). Thread-safe for one prepared sig. */
TKC_HIDDEN tkc_status tkc_ffi_call(const tkc_ffi_sig *s, void (*fn)(void), void *const *bufs, const int64_t *vars, const char *who);
/* The same passing s->nextra trailing ints from extra (NULL only when nextra is 0). */
TKC_HIDDEN tkc_status tkc_ffi_call_ex(const tkc_ffi_sig *s, void (*fn)(void), void *const *bufs, const int64_t *vars,
                                      const int *extra, const char *who);

/* Host kernels whose work (tkc_kernel_work_estimate) is below this run on one thread (a build may
 * lower it, e.g. -DTKC_CPU_PARALLEL_MIN_WORK=1, to run every splittable test kernel threaded). */
#ifndef TKC_CPU_PARALLEL_MIN_WORK
#define TKC_CPU_PARALLEL_MIN_WORK 32768
#endif
/* The number of threads for a big host kernel: the online CPUs, at most $TKC_CPU_THREADS when set
 * (1..256). */
TKC_HIDDEN int tkc_ffi_threads(void);
/* Runs a kernel prepared with nextra == 2 (core, ncores) as nthreads calls (core 0..nthreads-1,
 * ncores nthreads): core 0 on this thread, the others on the persistent worker threads of
 * thread_pool.h (all of them here when another thread's launch holds the pool), every call finished
 * before returning; nthreads <= 1 is one call with (0, 1) that uses no other thread. */
TKC_HIDDEN tkc_status tkc_ffi_call_parallel(const tkc_ffi_sig *s, void (*fn)(void), void *const *bufs, const int64_t *vars,
                                            int nthreads, const char *who);

#endif
