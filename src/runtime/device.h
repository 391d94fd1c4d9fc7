/* The interface every device backend fills in (one static struct per backend file), and the
 * program data the backends see. Internal: not installed. */
#ifndef TKC_DEVICE_H
#define TKC_DEVICE_H

#include "base/common.h"
#include "tkc/runtime.h"

/* What a backend gets to compile and launch. The UOps are the linearized kernel (no SINK), owned
 * by the program's private graph and alive as long as the program. */
typedef struct tkc_kernel {
  const char *name;
  const char *source;      /* rendered source ("" for INTERP) */
  tkc_uop *const *uops;
  size_t nuops;
  int nbufs;               /* DEFINE_GLOBAL args are 0..nbufs-1 */
  tkc_dtype *buf_dtypes;   /* element dtype of each DEFINE_GLOBAL */
  int64_t *buf_need;       /* elements each buffer must hold: 1 + the largest ungated index (0: none known) */
  int nvars;
  tkc_uop **vars;          /* DEFINE_VARs, sorted by name: launch passes values in this order */
} tkc_kernel;

typedef struct tkc_device_impl {
  const char *name;
  const char *renderer; /* NULL: runs UOps directly */
  /* 1 if usable here; otherwise 0 and a reason in why */
  int (*available)(char *why, size_t n);
  /* device memory; host devices use plain (aligned) host memory */
  void *(*alloc)(size_t nbytes);      /* zero-filled */
  void *(*alloc_uninit)(size_t nbytes); /* contents undefined (NULL: alloc) */
  void (*free)(void *p);
  bool host_memory;                    /* pointers are host memory (memset works) */
  tkc_status (*copyin)(void *dst, const void *src, size_t nbytes);
  tkc_status (*copyout)(void *dst, const void *src, size_t nbytes);
  /* compiles k into an opaque handle (NULL handle allowed); errors via tkc_err */
  tkc_status (*compile)(const tkc_kernel *k, void **handle);
  void (*release)(void *handle);
  bool compile_threadsafe; /* compiles may run on several threads at once (the realize driver does) */
  bool no_write_aliasing;  /* a buffer a kernel writes may not also be one it reads (WebGPU's bindings) */
  /* runs k: bufs[i] are device pointers (alloc results), vars[i] the DEFINE_VAR values */
  tkc_status (*launch)(const tkc_kernel *k, void *handle, void *const *bufs, const int64_t *vars);
} tkc_device_impl;

struct tkc_device {
  const tkc_device_impl *impl;
  /* the buffer pool (pool.c), under its lock */
  struct pool_entry *pool_newest, *pool_oldest;
  size_t pool_bytes;
  int64_t pool_allocs, pool_reuses;
};

/* A program is made in steps by the codegen driver's caller (engine/program_build.c, which also
 * implements tkc_program_new): alloc gives a program named name for d with an empty graph of its
 * own (tkc_program_graph) for its UOps and the function name its source must define
 * (tkc_program_symbol: "tk_" + name, so that no kernel is called exit or sqrtf); set_uops takes the
 * linearized UOps (malloc'ed, in that graph) and reads the buffers and variables from them; set_source
 * takes the rendered source (malloc'ed; NULL: "" for a device without renderer). Then compile
 * (thread-safe where the device's compile_threadsafe says so; cached by device + name + source).
 * NULL / an error status with the reason; free a half-made program with tkc_program_free. */
TKC_HIDDEN tkc_program *tkc_program_alloc(tkc_device *d, const char *name);
TKC_HIDDEN tkc_graph *tkc_program_graph(const tkc_program *p);
TKC_HIDDEN const char *tkc_program_symbol(const tkc_program *p);
TKC_HIDDEN tkc_status tkc_program_set_uops(tkc_program *p, tkc_uop **uops, size_t n);
TKC_HIDDEN tkc_status tkc_program_set_source(tkc_program *p, char *source);
TKC_HIDDEN tkc_status tkc_program_compile(tkc_program *p);

/* The pool (pool.c): memory of exactly nbytes freed earlier on d (counted as a reuse), or NULL
 * (counted as an allocation the caller makes); give keeps p for later (false: the caller frees it). */
TKC_HIDDEN void *tkc_pool_take(tkc_device *d, size_t nbytes);
TKC_HIDDEN bool tkc_pool_give(tkc_device *d, void *p, size_t nbytes);

/* The global/local launch sizes of k from its SPECIALs (gidxN / lidxN; {1,1,1} without them). */
TKC_HIDDEN void tkc_kernel_launch_dims(const tkc_kernel *k, const int64_t *vars, int64_t global[3], int64_t local[3]);

/* TKC_EINTERNAL unless k's DEFINE_GLOBALs and DEFINE_VARs match its nbufs/nvars (a compiled
 * function is called with exactly that many arguments); who names the device. */
TKC_HIDDEN tkc_status tkc_kernel_check_signature(const tkc_kernel *k, const char *who);

/* A cheap estimate of k's work: the product of its constant RANGE trip counts times the widest vector
 * it loads (1 without uops;
 * capped at 2^40). The host devices thread kernels above TKC_CPU_PARALLEL_MIN_WORK (ffi_call.h). */
TKC_HIDDEN int64_t tkc_kernel_work_estimate(const tkc_kernel *k);

/* Device pointer and owner of a buffer (device.c). */
TKC_HIDDEN void *tkc_buffer_ptr(const tkc_buffer *b);
TKC_HIDDEN tkc_device *tkc_buffer_device(const tkc_buffer *b);

/* Bytes held by the live buffers of every device (device.c; pooled memory not counted). */
TKC_HIDDEN size_t tkc_device_mem_used(void);

/* Variables one kernel reads, at most (launches pass their values in arrays of this size). */
#define TKC_MAX_KERNEL_VARS 64

/* The largest value variable i of p takes (tkc_program_var_name's order); 0 out of range. */
TKC_HIDDEN int64_t tkc_program_var_max(const tkc_program *p, int i);

/* Runs p as tkc_program_launch does, without the TKC_DEBUG launch line (beam search's timing runs). */
TKC_HIDDEN tkc_status tkc_program_launch_quiet(tkc_program *p, tkc_buffer *const *bufs, int nbufs, const int64_t *vars, int nvars);

/* Appends arg a as the TKC_DEBUG listings show it ("(0, 'gidx0')"). */
TKC_HIDDEN void tkc_arg_fmt(tkc_sbuf *b, const tkc_arg *a);

/* The linearized UOps of p (owned by p) and their count. */
TKC_HIDDEN tkc_uop *const *tkc_program_uops(const tkc_program *p, size_t *n);

/* For the realize driver, once per kernel it builds: TKC_DEBUG >= 5 prints p's linearized UOps,
 * >= 4 its source (stderr). */
TKC_HIDDEN void tkc_program_debug_built(const tkc_program *p);

/* Compiled programs held by the program cache (program.c); for tests. */
TKC_HIDDEN size_t tkc_program_cache_entries(void);
/* Releases the compiled code no program is using. */
TKC_HIDDEN void tkc_program_cache_flush(void);

/* The built-in backends (each defined in its own file). */
extern const tkc_device_impl tkc_device_cpu;    /* src/runtime/cpu.c */
extern const tkc_device_impl tkc_device_interp; /* src/runtime/interp.c */
extern const tkc_device_impl tkc_device_llvm;   /* src/runtime/llvm.c */
extern const tkc_device_impl tkc_device_webgpu; /* src/runtime/webgpu.c */
extern const tkc_device_impl tkc_device_cuda;   /* src/runtime/cuda.c */

#endif
