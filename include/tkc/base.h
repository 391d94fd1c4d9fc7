/* tkc/base.h — status codes, scalar dtypes and error reporting shared by every tkc header.
 *
 * Thread safety: tkc_last_error() is thread-local; everything here may be called from any thread. */
#ifndef TKC_BASE_H
#define TKC_BASE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define TKC_API __declspec(dllexport)
#else
#define TKC_API __attribute__((visibility("default")))
#endif

#define TKC_VERSION_MAJOR 0
#define TKC_VERSION_MINOR 1
#define TKC_VERSION_PATCH 0

/* Every fallible function returns a tkc_status (TKC_OK == 0) or a pointer that is NULL on failure;
 * the reason is then in tkc_last_error(). */
typedef enum tkc_status {
  TKC_OK = 0,
  TKC_EINVAL,       /* a bad argument: NULL, out of range, malformed text */
  TKC_ESHAPE,       /* shapes that do not fit together */
  TKC_EDTYPE,       /* a dtype the operation does not accept */
  TKC_ENOMEM,       /* an allocation failed */
  TKC_EDEVICE,      /* unknown or unavailable device */
  TKC_ECOMPILE,     /* generated source did not compile */
  TKC_EUNSUPPORTED, /* the op/dtype cannot be expressed on this backend */
  TKC_ERUNTIME,     /* a device runtime call failed */
  TKC_EINTERNAL     /* a bug in tkc: please report it */
} tkc_status;

/* Scalar element types. The first thirteen are in tinygrad's promotion priority; TKC_VOID is the
 * type of UOps that produce no value (SINK, STORE, ...); tensors never have it. Types added later
 * are appended after it (a value never changes): their place in promotion is tkc_least_upper_dtype's.
 *
 * The fp8 types (OCP 8-bit floats, as ml_dtypes / PyTorch) are storage types: a tensor of them holds
 * one byte per element; casts to and from every dtype round to nearest even (once, from float64
 * too); arithmetic and math functions on them are done in float32 and rounded back once, sums and
 * matmuls accumulate in float32 (max/min of e4m3fn start from -448: it has no -inf). Promotion: fp8 op fp8 of the same type stays fp8; e4m3fn op e5m2,
 * and an int or bool op fp8, give float16 (fp8 sits below float16 / bfloat16 only).
 *   TKC_FLOAT8_E4M3FN  1 sign, 4 exponent (bias 7), 3 mantissa bits; max 448; no inf; NaN 0x7f/0xff;
 *                      a value past 464 (and +-inf) becomes NaN
 *   TKC_FLOAT8_E5M2    1 sign, 5 exponent (bias 15), 2 mantissa bits; max 57344; +-inf 0x7c/0xfc;
 *                      a value from 61440 becomes inf */
typedef enum tkc_dtype {
  TKC_BOOL = 0,
  TKC_INT8,
  TKC_UINT8,
  TKC_INT16,
  TKC_UINT16,
  TKC_INT32,
  TKC_UINT32,
  TKC_INT64,
  TKC_UINT64,
  TKC_FLOAT16,
  TKC_BFLOAT16,
  TKC_FLOAT32,
  TKC_FLOAT64,
  TKC_VOID,
  TKC_FLOAT8_E4M3FN,
  TKC_FLOAT8_E5M2,
  TKC_NDTYPES
} tkc_dtype;

/* "float32"; NULL when out of range (also in tkc/uop.h). */
TKC_API const char *tkc_dtype_name(tkc_dtype dt);

/* float64 x as the bits of the fp8 dtype dt (TKC_FLOAT8_E4M3FN or TKC_FLOAT8_E5M2): one rounding to
 * nearest even, overflow and NaN as described at tkc_dtype (ml_dtypes' answers, bit for bit); 0 for
 * another dt. */
TKC_API uint8_t tkc_fp8_from_double(double x, tkc_dtype dt);
/* The value of fp8 bits b of dt as a float (exact; NaN as a quiet NaN of b's sign); 0 for another dt. */
TKC_API float tkc_fp8_to_float(uint8_t b, tkc_dtype dt);

/* The message of the last failure on this thread ("" when none). The string stays valid until
 * the next failing tkc call on the same thread. */
TKC_API const char *tkc_last_error(void);
/* The status of the last failure on this thread (TKC_OK when none). */
TKC_API tkc_status tkc_last_status(void);
/* Forget the last failure on this thread. */
TKC_API void tkc_clear_error(void);
/* A static description of a status code; never NULL. */
TKC_API const char *tkc_status_str(tkc_status s);
/* "MAJOR.MINOR.PATCH"; static. */
TKC_API const char *tkc_version(void);
/* Frees memory that tkc handed to the caller (strings from *_str / *_source functions). NULL is a no-op. */
TKC_API void tkc_free(void *p);

/* The allocator all of tkc's host memory comes from (device buffers of the host devices included),
 * in the shape of Lua's lua_Alloc:
 *   fn(ud, NULL, 0, n)      allocates n bytes (n > 0);
 *   fn(ud, p, osize, n)     resizes block p of osize bytes to n; on failure returns NULL and leaves
 *                           p as it was;
 *   fn(ud, p, osize, 0)     frees p; returns NULL.
 * Blocks must be aligned for any type (max_align_t), like malloc's. A NULL result is an
 * allocation failure: the tkc call that needed the memory returns TKC_ENOMEM and the ctx stays
 * usable. Memory the device drivers, the C compiler or LLVM take is theirs and does not pass here. */
typedef void *(*tkc_alloc_fn)(void *ud, void *ptr, size_t osize, size_t nsize);
/* Sets the allocator for blocks taken from now on, for the whole process (tkc's caches are shared
 * between ctxs, so this is not a ctx option); fn NULL restores the C library's. Every block is
 * freed by the allocator that made it, so this may be called at any time, from any thread; fn
 * must be thread-safe if tkc is used from several threads. At most 64 distinct (fn, ud) pairs per
 * process (TKC_EINVAL after that). */
TKC_API tkc_status tkc_set_allocator(tkc_alloc_fn fn, void *ud);
/* The allocator new blocks come from, and its ud in *ud (ud may be NULL). */
TKC_API tkc_alloc_fn tkc_get_allocator(void **ud);
/* Host memory tkc holds right now, over all ctxs and caches: live blocks and the bytes asked
 * for (either pointer may be NULL). */
TKC_API void tkc_memory_stats(size_t *blocks, size_t *bytes);

#ifdef __cplusplus
}
#endif
#endif
