/* The device registry and buffers: adding a backend adds one line to the table below. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/device.h"

static tkc_device devices[] = {{.impl = &tkc_device_cpu}, {.impl = &tkc_device_interp}, {.impl = &tkc_device_llvm}, {.impl = &tkc_device_webgpu}, {.impl = &tkc_device_cuda}};
static const char *const names[] = {"CPU", "INTERP", "LLVM", "WEBGPU", "CUDA", NULL};

const char *const *tkc_device_names(void) { return names; }

static tkc_device *find(const char *name) {
  for (size_t i = 0; i < TKC_COUNTOF(devices); i++)
    if (!strcmp(devices[i].impl->name, name)) return &devices[i];
  return NULL;
}

tkc_device *tkc_device_get(const char *name) {
  if (!name) return tkc_err_null(TKC_EINVAL, "tkc_device_get: NULL name");
  tkc_device *d = find(name);
  if (!d) return tkc_err_null(TKC_EDEVICE, "unknown device \"%s\" (known: CPU, INTERP, LLVM, WEBGPU, CUDA)", name);
  char why[256] = "";
  if (!d->impl->available(why, sizeof why)) return tkc_err_null(TKC_EDEVICE, "device %s is unavailable: %s", name, why);
  return d;
}

int tkc_device_available(const char *name) {
  char why[256];
  tkc_device *d = name ? find(name) : NULL;
  return d && d->impl->available(why, sizeof why);
}

const char *tkc_device_name(const tkc_device *d) { return d ? d->impl->name : NULL; }

const tkc_renderer *tkc_device_renderer(const tkc_device *d) {
  if (!d || !d->impl->renderer) return NULL;
  return tkc_renderer_get(d->impl->renderer);
}

/* bytes of live buffers on every device (TKC_DEBUG >= 2 launch lines; tinygrad's mem_used) */
static _Atomic size_t live_bytes;
size_t tkc_device_mem_used(void) { return atomic_load(&live_bytes); }

struct tkc_buffer {
  tkc_device *dev;
  tkc_dtype dt;
  size_t numel, nbytes;
  void *ptr;
};

static tkc_buffer *buffer_new(tkc_device *d, tkc_dtype dt, size_t n, bool zero, const char *who) {
  if (!d) return tkc_err_null(TKC_EINVAL, "%s: NULL device", who);
  size_t item = tkc_dtype_size(dt);
  if (!item) return tkc_err_null(TKC_EDTYPE, "%s: dtype %d has no storage", who, (int)dt);
  if (n > SIZE_MAX / item) return tkc_err_null(TKC_EINVAL, "%s: %zu elements overflow", who, n);
  size_t nbytes = n * item;
  tkc_buffer *b = tkc_calloc(1, sizeof *b);
  if (!b) return tkc_err_null(TKC_ENOMEM, "out of memory allocating a buffer");
  void *p = !zero || d->impl->host_memory ? tkc_pool_take(d, nbytes) : NULL;
  if (p && zero) memset(p, 0, nbytes);
  unsigned errs = tkc_err_serial();
  if (!p) p = !zero && d->impl->alloc_uninit ? d->impl->alloc_uninit(nbytes) : d->impl->alloc(nbytes);
  *b = (tkc_buffer){d, dt, n, nbytes, p};
  if (!b->ptr) { /* the device's own reason (a lost context, say) when it gave one */
    tkc_free(b);
    return tkc_err_serial() != errs ? NULL : tkc_err_null(TKC_ENOMEM, "%s: cannot allocate %zu bytes", d->impl->name, nbytes);
  }
  atomic_fetch_add(&live_bytes, nbytes);
  return b;
}

tkc_buffer *tkc_buffer_new(tkc_device *d, tkc_dtype dt, size_t n) { return buffer_new(d, dt, n, true, "tkc_buffer_new"); }
tkc_buffer *tkc_buffer_new_uninit(tkc_device *d, tkc_dtype dt, size_t n) { return buffer_new(d, dt, n, false, "tkc_buffer_new_uninit"); }

void tkc_buffer_free(tkc_buffer *b) {
  if (!b) return;
  atomic_fetch_sub(&live_bytes, b->nbytes);
  if (!tkc_pool_give(b->dev, b->ptr, b->nbytes)) b->dev->impl->free(b->ptr);
  tkc_free(b);
}

size_t tkc_buffer_nbytes(const tkc_buffer *b) { return b ? b->nbytes : 0; }
size_t tkc_buffer_numel(const tkc_buffer *b) { return b ? b->numel : 0; }
tkc_dtype tkc_buffer_dtype(const tkc_buffer *b) { return b ? b->dt : TKC_VOID; }

tkc_status tkc_buffer_copyin(tkc_buffer *b, const void *src, size_t nbytes) {
  if (!b || (!src && nbytes)) return tkc_err(TKC_EINVAL, "tkc_buffer_copyin: NULL argument");
  if (nbytes != b->nbytes) return tkc_err(TKC_EINVAL, "tkc_buffer_copyin: %zu bytes given, buffer has %zu", nbytes, b->nbytes);
  return nbytes ? b->dev->impl->copyin(b->ptr, src, nbytes) : TKC_OK;
}

tkc_status tkc_buffer_copyout(const tkc_buffer *b, void *dst, size_t nbytes) {
  if (!b || (!dst && nbytes)) return tkc_err(TKC_EINVAL, "tkc_buffer_copyout: NULL argument");
  if (nbytes != b->nbytes) return tkc_err(TKC_EINVAL, "tkc_buffer_copyout: %zu bytes asked, buffer has %zu", nbytes, b->nbytes);
  return nbytes ? b->dev->impl->copyout(dst, b->ptr, nbytes) : TKC_OK;
}

/* for program.c */
void *tkc_buffer_ptr(const tkc_buffer *b) { return b->ptr; }
tkc_device *tkc_buffer_device(const tkc_buffer *b) { return b->dev; }
