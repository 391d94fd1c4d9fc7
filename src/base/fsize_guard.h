/* src/base/fsize_guard.h — file writes that fail instead of killing the host.
 *
 * Past the file size limit (RLIMIT_FSIZE, `ulimit -f`) write() raises SIGXFSZ, whose default
 * action ends the process. A library must neither die of it nor change the process's signal
 * dispositions, so the writes of kernel sources, objects and disk cache entries run between
 * tkc_fsize_guard_begin and tkc_fsize_guard_end: SIGXFSZ is blocked in the calling thread (write()
 * then fails with EFBIG, "File too large"), and at the end a SIGXFSZ the writes raised is taken off
 * the pending set (one that was pending before stays) before the thread's mask is restored. */
#ifndef TKC_FSIZE_GUARD_H
#define TKC_FSIZE_GUARD_H
#include <signal.h>
#include "base/common.h"

typedef struct tkc_fsize_guard {
  sigset_t old_mask; /* the thread's mask before */
  int was_pending;   /* SIGXFSZ was pending before: not ours to take */
  int ok;            /* the mask was changed (restore it) */
} tkc_fsize_guard;

TKC_HIDDEN void tkc_fsize_guard_begin(tkc_fsize_guard *g);
TKC_HIDDEN void tkc_fsize_guard_end(tkc_fsize_guard *g);

#endif
