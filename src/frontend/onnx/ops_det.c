/* ops_det.c — Det: the determinant of the last two (n, n) axes, by cofactor (Laplace) expansion
 * along the first row, unrolled while the graph is built. Exact to the dtype's rounding and free of
 * pivoting, it costs n! products: n is limited to 5 (the backend tests use 2 and 3). */
#include "ops_util.h"

#define DET_MAX_N 5

/* the determinant of rows [r, n) and the columns in cols (n - r of them) of e[i][j] */
static tkc_tensor *cofactor_det(tkc_tensor *e[DET_MAX_N][DET_MAX_N], int n, int r, const int *cols) {
  int m = n - r;
  if (m == 1) return e[r][cols[0]];
  tkc_tensor *sum = NULL;
  for (int k = 0; k < m; k++) {
    int rest[DET_MAX_N];
    for (int j = 0, q = 0; j < m; j++)
      if (j != k) rest[q++] = cols[j];
    tkc_tensor *t = tkc_mul(e[r][cols[k]], cofactor_det(e, n, r + 1, rest));
    sum = !sum ? t : k % 2 ? tkc_sub(sum, t) : tkc_add(sum, t);
  }
  return sum;
}

tkc_status onnx_build_det(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0);
  int nd = tkc_ndim(x);
  if (nd < 2 || tkc_dim(x, nd - 1) != tkc_dim(x, nd - 2)) return onnx_node_err(n, TKC_ESHAPE, "needs square matrices in the last two axes");
  int64_t dim = tkc_dim(x, nd - 1), rng[2 * ONNX_MAX_DIMS], sh[ONNX_MAX_DIMS];
  if (dim < 1 || dim > DET_MAX_N) return onnx_node_err(n, TKC_EUNSUPPORTED, "%lldx%lld matrices (1 to %d supported)", (long long)dim, (long long)dim, DET_MAX_N);
  int size = (int)dim, cols[DET_MAX_N];
  tkc_tensor *e[DET_MAX_N][DET_MAX_N];
  for (int d = 0; d < nd; d++) rng[2 * d] = 0, rng[2 * d + 1] = sh[d] = tkc_dim(x, d);
  for (int i = 0; i < size; i++) {
    cols[i] = i;
    for (int j = 0; j < size; j++) { /* e[i][j]: x[..., i, j] of the batch shape */
      rng[2 * (nd - 2)] = i, rng[2 * (nd - 2) + 1] = i + 1, rng[2 * (nd - 1)] = j, rng[2 * (nd - 1) + 1] = j + 1;
      e[i][j] = tkc_reshape(tkc_shrink(x, rng), nd - 2, sh);
    }
  }
  return onnx_set(n, 0, cofactor_det(e, size, 0, cols));
}
