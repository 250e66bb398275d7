# bench/bench.py corpus: the learning-curve corpus the model's curve prior reads
# (data/curves.jsonl; docs/CURVES.md): its jobs (CORPUS_JOBS), a curve's points read off a
# training's metrics, and the resumable corpus written atomically after each curve.

import json, os, statistics, subprocess, sys, tempfile, time
from bench_common import BIN, machine


# The learning-curve corpus (bench/bench.py corpus -> data/curves.jsonl): built-in models
# and datasets over batches and learning-rate rules (--lr-scaling RULE --base-batch 64), K=1.
# Each curve is (batch, rule, seed); at B = 64 the three rules coincide, so only "none" is
# run there. Epochs are long enough to show the plateau at the smallest batch. Left out as
# they do not train (measured on 2026-11-25, 1 epoch): linear scaling of LeNet beyond B = 128
# (B = 256, lr 0.2: test accuracy stays at chance) and of the MLP at B = 512 (lr 0.4:
# diverges); logreg at lr 0.1 (with momentum 0.9 its training loss stays at 2-3, accuracy
# 0.75-0.80 without a trend), so its base rate is 0.01.
CORPUS_PATH = "data/curves.jsonl"
CORPUS_BASE_BATCH = 64
CORPUS_RULE = ["--eval-every-epochs", "0.05", "--eval-subset", "2000"]
CORPUS_SIG = 5  # significant digits kept of accuracy and loss
# AdaScale (--lr-scaling adascale): the rule under which the noise-scale law carries by
# construction. At B0 its gain is 1 (the "none" curve's course), run anyway for the noise
# scale it measures there; each curve keeps "noise_scale", the trainer's estimate (its
# iterations' ada_noise_scale) over the first half epoch, as a run's warm-up measures it.
CORPUS_ADASCALE = [(64, "adascale", 1), (128, "adascale", 1), (256, "adascale", 1), (512, "adascale", 1)]
CORPUS_NOISE_EPOCHS = 0.5
# the grid of the jobs added on 2026-11-29 (session 3): every rule at three or more batches,
# two seeds at two batches
CORPUS_GRID = [(32, "none", 1), (64, "none", 1), (128, "none", 1), (256, "none", 1), (512, "none", 1),
               (128, "sqrt", 1), (256, "sqrt", 1), (512, "sqrt", 1), (128, "linear", 1), (256, "linear", 1),
               (64, "none", 2), (256, "sqrt", 2), *CORPUS_ADASCALE]
CORPUS_JOBS = [
    {"name": "lenet-lr0.05", "model": "lenet", "dataset": "fashion-mnist", "lr": 0.05, "epochs": 10,
     "opts": ["--model", "lenet", "--lr", "0.05"],
     "curves": [(32, "none", 1), (64, "none", 1), (128, "none", 1), (256, "none", 1), (512, "none", 1),
                (32, "sqrt", 1), (256, "sqrt", 1), (512, "sqrt", 1), (32, "linear", 1), (128, "linear", 1),
                (64, "none", 2), *CORPUS_ADASCALE,
                (64, "none", 3), (64, "none", 4)]},  # (the README job's recipe: four seeds' spread)
    {"name": "mlp256x128-lr0.05", "model": "mlp", "dataset": "fashion-mnist", "lr": 0.05, "epochs": 15,
     "opts": ["--model", "mlp", "--hidden", "256,128", "--lr", "0.05"],
     "curves": [(32, "none", 1), (64, "none", 1), (128, "none", 1), (256, "none", 1), (512, "none", 1),
                (32, "sqrt", 1), (128, "sqrt", 1), (256, "sqrt", 1), (512, "sqrt", 1),
                (32, "linear", 1), (128, "linear", 1), (256, "linear", 1),
                (64, "none", 2), (256, "sqrt", 2), *CORPUS_ADASCALE]},
    {"name": "logreg-lr0.01", "model": "logreg", "dataset": "fashion-mnist", "lr": 0.01, "epochs": 10,
     "opts": ["--model", "logreg", "--lr", "0.01"],
     "curves": [(32, "none", 1), (64, "none", 1), (128, "none", 1), (256, "none", 1), (512, "none", 1),
                (32, "sqrt", 1), (128, "sqrt", 1), (256, "sqrt", 1), (512, "sqrt", 1),
                (32, "linear", 1), (128, "linear", 1), (256, "linear", 1), (512, "linear", 1),
                (64, "none", 2), (256, "sqrt", 2), *CORPUS_ADASCALE]},
    {"name": "mlp-synthetic-lr0.01", "model": "mlp", "dataset": "synthetic:20000", "lr": 0.01, "epochs": 5,
     "opts": ["--model", "mlp", "--hidden", "256,128", "--dataset", "synthetic:20000", "--lr", "0.01"],
     "curves": [(32, "none", 1), (64, "none", 1), (128, "none", 1), (256, "none", 1), (512, "none", 1),
                (32, "sqrt", 1), (128, "sqrt", 1), (256, "sqrt", 1), (512, "sqrt", 1),
                (32, "linear", 1), (128, "linear", 1), (256, "linear", 1), (512, "linear", 1),
                (64, "none", 2), *CORPUS_ADASCALE]},
    # two recipes away from train's defaults (plain SGD; no weight decay), other sizes
    {"name": "mlp64-sgd-lr0.1", "model": "mlp", "dataset": "fashion-mnist", "lr": 0.1, "epochs": 8,
     "momentum": 0.0,
     "opts": ["--model", "mlp", "--hidden", "64", "--lr", "0.1", "--momentum", "0"],
     "curves": CORPUS_GRID},
    {"name": "lenet-lr0.02-wd0", "model": "lenet", "dataset": "fashion-mnist", "lr": 0.02, "epochs": 6,
     "weight_decay": 0.0,
     "opts": ["--model", "lenet", "--lr", "0.02", "--weight-decay", "0"],
     "curves": [(32, "none", 1), (64, "none", 1), (128, "none", 1), (256, "none", 1), (512, "none", 1),
                (256, "sqrt", 1), (512, "sqrt", 1), (128, "linear", 1),
                (64, "none", 2), (256, "sqrt", 2), *CORPUS_ADASCALE]},
    {"name": "logreg-sgd-lr0.1", "model": "logreg", "dataset": "fashion-mnist", "lr": 0.1, "epochs": 10,
     "momentum": 0.0,
     "opts": ["--model", "logreg", "--lr", "0.1", "--momentum", "0"],
     "curves": CORPUS_GRID},
    {"name": "mlp512x256-lr0.02", "model": "mlp", "dataset": "fashion-mnist", "lr": 0.02, "epochs": 8,
     "opts": ["--model", "mlp", "--hidden", "512,256", "--lr", "0.02"],
     "curves": CORPUS_GRID},
    {"name": "mlp128-synthetic50000-lr0.05", "model": "mlp", "dataset": "synthetic:50000", "lr": 0.05, "epochs": 5,
     "opts": ["--model", "mlp", "--hidden", "128", "--dataset", "synthetic:50000", "--lr", "0.05"],
     # (at B=32 without scaling it reaches 0.96, then diverges: loss 0.20 -> 41 by its 5th epoch)
     "curves": [(32, "sqrt", 1), *[c for c in CORPUS_GRID if c != (32, "none", 1)]]},
    {"name": "lenet-sgd-lr0.05", "model": "lenet", "dataset": "fashion-mnist", "lr": 0.05, "epochs": 6,
     "momentum": 0.0,
     "opts": ["--model", "lenet", "--lr", "0.05", "--momentum", "0"],
     "curves": CORPUS_GRID},
    # a network no other job has (issue 37 item 8: the prior of a network the corpus has never seen)
    # (at lr 0.05 it diverges at B=64 within 1.5 epochs)
    {"name": "resnet-lr0.01", "model": "resnet", "dataset": "fashion-mnist", "lr": 0.01, "epochs": 5,
     "opts": ["--model", "resnet", "--lr", "0.01"],
     "curves": [(32, "none", 1), (64, "none", 1), (128, "none", 1), (256, "none", 1), (512, "none", 1),
                (256, "sqrt", 1), (512, "sqrt", 1), (128, "linear", 1), (64, "none", 2),
                (128, "adascale", 1), (256, "adascale", 1)]},
]


def sig(x, digits=CORPUS_SIG):
    """x to `digits` significant digits; None for a missing or non-finite value."""
    if x is None or x != x or x in (float("inf"), float("-inf")):
        return None
    return float(f"{x:.{digits}g}")


def corpus_points(metrics_path):
    """(n_train, arch, [[samples, accuracy, loss], ...], noise scale or None) of one metrics file's periodic evaluations;
    samples are the samples seen at the evaluation's iteration (its iter line's samples_seen)."""
    seen, n_train, arch, pts, noise = {}, None, None, [], []
    for line in open(metrics_path):
        o = json.loads(line)
        t = o.get("type")
        if t == "job":
            n_train, arch = o["n_train"], o["arch"]
        elif t == "iter":
            seen[o["iter"]] = o["samples_seen"]
            if o.get("ada_noise_scale") is not None and o["epoch_progress"] <= CORPUS_NOISE_EPOCHS:
                noise.append(o["ada_noise_scale"])
        elif t == "eval" and o.get("role") == "periodic":
            acc, loss = sig(o.get("test_accuracy")), sig(o.get("train_loss"))
            if acc is None and loss is None:
                continue
            pts.append([seen.get(o["iter"], round(o["epoch_progress"] * n_train)), acc, loss])
    return n_train, arch, pts, (sig(statistics.median(noise)) if noise else None)


def corpus_write(path, curves):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        for c in curves:
            f.write(json.dumps(c, separators=(",", ":")) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def corpus(only=-1):
    import shlex
    curves = [json.loads(l) for l in open(CORPUS_PATH) if l.strip()] if os.path.exists(CORPUS_PATH) else []
    have = {(c["job"], c["batch"], c["lr_scaling"], c["seed"]) for c in curves}
    d = tempfile.mkdtemp()
    metrics = os.path.join(d, "metrics.jsonl")
    t_all = time.time()
    for j, job in enumerate(CORPUS_JOBS):
        if only >= 0 and j != only:
            continue
        for B, rule, seed in job["curves"]:
            if (job["name"], B, rule, seed) in have:
                continue
            cmd = [BIN, "train", *job["opts"], "--workers", "1", "--threads", "1", "--batch", str(B),
                   "--lr-scaling", rule, "--base-batch", str(CORPUS_BASE_BATCH), "--seed", str(seed),
                   "--epochs", str(job["epochs"]), *CORPUS_RULE, "--metrics", metrics, "--json",
                   "--progress", "never"]
            t0 = time.time()
            out = subprocess.run(cmd, capture_output=True, text=True)
            if out.returncode != 0:
                raise SystemExit(f"corpus {job['name']} B={B} {rule} seed {seed}: training failed "
                                 f"(exit {out.returncode}): {out.stderr.strip()[-300:]}")
            n_train, arch, pts, noise = corpus_points(metrics)
            shown = [("build/scavenger" if a == BIN else "metrics.jsonl" if a == metrics else a) for a in cmd]
            curves.append({"job": job["name"], "model": job["model"], "dataset": job["dataset"], "batch": B,
                           "base_batch": CORPUS_BASE_BATCH, "lr_scaling": rule, "lr": job["lr"], "workers": 1,
                           "seed": seed, "n_train": n_train, "epochs": job["epochs"], "command": shlex.join(shown),
                           "date": time.strftime("%Y-%m-%d"), "machine": machine(), "points": pts, "arch": arch})
            if noise is not None:
                curves[-1]["noise_scale"] = noise
            for key in ("momentum", "weight_decay"):  # (absent: train's defaults)
                if key in job:
                    curves[-1][key] = job[key]
            have.add((job["name"], B, rule, seed))
            corpus_write(CORPUS_PATH, curves)
            last = pts[-1] if pts else None
            print(f"corpus {job['name']} B={B} {rule} seed {seed}: {time.time() - t0:.1f} s, {len(pts)} points, "
                  f"last {last}", file=sys.stderr, flush=True)
    print(f"# corpus: {len(curves)} curves in {CORPUS_PATH} ({time.time() - t_all:.0f} s this run); {machine()}")
