#!/usr/bin/python3
# b's progress per sample against b0's, from the start: for each job's pair of trainings from
# the initial weights (bench/bench.py floor --dir D: JOB-64-SEED.jsonl and JOB-256-SEED.jsonl),
# over b's first P epochs, each of b's periodic evaluations of the training loss against the
# samples b0 took to the same loss (linearly between b0's evaluations), their median; printed
# per job and seed for P = 0.1 .. 2 epochs. The rule's value under sqrt scaling is 0.5 (2x the
# rate at 4x the batch). The same measure as bench/floor_eval.c's FLOOR_EVAL_RATE_EPOCHS.
#   bench/rate_from_start.py D [JOB ...]      (default jobs: lenet mlp128 logreg; seeds 1, 2)
import json, sys


def load(path):
    xs, ls, n, seen = [], [], None, 0
    for line in open(path):
        o = json.loads(line)
        if o.get("type") == "job":
            n = o["n_train"]
        elif o.get("type") == "iter":
            seen = o["samples_seen"]
        elif o.get("type") == "eval" and o.get("role") == "periodic":
            xs.append(seen), ls.append(o["train_loss"])
    return xs, ls, n


def rate(b0, b, n, P):
    (x0, l0), (xb, lb) = b0, b
    r = []
    for x, v in zip(xb, lb):
        if x > P * n:
            break
        for k in range(1, len(l0)):
            if l0[k] <= v < l0[k - 1]:
                u0 = x0[k - 1] + (x0[k] - x0[k - 1]) * (l0[k - 1] - v) / (l0[k - 1] - l0[k])
                r.append(u0 / x)
                break
    r.sort()
    return r[len(r) // 2] if r else float("nan")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__ or "usage: bench/rate_from_start.py DIR [JOB ...]")
    d, jobs = sys.argv[1], sys.argv[2:] or ["lenet", "mlp128", "logreg"]
    for j in jobs:
        for s in (1, 2):
            x0, l0, n = load(f"{d}/{j}-64-{s}.jsonl")
            xb, lb, _ = load(f"{d}/{j}-256-{s}.jsonl")
            print(j, s, " ".join(f"P={P}: {rate((x0, l0), (xb, lb), n, P):.2f}" for P in (0.1, 0.2, 0.33, 0.5, 1, 2)))
