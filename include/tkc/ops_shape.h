/* tkc/ops_shape.h — shape ops, indexing, sorting (part of the tensor API: include tkc.h). Every function
 * follows tkc.h's rules: NULL + tkc_last_error() on bad input, results are lazy tensors of the same
 * ctx, inputs are not consumed. They are compositions of tkc.h's ops (as tinygrad builds them), so
 * they fuse with what comes before and after; negative axes count from the end.
 *
 * Index tensors (gather, index_select, scatter, scatter_add, one_hot) may have any integer dtype (not
 * bool: TKC_EDTYPE). A negative index counts from the end of its axis, as in numpy. An index outside
 * [-dim, dim) is TKC_EINVAL when the index tensor is realized (a tkc_tensor_new'ed or realized tensor,
 * or a view of one): its values are then read back and checked at the call (later tkc_copy_in data is
 * not checked). A lazy index tensor cannot be checked: there an out-of-range index selects nothing
 * (gather / index_select give 0, one_hot an all-zero row, scatter / scatter_add write nothing). The
 * index ops compare each index with an arange, so they cost O(output elements * dim) (scatter: a's
 * elements * the index's dim on axis), and that work must stay within 2^31 - 1 (TKC_ESHAPE beyond).
 * int64/uint64 index tensors need a device with int64 (not WEBGPU). gather, index_select, scatter and
 * sort move values bit-exactly (NaN payloads, -0.0 kept). */
#ifndef TKC_OPS_SHAPE_H
#define TKC_OPS_SHAPE_H

#include "tkc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- shape */

/* The n tensors ts[0..n) joined along axis: one dtype, one ctx, the same ndim (>= 1) and the same dims
 * but on axis. One kernel for up to 16 inputs (each is padded to the full size and selected by a
 * mask); more inputs are joined in groups of 16, one kernel per group. TKC_EINVAL for n < 1, NULL ts
 * or a bad axis; TKC_ESHAPE / TKC_EDTYPE for mismatched shapes / dtypes. */
TKC_API tkc_tensor *tkc_cat(int n, tkc_tensor *const *ts, int axis);
/* The n tensors (same shape and dtype) stacked along a new axis in [-ndim-1, ndim]. As tkc_cat. */
TKC_API tkc_tensor *tkc_stack(int n, tkc_tensor *const *ts, int axis);
/* Views of a cut along axis into n pieces of sizes[0..n) (each >= 0, summing to the dim) written to
 * out[0..n). On failure every out[i] is NULL: TKC_EINVAL for n < 1, NULL sizes/out, a bad axis or
 * sizes that do not sum to the dim. */
TKC_API tkc_status tkc_split(tkc_tensor *a, int axis, int n, const int64_t *sizes, tkc_tensor **out);
/* torch.chunk: views of a cut along axis into pieces of ceil(dim / chunks) (the last may be smaller),
 * written to out (room for chunks entries). Returns how many were written (fewer than chunks when the
 * dim is small, e.g. 5 in 4 chunks gives 2,2,1; a dim of 0 gives chunks empty pieces); -1 on error
 * (chunks < 1, NULL out, a bad axis). */
TKC_API int tkc_chunk(tkc_tensor *a, int axis, int chunks, tkc_tensor **out);
/* a without the size-1 axes axes[0..naxes); naxes 0 = every size-1 axis. TKC_ESHAPE when a listed
 * axis is not of size 1; TKC_EINVAL for a bad or repeated axis or naxes > 0 with NULL axes. */
TKC_API tkc_tensor *tkc_squeeze(tkc_tensor *a, int naxes, const int *axes);
/* a with a new size-1 axis at axis, in [-ndim-1, ndim] (-1 = last). TKC_EINVAL out of range. */
TKC_API tkc_tensor *tkc_unsqueeze(tkc_tensor *a, int axis);
/* a tiled repeats[i] times along each axis (torch.repeat / numpy.tile): with n > ndim, a gets leading
 * size-1 axes; with n < ndim, repeats apply to the last n axes. repeats >= 0 (0 gives an empty axis).
 * TKC_EINVAL for negative repeats or NULL repeats with n > 0; TKC_ESHAPE beyond 8 dims or 2^31 - 1
 * elements, and for an 8-dim result that tiles an axis of size > 1 (that needs a spare dim). A view:
 * no copy until used. */
TKC_API tkc_tensor *tkc_repeat(tkc_tensor *a, int n, const int64_t *repeats);
/* Axes start..end (inclusive) merged into one (torch.flatten); a 0-d tensor becomes (1). TKC_EINVAL
 * for axes out of range or start after end. */
TKC_API tkc_tensor *tkc_flatten(tkc_tensor *a, int start, int end);
/* The lower (tril: column <= row + k) or upper (triu: column >= row + k) triangle of the last two axes
 * (ndim >= 2, else TKC_ESHAPE), the rest set to 0; k may be any value. One elementwise kernel. */
TKC_API tkc_tensor *tkc_tril(tkc_tensor *a, int64_t k);
TKC_API tkc_tensor *tkc_triu(tkc_tensor *a, int64_t k);
/* The value of a one-element tensor (any shape of numel 1; realized if needed) converted to double
 * (int64 / uint64 beyond 2^53 round). TKC_EINVAL for NULL out; TKC_ESHAPE when numel != 1. */
TKC_API tkc_status tkc_item(tkc_tensor *t, double *out);
/* The same element's bytes copied to dst, which holds nbytes == the dtype's itemsize (an int32_t for
 * TKC_INT32, the uint16_t bits of a float16 ...): TKC_EINVAL otherwise or for NULL dst. */
TKC_API tkc_status tkc_item_bytes(tkc_tensor *t, void *dst, size_t nbytes);

/* ---------------------------------------------------------------- indexing (see the top for indices) */

/* torch.gather: out[..i..] = a[..i with index[..i..] on axis..]; index has a's ndim and dims <= a's
 * on every other axis; the result has index's shape and a's dtype. TKC_ESHAPE otherwise. */
TKC_API tkc_tensor *tkc_gather(tkc_tensor *a, int axis, tkc_tensor *index);
/* numpy.take along an axis: the slices of a at index (any shape) along axis, so the result has shape
 * a.shape[:axis] + index.shape + a.shape[axis+1:] (a 1-D index is torch.index_select; a (V, E) table
 * with (B, T) token ids gives (B, T, E): an embedding lookup). a must be >= 1-D and a.ndim +
 * index.ndim <= 8 (TKC_ESHAPE). */
TKC_API tkc_tensor *tkc_index_select(tkc_tensor *a, int axis, tkc_tensor *index);
/* torch.scatter: a copy of a with out[..i with index[..i..] on axis..] = src[..i..] for every position
 * i of index. index, a and src have one ndim; index dims <= src's, and <= a's except on axis; src has
 * a's dtype (TKC_EDTYPE otherwise; only the index-shaped corner of src is read). When several
 * positions write one element, the last along axis wins (deterministic). Two kernels. */
TKC_API tkc_tensor *tkc_scatter(tkc_tensor *a, int axis, tkc_tensor *index, tkc_tensor *src);
/* As tkc_scatter, but the values add up into a (duplicates add; bool: logical or). The sum of the
 * values written to one element is formed first (ints in int32 / their own width, floats in float32
 * or wider), then added to a. One kernel. */
TKC_API tkc_tensor *tkc_scatter_add(tkc_tensor *a, int axis, tkc_tensor *index, tkc_tensor *src);
/* int32 tensor of shape index.shape + (num_classes,): 1 where the last coordinate equals the index.
 * num_classes >= 1; TKC_ESHAPE when the result would exceed 8 dims or 2^31 - 1 elements. */
TKC_API tkc_tensor *tkc_one_hot(tkc_tensor *index, int64_t num_classes);
/* int32 index of the largest (argmax) / smallest (argmin) element along axis, the first one on ties;
 * a NaN counts as the extreme (the first NaN wins, as numpy). keepdim keeps the axis as size 1. A 0-d
 * a gives 0 (axis 0 or -1). TKC_ESHAPE for an empty axis, TKC_EINVAL for a bad axis. Two kernels. */
TKC_API tkc_tensor *tkc_argmax(tkc_tensor *a, int axis, int keepdim);
TKC_API tkc_tensor *tkc_argmin(tkc_tensor *a, int axis, int keepdim);
/* A stable sort along axis: *values (a's dtype) and *indices (int32: where each value came from),
 * either may be NULL when not wanted (not both). Ascending puts NaN last, descending first (torch);
 * -0.0 and 0.0 tie. Built as a rank (how many elements come before each one: a count over all pairs)
 * and a select by rank, so it costs O(numel * dim): TKC_ESHAPE when numel * dim exceeds 2^31 - 1
 * (e.g. a 1-D sort of more than 46340 elements). Two kernels each (the rank, then the select; the
 * rank is computed once when both are realized). On failure *values / *indices are NULL. */
TKC_API tkc_status tkc_sort(tkc_tensor *a, int axis, int descending, tkc_tensor **values, tkc_tensor **indices);
/* The k largest (largest != 0) or smallest elements along axis, sorted, as tkc_sort's first k (ties:
 * the earlier index first). 0 <= k <= dim, else TKC_EINVAL; same cost and limits as tkc_sort. */
TKC_API tkc_status tkc_topk(tkc_tensor *a, int64_t k, int axis, int largest, tkc_tensor **values, tkc_tensor **indices);

#ifdef __cplusplus
}
#endif
#endif
