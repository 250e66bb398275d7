#!/usr/bin/python3
"""Scavenger's trainer benchmarks. Each prints its figures, and where there is a peer the
ratio to PyTorch 1.13 (Debian's python3-torch) measured side by side in the same run,
alternating the two systems rep by rep and quoting medians.

  bench/bench.py throughput [--reps 5] [--iterations 600]
      LeNet, batch 64 per worker, 1 thread per process: K=1 against plain PyTorch and
      K=2 (global batch 128) against PyTorch DDP over gloo. Samples/s count iterations
      after the first 20 in both systems. With SCV_BASE_BIN=PATH (another build of
      scavenger, the previous main's say) that binary runs too, alternating rep by rep,
      and its ratio is printed: a refactor's cost measured side by side (SCV_BASE_FIRST=1:
      the base runs first in each rep, to see an order effect).
  bench/bench.py overhead [--reps 7] [--iterations 800]
      Cost of the gradient-noise statistics: the same LeNet run with and without them.
  bench/bench.py accuracy
      LeNet to 89% and MLP to 87% test accuracy on Fashion-MNIST: epochs and minutes.
  bench/bench.py predict [--iterations 80]
      Parallel-model error on real metrics: LeNet on K in {1,2} x B in {32..512}; the
      model is fitted on the two extreme configurations only, then every configuration is
      measured and compared (and the full fit on all ten, for reference).
  bench/bench.py statmodels [--reps 2] [--head 300]
      Statistical models against measured data: LeNet on K=2 trained to 85% test accuracy
      at B in {32..512} (sqrt LR scaling), median over seeds; both models are fitted on the
      first `head` iterations of each batch size plus the epochs measured at B0=64, then
      predict the epochs at the other batches.
  bench/bench.py cluster [--iterations 40]
      Iteration time against K = 1, 2, 4, 8 at global batch 256 for mlp and lenet, on an
      emulated cluster of c5.xlarge VMs (0.25 core, 78 Mbit/s each) and, for contrast, as
      local processes sharing the 2 cores; the ring alpha-beta model fitted to the cluster's
      communication times. Needs root (network namespaces, tc, cgroups).
  bench/bench.py loop [--target 86] [--cosine EPOCHS]
      The Scavenger loop on an emulated cluster (4 x c5.2xlarge: 0.5 core, 156 Mbit/s):
      a sweep of K in {1,2,4} x B in {64,128,256} trains LeNet to 86% (the truth), then
      `scavenger run --search partial` and `--search full` (objective time) with the target's
      epochs taken from the sweep's K=1 B=64 run; reports prediction errors, search overhead
      against the oracle, savings against the naive default (largest K, smallest B) and the
      switch idle time. SCV_SWEEP_DIR=DIR reuses a finished sweep. With SCV_BASE_BIN=PATH
      each search policy also runs on that binary (alternating with BIN; one sweep serves
      both): the loop's behaviour before and after a change, side by side. Needs root.
  bench/bench.py decide [--seeds 2] [--only 0] [--truth-only 1] [--rule adascale]
      Decision quality on an emulated cluster of 4 c5.xlarge VMs (0.25 host core each, one
      core in all): for each job (DECIDE_JOBS: LeNet, an MLP, logistic regression and
      ResNet, each with an accuracy and a training-loss target), the truth is every K x B of
      the grid trained from scratch per seed until both targets are crossed (or for the
      job's epoch cap), each target's crossing found by the target rule (bench/decide/truth2-JOB.json, resumable: configs
      already measured are kept; delete the file to measure again); then, per target, with
      an empty store, a first `scavenger run --search partial` calibrated on the corpus less
      the job's model (never its truth) and a second run of the same job (the first one
      stored). Reports, per run, the predicted time to target at the decision against the
      truth's median for every configuration and for the chosen one, epochs against the
      seeds' mean with their spread, band coverage, forecasts at 25% and 50% of the run, the
      regret (of the first plan's choice, and of where the re-plans left the run), the run's
      total time and cost against the oracle's and the naive default's.
      --rule adascale: the same jobs under AdaScale's rate in place of sqrt scaling (their own
      truths, bench/decide/truth2-JOB-adascale.json).
  bench/bench.py elastic [--changes 10]
      Idle time of a configuration change in place (the elastic job, `train
      --elastic-control`) against checkpoint-restart (`train --resume`, what the relaunch
      driver does) on an emulated cluster of 4 c5.xlarge VMs, for LeNet and ResNet: per
      change kind (B only; shrink 4 -> 2; grow 2 -> 4, the first spawning processes and
      later ones reusing parked ones), median and worst over --changes changes each. Idle =
      from the end of a segment's last iteration to the start of the next one's first (the
      metrics' wall-clock stamps, as `run` measures switches). Needs root.
  bench/bench.py straggler [--reps 3]
      Straggler replacement: `scavenger run` of LeNet at K=2, B=256 to 86% test accuracy on
      3 emulated c5.2xlarge VMs (0.5 core); when the first training segment starts, VM 2 is
      throttled to 0.1 core. With Or et al.'s rule (0.8 of the median, 5 s window) the
      straggler is replaced by VM 3's process; without it (--straggler-fraction 0) the run
      trains on with the slow VM. Prints, per arm, the median and range over --reps runs of
      the time to target, the detection delay (throttle to the event's iteration) and the
      replacement's idle time. Needs root.
  bench/bench.py noniid [--reps 2] [--selsync 1]
      Non-IID streams (--stream-noniid 0.9) and data injection (--stream-inject 0.5,0.5)
      against IID streams: LeNet, K=2 local processes, streams of 3000 samples/s each, 2
      epochs, seeds 1..reps, synchronous and with SelSync 0.5; test accuracy per seed and
      median, the home-class share and the copies injected.
  bench/bench.py hetero [--reps 2] [--batch 192] [--only H] [--throttle 1]
      Dynamic batching on a heterogeneous emulated cluster: 3 c5.2xlarge VMs (0.5 core,
      156 Mbit/s), VM 1 throttled to 0.5/H core for heterogeneity H = 1, 2, 4; LeNet, K=3,
      B=192 to 85% test accuracy (evaluations every 0.25 epoch on 2000 test samples), even
      batches against --dynamic-batching, alternating rep by rep; medians of the time to the
      target, the final accuracy, and the adjustments the controller made. Then a mid-run
      throttle: a dynamic-batching run at H=1 whose VM 1 drops to 0.125 core after 6 s; the
      recovery time is from the throttle to the first iteration after which the median of 5
      iteration times stays within 15% of the run's last 40 (--throttle 0: not run). The
      bound column: the H=1 even time x 1.5 / (1 + 0.5/H) cores, what perfectly balanced work
      would take were the throttled VM slow at computing only; even / bound is the most any
      rebalancing can gain. --batch B (LR scaled by sqrt(B/192)), --only H: one level.
      Needs root.
  bench/bench.py planspeed
      Planning over >= one million configurations (all catalog types x K x B): seconds.
  bench/bench.py comm [--reps 1] [--vm 0|1] [--only N [--lenet 1]]
      Communication efficiency on 4 emulated VMs (--vm 0: c5.xlarge, 0.25 core, 78 Mbit/s;
      1: c5.2xlarge, 0.5 core, 156 Mbit/s), K=4, B=256: the MLP to 84% test accuracy dense,
      with static Top-k (10x and 100x over Allgather, 100x over AR-Topk), GraVAC and SelSync
      (delta 0.3 and 0.5); LeNet to 85% dense, with GraVAC and with SelSync 0.3. Per arm: time
      to the target, final accuracy, bytes sent per step, the compression's share of an
      iteration, LSSR, the factors and collectives used. --only N: the MLP's (--lenet 1:
      LeNet's) dense arm and its arm N (0-based in COMM_ARMS) alone. Needs root.
  bench/bench.py stream [--reps 2]
      Streaming (ScaDLES) against the conventional full batch: LeNet K=2 as local processes,
      worker streams of 2000 and 500 samples/s, to 85% test accuracy; each step takes what
      arrived (bounds 8,1024, truncating buffers) against waiting for 32 samples per worker
      (B=64); linear LR scaling from B0 = 64. Time to target, final accuracy, waiting and
      dropped samples, batches, medians over --reps alternating runs.
  bench/bench.py byot [--seeds 2] [--converted-seeds 1] [--full-grid 0] [--smoke 0]
      Bring your own trainer: the same `scavenger run` (K in {1,2} x B in {64,128}, LeNet
      with sqrt LR scaling to 86% test accuracy, search partial, objective time, an empty
      store, then a second run with the first one stored, local processes) on the built-in
      trainer and on the PyTorch example
      (examples/pytorch_fashion_mnist.py, the same LeNet and optimiser) per seed, and on
      PyTorch's MNIST example converted to scavenger.torch (examples/mnist_main.py, its own
      Net, Adadelta and evaluation of the whole test set; K in {1,2} x B=64, --full-grid 1:
      B in {64,128} too; at most 3 epochs; --converted-seeds seeds). The truth:
      each system's trainer at every configuration from scratch, one uninterrupted
      invocation under the trainer contract stopped at the target's rule (bench/decide/
      truth-byot.json, resumable). Prints each run's choice, its predictions against the
      truth (the decision's, or the first absolute plan's when the decision was relative),
      the chosen configuration's error and the regret against that system's oracle; then per
      run the epochs and seconds predicted, the run's own and the truth's side by side, and
      the evaluations' share of the wall time (priced by the run, measured in the run, in the
      truth). --smoke 1: mnist_main alone at K=2 B=64, a 50% target on single evaluations
      every 0.02 epoch, one first run, truths in a temporary file (about a minute).

  bench/bench.py corpus [--only N]
      The learning-curve corpus the model's curve prior reads (data/curves.jsonl, installed
      with the other data files; docs/CURVES.md): each job of CORPUS_JOBS trained for a fixed
      number of epochs at every (batch, learning-rate rule, seed) it lists, K=1, 1 thread,
      periodic evaluations every 0.05 epoch on the first 2000 test samples; one JSON line
      per curve with the command that made it, the date and the machine, and its points
      [samples seen, test accuracy, period-mean training loss]. Resumable: curves already
      in the file are kept (delete it to measure again); written atomically after each
      curve. --only N: job N (0-based) only. One training at a time; run it niced.
  bench/bench.py floor [--seeds 2] [--epochs 5] [--every 0.25] [--prefix 0] [--dir D]
      The noise floor's batch carry-over (src/model/floor.c) against truths: each job of
      DECIDE_JOBS the built-in trainer runs (LeNet, the MLP, logistic regression) trained
      from the start at K=2 (the trace needs two workers), B=64 and B=256, its rule, per seed,
      evaluations every --every epoch on 2000 test samples; then bench/floor_eval.c (built here)
      compares, per metric and target, the truth's exponent with the floor's, the measured
      noise-scale law's and the corpus rule's. --prefix P: the floor as a run reads it at its
      first plan, on B=64's first P epochs and its calibrated forecast (the run's warm-up and
      search evaluate every 0.05 epoch: pass --every 0.05). --dir D keeps the trainings' metrics
      in D and reuses those already there. One training at a time.
  bench/bench.py spot [--smoke 1] [--minutes M] [--preemptions N] [--batch B]
      Spot with preemptions on an emulated cluster (3 c5.xlarge VMs: 0.25 core, 78 Mbit/s):
      LeNet K=3 B=192 to 89% test accuracy (`scavenger run` at one configuration), first
      on-demand, then under a preemption trace written from the on-demand time T (N
      preemptions, default 3, spread evenly over 0.15 T .. 0.75 T on VMs 2 and 3 in turn:
      a 30 s notice each, restored 60 s after the take-down; VM 1, which runs the job's
      root, is spared; SPOT_TRACE=FILE replays a given trace instead) with in-place recovery
      (the elastic driver) and with checkpoint-restart (the relaunch driver). --minutes M: a
      job meant to take about M minutes on demand (lr 0.05 x 2.5/M: 149.5 s at lr 0.05 was
      measured, the scaling is an estimate; the bench says when T fell short). A run whose
      retries are spent is resumed (`run --resume`), the relaunch one once K VMs are up
      again. Prints, per arm, the wall time to the target and its cost (each VM billed while
      up; spot at the middle of the catalog's range), the idle per preemption (time between
      iterations beyond the on-demand run's, per preemption), the time lost per preemption;
      then the planner's spot model (`plan --preempt-rate` at the trace's rate,
      `--spot-recovery inplace|restart`, profile and epochs from the on-demand run) with its
      own policy and with the facts the bench has besides the arms' times (`--spot-replace`:
      the trace's notice to restore in place, take-down to restore for a relaunch;
      `--spot-idle`/`--spot-restart`: the arm's idle per preemption), against the actual
      time and cost. --smoke 1: a tiny MLP job at K=2 on 2 c5.2xlarge VMs and one short
      preemption (a 1 s notice at 1 s, restored 4 s after the take-down): the pipeline
      checked in under 2 minutes (32-38 s measured; the elastic arm, at K=1 on the notice,
      ends before the take-down). Needs root.

Run from the repository root after `make` (scripts/install-deps.sh installs PyTorch, the peer).
"""
import glob, json, os, platform, shutil, statistics, subprocess, sys, tempfile, time

BIN = os.environ.get("SCV_BIN", "build/scavenger")
BASE_BIN = os.environ.get("SCV_BASE_BIN")  # a second build compared side by side (throughput, loop)
PEER = [sys.executable if "torch" in sys.modules else "/usr/bin/python3", "bench/torch_lenet.py"]
WARMUP = 20


def scv_rate(workers, batch, iterations, extra=(), bin=None):
    """Samples/s of `scavenger train` after the first WARMUP iterations (from its metrics)."""
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as m:
        cmd = [bin or BIN, "train", "--model", "lenet", "--workers", str(workers), "--batch", str(batch),
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


def cpu_model():
    return next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")


def machine():
    return f"{platform.node()} ({os.cpu_count()} cores, {cpu_model()})"


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


def plan_json(*args):
    out = subprocess.run([BIN, "plan", "--json", "--target-epochs", "7", "--base-batch", "64", *args],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


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


def summary(path):
    return json.loads(subprocess.run([BIN, "profile", path, "--json"], check=True,
                                     capture_output=True, text=True).stdout)["configs"][0]


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
        "job": job, "target_rule": DECIDE_TARGET_RULE, "runs": {}}
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


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def contract_env(K, B, seed, max_epochs, every, metrics, **more):
    """The environment of one uninterrupted trainer invocation under docs/TRAINER-CONTRACT.md
    from scratch at (K, B): metrics and its checkpoints in metrics' folder, a free rendezvous
    port, and `more` variables."""
    return dict(os.environ, SCV_WORKERS=str(K), SCV_BATCH=str(B), SCV_SEED=str(seed), SCV_RESUME="0",
                SCV_MAX_EPOCHS=str(max_epochs), SCV_UNTIL_ITERATIONS="0", SCV_EVAL_EVERY_EPOCHS=str(every),
                SCV_METRICS=metrics, SCV_CHECKPOINT_DIR=os.path.dirname(metrics),
                SCV_MASTER_PORT=str(free_port()), **more)


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


def decision_prediction(r):
    """A report's predictions made before the outcome: ({(K, B): time_s}, chosen's time_s, epochs
    into the run when made: 0 at the decision; when the decision was relative (the target not
    known yet), the first plan with absolute times, made later in the run). Each time less the
    point's idle_s (its segments' start-ups, which the truths' uninterrupted runs do not have)."""
    relative = r.get("decision_relative", r.get("relative_prediction"))
    pts = r.get("absolute_points", []) if relative else r.get("decision_points", [])
    chosen = r.get("absolute_time_s") if relative else r.get("predicted_time_s")
    if chosen is not None and pts:
        chosen -= min(pts, key=lambda q: abs(q["time_s"] - chosen)).get("idle_s", 0)
    return ({(q["workers"], q["batch"]): q["time_s"] - q.get("idle_s", 0) for q in pts}, chosen,
            r.get("absolute_at_epochs") if relative else 0.0)


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


SPOT_NOTICE_S, SPOT_DOWN_S = 30, 60  # a GCP/Azure-style notice; take-down to restore (full mode)


def spot_trace_events(path):
    """[(seconds, vm, event)] of a trace file (`cluster replay --trace`; checked by the replay)."""
    out = []
    for line in open(path):
        f = line.split("#", 1)[0].split()
        if len(f) == 3:
            out.append((float(f[0]), int(f[1]), f[2]))
    return out


def spot_downtime(events, vm, t_end):
    """Seconds VM vm was down (take-down to restore) within [0, t_end] of the trace's clock."""
    down, since = 0.0, None
    for t, v, ev in events:
        if v != vm:
            continue
        if ev.startswith("notice") or ev == "kill":
            gone = t + (float(ev.split(":")[1]) if ev.startswith("notice:") else 30.0 if ev == "notice" else 0.0)
            since = gone if since is None else min(since, gone)
        elif ev == "restore" and since is not None:
            down += max(0.0, min(t, t_end) - min(since, t_end))
            since = None
    if since is not None:
        down += max(0.0, t_end - min(since, t_end))
    return down


def spot_idle(run_dir):
    """Wall seconds between iterations (not in one), over every segment file of a run: from
    one iteration's end to the next one's start, in time order (evaluations, switches,
    restarts and waits for capacity included)."""
    its = []
    for path in glob.glob(os.path.join(run_dir, "seg-*.jsonl")):
        for line in open(path):
            if '"type":"iter"' in line:
                o = json.loads(line)
                its.append((o["ts"] - o["t_iter"], o["ts"]))
    its.sort()
    return sum(max(0.0, its[i][0] - its[i - 1][1]) for i in range(1, len(its)))


def spot_arm(name, K, driver, job, events, trace, vm_type):
    """One run to the target: `scavenger run` on the cluster at K workers with the driver,
    the trace replayed from its start (none: on-demand); a run that fails (its retries
    spent: each take-down costs one) is resumed (`run --resume`), after waiting for K VMs
    up when its K is fixed (relaunch). Wall time from the start to the target."""
    for vm in range(2, K + 1):  # every VM up, no notice pending
        subprocess.run([BIN, "cluster", "restore", name, str(vm)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    d = tempfile.mkdtemp(prefix="spot-")
    db, rep = os.path.join(d, "s.db"), os.path.join(d, "rep")
    cmd = [BIN, "run", "--db", db, "--cluster", name, "--vm-type", vm_type, "--driver", driver, *job,
           "--workers", str(K), "--report", rep]
    t0 = time.time()
    replay = subprocess.Popen([BIN, "cluster", "replay", name, "--trace", trace], stdout=subprocess.DEVNULL,
                              stderr=open(os.path.join(d, "replay.log"), "w")) if trace else None
    log = open(os.path.join(d, "run.log"), "w")
    rc, resumes = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=log).returncode, 0
    while rc != 0 and resumes < 20:
        if driver == "relaunch":  # K fixed: the restart waits for K VMs up
            while True:
                st = json.loads(subprocess.run([BIN, "cluster", "status", "--json"], capture_output=True,
                                               text=True).stdout)
                if sum(v["state"] == "up" for v in st if v["cluster"] == name) >= K:
                    break
                time.sleep(0.2)
        resumes += 1
        rc = subprocess.run([BIN, "run", "--db", db, "--resume", "1", "--report", rep], stdout=subprocess.DEVNULL,
                            stderr=log).returncode
    wall = time.time() - t0
    if replay:
        replay.terminate()
        replay.wait()
    r = json.load(open(os.path.join(rep, "report.json")))
    run_dir = db + ".runs/1"
    n_pre = sum(1 for t, v, ev in events if (ev.startswith("notice") or ev == "kill") and t < wall)
    return {"wall": wall, "reached": r.get("reached"), "epochs": r.get("epochs"), "resumes": resumes,
            "idle": spot_idle(run_dir), "preemptions": n_pre, "dir": d, "run_dir": run_dir}


SPOT_LR_AT_2_5_MIN = 0.05  # LeNet K=3 B=192 reached 89% in 149.5 s on-demand at this lr (2026-11-26)


def spot_trace_times(T, n, K, notice, down):
    """[(seconds, vm)] of n preemptions spread evenly over 0.15 T .. 0.75 T, alternating VMs 2
    and 3 (K > 2; VM 1, the job's root, spared); fewer when a VM's next notice would come
    before its restore."""
    while n > 1:
        gap = 0.6 * T / (n - 1)
        if gap * (2 if K > 2 else 1) >= notice + down + 1:
            break
        n -= 1
    gap = 0.6 * T / (n - 1) if n > 1 else 0
    return [(0.15 * T + i * gap, 2 + i % 2 if K > 2 else 2) for i in range(n)]


def spot(smoke=0, minutes=0, preemptions=3, batch=192, target_loss=0):
    """Time and cost to the target on spot VMs with a preemption trace: on-demand, spot with
    in-place recovery (the elastic driver) and spot with checkpoint-restart (the relaunch
    driver), side by side; idle per preemption; the planner's spot model against actual.
    minutes M: a job meant to take about M minutes on demand (the learning rate scaled
    down from the 2.5-minute job's, an estimate: time to a target grows about as 1/lr early
    in SGD); preemptions N: the trace's count, spread over the on-demand time; batch: the
    job's global batch (64: more steps, each paying the emulated network, a longer job);
    target_loss L: the job to training loss L instead of 89% test accuracy (89% sits on
    LeNet's plateau here, where the crossing's epoch spreads by 5 and more between runs that
    part at a shrink: the loss crosses more steadily)."""
    import csv
    name = "spot"
    lr = SPOT_LR_AT_2_5_MIN * min(1.0, 2.5 / minutes) if minutes > 0 else SPOT_LR_AT_2_5_MIN
    if smoke:  # a tiny job, one short preemption: checks the pipeline, under 2 minutes
        vm_type, K, job = "c5.2xlarge", 2, ["--model", "mlp", "--hidden", "128", "--batch", "128", "--target-accuracy",
                                            "0.84", "--lr", "0.05", "--max-epochs", "10"]
    else:  # 149.5 s on demand at lr 0.05 (2026-11-26); --minutes 5: lr 0.025, about 5 minutes (estimated)
        tgt = ["--target-loss", f"{target_loss:g}"] if target_loss else ["--target-accuracy", "0.89"]
        vm_type, K, job = "c5.xlarge", 3, ["--model", "lenet", "--batch", str(batch), *tgt, "--lr",
                                           f"{lr:.4g}", "--lr-scaling", "sqrt", "--base-batch", "64", "--max-epochs",
                                           "60" if minutes > 2.5 else "30"]
    price = {}
    for row in csv.DictReader(open("data/vm-catalog.csv")):
        if row["instance_type"] == vm_type:
            price = {"od": float(row["ondemand_usd_per_hr"]),
                     "spot": (float(row["spot_usd_per_hr_min"]) + float(row["spot_usd_per_hr_max"])) / 2}
    subprocess.run([BIN, "cluster", "up", "--name", name, "--vm", f"{vm_type}:{K}"], check=True,
                   stdout=subprocess.DEVNULL)
    try:  # a few iterations first: the cluster's first job pays start-up costs the arms should not
        subprocess.run([BIN, "train", "--cluster", name, "--vm-type", vm_type, "--workers", str(K), "--model", "mlp",
                        "--iterations", "5", "--progress", "never"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        od = spot_arm(name, K, "elastic", job, [], None, vm_type)
        T = od["wall"]
        print(f"# on-demand: {T:.1f} s, reached {od['reached']}, {od['epochs']} epochs", file=sys.stderr, flush=True)
        if not smoke and T < 60 * max(minutes, 5):
            print(f"# note: the on-demand run took {T:.0f} s, less than the {max(minutes, 5)} minutes asked for (the "
                  f"trace is scaled to it all the same)", file=sys.stderr, flush=True)
        trace = os.environ.get("SPOT_TRACE")
        if not trace:  # VM 1 runs mpirun and the job's root: spared (docs/CLUSTER.md "Surviving a preemption")
            trace = os.path.join(tempfile.mkdtemp(prefix="spot-trace-"), "trace")
            if smoke:
                notice, down, evs = 1, 4, [(1.0, 2)]  # taken down in the warm-up, whatever T
            else:
                notice, down = SPOT_NOTICE_S, SPOT_DOWN_S
                evs = spot_trace_times(T, max(1, preemptions), K, notice, down)
            with open(trace, "w") as f:
                f.write(f"# bench spot: on-demand {T:.1f} s; notice {notice} s, restore {down} s after the take-down\n")
                for t, vm in evs:
                    f.write(f"{t:.1f} {vm} notice:{notice}\n{t + notice + down:.1f} {vm} restore\n")
        events = spot_trace_events(trace)
        print(f"# trace: {trace}", file=sys.stderr, flush=True)
        arms = {"on-demand": od}
        for label, driver in (("spot, in place (elastic)", "elastic"), ("spot, checkpoint-restart (relaunch)",
                                                                        "relaunch")):
            arms[label] = spot_arm(name, K, driver, job, events, trace, vm_type)
            a = arms[label]
            print(f"# {label}: {a['wall']:.1f} s, reached {a['reached']}, {a['preemptions']} preemptions, "
                  f"{a['resumes']} resumes", file=sys.stderr, flush=True)
        # cost: each VM billed while up (a preempted VM is not billed until its restore)
        for label, a in arms.items():
            if label == "on-demand":
                a["cost"] = K * a["wall"] * price["od"] / 3600
            else:
                vm_s = sum(a["wall"] - spot_downtime(events, vm, a["wall"]) for vm in range(1, K + 1))
                a["cost"] = vm_s * price["spot"] / 3600
        n = max(1, max(a["preemptions"] for a in arms.values()))
        rate = n / (K * T / 3600)  # the trace's preemptions per VM-hour over the on-demand run
        down_s = statistics.mean([t2 - t1 for (t1, v1, e1) in events if e1.startswith("notice")
                                  for (t2, v2, e2) in events if v2 == v1 and e2 == "restore" and t2 > t1][:n] or [0])
        print(f"\n# spot: {'smoke, ' if smoke else ''}{' '.join(job)}; K={K} on {K} emulated {vm_type} VMs; trace "
              f"{trace} ({n} preemption(s), {rate:.2f} per VM-hour, notice to restore {down_s:.0f} s); prices "
              f"${price['od']}/h on-demand, ${price['spot']:.4f}/h spot (the catalog's range's middle); {machine()}\n")
        print("| arm | time to target (s) | vs on-demand | cost ($) | vs on-demand | reached | preemptions | resumes "
              "| idle (s) | idle per preemption (s) | time lost per preemption (s) |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for label, a in arms.items():
            extra = a["idle"] - od["idle"]
            per = f"{extra / a['preemptions']:.2f}" if a["preemptions"] else "-"
            lost = f"{(a['wall'] - T) / a['preemptions']:.1f}" if a["preemptions"] else "-"
            print(f"| {label} | {a['wall']:.1f} | {a['wall'] / T:.2f}x | {a['cost']:.6f} | {a['cost'] / od['cost']:.2f}x "
                  f"| {a['reached']} | {a['preemptions']} | {a['resumes']} | {a['idle']:.1f} | {per} | {lost} |")
        # predicted: the planner's spot model at this K and B, from the on-demand run's profile and
        # the rate of the trace, first with its own policy, then with what the bench knows before
        # the outcome (never from the arms' times): the trace's replacement delay (the job runs at
        # K - 1 from the notice to the restore in place; a relaunch runs at K until the take-down)
        # and the arm's own stall per preemption (the idle between iterations beyond the on-demand
        # run's), the capacity lost meanwhile the planner's (its performance model at K - 1)
        notices = [float(e.split(":")[1]) if e.startswith("notice:") else 30.0 if e == "notice" else 0.0
                   for (t, v, e) in events if e.startswith("notice") or e == "kill"][:n]
        notice_s = statistics.mean(notices) if notices else 0.0
        prof = ",".join(sorted(glob.glob(os.path.join(od["run_dir"], "seg-*-train-*.jsonl"))))
        B = job[job.index("--batch") + 1]
        print(f"\n# the trace's facts: notice {notice_s:.0f} s, notice to restore {down_s:.0f} s\n")
        print("| recovery | source | predicted on-demand (s, $) | predicted spot (s, $) | expected preemptions "
              "| lost per preemption (s) | capacity lost at K-1 | actual spot (s, $) | error: time, cost |")
        print("|---|---|---|---|---|---|---|---|---|")
        num = lambda x, f: "never" if x is None else format(x, f)  # rho >= 1: the model's job never ends
        for how, label in (("inplace", "spot, in place (elastic)"), ("restart", "spot, checkpoint-restart (relaunch)")):
            a = arms[label]
            stall = max(0.0, (a["idle"] - od["idle"]) / a["preemptions"]) if a["preemptions"] else 0.0
            replace = down_s if how == "inplace" else max(0.0, down_s - notice_s)
            facts = ["--spot-replace", f"{replace:.6g}",
                     "--spot-idle" if how == "inplace" else "--spot-restart", f"{stall:.6g}"]
            for src, extra in (("planner, its policy", []),
                               (f"planner, the trace's facts (replace {replace:.0f} s, "
                                f"{'idle' if how == 'inplace' else 'restart'} {stall:.2f} s measured)", facts)):
                out = subprocess.run([BIN, "plan", "--json", "--profile", prof, "--vm", vm_type, "--workers", str(K),
                                      "--batch", B, "--base-batch", B, "--target-epochs", str(od["epochs"]),
                                      "--preempt-rate", f"{rate:.6g}", "--spot-recovery", how, *extra],
                                     capture_output=True, text=True)
                try:
                    sp = json.loads(out.stdout)["spot"]
                except (ValueError, KeyError) as e:
                    print(f"# plan failed ({e}): {out.stderr.strip()[-300:]}", file=sys.stderr)
                    continue
                modes, ch, pol = {m["pricing"]: m for m in sp["chosen"]["modes"]}, sp["chosen"], sp["policy"]
                if not extra:
                    src += f" (restart {pol['restart_s']:g} s, in place {pol['inplace_idle_s']:g} s, replace " \
                           f"{pol['replace_s']:g} s)"
                ts, cs = modes["spot"]["time_s"], modes["spot"]["cost"]
                ts = ts if isinstance(ts, (int, float)) else None
                cs = cs if isinstance(cs, (int, float)) else None
                npre = modes["spot"]["expected_preemptions"]
                npre = npre if isinstance(npre, (int, float)) else None
                err = "-" if ts is None else f"{100 * (ts / a['wall'] - 1):+.0f}%, {100 * (cs / a['cost'] - 1):+.0f}%"
                print(f"| {how} | {src} | {modes['ondemand']['time_s']:.1f}, {modes['ondemand']['cost']:.6f} "
                      f"| {num(ts, '.1f')}, {num(cs, '.6f')} | {num(npre, '.2f')} "
                      f"| {ch['delay_s_per_preemption']:.2f} | {ch['capacity_lost_share']:.2f} "
                      f"| {a['wall']:.1f}, {a['cost']:.6f} | {err} |")
        print("\nruns: " + ", ".join(f"{label}: {a['dir']}" for label, a in arms.items()))
    finally:
        subprocess.run([BIN, "cluster", "down", "--name", name])

def floor(seeds=2, epochs=5, every=0.25, prefix=0, dir=""):
    """bench/bench.py floor: see the module's text."""
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


if __name__ == "__main__":
    cmds = {"throughput": throughput, "overhead": overhead, "accuracy": accuracy,
            "predict": predict, "statmodels": statmodels, "cluster": cluster, "loop": loop,
            "planspeed": planspeed, "decide": decide, "elastic": elastic, "straggler": straggler,
            "hetero": hetero, "byot": byot, "comm": comm, "stream": stream, "noniid": noniid,
            "corpus": corpus, "spot": spot, "floor": floor}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        print(__doc__)
        sys.exit(2)
    kw = {}
    for i in range(2, len(sys.argv) - 1, 2):
        v = sys.argv[i + 1]
        try:
            kw[sys.argv[i].lstrip("-").replace("-", "_")] = float(v) if "." in v else int(v)
        except ValueError:  # a name (--rule adascale)
            kw[sys.argv[i].lstrip("-").replace("-", "_")] = v
    cmds[sys.argv[1]](**kw)
