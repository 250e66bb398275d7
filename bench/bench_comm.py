# Communication and data streams (bench/bench.py comm, stream, noniid): compression (Top-k,
# GraVAC) and SelSync against dense training, streaming (ScaDLES) against waiting for a full
# batch, and non-IID streams with data injection against IID ones.

import json, os, statistics, subprocess, tempfile
from bench_common import BIN, WARMUP, machine


COMM_ARMS = {  # model: [(label, options)]
    "mlp": [("dense", []),
            ("Top-k 10x, Allgather", ["--compress", "topk:10", "--collective", "allgather"]),
            ("Top-k 100x, Allgather", ["--compress", "topk:100", "--collective", "allgather"]),
            ("Top-k 100x, AR-Topk (STAR)", ["--compress", "topk:100", "--collective", "artopk"]),
            ("GraVAC (auto collective)", ["--compress", "gravac"]),
            ("GraVAC eps 0.3 (auto collective)", ["--compress", "gravac:0.3"]),
            ("SelSync delta 0.3", ["--selsync", "0.3"]),
            ("SelSync delta 0.5", ["--selsync", "0.5"]),
            ("SelSync LSSR 0.9 (target)", ["--selsync", "lssr:0.9"])],
    "lenet": [("dense", []), ("GraVAC (auto collective)", ["--compress", "gravac"]),
              ("SelSync delta 0.3", ["--selsync", "0.3"]), ("SelSync LSSR 0.9 (target)", ["--selsync", "lssr:0.9"])],
}
COMM_TARGET = {"mlp": 0.84, "lenet": 0.85}


def comm(reps=1, vm="c5.xlarge", only=-1, lenet=0):
    """Communication efficiency on 4 emulated VMs: time to the target and final accuracy per arm
    (only >= 0: one model's dense arm and its arm number `only`; the MLP's, or LeNet's with lenet=1)."""
    only_model = "lenet" if lenet else "mlp"
    name = "comm"
    vm = {0: "c5.xlarge", 1: "c5.2xlarge"}.get(vm, vm) if isinstance(vm, int) else vm
    subprocess.run([BIN, "cluster", "up", "--name", name, "--vm", f"{vm}:4"], check=True, stdout=subprocess.DEVNULL)
    rows = {}
    try:
        for model, arms in COMM_ARMS.items():
            if only >= 0:
                if model != only_model:
                    continue
                arms = [arms[0], arms[only]]
            job = ["--cluster", name, "--workers", "4", "--batch", "256", "--model", model, "--eval-every-epochs",
                   "0.25", "--eval-subset", "2000", "--target-window", "3", "--progress", "never", "--json",
                   "--target-accuracy", str(COMM_TARGET[model]), "--epochs", "8"]
            for rep in range(reps):
                for label, opts in arms:
                    m = tempfile.mktemp(suffix=".jsonl")
                    out = subprocess.run([BIN, "train", *job, "--seed", str(rep + 1), "--metrics", m, *opts],
                                         capture_output=True, text=True)
                    lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
                    if not lines:
                        print(f"# {model} {label}: failed: {out.stderr.strip()[-300:]}", flush=True)
                        continue
                    r = json.loads(lines[-1])
                    its = [json.loads(l) for l in open(m) if '"type":"iter"' in l]
                    params = next((json.loads(l)["params"] for l in open(m) if '"type":"job"' in l), 0)
                    os.unlink(m)
                    after = its[WARMUP:] or its
                    nb = statistics.mean(o.get("bytes_sent", 4.0 * params) for o in after)  # dense: the gradient
                    tcomp = statistics.mean(o.get("t_compress", 0.0) / o["t_iter"] for o in after)
                    lssr = after[-1].get("lssr")
                    cfs = sorted({o.get("cf", 1) for o in after})
                    row = (r["wall_seconds"], r["test_accuracy"], r["reached_target"], nb, tcomp,
                           statistics.median(o["t_iter"] for o in after), lssr, cfs,
                           sorted({o.get("collective", "allreduce") for o in after}))
                    rows.setdefault((model, label), []).append(row)
                    print(f"# {model} {label} rep {rep + 1}: {row[0]:.1f} s, acc {row[1]:.4f}, reached {row[2]}, "
                          f"{row[3] / 1e3:.1f} kB/step, compression {100 * row[4]:.2f}% of an iteration, "
                          f"t_iter {1e3 * row[5]:.1f} ms, lssr {lssr}, cf {cfs}, {row[8]}", flush=True)
    finally:
        subprocess.run([BIN, "cluster", "down", "--name", name])
    print(f"\n# comm: K=4, B=256 on 4 emulated {vm} VMs; {reps} run(s) per arm, medians; {machine()}\n")
    print("| model | arm | time to target | speed-up vs dense | final accuracy | reached | bytes sent per step "
          "| compression, share of t_iter | median t_iter | LSSR | factors | collectives |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for model, arms in COMM_ARMS.items():
        if only >= 0 and model != only_model:
            continue
        base = rows.get((model, "dense"))
        tb = statistics.median(x[0] for x in base) if base else float("nan")
        for label, _ in arms:
            rs = rows.get((model, label))
            if not rs:
                continue
            t = statistics.median(x[0] for x in rs)
            print(f"| {model} | {label} | {t:.1f} s | {tb / t:.2f}x | {statistics.median(x[1] for x in rs):.4f} "
                  f"| {sum(x[2] for x in rs)}/{len(rs)} | {statistics.median(x[3] for x in rs) / 1e3:.1f} kB "
                  f"| {100 * statistics.median(x[4] for x in rs):.2f}% | {1e3 * statistics.median(x[5] for x in rs):.1f} ms "
                  f"| {rs[-1][6] if rs[-1][6] is not None else '-'} | {rs[-1][7]} | {', '.join(rs[-1][8])} |")


def stream(reps=2):
    """Streaming (ScaDLES) against waiting for a full batch: LeNet K=2, skewed stream rates."""
    rates, target = "2000,500", 0.85
    job = [BIN, "train", "--model", "lenet", "--workers", "2", "--stream-rate", rates, "--lr-scaling", "linear",
           "--base-batch", "64", "--target-accuracy", str(target), "--eval-every-epochs", "0.25", "--eval-subset",
           "2000", "--target-window", "3", "--epochs", "6", "--progress", "never", "--json"]
    arms = {"streaming (ScaDLES, bounds 8,1024, truncate)": ["--stream-bounds", "8,1024"],
            "full batch (B=64, 32 per worker)": ["--stream-full-batch", "--batch", "64"]}
    rows = {}
    for rep in range(reps):
        for label, opts in arms.items():
            m = tempfile.mktemp(suffix=".jsonl")
            out = subprocess.run([*job, *opts, "--seed", str(rep + 1), "--metrics", m], capture_output=True, text=True)
            lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
            if not lines:
                print(f"# {label}: failed: {out.stderr.strip()[-300:]}", flush=True)
                continue
            r = json.loads(lines[-1])
            its = [json.loads(l) for l in open(m) if '"type":"iter"' in l]
            os.unlink(m)
            lb = [o["local_batches"] for o in its if "local_batches" in o]
            ratio = statistics.median(b[0] / b[1] for b in lb if b[1] > 0) if lb else float("nan")
            row = (r["wall_seconds"], r["test_accuracy"], r["reached_target"], r["stream_wait_seconds"],
                   r["stream_dropped"], statistics.median(o["batch"] for o in its), ratio, r["epochs"])
            rows.setdefault(label, []).append(row)
            print(f"# {label} rep {rep + 1}: {row[0]:.1f} s, acc {row[1]:.4f}, reached {row[2]}, waited {row[3]:.1f} s, "
                  f"dropped {row[4]}, median global batch {row[5]}, local batch ratio {row[6]:.2f}, "
                  f"{row[7]:.2f} epochs", flush=True)
    print(f"\n# stream: LeNet K=2 (local processes), stream rates {rates} samples/s, to {target:.0%} test accuracy "
          f"(mean of 3 evaluations every 0.25 epoch on 2000 test samples), linear LR scaling from B0 = 64; "
          f"{reps} runs per arm, medians; {machine()}\n")
    print("| arm | time to target | speed-up | final accuracy | reached | waiting | dropped | median global batch "
          "| local batch ratio | epochs |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    base = rows.get("full batch (B=64, 32 per worker)")
    tb = statistics.median(x[0] for x in base) if base else float("nan")
    for label in arms:
        rs = rows.get(label)
        if not rs:
            continue
        t = statistics.median(x[0] for x in rs)
        print(f"| {label} | {t:.1f} s | {tb / t:.2f}x | {statistics.median(x[1] for x in rs):.4f} "
              f"| {sum(x[2] for x in rs)}/{len(rs)} | {statistics.median(x[3] for x in rs):.1f} s "
              f"| {statistics.median(x[4] for x in rs):.0f} | {statistics.median(x[5] for x in rs):.0f} "
              f"| {statistics.median(x[6] for x in rs):.2f} | {statistics.median(x[7] for x in rs):.2f} |")


NONIID_ARMS = [("IID", []), ("non-IID 0.9", ["--stream-noniid", "0.9"]),
               ("non-IID 0.9 + inject 0.5,0.5", ["--stream-noniid", "0.9", "--stream-inject", "0.5,0.5"])]


def noniid(reps=2, selsync=1):
    """Non-IID streams and data injection: LeNet, K=2 local processes, streams of 3000 samples/s
    each (bounds 16-64), 2 epochs, seeds 1..reps; each arm synchronous and (selsync=1) with
    SelSync 0.5 local steps, where a worker's own label mix can matter."""
    syncs = [("sync", [])] + ([("SelSync 0.5", ["--selsync", "0.5"])] if selsync else [])
    rows = {}
    for seed in range(1, reps + 1):
        for sname, sopts in syncs:
            for label, opts in NONIID_ARMS:
                out = subprocess.run([BIN, "train", "--model", "lenet", "--workers", "2", "--stream-rate", "3000,3000",
                                      "--stream-bounds", "16,64", "--epochs", "2", "--seed", str(seed), "--progress",
                                      "never", "--json", *sopts, *opts], capture_output=True, text=True)
                r = json.loads([l for l in out.stdout.splitlines() if l.startswith("{")][-1])
                rows.setdefault((sname, label), []).append(r)
                print(f"# {sname}, {label}, seed {seed}: acc {r['test_accuracy']:.4f}, home share "
                      f"{r['home_fraction_mean']}, copies {r['injected_samples']}", flush=True)
    print(f"\n# noniid: LeNet K=2, streams 3000,3000/s, 2 epochs, seeds 1..{reps}; {machine()}\n")
    print("| steps | arm | test accuracy per seed | median | home-class share | copies injected (MB if sent) |")
    print("|---|---|---|---|---|---|")
    for (sname, label), rs in rows.items():
        accs = " / ".join(f"{r['test_accuracy']:.4f}" for r in rs)
        home = statistics.median(r["home_fraction_mean"] for r in rs if r["home_fraction_mean"] is not None)
        cp = statistics.median(r["injected_samples"] for r in rs)
        mb = statistics.median(r["injected_bytes"] for r in rs) / 1e6
        print(f"| {sname} | {label} | {accs} | {statistics.median(r['test_accuracy'] for r in rs):.4f} | {home:.3f} "
              f"| {cp:.0f} ({mb:.1f} MB) |")
