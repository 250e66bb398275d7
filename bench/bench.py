#!/usr/bin/python3
# The entry point of Scavenger's benchmarks: the usage text below and the command dispatch.
# The benchmarks live in bench_core.py (throughput overhead accuracy predict statmodels cluster
# loop planspeed), bench_corpus.py (corpus), bench_decide.py (decide), bench_elastic.py (elastic
# straggler hetero), bench_byot.py (byot), bench_comm.py (comm stream noniid), bench_spot.py
# (spot), bench_floor.py (floor) and bench_summary.py (decide-summary); what they share in
# bench_common.py.
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
  bench/bench.py decide-summary --reports GLOB[,GLOB...]
      The figures quoted from `bench decide` reports (bench/bench_summary.py), read back from
      the reports: per run, the first plan's choice and regret, where the run trained last, its
      total against the oracle, the first plan's epochs error and coverage; then, first and
      second runs apart, the runs with regret <= 1.1 (first plan; where the run ended), the mean
      epochs error, the coverage summed and the median total against the oracle.
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
import sys

from bench_byot import byot
from bench_comm import comm, noniid, stream
from bench_core import accuracy, cluster, loop, overhead, planspeed, predict, statmodels, throughput
from bench_corpus import corpus
from bench_decide import decide
from bench_elastic import elastic, hetero, straggler
from bench_floor import floor
from bench_spot import spot
from bench_summary import decide_summary


if __name__ == "__main__":
    cmds = {"throughput": throughput, "overhead": overhead, "accuracy": accuracy,
            "predict": predict, "statmodels": statmodels, "cluster": cluster, "loop": loop,
            "planspeed": planspeed, "decide": decide, "elastic": elastic, "straggler": straggler,
            "hetero": hetero, "byot": byot, "comm": comm, "stream": stream, "noniid": noniid,
            "corpus": corpus, "spot": spot, "floor": floor,
            "decide-summary": decide_summary}
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
