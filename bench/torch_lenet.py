#!/usr/bin/python3
"""PyTorch 1.13 (Debian's python3-torch) peer for bench/throughput.sh.

Trains the same LeNet-5 as `scavenger train --model lenet` (conv 1->6 5x5 pad 2, ReLU,
max-pool 2, conv 6->16 5x5, ReLU, max-pool 2, fc 400->120->84->10) on Fashion-MNIST with
SGD (lr 0.05, momentum 0.9, weight decay 5e-4), one thread per process, data gathered per
batch from a per-epoch permutation as Scavenger does. Prints one JSON line:
{"system":"pytorch","workers":K,"batch":B,"samples_per_sec":...} where B is the global
batch and the rate counts iterations after the first `--warmup`.

usage: torch_lenet.py --workers K --batch B --iterations N [--warmup W]
"""
import argparse, gzip, json, os, sys, time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

DATA = "/usr/share/datasets/fashion-mnist"


def load():
    with gzip.open(os.path.join(DATA, "train-images-idx3-ubyte.gz")) as f:
        x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)
    with gzip.open(os.path.join(DATA, "train-labels-idx1-ubyte.gz")) as f:
        y = np.frombuffer(f.read(), np.uint8, offset=8)
    x = (torch.from_numpy(x.astype(np.float32)) / 255.0 - 0.2860) / 0.3530
    return x, torch.from_numpy(y.astype(np.int64))


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 6, 5, padding=2)
        self.c2 = nn.Conv2d(6, 16, 5)
        self.f1 = nn.Linear(400, 120)
        self.f2 = nn.Linear(120, 84)
        self.f3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.max_pool2d(F.relu(self.c2(x)), 2)
        x = x.flatten(1)
        return self.f3(F.relu(self.f2(F.relu(self.f1(x)))))


def train(rank, args, result):
    torch.set_num_threads(1)
    torch.manual_seed(1)
    K, B = args.workers, args.batch
    if K > 1:
        dist.init_process_group("gloo", rank=rank, world_size=K)
    x, y = load()
    model = LeNet()
    if K > 1:
        model = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    g = torch.Generator().manual_seed(1)
    perm = torch.randperm(len(x), generator=g)
    b = B // K
    pos, t0 = 0, None
    for it in range(args.iterations):
        if it == args.warmup:
            if K > 1:
                dist.barrier()
            t0 = time.perf_counter()
        if pos + B > len(x):
            perm, pos = torch.randperm(len(x), generator=g), 0
        idx = perm[pos + rank * b: pos + (rank + 1) * b]
        pos += B
        opt.zero_grad()
        loss = F.cross_entropy(model(x[idx]), y[idx])
        loss.backward()
        opt.step()
    if K > 1:
        dist.barrier()
    dt = time.perf_counter() - t0
    if rank == 0:
        result["samples_per_sec"] = (args.iterations - args.warmup) * B / dt
        result["loss"] = float(loss)
    if K > 1:
        dist.destroy_process_group()


def worker(rank, args, q):
    res = {}
    train(rank, args, res)
    if rank == 0:
        q.put(res)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--iterations", type=int, default=600)
    ap.add_argument("--warmup", type=int, default=20)
    args = ap.parse_args()
    if args.workers == 1:
        res = {}
        train(0, args, res)
    else:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(29500 + os.getpid() % 1000))
        ctx = mp.get_context("spawn")
        q = ctx.Queue()
        mp.spawn(worker, args=(args, q), nprocs=args.workers, join=True)
        res = q.get()
    res.update(system="pytorch", version=torch.__version__, workers=args.workers, batch=args.batch)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
