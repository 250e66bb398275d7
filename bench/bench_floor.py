# bench/bench.py floor: the noise floor's batch carry-over (src/model/floor.c) against truths:
# the built-in trainer's jobs of DECIDE_JOBS trained from the start at K=2, B=64 and B=256 per
# seed, then compared by bench/floor_eval.c (built here).

import os, subprocess, tempfile
from bench_common import BIN, machine
from bench_decide import DECIDE_JOBS


def floor(seeds=2, epochs=5, every=0.25, prefix=0, dir=""):
    """bench/bench.py floor: see bench/bench.py's text (its usage)."""
    exe = "build/floor_eval"
    subprocess.run(["cc", "-std=c11", "-O2", "-Iinclude", "-Isrc", "bench/floor_eval.c", "build/libscv.a", "-lcjson",
                    "-lsqlite3", "-lm", "-o", exe], check=True)
    d = dir or tempfile.mkdtemp()
    os.makedirs(d, exist_ok=True)
    read = f"b0's first {prefix} epochs and its forecast" if prefix else "b0's whole curve"
    print(f"# floor: K=2, B=64 and 256 from the start, {seeds} seeds, {epochs} epochs, evaluations every {every} "
          f"epoch on 2000 test samples, the floor read on {read}; {machine()}; {BIN}; metrics in {d}\n")
    for job in DECIDE_JOBS[:3]:
        opts = job["job"]
        lr = opts[opts.index("--lr") + 1]
        pairs = []
        for seed in range(1, seeds + 1):
            files = []
            for B in (64, 256):
                m = os.path.join(d, f"{job['name']}-{B}-{seed}.jsonl")
                files.append(m)
                if os.path.exists(m):
                    continue
                subprocess.run([BIN, "train", *opts, "--workers", "2", "--batch", str(B), "--seed", str(seed),
                                "--epochs", str(epochs), "--eval-every-epochs", str(every), "--eval-subset", "2000",
                                "--metrics", m + ".tmp", "--progress", "never"], check=True, stdout=subprocess.DEVNULL)
                os.replace(m + ".tmp", m)
            pairs += [f"{job['name']}-s{seed}", *files]
        print(f"## {job['name']}: {' '.join(opts)}\n", flush=True)
        subprocess.run([exe, "--lr", lr, "--rule", opts[opts.index("--lr-scaling") + 1], "--base-batch",
                        opts[opts.index("--base-batch") + 1], "--prefix-epochs", str(prefix), *pairs], check=True)
        print(flush=True)
