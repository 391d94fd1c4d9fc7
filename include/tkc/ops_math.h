/* tkc/ops_math.h — elementwise math, reductions and scans (part of the tensor API: include tkc.h). Every function
 * follows tkc.h's rules: NULL + tkc_last_error() on bad input, results are lazy tensors of the same
 * ctx, inputs are not consumed. */
#ifndef TKC_OPS_MATH_H
#define TKC_OPS_MATH_H

#include "tkc.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
