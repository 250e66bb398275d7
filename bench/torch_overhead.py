#!/usr/bin/python3
"""The overhead of scavenger.torch's wrappers against plain PyTorch DDP, on the converted MNIST example.

Trains examples/mnist_main.py's Net (Adadelta lr 1.0, StepLR, Fashion-MNIST's training set with
the example's transform) for --iterations iterations at K processes and global batch B, in two
modes, each started as Scavenger starts a segment (`mpirun -np K /bin/sh -c 'exec ...'`):
  wrap   what the converted example runs under Scavenger: scv.DDP (the statistics hook, the
         batch weights and the stop flag in the gradient allreduce, the LR rule around
         optimizer.step) and scv.DataLoader (Scavenger's sample order, the iteration's metrics
         line written before each batch, the stop rules), with the SCV_* variables set
         (metrics and checkpoint directory in a temporary folder; no evaluation)
  plain  torch's DistributedDataParallel (its own averaging, no hook) on a gloo group joined
         with init_process_group, and torch's DataLoader over the same sample indices in the
         same order (worker k: its contiguous share of each global batch, as the wrappers
         split it), no metrics
Same model, data, seed, K, B and samples; the loop is the example's train() body in both
(zero_grad, forward, nll_loss, backward, step). For K in --workers (default 1,2; gloo, CPU,
--threads torch threads per process), --reps repetitions with the modes alternating (ABBA:
the order flips every repetition and with K). Per run: samples/s over the iterations after
--warmup (from the first batch yielded after the warm-up to the batch after the last one,
so the loader's own work counts) and B / the median iteration time (less sensitive to other
load). Prints each run, then per K the medians over the repetitions of each mode side by
side with the ratio wrap/plain (1.0: no overhead; the issue's bar: above 0.98), and one JSON
line. A run's start (imports, data, the process group) and its end (the wrappers' final
checkpoint) are outside the timed span.

usage: /usr/bin/python3 bench/torch_overhead.py [--workers 1,2] [--batch 64] [--reps 4]
           [--iterations 80] [--warmup 10] [--threads 1]
Nothing else heavy should run meanwhile (the figures are wall-clock rates).
(bench/torch_overhead_trainer.py measures the older scavenger.trainer path the same way.)
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"
MODES = ("wrap", "plain")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------------------------
# One process of a run (started by mpirun with --run MODE)

def worker(a):
    import time
    sys.path.insert(0, os.path.join(ROOT, "python"))
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    import torch.optim as optim
    from torch.optim.lr_scheduler import StepLR
    from torchvision import datasets, transforms
    import scavenger.torch as scv
    from scavenger import trainer as _t
    from mnist_main import Net

    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    K = int(os.environ.get("OMPI_COMM_WORLD_SIZE", "1"))
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
    transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
    dataset = datasets.FashionMNIST(scv.fashion_mnist(), train=True, transform=transform)
    model = Net()
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    if a.run == "wrap":
        model = scv.DDP(model, optimizer, scheduler)
        loader = scv.DataLoader(dataset, batch_size=a.batch // K)
    else:
        if K == 1:
            dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
        else:
            dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % a.port, rank=rank, world_size=K)
        model = torch.nn.parallel.DistributedDataParallel(model)
        order = _t.EpochSampler(len(dataset), 1).order()  # the wrappers' order at SCV_SEED=1, epoch 0
        counts, offsets = _t.split_batch(a.batch, K)
        mine = [int(i) for b in range(a.iterations + 1)
                for i in order[b * a.batch + offsets[rank]:b * a.batch + offsets[rank] + counts[rank]]]
        loader = torch.utils.data.DataLoader(dataset, batch_size=counts[rank], sampler=mine)
    model.train()
    ts = []
    for batch_idx, (data, target) in enumerate(loader):  # the example's train() body
        ts.append(time.perf_counter())
        if batch_idx == a.iterations:
            break
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
    if len(ts) != a.iterations + 1:
        sys.exit("%s: %d batches, expected %d" % (a.run, len(ts) - 1, a.iterations))
    if rank == 0:
        span = ts[a.iterations] - ts[a.warmup]
        dts = [ts[i + 1] - ts[i] for i in range(a.warmup, a.iterations)]
        print("RESULT " + json.dumps({"rate": a.batch * (a.iterations - a.warmup) / span,
                                      "t_iter": statistics.median(dts)}), flush=True)
    if a.run == "plain":  # as trainer.run_main: PyTorch 1.13 can hang destroying gloo at exit
        sys.stdout.flush()
        os._exit(0)
    # wrap: the wrappers' exit handler writes the final checkpoint and ends the process


# --------------------------------------------------------------------------------------------
# The driver

def run_once(K, mode, a, work):
    d = tempfile.mkdtemp(prefix="k%d-%s-" % (K, mode), dir=work)
    port = free_port()
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               GLOO_SOCKET_IFNAME="lo")  # both modes' gloo on the loopback (the wrappers pick it for 127.0.0.1)
    for v in [v for v in env if v.startswith("SCV_")]:
        del env[v]
    if mode == "wrap":
        env.update(SCV_WORKERS=str(K), SCV_BATCH=str(a.batch), SCV_MASTER_ADDR="127.0.0.1",
                   SCV_MASTER_PORT=str(port), SCV_METRICS=os.path.join(d, "metrics.jsonl"),
                   SCV_CHECKPOINT_DIR=d, SCV_RESUME="0", SCV_UNTIL_ITERATIONS="0", SCV_MAX_EPOCHS="0",
                   SCV_EVAL_EVERY_EPOCHS="0", SCV_SEED="1", SCV_PROBE="0")
    cmd = "exec %s %s --run %s --port %d --batch %d --iterations %d --warmup %d --threads %d" % (
        PY, os.path.abspath(__file__), mode, port, a.batch, a.iterations, a.warmup, a.threads)
    p = subprocess.run(["mpirun", "--oversubscribe", "-np", str(K), "/bin/sh", "-c", cmd], env=env,
                       cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=900)
    out = p.stdout.decode(errors="replace")
    res = [json.loads(l[7:]) for l in out.splitlines() if l.startswith("RESULT ")]
    if p.returncode != 0 or len(res) != 1:
        sys.exit("K=%d %s: exit %d\n%s" % (K, mode, p.returncode, out))
    if mode == "wrap":
        n = sum(1 for l in open(os.path.join(d, "metrics.jsonl")) if '"type":"iter"' in l)
        if n < a.iterations:
            sys.exit("K=%d wrap: %d iteration lines, expected %d" % (K, n, a.iterations))
    return res[0]["rate"], a.batch / res[0]["t_iter"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--reps", type=int, default=4)
    ap.add_argument("--iterations", type=int, default=80)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--run", choices=MODES, help=argparse.SUPPRESS)  # one process of a run
    ap.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.run:
        return worker(a)
    Ks = [int(k) for k in a.workers.split(",")]
    if not (1 <= a.warmup < a.iterations) or (a.iterations + 1) * a.batch > 60000:
        ap.error("need 1 <= --warmup < --iterations and (--iterations + 1) x --batch <= 60000 (no epoch end)")
    if any(a.batch % K for K in Ks):
        ap.error("--batch must be a multiple of every K (the same per-process batch in both modes)")
    rate = {(K, m): [] for K in Ks for m in MODES}
    med = {(K, m): [] for K in Ks for m in MODES}
    with tempfile.TemporaryDirectory(prefix="scv-torch-overhead-") as work:
        for r in range(a.reps):
            for K in Ks:
                for mode in (MODES if (r + K) % 2 == 0 else MODES[::-1]):
                    x, y = run_once(K, mode, a, work)
                    rate[(K, mode)].append(x)
                    med[(K, mode)].append(y)
                    print("rep %d K=%d %-5s %8.1f samples/s  (B / median t_iter: %8.1f)" % (r + 1, K, mode, x, y),
                          flush=True)
    out = {"model": "mnist_main.Net", "batch": a.batch, "reps": a.reps, "iterations": a.iterations,
           "warmup": a.warmup, "threads": a.threads}
    print("\nmedians over the repetitions: samples/s (wall) and B / median t_iter")
    print("   K    wrap samples/s   plain samples/s    wrap/plain  |   wrap B/t_iter   plain B/t_iter    wrap/plain")
    for K in Ks:
        w, p = statistics.median(rate[(K, "wrap")]), statistics.median(rate[(K, "plain")])
        mw, mp = statistics.median(med[(K, "wrap")]), statistics.median(med[(K, "plain")])
        print("%4d   %15.1f   %15.1f   %11.4f  |  %14.1f   %14.1f   %11.4f" % (K, w, p, w / p, mw, mp, mw / mp))
        out["k%d" % K] = {"wrap": round(w, 1), "plain": round(p, 1), "ratio": round(w / p, 4),
                          "wrap_t_iter": round(mw, 1), "plain_t_iter": round(mp, 1), "ratio_t_iter": round(mw / mp, 4)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
