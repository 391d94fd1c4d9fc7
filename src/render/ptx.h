/* src/render/ptx.h — the PTX renderer's target selection, shared with the CUDA runtime (internal).
 *
 * The `.target` the PTX renderer emits (and the `.version` that goes with it) is, first found wins:
 *   1. the arch set with tkc_ptx_set_arch (process-wide),
 *   2. $TKC_CUDA_ARCH (read at every render),
 *   3. the compute capability of the CUDA device, once that device has been opened
 *      (tkc_ptx_set_device_arch, called by src/runtime/cuda.c),
 *   4. "sm_80".
 * Arch names are "sm_NN" with NN >= 75, optionally followed by "a" ("sm_90a"). Thread-safe. */
#ifndef TKC_RENDER_PTX_H
#define TKC_RENDER_PTX_H

#include <stdbool.h>
#include "base/common.h"

/* Sets the process-wide target ("sm_86"); NULL clears it. TKC_EINVAL for a malformed name or one
 * before sm_75 (the oldest target CUDA 13's ptxas accepts). */
TKC_HIDDEN tkc_status tkc_ptx_set_arch(const char *arch);
/* Records the CUDA device's compute capability (major*10 + minor, e.g. 90); 0 forgets it. */
TKC_HIDDEN void tkc_ptx_set_device_arch(int sm);
/* The target in effect: writes its name ("sm_80") into buf and returns the SM number (80); returns 0
 * with TKC_EINVAL (naming the value) when $TKC_CUDA_ARCH is set but malformed. */
TKC_HIDDEN int tkc_ptx_arch(char *buf, size_t n);
/* The PTX ISA version (".version") used for a target: "7.0" for sm_75/sm_80, "7.8" for sm_90, ... */
TKC_HIDDEN const char *tkc_ptx_isa_version(int sm, bool arch_specific);

#endif
