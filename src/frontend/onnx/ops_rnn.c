/* ops_rnn.c — RNN, GRU and LSTM, unrolled over the sequence (its length is known when the graph is
 * built): per direction the input projection of every step is one matmul, then each step adds the
 * recurrent matmul and applies the gates. sequence_lens masks the steps past a batch entry's length
 * (its state stays, its Y is 0); layout 1 is batch-major. Activations, their alpha / beta, clip,
 * linear_before_reset (GRU) and peepholes (LSTM) as the spec. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ops_util.h"

enum { RNN_PLAIN, RNN_GRU, RNN_LSTM };
enum { A_RELU, A_TANH, A_SIGMOID, A_AFFINE, A_LEAKY, A_THRESH, A_SCALED_TANH, A_HARD_SIGMOID, A_ELU, A_SOFTSIGN, A_SOFTPLUS };

typedef struct rnn_act {
  int kind;
  double alpha, beta;
} rnn_act;

static const struct {
  const char *name;
  int kind, nparams; /* how many of alpha, beta it takes */
  double alpha, beta; /* the defaults of the corresponding ONNX op */
} ACTS[] = {
  {"Relu", A_RELU, 0, 0, 0},          {"Tanh", A_TANH, 0, 0, 0},           {"Sigmoid", A_SIGMOID, 0, 0, 0},
  {"Affine", A_AFFINE, 2, 1, 0},      {"LeakyRelu", A_LEAKY, 1, 0.01, 0},   {"ThresholdedRelu", A_THRESH, 1, 1, 0},
  {"ScaledTanh", A_SCALED_TANH, 2, 1, 1}, {"HardSigmoid", A_HARD_SIGMOID, 2, 0.2, 0.5}, {"Elu", A_ELU, 1, 1, 0},
  {"Softsign", A_SOFTSIGN, 0, 0, 0},  {"Softplus", A_SOFTPLUS, 0, 0, 0},
};

static tkc_tensor *act(tkc_ctx *c, const rnn_act *a, tkc_tensor *x) {
  tkc_dtype dt = tkc_dtype_of(x);
  tkc_tensor *al = tkc_scalar(c, dt, a->alpha), *be = tkc_scalar(c, dt, a->beta), *one = tkc_scalar(c, dt, 1);
  switch (a->kind) {
  case A_RELU: return tkc_relu(x);
  case A_TANH: return tkc_tanh(x);
  case A_SIGMOID: return tkc_sigmoid(x);
  case A_AFFINE: return tkc_add(tkc_mul(x, al), be);
  case A_LEAKY: return tkc_where(tkc_lt(x, tkc_scalar(c, dt, 0)), tkc_mul(x, al), x);
  case A_THRESH: return tkc_where(tkc_gt(x, al), x, tkc_scalar(c, dt, 0));
  case A_SCALED_TANH: return tkc_mul(al, tkc_tanh(tkc_mul(x, be)));
  case A_HARD_SIGMOID: return tkc_clamp(tkc_add(tkc_mul(x, al), be), 0, 1);
  case A_ELU: return tkc_where(tkc_lt(x, tkc_scalar(c, dt, 0)), tkc_mul(al, tkc_sub(tkc_exp(x), one)), x);
  case A_SOFTSIGN: return tkc_div(x, tkc_add(tkc_abs(x), one));
  default: return tkc_log(tkc_add(tkc_exp(x), one));
  }
}

/* the activations attribute (nper per direction, defaults when absent) with their alpha / beta, which
 * are consumed in order by the functions that take them */
static tkc_status read_acts(onnx_node *n, int ndir, int nper, const char *const *defaults, rnn_act *out) {
  const Onnx__AttributeProto *a = onnx_attr(n, "activations");
  const Onnx__AttributeProto *al = onnx_attr(n, "activation_alpha"), *be = onnx_attr(n, "activation_beta");
  int total = ndir * nper;
  if (a && a->n_strings && (int)a->n_strings != total && (int)a->n_strings != nper)
    return onnx_node_err(n, TKC_EINVAL, "%zu activations for %d directions", a->n_strings, ndir);
  size_t ia = 0, ib = 0;
  for (int i = 0; i < total; i++) {
    char name[64];
    if (a && a->n_strings) {
      const ProtobufCBinaryData *s = &a->strings[(size_t)i % a->n_strings];
      size_t len = s->len < 63 ? s->len : 63;
      memcpy(name, s->data, len);
      name[len] = 0;
    } else snprintf(name, sizeof name, "%s", defaults[i % nper]);
    size_t k = 0, nacts = sizeof ACTS / sizeof ACTS[0];
    while (k < nacts && strcmp(name, ACTS[k].name)) k++;
    if (k == nacts) return onnx_node_err(n, TKC_EUNSUPPORTED, "activation '%s'", name);
    out[i].kind = ACTS[k].kind, out[i].alpha = ACTS[k].alpha, out[i].beta = ACTS[k].beta;
    if (ACTS[k].nparams >= 1 && al && ia < al->n_floats) out[i].alpha = al->floats[ia++];
    if (ACTS[k].nparams >= 2 && be && ib < be->n_floats) out[i].beta = be->floats[ib++];
  }
  return TKC_OK;
}

/* entries [a, b) of the last axis */
static tkc_tensor *cols(tkc_tensor *x, int64_t a, int64_t b) { return onnx_slice_axis(x, tkc_ndim(x) - 1, a, b); }
/* x[i] along axis 0, that axis dropped */
static tkc_tensor *row(tkc_tensor *x, int64_t i) {
  int64_t sh[ONNX_MAX_DIMS];
  for (int d = 1; d < tkc_ndim(x); d++) sh[d - 1] = tkc_dim(x, d);
  return tkc_reshape(onnx_slice_axis(x, 0, i, i + 1), tkc_ndim(x) - 1, sh);
}

static tkc_tensor *clipped(tkc_ctx *c, tkc_tensor *x, double clip) {
  (void)c;
  return clip > 0 ? tkc_clamp(x, -clip, clip) : x;
}

/* one direction over all steps. xw: (S, B, G*H) input projections with both biases; r: (G*H, H);
 * p: peepholes (3H) or NULL; h, cst: the initial state (B, H); mask[t]: (B, 1) bool or NULL.
 * ys[t] gets step t's output (in time order); *h, *cst end as the final state. */
static void run_direction(tkc_ctx *c, int kind, int64_t H, tkc_tensor *xw, tkc_tensor *r, tkc_tensor *rb_h, tkc_tensor *p, const rnn_act *acts, double clip,
                          int lbr, int reverse, tkc_tensor *const *mask, tkc_tensor **h, tkc_tensor **cst, tkc_tensor **ys) {
  int64_t S = tkc_dim(xw, 0);
  tkc_tensor *rt = tkc_transpose(r, 0, 1); /* (H, G*H) */
  tkc_dtype dt = tkc_dtype_of(xw);
  tkc_tensor *one = tkc_scalar(c, dt, 1), *zero = tkc_scalar(c, dt, 0);
  for (int64_t k = 0; k < S; k++) {
    int64_t t = reverse ? S - 1 - k : k;
    tkc_tensor *x = row(xw, t), *hn, *cn = NULL;
    if (kind == RNN_PLAIN) {
      hn = act(c, &acts[0], clipped(c, tkc_add(x, tkc_matmul(*h, rt)), clip));
    } else if (kind == RNN_GRU) { /* gates z, r, h; rb_h: the recurrent bias of h (its sum with Wbh is in xw when lbr == 0) */
      tkc_tensor *hr = tkc_matmul(*h, cols(rt, 0, 2 * H));
      tkc_tensor *z = act(c, &acts[0], clipped(c, tkc_add(cols(x, 0, H), cols(hr, 0, H)), clip));
      tkc_tensor *rg = act(c, &acts[0], clipped(c, tkc_add(cols(x, H, 2 * H), cols(hr, H, 2 * H)), clip));
      tkc_tensor *rh = cols(rt, 2 * H, 3 * H), *pre;
      if (lbr) pre = tkc_add(cols(x, 2 * H, 3 * H), tkc_mul(rg, rb_h ? tkc_add(tkc_matmul(*h, rh), rb_h) : tkc_matmul(*h, rh)));
      else pre = tkc_add(cols(x, 2 * H, 3 * H), tkc_matmul(tkc_mul(rg, *h), rh));
      tkc_tensor *ht = act(c, &acts[1], clipped(c, pre, clip));
      hn = tkc_add(tkc_mul(tkc_sub(one, z), ht), tkc_mul(z, *h));
    } else { /* LSTM gates i, o, f, c; peepholes i, o, f */
      tkc_tensor *g = tkc_add(x, tkc_matmul(*h, rt));
      tkc_tensor *gi = cols(g, 0, H), *go = cols(g, H, 2 * H), *gf = cols(g, 2 * H, 3 * H), *gc = cols(g, 3 * H, 4 * H);
      if (p) gi = tkc_add(gi, tkc_mul(cols(p, 0, H), *cst)), gf = tkc_add(gf, tkc_mul(cols(p, 2 * H, 3 * H), *cst));
      tkc_tensor *i = act(c, &acts[0], clipped(c, gi, clip)), *f = act(c, &acts[0], clipped(c, gf, clip));
      tkc_tensor *ct = act(c, &acts[1], clipped(c, gc, clip));
      cn = tkc_add(tkc_mul(f, *cst), tkc_mul(i, ct));
      if (p) go = tkc_add(go, tkc_mul(cols(p, H, 2 * H), cn));
      tkc_tensor *o = act(c, &acts[0], clipped(c, go, clip));
      hn = tkc_mul(o, act(c, &acts[2], cn));
    }
    if (mask && mask[t]) {
      ys[t] = tkc_where(mask[t], hn, zero);
      hn = tkc_where(mask[t], hn, *h);
      if (cn) cn = tkc_where(mask[t], cn, *cst);
    } else ys[t] = hn;
    *h = hn;
    if (cn) *cst = cn;
  }
}

static tkc_status build_rnn(onnx_node *n, int kind) {
  tkc_status s = onnx_need(n, 3);
  if (s) return s;
  tkc_ctx *c = n->m->ctx;
  tkc_tensor *X = onnx_in(n, 0), *W = onnx_in(n, 1), *R = onnx_in(n, 2), *B = onnx_in(n, 3), *lens = onnx_in(n, 4);
  tkc_tensor *h0 = onnx_in(n, 5), *c0 = kind == RNN_LSTM ? onnx_in(n, 6) : NULL, *P = kind == RNN_LSTM ? onnx_in(n, 7) : NULL;
  int G = kind == RNN_PLAIN ? 1 : kind == RNN_GRU ? 3 : 4;
  int layout = (int)onnx_attr_int(n, "layout", 0);
  if (tkc_ndim(X) != 3 || tkc_ndim(W) != 3 || tkc_ndim(R) != 3) return onnx_node_err(n, TKC_ESHAPE, "X, W and R must be 3-D");
  if (layout) X = tkc_transpose(X, 0, 1); /* (B, S, I) -> (S, B, I) */
  int64_t S = tkc_dim(X, 0), Bn = tkc_dim(X, 1), H = onnx_attr_int(n, "hidden_size", tkc_dim(R, 2));
  const char *dir = onnx_attr_str(n, "direction", "forward");
  int ndir = !strcmp(dir, "bidirectional") ? 2 : 1, rev = !strcmp(dir, "reverse");
  if (!ndir || (ndir == 1 && !rev && strcmp(dir, "forward"))) return onnx_node_err(n, TKC_EINVAL, "direction '%s'", dir);
  if (S < 1 || S > 4096) return onnx_node_err(n, TKC_EUNSUPPORTED, "a sequence of %lld steps (1 to 4096 unrolled)", (long long)S);
  if (tkc_dim(W, 0) != ndir || tkc_dim(W, 1) != G * H || tkc_dim(R, 1) != G * H || tkc_dim(R, 2) != H)
    return onnx_node_err(n, TKC_ESHAPE, "W / R do not match %d direction(s) of hidden size %lld", ndir, (long long)H);
  if (kind == RNN_LSTM && onnx_attr_int(n, "input_forget", 0)) return onnx_node_err(n, TKC_EUNSUPPORTED, "input_forget");
  double clip = onnx_attr_float(n, "clip", 0);
  int lbr = kind == RNN_GRU && onnx_attr_int(n, "linear_before_reset", 0);
  static const char *const d_rnn[] = {"Tanh"}, *const d_gru[] = {"Sigmoid", "Tanh"}, *const d_lstm[] = {"Sigmoid", "Tanh", "Tanh"};
  rnn_act acts[6];
  int nper = kind == RNN_PLAIN ? 1 : kind == RNN_GRU ? 2 : 3;
  if ((s = read_acts(n, ndir, nper, kind == RNN_PLAIN ? d_rnn : kind == RNN_GRU ? d_gru : d_lstm, acts))) return s;
  tkc_dtype dt = tkc_dtype_of(X);
  int64_t bh[2] = {Bn, H};
  if (layout) { /* states (B, D, H) -> (D, B, H) */
    if (h0) h0 = tkc_transpose(h0, 0, 1);
    if (c0) c0 = tkc_transpose(c0, 0, 1);
  }
  tkc_tensor *mask[4096] = {0}, **maskp = NULL;
  if (lens) {
    tkc_tensor *l = tkc_reshape(tkc_cast(lens, TKC_INT64), 2, (int64_t[]){Bn, 1});
    for (int64_t t = 0; t < S; t++) mask[t] = tkc_lt(tkc_scalar(c, TKC_INT64, (double)t), l);
    maskp = mask;
  }
  tkc_tensor *ys_dir[2] = {0}, *hs[2], *cs[2];
  for (int d = 0; d < ndir; d++) {
    tkc_tensor *w = row(W, d), *r = row(R, d), *rb_h = NULL;
    tkc_tensor *xw = tkc_matmul(X, tkc_transpose(w, 0, 1)); /* (S, B, G*H) */
    if (B) {
      tkc_tensor *b = row(B, d), *wb = cols(b, 0, G * H), *rb = cols(b, G * H, 2 * G * H);
      if (lbr) { /* Rbh multiplies with r: kept apart; Rbz, Rbr still add to the input side */
        rb_h = cols(rb, 2 * H, 3 * H);
        rb = tkc_cat(2, (tkc_tensor *[]){cols(rb, 0, 2 * H), tkc_full(c, dt, 1, (int64_t[]){H}, 0)}, 0);
      }
      xw = tkc_add(xw, tkc_add(wb, rb));
    }
    hs[d] = h0 ? row(h0, d) : tkc_full(c, dt, 2, bh, 0);
    cs[d] = c0 ? row(c0, d) : tkc_full(c, dt, 2, bh, 0);
    tkc_tensor **ys = calloc((size_t)S, sizeof *ys);
    if (!ys) return onnx_node_err(n, TKC_ENOMEM, "out of memory");
    run_direction(c, kind, H, xw, r, rb_h, P ? row(P, d) : NULL, acts + d * nper, clip, lbr, d == 1 || rev, maskp, &hs[d], &cs[d], ys);
    ys_dir[d] = tkc_stack((int)S, ys, 0); /* (S, B, H) */
    free(ys);
  }
  tkc_tensor *Y = tkc_stack(ndir, ys_dir, 1); /* (S, D, B, H) */
  tkc_tensor *Yh = tkc_stack(ndir, hs, 0), *Yc = tkc_stack(ndir, cs, 0); /* (D, B, H) */
  if (layout) {
    Y = tkc_permute(Y, (int[]){2, 0, 1, 3}); /* (B, S, D, H) */
    Yh = tkc_transpose(Yh, 0, 1), Yc = tkc_transpose(Yc, 0, 1);
  }
  if ((s = onnx_set(n, 0, Y))) return s;
  if (n->nout > 1 && (s = onnx_set(n, 1, Yh))) return s;
  return kind == RNN_LSTM && n->nout > 2 ? onnx_set(n, 2, Yc) : TKC_OK;
}
tkc_status onnx_build_rnn(onnx_node *n) { return build_rnn(n, RNN_PLAIN); }
tkc_status onnx_build_gru(onnx_node *n) { return build_rnn(n, RNN_GRU); }
tkc_status onnx_build_lstm(onnx_node *n) { return build_rnn(n, RNN_LSTM); }
