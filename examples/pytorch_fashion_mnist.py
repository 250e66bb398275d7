#!/usr/bin/python3
"""A complete PyTorch trainer that follows Scavenger's trainer contract (docs/TRAINER-CONTRACT.md):
LeNet-5 on Fashion-MNIST, synchronous data-parallel SGD through scavenger.trainer.

Under Scavenger (`scavenger run --exec '/usr/bin/python3 examples/pytorch_fashion_mnist.py'`)
the SCV_* variables set K, B, the seed, the rules, the metrics file and the checkpoint, and
override the options below of the same meaning. Standalone it trains on one process:

    /usr/bin/python3 examples/pytorch_fashion_mnist.py --epochs 1
    mpirun -np 2 /usr/bin/python3 examples/pytorch_fashion_mnist.py --epochs 1   # K=2

The model is the one of `scavenger train --model lenet` (conv 1->6 5x5 pad 2, ReLU, max-pool 2,
conv 6->16 5x5, ReLU, max-pool 2, fc 400->120->84->10: 61706 parameters) with SGD (momentum
0.9, weight decay 5e-4). Data: Debian's gz IDX files (/usr/share/datasets/fashion-mnist, or
--data DIR), pixels scaled to [0, 1]. --subset N trains on the first N training samples and
evaluates on the first min(N/5, 10000) test samples (fast tests).

Periodic evaluation (every SCV_EVAL_EVERY_EPOCHS epochs; --eval-every-epochs standalone): test
accuracy and loss on the first --eval-subset test samples (default: all of the test set in
use), shared by the workers: worker k evaluates its n/K of them and the sums are allreduced,
so the figures do not depend on K. The eval line's train_loss is the sample-weighted mean of
the minibatch losses since the previous periodic evaluation.
"""
import argparse
import gzip
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from scavenger import trainer as scv  # noqa: E402

DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(path, offset):
    try:
        with gzip.open(path) as f:
            return np.frombuffer(f.read(), np.uint8, offset=offset)
    except OSError as e:
        raise scv.UsageError("%s: cannot read: %s" % (path, e.strerror or e)) from None


def load(data, split, limit=None):
    """(x, y): float32 images N x 1 x 28 x 28 in [0, 1] and int64 labels; the first `limit`."""
    pre = "train" if split == "train" else "t10k"
    x = read_idx(os.path.join(data, "%s-images-idx3-ubyte.gz" % pre), 16).reshape(-1, 1, 28, 28)
    y = read_idx(os.path.join(data, "%s-labels-idx1-ubyte.gz" % pre), 8)
    if limit is not None:
        x, y = x[:limit], y[:limit]
    return torch.from_numpy(x.astype(np.float32) / 255.0), torch.from_numpy(y.astype(np.int64))


def lenet():
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))


def options(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=DATA, help="directory of the 4 gz IDX files (%(default)s)")
    ap.add_argument("--subset", type=int, default=0, help="train on the first N samples (0: all)")
    ap.add_argument("--eval-subset", type=int, default=0,
                    help="periodic evaluations on the first N test samples (0: all in use)")
    ap.add_argument("--batch", type=int, default=64, help="global batch when standalone (SCV_BATCH)")
    ap.add_argument("--epochs", type=float, default=1.0, help="standalone stop (SCV_MAX_EPOCHS); 0: none")
    ap.add_argument("--iterations", type=int, default=0, help="standalone stop (SCV_UNTIL_ITERATIONS)")
    ap.add_argument("--eval-every-epochs", type=float, default=1.0, help="standalone (SCV_EVAL_EVERY_EPOCHS)")
    ap.add_argument("--seed", type=int, default=1, help="standalone seed (SCV_SEED)")
    ap.add_argument("--metrics", help="standalone metrics file (SCV_METRICS)")
    ap.add_argument("--checkpoint-dir", help="standalone checkpoint directory (SCV_CHECKPOINT_DIR)")
    ap.add_argument("--lr", type=float, default=0.05, help="base learning rate (%(default)s)")
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--weight-decay", type=float, default=5e-4)
    ap.add_argument("--lr-scaling", choices=("none", "sqrt", "linear"), default="none",
                    help="scale --lr by B/B0 (linear) or its square root (%(default)s)")
    ap.add_argument("--base-batch", type=int, default=64, help="B0 of --lr-scaling (%(default)s)")
    ap.add_argument("--warmup-epochs", type=float, default=0.0, help="linear warm-up (%(default)s)")
    ap.add_argument("--checkpoint-every", type=int, default=200, help="iterations (0: only at the stop)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads per process (%(default)s)")
    ap.add_argument("--plain-ddp", action="store_true",
                    help="benchmarking only: DDP's own averaging, no statistics, no stop flag")
    a = ap.parse_args(argv)
    for name in ("subset", "eval_subset", "iterations", "checkpoint_every"):
        if getattr(a, name) < 0:
            ap.error("--%s must be >= 0" % name.replace("_", "-"))
    if a.batch < 1 or a.threads < 1 or a.base_batch < 1:
        ap.error("--batch, --threads and --base-batch must be >= 1")
    if not (a.lr > 0) or a.epochs < 0 or a.eval_every_epochs < 0 or a.warmup_epochs < 0:
        ap.error("--lr must be > 0; --epochs, --eval-every-epochs, --warmup-epochs >= 0")
    return a


def main(argv=None):
    a = options(sys.argv[1:] if argv is None else argv)
    env = scv.Env.from_environ(batch=a.batch, seed=a.seed, metrics=a.metrics,
                               checkpoint_dir=a.checkpoint_dir, until_iterations=a.iterations,
                               max_epochs=a.epochs, eval_every_epochs=a.eval_every_epochs)
    torch.set_num_threads(a.threads)
    x, y = load(a.data, "train", a.subset or None)
    n_test = min(a.subset // 5, 10000) if a.subset else None
    xt, yt = load(a.data, "test", n_test)
    if a.eval_subset:
        xt, yt = xt[:a.eval_subset], yt[:a.eval_subset]
    if len(x) == 0 or len(xt) == 0:
        raise scv.UsageError("--subset %d leaves no training or test sample" % a.subset)

    torch.manual_seed(env.seed)  # the same initial weights on every worker and at every K
    model = lenet()
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=a.momentum, weight_decay=a.weight_decay)
    n = len(x)
    tr = scv.Trainer(
        env, model, opt, n, model_name="lenet", input_floats=784,
        act_bytes=scv.activation_bytes(model, x[0]), checkpoint_every=a.checkpoint_every,
        lr_at=lambda B, seen: scv.lr_at(a.lr, B, seen, n, a.base_batch, a.lr_scaling, a.warmup_epochs),
        evaluate=lambda m: scv.evaluate_classifier(m, xt, yt, env.workers, env.rank),
        job_extra={"dataset": "fashion-mnist"}, grad_stats=not a.plain_ddp)
    return tr.fit(lambda idx: (x[idx], y[idx]), F.cross_entropy)


if __name__ == "__main__":
    scv.run_main(main)
