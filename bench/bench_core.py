# The trainer's and the models' benchmarks of bench/bench.py (their usage: bench.py's text):
# throughput and overhead (against PyTorch, and with and without the gradient-noise statistics),
# accuracy, predict (the parallel model), statmodels (the statistical models), cluster (iteration
# time against K on an emulated cluster), loop (the Scavenger loop against a sweep's truth) and
# planspeed.

import json, os, statistics, subprocess, sys, tempfile, time
from bench_common import BASE_BIN, BIN, machine, peer_rate, plan_json, scv_rate, summary


def throughput(reps=5, iterations=600):
    print(f"# throughput: LeNet, 1 thread/process, {iterations} iterations, median of {reps}; {machine()}")
    if BASE_BIN:
        print(f"# base binary: {BASE_BIN} (alternating with {BIN})")
        print("| setup | Scavenger samples/s | base samples/s | Scavenger / base | PyTorch samples/s | ratio |")
        print("|---|---|---|---|---|---|")
    else:
        print("| setup | Scavenger samples/s | PyTorch samples/s | ratio |")
        print("|---|---|---|---|")
    for k, b, peer in ((1, 64, "PyTorch"), (2, 128, "PyTorch DDP gloo")):
        ours, base, theirs = [], [], []
        for _ in range(reps):
            if BASE_BIN and os.environ.get("SCV_BASE_FIRST"):  # the other order: base, then this build
                base.append(scv_rate(k, b, iterations, bin=BASE_BIN))
            ours.append(scv_rate(k, b, iterations))
            if BASE_BIN and not os.environ.get("SCV_BASE_FIRST"):
                base.append(scv_rate(k, b, iterations, bin=BASE_BIN))
            theirs.append(peer_rate(k, b, iterations))
        o, t = statistics.median(ours), statistics.median(theirs)
        if BASE_BIN:
            a = statistics.median(base)
            print(f"| K={k}, global batch {b} vs {peer} | {o:.0f} | {a:.0f} | {o / a:.3f} | {t:.0f} | {o / t:.2f}x |",
                  flush=True)
        else:
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


def predict(iterations=80):
    Ks, Bs = (1, 2), (32, 64, 128, 256, 512)
    d = tempfile.mkdtemp()
    files = {}
    for k in Ks:
        for b in Bs:
            f = files[k, b] = os.path.join(d, f"k{k}b{b}.jsonl")
            subprocess.run([BIN, "train", "--model", "lenet", "--workers", str(k), "--batch", str(b),
                            "--iterations", str(iterations), "--eval-every", str(10 ** 9), "--metrics", f,
                            "--vm-type", "c5.xlarge", "--progress", "never"], check=True,
                           stdout=subprocess.DEVNULL)
    summary = lambda f: json.loads(subprocess.run([BIN, "profile", f, "--json"], check=True,
                                                  capture_output=True, text=True).stdout)
    measured = {kb: summary(f)["configs"][0]["t_iter"] for kb, f in files.items()}
    space = ["--workers", ",".join(map(str, Ks)), "--batch", ",".join(map(str, Bs)), "--all"]
    ext = [(Ks[0], Bs[0]), (Ks[-1], Bs[-1])]
    part = plan_json("--profile", ",".join(files[e] for e in ext), *space)
    full = plan_json("--profile", ",".join(files.values()), *space)
    pred = lambda j: {(p["workers"], p["batch"]): p["t_iter"] for p in j["points"]}
    pp, pf = pred(part), pred(full)
    print(f"# parallel-model error, LeNet, {iterations} iterations per configuration "
          f"(mean t_iter after warm-up); {machine()}")
    print("| K | B | measured ms | partial (2 extremes) ms | error | full fit ms | error |")
    print("|---|---|---|---|---|---|---|")
    ep, ef = [], []
    for kb in sorted(files):
        m = measured[kb]
        e1, e2 = abs(pp[kb] / m - 1), abs(pf[kb] / m - 1)
        if kb not in ext:
            ep.append(e1)
        ef.append(e2)
        tag = " (profiled)" if kb in ext else ""
        print(f"| {kb[0]} | {kb[1]}{tag} | {m * 1e3:.2f} | {pp[kb] * 1e3:.2f} | {100 * e1:.1f}% | "
              f"{pf[kb] * 1e3:.2f} | {100 * e2:.1f}% |")
    print(f"\nmean absolute error: partial {100 * statistics.mean(ep):.1f}% over the {len(ep)} "
          f"unprofiled configurations; full fit {100 * statistics.mean(ef):.1f}% over all {len(ef)}")


def epochs_to(path, target):
    for l in open(path):
        if '"type":"eval"' in l:
            r = json.loads(l)
            if r["test_accuracy"] >= target:
                return r["epoch_progress"]
    return None


def statmodels(reps=2, head=300):
    Bs, target, n_train, B0 = (32, 64, 128, 256, 512), 0.85, 60000, 64
    d = tempfile.mkdtemp()
    runs, heads = {b: [] for b in Bs}, []
    for rep in range(reps):
        for b in Bs:
            f = os.path.join(d, f"b{b}s{rep}.jsonl")
            subprocess.run([BIN, "train", "--model", "lenet", "--workers", "2", "--batch", str(b),
                            "--lr", "0.05", "--lr-scaling", "sqrt", "--base-batch", "64",
                            "--seed", str(rep + 1), "--target-accuracy", str(target),
                            "--epochs", "20", "--eval-every", str(max(1, n_train // b // 8)),
                            "--metrics", f, "--vm-type", "c5.xlarge", "--progress", "never"],
                           stdout=subprocess.DEVNULL)
            runs[b].append(epochs_to(f, target))
            if rep == 0:  # the profile: the first `head` iterations of each batch size
                h = os.path.join(d, f"b{b}.head.jsonl")
                with open(f) as src, open(h, "w") as dst:
                    n = 0
                    for l in src:
                        n += '"type":"iter"' in l
                        if n > head:
                            break
                        dst.write(l)
                heads.append(h)
    measured = {b: statistics.median([e for e in runs[b] if e is not None] or [float("nan")]) for b in Bs}
    print(f"# statistical models, LeNet K=2 to {target:.0%} test accuracy (evaluated every 1/8 "
          f"epoch), sqrt LR scaling, median of {reps} seeds; profile = first {head} iterations "
          f"of each batch size; reference B0 = {B0}; {machine()}")
    print("| B | measured epochs (runs) | GNS predicted | error | Scavenger predicted | error |")
    print("|---|---|---|---|---|---|")
    preds = {}
    for model in ("gns", "scavenger"):
        j = json.loads(subprocess.run([BIN, "plan", "--json", "--profile", ",".join(heads),
                                       "--stat", model, "--target-epochs", str(measured[B0]),
                                       "--base-batch", str(B0), "--workers", "2", "--batch",
                                       ",".join(map(str, Bs)), "--all"],
                                      check=True, capture_output=True, text=True).stdout)
        preds[model] = {p["batch"]: p["iterations"] * p["batch"] / n_train for p in j["points"]}
        preds[model + "_fit"] = j["stat"]
    errs = {"gns": [], "scavenger": []}
    for b in Bs:
        m = measured[b]
        rs = ", ".join(f"{e:.2f}" if e else "-" for e in runs[b])
        row = [f"{b}{' (reference)' if b == B0 else ''}", f"{m:.2f} ({rs})"]
        for model in ("gns", "scavenger"):
            p = preds[model][b]
            e = abs(p / m - 1)
            if b != B0 and m == m:
                errs[model].append(e)
            row += [f"{p:.2f}", f"{100 * e:.1f}%"]
        print("| " + " | ".join(row) + " |")
    f = preds["gns_fit"], preds["scavenger_fit"]
    print(f"\nGNS: B_simple = {f[0]['b_simple']:.1f}; mean absolute error "
          f"{100 * statistics.mean(errs['gns']):.1f}% over {len(errs['gns'])} batch sizes")
    print(f"Scavenger: gamma/K = {f[1]['gamma_a']:.3f} + {f[1]['gamma_s']:.3f}/sqrt(B), theta = "
          f"{f[1]['theta']:.3f}; mean absolute error {100 * statistics.mean(errs['scavenger']):.1f}%")


def cluster(iterations=40):
    name, Ks, B = "bench", (1, 2, 4, 8), 256
    subprocess.run([BIN, "cluster", "up", "--name", name, "--vm", "c5.xlarge:8"], check=True,
                   stdout=subprocess.DEVNULL)
    d = tempfile.mkdtemp()
    try:
        print(f"# iteration time against K, global batch {B} (b = {B}/K), {iterations} iterations "
              f"(means after warm-up); emulated c5.xlarge VMs = 0.25 host core + 78 Mbit/s each; "
              f"{machine()}")
        for model, extra in (("mlp", ["--hidden", "256,128"]), ("lenet", [])):
            rows, files = {}, []
            for k in Ks:
                for where in ("cluster", "local"):
                    f = os.path.join(d, f"{model}-{where}-{k}.jsonl")
                    cmd = [BIN, "train", "--model", model, *extra, "--workers", str(k), "--batch",
                           str(B), "--iterations", str(iterations), "--eval-every", str(10 ** 9),
                           "--metrics", f, "--progress", "never", "--vm-type", "c5.xlarge"]
                    if where == "cluster":
                        cmd += ["--cluster", name]
                        files.append(f)
                    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                    rows[where, k] = summary(f)
            fit = json.loads(subprocess.run([BIN, "plan", "--json", "--profile", ",".join(files),
                                             "--target-epochs", "1", "--workers", "1"],
                                            check=True, capture_output=True, text=True).stdout)["perf"]
            job = json.loads(open(files[0]).readline())
            M = 4 * job["params"]
            ab = lambda k: 0 if k == 1 else 2 * (k - 1) * fit["alpha"] + 2 * (k - 1) / k * M * fit["beta"]
            print(f"\n{model} ({job['params']} parameters, {M / 1e6:.2f} MB of gradient); ring fit: "
                  f"alpha = {fit['alpha'] * 1e3:.3f} ms, 1/beta = {1e-6 / fit['beta'] if fit['beta'] else 0:.2f} MB/s")
            print("| K | cluster t_compute ms | cluster t_comm ms | alpha-beta t_comm ms | cluster t_iter ms "
                  "| local t_compute ms | local t_iter ms |")
            print("|---|---|---|---|---|---|---|")
            for k in Ks:
                c, l = rows["cluster", k], rows["local", k]
                print(f"| {k} | {1e3 * c['t_compute']:.1f} | {1e3 * c['t_comm']:.1f} | {1e3 * ab(k):.1f} | "
                      f"{1e3 * c['t_iter']:.1f} | {1e3 * l['t_compute']:.1f} | {1e3 * l['t_iter']:.1f} |",
                      flush=True)
    finally:
        subprocess.run([BIN, "cluster", "down", "--name", name])


def loop(target=86, cosine=0):
    name, Ks, Bs, target = "loop", (1, 2, 4), (64, 128, 256), target / 100
    run_Bs = Bs
    job = ["--model", "lenet", "--lr", "0.05", "--lr-scaling", "sqrt", "--base-batch", "64"]
    if cosine:  # cosine decay over `cosine` epochs: a steadier approach to the threshold
        job += ["--lr-decay", "cosine", "--lr-horizon", str(cosine)]
    subprocess.run([BIN, "cluster", "up", "--name", name, "--vm", "c5.2xlarge:4"], check=True,
                   stdout=subprocess.DEVNULL)
    d = os.environ.get("SCV_SWEEP_DIR") or tempfile.mkdtemp()
    try:
        if not os.environ.get("SCV_SWEEP_DIR"):
            subprocess.run([BIN, "sweep", "--cluster", name, "--workers", ",".join(map(str, Ks)),
                            "--batch", ",".join(map(str, Bs)), "--target-accuracy", str(target),
                            "--out", d, *job, "--epochs", "15"], check=True, stdout=subprocess.DEVNULL)
        print(f"sweep: {d}", file=sys.stderr)
        truth = {}
        for l in list(open(os.path.join(d, "sweep.csv")))[1:]:
            f = l.strip().split(",")
            if f[2] == "1":
                truth[int(f[0]), int(f[1])] = (float(f[7]), float(f[8]), float(f[5]), float(f[6]))
        ref = truth[1, 64]
        truth = {kb: v for kb, v in truth.items() if kb[1] in run_Bs}
        # one store per binary: its "full" run follows its "partial" one in that store
        dbs = {b: os.path.join(tempfile.mkdtemp(), "loop.db") for b in (BIN, BASE_BIN) if b}
        reports = {}
        runs = [(pol, pol, BIN) for pol in ("partial", "full")]
        if BASE_BIN:  # alternating: new, base, new, base
            runs = [r for pol in ("partial", "full") for r in ((pol, pol, BIN), (pol + " (base)", pol, BASE_BIN))]
        for label, pol, bin in runs:
            db = dbs[bin]
            rep = os.path.join(os.path.dirname(db), pol)
            subprocess.run([bin, "run", "--db", db, "--cluster", name, *job, "--target-accuracy", str(target),
                            "--workers", ",".join(map(str, Ks)), "--batch", ",".join(map(str, run_Bs)),
                            "--search", pol, "--objective", "time", "--target-epochs", str(ref[2]),
                            "--target-batch", "64", "--max-epochs", "15", "--report", rep,
                            # the sweep's rule and schedule (one evaluation of the whole test
                            # set every 1/4 epoch), and no search budget: the loop as before
                            "--target-window", "1", "--eval-subset", "0", "--search-eval-every-epochs", "0.25",
                            "--search-budget", "0"],
                           stdout=subprocess.DEVNULL)
            reports[label] = json.load(open(os.path.join(rep, "report.json")))
        print(f"# the Scavenger loop on 4 emulated c5.2xlarge VMs, LeNet to {target:.0%} test accuracy; "
              f"{machine()}\n")
        print("| K | B | measured time (s) | measured cost ($) | epochs | partial: predicted (s) | error "
              "| full: predicted (s) | error |")
        print("|---|---|---|---|---|---|---|---|---|")
        errs = {p: [] for p in reports}
        ierrs = {p: [] for p in reports}  # iteration time alone
        # (each time less its segments' start-ups, idle_s: the sweep's runs are uninterrupted)
        pred = {p: {(q["workers"], q["batch"]): q["time_s"] - q.get("idle_s", 0) for q in r.get("points", [])}
                for p, r in reports.items()}
        for p, r in reports.items():
            for q in r.get("points", []):
                kb = (q["workers"], q["batch"])
                if kb in truth:
                    ierrs[p].append(abs(q["t_iter"] / truth[kb][3] - 1))
                    errs[p].append(abs(pred[p][kb] / truth[kb][0] - 1))
        for kb in sorted(truth):
            t, c, e, _ = truth[kb]
            row = [str(kb[0]), str(kb[1]), f"{t:.1f}", f"{c:.6f}", f"{e:.2f}"]
            for pol in ("partial", "full"):
                p = pred[pol].get(kb)
                if p:
                    row += [f"{p:.1f}", f"{100 * abs(p / t - 1):.1f}%"]
                else:
                    row += ["-", "-"]
            print("| " + " | ".join(row) + " |")
        oracle = min(truth, key=lambda kb: truth[kb][0])
        naive = (max(Ks), min(Bs))
        print(f"\noracle (fastest in the sweep): K={oracle[0]} B={oracle[1]}, {truth[oracle][0]:.1f} s, "
              f"${truth[oracle][1]:.6f}; naive default K={naive[0]} B={naive[1]}: "
              f"{truth[naive][0]:.1f} s, ${truth[naive][1]:.6f}" if naive in truth else "")
        print("\n| search | mean abs. error of predicted time to target | of predicted iteration time | chosen | run time (s) | run cost ($) "
              "| overhead vs oracle: time, cost | vs naive: time, cost | switches | idle median (s) | idle worst (s) |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for pol, r in reports.items():
            ch = r["chosen"] or {}
            ot, oc = truth[oracle][0], truth[oracle][1]
            nt, nc = truth.get(naive, (float("nan"), float("nan")))[:2]
            print(f"| {pol} | {100 * statistics.mean(errs[pol]):.1f}% | {100 * statistics.mean(ierrs[pol]):.1f}% "
                  f"| K={ch.get('workers')} B={ch.get('batch')} "
                  f"| {r['actual_time_s']:.1f} | {r['actual_cost']:.6f} | {100 * (r['actual_time_s'] / ot - 1):+.1f}%, "
                  f"{100 * (r['actual_cost'] / oc - 1):+.1f}% | {r['actual_time_s'] / nt:.2f}x, "
                  f"{r['actual_cost'] / nc:.2f}x | {r['switches']} | {r['switch_idle_median_s']:.2f} | "
                  f"{r['switch_idle_worst_s']:.2f} |")
        print(f"\nsweep table and figure: {d}/sweep.md, {d}/sweep.svg")
    finally:
        subprocess.run([BIN, "cluster", "down", "--name", name])


def planspeed():
    d = tempfile.mkdtemp()
    f = os.path.join(d, "p.jsonl")
    for k, b in ((1, 32), (2, 512)):
        subprocess.run([BIN, "train", "--model", "lenet", "--workers", str(k), "--batch", str(b),
                        "--iterations", "40", "--metrics", f + f".{k}", "--vm-type", "c5.xlarge",
                        "--progress", "never", "--eval-every", str(10 ** 9)], check=True,
                       stdout=subprocess.DEVNULL)
    prof = f + ".1," + f + ".2"
    args = ["--profile", prof, "--vm", "all", "--workers", "1..128", "--batch", "32..8192:32",
            "--objective", "knee"]
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        j = plan_json(*args)
        times.append(time.perf_counter() - t0)
    print(f"# planning speed: `scavenger plan {' '.join(args)}`; {machine()}")
    print(f"| configurations evaluated | seconds (whole command, median of 5) |\n|---|---|\n"
          f"| {j['n_configs']} | {statistics.median(times):.3f} |")
