/* src/runtime/cuda.c — the "CUDA" device: NVIDIA GPUs through the CUDA driver API, running kernels
 * rendered by the "PTX" renderer (tinygrad's CUDADevice with PTX=1, runtime/ops_cuda.py).
 *
 * The driver is loaded at run time: dlopen("libcuda.so.1") (or $TKC_LIBCUDA) and dlsym of every entry
 * point, the `_v2` ones by their `_v2` names, so tkc has no link-time dependency on CUDA and a machine
 * without a driver simply reports the device as unavailable. The first use opens the device once per
 * process: cuInit, device 0, its primary context (cuDevicePrimaryCtxRetain; made current on every
 * call, so any thread may use the device), the device limits, and its compute capability, which
 * becomes the PTX renderer's target unless one was chosen (see src/render/ptx.h).
 *
 * Memory: cuMemAlloc/cuMemFree; a CUdeviceptr travels in the void* of the device interface. Copies are
 * synchronous cuMemcpyHtoD/DtoH. Compile: cuModuleLoadDataEx on the PTX text with an error-log buffer
 * whose content becomes the TKC_ECOMPILE message, then cuModuleGetFunction. Launch: cuLaunchKernel with
 * the kernel's global/local sizes (tkc_kernel_launch_dims) and its parameters (device pointers, then
 * one int per variable in the kernel's order), then cuCtxSynchronize so that faults are reported by
 * the launch that caused them (as TKC_ERUNTIME; a fault leaves the CUDA context unusable, as in CUDA).
 * CUresult names come from tkc's own table: the toolkit's stub libcuda answers even cuGetErrorName
 * with CUDA_ERROR_STUB_LIBRARY. */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "render/ptx.h"
#include "runtime/cuda.h"
#include "runtime/device.h"

/* ---------------------------------------------------------------- driver API (the subset used) */

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;

enum { /* CUdevice_attribute */
  ATTR_MAX_THREADS_PER_BLOCK = 1, ATTR_MAX_BLOCK_DIM_X = 2, ATTR_MAX_GRID_DIM_X = 5, ATTR_MAX_SHARED_PER_BLOCK = 8,
  ATTR_WARP_SIZE = 10, ATTR_MULTIPROCESSORS = 16, ATTR_CC_MAJOR = 75, ATTR_CC_MINOR = 76, ATTR_MAX_SHARED_OPTIN = 97,
};
enum { JIT_ERROR_LOG_BUFFER = 5, JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6 }; /* CUjit_option */
enum { CU_ERROR_STUB_LIBRARY = 34, CU_ERROR_NO_DEVICE = 100 };

typedef struct driver {
  void *lib;
  CUresult (*Init)(unsigned);
  CUresult (*DeviceGetCount)(int *);
  CUresult (*DeviceGet)(CUdevice *, int);
  CUresult (*DeviceGetName)(char *, int, CUdevice);
  CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*CtxSetCurrent)(CUcontext);
  CUresult (*CtxSynchronize)(void);
  CUresult (*MemAlloc)(CUdeviceptr *, size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*ModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **);
  CUresult (*ModuleUnload)(CUmodule);
  CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **, void **);
} driver;

static const struct {
  const char *name;
  size_t off;
} driver_syms[] = {
    {"cuInit", offsetof(driver, Init)},
    {"cuDeviceGetCount", offsetof(driver, DeviceGetCount)},
    {"cuDeviceGet", offsetof(driver, DeviceGet)},
    {"cuDeviceGetName", offsetof(driver, DeviceGetName)},
    {"cuDeviceGetAttribute", offsetof(driver, DeviceGetAttribute)},
    {"cuDevicePrimaryCtxRetain", offsetof(driver, DevicePrimaryCtxRetain)},
    {"cuCtxSetCurrent", offsetof(driver, CtxSetCurrent)},
    {"cuCtxSynchronize", offsetof(driver, CtxSynchronize)},
    {"cuMemAlloc_v2", offsetof(driver, MemAlloc)},
    {"cuMemFree_v2", offsetof(driver, MemFree)},
    {"cuMemcpyHtoD_v2", offsetof(driver, MemcpyHtoD)},
    {"cuMemcpyDtoH_v2", offsetof(driver, MemcpyDtoH)},
    {"cuMemsetD8_v2", offsetof(driver, MemsetD8)},
    {"cuModuleLoadDataEx", offsetof(driver, ModuleLoadDataEx)},
    {"cuModuleUnload", offsetof(driver, ModuleUnload)},
    {"cuModuleGetFunction", offsetof(driver, ModuleGetFunction)},
    {"cuLaunchKernel", offsetof(driver, LaunchKernel)},
};

/* ---------------------------------------------------------------- CUresult names */

static const struct {
  int code;
  const char *name;
} cu_errors[] = {
    {0, "CUDA_SUCCESS"}, {1, "CUDA_ERROR_INVALID_VALUE"}, {2, "CUDA_ERROR_OUT_OF_MEMORY"},
    {3, "CUDA_ERROR_NOT_INITIALIZED"}, {4, "CUDA_ERROR_DEINITIALIZED"}, {5, "CUDA_ERROR_PROFILER_DISABLED"},
    {34, "CUDA_ERROR_STUB_LIBRARY"}, {36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER"}, {46, "CUDA_ERROR_DEVICE_UNAVAILABLE"},
    {100, "CUDA_ERROR_NO_DEVICE"}, {101, "CUDA_ERROR_INVALID_DEVICE"}, {102, "CUDA_ERROR_DEVICE_NOT_LICENSED"},
    {200, "CUDA_ERROR_INVALID_IMAGE"}, {201, "CUDA_ERROR_INVALID_CONTEXT"}, {202, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT"},
    {205, "CUDA_ERROR_MAP_FAILED"}, {206, "CUDA_ERROR_UNMAP_FAILED"}, {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
    {214, "CUDA_ERROR_ECC_UNCORRECTABLE"}, {215, "CUDA_ERROR_UNSUPPORTED_LIMIT"}, {216, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE"},
    {218, "CUDA_ERROR_INVALID_PTX"}, {219, "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT"}, {220, "CUDA_ERROR_NVLINK_UNCORRECTABLE"},
    {221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND"}, {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
    {223, "CUDA_ERROR_JIT_COMPILATION_DISABLED"}, {224, "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY"},
    {225, "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC"}, {226, "CUDA_ERROR_CONTAINED"}, {300, "CUDA_ERROR_INVALID_SOURCE"},
    {301, "CUDA_ERROR_FILE_NOT_FOUND"}, {302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND"},
    {303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED"}, {304, "CUDA_ERROR_OPERATING_SYSTEM"}, {400, "CUDA_ERROR_INVALID_HANDLE"},
    {401, "CUDA_ERROR_ILLEGAL_STATE"}, {402, "CUDA_ERROR_LOSSY_QUERY"}, {500, "CUDA_ERROR_NOT_FOUND"},
    {600, "CUDA_ERROR_NOT_READY"}, {700, "CUDA_ERROR_ILLEGAL_ADDRESS"}, {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
    {702, "CUDA_ERROR_LAUNCH_TIMEOUT"}, {703, "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING"},
    {708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE"}, {709, "CUDA_ERROR_CONTEXT_IS_DESTROYED"}, {710, "CUDA_ERROR_ASSERT"},
    {714, "CUDA_ERROR_HARDWARE_STACK_ERROR"}, {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION"}, {716, "CUDA_ERROR_MISALIGNED_ADDRESS"},
    {717, "CUDA_ERROR_INVALID_ADDRESS_SPACE"}, {718, "CUDA_ERROR_INVALID_PC"}, {719, "CUDA_ERROR_LAUNCH_FAILED"},
    {720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"}, {721, "CUDA_ERROR_TENSOR_MEMORY_LEAK"}, {800, "CUDA_ERROR_NOT_PERMITTED"},
    {801, "CUDA_ERROR_NOT_SUPPORTED"}, {802, "CUDA_ERROR_SYSTEM_NOT_READY"}, {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"},
    {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"}, {805, "CUDA_ERROR_MPS_CONNECTION_FAILED"},
    {909, "CUDA_ERROR_TIMEOUT"}, {999, "CUDA_ERROR_UNKNOWN"},
};

const char *tkc_cuda_error_name(int code) {
  for (size_t i = 0; i < TKC_COUNTOF(cu_errors); i++)
    if (cu_errors[i].code == code) return cu_errors[i].name;
  static _Thread_local char buf[32];
  snprintf(buf, sizeof buf, "CUDA_ERROR_%d", code);
  return buf;
}

/* ---------------------------------------------------------------- loading the driver */

static const char *driver_path(const char *path) {
  if (path && *path) return path;
  const char *env = getenv("TKC_LIBCUDA");
  return env && *env ? env : "libcuda.so.1";
}

/* dlopen + dlsym + cuInit + a device count; 1 on success, else 0 with why (and nothing left loaded
 * unless cuInit had already succeeded) */
static int load_driver(driver *d, const char *path, char *why, size_t n) {
  memset(d, 0, sizeof *d);
  const char *p = driver_path(path);
  d->lib = dlopen(p, RTLD_NOW | RTLD_LOCAL);
  if (!d->lib) {
    const char *e = dlerror();
    snprintf(why, n, "%s not found (no NVIDIA driver installed?): %s", p, e ? e : "dlopen failed");
    return 0;
  }
  for (size_t i = 0; i < TKC_COUNTOF(driver_syms); i++) {
    void *f = dlsym(d->lib, driver_syms[i].name);
    if (!f) {
      snprintf(why, n, "%s has no %s (driver too old?)", p, driver_syms[i].name);
      dlclose(d->lib);
      d->lib = NULL;
      return 0;
    }
    memcpy((char *)d + driver_syms[i].off, &f, sizeof f); /* object -> function pointer */
  }
  CUresult r = d->Init(0);
  if (r) {
    snprintf(why, n, "cuInit: %s%s", tkc_cuda_error_name(r),
             r == CU_ERROR_STUB_LIBRARY ? " (the CUDA toolkit's stub libcuda was loaded, not a driver)"
             : r == CU_ERROR_NO_DEVICE  ? " (no CUDA-capable device)"
                                        : "");
    dlclose(d->lib);
    d->lib = NULL;
    return 0;
  }
  int count = 0;
  r = d->DeviceGetCount(&count);
  if (r || count < 1) {
    if (r) snprintf(why, n, "cuDeviceGetCount: %s", tkc_cuda_error_name(r));
    else snprintf(why, n, "no CUDA device (the driver reports 0 devices)");
    return 0;
  }
  return 1;
}

int tkc_cuda_probe(const char *path, char *why, size_t n) {
  driver d;
  char buf[320];
  if (!why || !n) why = buf, n = sizeof buf;
  why[0] = 0;
  int ok = load_driver(&d, path, why, n);
  if (d.lib) dlclose(d.lib);
  return ok;
}

/* ---------------------------------------------------------------- the process-wide device */

static struct {
  driver d;
  int ok;
  char why[320];
  CUdevice dev;
  CUcontext ctx;
  tkc_cuda_limits lim;
} G;
static pthread_once_t cuda_once = PTHREAD_ONCE_INIT;

static void cuda_open(void) {
#ifdef TKC_NO_CUDA
  snprintf(G.why, sizeof G.why, "tkc was built with TKC_WITH_CUDA=OFF");
  return;
#endif
  if (!load_driver(&G.d, NULL, G.why, sizeof G.why)) return; /* the library stays loaded once cuInit ran */
  CUresult r = G.d.DeviceGet(&G.dev, 0);
  if (!r) r = G.d.DevicePrimaryCtxRetain(&G.ctx, G.dev);
  if (r) {
    snprintf(G.why, sizeof G.why, "opening device 0: %s", tkc_cuda_error_name(r));
    return;
  }
  static const struct { int attr; size_t off; } attrs[] = {
      {ATTR_MAX_THREADS_PER_BLOCK, offsetof(tkc_cuda_limits, max_threads_per_block)},
      {ATTR_MAX_BLOCK_DIM_X, offsetof(tkc_cuda_limits, max_block[0])},
      {ATTR_MAX_BLOCK_DIM_X + 1, offsetof(tkc_cuda_limits, max_block[1])},
      {ATTR_MAX_BLOCK_DIM_X + 2, offsetof(tkc_cuda_limits, max_block[2])},
      {ATTR_MAX_GRID_DIM_X, offsetof(tkc_cuda_limits, max_grid[0])},
      {ATTR_MAX_GRID_DIM_X + 1, offsetof(tkc_cuda_limits, max_grid[1])},
      {ATTR_MAX_GRID_DIM_X + 2, offsetof(tkc_cuda_limits, max_grid[2])},
      {ATTR_MAX_SHARED_PER_BLOCK, offsetof(tkc_cuda_limits, shared_per_block)},
      {ATTR_MAX_SHARED_OPTIN, offsetof(tkc_cuda_limits, shared_per_block_optin)},
      {ATTR_MULTIPROCESSORS, offsetof(tkc_cuda_limits, multiprocessors)},
      {ATTR_WARP_SIZE, offsetof(tkc_cuda_limits, warp_size)},
  };
  for (size_t i = 0; i < TKC_COUNTOF(attrs) && !r; i++) {
    int v = 0;
    r = G.d.DeviceGetAttribute(&v, attrs[i].attr, G.dev);
    memcpy((char *)&G.lim + attrs[i].off, &v, sizeof v);
  }
  int major = 0, minor = 0;
  if (!r) r = G.d.DeviceGetAttribute(&major, ATTR_CC_MAJOR, G.dev);
  if (!r) r = G.d.DeviceGetAttribute(&minor, ATTR_CC_MINOR, G.dev);
  if (!r) r = G.d.DeviceGetName(G.lim.name, (int)sizeof G.lim.name - 1, G.dev);
  if (r) {
    snprintf(G.why, sizeof G.why, "querying device 0: %s", tkc_cuda_error_name(r));
    return;
  }
  G.lim.sm = major * 10 + minor;
  if (G.lim.sm < 75) {
    snprintf(G.why, sizeof G.why, "%s has compute capability %d.%d; the PTX renderer targets sm_75 and newer", G.lim.name, major, minor);
    return;
  }
  tkc_ptx_set_device_arch(G.lim.sm);
  G.ok = 1;
}

static int cuda_available(char *why, size_t n) {
  pthread_once(&cuda_once, cuda_open);
  if (!G.ok && why && n) snprintf(why, n, "%s", G.why);
  return G.ok;
}

int tkc_cuda_device_limits(tkc_cuda_limits *out) {
  if (!out || !cuda_available(NULL, 0)) return 0;
  *out = G.lim;
  return 1;
}

/* makes the device's context current on this thread */
static tkc_status enter(const char *what) {
  char why[320];
  if (!cuda_available(why, sizeof why)) return tkc_err(TKC_EDEVICE, "CUDA: %s: device unavailable: %s", what, why);
  CUresult r = G.d.CtxSetCurrent(G.ctx);
  return r ? tkc_err(TKC_ERUNTIME, "CUDA: %s: cuCtxSetCurrent: %s", what, tkc_cuda_error_name(r)) : TKC_OK;
}

/* enter() for cleanup (free, release): it runs after the failure being reported, often because
 * of it, so it records nothing and keeps that first error */
static bool enter_quietly(void) { return cuda_available(NULL, 0) && G.d.CtxSetCurrent(G.ctx) == 0; }

/* ---------------------------------------------------------------- memory */

static void *cuda_alloc_uninit(size_t nbytes) {
  if (enter("alloc")) return NULL;
  CUdeviceptr p = 0;
  CUresult r = G.d.MemAlloc(&p, nbytes ? nbytes : 1); /* a zero-size buffer is still a distinct buffer */
  if (r || !p) return tkc_err_null(TKC_ENOMEM, "CUDA: cuMemAlloc of %zu bytes: %s", nbytes, tkc_cuda_error_name(r));
  return (void *)(uintptr_t)p;
}

static void *cuda_alloc(size_t nbytes) { /* zero-filled: cuMemAlloc's memory is not */
  void *p = cuda_alloc_uninit(nbytes);
  CUresult r = p && nbytes ? G.d.MemsetD8((CUdeviceptr)(uintptr_t)p, 0, nbytes) : 0;
  if (r) {
    G.d.MemFree((CUdeviceptr)(uintptr_t)p);
    return tkc_err_null(TKC_ERUNTIME, "CUDA: cuMemsetD8 of %zu bytes: %s", nbytes, tkc_cuda_error_name(r));
  }
  return p;
}

static void cuda_free(void *p) {
  if (!p || !enter_quietly()) return;
  G.d.MemFree((CUdeviceptr)(uintptr_t)p);
}

static tkc_status cuda_copyin(void *dst, const void *src, size_t nbytes) {
  if (!nbytes) return TKC_OK;
  tkc_status st = enter("copy in");
  if (st) return st;
  CUresult r = G.d.MemcpyHtoD((CUdeviceptr)(uintptr_t)dst, src, nbytes);
  return r ? tkc_err(TKC_ERUNTIME, "CUDA: cuMemcpyHtoD of %zu bytes: %s", nbytes, tkc_cuda_error_name(r)) : TKC_OK;
}

static tkc_status cuda_copyout(void *dst, const void *src, size_t nbytes) {
  if (!nbytes) return TKC_OK;
  tkc_status st = enter("copy out");
  if (st) return st;
  CUresult r = G.d.MemcpyDtoH(dst, (CUdeviceptr)(uintptr_t)src, nbytes);
  return r ? tkc_err(TKC_ERUNTIME, "CUDA: cuMemcpyDtoH of %zu bytes: %s", nbytes, tkc_cuda_error_name(r)) : TKC_OK;
}

/* ---------------------------------------------------------------- programs */

typedef struct cuda_prog {
  CUmodule mod;
  CUfunction fn;
} cuda_prog;

#define JIT_LOG_BYTES (16 * 1024)

static tkc_status cuda_compile(const tkc_kernel *k, void **handle) {
  if (!handle) return tkc_err(TKC_EINVAL, "CUDA: compile needs a handle pointer");
  *handle = NULL;
  if (!k || !k->name || !k->source || !*k->source) return tkc_err(TKC_EINVAL, "CUDA: compile of an incomplete kernel");
  tkc_status st = enter("compile");
  if (st) return st;
  char *log = tkc_calloc(1, JIT_LOG_BYTES);
  cuda_prog *p = tkc_calloc(1, sizeof *p);
  if (!log || !p) {
    tkc_free(log);
    tkc_free(p);
    return tkc_err(TKC_ENOMEM, "CUDA: out of memory compiling %s", k->name);
  }
  int opts[2] = {JIT_ERROR_LOG_BUFFER, JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[2] = {log, (void *)(uintptr_t)(JIT_LOG_BYTES - 1)};
  CUresult r = G.d.ModuleLoadDataEx(&p->mod, k->source, 2, opts, vals);
  if (r) {
    st = tkc_err(TKC_ECOMPILE, "CUDA: cuModuleLoadDataEx rejected the PTX of kernel %s: %s%s%s", k->name, tkc_cuda_error_name(r),
                 *log ? "\n" : "", log);
  } else if ((r = G.d.ModuleGetFunction(&p->fn, p->mod, k->name))) {
    st = tkc_err(TKC_ECOMPILE, "CUDA: the module of kernel %s has no entry %s: %s", k->name, k->name, tkc_cuda_error_name(r));
    G.d.ModuleUnload(p->mod);
  }
  tkc_free(log);
  if (st) {
    tkc_free(p);
    return st;
  }
  *handle = p;
  return TKC_OK;
}

static void cuda_release(void *handle) {
  cuda_prog *p = handle;
  if (!p) return;
  if (enter_quietly()) G.d.ModuleUnload(p->mod);
  tkc_free(p);
}

static tkc_status cuda_launch(const tkc_kernel *k, void *handle, void *const *bufs, const int64_t *vars) {
  cuda_prog *p = handle;
  if (!k || !p || !p->fn) return tkc_err(TKC_EINVAL, "CUDA: launch of a kernel that was not compiled");
  if ((k->nbufs && !bufs) || (k->nvars && !vars)) return tkc_err(TKC_EINVAL, "CUDA: launch of %s without its buffers/variables", k->name);
  int64_t g[3], l[3];
  tkc_kernel_launch_dims(k, vars, g, l);
  for (int i = 0; i < 3; i++)
    if (g[i] <= 0 || l[i] <= 0) return TKC_OK; /* an empty grid: nothing to run */
  const tkc_cuda_limits *lim = &G.lim;
  tkc_status st = enter("launch");
  if (st) return st;
  for (int i = 0; i < 3; i++)
    if (g[i] > lim->max_grid[i] || l[i] > lim->max_block[i])
      return tkc_err(TKC_EINVAL, "CUDA: %s: launch size global[%d] = %lld / local[%d] = %lld exceeds the device's %d / %d", k->name, i,
                     (long long)g[i], i, (long long)l[i], lim->max_grid[i], lim->max_block[i]);
  if (l[0] * l[1] * l[2] > lim->max_threads_per_block)
    return tkc_err(TKC_EINVAL, "CUDA: %s: %lld threads per block exceed the device's %d", k->name, (long long)(l[0] * l[1] * l[2]),
                   lim->max_threads_per_block);
  int n = k->nbufs + k->nvars;
  CUdeviceptr *ptrs = tkc_calloc((size_t)k->nbufs + 1, sizeof *ptrs);
  int *ints = tkc_calloc((size_t)k->nvars + 1, sizeof *ints);
  void **params = tkc_calloc((size_t)n + 1, sizeof *params);
  if (!ptrs || !ints || !params) {
    tkc_free(ptrs), tkc_free(ints), tkc_free(params);
    return tkc_err(TKC_ENOMEM, "CUDA: out of memory launching %s", k->name);
  }
  for (int i = 0; i < k->nbufs; i++) {
    ptrs[i] = (CUdeviceptr)(uintptr_t)bufs[i];
    params[i] = &ptrs[i];
  }
  for (int i = 0; i < k->nvars; i++) {
    ints[i] = (int)vars[i];
    params[k->nbufs + i] = &ints[i];
  }
  CUresult r = G.d.LaunchKernel(p->fn, (unsigned)g[0], (unsigned)g[1], (unsigned)g[2], (unsigned)l[0], (unsigned)l[1], (unsigned)l[2], 0,
                                NULL, n ? params : NULL, NULL);
  if (r) st = tkc_err(TKC_ERUNTIME, "CUDA: cuLaunchKernel of %s: %s", k->name, tkc_cuda_error_name(r));
  else if ((r = G.d.CtxSynchronize())) st = tkc_err(TKC_ERUNTIME, "CUDA: kernel %s failed: %s", k->name, tkc_cuda_error_name(r));
  tkc_free(ptrs);
  tkc_free(ints);
  tkc_free(params);
  return st;
}

const tkc_device_impl tkc_device_cuda = {
    .name = "CUDA",
    .renderer = "PTX",
    .available = cuda_available,
    .alloc = cuda_alloc,
    .alloc_uninit = cuda_alloc_uninit,
    .free = cuda_free,
    .copyin = cuda_copyin,
    .copyout = cuda_copyout,
    .compile = cuda_compile,
    .release = cuda_release,
    .launch = cuda_launch,
};
