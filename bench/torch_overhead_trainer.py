#!/usr/bin/python3
"""The overhead of scavenger.trainer's statistics hook, measured on the example trainer.

Runs examples/pytorch_fashion_mnist.py (LeNet-5, Fashion-MNIST) as Scavenger starts it
(`mpirun -np K /bin/sh -c 'exec ... '` with the SCV_* variables) in two modes at the same K and B:
  stats  the module's DDP communication hook: weights b_k/B, |g_k|^2, loss and the stop flag
         in the gradient allreduce, |g|^2 after it (K=1: the one norm pass, no DDP)
  plain  --plain-ddp: DDP's own averaging, no hook, no extra scalars (K=1: no norm pass)
for K in --workers (default 1 and 2), several repetitions, the modes alternating (ABBA order
within each repetition), no evaluation, the checkpoint only at the end. Throughput of one run:
the samples of its iterations after the first --warmup, over the wall time between their iter
lines' `ts` (so the metrics writing and the data gathering count, as in real use), and
B / the median t_iter (less sensitive to other load on the machine). Prints each run, then per
K the medians over the repetitions of each mode and the ratios stats/plain (1.0: no
overhead), and one JSON line.

usage: /usr/bin/python3 bench/torch_overhead_trainer.py [--workers 1,2] [--batch 128] [--reps 4]
           [--iterations 80] [--warmup 10] [--subset 20000] [--threads 1]
Nothing else heavy should run meanwhile (the figures are wall-clock rates).
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
EXAMPLE = os.path.join(ROOT, "examples", "pytorch_fashion_mnist.py")
PY = "/usr/bin/python3"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_once(K, mode, a, work):
    d = tempfile.mkdtemp(prefix="k%d-%s-" % (K, mode), dir=work)
    metrics = os.path.join(d, "metrics.jsonl")
    env = dict(os.environ, SCV_WORKERS=str(K), SCV_BATCH=str(a.batch), SCV_MASTER_ADDR="127.0.0.1",
               SCV_MASTER_PORT=str(free_port()), SCV_METRICS=metrics, SCV_CHECKPOINT_DIR=d,
               SCV_RESUME="0", SCV_UNTIL_ITERATIONS=str(a.iterations), SCV_MAX_EPOCHS="0",
               SCV_EVAL_EVERY_EPOCHS="0", SCV_SEED="1", SCV_PROBE="0",
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = "exec %s %s --subset %d --threads %d --checkpoint-every 0%s" % (
        PY, EXAMPLE, a.subset, a.threads, " --plain-ddp" if mode == "plain" else "")
    p = subprocess.run(["mpirun", "--oversubscribe", "-np", str(K), "/bin/sh", "-c", cmd], env=env,
                       cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    if p.returncode != 0:
        sys.exit("K=%d %s: exit %d\n%s" % (K, mode, p.returncode, p.stdout.decode(errors="replace")))
    it = [json.loads(l) for l in open(metrics) if '"type":"iter"' in l]
    if len(it) != a.iterations:
        sys.exit("K=%d %s: %d iter lines, expected %d" % (K, mode, len(it), a.iterations))
    w = it[a.warmup - 1]
    samples = sum(l["batch"] for l in it[a.warmup:])
    rate = samples / (it[-1]["ts"] - w["ts"])
    t_iter = statistics.median(l["t_iter"] for l in it[a.warmup:])
    return rate, a.batch / t_iter


def hook_work_us(n=61706, reps=300):
    """Median microseconds of the hook's own tensor work on an n-float gradient (one bucket),
    without the allreduce: scale into the send buffer, two squared norms, the extra scalars."""
    import time
    import torch
    torch.set_num_threads(1)
    buf = torch.randn(n)
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        t = torch.empty(n + 5)
        sq = float(buf.square().sum())
        torch.mul(buf, 0.5, out=t[:n])
        t[n:] = torch.tensor([sq, 1.0, 2.3, 0.0, 0.0])
        float(t[:n].square().sum())
        t[n:].tolist()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--reps", type=int, default=4)
    ap.add_argument("--iterations", type=int, default=80)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--subset", type=int, default=20000)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    if not (1 <= a.warmup < a.iterations) or a.iterations * a.batch > a.subset:
        ap.error("need 1 <= --warmup < --iterations and --iterations x --batch <= --subset (no epoch end)")
    Ks = [int(k) for k in a.workers.split(",")]
    res = {(K, m): [] for K in Ks for m in ("stats", "plain")}
    med = {(K, m): [] for K in Ks for m in ("stats", "plain")}
    with tempfile.TemporaryDirectory(prefix="scv-torch-overhead-") as work:
        for r in range(a.reps):
            for K in Ks:
                order = ("stats", "plain") if (r + K) % 2 == 0 else ("plain", "stats")
                for mode in order:
                    rate, mrate = run_once(K, mode, a, work)
                    res[(K, mode)].append(rate)
                    med[(K, mode)].append(mrate)
                    print("rep %d K=%d %-5s %8.1f samples/s  (B / median t_iter: %8.1f)"
                          % (r + 1, K, mode, rate, mrate), flush=True)
    out = {"batch": a.batch, "reps": a.reps, "iterations": a.iterations, "warmup": a.warmup}
    print("\nmedians over the repetitions: samples/s (wall) and B / median t_iter")
    print("   K   stats samples/s   plain samples/s   stats/plain  |  stats B/t_iter   plain B/t_iter   stats/plain")
    for K in Ks:
        s, p = statistics.median(res[(K, "stats")]), statistics.median(res[(K, "plain")])
        ms, mp = statistics.median(med[(K, "stats")]), statistics.median(med[(K, "plain")])
        print("%4d   %15.1f   %15.1f   %11.3f  |  %15.1f   %14.1f   %11.3f" % (K, s, p, s / p, ms, mp, ms / mp))
        out["k%d" % K] = {"stats": round(s, 1), "plain": round(p, 1), "ratio": round(s / p, 4),
                          "stats_t_iter": round(ms, 1), "plain_t_iter": round(mp, 1),
                          "ratio_t_iter": round(ms / mp, 4)}
    out["hook_tensor_work_us"] = round(hook_work_us(), 1)
    print("the hook's own tensor work on LeNet's 61706 floats (no allreduce): %.1f us per iteration"
          % out["hook_tensor_work_us"])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
