# bench/bench.py byot: bring your own trainer. The same `scavenger run` on the built-in trainer,
# the PyTorch example and PyTorch's MNIST example converted to scavenger.torch, judged against
# truths each system's trainer measures under the trainer contract (contract_truth), with the
# readers of a run's report (its predicted epochs, the evaluations' share, the judged
# configuration).

import glob, json, os, shutil, statistics, subprocess, sys, tempfile, time
from bench_common import BIN, WARMUP, contract_env, decision_prediction, machine


BYOT_GRID = {"workers": (1, 2), "batches": (64, 128)}
BYOT_TARGET, BYOT_MAX_EPOCHS = 0.86, 8
BYOT_RULE = {"every": 0.25, "subset": 2000, "window": 3}  # the run's defaults, stated for the truth
BYOT_OPT = ["--lr", "0.05", "--lr-scaling", "sqrt", "--base-batch", "64"]
BYOT_EXAMPLE = ["/usr/bin/python3", "examples/pytorch_fashion_mnist.py", "--eval-subset", str(BYOT_RULE["subset"]),
                *BYOT_OPT]
BYOT_MNIST = ["PYTHONPATH=python", "/usr/bin/python3", "examples/mnist_main.py"]  # as converted, its own defaults
BYOT_SYSTEMS = {  # name: (the trainer under the contract, for the truth; the `scavenger run` job options)
    "built-in": ([BIN, "train", "--model", "lenet", "--eval-subset", str(BYOT_RULE["subset"]), *BYOT_OPT],
                 ["--model", "lenet", *BYOT_OPT]),
    "pytorch": (BYOT_EXAMPLE, ["--exec", " ".join(BYOT_EXAMPLE)]),
    "mnist_main": (BYOT_MNIST, ["--exec", " ".join(BYOT_MNIST)]),
}
# The converted public scripts (issue 26): their own grid (--full-grid 1: BYOT_GRID's), epochs cap
# and seeds (--converted-seeds). mnist_main's Net (1.2M parameters, Adadelta lr 1.0) takes about
# 0.2 s per iteration at B=64 on one core, and its test() evaluates the whole test set (10,000
# samples: about 10 s, each worker evaluating) whatever SCV_EVAL_SUBSET says.
BYOT_CONVERTED = {"mnist_main": {"workers": (1, 2), "batches": (64,), "max_epochs": 3}}
BYOT_SMOKE = {"workers": (2,), "batches": (64,), "max_epochs": 0.3, "target": 0.5,
              "rule": {"every": 0.02, "subset": 2000, "window": 1}}
FASHION_N_TRAIN = 60000


def byot_setting(system, full_grid=0, smoke=0):
    """(workers, batches, max epochs, target, rule) of a system in `bench byot`."""
    if smoke:
        return BYOT_SMOKE["workers"], BYOT_SMOKE["batches"], BYOT_SMOKE["max_epochs"], BYOT_SMOKE["target"], \
            BYOT_SMOKE["rule"]
    c = BYOT_CONVERTED.get(system)
    if c is None:
        return BYOT_GRID["workers"], BYOT_GRID["batches"], BYOT_MAX_EPOCHS, BYOT_TARGET, BYOT_RULE
    return (c["workers"], BYOT_GRID["batches"] if full_grid else c["batches"], c["max_epochs"], BYOT_TARGET,
            BYOT_RULE)


def contract_truth(cmd, K, B, seed, max_epochs=BYOT_MAX_EPOCHS, target=BYOT_TARGET, rule=BYOT_RULE):
    """One uninterrupted invocation of a trainer under docs/TRAINER-CONTRACT.md at (K, B) from
    scratch, stopped (SIGUSR1 to mpirun) once the mean of the last W periodic evaluations reaches
    the target: seconds from the first iteration's start to the end of the evaluation that
    reached it (the next iteration's start), epochs, the mean iteration time, and the seconds
    of the evaluations up to it (their eval_seconds; worker 0's)."""
    import signal
    d = tempfile.mkdtemp()
    metrics = os.path.join(d, "metrics.jsonl")
    env = contract_env(K, B, seed, max_epochs, rule["every"], metrics, SCV_MASTER_ADDR="127.0.0.1")
    p = subprocess.Popen(["mpirun", "--oversubscribe", "-np", str(K), "/bin/sh", "-c",
                          "trap : USR1; " + " ".join(cmd)], env=env, stdout=subprocess.DEVNULL,
                         stderr=open(os.path.join(d, "trainer.log"), "w"), start_new_session=True)
    start, iters, evals, crossed, out, pos, eval_s = None, [], [], None, None, 0, 0.0
    while out is None:
        done = p.poll() is not None
        with open(metrics) if os.path.exists(metrics) else open(os.devnull) as f:
            f.seek(pos)
            chunk = f.read()
        lines = chunk.split("\n")
        pos += len(chunk) - len(lines[-1])  # a partial last line is read again
        for l in lines[:-1]:
            o = json.loads(l)
            if o["type"] == "iter":
                if start is None:
                    start = o["ts"] - o["t_iter"]
                iters.append(o)
                if crossed is not None and out is None:  # the evaluation's end: this iteration's start
                    out = (o["ts"] - o["t_iter"] - start, crossed["epoch_progress"])
            elif o["type"] == "eval" and o.get("role", "periodic") == "periodic" and crossed is None:
                evals.append(o["test_accuracy"])
                eval_s += o.get("eval_seconds") or 0.0
                w = evals[-rule["window"]:]
                if len(w) == rule["window"] and sum(w) / len(w) >= target:
                    crossed = o
                    p.send_signal(signal.SIGUSR1)
        if done:
            if crossed is not None and out is None:  # no iteration after it: the last one's end
                out = (iters[-1]["ts"] - start, crossed["epoch_progress"])
            break
        time.sleep(0.05)
    p.wait(timeout=120)
    t_iter = statistics.mean(o["t_iter"] for o in iters[WARMUP:]) if len(iters) > WARMUP else float("nan")
    shutil.rmtree(d, ignore_errors=True)
    if out is None:
        return {"reached": False, "t_iter": t_iter}
    return {"reached": True, "seconds": out[0], "epochs": out[1], "t_iter": t_iter, "eval_s": eval_s}


def predicted_epochs(r, kb, n_train):
    """The epochs to the target the same plan as decision_prediction predicted at (K, B): its
    point's iterations x B / n_train (None: no absolute prediction)."""
    pts = r.get("absolute_points", []) if r.get("decision_relative", r.get("relative_prediction")) \
        else r.get("decision_points", [])
    for q in pts:
        if (q["workers"], q["batch"]) == kb and q.get("iterations"):
            return q["iterations"] * q["batch"] / n_train
    return None


def run_evals(run_dir, log):
    """(measured evaluation seconds of a run: every segment's eval lines' eval_seconds, worker 0's,
    or None; the share the run priced at its decision, a fraction, or None; n_train)."""
    import re
    secs, found, n_train = 0.0, False, FASHION_N_TRAIN
    for seg in glob.glob(os.path.join(run_dir, "seg-*.jsonl")):
        for l in open(seg):
            if '"type":"eval"' in l:
                try:
                    secs += json.loads(l).get("eval_seconds") or 0.0
                    found = True
                except ValueError:  # a segment's partial last line
                    pass
    try:
        n_train = int(json.loads(open(os.path.join(run_dir, "job.jsonl")).readline()).get("n_train") or n_train)
    except (OSError, ValueError):
        pass
    m = re.search(r"evaluations priced: .*?: ([0-9.]+)% of the chosen", log)
    return (secs if found else None), (float(m.group(1)) / 100 if m else None), n_train


def judged_config(r):
    """decision_prediction(r) and the configuration it is judged at: the chosen one, or when the
    decision was relative, the one the run trained at when it first predicted absolutely."""
    pts, pt, at = decision_prediction(r)
    ch = r.get("chosen") or {}
    kb = (r["final"]["workers"], r["final"]["batch"]) if at else (ch.get("workers"), ch.get("batch"))
    return pts, pt, at, kb


def byot(seeds=2, converted_seeds=1, full_grid=0, smoke=0):
    """The same `scavenger run` on the built-in LeNet, on the PyTorch LeNet (the example) and on
    PyTorch's MNIST example converted to scavenger.torch (examples/mnist_main.py).
    smoke=1: mnist_main alone, one seed, K=2 B=64 (the loop needs a K >= 2), a 50% target on single evaluations every 0.02
    epoch, the first run only, truths in a temporary file: the pipeline end to end in about a minute."""
    systems = ["mnist_main"] if smoke else list(BYOT_SYSTEMS)
    nseeds = {s: (1 if smoke else converted_seeds if s in BYOT_CONVERTED else seeds) for s in systems}
    attempts = ("first",) if smoke else ("first", "second")
    tmp = tempfile.mkdtemp(prefix="scv-byot-")
    path = os.path.join(tmp, "truth-byot-smoke.json") if smoke else "bench/decide/truth-byot.json"
    os.makedirs("bench/decide", exist_ok=True)
    truth = json.load(open(path)) if os.path.exists(path) else {
        "command": "bench/bench.py byot", "machine": machine(), "target": BYOT_TARGET, "rule": BYOT_RULE,
        "systems": {s: v[0] for s, v in BYOT_SYSTEMS.items()}, "runs": {}}
    for system in systems:
        truth["systems"].setdefault(system, BYOT_SYSTEMS[system][0])
    for seed in range(1, max(nseeds.values()) + 1):  # the truth: every configuration from scratch
        for system in systems:
            if seed > nseeds[system]:
                continue
            Ks, Bs, max_ep, target, rule = byot_setting(system, full_grid, smoke)
            for K in Ks:
                for B in Bs:
                    key = f"{system},{K},{B},{seed}"
                    if key in truth["runs"]:
                        continue
                    t0 = time.time()
                    truth["runs"][key] = dict(contract_truth(BYOT_SYSTEMS[system][0], K, B, seed, max_ep, target, rule),
                                              date=time.strftime("%Y-%m-%d"))
                    print(f"truth {key}: {truth['runs'][key]} ({time.time() - t0:.0f} s)", file=sys.stderr)
                    with open(path + ".tmp", "w") as f:
                        json.dump(truth, f, indent=1)
                        f.flush()
                        os.fsync(f.fileno())
                    os.replace(path + ".tmp", path)
    reports, evals = {}, {}
    for seed in range(1, max(nseeds.values()) + 1):  # per system and seed: a first run with an empty store,
        for system in systems:                         # then a second with the first one stored
            if seed > nseeds[system]:
                continue
            Ks, Bs, max_ep, target, rule = byot_setting(system, full_grid, smoke)
            job = BYOT_SYSTEMS[system][1]
            d = tempfile.mkdtemp(dir=tmp)
            for attempt in attempts:
                t0 = time.time()
                db = os.path.join(d, "s.db")
                p = subprocess.run([BIN, "run", "--db", db, *job, "--seed", str(seed),
                                    "--target-accuracy", str(target), "--max-epochs", str(max_ep),
                                    "--workers", ",".join(map(str, Ks)), "--batch", ",".join(map(str, Bs)),
                                    "--search", "partial", "--objective", "time",
                                    "--eval-every-epochs", str(rule["every"]), "--target-window", str(rule["window"]),
                                    *(["--search-eval-every-epochs", str(rule["every"])] if smoke else []),
                                    "--report", os.path.join(d, attempt)],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                log = p.stdout.decode(errors="replace")
                open(os.path.join(d, attempt + ".log"), "w").write(log)
                if p.returncode != 0:
                    sys.exit(f"run {system} seed {seed} {attempt}: exit {p.returncode}\n{log[-3000:]}")
                r = reports[system, seed, attempt] = json.load(open(os.path.join(d, attempt, "report.json")))
                evals[system, seed, attempt] = run_evals(f"{db}.runs/{r['run']}", log)
                print(f"run {system} seed {seed} {attempt}: {time.time() - t0:.0f} s", file=sys.stderr)
    print(f"# bring your own trainer: `scavenger run` on the built-in LeNet, on the PyTorch LeNet "
          f"(examples/pytorch_fashion_mnist.py) and on PyTorch's MNIST example converted to scavenger.torch "
          f"(examples/mnist_main.py: Adadelta, its own evaluation of the whole test set)"
          f"{' [smoke]' if smoke else ''}; local processes; {machine()}")
    for system in systems:
        Ks, Bs, max_ep, target, rule = byot_setting(system, full_grid, smoke)
        print(f"#   {system}: K in {Ks} x B in {Bs}, {target:.0%} test accuracy (mean of {rule['window']} "
              f"evaluations every {rule['every']} epoch{'' if system == 'mnist_main' else ' on %d test samples' % rule['subset']}), "
              f"at most {max_ep} epochs, seeds 1-{nseeds[system]}")
    print()
    med = {}
    for key in truth["runs"]:
        system, K, B, _ = key.split(",")
        if system in systems:
            med.setdefault((system, int(K), int(B)), [])
    for (system, K, B) in med:
        rs = [truth["runs"].get(f"{system},{K},{B},{s}") for s in range(1, nseeds[system] + 1)]
        ok = sorted((r for r in rs if r and r["reached"]), key=lambda r: r["seconds"])
        secs = [r["seconds"] for r in ok]
        med[system, K, B] = (statistics.median(secs), secs[0], secs[-1], len(secs),
                             statistics.median(r["epochs"] for r in ok),
                             statistics.median(r["eval_s"] / r["seconds"] for r in ok) if all("eval_s" in r for r in ok)
                             else None) if secs else None
    runs = [(s, a) for s in range(1, max(nseeds.values()) + 1) for a in attempts]
    print("| system | K | B | truth: median s (min-max, seeds reached) | truth: epochs | truth: evaluation share | " +
          " | ".join(f"seed {s} {a} run: predicted s, error" for s, a in runs) + " |")
    print("|---|---|---|---|---|---|" + "---|" * len(runs))
    errs = {}
    for system in systems:
        Ks, Bs = byot_setting(system, full_grid, smoke)[:2]
        for K in Ks:
            for B in Bs:
                m = med.get((system, K, B))
                row = [system, str(K), str(B), f"{m[0]:.1f} ({m[1]:.1f}-{m[2]:.1f}, {m[3]}/{nseeds[system]})" if m else "-",
                       f"{m[4]:.2f}" if m else "-", f"{100 * m[5]:.0f}%" if m and m[5] is not None else "-"]
                for s, a in runs:
                    r = reports.get((system, s, a))
                    p = decision_prediction(r)[0].get((K, B)) if r else None
                    if p and m:
                        errs.setdefault((system, s, a), []).append(abs(p / m[0] - 1))
                        row.append(f"{p:.1f}, {100 * (p / m[0] - 1):+.0f}%")
                    else:
                        row.append("-")
                print("| " + " | ".join(row) + " |")
    num = lambda x, f: "-" if x is None or x != x else format(x, f)
    pct = lambda x: "-" if x is None else f"{100 * x:.0f}%"
    print("\n| system | seed | run | predictions made | target from | mean error over the grid | chosen "
          "| its predicted s | its truth s | error | oracle | regret | run total s | overhead s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (system, s, a), r in sorted(reports.items()):
        pts, pt, at, kb = judged_config(r)
        mine = {k[1:]: v for k, v in med.items() if k[0] == system and v}
        oracle = min(mine, key=lambda k: mine[k][0]) if mine else (None, None)
        tc = mine.get(kb, (float("nan"),))[0]
        reg = f"{tc / mine[oracle][0]:.2f}" if mine else "-"
        when = "at the decision" if at == 0 else f"after {at:.2f} epochs" if at else "never"
        e = errs.get((system, s, a))
        pt = pt or float("nan")
        src = (r.get("target") or {}).get("source", "-")
        print(f"| {system} | {s} | {a} | {when} | {src} | {100 * statistics.mean(e):.1f}% | K={kb[0]} B={kb[1]} "
              f"| {pt:.1f} | {tc:.1f} | {100 * (pt / tc - 1):+.1f}% | K={oracle[0]} B={oracle[1]} "
              f"| {reg} | {r['actual_time_s']:.1f} | {num(r.get('overhead_s'), '.1f')} |"
              if e else
              f"| {system} | {s} | {a} | {when} | {src} | - | K={kb[0]} B={kb[1]} | - | {tc:.1f} | - "
              f"| K={oracle[0]} B={oracle[1]} | {reg} | {r['actual_time_s']:.1f} | - |")
    # Prediction against outcome per run: the epochs and seconds the run's plan predicted for the
    # configuration it trained at (as above), the run's own (search and switches included), and the
    # truth's at that configuration; the evaluations' share of the wall time as priced by the run
    # at its decision, as measured in the run (its segments' eval_seconds / its total) and in the truth.
    print("\n| system | seed | run | trained at | epochs: predicted / run / truth | seconds: predicted / run / truth "
          "| evaluation share: priced / run / truth | evaluations s (run) | reached | test accuracy |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (system, s, a), r in sorted(reports.items()):
        pts, pt, at, kb = judged_config(r)
        ev_s, priced, n_train = evals[system, s, a]
        pe = predicted_epochs(r, kb, n_train)
        m = med.get((system,) + kb)
        share = ev_s / r["actual_time_s"] if ev_s is not None and r.get("actual_time_s") else None
        print(f"| {system} | {s} | {a} | K={kb[0]} B={kb[1]} | {num(pe, '.2f')} / {num(r.get('epochs'), '.2f')} / "
              f"{num(m[4] if m else None, '.2f')} | {num(pt, '.1f')} / {num(r.get('actual_time_s'), '.1f')} / "
              f"{num(m[0] if m else None, '.1f')} | {pct(priced)} / {pct(share)} / {pct(m[5] if m else None)} "
              f"| {num(ev_s, '.1f')} | {'yes' if r.get('reached') else 'no'} | {num(r.get('test_accuracy'), '.4f')} |")
    if smoke:
        shutil.rmtree(tmp, ignore_errors=True)
