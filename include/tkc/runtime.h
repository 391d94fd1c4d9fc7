/* tkc/runtime.h — devices, buffers, compiled programs and launches.
 *
 * Devices are static singletons found by name ("CPU", "INTERP"; more register the same way).
 * Buffers and programs are owned by the caller: free them with tkc_buffer_free/tkc_program_free.
 * Thread safety: devices may be used from several threads; one buffer or program at a time per thread.
 * The compiled-program cache is shared and locked.
 *
 * Stability: devices, buffers and programs are opaque handles and the functions here are stable.
 * tkc_pool_stats and tkc_disk_cache_info only gain fields between minor versions; the renderer
 * struct this header brings in (tkc/render.h) and struct tkc_uop (tkc/uop.h) may change.
 *
 * Debug output (stderr; nothing is printed otherwise). TKC_DEBUG=N, read once per process:
 *   1  a line per kernel built (and per beam search) and per launch (time, GFLOPS, GB/s)
 *   2  tinygrad's launch line instead: running number, device, unique kernel name, buffers, memory
 *      in use, time and cumulative time, GFLOPS, GB/s, launch sizes; and each recorded error
 *   3  each kernel's opts          4  its source, once per build      5  its linearized UOps
 *   6  its AST and lowered UOp graph                                7  LLVM's optimized IR
 * TKC_DEBUG_STAGE=name,name,... ("all": every stage), read once, whatever TKC_DEBUG is: the kernel
 * after each named stage of the codegen driver, once per kernel built (also by tkc_program_new,
 * which runs the stages from render_prep on). The stages, in order: transcendental, opts, lower,
 * simplify, late_rules, render_prep, renderer_rules, linearize (the instruction list), render (the
 * source). */
#ifndef TKC_RUNTIME_H
#define TKC_RUNTIME_H

#include "tkc/render.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tkc_device tkc_device;
typedef struct tkc_buffer tkc_buffer;
typedef struct tkc_program tkc_program;

/* The device with that name (case-sensitive: "CPU", "INTERP"); NULL + TKC_EDEVICE when unknown or
 * unavailable on this machine (the message says why). */
TKC_API tkc_device *tkc_device_get(const char *name);
/* 1 when the device exists and can run here, 0 otherwise (never sets an error). */
TKC_API int tkc_device_available(const char *name);
TKC_API const char *tkc_device_name(const tkc_device *d);
/* The renderer whose output this device runs (NULL for INTERP, which runs UOps directly). */
TKC_API const tkc_renderer *tkc_device_renderer(const tkc_device *d);
/* Names of every registered device, NULL-terminated (static). */
TKC_API const char *const *tkc_device_names(void);

/* A zero-filled buffer of n elements of dt on device d (n may be 0). NULL + TKC_EINVAL/TKC_ENOMEM. */
TKC_API tkc_buffer *tkc_buffer_new(tkc_device *d, tkc_dtype dt, size_t n);
/* The same with undefined contents (memory from the device's pool may hold earlier data): for
 * buffers that are written in full before they are read. */
TKC_API tkc_buffer *tkc_buffer_new_uninit(tkc_device *d, tkc_dtype dt, size_t n);
/* Frees b; its memory goes to the device's pool (see tkc_device_pool_stats). NULL is a no-op. */
TKC_API void tkc_buffer_free(tkc_buffer *b);

/* The buffer pool of a device: freed buffers' memory is kept by exact size and reused by the next
 * buffer of that size, at most TKC_POOL_MB megabytes (default 1024; 0: no pooling), the least
 * recently freed going first. allocs counts buffers the pool could not serve, reuses those it did. */
typedef struct tkc_pool_stats {
  int64_t allocs, reuses;
  size_t pooled_bytes, bound_bytes;
} tkc_pool_stats;
TKC_API tkc_status tkc_device_pool_stats(const tkc_device *d, tkc_pool_stats *out);
/* Gives every pooled buffer of d back to the device (tkc_ctx_free does this for its device). */
TKC_API void tkc_device_release_pool(tkc_device *d);

/* The on-disk cache of compiled kernels (CPU shared objects, LLVM object code): a second process
 * running the same program compiles nothing. Folder: $TKC_CACHE_DIR, else $XDG_CACHE_HOME/tkc, else
 * ~/.cache/tkc; TKC_CACHE_DIR= (empty) turns it off. Entries are keyed by the kernel's source, the
 * device, the compiler and its version and flags, the host CPU and tkc's version; writes are atomic,
 * files 0600 in 0700 folders of the user; a damaged entry is detected (checksum), removed and
 * rebuilt; TKC_CACHE_MB (default 1024) bounds the size, least recently used entries going first.
 * Counts are for this process: hits, misses (no entry), stores, rejected (damaged entries), errors
 * (files that could not be read or written: the kernel is built anyway). */
typedef struct tkc_disk_cache_info {
  int64_t hits, misses, stores, rejected, errors;
  int enabled; /* 0: TKC_CACHE_DIR is empty or no folder could be named */
  char dir[4096];
  int64_t bound_bytes;
} tkc_disk_cache_info;
TKC_API void tkc_disk_cache_stats(tkc_disk_cache_info *out);
TKC_API size_t tkc_buffer_nbytes(const tkc_buffer *b);
TKC_API size_t tkc_buffer_numel(const tkc_buffer *b);
TKC_API tkc_dtype tkc_buffer_dtype(const tkc_buffer *b);
/* Copies nbytes (must equal tkc_buffer_nbytes) in/out. TKC_EINVAL on NULL or size mismatch. */
TKC_API tkc_status tkc_buffer_copyin(tkc_buffer *b, const void *src, size_t nbytes);
TKC_API tkc_status tkc_buffer_copyout(const tkc_buffer *b, void *dst, size_t nbytes);

/* Compiles a kernel (a SINK of STOREs over DEFINE_GLOBAL/DEFINE_VAR/RANGE/LOAD/ALU UOps, as the
 * lowerer makes them) for device d: applies the renderer's rewrites, linearizes, renders and compiles
 * (or finds it in the program cache keyed by device + source). name may be NULL ("kernel").
 * NULL + TKC_EINVAL / TKC_EUNSUPPORTED / TKC_ECOMPILE (with the compiler's message). */
TKC_API tkc_program *tkc_program_new(tkc_device *d, tkc_graph *g, tkc_uop *sink, const char *name);
TKC_API void tkc_program_free(tkc_program *p);
TKC_API const char *tkc_program_name(const tkc_program *p);
TKC_API const char *tkc_program_source(const tkc_program *p);   /* "" for INTERP */
TKC_API int tkc_program_nbufs(const tkc_program *p);            /* DEFINE_GLOBALs, by arg number */
TKC_API int tkc_program_nvars(const tkc_program *p);            /* DEFINE_VARs, sorted by name */
TKC_API const char *tkc_program_var_name(const tkc_program *p, int i);
TKC_API bool tkc_program_buf_is_output(const tkc_program *p, int i);
/* FlopCounter-style estimates for the given variable values (vars may be NULL when nvars is 0). */
TKC_API int64_t tkc_program_ops(const tkc_program *p, const int64_t *vars);
TKC_API int64_t tkc_program_mem(const tkc_program *p, const int64_t *vars);
/* The global/local launch sizes for these variable values ({1,1,1} for loop-only kernels). */
TKC_API void tkc_program_launch_dims(const tkc_program *p, const int64_t *vars, int64_t global[3], int64_t local[3]);

/* Runs p with nbufs buffers (in DEFINE_GLOBAL order, each of p's device and at least as large as the
 * kernel indexes) and nvars int values (in tkc_program_var_name order, each within its bounds).
 * TKC_EINVAL on a wrong count / NULL / wrong device, and for a buffer smaller than the largest
 * index the range analysis finds for it among the kernel's ungated indices (indices that depend on a
 * variable or on loaded data are the caller's to keep in bounds); TKC_ERUNTIME if the device fails. With
 * TKC_DEBUG>=2 prints one line (number, name, memory, time, GFLOPS, GB/s, sizes) to stderr. */
TKC_API tkc_status tkc_program_launch(tkc_program *p, tkc_buffer *const *bufs, int nbufs, const int64_t *vars, int nvars);

#ifdef __cplusplus
}
#endif
#endif
