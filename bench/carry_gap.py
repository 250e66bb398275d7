#!/usr/bin/env python3
"""The batch carry-over mid-run against from the start, on the shipped corpus (issue 23).

A run's probe (docs/MODEL.md, "The run's own carry") reads the larger batch b after the run
has trained at b0 for a while; a later run plans from its start. This asks the corpus's
own curves (data/curves.jsonl: one seed per (model, batch), sqrt scaling from base batch
64, B=64 the base) how far the two exponents lie apart, per (model, target):

  from the start   ln(S_b / S_b0) / ln(b / b0), S the samples where each curve (3-point
                   mean) first crosses the target
  mid-run at u_p   ln((S_b - S_b(L)) / (S_b0 - u_p)) / ln(b / b0), L the b0 curve's value
                   at u_p and S_b(L) where b's curve reaches it: what is left from there

Usage: bench/carry_gap.py [--probe-epochs 0.33] [--b 256]
"""
import argparse, json, math, os, statistics

ap = argparse.ArgumentParser()
ap.add_argument("--probe-epochs", type=float, default=0.33)
ap.add_argument("--b", type=int, default=256)
a = ap.parse_args()
corpus = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "curves.jsonl")
curves = {}
for line in open(corpus):
    o = json.loads(line)
    if o["dataset"] != "fashion-mnist" or o["base_batch"] != 64:
        continue
    if o["lr_scaling"] == "sqrt" or (o["lr_scaling"] == "none" and o["batch"] == 64):
        curves.setdefault((o["model"], o["batch"]), o)


def smooth(o, k):
    ys = [p[k] for p in o["points"]]
    return [statistics.mean(ys[max(0, i - 1):i + 2]) for i in range(len(ys))]


def crossing(o, acc, v):
    for p, y in zip(o["points"], smooth(o, 1 if acc else 2)):
        if (y >= v) if acc else (y <= v):
            return p[0]
    return None


gaps = []
print(f"| model | target | from the start | mid-run from {a.probe_epochs} epochs | gap |\n|---|---|---|---|---|")
for model in ("lenet", "mlp", "logreg"):
    c0, cb = curves.get((model, 64)), curves.get((model, a.b))
    if not c0 or not cb:
        continue
    up = a.probe_epochs * c0["n_train"]
    for acc, values in ((True, (0.83, 0.85, 0.86, 0.87)), (False, (0.5, 0.45, 0.4, 0.35))):
        for v in values:
            s0, sb = crossing(c0, acc, v), crossing(cb, acc, v)
            if not s0 or not sb or up >= s0:
                continue
            L = next(y for p, y in zip(c0["points"], smooth(c0, 1 if acc else 2)) if p[0] >= up)
            sl = crossing(cb, acc, L)
            if sl is None or sl >= sb:
                continue
            g0 = math.log(sb / s0) / math.log(a.b / 64)
            gm = math.log((sb - sl) / (s0 - up)) / math.log(a.b / 64)
            gaps.append(g0 - gm)
            print(f"| {model} | {'accuracy' if acc else 'loss'} {v} | {g0:+.2f} | {gm:+.2f} | {g0 - gm:+.2f} |")
print(f"\n{len(gaps)} pairs: the exponent from the start exceeds the mid-run one in "
      f"{sum(g > 0 for g in gaps)}, median gap {statistics.median(gaps):+.2f}")
