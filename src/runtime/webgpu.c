/* src/runtime/webgpu.c — the "WEBGPU" device: WGSL shaders (src/render/wgsl.c) run through
 * wgpu-native's webgpu.h C API, loaded with dlopen at run time (libtkc never links it).
 *
 * Library: $TKC_WGPU_LIB when set (only that file); else the libwgpu_native found next to webgpu.h
 * at configure time (TKC_WGPU_LIB_DEFAULT, see cmake/webgpu.cmake: the PyPI `wgpu` package's
 * resources folder); else "libwgpu_native.so" on the system search path (never a file found by
 * searching folders the environment names, such as $HOME's or $VIRTUAL_ENV's site-packages). It must match the headers the build used: a library of another major
 * version than the wgpu package's (TKC_WGPU_MAJOR) is refused, as structs change between versions
 * (tested: v29.0.1.1 from `pip install wgpu==0.32.0`). It stays loaded for the life of the process.
 *
 * Device: one wgpu instance (Vulkan/Metal/DX12 backends, no GL), the high-performance adapter (a
 * GPU when there is one, else a CPU adapter such as Mesa's lavapipe), one device requesting the
 * adapter's own limits and shader-f16 when offered, one queue. Created once per process
 * (call_once) on the first availability check; available() says why when any step fails.
 * wgpu-native's logging is off unless TKC_DEBUG >= 2 (then warnings go to stderr); with
 * TKC_DEBUG >= 1 the adapter is named on stderr once. The library never changes the environment
 * (setenv is not thread-safe): without a desktop session, Mesa's device-select Vulkan layer may
 * print "XDG_RUNTIME_DIR is invalid" while adapters are listed; NODEVICE_SELECT=1 switches it off.
 *
 * Lavapipe (llvmpipe) ends the loops of a shader invocation after 65535 iterations in total,
 * silently; on that adapter a kernel whose invocation would run more (its RANGE trip counts, summed
 * over the loops) is refused with TKC_EUNSUPPORTED: at compile time, or at launch when the bounds
 * depend on variables.
 *
 * Errors: wgpu reports validation errors through the device's uncaptured-error callback, in the
 * thread making the call; every use of the device holds one lock, so the callback stores the first
 * message in a static buffer that the caller turns into a tkc error (shader errors: TKC_ECOMPILE
 * with wgpu/naga's message; others TKC_ERUNTIME). A command buffer whose recording failed is never
 * submitted (wgpu-native aborts the process on a failed submit).
 *
 * Memory: a buffer is a storage buffer (plus copy src/dst) rounded up to 4 bytes (WebGPU's copy and
 * binding granularity; the packed 8/16-bit elements of the WGSL renderer read whole words).
 * copyin writes through the queue; copyout copies into a mappable staging buffer, maps it (map
 * async + device poll) and copies out. Host layout is kept (bool is one byte), see src/render/wgsl.c.
 *
 * Programs: shader module + compute pipeline with an explicit layout: bindings 0..nbufs-1 are
 * read-write storage buffers, binding nbufs a uniform buffer of the int32 variables (when any).
 * A launch writes the variables, builds a bind group, dispatches the kernel's global size in
 * workgroups (tkc_kernel_launch_dims; the workgroup size is in the shader), submits, and waits for
 * the queue to finish, so tkc_program_launch's time is the kernel's run time and results are visible
 * to the next copyout. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h> /* not C11 threads: ThreadSanitizer sees pthread locks only */
#include "runtime/device.h"

#ifdef TKC_HAVE_WEBGPU

#define WGPU_SKIP_DECLARATIONS
#include <webgpu.h>
#include <wgpu.h>

/* ---------------------------------------------------------------- the library */

/* the webgpu.h functions used, loaded by name into wg.NAME (type WGPUProcNAME) */
#define WG_FUNCS(X)                                                                                          \
  X(CreateInstance) X(InstanceRequestAdapter) X(InstanceProcessEvents) X(InstanceRelease)                   \
  X(AdapterGetLimits) X(AdapterHasFeature) X(AdapterGetInfo) X(AdapterInfoFreeMembers)                     \
  X(AdapterRequestDevice) X(AdapterRelease) X(DeviceGetQueue) X(DeviceCreateBuffer)                         \
  X(DeviceCreateShaderModule) X(DeviceCreateBindGroupLayout) X(DeviceCreatePipelineLayout)                  \
  X(DeviceCreateComputePipeline) X(DeviceCreateBindGroup) X(DeviceCreateCommandEncoder)                     \
  X(QueueWriteBuffer) X(QueueSubmit) X(BufferMapAsync) X(BufferGetConstMappedRange) X(BufferUnmap)         \
  X(BufferDestroy) X(BufferRelease) X(ShaderModuleRelease) X(BindGroupLayoutRelease)                       \
  X(PipelineLayoutRelease) X(ComputePipelineRelease) X(BindGroupRelease) X(CommandEncoderBeginComputePass) \
  X(CommandEncoderCopyBufferToBuffer) X(CommandEncoderFinish) X(CommandEncoderRelease)                     \
  X(CommandBufferRelease) X(ComputePassEncoderSetPipeline) X(ComputePassEncoderSetBindGroup)               \
  X(ComputePassEncoderDispatchWorkgroups) X(ComputePassEncoderEnd) X(ComputePassEncoderRelease)

/* wgpu.h (native extensions) has no proc typedefs */
typedef WGPUBool (*wg_poll_fn)(WGPUDevice, WGPUBool, WGPUSubmissionIndex const *);
typedef void (*wg_set_log_callback_fn)(WGPULogCallback, void *);
typedef void (*wg_set_log_level_fn)(WGPULogLevel);
typedef uint32_t (*wg_get_version_fn)(void);

static struct {
#define X(name) WGPUProc##name name;
  WG_FUNCS(X)
#undef X
  wg_poll_fn DevicePoll;
  wg_set_log_callback_fn SetLogCallback;
  wg_set_log_level_fn SetLogLevel;
  wg_get_version_fn GetVersion;
} wg;

/* the device, created once */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t wg_lock;
static int wg_ok;
static char wg_why[1024];
static char wg_adapter[320];
static void *wg_lib;
static WGPUInstance wg_instance;
static WGPUAdapter wg_adapter_h;
static WGPUDevice wg_device;
static WGPUQueue wg_queue;
static WGPULimits wg_limits;
static int wg_has_f16;
static int64_t wg_loop_limit; /* loop iterations one invocation may run in total (0: no limit) */

/* the first error reported by wgpu since err_clear (only touched with wg_lock held) */
static char wg_err[1024];
static int wg_err_set;

static WGPUStringView sv(const char *s) { return (WGPUStringView){s, s ? strlen(s) : 0}; }

static void copy_sv(char *dst, size_t n, WGPUStringView s) {
  size_t len = s.data ? (s.length == WGPU_STRLEN ? strlen(s.data) : s.length) : 0;
  if (len >= n) len = n - 1;
  if (len) memcpy(dst, s.data, len);
  dst[len] = 0;
}

static void err_clear(void) {
  wg_err_set = 0;
  wg_err[0] = 0;
}

/* the captured error as a tkc error (s) prefixed with what failed; TKC_OK when there was none */
static tkc_status err_take(tkc_status s, const char *what) {
  if (!wg_err_set) return TKC_OK;
  wg_err_set = 0;
  return tkc_err(s, "WEBGPU: %s: %s", what, wg_err);
}

static void on_uncaptured_error(WGPUDevice const *device, WGPUErrorType type, WGPUStringView message, void *u1, void *u2) {
  (void)device, (void)type, (void)u1, (void)u2;
  if (wg_err_set) return;
  copy_sv(wg_err, sizeof wg_err, message);
  if (!wg_err[0]) snprintf(wg_err, sizeof wg_err, "error of type %d", (int)type);
  wg_err_set = 1;
}

static void on_device_lost(WGPUDevice const *device, WGPUDeviceLostReason reason, WGPUStringView message, void *u1, void *u2) {
  (void)device, (void)reason, (void)message, (void)u1, (void)u2; /* reported through the failing calls */
}

static void on_log(WGPULogLevel level, WGPUStringView message, void *userdata) {
  (void)userdata;
  if (tkc_debug_level() < 2) return;
  char buf[1024];
  copy_sv(buf, sizeof buf, message);
  fprintf(stderr, "tkc: wgpu [%d]: %s\n", (int)level, buf);
}

static void *try_open(const char *path, char *tried, size_t n) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    size_t l = strlen(tried);
    snprintf(tried + l, n - l, "%s%s (%s)", l ? "; " : "", path, e ? e : "cannot load");
  }
  return h;
}

/* finds and loads libwgpu_native; NULL with the places tried in why */
static void *open_library(void) {
  char tried[2048] = "";
  const char *env = getenv("TKC_WGPU_LIB");
  if (env && *env) {
    void *h = try_open(env, tried, sizeof tried);
    if (!h) snprintf(wg_why, sizeof wg_why, "cannot load $TKC_WGPU_LIB: %.900s", tried);
    return h;
  }
#ifdef TKC_WGPU_LIB_DEFAULT
  if (TKC_WGPU_LIB_DEFAULT[0]) {
    void *h = try_open(TKC_WGPU_LIB_DEFAULT, tried, sizeof tried);
    if (h) return h;
  }
#endif
  /* no search of site-packages folders under $HOME / $VIRTUAL_ENV: only an explicit file, the one
   * found at configure time, or the system's */
  void *h = try_open("libwgpu_native.so", tried, sizeof tried);
  if (!h)
    snprintf(wg_why, sizeof wg_why, "wgpu-native not found (pip install wgpu==0.32.0, or set $TKC_WGPU_LIB); tried: %.900s", tried);
  return h;
}

static int load_symbols(void) {
#define X(name)                                                                                          \
  if (!(*(void **)&wg.name = dlsym(wg_lib, "wgpu" #name))) {                                            \
    snprintf(wg_why, sizeof wg_why, "wgpu-native lacks wgpu%s (a webgpu.h older than this build's)", #name); \
    return 0;                                                                                            \
  }
  WG_FUNCS(X)
  X(DevicePoll) X(SetLogCallback) X(SetLogLevel) X(GetVersion)
#undef X
  return 1;
}

/* ---------------------------------------------------------------- init */

typedef struct req_result {
  int done, ok;
  void *handle;
  char msg[256];
} req_result;

static void on_adapter(WGPURequestAdapterStatus status, WGPUAdapter adapter, WGPUStringView message, void *u1, void *u2) {
  (void)u2;
  req_result *r = u1;
  r->done = 1;
  r->ok = status == WGPURequestAdapterStatus_Success && adapter;
  r->handle = adapter;
  copy_sv(r->msg, sizeof r->msg, message);
}

static void on_device(WGPURequestDeviceStatus status, WGPUDevice device, WGPUStringView message, void *u1, void *u2) {
  (void)u2;
  req_result *r = u1;
  r->done = 1;
  r->ok = status == WGPURequestDeviceStatus_Success && device;
  r->handle = device;
  copy_sv(r->msg, sizeof r->msg, message);
}

/* runs the instance's callbacks until *done (the requests answer right away in wgpu-native) */
static void wait_done(const int *done) {
  for (int i = 0; i < 1000 && !*done; i++) wg.InstanceProcessEvents(wg_instance);
}

static void wg_init(void) {
  pthread_mutex_init(&wg_lock, NULL);
  if (!(wg_lib = open_library())) return;
  if (!load_symbols()) return;
#if defined(TKC_WGPU_MAJOR) && TKC_WGPU_MAJOR > 0
  uint32_t version = wg.GetVersion();
  if ((version >> 24) != TKC_WGPU_MAJOR) {
    snprintf(wg_why, sizeof wg_why, "wgpu-native %u.%u.%u was loaded, but tkc was built with the headers of version %d (set $TKC_WGPU_LIB)",
             version >> 24, (version >> 16) & 0xff, (version >> 8) & 0xff, TKC_WGPU_MAJOR);
    return;
  }
#endif
  wg.SetLogCallback(on_log, NULL);
  wg.SetLogLevel(tkc_debug_level() >= 2 ? WGPULogLevel_Warn : WGPULogLevel_Off);

  WGPUInstanceExtras extras;
  memset(&extras, 0, sizeof extras);
  extras.chain.sType = (WGPUSType)WGPUSType_InstanceExtras;
  extras.backends = WGPUInstanceBackend_Primary; /* Vulkan/Metal/DX12: no GL probing of displays */
  extras.flags = WGPUInstanceFlag_Default;
  WGPUInstanceDescriptor idesc;
  memset(&idesc, 0, sizeof idesc);
  idesc.nextInChain = &extras.chain;
  if (!(wg_instance = wg.CreateInstance(&idesc))) {
    snprintf(wg_why, sizeof wg_why, "wgpuCreateInstance failed");
    return;
  }

  WGPURequestAdapterOptions aopt;
  memset(&aopt, 0, sizeof aopt);
  aopt.featureLevel = WGPUFeatureLevel_Core;
  aopt.powerPreference = WGPUPowerPreference_HighPerformance; /* a GPU if any, else a CPU adapter */
  req_result ar = {0};
  WGPURequestAdapterCallbackInfo acb;
  memset(&acb, 0, sizeof acb);
  acb.mode = WGPUCallbackMode_AllowProcessEvents;
  acb.callback = on_adapter;
  acb.userdata1 = &ar;
  wg.InstanceRequestAdapter(wg_instance, &aopt, acb);
  wait_done(&ar.done);
  if (!ar.ok) {
    snprintf(wg_why, sizeof wg_why, "no WebGPU adapter (no Vulkan driver? apt-get install mesa-vulkan-drivers for lavapipe)%s%s",
             ar.msg[0] ? ": " : "", ar.msg);
    return;
  }
  wg_adapter_h = ar.handle;

  WGPUAdapterInfo info;
  memset(&info, 0, sizeof info);
  if (wg.AdapterGetInfo(wg_adapter_h, &info) == WGPUStatus_Success) {
    char dev[160], desc[128];
    copy_sv(dev, sizeof dev, info.device);
    copy_sv(desc, sizeof desc, info.description);
    snprintf(wg_adapter, sizeof wg_adapter, "%s%s%s%s", dev, desc[0] ? " (" : "", desc, desc[0] ? ")" : "");
    wg.AdapterInfoFreeMembers(info);
  }
  /* llvmpipe (Mesa's lavapipe) ends all loops of a shader invocation once they have run 65535
   * iterations in total (LP_MAX_TGSI_LOOP_ITERATIONS, one counter shared by every loop), silently */
  if (strstr(wg_adapter, "llvmpipe")) wg_loop_limit = 65535;
  memset(&wg_limits, 0, sizeof wg_limits);
  if (wg.AdapterGetLimits(wg_adapter_h, &wg_limits) != WGPUStatus_Success) {
    snprintf(wg_why, sizeof wg_why, "cannot read the limits of adapter %s", wg_adapter);
    return;
  }
  wg_limits.nextInChain = NULL;
  wg_has_f16 = wg.AdapterHasFeature(wg_adapter_h, WGPUFeatureName_ShaderF16) != 0;

  WGPUFeatureName feats[1] = {WGPUFeatureName_ShaderF16};
  WGPUDeviceDescriptor ddesc;
  memset(&ddesc, 0, sizeof ddesc);
  ddesc.label = sv("tkc");
  ddesc.requiredFeatureCount = wg_has_f16 ? 1 : 0;
  ddesc.requiredFeatures = feats;
  ddesc.requiredLimits = &wg_limits;
  ddesc.deviceLostCallbackInfo.mode = WGPUCallbackMode_AllowSpontaneous;
  ddesc.deviceLostCallbackInfo.callback = on_device_lost;
  ddesc.uncapturedErrorCallbackInfo.callback = on_uncaptured_error;
  req_result dr = {0};
  WGPURequestDeviceCallbackInfo dcb;
  memset(&dcb, 0, sizeof dcb);
  dcb.mode = WGPUCallbackMode_AllowProcessEvents;
  dcb.callback = on_device;
  dcb.userdata1 = &dr;
  wg.AdapterRequestDevice(wg_adapter_h, &ddesc, dcb);
  wait_done(&dr.done);
  if (!dr.ok) {
    snprintf(wg_why, sizeof wg_why, "cannot create a device on adapter %s%s%s", wg_adapter, dr.msg[0] ? ": " : "", dr.msg);
    return;
  }
  wg_device = dr.handle;
  wg_queue = wg.DeviceGetQueue(wg_device);
  if (!wg_queue) {
    snprintf(wg_why, sizeof wg_why, "the device on adapter %s has no queue", wg_adapter);
    return;
  }
  if (tkc_debug_level() >= 1) {
    uint32_t v = wg.GetVersion();
    fprintf(stderr, "tkc: WEBGPU: %s (wgpu-native %u.%u.%u.%u)%s\n", wg_adapter, (v >> 24) & 0xff, (v >> 16) & 0xff, (v >> 8) & 0xff,
            v & 0xff, wg_has_f16 ? ", shader-f16" : "");
  }
  wg_ok = 1;
}

static int webgpu_available(char *why, size_t n) {
  pthread_once(&init_once, wg_init);
  if (!wg_ok && why && n) snprintf(why, n, "%s", wg_why[0] ? wg_why : "initialization failed");
  return wg_ok;
}

static tkc_status need_device(void) {
  if (webgpu_available(NULL, 0)) return TKC_OK;
  return tkc_err(TKC_EDEVICE, "WEBGPU is unavailable: %s", wg_why[0] ? wg_why : "initialization failed");
}

/* ---------------------------------------------------------------- memory */

typedef struct wbuf {
  WGPUBuffer b;
  uint64_t size; /* bytes, a multiple of 4, at least 4 */
} wbuf;

static uint64_t round4(uint64_t n) { return n < 4 ? 4 : (n + 3) & ~(uint64_t)3; }

static WGPUBuffer new_buffer(uint64_t size, WGPUBufferUsage usage, const char *what) {
  WGPUBufferDescriptor d;
  memset(&d, 0, sizeof d);
  d.usage = usage;
  d.size = size;
  err_clear();
  WGPUBuffer b = wg.DeviceCreateBuffer(wg_device, &d);
  tkc_status st = err_take(TKC_ENOMEM, what);
  if (st && b) {
    wg.BufferRelease(b);
    b = NULL;
  }
  if (!b && !st) tkc_err(TKC_ENOMEM, "WEBGPU: %s failed", what);
  return b;
}

static void *webgpu_alloc(size_t nbytes) {
  if (need_device()) return NULL;
  if (nbytes > (size_t)wg_limits.maxBufferSize || nbytes > SIZE_MAX - 4)
    return tkc_err_null(TKC_ENOMEM, "WEBGPU: %zu bytes exceed the adapter's largest buffer (%llu bytes)", nbytes,
                        (unsigned long long)wg_limits.maxBufferSize);
  wbuf *w = tkc_calloc(1, sizeof *w);
  if (!w) return tkc_err_null(TKC_ENOMEM, "WEBGPU: out of memory");
  w->size = round4(nbytes);
  pthread_mutex_lock(&wg_lock);
  w->b = new_buffer(w->size, WGPUBufferUsage_Storage | WGPUBufferUsage_CopyDst | WGPUBufferUsage_CopySrc, "creating a buffer");
  pthread_mutex_unlock(&wg_lock);
  if (!w->b) {
    tkc_free(w);
    return NULL;
  }
  return w;
}

static void webgpu_free(void *p) {
  wbuf *w = p;
  if (!w) return;
  pthread_mutex_lock(&wg_lock);
  wg.BufferDestroy(w->b);
  wg.BufferRelease(w->b);
  err_clear();
  pthread_mutex_unlock(&wg_lock);
  tkc_free(w);
}

static tkc_status webgpu_copyin(void *dst, const void *src, size_t nbytes) {
  wbuf *w = dst;
  if (!w || (!src && nbytes)) return tkc_err(TKC_EINVAL, "WEBGPU: copy with a NULL pointer");
  if (nbytes > w->size) return tkc_err(TKC_EINVAL, "WEBGPU: copying %zu bytes into a buffer of %llu", nbytes, (unsigned long long)w->size);
  if (!nbytes) return TKC_OK;
  size_t whole = nbytes & ~(size_t)3, tail = nbytes - whole;
  pthread_mutex_lock(&wg_lock);
  err_clear();
  if (whole) wg.QueueWriteBuffer(wg_queue, w->b, 0, src, whole);
  if (tail) { /* writes are in whole words: the rest of the last word is padding */
    unsigned char last[4] = {0, 0, 0, 0};
    memcpy(last, (const unsigned char *)src + whole, tail);
    wg.QueueWriteBuffer(wg_queue, w->b, whole, last, 4);
  }
  tkc_status st = err_take(TKC_ERUNTIME, "writing a buffer");
  pthread_mutex_unlock(&wg_lock);
  return st;
}

typedef struct map_result {
  int done, ok;
  char msg[256];
} map_result;

static void on_mapped(WGPUMapAsyncStatus status, WGPUStringView message, void *u1, void *u2) {
  (void)u2;
  map_result *r = u1;
  r->done = 1;
  r->ok = status == WGPUMapAsyncStatus_Success;
  copy_sv(r->msg, sizeof r->msg, message);
}

/* records and submits one command buffer (unless recording failed); with wg_lock held */
static tkc_status submit(WGPUCommandEncoder enc, const char *what) {
  WGPUCommandBuffer cb = wg.CommandEncoderFinish(enc, NULL);
  tkc_status st = err_take(TKC_ERUNTIME, what);
  if (!st && !cb) st = tkc_err(TKC_ERUNTIME, "WEBGPU: %s: no command buffer", what);
  if (!st) {
    wg.QueueSubmit(wg_queue, 1, &cb);
    st = err_take(TKC_ERUNTIME, what);
  }
  if (cb) wg.CommandBufferRelease(cb);
  return st;
}

static tkc_status webgpu_copyout(void *dst, const void *src, size_t nbytes) {
  const wbuf *w = src;
  if (!w || (!dst && nbytes)) return tkc_err(TKC_EINVAL, "WEBGPU: copy with a NULL pointer");
  if (nbytes > w->size) return tkc_err(TKC_EINVAL, "WEBGPU: copying %zu bytes out of a buffer of %llu", nbytes, (unsigned long long)w->size);
  if (!nbytes) return TKC_OK;
  uint64_t size = round4(nbytes);
  pthread_mutex_lock(&wg_lock);
  tkc_status st = TKC_OK;
  WGPUBuffer stage = new_buffer(size, WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst, "creating a staging buffer");
  WGPUCommandEncoder enc = stage ? wg.DeviceCreateCommandEncoder(wg_device, NULL) : NULL;
  if (!stage) st = tkc_last_status();
  else if (!enc && !(st = err_take(TKC_ERUNTIME, "creating a command encoder"))) st = tkc_err(TKC_ERUNTIME, "WEBGPU: no command encoder");
  if (!st) {
    wg.CommandEncoderCopyBufferToBuffer(enc, w->b, 0, stage, 0, size);
    st = submit(enc, "copying a buffer out");
  }
  if (!st) {
    map_result mr = {0};
    WGPUBufferMapCallbackInfo cbi;
    memset(&cbi, 0, sizeof cbi);
    cbi.mode = WGPUCallbackMode_AllowProcessEvents;
    cbi.callback = on_mapped;
    cbi.userdata1 = &mr;
    wg.BufferMapAsync(stage, WGPUMapMode_Read, 0, (size_t)size, cbi);
    for (int i = 0; i < 1000 && !mr.done; i++) {
      wg.DevicePoll(wg_device, 1, NULL);
      wg.InstanceProcessEvents(wg_instance);
    }
    st = err_take(TKC_ERUNTIME, "mapping a buffer");
    if (!st && !mr.ok) st = tkc_err(TKC_ERUNTIME, "WEBGPU: mapping a buffer failed%s%s", mr.msg[0] ? ": " : "", mr.msg);
    if (!st) {
      const void *p = wg.BufferGetConstMappedRange(stage, 0, (size_t)size);
      if (p) memcpy(dst, p, nbytes);
      else st = tkc_err(TKC_ERUNTIME, "WEBGPU: mapped buffer has no data");
      wg.BufferUnmap(stage);
    }
  }
  if (enc) wg.CommandEncoderRelease(enc);
  if (stage) {
    wg.BufferDestroy(stage);
    wg.BufferRelease(stage);
  }
  err_clear();
  pthread_mutex_unlock(&wg_lock);
  return st;
}

/* ---------------------------------------------------------------- programs */

/* the value of u when it is an int32 expression of constants and variables (with these values) */
static bool eval_int(const tkc_kernel *k, const tkc_uop *u, const int64_t *vars, int depth, int64_t *out) {
  if (u->op == TKC_OP_CONST && u->arg.kind == TKC_ARG_INT) {
    *out = u->arg.v.i;
    return true;
  }
  if (u->op == TKC_OP_DEFINE_VAR) {
    for (int i = 0; i < k->nvars && vars; i++)
      if (k->vars[i] == u) {
        *out = vars[i];
        return true;
      }
    return false;
  }
  if (depth >= 32 || !(tkc_op_flags((tkc_op)u->op) & TKC_F_ALU) || u->nsrc > 3 || u->dtype.scalar != TKC_INT32 || u->dtype.count != 1 ||
      u->dtype.space)
    return false;
  tkc_value src[3], r;
  for (int i = 0; i < u->nsrc; i++) {
    const tkc_uop *s = u->src[i];
    if (s->dtype.scalar != TKC_INT32 || s->dtype.count != 1 || s->dtype.space || !eval_int(k, s, vars, depth + 1, &src[i].i)) return false;
  }
  if (tkc_alu_eval((tkc_op)u->op, TKC_INT32, TKC_INT32, src, u->nsrc, &r)) return false;
  *out = r.i;
  return true;
}

/* u's value, else its range analysis bound (the upper one when hi) */
static int64_t eval_bound(const tkc_kernel *k, const tkc_uop *u, const int64_t *vars, bool hi) {
  int64_t v;
  return eval_int(k, u, vars, 0, &v) ? v : hi ? u->vmax : u->vmin;
}

/* the loop iterations one invocation of k runs, summed over every loop (saturated at 2^40) */
static int64_t loop_iterations(const tkc_kernel *k, const int64_t *vars) {
  const int64_t cap = (int64_t)1 << 40;
  int64_t mult = 1, total = 0, stack[64];
  int depth = 0;
  for (size_t i = 0; i < k->nuops; i++) {
    const tkc_uop *u = k->uops[i];
    if (u->op == TKC_OP_RANGE && u->nsrc == 2) {
      int64_t lo = eval_bound(k, u->src[0], vars, false), hi = eval_bound(k, u->src[1], vars, true);
      int64_t trips = hi > lo ? hi - lo : 0;
      if (trips > cap) trips = cap;
      if (depth < 64) stack[depth] = mult;
      depth++;
      mult = mult > cap / (trips ? trips : 1) ? cap : mult * trips;
      total = total > cap - mult ? cap : total + mult;
    } else if (u->op == TKC_OP_ENDRANGE && depth > 0) {
      depth--;
      if (depth < 64) mult = stack[depth];
    }
  }
  return total;
}

/* TKC_EUNSUPPORTED when the adapter would cut k's loops short */
static tkc_status check_loops(const tkc_kernel *k, const int64_t *vars) {
  if (!wg_loop_limit) return TKC_OK;
  int64_t n = loop_iterations(k, vars);
  if (n <= wg_loop_limit) return TKC_OK;
  return tkc_err(TKC_EUNSUPPORTED,
                 "WEBGPU: %s runs %lld loop iterations per invocation, but adapter %s stops a shader's loops after %lld in total "
                 "(the results would be wrong): spread the work over more invocations",
                 k->name, (long long)n, wg_adapter, (long long)wg_loop_limit);
}

typedef struct wprog {
  WGPUShaderModule module;
  WGPUBindGroupLayout bgl;
  WGPUPipelineLayout layout;
  WGPUComputePipeline pipe;
  WGPUBuffer vars;      /* uniform buffer of the int32 variables (NULL without) */
  uint64_t vars_size;
  int nbufs, nvars;
} wprog;

static void release_prog(wprog *p) {
  if (!p) return;
  if (p->pipe) wg.ComputePipelineRelease(p->pipe);
  if (p->layout) wg.PipelineLayoutRelease(p->layout);
  if (p->bgl) wg.BindGroupLayoutRelease(p->bgl);
  if (p->module) wg.ShaderModuleRelease(p->module);
  if (p->vars) {
    wg.BufferDestroy(p->vars);
    wg.BufferRelease(p->vars);
  }
  tkc_free(p);
}

static void webgpu_release(void *handle) {
  if (!handle) return;
  pthread_mutex_lock(&wg_lock);
  release_prog(handle);
  err_clear();
  pthread_mutex_unlock(&wg_lock);
}

static tkc_status compile_locked(const tkc_kernel *k, wprog *p) {
  tkc_status st;
  if (!k->nvars && (st = check_loops(k, NULL))) return st; /* with variables: checked at launch */
  if (strstr(k->source, "enable f16;") && !wg_has_f16)
    return tkc_err(TKC_EUNSUPPORTED, "WEBGPU: %s uses float16, but adapter %s lacks the shader-f16 feature", k->name, wg_adapter);
  if ((uint32_t)k->nbufs > wg_limits.maxStorageBuffersPerShaderStage)
    return tkc_err(TKC_EUNSUPPORTED, "WEBGPU: %s binds %d buffers, adapter %s allows %u per shader", k->name, k->nbufs, wg_adapter,
                   wg_limits.maxStorageBuffersPerShaderStage);
  err_clear();
  WGPUShaderSourceWGSL wgsl;
  memset(&wgsl, 0, sizeof wgsl);
  wgsl.chain.sType = WGPUSType_ShaderSourceWGSL;
  wgsl.code = sv(k->source);
  WGPUShaderModuleDescriptor md;
  memset(&md, 0, sizeof md);
  md.nextInChain = &wgsl.chain;
  md.label = sv(k->name);
  p->module = wg.DeviceCreateShaderModule(wg_device, &md);
  st = err_take(TKC_ECOMPILE, "the WGSL shader does not compile");
  if (st) return st;
  if (!p->module) return tkc_err(TKC_ECOMPILE, "WEBGPU: the WGSL shader does not compile");

  /* the explicit layout: storage buffers, then the variables' uniform buffer */
  int n = k->nbufs + (k->nvars ? 1 : 0);
  WGPUBindGroupLayoutEntry *e = tkc_calloc((size_t)n + 1, sizeof *e);
  if (!e) return tkc_err(TKC_ENOMEM, "WEBGPU: out of memory");
  for (int i = 0; i < n; i++) {
    e[i].binding = (uint32_t)i;
    e[i].visibility = WGPUShaderStage_Compute;
    e[i].buffer.type = i < k->nbufs ? WGPUBufferBindingType_Storage : WGPUBufferBindingType_Uniform;
  }
  WGPUBindGroupLayoutDescriptor bd;
  memset(&bd, 0, sizeof bd);
  bd.entryCount = (size_t)n;
  bd.entries = e;
  p->bgl = wg.DeviceCreateBindGroupLayout(wg_device, &bd);
  tkc_free(e);
  if ((st = err_take(TKC_ERUNTIME, "creating the bind group layout"))) return st;
  WGPUPipelineLayoutDescriptor pd;
  memset(&pd, 0, sizeof pd);
  pd.bindGroupLayoutCount = 1;
  pd.bindGroupLayouts = &p->bgl;
  p->layout = wg.DeviceCreatePipelineLayout(wg_device, &pd);
  if ((st = err_take(TKC_ERUNTIME, "creating the pipeline layout"))) return st;

  WGPUComputePipelineDescriptor cd;
  memset(&cd, 0, sizeof cd);
  cd.label = sv(k->name);
  cd.layout = p->layout;
  cd.compute.module = p->module;
  cd.compute.entryPoint = sv(k->name);
  p->pipe = wg.DeviceCreateComputePipeline(wg_device, &cd);
  if ((st = err_take(TKC_ECOMPILE, "the compute pipeline does not build"))) return st;
  if (!p->pipe) return tkc_err(TKC_ECOMPILE, "WEBGPU: the compute pipeline does not build");

  if (k->nvars) {
    p->vars_size = ((uint64_t)k->nvars * 4 + 15) & ~(uint64_t)15;
    if (!(p->vars = new_buffer(p->vars_size, WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst, "creating the variables' buffer")))
      return tkc_last_status();
  }
  p->nbufs = k->nbufs;
  p->nvars = k->nvars;
  return TKC_OK;
}

static tkc_status webgpu_compile(const tkc_kernel *k, void **handle) {
  *handle = NULL;
  tkc_status st = need_device();
  if (st) return st;
  if (!k->source || !k->name) return tkc_err(TKC_EINVAL, "WEBGPU: kernel without source or name");
  wprog *p = tkc_calloc(1, sizeof *p);
  if (!p) return tkc_err(TKC_ENOMEM, "WEBGPU: out of memory");
  pthread_mutex_lock(&wg_lock);
  st = compile_locked(k, p);
  if (st) release_prog(p);
  err_clear();
  pthread_mutex_unlock(&wg_lock);
  if (!st) *handle = p;
  return st;
}

static tkc_status launch_locked(const tkc_kernel *k, wprog *p, void *const *bufs, const int64_t *vars) {
  if (k->nvars) {
    tkc_status st = check_loops(k, vars);
    if (st) return st;
  }
  int64_t gs[3], ls[3];
  tkc_kernel_launch_dims(k, vars, gs, ls);
  for (int i = 0; i < 3; i++) {
    if (gs[i] == 0) return TKC_OK; /* an empty grid: nothing to run */
    if (gs[i] < 0 || gs[i] > wg_limits.maxComputeWorkgroupsPerDimension)
      return tkc_err(TKC_EUNSUPPORTED, "WEBGPU: %s: %lld workgroups on axis %d (adapter maximum %u)", k->name, (long long)gs[i], i,
                     wg_limits.maxComputeWorkgroupsPerDimension);
  }
  for (int i = 0; i < k->nbufs; i++) {
    const wbuf *w = bufs[i];
    if (w->size > wg_limits.maxStorageBufferBindingSize)
      return tkc_err(TKC_EUNSUPPORTED, "WEBGPU: %s: buffer %d has %llu bytes, adapter %s binds at most %llu", k->name, i,
                     (unsigned long long)w->size, wg_adapter, (unsigned long long)wg_limits.maxStorageBufferBindingSize);
  }
  err_clear();
  if (p->nvars) { /* the variables as int32 (launch checked them against their bounds) */
    int32_t *vp = tkc_calloc((size_t)p->vars_size, 1);
    if (!vp) return tkc_err(TKC_ENOMEM, "WEBGPU: out of memory");
    for (int i = 0; i < p->nvars; i++) vp[i] = (int32_t)vars[i];
    wg.QueueWriteBuffer(wg_queue, p->vars, 0, vp, (size_t)p->vars_size);
    tkc_free(vp);
  }
  int n = p->nbufs + (p->nvars ? 1 : 0);
  WGPUBindGroupEntry *e = tkc_calloc((size_t)n + 1, sizeof *e);
  if (!e) return tkc_err(TKC_ENOMEM, "WEBGPU: out of memory");
  for (int i = 0; i < n; i++) {
    e[i].binding = (uint32_t)i;
    e[i].buffer = i < p->nbufs ? ((const wbuf *)bufs[i])->b : p->vars;
    e[i].size = i < p->nbufs ? ((const wbuf *)bufs[i])->size : p->vars_size;
  }
  WGPUBindGroupDescriptor bd;
  memset(&bd, 0, sizeof bd);
  bd.layout = p->bgl;
  bd.entryCount = (size_t)n;
  bd.entries = e;
  WGPUBindGroup bg = wg.DeviceCreateBindGroup(wg_device, &bd);
  tkc_free(e);
  tkc_status st = err_take(TKC_ERUNTIME, "binding the buffers");
  WGPUCommandEncoder enc = NULL;
  if (!st) {
    enc = wg.DeviceCreateCommandEncoder(wg_device, NULL);
    st = err_take(TKC_ERUNTIME, "creating a command encoder");
    if (!st && !enc) st = tkc_err(TKC_ERUNTIME, "WEBGPU: no command encoder");
  }
  if (!st) {
    WGPUComputePassEncoder pass = wg.CommandEncoderBeginComputePass(enc, NULL);
    if (pass) {
      wg.ComputePassEncoderSetPipeline(pass, p->pipe);
      wg.ComputePassEncoderSetBindGroup(pass, 0, bg, 0, NULL);
      wg.ComputePassEncoderDispatchWorkgroups(pass, (uint32_t)gs[0], (uint32_t)gs[1], (uint32_t)gs[2]);
      wg.ComputePassEncoderEnd(pass);
      wg.ComputePassEncoderRelease(pass);
    }
    st = err_take(TKC_ERUNTIME, "recording the dispatch");
    if (!st && !pass) st = tkc_err(TKC_ERUNTIME, "WEBGPU: no compute pass");
    if (!st) st = submit(enc, "running the kernel");
    if (!st) { /* wait for the kernel: results and timing are those of a finished run */
      wg.DevicePoll(wg_device, 1, NULL);
      st = err_take(TKC_ERUNTIME, "running the kernel");
    }
  }
  if (enc) wg.CommandEncoderRelease(enc);
  if (bg) wg.BindGroupRelease(bg);
  return st;
}

static tkc_status webgpu_launch(const tkc_kernel *k, void *handle, void *const *bufs, const int64_t *vars) {
  wprog *p = handle;
  if (!p) return tkc_err(TKC_EINVAL, "WEBGPU: launch without a compiled program");
  if (p->nbufs != k->nbufs || p->nvars != k->nvars) return tkc_err(TKC_EINVAL, "WEBGPU: program and kernel disagree");
  pthread_mutex_lock(&wg_lock);
  tkc_status st = launch_locked(k, p, bufs, vars);
  err_clear();
  pthread_mutex_unlock(&wg_lock);
  return st;
}

#else /* !TKC_HAVE_WEBGPU: built without webgpu.h */

static int webgpu_available(char *why, size_t n) {
  if (why && n) snprintf(why, n, "tkc was built without webgpu.h (pip install wgpu==0.32.0 and reconfigure, or -DTKC_WGPU_INCLUDE=dir)");
  return 0;
}
static void *webgpu_alloc(size_t nbytes) {
  (void)nbytes;
  return tkc_err_null(TKC_EDEVICE, "WEBGPU: not built into this tkc");
}
static void webgpu_free(void *p) { (void)p; }
static tkc_status webgpu_copyin(void *dst, const void *src, size_t nbytes) {
  (void)dst, (void)src, (void)nbytes;
  return tkc_err(TKC_EDEVICE, "WEBGPU: not built into this tkc");
}
static tkc_status webgpu_copyout(void *dst, const void *src, size_t nbytes) {
  (void)dst, (void)src, (void)nbytes;
  return tkc_err(TKC_EDEVICE, "WEBGPU: not built into this tkc");
}
static tkc_status webgpu_compile(const tkc_kernel *k, void **handle) {
  (void)k;
  *handle = NULL;
  return tkc_err(TKC_EDEVICE, "WEBGPU: not built into this tkc");
}
static void webgpu_release(void *handle) { (void)handle; }
static tkc_status webgpu_launch(const tkc_kernel *k, void *handle, void *const *bufs, const int64_t *vars) {
  (void)k, (void)handle, (void)bufs, (void)vars;
  return tkc_err(TKC_EDEVICE, "WEBGPU: not built into this tkc");
}

#endif

const tkc_device_impl tkc_device_webgpu = {
    .name = "WEBGPU",
    .renderer = "WGSL",
    .available = webgpu_available,
    .alloc = webgpu_alloc,
    .free = webgpu_free,
    .copyin = webgpu_copyin,
    .copyout = webgpu_copyout,
    .compile = webgpu_compile,
    .release = webgpu_release,
    .launch = webgpu_launch,
    .no_write_aliasing = true, /* a read_write binding must not alias another binding */
};
