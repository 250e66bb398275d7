# bench/bench.py decide: decision quality against truths on an emulated cluster. The jobs
# (DECIDE_JOBS, which bench floor trains too) and their targets, the truths (every K x B of
# DECIDE_GRID trained per seed, each target's crossing found by the target rule; resumable files
# in bench/decide/), and the report of a first and a second `scavenger run` per target: the
# predictions against the truths, regret, calibration of epochs and bands, forecasts.

import json, os, statistics, subprocess, sys, tempfile, time
from bench_common import BIN, WARMUP, contract_env, cpu_model, decision_prediction, machine


# The decision-quality benchmark's jobs, each with an accuracy and a training-loss target.
# The truth of a job: one fixed-epoch training per configuration and seed (evaluations every
# 0.25 epochs on a 2000-sample subset, the training loss's period means), each target's
# crossing found afterwards by the target rule (the mean of the last 3 evaluations at or
# beyond the target), so one truth serves both targets. The run's rule also confirms an
# accuracy crossing on the full test set, which the truth cannot: its crossing can only be
# later than the truth's (a bias the report names).
DECIDE_GRID = {"workers": (1, 2, 4), "batches": (64, 256)}
DECIDE_JOBS = [
    {"name": "lenet", "targets": {"accuracy": 0.86, "loss": 0.35}, "max_epochs": 5,
     "job": ["--model", "lenet", "--lr", "0.05", "--lr-scaling", "sqrt", "--base-batch", "64"]},
    {"name": "mlp128", "targets": {"accuracy": 0.86, "loss": 0.35}, "max_epochs": 6,
     "job": ["--model", "mlp", "--hidden", "128", "--lr", "0.05", "--lr-scaling", "sqrt", "--base-batch", "64"]},
    {"name": "logreg", "targets": {"accuracy": 0.84, "loss": 0.45}, "max_epochs": 5,
     "job": ["--model", "logreg", "--lr", "0.01", "--lr-scaling", "sqrt", "--base-batch", "64"]},
    # the long job (issue 37: an oracle of minutes; a network the corpus has no sibling of once
    # its own curves are left out): ResNet trains 0.1 s an iteration at B=64 on one VM
    {"name": "resnet", "targets": {"accuracy": 0.87, "loss": 0.36}, "max_epochs": 7,
     "job": ["--model", "resnet", "--lr", "0.01", "--lr-scaling", "sqrt", "--base-batch", "64"]},
    # a PyTorch script through --exec (LeNet in torch: its job line states model lenet, whose
    # curves the runs' corpus leaves out); its truths run it under the trainer contract on
    # the same VMs (`scavenger cluster mpirun`)
    {"name": "pytorch-lenet", "targets": {"accuracy": 0.86, "loss": 0.35}, "max_epochs": 5, "model": "lenet",
     "exec": ["/usr/bin/python3", "examples/pytorch_fashion_mnist.py", "--eval-subset", "2000", "--lr", "0.05",
              "--lr-scaling", "sqrt", "--base-batch", "64"]},
]
for _j in DECIDE_JOBS:
    if "exec" in _j:
        _j["job"] = ["--exec", " ".join(_j["exec"])]
DECIDE_TARGET_RULE = ["--eval-every-epochs", "0.25", "--eval-subset", "2000", "--target-window", "3"]
# How the built-in trainer picks a subset's samples: "slices" (the test set's slices of 2000 in
# turn, 2026-11-29) where truths made before read the first 2000 alone, 0.8-1.2 points of
# accuracy above the whole set's (their files are in bench/decide/first-subset/). An --exec
# job evaluates as its own trainer does (scavenger.torch: the first N).
DECIDE_SUBSET_RULE = "slices"


def target_args(job, t):
    metric, value = t.split(":")
    return ["--target-loss", value] if metric == "loss" else ["--target-accuracy", value]


def targets_of(job):
    return [f"{m}:{v}" for m, v in job["targets"].items()]


def periodic_evals(metrics_path):
    """A metrics file's periodic evaluations, in order, each with its wall_seconds: train's
    own, or for a trainer under the contract (which states none) the seconds from the first
    iteration's start to the evaluation's end (the next iteration's start, or the last
    iteration's end and the evaluation's seconds)."""
    evals, start, pending, last = [], None, [], None
    for line in open(metrics_path):
        o = json.loads(line)
        if o.get("type") == "iter" and "ts" in o:
            if start is None:
                start = o["ts"] - o["t_iter"]
            for e in pending:
                e["wall_seconds"] = o["ts"] - o["t_iter"] - start
            pending, last = [], o
        elif o.get("type") == "eval" and o.get("role", "periodic") == "periodic":
            evals.append(o)
            if "wall_seconds" not in o:
                pending.append(o)
    for e in pending:
        e["wall_seconds"] = last["ts"] - start + (e.get("eval_seconds") or 0) if last else None
    return evals


def target_crossings(metrics_path, targets, window=3):
    """Each target's first crossing of the smoothed rule ("accuracy:A": the periodic subset
    evaluations' mean >= A; "loss:L": the period-mean training losses' mean <= L): seconds and
    epochs."""
    evals = periodic_evals(metrics_path)
    out = {}
    for t in targets:
        metric, value = t.split(":")
        key, sign = ("train_loss", -1) if metric == "loss" else ("test_accuracy", 1)
        ev = [e for e in evals if e.get(key) is not None]
        out[t] = {"reached": False}
        for i in range(window - 1, len(ev)):
            if sign * (sum(e[key] for e in ev[i - window + 1:i + 1]) / window - float(value)) >= 0:
                out[t] = {"reached": True, "seconds": ev[i]["wall_seconds"], "epochs": ev[i]["epoch_progress"]}
                break
    return out


def truth_train(cmd, metrics, targets, env=None):
    """One truth training, interrupted (SIGINT: train stops cleanly and prints its summary) once
    every target is crossed: what follows the last crossing is never read, and a long job's
    truths take the time of its slowest crossing instead of its epoch cap."""
    import signal
    d = os.path.dirname(metrics)
    fo, fe = open(os.path.join(d, "truth.out"), "w+"), open(os.path.join(d, "truth.err"), "w+")
    p = subprocess.Popen(cmd, stdout=fo, stderr=fe, text=True, env=env)  # (files: a pipe left unread fills)
    stopped = False
    while p.poll() is None:
        time.sleep(1.0)
        if not stopped and os.path.exists(metrics):
            try:
                crossed = target_crossings(metrics, targets)
            except ValueError:  # a line being written
                continue
            if all(c["reached"] for c in crossed.values()):
                p.send_signal(signal.SIGINT)
                stopped = True
    p.wait()
    fo.seek(0), fe.seek(0)
    out, err = fo.read(), fe.read()
    fo.close(), fe.close()
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


def exec_truth(job, cluster, K, B, seed, metrics):
    """One truth of a trainer under the contract (job["exec"]) on the cluster's first K VMs
    (`scavenger cluster mpirun`), from scratch, stopped once every target is crossed: the
    summary train would print (seconds, epochs, mean iteration time) read off its metrics."""
    rule = dict(zip(DECIDE_TARGET_RULE[::2], DECIDE_TARGET_RULE[1::2]))
    env = contract_env(K, B, seed, job["max_epochs"], rule["--eval-every-epochs"], metrics,
                       SCV_EVAL_SUBSET=rule["--eval-subset"])
    cmd = [BIN, "cluster", "mpirun", cluster, str(K), "--", "/bin/sh", "-c", "trap : USR1; " + " ".join(job["exec"])]
    out = truth_train(cmd, metrics, targets_of(job), env=env)
    iters = [o for o in map(json.loads, open(metrics)) if o.get("type") == "iter"] if os.path.exists(metrics) else []
    if out.returncode not in (0, 130) or len(iters) <= WARMUP:
        return None, out
    start = iters[0]["ts"] - iters[0]["t_iter"]
    return {"wall_seconds": iters[-1]["ts"] - start, "epochs": iters[-1]["epoch_progress"],
            "t_iter_mean": statistics.mean(o["t_iter"] for o in iters[WARMUP:])}, out


def decide_truth(job, cluster, seeds):
    """Every configuration trained to the target, per seed; resumable (a JSON file per job)."""
    os.makedirs("bench/decide", exist_ok=True)
    path = f"bench/decide/truth2-{job['name']}.json"
    truth = json.load(open(path)) if os.path.exists(path) else {
        "command": "bench/bench.py decide", "machine": machine(), "cluster": "4 x c5.xlarge (0.25 core, 78 Mbit/s)",
        "job": job, "target_rule": DECIDE_TARGET_RULE, "subset_rule": DECIDE_SUBSET_RULE, "runs": {}}
    if "exec" not in job and truth.get("subset_rule") != DECIDE_SUBSET_RULE:
        raise SystemExit(f"{path}: its truths' accuracies are of the first 2000 test samples, a run's of the test "
                         f"set's slices in turn ({DECIDE_SUBSET_RULE}): they do not judge runs; move the file aside "
                         "to measure them again")
    # A truth's seconds hold on the processor that measured them (LeNet's iteration is 1.8x
    # slower on the Xeon VMs than on the EPYC ones): runs are judged only against their own's.
    theirs = truth["machine"].rsplit("cores, ", 1)[-1].rstrip(")")
    if theirs != cpu_model():
        raise SystemExit(f"{path}: its truths were measured on {theirs}, this machine is {cpu_model()}: "
                         "their seconds do not judge runs here; move the file aside to measure them here")
    for seed in range(1, seeds + 1):
        for K in sorted(DECIDE_GRID["workers"], reverse=True):  # the fastest first: a long job's oracle early
            for B in DECIDE_GRID["batches"]:
                key = f"{K},{B},{seed}"
                if key in truth["runs"]:
                    continue
                metrics = os.path.join(tempfile.mkdtemp(), "truth.jsonl")
                for attempt in range(2):  # a failed training (a killed rank) is measured again once
                    t0 = time.time()
                    if "exec" in job:
                        summ, out = exec_truth(job, cluster, K, B, seed, metrics)
                    else:
                        out = truth_train([BIN, "train", "--cluster", cluster, "--vm-type", "c5.xlarge", "--workers",
                                           str(K), "--batch", str(B), *job["job"], "--seed", str(seed),
                                           "--epochs", str(job["max_epochs"]),
                                           *DECIDE_TARGET_RULE, "--metrics", metrics, "--json", "--progress", "never"],
                                          metrics, targets_of(job))
                        lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
                        summ = json.loads(lines[-1]) if lines else None
                    if summ:
                        break
                    print(f"truth {job['name']} K={K} B={B} seed {seed}: failed (exit {out.returncode}): "
                          f"{out.stderr.strip()[-300:]}", file=sys.stderr)
                if not summ:
                    raise SystemExit(f"truth {job['name']} K={K} B={B} seed {seed}: training failed twice")
                run = {"seconds": summ["wall_seconds"], "epochs": summ["epochs"], "t_iter": summ["t_iter_mean"],
                       "process_seconds": time.time() - t0, "date": time.strftime("%Y-%m-%d"),
                       "targets": target_crossings(metrics, targets_of(job))}
                truth["runs"][key] = run
                print(f"truth {job['name']} K={K} B={B} seed {seed}: {summ['wall_seconds']:.1f} s, "
                      f"{summ['epochs']:.2f} epochs, {run['targets']}", file=sys.stderr, flush=True)
                tmp = path + ".tmp"
                with open(tmp, "w") as f:
                    json.dump(truth, f, indent=1)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, path)
    return truth


def truth_of(run, job, target):
    """(reached, seconds) of one truth run for one target."""
    t = run["targets"][target]
    return t["reached"], t.get("seconds")


def decide_rule(job, rule):
    """The job under another learning-rate rule (--rule adascale): its own name, so its own truth."""
    args = list(job["job"])
    args[args.index("--lr-scaling") + 1] = rule
    return dict(job, name=f"{job['name']}-{rule}", job=args)


def decide(seeds=2, only=-1, truth_only=0, rule=""):
    name, price = "decide", None
    import csv
    for row in csv.DictReader(open("data/vm-catalog.csv")):
        if row["instance_type"] == "c5.xlarge":
            price = float(row["ondemand_usd_per_hr"])
    subprocess.run([BIN, "cluster", "up", "--name", name, "--vm", "c5.xlarge:4"], check=True, stdout=subprocess.DEVNULL)
    try:
        for j, job in enumerate(DECIDE_JOBS):
            if only >= 0 and j != only:
                continue
            if rule:
                job = decide_rule(job, rule)
            truth = decide_truth(job, name, seeds)
            if truth_only:
                continue
            for target in targets_of(job):
                decide_report(job, target, truth, seeds, name, price)
    finally:
        subprocess.run([BIN, "cluster", "down", "--name", name])


def corpus_without(model, dataset, path):
    """The shipped corpus less the curves of the judged job's model and dataset (the runs are
    judged on a job the corpus has not seen: never its truth)."""
    n = 0
    with open(path, "w") as out:
        for line in open("data/curves.jsonl"):
            o = json.loads(line)
            if o["model"] == model and o["dataset"] == dataset:
                continue
            out.write(line)
            n += 1
    return n


def forecast_at(r, share):
    """The latest forecast made by share of the run's time: (at_s, predicted total s, band)."""
    total, best = r["actual_time_s"], None
    for f in r.get("forecasts", []):
        if f["at_s"] is not None and f["at_s"] <= share * total and f["remaining_s"] is not None:
            best = f
    if not best:
        return None
    lo = best["at_s"] + best["remaining_lo_s"] if best["remaining_lo_s"] is not None else None
    hi = best["at_s"] + best["remaining_hi_s"] if best["remaining_hi_s"] is not None else None
    return best["at_s"], best["at_s"] + best["remaining_s"], lo, hi


def decide_calibration(job, target, truth, seeds, reports):
    """Epochs to target against the truth's seeds, the bands' coverage over (configuration,
    seed), and the chosen configuration's total time as forecast at the first plan, 25% and
    50% of the run, against the run's actual total."""
    n_train = 60000
    for a, r in reports:
        f0 = next((f for f in r.get("forecasts", []) if f.get("epochs") is not None), None)
        pts = r.get("absolute_points" if r.get("decision_relative") else "decision_points", [])
        if not f0 or not pts:
            print(f"{a} run: no absolute forecast")
            continue
        e0, lo0, hi0 = f0["epochs"], f0.get("epochs_lo"), f0.get("epochs_hi")
        rows, errs, inside, n = [], [], 0, 0
        for q in pts:
            kb = (q["workers"], q["batch"])
            runs = [truth["runs"].get(f"{kb[0]},{kb[1]},{s}") for s in range(1, seeds + 1)]
            tr = [truth_of(x, job, target) for x in runs if x]
            ep = [x["targets"][target]["epochs"]
                  for x, (ok, _) in zip([x for x in runs if x], tr) if ok]
            pe = q["iterations"] * q["batch"] / n_train
            if "time_lo_s" in q:  # the run's band at this configuration (the carry's widening included)
                t_lo, t_hi = q["time_lo_s"], q.get("time_hi_s", float("inf"))
            else:
                t_lo = q["time_s"] * lo0 / e0 if lo0 is not None else None
                t_hi = q["time_s"] * hi0 / e0 if hi0 is not None else float("inf")
            for ok, secs in tr:
                n += 1
                inside += ok and t_lo is not None and t_lo <= secs <= t_hi or (not ok and t_hi == float("inf"))
            if ep:
                m = statistics.mean(ep)
                errs.append(abs(pe / m - 1))
                rows.append(f"| {kb[0]} | {kb[1]} | {pe:.2f} | {m:.2f} ({min(ep):.2f}-{max(ep):.2f}) | "
                            f"{100 * (pe / m - 1):+.0f}% | {100 * (max(ep) - min(ep)) / 2 / m:.0f}% |")
        band = f"{100 * (r['target'].get('band_coverage') or 0.8):.0f}% band {lo0}-{hi0}" if lo0 is not None else "no band"
        print(f"\n{a} run, first absolute plan (after {f0['at_epochs']:.2f} epochs): target {e0:.2f} epochs, {band}\n")
        print("| K | B | predicted epochs | truth: seed mean (min-max) | error | seeds' half-spread |\n|---|---|---|---|---|---|")
        print("\n".join(rows))
        print(f"\nmean epochs error {100 * statistics.mean(errs):.1f}% over {len(errs)} configurations; "
              f"band coverage {inside}/{n} (configuration x seed)")
        for share in (0.0, 0.25, 0.5):
            fa = forecast_at(r, share) if share else (f0["at_s"], f0["at_s"] + f0["remaining_s"]
                                                      if f0.get("remaining_s") is not None else None, None, None)
            if not fa or fa[1] is None:
                print(f"- {a} run at {100 * share:.0f}%: no forecast")
                continue
            act = r["actual_time_s"]
            band = f", band {fa[2]:.1f}-{fa[3]:.1f} s" if fa[2] is not None and fa[3] is not None else ""
            print(f"- {a} run, forecast at {fa[0]:.1f} s ({'first plan' if not share else f'{100 * share:.0f}% of the run'}): "
                  f"total {fa[1]:.1f} s against {act:.1f} s, {100 * (fa[1] / act - 1):+.1f}%{band}")


def decide_report(job, target, truth, seeds, cluster, price):
    med = {}
    for K in DECIDE_GRID["workers"]:
        for B in DECIDE_GRID["batches"]:
            rs = [truth_of(truth["runs"][f"{K},{B},{s}"], job, target) for s in range(1, seeds + 1)]
            secs = sorted(t for ok, t in rs if ok)
            if secs:
                med[K, B] = (statistics.median(secs), min(secs), max(secs), len(secs))
    db = os.path.join(tempfile.mkdtemp(), "decide.db")
    udb = os.path.join(os.path.dirname(db), "universal.db")
    model = job.get("model") or job["job"][job["job"].index("--model") + 1]
    corpus = os.path.join(os.path.dirname(db), "corpus.jsonl")
    kept = corpus_without(model, "fashion-mnist", corpus)
    runs = [("first", db, "partial"), ("second", db, "partial")]
    if job.get("universal_seed") and target == targets_of(job)[0]:
        subprocess.run([BIN, "run", "--db", udb, "--cluster", cluster, *job["universal_seed"], "--report",
                        os.path.join(os.path.dirname(db), "seed")], stdout=subprocess.DEVNULL)
        runs.append(("universal", udb, "none"))
    reports = []
    for attempt, d, search in runs:
        rep = os.path.join(os.path.dirname(db), attempt)
        subprocess.run([BIN, "run", "--db", d, "--cluster", cluster, *job["job"], *target_args(job, target),
                        "--max-epochs", str(job["max_epochs"]),
                        "--workers", ",".join(map(str, DECIDE_GRID["workers"])),
                        "--batch", ",".join(map(str, DECIDE_GRID["batches"])), "--search", search,
                        "--objective", "time", "--curve-corpus", corpus, "--report", rep], stdout=subprocess.DEVNULL)
        reports.append((attempt, json.load(open(os.path.join(rep, "report.json")))))
    oracle = min(med, key=lambda kb: med[kb][0])
    naive = (max(DECIDE_GRID["workers"]), min(DECIDE_GRID["batches"]))
    ot = med[oracle][0]
    what = target.replace(":", " ")
    print(f"\n# {job['name']} ({what}): {' '.join(job['job'])} on 4 emulated c5.xlarge VMs; {machine()}\n")
    print(f"calibrated on the corpus less the {model} fashion-mnist curves ({kept} curves kept)\n")
    errs = {a: [] for a, _ in reports}

    for a, r in reports:
        _, _, at = decision_prediction(r)
        print(f"{a} run: predictions {'at the decision' if at == 0 else f'first absolute after {at:.2f} epochs' if at else 'none (the target was never predicted)'}")
    print()
    print("| K | B | truth: median s (min-max, seeds reached) | " +
          " | ".join(f"{a} run: predicted s, error" for a, _ in reports) + " |")
    print("|---|---|---|" + "---|" * len(reports))
    for kb in sorted(med):
        m = med[kb]
        row = [str(kb[0]), str(kb[1]), f"{m[0]:.1f} ({m[1]:.1f}-{m[2]:.1f}, {m[3]}/{seeds})"]
        for a, r in reports:
            pts = decision_prediction(r)[0]
            p = pts.get(kb)
            if p:
                errs[a].append(abs(p / m[0] - 1))
                row.append(f"{p:.1f}, {100 * (p / m[0] - 1):+.0f}%")
            else:
                row.append("-")
        print("| " + " | ".join(row) + " |")
    print(f"\noracle K={oracle[0]} B={oracle[1]}: {ot:.1f} s; naive default K={naive[0]} B={naive[1]}: "
          f"{med[naive][0]:.1f} s" if naive in med else "")
    print("\n| run | target from | mean error over the grid | chosen | its predicted s | its truth s | "
          "error | regret | trained last at (regret) | run total s | vs oracle | run cost $ | vs naive: time, cost |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for a, r in reports:
        ch = r.get("chosen") or {}
        kb = (ch.get("workers"), ch.get("batch"))
        if decision_prediction(r)[2]:  # decided relative: the configuration trained when first predicted
            kb = (r["final"]["workers"], r["final"]["batch"])
        tc = med.get(kb, (float("nan"),))[0]
        pt = decision_prediction(r)[1] or float("nan")
        nt = med.get(naive, (float("nan"),))[0]
        ncost = nt * naive[0] / 3600 * price if price else float("nan")
        mean_err = f"{100 * statistics.mean(errs[a]):.1f}%" if errs[a] else "-"
        fkb = (r["final"]["workers"], r["final"]["batch"])  # where the run's re-plans left it
        print(f"| {a} | {r['target']['source']} | {mean_err} | K={kb[0]} B={kb[1]} | {pt:.1f} | {tc:.1f} "
              f"| {100 * (pt / tc - 1):+.1f}% | {tc / ot:.2f} "
              f"| K={fkb[0]} B={fkb[1]} ({med.get(fkb, (float('nan'),))[0] / ot:.2f}) | {r['actual_time_s']:.1f} "
              f"| {100 * (r['actual_time_s'] / ot - 1):+.1f}% | {r['actual_cost']:.6f} "
              f"| {nt / r['actual_time_s']:.2f}x faster, {100 * (1 - r['actual_cost'] / ncost):.0f}% cheaper |")
    # the parallel model alone: predicted iteration time against what the same run measured
    # there later (its training segments, weighted by iterations: the machine moves between
    # days, not within a run), and against the truth's (median over seeds, another day's)
    print()
    for a, r in reports:
        pts = r.get("decision_points", [])
        e, later = [], []
        for q in pts:
            ts = [truth["runs"][f"{q['workers']},{q['batch']},{s}"]["t_iter"] for s in range(1, seeds + 1)
                  if f"{q['workers']},{q['batch']},{s}" in truth["runs"]]
            if ts and q.get("t_iter"):
                e.append(abs(q["t_iter"] / statistics.median(ts) - 1))
            tr = [(st["iterations"], st["t_iter"]) for st in r.get("steps", []) if st["phase"] == "train"
                  and st["workers"] == q["workers"] and st["batch"] == q["batch"] and st.get("t_iter")]
            if tr and q.get("t_iter"):
                m = sum(n * t for n, t in tr) / sum(n for n, _ in tr)
                later.append(f"K={q['workers']} B={q['batch']} {1e3 * q['t_iter']:.2f} ms against "
                             f"{1e3 * m:.2f} ms ({100 * (q['t_iter'] / m - 1):+.0f}%)")
        sch, ovh = r.get("search_time_s"), r.get("overhead_s")
        ovs = f", overhead {ovh:.1f} s ({100 * ovh / r['actual_time_s']:.1f}%)" if ovh is not None else ""
        print(f"{a} run: iteration time predicted at the decision, against the run's own later training: "
              f"{'; '.join(later) if later else 'none trained'}; against the truth's: mean error "
              f"{100 * statistics.mean(e):.1f}% over "
              f"{len(e)} configurations; search {sch:.1f} s of {r['actual_time_s']:.1f} s "
              f"({100 * sch / r['actual_time_s']:.1f}%){ovs}, {r.get('switches')} switches, idle median "
              f"{r.get('switch_idle_median_s')} s" if e and sch is not None else f"{a} run: no decision points")
    decide_calibration(job, target, truth, seeds, reports)
