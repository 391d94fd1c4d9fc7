"""train_digits.py -- training from Python: an MLP (64 -> 128 -> 10) learns scikit-learn's 8x8 digits
(1797 images; the digits.csv.gz that scikit-learn ships: 64 pixel values 0..16 and the label per line)
through the tkc package (bindings/python). The train step (forward, cross-entropy, backward, Adam) is
captured once with tkc.Jit and replayed for every batch; 20% of the images are held out and the
accuracy on them is printed after each epoch. The Python twin of examples/train_digits.c.

    python3 examples/python/train_digits.py [--data PATH/digits.csv.gz] [--device CPU] [--epochs 20]
                                            [--min-accuracy 0.95]

Without --data it finds the file in the installed scikit-learn (prints "skipped: ..." and exits 0 when
there is none). Exits 1 when the final held-out accuracy is below --min-accuracy (default 0: never).
"""
import argparse
import gzip
import os
import sys
import time

_BINDINGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python")
if os.path.isdir(os.path.join(_BINDINGS, "tkc")):
    sys.path.insert(0, os.path.abspath(_BINDINGS))
import numpy as np  # noqa: E402
import tkc  # noqa: E402

BATCH, HIDDEN = 32, 128


def sklearn_digits_path():
    try:
        import sklearn.datasets
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(sklearn.datasets.__file__), "data", "digits.csv.gz")
    return path if os.path.exists(path) else None


def read_digits(path):
    """(pixels (n, 64) float32 in [0, 1], labels (n,) int32) from "p0,...,p63,label" lines."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        data = np.loadtxt(f, delimiter=",", dtype=np.float32)
    return data[:, :64] / 16.0, data[:, 64].astype(np.int32)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", help="digits.csv.gz (default: scikit-learn's)")
    ap.add_argument("--device", default=None, help="CPU, LLVM, WEBGPU, CUDA, INTERP (default: $TKC_DEVICE or the best here)")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--min-accuracy", type=float, default=0.0)
    args = ap.parse_args()
    path = args.data or sklearn_digits_path()
    if path is None:
        print("skipped: scikit-learn (its digits.csv.gz) is not installed; pass --data")
        return 0
    x_all, y_all = read_digits(path)
    rng = np.random.default_rng(12345)
    order = rng.permutation(len(x_all))  # a fixed shuffle; the last 20% held out
    ntrain = len(x_all) * 4 // 5
    train, test = order[:ntrain], order[ntrain:]

    with tkc.Context(args.device) as ctx:
        def param(shape, fan_in):  # uniform in +-1/sqrt(fan_in), as torch's default Linear init
            bound = 1.0 / np.sqrt(fan_in)
            return ctx.tensor(rng.uniform(-bound, bound, shape).astype(np.float32)).requires_grad_()

        w1, b1, w2, b2 = param((64, HIDDEN), 64), param((HIDDEN,), 64), param((HIDDEN, 10), HIDDEN), param((10,), HIDDEN)
        opt = tkc.optim.Adam([w1, b1, w2, b2], lr=args.lr)

        def forward(x):
            return ((x @ w1 + b1).relu()) @ w2 + b2

        def train_step(x, y):
            loss = forward(x).cross_entropy(y).realize()  # the loss of this batch, before the update
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss

        step = tkc.Jit(ctx, train_step)
        print("train_digits.py: MLP on %s, %d training and %d held-out images, batch %d"
              % (ctx.device, len(train), len(test), BATCH))
        acc = 0.0
        for epoch in range(args.epochs):
            rng.shuffle(train)  # a new order of the training images each epoch
            t0, losses = time.perf_counter(), []
            for b in range(0, len(train) - BATCH + 1, BATCH):
                idx = train[b:b + BATCH]
                losses.append(step(ctx.tensor(x_all[idx]), ctx.tensor(y_all[idx])).item())
            took = time.perf_counter() - t0
            logits = forward(ctx.tensor(x_all[test])).numpy()
            acc = float((logits.argmax(1) == y_all[test]).mean())
            print("epoch %2d  loss %.4f  held-out accuracy %.2f%%  (%d steps, %.1f ms/step)"
                  % (epoch + 1, np.mean(losses), 100 * acc, len(losses), 1e3 * took / len(losses)))
        print("kernels per step: %d" % step.kernels)
        step.close()
        opt.close()
    if acc < args.min_accuracy:
        print("train_digits.py: held-out accuracy %.2f%% is below %.2f%%" % (100 * acc, 100 * args.min_accuracy))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
