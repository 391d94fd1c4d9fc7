/* src/runtime/cuda.h — what the CUDA device tells the rest of tkc (internal). */
#ifndef TKC_RUNTIME_CUDA_H
#define TKC_RUNTIME_CUDA_H

#include "base/common.h"

/* Limits of the CUDA device tkc runs on (device 0), for the renderer's capabilities and the lowerer. */
typedef struct tkc_cuda_limits {
  char name[128];             /* "NVIDIA H200" */
  int sm;                     /* compute capability major*10 + minor (90) */
  int max_threads_per_block;  /* product of the local sizes */
  int max_block[3];           /* local size per axis */
  int max_grid[3];            /* global size per axis */
  int shared_per_block;       /* static shared memory per block (bytes) */
  int shared_per_block_optin; /* with the opt-in (dynamic shared memory) */
  int multiprocessors;
  int warp_size;
} tkc_cuda_limits;

/* Fills *out and returns 1 when the CUDA device is available; 0 otherwise (out untouched). */
TKC_HIDDEN int tkc_cuda_device_limits(tkc_cuda_limits *out);

/* Loads the driver library at path (NULL: $TKC_LIBCUDA, else "libcuda.so.1"), runs cuInit and
 * counts devices, then unloads it again; the process-wide CUDA device is not touched. Returns 1 when a
 * device would be usable, else 0 with the reason in why. For tests of the error paths (a missing
 * library, the toolkit's stub libcuda). */
TKC_HIDDEN int tkc_cuda_probe(const char *path, char *why, size_t n);

/* The name of a CUresult ("CUDA_ERROR_NO_DEVICE"), from tkc's own table (the stub driver cannot
 * answer cuGetErrorName); "CUDA_ERROR_<code>" for unknown codes, in a static buffer per thread. */
TKC_HIDDEN const char *tkc_cuda_error_name(int code);

#endif
