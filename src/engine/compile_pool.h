/* engine/compile_pool.c: compiling the kernels of one realize at once, on several threads where the
 * device allows it (a realize's first run waits for its slowest compile, not for their sum). */
#ifndef TKC_ENGINE_COMPILE_POOL_H
#define TKC_ENGINE_COMPILE_POOL_H

#include "base/common.h"
#include "tkc/runtime.h"

/* called on the compiling thread's caller as each program finishes, in the order they finish */
typedef void (*tkc_compiled_fn)(void *user, int i, double seconds);

/* How many threads compile for device d at once: the host's (tkc_ffi_threads: online CPUs, at most
 * $TKC_CPU_THREADS) where its compiles are thread-safe, else 1. */
TKC_HIDDEN int tkc_compile_threads(const tkc_device *d);

/* tkc_program_compile of progs[0..n) on up to threads threads (1: here, in order). Returns TKC_OK,
 * or the first failure with its message (raised again on this thread); every program is tried. */
TKC_HIDDEN tkc_status tkc_compile_all(tkc_program *const *progs, int n, int threads, tkc_compiled_fn done, void *user);

#endif
