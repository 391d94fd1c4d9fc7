/* Kernel opts as data (tinygrad's Kernel + Opt): a kernel's axes, and the opts that split, pad and
 * reorder them. The lowerer reads the result; the heuristics (and later the beam search) choose the
 * opts. Internal: not installed. */
#ifndef TKC_CODEGEN_OPTS_H
#define TKC_CODEGEN_OPTS_H

#include "tkc/render.h"
#include "shape/shape.h"

typedef enum tkc_axis_kind {
  TKC_AX_GLOBAL, /* an output loop (or launch index on GPUs) */
  TKC_AX_REDUCE, /* a reduce loop */
  TKC_AX_LOCAL,  /* GPUs: output threads of a workgroup (lidx) */
  TKC_AX_GROUP_LOCAL, /* GPUs: reduce threads of a workgroup, each with its own partial result,
                         combined through shared memory after a barrier */
  TKC_AX_UPCAST, /* output lanes: each lane computes its own output */
  TKC_AX_UNROLL, /* reduce lanes: added to the one accumulator in loop order (same result as the loop) */
  TKC_AX_GROUP   /* host devices: reduce lanes with accumulators of their own (vector accumulators),
                    combined after the loop */
} tkc_axis_kind;

/* One axis: it adds (its index) * stride to the index of kernel dim `dim`. */
typedef struct tkc_kaxis {
  int dim;
  int64_t size, stride;
  tkc_axis_kind kind;
} tkc_kaxis;

#define TKC_MAX_AXES 32
#define TKC_MAX_OPTS 24
#define TKC_MAX_LANES 256 /* upcast x unroll lanes of one kernel */

/* A kernel dim of variable length: variable name (in [vmin, vmax]) + c. Its size in the shapes
 * is vmax + c: buffers and views are laid out for that, loops stop at the variable's value. */
typedef struct tkc_kvar {
  char name[32]; /* "": a fixed dim */
  int64_t vmin, vmax, c;
} tkc_kvar;

/* The axes of a kernel: loop axes in loop order (global, then reduce), then lane axes in the order
 * their opts made them. */
typedef struct tkc_kshape {
  int ndim;
  int64_t out[TKC_MAX_DIMS], full[TKC_MAX_DIMS]; /* the AST's shapes */
  tkc_kvar var[TKC_MAX_DIMS];                    /* of the full shape */
  int64_t padded[TKC_MAX_DIMS];                  /* full after PADTO (>= full) */
  int naxes;
  tkc_kaxis ax[TKC_MAX_AXES];
  int nopts;
  tkc_opt opts[TKC_MAX_OPTS];
  bool nolocals; /* GPUs: no automatic workgroup of output threads (NOLOCALS) */
  bool tc;       /* tensor cores (TC): lowered by tensor_core.c */
} tkc_kshape;

/* The axes of ast (SINK(STORE) with arg (output shape, full shape); a dim of variable length is
 * (name, min, max, c) there) before any opt. No opt splits or pads a variable-length dim. */
TKC_HIDDEN tkc_status tkc_kshape_init(tkc_kshape *ks, const tkc_uop *ast);
/* Applies one opt for renderer r (NULL: INTERP); TKC_EINVAL with the reason when illegal, ks unchanged. */
TKC_HIDDEN tkc_status tkc_kshape_apply(tkc_kshape *ks, tkc_opt opt, const tkc_renderer *r);
/* Axes of each kind; the index of the first reduce axis; the product of the lane sizes. */
TKC_HIDDEN int tkc_kshape_count(const tkc_kshape *ks, tkc_axis_kind kind);
TKC_HIDDEN int tkc_kshape_first_reduce(const tkc_kshape *ks);
TKC_HIDDEN int64_t tkc_kshape_lanes(const tkc_kshape *ks);
/* The product of the sizes of the workgroup-thread axes (LOCAL, GROUP_LOCAL); 1 when none. */
TKC_HIDDEN int64_t tkc_kshape_threads(const tkc_kshape *ks);
/* Appends the opts to a kernel name ("r_512_512_512" -> "r_512_512_512_U1x8_S0x1"). */
TKC_HIDDEN void tkc_kshape_name(const tkc_kshape *ks, char *buf, size_t n);
/* "UPCAST(1,8) SWAP(0,1)" for TKC_DEBUG. */
TKC_HIDDEN void tkc_kshape_opts_str(const tkc_kshape *ks, char *buf, size_t n);

/* A matmul-like kernel tensor cores can run (codegen/tensor_core.c): kernel dims m, n (outputs) and k
 * (the reduce), the reduce, the loads of the product (a broadcast along n, b along m: float32 loads
 * where the product's operands are fused casts of them) and din, the dtype the tensor cores get. */
typedef struct tkc_tc_info {
  int m, n, k, din;
  const tkc_uop *reduce, *a, *b;
} tkc_tc_info;
/* Whether ast can use renderer r's tensor cores; TKC_EINVAL with the reason when not. */
TKC_HIDDEN tkc_status tkc_tc_match(const tkc_uop *ast, const tkc_kshape *ks, const tkc_renderer *r, tkc_tc_info *info);
/* The kernel for ast on tensor cores (ks has TC); NULL with the reason. */
TKC_HIDDEN tkc_uop *tkc_lower_tc(tkc_graph *g, tkc_uop *ast, const tkc_kshape *ks, const tkc_renderer *r);

/* tinygrad's hand_coded_optimizations for renderer r (NULL: INTERP): applies the opts it picks to
 * ks (each one legal by construction; one that is refused is skipped). ast gives the loads' strides. */
TKC_HIDDEN void tkc_heuristics(tkc_kshape *ks, const tkc_uop *ast, const tkc_renderer *r);
/* The settings that change the heuristics' picks (beyond the kernel and the renderer), as text for
 * kernel cache keys ("simd=32"); returns the length written (snprintf's). */
TKC_HIDDEN int tkc_heuristics_key(char *buf, size_t n);

/* The SIMD register width of the host CPU in bytes (64 with AVX-512, 32 with AVX/AVX2, else 16),
 * read from the CPU at run time; TKC_SIMD_BYTES overrides it. */
TKC_HIDDEN int tkc_host_simd_bytes(void);

#endif
