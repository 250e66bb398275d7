# Shared pieces of bench/bench.py's benchmarks: the binaries under test (SCV_BIN, SCV_BASE_BIN),
# the PyTorch peer and the warm-up iterations left out of rates, and the helpers more than one
# benchmark module calls: a trainer's samples/s (scv_rate, peer_rate), the machine's name,
# `scavenger plan --json` and `profile --json` read back, and for the truths under the trainer
# contract and the judging of a run's report (decide, byot) free_port, contract_env and
# decision_prediction. The other bench_*.py modules import from here; it imports none of them.

import json, os, platform, subprocess, sys, tempfile


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


def plan_json(*args):
    out = subprocess.run([BIN, "plan", "--json", "--target-epochs", "7", "--base-batch", "64", *args],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def summary(path):
    return json.loads(subprocess.run([BIN, "profile", path, "--json"], check=True,
                                     capture_output=True, text=True).stdout)["configs"][0]


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
