/* Blocking SIGXFSZ around file writes (see fsize_guard.h). */
#include "base/fsize_guard.h"
#include <errno.h>
#include <pthread.h>
#include <time.h>

static void xfsz_set(sigset_t *s) {
  sigemptyset(s);
  sigaddset(s, SIGXFSZ);
}

static int xfsz_pending(void) {
  sigset_t p;
  return !sigpending(&p) && sigismember(&p, SIGXFSZ) == 1;
}

void tkc_fsize_guard_begin(tkc_fsize_guard *g) {
  sigset_t s;
  xfsz_set(&s);
  int e = errno; /* callers report the errno of their writes: leave it as it was */
  g->ok = !pthread_sigmask(SIG_BLOCK, &s, &g->old_mask);
  g->was_pending = g->ok && xfsz_pending();
  errno = e;
}

void tkc_fsize_guard_end(tkc_fsize_guard *g) {
  if (!g->ok) return;
  int e = errno;
  sigset_t s;
  xfsz_set(&s);
  if (!g->was_pending) { /* raised by the writes: consumed here, never delivered when the mask comes back */
    const struct timespec now = {0, 0};
    while (xfsz_pending() && sigtimedwait(&s, NULL, &now) < 0 && errno == EINTR) {}
  }
  pthread_sigmask(SIG_SETMASK, &g->old_mask, NULL);
  g->ok = 0;
  errno = e;
}
