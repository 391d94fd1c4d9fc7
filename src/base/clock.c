/* The monotonic clock the timings use (launch times, build and search times). */
#include <time.h>
#include "base/common.h"

double tkc_now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
