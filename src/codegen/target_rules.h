/* src/codegen/target_rules.h — meaning as rewrite rules, chosen by what a target can do, applied
 * before rendering (through a renderer's extra_matcher) so that renderers only print.
 *
 * A target names what it lacks with TKC_TARGET_* flags; tkc_target_rules(flags) is the matcher of
 * the rules that supply it (built once per flag set, shared, never freed by the caller):
 *
 *   TKC_TARGET_GUARD_DIV_ZERO    integer IDIV/MOD by a divisor that may be 0 get INTERP's x/0 = x%0 = 0
 *                                (and bool IDIV/MOD become AND / false)
 *   TKC_TARGET_GUARD_DIV_MINUS1  ... and signed ones by a divisor that may be -1 get INT_MIN/-1 = INT_MIN
 *                                (wraps) and x%-1 = 0 where the target's division would trap or be undefined
 *   TKC_TARGET_BF16_BITS         bfloat16 is a 16-bit storage type: values are its bits, casts to/from
 *                                float32 are integer ops on them (round to nearest even, NaN stays a
 *                                quiet NaN, as src/uops/alu.c), arithmetic is done in float32 and
 *                                rounded (NEG flips the sign bit, MAX selects, compares are exact)
 *   TKC_TARGET_BF16_VIA_F64      with TKC_TARGET_BF16_BITS: inexact arithmetic in float64 (not MULACC,
 *                                which is one float32 fma), then rounded to float32 and bfloat16
 *   TKC_TARGET_SCALAR_ALU        no vector ALU: ALU ops, CAST and BITCAST on vectors become a
 *                                VECTORIZE of the per-lane ops on GEPs (tinygrad's no_vectorized_alu)
 *   TKC_TARGET_LANE_GEPS         some vector ALU: the renderer's own rule scalarizes the vector ops it
 *                                cannot do (tkc_target_scalarize, its own predicate); this adds the
 *                                companion rule GEP(VECTORIZE(s...), i) -> s_i (in SCALAR_ALU already)
 *   TKC_TARGET_GUARD_SHIFT       integer SHL/SHR by a count that may be outside [0, bits) get INTERP's
 *                                answer (0, or the sign fill for SHR of signed values; a negative count
 *                                0) and shift by the count masked to bits-1 (C: undefined otherwise)
 *   TKC_TARGET_GUARD_FTOI        float -> int CASTs truncate toward zero and saturate, NaN -> 0 (as
 *                                tkc_value_cast); the target converts only values in range
 *
 * PTX uses GUARD_DIV_ZERO | GUARD_DIV_MINUS1 | BF16_BITS | SCALAR_ALU; LLVM GUARD_DIV_ZERO |
 * GUARD_DIV_MINUS1 | BF16_BITS | BF16_VIA_F64; C GUARD_DIV_ZERO | GUARD_DIV_MINUS1 | GUARD_SHIFT | GUARD_FTOI | LANE_GEPS (its
 * bf16 prelude could become BF16_BITS | BF16_VIA_F64); WGSL GUARD_DIV_ZERO | LANE_GEPS (WGSL defines
 * INT_MIN / -1 = INT_MIN and INT_MIN % -1 = 0). Internal. */
#ifndef TKC_TARGET_RULES_H
#define TKC_TARGET_RULES_H

#include <stdatomic.h>
#include "base/common.h"
#include "tkc/render.h"

enum {
  TKC_TARGET_GUARD_DIV_ZERO = 1u << 0,
  TKC_TARGET_GUARD_DIV_MINUS1 = 1u << 1,
  TKC_TARGET_BF16_BITS = 1u << 2,
  TKC_TARGET_BF16_VIA_F64 = 1u << 3,
  TKC_TARGET_SCALAR_ALU = 1u << 4,
  TKC_TARGET_LANE_GEPS = 1u << 5,
  TKC_TARGET_GUARD_SHIFT = 1u << 6,
  TKC_TARGET_GUARD_FTOI = 1u << 7,
  TKC_TARGET_NFLAGS = 8
};

/* The rules for a target lacking what flags name; NULL (with the error) only when they do not compile
 * or flags has unknown bits (TKC_EINVAL). */
TKC_HIDDEN const tkc_matcher *tkc_target_rules(unsigned flags);
/* own's rules then tkc_target_rules(flags), concatenated once into *slot (a renderer's extra_matcher:
 * `static tkc_matcher *_Atomic pm; return tkc_target_matcher(&pm, own, flags);`). */
TKC_HIDDEN const tkc_matcher *tkc_target_matcher(tkc_matcher *_Atomic *slot, const tkc_matcher *own, unsigned flags);

/* The SCALAR_ALU rewrite of one vector ALU op, CAST or BITCAST u: a VECTORIZE of its per-lane ops
 * on GEPs of its vector sources (a scalar source serves every lane); NULL when u is not one (a
 * scalar, a pointer, more than 256 lanes, a BITCAST changing the lane count) or out of memory. */
TKC_HIDDEN tkc_uop *tkc_target_scalarize(tkc_graph *g, const tkc_uop *u);

/* The integer divisor d is never 0: a nonzero CONST, or a scalar whose range excludes 0 (uint64
 * ranges are not trusted: they saturate). Vectors: false. */
TKC_HIDDEN bool tkc_divisor_nonzero(const tkc_uop *d);
/* ... and, for a signed dtype, never -1 either: x / d and x % d need no guard on any target. */
TKC_HIDDEN bool tkc_divisor_safe(const tkc_uop *d);
/* d may divide as is: safe (minus1: tkc_divisor_safe, else tkc_divisor_nonzero), or the divisor the
 * guard rules build, WHERE(d != 0 [& d != -1], d, 1); a VECTORIZE when each of its lanes is one of
 * those (vector constants, the guard split into lanes by SCALAR_ALU). A renderer that prints
 * IDIV/MOD checks this and refuses otherwise (the kernel did not go through its target rules). */
TKC_HIDDEN bool tkc_divisor_guarded(const tkc_uop *d, bool minus1);
/* Every lane of shift count cnt is in [0, bits): a bool, constants, a scalar by its range (not
 * uint64), or the masked count the GUARD_SHIFT rule builds (AND with a constant in range); a
 * VECTORIZE when each of its lanes is one of those. */
TKC_HIDDEN bool tkc_shift_count_safe(const tkc_uop *cnt, int bits);
/* x is the operand GUARD_FTOI clamps into range before a float -> int CAST (or a VECTORIZE of such
 * lanes: the clamp split by SCALAR_ALU). */
TKC_HIDDEN bool tkc_ftoi_clamped(const tkc_uop *x);

#endif
