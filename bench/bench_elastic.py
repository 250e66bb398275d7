# Changes of a job's resources on an emulated cluster (bench/bench.py elastic, straggler,
# hetero): the idle of a configuration change in place against checkpoint-restart, straggler
# replacement, and dynamic batching on heterogeneous VMs with a mid-run throttle.

import glob, json, os, shutil, statistics, subprocess, tempfile, time
from bench_common import BIN, machine


def segment_span(path):
    """(first iteration start, last iteration end) wall-clock stamps of a metrics file."""
    first = last = None
    for line in open(path):
        o = json.loads(line)
        if o.get("type") == "iter":
            if first is None:
                first = o["ts"] - o["t_iter"]
            last = o["ts"]
    return first, last


def elastic(changes=10):
    name = "elastic"
    subprocess.run([BIN, "cluster", "up", "--name", name, "--vm", "c5.xlarge:4"], check=True, stdout=subprocess.DEVNULL)
    # the sequence: B changes at K=2, then K alternating 2 <-> 4 at B=128; every change is
    # classified by what it does (the first grow spawns processes, later ones reuse parked)
    seq = [(2, 64 if i % 2 == 0 else 128) for i in range(changes + 1)]
    seq += [(4 if i % 2 == 0 else 2, 128) for i in range(2 * changes + 1)]
    kinds, seen_k = [], 2
    for i in range(1, len(seq)):
        (ka, ba), (kb, bb) = seq[i - 1], seq[i]
        if kb == ka:
            kinds.append("B only")
        elif kb < ka:
            kinds.append("shrink 4->2")
        else:
            kinds.append("grow 2->4 (spawn)" if kb > seen_k else "grow 2->4 (parked)")
        seen_k = max(seen_k, kb)
    try:
        print(f"# idle per configuration change, in place (elastic job) against checkpoint-restart, on 4 emulated "
              f"c5.xlarge VMs (0.25 core, 78 Mbit/s); {changes} changes of each kind; {machine()}\n")
        print("| model | change | elastic: median ms | worst ms | restart: median ms | worst ms | restart / elastic |")
        print("|---|---|---|---|---|---|---|")
        for model, iters in (("lenet", 12), ("resnet", 3)):
            job = ["--model", model, "--lr", "0.02", "--seed", "1"]
            d = tempfile.mkdtemp()
            # elastic: one job, a command per segment
            ctl = os.path.join(d, "ctl")
            os.makedirs(ctl)
            open(os.path.join(ctl, "cmd"), "w").close()
            open(os.path.join(ctl, "reply"), "w").close()
            k0, b0 = seq[0]
            proc = subprocess.Popen([BIN, "train", "--cluster", name, "--vm-type", "c5.xlarge", *job,
                                     "--workers", str(k0), "--batch", str(b0), "--elastic-control", ctl,
                                     "--checkpoint", os.path.join(d, "eck"), "--progress", "never"],
                                    stdout=subprocess.DEVNULL, stderr=open(os.path.join(d, "job.log"), "w"))
            def replies():
                return [json.loads(l) for l in open(os.path.join(ctl, "reply")) if l.strip()]
            while not any(r.get("type") == "ready" for r in replies()):
                if proc.poll() is not None:
                    raise SystemExit(f"the elastic job did not start: {open(os.path.join(d, 'job.log')).read()[-500:]}")
                time.sleep(0.05)
            files, total = [], 0
            for i, (k, b) in enumerate(seq):
                total += iters
                m = os.path.join(d, f"e{i}.jsonl")
                with open(os.path.join(ctl, "cmd"), "a") as f:
                    f.write(json.dumps({"cmd": "segment", "workers": k, "batch": b, "until_iterations": total,
                                        "metrics": m}) + "\n")
                while sum(r.get("type") == "segment" for r in replies()) < i + 1:
                    if proc.poll() is not None:
                        raise SystemExit(f"the elastic job ended: {open(os.path.join(d, 'job.log')).read()[-500:]}")
                    time.sleep(0.001)  # as the elastic driver polls (2 ms): the bench adds no idle of its own
                files.append(m)
            with open(os.path.join(ctl, "cmd"), "a") as f:
                f.write('{"cmd":"stop"}\n')
            proc.wait(timeout=120)
            bad = [r for r in replies() if r.get("type") == "segment" and r.get("rc")]
            if bad:
                raise SystemExit(f"elastic segments failed: {bad[:2]}")
            # checkpoint-restart: one `train --resume` per segment
            rfiles, total = [], 0
            for i, (k, b) in enumerate(seq):
                total += iters
                m = os.path.join(d, f"r{i}.jsonl")
                subprocess.run([BIN, "train", "--cluster", name, "--vm-type", "c5.xlarge", *job, "--workers", str(k),
                                "--batch", str(b), "--iterations", str(total), "--checkpoint",
                                os.path.join(d, "rck"), "--metrics", m, "--progress", "never", "--no-final-eval"]
                               + (["--resume"] if i else []), check=True, stdout=subprocess.DEVNULL)
                rfiles.append(m)
            for kind in ("B only", "shrink 4->2", "grow 2->4 (spawn)", "grow 2->4 (parked)"):
                row = [model, f"{kind} ({kinds.count(kind)}x)"]
                meds = []
                for fl in (files, rfiles):
                    idle = []
                    for i in range(1, len(seq)):
                        if kinds[i - 1] == kind:
                            idle.append(segment_span(fl[i])[0] - segment_span(fl[i - 1])[1])
                    idle.sort()
                    meds.append(statistics.median(idle))
                    row += [f"{1e3 * meds[-1]:.1f}", f"{1e3 * idle[-1]:.1f}"]
                row.append(f"{meds[1] / meds[0]:.0f}x" if meds[0] > 0 else "-")
                print("| " + " | ".join(row) + " |", flush=True)
    finally:
        subprocess.run([BIN, "cluster", "down", "--name", name])


def straggler(reps=3):
    name = "strag"
    subprocess.run([BIN, "cluster", "up", "--name", name, "--vm", "c5.2xlarge:3"], check=True, stdout=subprocess.DEVNULL)
    arms = {"replace (0.8, 5 s)": [], "no replacement": []}
    try:
        for rep_i in range(reps):
            for arm, frac in (("replace (0.8, 5 s)", "0.8"), ("no replacement", "0")):
                subprocess.run([BIN, "cluster", "throttle", name, "2", "0.5"], check=True)
                d = tempfile.mkdtemp()
                p = subprocess.Popen([BIN, "run", "--db", f"{d}/s.db", "--cluster", name, "--model", "lenet",
                                      "--batch", "256", "--workers", "2", "--target-accuracy", "0.86",
                                      "--straggler-fraction", frac, "--report", f"{d}/rep"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                seg = f"{d}/s.db.runs/1/seg-001-train-k2-b256.jsonl"
                while not os.path.exists(seg) and p.poll() is None:
                    time.sleep(0.05)
                t_thr = time.time()
                subprocess.run([BIN, "cluster", "throttle", name, "2", "0.1"], check=True)
                p.wait()
                r = json.load(open(f"{d}/rep/report.json"))
                ev = r.get("stragglers", [])
                delay = idle = None
                if ev:  # the event's iteration: its wall-clock stamp in the segment metrics
                    for line in open(glob.glob(f"{d}/s.db.runs/1/seg-*-train-*.jsonl")[0]):
                        o = json.loads(line)
                        if o.get("type") == "iter" and o["iter"] == ev[0]["iteration"]:
                            delay = o["ts"] - t_thr
                    idle = ev[0]["idle_s"]
                arms[arm].append((r["actual_time_s"], r["reached"], delay, idle, ev[0]["replaced"] if ev else False))
                print(f"# rep {rep_i + 1} {arm}: {r['actual_time_s']:.1f} s, reached {r['reached']}, "
                      f"detected after {delay if delay is None else round(delay, 2)} s, idle {idle}", flush=True)
                shutil.rmtree(d, ignore_errors=True)
    finally:
        subprocess.run([BIN, "cluster", "down", "--name", name])
    print(f"\n# straggler: LeNet K=2 B=256 to 86%, VM 2 throttled 0.5 -> 0.1 core at the first training "
          f"segment; {reps} runs per arm; {machine()}\n")
    print("| arm | time to target, median (range) | reached | detected after throttle, median | replacement idle, median |")
    print("|---|---|---|---|---|")
    for arm, rows in arms.items():
        ts = sorted(x[0] for x in rows)
        ds = [x[2] for x in rows if x[2] is not None]
        ids = [x[3] for x in rows if x[3] is not None]
        print(f"| {arm} | {statistics.median(ts):.1f} s ({ts[0]:.1f}-{ts[-1]:.1f}) | {sum(x[1] for x in rows)}/{len(rows)} "
              f"| {f'{statistics.median(ds):.1f} s' if ds else '-'} | {f'{statistics.median(ids):.2f} s' if ids else '-'} |")


def hetero(reps=2, batch=192, only=0, throttle=1):
    name = "het"
    subprocess.run([BIN, "cluster", "up", "--name", name, "--vm", "c5.2xlarge:3"], check=True, stdout=subprocess.DEVNULL)
    job = ["--cluster", name, "--workers", "3", "--batch", str(batch), "--model", "lenet", "--eval-every-epochs", "0.25",
           "--eval-subset", "2000", "--progress", "never", "--json"]
    if batch != 192:  # the learning rate of B=192 (the default's), scaled by sqrt(B / 192)
        job += ["--lr-scaling", "sqrt", "--base-batch", "192"]
    levels = (only,) if only else (1, 2, 4)
    rows = {}
    rec, steady, adj_after = None, float("nan"), 0
    try:
        for H in levels:
            subprocess.run([BIN, "cluster", "throttle", name, "1", str(0.5 / H)], check=True)
            for rep_i in range(reps):
                for mode in ("even", "dynamic"):
                    m = tempfile.mktemp(suffix=".jsonl")
                    out = subprocess.run([BIN, "train", *job, "--target-accuracy", "0.85", "--epochs", "8",
                                          "--metrics", m, *(["--dynamic-batching"] if mode == "dynamic" else [])],
                                         capture_output=True, text=True)
                    r = json.loads(out.stdout.strip().splitlines()[-1])
                    adj = sum(1 for line in open(m) if '"type":"rebalance"' in line)
                    os.unlink(m)
                    rows.setdefault((H, mode), []).append((r["wall_seconds"], r["test_accuracy"], r["reached_target"], adj))
                    print(f"# H={H} {mode} rep {rep_i + 1}: {r['wall_seconds']:.1f} s, acc {r['test_accuracy']:.4f}, "
                          f"reached {r['reached_target']}, {adj} adjustments", flush=True)
        if throttle:  # a mid-run throttle with dynamic batching
            subprocess.run([BIN, "cluster", "throttle", name, "1", "0.5"], check=True)
            m = tempfile.mktemp(suffix=".jsonl")
            p = subprocess.Popen([BIN, "train", *job, "--epochs", "1.5", "--metrics", m, "--dynamic-batching"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(6)
            t_thr = time.time()
            subprocess.run([BIN, "cluster", "throttle", name, "1", "0.125"], check=True)
            p.wait()
            its = [json.loads(line) for line in open(m) if '"type":"iter"' in line]
            adj_after = sum(1 for line in open(m) if '"type":"rebalance"' in line and json.loads(line)["iter"] >
                            next((o["iter"] for o in its if o["ts"] >= t_thr), 1 << 60))
            os.unlink(m)
            steady = statistics.median(o["t_iter"] for o in its[-40:])
            after = [o for o in its if o["ts"] >= t_thr]
            rec = None
            for i in range(len(after) - 5):
                if all(statistics.median(o["t_iter"] for o in after[j:j + 5]) <= 1.15 * steady for j in range(i, len(after) - 5)):
                    rec = after[i]["ts"] - t_thr
                    break
    finally:
        subprocess.run([BIN, "cluster", "down", "--name", name])
    print(f"\n# hetero: LeNet K=3 B={batch} to 85% on 3 emulated c5.2xlarge VMs, VM 1 at 0.5/H core; {reps} runs "
          f"per cell; {machine()}\n")
    # the oracle: the homogeneous even run's time scaled by the cores, 1.5 / (1 + 0.5 / H): what
    # perfectly balanced work on the cluster's compute would take, were communication and the
    # per-iteration overheads as fast on the throttled VM as on the others (a bound, not reachable)
    t1 = statistics.median(x[0] for x in rows[(1, "even")]) if (1, "even") in rows else float("nan")
    print("| H | even: time to 85% | dynamic: time to 85% | speed-up | bound (H=1 even x cores) | dynamic / bound "
          "| even acc | dynamic acc | adjustments (dynamic) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for H in levels:
        e, d = rows[(H, "even")], rows[(H, "dynamic")]
        te, td = statistics.median(x[0] for x in e), statistics.median(x[0] for x in d)
        bound = t1 * 1.5 / (1 + 0.5 / H)
        print(f"| {H} | {te:.1f} s | {td:.1f} s | {te / td:.2f}x | {bound:.1f} s ({te / bound:.2f}x) | {td / bound:.2f} "
              f"| {statistics.median(x[1] for x in e):.4f} | {statistics.median(x[1] for x in d):.4f} "
              f"| {statistics.median(x[3] for x in d):.0f} |")
    if throttle:
        print(f"\nmid-run throttle (VM 1 0.5 -> 0.125 core): steady iteration {1e3 * steady:.1f} ms; recovered "
              f"{'never' if rec is None else f'{rec:.1f} s'} after the throttle; {adj_after} adjustments after it")
