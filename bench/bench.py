#!/usr/bin/python3
"""Scavenger's trainer benchmarks. Each prints its figures, and where there is a peer the
ratio to PyTorch 1.13 (Debian's python3-torch) measured side by side in the same run,
alternating the two systems rep by rep and quoting medians.

  bench/bench.py throughput [--reps 5] [--iterations 600]
      LeNet, batch 64 per worker, 1 thread per process: K=1 against plain PyTorch and
      K=2 (global batch 128) against PyTorch DDP over gloo. Samples/s count iterations
      after the first 20 in both systems.
  bench/bench.py overhead [--reps 7] [--iterations 800]
      Cost of the gradient-noise statistics: the same LeNet run with and without them.
  bench/bench.py accuracy
      LeNet to 89% and MLP to 87% test accuracy on Fashion-MNIST: epochs and minutes.

Run from the repository root after `make`. Needs scripts/install-deps.sh --with-peer.
"""
import json, os, platform, statistics, subprocess, sys, tempfile, time

BIN = os.environ.get("SCV_BIN", "build/scavenger")
PEER = [sys.executable if "torch" in sys.modules else "/usr/bin/python3", "bench/torch_lenet.py"]
WARMUP = 20


def scv_rate(workers, batch, iterations, extra=()):
    """Samples/s of `scavenger train` after the first WARMUP iterations (from its metrics)."""
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as m:
        cmd = [BIN, "train", "--model", "lenet", "--workers", str(workers), "--batch", str(batch),
               "--iterations", str(iterations), "--eval-every", str(10 ** 9), "--metrics", m.name,
               "--progress", "never", *extra]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        its = [json.loads(l) for l in open(m.name) if '"type":"iter"' in l]
    t = sum(r["t_iter"] for r in its[WARMUP:])
    return sum(r["batch"] for r in its[WARMUP:]) / t


def peer_rate(workers, batch, iterations):
    out = subprocess.run([*PEER, "--workers", str(workers), "--batch", str(batch), "--iterations",
                          str(iterations), "--warmup", str(WARMUP)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["samples_per_sec"]


def machine():
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    return f"{platform.node()} ({os.cpu_count()} cores, {cpu})"


def throughput(reps=5, iterations=600):
    print(f"# throughput: LeNet, 1 thread/process, {iterations} iterations, median of {reps}; {machine()}")
    print("| setup | Scavenger samples/s | PyTorch samples/s | ratio |")
    print("|---|---|---|---|")
    for k, b, peer in ((1, 64, "PyTorch"), (2, 128, "PyTorch DDP gloo")):
        ours, theirs = [], []
        for _ in range(reps):
            ours.append(scv_rate(k, b, iterations))
            theirs.append(peer_rate(k, b, iterations))
        o, t = statistics.median(ours), statistics.median(theirs)
        print(f"| K={k}, global batch {b} vs {peer} | {o:.0f} | {t:.0f} | {o / t:.2f}x |", flush=True)


def overhead(reps=7, iterations=800):
    print(f"# gradient-noise statistics overhead: LeNet K=1 batch 64, {iterations} iterations, median of {reps}; {machine()}")
    on, off = [], []
    for _ in range(reps):
        on.append(scv_rate(1, 64, iterations))
        off.append(scv_rate(1, 64, iterations, ["--no-grad-stats"]))
    a, b = statistics.median(on), statistics.median(off)
    print(f"| with statistics | without | overhead |\n|---|---|---|\n| {a:.0f} samples/s | {b:.0f} samples/s | {100 * (b / a - 1):+.2f}% |")


def accuracy():
    print(f"# accuracy on Fashion-MNIST (test set, 10k); {machine()}")
    print("| model | target | reached | epochs | minutes | command |")
    print("|---|---|---|---|---|---|")
    jobs = [("lenet", 0.89, ["--model", "lenet", "--batch", "64", "--lr", "0.05", "--epochs", "15",
                             "--lr-decay", "cosine"]),
            ("mlp", 0.87, ["--model", "mlp", "--hidden", "256,128", "--batch", "64", "--lr", "0.05",
                           "--epochs", "15", "--lr-decay", "cosine"])]
    for name, target, args in jobs:
        cmd = [BIN, "train", *args, "--target-accuracy", str(target), "--json", "--progress", "never"]
        t0 = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True)
        r = json.loads(p.stdout.strip().splitlines()[-1])
        print(f"| {name} | {target:.2f} | {r['test_accuracy']:.4f} | {r['epochs']:.2f} | "
              f"{(time.time() - t0) / 60:.2f} | `{' '.join(cmd[1:])}` |", flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in ("throughput", "overhead", "accuracy"):
        print(__doc__)
        sys.exit(2)
    kw = {}
    for i in range(2, len(sys.argv) - 1, 2):
        kw[sys.argv[i].lstrip("-")] = int(sys.argv[i + 1])
    {"throughput": throughput, "overhead": overhead, "accuracy": accuracy}[sys.argv[1]](**kw)
