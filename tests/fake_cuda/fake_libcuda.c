/* fake_libcuda.c — a stand-in for libcuda.so.1 with the 17 driver entries tkc's CUDA runtime uses,
 * so that the runtime's own logic (loading, context handling, memory, copies, module and launch
 * error paths) is tested on machines without a GPU. Device memory is host memory; modules are
 * accepted and kernels "run" without computing anything (what a kernel computes is checked on a
 * real GPU by scripts/gpu-check.sh, never here).
 *
 * Fresh device memory is filled with 0xa5, as real cuMemAlloc memory is not zeroed either.
 *
 * fake_cuda_fail(name) makes the entry called name fail with CUDA_ERROR_INVALID_CONTEXT (201) from
 * then on (NULL: none fails); the tests find it with dlsym. */
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

static const char *failing;
static int fails(const char *name) { return failing && !strcmp(failing, name); }
#define FAIL_IF(name) \
  if (fails(name)) return 201

void fake_cuda_fail(const char *name) { failing = name; }

static int ctx_token;
CUresult cuInit(unsigned flags) { (void)flags; return 0; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
CUresult cuDeviceGet(int *d, int i) { *d = i; return 0; }
CUresult cuDeviceGetName(char *s, int n, int d) {
  (void)d;
  strncpy(s, "fake sm_80", (size_t)n);
  return 0;
}
CUresult cuDeviceGetAttribute(int *v, int attr, int d) {
  (void)d;
  switch (attr) {
  case 1: *v = 1024; break;               /* threads per block */
  case 2: case 3: *v = 1024; break;       /* block x, y */
  case 4: *v = 64; break;                 /* block z */
  case 5: *v = 2147483647; break;         /* grid x */
  case 6: case 7: *v = 65535; break;      /* grid y, z */
  case 8: *v = 49152; break;              /* shared per block */
  case 10: *v = 32; break;                /* warp */
  case 16: *v = 108; break;               /* SMs */
  case 75: *v = 8; break;                 /* cc major */
  case 76: *v = 0; break;                 /* cc minor */
  case 97: *v = 166912; break;            /* shared opt-in */
  default: *v = 0;
  }
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(void **ctx, int d) {
  (void)d;
  *ctx = &ctx_token;
  return 0;
}
CUresult cuCtxSetCurrent(void *ctx) {
  FAIL_IF("cuCtxSetCurrent");
  return ctx == &ctx_token ? 0 : 201;
}
CUresult cuCtxSynchronize(void) { FAIL_IF("cuCtxSynchronize"); return 0; }
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
  FAIL_IF("cuMemAlloc_v2");
  void *m = malloc(n ? n : 1);
  if (!m) return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  memset(m, 0xa5, n ? n : 1);
  *p = (CUdeviceptr)(size_t)m;
  return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  FAIL_IF("cuMemFree_v2");
  free((void *)(size_t)p);
  return 0;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) {
  FAIL_IF("cuMemcpyHtoD_v2");
  memcpy((void *)(size_t)d, s, n);
  return 0;
}
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) {
  FAIL_IF("cuMemsetD8_v2");
  memset((void *)(size_t)d, v, n);
  return 0;
}
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) {
  FAIL_IF("cuMemcpyDtoH_v2");
  memcpy(d, (const void *)(size_t)s, n);
  return 0;
}
static int module_token;
CUresult cuModuleLoadDataEx(void **m, const void *img, unsigned n, int *opts, void **vals) {
  (void)img, (void)n, (void)opts, (void)vals;
  FAIL_IF("cuModuleLoadDataEx");
  *m = &module_token;
  return 0;
}
CUresult cuModuleUnload(void *m) { (void)m; return 0; }
CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
  (void)name;
  FAIL_IF("cuModuleGetFunction");
  *f = m;
  return 0;
}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned lx, unsigned ly, unsigned lz, unsigned sh, void *st,
                        void **params, void **extra) {
  (void)f, (void)gx, (void)gy, (void)gz, (void)lx, (void)ly, (void)lz, (void)sh, (void)st, (void)params, (void)extra;
  FAIL_IF("cuLaunchKernel");
  return 0;
}
