/* nms.c — NonMaxSuppression, on the host: its output's length depends on the values (as tinygrad
 * reads them too). Per batch and class: candidates above score_threshold by falling score (ties: the
 * lower index first), each kept unless its IoU with a kept box exceeds iou_threshold, at most
 * max_output_boxes_per_class; as onnx's reference. */
#include <math.h>
#include <stdlib.h>
#include "ops_util.h"

typedef struct cand {
  float score;
  int64_t idx;
} cand;

static int by_score(const void *a, const void *b) {
  const cand *x = a, *y = b;
  if (x->score != y->score) return x->score > y->score ? -1 : 1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void corners(const double *b, int center, double *y0, double *x0, double *y1, double *x1) {
  if (center) {
    *x0 = b[0] - b[2] / 2, *x1 = b[0] + b[2] / 2, *y0 = b[1] - b[3] / 2, *y1 = b[1] + b[3] / 2;
  } else {
    *y0 = fmin(b[0], b[2]), *y1 = fmax(b[0], b[2]), *x0 = fmin(b[1], b[3]), *x1 = fmax(b[1], b[3]);
  }
}

static int suppresses(const double *a, const double *b, int center, double thr) {
  double ay0, ax0, ay1, ax1, by0, bx0, by1, bx1;
  corners(a, center, &ay0, &ax0, &ay1, &ax1);
  corners(b, center, &by0, &bx0, &by1, &bx1);
  double iw = fmin(ax1, bx1) - fmax(ax0, bx0), ih = fmin(ay1, by1) - fmax(ay0, by0);
  if (iw <= 0 || ih <= 0) return 0;
  double inter = iw * ih, a1 = (ax1 - ax0) * (ay1 - ay0), a2 = (bx1 - bx0) * (by1 - by0), uni = a1 + a2 - inter;
  if (a1 <= 0 || a2 <= 0 || uni <= 0) return 0;
  return inter / uni > thr;
}

tkc_status onnx_build_nms(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *boxes = onnx_in(n, 0), *scores = onnx_in(n, 1);
  if (tkc_ndim(boxes) != 3 || tkc_dim(boxes, 2) != 4 || tkc_ndim(scores) != 3 || tkc_dim(scores, 0) != tkc_dim(boxes, 0) ||
      tkc_dim(scores, 2) != tkc_dim(boxes, 1))
    return onnx_node_err(n, TKC_ESHAPE, "boxes (B, N, 4) and scores (B, C, N) expected");
  int64_t B = tkc_dim(boxes, 0), N = tkc_dim(boxes, 1), C = tkc_dim(scores, 1), cnt;
  int64_t max_out = 0;
  double iou = 0, score_thr = 0;
  int has_score_thr = 0;
  if (onnx_has(n, 2)) {
    const int64_t *v = onnx_ints(n, 2, &cnt);
    if (!v) return tkc_last_status();
    max_out = cnt ? v[0] : 0;
  }
  double *v;
  if (onnx_has(n, 3)) {
    if (!(v = onnx_doubles(n, 3, &cnt))) return tkc_last_status();
    iou = cnt ? v[0] : 0;
    free(v);
  }
  if (onnx_has(n, 4)) {
    if (!(v = onnx_doubles(n, 4, &cnt))) return tkc_last_status();
    has_score_thr = cnt > 0, score_thr = cnt ? v[0] : 0;
    free(v);
  }
  int center = (int)onnx_attr_int(n, "center_point_box", 0);
  double *bx = onnx_doubles(n, 0, &cnt), *sc = bx ? onnx_doubles(n, 1, &cnt) : NULL;
  cand *cs = malloc(sizeof(cand) * (size_t)(N ? N : 1));
  int64_t *kept = malloc(sizeof(int64_t) * (size_t)(N ? N : 1)), *out = NULL, nout = 0, cap = 0;
  if (!bx || !sc || !cs || !kept) {
    free(bx), free(sc), free(cs), free(kept);
    return tkc_last_status() ? tkc_last_status() : onnx_node_err(n, TKC_ENOMEM, "out of memory");
  }
  for (int64_t b = 0; b < B; b++)
    for (int64_t c = 0; c < C; c++) {
      int64_t nc = 0, nk = 0;
      for (int64_t i = 0; i < N; i++) {
        double s_ = sc[(b * C + c) * N + i];
        if (!has_score_thr || s_ > score_thr) cs[nc].score = (float)s_, cs[nc++].idx = i;
      }
      qsort(cs, (size_t)nc, sizeof *cs, by_score);
      for (int64_t i = 0; i < nc && nk < max_out; i++) {
        const double *box = bx + (b * N + cs[i].idx) * 4;
        int keep = 1;
        for (int64_t k = 0; k < nk && keep; k++) keep = !suppresses(box, bx + (b * N + kept[k]) * 4, center, iou);
        if (!keep) continue;
        kept[nk++] = cs[i].idx;
        if (nout == cap) {
          int64_t *grown = realloc(out, sizeof(int64_t) * 3 * (size_t)(cap = cap ? cap * 2 : 64));
          if (!grown) {
            free(bx), free(sc), free(cs), free(kept), free(out);
            return onnx_node_err(n, TKC_ENOMEM, "out of memory");
          }
          out = grown;
        }
        out[3 * nout] = b, out[3 * nout + 1] = c, out[3 * nout + 2] = cs[i].idx;
        nout++;
      }
    }
  free(bx), free(sc), free(cs), free(kept);
  int64_t sh[2] = {nout, 3};
  tkc_tensor *t = tkc_tensor_new(n->m->ctx, TKC_INT64, 2, sh, out);
  free(out);
  return onnx_set(n, 0, t);
}
